/* SPDX-License-Identifier: MIT */
/*
 * Per-CPU lists: one list per (order, PCP type) per CPU per zone,
 * for every order 0..max_order; the pcp_orders boot key and
 * "pcp/orders/<N>/enabled" choose which orders go through them.
 *
 * The tests pose as CPUs through the platform's cpu_id hook (a thread-local
 * value), so that "CPU 0" and "CPU 1" are whatever the test says, whichever
 * core the thread runs on. White-box where it must be: the list lock, the
 * per-order operation counters (allocs, frees) and the frame states come from
 * pcp.h and page.h.
 *
 * What is proven:
 * - an enabled order is served from and freed to the calling CPU's list (the
 *   buddy does not see a free; the frames count as reserved); a disabled order
 *   never lands on a list; pcp_orders=none uses none; 0-3,9 and an arbitrary
 *   high order (4 and 18 with max_order=18) go through the fast path;
 * - orders switched on and off while four posed CPUs allocate and free every
 *   order: validate passes throughout, and afterwards the pool is whole;
 * - drains lose nothing; per-order counts are exactly what was put there;
 * - with the CPU's list lock taken, allocation and free take the zone path and
 *   the lock's busy counters count them;
 * - batch, high_min and high_max follow Linux's formulas, high stays within
 *   its bounds, a free above high spills back to the buddy;
 * - pcp_rules=6.1: high fixed at the low watermark's share, spills that
 *   double while frees run on, a high-order free in such a run empties the
 *   lists, and allocations end the run;
 * - a refill hands out runs of consecutive frames (whole blocks cut up), and
 *   spills of blocks freed in any order leave the buddy whole;
 * - bad frees, init_on_free and PA_GFP_ZERO hold on the fast path;
 * - bad control writes fail and change nothing.
 *
 * Sizes scale with PA_TEST_SCALE; PA_TEST_SEED replays the random runs.
 */
#include "test.h"
#include "helpers.h"

#include "platform/platform.h"
#include "memmap.h"
#include "pageblock.h"
#include "pcp.h"
#include "zone.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#define MiB       (1ull << 20)
#define MAX_LISTS ((PA_MAX_ORDER_LIMIT + 1) * PA_NR_PCP_TYPES)
#define BI_LEN    8192

/* --- Posing as CPUs, a clock the test moves, captured reports ----------------- */

static __thread unsigned posed_cpu;
static _Atomic uint64_t fake_ns;
static _Atomic int report_lines;
static pthread_mutex_t report_mutex = PTHREAD_MUTEX_INITIALIZER;
static char last_report[512];

static unsigned posed_cpu_id(void *ctx)
{
	(void)ctx;
	return posed_cpu;
}

static uint64_t fake_now_ns(void *ctx)
{
	(void)ctx;
	return atomic_load(&fake_ns);
}

static void pcp_capture_report(void *ctx, const char *line)
{
	(void)ctx;
	pthread_mutex_lock(&report_mutex);
	snprintf(last_report, sizeof last_report, "%s", line);
	pthread_mutex_unlock(&report_mutex);
	atomic_fetch_add(&report_lines, 1);
}

static void pose(unsigned cpu)
{
	posed_cpu = cpu;
}

static struct pa_pool *boot_with(const char *line, bool fake_clock)
{
	struct pa_platform plat = { .cpu_id = posed_cpu_id, .report = pcp_capture_report };
	if (fake_clock) {
		atomic_store(&fake_ns, 1000000000ull);
		plat.now_ns = fake_now_ns;
	}
	struct pa_pool *pool = test_boot_on(line, &plat);
	atomic_store(&report_lines, 0);
	pose(0);
	return pool;
}

static struct pa_pool *pcp_boot(const char *line)
{
	return boot_with(line, false);
}

/* --- Reading the state -------------------------------------------------------- */

static const pa_gfp_t type_gfp[PA_NR_PCP_TYPES] = { PA_GFP_KERNEL, PA_GFP_MOVABLE,
	                                            PA_GFP_RECLAIMABLE };

static uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static unsigned scaled(double n, unsigned floor)
{
	double v = n * test_scale();
	return v < floor ? floor : (unsigned)v;
}

/* The zone a posed CPU's fast path allocates gfp from. */
static struct pa_zone *cpu_zone(struct pa_pool *pool, unsigned cpu, pa_gfp_t gfp)
{
	struct pa_zone *z = pool->cpu_pcp[cpu_pcp_slot(cpu, gfp)]->zone;
	REQUIRE(z);
	return z;
}

struct snap {
	struct pa_pcp_info info;
	uint64_t blocks[MAX_LISTS];
};

static void snap_of(struct pa_pool *pool, const struct pa_zone *z, unsigned cpu, struct snap *s)
{
	memset(s, 0, sizeof *s);
	REQUIRE(pa_pcp_info(pool, z->node, z->type, cpu, &s->info, s->blocks) == 0);
}

/*
 * nr movable blocks of order allocated on CPU 1, to be freed on CPU 0, whose
 * lists they do not touch; the caller frees the array. Returns posing as CPU 0.
 */
static struct pa_page **blocks_from_cpu1(struct pa_pool *pool, uint64_t nr, unsigned order)
{
	struct pa_page **blk = malloc(nr * sizeof *blk);
	REQUIRE(blk);
	pose(1);
	for (uint64_t i = 0; i < nr; i++)
		REQUIRE((blk[i] = pa_alloc_pages(pool, PA_GFP_MOVABLE, order)));
	pose(0);
	return blk;
}

static bool snap_equal(const struct pa_pool *pool, const struct snap *a, const struct snap *b)
{
	return !memcmp(&a->info, &b->info, sizeof a->info) &&
	       !memcmp(a->blocks, b->blocks,
	               (pool->cfg.max_order + 1) * PA_NR_PCP_TYPES * sizeof a->blocks[0]);
}

static uint64_t snap_frames(const struct pa_pool *pool, const struct snap *s)
{
	uint64_t n = 0;
	for (unsigned o = 0; o <= pool->cfg.max_order; o++)
		for (unsigned t = 0; t < PA_NR_PCP_TYPES; t++)
			n += s->blocks[pcp_index(o, t)] << o;
	return n;
}

static uint64_t snap_order_blocks(const struct snap *s, unsigned order)
{
	uint64_t n = 0;
	for (unsigned t = 0; t < PA_NR_PCP_TYPES; t++)
		n += s->blocks[pcp_index(order, t)];
	return n;
}

/* Frames on every list of every CPU and zone, as pa_pcp_info reads them. */
static uint64_t all_list_frames(struct pa_pool *pool)
{
	uint64_t n = 0;
	struct snap s;
	for (unsigned i = 0; i < pool->nr_zones; i++)
		for (unsigned c = 0; c < pool->cfg.nr_cpus; c++) {
			snap_of(pool, &pool->zones[i], c, &s);
			CHECK_EQ_U64(snap_frames(pool, &s), s.info.count);
			n += s.info.count;
		}
	return n;
}

/* Blocks of order on any CPU's list in any zone. */
static uint64_t all_list_blocks_of_order(struct pa_pool *pool, unsigned order)
{
	uint64_t n = 0;
	struct snap s;
	for (unsigned i = 0; i < pool->nr_zones; i++)
		for (unsigned c = 0; c < pool->cfg.nr_cpus; c++) {
			snap_of(pool, &pool->zones[i], c, &s);
			n += snap_order_blocks(&s, order);
		}
	return n;
}

static void buddyinfo(struct pa_pool *pool, char *buf, size_t len)
{
	int n = pa_report(pool, PA_REPORT_BUDDYINFO, 0, buf, len);
	REQUIRE(n > 0 && (size_t)n < len);
}

/* Blocks a CPU allocated and freed through its lists, per order (single-threaded reads). */
static uint64_t ops_alloc(const struct pa_zone *z, unsigned cpu, unsigned order)
{
	return z->pcp[cpu]->orders[order].allocs;
}

static uint64_t ops_free(const struct pa_zone *z, unsigned cpu, unsigned order)
{
	return z->pcp[cpu]->orders[order].frees;
}

/* The list a free block of pfn goes to: its pageblock's type (HIGHATOMIC and CMA wait on MOVABLE). */
static unsigned list_type_of(const struct pa_pool *pool, pa_pfn_t pfn)
{
	unsigned mt = pageblock_mt(pool, pfn);
	return mt < PA_NR_PCP_TYPES ? mt : PA_MT_MOVABLE;
}

/* The buddy's free frames of a zone, read under its lock (callable with a list lock held). */
static uint64_t zone_free_frames(struct pa_zone *z)
{
	pa_lock(&z->lock, SITE_ADMIN);
	uint64_t f = z->free_pages;
	pa_unlock(&z->lock);
	return f;
}

/* "pcp/orders/<N>/enabled" read back: 0, 1, or -errno. */
static int ctl_order_enabled(struct pa_pool *pool, unsigned order)
{
	char path[64], buf[32];
	snprintf(path, sizeof path, "pcp/orders/%u/enabled", order);
	int rc = pa_ctl_read(pool, path, buf, sizeof buf);
	if (rc < 0)
		return rc;
	return atoi(buf);
}

static bool order_in_mask(struct pa_pool *pool, unsigned order)
{
	return (atomic_load(&pool->pcp_orders) >> order) & 1;
}

/* Drain, then every frame must be free and the buddy must be as at boot. */
static void expect_whole(struct pa_pool *pool, const char *fresh)
{
	expect_all_free(pool); /* drained, valid, every frame free */
	CHECK_EQ_U64(all_list_frames(pool), 0);
	char now[BI_LEN];
	buddyinfo(pool, now, sizeof now);
	CHECK_MSG(!strcmp(now, fresh), "buddyinfo after the drain\n%s!= the fresh boot's\n%s", now,
	          fresh);
}

/* --- Enabled and disabled orders ------------------------------------------------ */

TEST(pcp_enabled_orders_are_served_from_and_freed_to_the_cpu_list)
{
	struct pa_pool *pool = pcp_boot("mem=256M max_order=10 nr_cpus=2");
	/* high fixed at managed / 8 / CPUs = 4096 frames: no free here spills. */
	REQUIRE(pcp_set_high_fraction(pool, 8) == 0);
	char fresh[BI_LEN];
	buddyinfo(pool, fresh, sizeof fresh);
	static const unsigned orders[] = { 0, 1, 2, 3,
		                           9 }; /* the default: 0-3 and the huge order */
	for (size_t i = 0; i < sizeof orders / sizeof orders[0]; i++) {
		unsigned o = orders[i];
		CHECK_MSG(ctl_order_enabled(pool, o) == 1, "order %u is not on by default", o);
		for (unsigned t = 0; t < PA_NR_PCP_TYPES; t++) {
			pose(0);
			struct pa_zone *z = cpu_zone(pool, 0, type_gfp[t]);
			struct snap s1, s2, s3;
			char b1[BI_LEN], b2[BI_LEN], b3[BI_LEN];
			struct pa_usage u0 = usage(pool);
			uint64_t pg0 = vmstat(pool, "pgalloc_dma32"), pf0 = vmstat(pool, "pgfree");
			uint64_t a0 = ops_alloc(z, 0, o), f0 = ops_free(z, 0, o);

			struct pa_page *p = pa_alloc_pages(pool, type_gfp[t], o);
			REQUIRE(p);
			pa_pfn_t pfn = pa_page_to_pfn(pool, p);
			CHECK_MSG(ops_alloc(z, 0, o) == a0 + 1,
			          "order %u type %u: not served by CPU 0's list", o, t);
			/* A huge block waits on its list only while the list is empty: no spare. */
			if (o >= pool->cfg.pageblock_order)
				pcp_drain_cpu(z, 0, 1ull << o);
			CHECK_EQ_U64(vmstat(pool, "pgalloc_dma32") - pg0, 1ull << o);
			snap_of(pool, z, 0, &s1);
			struct pa_usage u1 = usage(pool);
			CHECK_EQ_U64(u1.allocated, u0.allocated + (1ull << o));
			CHECK_EQ_U64(u1.reserved, all_list_frames(pool));
			CHECK_EQ_U64(u1.free + u1.allocated + u1.reserved, u1.managed);
			buddyinfo(pool, b1, sizeof b1);

			pa_free_pages(pool, p, o);
			snap_of(pool, z, 0, &s2);
			buddyinfo(pool, b2, sizeof b2);
			CHECK_MSG(!strcmp(b1, b2),
			          "order %u type %u: a free changed buddyinfo\n%s->\n%s", o, t, b1,
			          b2);
			CHECK_EQ_U64(s2.info.count, s1.info.count + (1ull << o));
			unsigned lt = list_type_of(pool, pfn);
			CHECK_EQ_U64(s2.blocks[pcp_index(o, lt)], s1.blocks[pcp_index(o, lt)] + 1);
			CHECK_EQ_U64(page_state(pfn_page(pool, pfn)), PS_PCP);
			CHECK_EQ_U64(ops_free(z, 0, o), f0 + 1);
			CHECK_EQ_U64(vmstat(pool, "pgfree") - pf0, 1ull << o);
			struct pa_usage u2 = usage(pool);
			CHECK_EQ_U64(u2.free, u1.free);
			CHECK_EQ_U64(u2.allocated, u0.allocated);
			CHECK_EQ_U64(u2.reserved, u1.reserved + (1ull << o));

			/* The next allocation of that type takes the hottest block back; no buddy work. */
			if (lt == t) {
				struct pa_page *q = pa_alloc_pages(pool, type_gfp[t], o);
				REQUIRE(q);
				CHECK_EQ_U64(pa_page_to_pfn(pool, q), pfn);
				buddyinfo(pool, b3, sizeof b3);
				CHECK_MSG(!strcmp(b2, b3), "order %u: a list hit changed buddyinfo",
				          o);
				snap_of(pool, z, 0, &s3);
				CHECK_EQ_U64(s3.info.count, s2.info.count - (1ull << o));
				pa_free_pages(pool, q, o);
			}
			VALIDATE(pool);
		}
	}
	expect_whole(pool, fresh);
	pa_shutdown(pool);
}

/*
 * The order-0 fast path takes its list by the gfp type bits: both set (which
 * gfp_migratetype() makes movable) and a one-frame folio (PA_GFP_COMP) leave
 * it for the full fast path, and are still served from the movable list.
 */
TEST(pcp_order0_both_type_bits_and_folios_are_served_from_the_movable_list)
{
	struct pa_pool *pool = pcp_boot("mem=256M max_order=10 nr_cpus=2");
	REQUIRE(pcp_set_high_fraction(pool, 8) == 0);
	char fresh[BI_LEN];
	buddyinfo(pool, fresh, sizeof fresh);
	pose(0);
	static const pa_gfp_t gfps[] = { PA_GFP_MOVABLE | PA_GFP_RECLAIMABLE,
		                         PA_GFP_MOVABLE | PA_GFP_COMP,
		                         PA_GFP_MOVABLE | PA_GFP_RECLAIMABLE | PA_GFP_COMP };
	for (size_t i = 0; i < sizeof gfps / sizeof gfps[0]; i++) {
		struct pa_zone *z = cpu_zone(pool, 0, gfps[i]);
		struct pa_page *warm = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0);
		REQUIRE(warm);
		pa_pfn_t pfn = pa_page_to_pfn(pool, warm);
		pa_free_pages(pool, warm, 0); /* on top of CPU 0's movable order-0 list */
		struct snap s0, s1;
		snap_of(pool, z, 0, &s0);
		uint64_t a0 = ops_alloc(z, 0, 0);
		struct pa_page *p = pa_alloc_pages(pool, gfps[i], 0);
		REQUIRE(p);
		CHECK_MSG(pa_page_to_pfn(pool, p) == pfn, "gfp %#x: not the movable list's top",
		          gfps[i]);
		CHECK_EQ_U64(ops_alloc(z, 0, 0), a0 + 1);
		snap_of(pool, z, 0, &s1);
		CHECK_EQ_U64(s1.blocks[pcp_index(0, PA_MT_MOVABLE)],
		             s0.blocks[pcp_index(0, PA_MT_MOVABLE)] - 1);
		CHECK_EQ_U64(s1.info.count, s0.info.count - 1); /* no refill */
		CHECK_EQ_U64(page_mt(p), PA_MT_MOVABLE);
		CHECK_EQ_U64(!!(page_flags(p) & PF_COMP), !!(gfps[i] & PA_GFP_COMP));
		CHECK_EQ_U64(pa_folio_order(pool, p), 0);
		pa_free_pages(pool, p, 0);
		VALIDATE(pool);
	}
	expect_whole(pool, fresh);
	pa_shutdown(pool);
}

