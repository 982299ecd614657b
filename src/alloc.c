/* SPDX-License-Identifier: MIT */
/*
 * The allocation and free entry points.
 *
 * alloc: the calling CPU's list while the zone is above its low watermark
 * (pages on the lists are not free memory of the zone), else
 * gfp -> (zonelist, migratetype, flags) -> per allowed zone: take the
 * zone lock, check the watermark for the order, take the smallest block of the
 * type, else fall back by the pageblock policy -> mark the head -> zero
 * outside the lock. The slow path retries at the min watermark (half of it
 * for PA_GFP_HIGH), then gives back the HIGHATOMIC reserve, then fails with a
 * counted and (unless NOWARN) reported failure.
 *
 * free: check the head under the zone lock (a bad free is reported, counted
 * and refused, nothing changes), then merge into the buddy lists.
 */
#include "alloc.h"

#include "platform/platform.h"
#include "buddy.h"
#include "compaction.h"
#include "device.h"
#include "linux.h"
#include "memmap.h"
#include "migrate.h"
#include "pageblock.h"
#include "pcp.h"
#include "superblock.h"
#include "zone.h"

/* One allocation request, decoded once from the gfp flags. */
struct alloc_ctx {
	struct pa_pool *pool;
	pa_gfp_t gfp;
	unsigned order;
	unsigned mt;
	unsigned flags;
	enum pa_zone_type highest;  /* the highest zone type it may use: picks the lowmem reserve */
	const struct pa_node *node; /* preferred node: the calling CPU's */
};

static const struct pa_node *local_node(struct pa_pool *pool)
{
	if (pool->nr_nodes == 1)
		return &pool->nodes[0]; /* no need to ask the platform for the CPU */
	unsigned cpu = pool_cpu(pool);
	return &pool->nodes[(uint64_t)cpu * pool->nr_nodes / pool->cfg.nr_cpus];
}

static unsigned alloc_nofragment(const struct alloc_ctx *ac);

/*
 * A request's first flags depend on its movable bit and, for
 * ALLOC_NOFRAGMENT, on which zones have memory and on its zone modifiers and
 * node limit: the node keeps them for a request without a modifier or limit
 * (alloc_update_node_flags()), so that the common case reads one word.
 */
static inline __attribute__((always_inline)) void
alloc_ctx_init(struct alloc_ctx *ac, struct pa_pool *pool, pa_gfp_t gfp, unsigned order)
{
	ac->pool = pool;
	ac->gfp = gfp;
	ac->order = order;
	ac->mt = gfp_migratetype(gfp);
	ac->highest = gfp_highest_zone(gfp);
	ac->node = local_node(pool);
	ac->flags = __atomic_load_n(&ac->node->alloc_flags[(gfp & PA_GFP_MOVABLE) != 0],
	                            __ATOMIC_RELAXED);
	if (unlikely(gfp & (PA_GFP_DMA | PA_GFP_DMA32 | PA_GFP_THISNODE)))
		ac->flags = (ac->flags & ~ALLOC_NOFRAGMENT) | alloc_nofragment(ac);
	ac->flags |= superblock_alloc_flags(pool, ac->mt, gfp);
}

static inline bool zone_allowed(const struct alloc_ctx *ac, const struct pa_zone *z)
{
	return zone_gfp_allows(z, ac->gfp) &&
	       (!(ac->gfp & PA_GFP_THISNODE) || z->node == ac->node->id);
}

/*
 * Linux's alloc_flags_nofragment(): a request whose preferred zone is
 * ZONE_NORMAL first tries the zones below before it falls back into another
 * type's pageblock of Normal (ALLOC_NOFRAGMENT); with Linux's defrag_mode
 * (6.15, linux_defrag_mode=1) every request does.
 */
static unsigned alloc_nofragment(const struct alloc_ctx *ac)
{
	if (ac->pool->cfg.linux_defrag_mode)
		return ALLOC_NOFRAGMENT;
	/* Only a node with memory in Normal, DMA32 below it and a request that may use Normal. */
	const struct pa_zone *normal = ac->node->zones[PA_ZONE_NORMAL];
	if (ac->highest < PA_ZONE_NORMAL || !normal ||
	    !atomic_load_explicit(&normal->populated, memory_order_relaxed) ||
	    !zone_type_in_layout(ac->pool, PA_ZONE_DMA32))
		return 0;
	for (unsigned i = 0; i < ac->node->nr_zonelist; i++) {
		const struct pa_zone *z = ac->node->zonelist[i];
		if (zone_allowed(ac, z) &&
		    atomic_load_explicit(&z->populated, memory_order_relaxed))
			return z->type == PA_ZONE_NORMAL &&
			                       zone_type_in_layout(ac->pool, PA_ZONE_DMA32) ?
			               ALLOC_NOFRAGMENT :
			               0;
	}
	return 0;
}

/* At boot and whenever a zone gains its first or loses its last frame (zone_update_cpu_zones()). */
void alloc_update_node_flags(struct pa_pool *pool)
{
	for (unsigned i = 0; i < pool->nr_nodes; i++) {
		for (unsigned m = 0; m < 2; m++) {
			struct alloc_ctx ac = { .pool = pool, .gfp = m ? PA_GFP_MOVABLE : 0 };
			ac.highest = gfp_highest_zone(ac.gfp);
			ac.node = &pool->nodes[i];
			unsigned flags =
			        ALLOC_WMARK_LOW | (m ? ALLOC_CMA : 0) | alloc_nofragment(&ac);
			__atomic_store_n(&pool->nodes[i].alloc_flags[m], flags, __ATOMIC_RELAXED);
		}
	}
}

/*
 * Linux's zone_statistics() for an allocation that left its node: numa_miss
 * on the zone that served it, numa_foreign on the zone it preferred (the
 * first its zonelist allows; not locked here, so an atomic).
 */
static __attribute__((noinline)) void count_numa_miss(struct pa_zone *z, const struct alloc_ctx *ac)
{
	z->stat[PA_ZS_NUMA_MISS]++;
	for (unsigned i = 0; i < ac->node->nr_zonelist; i++) {
		struct pa_zone *pref = ac->node->zonelist[i];
		if (zone_allowed(ac, pref)) {
			atomic_fetch_add_explicit(&pref->numa_foreign, 1, memory_order_relaxed);
			return;
		}
	}
}

