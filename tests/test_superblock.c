/* SPDX-License-Identifier: MIT */
/*
 * Superblocks: the boot keys, the per-region counts against a recount
 * (pa_validate) after churn, pa_superblock_info().
 *
 * The pools are small: mem=4G with superblock_order=15 (128 MiB regions of
 * 64 pageblocks) unless a case says otherwise.
 */
#include "test.h"
#include "helpers.h"
#include "owner.h"

#include "platform/platform.h"
#include "memmap.h"
#include "pageblock.h"
#include "superblock.h"

#define SB4G "mem=4G superblock_order=15 "

static struct pa_pool *boot_ok(const char *cmdline)
{
	struct pa_pool *pool = NULL;
	char err[256];
	int rc = pa_boot(cmdline, NULL, &pool, err, sizeof err);
	CHECK_MSG(rc == 0, "boot \"%s\": %s", cmdline, err);
	REQUIRE(pool);
	return pool;
}

static void expect_valid(struct pa_pool *pool, const char *when)
{
	char err[256];
	int rc = pa_validate(pool, err, sizeof err);
	CHECK_MSG(rc == 0, "pa_validate %s: %s", when, err);
}

/* ---------------------------------------------------------------------- */
/* Boot keys                                                               */
/* ---------------------------------------------------------------------- */

TEST(superblock_order_defaults_to_the_pud_order_when_max_order_reaches_it)
{
	struct pa_config c;
	struct pa_pool *pool = boot_ok("mem=2G max_order=18");
	pa_get_config(pool, &c);
	CHECK(c.superblock_order == 18);
	CHECK(c.defrag_mode == 0);
	CHECK(pa_superblock_count(pool) == 2);
	pa_shutdown(pool);

	pool = boot_ok("mem=2G"); /* max_order 10: 1 GiB blocks never form, tracking is off */
	pa_get_config(pool, &c);
	CHECK(c.superblock_order == 0);
	CHECK(pa_superblock_count(pool) == 0);
	pa_shutdown(pool);

	pool = boot_ok("mem=2G max_order=18 superblock_order=0 defrag_mode=1");
	pa_get_config(pool, &c);
	CHECK(c.superblock_order == 0 && c.defrag_mode == 1);
	CHECK(pa_superblock_count(pool) == 0);
	pa_shutdown(pool);
}

TEST(superblock_bad_boot_values_fail_naming_the_key)
{
	static const char *const bad[] = {
		"superblock_order=x",  "superblock_order=-1",
		"superblock_order=33", "superblock_order=8",
		"superblock_order=",   "defrag_mode=2",
		"defrag_mode=yes",     "superblock_order=16 superblock_order=16",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct pa_pool *pool = NULL;
		char err[256] = "";
		int rc = pa_boot(bad[i], NULL, &pool, err, sizeof err);
		CHECK_MSG(rc == -EINVAL && !pool, "\"%s\" booted", bad[i]);
		const char *key =
		        strchr(bad[i], 'd') == bad[i] ? "defrag_mode" : "superblock_order";
		CHECK_MSG(strstr(err, key), "\"%s\": the message \"%s\" does not name %s", bad[i],
		          err, key);
		if (pool)
			pa_shutdown(pool);
	}
}

TEST(superblock_ctl_paths_read_and_defrag_mode_writes)
{
	struct pa_pool *pool = boot_ok(SB4G);
	char buf[64];
	CHECK(pa_ctl_read(pool, "superblock_order", buf, sizeof buf) > 0 &&
	      strcmp(buf, "15\n") == 0);
	CHECK(pa_ctl_write(pool, "superblock_order", "16") == -EPERM);
	CHECK(pa_ctl_read(pool, "defrag_mode", buf, sizeof buf) > 0 && strcmp(buf, "0\n") == 0);
	CHECK(pa_ctl_write(pool, "defrag_mode", "2") == -EINVAL);
	CHECK(pa_ctl_write(pool, "defrag_mode", "1") == 0);
	CHECK(pa_ctl_read(pool, "defrag_mode", buf, sizeof buf) > 0 && strcmp(buf, "1\n") == 0);
	pa_shutdown(pool);
}

/* ---------------------------------------------------------------------- */
/* Counts                                                                  */
/* ---------------------------------------------------------------------- */

