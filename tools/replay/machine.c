/* SPDX-License-Identifier: MIT */
/*
 * The traced machine, from its own files: the snapshot folders (buddyinfo,
 * pagetypeinfo, zoneinfo, uptime), info/iomem for where the RAM is, and
 * info/sysctl_vm.txt for min_free_kbytes. From them a boot line whose pool
 * has the kernel's pfns: the same span, the same holes, so that a kernel
 * pfn and a pool pfn name the same frame.
 */
#define _GNU_SOURCE
#include "replay.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const mt_names[RP_NR_MT] = { "Unmovable",  "Movable", "Reclaimable",
	                                        "HighAtomic", "CMA",     "Isolate" };

char *rp_read_stream(FILE *f)
{
	size_t cap = 1 << 16, len = 0;
	char *s = malloc(cap);
	while (s) {
		len += fread(s + len, 1, cap - len - 1, f);
		if (len < cap - 1)
			break;
		char *bigger = realloc(s, cap * 2);
		if (!bigger)
			free(s);
		s = bigger;
		cap *= 2;
	}
	if (s)
		s[len] = 0;
	return s;
}

/* A whole small file as a string; NULL if absent. */
static char *slurp(const char *dir, const char *name)
{
	char path[1600];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *s = rp_read_stream(f);
	fclose(f);
	return s;
}

/* The zone named name in st, added if new (replay.h). */
struct rp_zone_state *rp_state_zone(struct rp_state *st, const char *name)
{
	for (unsigned i = 0; i < st->nr_zones; i++)
		if (strcmp(st->zone[i].name, name) == 0)
			return &st->zone[i];
	if (st->nr_zones == RP_MAX_ZONES)
		return NULL;
	struct rp_zone_state *z = &st->zone[st->nr_zones++];
	memset(z, 0, sizeof *z);
	snprintf(z->name, sizeof z->name, "%s", name);
	return z;
}

/*
 * "Node 0, zone   Normal" -> "Normal"; the rest of the line after it in
 * *rest; the node counted in st->nr_nodes.
 */
static bool zone_line(const char *line, char *name, size_t len, const char **rest,
                      struct rp_state *st)
{
	const char *z = strstr(line, "zone");
	if (strncmp(line, "Node", 4) != 0 || !z)
		return false;
	unsigned long node = strtoul(line + 4, NULL, 10);
	if (node + 1 > st->nr_nodes)
		st->nr_nodes = node < UINT32_MAX ? (unsigned)node + 1 : UINT32_MAX;
	z += 4;
	while (*z == ' ')
		z++;
	size_t n = strcspn(z, " ,\n");
	snprintf(name, len, "%.*s", (int)n, z);
	*rest = z + n;
	return true;
}

/*
 * The zone a "Node N, zone NAME ..." line names (added to st if new), the
 * rest of the line in *rest; NULL for another line, or *full when st has no
 * room for another zone.
 */
static struct rp_zone_state *line_zone(struct rp_state *st, const char *l, const char **rest,
                                       bool *full)
{
	char name[16];
	if (!zone_line(l, name, sizeof name, rest, st))
		return NULL;
	struct rp_zone_state *z = rp_state_zone(st, name);
	*full = !z;
	return z;
}

static unsigned parse_counts(const char *s, uint64_t *out, unsigned max)
{
	unsigned n = 0;
	char *e;
	while (n < max) {
		uint64_t v = strtoull(s, &e, 10);
		if (e == s)
			break;
		out[n++] = v;
		s = e;
	}
	return n;
}

int rp_state_parse_buddyinfo(const char *text, struct rp_state *st)
{
	bool full = false;
	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		const char *rest;
		struct rp_zone_state *z = line_zone(st, l, &rest, &full);
		if (full)
			return -1;
		if (!z)
			continue;
		unsigned n = parse_counts(rest, z->free, RP_MAX_ORDERS);
		if (n > st->nr_orders)
			st->nr_orders = n;
	}
	return st->nr_zones ? 0 : -1;
}

static int mt_index(const char *s)
{
	for (int i = 0; i < RP_NR_MT; i++)
		if (strncmp(s, mt_names[i], strlen(mt_names[i])) == 0)
			return i;
	return -1;
}