/* Turn a block taken off the lists into an allocated block, and count it. Zone lock held. */
static inline __attribute__((always_inline)) struct pa_page *
prep_block(struct pa_zone *z, pa_pfn_t pfn, const struct alloc_ctx *ac)
{
	struct pa_page *p = pfn_page(z->pool, pfn);
	page_prep_alloc(p, ac->order, ac->mt, ac->gfp);
	z->stat[PA_ZS_PGALLOC] += 1ull << ac->order;
	z->stat[PA_ZS_ALLOC_SUCCESS]++;
	z->alloc_order[ac->order]++;
	if (unlikely(z->node != ac->node->id))
		count_numa_miss(z, ac);
	return p;
}

/*
 * Zero a PA_GFP_ZERO block's frames that were not known zero: the zone path
 * leaves how many were at its start in the cookie until here (zonelist_walk),
 * the per-CPU lists none.
 */
static void zero_block(const struct alloc_ctx *ac, struct pa_page *p)
{
	struct pa_clean clean = { p->private & UINT32_MAX, p->private >> 32 };
	p->private = 0;
	if (ac->gfp & PA_GFP_ZERO)
		device_zero_dirty(ac->pool, p, ac->order, clean);
}

/* What zero_block() needs to know, kept in the cookie meanwhile (32 bits an end: the less known). */
static inline uint64_t clean_stash(struct pa_clean c)
{
	uint64_t pre = c.pre > UINT32_MAX ? UINT32_MAX : c.pre;
	uint64_t suf = c.suf > UINT32_MAX ? UINT32_MAX : c.suf;
	return pre | suf << 32;
}

/*
 * zone_watermark_ok() for an order-0 request well above the mark: what it may
 * not use (the atomic reserve, CMA unless it may borrow) is at most all of
 * it, so one compare of the free count decides without counting them.
 */
static inline bool watermark_ok(const struct pa_zone *z, unsigned order, uint64_t mark,
                                unsigned flags)
{
	uint64_t unusable = z->nr_reserved_highatomic + ((flags & ALLOC_CMA) ? 0 : z->cma_pages);
	if (likely(order == 0) && zone_nr_free(z) > mark + unusable)
		return true;
	return zone_watermark_ok(z, order, mark, flags);
}

/*
 * Linux lets an order-0 request that may dip below the min watermark ignore
 * the watermark boost there: the min watermark is where kswapd, not the
 * boost, is to do the work. Out of line, so that a request the watermark
 * passes pays nothing for it.
 */
static __attribute__((noinline)) bool boost_exempt(const struct pa_zone *z, unsigned order,
                                                   uint64_t mark, unsigned flags)
{
	return z->watermark_boost && order == 0 && (flags & ALLOC_MIN_RESERVE) &&
	       (flags & ALLOC_WMARK_MASK) == ALLOC_WMARK_MIN &&
	       zone_watermark_ok(z, 0, mark - z->watermark_boost, flags);
}

/*
 * A block from the zone if the watermark allows; while deferred init is not
 * done, a shortfall first initialises more of the zone, a chunk at a time
 * (Linux's deferred_grow_zone). Zone lock held.
 */
static inline __attribute__((always_inline)) pa_pfn_t
zone_rmqueue(struct pa_zone *z, const struct alloc_ctx *ac, uint64_t mark, unsigned flags)
{
	for (;;) {
		if (watermark_ok(z, ac->order, mark, flags) ||
		    unlikely(boost_exempt(z, ac->order, mark, flags))) {
			pa_pfn_t pfn = pageblock_rmqueue(z, ac->order, ac->mt, flags);
			if (pfn != PA_NIL)
				return pfn;
		}
		if (likely(!zone_grow_on_demand(z)))
			return PA_NIL;
	}
}

/*
 * The watermark check before a zone's list serves (Linux's
 * zone_watermark_fast()), without the zone lock: the free count above the
 * mark and all the request may not use (the whole atomic reserve, CMA
 * unless it may borrow). Short of that the zone path decides under its lock
 * and serves from the buddy: only an atomic reserve or CMA in the zone makes
 * that differ from Linux, which would still use the list.
 */
static bool zone_pcp_watermark(const struct pa_zone *z, const struct alloc_ctx *ac, unsigned flags,
                               unsigned wmark)
{
	unsigned order = ac->order;
	uint64_t mark = __atomic_load_n(&z->wmark[wmark], __ATOMIC_RELAXED) +
	                __atomic_load_n(&z->lowmem_reserve[ac->highest], __ATOMIC_RELAXED);
	int64_t unusable = (int64_t)atomic_load_explicit(&z->unusable[(flags & ALLOC_CMA) != 0],
	                                                 memory_order_relaxed);
	return (int64_t)zone_nr_free(z) - ((1ll << order) - 1) >
	               zone_flags_mark(mark, flags) + unusable &&
	       (order == 0 ||
	        zone_usable_orders(z, flags & ALLOC_HIGHATOMIC, flags & ALLOC_CMA) >> order);
}

/*
 * Linux 6.7's ZONE_BELOW_HIGH as get_page_from_freelist() sets it: each zone
 * a request visits is checked against its high watermark before its own
 * (the lowmem reserve for the request's zone type and what it may not use
 * included, as there), and marked when under it. The fast path's marks send
 * the first request that finds it so this way (zone_set_pcp_mark()).
 */
static inline void zone_note_high(const struct alloc_ctx *ac, struct pa_zone *z, unsigned flags)
{
	if (atomic_load_explicit(&z->below_high, memory_order_relaxed) || pcp_rules_61(ac->pool) ||
	    zone_pcp_watermark(z, ac, flags, PA_WMARK_HIGH))
		return;
	zone_set_below_high(z, true);
}

/*
 * Linux's rmqueue(): in a zone that passes this try's watermark (the slow
 * path's min too), an order the per-CPU lists hold comes from this CPU's
 * list of that zone, refilled by a batch when dry; the buddy only if that
 * list could not serve (its lock busy, the zone without a block for it).
 */
