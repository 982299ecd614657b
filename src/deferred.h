/* SPDX-License-Identifier: MIT */
/*
 * Deferred init (deferred.c): background init threads, one per node.
 */
#ifndef PA_DEFERRED_H
#define PA_DEFERRED_H

#include "pool.h"

/* Has deferred init finished (or never run)? */
bool deferred_init_done(struct pa_pool *pool);
/*
 * A zone's last chunk is set up (zone lock held). Lazy, the last zone to
 * get there has its unlock end init (pa_lock_defer(), deferred_finish()).
 */
void deferred_zone_whole(struct pa_zone *z);
/* Lazy init's end, after its last chunk: the watermarks from the full size. No lock held. */
void deferred_finish(struct pa_pool *pool);
int deferred_init_start(struct pa_pool *pool, char *err, size_t errlen);
void deferred_init_stop(struct pa_pool *pool);

#endif /* PA_DEFERRED_H */
