/* SPDX-License-Identifier: MIT */
/*
 * Kernel versions as data (src/linux.c): the boot key linux=VERSION, the
 * rules it selects, and each rule on its own in a small pool where two
 * versions must place or fail differently.
 *
 * Most cases boot "mem=64M max_order=9" with min_free_kbytes=0 and no
 * per-CPU lists: 32 pageblocks of 512 frames, each at first one free
 * order-9 block, every free frame in the buddy.
 */
#include "test.h"
#include "helpers.h"

#include "linux.h"
#include "memmap.h"
#include "pageblock.h"
#include "pcp.h"
#include "owner.h"

#define SMALL "min_free_kbytes=0 pcp_orders=none mem=64M max_order=9 "
#define PB    512u

static uint64_t pb_of(struct pa_pool *pool, pa_pfn_t pfn)
{
	return pfn >> pool->cfg.pageblock_order;
}

static uint64_t zone_stat(struct pa_pool *pool, enum pa_zone_stat s)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < pool->nr_zones; i++)
		n += pool->zones[i].stat[s];
	return n;
}

/* ---------------------------------------------------------------------- */
/* The boot key                                                            */
/* ---------------------------------------------------------------------- */

static void expect_boot_error(const char *line, const char *needle)
{
	struct pa_pool *pool = NULL;
	char err[256] = "";
	CHECK_MSG(pa_boot(line, NULL, &pool, err, sizeof err) != 0, "'%s' booted", line);
	CHECK_MSG(strstr(err, needle) != NULL, "'%s': error '%s' does not name '%s'", line, err,
	          needle);
	if (pool)
		pa_shutdown(pool);
}

TEST(linux_key_takes_every_change_up_to_its_version)
{
	static const struct {
		const char *key;
		unsigned version;
	} cases[] = { { "linux=6.1", 601 },
		      { "linux=6.7", 607 },
		      { "linux=6.10", 610 },
		      { "linux=6.14", 614 },
		      { "linux=6.15", 615 },
		      { "linux=6.17", 617 },
		      { "linux=6.18", 618 },
		      { "linux=6.19", 619 },
		      { "linux=7.2", 702 },
		      { "linux=6.1.192", 601 },
		      { "", 702 } };
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char line[128];
		snprintf(line, sizeof line, SMALL "%s", cases[i].key);
		struct pa_pool *pool = test_boot(line);
		CHECK_EQ_U64(pool->cfg.linux_version, cases[i].version);
		for (unsigned r = 0; r < LR_NR; r++)
			CHECK_MSG(linux_rule(pool, (enum linux_rule)r) ==
			                  (cases[i].version >= linux_rule_version(r)),
			          "%s: rule %s", line, linux_rule_name(r));
		pa_shutdown(pool);
	}
}

TEST(linux_key_refuses_versions_not_modelled)
{
	expect_boot_error(SMALL "linux=5.15", "linux");
	expect_boot_error(SMALL "linux=6.0", "linux");
	expect_boot_error(SMALL "linux=6.20", "linux");
	expect_boot_error(SMALL "linux=7.3", "linux");
	expect_boot_error(SMALL "linux=7", "linux");
	expect_boot_error(SMALL "linux=seven", "linux");
	/* Linux's defrag_mode came with 6.15. */
	expect_boot_error(SMALL "linux=6.14 linux_defrag_mode=1", "6.15");
	struct pa_pool *pool = test_boot(SMALL "linux=6.15 linux_defrag_mode=1");
	pa_shutdown(pool);
}

/* The per-CPU era follows the version; pcp_rules= still overrides it. */
TEST(linux_key_sets_the_per_cpu_rules_and_pcp_rules_overrides)
{
	static const struct {
		const char *line;
		const char *want;
	} cases[] = { { "linux=6.1", "6.1" },
		      { "linux=6.6", "6.1" },
		      { "linux=6.7", "6.7" },
		      { "linux=7.2", "6.7" },
		      { "linux=6.1 pcp_rules=6.7", "6.7" },
		      { "pcp_rules=6.1", "6.1" } };
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char line[128], buf[32];
		snprintf(line, sizeof line, "mem=64M %s", cases[i].line);
		struct pa_pool *pool = test_boot(line);
		REQUIRE(pa_ctl_read(pool, "pcp/rules", buf, sizeof buf) > 0);
		CHECK_MSG(strncmp(buf, cases[i].want, strlen(cases[i].want)) == 0,
		          "%s: pcp/rules %s", line, buf);
		struct pa_pcp_info pi;
		REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &pi, NULL) == 0);
		/* 6.1: high fixed at the low watermark's share; 6.7: a range to tune in. */
		CHECK_MSG((pi.high_min == pi.high_max) == (strcmp(cases[i].want, "6.1") == 0),
		          "%s: high_min %llu high_max %llu", line, (unsigned long long)pi.high_min,
		          (unsigned long long)pi.high_max);
		pa_shutdown(pool);
	}
}

TEST(linux_info_prints_the_rule_set_in_force)
{
	struct pa_pool *pool = test_boot(SMALL "linux=6.12");
	char *text = report(pool, PA_REPORT_INFO, 0);
	CHECK(strstr(text, "linux:") && strstr(text, "6.12"));
	CHECK(strstr(text, "freelist_hygiene") && strstr(text, "fallback_claim_or_smallest"));
	char *line = strstr(text, "fallback_claim_or_smallest");
	CHECK(line && strstr(line, "6.15") && strstr(line, "no"));
	line = strstr(text, "freelist_hygiene");
	CHECK(line && strstr(line, "yes"));
	free(text);
	char *js = report(pool, PA_REPORT_INFO, PA_REPORT_JSON);
	CHECK(strstr(js, "\"linux\":\"6.12\"") != NULL);
	CHECK(strstr(js, "\"linux_rules\"") != NULL);
	free(js);
	pa_shutdown(pool);
}

/* ---------------------------------------------------------------------- */
/* The fallback (6.15) and freelist hygiene (6.10)                         */
/* ---------------------------------------------------------------------- */

/*
 * Every pageblock allocated as movable, then two of them partly freed: *big
 * keeps one free order-7 block (128 of 512 frames free, the rest movable),
 * *small one free frame. Unmovable lists are empty.
 */