static inline struct pa_page *zone_pcp_alloc(const struct alloc_ctx *ac, struct pa_zone *z,
                                             unsigned flags)
{
	struct pa_pool *pool = ac->pool;
	if (!pcp_order_enabled(pool, ac->order) ||
	    !zone_pcp_watermark(z, ac, flags, flags & ALLOC_WMARK_MASK))
		return NULL;
	unsigned cpu = pool_cpu(pool);
	struct pa_pcp *pcp = z->pcp[cpu];
	if (!pcp_trylock(pool, pcp, cpu)) {
		pcp_busy(pcp, SITE_PCP_ALLOC);
		return NULL;
	}
	struct pa_page *p = pcp_take(pool, pcp, ac->order, ac->mt, ac->gfp);
	if (p) {
		pa_spin_unlock(&pcp->lock);
		return p;
	}
	return pcp_refill_unlock(z, pcp, ac->order, ac->mt, ac->gfp, flags & ALLOC_NOFRAGMENT);
}

/*
 * Try each allowed zone of the preferred node's zonelist at the given
 * watermark. zero: the request has PA_GFP_ZERO (a constant where it can be).
 */
static inline __attribute__((always_inline)) struct pa_page *
zonelist_walk(const struct alloc_ctx *ac, unsigned flags, bool zero)
{
	const struct pa_node *n = ac->node;
	for (unsigned i = 0; i < n->nr_zonelist; i++) {
		struct pa_zone *z = n->zonelist[i];
		if (!zone_allowed(ac, z))
			continue;
		zone_note_high(ac, z, flags);
		struct pa_page *p = zone_pcp_alloc(ac, z, flags);
		if (p) {
			/* Linux reserves for a high-order atomic request wherever its block came from. */
			if (unlikely((flags & ALLOC_HIGHATOMIC) && ac->order > 0)) {
				pa_lock(&z->lock, SITE_ALLOC);
				pageblock_reserve_highatomic(z, pa_page_to_pfn(ac->pool, p),
				                             ac->order);
				pa_unlock(&z->lock);
			}
			return p;
		}
		pa_lock(&z->lock, SITE_ALLOC);
		uint64_t mark = z->wmark[flags & ALLOC_WMARK_MASK] + z->lowmem_reserve[ac->highest];
		pa_pfn_t pfn = zone_rmqueue(z, ac, mark, flags);
		if (pfn != PA_NIL) {
			p = prep_block(z, pfn, ac);
			if (zero)
				p->private =
				        clean_stash(buddy_taken_clean(z)); /* for zero_block() */
			if ((flags & ALLOC_HIGHATOMIC) && ac->order > 0)
				pageblock_reserve_highatomic(z, pfn, ac->order);
		}
		if (unlikely(pa_unlock_slow(&z->lock)))
			zone_boost_check(z);
		if (p)
			return p;
	}
	return NULL;
}

static __attribute__((noinline)) struct pa_page *get_page_from_freelist(const struct alloc_ctx *ac,
                                                                        unsigned flags)
{
	return zonelist_walk(ac, flags, ac->gfp & PA_GFP_ZERO);
}

/* Give back HIGHATOMIC reserves in the allowed zones before failing (no reclaim here). */
static bool unreserve_highatomic(const struct alloc_ctx *ac)
{
	bool any = false;
	for (unsigned i = 0; i < ac->node->nr_zonelist; i++) {
		struct pa_zone *z = ac->node->zonelist[i];
		if (!zone_allowed(ac, z))
			continue;
		pa_lock(&z->lock, SITE_ALLOC);
		while (z->nr_reserved_highatomic && pageblock_unreserve_highatomic(z, ac->mt))
			any = true;
		pa_unlock(&z->lock);
	}
	return any;
}

static void alloc_failed(const struct alloc_ctx *ac)
{
	struct pa_pool *pool = ac->pool;
	pool_stat_inc(pool, PA_PS_ALLOC_FAIL);
	if (ac->order <= pool->max_order_boot)
		atomic_fetch_add_explicit(&pool->alloc_fail_order[ac->order], 1,
		                          memory_order_relaxed);
	if (!(ac->gfp & PA_GFP_NOWARN))
		platform_report(pool, "allocation failure: order:%u, mode:%#x, migratetype:%s",
		                ac->order, ac->gfp, pa_migratetype_names[ac->mt]);
}

/*
 * Direct compaction, as Linux escalates it: async, then sync-light, then
 * (unless the caller asked for no retries) sync, no further than
 * compaction/direct_priority, nor than sync-light for a costly order
 * (MIN_COMPACT_COSTLY_PRIORITY, unless compaction/direct_costly_sync; the
 * orders above the pageblock, which Linux has not, go on); after each, try
 * again. Linux compacts harder
 * only on a retry, after a round of direct reclaim that, where it did not
 * help, drained every CPU's lists (drain_all_pages()): `drain` stands for
 * that round.
 */
static struct pa_page *alloc_compact(const struct alloc_ctx *ac, unsigned flags, unsigned order,
                                     bool drain, enum compact_result *result)
{
	static const enum compact_mode modes[] = { COMPACT_ASYNC, COMPACT_SYNC_LIGHT,
		                                   COMPACT_SYNC };
	struct pa_pool *pool = ac->pool;
	unsigned n = (ac->gfp & PA_GFP_NORETRY) ? 1 : 3;
	unsigned most = 3 - atomic_load_explicit(&pool->direct_priority, memory_order_relaxed);
	if (order > PA_COSTLY_ORDER && order <= pool->cfg.pageblock_order && most > 2 &&
	    !atomic_load_explicit(&pool->direct_costly_sync, memory_order_relaxed))
		most = 2;
	struct pa_page *p;
	*result = COMPACT_R_SKIPPED;
	for (unsigned i = 0; i < n && i < most; i++) {
		if (modes[i] != COMPACT_ASYNC && drain && pcp_drain_all_if_any(pool) &&
		    (p = get_page_from_freelist(ac, flags)))
			return p;
		*result = compaction_direct(pool, ac->node, order, ac->gfp, modes[i], flags,
		                            ac->highest);
		if (*result == COMPACT_R_SUCCESS && (p = get_page_from_freelist(ac, flags)))
			return p;
	}
	return NULL;
}