TEST(superblock_counts_of_a_fresh_pool)
{
	struct pa_pool *pool = boot_ok(SB4G "pcp_orders=none");
	uint64_t n = pa_superblock_count(pool), free = 0, blocks = 0;
	CHECK(n == 32);
	for (uint64_t i = 0; i < n; i++) {
		struct pa_superblock_info info;
		REQUIRE(pa_superblock_info(pool, i, &info) == 0);
		CHECK(info.start_pfn == i << 15 && info.nr_frames == 1u << 15);
		free += info.free;
		for (unsigned mt = 0; mt < PA_MT_COUNT; mt++)
			blocks += info.pageblocks[mt];
		CHECK(info.pageblocks[PA_MT_ISOLATE] == 0);
	}
	struct pa_usage u = usage(pool);
	CHECK(free == u.free);
	CHECK(blocks == pool->nr_pageblocks);
	struct pa_superblock_info info;
	CHECK(pa_superblock_info(pool, n, &info) == -ENOENT);
	expect_valid(pool, "at boot");
	pa_shutdown(pool);
}

/* Random allocations and frees of every type and a spread of orders; frees half at the end. */
static void churn(struct pa_pool *pool, uint64_t seed, unsigned ops, pa_pfn_t *held,
                  unsigned *order, unsigned cap, unsigned *nheld)
{
	static const pa_gfp_t types[] = { PA_GFP_MOVABLE, PA_GFP_MOVABLE, PA_GFP_MOVABLE,
		                          PA_GFP_KERNEL, PA_GFP_RECLAIMABLE };
	for (unsigned i = 0; i < ops; i++) {
		uint64_t r = rng_next(&seed);
		if (*nheld && (r % 3 == 0 || *nheld == cap)) {
			unsigned k = (unsigned)(r >> 8) % *nheld;
			free_pfn(pool, held[k], order[k]);
			held[k] = held[--*nheld];
			order[k] = order[*nheld];
			continue;
		}
		unsigned o = (unsigned)(r >> 16) % 8 == 0 ? 9 : (unsigned)(r >> 20) % 4;
		struct pa_page *p = pa_alloc_pages(pool, types[(r >> 32) % 5] | PA_GFP_NOWARN, o);
		if (!p)
			continue;
		held[*nheld] = pa_page_to_pfn(pool, p);
		order[(*nheld)++] = o;
	}
}

TEST(superblock_counts_equal_a_recount_after_random_churn)
{
	uint64_t seed = test_seed();
	printf("seed %" PRIu64 "\n", seed);
	struct pa_pool *pool = boot_ok(SB4G "cma=256M");
	unsigned cap = 20000, nheld = 0;
	pa_pfn_t *held = calloc(cap, sizeof *held);
	unsigned *order = calloc(cap, sizeof *order);
	REQUIRE(held && order);
	unsigned ops = (unsigned)(200000 * test_scale()) + 1000;
	for (unsigned round = 0; round < 4; round++) {
		churn(pool, seed + round, ops / 4, held, order, cap, &nheld);
		expect_valid(pool, "after churn");
		pa_ctl_write(pool, "pcp/drain", "1");
		expect_valid(pool, "after a drain");
	}
	pa_compact(pool, -1);
	expect_valid(pool, "after compaction");
	while (nheld) {
		nheld--;
		free_pfn(pool, held[nheld], order[nheld]);
	}
	expect_valid(pool, "with everything freed");
	free(held);
	free(order);
	pa_shutdown(pool);
}

TEST(superblock_validate_finds_a_count_that_drifted)
{
	struct pa_pool *pool = boot_ok(SB4G);
	atomic_fetch_add(&pool->sb[3].free, 1);
	char err[256];
	CHECK(pa_validate(pool, err, sizeof err) == -EFAULT);
	CHECK_MSG(strstr(err, "superblock 3"), "message: %s", err);
	atomic_fetch_sub(&pool->sb[3].free, 1);
	atomic_fetch_add(&pool->sb[5].blocks[PA_MT_UNMOVABLE], 1);
	CHECK(pa_validate(pool, err, sizeof err) == -EFAULT);
	CHECK_MSG(strstr(err, "superblock 5") && strstr(err, "Unmovable"), "message: %s", err);
	atomic_fetch_sub(&pool->sb[5].blocks[PA_MT_UNMOVABLE], 1);
	expect_valid(pool, "once put back");
	pa_shutdown(pool);
}

