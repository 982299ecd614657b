/* SPDX-License-Identifier: MIT */
/*
 * thpcompact: mmtests' THP compaction workload reduced to allocator
 * operations (shared/reference/workloads.md).
 *
 * Each thread, on a pool of its own per run (--threads share it), in four
 * phases that all threads finish before the next begins:
 *   1. Fault: its share of memory (managed / threads, whole 2 MiB steps) in
 *      movable owned folios of --folio-order K (default 0), each with a
 *      pattern in a backed pool, as anonymous memory faulted without THP.
 *   2. Punch: free the first half of every 2 MiB of its region (folios
 *      counted in the order they were faulted, as addresses).
 *   3. Page cache: allocate half as many frames as were punched in movable
 *      owned order-0 folios. The buddy hands out the smallest free blocks
 *      first, so these fill holes; half of the punched memory stays free,
 *      all of it in holes (nothing here reclaims, so filling them all
 *      would leave nothing to allocate).
 *   4. Huge: allocate blocks of the huge order (--order, default the
 *      pool's huge order) as THP faults would, movable with direct
 *      compaction, falling back to 2^order order-0 owned folios when a
 *      block fails; stop when the fallback fails too. Each block's
 *      allocation call is timed.
 *
 * success_pct = huge blocks / attempts. Scanned, migrated and the folio
 * counts are the vmstat deltas over phase 4.
 */
#define _GNU_SOURCE
#include "compact_common.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define TC_BOOT           "mem=1G"
#define TC_RUNS           5
#define TC_CACHE_PER_HOLE 2 /* page cache refills 1/2 of the punched frames */

struct tc {
	const struct bench_opts *opt;
	unsigned threads, order, folio_order, runs;
};

struct tc_thread {
	struct cw_owner *owner;
	struct pa_pool *pool;
	unsigned order, folio_order;
	uint64_t region;     /* frames to fault */
	uint64_t *slots, nr; /* the region's folios, in fault order */
	uint64_t punched;    /* frames freed in phase 2 */
	uint64_t attempts, huge;
	struct pa_page **blocks;
	double *lat;  /* [attempt] */
	uint64_t cap; /* attempts at most */
	bool failed;
};

/* ---------------------------------------------------------------------- */
/* The phases                                                              */
/* ---------------------------------------------------------------------- */

static void *tc_fault(void *arg)
{
	struct tc_thread *t = arg;
	uint64_t n = t->region >> t->folio_order;
	while (t->nr < n) {
		uint64_t s = cw_alloc(t->owner, PA_GFP_NOCOMPACT, t->folio_order);
		if (s == CW_NONE)
			break;
		t->slots[t->nr++] = s;
	}
	return NULL;
}

static void *tc_punch(void *arg)
{
	struct tc_thread *t = arg;
	uint64_t per_2m = 1ull << (t->order - t->folio_order); /* folios per huge block */
	for (uint64_t i = 0; i < t->nr; i++) {
		if (i % per_2m < per_2m / 2) {
			cw_free(t->owner, t->slots[i]);
			t->punched += 1ull << t->folio_order;
		}
	}
	return NULL;
}

static void *tc_cache(void *arg)
{
	struct tc_thread *t = arg;
	for (uint64_t i = 0; i < t->punched / TC_CACHE_PER_HOLE; i++)
		if (cw_alloc(t->owner, PA_GFP_NOCOMPACT, 0) == CW_NONE)
			break;
	return NULL;
}

/* A huge block failed: fault its range in order-0 folios. False when memory ran out. */
static bool tc_fallback(struct tc_thread *t)
{
	for (uint64_t i = 0; i < (1ull << t->order); i++)
		if (cw_alloc(t->owner, 0, 0) == CW_NONE)
			return false;
	return true;
}