/* The header "Number of blocks type  Unmovable Movable ..." names the columns. */
static unsigned block_columns(const char *l, int cols[RP_NR_MT])
{
	unsigned n = 0;
	const char *s = strstr(l, "type");
	for (s = s ? s + 4 : l; n < RP_NR_MT;) {
		while (*s == ' ')
			s++;
		if (!*s || *s == '\n')
			break;
		cols[n++] = mt_index(s);
		s += strcspn(s, " \n");
	}
	return n;
}

int rp_state_parse_pagetypeinfo(const char *text, struct rp_state *st)
{
	int cols[RP_NR_MT];
	unsigned nr_cols = 0;
	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		if (strncmp(l, "Number of blocks type", 21) == 0) {
			nr_cols = block_columns(l, cols);
			continue;
		}
		const char *rest;
		bool full = false;
		struct rp_zone_state *z = line_zone(st, l, &rest, &full);
		if (full)
			return -1;
		if (!z)
			continue;
		const char *type = strstr(rest, "type");
		if (type && !nr_cols) { /* free blocks of one type per order */
			type += 4;
			while (*type == ' ')
				type++;
			int mt = mt_index(type);
			if (mt >= 0)
				parse_counts(type + strcspn(type, " "), z->free_mt[mt],
				             RP_MAX_ORDERS);
			continue;
		}
		uint64_t v[RP_NR_MT] = { 0 };
		unsigned n = parse_counts(rest, v, nr_cols);
		for (unsigned i = 0; i < n; i++)
			if (cols[i] >= 0)
				z->pageblocks[cols[i]] = v[i];
	}
	return 0;
}

/* zoneinfo: spans, present, managed, min watermark, per-CPU counts and highs. */
void rp_state_parse_zoneinfo(const char *text, struct rp_state *st)
{
	struct rp_zone_state *z = NULL;
	uint64_t spanned = 0;
	unsigned cpu = 0;
	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		char name[16];
		const char *rest;
		if (zone_line(l, name, sizeof name, &rest, st)) {
			z = rp_state_zone(st, name);
			continue;
		}
		if (!z)
			continue;
		const char *s = l;
		while (*s == ' ')
			s++;
		const char *num = s + strcspn(s, " :");
		num += strspn(num, " :");
		uint64_t v = strtoull(num, NULL, 10);
		if (strncmp(s, "spanned ", 8) == 0)
			spanned = v;
		else if (strncmp(s, "present ", 8) == 0)
			z->present = v;
		else if (strncmp(s, "managed ", 8) == 0)
			z->managed = v;
		else if (strncmp(s, "min ", 4) == 0)
			z->min_wmark = v;
		else if (strncmp(s, "boost ", 6) == 0)
			z->boost = v;
		else if (strncmp(s, "cpu:", 4) == 0)
			cpu = (unsigned)v;
		else if (strncmp(s, "count:", 6) == 0) {
			z->pcp += v;
			if (cpu < RP_MAX_CPUS)
				z->pcp_cpu[cpu] += v;
		} else if (strncmp(s, "high:", 5) == 0 && cpu < RP_MAX_CPUS) {
			z->pcp_high[cpu] = v;
		} else if (strncmp(s, "start_pfn:", 10) == 0) {
			z->start_pfn = v;
			z->end_pfn = v + spanned;
		}
	}
	/* Zones with no memory (Movable, Device) are not part of the comparison. */
	unsigned n = 0;
	for (unsigned i = 0; i < st->nr_zones; i++)
		if (st->zone[i].present)
			st->zone[n++] = st->zone[i];
	st->nr_zones = n ? n : st->nr_zones;
}

static int load_snapshot(const char *dir, const char *name, struct rp_snapshot *s)
{
	char path[1400];
	snprintf(path, sizeof path, "%s/%.255s", dir, name);
	char *bi = slurp(path, "buddyinfo"), *pt = slurp(path, "pagetypeinfo"),
	     *zi = slurp(path, "zoneinfo"), *up = slurp(path, "uptime");
	int rc = -1;
	memset(s, 0, sizeof *s);
	snprintf(s->name, sizeof s->name, "%.63s", name);
	s->kernel.uptime = up ? strtod(up, NULL) : -1;
	if (bi && zi) {
		rp_state_parse_zoneinfo(zi, &s->kernel);
		rc = rp_state_parse_buddyinfo(bi, &s->kernel);
		if (rc == 0 && pt)
			rc = rp_state_parse_pagetypeinfo(pt, &s->kernel);
	}
	free(bi), free(pt), free(zi), free(up);
	return rc;
}

