/* SPDX-License-Identifier: MIT */
/*
 * boot: what a pool costs to bring up, measured, not computed: the time of
 * pa_boot() plus the first allocation (what a user waits for), the time
 * until deferred init is done, and the process's resident memory grown by
 * each, from /proc/self/status (a frame map that is reserved but never
 * touched costs nothing; one touched twice over costs double). Without
 * --boot, sizes from 1 GiB to 4 TiB, metadata only, in both init modes.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_RUNS 5

/* A "VmRSS:   1234 kB" line of /proc/self/status, in bytes; 0 if unknown. */
static uint64_t status_bytes(const char *field)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	uint64_t v = 0;
	size_t n = strlen(field);
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, field, n) == 0 && line[n] == ':')
			v = strtoull(line + n + 1, NULL, 10) * 1024;
	fclose(f);
	return v;
}

struct boot_sample {
	double boot_ms, init_ms, shutdown_ms;
	uint64_t rss_boot, rss_init; /* resident growth after boot + first allocation, after init */
	uint64_t total_pages;
};

static uint64_t grown(uint64_t before)
{
	uint64_t now = status_bytes("VmRSS");
	return now > before ? now - before : 0;
}

static int boot_once(const char *line, struct boot_sample *s)
{
	struct pa_pool *pool;
	char err[512] = "";
	uint64_t rss0 = status_bytes("VmRSS");
	uint64_t t0 = bench_now_ns();
	int rc = pa_boot(line, NULL, &pool, err, sizeof err);
	if (rc) {
		fprintf(stderr, "pagealloc: boot \"%s\": %s\n", line, err);
		return -1;
	}
	struct pa_page *p = pa_alloc_pages(pool, PA_GFP_KERNEL, 0);
	uint64_t t1 = bench_now_ns();
	s->rss_boot = grown(rss0);
	pa_deferred_init_wait(pool);
	uint64_t t2 = bench_now_ns();
	s->rss_init = grown(rss0);
	struct pa_config cfg;
	pa_get_config(pool, &cfg);
	s->total_pages = cfg.total_pages;
	if (p)
		pa_free_pages(pool, p, 0);
	uint64_t t3 = bench_now_ns();
	pa_shutdown(pool);
	s->shutdown_ms = (double)(bench_now_ns() - t3) / 1e6;
	s->boot_ms = (double)(t1 - t0) / 1e6;
	s->init_ms = (double)(t2 - t0) / 1e6;
	return p ? 0 : -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Runs of one boot line; samples in ms[0..3*runs), the largest resident growths kept. */
static int boot_runs(const char *line, unsigned runs, double *ms, struct boot_sample *worst)
{
	*worst = (struct boot_sample){ 0 };
	for (unsigned r = 0; r < runs; r++) {
		struct boot_sample s;
		bench_progress_step(r, runs);
		if (boot_once(line, &s))
			return -1;
		ms[r] = s.boot_ms;
		ms[runs + r] = s.init_ms;
		ms[2 * runs + r] = s.shutdown_ms;
		worst->rss_boot = s.rss_boot > worst->rss_boot ? s.rss_boot : worst->rss_boot;
		worst->rss_init = s.rss_init > worst->rss_init ? s.rss_init : worst->rss_init;
		worst->total_pages = s.total_pages;
	}
	return 0;
}

static int boot_one_line(const struct bench_opts *opt, const char *line, unsigned runs, FILE *out)
{
	double *ms = calloc(3 * (size_t)runs, sizeof *ms);
	struct boot_sample s;
	if (!ms || boot_runs(line, runs, ms, &s)) {
		free(ms);
		return 1;
	}
	struct bench_out o;
	bench_out_begin(&o, out, opt->json, "boot");
	bench_out_str(&o, "boot", line);
	bench_out_u64(&o, "runs", runs);
	bench_out_u64(&o, "total_pages", s.total_pages);
	bench_out_metric(&o, "boot_ms", "ms for pa_boot and the first allocation", ms, runs);
	bench_out_metric(&o, "init_done_ms", "ms until deferred init is done", ms + runs, runs);
	bench_out_metric(&o, "shutdown_ms", "ms per pa_shutdown", ms + 2 * runs, runs);
	bench_out_u64(&o, "rss_boot_bytes", s.rss_boot);
	bench_out_u64(&o, "rss_init_bytes", s.rss_init);
	bench_out_f64(&o, "rss_init_bytes_per_frame",
	              s.total_pages ? (double)s.rss_init / (double)s.total_pages : 0);
	bench_out_end(&o);
	free(ms);
	return 0;
}

static double median_of(double *v, unsigned n)
{
	qsort(v, n, sizeof *v, cmp_double);
	return v[n / 2];
}

/* The table: sizes from 1 GiB to 4 TiB, deferred_init=1 and 0, metadata only. */
static int boot_sweep(const struct bench_opts *opt, unsigned runs, FILE *out)
{
	static const char *const sizes[] = { "1G", "4G", "16G", "64G", "256G", "1T", "4T" };
	double *ms = calloc(3 * (size_t)runs, sizeof *ms);
	int ret = !ms;
	if (opt->json)
		fprintf(out, "{\"workload\":\"boot\",\"runs\":%u,\"rows\":[", runs);
	else
		fprintf(out,
		        "boot: pa_boot + first allocation, and until deferred init is done "
		        "(median of %u runs, ms; resident growth, largest of the runs)\n"
		        "%-6s %-8s %12s %12s %12s %12s %10s\n",
		        runs, "mem", "deferred", "boot_ms", "init_ms", "rss_boot", "rss_init",
		        "B/frame");
	struct boot_sample warm;
	ret = ret ||
	      boot_once("mem=1G", &warm); /* the process's first boot pays for its own start */
	for (size_t i = 0; !ret && i < sizeof sizes / sizeof sizes[0]; i++) {
		for (int d = 1; !ret && d >= 0; d--) {
			char line[128];
			struct boot_sample s;
			snprintf(line, sizeof line, "mem=%s deferred_init=%d", sizes[i], d);
			ret = boot_runs(line, runs, ms, &s) != 0;
			if (ret)
				break;
			double boot = median_of(ms, runs), init = median_of(ms + runs, runs);
			double per = (double)s.rss_init / (double)s.total_pages;
			if (opt->json)
				fprintf(out,
				        "%s{\"mem\":\"%s\",\"deferred_init\":%d,\"boot_ms\":%.3f,"
				        "\"init_done_ms\":%.3f,\"rss_boot_bytes\":%llu,"
				        "\"rss_init_bytes\":%llu,\"rss_init_bytes_per_frame\":%.4f}",
				        i || d == 0 ? "," : "", sizes[i], d, boot, init,
				        (unsigned long long)s.rss_boot,
				        (unsigned long long)s.rss_init, per);
			else
				fprintf(out, "%-6s %-8d %12.3f %12.3f %10.1fMi %10.1fMi %10.4f\n",
				        sizes[i], d, boot, init, (double)s.rss_boot / 1048576.0,
				        (double)s.rss_init / 1048576.0, per);
		}
	}
	if (opt->json)
		fprintf(out, "]}\n");
	free(ms);
	return ret;
}

int bench_boot_time(const struct bench_opts *opt, struct pa_pool *given, FILE *out)
{
	if (given) {
		fprintf(stderr, "pagealloc: the boot workload boots pools of its own\n");
		return 1;
	}
	unsigned runs = opt->runs ? opt->runs : DEFAULT_RUNS;
	return opt->boot ? boot_one_line(opt, opt->boot, runs, out) : boot_sweep(opt, runs, out);
}
