/* SPDX-License-Identifier: MIT */
/*
 * The pool's zones with memory, and percentiles of
 * latency samples: what the gigantic and dmaheap workloads share. (Their
 * movable folios belong to the owner of compact_common.h.)
 */
#ifndef PA_BENCH_MOVABLE_H
#define PA_BENCH_MOVABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "pagealloc.h"

/* The zones of the pool that have memory. Their number (at most max), or -1. */
int bench_zones(struct pa_pool *pool, struct pa_zone_info *out, unsigned max);

/*
 * Latency samples in nanoseconds: the value at percentile pct (0..100) of
 * n samples, sorting them in place (nearest rank). 0 when n is 0.
 */
double bench_percentile(double *samples, uint64_t n, double pct);

#endif /* PA_BENCH_MOVABLE_H */
