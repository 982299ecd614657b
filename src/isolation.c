/* SPDX-License-Identifier: MIT */
/*
 * Pageblock isolation: take a range of pageblocks out of use, so that a
 * contiguous allocation can empty it while the rest of the pool goes on.
 *
 * An isolated pageblock keeps its migratetype and gains the isolate bit
 * (Linux 6.17's MIGRATE_ISOLATE bit). Its free blocks sit on the ISOLATE
 * lists, which no allocation takes from, and frees into it land there too
 * (pageblock_mt() says ISOLATE). A free block that straddles the edge of
 * the range is first cut into pageblocks, so that only the range is taken.
 * Undoing re-frees every free block of the range, so it merges again.
 */
#include "isolation.h"

#include "platform/platform.h"
#include "buddy.h"
#include "memmap.h"
#include "pageblock.h"
#include "zone.h"

static pa_pfn_t pb_floor(const struct pa_pool *pool, pa_pfn_t pfn)
{
	return pfn & ~((1ull << pool->cfg.pageblock_order) - 1);
}

/* The free block larger than a pageblock that covers pfn, or PA_NIL. Zone lock held. */
static pa_pfn_t large_free_block(const struct pa_pool *pool, pa_pfn_t pfn)
{
	for (unsigned o = pool->cfg.pageblock_order + 1; o <= pool->cfg.max_order; o++) {
		pa_pfn_t head = pfn & ~((1ull << o) - 1);
		const struct pa_page *h = pfn_page(pool, head);
		if (page_state(h) == PS_FREE && page_order(h) >= o)
			return head;
	}
	return PA_NIL;
}

/*
 * Re-free the free block wider than a pageblock that covers pfn, a
 * pageblock at a time, after the caller changed that pageblock's bits: the
 * pieces merge again wherever their types still match, and the changed
 * pageblock stands alone on its own list. Zone lock held.
 */
void isolation_split_to_pageblocks(struct pa_zone *z, pa_pfn_t pfn)
{
	struct pa_pool *pool = z->pool;
	pa_pfn_t head = large_free_block(pool, pfn);
	if (head == PA_NIL)
		return;
	unsigned pb = pool->cfg.pageblock_order, order = page_order(pfn_page(pool, head));
	buddy_list_del(z, head);
	for (pa_pfn_t p = head; p < head + (1ull << order); p += 1ull << pb)
		buddy_free_block(z, p, pb, pageblock_mt(pool, p));
}

int isolation_start(struct pa_zone *z, pa_pfn_t start, pa_pfn_t end)
{
	struct pa_pool *pool = z->pool;
	uint64_t pb = 1ull << pool->cfg.pageblock_order;
	pa_pfn_t s = pb_floor(pool, start), e = pb_floor(pool, end - 1) + pb;
	pa_lock(&z->lock, SITE_ADMIN);
	zone_prepare_range(z, s, e);
	for (pa_pfn_t p = s; p < e; p += pb) {
		if (pool->pb_bits[p >> pool->cfg.pageblock_order] & PB_ISOLATE) {
			pa_unlock(&z->lock);
			return -EBUSY; /* another contiguous allocation holds it */
		}
	}
	for (pa_pfn_t p = s; p < e; p += pb)
		__atomic_fetch_or(&pool->pb_bits[p >> pool->cfg.pageblock_order],
		                  (uint8_t)PB_ISOLATE, __ATOMIC_RELAXED);
	isolation_split_to_pageblocks(z, s);
	isolation_split_to_pageblocks(z, e - pb);
	for (pa_pfn_t p = s; p < e; p += pb)
		pageblock_move_free(z, p, PA_MT_ISOLATE);
	pa_unlock(&z->lock);
	pa_drain_all(pool); /* what the lists held goes to the buddy, to ISOLATE where isolated */
	return 0;
}

void isolation_undo(struct pa_zone *z, pa_pfn_t start, pa_pfn_t end)
{
	struct pa_pool *pool = z->pool;
	uint64_t pb = 1ull << pool->cfg.pageblock_order;
	pa_pfn_t s = pb_floor(pool, start), e = pb_floor(pool, end - 1) + pb;
	pa_lock(&z->lock, SITE_ADMIN);
	for (pa_pfn_t p = s; p < e; p += pb)
		__atomic_fetch_and(&pool->pb_bits[p >> pool->cfg.pageblock_order],
		                   (uint8_t)~PB_ISOLATE, __ATOMIC_RELAXED);
	/*
	 * Re-free every free block: it leaves the ISOLATE list and merges with
	 * its buddies. A block that began in an isolated pageblock before s is
	 * one of them: start at its head.
	 */
	pa_pfn_t first = memmap_block_head(pool, s);
	first = first == PA_NIL || first > s ? s : first;
	for (pa_pfn_t p = first; p < e && p < z->end_pfn;) {
		struct pa_page *h = pfn_page(pool, p);
		unsigned st = page_state(h);
		uint64_t n = block_step(h, st);
		if (st == PS_FREE && h->mt == PA_MT_ISOLATE) {
			/* Larger than a pageblock: each pageblock goes back under its own type. */
			unsigned order = page_order(h), o = order < pool->cfg.pageblock_order ?
			                                            order :
			                                            pool->cfg.pageblock_order;
			buddy_list_del(z, p);
			for (pa_pfn_t q = p; q < p + (1ull << order); q += 1ull << o)
				buddy_free_block(z, q, o, pageblock_mt(pool, q));
		}
		p += n;
	}
	pa_unlock(&z->lock);
}

bool isolation_range_free(struct pa_zone *z, pa_pfn_t start, pa_pfn_t end)
{
	struct pa_pool *pool = z->pool;
	for (pa_pfn_t p = start; p < end;) {
		if (page_state(pfn_page(pool, p)) == PS_HOLE) { /* no memory to empty */
			p++;
			continue;
		}
		pa_pfn_t head = memmap_block_head(pool, p);
		if (head == PA_NIL || page_state(pfn_page(pool, head)) != PS_FREE ||
		    pfn_page(pool, head)->mt != PA_MT_ISOLATE)
			return false;
		p = head + (1ull << page_order(pfn_page(pool, head)));
	}
	return true;
}
