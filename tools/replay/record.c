/* SPDX-License-Identifier: MIT */
/*
 * `pagealloc record`: a recording of this machine's own kernel, in the
 * folder layout `pagealloc replay` reads (the shared recordings' layout):
 *
 *   trace.txt.xz   the ftrace text, compressed through liblzma
 *   before/ after/ (and NAME/ per --snapshot) buddyinfo, pagetypeinfo,
 *                  zoneinfo, vmstat, meminfo, slabinfo, unusable_index,
 *                  extfrag_index, uptime (CLOCK_BOOTTIME, the trace's clock)
 *   formats/       the format file of every enabled event, header_page/event
 *   info/          ftrace setup, per-CPU ring-buffer stats, sysctl vm.*,
 *                  iomem, cpuinfo, meminfo, swaps, free page reporting
 *   uname.txt, cmdline.txt
 *
 * The events go to a tracing instance of their own (instances/NAME): its
 * buffer size, overwrite option, clock and events are its own, so the
 * machine's top-level tracing is never touched, and removing the instance
 * at the end (also on an error or a signal) leaves tracing as it was. A
 * tracefs or debugfs this program mounted is unmounted again.
 *
 * Inside a recording (the COMMAND and its children see PAGEALLOC_RECORD_DIR),
 * `pagealloc record --mark TEXT` writes a marker line into the trace and
 * `pagealloc record --snapshot NAME` takes a snapshot folder NAME/.
 */
#define _GNU_SOURCE
#include "replay.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <lzma.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TRACEFS    "/sys/kernel/tracing"
#define DEBUGFS    "/sys/kernel/debug"
#define LOCK_PATH  "/run/pagealloc-record.lock"
#define ENV_DIR    "PAGEALLOC_RECORD_DIR"
#define ENV_INST   "PAGEALLOC_RECORD_TRACEFS"
#define INST_PREFX "pagealloc-record-"

/* The events of the shared recordings; those this kernel lacks are listed as absent. */
static const char *const record_events[] = {
	"kmem/mm_page_alloc",
	"kmem/mm_page_free",
	"kmem/mm_page_free_batched",
	"kmem/mm_page_alloc_extfrag",
	"kmem/mm_page_pcpu_drain",
	"kmem/mm_page_alloc_zone_locked",
	"compaction/mm_compaction_begin",
	"compaction/mm_compaction_defer_compaction",
	"compaction/mm_compaction_defer_reset",
	"compaction/mm_compaction_deferred",
	"compaction/mm_compaction_end",
	"compaction/mm_compaction_fast_isolate_freepages",
	"compaction/mm_compaction_finished",
	"compaction/mm_compaction_isolate_freepages",
	"compaction/mm_compaction_isolate_migratepages",
	"compaction/mm_compaction_kcompactd_sleep",
	"compaction/mm_compaction_kcompactd_wake",
	"compaction/mm_compaction_migratepages",
	"compaction/mm_compaction_suitable",
	"compaction/mm_compaction_try_to_compact_pages",
	"compaction/mm_compaction_wakeup_kcompactd",
	"vmscan/mm_vmscan_kswapd_wake",
	"vmscan/mm_vmscan_kswapd_sleep",
	"vmscan/mm_vmscan_wakeup_kswapd",
	"vmscan/mm_vmscan_direct_reclaim_begin",
	"vmscan/mm_vmscan_direct_reclaim_end",
	"vmscan/mm_vmscan_balance_pgdat_begin",
	"vmscan/mm_vmscan_balance_pgdat_end",
	"vmscan/mm_vmscan_kswapd_reclaim_fail",
	"vmscan/mm_vmscan_kswapd_clear_hopeless",
	"vmscan/mm_vmscan_node_reclaim_begin",
	"vmscan/mm_vmscan_node_reclaim_end",
	"vmscan/mm_vmscan_throttled",
	"vmscan/mm_vmscan_lru_shrink_inactive",
	"vmscan/mm_vmscan_lru_shrink_active",
	"vmscan/mm_vmscan_reclaim_pages",
	"migrate/mm_migrate_pages",
};
#define NR_RECORD_EVENTS (sizeof record_events / sizeof record_events[0])

