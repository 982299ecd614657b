/* SPDX-License-Identifier: MIT */
/*
 * pa_split_folio(): an allocated block becomes blocks of a smaller order,
 * each freed on its own, with the owner, cookie, migratetype and folio flag
 * carried over; the refused cases (a tail frame, a free block, a wrong order,
 * new_order >= order, a pinned folio, a folio being moved) change nothing.
 */
#include "test.h"

#include <errno.h>

/* Deterministic: no background compactor, no per-CPU lists, every frame allocatable. */
#define QUIET "mem=64M kcompactd=manual pcp_orders=none min_free_kbytes=0 "

static uint64_t free_pages(struct pa_pool *pool)
{
	struct pa_usage u;
	pa_get_usage(pool, &u);
	return u.free;
}

static char *buddyinfo(struct pa_pool *pool)
{
	static char buf[2][4096];
	static int which;
	which ^= 1;
	pa_report(pool, PA_REPORT_BUDDYINFO, 0, buf[which], sizeof buf[which]);
	return buf[which];
}

/* The end of a case: no bad page was reported, and the pool goes. */
static void done(struct pa_pool *pool)
{
	uint64_t bad = 1;
	pa_vmstat_read(pool, "bad_page", &bad);
	CHECK_EQ_U64(bad, 0);
	pa_shutdown(pool);
}

static enum pa_migrate_result never_moves(void *ctx, uint64_t cookie, struct pa_page *old_folio,
                                          struct pa_page *new_folio, unsigned order)
{
	(void)ctx, (void)cookie, (void)old_folio, (void)new_folio, (void)order;
	return PA_MIGRATE_BUSY;
}

TEST(split_makes_pieces_freed_one_by_one_and_merges_back)
{
	struct pa_pool *pool = test_boot(QUIET);
	char before[4096];
	snprintf(before, sizeof before, "%s", buddyinfo(pool));
	uint64_t free0 = free_pages(pool);
	struct pa_page *p = pa_alloc_pages(pool, PA_GFP_KERNEL, 3);
	REQUIRE(p);
	pa_pfn_t pfn = pa_page_to_pfn(pool, p);
	CHECK_EQ_U64(pa_split_folio(pool, p, 3, 0), 0);
	VALIDATE(pool);
	for (unsigned i = 0; i < 8; i++) {
		struct pa_page *q = pa_pfn_to_page(pool, pfn + i);
		CHECK_EQ_U64(pa_folio_order(pool, q), 0);
	}
	/* Out of order: the pieces merge back whatever the order of their frees. */
	static const unsigned order_of_frees[8] = { 5, 0, 7, 2, 1, 6, 3, 4 };
	for (unsigned i = 0; i < 8; i++) {
		pa_free_pages(pool, pa_pfn_to_page(pool, pfn + order_of_frees[i]), 0);
		VALIDATE(pool);
	}
	CHECK_EQ_U64(free_pages(pool), free0);
	CHECK(strcmp(before, buddyinfo(pool)) == 0);
	done(pool);
}

TEST(split_to_a_middle_order_keeps_owner_cookie_type_and_folio)
{
	struct pa_pool *pool = test_boot(QUIET);
	struct pa_owner_ops ops = { .name = "test", .migrate = never_moves };
	int owner = pa_owner_register(pool, &ops);
	REQUIRE(owner > 0);
	struct pa_page *p =
	        pa_alloc_owned(pool, PA_GFP_MOVABLE | PA_GFP_COMP, 9, owner, 0xfeedbeefull);
	REQUIRE(p);
	pa_pfn_t pfn = pa_page_to_pfn(pool, p);
	CHECK_EQ_U64(pa_split_folio(pool, p, 9, 2), 0);
	VALIDATE(pool);
	for (pa_pfn_t i = 0; i < 512; i += 4) {
		struct pa_page *head = pa_pfn_to_page(pool, pfn + i);
		CHECK_EQ_U64(pa_folio_order(pool, head), 2);
		CHECK_EQ_U64(pa_page_cookie(pool, head), 0xfeedbeefull);
		/* Still a folio: a tail frame names its own piece's head. */
		CHECK(pa_folio_head(pool, pa_pfn_to_page(pool, pfn + i + 3)) == head);
		/* Still movable and owned: the owner can be set again on a piece. */
		CHECK_EQ_U64(pa_set_owner(pool, head, owner, i), 0);
		CHECK_EQ_U64(pa_page_cookie(pool, head), i);
	}
	/* A piece can be split again. */
	CHECK_EQ_U64(pa_split_folio(pool, p, 2, 0), 0);
	for (pa_pfn_t i = 0; i < 4; i++)
		pa_free_pages(pool, pa_pfn_to_page(pool, pfn + i), 0);
	for (pa_pfn_t i = 4; i < 512; i += 4)
		pa_free_pages(pool, pa_pfn_to_page(pool, pfn + i), 2);
	VALIDATE(pool);
	done(pool);
}

