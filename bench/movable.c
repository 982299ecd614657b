/* SPDX-License-Identifier: MIT */
/*
 * Movable folios with an owner, the pool's zones, percentiles: what the
 * gigantic, dmaheap and cma-alloc workloads share (movable.h).
 */
#define _GNU_SOURCE
#include "movable.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------- */
/* The owner                                                               */
/* ---------------------------------------------------------------------- */

/*
 * Compaction asks to move the folio of a slot: the reference moves if the
 * slot still names the old folio. A slot being filled (the folio allocated
 * but not yet recorded) or freed answers BUSY: the folio stays put.
 */
static enum pa_migrate_result owned_migrate(void *ctx, uint64_t cookie, struct pa_page *old_folio,
                                            struct pa_page *new_folio, unsigned order)
{
	struct bench_owned *o = ctx;
	enum pa_migrate_result r = PA_MIGRATE_BUSY;
	pthread_mutex_lock(&o->lock);
	if (cookie < o->next && o->page[cookie] == old_folio && o->order[cookie] == order) {
		o->page[cookie] = new_folio;
		o->moved++;
		r = PA_MIGRATE_OK;
	} else {
		o->refused++;
	}
	pthread_mutex_unlock(&o->lock);
	return r;
}

int bench_owned_init(struct bench_owned *o, struct pa_pool *pool, uint64_t cap)
{
	memset(o, 0, sizeof *o);
	o->pool = pool;
	o->cap = cap ? cap : 1;
	o->page = calloc(o->cap, sizeof *o->page);
	o->order = calloc(o->cap, sizeof *o->order);
	o->pinned = calloc(o->cap, sizeof *o->pinned);
	o->free_slots = calloc(o->cap, sizeof *o->free_slots);
	pthread_mutex_init(&o->lock, NULL);
	if (!o->page || !o->order || !o->pinned || !o->free_slots) {
		fprintf(stderr, "pagealloc: out of memory for a table of %llu folios\n",
		        (unsigned long long)o->cap);
		return -1;
	}
	struct pa_owner_ops ops = { .name = "bench", .ctx = o, .migrate = owned_migrate };
	o->id = pa_owner_register(pool, &ops);
	if (o->id < 1) {
		fprintf(stderr, "pagealloc: pa_owner_register: %s\n", strerror(-o->id));
		return -1;
	}
	return 0;
}

void bench_owned_destroy(struct bench_owned *o)
{
	free(o->page);
	free(o->order);
	free(o->pinned);
	free(o->free_slots);
	pthread_mutex_destroy(&o->lock);
	memset(o, 0, sizeof *o);
}

/* A slot for a new folio, or -1 when the table is full. Lock held. */
static int64_t slot_get(struct bench_owned *o)
{
	if (o->nr_free_slots)
		return (int64_t)o->free_slots[--o->nr_free_slots];
	return o->next < o->cap ? (int64_t)o->next++ : -1;
}

int64_t bench_owned_alloc(struct bench_owned *o, pa_gfp_t gfp, unsigned order)
{
	pthread_mutex_lock(&o->lock);
	int64_t slot = slot_get(o);
	pthread_mutex_unlock(&o->lock);
	if (slot < 0)
		return -1;
	/* Owned from the start: no window in which the folio is movable by nobody. */
	struct pa_page *p = pa_alloc_owned(o->pool, gfp | PA_GFP_MOVABLE | PA_GFP_NOWARN, order,
	                                   o->id, (uint64_t)slot);
	pthread_mutex_lock(&o->lock);
	if (p) {
		o->page[slot] = p;
		o->order[slot] = (uint8_t)order;
		o->live++;
	} else {
		o->free_slots[o->nr_free_slots++] = (uint64_t)slot;
	}
	pthread_mutex_unlock(&o->lock);
	return p ? slot : -1;
}

void bench_owned_free(struct bench_owned *o, uint64_t slot)
{
	pthread_mutex_lock(&o->lock);
	struct pa_page *p = slot < o->next ? o->page[slot] : NULL;
	unsigned order = p ? o->order[slot] : 0;
	bool pinned = p && o->pinned[slot];
	if (p) {
		o->page[slot] = NULL;
		o->pinned[slot] = false;
		o->free_slots[o->nr_free_slots++] = slot;
		o->live--;
	}
	pthread_mutex_unlock(&o->lock);
	if (pinned)
		pa_unpin(o->pool, p);
	/* Outside the lock: freeing a folio that is being moved is safe (pagealloc.h). */
	if (p)
		pa_free_pages(o->pool, p, order);
}

pa_pfn_t bench_owned_pfn(struct bench_owned *o, uint64_t slot)
{
	pthread_mutex_lock(&o->lock);
	struct pa_page *p = slot < o->next ? o->page[slot] : NULL;
	pa_pfn_t pfn = p ? pa_page_to_pfn(o->pool, p) : PA_PFN_INVALID;
	pthread_mutex_unlock(&o->lock);
	return pfn;
}

int bench_owned_pin(struct bench_owned *o, uint64_t slot)
{
	pthread_mutex_lock(&o->lock);
	struct pa_page *p = slot < o->next ? o->page[slot] : NULL;
	int rc = p ? pa_pin(o->pool, p) : -EINVAL;
	if (rc == 0)
		o->pinned[slot] = true;
	pthread_mutex_unlock(&o->lock);
	return rc;
}

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
