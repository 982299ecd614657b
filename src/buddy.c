/* SPDX-License-Identifier: MIT */
/*
 * The buddy free lists: add, delete, merge and split. No policy lives here:
 * which list to take from is the caller's business (alloc.c, pageblock.c).
 *
 * Each zone has one doubly linked list per (order, migratetype), threaded
 * through the head descriptors of the free blocks by 32-bit pfn links, plus
 * a bitmap per migratetype of the orders whose list is not empty, so the
 * smallest fit is one count-trailing-zeros. Every function here runs with the
 * zone lock held (or during boot, before the zone is visible).
 */
#include "buddy.h"

#include "memmap.h"
#include "pageblock.h"
#include "reporting.h"
#include "shuffle.h"
#include "superblock.h"
#include "zone.h"

static inline uint32_t *list_head(struct pa_zone *z, unsigned order, unsigned mt)
{
	return &z->list_head[order * PA_MT_COUNT + mt];
}

/* Block counts; the callers account free_pages once per operation, not per level. */
static inline void count_add(struct pa_zone *z, unsigned order, unsigned mt, uint64_t n)
{
	z->nr_free_mt[order * PA_MT_COUNT + mt] += n;
}

/* The list that untouched chunks stand behind: max order, MOVABLE (as every pageblock starts). */
static inline bool untouched_list(const struct pa_zone *z, unsigned order, unsigned mt)
{
	return order == z->pool->cfg.max_order && mt == PA_MT_MOVABLE;
}

/*
 * The zone's list arrays, read once into locals: descriptor fields are
 * bytes, and a byte store may alias anything, so without them the compiler
 * reloads every pointer after each store of a merge or split level.
 */
struct lists {
	struct pa_page *map;
	uint32_t *head, *tail;
	uint64_t *nr_free_mt, *nonempty;
	unsigned max_order;
};

static inline struct lists lists_of(struct pa_zone *z)
{
	return (struct lists){ z->pool->map,  z->list_head, z->list_tail,
		               z->nr_free_mt, z->nonempty,  z->pool->cfg.max_order };
}

/*
 * A list's nonempty bits change under the zone lock, but the per-CPU lists
 * read them without it (zone_has_free_block()): stored whole.
 */
static inline void nonempty_store(uint64_t *w, uint64_t bits)
{
	__atomic_store_n(w, bits, __ATOMIC_RELAXED);
}

/* A descriptor becomes the head of a free block of this order and type, with these flags. */
static inline __attribute__((always_inline)) void mark_free_flags(struct pa_page *p, unsigned order,
                                                                  unsigned mt, unsigned flags)
{
	set_page_state(p, PS_FREE);
	set_page_order(p, order);
	p->mt = (uint8_t)mt;
	set_page_flags(p, flags);
}

static inline __attribute__((always_inline)) void mark_free(struct pa_page *p, unsigned order,
                                                            unsigned mt)
{
	mark_free_flags(p, order, mt, 0);
}

/*
 * Cleared memory. A free head with PF_CLEARED says which of its frames are
 * known zero: the first pre (in the head) and the last suf (in the next
 * frame's descriptor, a body frame, for a block of order 1 or more), so
 * every merge and split level costs O(1) whatever the sizes (struct
 * pa_clean). Merging keeps what each buddy knew at its outer end; what lay
 * between is dropped (counted out of clean_pages), as Xen's first-dirty
 * index drops what follows it. A split hands each part its share. Every
 * free head written another way has no PF_CLEARED, so knowledge is only
 * ever lost, never made up. clean_pages is the sum of clean_count() over
 * the free heads on the lists.
 */
static inline struct pa_clean head_clean(const struct pa_page *p)
{
	if (likely(!(page_flags(p) & PF_CLEARED)))
		return PA_CLEAN_NONE;
	uint64_t pre = p->clean, suf = p->order ? p[1].clean : pre;
	return (struct pa_clean){ pre, suf };
}

/*
 * Record what is known zero of the free block at p (its order written);
 * returns what was stored: counts are kept in 32 bits, so a block above
 * 2^32 frames keeps less.
 */
