/* SPDX-License-Identifier: MIT */
/*
 * Compaction: the core pass as seed 003 describes it
 * (folios of any order moved whole to destinations of their own order, the
 * old split-everything behaviour behind compaction_split_folios=1), folios
 * larger than the order asked for left alone, direct compaction in the
 * allocation slow path (and PA_GFP_NOCOMPACT), deferral, orders above the
 * pageblock (the cheapest clean region emptied), the background compactor
 * (threads, kcompactd=manual, proactive compaction, shutdown) and the
 * compact_* / pgmigrate_* counters.
 *
 * Layouts are built exactly: a QUIET pool (no per-CPU lists, min watermark 0,
 * no background thread) filled with one order-9 placeholder per pageblock,
 * each then replaced by what the test wants there (see build_layout()).
 * Folios belong to the owner of tests/owner.h, which checks every move.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "test.h"

#include "platform/platform.h"
#include "compaction.h"
#include "pageblock.h"
#include "owner.h"
#include "helpers.h"

#include <time.h>

#define QUIET "kcompactd=manual pcp_orders=none min_free_kbytes=0 "

/* ---------------------------------------------------------------------- */
/* Helpers                                                                 */
/* ---------------------------------------------------------------------- */

static uint64_t folios_migrated(struct pa_pool *pool, unsigned order)
{
	uint64_t n = 0;
	for (unsigned z = 0; z < pool->nr_zones; z++) {
		pa_lock(&pool->zones[z].lock, SITE_ADMIN);
		n += pool->zones[z].folios_migrated[order];
		pa_unlock(&pool->zones[z].lock);
	}
	return n;
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* Poll a vmstat counter until it exceeds `above`, up to `ms` milliseconds. */
static uint64_t wait_vmstat_above(struct pa_pool *pool, const char *name, uint64_t above, long ms)
{
	uint64_t v = vmstat(pool, name);
	for (long t = 0; v <= above && t < ms; t += 5) {
		sleep_ms(5);
		v = vmstat(pool, name);
	}
	return v;
}

/*
 * What one pageblock holds once build_layout() is done:
 *   LB_FREE     nothing
 *   LB_O9       one owned order-9 folio
 *   LB_O4       32 owned order-4 folios
 *   LB_O4_HALF  32 order-4 folios, the odd ones freed again (order-4 holes)
 *   LB_O4_QUART 32 order-4 folios, 3 of 4 freed again
 *   LB_O0_HALF  512 owned order-0 folios, the odd ones freed again
 *   LB_KERNEL   512 unmovable order-0 allocations (kept in kernel[])
 */
enum lb { LB_FREE, LB_O9, LB_O4, LB_O4_HALF, LB_O4_QUART, LB_O0_HALF, LB_KERNEL };

struct layout {
	struct pa_pool *pool;
	unsigned nr_pb;
	struct pa_page **kernel; /* LB_KERNEL allocations */
	size_t nr_kernel;
};

/*
 * Build the layout lb[0..nr_pb) in a QUIET single-zone pool: every
 * pageblock first holds an order-9 placeholder; each in turn is freed and
 * refilled with its contents (it is the only free memory, so they land
 * there), and the holes are punched at the end so that nothing fills them.
 */
static void build_layout(struct layout *l, struct towner *o, const enum lb *lb, unsigned nr_pb)
{
	struct pa_pool *pool = o->pool;
	unsigned pbo = pool->cfg.pageblock_order;
	memset(l, 0, sizeof *l);
	l->pool = pool;
	l->nr_pb = nr_pb;
	REQUIRE(zones_with_memory(pool) == 1 && pool->zones[0].start_pfn == 0 &&
	        pool->zones[0].end_pfn == (pa_pfn_t)nr_pb << pbo);
	struct pa_page **ph = calloc(nr_pb, sizeof *ph);
	l->kernel = calloc((size_t)nr_pb << pbo, sizeof *l->kernel);
	REQUIRE(ph && l->kernel);
	for (unsigned i = 0; i < nr_pb; i++) {
		struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOCOMPACT, pbo);
		REQUIRE(p);
		ph[pa_page_to_pfn(pool, p) >> pbo] = p;
	}
	size_t first_slot[64];
	REQUIRE(nr_pb <= 64);
	for (unsigned b = 0; b < nr_pb; b++) {
		first_slot[b] = o->nr;
		if (lb[b] == LB_FREE)
			continue;
		pa_free_pages(pool, ph[b], pbo);
		ph[b] = NULL;
		unsigned order = lb[b] == LB_O9                            ? pbo :
		                 lb[b] == LB_O0_HALF || lb[b] == LB_KERNEL ? 0 :
		                                                             4;
		for (uint64_t k = 0; k < (1ull << (pbo - order)); k++) {
			pa_pfn_t pfn;
			if (lb[b] == LB_KERNEL) {
				struct pa_page *p =
				        pa_alloc_pages(pool, PA_GFP_KERNEL | PA_GFP_NOCOMPACT, 0);
				REQUIRE(p);
				l->kernel[l->nr_kernel++] = p;
				pfn = pa_page_to_pfn(pool, p);
			} else {
				long idx = to_alloc(o, PA_GFP_COMP | PA_GFP_NOCOMPACT, order);
				REQUIRE(idx >= 0);
				pfn = pa_page_to_pfn(pool, o->f[idx].page);
			}
			REQUIRE((pfn >> pbo) == b);
		}
	}
	for (unsigned b = 0; b < nr_pb; b++) {
		if (ph[b])
			pa_free_pages(pool, ph[b], pbo);
		size_t end = b + 1 < nr_pb ? first_slot[b + 1] : o->nr;
		for (size_t i = first_slot[b]; i < end; i++) {
			pa_pfn_t pfn = pa_page_to_pfn(pool, o->f[i].page) >> o->f[i].order;
			if ((lb[b] == LB_O4_HALF || lb[b] == LB_O0_HALF) && pfn % 2 == 1)
				to_free(o, i);
			if (lb[b] == LB_O4_QUART && pfn % 4 != 0)
				to_free(o, i);
		}
	}
	free(ph);
	CHECK_EQ_U64(usage(pool).reserved, 0);
	VALIDATE(pool);
}

static void layout_free(struct layout *l)
{
	for (size_t i = 0; i < l->nr_kernel; i++)
		pa_free_pages(l->pool, l->kernel[i], 0);
	free(l->kernel);
	l->nr_kernel = 0;
}

/* Check every folio and the pool, free everything, and shut the pool down. */
static void layout_done(struct layout *l, struct towner *o)
{
	struct pa_pool *pool = l->pool;
	to_check_all(o);
	to_expect_clean(o);
	VALIDATE(pool);
	to_free_all(o);
	layout_free(l);
	expect_all_free(pool);
	pa_shutdown(pool);
	to_destroy(o);
}

/* ---------------------------------------------------------------------- */
/* The core pass: folios move whole (seed 003) or split (the old way)      */
/* ---------------------------------------------------------------------- */

TEST(compact_moves_order4_folios_whole_to_order4_destinations)
{
	struct pa_pool *pool = test_boot(QUIET "mem=64M backing=anon");
	struct towner o;
	to_init(&o, pool, 20000);
	fill_owned(&o, 4);
	free_odd_at(&o, 4);
	uint64_t free0 = usage(pool).free;
	CHECK_EQ_U64(free_frames_from(pool, 5), 0);
	pa_pfn_t *before = snapshot_pfns(&o);
	long moved = pa_compact(pool, -1);
	CHECK_MSG(moved > 0, "pa_compact moved %ld frames", moved);
	/* Every move was of a whole order-4 folio into an order-4 destination. */
	CHECK_EQ_U64(folios_migrated(pool, 4) << 4, (uint64_t)moved);
	CHECK_EQ_U64(folios_migrated(pool, 0), 0);
	CHECK_EQ_U64(o.moved_order[4], folios_migrated(pool, 4));
	CHECK_EQ_U64(o.moved_order[0], 0);
	CHECK_EQ_U64(vmstat(pool, "compact_folios_split"), 0);
	CHECK_EQ_U64(o.split_calls, 0);
	CHECK_EQ_U64(vmstat(pool, "pgmigrate_success"), (uint64_t)moved);
	CHECK_EQ_U64(vmstat(pool, "compact_isolated"), (uint64_t)moved);
	CHECK(vmstat(pool, "compact_migrate_scanned") > 0);
	CHECK(vmstat(pool, "compact_free_scanned") > 0);
	CHECK_EQ_U64(vmstat(pool, "compact_daemon_migrate_scanned"), 0);
	/* The folios the owner saw move are the ones whose pfn changed; cookies and data followed. */
	size_t changed = 0;
	for (size_t i = 0; i < o.nr; i++)
		if (o.f[i].live && to_pfn(&o, i) != before[i]) {
			changed++;
			CHECK_EQ_U64(pa_folio_head(pool, pa_pfn_to_page(pool, to_pfn(&o, i) + 5)),
			             (uint64_t)(uintptr_t)pa_pfn_to_page(pool, to_pfn(&o, i)));
		}
	CHECK_EQ_U64(changed, folios_migrated(pool, 4));
	to_check_all(&o);
	to_expect_clean(&o);
	/* Free memory became pageblocks: at least 3/4 of it in order >= 9 blocks. */
	uint64_t big = free_frames_from(pool, 9);
	CHECK_EQ_U64(usage(pool).free, free0);
	CHECK_MSG(big * 4 >= free0 * 3, "%" PRIu64 " of %" PRIu64 " free frames in order>=9 blocks",
	          big, free0);
	VALIDATE(pool);
	to_free_all(&o);
	free(before);
	expect_all_free(pool);
	pa_shutdown(pool);
	to_destroy(&o);
}

