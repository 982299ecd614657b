/* SPDX-License-Identifier: MIT */
/*
 * Contiguous ranges: pa_alloc_contig_range(),
 * pa_alloc_contig_pages() and pa_free_contig_range().
 *
 * What is proved here: a range full of owned movable folios is taken (the
 * folios move out whole, the bytes follow them in a backed pool, the folios
 * outside stay put), becomes a row of the largest aligned allocated blocks,
 * and merges again once freed; every refusal (an unmovable frame, a pinned
 * folio, an ownerless movable folio, a range being taken already: -EBUSY; an
 * empty range, one past the pool, across a zone boundary or over a hole,
 * another migratetype: -EINVAL) leaves the usage, the free lists, the
 * pageblock types and the owner's folios exactly as they were;
 * pa_alloc_contig_pages() finds ranges of any length aligned to the largest
 * power of two not above it, and a 1 GiB one (max_order=10) exactly when an
 * aligned 1 GiB region holds no unmovable or pinned frame. Finally contiguous
 * and CMA allocation race allocations, frees and compaction (ThreadSanitizer
 * runs this in `make test`) and no frame is lost.
 *
 * Folios belong to the owner of tests/owner.h, which checks every move.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "test.h"

#include "platform/platform.h"
#include "isolation.h"
#include "pageblock.h"
#include "pcp.h"
#include "zone.h"
#include "owner.h"
#include "helpers.h"

#include <pthread.h>
#include <stdatomic.h>

#define QUIET "kcompactd=manual pcp_orders=none min_free_kbytes=0 "

/* ---------------------------------------------------------------------- */
/* Helpers                                                                 */
/* ---------------------------------------------------------------------- */

/* The live slot whose folio covers pfn, or -1. */
static long slot_at(struct towner *o, pa_pfn_t pfn)
{
	long r = -1;
	pthread_mutex_lock(&o->lock);
	for (size_t i = 0; i < o->nr && r < 0; i++) {
		if (!o->f[i].live || o->f[i].split)
			continue;
		pa_pfn_t h = pa_page_to_pfn(o->pool, o->f[i].page);
		if (pfn >= h && pfn < h + (1ull << o->f[i].order))
			r = (long)i;
	}
	pthread_mutex_unlock(&o->lock);
	return r;
}

static bool overlaps(pa_pfn_t pfn, unsigned order, pa_pfn_t s, pa_pfn_t e)
{
	return pfn != PA_PFN_INVALID && pfn < e && pfn + (1ull << order) > s;
}

/*
 * Fill a QUIET single-zone pool with owned order-4 folios and free those
 * whose pfn >> 4 is odd: half the pool free, in order-4 holes between folios.
 */
static void layout_order4(struct towner *o)
{
	while (to_alloc(o, PA_GFP_COMP | PA_GFP_NOCOMPACT, 4) >= 0)
		;
	for (size_t i = 0; i < o->nr; i++)
		if ((to_pfn(o, i) >> 4) & 1)
			to_free(o, i);
}

/* What a refused request must leave alone. */
struct snap {
	struct pa_usage u;
	char *buddy, *types;
	pa_pfn_t *pfns;
	unsigned moves;
};

static unsigned total_moves(struct towner *o)
{
	unsigned n = 0;
	pthread_mutex_lock(&o->lock);
	for (size_t i = 0; i < o->nr; i++)
		n += o->f[i].moves;
	pthread_mutex_unlock(&o->lock);
	return n;
}

static void snap_take(struct snap *s, struct pa_pool *pool, struct towner *o)
{
	pa_drain_all(pool);
	s->u = usage(pool);
	s->buddy = report(pool, PA_REPORT_BUDDYINFO, 0);
	s->types = report(pool, PA_REPORT_PAGETYPEINFO, 0);
	s->pfns = o ? snapshot_pfns(o) : NULL;
	s->moves = o ? total_moves(o) : 0;
}

static void snap_expect_same(struct snap *s, struct pa_pool *pool, struct towner *o,
                             const char *what)
{
	pa_drain_all(pool);
	VALIDATE(pool);
	struct pa_usage u = usage(pool);
	CHECK_MSG(u.free == s->u.free && u.allocated == s->u.allocated &&
	                  u.reserved == s->u.reserved,
	          "%s: usage changed: free %" PRIu64 " -> %" PRIu64 ", allocated %" PRIu64
	          " -> %" PRIu64,
	          what, s->u.free, u.free, s->u.allocated, u.allocated);
	char *buddy = report(pool, PA_REPORT_BUDDYINFO, 0),
	     *types = report(pool, PA_REPORT_PAGETYPEINFO, 0);
	CHECK_MSG(strcmp(buddy, s->buddy) == 0, "%s: buddyinfo changed:\n was: %s now: %s", what,
	          s->buddy, buddy);
	CHECK_MSG(strcmp(types, s->types) == 0, "%s: pagetypeinfo changed", what);
	if (o) {
		size_t moved = 0;
		pa_pfn_t first_old = 0, first_new = 0;
		for (size_t i = 0; i < o->nr; i++) {
			pa_pfn_t now = to_pfn(o, i);
			if (now != s->pfns[i] && moved++ == 0) {
				first_old = s->pfns[i];
				first_new = now;
			}
		}
		CHECK_MSG(
		        moved == 0 && total_moves(o) == s->moves,
		        "%s: %zu of the owner's folios moved (%u moves; the first from pfn %" PRIu64
		        " to %" PRIu64 ")",
		        what, moved, total_moves(o) - s->moves, first_old, first_new);
		to_check_all(o);
		to_expect_clean(o);
	}
	free(buddy);
	free(types);
	free(s->buddy);
	free(s->types);
	free(s->pfns);
	memset(s, 0, sizeof *s);
}

/* ---------------------------------------------------------------------- */
/* A range of owned folios is taken                                        */
/* ---------------------------------------------------------------------- */

