/* SPDX-License-Identifier: MIT */
/*
 * Boot: the command line is parsed and validated (every bad line fails with
 * -EINVAL and a message naming the key and the value, leaving *out alone),
 * and the derived configuration follows Linux's rules, including the seed 004
 * tables (page size, max order, THP -> pageblock order and CMA alignment).
 */
#include "test.h"

#include "helpers.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define KiB (1ull << 10)
#define MiB (1ull << 20)
#define GiB (1ull << 30)

static struct pa_pool *const sentinel_pool = (struct pa_pool *)(uintptr_t)0x5a5a5a50;

/*
 * Boot `line`, expect -EINVAL, *out left untouched (or NULL) and a message
 * naming `key` (or `alt_key`, for an alias) and `value` (when not NULL).
 */
static void expect_rejected_alt(const char *line, const char *key, const char *alt_key,
                                const char *value)
{
	char err[512];
	memset(err, 0, sizeof err);
	struct pa_pool *pool = sentinel_pool;
	int rc = pa_boot(line, NULL, &pool, err, sizeof err);
	CHECK_MSG(rc == -EINVAL, "pa_boot(\"%s\") = %d, expected -EINVAL (%d); err \"%s\"", line,
	          rc, -EINVAL, err);
	CHECK_MSG(pool == sentinel_pool || pool == NULL, "pa_boot(\"%s\") failed but set *out",
	          line);
	if (rc == 0 && pool && pool != sentinel_pool)
		pa_shutdown(pool);
	CHECK_MSG(err[0] != '\0', "pa_boot(\"%s\"): empty error message", line);
	bool names_key = strstr(err, key) || (alt_key && strstr(err, alt_key));
	CHECK_MSG(names_key, "pa_boot(\"%s\"): message \"%s\" does not name the key \"%s\"", line,
	          err, key);
	if (value && value[0])
		CHECK_MSG(strstr(err, value) != NULL,
		          "pa_boot(\"%s\"): message \"%s\" does not name the value \"%s\"", line,
		          err, value);
	fprintf(stderr, "    rejected \"%s\": %s\n", line, err);
}

static void expect_rejected(const char *line, const char *key, const char *value)
{
	expect_rejected_alt(line, key, NULL, value);
}

static void boot_config(const char *line, struct pa_config *cfg)
{
	struct pa_pool *pool = test_boot(line);
	memset(cfg, 0xa5, sizeof *cfg);
	pa_get_config(pool, cfg);
	pa_shutdown(pool);
}

/* --- Bad lines ------------------------------------------------------------ */

TEST(boot_rejects_unknown_key)
{
	expect_rejected("bogus=1", "bogus", NULL);
	expect_rejected("mem=64M Max_order=5", "Max_order", NULL);
	expect_rejected("mem=64M max_orders=5", "max_orders", NULL);
}

TEST(boot_rejects_missing_equals)
{
	expect_rejected("mem", "mem", NULL);
	expect_rejected("mem=64M max_order", "max_order", NULL);
}

TEST(boot_rejects_empty_value)
{
	expect_rejected("mem=", "mem", NULL);
	expect_rejected("mem=64M max_order=", "max_order", NULL);
	expect_rejected("mem=64M bad_page=", "bad_page", NULL);
	expect_rejected("mem=64M cma=", "cma", NULL);
}

TEST(boot_rejects_bad_mem_size)
{
	expect_rejected("mem=0", "mem", "0");
	expect_rejected("mem=-1", "mem", "-1");
	expect_rejected("mem=abc", "mem", "abc");
	expect_rejected("mem=1Q", "mem", "1Q");
	expect_rejected("mem=1.5G", "mem", "1.5G");
	expect_rejected("mem=1GG", "mem", "1GG");
	expect_rejected("mem=99999999999T", "mem", "99999999999T"); /* overflows 64 bits */
	expect_rejected("mem==1G", "mem", "=1G");
	/* More frames than the 32-bit free-list links can name (2^33 at 4 KiB). */
	expect_rejected("mem=32T", "mem", "32T");
}

/* Numbers are decimal: no octal from a leading zero, no hex, no sign; overflow is refused. */
TEST(boot_rejects_numbers_that_are_not_plain_decimal)
{
	expect_rejected("mem=010G", "mem", "010G"); /* C's strtoull(, 0) reads 8 GiB */
	expect_rejected("mem=0x40000000", "mem", "0x40000000");
	expect_rejected("mem=+1G", "mem", "+1G");
	expect_rejected("mem=18446744073709551616", "mem", "18446744073709551616");
	expect_rejected("mem=17179869184G", "mem", "17179869184G"); /* 2^64 bytes */
	expect_rejected("mem=1G max_order=010", "max_order", "010");
	expect_rejected("mem=1G numa=0x2", "numa", "0x2");
	expect_rejected("mem=1G min_free_kbytes=+5", "min_free_kbytes", "+5");
	expect_rejected("mem=1G memhole=0100M-200M", "memhole", "0100M-200M");
	expect_rejected("mem=1G cma=04M", "cma", "04M");
	/* START + SIZE past 2^64 must not wrap into the fit check. */
	expect_rejected("mem=1G cma=4M@18446744073705357312", "cma", "4M@18446744073705357312");
	expect_rejected("mem=1G cma=4M@18446744073709551615", "cma", "4M@18446744073709551615");
	struct pa_config cfg;
	boot_config("mem=10G", &cfg); /* a plain decimal with a suffix still boots */
	CHECK_EQ_U64(cfg.total_pages, 10ull << 18);
}

