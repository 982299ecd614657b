/* SPDX-License-Identifier: MIT */
/*
 * fragbench: a long seeded churn in the mix of a real machine, and what it
 * leaves of the 1 GiB blocks, under Linux's placement policy and under
 * superblock steering (superblock_order, defrag_mode=1) side by side.
 *
 * The stream: allocations of five classes (below), each with the orders and
 * the lifetimes measured in the shared trace linux-6.1-slab-pagecache. A
 * lifetime is counted in frames allocated meanwhile, as a share of memory
 * (1.0: memory turned over once), so that the trace's 6 GiB machine scales
 * to any pool. The allocations still live at the end of the trace are the
 * long-lived ones (inodes, dentries, files kept in the page cache): they
 * live 1 to 5 turnovers here, and they are what taints regions. The stream
 * depends only on the seed and the options, never on what the allocator
 * did: a failed allocation is counted and the stream goes on. With one CPU
 * and kcompactd=manual the whole run is deterministic for a seed.
 *
 * At the end every zone is compacted, then counted from the pool's state
 * and the blocks the workload holds (independently of the allocator's own
 * superblock counts): the 1 GiB regions holding an unmovable or reclaimable
 * allocation, the pageblocks per type, and the 1 GiB blocks that form
 * through the buddy (order 18 allocated until it fails) against the most
 * that could (per zone: untainted regions, and free frames above the min
 * watermark).
 *
 * Reading the linux columns: Linux's fallback claims the largest free block
 * of another type it finds whole. The kernel's blocks stop at order 10, so
 * a claim retypes at most 4 MiB and unmovable memory spreads (linux). At
 * max_order=18 the same rule claims up to a whole 1 GiB block for one page
 * and so confines unmovable memory by accident while such blocks last
 * (linux-whole).
 */
#define _GNU_SOURCE
#include "compact_common.h"
#include "movable.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define FB_MEM       "64G"
#define FB_BOOT_TAIL "max_order=18"
#define FB_UNMOVABLE 5.0 /* % of allocated frames, unmovable and reclaimable together */
#define FB_TURNOVER  10
#define FB_SEED      42
#define FB_GIG_ORDER 18   /* 1 GiB at 4 KiB pages */
#define FB_FILL      0.70 /* memory the short-lived allocations hold on average */
#define FB_LONG_MIN  1.0  /* lifetime of the long-lived ones, in turnovers: uniform */
#define FB_LONG_MAX  5.0  /* between these (the trace ends before they are freed) */
#define FB_MAX_ZONES 8
#define FB_MAX_STATS 24 /* vmstat counters about fallbacks and steering */

/* ---------------------------------------------------------------------- */
/* The mix, from the trace                                                  */
/* ---------------------------------------------------------------------- */

/*
 * From tools/trace_mix.py on /work/shared/traces/linux-6.1-slab-pagecache
 * (3,143,175 frames allocated by 400,986 allocations on 1,516,838 managed
 * frames: memory turned over 2.07 times). Classes by migratetype and gfp:
 * page cache is __GFP_WRITE or readahead (GFP_NOFS); the other order-0
 * movable allocations are anonymous faults; THP is movable order 9.
 *
 * | class       | frames % | live at end % | allocations by order         | lifetime p50 | p90    | p99    |
 * |-------------|---------:|--------------:|------------------------------|-------------:|-------:|-------:|
 * | unmovable   |    2.657 |          5.70 | 0: 38324 1: 2233 2: 4534 3: 2825 |   0.0000 | 0.1921 | 0.7677 |
 * | reclaimable |    1.060 |         23.95 | 0: 9872 1: 153 2: 5782       |       0.0425 | 0.3661 | 0.3864 |
 * | anon        |    5.619 |          1.41 | 0: 176625                    |       0.0115 | 0.0352 | 1.2154 |
 * | pagecache   |    4.933 |         12.89 | 0: 155062                    |       0.0418 | 1.0956 | 1.0969 |
 * | thp         |   85.730 |          0.00 | 9: 5263                      |       0.3957 | 0.7515 | 0.8317 |
 *
 * Lifetimes in turnovers, of the allocations freed in the trace; the table
 * below has all quantiles p10..p90, p95, p99. --unmovable-pct sets the
 * frames of unmovable + reclaimable (3.7 % in the trace), split between
 * them as in the trace; the movable classes share the rest as in the trace.
 * The short-lived lifetimes are scaled by one factor so that they hold
 * FB_FILL of memory on average (Little's law); the long-lived add to it.
 */
