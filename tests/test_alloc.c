/* SPDX-License-Identifier: MIT */
/*
 * The allocation API: pa_alloc_pages / pa_free_pages /
 * pa_alloc_pages_bulk, folios, pfn <-> descriptor, pa_page_address with each
 * backing, PA_GFP_ZERO and init_on_free on real bytes, zone modifiers
 * (DMA32, MOVABLE, THISNODE), exact capacity with min_free_kbytes=0, usage
 * accounting and pa_validate.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* getpid, unlink */
#endif
#include "test.h"
#include "helpers.h"

#include "platform/platform.h"
#include "pool.h"

#include <unistd.h>

#define EXACT "min_free_kbytes=0 pcp_orders=none "

/* ---------------------------------------------------------------------- */
/* Helpers                                                                 */
/* ---------------------------------------------------------------------- */

static bool in_zone(const struct pa_zone *z, pa_pfn_t pfn, unsigned order)
{
	return pfn >= z->start_pfn && pfn + (1ull << order) <= z->end_pfn;
}

/* Allocate order-`order` blocks until failure; returns how many, pfns into out (if not NULL). */
static uint64_t alloc_until_fail(struct pa_pool *pool, pa_gfp_t gfp, unsigned order, pa_pfn_t *out)
{
	uint64_t n = 0;
	struct pa_page *page;
	while ((page = pa_alloc_pages(pool, gfp | PA_GFP_NOWARN, order)) != NULL) {
		if (out)
			out[n] = pa_page_to_pfn(pool, page);
		n++;
	}
	return n;
}

/* ---------------------------------------------------------------------- */
/* Orders, exhaustion, failures                                            */
/* ---------------------------------------------------------------------- */

TEST(alloc_order_above_max_order_returns_null)
{
	struct pa_pool *pool = test_boot(EXACT "mem=64M max_order=10");
	CHECK(pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 11) == NULL);
	CHECK(pa_alloc_pages(pool, PA_GFP_KERNEL | PA_GFP_NOWARN, 40) == NULL);
	CHECK(pa_alloc_pages(pool, PA_GFP_KERNEL | PA_GFP_NOWARN, 1000) == NULL);
	struct pa_page *out[4];
	CHECK_EQ_U64(pa_alloc_pages_bulk(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 11, 4, out), 0);
	CHECK_EQ_U64(usage(pool).allocated, 0);
	/* max_order itself works. */
	free_pfn(pool, must_alloc(pool, PA_GFP_MOVABLE, 10), 10);
	VALIDATE(pool);
	pa_shutdown(pool);
}

TEST(alloc_every_managed_frame_can_be_allocated_at_every_order)
{
	static const char *const lines[] = {
		EXACT "mem=64M max_order=10",
		EXACT "mem=64M max_order=10 memhole=8M-9M",
		EXACT "mem=256M numa=2 max_order=11",
	};
	for (size_t l = 0; l < sizeof lines / sizeof lines[0]; l++) {
		struct pa_pool *pool = test_boot(lines[l]);
		struct pa_config cfg;
		pa_get_config(pool, &cfg);
		uint64_t managed = usage(pool).managed;
		pa_pfn_t *pfns = malloc(managed * sizeof *pfns);
		REQUIRE(pfns);
		for (unsigned o = 0; o <= cfg.max_order; o++) {
			uint64_t n = alloc_until_fail(pool, PA_GFP_MOVABLE, o, pfns);
			struct pa_usage u = usage(pool);
			if (l == 0)
				CHECK_MSG(n << o == managed,
				          "%s: order %u: %" PRIu64 " blocks of %" PRIu64 " frames",
				          lines[l], o, n, managed);
			CHECK_EQ_U64(u.allocated, n << o);
			CHECK_EQ_U64(u.free, managed - (n << o));
			/* Whatever is left is smaller than the order. */
			for (unsigned z = 0; z < pool->nr_zones; z++)
				for (unsigned k = o; k <= cfg.max_order; k++)
					CHECK_EQ_U64(zone_free_blocks(&pool->zones[z], k), 0);
			VALIDATE(pool);
			for (uint64_t i = 0; i < n; i++)
				free_pfn(pool, pfns[i], o);
			CHECK_EQ_U64(usage(pool).free, managed);
		}
		/* Order 0 always takes everything. */
		CHECK_EQ_U64(alloc_until_fail(pool, PA_GFP_KERNEL, 0, NULL), managed);
		free(pfns);
		pa_shutdown(pool);
	}
}