/* A key that is not a list, given twice (or with its alias), is refused naming it. */
TEST(boot_rejects_a_key_given_twice)
{
	expect_rejected("mem=1G mem=2G", "mem", "2G");
	expect_rejected("mem=1G max_order=5 max_order=5", "max_order", NULL);
	expect_rejected("mem=1G debug=1 bad_page=report debug=0", "debug", NULL);
	expect_rejected_alt("mem=1G pageblock_order_ceil=5 page_block_max_order=6",
	                    "page_block_max_order", "pageblock_order_ceil", NULL);
	/* memhole= and cma= add to lists. */
	struct pa_pool *pool = test_boot("mem=8G memhole=1G-2G memhole=3G-4G cma=4M cma=8M");
	CHECK_EQ_U64(pa_cma_count(pool), 2);
	pa_shutdown(pool);
}

/* --- Pools too large for the machine ---------------------------------------- */

static uint64_t machine_1m(void *ctx)
{
	(void)ctx;
	return 1ull << 20;
}

/*
 * A pool whose boot metadata would not fit in the machine fails at once
 * with -ENOMEM and a message naming mem, the metadata it needs and what the
 * machine has (here a platform says 1 MiB: mem=4T needs two bytes for each
 * of its 2 Mi pageblocks); a pool that fits boots. What boot needs does not
 * grow with a descriptor per frame: free memory costs none until it is used.
 */
TEST(boot_refuses_a_pool_whose_metadata_exceeds_the_machine)
{
	struct pa_platform plat = { .machine_bytes = machine_1m };
	struct pa_pool *pool = sentinel_pool;
	char err[512] = "";
	int rc = pa_boot("mem=4T", &plat, &pool, err, sizeof err);
	CHECK_MSG(rc == -ENOMEM, "mem=4T on a 1 MiB machine: %d (%s)", rc, err);
	CHECK(pool == sentinel_pool || pool == NULL);
	CHECK_MSG(strstr(err, "mem=4T") && strstr(err, "1 MiB") && strstr(err, "machine has"),
	          "message: %s", err);
	fprintf(stderr, "    %s\n", err);
	pool = NULL;
	REQUIRE(pa_boot("mem=16G", &plat, &pool, err, sizeof err) == 0 && pool);
	pa_shutdown(pool);
	/* mem=15T: 60 GiB of descriptors if every frame were used, yet it boots on this machine. */
	pool = NULL;
	rc = pa_boot("mem=15T", NULL, &pool, err, sizeof err);
	CHECK_MSG(rc == 0 && pool, "mem=15T: %d (%s)", rc, err);
	pa_shutdown(pool);
}

TEST(boot_rejects_bad_page_shift)
{
	expect_rejected("page_shift=13", "page_shift", "13");
	expect_rejected("page_shift=0", "page_shift", "0");
	expect_rejected("page_shift=20", "page_shift", "20");
	expect_rejected("page_shift=abc", "page_shift", "abc");
	expect_rejected("page_shift=12x", "page_shift", "12x");
}

TEST(boot_rejects_max_order_out_of_range)
{
	expect_rejected("mem=64M max_order=41", "max_order", "41");
	expect_rejected("mem=64M max_order=-1", "max_order", "-1");
	expect_rejected("mem=64M max_order=ten", "max_order", "ten");
	expect_rejected("mem=64M max_order=1x", "max_order", "1x");
	expect_rejected("mem=64M max_order=99999999999999999999", "max_order",
	                "99999999999999999999");
}

TEST(boot_rejects_fallback_order_outside_pageblock_and_max_order)
{
	expect_rejected("mem=64M max_order=12 fallback_order=8", "fallback_order", "8");
	expect_rejected("mem=64M max_order=12 fallback_order=13", "fallback_order", "13");
	expect_rejected("mem=64M fallback_order=x", "fallback_order", "x");
}

