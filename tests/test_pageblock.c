/* SPDX-License-Identifier: MIT */
/*
 * Pageblocks: migratetype bits, Linux's fallback table,
 * claiming a whole pageblock versus stealing from it, moving a pageblock's
 * free pages between lists, and the HIGHATOMIC reserve.
 *
 * Most cases boot "mem=64M max_order=9": 32 pageblocks of 512 frames that are
 * also the largest blocks, so each pageblock starts as one free order-9 block
 * and every claim is of exactly one pageblock. min_free_kbytes=0 and
 * pcp_orders=none keep every free frame in the buddy lists.
 */
#include "test.h"
#include "helpers.h"

#include "platform/platform.h"
#include "buddy.h"
#include "memmap.h"
#include "pageblock.h"
#include "zone.h"

#define EXACT "min_free_kbytes=0 pcp_orders=none "
#define SMALL EXACT "mem=64M max_order=9"
#define PB    512u /* frames per pageblock at 4 KiB */

/* ---------------------------------------------------------------------- */
/* Helpers                                                                 */
/* ---------------------------------------------------------------------- */

static uint64_t pb_of(struct pa_pool *pool, pa_pfn_t pfn)
{
	return pfn >> pool->cfg.pageblock_order;
}

/* Pageblocks inside a zone whose type is mt. */
static unsigned count_pageblocks(struct pa_pool *pool, unsigned mt)
{
	unsigned n = 0;
	for (uint64_t i = 0; i < pool->nr_pageblocks; i++)
		if (pool->pb_zone[i] != 0xff &&
		    pageblock_mt(pool, i << pool->cfg.pageblock_order) == mt)
			n++;
	return n;
}

/* Frames on the free lists inside pageblock pb, and check they are all on list mt. */
static uint64_t free_in_pageblock(struct pa_pool *pool, uint64_t pb, unsigned mt)
{
	pa_pfn_t start = pb << pool->cfg.pageblock_order, end = start + PB;
	uint64_t n = 0;
	for (pa_pfn_t pfn = start; pfn < end;) {
		struct pa_page *p = pfn_page(pool, pfn);
		if (p->state == PS_FREE) {
			CHECK_MSG(p->mt == mt,
			          "free order-%u block at %" PRIu64 " is on list %u, not %u",
			          p->order, pfn, p->mt, mt);
			n += 1ull << p->order;
			pfn += 1ull << p->order;
		} else if (p->state == PS_ALLOC) {
			pfn += 1ull << p->order;
		} else {
			pfn++;
		}
	}
	return n;
}

/*
 * Walk every free list: each block is a free head of the list's order, its
 * mt field names the list, and every pageblock it covers has the list's type.
 * The lengths must match nr_free_mt and nr_free.
 */
static void check_lists_match_pageblock_types(struct pa_pool *pool)
{
	test_touch_all(pool); /* the descriptors of untouched memory, written */
	unsigned max_order = pool->cfg.max_order, pbo = pool->cfg.pageblock_order;
	for (unsigned z = 0; z < pool->nr_zones; z++) {
		struct pa_zone *zone = &pool->zones[z];
		for (unsigned o = 0; o <= max_order; o++) {
			uint64_t total = 0;
			for (unsigned mt = 0; mt < PA_MT_COUNT; mt++) {
				uint64_t n = 0, bad = 0;
				uint32_t pfn = (uint32_t)buddy_list_peek(zone, o, mt);
				while (pfn != PA_NIL && n <= pool->nr_frames) {
					struct pa_page *p = pfn_page(pool, pfn);
					bool ok =
					        p->state == PS_FREE && p->order == o && p->mt == mt;
					pa_pfn_t span = o >= pbo ? 1ull << o : 1;
					for (pa_pfn_t i = 0; ok && i < span; i += 1ull << pbo)
						ok = pageblock_mt(pool, pfn + i) == mt;
					if (!ok && bad++ < 3)
						test_fail(
						        __FILE__, __LINE__,
						        "zone %u list (order %u, mt %u): block %u has state %u order %u mt %u, pageblock type %u",
						        z, o, mt, pfn, p->state, p->order, p->mt,
						        pageblock_mt(pool, pfn));
					n++;
					pfn = p->lru.next;
				}
				CHECK_EQ_U64(n, zone_free_count(zone, o, mt));
				total += n;
			}
			CHECK_EQ_U64(total, zone_free_blocks(zone, o));
		}
	}
	VALIDATE(pool);
}

/* ---------------------------------------------------------------------- */
/* Boot                                                                    */
/* ---------------------------------------------------------------------- */

