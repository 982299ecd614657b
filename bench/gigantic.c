/* SPDX-License-Identifier: MIT */
/*
 * gigantic: 1 GiB allocations in a fragmented pool of movable folios, two
 * ways side by side:
 *  - buddy:  pa_alloc_pages(order 18) on a pool booted with max_order=18;
 *            direct compaction empties the cheapest aligned region;
 *  - contig: pa_alloc_contig_pages(262144 frames) with max_order=10, as
 *            Linux allocates gigantic hugetlb pages at run time.
 *
 * Each run boots a pool (kcompactd=manual: nothing moves behind our back),
 * fills it with owned order-0 movable folios, frees a random share of them
 * so that what is left (--fill-pct) is scattered everywhere, then allocates
 * a few unmovable pages (--unmovable-pct) and pins some folios
 * (--pinned-pct): those, where they land, are what make a region ineligible.
 *
 * Eligible regions are counted here, from the workload's own records:
 * aligned block-sized ranges inside one zone with no unmovable or pinned
 * frame. Then blocks are allocated until one attempt fails. A failure while
 * an eligible region was left whose movable frames fit in the zone's free
 * frames outside it is a miss: the goal is none.
 */
#define _GNU_SOURCE
#include "compact_common.h"
#include "movable.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define GIG_BOOT          "mem=8G"
#define GIG_ORDER         18 /* 1 GiB at 4 KiB pages */
#define GIG_CONTIG_MAX    10 /* max_order of the contig way, as Linux's default */
#define GIG_FILL_PCT      15.0
#define GIG_UNMOVABLE_PCT 0.02
#define GIG_RUNS          3
#define GIG_MAX_ZONES     16

enum gig_way { GIG_BUDDY, GIG_CONTIG, GIG_WAYS };

static const char *const way_name[GIG_WAYS] = { "buddy", "contig" };

/* A block-sized aligned region of the pool. */
struct gig_region {
	int zone; /* -1: straddles zones or lies outside them */
	uint64_t unmovable, pinned, movable, taken;
};

/* What one run leaves; the samples of all runs of a way are pooled. */
struct gig_result {
	uint64_t regions;
	uint64_t *eligible, *obtained, *misses; /* [run] */
	double *ok_ns;                          /* latency of successful allocations, all runs */
	uint64_t nr_ok;
	double *fail_ns; /* latency of the failed (last) attempt of each run */
	uint64_t nr_fail;
	uint64_t moved;          /* folios moved by all runs */
	struct gig_region *last; /* [region]: the census at the end of the last run */
	char boot[512];
};

/* One run's pool and records. */
struct gig_run {
	struct pa_pool *pool;
	struct cw_owner owner;
	struct pa_zone_info zones[GIG_MAX_ZONES];
	int nr_zones;
	unsigned order;
	struct pa_page **unmovable; /* the unmovable pages held */
	pa_pfn_t *blocks;
	uint64_t nr_unmovable, nr_blocks, max_blocks;
	struct gig_region *region;
	uint64_t nr_regions;
	uint64_t rng;
};

struct gig {
	const struct bench_opts *opt;
	unsigned order, runs;
	double fill_pct, unmovable_pct, transient_pct, pinned_pct;
	uint64_t seed;
	struct gig_result res[GIG_WAYS];
};

/* ---------------------------------------------------------------------- */
/* Setup: fill, fragment, pin, place unmovable pages                        */
/* ---------------------------------------------------------------------- */

static bool chance(uint64_t *rng, double pct)
{
	return (double)(bench_rand(rng) >> 11) * (100.0 / 9007199254740992.0) < pct;
}

/* Fill the pool with order-0 movable folios until an allocation fails (at the watermark). */
static void gig_fill(struct gig_run *r)
{
	while (cw_alloc(&r->owner, PA_GFP_USER_MOVABLE, 0) != CW_NONE)
		;
}