enum fb_class { FB_U, FB_R, FB_ANON, FB_PAGECACHE, FB_THP, FB_CLASSES };

#define FB_QUANTILES 11
static const double fb_quantile_at[FB_QUANTILES] = { 0.1, 0.2, 0.3, 0.4,  0.5, 0.6,
	                                             0.7, 0.8, 0.9, 0.95, 0.99 };

struct fb_mix {
	const char *name;
	pa_gfp_t gfp;
	bool movable;
	double trace_frames_pct;
	double long_pct; /* allocations still live at the end of the trace */
	unsigned base_order;
	unsigned count[4]; /* allocations of order base_order + k in the trace */
	double lifetime[FB_QUANTILES];
};

static const struct fb_mix fb_mix[FB_CLASSES] = {
	[FB_U] = { "unmovable",
	           PA_GFP_KERNEL,
	           false,
	           2.657,
	           5.70,
	           0,
	           { 38324, 2233, 4534, 2825 },
	           { 0, 0, 0, 0, 0, 0, 0.0001, 0.0026, 0.1921, 0.4627, 0.7677 } },
	[FB_R] = { "reclaimable",
	           PA_GFP_RECLAIMABLE,
	           false,
	           1.060,
	           23.95,
	           0,
	           { 9872, 153, 5782, 0 },
	           { 0.0081, 0.0163, 0.0246, 0.0329, 0.0425, 0.0531, 0.0782, 0.3439, 0.3661, 0.3775,
	             0.3864 } },
	[FB_ANON] = { "anon",
	              PA_GFP_MOVABLE,
	              true,
	              5.619,
	              1.41,
	              0,
	              { 176625, 0, 0, 0 },
	              { 0.0002, 0.0026, 0.0050, 0.0078, 0.0115, 0.0163, 0.0165, 0.0250, 0.0352,
	                0.0507, 1.2154 } },
	[FB_PAGECACHE] = { "pagecache",
	                   PA_GFP_MOVABLE,
	                   true,
	                   4.933,
	                   12.89,
	                   0,
	                   { 155062, 0, 0, 0 },
	                   { 0.0085, 0.0168, 0.0253, 0.0336, 0.0418, 0.0714, 1.0847, 1.0915, 1.0956,
	                     1.0962, 1.0969 } },
	[FB_THP] = { "thp",
	             PA_GFP_MOVABLE,
	             true,
	             85.730,
	             0,
	             9,
	             { 5263, 0, 0, 0 },
	             { 0.0403, 0.1285, 0.2175, 0.3068, 0.3957, 0.4847, 0.5736, 0.6626, 0.7515,
	               0.7961, 0.8317 } },
};

/* The stream's parameters, derived from the mix and the options. */
struct fb_stream {
	double pick[FB_CLASSES];   /* cumulative probability of each class per allocation */
	double frames[FB_CLASSES]; /* share of allocated frames */
	double scale;              /* of the short-lived lifetimes */
};

static double mix_mean_frames(const struct fb_mix *m)
{
	double n = 0, frames = 0;
	for (unsigned k = 0; k < 4; k++) {
		n += m->count[k];
		frames += (double)m->count[k] * (double)(1ull << (m->base_order + k));
	}
	return frames / n;
}

/* The mean of the piecewise-linear lifetime distribution through (0,0), the quantiles, (1,p99). */
static double mix_mean_lifetime(const struct fb_mix *m)
{
	double x = 0, y = 0, mean = 0;
	for (unsigned i = 0; i <= FB_QUANTILES; i++) {
		double nx = i < FB_QUANTILES ? fb_quantile_at[i] : 1.0;
		double ny = m->lifetime[i < FB_QUANTILES ? i : FB_QUANTILES - 1];
		mean += (nx - x) * (y + ny) / 2;
		x = nx;
		y = ny;
	}
	return mean;
}

