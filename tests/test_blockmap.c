/* SPDX-License-Identifier: MIT */
/*
 * pa_pageblock_count / pa_pageblock_info: every frame of every pageblock is
 * counted once (free + pcp + allocated + other + hole = its frames), the
 * totals agree with pa_get_usage and the per-CPU lists, blocks larger than a
 * pageblock are split between the pageblocks they cover, and types, zones
 * and CMA areas are reported where they are.
 */
#include "test.h"

#include <errno.h>

struct totals {
	uint64_t free, pcp, allocated, other, hole, frames;
};

static void sum_pageblocks(struct pa_pool *pool, struct totals *t)
{
	*t = (struct totals){ 0 };
	uint64_t n = pa_pageblock_count(pool);
	for (uint64_t i = 0; i < n; i++) {
		struct pa_pageblock_info b;
		REQUIRE(pa_pageblock_info(pool, i, &b) == 0);
		CHECK_EQ_U64(b.free + b.pcp + b.allocated + b.other + b.hole + b.reserved,
		             b.nr_frames);
		t->free += b.free;
		t->pcp += b.pcp;
		t->allocated += b.allocated;
		t->other += b.other;
		t->hole += b.hole;
		t->frames += b.nr_frames;
	}
}

static uint64_t pcp_frames(struct pa_pool *pool)
{
	struct pa_config cfg;
	pa_get_config(pool, &cfg);
	uint64_t sum = 0;
	for (unsigned z = 0; z < PA_ZONE_COUNT; z++)
		for (unsigned cpu = 0; cpu < cfg.nr_cpus; cpu++) {
			struct pa_pcp_info info;
			if (pa_pcp_info(pool, 0, (enum pa_zone_type)z, cpu, &info, NULL) == 0)
				sum += info.count;
		}
	return sum;
}

TEST(blockmap_counts_every_frame_once)
{
	struct pa_pool *pool = test_boot("mem=64M nr_cpus=2");
	struct pa_config cfg;
	pa_get_config(pool, &cfg);
	CHECK_EQ_U64(pa_pageblock_count(pool),
	             (64ull << 20) >> (cfg.page_shift + cfg.pageblock_order));

	struct pa_page *held[64];
	for (unsigned i = 0; i < 64; i++)
		REQUIRE((held[i] = pa_alloc_pages(pool, i % 2 ? PA_GFP_MOVABLE : PA_GFP_KERNEL,
		                                  i % 4)));
	for (unsigned i = 0; i < 64; i += 2)
		pa_free_pages(pool, held[i], i % 4); /* some land on the per-CPU lists */

	struct totals t;
	struct pa_usage u;
	sum_pageblocks(pool, &t);
	pa_get_usage(pool, &u);
	CHECK_EQ_U64(t.frames, cfg.total_pages);
	CHECK_EQ_U64(t.free, u.free);
	CHECK_EQ_U64(t.allocated, u.allocated);
	CHECK_EQ_U64(t.pcp, pcp_frames(pool));
	CHECK(t.pcp > 0);
	CHECK_EQ_U64(t.hole, 0);
	for (unsigned i = 1; i < 64; i += 2)
		pa_free_pages(pool, held[i], i % 4);
	VALIDATE(pool);
	pa_shutdown(pool);
}

TEST(blockmap_splits_a_block_larger_than_a_pageblock)
{
	/* max_order 10 > pageblock order 9: one allocated order-10 block covers two pageblocks. */
	struct pa_pool *pool = test_boot("mem=64M max_order=10");
	struct pa_config cfg;
	pa_get_config(pool, &cfg);
	REQUIRE(cfg.pageblock_order < 10);
	struct pa_page *p = pa_alloc_pages(pool, PA_GFP_KERNEL, 10);
	REQUIRE(p);
	pa_pfn_t pfn = pa_page_to_pfn(pool, p);
	uint64_t first = pfn >> cfg.pageblock_order, per = 1ull << cfg.pageblock_order;
	for (uint64_t i = first; i < first + (1u << (10 - cfg.pageblock_order)); i++) {
		struct pa_pageblock_info b;
		REQUIRE(pa_pageblock_info(pool, i, &b) == 0);
		CHECK_EQ_U64(b.allocated, per);
		CHECK_EQ_U64(b.free, 0);
		CHECK(b.mt == PA_MT_UNMOVABLE);
	}
	pa_free_pages(pool, p, 10);
	pa_shutdown(pool);
}

TEST(blockmap_reports_zones_nodes_holes_and_cma)
{
	struct pa_pool *pool = test_boot("mem=8G numa=2 cma=64M memhole=2G-2304M");
	struct pa_config cfg;
	pa_get_config(pool, &cfg);
	uint64_t n = pa_pageblock_count(pool), cma_blocks = 0, holes = 0;
	struct pa_cma_info area;
	REQUIRE(pa_cma_get(pool, 0, &area) == 0);
	for (uint64_t i = 0; i < n; i++) {
		struct pa_pageblock_info b;
		REQUIRE(pa_pageblock_info(pool, i, &b) == 0);
		bool in_cma = b.start_pfn >= area.start_pfn &&
		              b.start_pfn < area.start_pfn + area.nr_pages;
		CHECK(in_cma == (b.mt == PA_MT_CMA));
		cma_blocks += in_cma;
		holes += b.hole;
		if (b.hole < b.nr_frames)
			CHECK(b.node == (b.start_pfn < (4ull << 30) >> cfg.page_shift ? 0 : 1));
	}
	CHECK_EQ_U64(cma_blocks, area.nr_pages >> cfg.pageblock_order);
	CHECK_EQ_U64(holes, (256ull << 20) >> cfg.page_shift);
	pa_shutdown(pool);
}

TEST(blockmap_refuses_bad_arguments)
{
	struct pa_pool *pool = test_boot("mem=64M");
	struct pa_pageblock_info b;
	CHECK(pa_pageblock_info(pool, pa_pageblock_count(pool), &b) == -ENOENT);
	CHECK(pa_pageblock_info(NULL, 0, &b) == -EINVAL);
	CHECK(pa_pageblock_info(pool, 0, NULL) == -EINVAL);
	CHECK_EQ_U64(pa_pageblock_count(NULL), 0);
	pa_shutdown(pool);
}