static inline struct pa_clean set_head_clean(struct pa_page *p, unsigned order, struct pa_clean c)
{
	unsigned flags = page_flags(p) & ~PF_CLEARED;
	c.pre = c.pre > UINT32_MAX ? UINT32_MAX : c.pre;
	c.suf = c.suf > UINT32_MAX ? UINT32_MAX : c.suf;
	if (clean_any(c)) {
		p->clean = (uint32_t)c.pre;
		if (order)
			p[1].clean = (uint32_t)c.suf;
		flags |= PF_CLEARED;
	}
	set_page_flags(p, flags);
	return c;
}

/* Link-time bookkeeping: store c on the head, counted as c already; the zone learns what was kept. */
static __attribute__((noinline)) void store_clean(struct pa_zone *z, struct pa_page *p,
                                                  unsigned order, struct pa_clean c)
{
	struct pa_clean kept = set_head_clean(p, order, c);
	zone_clean_add(z, clean_count(kept, 1ull << order) - clean_count(c, 1ull << order));
}

struct pa_clean buddy_head_clean(const struct pa_zone *z, pa_pfn_t pfn)
{
	return head_clean(pfn_page(z->pool, pfn));
}

/* Thread a block in at the head of its list; its descriptor and counts are written already. */
static inline __attribute__((always_inline)) void list_insert(const struct lists *l, pa_pfn_t pfn,
                                                              unsigned order, unsigned mt)
{
	struct pa_page *p = &l->map[pfn];
	uint32_t *head = &l->head[order * PA_MT_COUNT + mt];
	uint32_t next = *head;
	p->lru.prev = PA_NIL;
	p->lru.next = next;
	if (next != PA_NIL)
		l->map[next].lru.prev = (uint32_t)pfn;
	else
		l->tail[order * PA_MT_COUNT + mt] =
		        (uint32_t)pfn; /* the first block is the last too */
	*head = (uint32_t)pfn;
}

/* Link a free block at the head of its list: the most recently freed is the cache-hottest. */
static inline __attribute__((always_inline)) void list_link(const struct lists *l, pa_pfn_t pfn,
                                                            unsigned order, unsigned mt)
{
	mark_free(&l->map[pfn], order, mt);
	list_insert(l, pfn, order, mt);
	nonempty_store(&l->nonempty[mt], l->nonempty[mt] | 1ull << order);
	l->nr_free_mt[order * PA_MT_COUNT + mt]++;
}

/*
 * The halves of the last split go on their lists where the split would have
 * put them, each at the head: nothing has touched the lists since, because
 * every buddy operation but freeing the split block again comes here first.
 */
static __attribute__((noinline)) void split_link(struct pa_zone *z)
{
	struct lists l = lists_of(z);
	pa_pfn_t pfn = z->split.pfn;
	z->split.pfn = PA_NIL;
	for (unsigned o = z->split.high; o-- > z->split.low;) {
		list_insert(&l, pfn + (1ull << o), o, z->split.mt);
		l.nr_free_mt[o * PA_MT_COUNT + z->split.mt]++;
	}
}

static inline void split_settle(struct pa_zone *z)
{
	if (unlikely(z->split.pfn != PA_NIL))
		split_link(z);
}

/*
 * The upper halves of the block at pfn from order low up, one a step: the
 * next is as far again from the first (a stride in bytes, which doubles).
 */
struct half_walk {
	struct pa_page *half;
	uintptr_t stride;
};

static inline struct half_walk half_walk(const struct lists *l, pa_pfn_t pfn, unsigned low)
{
	return (struct half_walk){ &l->map[pfn + (1ull << low)], sizeof(struct pa_page) << low };
}

static inline void half_next(struct half_walk *w)
{
	w->half = (struct pa_page *)((char *)w->half + w->stride);
	w->stride <<= 1;
}

/*
 * Give back the upper halves of a block taken at pfn from order high down to
 * low, as free blocks on no list yet: written, so that scanners see them as
 * the eager split would leave them, and counted on read (zone_free_count()),
 * the nonempty bits set.
 */
static inline void split_defer(struct pa_zone *z, const struct lists *l, pa_pfn_t pfn, unsigned low,
                               unsigned high, unsigned mt, unsigned flags)
{
	uint64_t halves = (1ull << high) - (1ull << low);
	/* mark_free_flags() in one store a level: the order is the only byte that changes */
	uint32_t head = page_head(PS_FREE, low, mt, flags), step = page_head(0, 1, 0, 0);
	uint32_t end = page_head(PS_FREE, high, mt, flags);
	struct half_walk w = half_walk(l, pfn, low);
	for (; head != end; head += step, half_next(&w))
		__atomic_store_n(&w.half->head, head, __ATOMIC_RELEASE);
	z->split.listed = l->nonempty[mt] & halves;
	nonempty_store(&l->nonempty[mt], l->nonempty[mt] | halves);
	z->split.pfn = (uint32_t)pfn;
	z->split.low = (uint8_t)low;
	z->split.high = (uint8_t)high;
	z->split.mt = (uint8_t)mt;
}