static int by_uptime(const void *a, const void *b)
{
	double x = ((const struct rp_snapshot *)a)->kernel.uptime,
	       y = ((const struct rp_snapshot *)b)->kernel.uptime;
	return (x > y) - (x < y);
}

static void find_trace(struct rp_machine *m)
{
	static const char *const names[] = { "trace.txt.xz", "trace.txt.gz", "trace.txt",
		                             "trace.xz",     "trace.gz",     "trace" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		struct stat sb;
		snprintf(m->trace_path, sizeof m->trace_path, "%s/%s", m->dir, names[i]);
		if (stat(m->trace_path, &sb) == 0 && S_ISREG(sb.st_mode))
			return;
	}
	m->trace_path[0] = 0;
}

/*
 * info/trace_window_uptime.txt: /proc/uptime when tracing began, written as
 * "tracing_on=1 at UPTIME" (pagealloc record) or as "ON OFF" (by hand).
 */
static void load_trace_window(struct rp_machine *m)
{
	char *s = slurp(m->dir, "info/trace_window_uptime.txt");
	const char *at = s ? strstr(s, " at ") : NULL;
	char *end;
	double v = s ? strtod(at ? at + 4 : s, &end) : 0;
	m->tracing_on = s && end != (at ? at + 4 : s) && v >= 0 ? v : -1;
	free(s);
}

double rp_clock_skew(const struct rp_machine *m, const struct rp_trace *t)
{
	if (m->tracing_on < 0 || !t->first_ts_ns)
		return 0;
	double skew = m->tracing_on - (double)t->first_ts_ns / 1e9;
	return skew > 0 ? skew : 0;
}

static void load_sysctl(struct rp_machine *m)
{
	char *s = slurp(m->dir, "info/sysctl_vm.txt");
	const char *p;
	if (s && (p = strstr(s, "min_free_kbytes =")))
		m->min_free_kbytes = strtoll(p + 17, NULL, 10);
	if (s && (p = strstr(s, "watermark_scale_factor =")))
		m->watermark_scale_factor = (unsigned)strtoul(p + 24, NULL, 10);
	if (s && (p = strstr(s, "watermark_boost_factor =")))
		m->watermark_boost_factor = (long)strtoul(p + 24, NULL, 10);
	free(s);
}

/*
 * info/page_reporting.txt (pagealloc record): the guest's balloon reports
 * free memory to its hypervisor, from blocks of page_reporting_order up
 * (the pageblock's, Linux's default, where the file names none).
 */
static void load_page_reporting(struct rp_machine *m)
{
	static const char key[] = "page_reporting_order ";
	char *s = slurp(m->dir, "info/page_reporting.txt");
	const char *p = s ? strstr(s, key) : NULL;
	m->page_reporting = s != NULL;
	m->page_reporting_order = p ? (unsigned)strtoul(p + sizeof key - 1, NULL, 10) : 9;
	free(s);
}

/*
 * The kernel's release from `uname -a` (uname.txt or info/uname.txt), and
 * the version whose allocator rules the pool boots with (linux=): the
 * release's major.minor, the nearest version modelled outside 6.1 .. 7.2.
 */
static void load_release(struct rp_machine *m)
{
	char *s = slurp(m->dir, "uname.txt");
	if (!s)
		s = slurp(m->dir, "info/uname.txt");
	char sys[32], node[64];
	m->linux_ver[0] = 0;
	if (s && sscanf(s, "%31s %63s %63s", sys, node, m->release) == 3) {
		unsigned major = 0, minor = 0;
		if (sscanf(m->release, "%u.%u", &major, &minor) == 2 && major) {
			if (major < 6 || (major == 6 && minor < 1))
				major = 6, minor = 1;
			else if (major > 7 || (major == 7 && minor > 2))
				major = 7, minor = 2;
			else if (major == 6 && minor > 19)
				minor = 19;
			snprintf(m->linux_ver, sizeof m->linux_ver, "%u.%u", major, minor);
		}
	} else {
		m->release[0] = 0;
	}
	free(s);
}