/* A random order of the slots (Fisher-Yates), so that frees land anywhere. */
static uint64_t *gig_shuffle(struct gig_run *r)
{
	uint64_t n = cw_nr_slots(&r->owner), *order = malloc((n ? n : 1) * sizeof *order);
	for (uint64_t i = 0; order && i < n; i++)
		order[i] = i;
	for (uint64_t i = n; order && i > 1; i--) {
		uint64_t k = bench_rand(&r->rng) % i, t = order[i - 1];
		order[i - 1] = order[k];
		order[k] = t;
	}
	return order;
}

static bool gig_unmovable_one(struct gig_run *r)
{
	struct pa_page *p = pa_alloc_pages(r->pool, PA_GFP_KERNEL | PA_GFP_NOWARN, 0);
	if (p)
		r->unmovable[r->nr_unmovable++] = p;
	return p != NULL;
}

/*
 * Free the first nr_transient unmovable pages: kernel allocations that came
 * and went early. Their pageblocks keep the unmovable type they were
 * claimed for, with nothing unmovable left in them.
 */
static void gig_free_transient(struct gig_run *r, uint64_t nr_transient)
{
	for (uint64_t i = 0; i < nr_transient; i++)
		pa_free_pages(r->pool, r->unmovable[i], 0);
	memmove(r->unmovable, r->unmovable + nr_transient,
	        (r->nr_unmovable - nr_transient) * sizeof *r->unmovable);
	r->nr_unmovable -= nr_transient;
}

/*
 * Keep fill_pct of the folios: free the others in a random order, so that
 * free memory is scattered everywhere. The unmovable pages are allocated
 * in between, spread over the frees: while pageblocks are still mostly
 * full, no pageblock can be claimed for them, so they are stolen from what
 * was freed last, anywhere in the pool, as long-lived kernel allocations
 * end up scattered on a machine after uptime. The allocator places them;
 * we record where.
 */
static int gig_fragment(struct gig_run *r, double fill_pct, uint64_t nr_unmovable,
                        uint64_t nr_transient)
{
	uint64_t *order = gig_shuffle(r), n = cw_nr_slots(&r->owner);
	r->unmovable = calloc(nr_unmovable ? nr_unmovable : 1, sizeof *r->unmovable);
	if (!order || !r->unmovable) {
		free(order);
		return -1;
	}
	double frees = (double)n * (100.0 - fill_pct) / 100.0;
	double step = frees / (double)(nr_unmovable + 1), next = step;
	uint64_t freed = 0;
	for (uint64_t i = 0; i < n; i++) {
		if (chance(&r->rng, fill_pct))
			continue;
		cw_free(&r->owner, order[i]);
		for (freed++; r->nr_unmovable < nr_unmovable && (double)freed >= next; next += step)
			if (!gig_unmovable_one(r))
				break;
	}
	while (r->nr_unmovable < nr_unmovable && gig_unmovable_one(r))
		;
	gig_free_transient(r, nr_transient < r->nr_unmovable ? nr_transient : r->nr_unmovable);
	free(order);
	return 0;
}

static void gig_pin(struct gig_run *r, double pct)
{
	for (uint64_t s = 0; pct > 0 && s < cw_nr_slots(&r->owner); s++)
		if (cw_pfn(&r->owner, s) != PA_PFN_INVALID && chance(&r->rng, pct))
			cw_pin(&r->owner, s);
}

/* ---------------------------------------------------------------------- */
/* Regions                                                                 */
/* ---------------------------------------------------------------------- */

static int zone_of(const struct gig_run *r, pa_pfn_t start, pa_pfn_t end)
{
	for (int z = 0; z < r->nr_zones; z++)
		if (start >= r->zones[z].start_pfn && end <= r->zones[z].end_pfn)
			return z;
	return -1;
}

static int gig_regions_init(struct gig_run *r)
{
	struct pa_config cfg;
	pa_get_config(r->pool, &cfg);
	r->nr_zones = bench_zones(r->pool, r->zones, GIG_MAX_ZONES);
	/* The last region may run past the end: it has no zone, so it is never eligible. */
	r->nr_regions = (cfg.total_pages + (1ull << r->order) - 1) >> r->order;
	r->region = calloc(r->nr_regions ? r->nr_regions : 1, sizeof *r->region);
	return r->nr_zones > 0 && r->region ? 0 : -1;
}