TEST(alloc_failure_when_exhausted_returns_null_and_counts_pgalloc_fail)
{
	struct pa_pool *pool = test_boot(EXACT "mem=64M max_order=10");
	uint64_t managed = usage(pool).managed;
	CHECK_EQ_U64(alloc_until_fail(pool, PA_GFP_MOVABLE, 0, NULL), managed);
	uint64_t fail = vmstat(pool, "pgalloc_fail");
	CHECK(pa_alloc_pages(pool, PA_GFP_KERNEL | PA_GFP_NOWARN, 0) == NULL);
	CHECK_EQ_U64(vmstat(pool, "pgalloc_fail"), fail + 1);
	CHECK(pa_alloc_pages(pool, PA_GFP_RECLAIMABLE | PA_GFP_NOWARN, 3) == NULL);
	CHECK_EQ_U64(vmstat(pool, "pgalloc_fail"), fail + 2);
	struct pa_usage u = usage(pool);
	CHECK_EQ_U64(u.free, 0);
	CHECK_EQ_U64(u.allocated, managed);
	VALIDATE(pool);
	pa_shutdown(pool);
}

TEST(alloc_high_order_fails_when_memory_is_fragmented)
{
	struct pa_pool *pool = test_boot(EXACT "mem=64M max_order=10");
	uint64_t managed = usage(pool).managed;
	pa_pfn_t *pfns = malloc(managed * sizeof *pfns);
	REQUIRE(pfns);
	uint64_t n = alloc_until_fail(pool, PA_GFP_MOVABLE, 0, pfns);
	/* Free every other frame: half the memory free, no order-1 block anywhere. */
	for (uint64_t i = 0; i < n; i++)
		if (pfns[i] % 2 == 0)
			free_pfn(pool, pfns[i], 0);
	CHECK_EQ_U64(usage(pool).free, managed / 2);
	uint64_t fail = vmstat(pool, "pgalloc_fail");
	CHECK(pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 1) == NULL);
	CHECK_EQ_U64(vmstat(pool, "pgalloc_fail"), fail + 1);
	pa_pfn_t p = must_alloc(pool, PA_GFP_MOVABLE, 0);
	CHECK(p % 2 == 0);
	free(pfns);
	VALIDATE(pool);
	pa_shutdown(pool);
}

/* ---------------------------------------------------------------------- */
/* Bulk                                                                    */
/* ---------------------------------------------------------------------- */

TEST(alloc_bulk_returns_how_many_it_allocated)
{
	struct pa_pool *pool = test_boot(EXACT "mem=64M max_order=10");
	uint64_t managed = usage(pool).managed;
	struct pa_page *out[200];
	CHECK_EQ_U64(pa_alloc_pages_bulk(pool, PA_GFP_MOVABLE, 0, 0, out), 0);
	CHECK_EQ_U64(pa_alloc_pages_bulk(pool, PA_GFP_MOVABLE, 0, 100, out), 100);
	CHECK_EQ_U64(pa_alloc_pages_bulk(pool, PA_GFP_KERNEL, 3, 50, out + 100), 50);
	CHECK_EQ_U64(usage(pool).allocated, 100 + 50 * 8);
	/* Distinct, aligned, allocated heads. */
	uint8_t *seen = calloc(managed, 1);
	REQUIRE(seen);
	for (unsigned i = 0; i < 150; i++) {
		unsigned o = i < 100 ? 0 : 3;
		pa_pfn_t pfn = pa_page_to_pfn(pool, out[i]);
		REQUIRE(pfn < managed);
		CHECK(pfn % (1u << o) == 0);
		CHECK_EQ_U64(pa_folio_order(pool, out[i]), o);
		for (unsigned k = 0; k < (1u << o); k++) {
			CHECK_MSG(!seen[pfn + k], "bulk handed out frame %" PRIu64 " twice",
			          pfn + k);
			seen[pfn + k] = 1;
		}
	}
	free(seen);
	VALIDATE(pool);
	for (unsigned i = 0; i < 150; i++)
		pa_free_pages(pool, out[i], i < 100 ? 0 : 3);
	CHECK_EQ_U64(usage(pool).allocated, 0);

	/* With 10 frames left, a request for 100 gets at least one and at most 10. */
	CHECK_EQ_U64(alloc_until_fail(pool, PA_GFP_MOVABLE, 0, NULL), managed);
	for (pa_pfn_t pfn = 0; pfn < 10; pfn++)
		free_pfn(pool, pfn * 100, 0);
	unsigned got = pa_alloc_pages_bulk(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 0, 100, out);
	printf("  bulk of 100 with 10 frames free gave %u\n", got);
	CHECK(got >= 1 && got <= 10);
	for (unsigned i = 0; i < got; i++)
		CHECK(pa_page_to_pfn(pool, out[i]) % 100 == 0);
	CHECK_EQ_U64(alloc_until_fail(pool, PA_GFP_MOVABLE, 0, NULL), 10 - got);
	CHECK_EQ_U64(pa_alloc_pages_bulk(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 0, 5, out), 0);
	VALIDATE(pool);
	pa_shutdown(pool);
}