/*
 * Linux's costly __GFP_NORETRY request (a THP, a large page-cache folio)
 * gives up after its first compaction, with no reclaim round (no drain, no
 * reserve given back), when it is a THP's first try on its own node
 * (__GFP_THISNODE too), or until 7.0 when that compaction had nothing to
 * work with (every zone skipped or deferred): reclaim is costly there and
 * unlikely to free a whole block.
 */
static bool noretry_gives_up(const struct alloc_ctx *ac, enum compact_result result)
{
	if (ac->order <= PA_COSTLY_ORDER || !(ac->gfp & PA_GFP_NORETRY))
		return false;
	return (ac->gfp & PA_GFP_THISNODE) ||
	       (result == COMPACT_R_SKIPPED && !linux_rule(ac->pool, LR_NORETRY_RECLAIMS));
}

/*
 * Linux's gfp_to_alloc_flags(): the min watermark; PA_GFP_HIGH may use half
 * of it, and a request that may not reclaim (PA_GFP_NOCOMPACT) a quarter
 * more unless it says PA_GFP_NOMEMALLOC; a high-order request with both may
 * use, and reserve, the high-atomic pageblocks. ALLOC_NOFRAGMENT stays only under Linux's defrag_mode.
 */
static unsigned slowpath_flags(const struct alloc_ctx *ac)
{
	unsigned flags = (ac->flags & ~(ALLOC_WMARK_MASK | ALLOC_NOFRAGMENT)) | ALLOC_WMARK_MIN;
	if (ac->pool->cfg.linux_defrag_mode)
		flags |= ALLOC_NOFRAGMENT;
	if (ac->gfp & PA_GFP_HIGH)
		flags |= ALLOC_MIN_RESERVE;
	if ((ac->gfp & (PA_GFP_NOCOMPACT | PA_GFP_NOMEMALLOC)) == PA_GFP_NOCOMPACT) {
		flags |= ALLOC_NON_BLOCK;
		if (ac->order > 0 && (flags & ALLOC_MIN_RESERVE))
			flags |= ALLOC_HIGHATOMIC;
	}
	return flags;
}

/*
 * The slow path (direct_compaction=0: without its compaction and drains,
 * which the caller runs where it wants them): the min watermark; then, for a
 * high order, wake the node's
 * background compactor and compact directly; then what Linux's reclaim path
 * does that applies here: give back the HIGHATOMIC reserve and, for a request
 * that may reclaim (not PA_GFP_NOCOMPACT, Linux's no direct reclaim), drain
 * every CPU's lists (drain_all_pages, unless compaction/direct_drain=0),
 * where the frames may merge into the block.
 */
static struct pa_page *alloc_slowpath(const struct alloc_ctx *ac)
{
	unsigned flags = slowpath_flags(ac);
	bool direct = atomic_load_explicit(&ac->pool->direct_compaction, memory_order_relaxed);
	bool reclaims = !(ac->gfp & PA_GFP_NOCOMPACT);
	bool drain = reclaims && direct &&
	             atomic_load_explicit(&ac->pool->direct_drain, memory_order_relaxed);
	struct pa_page *p = get_page_from_freelist(ac, flags);
	/*
	 * Linux's defrag_mode: a request that may not fall back below a
	 * pageblock, and that reclaim would not help (not movable), compacts
	 * for a whole pageblock to claim.
	 */
	unsigned pb = ac->pool->cfg.pageblock_order, corder = ac->order;
	if ((flags & ALLOC_NOFRAGMENT) && ac->mt != PA_MT_MOVABLE && corder < pb)
		corder = pb;
	if (!p && corder > 0 && direct) {
		enum compact_result result;
		compaction_wake(ac->pool, ac->node->id, corder);
		p = alloc_compact(ac, flags, corder, drain, &result);
		if (!p && reclaims && noretry_gives_up(ac, result)) {
			alloc_failed(ac);
			return NULL;
		}
	}
	/* Linux gives back the reserve and drains only after direct reclaim failed. */
	if (!p && reclaims && !(flags & ALLOC_HIGHATOMIC) && unreserve_highatomic(ac))
		p = get_page_from_freelist(ac, flags);
	if (!p && drain && pcp_drain_all_if_any(ac->pool))
		p = get_page_from_freelist(ac, flags);
	/* defrag_mode: fall back below a pageblock only rather than fail. */
	if (!p && (flags & ALLOC_NOFRAGMENT))
		p = get_page_from_freelist(ac, flags & ~ALLOC_NOFRAGMENT);
	if (!p)
		alloc_failed(ac);
	return p;
}

/*
 * defrag_mode: the lists could not serve the request without polluting a
 * clean region. Empty a pageblock inside a polluted region of an allowed
 * zone and try again; then give up the restriction: the request is served
 * as without defrag_mode (the fallback pollutes a clean region) rather
 * than failed.
 */
static struct pa_page *alloc_defrag(struct alloc_ctx *ac)
{
	struct pa_page *p = NULL;
	for (unsigned i = 0; i < ac->node->nr_zonelist && !p; i++) {
		struct pa_zone *z = ac->node->zonelist[i];
		if (zone_allowed(ac, z) && superblock_defrag(z, ac->mt))
			p = get_page_from_freelist(ac, ac->flags);
	}
	ac->flags &= ~ALLOC_NO_POLLUTE;
	return p ? p : get_page_from_freelist(ac, ac->flags);
}

/* Flags that need the full path: node and zone limits, reserves. */
#define GFP_SLOW (PA_GFP_HIGH | PA_GFP_THISNODE | PA_GFP_DMA32 | PA_GFP_DMA)

/*
 * Linux's zone_watermark_fast() before the lists: frames on a CPU's lists are
 * not free memory of the zone, so the lists serve only while the zone's free
 * count, once the request is taken, stays above the low watermark and what
 * the request may not use (zone_set_pcp_mark()), and a request above order 0
 * only while the buddy has a block it could take. One read of the free count
 * at order 0; below the mark the zone path checks exactly under the lock.
 */
static inline bool pcp_watermark_fast(const struct pa_zone *z, unsigned order, pa_gfp_t gfp)
{
	uint64_t mark = atomic_load_explicit(
	        &z->pcp_mark[gfp & (PA_GFP_MOVABLE | PA_GFP_RECLAIMABLE)], memory_order_relaxed);
	/* free - mark >= 2^order without a subtraction that could wrap: one compare at order 0. */
	return zone_nr_free(z) > mark + ((1ull << order) - 1) &&
	       (order == 0 || zone_has_free_block(z, order, gfp));
}

