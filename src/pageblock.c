/* SPDX-License-Identifier: MIT */
/*
 * Pageblocks: a migratetype (and isolate and skip bits) per 2^pageblock_order
 * frames, and the policy of taking memory from another type's pageblocks
 * when a type runs out. The policy is Linux's of the pool's version
 * (linux=): from 6.15 on, try to claim a whole pageblock from the largest
 * fallback block down and, if no block may be claimed, steal the smallest
 * fallback block without retyping it; before, take the largest fallback
 * block (the smallest for a movable request that may not claim) and claim
 * its pageblock when enough of it is free or alike.
 *
 * Invariant kept here and checked by pa_validate, from Linux 6.10 on
 * (freelist hygiene): every free block sits on the list of its pageblock's
 * type, so the lists and the bits never disagree. Before 6.10 a fallback
 * puts what it took, and its remainder, on the requester's lists.
 * Every function runs with the zone lock held.
 */
#include "pageblock.h"

#include "buddy.h"
#include "linux.h"
#include "memmap.h"
#include "superblock.h"
#include "zone.h"

const char *const pa_migratetype_names[PA_MT_COUNT] = {
	"Unmovable", "Movable", "Reclaimable", "HighAtomic", "CMA", "Isolate",
};

/* Where each type may fall back to, in order: Linux's fallback table. */
static const unsigned fallbacks[PA_NR_PCP_TYPES][2] = {
	[PA_MT_UNMOVABLE] = { PA_MT_RECLAIMABLE, PA_MT_MOVABLE },
	[PA_MT_MOVABLE] = { PA_MT_RECLAIMABLE, PA_MT_UNMOVABLE },
	[PA_MT_RECLAIMABLE] = { PA_MT_UNMOVABLE, PA_MT_MOVABLE },
};

void pageblock_set_mt(struct pa_pool *pool, pa_pfn_t pfn, unsigned mt)
{
	uint8_t *b = &pool->pb_bits[pfn >> pool->cfg.pageblock_order];
	uint8_t old = __atomic_load_n(b, __ATOMIC_RELAXED);
	__atomic_store_n(b, (uint8_t)((old & ~PB_MT_MASK) | mt),
	                 __ATOMIC_RELAXED); /* zone lock held */
	if (unlikely(pool->sb != NULL) && (old & PB_MT_MASK) != mt)
		superblock_retype(pool, pfn, old & PB_MT_MASK, mt);
}

void pageblock_set_mt_range(struct pa_pool *pool, pa_pfn_t pfn, unsigned order, unsigned mt)
{
	unsigned pb = pool->cfg.pageblock_order;
	uint64_t n = order > pb ? 1ull << (order - pb) : 1;
	for (uint64_t i = 0; i < n; i++)
		pageblock_set_mt(pool, pfn + (i << pb), mt);
}

pa_pfn_t pageblock_first_other(const struct pa_pool *pool, pa_pfn_t pfn, unsigned order,
                               unsigned mt)
{
	unsigned pb = pool->cfg.pageblock_order;
	uint64_t n = order > pb ? 1ull << (order - pb) : 1;
	for (uint64_t i = 0; i < n; i++)
		if (pageblock_mt(pool, pfn + (i << pb)) != mt)
			return pfn + (i << pb);
	return PA_NIL;
}

/*
 * A block wider than a pageblock can span types: its pageblocks were retyped
 * or isolated while it sat on a CPU's list or was allocated. Freed whole, it
 * would sit on one type's list over pageblocks of another; so it goes back a
 * pageblock at a time, each piece by its own pageblock's type.
 */
void pageblock_free_wide(struct pa_zone *z, pa_pfn_t pfn, unsigned order)
{
	struct pa_pool *pool = z->pool;
	unsigned pb = pool->cfg.pageblock_order, mt = pageblock_mt(pool, pfn);
	if (pageblock_first_other(pool, pfn, order, mt) == PA_NIL) {
		buddy_free_block(z, pfn, order, mt);
		return;
	}
	for (pa_pfn_t p = pfn; p < pfn + (1ull << order); p += 1ull << pb)
		buddy_free_block(z, p, pb, pageblock_mt(pool, p));
}