/* ---------------------------------------------------------------------- */
/* Folios and descriptors                                                  */
/* ---------------------------------------------------------------------- */

TEST(alloc_comp_folio_every_frame_knows_its_head)
{
	struct pa_pool *pool = test_boot(EXACT "mem=64M max_order=10");
	for (unsigned o = 0; o <= 10; o++) {
		pa_pfn_t head = must_alloc(pool, PA_GFP_MOVABLE | PA_GFP_COMP, o);
		struct pa_page *h = pa_pfn_to_page(pool, head);
		CHECK_EQ_U64(pa_folio_order(pool, h), o);
		for (pa_pfn_t i = 0; i < (1ull << o); i++) {
			struct pa_page *got = pa_folio_head(pool, pa_pfn_to_page(pool, head + i));
			if (got != h) {
				test_fail(__FILE__, __LINE__,
				          "order-%u folio at %" PRIu64 ": frame +%" PRIu64
				          " has head %p, want %p",
				          o, head, i, (void *)got, (void *)h);
				break;
			}
		}
		if (o > 0)
			CHECK_EQ_U64((uint64_t)(int64_t)pa_folio_order(
			                     pool, pa_pfn_to_page(pool, head + 1)),
			             (uint64_t)-1);
		free_pfn(pool, head, o);
		CHECK(pa_folio_head(pool, h) == NULL);
		CHECK_EQ_U64((uint64_t)(int64_t)pa_folio_order(pool, h), (uint64_t)-1);
	}
	VALIDATE(pool);
	pa_shutdown(pool);
}

TEST(alloc_non_comp_block_body_frames_have_no_head)
{
	struct pa_pool *pool = test_boot(EXACT "mem=64M max_order=10");
	pa_pfn_t head = must_alloc(pool, PA_GFP_KERNEL, 4);
	struct pa_page *h = pa_pfn_to_page(pool, head);
	CHECK(pa_folio_head(pool, h) == h);
	CHECK_EQ_U64(pa_folio_order(pool, h), 4);
	for (pa_pfn_t i = 1; i < 16; i++)
		CHECK(pa_folio_head(pool, pa_pfn_to_page(pool, head + i)) == NULL);
	/* A free frame has no head either. */
	pa_pfn_t other = must_alloc(pool, PA_GFP_KERNEL, 0);
	free_pfn(pool, other, 0);
	CHECK(pa_folio_head(pool, pa_pfn_to_page(pool, other)) == NULL);
	free_pfn(pool, head, 4);
	pa_shutdown(pool);
}

TEST(alloc_pfn_and_descriptor_convert_both_ways)
{
	struct pa_pool *pool = test_boot(EXACT "mem=64M max_order=10 memhole=8M-9M");
	for (pa_pfn_t pfn = 0; pfn < 16384; pfn += 7) {
		struct pa_page *p = pa_pfn_to_page(pool, pfn);
		if (pfn >= 2048 && pfn < 2304) {
			CHECK(p == NULL);
			continue;
		}
		REQUIRE(p != NULL);
		CHECK_EQ_U64(pa_page_to_pfn(pool, p), pfn);
	}
	CHECK(pa_pfn_to_page(pool, 16384) == NULL);
	CHECK(pa_pfn_to_page(pool, PA_PFN_INVALID) == NULL);
	CHECK(pa_pfn_to_page(pool, 1ull << 40) == NULL);
	/* A descriptor of another pool is not one of this pool's. */
	struct pa_pool *other = test_boot(EXACT "mem=64M max_order=10");
	CHECK_EQ_U64(pa_page_to_pfn(pool, pa_pfn_to_page(other, 5)), PA_PFN_INVALID);
	pa_shutdown(other);
	pa_shutdown(pool);
}