/*
 * The block of the last split is freed again: each level of the merge finds
 * its buddy free with its order and type, so merge them all at once. No list
 * changed since the split, so each holds blocks again exactly if it held
 * some before. Returns the order the block reached.
 */
static inline unsigned split_merge(struct pa_zone *z, const struct lists *l, pa_pfn_t pfn)
{
	unsigned mt = z->split.mt, low = z->split.low, high = z->split.high;
	const struct pa_page *end = &l->map[pfn + (1ull << high)];
	for (struct half_walk w = half_walk(l, pfn, low); w.half != end; half_next(&w))
		set_page_state(w.half, PS_BODY);
	nonempty_store(&l->nonempty[mt],
	               l->nonempty[mt] & (~((1ull << high) - (1ull << low)) | z->split.listed));
	z->split.pfn = PA_NIL;
	return high;
}

/*
 * Link a block at the tail of its list, where allocations come last: a
 * block whose merge is likely (buddy_merge_likely()), one moved to another
 * type's list, a shuffled max-order block.
 */
static void list_link_tail(const struct lists *l, pa_pfn_t pfn, unsigned order, unsigned mt)
{
	unsigned i = order * PA_MT_COUNT + mt;
	uint32_t tail = l->tail[i];
	if (l->head[i] == PA_NIL) {
		list_link(l, pfn, order, mt);
		return;
	}
	struct pa_page *p = &l->map[pfn];
	mark_free(p, order, mt);
	p->lru.prev = tail;
	p->lru.next = PA_NIL;
	l->map[tail].lru.next = (uint32_t)pfn;
	l->tail[i] = (uint32_t)pfn;
	l->nr_free_mt[i]++;
}

void buddy_relink_max(struct pa_zone *z, unsigned mt, const uint32_t *pfns, uint64_t n)
{
	struct pa_pool *pool = z->pool;
	split_settle(z);
	for (uint64_t i = 0; i < n; i++) {
		struct pa_page *p = pfn_page(pool, pfns[i]);
		p->lru.prev = i ? pfns[i - 1] : PA_NIL;
		p->lru.next = i + 1 < n ? pfns[i + 1] : PA_NIL;
	}
	*list_head(z, pool->cfg.max_order, mt) = n ? pfns[0] : PA_NIL;
	z->list_tail[pool->cfg.max_order * PA_MT_COUNT + mt] = n ? pfns[n - 1] : PA_NIL;
}

void buddy_reset_tails(struct pa_zone *z)
{
	split_settle(z);
	for (unsigned i = 0; i < (z->pool->cfg.max_order + 1) * PA_MT_COUNT; i++) {
		uint32_t tail = PA_NIL;
		for (uint32_t p = z->list_head[i]; p != PA_NIL; p = pfn_page(z->pool, p)->lru.next)
			tail = p;
		z->list_tail[i] = tail;
	}
}

/* The last block left a list: was it the only one? Untouched chunks stand behind one list. */
static inline void list_unlink_last(struct pa_zone *z, const struct lists *l, uint32_t prev,
                                    unsigned order, unsigned mt)
{
	l->tail[order * PA_MT_COUNT + mt] = prev;
	if (prev == PA_NIL &&
	    !(order == l->max_order && unlikely(z->nr_untouched) && untouched_list(z, order, mt)))
		nonempty_store(&l->nonempty[mt], l->nonempty[mt] & ~(1ull << order));
}

/* Unlink a free block of that order and type; its descriptor keeps them. */
static inline __attribute__((always_inline)) void
list_unlink(struct pa_zone *z, const struct lists *l, pa_pfn_t pfn, unsigned order, unsigned mt)
{
	struct pa_page *p = &l->map[pfn];
	unsigned i = order * PA_MT_COUNT + mt;
	uint32_t prev = p->lru.prev, next = p->lru.next;
	if (prev != PA_NIL)
		l->map[prev].lru.next = next;
	else
		l->head[i] = next;
	if (next != PA_NIL)
		l->map[next].lru.prev = prev;
	else
		list_unlink_last(z, l, prev, order, mt);
	l->nr_free_mt[i]--;
}

