/* SPDX-License-Identifier: MIT */
/*
 * Per-CPU lists: each CPU keeps a few free blocks of every enabled order for
 * each zone, so that most allocations and frees touch no shared lock. Blocks
 * move between a CPU's lists and the buddy `batch` at a time under one
 * zone-lock hold: a refill when a list runs dry, a spill when the lists hold
 * more than `high` frames.
 *
 * Which orders go through the lists is a run-time mask (pcp_orders); any
 * order 0..max_order may be on it. Sizing follows Linux 6.7: batch from the
 * zone size, high between high_min (the low watermark shared by the node's
 * CPUs) and high_max (1/8 of the zone shared by them), raised on refills
 * while the zone is above its high watermark and decayed once a second.
 *
 * Locking: a CPU only trylocks its own lists and takes the zone path when
 * they are busy (a drain from another CPU, or a thread that moved CPUs and
 * shares the id). The zone lock nests inside the list lock.
 */
#include "pcp.h"

#include "platform/platform.h"
#include "buddy.h"
#include "linux.h"
#include "memmap.h"
#include "pageblock.h"
#include "superblock.h"
#include "zone.h"

/*
 * Past Linux: a CPU that keeps refilling its unmovable and reclaimable
 * lists takes up to batch << 8 (63 MiB of 4 KiB frames at the largest batch,
 * never past high), so that CPUs working in bulk meet at the zone lock a
 * quarter as often. It takes the part above Linux's as whole blocks only, a
 * few buddy operations per pageblock under the lock. Spills stop at Linux's
 * << 5: a spill merges frame by frame under the zone lock, and spills of up
 * to << 8 held it long enough to double page_fault1's contention at order 4.
 */
#define PCP_STREAM_SCALE_MAX  8
#define PCP_DECAY_INTERVAL_NS 1000000000ull
#define PCP_MIN_HIGH_FRACTION 8   /* as Linux's MIN_PERCPU_PAGELIST_HIGH_FRACTION */
#define PCP_REFILL_BLOCKS     32  /* whole blocks one refill takes at most */
#define PCP_SPILL_BLOCKS      256 /* blocks a spill merges and gives back per zone-lock hold */

/*
 * Lists exist for every order up to the booted max_order; those above the
 * current one are switched off and empty, and reading the booted order
 * needs no zone lock while max_order moves.
 */
static unsigned nr_lists(const struct pa_pool *pool)
{
	return (pool->max_order_boot + 1) * PA_NR_PCP_TYPES;
}

static bool reclaim_active(const struct pa_zone *z)
{
	return atomic_load_explicit(&z->reclaim_active, memory_order_relaxed);
}

static bool below_high(const struct pa_zone *z)
{
	return atomic_load_explicit(&z->below_high, memory_order_relaxed);
}

/*
 * Where a spill clears ZONE_BELOW_HIGH: Linux's zone_watermark_ok() at the
 * high mark for any zone type (the lowmem reserve for ZONE_MOVABLE), with
 * nothing of the atomic reserve or CMA counted.
 */
static bool above_high(const struct pa_zone *z)
{
	uint64_t mark = __atomic_load_n(&z->wmark[PA_WMARK_HIGH], __ATOMIC_RELAXED) +
	                __atomic_load_n(&z->lowmem_reserve[PA_ZONE_MOVABLE], __ATOMIC_RELAXED) +
	                atomic_load_explicit(&z->unusable[0], memory_order_relaxed);
	return zone_nr_free(z) > mark;
}

/* Linux's nr_pcp_high() while reclaim is active: 4 batches at most. */
static uint32_t reclaim_cap(const struct pa_zone *z, const struct pa_pcp *pcp, uint32_t high)
{
	uint32_t cap = pcp->batch << 2;
	return reclaim_active(z) && cap < high ? cap : high;
}

/*
 * One block of nr_cpus structs, each with the orders 0..max_order_boot and
 * rounded to cache lines, and the table of pointers to them that the fast
 * paths index by CPU (a load, where a multiply by a size known only at
 * boot would take three instructions).
 */
int pcp_init_zone(struct pa_zone *z)
{
	struct pa_pool *pool = z->pool;
	unsigned cpus = pool->cfg.nr_cpus, orders = pool->max_order_boot + 1;
	size_t stride =
	        (sizeof(struct pa_pcp) + orders * sizeof(struct pcp_order) + 63) & ~(size_t)63;
	char *mem = pa_malloc_aligned(&pool->plat, stride * cpus, 64);
	z->pcp = pa_calloc(&pool->plat, cpus, sizeof *z->pcp);
	if (!mem || !z->pcp) {
		pa_free_aligned(&pool->plat, mem);
		pa_free(&pool->plat, z->pcp);
		z->pcp = NULL;
		return -ENOMEM;
	}
	memset(mem, 0, stride * cpus);
	for (unsigned c = 0; c < cpus; c++) {
		struct pa_pcp *pcp = (struct pa_pcp *)(mem + stride * c);
		atomic_init(&pcp->lock.v, 0);
		pcp->lock.cpu = c;
		pcp->zone = z;
		for (unsigned o = 0; o < orders; o++)
			for (unsigned t = 0; t <= PA_NR_PCP_TYPES; t++)
				pcp_head(pcp, o, t) = PA_NIL;
		z->pcp[c] = pcp;
	}
	return 0;
}

void pcp_destroy_zone(struct pa_zone *z)
{
	if (!z->pcp)
		return;
	const struct pa_platform *plat = &z->pool->plat;
	pa_free_aligned(plat, z->pcp[0]); /* the block starts with CPU 0's */
	pa_free(plat, z->pcp);
	z->pcp = NULL;
}

/* Linux's zone_batchsize(): about a quarter of a MiB, one less than a power of two. */
static uint32_t zone_batchsize(const struct pa_zone *z, uint64_t managed)
{
	uint64_t batch = managed >> 10;
	uint64_t cap = (1ull << 20) >> z->pool->cfg.page_shift;
	if (batch > cap)
		batch = cap;
	batch /= 4;
	if (batch < 1)
		batch = 1;
	batch += batch / 2;
	batch = (1ull << (63 - __builtin_clzll(batch))) - 1;
	return batch ? (uint32_t)batch : 1; /* as zone_set_pageset_high_and_batch() keeps it */
}

/* CPUs of the zone's node, as Linux's nr_split_cpus: all CPUs for a node without any. */
static unsigned node_cpus(const struct pa_zone *z)
{
	const struct pa_pool *pool = z->pool;
	unsigned n = 0;
	for (unsigned c = 0; c < pool->cfg.nr_cpus; c++)
		n += (uint64_t)c * pool->nr_nodes / pool->cfg.nr_cpus == z->node;
	return n ? n : pool->cfg.nr_cpus;
}

