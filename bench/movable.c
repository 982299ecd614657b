/* SPDX-License-Identifier: MIT */
/* The pool's zones and percentiles: what the gigantic and dmaheap workloads share (movable.h). */
#define _GNU_SOURCE
#include "movable.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------- */
/* Zones                                                                   */
/* ---------------------------------------------------------------------- */

int bench_zones(struct pa_pool *pool, struct pa_zone_info *out, unsigned max)
{
	unsigned nr = 0, count = pa_zone_count(pool);
	for (unsigned i = 0; i < count && nr < max; i++) {
		if (pa_zone_info(pool, i, &out[nr]) != 0)
			return -1;
		nr += out[nr].present > 0;
	}
	return (int)nr;
}

/* ---------------------------------------------------------------------- */
/* Percentiles                                                             */
/* ---------------------------------------------------------------------- */

static int cmp_sample(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double bench_percentile(double *samples, uint64_t n, double pct)
{
	if (!n)
		return 0;
	qsort(samples, n, sizeof *samples, cmp_sample);
	uint64_t rank = (uint64_t)(pct / 100.0 * (double)n + 0.999999);
	return samples[rank ? (rank > n ? n - 1 : rank - 1) : 0];
}
