/* SPDX-License-Identifier: MIT */
/*
 * Device requests: what a device, VRAM or CXL memory manager or a
 * hypervisor asks of a page allocator (the kernel's gpu_buddy modes), on
 * top of the zones and the buddy.
 *
 * A request of any size is served as blocks, the largest first, each from
 * one zone under its lock with the watermark checked (low, then min):
 * - from the zone's free lists by the pageblock policy (pageblock_rmqueue),
 *   as pa_alloc_pages() takes a block, when the request spans the pool and
 *   is not top-down; with PA_DEVICE_PREFER_CLEARED a block known zero is
 *   looked for first;
 * - from the buddy directly when the request is limited to a range or is
 *   top-down: the free blocks of the range are walked through the frame map
 *   (bottom-up or top-down), and the part wanted is cut out of the free
 *   block that covers it, the rest going back at once.
 * A contiguous request takes the power-of-two block that holds it and gives
 * the excess back (reshape()), or, when no such block is free, any free
 * range of its size ("try harder"). Whatever fails gives back what it took.
 *
 * Cleared memory lives in buddy.c (a clean prefix per free block); here a
 * block handed out says whether all of it was known zero, and a zeroing
 * allocation zeroes only the frames that were not.
 */
#include "device.h"

#include "platform/platform.h"
#include "alloc.h"
#include "buddy.h"
#include "memmap.h"
#include "pageblock.h"
#include "pcp.h"
#include "zone.h"

/* One request, decoded once. */
struct dev_ctx {
	struct pa_pool *pool;
	const struct pa_device_request *req;
	struct pa_block_list *list;
	unsigned mt, alloc_flags, wmark;
	enum pa_zone_type highest;
	const struct pa_node *node;
	pa_pfn_t lo, hi; /* the allowed range */
	bool direct;     /* a range or top-down: the buddy directly */
	bool want_clean; /* this pass takes only blocks known zero */
};

static uint64_t zone_clean(const struct pa_zone *z)
{
	return __atomic_load_n(&z->clean_pages, __ATOMIC_RELAXED);
}

bool device_pool_has_clean(const struct pa_pool *pool)
{
	for (unsigned i = 0; i < pool->nr_zones; i++)
		if (zone_clean(&pool->zones[i]))
			return true;
	return false;
}

static pa_pfn_t align_up(pa_pfn_t x, unsigned order)
{
	return (x + (1ull << order) - 1) & ~((1ull << order) - 1);
}

static pa_pfn_t align_down(pa_pfn_t x, unsigned order)
{
	return x & ~((1ull << order) - 1);
}

/* The largest aligned block at pfn that fits below end, no larger than max_order. */
static unsigned fit_order(const struct pa_pool *pool, pa_pfn_t pfn, pa_pfn_t end)
{
	unsigned order = pfn ? (unsigned)__builtin_ctzll(pfn) : pool_max_order(pool);
	if (order > pool_max_order(pool))
		order = pool_max_order(pool);
	while (pfn + (1ull << order) > end)
		order--;
	return order;
}

/* Is all of [off, off + n) of a block of size frames known zero? */
static bool clean_covers(struct pa_clean c, uint64_t size, uint64_t off, uint64_t n)
{
	return clean_count(clean_slice(c, size, off, n), n) == n;
}

void device_free_block_clean(struct pa_zone *z, pa_pfn_t pfn, unsigned order, struct pa_clean clean)
{
	struct pa_pool *pool = z->pool;
	unsigned pb = pool->cfg.pageblock_order, mt = pageblock_mt(pool, pfn);
	if (order <= pb || pageblock_first_other(pool, pfn, order, mt) == PA_NIL) {
		buddy_free_block_clean(z, pfn, order, mt, clean);
		return;
	}
	for (pa_pfn_t p = pfn; p < pfn + (1ull << order); p += 1ull << pb)
		buddy_free_block_clean(z, p, pb, pageblock_mt(pool, p),
		                       clean_slice(clean, 1ull << order, p - pfn, 1ull << pb));
}

void device_zero_dirty(struct pa_pool *pool, struct pa_page *p, unsigned order,
                       struct pa_clean clean)
{
	uint64_t n = 1ull << order, known = clean_count(clean, n);
	if (!pool->base)
		return;
	if (known < n) { /* the frames between the two known ends */
		pa_pfn_t pfn = page_pfn(pool, p) + clean.pre;
		memset(pool->base + (pfn << pool->cfg.page_shift), 0,
		       (size_t)(n - known) << pool->cfg.page_shift);
	}
	atomic_fetch_add_explicit(&pool->pool_stat[PA_PS_PGZERO_ALLOC], n - known,
	                          memory_order_relaxed);
	atomic_fetch_add_explicit(&pool->pool_stat[PA_PS_PGZERO_CLEARED], known,
	                          memory_order_relaxed);
}