/* What a snapshot folder holds: /proc files, then debugfs's extfrag files. */
static const struct {
	const char *from, *name;
	bool needed;
} snapshot_files[] = {
	{ "/proc/buddyinfo", "buddyinfo", true },
	{ "/proc/pagetypeinfo", "pagetypeinfo", true },
	{ "/proc/zoneinfo", "zoneinfo", true },
	{ "/proc/vmstat", "vmstat", true },
	{ "/proc/meminfo", "meminfo", true },
	{ "/proc/slabinfo", "slabinfo", false },
	{ DEBUGFS "/extfrag/unusable_index", "unusable_index", false },
	{ DEBUGFS "/extfrag/extfrag_index", "extfrag_index", false },
};

struct record_opts {
	const char *dir;
	double seconds; /* 0: until COMMAND exits (or 10 s without one) */
	const char *mark, *snapshot;
	uint64_t buffer_kb; /* per CPU; 0: sized from the memory available */
	unsigned xz_level;
	char **command;
};

/* What has to be undone, whatever happens. */
static struct {
	char inst[256]; /* the instance folder, "" when none */
	bool mounted_tracefs, mounted_debugfs;
	int lock_fd;
} undo = { .lock_fd = -1 };

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted++;
}

/* ---------------------------------------------------------------------- */
/* Small file helpers                                                      */
/* ---------------------------------------------------------------------- */

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t n = strlen(s);
	ssize_t w = write(fd, s, n);
	int e = errno;
	close(fd);
	errno = e;
	return w == (ssize_t)n ? 0 : -1;
}

static int inst_write(const char *file, const char *s)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", undo.inst, file);
	if (write_str(path, s) == 0)
		return 0;
	fprintf(stderr, "pagealloc record: writing '%s' to %s: %s\n", s, path, strerror(errno));
	return -1;
}

/* A whole small file; NULL if unreadable. */
static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	char *s = rp_read_stream(f);
	fclose(f);
	if (s && len)
		*len = strlen(s);
	return s;
}

static int copy_file(const char *from, const char *to)
{
	size_t len;
	char *s = read_file(from, &len);
	if (!s)
		return -1;
	FILE *f = fopen(to, "we");
	int rc = f && fwrite(s, 1, len, f) == len ? 0 : -1;
	if (f && fclose(f))
		rc = -1;
	free(s);
	return rc;
}

static int make_dir(const char *path)
{
	if (mkdir(path, 0755) == 0 || errno == EEXIST)
		return 0;
	fprintf(stderr, "pagealloc record: cannot create %s: %s\n", path, strerror(errno));
	return -1;
}

