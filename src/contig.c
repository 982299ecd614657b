/* SPDX-License-Identifier: MIT */
/*
 * Contiguous ranges of any length, as Linux's alloc_contig_range():
 * isolate the pageblocks of the range, drain the per-CPU lists, move the
 * movable folios out, check that every frame is free, take it, and let the
 * rest of the pageblocks go. A taken range is a row of allocated blocks, the
 * largest aligned ones that fit, so pa_free_contig_range() (or pa_free_pages
 * on each block) gives it back. Any failure leaves the pool as it was.
 */
#include "isolation.h"

#include "platform/platform.h"
#include "alloc.h"
#include "buddy.h"
#include "compaction.h"
#include "memmap.h"
#include "migrate.h"
#include "pageblock.h"
#include "zone.h"

/* The largest aligned block at pfn that fits below end, no larger than max_order. */
static unsigned fit_order(const struct pa_pool *pool, pa_pfn_t pfn, pa_pfn_t end)
{
	unsigned max_order = pool_max_order(pool);
	unsigned order = pfn ? (unsigned)__builtin_ctzll(pfn) : max_order;
	if (order > max_order)
		order = max_order;
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
 * of type mt that carry flags. Zone lock held.
 */
static void take_range(struct pa_zone *z, pa_pfn_t start, pa_pfn_t end, unsigned mt, unsigned flags)
{
	struct pa_pool *pool = z->pool;
	for (pa_pfn_t p = start; p < end;) {
		pa_pfn_t head = memmap_block_head(pool, p); /* checked: a free block covers p */
		pa_pfn_t tail = head + (1ull << page_order(pfn_page(pool, head)));
		buddy_list_del(z, head);
		give_back(z, head, start > head ? start : head);
		give_back(z, end < tail ? end : tail, tail);
		p = tail;
	}
	for (pa_pfn_t p = start; p < end;) {
		unsigned o = fit_order(pool, p, end);
		page_prep_alloc(pfn_page(pool, p), o, mt, 0);
		set_page_flags(pfn_page(pool, p), flags); /* a body frame's stale flags go */
		z->stat[PA_ZS_PGALLOC] += 1ull << o;
		z->stat[PA_ZS_ALLOC_SUCCESS]++;
		z->alloc_order[o]++;
		p += 1ull << o;
	}
}

#define TYPE_KEPT 0xffu /* a pageblock retype_movable() left as it was */

/*
 * The frames of a pageblock claimed for unmovable data once stay claimed
 * after that data is freed. Linux looks at the frames, not the type: a
 * movable range takes such pageblocks back as movable. The range is
 * isolated, so its free blocks sit on the ISOLATE lists and only the bits
 * change; un-isolating re-frees them by the new type. Returns each
 * pageblock's old type (TYPE_KEPT where it did not change) for
 * restore_types(), or NULL when there is no memory to remember them.
 */
static uint8_t *retype_movable(struct pa_zone *z, pa_pfn_t start, pa_pfn_t end)
{
	struct pa_pool *pool = z->pool;
	unsigned pbo = pool->cfg.pageblock_order;
	pa_pfn_t first = start >> pbo, last = (end - 1) >> pbo;
	uint8_t *old = pa_malloc(&pool->plat, last - first + 1);
	if (!old)
		return NULL;
	pa_lock(&z->lock, SITE_ADMIN);
	for (pa_pfn_t i = first; i <= last; i++) {
		unsigned mt = pageblock_base_mt(pool, i << pbo);
		bool claimed = mt == PA_MT_UNMOVABLE || mt == PA_MT_RECLAIMABLE;
		old[i - first] = claimed ? (uint8_t)mt : TYPE_KEPT;
		if (claimed)
			pageblock_set_mt(pool, i << pbo, PA_MT_MOVABLE);
	}
	pa_unlock(&z->lock);
	return old;
}

/* A failed range gives its pageblocks their old types back, still isolated. */
static void restore_types(struct pa_zone *z, pa_pfn_t start, pa_pfn_t end, const uint8_t *old)
{
	struct pa_pool *pool = z->pool;
	unsigned pbo = pool->cfg.pageblock_order;
	pa_pfn_t first = start >> pbo, last = (end - 1) >> pbo;
	pa_lock(&z->lock, SITE_ADMIN);
	for (pa_pfn_t i = first; i <= last; i++)
		if (old[i - first] != TYPE_KEPT)
			pageblock_set_mt(pool, i << pbo, old[i - first]);
	pa_unlock(&z->lock);
}

/*
 * Move the folios out, then take the range if every frame is free. A block
 * freed onto a CPU's list meanwhile (its head outside the range) is drained
 * before the range is called busy.
 */
static bool empty_and_take(struct pa_zone *z, pa_pfn_t start, pa_pfn_t end, unsigned mt,
                           unsigned flags)
{
	if (!compaction_empty_range(z, start, end))
		pa_drain_all(z->pool);
	pa_lock(&z->lock, SITE_ADMIN);
	bool free = isolation_range_free(z, start, end);
	if (free)
		take_range(z, start, end, mt, flags);
	pa_unlock(&z->lock);
	return free;
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
	/* every mode moves what it can; there is no reclaim to allow or forbid */
	if (!pool || (gfp & ~PA_GFP_ALL_FLAGS))
		return -EINVAL;
	return contig_alloc_range(pool, start, end, migratetype, PF_CONTIG);
}

int contig_alloc_range(struct pa_pool *pool, pa_pfn_t start, pa_pfn_t end, unsigned migratetype,
                       unsigned flags)
{
	if (start >= end || end > pool->nr_frames ||
	    (migratetype != PA_MT_MOVABLE && migratetype != PA_MT_CMA))
		return -EINVAL;
	struct pa_zone *z = zone_of_pfn(pool, start);
	if (!z || end > z->end_pfn || !range_in_zone(z, start, end) ||
	    !range_present(pool, start, end))
		return -EINVAL;
	pa_lock(&z->lock, SITE_ADMIN);
	zone_prepare_range(z, start, end);
	bool movable = contig_range_movable(pool, start, end, migratetype == PA_MT_CMA);
	pa_unlock(&z->lock);
	if (!movable)
		return -EBUSY; /* an unmovable, pinned or ownerless frame: fail before moving anything */
	int rc = isolation_start(z, start, end); /* drains every CPU's lists */
	if (rc)
		return rc;
	uint8_t *old = NULL;
	if (migratetype == PA_MT_MOVABLE && !(old = retype_movable(z, start, end))) {
		isolation_undo(z, start, end);
		return -ENOMEM;
	}
	bool taken = empty_and_take(z, start, end, migratetype, flags);
	if (!taken && old)
		restore_types(z, start, end, old);
	pa_free(&pool->plat, old);
	isolation_undo(z, start, end);
	return taken ? 0 : -EBUSY;
}

/*
 * A contiguous allocation is a row of plain (non-folio) blocks; a release of
 * part of it (as cma_release() allows) first cuts the block under each edge,
 * as Linux's split_page(), so that the part is a row of whole blocks. Zone
 * lock held; the block was checked to be one of a contiguous range.
 */
static void split_at(struct pa_zone *z, pa_pfn_t edge)
{
	struct pa_pool *pool = z->pool;
	if (edge >= z->end_pfn)
		return;
	pa_pfn_t head = memmap_block_head(pool, edge);
	struct pa_page *h = head == PA_NIL ? NULL : pfn_page(pool, head);
	if (!h || head == edge || page_state(h) != PS_ALLOC)
		return;
	unsigned mt = page_mt(h), order = page_order(h), flags = page_flags(h);
	pa_pfn_t tail = head + (1ull << order);
	for (pa_pfn_t p = head; p < tail;) {
		unsigned o = fit_order(pool, p, p < edge ? edge : tail);
		page_prep_alloc(pfn_page(pool, p), o, mt, 0);
		set_page_flags(pfn_page(pool, p), flags);
		p += 1ull << o;
	}
}

/*
 * Is [pfn, end) wholly blocks of contiguous ranges (and of CMA allocations
 * exactly when cma)? What it found instead goes into why. Zone lock held.
 */
static bool range_is_contig(struct pa_zone *z, pa_pfn_t pfn, pa_pfn_t end, bool cma, char *why,
                            size_t len)
{
	struct pa_pool *pool = z->pool;
	for (pa_pfn_t p = pfn; p < end;) {
		pa_pfn_t head = memmap_block_head(pool, p);
		const struct pa_page *h = head == PA_NIL ? NULL : pfn_page(pool, head);
		unsigned flags = h ? page_flags(h) : 0;
		if (!h || page_state(h) != PS_ALLOC || !(flags & PF_CONTIG) ||
		    !(flags & PF_CMA) != !cma) {
			pa_snprintf(why, len, "pfn %llu is %s", (unsigned long long)p,
			            !h || page_state(h) != PS_ALLOC ? "not allocated" :
			            !(flags & PF_CONTIG) ? "in a block of pa_alloc_pages()" :
			            cma                  ? "not of a CMA allocation" :
			                  "of a CMA allocation (give it back with pa_cma_release)");
			return false;
		}
		p = head + (1ull << page_order(h));
	}
	return true;
}

int contig_free_range(struct pa_pool *pool, pa_pfn_t pfn, uint64_t nr, bool cma, char *why,
                      size_t len)
{
	struct pa_zone *z = pfn < pool->nr_frames ? zone_of_pfn(pool, pfn) : NULL;
	if (!z || nr == 0 || nr > z->end_pfn - pfn || !range_in_zone(z, pfn, pfn + nr)) {
		pa_snprintf(why, len, "the range is %s",
		            !nr ? "empty" :
		            z   ? "not inside one zone" :
		                  "not inside the pool");
		return -EINVAL;
	}
	pa_pfn_t end = pfn + nr;
	pa_lock(&z->lock, SITE_ADMIN);
	bool ok = range_is_contig(z, pfn, end, cma, why, len);
	if (ok) {
		split_at(z, pfn);
		split_at(z, end);
		for (pa_pfn_t p = pfn; cma && p < end; p += 1ull << page_order(pfn_page(pool, p)))
			set_page_flags(pfn_page(pool, p),
			               PF_CONTIG); /* now pa_free_pages() takes it */
	}
	pa_unlock(&z->lock);
	if (!ok)
		return -EINVAL;
	for (pa_pfn_t p = pfn; p < end;) { /* the caller's blocks: their orders hold still */
		unsigned o = page_order(pfn_page(pool, p));
		pa_free_pages(pool, pfn_page(pool, p), o);
		p += 1ull << o;
	}
	return 0;
}

void pa_free_contig_range(struct pa_pool *pool, pa_pfn_t pfn, uint64_t nr_pages)
{
	char why[160], what[256];
	if (!pool || nr_pages == 0 ||
	    contig_free_range(pool, pfn, nr_pages, false, why, sizeof why) == 0)
		return; /* nothing to free, or freed */
	pa_snprintf(what, sizeof what, "pa_free_contig_range(pfn %llu, %llu frames): %s",
	            (unsigned long long)pfn, (unsigned long long)nr_pages, why);
	alloc_bad_free(pool, what);
}

/*
 * Nothing in [start, end) that cannot move: a look before isolating, so that
 * a range that must fail fails before anything is moved. Zone lock held.
 */
bool contig_range_movable(const struct pa_pool *pool, pa_pfn_t start, pa_pfn_t end, bool cma)
{
	const struct pa_zone *z = zone_of_pfn(pool, start);
	uint64_t chunk = 1ull << pool->cfg.chunk_order;
	for (pa_pfn_t p = start; p < end;) {
		if (zone_pfn_pending(z, p)) { /* free once initialised or written */
			p = (p & ~(chunk - 1)) + chunk;
			continue;
		}
		if (page_state(pfn_page(pool, p)) ==
		    PS_HOLE) { /* contig checked for none; hotplug skips them */
			p++;
			continue;
		}
		pa_pfn_t head = memmap_block_head(pool, p);
		if (head == PA_NIL)
			return false; /* no memory */
		const struct pa_page *h = pfn_page(pool, head);
		unsigned st = page_state(h);
		if (st == PS_ALLOC && !migrate_movable(pool, h))
			return false;
		if (st != PS_FREE && st != PS_ALLOC && st != PS_PCP)
			return false; /* being moved, or held by compaction */
		unsigned mt = pageblock_mt(pool, p);
		if ((mt == PA_MT_CMA && !cma) || mt == PA_MT_ISOLATE || mt == PA_MT_HIGHATOMIC)
			return false; /* CMA areas, ranges being taken and atomic reserves stay out */
		p = head + (1ull << page_order(h));
	}
	return true;
}

static bool zone_for(const struct pa_zone *z, pa_gfp_t gfp, int node)
{
	return (node < 0 || z->node == (unsigned)node) && zone_gfp_allows(z, gfp);
}

struct pa_page *pa_alloc_contig_pages(struct pa_pool *pool, uint64_t nr_pages, pa_gfp_t gfp,
                                      int node)
{
	if (!pool || !nr_pages || nr_pages > pool->nr_frames || node < -1 ||
	    node >= (int)pool->nr_nodes || (gfp & ~PA_GFP_ALL_FLAGS))
		return NULL;
	uint64_t align = 1ull << (63 - __builtin_clzll(nr_pages));
	for (unsigned i = 0; i < pool->nr_zones; i++) {
		struct pa_zone *z = &pool->zones[i];
		if (!zone_for(z, gfp, node))
			continue;
		for (pa_pfn_t s = (z->start_pfn + align - 1) & ~(align - 1);
		     s + nr_pages <= z->end_pfn; s += align) {
			pa_lock(&z->lock, SITE_ADMIN);
			bool worth = range_in_zone(z, s, s + nr_pages) &&
			             contig_range_movable(pool, s, s + nr_pages, false);
			pa_unlock(&z->lock);
			if (worth &&
			    pa_alloc_contig_range(pool, s, s + nr_pages, PA_MT_MOVABLE, gfp) == 0)
				return pfn_page(pool, s);
		}
	}
	if (!(gfp & PA_GFP_NOWARN))
		platform_report(pool,
		                "pa_alloc_contig_pages: no range of %llu frames could be emptied",
		                (unsigned long long)nr_pages);
	return NULL;
}