static void two_partial_movable_pageblocks(struct pa_pool *pool, pa_pfn_t *big, pa_pfn_t *small)
{
	pa_pfn_t blocks[64];
	unsigned n = 0;
	struct pa_page *p;
	while (n < 64 && (p = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 9)))
		blocks[n++] = pa_page_to_pfn(pool, p);
	REQUIRE(n >= 4);
	/* Nothing but two pageblocks comes back; the first keeps one frame free. */
	*small = blocks[0];
	*big = blocks[1];
	free_pfn(pool, *small, 9);
	for (unsigned o = 9; o-- > 0;)
		CHECK_EQ_U64(pb_of(pool, must_alloc(pool, PA_GFP_MOVABLE, o)), pb_of(pool, *small));
	free_pfn(pool, *big, 9);
	for (unsigned i = 0; i < 3; i++)
		CHECK_EQ_U64(pb_of(pool, must_alloc(pool, PA_GFP_MOVABLE, 7)), pb_of(pool, *big));
	VALIDATE(pool);
}

/* Where an order-0 unmovable request goes, and the list the rest of the block is on. */
struct fallback_outcome {
	uint64_t pb;         /* pageblock of the page */
	unsigned rest_list;  /* list of the free order-6 block left beside it, if any */
	uint64_t fallbacks;  /* claim + steal counted by the request */
	uint64_t fallbacks2; /* by a second unmovable request */
};

static struct fallback_outcome unmovable_fallback(const char *version, pa_pfn_t *big_out,
                                                  pa_pfn_t *small_out)
{
	char line[128];
	snprintf(line, sizeof line, SMALL "linux=%s", version);
	struct pa_pool *pool = test_boot(line);
	pa_pfn_t big, small;
	two_partial_movable_pageblocks(pool, &big, &small);
	struct fallback_outcome o = { 0 };
	uint64_t f0 = zone_stat(pool, PA_ZS_FALLBACK_CLAIM) + zone_stat(pool, PA_ZS_FALLBACK_STEAL);
	pa_pfn_t u = must_alloc(pool, PA_GFP_KERNEL, 0);
	uint64_t f1 = zone_stat(pool, PA_ZS_FALLBACK_CLAIM) + zone_stat(pool, PA_ZS_FALLBACK_STEAL);
	o.pb = pb_of(pool, u);
	o.fallbacks = f1 - f0;
	struct pa_page *rest = pfn_page(pool, (u & ~127ull) + 64);
	o.rest_list = rest->state == PS_FREE && rest->order == 6 ? rest->mt : UINT32_MAX;
	CHECK_EQ_U64(pageblock_mt(pool, u), PA_MT_MOVABLE); /* no pageblock was claimed */
	VALIDATE(pool);
	must_alloc(pool, PA_GFP_KERNEL, 0);
	o.fallbacks2 =
	        zone_stat(pool, PA_ZS_FALLBACK_CLAIM) + zone_stat(pool, PA_ZS_FALLBACK_STEAL) - f1;
	VALIDATE(pool);
	*big_out = big;
	*small_out = small;
	pa_shutdown(pool);
	return o;
}

/*
 * 6.1 takes the largest fallback block (the order-7 one), fails to claim its
 * pageblock and splits it on the unmovable lists: the next unmovable request
 * is served there without a fallback. 6.10 splits it on its own (movable)
 * list, so the next request falls back again. 6.15 takes the smallest: the
 * single free frame.
 */
/*
 * Reserved memory's pageblocks: Linux sets every pageblock it initialises
 * early to Movable; before 6.13 the reserved frames of the deferred part
 * (the zone that ends the node, past its first section) kept type 0,
 * Unmovable, and so did the free frames that share their pageblock.
 */
TEST(linux_61_leaves_reserved_pageblocks_unmovable_where_init_is_deferred)
{
	/* Normal is 4-8G and ends the node; DMA32 is set up early. */
	static const char *const reserve = "mem=8G deferred_init=1 memreserve=3000M-3002M "
	                                   "memreserve=4100M-4102M memreserve=6000M-6001M ";
	static const struct {
		const char *version;
		unsigned dma32, first_section, deferred;
	} cases[] = { { "linux=6.1", PA_MT_MOVABLE, PA_MT_MOVABLE, PA_MT_UNMOVABLE },
		      { "linux=6.12", PA_MT_MOVABLE, PA_MT_MOVABLE, PA_MT_UNMOVABLE },
		      { "linux=6.13", PA_MT_MOVABLE, PA_MT_MOVABLE, PA_MT_MOVABLE } };
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char line[192];
		snprintf(line, sizeof line, "%s%s", reserve, cases[i].version);
		struct pa_pool *pool = test_boot(line);
		pa_deferred_init_wait(pool);
		struct pa_pageblock_info pb;
		REQUIRE(pa_pageblock_info(pool, (3000ull << 8) >> 9, &pb) == 0);
		CHECK_MSG(pb.mt == cases[i].dma32, "%s: DMA32 type %u", line, pb.mt);
		REQUIRE(pa_pageblock_info(pool, (4100ull << 8) >> 9, &pb) == 0);
		CHECK_MSG(pb.mt == cases[i].first_section, "%s: first section type %u", line,
		          pb.mt);
		REQUIRE(pa_pageblock_info(pool, (6000ull << 8) >> 9, &pb) == 0);
		CHECK_MSG(pb.mt == cases[i].deferred, "%s: deferred type %u", line, pb.mt);
		/* The free half of the pageblock is on the lists of its type. */
		CHECK_EQ_U64(pb.free, PB / 2);
		VALIDATE(pool);
		pa_shutdown(pool);
	}
	/* Without deferred init every pageblock is set up early. */
	struct pa_pool *pool = test_boot("mem=8G deferred_init=0 memreserve=6000M-6001M linux=6.1");
	struct pa_pageblock_info pb;
	REQUIRE(pa_pageblock_info(pool, (6000ull << 8) >> 9, &pb) == 0);
	CHECK_EQ_U64(pb.mt, PA_MT_MOVABLE);
	pa_shutdown(pool);
}