TEST(boot_rejects_pageblock_ceil_above_max_order)
{
	/* Linux's build check: MAX_PAGE_ORDER must be >= PAGE_BLOCK_MAX_ORDER. */
	expect_rejected("mem=64M max_order=5 pageblock_order_ceil=6", "pageblock_order_ceil", "6");
	expect_rejected("mem=64M pageblock_order_ceil=11", "pageblock_order_ceil", "11");
	expect_rejected("mem=1G page_shift=14 pageblock_order_ceil=12", "pageblock_order_ceil",
	                "12");
	expect_rejected_alt("mem=64M page_block_max_order=11", "page_block_max_order",
	                    "pageblock_order_ceil", "11");
}

TEST(boot_rejects_pageblock_ceil_zero)
{
	/* The ceiling ranges 1..max_order, as CONFIG_PAGE_BLOCK_ORDER's Kconfig range. */
	expect_rejected("mem=64M pageblock_order_ceil=0", "pageblock_order_ceil", "0");
	expect_rejected("mem=64M pageblock_order_ceil=-3", "pageblock_order_ceil", "-3");
	expect_rejected("mem=64M pageblock_order_ceil=x", "pageblock_order_ceil", "x");
}

TEST(boot_rejects_bad_thp)
{
	expect_rejected("mem=64M thp=2", "thp", "2");
	expect_rejected("mem=64M thp=yes", "thp", "yes");
}

TEST(boot_rejects_bad_numa)
{
	expect_rejected("mem=1G numa=0", "numa", "0");
	expect_rejected("mem=16G numa=65", "numa", "65");
	expect_rejected("mem=1G numa=2x", "numa", "2x");
	/* Node boundaries are rounded to 128 MiB sections: a second node gets nothing. */
	expect_rejected("mem=64M numa=2", "numa", "2");
}

TEST(boot_rejects_bad_memhole)
{
	expect_rejected("mem=1G memhole=2G-3G", "memhole", "2G-3G");
	expect_rejected("mem=1G memhole=768M-2G", "memhole", "768M-2G");
	expect_rejected("mem=1G memhole=512M-256M", "memhole", "512M-256M");
	expect_rejected("mem=1G memhole=256M-256M", "memhole", "256M-256M");
	expect_rejected("mem=1G memhole=256M", "memhole", "256M");
	expect_rejected("mem=1G memhole=abc-512M", "memhole", "abc-512M");
	expect_rejected("mem=1G memhole=256M-1Q", "memhole", "256M-1Q");
}

TEST(boot_rejects_bad_memreserve)
{
	expect_rejected("mem=1G memreserve=2G-3G", "memreserve", "2G-3G");
	expect_rejected("mem=1G memreserve=512M-256M", "memreserve", "512M-256M");
	expect_rejected("mem=1G memreserve=256M", "memreserve", "256M");
	expect_rejected("mem=1G memreserve=0-1G", "memreserve", NULL); /* nothing managed */
}

/*
 * memreserve= memory is present but never the buddy's, as Linux's boot-time
 * reservations: the zone counts it in present, not in managed, never hands
 * a frame of it out, and its watermarks and the lowmem reserve the zone
 * below keeps from it come from the managed frames, as Linux's do.
 */
TEST(boot_memreserve_is_present_but_not_managed)
{
	struct pa_pool *pool =
	        test_boot("mem=8G zone_dma=1 memreserve=5120M-5200M memreserve=5100M-5130M "
	                  "memhole=5180M-5184M");
	struct pa_zone_info dma32, normal;
	REQUIRE(pa_zone_info(pool, 1, &dma32) == 0 && dma32.type == PA_ZONE_DMA32);
	REQUIRE(pa_zone_info(pool, 2, &normal) == 0 && normal.type == PA_ZONE_NORMAL);
	uint64_t reserved = ((5200ull - 5100) << 8) - (4 << 8); /* the hole in it is not memory */
	CHECK_EQ_U64(normal.present, (4ull << 18) - (4 << 8));
	CHECK_EQ_U64(normal.present - normal.managed, reserved);
	CHECK_EQ_U64(normal.free, normal.managed);
	char *zi = report(pool, PA_REPORT_ZONEINFO, 0);
	char want[64];
	snprintf(want, sizeof want, "protection: (0, 0, %llu",
	         (unsigned long long)(normal.managed / 256));
	CHECK_MSG(strstr(zi, want), "DMA32's lowmem reserve is not from Normal's managed frames");
	free(zi);
	uint64_t n = 0;
	struct pa_page **pages =
	        alloc_order0_all(pool, PA_GFP_MOVABLE | PA_GFP_HIGH | PA_GFP_NOWARN, 1u << 22, &n);
	for (uint64_t i = 0; i < n; i++) {
		pa_pfn_t pfn = pa_page_to_pfn(pool, pages[i]);
		CHECK_MSG(pfn < (5100ull << 8) || pfn >= (5200ull << 8), "pfn %llu is reserved",
		          (unsigned long long)pfn);
	}
	free_order0_all(pool, pages, n);
	struct pa_pageblock_info pb; /* reserved memory's pageblock: Movable (Linux 6.13 on) */
	REQUIRE(pa_pageblock_info(pool, (5120ull << 8) >> 9, &pb) == 0);
	CHECK_EQ_U64(pb.mt, PA_MT_MOVABLE);
	CHECK_EQ_U64(pb.free + pb.allocated + pb.hole, 0);
	CHECK_EQ_U64(pb.reserved, pb.nr_frames);
	/* A memory block with reserved frames never goes offline; one beside it does. */
	uint64_t block = 128ull << 8;
	CHECK_EQ_U64(pa_memory_offline(pool, 5120ull << 8, block), -EBUSY);
	CHECK_EQ_U64(pa_memory_offline(pool, 6144ull << 8, block), 0);
	CHECK_EQ_U64(pa_memory_online(pool, 6144ull << 8, block), 0);
	VALIDATE(pool);
	pa_shutdown(pool);
}

