/* SPDX-License-Identifier: MIT */
/*
 * max_order changed at run time (ctl max_order), between the pageblock
 * order and the order the pool was booted with (every array by order is
 * sized for that one). Lowering switches the per-CPU lists of the orders
 * above off (they drain), splits every free block above the new order into
 * blocks of it, and leaves allocated blocks as they are: they are split
 * when freed (buddy_free_block). Raising frees every block of the old max
 * order again, so that it merges with its buddies up to the new one.
 *
 * The change is made with every zone lock held, after untouched memory got
 * its descriptors (an untouched chunk counts blocks of the max order); it is
 * refused with -EBUSY while deferred init runs, which would add more.
 *
 * Other threads go on allocating and freeing meanwhile. What keeps them
 * right: the per-CPU orders above the new order are switched off and
 * drained before the store, and a refill or a free checks the switch again
 * under the list lock, so no list keeps a block above it; everything that
 * walks the buddy does so under a zone lock, where max_order cannot move;
 * a path without one reads it once (pool_max_order()) and only decides from
 * it whether to try: an allocation above the new order then finds nothing
 * under the zone lock and fails, a free above it is split, and arrays by
 * order are sized by the booted order.
 */
#include "max_order.h"

#include "platform/platform.h"
#include "buddy.h"
#include "deferred.h"
#include "memmap.h"
#include "pcp.h"
#include "zone.h"

static void lock_zones(struct pa_pool *pool)
{
	for (unsigned i = 0; i < pool->nr_zones; i++)
		pa_lock(&pool->zones[i].lock, SITE_ADMIN);
}

static void unlock_zones(struct pa_pool *pool)
{
	for (unsigned i = pool->nr_zones; i-- > 0;)
		pa_unlock(&pool->zones[i].lock);
}

/* Every free block above m, as blocks of order m (cfg.max_order is m already). Zone lock held. */
static void split_above(struct pa_zone *z, unsigned m, unsigned old)
{
	for (unsigned o = m + 1; o <= old; o++)
		for (unsigned mt = 0; mt < PA_MT_COUNT; mt++) {
			pa_pfn_t pfn;
			while ((pfn = buddy_list_peek(z, o, mt)) != PA_NIL) {
				buddy_list_del(z, pfn);
				for (uint64_t i = 0; i < 1ull << (o - m); i++)
					buddy_list_add(z, pfn + (i << m), m, mt);
			}
		}
}

/* Free every block of the old max order again: it merges up to the new one. Zone lock held. */
static int merge_from(struct pa_zone *z, unsigned old)
{
	uint64_t n = 0;
	for (unsigned mt = 0; mt < PA_MT_COUNT; mt++)
		n += zone_free_count(z, old, mt);
	pa_pfn_t *pfns = pa_malloc(&z->pool->plat, (n ? n : 1) * sizeof *pfns);
	if (!pfns)
		return -ENOMEM;
	uint64_t k = 0;
	for (unsigned mt = 0; mt < PA_MT_COUNT; mt++)
		for (pa_pfn_t p = buddy_list_peek(z, old, mt); p != PA_NIL && k < n;
		     p = pfn_page(z->pool, p)->lru.next)
			pfns[k++] = p;
	for (uint64_t i = 0; i < k; i++) {
		const struct pa_page *p = pfn_page(z->pool, pfns[i]);
		if (page_state(p) != PS_FREE || page_order(p) != old)
			continue; /* merged already, into the block of a buddy freed before it */
		unsigned mt = p->mt;
		buddy_list_del(z, pfns[i]);
		buddy_free_block(z, pfns[i], old, mt);
	}
	pa_free(&z->pool->plat, pfns);
	return 0;
}

int max_order_set(struct pa_pool *pool, unsigned m)
{
	unsigned old = pool->cfg.max_order;
	if (m < pool->cfg.pageblock_order || m > pool->max_order_boot)
		return -EINVAL;
	if (!deferred_init_done(pool))
		return -EBUSY;
	if (m == old)
		return 0;
	for (unsigned o = m + 1; o <= old; o++)
		if (pcp_order_enabled(pool, o))
			pcp_set_order(pool, o,
			              false); /* drained: nothing above m stays on a list */
	int rc = 0;
	lock_zones(pool);
	for (unsigned i = 0; i < pool->nr_zones; i++) {
		struct pa_zone *z = &pool->zones[i];
		zone_prepare_range(z, z->start_pfn, z->end_pfn);
	}
	__atomic_store_n(&pool->cfg.max_order, m, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < pool->nr_zones; i++) {
		struct pa_zone *z = &pool->zones[i];
		if (m < old)
			split_above(z, m, old);
		else if (merge_from(z, old))
			rc = -ENOMEM; /* left at the old order: valid, merely not merged */
		buddy_reset_tails(z);
	}
	unlock_zones(pool);
	return rc;
}