TEST(linux_fallback_61_splits_the_largest_block_615_takes_the_smallest)
{
	pa_pfn_t big, small;
	struct fallback_outcome o61 = unmovable_fallback("6.1", &big, &small);
	CHECK_EQ_U64(o61.pb, big >> 9);
	CHECK_EQ_U64(o61.rest_list, PA_MT_UNMOVABLE);
	CHECK_EQ_U64(o61.fallbacks, 1);
	CHECK_EQ_U64(o61.fallbacks2, 0);

	struct fallback_outcome o610 = unmovable_fallback("6.10", &big, &small);
	CHECK_EQ_U64(o610.pb, big >> 9);
	CHECK_EQ_U64(o610.rest_list, PA_MT_MOVABLE);
	CHECK_EQ_U64(o610.fallbacks, 1);
	CHECK_EQ_U64(o610.fallbacks2, 1);

	struct fallback_outcome o72 = unmovable_fallback("7.2", &big, &small);
	CHECK_EQ_U64(o72.pb, small >> 9);
	CHECK_EQ_U64(o72.fallbacks, 1);
}

/* ---------------------------------------------------------------------- */
/* The high-atomic reserve (6.10: none in a zone under 100 pageblocks)     */
/* ---------------------------------------------------------------------- */

/*
 * Fill the pool with order-1 blocks until the min watermark stops them,
 * give one back, and make a GFP_ATOMIC order-1 request (with `extra`):
 * below the low watermark it takes the slow path, which may reserve its
 * pageblock.
 */
static uint64_t atomic_reserve_after_pressure(const char *version, pa_gfp_t extra)
{
	char line[160];
	snprintf(line, sizeof line,
	         "min_free_kbytes=1024 pcp_orders=none mem=64M max_order=9 linux=%s", version);
	struct pa_pool *pool = test_boot(line);
	uint64_t n = 0;
	struct pa_page *p, *last = NULL;
	while ((p = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN | PA_GFP_NOCOMPACT, 1)))
		last = p, n++;
	REQUIRE(last != NULL);
	pa_free_pages(pool, last, 1);
	REQUIRE(pa_alloc_pages(pool, PA_GFP_HIGH | PA_GFP_NOCOMPACT | PA_GFP_NOWARN | extra, 1) !=
	        NULL);
	uint64_t reserved = 0;
	for (unsigned i = 0; i < pool->nr_zones; i++)
		reserved += pool->zones[i].nr_reserved_highatomic;
	VALIDATE(pool);
	pa_shutdown(pool);
	return reserved;
}

TEST(linux_highatomic_reserve_none_in_a_small_zone_from_610)
{
	/* 16,384 frames: 1% is 163, under a pageblock. */
	CHECK_EQ_U64(atomic_reserve_after_pressure("6.1", 0), PB);
	CHECK_EQ_U64(atomic_reserve_after_pressure("6.10", 0), 0);
}

/*
 * __GFP_NOMEMALLOC (in every version): a request that may not reclaim gets
 * no more of the reserves for it (gfp_to_alloc_flags() sets neither
 * ALLOC_NON_BLOCK nor ALLOC_HIGHATOMIC), so an atomic high-order request
 * with it reserves no pageblock. Slab's high-order GFP_ATOMIC attempts carry it.
 */
TEST(linux_nomemalloc_reserves_no_highatomic_pageblock)
{
	/* 6.1: where the small zone still has a reserve to take (see above). */
	CHECK_EQ_U64(atomic_reserve_after_pressure("6.1", PA_GFP_NOMEMALLOC), 0);
}

/* ---------------------------------------------------------------------- */
/* Reclaim-active cap on the per-CPU lists (both eras)                     */
/* ---------------------------------------------------------------------- */

static struct pa_pcp_info dma32_pcp(struct pa_pool *pool)
{
	struct pa_pcp_info pi;
	REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, 0, &pi, NULL) == 0);
	return pi;
}

static uint64_t pcp_count_after_frees(const char *version, bool reclaim)
{
	char line[128];
	snprintf(line, sizeof line, "mem=256M nr_cpus=1 linux=%s", version);
	struct pa_pool *pool = test_boot(line);
	unsigned zi = 0;
	for (unsigned i = 0; i < pool->nr_zones; i++)
		if (pool->zones[i].type == PA_ZONE_DMA32)
			zi = i;
	char path[64];
	snprintf(path, sizeof path, "zone/%u/reclaim_active", zi);
	REQUIRE(pa_ctl_write(pool, path, reclaim ? "1" : "0") == 0);
	enum { N = 2000 };
	static struct pa_page *pages[N];
	for (unsigned i = 0; i < N; i++)
		REQUIRE((pages[i] = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0)) != NULL);
	for (unsigned i = 0; i < N; i++)
		pa_free_pages(pool, pages[i], 0);
	struct pa_pcp_info pi = dma32_pcp(pool);
	CHECK_MSG(!reclaim || pi.count <= pi.batch << 2, "linux=%s: %llu frames on the lists",
	          version, (unsigned long long)pi.count);
	char buf[8];
	REQUIRE(pa_ctl_read(pool, path, buf, sizeof buf) > 0);
	CHECK(buf[0] == (reclaim ? '1' : '0'));
	VALIDATE(pool);
	pa_shutdown(pool);
	return pi.count;
}

TEST(linux_reclaim_active_caps_the_per_cpu_lists_at_four_batches)
{
	static const char *const versions[] = { "6.1", "7.2" };
	for (unsigned i = 0; i < 2; i++) {
		uint64_t free_run = pcp_count_after_frees(versions[i], false);
		uint64_t capped = pcp_count_after_frees(versions[i], true);
		CHECK_MSG(capped < free_run, "linux=%s: %llu capped, %llu not", versions[i],
		          (unsigned long long)capped, (unsigned long long)free_run);
	}
}

/*
 * Linux 6.7's cap is applied at each free (nr_pcp_high()), not to high:
 * refills still raise high while reclaim runs, each free lowers it by what
 * was freed in a row, and reclaim's end leaves it where the tuning moved
 * it. The pool had high pinned at the cap meanwhile and set it to high_min
 * after (a kernel's CPU that refilled through reclaim kept tens of
 * thousands of frames on its lists after it: this machine's 6.18).
 */