/* Turn the taken block at pfn into an allocated one and count it. Zone lock held. */
static void prep(struct pa_zone *z, pa_pfn_t pfn, unsigned order, unsigned mt, pa_gfp_t gfp)
{
	struct pa_page *p = pfn_page(z->pool, pfn);
	page_prep_alloc(p, order, mt, gfp);
	set_page_flags(p, (gfp & PA_GFP_COMP) ? PF_COMP : 0); /* a body frame's stale flags go */
	z->stat[PA_ZS_PGALLOC] += 1ull << order;
	z->stat[PA_ZS_ALLOC_SUCCESS]++;
	z->alloc_order[order]++;
}

/*
 * A block of order `a` was taken at pfn (clean frames from its start) and
 * made an allocated block of order o below it: give back the upper halves.
 */
static void give_back_halves(struct pa_zone *z, pa_pfn_t pfn, unsigned o, unsigned a,
                             struct pa_clean clean)
{
	for (unsigned k = o; k < a; k++)
		device_free_block_clean(z, pfn + (1ull << k), k,
		                        clean_slice(clean, 1ull << a, 1ull << k, 1ull << k));
}

/*
 * Give back [lo, hi), free frames cut off a taken free block of type mt at
 * base of size frames that knew `clean`. Zone lock held.
 */
static void give_back_range(struct pa_zone *z, pa_pfn_t lo, pa_pfn_t hi, unsigned mt, pa_pfn_t base,
                            uint64_t size, struct pa_clean clean)
{
	while (lo < hi) {
		unsigned o = fit_order(z->pool, lo, hi);
		buddy_list_add_clean(z, lo, o, mt, clean_slice(clean, size, lo - base, 1ull << o));
		lo += 1ull << o;
	}
}

static struct pa_clean cut_out(struct pa_zone *z, pa_pfn_t head, pa_pfn_t p, unsigned o);

/*
 * Among the first blocks of the (order >= a, mt) lists, one whose first or
 * last 2^a frames begin with 2^o known zero: that part taken as a block of
 * order a, what was known of it in *clean. A bounded look, so that a zone
 * with many dirty blocks costs a request little. Zone lock held.
 */
#define CLEAN_LOOK 32

static pa_pfn_t take_cleared_mt(struct pa_zone *z, unsigned o, unsigned a, unsigned mt,
                                struct pa_clean *clean)
{
	struct pa_pool *pool = z->pool;
	for (unsigned k = a; k <= pool->cfg.max_order; k++) {
		pa_pfn_t pfn = buddy_list_peek(z, k, mt);
		for (unsigned n = 0; pfn != PA_NIL && n < CLEAN_LOOK; n++) {
			struct pa_clean c = buddy_head_clean(z, pfn);
			uint64_t top = (1ull << k) - (1ull << a);
			if (clean_covers(c, 1ull << k, 0, 1ull << o)) {
				buddy_take_block(z, pfn, a, k);
				*clean = buddy_taken_clean(z);
				return pfn;
			}
			if (clean_covers(c, 1ull << k, top, 1ull << o)) {
				*clean = cut_out(z, pfn, pfn + top, a);
				return pfn + top;
			}
			pfn = pfn_page(pool, pfn)->lru.next;
		}
	}
	return PA_NIL;
}

/*
 * The request's own type first, then the other ordinary types (and CMA for
 * movable data): memory known zero is worth taking from another type's
 * pageblock, which keeps its type, as a range request takes it.
 */
static pa_pfn_t take_cleared(struct pa_zone *z, const struct dev_ctx *c, unsigned o, unsigned a,
                             struct pa_clean *clean)
{
	pa_pfn_t pfn = take_cleared_mt(z, o, a, c->mt, clean);
	unsigned last = (c->req->gfp & PA_GFP_MOVABLE) ? PA_MT_CMA : PA_NR_PCP_TYPES - 1;
	for (unsigned mt = 0; pfn == PA_NIL && mt <= last; mt++)
		if (mt != c->mt && (mt < PA_NR_PCP_TYPES || mt == PA_MT_CMA))
			pfn = take_cleared_mt(z, o, a, mt, clean);
	return pfn;
}

/*
 * A request that does not ask for cleared memory leaves it to those that
 * do, as gpu_buddy serves it from its dirty tree: among the first blocks of
 * its own (order >= a) lists, the smallest whose first 2^a frames are not
 * known zero. PA_NIL when there is none (the lists then serve it as usual).
 */