/*
 * Before folio compaction (Linux 6.9; linux=6.1 here) the scanners skip
 * every folio above order 0: the layout above moves nothing, where the
 * same layout of order-0 pages moves.
 */
TEST(compact_linux_61_moves_order0_pages_only)
{
	static const unsigned orders[] = { 4, 0 };
	for (unsigned i = 0; i < 2; i++) {
		struct pa_pool *pool = test_boot(QUIET "mem=64M backing=anon linux=6.1");
		struct towner o;
		to_init(&o, pool, 20000);
		fill_owned(&o, orders[i]);
		free_odd_at(&o, orders[i]);
		long moved = pa_compact(pool, -1);
		if (orders[i])
			CHECK_MSG(moved == 0, "6.1 moved %ld frames of order-4 folios", moved);
		else
			CHECK_MSG(moved > 0, "6.1 moved no order-0 page");
		CHECK_EQ_U64(folios_migrated(pool, 4), 0);
		to_check_all(&o);
		VALIDATE(pool);
		to_free_all(&o);
		expect_all_free(pool);
		pa_shutdown(pool);
		to_destroy(&o);
	}
}

/* Frames on CPU cpu's lists of the pool's first zone. */
static uint64_t on_lists(struct pa_pool *pool, unsigned cpu)
{
	struct pa_zone_info zi;
	struct pa_pcp_info pi;
	if (pa_zone_info(pool, 0, &zi) != 0 ||
	    pa_pcp_info(pool, zi.node, zi.type, cpu, &pi, NULL) != 0)
		return UINT64_MAX;
	return pi.count;
}

/*
 * A pool of one zone, every other frame in use (owned, movable), nothing
 * on CPU 1's lists and some frames on CPU 0's; the caller goes on as CPU 1.
 */
static struct pa_pool *holes_and_cpu0_lists(struct towner *o, struct pa_platform *plat)
{
	plat->cpu_id = fake_cpu_id;
	struct pa_pool *pool = test_boot_on(
	        "kcompactd=manual min_free_kbytes=0 mem=64M nr_cpus=2 backing=anon", plat);
	to_init(o, pool, 20000);
	fake_cpu = 1;
	fill_owned(o, 0);
	free_odd_at(o, 0);
	pa_drain_all(pool);
	fake_cpu = 0;
	struct pa_page *p[8];
	for (unsigned i = 0; i < 8; i++)
		REQUIRE((p[i] = pa_alloc_pages(pool, 0, 0)) != NULL);
	for (unsigned i = 0; i < 8; i++)
		pa_free_pages(pool, p[i], 0);
	fake_cpu = 1;
	return pool;
}

static void holes_done(struct pa_pool *pool, struct towner *o)
{
	pa_ctl_write(pool, "compaction/fail_pct", "0");
	to_check_all(o);
	VALIDATE(pool);
	to_free_all(o);
	fake_cpu = 0;
	expect_all_free(pool);
	pa_shutdown(pool);
	to_destroy(o);
}

/*
 * Writing compact_memory compacts each zone as it is: Linux's compact_node()
 * drains no per-CPU list (compact_zone() drains the local one only when
 * compacting for an order), and each moved folio's old block is freed as
 * folio_put() frees it, through the compacting CPU's lists (and counted in
 * pgfree). CPU 0's lists keep what they held; CPU 1, compacting, gets the
 * old blocks.
 */
TEST(compact_frees_old_blocks_through_the_lists_and_drains_none)
{
	struct pa_platform plat = { 0 };
	struct towner o;
	struct pa_pool *pool = holes_and_cpu0_lists(&o, &plat);
	uint64_t on_cpu0 = usage(pool).reserved;
	CHECK_MSG(on_cpu0 > 0 && on_lists(pool, 1) == 0, "CPU 0's lists hold %llu, CPU 1's %llu",
	          (unsigned long long)on_cpu0, (unsigned long long)on_lists(pool, 1));
	uint64_t pgfree = vmstat(pool, "pgfree");
	long moved = pa_compact(pool, -1);
	CHECK_MSG(moved > 0, "pa_compact moved %ld frames", moved);
	CHECK_EQ_U64(vmstat(pool, "pgfree") - pgfree, (uint64_t)moved);
	uint64_t after = usage(pool).reserved;
	pa_drain_local(pool); /* CPU 1's */
	CHECK_EQ_U64(usage(pool).reserved, on_cpu0);
	CHECK_MSG(after > on_cpu0, "CPU 1's lists got none of the %ld frames moved", moved);
	holes_done(pool, &o);
}

/*
 * Linux's direct compaction drains no other CPU's lists; its harder tries
 * come on retries, after a round of direct reclaim that drains them all
 * where it did not help. compaction/direct_drain=1 (the default) stands
 * for that round, 0 leaves the lists to the caller (a replay drains where
 * the kernel did); compaction/direct_priority caps the tries as Linux's
 * COMPACT_PRIO_* do: 2 async only, 1 up to sync-light, 0 up to sync (for an
 * order that is not costly: a THP's stops at sync-light).
 */
TEST(compact_direct_drains_other_cpus_only_for_the_reclaim_round)
{
	for (unsigned prio = 0; prio < 3; prio++)
		for (int drain = 0; drain < 2; drain++) {
			struct pa_platform plat = { 0 };
			struct towner o;
			struct pa_pool *pool = holes_and_cpu0_lists(&o, &plat);
			uint64_t held = on_lists(pool, 0);
			REQUIRE(held > 0 && held != UINT64_MAX);
			char v[2] = { (char)('0' + prio), 0 };
			pa_ctl_write(pool, "compaction/fail_pct", "100");
			pa_ctl_write(pool, "compaction/direct_drain", drain ? "1" : "0");
			pa_ctl_write(pool, "compaction/direct_priority", v);
			/* Order 9 is costly: no further than sync-light (2 tries) either way. */
			CHECK(pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 9) == NULL);
			CHECK_MSG(vmstat(pool, "compact_stall") == (prio ? 3 - prio : 2),
			          "priority %u: %llu direct compactions", prio,
			          (unsigned long long)vmstat(pool, "compact_stall"));
			CHECK_MSG(on_lists(pool, 0) == (drain ? 0 : held),
			          "direct_drain=%d: CPU 0's lists hold %llu of %llu", drain,
			          (unsigned long long)on_lists(pool, 0), (unsigned long long)held);
			holes_done(pool, &o);
		}
}

/*
 * Linux's kcompactd drains every CPU's lists of a zone it could not make
 * the block in (drain_all_pages(zone)): frames stranded there could merge.
 */