TEST(superblock_counts_follow_cma_hotplug_and_contig_ranges)
{
	struct pa_pool *pool = boot_ok(SB4G "cma=128M pcp_orders=none");
	uint64_t cma = 0;
	for (uint64_t i = 0; i < pa_superblock_count(pool); i++) {
		struct pa_superblock_info info;
		REQUIRE(pa_superblock_info(pool, i, &info) == 0);
		cma += info.pageblocks[PA_MT_CMA];
	}
	CHECK(cma == 64); /* 128 MiB of 2 MiB pageblocks */
	/* A contiguous range taken and given back, and one refused over an unmovable frame. */
	pa_pfn_t start = 3ull << 15;
	CHECK(pa_alloc_contig_range(pool, start, start + 2048, PA_MT_MOVABLE, 0) == 0);
	expect_valid(pool, "with a contiguous range taken");
	pa_free_contig_range(pool, start, 2048);
	expect_valid(pool, "with the range freed");
	pa_pfn_t u = must_alloc(pool, PA_GFP_KERNEL, 0), pb = u & ~511ull;
	CHECK(pa_alloc_contig_range(pool, pb, pb + 512, PA_MT_MOVABLE, 0) == -EBUSY);
	CHECK(pageblock_base_mt(pool, u) == PA_MT_UNMOVABLE);
	expect_valid(pool, "after a refused range");
	free_pfn(pool, u, 0);
	struct pa_superblock_info info;
	/* A memory block offline and online again. */
	pa_pfn_t blk = 20ull << 15;
	CHECK(pa_memory_offline(pool, blk, 1u << 15) == 0);
	expect_valid(pool, "with a block offline");
	REQUIRE(pa_superblock_info(pool, 20, &info) == 0);
	CHECK(info.free == 0);
	CHECK(pa_memory_online(pool, blk, 1u << 15) == 0);
	expect_valid(pool, "with the block online again");
	REQUIRE(pa_superblock_info(pool, 20, &info) == 0);
	CHECK(info.free == 1u << 15);
	pa_shutdown(pool);
}

/* ---------------------------------------------------------------------- */
/* Steering                                                                */
/* ---------------------------------------------------------------------- */

#define REGION_SHIFT 15 /* superblock_order=15 */

static uint64_t region_of(pa_pfn_t pfn)
{
	return pfn >> REGION_SHIFT;
}

/*
 * Pollute one region with an unmovable page, then make Linux's choice for
 * the next fallback another region: a movable max-order block freed last
 * heads the list Linux's fallback takes from. Returns the first unmovable
 * frame outside the first unmovable pageblock, and the two regions.
 */
static pa_pfn_t next_fallback(const char *cmdline, uint64_t *polluted, uint64_t *list_head)
{
	struct pa_pool *pool = boot_ok(cmdline);
	pa_pfn_t u = must_alloc(pool, PA_GFP_KERNEL, 0), pb = u >> 9;
	*polluted = region_of(u);
	pa_pfn_t held[64];
	unsigned n = 0;
	do { /* movable max-order blocks until one comes from another region */
		held[n] = must_alloc(pool, PA_GFP_MOVABLE, 10);
	} while (region_of(held[n++]) == *polluted && n < 64);
	*list_head = region_of(held[n - 1]);
	CHECK(*list_head != *polluted);
	for (unsigned i = 0; i < n; i++)
		free_pfn(pool, held[i], 10);
	pa_pfn_t p;
	do /* past the block the first fallback claimed: a pageblock, or Linux's order-10 block */
		p = must_alloc(pool, PA_GFP_KERNEL, 0);
	while (p >> 10 == pb >> 1);
	expect_valid(pool, "after the fallback");
	pa_shutdown(pool);
	return p;
}

