/* SPDX-License-Identifier: MIT */
/*
 * Model-based random test.
 *
 * A seeded stream of allocations (orders 0..max_order, weighted toward small
 * ones; unmovable, movable and reclaimable, folios sometimes, bulk sometimes,
 * THISNODE on NUMA pools) and frees of random live blocks, checked against a
 * shadow model: a bitmap of frames that are busy (allocated, a hole, or
 * outside every zone) and the list of live blocks.
 *
 * - Every allocation must be naturally aligned, inside one allowed zone, and
 *   cover only frames the model has free.
 * - Every failure must be justified: with min_free_kbytes=0, no per-CPU lists
 *   and no PA_GFP_HIGH, the buddy merges fully, so a naturally aligned run of
 *   2^order free frames inside an allowed zone means a free block exists and
 *   the allocation must not fail.
 * - pa_get_usage() agrees with the model after every operation; pa_validate()
 *   runs every 4096 operations; at the end everything is freed and each zone
 *   must hold only the maximal aligned blocks (the full merge).
 *
 * The fill level swings in phases (35%, 90%, 35%, near empty), so that both
 * near-full failures and max-order allocations (which need a wholly free
 * max-order block) happen.
 *
 * ops = 1,000,000 * PA_TEST_SCALE per configuration. PA_TEST_SEED replays a run.
 */
#include "test.h"
#include "helpers.h"

#include "platform/platform.h"
#include "memmap.h"

#define EXACT          "min_free_kbytes=0 pcp_orders=none "
#define VALIDATE_EVERY 4096

/* ---------------------------------------------------------------------- */
/* The model                                                               */
/* ---------------------------------------------------------------------- */

struct mzone {
	pa_pfn_t start, end;
	unsigned node;
	enum pa_zone_type type;
};

struct block {
	pa_pfn_t pfn;
	uint8_t order;
	uint8_t comp;
};

struct model {
	struct pa_pool *pool;
	unsigned max_order;
	unsigned nr_cpus, nr_nodes;
	unsigned cpu; /* the CPU the platform reports */
	pa_pfn_t nr_frames;
	uint64_t *busy; /* bit set: allocated, a hole, or outside every zone */
	uint64_t nr_words;
	unsigned nr_zones;
	struct mzone zones[PA_MAX_NODES * PA_ZONE_COUNT];
	struct block *live;
	size_t nr_live, cap;
	uint64_t allocated, managed;
	uint64_t op; /* index of the current operation, for messages */
	uint64_t seed;
	/* Tallies for the closing line. */
	uint64_t n_alloc, n_fail, n_free, n_bulk, n_bulk_blocks, n_max_order, peak;
};

static unsigned cpu_of_model(void *ctx)
{
	return ((const struct model *)ctx)->cpu;
}

#define MFAIL(m, ...)                                                                              \
	do {                                                                                       \
		test_fail(__FILE__, __LINE__, __VA_ARGS__);                                        \
		test_fail(__FILE__, __LINE__, "  at operation %" PRIu64 ", seed %" PRIu64,         \
		          (m)->op, (m)->seed);                                                     \
		test_abort_case();                                                                 \
	} while (0)

static bool bit_test(const struct model *m, pa_pfn_t pfn)
{
	return (m->busy[pfn >> 6] >> (pfn & 63)) & 1;
}

/* Are the 2^order frames at pfn (naturally aligned) all free in the model? */
static bool range_free(const struct model *m, pa_pfn_t pfn, unsigned order)
{
	if (order < 6) {
		uint64_t mask = ((1ull << (1u << order)) - 1) << (pfn & 63);
		return (m->busy[pfn >> 6] & mask) == 0;
	}
	for (uint64_t w = pfn >> 6, n = 1ull << (order - 6); n; n--, w++)
		if (m->busy[w])
			return false;
	return true;
}

static void range_set(struct model *m, pa_pfn_t pfn, unsigned order, bool busy)
{
	if (order < 6) {
		uint64_t mask = ((1ull << (1u << order)) - 1) << (pfn & 63);
		if (busy)
			m->busy[pfn >> 6] |= mask;
		else
			m->busy[pfn >> 6] &= ~mask;
		return;
	}
	memset(&m->busy[pfn >> 6], busy ? 0xff : 0, (size_t)8 << (order - 6));
}