TEST(linux_67_reclaim_caps_the_lists_at_frees_and_leaves_high_to_the_tuning)
{
	struct pa_pool *pool = test_boot("mem=256M nr_cpus=1 linux=7.2");
	struct pa_zone *z = zone_of_type(pool, PA_ZONE_DMA32);
	REQUIRE(z != NULL);
	char path[64];
	snprintf(path, sizeof path, "zone/%u/reclaim_active", z->index);
	REQUIRE(pa_ctl_write(pool, path, "1") == 0);
	enum { N = 4000 };
	static struct pa_page *pages[N];
	for (unsigned i = 0; i < N; i++)
		REQUIRE((pages[i] = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0)) != NULL);
	struct pa_pcp_info pi = dma32_pcp(pool);
	CHECK_MSG(pi.high > pi.high_min, "refills under reclaim: high %llu, high_min %llu",
	          (unsigned long long)pi.high, (unsigned long long)pi.high_min);
	for (unsigned i = 0; i < N; i++)
		pa_free_pages(pool, pages[i], 0);
	pi = dma32_pcp(pool);
	CHECK_MSG(pi.count <= pi.batch << 2, "%llu frames on the lists",
	          (unsigned long long)pi.count);
	CHECK_EQ_U64(pi.high, pi.high_min); /* the frees lowered it */
	for (unsigned i = 0; i < N; i++)
		REQUIRE((pages[i] = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0)) != NULL);
	uint64_t tuned = dma32_pcp(pool).high;
	CHECK(tuned > pi.high_min);
	REQUIRE(pa_ctl_write(pool, path, "0") == 0);
	CHECK_EQ_U64(dma32_pcp(pool).high, tuned);
	for (unsigned i = 0; i < N; i++)
		pa_free_pages(pool, pages[i], 0);
	pi = dma32_pcp(pool);
	CHECK_MSG(pi.count > pi.batch << 2, "uncapped: %llu frames on the lists",
	          (unsigned long long)pi.count);
	VALIDATE(pool);
	pa_shutdown(pool);
}

/*
 * zone/<N>/below_high sets and clears the mark as the allocations and
 * spills do; set, it leaves each CPU's high where it is and the next free
 * lowers it by a batch (Linux 6.7's nr_pcp_high()); 6.1 has no such bit.
 */
TEST(linux_67_below_high_ctl_sets_and_clears_the_mark)
{
	struct pa_pool *pool = test_boot("mem=256M nr_cpus=1 linux=7.2");
	struct pa_zone *z = zone_of_type(pool, PA_ZONE_DMA32);
	REQUIRE(z != NULL);
	char path[64], buf[8];
	snprintf(path, sizeof path, "zone/%u/below_high", z->index);
	enum { N = 4000 };
	static struct pa_page *pages[N];
	for (unsigned i = 0; i < N; i++)
		REQUIRE((pages[i] = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0)) != NULL);
	struct pa_pcp_info pi = dma32_pcp(pool);
	REQUIRE(pi.high > pi.high_min + pi.batch);
	REQUIRE(pa_ctl_write(pool, path, "1") == 0);
	CHECK(atomic_load(&z->below_high));
	CHECK_EQ_U64(dma32_pcp(pool).high, pi.high);
	pa_free_pages(pool, pages[N - 1], 0);
	CHECK_EQ_U64(dma32_pcp(pool).high, pi.high - pi.batch);
	REQUIRE(pa_ctl_read(pool, path, buf, sizeof buf) > 0);
	CHECK(buf[0] == '1');
	REQUIRE(pa_ctl_write(pool, path, "0") == 0);
	CHECK(!atomic_load(&z->below_high));
	CHECK(pa_ctl_write(pool, path, "2") == -EINVAL);
	CHECK(!atomic_load(&z->below_high));
	for (unsigned i = 0; i + 1 < N; i++)
		pa_free_pages(pool, pages[i], 0);
	VALIDATE(pool);
	pa_shutdown(pool);
	pool = test_boot("mem=256M nr_cpus=1 linux=6.1");
	CHECK(pa_ctl_write(pool, path, "1") == -EOPNOTSUPP);
	CHECK(!atomic_load(&zone_of_type(pool, PA_ZONE_DMA32)->below_high));
	pa_shutdown(pool);
}

/* ---------------------------------------------------------------------- */
/* A costly __GFP_NORETRY request after its first compaction (7.0)         */
/* ---------------------------------------------------------------------- */

static int by_pfn(const void *a, const void *b)
{
	pa_pfn_t x = *(const pa_pfn_t *)a, y = *(const pa_pfn_t *)b;
	return x < y ? -1 : x > y;
}

/*
 * A pool whose buddy holds free memory in order-8 blocks only, with the one
 * order-9 block that could form waiting in halves: one half free in the
 * buddy, the other as 256 frames on CPU 0's lists. An order-9 request finds
 * no block; a drain of the lists would make one. No owners: every
 * compaction is skipped. Returns the frames on the lists then.
 */
static uint64_t pool_one_drain_from_a_thp(struct pa_pool *pool)
{
	enum { N = 1024 };
	static pa_pfn_t pfns[N];
	unsigned n = 0;
	const pa_gfp_t gfp = PA_GFP_MOVABLE | PA_GFP_COMP | PA_GFP_NOWARN;
	struct pa_page *p;
	while (n < N && (p = pa_alloc_pages(pool, gfp, 8)))
		pfns[n++] = pa_page_to_pfn(pool, p);
	REQUIRE(n > 16 && n < N);
	qsort(pfns, n, sizeof pfns[0], by_pfn);
	struct pa_pcp_info pi = dma32_pcp(pool);
	int rc = pa_pcp_set_high(pool, 0, PA_ZONE_DMA32, 0, pi.high_max);
	REQUIRE(rc == 0 || rc == -EOPNOTSUPP); /* 6.1's high is fixed */
	bool kept = false;
	for (unsigned i = 0; i + 1 < n; i++) {
		if (pfns[i] % PB || pfns[i + 1] != pfns[i] + PB / 2)
			continue; /* not both halves of one order-9 block */
		pa_free_pages(pool, pa_pfn_to_page(pool, pfns[i]), 8);
		if (kept)
			continue;
		kept = true; /* this block's other half goes on the lists, frame by frame */
		struct pa_page *half = pa_pfn_to_page(pool, pfns[i + 1]);
		REQUIRE(pa_split_folio(pool, half, 8, 0) == 0);
		for (unsigned f = 0; f < PB / 2; f++)
			pa_free_pages(pool, pa_pfn_to_page(pool, pfns[i + 1] + f), 0);
	}
	REQUIRE(kept);
	/* What the order-8 requests left under the watermark, taken now that it passes. */
	while (n < N && (p = pa_alloc_pages(pool, gfp | PA_GFP_NOCOMPACT, 9)))
		pfns[n++] = pa_page_to_pfn(pool, p);
	return dma32_pcp(pool).count;
}

