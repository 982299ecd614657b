/* SPDX-License-Identifier: MIT */
/*
 * Pageblock isolation: isolation_start() / isolation_undo()
 * / isolation_range_free() of src/isolation.c.
 *
 * What is proved here: a range becomes isolated at pageblock granularity
 * (the isolate bit on, the type underneath kept, the neighbours untouched),
 * its free blocks move to the ISOLATE lists and nothing is ever allocated
 * from them, frees into it stay there (never on a per-CPU list), every CPU's
 * per-CPU lists are drained, a free block that straddles the range edge is
 * cut into pageblocks, a second isolation of any part is -EBUSY and changes
 * nothing, and undoing restores the types and merges the free memory as fully
 * as a freshly booted pool's (also at small pageblock orders). pa_validate
 * passes at every step.
 */
#include "test.h"
#include "helpers.h"

#include "platform/platform.h"
#include "isolation.h"
#include "memmap.h"
#include "pageblock.h"
#include "minijson.h"

#define QUIET "kcompactd=manual pcp_orders=none min_free_kbytes=0 "

/* ---------------------------------------------------------------------- */
/* Helpers                                                                 */
/* ---------------------------------------------------------------------- */

static uint64_t pbf(const struct pa_pool *pool)
{
	return 1ull << pool->cfg.pageblock_order;
}

/* Free frames on the (any order, mt) lists of zone z. */
static uint64_t free_on(struct pa_pool *pool, struct pa_zone *z, unsigned mt)
{
	uint64_t n = 0;
	pa_lock(&z->lock, SITE_ADMIN);
	for (unsigned o = 0; o <= pool->cfg.max_order; o++)
		n += zone_free_count(z, o, mt) << o;
	pa_unlock(&z->lock);
	return n;
}

static uint64_t nr_free_blocks(struct pa_zone *z, unsigned order, unsigned mt)
{
	pa_lock(&z->lock, SITE_ADMIN);
	uint64_t n = zone_free_count(z, order, mt);
	pa_unlock(&z->lock);
	return n;
}

/* The free block that covers pfn: its head, order and list; false if pfn is not free. */
static bool free_block_at(struct pa_pool *pool, struct pa_zone *z, pa_pfn_t pfn, pa_pfn_t *head,
                          unsigned *order, unsigned *mt)
{
	pa_lock(&z->lock, SITE_ADMIN);
	pa_pfn_t h = memmap_block_head(pool, pfn);
	bool ok = h != PA_NIL && page_state(pfn_page(pool, h)) == PS_FREE;
	if (ok) {
		*head = h;
		*order = pfn_page(pool, h)->order;
		*mt = pfn_page(pool, h)->mt;
	}
	pa_unlock(&z->lock);
	return ok;
}

static bool range_free_isolated(struct pa_zone *z, pa_pfn_t s, pa_pfn_t e)
{
	pa_lock(&z->lock, SITE_ADMIN);
	bool r = isolation_range_free(z, s, e);
	pa_unlock(&z->lock);
	return r;
}

/* Frames of [s, e) that are heads of blocks on a per-CPU list. */
static uint64_t pcp_heads_in(struct pa_pool *pool, pa_pfn_t s, pa_pfn_t e)
{
	uint64_t n = 0;
	for (pa_pfn_t p = s; p < e; p++)
		n += page_state(pfn_page(pool, p)) == PS_PCP;
	return n;
}

static uint64_t pcp_frames(struct pa_pool *pool)
{
	uint64_t n = 0;
	for (unsigned z = 0; z < pool->nr_zones; z++)
		for (unsigned c = 0; c < pool->cfg.nr_cpus; c++) {
			struct pa_pcp_info info;
			if (pa_pcp_info(pool, pool->zones[z].node, pool->zones[z].type, c, &info,
			                NULL) == 0)
				n += info.count;
		}
	return n;
}

/* ---------------------------------------------------------------------- */
/* Bits, lists, straddling blocks                                          */
/* ---------------------------------------------------------------------- */

