/* SPDX-License-Identifier: MIT */
/*
 * The pageblock-order ceiling in full (seed 004): at 4, 16
 * and 64 KiB pages (page_shift 12, 14, 16), each with pageblock_order_ceil
 * 1, 7 and the default, one table-driven test proves that
 *   - a block of every order 0..max_order is allocated (aligned) and freed;
 *   - an unmovable allocation claims exactly one pageblock of that size when
 *     a pageblock is what is free (its neighbours keep their type);
 *   - direct compaction makes a huge-order block out of a pool of order-0
 *     movable folios with every other one freed;
 *   - a contiguous range straddling pageblocks (at least 1000 frames) and
 *     pa_alloc_contig_pages() are taken from that fragmented pool;
 *   - a CMA area, its size rounded up to page_size << pageblock_order, is
 *     allocated (pageblock-aligned, the borrowers moved out) and released;
 *   - isolation takes exactly the pageblocks the range touches, and undoing
 *     it leaves the pool merged as at boot;
 * with pa_validate passing throughout and the owner's folios intact.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "test.h"

#include "platform/platform.h"
#include "isolation.h"
#include "pageblock.h"
#include "zone.h"
#include "owner.h"
#include "helpers.h"

#define QUIET "kcompactd=manual pcp_orders=none min_free_kbytes=0 "

static char cur[256]; /* the boot line of the configuration under test */

#define CCHECK(cond) CHECK_MSG(cond, "[%s] %s", cur, #cond)
#define CCHECK_EQ(a, b)                                                                            \
	do {                                                                                       \
		uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                                   \
		CHECK_MSG(a_ == b_, "[%s] %s == %s: %" PRIu64 " != %" PRIu64, cur, #a, #b, a_,     \
		          b_);                                                                     \
	} while (0)

/* ---------------------------------------------------------------------- */
/* Helpers                                                                 */
/* ---------------------------------------------------------------------- */

static uint64_t free_on(struct pa_pool *pool, unsigned mt)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < pool->nr_zones; i++) {
		struct pa_zone *z = &pool->zones[i];
		pa_lock(&z->lock, SITE_ADMIN);
		for (unsigned o = 0; o <= pool->cfg.max_order; o++)
			n += zone_free_count(z, o, mt) << o;
		pa_unlock(&z->lock);
	}
	return n;
}

/* ---------------------------------------------------------------------- */
/* The steps                                                               */
/* ---------------------------------------------------------------------- */

/* A block of every order, movable and unmovable, aligned; freed, the pool is as at boot. */
static void step_every_order(struct pa_pool *pool)
{
	for (unsigned o = 0; o <= pool->cfg.max_order; o++) {
		for (int k = 0; k < 2; k++) {
			struct pa_page *p =
			        pa_alloc_pages(pool, k ? PA_GFP_KERNEL : PA_GFP_MOVABLE, o);
			CHECK_MSG(p, "[%s] %s order %u failed", cur, k ? "unmovable" : "movable",
			          o);
			if (!p)
				continue;
			CCHECK_EQ(pa_page_to_pfn(pool, p) % (1ull << o), 0);
			CCHECK_EQ(pa_folio_order(pool, p), o);
			pa_free_pages(pool, p, o);
		}
	}
	VALIDATE(pool);
	expect_as_fresh_after(pool, cur, "a block of every order");
}

/*
 * Fill the pool with order-0 movable blocks, free one pageblock's worth (it
 * merges into one free pageblock, the only free memory), and allocate one
 * unmovable frame: it claims that pageblock and nothing around it.
 */
