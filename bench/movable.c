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

/* The number after "key": at or after p, or -1 when there is none before end. */
static int64_t json_number(const char *p, const char *end, const char *key)
{
	char pat[48];
	snprintf(pat, sizeof pat, "\"%s\":", key);
	const char *k = strstr(p, pat);
	if (!k || (end && k > end))
		return -1;
	return strtoll(k + strlen(pat), NULL, 10);
}

/* One zone object at p ('{' ... '}'). 0, or -1 if it does not parse. */
static int parse_zone(const char *p, struct bench_zone *z)
{
	const char *end = strchr(p, '}');
	const char *name = strstr(p, "\"name\":\"");
	if (!end || !name || name > end)
		return -1;
	name += strlen("\"name\":\"");
	size_t n = strcspn(name, "\"");
	snprintf(z->name, sizeof z->name, "%.*s",
	         (int)(n < sizeof z->name ? n : sizeof z->name - 1), name);
	int64_t s = json_number(p, end, "start_pfn"), e = json_number(p, end, "end_pfn");
	if (s < 0 || e < s)
		return -1;
	z->start_pfn = (pa_pfn_t)s;
	z->end_pfn = (pa_pfn_t)e;
	int64_t min = json_number(p, end, "watermark_min");
	z->watermark_min = min > 0 ? (uint64_t)min : 0;
	return 0;
}

int bench_zones(struct pa_pool *pool, struct bench_zone *out, unsigned max)
{
	int len = pa_report(pool, PA_REPORT_INFO, PA_REPORT_JSON, NULL, 0);
	char *json = len > 0 ? malloc((size_t)len + 1) : NULL;
	if (!json || pa_report(pool, PA_REPORT_INFO, PA_REPORT_JSON, json, (size_t)len + 1) < 0) {
		free(json);
		return -1;
	}
	int nr = 0;
	/* Every node's "zones":[{...},{...}]. */
	for (const char *p = json; (p = strstr(p, "\"zones\":[")) != NULL;) {
		p += strlen("\"zones\":[");
		while (*p == '{' && nr < (int)max) {
			if (parse_zone(p, &out[nr]) == 0)
				nr++;
			p = strchr(p, '}') + 1;
			p += *p == ',';
		}
	}
	free(json);
	return nr;
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
