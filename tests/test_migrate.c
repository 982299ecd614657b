/* SPDX-License-Identifier: MIT */
/*
 * Movable owners, pins and moving folios:
 * pa_owner_register / pa_set_owner / pa_alloc_owned / pa_page_cookie,
 * pa_pin / pa_unpin; that compaction moves only owned, unpinned movable
 * folios; that every byte survives a move (backed pools) and that a
 * metadata-only pool leaves the bytes to the owner; that a failed move (an
 * owner answering AGAIN or BUSY, or fault injection) leaves every folio where
 * and as it was; that freeing or pinning a folio in the middle of its move is
 * safe; and, under ThreadSanitizer, compaction running while other threads
 * allocate, fill, check and free owned folios.
 *
 * The owner (tests/owner.h) keeps its folio table under its own mutex and
 * checks every callback against it.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "test.h"

#include "platform/platform.h"
#include "pool.h"
#include "owner.h"
#include "helpers.h"

#include <pthread.h>
#include <time.h>

/* Deterministic: no background compactor, no per-CPU lists, every frame allocatable. */
#define QUIET "kcompactd=manual pcp_orders=none min_free_kbytes=0 "

/* ---------------------------------------------------------------------- */
/* Helpers                                                                 */
/* ---------------------------------------------------------------------- */

/* Fill with a mix of orders 0..4 (largest first when memory runs short). */
static size_t fill_owned_mixed(struct towner *o)
{
	static const unsigned orders[] = { 0, 4, 1, 0, 2, 3, 0, 4, 2, 0 };
	size_t n = 0;
	for (unsigned i = 0;; i++) {
		int order = (int)orders[i % (sizeof orders / sizeof orders[0])];
		while (order >= 0 &&
		       to_alloc(o, PA_GFP_COMP | PA_GFP_NOCOMPACT, (unsigned)order) < 0)
			order--;
		if (order < 0)
			return n;
		n++;
	}
}

/* Free the owned folios whose block index (pfn >> order) is odd; returns frames freed. */
static uint64_t free_odd(struct towner *o)
{
	uint64_t frames = 0;
	for (size_t i = 0; i < o->nr; i++) {
		struct tfolio *f = &o->f[i];
		if (f->live && (pa_page_to_pfn(o->pool, f->page) >> f->order) % 2 == 1) {
			frames += 1ull << f->order;
			to_free(o, i);
		}
	}
	return frames;
}

/* Free about pct % of the live owned folios, chosen by a hash of the slot. */
static uint64_t free_some(struct towner *o, unsigned pct, uint64_t salt)
{
	uint64_t frames = 0;
	for (size_t i = 0; i < o->nr; i++)
		if (o->f[i].live && to_mix(i ^ salt) % 100 < pct) {
			frames += 1ull << o->f[i].order;
			to_free(o, i);
		}
	return frames;
}

static size_t count_moved(struct towner *o, const pa_pfn_t *before)
{
	size_t moved = 0;
	for (size_t i = 0; i < o->nr; i++)
		moved += o->f[i].live && to_pfn(o, i) != before[i];
	return moved;
}

static enum pa_migrate_result never_called(void *ctx, uint64_t cookie, struct pa_page *o,
                                           struct pa_page *n, unsigned order)
{
	(void)cookie, (void)o, (void)n, (void)order;
	(*(unsigned *)ctx)++;
	return PA_MIGRATE_BUSY;
}

static unsigned plain_calls;
static struct pa_owner_ops plain_ops(void)
{
	return (struct pa_owner_ops){ .name = "plain",
		                      .ctx = &plain_calls,
		                      .migrate = never_called };
}

/* ---------------------------------------------------------------------- */
/* Owners: registration, cookies, pa_set_owner, pa_alloc_owned             */
/* ---------------------------------------------------------------------- */

TEST(owner_register_hands_out_ids_1_to_255_then_enospc)
{
	struct pa_pool *pool = test_boot(QUIET "mem=64M");
	struct pa_owner_ops ops = plain_ops();
	CHECK_EQ_U64(pa_owner_register(pool, NULL), (uint64_t)-EINVAL);
	struct pa_owner_ops no_migrate = { .name = "no-migrate" };
	CHECK_EQ_U64(pa_owner_register(pool, &no_migrate), (uint64_t)-EINVAL);
	CHECK_EQ_U64(pa_owner_register(NULL, &ops), (uint64_t)-EINVAL);
	for (int id = 1; id <= 255; id++) {
		int rc = pa_owner_register(pool, &ops);
		CHECK_MSG(rc == id, "registration %d returned %d", id, rc);
	}
	CHECK_EQ_U64(pa_owner_register(pool, &ops), (uint64_t)-ENOSPC);
	CHECK_EQ_U64(pa_owner_register(pool, &ops), (uint64_t)-ENOSPC);
	/* The last id is usable. */
	struct pa_page *p = pa_alloc_owned(pool, PA_GFP_MOVABLE, 0, 255, 77);
	REQUIRE(p);
	CHECK_EQ_U64(pa_page_cookie(pool, p), 77);
	pa_free_pages(pool, p, 0);
	expect_all_free(pool);
	pa_shutdown(pool);
}