void pcp_setup_sizes(struct pa_zone *z)
{
	struct pa_pool *pool = z->pool;
	/* Deferred init and hotplug change these under the zone lock: read them under it. */
	pa_lock(&z->lock, SITE_ADMIN);
	uint64_t managed = z->managed_pages, low = z->wmark[PA_WMARK_LOW];
	pa_unlock(&z->lock);
	uint32_t batch = zone_batchsize(z, managed), floor = batch << 2;
	unsigned cpus = node_cpus(z), fraction = atomic_load(&pool->pcp_high_fraction);
	uint64_t hmin = low / cpus, hmax = managed / 8 / cpus;
	if (fraction)
		hmin = hmax = managed / fraction / cpus;
	else if (pcp_rules_61(pool))
		hmax = hmin; /* Linux 6.1's zone_highsize(): the low watermark's share, not tuned */
	hmin = hmin < floor ? floor : hmin;
	hmax = hmax < hmin ? hmin : hmax;
	for (unsigned c = 0; c < pool->cfg.nr_cpus; c++) {
		struct pa_pcp *pcp = z->pcp[c];
		platform_spin_lock(pool, &pcp->lock, SITE_ADMIN);
		pcp->batch = batch;
		pcp->high_min = (uint32_t)hmin;
		pcp->high_max = (uint32_t)hmax;
		if (pcp->high < hmin || pcp->high > hmax)
			pcp_set_high(pcp, (uint32_t)hmin);
		pa_spin_unlock(&pcp->lock);
	}
}

/* Halve *factor once for each operation counted since *seen (now). */
static void factor_catch_up(uint32_t *factor, uint64_t *seen, uint64_t now)
{
	uint64_t since = now - *seen;
	*factor = since >= 32 ? 0 : *factor >> since;
	*seen = now;
}

/* Blocks allocated from (frees: freed to) a CPU's lists, all orders. */
static uint64_t ops_total(const struct pa_pool *pool, const struct pa_pcp *pcp, bool frees)
{
	uint64_t n = 0;
	for (unsigned o = 0; o <= pool->max_order_boot; o++)
		n += frees ? pcp->orders[o].frees : pcp->orders[o].allocs;
	return n;
}

/*
 * Blocks per refill (Linux's nr_pcp_alloc()): a batch, scaled down by the
 * order but at least 2; for order 0, doubled for each refill in a row with
 * no free between (alloc_factor, up to batch << 5) while high leaves room.
 */
static unsigned refill_count(const struct pa_pool *pool, struct pa_pcp *pcp, unsigned order)
{
	if (order) {
		unsigned n = order < 32 ? pcp->batch >> order : 0; /* max_order may reach 40 */
		return n < 2 ? 2 : n;
	}
	if (pcp_rules_61(pool))
		return pcp->batch; /* Linux 6.1 has no alloc_factor */
	/* Linux halves alloc_factor on every free; the fast path only counts them. */
	factor_catch_up(&pcp->alloc_factor, &pcp->frees_seen, ops_total(pool, pcp, true));
	uint64_t n = (uint64_t)pcp->batch << pcp->alloc_factor;
	int64_t room = (int64_t)pcp->high - pcp_count(pcp) - pcp->batch;
	uint64_t max = room > (int64_t)pcp->batch ? (uint64_t)room : pcp->batch;
	if (n <= max && pcp->alloc_factor < PCP_BATCH_SCALE_MAX)
		pcp->alloc_factor++;
	return (unsigned)(n < max ? n : max);
}

/*
 * Frames a streaming CPU takes past Linux's n: once refills in a row have
 * scaled n to batch << 5, up to batch << 8 in all while high leaves room.
 * Not for MOVABLE: movable free blocks are what the other types fall back
 * to, largest first, and a CPU that kept them would scatter unmovable pages
 * over more pageblocks.
 */
static unsigned refill_stream_extra(const struct pa_pool *pool, const struct pa_pcp *pcp,
                                    unsigned order, unsigned mt, unsigned n)
{
	if (order || mt == PA_MT_MOVABLE || pcp_rules_61(pool) ||
	    !atomic_load_explicit(&pool->pcp_stream_refill, memory_order_relaxed) ||
	    pcp->alloc_factor < PCP_BATCH_SCALE_MAX || n < (pcp->batch << PCP_BATCH_SCALE_MAX))
		return 0;
	int64_t room = (int64_t)pcp->high - pcp_count(pcp) - pcp->batch - n;
	uint64_t want = ((uint64_t)pcp->batch << PCP_STREAM_SCALE_MAX) - n;
	return room <= 0 ? 0 : (unsigned)(want < (uint64_t)room ? want : (uint64_t)room);
}

static void pcp_spill(struct pa_zone *z, struct pa_pcp *pcp, uint64_t frames, uint64_t order_mask,
                      unsigned first, enum pa_lock_site site);

/*
 * Spin tries before a refill or spill of `frames` may sleep on the zone
 * lock. A streaming CPU's (Linux's largest batch or more) most likely waits
 * for the like, held 3-6 us: it spins PA_LOCK_SPINS_BATCH tries however
 * sleeps have cut the budget. Smaller ones keep the budget: a CPU that spun
 * on through another's short refills ran on in step with it, so that their
 * next refills met again (page_fault1 at order 4: 7 times the contended
 * acquisitions, the same time waited).
 */
static unsigned pcp_min_spins(const struct pa_pcp *pcp, uint64_t frames)
{
	return frames >= (uint64_t)pcp->batch << PCP_BATCH_SCALE_MAX ? PA_LOCK_SPINS_BATCH : 0;
}

/*
 * A new high, and what the lists hold above it back to the buddy from the
 * first list on (order 0, unmovable), as Linux's decay_pcp_high() has
 * free_pcppages_bulk() start at list 0 for each batch: in its steps for a
 * decay (site SITE_PCP_SPILL), exactly for a high set from outside
 * (SITE_ADMIN). List lock held.
 */
static void pcp_set_high_trim(struct pa_zone *z, struct pa_pcp *pcp, uint32_t high,
                              enum pa_lock_site site)
{
	pcp_set_high(pcp, high);
	if (pcp_count(pcp) > pcp->high)
		pcp_spill(z, pcp, pcp_count(pcp) - pcp->high, UINT64_MAX, 0, site);
}

/*
 * Linux's decay_pcp_high(): high falls back toward what the CPU uses, by an
 * eighth, no more than the lists hold above batch << 5, never outside
 * [high_min, high_max], reclaim or not. List lock held.
 */
static uint32_t pcp_decayed_high(const struct pa_pcp *pcp)
{
	int64_t a = (int64_t)pcp_count(pcp) - ((int64_t)pcp->batch << PCP_BATCH_SCALE_MAX);
	int64_t b = (int64_t)pcp->high - pcp->high / 8;
	int64_t h = a > b ? a : b;
	h = h < pcp->high_min ? pcp->high_min : h > pcp->high_max ? pcp->high_max : h;
	return (uint32_t)h;
}

/* The decay, and what the lists hold above the new high goes back. List lock held. */
static void pcp_decay_now(struct pa_zone *z, struct pa_pcp *pcp)
{
	pcp_set_high_trim(z, pcp, pcp_decayed_high(pcp), SITE_PCP_SPILL);
}

/*
 * At a refill or a spill, once a second at most: the decay that Linux's
 * vmstat worker runs, unless the embedder runs it (pcp/decay_external).
 */
static void pcp_decay(struct pa_zone *z, struct pa_pcp *pcp)
{
	struct pa_pool *pool = z->pool;
	if (atomic_load_explicit(&pool->pcp_decay_external, memory_order_relaxed))
		return;
	uint64_t now = pool->plat.now_ns(pool->plat.ctx);
	if (now - pcp->last_decay_ns < PCP_DECAY_INTERVAL_NS)
		return;
	pcp->last_decay_ns = now;
	pcp_decay_now(z, pcp);
}