TEST(pageblock_every_pageblock_is_movable_at_boot)
{
	static const char *const lines[] = {
		SMALL,
		EXACT "mem=512M max_order=13",
		EXACT "mem=512M numa=2 max_order=10 memhole=100M-101M",
		EXACT "mem=256M movablecore=25%",
		EXACT "mem=64M max_order=10 pageblock_order_ceil=5",
	};
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		struct pa_pool *pool = test_boot(lines[i]);
		unsigned in_zones = 0;
		for (uint64_t b = 0; b < pool->nr_pageblocks; b++)
			in_zones += pool->pb_zone[b] != 0xff;
		CHECK_MSG(count_pageblocks(pool, PA_MT_MOVABLE) == in_zones,
		          "%s: %u of %u pageblocks movable", lines[i],
		          count_pageblocks(pool, PA_MT_MOVABLE), in_zones);
		check_lists_match_pageblock_types(pool);
		pa_shutdown(pool);
	}
}

/* ---------------------------------------------------------------------- */
/* Claiming                                                                */
/* ---------------------------------------------------------------------- */

TEST(pageblock_first_unmovable_allocation_claims_a_whole_pageblock)
{
	struct pa_pool *pool = test_boot(SMALL);
	REQUIRE(pool->cfg.pageblock_order == 9);
	uint64_t claim0 = vmstat(pool, "pgalloc_fallback_claim");
	uint64_t steal0 = vmstat(pool, "pgalloc_fallback_steal");
	pa_pfn_t u = must_alloc(pool, PA_GFP_KERNEL, 0);
	CHECK_EQ_U64(pageblock_mt(pool, u), PA_MT_UNMOVABLE);
	CHECK_EQ_U64(count_pageblocks(pool, PA_MT_UNMOVABLE), 1);
	CHECK_EQ_U64(count_pageblocks(pool, PA_MT_MOVABLE), 31);
	/* The rest of the pageblock moved to the UNMOVABLE lists. */
	CHECK_EQ_U64(free_in_pageblock(pool, pb_of(pool, u), PA_MT_UNMOVABLE), PB - 1);
	CHECK_EQ_U64(vmstat(pool, "pgalloc_fallback_claim"), claim0 + 1);
	CHECK_EQ_U64(vmstat(pool, "pgalloc_fallback_steal"), steal0);
	check_lists_match_pageblock_types(pool);
	pa_shutdown(pool);
}

/*
 * pa_pfn_migratetype() reads the type of the pageblock a pfn is in, as
 * pa_pageblock_info() reports it, and refuses a NULL pool or a pfn past
 * the pool.
 */
TEST(pageblock_pfn_migratetype_reads_the_pageblocks_type)
{
	struct pa_pool *pool = test_boot(SMALL);
	pa_pfn_t u = must_alloc(pool, PA_GFP_KERNEL, 0);
	pa_pfn_t m = must_alloc(pool, PA_GFP_MOVABLE, 0);
	CHECK_EQ_U64(pa_pfn_migratetype(pool, u), PA_MT_UNMOVABLE);
	CHECK_EQ_U64(pa_pfn_migratetype(pool, u | (PB - 1)), PA_MT_UNMOVABLE);
	CHECK_EQ_U64(pa_pfn_migratetype(pool, m), PA_MT_MOVABLE);
	for (uint64_t b = 0; b < pa_pageblock_count(pool); b++) {
		struct pa_pageblock_info info;
		REQUIRE(pa_pageblock_info(pool, b, &info) == 0);
		CHECK_EQ_U64(pa_pfn_migratetype(pool, info.start_pfn), info.mt);
	}
	CHECK(pa_pfn_migratetype(NULL, u) == -EINVAL);
	CHECK(pa_pfn_migratetype(pool, pool->nr_frames) == -ENOENT);
	pa_shutdown(pool);
}

TEST(pageblock_claim_of_a_block_larger_than_a_pageblock_retypes_all_its_pageblocks)
{
	static const unsigned max_orders[] = { 10, 12 };
	for (unsigned i = 0; i < 2; i++) {
		char line[128];
		snprintf(line, sizeof line, EXACT "mem=64M max_order=%u", max_orders[i]);
		struct pa_pool *pool = test_boot(line);
		REQUIRE(pool->cfg.pageblock_order == 9);
		unsigned per_block = 1u << (max_orders[i] - 9);
		pa_pfn_t u = must_alloc(pool, PA_GFP_KERNEL, 0);
		pa_pfn_t block = u & ~((1ull << max_orders[i]) - 1);
		CHECK_EQ_U64(count_pageblocks(pool, PA_MT_UNMOVABLE), per_block);
		for (unsigned k = 0; k < per_block; k++)
			CHECK_MSG(pageblock_mt(pool, block + (pa_pfn_t)k * PB) == PA_MT_UNMOVABLE,
			          "%s: pageblock %u of the claimed order-%u block is type %u", line,
			          k, max_orders[i], pageblock_mt(pool, block + (pa_pfn_t)k * PB));
		check_lists_match_pageblock_types(pool);
		pa_shutdown(pool);
	}
}