static double boottime(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---------------------------------------------------------------------- */
/* Snapshots                                                               */
/* ---------------------------------------------------------------------- */

/*
 * The snapshot folder dir/name. Its uptime is CLOCK_BOOTTIME, the trace's
 * clock (trace_clock=boot), in microseconds so that the replay places it
 * exactly: before the first event after at, after the last event before.
 */
static int take_snapshot(const char *dir, const char *name, double at)
{
	char path[1400], to[1500];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (make_dir(path))
		return -1;
	double t0 = boottime();
	for (size_t i = 0; i < sizeof snapshot_files / sizeof snapshot_files[0]; i++) {
		snprintf(to, sizeof to, "%s/%s", path, snapshot_files[i].name);
		if (copy_file(snapshot_files[i].from, to) && snapshot_files[i].needed) {
			fprintf(stderr, "pagealloc record: cannot read %s: %s\n",
			        snapshot_files[i].from, strerror(errno));
			return -1;
		}
	}
	if (at < 0)
		at = (t0 + boottime()) / 2;
	char *up = read_file("/proc/uptime", NULL);
	const char *idle = up ? strchr(up, ' ') : NULL;
	snprintf(to, sizeof to, "%s/uptime", path);
	FILE *f = fopen(to, "we");
	if (!f) {
		free(up);
		return -1;
	}
	fprintf(f, "%.6f%s", at, idle ? idle : "\n");
	free(up);
	return fclose(f) ? -1 : 0;
}

/* ---------------------------------------------------------------------- */
/* The machine's files                                                     */
/* ---------------------------------------------------------------------- */

/* /proc/sys/vm/ as "name = value" lines, as the shared recordings' info/sysctl_vm.txt. */
static void write_sysctl_vm(const char *path)
{
	FILE *f = fopen(path, "we");
	DIR *d = opendir("/proc/sys/vm");
	struct dirent *de;
	while (f && d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char p[512];
		snprintf(p, sizeof p, "/proc/sys/vm/%s", de->d_name);
		char *v = read_file(p, NULL);
		if (v) {
			v[strcspn(v, "\n")] = 0;
			fprintf(f, "%s = %s\n", de->d_name, v);
		}
		free(v);
	}
	if (d)
		closedir(d);
	if (f)
		fclose(f);
}

/*
 * info/page_reporting.txt, on a guest whose balloon reports free memory to
 * its hypervisor (virtio-balloon's VIRTIO_BALLOON_F_REPORTING, feature bit
 * 5): the kernel then takes free blocks of page_reporting_order and above
 * off its free lists for each report, with no trace event. The replay
 * cannot follow that, and says so. No file where no such device is bound.
 */
static void write_page_reporting(const char *path)
{
	DIR *d = opendir("/sys/bus/virtio/drivers/virtio_balloon");
	struct dirent *de;
	FILE *f = NULL;
	while (d && (de = readdir(d))) {
		char p[512];
		snprintf(p, sizeof p, "/sys/bus/virtio/drivers/virtio_balloon/%s/features",
		         de->d_name);
		char *feat = strncmp(de->d_name, "virtio", 6) ? NULL : read_file(p, NULL);
		if (feat && strlen(feat) > 5 && feat[5] == '1' && (f || (f = fopen(path, "we"))))
			fprintf(f, "reporting_device %s virtio_balloon\n", de->d_name);
		free(feat);
	}
	if (d)
		closedir(d);
	char *order =
	        f ? read_file("/sys/module/page_reporting/parameters/page_reporting_order", NULL) :
	            NULL;
	if (order)
		fprintf(f, "page_reporting_order %s", order);
	free(order);
	if (f)
		fclose(f);
}

static int write_machine_files(const char *dir)
{
	char path[1400];
	struct utsname u;
	uname(&u);
	snprintf(path, sizeof path, "%s/uname.txt", dir);
	FILE *f = fopen(path, "we");
	if (!f)
		return -1;
	/* As `uname -a` prints it: the replay reads the release, the third word. */
	fprintf(f, "%s %s %s %s %s\n", u.sysname, u.nodename[0] ? u.nodename : "(none)", u.release,
	        u.version, u.machine);
	fclose(f);
	snprintf(path, sizeof path, "%s/cmdline.txt", dir);
	copy_file("/proc/cmdline", path);
	snprintf(path, sizeof path, "%s/info", dir);
	if (make_dir(path))
		return -1;
	static const char *const info[][2] = {
		{ "/proc/iomem", "iomem" },     { "/proc/cpuinfo", "cpuinfo" },
		{ "/proc/swaps", "swaps" },     { "/proc/meminfo", "meminfo_before" },
		{ "/proc/cmdline", "cmdline" },
	};
	for (size_t i = 0; i < sizeof info / sizeof info[0]; i++) {
		snprintf(path, sizeof path, "%s/info/%s", dir, info[i][1]);
		copy_file(info[i][0], path);
	}
	snprintf(path, sizeof path, "%s/info/sysctl_vm.txt", dir);
	write_sysctl_vm(path);
	snprintf(path, sizeof path, "%s/info/page_reporting.txt", dir);
	write_page_reporting(path);
	return 0;
}

/* formats/SYSTEM/NAME.format and header_page/header_event, as the shared recordings have them. */
static void write_formats(const char *dir, const bool *enabled)
{
	char path[1400], from[600];
	snprintf(path, sizeof path, "%s/formats", dir);
	if (make_dir(path))
		return;
	for (int i = 0; i < 2; i++) {
		const char *h = i ? "header_event" : "header_page";
		snprintf(from, sizeof from, "%s/events/%s", undo.inst, h);
		snprintf(path, sizeof path, "%s/formats/%s", dir, h);
		copy_file(from, path);
	}
	for (size_t i = 0; i < NR_RECORD_EVENTS; i++) {
		if (!enabled[i])
			continue;
		const char *ev = record_events[i], *slash = strchr(ev, '/');
		snprintf(path, sizeof path, "%s/formats/%.*s", dir, (int)(slash - ev), ev);
		make_dir(path);
		snprintf(path, sizeof path, "%s/formats/%s.format", dir, ev);
		snprintf(from, sizeof from, "%s/events/%s/format", undo.inst, ev);
		copy_file(from, path);
	}
}

/* ---------------------------------------------------------------------- */
/* tracefs: mount, instance, events                                        */
/* ---------------------------------------------------------------------- */

static bool is_dir(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int mount_tracefs(void)
{
	if (is_dir(TRACEFS "/instances"))
		return 0;
	if (!is_dir(TRACEFS)) {
		fprintf(stderr,
		        "pagealloc record: %s does not exist: this kernel has no tracefs "
		        "(CONFIG_TRACING off?)\n",
		        TRACEFS);
		return -1;
	}
	if (mount("nodev", TRACEFS, "tracefs", 0, NULL)) {
		fprintf(stderr,
		        "pagealloc record: cannot mount tracefs on %s: %s (mount -t tracefs nodev "
		        "%s)\n",
		        TRACEFS, strerror(errno), TRACEFS);
		return -1;
	}
	undo.mounted_tracefs = true;
	if (!is_dir(TRACEFS "/instances")) {
		fprintf(stderr,
		        "pagealloc record: %s has no instances/ folder: this kernel's "
		        "tracefs is too old\n",
		        TRACEFS);
		return -1;
	}
	return 0;
}

/* debugfs for extfrag/; a recording without it only lacks the extfrag files. */
static void mount_debugfs(void)
{
	if (is_dir(DEBUGFS "/extfrag") || !is_dir(DEBUGFS))
		return;
	if (mount("debugfs", DEBUGFS, "debugfs", 0, NULL) == 0)
		undo.mounted_debugfs = true;
	if (!is_dir(DEBUGFS "/extfrag"))
		fprintf(stderr,
		        "pagealloc record: no %s/extfrag: the snapshots go without "
		        "unusable_index and extfrag_index\n",
		        DEBUGFS);
}

/* Instances a killed recorder left behind (its pid is gone). */
static void remove_stale_instances(void)
{
	DIR *d = opendir(TRACEFS "/instances");
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (strncmp(de->d_name, INST_PREFX, strlen(INST_PREFX)) != 0)
			continue;
		pid_t pid = (pid_t)atoi(de->d_name + strlen(INST_PREFX));
		if (pid > 0 && kill(pid, 0) != 0 && errno == ESRCH) {
			char path[512];
			snprintf(path, sizeof path, TRACEFS "/instances/%s", de->d_name);
			if (rmdir(path) == 0)
				fprintf(stderr,
				        "pagealloc record: removed the tracing instance %s that an "
				        "interrupted recording left\n",
				        de->d_name);
		}
	}
	if (d)
		closedir(d);
}

static void cleanup(void)
{
	if (undo.inst[0]) {
		char path[512];
		snprintf(path, sizeof path, "%s/tracing_on", undo.inst);
		write_str(path, "0");
		snprintf(path, sizeof path, "%s/events/enable", undo.inst);
		write_str(path, "0");
		if (rmdir(undo.inst))
			fprintf(stderr,
			        "pagealloc record: could not remove the tracing instance %s: %s\n",
			        undo.inst, strerror(errno));
		undo.inst[0] = 0;
	}
	if (undo.mounted_debugfs && umount(DEBUGFS) == 0)
		undo.mounted_debugfs = false;
	if (undo.mounted_tracefs && umount(TRACEFS) == 0)
		undo.mounted_tracefs = false;
	if (undo.lock_fd >= 0)
		close(undo.lock_fd);
	undo.lock_fd = -1;
}

/* One recording at a time: they would mount and unmount under each other. */
static int take_lock(void)
{
	undo.lock_fd = open(LOCK_PATH, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (undo.lock_fd < 0)
		return 0; /* no /run: go on unlocked */
	if (flock(undo.lock_fd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	fprintf(stderr, "pagealloc record: another recording is running; waiting for it\n");
	while (flock(undo.lock_fd, LOCK_EX) != 0)
		if (errno != EINTR || interrupted)
			return -1;
	return 0;
}

/* Per CPU: an eighth of the memory available, shared by the CPUs, at most 512 MiB. */
static uint64_t default_buffer_kb(void)
{
	char *m = read_file("/proc/meminfo", NULL);
	const char *p = m ? strstr(m, "MemAvailable:") : NULL;
	uint64_t avail = p ? strtoull(p + 13, NULL, 10) : 0;
	free(m);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t kb = avail / 8 / (uint64_t)(cpus > 0 ? cpus : 1);
	if (kb > 512 * 1024)
		kb = 512 * 1024;
	return kb < 4096 ? 4096 : kb;
}

static int setup_instance(const struct record_opts *o, bool *enabled, FILE *setup)
{
	snprintf(undo.inst, sizeof undo.inst, TRACEFS "/instances/" INST_PREFX "%d", (int)getpid());
	if (mkdir(undo.inst, 0755)) {
		fprintf(stderr, "pagealloc record: cannot create the tracing instance %s: %s\n",
		        undo.inst, strerror(errno));
		undo.inst[0] = 0;
		return -1;
	}
	char buf[64];
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)o->buffer_kb);
	if (inst_write("tracing_on", "0") || inst_write("buffer_size_kb", buf) ||
	    inst_write("options/overwrite", "0"))
		return -1;
	/* The clock of /proc/uptime (CLOCK_BOOTTIME), so that snapshots fall into place. */
	const char *clock = inst_write("trace_clock", "boot") == 0 ? "boot" : "global";
	if (strcmp(clock, "global") == 0 && inst_write("trace_clock", "global"))
		return -1;
	fprintf(setup,
	        "instance = %s\nbuffer_size_kb(per cpu) = %s\noptions/overwrite = 0\n"
	        "trace_clock = %s\nevents enabled:\n",
	        undo.inst, buf, clock);
	unsigned n = 0;
	for (size_t i = 0; i < NR_RECORD_EVENTS; i++) {
		char path[512];
		snprintf(path, sizeof path, "%s/events/%s/enable", undo.inst, record_events[i]);
		enabled[i] = write_str(path, "1") == 0;
		n += enabled[i];
		fprintf(setup, "%s%s\n", record_events[i],
		        enabled[i] ? "" : " (not in this kernel)");
	}
	if (!enabled[0] || !enabled[1]) {
		fprintf(stderr, "pagealloc record: this kernel has no kmem:mm_page_alloc or "
		                "kmem:mm_page_free event (CONFIG_TRACEPOINTS?)\n");
		return -1;
	}
	return n ? 0 : -1;
}

/* ---------------------------------------------------------------------- */
/* After the run: completeness, the trace                                  */
/* ---------------------------------------------------------------------- */

struct ring_stats {
	uint64_t entries, lost; /* lost: overrun + commit overrun + dropped events */
	unsigned cpus;
};

static uint64_t stat_value(const char *s, const char *key)
{
	const char *p = strstr(s, key);
	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

/* info/trace_stats.txt: every CPU's stats, and their sums. */
static void ring_stats(const char *dir, struct ring_stats *rs)
{
	char path[1400];
	memset(rs, 0, sizeof *rs);
	snprintf(path, sizeof path, "%s/info/trace_stats.txt", dir);
	FILE *out = fopen(path, "we");
	for (unsigned cpu = 0; cpu < 4096; cpu++) {
		char p[512];
		snprintf(p, sizeof p, "%s/per_cpu/cpu%u/stats", undo.inst, cpu);
		char *s = read_file(p, NULL);
		if (!s) {
			if (access(p, F_OK) != 0 && cpu >= (unsigned)sysconf(_SC_NPROCESSORS_CONF))
				break;
			continue;
		}
		rs->cpus++;
		rs->entries += stat_value(s, "entries: ");
		rs->lost += stat_value(s, "\noverrun: ") + stat_value(s, "commit overrun: ") +
		            stat_value(s, "dropped events: ");
		if (out)
			fprintf(out, "== cpu%u\n%s", cpu, s);
		free(s);
	}
	if (out)
		fclose(out);
}

/*
 * Blocks of 8 MiB compressed on every CPU: the dump goes faster, and the
 * replay decodes such a file on every CPU too (one block is one thread's).
 */
static lzma_ret xz_encoder(lzma_stream *xz, unsigned level)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	lzma_mt mt = {
		.threads = cpus > 1 ? (uint32_t)(cpus < 8 ? cpus : 8) : 1,
		.block_size = 8u << 20,
		.preset = level,
		.check = LZMA_CHECK_CRC64,
	};
	return lzma_stream_encoder_mt(xz, &mt);
}

/* The instance's trace text through liblzma into path; the number of text bytes, or -1. */
static int64_t write_trace_xz(const char *path, unsigned level)
{
	char from[512], tmp[1500];
	snprintf(from, sizeof from, "%s/trace", undo.inst);
	snprintf(tmp, sizeof tmp, "%s.part", path);
	int in = open(from, O_RDONLY | O_CLOEXEC);
	FILE *out = fopen(tmp, "we");
	lzma_stream xz = LZMA_STREAM_INIT;
	int64_t total = 0;
	bool ok = in >= 0 && out && xz_encoder(&xz, level) == LZMA_OK;
	static uint8_t ibuf[1 << 20], obuf[1 << 18];
	lzma_action action = LZMA_RUN;
	while (ok) {
		if (xz.avail_in == 0 && action == LZMA_RUN) {
			ssize_t n = read(in, ibuf, sizeof ibuf);
			if (n < 0 && errno == EINTR && interrupted < 2)
				continue;
			if (n < 0 || interrupted >= 2) {
				ok = false;
				break;
			}
			xz.next_in = ibuf;
			xz.avail_in = (size_t)n;
			total += n;
			if (n == 0)
				action = LZMA_FINISH;
		}
		xz.next_out = obuf;
		xz.avail_out = sizeof obuf;
		lzma_ret r = lzma_code(&xz, action);
		size_t have = sizeof obuf - xz.avail_out;
		if (have && fwrite(obuf, 1, have, out) != have)
			ok = false;
		if (r == LZMA_STREAM_END)
			break;
		if (r != LZMA_OK)
			ok = false;
	}
	lzma_end(&xz);
	if (in >= 0)
		close(in);
	if (out && fclose(out))
		ok = false;
	if (ok && rename(tmp, path) == 0)
		return total;
	fprintf(stderr, "pagealloc record: writing %s failed%s%s\n", path, errno ? ": " : "",
	        errno ? strerror(errno) : "");
	unlink(tmp);
	return -1;
}

/* ---------------------------------------------------------------------- */
/* The run                                                                 */
/* ---------------------------------------------------------------------- */

static void sleep_a_little(void)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	nanosleep(&ts, NULL);
}

/* Run the command (or wait) while tracing; the command's exit status, 0 without one. */
static int run_workload(const struct record_opts *o)
{
	double end = o->seconds > 0 ? boottime() + o->seconds : 0;
	if (!o->command) {
		if (!end)
			end = boottime() + 10;
		while (!interrupted && boottime() < end)
			sleep_a_little();
		return 0;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		perror("pagealloc record: fork");
		return 1;
	}
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		execvp(o->command[0], o->command);
		fprintf(stderr, "pagealloc record: cannot run %s: %s\n", o->command[0],
		        strerror(errno));
		_exit(127);
	}
	int st = 0;
	bool stopped = false;
	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (!stopped && ((end && boottime() >= end) || interrupted)) {
			kill(pid,
			     SIGTERM); /* --seconds ran out, or Ctrl-C: the command stops too */
			stopped = true;
		}
		sleep_a_little();
	}
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (!stopped)
		fprintf(stderr, "pagealloc record: %s ended by signal %d\n", o->command[0],
		        WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	return stopped ? 0 : 1;
}