TEST(isolation_sets_bits_keeps_type_and_moves_free_blocks_to_isolate_lists)
{
	const char *cmd = QUIET "mem=64M";
	struct pa_pool *pool = test_boot(cmd);
	struct pa_zone *z = &pool->zones[0];
	uint64_t pb = pbf(pool);
	REQUIRE(pool->cfg.pageblock_order == 9 && pool->cfg.max_order == 10);
	/* Pageblocks 5 and 6: each half of a different order-10 free block. */
	pa_pfn_t s = 5 * pb + 100, e = 6 * pb + 10;
	REQUIRE(isolation_start(z, s, e) == 0);
	for (unsigned b = 3; b <= 8; b++) {
		bool in = b == 5 || b == 6;
		CHECK_MSG(pageblock_mt(pool, b * pb) == (in ? PA_MT_ISOLATE : PA_MT_MOVABLE),
		          "pageblock %u: type %u", b, pageblock_mt(pool, b * pb));
		CHECK_EQ_U64(pageblock_base_mt(pool, b * pb), PA_MT_MOVABLE);
	}
	/* Both straddling order-10 blocks were cut into pageblocks. */
	for (unsigned b = 4; b <= 7; b++) {
		pa_pfn_t head = 0;
		unsigned order = 0, mt = 0;
		REQUIRE(free_block_at(pool, z, b * pb + 7, &head, &order, &mt));
		CHECK_EQ_U64(head, b * pb);
		CHECK_EQ_U64(order, 9);
		CHECK_EQ_U64(mt, (b == 5 || b == 6) ? PA_MT_ISOLATE : PA_MT_MOVABLE);
	}
	CHECK_EQ_U64(nr_free_blocks(z, 9, PA_MT_ISOLATE), 2);
	CHECK_EQ_U64(free_on(pool, z, PA_MT_ISOLATE), 2 * pb);
	CHECK(range_free_isolated(z, 5 * pb, 7 * pb));
	CHECK(range_free_isolated(z, s, e));
	CHECK(!range_free_isolated(z, 5 * pb - 1, 5 * pb + 1)); /* pageblock 4 is not isolated */
	CHECK(!range_free_isolated(z, 7 * pb - 1, 7 * pb + 1)); /* nor pageblock 7 */
	CHECK_EQ_U64(json_blocks(pool, "Isolate"), 2);
	CHECK_EQ_U64(json_blocks(pool, "Movable"), 30);
	/* Isolated free frames stay free frames: nothing was taken or lost. */
	struct pa_usage u = usage(pool);
	CHECK_EQ_U64(u.free, u.managed);
	VALIDATE(pool);
	isolation_undo(z, s, e);
	for (unsigned b = 3; b <= 8; b++)
		CHECK_EQ_U64(pageblock_mt(pool, b * pb), PA_MT_MOVABLE);
	CHECK_EQ_U64(free_on(pool, z, PA_MT_ISOLATE), 0);
	CHECK_EQ_U64(json_blocks(pool, "Isolate"), 0);
	expect_as_fresh(pool, cmd);
	pa_shutdown(pool);
}

TEST(isolation_of_whole_max_order_blocks_and_zone_edges)
{
	const char *cmd = QUIET "mem=64M";
	struct pa_pool *pool = test_boot(cmd);
	struct pa_zone *z = &pool->zones[0];
	uint64_t pb = pbf(pool), n = pool->nr_frames;
	/* The first and the last frame: pageblock 0 and the last pageblock. */
	REQUIRE(isolation_start(z, 0, 1) == 0);
	REQUIRE(isolation_start(z, n - 1, n) == 0);
	CHECK_EQ_U64(pageblock_mt(pool, 0), PA_MT_ISOLATE);
	CHECK_EQ_U64(pageblock_mt(pool, pb), PA_MT_MOVABLE);
	CHECK_EQ_U64(pageblock_mt(pool, n - 1), PA_MT_ISOLATE);
	CHECK_EQ_U64(pageblock_mt(pool, n - pb - 1), PA_MT_MOVABLE);
	CHECK_EQ_U64(free_on(pool, z, PA_MT_ISOLATE), 2 * pb);
	VALIDATE(pool);
	/* Two whole order-10 blocks: all four pageblocks on the ISOLATE lists, the neighbours not. */
	REQUIRE(isolation_start(z, 4 * pb, 8 * pb) == 0);
	CHECK_EQ_U64(free_on(pool, z, PA_MT_ISOLATE), 6 * pb);
	CHECK_EQ_U64(pageblock_mt(pool, 3 * pb), PA_MT_MOVABLE);
	CHECK_EQ_U64(pageblock_mt(pool, 8 * pb), PA_MT_MOVABLE);
	for (unsigned b = 4; b < 8; b++) {
		pa_pfn_t head = 0;
		unsigned order = 0, mt = 0;
		REQUIRE(free_block_at(pool, z, b * pb + 3, &head, &order, &mt));
		CHECK_EQ_U64(mt, PA_MT_ISOLATE);
	}
	VALIDATE(pool);
	isolation_undo(z, 4 * pb, 8 * pb);
	isolation_undo(z, n - 1, n);
	isolation_undo(z, 0, 1);
	VALIDATE(pool);
	expect_as_fresh(pool, cmd);
	pa_shutdown(pool);
}