/* fallback_order caps what a claim retypes: Linux's order-10 reach in a max_order=12 pool. */
TEST(pageblock_claim_retypes_no_more_than_fallback_order)
{
	struct pa_pool *pool = test_boot(EXACT "mem=64M max_order=12 fallback_order=10");
	REQUIRE(pool->cfg.pageblock_order == 9 && pool->cfg.fallback_order == 10);
	pa_pfn_t u = must_alloc(pool, PA_GFP_KERNEL, 0);
	pa_pfn_t block = u & ~((1ull << 10) - 1);
	CHECK_EQ_U64(count_pageblocks(pool, PA_MT_UNMOVABLE), 2);
	CHECK_EQ_U64(pageblock_mt(pool, block), PA_MT_UNMOVABLE);
	CHECK_EQ_U64(pageblock_mt(pool, block + PB), PA_MT_UNMOVABLE);
	check_lists_match_pageblock_types(pool);
	pa_shutdown(pool);
}

TEST(pageblock_later_unmovable_allocations_come_from_the_claimed_pageblock)
{
	struct pa_pool *pool = test_boot(SMALL);
	pa_pfn_t u = must_alloc(pool, PA_GFP_KERNEL, 0);
	uint64_t pb = pb_of(pool, u);
	uint64_t claim = vmstat(pool, "pgalloc_fallback_claim");
	for (unsigned i = 1; i < PB; i++) {
		pa_pfn_t p = must_alloc(pool, PA_GFP_KERNEL, 0);
		if (pb_of(pool, p) != pb) {
			test_fail(
			        __FILE__, __LINE__,
			        "unmovable allocation %u left the claimed pageblock: pfn %" PRIu64,
			        i, p);
			break;
		}
	}
	CHECK_EQ_U64(count_pageblocks(pool, PA_MT_UNMOVABLE), 1);
	CHECK_EQ_U64(vmstat(pool, "pgalloc_fallback_claim"), claim);
	/* The pageblock is full: the next one claims another. */
	pa_pfn_t next = must_alloc(pool, PA_GFP_KERNEL, 0);
	CHECK(pb_of(pool, next) != pb);
	CHECK_EQ_U64(count_pageblocks(pool, PA_MT_UNMOVABLE), 2);
	CHECK_EQ_U64(vmstat(pool, "pgalloc_fallback_claim"), claim + 1);
	check_lists_match_pageblock_types(pool);
	pa_shutdown(pool);
}

TEST(pageblock_first_reclaimable_allocation_claims_a_reclaimable_pageblock)
{
	struct pa_pool *pool = test_boot(SMALL);
	pa_pfn_t r = must_alloc(pool, PA_GFP_RECLAIMABLE, 0);
	CHECK_EQ_U64(pageblock_mt(pool, r), PA_MT_RECLAIMABLE);
	CHECK_EQ_U64(count_pageblocks(pool, PA_MT_RECLAIMABLE), 1);
	pa_pfn_t r2 = must_alloc(pool, PA_GFP_RECLAIMABLE, 3);
	CHECK_EQ_U64(pb_of(pool, r2), pb_of(pool, r));
	CHECK_EQ_U64(count_pageblocks(pool, PA_MT_RECLAIMABLE), 1);
	check_lists_match_pageblock_types(pool);
	pa_shutdown(pool);
}

TEST(pageblock_movable_allocations_need_no_fallback_at_boot)
{
	struct pa_pool *pool = test_boot(SMALL);
	uint64_t claim = vmstat(pool, "pgalloc_fallback_claim");
	uint64_t steal = vmstat(pool, "pgalloc_fallback_steal");
	for (unsigned o = 0; o <= 9; o++)
		must_alloc(pool, PA_GFP_MOVABLE, o);
	CHECK_EQ_U64(count_pageblocks(pool, PA_MT_MOVABLE), 32);
	CHECK_EQ_U64(vmstat(pool, "pgalloc_fallback_claim"), claim);
	CHECK_EQ_U64(vmstat(pool, "pgalloc_fallback_steal"), steal);
	pa_shutdown(pool);
}

/* ---------------------------------------------------------------------- */
/* Stealing versus claiming for movable requests                           */
/* ---------------------------------------------------------------------- */

/* Take every free order-9 MOVABLE block: n of them. */
static void take_all_movable_pageblocks(struct pa_pool *pool, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		pa_pfn_t p = must_alloc(pool, PA_GFP_MOVABLE, 9);
		CHECK_EQ_U64(pageblock_mt(pool, p), PA_MT_MOVABLE);
	}
	CHECK_EQ_U64(zone_free_blocks(&pool->zones[0], 9), 0);
}