TEST(owner_set_owner_only_on_allocated_movable_heads_of_registered_owners)
{
	struct pa_pool *pool = test_boot(QUIET "mem=64M");
	struct pa_owner_ops ops = plain_ops();
	int id = pa_owner_register(pool, &ops);
	REQUIRE(id == 1);
	struct pa_page *mov = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_COMP, 3);
	struct pa_page *ker = pa_alloc_pages(pool, PA_GFP_KERNEL, 0);
	struct pa_page *rec = pa_alloc_pages(pool, PA_GFP_RECLAIMABLE, 1);
	REQUIRE(mov && ker && rec);
	pa_pfn_t mpfn = pa_page_to_pfn(pool, mov);

	/* Movable heads only. */
	CHECK_EQ_U64(pa_set_owner(pool, mov, id, 0x1234), 0);
	CHECK_EQ_U64(pa_page_cookie(pool, mov), 0x1234);
	CHECK_EQ_U64(pa_set_owner(pool, ker, id, 1), (uint64_t)-EINVAL);
	CHECK_EQ_U64(pa_set_owner(pool, rec, id, 1), (uint64_t)-EINVAL);
	CHECK_EQ_U64(pa_page_cookie(pool, ker), 0);
	CHECK_EQ_U64(pa_page_cookie(pool, rec), 0);
	/* A tail frame of the folio is not a head. */
	CHECK_EQ_U64(pa_set_owner(pool, pa_pfn_to_page(pool, mpfn + 1), id, 1), (uint64_t)-EINVAL);
	CHECK_EQ_U64(pa_page_cookie(pool, pa_pfn_to_page(pool, mpfn + 1)), 0);
	/* Owners that were never registered, or negative ids. */
	CHECK_EQ_U64(pa_set_owner(pool, mov, 2, 1), (uint64_t)-EINVAL);
	CHECK_EQ_U64(pa_set_owner(pool, mov, 255, 1), (uint64_t)-EINVAL);
	CHECK_EQ_U64(pa_set_owner(pool, mov, -1, 1), (uint64_t)-EINVAL);
	CHECK_EQ_U64(pa_page_cookie(pool, mov), 0x1234); /* refused calls changed nothing */
	/* Not a descriptor of this pool. */
	struct pa_page *bogus = (struct pa_page *)&ops;
	CHECK_EQ_U64(pa_set_owner(pool, bogus, id, 1), (uint64_t)-EINVAL);
	CHECK_EQ_U64(pa_set_owner(pool, NULL, id, 1), (uint64_t)-EINVAL);
	/* Owner 0 (none) is allowed and clears the owner. */
	CHECK_EQ_U64(pa_set_owner(pool, mov, 0, 9), 0);
	CHECK_EQ_U64(pa_page_cookie(pool, mov), 9);
	CHECK_EQ_U64(pa_set_owner(pool, mov, id, 10), 0);

	/* A free block. */
	pa_free_pages(pool, mov, 3);
	CHECK_EQ_U64(pa_set_owner(pool, pa_pfn_to_page(pool, mpfn), id, 1), (uint64_t)-EINVAL);
	CHECK_EQ_U64(pa_page_cookie(pool, pa_pfn_to_page(pool, mpfn)), 0);
	/* The cookie does not outlive the allocation. */
	struct pa_page *again = pa_alloc_pages(pool, PA_GFP_MOVABLE, 3);
	REQUIRE(again);
	CHECK_EQ_U64(pa_page_cookie(pool, again), 0);
	pa_free_pages(pool, again, 3);
	pa_free_pages(pool, ker, 0);
	pa_free_pages(pool, rec, 1);
	CHECK_EQ_U64(vmstat(pool, "bad_page"), 0);
	expect_all_free(pool);
	pa_shutdown(pool);
}

TEST(owner_alloc_owned_refuses_gfp_without_movable_and_leaks_nothing)
{
	struct pa_pool *pool = test_boot(QUIET "mem=64M");
	struct pa_owner_ops ops = plain_ops();
	int id = pa_owner_register(pool, &ops);
	REQUIRE(id == 1);
	CHECK(pa_alloc_owned(pool, PA_GFP_KERNEL | PA_GFP_NOWARN, 0, id, 1) == NULL);
	CHECK(pa_alloc_owned(pool, PA_GFP_RECLAIMABLE | PA_GFP_NOWARN, 2, id, 1) == NULL);
	CHECK_EQ_U64(usage(pool).allocated, 0);
	/* An unregistered owner: the allocation is given back. */
	CHECK(pa_alloc_owned(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 2, 7, 1) == NULL);
	CHECK_EQ_U64(usage(pool).allocated, 0);
	struct pa_page *p = pa_alloc_owned(pool, PA_GFP_MOVABLE | PA_GFP_COMP, 4, id, 0xabcdef);
	REQUIRE(p);
	CHECK_EQ_U64(pa_folio_order(pool, p), 4);
	CHECK_EQ_U64(pa_page_cookie(pool, p), 0xabcdef);
	CHECK_EQ_U64(usage(pool).allocated, 16);
	pa_free_pages(pool, p, 4);
	CHECK_EQ_U64(vmstat(pool, "bad_page"), 0);
	expect_all_free(pool);
	pa_shutdown(pool);
}