/* Free and movable-allocated frames of a pageblock, and optionally move its free blocks. */
struct pb_census {
	uint64_t free, movable;
};

static struct pb_census pageblock_walk(struct pa_zone *z, pa_pfn_t pfn, int move_to)
{
	struct pa_pool *pool = z->pool;
	pa_pfn_t start = pfn & ~((1ull << pool->cfg.pageblock_order) - 1);
	pa_pfn_t end = start + (1ull << pool->cfg.pageblock_order);
	struct pb_census c = { 0, 0 };
	if (end > z->end_pfn)
		end = z->end_pfn;
	for (pa_pfn_t p = start; p < end;) {
		struct pa_page *pg = pfn_page(pool, p);
		uint64_t n = 1ull << page_order(pg);
		if (page_state(pg) == PS_FREE) {
			c.free += n;
			if (move_to >= 0)
				buddy_list_move(z, p, (unsigned)move_to);
		} else if (page_state(pg) == PS_ALLOC || page_state(pg) == PS_FREEING ||
		           page_state(pg) == PS_ISOLATED) {
			c.movable += page_mt(pg) == PA_MT_MOVABLE ? n : 0;
		} else if (page_state(pg) == PS_BODY || page_state(pg) == PS_HOLE) {
			n = 1; /* a hole, or an absent section inside a large pageblock */
		}
		p += n;
	}
	return c;
}

uint64_t pageblock_move_free(struct pa_zone *z, pa_pfn_t pfn, unsigned mt)
{
	return pageblock_walk(z, pfn, (int)mt).free;
}

/* Linux's should_try_claim_block(). */
static bool should_try_claim(const struct pa_pool *pool, unsigned order, unsigned start_mt)
{
	unsigned pb = pool->cfg.pageblock_order;
	return order >= pb || order >= pb / 2 || start_mt == PA_MT_UNMOVABLE ||
	       start_mt == PA_MT_RECLAIMABLE;
}

/* The first fallback type with a free block of this order; -1 if none. */
static int find_fallback(const struct pa_zone *z, unsigned order, unsigned start_mt)
{
	for (unsigned i = 0; i < 2; i++) {
		unsigned mt = fallbacks[start_mt][i];
		if (z->nonempty[mt] & (1ull << order))
			return (int)mt;
	}
	return -1;
}

/* A fallback block of a pageblock or more, retyped whole for start_mt; order taken from it. */
static pa_pfn_t claim_whole(struct pa_zone *z, pa_pfn_t pfn, unsigned cur, unsigned order,
                            unsigned start_mt)
{
	pageblock_set_mt_range(z->pool, pfn, cur, start_mt);
	buddy_list_move(z, pfn, start_mt);
	z->stat[PA_ZS_FALLBACK_CLAIM]++;
	return buddy_take_smallest(z, order, start_mt);
}

/*
 * Linux's rule for claiming the pageblock of a smaller fallback block (of a
 * block_mt pageblock): its free and compatible frames make at least half of it.
 */
static bool claim_pays(struct pa_zone *z, pa_pfn_t pfn, unsigned start_mt, unsigned block_mt)
{
	unsigned pb = z->pool->cfg.pageblock_order;
	struct pb_census c = pageblock_walk(z, pfn, -1);
	uint64_t alike = start_mt == PA_MT_MOVABLE ? c.movable :
	                 block_mt == PA_MT_MOVABLE ? (1ull << pb) - c.free - c.movable :
	                                             0;
	return c.free + alike >= (1ull << pb) / 2;
}