/* ---------------------------------------------------------------------- */
/* Backing                                                                 */
/* ---------------------------------------------------------------------- */

TEST(alloc_page_address_is_null_without_backing)
{
	struct pa_pool *pool = test_boot(EXACT "mem=64M max_order=10 backing=none");
	pa_pfn_t p = must_alloc(pool, PA_GFP_KERNEL | PA_GFP_ZERO, 2);
	CHECK(pa_page_address(pool, pa_pfn_to_page(pool, p)) == NULL);
	free_pfn(pool, p, 2);
	pa_shutdown(pool);
}

/* Real bytes: base + pfn * page_size, distinct, writable, keeping what was written. */
static void check_backed_bytes(struct pa_pool *pool)
{
	struct pa_config cfg;
	pa_get_config(pool, &cfg);
	uint8_t *base = pa_page_address(pool, pa_pfn_to_page(pool, 0));
	REQUIRE(base != NULL);
	for (pa_pfn_t pfn = 1; pfn < cfg.total_pages; pfn += 997)
		CHECK(pa_page_address(pool, pa_pfn_to_page(pool, pfn)) ==
		      base + pfn * cfg.page_size);
	pa_pfn_t blocks[8];
	unsigned orders[8] = { 0, 1, 3, 0, 5, 2, 10, 0 };
	for (unsigned i = 0; i < 8; i++) {
		blocks[i] = must_alloc(pool, i % 2 ? PA_GFP_MOVABLE : PA_GFP_KERNEL, orders[i]);
		memset(pa_page_address(pool, pa_pfn_to_page(pool, blocks[i])), 0x40 + i,
		       (size_t)cfg.page_size << orders[i]);
	}
	for (unsigned i = 0; i < 8; i++) {
		const uint8_t *b = pa_page_address(pool, pa_pfn_to_page(pool, blocks[i]));
		size_t len = (size_t)cfg.page_size << orders[i];
		bool ok = b[0] == 0x40 + i && b[len - 1] == 0x40 + i && b[len / 2] == 0x40 + i;
		CHECK_MSG(ok, "block %u (pfn %" PRIu64 ") lost its bytes", i, blocks[i]);
	}
	for (unsigned i = 0; i < 8; i++)
		free_pfn(pool, blocks[i], orders[i]);
	VALIDATE(pool);
}

TEST(alloc_anon_backing_gives_distinct_writable_bytes)
{
	struct pa_pool *pool = test_boot(EXACT "mem=64M max_order=10 backing=anon");
	check_backed_bytes(pool);
	pa_shutdown(pool);
}

TEST(alloc_file_backing_gives_distinct_writable_bytes)
{
	char path[128], line[256];
	snprintf(path, sizeof path, "/tmp/pagealloc_test_alloc_%ld.img", (long)getpid());
	snprintf(line, sizeof line, EXACT "mem=16M max_order=10 backing=file:%s", path);
	struct pa_pool *pool = test_boot(line);
	check_backed_bytes(pool);
	pa_shutdown(pool);
	unlink(path);
}

TEST_MAY_SKIP(alloc_hugetlb_backing_without_reserved_huge_pages_fails_the_boot)
{
	FILE *f = fopen("/proc/sys/vm/nr_hugepages", "r");
	long reserved = 0;
	if (f) {
		if (fscanf(f, "%ld", &reserved) != 1)
			reserved = 0;
		fclose(f);
	}
	if (reserved > 0)
		test_skip("this machine has %ld huge pages reserved", reserved);
	char err[512] = "";
	struct pa_pool *pool = NULL;
	int rc = pa_boot(EXACT "mem=64M backing=hugetlb", NULL, &pool, err, sizeof err);
	CHECK(rc < 0);
	CHECK(pool == NULL);
	CHECK_MSG(strstr(err, "hugetlb") != NULL, "message does not name hugetlb: \"%s\"", err);
	if (rc == 0 && pool)
		pa_shutdown(pool);
}

static bool all_bytes(const uint8_t *b, size_t len, uint8_t v)
{
	for (size_t i = 0; i < len; i++)
		if (b[i] != v)
			return false;
	return true;
}