TEST(kcompactd_drains_every_cpus_lists_of_a_zone_it_failed)
{
	for (int fail = 0; fail < 2; fail++) {
		struct pa_platform plat = { 0 };
		struct towner o;
		struct pa_pool *pool = holes_and_cpu0_lists(&o, &plat);
		uint64_t held = on_lists(pool, 0);
		pa_ctl_write(pool, "compaction/fail_pct", fail ? "100" : "0");
		CHECK(pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOCOMPACT | PA_GFP_NOWARN, 9) ==
		      NULL); /* records the wake */
		pa_kcompactd_run(pool, 0);
		CHECK_EQ_U64(vmstat(pool, "compact_daemon_wake"), 1);
		CHECK_MSG(on_lists(pool, 0) == (fail ? 0 : held),
		          "kcompactd %s: CPU 0's lists hold %llu of %llu",
		          fail ? "failed" : "made it", (unsigned long long)on_lists(pool, 0),
		          (unsigned long long)held);
		holes_done(pool, &o);
	}
}

TEST(compact_split_folios_mode_splits_large_folios_and_calls_split)
{
	struct pa_pool *pool = test_boot(QUIET "mem=64M backing=anon compaction_split_folios=1");
	struct towner o;
	to_init(&o, pool, 20000);
	fill_owned(&o, 4);
	free_odd_at(&o, 4);
	uint64_t free0 = usage(pool).free;
	long moved = pa_compact(pool, -1);
	CHECK_MSG(moved > 0, "pa_compact moved %ld frames", moved);
	uint64_t split = vmstat(pool, "compact_folios_split");
	CHECK_MSG(split > 0, "compaction_split_folios=1 split no folio");
	CHECK_EQ_U64(o.split_calls, split);
	CHECK_EQ_U64(folios_migrated(pool, 4), 0);
	CHECK_EQ_U64(folios_migrated(pool, 0), (uint64_t)moved);
	CHECK_EQ_U64(o.moved_order[0], (uint64_t)moved);
	CHECK(o.pieces_moved > 0);
	CHECK_EQ_U64(vmstat(pool, "pgmigrate_success"), (uint64_t)moved);
	/* Each piece is an order-0 folio with the cookie and its part of the bytes. */
	to_check_all(&o);
	to_expect_clean(&o);
	CHECK_EQ_U64(usage(pool).free, free0);
	CHECK(free_frames_from(pool, 9) > 0);
	VALIDATE(pool);
	to_finish(&o);
}

/*
 * As Linux's compaction_alloc(), a folio with no captured block of its
 * order gets one more round of the free scanner, not a scan down to the
 * migrate scanner: an order-4 folio at the bottom of a zone whose free
 * memory above is all single frames goes back whole, and the pass goes on
 * moving the order-0 folios above it into those frames.
 */
TEST(compact_a_large_folio_without_a_destination_does_not_end_the_pass)
{
	struct pa_pool *pool = test_boot(QUIET "mem=64M backing=anon");
	struct towner o;
	to_init(&o, pool, 20000);
	fill_owned(&o, 0);
	struct pa_zone_info big = { 0 }, zi;
	for (unsigned i = 0; pa_zone_info(pool, i, &zi) == 0; i++)
		if (zi.managed > big.managed)
			big = zi;
	pa_pfn_t b = (big.start_pfn + 64 + 15) & ~(pa_pfn_t)15;
	for (size_t i = 0; i < o.nr; i++)
		if (o.f[i].first_pfn >= b && o.f[i].first_pfn < b + 16)
			to_free(&o, i);
	long big_folio = to_alloc(&o, PA_GFP_COMP | PA_GFP_NOCOMPACT, 4);
	REQUIRE(big_folio >= 0);
	REQUIRE(o.f[big_folio].first_pfn == b);
	uint64_t holes = 0;
	for (size_t i = 0; i < o.nr; i++)
		if (o.f[i].order == 0 && o.f[i].first_pfn >= b + 16 &&
		    o.f[i].first_pfn < big.end_pfn && o.f[i].first_pfn % 2) {
			to_free(&o, i);
			holes++;
		}
	pa_compact(pool, -1);
	fprintf(stderr, "  %llu order-0 folios moved into %llu single free frames\n",
	        (unsigned long long)folios_migrated(pool, 0), (unsigned long long)holes);
	CHECK_EQ_U64(folios_migrated(pool, 4), 0);
	CHECK_EQ_U64(pa_page_to_pfn(pool, o.f[big_folio].page), b);
	CHECK(folios_migrated(pool, 0) > holes / 4);
	to_check_all(&o);
	to_expect_clean(&o);
	VALIDATE(pool);
	to_finish(&o);
}

TEST(compact_same_layout_default_moves_whole_old_mode_splits)
{
	/* Seed 003's comparison in one run: order-4 and order-0 folios, both modes. */
	uint64_t whole[2] = { 0, 0 }, splits[2] = { 0, 0 }, big[2] = { 0, 0 };
	for (int mode = 0; mode < 2; mode++) {
		struct pa_pool *pool = test_boot(mode ? QUIET "mem=64M compaction_split_folios=1" :
		                                        QUIET "mem=64M");
		struct towner o;
		to_init(&o, pool, 20000);
		/* Order-4 folios, order-0 folios between them. */
		for (unsigned i = 0;; i++)
			if (to_alloc(&o, PA_GFP_COMP | PA_GFP_NOCOMPACT, i % 3 ? 0 : 4) < 0 &&
			    to_alloc(&o, PA_GFP_NOCOMPACT, 0) < 0)
				break;
		for (size_t i = 0; i < o.nr; i++)
			if (to_mix(i) % 2)
				to_free(&o, i);
		pa_compact(pool, -1);
		whole[mode] = folios_migrated(pool, 4);
		splits[mode] = vmstat(pool, "compact_folios_split");
		big[mode] = free_frames_from(pool, 9);
		to_check_all(&o);
		to_expect_clean(&o);
		VALIDATE(pool);
		to_free_all(&o);
		expect_all_free(pool);
		pa_shutdown(pool);
		to_destroy(&o);
	}
	fprintf(stderr,
	        "  default: %" PRIu64 " order-4 folios moved whole, %" PRIu64 " split, %" PRIu64
	        " frames in order>=9 blocks; split mode: %" PRIu64 " whole, %" PRIu64
	        " split, %" PRIu64 "\n",
	        whole[0], splits[0], big[0], whole[1], splits[1], big[1]);
	CHECK(whole[0] > 0);
	CHECK_EQ_U64(splits[0], 0);
	CHECK_EQ_U64(whole[1], 0);
	CHECK(splits[1] > 0);
	CHECK(big[0] > 0 && big[1] > 0);
}

TEST(compact_does_not_isolate_folios_larger_than_the_order_asked_for)
{
	/* Order-4 folios at the bottom, fragmented order-0 folios above: compact for order 2. */
	struct pa_pool *pool = test_boot(QUIET "mem=64M backing=anon");
	struct towner o;
	to_init(&o, pool, 20000);
	size_t big_slots = 64;
	for (size_t i = 0; i < big_slots; i++)
		REQUIRE(to_alloc(&o, PA_GFP_COMP | PA_GFP_NOCOMPACT, 4) == (long)i);
	fill_owned(&o, 0);
	free_odd_at(&o, 0);
	/* The order-4 folios' pageblocks must hold some holes as well. */
	for (size_t i = 0; i < big_slots; i += 2)
		to_free(&o, i);
	CHECK_EQ_U64(free_frames_from(pool, 1), 16 * big_slots / 2);
	pa_pfn_t *before = snapshot_pfns(&o);
	/* Take the order-4 holes (not movable: no owner), so that order 2 needs compaction. */
	struct pa_page *taken[64];
	size_t nt = 0;
	struct pa_page *p;
	while (nt < 64 &&
	       (p = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOCOMPACT | PA_GFP_NOWARN, 4)))
		taken[nt++] = p;
	CHECK_EQ_U64(free_frames_from(pool, 1), 0);
	uint64_t stall = vmstat(pool, "compact_stall");
	struct pa_page *want = pa_alloc_pages(pool, PA_GFP_MOVABLE, 2);
	CHECK_MSG(want != NULL, "order-2 allocation failed after direct compaction");
	CHECK(vmstat(pool, "compact_stall") > stall);
	CHECK_EQ_U64(folios_migrated(pool, 4), 0);
	CHECK_EQ_U64(o.moved_order[4], 0);
	CHECK(folios_migrated(pool, 0) > 0);
	for (size_t i = 1; i < big_slots; i += 2)
		CHECK_EQ_U64(to_pfn(&o, i), before[i]);
	to_check_all(&o);
	to_expect_clean(&o);
	if (want)
		pa_free_pages(pool, want, 2);
	for (size_t i = 0; i < nt; i++)
		pa_free_pages(pool, taken[i], 4);
	to_free_all(&o);
	free(before);
	expect_all_free(pool);
	pa_shutdown(pool);
	to_destroy(&o);
}