static int write_marker(const char *inst, const char *text)
{
	char path[600];
	snprintf(path, sizeof path, "%s/trace_marker", inst);
	if (write_str(path, text) == 0)
		return 0;
	fprintf(stderr, "pagealloc record: cannot write the marker to %s: %s\n", path,
	        strerror(errno));
	return -1;
}

static void export_env(const char *dir)
{
	char abs[PATH_MAX];
	setenv(ENV_DIR, realpath(dir, abs) ? abs : dir, 1);
	setenv(ENV_INST, undo.inst, 1);
}

/* The size to ask for when events were lost: what was written, with room to spare. */
static void explain_lost(const struct record_opts *o, const struct ring_stats *rs)
{
	uint64_t seen = rs->entries + rs->lost;
	uint64_t need = rs->entries ? o->buffer_kb * seen / rs->entries : o->buffer_kb * 2;
	need = need + need / 2;
	fprintf(stderr,
	        "pagealloc record: INCOMPLETE: the kernel lost %llu of %llu events (overrun or "
	        "dropped: the ring buffer of %llu KiB per CPU filled). A replay of this trace "
	        "would not be faithful. Record again with a bigger buffer, e.g. --buffer-kb "
	        "%llu, or a shorter --seconds / smaller workload.\n",
	        (unsigned long long)rs->lost, (unsigned long long)seen,
	        (unsigned long long)o->buffer_kb, (unsigned long long)need);
}