static void fb_stream_init(struct fb_stream *s, double unmovable_pct)
{
	double kernel = fb_mix[FB_U].trace_frames_pct + fb_mix[FB_R].trace_frames_pct;
	double user = 100.0 - kernel, weight[FB_CLASSES], sum = 0, held = 0;
	for (int c = 0; c < FB_CLASSES; c++) {
		const struct fb_mix *m = &fb_mix[c];
		s->frames[c] =
		        m->movable ? (100.0 - unmovable_pct) / 100.0 * m->trace_frames_pct / user :
		                     unmovable_pct / 100.0 * m->trace_frames_pct / kernel;
		weight[c] = s->frames[c] / mix_mean_frames(m);
		sum += weight[c];
		held += s->frames[c] * (1.0 - m->long_pct / 100.0) * mix_mean_lifetime(m);
	}
	for (int c = 0; c < FB_CLASSES; c++)
		s->pick[c] = (c ? s->pick[c - 1] : 0) + weight[c] / sum;
	s->pick[FB_CLASSES - 1] = 1.0;
	s->scale = FB_FILL / held;
}

/* A uniform double in [0, 1). */
static double fb_uniform(uint64_t *rng)
{
	return (double)(bench_rand(rng) >> 11) * (1.0 / 9007199254740992.0);
}

static enum fb_class fb_pick_class(const struct fb_stream *s, uint64_t *rng)
{
	double u = fb_uniform(rng);
	int c = 0;
	while (c < FB_CLASSES - 1 && u >= s->pick[c])
		c++;
	return (enum fb_class)c;
}

static unsigned fb_pick_order(const struct fb_mix *m, uint64_t *rng)
{
	unsigned total = m->count[0] + m->count[1] + m->count[2] + m->count[3];
	unsigned r = (unsigned)(bench_rand(rng) % total), k = 0;
	while (k < 3 && r >= m->count[k])
		r -= m->count[k++];
	return m->base_order + k;
}

/* A lifetime in turnovers: long-lived with the trace's share, else from the quantiles, scaled. */
static double fb_pick_lifetime(const struct fb_stream *s, const struct fb_mix *m, uint64_t *rng)
{
	double u = fb_uniform(rng), v = fb_uniform(rng);
	if (u * 100.0 < m->long_pct)
		return FB_LONG_MIN + (FB_LONG_MAX - FB_LONG_MIN) * v;
	double x = 0, y = 0;
	for (unsigned i = 0; i < FB_QUANTILES; i++) {
		double nx = fb_quantile_at[i], ny = m->lifetime[i];
		if (v < nx)
			return s->scale * (y + (ny - y) * (v - x) / (nx - x));
		x = nx;
		y = ny;
	}
	return s->scale * m->lifetime[FB_QUANTILES - 1];
}

/* ---------------------------------------------------------------------- */
/* A run: the churn                                                         */
/* ---------------------------------------------------------------------- */

/* A live allocation, in a min-heap by the clock at which it is freed. */
struct fb_obj {
	uint64_t death;
	uint64_t handle; /* the owner's slot (movable) or the pfn */
	uint8_t cls, order;
};

enum fb_policy { FB_LINUX, FB_LINUX_WHOLE, FB_SUPERBLOCK, FB_POLICIES };

/*
 * What each policy appends to the boot line. linux: the kernel's placement
 * as deployed, whose fallback claims at most an order-10 block (its
 * MAX_PAGE_ORDER); linux-whole: the same code at this max_order, claiming
 * up to a whole 1 GiB block for one page; superblock: steering and
 * compaction before polluting.
 */
static const struct {
	const char *name, *keys;
} fb_policy_def[FB_POLICIES] = {
	[FB_LINUX] = { "linux", "superblock_order=0 defrag_mode=0 fallback_order=10" },
	[FB_LINUX_WHOLE] = { "linux-whole", "superblock_order=0 defrag_mode=0" },
	[FB_SUPERBLOCK] = { "superblock", "defrag_mode=1" },
};

/* What a run measured. */
struct fb_result {
	char boot[512];
	double elapsed_s;
	uint64_t allocations, alloc_failures, fails[FB_CLASSES];
	uint64_t regions, tainted_regions, regions_unmovable, regions_reclaimable;
	uint64_t tainted_pageblocks, pageblocks[PA_MT_COUNT];
	uint64_t held_frames, kernel_frames, free_frames;
	uint64_t gig_blocks, gig_blocks_bound;
	uint64_t compacted; /* frames moved by the final compaction */
	char stat_name[FB_MAX_STATS][48];
	uint64_t stat[FB_MAX_STATS];
	unsigned nr_stats;
};

struct fb_run {
	struct pa_pool *pool;
	struct cw_owner owner;
	struct pa_config cfg;
	const struct fb_stream *stream;
	struct fb_obj *heap;
	uint64_t nr, cap;
	uint64_t rng, clock, unit, end;
	struct fb_result *res;
};