static void noretry_thp(const char *version, pa_gfp_t extra, bool served)
{
	char line[96];
	snprintf(line, sizeof line, "mem=256M nr_cpus=1 linux=%s", version);
	struct pa_pool *pool = test_boot(line);
	uint64_t listed = pool_one_drain_from_a_thp(pool);
	CHECK(listed >= PB / 2);
	const pa_gfp_t gfp = PA_GFP_MOVABLE | PA_GFP_COMP | PA_GFP_NOWARN | PA_GFP_NORETRY;
	struct pa_page *p = pa_alloc_pages(pool, gfp | extra, 9);
	CHECK_MSG((p != NULL) == served, "linux=%s gfp %#x: %s", version, gfp | extra,
	          p ? "served" : "failed");
	if (!served) /* no reclaim round: the lists were not drained */
		CHECK_EQ_U64(dma32_pcp(pool).count, listed);
	VALIDATE(pool);
	pa_shutdown(pool);
}

/*
 * Until 7.0 a costly __GFP_NORETRY request whose first compaction found
 * nothing to work with fails there, with no reclaim round and so no drain;
 * from 7.0 it gets its round, whose drain makes the block. A THP's first
 * try (__GFP_THISNODE too) fails after compaction in both.
 */
TEST(linux_70_a_noretry_thp_whose_compaction_was_skipped_still_reclaims)
{
	noretry_thp("6.19", 0, false);
	noretry_thp("7.0", 0, true);
	noretry_thp("7.2", PA_GFP_THISNODE, false);
	noretry_thp("6.1", PA_GFP_THISNODE, false);
}

/* ---------------------------------------------------------------------- */
/* Linux's defrag_mode (6.15)                                              */
/* ---------------------------------------------------------------------- */

/* Movable frames allocated in the pageblock of pfn. */
static unsigned movable_in_pageblock(struct pa_pool *pool, pa_pfn_t pfn)
{
	pa_pfn_t start = pfn & ~(pa_pfn_t)(PB - 1);
	unsigned n = 0;
	for (pa_pfn_t p = start; p < start + PB; p++) {
		const struct pa_page *pg = pfn_page(pool, p);
		n += pg->state == PS_ALLOC && pg->mt == PA_MT_MOVABLE;
	}
	return n;
}

/*
 * Every frame an owned movable page, then every other one freed: no free
 * block above order 0. An unmovable request then claims a pageblock half
 * full of movable pages; with linux_defrag_mode=1 it first compacts a
 * whole pageblock free and claims that one.
 */
static unsigned unmovable_lands_beside(const char *keys)
{
	char line[160];
	snprintf(line, sizeof line, SMALL "kcompactd=manual %s", keys);
	struct pa_pool *pool = test_boot(line);
	static struct towner o;
	to_init(&o, pool, 20000);
	fill_owned(&o, 0);
	free_odd_at(&o, 0);
	pa_pfn_t u = must_alloc(pool, PA_GFP_KERNEL, 0);
	CHECK_EQ_U64(pageblock_mt(pool, u), PA_MT_UNMOVABLE);
	unsigned n = movable_in_pageblock(pool, u);
	VALIDATE(pool);
	free_pfn(pool, u, 0);
	to_finish(&o); /* every frame free again; shuts the pool down */
	return n;
}

TEST(linux_defrag_mode_compacts_a_pageblock_before_it_falls_back)
{
	CHECK_EQ_U64(unmovable_lands_beside("linux=7.2"), PB / 2);
	CHECK_EQ_U64(unmovable_lands_beside("linux=7.2 linux_defrag_mode=1"), 0);
}

/* ---------------------------------------------------------------------- */
/* Linux 6.7's ZONE_BELOW_HIGH                                             */
/* ---------------------------------------------------------------------- */

/*
 * Refills raise a CPU's high while the zone is above its high watermark.
 * Under it (marked by the allocation that finds it there), no refill raises
 * high and none lowers it: a CPU that only allocates keeps its high and
 * refills by it, as Linux's nr_pcp_alloc(). Each free lowers it by what was
 * freed in a row, to high_min, and the lists spill from high_min on; a
 * spill that finds the zone above the mark again clears it.
 */
TEST(linux_67_under_the_high_watermark_frees_lower_high_and_refills_keep_it)
{
	struct pa_pool *pool = test_boot("mem=256M nr_cpus=1 linux=7.2");
	struct pa_zone *z = zone_of_type(pool, PA_ZONE_DMA32);
	REQUIRE(z != NULL);
	enum { N = 70000 };
	static struct pa_page *pages[N];
	unsigned n = 0;
	for (; n < 20000; n++)
		REQUIRE((pages[n] = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0)) != NULL);
	struct pa_pcp_info pi = dma32_pcp(pool);
	CHECK_MSG(pi.high > pi.high_min, "high %llu, high_min %llu", (unsigned long long)pi.high,
	          (unsigned long long)pi.high_min);
	CHECK(!atomic_load(&z->below_high));
	/* Under the high watermark: the next allocation from the zone marks it. */
	while (n < N && zone_nr_free(z) > z->wmark[PA_WMARK_HIGH])
		REQUIRE((pages[n++] = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0)) != NULL);
	uint64_t high = dma32_pcp(pool).high;
	for (unsigned i = 0; i < 4 * pi.batch && n < N; i++)
		REQUIRE((pages[n++] = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0)) != NULL);
	CHECK(atomic_load(&z->below_high));
	pi = dma32_pcp(pool);
	CHECK_EQ_U64(pi.high, high);
	CHECK(pi.high > pi.high_min);
	pa_free_pages(pool, pages[--n], 0);
	CHECK_EQ_U64(dma32_pcp(pool).high, high - pi.batch);
	while (n && atomic_load(&z->below_high)) {
		pa_free_pages(pool, pages[--n], 0);
		pi = dma32_pcp(pool);
		CHECK(pi.count <= pi.high_min || !atomic_load(&z->below_high));
	}
	CHECK_EQ_U64(pi.high, pi.high_min);
	while (n)
		pa_free_pages(pool, pages[--n], 0);
	CHECK(!atomic_load(&z->below_high));
	VALIDATE(pool);
	pa_shutdown(pool);
}