static int finish(const struct record_opts *o, const bool *enabled, double t_on, double t_off)
{
	char path[1400];
	struct ring_stats rs;
	ring_stats(o->dir, &rs);
	write_formats(o->dir, enabled);
	snprintf(path, sizeof path, "%s/info/trace_window_uptime.txt", o->dir);
	FILE *f = fopen(path, "we");
	if (f) {
		fprintf(f, "tracing_on=1 at %.6f\ntracing_on=0 at %.6f\n", t_on, t_off);
		fclose(f);
	}
	if (isatty(STDERR_FILENO))
		fprintf(stderr, "pagealloc record: compressing %llu events into %s/trace.txt.xz\n",
		        (unsigned long long)rs.entries, o->dir);
	snprintf(path, sizeof path, "%s/trace.txt.xz", o->dir);
	int64_t bytes = write_trace_xz(path, o->xz_level);
	if (bytes < 0)
		return 1;
	snprintf(path, sizeof path, "%s/INCOMPLETE", o->dir);
	if (rs.lost) {
		explain_lost(o, &rs);
		f = fopen(path, "we");
		if (f) {
			fprintf(f, "the kernel lost %llu events; see info/trace_stats.txt\n",
			        (unsigned long long)rs.lost);
			fclose(f);
		}
		return 1;
	}
	unlink(path);
	printf("recorded %llu events in %.2f s on %u CPUs, nothing lost (overrun 0, dropped 0): "
	       "%s\n(%lld bytes of text; replay it with: pagealloc replay %s)\n",
	       (unsigned long long)rs.entries, t_off - t_on, rs.cpus, o->dir, (long long)bytes,
	       o->dir);
	return 0;
}

