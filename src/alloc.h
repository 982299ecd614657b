/* SPDX-License-Identifier: MIT */
/*
 * The entry points (alloc.c): what the other layers call of them.
 */
#ifndef PA_ALLOC_H
#define PA_ALLOC_H

#include "pool.h"

/* A bad free other than pa_free_pages()'s: report "bad page: <what>; refused", count it. */
void alloc_bad_free(struct pa_pool *pool, const char *what);
/*
 * init_on_free's wipe of a checked block, outside the zone lock (held on
 * entry and on return): the head says PS_FREEING meanwhile.
 */
void alloc_wipe_block(struct pa_zone *z, pa_pfn_t pfn, unsigned order);
/* Each node's alloc_flags[] again: at boot and when a zone gains or loses all its memory. */
void alloc_update_node_flags(struct pa_pool *pool);

/* Which pageblocks an allocation of gfp belongs to. */
static inline unsigned gfp_migratetype(pa_gfp_t gfp)
{
	/* By the two type bits, one load: movable wins over reclaimable. */
	static const uint8_t mt[4] = { PA_MT_UNMOVABLE, PA_MT_MOVABLE, PA_MT_RECLAIMABLE,
		                       PA_MT_MOVABLE };
	_Static_assert(PA_GFP_MOVABLE == 1 && PA_GFP_RECLAIMABLE == 2, "the type bits index mt[]");
	return mt[gfp & (PA_GFP_MOVABLE | PA_GFP_RECLAIMABLE)];
}

#endif /* PA_ALLOC_H */