/*
 * Any allocation that finds the zone under its high watermark marks it, as
 * Linux's get_page_from_freelist() checks every zone it visits: order-4
 * blocks, which 7.2 keeps off the lists (no refill ever looks). The mark
 * leaves every CPU's high where it was; their frees lower it.
 */
TEST(linux_67_any_allocation_under_the_high_watermark_marks_the_zone)
{
	struct pa_pool *pool = test_boot("mem=256M nr_cpus=2 linux=7.2");
	struct pa_zone *z = zone_of_type(pool, PA_ZONE_DMA32);
	REQUIRE(z != NULL && !pcp_order_enabled(pool, 4));
	enum { N = 4096, WARM = 2000 };
	static struct pa_page *warm[WARM], *blocks[N];
	uint64_t raised = 0, high[2]; /* refills raise the high of the CPU that makes them */
	for (unsigned i = 0; i < WARM; i++)
		REQUIRE((warm[i] = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0)) != NULL);
	for (unsigned cpu = 0; cpu < 2; cpu++) {
		struct pa_pcp_info pi;
		REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, cpu, &pi, NULL) == 0);
		raised += pi.high > pi.high_min;
		high[cpu] = pi.high;
	}
	CHECK(raised > 0);
	unsigned n = 0;
	while (n < N && zone_nr_free(z) > z->wmark[PA_WMARK_HIGH] + 16)
		REQUIRE((blocks[n++] = pa_alloc_pages(pool, PA_GFP_MOVABLE, 4)) != NULL);
	CHECK(!atomic_load(&z->below_high));
	REQUIRE((blocks[n++] = pa_alloc_pages(pool, PA_GFP_MOVABLE, 4)) != NULL);
	CHECK(atomic_load(&z->below_high));
	for (unsigned cpu = 0; cpu < 2; cpu++) {
		struct pa_pcp_info pi;
		REQUIRE(pa_pcp_info(pool, 0, PA_ZONE_DMA32, cpu, &pi, NULL) == 0);
		CHECK_EQ_U64(pi.high, high[cpu]);
	}
	while (n)
		pa_free_pages(pool, blocks[--n], 4);
	for (unsigned i = 0; i < WARM; i++)
		pa_free_pages(pool, warm[i], 0);
	VALIDATE(pool);
	pa_shutdown(pool);
}

/*
 * The high mark an allocation checks a zone against includes the lowmem
 * reserve for the zone type it prefers: DMA32 between its high mark and
 * that plus its reserve for Normal is under it for a request that fell
 * back from Normal, not for one of its own.
 */
TEST(linux_67_below_high_counts_the_requests_lowmem_reserve)
{
	struct pa_pool *pool = test_boot("mem=5G nr_cpus=1 linux=7.2 pcp_orders=none");
	struct pa_zone *z = zone_of_type(pool, PA_ZONE_DMA32);
	REQUIRE(z != NULL);
	uint64_t high = z->wmark[PA_WMARK_HIGH], reserve = z->lowmem_reserve[PA_ZONE_NORMAL];
	REQUIRE(reserve >= 1024);
	enum { N = 1 << 20 };
	struct pa_page **held = malloc(N * sizeof *held);
	unsigned *order = malloc(N * sizeof *order);
	REQUIRE(held && order);
	unsigned n = 0;
	/* DMA32's own requests take it to half its reserve above the high mark. */
	while (n < N && zone_nr_free(z) > high + reserve / 2) {
		order[n] = zone_nr_free(z) > high + reserve + 1024 ? 9 : 0;
		REQUIRE((held[n] = pa_alloc_pages(pool, PA_GFP_DMA32, order[n])) != NULL);
		n++;
	}
	CHECK(!atomic_load(&z->below_high));
	/* Movable requests prefer Normal; once it is under its low mark, they visit DMA32. */
	while (n < N && !atomic_load(&z->below_high)) {
		order[n] = 0;
		REQUIRE((held[n] = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0)) != NULL);
		n++;
	}
	CHECK(atomic_load(&z->below_high));
	CHECK_MSG(zone_nr_free(z) > high, "DMA32 free %llu, high %llu",
	          (unsigned long long)zone_nr_free(z), (unsigned long long)high);
	while (n) {
		n--;
		pa_free_pages(pool, held[n], order[n]);
	}
	free(held);
	free(order);
	VALIDATE(pool);
	pa_shutdown(pool);
}

/* ---------------------------------------------------------------------- */
/* Watermark boosting                                                      */
/* ---------------------------------------------------------------------- */

/*
 * Every pageblock unmovable and its free memory in order-3 blocks, no two
 * buddies (half of it free), then Linux's watermarks (1 MiB min): a movable
 * request must fall back to a block too small for 6.15 to try a claim.
 */
static struct pa_pool *boost_pool(const char *version, const char *extra)
{
	char line[192];
	snprintf(line, sizeof line, SMALL "linux=%s %s", version, extra);
	struct pa_pool *pool = test_boot(line);
	enum { N = 2048 };
	static pa_pfn_t blocks[N];
	unsigned n = 0;
	struct pa_page *p;
	while (n < N && (p = pa_alloc_pages(pool, PA_GFP_KERNEL | PA_GFP_NOWARN, 3)))
		blocks[n++] = pa_page_to_pfn(pool, p);
	REQUIRE(n > 1000);
	for (unsigned i = 0; i < n; i++)
		if (!(blocks[i] & 8))
			free_pfn(pool, blocks[i], 3);
	REQUIRE(pa_ctl_write(pool, "min_free_kbytes", "1024") == 0);
	VALIDATE(pool);
	return pool;
}