static void take_range_and_check(struct pa_pool *pool, struct towner *o, pa_pfn_t s, pa_pfn_t e)
{
	pa_pfn_t *before = snapshot_pfns(o);
	size_t inside = 0, outside = 0;
	for (size_t i = 0; i < o->nr; i++)
		if (o->f[i].live)
			overlaps(before[i], o->f[i].order, s, e) ? inside++ : outside++;
	REQUIRE(inside > 0);
	unsigned moves0 = total_moves(o);
	struct pa_usage u0 = usage(pool);
	int rc = pa_alloc_contig_range(pool, s, e, PA_MT_MOVABLE, 0);
	CHECK_MSG(rc == 0,
	          "pa_alloc_contig_range(%" PRIu64 ", %" PRIu64 ") over %zu movable folios = %d", s,
	          e, inside, rc);
	if (rc != 0) {
		free(before);
		return;
	}
	/* The folios of the range went elsewhere, whole; the rest stayed where they were. */
	size_t moved = 0, stayed = 0;
	for (size_t i = 0; i < o->nr; i++) {
		if (!o->f[i].live)
			continue;
		pa_pfn_t now = to_pfn(o, i);
		if (overlaps(before[i], o->f[i].order, s, e)) {
			CHECK_MSG(!overlaps(now, o->f[i].order, s, e),
			          "folio %zu (pfn %" PRIu64 ") still in the range", i, now);
			moved += now != before[i];
		} else {
			stayed += now == before[i];
		}
	}
	CHECK_EQ_U64(moved, inside);
	CHECK_EQ_U64(stayed, outside);
	CHECK_EQ_U64(total_moves(o) - moves0, inside);
	to_check_all(o); /* cookies and, backed, the bytes: the pattern check through the table */
	to_expect_clean(o);
	unsigned blocks = expect_range_blocks(pool, s, e, PA_MT_MOVABLE);
	struct pa_usage u1 = usage(pool);
	CHECK_EQ_U64(u1.allocated, u0.allocated + (e - s));
	CHECK_EQ_U64(u1.free + u1.reserved, u0.free + u0.reserved - (e - s));
	VALIDATE(pool);
	fprintf(stderr, "  [%" PRIu64 ", %" PRIu64 "): %zu folios moved out, %u blocks\n", s, e,
	        inside, blocks);
	/* Taking it again: the frames are allocated and not movable. */
	struct snap sn;
	snap_take(&sn, pool, o);
	CHECK_EQ_U64(pa_alloc_contig_range(pool, s, e, PA_MT_MOVABLE, 0), (uint64_t)-EBUSY);
	pa_pfn_t mid = s + (e - s) / 2;
	CHECK_EQ_U64(pa_alloc_contig_range(pool, mid, mid + 1, PA_MT_MOVABLE, 0), (uint64_t)-EBUSY);
	snap_expect_same(&sn, pool, o, "taking a taken range");
	pa_free_contig_range(pool, s, e - s);
	struct pa_usage u2 = usage(pool);
	CHECK_EQ_U64(u2.allocated, u0.allocated);
	VALIDATE(pool);
	free(before);
}

TEST(contig_range_of_order4_folios_straddling_both_edges_is_taken_data_intact)
{
	const char *cmd = QUIET "mem=64M backing=anon";
	struct pa_pool *pool = test_boot(cmd);
	struct towner o;
	to_init(&o, pool, 20000);
	layout_order4(&o);
	uint64_t pb = 1ull << pool->cfg.pageblock_order;
	/* Both edges fall inside live order-4 folios (those at even multiples of 16). */
	pa_pfn_t s = 10 * pb + 8, e = 16 * pb + 288 + 12;
	REQUIRE(slot_at(&o, s) >= 0 && slot_at(&o, e - 1) >= 0);
	REQUIRE(to_pfn(&o, (size_t)slot_at(&o, s)) < s);
	take_range_and_check(pool, &o, s, e);
	to_finish_as_fresh(&o, cmd);
}

TEST(contig_range_of_mixed_folios_is_taken_then_freed_and_merges)
{
	const char *cmd = QUIET "mem=96M backing=anon";
	struct pa_pool *pool = test_boot(cmd);
	struct towner o;
	to_init(&o, pool, 40000);
	uint64_t rng = 7;
	for (;;) {
		unsigned order = (unsigned[]){ 0, 0, 1, 2, 3, 4, 6, 9 }[to_rand(&rng) % 8];
		if (to_alloc(&o, PA_GFP_COMP | PA_GFP_NOCOMPACT, order) < 0 &&
		    to_alloc(&o, PA_GFP_COMP | PA_GFP_NOCOMPACT, 0) < 0)
			break;
	}
	/*
	 * 40 % freed at random, and the top quarter of the pool emptied: the
	 * destinations of every order that the folios of the ranges need.
	 */
	uint64_t pb = 1ull << pool->cfg.pageblock_order;
	for (size_t i = 0; i < o.nr; i++)
		if (to_rand(&rng) % 5 < 2 || to_pfn(&o, i) >= pool->nr_frames / 4 * 3)
			to_free(&o, i);
	/* Several ranges below it, some aligned, one a whole max-order block, one a single frame. */
	const pa_pfn_t ranges[][2] = {
		{ 3 * pb + 1, 9 * pb - 1 },
		{ 20 * pb, 22 * pb },
		{ 23 * pb + 5, 23 * pb + 6 },
		{ 30 * pb + 100, 30 * pb + 1100 },
	};
	for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
		if (slot_at(&o, ranges[i][0]) < 0 && i == 2)
			continue; /* the single frame happens to be free: nothing to move there */
		take_range_and_check(pool, &o, ranges[i][0], ranges[i][1]);
	}
	/* Two ranges side by side held at once, then freed in the other order. */
	int rc1 = pa_alloc_contig_range(pool, 12 * pb + 3, 14 * pb, PA_MT_MOVABLE, 0);
	int rc2 = pa_alloc_contig_range(pool, 14 * pb, 14 * pb + 700, PA_MT_MOVABLE, 0);
	CHECK_MSG(rc1 == 0 && rc2 == 0, "two ranges side by side: %d, %d", rc1, rc2);
	if (rc1 == 0)
		expect_range_blocks(pool, 12 * pb + 3, 14 * pb, PA_MT_MOVABLE);
	if (rc2 == 0)
		expect_range_blocks(pool, 14 * pb, 14 * pb + 700, PA_MT_MOVABLE);
	VALIDATE(pool);
	if (rc2 == 0)
		pa_free_contig_range(pool, 14 * pb, 700);
	if (rc1 == 0)
		pa_free_contig_range(pool, 12 * pb + 3, 2 * pb - 3);
	to_check_all(&o);
	to_expect_clean(&o);
	to_finish_as_fresh(&o, cmd);
}

TEST(contig_range_in_an_empty_pool_and_freed_merges)
{
	const char *cmd = "kcompactd=manual mem=64M";
	struct pa_pool *pool = test_boot(cmd);
	uint64_t n = pool->nr_frames;
	const pa_pfn_t ranges[][2] = {
		{ 0, 1 }, { 0, n }, { 1, n - 1 }, { 1000, 5003 }, { n - 7, n }
	};
	for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
		pa_pfn_t s = ranges[i][0], e = ranges[i][1];
		int rc = pa_alloc_contig_range(pool, s, e, PA_MT_MOVABLE, 0);
		CHECK_MSG(rc == 0, "[%" PRIu64 ", %" PRIu64 "): %d", s, e, rc);
		if (rc)
			continue;
		expect_range_blocks(pool, s, e, PA_MT_MOVABLE);
		CHECK_EQ_U64(usage(pool).allocated, e - s);
		VALIDATE(pool);
		pa_free_contig_range(pool, s, e - s);
		expect_as_fresh(pool, cmd);
	}
	pa_shutdown(pool);
}

/* ---------------------------------------------------------------------- */
/* Refusals change nothing                                                 */
/* ---------------------------------------------------------------------- */