static pa_pfn_t take_dirty(struct pa_zone *z, unsigned a, unsigned mt, struct pa_clean *clean)
{
	struct pa_pool *pool = z->pool;
	for (unsigned k = a; k <= pool->cfg.max_order; k++) {
		pa_pfn_t pfn = buddy_list_peek(z, k, mt);
		for (unsigned n = 0; pfn != PA_NIL && n < CLEAN_LOOK; n++) {
			struct pa_clean c = buddy_head_clean(z, pfn);
			if (clean_count(clean_slice(c, 1ull << k, 0, 1ull << a), 1ull << a) == 0) {
				buddy_take_block(z, pfn, a, k);
				*clean = buddy_taken_clean(z);
				return pfn;
			}
			pfn = pfn_page(pool, pfn)->lru.next;
		}
	}
	return PA_NIL;
}

/* The mark a request checks in zone z. */
static uint64_t dev_mark(const struct dev_ctx *c, const struct pa_zone *z)
{
	return z->wmark[c->wmark] + z->lowmem_reserve[c->highest];
}

/*
 * From the zone's lists: a block of order o aligned to 2^a (a >= o), the
 * watermark checked. PA_NIL if none. Zone lock held.
 */
static pa_pfn_t take_listed(struct pa_zone *z, const struct dev_ctx *c, unsigned o, unsigned a,
                            struct pa_clean *clean)
{
	for (;;) {
		if (zone_watermark_ok(z, a, dev_mark(c, z), c->alloc_flags)) {
			pa_pfn_t pfn = PA_NIL;
			struct pa_clean taken = PA_CLEAN_NONE;
			if (c->want_clean) {
				pfn = take_cleared(z, c, o, a, &taken);
			} else {
				if (zone_clean(z))
					pfn = take_dirty(z, a, c->mt, &taken);
				if (pfn == PA_NIL) {
					pfn = pageblock_rmqueue(z, a, c->mt, c->alloc_flags);
					taken = buddy_taken_clean(z);
				}
			}
			if (pfn != PA_NIL) {
				prep(z, pfn, o, c->mt, c->req->gfp);
				give_back_halves(z, pfn, o, a, taken);
				*clean = clean_slice(taken, 1ull << a, 0, 1ull << o);
				return pfn;
			}
		}
		if (c->want_clean || !zone_grow_on_demand(z))
			return PA_NIL;
	}
}

/* May a range request take the free block at head (its list, its zone)? */
static bool dev_usable(const struct pa_zone *z, const struct dev_ctx *c, pa_pfn_t head,
                       const struct pa_page *h)
{
	unsigned mt = h->mt;
	if (page_state(h) != PS_FREE || !pfn_in_zone(z, head))
		return false;
	return mt < PA_NR_PCP_TYPES || (mt == PA_MT_CMA && (c->req->gfp & PA_GFP_MOVABLE));
}

/*
 * Cut [p, p + 2^o) out of the free block at head that covers it, giving the
 * rest back with its share of the clean prefix. Zone lock held.
 */
static struct pa_clean cut_out(struct pa_zone *z, pa_pfn_t head, pa_pfn_t p, unsigned o)
{
	struct pa_page *h = pfn_page(z->pool, head);
	unsigned mt = h->mt;
	uint64_t size = 1ull << h->order;
	struct pa_clean clean = buddy_head_clean(z, head);
	buddy_list_del(z, head);
	give_back_range(z, head, p, mt, head, size, clean);
	give_back_range(z, p + (1ull << o), head + size, mt, head, size, clean);
	return clean_slice(clean, size, p - head, 1ull << o);
}

/*
 * Is [p, p + 2^o) inside one usable free block? Its head in *head, else the
 * pfn from which the block at p goes on (a candidate's next step). Zone lock.
 */
static bool dev_fits(const struct pa_zone *z, const struct dev_ctx *c, pa_pfn_t p, unsigned o,
                     pa_pfn_t *head)
{
	const struct pa_pool *pool = z->pool;
	*head = memmap_block_head(pool, p);
	if (*head == PA_NIL)
		return false;
	const struct pa_page *h = pfn_page(pool, *head);
	if (!dev_usable(z, c, *head, h) || *head + (1ull << h->order) < p + (1ull << o))
		return false;
	return !c->want_clean ||
	       clean_covers(buddy_head_clean(z, *head), 1ull << h->order, p - *head, 1ull << o);
}

/*
 * From the buddy directly: the lowest (or, top-down, the highest) block of
 * order o aligned to 2^a inside the range and the zone. Zone lock held.
 */