TEST(pcp_disabled_orders_never_land_on_the_lists)
{
	struct pa_pool *pool = pcp_boot("mem=256M max_order=10 nr_cpus=2");
	char fresh[BI_LEN], b0[BI_LEN], b1[BI_LEN];
	buddyinfo(pool, fresh, sizeof fresh);
	for (unsigned o = 0; o <= 10; o++)
		CHECK_MSG(ctl_order_enabled(pool, o) == (o <= 3 || o == 9), "order %u enabled: %d",
		          o, ctl_order_enabled(pool, o));
	static const unsigned off[] = { 4, 5, 6, 7, 8, 10 };
	for (unsigned cpu = 0; cpu < 2; cpu++) {
		pose(cpu);
		for (size_t i = 0; i < sizeof off / sizeof off[0]; i++) {
			for (unsigned t = 0; t < PA_NR_PCP_TYPES; t++) {
				unsigned o = off[i];
				buddyinfo(pool, b0, sizeof b0);
				struct pa_page *p = pa_alloc_pages(pool, type_gfp[t], o);
				REQUIRE(p);
				CHECK_EQ_U64(all_list_frames(pool), 0);
				pa_free_pages(pool, p, o);
				CHECK_EQ_U64(all_list_frames(pool), 0);
				buddyinfo(pool, b1, sizeof b1);
				CHECK_MSG(
				        !strcmp(b0, b1),
				        "order %u: the free did not go straight back to the buddy",
				        o);
				struct pa_zone *z = cpu_zone(pool, cpu, type_gfp[t]);
				CHECK_EQ_U64(ops_alloc(z, cpu, o), 0);
				CHECK_EQ_U64(ops_free(z, cpu, o), 0);
			}
		}
	}
	/* Order 0 on both CPUs' lists, then switched off: drained, and nothing lands after. */
	for (unsigned cpu = 0; cpu < 2; cpu++) {
		pose(cpu);
		struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0);
		REQUIRE(p);
		pa_free_pages(pool, p, 0);
	}
	CHECK(all_list_blocks_of_order(pool, 0) >= 2);
	pcp_set_order(pool, 0, false);
	CHECK_EQ_U64(ctl_order_enabled(pool, 0), 0);
	CHECK_EQ_U64(all_list_blocks_of_order(pool, 0), 0);
	VALIDATE(pool);
	for (unsigned cpu = 0; cpu < 2; cpu++) {
		pose(cpu);
		buddyinfo(pool, b0, sizeof b0);
		struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0);
		REQUIRE(p);
		pa_free_pages(pool, p, 0);
		buddyinfo(pool, b1, sizeof b1);
		CHECK_MSG(!strcmp(b0, b1),
		          "order 0 switched off: the free did not go back to the buddy");
		CHECK_EQ_U64(all_list_blocks_of_order(pool, 0), 0);
	}
	/* On again: it lands again. */
	pcp_set_order(pool, 0, true);
	pose(0);
	struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0);
	REQUIRE(p);
	pa_free_pages(pool, p, 0);
	CHECK(all_list_blocks_of_order(pool, 0) >= 1);
	expect_whole(pool, fresh);
	pa_shutdown(pool);
}

TEST(pcp_orders_none_boots_with_no_lists_used)
{
	struct pa_pool *pool = pcp_boot("mem=256M max_order=10 nr_cpus=2 pcp_orders=none");
	CHECK_EQ_U64(atomic_load(&pool->pcp_orders), 0);
	for (unsigned o = 0; o <= 10; o++)
		CHECK_EQ_U64(ctl_order_enabled(pool, o), 0);
	char fresh[BI_LEN], now[BI_LEN];
	buddyinfo(pool, fresh, sizeof fresh);
	struct pa_page *held[100];
	for (unsigned cpu = 0; cpu < 2; cpu++) {
		pose(cpu);
		for (unsigned o = 0; o <= 10; o++) {
			for (unsigned t = 0; t < PA_NR_PCP_TYPES; t++) {
				struct pa_page *p = pa_alloc_pages(pool, type_gfp[t], o);
				REQUIRE(p);
				CHECK_EQ_U64(all_list_frames(pool), 0);
				pa_free_pages(pool, p, o);
				buddyinfo(pool, now, sizeof now);
				CHECK_MSG(!strcmp(now, fresh),
				          "pcp_orders=none: order %u did not merge back at once",
				          o);
			}
		}
		for (unsigned i = 0; i < 100; i++) {
			held[i] = pa_alloc_pages(pool, type_gfp[i % 3], 0);
			REQUIRE(held[i]);
		}
		for (unsigned i = 0; i < 100; i++)
			pa_free_pages(pool, held[i], 0);
		CHECK_EQ_U64(usage(pool).reserved, 0);
	}
	for (unsigned i = 0; i < pool->nr_zones; i++)
		for (unsigned c = 0; c < 2; c++)
			for (unsigned o = 0; o <= 10; o++)
				CHECK(ops_alloc(&pool->zones[i], c, o) == 0 &&
				      ops_free(&pool->zones[i], c, o) == 0);
	expect_whole(pool, fresh);
	pa_shutdown(pool);

	/* An order above max_order in the key is refused at boot, naming the key. */
	char err[256] = "";
	pool = NULL;
	CHECK_EQ_U64(pa_boot("mem=64M max_order=8 pcp_orders=0-3,9", NULL, &pool, err, sizeof err),
	             -EINVAL);
	CHECK(pool == NULL);
	CHECK_MSG(strstr(err, "pcp_orders") != NULL, "boot error \"%s\" does not name pcp_orders",
	          err);
}

/*
 * Two allocations of order on CPU 0 after a drain: the first refills the list
 * and leaves a spare, the second is a list hit that leaves the buddy alone.
 * Both frees are counted, and the list stays within high.
 */
static void check_fast_path(struct pa_pool *pool, unsigned order)
{
	pose(0);
	pa_drain_all(pool);
	struct pa_zone *z = cpu_zone(pool, 0, PA_GFP_MOVABLE);
	uint64_t a0 = ops_alloc(z, 0, order);
	struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE, order);
	REQUIRE(p);
	struct snap s1, s2, s3;
	snap_of(pool, z, 0, &s1);
	CHECK_MSG(s1.blocks[pcp_index(order, PA_MT_MOVABLE)] >= 1,
	          "order %u: the refill left no spare block", order);
	char b1[BI_LEN], b2[BI_LEN];
	buddyinfo(pool, b1, sizeof b1);
	struct pa_page *q = pa_alloc_pages(pool, PA_GFP_MOVABLE, order);
	REQUIRE(q);
	buddyinfo(pool, b2, sizeof b2);
	CHECK_MSG(!strcmp(b1, b2), "order %u: the second allocation went to the buddy", order);
	CHECK_EQ_U64(ops_alloc(z, 0, order), a0 + 2);
	snap_of(pool, z, 0, &s2);
	CHECK_EQ_U64(s2.blocks[pcp_index(order, PA_MT_MOVABLE)],
	             s1.blocks[pcp_index(order, PA_MT_MOVABLE)] - 1);
	/* Counted as frees however they go: a block over a batch that would pass high goes
	 * straight to the buddy, as a spill would give back just it. */
	uint64_t st0[PA_NR_ZONE_STATS], st1[PA_NR_ZONE_STATS];
	zone_fold_stats(z, st0, NULL);
	pa_free_pages(pool, q, order);
	pa_free_pages(pool, p, order);
	zone_fold_stats(z, st1, NULL);
	CHECK_EQ_U64(st1[PA_ZS_FREE_CALLS], st0[PA_ZS_FREE_CALLS] + 2);
	CHECK_EQ_U64(st1[PA_ZS_PGFREE], st0[PA_ZS_PGFREE] + (2ull << order));
	snap_of(pool, z, 0, &s3);
	CHECK_MSG(s3.info.count <= s3.info.high + (1ull << order),
	          "order %u: %" PRIu64 " frames on the list, high %" PRIu64, order, s3.info.count,
	          s3.info.high);
	VALIDATE(pool);
}

TEST(pcp_orders_0_to_3_and_9_go_through_the_fast_path)
{
	struct pa_pool *pool = pcp_boot("mem=256M max_order=10 nr_cpus=2 pcp_orders=0-3,9");
	CHECK_EQ_U64(atomic_load(&pool->pcp_orders), 0x20f);
	char fresh[BI_LEN];
	buddyinfo(pool, fresh, sizeof fresh);
	for (unsigned o = 0; o <= 10; o++) {
		if (order_in_mask(pool, o)) {
			check_fast_path(pool, o);
			continue;
		}
		struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE, o);
		REQUIRE(p);
		pa_free_pages(pool, p, o);
		CHECK_EQ_U64(all_list_blocks_of_order(pool, o), 0);
	}
	expect_whole(pool, fresh);
	pa_shutdown(pool);
}

TEST(pcp_arbitrary_high_orders_go_through_the_fast_path)
{
	/* Order 18 is 1 GiB: two of them fill half the pool, one as the refill's spare. */
	struct pa_pool *pool = pcp_boot("mem=4G max_order=18 nr_cpus=2 pcp_orders=4,18");
	CHECK_EQ_U64(atomic_load(&pool->pcp_orders), (1ull << 4) | (1ull << 18));
	CHECK_EQ_U64(ctl_order_enabled(pool, 4), 1);
	CHECK_EQ_U64(ctl_order_enabled(pool, 18), 1);
	CHECK_EQ_U64(ctl_order_enabled(pool, 9), 0);
	CHECK_EQ_U64(ctl_order_enabled(pool, 0), 0);
	char fresh[BI_LEN];
	buddyinfo(pool, fresh, sizeof fresh);
	check_fast_path(pool, 4);
	check_fast_path(pool, 18);
	static const unsigned off[] = { 0, 3, 9, 17 };
	for (size_t i = 0; i < sizeof off / sizeof off[0]; i++) {
		struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE, off[i]);
		REQUIRE(p);
		pa_free_pages(pool, p, off[i]);
		CHECK_EQ_U64(all_list_blocks_of_order(pool, off[i]), 0);
	}
	expect_whole(pool, fresh);
	pa_shutdown(pool);
}

/* --- Switching orders while CPUs allocate and free ------------------------------ */

#define WORKER_HELD 64

struct worker {
	pthread_t thread;
	struct pa_pool *pool;
	unsigned cpu;
	unsigned ops;
	uint64_t seed;
	_Atomic unsigned *done;
	_Atomic int *go;
	_Atomic int *stop;          /* NULL: run ops operations; else also until it is set */
	uint64_t allocated, failed; /* read after join */
};

/* Random allocations and frees of every order and type; frees everything before it ends. */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct pa_pool *pool = w->pool;
	unsigned max_order = pool->cfg.max_order;
	struct {
		struct pa_page *p;
		unsigned order;
	} held[WORKER_HELD];
	unsigned n = 0;
	uint64_t x = w->seed | 1;
	pose(w->cpu);
	while (!atomic_load(w->go))
		sched_yield();
	for (unsigned i = 0; i < w->ops || (w->stop && !atomic_load(w->stop)); i++) {
		uint64_t r = rnd(&x);
		if (n == WORKER_HELD || (n && (r & 1))) {
			unsigned k = (unsigned)((r >> 8) % n);
			pa_free_pages(pool, held[k].p, held[k].order);
			held[k] = held[--n];
			continue;
		}
		unsigned order = (r >> 16) % 4 ? (unsigned)((r >> 20) % 4) :
		                                 (unsigned)((r >> 20) % (max_order + 1));
		pa_gfp_t gfp = type_gfp[(r >> 32) % 3] | PA_GFP_NOWARN | PA_GFP_NOCOMPACT;
		if ((r >> 40) % 8 == 0)
			gfp |= PA_GFP_COMP;
		if ((r >> 44) % 16 == 0)
			gfp |= PA_GFP_ZERO;
		if ((r >> 48) % 32 == 0) {
			struct pa_page *bulk[8];
			unsigned want = 1 + (unsigned)((r >> 53) % 8);
			if (want > WORKER_HELD - n)
				want = WORKER_HELD - n;
			unsigned got = pa_alloc_pages_bulk(pool, gfp, order, want, bulk);
			for (unsigned j = 0; j < got; j++) {
				held[n].p = bulk[j];
				held[n++].order = order;
			}
			w->allocated += got;
			w->failed += want - got;
			continue;
		}
		struct pa_page *p = pa_alloc_pages(pool, gfp, order);
		if (!p) {
			w->failed++;
			continue;
		}
		held[n].p = p;
		held[n++].order = order;
		w->allocated++;
	}
	while (n) {
		n--;
		pa_free_pages(pool, held[n].p, held[n].order);
	}
	atomic_fetch_add(w->done, 1);
	return NULL;
}

static void start_workers(struct worker *w, unsigned nr, struct pa_pool *pool, const unsigned *cpus,
                          unsigned ops, uint64_t seed, _Atomic unsigned *done, _Atomic int *go,
                          _Atomic int *stop)
{
	for (unsigned i = 0; i < nr; i++) {
		w[i] = (struct worker){ .pool = pool,
			                .cpu = cpus[i],
			                .ops = ops,
			                .seed = seed + 7919 * (i + 1),
			                .done = done,
			                .go = go,
			                .stop = stop };
		REQUIRE(pthread_create(&w[i].thread, NULL, worker_main, &w[i]) == 0);
	}
}

TEST(pcp_orders_switch_on_and_off_while_four_cpus_allocate_and_free)
{
	struct pa_pool *pool = pcp_boot("mem=128M max_order=10 nr_cpus=4");
	char fresh[BI_LEN];
	buddyinfo(pool, fresh, sizeof fresh);
	uint64_t seed = test_seed();
	printf("  pcp switch seed %" PRIu64 " (PA_TEST_SEED replays)\n", seed);
	enum { NR = 4 };
	static const unsigned cpus[NR] = { 0, 1, 2, 3 };
	struct worker w[NR];
	_Atomic unsigned done = 0;
	_Atomic int go = 0, stop = 0;
	/* The workers run at least their operations and until the switcher has done its part. */
	start_workers(w, NR, pool, cpus, scaled(20000, 500), seed, &done, &go, &stop);
	atomic_store(&go, 1);

	uint64_t x = seed | 1;
	unsigned switches = 0, ctl_switches = 0, validations = 0, nr_switches = scaled(3000, 200);
	bool failed = false;
	for (unsigned iter = 0; iter < nr_switches && !failed; iter++) {
		uint64_t r = rnd(&x);
		unsigned o = (unsigned)(r % (pool->cfg.max_order + 1));
		bool on = (r >> 8) & 1;
		if ((r >> 9) & 1) {
			char path[64];
			snprintf(path, sizeof path, "pcp/orders/%u/enabled", o);
			int rc = pa_ctl_write(pool, path, on ? "1" : "0");
			CHECK_MSG(rc == 0, "pa_ctl_write(%s, %d) = %d", path, on, rc);
			CHECK_EQ_U64(ctl_order_enabled(pool, o), on);
			ctl_switches++;
		} else {
			pcp_set_order(pool, o, on);
			CHECK_EQ_U64(order_in_mask(pool, o), on);
		}
		switches++;
		pose((unsigned)(r >> 12) % NR); /* drain_local below drains a working CPU's lists */
		switch (iter % 8) {
		case 1:
			pa_drain_all(pool);
			break;
		case 2:
			pa_drain_local(pool);
			break;
		case 3:
			CHECK_EQ_U64(pcp_set_high_fraction(pool, (r >> 16) & 1 ? 8 : 0), 0);
			break;
		case 4: {
			char err[512];
			int rc = pa_validate(pool, err, sizeof err);
			CHECK_MSG(rc == 0, "pa_validate during the run: %s", err);
			failed = rc != 0;
			validations++;
			break;
		}
		case 5: {
			struct pa_usage u = usage(pool);
			CHECK_EQ_U64(u.free + u.allocated + u.reserved, u.managed);
			struct pa_pcp_info info;
			CHECK(pa_pcp_info(pool, 0, PA_ZONE_DMA32, (unsigned)(r >> 20) % NR, &info,
			                  NULL) == 0);
			CHECK_MSG(info.high >= info.high_min && info.high <= info.high_max,
			          "during the run: high %" PRIu64 " outside [%" PRIu64 ", %" PRIu64
			          "], %" PRIu64 " frames listed",
			          info.high, info.high_min, info.high_max, info.count);
			break;
		}
		case 6:
			CHECK(pa_report(pool, PA_REPORT_ZONEINFO, 0, NULL, 0) > 0);
			break;
		default:
			break;
		}
		sched_yield();
	}
	atomic_store(&stop, 1);
	uint64_t allocated = 0, fails = 0;
	for (unsigned i = 0; i < NR; i++) {
		pthread_join(w[i].thread, NULL);
		allocated += w[i].allocated;
		fails += w[i].failed;
	}
	printf("  %u switches (%u by ctl), %u validations, %" PRIu64 " allocations, %" PRIu64
	       " failed\n",
	       switches, ctl_switches, validations, allocated, fails);
	CHECK(allocated > 0);
	CHECK(switches > 0);
	expect_whole(pool, fresh);
	pa_shutdown(pool);
}

/* A thread that moved shares a CPU id with another: the busy list lock sends one to the zone. */
TEST(pcp_threads_sharing_a_cpu_id_lose_nothing)
{
	struct pa_pool *pool = pcp_boot("mem=64M max_order=10 nr_cpus=2");
	char fresh[BI_LEN];
	buddyinfo(pool, fresh, sizeof fresh);
	enum { NR = 3 };
	static const unsigned cpus[NR] = { 0, 0, 0 };
	struct worker w[NR];
	_Atomic unsigned done = 0;
	_Atomic int go = 0;
	start_workers(w, NR, pool, cpus, scaled(20000, 500), test_seed(), &done, &go, NULL);
	atomic_store(&go, 1);
	for (unsigned i = 0; i < NR; i++)
		pthread_join(w[i].thread, NULL);
	struct pa_zone *z = cpu_zone(pool, 0, PA_GFP_MOVABLE);
	printf("  CPU 0's list lock found busy %" PRIu64 " times on allocation, %" PRIu64
	       " on free\n",
	       (uint64_t)atomic_load(&z->pcp[0]->lock.busy[SITE_PCP_ALLOC]),
	       (uint64_t)atomic_load(&z->pcp[0]->lock.busy[SITE_PCP_FREE]));
	VALIDATE(pool);
	expect_whole(pool, fresh);
	pa_shutdown(pool);
}

/*
 * A thread that found order 2 enabled in pa_alloc_pages() and reaches its
 * list after the order was switched off (and drained) must not leave blocks
 * of the disabled order behind on the list. Reproduced by taking the list's
 * lock and refilling as that thread would, right after pcp_set_order(off)
 * returns.
 */