TEST(superblock_unmovable_fallback_lands_in_the_polluted_region)
{
	uint64_t polluted, head;
	pa_pfn_t p = next_fallback(SB4G "pcp_orders=none min_free_kbytes=0", &polluted, &head);
	CHECK_MSG(region_of(p) == polluted,
	          "the fallback went to region %" PRIu64 ", not the polluted %" PRIu64,
	          region_of(p), polluted);
	/* The same stream under Linux's policy takes the list head: the case tells them apart. */
	p = next_fallback("mem=4G superblock_order=0 pcp_orders=none min_free_kbytes=0", &polluted,
	                  &head);
	CHECK_MSG(region_of(p) == head,
	          "Linux's fallback went to region %" PRIu64 ", not the list head's %" PRIu64,
	          region_of(p), head);
}

#define CHURN_SHIFT 13 /* the churn cases' regions: 32 MiB, 16 pageblocks */

/* Regions holding an allocated frame of a polluting type, by a walk of the frame map. */
static unsigned tainted_regions(struct pa_pool *pool)
{
	unsigned n = 0;
	for (pa_pfn_t r = 0; r < pool->nr_frames; r += 1u << CHURN_SHIFT) {
		bool tainted = false;
		for (pa_pfn_t p = r; p < r + (1u << CHURN_SHIFT) && !tainted;) {
			const struct pa_page *pg = pfn_page(pool, p);
			unsigned st = page_state(pg);
			tainted = st == PS_ALLOC && page_mt(pg) != PA_MT_MOVABLE;
			p += block_step(pg, st);
		}
		n += tainted;
	}
	return n;
}

/* Regions whose every frame is free in the buddy. */
static unsigned whole_regions(struct pa_pool *pool)
{
	unsigned n = 0;
	for (pa_pfn_t r = 0; r < pool->nr_frames; r += 1u << CHURN_SHIFT) {
		struct pa_pageblock_info info;
		uint64_t free = 0;
		for (pa_pfn_t p = r; p < r + (1u << CHURN_SHIFT); p += 512)
			if (pa_pageblock_info(pool, p >> 9, &info) == 0)
				free += info.free;
		n += free == 1u << CHURN_SHIFT;
	}
	return n;
}

struct churn_result {
	unsigned tainted, whole, failures;
	uint8_t *failed; /* [op]: 1 when the allocation of op failed */
};

struct churn_spec {
	const char *cmdline;
	uint64_t seed;
	unsigned ops;
	unsigned fill_pct; /* frees come when this share of the frames is allocated */
	unsigned free_pct; /* and otherwise in this share of the operations */
	bool thp;          /* 1 in 16 movable allocations of order 9, else all of order 0 */
};

/* A free of entry k of the held list (last moved into its place). */
struct held {
	pa_pfn_t *pfn;
	uint8_t *order, *mov;
	unsigned n;
	uint64_t frames;
};

static void held_free(struct pa_pool *pool, struct held *h, unsigned k)
{
	free_pfn(pool, h->pfn[k], h->order[k]);
	h->frames -= 1ull << h->order[k];
	h->n--;
	h->pfn[k] = h->pfn[h->n], h->order[k] = h->order[h->n], h->mov[k] = h->mov[h->n];
}

/*
 * A seeded stream: movable memory comes and goes (page cache, anonymous
 * memory, THP-sized folios) while 5 % of the allocations are unmovable or
 * reclaimable and live longer. At the end the movable memory is freed and
 * what the long-lived pages left behind is counted.
 */
static struct churn_result long_churn(const struct churn_spec *c)
{
	struct pa_pool *pool = boot_ok(c->cmdline);
	uint64_t cap = pool->nr_frames, seed = c->seed, fill = cap * c->fill_pct / 100;
	struct held h = { calloc(cap, sizeof *h.pfn), calloc(cap, 1), calloc(cap, 1), 0, 0 };
	struct churn_result res = { .failed = calloc(c->ops, 1) };
	REQUIRE(h.pfn && h.order && h.mov && res.failed);
	for (unsigned i = 0; i < c->ops; i++) {
		uint64_t r = rng_next(&seed);
		if ((h.frames >= fill || (r >> 56) % 100 < c->free_pct) && h.n) {
			unsigned k = (unsigned)((r >> 8) % h.n);
			if (h.mov[k] || (r >> 40) % 4 == 0) /* unmovable pages live longer */
				held_free(pool, &h, k);
			continue;
		}
		bool unmov = (r >> 16) % 100 < 5;
		unsigned o = !unmov && c->thp && (r >> 24) % 256 == 0 ? 9 : 0;
		pa_gfp_t gfp = unmov ? ((r >> 32) % 2 ? PA_GFP_RECLAIMABLE : PA_GFP_KERNEL) :
		                       PA_GFP_MOVABLE;
		struct pa_page *p = pa_alloc_pages(pool, gfp | PA_GFP_NOWARN, o);
		if (!p) {
			res.failed[i] = 1;
			res.failures++;
			continue;
		}
		h.pfn[h.n] = pa_page_to_pfn(pool, p), h.order[h.n] = (uint8_t)o;
		h.mov[h.n++] = !unmov;
		h.frames += 1ull << o;
	}
	for (unsigned k = h.n; k-- > 0;)
		if (h.mov[k])
			held_free(pool, &h, k);
	pa_ctl_write(pool, "pcp/drain", "1");
	expect_valid(pool, "after the long churn");
	res.tainted = tainted_regions(pool);
	res.whole = whole_regions(pool);
	free(h.pfn), free(h.order), free(h.mov);
	pa_shutdown(pool);
	return res;
}