/* A folder with files in it may hold another recording's snapshots: the replay would read them. */
static bool dir_in_use(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	bool used = false;
	while (d && !used && (de = readdir(d)))
		used = strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	if (d)
		closedir(d);
	return used;
}

static int record(struct record_opts *o)
{
	if (geteuid() != 0) {
		fprintf(stderr,
		        "pagealloc record: needs root: it mounts tracefs, sets up a tracing "
		        "instance and reads /proc/pagetypeinfo (run it with sudo)\n");
		return 1;
	}
	bool enabled[NR_RECORD_EVENTS] = { 0 };
	if (dir_in_use(o->dir)) {
		fprintf(stderr,
		        "pagealloc record: %s exists and is not empty: give -o a new folder\n",
		        o->dir);
		return 1;
	}
	if (take_lock() || mount_tracefs())
		return 1;
	mount_debugfs();
	remove_stale_instances();
	if (!o->buffer_kb)
		o->buffer_kb = default_buffer_kb();
	if (make_dir(o->dir) || write_machine_files(o->dir))
		return 1;
	char path[1400];
	snprintf(path, sizeof path, "%s/info/ftrace_setup.txt", o->dir);
	FILE *setup = fopen(path, "we");
	if (!setup || setup_instance(o, enabled, setup)) {
		if (setup)
			fclose(setup);
		return 1;
	}
	fclose(setup);
	export_env(o->dir);
	double t_on = boottime();
	if (take_snapshot(o->dir, "before", -1))
		return 1;
	t_on = boottime();
	if (inst_write("tracing_on", "1"))
		return 1;
	if (o->mark && write_marker(undo.inst, o->mark))
		return 1;
	int status = run_workload(o);
	inst_write("tracing_on", "0");
	double t_off = boottime();
	if (take_snapshot(o->dir, "after", t_off))
		return 1;
	if (interrupted >= 2)
		return 130;
	int rc = finish(o, enabled, t_on, t_off);
	if (status && !rc)
		fprintf(stderr, "pagealloc record: the command exited with status %d\n", status);
	return rc ? rc : status ? 1 : 0;
}