/* A range of about 3 pageblocks centred on pfn, inside the zone. */
static void range_around(struct pa_pool *pool, pa_pfn_t pfn, pa_pfn_t *s, pa_pfn_t *e)
{
	uint64_t half = 3ull << pool->cfg.pageblock_order >> 1;
	*s = pfn > half ? pfn - half + 3 : 0;
	*e = pfn + half < pool->nr_frames ? pfn + half - 5 : pool->nr_frames;
}

/* Movable folios on both sides of the obstacle: the range is worth trying. */
static void expect_folios_around(struct towner *o, pa_pfn_t s, pa_pfn_t pfn, pa_pfn_t e)
{
	size_t below = 0, above = 0;
	for (size_t i = 0; i < o->nr; i++) {
		pa_pfn_t p = to_pfn(o, i);
		if (p == PA_PFN_INVALID || o->f[i].pins)
			continue;
		below += p >= s && p < pfn;
		above += p > pfn && p < e;
	}
	REQUIRE(below > 0 && above > 0);
}

TEST(contig_range_with_an_unmovable_frame_is_ebusy_and_changes_nothing)
{
	const char *cmd = QUIET "mem=64M backing=anon";
	struct pa_pool *pool = test_boot(cmd);
	struct towner o;
	to_init(&o, pool, 20000);
	layout_order4(&o);
	/* Take every free block, then give one back in the middle: the kernel page lands there. */
	struct pa_page *fill[4096];
	size_t nf = 0;
	struct pa_page *p;
	while (nf < 4096 &&
	       (p = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN | PA_GFP_NOCOMPACT, 4)))
		fill[nf++] = p;
	REQUIRE(nf > 0 && usage(pool).free == 0);
	size_t mid = nf / 2;
	pa_free_pages(pool, fill[mid], 4);
	struct pa_page *k = pa_alloc_pages(pool, PA_GFP_KERNEL, 0);
	REQUIRE(k && pa_page_to_pfn(pool, k) == pa_page_to_pfn(pool, fill[mid]));
	fill[mid] = NULL;
	/* Now give back the other blocks: destinations for the folios. */
	for (size_t i = 0; i < nf; i++)
		if (fill[i])
			pa_free_pages(pool, fill[i], 4);
	pa_pfn_t kp = pa_page_to_pfn(pool, k), s, e;
	range_around(pool, kp, &s, &e);
	expect_folios_around(&o, s, kp, e);
	struct snap sn;
	snap_take(&sn, pool, &o);
	int rc = pa_alloc_contig_range(pool, s, e, PA_MT_MOVABLE, 0);
	CHECK_MSG(rc == -EBUSY, "pa_alloc_contig_range over an unmovable frame = %d", rc);
	snap_expect_same(&sn, pool, &o, "unmovable frame in the range");
	/* The same with the unmovable frame at the very start and end of the range. */
	snap_take(&sn, pool, &o);
	CHECK_EQ_U64(pa_alloc_contig_range(pool, kp, e, PA_MT_MOVABLE, 0), (uint64_t)-EBUSY);
	CHECK_EQ_U64(pa_alloc_contig_range(pool, s, kp + 1, PA_MT_MOVABLE, 0), (uint64_t)-EBUSY);
	CHECK_EQ_U64(pa_alloc_contig_range(pool, kp, kp + 1, PA_MT_CMA, 0), (uint64_t)-EBUSY);
	snap_expect_same(&sn, pool, &o, "unmovable frame at the range's edge");
	pa_free_pages(pool, k, 0);
	to_finish_as_fresh(&o, cmd);
}

TEST(contig_range_with_a_pinned_folio_is_ebusy_and_changes_nothing)
{
	const char *cmd = QUIET "mem=64M backing=anon";
	struct pa_pool *pool = test_boot(cmd);
	struct towner o;
	to_init(&o, pool, 20000);
	layout_order4(&o);
	uint64_t pb = 1ull << pool->cfg.pageblock_order;
	long idx = slot_at(&o, 15 * pb + 16 * 10);
	REQUIRE(idx >= 0);
	REQUIRE(pa_pin(pool, o.f[idx].page) == 0);
	o.f[idx].pins++; /* the owner knows: its callback answers BUSY for it */
	pa_pfn_t pp = to_pfn(&o, (size_t)idx), s, e;
	range_around(pool, pp, &s, &e);
	expect_folios_around(&o, s, pp, e);
	struct snap sn;
	snap_take(&sn, pool, &o);
	int rc = pa_alloc_contig_range(pool, s, e, PA_MT_MOVABLE, 0);
	CHECK_MSG(rc == -EBUSY, "pa_alloc_contig_range over a pinned folio = %d", rc);
	CHECK_EQ_U64(to_pfn(&o, (size_t)idx), pp);
	snap_expect_same(&sn, pool, &o, "pinned folio in the range");
	/* Unpinned, the same range is taken. */
	REQUIRE(pa_unpin(pool, o.f[idx].page) == 0);
	o.f[idx].pins--;
	rc = pa_alloc_contig_range(pool, s, e, PA_MT_MOVABLE, 0);
	CHECK_MSG(rc == 0, "after unpinning: %d", rc);
	if (rc == 0)
		pa_free_contig_range(pool, s, e - s);
	to_check_all(&o);
	to_finish_as_fresh(&o, cmd);
}

TEST(contig_range_with_an_ownerless_movable_folio_is_ebusy_and_changes_nothing)
{
	const char *cmd = QUIET "mem=64M backing=anon";
	struct pa_pool *pool = test_boot(cmd);
	struct towner o;
	to_init(&o, pool, 20000);
	layout_order4(&o);
	uint64_t pb = 1ull << pool->cfg.pageblock_order;
	/* Free one owned folio and put an ownerless movable folio of the same order in its place. */
	long idx = slot_at(&o, 17 * pb + 16 * 6);
	REQUIRE(idx >= 0);
	pa_pfn_t at = to_pfn(&o, (size_t)idx);
	to_free(&o, (size_t)idx);
	struct pa_page *stray[4096];
	size_t ns = 0;
	struct pa_page *p, *mine = NULL;
	while (!mine && ns < 4096 &&
	       (p = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_COMP | PA_GFP_NOWARN, 4))) {
		if (pa_page_to_pfn(pool, p) == at)
			mine = p;
		else
			stray[ns++] = p;
	}
	for (size_t i = 0; i < ns; i++)
		pa_free_pages(pool, stray[i], 4);
	REQUIRE(mine);
	pa_pfn_t s, e;
	range_around(pool, at, &s, &e);
	expect_folios_around(&o, s, at, e);
	struct snap sn;
	snap_take(&sn, pool, &o);
	int rc = pa_alloc_contig_range(pool, s, e, PA_MT_MOVABLE, 0);
	CHECK_MSG(rc == -EBUSY, "pa_alloc_contig_range over an ownerless folio = %d", rc);
	CHECK(pa_folio_order(pool, mine) == 4);
	snap_expect_same(&sn, pool, &o, "ownerless movable folio in the range");
	pa_free_pages(pool, mine, 4);
	to_finish_as_fresh(&o, cmd);
}

