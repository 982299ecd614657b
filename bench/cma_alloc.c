/* SPDX-License-Identifier: MIT */
/*
 * cma-alloc: the goal: "pa_cma_alloc of 64 MiB from an area half
 * full of movable folios, at most 5 ms median, in a metadata-only pool".
 *
 * Each run boots a fresh pool with one CMA area and fills it with owned
 * order-0 movable folios until half of the area is borrowed. Movable
 * allocations borrow CMA only by Linux's balance rule (while the area holds
 * over half the zone's free memory), so the area fills as the rest of
 * memory runs out: by the time half of it is borrowed, free memory outside
 * it is about what the folios inside need to move to. Then one timed
 * pa_cma_alloc takes --nr frames (64 MiB) aligned to order 8 from the
 * start of the area, moving the folios in the way.
 */
#define _GNU_SOURCE
#include "compact_common.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define CA_BOOT    "mem=2G cma=128M kcompactd=manual"
#define CA_BYTES   (64ull << 20)
#define CA_ALIGN   8 /* Linux's CONFIG_CMA_ALIGNMENT */
#define CA_RUNS    9
#define CA_GOAL_MS 5.0

struct ca {
	const struct bench_opts *opt;
	unsigned runs, align;
	uint64_t nr; /* frames per allocation; 0 until the first pool says the page size */
	double *ms, *borrowed_pct, *moved, *free_outside_mib, *in_range;
	unsigned ok;
	struct pa_cma_info area;
};

static bool in_area(const struct pa_cma_info *a, pa_pfn_t pfn)
{
	return pfn >= a->start_pfn && pfn < a->start_pfn + a->nr_pages;
}

/* Slots of the owner's folios, split by where they lie. */
struct ca_slots {
	uint64_t *in, *out;
	uint64_t nr_in, nr_out;
};

/* Free n of the folios listed in v (of *nr), chosen at random; the rest stay listed. */
static void ca_free_random(struct cw_owner *o, uint64_t *v, uint64_t *nr, uint64_t n, uint64_t *rng)
{
	for (uint64_t i = 0; i < n && *nr; i++) {
		uint64_t k = bench_rand(rng) % *nr;
		cw_free(o, v[k]);
		v[k] = v[--*nr];
	}
}

/*
 * Fill memory with movable folios until the allocator refuses: by the
 * balance rule the area is borrowed last, so by then it is (nearly) full.
 * Then free a random half of the area's folios, so that it is half full
 * everywhere, not just in one half, and free folios outside it for the
 * moved ones to go to: half an area's worth. Returns the frames borrowed.
 */
static uint64_t ca_fill(struct cw_owner *o, const struct pa_cma_info *a, struct ca_slots *sl,
                        uint64_t seed, unsigned run)
{
	uint64_t rng = bench_seed_state(seed, run);
	for (uint64_t s; (s = cw_alloc(o, PA_GFP_USER_MOVABLE, 0)) != CW_NONE;) {
		if (in_area(a, cw_pfn(o, s)))
			sl->in[sl->nr_in++] = s;
		else
			sl->out[sl->nr_out++] = s;
	}
	uint64_t half = a->nr_pages / 2;
	ca_free_random(o, sl->in, &sl->nr_in, sl->nr_in > half ? sl->nr_in - half : 0, &rng);
	ca_free_random(o, sl->out, &sl->nr_out, half, &rng);
	return sl->nr_in;
}

/* Folios in the range the allocation will take: the first nr frames of the area (aligned). */
static uint64_t ca_in_range(struct cw_owner *o, const struct ca_slots *sl,
                            const struct pa_cma_info *a, uint64_t nr)
{
	uint64_t n = 0;
	for (uint64_t i = 0; i < sl->nr_in; i++)
		n += cw_pfn(o, sl->in[i]) < a->start_pfn + nr;
	return n;
}

static int ca_validate(struct pa_pool *pool)
{
	char err[512] = "";
	if (pa_validate(pool, err, sizeof err) == 0)
		return 0;
	fprintf(stderr, "pagealloc: cma-alloc: pa_validate: %s\n", err);
	return -1;
}

/* The timed allocation and its release; 0, or -1 when it failed. */
static int ca_measure(struct ca *c, struct pa_pool *pool, unsigned run)
{
	uint64_t t0 = bench_now_ns();
	struct pa_page *p = pa_cma_alloc(pool, 0, c->nr, c->align);
	c->ms[run] = (double)(bench_now_ns() - t0) / 1e6;
	if (!p) {
		fprintf(stderr,
		        "pagealloc: cma-alloc: run %u: pa_cma_alloc of %" PRIu64
		        " frames failed after %.2f ms\n",
		        run, c->nr, c->ms[run]);
		return -1;
	}
	c->ok++;
	return pa_cma_release(pool, 0, p, c->nr) == 0 ? 0 : -1;
}