/* Unknown gfp bits: refused and reported, as any misuse of the API is. */
static __attribute__((noinline, cold)) struct pa_page *alloc_refused(struct pa_pool *pool,
                                                                     pa_gfp_t gfp, const char *fn)
{
	platform_report(pool, "%s: unknown gfp bits %#x (known: %#x); refused", fn,
	                gfp & ~PA_GFP_ALL_FLAGS, PA_GFP_ALL_FLAGS);
	return NULL;
}

/*
 * Everything but a per-CPU list hit: the zonelist walk, the slow path,
 * failure. zero: gfp has PA_GFP_ZERO (a constant, so that a request without
 * it tests for it once, in alloc_zones()).
 */
static inline __attribute__((always_inline)) struct pa_page *
alloc_zones_body(struct pa_pool *pool, pa_gfp_t gfp, unsigned order, bool zero)
{
	struct alloc_ctx ac;
	alloc_ctx_init(&ac, pool, gfp, order);
	if (unlikely(order > pool_max_order(pool))) {
		alloc_failed(&ac);
		return NULL;
	}
	struct pa_page *p = NULL;
	/* Memory known zero first: it need not be written again. */
	if (zero && device_pool_has_clean(pool) && (p = device_alloc_zeroed(pool, gfp, order)))
		return p;
	/*
	 * The zonelist walk takes an order the lists hold from the CPU's list
	 * of each zone it tries (requests the fast path skipped: to be zeroed,
	 * an order it leaves out, PA_GFP_THISNODE, PA_GFP_HIGH, a zone modifier,
	 * as Linux's lists serve them too).
	 */
	p = zonelist_walk(&ac, ac.flags, zero); /* inline: the first try is the common case */
	/* Linux's get_page_from_freelist(): no zone served without a fallback; now with one. */
	if (unlikely(!p) && (ac.flags & ALLOC_NOFRAGMENT) && !pool->cfg.linux_defrag_mode) {
		ac.flags &= ~ALLOC_NOFRAGMENT;
		p = zonelist_walk(&ac, ac.flags, zero);
	}
	if (unlikely(!p) && (ac.flags & ALLOC_NO_POLLUTE))
		p = alloc_defrag(&ac);
	if (unlikely(!p))
		p = alloc_slowpath(&ac);
	if (zero && p)
		zero_block(&ac, p);
	return p;
}

/* A zeroing request, or one with unknown gfp bits (refused). */
static __attribute__((noinline)) struct pa_page *alloc_zones_zero(struct pa_pool *pool,
                                                                  pa_gfp_t gfp, unsigned order)
{
	if (unlikely(gfp & ~PA_GFP_ALL_FLAGS))
		return alloc_refused(pool, gfp, "pa_alloc_pages");
	return alloc_zones_body(pool, gfp, order, true);
}

static __attribute__((noinline)) struct pa_page *alloc_zones(struct pa_pool *pool, pa_gfp_t gfp,
                                                             unsigned order)
{
	if (unlikely(gfp & (PA_GFP_ZERO | ~PA_GFP_ALL_FLAGS)))
		return alloc_zones_zero(pool, gfp, order);
	return alloc_zones_body(pool, gfp, order, false);
}

/*
 * The owner's list lock was busy (a drain, or a thread sharing the id): the
 * zone path, with the CPU asked again; its walk counts the lock busy if it
 * still is (zone_pcp_alloc()).
 */
static __attribute__((noinline)) struct pa_page *alloc_busy(struct pa_pool *pool, pa_gfp_t gfp,
                                                            unsigned order)
{
	platform_cpu_forget();
	return alloc_zones(pool, gfp, order);
}

/* The zone is near its watermark: the zone path decides, under the zone lock. */
static __attribute__((noinline)) struct pa_page *alloc_below_mark(struct pa_pcp *pcp, pa_gfp_t gfp,
                                                                  unsigned order)
{
	pa_spin_unlock(&pcp->lock);
	return alloc_zones(pcp->zone->pool, gfp, order);
}

/*
 * The list was dry: refill it (not if the order was switched off since the
 * gate: pcp_refill_unlock() looks); the zone path if the zone has nothing
 * for it. Both type bits found the always empty list (struct pcp_order):
 * the movable one serves them, as gfp_migratetype() says.
 */
static __attribute__((noinline)) struct pa_page *alloc_refill(struct pa_zone *z, struct pa_pcp *pcp,
                                                              pa_gfp_t gfp, unsigned order)
{
	unsigned mt = gfp_migratetype(gfp);
	struct pa_page *p = NULL;
	if (mt != (gfp & (PA_GFP_MOVABLE | PA_GFP_RECLAIMABLE)) &&
	    (p = pcp_take(z->pool, pcp, order, mt, gfp))) {
		pa_spin_unlock(&pcp->lock);
		return p;
	}
	/* The preferred zone's list: the request's first flags say whether it may fall back. */
	unsigned nofrag = __atomic_load_n(&z->pool->nodes[z->node].alloc_flags[mt == PA_MT_MOVABLE],
	                                  __ATOMIC_RELAXED) &
	                  ALLOC_NOFRAGMENT;
	p = pcp_refill_unlock(z, pcp, order, mt, gfp, nofrag);
	zone_boost_check(z);
	return p ? p : alloc_zones(z->pool, gfp, order);
}

/*
 * The fast path's body on a known CPU, straight through with every way out
 * a tail call, so that it needs no stack frame. The watermark is read under
 * the list lock, where the CPU id is no longer needed: fewer values live at
 * once.
 */
static inline __attribute__((always_inline)) struct pa_page *
alloc_on_cpu(struct pa_pool *pool, pa_gfp_t gfp, unsigned order, unsigned cpu, bool comp)
{
	size_t bits = gfp & (PA_GFP_MOVABLE | PA_GFP_RECLAIMABLE); /* the type, or 3: no list */
	struct pa_pcp *pcp =
	        __atomic_load_n(&pool->cpu_pcp[cpu_pcp_slot(cpu, gfp)], __ATOMIC_RELAXED);
	if (unlikely(!pcp_trylock(pool, pcp, cpu)))
		return alloc_busy(pool, gfp, order);
	struct pa_zone *z = pcp->zone;
	if (unlikely(!pcp_watermark_fast(z, order, gfp)))
		return alloc_below_mark(pcp, gfp, order);
	struct pa_page *p = pcp_take(pool, pcp, order, bits, comp ? gfp : 0);
	if (unlikely(!p))
		return alloc_refill(z, pcp, gfp, order);
	pa_spin_unlock(&pcp->lock);
	return p;
}