static void step_claim_granularity(struct pa_pool *pool, const struct pa_cma_info *ci)
{
	uint64_t pb = 1ull << pool->cfg.pageblock_order, n = pool->nr_frames;
	struct pa_page **by_pfn = calloc(n, sizeof *by_pfn);
	REQUIRE(by_pfn);
	struct pa_page *p;
	uint64_t got = 0;
	while ((p = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN | PA_GFP_NOCOMPACT, 0))) {
		by_pfn[pa_page_to_pfn(pool, p)] = p;
		got++;
	}
	CCHECK_EQ(got, n);
	pa_pfn_t P =
	        (ci->start_pfn / pb / 2) * pb; /* a pageblock in the middle of the movable part */
	REQUIRE(P >= pb && P + 2 * pb <= ci->start_pfn);
	for (pa_pfn_t f = P; f < P + pb; f++) {
		pa_free_pages(pool, by_pfn[f], 0);
		by_pfn[f] = NULL;
	}
	CCHECK_EQ(usage(pool).free, pb);
	struct pa_page *k = pa_alloc_pages(pool, PA_GFP_KERNEL | PA_GFP_NOWARN, 0);
	CCHECK(k && pa_page_to_pfn(pool, k) >= P && pa_page_to_pfn(pool, k) < P + pb);
	CCHECK_EQ(pageblock_mt(pool, P), PA_MT_UNMOVABLE);
	CCHECK_EQ(pageblock_mt(pool, P + pb - 1), PA_MT_UNMOVABLE);
	CCHECK_EQ(pageblock_mt(pool, P - 1), PA_MT_MOVABLE);
	CCHECK_EQ(pageblock_mt(pool, P + pb), PA_MT_MOVABLE);
	/* The rest of the claimed pageblock is there for unmovable allocations. */
	CCHECK_EQ(free_on(pool, PA_MT_UNMOVABLE), pb - 1);
	VALIDATE(pool);
	if (k)
		pa_free_pages(pool, k, 0);
	for (pa_pfn_t f = 0; f < n; f++)
		if (by_pfn[f])
			pa_free_pages(pool, by_pfn[f], 0);
	free(by_pfn);
	expect_as_fresh_after(pool, cur, "a claimed pageblock");
}

/*
 * Owned order-0 folios everywhere (borrowing the CMA area too), every other
 * one freed; then a huge-order allocation (direct compaction), a contiguous
 * range straddling pageblocks, pa_alloc_contig_pages() and CMA allocations.
 */