TEST(compact_order9_folio_at_zone_start_does_not_stop_pa_compact)
{
	/*
	 * A pageblock-sized folio cannot go anywhere in a whole-zone pass (free
	 * pageblocks are not captured) and moving it gains nothing; Linux skips
	 * folios of pageblock order. The order-0 folios above it must still be
	 * compacted.
	 */
	enum lb lb[32];
	lb[0] = LB_O9;
	for (int i = 1; i < 32; i++)
		lb[i] = LB_O0_HALF;
	struct pa_pool *pool = test_boot(QUIET "mem=64M backing=anon");
	struct towner o;
	to_init(&o, pool, 20000);
	struct layout l;
	build_layout(&l, &o, lb, 32);
	CHECK_EQ_U64(free_frames_from(pool, 1), 0);
	long moved = pa_compact(pool, -1);
	CHECK_MSG(moved > 0,
	          "pa_compact moved %ld frames: the order-9 folio at pfn 0 ended the pass", moved);
	CHECK_MSG(free_frames_from(pool, 9) >= 10 * 512,
	          "%" PRIu64 " frames free in order>=9 blocks", free_frames_from(pool, 9));
	layout_done(&l, &o);
}

/*
 * Linux compacts a zone for an allocation only where it can help
 * (compaction_suit_allocation_order()): with room to migrate into (the
 * order-0 watermark, min 0 here, plus twice the block: 1,024 frames), and
 * where a failure would be for fragmentation rather than lack of memory
 * (fragmentation index above vm.extfrag_threshold's 500). A skipped zone
 * is not scanned and no stall is counted. 32 pageblocks of order-4 folios:
 *   no room: 2 blocks with a quarter of their folios kept (768 free frames);
 *   lack:    5 blocks with their lower half free (5 order-8 blocks, index 300);
 *   go:      5 blocks with every other folio free (80 order-4 holes, index 956).
 */
TEST(compact_direct_skips_a_zone_it_cannot_help)
{
	enum { NO_ROOM, LACK, GO };
	for (int c = NO_ROOM; c <= GO; c++) {
		enum lb lb[32];
		for (int i = 0; i < 32; i++)
			lb[i] = LB_O4;
		for (int i = 0; i < (c == NO_ROOM ? 2 : 5); i++)
			lb[i] = c == GO ? LB_O4_HALF : c == NO_ROOM ? LB_O4_QUART : LB_O4;
		struct pa_pool *pool = test_boot(QUIET "mem=64M backing=anon");
		struct towner o;
		to_init(&o, pool, 20000);
		struct layout l;
		build_layout(&l, &o, lb, 32);
		if (c == LACK) /* the lower 16 folios of each of the first 5 blocks */
			for (size_t s = 0; s < o.nr; s++) {
				pa_pfn_t pfn = pa_page_to_pfn(pool, o.f[s].page);
				if (o.f[s].page && (pfn >> 9) < 5 && (pfn & 511) < 256)
					to_free(&o, s);
			}
		uint64_t free0 = usage(pool).free;
		struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 9);
		CHECK_MSG((p != NULL) == (c == GO), "case %d (%" PRIu64 " free): %s", c, free0,
		          p ? "served" : "failed");
		uint64_t scanned = vmstat(pool, "compact_migrate_scanned");
		CHECK_MSG((scanned > 0) == (c == GO), "case %d: %" PRIu64 " frames scanned", c,
		          scanned);
		CHECK_EQ_U64(vmstat(pool, "compact_stall"), c == GO ? 1 : 0);
		if (p)
			pa_free_pages(pool, p, 9);
		layout_done(&l, &o);
	}
}

TEST(compact_order9_folios_at_zone_start_do_not_block_direct_order9)
{
	/* The same for an order-9 allocation: order-9 folios in the lowest pageblocks. */
	enum lb lb[32];
	for (int i = 0; i < 32; i++)
		lb[i] = i < 4 ? LB_O9 : LB_O0_HALF;
	struct pa_pool *pool = test_boot(QUIET "mem=64M backing=anon");
	struct towner o;
	to_init(&o, pool, 20000);
	struct layout l;
	build_layout(&l, &o, lb, 32);
	uint64_t stall = vmstat(pool, "compact_stall");
	struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NORETRY, 9);
	CHECK_MSG(p != NULL,
	          "order-9 allocation (one async compaction) failed with order-9 folios in "
	          "the first pageblocks");
	CHECK_EQ_U64(vmstat(pool, "compact_stall"), stall + 1);
	CHECK_EQ_U64(folios_migrated(pool, 9), 0);
	if (p)
		pa_free_pages(pool, p, 9);
	layout_done(&l, &o);
}

TEST(compact_direct_order4_is_not_stopped_by_order4_folios)
{
	/*
	 * The same at a small order: an order-4 folio every 32 frames, order-0
	 * folios between them, every other order-0 folio freed. Moving order-0
	 * folios makes order-4 blocks; the order-4 folios themselves have no
	 * order-4 destination (free blocks of the order asked for are not
	 * captured), so isolating them (Linux skips folios of order >= the
	 * order asked for) must not end the pass.
	 */
	struct pa_pool *pool = test_boot(QUIET "mem=64M backing=anon");
	struct towner o;
	to_init(&o, pool, 20000);
	for (bool full = false; !full;) {
		full = to_alloc(&o, PA_GFP_COMP | PA_GFP_NOCOMPACT, 4) < 0;
		for (int k = 0; k < 16 && !full; k++)
			full = to_alloc(&o, PA_GFP_NOCOMPACT, 0) < 0;
	}
	for (size_t i = 0; i < o.nr; i++)
		if (o.f[i].live && o.f[i].order == 0 && pa_page_to_pfn(pool, o.f[i].page) % 2)
			to_free(&o, i);
	CHECK_EQ_U64(free_frames_from(pool, 1), 0);
	/* One async pass (NORETRY) is plenty: the first pageblock alone can give an order-4 block. */
	struct pa_page *p =
	        pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN | PA_GFP_NORETRY, 4);
	CHECK_MSG(p != NULL,
	          "order-4 allocation failed after async direct compaction (compact_stall %" PRIu64
	          ", pgmigrate_success %" PRIu64 ")",
	          vmstat(pool, "compact_stall"), vmstat(pool, "pgmigrate_success"));
	CHECK_EQ_U64(folios_migrated(pool, 4), 0);
	if (p)
		pa_free_pages(pool, p, 4);
	to_check_all(&o);
	to_expect_clean(&o);
	to_finish(&o);
}

TEST(compact_order10_moves_order9_and_order4_folios_whole)
{
	/*
	 * max_order=10, pageblock order 9: an order-10 request takes the region
	 * route. Region 0 (pageblocks 0-1) is the cheapest: an order-9 folio and
	 * 8 order-4 folios. The order-9 folio needs an order-9 destination: the
	 * free pageblock 30 (its buddy 31 is unmovable, so no order-10 block is
	 * free to begin with).
	 */
	enum lb lb[32];
	lb[0] = LB_O9;
	lb[1] = LB_O4_QUART;
	for (int i = 2; i < 30; i++)
		lb[i] = i % 2 ? LB_O4_HALF : LB_O4;
	lb[30] = LB_FREE;
	lb[31] = LB_KERNEL;
	for (int split_mode = 0; split_mode < 2; split_mode++) {
		struct pa_pool *pool = test_boot(
		        split_mode ? QUIET "mem=64M backing=anon compaction_split_folios=1" :
		                     QUIET "mem=64M backing=anon");
		struct towner o;
		to_init(&o, pool, 20000);
		struct layout l;
		build_layout(&l, &o, lb, 32);
		CHECK_EQ_U64(free_frames_from(pool, 10), 0);
		pa_pfn_t *before = snapshot_pfns(&o);
		struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE, 10);
		CHECK_MSG(p != NULL, "split_mode %d: order-10 allocation failed", split_mode);
		if (p) {
			CHECK_EQ_U64(pa_page_to_pfn(pool, p), 0);
			pa_free_pages(pool, p, 10);
		}
		CHECK(vmstat(pool, "compact_success") >= 1);
		if (split_mode) {
			/* The old mode splits every large folio it moves, out of a region too. */
			CHECK_EQ_U64(folios_migrated(pool, 9), 0);
			CHECK_EQ_U64(folios_migrated(pool, 4), 0);
			CHECK_EQ_U64(vmstat(pool, "compact_folios_split"), 9);
		} else {
			/* Whole folios, of their own orders. */
			CHECK_EQ_U64(folios_migrated(pool, 9), 1);
			CHECK_EQ_U64(folios_migrated(pool, 4), 8);
			CHECK_EQ_U64(o.moved_order[9], 1);
			CHECK_EQ_U64(o.moved_order[4], 8);
			CHECK_EQ_U64(vmstat(pool, "compact_folios_split"), 0);
			CHECK_EQ_U64(to_pfn(&o, 0),
			             30 * 512); /* the order-9 folio went to the free pageblock */
		}
		to_check_all(&o);
		to_expect_clean(&o);
		VALIDATE(pool);
		to_free_all(&o);
		layout_free(&l);
		free(before);
		expect_all_free(pool);
		pa_shutdown(pool);
		to_destroy(&o);
	}
}