TEST(pcp_alloc_racing_a_switch_off_leaves_nothing_on_the_disabled_list)
{
	struct pa_pool *pool = pcp_boot("mem=256M max_order=10 nr_cpus=2");
	char fresh[BI_LEN];
	buddyinfo(pool, fresh, sizeof fresh);
	pose(0);
	struct pa_zone *z = cpu_zone(pool, 0, PA_GFP_MOVABLE);
	pcp_set_order(pool, 2, false);
	REQUIRE(pcp_trylock(pool, z->pcp[0], 0));
	struct pa_page *p = pcp_take(pool, z->pcp[0], 2, PA_MT_MOVABLE, PA_GFP_MOVABLE);
	if (p)
		pa_spin_unlock(&z->pcp[0]->lock);
	else
		p = pcp_refill_unlock(z, z->pcp[0], 2, PA_MT_MOVABLE, PA_GFP_MOVABLE, 0);
	uint64_t left = all_list_blocks_of_order(pool, 2);
	CHECK_MSG(left == 0,
	          "order 2 is off, yet %" PRIu64
	          " order-2 blocks sit on CPU 0's list after a racing allocation",
	          left);
	VALIDATE(pool);
	if (p)
		pa_free_pages(pool, p, 2);
	expect_whole(pool, fresh);
	pa_shutdown(pool);
}

/* --- Drains and counts ------------------------------------------------------------ */

/* Allocate three blocks of each order in orders and each type on cpu, then free them there. */
static void fill_lists(struct pa_pool *pool, unsigned cpu, const unsigned *orders, size_t nr_orders)
{
	struct pa_page *held[64];
	unsigned order[64], n = 0;
	pose(cpu);
	for (size_t i = 0; i < nr_orders; i++)
		for (unsigned t = 0; t < PA_NR_PCP_TYPES; t++)
			for (unsigned k = 0; k < 3 && n < 64; k++) {
				held[n] = pa_alloc_pages(pool, type_gfp[t], orders[i]);
				REQUIRE(held[n]);
				order[n++] = orders[i];
			}
	while (n) {
		n--;
		pa_free_pages(pool, held[n], order[n]);
	}
}

TEST(pcp_drains_give_back_every_block)
{
	/* Two nodes (CPUs 0-1 on node 0, 2-3 on node 1), each with DMA32 and Movable zones. */
	struct pa_pool *pool = pcp_boot("mem=512M numa=2 movablecore=25% max_order=10 nr_cpus=4");
	REQUIRE(pool->nr_zones == 4);
	char fresh[BI_LEN], now[BI_LEN];
	buddyinfo(pool, fresh, sizeof fresh);
	static const unsigned orders[] = { 0, 1, 2, 3, 9 };
	for (unsigned cpu = 0; cpu < 4; cpu++)
		fill_lists(pool, cpu, orders, 5);
	unsigned nz = pool->nr_zones;
	struct snap *before = calloc(nz * 4, sizeof *before),
	            *after = calloc(nz * 4, sizeof *after);
	REQUIRE(before && after);
	uint64_t cpu_frames[4] = { 0 }, total = 0;
	for (unsigned i = 0; i < nz; i++)
		for (unsigned c = 0; c < 4; c++) {
			snap_of(pool, &pool->zones[i], c, &before[i * 4 + c]);
			cpu_frames[c] += before[i * 4 + c].info.count;
			total += before[i * 4 + c].info.count;
		}
	for (unsigned c = 0; c < 4; c++)
		CHECK_MSG(cpu_frames[c] > 0, "CPU %u holds nothing after its frees", c);
	struct pa_usage u0 = usage(pool);
	CHECK_EQ_U64(u0.reserved, total);
	CHECK_EQ_U64(u0.allocated, 0);
	VALIDATE(pool);

	/* CPU 2 drains its own lists in every zone; nobody else's change. */
	pose(2);
	pa_drain_local(pool);
	for (unsigned i = 0; i < nz; i++)
		for (unsigned c = 0; c < 4; c++) {
			struct snap *s = &after[i * 4 + c];
			snap_of(pool, &pool->zones[i], c, s);
			if (c == 2) {
				CHECK_EQ_U64(s->info.count, 0);
				CHECK_EQ_U64(snap_frames(pool, s), 0);
			} else {
				CHECK_MSG(snap_equal(pool, s, &before[i * 4 + c]),
				          "zone %u CPU %u changed by CPU 2's drain", i, c);
			}
		}
	struct pa_usage u1 = usage(pool);
	CHECK_EQ_U64(u1.reserved, u0.reserved - cpu_frames[2]);
	CHECK_EQ_U64(u1.free, u0.free + cpu_frames[2]);
	VALIDATE(pool);

	/*
	 * One zone: CPU 3's lists of node 1's Movable zone (drain_local_pages(zone)),
	 * then every CPU's of node 0's DMA32 zone (drain_all_pages(zone)).
	 */
	pose(3);
	CHECK_EQ_U64(pa_drain_zone(pool, 1, PA_ZONE_MOVABLE, 0), 0);
	CHECK_EQ_U64(pa_drain_zone(pool, 0, PA_ZONE_DMA32, 1), 0);
	for (unsigned i = 0; i < nz; i++)
		for (unsigned c = 0; c < 4; c++) {
			struct snap s;
			snap_of(pool, &pool->zones[i], c, &s);
			const struct pa_zone *z = &pool->zones[i];
			bool drained = c == 2 || (z->node == 0 && z->type == PA_ZONE_DMA32) ||
			               (z->node == 1 && z->type == PA_ZONE_MOVABLE && c == 3);
			if (drained)
				CHECK_MSG(s.info.count == 0, "zone %u CPU %u kept %llu frames", i,
				          c, (unsigned long long)s.info.count);
			else
				CHECK_MSG(snap_equal(pool, &s, &before[i * 4 + c]),
				          "zone %u CPU %u changed by another zone's drain", i, c);
		}
	CHECK_EQ_U64(pa_drain_zone(NULL, 0, PA_ZONE_DMA32, 0), (uint64_t)-EINVAL);
	CHECK_EQ_U64(pa_drain_zone(pool, 2, PA_ZONE_DMA32, 0), (uint64_t)-ENOENT);
	CHECK_EQ_U64(pa_drain_zone(pool, 0, PA_ZONE_NORMAL, 1), (uint64_t)-ENOENT);
	CHECK_EQ_U64(pa_drain_zone(pool, 0, PA_ZONE_COUNT, 1), (uint64_t)-ENOENT);
	VALIDATE(pool);

	/* Every CPU: nothing left anywhere, and the buddy merged back whole. */
	pa_drain_all(pool);
	CHECK_EQ_U64(all_list_frames(pool), 0);
	struct pa_usage u2 = usage(pool);
	CHECK_EQ_U64(u2.reserved, 0);
	CHECK_EQ_U64(u2.free, u2.managed);
	buddyinfo(pool, now, sizeof now);
	CHECK_MSG(!strcmp(now, fresh), "after pa_drain_all\n%s!= fresh\n%s", now, fresh);
	VALIDATE(pool);
	/* A drain of empty lists changes nothing. */
	pa_drain_all(pool);
	pa_drain_local(pool);
	buddyinfo(pool, now, sizeof now);
	CHECK(!strcmp(now, fresh));

	/* The same through the control tree. */
	for (unsigned cpu = 0; cpu < 4; cpu++)
		fill_lists(pool, cpu, orders, 5);
	CHECK(all_list_frames(pool) > 0);
	CHECK_EQ_U64(pa_ctl_write(pool, "pcp/drain", "1"), 0);
	CHECK_EQ_U64(all_list_frames(pool), 0);
	buddyinfo(pool, now, sizeof now);
	CHECK_MSG(!strcmp(now, fresh), "after pcp/drain\n%s!= fresh\n%s", now, fresh);
	free(before);
	free(after);
	expect_whole(pool, fresh);
	pa_shutdown(pool);
}

TEST(pcp_per_order_counts_are_exactly_what_was_put_there)
{
	struct pa_pool *pool = pcp_boot("mem=256M max_order=10 nr_cpus=2 pcp_orders=0-10");
	REQUIRE(pcp_set_high_fraction(pool, 8) == 0); /* high 4096 frames: nothing spills */
	char fresh[BI_LEN];
	buddyinfo(pool, fresh, sizeof fresh);
	/* {order, blocks per type (unmovable, movable, reclaimable)}: 1567 frames in all. */
	static const struct {
		unsigned order, n[3];
	} pattern[] = {
		{ 0, { 5, 7, 3 } }, { 1, { 2, 3, 1 } }, { 2, { 1, 2, 2 } },
		{ 3, { 3, 1, 0 } }, { 4, { 1, 1, 1 } }, { 5, { 0, 2, 1 } },
		{ 6, { 1, 0, 0 } }, { 8, { 0, 1, 0 } }, { 10, { 0, 1, 0 } },
	};
	struct pa_page *held[64];
	unsigned horder[64], n = 0;
	pose(1);
	struct pa_zone *z = cpu_zone(pool, 1, PA_GFP_MOVABLE);
	for (size_t i = 0; i < sizeof pattern / sizeof pattern[0]; i++)
		for (unsigned t = 0; t < 3; t++)
			for (unsigned k = 0; k < pattern[i].n[t]; k++) {
				REQUIRE(n < 64);
				held[n] = pa_alloc_pages(pool, type_gfp[t], pattern[i].order);
				REQUIRE(held[n]);
				horder[n++] = pattern[i].order;
			}
	pa_drain_all(pool);
	CHECK_EQ_U64(all_list_frames(pool), 0);
	uint64_t expect[MAX_LISTS] = { 0 }, frames = 0;
	for (unsigned i = 0; i < n; i++) {
		pa_pfn_t pfn = pa_page_to_pfn(pool, held[i]);
		expect[pcp_index(horder[i], list_type_of(pool, pfn))]++;
		frames += 1ull << horder[i];
		pa_free_pages(pool, held[i], horder[i]);
	}
	CHECK_EQ_U64(frames, 1567);
	struct snap s, s0;
	snap_of(pool, z, 1, &s);
	for (unsigned o = 0; o <= 10; o++)
		for (unsigned t = 0; t < 3; t++)
			CHECK_MSG(s.blocks[pcp_index(o, t)] == expect[pcp_index(o, t)],
			          "CPU 1 order %u type %u: %" PRIu64 " blocks listed, %" PRIu64
			          " put there",
			          o, t, s.blocks[pcp_index(o, t)], expect[pcp_index(o, t)]);
	CHECK_EQ_U64(s.info.count, frames);
	snap_of(pool, z, 0, &s0);
	CHECK_EQ_U64(s0.info.count, 0);
	CHECK_EQ_U64(snap_frames(pool, &s0), 0);
	CHECK_EQ_U64(usage(pool).reserved, frames);
	/* The frame map agrees: PS_PCP heads per order. */
	uint64_t census[11] = { 0 };
	for (pa_pfn_t pfn = z->start_pfn; pfn < z->end_pfn; pfn++) {
		const struct pa_page *pg = pfn_page(pool, pfn);
		if (page_state(pg) == PS_PCP && pg->order <= 10)
			census[pg->order]++;
	}
	for (unsigned o = 0; o <= 10; o++)
		CHECK_MSG(census[o] == snap_order_blocks(&s, o),
		          "order %u: %" PRIu64 " PS_PCP heads, %" PRIu64 " listed", o, census[o],
		          snap_order_blocks(&s, o));
	VALIDATE(pool);

	/* Take one of each listed (order, type) back: exactly that count drops, from the list. */
	for (unsigned o = 0; o <= 10; o++)
		for (unsigned t = 0; t < 3; t++) {
			if (!expect[pcp_index(o, t)])
				continue;
			uint64_t a0 = ops_alloc(z, 1, o);
			struct snap b, a;
			snap_of(pool, z, 1, &b);
			struct pa_page *p = pa_alloc_pages(pool, type_gfp[t], o);
			REQUIRE(p);
			snap_of(pool, z, 1, &a);
			CHECK_EQ_U64(ops_alloc(z, 1, o), a0 + 1);
			b.blocks[pcp_index(o, t)]--;
			b.info.count -= 1ull << o;
			CHECK_MSG(!memcmp(a.blocks, b.blocks, sizeof a.blocks) &&
			                  a.info.count == b.info.count,
			          "order %u type %u: an allocation changed other lists", o, t);
			pa_free_pages(pool, p, o);
		}
	snap_of(pool, z, 1, &s0);
	CHECK_MSG(!memcmp(s0.blocks, s.blocks, sizeof s.blocks),
	          "the lists differ after the blocks came back");
	VALIDATE(pool);
	expect_whole(pool, fresh);
	pa_shutdown(pool);
}

/* pa_validate checks the lists against the frame map: each kind of damage is caught. */
TEST(pcp_validate_catches_broken_lists)
{
	struct pa_pool *pool = pcp_boot("mem=64M max_order=10 nr_cpus=2");
	char fresh[BI_LEN], err[512];
	buddyinfo(pool, fresh, sizeof fresh);
	pose(0);
	struct pa_page *a = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0),
	               *b = pa_alloc_pages(pool, PA_GFP_MOVABLE, 3);
	REQUIRE(a && b);
	pa_free_pages(pool, a, 0);
	pa_free_pages(pool, b, 3);
	VALIDATE(pool);
	struct pa_zone *z = cpu_zone(pool, 0, PA_GFP_MOVABLE);
	struct pa_pcp *pcp = z->pcp[0];
	uint32_t *list = &pcp_head(pcp, 0, PA_MT_MOVABLE);
	pa_pfn_t head = *list;
	REQUIRE(head != PA_NIL);
	struct pa_page *pg = pfn_page(pool, head);

	pcp->room--; /* the count disagrees with the lists */
	CHECK_EQ_U64(pa_validate(pool, err, sizeof err), -EFAULT);
	CHECK_MSG(strstr(err, "cpu 0") != NULL, "count off by one: \"%s\"", err);
	pcp->room++;
	VALIDATE(pool);

	set_page_state(pg, PS_FREE); /* a listed block that says it is in the buddy */
	CHECK_EQ_U64(pa_validate(pool, err, sizeof err), -EFAULT);
	CHECK(err[0] != '\0');
	set_page_state(pg, PS_PCP);
	VALIDATE(pool);

	pg->order = 1; /* a block on the order-0 list that says order 1 */
	CHECK_EQ_U64(pa_validate(pool, err, sizeof err), -EFAULT);
	CHECK(err[0] != '\0');
	pg->order = 0;
	VALIDATE(pool);

	*list = pg->lru.next; /* a PS_PCP block on no list */
	pcp->room += 1;
	CHECK_EQ_U64(pa_validate(pool, err, sizeof err), -EFAULT);
	CHECK(err[0] != '\0');
	pg->lru.next = *list;
	*list = (uint32_t)head;
	pcp->room -= 1;
	VALIDATE(pool);
	expect_whole(pool, fresh);
	pa_shutdown(pool);
}

/* --- The fallback when the CPU's list lock is taken ------------------------------ */

TEST(pcp_busy_cpu_lock_sends_allocation_and_free_to_the_zone)
{
	struct pa_pool *pool = pcp_boot("mem=256M max_order=10 nr_cpus=2");
	REQUIRE(pcp_set_high_fraction(pool, 8) ==
	        0); /* high 4096 frames: the warm-up stays listed */
	char fresh[BI_LEN];
	buddyinfo(pool, fresh, sizeof fresh);
	pose(0);
	struct pa_zone *z = cpu_zone(pool, 0, PA_GFP_MOVABLE);
	struct pa_pcp *pcp = z->pcp[0];
	/* Warm CPU 0's lists so that a list hit would be possible. */
	static const unsigned orders[] = { 0, 3, 9 };
	for (size_t i = 0; i < 3; i++) {
		struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE, orders[i]);
		REQUIRE(p);
		pa_free_pages(pool, p, orders[i]);
	}
	struct snap s0;
	snap_of(pool, z, 0, &s0);
	REQUIRE(s0.info.count > 0);

	platform_spin_lock(pool, &pcp->lock, SITE_ADMIN);
	uint64_t busy_a = atomic_load(&pcp->lock.busy[SITE_PCP_ALLOC]);
	uint64_t busy_f = atomic_load(&pcp->lock.busy[SITE_PCP_FREE]);
	uint64_t bad0 = atomic_load(&pool->pool_stat[PA_PS_BAD_PAGE]);
	uint32_t count0 = pcp_count(pcp); /* ours to read: we hold the lock */
	for (size_t i = 0; i < 3; i++) {
		unsigned o = orders[i];
		uint64_t free0 = zone_free_frames(z), a0 = ops_alloc(z, 0, o),
		         f0 = ops_free(z, 0, o);
		struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE, o);
		CHECK_MSG(p != NULL, "order %u: no allocation while CPU 0's list lock is taken", o);
		if (!p)
			continue;
		busy_a++;
		CHECK_EQ_U64(atomic_load(&pcp->lock.busy[SITE_PCP_ALLOC]), busy_a);
		CHECK_EQ_U64(pcp_count(pcp), count0);
		CHECK_EQ_U64(ops_alloc(z, 0, o), a0);
		CHECK_MSG(zone_free_frames(z) == free0 - (1ull << o),
		          "order %u: the buddy did not serve it", o);
		pa_free_pages(pool, p, o);
		/* A huge block freed while its list holds one goes to the buddy unlocked. */
		busy_f += o < pool->cfg.pageblock_order;
		CHECK_EQ_U64(atomic_load(&pcp->lock.busy[SITE_PCP_FREE]), busy_f);
		CHECK_EQ_U64(pcp_count(pcp), count0);
		CHECK_EQ_U64(ops_free(z, 0, o), f0);
		CHECK_MSG(zone_free_frames(z) == free0,
		          "order %u: the free did not go to the buddy", o);
		/* A double free on the zone path is still refused. */
		pa_free_pages(pool, p, o);
		busy_f += o < pool->cfg.pageblock_order;
		CHECK_EQ_U64(atomic_load(&pcp->lock.busy[SITE_PCP_FREE]), busy_f);
		CHECK_EQ_U64(atomic_load(&pool->pool_stat[PA_PS_BAD_PAGE]), ++bad0);
		CHECK_EQ_U64(zone_free_frames(z), free0);
	}
	/* CPU 1 keeps its own fast path meanwhile. */
	pose(1);
	struct pa_zone *z1 = cpu_zone(pool, 1, PA_GFP_MOVABLE);
	uint64_t a1 = ops_alloc(z1, 1, 0);
	struct pa_page *p1 = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0);
	REQUIRE(p1);
	CHECK_EQ_U64(ops_alloc(z1, 1, 0), a1 + 1);
	pa_free_pages(pool, p1, 0);
	CHECK_EQ_U64(atomic_load(&z1->pcp[1]->lock.busy[SITE_PCP_ALLOC]), 0);
	pa_spin_unlock(&pcp->lock);

	struct snap s1;
	snap_of(pool, z, 0, &s1);
	CHECK_MSG(snap_equal(pool, &s0, &s1), "CPU 0's lists changed while their lock was taken");
	VALIDATE(pool);
	/* Released: CPU 0 is served by its list again, and the busy counters stay. */
	pose(0);
	uint64_t a0 = ops_alloc(z, 0, 0);
	struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0);
	REQUIRE(p);
	CHECK_EQ_U64(ops_alloc(z, 0, 0), a0 + 1);
	CHECK_EQ_U64(atomic_load(&pcp->lock.busy[SITE_PCP_ALLOC]), busy_a);
	pa_free_pages(pool, p, 0);
	expect_whole(pool, fresh);
	pa_shutdown(pool);
}