static pa_pfn_t take_in_range(struct pa_zone *z, const struct dev_ctx *c, unsigned o, unsigned a,
                              struct pa_clean *clean)
{
	pa_pfn_t lo = c->lo > z->start_pfn ? c->lo : z->start_pfn;
	pa_pfn_t hi = c->hi < z->end_pfn ? c->hi : z->end_pfn, head, size = 1ull << o;
	if (lo >= hi || hi - lo < size || zone_nr_free(z) < dev_mark(c, z) + size)
		return PA_NIL;
	zone_prepare_range(z, lo, hi);
	bool down = c->req->flags & PA_DEVICE_TOPDOWN;
	pa_pfn_t p = down ? align_down(hi - size, a) : align_up(lo, a);
	while (p >= lo && p + size <= hi) {
		if (dev_fits(z, c, p, o, &head)) {
			*clean = cut_out(z, head, p, o);
			prep(z, p, o, c->mt, c->req->gfp);
			return p;
		}
		if (!down) { /* past the block at p: its later frames fit no better */
			const struct pa_page *h = head != PA_NIL ? pfn_page(z->pool, head) : NULL;
			pa_pfn_t next = h ? head + block_step(h, page_state(h)) : p + 1;
			p = align_up(next > p ? next : p + 1, a);
		} else {
			pa_pfn_t below = head != PA_NIL && head < p ? head : p;
			if (below < lo + size)
				break;
			p = align_down(below - size, a);
		}
	}
	return PA_NIL;
}

static bool dev_zone_allowed(const struct dev_ctx *c, const struct pa_zone *z)
{
	return zone_gfp_allows(z, c->req->gfp) &&
	       (!(c->req->gfp & PA_GFP_THISNODE) || z->node == c->node->id);
}

/* Room in the list for n more blocks? */
static bool list_room(const struct dev_ctx *c, uint64_t n)
{
	return c->list->cap - c->list->nr >= n;
}

static void list_push(struct dev_ctx *c, pa_pfn_t pfn, unsigned order, bool cleared)
{
	c->list->blocks[c->list->nr++] =
	        (struct pa_block){ .pfn = pfn, .order = (uint8_t)order, .cleared = cleared };
}

/* One block of order o aligned to 2^a from the first zone that has it. */
static int get_block(struct dev_ctx *c, unsigned o, unsigned a)
{
	for (unsigned i = 0; i < c->node->nr_zonelist; i++) {
		struct pa_zone *z = c->node->zonelist[i];
		if (!dev_zone_allowed(c, z))
			continue;
		if (c->want_clean && zone_clean(z) < (1ull << o))
			continue;
		struct pa_clean clean = PA_CLEAN_NONE;
		pa_lock(&z->lock, SITE_ALLOC);
		pa_pfn_t pfn = c->direct ? take_in_range(z, c, o, a, &clean) :
		                           take_listed(z, c, o, a, &clean);
		pa_unlock(&z->lock);
		if (pfn != PA_NIL) {
			list_push(c, pfn, o, clean_count(clean, 1ull << o) == (1ull << o));
			return 0;
		}
	}
	return -ENOSPC;
}

/* get_block() passes: known-zero memory first when asked, then the low and the min watermark. */
static int get_block_any(struct dev_ctx *c, unsigned o, unsigned a)
{
	bool prefer = c->req->flags & PA_DEVICE_PREFER_CLEARED;
	for (unsigned pass = prefer ? 0 : 1; pass < 3; pass++) {
		c->want_clean = pass == 0;
		c->wmark = pass == 2 ? PA_WMARK_MIN : PA_WMARK_LOW;
		if (get_block(c, o, a) == 0)
			return 0;
	}
	return -ENOSPC;
}

/* Free a piece of an allocated block of this pool (checked by the caller). Zone lock held. */
static void free_piece(struct pa_zone *z, pa_pfn_t pfn, unsigned order, struct pa_clean clean)
{
	device_free_block_clean(z, pfn, order, clean);
	z->stat[PA_ZS_PGFREE] += 1ull << order;
}

/* Free one allocated block of this pool (checked by the caller). Zone lock held. */
static void free_locked(struct pa_zone *z, pa_pfn_t pfn, unsigned order, struct pa_clean clean)
{
	free_piece(z, pfn, order, clean);
	z->stat[PA_ZS_FREE_CALLS]++; /* one block freed in part */
}

/* Give back what a failed request appended, with what was known of it. */
static void rollback(struct dev_ctx *c, uint32_t nr0)
{
	while (c->list->nr > nr0) {
		const struct pa_block *b = &c->list->blocks[--c->list->nr];
		struct pa_zone *z = zone_of_pfn(c->pool, b->pfn);
		pa_lock(&z->lock, SITE_FREE);
		free_locked(z, b->pfn, b->order,
		            b->cleared ? clean_full(1ull << b->order) : PA_CLEAN_NONE);
		pa_unlock(&z->lock);
	}
}