TEST(compact_direct_order9_moves_order4_folios_whole_and_splits_in_old_mode)
{
	for (int split_mode = 0; split_mode < 2; split_mode++) {
		struct pa_pool *pool = test_boot(
		        split_mode ? QUIET "mem=64M backing=anon compaction_split_folios=1" :
		                     QUIET "mem=64M backing=anon");
		struct towner o;
		to_init(&o, pool, 20000);
		fill_owned(&o, 4);
		free_odd_at(&o, 4);
		struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE, 9);
		CHECK_MSG(p != NULL, "split_mode %d: order-9 allocation failed", split_mode);
		if (split_mode) {
			CHECK(vmstat(pool, "compact_folios_split") > 0);
			CHECK_EQ_U64(folios_migrated(pool, 4), 0);
		} else {
			CHECK_EQ_U64(vmstat(pool, "compact_folios_split"), 0);
			CHECK(folios_migrated(pool, 4) > 0);
			CHECK_EQ_U64(folios_migrated(pool, 0), 0);
		}
		if (p)
			pa_free_pages(pool, p, 9);
		to_check_all(&o);
		to_expect_clean(&o);
		to_free_all(&o);
		expect_all_free(pool);
		pa_shutdown(pool);
		to_destroy(&o);
	}
}

TEST(compact_node_argument_limits_the_pass_to_that_node)
{
	struct pa_pool *pool = test_boot(QUIET "mem=256M numa=2");
	REQUIRE(zones_with_memory(pool) == 2);
	struct pa_zone *z0 = pool->nodes[0].zones[PA_ZONE_DMA32],
	               *z1 = pool->nodes[1].zones[PA_ZONE_DMA32];
	REQUIRE(z0 && z1);
	struct towner o;
	to_init(&o, pool, 70000);
	fill_owned(&o, 0);
	free_odd_at(&o, 0);
	uint64_t moved0 = z0->stat[PA_ZS_PGMIGRATE_SUCCESS];
	uint64_t moved1 = z1->stat[PA_ZS_PGMIGRATE_SUCCESS];
	long moved = pa_compact(pool, 1);
	CHECK(moved > 0);
	CHECK_EQ_U64(z0->stat[PA_ZS_PGMIGRATE_SUCCESS], moved0);
	CHECK_EQ_U64(z1->stat[PA_ZS_PGMIGRATE_SUCCESS] - moved1, (uint64_t)moved);
	CHECK_EQ_U64(zone_free_blocks(z0, 9) + zone_free_blocks(z0, 10), 0);
	CHECK(zone_free_blocks(z1, 9) + zone_free_blocks(z1, 10) > 0);
	/* Every folio stayed on its node. */
	for (size_t i = 0; i < o.nr; i++)
		if (o.f[i].live)
			CHECK_EQ_U64(to_pfn(&o, i) >= z1->start_pfn,
			             o.f[i].first_pfn >= z1->start_pfn);
	long all = pa_compact(pool, -1);
	CHECK(all > 0);
	CHECK(zone_free_blocks(z0, 9) + zone_free_blocks(z0, 10) > 0);
	to_check_all(&o);
	to_expect_clean(&o);
	to_finish(&o);
}

/* ---------------------------------------------------------------------- */
/* Direct compaction, NOCOMPACT, deferral                                  */
/* ---------------------------------------------------------------------- */

TEST(compact_direct_makes_order9_from_movable_order0_folios)
{
	struct pa_pool *pool = test_boot(QUIET "mem=64M backing=anon");
	struct towner o;
	to_init(&o, pool, 20000);
	fill_owned(&o, 0);
	free_odd_at(&o, 0);
	CHECK_EQ_U64(free_frames_from(pool, 1), 0);
	uint64_t free0 = usage(pool).free;

	/* NOCOMPACT: fails, and no stall. */
	CHECK(pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOCOMPACT | PA_GFP_NOWARN, 9) == NULL);
	CHECK_EQ_U64(vmstat(pool, "compact_stall"), 0);
	CHECK_EQ_U64(vmstat(pool, "pgmigrate_success"), 0);

	/* Without it: direct compaction, counted. */
	struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE, 9);
	REQUIRE(p);
	CHECK(vmstat(pool, "compact_stall") >= 1);
	CHECK(vmstat(pool, "compact_success") >= 1);
	CHECK(vmstat(pool, "compact_migrate_scanned") > 0);
	CHECK(vmstat(pool, "compact_isolated") > 0);
	CHECK_EQ_U64(vmstat(pool, "compact_daemon_migrate_scanned"), 0);
	CHECK_EQ_U64(vmstat(pool, "compact_stall"),
	             vmstat(pool, "compact_success") + vmstat(pool, "compact_fail"));
	/* The scanners' positions are cached for the next attempt. */
	CHECK(pool->zones[0].compact_cached_migrate_pfn > 0);
	CHECK(pool->zones[0].compact_cached_free_pfn < pool->zones[0].end_pfn);

	/*
	 * The free memory can be had as order-9 blocks, one allocation at a
	 * time, but for what compaction needs to migrate into (Linux's
	 * compact_gap(): twice the block, above the min watermark of 0 here).
	 */
	struct pa_page *got[32];
	size_t n = 0;
	got[n++] = p;
	while (n < 32 && (p = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 9)) != NULL)
		got[n++] = p;
	fprintf(stderr,
	        "  %zu order-9 blocks from %" PRIu64 " free frames; compact_stall %" PRIu64
	        " success %" PRIu64 " fail %" PRIu64 "\n",
	        n, free0, vmstat(pool, "compact_stall"), vmstat(pool, "compact_success"),
	        vmstat(pool, "compact_fail"));
	CHECK_MSG(n * 512 + 2 * 512 >= free0,
	          "only %zu order-9 blocks from %" PRIu64 " free frames", n, free0);
	CHECK_EQ_U64(vmstat(pool, "compact_stall"),
	             vmstat(pool, "compact_success") + vmstat(pool, "compact_fail"));
	to_check_all(&o);
	to_expect_clean(&o);
	for (size_t i = 0; i < n; i++)
		pa_free_pages(pool, got[i], 9);
	VALIDATE(pool);
	to_finish(&o);
}

/*
 * Linux's last priority of direct compaction (MIN_COMPACT_PRIORITY, which
 * orders up to the costly one reach) scans the whole zone and takes
 * destinations in pageblocks of any type (ignore_block_suitable). Here the
 * only free frames are single ones in an unmovable pageblock: an order-2
 * request fails at sync-light (direct_priority 1) and is made at sync.
 */
/*
 * The only free frames are single ones in an unmovable pageblock: only Linux's
 * last priority (sync: destinations in pageblocks of any type) makes a block.
 * A costly order stops short of it unless compaction/direct_costly_sync.
 */