/* ---------------------------------------------------------------------- */
/* Nothing is allocated from an isolated range                             */
/* ---------------------------------------------------------------------- */

struct held {
	struct pa_page **p;
	unsigned *order;
	size_t n, cap;
};

static void held_push(struct held *h, struct pa_page *p, unsigned order)
{
	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 1024;
		h->p = realloc(h->p, h->cap * sizeof *h->p);
		h->order = realloc(h->order, h->cap * sizeof *h->order);
		REQUIRE(h->p && h->order);
	}
	h->p[h->n] = p;
	h->order[h->n++] = order;
}

static void held_free_all(struct pa_pool *pool, struct held *h)
{
	for (size_t i = 0; i < h->n; i++)
		pa_free_pages(pool, h->p[i], h->order[i]);
	free(h->p);
	free(h->order);
	memset(h, 0, sizeof *h);
}

/* Allocate with gfp at order until it fails; count what landed in [s, e). */
static uint64_t drain_pool(struct pa_pool *pool, struct held *h, pa_gfp_t gfp, unsigned order,
                           pa_pfn_t s, pa_pfn_t e)
{
	uint64_t inside = 0;
	struct pa_page *p;
	while ((p = pa_alloc_pages(pool, gfp | PA_GFP_NOWARN, order))) {
		pa_pfn_t pfn = pa_page_to_pfn(pool, p);
		if (pfn + (1ull << order) > s && pfn < e)
			inside++;
		held_push(h, p, order);
	}
	return inside;
}

TEST(isolation_isolated_frames_are_never_allocated)
{
	/* Per-CPU lists on, the default watermarks off so that everything else can be taken. */
	const char *cmd = "kcompactd=manual min_free_kbytes=0 mem=64M";
	struct pa_pool *pool = test_boot(cmd);
	struct pa_zone *z = &pool->zones[0];
	uint64_t pb = pbf(pool);
	/* Fill the per-CPU lists first, so that the drain at isolation matters. */
	struct held h = { 0 };
	for (int i = 0; i < 200; i++)
		held_push(&h, pa_alloc_pages(pool, PA_GFP_MOVABLE, 0), 0);
	held_free_all(pool, &h);
	pa_pfn_t s = 11 * pb + 300, e = 14 * pb + 1; /* pageblocks 11..14 */
	pa_pfn_t fs = 11 * pb, fe = 15 * pb;
	REQUIRE(isolation_start(z, s, e) == 0);
	CHECK_EQ_U64(pcp_heads_in(pool, fs, fe), 0);
	CHECK(range_free_isolated(z, fs, fe));
	VALIDATE(pool);
	uint64_t inside = 0;
	inside += drain_pool(pool, &h, PA_GFP_MOVABLE, 3, fs, fe);
	inside += drain_pool(pool, &h, PA_GFP_KERNEL, 2, fs, fe);
	inside += drain_pool(pool, &h, PA_GFP_MOVABLE, 0, fs, fe);
	inside += drain_pool(pool, &h, PA_GFP_KERNEL, 0, fs, fe);
	inside += drain_pool(pool, &h, PA_GFP_RECLAIMABLE, 0, fs, fe);
	inside += drain_pool(pool, &h, PA_GFP_HIGH, 0, fs, fe);
	for (unsigned o = 0; o <= pool->cfg.max_order; o++)
		inside += drain_pool(pool, &h, PA_GFP_MOVABLE, o, fs, fe);
	CHECK_MSG(inside == 0, "%" PRIu64 " allocations were handed frames of the isolated range",
	          inside);
	/* Everything outside the range was handed out; the range is all that is free. */
	pa_drain_all(pool);
	struct pa_usage u = usage(pool);
	CHECK_EQ_U64(u.free, fe - fs);
	CHECK_EQ_U64(u.allocated, u.managed - (fe - fs));
	CHECK_EQ_U64(free_on(pool, z, PA_MT_ISOLATE), fe - fs);
	CHECK(range_free_isolated(z, fs, fe));
	VALIDATE(pool);
	held_free_all(pool, &h);
	VALIDATE(pool);
	isolation_undo(z, s, e);
	expect_as_fresh(pool, cmd);
	pa_shutdown(pool);
}