/* The largest blocks first, down to min_order. */
static int alloc_blocks(struct dev_ctx *c, uint64_t n)
{
	const struct pa_device_request *r = c->req;
	unsigned max = pool_max_order(c->pool);
	while (n) {
		unsigned o = 63 - (unsigned)__builtin_clzll(n);
		if (o > max)
			o = max;
		int rc = -ENOSPC;
		for (;;) {
			if (!list_room(c, 1))
				return -ENOBUFS;
			rc = get_block_any(c, o, o > r->align_order ? o : r->align_order);
			if (rc == 0 || o == r->min_order)
				break;
			o--;
		}
		if (rc)
			return rc;
		n -= 1ull << o;
	}
	return 0;
}

/*
 * The allocated blocks of [s, e) become the allocated row of [ks, ke), the
 * largest aligned blocks that fit, and the rest is freed with what `clean`
 * knows of it. Zone lock held.
 */
static void reshape(struct pa_zone *z, pa_pfn_t s, pa_pfn_t e, pa_pfn_t ks, pa_pfn_t ke,
                    struct pa_clean clean, unsigned mt, pa_gfp_t gfp)
{
	struct pa_pool *pool = z->pool;
	for (pa_pfn_t p = s; p < e;) { /* the old heads become bodies */
		struct pa_page *h = pfn_page(pool, p);
		pa_pfn_t next = p + (1ull << h->order);
		set_page_state(h, PS_BODY);
		p = next;
	}
	for (pa_pfn_t p = ks; p < ke;) {
		unsigned o = fit_order(pool, p, ke);
		page_prep_alloc(pfn_page(pool, p), o, mt, gfp);
		set_page_flags(pfn_page(pool, p), (gfp & PA_GFP_COMP) ? PF_COMP : 0);
		p += 1ull << o;
	}
	pa_pfn_t cut[2][2] = { { s, ks }, { ke, e } };
	for (unsigned i = 0; i < 2; i++)
		for (pa_pfn_t p = cut[i][0]; p < cut[i][1];) {
			unsigned o = fit_order(pool, p, cut[i][1]);
			free_piece(z, p, o, clean_slice(clean, e - s, p - s, 1ull << o));
			p += 1ull << o;
		}
	z->stat[PA_ZS_FREE_CALLS]++;
}

/* Append the row of [s, e) to the list (its blocks were made by reshape()). */
static void push_row(struct dev_ctx *c, pa_pfn_t s, pa_pfn_t e, struct pa_clean clean)
{
	for (pa_pfn_t p = s; p < e;) {
		unsigned o = fit_order(c->pool, p, e);
		list_push(c, p, o, clean_covers(clean, e - s, p - s, 1ull << o));
		p += 1ull << o;
	}
}

/* Blocks in the row of [s, e). */
static uint64_t row_blocks(const struct pa_pool *pool, pa_pfn_t s, pa_pfn_t e)
{
	uint64_t n = 0;
	for (pa_pfn_t p = s; p < e; n++)
		p += 1ull << fit_order(pool, p, e);
	return n;
}

/*
 * The free stretch of the zone from p: [p, *end) of usable free blocks.
 * false when p is in no usable free block (*end: where to look next).
 */
static bool free_stretch(const struct pa_zone *z, const struct dev_ctx *c, pa_pfn_t p, pa_pfn_t hi,
                         pa_pfn_t *end)
{
	const struct pa_pool *pool = z->pool;
	bool any = false;
	*end = p;
	while (*end < hi) {
		pa_pfn_t head = memmap_block_head(pool, *end);
		if (head == PA_NIL) {
			if (!any)
				*end = *end + 1;
			return any;
		}
		const struct pa_page *h = pfn_page(pool, head);
		pa_pfn_t next = head + block_step(h, page_state(h));
		if (!dev_usable(z, c, head, h)) {
			if (!any)
				*end = next > *end ? next : *end + 1;
			return any;
		}
		any = true;
		*end = next;
	}
	if (*end > hi)
		*end = hi;
	return any;
}

/* Take the free frames [s, e) (free_stretch() found them) as a row of allocated blocks. */
static void take_stretch(struct pa_zone *z, const struct dev_ctx *c, pa_pfn_t s, pa_pfn_t e)
{
	struct pa_pool *pool = z->pool;
	for (pa_pfn_t p = s; p < e;) {
		pa_pfn_t head = memmap_block_head(pool, p);
		struct pa_page *h = pfn_page(pool, head);
		unsigned mt = h->mt;
		uint64_t size = 1ull << h->order;
		pa_pfn_t end = head + size;
		struct pa_clean clean = buddy_head_clean(z, head);
		buddy_list_del(z, head);
		give_back_range(z, head, p, mt, head, size, clean);
		give_back_range(z, e < end ? e : end, end, mt, head, size, clean);
		p = end;
	}
	for (pa_pfn_t p = s; p < e;) {
		unsigned o = fit_order(pool, p, e);
		prep(z, p, o, c->mt, c->req->gfp);
		p += 1ull << o;
	}
}