long pa_pcp_decay_frames(struct pa_pool *pool, unsigned cpu)
{
	if (!pool || cpu >= pool->cfg.nr_cpus)
		return -EINVAL;
	if (pcp_rules_61(pool))
		return 0;
	long frames = 0;
	for (unsigned i = 0; i < pool->nr_zones; i++) {
		struct pa_zone *z = &pool->zones[i];
		struct pa_pcp *pcp = z->pcp[cpu];
		platform_spin_lock(pool, &pcp->lock, SITE_DRAIN);
		uint32_t count = pcp_count(pcp), high = pcp_decayed_high(pcp);
		frames += count > high ? (long)(count - high) : 0;
		pa_spin_unlock(&pcp->lock);
	}
	return frames;
}

int pa_pcp_decay(struct pa_pool *pool, unsigned cpu)
{
	if (!pool || cpu >= pool->cfg.nr_cpus)
		return -EINVAL;
	if (pcp_rules_61(pool))
		return 0; /* high is fixed */
	for (unsigned i = 0; i < pool->nr_zones; i++) {
		struct pa_zone *z = &pool->zones[i];
		struct pa_pcp *pcp = z->pcp[cpu];
		platform_spin_lock(pool, &pcp->lock, SITE_DRAIN);
		pcp_decay_now(z, pcp);
		pa_spin_unlock(&pcp->lock);
	}
	return 0;
}

/* A whole block a refill takes or a spill gives back. */
struct pcp_block {
	uint32_t pfn; /* as the lists link them */
	uint32_t order;
};

/*
 * Take a whole free block for up to n blocks of `order`, as that many
 * smallest-fit takes would use it: the smallest block of the request's own
 * lists if n fill it, else one split to what n fill, never above a
 * pageblock. It leaves the buddy as one PS_PCP head that scanners step
 * over, to be cut up once the zone lock is dropped. Returns how many blocks
 * of order it holds, 0 if the own lists are empty or the watermark is near
 * (then blocks go one by one: the fallback policy, the last frames). Zone
 * lock held.
 */
static unsigned refill_take_whole(struct pa_zone *z, unsigned order, unsigned mt, unsigned flags,
                                  unsigned n, struct pcp_block *out)
{
	unsigned pb = z->pool->cfg.pageblock_order, cap = pb > order ? pb : order, found;
	int type = pageblock_own_list(z, order, mt, flags, &found);
	if (type < 0)
		return 0;
	unsigned fill = order + 31 - (unsigned)__builtin_clz(n); /* the largest n fill */
	unsigned take = found < fill ? found : fill;
	take = take < cap ? take : cap;
	if (!zone_watermark_ok(z, 0, z->wmark[PA_WMARK_LOW] + (1ull << take) - 1, flags))
		return 0;
	pa_pfn_t pfn = pageblock_own_first(z, &found, take, (unsigned)type, mt);
	buddy_take_block(z, pfn, take, found);
	struct pa_page *p = pfn_page(z->pool, pfn);
	set_page_order(p, take);
	set_page_state(p, PS_PCP);
	*out = (struct pcp_block){ (uint32_t)pfn, take };
	return 1u << (take - order);
}

/* The list's last block, PA_NIL when empty (an empty list's tail is stale). */
static uint32_t pcp_last(const struct pa_pcp *pcp, unsigned order, unsigned type)
{
	return pcp_head(pcp, order, type) == PA_NIL ? PA_NIL : pcp_tail(pcp, order, type);
}

/*
 * Link a block a refill took, cut into blocks of order, after `after` on its
 * list (at the head for PA_NIL), where Linux's list_add_tail() puts them:
 * from the lowest up, chained to each other as they are cut and spliced in
 * at once. Returns the last. List lock held.
 */
static uint32_t refill_link(struct pa_pool *pool, struct pa_pcp *pcp, struct pcp_block b,
                            unsigned order, unsigned mt, uint32_t after)
{
	unsigned reported = page_flags(pfn_page(pool, b.pfn)) & PF_REPORTED; /* for every piece */
	uint64_t n = 1ull << (b.order - order);
	uint32_t last = b.pfn + (uint32_t)((n - 1) << order);
	uint32_t next =
	        after == PA_NIL ? pcp_head(pcp, order, mt) : pfn_page(pool, after)->lru.next;
	for (uint64_t i = 0; i < n; i++) {
		uint32_t pfn = b.pfn + (uint32_t)(i << order);
		struct pa_page *p = pcp_listable(pool, pfn);
		set_page_order(p, order);
		set_page_flags(p, reported);
		p->lru.prev = i ? pfn - (1u << order) : after;
		p->lru.next = i + 1 < n ? pfn + (1u << order) : next;
	}
	if (next != PA_NIL)
		pfn_page(pool, next)->lru.prev = last;
	else
		pcp_tail(pcp, order, mt) = last;
	if (after != PA_NIL)
		pfn_page(pool, after)->lru.next = b.pfn;
	else
		__atomic_store_n(&pcp_head(pcp, order, mt), b.pfn,
		                 __ATOMIC_RELAXED); /* pcp_free_direct_guess() */
	pcp->room -= (int32_t)(n << order);
	return last;
}

/*
 * Linux 6.7's nr_pcp_alloc(): before it counts what to take, a refill
 * raises high by what it would take (a batch, scaled by alloc_factor for
 * order 0), up to high_max, unless the zone is under its high watermark
 * (ZONE_BELOW_HIGH). Reclaim does not stop it: its cap is applied at frees.
 */
static void raise_high(struct pa_zone *z, struct pa_pcp *pcp, unsigned order)
{
	struct pa_pool *pool = z->pool;
	if (pcp_rules_61(pool) || below_high(z) || pcp->high >= pcp->high_max)
		return;
	uint64_t step = pcp->batch;
	if (!order) {
		factor_catch_up(&pcp->alloc_factor, &pcp->frees_seen, ops_total(pool, pcp, true));
		step <<= pcp->alloc_factor;
	}
	uint64_t h = pcp->high + step;
	pcp_set_high(pcp, h > pcp->high_max ? pcp->high_max : (uint32_t)h);
}

/*
 * Fill the list from the buddy under one zone-lock hold, mostly as whole
 * blocks cut up after the lock is dropped, so that two CPUs refilling share
 * the lock for a few list operations each. A refill raises high by a batch
 * while the zone is above its high watermark (Linux 6.7). nofrag: the
 * request's ALLOC_NOFRAGMENT, which Linux's rmqueue_bulk() passes on (no
 * fallback below a pageblock: the refill may come back short or empty).
 */
