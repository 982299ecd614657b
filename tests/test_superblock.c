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

#include "internal.h"

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