static void step_movable_work(struct pa_pool *pool, const struct pa_cma_info *ci, struct towner *o)
{
	uint64_t pb = 1ull << pool->cfg.pageblock_order;
	while (to_alloc(o, PA_GFP_COMP | PA_GFP_NOCOMPACT, 0) >= 0)
		;
	CCHECK_EQ(o->nr, pool->nr_frames);
	CCHECK(folios_in(o, ci->start_pfn, ci->start_pfn + ci->nr_pages) == ci->nr_pages);
	for (size_t i = 0; i < o->nr; i++)
		if (to_pfn(o, i) % 2)
			to_free(o, i);
	VALIDATE(pool);

	/* Compaction makes a huge-order block. */
	unsigned huge = (unsigned)(pool->cfg.page_shift - 3);
	if (huge > pool->cfg.max_order)
		huge = pool->cfg.max_order;
	uint64_t stall = 0;
	pa_vmstat_read(pool, "compact_stall", &stall);
	struct pa_page *h = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_COMP, huge);
	CHECK_MSG(h, "[%s] order-%u allocation failed after direct compaction", cur, huge);
	uint64_t stall2 = 0;
	pa_vmstat_read(pool, "compact_stall", &stall2);
	CCHECK(stall2 > stall);
	if (h)
		CCHECK_EQ(pa_page_to_pfn(pool, h) % (1ull << huge), 0);
	to_check_all(o);
	to_expect_clean(o);
	VALIDATE(pool);

	/*
	 * A contiguous range of a pageblock and a bit from the middle of one, so
	 * that it straddles pageblock boundaries (half the pool is free, but the
	 * range's own holes and the CMA area's are no destinations).
	 */
	uint64_t len = pb + 3 > 1000 ? pb + 3 : 1000;
	pa_pfn_t s = pb + pb / 2 + 1, e = s + len;
	if (h && pa_page_to_pfn(pool, h) < e && pa_page_to_pfn(pool, h) + (1ull << huge) > s) {
		s = pa_page_to_pfn(pool, h) + (1ull << huge) + pb / 2 +
		    1; /* keep clear of the huge block */
		e = s + len;
	}
	REQUIRE(e <= ci->start_pfn);
	size_t inside = folios_in(o, s, e);
	int rc = pa_alloc_contig_range(pool, s, e, PA_MT_MOVABLE, 0);
	CHECK_MSG(rc == 0,
	          "[%s] pa_alloc_contig_range(%" PRIu64 ", %" PRIu64 ") over %zu folios = %d", cur,
	          s, e, inside, rc);
	if (rc == 0) {
		CCHECK_EQ(folios_in(o, s, e), 0);
		expect_range_blocks(pool, s, e, PA_MT_MOVABLE);
		VALIDATE(pool);
		pa_free_contig_range(pool, s, e - s);
	}
	uint64_t n = pb + 1 > 600 ? pb + 1 : 600, align = 1ull << (63 - __builtin_clzll(n));
	struct pa_page *cp = pa_alloc_contig_pages(pool, n, PA_GFP_MOVABLE | PA_GFP_NOWARN, -1);
	CHECK_MSG(cp, "[%s] pa_alloc_contig_pages(%" PRIu64 ") failed", cur, n);
	if (cp) {
		pa_pfn_t pfn = pa_page_to_pfn(pool, cp);
		CCHECK_EQ(pfn % align, 0);
		CCHECK_EQ(folios_in(o, pfn, pfn + n), 0);
		expect_range_blocks(pool, pfn, pfn + n, PA_MT_MOVABLE);
		pa_free_contig_range(pool, pfn, n);
	}
	to_check_all(o);
	VALIDATE(pool);
	fprintf(stderr,
	        "    order-%u block at %" PRIu64 "; [%" PRIu64 ", %" PRIu64
	        ") taken over %zu folios; %" PRIu64 " frames at %" PRIu64 "\n",
	        huge, h ? pa_page_to_pfn(pool, h) : 0, s, e, inside, n,
	        cp ? pa_page_to_pfn(pool, cp) : 0);

	/* CMA: half the area pageblock-aligned, then all of it; the borrowers move out. */
	unsigned al = pool->cfg.pageblock_order;
	uint64_t half = ci->nr_pages / 2 ? ci->nr_pages / 2 : 1;
	struct pa_page *c1 = pa_cma_alloc(pool, 0, half, al);
	CHECK_MSG(c1, "[%s] pa_cma_alloc(%" PRIu64 ", align %u) failed", cur, half, al);
	if (c1) {
		pa_pfn_t pfn = pa_page_to_pfn(pool, c1);
		CCHECK_EQ(pfn % pb, 0);
		CCHECK(pfn >= ci->start_pfn && pfn + half <= ci->start_pfn + ci->nr_pages);
		CCHECK_EQ(folios_in(o, pfn, pfn + half), 0);
		expect_range_blocks(pool, pfn, pfn + half, PA_MT_CMA);
		CCHECK_EQ(pa_cma_release(pool, 0, c1, half), 0);
	}
	struct pa_page *c2 = pa_cma_alloc(pool, 0, ci->nr_pages, 0);
	CHECK_MSG(c2, "[%s] pa_cma_alloc(the whole area, %" PRIu64 ") failed", cur, ci->nr_pages);
	if (c2) {
		CCHECK_EQ(pa_page_to_pfn(pool, c2), ci->start_pfn);
		CCHECK_EQ(folios_in(o, ci->start_pfn, ci->start_pfn + ci->nr_pages), 0);
		CCHECK_EQ(pa_cma_release(pool, 0, c2, ci->nr_pages), 0);
	}
	struct pa_cma_info now;
	REQUIRE(pa_cma_get(pool, 0, &now) == 0);
	CCHECK_EQ(now.allocated_pages, 0);
	to_check_all(o);
	to_expect_clean(o);
	VALIDATE(pool);
	if (h)
		pa_free_pages(pool, h, huge);
	to_free_all(o);
	expect_as_fresh_after(pool, cur, "compaction, contiguous and CMA allocations");
}

/* Isolation covers exactly the pageblocks the range touches; undone, the pool is as at boot. */
static void step_isolation_granularity(struct pa_pool *pool, const struct pa_cma_info *ci)
{
	uint64_t pb = 1ull << pool->cfg.pageblock_order;
	struct pa_zone *z = zone_of_pfn(pool, ci->start_pfn / 2);
	REQUIRE(z);
	pa_pfn_t P = (ci->start_pfn / pb / 2) * pb;
	pa_pfn_t s = P + pb / 2, e = P + pb + 1; /* from the middle of P to one frame into P + 1 */
	REQUIRE(isolation_start(z, s, e) == 0);
	CCHECK_EQ(pageblock_mt(pool, P - 1), PA_MT_MOVABLE);
	CCHECK_EQ(pageblock_mt(pool, P), PA_MT_ISOLATE);
	CCHECK_EQ(pageblock_mt(pool, P + pb), PA_MT_ISOLATE);
	CCHECK_EQ(pageblock_mt(pool, P + 2 * pb - 1), PA_MT_ISOLATE);
	CCHECK_EQ(pageblock_mt(pool, P + 2 * pb), PA_MT_MOVABLE);
	CCHECK_EQ(free_on(pool, PA_MT_ISOLATE), 2 * pb);
	/* A CMA pageblock isolated keeps its type underneath. */
	REQUIRE(isolation_start(z, ci->start_pfn, ci->start_pfn + 1) == 0);
	CCHECK_EQ(pageblock_mt(pool, ci->start_pfn), PA_MT_ISOLATE);
	CCHECK_EQ(pageblock_base_mt(pool, ci->start_pfn), PA_MT_CMA);
	if (ci->nr_pages > pb)
		CCHECK_EQ(pageblock_mt(pool, ci->start_pfn + pb), PA_MT_CMA);
	VALIDATE(pool);
	isolation_undo(z, ci->start_pfn, ci->start_pfn + 1);
	isolation_undo(z, s, e);
	CCHECK_EQ(pageblock_mt(pool, ci->start_pfn), PA_MT_CMA);
	CCHECK_EQ(free_on(pool, PA_MT_ISOLATE), 0);
	expect_as_fresh_after(pool, cur, "isolating and undoing");
}