static void pcp_refill(struct pa_zone *z, struct pa_pcp *pcp, unsigned order, unsigned mt,
                       unsigned nofrag)
{
	struct pa_pool *pool = z->pool;
	raise_high(z, pcp, order);
	unsigned n = refill_count(pool, pcp, order);
	unsigned flags = ALLOC_WMARK_LOW | (mt == PA_MT_MOVABLE ? ALLOC_CMA : 0) | nofrag;
	flags |= superblock_alloc_flags(pool, mt, 0); /* the zone path decides with the gfp */
	/* A streaming CPU's extra comes as whole blocks or not at all. */
	unsigned whole_only = refill_stream_extra(pool, pcp, order, mt, n);
	n += whole_only;
	/*
	 * The list is empty; Linux adds each block a refill takes at its tail,
	 * so it serves them in the order taken. Single blocks go there now;
	 * a whole block is cut after the lock, its pieces after the last block
	 * taken before it (`after`, PA_NIL: at the head).
	 */
	struct pcp_block whole[PCP_REFILL_BLOCKS];
	uint32_t after[PCP_REFILL_BLOCKS];
	pa_lock_min_spins(&z->lock, SITE_PCP_REFILL, pcp_min_spins(pcp, (uint64_t)n << order));
	unsigned nb = 0;
	uint64_t taken = 0;
	while (n) {
		unsigned got = n > 1 && nb < PCP_REFILL_BLOCKS ?
		                       refill_take_whole(z, order, mt, flags, n, &whole[nb]) :
		                       0;
		if (got) {
			after[nb++] = pcp_last(pcp, order, mt);
			n -= got;
			taken += got;
			continue;
		}
		/*
		 * Frame by frame (a fallback, the last frames): no more than Linux
		 * takes, and as Linux's rmqueue_bulk() with no watermark check (the
		 * request passed its own), under the low watermark too.
		 */
		if (n <= whole_only)
			break;
		n -= whole_only;
		whole_only = 0;
		pa_pfn_t pfn = pageblock_rmqueue(z, order, mt, flags);
		if (pfn == PA_NIL)
			break;
		refill_link(pool, pcp, (struct pcp_block){ (uint32_t)pfn, order }, order, mt,
		            pcp_last(pcp, order, mt));
		n--;
		taken++;
	}
	z->stat[PA_ZS_PCP_REFILL] += taken << order;
	pa_unlock(&z->lock);
	for (unsigned i = 0, last = PA_NIL; i < nb; i++) /* blocks in a row follow each other */
		last = refill_link(pool, pcp, whole[i], order, mt,
		                   i && after[i] == after[i - 1] ? last : after[i]);
	if (pcp_rules_61(pool))
		return; /* high is fixed and never decays (a single node's lists) */
	pcp_decay(z, pcp);
}

/* The oldest block of a list taken off it (pcp_link_page()); PA_NIL if the list is empty. */
static pa_pfn_t pcp_pop_oldest(struct pa_pool *pool, struct pa_pcp *pcp, unsigned order,
                               unsigned type)
{
	uint32_t head = pcp_head(pcp, order, type), pfn = pcp_tail(pcp, order, type);
	if (head == PA_NIL)
		return PA_NIL;
	if (pfn == head) {
		__atomic_store_n(&pcp_head(pcp, order, type), PA_NIL,
		                 __ATOMIC_RELAXED); /* pcp_free_direct_guess() */
	} else {
		uint32_t prev = pfn_page(pool, pfn)->lru.prev;
		pfn_page(pool, prev)->lru.next = PA_NIL;
		pcp_tail(pcp, order, type) = prev;
	}
	pcp->room += 1 << order;
	return pfn;
}

/*
 * What a spill still gives back. Linux 6.19 gives back a spill or a decay a
 * batch at a time (free_pcppages_bulk() per batch), each step taking whole
 * blocks until its frames are covered: a step that meets a block larger
 * than a batch gives back that block whole, so a spill from a list of THPs
 * gives back a THP per batch of frames asked for. Before, the frames asked
 * for, one block over at most (step: 0, one step of everything).
 */
struct spill_budget {
	uint64_t left; /* frames not yet in a step */
	uint64_t open; /* frames the current step still takes */
	uint32_t step;
};

static bool budget_open(struct spill_budget *b)
{
	if (b->open)
		return true;
	if (!b->left)
		return false;
	b->open = b->step && b->left > b->step ? b->step : b->left;
	b->left -= b->open;
	return true;
}

/* Steps of a batch for the spills and decays of 6.19's per-CPU rules; drains empty lists whole. */
static uint32_t spill_step(const struct pa_pool *pool, const struct pa_pcp *pcp,
                           enum pa_lock_site site)
{
	return site == SITE_PCP_SPILL && !pcp_rules_61(pool) &&
	                       linux_rule(pool, LR_PCP_SPILL_STEPS) ?
	               pcp->batch :
	               0;
}

static void budget_take(struct spill_budget *b, unsigned order)
{
	b->open = b->open > 1ull << order ? b->open - (1ull << order) : 0;
}

/* Pop blocks off the lists from *idx on, the oldest of each first, within b or up to `max` blocks. */
static unsigned spill_take(struct pa_pool *pool, struct pa_pcp *pcp, struct spill_budget *b,
                           uint64_t order_mask, unsigned *idx, unsigned *seen,
                           struct pcp_block *out, unsigned max)
{
	unsigned lists = nr_lists(pool), n = 0;
	for (; budget_open(b) && *seen < lists && n < max; ++*seen, *idx = (*idx + 1) % lists) {
		unsigned order = *idx / PA_NR_PCP_TYPES, type = *idx % PA_NR_PCP_TYPES;
		if (!((order_mask >> order) & 1))
			continue;
		for (pa_pfn_t pfn; budget_open(b) && n < max &&
		                   (pfn = pcp_pop_oldest(pool, pcp, order, type)) != PA_NIL;) {
			out[n++] = (struct pcp_block){ (uint32_t)pfn, order };
			budget_take(b, order);
		}
		if (n == max)
			break; /* the list may hold more: come back to it */
	}
	return n;
}

static void blocks_reverse(struct pcp_block *b, unsigned n)
{
	for (unsigned i = 0, j = n - 1; n && i < j; i++, j--) {
		struct pcp_block t = b[i];
		b[i] = b[j];
		b[j] = t;
	}
}

/*
 * Merge the sorted runs a[0, na) and a[na, na + nb) in place, through tmp.
 * Runs that do not interleave are common (what one round merged lies above
 * what the next pops): those are left or swapped whole.
 */
static void blocks_merge(struct pcp_block *a, unsigned na, unsigned nb, struct pcp_block *tmp)
{
	if (!na || !nb || a[na - 1].pfn < a[na].pfn)
		return;
	memcpy(tmp, a, na * sizeof *a);
	if (a[na + nb - 1].pfn < tmp[0].pfn) {
		memmove(a, a + na, nb * sizeof *a);
		memcpy(a + nb, tmp, na * sizeof *a);
		return;
	}
	unsigned i = 0, j = na, k = 0;
	while (i < na && j < na + nb)
		a[k++] = tmp[i].pfn < a[j].pfn ? tmp[i++] : a[j++];
	while (i < na)
		a[k++] = tmp[i++];
}

/*
 * By pfn, as a natural merge sort: a spill takes blocks in the order they
 * were freed (the oldest first), so what it takes is a few runs of blocks
 * freed in rising or falling order.
 */
static void spill_sort(struct pcp_block *b, unsigned n)
{
	struct pcp_block tmp[PCP_SPILL_BLOCKS];
	uint16_t run[PCP_SPILL_BLOCKS + 1];
	unsigned nr = 0;
	for (unsigned i = 0, j; i < n; i = j) {
		bool down = i + 1 < n && b[i + 1].pfn < b[i].pfn;
		for (j = i + 1; j < n && (b[j].pfn < b[j - 1].pfn) == down; j++)
			;
		if (down)
			blocks_reverse(b + i, j - i);
		run[nr++] = (uint16_t)i;
	}
	run[nr] = (uint16_t)n;
	while (nr > 1) {
		unsigned k = 0;
		for (unsigned r = 0; r < nr; r += 2, k++) {
			if (r + 1 < nr)
				blocks_merge(b + run[r], run[r + 1] - run[r],
				             run[r + 2] - run[r + 1], tmp);
			run[k] = run[r];
		}
		run[k] = (uint16_t)n;
		nr = k;
	}
}