TEST(compact_direct_last_priority_takes_destinations_in_any_pageblock)
{
	static const struct {
		unsigned order;
		const char *prio, *costly_sync;
		unsigned tries; /* compactions run, the last one sync when made */
		bool made;
	} cases[] = {
		{ 2, "0", "0", 3, true },
		{ 2, "1", "0", 2, false },
		{ 4, "0", "0", 2, false },
		{ 4, "0", "1", 3, true },
	};
	for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
		unsigned order = cases[t].order;
		struct pa_pool *pool = test_boot(QUIET "mem=64M");
		struct towner o;
		to_init(&o, pool, 20000);
		fill_owned(&o, 0);
		struct pa_zone_info zi;
		REQUIRE(pa_zone_info(pool, 0, &zi) == 0 && zi.type == PA_ZONE_DMA32);
		pa_pfn_t u = (zi.end_pfn - 512) & ~(pa_pfn_t)511; /* the zone's last pageblock */
		for (size_t i = 0; i < o.nr; i++)
			if (to_pfn(&o, i) >= u && to_pfn(&o, i) < u + 512)
				to_free(&o, i);
		/* Unmovable pages claim it back; every other one goes again. */
		struct pa_page *k[1024];
		size_t nk = 0;
		while (nk < 1024 &&
		       (k[nk] = pa_alloc_pages(
		                pool, PA_GFP_KERNEL | PA_GFP_NOCOMPACT | PA_GFP_NOWARN, 0)) != NULL)
			nk++;
		for (size_t i = 0; i < nk; i++)
			if (pa_page_to_pfn(pool, k[i]) % 2)
				pa_free_pages(pool, k[i], 0);
		struct pa_pageblock_info bi;
		REQUIRE(pa_pageblock_info(pool, u / 512, &bi) == 0);
		REQUIRE(bi.mt == PA_MT_UNMOVABLE && bi.free == 256);
		REQUIRE(pa_ctl_write(pool, "compaction/direct_priority", cases[t].prio) == 0);
		REQUIRE(pa_ctl_write(pool, "compaction/direct_costly_sync", cases[t].costly_sync) ==
		        0);
		struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, order);
		CHECK_MSG((p != NULL) == cases[t].made, "case %zu: order %u %s", t, order,
		          p ? "made" : "failed");
		CHECK_EQ_U64(vmstat(pool, "compact_stall"), cases[t].tries);
		CHECK_EQ_U64(vmstat(pool, "compact_success"), (cases[t].made ? 1u : 0u));
		REQUIRE(pa_pageblock_info(pool, u / 512, &bi) == 0);
		CHECK_MSG(cases[t].made ? bi.free < 256 : bi.free == 256,
		          "case %zu: the unmovable pageblock has %llu free frames", t,
		          (unsigned long long)bi.free);
		if (p)
			pa_free_pages(pool, p, order);
		for (size_t i = 0; i < nk; i++)
			if (pa_page_to_pfn(pool, k[i]) % 2 == 0)
				pa_free_pages(pool, k[i], 0);
		to_check_all(&o);
		VALIDATE(pool);
		to_finish(&o);
	}
}

TEST(compact_direct_noretry_stalls_once_and_default_escalates)
{
	/*
	 * Only unmovable memory: every mode fails. NORETRY tries async only; the
	 * default escalates, to sync-light for a costly order (Linux's
	 * MIN_COMPACT_COSTLY_PRIORITY), to sync for the others.
	 */
	struct pa_pool *pool = test_boot(QUIET "mem=64M");
	struct towner o;
	to_init(&o, pool, 16);
	struct pa_page **k = malloc(16384 * sizeof *k);
	REQUIRE(k);
	size_t n = 0;
	struct pa_page *p;
	while ((p = pa_alloc_pages(pool, PA_GFP_KERNEL | PA_GFP_NOWARN | PA_GFP_NOCOMPACT, 0)) !=
	       NULL)
		k[n++] = p;
	for (size_t i = 0; i < n; i++)
		if (pa_page_to_pfn(pool, k[i]) % 2)
			pa_free_pages(pool, k[i], 0);
	CHECK(pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NORETRY | PA_GFP_NOWARN, 9) == NULL);
	CHECK_EQ_U64(vmstat(pool, "compact_stall"), 1);
	CHECK_EQ_U64(vmstat(pool, "compact_fail"), 1);
	CHECK(pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 9) == NULL);
	CHECK_EQ_U64(vmstat(pool, "compact_stall"), 3);
	CHECK(pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 2) == NULL);
	CHECK_EQ_U64(vmstat(pool, "compact_stall"), 6);
	CHECK_EQ_U64(vmstat(pool, "compact_fail"), 6);
	CHECK_EQ_U64(vmstat(pool, "compact_success"), 0);
	CHECK_EQ_U64(vmstat(pool, "pgmigrate_success"), 0);
	/* Order 0 never compacts. */
	struct pa_page *z0[16384];
	size_t nz = 0;
	while ((p = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 0)) != NULL)
		z0[nz++] = p;
	CHECK(pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 0) == NULL);
	CHECK_EQ_U64(vmstat(pool, "compact_stall"), 6);
	for (size_t i = 0; i < nz; i++)
		pa_free_pages(pool, z0[i], 0);
	for (size_t i = 0; i < n; i++)
		if (pa_page_to_pfn(pool, k[i]) % 2 == 0)
			pa_free_pages(pool, k[i], 0);
	free(k);
	expect_all_free(pool);
	pa_shutdown(pool);
	to_destroy(&o);
}

TEST(compact_deferred_after_repeated_failures_at_an_impossible_order)
{
	struct pa_pool *pool = test_boot(QUIET "mem=64M");
	struct towner o;
	to_init(&o, pool, 16);
	struct pa_page **k = malloc(16384 * sizeof *k);
	REQUIRE(k);
	size_t n = 0;
	struct pa_page *p;
	while ((p = pa_alloc_pages(pool, PA_GFP_KERNEL | PA_GFP_NOWARN | PA_GFP_NOCOMPACT, 0)) !=
	       NULL)
		k[n++] = p;
	for (size_t i = 0; i < n; i++)
		if (pa_page_to_pfn(pool, k[i]) % 2)
			pa_free_pages(pool, k[i], 0);
	struct pa_zone *z = &pool->zones[0];
	CHECK(pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 9) == NULL);
	CHECK_EQ_U64(vmstat(pool, "compact_deferred"), 0);
	CHECK(z->compact_defer_shift > 0);
	CHECK(z->compact_order_failed <= 9);
	/* Pageblocks that gave nothing carry a skip hint. */
	unsigned skipped = 0;
	for (uint64_t b = 0; b < pool->nr_pageblocks; b++)
		skipped += (pool->pb_bits[b] & PB_SKIP) != 0;
	CHECK_MSG(skipped > 0, "no pageblock skip hint after a failed compaction");
	uint64_t scanned = vmstat(pool, "compact_migrate_scanned");
	for (int i = 0; i < 40; i++)
		CHECK(pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 9) == NULL);
	uint64_t deferred = vmstat(pool, "compact_deferred");
	CHECK_MSG(deferred > 0, "40 more failing order-9 attempts were never deferred");
	/* Deferred attempts skip the async and sync-light passes: far fewer than 2 per attempt ran. */
	CHECK_MSG(deferred >= 40, "compact_deferred %" PRIu64 " after 40 attempts", deferred);
	CHECK_MSG(z->compact_defer_shift == 6, "defer_shift %u, expected the cap 6",
	          z->compact_defer_shift);
	CHECK(vmstat(pool, "compact_migrate_scanned") > scanned); /* sync still runs */
	/* Higher orders are deferred too (as in Linux, compact_order_failed starts at 0: so are lower ones). */
	uint64_t d = vmstat(pool, "compact_deferred");
	CHECK(pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 10) == NULL);
	CHECK(vmstat(pool, "compact_deferred") > d);
	CHECK_EQ_U64(vmstat(pool, "compact_stall"),
	             vmstat(pool, "compact_success") + vmstat(pool, "compact_fail"));
	for (size_t i = 0; i < n; i++)
		if (pa_page_to_pfn(pool, k[i]) % 2 == 0)
			pa_free_pages(pool, k[i], 0);
	free(k);
	expect_all_free(pool);
	pa_shutdown(pool);
	to_destroy(&o);
}

TEST(compact_success_resets_deferral)
{
	/* Fail at order 9 with unmovable memory, then make it movable: a success clears the deferral. */
	struct pa_pool *pool = test_boot(QUIET "mem=64M");
	struct towner o;
	to_init(&o, pool, 20000);
	fill_owned(&o, 0);
	free_odd_at(&o, 0);
	/* Pin everything: nothing can move. */
	for (size_t i = 0; i < o.nr; i++)
		if (o.f[i].live)
			CHECK_EQ_U64(pa_pin(pool, o.f[i].page), 0);
	for (int i = 0; i < 3; i++)
		CHECK(pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 9) == NULL);
	struct pa_zone *z = &pool->zones[0];
	CHECK(z->compact_defer_shift > 0);
	CHECK_EQ_U64(vmstat(pool, "pgmigrate_success"), 0);
	for (size_t i = 0; i < o.nr; i++)
		if (o.f[i].live)
			CHECK_EQ_U64(pa_unpin(pool, o.f[i].page), 0);
	struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE, 9); /* sync always runs */
	CHECK(p != NULL);
	CHECK(vmstat(pool, "compact_success") >= 1);
	CHECK_EQ_U64(z->compact_defer_shift, 0);
	CHECK(z->compact_order_failed > 9);
	if (p)
		pa_free_pages(pool, p, 9);
	to_check_all(&o);
	to_finish(&o);
}