/* ---------------------------------------------------------------------- */
/* The table                                                               */
/* ---------------------------------------------------------------------- */

struct ceil_row {
	unsigned page_shift;
	unsigned ceil; /* 0: the default */
	const char *mem;
	uint64_t mem_bytes;
	unsigned want_pb, want_max;
};

TEST(ceiling_every_page_size_and_ceiling_allocates_compacts_takes_ranges_and_cma)
{
	static const struct ceil_row rows[] = {
		{ 12, 1, "64M", 64ull << 20, 1, 10 },   { 12, 7, "64M", 64ull << 20, 7, 10 },
		{ 12, 0, "64M", 64ull << 20, 9, 10 },   { 14, 1, "512M", 512ull << 20, 1, 11 },
		{ 14, 7, "512M", 512ull << 20, 7, 11 }, { 14, 0, "512M", 512ull << 20, 11, 11 },
		{ 16, 1, "4G", 4ull << 30, 1, 13 },     { 16, 7, "4G", 4ull << 30, 7, 13 },
		{ 16, 0, "4G", 4ull << 30, 13, 13 },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		const struct ceil_row *r = &rows[i];
		/* A CMA request of an eighth of memory and a byte: rounded up to whole pageblocks. */
		uint64_t align = (1ull << r->page_shift) << r->want_pb;
		uint64_t req = r->mem_bytes / 8 + 1, reserved = (req + align - 1) / align * align;
		char ceil[48] = "";
		if (r->ceil)
			snprintf(ceil, sizeof ceil, " pageblock_order_ceil=%u", r->ceil);
		snprintf(cur, sizeof cur, QUIET "page_shift=%u mem=%s cma=%" PRIu64 "%s",
		         r->page_shift, r->mem, req, ceil);
		fprintf(stderr, "  %s\n", cur);
		struct pa_pool *pool = test_boot(cur);
		struct pa_config c;
		pa_get_config(pool, &c);
		CCHECK_EQ(c.pageblock_order, r->want_pb);
		CCHECK_EQ(c.max_order, r->want_max);
		CCHECK_EQ(c.cma_alignment_bytes, align);
		struct pa_cma_info ci;
		REQUIRE(pa_cma_get(pool, 0, &ci) == 0);
		CCHECK_EQ(ci.requested_bytes, req);
		CCHECK_EQ(ci.reserved_bytes, reserved);
		CCHECK_EQ(ci.nr_pages, reserved >> r->page_shift);
		CCHECK_EQ(ci.start_pfn + ci.nr_pages, c.total_pages);
		for (pa_pfn_t p = ci.start_pfn; p < ci.start_pfn + ci.nr_pages;
		     p += 1ull << c.pageblock_order)
			CCHECK_EQ(pageblock_mt(pool, p), PA_MT_CMA);
		CCHECK_EQ(pageblock_mt(pool, ci.start_pfn - 1), PA_MT_MOVABLE);
		VALIDATE(pool);
		step_every_order(pool);
		step_claim_granularity(pool, &ci);
		struct towner o;
		to_init(&o, pool, pool->nr_frames + 16);
		step_movable_work(pool, &ci, &o);
		step_isolation_granularity(pool, &ci);
		pa_shutdown(pool); /* the owner outlives every call into the pool */
		to_destroy(&o);
	}
}