#define CHURN_BOOT "mem=1G pcp_orders=none min_free_kbytes=0 "

/*
 * One stream can go either way by a region or two; over several streams
 * of a long churn Linux's policy spreads the long-lived pages and steering
 * does not. The length is not scaled: the spread shows only in long churn.
 */
#define SPREAD_STREAMS 3
#define SPREAD_OPS     1000000

TEST(superblock_steering_leaves_clean_regions_whole_where_linux_spreads)
{
	uint64_t seed = test_seed();
	printf("seed %" PRIu64 "\n", seed);
	unsigned st = 0, lt = 0, sw = 0, lw = 0;
	for (unsigned k = 0; k < SPREAD_STREAMS; k++) {
		struct churn_spec c = {
			CHURN_BOOT "superblock_order=13", seed + k, SPREAD_OPS, 90, 0, true
		};
		struct churn_result s = long_churn(&c);
		c.cmdline = CHURN_BOOT "superblock_order=0";
		struct churn_result l = long_churn(&c);
		printf("  stream %u: regions tainted: steering %u, Linux %u; wholly free: steering "
		       "%u, Linux %u (of 32)\n",
		       k, s.tainted, l.tainted, s.whole, l.whole);
		CHECK(s.whole >= 1);
		st += s.tainted, lt += l.tainted, sw += s.whole, lw += l.whole;
		free(s.failed), free(l.failed);
	}
	CHECK(st < lt);
	CHECK(sw > lw);
}

TEST(superblock_steering_fails_nothing_linux_serves)
{
	uint64_t seed = test_seed();
	printf("seed %" PRIu64 "\n", seed);
	/*
	 * Order-0 requests only, filling the pool: both policies then hold the
	 * same free memory after the same successes, so an allocation fails
	 * under one and not the other only if a fallback refused to fall back.
	 */
	struct churn_spec c = { "mem=64M pcp_orders=none min_free_kbytes=0 superblock_order=12",
		                seed,
		                (unsigned)(200000 * test_scale()) + 60000,
		                200,
		                30,
		                false };
	struct churn_result s = long_churn(&c);
	c.cmdline = "mem=64M pcp_orders=none min_free_kbytes=0 superblock_order=0";
	struct churn_result l = long_churn(&c);
	printf("  failures: steering %u, Linux %u\n", s.failures, l.failures);
	CHECK(l.failures > 0); /* the pool did fill */
	for (unsigned i = 0; i < c.ops; i++)
		if (s.failed[i] != l.failed[i]) {
			CHECK_MSG(0, "op %u failed under %s only", i,
			          s.failed[i] ? "steering" : "Linux");
			break;
		}
	free(s.failed), free(l.failed);
}

/* ---------------------------------------------------------------------- */
/* defrag_mode                                                             */
/* ---------------------------------------------------------------------- */

#define DEFRAG_BOOT                                                                                \
	"mem=512M superblock_order=13 pcp_orders=none min_free_kbytes=0 kcompactd=manual "         \
	"compaction_proactiveness=0 "
#define DEFRAG_SHIFT 13