/* Link a free block at the head of its list, or at its tail, with what is known zero of it. */
static void list_add_block(struct pa_zone *z, pa_pfn_t pfn, unsigned order, unsigned mt, bool tail,
                           struct pa_clean clean)
{
	pa_assert(z->pool, (pfn & ((1ull << order) - 1)) == 0 && order <= z->pool->cfg.max_order);
	split_settle(z);
	struct lists l = lists_of(z);
	if (tail)
		list_link_tail(&l, pfn, order, mt);
	else
		list_link(&l, pfn, order, mt);
	zone_free_add(z, 1ull << order);
	superblock_free_hook(z->pool, pfn, order, true);
	if (clean_any(clean)) {
		zone_clean_add(z, clean_count(clean, 1ull << order));
		store_clean(z, pfn_page(z->pool, pfn), order, clean);
	}
}

void buddy_list_add(struct pa_zone *z, pa_pfn_t pfn, unsigned order, unsigned mt)
{
	list_add_block(z, pfn, order, mt, false, PA_CLEAN_NONE);
}

void buddy_list_del(struct pa_zone *z, pa_pfn_t pfn)
{
	split_settle(z);
	struct lists l = lists_of(z);
	const struct pa_page *p = &l.map[pfn];
	pa_assert(z->pool, p->state == PS_FREE);
	if (unlikely(page_flags(p) & PF_CLEARED)) { /* leaves the lists: its knowledge with it */
		zone_clean_add(z, 0 - clean_count(head_clean(p), 1ull << p->order));
		set_page_flags(&l.map[pfn], page_flags(p) & ~PF_CLEARED);
	}
	zone_free_add(z, 0 - (1ull << p->order));
	superblock_free_hook(z->pool, pfn, p->order, false);
	list_unlink(z, &l, pfn, p->order, p->mt);
}

void buddy_list_add_clean(struct pa_zone *z, pa_pfn_t pfn, unsigned order, unsigned mt,
                          struct pa_clean clean)
{
	list_add_block(z, pfn, order, mt, false, clean);
}

/*
 * A block changes list, not content: it keeps what is known zero, and goes
 * to the tail of its new list, as Linux's move_to_free_list() puts it.
 */
void buddy_list_move(struct pa_zone *z, pa_pfn_t pfn, unsigned new_mt)
{
	unsigned order = pfn_page(z->pool, pfn)->order;
	struct pa_clean clean = head_clean(pfn_page(z->pool, pfn));
	buddy_list_del(z, pfn);
	list_add_block(z, pfn, order, new_mt, true, clean);
}

/* CMA, ISOLATE and HIGHATOMIC pageblocks never merge with another type. */
static inline bool mt_mergeable(unsigned mt)
{
	return mt < PA_NR_PCP_TYPES;
}

/* list_link_tail() out of line, so that the lists of its callers can stay in registers. */
static __attribute__((noinline)) void link_tail(struct pa_zone *z, pa_pfn_t pfn, unsigned order,
                                                unsigned mt)
{
	struct lists l = lists_of(z);
	list_link_tail(&l, pfn, order, mt);
}

/*
 * Link a block merged as far as it goes (at the tail when `tail`, or when
 * shuffling picks it), and wake free page reporting if it is large enough.
 */
static inline __attribute__((always_inline)) void link_merged(struct pa_zone *z,
                                                              const struct lists *l, pa_pfn_t pfn,
                                                              unsigned order, unsigned mt,
                                                              bool tail)
{
	struct pa_pool *pool = z->pool;
	if (unlikely(tail) || (unlikely(order == l->max_order) && unlikely(pool->cfg.shuffle) &&
	                       shuffle_pick_tail(z)))
		link_tail(z, pfn, order, mt);
	else
		list_link(l, pfn, order, mt);
	if (unlikely(order >=
	             atomic_load_explicit(&pool->reporting_notify_order, memory_order_relaxed)))
		reporting_notify(pool);
}

/*
 * What two buddies of `half` frames know, merged (clean_merge()); what lay
 * between their known ends is dropped from the zone's count.
 */