/* Bits at positions that are multiples of 2^order, for order < 6. */
static uint64_t aligned_bits(unsigned order)
{
	static const uint64_t masks[6] = {
		~0ull,
		0x5555555555555555ull,
		0x1111111111111111ull,
		0x0101010101010101ull,
		0x0001000100010001ull,
		0x0000000100000001ull,
	};
	return masks[order];
}

/* Is there a naturally aligned run of 2^order free frames in [start, end)? O((end-start)/64). */
static bool zone_has_free_run(const struct model *m, const struct mzone *z, unsigned order)
{
	uint64_t w0 = z->start >> 6, w1 = z->end >> 6;
	if (order < 6) {
		for (uint64_t w = w0; w < w1; w++) {
			uint64_t f = ~m->busy[w];
			for (unsigned i = 0; i < order; i++)
				f &= f >> (1u << i);
			if (f & aligned_bits(order))
				return true;
		}
		return false;
	}
	uint64_t k = 1ull << (order - 6);
	for (uint64_t w = (w0 + k - 1) & ~(k - 1); w + k <= w1; w += k) {
		uint64_t i = 0;
		while (i < k && m->busy[w + i] == 0)
			i++;
		if (i == k)
			return true;
	}
	return false;
}

/* Which zones may serve gfp, as the allocator's zonelists and zone modifiers say. */
static bool zone_allowed(const struct model *m, const struct mzone *z, pa_gfp_t gfp)
{
	if (z->type == PA_ZONE_MOVABLE && !(gfp & PA_GFP_MOVABLE))
		return false;
	if (gfp & PA_GFP_THISNODE)
		return z->node == m->cpu * m->nr_nodes / m->nr_cpus;
	return true;
}

static const struct mzone *zone_of(const struct model *m, pa_pfn_t pfn)
{
	for (unsigned i = 0; i < m->nr_zones; i++)
		if (pfn >= m->zones[i].start && pfn < m->zones[i].end)
			return &m->zones[i];
	return NULL;
}

static void model_init(struct model *m, const char *cmdline, uint64_t seed)
{
	memset(m, 0, sizeof *m);
	m->seed = seed;
	struct pa_platform plat;
	memset(&plat, 0, sizeof plat);
	plat.ctx = m;
	plat.cpu_id = cpu_of_model;
	m->pool = test_boot_on(cmdline, &plat);
	struct pa_config cfg;
	pa_get_config(m->pool, &cfg);
	REQUIRE(cfg.page_shift == 12);
	m->max_order = cfg.max_order;
	m->nr_cpus = cfg.nr_cpus;
	m->nr_nodes = cfg.nr_nodes;
	m->nr_frames = cfg.total_pages;
	m->nr_words = (m->nr_frames + 63) / 64;
	m->busy = malloc(m->nr_words * sizeof *m->busy);
	REQUIRE(m->busy);
	memset(m->busy, 0xff, m->nr_words * sizeof *m->busy);

	/* Zones from the pool; present frames inside them start free. */
	struct pa_pool *pool = m->pool;
	REQUIRE(pool->nr_zones <= sizeof m->zones / sizeof m->zones[0]);
	for (unsigned i = 0; i < pool->nr_zones; i++) {
		struct pa_zone *z = &pool->zones[i];
		struct mzone *mz = &m->zones[m->nr_zones++];
		mz->start = z->start_pfn;
		mz->end = z->end_pfn;
		mz->node = z->node;
		mz->type = z->type;
		REQUIRE(mz->start % 64 == 0 && mz->end % 64 == 0); /* pageblock aligned */
		for (pa_pfn_t pfn = mz->start; pfn < mz->end; pfn++)
			if (pa_pfn_to_page(pool, pfn)) {
				m->busy[pfn >> 6] &= ~(1ull << (pfn & 63));
				m->managed++;
			}
	}
	struct pa_usage u;
	pa_get_usage(pool, &u);
	CHECK_EQ_U64(u.managed, m->managed);
	CHECK_EQ_U64(u.allocated, 0);
	m->cap = (size_t)m->managed;
	m->live = malloc(m->cap * sizeof *m->live);
	REQUIRE(m->live);
}

static void model_destroy(struct model *m)
{
	pa_shutdown(m->pool);
	free(m->busy);
	free(m->live);
}

