/* SPDX-License-Identifier: MIT */
/*
 * Device requests ("device.c") and the scrubber ("scrub.c"): what the other
 * layers call of them.
 */
#ifndef PA_DEVICE_H
#define PA_DEVICE_H

#include "pool.h"

/*
 * A PA_GFP_ZERO allocation of order served from memory known zero when a
 * zone the request may use has some (the frames that are not zero are
 * zeroed here); NULL when none has, or none can serve it at the low
 * watermark: the ordinary path takes over.
 */
struct pa_page *device_alloc_zeroed(struct pa_pool *pool, pa_gfp_t gfp, unsigned order);

/* Is any free memory of the pool known zero? A hint, read without locks. */
bool device_pool_has_clean(const struct pa_pool *pool);

/*
 * Free an allocated block of which `clean` is known zero onto the
 * lists of its pageblocks' types (pageblock_free_block() with knowledge).
 * Zone lock held.
 */
void device_free_block_clean(struct pa_zone *zone, pa_pfn_t pfn, unsigned order,
                             struct pa_clean clean);

/*
 * Zero the frames of the block at p that `clean` does not know zero (backed
 * pools), and count them as zeroed at allocation (the others as found zero).
 */
void device_zero_dirty(struct pa_pool *pool, struct pa_page *p, unsigned order,
                       struct pa_clean clean);

/* Stop the background scrubber, if one runs ("scrub.c"; pa_shutdown). */
void scrub_stop(struct pa_pool *pool);

#endif /* PA_DEVICE_H */