TEST(boot_rejects_memory_entirely_in_holes)
{
	/* A pool without a single managed frame is no pool. */
	expect_rejected("mem=1G memhole=0-1G", "memhole", NULL);
}

TEST(boot_rejects_bad_movablecore)
{
	expect_rejected("mem=1G movablecore=100%", "movablecore", "100%");
	expect_rejected("mem=1G movablecore=150%", "movablecore", "150%");
	expect_rejected("mem=1G movablecore=abc", "movablecore", "abc");
	expect_rejected("mem=1G movablecore=-5%", "movablecore", "-5%");
	expect_rejected("mem=1G movablecore=2G", "movablecore", "2G");
}

TEST(boot_rejects_bad_nr_cpus)
{
	expect_rejected("mem=64M nr_cpus=0", "nr_cpus", "0");
	expect_rejected("mem=64M nr_cpus=1025", "nr_cpus", "1025");
	expect_rejected("mem=64M nr_cpus=many", "nr_cpus", "many");
}

TEST(boot_rejects_bad_cma)
{
	expect_rejected("mem=1G cma=abc", "cma", "abc");
	expect_rejected("mem=1G cma=4M@xyz", "cma", "4M@xyz");
	expect_rejected("mem=1G cma=1Q", "cma", "1Q");
	expect_rejected("mem=1G cma=2G", "cma", "2G");
	expect_rejected("mem=1G cma=16M@2G", "cma", "16M@2G");
}

TEST(boot_rejects_bad_backing)
{
	expect_rejected("mem=64M backing=floppy", "backing", "floppy");
	expect_rejected("mem=64M backing=file:", "backing", "file:");
	expect_rejected("mem=64M backing=ANON", "backing", "ANON");
}

TEST(boot_rejects_bad_page_reporting_order)
{
	expect_rejected("mem=64M page_reporting_order=-2", "page_reporting_order", "-2");
	expect_rejected("mem=64M page_reporting_order=11", "page_reporting_order", "11");
	expect_rejected("mem=64M max_order=5 page_reporting_order=6", "page_reporting_order", "6");
}

TEST(boot_rejects_bad_watermark_keys)
{
	expect_rejected("mem=64M min_free_kbytes=-5", "min_free_kbytes", "-5");
	expect_rejected("mem=64M min_free_kbytes=lots", "min_free_kbytes", "lots");
	expect_rejected("mem=64M watermark_scale_factor=3001", "watermark_scale_factor", "3001");
	expect_rejected("mem=64M watermark_scale_factor=-1", "watermark_scale_factor", "-1");
}

TEST(boot_rejects_bad_boolean_keys)
{
	expect_rejected("mem=64M compaction_split_folios=2", "compaction_split_folios", "2");
	expect_rejected("mem=64M shuffle=yes", "shuffle", "yes");
	expect_rejected("mem=64M init_on_free=2", "init_on_free", "2");
	expect_rejected("mem=64M deferred_init=-1", "deferred_init", "-1");
	expect_rejected("mem=64M deferred_init=lazier", "deferred_init", "lazier");
}

TEST(boot_rejects_bad_debug_and_bad_page)
{
	expect_rejected("mem=64M debug=3", "debug", "3");
	expect_rejected("mem=64M debug=-1", "debug", "-1");
	expect_rejected("mem=64M bad_page=ignore", "bad_page", "ignore");
}

TEST(boot_rejects_bad_pcp_orders)
{
	expect_rejected("mem=64M pcp_orders=0-11", "pcp_orders", "0-11");
	expect_rejected("mem=64M pcp_orders=abc", "pcp_orders", "abc");
	expect_rejected("mem=64M pcp_rules=6.2", "pcp_rules", "6.2");
	expect_rejected("mem=64M max_order=5 pcp_orders=0-3,9", "pcp_orders", "0-3,9");
	expect_rejected("mem=64M pcp_orders=0-3,x", "pcp_orders", "0-3,x");
}

