/* SPDX-License-Identifier: MIT */
/*
 * highalloc-frag: Nitin Gupta's layout (the kernel selftest compaction_test),
 * then huge blocks until the allocator says no (shared/reference/workloads.md).
 *
 * A run, on a fresh pool:
 *   1. Fill. Movable owned folios of --folio-order K (default 0) are
 *      allocated until the pool is full (min_free_kbytes=0 meanwhile, so
 *      that no reserve stays whole), each with a pattern in a backed pool.
 *   2. Unmovable pages (--unmovable-pct P). P % of the folios that will
 *      stay are freed, spread evenly over the pool, and as many frames of
 *      unmovable PA_GFP_KERNEL order-0 pages allocated: nothing else is
 *      free, so they land exactly there, scattered as on a long-running
 *      server, where they are what keeps large blocks from forming.
 *   3. Fragment. Of every 32 folios in pfn order, 7 are freed, spread
 *      evenly (unit u when 7u mod 32 < 7): 7/32 of memory is free and every
 *      pageblock holds the same share of it (with K = 4, 7 of its 32
 *      folios); the rest is the movable remainder. This is the selftest's
 *      state after it frees a quarter of the 28/32 it filled, without the
 *      4/32 it never touched, which would sit in whole free blocks and
 *      count for nothing.
 *   4. Allocate. The reserve is restored; then blocks of --order (default
 *      9; 18 in a 16 GiB pool for 1 GiB) are allocated, movable, until one
 *      fails. Direct compaction in the slow path does the work; each call
 *      is timed.
 *
 * success_pct = frames in the blocks obtained / frames free before step 4.
 * Above the pageblock order a block is an aligned region emptied whole, so
 * regions are counted too: eligible (inside a zone, no unmovable frame),
 * obtainable (eligible ones that the zone's free memory could fill: per
 * zone, min(eligible, (free - min watermark) >> order)), and
 * region_success_pct = blocks / obtainable.
 *
 * The blocks obtained are given no owner: nothing will move them, as
 * compaction leaves folios of the order it works for alone anyway.
 */
#define _GNU_SOURCE
#include "compact_common.h"
#include "movable.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define HF_BOOT_SMALL "mem=1G"
#define HF_BOOT_LARGE "mem=16G max_order=%u" /* orders above 10 */
#define HF_RUNS       5
#define HF_FREE_NUM   7 /* 7/32 of memory free, scattered */
#define HF_FREE_DEN   32
#define HF_MAX_ZONES  16

struct hf {
	const struct bench_opts *opt;
	unsigned order, folio_order, runs;
	unsigned pageblock_order; /* of the pools booted */
	double unmovable_pct;
	char def_boot[64];
};

/* The state of one run. */
struct hf_run {
	struct hf *c;
	struct pa_pool *pool;
	struct pa_config cfg;
	struct cw_owner owner;
	uint64_t *by_unit; /* [pfn >> K]: slot + 1 of the folio there, 0 when none */
	uint64_t nr_units;
	struct pa_page **unmovable;
	uint64_t nr_unmovable;
	struct pa_page **blocks;
	uint64_t nr_blocks;
	double *lat;
	uint64_t nr_lat, free_before, eligible, obtainable;
};

/* ---------------------------------------------------------------------- */
/* Layout                                                                  */
/* ---------------------------------------------------------------------- */

static bool hf_hole(uint64_t unit)
{
	return unit * HF_FREE_NUM % HF_FREE_DEN < HF_FREE_NUM;
}

/* Fill the pool with owned folios; index them by where they are. */
static int hf_fill(struct hf_run *r)
{
	unsigned k = r->c->folio_order;
	while (cw_alloc(&r->owner, PA_GFP_NOCOMPACT, k) != CW_NONE)
		;
	r->nr_units = r->cfg.total_pages >> k;
	r->by_unit = calloc(r->nr_units, sizeof *r->by_unit);
	if (!r->by_unit)
		return -1;
	for (uint64_t s = 0; s < cw_nr_slots(&r->owner); s++) {
		pa_pfn_t pfn = cw_pfn(&r->owner, s);
		if (pfn != PA_PFN_INVALID)
			r->by_unit[pfn >> k] = s + 1;
	}
	return 0;
}