TEST(alloc_gfp_zero_zeroes_a_dirtied_block)
{
	struct pa_pool *pool = test_boot(EXACT "mem=64M max_order=10 backing=anon");
	const size_t page = 4096;
	/* Dirty every frame, give it all back. */
	pa_pfn_t all[16];
	for (unsigned i = 0; i < 16; i++) {
		all[i] = must_alloc(pool, PA_GFP_MOVABLE, 10);
		memset(pa_page_address(pool, pa_pfn_to_page(pool, all[i])), 0xA5, page << 10);
	}
	for (unsigned i = 0; i < 16; i++)
		free_pfn(pool, all[i], 10);
	static const unsigned orders[] = { 0, 3, 9, 10, 1 };
	static const pa_gfp_t gfps[] = { PA_GFP_KERNEL, PA_GFP_MOVABLE, PA_GFP_RECLAIMABLE,
		                         PA_GFP_MOVABLE | PA_GFP_COMP, PA_GFP_KERNEL };
	for (unsigned i = 0; i < 5; i++) {
		pa_pfn_t p = must_alloc(pool, gfps[i] | PA_GFP_ZERO, orders[i]);
		const uint8_t *b = pa_page_address(pool, pa_pfn_to_page(pool, p));
		CHECK_MSG(all_bytes(b, page << orders[i], 0),
		          "order-%u PA_GFP_ZERO block at pfn %" PRIu64 " is not zeroed", orders[i],
		          p);
		/* Dirty it again and check a second zeroed allocation, likely of the same block. */
		memset((void *)b, 0x5A, page << orders[i]);
		free_pfn(pool, p, orders[i]);
		pa_pfn_t q = must_alloc(pool, gfps[i] | PA_GFP_ZERO, orders[i]);
		const uint8_t *c = pa_page_address(pool, pa_pfn_to_page(pool, q));
		CHECK_MSG(all_bytes(c, page << orders[i], 0),
		          "re-allocated order-%u block at pfn %" PRIu64 " is not zeroed", orders[i],
		          q);
	}
	VALIDATE(pool);
	pa_shutdown(pool);
}

TEST(alloc_init_on_free_wipes_freed_bytes)
{
	struct pa_pool *pool = test_boot(EXACT "mem=64M max_order=10 backing=anon init_on_free=1");
	static const unsigned orders[] = { 0, 2, 7, 10 };
	for (unsigned i = 0; i < 4; i++) {
		pa_pfn_t p = must_alloc(pool, PA_GFP_MOVABLE, orders[i]);
		uint8_t *b = pa_page_address(pool, pa_pfn_to_page(pool, p));
		size_t len = (size_t)4096 << orders[i];
		memset(b, 0xC3, len);
		free_pfn(pool, p, orders[i]);
		CHECK_MSG(all_bytes(b, len, 0),
		          "freed order-%u block at pfn %" PRIu64 " still holds bytes", orders[i],
		          p);
	}
	/* Without init_on_free the bytes stay (the pool does no needless work). */
	struct pa_pool *plain = test_boot(EXACT "mem=64M max_order=10 backing=anon");
	pa_pfn_t p = must_alloc(plain, PA_GFP_MOVABLE, 1);
	uint8_t *b = pa_page_address(plain, pa_pfn_to_page(plain, p));
	memset(b, 0xC3, 8192);
	free_pfn(plain, p, 1);
	CHECK(b[0] == 0xC3 && b[8191] == 0xC3);
	pa_shutdown(plain);
	VALIDATE(pool);
	pa_shutdown(pool);
}

/* ---------------------------------------------------------------------- */
/* Zones and nodes                                                         */
/* ---------------------------------------------------------------------- */