/* Recount what every region holds, from the owner's table and our records. */
static void gig_census(struct gig_run *r)
{
	for (uint64_t i = 0; i < r->nr_regions; i++) {
		pa_pfn_t s = i << r->order;
		r->region[i] = (struct gig_region){ .zone = zone_of(r, s, s + (1ull << r->order)) };
	}
	struct cw_view v;
	for (uint64_t s = 0; s < cw_nr_slots(&r->owner); s++) {
		if (!cw_view(&r->owner, s, &v))
			continue;
		struct gig_region *g = &r->region[v.pfn >> r->order];
		g->movable += 1ull << v.order;
		g->pinned += v.pinned;
	}
	for (uint64_t i = 0; i < r->nr_unmovable; i++)
		r->region[pa_page_to_pfn(r->pool, r->unmovable[i]) >> r->order].unmovable++;
	for (uint64_t i = 0; i < r->nr_blocks; i++)
		r->region[r->blocks[i] >> r->order].taken = 1;
}

static bool eligible(const struct gig_region *g)
{
	return g->zone >= 0 && !g->unmovable && !g->pinned && !g->taken;
}

static uint64_t gig_eligible(const struct gig_run *r)
{
	uint64_t n = 0;
	for (uint64_t i = 0; i < r->nr_regions; i++)
		n += eligible(&r->region[i]);
	return n;
}

/* Frames of zone z that nobody we know of holds (free, or on per-CPU lists). */
static uint64_t zone_free(const struct gig_run *r, int z)
{
	uint64_t used = 0;
	for (uint64_t i = 0; i < r->nr_regions; i++) {
		const struct gig_region *g = &r->region[i];
		if (g->zone == z)
			used += g->unmovable + g->movable + (g->taken << r->order);
	}
	/* Frames of regions that straddle zones are not counted: none do in the default pools. */
	return r->zones[z].end_pfn - r->zones[z].start_pfn - used;
}

/* Eligible regions whose movable frames fit in their zone's free frames outside them. */
static uint64_t gig_emptiable(const struct gig_run *r)
{
	uint64_t n = 0, size = 1ull << r->order;
	for (uint64_t i = 0; i < r->nr_regions; i++) {
		const struct gig_region *g = &r->region[i];
		if (!eligible(g))
			continue;
		uint64_t outside = zone_free(r, g->zone) - (size - g->movable);
		n += g->movable <= outside;
	}
	return n;
}

/* ---------------------------------------------------------------------- */
/* A run                                                                   */
/* ---------------------------------------------------------------------- */

static void gig_boot_line(const struct gig *c, enum gig_way way, char *buf, size_t len)
{
	const char *base = bench_boot_line(c->opt, GIG_BOOT);
	unsigned max = way == GIG_BUDDY ? c->order : GIG_CONTIG_MAX;
	snprintf(buf, len, "%s%smax_order=%u kcompactd=manual", base, *base ? " " : "", max);
}

static struct pa_page *gig_alloc(struct gig_run *r, enum gig_way way)
{
	pa_gfp_t gfp = PA_GFP_USER_MOVABLE | PA_GFP_NOWARN;
	if (way == GIG_BUDDY)
		return pa_alloc_pages(r->pool, gfp | PA_GFP_COMP, r->order);
	return pa_alloc_contig_pages(r->pool, 1ull << r->order, gfp, -1);
}

/* Allocate blocks until an attempt fails; record latencies, obtained and misses. */
static void gig_measure(struct gig *c, struct gig_run *r, enum gig_way way, unsigned run)
{
	struct gig_result *res = &c->res[way];
	while (r->nr_blocks < r->max_blocks) { /* every region taken: nothing left to try */
		uint64_t t0 = bench_now_ns();
		struct pa_page *p = gig_alloc(r, way);
		uint64_t ns = bench_now_ns() - t0;
		if (!p) {
			res->fail_ns[res->nr_fail++] = (double)ns;
			break;
		}
		res->ok_ns[res->nr_ok++] = (double)ns;
		r->blocks[r->nr_blocks++] = pa_page_to_pfn(r->pool, p);
	}
	gig_census(r);
	res->obtained[run] = r->nr_blocks;
	res->misses[run] = gig_emptiable(r);
}