TEST(owner_pin_counts_up_to_255_and_unpin_of_unpinned_is_einval)
{
	struct pa_pool *pool = test_boot(QUIET "mem=64M");
	struct pa_owner_ops ops = plain_ops();
	int id = pa_owner_register(pool, &ops);
	struct pa_page *p = pa_alloc_owned(pool, PA_GFP_MOVABLE, 2, id, 5);
	REQUIRE(p);
	pa_pfn_t pfn = pa_page_to_pfn(pool, p);
	CHECK_EQ_U64(pa_unpin(pool, p), (uint64_t)-EINVAL);
	for (int i = 0; i < 255; i++)
		CHECK_EQ_U64(pa_pin(pool, p), 0);
	CHECK_EQ_U64(pa_pin(pool, p), (uint64_t)-EOVERFLOW);
	for (int i = 0; i < 255; i++)
		CHECK_EQ_U64(pa_unpin(pool, p), 0);
	CHECK_EQ_U64(pa_unpin(pool, p), (uint64_t)-EINVAL);
	/* A tail frame, a free block, NULL. */
	CHECK_EQ_U64(pa_pin(pool, pa_pfn_to_page(pool, pfn + 1)), (uint64_t)-EINVAL);
	CHECK_EQ_U64(pa_pin(pool, NULL), (uint64_t)-EINVAL);
	CHECK_EQ_U64(pa_pin(pool, pa_pfn_to_page(pool, pfn + 4)), (uint64_t)-EINVAL);
	/* A pinned folio can still be freed, and its pins die with it. */
	CHECK_EQ_U64(pa_pin(pool, p), 0);
	pa_free_pages(pool, p, 2);
	CHECK_EQ_U64(pa_unpin(pool, pa_pfn_to_page(pool, pfn)), (uint64_t)-EINVAL);
	struct pa_page *q = pa_alloc_owned(pool, PA_GFP_MOVABLE, 2, id, 6);
	REQUIRE(q);
	CHECK_EQ_U64(pa_unpin(pool, q), (uint64_t)-EINVAL);
	pa_free_pages(pool, q, 2);
	CHECK_EQ_U64(vmstat(pool, "bad_page"), 0);
	expect_all_free(pool);
	pa_shutdown(pool);
}

/* ---------------------------------------------------------------------- */
/* What compaction moves                                                   */
/* ---------------------------------------------------------------------- */

TEST(migrate_without_registered_owner_compaction_does_nothing)
{
	struct pa_pool *pool = test_boot(QUIET "mem=64M backing=anon");
	/* Movable folios, fragmented, and no owner in the pool. */
	size_t n = 0;
	pa_pfn_t *pfns = malloc(16384 * sizeof *pfns);
	REQUIRE(pfns);
	struct pa_page *p;
	while ((p = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 0)) != NULL)
		pfns[n++] = pa_page_to_pfn(pool, p);
	for (size_t i = 0; i < n; i++)
		if (pfns[i] % 2)
			pa_free_pages(pool, pa_pfn_to_page(pool, pfns[i]), 0);
	struct pa_usage before = usage(pool);
	uint64_t scanned = vmstat(pool, "compact_migrate_scanned");
	CHECK_EQ_U64(pa_compact(pool, -1), 0);
	CHECK_EQ_U64(pa_compact(pool, 0), 0);
	CHECK_EQ_U64(pa_kcompactd_run(pool, 0), 0);
	CHECK_EQ_U64(vmstat(pool, "compact_migrate_scanned"), scanned);
	CHECK_EQ_U64(vmstat(pool, "pgmigrate_success"), 0);
	/* A high-order allocation does not stall in compaction either. */
	CHECK(pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 9) == NULL);
	CHECK_EQ_U64(vmstat(pool, "compact_stall"), 0);
	CHECK_EQ_U64(usage(pool).allocated, before.allocated);
	for (size_t i = 0; i < n; i++)
		if (pfns[i] % 2 == 0)
			CHECK_EQ_U64(pa_folio_order(pool, pa_pfn_to_page(pool, pfns[i])), 0);
	CHECK_EQ_U64(pa_compact(pool, 1), (uint64_t)-EINVAL);
	CHECK_EQ_U64(pa_compact(pool, -2), (uint64_t)-EINVAL);
	CHECK_EQ_U64(pa_compact(NULL, -1), (uint64_t)-EINVAL);
	for (size_t i = 0; i < n; i++)
		if (pfns[i] % 2 == 0)
			pa_free_pages(pool, pa_pfn_to_page(pool, pfns[i]), 0);
	free(pfns);
	expect_all_free(pool);
	pa_shutdown(pool);
}

TEST(migrate_folios_without_owner_or_not_movable_are_never_moved)
{
	struct pa_pool *pool = test_boot(QUIET "mem=64M backing=anon");
	struct towner o;
	to_init(&o, pool, 20000);
	/* Ownerless movable folios at the bottom of the zone, owned ones above, some unmovable. */
	struct pa_page *ownerless[64], *cleared[64], *kernel[64];
	for (int i = 0; i < 64; i++) {
		kernel[i] = pa_alloc_pages(pool, PA_GFP_KERNEL, 0);
		REQUIRE(kernel[i]);
	}
	for (int i = 0; i < 64; i++) {
		ownerless[i] = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0);
		REQUIRE(ownerless[i]);
	}
	for (int i = 0; i < 64; i++) { /* owned, then given up with owner 0 */
		cleared[i] = pa_alloc_owned(pool, PA_GFP_MOVABLE, 0, o.id, 999);
		REQUIRE(cleared[i]);
		CHECK_EQ_U64(pa_set_owner(pool, cleared[i], 0, 0), 0);
	}
	fill_owned(&o, 0);
	free_odd(&o);
	pa_pfn_t *before = snapshot_pfns(&o);
	long moved = pa_compact(pool, -1);
	CHECK_MSG(moved > 0, "pa_compact moved %ld frames", moved);
	CHECK(count_moved(&o, before) > 0);
	for (int i = 0; i < 64; i++) {
		CHECK_EQ_U64(pa_folio_order(pool, ownerless[i]), 0);
		CHECK_EQ_U64(pa_folio_order(pool, cleared[i]), 0);
		CHECK_EQ_U64(pa_folio_order(pool, kernel[i]), 0);
	}
	to_check_all(&o);
	to_expect_clean(&o);
	for (int i = 0; i < 64; i++) {
		pa_free_pages(pool, ownerless[i], 0);
		pa_free_pages(pool, cleared[i], 0);
		pa_free_pages(pool, kernel[i], 0);
	}
	to_free_all(&o);
	free(before);
	expect_all_free(pool);
	pa_shutdown(pool);
	to_destroy(&o);
}