/* "Try harder": any free range of n frames aligned to 2^a in one zone. */
static int alloc_stretch(struct dev_ctx *c, uint64_t n, unsigned a)
{
	bool down = c->req->flags & PA_DEVICE_TOPDOWN;
	for (unsigned i = 0; i < c->node->nr_zonelist; i++) {
		struct pa_zone *z = c->node->zonelist[i];
		if (!dev_zone_allowed(c, z))
			continue;
		pa_pfn_t lo = c->lo > z->start_pfn ? c->lo : z->start_pfn;
		pa_pfn_t hi = c->hi < z->end_pfn ? c->hi : z->end_pfn, best = PA_NIL, end;
		if (lo >= hi || hi - lo < n)
			continue;
		pa_lock(&z->lock, SITE_ALLOC);
		if (zone_nr_free(z) >= dev_mark(c, z) + n) {
			zone_prepare_range(z, lo, hi);
			for (pa_pfn_t p = lo; p < hi && (down || best == PA_NIL); p = end) {
				if (!free_stretch(z, c, p, hi, &end))
					continue;
				pa_pfn_t s = down ? align_down(end - n, a) : align_up(p, a);
				if (end - p >= n && s >= p && s + n <= end)
					best = s;
			}
		}
		if (best != PA_NIL && !list_room(c, row_blocks(c->pool, best, best + n))) {
			pa_unlock(&z->lock);
			return -ENOBUFS;
		}
		if (best != PA_NIL) {
			take_stretch(z, c, best, best + n);
			push_row(c, best, best + n, PA_CLEAN_NONE);
		}
		pa_unlock(&z->lock);
		if (best != PA_NIL)
			return 0;
	}
	return -ENOSPC;
}

/* Set bits of v: the blocks a trimmed range of v frames leaves (no libgcc call, freestanding). */
static unsigned bits_set(uint64_t v)
{
	unsigned n = 0;
	for (; v; v &= v - 1)
		n++;
	return n;
}

/* One range of n frames: a power-of-two block trimmed to n, else any free range. */
static int alloc_contig(struct dev_ctx *c, uint64_t n)
{
	const struct pa_device_request *r = c->req;
	unsigned o = n > 1 ? 64 - (unsigned)__builtin_clzll(n - 1) : 0;
	unsigned a = o > r->align_order ? o : r->align_order;
	bool keep = r->flags & PA_DEVICE_KEEP_EXCESS;
	if (!list_room(c, keep ? 1 : bits_set(n)))
		return -ENOBUFS;
	if (o <= pool_max_order(c->pool) && get_block_any(c, o, a) == 0) {
		struct pa_block b = c->list->blocks[--c->list->nr];
		if (keep || n == (1ull << o)) {
			list_push(c, b.pfn, b.order, b.cleared);
			return 0;
		}
		struct pa_zone *z = zone_of_pfn(c->pool, b.pfn);
		struct pa_clean clean = b.cleared ? clean_full(1ull << o) : PA_CLEAN_NONE;
		pa_lock(&z->lock, SITE_FREE);
		reshape(z, b.pfn, b.pfn + (1ull << o), b.pfn, b.pfn + n, clean, c->mt, r->gfp);
		pa_unlock(&z->lock);
		push_row(c, b.pfn, b.pfn + n, clean);
		return 0;
	}
	unsigned sa = r->min_order > r->align_order ? r->min_order : r->align_order;
	return alloc_stretch(c, n, sa);
}

/* Refuse a bad request with a report naming what is wrong. */
static int dev_refuse(struct pa_pool *pool, const char *what)
{
	platform_report(pool, "pa_device_alloc: %s; refused", what);
	return -EINVAL;
}