TEST(pageblock_small_movable_fallback_steals_without_retyping)
{
	struct pa_pool *pool = test_boot(SMALL);
	pa_pfn_t u = must_alloc(pool, PA_GFP_KERNEL, 0);
	uint64_t pu = pb_of(pool, u);
	/* Leave only free blocks of orders 0..3 (< pageblock_order / 2) in the unmovable pageblock. */
	for (unsigned o = 4; o <= 8; o++)
		CHECK_EQ_U64(pb_of(pool, must_alloc(pool, PA_GFP_KERNEL, o)), pu);
	CHECK_EQ_U64(free_in_pageblock(pool, pu, PA_MT_UNMOVABLE), 15);
	take_all_movable_pageblocks(pool, 31);

	uint64_t steal = vmstat(pool, "pgalloc_fallback_steal");
	uint64_t claim = vmstat(pool, "pgalloc_fallback_claim");
	pa_pfn_t m = must_alloc(pool, PA_GFP_MOVABLE, 0);
	CHECK_EQ_U64(pb_of(pool, m), pu);
	CHECK_EQ_U64(pageblock_mt(pool, u), PA_MT_UNMOVABLE);
	CHECK_EQ_U64(vmstat(pool, "pgalloc_fallback_steal"), steal + 1);
	CHECK_EQ_U64(vmstat(pool, "pgalloc_fallback_claim"), claim);
	/* The stolen frame goes back to the pageblock's (unmovable) list. */
	free_pfn(pool, m, 0);
	CHECK_EQ_U64(free_in_pageblock(pool, pu, PA_MT_UNMOVABLE), 15);
	check_lists_match_pageblock_types(pool);
	pa_shutdown(pool);
}

TEST(pageblock_movable_fallback_of_half_pageblock_order_claims_the_pageblock)
{
	struct pa_pool *pool = test_boot(SMALL);
	pa_pfn_t u = must_alloc(pool, PA_GFP_KERNEL, 0);
	uint64_t pu = pb_of(pool, u);
	take_all_movable_pageblocks(pool, 31);
	uint64_t claim = vmstat(pool, "pgalloc_fallback_claim");
	/* 511 of 512 frames free: at least half, so the pageblock changes hands. */
	pa_pfn_t m = must_alloc(pool, PA_GFP_MOVABLE, 9 / 2);
	CHECK_EQ_U64(pb_of(pool, m), pu);
	CHECK_EQ_U64(pageblock_mt(pool, u), PA_MT_MOVABLE);
	CHECK_EQ_U64(vmstat(pool, "pgalloc_fallback_claim"), claim + 1);
	CHECK_EQ_U64(free_in_pageblock(pool, pu, PA_MT_MOVABLE), PB - 1 - 16);
	check_lists_match_pageblock_types(pool);
	pa_shutdown(pool);
}

/* ---------------------------------------------------------------------- */
/* The fallback table: which type is tried first                           */
/* ---------------------------------------------------------------------- */

/*
 * Allocate every frame of the n MOVABLE pageblocks one by one, then free all
 * but one per pageblock: each MOVABLE pageblock keeps free blocks of orders
 * 0..8, as large as those of a freshly claimed pageblock, so the largest-first
 * search meets both fallback types at order 8 and the table decides.
 */
static void pin_one_frame_per_movable_pageblock(struct pa_pool *pool, unsigned n, uint64_t avoid1,
                                                uint64_t avoid2)
{
	pa_pfn_t *all = malloc((size_t)n * PB * sizeof *all);
	REQUIRE(all);
	uint8_t *kept = calloc(pool->nr_pageblocks, 1);
	REQUIRE(kept);
	for (unsigned i = 0; i < n * PB; i++) {
		all[i] = must_alloc(pool, PA_GFP_MOVABLE, 0);
		uint64_t pb = pb_of(pool, all[i]);
		CHECK(pb != avoid1 && pb != avoid2);
	}
	CHECK_EQ_U64(zone_free_count(&pool->zones[0], 0, PA_MT_MOVABLE), 0);
	for (unsigned i = 0; i < n * PB; i++) {
		uint64_t pb = pb_of(pool, all[i]);
		if (!kept[pb])
			kept[pb] = 1;
		else
			free_pfn(pool, all[i], 0);
	}
	free(kept);
	free(all);
	CHECK_EQ_U64(zone_free_blocks(&pool->zones[0], 9), 0);
	CHECK_EQ_U64(zone_free_count(&pool->zones[0], 8, PA_MT_MOVABLE), n);
}

