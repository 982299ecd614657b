/* SPDX-License-Identifier: MIT */
/*
 * Buddy layer and the full-merge test (item 11).
 *
 * Every pool boots with min_free_kbytes=0 and pcp_orders=none, so that every
 * managed frame sits in the buddy free lists and the list state can be
 * predicted exactly.
 *
 * The central oracle is check_full_merge(): when every frame of a zone is
 * free, its free blocks must be exactly the greedy decomposition of each run
 * of present frames into maximal naturally aligned blocks of order <=
 * max_order (the unique fixpoint of buddy merging), and merging must never
 * cross a hole, an absent section, a zone or a node boundary.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif
#include "test.h"
#include "helpers.h"

#include "platform/platform.h"
#include "buddy.h"
#include "memmap.h"
#include "pageblock.h"

#include <time.h>

#define EXACT "min_free_kbytes=0 pcp_orders=none "

/* ---------------------------------------------------------------------- */
/* Helpers                                                                 */
/* ---------------------------------------------------------------------- */

static struct pa_config config_of(struct pa_pool *pool)
{
	struct pa_config cfg;
	pa_get_config(pool, &cfg);
	return cfg;
}

static pa_pfn_t pfn_of(struct pa_pool *pool, struct pa_page *page)
{
	return pa_page_to_pfn(pool, page);
}

static uint64_t nr_free_total(struct pa_pool *pool, unsigned order)
{
	uint64_t n = 0;
	for (unsigned z = 0; z < pool->nr_zones; z++)
		n += zone_free_blocks(&pool->zones[z], order);
	return n;
}

/* Largest order o <= max with pfn aligned to 2^o and pfn + 2^o <= end. */
static unsigned greedy_order(pa_pfn_t pfn, pa_pfn_t end, unsigned max_order)
{
	unsigned o = 0;
	while (o < max_order && pfn % (2ull << o) == 0 && pfn + (2ull << o) <= end)
		o++;
	return o;
}

/*
 * With every frame free: each zone's free blocks are the greedy decomposition
 * of its present runs. Counts are compared per order, and every expected block
 * must be a free head of the expected order on a U/M/R list; together they
 * make the two sets equal.
 */
static void check_full_merge(struct pa_pool *pool)
{
	test_touch_all(pool); /* the descriptors of untouched memory, written */
	struct pa_config cfg = config_of(pool);
	struct pa_usage usage;
	pa_get_usage(pool, &usage);
	CHECK_EQ_U64(usage.allocated, 0);
	CHECK_EQ_U64(usage.free, usage.managed);

	uint64_t *expect = calloc(cfg.max_order + 1, sizeof *expect);
	REQUIRE(expect);
	uint64_t present_total = 0;
	for (unsigned z = 0; z < pool->nr_zones; z++) {
		struct pa_zone *zone = &pool->zones[z];
		memset(expect, 0, (cfg.max_order + 1) * sizeof *expect);
		uint64_t bad = 0;
		pa_pfn_t pfn = zone->start_pfn;
		while (pfn < zone->end_pfn) {
			if (!pa_pfn_to_page(pool, pfn)) {
				pfn++;
				continue;
			}
			pa_pfn_t run_end = pfn;
			while (run_end < zone->end_pfn && pa_pfn_to_page(pool, run_end))
				run_end++;
			present_total += run_end - pfn;
			while (pfn < run_end) {
				unsigned o = greedy_order(pfn, run_end, cfg.max_order);
				expect[o]++;
				struct pa_page *head = pfn_page(pool, pfn);
				if ((head->state != PS_FREE || head->order != o ||
				     head->mt > PA_MT_RECLAIMABLE) &&
				    bad++ < 5)
					test_fail(
					        __FILE__, __LINE__,
					        "zone %u: expected a free order-%u block at pfn %" PRIu64
					        ", found state %u order %u mt %u",
					        z, o, pfn, head->state, head->order, head->mt);
				pfn += 1ull << o;
			}
		}
		for (unsigned o = 0; o <= cfg.max_order; o++)
			CHECK_MSG(zone_free_blocks(zone, o) == expect[o],
			          "zone %u [%" PRIu64 ", %" PRIu64 "): nr_free[%u] = %" PRIu64
			          ", the maximal aligned decomposition has %" PRIu64,
			          z, zone->start_pfn, zone->end_pfn, o, zone_free_blocks(zone, o),
			          expect[o]);
	}
	CHECK_EQ_U64(usage.managed, present_total);
	free(expect);
	VALIDATE(pool);
}

struct live {
	pa_pfn_t pfn;
	unsigned order;
};

static unsigned random_order(uint64_t *rng, unsigned max_order)
{
	uint64_t r = rng_next(rng) % 100;
	if (r < 3)
		return max_order;
	if (r < 50)
		return 0;
	if (r < 85)
		return (unsigned)(1 + rng_next(rng) % (max_order < 3 ? max_order : 3)) %
		       (max_order + 1);
	return (unsigned)(rng_next(rng) % (max_order + 1));
}

static pa_gfp_t random_gfp(uint64_t *rng)
{
	static const pa_gfp_t types[] = { PA_GFP_KERNEL, PA_GFP_MOVABLE, PA_GFP_RECLAIMABLE };
	pa_gfp_t gfp = types[rng_next(rng) % 3] | PA_GFP_NOWARN;
	if (rng_next(rng) % 4 == 0)
		gfp |= PA_GFP_COMP;
	return gfp;
}

/*
 * Random allocations and frees (about `ops` of them), then free everything in
 * random order and check the full merge.
 */
