/* SPDX-License-Identifier: MIT */
/*
 * Superblocks (superblock.c): per-region pageblock and free counts, and steering.
 */
#ifndef PA_SUPERBLOCK_H
#define PA_SUPERBLOCK_H

#include "zone.h"

/* One aligned region of 2^superblock_order frames. Written under the lock of any zone it spans. */
struct pa_superblock {
	_Atomic uint32_t blocks[PA_MT_COUNT]; /* pageblocks of present sections by base type */
	_Atomic uint64_t free;                /* frames free in the buddy */
};

static inline struct pa_superblock *superblock_of(const struct pa_pool *pool, pa_pfn_t pfn)
{
	return &pool->sb[pfn >> pool->cfg.superblock_order];
}

int superblock_init(struct pa_pool *pool, char *err, size_t errlen);
void superblock_destroy(struct pa_pool *pool);
/* A present pageblock changed base type (pageblock_set_mt). Zone lock held. */
void superblock_retype(struct pa_pool *pool, pa_pfn_t pfn, unsigned old_mt, unsigned new_mt);
/* A block of 2^order frames at pfn entered (add) or left the buddy. Zone lock held. */
void superblock_count_free(struct pa_pool *pool, pa_pfn_t pfn, unsigned order, bool add);
/* Pageblocks of polluting types (unmovable, reclaimable, high-atomic) in region index. */
uint64_t superblock_polluted(const struct pa_pool *pool, uint64_t index);
/* The counts against a recount from the lists and pageblock bits; every zone lock held. */
int superblock_validate_locked(struct pa_pool *pool, char *err, size_t errlen);

/* Steering's view of the regions (zone lock held): see pageblock.c for the policy. */
struct sb_rank {
	uint64_t key;
	uint32_t index;
};
/* A zone's region order buffers, after the zones are up; freed before they go. */
int superblock_init_zones(struct pa_pool *pool, char *err, size_t errlen);
void superblock_destroy_zones(struct pa_pool *pool);
/* Does the region of pfn hold a polluting pageblock? */
bool superblock_pfn_polluted(const struct pa_pool *pool, pa_pfn_t pfn);
/* Is every frame of the region of pfn (its pageblocks with memory) free in the buddy? */
bool superblock_pfn_whole(const struct pa_pool *pool, pa_pfn_t pfn);
/*
 * The regions of zone z in z->sb_rank, in the order a polluting fallback
 * tries them: polluted ones, most polluted first, then (unless
 * polluted_only) clean ones, fullest first. Returns how many.
 */
unsigned superblock_rank(struct pa_zone *z, bool polluted_only);
/*
 * A wholly free pageblock of region index in zone z that heads a free
 * block of order >= the pageblock order and >= need (its order in *order)
 * on a list in the mask mts; untouched memory is written as needed. PA_NIL
 * if none.
 */
pa_pfn_t superblock_free_pageblock(struct pa_zone *z, uint64_t index, unsigned mts, unsigned need,
                                   unsigned *order);
#define SB_PARTIAL_TRIES 4 /* partly free pageblocks a region search walks, fullest first */
struct sb_pick {
	pa_pfn_t large, small; /* the largest and the smallest free block found; PA_NIL: none */
	unsigned large_order, small_order;
};
/*
 * In the fullest partly free pageblocks of region index whose type is in
 * mts, free blocks of order or above: true with the pick of the first
 * pageblock that has one.
 */
bool superblock_partial_pageblock(struct pa_zone *z, uint64_t index, unsigned order, unsigned mts,
                                  struct sb_pick *pick);

/*
 * defrag_mode: free a pageblock inside a polluted region of z by moving its
 * movable folios out, so that a fallback of start_mt can claim it there
 * instead of polluting a clean region. Zone lock not held; true on success.
 */
bool superblock_defrag(struct pa_zone *z, unsigned start_mt);
/* ALLOC_NO_POLLUTE for a request of type mt when defrag_mode is on and it may compact. */
static inline unsigned superblock_alloc_flags(struct pa_pool *pool, unsigned mt, pa_gfp_t gfp)
{
	if (likely(!pool->sb) || mt == PA_MT_MOVABLE || (gfp & (PA_GFP_NOCOMPACT | PA_GFP_HIGH)) ||
	    !atomic_load_explicit(&pool->defrag_mode, memory_order_relaxed))
		return 0;
	return ALLOC_NO_POLLUTE;
}

/* The buddy's hook: one branch when superblocks are off. */
static inline void superblock_free_hook(struct pa_pool *pool, pa_pfn_t pfn, unsigned order,
                                        bool add)
{
	if (unlikely(pool->sb != NULL))
		superblock_count_free(pool, pfn, order, add);
}

#endif /* PA_SUPERBLOCK_H */