static int gig_validate(struct pa_pool *pool)
{
	char err[512] = "";
	if (pa_validate(pool, err, sizeof err) == 0)
		return 0;
	fprintf(stderr, "pagealloc: gigantic: pa_validate: %s\n", err);
	return -1;
}

static int gig_setup(struct gig *c, struct gig_run *r, unsigned run)
{
	struct pa_config cfg;
	pa_get_config(r->pool, &cfg);
	r->order = c->order;
	r->rng = bench_seed_state(c->seed, run);
	r->max_blocks = cfg.total_pages >> c->order;
	r->blocks = calloc(r->max_blocks ? r->max_blocks : 1, sizeof *r->blocks);
	if (!r->blocks || cw_owner_init(&r->owner, r->pool, cfg.total_pages) || gig_regions_init(r))
		return -1;
	gig_fill(r);
	uint64_t nr_unmovable = (uint64_t)((double)cfg.total_pages * c->unmovable_pct / 100.0);
	uint64_t nr_transient = (uint64_t)((double)cfg.total_pages * c->transient_pct / 100.0);
	if (gig_fragment(r, c->fill_pct, nr_unmovable + nr_transient, nr_transient))
		return -1;
	gig_pin(r, c->pinned_pct);
	gig_census(r);
	return 0;
}

static int gig_run(struct gig *c, enum gig_way way, unsigned run)
{
	struct gig_result *res = &c->res[way];
	struct gig_run r = { 0 };
	int ret = bench_boot_with(c->opt, res->boot, NULL, &r.pool);
	if (ret)
		return -1;
	ret = gig_setup(c, &r, run);
	if (!ret) {
		res->regions = r.nr_regions;
		res->eligible[run] = gig_eligible(&r);
		uint64_t moved = atomic_load(&r.owner.moved);
		gig_measure(c, &r, way, run);
		res->moved += atomic_load(&r.owner.moved) - moved;
		free(res->last);
		res->last = r.region;
		r.region = NULL;
		ret = gig_validate(r.pool);
	}
	pa_shutdown(r.pool);
	cw_owner_destroy(&r.owner);
	free(r.unmovable);
	free(r.blocks);
	free(r.region);
	return ret;
}

/* ---------------------------------------------------------------------- */
/* Output                                                                  */
/* ---------------------------------------------------------------------- */

static uint64_t sum_u64(const uint64_t *v, unsigned n)
{
	uint64_t s = 0;
	for (unsigned i = 0; i < n; i++)
		s += v[i];
	return s;
}

/* "5 5 5": one figure per run. */
static void per_run(char *buf, size_t len, const uint64_t *v, unsigned n)
{
	size_t pos = 0;
	buf[0] = '\0';
	for (unsigned i = 0; i < n && pos < len; i++)
		pos += (size_t)snprintf(buf + pos, len - pos, "%s%" PRIu64, i ? " " : "", v[i]);
}

/* The latency figures of a way, in milliseconds. */
struct gig_lat {
	double median, p95, max, fail_median;
};

static struct gig_lat gig_latency(struct gig_result *res)
{
	struct gig_lat l = { 0 };
	l.median = bench_percentile(res->ok_ns, res->nr_ok, 50) / 1e6;
	l.p95 = bench_percentile(res->ok_ns, res->nr_ok, 95) / 1e6;
	l.max = res->nr_ok ? res->ok_ns[res->nr_ok - 1] / 1e6 : 0; /* sorted above */
	l.fail_median = bench_percentile(res->fail_ns, res->nr_fail, 50) / 1e6;
	return l;
}