/* --- Sizing: batch, high_min, high_max, high --------------------------------------- */

/* Linux's zone_batchsize(), and zone_set_pageset_high_and_batch()'s max(1, ...). */
static uint64_t linux_batch(uint64_t managed, unsigned page_shift)
{
	uint64_t b = managed >> 10, cap = (1ull << 20) >> page_shift;
	if (b > cap)
		b = cap;
	b /= 4;
	if (b < 1)
		b = 1;
	b += b / 2;
	uint64_t r = 1;
	while (r * 2 <= b)
		r *= 2;
	b = r - 1;
	return b < 1 ? 1 : b;
}

/*
 * Linux's nr_split_cpus: the CPUs of the zone's node (by the pool's CPU to
 * node mapping, the one allocations use), or every CPU for a node without any.
 */
static uint64_t node_cpus(const struct pa_pool *pool, unsigned node)
{
	uint64_t n = 0;
	for (unsigned c = 0; c < pool->cfg.nr_cpus; c++)
		if ((uint64_t)c * pool->nr_nodes / pool->cfg.nr_cpus == node)
			n++;
	return n ? n : pool->cfg.nr_cpus;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* Every zone and CPU against the formulas; fraction 0 is auto-tuning. */
static void check_sizes(struct pa_pool *pool, const char *what, unsigned fraction)
{
	for (unsigned i = 0; i < pool->nr_zones; i++) {
		const struct pa_zone *z = &pool->zones[i];
		uint64_t batch = linux_batch(z->managed_pages, pool->cfg.page_shift);
		uint64_t cpus = node_cpus(pool, z->node), floor = batch * 4, hmin, hmax;
		if (fraction) {
			hmin = hmax = max_u64(z->managed_pages / fraction / cpus, floor);
		} else {
			hmin = max_u64(z->wmark[PA_WMARK_LOW] / cpus, floor);
			hmax = max_u64(z->managed_pages / 8 / cpus, floor);
		}
		for (unsigned c = 0; c < pool->cfg.nr_cpus; c++) {
			struct pa_pcp_info info;
			REQUIRE(pa_pcp_info(pool, z->node, z->type, c, &info, NULL) == 0);
			CHECK_MSG(info.batch == batch,
			          "%s: node %u %s CPU %u: batch %" PRIu64 ", Linux's %" PRIu64
			          " (managed %" PRIu64 ")",
			          what, z->node, zone_name(z->type), c, info.batch, batch,
			          z->managed_pages);
			CHECK_MSG(info.high_min == hmin,
			          "%s: node %u %s CPU %u: high_min %" PRIu64 ", expected %" PRIu64
			          " (low %" PRIu64 " / %" PRIu64 " CPUs, 4 * batch %" PRIu64 ")",
			          what, z->node, zone_name(z->type), c, info.high_min, hmin,
			          z->wmark[PA_WMARK_LOW], cpus, floor);
			CHECK_MSG(info.high_max == hmax,
			          "%s: node %u %s CPU %u: high_max %" PRIu64 ", expected %" PRIu64
			          " (managed %" PRIu64 " / %s / %" PRIu64 " CPUs)",
			          what, z->node, zone_name(z->type), c, info.high_max, hmax,
			          z->managed_pages, fraction ? "fraction" : "8", cpus);
			CHECK_MSG(info.high >= info.high_min && info.high <= info.high_max,
			          "%s: high %" PRIu64 " outside [%" PRIu64 ", %" PRIu64 "]", what,
			          info.high, info.high_min, info.high_max);
		}
	}
}

TEST(pcp_batch_and_high_follow_linux_formulas)
{
	static const char *const lines[] = {
		"mem=64M nr_cpus=2",
		"mem=256M nr_cpus=2",
		"mem=1G nr_cpus=4",
		"mem=8G nr_cpus=4",
		"mem=6G numa=2 nr_cpus=4",
		"mem=2G movablecore=25% nr_cpus=2",
		"mem=1G page_shift=16 nr_cpus=2",
		"mem=1G page_shift=14 nr_cpus=8",
	};
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		struct pa_pool *pool = pcp_boot(lines[i]);
		check_sizes(pool, lines[i], 0);
		/* The watermarks move: high_min follows them (Linux's setup_per_zone_wmarks). Twice
		 * the default keeps low / CPUs under managed / 8 / CPUs, where both formulas hold. */
		char kb[32];
		REQUIRE(pa_ctl_read(pool, "min_free_kbytes", kb, sizeof kb) > 0);
		snprintf(kb, sizeof kb, "%llu", 2 * strtoull(kb, NULL, 10));
		CHECK_EQ_U64(pa_ctl_write(pool, "min_free_kbytes", kb), 0);
		check_sizes(pool, lines[i], 0);
		CHECK_EQ_U64(pa_ctl_write(pool, "watermark_scale_factor", "200"), 0);
		check_sizes(pool, lines[i], 0);
		pa_shutdown(pool);
	}
}

/* zone_batchsize() is 0 below 32 MiB of zone; Linux uses max(1, it). */
TEST(pcp_batch_is_at_least_one_on_tiny_zones)
{
	static const char *const lines[] = { "mem=16M nr_cpus=1", "mem=8M nr_cpus=2" };
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		struct pa_pool *pool = pcp_boot(lines[i]);
		check_sizes(pool, lines[i], 0);
		/* And the lists work there. */
		struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0);
		REQUIRE(p);
		pa_free_pages(pool, p, 0);
		VALIDATE(pool);
		pa_shutdown(pool);
	}
}

/* high is split among the CPUs of the zone's node, not nr_cpus / nr_nodes. */
TEST(pcp_high_splits_among_the_cpus_of_the_zones_node)
{
	static const char *const lines[] = {
		"mem=6G numa=2 nr_cpus=3",   /* node 0: CPUs 0 and 1; node 1: CPU 2 */
		"mem=512M numa=4 nr_cpus=2", /* nodes 1 and 3 have no CPU: all CPUs share */
	};
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		struct pa_pool *pool = pcp_boot(lines[i]);
		check_sizes(pool, lines[i], 0);
		pa_shutdown(pool);
	}
}

TEST(pcp_high_fraction_fixes_high_and_refuses_1_to_7)
{
	struct pa_pool *pool = pcp_boot("mem=1G movablecore=25% nr_cpus=4");
	static const unsigned good[] = { 8, 10, 100, 1000000 };
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		char what[64];
		snprintf(what, sizeof what, "high_fraction %u", good[i]);
		CHECK_EQ_U64(pcp_set_high_fraction(pool, good[i]), 0);
		check_sizes(pool, what, good[i]);
		for (unsigned z = 0; z < pool->nr_zones; z++) {
			struct pa_pcp_info info;
			REQUIRE(pa_pcp_info(pool, pool->zones[z].node, pool->zones[z].type, 3,
			                    &info, NULL) == 0);
			CHECK_EQ_U64(info.high, info.high_min);
		}
	}
	/* 1..7 are refused and change nothing. */
	struct pa_pcp_info before, after;
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &before, NULL) == 0);
	for (unsigned f = 1; f < 8; f++) {
		CHECK_EQ_U64(pcp_set_high_fraction(pool, f), -EINVAL);
		CHECK_EQ_U64(atomic_load(&pool->pcp_high_fraction), 1000000);
		REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &after, NULL) == 0);
		CHECK(!memcmp(&before, &after, sizeof before));
	}
	/* Through the control tree. */
	char buf[32];
	CHECK_EQ_U64(pa_ctl_write(pool, "pcp/high_fraction", "7"), -EINVAL);
	CHECK_EQ_U64(pa_ctl_write(pool, "pcp/high_fraction", "abc"), -EINVAL);
	CHECK_EQ_U64(atomic_load(&pool->pcp_high_fraction), 1000000);
	CHECK_EQ_U64(pa_ctl_write(pool, "pcp/high_fraction", "8"), 0);
	CHECK(pa_ctl_read(pool, "pcp/high_fraction", buf, sizeof buf) > 0 && !strcmp(buf, "8\n"));
	check_sizes(pool, "pcp/high_fraction=8", 8);
	/* 0: back to auto-tuning between the formulas' bounds. */
	CHECK_EQ_U64(pa_ctl_write(pool, "pcp/high_fraction", "0"), 0);
	check_sizes(pool, "pcp/high_fraction=0", 0);
	pa_shutdown(pool);
}

/* Linux 6.1's zone_highsize(): the low watermark shared by the CPUs, at least 4 batches. */
static void check_sizes_61(struct pa_pool *pool)
{
	for (unsigned i = 0; i < pool->nr_zones; i++) {
		struct pa_zone *z = &pool->zones[i];
		for (unsigned c = 0; c < pool->cfg.nr_cpus; c++) {
			struct pa_pcp_info info;
			REQUIRE(pa_pcp_info(pool, z->node, z->type, c, &info, NULL) == 0);
			uint64_t want = z->wmark[PA_WMARK_LOW] / pool->cfg.nr_cpus;
			want = want < 4 * info.batch ? 4 * info.batch : want;
			CHECK_EQ_U64(info.high, want);
			CHECK_EQ_U64(info.high_min, want);
			CHECK_EQ_U64(info.high_max, want);
		}
	}
}

TEST(pcp_rules_6_1_fix_high_at_the_low_watermarks_share)
{
	struct pa_pool *pool = pcp_boot("mem=1G nr_cpus=2 pcp_rules=6.1");
	char buf[16];
	CHECK(pa_ctl_read(pool, "pcp/rules", buf, sizeof buf) > 0 && !strcmp(buf, "6.1\n"));
	check_sizes_61(pool);
	/* The watermarks move: high follows them, still untuned. */
	CHECK_EQ_U64(pa_ctl_write(pool, "watermark_scale_factor", "200"), 0);
	check_sizes_61(pool);
	/* Back to 6.7's auto-tuning and again to 6.1's, through the control tree. */
	CHECK_EQ_U64(pa_ctl_write(pool, "pcp/rules", "6.7\n"), 0);
	check_sizes(pool, "pcp/rules=6.7", 0);
	CHECK_EQ_U64(pa_ctl_write(pool, "pcp/rules", "6.1"), 0);
	check_sizes_61(pool);
	CHECK_EQ_U64(pa_ctl_write(pool, "pcp/rules", "6.2"), -EINVAL);
	CHECK(pa_ctl_read(pool, "pcp/rules", buf, sizeof buf) > 0 && !strcmp(buf, "6.1\n"));
	pa_shutdown(pool);
}

/*
 * 6.1.y's nr_pcp_free() doubles a run's spills only up to batch << 5
 * (CONFIG_PCP_BATCH_SCALE_MAX, backported): with high far above that, the
 * spills of a long run of frees go batch, 2, 4, 8, 16, 32 batches, then stay.
 */
TEST(pcp_rules_6_1_spills_stop_doubling_at_32_batches)
{
	struct pa_pool *pool = pcp_boot("mem=4G max_order=10 nr_cpus=1 pcp_rules=6.1");
	struct pa_zone *z = cpu_zone(pool, 0, PA_GFP_MOVABLE);
	struct snap s;
	snap_of(pool, z, 0, &s);
	uint64_t high = s.info.high, batch = s.info.batch, nr = 6 * high;
	REQUIRE(high > 40 * batch);
	struct pa_page **blk = malloc(nr * sizeof *blk);
	REQUIRE(blk);
	pose(0);
	for (uint64_t i = 0; i < nr; i++)
		REQUIRE((blk[i] = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0)));
	pa_drain_all(pool);
	uint64_t prev = 0, drops[12], nr_drops = 0;
	for (uint64_t i = 0; i < nr; i++) {
		pa_free_pages(pool, blk[i], 0);
		snap_of(pool, z, 0, &s);
		if (s.info.count < prev + 1 && nr_drops < 12)
			drops[nr_drops++] = prev + 1 - s.info.count;
		prev = s.info.count;
	}
	REQUIRE(nr_drops >= 8);
	for (unsigned d = 0; d < 8; d++)
		CHECK_MSG(drops[d] == batch << (d < 5 ? d : 5), "spill %u: %" PRIu64 " frames", d,
		          drops[d]);
	free(blk);
	VALIDATE(pool);
	pa_shutdown(pool);
}

/*
 * Linux 6.1's free_unref_page_commit(): frees past high spill a batch, then
 * twice that for each spill in a row (free_factor); while frees run on, an
 * order-1..3 free empties the lists; allocations halve free_factor and end it.
 */
TEST(pcp_rules_6_1_spill_doubles_and_a_high_order_free_empties_the_lists)
{
	struct pa_pool *pool = pcp_boot("mem=256M max_order=10 nr_cpus=2 pcp_rules=6.1");
	char fresh[BI_LEN];
	buddyinfo(pool, fresh, sizeof fresh);
	struct pa_zone *z = cpu_zone(pool, 0, PA_GFP_MOVABLE);
	struct snap s;
	snap_of(pool, z, 0, &s);
	uint64_t high = s.info.high, batch = s.info.batch, nr = 3 * high;
	struct pa_page **blk = malloc((nr + 16) * sizeof *blk);
	REQUIRE(blk);
	pose(1); /* CPU 1 allocates; CPU 0, whose lists start empty, frees */
	for (uint64_t i = 0; i < nr + 16; i++)
		REQUIRE((blk[i] = pa_alloc_pages(pool, PA_GFP_MOVABLE, i < nr ? 0 : 1)));
	pose(0);
	uint64_t prev = 0, drops[8], nr_drops = 0;
	for (uint64_t i = 0; i < nr; i++) {
		pa_free_pages(pool, blk[i], 0);
		snap_of(pool, z, 0, &s);
		CHECK_MSG(s.info.count < high,
		          "free %" PRIu64 ": %" PRIu64 " listed, high %" PRIu64, i, s.info.count,
		          high);
		CHECK_EQ_U64(s.info.high, high);
		if (s.info.count < prev + 1 && nr_drops < 8)
			drops[nr_drops++] = prev + 1 - s.info.count;
		prev = s.info.count;
	}
	REQUIRE(nr_drops >= 2);
	CHECK_EQ_U64(drops[0], batch);
	CHECK_EQ_U64(drops[1], 2 * batch);
	/* Frees ran on with spills between: an order-1 free empties the lists. */
	REQUIRE(prev > 0);
	pa_free_pages(pool, blk[nr], 1);
	snap_of(pool, z, 0, &s);
	CHECK_EQ_U64(s.info.count, 0);
	/* Allocations end the run: an order-1 free then stays on the list. */
	struct pa_page *a[16];
	for (unsigned i = 0; i < 16; i++)
		REQUIRE((a[i] = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0)));
	snap_of(pool, z, 0, &s);
	uint64_t listed = s.info.count;
	pa_free_pages(pool, blk[nr + 1], 1);
	snap_of(pool, z, 0, &s);
	CHECK_EQ_U64(s.info.count, listed + 2);
	for (unsigned i = 0; i < 16; i++)
		pa_free_pages(pool, a[i], 0);
	for (uint64_t i = nr + 2; i < nr + 16; i++)
		pa_free_pages(pool, blk[i], 1);
	VALIDATE(pool);
	pa_drain_all(pool);
	free(blk);
	expect_whole(pool, fresh);
	pa_shutdown(pool);
}

/*
 * high within its bounds on every CPU. (count may pass high after a refill, as
 * in Linux; the spill and decay tests check count against high.)
 */
static void check_high_bounds(struct pa_pool *pool, struct pa_zone *z, uint64_t *peak)
{
	for (unsigned c = 0; c < pool->cfg.nr_cpus; c++) {
		struct pa_pcp_info info;
		REQUIRE(pa_pcp_info(pool, z->node, z->type, c, &info, NULL) == 0);
		CHECK_MSG(info.high >= info.high_min && info.high <= info.high_max,
		          "CPU %u: high %" PRIu64 " outside [%" PRIu64 ", %" PRIu64 "]", c,
		          info.high, info.high_min, info.high_max);
		if (info.high > *peak)
			*peak = info.high;
	}
}