TEST(alloc_dma32_comes_from_below_4g_only)
{
	struct pa_pool *pool = test_boot(EXACT "mem=8G max_order=20");
	const pa_pfn_t limit = (4ull << 30) / 4096;
	struct pa_zone *dma32 = zone_of_type(pool, PA_ZONE_DMA32);
	struct pa_zone *normal = zone_of_type(pool, PA_ZONE_NORMAL);
	REQUIRE(dma32 && normal);
	CHECK_EQ_U64(dma32->end_pfn, limit);
	/* Without DMA32 the highest zone comes first. */
	CHECK(must_alloc(pool, PA_GFP_KERNEL, 0) >= limit);
	CHECK(must_alloc(pool, PA_GFP_MOVABLE, 5) >= limit);
	static const unsigned orders[] = { 0, 1, 9, 13, 0 };
	pa_pfn_t got[5];
	for (unsigned i = 0; i < 5; i++) {
		got[i] = must_alloc(pool, PA_GFP_DMA32 | (i % 2 ? PA_GFP_MOVABLE : 0), orders[i]);
		CHECK_MSG(got[i] + (1ull << orders[i]) <= limit,
		          "DMA32 order-%u block at pfn %" PRIu64, orders[i], got[i]);
	}
	for (unsigned i = 0; i < 5; i++)
		free_pfn(pool, got[i], orders[i]);
	/* Take all of DMA32: further DMA32 requests fail while NORMAL still has memory. */
	pa_pfn_t whole = must_alloc(pool, PA_GFP_DMA32, 20);
	CHECK_EQ_U64(whole, 0);
	CHECK(pa_alloc_pages(pool, PA_GFP_DMA32 | PA_GFP_NOWARN, 0) == NULL);
	CHECK(pa_alloc_pages(pool, PA_GFP_DMA32 | PA_GFP_MOVABLE | PA_GFP_NOWARN, 0) == NULL);
	CHECK(must_alloc(pool, PA_GFP_KERNEL, 0) >= limit);
	VALIDATE(pool);
	pa_shutdown(pool);
}

TEST(alloc_normal_zone_low_falls_back_to_dma32_down_to_its_lowmem_reserve)
{
	struct pa_pool *pool = test_boot(EXACT "mem=6G max_order=20");
	const pa_pfn_t limit = (4ull << 30) / 4096;
	struct pa_zone *normal = zone_of_type(pool, PA_ZONE_NORMAL);
	REQUIRE(normal);
	/* NORMAL serves first; DMA32 only once NORMAL is down to its low watermark. */
	uint64_t n = 0;
	pa_pfn_t p;
	while ((p = must_alloc(pool, PA_GFP_KERNEL, 9)) >= limit)
		n++;
	CHECK_MSG(normal->free_pages <= normal->wmark[PA_WMARK_LOW] + 512,
	          "fell back to DMA32 with %" PRIu64
	          " frames free in NORMAL (low watermark %" PRIu64 ")",
	          normal->free_pages, normal->wmark[PA_WMARK_LOW]);
	/*
	 * Exact capacity over both zones: DMA32 keeps its lowmem reserve (Normal's
	 * managed frames / 256) from requests that Normal could serve; a DMA32
	 * request takes that too.
	 */
	struct pa_zone *dma32 = zone_of_type(pool, PA_ZONE_DMA32);
	REQUIRE(dma32);
	CHECK_EQ_U64(dma32->lowmem_reserve[PA_ZONE_NORMAL], normal->managed_pages / 256);
	uint64_t rest = alloc_until_fail(pool, PA_GFP_KERNEL, 0, NULL);
	CHECK_EQ_U64(dma32->free_pages, dma32->lowmem_reserve[PA_ZONE_NORMAL]);
	rest += alloc_until_fail(pool, PA_GFP_DMA32, 0, NULL);
	CHECK_EQ_U64(((n + 1) << 9) + rest, usage(pool).managed);
	CHECK_EQ_U64(normal->free_pages, 0);
	CHECK_EQ_U64(dma32->free_pages, 0);
	VALIDATE(pool);
	pa_shutdown(pool);
}

TEST(alloc_zone_movable_serves_movable_requests_only)
{
	struct pa_pool *pool = test_boot(EXACT "mem=512M movablecore=25% max_order=10");
	struct pa_zone *mz = zone_of_type(pool, PA_ZONE_MOVABLE);
	REQUIRE(mz);
	CHECK_EQ_U64(mz->managed_pages, 131072 / 4);
	/* Movable requests prefer ZONE_MOVABLE. */
	pa_pfn_t m = must_alloc(pool, PA_GFP_MOVABLE, 0);
	CHECK(in_zone(mz, m, 0));
	free_pfn(pool, m, 0);
	/* Non-movable requests never get it, even when the rest is full. */
	uint64_t other = usage(pool).managed - mz->managed_pages;
	pa_pfn_t *pfns = malloc(other * sizeof *pfns);
	REQUIRE(pfns);
	uint64_t k = alloc_until_fail(pool, PA_GFP_KERNEL, 0, pfns);
	uint64_t r = alloc_until_fail(pool, PA_GFP_RECLAIMABLE, 0, pfns + k);
	CHECK_EQ_U64(k + r, other);
	for (uint64_t i = 0; i < k + r; i++)
		if (in_zone(mz, pfns[i], 0)) {
			test_fail(__FILE__, __LINE__,
			          "non-movable allocation at pfn %" PRIu64 " is in ZONE_MOVABLE",
			          pfns[i]);
			break;
		}
	CHECK_EQ_U64(mz->free_pages, mz->managed_pages);
	/* Movable requests still succeed, from ZONE_MOVABLE. */
	CHECK_EQ_U64(alloc_until_fail(pool, PA_GFP_MOVABLE, 0, NULL), mz->managed_pages);
	free(pfns);
	VALIDATE(pool);
	pa_shutdown(pool);
}