static int load_snapshots(struct rp_machine *m)
{
	DIR *d = opendir(m->dir);
	if (!d)
		return -1;
	struct dirent *de;
	while ((de = readdir(d)) && m->nr_snapshots < 16) {
		if (de->d_name[0] == '.')
			continue;
		char path[1400];
		struct stat sb;
		snprintf(path, sizeof path, "%s/%s/buddyinfo", m->dir, de->d_name);
		if (stat(path, &sb) != 0)
			continue;
		if (load_snapshot(m->dir, de->d_name, &m->snap[m->nr_snapshots]) == 0)
			m->nr_snapshots++;
		else
			fprintf(stderr, "pagealloc replay: %s/%s: unreadable snapshot, skipped\n",
			        m->dir, de->d_name);
	}
	closedir(d);
	qsort(m->snap, m->nr_snapshots, sizeof m->snap[0], by_uptime);
	return 0;
}

int rp_machine_load(const char *path, struct rp_machine *m)
{
	struct stat sb;
	memset(m, 0, sizeof *m);
	m->tracing_on = -1;
	m->min_free_kbytes = -1;
	m->watermark_boost_factor = -1;
	if (strcmp(path, "-") == 0 || (stat(path, &sb) == 0 && !S_ISDIR(sb.st_mode))) {
		snprintf(m->trace_path, sizeof m->trace_path, "%s", path);
		return 0;
	}
	if (stat(path, &sb) != 0) {
		fprintf(stderr, "pagealloc replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	snprintf(m->dir, sizeof m->dir, "%s", path);
	find_trace(m);
	if (!m->trace_path[0]) {
		fprintf(stderr, "pagealloc replay: %s: no trace.txt[.xz|.gz] in the folder\n",
		        path);
		return -1;
	}
	/* pagealloc record leaves INCOMPLETE when the kernel lost events. */
	char *incomplete = slurp(m->dir, "INCOMPLETE");
	if (incomplete)
		fprintf(stderr, "pagealloc replay: %s: an incomplete recording: %s", path,
		        incomplete);
	free(incomplete);
	load_sysctl(m);
	load_page_reporting(m);
	load_release(m);
	load_trace_window(m);
	if (load_snapshots(m))
		return -1;
	for (unsigned i = 0; i < m->nr_snapshots; i++)
		if (m->snap[i].kernel.nr_nodes > 1) {
			/* Node 1's Normal is not node 0's: merged, every event would land wrong. */
			fprintf(stderr,
			        "pagealloc replay: %s/%s: a machine of %u NUMA nodes; the replay "
			        "models one node (replay the trace file alone for its events)\n",
			        path, m->snap[i].name, m->snap[i].kernel.nr_nodes);
			return -1;
		}
	if (m->nr_snapshots)
		m->max_order = m->snap[0].kernel.nr_orders - 1;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* The boot line                                                           */
/* ---------------------------------------------------------------------- */

/*
 * Ranges of info/iomem labelled `label` ("00100000-bffd6fff : System RAM"),
 * in whole pages (a partial page is not RAM to the kernel): top-level lines
 * only, or (nested) the indented ones too, such as "  01000000-022ca8df :
 * Kernel code". An unprivileged reader sees zeros: such ranges are empty.
 */
static unsigned iomem_ranges(const struct rp_machine *m, const char *label, bool nested,
                             uint64_t (*out)[2], unsigned max)
{
	char *s = m->dir[0] ? slurp(m->dir, "info/iomem") : NULL;
	unsigned n = 0;
	for (const char *l = s; l && *l && n < max; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		if (*l == ' ' && !nested)
			continue;
		char *e;
		uint64_t a = strtoull(l + strspn(l, " "), &e, 16);
		if (*e != '-')
			continue;
		uint64_t b = strtoull(e + 1, &e, 16) + 1;
		const char *nl = strchr(e, '\n');
		const char *at = strstr(e, " : ");
		if (!at || (nl && at > nl) || strncmp(at + 3, label, strlen(label)) != 0 || b <= 1)
			continue;
		out[n][0] = (a + 4095) / 4096;
		out[n][1] = b / 4096;
		n += out[n][1] > out[n][0];
	}
	free(s);
	return n;
}

static uint64_t machine_end_pfn(const struct rp_machine *m, const struct rp_trace *t)
{
	uint64_t end = t ? t->max_pfn : 0;
	for (unsigned s = 0; s < m->nr_snapshots; s++)
		for (unsigned z = 0; z < m->snap[s].kernel.nr_zones; z++)
			if (m->snap[s].kernel.zone[z].end_pfn > end)
				end = m->snap[s].kernel.zone[z].end_pfn;
	/* Whole 128 MiB sections, as the frame map is laid out. */
	return (end + 32767) & ~32767ull;
}

/* Frames of [lo, hi) inside the ranges r[0..n). */
static uint64_t frames_in(const uint64_t (*r)[2], unsigned n, uint64_t lo, uint64_t hi)
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < n; i++) {
		uint64_t a = r[i][0] > lo ? r[i][0] : lo, b = r[i][1] < hi ? r[i][1] : hi;
		sum += b > a ? b - a : 0;
	}
	return sum;
}

/*
 * The most frames zone z of the first snapshot managed at any snapshot
 * where it had the same present frames: more than at first where the
 * kernel set up its struct pages late and only as allocations needed them
 * (deferred_grow_zone(), which some kernels use for all of the deferred
 * part: "deferred_init=lazy" on their command line).
 */
static uint64_t managed_most(const struct rp_machine *m, unsigned z)
{
	const struct rp_zone_state *kz = &m->snap[0].kernel.zone[z];
	uint64_t most = kz->managed;
	for (unsigned s = 1; s < m->nr_snapshots; s++) {
		const struct rp_state *st = &m->snap[s].kernel;
		for (unsigned i = 0; i < st->nr_zones; i++)
			if (strcmp(st->zone[i].name, kz->name) == 0 &&
			    st->zone[i].present == kz->present && st->zone[i].managed > most)
				most = st->zone[i].managed;
	}
	return most;
}

void rp_machine_lazy_range(const struct rp_machine *m, uint64_t *lo, uint64_t *hi)
{
	*lo = *hi = 0;
	if (!m->nr_snapshots)
		return;
	const struct rp_state *st = &m->snap[0].kernel;
	for (unsigned z = 0; z < st->nr_zones; z++) {
		const struct rp_zone_state *kz = &st->zone[z];
		if (managed_most(m, z) <= kz->managed)
			continue;
		/* Set up in order from the zone's start: what it managed, then to a section's end. */
		uint64_t ram[32][2];
		unsigned nr = iomem_ranges(m, "System RAM", false, ram, 32);
		uint64_t at = kz->start_pfn, left = kz->managed;
		for (unsigned i = 0; i < nr && left; i++) {
			uint64_t a = ram[i][0] > at ? ram[i][0] : at;
			uint64_t b = ram[i][1] < kz->end_pfn ? ram[i][1] : kz->end_pfn;
			uint64_t take = a < b ? (b - a < left ? b - a : left) : 0;
			at = a < b ? a + take : at;
			left -= take;
		}
		at += nr ? 0 : left;
		uint64_t block = RP_SECTION_FRAMES;
		*lo = (at + block - 1) / block * block;
		*hi = kz->end_pfn / block * block;
		if (*lo >= *hi)
			*lo = *hi = 0;
		return; /* only the zone that ends the node defers */
	}
}

/*
 * What the kernel reserved at boot in each zone (present, not managed) as
 * memreserve= ranges, so that the pool manages what the kernel managed and
 * its watermarks, lowmem reserves and per-CPU sizes come out as the
 * kernel's. The RAM below 1 MiB, which x86 always reserves, and the
 * kernel's image where iomem shows it ("Kernel code", rodata, data, bss;
 * the gaps and init memory between them went back to the buddy at boot);
 * the rest (the frame descriptors, page tables, per-CPU areas, firmware
 * tables) at the top of the zone's RAM, as memblock allocates from the top
 * down.
 */
static size_t reserve_keys(const struct rp_machine *m, const uint64_t (*ram)[2], unsigned nr,
                           char *buf, size_t len)
{
	size_t n = 0;
	if (!m->nr_snapshots || !nr)
		return 0;
	uint64_t image[9][2] = { { 0, 256 } }; /* x86 keeps all RAM below 1 MiB (5.13 on) */
	unsigned ni = 1 + iomem_ranges(m, "Kernel ", true, image + 1, 8);
	const struct rp_state *st = &m->snap[0].kernel;
	for (unsigned z = 0; z < st->nr_zones; z++) {
		const struct rp_zone_state *kz = &st->zone[z];
		uint64_t most = managed_most(m, z);
		uint64_t want = kz->present > most ? kz->present - most : 0;
		uint64_t in[9][2], in_image = 0; /* the image's ranges inside the zone */
		unsigned nin = 0;
		for (unsigned i = 0; i < ni; i++) {
			in[nin][0] = image[i][0] > kz->start_pfn ? image[i][0] : kz->start_pfn;
			in[nin][1] = image[i][1] < kz->end_pfn ? image[i][1] : kz->end_pfn;
			if (in[nin][0] < in[nin][1])
				in_image += frames_in(ram, nr, in[nin][0], in[nin][1]), nin++;
		}
		for (unsigned i = 0; i < nin && in_image <= want && n < len; i++)
			n += (size_t)snprintf(buf + n, len - n, " memreserve=%lluK-%lluK",
			                      (unsigned long long)(in[i][0] * 4),
			                      (unsigned long long)(in[i][1] * 4));
		want -= in_image <= want ? in_image : 0;
		for (unsigned i = nr; i-- > 0 && want;) {
			uint64_t lo = ram[i][0] > kz->start_pfn ? ram[i][0] : kz->start_pfn;
			uint64_t hi = ram[i][1] < kz->end_pfn ? ram[i][1] : kz->end_pfn;
			if (lo >= hi)
				continue;
			uint64_t take = hi - lo < want ? hi - lo : want;
			want -= take;
			if (n < len)
				n += (size_t)snprintf(buf + n, len - n, " memreserve=%lluK-%lluK",
				                      (unsigned long long)((hi - take) * 4),
				                      (unsigned long long)(hi * 4));
		}
	}
	return n;
}

void rp_machine_boot_line(const struct rp_machine *m, const struct rp_trace *t, char *buf,
                          size_t len)
{
	uint64_t end = machine_end_pfn(m, t);
	size_t n = (size_t)snprintf(buf, len, "mem=%lluK nr_cpus=%u", (unsigned long long)(end * 4),
	                            t && t->nr_cpus ? t->nr_cpus : 1);
	uint64_t ram[32][2];
	unsigned nr = iomem_ranges(m, "System RAM", false, ram, 32);
	uint64_t at = 0;
	for (unsigned i = 0; i <= nr && n < len; i++) {
		uint64_t next = i < nr ? ram[i][0] : end;
		if (next > end)
			next = end;
		if (nr && next > at)
			n += (size_t)snprintf(buf + n, len - n, " memhole=%lluK-%lluK",
			                      (unsigned long long)(at * 4),
			                      (unsigned long long)(next * 4));
		if (i < nr && ram[i][1] > at)
			at = ram[i][1];
	}
	n += reserve_keys(m, ram, nr, buf + n, n < len ? len - n : 0);
	uint64_t lazy_lo, lazy_hi;
	rp_machine_lazy_range(m, &lazy_lo, &lazy_hi);
	if (lazy_hi && n < len) /* the replay sets it up to lazy_lo, the rest as the trace shows */
		n += (size_t)snprintf(buf + n, len - n, " deferred_init=lazy");
	if (m->max_order && n < len)
		n += (size_t)snprintf(buf + n, len - n, " max_order=%u", m->max_order);
	if (m->min_free_kbytes >= 0 && n < len)
		n += (size_t)snprintf(buf + n, len - n, " min_free_kbytes=%lld",
		                      (long long)m->min_free_kbytes);
	if (m->watermark_scale_factor && n < len)
		n += (size_t)snprintf(buf + n, len - n, " watermark_scale_factor=%u",
		                      m->watermark_scale_factor);
	if (m->watermark_boost_factor >= 0 && n < len)
		n += (size_t)snprintf(buf + n, len - n, " watermark_boost_factor=%ld",
		                      m->watermark_boost_factor);
	if (m->linux_ver[0] && n < len)
		snprintf(buf + n, len - n, " linux=%s", m->linux_ver);
}