TEST(migrate_pinned_folio_is_never_moved_until_unpinned)
{
	struct pa_pool *pool = test_boot(QUIET "mem=64M backing=anon");
	struct towner o;
	to_init(&o, pool, 20000);
	fill_owned(&o, 0);
	free_odd(&o);
	/* Pin the live folios of the lowest 2 MiB: the first a compaction would move. */
	size_t pinned[512], np = 0;
	for (size_t i = 0; i < o.nr && np < 512; i++)
		if (o.f[i].live && pa_page_to_pfn(pool, o.f[i].page) < 512) {
			CHECK_EQ_U64(pa_pin(pool, o.f[i].page), 0);
			pinned[np++] = i;
		}
	REQUIRE(np > 100);
	pa_pfn_t *before = snapshot_pfns(&o);
	long moved = pa_compact(pool, -1);
	CHECK_MSG(moved > 0, "pa_compact moved %ld frames", moved);
	for (size_t k = 0; k < np; k++)
		CHECK_MSG(to_pfn(&o, pinned[k]) == before[pinned[k]],
		          "pinned slot %zu moved from %" PRIu64 " to %" PRIu64, pinned[k],
		          before[pinned[k]], to_pfn(&o, pinned[k]));
	to_check_all(&o);
	/* Unpinned, they move. */
	for (size_t k = 0; k < np; k++)
		CHECK_EQ_U64(pa_unpin(pool, o.f[pinned[k]].page), 0);
	free(before);
	before = snapshot_pfns(&o);
	pa_compact(pool, -1);
	size_t now_moved = 0;
	for (size_t k = 0; k < np; k++)
		now_moved += to_pfn(&o, pinned[k]) != before[pinned[k]];
	CHECK_MSG(now_moved > np / 2, "only %zu of %zu unpinned folios moved", now_moved, np);
	to_check_all(&o);
	to_expect_clean(&o);
	to_free_all(&o);
	free(before);
	expect_all_free(pool);
	pa_shutdown(pool);
	to_destroy(&o);
}

/* ---------------------------------------------------------------------- */
/* Nothing lost                                                            */
/* ---------------------------------------------------------------------- */

TEST(migrate_compaction_keeps_every_byte_of_every_folio_backed)
{
	struct pa_pool *pool = test_boot(QUIET "mem=64M backing=anon");
	struct towner o;
	to_init(&o, pool, 20000);
	fill_owned_mixed(&o);
	free_some(&o, 50, 7);
	struct pa_usage u0 = usage(pool);
	uint64_t big0 = free_frames_from(pool, 9);
	pa_pfn_t *before = snapshot_pfns(&o);
	long moved = pa_compact(pool, -1);
	CHECK_MSG(moved > 0, "pa_compact moved %ld frames", moved);
	CHECK_EQ_U64(vmstat(pool, "pgmigrate_success"), (uint64_t)moved);
	CHECK_EQ_U64(vmstat(pool, "compact_isolated"), (uint64_t)moved);
	CHECK_MSG(free_frames_from(pool, 9) > big0,
	          "free frames in order>=9 blocks: %" PRIu64 " -> %" PRIu64, big0,
	          free_frames_from(pool, 9));
	size_t nmoved = count_moved(&o, before);
	CHECK(nmoved > 0);
	/* Every order moved, every byte where the owner now points. */
	for (unsigned ord = 0; ord <= 4; ord++)
		CHECK_MSG(o.moved_order[ord] > 0, "no order-%u folio moved", ord);
	to_check_all(&o);
	to_expect_clean(&o);
	struct pa_usage u1 = usage(pool);
	CHECK_EQ_U64(u1.allocated, u0.allocated);
	CHECK_EQ_U64(u1.free, u0.free);
	CHECK_EQ_U64(u1.reserved, 0);
	VALIDATE(pool);
	/* A second pass over compacted memory finds little to do and loses nothing. */
	pa_compact(pool, -1);
	to_check_all(&o);
	to_free_all(&o);
	free(before);
	expect_all_free(pool);
	pa_shutdown(pool);
	to_destroy(&o);
}

TEST(migrate_metadata_only_pool_moves_references_and_cookies)
{
	struct pa_pool *pool = test_boot(QUIET "mem=64M");
	struct towner o;
	to_init(&o, pool, 20000);
	REQUIRE(!o.backed);
	fill_owned_mixed(&o);
	free_some(&o, 50, 11);
	pa_pfn_t *before = snapshot_pfns(&o);
	long moved = pa_compact(pool, -1);
	CHECK_MSG(moved > 0, "pa_compact moved %ld frames", moved);
	CHECK(count_moved(&o, before) > 0);
	to_check_all(&o); /* orders and cookies follow the folios */
	to_expect_clean(&o);
	VALIDATE(pool);
	to_free_all(&o);
	free(before);
	expect_all_free(pool);
	pa_shutdown(pool);
	to_destroy(&o);
}

/* ---------------------------------------------------------------------- */
/* Failure leaves everything as it was                                     */
/* ---------------------------------------------------------------------- */