TEST(alloc_movablecore_below_a_section_is_refused_or_honoured)
{
	/* 25% of 256M is 64M, less than a 128M section: either an error or a MOVABLE zone, never silence. */
	char err[512] = "";
	struct pa_pool *pool = NULL;
	int rc = pa_boot(EXACT "mem=256M movablecore=25%", NULL, &pool, err, sizeof err);
	if (rc != 0) {
		CHECK_MSG(strstr(err, "movablecore") != NULL,
		          "message does not name movablecore: \"%s\"", err);
		return;
	}
	struct pa_zone *mz = zone_of_type(pool, PA_ZONE_MOVABLE);
	CHECK_MSG(mz && mz->managed_pages > 0,
	          "movablecore=25%% of 256M booted without a ZONE_MOVABLE");
	pa_shutdown(pool);
}

/* A platform that poses as a fixed CPU. */
static unsigned fixed_cpu_id(void *ctx)
{
	return *(const unsigned *)ctx;
}

static struct pa_pool *boot_with_cpu(const char *cmdline, unsigned *cpu)
{
	struct pa_platform plat;
	memset(&plat, 0, sizeof plat);
	plat.ctx = cpu;
	plat.cpu_id = fixed_cpu_id;
	return test_boot_on(cmdline, &plat);
}

static unsigned node_of_pfn(struct pa_pool *pool, pa_pfn_t pfn)
{
	for (unsigned n = 0; n < pool->nr_nodes; n++)
		if (pfn >= pool->nodes[n].start_pfn && pfn < pool->nodes[n].end_pfn)
			return n;
	return UINT32_MAX;
}

TEST(alloc_thisnode_stays_on_the_calling_cpus_node)
{
	unsigned cpu = 1;
	struct pa_pool *pool = boot_with_cpu(EXACT "mem=256M numa=2 nr_cpus=2 max_order=10", &cpu);
	REQUIRE(pool->nr_nodes == 2);
	/* Local node first, with or without THISNODE. */
	CHECK_EQ_U64(node_of_pfn(pool, must_alloc(pool, PA_GFP_KERNEL, 0)), 1);
	cpu = 0;
	CHECK_EQ_U64(node_of_pfn(pool, must_alloc(pool, PA_GFP_MOVABLE, 0)), 0);
	cpu = 1;
	uint64_t node1 = 0;
	struct pa_page *page;
	while ((page = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_THISNODE | PA_GFP_NOWARN, 0)) !=
	       NULL) {
		CHECK_EQ_U64(node_of_pfn(pool, pa_page_to_pfn(pool, page)), 1);
		node1++;
	}
	CHECK_EQ_U64(node1, 32768 - 1);
	CHECK(pa_alloc_pages(pool, PA_GFP_KERNEL | PA_GFP_THISNODE | PA_GFP_NOWARN, 0) == NULL);
	/* Without THISNODE it falls back to the other node. */
	CHECK_EQ_U64(node_of_pfn(pool, must_alloc(pool, PA_GFP_KERNEL, 0)), 0);
	CHECK_EQ_U64(node_of_pfn(pool, must_alloc(pool, PA_GFP_MOVABLE, 10)), 0);
	/* CPU 0 with THISNODE is served by node 0. */
	cpu = 0;
	CHECK_EQ_U64(node_of_pfn(pool, must_alloc(pool, PA_GFP_KERNEL | PA_GFP_THISNODE, 3)), 0);
	VALIDATE(pool);
	pa_shutdown(pool);
}

