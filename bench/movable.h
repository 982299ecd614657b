/* SPDX-License-Identifier: MIT */
/*
 * Movable folios with an owner, for the workloads that need compaction,
 * contiguous allocation or CMA to move something (gigantic, dmaheap --cma,
 * cma-alloc), and the pool's zones as the info report lists them.
 *
 * The owner is a table of folios indexed by cookie (the slot), under one
 * mutex, as an embedder would keep its references: the migrate callback
 * moves the slot's reference to the new folio. It is safe to use from
 * several threads while another thread compacts or allocates contiguous
 * ranges. Metadata-only pools: nothing to copy, the reference is all.
 */
#ifndef PA_BENCH_MOVABLE_H
#define PA_BENCH_MOVABLE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "pagealloc.h"

struct bench_owned {
	struct pa_pool *pool;
	int id;                /* from pa_owner_register */
	pthread_mutex_t lock;  /* guards everything below */
	struct pa_page **page; /* [slot]: the folio's head now, NULL when the slot is free */
	uint8_t *order;        /* [slot] */
	bool *pinned;          /* [slot]: pinned by bench_owned_pin */
	uint64_t *free_slots;  /* a stack of slots given back */
	uint64_t nr_free_slots;
	uint64_t cap, next;      /* slots: capacity, and the first never used */
	uint64_t live;           /* folios held */
	uint64_t moved, refused; /* migrate callbacks answered OK / BUSY */
};

/* Register the owner with room for cap folios. 0, or -1 with a message. */
int bench_owned_init(struct bench_owned *o, struct pa_pool *pool, uint64_t cap);
/* Free the table. After pa_shutdown(): until then a compactor may call the owner. */
void bench_owned_destroy(struct bench_owned *o);

/* Allocate a movable folio (gfp | MOVABLE | NOWARN) owned by o: its slot, or -1. */
int64_t bench_owned_alloc(struct bench_owned *o, pa_gfp_t gfp, unsigned order);
/* Free the folio of a slot (nothing if the slot is empty); unpins it first. */
void bench_owned_free(struct bench_owned *o, uint64_t slot);
/* The folio's first frame now, or PA_PFN_INVALID for an empty slot. */
pa_pfn_t bench_owned_pfn(struct bench_owned *o, uint64_t slot);
/* Pin the slot's folio (it stops being movable). 0 or -errno. */
int bench_owned_pin(struct bench_owned *o, uint64_t slot);

/* A zone: [start_pfn, end_pfn). */
struct bench_zone {
	char name[16];
	pa_pfn_t start_pfn, end_pfn;
};

/* The zones of the pool from its info report (JSON). Their number (at most max), or -1. */
int bench_zones(struct pa_pool *pool, struct bench_zone *out, unsigned max);

/*
 * Latency samples in nanoseconds: the value at percentile pct (0..100) of
 * n samples, sorting them in place (nearest rank). 0 when n is 0.
 */
double bench_percentile(double *samples, uint64_t n, double pct);

#endif /* PA_BENCH_MOVABLE_H */
