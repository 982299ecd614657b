/* SPDX-License-Identifier: MIT */
/*
 * Pageblock isolation (isolation.c), contiguous ranges (contig.c) and CMA
 * areas (cma.c): the three build on each other.
 */
#ifndef PA_ISOLATION_H
#define PA_ISOLATION_H

#include "pool.h"

/*
 * Isolate the pageblocks covering [start, end) of one zone: their free
 * blocks move to the ISOLATE lists and frees into them stay there. Per-CPU
 * lists are drained. -EBUSY if one is isolated already (nothing changes).
 */
int isolation_start(struct pa_zone *zone, pa_pfn_t start, pa_pfn_t end);
/* Cut the free block wider than a pageblock that covers pfn (if any) into pageblocks. Zone lock held. */
void isolation_split_to_pageblocks(struct pa_zone *zone, pa_pfn_t pfn);
/* Undo isolation_start(): free blocks go back to their type's lists, merged. */
void isolation_undo(struct pa_zone *zone, pa_pfn_t start, pa_pfn_t end);
/* Is every frame of [start, end) free on an ISOLATE list? Zone lock held. */
bool isolation_range_free(struct pa_zone *zone, pa_pfn_t start, pa_pfn_t end);
/* pa_alloc_contig_range() whose blocks carry flags (PF_CONTIG, and PF_CMA for an area). */
int contig_alloc_range(struct pa_pool *pool, pa_pfn_t start, pa_pfn_t end, unsigned mt,
                       unsigned flags);
/*
 * Free [pfn, pfn + nr) if it is all blocks of contiguous ranges, taken by
 * pa_cma_alloc() exactly when cma says so: 0, or -EINVAL with nothing freed
 * and what was found written into why.
 */
int contig_free_range(struct pa_pool *pool, pa_pfn_t pfn, uint64_t nr, bool cma, char *why,
                      size_t len);
int cma_init(struct pa_pool *pool, char *err, size_t errlen);
void cma_destroy(struct pa_pool *pool);
/* contig.c: can every allocated frame of [start, end) move (holes skipped)? Zone lock held. */
bool contig_range_movable(const struct pa_pool *pool, pa_pfn_t start, pa_pfn_t end, bool cma);

#endif /* PA_ISOLATION_H */