TEST(migrate_owner_answering_again_or_busy_keeps_folios_in_place)
{
	static const enum to_answer answers[] = { TO_BUSY, TO_AGAIN };
	for (int a = 0; a < 2; a++) {
		struct pa_pool *pool = test_boot(QUIET "mem=64M backing=anon");
		struct towner o;
		to_init(&o, pool, 20000);
		fill_owned_mixed(&o);
		free_some(&o, 50, 3);
		o.answer = answers[a];
		struct pa_usage u0 = usage(pool);
		pa_pfn_t *before = snapshot_pfns(&o);
		long moved = pa_compact(pool, -1);
		CHECK_MSG(moved == 0, "answer %d: pa_compact moved %ld frames", a, moved);
		CHECK_EQ_U64(count_moved(&o, before), 0);
		CHECK(o.calls > 0);
		CHECK(vmstat(pool, "pgmigrate_fail") > 0);
		CHECK_EQ_U64(vmstat(pool, "pgmigrate_success"), 0);
		to_check_all(&o);
		to_expect_clean(&o);
		struct pa_usage u1 = usage(pool);
		CHECK_EQ_U64(u1.allocated, u0.allocated);
		CHECK_EQ_U64(u1.free, u0.free);
		CHECK_EQ_U64(u1.reserved, 0);
		VALIDATE(pool);
		/* Once the owner agrees, the same folios move. */
		o.answer = TO_OK;
		CHECK(pa_compact(pool, -1) > 0);
		to_check_all(&o);
		to_free_all(&o);
		free(before);
		expect_all_free(pool);
		pa_shutdown(pool);
		to_destroy(&o);
	}
}

TEST(migrate_again_is_retried_by_sync_compaction)
{
	struct pa_pool *pool = test_boot(QUIET "mem=64M backing=anon");
	struct towner o;
	to_init(&o, pool, 20000);
	fill_owned(&o, 0);
	free_odd(&o);
	o.answer = TO_AGAIN;
	pa_compact(pool, -1);
	/* pa_compact is sync: each folio it tried was asked more than once. */
	CHECK(o.calls > 0);
	CHECK_EQ_U64(o.agains, o.calls);
	size_t asked = 0, once = 0;
	for (size_t i = 0; i < o.nr; i++) {
		asked += o.f[i].asked > 0;
		once += o.f[i].asked == 1;
	}
	CHECK(asked > 0);
	CHECK_MSG(once == 0, "%zu of %zu folios were asked only once", once, asked);
	/* Order 0: one frame per failed attempt. */
	CHECK_EQ_U64(vmstat(pool, "pgmigrate_fail"), o.calls);
	to_check_all(&o);
	to_expect_clean(&o);
	to_finish(&o);
}

TEST(migrate_fault_injection_30_to_100_pct_loses_nothing)
{
	static const unsigned pcts[] = { 30, 60, 100 };
	for (int k = -1; k < 3; k++) { /* k = -1: no injection, for reference */
		struct pa_pool *pool = test_boot(QUIET "mem=64M backing=anon");
		struct towner o;
		to_init(&o, pool, 20000);
		fill_owned_mixed(&o);
		free_some(&o, 50, 5);
		unsigned pct = k < 0 ? 0 : pcts[k];
		atomic_store(&pool->compact_fail_pct, pct);
		struct pa_usage u0 = usage(pool);
		pa_pfn_t *before = snapshot_pfns(&o);
		long moved = pa_compact(pool, -1);
		if (k < 0) {
			CHECK(moved > 0);
		} else if (pct == 100) {
			CHECK_MSG(moved == 0, "fail_pct 100: moved %ld", moved);
			CHECK_EQ_U64(o.calls, 0); /* injection answers before the owner */
			CHECK_EQ_U64(count_moved(&o, before), 0);
		} else {
			CHECK_MSG(vmstat(pool, "pgmigrate_fail") > 0, "fail_pct %u: no failure",
			          pct);
		}
		CHECK_EQ_U64(vmstat(pool, "pgmigrate_success"), (uint64_t)moved);
		to_check_all(&o);
		to_expect_clean(&o);
		struct pa_usage u1 = usage(pool);
		CHECK_EQ_U64(u1.allocated, u0.allocated);
		CHECK_EQ_U64(u1.free, u0.free);
		CHECK_EQ_U64(u1.reserved, 0);
		VALIDATE(pool);
		/* Injection off: compaction finishes the job. */
		atomic_store(&pool->compact_fail_pct, 0);
		pa_compact(pool, -1);
		to_check_all(&o);
		to_free_all(&o);
		free(before);
		expect_all_free(pool);
		pa_shutdown(pool);
		to_destroy(&o);
	}
}

TEST(migrate_owner_random_again_busy_loses_nothing_over_many_passes)
{
	struct pa_pool *pool = test_boot(QUIET "mem=64M backing=anon");
	struct towner o;
	to_init(&o, pool, 40000);
	fill_owned_mixed(&o);
	o.answer = TO_RANDOM;
	o.fail_pct = 50;
	int rounds = 2 + (int)(6 * test_scale());
	for (int r = 0; r < rounds; r++) {
		free_some(&o, 30, (uint64_t)r * 77);
		pa_compact(pool, -1);
		to_check_all(&o);
		VALIDATE(pool);
		CHECK_EQ_U64(usage(pool).reserved, 0);
		/* Refill what was freed, at mixed orders. */
		fill_owned_mixed(&o);
	}
	CHECK(o.oks > 0 && o.agains > 0 && o.busies > 0);
	to_expect_clean(&o);
	to_finish(&o);
}

/* ---------------------------------------------------------------------- */
/* Freeing and pinning during a move                                       */
/* ---------------------------------------------------------------------- */

TEST(migrate_free_of_old_folio_during_move_frees_it_once)
{
	struct pa_pool *pool = test_boot(QUIET "mem=64M backing=anon");
	struct towner o;
	to_init(&o, pool, 20000);
	fill_owned(&o, 2);
	free_odd(&o);
	struct pa_usage u0 = usage(pool);
	o.action = TO_FREE_OLD;
	o.action_left = 5;
	pa_compact(pool, -1);
	CHECK_EQ_U64(o.action_left, 0);
	CHECK_EQ_U64(vmstat(pool, "bad_page"), 0);
	struct pa_usage u1 = usage(pool);
	CHECK_EQ_U64(u1.allocated, u0.allocated - 5 * 4);
	CHECK_EQ_U64(u1.reserved, 0);
	VALIDATE(pool);
	to_check_all(&o);
	to_expect_clean(&o);
	to_free_all(&o);
	CHECK_EQ_U64(vmstat(pool, "bad_page"), 0);
	expect_all_free(pool);
	pa_shutdown(pool);
	to_destroy(&o);
}