TEST_MAY_SKIP(boot_rejects_hugetlb_backing_without_reserved_pages)
{
	FILE *f = fopen("/proc/meminfo", "r");
	long total = -1;
	char line[256];
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "HugePages_Total: %ld", &total) == 1)
			break;
	if (f)
		fclose(f);
	if (total != 0)
		test_skip("HugePages_Total is %ld", total);
	char err[512] = "";
	struct pa_pool *pool = sentinel_pool;
	int rc = pa_boot("mem=64M backing=hugetlb", NULL, &pool, err, sizeof err);
	CHECK_MSG(rc < 0, "backing=hugetlb booted on a machine with no huge pages (rc %d)", rc);
	CHECK(pool == sentinel_pool || pool == NULL);
	CHECK_MSG(strstr(err, "hugetlb") || strstr(err, "huge"),
	          "message \"%s\" says nothing of huge pages", err);
	fprintf(stderr, "    rejected backing=hugetlb: %s\n", err);
	if (rc == 0 && pool && pool != sentinel_pool)
		pa_shutdown(pool);
}

TEST(boot_error_without_err_buffer_still_fails)
{
	struct pa_pool *pool = sentinel_pool;
	CHECK_EQ_U64(pa_boot("bogus=1", NULL, &pool, NULL, 0), -EINVAL);
	CHECK(pool == sentinel_pool || pool == NULL);
	char err[4] = "abc";
	CHECK_EQ_U64(pa_boot("bogus=1", NULL, &pool, err, 0), -EINVAL);
	CHECK(memcmp(err, "abc", 4) == 0); /* errlen 0: nothing written */
}

TEST(boot_error_message_is_truncated_and_terminated)
{
	char err[64];
	memset(err, 'X', sizeof err);
	struct pa_pool *pool = NULL;
	CHECK_EQ_U64(pa_boot("mem=64M max_order=41", NULL, &pool, err, 8), -EINVAL);
	CHECK(memchr(err, '\0', 8) != NULL);
	for (size_t i = 8; i < sizeof err; i++)
		CHECK(err[i] == 'X');
}

/* --- Good lines and derived values ------------------------------------------ */

TEST(boot_defaults_match_design)
{
	struct pa_config c;
	boot_config("", &c);
	CHECK_EQ_U64(c.page_shift, 12);
	CHECK_EQ_U64(c.page_size, 4096);
	CHECK_EQ_U64(c.max_order, 10);
	CHECK_EQ_U64(c.huge_order, 9);
	CHECK_EQ_U64(c.pageblock_order, 9);
	CHECK_EQ_U64(c.pageblock_order_ceil, 10);
	CHECK_EQ_U64(c.cma_alignment_bytes, 2 * MiB);
	CHECK_EQ_U64(c.section_shift, 27 - 12);
	CHECK_EQ_U64(c.total_pages, GiB / 4096); /* mem defaults to 1G */
	CHECK_EQ_U64(c.nr_nodes, 1);
	CHECK(c.nr_cpus >= 1 && c.nr_cpus <= 1024);
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	if (online >= 1 && online <= 1024)
		CHECK_MSG(c.nr_cpus <= (unsigned)online, "nr_cpus %u, online %ld", c.nr_cpus,
		          online);
	CHECK(c.metadata_bytes_per_frame >= 1 && c.metadata_bytes_per_frame <= 16);
}

TEST(boot_default_max_order_follows_page_shift)
{
	static const struct {
		unsigned shift, max_order, huge, section_shift;
	} rows[] = { { 12, 10, 9, 15 }, { 14, 11, 11, 13 }, { 16, 13, 13, 11 } };
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		char line[128];
		snprintf(line, sizeof line, "mem=4G page_shift=%u", rows[i].shift);
		struct pa_config c;
		boot_config(line, &c);
		CHECK_EQ_U64(c.page_size, 1ull << rows[i].shift);
		CHECK_EQ_U64(c.max_order, rows[i].max_order);
		CHECK_EQ_U64(c.huge_order, rows[i].huge);
		CHECK_EQ_U64(c.pageblock_order_ceil, rows[i].max_order);
		CHECK_EQ_U64(c.section_shift, rows[i].section_shift);
		CHECK_EQ_U64(c.total_pages, (4 * GiB) >> rows[i].shift);
	}
}