/* The same where finding the CPU takes a call (a platform hook, an id not known yet). */
static __attribute__((noinline)) struct pa_page *alloc_cpu_slow(struct pa_pool *pool, pa_gfp_t gfp,
                                                                unsigned order)
{
	return alloc_on_cpu(pool, gfp, order, pool_cpu(pool), true);
}

/*
 * Once the flags allow the lists: the CPU, without a call where the thread
 * pointer has it. comp: gfp may hold PA_GFP_COMP (a constant).
 */
static inline __attribute__((always_inline)) struct pa_page *
alloc_cpu(struct pa_pool *pool, pa_gfp_t gfp, unsigned order, bool comp)
{
	unsigned cpu = pool_cpu_nocall(pool);
	if (unlikely(cpu >= pool->cfg.nr_cpus))
		return alloc_cpu_slow(pool, gfp, order);
	return alloc_on_cpu(pool, gfp, order, cpu, comp);
}

/*
 * The fast path: a NULL pool costs one test; unknown gfp bits ride on the
 * test of the flags that need the full path, which refuses them. Orders
 * below the pageblock order are never above max_order, which may change
 * meanwhile; larger ones go through alloc_zones(), which looks at both.
 * An order off the lists goes there too, never through their locks: with
 * four threads on two CPUs the detour doubled the zone lock's contention
 * in page_fault1 (waiters that spun on it slowed its holder).
 */
static inline __attribute__((always_inline)) struct pa_page *
alloc_fast(struct pa_pool *pool, pa_gfp_t gfp, unsigned order)
{
	if (unlikely(!pcp_gate_open(&pool->pcp_alloc_gate, order) ||
	             (gfp & (GFP_SLOW | PA_GFP_ZERO | ~PA_GFP_ALL_FLAGS))))
		return alloc_zones(pool, gfp, order);
	return alloc_cpu(pool, gfp, order, true);
}

/* Any order and flags: the above, apart, so that its registers cost order 0 no stack frame. */
static __attribute__((noinline)) struct pa_page *alloc_fast_any(struct pa_pool *pool, pa_gfp_t gfp,
                                                                unsigned order)
{
	return alloc_fast(pool, gfp, order);
}

/*
 * Order 0 on its own: with the order a constant, the shifts and indexing
 * fold away; PA_GFP_COMP (a one-frame folio) joins the flags that leave it,
 * for alloc_fast_any(), so that the common case tests for it once, with the
 * others, and keeps no copy of gfp for it.
 */
struct pa_page *pa_alloc_pages(struct pa_pool *pool, pa_gfp_t gfp, unsigned int order)
{
	if (unlikely(!pool))
		return NULL;
	if (likely(order == 0) &&
	    !(gfp & (GFP_SLOW | PA_GFP_ZERO | PA_GFP_COMP | ~PA_GFP_ALL_FLAGS)) &&
	    likely(pcp_gate_open(&pool->pcp_alloc_gate, 0)))
		return alloc_cpu(pool, gfp, 0, false);
	return alloc_fast_any(pool, gfp, order);
}

/*
 * Fill as much as one zone gives under a single lock hold, then go one by one
 * through the full path (other zones, the slow path) for the rest.
 */
unsigned pa_alloc_pages_bulk(struct pa_pool *pool, pa_gfp_t gfp, unsigned int order, unsigned nr,
                             struct pa_page **out)
{
	struct alloc_ctx ac;
	unsigned got = 0;
	if (nr == 0 || !out)
		return 0;
	if (!pool)
		return 0;
	if (unlikely(gfp & ~PA_GFP_ALL_FLAGS))
		return alloc_refused(pool, gfp, __func__), 0;
	alloc_ctx_init(&ac, pool, gfp, order);
	if (order > pool_max_order(pool)) {
		alloc_failed(&ac);
		return 0;
	}
	for (unsigned i = 0; i < ac.node->nr_zonelist && got < nr; i++) {
		struct pa_zone *z = ac.node->zonelist[i];
		if (!zone_allowed(&ac, z))
			continue;
		pa_lock(&z->lock, SITE_ALLOC_BULK);
		uint64_t mark = z->wmark[PA_WMARK_LOW] + z->lowmem_reserve[ac.highest];
		while (got < nr) {
			pa_pfn_t pfn = zone_rmqueue(z, &ac, mark, ac.flags);
			if (pfn == PA_NIL)
				break;
			out[got++] = prep_block(z, pfn, &ac);
		}
		pa_unlock(&z->lock);
	}
	for (unsigned i = 0; i < got; i++)
		zero_block(&ac, out[i]);
	while (got < nr && (out[got] = pa_alloc_pages(pool, gfp | PA_GFP_NOWARN, order)))
		got++;
	return got;
}

/* ---------------------------------------------------------------------- */
/* Free                                                                    */
/* ---------------------------------------------------------------------- */