TEST(migrate_free_of_new_folio_during_move_frees_the_folio)
{
	/*
	 * The destination is a captured block of the folio's order (free holes
	 * of the same order), or the lower half of a larger captured block split
	 * on demand (free holes of a larger order).
	 */
	static const struct {
		unsigned order, hole_shift;
	} cases[] = { { 0, 0 }, { 0, 1 }, { 0, 3 }, { 2, 2 }, { 2, 4 } };
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		unsigned order = cases[c].order;
		struct pa_pool *pool = test_boot(QUIET "mem=64M backing=anon");
		struct towner o;
		to_init(&o, pool, 20000);
		fill_owned(&o, order);
		free_odd_at(&o, cases[c].hole_shift);
		struct pa_usage u0 = usage(pool);
		o.action = TO_FREE_NEW;
		o.action_left = 5;
		pa_compact(pool, -1);
		CHECK_EQ_U64(o.action_left, 0);
		CHECK_MSG(
		        vmstat(pool, "bad_page") == 0,
		        "order %u, holes of order %u: pa_free_pages of the new folio during its move was "
		        "refused as a bad page",
		        order, cases[c].hole_shift);
		struct pa_usage u1 = usage(pool);
		CHECK_MSG(u1.allocated == u0.allocated - ((uint64_t)5 << order),
		          "order %u, holes of order %u: allocated %" PRIu64
		          " after 5 folios were freed during their moves, expected %" PRIu64,
		          order, cases[c].hole_shift, u1.allocated,
		          u0.allocated - ((uint64_t)5 << order));
		CHECK_EQ_U64(u1.reserved, 0);
		VALIDATE(pool);
		to_check_all(&o);
		to_expect_clean(&o);
		to_free_all(&o);
		expect_all_free(pool);
		pa_shutdown(pool);
		to_destroy(&o);
	}
}

TEST(migrate_pin_taken_during_move_leaves_owner_reference_valid)
{
	/*
	 * A pin that arrives while the bytes are copied, through a reference
	 * to the old folio (here: taken in the callback, before the owner moves
	 * its reference and answers OK). The library may refuse that pin, or
	 * take it and keep the folio where it is; either way the owner's
	 * reference must end up naming the folio, with its cookie and bytes,
	 * and a pin that was granted must be on that same folio.
	 */
	struct pa_pool *pool = test_boot(QUIET "mem=64M backing=anon");
	struct towner o;
	to_init(&o, pool, 20000);
	fill_owned(&o, 0);
	free_odd(&o);
	o.action = TO_PIN_OLD;
	o.action_left = 1;
	pa_compact(pool, -1);
	REQUIRE(o.action_left == 0);
	size_t slot = o.acted;
	struct pa_page *old = o.acted_old;
	char msg[256];
	pthread_mutex_lock(&o.lock);
	bool ok = to_check_locked(&o, slot, msg, sizeof msg);
	pthread_mutex_unlock(&o.lock);
	if (o.pin_rc == 0) {
		CHECK_MSG(pa_folio_order(pool, old) == 0 &&
		                  pa_page_cookie(pool, old) == to_cookie(&o, slot),
		          "the pin was granted but the pinned block (pfn %" PRIu64
		          ") is no longer the folio",
		          pa_page_to_pfn(pool, old));
		CHECK_MSG(
		        ok && o.f[slot].page == old,
		        "the pin was granted and the move undone, but the owner, who answered OK, was "
		        "not told: its reference names pfn %" PRIu64
		        " (the folio stays at pfn %" PRIu64 ")%s%s",
		        pa_page_to_pfn(pool, o.f[slot].page), pa_page_to_pfn(pool, old),
		        ok ? "" : ": ", ok ? "" : msg);
	} else {
		CHECK_MSG(ok,
		          "pa_pin during the move answered %d; the owner's reference is wrong: %s",
		          o.pin_rc, msg);
	}
	VALIDATE(pool);
	to_expect_clean(&o);
	pa_shutdown(pool); /* the state is not trusted enough to free folio by folio */
	to_destroy(&o);
}

/* --- The move contract: bytes are copied before the owner's callback ---------- */

struct writer {
	struct pa_pool *pool;
	struct pa_page *moved_to;
	uint8_t seen_in_new; /* the new folio's first byte when the callback ran */
	int pin_rc;          /* pa_pin() of the old folio during its move */
	unsigned calls;
};

/* Writes the old folio during its move, as an owner that holds no pin would. */
static enum pa_migrate_result writer_migrate(void *ctx, uint64_t cookie, struct pa_page *old_folio,
                                             struct pa_page *new_folio, unsigned order)
{
	(void)cookie;
	(void)order;
	struct writer *w = ctx;
	uint8_t *old_bytes = pa_page_address(w->pool, old_folio);
	w->seen_in_new = *(uint8_t *)pa_page_address(w->pool, new_folio);
	w->pin_rc = pa_pin(w->pool, old_folio);
	old_bytes[0] = 0xbb; /* too late: the bytes were copied before this call */
	w->moved_to = new_folio;
	w->calls++;
	return PA_MIGRATE_OK;
}

/*
 * As the header says: the library copies a folio's bytes before the migrate
 * callback, so a write during the move (without a pin) is not in the new
 * folio, and pa_pin() answers -EBUSY then; a pinned folio is not moved, so a
 * write under a pin is safe.
 */
