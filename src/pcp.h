/* SPDX-License-Identifier: MIT */
/*
 * The per-CPU lists (pcp.c), with the inline fast paths that pa_alloc_pages()
 * and pa_free_pages() (alloc.c) take: a CPU's lists, their lock, and the
 * claim of a freed block by one compare-and-swap of its descriptor.
 */
#ifndef PA_PCP_H
#define PA_PCP_H

#include "platform/platform.h"
#include "memmap.h"
#include "pageblock.h"

/*
 * Whose rules size the lists: Linux 6.7's (high auto-tuned between
 * high_min and high_max, decayed once a second) or Linux 6.1's (high fixed
 * at the low watermark's share, refills of one batch, and a run of frees
 * that reaches a high-order page empties the lists), as a replay of a 6.1
 * kernel wants.
 */
enum pcp_rules { PCP_RULES_67, PCP_RULES_61, PCP_NR_RULES };

/* Linux 6.1's list rules (fixed high, no ZONE_BELOW_HIGH) rather than 6.7's? */
static inline bool pcp_rules_61(const struct pa_pool *pool)
{
	return atomic_load_explicit(&pool->pcp_rules, memory_order_relaxed) == PCP_RULES_61;
}

/* Linux's CONFIG_PCP_BATCH_SCALE_MAX: runs of refills or frees scale a batch to batch << 5. */
#define PCP_BATCH_SCALE_MAX 5

/*
 * One order's lists of one CPU: a list per PCP type, and what went through
 * them. head[PA_NR_PCP_TYPES] stays empty (PA_NIL): an allocation indexes
 * head by its gfp type bits, and both bits set find it empty and go to the
 * refill, which takes the movable list (gfp_migratetype()). A list's tail
 * means something only while its head is not PA_NIL.
 */
struct pcp_order {
	/* Blocks allocated from and freed to the lists; the zone's pgalloc,
	 * pgfree and per-order counts are folded from these on read. */
	uint64_t allocs, frees;
	uint32_t head[PA_NR_PCP_TYPES + 1];
	uint32_t tail[PA_NR_PCP_TYPES];
};

/*
 * One CPU's lists for one zone: a list per (order, PCP type) for every order
 * 0..max_order, so any order can be switched on at run time. Blocks on them
 * are out of the buddy (PS_PCP) and count as reserved frames. Aligned to a
 * cache line so that two CPUs' lists never share one.
 */
struct pa_pcp {
	struct pa_spin lock;
	struct pa_zone *zone; /* whose lists: the fast paths find them without the zone */
	/*
	 * Every field is read and written under the lock; the heads are also
	 * stored relaxed-atomically (plain moves all the same), for the peek of
	 * pcp_free_direct_guess().
	 */
	/*
	 * limit minus the frames on the lists (pcp_count()): a free that takes
	 * it to 0 or below goes to the slow path (a spill), one subtraction and
	 * one branch. limit is high, or 0 while every free must look under
	 * Linux 6.7's rules (slow_frees); pcp_set_high() and
	 * pcp_set_slow_frees() keep the difference. (limit and slow_frees sit in
	 * what would be padding below: the struct stays six cache lines, order
	 * 0's fields at the start of the sixth.)
	 */
	int32_t room;
	uint32_t high; /* Linux's pcp->high: spill from this many frames on the lists */
	/*
	 * The highest pageblock list bits (pageblock_list_bits()) whose order-0
	 * frees go on the lists: PA_NR_PCP_TYPES - 1, or -1 while order 0's
	 * free gate is shut. pcp_gates_update() writes it under the lock before
	 * a switch drains, so that the fast path's one compare of the type
	 * under the lock also reads the switch where a drain can't miss it.
	 */
	int64_t order0_type_max;
	uint32_t high_min, high_max;
	uint32_t batch;      /* blocks per refill or spill, in order-0 frames */
	uint32_t free_count; /* frames freed in a row, no longer counted from batch << 5 on */
	/* Refills in a row without a free: scales the refill (order 0). Halved by each free
	 * as of frees_seen: the fast path only counts frees (pcp.c catches up). */
	uint32_t alloc_factor;
	uint32_t limit;
	uint64_t frees_seen;
	/* Frees of orders outside 1..PA_COSTLY_ORDER at the last one inside (Linux's
	 * PCPF_PREV_FREE_HIGH_ORDER while unchanged; pcp_free_costly_unlock()). */
	uint64_t frees_at_costly;
	uint64_t last_decay_ns;
	/* pcp_rules=6.1: Linux 6.1's free_factor, and the allocations it was last halved up to. */
	uint32_t free_factor;
	/*
	 * Linux 6.7's nr_pcp_high() changes high at every free: while the zone's
	 * ZONE_RECLAIM_ACTIVE or ZONE_BELOW_HIGH is set, every free comes to
	 * the slow path (pcp_set_slow_frees()).
	 */
	bool slow_frees;
	uint64_t allocs_seen;
	/*
	 * [order], 0..max_order_boot: sized at boot, at the end so that order
	 * 0's fields sit at fixed offsets for the fast paths. Per-list counts
	 * are walked on read.
	 */
	struct pcp_order orders[];
} __attribute__((aligned(64)));