/* Is the r-th remaining folio (in pfn order) one of the P % that turn unmovable? */
static bool hf_pick(uint64_t rank, double pct)
{
	return (uint64_t)((double)(rank + 1) * pct / 100) > (uint64_t)((double)rank * pct / 100);
}

/* Step 2: swap P % of the remainder, spread evenly, for unmovable order-0 pages. */
static int hf_unmovable(struct hf_run *r)
{
	uint64_t frames = 0, rank = 0;
	for (uint64_t u = 0; u < r->nr_units && r->c->unmovable_pct > 0; u++) {
		if (!r->by_unit[u] || hf_hole(u) || !hf_pick(rank++, r->c->unmovable_pct))
			continue;
		cw_free(&r->owner, r->by_unit[u] - 1);
		r->by_unit[u] = 0;
		frames += 1ull << r->c->folio_order;
	}
	if (!frames)
		return 0;
	pa_drain_all(r->pool); /* the frames freed wait on per-CPU movable lists otherwise */
	r->unmovable = calloc(frames, sizeof *r->unmovable);
	if (!r->unmovable)
		return -1;
	const pa_gfp_t gfp = PA_GFP_KERNEL | PA_GFP_NOWARN | PA_GFP_NOCOMPACT;
	while (r->nr_unmovable < frames &&
	       (r->unmovable[r->nr_unmovable] = pa_alloc_pages(r->pool, gfp, 0)))
		r->nr_unmovable++;
	return 0;
}

/* Step 3: free 7 of every 32 folios, spread evenly. */
static void hf_fragment(struct hf_run *r)
{
	for (uint64_t u = 0; u < r->nr_units; u++) {
		if (r->by_unit[u] && hf_hole(u)) {
			cw_free(&r->owner, r->by_unit[u] - 1);
			r->by_unit[u] = 0;
		}
	}
}

/* ---------------------------------------------------------------------- */
/* Regions above the pageblock order                                       */
/* ---------------------------------------------------------------------- */

/*
 * Regions of 2^order frames inside one zone with no unmovable page, and
 * how many of them the zone's free memory could fill: a region emptied
 * needs its own free frames plus its movable ones' worth outside it, all
 * from the same zone, and the allocation leaves the min watermark free.
 */