/* The pageblock at pfn, its free blocks already moved, becomes start_mt's; order taken. */
static pa_pfn_t claim_retype(struct pa_zone *z, pa_pfn_t pfn, unsigned order, unsigned start_mt)
{
	pageblock_set_mt(z->pool, pfn, start_mt);
	z->stat[PA_ZS_FALLBACK_CLAIM]++;
	return buddy_take_smallest(z, order, start_mt);
}

/*
 * Claim the pageblock of a fallback block for start_mt: a block of pageblock
 * order or more is retyped whole; a smaller one only when claim_pays()
 * (Linux's try_to_claim_block).
 */
static pa_pfn_t try_claim(struct pa_zone *z, pa_pfn_t pfn, unsigned cur, unsigned order,
                          unsigned start_mt, unsigned block_mt)
{
	if (cur >= z->pool->cfg.pageblock_order)
		return claim_whole(z, pfn, cur, order, start_mt);
	/* Linux boosts the watermarks before it knows whether the claim succeeds. */
	zone_boost_watermark(z);
	if (!claim_pays(z, pfn, start_mt, block_mt))
		return PA_NIL;
	pageblock_move_free(z, pfn, start_mt);
	return claim_retype(z, pfn, order, start_mt);
}

/*
 * From the largest fallback block down, as Linux. A block above
 * fallback_order is first cut to its first block of that order, which is
 * then what a claim may retype: Linux with blocks up to that order would
 * have seen it as such blocks.
 */
static pa_pfn_t rmqueue_claim(struct pa_zone *z, unsigned order, unsigned start_mt, unsigned min)
{
	const struct pa_pool *pool = z->pool;
	unsigned top = pool->cfg.fallback_order < pool->cfg.max_order ? pool->cfg.fallback_order :
	                                                                pool->cfg.max_order;
	for (int cur = (int)pool->cfg.max_order; cur >= (int)min; cur--) {
		int fb = find_fallback(z, (unsigned)cur, start_mt);
		if (fb < 0)
			continue;
		unsigned claim = (unsigned)cur > top ? top : (unsigned)cur;
		if (!should_try_claim(pool, claim, start_mt))
			break; /* orders too low to claim from here down */
		pa_pfn_t pfn = buddy_list_first(z, (unsigned)cur, (unsigned)fb);
		if (claim < (unsigned)cur) {
			buddy_take_block(z, pfn, claim, (unsigned)cur);
			buddy_list_add(z, pfn, claim, (unsigned)fb);
		}
		pfn = try_claim(z, pfn, claim, order, start_mt, (unsigned)fb);
		if (pfn != PA_NIL)
			return pfn;
	}
	return PA_NIL;
}

/* Take the smallest fallback block, leaving its pageblock's type as it is. */
static pa_pfn_t rmqueue_steal(struct pa_zone *z, unsigned order, unsigned start_mt)
{
	for (unsigned cur = order; cur <= z->pool->cfg.max_order; cur++) {
		int fb = find_fallback(z, cur, start_mt);
		if (fb < 0)
			continue;
		pa_pfn_t pfn = buddy_list_first(z, cur, (unsigned)fb);
		buddy_take_block(z, pfn, order, cur);
		z->stat[PA_ZS_FALLBACK_STEAL]++;
		return pfn;
	}
	return PA_NIL;
}

/* ---------------------------------------------------------------------- */
/* Steering by superblock (superblock_order > 0)                           */
/* ---------------------------------------------------------------------- */

/*
 * The steering policy, per allocation type. A region holding one
 * unmovable page cannot be handed out whole, however much of it is free;
 * Linux's fallback picks whatever block heads a free list and so spreads
 * such pages over every region. Steering picks the region instead.
 */