/* The tables of seed 004, plus the ceiling it introduces, through pa_boot. */
TEST(boot_seed004_cma_alignment_tables)
{
	static const struct {
		const char *line;
		int huge_order;
		unsigned max_order, pageblock_order, ceil;
		uint64_t cma;
	} rows[] = {
		/* Default ARCH_FORCE_MAX_ORDER, THP set. */
		{ "mem=1G page_shift=12 max_order=10", 9, 10, 9, 10, 2 * MiB },
		{ "mem=1G page_shift=14 max_order=11", 11, 11, 11, 11, 32 * MiB },
		{ "mem=4G page_shift=16 max_order=13", 13, 13, 13, 13, 512 * MiB },
		/* Largest ARCH_FORCE_MAX_ORDER, neither THP nor hugetlb. */
		{ "mem=1G page_shift=12 max_order=15 thp=0", -1, 15, 15, 15, 128 * MiB },
		{ "mem=1G page_shift=14 max_order=13 thp=0", -1, 13, 13, 13, 128 * MiB },
		{ "mem=4G page_shift=16 max_order=13 thp=0", -1, 13, 13, 13, 512 * MiB },
		/* The ceiling: 16 KiB pages with pageblock order 7 align CMA as 4 KiB pages do. */
		{ "mem=1G page_shift=14 pageblock_order_ceil=7", 11, 11, 7, 7, 2 * MiB },
		{ "mem=1G page_shift=14 max_order=11 page_block_max_order=7", 11, 11, 7, 7,
		  2 * MiB },
		{ "mem=4G page_shift=16 pageblock_order_ceil=5", 13, 13, 5, 5, 2 * MiB },
		{ "mem=1G page_shift=12 pageblock_order_ceil=7", 9, 10, 7, 7, 512 * KiB },
		{ "mem=1G page_shift=14 max_order=13 thp=0 pageblock_order_ceil=7", -1, 13, 7, 7,
		  2 * MiB },
		/* A ceiling above the huge order changes nothing with THP. */
		{ "mem=1G page_shift=12 max_order=12 pageblock_order_ceil=11", 9, 12, 9, 11,
		  2 * MiB },
		/* The max order caps the pageblock order below the huge order. */
		{ "mem=1G page_shift=12 max_order=5", 9, 5, 5, 5, 128 * KiB },
		/* Without THP and without a ceiling, the pageblock order is the max order. */
		{ "mem=1G page_shift=12 thp=0", -1, 10, 10, 10, 4 * MiB },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		struct pa_config c;
		boot_config(rows[i].line, &c);
		CHECK_MSG(c.huge_order == rows[i].huge_order, "%s: huge_order %d, expected %d",
		          rows[i].line, c.huge_order, rows[i].huge_order);
		CHECK_MSG(c.max_order == rows[i].max_order, "%s: max_order %u, expected %u",
		          rows[i].line, c.max_order, rows[i].max_order);
		CHECK_MSG(c.pageblock_order == rows[i].pageblock_order,
		          "%s: pageblock_order %u, expected %u", rows[i].line, c.pageblock_order,
		          rows[i].pageblock_order);
		CHECK_MSG(c.pageblock_order_ceil == rows[i].ceil,
		          "%s: pageblock_order_ceil %u, expected %u", rows[i].line,
		          c.pageblock_order_ceil, rows[i].ceil);
		CHECK_MSG(c.cma_alignment_bytes == rows[i].cma,
		          "%s: cma_alignment_bytes %" PRIu64 ", expected %" PRIu64, rows[i].line,
		          c.cma_alignment_bytes, rows[i].cma);
		CHECK_EQ_U64(c.cma_alignment_bytes, c.page_size << c.pageblock_order);
	}
}

/* max_order is inclusive and a boot parameter: 0..30 all boot on a small pool. */
TEST(boot_accepts_max_order_0_to_30)
{
	for (unsigned mo = 0; mo <= 30; mo++) {
		char line[128];
		snprintf(line, sizeof line, "mem=64M min_free_kbytes=0 max_order=%u", mo);
		struct pa_pool *pool = test_boot(line);
		struct pa_config c;
		pa_get_config(pool, &c);
		CHECK_EQ_U64(c.max_order, mo);
		CHECK_EQ_U64(c.pageblock_order_ceil, mo);
		CHECK_EQ_U64(c.pageblock_order, mo < 9 ? mo : 9);
		VALIDATE(pool);
		/* 64M is 2^14 frames: an order up to 14 (and up to max_order) can be had. */
		unsigned order = mo < 14 ? mo : 14;
		struct pa_page *p = pa_alloc_pages(pool, PA_GFP_NOWARN, order);
		CHECK_MSG(p != NULL, "%s: order %u allocation failed", line, order);
		/* One above the max order never succeeds. */
		CHECK(pa_alloc_pages(pool, PA_GFP_NOWARN | PA_GFP_NORETRY, mo + 1) == NULL);
		if (p)
			pa_free_pages(pool, p, order);
		VALIDATE(pool);
		pa_shutdown(pool);
	}
}

TEST(boot_accepts_max_order_40)
{
	struct pa_config c;
	boot_config("mem=64M max_order=40", &c);
	CHECK_EQ_U64(c.max_order, 40);
	CHECK_EQ_U64(c.pageblock_order, 9);
}

TEST(boot_thp0_has_no_huge_order)
{
	struct pa_config c;
	boot_config("mem=1G thp=0", &c);
	CHECK_EQ_U64(c.huge_order, -1);
	CHECK_EQ_U64(c.pageblock_order, 10);
	boot_config("mem=1G thp=0 max_order=8", &c);
	CHECK_EQ_U64(c.pageblock_order, 8);
	boot_config("mem=1G thp=1", &c);
	CHECK_EQ_U64(c.huge_order, 9);
}