static void churn_then_check_full_merge(const char *cmdline, unsigned ops)
{
	uint64_t seed = test_seed();
	printf("  %s: seed=%" PRIu64 " (PA_TEST_SEED)\n", cmdline, seed);
	fflush(stdout);
	struct pa_pool *pool = test_boot(cmdline);
	struct pa_config cfg = config_of(pool);
	check_full_merge(pool);

	uint64_t rng = seed;
	size_t cap = (size_t)cfg.total_pages + 1, nr = 0;
	struct live *live = malloc(cap * sizeof *live);
	REQUIRE(live);
	unsigned total = (unsigned)(ops * test_scale());
	for (unsigned i = 0; i < total; i++) {
		if (nr == 0 || rng_next(&rng) % 100 < 55) {
			unsigned order = random_order(&rng, cfg.max_order);
			pa_gfp_t gfp = random_gfp(&rng);
			struct pa_page *page = pa_alloc_pages(pool, gfp, order);
			if (page) {
				REQUIRE(nr < cap);
				live[nr].pfn = pfn_of(pool, page);
				live[nr].order = order;
				CHECK(live[nr].pfn % (1ull << order) == 0);
				nr++;
			}
		} else {
			size_t k = (size_t)(rng_next(&rng) % nr);
			free_pfn(pool, live[k].pfn, live[k].order);
			live[k] = live[--nr];
		}
	}
	VALIDATE(pool);
	while (nr) {
		size_t k = (size_t)(rng_next(&rng) % nr);
		free_pfn(pool, live[k].pfn, live[k].order);
		live[k] = live[--nr];
	}
	free(live);
	check_full_merge(pool);
	pa_shutdown(pool);
}

/* ---------------------------------------------------------------------- */
/* Boot state                                                              */
/* ---------------------------------------------------------------------- */

TEST(buddy_boot_free_lists_hold_only_maximal_aligned_blocks)
{
	static const char *const lines[] = {
		EXACT "mem=64M max_order=10",
		EXACT "mem=64M max_order=0",
		EXACT "mem=512M max_order=13",
		EXACT "mem=4G max_order=18",
		EXACT "mem=1G max_order=30",
		EXACT "mem=96M max_order=14",
		EXACT "mem=512M numa=2 max_order=11",
		EXACT "mem=512M max_order=13 memhole=100M-164M",
		EXACT "mem=1G movablecore=25% max_order=18",
	};
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		struct pa_pool *pool = test_boot(lines[i]);
		check_full_merge(pool);
		pa_shutdown(pool);
	}
}

TEST(buddy_boot_mem64m_max_order10_has_sixteen_order10_blocks)
{
	struct pa_pool *pool = test_boot(EXACT "mem=64M max_order=10");
	REQUIRE(zones_with_memory(pool) == 1);
	CHECK_EQ_U64(zone_free_blocks(&pool->zones[0], 10), 16);
	for (unsigned o = 0; o < 10; o++)
		CHECK_EQ_U64(zone_free_blocks(&pool->zones[0], o), 0);
	pa_shutdown(pool);
}

/* ---------------------------------------------------------------------- */
/* Split, smallest fit, merge                                              */
/* ---------------------------------------------------------------------- */

/* Buddy of the order-o block that holds pfn. */
static pa_pfn_t buddy_at(pa_pfn_t pfn, unsigned o)
{
	return (pfn & ~((1ull << o) - 1)) ^ (1ull << o);
}

TEST(buddy_split_leaves_the_buddy_of_every_order_free)
{
	struct pa_pool *pool = test_boot(EXACT "mem=64M max_order=10");
	pa_pfn_t p = must_alloc(pool, PA_GFP_MOVABLE, 0);
	struct pa_zone *zone = &pool->zones[0];
	for (unsigned o = 0; o < 10; o++) {
		CHECK_EQ_U64(zone_free_blocks(zone, o), 1);
		struct pa_page *b = pfn_page(pool, buddy_at(p, o));
		CHECK_MSG(b->state == PS_FREE && b->order == o,
		          "buddy of order %u at pfn %" PRIu64 ": state %u order %u", o,
		          buddy_at(p, o), b->state, b->order);
	}
	CHECK_EQ_U64(zone_free_blocks(zone, 10), 15);
	VALIDATE(pool);
	free_pfn(pool, p, 0);
	check_full_merge(pool);
	pa_shutdown(pool);
}

/*
 * The halves of a split are counted only when a count is read: what the
 * readers see before they are linked must be what the counts say once they
 * are, for every order and type, after splits of several sizes and types.
 */
TEST(buddy_halves_counted_on_read_match_the_counts_once_linked)
{
	struct pa_pool *pool = test_boot(EXACT "mem=64M max_order=10");
	struct pa_zone *zone = &pool->zones[0];
	const unsigned orders[] = { 0, 3, 0, 7, 1 };
	const pa_gfp_t gfps[] = { PA_GFP_MOVABLE, PA_GFP_KERNEL, PA_GFP_RECLAIMABLE, PA_GFP_MOVABLE,
		                  PA_GFP_KERNEL };
	pa_pfn_t got[5];
	size_t n = 11 * PA_MT_COUNT;
	uint64_t read[11 * PA_MT_COUNT];
	unsigned pending = 0;
	for (unsigned i = 0; i < 5; i++) {
		got[i] = must_alloc(pool, gfps[i], orders[i]);
		pending += zone->split.pfn == got[i]; /* a split whose halves are on no list yet */
		for (unsigned o = 0; o <= 10; o++)
			for (unsigned mt = 0; mt < PA_MT_COUNT; mt++)
				read[o * PA_MT_COUNT + mt] = zone_free_count(zone, o, mt);
		buddy_list_peek(zone, 0, 0); /* links and counts them */
		CHECK(zone->split.pfn == PA_NIL);
		CHECK(memcmp(read, zone->nr_free_mt, n * sizeof *read) == 0);
		VALIDATE(pool);
	}
	CHECK_EQ_U64(pending,
	             4); /* all but order 7, which a half of the first split serves whole */
	for (unsigned i = 0; i < 5; i++)
		free_pfn(pool, got[i], orders[i]);
	check_full_merge(pool);
	pa_shutdown(pool);
}