static const struct steer_policy {
	bool fallback_by_region; /* claim or steal from polluted regions first, clean ones last */
	bool split_in_polluted;  /* a split of a free pageblock prefers a polluted region's */
} steer_policy[PA_NR_PCP_TYPES] = {
	/* They pin their region for good: put them where some already are. */
	[PA_MT_UNMOVABLE] = { .fallback_by_region = true },
	[PA_MT_RECLAIMABLE] = { .fallback_by_region = true },
	/*
	 * Movable memory can be moved out again, so its fallbacks go where
	 * Linux's go (into unmovable pageblocks, in polluted regions anyway);
	 * but the first split of a wholly free region costs it being handed out
	 * whole, so that comes from a polluted region's free pageblocks while
	 * there are some. Only that split: a polluted region's free pageblocks
	 * are where its unmovable memory grows next, and movable memory there
	 * (without defrag_mode) would push that growth into a clean region.
	 */
	[PA_MT_MOVABLE] = { .split_in_polluted = true },
};

/* The fallback types of start_mt as a mask of list types. */
static unsigned fallback_mask(unsigned start_mt)
{
	return (1u << fallbacks[start_mt][0]) | (1u << fallbacks[start_mt][1]);
}

/*
 * Claim the first pageblock (or as many as order needs) of the free block
 * at head, of order at least both, for start_mt and take order from it.
 * Only those pageblocks change type: Linux retypes the whole block, which
 * with a 1 GiB max order would hand a whole clean region to one page.
 */
static pa_pfn_t claim_pageblock(struct pa_zone *z, pa_pfn_t head, unsigned head_order,
                                unsigned order, unsigned start_mt)
{
	unsigned pb = z->pool->cfg.pageblock_order, c = order > pb ? order : pb;
	buddy_take_block(z, head, c, head_order);
	pageblock_set_mt_range(z->pool, head, c, start_mt);
	buddy_list_add(z, head, c, start_mt);
	buddy_take_block(z, head, order, c);
	z->stat[PA_ZS_FALLBACK_CLAIM]++;
	return head;
}

/*
 * A fallback inside one region, as Linux's policy does it inside the zone:
 * a whole free pageblock is claimed; else the fullest partly free
 * pageblocks of a fallback type are claimed if half of them is free or
 * compatible, else (if steal) their smallest fitting block is stolen.
 * PA_NIL if the region has nothing of order or above.
 */
static pa_pfn_t fallback_in_region(struct pa_zone *z, uint64_t index, unsigned order,
                                   unsigned start_mt, bool steal)
{
	unsigned mts = fallback_mask(start_mt), head_order;
	pa_pfn_t head = superblock_free_pageblock(z, index, mts, order, &head_order);
	if (head != PA_NIL)
		return claim_pageblock(z, head, head_order, order, start_mt);
	struct sb_pick pick;
	if (!superblock_partial_pageblock(z, index, order, mts, &pick))
		return PA_NIL;
	unsigned fb = pfn_page(z->pool, pick.large)->mt;
	pa_pfn_t pfn = try_claim(z, pick.large, pick.large_order, order, start_mt, fb);
	if (pfn != PA_NIL || !steal)
		return pfn;
	buddy_take_block(z, pick.small, order, pick.small_order);
	z->stat[PA_ZS_FALLBACK_STEAL]++;
	return pick.small;
}

/*
 * The regions in turn (superblock_rank's order): in a polluted region a
 * claim, else a steal, before the next region; a clean one is touched only
 * when no polluted one could give a block, and not at all under
 * ALLOC_NO_POLLUTE (defrag_mode: the caller compacts first). Among the
 * clean ones every region is asked for a claim before any for a steal: a
 * stolen page taints its region as surely as a claimed pageblock, but
 * leaves its pageblock's type, so the counts would not see it and the next
 * fallback would taint yet another region.
 */