static void heap_swap(struct fb_obj *h, uint64_t a, uint64_t b)
{
	struct fb_obj t = h[a];
	h[a] = h[b];
	h[b] = t;
}

static int heap_push(struct fb_run *r, struct fb_obj o)
{
	if (r->nr == r->cap) {
		uint64_t cap = r->cap ? r->cap * 2 : 1 << 16;
		struct fb_obj *h = realloc(r->heap, cap * sizeof *h);
		if (!h)
			return -1;
		r->heap = h;
		r->cap = cap;
	}
	uint64_t i = r->nr++;
	r->heap[i] = o;
	while (i && r->heap[(i - 1) / 2].death > r->heap[i].death) {
		heap_swap(r->heap, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
	return 0;
}

static struct fb_obj heap_pop(struct fb_run *r)
{
	struct fb_obj top = r->heap[0];
	r->heap[0] = r->heap[--r->nr];
	for (uint64_t i = 0;;) {
		uint64_t l = 2 * i + 1, m = i;
		if (l < r->nr && r->heap[l].death < r->heap[m].death)
			m = l;
		if (l + 1 < r->nr && r->heap[l + 1].death < r->heap[m].death)
			m = l + 1;
		if (m == i)
			break;
		heap_swap(r->heap, i, m);
		i = m;
	}
	return top;
}

static void fb_free(struct fb_run *r, const struct fb_obj *o)
{
	if (fb_mix[o->cls].movable)
		cw_free(&r->owner, o->handle);
	else
		pa_free_pages(r->pool, pa_pfn_to_page(r->pool, o->handle), o->order);
}

/* Allocate one of the class; the handle, or false when the allocator refused. */
static bool fb_alloc(struct fb_run *r, enum fb_class c, unsigned order, uint64_t *handle)
{
	const struct fb_mix *m = &fb_mix[c];
	if (m->movable) {
		*handle = cw_alloc(&r->owner, PA_GFP_KERNEL, order);
		return *handle != CW_NONE;
	}
	pa_gfp_t gfp = m->gfp | PA_GFP_NOWARN | (order ? PA_GFP_COMP : 0);
	struct pa_page *p = pa_alloc_pages(r->pool, gfp, order);
	if (p)
		*handle = pa_page_to_pfn(r->pool, p);
	return p != NULL;
}

/* One step of the stream: draw, free what died meanwhile, allocate. */
static int fb_step(struct fb_run *r)
{
	enum fb_class c = fb_pick_class(r->stream, &r->rng);
	const struct fb_mix *m = &fb_mix[c];
	unsigned order = fb_pick_order(m, &r->rng);
	double life = fb_pick_lifetime(r->stream, m, &r->rng);
	r->clock += 1ull << order;
	while (r->nr && r->heap[0].death <= r->clock) {
		struct fb_obj o = heap_pop(r);
		fb_free(r, &o);
	}
	uint64_t handle;
	r->res->allocations++;
	if (!fb_alloc(r, c, order, &handle)) {
		r->res->fails[c]++;
		r->res->alloc_failures++;
		return 0;
	}
	struct fb_obj o = { .death = r->clock + (uint64_t)(life * (double)r->unit),
		            .handle = handle,
		            .cls = (uint8_t)c,
		            .order = (uint8_t)order };
	return heap_push(r, o);
}

static int fb_churn(struct fb_run *r, unsigned step, unsigned steps)
{
	uint64_t n = 0;
	while (r->clock < r->end) {
		if (fb_step(r))
			return -1;
		if ((++n & 0xffff) == 0)
			bench_progress(NULL,
			               ((double)step + (double)r->clock / (double)r->end) / steps);
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* A run: the count at the end                                              */
/* ---------------------------------------------------------------------- */

struct fb_census {
	struct pa_zone_info zones[FB_MAX_ZONES];
	int nr_zones;
	uint8_t *region;             /* [region]: bit 0 unmovable, bit 1 reclaimable held there */
	uint8_t *block;              /* [pageblock]: the same */
	uint64_t free[FB_MAX_ZONES]; /* free frames (buddy and per-CPU lists) */
};

static int zone_at(const struct fb_census *z, pa_pfn_t start, pa_pfn_t end)
{
	for (int i = 0; i < z->nr_zones; i++)
		if (start >= z->zones[i].start_pfn && end <= z->zones[i].end_pfn)
			return i;
	return -1;
}

/* Regions and pageblocks holding an unmovable or reclaimable allocation of ours. */
static void fb_mark_kernel(struct fb_run *r, struct fb_census *z)
{
	struct fb_result *res = r->res;
	for (uint64_t i = 0; i < r->nr; i++) {
		const struct fb_obj *o = &r->heap[i];
		if (fb_mix[o->cls].movable)
			continue;
		uint8_t bit = o->cls == FB_U ? 1 : 2;
		z->region[o->handle >> FB_GIG_ORDER] |= bit;
		z->block[o->handle >> r->cfg.pageblock_order] |= bit;
		res->kernel_frames += 1ull << o->order;
	}
	for (uint64_t i = 0; i < r->nr; i++)
		res->held_frames += 1ull << r->heap[i].order;
}

/* Pageblocks per type and free frames per zone, from the pageblock walk. */
static void fb_walk_pageblocks(struct fb_run *r, struct fb_census *z)
{
	struct fb_result *res = r->res;
	uint64_t n = pa_pageblock_count(r->pool);
	for (uint64_t i = 0; i < n; i++) {
		struct pa_pageblock_info b;
		if (pa_pageblock_info(r->pool, i, &b) || b.node < 0 || b.nr_frames == b.hole)
			continue;
		res->pageblocks[b.mt]++;
		res->tainted_pageblocks += z->block[b.start_pfn >> r->cfg.pageblock_order] != 0;
		int zi = zone_at(z, b.start_pfn, b.start_pfn + 1);
		if (zi >= 0)
			z->free[zi] += b.free + b.pcp;
	}
}

/* Tainted regions, and the bound: per zone, untainted regions that free memory could fill. */
static void fb_count_regions(struct fb_run *r, struct fb_census *z)
{
	struct fb_result *res = r->res;
	uint64_t size = 1ull << FB_GIG_ORDER, untainted[FB_MAX_ZONES] = { 0 };
	res->regions = (r->cfg.total_pages + size - 1) >> FB_GIG_ORDER;
	for (uint64_t i = 0; i < res->regions; i++) {
		res->tainted_regions += z->region[i] != 0;
		res->regions_unmovable += (z->region[i] & 1) != 0;
		res->regions_reclaimable += (z->region[i] & 2) != 0;
		int zi = zone_at(z, i * size, (i + 1) * size);
		if (zi >= 0 && !z->region[i])
			untainted[zi]++;
	}
	for (int i = 0; i < z->nr_zones; i++) {
		uint64_t min = z->zones[i].watermark_min;
		uint64_t fit = z->free[i] > min ? (z->free[i] - min) / size : 0;
		res->gig_blocks_bound += fit < untainted[i] ? fit : untainted[i];
		res->free_frames += z->free[i];
	}
}

/* 1 GiB blocks through the buddy until one fails; all freed again. */
static void fb_gig_blocks(struct fb_run *r)
{
	uint64_t max = r->res->regions, n = 0;
	struct pa_page **got = calloc(max ? max : 1, sizeof *got);
	while (got && n < max) {
		got[n] = pa_alloc_pages(r->pool, PA_GFP_MOVABLE | PA_GFP_COMP | PA_GFP_NOWARN,
		                        FB_GIG_ORDER);
		if (!got[n])
			break;
		n++;
	}
	for (uint64_t i = 0; i < n; i++)
		pa_free_pages(r->pool, got[i], FB_GIG_ORDER);
	free(got);
	r->res->gig_blocks = n;
}

static bool fb_stat_wanted(const char *name)
{
	static const char *const words[] = { "fallback",     "steer",
		                             "superblock",   "pollut",
		                             "defrag",       "compact_stall",
		                             "compact_fail", "compact_success",
		                             "pgmigrate",    "compact_migrate_scanned" };
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (strstr(name, words[i]))
			return true;
	return false;
}

static void fb_keep_stat(void *ctx, const char *name, uint64_t value)
{
	struct fb_result *res = ctx;
	if (res->nr_stats < FB_MAX_STATS && fb_stat_wanted(name)) {
		snprintf(res->stat_name[res->nr_stats], sizeof res->stat_name[0], "%s", name);
		res->stat[res->nr_stats++] = value;
	}
}

/* The vmstat counters about fallbacks and steering, whatever the allocator names them. */
static void fb_read_stats(struct fb_run *r)
{
	pa_vmstat_foreach(r->pool, fb_keep_stat, r->res);
}

static int fb_count(struct fb_run *r)
{
	struct fb_census z = { 0 };
	uint64_t regions = (r->cfg.total_pages >> FB_GIG_ORDER) + 1;
	z.region = calloc(regions, 1);
	z.block = calloc((r->cfg.total_pages >> r->cfg.pageblock_order) + 1, 1);
	z.nr_zones = bench_zones(r->pool, z.zones, FB_MAX_ZONES);
	int ret = z.region && z.block && z.nr_zones > 0 ? 0 : -1;
	if (!ret) {
		pa_drain_all(r->pool);
		long moved = pa_compact(r->pool, -1);
		r->res->compacted = moved > 0 ? (uint64_t)moved : 0;
		pa_drain_all(r->pool);
		fb_mark_kernel(r, &z);
		fb_walk_pageblocks(r, &z);
		fb_count_regions(r, &z);
		fb_gig_blocks(r);
		fb_read_stats(r);
	}
	free(z.region);
	free(z.block);
	return ret;
}

/* ---------------------------------------------------------------------- */
/* A run                                                                    */
/* ---------------------------------------------------------------------- */

struct fb {
	const struct bench_opts *opt;
	double unmovable_pct;
	unsigned turnover;
	uint64_t seed;
	bool run[FB_POLICIES];
	struct fb_stream stream;
	struct fb_result res[FB_POLICIES];
};

/*
 * The user's line (or mem=SIZE max_order=18), no background compaction, one
 * CPU (the thread poses as CPU 0), the policy.
 */
static void fb_boot_line(const struct fb *c, enum fb_policy p, char *buf, size_t len)
{
	char def[64];
	snprintf(def, sizeof def, "mem=%s %s", c->opt->mem ? c->opt->mem : FB_MEM, FB_BOOT_TAIL);
	const char *base = bench_boot_line(c->opt, def);
	snprintf(buf, len, "%s%s%s %s", base, strstr(base, "kcompactd=") ? "" : " kcompactd=manual",
	         strstr(base, "max_order=") ? "" : " " FB_BOOT_TAIL, fb_policy_def[p].keys);
}

static int fb_validate(struct pa_pool *pool, const char *policy)
{
	char err[512] = "";
	if (pa_validate(pool, err, sizeof err) == 0)
		return 0;
	fprintf(stderr, "pagealloc: fragbench (%s): pa_validate: %s\n", policy, err);
	return -1;
}

static int fb_setup(struct fb *c, struct fb_run *r, enum fb_policy p)
{
	pa_get_config(r->pool, &r->cfg);
	if (bench_check_order(r->pool, FB_GIG_ORDER))
		return -1;
	struct pa_usage u;
	pa_get_usage(r->pool, &u);
	r->stream = &c->stream;
	r->rng = bench_seed_state(c->seed, 0); /* the same stream for every policy */
	r->unit = u.managed;
	r->end = u.managed * c->turnover;
	r->res = &c->res[p];
	return cw_owner_init(&r->owner, r->pool, r->cfg.total_pages);
}

static int fb_run_policy(struct fb *c, enum fb_policy p, unsigned step, unsigned steps)
{
	struct fb_run r = { 0 };
	struct fb_result *res = &c->res[p];
	fb_boot_line(c, p, res->boot, sizeof res->boot);
	struct bench_opts line = *c->opt;
	line.boot = res->boot;
	bench_pose_as_cpu(0);
	if (bench_boot_posing(&line, NULL, 1, &r.pool))
		return -1;
	uint64_t t0 = bench_now_ns();
	int ret = fb_setup(c, &r, p);
	if (!ret)
		ret = fb_churn(&r, step, steps);
	if (!ret)
		ret = fb_count(&r);
	res->elapsed_s = (double)(bench_now_ns() - t0) / 1e9;
	if (!ret)
		ret = fb_validate(r.pool, fb_policy_def[p].name);
	while (r.nr) {
		struct fb_obj o = heap_pop(&r);
		fb_free(&r, &o);
	}
	if (!ret)
		ret = fb_validate(r.pool, fb_policy_def[p].name);
	pa_shutdown(r.pool);
	cw_owner_destroy(&r.owner);
	free(r.heap);
	return ret;
}

/* ---------------------------------------------------------------------- */
/* Output                                                                   */
/* ---------------------------------------------------------------------- */

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

static const char *const mt_name[PA_MT_COUNT] = { "unmovable",  "movable", "reclaimable",
	                                          "highatomic", "cma",     "isolate" };

static void fb_print_json(const struct fb_result *res, struct bench_out *o)
{
	bench_out_str(o, "boot", res->boot);
	bench_out_f64(o, "elapsed_s", res->elapsed_s);
	bench_out_u64(o, "regions", res->regions);
	bench_out_u64(o, "tainted_regions", res->tainted_regions);
	bench_out_f64(o, "tainted_regions_pct", pct(res->tainted_regions, res->regions));
	bench_out_u64(o, "regions_with_unmovable", res->regions_unmovable);
	bench_out_u64(o, "regions_with_reclaimable", res->regions_reclaimable);
	bench_out_u64(o, "gig_blocks", res->gig_blocks);
	bench_out_u64(o, "gig_blocks_bound", res->gig_blocks_bound);
	bench_out_f64(o, "gig_pct_of_bound", pct(res->gig_blocks, res->gig_blocks_bound));
	bench_out_u64(o, "allocations", res->allocations);
	bench_out_u64(o, "alloc_failures", res->alloc_failures);
	bench_out_open(o, "alloc_failures_by_class");
	for (int k = 0; k < FB_CLASSES; k++)
		bench_out_u64(o, fb_mix[k].name, res->fails[k]);
	bench_out_close(o);
	bench_out_u64(o, "tainted_pageblocks", res->tainted_pageblocks);
	bench_out_open(o, "pageblocks");
	for (int k = 0; k < PA_MT_COUNT; k++)
		bench_out_u64(o, mt_name[k], res->pageblocks[k]);
	bench_out_close(o);
	bench_out_u64(o, "held_frames", res->held_frames);
	bench_out_u64(o, "kernel_frames", res->kernel_frames);
	bench_out_u64(o, "free_frames", res->free_frames);
	bench_out_u64(o, "compacted_frames", res->compacted);
	bench_out_open(o, "vmstat");
	for (unsigned k = 0; k < res->nr_stats; k++)
		bench_out_u64(o, res->stat_name[k], res->stat[k]);
	bench_out_close(o);
}

/* One text row: a label and each policy's value. */
static void fb_row(FILE *f, const struct fb *c, const char *label, const char *fmt,
                   double (*get)(const struct fb_result *, const void *), const void *arg)
{
	fprintf(f, "%-28s", label);
	for (int p = 0; p < FB_POLICIES; p++)
		if (c->run[p])
			fprintf(f, fmt, get(&c->res[p], arg));
	fputc('\n', f);
}

/* A figure of fb_result by its byte offset (a uint64_t). */
static double get_u64(const struct fb_result *r, const void *off)
{
	return (double)*(const uint64_t *)((const char *)r + (size_t)(uintptr_t)off);
}

static double get_elapsed(const struct fb_result *r, const void *arg)
{
	(void)arg;
	return r->elapsed_s;
}

static double get_tainted_pct(const struct fb_result *r, const void *arg)
{
	(void)arg;
	return pct(r->tainted_regions, r->regions);
}

static double get_gig_pct(const struct fb_result *r, const void *arg)
{
	(void)arg;
	return pct(r->gig_blocks, r->gig_blocks_bound);
}

static double get_pageblocks(const struct fb_result *r, const void *mt)
{
	return (double)r->pageblocks[(uintptr_t)mt];
}

static double get_fails(const struct fb_result *r, const void *cls)
{
	return (double)r->fails[(uintptr_t)cls];
}

#define OFF(field) ((const void *)(uintptr_t)offsetof(struct fb_result, field))

static const struct {
	const char *label;
	const void *off;
} u64_rows[] = {
	{ "regions", OFF(regions) },
	{ "tainted_regions", OFF(tainted_regions) },
	{ "  with unmovable", OFF(regions_unmovable) },
	{ "  with reclaimable", OFF(regions_reclaimable) },
	{ "gig_blocks", OFF(gig_blocks) },
	{ "gig_blocks_bound", OFF(gig_blocks_bound) },
	{ "allocations", OFF(allocations) },
	{ "alloc_failures", OFF(alloc_failures) },
	{ "tainted_pageblocks", OFF(tainted_pageblocks) },
	{ "held_frames", OFF(held_frames) },
	{ "kernel_frames", OFF(kernel_frames) },
	{ "free_frames", OFF(free_frames) },
	{ "compacted_frames", OFF(compacted) },
};

static void fb_print_text(const struct fb *c, FILE *f)
{
	fprintf(f, "\n%-28s", "");
	for (int p = 0; p < FB_POLICIES; p++)
		if (c->run[p])
			fprintf(f, "%16s", fb_policy_def[p].name);
	fputc('\n', f);
	fb_row(f, c, "tainted_regions_pct", "%16.1f", get_tainted_pct, NULL);
	fb_row(f, c, "gig_pct_of_bound", "%16.1f", get_gig_pct, NULL);
	for (size_t i = 0; i < sizeof u64_rows / sizeof u64_rows[0]; i++)
		fb_row(f, c, u64_rows[i].label, "%16.0f", get_u64, u64_rows[i].off);
	for (uintptr_t k = 0; k < FB_CLASSES; k++) {
		char label[48];
		snprintf(label, sizeof label, "  failures %s", fb_mix[k].name);
		fb_row(f, c, label, "%16.0f", get_fails, (const void *)k);
	}
	for (uintptr_t k = 0; k < PA_MT_COUNT; k++) {
		char label[48];
		snprintf(label, sizeof label, "pageblocks %s", mt_name[k]);
		fb_row(f, c, label, "%16.0f", get_pageblocks, (const void *)k);
	}
	fb_row(f, c, "elapsed_s", "%16.1f", get_elapsed, NULL);
	for (int p = 0; p < FB_POLICIES; p++) {
		if (!c->run[p])
			continue;
		fprintf(f, "\n%s: boot \"%s\"\n", fb_policy_def[p].name, c->res[p].boot);
		for (unsigned k = 0; k < c->res[p].nr_stats; k++)
			fprintf(f, "  %-34s %" PRIu64 "\n", c->res[p].stat_name[k],
			        c->res[p].stat[k]);
	}
}

static void fb_print(const struct fb *c, FILE *f)
{
	struct bench_out o;
	bench_out_begin(&o, f, c->opt->json, "fragbench");
	char v[32];
	snprintf(v, sizeof v, "%g", c->unmovable_pct);
	bench_out_str(&o, "unmovable_pct", v);
	bench_out_u64(&o, "turnover", c->turnover);
	bench_out_u64(&o, "seed", c->seed);
	bench_out_f64(&o, "fill", FB_FILL);
	if (o.json) {
		for (int p = 0; p < FB_POLICIES; p++) {
			if (!c->run[p])
				continue;
			bench_out_open(&o, fb_policy_def[p].name);
			fb_print_json(&c->res[p], &o);
			bench_out_close(&o);
		}
	} else {
		fb_print_text(c, f);
	}
	bench_out_end(&o);
}

/* ---------------------------------------------------------------------- */
/* Entry                                                                    */
/* ---------------------------------------------------------------------- */

int bench_fragbench(const struct bench_opts *opt, struct pa_pool *given, FILE *out)
{
	(void)given; /* own_pool: one pool per policy */
	struct fb c = { .opt = opt };
	c.unmovable_pct = opt->unmovable_pct >= 0 ? opt->unmovable_pct : FB_UNMOVABLE;
	c.turnover = opt->turnover ? opt->turnover : FB_TURNOVER;
	c.seed = opt->seed_set ? opt->seed : FB_SEED;
	if (opt->compare && opt->policy) {
		fprintf(stderr,
		        "pagealloc: fragbench: --compare runs every policy; drop --policy\n");
		return 1;
	}
	if (opt->boot && opt->mem) {
		fprintf(stderr, "pagealloc: fragbench: --mem sizes the default boot line; put mem= "
		                "in --boot instead\n");
		return 1;
	}
	const char *only = opt->policy ? opt->policy : fb_policy_def[FB_SUPERBLOCK].name;
	for (int p = 0; p < FB_POLICIES; p++)
		c.run[p] = opt->compare || strcmp(only, fb_policy_def[p].name) == 0;
	fb_stream_init(&c.stream, c.unmovable_pct);
	unsigned steps = opt->compare ? FB_POLICIES : 1, step = 0;
	for (int p = 0; p < FB_POLICIES; p++) {
		if (!c.run[p])
			continue;
		bench_progress(fb_policy_def[p].name, (double)step / steps);
		if (fb_run_policy(&c, (enum fb_policy)p, step++, steps))
			return 1;
	}
	fb_print(&c, out);
	return 0;
}