TEST(pcp_high_stays_within_its_bounds_through_long_runs)
{
	struct pa_pool *pool = boot_with("mem=256M max_order=10 nr_cpus=2", true);
	char fresh[BI_LEN];
	buddyinfo(pool, fresh, sizeof fresh);
	struct pa_zone *z = cpu_zone(pool, 0, PA_GFP_MOVABLE);
	struct pa_pcp_info info0;
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info0, NULL) == 0);
	REQUIRE(info0.high_max > info0.high_min);
	uint64_t seed = test_seed();
	printf("  high bounds seed %" PRIu64 "\n", seed);
	uint64_t x = seed | 1, peak = 0;
	enum { CAP = 2048 };
	struct pa_page **held = malloc(CAP * sizeof *held);
	unsigned *horder = malloc(CAP * sizeof *horder);
	REQUIRE(held && horder);
	unsigned n = 0, run = 0, ops = scaled(60000, 3000);
	bool allocating = false;
	for (unsigned i = 0; i < ops; i++) {
		uint64_t r = rnd(&x);
		pose((unsigned)(r >> 60) % 8 ? 0 : 1); /* mostly CPU 0, CPU 1 now and then */
		if (run == 0) {
			allocating = !allocating;
			run = 1 + (unsigned)((r >> 8) % 600);
		}
		run--;
		if (allocating && n < CAP) {
			unsigned o = (unsigned)((r >> 20) % 4);
			struct pa_page *p =
			        pa_alloc_pages(pool, type_gfp[(r >> 24) % 3] | PA_GFP_NOWARN, o);
			if (p) {
				held[n] = p;
				horder[n++] = o;
			}
		} else if (n) {
			unsigned k = (unsigned)((r >> 32) % n);
			pa_free_pages(pool, held[k], horder[k]);
			held[k] = held[--n];
			horder[k] = horder[n];
		}
		if (i % 100 == 0)
			atomic_fetch_add(
			        &fake_ns,
			        300000000ull); /* a decay period about every 333 operations */
		if (i % 256 == 0)
			check_high_bounds(pool, z, &peak);
	}
	check_high_bounds(pool, z, &peak);
	CHECK_MSG(peak > info0.high_min,
	          "high never rose above high_min %" PRIu64 " (refills should raise it)",
	          info0.high_min);
	while (n) {
		n--;
		pa_free_pages(pool, held[n], horder[n]);
	}
	/* Idle: a refill a second that keeps nothing decays high back down to high_min. */
	pose(0);
	for (unsigned k = 0; k < 64; k++) {
		atomic_fetch_add(&fake_ns, 2000000000ull);
		struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0);
		REQUIRE(p);
		pa_free_pages(pool, p, 0);
		pa_drain_local(pool);
		check_high_bounds(pool, z, &peak);
	}
	struct pa_pcp_info info;
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info, NULL) == 0);
	CHECK_MSG(info.high == info.high_min,
	          "after 64 idle seconds high is %" PRIu64 ", high_min %" PRIu64 " (peak %" PRIu64
	          ")",
	          info.high, info.high_min, peak);
	/* A fixed fraction pins high: no refill or decay moves it. */
	CHECK_EQ_U64(pcp_set_high_fraction(pool, 16), 0);
	for (unsigned i = 0; i < scaled(5000, 500); i++) {
		uint64_t r = rnd(&x);
		if ((r & 3) && n < CAP) {
			struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN,
			                                   (unsigned)(r >> 8) % 4);
			if (p) {
				held[n] = p;
				horder[n++] = (unsigned)(r >> 8) % 4;
			}
		} else if (n) {
			n--;
			pa_free_pages(pool, held[n], horder[n]);
		}
		if (i % 100 == 0) {
			atomic_fetch_add(&fake_ns, 2000000000ull);
			REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info, NULL) == 0);
			CHECK(info.high == info.high_min && info.high == info.high_max);
		}
	}
	while (n) {
		n--;
		pa_free_pages(pool, held[n], horder[n]);
	}
	free(held);
	free(horder);
	expect_whole(pool, fresh);
	pa_shutdown(pool);
}

/*
 * A free of a pageblock goes to the buddy while its list already holds one
 * (bulk frees skip the lists); pcp/huge_direct=0 keeps it on the list, as
 * Linux does while high has room.
 */
static uint64_t listed_after_three_huge_frees(const char *huge_direct)
{
	struct pa_pool *pool = boot_with("mem=4G nr_cpus=1 pcp_orders=0-3,9", true);
	pose(0);
	REQUIRE(pa_ctl_write(pool, "pcp/huge_direct", huge_direct) == 0);
	struct pa_page *p[3];
	for (unsigned i = 0; i < 3; i++)
		REQUIRE((p[i] = pa_alloc_pages(pool, PA_GFP_MOVABLE, 9)) != NULL);
	pa_drain_all(pool);
	for (unsigned i = 0; i < 3; i++)
		pa_free_pages(pool, p[i], 9);
	struct pa_pcp_info info;
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info, NULL) == 0);
	REQUIRE(info.high >= 3 * 512 + info.batch);
	VALIDATE(pool);
	pa_shutdown(pool);
	return info.count;
}

TEST(pcp_huge_direct_0_keeps_freed_pageblocks_on_the_list)
{
	CHECK_EQ_U64(listed_after_three_huge_frees("1"), 512);
	CHECK_EQ_U64(listed_after_three_huge_frees("0"), 3 * 512);
}

/*
 * PA_GFP_THISNODE and PA_GFP_HIGH requests are served by the CPU's lists as
 * any other, as Linux's are (a THP fault's; GFP_ATOMIC's first try is at the
 * low watermark like any request's): the block freed onto them comes back,
 * where the buddy path would have passed it by.
 */
static void freed_block_comes_back(pa_gfp_t gfp, unsigned order)
{
	struct pa_pool *pool = boot_with("mem=4G nr_cpus=1 pcp_orders=0-3,9", true);
	pose(0);
	REQUIRE(pa_ctl_write(pool, "pcp/huge_direct", "0") == 0);
	struct pa_page *p = pa_alloc_pages(pool, gfp, order);
	REQUIRE(p);
	pa_pfn_t pfn = pa_page_to_pfn(pool, p);
	pa_free_pages(pool, p, order);
	struct pa_pcp_info info;
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info, NULL) == 0);
	uint64_t listed = info.count;
	REQUIRE(listed >= 1ull << order);
	p = pa_alloc_pages(pool, gfp, order);
	REQUIRE(p);
	CHECK_MSG(pa_page_to_pfn(pool, p) == pfn, "gfp %#x order %u: pfn %llu, the freed %llu", gfp,
	          order, (unsigned long long)pa_page_to_pfn(pool, p), (unsigned long long)pfn);
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info, NULL) == 0);
	CHECK_EQ_U64(info.count, listed - (1ull << order));
	pa_free_pages(pool, p, order);
	VALIDATE(pool);
	pa_shutdown(pool);
}

TEST(pcp_thisnode_and_high_requests_take_from_the_cpus_lists)
{
	freed_block_comes_back(PA_GFP_MOVABLE | PA_GFP_COMP | PA_GFP_THISNODE, 9);
	freed_block_comes_back(PA_GFP_THISNODE, 0);
	freed_block_comes_back(PA_GFP_HIGH | PA_GFP_NOCOMPACT, 0);
	freed_block_comes_back(PA_GFP_HIGH | PA_GFP_NOCOMPACT, 2);
}

/*
 * Linux's zone_watermark_fast() asks a high-order request for a free block
 * of its order or larger in the buddy before any list serves it: a block
 * on a CPU's list does not count. With memory free only in single frames,
 * the block freed onto the list stays there (the request fails, as it
 * may not compact) until a drain gives it back to the buddy.
 */
static void listed_block_waits_for_the_buddy(unsigned order)
{
	struct pa_pool *pool =
	        boot_with("mem=1G nr_cpus=1 pcp_orders=0-3,9 min_free_kbytes=0", true);
	pose(0);
	REQUIRE(pa_ctl_write(pool, "pcp/huge_direct", "0") == 0);
	pa_gfp_t gfp = PA_GFP_MOVABLE | PA_GFP_COMP | PA_GFP_NOCOMPACT;
	struct pa_page *p = pa_alloc_pages(pool, gfp, order);
	REQUIRE(p);
	pa_pfn_t pfn = pa_page_to_pfn(pool, p);
	uint64_t n = 0; /* no watermark (min_free_kbytes=0): every other frame is taken */
	struct pa_page **pages = alloc_order0_all(pool, PA_GFP_MOVABLE, 1u << 18, &n);
	REQUIRE(n > 1000);
	for (uint64_t i = 0; i < n; i += 2) /* every other frame: free, but no pair */
		pa_free_pages(pool, pages[i], 0);
	pa_drain_local(pool);
	pa_free_pages(pool, p, order);
	struct pa_pcp_info info;
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info, NULL) == 0);
	CHECK_EQ_U64(info.count, 1ull << order);
	CHECK_EQ_U64(free_frames_from(pool, 1), 0);
	CHECK_MSG(!pa_alloc_pages(pool, gfp, order), "order %u: the listed block was served",
	          order);
	pa_drain_local(pool);
	p = pa_alloc_pages(pool, gfp, order);
	REQUIRE(p);
	CHECK_EQ_U64(pa_page_to_pfn(pool, p), pfn);
	pa_free_pages(pool, p, order);
	for (uint64_t i = 1; i < n; i += 2)
		pa_free_pages(pool, pages[i], 0);
	free(pages);
	VALIDATE(pool);
	pa_shutdown(pool);
}

TEST(pcp_a_high_order_block_on_the_lists_needs_one_in_the_buddy)
{
	listed_block_waits_for_the_buddy(9);
	listed_block_waits_for_the_buddy(2);
}

/*
 * Linux 6.7's nr_pcp_alloc(): each refill first raises high by the batch it
 * is about to take, which doubles (alloc_factor) for each refill in a row
 * with no free between: batch, then 2 batches.
 */
TEST(pcp_refills_raise_high_by_the_scaled_batch)
{
	struct pa_pool *pool = boot_with("mem=256M max_order=10 nr_cpus=2", true);
	pose(0);
	struct pa_pcp_info info;
	/* The first refill's decay (a second since boot) sets where high starts. */
	REQUIRE(pa_alloc_pages(pool, PA_GFP_MOVABLE, 0));
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info, NULL) == 0);
	uint64_t batch = info.batch, high = info.high;
	REQUIRE(info.count == batch - 1);
	for (unsigned r = 1; r <= 3; r++) {
		uint64_t take = batch << r;
		for (uint64_t i = 0; i <= info.count; i++) /* the list's last, then a refill */
			REQUIRE(pa_alloc_pages(pool, PA_GFP_MOVABLE, 0));
		REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info, NULL) == 0);
		CHECK_MSG(info.high == high + take, "refill %u: high %llu, expected %llu", r,
		          (unsigned long long)info.high, (unsigned long long)(high + take));
		CHECK_EQ_U64(info.count, take - 1);
		high = info.high;
	}
	pa_shutdown(pool);
}

/*
 * A decay test's pool: CPU 0's lists with high raised by refills and filled
 * by frees to 2 frames under it, what a decay has to work on. blk[k..NR)
 * are still allocated.
 */
enum {
	DECAY_NR0 = 1000, /* enough refills on CPU 0 even as the alloc factor grows them */
	DECAY_NR = 6000
};

struct decay_case {
	struct pa_pool *pool;
	char fresh[BI_LEN];
	struct pa_page **blk;
	uint64_t k, high0;
};

static void decay_case_start(struct decay_case *d, const char *ctl)
{
	d->pool = boot_with("mem=256M max_order=10 nr_cpus=2", true);
	buddyinfo(d->pool, d->fresh, sizeof d->fresh);
	if (ctl)
		REQUIRE(pa_ctl_write(d->pool, ctl, "1") == 0);
	/* CPU 0's refills raise its high by what each takes; CPU 1 allocates the rest to free on CPU 0. */
	d->blk = malloc(DECAY_NR * sizeof *d->blk);
	REQUIRE(d->blk);
	for (unsigned i = 0; i < DECAY_NR; i++) {
		pose(i < DECAY_NR0 ? 0 : 1);
		d->blk[i] = pa_alloc_pages(d->pool, PA_GFP_MOVABLE, 0);
		REQUIRE(d->blk[i]);
	}
	pose(0);
	struct pa_pcp_info info;
	REQUIRE(pa_pcp_info(d->pool, 0, PA_ZONE_DMA32, 0, &info, NULL) == 0);
	REQUIRE(info.high > info.high_min + 8 * info.batch && info.high < info.high_max);
	REQUIRE(info.count + DECAY_NR > info.high);
	d->k = info.high - info.count - 2;
	d->high0 = info.high;
	for (uint64_t i = 0; i < d->k; i++)
		pa_free_pages(d->pool, d->blk[i], 0);
	REQUIRE(pa_pcp_info(d->pool, 0, PA_ZONE_DMA32, 0, &info, NULL) == 0);
	REQUIRE(info.count == d->high0 - 2 && info.high == d->high0);
}

/* Give back p (order 1) and the blocks: the pool is whole again. */
static void decay_case_end(struct decay_case *d, struct pa_page *p)
{
	VALIDATE(d->pool);
	pa_free_pages(d->pool, p, 1);
	for (uint64_t i = d->k; i < DECAY_NR; i++)
		pa_free_pages(d->pool, d->blk[i], 0);
	free(d->blk);
	expect_whole(d->pool, d->fresh);
	pa_shutdown(d->pool);
}

/*
 * Linux's decay_pcp_high(): when the periodic decay lowers high below what
 * the lists hold, the excess goes back to the buddy (count - high frames).
 * Here: high raised by refills, the lists filled to just under it by frees,
 * a second passes, and a refill (whose decay lowers high by an eighth) runs.
 */
TEST(pcp_decay_gives_back_what_is_above_the_lowered_high)
{
	struct decay_case d;
	decay_case_start(&d, NULL);
	atomic_fetch_add(&fake_ns, 1000000000ull);
	struct pa_page *p =
	        pa_alloc_pages(d.pool, PA_GFP_MOVABLE, 1); /* an empty list: a refill, then decay */
	REQUIRE(p);
	struct pa_pcp_info info;
	REQUIRE(pa_pcp_info(d.pool, 0, PA_ZONE_DMA32, 0, &info, NULL) == 0);
	CHECK_MSG(info.high < d.high0, "high %" PRIu64 " did not decay from %" PRIu64, info.high,
	          d.high0);
	CHECK_MSG(info.count <= info.high,
	          "high decayed to %" PRIu64 " but the lists still hold %" PRIu64 " frames",
	          info.high, info.count);
	CHECK(info.high >= info.high_min && info.high <= info.high_max);
	decay_case_end(&d, p);
}

/*
 * pa_pcp_set_high(): a CPU's high set within [high_min, high_max] holds
 * what its lists hold below it and gives back what is above; outside the
 * range, under 6.1's fixed high, or for a zone or CPU not there, it is
 * refused and nothing changes.
 */
/*
 * Linux's rmqueue_bulk() adds each block it takes at the list's tail, so a
 * refill serves them in the order taken. The first unmovable refill of a
 * fresh pool falls back: it claims a free block, takes its first frame,
 * then the frames after it from the claimed rest: they come out in a row
 * from the block's start (the claimed rest's pieces do not jump ahead).
 */
TEST(pcp_refill_serves_blocks_in_the_order_taken)
{
	struct pa_pool *pool = boot_with("mem=256M nr_cpus=1 linux=7.2", false);
	struct pa_page *p[16];
	for (unsigned i = 0; i < 16; i++)
		REQUIRE((p[i] = pa_alloc_pages(pool, PA_GFP_KERNEL, 0)));
	pa_pfn_t first = pa_page_to_pfn(pool, p[0]);
	CHECK_MSG(first % 512 == 0, "first frame %#llx is no claimed block's start",
	          (unsigned long long)first);
	for (unsigned i = 1; i < 16; i++)
		CHECK_EQ_U64(pa_page_to_pfn(pool, p[i]), first + i);
	for (unsigned i = 0; i < 16; i++)
		pa_free_pages(pool, p[i], 0);
	VALIDATE(pool);
	pa_shutdown(pool);
}

/*
 * Linux's rmqueue(): the slow path's try at the min watermark, too, takes an
 * order the lists hold from the CPU's list: between the min and low
 * watermarks, a frame freed onto the list is the next one handed out. A dry
 * list takes its whole batch there (rmqueue_bulk() checks no watermark: the
 * request passed its own), the rest waiting on the list outside the free
 * count.
 */
TEST(pcp_under_the_low_watermark_the_lists_still_serve)
{
	struct pa_pool *pool = boot_with("mem=256M nr_cpus=1 min_free_kbytes=8192", true);
	struct pa_zone_info zi;
	REQUIRE(pa_zone_info(pool, 0, &zi) == 0 && zi.type == PA_ZONE_DMA32);
	uint64_t target = (zi.watermark_min + zi.watermark_low) / 2, n = 0;
	struct pa_page **pages = malloc(zi.managed * sizeof *pages);
	REQUIRE(pages);
	for (;;) { /* down to between the watermarks, counting what the list holds as free */
		REQUIRE(pa_zone_info(pool, 0, &zi) == 0);
		if (zi.free + zi.pcp < target)
			break;
		REQUIRE((pages[n] = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 0)));
		n++;
	}
	pa_drain_local(pool);
	REQUIRE(pa_zone_info(pool, 0, &zi) == 0);
	REQUIRE(zi.free > zi.watermark_min && zi.free < zi.watermark_low && zi.pcp == 0);
	uint64_t before = zi.free;
	REQUIRE((pages[n] = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 0)));
	n++;
	struct pa_pcp_info info;
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info, NULL) == 0);
	CHECK_MSG(info.count + 1 >= info.batch, "a refill of %llu frames, batch %llu",
	          (unsigned long long)info.count + 1, (unsigned long long)info.batch);
	REQUIRE(pa_zone_info(pool, 0, &zi) == 0);
	CHECK_EQ_U64(zi.free, before - info.count - 1);
	pa_pfn_t freed = pa_page_to_pfn(pool, pages[n - 2]);
	pa_free_pages(pool, pages[n - 2], 0);
	pages[n - 2] = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 0);
	REQUIRE(pages[n - 2]);
	CHECK_EQ_U64(pa_page_to_pfn(pool, pages[n - 2]), freed);
	for (uint64_t i = 0; i < n; i++)
		pa_free_pages(pool, pages[i], 0);
	free(pages);
	VALIDATE(pool);
	pa_shutdown(pool);
}

