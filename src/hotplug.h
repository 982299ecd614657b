/* SPDX-License-Identifier: MIT */
/*
 * Memory hotplug (hotplug.c): memory blocks offline and online.
 */
#ifndef PA_HOTPLUG_H
#define PA_HOTPLUG_H

#include "pool.h"

int hotplug_init(struct pa_pool *pool, char *err, size_t errlen);
void hotplug_destroy(struct pa_pool *pool);
/* sysfs's valid_zones of memory block `block`, as text into buf (snprintf's length). */
int hotplug_valid_zones(struct pa_pool *pool, uint64_t block, char *buf, size_t len);

#endif /* PA_HOTPLUG_H */
