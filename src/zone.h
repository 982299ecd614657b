/* SPDX-License-Identifier: MIT */
/*
 * Zones (zone.c): init and deferred memory, watermarks, which zone a request
 * may use, and where a pfn lives. The structures are pool.h's.
 */
#ifndef PA_ZONE_H
#define PA_ZONE_H

#include "deferred.h"
#include "pool.h"

int zone_init_all(struct pa_pool *pool, char *err, size_t errlen);
void zone_update_cpu_zones(struct pa_pool *pool);
void zone_destroy_all(struct pa_pool *pool);
/* Initialise the next chunk of a zone's deferred memory; false when none is left. Zone lock held. */
bool zone_init_next_chunk(struct pa_zone *zone);
/* Is pfn (in the zone) in memory not initialised yet, or in an untouched chunk? Zone lock held. */
static inline bool zone_pfn_pending(const struct pa_zone *z, pa_pfn_t pfn)
{
	if (pfn >= z->init_pfn)
		return true;
	if (likely(!z->nr_untouched) || pfn < z->chunk_base || pfn >= z->untouched_end)
		return false; /* outside: the span grew by hotplug, where nothing is untouched */
	uint64_t i = (pfn - z->chunk_base) >> z->pool->cfg.chunk_order;
	return (z->untouched[i / 64] >> (i % 64)) & 1;
}
/*
 * Make [start, end) of the zone walkable by scanners: initialise deferred
 * memory up to end and write the descriptors of the untouched chunks it
 * overlaps. Zone lock held.
 */
void zone_prepare_range(struct pa_zone *zone, pa_pfn_t start, pa_pfn_t end);
/* Take the highest untouched chunk (clearing its bit); PA_NIL if none. Zone lock held. */
pa_pfn_t zone_untouched_pop(struct pa_zone *zone);
/*
 * An allocation that runs short sets up the zone's next deferred chunk
 * (Linux's deferred_grow_zone()) unless ctl deferred_on_demand is 0; false
 * when nothing more was set up. Zone lock held.
 */
static inline bool zone_grow_on_demand(struct pa_zone *z)
{
	return z->init_pfn < z->end_pfn &&
	       atomic_load_explicit(&z->pool->deferred_on_demand, memory_order_relaxed) &&
	       zone_init_next_chunk(z);
}
/* Default min_free_kbytes and watermarks again, once deferred init has grown managed pages. */
void zone_init_done(struct pa_pool *pool);

void zone_setup_watermarks(struct pa_pool *pool);
/* Recompute the fast path's marks after the watermarks, reserve or CMA changed. Zone lock held. */
void zone_set_pcp_mark(struct pa_zone *z);
/*
 * Linux 6.7's ZONE_BELOW_HIGH on or off, and the fast path's marks with it.
 * Takes the zone lock when it changes (no zone lock held).
 */
void zone_set_below_high(struct pa_zone *z, bool on);
/*
 * Watermark boosting (Linux's boost_watermark()): a fallback that mixes
 * pageblocks raises the zone's watermarks by a pageblock, up to
 * watermark_boost_factor of the high mark (only with kswapd_external: the
 * pool's own kswapd would end it at once); true when Linux's would (kswapd
 * is then woken: zone_boost_wake()). Zone lock held.
 */
bool zone_boost_watermark(struct pa_zone *z);
/* The watermarks from wmark_base and the boost, and the fast path's marks. Zone lock held. */
void zone_apply_boost(struct pa_zone *z);
/*
 * kswapd woken for a boosted zone (after the allocation that boosted it, no
 * lock held): the pool, with nothing to reclaim, ends any boost, as a boosted
 * pass of Linux's kswapd that reclaims nothing does, and wakes the background
 * compactor for a pageblock. With kswapd_external the boost stays until the
 * external reclaim's pass ends (zone_reclaim_pass()).
 */
void zone_boost_wake(struct pa_zone *z);
/*
 * Linux's rmqueue() ends by waking kswapd for a zone its fallback boosted.
 * No lock held. The zone path asks only when its unlock took the slow path,
 * where zone_boost_watermark() sends it (pa_lock_defer()).
 */