/* Every refused split leaves the block as it was: same order, same cookie, freed whole. */
static void expect_unchanged(struct pa_pool *pool, struct pa_page *p, unsigned order,
                             uint64_t cookie)
{
	CHECK_EQ_U64(pa_folio_order(pool, p), order);
	CHECK_EQ_U64(pa_page_cookie(pool, p), cookie);
	VALIDATE(pool);
}

TEST(split_refuses_bad_arguments_and_changes_nothing)
{
	struct pa_pool *pool = test_boot(QUIET);
	struct pa_owner_ops ops = { .name = "test", .migrate = never_moves };
	int owner = pa_owner_register(pool, &ops);
	REQUIRE(owner > 0);
	struct pa_page *p = pa_alloc_owned(pool, PA_GFP_MOVABLE | PA_GFP_COMP, 4, owner, 77);
	REQUIRE(p);
	pa_pfn_t pfn = pa_page_to_pfn(pool, p);
	uint64_t free0 = free_pages(pool);

	CHECK_EQ_U64(pa_split_folio(pool, pa_pfn_to_page(pool, pfn + 1), 4, 0), -EINVAL);
	CHECK_EQ_U64(pa_split_folio(pool, pa_pfn_to_page(pool, pfn + 8), 3, 0), -EINVAL);
	CHECK_EQ_U64(pa_split_folio(pool, p, 3, 0), -EINVAL); /* wrong order */
	CHECK_EQ_U64(pa_split_folio(pool, p, 5, 0), -EINVAL);
	CHECK_EQ_U64(pa_split_folio(pool, p, 4, 4), -EINVAL); /* new_order >= order */
	CHECK_EQ_U64(pa_split_folio(pool, p, 4, 9), -EINVAL);
	CHECK_EQ_U64(pa_split_folio(pool, p, 99, 0), -EINVAL);
	CHECK_EQ_U64(pa_split_folio(pool, NULL, 4, 0), -EINVAL);
	CHECK_EQ_U64(pa_split_folio(NULL, p, 4, 0), -EINVAL);
	expect_unchanged(pool, p, 4, 77);

	/* A free block, whole or inside. */
	struct pa_page *q = pa_alloc_pages(pool, PA_GFP_KERNEL, 2);
	REQUIRE(q);
	pa_pfn_t qpfn = pa_page_to_pfn(pool, q);
	pa_free_pages(pool, q, 2);
	CHECK_EQ_U64(pa_split_folio(pool, q, 2, 0), -EINVAL);
	CHECK_EQ_U64(pa_split_folio(pool, pa_pfn_to_page(pool, qpfn + 2), 1, 0), -EINVAL);

	/* Pinned. */
	REQUIRE(pa_pin(pool, p) == 0);
	CHECK_EQ_U64(pa_split_folio(pool, p, 4, 0), -EBUSY);
	expect_unchanged(pool, p, 4, 77);
	REQUIRE(pa_unpin(pool, p) == 0);

	CHECK_EQ_U64(free_pages(pool), free0);
	pa_free_pages(pool, p, 4);
	VALIDATE(pool);
	done(pool);
}

/* An owner that tries to split the folio it is asked to move. */
struct split_during_move {
	struct pa_pool *pool;
	int rc;
	unsigned calls;
};

static enum pa_migrate_result split_in_move(void *ctx, uint64_t cookie, struct pa_page *old_folio,
                                            struct pa_page *new_folio, unsigned order)
{
	struct split_during_move *s = ctx;
	(void)cookie, (void)new_folio;
	s->rc = pa_split_folio(s->pool, old_folio, order, 0);
	s->calls++;
	return PA_MIGRATE_BUSY;
}