TEST(pageblock_unmovable_falls_back_to_reclaimable_before_movable)
{
	struct pa_pool *pool = test_boot(SMALL);
	pa_pfn_t u = must_alloc(pool, PA_GFP_KERNEL, 0);
	pa_pfn_t r = must_alloc(pool, PA_GFP_RECLAIMABLE, 0);
	uint64_t pu = pb_of(pool, u), pr = pb_of(pool, r);
	REQUIRE(pu != pr);
	for (unsigned i = 1; i < PB; i++) /* fill the unmovable pageblock */
		CHECK_EQ_U64(pb_of(pool, must_alloc(pool, PA_GFP_KERNEL, 0)), pu);
	pin_one_frame_per_movable_pageblock(pool, 30, pu, pr);
	pa_pfn_t x = must_alloc(pool, PA_GFP_KERNEL, 0);
	CHECK_MSG(pb_of(pool, x) == pr,
	          "unmovable fallback went to pageblock %" PRIu64
	          " (type now %u), not the reclaimable one %" PRIu64,
	          pb_of(pool, x), pageblock_mt(pool, x), pr);
	/* 511 free of 512: the unmovable request claims it. */
	CHECK_EQ_U64(pageblock_mt(pool, r), PA_MT_UNMOVABLE);
	check_lists_match_pageblock_types(pool);
	pa_shutdown(pool);
}

TEST(pageblock_movable_falls_back_to_reclaimable_before_unmovable)
{
	struct pa_pool *pool = test_boot(SMALL);
	pa_pfn_t u = must_alloc(pool, PA_GFP_KERNEL, 0);
	pa_pfn_t r = must_alloc(pool, PA_GFP_RECLAIMABLE, 0);
	uint64_t pr = pb_of(pool, r);
	REQUIRE(pb_of(pool, u) != pr);
	take_all_movable_pageblocks(pool, 30);
	pa_pfn_t x = must_alloc(pool, PA_GFP_MOVABLE, 0);
	CHECK_MSG(pb_of(pool, x) == pr,
	          "movable fallback went to pageblock %" PRIu64
	          ", not the reclaimable one %" PRIu64,
	          pb_of(pool, x), pr);
	CHECK_EQ_U64(pageblock_mt(pool, u), PA_MT_UNMOVABLE);
	check_lists_match_pageblock_types(pool);
	pa_shutdown(pool);
}

TEST(pageblock_reclaimable_falls_back_to_unmovable_before_movable)
{
	struct pa_pool *pool = test_boot(SMALL);
	pa_pfn_t u = must_alloc(pool, PA_GFP_KERNEL, 0);
	uint64_t pu = pb_of(pool, u);
	pin_one_frame_per_movable_pageblock(pool, 31, pu, pu);
	pa_pfn_t x = must_alloc(pool, PA_GFP_RECLAIMABLE, 0);
	CHECK_MSG(pb_of(pool, x) == pu,
	          "reclaimable fallback went to pageblock %" PRIu64
	          ", not the unmovable one %" PRIu64,
	          pb_of(pool, x), pu);
	CHECK_EQ_U64(pageblock_mt(pool, u), PA_MT_RECLAIMABLE);
	check_lists_match_pageblock_types(pool);
	pa_shutdown(pool);
}

TEST(pageblock_every_type_can_use_the_last_free_frames_of_any_other)
{
	static const pa_gfp_t owner[] = { PA_GFP_KERNEL, PA_GFP_MOVABLE, PA_GFP_RECLAIMABLE };
	for (unsigned a = 0; a < 3; a++)
		for (unsigned b = 0; b < 3; b++) {
			if (a == b)
				continue;
			struct pa_pool *pool = test_boot(SMALL);
			/* Everything allocated as type a, then one frame of it freed. */
			pa_pfn_t last = 0;
			struct pa_page *page;
			uint64_t n = 0;
			while ((page = pa_alloc_pages(pool, owner[a] | PA_GFP_NOWARN, 0)) != NULL) {
				last = pa_page_to_pfn(pool, page);
				n++;
			}
			CHECK_EQ_U64(n, 16384);
			free_pfn(pool, last, 0);
			pa_pfn_t x = must_alloc(pool, owner[b], 0);
			CHECK_EQ_U64(x, last);
			check_lists_match_pageblock_types(pool);
			pa_shutdown(pool);
		}
}

