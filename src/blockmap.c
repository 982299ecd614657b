/* SPDX-License-Identifier: MIT */
/*
 * The pool pageblock by pageblock, for maps (pagealloc map): each
 * pageblock's type, zone and node, and how many of its frames are free,
 * on per-CPU lists, allocated or holes. Frames are counted from the block
 * heads in the descriptors; a block that began in an earlier pageblock (a
 * free block above the pageblock order) is found through its head.
 * Untouched chunks (deferred init, no descriptors written yet) are free.
 */
#include "platform/platform.h"
#include "boot.h"
#include "buddy.h"
#include "memmap.h"
#include "pageblock.h"
#include "zone.h"

uint64_t pa_pageblock_count(const struct pa_pool *pool)
{
	return pool ? pool->nr_pageblocks : 0;
}

/* Add n frames in state st to the counts. */
static void count_frames(struct pa_pageblock_info *out, unsigned st, uint64_t n)
{
	switch (st) {
	case PS_FREE:
		out->free += n;
		break;
	case PS_PCP:
		out->pcp += n;
		break;
	case PS_ALLOC:
		out->allocated += n;
		break;
	case PS_HOLE:
		out->hole += n;
		break;
	default:
		out->other += n;
		break;
	}
}

/* The state, the head and the end of the block that holds pfn (pfn + 1 for a hole). */
static unsigned block_at(const struct pa_pool *pool, pa_pfn_t pfn, pa_pfn_t *end, pa_pfn_t *at)
{
	*at = PA_NIL;
	if (!memmap_frame_present(pool, pfn)) {
		*end = pfn + 1;
		return PS_HOLE;
	}
	const struct pa_page *p = pfn_page(pool, pfn);
	unsigned st = page_state(p);
	pa_pfn_t head = pfn;
	if (st == PS_BODY) {
		head = memmap_block_head(pool, pfn);
		if (head == PA_NIL) { /* an untouched chunk: free, a max-order block */
			*end = (pfn | ((1ull << pool_max_order(pool)) - 1)) + 1;
			return PS_FREE;
		}
		p = pfn_page(pool, head);
		st = page_state(p);
	}
	*end = head + block_step(p, st);
	*at = head;
	return st;
}

/* Frames of [pfn, stop) known zero, of the free block at head (cleared memory). */
static uint64_t cleared_frames(const struct pa_pool *pool, pa_pfn_t head, pa_pfn_t pfn,
                               pa_pfn_t stop)
{
	const struct pa_zone *z = zone_of_pfn(pool, head);
	if (!z)
		return 0;
	uint64_t size = 1ull << pfn_page(pool, head)->order;
	struct pa_clean c = buddy_head_clean(z, head);
	return clean_count(clean_slice(c, size, pfn - head, stop - pfn), stop - pfn);
}

int pa_pfn_migratetype(const struct pa_pool *pool, pa_pfn_t pfn)
{
	if (!pool)
		return -EINVAL;
	if (pfn >= pool->nr_frames)
		return -ENOENT;
	return (int)pageblock_mt(pool, pfn);
}

int pa_pageblock_info(const struct pa_pool *pool, uint64_t index, struct pa_pageblock_info *out)
{
	if (!pool || !out)
		return -EINVAL;
	if (index >= pool->nr_pageblocks)
		return -ENOENT;
	unsigned shift = pool->cfg.pageblock_order;
	pa_pfn_t start = index << shift, stop = (index + 1) << shift;
	if (stop > pool->nr_frames)
		stop = pool->nr_frames;
	const struct pa_zone *z = zone_of_pfn(pool, start);
	*out = (struct pa_pageblock_info){ .start_pfn = start,
		                           .nr_frames = stop - start,
		                           .mt = (enum pa_migratetype)pageblock_mt(pool, start),
		                           .node = z ? (int)z->node : -1,
		                           .zone = z ? z->type : PA_ZONE_NORMAL };
	for (pa_pfn_t pfn = start, end, head; pfn < stop; pfn = end) {
		unsigned st = block_at(pool, pfn, &end, &head);
		if (end <= pfn) /* never stall on a damaged descriptor */
			end = pfn + 1;
		count_frames(out, st, (end < stop ? end : stop) - pfn);
		if (st == PS_FREE && head != PA_NIL)
			out->cleared += cleared_frames(pool, head, pfn, end < stop ? end : stop);
	}
	/* To the buddy reserved memory is a hole; to a caller it is memory in use. */
	out->reserved = boot_reserved_frames(&pool->cfg, start, stop);
	out->hole -= out->reserved;
	return 0;
}
