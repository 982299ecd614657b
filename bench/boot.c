/* SPDX-License-Identifier: MIT */
/*
 * boot: how long pa_boot() and pa_shutdown() take, and what the pool costs
 * in memory per frame, measured from the process's peak resident set, not
 * from the arithmetic: a frame map that is reserved but never touched
 * costs nothing, and one that is touched twice over costs double.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define BOOT_DEFAULT "mem=64G"
#define DEFAULT_RUNS 5

/* A "VmHWM:   1234 kB" line of /proc/self/status, in bytes; 0 if unknown. */
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

static uint64_t maxrss_bytes(void)
{
	struct rusage ru;
	return getrusage(RUSAGE_SELF, &ru) ? 0 : (uint64_t)ru.ru_maxrss * 1024;
}

struct boot_sample {
	double boot_ms, shutdown_ms;
	uint64_t total_pages;
	unsigned metadata_bytes;
};

static int boot_once(const struct bench_opts *opt, struct boot_sample *s)
{
	struct pa_pool *pool;
	uint64_t t0 = bench_now_ns();
	if (bench_boot(opt, BOOT_DEFAULT, &pool))
		return -1;
	uint64_t t1 = bench_now_ns();
	struct pa_config cfg;
	pa_get_config(pool, &cfg);
	uint64_t t2 = bench_now_ns();
	pa_shutdown(pool);
	uint64_t t3 = bench_now_ns();
	s->boot_ms = (double)(t1 - t0) / 1e6;
	s->shutdown_ms = (double)(t3 - t2) / 1e6;
	s->total_pages = cfg.total_pages;
	s->metadata_bytes = cfg.metadata_bytes_per_frame;
	return 0;
}

static void boot_print(const struct bench_opts *opt, const double *boot_ms,
                       const double *shutdown_ms, unsigned runs, const struct boot_sample *s,
                       uint64_t hwm_delta, FILE *out)
{
	struct bench_out o;
	bench_out_begin(&o, out, opt->json, "boot");
	bench_out_str(&o, "boot", bench_boot_line(opt, BOOT_DEFAULT));
	bench_out_u64(&o, "runs", runs);
	bench_out_u64(&o, "total_pages", s->total_pages);
	bench_out_metric(&o, "boot_ms", "ms per pa_boot", boot_ms, runs);
	bench_out_metric(&o, "shutdown_ms", "ms per pa_shutdown", shutdown_ms, runs);
	bench_out_u64(&o, "metadata_bytes_per_frame", s->metadata_bytes);
	bench_out_u64(&o, "peak_rss_delta_bytes", hwm_delta);
	bench_out_f64(&o, "peak_rss_bytes_per_frame",
	              s->total_pages ? (double)hwm_delta / (double)s->total_pages : 0);
	bench_out_u64(&o, "ru_maxrss_bytes", maxrss_bytes());
	bench_out_end(&o);
}

int bench_boot_time(const struct bench_opts *opt, struct pa_pool *given, FILE *out)
{
	if (given) {
		fprintf(stderr, "pagealloc: the boot workload boots pools of its own\n");
		return 1;
	}
	unsigned runs = opt->runs ? opt->runs : DEFAULT_RUNS;
	double *ms = calloc(2 * (size_t)runs, sizeof *ms);
	struct boot_sample s = { 0 };
	uint64_t hwm_delta = 0;
	int ret = !ms;
	for (unsigned r = 0; !ret && r < runs; r++) {
		bench_progress_step(r, runs);
		/* The first boot sets the peak; later ones reuse freed memory. */
		uint64_t before = r == 0 ? status_bytes("VmHWM") : 0;
		ret = boot_once(opt, &s) != 0;
		if (r == 0) {
			uint64_t after = status_bytes("VmHWM");
			hwm_delta = after > before ? after - before : 0;
		}
		if (!ret) {
			ms[r] = s.boot_ms;
			ms[runs + r] = s.shutdown_ms;
		}
	}
	if (!ret)
		boot_print(opt, ms, ms + runs, runs, &s, hwm_delta, out);
	free(ms);
	return ret;
}