static __attribute__((noinline)) struct pa_clean merge_clean(struct pa_zone *z,
                                                             struct pa_clean mine,
                                                             const struct pa_page *bp,
                                                             uint64_t half, bool mine_upper)
{
	struct pa_clean theirs = head_clean(bp);
	struct pa_clean m =
	        mine_upper ? clean_merge(theirs, mine, half) : clean_merge(mine, theirs, half);
	zone_clean_add(z, clean_count(m, 2 * half) - clean_count(mine, half) -
	                          clean_count(theirs, half));
	return m;
}

/*
 * Linux's buddy_merge_likely(): a block whose buddy is not free while the
 * buddy of the pair they make is free may well merge two levels up soon, so
 * it goes to the tail of its list, where allocations come last. Not within
 * two orders of the top (Linux: MAX_PAGE_ORDER - 1 and up).
 */
static inline bool merge_likely(const struct pa_zone *z, const struct lists *l, pa_pfn_t pfn,
                                unsigned order)
{
	if (order + 2 > l->max_order)
		return false;
	pa_pfn_t higher = (pfn & ~(1ull << order)) ^ (2ull << order);
	if (higher - z->start_pfn >= z->end_pfn - z->start_pfn)
		return false;
	const struct pa_page *hp = &l->map[higher];
	return page_state_relaxed(hp) == PS_FREE && page_order(hp) == order + 1 &&
	       (order + 1 < z->pool->cfg.pageblock_order || pfn_in_zone(z, higher));
}

/*
 * Merge a free block with free buddies of the same order, then link it. A
 * buddy is free exactly when its head descriptor says PS_FREE with that
 * order: descriptors of holes say PS_HOLE and those of absent sections read
 * as zero, so no pfn validity check is needed. The zone span check keeps
 * blocks inside a zone. Out of line: the merge back of the last split
 * mostly reaches the max order and needs none of this.
 */
static __attribute__((noinline)) void
merge_and_link(struct pa_zone *z, pa_pfn_t pfn, unsigned order, unsigned mt, struct pa_clean clean)
{
	struct pa_pool *pool = z->pool;
	struct lists l = lists_of(z);
	unsigned max_order = pool->cfg.max_order, pb_order = pool->cfg.pageblock_order;
	pa_pfn_t start = z->start_pfn, span = z->end_pfn - z->start_pfn;
	for (; order < max_order; order++) {
		pa_pfn_t bit = 1ull << order, buddy = pfn ^ bit;
		if (buddy - start >= span)
			break; /* outside the zone (below start, it wraps) */
		if (order >= pb_order && unlikely(!pfn_in_zone(z, buddy)))
			break; /* another zone's block inside the span (hotplug) */
		struct pa_page *bp = &l.map[buddy];
		if (page_state_relaxed(bp) != PS_FREE || page_order(bp) != order)
			break;
		unsigned bmt = bp->mt;
		if (unlikely(bmt != mt)) {
			if (order >= pb_order && (!mt_mergeable(mt) || !mt_mergeable(bmt)))
				break;
			/* The merged block is all one type: the freed side's. */
			pageblock_set_mt_range(pool, buddy, order, mt);
		}
		if (unlikely(clean_any(clean) || (page_flags(bp) & PF_CLEARED)))
			clean = merge_clean(z, clean, bp, bit, pfn & bit);
		list_unlink(z, &l, buddy, order, bmt);
		set_page_state(&l.map[pfn | bit], PS_BODY); /* the upper half's head */
		pfn &= ~bit;
	}
	link_merged(z, &l, pfn, order, mt, merge_likely(z, &l, pfn, order));
	if (unlikely(clean_any(clean)))
		store_clean(z, &l.map[pfn], order, clean);
}

/* The knowledge of a block merged with the dirty halves of the last split, orders [low, high). */
static __attribute__((noinline)) struct pa_clean clean_up(struct pa_zone *z, struct pa_clean c,
                                                          unsigned low, unsigned high)
{
	struct pa_clean m = c;
	for (unsigned k = low; k < high; k++)
		m = clean_merge(m, PA_CLEAN_NONE, 1ull << k);
	zone_clean_add(z, clean_count(m, 1ull << high) - clean_count(c, 1ull << low));
	return m;
}

/*
 * Free a block of which `clean` is known zero, merging with free buddies of
 * the same order (merge_and_link()).
 */