/* Frames on a CPU's lists. */
static inline uint32_t pcp_count(const struct pa_pcp *pcp)
{
	return pcp->limit - (uint32_t)pcp->room;
}

static inline void pcp_set_limit(struct pa_pcp *pcp, uint32_t limit)
{
	pcp->room += (int32_t)(limit - pcp->limit);
	pcp->limit = limit;
}

static inline void pcp_set_high(struct pa_pcp *pcp, uint32_t high)
{
	pcp->high = high;
	pcp_set_limit(pcp, pcp->slow_frees ? 0 : high);
}

/* A list's number, as spills walk them and pa_pcp_info() reports them. */
#define pcp_index(order, type)     ((order)*PA_NR_PCP_TYPES + (type))
/* The head of the (order, type) list, and of list number i. */
#define pcp_head(pcp, order, type) ((pcp)->orders[order].head[type])
#define pcp_tail(pcp, order, type) ((pcp)->orders[order].tail[type])
#define pcp_list_head(pcp, i)      pcp_head(pcp, (i) / PA_NR_PCP_TYPES, (i) % PA_NR_PCP_TYPES)

int pcp_init_zone(struct pa_zone *zone);
void pcp_destroy_zone(struct pa_zone *zone);
/* Batch and high from the zone's size and watermarks (Linux's formulas). */
void pcp_setup_sizes(struct pa_zone *zone);
/* Is order on the per-CPU lists now? */
static inline bool pcp_order_enabled(const struct pa_pool *pool, unsigned order)
{
	return (atomic_load_explicit(&pool->pcp_orders, memory_order_relaxed) >> order) & 1;
}

/* Is bit order of a gate word (pcp_alloc_gate, pcp_free_gate) set? Never for 64 and up. */
static inline bool pcp_gate_open(const _Atomic uint64_t *gate, unsigned order)
{
	return order < 64 && (atomic_load_explicit(gate, memory_order_relaxed) >> order) & 1;
}
/* The same for an order known to be below 64 (checked before, or a constant). */
static inline bool pcp_gate_bit(const _Atomic uint64_t *gate, unsigned order)
{
	return (atomic_load_explicit(gate, memory_order_relaxed) >> order) & 1;
}

/*
 * Slow halves of the fast paths below, entered with the list lock held and
 * leaving it released, so that the fast paths end in tail calls and keep
 * their registers to themselves.
 */
struct pa_page *pcp_refill_unlock(struct pa_zone *zone, struct pa_pcp *pcp, unsigned order,
                                  unsigned mt, pa_gfp_t gfp, unsigned nofrag);
/* Spill from list `list` (pcp_index) on, where the overflowing free went. */
bool pcp_spill_unlock(struct pa_zone *zone, struct pa_pcp *pcp, unsigned list);
/* Every CPU's high of the zone to high_min: ZONE_BELOW_HIGH was just set. No lock held. */
void pcp_zone_below_high(struct pa_zone *zone);
/* The same from the list whose top is pfn (the free that overflowed): the fast path keeps no type. */
bool pcp_spill_top_unlock(struct pa_pcp *pcp, unsigned order, pa_pfn_t pfn);
/* A free of order 1..PA_COSTLY_ORDER just linked (full: the lists reach high): Linux's free_high. */
bool pcp_free_costly_unlock(struct pa_pcp *pcp, unsigned order, pa_pfn_t pfn, bool full);
bool pcp_free_slow_unlock(struct pa_zone *zone, struct pa_pcp *pcp, pa_pfn_t pfn, unsigned order,
                          unsigned type, bool restore);