TEST(boot_size_suffixes_are_equivalent)
{
	static const char *const lines[] = { "mem=1073741824", "mem=1048576K", "mem=1024M",
		                             "mem=1G" };
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		struct pa_config c;
		boot_config(lines[i], &c);
		CHECK_MSG(c.total_pages == GiB / 4096, "%s: total_pages %" PRIu64, lines[i],
		          c.total_pages);
	}
	struct pa_config c;
	boot_config("mem=1T page_shift=16", &c);
	CHECK_EQ_U64(c.total_pages, (1ull << 40) >> 16);
}

TEST(boot_accepts_every_key)
{
	const char *line =
	        "mem=2G numa=2 memhole=1536M-1600M movablecore=10% page_shift=12 "
	        "max_order=11 pageblock_order_ceil=9 thp=1 pcp_orders=0-3,9 nr_cpus=4 "
	        "cma=64M cma=32M@256M backing=none page_reporting_order=9 "
	        "min_free_kbytes=1024 watermark_scale_factor=20 compaction_split_folios=1 "
	        "shuffle=1 init_on_free=0 deferred_init=0 debug=1 bad_page=report";
	struct pa_pool *pool = test_boot(line);
	struct pa_config c;
	pa_get_config(pool, &c);
	CHECK_EQ_U64(c.max_order, 11);
	CHECK_EQ_U64(c.pageblock_order, 9);
	CHECK_EQ_U64(c.pageblock_order_ceil, 9);
	CHECK_EQ_U64(c.nr_cpus, 4);
	CHECK_EQ_U64(c.nr_nodes, 2);
	CHECK_EQ_U64(c.total_pages, 2 * GiB / 4096);
	VALIDATE(pool);
	pa_shutdown(pool);
}

TEST(boot_accepts_range_edges)
{
	static const char *const lines[] = {
		"mem=64M nr_cpus=1",
		"mem=64M nr_cpus=1024",
		"mem=64M watermark_scale_factor=0",
		"mem=64M watermark_scale_factor=3000",
		"mem=64M min_free_kbytes=0",
		"mem=64M page_reporting_order=-1",
		"mem=64M page_reporting_order=0",
		"mem=64M page_reporting_order=10",
		"mem=64M pcp_orders=none",
		"mem=64M pcp_orders=0-10",
		"mem=64M pcp_orders=0,2,4",
		"mem=64M max_order=0",
		"mem=64M max_order=1 pageblock_order_ceil=1",
		"mem=64M pageblock_order_ceil=1",
		"mem=64M pageblock_order_ceil=10",
		"mem=64M page_block_max_order=10",
		"mem=64M debug=0",
		"mem=64M debug=2",
		"mem=64M bad_page=panic",
		"mem=64M shuffle=0 init_on_free=1 deferred_init=1 compaction_split_folios=0",
		"mem=1G movablecore=0",
		"mem=1G movablecore=99%",
		"mem=1G movablecore=256M",
		"mem=1G cma=16M",
		"mem=1G cma=16M@512M",
		"mem=1G memhole=0-128M",
		"mem=1G memhole=896M-1G",
		"mem=1G numa=1",
		"mem=8G numa=64",
		"mem=64M backing=none",
		"mem=64M backing=anon",
	};
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		char err[512] = "";
		struct pa_pool *pool = NULL;
		int rc = pa_boot(lines[i], NULL, &pool, err, sizeof err);
		CHECK_MSG(rc == 0 && pool, "pa_boot(\"%s\") = %d: %s", lines[i], rc, err);
		if (rc == 0 && pool) {
			char verr[512];
			CHECK_MSG(pa_validate(pool, verr, sizeof verr) == 0, "%s: pa_validate: %s",
			          lines[i], verr);
			pa_shutdown(pool);
		}
	}
}

TEST(boot_nr_cpus_and_numa_read_back)
{
	struct pa_config c;
	boot_config("mem=8G numa=64 nr_cpus=7", &c);
	CHECK_EQ_U64(c.nr_nodes, 64);
	CHECK_EQ_U64(c.nr_cpus, 7);
	boot_config("mem=1G numa=4 nr_cpus=1024", &c);
	CHECK_EQ_U64(c.nr_nodes, 4);
	CHECK_EQ_U64(c.nr_cpus, 1024);
}

TEST(boot_tolerates_extra_spaces)
{
	struct pa_config c;
	boot_config("  mem=64M   max_order=8  ", &c);
	CHECK_EQ_U64(c.max_order, 8);
	CHECK_EQ_U64(c.total_pages, 64 * MiB / 4096);
}