/* ---------------------------------------------------------------------- */
/* Checked operations                                                      */
/* ---------------------------------------------------------------------- */

static void on_alloc(struct model *m, struct pa_page *page, pa_gfp_t gfp, unsigned order)
{
	struct pa_pool *pool = m->pool;
	pa_pfn_t pfn = pa_page_to_pfn(pool, page);
	pa_pfn_t n = 1ull << order;
	if (pfn == PA_PFN_INVALID || pfn + n > m->nr_frames)
		MFAIL(m, "order-%u allocation returned a page outside the pool (pfn %" PRIu64 ")",
		      order, pfn);
	if (pfn & (n - 1))
		MFAIL(m, "order-%u block at pfn %" PRIu64 " is not naturally aligned", order, pfn);
	const struct mzone *z = zone_of(m, pfn);
	if (!z || pfn + n > z->end)
		MFAIL(m, "order-%u block at pfn %" PRIu64 " is not inside one zone", order, pfn);
	if (!zone_allowed(m, z, gfp))
		MFAIL(m,
		      "order-%u block at pfn %" PRIu64
		      " (gfp %#x, cpu %u) is in zone type %u of node %u",
		      order, pfn, gfp, m->cpu, z->type, z->node);
	if (!range_free(m, pfn, order)) {
		pa_pfn_t bad = pfn;
		while (!bit_test(m, bad) && bad < pfn + n)
			bad++;
		MFAIL(m,
		      "order-%u block at pfn %" PRIu64 " overlaps frame %" PRIu64 ", which is %s",
		      order, pfn, bad, pa_pfn_to_page(pool, bad) ? "allocated" : "a hole");
	}
	struct pa_page *head = pfn_page(pool, pfn);
	if (head->state != PS_ALLOC || head->order != order)
		MFAIL(m,
		      "allocated head at pfn %" PRIu64
		      " has state %u order %u, want PS_ALLOC order %u",
		      pfn, head->state, head->order, order);
	range_set(m, pfn, order, true);
	REQUIRE(m->nr_live < m->cap);
	m->live[m->nr_live].pfn = pfn;
	m->live[m->nr_live].order = (uint8_t)order;
	m->live[m->nr_live].comp = (gfp & PA_GFP_COMP) != 0;
	m->nr_live++;
	m->allocated += n;
	m->n_alloc++;
	if (order == m->max_order)
		m->n_max_order++;
	if (m->allocated > m->peak)
		m->peak = m->allocated;
}

/* A failure (or a bulk request that got nothing) must have had no free aligned run. */
static void on_fail(struct model *m, pa_gfp_t gfp, unsigned order)
{
	m->n_fail++;
	for (unsigned i = 0; i < m->nr_zones; i++) {
		const struct mzone *z = &m->zones[i];
		if (zone_allowed(m, z, gfp) && zone_has_free_run(m, z, order))
			MFAIL(m,
			      "order-%u allocation (gfp %#x, cpu %u) failed although zone %u [%" PRIu64
			      ", %" PRIu64 ") has a free aligned run (model: %" PRIu64
			      " of %" PRIu64 " frames allocated)",
			      order, gfp, m->cpu, i, z->start, z->end, m->allocated, m->managed);
	}
}

static pa_gfp_t random_gfp(struct model *m, uint64_t *rng)
{
	uint64_t r = rng_next(rng) % 100;
	pa_gfp_t gfp = r < 40 ? PA_GFP_MOVABLE : r < 75 ? PA_GFP_KERNEL : PA_GFP_RECLAIMABLE;
	if (rng_next(rng) % 5 == 0)
		gfp |= PA_GFP_COMP;
	if (m->nr_nodes > 1 && rng_next(rng) % 5 == 0)
		gfp |= PA_GFP_THISNODE;
	return gfp | PA_GFP_NOWARN;
}

/* Weighted toward small orders, max_order included. */
static unsigned random_order(struct model *m, uint64_t *rng)
{
	uint64_t r = rng_next(rng) % 100;
	unsigned max = m->max_order;
	if (r < 45)
		return 0;
	if (r < 70)
		return max < 3 ? max : (unsigned)(1 + rng_next(rng) % 3);
	if (r < 92)
		return (unsigned)(rng_next(rng) % (max + 1));
	unsigned below = (unsigned)(rng_next(rng) % 3);
	return below > max ? max : max - below;
}

