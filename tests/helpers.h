/* SPDX-License-Identifier: MIT */
/*
 * Helpers the test files share (helpers.c): frame accounting, counters and
 * reports read back with a check that they could be, allocation shorthands,
 * a seeded generator, a pool-wide "everything is free again" check. Each
 * reports through the harness (test.h), so that a test file holds only its
 * cases and the helpers of its own subject.
 */
#ifndef PA_TEST_HELPERS_H
#define PA_TEST_HELPERS_H

#include "test.h"

#include <errno.h>
#include <pthread.h>

#include "pool.h"

/* Frame accounting; CHECKs that managed = free + allocated + reserved. */
struct pa_usage usage(struct pa_pool *pool);

/* A vmstat counter by name; CHECKs that it exists. */
uint64_t vmstat(struct pa_pool *pool, const char *name);

/*
 * A report in a malloc'd string (free it); ends the case when it cannot be
 * had. Safe while other threads change the pool (report_alloc() checks the
 * length contract on a quiet one).
 */
char *report(struct pa_pool *pool, enum pa_report_kind kind, unsigned flags);

/* A report in a malloc'd string (free it): its length as pa_report() promised, CHECKed. */
char *report_alloc(struct pa_pool *pool, enum pa_report_kind kind, unsigned flags);

/* Pageblocks of a type ("Movable") as pagetypeinfo --json counts them over every zone; -1 if it does not parse. */
int64_t json_blocks(struct pa_pool *pool, const char *type);

/* Drained, valid, and every frame free. */
void expect_all_free(struct pa_pool *pool);

/*
 * expect_all_free, and merged as in a pool freshly booted from cmdline
 * (buddyinfo alike); a failure names the step after which it was checked.
 */
void expect_as_fresh_after(struct pa_pool *pool, const char *cmdline, const char *step);
#define expect_as_fresh(pool, cmdline) expect_as_fresh_after(pool, cmdline, "the case")

/* Allocate or end the case; the block's first pfn, CHECKed aligned to its order. */
pa_pfn_t must_alloc(struct pa_pool *pool, pa_gfp_t gfp, unsigned order);

/* Free the block at pfn. */
void free_pfn(struct pa_pool *pool, pa_pfn_t pfn, unsigned order);

/* A seeded generator (splitmix64): the next number of the stream in *s. */
uint64_t rng_next(uint64_t *s);

/* The pool's zone of a type, or NULL. */
struct pa_zone *zone_of_type(struct pa_pool *pool, enum pa_zone_type type);
/* Zones with memory present (every node also has a ZONE_MOVABLE, empty without movablecore=). */
unsigned zones_with_memory(const struct pa_pool *pool);

/* Free blocks per order (counts[0 .. nr_orders - 1]), summed over every zone of the buddyinfo text. */
void buddy_counts(struct pa_pool *pool, uint64_t *counts, unsigned nr_orders);
/* Free frames in blocks of order or above, over every zone (zone locks taken). */
uint64_t free_frames_from(struct pa_pool *pool, unsigned order);

/* The order of the largest aligned block at p that fits below e (contig.c's rule). */
unsigned fit_order(const struct pa_pool *pool, pa_pfn_t p, pa_pfn_t e);

/* The first frame of the block [p, p + 2^o) after its head that is not a body frame; PA_NIL if none. */
pa_pfn_t body_stray(const struct pa_pool *pool, pa_pfn_t p, unsigned o);

/*
 * [s, e) is a row of allocated ownerless blocks of type mt, the largest
 * aligned that fit (contig.c's rule), each with body frames behind its
 * head; CHECKs it (the first three faults) and returns the blocks.
 */
unsigned expect_range_blocks(struct pa_pool *pool, pa_pfn_t s, pa_pfn_t e, unsigned mt);

/*
 * Allocate order-0 blocks of gfp into pages[*n], pages[*n + 1], ... until
 * one fails or *n reaches cap; returns how many this call took.
 */
uint64_t alloc_order0_into(struct pa_pool *pool, pa_gfp_t gfp, struct pa_page **pages, uint64_t *n,
                           uint64_t cap);
/* A malloc'd array of order-0 blocks of gfp, taken until one fails or cap; *nr of them. */
struct pa_page **alloc_order0_all(struct pa_pool *pool, pa_gfp_t gfp, uint64_t cap, uint64_t *nr);
/* Free n order-0 blocks, then the array that held them. */
void free_order0_all(struct pa_pool *pool, struct pa_page **pages, uint64_t n);

/* A cpu_id platform hook: it answers what the calling thread last set fake_cpu to. */
extern __thread unsigned fake_cpu;
unsigned fake_cpu_id(void *ctx);

#endif