/*
 * Linux's ALLOC_NOFRAGMENT reaches the refill (rmqueue_bulk()): a request
 * whose preferred zone is Normal, with DMA32 below, falls back below a
 * pageblock in Normal only after every zone failed without. With Normal's
 * free memory all single frames in movable pageblocks, an unmovable page
 * comes from a pageblock DMA32 gives up whole, and Normal's stay movable.
 */
TEST(pcp_a_refill_falls_back_below_a_pageblock_only_where_the_request_may)
{
	/* Filled with the lists off and no watermark to keep: no free pageblock is left. */
	struct pa_pool *pool =
	        boot_with("mem=6G nr_cpus=1 min_free_kbytes=0 watermark_scale_factor=1", true);
	REQUIRE(pa_ctl_write(pool, "pcp/orders/0/enabled", "0") == 0);
	pa_pfn_t normal = (4ull << 30) >> 12; /* Normal starts at 4 GiB */
	uint64_t cap = (3ull << 30) >> 12, n = 0;
	struct pa_page **pages = malloc(cap * sizeof *pages);
	REQUIRE(pages);
	while (n < cap) { /* Normal's memory, until the allocations go to DMA32 */
		struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 0);
		REQUIRE(p);
		if (pa_page_to_pfn(pool, p) < normal) {
			pa_free_pages(pool, p, 0);
			break;
		}
		pages[n++] = p;
	}
	REQUIRE(n > 1000 && n < cap);
	for (uint64_t i = 0; i < n; i += 2) /* every other frame: free, but no pair */
		pa_free_pages(pool, pages[i], 0);
	REQUIRE(pa_ctl_write(pool, "pcp/orders/0/enabled", "1") == 0);
	uint64_t before = vmstat(pool, "pgalloc_fallback_steal");
	struct pa_page *k = pa_alloc_pages(pool, PA_GFP_KERNEL, 0);
	REQUIRE(k);
	CHECK_MSG(pa_page_to_pfn(pool, k) < normal,
	          "the unmovable page came from Normal (pfn %#llx), as a fallback there",
	          (unsigned long long)pa_page_to_pfn(pool, k));
	CHECK_EQ_U64(vmstat(pool, "pgalloc_fallback_steal"), before);
	pa_free_pages(pool, k, 0);
	for (uint64_t i = 1; i < n; i += 2)
		pa_free_pages(pool, pages[i], 0);
	free(pages);
	VALIDATE(pool);
	pa_shutdown(pool);
}

/*
 * pa_drain_list() gives back one list only: the movable order-0 list goes,
 * the unmovable one and the order-1 one stay; the frames it reports are
 * the ones the buddy got back. Bad arguments are refused.
 */
TEST(pcp_drain_list_gives_back_that_list_alone)
{
	struct pa_pool *pool = test_boot("mem=256M nr_cpus=1 pcp_orders=0-3");
	struct pa_page *p[3] = { pa_alloc_pages(pool, PA_GFP_MOVABLE, 0),
		                 pa_alloc_pages(pool, PA_GFP_KERNEL, 0),
		                 pa_alloc_pages(pool, PA_GFP_KERNEL, 1) };
	REQUIRE(p[0] && p[1] && p[2]);
	uint64_t before[(PA_MAX_ORDER_LIMIT + 1) * 3] = { 0 }, after[(PA_MAX_ORDER_LIMIT + 1) * 3];
	struct pa_pcp_info info;
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info, before) == 0);
	uint64_t movable = before[0 * 3 + 1];
	REQUIRE(movable && before[0 * 3 + 0] && before[1 * 3 + 0]);
	struct pa_usage u0 = usage(pool);
	CHECK_EQ_U64(pa_drain_list(pool, 0, PA_ZONE_DMA32, 0, 0, 1), movable);
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info, after) == 0);
	for (unsigned i = 0; i < 11 * 3; i++) /* the pool's orders 0..10 */
		CHECK_EQ_U64(after[i], i == 1 ? 0 : before[i]);
	struct pa_usage u1 = usage(pool);
	CHECK_EQ_U64(u1.free, u0.free + movable);
	CHECK_EQ_U64(u1.reserved, u0.reserved - movable);
	CHECK_EQ_U64(pa_drain_list(pool, 0, PA_ZONE_DMA32, 0, 0, 1), 0); /* empty now */
	CHECK_EQ_U64(pa_drain_list(NULL, 0, PA_ZONE_DMA32, 0, 0, 1), -EINVAL);
	CHECK_EQ_U64(pa_drain_list(pool, 0, PA_ZONE_DMA32, 0, 0, 3), -EINVAL);
	CHECK_EQ_U64(pa_drain_list(pool, 1, PA_ZONE_DMA32, 0, 0, 1), -ENOENT);
	CHECK_EQ_U64(pa_drain_list(pool, 0, PA_ZONE_NORMAL, 0, 0, 1), -ENOENT);
	CHECK_EQ_U64(pa_drain_list(pool, 0, PA_ZONE_DMA32, 1, 0, 1), -ENOENT);
	CHECK_EQ_U64(pa_drain_list(pool, 0, PA_ZONE_DMA32, 0, 41, 1), -ENOENT);
	VALIDATE(pool);
	pa_free_pages(pool, p[0], 0);
	pa_free_pages(pool, p[1], 0);
	pa_free_pages(pool, p[2], 1);
	pa_shutdown(pool);
}

TEST(pcp_set_high_restores_a_cpus_high_within_its_range)
{
	struct pa_pool *pool = test_boot("mem=256M nr_cpus=1 pcp_orders=0");
	struct pa_pcp_info info;
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info, NULL) == 0);
	uint64_t high = info.high_min + (info.high_max - info.high_min) / 2;
	CHECK_EQ_U64(pa_pcp_set_high(pool, 0, PA_ZONE_DMA32, 0, high), 0);
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info, NULL) == 0);
	CHECK_EQ_U64(info.high, high);
	uint64_t n = high - 1; /* freed one by one, all of them stay on the lists */
	struct pa_page **pages = calloc(n, sizeof *pages);
	REQUIRE(pages);
	for (uint64_t i = 0; i < n; i++)
		REQUIRE((pages[i] = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0)));
	pa_drain_local(pool);
	for (uint64_t i = 0; i < n; i++)
		pa_free_pages(pool, pages[i], 0);
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info, NULL) == 0);
	CHECK_EQ_U64(info.count, n); /* the frees only raise high */
	/* Lowered, the lists give back what is above it at once. */
	CHECK_EQ_U64(pa_pcp_set_high(pool, 0, PA_ZONE_DMA32, 0, info.high_min), 0);
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info, NULL) == 0);
	CHECK(info.count <= info.high_min);
	CHECK_EQ_U64(pa_pcp_set_high(pool, 0, PA_ZONE_DMA32, 0, info.high_max + 1), -ERANGE);
	CHECK_EQ_U64(pa_pcp_set_high(pool, 0, PA_ZONE_DMA32, 0, info.high_min - 1), -ERANGE);
	CHECK_EQ_U64(pa_pcp_set_high(pool, 0, PA_ZONE_DMA32, 1, high), -ENOENT);
	CHECK_EQ_U64(pa_pcp_set_high(pool, 0, PA_ZONE_NORMAL, 0, high), -ENOENT);
	CHECK_EQ_U64(pa_pcp_set_high(NULL, 0, PA_ZONE_DMA32, 0, high), -EINVAL);
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info, NULL) == 0);
	CHECK_EQ_U64(info.high, info.high_min);
	VALIDATE(pool);
	free(pages);
	pa_shutdown(pool);
	pool = test_boot("mem=256M nr_cpus=1 pcp_rules=6.1");
	CHECK_EQ_U64(pa_pcp_set_high(pool, 0, PA_ZONE_DMA32, 0, 100), -EOPNOTSUPP);
	pa_shutdown(pool);
}

/*
 * pa_pcp_free_on(): a block goes on the CPU and list asked for, whatever its
 * pageblock's type, and a spill returns it to its pageblock's free list. A
 * block no free could put on a list is refused untouched.
 */
TEST(pcp_free_on_puts_a_block_on_the_list_asked_for)
{
	struct pa_pool *pool = test_boot("mem=256M nr_cpus=2 linux=7.2");
	REQUIRE(pa_ctl_write(pool, "pcp/huge_direct", "0") == 0); /* a THP waits on a list too */
	struct pa_page *p = pa_alloc_pages(pool, PA_GFP_KERNEL, 0);
	struct pa_page *thp = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_COMP, 9);
	REQUIRE(p && thp);
	pa_pfn_t pfn = pa_page_to_pfn(pool, p);
	REQUIRE(pageblock_mt(pool, pfn) == PA_MT_UNMOVABLE);
	pa_drain_all(pool);
	struct pa_pcp_info info;
	uint64_t blocks[64 * 3] = { 0 };
	CHECK_EQ_U64(pa_pcp_free_on(pool, p, 0, 1, PA_MT_RECLAIMABLE), 0);
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 1, &info, blocks) == 0);
	CHECK_EQ_U64(info.count, 1);
	CHECK_EQ_U64(blocks[0 * 3 + PA_MT_RECLAIMABLE], 1);
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info, NULL) == 0);
	REQUIRE(pa_pcp_set_high(pool, 0, PA_ZONE_DMA32, 0, info.high_max) == 0);
	CHECK_EQ_U64(pa_pcp_free_on(pool, thp, 9, 0, PA_MT_UNMOVABLE), 0);
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info, blocks) == 0);
	CHECK_EQ_U64(blocks[9 * 3 + PA_MT_UNMOVABLE], 1);
	VALIDATE(pool);
	/* Refused, nothing changed: a block already free, bad arguments. */
	CHECK_EQ_U64(pa_pcp_free_on(pool, p, 0, 0, PA_MT_MOVABLE), -EPERM);
	CHECK_EQ_U64(pa_pcp_free_on(NULL, p, 0, 0, PA_MT_MOVABLE), -EINVAL);
	CHECK_EQ_U64(pa_pcp_free_on(pool, NULL, 0, 0, PA_MT_MOVABLE), -EINVAL);
	CHECK_EQ_U64(pa_pcp_free_on(pool, p, 0, 2, PA_MT_MOVABLE), -EINVAL);
	CHECK_EQ_U64(pa_pcp_free_on(pool, p, 0, 0, PA_MT_HIGHATOMIC), -EINVAL);
	struct pa_page *q = pa_alloc_pages(pool, PA_GFP_MOVABLE, 1);
	REQUIRE(q);
	CHECK_EQ_U64(pa_pcp_free_on(pool, pa_pfn_to_page(pool, pa_page_to_pfn(pool, q) + 1), 1, 0,
	                            PA_MT_MOVABLE),
	             -EINVAL); /* no block of order 1 starts there */
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 1, &info, blocks) == 0);
	CHECK_EQ_U64(blocks[0 * 3 + PA_MT_RECLAIMABLE], 1);
	VALIDATE(pool);
	/* Given back, each lands by its pageblock's type (the validation checks). */
	pa_drain_all(pool);
	pa_free_pages(pool, q, 1);
	VALIDATE(pool);
	pa_shutdown(pool);
}

/*
 * pa_pcp_free_on() restores what a list held: no free of the CPU's, so a
 * long run of order-1 blocks put back does not empty the lists (Linux 6.7's
 * rule for a run of high-order frees), and the first real order-1 free
 * after it does not either: the run's count was not fed. The lists still
 * spill past high.
 */
TEST(pcp_free_on_restores_without_counting_a_run_of_frees)
{
	struct pa_pool *pool = test_boot("mem=256M nr_cpus=1 linux=7.2");
	enum { N = 1500 };
	static struct pa_page *blocks[N];
	for (unsigned i = 0; i < N; i++)
		REQUIRE((blocks[i] = pa_alloc_pages(pool, PA_GFP_MOVABLE, 1)) != NULL);
	struct pa_page *last = pa_alloc_pages(pool, PA_GFP_MOVABLE, 1);
	REQUIRE(last);
	pa_drain_all(pool);
	struct pa_pcp_info pi;
	for (unsigned i = 0; i < N; i++)
		CHECK_EQ_U64(pa_pcp_free_on(pool, blocks[i], 1, 0, PA_MT_MOVABLE), 0);
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &pi, NULL) == 0);
	uint64_t restored = pi.count, run_cap = 2 * pi.batch + pi.high_min / 2;
	CHECK_MSG(restored > 2 * run_cap, "%llu on the lists", (unsigned long long)restored);
	CHECK_MSG(restored <= pi.high, "%llu on the lists, high %llu", (unsigned long long)restored,
	          (unsigned long long)pi.high);
	pa_free_pages(pool, last, 1);
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &pi, NULL) == 0);
	CHECK_MSG(pi.count + pi.batch >= restored, "%llu on the lists after a free, %llu before",
	          (unsigned long long)pi.count, (unsigned long long)restored);
	VALIDATE(pool);
	pa_shutdown(pool);
}

/*
 * pcp/decay_external=1: the embedder runs Linux's vmstat worker. A refill a
 * second later decays nothing; pa_pcp_decay() lowers high by an eighth
 * (decay_pcp_high(): max(count - (batch << 5), high - high / 8, high_min))
 * and gives back what the lists hold above it. Under 6.1's rules high is
 * fixed and it does nothing; a NULL pool or a CPU out of range is refused.
 */
/*
 * Linux's decay_pcp_high() gives back what is above the lowered high
 * through free_pcppages_bulk() from list 0 (order 0, unmovable) on, a
 * batch at a time: the unmovable frames go first, the movable ones stay
 * (a recorded kernel's vmstat worker drains show the same order).
 */
TEST(pcp_decay_gives_back_the_unmovable_list_first)
{
	struct pa_pool *pool = boot_with("mem=256M max_order=10 nr_cpus=1", true);
	REQUIRE(pa_ctl_write(pool, "pcp/decay_external", "1") == 0);
	char fresh[BI_LEN];
	buddyinfo(pool, fresh, sizeof fresh);
	struct pa_pcp_info info;
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info, NULL) == 0);
	REQUIRE(pa_pcp_set_high(pool, 0, PA_ZONE_DMA32, 0, info.high_max) == 0);
	enum { N = 2000 };
	static struct pa_page *u[N], *m[N];
	for (unsigned i = 0; i < N; i++) {
		REQUIRE((u[i] = pa_alloc_pages(pool, PA_GFP_KERNEL, 0)) != NULL);
		REQUIRE((m[i] = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0)) != NULL);
	}
	for (unsigned i = 0; i < N; i++) {
		pa_free_pages(pool, u[i], 0);
		pa_free_pages(pool, m[i], 0);
	}
	uint64_t before[64] = { 0 }, after[64] = { 0 };
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info, before) == 0);
	REQUIRE(before[PA_MT_UNMOVABLE] >= N && before[PA_MT_MOVABLE] >= N);
	/* high at what the lists hold: the decay lowers it by the lesser of an eighth and 32 batches. */
	REQUIRE(pa_pcp_set_high(pool, 0, PA_ZONE_DMA32, 0, info.count) == 0);
	uint64_t count = info.count;
	REQUIRE(pa_pcp_decay(pool, 0) == 0);
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info, after) == 0);
	uint64_t gone = count - info.count;
	CHECK_MSG(gone > 0 && gone < before[PA_MT_UNMOVABLE], "%" PRIu64 " frames given back",
	          gone);
	CHECK_EQ_U64(after[PA_MT_UNMOVABLE], before[PA_MT_UNMOVABLE] - gone);
	CHECK_EQ_U64(after[PA_MT_MOVABLE], before[PA_MT_MOVABLE]);
	VALIDATE(pool);
	pa_drain_all(pool);
	expect_whole(pool, fresh);
	pa_shutdown(pool);
}

TEST(pcp_decay_external_leaves_the_decay_to_pa_pcp_decay)
{
	struct decay_case d;
	decay_case_start(&d, "pcp/decay_external");
	struct pa_pool *pool = d.pool;
	atomic_fetch_add(&fake_ns, 1000000000ull);
	struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE, 1); /* a refill: no decay */
	REQUIRE(p);
	struct pa_pcp_info info;
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info, NULL) == 0);
	CHECK_MSG(info.high >= d.high0, "high %" PRIu64 " decayed from %" PRIu64, info.high,
	          d.high0);
	uint64_t count0 = info.count, want = info.high - info.high / 8;
	if (count0 > (info.batch << 5) && count0 - (info.batch << 5) > want)
		want = count0 - (info.batch << 5);
	want = want < info.high_min ? info.high_min : want;
	/* What the decay will give back, asked first, changes nothing. */
	long frames = pa_pcp_decay_frames(pool, 0);
	CHECK_EQ_U64((uint64_t)frames, count0 > want ? count0 - want : 0);
	uint64_t high0 = info.high;
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info, NULL) == 0);
	CHECK_EQ_U64(info.high, high0);
	CHECK_EQ_U64(info.count, count0);
	CHECK_EQ_U64(pa_pcp_decay(pool, 0), 0);
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info, NULL) == 0);
	CHECK_EQ_U64(info.high, want);
	CHECK_EQ_U64(count0 - info.count, (uint64_t)frames);
	CHECK_MSG(info.count <= info.high && info.count + info.batch > info.high - 2,
	          "count %" PRIu64 " after a decay to %" PRIu64 " (from %" PRIu64 ")", info.count,
	          info.high, count0);
	/* The other CPU's lists are its own. */
	struct pa_pcp_info other;
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 1, &other, NULL) == 0);
	uint64_t other_high = other.high;
	CHECK_EQ_U64(pa_pcp_decay(NULL, 0), (uint64_t)-EINVAL);
	CHECK_EQ_U64(pa_pcp_decay(pool, 2), (uint64_t)-EINVAL);
	CHECK_EQ_U64((uint64_t)pa_pcp_decay_frames(NULL, 0), (uint64_t)-EINVAL);
	CHECK_EQ_U64((uint64_t)pa_pcp_decay_frames(pool, 2), (uint64_t)-EINVAL);
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 1, &other, NULL) == 0);
	CHECK_EQ_U64(other.high, other_high);
	REQUIRE(pa_ctl_write(pool, "pcp/rules", "6.1") == 0);
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info, NULL) == 0);
	uint64_t fixed = info.high;
	CHECK_EQ_U64(pa_pcp_decay_frames(pool, 0), 0);
	CHECK_EQ_U64(pa_pcp_decay(pool, 0), 0);
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info, NULL) == 0);
	CHECK_EQ_U64(info.high, fixed);
	decay_case_end(&d, p);
}