/*
 * Merge the popped blocks with each other, up to a pageblock, before the
 * buddy sees them: they are this CPU's, so no lock but the list lock is
 * needed, and the zone lock is then held for a few merged blocks. Sorted by
 * pfn, two buddies meet on top of a stack. The buddy ends where it would
 * have ended freeing them one by one. Returns the blocks left. List lock held.
 */
static unsigned spill_merge(struct pa_pool *pool, struct pcp_block *b, unsigned n)
{
	unsigned top = 0, pb = pool->cfg.pageblock_order;
	if (n < 2 || b[n - 1].order >= pb)
		return n; /* nothing to merge, or large blocks taken last: the buddy merges those */
	spill_sort(b, n);
	for (unsigned i = 0; i < n; i++) {
		struct pcp_block c = b[i];
		while (top && c.order < pb && b[top - 1].order == c.order &&
		       b[top - 1].pfn + (1ull << c.order) == c.pfn &&
		       !(b[top - 1].pfn & ((2ull << c.order) - 1))) {
			set_page_state(pfn_page(pool, c.pfn), PS_BODY);
			c = b[--top];
			c.order++;
		}
		b[top++] = c;
	}
	for (unsigned i = 0; i < top; i++)
		set_page_order(pfn_page(pool, b[i].pfn), b[i].order);
	return top;
}

/* Give merged blocks to the buddy under one zone-lock hold. */
static void spill_give(struct pa_zone *z, const struct pcp_block *b, unsigned n,
                       enum pa_lock_site site, unsigned min_spins)
{
	pa_lock_min_spins(&z->lock, site, min_spins);
	for (unsigned i = 0; i < n; i++) {
		pageblock_free_block(z, b[i].pfn, b[i].order);
		z->stat[PA_ZS_PCP_SPILL] += 1ull << b[i].order;
	}
	pa_unlock(&z->lock);
}

/*
 * Give `frames` frames (at least) back to the buddy, emptying one list after
 * another from list `first` on, as Linux's free_pcppages_bulk() does. A free
 * that overflows starts at the list it freed to: that list holds what the
 * CPU does not reuse, and a spill of a large order then gives back its own
 * blocks instead of walking every smaller list for frames. Blocks are taken
 * in rounds of up to PCP_SPILL_BLOCKS and merged among themselves; what a
 * round merged stays for the next to merge with, and the zone lock is
 * taken once half the room is used by blocks that did not merge. A CPU
 * that frees a run of neighbours gives back a whole spill in one hold.
 */
static void pcp_spill(struct pa_zone *z, struct pa_pcp *pcp, uint64_t frames, uint64_t order_mask,
                      unsigned first, enum pa_lock_site site)
{
	struct pa_pool *pool = z->pool;
	unsigned idx = first % nr_lists(pool), seen = 0, n, kept = 0;
	struct spill_budget budget = { .left = frames, .step = spill_step(pool, pcp, site) };
	struct pcp_block b[PCP_SPILL_BLOCKS];
	unsigned spins = site == SITE_PCP_SPILL ? pcp_min_spins(pcp, frames) : 0;
	while ((n = spill_take(pool, pcp, &budget, order_mask, &idx, &seen, b + kept,
	                       PCP_SPILL_BLOCKS - kept))) {
		kept = spill_merge(pool, b, kept + n);
		if (kept > PCP_SPILL_BLOCKS / 2) {
			spill_give(z, b, kept, site, spins);
			kept = 0;
		}
	}
	if (kept)
		spill_give(z, b, kept, site, spins);
}

struct pa_page *pcp_refill_unlock(struct pa_zone *z, struct pa_pcp *pcp, unsigned order,
                                  unsigned mt, pa_gfp_t gfp, unsigned nofrag)
{
	platform_cpu_forget(); /* now and then, a thread without rseq asks where it runs */
	/* Switched off since the caller looked: the drain has run, so put nothing back. */
	if (pcp_order_enabled(z->pool, order))
		pcp_refill(z, pcp, order, mt, nofrag);
	struct pa_page *p = pcp_take(z->pool, pcp, order, mt, gfp);
	pa_spin_unlock(&pcp->lock);
	return p;
}

/*
 * Linux 6.7's nr_pcp_free(): as many frames as were freed in a row, at
 * least a batch, and leaving a batch under the high the free met.
 */
static uint64_t spill_frames(const struct pa_pcp *pcp, uint32_t high)
{
	if (high < pcp->batch)
		return 1;
	uint64_t lo = pcp->batch, hi = high - pcp->batch, n = pcp->free_count;
	return n < lo ? lo : n > hi ? hi : n;
}

/*
 * Linux 6.7's nr_pcp_high() at a free that filled the lists, the zone
 * above its high watermark and reclaim not active: high rises to hold a
 * batch more than was freed in a row (within [high_min, high_max]) for the
 * frees to come; this one still spills at the high it met.
 */
static void raise_high_for_frees(struct pa_pcp *pcp)
{
	if (pcp_count(pcp) < pcp->high)
		return;
	uint64_t need = (uint64_t)pcp->free_count + pcp->batch;
	if (pcp->high < need)
		pcp_set_high(pcp, need < pcp->high_min ? pcp->high_min :
		                  need > pcp->high_max ? pcp->high_max :
		                                         (uint32_t)need);
}

/*
 * Linux 6.1's free_factor is halved by every allocation from the lists; the
 * fast path only counts them (ops), so the halvings are caught up here.
 */
static void free_factor_catch_up(const struct pa_pool *pool, struct pa_pcp *pcp)
{
	factor_catch_up(&pcp->free_factor, &pcp->allocs_seen, ops_total(pool, pcp, false));
}

/*
 * Linux 6.1's nr_pcp_free(): leave a batch, double what goes for each spill
 * in a row, up to batch << 5 (6.1.y's stable backport of
 * CONFIG_PCP_BATCH_SCALE_MAX, in the 6.1.192 source).
 */
static uint64_t spill_frames_61(struct pa_pcp *pcp, uint32_t high)
{
	if (high < pcp->batch)
		return 1;
	uint64_t lo = pcp->batch, hi = high - pcp->batch;
	uint64_t n = (uint64_t)pcp->batch << pcp->free_factor;
	if (n < hi && pcp->free_factor < PCP_BATCH_SCALE_MAX)
		pcp->free_factor++;
	return n < lo ? lo : n > hi ? hi : n;
}

/*
 * Does every free change high under Linux 6.7's nr_pcp_high() (reclaim
 * active, or the zone under its high watermark with a high that can move)?
 * Then every free comes to the slow path. 6.1's cap is a fixed high. List
 * lock held.
 */
static void pcp_set_slow_frees(struct pa_zone *z, struct pa_pcp *pcp)
{
	pcp->slow_frees = !pcp_rules_61(z->pool) &&
	                  (reclaim_active(z) || (below_high(z) && pcp->high_min != pcp->high_max));
	pcp_set_high(pcp, pcp->high);
}

/*
 * Linux sets and clears the bit alone: the lists keep what they hold until
 * the next free spills. 6.1's high is the cap or high_max.
 */
void pcp_set_reclaim_active(struct pa_zone *z, bool on)
{
	struct pa_pool *pool = z->pool;
	atomic_store(&z->reclaim_active, on);
	for (unsigned c = 0; c < pool->cfg.nr_cpus; c++) {
		struct pa_pcp *pcp = z->pcp[c];
		platform_spin_lock(pool, &pcp->lock, SITE_ADMIN);
		if (!pcp_rules_61(pool))
			pcp_set_slow_frees(z, pcp);
		else if (!pcp->free_factor)
			pcp_set_high(pcp, reclaim_cap(z, pcp, pcp->high_max));
		pa_spin_unlock(&pcp->lock);
	}
}

