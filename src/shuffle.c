/* SPDX-License-Identifier: MIT */
/*
 * Page shuffling (shuffle=1), as Linux's mm/shuffle.c: the order in which
 * the buddy hands out its largest blocks is made random, so that what a
 * workload gets does not follow the address order of memory.
 *
 * At boot (or, with deferred init, once every chunk is initialised, where
 * Linux's page_alloc_init_late() does it), each zone's max-order free lists
 * are put in a random order (Fisher-Yates over the list; Linux swaps random
 * pairs of the same migratetype, which gives the same kind of permutation).
 * Afterwards a block that a free merges up to the max order goes to the
 * head or the tail of its list at random (Linux's shuffle_pick_tail()), and
 * a zone that memory came online in is shuffled again (hotplug.c, as Linux
 * calls shuffle_zone() after online_pages()).
 * Nothing else changes: the same blocks, the same counts, only their order.
 */
#include "shuffle.h"

#include "platform/platform.h"
#include "buddy.h"
#include "memmap.h"
#include "zone.h"

/* splitmix64: a fast generator with a 64-bit state; quality is ample for an order. */
static uint64_t rng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A value in [0, n) without modulo bias (n > 0). */
static uint64_t rng_below(uint64_t *state, uint64_t n)
{
	uint64_t limit = UINT64_MAX - UINT64_MAX % n, v;
	do
		v = rng_next(state);
	while (v >= limit);
	return v % n;
}

bool shuffle_pick_tail(struct pa_zone *z)
{
	return rng_next(&z->shuffle_rng) >> 63;
}

/* Put the max-order list of mt in a random order. Zone lock held. */
static void shuffle_list(struct pa_zone *z, unsigned mt)
{
	unsigned mo = z->pool->cfg.max_order;
	uint64_t n = zone_free_count(z, mo, mt);
	if (n < 2)
		return;
	uint32_t *pfns = pa_malloc(&z->pool->plat, n * sizeof *pfns);
	if (!pfns)
		return; /* the list stays as it is: in order, but whole */
	uint64_t i = 0;
	for (uint32_t pfn = buddy_list_peek(z, mo, mt); pfn != PA_NIL && i < n;
	     pfn = pfn_page(z->pool, pfn)->lru.next)
		pfns[i++] = pfn;
	pa_assert(z->pool, i == n);
	for (uint64_t k = i; k > 1; k--) {
		uint64_t j = rng_below(&z->shuffle_rng, k);
		uint32_t t = pfns[k - 1];
		pfns[k - 1] = pfns[j];
		pfns[j] = t;
	}
	buddy_relink_max(z, mt, pfns, i);
	pa_free(&z->pool->plat, pfns);
}

/*
 * Link every untouched chunk first (their blocks would otherwise come out
 * in address order), then shuffle each list, under the zone lock.
 */
void shuffle_zone(struct pa_zone *z)
{
	if (!z->pool->cfg.shuffle)
		return;
	pa_lock(&z->lock, SITE_ADMIN);
	while (z->nr_untouched)
		buddy_materialise(z, zone_untouched_pop(z));
	for (unsigned mt = 0; mt < PA_MT_COUNT; mt++)
		shuffle_list(z, mt);
	pa_unlock(&z->lock);
}

void shuffle_seed(struct pa_zone *z)
{
	struct pa_pool *pool = z->pool;
	z->shuffle_rng = pool->plat.random_seed(pool->plat.ctx) ^ ((uint64_t)(uintptr_t)z << 16) ^
	                 ((uint64_t)z->index << 48);
}

void shuffle_pool(struct pa_pool *pool)
{
	if (!pool->cfg.shuffle)
		return;
	for (unsigned i = 0; i < pool->nr_zones; i++)
		shuffle_zone(&pool->zones[i]);
}