TEST(boot_file_backing_boots)
{
	char path[] = "/tmp/pa_test_boot_XXXXXX";
	int fd = mkstemp(path);
	REQUIRE(fd >= 0);
	close(fd);
	char line[256];
	snprintf(line, sizeof line, "mem=16M backing=file:%s", path);
	char err[512] = "";
	struct pa_pool *pool = NULL;
	int rc = pa_boot(line, NULL, &pool, err, sizeof err);
	CHECK_MSG(rc == 0 && pool, "pa_boot(\"%s\") = %d: %s", line, rc, err);
	if (pool) {
		struct pa_page *p = pa_alloc_pages(pool, PA_GFP_ZERO, 0);
		CHECK(p != NULL);
		if (p) {
			unsigned char *bytes = pa_page_address(pool, p);
			CHECK(bytes != NULL);
			if (bytes)
				CHECK(bytes[0] == 0 && bytes[4095] == 0);
			pa_free_pages(pool, p, 0);
		}
		VALIDATE(pool);
		pa_shutdown(pool);
	}
	unlink(path);
}

/* Boot line with backing=file:path (and extra keys), booted and shut down; 0 or the error. */
static int boot_file_backed(const char *path, const char *extra, char *err, size_t errlen)
{
	char line[512];
	snprintf(line, sizeof line, "mem=16M backing=file:%s %s", path, extra);
	struct pa_pool *pool = NULL;
	int rc = pa_boot(line, NULL, &pool, err, errlen);
	if (rc == 0) {
		CHECK_MSG(access(path, F_OK) == 0, "%s: no file while the pool is up", path);
		pa_shutdown(pool);
	}
	return rc;
}

TEST(boot_file_backing_removes_the_file_it_created)
{
	char path[128], err[512] = "";
	snprintf(path, sizeof path, "/tmp/pa_test_backing_%ld.img", (long)getpid());
	unlink(path);
	REQUIRE(boot_file_backed(path, "", err, sizeof err) == 0);
	CHECK_MSG(access(path, F_OK) != 0, "%s: still there after shutdown", path);

	/* backing_keep=1: the created file stays. */
	REQUIRE(boot_file_backed(path, "backing_keep=1", err, sizeof err) == 0);
	CHECK_MSG(access(path, F_OK) == 0, "%s: removed despite backing_keep=1", path);

	/* A file that was there before boot is the user's: never removed. */
	REQUIRE(boot_file_backed(path, "", err, sizeof err) == 0);
	CHECK_MSG(access(path, F_OK) == 0, "%s: a file the pool did not create was removed", path);
	unlink(path);
	expect_rejected("mem=16M backing=file:/tmp/x backing_keep=2", "backing_keep", "2");
}

TEST(boot_file_backing_errors_name_the_path)
{
	const char *path = "/nonexistent-dir/pa_test_backing.img";
	char err[512] = "";
	int rc = boot_file_backed(path, "", err, sizeof err);
	CHECK_MSG(rc == -ENOENT, "boot with %s = %d, expected -ENOENT", path, rc);
	CHECK_MSG(strstr(err, path) != NULL, "message \"%s\" does not name %s", err, path);
}

TEST(boot_pools_side_by_side_keep_their_configs)
{
	struct pa_pool *a = test_boot("mem=64M max_order=6");
	struct pa_pool *b = test_boot("mem=1G page_shift=14 pageblock_order_ceil=7");
	struct pa_config ca, cb;
	pa_get_config(a, &ca);
	pa_get_config(b, &cb);
	CHECK_EQ_U64(ca.max_order, 6);
	CHECK_EQ_U64(ca.pageblock_order, 6);
	CHECK_EQ_U64(ca.page_size, 4096);
	CHECK_EQ_U64(cb.max_order, 11);
	CHECK_EQ_U64(cb.pageblock_order, 7);
	CHECK_EQ_U64(cb.page_size, 16384);
	VALIDATE(a);
	VALIDATE(b);
	pa_shutdown(a);
	pa_shutdown(b);
}

TEST(boot_failure_leaves_no_pool_behind)
{
	/* Many failed boots in a row: each must clean up (ASan's leak check sees the rest). */
	for (int i = 0; i < 200; i++) {
		struct pa_pool *pool = NULL;
		char err[128];
		CHECK(pa_boot(i & 1 ? "mem=64M numa=2" : "mem=1G memhole=2G-3G", NULL, &pool, err,
		              sizeof err) == -EINVAL);
		CHECK(pool == NULL);
	}
}

TEST(version_matches_the_header)
{
	char want[32];
	snprintf(want, sizeof want, "%d.%d.%d", PA_VERSION_MAJOR, PA_VERSION_MINOR,
	         PA_VERSION_PATCH);
	CHECK_MSG(strcmp(pa_version(), want) == 0, "pa_version() \"%s\", header %s", pa_version(),
	          want);
	CHECK(strcmp(PA_VERSION_STRING, want) == 0);
}