static int dev_check(struct pa_pool *pool, const struct pa_device_request *r,
                     const struct pa_block_list *list)
{
	char what[128];
	unsigned max = pool_max_order(pool);
	if (!list->blocks && list->cap)
		return dev_refuse(pool, "the list has room but no blocks array");
	if (list->nr > list->cap)
		return dev_refuse(pool, "the list holds more blocks than its capacity");
	if (r->nr_frames == 0)
		return dev_refuse(pool, "nr_frames is 0");
	if (r->min_order > max || r->align_order > max) {
		pa_snprintf(what, sizeof what, "min_order %u / align_order %u above max_order %u",
		            r->min_order, r->align_order, max);
		return dev_refuse(pool, what);
	}
	if (r->flags & ~PA_DEVICE_ALL_FLAGS) {
		pa_snprintf(what, sizeof what, "unknown flags 0x%x",
		            r->flags & ~PA_DEVICE_ALL_FLAGS);
		return dev_refuse(pool, what);
	}
	if (r->gfp & ~PA_GFP_ALL_FLAGS) {
		pa_snprintf(what, sizeof what, "unknown gfp bits 0x%x", r->gfp & ~PA_GFP_ALL_FLAGS);
		return dev_refuse(pool, what);
	}
	pa_pfn_t end = r->end_pfn ? r->end_pfn : pool->nr_frames;
	if (r->start_pfn >= end || end > pool->nr_frames) {
		pa_snprintf(what, sizeof what,
		            "range [%llu, %llu) is empty or past the pool's %llu frames",
		            (unsigned long long)r->start_pfn, (unsigned long long)end,
		            (unsigned long long)pool->nr_frames);
		return dev_refuse(pool, what);
	}
	return 0;
}

static void dev_ctx_init(struct dev_ctx *c, struct pa_pool *pool, const struct pa_device_request *r,
                         struct pa_block_list *list)
{
	*c = (struct dev_ctx){ .pool = pool, .req = r, .list = list };
	c->mt = gfp_migratetype(r->gfp);
	c->highest = gfp_highest_zone(r->gfp);
	c->alloc_flags = ALLOC_WMARK_LOW | ((r->gfp & PA_GFP_MOVABLE) ? ALLOC_CMA : 0);
	c->lo = r->start_pfn;
	c->hi = r->end_pfn ? r->end_pfn : pool->nr_frames;
	c->direct = (r->flags & PA_DEVICE_TOPDOWN) || c->lo > 0 || c->hi < pool->nr_frames;
	unsigned cpu = pool->nr_nodes > 1 ? pool_cpu(pool) : 0;
	c->node = &pool->nodes[(uint64_t)cpu * pool->nr_nodes / pool->cfg.nr_cpus];
}

/* Zero what the request took that is not known zero (PA_GFP_ZERO, backed pools). */
static void zero_taken(struct dev_ctx *c, uint32_t nr0)
{
	for (uint32_t i = nr0; i < c->list->nr; i++) {
		const struct pa_block *b = &c->list->blocks[i];
		device_zero_dirty(c->pool, pfn_page(c->pool, b->pfn), b->order,
		                  b->cleared ? clean_full(1ull << b->order) : PA_CLEAN_NONE);
	}
}

int pa_device_alloc(struct pa_pool *pool, const struct pa_device_request *req,
                    struct pa_block_list *list)
{
	if (!pool || !req || !list)
		return -EINVAL;
	int rc = dev_check(pool, req, list);
	if (rc)
		return rc;
	struct dev_ctx c;
	dev_ctx_init(&c, pool, req, list);
	uint32_t nr0 = list->nr;
	uint64_t unit = 1ull << req->min_order;
	uint64_t n = (req->nr_frames + unit - 1) & ~(unit - 1);
	if (n < req->nr_frames || n > c.hi - c.lo)
		return -ENOSPC; /* rounding wrapped, or more than the range holds */
	rc = (req->flags & PA_DEVICE_CONTIGUOUS) ? alloc_contig(&c, n) : alloc_blocks(&c, n);
	if (rc) {
		rollback(&c, nr0);
		if (rc == -ENOSPC && !(req->gfp & PA_GFP_NOWARN))
			pool_stat_inc(pool, PA_PS_ALLOC_FAIL);
		return rc;
	}
	if (req->gfp & PA_GFP_ZERO)
		zero_taken(&c, nr0);
	return 0;
}

/* Is the block an allocated block of its order that a device free may take? Zone lock held. */
static bool dev_block_ok(const struct pa_pool *pool, const struct pa_block *b)
{
	const struct pa_page *p = pfn_page(pool, b->pfn);
	return page_state(p) == PS_ALLOC && p->order == b->order &&
	       !(page_flags(p) & (PF_CMA | PF_CONTIG));
}

static void dev_bad_free(struct pa_pool *pool, const struct pa_block *b)
{
	char what[160];
	pa_snprintf(what, sizeof what,
	            "pfn %llu: pa_device_free(order %u): not an allocated block of that order",
	            (unsigned long long)b->pfn, b->order);
	alloc_bad_free(pool, what);
}