/*
 * A free under Linux 6.1's rules (free_unref_page_commit()), at a fixed high
 * (high_max). While frees run on with spills between them (free_factor is
 * not 0), a free of order 1..3 empties the lists: high-order pages on the
 * lists fragment the zone. pcp->high, what the fast path compares with, is 0
 * meanwhile, so that every free comes here to be looked at.
 */
static void pcp_free_61(struct pa_zone *z, struct pa_pcp *pcp, unsigned list)
{
	unsigned order = list / PA_NR_PCP_TYPES;
	uint32_t high = reclaim_cap(z, pcp, pcp->high_max);
	free_factor_catch_up(z->pool, pcp);
	if (pcp->free_factor && order && order <= PA_COSTLY_ORDER)
		pcp_spill(z, pcp, pcp_count(pcp), UINT64_MAX, list, SITE_PCP_SPILL);
	else if (pcp_count(pcp) >= high)
		pcp_spill(z, pcp, spill_frames_61(pcp, high), UINT64_MAX, list, SITE_PCP_SPILL);
	pcp_set_high(pcp, pcp->free_factor ? 0 : high);
}

/*
 * Linux 6.7's nr_pcp_high() while reclaim is active: each free lowers high
 * by what was freed in a row (a batch at least), down to high_min, and the
 * lists hold 4 batches at most meanwhile. Returns the high the free met.
 */
static uint32_t reclaim_lower_high(const struct pa_zone *z, struct pa_pcp *pcp)
{
	uint32_t step = pcp->free_count > pcp->batch ? pcp->free_count : pcp->batch;
	pcp_set_high(pcp, pcp->high > pcp->high_min + step ? pcp->high - step : pcp->high_min);
	return reclaim_cap(z, pcp, pcp->high);
}

/*
 * Linux 6.7's nr_pcp_high() under ZONE_BELOW_HIGH: each free lowers high
 * by what was freed in a row (a batch at least), down to high_min, and
 * spills once the lists hold high_min, as much as was freed in a row
 * (within a batch of all they hold). A CPU that only allocates keeps its
 * high, and refills by it (no refill raises it meanwhile). Returns the
 * high the free met.
 */
static uint32_t below_high_lower_high(struct pa_pcp *pcp)
{
	uint32_t step = pcp->free_count > pcp->batch ? pcp->free_count : pcp->batch;
	pcp_set_high(pcp, pcp->high > pcp->high_min + step ? pcp->high - step : pcp->high_min);
	uint32_t count = pcp_count(pcp);
	return count > pcp->high_min ? count : pcp->high_min;
}

/*
 * ZONE_BELOW_HIGH just set (zone_set_below_high()): from now on every free
 * of every CPU looks. Cleared, each CPU's next free that looks sees it
 * (pcp_spill_unlock()), as Linux's next nr_pcp_high() would. No lock held.
 */
void pcp_zone_below_high(struct pa_zone *z)
{
	for (unsigned c = 0; c < z->pool->cfg.nr_cpus; c++) {
		struct pa_pcp *pcp = z->pcp[c];
		platform_spin_lock(z->pool, &pcp->lock, SITE_ADMIN);
		pcp_set_slow_frees(z, pcp);
		pa_spin_unlock(&pcp->lock);
	}
}

/*
 * The high a free meets under Linux 6.7's nr_pcp_high(): reclaim's cap
 * first, then ZONE_BELOW_HIGH's lowering, else high rises for the frees to
 * come.
 */
static uint32_t free_high(struct pa_zone *z, struct pa_pcp *pcp)
{
	if (reclaim_active(z))
		return reclaim_lower_high(z, pcp);
	if (pcp->high_min == pcp->high_max)
		return pcp->high;
	if (below_high(z))
		return below_high_lower_high(pcp);
	uint32_t high = pcp->high;
	raise_high_for_frees(pcp);
	return high;
}

bool pcp_spill_unlock(struct pa_zone *z, struct pa_pcp *pcp, unsigned list)
{
	platform_cpu_forget(); /* now and then, a thread without rseq asks where it runs */
	if (pcp_rules_61(z->pool)) {
		pcp_free_61(z, pcp, list);
	} else {
		uint32_t high = free_high(z, pcp);
		if (pcp_count(pcp) >= high) {
			pcp_spill(z, pcp, spill_frames(pcp, high), UINT64_MAX, list,
			          SITE_PCP_SPILL);
			if (below_high(z) && above_high(z)) /* only a spill looks */
				zone_set_below_high(z, false);
		}
		pcp_decay(z, pcp);
		if (pcp->slow_frees)
			pcp_set_slow_frees(z, pcp);
	}
	pa_spin_unlock(&pcp->lock);
	return true;
}

/* The list a free just linked pfn onto: the one it heads. */
static unsigned list_headed_by(const struct pa_pcp *pcp, unsigned order, pa_pfn_t pfn)
{
	unsigned type = 0;
	while (type + 1 < PA_NR_PCP_TYPES && pcp_head(pcp, order, type) != pfn)
		type++;
	return pcp_index(order, type);
}

bool pcp_spill_top_unlock(struct pa_pcp *pcp, unsigned order, pa_pfn_t pfn)
{
	return pcp_spill_unlock(pcp->zone, pcp, list_headed_by(pcp, order, pfn));
}

/* Frees from the lists' orders outside 1..PA_COSTLY_ORDER. */
static uint64_t frees_not_costly(const struct pa_pool *pool, const struct pa_pcp *pcp)
{
	uint64_t n = ops_total(pool, pcp, true);
	for (unsigned o = 1; o <= PA_COSTLY_ORDER && o <= pool->max_order_boot; o++)
		n -= pcp->orders[o].frees;
	return n;
}

/*
 * Linux 6.7's free_frozen_page_commit(): high-order pages on the lists
 * fragment the zone, so a run of frees of orders 1..3 with none of another
 * order between (PCPF_PREV_FREE_HIGH_ORDER) that passes a batch and half of
 * high_min gives back up to batch << 5 frames at once and lowers high as
 * much. Linux keeps a batch on the lists first where the CPU's cache slice
 * holds three batches (PCPF_FREE_HIGH_BATCH): taken as so, as on every
 * machine with a megabyte of cache a CPU. 6.1's rules look at such frees in
 * pcp_free_61().
 */
bool pcp_free_costly_unlock(struct pa_pcp *pcp, unsigned order, pa_pfn_t pfn, bool full)
{
	struct pa_zone *z = pcp->zone;
	struct pa_pool *pool = z->pool;
	uint64_t before = pcp->free_count; /* Linux tests what came before this free */
	pcp_count_free(pcp, order);
	if (pcp_rules_61(pool)) {
		if (full)
			return pcp_spill_top_unlock(pcp, order, pfn);
		pa_spin_unlock(&pcp->lock);
		return true;
	}
	uint64_t others = frees_not_costly(pool, pcp);
	bool prev_costly = others == pcp->frees_at_costly;
	pcp->frees_at_costly = others;
	uint64_t cap = (uint64_t)pcp->batch << PCP_BATCH_SCALE_MAX;
	bool free_high = prev_costly && before >= pcp->batch + pcp->high_min / 2 &&
	                 pcp_count(pcp) >= pcp->batch;
	if (!free_high) {
		if (full)
			return pcp_spill_top_unlock(pcp, order, pfn);
		pa_spin_unlock(&pcp->lock);
		return true;
	}
	uint64_t n = pcp_count(pcp) < cap ? pcp_count(pcp) : cap;
	pcp_spill(z, pcp, n, UINT64_MAX, list_headed_by(pcp, order, pfn), SITE_PCP_SPILL);
	uint32_t high = pcp->high > cap + pcp->high_min ? pcp->high - (uint32_t)cap : pcp->high_min;
	pcp_set_high(pcp, high);
	pa_spin_unlock(&pcp->lock);
	return true;
}