static void do_alloc(struct model *m, uint64_t *rng)
{
	pa_gfp_t gfp = random_gfp(m, rng);
	unsigned order = random_order(m, rng);
	m->cpu = (unsigned)(rng_next(rng) % m->nr_cpus);
	struct pa_page *page = pa_alloc_pages(m->pool, gfp, order);
	if (!page) {
		on_fail(m, gfp, order);
		return;
	}
	on_alloc(m, page, gfp, order);
	if ((gfp & PA_GFP_COMP) && order > 0) {
		pa_pfn_t pfn = pa_page_to_pfn(m->pool, page);
		pa_pfn_t tail = pfn + 1 + rng_next(rng) % ((1ull << order) - 1);
		if (pa_folio_head(m->pool, pa_pfn_to_page(m->pool, tail)) != page)
			MFAIL(m,
			      "frame %" PRIu64 " of the order-%u folio at %" PRIu64
			      " does not know its head",
			      tail, order, pfn);
	}
}

static void do_bulk(struct model *m, uint64_t *rng)
{
	struct pa_page *out[32];
	pa_gfp_t gfp = random_gfp(m, rng) & ~PA_GFP_COMP;
	unsigned order = (unsigned)(rng_next(rng) % 4);
	if (order > m->max_order)
		order = m->max_order;
	unsigned nr = 1 + (unsigned)(rng_next(rng) % 32);
	m->cpu = (unsigned)(rng_next(rng) % m->nr_cpus);
	unsigned got = pa_alloc_pages_bulk(m->pool, gfp, order, nr, out);
	if (got > nr)
		MFAIL(m, "bulk of %u returned %u", nr, got);
	m->n_bulk++;
	m->n_bulk_blocks += got;
	for (unsigned i = 0; i < got; i++)
		on_alloc(m, out[i], gfp, order);
	if (got == 0)
		on_fail(m, gfp, order);
}

static void free_live(struct model *m, size_t k)
{
	struct block b = m->live[k];
	struct pa_page *page = pa_pfn_to_page(m->pool, b.pfn);
	if (pa_folio_order(m->pool, page) != b.order)
		MFAIL(m, "live order-%u block at %" PRIu64 " reads as order %d", b.order, b.pfn,
		      pa_folio_order(m->pool, page));
	pa_free_pages(m->pool, page, b.order);
	if (pfn_page(m->pool, b.pfn)->state == PS_ALLOC)
		MFAIL(m, "order-%u block at %" PRIu64 " is still allocated after pa_free_pages",
		      b.order, b.pfn);
	range_set(m, b.pfn, b.order, false);
	m->allocated -= 1ull << b.order;
	m->live[k] = m->live[--m->nr_live];
	m->n_free++;
}

static void check_usage(struct model *m)
{
	struct pa_usage u;
	pa_get_usage(m->pool, &u);
	if (u.allocated != m->allocated || u.managed != m->managed ||
	    u.free + u.allocated + u.reserved != u.managed)
		MFAIL(m,
		      "usage: managed %" PRIu64 " free %" PRIu64 " allocated %" PRIu64
		      " reserved %" PRIu64 "; the model has %" PRIu64 " of %" PRIu64 " allocated",
		      u.managed, u.free, u.allocated, u.reserved, m->allocated, m->managed);
}

static void validate(struct model *m)
{
	char err[512];
	if (pa_validate(m->pool, err, sizeof err) != 0)
		MFAIL(m, "pa_validate: %s", err);
}

