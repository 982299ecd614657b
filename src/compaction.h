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
/* What a direct compaction came to, as Linux's try_to_compact_pages() says it. */
enum compact_result {
	COMPACT_R_SKIPPED, /* no zone compacted: each lacked free memory, or was deferred */
	COMPACT_R_FAILED,  /* some zone compacted, and no block of the order came of it */
	COMPACT_R_SUCCESS, /* a block of the order may now exist where the request may take it */
};

/*
 * Direct compaction from the allocation slow path, for a request of these
 * alloc flags (its watermark) whose highest zone is `highest` (the lowmem
 * reserve).
 */
enum compact_result compaction_direct(struct pa_pool *pool, const struct pa_node *node,
                                      unsigned order, pa_gfp_t gfp, enum compact_mode mode,
                                      unsigned alloc_flags, enum pa_zone_type highest);
/* A high-order allocation failed: wake node's background compactor. */
void compaction_wake(struct pa_pool *pool, unsigned node, unsigned order);
/* Move the movable folios out of [start, end) (zone lock not held); the frames moved. */
uint64_t compaction_range(struct pa_zone *zone, pa_pfn_t start, pa_pfn_t end);
/* Move every movable folio out of [start, end); true if the range is then free. */
bool compaction_empty_range(struct pa_zone *zone, pa_pfn_t start, pa_pfn_t end);

#endif /* PA_COMPACTION_H */