/* Pageblocks of polluting types outside region keep. */
static uint64_t polluted_elsewhere(struct pa_pool *pool, uint64_t keep)
{
	uint64_t n = 0;
	for (uint64_t i = 0; i < pa_superblock_count(pool); i++) {
		struct pa_superblock_info info;
		REQUIRE(pa_superblock_info(pool, i, &info) == 0);
		n += i == keep ? 0 : info.polluted;
	}
	return n;
}

/*
 * One region full: a pageblock of unmovable pages, the rest owned movable
 * folios; every other region wholly free. The next unmovable page needs a
 * fallback that only a clean region can give, or compaction in the full one.
 */
static uint64_t defrag_setup(struct towner *o, const char *cmdline)
{
	struct pa_pool *pool = boot_ok(cmdline);
	pa_pfn_t u = must_alloc(pool, PA_GFP_KERNEL, 0);
	uint64_t region = u >> DEFRAG_SHIFT;
	for (unsigned i = 1; i < 512; i++)
		CHECK(must_alloc(pool, PA_GFP_KERNEL, 0) >> 9 == u >> 9);
	to_init(o, pool, pool->nr_frames);
	fill_owned(o, 0);
	for (size_t i = 0; i < o->nr; i++)
		if (to_pfn(o, i) >> DEFRAG_SHIFT != region)
			to_free(o, i);
	struct pa_superblock_info info;
	REQUIRE(pa_superblock_info(pool, region, &info) == 0);
	CHECK(info.free == 0 && info.polluted == 1);
	CHECK(polluted_elsewhere(pool, region) == 0);
	return region;
}

/* What one unmovable request of gfp did after defrag_setup(). */
struct defrag_outcome {
	bool in_full_region;         /* it went to the full (polluted) region */
	uint64_t polluted_elsewhere; /* polluting pageblocks in the other regions */
	uint64_t success, fail, clean,
	        failed; /* counters' growth: defrag, fallback_clean, pgalloc_fail */
};

static struct defrag_outcome defrag_request(const char *mode, enum to_answer answer, pa_gfp_t gfp)
{
	char line[256];
	snprintf(line, sizeof line, "%s%s", DEFRAG_BOOT, mode);
	struct towner o;
	uint64_t region = defrag_setup(&o, line);
	struct pa_pool *pool = o.pool;
	o.answer = answer;
	static const char *const names[] = { "defrag_compact_success", "defrag_compact_fail",
		                             "superblock_fallback_clean", "pgalloc_fail" };
	uint64_t before[4], after[4];
	for (unsigned i = 0; i < 4; i++)
		before[i] = vmstat(pool, names[i]);
	pa_pfn_t p = must_alloc(pool, gfp, 0);
	for (unsigned i = 0; i < 4; i++)
		after[i] = vmstat(pool, names[i]) - before[i];
	struct defrag_outcome out = { p >> DEFRAG_SHIFT == region,
		                      polluted_elsewhere(pool, region),
		                      after[0],
		                      after[1],
		                      after[2],
		                      after[3] };
	expect_valid(pool, "after the request");
	pa_shutdown(pool);
	to_destroy(&o);
	return out;
}

TEST(superblock_defrag_mode_compacts_the_polluted_region_instead_of_polluting_a_clean_one)
{
	struct defrag_outcome d = defrag_request("defrag_mode=1", TO_OK, PA_GFP_KERNEL);
	CHECK(d.in_full_region);
	CHECK(d.polluted_elsewhere == 0);
	CHECK(d.success == 1 && d.fail == 0 && d.clean == 0);
	/* The same request without defrag_mode pollutes a clean region. */
	d = defrag_request("defrag_mode=0", TO_OK, PA_GFP_KERNEL);
	CHECK(!d.in_full_region);
	CHECK(d.polluted_elsewhere == 1);
	CHECK(d.success == 0 && d.clean == 1);
}

TEST(superblock_defrag_mode_falls_back_when_compaction_cannot_help)
{
	/* Every folio refuses to move: the compaction fails, the request is still served. */
	struct defrag_outcome d = defrag_request("defrag_mode=1", TO_BUSY, PA_GFP_KERNEL);
	CHECK(!d.in_full_region);
	CHECK(d.success == 0 && d.fail == 1 && d.clean == 1 && d.failed == 0);
}