static pa_pfn_t fallback_steered(struct pa_zone *z, unsigned order, unsigned start_mt,
                                 unsigned alloc_flags, bool *refused)
{
	unsigned n = superblock_rank(z, false), i = 0;
	for (; i < n && z->sb_rank[i].key >> 63; i++) {
		pa_pfn_t pfn = fallback_in_region(z, z->sb_rank[i].index, order, start_mt, true);
		if (pfn != PA_NIL) {
			z->stat[PA_ZS_SB_STEER_POLLUTED]++;
			return pfn;
		}
	}
	if (i < n && (alloc_flags & ALLOC_NO_POLLUTE)) {
		*refused = true;
		return PA_NIL;
	}
	for (unsigned steal = 0; steal < 2; steal++)
		for (unsigned j = i; j < n; j++) {
			pa_pfn_t pfn =
			        fallback_in_region(z, z->sb_rank[j].index, order, start_mt, steal);
			if (pfn != PA_NIL) {
				z->stat[PA_ZS_SB_FALLBACK_CLEAN]++;
				return pfn;
			}
		}
	return PA_NIL;
}

/*
 * Linux 6.1's steal_suitable_fallback() for the block at pfn of order cur:
 * a block of a pageblock or more is retyped whole; a smaller one, when the
 * request may claim, moves its pageblock's free blocks to start_mt and
 * retypes the pageblock if half of it is free or alike. What is not claimed
 * moves alone: before freelist hygiene (6.10) to start_mt's list, whose
 * request then splits it there; from 6.10 on it is split on its own list.
 */
static pa_pfn_t steal_61(struct pa_zone *z, pa_pfn_t pfn, unsigned cur, unsigned order,
                         unsigned start_mt, unsigned fb, bool may_claim)
{
	struct pa_pool *pool = z->pool;
	bool hygiene = linux_rule(pool, LR_FREELIST_HYGIENE);
	if (cur >= pool->cfg.pageblock_order)
		return claim_whole(z, pfn, cur, order, start_mt);
	/* 6.1 boosts on every fallback below a pageblock, claimed or stolen. */
	zone_boost_watermark(z);
	if (may_claim) {
		bool claim = claim_pays(z, pfn, start_mt, fb);
		if (claim || !hygiene) /* 6.1 moves the free blocks before it counts */
			pageblock_move_free(z, pfn, start_mt);
		if (claim)
			return claim_retype(z, pfn, order, start_mt);
	}
	z->stat[PA_ZS_FALLBACK_STEAL]++;
	if (!hygiene) {
		if (pfn_page(pool, pfn)->mt != start_mt)
			buddy_list_move(z, pfn, start_mt);
		return buddy_take_smallest(z, order, start_mt);
	}
	buddy_take_block(z, pfn, order, cur);
	return pfn;
}

/*
 * Linux 6.1's __rmqueue_fallback(): the largest fallback block, unless a
 * movable request may not claim it, which then takes the smallest. Under
 * ALLOC_NOFRAGMENT only blocks of a pageblock or more.
 */
static pa_pfn_t rmqueue_fallback_61(struct pa_zone *z, unsigned order, unsigned start_mt,
                                    unsigned alloc_flags)
{
	const struct pa_pool *pool = z->pool;
	unsigned pb = pool->cfg.pageblock_order, max = pool->cfg.max_order;
	unsigned min = (alloc_flags & ALLOC_NOFRAGMENT) && order < pb ? pb : order;
	for (int cur = (int)max; cur >= (int)min; cur--) {
		int fb = find_fallback(z, (unsigned)cur, start_mt);
		if (fb < 0)
			continue;
		bool may_claim = should_try_claim(pool, (unsigned)cur, start_mt);
		if (!may_claim && start_mt == PA_MT_MOVABLE && (unsigned)cur > order) {
			for (cur = (int)order; cur <= (int)max; cur++)
				if ((fb = find_fallback(z, (unsigned)cur, start_mt)) >= 0)
					break;
		}
		pa_pfn_t pfn = buddy_list_first(z, (unsigned)cur, (unsigned)fb);
		return steal_61(z, pfn, (unsigned)cur, order, start_mt, (unsigned)fb, may_claim);
	}
	return PA_NIL;
}