static inline __attribute__((always_inline)) void
free_block(struct pa_zone *z, pa_pfn_t pfn, unsigned order, unsigned mt, struct pa_clean clean)
{
	struct pa_pool *pool = z->pool;
	if (unlikely(order > pool->cfg.max_order)) {
		/* Allocated before max_order was lowered (ctl max_order): freed as max-order pieces. */
		unsigned m = pool->cfg.max_order;
		for (uint64_t i = 0; i < 1ull << (order - m); i++)
			buddy_free_block_clean(
			        z, pfn + (i << m), m, mt,
			        clean_slice(clean, 1ull << order, i << m, 1ull << m));
		return;
	}
	if (unlikely(clean_any(clean)))
		zone_clean_add(z, clean_count(clean, 1ull << order));
	zone_free_add(z, 1ull << order);
	superblock_free_hook(pool, pfn, order, true);
	if (z->split.pfn == pfn && z->split.low == order && z->split.mt == mt) {
		struct lists l = lists_of(z);
		/* The halves of a deferred split know nothing (take_block()). */
		unsigned low = order;
		order = split_merge(z, &l, pfn);
		if (unlikely(clean_any(clean)))
			clean = clean_up(z, clean, low, order);
		if (likely(order == l.max_order)) { /* no buddy left to look at */
			link_merged(z, &l, pfn, order, mt, false);
			if (unlikely(clean_any(clean)))
				store_clean(z, &l.map[pfn], order, clean);
			return;
		}
	} else {
		split_settle(z);
	}
	merge_and_link(z, pfn, order, mt, clean);
}

void buddy_free_block(struct pa_zone *z, pa_pfn_t pfn, unsigned order, unsigned mt)
{
	free_block(z, pfn, order, mt, PA_CLEAN_NONE);
}

void buddy_free_block_clean(struct pa_zone *z, pa_pfn_t pfn, unsigned order, unsigned mt,
                            struct pa_clean clean)
{
	free_block(z, pfn, order, mt, clean);
}

/*
 * A split of a block that knows something: each half is linked at once with
 * its share (the halves of a deferred split know nothing), in the order
 * split_link() would link them, and counted.
 */
static __attribute__((noinline)) void split_clean(struct pa_zone *z, const struct lists *l,
                                                  pa_pfn_t pfn, unsigned low, unsigned high,
                                                  unsigned mt, unsigned flags, struct pa_clean c)
{
	for (unsigned o = high; o-- > low;) {
		struct pa_page *half = &l->map[pfn + (1ull << o)];
		struct pa_clean hc = clean_slice(c, 1ull << high, 1ull << o, 1ull << o);
		list_link(l, pfn + (1ull << o), o, mt);
		set_page_flags(half, flags);
		zone_clean_add(z, clean_count(hc, 1ull << o));
		store_clean(z, half, o, hc);
	}
}

/*
 * take_block() of a block that knows something: uncounted, what it knows
 * of the part taken kept for a zeroing allocation to skip
 * (buddy_taken_clean()), the rest handed to the halves, linked at once.
 */
static __attribute__((noinline)) void take_block_clean(struct pa_zone *z, pa_pfn_t pfn,
                                                       unsigned low, unsigned high)
{
	struct lists l = lists_of(z);
	struct pa_page *p = &l.map[pfn];
	unsigned mt = p->mt, flags = page_flags(p) & PF_REPORTED;
	struct pa_clean c = head_clean(p);
	zone_clean_add(z, 0 - clean_count(c, 1ull << high));
	z->taken_clean = clean_slice(c, 1ull << high, 0, 1ull << low);
	z->taken_known = true;
	set_page_flags(p, page_flags(p) & ~PF_CLEARED);
	list_unlink(z, &l, pfn, high, mt);
	zone_free_add(z, 0 - (1ull << low));
	superblock_free_hook(z->pool, pfn, low, false);
	if (high > low)
		split_clean(z, &l, pfn, low, high, mt, flags, c);
}

/*
 * Remove a free block of order `high` and give back its upper halves down to
 * order `low`, linked only when another operation needs them (split_defer).
 * The halves of a reported block stay reported: the device has all of it.
 */