static int hf_regions(struct hf_run *r)
{
	struct pa_zone_info zone[HF_MAX_ZONES];
	int nz = bench_zones(r->pool, zone, HF_MAX_ZONES);
	unsigned order = r->c->order;
	uint64_t size = 1ull << order, nr = (r->cfg.total_pages >> order) + 1;
	uint8_t *fixed = calloc(nr, 1);
	if (nz < 0 || !fixed) {
		free(fixed);
		return -1;
	}
	for (uint64_t i = 0; i < r->nr_unmovable; i++)
		fixed[pa_page_to_pfn(r->pool, r->unmovable[i]) >> order] = 1;
	for (int i = 0; i < nz; i++) {
		uint64_t eligible = 0;
		for (pa_pfn_t s = (zone[i].start_pfn + size - 1) & ~(size - 1);
		     s + size <= zone[i].end_pfn; s += size)
			eligible += !fixed[s >> order];
		uint64_t fit = zone[i].free > zone[i].watermark_min ?
		                       (zone[i].free - zone[i].watermark_min) >> order :
		                       0;
		r->eligible += eligible;
		r->obtainable += eligible < fit ? eligible : fit;
	}
	free(fixed);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* A run                                                                   */
/* ---------------------------------------------------------------------- */

/* Step 4: blocks of the order until one fails, each call timed. */
static int hf_allocate(struct hf_run *r)
{
	uint64_t cap = (r->free_before >> r->c->order) + 1;
	r->blocks = calloc(cap, sizeof *r->blocks);
	r->lat = calloc(cap + 1, sizeof *r->lat);
	if (!r->blocks || !r->lat)
		return -1;
	const pa_gfp_t gfp = PA_GFP_MOVABLE | PA_GFP_COMP | PA_GFP_NOWARN;
	for (;;) {
		uint64_t t0 = bench_now_ns();
		struct pa_page *p = pa_alloc_pages(r->pool, gfp, r->c->order);
		r->lat[r->nr_lat++] = (double)(bench_now_ns() - t0);
		if (!p)
			return 0;
		r->blocks[r->nr_blocks++] = p;
		if (r->nr_blocks == cap) {
			fprintf(stderr,
			        "pagealloc: highalloc-frag: more blocks than free memory\n");
			return -1;
		}
	}
}

/* Steps 1-3, with the reserve off meanwhile; then the free frames counted. */
static int hf_layout(struct hf_run *r)
{
	uint64_t min_free;
	if (cw_ctl_set(r->pool, "min_free_kbytes", 0, &min_free) || hf_fill(r) || hf_unmovable(r))
		return -1;
	hf_fragment(r);
	if (cw_ctl_set(r->pool, "min_free_kbytes", min_free, NULL))
		return -1;
	pa_drain_all(r->pool);
	struct pa_usage u;
	pa_get_usage(r->pool, &u);
	r->free_before = u.free;
	return hf_regions(r);
}

static int hf_check(struct hf_run *r, struct cw_result *res)
{
	uint64_t checked, bad = cw_verify(&r->owner, &checked);
	res->backed = r->owner.backed;
	res->data_checked += checked;
	res->data_bad += bad;
	char err[512] = "";
	if (pa_validate(r->pool, err, sizeof err)) {
		fprintf(stderr, "pagealloc: highalloc-frag: pa_validate: %s\n", err);
		return -1;
	}
	return bad ? -1 : 0;
}

static void hf_record(struct hf_run *r, struct cw_result *res, unsigned run,
                      const struct cw_counters *c, double seconds)
{
	struct cw_latency lat;
	cw_latency(r->lat, r->nr_lat, &lat);
	cw_result_common(res, run, &lat, c);
	double **v = res->samples;
	uint64_t got = r->nr_blocks << r->c->order;
	v[CW_SUCCESS_PCT][run] = r->free_before ? (double)got * 100 / (double)r->free_before : 0;
	v[CW_ATTEMPTS][run] = (double)r->nr_lat;
	v[CW_BLOCKS][run] = (double)r->nr_blocks;
	v[CW_FREE_BEFORE][run] = (double)r->free_before;
	v[CW_UNMOVABLE][run] = (double)r->nr_unmovable;
	v[CW_REGIONS_ELIGIBLE][run] = (double)r->eligible;
	v[CW_REGIONS_OBTAINABLE][run] = (double)r->obtainable;
	v[CW_REGION_SUCCESS_PCT][run] =
	        r->obtainable ? (double)r->nr_blocks * 100 / (double)r->obtainable : 0;
	v[CW_ELAPSED_MS][run] = seconds * 1e3;
}

static void hf_run_free(struct hf_run *r)
{
	if (r->pool)
		pa_shutdown(r->pool);
	cw_owner_destroy(&r->owner);
	free(r->by_unit);
	free(r->unmovable);
	free(r->blocks);
	free(r->lat);
}

static int hf_run(struct hf *c, struct cw_result *res, unsigned run)
{
	struct hf_run r = { .c = c };
	int ret = cw_boot(c->opt, res->boot, &r.pool);
	if (!ret) {
		pa_get_config(r.pool, &r.cfg);
		c->pageblock_order = r.cfg.pageblock_order;
		ret = bench_check_order(r.pool, c->order) ||
		      bench_check_order(r.pool, c->folio_order) ||
		      cw_owner_init(&r.owner, r.pool, (r.cfg.total_pages >> c->folio_order) + 16) ||
		      hf_layout(&r);
	}
	if (!ret) {
		struct cw_counters before, after;
		cw_counters_read(r.pool, &before);
		uint64_t t0 = bench_now_ns();
		ret = hf_allocate(&r);
		double seconds = (double)(bench_now_ns() - t0) / 1e9;
		cw_counters_read(r.pool, &after);
		cw_counters_sub(&after, &before);
		hf_record(&r, res, run, &after, seconds);
		ret = ret || hf_check(&r, res);
	}
	hf_run_free(&r);
	return ret ? -1 : 0;
}

/* ---------------------------------------------------------------------- */
/* Output                                                                  */
/* ---------------------------------------------------------------------- */

/* Region figures only where a block is a region emptied whole: above the pageblock order. */
static unsigned hf_mask(const struct hf *c)
{
	unsigned mask = CW_BASE_MASK | CW_BIT(FREE_BEFORE) | CW_BIT(ELAPSED_MS);
	if (c->unmovable_pct > 0)
		mask |= CW_BIT(UNMOVABLE);
	if (c->order > c->pageblock_order)
		mask |= CW_BIT(REGIONS_ELIGIBLE) | CW_BIT(REGIONS_OBTAINABLE) |
		        CW_BIT(REGION_SUCCESS_PCT);
	return mask;
}

static void hf_print(const struct hf *c, const struct cw_result *res, unsigned nr, FILE *out)
{
	struct bench_out o;
	bench_out_begin(&o, out, c->opt->json, "highalloc-frag");
	bench_out_u64(&o, "order", c->order);
	bench_out_u64(&o, "folio_order", c->folio_order);
	char pct[32]; /* as given: 0.0002 must not print as 0.00 */
	snprintf(pct, sizeof pct, "%g", c->unmovable_pct);
	if (o.json)
		bench_out_json(&o, "unmovable_pct", pct);
	else
		bench_out_str(&o, "unmovable_pct", pct);
	bench_out_u64(&o, "runs", c->runs);
	cw_print(&o, res, nr, hf_mask(c), "highalloc-frag");
	bench_out_end(&o);
}

static int hf_setup(struct hf *c, const struct bench_opts *opt)
{
	*c = (struct hf){ .opt = opt };
	c->order = opt->order < 0 ? 9 : (unsigned)opt->order;
	c->folio_order = opt->folio_order < 0 ? 0 : (unsigned)opt->folio_order;
	c->runs = opt->runs ? opt->runs : HF_RUNS;
	c->unmovable_pct = opt->unmovable_pct < 0 ? 0 : opt->unmovable_pct;
	if (c->order > 10)
		snprintf(c->def_boot, sizeof c->def_boot, HF_BOOT_LARGE, c->order);
	else
		snprintf(c->def_boot, sizeof c->def_boot, "%s", HF_BOOT_SMALL);
	if (c->folio_order >= c->order) {
		fprintf(stderr,
		        "pagealloc: highalloc-frag: --folio-order %u must be below --order %u "
		        "(compaction leaves folios of the order it works for alone)\n",
		        c->folio_order, c->order);
		return -1;
	}
	return 0;
}

int bench_highalloc_frag(const struct bench_opts *opt, struct pa_pool *given, FILE *out)
{
	(void)given; /* own_pool: it boots one pool per run */
	struct hf c;
	struct cw_result res[2];
	unsigned nr = opt->compare ? 2 : 1;
	if (hf_setup(&c, opt))
		return 1;
	int ret = 0;
	/* With --compare, res[0] is the old mode and res[1] the default, runs interleaved. */
	for (unsigned i = 0; i < nr; i++) {
		ret |= cw_result_init(&res[i], nr == 2 && i == 0 ? "split_folios" : "default",
		                      c.runs);
		cw_boot_line(opt, c.def_boot, nr == 2 && i == 0, res[i].boot, sizeof res[i].boot);
	}
	for (unsigned run = 0; !ret && run < c.runs; run++)
		for (unsigned i = 0; !ret && i < nr; i++) {
			bench_progress_step(run * nr + i, c.runs * nr);
			ret = hf_run(&c, &res[i], run);
		}
	if (!ret)
		hf_print(&c, res, nr, out);
	for (unsigned i = 0; i < nr; i++)
		cw_result_free(&res[i]);
	return ret ? 1 : 0;
}