TEST(contig_range_being_taken_already_is_ebusy_and_changes_nothing)
{
	const char *cmd = QUIET "mem=64M backing=anon";
	struct pa_pool *pool = test_boot(cmd);
	struct towner o;
	to_init(&o, pool, 20000);
	layout_order4(&o);
	uint64_t pb = 1ull << pool->cfg.pageblock_order;
	struct pa_zone *z = &pool->zones[0];
	/* Another contiguous allocation holds pageblock 12 isolated. */
	REQUIRE(isolation_start(z, 12 * pb + 5, 12 * pb + 6) == 0);
	struct snap sn;
	snap_take(&sn, pool, &o);
	const pa_pfn_t ranges[][2] = { { 12 * pb, 13 * pb },
		                       { 11 * pb + 9, 12 * pb + 1 },
		                       { 12 * pb + 511, 14 * pb } };
	for (size_t i = 0; i < 3; i++) {
		int rc = pa_alloc_contig_range(pool, ranges[i][0], ranges[i][1], PA_MT_MOVABLE, 0);
		CHECK_MSG(rc == -EBUSY, "range %zu over an isolated pageblock: %d", i, rc);
	}
	snap_expect_same(&sn, pool, &o, "a range being taken");
	isolation_undo(z, 12 * pb + 5, 12 * pb + 6);
	to_finish_as_fresh(&o, cmd);
}

/* A copy of every pageblock's bits, to compare types exactly. */
static uint8_t *pb_bits_copy(const struct pa_pool *pool)
{
	size_t n = (size_t)pool->nr_pageblocks;
	uint8_t *b = malloc(n);
	REQUIRE(b);
	memcpy(b, pool->pb_bits, n);
	return b;
}

static void expect_pb_bits(const struct pa_pool *pool, const uint8_t *was, const char *what)
{
	size_t n = (size_t)pool->nr_pageblocks;
	for (size_t i = 0; i < n; i++)
		if (pool->pb_bits[i] != was[i]) {
			test_fail(__FILE__, __LINE__,
			          "%s: pageblock at pfn %" PRIu64 " changed from type %s to %s",
			          what, (uint64_t)i << pool->cfg.pageblock_order,
			          pa_migratetype_names[was[i] & PB_MT_MASK],
			          pa_migratetype_names[pool->pb_bits[i] & PB_MT_MASK]);
			return;
		}
}

/*
 * A range over free Unmovable pageblocks that fails after they were retyped
 * (an owner that will not let its folio go; a pageblock another allocation
 * holds isolated) gives every pageblock its type back.
 */
TEST(contig_range_that_fails_after_retyping_restores_every_pageblock_type)
{
	const char *cmd = QUIET "mem=64M max_order=10";
	struct pa_pool *pool = test_boot(cmd);
	REQUIRE(pool->cfg.pageblock_order == 9);
	struct towner o;
	to_init(&o, pool, 64);
	/* One kernel page claims an order-10 block (two pageblocks) for Unmovable... */
	struct pa_page *k = pa_alloc_pages(pool, PA_GFP_KERNEL, 0);
	REQUIRE(k);
	pa_pfn_t ub = pa_page_to_pfn(pool, k) & ~1023ull;
	pa_free_pages(pool, k, 0);
	REQUIRE(pageblock_mt(pool, ub) == PA_MT_UNMOVABLE);
	/* ...and owned order-9 folios fill every other pageblock. */
	for (unsigned i = 0; i < 30; i++)
		REQUIRE(to_alloc(&o, PA_GFP_NOCOMPACT, 9) >= 0);
	REQUIRE(pageblock_mt(pool, ub) == PA_MT_UNMOVABLE);
	pa_pfn_t s = ub ? ub - 512 : ub, e = ub ? ub + 1024 : ub + 1536;
	o.answer = TO_BUSY;
	struct snap sn;
	snap_take(&sn, pool, &o);
	uint8_t *was = pb_bits_copy(pool);
	int rc = pa_alloc_contig_range(pool, s, e, PA_MT_MOVABLE, 0);
	CHECK_MSG(rc == -EBUSY, "a range with a folio its owner keeps: %d", rc);
	expect_pb_bits(pool, was, "a folio its owner keeps");
	o.answer = TO_OK;
	/* A pageblock of the range held isolated by another allocation. */
	struct pa_zone *z = zone_of_pfn(pool, s);
	REQUIRE(isolation_start(z, e - 1, e) == 0);
	rc = pa_alloc_contig_range(pool, ub, e, PA_MT_MOVABLE, 0);
	CHECK_MSG(rc == -EBUSY, "a range with an isolated pageblock: %d", rc);
	isolation_undo(z, e - 1, e);
	expect_pb_bits(pool, was, "an isolated pageblock");
	free(was);
	snap_expect_same(&sn, pool, NULL, "failed ranges over Unmovable pageblocks");
	to_free_all(&o);
	expect_as_fresh(pool, cmd);
	pa_shutdown(pool);
	to_destroy(&o);
}

/* --- A block wider than a pageblock on a CPU's list --------------------- */

static _Thread_local unsigned posed_cpu;

static unsigned posed_cpu_id(void *ctx)
{
	(void)ctx;
	return posed_cpu;
}

/*
 * A range that lies in a free order-7 block on CPU 2's list (pageblocks of
 * order 5) is free: it is taken, and the pool validates before and after.
 */
TEST(contig_range_inside_a_wide_block_on_a_cpu_list_is_taken)
{
	const char *cmd = "mem=16M max_order=7 pageblock_order_ceil=5 cma=1M nr_cpus=3";
	struct pa_platform plat = { .cpu_id = posed_cpu_id };
	struct pa_pool *pool = test_boot_on(cmd, &plat);
	posed_cpu = 2;
	REQUIRE(pa_ctl_write(pool, "pcp/orders/7/enabled", "1") == 0);
	struct pa_page *small[10];
	small[0] = pa_alloc_pages(pool, PA_GFP_KERNEL, 1);
	for (unsigned i = 1; i < 10; i++)
		small[i] = pa_alloc_pages(pool, PA_GFP_KERNEL, 0);
	struct pa_page *big = pa_alloc_pages(pool, PA_GFP_KERNEL, 7);
	REQUIRE(big && small[0] && small[9]);
	/* The refill left another order-7 block on CPU 2's list. */
	struct pa_zone *z = zone_of_pfn(pool, pa_page_to_pfn(pool, big));
	pa_pfn_t wide = pcp_head(z->pcp[2], 7, PA_MT_UNMOVABLE);
	REQUIRE(wide != PA_NIL);
	pa_pfn_t s = wide + 43, e = wide + 107;
	VALIDATE(pool);
	uint64_t allocated = usage(pool).allocated;
	int rc = pa_alloc_contig_range(pool, s, e, PA_MT_MOVABLE, 0);
	CHECK_MSG(rc == 0, "a free range inside a block on a CPU's list: %d", rc);
	VALIDATE(pool);
	if (rc == 0) {
		CHECK_EQ_U64(usage(pool).allocated, allocated + (e - s));
		pa_free_contig_range(pool, s, e - s);
		VALIDATE(pool);
	}
	CHECK_EQ_U64(usage(pool).allocated, allocated);
	pa_free_pages(pool, big, 7);
	pa_free_pages(pool, small[0], 1);
	for (unsigned i = 1; i < 10; i++)
		pa_free_pages(pool, small[i], 0);
	pa_drain_all(pool);
	VALIDATE(pool);
	CHECK_EQ_U64(usage(pool).allocated, 0);
	pa_shutdown(pool);
}