/*
 * Linux 6.7's free side (nr_pcp_high(), nr_pcp_free()): frees in a row are
 * counted up to batch << 5; a free that fills the lists spills
 * clamp(frees in a row, batch, high - batch) at the high it met and raises
 * high to a batch more than the frees in a row (up to high_max); an
 * allocation halves the count, so the next run's first spill starts from
 * batch << 4, not from a count that went on past the cap.
 */
TEST(pcp_a_run_of_frees_raises_high_and_scales_the_spills)
{
	struct pa_pool *pool = boot_with("mem=256M max_order=10 nr_cpus=2", true);
	REQUIRE(pa_ctl_write(pool, "pcp/decay_external", "1") == 0); /* no decay in between */
	char fresh[BI_LEN];
	buddyinfo(pool, fresh, sizeof fresh);
	struct pa_zone *z = cpu_zone(pool, 0, PA_GFP_MOVABLE);
	struct snap s;
	snap_of(pool, z, 0, &s);
	uint64_t batch = s.info.batch, cap = batch << 5, nr = 4 * s.info.high_max;
	struct pa_page **blk = blocks_from_cpu1(pool, nr, 0);
	snap_of(pool, z, 0, &s);
	REQUIRE(s.info.count == 0);
	uint64_t run = 0, spills = 0, i = 0;
	for (; i < nr - 8 * cap; i++) {
		uint64_t count = s.info.count, high = s.info.high;
		pa_free_pages(pool, blk[i], 0);
		run++;
		snap_of(pool, z, 0, &s);
		if (s.info.count > count)
			continue;
		uint64_t fc = run < cap ? run : cap, want = fc + batch,
		         spill = count + 1 - s.info.count;
		want = want < high ? high : want > s.info.high_max ? s.info.high_max : want;
		uint64_t lo = batch, hi = high - batch,
		         want_spill = fc < lo ? lo :
		                      fc > hi ? hi :
		                                fc;
		CHECK_MSG(s.info.high == want && spill >= want_spill && spill < want_spill + batch,
		          "spill %" PRIu64 " after %" PRIu64 " frees in a row at high %" PRIu64
		          ": high now %" PRIu64 " (expected %" PRIu64 "), %" PRIu64
		          " frames spilled (expected %" PRIu64 ")",
		          spills, run, high, s.info.high, want, spill, want_spill);
		spills++;
	}
	CHECK(spills > 2 && s.info.high > s.info.high_min);
	/* One allocation halves the count: the next spill starts from batch << 4. */
	struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0);
	REQUIRE(p);
	snap_of(pool, z, 0, &s);
	uint64_t after = 0;
	for (; i < nr; i++) {
		uint64_t count = s.info.count;
		pa_free_pages(pool, blk[i], 0);
		after++;
		snap_of(pool, z, 0, &s);
		if (s.info.count > count)
			continue;
		uint64_t spill = count + 1 - s.info.count;
		uint64_t fc = (cap >> 1) + after < cap ? (cap >> 1) + after : cap;
		CHECK_MSG(spill < fc + batch,
		          "%" PRIu64 " frames spilled %" PRIu64
		          " frees after the allocation (expected about %" PRIu64 ")",
		          spill, after, fc);
		break;
	}
	CHECK(i < nr);
	for (i++; i < nr; i++)
		pa_free_pages(pool, blk[i], 0);
	pa_free_pages(pool, p, 0);
	VALIDATE(pool);
	free(blk);
	pa_drain_all(pool);
	expect_whole(pool, fresh);
	pa_shutdown(pool);
}

/*
 * Spills take the oldest blocks first (Linux's free_pcppages_bulk() takes
 * list_last_entry()): after a run of frees past high, what is still on the
 * list is the most recently freed, a suffix of the run, and the blocks
 * before it went back to the buddy; allocations then take the newest first.
 */
TEST(pcp_spills_give_back_the_oldest_blocks_first)
{
	struct pa_pool *pool = pcp_boot("mem=256M max_order=10 nr_cpus=2");
	char fresh[BI_LEN];
	buddyinfo(pool, fresh, sizeof fresh);
	struct pa_zone *z = cpu_zone(pool, 0, PA_GFP_MOVABLE);
	struct snap s;
	snap_of(pool, z, 0, &s);
	uint64_t nr = 3 * s.info.high + 64;
	/* CPU 1 allocates; CPU 0, whose lists start empty, frees them all. */
	struct pa_page **blk = blocks_from_cpu1(pool, nr, 0);
	pa_pfn_t *pfn = malloc(nr * sizeof *pfn);
	REQUIRE(pfn);
	for (uint64_t i = 0; i < nr; i++) {
		pfn[i] = pa_page_to_pfn(pool, blk[i]);
		pa_free_pages(pool, blk[i], 0);
	}
	free(blk);
	snap_of(pool, z, 0, &s);
	REQUIRE(s.info.count > 0 && s.info.count < nr);
	uint64_t kept = 0, first_kept = nr;
	for (uint64_t i = 0; i < nr; i++)
		if (page_state(pfn_page(pool, pfn[i])) == PS_PCP) {
			kept++;
			first_kept = first_kept < i ? first_kept : i;
		}
	CHECK_EQ_U64(kept, s.info.count);
	/* The counters of what went between the lists and the buddy agree. */
	struct snap s1;
	snap_of(pool, z, 1, &s1);
	uint64_t refilled = 0, spilled = 0;
	REQUIRE(pa_vmstat_read(pool, "pcp_refill", &refilled) == 0);
	REQUIRE(pa_vmstat_read(pool, "pcp_spill", &spilled) == 0);
	CHECK_EQ_U64(refilled, nr + s1.info.count);
	CHECK_EQ_U64(spilled, nr - kept);
	CHECK_MSG(first_kept == nr - kept,
	          "%" PRIu64 " of %" PRIu64 " frees still listed, the oldest of them freed %" PRIu64
	          "th: not the last ones",
	          kept, nr, first_kept);
	/* The newest comes back first. */
	struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0);
	REQUIRE(p);
	CHECK_EQ_U64(pa_page_to_pfn(pool, p), pfn[nr - 1]);
	pa_free_pages(pool, p, 0);
	VALIDATE(pool);
	free(pfn);
	pa_drain_all(pool);
	expect_whole(pool, fresh);
	pa_shutdown(pool);
}

/*
 * A refill of a high order puts many frames on the list at once; the decay
 * that follows (max(count - (batch << 5), high - high / 8, high_min)) must
 * still leave high within [high_min, high_max] (Linux clamps it to them in
 * nr_pcp_high() before any use).
 */
TEST(pcp_high_stays_under_high_max_after_a_high_order_refill)
{
	struct pa_pool *pool = boot_with("mem=128M max_order=10 nr_cpus=4 pcp_orders=0-3,10", true);
	char fresh[BI_LEN];
	buddyinfo(pool, fresh, sizeof fresh);
	pose(0);
	struct pa_pcp_info info;
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info, NULL) == 0);
	printf("  high_min %" PRIu64 ", high_max %" PRIu64 ", batch %" PRIu64 "\n", info.high_min,
	       info.high_max, info.batch);
	atomic_fetch_add(&fake_ns, 2000000000ull); /* a decay is due at this refill */
	struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE, 10);
	REQUIRE(p);
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info, NULL) == 0);
	CHECK_MSG(info.high >= info.high_min && info.high <= info.high_max,
	          "after an order-10 refill: high %" PRIu64 " outside [%" PRIu64 ", %" PRIu64
	          "], %" PRIu64 " frames listed",
	          info.high, info.high_min, info.high_max, info.count);
	pa_free_pages(pool, p, 10);
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info, NULL) == 0);
	CHECK(info.high >= info.high_min && info.high <= info.high_max);
	expect_whole(pool, fresh);
	pa_shutdown(pool);
}

TEST(pcp_free_above_high_spills_back_to_the_buddy)
{
	struct pa_pool *pool = pcp_boot("mem=256M max_order=10 nr_cpus=2");
	char fresh[BI_LEN];
	buddyinfo(pool, fresh, sizeof fresh);
	struct pa_zone *z = cpu_zone(pool, 0, PA_GFP_MOVABLE);
	static const unsigned orders[] = { 0, 2 };
	for (size_t oi = 0; oi < 2; oi++) {
		unsigned o = orders[oi];
		struct snap s;
		snap_of(pool, z, 0, &s);
		uint64_t nr = (3 * s.info.high >> o) + 64;
		/* CPU 1 allocates; CPU 0, whose lists start empty, frees them all. */
		struct pa_page **blk = blocks_from_cpu1(pool, nr, o);
		uint64_t prev = s.info.count, spills = 0, max_drop = 0;
		for (uint64_t i = 0; i < nr; i++) {
			pa_free_pages(pool, blk[i], o);
			snap_of(pool, z, 0, &s);
			CHECK_MSG(s.info.count <= s.info.high + (1ull << o),
			          "order %u free %" PRIu64 ": %" PRIu64
			          " frames listed, high %" PRIu64,
			          o, i, s.info.count, s.info.high);
			CHECK_EQ_U64(snap_frames(pool, &s), s.info.count);
			if (s.info.count < prev + (1ull << o)) {
				spills++;
				uint64_t drop = prev + (1ull << o) - s.info.count;
				max_drop = drop > max_drop ? drop : max_drop;
			}
			prev = s.info.count;
		}
		printf("  order %u: %" PRIu64 " frees, %" PRIu64 " spills, largest %" PRIu64
		       " frames (batch %" PRIu64 ", high %" PRIu64 ")\n",
		       o, nr, spills, max_drop, s.info.batch, s.info.high);
		CHECK_MSG(spills > 0, "order %u: %" PRIu64 " frees past high never spilled", o, nr);
		/* Frees in a row scale the spill past one batch (Linux's nr_pcp_free). */
		CHECK_MSG(max_drop > s.info.batch,
		          "order %u: no spill larger than a batch (%" PRIu64 ")", o, max_drop);
		struct pa_usage u = usage(pool);
		CHECK_EQ_U64(u.allocated, 0);
		CHECK_EQ_U64(u.reserved, all_list_frames(pool));
		CHECK_EQ_U64(u.free + u.reserved, u.managed);
		VALIDATE(pool);
		pa_drain_all(pool);
		free(blk);
	}
	expect_whole(pool, fresh);
	pa_shutdown(pool);
}

/* The most frames one CPU's lists held over nr order-0 allocations of gfp, then freed in a row;
 * *drop: the largest spill. */
static uint64_t stream_peak(struct pa_pool *pool, pa_gfp_t gfp, uint64_t nr, uint64_t *drop)
{
	struct pa_page **blk = malloc(nr * sizeof *blk);
	REQUIRE(blk);
	struct pa_pcp_info info;
	uint64_t peak = 0;
	for (uint64_t i = 0; i < nr; i++) {
		blk[i] = pa_alloc_pages(pool, gfp, 0);
		REQUIRE(blk[i]);
		REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info, NULL) == 0);
		peak = info.count > peak ? info.count : peak;
		CHECK(info.count <= info.high);
	}
	uint64_t prev = info.count;
	*drop = 0;
	for (uint64_t i = 0; i < nr; i++) {
		pa_free_pages(pool, blk[i], 0);
		REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info, NULL) == 0);
		if (info.count + 1 < prev && prev + 1 - info.count > *drop)
			*drop = prev + 1 - info.count;
		prev = info.count;
	}
	VALIDATE(pool);
	pa_drain_all(pool);
	free(blk);
	return peak;
}

/* pcp/stream_refill=1 (the default) against 0 (Linux's cap). */
TEST(pcp_a_streaming_cpu_goes_past_linuxs_batch_scale_but_keeps_movable_refills_to_it)
{
	/* high fixed at 1/8 of the zone per CPU, so that room never caps the scale. */
	struct pa_pool *pool = pcp_boot("mem=1G max_order=10 nr_cpus=2");
	REQUIRE(pa_ctl_write(pool, "pcp/high_fraction", "8") == 0);
	char fresh[BI_LEN];
	buddyinfo(pool, fresh, sizeof fresh);
	struct pa_pcp_info info;
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info, NULL) == 0);
	uint64_t linux_max = info.batch << 5, nr = info.high * 2, drop[2];
	/* The first stream claims pageblocks for unmovable by fallback, a Linux batch at a time;
	 * the second finds them free on its own lists. */
	uint64_t unmovable = stream_peak(pool, PA_GFP_KERNEL, nr, &drop[0]);
	CHECK(unmovable <= linux_max);
	unmovable = stream_peak(pool, PA_GFP_KERNEL, nr, &drop[0]);
	uint64_t movable = stream_peak(pool, PA_GFP_MOVABLE, nr, &drop[1]);
	printf("  batch << 5 = %" PRIu64 " frames, high %" PRIu64 ": lists peaked at %" PRIu64
	       " (unmovable), %" PRIu64 " (movable); largest spills %" PRIu64 ", %" PRIu64 "\n",
	       linux_max, info.high, unmovable, movable, drop[0], drop[1]);
	CHECK_MSG(unmovable > linux_max, "unmovable refills stopped at %" PRIu64, unmovable);
	CHECK_MSG(movable <= linux_max, "a movable refill took %" PRIu64 " frames", movable);
	/* Spills stop at Linux's scale: one spill merges frame by frame under the zone lock. */
	CHECK_MSG(drop[0] <= linux_max && drop[1] <= linux_max,
	          "a spill gave back %" PRIu64 " or %" PRIu64 " frames", drop[0], drop[1]);
	CHECK_MSG(drop[1] > info.batch, "frees in a row spilled at most %" PRIu64, drop[1]);
	/* pcp/stream_refill=0: Linux's cap for every type (a replay's setting). */
	REQUIRE(pa_ctl_write(pool, "pcp/stream_refill", "0") == 0);
	unmovable = stream_peak(pool, PA_GFP_KERNEL, nr, &drop[0]);
	CHECK_MSG(unmovable <= linux_max, "stream_refill=0: unmovable lists peaked at %" PRIu64,
	          unmovable);
	expect_whole(pool, fresh);
	pa_shutdown(pool);
}

TEST(pcp_refill_hands_out_runs_of_consecutive_frames)
{
	/* A refill takes whole blocks and cuts them up: the lowest frame is handed out first. */
	struct pa_pool *pool = pcp_boot("mem=256M max_order=10 nr_cpus=2");
	char fresh[BI_LEN];
	buddyinfo(pool, fresh, sizeof fresh);
	pose(0);
	struct pa_page *first = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0);
	REQUIRE(first);
	struct snap s;
	snap_of(pool, cpu_zone(pool, 0, PA_GFP_MOVABLE), 0, &s);
	uint64_t listed = s.info.count, run = 1;
	struct pa_page **blk = malloc((listed + 1) * sizeof *blk);
	REQUIRE(blk);
	blk[0] = first;
	for (uint64_t i = 1; i <= listed; i++) {
		blk[i] = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0);
		REQUIRE(blk[i]);
		run += pa_page_to_pfn(pool, blk[i]) == pa_page_to_pfn(pool, blk[i - 1]) + 1;
	}
	printf("  refill of %" PRIu64 " frames: %" PRIu64 " handed out in rising order\n",
	       listed + 1, run);
	CHECK_MSG(run > listed / 2, "only %" PRIu64 " of %" PRIu64 " frames follow the one before",
	          run, listed + 1);
	VALIDATE(pool);
	for (uint64_t i = 0; i <= listed; i++)
		pa_free_pages(pool, blk[i], 0);
	free(blk);
	expect_whole(pool, fresh);
	pa_shutdown(pool);
}

TEST(pcp_spills_of_blocks_freed_in_any_order_merge_back_whole)
{
	/* Spills merge the blocks they give back among themselves first; in any order, the buddy
	 * must end as it began. */
	struct pa_pool *pool = pcp_boot("mem=256M max_order=10 nr_cpus=2");
	char fresh[BI_LEN];
	buddyinfo(pool, fresh, sizeof fresh);
	uint64_t seed = test_seed(), r = seed;
	printf("  seed %" PRIu64 "\n", seed);
	uint64_t nr = scaled(20000, 2000);
	struct pa_page **blk = malloc(nr * sizeof *blk);
	unsigned *order = malloc(nr * sizeof *order);
	REQUIRE(blk && order);
	pose(1);
	for (uint64_t i = 0; i < nr; i++) {
		order[i] = rnd(&r) % 4 == 0 ? (unsigned)(rnd(&r) % 4) : 0;
		blk[i] = pa_alloc_pages(pool, type_gfp[i % PA_NR_PCP_TYPES], order[i]);
		REQUIRE(blk[i]);
	}
	/* Shuffled in stretches: runs rising, runs falling, and scattered frees. */
	for (uint64_t i = 0; i + 1 < nr; i++) {
		if (rnd(&r) % 3)
			continue;
		uint64_t j = i + rnd(&r) % (nr - i);
		struct pa_page *t = blk[i];
		unsigned to = order[i];
		blk[i] = blk[j], order[i] = order[j];
		blk[j] = t, order[j] = to;
	}
	pose(0);
	for (uint64_t i = 0; i < nr; i++) {
		pa_free_pages(pool, blk[i], order[i]);
		if (i % (nr / 8) == 0)
			VALIDATE(pool);
	}
	struct pa_usage u = usage(pool);
	CHECK_EQ_U64(u.allocated, 0);
	CHECK_EQ_U64(u.free + u.reserved, u.managed);
	free(blk);
	free(order);
	expect_whole(pool, fresh);
	pa_shutdown(pool);
}