TEST(split_refuses_a_folio_being_moved)
{
	struct pa_pool *pool = test_boot(QUIET);
	struct split_during_move s = { .pool = pool, .rc = 1 };
	struct pa_owner_ops ops = { .name = "splitter", .ctx = &s, .migrate = split_in_move };
	int owner = pa_owner_register(pool, &ops);
	REQUIRE(owner > 0);
	struct pa_page *p = pa_alloc_owned(pool, PA_GFP_MOVABLE | PA_GFP_COMP, 2, owner, 5);
	REQUIRE(p);
	pa_pfn_t pfn = pa_page_to_pfn(pool, p);
	/* Taking the folio's range makes the library move it: the owner splits mid-move. */
	int rc = pa_alloc_contig_range(pool, pfn, pfn + 4, PA_MT_MOVABLE, PA_GFP_MOVABLE);
	CHECK(rc == -EBUSY);
	REQUIRE(s.calls > 0);
	CHECK_EQ_U64(s.rc, -EBUSY);
	expect_unchanged(pool, p, 2, 5);
	pa_free_pages(pool, p, 2);
	VALIDATE(pool);
	pa_shutdown(pool);
}

TEST(split_at_halves_as_the_buddy_allocator_does)
{
	struct pa_pool *pool = test_boot(QUIET);
	char before[4096];
	snprintf(before, sizeof before, "%s", buddyinfo(pool));
	struct pa_owner_ops ops = { .name = "test", .migrate = never_moves };
	int owner = pa_owner_register(pool, &ops);
	REQUIRE(owner > 0);
	struct pa_page *p = pa_alloc_owned(pool, PA_GFP_MOVABLE | PA_GFP_COMP, 4, owner, 99);
	REQUIRE(p);
	pa_pfn_t pfn = pa_page_to_pfn(pool, p);
	/* Frame 5 to order 0: 0-3 order 2, 4 order 0, 5 order 0, 6-7 order 1, 8-15 order 3. */
	CHECK_EQ_U64(pa_split_folio_at(pool, p, 4, 0, pa_pfn_to_page(pool, pfn + 5)), 0);
	VALIDATE(pool);
	static const struct {
		unsigned off, order;
	} want[] = { { 0, 2 }, { 4, 0 }, { 5, 0 }, { 6, 1 }, { 8, 3 } };
	for (unsigned i = 0; i < 5; i++) {
		struct pa_page *h = pa_pfn_to_page(pool, pfn + want[i].off);
		CHECK_MSG(pa_folio_order(pool, h) == (int)want[i].order, "frame %u: order %d",
		          want[i].off, pa_folio_order(pool, h));
		CHECK_EQ_U64(pa_page_cookie(pool, h), 99);
	}
	CHECK(pa_folio_head(pool, pa_pfn_to_page(pool, pfn + 12)) == pa_pfn_to_page(pool, pfn + 8));
	for (unsigned i = 0; i < 5; i++)
		pa_free_pages(pool, pa_pfn_to_page(pool, pfn + want[i].off), want[i].order);
	VALIDATE(pool);
	CHECK(strcmp(before, buddyinfo(pool)) == 0);

	/* The frame must be one of the block's; nothing changes otherwise. */
	struct pa_page *q = pa_alloc_pages(pool, PA_GFP_KERNEL, 2);
	REQUIRE(q);
	pa_pfn_t qpfn = pa_page_to_pfn(pool, q);
	CHECK_EQ_U64(pa_split_folio_at(pool, q, 2, 0, pa_pfn_to_page(pool, qpfn + 4)), -EINVAL);
	CHECK_EQ_U64(pa_split_folio_at(pool, q, 2, 0, NULL), -EINVAL);
	CHECK_EQ_U64(pa_split_folio_at(pool, q, 2, 2, q), -EINVAL);
	CHECK_EQ_U64(pa_folio_order(pool, q), 2);
	/* At the head: the head's piece is new_order, the rest halves above it. */
	CHECK_EQ_U64(pa_split_folio_at(pool, q, 2, 0, q), 0);
	CHECK_EQ_U64(pa_folio_order(pool, q), 0);
	CHECK_EQ_U64(pa_folio_order(pool, pa_pfn_to_page(pool, qpfn + 1)), 0);
	CHECK_EQ_U64(pa_folio_order(pool, pa_pfn_to_page(pool, qpfn + 2)), 1);
	pa_free_pages(pool, q, 0);
	pa_free_pages(pool, pa_pfn_to_page(pool, qpfn + 1), 0);
	pa_free_pages(pool, pa_pfn_to_page(pool, qpfn + 2), 1);
	VALIDATE(pool);
	done(pool);
}