/* What every region held when the last run of a way ended (text output only). */
static void gig_print_regions(const struct gig *c, FILE *f)
{
	for (int w = 0; w < GIG_WAYS; w++) {
		const struct gig_result *res = &c->res[w];
		if (!res->last || res->regions > 64)
			continue;
		fprintf(f, "\n%s, regions after the last run:\n%6s %6s %10s %10s %10s %6s\n",
		        way_name[w], "region", "zone", "unmovable", "pinned", "movable", "taken");
		for (uint64_t i = 0; i < res->regions; i++) {
			const struct gig_region *g = &res->last[i];
			fprintf(f,
			        "%6" PRIu64 " %6d %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %6s\n",
			        i, g->zone, g->unmovable, g->pinned, g->movable,
			        g->taken ? "yes" : "");
		}
	}
}

static void gig_print_text(struct gig *c, FILE *f)
{
	struct gig_lat l[GIG_WAYS];
	char a[128], b[128];
	for (int w = 0; w < GIG_WAYS; w++)
		l[w] = gig_latency(&c->res[w]);
	fprintf(f, "\n%-26s %-36s %s\n", "", "buddy (pa_alloc_pages)",
	        "contig (pa_alloc_contig_pages)");
	fprintf(f, "%-26s %-36s %s\n", "boot", c->res[0].boot, c->res[1].boot);
	fprintf(f, "%-26s %-36" PRIu64 " %" PRIu64 "\n", "regions", c->res[0].regions,
	        c->res[1].regions);
	per_run(a, sizeof a, c->res[0].eligible, c->runs);
	per_run(b, sizeof b, c->res[1].eligible, c->runs);
	fprintf(f, "%-26s %-36s %s\n", "eligible (per run)", a, b);
	per_run(a, sizeof a, c->res[0].obtained, c->runs);
	per_run(b, sizeof b, c->res[1].obtained, c->runs);
	fprintf(f, "%-26s %-36s %s\n", "obtained (per run)", a, b);
	per_run(a, sizeof a, c->res[0].misses, c->runs);
	per_run(b, sizeof b, c->res[1].misses, c->runs);
	fprintf(f, "%-26s %-36s %s\n", "missed (per run)", a, b);
	fprintf(f, "%-26s %-36.3f %.3f\n", "latency median ms", l[0].median, l[1].median);
	fprintf(f, "%-26s %-36.3f %.3f\n", "latency p95 ms", l[0].p95, l[1].p95);
	fprintf(f, "%-26s %-36.3f %.3f\n", "latency max ms", l[0].max, l[1].max);
	fprintf(f, "%-26s %-36.3f %.3f\n", "failed attempt median ms", l[0].fail_median,
	        l[1].fail_median);
	fprintf(f, "%-26s %-36" PRIu64 " %" PRIu64 "\n", "folios moved (all runs)", c->res[0].moved,
	        c->res[1].moved);
	gig_print_regions(c, f);
}

static void gig_print_json(struct gig *c, struct bench_out *o)
{
	for (int w = 0; w < GIG_WAYS; w++) {
		struct gig_result *res = &c->res[w];
		struct gig_lat l = gig_latency(res);
		bench_out_open(o, way_name[w]);
		bench_out_str(o, "boot", res->boot);
		bench_out_u64(o, "regions", res->regions);
		bench_out_u64(o, "eligible", sum_u64(res->eligible, c->runs));
		bench_out_u64(o, "obtained", sum_u64(res->obtained, c->runs));
		bench_out_u64(o, "missed", sum_u64(res->misses, c->runs));
		bench_out_f64(o, "latency_median_ms", l.median);
		bench_out_f64(o, "latency_p95_ms", l.p95);
		bench_out_f64(o, "latency_max_ms", l.max);
		bench_out_f64(o, "failed_attempt_median_ms", l.fail_median);
		bench_out_u64(o, "folios_moved", res->moved);
		bench_out_close(o);
	}
}

