/* SPDX-License-Identifier: MIT */
/*
 * Linux's page shuffling (shuffle.c, shuffle=1).
 */
#ifndef PA_SHUFFLE_H
#define PA_SHUFFLE_H

#include "pool.h"

/* A random state for the zone, from the clock: every boot shuffles differently. */
void shuffle_seed(struct pa_zone *zone);
/* Shuffle every zone's max-order free lists: at boot, or when deferred init is done. */
void shuffle_pool(struct pa_pool *pool);
/* Shuffle one zone's max-order lists (shuffle=1 only): memory came online in it. */
void shuffle_zone(struct pa_zone *zone);
/* A freed max-order block goes to the tail of its list: a coin flip. Zone lock held. */
bool shuffle_pick_tail(struct pa_zone *zone);

#endif /* PA_SHUFFLE_H */