/* What the frame at pfn is, in words, for a bad-free report. Zone lock held. */
static void describe_frame(struct pa_pool *pool, pa_pfn_t pfn, unsigned order, char *buf,
                           size_t len)
{
	const struct pa_page *p = pfn_page(pool, pfn);
	if (!memmap_frame_present(pool, pfn)) {
		pa_snprintf(buf, len, "no memory behind the frame (a hole)");
		return;
	}
	switch (page_state(p)) {
	case PS_FREE:
		pa_snprintf(buf, len, "a free block of order %u (double free)", p->order);
		return;
	case PS_FREEING:
		pa_snprintf(buf, len, "a block being freed by another thread (double free)");
		return;
	case PS_PCP:
		pa_snprintf(buf, len, "a free block of order %u on a per-CPU list (double free)",
		            p->order);
		return;
	case PS_ISOLATED:
	case PS_MIGRATING:
		pa_snprintf(buf, len, "a block being moved by compaction (%s)",
		            (page_flags(p) & PF_FREE_PENDING) ? "already freed: double free" :
		                                                "wrong order");
		return;
	case PS_CAPTURED:
		pa_snprintf(buf, len, "a free block of order %u held by compaction (double free)",
		            p->order);
		return;
	case PS_ALLOC:
		if (page_flags(p) & PF_CMA)
			pa_snprintf(buf, len,
			            "a block of a CMA allocation (give it back with "
			            "pa_cma_release)");
		else
			pa_snprintf(buf, len, "an allocated block of order %u (wrong order %u)",
			            p->order, order);
		return;
	default:
		break;
	}
	for (unsigned o = 1; o <= pool_max_order(pool); o++) {
		pa_pfn_t head = pfn & ~((1ull << o) - 1);
		const struct pa_page *h = pfn_page(pool, head);
		unsigned st = page_state(h);
		if ((st == PS_ALLOC || st == PS_FREE || st == PS_PCP) && h->order >= o) {
			pa_snprintf(buf, len, "%s frame of the %s block of order %u at pfn %llu",
			            st == PS_ALLOC ? "a tail" : "a never-allocated",
			            st == PS_ALLOC ? "allocated" : "free", h->order,
			            (unsigned long long)head);
			return;
		}
	}
	pa_snprintf(buf, len, "a frame that heads no block");
}

void alloc_bad_free(struct pa_pool *pool, const char *what)
{
	pool_stat_inc(pool, PA_PS_BAD_PAGE);
	platform_report(pool, "bad page: %s; refused", what);
	if (pool->cfg.bad_page == PA_BAD_PAGE_PANIC)
		platform_panic();
}

static void bad_page(struct pa_pool *pool, pa_pfn_t pfn, unsigned order, const char *found)
{
	char what[320];
	if (pfn == PA_PFN_INVALID)
		pa_snprintf(
		        what, sizeof what,
		        "pa_free_pages(order %u): expected a frame descriptor of this pool; found %s",
		        order, found);
	else
		pa_snprintf(what, sizeof what,
		            "pfn %llu: pa_free_pages(order %u): expected the head of an allocated "
		            "block of order %u; found %s",
		            (unsigned long long)pfn, order, order, found);
	alloc_bad_free(pool, what);
}

void alloc_wipe_block(struct pa_zone *z, pa_pfn_t pfn, unsigned order)
{
	struct pa_pool *pool = z->pool;
	set_page_state(pfn_page(pool, pfn), PS_FREEING);
	pa_unlock(&z->lock);
	memset(pool->base + (pfn << pool->cfg.page_shift), 0,
	       (size_t)1 << (pool->cfg.page_shift + order));
	pa_lock(&z->lock, SITE_FREE);
}

/* The zone path of a free, and the place where bad frees are diagnosed. */
static __attribute__((noinline)) void free_zone(struct pa_pool *pool, struct pa_zone *z,
                                                pa_pfn_t pfn, unsigned order)
{
	pa_lock(&z->lock, SITE_FREE);
	struct pa_page *p = pfn_page(pool, pfn);
	unsigned st = page_state(p);
	if (unlikely((st == PS_ISOLATED || st == PS_MIGRATING) && p->order == order &&
	             !(page_flags(p) & PF_FREE_PENDING))) {
		migrate_free_pending(p); /* compaction is moving it: it frees the block when done */
		pa_unlock(&z->lock);
		return;
	}
	if (unlikely(st != PS_ALLOC || p->order != order || (page_flags(p) & PF_CMA))) {
		char found[160];
		describe_frame(pool, pfn, order, found, sizeof found);
		pa_unlock(&z->lock);
		bad_page(pool, pfn, order, found);
		return;
	}
	if (unlikely(pool->cfg.init_on_free) && pool->base) {
		alloc_wipe_block(z, pfn, order);
		device_free_block_clean(z, pfn, order, clean_full(1ull << order)); /* wiped: zero */
	} else {
		pageblock_free_block(z, pfn, order);
	}
	z->stat[PA_ZS_PGFREE] += 1ull << order;
	z->stat[PA_ZS_FREE_CALLS]++;
	pa_unlock(&z->lock);
}

/* A pointer that is no descriptor of the pool. */
static __attribute__((noinline, cold)) void free_outside(struct pa_pool *pool,
                                                         const struct pa_page *page, unsigned order)
{
	bad_page(pool, PA_PFN_INVALID, order, page ? "a pointer outside the frame map" : "NULL");
}

/* The owner's list lock was busy: the zone path frees the block. */
static __attribute__((noinline)) void free_busy(struct pa_pool *pool, struct pa_zone *z,
                                                struct pa_pcp *pcp, pa_pfn_t pfn, unsigned order)
{
	pcp_busy(pcp, SITE_PCP_FREE);
	free_zone(pool, z, pfn, order);
}

/*
 * Not plainly an allocated block in an ordinary pageblock: every check, list
 * lock held. An order off the lists (pcp_orders) goes to the zone at once:
 * pcp_free_locked() would give it back there too, after looking at more.
 */
static __attribute__((noinline)) void free_unusual(struct pa_pool *pool, struct pa_zone *z,
                                                   struct pa_pcp *pcp, pa_pfn_t pfn, unsigned order)
{
	if (!pcp_order_enabled(pool, order))
		pa_spin_unlock(&pcp->lock);
	else if (pcp_free_locked(z, pcp, pfn, order))
		return;
	free_zone(pool, z, pfn, order);
}

/*
 * An order of a pageblock or more, or any with init_on_free: the lists if
 * the order is on them, else the zone.
 */
static __attribute__((noinline)) void free_large(struct pa_pool *pool, struct pa_zone *z,
                                                 pa_pfn_t pfn, unsigned order)
{
	/* pcp_free() checks the order's switch again under the list lock, where a drain can't miss it. */
	if (order <= pool_max_order(pool) && pcp_order_enabled(pool, order)) {
		unsigned cpu = pool_cpu(pool);
		unsigned type = pcp_type(pageblock_mt(pool, pfn));
		if (!pcp_free_direct_guess(pool, z->pcp[cpu], order, type) &&
		    pcp_free(z, cpu, pfn, order))
			return;
	}
	free_zone(pool, z, pfn, order);
}