/* The top block of a list taken off it, still PS_PCP; NULL if the list is empty. */
static inline struct pa_page *pcp_unlink(struct pa_pool *pool, struct pa_pcp *pcp, unsigned order,
                                         size_t type)
{
	uint32_t pfn = pcp_head(pcp, order, type);
	if (pfn == PA_NIL)
		return NULL;
	struct pa_page *p = pfn_page(pool, pfn);
	__atomic_store_n(&pcp_head(pcp, order, type), p->lru.next,
	                 __ATOMIC_RELAXED); /* pcp_free_direct_guess() */
	pcp->room += 1 << order;
	return p;
}

/*
 * A list is a stack for allocations and frees, through lru.next: the most
 * recently freed block is the cache-hottest. Spills take the oldest, from
 * the tail back through lru.prev, as Linux's free_pcppages_bulk() takes
 * list_last_entry(): what stays on the lists is what was freed last. The
 * head's prev is not kept. Returns whether the lists reach high now
 * (struct pa_pcp), from the room before, so that the room is updated in place.
 */
static inline bool pcp_link_page(struct pa_pcp *pcp, struct pa_page *p, pa_pfn_t pfn,
                                 unsigned order, size_t type)
{
	bool full = pcp->room <= 1 << order;
	uint32_t old = pcp_head(pcp, order, type);
	p->lru.next = old;
	if (likely(old != PA_NIL))
		p[(int64_t)old - (int64_t)pfn].lru.prev = (uint32_t)pfn; /* the map is one array */
	else
		pcp_tail(pcp, order, type) = (uint32_t)pfn;
	__atomic_store_n(&pcp_head(pcp, order, type), (uint32_t)pfn,
	                 __ATOMIC_RELAXED); /* pcp_free_direct_guess() */
	pcp->room -= 1 << order;
	return full;
}

/*
 * A block whose state is not PS_PCP yet, made one that may go on a list.
 * A block on a list has no owner and no pins, and of its flags at most
 * PF_REPORTED, so that pcp_prep() writes only what an allocation changes.
 */
static inline struct pa_page *pcp_listable(struct pa_pool *pool, pa_pfn_t pfn)
{
	struct pa_page *p = pfn_page(pool, pfn);
	set_page_flags(p, page_flags(p) & PF_REPORTED);
	set_page_owner(p, 0);
	set_page_pins(p, 0);
	set_page_state(p, PS_PCP);
	return p;
}

/*
 * A block popped off a list becomes an allocated one: order, owner and pins
 * are already right (pcp_listable(), pcp_claim()), and of the flags only
 * PF_COMP may be added (a reported block stays marked: pa_page_reported()).
 * The state goes last, with release order, as page_prep_fields() does.
 */
static inline struct pa_page *pcp_prep(struct pa_pcp *pcp, struct pa_page *p, unsigned order,
                                       unsigned mt, pa_gfp_t gfp)
{
	p->private = 0;
	set_page_mt(p, mt);
	if (gfp & PA_GFP_COMP)
		set_page_flags(p, page_flags(p) | PF_COMP);
	set_page_state(p, PS_ALLOC);
	pcp->orders[order].allocs++;
	pcp->free_count >>= 1;
	return p;
}

/* The top block of the (order, mt) list made an allocated one; NULL if the list is empty. */
static inline struct pa_page *pcp_take(struct pa_pool *pool, struct pa_pcp *pcp, unsigned order,
                                       unsigned mt, pa_gfp_t gfp)
{
	struct pa_page *p = pcp_unlink(pool, pcp, order, mt);
	return likely(p) ? pcp_prep(pcp, p, order, mt, gfp) : NULL;
}

#ifdef PA_RSEQ_LOCK
#define PA_STR_(x) #x
#define PA_STR(x)  PA_STR_(x)
/*
 * The owner's list lock without an atomic: a restartable sequence that
 * checks it still runs on cpu, finds the lock free and stores 1, the store
 * being its commit. Another thread on the same CPU can only run between two
 * instructions of it by preempting it, which restarts it (the kernel moves
 * it to the abort handler): the check and the store are one step for every
 * thread of that CPU. A remote taker (platform.c) swaps its token in with
 * a compare-and-swap, then has every sequence in flight on that CPU
 * restarted (membarrier's rseq fence) and reads the word again: still its
 * token, it holds the lock; 1, an owner committed first and holds it. A
 * sequence that starts after the swap sees the token and gives up. The
 * lock is released as any: a store of 0. Aborted, or on another CPU (the
 * thread moved, or its id was wrapped to nr_cpus): busy, the zone path.
 */