static struct pa_zone *the_zone(struct pa_pool *pool)
{
	struct pa_zone *z = zone_of_type(pool, PA_ZONE_DMA32);
	REQUIRE(z != NULL);
	return z;
}

static uint64_t zone_boost(struct pa_pool *pool, struct pa_zone *z)
{
	struct pa_zone_info zi;
	REQUIRE(pa_zone_info(pool, z->index, &zi) == 0);
	CHECK_EQ_U64(zi.watermark_min, z->wmark_base[PA_WMARK_MIN] + zi.watermark_boost);
	CHECK_EQ_U64(zi.watermark_high, z->wmark_base[PA_WMARK_HIGH] + zi.watermark_boost);
	return zi.watermark_boost;
}

/*
 * 6.1 boosts a zone's watermarks on every fallback below a pageblock; 6.15
 * only where it tries to claim the pageblock, which a movable request for
 * an order-3 block does not. Boosts add a pageblock, up to 1.5 times the
 * high watermark (watermark_boost_factor=15000), or a pageblock if more.
 */
TEST(linux_61_boosts_on_a_steal_615_only_on_a_claim)
{
	struct pa_pool *pool = boost_pool("6.1", "");
	struct pa_zone *z = the_zone(pool);
	REQUIRE(pa_ctl_write(pool, "kswapd_external", "1") == 0);
	CHECK_EQ_U64(zone_boost(pool, z), 0);
	uint64_t steals = zone_stat(pool, PA_ZS_FALLBACK_STEAL);
	must_alloc(pool, PA_GFP_MOVABLE, 0);
	CHECK_EQ_U64(zone_stat(pool, PA_ZS_FALLBACK_STEAL), steals + 1);
	uint64_t high = z->wmark_base[PA_WMARK_HIGH], max = high * 3 / 2 > PB ? high * 3 / 2 : PB;
	CHECK_EQ_U64(zone_boost(pool, z), PB < max ? PB : max);
	/* With 6.1's rules the rest of the stolen block went to the movable lists: steal again. */
	for (unsigned i = 0; i < 16; i++)
		must_alloc(pool, PA_GFP_MOVABLE, 3);
	CHECK_EQ_U64(zone_boost(pool, z), max);
	VALIDATE(pool);
	pa_shutdown(pool);

	pool = boost_pool("7.2", "");
	z = the_zone(pool);
	REQUIRE(pa_ctl_write(pool, "kswapd_external", "1") == 0);
	steals = zone_stat(pool, PA_ZS_FALLBACK_STEAL);
	must_alloc(pool, PA_GFP_MOVABLE, 0);
	CHECK_EQ_U64(zone_stat(pool, PA_ZS_FALLBACK_STEAL), steals + 1);
	CHECK_EQ_U64(zone_boost(pool, z), 0);
	VALIDATE(pool);
	pa_shutdown(pool);
}

/*
 * A boost lasts until the end of the reclaim pass that began after it
 * (kswapd_external=1): a boost raised during the pass outlives it by what
 * it added. Without an external kswapd, waking kswapd ends the boost at
 * once (the pool has nothing to reclaim). watermark_boost_factor=0: none.
 */
TEST(linux_watermark_boost_ends_with_the_reclaim_pass)
{
	struct pa_pool *pool = boost_pool("6.1", "");
	struct pa_zone *z = the_zone(pool);
	REQUIRE(pa_ctl_write(pool, "kswapd_external", "1") == 0);
	must_alloc(pool, PA_GFP_MOVABLE, 0);
	uint64_t first = zone_boost(pool, z);
	CHECK_EQ_U64(first, PB);
	char path[48];
	snprintf(path, sizeof path, "zone/%u/reclaim_active", z->index);
	REQUIRE(pa_ctl_write(pool, path, "1") == 0);
	for (unsigned i = 0; i < 16; i++)
		must_alloc(pool, PA_GFP_MOVABLE, 3);
	uint64_t during = zone_boost(pool, z);
	CHECK(during > first);
	uint64_t v = 0;
	snprintf(path, sizeof path, "zone/%u/watermark_boost", z->index);
	REQUIRE(pa_ctl_read_u64(pool, path, &v) == 0);
	CHECK_EQ_U64(v, during);
	snprintf(path, sizeof path, "zone/%u/reclaim_active", z->index);
	REQUIRE(pa_ctl_write(pool, path, "0") == 0);
	CHECK_EQ_U64(zone_boost(pool, z), during - first);
	/* Ended from outside, as a pass with nothing to reclaim ends it; 0 is all it takes. */
	snprintf(path, sizeof path, "zone/%u/watermark_boost", z->index);
	CHECK(pa_ctl_write(pool, path, "1") == -EINVAL);
	CHECK_EQ_U64(zone_boost(pool, z), during - first);
	REQUIRE(pa_ctl_write(pool, path, "0") == 0);
	CHECK_EQ_U64(zone_boost(pool, z), 0);
	VALIDATE(pool);
	pa_shutdown(pool);

	pool = boost_pool("6.1", "");
	z = the_zone(pool);
	uint64_t steals = zone_stat(pool, PA_ZS_FALLBACK_STEAL);
	must_alloc(pool, PA_GFP_MOVABLE, 0);
	CHECK_EQ_U64(zone_stat(pool, PA_ZS_FALLBACK_STEAL), steals + 1);
	CHECK_EQ_U64(zone_boost(pool, z), 0);
	CHECK(!atomic_load(&z->boost_wake));
	pa_shutdown(pool);

	pool = boost_pool("6.1", "watermark_boost_factor=0");
	z = the_zone(pool);
	REQUIRE(pa_ctl_write(pool, "kswapd_external", "1") == 0);
	must_alloc(pool, PA_GFP_MOVABLE, 0);
	CHECK_EQ_U64(zone_boost(pool, z), 0);
	pa_shutdown(pool);
}

/*
 * The boost raises the min watermark too, but an order-0 request that may
 * dip below it (PA_GFP_HIGH) is checked there against the unboosted mark:
 * it goes on where an ordinary request stopped, under the boosted mark.
 */
