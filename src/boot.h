/* SPDX-License-Identifier: MIT */
/*
 * The boot command line (boot.c): parsed into struct pa_boot_config (pool.h).
 */
#ifndef PA_BOOT_H
#define PA_BOOT_H

#include "pool.h"

/* Parse and validate a command line into cfg; 0 or -EINVAL with a message. */
int boot_parse(const char *cmdline, unsigned online_cpus, struct pa_boot_config *cfg, char *err,
               size_t errlen);
/* Is pfn a hole to the buddy (memhole= or memreserve=), as opposed to offline memory? */
bool boot_pfn_in_hole(const struct pa_boot_config *c, pa_pfn_t pfn);
/* Is pfn in a memhole= (no memory at all, unlike memreserve=)? */
bool boot_pfn_in_memhole(const struct pa_boot_config *c, pa_pfn_t pfn);
/* Frames of [lo, hi) that memreserve= keeps out of the buddy (inside no memhole=). */
uint64_t boot_reserved_frames(const struct pa_boot_config *c, pa_pfn_t lo, pa_pfn_t hi);
/* Is any frame of [lo, hi) in a hole or offline at boot? */
bool boot_range_hidden(const struct pa_boot_config *c, pa_pfn_t lo, pa_pfn_t hi);

#endif /* PA_BOOT_H */