static inline void zone_boost_check(struct pa_zone *z)
{
	if (unlikely(atomic_load_explicit(&z->boost_wake, memory_order_relaxed)))
		zone_boost_wake(z);
	/* The allocation that set the last deferred frame up ends deferred_init=lazy. */
	if (unlikely(atomic_load_explicit(&z->pool->deferred_finish, memory_order_relaxed)))
		deferred_finish(z->pool);
}
/*
 * The boost ends now, as the kswapd pass it wakes would end it, with
 * nothing to reclaim (zone/<N>/watermark_boost written 0). No lock held.
 */
void zone_end_boost(struct pa_zone *z);
/* An external reclaim pass begins (on) or ends: a boost from before it ends with it. */
void zone_reclaim_pass(struct pa_zone *z, bool on);
const char *zone_name(enum pa_zone_type type);
/* The pfn where zone type t's address range ends; PA_PFN_INVALID for NORMAL and MOVABLE. */
pa_pfn_t zone_type_end_pfn(const struct pa_pool *pool, enum pa_zone_type t);
/* The highest type below MOVABLE with memory in the pool: ZONE_MOVABLE is taken from it. */
enum pa_zone_type zone_movable_source(const struct pa_pool *pool);
/* Does the layout have zone type t (zone_dma=1 for DMA, zones=x86_64 for DMA32)? */
bool zone_type_in_layout(const struct pa_pool *pool, enum pa_zone_type t);

/* Linux's ALLOC_* flags, as far as they matter here. */
enum alloc_flags {
	ALLOC_WMARK_MIN = 0,
	ALLOC_WMARK_LOW = 1,
	ALLOC_WMARK_MASK = 3,
	ALLOC_MIN_RESERVE = 1u << 2, /* PA_GFP_HIGH: may use half of the min reserve */
	ALLOC_HIGHATOMIC = 1u << 3,  /* high-order PA_GFP_HIGH: may use the atomic reserve */
	ALLOC_CMA = 1u << 4,         /* movable: may borrow CMA pageblocks */
	ALLOC_NO_POLLUTE = 1u << 5,  /* defrag_mode: no fallback into a clean region */
	ALLOC_NOFRAGMENT = 1u << 6,  /* Linux's: no fallback below a pageblock (claims only) */
	ALLOC_NON_BLOCK = 1u << 7,   /* no direct reclaim (PA_GFP_NOCOMPACT), in the slow path */
};

/* Free frames on the CMA lists. Zone lock held. */
uint64_t zone_free_cma(const struct pa_zone *z);

/*
 * Linux's __zone_watermark_ok(): enough free frames above the mark once the
 * request is taken, and a free block of the order or larger that the request
 * may use. Zone lock held.
 */
bool zone_watermark_ok(const struct pa_zone *z, unsigned order, uint64_t mark, unsigned flags);

/* The mark as a request's reserves lower it: ALLOC_MIN_RESERVE by half, ALLOC_NON_BLOCK a quarter more. */
static inline int64_t zone_flags_mark(uint64_t mark, unsigned flags)
{
	int64_t min = (int64_t)mark;
	if (flags & ALLOC_MIN_RESERVE) {
		min -= min / 2;
		if (flags & ALLOC_NON_BLOCK)
			min -= min / 4; /* GFP_ATOMIC: more of the min reserve */
	}
	return min;
}

/*
 * The orders whose free lists hold a block a request may take: the three
 * list types, the high-atomic reserve's and CMA's when it may use them.
 * Read whole, so that the per-CPU lists may ask without the zone lock.
 */
static inline uint64_t zone_usable_orders(const struct pa_zone *z, bool highatomic, bool cma)
{
	uint64_t usable = __atomic_load_n(&z->nonempty[PA_MT_UNMOVABLE], __ATOMIC_RELAXED) |
	                  __atomic_load_n(&z->nonempty[PA_MT_MOVABLE], __ATOMIC_RELAXED) |
	                  __atomic_load_n(&z->nonempty[PA_MT_RECLAIMABLE], __ATOMIC_RELAXED);
	if (highatomic)
		usable |= __atomic_load_n(&z->nonempty[PA_MT_HIGHATOMIC], __ATOMIC_RELAXED);
	if (cma)
		usable |= __atomic_load_n(&z->nonempty[PA_MT_CMA], __ATOMIC_RELAXED);
	return usable;
}

/*
 * The second half of zone_watermark_ok() for a request of the first try
 * (no reserve): a free block of the order or larger it may take. Linux asks
 * it before a high-order request takes a block from a CPU's lists too, so
 * that blocks held there do not hide that the zone has none left.
 */