int pa_device_free(struct pa_pool *pool, struct pa_block_list *list, unsigned flags)
{
	if (!pool || !list || (flags & ~PA_DEVICE_FREE_CLEARED) || (!list->blocks && list->nr))
		return -EINVAL;
	int refused = 0;
	for (uint32_t i = 0; i < list->nr; i++) {
		const struct pa_block *b = &list->blocks[i];
		struct pa_zone *z = zone_of_pfn(pool, b->pfn);
		bool cleared = flags & PA_DEVICE_FREE_CLEARED;
		if (z)
			pa_lock(&z->lock, SITE_FREE);
		if (!z || b->order > pool->max_order_boot || !dev_block_ok(pool, b)) {
			if (z)
				pa_unlock(&z->lock);
			dev_bad_free(pool, b);
			refused++;
			continue;
		}
		if (pool->cfg.init_on_free && pool->base && !cleared) {
			alloc_wipe_block(z, b->pfn,
			                 b->order); /* init_on_free: zero, so known zero */
			cleared = true;
		}
		free_locked(z, b->pfn, b->order,
		            cleared ? clean_full(1ull << b->order) : PA_CLEAN_NONE);
		pa_unlock(&z->lock);
	}
	list->nr = 0;
	return refused;
}

/* The list's range [*s, *e) if it is one contiguous row of allocated blocks of zone z. */
static bool list_range(struct pa_pool *pool, const struct pa_block_list *list, struct pa_zone *z,
                       pa_pfn_t *s, pa_pfn_t *e)
{
	*s = list->blocks[0].pfn;
	*e = *s;
	for (uint32_t i = 0; i < list->nr; i++) {
		const struct pa_block *b = &list->blocks[i];
		if (b->pfn != *e || b->order > pool->max_order_boot ||
		    zone_of_pfn(pool, b->pfn) != z ||
		    !range_in_zone(z, b->pfn, b->pfn + (1ull << b->order)) ||
		    !dev_block_ok(pool, b))
			return false;
		*e += 1ull << b->order;
	}
	return true;
}

int pa_device_trim(struct pa_pool *pool, struct pa_block_list *list, uint64_t new_frames,
                   pa_pfn_t start)
{
	if (!pool || !list || !list->blocks || list->nr == 0 || list->nr > list->cap ||
	    new_frames == 0)
		return -EINVAL;
	struct pa_zone *z = zone_of_pfn(pool, list->blocks[0].pfn);
	if (!z)
		return -EINVAL;
	pa_pfn_t s, e;
	pa_lock(&z->lock, SITE_FREE);
	if (!list_range(pool, list, z, &s, &e)) {
		pa_unlock(&z->lock);
		return -EINVAL;
	}
	pa_pfn_t ks = start == PA_PFN_INVALID ? s : start, ke = ks + new_frames;
	if (ks < s || ke > e || ke < ks) {
		pa_unlock(&z->lock);
		return -EINVAL;
	}
	if (row_blocks(pool, ks, ke) > list->cap) {
		pa_unlock(&z->lock);
		return -ENOBUFS;
	}
	const struct pa_page *h = pfn_page(pool, s);
	unsigned mt = page_mt(h);
	pa_gfp_t gfp = (page_flags(h) & PF_COMP) ? PA_GFP_COMP : 0;
	reshape(z, s, e, ks, ke, PA_CLEAN_NONE, mt, gfp);
	pa_unlock(&z->lock);
	struct dev_ctx c = { .pool = pool, .list = list };
	list->nr = 0;
	push_row(&c, ks, ke, PA_CLEAN_NONE);
	return 0;
}

struct pa_page *device_alloc_zeroed(struct pa_pool *pool, pa_gfp_t gfp, unsigned order)
{
	struct pa_device_request r = { .nr_frames = 1ull << order, .gfp = gfp };
	struct dev_ctx c;
	struct pa_block_list none = { 0 };
	dev_ctx_init(&c, pool, &r, &none);
	c.want_clean = true;
	c.wmark = PA_WMARK_LOW;
	for (unsigned i = 0; i < c.node->nr_zonelist; i++) {
		struct pa_zone *z = c.node->zonelist[i];
		if (!dev_zone_allowed(&c, z) || zone_clean(z) < (1ull << order))
			continue;
		struct pa_clean clean = PA_CLEAN_NONE;
		pa_lock(&z->lock, SITE_ALLOC);
		pa_pfn_t pfn = take_listed(z, &c, order, order, &clean);
		pa_unlock(&z->lock);
		if (pfn != PA_NIL) {
			struct pa_page *p = pfn_page(pool, pfn);
			device_zero_dirty(pool, p, order, clean);
			return p;
		}
	}
	return NULL;
}
