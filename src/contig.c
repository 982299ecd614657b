/*
 * Contiguous ranges of any length, as Linux's alloc_contig_range():
 * isolate the pageblocks of the range, drain the per-CPU lists, move the
 * movable folios out, check that every frame is free, take it, and let the
 * rest of the pageblocks go. A taken range is a row of allocated blocks, the
 * largest aligned ones that fit, so pa_free_contig_range() (or pa_free_pages
 * on each block) gives it back. Any failure leaves the pool as it was.
 */
#include "internal.h"

#include <stdlib.h>

/* The largest aligned block at pfn that fits below end, no larger than max_order. */
static unsigned fit_order(const struct pa_pool *pool, pa_pfn_t pfn, pa_pfn_t end)
{
	unsigned order = pfn ? (unsigned)__builtin_ctzll(pfn) : pool->cfg.max_order;
	if (order > pool->cfg.max_order)
		order = pool->cfg.max_order;
	while (pfn + (1ull << order) > end)
		order--;
	return order;
}

/* Give back [lo, hi), a part of a taken free block that lies outside the range. Zone lock held. */
static void give_back(struct pa_zone *z, pa_pfn_t lo, pa_pfn_t hi)
{
	while (lo < hi) {
		unsigned o = fit_order(z->pool, lo, hi);
		buddy_list_add(z, lo, o, pageblock_mt(z->pool, lo));
		lo += 1ull << o;
	}
}

/*
 * Take the free range [start, end) (isolated, checked free): unlink its
 * blocks, give back what sticks out, and make the range allocated blocks
 * of type mt. Zone lock held.
 */
static void take_range(struct pa_zone *z, pa_pfn_t start, pa_pfn_t end, unsigned mt)
{
	struct pa_pool *pool = z->pool;
	for (pa_pfn_t p = start; p < end;) {
		pa_pfn_t head = memmap_block_head(pool, p); /* checked: a free block covers p */
		pa_pfn_t tail = head + (1ull << pfn_page(pool, head)->order);
		buddy_list_del(z, head);
		give_back(z, head, start > head ? start : head);
		give_back(z, end < tail ? end : tail, tail);
		p = tail;
	}
	for (pa_pfn_t p = start; p < end;) {
		unsigned o = fit_order(pool, p, end);
		page_prep_alloc(pfn_page(pool, p), o, mt, 0);
		z->stat[PA_ZS_PGALLOC] += 1ull << o;
		z->stat[PA_ZS_ALLOC_SUCCESS]++;
		z->alloc_order[o]++;
		p += 1ull << o;
	}
}

/* Is every frame of [start, end) present? */
static bool range_present(const struct pa_pool *pool, pa_pfn_t start, pa_pfn_t end)
{
	for (pa_pfn_t p = start; p < end; p++) {
		if (!memmap_section_present(pool, p)) /* a whole absent section */
			return false;
		if (page_state(pfn_page(pool, p)) == PS_HOLE)
			return false;
	}
	return true;
}

int pa_alloc_contig_range(struct pa_pool *pool, pa_pfn_t start, pa_pfn_t end, unsigned migratetype,
			  pa_gfp_t gfp)
{
	(void)gfp; /* every mode moves what it can; there is no reclaim to allow or forbid */
	if (!pool || start >= end || end > pool->nr_frames ||
	    (migratetype != PA_MT_MOVABLE && migratetype != PA_MT_CMA))
		return -EINVAL;
	struct pa_zone *z = zone_of_pfn(pool, start);
	if (!z || end > z->end_pfn || !range_present(pool, start, end))
		return -EINVAL;
	int rc = isolation_start(z, start, end);
	if (rc)
		return rc;
	if (!compaction_empty_range(z, start, end)) {
		isolation_undo(z, start, end);
		return -EBUSY;
	}
	pa_lock(&z->lock, SITE_ADMIN);
	bool free = isolation_range_free(z, start, end); /* a free meanwhile may have changed it */
	if (free)
		take_range(z, start, end, migratetype);
	pa_unlock(&z->lock);
	isolation_undo(z, start, end);
	return free ? 0 : -EBUSY;
}

void pa_free_contig_range(struct pa_pool *pool, pa_pfn_t pfn, uint64_t nr_pages)
{
	for (pa_pfn_t p = pfn, end = pfn + nr_pages; p < end;) {
		unsigned o = fit_order(pool, p, end);
		pa_free_pages(pool, pa_pfn_to_page(pool, p) ? pfn_page(pool, p) : NULL, o);
		p += 1ull << o;
	}
}

/* Nothing in [start, end) that cannot move: a quick look before isolating. Zone lock held. */
static bool range_movable(const struct pa_pool *pool, pa_pfn_t start, pa_pfn_t end)
{
	for (pa_pfn_t p = start; p < end;) {
		pa_pfn_t head = memmap_block_head(pool, p);
		if (head == PA_NIL)
			return false; /* no memory */
		const struct pa_page *h = pfn_page(pool, head);
		unsigned st = page_state(h);
		if (st == PS_ALLOC && !migrate_movable(pool, h))
			return false;
		if (st != PS_FREE && st != PS_ALLOC && st != PS_PCP)
			return false; /* being moved, or held by compaction */
		if (pageblock_mt(pool, p) != PA_MT_MOVABLE)
			return false; /* unmovable pageblocks, CMA areas and isolated blocks stay out */
		p = head + (1ull << h->order);
	}
	return true;
}

static bool zone_for(const struct pa_zone *z, pa_gfp_t gfp, int node)
{
	if (node >= 0 && z->node != (unsigned)node)
		return false;
	if ((gfp & PA_GFP_DMA32) && z->end_pfn > ((4ull << 30) >> z->pool->cfg.page_shift))
		return false;
	return z->type != PA_ZONE_MOVABLE || (gfp & PA_GFP_MOVABLE);
}

struct pa_page *pa_alloc_contig_pages(struct pa_pool *pool, uint64_t nr_pages, pa_gfp_t gfp, int node)
{
	if (!pool || !nr_pages || nr_pages > pool->nr_frames || node >= (int)pool->nr_nodes)
		return NULL;
	uint64_t align = 1ull << (63 - __builtin_clzll(nr_pages));
	for (unsigned i = 0; i < pool->nr_zones; i++) {
		struct pa_zone *z = &pool->zones[i];
		if (!zone_for(z, gfp, node))
			continue;
		for (pa_pfn_t s = (z->start_pfn + align - 1) & ~(align - 1); s + nr_pages <= z->end_pfn;
		     s += align) {
			pa_lock(&z->lock, SITE_ADMIN);
			bool worth = range_movable(pool, s, s + nr_pages);
			pa_unlock(&z->lock);
			if (worth && pa_alloc_contig_range(pool, s, s + nr_pages, PA_MT_MOVABLE, gfp) == 0)
				return pfn_page(pool, s);
		}
	}
	if (!(gfp & PA_GFP_NOWARN))
		platform_report(pool, "pa_alloc_contig_pages: no range of %llu frames could be emptied",
				(unsigned long long)nr_pages);
	return NULL;
}