TEST(alloc_usage_adds_up_and_validate_passes_through_a_workload)
{
	struct pa_pool *pool = test_boot(EXACT "mem=64M max_order=10");
	pa_pfn_t held[64];
	unsigned orders[64];
	uint64_t expect = 0;
	for (unsigned i = 0; i < 64; i++) {
		orders[i] = i % 11;
		held[i] = must_alloc(pool,
		                     i % 3 == 0 ? PA_GFP_KERNEL :
		                     i % 3 == 1 ? PA_GFP_MOVABLE :
		                                  PA_GFP_RECLAIMABLE,
		                     orders[i] % 7);
		orders[i] %= 7;
		expect += 1ull << orders[i];
		struct pa_usage u = usage(pool);
		CHECK_EQ_U64(u.allocated, expect);
	}
	VALIDATE(pool);
	char err[256];
	CHECK_EQ_U64(pa_validate(pool, err, sizeof err), 0);
	for (unsigned i = 0; i < 64; i += 2) {
		free_pfn(pool, held[i], orders[i]);
		expect -= 1ull << orders[i];
		CHECK_EQ_U64(usage(pool).allocated, expect);
	}
	VALIDATE(pool);
	for (unsigned i = 1; i < 64; i += 2)
		free_pfn(pool, held[i], orders[i]);
	struct pa_usage u = usage(pool);
	CHECK_EQ_U64(u.allocated, 0);
	CHECK_EQ_U64(u.free, u.managed);
	VALIDATE(pool);
	pa_shutdown(pool);
}

TEST(alloc_validate_reports_a_corrupted_free_count)
{
	struct pa_pool *pool = test_boot(EXACT "mem=64M max_order=10");
	char err[256] = "";
	pool->zones[0]
	        .nr_free_mt[3 * PA_MT_COUNT +
	                    PA_MT_MOVABLE]++; /* break an invariant behind the allocator's back */
	int rc = pa_validate(pool, err, sizeof err);
	CHECK_EQ_U64((uint64_t)(int64_t)rc, (uint64_t)(int64_t)-EFAULT);
	CHECK_MSG(err[0] != '\0', "pa_validate gave no message");
	pool->zones[0].nr_free_mt[3 * PA_MT_COUNT + PA_MT_MOVABLE]--;
	VALIDATE(pool);
	pa_shutdown(pool);
}

/* ---------------------------------------------------------------------- */
/* The watermark before the per-CPU lists                                  */
/* ---------------------------------------------------------------------- */

/*
 * Frames on a CPU's lists are not free memory of the zone: once a request
 * that may not dip has failed at the min watermark, giving 200 frames to the
 * CPU's list does not let 200 more through (Linux fails them all). A
 * PA_GFP_HIGH request may still dip below the min watermark.
 */
TEST(alloc_pcp_hit_below_the_watermark_is_refused)
{
	unsigned cpu = 0;
	struct pa_pool *pool = boot_with_cpu("mem=256M nr_cpus=1", &cpu);
	const pa_gfp_t gfp = PA_GFP_NOCOMPACT | PA_GFP_NOWARN;
	uint64_t managed = usage(pool).managed;
	pa_pfn_t *pfns = malloc(managed * sizeof *pfns);
	REQUIRE(pfns);
	uint64_t n = alloc_until_fail(pool, gfp, 0, pfns);
	REQUIRE(n >= 200);
	for (uint64_t i = n - 200; i < n; i++)
		free_pfn(pool, pfns[i], 0);
	n -= 200;
	unsigned served = 0;
	for (unsigned i = 0; i < 200; i++) {
		struct pa_page *page = pa_alloc_pages(pool, gfp, 0);
		if (page) {
			pfns[n++] = pa_page_to_pfn(pool, page);
			served++;
		}
	}
	CHECK_MSG(served == 0, "%u of 200 requests served below the watermark", served);
	struct pa_page *high = pa_alloc_pages(pool, gfp | PA_GFP_HIGH, 0);
	CHECK_MSG(high != NULL, "PA_GFP_HIGH may dip below the min watermark");
	if (high)
		pfns[n++] = pa_page_to_pfn(pool, high);
	for (uint64_t i = 0; i < n; i++)
		free_pfn(pool, pfns[i], 0);
	free(pfns);
	VALIDATE(pool);
	CHECK_EQ_U64(usage(pool).allocated, 0);
	pa_shutdown(pool);
}