/* ---------------------------------------------------------------------- */
/* Frees into an isolated range                                            */
/* ---------------------------------------------------------------------- */

TEST(isolation_frees_into_isolated_blocks_stay_isolated_off_the_pcp_lists)
{
	const char *cmd = "kcompactd=manual min_free_kbytes=0 mem=64M";
	struct pa_pool *pool = test_boot(cmd);
	struct pa_zone *z = &pool->zones[0];
	uint64_t pb = pbf(pool), n = pool->nr_frames;
	/* Every frame allocated as an order-0 movable block, indexed by pfn. */
	struct pa_page **by_pfn = calloc(n, sizeof *by_pfn);
	REQUIRE(by_pfn);
	struct pa_page *p;
	uint64_t got = 0;
	while ((p = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 0))) {
		by_pfn[pa_page_to_pfn(pool, p)] = p;
		got++;
	}
	CHECK_EQ_U64(got, n);
	pa_pfn_t fs = 8 * pb, fe = 10 * pb; /* one order-10 block's pageblocks */
	REQUIRE(isolation_start(z, fs, fe) == 0);
	CHECK(!range_free_isolated(z, fs, fe));
	VALIDATE(pool);
	/* Free the range in a scattered order; each free goes to the ISOLATE lists. */
	uint64_t freed = 0;
	for (uint64_t k = 0; k < fe - fs; k++) {
		pa_pfn_t pfn = fs + (k * 389) % (fe - fs); /* 389 is prime to 1024 */
		pa_free_pages(pool, by_pfn[pfn], 0);
		by_pfn[pfn] = NULL;
		freed++;
		if (k % 97 == 0) {
			CHECK_EQ_U64(pcp_frames(pool), 0);
			CHECK_EQ_U64(free_on(pool, z, PA_MT_ISOLATE), freed);
			CHECK_EQ_U64(free_on(pool, z, PA_MT_MOVABLE), 0);
		}
	}
	CHECK_EQ_U64(pcp_heads_in(pool, fs, fe), 0);
	CHECK_EQ_U64(pcp_frames(pool), 0);
	CHECK(range_free_isolated(z, fs, fe));
	/* The frees merged inside the isolated pageblocks, up to the order-10 block. */
	CHECK_EQ_U64(nr_free_blocks(z, 10, PA_MT_ISOLATE), 1);
	CHECK_EQ_U64(free_on(pool, z, PA_MT_ISOLATE), fe - fs);
	VALIDATE(pool);
	/* Nothing allocatable: the only free memory is isolated. */
	CHECK(pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 0) == NULL);
	CHECK(pa_alloc_pages(pool, PA_GFP_KERNEL | PA_GFP_NOWARN, 0) == NULL);
	CHECK(pa_alloc_pages(pool, PA_GFP_HIGH | PA_GFP_NOWARN, 0) == NULL);
	/* A free next to the range (pageblock 7) is usable at once, and is what is handed out. */
	pa_free_pages(pool, by_pfn[fs - 1], 0);
	by_pfn[fs - 1] = NULL;
	p = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 0);
	CHECK(p && pa_page_to_pfn(pool, p) == fs - 1);
	if (p)
		by_pfn[fs - 1] = p;
	VALIDATE(pool);
	/* Undo: the isolated order-10 block is movable memory again. */
	isolation_undo(z, fs, fe);
	CHECK_EQ_U64(free_on(pool, z, PA_MT_ISOLATE), 0);
	CHECK_EQ_U64(nr_free_blocks(z, 10, PA_MT_MOVABLE), 1);
	p = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 10);
	CHECK(p && pa_page_to_pfn(pool, p) == fs);
	if (p)
		pa_free_pages(pool, p, 10);
	VALIDATE(pool);
	for (pa_pfn_t pfn = 0; pfn < n; pfn++)
		if (by_pfn[pfn])
			pa_free_pages(pool, by_pfn[pfn], 0);
	free(by_pfn);
	expect_as_fresh(pool, cmd);
	pa_shutdown(pool);
}