static int ca_run(struct ca *c, unsigned run)
{
	struct pa_pool *pool;
	struct cw_owner o = { 0 };
	struct pa_usage u;
	if (bench_boot(c->opt, CA_BOOT, &pool))
		return -1;
	struct pa_config cfg;
	pa_get_config(pool, &cfg);
	pa_get_usage(pool, &u);
	struct ca_slots sl = { calloc(u.managed, sizeof *sl.in), calloc(u.managed, sizeof *sl.out),
		               0, 0 };
	int ret = pa_cma_get(pool, 0, &c->area) || !sl.in || !sl.out ? -1 : 0;
	if (ret)
		fprintf(stderr,
		        "pagealloc: cma-alloc: no cma= area on the boot line, or no memory\n");
	if (!c->nr)
		c->nr = CA_BYTES >> cfg.page_shift;
	ret = ret || cw_owner_init(&o, pool, u.managed);
	if (!ret) {
		uint64_t borrowed =
		        ca_fill(&o, &c->area, &sl, c->opt->seed_set ? c->opt->seed : 42, run);
		c->in_range[run] = (double)ca_in_range(&o, &sl, &c->area, c->nr);
		c->borrowed_pct[run] = 100.0 * (double)borrowed / (double)c->area.nr_pages;
		pa_get_usage(pool, &u);
		c->free_outside_mib[run] =
		        (double)((u.free + u.reserved - (c->area.nr_pages - borrowed))
		                 << cfg.page_shift) /
		        (1 << 20);
		ret = ca_measure(c, pool, run);
		c->moved[run] = (double)atomic_load(&o.moved);
		ret = ca_validate(pool) || ret;
	}
	pa_shutdown(pool);
	cw_owner_destroy(&o);
	free(sl.in);
	free(sl.out);
	return ret;
}

static void ca_print(struct ca *c, FILE *f)
{
	struct bench_out o;
	struct bench_summary s;
	bench_summarize(c->ms, c->runs, &s);
	bench_out_begin(&o, f, c->opt->json, "cma-alloc");
	bench_out_str(&o, "boot", bench_boot_line(c->opt, CA_BOOT));
	bench_out_u64(&o, "area_frames", c->area.nr_pages);
	bench_out_u64(&o, "area_reserved_bytes", c->area.reserved_bytes);
	bench_out_u64(&o, "nr_frames", c->nr);
	bench_out_u64(&o, "align_order", c->align);
	bench_out_u64(&o, "runs", c->runs);
	bench_out_u64(&o, "succeeded", c->ok);
	bench_out_metric(&o, "borrowed_pct", "% of the area held by movable folios before",
	                 c->borrowed_pct, c->runs);
	bench_out_metric(&o, "free_outside_mib", "MiB free outside the area before",
	                 c->free_outside_mib, c->runs);
	bench_out_metric(&o, "folios_in_range", "folios in the first nr_frames of the area before",
	                 c->in_range, c->runs);
	bench_out_metric(&o, "folios_moved", "folios moved out by the allocation", c->moved,
	                 c->runs);
	bench_out_metric(&o, "latency_ms", "ms per pa_cma_alloc", c->ms, c->runs);
	bench_out_str(&o, "goal",
	              s.median <= CA_GOAL_MS ? "met (median <= 5 ms)" : "missed (median > 5 ms)");
	bench_out_end(&o);
}

int bench_cma_alloc(const struct bench_opts *opt, struct pa_pool *given, FILE *out)
{
	(void)given; /* own_pool: a fresh pool per run */
	struct ca c = { .opt = opt, .nr = opt->nr };
	c.runs = opt->runs ? opt->runs : CA_RUNS;
	c.align = opt->order >= 0 ? (unsigned)opt->order : CA_ALIGN;
	c.ms = calloc(c.runs, sizeof *c.ms);
	c.borrowed_pct = calloc(c.runs, sizeof *c.borrowed_pct);
	c.moved = calloc(c.runs, sizeof *c.moved);
	c.free_outside_mib = calloc(c.runs, sizeof *c.free_outside_mib);
	c.in_range = calloc(c.runs, sizeof *c.in_range);
	int ret = !c.ms || !c.borrowed_pct || !c.moved || !c.free_outside_mib || !c.in_range;
	for (unsigned r = 0; !ret && r < c.runs; r++) {
		bench_progress_step(r, c.runs);
		ret = ca_run(&c, r);
	}
	if (!ret)
		ca_print(&c, out);
	free(c.ms);
	free(c.borrowed_pct);
	free(c.moved);
	free(c.free_outside_mib);
	free(c.in_range);
	return ret ? 1 : 0;
}