static inline bool pcp_rseq_trylock(const struct pa_pool *pool, struct pa_spin *s, unsigned cpu)
{
	__asm__ goto(".pushsection __rseq_cs, \"aw\"\n\t"
	             ".balign 32\n"
	             "333:\n\t"
	             ".long 0, 0\n\t"                    /* version, flags */
	             ".quad 331f, 332f - 331f, 334f\n\t" /* start, length, abort */
	             ".popsection\n\t"
	             "leaq 333b(%%rip), %%rax\n\t"
	             "movq %%rax, %%fs:(%[cs])\n\t"
	             "movq %[cpu_off], %%rax\n"
	             "331:\n\t"
	             "cmpl %[cpu], %%fs:(%%rax)\n\t"
	             "jne %l[busy]\n\t"
	             "cmpl $0, (%[lock])\n\t"
	             "jne %l[busy]\n\t"
	             "movl $1, (%[lock])\n"
	             "332:\n\t"
	             ".pushsection __rseq_failure, \"ax\"\n\t"
	             ".long " PA_STR(PA_RSEQ_SIG) "\n"
	                                          "334:\n\t"
	                                          "jmp %l[busy]\n\t"
	                                          ".popsection"
	             :
	             : [cs] "r"(pool->rseq_cs_off), [cpu_off] "m"(pool->cpu_off), [cpu] "r"(cpu),
	               [lock] "r"(&s->v)
	             : "rax", "memory", "cc"
	             : busy);
	return true;
busy:
	return false;
}
#endif

/*
 * The owner's trylock of its CPU's lists: by restartable sequence where the
 * pool can (pcp_rseq_trylock()), else one compare-and-swap of 0 to 1 (it
 * leaves a remote taker's token alone; with no plain read first: as fast
 * as pa_spin_trylock() on the hot pair, 26.3-26.7 ns against 26.7-26.9 ns
 * with pcp_rseq=0, and 5 instructions fewer). cpu is the id the lists were
 * picked by.
 */
static inline bool pcp_trylock(const struct pa_pool *pool, struct pa_pcp *pcp, unsigned cpu)
{
#ifdef PA_RSEQ_LOCK
	if (likely(pool->pcp_rseq))
		return pcp_rseq_trylock(pool, &pcp->lock, cpu);
#endif
	(void)pool;
	(void)cpu;
	uint32_t free_word = 0;
	return atomic_compare_exchange_strong_explicit(&pcp->lock.v, &free_word, 1,
	                                               memory_order_acquire, memory_order_relaxed);
}

/* The owner found its list lock busy: counted; its CPU id may be stale, so it is asked again. */
static inline void pcp_busy(struct pa_pcp *pcp, enum pa_lock_site site)
{
	atomic_fetch_add_explicit(&pcp->lock.busy[site], 1, memory_order_relaxed);
	platform_cpu_forget();
}

/*
 * Is this descriptor word (one load of p->word) the head of an allocated
 * block of order, and no CMA allocation? State, order and flags are in the
 * word, so one compare checks them all; an order of 256 or more never
 * matches. A descriptor of an absent frame reads as zero and fails.
 */
static inline bool pcp_claimable(uint64_t w, unsigned order)
{
	uint64_t mask =
	        PAGE_WORD_BYTE(0, 0xff) | PAGE_WORD_BYTE(1, 0xff) | PAGE_WORD_BYTE(3, PF_CMA);
	uint64_t want = PAGE_WORD_BYTE(0, PS_ALLOC) | PAGE_WORD_BYTE(1, 1) * order;
	return (w & mask) == want;
}

/*
 * Take a claimable block (word w) for a list: PS_ALLOC -> PS_PCP, and in
 * the same compare-and-swap flags, owner and pins cleared (used memory is
 * not reported any more). A compare-and-swap, not a store: compaction may be
 * isolating the folio under the zone lock, or a second free of the block be
 * racing on another CPU; the loser finds the word changed.
 */