TEST(pageblock_free_blocks_sit_on_the_list_of_their_pageblock_type)
{
	uint64_t seed = test_seed();
	printf("  seed=%" PRIu64 " (PA_TEST_SEED)\n", seed);
	fflush(stdout);
	static const char *const lines[] = { EXACT "mem=64M max_order=10",
		                             EXACT "mem=128M max_order=11 pageblock_order_ceil=6" };
	for (unsigned l = 0; l < 2; l++) {
		struct pa_pool *pool = test_boot(lines[l]);
		uint64_t rng = seed + l;
		struct {
			pa_pfn_t pfn;
			unsigned order;
		} *live = malloc(40000 * sizeof *live);
		REQUIRE(live);
		unsigned nr = 0;
		for (unsigned i = 0; i < 60000; i++) {
			if (nr && (rng_next(&rng) % 100 < 45 || nr == 40000)) {
				unsigned k = (unsigned)(rng_next(&rng) % nr);
				free_pfn(pool, live[k].pfn, live[k].order);
				live[k] = live[--nr];
				continue;
			}
			static const pa_gfp_t types[] = { PA_GFP_KERNEL, PA_GFP_MOVABLE,
				                          PA_GFP_RECLAIMABLE };
			unsigned order =
			        (unsigned)(rng_next(&rng) % 8 == 0 ?
			                           rng_next(&rng) % (pool->cfg.max_order + 1) :
			                           rng_next(&rng) % 3);
			struct pa_page *page = pa_alloc_pages(
			        pool, types[rng_next(&rng) % 3] | PA_GFP_NOWARN, order);
			if (page) {
				live[nr].pfn = pa_page_to_pfn(pool, page);
				live[nr++].order = order;
			}
			if (i % 5000 == 0)
				check_lists_match_pageblock_types(pool);
		}
		check_lists_match_pageblock_types(pool);
		CHECK(count_pageblocks(pool, PA_MT_UNMOVABLE) > 0);
		CHECK(count_pageblocks(pool, PA_MT_RECLAIMABLE) > 0);
		while (nr) {
			nr--;
			free_pfn(pool, live[nr].pfn, live[nr].order);
		}
		free(live);
		check_lists_match_pageblock_types(pool);
		pa_shutdown(pool);
	}
}

TEST(pageblock_move_free_moves_every_free_block_of_the_pageblock)
{
	struct pa_pool *pool = test_boot(SMALL);
	pa_pfn_t m = must_alloc(pool, PA_GFP_MOVABLE, 2);
	struct pa_zone *zone = zone_of_pfn(pool, m);
	REQUIRE(zone);
	pa_lock(&zone->lock, SITE_ADMIN);
	uint64_t moved = pageblock_move_free(zone, m, PA_MT_RECLAIMABLE);
	pageblock_set_mt(pool, m, PA_MT_RECLAIMABLE);
	pa_unlock(&zone->lock);
	CHECK_EQ_U64(moved, PB - 4);
	CHECK_EQ_U64(free_in_pageblock(pool, pb_of(pool, m), PA_MT_RECLAIMABLE), PB - 4);
	for (unsigned o = 2; o < 9; o++)
		CHECK_EQ_U64(zone_free_count(zone, o, PA_MT_RECLAIMABLE), 1);
	check_lists_match_pageblock_types(pool);
	/* A reclaimable request now needs no fallback. */
	uint64_t claim = vmstat(pool, "pgalloc_fallback_claim");
	CHECK_EQ_U64(pb_of(pool, must_alloc(pool, PA_GFP_RECLAIMABLE, 2)), pb_of(pool, m));
	CHECK_EQ_U64(vmstat(pool, "pgalloc_fallback_claim"), claim);
	pa_shutdown(pool);
}

/* ---------------------------------------------------------------------- */
/* HIGHATOMIC                                                              */
/* ---------------------------------------------------------------------- */

/*
 * Linux reserves a high-atomic pageblock only in the slow path, for a
 * request that may not reclaim (GFP_ATOMIC): these cases first bring the
 * zone's free frames outside the reserve down to `left` with movable
 * blocks (pressure_on), make their request, and give the blocks back
 * (pressure_off). linux=6.1: a 64 MiB zone is too small for a reserve from
 * 6.10 on.
 */
#define ATOMIC (PA_GFP_HIGH | PA_GFP_NOCOMPACT)
#define HA     SMALL " linux=6.1"

struct pressure {
	pa_pfn_t pfn[4096];
	unsigned order[4096];
	unsigned n;
};

static uint64_t free_outside_reserve(struct pa_zone *z)
{
	uint64_t n = zone_nr_free(z);
	for (unsigned o = 0; o <= z->pool->cfg.max_order; o++)
		n -= zone_free_count(z, o, PA_MT_HIGHATOMIC) << o;
	return n;
}

static void pressure_on(struct pa_pool *pool, uint64_t left, struct pressure *pr)
{
	struct pa_zone *z = &pool->zones[0];
	pr->n = 0;
	for (unsigned o = pool->cfg.max_order + 1; o-- > 0;)
		while (free_outside_reserve(z) >= left + (1ull << o) && pr->n < 4096) {
			struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, o);
			if (!p)
				break;
			pr->pfn[pr->n] = pa_page_to_pfn(pool, p);
			pr->order[pr->n++] = o;
		}
	CHECK_MSG(free_outside_reserve(z) <= left, "%" PRIu64 " frames free, wanted %" PRIu64,
	          free_outside_reserve(z), left);
}

static void pressure_off(struct pa_pool *pool, struct pressure *pr)
{
	while (pr->n--)
		free_pfn(pool, pr->pfn[pr->n], pr->order[pr->n]);
}