static void expect_einval(struct pa_pool *pool, struct towner *o, pa_pfn_t s, pa_pfn_t e,
                          unsigned mt, const char *what)
{
	struct snap sn;
	snap_take(&sn, pool, o);
	int rc = pa_alloc_contig_range(pool, s, e, mt, 0);
	CHECK_MSG(rc == -EINVAL, "%s [%" PRIu64 ", %" PRIu64 ") mt %u: %d, expected -EINVAL", what,
	          s, e, mt, rc);
	snap_expect_same(&sn, pool, o, what);
}

TEST(contig_range_einval_empty_beyond_pool_and_other_migratetypes)
{
	const char *cmd = QUIET "mem=64M";
	struct pa_pool *pool = test_boot(cmd);
	struct towner o;
	to_init(&o, pool, 20000);
	layout_order4(&o);
	uint64_t n = pool->nr_frames;
	expect_einval(pool, &o, 100, 100, PA_MT_MOVABLE, "empty range");
	expect_einval(pool, &o, 101, 100, PA_MT_MOVABLE, "reversed range");
	expect_einval(pool, &o, n - 10, n + 1, PA_MT_MOVABLE, "end beyond the pool");
	expect_einval(pool, &o, n, n + 10, PA_MT_MOVABLE, "start at the end of the pool");
	expect_einval(pool, &o, PA_PFN_INVALID - 1, PA_PFN_INVALID, PA_MT_CMA, "pfn near 2^64");
	const unsigned bad_mt[] = { PA_MT_UNMOVABLE, PA_MT_RECLAIMABLE, PA_MT_HIGHATOMIC,
		                    PA_MT_ISOLATE,   PA_MT_COUNT,       99 };
	for (size_t i = 0; i < sizeof bad_mt / sizeof bad_mt[0]; i++)
		expect_einval(pool, &o, 1000, 3000, bad_mt[i], "another migratetype");
	CHECK_EQ_U64(pa_alloc_contig_range(NULL, 0, 1, PA_MT_MOVABLE, 0), (uint64_t)-EINVAL);
	to_finish_as_fresh(&o, cmd);
}

TEST(contig_range_across_the_dma32_normal_boundary_is_einval)
{
	const char *cmd = QUIET "mem=8G";
	struct pa_pool *pool = test_boot(cmd);
	REQUIRE(zones_with_memory(pool) == 2);
	pa_pfn_t b = (4ull << 30) >> pool->cfg.page_shift;
	REQUIRE(pool->zones[0].end_pfn == b && pool->zones[1].start_pfn == b);
	expect_einval(pool, NULL, b - 1, b + 1, PA_MT_MOVABLE, "across DMA32/Normal");
	expect_einval(pool, NULL, 0, pool->nr_frames, PA_MT_MOVABLE, "the whole pool");
	/* Each side on its own is fine. */
	CHECK_EQ_U64(pa_alloc_contig_range(pool, b - 1000, b, PA_MT_MOVABLE, 0), 0);
	CHECK_EQ_U64(pa_alloc_contig_range(pool, b, b + 1000, PA_MT_MOVABLE, 0), 0);
	VALIDATE(pool);
	pa_free_contig_range(pool, b - 1000, 1000);
	pa_free_contig_range(pool, b, 1000);
	expect_as_fresh(pool, cmd);
	pa_shutdown(pool);
}

TEST(contig_range_over_a_hole_is_einval)
{
	/* A hole inside a present section, and a whole absent section (128 MiB). */
	const char *cmd = QUIET "mem=512M memhole=100M-104M memhole=256M-384M";
	struct pa_pool *pool = test_boot(cmd);
	struct towner o;
	to_init(&o, pool, 40000);
	layout_order4(&o);
	pa_pfn_t h1 = (100ull << 20) >> 12, h1e = (104ull << 20) >> 12;
	pa_pfn_t h2 = (256ull << 20) >> 12, h2e = (384ull << 20) >> 12;
	expect_einval(pool, &o, h1 - 10, h1 + 10, PA_MT_MOVABLE, "into a small hole");
	expect_einval(pool, &o, h1e - 1, h1e + 10, PA_MT_MOVABLE, "out of a small hole");
	expect_einval(pool, &o, h1 + 5, h1 + 6, PA_MT_MOVABLE, "inside a small hole");
	expect_einval(pool, &o, h1 - 1, h1e + 1, PA_MT_MOVABLE, "over a small hole");
	expect_einval(pool, &o, h2 - 10, h2 + 10, PA_MT_MOVABLE, "into an absent section");
	expect_einval(pool, &o, h2 + 100, h2 + 200, PA_MT_MOVABLE, "inside an absent section");
	expect_einval(pool, &o, h2 - 1, h2e + 1, PA_MT_MOVABLE, "over an absent section");
	/* Right up to the holes is fine. */
	int rc = pa_alloc_contig_range(pool, h1 - 700, h1, PA_MT_MOVABLE, 0);
	CHECK_MSG(rc == 0, "up to the small hole: %d", rc);
	if (rc == 0)
		pa_free_contig_range(pool, h1 - 700, 700);
	rc = pa_alloc_contig_range(pool, h2e, h2e + 900, PA_MT_MOVABLE, 0);
	CHECK_MSG(rc == 0, "from the end of the absent section: %d", rc);
	if (rc == 0)
		pa_free_contig_range(pool, h2e, 900);
	to_check_all(&o);
	to_finish_as_fresh(&o, cmd);
}

/* ---------------------------------------------------------------------- */
/* pa_alloc_contig_pages                                                   */
/* ---------------------------------------------------------------------- */

static uint64_t pow2_floor(uint64_t n)
{
	return 1ull << (63 - __builtin_clzll(n));
}

/* Fill with owned order-9 folios and free those in odd pageblocks. */
static void layout_order9(struct towner *o)
{
	while (to_alloc(o, PA_GFP_COMP | PA_GFP_NOCOMPACT, 9) >= 0)
		;
	for (size_t i = 0; i < o->nr; i++)
		if ((to_pfn(o, i) >> 9) & 1)
			to_free(o, i);
}