/* ---------------------------------------------------------------------- */
/* Every CPU's lists are drained                                           */
/* ---------------------------------------------------------------------- */

TEST(isolation_drains_every_cpus_per_cpu_lists)
{
	const char *cmd = "kcompactd=manual min_free_kbytes=0 mem=64M nr_cpus=4";
	struct pa_platform plat = { .cpu_id = fake_cpu_id };
	struct pa_pool *pool = test_boot_on(cmd, &plat);
	struct pa_zone *z = &pool->zones[0];
	uint64_t pb = pbf(pool);
	/* Each CPU allocates and frees a few blocks: they stay on its lists. */
	struct held h = { 0 };
	for (unsigned cpu = 0; cpu < 4; cpu++) {
		fake_cpu = cpu;
		for (int i = 0; i < 40; i++)
			held_push(&h,
			          pa_alloc_pages(pool, i % 2 ? PA_GFP_MOVABLE : PA_GFP_KERNEL,
			                         i % 3 ? 0 : 2),
			          i % 3 ? 0 : 2);
		for (size_t i = 0; i < h.n; i++)
			pa_free_pages(pool, h.p[i], h.order[i]);
		h.n = 0;
		struct pa_pcp_info info;
		REQUIRE(pa_pcp_info(pool, 0, z->type, cpu, &info, NULL) == 0);
		CHECK_MSG(info.count > 0, "cpu %u holds nothing on its lists", cpu);
	}
	held_free_all(pool, &h);
	fake_cpu = 0;
	/* Isolate every pageblock that holds a per-CPU block. */
	pa_pfn_t lo = PA_NIL, hi = 0;
	for (pa_pfn_t p = 0; p < pool->nr_frames; p++)
		if (page_state(pfn_page(pool, p)) == PS_PCP) {
			lo = p < lo ? p : lo;
			hi = p + 1;
		}
	REQUIRE(lo != PA_NIL);
	pa_pfn_t fs = lo & ~(pb - 1), fe = (hi + pb - 1) & ~(pb - 1);
	REQUIRE(isolation_start(z, lo, hi) == 0);
	for (unsigned cpu = 0; cpu < 4; cpu++) {
		struct pa_pcp_info info;
		REQUIRE(pa_pcp_info(pool, 0, z->type, cpu, &info, NULL) == 0);
		CHECK_MSG(info.count == 0, "cpu %u still holds %" PRIu64 " frames", cpu,
		          info.count);
	}
	CHECK_EQ_U64(pcp_heads_in(pool, 0, pool->nr_frames), 0);
	CHECK_EQ_U64(usage(pool).reserved, 0);
	CHECK(range_free_isolated(z, fs, fe));
	CHECK_EQ_U64(free_on(pool, z, PA_MT_ISOLATE), fe - fs);
	VALIDATE(pool);
	/* A free from any CPU into the range skips that CPU's lists. */
	isolation_undo(z, lo, hi);
	struct pa_page *blocks[4];
	for (unsigned cpu = 0; cpu < 4; cpu++) {
		fake_cpu = cpu;
		blocks[cpu] = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0);
		REQUIRE(blocks[cpu]);
	}
	pa_drain_all(pool);
	pa_pfn_t bl = PA_NIL, bh = 0;
	for (unsigned cpu = 0; cpu < 4; cpu++) {
		pa_pfn_t pfn = pa_page_to_pfn(pool, blocks[cpu]);
		bl = pfn < bl ? pfn : bl;
		bh = pfn + 1 > bh ? pfn + 1 : bh;
	}
	REQUIRE(isolation_start(z, bl, bh) == 0);
	for (unsigned cpu = 0; cpu < 4; cpu++) {
		fake_cpu = cpu;
		pa_free_pages(pool, blocks[cpu], 0);
	}
	CHECK_EQ_U64(pcp_frames(pool), 0);
	CHECK(range_free_isolated(z, bl & ~(pb - 1), (bh + pb - 1) & ~(pb - 1)));
	VALIDATE(pool);
	isolation_undo(z, bl, bh);
	fake_cpu = 0;
	expect_as_fresh(pool, cmd);
	pa_shutdown(pool);
}