/* A GFP_ATOMIC request of order under pressure (16 frames left, the low watermark). */
static pa_pfn_t atomic_under_pressure(struct pa_pool *pool, pa_gfp_t gfp, unsigned order)
{
	static struct pressure pr;
	pressure_on(pool, 1ull << (order > 4 ? order : 4), &pr);
	pa_pfn_t h = must_alloc(pool, gfp | ATOMIC, order);
	pressure_off(pool, &pr);
	return h;
}

TEST(pageblock_high_order_gfp_high_allocation_reserves_a_highatomic_pageblock)
{
	struct pa_pool *pool = test_boot(HA);
	struct pa_zone *zone = &pool->zones[0];
	uint64_t res = vmstat(pool, "highatomic_reserve");
	/* With memory to spare, the request needs no reserve. */
	pa_free_pages(pool, pa_alloc_pages(pool, PA_GFP_KERNEL | ATOMIC, 1), 1);
	CHECK_EQ_U64(count_pageblocks(pool, PA_MT_HIGHATOMIC), 0);
	pa_pfn_t h = atomic_under_pressure(pool, PA_GFP_KERNEL, 1);
	CHECK_EQ_U64(pageblock_mt(pool, h), PA_MT_HIGHATOMIC);
	CHECK_EQ_U64(count_pageblocks(pool, PA_MT_HIGHATOMIC), 1);
	CHECK_EQ_U64(zone->nr_reserved_highatomic, PB);
	CHECK_EQ_U64(vmstat(pool, "highatomic_reserve"), res + 1);
	/* Its free frames moved to the HIGHATOMIC lists. */
	CHECK_EQ_U64(free_in_pageblock(pool, pb_of(pool, h), PA_MT_HIGHATOMIC), PB - 2);
	check_lists_match_pageblock_types(pool);
	pa_shutdown(pool);
}

/* Linux reserves the pageblock wherever the block came from: a CPU's list too. */
TEST(pageblock_high_order_atomic_served_by_a_list_reserves_its_pageblock)
{
	struct pa_pool *pool = test_boot(HA " nr_cpus=1");
	REQUIRE(pa_ctl_write(pool, "pcp/orders/1/enabled", "1") == 0);
	struct pa_page *p = pa_alloc_pages(pool, PA_GFP_KERNEL, 1);
	REQUIRE(p);
	pa_pfn_t listed = pa_page_to_pfn(pool, p);
	pa_free_pages(pool, p, 1); /* onto CPU 0's unmovable order-1 list */
	static struct pressure pr;
	pressure_on(pool, 16, &pr);
	p = pa_alloc_pages(pool, PA_GFP_KERNEL | ATOMIC, 1);
	REQUIRE(p);
	CHECK_EQ_U64(pa_page_to_pfn(pool, p), listed);
	CHECK_EQ_U64(pageblock_mt(pool, listed), PA_MT_HIGHATOMIC);
	CHECK_EQ_U64(count_pageblocks(pool, PA_MT_HIGHATOMIC), 1);
	pa_free_pages(pool, p, 1);
	REQUIRE(pa_ctl_write(pool, "pcp/drain", "1") == 0);
	pressure_off(pool, &pr);
	pa_shutdown(pool);
}

TEST(pageblock_order0_gfp_high_allocation_reserves_nothing)
{
	struct pa_pool *pool = test_boot(HA);
	pa_pfn_t h = atomic_under_pressure(pool, PA_GFP_KERNEL, 0);
	CHECK(pageblock_mt(pool, h) != PA_MT_HIGHATOMIC);
	CHECK_EQ_U64(count_pageblocks(pool, PA_MT_HIGHATOMIC), 0);
	CHECK_EQ_U64(pool->zones[0].nr_reserved_highatomic, 0);
	pa_shutdown(pool);
}

TEST(pageblock_highatomic_reserve_serves_later_high_requests)
{
	struct pa_pool *pool = test_boot(HA);
	pa_pfn_t h = atomic_under_pressure(pool, PA_GFP_KERNEL, 1);
	uint64_t res = vmstat(pool, "highatomic_reserve");
	for (unsigned o = 1; o <= 4; o++) {
		pa_pfn_t p = atomic_under_pressure(pool, PA_GFP_MOVABLE, o);
		CHECK_MSG(pb_of(pool, p) == pb_of(pool, h),
		          "high order-%u request at pfn %" PRIu64
		          " missed the reserve at pageblock %" PRIu64,
		          o, p, pb_of(pool, h));
	}
	CHECK_EQ_U64(count_pageblocks(pool, PA_MT_HIGHATOMIC), 1);
	CHECK_EQ_U64(vmstat(pool, "highatomic_reserve"), res);
	check_lists_match_pageblock_types(pool);
	pa_shutdown(pool);
}