/* Linux 6.15's __rmqueue_claim() then __rmqueue_steal(); no steal under ALLOC_NOFRAGMENT. */
static pa_pfn_t rmqueue_fallback_615(struct pa_zone *z, unsigned order, unsigned mt,
                                     unsigned alloc_flags)
{
	unsigned pb = z->pool->cfg.pageblock_order;
	unsigned min = (alloc_flags & ALLOC_NOFRAGMENT) && order < pb ? pb : order;
	pa_pfn_t pfn = rmqueue_claim(z, order, mt, min);
	if (pfn != PA_NIL || (alloc_flags & ALLOC_NOFRAGMENT))
		return pfn;
	return rmqueue_steal(z, order, mt);
}

pa_pfn_t pageblock_rmqueue_fallback(struct pa_zone *z, unsigned order, unsigned mt,
                                    unsigned alloc_flags)
{
	pa_lock_held(&z->lock);
	if (mt >= PA_NR_PCP_TYPES)
		return PA_NIL;
	if (z->pool->sb && steer_policy[mt].fallback_by_region) {
		bool refused = false;
		pa_pfn_t pfn = fallback_steered(z, order, mt, alloc_flags, &refused);
		if (pfn != PA_NIL || refused)
			return pfn;
		/* Nothing any region's scan could see (a zone grown past its buffer): Linux's. */
	}
	if (!linux_rule(z->pool, LR_FALLBACK_CLAIM))
		return rmqueue_fallback_61(z, order, mt, alloc_flags);
	return rmqueue_fallback_615(z, order, mt, alloc_flags);
}

/*
 * The free block an allocation of type mt takes need frames of (log2) from,
 * on its own list of order *found: the list's first, unless that splits a
 * free pageblock (or larger) of a wholly free region while a polluted
 * region has a free pageblock of the list's type, of order need or above,
 * which is then taken instead (*found becomes its order).
 */
static inline bool split_may_steer(const struct pa_pool *pool, unsigned found, unsigned type,
                                   unsigned mt)
{
	return unlikely(pool->sb != NULL) && found >= pool->cfg.pageblock_order && type == mt &&
	       steer_policy[mt].split_in_polluted;
}

pa_pfn_t pageblock_own_first(struct pa_zone *z, unsigned *found, unsigned need, unsigned type,
                             unsigned mt)
{
	struct pa_pool *pool = z->pool;
	pa_pfn_t pfn = buddy_list_first(z, *found, type);
	if (!split_may_steer(pool, *found, type, mt) || !superblock_pfn_whole(pool, pfn))
		return pfn;
	unsigned n = superblock_rank(z, true);
	for (unsigned i = 0; i < n; i++) {
		unsigned o;
		pa_pfn_t head =
		        superblock_free_pageblock(z, z->sb_rank[i].index, 1u << type, need, &o);
		if (head != PA_NIL) {
			z->stat[PA_ZS_SB_STEER_MOVABLE]++;
			*found = o;
			return head;
		}
	}
	return pfn;
}

static inline __attribute__((always_inline)) int own_list(const struct pa_zone *z, unsigned order,
                                                          unsigned mt, unsigned alloc_flags,
                                                          unsigned *found)
{
	/* Linux's balance rule: borrow CMA first while it holds over half the zone's free memory. */
	bool cma = (alloc_flags & ALLOC_CMA) && z->cma_pages;
	int o;
	if (cma && zone_free_cma(z) > zone_nr_free(z) / 2 &&
	    (o = buddy_first_order(z, order, PA_MT_CMA)) >= 0) {
		*found = (unsigned)o;
		return PA_MT_CMA;
	}
	if ((o = buddy_first_order(z, order, mt)) >= 0) {
		*found = (unsigned)o;
		return (int)mt;
	}
	if (cma && (o = buddy_first_order(z, order, PA_MT_CMA)) >= 0) {
		*found = (unsigned)o;
		return PA_MT_CMA;
	}
	return -1;
}

int pageblock_own_list(const struct pa_zone *z, unsigned order, unsigned mt, unsigned alloc_flags,
                       unsigned *found)
{
	return own_list(z, order, mt, alloc_flags, found);
}