/* ---------------------------------------------------------------------- */
/* Orders above the pageblock                                              */
/* ---------------------------------------------------------------------- */

TEST(compact_above_pageblock_empties_the_cheapest_clean_regions)
{
	/*
	 * Eight regions of 2^max_order frames (512 MiB and max_order=14, or
	 * 256 MiB and 13 under sanitizers). Every frame an owned order-0 folio;
	 * one unmovable frame in regions 0, 2 and 4, a pinned folio in region
	 * 5; then every other frame freed. Each max_order request must empty
	 * one of the clean regions 1, 3, 6, 7, scanning only regions (not the
	 * zone), and all four must become allocatable.
	 */
	const unsigned order = test_scale() >= 1 ? 14 : 13;
	char line[160];
	snprintf(line, sizeof line, QUIET "mem=%uM max_order=%u backing=anon", 8u << (order - 8),
	         order);
	struct pa_pool *pool = test_boot(line);
	const uint64_t rsize = 1ull << order;
	struct towner o;
	to_init(&o, pool, 8 * rsize + 16);
	fill_owned(&o, 0);
	REQUIRE(usage(pool).free == 0);
	struct pa_page *kernel[3];
	static const unsigned dirty[3] = { 0, 2, 4 };
	for (int i = 0; i < 3; i++) {
		pa_pfn_t want = dirty[i] * rsize + rsize / 2 + 2;
		size_t slot = SIZE_MAX;
		for (size_t s = 0; s < o.nr && slot == SIZE_MAX; s++)
			if (pa_page_to_pfn(pool, o.f[s].page) == want)
				slot = s;
		REQUIRE(slot != SIZE_MAX);
		to_free(&o, slot);
		kernel[i] = pa_alloc_pages(pool, PA_GFP_KERNEL | PA_GFP_NOCOMPACT, 0);
		REQUIRE(kernel[i] && pa_page_to_pfn(pool, kernel[i]) == want);
	}
	size_t pinned = SIZE_MAX;
	for (size_t s = 0; s < o.nr && pinned == SIZE_MAX; s++)
		if (pa_page_to_pfn(pool, o.f[s].page) == 5 * rsize + 100)
			pinned = s;
	REQUIRE(pinned != SIZE_MAX);
	CHECK_EQ_U64(pa_pin(pool, o.f[pinned].page), 0);
	free_odd_at(&o, 0);
	uint64_t zone_frames = pool->zones[0].end_pfn - pool->zones[0].start_pfn;

	bool got_region[8] = { false };
	struct pa_page *blocks[8];
	size_t nb = 0;
	for (int k = 0; k < 4; k++) {
		uint64_t scanned = vmstat(pool, "compact_migrate_scanned");
		struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, order);
		CHECK_MSG(p != NULL, "order-%u allocation %d of 4 failed", order, k + 1);
		if (!p)
			break;
		blocks[nb++] = p;
		pa_pfn_t pfn = pa_page_to_pfn(pool, p);
		unsigned r = (unsigned)(pfn / rsize);
		CHECK_MSG(r == 1 || r == 3 || r == 6 || r == 7,
		          "order-%u block at pfn %" PRIu64
		          " (region %u) holds an unmovable or pinned frame",
		          order, pfn, r);
		CHECK(!got_region[r]);
		got_region[r] = true;
		uint64_t ds = vmstat(pool, "compact_migrate_scanned") - scanned;
		CHECK_MSG(ds <= 2 * rsize,
		          "an order-%u request scanned %" PRIu64 " frames (zone: %" PRIu64 ")",
		          order, ds, zone_frames);
	}
	/* No fifth: every other region holds a fixed frame. */
	CHECK(pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, order) == NULL);
	for (int i = 0; i < 3; i++)
		CHECK_EQ_U64(pa_page_to_pfn(pool, kernel[i]), dirty[i] * rsize + rsize / 2 + 2);
	CHECK_EQ_U64(to_pfn(&o, pinned), 5 * rsize + 100);
	CHECK_EQ_U64(folios_migrated(pool, 0), o.moved_order[0]);
	CHECK_EQ_U64(vmstat(pool, "compact_folios_split"), 0);
	to_check_all(&o);
	to_expect_clean(&o);
	VALIDATE(pool);
	for (size_t i = 0; i < nb; i++)
		pa_free_pages(pool, blocks[i], order);
	for (int i = 0; i < 3; i++)
		pa_free_pages(pool, kernel[i], 0);
	to_finish(&o);
}

TEST(compact_above_pageblock_fails_cleanly_when_every_region_is_fixed)
{
	struct pa_pool *pool = test_boot(QUIET "mem=64M max_order=12 backing=anon");
	struct towner o;
	to_init(&o, pool, 20000);
	fill_owned(&o, 0);
	/* Pin one folio in each of the four order-12 regions. */
	for (size_t s = 0; s < o.nr; s++)
		if (pa_page_to_pfn(pool, o.f[s].page) % 4096 == 1000)
			CHECK_EQ_U64(pa_pin(pool, o.f[s].page), 0);
	free_odd_at(&o, 0);
	struct pa_usage u0 = usage(pool);
	pa_pfn_t *before = snapshot_pfns(&o);
	CHECK(pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 12) == NULL);
	size_t moved = 0;
	for (size_t i = 0; i < o.nr; i++)
		moved += o.f[i].live && to_pfn(&o, i) != before[i];
	CHECK_EQ_U64(moved, 0); /* nothing worth moving */
	struct pa_usage u1 = usage(pool);
	CHECK_EQ_U64(u1.free, u0.free);
	CHECK_EQ_U64(u1.reserved, 0);
	to_check_all(&o);
	VALIDATE(pool);
	for (size_t s = 0; s < o.nr; s++)
		if (o.f[s].live && pa_page_to_pfn(pool, o.f[s].page) % 4096 == 1000)
			CHECK_EQ_U64(pa_unpin(pool, o.f[s].page), 0);
	/* Unpinned, the same request succeeds. */
	struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE, 12);
	CHECK(p != NULL);
	if (p)
		pa_free_pages(pool, p, 12);
	to_check_all(&o);
	to_free_all(&o);
	free(before);
	expect_all_free(pool);
	pa_shutdown(pool);
	to_destroy(&o);
}

/* ---------------------------------------------------------------------- */
/* The background compactor                                                */
/* ---------------------------------------------------------------------- */

TEST(kcompactd_thread_wakes_on_high_order_failure_and_compacts)
{
	struct pa_pool *pool = test_boot("mem=64M pcp_orders=none min_free_kbytes=0 backing=anon "
	                                 "compaction_proactiveness=0");
	struct towner o;
	to_init(&o, pool, 20000);
	fill_owned(&o, 0);
	free_odd_at(&o, 0);
	sleep_ms(20);
	CHECK_EQ_U64(vmstat(pool, "compact_daemon_wake"), 0);
	CHECK(pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOCOMPACT | PA_GFP_NOWARN, 9) == NULL);
	uint64_t wake = wait_vmstat_above(pool, "compact_daemon_wake", 0, 2000);
	CHECK_MSG(wake >= 1, "kcompactd did not wake within 2 s of an order-9 failure");
	uint64_t scanned = wait_vmstat_above(pool, "compact_daemon_migrate_scanned", 0, 2000);
	CHECK(scanned > 0);
	/* The daemon made an order-9 block: an allocation that may not compact gets it. */
	struct pa_page *p = NULL;
	for (int t = 0; t < 400 && !p; t++) {
		p = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOCOMPACT | PA_GFP_NOWARN, 9);
		if (!p)
			sleep_ms(5);
	}
	CHECK_MSG(p != NULL, "no order-9 block after kcompactd ran");
	CHECK_EQ_U64(vmstat(pool, "compact_stall"), 0);
	CHECK_EQ_U64(vmstat(pool, "compact_migrate_scanned"), 0); /* daemon work is counted apart */
	CHECK(vmstat(pool, "compact_daemon_free_scanned") > 0);
	if (p)
		pa_free_pages(pool, p, 9);
	to_check_all(&o);
	to_expect_clean(&o);
	to_finish(&o);
}