TEST(buddy_smallest_fit_takes_the_smallest_sufficient_block)
{
	struct pa_pool *pool = test_boot(EXACT "mem=64M max_order=10");
	struct pa_zone *zone = &pool->zones[0];
	pa_pfn_t p = must_alloc(pool, PA_GFP_MOVABLE, 0);
	/* Free now: one block of each order 0..9, all buddies of p's ancestors. */
	static const unsigned orders[] = { 3, 5, 0, 9, 1 };
	pa_pfn_t got[5];
	for (unsigned i = 0; i < 5; i++) {
		unsigned o = orders[i];
		got[i] = must_alloc(pool, PA_GFP_MOVABLE, o);
		CHECK_MSG(got[i] == buddy_at(p, o),
		          "order-%u request took pfn %" PRIu64
		          ", the free order-%u block is at %" PRIu64,
		          o, got[i], o, buddy_at(p, o));
		CHECK_EQ_U64(zone_free_blocks(zone, o), 0);
		CHECK_EQ_U64(zone_free_blocks(zone, 10), 15);
	}
	/* Order 2 now needs a split of the free order-2 block: still no order-10 split. */
	pa_pfn_t q = must_alloc(pool, PA_GFP_MOVABLE, 2);
	CHECK_EQ_U64(q, buddy_at(p, 2));
	CHECK_EQ_U64(zone_free_blocks(zone, 10), 15);
	/* The free order-4 block goes first; the next order-4 request splits the order-6 one. */
	pa_pfn_t r = must_alloc(pool, PA_GFP_MOVABLE, 4);
	CHECK_EQ_U64(r, buddy_at(p, 4));
	pa_pfn_t s = must_alloc(pool, PA_GFP_MOVABLE, 4);
	CHECK_MSG(s >= buddy_at(p, 6) && s < buddy_at(p, 6) + 64,
	          "second order-4 block at %" PRIu64
	          " is not from the free order-6 block at %" PRIu64,
	          s, buddy_at(p, 6));
	CHECK_EQ_U64(zone_free_blocks(zone, 10), 15);
	CHECK_EQ_U64(zone_free_blocks(zone, 6), 0);
	CHECK_EQ_U64(zone_free_blocks(zone, 5), 1);
	CHECK_EQ_U64(zone_free_blocks(zone, 4), 1);
	VALIDATE(pool);

	for (unsigned i = 0; i < 5; i++)
		free_pfn(pool, got[i], orders[i]);
	free_pfn(pool, q, 2);
	free_pfn(pool, r, 4);
	free_pfn(pool, s, 4);
	free_pfn(pool, p, 0);
	check_full_merge(pool);
	pa_shutdown(pool);
}

/*
 * Every free list of the pool, head to tail, as one sequence of
 * (zone, order, type, pfn) entries; each list ends with a PA_NIL entry.
 */
static size_t list_snapshot(struct pa_pool *pool, uint64_t *out, size_t cap)
{
	size_t n = 0;
	for (unsigned z = 0; z < pool->nr_zones; z++) {
		struct pa_zone *zone = &pool->zones[z];
		for (unsigned o = 0; o <= pool->cfg.max_order; o++)
			for (unsigned mt = 0; mt < PA_MT_COUNT; mt++) {
				pa_pfn_t pfn = buddy_list_peek(zone, o, mt);
				for (; pfn != PA_NIL && n < cap;
				     pfn = pfn_page(pool, pfn)->lru.next)
					out[n++] = pfn;
				if (n < cap)
					out[n++] = PA_NIL;
			}
	}
	return n;
}

/*
 * The halves of a split are linked only when something else needs the lists
 * (or never, when the block is freed at once). Two pools run the same churn:
 * one has its lists read after every step, which links the halves each time,
 * the other only at the end. Their lists must hold the same blocks in the
 * same order: linking late is never seen.
 */
TEST(buddy_halves_linked_late_leave_the_lists_as_linking_at_once)
{
	uint64_t seed = test_seed();
	printf("  seed=%" PRIu64 " (PA_TEST_SEED)\n", seed);
	const char *line = EXACT "mem=64M max_order=10";
	struct pa_pool *eager = test_boot(line), *lazy = test_boot(line);
	size_t cap = 1u << 16;
	uint64_t *a = malloc(cap * sizeof *a), *b = malloc(cap * sizeof *b);
	struct live *live = malloc(4096 * sizeof *live);
	REQUIRE(a && b && live);
	uint64_t rng = seed;
	size_t nr = 0;
	unsigned total = (unsigned)(4000 * test_scale());
	for (unsigned i = 0; i < total; i++) {
		if (nr == 0 || (nr < 4096 && rng_next(&rng) % 100 < 55)) {
			unsigned order = random_order(&rng, 10);
			pa_gfp_t gfp = random_gfp(&rng);
			struct pa_page *pe = pa_alloc_pages(eager, gfp, order);
			struct pa_page *pl = pa_alloc_pages(lazy, gfp, order);
			REQUIRE(!pe == !pl);
			if (pe) {
				live[nr].pfn = pfn_of(eager, pe);
				live[nr].order = order;
				CHECK_EQ_U64(pfn_of(lazy, pl), live[nr].pfn);
				nr++;
			}
		} else {
			size_t k = (size_t)(rng_next(&rng) % nr);
			free_pfn(eager, live[k].pfn, live[k].order);
			free_pfn(lazy, live[k].pfn, live[k].order);
			live[k] = live[--nr];
		}
		list_snapshot(eager, a, cap);
	}
	size_t na = list_snapshot(eager, a, cap), nb = list_snapshot(lazy, b, cap);
	REQUIRE(na < cap);
	CHECK_EQ_U64(na, nb);
	CHECK(memcmp(a, b, na * sizeof *a) == 0);
	VALIDATE(eager);
	VALIDATE(lazy);
	free(a);
	free(b);
	free(live);
	pa_shutdown(eager);
	pa_shutdown(lazy);
}