/*
 * The frees off the inline path. init_on_free wipes the bytes first (the
 * block is ours while the list lock is held). A restore (pa_pcp_free_on())
 * puts back a block a list held, which is no free of the CPU's: what
 * Linux's heuristics read (the frees since the last allocation, whether a
 * run of orders 1..3 is under way) stays as it was, and the lists spill
 * only past high. The frame map still counts it as a free of its order.
 */
bool pcp_free_slow_unlock(struct pa_zone *z, struct pa_pcp *pcp, pa_pfn_t pfn, unsigned order,
                          unsigned type, bool restore)
{
	struct pa_pool *pool = z->pool;
	if (pool->cfg.init_on_free && pool->base)
		memset(pool->base + (pfn << pool->cfg.page_shift), 0,
		       (size_t)1 << (pool->cfg.page_shift + order));
	struct pa_page *p = pcp_listable(pool, pfn);
	if (!restore)
		return pcp_free_commit(pcp, p, pfn, order, type);
	bool in_run = frees_not_costly(pool, pcp) == pcp->frees_at_costly;
	bool full = pcp_link_page(pcp, p, pfn, order, type);
	pcp->orders[order].frees++;
	if (in_run)
		pcp->frees_at_costly = frees_not_costly(pool, pcp);
	if (full)
		return pcp_spill_top_unlock(pcp, order, pfn);
	pa_spin_unlock(&pcp->lock);
	return true;
}

void pcp_drain_cpu(struct pa_zone *z, unsigned cpu, uint64_t order_mask)
{
	struct pa_pcp *pcp = z->pcp[cpu];
	platform_spin_lock(z->pool, &pcp->lock, SITE_DRAIN);
	if (pcp_count(pcp))
		pcp_spill(z, pcp, UINT64_MAX, order_mask, 0, SITE_DRAIN);
	pa_spin_unlock(&pcp->lock);
}

/*
 * Clearing the bit comes before the drain: a free that took the list lock
 * before the drain is drained; one after it sees the bit clear under the
 * lock and goes to the buddy. Nothing of that order stays behind.
 */
void pcp_set_order(struct pa_pool *pool, unsigned order, bool on)
{
	pa_mutex_lock(&pool->pcp_order_mutex);
	if (on)
		atomic_fetch_or(&pool->pcp_orders, 1ull << order);
	else
		atomic_fetch_and(&pool->pcp_orders, ~(1ull << order));
	pcp_gates_update(pool);
	for (unsigned i = 0; !on && i < pool->nr_zones; i++)
		for (unsigned c = 0; c < pool->cfg.nr_cpus; c++)
			pcp_drain_cpu(&pool->zones[i], c, 1ull << order);
	pa_mutex_unlock(&pool->pcp_order_mutex);
}

/*
 * A gate cleared with its bit of pcp_orders, before the drain, sends the
 * fast path to the checks under the list lock or to the zone; a gate set
 * after its bit only delays the fast path by a call.
 */
void pcp_gates_update(struct pa_pool *pool)
{
	uint64_t orders = atomic_load_explicit(&pool->pcp_orders, memory_order_relaxed);
	uint64_t free_gate = orders & ((1ull << pool->free_fast_below) - 1);
	atomic_store_explicit(&pool->pcp_alloc_gate,
	                      orders & ((1ull << pool->cfg.pageblock_order) - 1),
	                      memory_order_relaxed);
	atomic_store_explicit(&pool->pcp_free_gate, free_gate, memory_order_relaxed);
	for (unsigned i = 0; i < pool->nr_zones; i++)
		for (unsigned c = 0; c < pool->cfg.nr_cpus; c++) {
			struct pa_pcp *pcp = pool->zones[i].pcp[c];
			platform_spin_lock(pool, &pcp->lock, SITE_ADMIN);
			pcp->order0_type_max = (free_gate & 1) ? PA_NR_PCP_TYPES - 1 : -1;
			pa_spin_unlock(&pcp->lock);
		}
}

static const char *const rules_names[PCP_NR_RULES] = {
	[PCP_RULES_67] = "6.7", [PCP_RULES_61] = "6.1"
};

int pcp_rules_parse(const char *s)
{
	for (int r = 0; r < PCP_NR_RULES; r++)
		if (pa_strcmp(s, rules_names[r]) == 0)
			return r;
	return -1;
}

const char *pcp_rules_name(unsigned rules)
{
	return rules < PCP_NR_RULES ? rules_names[rules] : "?";
}

/* High starts over from the new rules' high_min, as at boot. */
void pcp_set_rules(struct pa_pool *pool, enum pcp_rules rules)
{
	atomic_store(&pool->pcp_rules, rules);
	for (unsigned i = 0; i < pool->nr_zones; i++) {
		struct pa_zone *z = &pool->zones[i];
		for (unsigned c = 0; c < pool->cfg.nr_cpus; c++) {
			struct pa_pcp *pcp = z->pcp[c];
			platform_spin_lock(pool, &pcp->lock, SITE_ADMIN);
			pcp->free_factor = 0;
			pcp_set_high(pcp, 0);
			pcp_set_slow_frees(z, pcp);
			pa_spin_unlock(&pcp->lock);
		}
		pcp_setup_sizes(z);
		pa_lock(&z->lock, SITE_ADMIN); /* 6.1's have no ZONE_BELOW_HIGH: the marks differ */
		zone_set_pcp_mark(z);
		pa_unlock(&z->lock);
	}
}

/* Linux's percpu_pagelist_high_fraction: 0 auto-tunes high, N fixes it at managed / N / CPUs. */
int pcp_set_high_fraction(struct pa_pool *pool, unsigned fraction)
{
	if (fraction && fraction < PCP_MIN_HIGH_FRACTION)
		return -EINVAL;
	atomic_store(&pool->pcp_high_fraction, fraction);
	for (unsigned i = 0; i < pool->nr_zones; i++)
		pcp_setup_sizes(&pool->zones[i]);
	return 0;
}

void pa_drain_local(struct pa_pool *pool)
{
	if (!pool)
		return;
	unsigned cpu = pool_cpu(pool);
	for (unsigned i = 0; i < pool->nr_zones; i++)
		pcp_drain_cpu(&pool->zones[i], cpu, UINT64_MAX);
}

/* Drain every CPU that holds anything; true if any did. */
bool pcp_drain_all_if_any(struct pa_pool *pool)
{
	bool any = false;
	for (unsigned i = 0; i < pool->nr_zones; i++) {
		struct pa_zone *z = &pool->zones[i];
		for (unsigned c = 0; c < pool->cfg.nr_cpus; c++) {
			struct pa_pcp *pcp = z->pcp[c];
			platform_spin_lock(pool, &pcp->lock, SITE_DRAIN);
			bool held = pcp_count(pcp) != 0;
			if (held)
				pcp_spill(z, pcp, UINT64_MAX, UINT64_MAX, 0, SITE_DRAIN);
			pa_spin_unlock(&pcp->lock);
			any |= held;
		}
	}
	return any;
}