/*
 * pa_kcompactd_wake() asks a node's compactor for an order as a failure
 * there does (a replay passes the kernel's kcompactd wakes on): the next
 * pass compacts that node for it, once.
 */
TEST(kcompactd_wake_asks_for_an_order)
{
	struct pa_pool *pool = test_boot(QUIET "mem=256M numa=2 compaction_proactiveness=0");
	CHECK_EQ_U64(pa_kcompactd_wake(NULL, 0, 9), (uint64_t)-EINVAL);
	CHECK_EQ_U64(pa_kcompactd_wake(pool, -1, 9), (uint64_t)-EINVAL);
	CHECK_EQ_U64(pa_kcompactd_wake(pool, 2, 9), (uint64_t)-EINVAL);
	CHECK_EQ_U64(pa_kcompactd_wake(pool, 0, 0), (uint64_t)-EINVAL);
	CHECK_EQ_U64(pa_kcompactd_wake(pool, 0, pool_max_order(pool) + 1), (uint64_t)-EINVAL);
	struct towner o;
	to_init(&o, pool, 70000);
	fill_owned(&o, 0);
	free_odd_at(&o, 0);
	CHECK_EQ_U64(pa_kcompactd_wake(pool, 1, 9), 0);
	CHECK_EQ_U64(pa_kcompactd_run(pool, 0), 0); /* node 1 was asked, not node 0 */
	long moved = pa_kcompactd_run(pool, 1);
	CHECK_MSG(moved > 0, "node 1's pass after a wake moved %ld frames", moved);
	CHECK_EQ_U64(vmstat(pool, "compact_daemon_wake"), 1);
	CHECK_EQ_U64(pa_kcompactd_run(pool, 1), 0); /* answered */
	to_check_all(&o);
	to_expect_clean(&o);
	to_finish(&o);
}

TEST(kcompactd_manual_runs_only_when_called)
{
	struct pa_pool *pool = test_boot(QUIET "mem=256M numa=2 compaction_proactiveness=0");
	CHECK_EQ_U64(pa_kcompactd_run(pool, 2), (uint64_t)-EINVAL);
	CHECK_EQ_U64(pa_kcompactd_run(pool, -1), (uint64_t)-EINVAL);
	CHECK_EQ_U64(pa_kcompactd_run(NULL, 0), (uint64_t)-EINVAL);
	struct towner o;
	to_init(&o, pool, 70000);
	fill_owned(&o, 0);
	free_odd_at(&o, 0);
	CHECK_EQ_U64(pa_kcompactd_run(pool, 0), 0); /* nothing asked, not proactive */
	CHECK_EQ_U64(pa_kcompactd_run(pool, 1), 0);
	CHECK_EQ_U64(vmstat(pool, "compact_daemon_wake"), 0);
	/* A failure on this CPU's node records a wake; nobody acts on it until asked. */
	CHECK(pa_alloc_pages(pool,
	                     PA_GFP_MOVABLE | PA_GFP_NOCOMPACT | PA_GFP_NOWARN | PA_GFP_THISNODE,
	                     9) == NULL);
	sleep_ms(50);
	CHECK_EQ_U64(vmstat(pool, "compact_daemon_wake"), 0);
	CHECK_EQ_U64(vmstat(pool, "pgmigrate_success"), 0);
	long moved = pa_kcompactd_run(pool, 0) + pa_kcompactd_run(pool, 1);
	CHECK_MSG(moved > 0, "pa_kcompactd_run after a failure moved %ld frames", moved);
	CHECK_EQ_U64(vmstat(pool, "compact_daemon_wake"), 1);
	CHECK(vmstat(pool, "compact_daemon_migrate_scanned") > 0);
	CHECK_EQ_U64(vmstat(pool, "compact_migrate_scanned"), 0);
	CHECK_EQ_U64(vmstat(pool, "pgmigrate_success"), (uint64_t)moved);
	/* The wake was answered once. */
	CHECK_EQ_U64(pa_kcompactd_run(pool, 0) + pa_kcompactd_run(pool, 1), 0);
	CHECK_EQ_U64(vmstat(pool, "compact_daemon_wake"), 1);
	to_check_all(&o);
	to_expect_clean(&o);
	to_finish(&o);
}

TEST(kcompactd_proactive_compaction_by_proactiveness)
{
	/* 0: never; 100: until the fragmentation score is at most 5. */
	static const unsigned pro[] = { 0, 20, 100 };
	for (int k = 0; k < 3; k++) {
		char line[160];
		snprintf(line, sizeof line,
		         QUIET "mem=64M backing=anon compaction_proactiveness=%u", pro[k]);
		struct pa_pool *pool = test_boot(line);
		struct towner o;
		to_init(&o, pool, 20000);
		fill_owned(&o, 0);
		free_odd_at(&o, 0);
		uint64_t free0 = usage(pool).free;
		long moved = pa_kcompactd_run(pool, 0);
		uint64_t big = free_frames_from(pool, 9);
		uint64_t score = (free0 - big) * 100 / free0; /* extfrag at order 9 */
		fprintf(stderr, "  proactiveness %u: moved %ld, fragmentation %" PRIu64 "%%\n",
		        pro[k], moved, score);
		if (pro[k] == 0) {
			CHECK_EQ_U64(moved, 0);
			CHECK_EQ_U64(big, 0);
		} else {
			CHECK(moved > 0);
			CHECK_EQ_U64(vmstat(pool, "pgmigrate_success"), (uint64_t)moved);
			CHECK(vmstat(pool, "compact_daemon_migrate_scanned") > 0);
			CHECK_EQ_U64(vmstat(pool, "compact_daemon_wake"),
			             0); /* proactive, not woken */
			uint64_t low = pro[k] >= 95 ? 5 : 100 - pro[k];
			CHECK_MSG(score <= low + 1,
			          "proactiveness %u: fragmentation %" PRIu64 "%% above %" PRIu64
			          "%%",
			          pro[k], score, low);
		}
		to_check_all(&o);
		to_expect_clean(&o);
		to_free_all(&o);
		expect_all_free(pool);
		pa_shutdown(pool);
		to_destroy(&o);
	}
}

TEST(kcompactd_threads_stop_at_shutdown_quickly)
{
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int pools = 50;
	for (int i = 0; i < pools; i++) {
		struct pa_pool *pool = test_boot("mem=256M numa=2 compaction_proactiveness=100");
		if (i % 5 == 0) {
			/* Some with an owner and a pending wake. */
			struct towner o;
			to_init(&o, pool, 64);
			for (int k = 0; k < 32; k++)
				to_alloc(&o, 0, 0);
			compaction_wake(pool, 0, 9);
			compaction_wake(pool, 1, 9);
			to_free_all(&o);
			pa_shutdown(pool);
			to_destroy(&o);
			continue;
		}
		pa_shutdown(pool);
	}
	double s = seconds_since(&t0);
	fprintf(stderr, "  %d pools with kcompactd threads booted and shut down in %.3f s\n", pools,
	        s);
	CHECK_MSG(s < 5.0, "%d boot/shutdown cycles took %.3f s", pools, s);
}

TEST(kcompactd_thread_compacts_proactively_without_a_wake)
{
	struct pa_pool *pool = test_boot("mem=64M pcp_orders=none min_free_kbytes=0 backing=anon "
	                                 "compaction_proactiveness=100");
	struct towner o;
	to_init(&o, pool, 20000);
	fill_owned(&o, 0);
	free_odd_at(&o, 0);
	/* The check runs every 500 ms. */
	uint64_t scanned = wait_vmstat_above(pool, "compact_daemon_migrate_scanned", 0, 2000);
	CHECK_MSG(scanned > 0, "no proactive compaction within 2 s");
	uint64_t moved = wait_vmstat_above(pool, "pgmigrate_success", 0, 2000);
	CHECK(moved > 0);
	CHECK_EQ_U64(vmstat(pool, "compact_daemon_wake"), 0);
	pa_shutdown(pool); /* with the folios still allocated: the thread must stop first */
	to_destroy(&o);
}