/* Freeing a split block after its buddy was taken merges only as far as it may. */
TEST(buddy_free_after_the_buddy_was_taken_stops_at_the_buddy)
{
	struct pa_pool *pool = test_boot(EXACT "mem=64M max_order=10");
	struct pa_zone *zone = &pool->zones[0];
	pa_pfn_t p = must_alloc(pool, PA_GFP_MOVABLE, 0);
	pa_pfn_t q = must_alloc(pool, PA_GFP_MOVABLE, 0);
	CHECK_EQ_U64(q, buddy_at(p, 0));
	free_pfn(pool, p, 0);
	CHECK_EQ_U64(zone_free_blocks(zone, 0), 1);
	CHECK_EQ_U64(buddy_list_peek(zone, 0, PA_MT_MOVABLE), p);
	VALIDATE(pool);
	pa_pfn_t r = must_alloc(pool, PA_GFP_MOVABLE, 1); /* splits nothing: the order-1 half */
	CHECK_EQ_U64(r, buddy_at(p, 1));
	free_pfn(pool, q, 0);
	free_pfn(pool, r, 1);
	check_full_merge(pool);
	pa_shutdown(pool);
}

/* n order-1 blocks from one split of a fresh pool: p, p + 2, ... (p aligned to 2n). */
static pa_pfn_t order1_run(struct pa_pool *pool, unsigned n)
{
	pa_pfn_t p = must_alloc(pool, PA_GFP_MOVABLE, 1);
	REQUIRE((p & (2 * n - 1)) == 0);
	for (unsigned i = 1; i < n; i++)
		REQUIRE(must_alloc(pool, PA_GFP_MOVABLE, 1) == p + 2 * i);
	return p;
}

/*
 * Linux's buddy_merge_likely(): a freed block whose buddy is taken, while
 * the pair's buddy one order up is free, goes to the tail of its list (it
 * may merge two levels up soon); any other to the head. Sixteen order-1
 * blocks from one split, [p, p + 32): freeing p+20 and p+22 makes an order-2
 * block whose order-3 neighbour p+24 is taken (head); freeing p+8..p+14
 * makes a free order-3 block at p+8, and then p+4 and p+6 an order-2 block
 * next to it (tail). The order-2 allocation after takes the head, p+20.
 */
TEST(buddy_a_block_likely_to_merge_goes_to_the_tail_of_its_list)
{
	struct pa_pool *pool = test_boot(EXACT "mem=64M max_order=10");
	struct pa_zone *zone = &pool->zones[0];
	pa_pfn_t p = order1_run(pool, 16);
	free_pfn(pool, p + 20, 1);
	free_pfn(pool, p + 22, 1);
	for (unsigned i = 8; i < 16; i += 2)
		free_pfn(pool, p + i, 1);
	CHECK_EQ_U64(buddy_list_peek(zone, 3, PA_MT_MOVABLE), p + 8);
	free_pfn(pool, p + 4, 1);
	free_pfn(pool, p + 6, 1);
	CHECK_EQ_U64(zone_free_blocks(zone, 2), 2);
	CHECK_EQ_U64(buddy_list_peek(zone, 2, PA_MT_MOVABLE), p + 20);
	CHECK_EQ_U64(zone->list_tail[2 * PA_MT_COUNT + PA_MT_MOVABLE], p + 4);
	VALIDATE(pool);
	CHECK_EQ_U64(must_alloc(pool, PA_GFP_MOVABLE, 2), p + 20);
	free_pfn(pool, p + 20, 2);
	for (unsigned i = 0; i < 4; i += 2)
		free_pfn(pool, p + i, 1);
	for (unsigned i = 16; i < 20; i += 2)
		free_pfn(pool, p + i, 1);
	for (unsigned i = 24; i < 32; i += 2)
		free_pfn(pool, p + i, 1);
	check_full_merge(pool);
	pa_shutdown(pool);
}

/*
 * A free block moved to another type's list goes to its tail, as Linux's
 * move_to_free_list() puts it (list_move_tail()): moved in the order p+4, p,
 * the list reads p+4, p.
 */
TEST(buddy_a_block_moved_to_another_list_goes_to_its_tail)
{
	struct pa_pool *pool = test_boot(EXACT "mem=64M max_order=10");
	struct pa_zone *zone = &pool->zones[0];
	pa_pfn_t p = order1_run(pool, 4);
	free_pfn(pool, p, 1);
	free_pfn(pool, p + 4, 1);
	CHECK_EQ_U64(buddy_list_peek(zone, 1, PA_MT_MOVABLE), p + 4);
	buddy_list_move(zone, p + 4, PA_MT_UNMOVABLE);
	buddy_list_move(zone, p, PA_MT_UNMOVABLE);
	CHECK_EQ_U64(buddy_list_peek(zone, 1, PA_MT_UNMOVABLE), p + 4);
	CHECK_EQ_U64(zone->list_tail[1 * PA_MT_COUNT + PA_MT_UNMOVABLE], p);
	buddy_list_move(zone, p, PA_MT_MOVABLE);
	buddy_list_move(zone, p + 4, PA_MT_MOVABLE);
	VALIDATE(pool);
	free_pfn(pool, p + 2, 1);
	free_pfn(pool, p + 6, 1);
	check_full_merge(pool);
	pa_shutdown(pool);
}