pa_pfn_t pageblock_rmqueue(struct pa_zone *z, unsigned order, unsigned mt, unsigned alloc_flags)
{
	if (alloc_flags & ALLOC_HIGHATOMIC) {
		pa_pfn_t pfn = buddy_take_smallest(z, order, PA_MT_HIGHATOMIC);
		if (pfn != PA_NIL)
			return pfn;
	}
	unsigned found;
	int type = own_list(z, order, mt, alloc_flags, &found);
	if (type < 0) {
		pa_pfn_t pfn = pageblock_rmqueue_fallback(z, order, mt, alloc_flags);
		/* Linux: failing now is worse than failing a high-order atomic request later. */
		if (pfn == PA_NIL && (alloc_flags & ALLOC_NON_BLOCK))
			pfn = buddy_take_smallest(z, order, PA_MT_HIGHATOMIC);
		return pfn;
	}
	if (!split_may_steer(z->pool, found, (unsigned)type, mt))
		return buddy_take_first(z, order, found, (unsigned)type);
	pa_pfn_t pfn = pageblock_own_first(z, &found, order, (unsigned)type, mt);
	buddy_take_block(z, pfn, order, found);
	return pfn;
}

/*
 * The reserve's cap: 1% of the zone plus a pageblock (Linux 6.1); from 6.10
 * on 1% rounded up to whole pageblocks, and none where 1% is less than one.
 */
static uint64_t highatomic_cap(const struct pa_zone *z)
{
	uint64_t pb = 1ull << z->pool->cfg.pageblock_order, pct = z->managed_pages / 100;
	if (!linux_rule(z->pool, LR_HIGHATOMIC_ALIGNED))
		return pct + pb;
	return pct < pb ? 0 : (pct + pb - 1) / pb * pb;
}

/*
 * A high-order atomic allocation succeeded: keep its pageblock for such
 * allocations (Linux's reserve_highatomic_pageblock), up to about 1 % of the zone.
 */
void pageblock_reserve_highatomic(struct pa_zone *z, pa_pfn_t pfn, unsigned order)
{
	struct pa_pool *pool = z->pool;
	unsigned pb = pool->cfg.pageblock_order;
	unsigned mt = pageblock_mt(pool, pfn);
	uint64_t frames = order < pb ? 1ull << pb : 1ull << order;
	if (z->nr_reserved_highatomic >= highatomic_cap(z) || mt >= PA_NR_PCP_TYPES)
		return;
	if (order < pb)
		pageblock_move_free(z, pfn, PA_MT_HIGHATOMIC);
	pageblock_set_mt_range(pool, pfn, order, PA_MT_HIGHATOMIC);
	z->nr_reserved_highatomic += frames;
	zone_set_pcp_mark(z);
	z->stat[PA_ZS_HIGHATOMIC_RESERVE]++;
}

/* Memory is about to run out: give one reserved pageblock back to mt. */
bool pageblock_unreserve_highatomic(struct pa_zone *z, unsigned mt)
{
	struct pa_pool *pool = z->pool;
	unsigned pb = pool->cfg.pageblock_order;
	for (unsigned o = 0; o <= pool->cfg.max_order; o++) {
		pa_pfn_t pfn = buddy_list_first(z, o, PA_MT_HIGHATOMIC);
		if (pfn == PA_NIL)
			continue;
		if (o >= pb) {
			pageblock_set_mt_range(pool, pfn, o, mt);
			buddy_list_move(z, pfn, mt);
		} else {
			pageblock_move_free(z, pfn, mt);
			pageblock_set_mt(pool, pfn, mt);
		}
		uint64_t frames = o > pb ? 1ull << o : 1ull << pb;
		z->nr_reserved_highatomic -=
		        frames < z->nr_reserved_highatomic ? frames : z->nr_reserved_highatomic;
		zone_set_pcp_mark(z);
		z->stat[PA_ZS_HIGHATOMIC_UNRESERVE]++;
		return true;
	}
	return false;
}