TEST(migrate_bytes_are_copied_before_the_callback_and_a_pin_keeps_writes_safe)
{
	struct pa_pool *pool = test_boot(QUIET "mem=64M backing=anon");
	struct writer w = { .pool = pool };
	struct pa_owner_ops ops = { .name = "writer", .ctx = &w, .migrate = writer_migrate };
	int id = pa_owner_register(pool, &ops);
	REQUIRE(id >= 1);
	struct pa_page *f = pa_alloc_owned(pool, PA_GFP_MOVABLE, 0, id, 1);
	REQUIRE(f);
	pa_pfn_t pfn = pa_page_to_pfn(pool, f);
	*(uint8_t *)pa_page_address(pool, f) = 0xaa;
	/* Taking the folio's frame moves it. */
	REQUIRE(pa_alloc_contig_range(pool, pfn, pfn + 1, PA_MT_MOVABLE, 0) == 0);
	REQUIRE(w.calls == 1 && w.moved_to);
	CHECK_EQ_U64(w.seen_in_new, 0xaa);
	CHECK_EQ_U64(w.pin_rc, (uint64_t)-EBUSY);
	CHECK_MSG(*(uint8_t *)pa_page_address(pool, w.moved_to) == 0xaa,
	          "a write during the move reached the new folio: the contract says it is lost");
	pa_free_contig_range(pool, pfn, 1);
	/* Under a pin the folio stays put and the write stays. */
	struct pa_page *g = w.moved_to;
	pa_pfn_t gpfn = pa_page_to_pfn(pool, g);
	REQUIRE(pa_pin(pool, g) == 0);
	*(uint8_t *)pa_page_address(pool, g) = 0xcc;
	CHECK_EQ_U64(pa_alloc_contig_range(pool, gpfn, gpfn + 1, PA_MT_MOVABLE, 0),
	             (uint64_t)-EBUSY);
	CHECK_EQ_U64(w.calls, 1);
	CHECK_EQ_U64(*(uint8_t *)pa_page_address(pool, g), 0xcc);
	REQUIRE(pa_unpin(pool, g) == 0);
	pa_free_pages(pool, g, 0);
	expect_all_free(pool);
	pa_shutdown(pool);
}

TEST(migrate_double_free_during_move_is_a_bad_page)
{
	struct pa_pool *pool = test_boot(QUIET "mem=64M");
	struct towner o;
	to_init(&o, pool, 20000);
	fill_owned(&o, 0);
	free_odd(&o);
	o.action = TO_FREE_OLD;
	o.action_left = 1;
	pa_compact(pool, -1);
	/* The folio freed during its move is free now: freeing it again is a double free. */
	REQUIRE(o.action_left == 0 && o.acted_old);
	CHECK(!o.f[o.acted].live);
	CHECK_EQ_U64(pa_folio_order(pool, o.acted_old), (uint64_t)-1);
	uint64_t bad = vmstat(pool, "bad_page");
	uint64_t allocated = usage(pool).allocated;
	pa_free_pages(pool, o.acted_old, 0);
	CHECK_EQ_U64(vmstat(pool, "bad_page"), bad + 1);
	CHECK_EQ_U64(usage(pool).allocated, allocated);
	VALIDATE(pool);
	to_finish(&o);
}

/* ---------------------------------------------------------------------- */
/* Concurrency (run under ThreadSanitizer in the tsan build)               */
/* ---------------------------------------------------------------------- */

struct stress {
	struct pa_pool *pool;
	struct towner *o;
	_Atomic bool stop;
	_Atomic uint64_t compactions, moved, big_ok, big_fail;
};

struct worker {
	struct stress *s;
	pthread_t thread;
	uint64_t seed;
	long iters;
	size_t *mine; /* slots this worker owns */
	size_t nmine, cap;
	uint64_t frames, budget;
	uint64_t allocs, frees, pins, data_errors, alloc_fail;
	char error[256];
};

/* Check then free one of this worker's folios (its data first, under the owner's lock). */
static void worker_free(struct worker *w, size_t k)
{
	struct towner *o = w->s->o;
	size_t idx = w->mine[k];
	char msg[256];
	pthread_mutex_lock(&o->lock);
	if (!to_check_locked(o, idx, msg, sizeof msg) && w->data_errors++ == 0)
		snprintf(w->error, sizeof w->error, "%s", msg);
	struct tfolio *f = &o->f[idx];
	w->frames -= 1ull << f->order;
	f->live = false;
	if (f->pins) {
		pa_unpin(o->pool, f->page);
		f->pins = 0;
	}
	to_free_pages(o, f);
	pthread_mutex_unlock(&o->lock);
	w->mine[k] = w->mine[--w->nmine];
	w->frees++;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct towner *o = w->s->o;
	for (long it = 0; it < w->iters; it++) {
		uint64_t r = to_rand(&w->seed);
		bool alloc = w->nmine == 0 || (w->frames < w->budget && r % 100 < 55);
		if (alloc && w->nmine < w->cap) {
			static const unsigned orders[] = { 0, 0, 0, 0, 1, 2, 3, 4 };
			unsigned order = orders[(r >> 8) % 8];
			long idx = to_alloc(o, PA_GFP_COMP, order);
			if (idx < 0) {
				w->alloc_fail++;
				continue;
			}
			w->mine[w->nmine++] = (size_t)idx;
			w->frames += 1ull << order;
			w->allocs++;
		} else if (w->nmine) {
			worker_free(w, (size_t)((r >> 16) % w->nmine));
		}
		/* Now and then pin a folio for a while, as the owner (it answers BUSY meanwhile). */
		if (w->nmine && r % 97 == 0) {
			size_t idx = w->mine[(r >> 24) % w->nmine];
			pthread_mutex_lock(&o->lock);
			struct tfolio *f = &o->f[idx];
			if (!f->split) {
				if (f->pins) {
					pa_unpin(o->pool, f->page);
					f->pins = 0;
				} else if (pa_pin(o->pool, f->page) == 0) {
					f->pins = 1;
					w->pins++;
				}
			}
			pthread_mutex_unlock(&o->lock);
		}
	}
	return NULL;
}