TEST(contig_pages_of_any_length_are_aligned_to_the_largest_power_of_two)
{
	const char *cmd = QUIET "mem=4G";
	struct pa_pool *pool = test_boot(cmd);
	REQUIRE(pool->cfg.max_order == 10);
	struct towner o;
	to_init(&o, pool, 4096);
	layout_order9(&o);
	static const uint64_t lens[] = { 1, 2, 3, 7, 512, 513, 1000, 1024, 1025, 4097, 262144 };
	for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
		uint64_t n = lens[i];
		struct pa_usage u0 = usage(pool);
		struct pa_page *p = pa_alloc_contig_pages(pool, n, PA_GFP_MOVABLE, -1);
		CHECK_MSG(p, "pa_alloc_contig_pages(%" PRIu64 ") failed", n);
		if (!p)
			continue;
		pa_pfn_t pfn = pa_page_to_pfn(pool, p);
		CHECK_MSG(pfn % pow2_floor(n) == 0,
		          "%" PRIu64 " frames at pfn %" PRIu64 ": not aligned to %" PRIu64, n, pfn,
		          pow2_floor(n));
		expect_range_blocks(pool, pfn, pfn + n, PA_MT_MOVABLE);
		CHECK_EQ_U64(usage(pool).allocated, u0.allocated + n);
		for (size_t j = 0; j < o.nr; j++)
			CHECK(!overlaps(to_pfn(&o, j), o.f[j].order, pfn, pfn + n));
		VALIDATE(pool);
		pa_free_contig_range(pool, pfn, n);
		CHECK_EQ_U64(usage(pool).allocated, u0.allocated);
	}
	/* Lengths that cannot be: none, more than the pool. */
	CHECK(pa_alloc_contig_pages(pool, 0, PA_GFP_MOVABLE | PA_GFP_NOWARN, -1) == NULL);
	CHECK(pa_alloc_contig_pages(pool, pool->nr_frames + 1, PA_GFP_MOVABLE | PA_GFP_NOWARN,
	                            -1) == NULL);
	CHECK(pa_alloc_contig_pages(pool, 8, PA_GFP_MOVABLE | PA_GFP_NOWARN, 1) ==
	      NULL); /* no node 1 */
	to_check_all(&o);
	to_expect_clean(&o);
	to_finish_as_fresh(&o, cmd);
}

TEST(contig_pages_honours_node_and_dma32)
{
	const char *cmd = QUIET "mem=8G numa=2";
	struct pa_pool *pool = test_boot(cmd);
	REQUIRE(pool->nr_nodes == 2);
	pa_pfn_t b4g = (4ull << 30) >> pool->cfg.page_shift;
	struct pa_page *p = pa_alloc_contig_pages(pool, 5000, PA_GFP_MOVABLE, 1);
	CHECK(p && pa_page_to_pfn(pool, p) >= pool->nodes[1].start_pfn &&
	      pa_page_to_pfn(pool, p) + 5000 <= pool->nodes[1].end_pfn);
	if (p)
		pa_free_contig_range(pool, pa_page_to_pfn(pool, p), 5000);
	p = pa_alloc_contig_pages(pool, 70000, PA_GFP_MOVABLE | PA_GFP_DMA32, -1);
	CHECK(p && pa_page_to_pfn(pool, p) + 70000 <= b4g && pa_page_to_pfn(pool, p) % 65536 == 0);
	if (p)
		pa_free_contig_range(pool, pa_page_to_pfn(pool, p), 70000);
	expect_as_fresh(pool, cmd);
	pa_shutdown(pool);
}

/*
 * Place unmovable frames in the place of the order-9 folio of slot idx: free
 * the folio (the only free memory then) and allocate an order-9 kernel
 * block, which lands there and claims the pageblock. Freed, it leaves an
 * unmovable pageblock with no unmovable frame.
 */
static struct pa_page *unmovable_at(struct pa_pool *pool, struct towner *o, size_t idx)
{
	pa_pfn_t at = to_pfn(o, idx);
	REQUIRE(o->f[idx].order == 9);
	to_free(o, idx);
	struct pa_page *k = pa_alloc_pages(pool, PA_GFP_KERNEL | PA_GFP_NOCOMPACT, 9);
	REQUIRE(k && pa_page_to_pfn(pool, k) == at);
	REQUIRE(pageblock_mt(pool, at) == PA_MT_UNMOVABLE);
	return k;
}

/* Allocate owned order-9 folios until one lands in [s, e); the others are freed again. */
static size_t alloc_owned_in(struct towner *o, pa_pfn_t s, pa_pfn_t e)
{
	size_t first = o->nr;
	for (;;) {
		long idx = to_alloc(o, PA_GFP_COMP | PA_GFP_NOCOMPACT, 9);
		REQUIRE(idx >= 0);
		pa_pfn_t pfn = to_pfn(o, (size_t)idx);
		if (pfn >= s && pfn < e) {
			for (size_t i = first; i < (size_t)idx; i++)
				to_free(o, i);
			return (size_t)idx;
		}
	}
}

#define GIB_FRAMES (262144ull) /* 1 GiB of 4 KiB frames */

static size_t slot_in_region(struct towner *o, unsigned region, unsigned nth)
{
	pa_pfn_t at = region * GIB_FRAMES + (pa_pfn_t)nth * 512 * 37 % GIB_FRAMES;
	long idx = slot_at(o, at);
	REQUIRE(idx >= 0);
	return (size_t)idx;
}

TEST(contig_pages_1g_succeeds_iff_an_aligned_gib_has_no_unmovable_or_pinned_frame)
{
	const char *cmd = QUIET "mem=4G max_order=10";
	struct pa_pool *pool = test_boot(cmd);
	struct towner o;
	to_init(&o, pool, 4096);
	/* The pool full of order-9 folios; unmovable frames in regions 0 and 2, a pin in region 1. */
	while (to_alloc(&o, PA_GFP_COMP | PA_GFP_NOCOMPACT, 9) >= 0)
		;
	struct pa_page *k0 = unmovable_at(pool, &o, slot_in_region(&o, 0, 100));
	struct pa_page *k2 = unmovable_at(pool, &o, slot_in_region(&o, 2, 3));
	size_t pin1 = slot_in_region(&o, 1, 250);
	REQUIRE(pa_pin(pool, o.f[pin1].page) == 0);
	o.f[pin1].pins++;
	/* Half of the rest freed: room for region 3's folios. */
	for (size_t i = 0; i < o.nr; i++)
		if (o.f[i].live && (to_pfn(&o, i) >> 9) % 2 == 1 && i != pin1)
			to_free(&o, i);
	struct pa_page *p = pa_alloc_contig_pages(pool, GIB_FRAMES, PA_GFP_MOVABLE, -1);
	CHECK_MSG(p && pa_page_to_pfn(pool, p) == 3 * GIB_FRAMES, "1 GiB: %s pfn %" PRIu64,
	          p ? "at" : "failed,", p ? pa_page_to_pfn(pool, p) : 0);
	if (p) {
		expect_range_blocks(pool, 3 * GIB_FRAMES, 4 * GIB_FRAMES, PA_MT_MOVABLE);
		VALIDATE(pool);
		pa_free_contig_range(pool, 3 * GIB_FRAMES, GIB_FRAMES);
	}
	to_check_all(&o);
	/* Now region 3 holds a pinned folio too: every region is fixed, and nothing changes. */
	size_t pin3 = alloc_owned_in(&o, 3 * GIB_FRAMES, 4 * GIB_FRAMES);
	REQUIRE(pa_pin(pool, o.f[pin3].page) == 0);
	o.f[pin3].pins++;
	struct snap sn;
	snap_take(&sn, pool, &o);
	p = pa_alloc_contig_pages(pool, GIB_FRAMES, PA_GFP_MOVABLE | PA_GFP_NOWARN, -1);
	CHECK_MSG(p == NULL, "1 GiB with every region holding a fixed frame: at pfn %" PRIu64,
	          p ? pa_page_to_pfn(pool, p) : 0);
	snap_expect_same(&sn, pool, &o, "no clean 1 GiB region");
	/* Unpin region 1: its GiB can be emptied now (it holds no unmovable frame). */
	REQUIRE(pa_unpin(pool, o.f[pin1].page) == 0);
	o.f[pin1].pins--;
	p = pa_alloc_contig_pages(pool, GIB_FRAMES, PA_GFP_MOVABLE, -1);
	CHECK_MSG(p && pa_page_to_pfn(pool, p) == GIB_FRAMES,
	          "1 GiB after unpinning region 1: %s pfn %" PRIu64, p ? "at" : "failed,",
	          p ? pa_page_to_pfn(pool, p) : 0);
	if (p)
		pa_free_contig_range(pool, GIB_FRAMES, GIB_FRAMES);
	to_check_all(&o);
	to_expect_clean(&o);
	REQUIRE(pa_unpin(pool, o.f[pin3].page) == 0);
	o.f[pin3].pins--;
	pa_free_pages(pool, k0, 9);
	pa_free_pages(pool, k2, 9);
	to_finish_as_fresh(&o, cmd);
}