TEST(buddy_allocations_of_every_order_are_naturally_aligned)
{
	struct pa_pool *pool = test_boot(EXACT "mem=64M max_order=10");
	pa_pfn_t kept[64];
	unsigned kept_order[64], nr = 0;
	/* Interleave orders so that later blocks come from odd offsets. */
	for (unsigned round = 0; round < 3; round++)
		for (unsigned o = 0; o <= 10; o++) {
			pa_gfp_t gfp = round == 1 ? PA_GFP_KERNEL : PA_GFP_MOVABLE;
			pa_pfn_t pfn = must_alloc(pool, gfp, o);
			struct pa_page *head = pfn_page(pool, pfn);
			CHECK(head->state == PS_ALLOC);
			CHECK_EQ_U64(head->order, o);
			CHECK_EQ_U64(pa_folio_order(pool, head), o);
			kept[nr] = pfn;
			kept_order[nr++] = o;
		}
	struct pa_usage u;
	pa_get_usage(pool, &u);
	uint64_t expect = 0;
	for (unsigned i = 0; i < nr; i++)
		expect += 1ull << kept_order[i];
	CHECK_EQ_U64(u.allocated, expect);
	VALIDATE(pool);
	for (unsigned i = 0; i < nr; i++)
		free_pfn(pool, kept[i], kept_order[i]);
	check_full_merge(pool);
	pa_shutdown(pool);
}

TEST(buddy_only_the_head_frame_carries_state)
{
	struct pa_pool *pool = test_boot(EXACT "mem=64M max_order=10");
	pa_pfn_t small = must_alloc(pool, PA_GFP_MOVABLE, 0);
	pa_pfn_t big = must_alloc(pool, PA_GFP_MOVABLE, 10);
	for (pa_pfn_t i = 1; i < 1024; i++)
		if (pfn_page(pool, big + i)->state != PS_BODY) {
			test_fail(__FILE__, __LINE__,
			          "body frame %" PRIu64
			          " of an allocated order-10 block has state %u",
			          big + i, pfn_page(pool, big + i)->state);
			break;
		}
	/* The free blocks left by the split: only heads are PS_FREE. */
	for (unsigned o = 1; o < 10; o++) {
		pa_pfn_t b = buddy_at(small, o);
		for (pa_pfn_t i = 1; i < (1ull << o); i++)
			if (pfn_page(pool, b + i)->state != PS_BODY) {
				test_fail(__FILE__, __LINE__,
				          "body frame %" PRIu64
				          " of a free order-%u block has state %u",
				          b + i, o, pfn_page(pool, b + i)->state);
				break;
			}
	}
	free_pfn(pool, big, 10);
	free_pfn(pool, small, 0);
	pa_pfn_t z = small & ~1023ull;
	for (pa_pfn_t i = 1; i < 1024; i++)
		if (pfn_page(pool, z + i)->state != PS_BODY) {
			test_fail(__FILE__, __LINE__,
			          "after the merge, frame %" PRIu64 " has state %u", z + i,
			          pfn_page(pool, z + i)->state);
			break;
		}
	check_full_merge(pool);
	pa_shutdown(pool);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t best_pair_ns(struct pa_pool *pool, unsigned order, unsigned reps)
{
	uint64_t best = UINT64_MAX;
	for (unsigned r = 0; r < reps; r++) {
		uint64_t t0 = now_ns();
		struct pa_page *page = pa_alloc_pages(pool, PA_GFP_MOVABLE, order);
		pa_free_pages(pool, page, order);
		uint64_t t = now_ns() - t0;
		if (!page)
			return UINT64_MAX;
		if (t < best)
			best = t;
	}
	return best;
}

/* Bodies are never touched: an order-18 pair (262144 frames) costs about what an order-0 pair does. */
TEST(buddy_alloc_free_cost_does_not_grow_with_the_order)
{
	struct pa_pool *pool = test_boot(EXACT "mem=4G max_order=18");
	uint64_t t0 = best_pair_ns(pool, 0, 300);
	uint64_t t18 = best_pair_ns(pool, 18, 300);
	printf("  best alloc+free pair: order 0 %" PRIu64 " ns, order 18 %" PRIu64 " ns\n", t0,
	       t18);
	/* Touching 2^18 descriptors would take well over 50 us. */
	CHECK_MSG(t18 < 20 * t0 + 5000,
	          "order-18 pair %" PRIu64 " ns vs order-0 pair %" PRIu64 " ns", t18, t0);
	check_full_merge(pool);
	pa_shutdown(pool);
}

/* ---------------------------------------------------------------------- */
/* Where merging stops                                                     */
/* ---------------------------------------------------------------------- */

TEST(buddy_merges_across_section_boundary)
{
	struct pa_pool *pool = test_boot(EXACT "mem=1G max_order=18");
	struct pa_config cfg = config_of(pool);
	REQUIRE(cfg.section_shift == 15); /* 128 MiB of 4 KiB frames */
	CHECK_EQ_U64(nr_free_total(pool, 18), 1);
	pa_pfn_t sec[8];
	for (unsigned i = 0; i < 8; i++) {
		sec[i] = must_alloc(pool, PA_GFP_MOVABLE, 15);
		CHECK(sec[i] % (1ull << cfg.section_shift) == 0);
	}
	CHECK_EQ_U64(nr_free_total(pool, 18), 0);
	CHECK(pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 0) == NULL);
	/* Free in an order that merges pairs of sections first, then pairs of pairs. */
	static const unsigned order_of_free[] = { 3, 0, 6, 1, 5, 7, 2, 4 };
	for (unsigned i = 0; i < 8; i++)
		free_pfn(pool, sec[order_of_free[i]], 15);
	CHECK_EQ_U64(nr_free_total(pool, 18), 1);
	for (unsigned o = 0; o < 18; o++)
		CHECK_EQ_U64(nr_free_total(pool, o), 0);
	check_full_merge(pool);
	pa_shutdown(pool);

	/* Two adjacent sections merge into one order-16 block. */
	pool = test_boot(EXACT "mem=256M max_order=16");
	pa_pfn_t a = must_alloc(pool, PA_GFP_MOVABLE, 15);
	pa_pfn_t b = must_alloc(pool, PA_GFP_MOVABLE, 15);
	CHECK_EQ_U64(a ^ b, 1ull << 15);
	CHECK_EQ_U64(nr_free_total(pool, 16), 0);
	free_pfn(pool, a, 15);
	CHECK_EQ_U64(nr_free_total(pool, 15), 1);
	free_pfn(pool, b, 15);
	CHECK_EQ_U64(nr_free_total(pool, 16), 1);
	CHECK_EQ_U64(nr_free_total(pool, 15), 0);
	check_full_merge(pool);
	pa_shutdown(pool);
}

