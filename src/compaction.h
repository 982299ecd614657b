/* SPDX-License-Identifier: MIT */
/*
 * Compaction (compaction.c): direct, background and proactive, and of a range.
 */
#ifndef PA_COMPACTION_H
#define PA_COMPACTION_H

#include "pool.h"

enum compact_mode { COMPACT_ASYNC, COMPACT_SYNC_LIGHT, COMPACT_SYNC };

int compaction_init(struct pa_pool *pool, char *err, size_t errlen);
void compaction_stop(struct pa_pool *pool);
/*
 * Direct compaction from the allocation slow path, for a request of these
 * alloc flags (its watermark) whose highest zone is `highest` (the lowmem
 * reserve); true if a block of order may now exist where it may take it.
 */
bool compaction_direct(struct pa_pool *pool, const struct pa_node *node, unsigned order,
                       pa_gfp_t gfp, enum compact_mode mode, unsigned alloc_flags,
                       enum pa_zone_type highest);
/* A high-order allocation failed: wake node's background compactor. */
void compaction_wake(struct pa_pool *pool, unsigned node, unsigned order);
/* Move the movable folios out of [start, end) (zone lock not held); the frames moved. */
uint64_t compaction_range(struct pa_zone *zone, pa_pfn_t start, pa_pfn_t end);
/* Move every movable folio out of [start, end); true if the range is then free. */
bool compaction_empty_range(struct pa_zone *zone, pa_pfn_t start, pa_pfn_t end);

#endif /* PA_COMPACTION_H */