TEST(contig_pages_1g_region_with_free_unmovable_pageblocks_but_no_unmovable_frame)
{
	/*
	 * A GiB whose pageblocks were claimed by unmovable allocations that have
	 * since been freed holds no unmovable frame: it can be taken (Linux's
	 * alloc_contig_pages() looks at the frames, not the pageblock types).
	 */
	const char *cmd = QUIET "mem=4G max_order=10";
	struct pa_pool *pool = test_boot(cmd);
	struct towner o;
	to_init(&o, pool, 4096);
	while (to_alloc(&o, PA_GFP_COMP | PA_GFP_NOCOMPACT, 9) >= 0)
		;
	struct pa_page *k[4];
	for (unsigned r = 0; r < 4; r++)
		k[r] = unmovable_at(pool, &o, slot_in_region(&o, r, 40 + r));
	for (size_t i = 0; i < o.nr; i++)
		if (o.f[i].live && (to_pfn(&o, i) >> 9) % 2 == 1)
			to_free(&o, i);
	/* Region 2's kernel page goes away; its pageblock stays unmovable, all free. */
	pa_pfn_t k2 = pa_page_to_pfn(pool, k[2]);
	pa_free_pages(pool, k[2], 9);
	k[2] = NULL;
	CHECK_EQ_U64(pageblock_mt(pool, k2), PA_MT_UNMOVABLE);
	struct pa_page *p =
	        pa_alloc_contig_pages(pool, GIB_FRAMES, PA_GFP_MOVABLE | PA_GFP_NOWARN, -1);
	CHECK_MSG(
	        p && pa_page_to_pfn(pool, p) == 2 * GIB_FRAMES,
	        "1 GiB with region 2 free of unmovable frames (one free unmovable pageblock): %s pfn %" PRIu64,
	        p ? "at" : "failed,", p ? pa_page_to_pfn(pool, p) : 0);
	if (p)
		pa_free_contig_range(pool, pa_page_to_pfn(pool, p), GIB_FRAMES);
	to_check_all(&o);
	for (unsigned r = 0; r < 4; r++)
		if (k[r])
			pa_free_pages(pool, k[r], 9);
	to_finish_as_fresh(&o, cmd);
}

/* ---------------------------------------------------------------------- */
/* Races (ThreadSanitizer runs this in `make test`)                        */
/* ---------------------------------------------------------------------- */

struct race {
	struct pa_pool *pool;
	struct towner *o;
	unsigned iters;
	atomic_bool stop;
	atomic_uint workers_left;
	atomic_ulong contig_ok, contig_busy, pages_ok, cma_ok, cma_fail, compactions, churn;
	pthread_mutex_t lock;
	unsigned errors;
	char error[256];
};