/* --mark / --snapshot inside a recording: the COMMAND's environment names it. */
static int record_inside(const struct record_opts *o)
{
	const char *dir = getenv(ENV_DIR), *inst = getenv(ENV_INST);
	if (!dir || !inst) {
		fprintf(stderr,
		        "pagealloc record: --snapshot without a COMMAND works only inside a "
		        "recording (run from the COMMAND of `pagealloc record -- COMMAND`)\n");
		return 2;
	}
	if (o->snapshot) {
		const char *n = o->snapshot;
		if (!*n ||
		    strspn(n,
		           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
		            strlen(n) ||
		    n[0] == '.' || !strcmp(n, "before") || !strcmp(n, "after") ||
		    !strcmp(n, "info") || !strcmp(n, "formats")) {
			fprintf(stderr,
			        "pagealloc record: bad snapshot name '%s' (letters, digits, _ . "
			        "-; not before, after, info or formats)\n",
			        n);
			return 2;
		}
		char text[300];
		snprintf(text, sizeof text, "SNAPSHOT %s", n);
		if (write_marker(inst, text) || take_snapshot(dir, n, -1))
			return 1;
	}
	if (o->mark && write_marker(inst, o->mark))
		return 1;
	return 0;
}

static void record_usage(FILE *f)
{
	fprintf(f,
	        "usage: pagealloc record [-o DIR] [--seconds N] [--mark TEXT] [--buffer-kb N]\n"
	        "                        [--xz-level N] [-- COMMAND ...]\n"
	        "       pagealloc record --snapshot NAME | --mark TEXT   (inside a recording)\n"
	        "Record this machine's kernel page allocator (ftrace kmem, compaction, vmscan,\n"
	        "migrate events) and /proc snapshots before and after, into a folder that\n"
	        "`pagealloc replay DIR` reads. Needs root. Tracing runs in an instance of its own,\n"
	        "removed at the end: the machine's tracing settings are left as they were.\n\n"
	        "options:\n"
	        "  -o DIR          the recording folder (default: pagealloc-record-DATE-TIME)\n"
	        "  --seconds N     how long to record (default: until COMMAND exits; 10 s\n"
	        "                  without one); a COMMAND still running then gets SIGTERM\n"
	        "  --mark TEXT     a marker line (tracing_mark_write) when recording starts\n"
	        "  --buffer-kb N   ring buffer per CPU (default: an eighth of MemAvailable\n"
	        "                  over the CPUs, at most 512 MiB)\n"
	        "  --xz-level N    liblzma preset for trace.txt.xz, 0-9 (default 1)\n"
	        "  -- COMMAND ...  the workload to record; it sees " ENV_DIR " and can run\n"
	        "                  `pagealloc record --snapshot NAME` (a snapshot folder NAME/\n"
	        "                  and a marker) or `pagealloc record --mark TEXT`\n"
	        "Exit status: 0 a complete recording, 1 an error or an incomplete recording\n"
	        "(the kernel dropped events), 2 a usage error.\n");
}

static int parse_record_args(struct record_opts *o, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
		char *e = NULL;
		if (strcmp(a, "--") == 0) {
			if (i + 1 >= argc)
				break;
			o->command = argv + i + 1;
			return 0;
		}
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
			return 1;
		if (!next) {
			fprintf(stderr, "pagealloc record: '%s' %s (see pagealloc record --help)\n",
			        a,
			        a[0] == '-' ? "needs a value or is unknown" : "is not an option");
			return -1;
		}
		i++;
		errno = 0;
		if (strcmp(a, "-o") == 0)
			o->dir = next;
		else if (strcmp(a, "--mark") == 0)
			o->mark = next;
		else if (strcmp(a, "--snapshot") == 0)
			o->snapshot = next;
		else if (strcmp(a, "--seconds") == 0 && (o->seconds = strtod(next, &e)) > 0 && !*e)
			continue;
		else if (strcmp(a, "--buffer-kb") == 0 &&
		         (o->buffer_kb = strtoull(next, &e, 10)) >= 64 && !*e && !errno)
			continue;
		else if (strcmp(a, "--xz-level") == 0 &&
		         (o->xz_level = (unsigned)strtoul(next, &e, 10)) <= 9 && *next && !*e)
			continue;
		else {
			fprintf(stderr,
			        "pagealloc record: bad option or value at '%s %s' (see "
			        "pagealloc record --help)\n",
			        a, next);
			return -1;
		}
	}
	return 0;
}

int record_main(int argc, char **argv)
{
	struct record_opts o = { .xz_level = 1 };
	int rc = parse_record_args(&o, argc, argv);
	if (rc > 0)
		return record_usage(stdout), 0;
	if (rc < 0)
		return 2;
	if (o.snapshot || (o.mark && getenv(ENV_DIR) && !o.command && !o.dir))
		return record_inside(&o);
	char def[64];
	if (!o.dir) {
		time_t now = time(NULL);
		strftime(def, sizeof def, "pagealloc-record-%Y%m%d-%H%M%S", localtime(&now));
		o.dir = def;
	}
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	atexit(cleanup);
	rc = record(&o);
	cleanup();
	return rc;
}