static void *tc_huge(void *arg)
{
	struct tc_thread *t = arg;
	const pa_gfp_t gfp = PA_GFP_MOVABLE | PA_GFP_COMP | PA_GFP_NOWARN;
	while (t->attempts < t->cap) {
		uint64_t t0 = bench_now_ns();
		struct pa_page *p = pa_alloc_pages(t->pool, gfp, t->order);
		t->lat[t->attempts++] = (double)(bench_now_ns() - t0);
		if (p)
			t->blocks[t->huge++] = p;
		else if (!tc_fallback(t))
			break;
	}
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* A run                                                                   */
/* ---------------------------------------------------------------------- */

static int tc_threads_init(const struct tc *c, struct pa_pool *pool, struct cw_owner *owner,
                           struct tc_thread *t)
{
	struct pa_usage u;
	pa_get_usage(pool, &u);
	uint64_t step = 1ull << c->order;
	uint64_t region = u.managed / c->threads / step * step;
	for (unsigned i = 0; i < c->threads; i++) {
		t[i] = (struct tc_thread){ .owner = owner,
			                   .pool = pool,
			                   .order = c->order,
			                   .folio_order = c->folio_order,
			                   .region = region,
			                   .cap = (u.managed >> c->order) + 1 };
		t[i].slots = calloc((region >> c->folio_order) + 1, sizeof *t[i].slots);
		t[i].blocks = calloc(t[i].cap, sizeof *t[i].blocks);
		t[i].lat = calloc(t[i].cap, sizeof *t[i].lat);
		if (!t[i].slots || !t[i].blocks || !t[i].lat)
			return -1;
	}
	return 0;
}

static void tc_threads_free(const struct tc *c, struct tc_thread *t)
{
	for (unsigned i = 0; i < c->threads; i++) {
		free(t[i].slots);
		free(t[i].blocks);
		free(t[i].lat);
	}
}

/* Every thread's latencies in one array, summarized; the attempts and blocks summed. */
static int tc_record(const struct tc *c, struct tc_thread *t, struct cw_result *res, unsigned run,
                     const struct cw_counters *cnt)
{
	uint64_t n = 0, huge = 0, k = 0;
	for (unsigned i = 0; i < c->threads; i++) {
		n += t[i].attempts;
		huge += t[i].huge;
	}
	double *all = calloc(n + 1, sizeof *all);
	if (!all)
		return -1;
	for (unsigned i = 0; i < c->threads; i++)
		for (uint64_t a = 0; a < t[i].attempts; a++)
			all[k++] = t[i].lat[a];
	struct cw_latency lat;
	cw_latency(all, n, &lat);
	free(all);
	cw_result_common(res, run, &lat, cnt);
	res->samples[CW_SUCCESS_PCT][run] = n ? (double)huge * 100 / (double)n : 0;
	res->samples[CW_ATTEMPTS][run] = (double)n;
	res->samples[CW_BLOCKS][run] = (double)huge;
	return 0;
}

static int tc_check(struct pa_pool *pool, struct cw_owner *owner, struct cw_result *res)
{
	uint64_t checked, bad = cw_verify(owner, &checked);
	res->backed = owner->backed;
	res->data_checked += checked;
	res->data_bad += bad;
	char err[512] = "";
	if (pa_validate(pool, err, sizeof err)) {
		fprintf(stderr, "pagealloc: thpcompact: pa_validate: %s\n", err);
		return -1;
	}
	return bad ? -1 : 0;
}

/* Phases 1-3, then phase 4 between two reads of the counters. */
static int tc_phases(const struct tc *c, struct pa_pool *pool, struct tc_thread *t,
                     struct cw_result *res, unsigned run)
{
	void *(*const setup[])(void *) = { tc_fault, tc_punch, tc_cache };
	for (size_t i = 0; i < sizeof setup / sizeof setup[0]; i++)
		if (bench_parallel(c->threads, setup[i], t, sizeof *t))
			return -1;
	struct cw_counters before, after;
	cw_counters_read(pool, &before);
	if (bench_parallel(c->threads, tc_huge, t, sizeof *t))
		return -1;
	cw_counters_read(pool, &after);
	cw_counters_sub(&after, &before);
	return tc_record(c, t, res, run, &after);
}

static int tc_run(const struct tc *c, struct cw_result *res, unsigned run)
{
	struct pa_pool *pool;
	struct cw_owner owner = { 0 };
	if (cw_boot(c->opt, res->boot, &pool))
		return -1;
	struct pa_config cfg;
	pa_get_config(pool, &cfg);
	struct tc_thread *t = calloc(c->threads, sizeof *t);
	/* Slots: the region, the page cache, the fallbacks: never more than twice the frames. */
	int ret = !t || bench_check_order(pool, c->order) ||
	          cw_owner_init(&owner, pool, 2 * cfg.total_pages + 1024) ||
	          tc_threads_init(c, pool, &owner, t);
	if (!ret)
		ret = tc_phases(c, pool, t, res, run) || tc_check(pool, &owner, res);
	if (t)
		tc_threads_free(c, t);
	free(t);
	pa_shutdown(pool);
	cw_owner_destroy(&owner);
	return ret ? -1 : 0;
}

/* ---------------------------------------------------------------------- */
/* Setup and output                                                        */
/* ---------------------------------------------------------------------- */

/* The huge order: --order, or the pool's (9 at 4 KiB pages), asked of a pool booted once. */
static int tc_setup(struct tc *c, const struct bench_opts *opt)
{
	*c = (struct tc){ .opt = opt };
	c->threads = opt->threads ? opt->threads : 1;
	c->runs = opt->runs ? opt->runs : TC_RUNS;
	c->folio_order = opt->folio_order < 0 ? 0 : (unsigned)opt->folio_order;
	c->order = (unsigned)opt->order;
	if (opt->order < 0) {
		struct pa_pool *pool;
		if (bench_boot(opt, TC_BOOT, &pool))
			return -1;
		struct pa_config cfg;
		pa_get_config(pool, &cfg);
		pa_shutdown(pool);
		c->order = cfg.huge_order >= 0 ? (unsigned)cfg.huge_order : cfg.pageblock_order;
	}
	if (c->folio_order >= c->order || c->order < 1) {
		fprintf(stderr,
		        "pagealloc: thpcompact: --folio-order %u must be below the huge order %u\n",
		        c->folio_order, c->order);
		return -1;
	}
	return 0;
}

static void tc_print(const struct tc *c, const struct cw_result *res, unsigned nr, FILE *out)
{
	struct bench_out o;
	bench_out_begin(&o, out, c->opt->json, "thpcompact");
	bench_out_u64(&o, "order", c->order);
	bench_out_u64(&o, "folio_order", c->folio_order);
	bench_out_u64(&o, "threads", c->threads);
	bench_out_u64(&o, "runs", c->runs);
	cw_print(&o, res, nr, CW_BASE_MASK, "thpcompact");
	bench_out_end(&o);
}

int bench_thpcompact(const struct bench_opts *opt, struct pa_pool *given, FILE *out)
{
	(void)given; /* own_pool: it boots one pool per run */
	struct tc c;
	struct cw_result res[2];
	unsigned nr = opt->compare ? 2 : 1;
	if (tc_setup(&c, opt))
		return 1;
	int ret = 0;
	/* With --compare, res[0] is the old mode and res[1] the default, runs interleaved. */
	for (unsigned i = 0; i < nr; i++) {
		ret |= cw_result_init(&res[i], nr == 2 && i == 0 ? "split_folios" : "default",
		                      c.runs);
		cw_boot_line(opt, TC_BOOT, nr == 2 && i == 0, res[i].boot, sizeof res[i].boot);
	}
	for (unsigned run = 0; !ret && run < c.runs; run++)
		for (unsigned i = 0; !ret && i < nr; i++) {
			bench_progress_step(run * nr + i, c.runs * nr);
			ret = tc_run(&c, &res[i], run);
		}
	if (!ret)
		tc_print(&c, res, nr, out);
	for (unsigned i = 0; i < nr; i++)
		cw_result_free(&res[i]);
	return ret ? 1 : 0;
}