/* ---------------------------------------------------------------------- */
/* Isolating twice                                                         */
/* ---------------------------------------------------------------------- */

TEST(isolation_twice_is_ebusy_and_changes_nothing)
{
	const char *cmd = QUIET "mem=64M";
	struct pa_pool *pool = test_boot(cmd);
	struct pa_zone *z = &pool->zones[0];
	uint64_t pb = pbf(pool);
	pa_pfn_t s = 6 * pb + 17, e = 7 * pb + 3; /* pageblocks 6 and 7 */
	REQUIRE(isolation_start(z, s, e) == 0);
	VALIDATE(pool);
	char *bi = report(pool, PA_REPORT_BUDDYINFO, 0);
	char *pti = report(pool, PA_REPORT_PAGETYPEINFO, 0);
	const pa_pfn_t again[][2] = {
		{ s, e },               /* the same range */
		{ 6 * pb, 6 * pb + 1 }, /* one frame of it */
		{ 7 * pb + 500, 7 * pb + 501 },
		{ 4 * pb, 6 * pb + 1 }, /* pageblocks 4 and 5 free, 6 taken */
		{ 7 * pb + 1, 9 * pb }, /* 7 taken, 8 free: 8 must not be touched */
		{ 0, pool->nr_frames }, /* the whole zone */
	};
	for (size_t i = 0; i < sizeof again / sizeof again[0]; i++) {
		int rc = isolation_start(z, again[i][0], again[i][1]);
		CHECK_MSG(rc == -EBUSY,
		          "isolation_start(%" PRIu64 ", %" PRIu64 ") = %d, expected -EBUSY",
		          again[i][0], again[i][1], rc);
		char *bi2 = report(pool, PA_REPORT_BUDDYINFO, 0);
		char *pti2 = report(pool, PA_REPORT_PAGETYPEINFO, 0);
		CHECK_MSG(strcmp(bi, bi2) == 0 && strcmp(pti, pti2) == 0,
		          "a refused isolation changed the lists:\n%s\n%s", pti, pti2);
		free(bi2);
		free(pti2);
		for (unsigned b = 0; b < pool->nr_frames / pb; b++)
			CHECK_EQ_U64(pageblock_mt(pool, b * pb),
			             b == 6 || b == 7 ? PA_MT_ISOLATE : PA_MT_MOVABLE);
		VALIDATE(pool);
	}
	free(bi);
	free(pti);
	/* Once undone, the range can be isolated again. */
	isolation_undo(z, s, e);
	REQUIRE(isolation_start(z, 4 * pb, 6 * pb + 1) == 0);
	isolation_undo(z, 4 * pb, 6 * pb + 1);
	expect_as_fresh(pool, cmd);
	pa_shutdown(pool);
}

/* ---------------------------------------------------------------------- */
/* Undo: types back, free memory merged                                    */
/* ---------------------------------------------------------------------- */