/* --- Bad frees, init_on_free and zeroing on the fast path -------------------------- */

static bool report_names_pfn(pa_pfn_t pfn)
{
	char want[48];
	snprintf(want, sizeof want, "pfn %" PRIu64 ":", (uint64_t)pfn);
	pthread_mutex_lock(&report_mutex);
	bool ok = strstr(last_report, want) != NULL;
	pthread_mutex_unlock(&report_mutex);
	return ok;
}

/* A free that must be refused: one report naming pfn, bad_page + 1, nothing else changed. */
static void expect_refused(struct pa_pool *pool, struct pa_page *page, unsigned order, pa_pfn_t pfn,
                           const char *what)
{
	unsigned nz = pool->nr_zones, cpus = pool->cfg.nr_cpus;
	struct snap *b = calloc(nz * cpus, sizeof *b), *a = calloc(nz * cpus, sizeof *a);
	REQUIRE(a && b);
	for (unsigned i = 0; i < nz; i++)
		for (unsigned c = 0; c < cpus; c++)
			snap_of(pool, &pool->zones[i], c, &b[i * cpus + c]);
	struct pa_usage u0 = usage(pool);
	char bi0[BI_LEN], bi1[BI_LEN];
	buddyinfo(pool, bi0, sizeof bi0);
	int lines0 = atomic_load(&report_lines);
	uint64_t bad0 = vmstat(pool, "bad_page");
	pa_free_pages(pool, page, order);
	CHECK_MSG(atomic_load(&report_lines) == lines0 + 1, "%s: %d report lines", what,
	          atomic_load(&report_lines) - lines0);
	CHECK_MSG(report_names_pfn(pfn), "%s: report \"%s\" does not name pfn %" PRIu64, what,
	          last_report, (uint64_t)pfn);
	CHECK_MSG(vmstat(pool, "bad_page") == bad0 + 1, "%s: bad_page not counted", what);
	for (unsigned i = 0; i < nz; i++)
		for (unsigned c = 0; c < cpus; c++) {
			snap_of(pool, &pool->zones[i], c, &a[i * cpus + c]);
			CHECK_MSG(snap_equal(pool, &a[i * cpus + c], &b[i * cpus + c]),
			          "%s: zone %u CPU %u lists changed", what, i, c);
		}
	struct pa_usage u1 = usage(pool);
	CHECK_MSG(!memcmp(&u0, &u1, sizeof u0), "%s: usage changed", what);
	buddyinfo(pool, bi1, sizeof bi1);
	CHECK_MSG(!strcmp(bi0, bi1), "%s: buddyinfo changed", what);
	free(a);
	free(b);
	VALIDATE(pool);
}

TEST(pcp_double_free_of_a_listed_block_is_refused)
{
	struct pa_pool *pool = pcp_boot("mem=256M max_order=10 nr_cpus=2");
	REQUIRE(pcp_set_high_fraction(pool, 8) ==
	        0); /* high 4096 frames: an order-9 free stays listed */
	char fresh[BI_LEN];
	buddyinfo(pool, fresh, sizeof fresh);
	static const unsigned orders[] = { 0, 3, 9 };
	for (size_t i = 0; i < 3; i++) {
		unsigned o = orders[i];
		pose(0);
		struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE, o);
		REQUIRE(p);
		pa_pfn_t pfn = pa_page_to_pfn(pool, p);
		if (o >= pool->cfg.pageblock_order) /* a huge block waits only on an empty list */
			pcp_drain_cpu(cpu_zone(pool, 0, PA_GFP_MOVABLE), 0, 1ull << o);
		pa_free_pages(pool, p, o);
		REQUIRE(page_state(pfn_page(pool, pfn)) == PS_PCP);
		/* On the CPU whose list holds it, and on another CPU's fast path. */
		for (unsigned cpu = 0; cpu < 2; cpu++) {
			char what[96];
			snprintf(what, sizeof what,
			         "double free of a listed order-%u block on CPU %u", o, cpu);
			pose(cpu);
			expect_refused(pool, p, o, pfn, what);
			CHECK_EQ_U64(page_state(pfn_page(pool, pfn)), PS_PCP);
		}
	}
	/* A wrong order and a tail frame of an allocated block, on the fast path. */
	pose(0);
	struct pa_page *q = pa_alloc_pages(pool, PA_GFP_MOVABLE, 2);
	REQUIRE(q);
	pa_pfn_t qp = pa_page_to_pfn(pool, q);
	expect_refused(pool, q, 1, qp, "free of an order-2 block as order 1");
	expect_refused(pool, q, 3, qp, "free of an order-2 block as order 3");
	expect_refused(pool, pa_pfn_to_page(pool, qp + 1), 0, qp + 1, "free of a tail frame");
	pa_free_pages(pool, q, 2);
	CHECK_EQ_U64(page_state(pfn_page(pool, qp)), PS_PCP);
	expect_whole(pool, fresh);
	pa_shutdown(pool);
}

static bool bytes_are(const uint8_t *b, size_t n, uint8_t v)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != v)
			return false;
	return true;
}

TEST(pcp_init_on_free_and_gfp_zero_hold_through_the_lists)
{
	static const unsigned orders[] = { 0, 2, 3 };
	struct pa_pool *pool =
	        pcp_boot("mem=64M max_order=10 nr_cpus=2 backing=anon init_on_free=1");
	char fresh[BI_LEN];
	buddyinfo(pool, fresh, sizeof fresh);
	pose(0);
	struct pa_zone *z = cpu_zone(pool, 0, PA_GFP_MOVABLE);
	for (size_t i = 0; i < 3; i++) {
		unsigned o = orders[i];
		size_t bytes = (size_t)1 << (pool->cfg.page_shift + o);
		struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE, o);
		REQUIRE(p);
		uint8_t *mem = pa_page_address(pool, p);
		REQUIRE(mem);
		pa_pfn_t pfn = pa_page_to_pfn(pool, p);
		memset(mem, 0xa5, bytes);
		uint64_t f0 = ops_free(z, 0, o), fc0 = z->pcp[0]->free_count;
		pa_free_pages(pool, p, o);
		CHECK_MSG(ops_free(z, 0, o) == f0 + 1, "order %u: the free did not go to the list",
		          o);
		CHECK_EQ_U64(z->pcp[0]->free_count, fc0 + (1u << o)); /* frees in a row, as any */
		CHECK_EQ_U64(page_state(pfn_page(pool, pfn)), PS_PCP);
		CHECK_MSG(bytes_are(mem, bytes, 0),
		          "init_on_free: order %u block on the list is not wiped", o);
		struct pa_page *q = pa_alloc_pages(pool, PA_GFP_MOVABLE, o);
		REQUIRE(q);
		CHECK_EQ_U64(pa_page_to_pfn(pool, q), pfn);
		CHECK_MSG(bytes_are(pa_page_address(pool, q), bytes, 0),
		          "init_on_free: order %u came back dirty", o);
		pa_free_pages(pool, q, o);
	}
	expect_whole(pool, fresh);
	pa_shutdown(pool);

	pool = pcp_boot("mem=64M max_order=10 nr_cpus=2 backing=anon");
	buddyinfo(pool, fresh, sizeof fresh);
	z = cpu_zone(pool, 0, PA_GFP_MOVABLE);
	for (size_t i = 0; i < 3; i++) {
		unsigned o = orders[i];
		size_t bytes = (size_t)1 << (pool->cfg.page_shift + o);
		struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE, o);
		REQUIRE(p);
		pa_pfn_t pfn = pa_page_to_pfn(pool, p);
		memset(pa_page_address(pool, p), 0xa5, bytes);
		pa_free_pages(pool, p, o);
		uint64_t a0 = ops_alloc(z, 0, o);
		struct pa_page *q = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_ZERO, o);
		REQUIRE(q);
		CHECK_MSG(ops_alloc(z, 0, o) == a0 + 1 && pa_page_to_pfn(pool, q) == pfn,
		          "order %u: PA_GFP_ZERO was not served by the list's hot block", o);
		CHECK_MSG(bytes_are(pa_page_address(pool, q), bytes, 0),
		          "PA_GFP_ZERO: order %u block from the list is dirty", o);
		memset(pa_page_address(pool, q), 0x5a, bytes);
		pa_free_pages(pool, q, o);
		struct pa_page *r = pa_alloc_pages(pool, PA_GFP_MOVABLE, o);
		REQUIRE(r);
		if (pa_page_to_pfn(pool, r) != pfn ||
		    !bytes_are(pa_page_address(pool, r), bytes, 0x5a))
			printf("  note: order %u without PA_GFP_ZERO did not return the dirty hot block\n",
			       o);
		pa_free_pages(pool, r, o);
	}
	expect_whole(pool, fresh);
	pa_shutdown(pool);
}

/* --- Capacity: frames on other CPUs' lists are not lost to an allocation ---------- */

TEST(pcp_allocation_drains_other_cpus_lists_before_failing)
{
	struct pa_pool *pool = pcp_boot("mem=64M max_order=10 nr_cpus=2 min_free_kbytes=0");
	char fresh[BI_LEN];
	buddyinfo(pool, fresh, sizeof fresh);
	uint64_t managed = usage(pool).managed;
	struct pa_page **all = malloc(managed * sizeof *all);
	REQUIRE(all);
	/* CPU 1's lists hold frames... */
	pose(1);
	for (unsigned i = 0; i < 200; i++) {
		all[i] = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0);
		REQUIRE(all[i]);
	}
	for (unsigned i = 0; i < 200; i++)
		pa_free_pages(pool, all[i], 0);
	CHECK(all_list_frames(pool) > 0);
	/*
	 * ...and CPU 0 still gets every managed frame. A request that may
	 * reclaim drains (not PA_GFP_NOCOMPACT: Linux drains only in direct
	 * reclaim); with no owners registered there is nothing to compact.
	 */
	pose(0);
	uint64_t n = 0;
	alloc_order0_into(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, all, &n, managed);
	CHECK_EQ_U64(n, managed);
	/* Freed on CPU 1 again, the frames merge back for max-order allocations on CPU 0. */
	pose(1);
	for (uint64_t i = 0; i < n; i++)
		pa_free_pages(pool, all[i], 0);
	CHECK(all_list_frames(pool) > 0);
	pose(0);
	uint64_t big = 0;
	while (big < managed >> 10) {
		struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 10);
		if (!p)
			break;
		all[big++] = p;
	}
	CHECK_EQ_U64(big, managed >> 10);
	for (uint64_t i = 0; i < big; i++)
		pa_free_pages(pool, all[i], 10);
	free(all);
	expect_whole(pool, fresh);
	pa_shutdown(pool);
}

/* --- Bad control writes ------------------------------------------------------------- */

struct pcp_state {
	uint64_t mask;
	unsigned fraction;
	struct snap s[2];
	char bi[BI_LEN];
};

static void pcp_state_of(struct pa_pool *pool, struct pcp_state *st)
{
	st->mask = atomic_load(&pool->pcp_orders);
	st->fraction = atomic_load(&pool->pcp_high_fraction);
	struct pa_zone *z = cpu_zone(pool, 0, PA_GFP_MOVABLE);
	snap_of(pool, z, 0, &st->s[0]);
	snap_of(pool, z, 1, &st->s[1]);
	buddyinfo(pool, st->bi, sizeof st->bi);
}

TEST(pcp_ctl_bad_writes_fail_and_change_nothing)
{
	struct pa_pool *pool = pcp_boot("mem=256M max_order=10 nr_cpus=2");
	char fresh[BI_LEN];
	buddyinfo(pool, fresh, sizeof fresh);
	static const unsigned orders[] = { 0, 1, 3, 9 };
	fill_lists(pool, 0, orders, 4);
	fill_lists(pool, 1, orders, 4);
	pose(0);
	static const struct {
		const char *path, *value;
		int rc;
	} bad[] = {
		{ "pcp/orders", "1", -ENOENT },
		{ "pcp/orders/3", "1", -ENOENT },
		{ "pcp/orders/3/enable", "1", -ENOENT },
		{ "pcp/order/3/enabled", "1", -ENOENT },
		{ "pcp/bogus", "1", -ENOENT },
		{ "pcp/orders/11/enabled", "1", -EINVAL },
		{ "pcp/orders/99/enabled", "1", -EINVAL },
		{ "pcp/orders/99/enabled", "0", -EINVAL },
		{ "pcp/orders/18446744073709551616/enabled", "1", -EINVAL },
		{ "pcp/orders/x/enabled", "1", -EINVAL },
		{ "pcp/orders/4/enabled", "2", -EINVAL },
		{ "pcp/orders/0/enabled", "abc", -EINVAL },
		{ "pcp/orders/0/enabled", "", -EINVAL },
		{ "pcp/orders/0/enabled", "-1", -EINVAL },
		{ "pcp/orders/0/enabled", "0x", -EINVAL },
		{ "pcp/orders/4/enabled", "1abc", -EINVAL },
		{ "pcp/orders/0/enabled", "0 0", -EINVAL },
		{ "pcp/high_fraction", "7", -EINVAL },
		{ "pcp/high_fraction", "-8", -EINVAL },
	};
	static struct pcp_state before, after;
	pcp_state_of(pool, &before);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int rc = pa_ctl_write(pool, bad[i].path, bad[i].value);
		CHECK_MSG(rc == bad[i].rc, "pa_ctl_write(\"%s\", \"%s\") = %d, expected %d",
		          bad[i].path, bad[i].value, rc, bad[i].rc);
		pcp_state_of(pool, &after);
		CHECK_MSG(after.mask == before.mask && after.fraction == before.fraction &&
		                  snap_equal(pool, &after.s[0], &before.s[0]) &&
		                  snap_equal(pool, &after.s[1], &before.s[1]) &&
		                  !strcmp(after.bi, before.bi),
		          "pa_ctl_write(\"%s\", \"%s\") changed the per-CPU state", bad[i].path,
		          bad[i].value);
	}
	VALIDATE(pool);
	/* Good writes: sysctl-style whitespace is fine; 0 drains the order. */
	char buf[32];
	CHECK_EQ_U64(pa_ctl_write(pool, "pcp/orders/4/enabled", "1\n"), 0);
	CHECK(pa_ctl_read(pool, "pcp/orders/4/enabled", buf, sizeof buf) > 0 &&
	      !strcmp(buf, "1\n"));
	CHECK(order_in_mask(pool, 4));
	CHECK(all_list_blocks_of_order(pool, 0) > 0);
	CHECK_EQ_U64(pa_ctl_write(pool, "pcp/orders/0/enabled", " 0 "), 0);
	CHECK(pa_ctl_read(pool, "pcp/orders/0/enabled", buf, sizeof buf) > 0 &&
	      !strcmp(buf, "0\n"));
	CHECK(!order_in_mask(pool, 0));
	CHECK_EQ_U64(all_list_blocks_of_order(pool, 0), 0);
	CHECK_EQ_U64(pa_ctl_write(pool, "pcp/orders/10/enabled", "1"), 0); /* max_order itself */
	CHECK(order_in_mask(pool, 10));
	VALIDATE(pool);
	expect_whole(pool, fresh);
	pa_shutdown(pool);
}

/* --- Orders of 32 and above ------------------------------------------------------ */

/*
 * max_order=40 (the largest accepted) with the per-CPU lists on for orders
 * 32 and up: every order's arithmetic stays in 64 bits (UBSan checks the
 * shifts in `make test`). Blocks of those orders cannot exist in a pool of
 * 2^14 frames; asking for one fails cleanly, the lists, the drains and the
 * reports still walk every order, and the pool stays whole.
 */
TEST(pcp_orders_32_and_above_are_64_bit_safe_at_max_order_40)
{
	struct pa_pool *pool = pcp_boot(
	        "mem=1G page_shift=16 max_order=40 pcp_orders=0,13,32-40 min_free_kbytes=0");
	REQUIRE(pool->cfg.max_order == 40);
	char fresh[BI_LEN];
	buddyinfo(pool, fresh, sizeof fresh);
	for (unsigned o = 0; o <= 40; o++) {
		struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, o);
		CHECK_MSG((p != NULL) == (o <= 14), "order %u: %s", o, p ? "allocated" : "failed");
		if (p)
			pa_free_pages(pool, p, o);
		char path[64];
		snprintf(path, sizeof path, "pcp/orders/%u/enabled", o);
		REQUIRE(pa_ctl_write(pool, path, o % 2 ? "1" : "0") == 0);
	}
	struct pa_page *bulk[4];
	CHECK_EQ_U64(pa_alloc_pages_bulk(pool, PA_GFP_KERNEL | PA_GFP_NOWARN, 33, 4, bulk), 0);
	uint64_t blocks[(40 + 1) * PA_NR_PCP_TYPES];
	struct pa_pcp_info info;
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &info, blocks) == 0 ||
	        pa_pcp_info(pool, 0, PA_ZONE_NORMAL, 0, &info, blocks) == 0);
	for (int k = 0; k < PA_REPORT_COUNT; k++) {
		char *buf = malloc(1 << 20);
		REQUIRE(buf);
		CHECK(pa_report(pool, (enum pa_report_kind)k, 0, buf, 1 << 20) > 0);
		CHECK(pa_report(pool, (enum pa_report_kind)k, PA_REPORT_JSON, buf, 1 << 20) > 0);
		free(buf);
	}
	CHECK(pa_compact(pool, -1) >= 0);
	expect_whole(pool, fresh);
	pa_shutdown(pool);
}