void pa_drain_all(struct pa_pool *pool)
{
	if (pool)
		pcp_drain_all_if_any(pool);
}

void pcp_drain_zone(struct pa_zone *z)
{
	for (unsigned c = 0; c < z->pool->cfg.nr_cpus; c++)
		pcp_drain_cpu(z, c, UINT64_MAX);
}

int pa_drain_zone(struct pa_pool *pool, unsigned node, enum pa_zone_type type, int all_cpus)
{
	if (!pool)
		return -EINVAL;
	if (node >= pool->nr_nodes || type >= PA_ZONE_COUNT || !pool->nodes[node].zones[type])
		return -ENOENT;
	struct pa_zone *z = pool->nodes[node].zones[type];
	if (all_cpus)
		pcp_drain_zone(z);
	else
		pcp_drain_cpu(z, pool_cpu(pool), UINT64_MAX);
	return 0;
}

void zone_fold_stats_locked(const struct pa_zone *z, uint64_t stat[PA_NR_ZONE_STATS],
                            uint64_t *alloc_order)
{
	/* Counts cover every order booted with (max_order may be lower now); alloc_order the current ones. */
	unsigned orders = z->pool->cfg.max_order + 1, counted = z->pool->max_order_boot + 1;
	for (unsigned s = 0; s < PA_NR_ZONE_STATS; s++)
		stat[s] = z->stat[s];
	stat[PA_ZS_ZONE_LOCK] = z->lock.acquired;
	for (unsigned o = 0; alloc_order && o < orders; o++)
		alloc_order[o] = z->alloc_order[o];
	for (unsigned c = 0; c < z->pool->cfg.nr_cpus; c++) {
		const struct pcp_order *ops = z->pcp[c]->orders;
		for (unsigned o = 0; o < counted; o++) {
			stat[PA_ZS_PGALLOC] += ops[o].allocs << o;
			stat[PA_ZS_ALLOC_SUCCESS] += ops[o].allocs;
			stat[PA_ZS_PGFREE] += ops[o].frees << o;
			stat[PA_ZS_FREE_CALLS] += ops[o].frees;
			if (alloc_order && o < orders)
				alloc_order[o] += ops[o].allocs;
		}
	}
}

void zone_fold_stats(struct pa_zone *z, uint64_t stat[PA_NR_ZONE_STATS], uint64_t *alloc_order)
{
	for (unsigned c = 0; c < z->pool->cfg.nr_cpus; c++)
		platform_spin_lock(z->pool, &z->pcp[c]->lock, SITE_ADMIN);
	pa_lock(&z->lock, SITE_ADMIN);
	zone_fold_stats_locked(z, stat, alloc_order);
	pa_unlock(&z->lock);
	for (unsigned c = 0; c < z->pool->cfg.nr_cpus; c++)
		pa_spin_unlock(&z->pcp[c]->lock);
}

long pa_drain_list(struct pa_pool *pool, unsigned node, enum pa_zone_type type, unsigned cpu,
                   unsigned order, unsigned pcp_type)
{
	if (!pool || pcp_type >= PA_NR_PCP_TYPES)
		return -EINVAL;
	if (node >= pool->nr_nodes || type >= PA_ZONE_COUNT || cpu >= pool->cfg.nr_cpus ||
	    !pool->nodes[node].zones[type] || order > pool->max_order_boot)
		return -ENOENT;
	struct pa_zone *z = pool->nodes[node].zones[type];
	struct pa_pcp *pcp = z->pcp[cpu];
	unsigned list = order * PA_NR_PCP_TYPES + pcp_type;
	platform_spin_lock(pool, &pcp->lock, SITE_DRAIN);
	uint64_t frames = 0;
	for (uint32_t pfn = pcp_list_head(pcp, list); pfn != PA_NIL;
	     pfn = pfn_page(pool, pfn)->lru.next)
		frames += 1ull << order;
	/* A spill from this list first takes only from it while it holds enough. */
	if (frames)
		pcp_spill(z, pcp, frames, 1ull << order, list, SITE_DRAIN);
	pa_spin_unlock(&pcp->lock);
	return (long)frames;
}

int pa_pcp_info(struct pa_pool *pool, unsigned node, enum pa_zone_type type, unsigned cpu,
                struct pa_pcp_info *info, uint64_t *blocks)
{
	if (!pool || !info)
		return -EINVAL;
	if (node >= pool->nr_nodes || type >= PA_ZONE_COUNT || cpu >= pool->cfg.nr_cpus ||
	    !pool->nodes[node].zones[type])
		return -ENOENT;
	struct pa_zone *z = pool->nodes[node].zones[type];
	struct pa_pcp *pcp = z->pcp[cpu];
	platform_spin_lock(pool, &pcp->lock, SITE_ADMIN);
	*info = (struct pa_pcp_info){ .count = pcp_count(pcp),
		                      .high = pcp_rules_61(pool) ? pcp->high_max : pcp->high,
		                      .high_min = pcp->high_min,
		                      .high_max = pcp->high_max,
		                      .batch = pcp->batch };
	for (unsigned i = 0; blocks && i < nr_lists(pool); i++) {
		uint64_t n = 0;
		for (uint32_t pfn = pcp_list_head(pcp, i); pfn != PA_NIL;
		     pfn = pfn_page(pool, pfn)->lru.next)
			n++;
		blocks[i] = n;
	}
	pa_spin_unlock(&pcp->lock);
	return 0;
}

int pa_pcp_free_on(struct pa_pool *pool, struct pa_page *page, unsigned order, unsigned cpu,
                   unsigned type)
{
	if (!pool || !page || cpu >= pool->cfg.nr_cpus || type >= PA_NR_PCP_TYPES)
		return -EINVAL;
	pa_pfn_t pfn = pa_page_to_pfn(pool, page);
	struct pa_zone *z = pfn != PA_PFN_INVALID ? zone_of_pfn(pool, pfn) : NULL;
	if (!z || order > pool_max_order(pool) || (pfn & ((1ull << order) - 1)))
		return -EINVAL;
	struct pa_pcp *pcp = z->pcp[cpu];
	platform_spin_lock(pool, &pcp->lock, SITE_PCP_FREE);
	return pcp_free_locked_on(z, pcp, pfn, order, (int)type, true) ? 0 : -EPERM;
}

int pa_pcp_set_high(struct pa_pool *pool, unsigned node, enum pa_zone_type type, unsigned cpu,
                    uint64_t high)
{
	if (!pool)
		return -EINVAL;
	if (node >= pool->nr_nodes || type >= PA_ZONE_COUNT || cpu >= pool->cfg.nr_cpus ||
	    !pool->nodes[node].zones[type])
		return -ENOENT;
	if (pcp_rules_61(pool))
		return -EOPNOTSUPP;
	struct pa_zone *z = pool->nodes[node].zones[type];
	struct pa_pcp *pcp = z->pcp[cpu];
	platform_spin_lock(pool, &pcp->lock, SITE_ADMIN);
	int rc = high < pcp->high_min || high > pcp->high_max ? -ERANGE : 0;
	if (rc == 0)
		pcp_set_high_trim(z, pcp, (uint32_t)high, SITE_ADMIN);
	pa_spin_unlock(&pcp->lock);
	return rc;
}