TEST(isolation_undo_restores_unmovable_movable_and_cma_types)
{
	const char *cmd = QUIET "mem=64M cma=4M";
	struct pa_pool *pool = test_boot(cmd);
	struct pa_zone *z = &pool->zones[0];
	uint64_t pb = pbf(pool), nb = pool->nr_frames / pb;
	struct pa_cma_info ci;
	REQUIRE(pa_cma_get(pool, 0, &ci) == 0);
	REQUIRE(ci.start_pfn == (nb - 2) * pb && ci.nr_pages == 2 * pb);
	/* An unmovable allocation claims a whole free order-10 block; freed, it stays unmovable. */
	struct pa_page *k = pa_alloc_pages(pool, PA_GFP_KERNEL, 0);
	REQUIRE(k);
	pa_pfn_t kb = pa_page_to_pfn(pool, k) / pb;
	pa_free_pages(pool, k, 0);
	REQUIRE(pageblock_mt(pool, kb * pb) == PA_MT_UNMOVABLE);
	unsigned before[64];
	REQUIRE(nb <= 64);
	for (unsigned b = 0; b < nb; b++)
		before[b] = pageblock_mt(pool, b * pb);
	CHECK_EQ_U64(before[nb - 1], PA_MT_CMA);
	CHECK_EQ_U64(before[nb - 2], PA_MT_CMA);
	/*
	 * One range over the unmovable order-10 block and the pageblock below it,
	 * one from the pageblock below the CMA area into the area.
	 */
	pa_pfn_t kb0 = kb & ~1ull;
	REQUIRE(kb0 >= 1 && kb0 + 2 <= nb - 2);
	pa_pfn_t r[2][2] = { { (kb0 - 1) * pb + 1, (kb0 + 2) * pb - 3 },
		             { (nb - 3) * pb + 5, (nb - 1) * pb + 1 } };
	if (kb0 + 2 > nb - 3)
		r[1][0] = (kb0 + 2) * pb; /* the unmovable block lies just below the area */
	unsigned types_seen = 0;
	for (unsigned b = 0; b < nb; b++)
		types_seen |= 1u << before[b];
	CHECK_EQ_U64(types_seen,
	             (1u << PA_MT_UNMOVABLE) | (1u << PA_MT_MOVABLE) | (1u << PA_MT_CMA));
	for (int i = 0; i < 2; i++)
		if (r[i][1] > r[i][0])
			REQUIRE(isolation_start(z, r[i][0], r[i][1]) == 0);
	VALIDATE(pool);
	for (unsigned b = 0; b < nb; b++) {
		bool in = false;
		for (int i = 0; i < 2; i++)
			in |= r[i][1] > r[i][0] && b * pb + pb > r[i][0] && b * pb < r[i][1];
		CHECK_MSG(pageblock_mt(pool, b * pb) == (in ? PA_MT_ISOLATE : before[b]),
		          "pageblock %u: type %u while isolated", b, pageblock_mt(pool, b * pb));
		CHECK_MSG(pageblock_base_mt(pool, b * pb) == before[b],
		          "pageblock %u lost its type %u", b, before[b]);
	}
	for (int i = 0; i < 2; i++)
		if (r[i][1] > r[i][0])
			isolation_undo(z, r[i][0], r[i][1]);
	for (unsigned b = 0; b < nb; b++)
		CHECK_MSG(pageblock_mt(pool, b * pb) == before[b],
		          "pageblock %u: type %u after undo, was %u", b, pageblock_mt(pool, b * pb),
		          before[b]);
	CHECK_EQ_U64(free_on(pool, z, PA_MT_CMA), ci.nr_pages);
	CHECK_EQ_U64(free_on(pool, z, PA_MT_ISOLATE), 0);
	VALIDATE(pool);
	expect_as_fresh(pool, cmd);
	pa_shutdown(pool);
}

/*
 * The ceiling makes pageblocks smaller than half a max-order block: a
 * single isolated pageblock cuts its max-order block into many pageblocks,
 * and undoing must merge them all back.
 */
TEST(isolation_undo_merges_fully_at_small_pageblock_orders)
{
	static const char *const cmds[] = {
		QUIET "mem=64M pageblock_order_ceil=1",
		QUIET "mem=64M pageblock_order_ceil=7",
		QUIET "mem=64M pageblock_order_ceil=9",
		QUIET "mem=128M page_shift=14 pageblock_order_ceil=7",
	};
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		fprintf(stderr, "  %s\n", cmds[i]);
		struct pa_pool *pool = test_boot(cmds[i]);
		struct pa_zone *z = &pool->zones[0];
		uint64_t pb = pbf(pool), maxb = 1ull << pool->cfg.max_order;
		/* One pageblock in the middle of the third max-order block. */
		pa_pfn_t s = 2 * maxb + maxb / 2 + 1;
		pa_pfn_t fs = s & ~(pb - 1);
		REQUIRE(isolation_start(z, s, s + 1) == 0);
		CHECK_EQ_U64(pageblock_mt(pool, fs), PA_MT_ISOLATE);
		CHECK_EQ_U64(pageblock_mt(pool, fs - 1), PA_MT_MOVABLE);
		CHECK_EQ_U64(pageblock_mt(pool, fs + pb), PA_MT_MOVABLE);
		CHECK_EQ_U64(free_on(pool, z, PA_MT_ISOLATE), pb);
		VALIDATE(pool);
		isolation_undo(z, s, s + 1);
		CHECK_EQ_U64(pageblock_mt(pool, fs), PA_MT_MOVABLE);
		expect_as_fresh(pool, cmds[i]);
		pa_shutdown(pool);
	}
}

/* ---------------------------------------------------------------------- */
/* Two isolations side by side (two contiguous allocations at once)       */
/* ---------------------------------------------------------------------- */