static inline bool zone_has_free_block(const struct pa_zone *z, unsigned order, pa_gfp_t gfp)
{
	return (zone_usable_orders(z, false, gfp & PA_GFP_MOVABLE) >> order) != 0;
}

/*
 * Has the zone any memory? Every node has a ZONE_MOVABLE from boot, empty
 * until movablecore= or online_movable gives it some, so that zonelists
 * never change; walks skip an empty zone as Linux leaves it out of them.
 */
static inline bool zone_populated(const struct pa_zone *z)
{
	return atomic_load_explicit(&z->populated, memory_order_relaxed);
}

/* present_pages where the zone lock is not held (kcompactd's score): hotplug changes it. */
static inline uint64_t zone_present(const struct pa_zone *z)
{
	return __atomic_load_n(&z->present_pages, __ATOMIC_RELAXED);
}

/* Its writer, zone lock held. */
static inline void zone_set_present(struct pa_zone *z, uint64_t n)
{
	__atomic_store_n(&z->present_pages, n, __ATOMIC_RELAXED);
}

/*
 * May an allocation with these gfp flags use zone z (node aside)? Linux's
 * gfp zone modifiers, by address so that they mean the same in every
 * layout: ZONE_MOVABLE only for movable data and never for a DMA request;
 * PA_GFP_DMA32 only zones that end at or below 4 GiB, PA_GFP_DMA only
 * zones that end at or below 16 MiB.
 */
static inline bool zone_gfp_allows(const struct pa_zone *z, pa_gfp_t gfp)
{
	unsigned shift = z->pool->cfg.page_shift;
	if (unlikely(!zone_populated(z)))
		return false; /* no memory: an empty ZONE_MOVABLE before a block is onlined there */
	if (likely(!(gfp & (PA_GFP_DMA | PA_GFP_DMA32))))
		return z->type != PA_ZONE_MOVABLE || (gfp & PA_GFP_MOVABLE);
	if (z->type == PA_ZONE_MOVABLE)
		return false;
	pa_pfn_t end = __atomic_load_n(&z->end_pfn, __ATOMIC_RELAXED); /* hotplug moves it */
	if (gfp & PA_GFP_DMA)
		return end <= (PA_ZONE_DMA_BYTES >> shift);
	return end <= ((4ull << 30) >> shift);
}

/* Linux's gfp_zone(): the highest zone type a request may use. */
static inline enum pa_zone_type gfp_highest_zone(pa_gfp_t gfp)
{
	if (gfp & PA_GFP_DMA)
		return PA_ZONE_DMA;
	if (gfp & PA_GFP_DMA32)
		return PA_ZONE_DMA32;
	return (gfp & PA_GFP_MOVABLE) ? PA_ZONE_MOVABLE : PA_ZONE_NORMAL;
}

/* The zone that holds pfn, or NULL. */
static inline struct pa_zone *zone_of_pfn(const struct pa_pool *pool, pa_pfn_t pfn)
{
	if (unlikely(pfn >= pool->nr_frames))
		return NULL;
	uint8_t z = pool->pb_zone[pfn >> pool->cfg.pageblock_order];
	return z == 0xff ? NULL : &pool->zones[z];
}

/*
 * Is the pageblock of pfn zone z's? Zone spans may overlap (a memory block
 * onlined into another zone of its node, as Linux allows since 4.13), so a
 * walker of a span asks before it touches a frame, under z's lock: a
 * pageblock changes zone only under the locks of both zones.
 */
static inline bool pfn_in_zone(const struct pa_zone *z, pa_pfn_t pfn)
{
	const struct pa_pool *pool = z->pool;
	return __atomic_load_n(&pool->pb_zone[pfn >> pool->cfg.pageblock_order],
	                       __ATOMIC_RELAXED) == z->index;
}

/* Is every pageblock of [s, e) zone z's? */
static inline bool range_in_zone(const struct pa_zone *z, pa_pfn_t s, pa_pfn_t e)
{
	uint64_t pb = 1ull << z->pool->cfg.pageblock_order;
	for (pa_pfn_t p = s & ~(pb - 1); p < e; p += pb)
		if (!pfn_in_zone(z, p))
			return false;
	return true;
}

#endif /* PA_ZONE_H */