static inline __attribute__((always_inline)) void take_block(struct pa_zone *z, pa_pfn_t pfn,
                                                             unsigned low, unsigned high)
{
	split_settle(z);
	struct lists l = lists_of(z);
	unsigned raw = page_flags(&l.map[pfn]), mt = l.map[pfn].mt, flags = raw & PF_REPORTED;
	if (unlikely(raw & PF_CLEARED)) {
		take_block_clean(z, pfn, low, high);
		return;
	}
	z->taken_known = false;
	list_unlink(z, &l, pfn, high, mt);
	zone_free_add(z, 0 - (1ull << low));
	superblock_free_hook(z->pool, pfn, low, false);
	if (high > low)
		split_defer(z, &l, pfn, low, high, mt, flags);
}

struct pa_clean buddy_taken_clean(const struct pa_zone *z)
{
	return z->taken_known ? z->taken_clean : PA_CLEAN_NONE;
}

void buddy_take_block(struct pa_zone *z, pa_pfn_t pfn, unsigned low, unsigned high)
{
	take_block(z, pfn, low, high);
}

static __attribute__((noinline)) pa_pfn_t list_first_untouched(struct pa_zone *z, unsigned order,
                                                               unsigned mt)
{
	buddy_materialise(z, zone_untouched_pop(z));
	return *list_head(z, order, mt);
}

static inline __attribute__((always_inline)) pa_pfn_t list_first(struct pa_zone *z, unsigned order,
                                                                 unsigned mt)
{
	split_settle(z);
	pa_pfn_t pfn = *list_head(z, order, mt);
	if (unlikely(pfn == PA_NIL) && z->nr_untouched && untouched_list(z, order, mt))
		return list_first_untouched(z, order, mt);
	return pfn;
}

pa_pfn_t buddy_list_first(struct pa_zone *z, unsigned order, unsigned mt)
{
	return list_first(z, order, mt);
}

pa_pfn_t buddy_take_first(struct pa_zone *z, unsigned low, unsigned high, unsigned mt)
{
	pa_pfn_t pfn = list_first(z, high, mt);
	take_block(z, pfn, low, high);
	return pfn;
}

pa_pfn_t buddy_take_smallest(struct pa_zone *z, unsigned order, unsigned mt)
{
	int o = buddy_first_order(z, order, mt);
	return o < 0 ? PA_NIL : buddy_take_first(z, order, (unsigned)o, mt);
}

pa_pfn_t buddy_list_peek(struct pa_zone *z, unsigned order, unsigned mt)
{
	split_settle(z);
	return z->list_head[order * PA_MT_COUNT + mt];
}

static uint64_t chunk_blocks(const struct pa_zone *z)
{
	return 1ull << (z->pool->cfg.chunk_order - z->pool->cfg.max_order);
}

void buddy_add_untouched(struct pa_zone *z, pa_pfn_t chunk)
{
	unsigned mo = z->pool->cfg.max_order;
	uint64_t i = (chunk - z->chunk_base) >> z->pool->cfg.chunk_order;
	split_settle(z);
	z->untouched[i / 64] |= 1ull << (i % 64);
	if (i / 64 > z->untouched_hint || !z->nr_untouched)
		z->untouched_hint = i / 64;
	z->nr_untouched++;
	count_add(z, mo, PA_MT_MOVABLE, chunk_blocks(z));
	nonempty_store(&z->nonempty[PA_MT_MOVABLE], z->nonempty[PA_MT_MOVABLE] | 1ull << mo);
	zone_free_add(z, 1ull << z->pool->cfg.chunk_order);
	superblock_free_hook(z->pool, chunk, z->pool->cfg.chunk_order, true);
}

/*
 * The blocks were counted when the chunk was added: uncount them, then link
 * them in address order, so that the list hands out the highest first, as
 * it would had every block been freed at boot.
 */
void buddy_materialise(struct pa_zone *z, pa_pfn_t chunk)
{
	unsigned mo = z->pool->cfg.max_order;
	uint64_t n = chunk_blocks(z);
	split_settle(z);
	struct lists l = lists_of(z);
	count_add(z, mo, PA_MT_MOVABLE, 0 - n);
	for (uint64_t b = 0; b < n; b++) {
		list_link(&l, chunk + (b << mo), mo, PA_MT_MOVABLE);
		set_page_flags(&l.map[chunk + (b << mo)],
		               PF_UNTOUCHED); /* pa_validate skips its body */
	}
}