static inline bool pcp_claim(struct pa_page *p, uint64_t w)
{
	uint64_t keep = PAGE_WORD_BYTE(1, 0xff) | PAGE_WORD_BYTE(2, 0xff) |
	                PAGE_WORD_BYTE(6, 0xff) | PAGE_WORD_BYTE(7, 0xff);
	return __atomic_compare_exchange_n(&p->word, &w, (w & keep) | PAGE_WORD_BYTE(0, PS_PCP),
	                                   false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static inline uint64_t page_word(const struct pa_page *p)
{
	return __atomic_load_n(&p->word, __ATOMIC_RELAXED);
}

/* Both, for a block whose word is not read yet. */
static inline bool pcp_free_claim(struct pa_page *p, unsigned order)
{
	uint64_t w = page_word(p);
	return pcp_claimable(w, order) && pcp_claim(p, w);
}

/*
 * Frees in a row (pcp_prep() halves them), counted as Linux counts them:
 * not from batch << 5 on, so that a halving starts from at most that.
 */
static inline void pcp_count_free(struct pa_pcp *pcp, unsigned order)
{
	if (pcp->free_count < pcp->batch << PCP_BATCH_SCALE_MAX)
		pcp->free_count += 1u << order;
}

/*
 * A claimed block onto the type's list, spilling when the lists pass high.
 * Leaves the list lock released.
 */
static inline bool pcp_free_commit(struct pa_pcp *pcp, struct pa_page *p, pa_pfn_t pfn,
                                   unsigned order, size_t type)
{
	bool full = pcp_link_page(pcp, p, pfn, order, type); /* the CAS made it PS_PCP */
	pcp->orders[order].frees++;
	if (order != 0 && order <= PA_COSTLY_ORDER) /* folds away in order 0's inline path */
		return pcp_free_costly_unlock(pcp, order, pfn, full);
	pcp_count_free(pcp, order);
	if (unlikely(full))
		return pcp_spill_top_unlock(pcp, order, pfn);
	pa_spin_unlock(&pcp->lock);
	return true;
}

/* May a free of this order skip the lists? Linux 6.1's rules look at every free
 * (pcp_spill_unlock()); Linux keeps every one (pcp/huge_direct=0). */
static inline bool pcp_free_may_go_direct(const struct pa_pool *pool, unsigned order)
{
	return order >= pool->cfg.pageblock_order && !pcp_rules_61(pool) &&
	       atomic_load_explicit(&pool->pcp_huge_direct, memory_order_relaxed);
}

/*
 * Does a block of a pageblock or more go straight to the buddy? It waits
 * on its list only while the list is empty and high has room for it: one
 * is what a CPU that frees and allocates it again reuses (a refill's spare
 * counts), and a spill would give back just it. Blocks freed in bulk skip
 * the list, whose stack would only hand them back in reverse. List lock
 * held: count and high are plain, so that the order-0 fast paths update
 * them in place.
 */
static inline bool pcp_free_direct(const struct pa_pool *pool, const struct pa_pcp *pcp,
                                   unsigned order, unsigned type)
{
	return pcp_free_may_go_direct(pool, order) &&
	       (pcp_head(pcp, order, type) != PA_NIL || pcp->room <= (int64_t)(1ull << order));
}

/*
 * Its first half without the list lock, from the head alone: a huge block
 * whose list holds one goes straight to the buddy, with no atomic more than
 * the buddy path's (blocks freed in bulk). A stale head only decides one
 * free's way, both right; the lock makes the rest exact.
 */
static inline bool pcp_free_direct_guess(const struct pa_pool *pool, const struct pa_pcp *pcp,
                                         unsigned order, unsigned type)
{
	return pcp_free_may_go_direct(pool, order) &&
	       __atomic_load_n(&pcp_head(pcp, order, type), __ATOMIC_RELAXED) != PA_NIL;
}

/* The list a free of a pageblock of type mt waits on: HIGHATOMIC and CMA on the movable one. */
static inline unsigned pcp_type(unsigned mt)
{
	return mt < PA_NR_PCP_TYPES ? mt : PA_MT_MOVABLE;
}

/*
 * Free onto this CPU's list of PCP type `type` (< 0: the pageblock's, where
 * HIGHATOMIC and CMA blocks wait on the movable one), its lock held; false when
 * the zone path must decide (the free is bad, a huge block goes straight to
 * the buddy, the order was switched off meanwhile, the pageblock is
 * isolated, or a CMA pageblock's block is a CMA allocation, which only
 * pa_cma_release() frees). A spill returns a block to the buddy by its
 * pageblock's type, whatever list it waited on. A restore puts back what a
 * list held (pcp_free_slow_unlock()). Leaves the list lock released either way.
 */
static inline bool pcp_free_locked_on(struct pa_zone *z, struct pa_pcp *pcp, pa_pfn_t pfn,
                                      unsigned order, int list_type, bool restore)
{
	struct pa_pool *pool = z->pool;
	struct pa_page *p = pfn_page(pool, pfn);
	unsigned mt = pageblock_mt(pool, pfn);
	unsigned type = list_type < 0 ? pcp_type(mt) : (unsigned)list_type;
	if (unlikely(pcp_free_direct(pool, pcp, order, type) || !pcp_order_enabled(pool, order) ||
	             (mt >= PA_MT_CMA && (mt == PA_MT_ISOLATE || (page_flags(p) & PF_CMA))) ||
	             !pcp_free_claim(p, order))) {
		pa_spin_unlock(&pcp->lock);
		return false;
	}
	if (unlikely(pool->cfg.init_on_free || restore))
		return pcp_free_slow_unlock(z, pcp, pfn, order, type, restore);
	return pcp_free_commit(pcp, p, pfn, order, type);
}

/* Onto the list of the pageblock's type. */
static inline bool pcp_free_locked(struct pa_zone *z, struct pa_pcp *pcp, pa_pfn_t pfn,
                                   unsigned order)
{
	return pcp_free_locked_on(z, pcp, pfn, order, -1, false);
}

/* pcp_free_locked() with the list lock taken first; false also when it is busy. */
static inline bool pcp_free(struct pa_zone *z, unsigned cpu, pa_pfn_t pfn, unsigned order)
{
	struct pa_pcp *pcp = z->pcp[cpu];
	if (unlikely(!pcp_trylock(z->pool, pcp, cpu))) {
		pcp_busy(pcp, SITE_PCP_FREE);
		return false;
	}
	return pcp_free_locked(z, pcp, pfn, order);
}

/* Give back to the buddy every block of the orders in mask from one CPU's lists. */
void pcp_drain_cpu(struct pa_zone *zone, unsigned cpu, uint64_t order_mask);
/* Every CPU's lists of the zone back to the buddy (Linux's drain_all_pages(zone)). */
void pcp_drain_zone(struct pa_zone *zone);
/* Drain every CPU's lists; true if any held a block (the allocation slow path retries then). */
bool pcp_drain_all_if_any(struct pa_pool *pool);
/* 0 (auto-tuned high) or at least 8; -EINVAL otherwise. Resizes every CPU's lists. */
int pcp_set_high_fraction(struct pa_pool *pool, unsigned fraction);
/* "6.7" or "6.1" -> enum pcp_rules; -1 for anything else. */
int pcp_rules_parse(const char *s);
const char *pcp_rules_name(unsigned rules);
void pcp_set_rules(struct pa_pool *pool, enum pcp_rules rules);
/*
 * Linux's ZONE_RECLAIM_ACTIVE on or off: while on, each CPU's lists hold at
 * most 4 batches (nr_pcp_high()). Under 6.7's rules the cap is applied at
 * each free, which lowers high; high is what the tuning left after.
 */
void pcp_set_reclaim_active(struct pa_zone *zone, bool on);
/* Switch an order on or off; off drains it from every CPU. */
void pcp_set_order(struct pa_pool *pool, unsigned order, bool on);
/* The gate words from pcp_orders, after each change of it. */
void pcp_gates_update(struct pa_pool *pool);
/* A zone's counters with every CPU's folded in (alloc_order may be NULL); takes the locks. */
void zone_fold_stats(struct pa_zone *zone, uint64_t stat[PA_NR_ZONE_STATS], uint64_t *alloc_order);
/* The same with the zone's list locks and zone lock held. */
void zone_fold_stats_locked(const struct pa_zone *zone, uint64_t stat[PA_NR_ZONE_STATS],
                            uint64_t *alloc_order);

/*
 * Where cpu_pcp holds a CPU's lists for gfp: by the two type bits, which the
 * fast path also takes as the list's type (struct pcp_order); odd slots are
 * the movable request's zone.
 */
static inline size_t cpu_pcp_slot(unsigned cpu, pa_gfp_t gfp)
{
	_Static_assert(PA_GFP_MOVABLE == PA_MT_MOVABLE && PA_GFP_RECLAIMABLE == PA_MT_RECLAIMABLE &&
	                       PA_MT_UNMOVABLE == 0 && PA_NR_PCP_TYPES == 3,
	               "the gfp type bits are the list's type; both set index the empty head");
	return (size_t)cpu * 4 + (gfp & (PA_GFP_MOVABLE | PA_GFP_RECLAIMABLE));
}

#endif /* PA_PCP_H */