/*
 * Pageblocks X and Y = X + 1 pageblock are buddies at the pageblock order.
 * One contiguous allocation isolates X, another Y; a free block spanning
 * both then forms on the ISOLATE lists (either way: a freed order-10 block,
 * or two halves merging). Undoing either isolation must give back its own
 * pageblock only: the other stays isolated, its frames on the ISOLATE list,
 * out of every allocation's reach.
 */
static void two_isolations(bool freed_whole, bool upper_first)
{
	const char *cmd = QUIET "mem=64M";
	struct pa_pool *pool = test_boot(cmd);
	struct pa_zone *z = &pool->zones[0];
	uint64_t pb = pbf(pool);
	pa_pfn_t X;
	struct pa_page *big = NULL, *half = NULL;
	struct held h = { 0 };
	if (freed_whole) {
		big = pa_alloc_pages(pool, PA_GFP_MOVABLE, 10);
		REQUIRE(big);
		X = pa_page_to_pfn(pool, big);
	} else {
		/* Everything allocated as pageblocks; all freed again but the one at X. */
		struct pa_page *p;
		while ((p = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 9)))
			held_push(&h, p, 9);
		for (size_t i = 0; i < h.n; i++) {
			pa_pfn_t pfn = pa_page_to_pfn(pool, h.p[i]);
			if (!half && pfn % (2 * pb) == (upper_first ? 0 : pb) && pfn >= 4 * pb) {
				half = h.p[i];
				continue;
			}
			pa_free_pages(pool, h.p[i], 9);
		}
		REQUIRE(half);
		X = pa_page_to_pfn(pool, half) & ~(2 * pb - 1);
	}
	pa_pfn_t Y = X + pb;
	/* "first" is undone first, "second" must stay isolated. */
	pa_pfn_t first = upper_first ? Y : X, second = upper_first ? X : Y;
	fprintf(stderr, "  %s, pageblock %" PRIu64 " undone first, %" PRIu64 " kept\n",
	        freed_whole ? "an order-10 block freed" : "two halves merged", first / pb,
	        second / pb);
	REQUIRE(isolation_start(z, X + 3, X + 4) == 0);
	REQUIRE(isolation_start(z, Y + 7, Y + 8) == 0);
	if (big)
		pa_free_pages(pool, big, 10);
	else
		pa_free_pages(pool, half,
		              9); /* merges with its buddy's free pageblock, both isolated */
	CHECK(range_free_isolated(z, X, Y + pb));
	VALIDATE(pool);
	isolation_undo(z, first + 5, first + 6);
	CHECK_EQ_U64(pageblock_mt(pool, first), PA_MT_MOVABLE);
	CHECK_EQ_U64(pageblock_mt(pool, second), PA_MT_ISOLATE);
	CHECK_MSG(
	        range_free_isolated(z, second, second + pb),
	        "the pageblock still isolated left the ISOLATE list when its neighbour's isolation was undone");
	CHECK_EQ_U64(free_on(pool, z, PA_MT_ISOLATE), pb);
	CHECK_MSG(free_on(pool, z, PA_MT_MOVABLE) >= pb,
	          "the undone pageblock is not movable memory again");
	char err[512];
	int rc = pa_validate(pool, err, sizeof err);
	CHECK_MSG(rc == 0, "after the first undo: %s", err);
	/* Nothing of the pageblock still isolated can be allocated. */
	for (unsigned o = 10; o-- > 0;) {
		struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, o);
		if (!p)
			continue;
		pa_pfn_t pfn = pa_page_to_pfn(pool, p);
		CHECK_MSG(pfn + (1ull << o) <= second || pfn >= second + pb,
		          "an order-%u allocation got pfn %" PRIu64
		          ", inside a pageblock still isolated",
		          o, pfn);
		pa_free_pages(pool, p, o);
		break;
	}
	isolation_undo(z, second + 7, second + 8);
	free(h.p);
	free(h.order);
	VALIDATE(pool);
	expect_as_fresh(pool, cmd);
	pa_shutdown(pool);
}

TEST(isolation_undo_leaves_a_neighbours_isolation_alone_block_freed_whole)
{
	two_isolations(true, false);
	two_isolations(true, true);
}

TEST(isolation_undo_leaves_a_neighbours_isolation_alone_halves_merged)
{
	two_isolations(false, false);
	two_isolations(false, true);
}