static void *compactor_main(void *arg)
{
	struct stress *s = arg;
	while (!atomic_load(&s->stop)) {
		long m = pa_compact(s->pool, -1);
		if (m > 0)
			atomic_fetch_add(&s->moved, (uint64_t)m);
		atomic_fetch_add(&s->compactions, 1);
	}
	return NULL;
}

static void *big_alloc_main(void *arg)
{
	struct stress *s = arg;
	while (!atomic_load(&s->stop)) {
		struct pa_page *p = pa_alloc_pages(s->pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 9);
		if (p) {
			atomic_fetch_add(&s->big_ok, 1);
			pa_free_pages(s->pool, p, 9);
		} else {
			atomic_fetch_add(&s->big_fail, 1);
		}
		struct timespec ts = { 0, 200000 };
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/*
 * A background compactor may be in the middle of a pass, holding the frames
 * it captured, when the workers are done: with proactive compaction off it
 * has nothing more to start, so wait (boundedly) until it lets go.
 */
static void quiesce_background_compactor(struct pa_pool *pool)
{
	REQUIRE(pa_ctl_write(pool, "compaction_proactiveness", "0") == 0);
	for (int i = 0; i < 3000; i++) {
		pa_drain_all(pool);
		struct pa_usage u;
		pa_get_usage(pool, &u);
		if (u.free == u.managed)
			return;
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

static void run_stress(const char *cmdline, unsigned fail_pct)
{
	enum { NR_WORKERS = 3 };
	struct pa_pool *pool = test_boot(cmdline);
	uint64_t seed = test_seed();
	fprintf(stderr, "  seed %#" PRIx64 " (PA_TEST_SEED)\n", seed);
	long iters = (long)(60000 * test_scale());
	if (iters < 3000)
		iters = 3000;
	struct towner o;
	to_init(&o, pool, (size_t)iters * NR_WORKERS + 16);
	o.strict = false; /* folios freed while isolated reach the callback as strangers */
	o.answer = fail_pct ? TO_RANDOM : TO_OK;
	o.fail_pct = fail_pct;
	o.rng = seed;
	struct stress s = { .pool = pool, .o = &o };
	struct worker w[NR_WORKERS];
	uint64_t managed = usage(pool).managed;
	for (int i = 0; i < NR_WORKERS; i++) {
		w[i] = (struct worker){ .s = &s,
			                .seed = seed + (uint64_t)i * 0x1234567,
			                .iters = iters };
		w[i].cap = (size_t)iters;
		w[i].mine = malloc(w[i].cap * sizeof *w[i].mine);
		REQUIRE(w[i].mine);
		w[i].budget = managed * 85 / 100 / NR_WORKERS;
	}
	pthread_t comp, big;
	for (int i = 0; i < NR_WORKERS; i++)
		REQUIRE(pthread_create(&w[i].thread, NULL, worker_main, &w[i]) == 0);
	REQUIRE(pthread_create(&comp, NULL, compactor_main, &s) == 0);
	REQUIRE(pthread_create(&big, NULL, big_alloc_main, &s) == 0);
	for (int i = 0; i < NR_WORKERS; i++)
		pthread_join(w[i].thread, NULL);
	atomic_store(&s.stop, true);
	pthread_join(comp, NULL);
	pthread_join(big, NULL);

	uint64_t allocs = 0;
	for (int i = 0; i < NR_WORKERS; i++) {
		CHECK_MSG(w[i].data_errors == 0,
		          "worker %d: %" PRIu64 " folios wrong before their free; first: %s", i,
		          w[i].data_errors, w[i].error);
		allocs += w[i].allocs;
	}
	pthread_mutex_lock(&o.lock); /* the background compactor may still be calling */
	uint64_t calls = o.calls, stale = o.stale, oks = o.oks;
	pthread_mutex_unlock(&o.lock);
	fprintf(stderr,
	        "  %" PRIu64 " allocations, %" PRIu64 " compactions moved %" PRIu64
	        " frames, %" PRIu64 " callbacks (%" PRIu64 " stale), order-9 %" PRIu64
	        " ok %" PRIu64 " failed\n",
	        allocs, (uint64_t)atomic_load(&s.compactions), (uint64_t)atomic_load(&s.moved),
	        calls, stale, (uint64_t)atomic_load(&s.big_ok), (uint64_t)atomic_load(&s.big_fail));
	CHECK(atomic_load(&s.compactions) > 0);
	CHECK_MSG(oks > 0, "no folio was moved during the run");
	CHECK_EQ_U64(vmstat(pool, "bad_page"), 0);
	VALIDATE(pool);
	/* What survived: checked, then freed. */
	to_check_all(&o);
	for (int i = 0; i < NR_WORKERS; i++) {
		while (w[i].nmine)
			worker_free(&w[i], w[i].nmine - 1);
		CHECK_EQ_U64(w[i].data_errors, 0);
		free(w[i].mine);
	}
	to_expect_clean(&o);
	CHECK_EQ_U64(vmstat(pool, "bad_page"), 0);
	quiesce_background_compactor(pool);
	expect_all_free(pool);
	pa_shutdown(pool);
	to_destroy(&o);
}

TEST(migrate_concurrent_alloc_free_pin_with_compaction_and_direct_compaction)
{
	run_stress("mem=64M backing=anon kcompactd=manual", 0);
}

TEST(migrate_concurrent_with_owner_failing_moves_and_background_compactor)
{
	run_stress("mem=64M backing=anon nr_cpus=4 compaction_proactiveness=100", 25);
}