TEST(buddy_never_merges_across_an_absent_section)
{
	/* Sections 2 and 3 ([256M, 512M)) are absent. */
	struct pa_pool *pool = test_boot(EXACT "mem=1G max_order=18 memhole=256M-512M");
	CHECK(pa_pfn_to_page(pool, 65536) == NULL);
	CHECK(pa_pfn_to_page(pool, 131071) == NULL);
	CHECK(pa_pfn_to_page(pool, 65535) != NULL);
	CHECK(pa_pfn_to_page(pool, 131072) != NULL);
	CHECK_EQ_U64(nr_free_total(pool, 18), 0);
	CHECK_EQ_U64(nr_free_total(pool, 17), 1); /* [512M, 1G) */
	CHECK_EQ_U64(nr_free_total(pool, 16), 1); /* [0, 256M) */
	check_full_merge(pool);
	CHECK(pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 18) == NULL);
	pa_pfn_t lo = must_alloc(pool, PA_GFP_MOVABLE, 16);
	pa_pfn_t hi = must_alloc(pool, PA_GFP_MOVABLE, 17);
	CHECK_EQ_U64(lo, 0);
	CHECK_EQ_U64(hi, 131072);
	free_pfn(pool, hi, 17);
	free_pfn(pool, lo, 16);
	check_full_merge(pool);
	pa_shutdown(pool);
}

TEST(buddy_never_merges_across_a_hole_inside_a_section)
{
	/* Frames 257..512 are a hole: an odd start and an even end. */
	struct pa_pool *pool = test_boot(EXACT "mem=64M max_order=10 memhole=1028K-2052K");
	CHECK(pa_pfn_to_page(pool, 256) != NULL);
	CHECK(pa_pfn_to_page(pool, 257) == NULL);
	CHECK(pa_pfn_to_page(pool, 512) == NULL);
	CHECK(pa_pfn_to_page(pool, 513) != NULL);
	struct pa_usage u;
	pa_get_usage(pool, &u);
	CHECK_EQ_U64(u.managed, 16384 - 256);
	check_full_merge(pool);
	/* Left of the hole: order 8 at 0 and order 0 at 256. Right: 513, 514, 516, ... */
	CHECK(pfn_page(pool, 0)->state == PS_FREE && pfn_page(pool, 0)->order == 8);
	CHECK(pfn_page(pool, 256)->state == PS_FREE && pfn_page(pool, 256)->order == 0);
	CHECK(pfn_page(pool, 513)->state == PS_FREE && pfn_page(pool, 513)->order == 0);
	CHECK(pfn_page(pool, 768)->state == PS_FREE && pfn_page(pool, 768)->order == 8);

	/* Take every frame one by one, give them back in reverse: still the same blocks. */
	pa_pfn_t *all = malloc(u.managed * sizeof *all);
	REQUIRE(all);
	uint64_t n = 0;
	struct pa_page *page;
	while ((page = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 0)) != NULL) {
		REQUIRE(n < u.managed);
		all[n] = pfn_of(pool, page);
		CHECK(all[n] < 257 || all[n] > 512);
		n++;
	}
	CHECK_EQ_U64(n, u.managed);
	while (n)
		free_pfn(pool, all[--n], 0);
	free(all);
	check_full_merge(pool);
	pa_shutdown(pool);
}