TEST(linux_boost_spares_high_order_0_requests_at_the_min_watermark)
{
	struct pa_pool *pool = boost_pool("6.1", "");
	struct pa_zone *z = the_zone(pool);
	REQUIRE(pa_ctl_write(pool, "kswapd_external", "1") == 0);
	pa_gfp_t gfp = PA_GFP_MOVABLE | PA_GFP_NOWARN | PA_GFP_NOCOMPACT;
	while (pa_alloc_pages(pool, gfp, 0))
		; /* each fallback on the way boosts again */
	uint64_t boost = zone_boost(pool, z);
	REQUIRE(boost > 0);
	uint64_t min = z->wmark_base[PA_WMARK_MIN];
	CHECK(zone_nr_free(z) > min / 2);
	CHECK_EQ_U64(pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN | PA_GFP_NOCOMPACT, 1),
	             NULL); /* order 1: no exemption */
	unsigned high = 0;
	while (pa_alloc_pages(pool, gfp | PA_GFP_HIGH, 0))
		high++;
	CHECK(high > 0);
	/* PA_GFP_HIGH uses half of the min mark, and one that may not reclaim a quarter more. */
	CHECK_MSG(zone_nr_free(z) < (min + boost) * 3 / 8 && zone_nr_free(z) >= min * 3 / 8 - 1,
	          "free %llu, min %llu, boost %llu", (unsigned long long)zone_nr_free(z),
	          (unsigned long long)min, (unsigned long long)boost);
	VALIDATE(pool);
	pa_shutdown(pool);
}

/*
 * Linux 6.7's high-order free rule: a run of order-1 frees with no other
 * order between gives the lists back once it passes a batch and half of
 * high_min, so they stay short; with an order-0 free after each, the run
 * is broken every time and the lists grow toward high.
 */
static uint64_t most_on_lists_freeing_order_1(bool with_order_0)
{
	struct pa_pool *pool = test_boot("mem=256M nr_cpus=1 linux=7.2");
	enum { N = 3000 };
	static struct pa_page *pairs[N], *singles[N];
	for (unsigned i = 0; i < N; i++) {
		REQUIRE((pairs[i] = pa_alloc_pages(pool, PA_GFP_MOVABLE, 1)) != NULL);
		REQUIRE((singles[i] = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0)) != NULL);
	}
	pa_drain_all(pool);
	uint64_t most = 0;
	for (unsigned i = 0; i < N; i++) {
		pa_free_pages(pool, pairs[i], 1);
		if (with_order_0)
			pa_free_pages(pool, singles[i], 0);
		struct pa_pcp_info pi = dma32_pcp(pool);
		most = pi.count > most ? pi.count : most;
	}
	if (!with_order_0)
		for (unsigned i = 0; i < N; i++)
			pa_free_pages(pool, singles[i], 0);
	VALIDATE(pool);
	pa_shutdown(pool);
	return most;
}

TEST(linux_67_a_run_of_high_order_frees_empties_the_lists)
{
	uint64_t run = most_on_lists_freeing_order_1(false);
	uint64_t broken = most_on_lists_freeing_order_1(true);
	struct pa_pool *pool = test_boot("mem=256M nr_cpus=1 linux=7.2");
	struct pa_pcp_info pi = dma32_pcp(pool);
	pa_shutdown(pool);
	CHECK_MSG(run <= pi.batch + pi.high_min / 2 + pi.batch + 2, "run: %llu on the lists",
	          (unsigned long long)run);
	CHECK_MSG(broken > 2 * run, "broken run: %llu on the lists, run %llu",
	          (unsigned long long)broken, (unsigned long long)run);
}

/*
 * THPs freed onto a CPU's list past its high: the frames the free gives
 * back (up to batch << 5 of them, as many as were freed in a row) come off
 * the THP list first. Returns the blocks the first spill gave back.
 */
static uint64_t thps_one_spill_gives_back(const char *version)
{
	char line[96];
	snprintf(line, sizeof line, "mem=1G nr_cpus=1 linux=%s", version);
	struct pa_pool *pool = test_boot(line);
	REQUIRE(pa_ctl_write(pool, "pcp/huge_direct", "0") ==
	        0); /* THPs wait on the list, as Linux's */
	enum { N = 96 };
	struct pa_page *thp[N];
	for (unsigned i = 0; i < N; i++)
		REQUIRE((thp[i] = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_COMP, 9)) != NULL);
	pa_drain_local(pool);
	struct pa_pcp_info pi = dma32_pcp(pool);
	uint64_t high = 64 * 512; /* room for 64 THPs */
	REQUIRE(high >= pi.high_min && high <= pi.high_max);
	REQUIRE(pa_pcp_set_high(pool, 0, PA_ZONE_DMA32, 0, high) == 0);
	uint64_t given = 0;
	unsigned i = 0;
	for (; i < N && !given; i++) {
		uint64_t before = dma32_pcp(pool).count;
		pa_free_pages(pool, thp[i], 9);
		uint64_t after = dma32_pcp(pool).count;
		given = after < before + 512 ? (before + 512 - after) / 512 : 0;
	}
	CHECK_MSG(given, "%s: no spill in %u frees", version, i);
	while (i < N)
		pa_free_pages(pool, thp[i++], 9);
	VALIDATE(pool);
	pa_shutdown(pool);
	return given;
}

/*
 * Linux 6.19 gives a spill back a batch of frames at a time, each step
 * whole blocks: a THP per step, so the frames a spill asks for come back
 * as that many THPs; 6.18 gives back the frames asked for, a THP over at
 * most.
 */
TEST(linux_619_a_spill_gives_back_a_thp_per_batch_asked_for)
{
	uint64_t v618 = thps_one_spill_gives_back("6.18"), v619 = thps_one_spill_gives_back("6.19");
	struct pa_pool *pool = test_boot("mem=1G nr_cpus=1");
	struct pa_pcp_info pi = dma32_pcp(pool);
	pa_shutdown(pool);
	uint64_t asked_max = (pi.batch << 5) + 511; /* free_count stops at batch << 5 */
	CHECK_MSG(v618 * 512 <= asked_max + 511, "6.18 gave back %llu THPs",
	          (unsigned long long)v618);
	/* At least batch << 5 frames asked for: 32 steps, a THP each. */
	CHECK_MSG(v619 >= 32 && v619 > 4 * v618, "6.19 gave back %llu THPs, 6.18 %llu",
	          (unsigned long long)v619, (unsigned long long)v618);
}