/*
 * The fast path's body on a known CPU, as alloc_on_cpu(): an allocated block
 * of its order in an ordinary pageblock (type below HIGHATOMIC, not
 * isolated) goes on the list after one compare of its descriptor word and
 * one compare-and-swap of it; any other goes through free_unusual(), which
 * checks all, and a bad free ends in free_zone(), which reports and refuses
 * it. The order's gate bit (on the lists, and below free_fast_below),
 * tested before the lock, is read again under it, where a drain can't miss
 * it: a switch clears it before draining. What does not change under the
 * lock is worked out before it.
 */
static inline __attribute__((always_inline)) void
free_on_cpu(struct pa_pool *pool, struct pa_pcp **lists, struct pa_page *p, pa_pfn_t pfn,
            const uint8_t *pb, unsigned order, unsigned cpu)
{
	struct pa_pcp *pcp = lists[cpu];
	if (unlikely(!pcp_trylock(pool, pcp, cpu))) {
		free_busy(pool, pcp->zone, pcp, pfn, order);
		return;
	}
	size_t type = pageblock_list_bits(pb); /* 64 bits: it indexes the list too */
	bool listed = order ? pcp_gate_bit(&pool->pcp_free_gate, order) && type < PA_NR_PCP_TYPES :
	                      (int64_t)type <= pcp->order0_type_max;
	uint64_t w = page_word(p);
	if (unlikely(!listed || !pcp_claimable(w, order) || !pcp_claim(p, w))) {
		free_unusual(pool, pcp->zone, pcp, pfn, order);
		return;
	}
	pcp_free_commit(pcp, p, pfn, order, type);
}

static __attribute__((noinline)) void free_cpu_slow(struct pa_pool *pool, struct pa_pcp **lists,
                                                    pa_pfn_t pfn, unsigned order)
{
	const uint8_t *pb = &pool->pb_bits[pfn >> pool->cfg.pageblock_order];
	free_on_cpu(pool, lists, pfn_page(pool, pfn), pfn, pb, order, pool_cpu(pool));
}

/* The free gate was shut: a large order, or one off the lists (the buddy path: no list lock). */
static __attribute__((noinline)) void free_gated(struct pa_pool *pool, struct pa_pcp **lists,
                                                 pa_pfn_t pfn, unsigned order)
{
	struct pa_zone *z = lists[0]->zone;
	if (order >= pool->free_fast_below)
		free_large(pool, z, pfn, order);
	else if (!pcp_order_enabled(pool, order))
		free_zone(pool, z, pfn, order);
	else /* switched on meanwhile: the gate follows its bit */
		free_cpu_slow(pool, lists, pfn, order);
}

/*
 * The fast path: a NULL pool costs one test, a pointer that is no
 * descriptor one compare, the gate (pcp_free_gate) one bit test: orders
 * from free_fast_below up (a pageblock, or all with init_on_free) go
 * through free_large(), a switched-off order straight to the zone
 * (free_gated()), never through the list locks (see alloc_fast()). Under
 * the lock order 0's switch is read again (order0_type_max), where a drain
 * can't miss it.
 */
static inline __attribute__((always_inline)) void free_fast(struct pa_pool *pool,
                                                            struct pa_page *page, unsigned order)
{
	pa_pfn_t pfn = page_to_pfn_checked(pool, page);
	if (unlikely(pfn == PA_PFN_INVALID)) {
		free_outside(pool, page, order);
		return;
	}
	uint64_t pb = pfn >> pool->cfg.pageblock_order;
	struct pa_pcp **lists =
	        pool->zone_pcp[__atomic_load_n(&pool->pb_zone[pb], __ATOMIC_RELAXED)];
	if (unlikely(!lists)) {
		free_outside(pool, page, order);
		return;
	}
	if (unlikely(!pcp_gate_open(&pool->pcp_free_gate, order))) {
		free_gated(pool, lists, pfn, order);
		return;
	}
	unsigned cpu = pool_cpu_nocall(pool);
	if (unlikely(cpu >= pool->cfg.nr_cpus)) {
		free_cpu_slow(pool, lists, pfn, order);
		return;
	}
	free_on_cpu(pool, lists, page, pfn, &pool->pb_bits[pb], order, cpu);
}

/* Orders above 0 (and a NULL pool), apart, as in pa_alloc_pages(). */
static __attribute__((noinline)) void free_fast_order(struct pa_pool *pool, struct pa_page *page,
                                                      unsigned order)
{
	if (pool)
		free_fast(pool, page, order);
}

void pa_free_pages(struct pa_pool *pool, struct pa_page *page, unsigned int order)
{
	if (likely(order == 0) && likely(pool))
		free_fast(pool, page, 0);
	else
		free_fast_order(pool, page, order);
}

/* ---------------------------------------------------------------------- */
/* Folios                                                                  */
/* ---------------------------------------------------------------------- */

struct pa_page *pa_folio_head(const struct pa_pool *pool, const struct pa_page *page)
{
	pa_pfn_t pfn = pa_page_to_pfn(pool, page);
	struct pa_zone *z = pfn != PA_PFN_INVALID ? zone_of_pfn(pool, pfn) : NULL;
	struct pa_page *res = NULL;
	if (!z)
		return NULL;
	pa_lock(&z->lock, SITE_ADMIN);
	pa_pfn_t head = memmap_block_head(pool, pfn);
	if (head != PA_NIL) {
		struct pa_page *h = pfn_page(pool, head);
		unsigned st = page_state(h);
		if ((st == PS_ALLOC || st == PS_ISOLATED) &&
		    (head == pfn || (page_flags(h) & PF_COMP)))
			res = h;
	}
	pa_unlock(&z->lock);
	return res;
}

int pa_folio_order(const struct pa_pool *pool, const struct pa_page *page)
{
	pa_pfn_t pfn = pa_page_to_pfn(pool, page);
	struct pa_zone *z = pfn != PA_PFN_INVALID ? zone_of_pfn(pool, pfn) : NULL;
	int order = -1;
	if (!z)
		return -1;
	pa_lock(&z->lock, SITE_ADMIN);
	unsigned st = page_state(page);
	if (st == PS_ALLOC || st == PS_ISOLATED || st == PS_MIGRATING)
		order = page->order;
	pa_unlock(&z->lock);
	return order;
}
