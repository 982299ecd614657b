/* SPDX-License-Identifier: MIT */
/*
 * compact-copy: how fast compaction moves data, against what one thread's
 * memcpy can do on the same machine in the same run.
 *
 * A run:
 *   1. memcpy: copy a 256 MiB buffer into another, four times after one
 *      untimed copy (both buffers faulted in first): bytes / time.
 *   2. A backed pool is filled with movable owned folios of --folio-order K
 *      (default 0) carrying a pattern; every other folio in pfn order is
 *      freed, so free memory is all holes between folios.
 *   3. pa_compact(pool, -1), timed: compaction moves about half of what is
 *      left (the lower half into the upper half's holes), copying each
 *      folio's bytes before telling the owner. Its bandwidth is the bytes
 *      migrated (pgmigrate_success frames) / the time in pa_compact, which
 *      includes the scanners, the owner's callbacks and the locking.
 *   4. Every folio's pattern is checked.
 * ratio_pct = compaction's bandwidth / memcpy's. Goal: >= 30 %.
 */
#define _GNU_SOURCE
#include "compact_common.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define CC_BOOT   "mem=1G backing=anon"
#define CC_RUNS   5
#define CC_BUF    (256ull << 20)
#define CC_COPIES 4

enum cc_metric { CC_MEMCPY, CC_COMPACT, CC_RATIO, CC_MIGRATED, CC_SECONDS, CC_NR };

static const struct {
	const char *key, *unit;
} cc_metrics[CC_NR] = {
	[CC_MEMCPY] = { "memcpy_mib_per_s", "MiB/s, one thread" },
	[CC_COMPACT] = { "compact_mib_per_s", "MiB/s, bytes migrated / time in pa_compact" },
	[CC_RATIO] = { "ratio_pct", "% of memcpy" },
	[CC_MIGRATED] = { "pages_migrated", "pages" },
	[CC_SECONDS] = { "compact_seconds", "s" },
};

/* Single-thread memcpy bandwidth in MiB/s; 0 when the buffers cannot be had. */
static double cc_memcpy(void)
{
	char *a = malloc(CC_BUF), *b = malloc(CC_BUF);
	double mib_s = 0;
	if (a && b) {
		memset(a, 1, CC_BUF);
		memset(b, 2, CC_BUF);
		memcpy(b, a, CC_BUF); /* warm: TLB, page tables */
		uint64_t t0 = bench_now_ns();
		for (int i = 0; i < CC_COPIES; i++) {
			memcpy(i & 1 ? a : b, i & 1 ? b : a, CC_BUF);
			__asm__ volatile("" : : "r"(a), "r"(b) : "memory"); /* keep every copy */
		}
		double s = (double)(bench_now_ns() - t0) / 1e9;
		mib_s = (double)(CC_COPIES * CC_BUF) / (1 << 20) / s;
	}
	free(a);
	free(b);
	return mib_s;
}

/* Fill the pool, then free every other folio in pfn order. */
static void cc_layout(struct cw_owner *o, unsigned k)
{
	while (cw_alloc(o, PA_GFP_NOCOMPACT, k) != CW_NONE)
		;
	for (uint64_t s = 0; s < cw_nr_slots(o); s++) {
		pa_pfn_t pfn = cw_pfn(o, s);
		if (pfn != PA_PFN_INVALID && ((pfn >> k) & 1))
			cw_free(o, s);
	}
	pa_drain_all(o->pool);
}

/* Steps 2-4 on a fresh pool; v[] gets the compaction figures. */
static int cc_compact(const struct bench_opts *opt, const char *boot, unsigned k, double *v,
                      uint64_t *checked_total)
{
	struct pa_pool *pool;
	struct cw_owner o = { 0 };
	if (cw_boot(opt, boot, &pool))
		return -1;
	struct pa_config cfg;
	pa_get_config(pool, &cfg);
	int ret =
	        bench_check_order(pool, k) || cw_owner_init(&o, pool, (cfg.total_pages >> k) + 16);
	if (!ret && !o.backed) {
		fprintf(stderr, "pagealloc: compact-copy needs a backed pool (backing=anon)\n");
		ret = -1;
	}
	if (!ret) {
		cc_layout(&o, k);
		struct cw_counters before, after;
		cw_counters_read(pool, &before);
		uint64_t t0 = bench_now_ns();
		long moved = pa_compact(pool, -1);
		double s = (double)(bench_now_ns() - t0) / 1e9;
		cw_counters_read(pool, &after);
		cw_counters_sub(&after, &before);
		v[CC_MIGRATED] = (double)after.migrated;
		v[CC_SECONDS] = s;
		v[CC_COMPACT] = (double)(after.migrated * cfg.page_size) / (1 << 20) / s;
		uint64_t checked, bad = cw_verify(&o, &checked);
		*checked_total += checked;
		if (moved < 0 || bad)
			fprintf(stderr,
			        "pagealloc: compact-copy: pa_compact %ld, %" PRIu64
			        " folios corrupt\n",
			        moved, bad);
		ret = moved < 0 || bad;
	}
	pa_shutdown(pool);
	cw_owner_destroy(&o);
	return ret ? -1 : 0;
}

int bench_compact_copy(const struct bench_opts *opt, struct pa_pool *given, FILE *out)
{
	(void)given; /* own_pool */
	unsigned runs = opt->runs ? opt->runs : CC_RUNS;
	unsigned k = opt->folio_order < 0 ? 0 : (unsigned)opt->folio_order;
	char boot[512];
	cw_boot_line(opt, CC_BOOT, false, boot, sizeof boot);
	double *v[CC_NR];
	int ret = 0;
	uint64_t checked = 0;
	for (unsigned m = 0; m < CC_NR; m++)
		ret |= !(v[m] = calloc(runs, sizeof(double)));
	for (unsigned r = 0; !ret && r < runs; r++) {
		bench_progress_step(r, runs);
		double row[CC_NR] = { 0 };
		row[CC_MEMCPY] = cc_memcpy();
		ret = row[CC_MEMCPY] <= 0 || cc_compact(opt, boot, k, row, &checked);
		row[CC_RATIO] = row[CC_MEMCPY] > 0 ? row[CC_COMPACT] * 100 / row[CC_MEMCPY] : 0;
		for (unsigned m = 0; m < CC_NR; m++)
			v[m][r] = row[m];
	}
	if (!ret) {
		struct bench_out o;
		char data[64];
		bench_out_begin(&o, out, opt->json, "compact-copy");
		bench_out_str(&o, "boot", boot);
		bench_out_u64(&o, "folio_order", k);
		snprintf(data, sizeof data, "verified (%" PRIu64 " folios in %u runs)", checked,
		         runs);
		bench_out_str(&o, "data", data);
		for (unsigned m = 0; m < CC_NR; m++)
			bench_out_metric(&o, cc_metrics[m].key, cc_metrics[m].unit, v[m], runs);
		bench_out_end(&o);
	}
	for (unsigned m = 0; m < CC_NR; m++)
		free(v[m]);
	return ret ? 1 : 0;
}