TEST(buddy_never_merges_across_a_zone_boundary)
{
	/* Without zones, 8G would be one order-21 block; DMA32 ends at 4G. */
	struct pa_pool *pool = test_boot(EXACT "mem=8G max_order=22");
	REQUIRE(zones_with_memory(pool) == 2);
	struct pa_zone *dma32 = zone_of_type(pool, PA_ZONE_DMA32);
	struct pa_zone *normal = zone_of_type(pool, PA_ZONE_NORMAL);
	REQUIRE(dma32 && normal);
	CHECK_EQ_U64(dma32->start_pfn, 0);
	CHECK_EQ_U64(dma32->end_pfn, 1ull << 20);
	CHECK_EQ_U64(normal->start_pfn, 1ull << 20);
	CHECK_EQ_U64(normal->end_pfn, 1ull << 21);
	CHECK_EQ_U64(zone_free_blocks(dma32, 20), 1);
	CHECK_EQ_U64(zone_free_blocks(normal, 20), 1);
	CHECK_EQ_U64(nr_free_total(pool, 21), 0);
	CHECK(pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 21) == NULL);
	/* DMA32 keeps its lowmem reserve from requests Normal could serve: ask for DMA32. */
	pa_pfn_t a = must_alloc(pool, PA_GFP_MOVABLE, 20);
	pa_pfn_t b = must_alloc(pool, PA_GFP_MOVABLE | PA_GFP_DMA32, 20);
	free_pfn(pool, a, 20);
	free_pfn(pool, b, 20);
	CHECK_EQ_U64(nr_free_total(pool, 21), 0);
	check_full_merge(pool);
	pa_shutdown(pool);

	/* ZONE_MOVABLE at the top, on a boundary not aligned to the max order. */
	pool = test_boot(EXACT "mem=1G movablecore=25% max_order=18");
	CHECK(zone_of_type(pool, PA_ZONE_MOVABLE) != NULL);
	CHECK_EQ_U64(nr_free_total(pool, 18), 0);
	check_full_merge(pool);
	pa_shutdown(pool);
}

TEST(buddy_never_merges_across_a_node_boundary)
{
	struct pa_pool *pool = test_boot(EXACT "mem=512M numa=2 max_order=18");
	REQUIRE(pool->nr_nodes == 2);
	CHECK_EQ_U64(nr_free_total(pool, 18), 0);
	CHECK_EQ_U64(nr_free_total(pool, 17), 0);
	CHECK_EQ_U64(nr_free_total(pool, 16), 2);
	check_full_merge(pool);
	pa_shutdown(pool);
}

/* ---------------------------------------------------------------------- */
/* Very large blocks                                                       */
/* ---------------------------------------------------------------------- */

TEST(buddy_hands_out_and_merges_back_order18_blocks)
{
	struct pa_pool *pool = test_boot(EXACT "mem=4G max_order=18");
	REQUIRE(zones_with_memory(pool) == 1);
	CHECK_EQ_U64(nr_free_total(pool, 18), 4);
	pa_pfn_t b[4];
	uint64_t seen = 0;
	for (unsigned i = 0; i < 4; i++) {
		b[i] = must_alloc(pool, PA_GFP_MOVABLE, 18);
		seen |= 1ull << (b[i] >> 18);
	}
	CHECK_EQ_U64(seen, 0xf);
	CHECK(pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 18) == NULL);
	CHECK(pa_alloc_pages(pool, PA_GFP_KERNEL | PA_GFP_NOWARN, 0) == NULL);
	for (unsigned i = 0; i < 4; i++)
		free_pfn(pool, b[i], 18);
	CHECK_EQ_U64(nr_free_total(pool, 18), 4);

	/* One order-0 frame splits one block; three order-18 blocks remain. */
	pa_pfn_t small = must_alloc(pool, PA_GFP_MOVABLE, 0);
	for (unsigned i = 0; i < 3; i++) {
		b[i] = must_alloc(pool, PA_GFP_MOVABLE, 18);
		CHECK(b[i] >> 18 != small >> 18);
	}
	CHECK(pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 18) == NULL);
	free_pfn(pool, small, 0);
	CHECK_EQ_U64(nr_free_total(pool, 18), 1);
	pa_pfn_t again = must_alloc(pool, PA_GFP_MOVABLE, 18);
	CHECK_EQ_U64(again, small & ~((1ull << 18) - 1));
	free_pfn(pool, again, 18);
	for (unsigned i = 0; i < 3; i++)
		free_pfn(pool, b[i], 18);
	check_full_merge(pool);
	pa_shutdown(pool);
}

TEST(buddy_hands_out_and_merges_back_order20_blocks)
{
	struct pa_pool *pool = test_boot(EXACT "mem=8G max_order=20");
	struct pa_zone *dma32 = zone_of_type(pool, PA_ZONE_DMA32);
	struct pa_zone *normal = zone_of_type(pool, PA_ZONE_NORMAL);
	REQUIRE(dma32 && normal);
	CHECK_EQ_U64(zone_free_blocks(dma32, 20), 1);
	CHECK_EQ_U64(zone_free_blocks(normal, 20), 1);
	pa_pfn_t a = must_alloc(pool, PA_GFP_MOVABLE, 20);
	pa_pfn_t b = must_alloc(pool, PA_GFP_MOVABLE | PA_GFP_DMA32, 20); /* past the reserve */
	CHECK_EQ_U64(a ^ b, 1ull << 20);
	CHECK(pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 20) == NULL);
	CHECK(pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 0) == NULL);
	free_pfn(pool, a, 20);
	free_pfn(pool, b, 20);
	CHECK_EQ_U64(zone_free_blocks(dma32, 20), 1);
	CHECK_EQ_U64(zone_free_blocks(normal, 20), 1);

	/* Split one down to order 0 and merge it back. */
	pa_pfn_t f = must_alloc(pool, PA_GFP_MOVABLE, 0);
	CHECK_EQ_U64(nr_free_total(pool, 20), 1);
	for (unsigned o = 0; o < 20; o++)
		CHECK_EQ_U64(nr_free_total(pool, o), 1);
	free_pfn(pool, f, 0);
	check_full_merge(pool);
	pa_shutdown(pool);
}

/* ---------------------------------------------------------------------- */
/* Pageblock types and merging                                             */
/* ---------------------------------------------------------------------- */