static void race_error(struct race *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void race_error(struct race *r, const char *fmt, ...)
{
	pthread_mutex_lock(&r->lock);
	if (r->errors++ == 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(r->error, sizeof r->error, fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&r->lock);
}

/*
 * Owned folios allocated and freed, unmovable blocks held a while. Each
 * thread frees only the slots it allocated: to_alloc() publishes a slot
 * before it gives the folio to its owner, and a free by another thread in
 * between would make that pa_set_owner() fail.
 */
#define CHURN_SLOTS 512
static void *race_churn(void *arg)
{
	struct race *r = arg;
	struct towner *o = r->o;
	uint64_t rng = (uint64_t)(uintptr_t)&rng;
	struct pa_page *kern[16] = { 0 };
	size_t mine[CHURN_SLOTS], nmine = 0;
	while (!atomic_load(&r->stop)) {
		uint64_t x = to_rand(&rng);
		if (x % 8 < 5) {
			long idx = nmine < CHURN_SLOTS ?
			                   to_alloc(o,
			                            PA_GFP_COMP |
			                                    ((x >> 8) % 4 ? PA_GFP_NOCOMPACT : 0),
			                            (unsigned)(x >> 12) % 4) :
			                   -1;
			if (idx >= 0)
				mine[nmine++] = (size_t)idx;
		} else if (x % 8 < 7) {
			if (nmine) {
				size_t k = (size_t)((x >> 16) % nmine);
				to_free(o, mine[k]);
				mine[k] = mine[--nmine];
			}
		} else {
			unsigned i = (unsigned)(x >> 20) % 16;
			if (kern[i]) {
				pa_free_pages(r->pool, kern[i], 0);
				kern[i] = NULL;
			} else {
				kern[i] = pa_alloc_pages(
				        r->pool, PA_GFP_KERNEL | PA_GFP_NOWARN | PA_GFP_NOCOMPACT,
				        0);
			}
		}
		if (atomic_fetch_add(&r->churn, 1) % 32 == 0)
			sched_yield(); /* let the contiguous allocations at the zone lock now and then */
	}
	for (unsigned i = 0; i < 16; i++)
		if (kern[i])
			pa_free_pages(r->pool, kern[i], 0);
	return NULL;
}

static void *race_compact(void *arg)
{
	struct race *r = arg;
	while (!atomic_load(&r->stop)) {
		if (pa_compact(r->pool, -1) < 0)
			race_error(r, "pa_compact failed");
		atomic_fetch_add(&r->compactions, 1);
	}
	return NULL;
}

/* Is [s, e) a row of allocated blocks as pa_alloc_contig_range leaves it? (Nobody else frees them.) */
static bool race_range_ok(struct pa_pool *pool, pa_pfn_t s, pa_pfn_t e)
{
	for (pa_pfn_t p = s; p < e;) {
		unsigned o = fit_order(pool, p, e);
		if (pa_folio_order(pool, pa_pfn_to_page(pool, p)) != (int)o ||
		    body_stray(pool, p, o) != PA_NIL)
			return false;
		p += 1ull << o;
	}
	return true;
}

static void *race_contig(void *arg)
{
	struct race *r = arg;
	struct pa_pool *pool = r->pool;
	uint64_t rng = 99;
	for (unsigned i = 0; i < r->iters; i++) {
		uint64_t x = to_rand(&rng);
		uint64_t len = 1 + (x >> 8) % 1500;
		pa_pfn_t s = (x >> 24) % (pool->nr_frames - len);
		if (x % 4) {
			int rc = pa_alloc_contig_range(pool, s, s + len, PA_MT_MOVABLE, 0);
			if (rc == 0) {
				if (!race_range_ok(pool, s, s + len))
					race_error(r,
					           "contig range [%" PRIu64 ", %" PRIu64
					           ") is not what was taken",
					           s, s + len);
				pa_free_contig_range(pool, s, len);
				atomic_fetch_add(&r->contig_ok, 1);
			} else if (rc == -EBUSY) {
				atomic_fetch_add(&r->contig_busy, 1);
			} else {
				race_error(r,
				           "pa_alloc_contig_range(%" PRIu64 ", %" PRIu64 ") = %d",
				           s, s + len, rc);
			}
		} else {
			len = 256 +
			      len % 1024; /* few aligned candidates: each refused one costs an isolation */
			struct pa_page *p = pa_alloc_contig_pages(
			        pool, len, PA_GFP_MOVABLE | PA_GFP_NOWARN, -1);
			if (p) {
				pa_pfn_t pfn = pa_page_to_pfn(pool, p);
				if (pfn % pow2_floor(len) || !race_range_ok(pool, pfn, pfn + len))
					race_error(r,
					           "contig pages %" PRIu64 " at %" PRIu64
					           ": misaligned or wrong",
					           len, pfn);
				pa_free_contig_range(pool, pfn, len);
				atomic_fetch_add(&r->pages_ok, 1);
			}
		}
		if (i % 16 == 0) {
			char err[256];
			if (pa_validate(pool, err, sizeof err) != 0)
				race_error(r, "pa_validate during the race: %s", err);
		}
	}
	if (atomic_fetch_sub(&r->workers_left, 1) == 1)
		atomic_store(&r->stop, true);
	return NULL;
}

static void *race_cma(void *arg)
{
	struct race *r = arg;
	struct pa_pool *pool = r->pool;
	struct pa_cma_info ci;
	if (pa_cma_get(pool, 0, &ci) != 0) {
		race_error(r, "no CMA area");
		return NULL;
	}
	uint64_t rng = (uint64_t)(uintptr_t)&ci; /* two of these run: different requests */
	for (unsigned i = 0; i < r->iters; i++) {
		uint64_t x = to_rand(&rng);
		uint64_t count = 1 + (x >> 8) % (ci.nr_pages / 3);
		unsigned align = (unsigned)(x >> 32) % 6;
		struct pa_page *p = pa_cma_alloc(pool, 0, count, align);
		if (!p) {
			atomic_fetch_add(&r->cma_fail, 1);
			continue;
		}
		pa_pfn_t pfn = pa_page_to_pfn(pool, p);
		if (pfn < ci.start_pfn || pfn + count > ci.start_pfn + ci.nr_pages ||
		    pfn % (1ull << align) || !race_range_ok(pool, pfn, pfn + count))
			race_error(r,
			           "pa_cma_alloc(%" PRIu64 ", align %u) = pfn %" PRIu64
			           ": outside, misaligned or "
			           "not allocated",
			           count, align, pfn);
		/*
		 * Released once: a second release would be a caller's bug here, as
		 * the other CMA thread may have been given the frames meanwhile.
		 */
		int rc = pa_cma_release(pool, 0, p, count);
		if (rc != 0)
			race_error(r, "pa_cma_release = %d", rc);
		atomic_fetch_add(&r->cma_ok, 1);
	}
	if (atomic_fetch_sub(&r->workers_left, 1) == 1)
		atomic_store(&r->stop, true);
	return NULL;
}

TEST(contig_and_cma_race_allocations_frees_and_compaction)
{
	const char *cmd =
	        "kcompactd=manual min_free_kbytes=0 mem=64M cma=16M backing=anon nr_cpus=4";
	struct pa_pool *pool = test_boot(cmd);
	struct towner o;
	unsigned iters = (unsigned)(400 * test_scale());
	if (iters < 20)
		iters = 20;
	to_init(&o, pool, 400000);
	o.strict = false; /* a folio freed during its move reaches the callback as a stranger */
	/* Start half full of owned folios, some of them borrowing the CMA area. */
	for (int i = 0; i < 2000; i++)
		to_alloc(&o, PA_GFP_COMP | PA_GFP_NOCOMPACT, (unsigned)i % 4);
	struct race r = { .pool = pool, .o = &o, .iters = iters };
	pthread_mutex_init(&r.lock, NULL);
	atomic_init(&r.workers_left, 3);
	pthread_t t[7];
	void *(*fn[7])(void *) = { race_churn, race_churn, race_compact, race_contig,
		                   race_cma,   race_churn, race_cma };
	for (int i = 0; i < 7; i++)
		REQUIRE(pthread_create(&t[i], NULL, fn[i], &r) == 0);
	for (int i = 0; i < 7; i++)
		pthread_join(t[i], NULL);
	fprintf(stderr,
	        "  contig: %lu taken, %lu busy; contig pages: %lu; cma: %lu taken, %lu failed; %lu compactions, "
	        "%lu churn ops\n",
	        atomic_load(&r.contig_ok), atomic_load(&r.contig_busy), atomic_load(&r.pages_ok),
	        atomic_load(&r.cma_ok), atomic_load(&r.cma_fail), atomic_load(&r.compactions),
	        atomic_load(&r.churn));
	CHECK_MSG(r.errors == 0, "%u errors during the race; first: %s", r.errors, r.error);
	CHECK(atomic_load(&r.contig_ok) + atomic_load(&r.pages_ok) > 0);
	CHECK(atomic_load(&r.cma_ok) > 0);
	VALIDATE(pool);
	to_check_all(&o);
	to_expect_clean(&o);
	struct pa_cma_info ci;
	REQUIRE(pa_cma_get(pool, 0, &ci) == 0);
	CHECK_EQ_U64(ci.allocated_pages, 0);
	to_free_all(&o);
	/* No frame lost: everything back, merged as at boot. */
	expect_as_fresh(pool, cmd);
	pa_shutdown(pool);
	to_destroy(&o);
	pthread_mutex_destroy(&r.lock);
}