/* After everything is freed: only maximal aligned blocks, zone by zone. */
static void check_full_merge(struct model *m)
{
	struct pa_pool *pool = m->pool;
	for (unsigned i = 0; i < pool->nr_zones; i++) {
		struct pa_zone *z = &pool->zones[i];
		uint64_t expect[64] = { 0 };
		pa_pfn_t pfn = z->start_pfn;
		while (pfn < z->end_pfn) {
			if (bit_test(m, pfn)) { /* a hole */
				pfn++;
				continue;
			}
			pa_pfn_t end = pfn;
			while (end < z->end_pfn && !bit_test(m, end))
				end++;
			while (pfn < end) {
				unsigned o = 0;
				while (o < m->max_order && pfn % (2ull << o) == 0 &&
				       pfn + (2ull << o) <= end)
					o++;
				struct pa_page *h = pfn_page(pool, pfn);
				if (h->state != PS_FREE || h->order != o)
					MFAIL(m,
					      "after freeing everything: expected a free order-%u block at %" PRIu64
					      ", found state %u order %u",
					      o, pfn, h->state, h->order);
				expect[o]++;
				pfn += 1ull << o;
			}
		}
		for (unsigned o = 0; o <= m->max_order; o++)
			if (zone_free_blocks(z, o) != expect[o])
				MFAIL(m,
				      "after freeing everything: zone %u nr_free[%u] = %" PRIu64
				      ", want %" PRIu64,
				      i, o, zone_free_blocks(z, o), expect[o]);
	}
}

/* ---------------------------------------------------------------------- */
/* The run                                                                 */
/* ---------------------------------------------------------------------- */

static void run_model(const char *cmdline, double base_ops)
{
	uint64_t seed = test_seed();
	printf("  seed=%" PRIu64 " (set PA_TEST_SEED to replay) boot: %s\n", seed, cmdline);
	fflush(stdout);
	struct model *m = malloc(sizeof *m);
	REQUIRE(m);
	model_init(m, cmdline, seed);
	uint64_t rng = seed;
	uint64_t ops = (uint64_t)(base_ops * test_scale());
	if (ops < 1000)
		ops = 1000;
	uint64_t phase_ops = ops / 40 > 500 ? ops / 40 : 500; /* 25,000 at scale 1 */
	for (m->op = 0; m->op < ops; m->op++) {
		static const double targets[4] = { 0.35, 0.90, 0.35, 0.0 };
		double target = targets[(m->op / phase_ops) % 4];
		double fill = (double)m->allocated / (double)m->managed;
		unsigned p_alloc = fill < target ? 65 : 25;
		if (m->nr_live == 0 || rng_next(&rng) % 100 < p_alloc) {
			if (rng_next(&rng) % 32 == 0)
				do_bulk(m, &rng);
			else
				do_alloc(m, &rng);
		} else {
			free_live(m, (size_t)(rng_next(&rng) % m->nr_live));
		}
		check_usage(m);
		if (m->op % VALIDATE_EVERY == VALIDATE_EVERY - 1)
			validate(m);
	}
	validate(m);
	while (m->nr_live)
		free_live(m, (size_t)(rng_next(&rng) % m->nr_live));
	check_usage(m);
	check_full_merge(m);
	validate(m);
	printf("  %" PRIu64 " ops: %" PRIu64 " allocations (%" PRIu64 " of max order %u), %" PRIu64
	       " justified failures, %" PRIu64 " frees, %" PRIu64 " bulk calls (%" PRIu64
	       " blocks); peak %.1f%% of %" PRIu64 " frames\n",
	       ops, m->n_alloc, m->n_max_order, m->max_order, m->n_fail, m->n_free, m->n_bulk,
	       m->n_bulk_blocks, 100.0 * (double)m->peak / (double)m->managed, m->managed);
	/* Coverage, not correctness: a short run (sanitizer scale) may not get there. */
	if (test_scale() >= 1) {
		CHECK_MSG(m->n_fail > 0, "the run never failed an allocation");
		CHECK_MSG(m->n_max_order > 0, "the run never allocated a max-order block");
	}
	model_destroy(m);
	free(m);
}

TEST(random_model_mem64m_max_order10)
{
	run_model(EXACT "mem=64M max_order=10", 1e6);
}

TEST(random_model_mem512m_max_order13_memhole_movablecore)
{
	run_model(EXACT
	          "mem=512M max_order=13 memhole=200M-232M memhole=307200K-307400K movablecore=25%",
	          1e6);
}

TEST(random_model_numa2_thisnode)
{
	run_model(EXACT "mem=256M numa=2 nr_cpus=2 max_order=11", 1e6);
}

TEST(random_model_max_order18_across_sections)
{
	run_model(EXACT "mem=1G max_order=18", 3e5);
}

/* The same stream with the allocator's own debug asserts on (lock owners, block checks). */
TEST(random_model_debug_asserts_on)
{
	run_model(EXACT "mem=64M max_order=10 debug=2 memhole=20M-21M", 2e5);
}