static void gig_print(struct gig *c, FILE *f)
{
	struct bench_out o;
	bench_out_begin(&o, f, c->opt->json, "gigantic");
	bench_out_u64(&o, "block_order", c->order);
	bench_out_f64(&o, "fill_pct", c->fill_pct);
	char pct[32];
	snprintf(pct, sizeof pct, "%g", c->unmovable_pct);
	bench_out_str(&o, "unmovable_pct", pct);
	snprintf(pct, sizeof pct, "%g", c->transient_pct);
	bench_out_str(&o, "transient_pct", pct);
	snprintf(pct, sizeof pct, "%g", c->pinned_pct);
	bench_out_str(&o, "pinned_pct", pct);
	bench_out_u64(&o, "seed", c->seed);
	bench_out_u64(&o, "runs", c->runs);
	if (o.json)
		gig_print_json(c, &o);
	else
		gig_print_text(c, f);
	bench_out_end(&o);
}

/* ---------------------------------------------------------------------- */
/* Entry                                                                   */
/* ---------------------------------------------------------------------- */

static int gig_init(struct gig *c, const struct bench_opts *opt)
{
	c->opt = opt;
	c->order = opt->order < 0 ? GIG_ORDER : (unsigned)opt->order;
	c->runs = opt->runs ? opt->runs : GIG_RUNS;
	c->fill_pct = opt->fill_pct >= 0 ? opt->fill_pct : GIG_FILL_PCT;
	c->unmovable_pct = opt->unmovable_pct >= 0 ? opt->unmovable_pct : GIG_UNMOVABLE_PCT;
	c->pinned_pct = opt->pinned_pct >= 0 ? opt->pinned_pct : 0;
	c->transient_pct = opt->transient_pct >= 0 ? opt->transient_pct : 0;
	c->seed = opt->seed_set ? opt->seed : 42;
	if (c->order <= GIG_CONTIG_MAX) {
		fprintf(stderr, "pagealloc: gigantic: --order must be above %u\n", GIG_CONTIG_MAX);
		return -1;
	}
	for (int w = 0; w < GIG_WAYS; w++) {
		struct gig_result *res = &c->res[w];
		gig_boot_line(c, (enum gig_way)w, res->boot, sizeof res->boot);
		res->eligible = calloc(c->runs, sizeof *res->eligible);
		res->obtained = calloc(c->runs, sizeof *res->obtained);
		res->misses = calloc(c->runs, sizeof *res->misses);
		res->fail_ns = calloc(c->runs, sizeof *res->fail_ns);
		if (!res->eligible || !res->obtained || !res->misses || !res->fail_ns)
			return -1;
	}
	return 0;
}

/* Room for every success of every run: at most one block per region. */
static int gig_alloc_samples(struct gig *c, enum gig_way way)
{
	struct pa_pool *pool;
	if (bench_boot_with(c->opt, c->res[way].boot, NULL, &pool))
		return -1;
	struct pa_config cfg;
	pa_get_config(pool, &cfg);
	pa_shutdown(pool);
	uint64_t n = (cfg.total_pages >> c->order) * c->runs;
	c->res[way].ok_ns = calloc(n ? n : 1, sizeof(double));
	return c->res[way].ok_ns ? 0 : -1;
}

static void gig_free(struct gig *c)
{
	for (int w = 0; w < GIG_WAYS; w++) {
		free(c->res[w].eligible);
		free(c->res[w].obtained);
		free(c->res[w].misses);
		free(c->res[w].ok_ns);
		free(c->res[w].fail_ns);
		free(c->res[w].last);
	}
}

int bench_gigantic(const struct bench_opts *opt, struct pa_pool *given, FILE *out)
{
	(void)given; /* own_pool: two kinds of pool, one per way */
	struct gig c = { 0 };
	int ret = gig_init(&c, opt);
	for (int w = 0; !ret && w < GIG_WAYS; w++) {
		ret = gig_alloc_samples(&c, (enum gig_way)w);
		for (unsigned r = 0; !ret && r < c.runs; r++) {
			bench_progress_step((unsigned)w * c.runs + r, GIG_WAYS * c.runs);
			ret = gig_run(&c, (enum gig_way)w, r);
		}
	}
	if (!ret)
		gig_print(&c, out);
	gig_free(&c);
	return ret ? 1 : 0;
}
