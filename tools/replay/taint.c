/* SPDX-License-Identifier: MIT */
/*
 * Pollution of the replayed pool: which 1 GiB regions and which pageblocks
 * hold an unmovable or reclaimable allocation or boot-reserved memory
 * (memreserve=). A region holding even one
 * cannot become a 1 GiB block, whatever compaction does; that is what
 * superblock steering tries to keep to few regions. Counted from the
 * replay's own maps (the type of every live traced allocation, and the
 * pre-trace blocks the start state allocated unmovable or reclaimable) and
 * the pool's pageblock walk, so it needs nothing from the allocator's own
 * accounting and reads the same under every policy.
 */
#define _GNU_SOURCE
#include "run.h"

#include <stdlib.h>

#define REGION_ORDER 18 /* 1 GiB at 4 KiB pages */

/* Mark the pageblocks that [pfn, pfn + 2^order) touches. */
static void mark(uint8_t *blk, uint64_t nr_blocks, uint64_t pfn, unsigned order, unsigned pb)
{
	uint64_t first = pfn >> pb, last = (pfn + (1ull << order) - 1) >> pb;
	for (uint64_t b = first; b <= last && b < nr_blocks; b++)
		blk[b] = 1;
}

/* Pageblocks holding a live unmovable or reclaimable allocation, traced or pre-trace. */
static void mark_kernel_blocks(struct rp_ctx *c, uint8_t *blk, uint64_t nr_blocks, unsigned pb)
{
	for (uint64_t k = 0; k < c->nr_kmap; k++) {
		const struct rp_kmap *e = &c->kmap[k];
		if (e->kind == KM_LIVE && e->kernel)
			mark(blk, nr_blocks, e->ppfn, e->order, pb);
	}
	/* The start state allocated these pageblocks whole; what is left of them is pre-trace. */
	for (uint64_t b = 0; b < nr_blocks; b++) {
		if (!rp_bit(c->pre_kernel, b))
			continue;
		for (uint64_t p = b << pb; p < ((b + 1) << pb) && p < c->nr_frames && !blk[b]; p++)
			blk[b] = c->pre[p] != 0;
	}
}

void rp_model_taint(struct rp_ctx *c, struct rp_state *st)
{
	struct pa_config cfg;
	pa_get_config(c->pool, &cfg);
	unsigned pb = cfg.pageblock_order;
	uint64_t nr_blocks = pa_pageblock_count(c->pool);
	uint64_t nr_regions = (cfg.total_pages >> REGION_ORDER) + 1;
	uint8_t *blk = calloc(nr_blocks ? nr_blocks : 1, 1);
	uint8_t *region = calloc(nr_regions, 1); /* 1: has memory, 2: tainted */
	if (!blk || !region) {
		free(blk), free(region);
		return;
	}
	mark_kernel_blocks(c, blk, nr_blocks, pb);
	st->regions = st->tainted_regions = st->tainted_pageblocks = st->mixed_pageblocks = 0;
	for (uint64_t i = 0; i < nr_blocks; i++) {
		struct pa_pageblock_info b;
		if (pa_pageblock_info(c->pool, i, &b) || b.node < 0 || b.hole == b.nr_frames)
			continue;
		uint8_t *r = &region[b.start_pfn >> REGION_ORDER];
		*r |= 1;
		/* The kernel's own reservations never move: they taint as allocations do. */
		if (!blk[b.start_pfn >> pb] && !b.reserved)
			continue;
		*r |= 2;
		st->tainted_pageblocks++;
		st->mixed_pageblocks += b.mt == PA_MT_MOVABLE;
	}
	for (uint64_t i = 0; i < nr_regions; i++) {
		st->regions += region[i] & 1;
		st->tainted_regions += (region[i] & 2) != 0;
	}
	st->taint_known = true;
	free(blk), free(region);
}