TEST(buddy_merges_unmovable_and_reclaimable_pageblocks)
{
	struct pa_pool *pool = test_boot(EXACT "mem=64M max_order=10");
	REQUIRE(config_of(pool).pageblock_order == 9);
	/* An unmovable order-9 claims a whole order-10 block; its buddy stays free, UNMOVABLE. */
	pa_pfn_t a = must_alloc(pool, PA_GFP_KERNEL, 9);
	pa_pfn_t b = a ^ 512;
	CHECK_EQ_U64(pageblock_mt(pool, a), PA_MT_UNMOVABLE);
	CHECK_EQ_U64(pageblock_mt(pool, b), PA_MT_UNMOVABLE);
	/* Use up every other order-10 block. */
	pa_pfn_t rest[16];
	unsigned nr = 0;
	struct pa_page *page;
	while (nr < 16 && (page = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 10)) != NULL)
		rest[nr++] = pfn_of(pool, page);
	CHECK_EQ_U64(nr, 15);
	/* A reclaimable order-9 request can only claim b, and retypes it. */
	pa_pfn_t r = must_alloc(pool, PA_GFP_RECLAIMABLE, 9);
	CHECK_EQ_U64(r, b);
	CHECK_EQ_U64(pageblock_mt(pool, b), PA_MT_RECLAIMABLE);
	CHECK_EQ_U64(pageblock_mt(pool, a), PA_MT_UNMOVABLE);
	free_pfn(pool, a, 9);
	free_pfn(pool, r, 9);
	/* Different but mergeable types: one order-10 block. */
	CHECK_EQ_U64(nr_free_total(pool, 9), 0);
	CHECK_EQ_U64(nr_free_total(pool, 10), 1);
	VALIDATE(pool);
	for (unsigned i = 0; i < nr; i++)
		free_pfn(pool, rest[i], 10);
	check_full_merge(pool);
	pa_shutdown(pool);
}

TEST(buddy_does_not_merge_a_highatomic_pageblock_with_its_buddy)
{
	/* linux=6.1: a reserve in a zone this small; a reserve only in the slow path. */
	struct pa_pool *pool = test_boot(EXACT "mem=64M max_order=10 linux=6.1");
	enum { N = 64 };
	pa_pfn_t held[N];
	unsigned n = 0;
	struct pa_page *p;
	/* Leave one free order-9 block: below the low watermark, an atomic request reserves. */
	while (n < N && nr_free_total(pool, 10) > 1 &&
	       (p = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 10)))
		held[n++] = pa_page_to_pfn(pool, p);
	pa_pfn_t b = must_alloc(pool, PA_GFP_MOVABLE, 9);
	pa_pfn_t a = must_alloc(pool, PA_GFP_MOVABLE | PA_GFP_HIGH | PA_GFP_NOCOMPACT, 9);
	CHECK_EQ_U64(b, a ^ 512);
	free_pfn(pool, b, 9);
	while (n)
		free_pfn(pool, held[--n], 10);
	CHECK_EQ_U64(pageblock_mt(pool, a), PA_MT_HIGHATOMIC);
	CHECK(pageblock_mt(pool, b) != PA_MT_HIGHATOMIC);
	free_pfn(pool, a, 9);
	CHECK_EQ_U64(pageblock_mt(pool, a), PA_MT_HIGHATOMIC);
	CHECK_EQ_U64(nr_free_total(pool, 9), 2);
	CHECK_EQ_U64(nr_free_total(pool, 10), 15);
	CHECK(pfn_page(pool, a)->state == PS_FREE && pfn_page(pool, a)->order == 9);
	CHECK(pfn_page(pool, b)->state == PS_FREE && pfn_page(pool, b)->order == 9);
	CHECK_EQ_U64(pfn_page(pool, a)->mt, PA_MT_HIGHATOMIC);
	VALIDATE(pool);
	pa_shutdown(pool);
}

/* ---------------------------------------------------------------------- */
/* Full merge after random churn                                           */
/* ---------------------------------------------------------------------- */

TEST(buddy_full_merge_after_churn_max_order_10)
{
	churn_then_check_full_merge(EXACT "mem=64M max_order=10", 200000);
}

TEST(buddy_full_merge_after_churn_max_order_13)
{
	churn_then_check_full_merge(EXACT "mem=512M max_order=13", 200000);
}

TEST(buddy_full_merge_after_churn_max_order_18)
{
	churn_then_check_full_merge(EXACT "mem=2G max_order=18", 200000);
}

TEST(buddy_full_merge_after_churn_with_memhole)
{
	churn_then_check_full_merge(
	        EXACT "mem=512M max_order=13 memhole=100M-164M memhole=300M-301M", 200000);
}

TEST(buddy_full_merge_after_churn_with_an_absent_section)
{
	churn_then_check_full_merge(EXACT "mem=1G max_order=18 memhole=256M-512M", 200000);
}

TEST(buddy_full_merge_after_churn_numa2)
{
	churn_then_check_full_merge(EXACT "mem=512M numa=2 max_order=13", 200000);
}

TEST(buddy_full_merge_after_churn_with_zone_movable)
{
	churn_then_check_full_merge(EXACT "mem=512M movablecore=25% max_order=12", 200000);
}

TEST(buddy_full_merge_after_churn_two_zones_max_order_20)
{
	churn_then_check_full_merge(EXACT "mem=6G max_order=20", 100000);
}

/* 64 KiB pages: a section is 2^11 frames, so an order-13 block spans four sections. */
TEST(buddy_full_merge_after_churn_page_shift_16)
{
	churn_then_check_full_merge(EXACT "mem=1G page_shift=16 max_order=13", 100000);
}

TEST(buddy_full_merge_after_churn_page_shift_14)
{
	churn_then_check_full_merge(EXACT "mem=1G page_shift=14 max_order=14 memhole=200M-264M",
	                            100000);
}