TEST(superblock_defrag_mode_leaves_requests_that_may_not_compact_alone)
{
	static const pa_gfp_t gfps[] = { PA_GFP_KERNEL | PA_GFP_NOCOMPACT,
		                         PA_GFP_RECLAIMABLE | PA_GFP_HIGH };
	for (unsigned i = 0; i < 2; i++) {
		struct defrag_outcome d = defrag_request("defrag_mode=1", TO_OK, gfps[i]);
		CHECK(!d.in_full_region);
		CHECK(d.success == 0 && d.fail == 0 && d.clean == 1);
	}
}

/* ---------------------------------------------------------------------- */
/* Threads                                                                 */
/* ---------------------------------------------------------------------- */

struct sb_worker {
	pthread_t thread;
	struct pa_pool *pool;
	struct towner *owner;
	unsigned cpu, ops;
	uint64_t seed;
};

/* Mixed requests, a few long-lived unmovable ones, owned movable folios the compactor may move. */
static void *sb_worker_main(void *arg)
{
	struct sb_worker *w = arg;
	fake_cpu = w->cpu;
	enum { HELD = 512 };
	struct pa_page *held[HELD];
	unsigned order[HELD], n = 0;
	for (unsigned i = 0; i < w->ops; i++) {
		uint64_t r = rng_next(&w->seed);
		if (n == HELD || (n && r % 3 == 0)) {
			unsigned k = (unsigned)((r >> 8) % n);
			pa_free_pages(w->pool, held[k], order[k]);
			held[k] = held[--n], order[k] = order[n];
			continue;
		}
		if ((r >> 16) % 4 == 0) { /* an owned folio: the owner frees it at the end */
			to_alloc(w->owner, PA_GFP_COMP, (r >> 20) % 8 == 0 ? 9 : 0);
			continue;
		}
		static const pa_gfp_t gfp[] = { PA_GFP_KERNEL, PA_GFP_RECLAIMABLE, PA_GFP_MOVABLE };
		unsigned o = (unsigned)((r >> 24) % 3);
		struct pa_page *p = pa_alloc_pages(w->pool, gfp[(r >> 32) % 3] | PA_GFP_NOWARN, o);
		if (p)
			held[n] = p, order[n++] = o;
	}
	while (n--)
		pa_free_pages(w->pool, held[n], order[n]);
	return NULL;
}

TEST(superblock_counts_stay_exact_while_four_threads_churn_with_defrag_mode)
{
	uint64_t seed = test_seed();
	printf("seed %" PRIu64 "\n", seed);
	struct pa_platform plat = { .cpu_id = fake_cpu_id };
	struct pa_pool *pool = NULL;
	char err[256];
	REQUIRE(pa_boot("mem=256M nr_cpus=4 superblock_order=12 defrag_mode=1 kcompactd=manual",
	                &plat, &pool, err, sizeof err) == 0);
	struct towner o;
	to_init(&o, pool, 200000);
	o.strict = false; /* four threads allocate through it */
	enum { NR = 4 };
	struct sb_worker w[NR];
	unsigned ops = (unsigned)(100000 * test_scale()) + 2000;
	for (unsigned i = 0; i < NR; i++) {
		w[i] = (struct sb_worker){ .pool = pool,
			                   .owner = &o,
			                   .cpu = i,
			                   .ops = ops,
			                   .seed = seed + 7919 * (i + 1) };
		REQUIRE(pthread_create(&w[i].thread, NULL, sb_worker_main, &w[i]) == 0);
	}
	/* Meanwhile: the counts read, defrag_mode switched, compaction and validation run. */
	for (unsigned i = 0; i < 50; i++) {
		struct pa_superblock_info info;
		for (uint64_t k = 0; k < pa_superblock_count(pool); k++)
			CHECK(pa_superblock_info(pool, k, &info) == 0 &&
			      info.free <= info.nr_frames);
		CHECK(pa_ctl_write(pool, "defrag_mode", i % 2 ? "1" : "0") == 0);
		if (i % 10 == 0) {
			pa_compact(pool, -1);
			expect_valid(pool, "while the threads run");
		}
	}
	for (unsigned i = 0; i < NR; i++)
		pthread_join(w[i].thread, NULL);
	expect_valid(pool, "after the threads");
	to_free_all(&o);
	expect_all_free(pool);
	pa_shutdown(pool);
	to_destroy(&o);
}
