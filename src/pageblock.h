/* SPDX-License-Identifier: MIT */
/*
 * Pageblocks (pageblock.c): their bits and the migratetype fallback policy.
 */
#ifndef PA_PAGEBLOCK_H
#define PA_PAGEBLOCK_H

#include "buddy.h"

#define PB_MT_MASK 0x07u
#define PB_ISOLATE 0x08u
#define PB_SKIP    0x10u

/*
 * The list a free block of this pageblock belongs on: its migratetype, or
 * ISOLATE while the pageblock is isolated (a separate bit, as Linux 6.17
 * keeps it, so that un-isolating restores the type). Read without the zone
 * lock by the per-CPU free path: a relaxed atomic byte.
 */
static inline unsigned pageblock_mt(const struct pa_pool *pool, pa_pfn_t pfn)
{
	uint8_t b =
	        __atomic_load_n(&pool->pb_bits[pfn >> pool->cfg.pageblock_order], __ATOMIC_RELAXED);
	return (b & PB_ISOLATE) ? PA_MT_ISOLATE : (b & PB_MT_MASK);
}

/* The type and isolation bits: below PA_NR_PCP_TYPES, an ordinary pageblock of that type. */
static inline unsigned pageblock_list_bits(const uint8_t *pb_bits)
{
	return __atomic_load_n(pb_bits, __ATOMIC_RELAXED) & (PB_MT_MASK | PB_ISOLATE);
}

/* The pageblock's migratetype, isolated or not. */
static inline unsigned pageblock_base_mt(const struct pa_pool *pool, pa_pfn_t pfn)
{
	return __atomic_load_n(&pool->pb_bits[pfn >> pool->cfg.pageblock_order], __ATOMIC_RELAXED) &
	       PB_MT_MASK;
}

void pageblock_set_mt(struct pa_pool *pool, pa_pfn_t pfn, unsigned mt);
/* Set the type of every pageblock of a block of order >= pageblock_order. */
void pageblock_set_mt_range(struct pa_pool *pool, pa_pfn_t pfn, unsigned order, unsigned mt);
/* The first pageblock under the block [pfn, pfn + 2^order) not of type mt, or PA_NIL. */
pa_pfn_t pageblock_first_other(const struct pa_pool *pool, pa_pfn_t pfn, unsigned order,
                               unsigned mt);
/* A block wider than a pageblock freed: pageblock_free_block() for those. */
void pageblock_free_wide(struct pa_zone *zone, pa_pfn_t pfn, unsigned order);

/* Free a block onto the lists of its pageblocks' types, split where they differ. */
static inline void pageblock_free_block(struct pa_zone *z, pa_pfn_t pfn, unsigned order)
{
	if (likely(order <= z->pool->cfg.pageblock_order))
		buddy_free_block(z, pfn, order, pageblock_mt(z->pool, pfn));
	else
		pageblock_free_wide(z, pfn, order);
}
/* Move the free blocks of the pageblock holding pfn to the mt list; returns frames moved. */
uint64_t pageblock_move_free(struct pa_zone *zone, pa_pfn_t pfn, unsigned mt);
/*
 * The list a request of type mt takes from before any fallback: CMA first
 * while it holds over half the zone's free memory (Linux's balance rule),
 * then its own type, then CMA if it may borrow. -1 if none has a block of
 * order or larger; else the type, with the smallest such order in *found.
 */
int pageblock_own_list(const struct pa_zone *zone, unsigned order, unsigned mt,
                       unsigned alloc_flags, unsigned *found);
/* Take a block of order for type mt: its own lists first, then the fallback policy. */
pa_pfn_t pageblock_rmqueue(struct pa_zone *zone, unsigned order, unsigned mt, unsigned alloc_flags);
/*
 * Allocate from another type's pageblocks by Linux's claim/steal rules,
 * steered by region when superblocks are on; PA_NIL if none (or, under
 * ALLOC_NO_POLLUTE, if only a clean region could give one).
 */
pa_pfn_t pageblock_rmqueue_fallback(struct pa_zone *zone, unsigned order, unsigned mt,
                                    unsigned alloc_flags);
/*
 * The block to take from the (*found, type) list for a request of type mt:
 * the first, or a polluted region's free pageblock in place of a split of a
 * clean region's (steering; *found is updated).
 */
pa_pfn_t pageblock_own_first(struct pa_zone *zone, unsigned *found, unsigned need, unsigned type,
                             unsigned mt);
/* Make the pageblock of an allocation a HIGHATOMIC reserve, if the cap allows. */
void pageblock_reserve_highatomic(struct pa_zone *zone, pa_pfn_t pfn, unsigned order);
/* Give back one HIGHATOMIC pageblock to mt; true if one was given back. */
bool pageblock_unreserve_highatomic(struct pa_zone *zone, unsigned mt);
extern const char *const pa_migratetype_names[PA_MT_COUNT];

#endif /* PA_PAGEBLOCK_H */