TEST(pageblock_normal_requests_use_the_highatomic_reserve_only_when_memory_runs_out)
{
	/* Linux 7.2: a zone of 128 pageblocks may reserve; its free pages count as free. */
	struct pa_pool *pool = test_boot(EXACT "mem=256M max_order=9");
	pa_pfn_t h = atomic_under_pressure(pool, PA_GFP_KERNEL, 1);
	uint64_t ph = pb_of(pool, h);
	uint64_t unres = vmstat(pool, "highatomic_unreserve");
	uint64_t got = 2;
	struct pa_usage u;
	pa_get_usage(pool, &u);
	const uint64_t managed = u.managed;
	/* While frames outside the reserve are free, nothing comes from it. */
	for (;;) {
		pa_get_usage(pool, &u);
		if (u.free <= PB - 2)
			break;
		static const pa_gfp_t types[] = { PA_GFP_MOVABLE, PA_GFP_KERNEL,
			                          PA_GFP_RECLAIMABLE };
		pa_pfn_t p = must_alloc(pool, types[got % 3], 0);
		got++;
		if (pb_of(pool, p) == ph) {
			test_fail(__FILE__, __LINE__,
			          "normal request took pfn %" PRIu64
			          " from the reserve with %" PRIu64 " frames free elsewhere",
			          p, u.free - (PB - 2));
			break;
		}
	}
	CHECK_EQ_U64(pageblock_mt(pool, h), PA_MT_HIGHATOMIC);
	CHECK_EQ_U64(vmstat(pool, "highatomic_unreserve"), unres);
	/* Now only the reserve is left: normal requests still succeed, to the last frame. */
	struct pa_page *page;
	while ((page = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 0)) != NULL) {
		CHECK_EQ_U64(pb_of(pool, pa_page_to_pfn(pool, page)), ph);
		got++;
	}
	CHECK_EQ_U64(got, managed);
	CHECK(vmstat(pool, "highatomic_unreserve") >= unres + 1);
	CHECK(pageblock_mt(pool, h) != PA_MT_HIGHATOMIC);
	CHECK_EQ_U64(pool->zones[0].nr_reserved_highatomic, 0);
	check_lists_match_pageblock_types(pool);
	pa_shutdown(pool);
}

TEST(pageblock_highatomic_reserve_is_capped_near_one_percent_of_the_zone)
{
	struct pa_pool *pool = test_boot(EXACT "mem=1G max_order=9");
	struct pa_zone *zone = &pool->zones[0];
	uint64_t managed = zone->managed_pages;
	/* Each whole-pageblock high allocation empties the reserve, so the next one reserves more. */
	for (unsigned i = 0; i < 40; i++) {
		static struct pressure pr;
		/* One free order-9 block outside the reserve: below the low watermark. */
		pressure_on(pool, PB, &pr);
		must_alloc(pool, PA_GFP_KERNEL | ATOMIC, 9);
		pressure_off(pool, &pr);
	}
	unsigned n = count_pageblocks(pool, PA_MT_HIGHATOMIC);
	printf("  %u HIGHATOMIC pageblocks (%u frames) of %" PRIu64 " managed\n", n, n * PB,
	       managed);
	CHECK_EQ_U64(zone->nr_reserved_highatomic, (uint64_t)n * PB);
	CHECK_MSG((uint64_t)n * PB >= managed / 100, "reserve %u frames is under 1%% of %" PRIu64,
	          n * PB, managed);
	CHECK_MSG((uint64_t)n * PB <= managed / 100 + 2 * PB,
	          "reserve %u frames is over 1%% of %" PRIu64 " + a pageblock", n * PB, managed);
	check_lists_match_pageblock_types(pool);
	pa_shutdown(pool);
}

/*
 * A free block over pageblocks of two types is reported with the pageblock
 * that disagrees and that pageblock's type, not the head's.
 */
TEST(pageblock_validate_names_the_pageblock_that_disagrees_and_its_type)
{
	struct pa_pool *pool = test_boot(EXACT "mem=64M max_order=10");
	pa_pfn_t head = 2048; /* a free order-10 block of two Movable pageblocks */
	REQUIRE(page_state(pfn_page(pool, head)) == PS_FREE &&
	        page_order(pfn_page(pool, head)) == 10);
	pageblock_set_mt(pool, head + PB, PA_MT_UNMOVABLE);
	char err[512] = "";
	CHECK(pa_validate(pool, err, sizeof err) == -EFAULT);
	CHECK_MSG(strstr(err, "on the Movable list") && strstr(err, "pfn 2560 of type Unmovable"),
	          "validate said: %s", err);
	pageblock_set_mt(pool, head + PB, PA_MT_MOVABLE);
	VALIDATE(pool);
	pa_shutdown(pool);
}
