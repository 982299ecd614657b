/*
 * The allocation and free entry points.
 *
 * alloc: gfp -> (zonelist, migratetype, flags) -> per allowed zone: take the
 * zone lock, check the watermark for the order, take the smallest block of the
 * type, else fall back by the pageblock policy -> mark the head -> zero
 * outside the lock. The slow path retries at the min watermark (half of it
 * for PA_GFP_HIGH), then gives back the HIGHATOMIC reserve, then fails with a
 * counted and (unless NOWARN) reported failure.
 *
 * free: check the head under the zone lock (a bad free is reported, counted
 * and refused, nothing changes), then merge into the buddy lists.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Linux's ALLOC_* flags, as far as they matter here. */
enum alloc_flags {
	ALLOC_WMARK_MIN = 0,
	ALLOC_WMARK_LOW = 1,
	ALLOC_WMARK_MASK = 3,
	ALLOC_MIN_RESERVE = 1u << 2, /* PA_GFP_HIGH: may use half of the min reserve */
	ALLOC_HIGHATOMIC = 1u << 3,  /* high-order PA_GFP_HIGH: may use the atomic reserve */
};

/* One allocation request, decoded once from the gfp flags. */
struct alloc_ctx {
	struct pa_pool *pool;
	pa_gfp_t gfp;
	unsigned order;
	unsigned mt;
	unsigned flags;
	const struct pa_node *node;   /* preferred node: the calling CPU's */
	enum pa_zone_type highest;    /* highest zone type allowed */
	pa_pfn_t below_pfn;           /* PA_GFP_DMA32: zones must end at or below this */
};

static const struct pa_node *local_node(struct pa_pool *pool)
{
	if (pool->nr_nodes == 1)
		return &pool->nodes[0]; /* no need to ask the platform for the CPU */
	unsigned cpu = pool->plat.cpu_id(pool->plat.ctx) % pool->cfg.nr_cpus;
	return &pool->nodes[(uint64_t)cpu * pool->nr_nodes / pool->cfg.nr_cpus];
}

static void alloc_ctx_init(struct alloc_ctx *ac, struct pa_pool *pool, pa_gfp_t gfp, unsigned order)
{
	ac->pool = pool;
	ac->gfp = gfp;
	ac->order = order;
	ac->mt = gfp_migratetype(gfp);
	ac->flags = ALLOC_WMARK_LOW;
	if (gfp & PA_GFP_HIGH)
		ac->flags |= ALLOC_MIN_RESERVE | (order > 0 ? ALLOC_HIGHATOMIC : 0);
	ac->node = local_node(pool);
	ac->highest = (gfp & PA_GFP_MOVABLE) ? PA_ZONE_MOVABLE : PA_ZONE_NORMAL;
	ac->below_pfn = PA_PFN_INVALID;
	if (gfp & PA_GFP_DMA32) {
		ac->highest = PA_ZONE_NORMAL;
		ac->below_pfn = (4ull << 30) >> pool->cfg.page_shift;
	}
}

static bool zone_allowed(const struct alloc_ctx *ac, const struct pa_zone *z)
{
	if (z->type > ac->highest || z->end_pfn > ac->below_pfn)
		return false;
	return !(ac->gfp & PA_GFP_THISNODE) || z->node == ac->node->id;
}

/* Free frames on the HIGHATOMIC lists: what normal requests may not count on. */
static uint64_t free_highatomic(const struct pa_zone *z)
{
	uint64_t n = 0;
	for (unsigned o = 0; o <= z->pool->cfg.max_order; o++)
		n += z->nr_free_mt[o * PA_MT_COUNT + PA_MT_HIGHATOMIC] << o;
	return n;
}

/*
 * Linux's __zone_watermark_ok(): enough free frames above the mark once the
 * request is taken, and a free block of the order or larger that the request
 * may use. Zone lock held.
 */
static bool watermark_ok(const struct pa_zone *z, unsigned order, uint64_t mark, unsigned flags)
{
	int64_t free = (int64_t)z->free_pages - ((1ll << order) - 1);
	int64_t min = (int64_t)mark;
	if (flags & ALLOC_MIN_RESERVE)
		min -= min / 2;
	else if (unlikely(z->nr_reserved_highatomic))
		free -= (int64_t)free_highatomic(z); /* only what the reserve holds free */
	if (free <= min)
		return false;
	if (order == 0)
		return true;
	uint64_t usable = z->nonempty[PA_MT_UNMOVABLE] | z->nonempty[PA_MT_MOVABLE] |
			  z->nonempty[PA_MT_RECLAIMABLE];
	if (flags & ALLOC_HIGHATOMIC)
		usable |= z->nonempty[PA_MT_HIGHATOMIC];
	return (usable >> order) != 0;
}

static pa_pfn_t rmqueue(struct pa_zone *z, const struct alloc_ctx *ac)
{
	pa_pfn_t pfn;
	if (ac->flags & ALLOC_HIGHATOMIC) {
		pfn = buddy_take_smallest(z, ac->order, PA_MT_HIGHATOMIC);
		if (pfn != PA_NIL)
			return pfn;
	}
	pfn = buddy_take_smallest(z, ac->order, ac->mt);
	return pfn != PA_NIL ? pfn : pageblock_rmqueue_fallback(z, ac->order, ac->mt);
}

/* Turn a block taken off the lists into an allocated block. Zone lock held. */
static struct pa_page *prep_block(struct pa_zone *z, pa_pfn_t pfn, const struct alloc_ctx *ac)
{
	struct pa_page *p = pfn_page(z->pool, pfn);
	p->state = PS_ALLOC;
	p->order = (uint8_t)ac->order;
	p->mt = (uint8_t)ac->mt;
	p->flags = (ac->gfp & PA_GFP_COMP) ? PF_COMP : 0;
	p->private = 0;
	p->zone = z->index;
	z->stat[PA_ZS_PGALLOC] += 1ull << ac->order;
	z->stat[PA_ZS_ALLOC_SUCCESS]++;
	z->alloc_order[ac->order]++;
	return p;
}

static void zero_block(const struct alloc_ctx *ac, struct pa_page *p)
{
	struct pa_pool *pool = ac->pool;
	if ((ac->gfp & PA_GFP_ZERO) && pool->base)
		memset(pa_page_address(pool, p), 0, (size_t)1 << (pool->cfg.page_shift + ac->order));
}

/* Try each allowed zone of the preferred node's zonelist at the given watermark. */
static struct pa_page *get_page_from_freelist(const struct alloc_ctx *ac, unsigned flags)
{
	const struct pa_node *n = ac->node;
	for (unsigned i = 0; i < n->nr_zonelist; i++) {
		struct pa_zone *z = n->zonelist[i];
		if (!zone_allowed(ac, z))
			continue;
		pa_lock(&z->lock, SITE_ALLOC);
		struct pa_page *p = NULL;
		if (watermark_ok(z, ac->order, z->wmark[flags & ALLOC_WMARK_MASK], flags)) {
			pa_pfn_t pfn = rmqueue(z, ac);
			if (pfn != PA_NIL) {
				p = prep_block(z, pfn, ac);
				if ((flags & ALLOC_HIGHATOMIC) && ac->order > 0)
					pageblock_reserve_highatomic(z, pfn, ac->order);
			}
		}
		pa_unlock(&z->lock);
		if (p)
			return p;
	}
	return NULL;
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
	if (ac->order <= pool->cfg.max_order)
		atomic_fetch_add_explicit(&pool->alloc_fail_order[ac->order], 1, memory_order_relaxed);
	if (!(ac->gfp & PA_GFP_NOWARN))
		platform_report(pool, "allocation failure: order:%u, mode:%#x, migratetype:%s",
				ac->order, ac->gfp, pa_migratetype_names[ac->mt]);
}

static struct pa_page *alloc_slowpath(const struct alloc_ctx *ac)
{
	unsigned flags = (ac->flags & ~ALLOC_WMARK_MASK) | ALLOC_WMARK_MIN;
	struct pa_page *p = get_page_from_freelist(ac, flags);
	if (!p && !(ac->flags & ALLOC_HIGHATOMIC) && unreserve_highatomic(ac))
		p = get_page_from_freelist(ac, flags);
	if (!p)
		alloc_failed(ac);
	return p;
}

struct pa_page *pa_alloc_pages(struct pa_pool *pool, pa_gfp_t gfp, unsigned int order)
{
	struct alloc_ctx ac;
	alloc_ctx_init(&ac, pool, gfp, order);
	if (unlikely(order > pool->cfg.max_order)) {
		alloc_failed(&ac);
		return NULL;
	}
	struct pa_page *p = get_page_from_freelist(&ac, ac.flags);
	if (unlikely(!p))
		p = alloc_slowpath(&ac);
	if (p)
		zero_block(&ac, p);
	return p;
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
	alloc_ctx_init(&ac, pool, gfp, order);
	if (nr == 0)
		return 0;
	if (order > pool->cfg.max_order) {
		alloc_failed(&ac);
		return 0;
	}
	for (unsigned i = 0; i < ac.node->nr_zonelist && got < nr; i++) {
		struct pa_zone *z = ac.node->zonelist[i];
		if (!zone_allowed(&ac, z))
			continue;
		pa_lock(&z->lock, SITE_ALLOC_BULK);
		while (got < nr && watermark_ok(z, order, z->wmark[PA_WMARK_LOW], ac.flags)) {
			pa_pfn_t pfn = rmqueue(z, &ac);
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
static void describe_frame(struct pa_pool *pool, pa_pfn_t pfn, unsigned order, char *buf, size_t len)
{
	const struct pa_page *p = pfn_page(pool, pfn);
	if (!memmap_frame_present(pool, pfn)) {
		snprintf(buf, len, "no memory behind the frame (a hole)");
		return;
	}
	switch (p->state) {
	case PS_FREE:
		snprintf(buf, len, "a free block of order %u (double free)", p->order);
		return;
	case PS_FREEING:
		snprintf(buf, len, "a block being freed by another thread (double free)");
		return;
	case PS_ALLOC:
		snprintf(buf, len, "an allocated block of order %u (wrong order %u)", p->order, order);
		return;
	default:
		break;
	}
	for (unsigned o = 1; o <= pool->cfg.max_order; o++) {
		pa_pfn_t head = pfn & ~((1ull << o) - 1);
		const struct pa_page *h = pfn_page(pool, head);
		if ((h->state == PS_ALLOC || h->state == PS_FREE) && h->order >= o) {
			snprintf(buf, len, "%s frame of the %s block of order %u at pfn %llu",
				 h->state == PS_ALLOC ? "a tail" : "a never-allocated",
				 h->state == PS_ALLOC ? "allocated" : "free", h->order,
				 (unsigned long long)head);
			return;
		}
	}
	snprintf(buf, len, "a frame that heads no block");
}

static void bad_page(struct pa_pool *pool, pa_pfn_t pfn, unsigned order, const char *found)
{
	pool_stat_inc(pool, PA_PS_BAD_PAGE);
	if (pfn == PA_PFN_INVALID)
		platform_report(pool, "bad page: pa_free_pages(order %u): expected a frame descriptor "
				      "of this pool; found %s; refused",
				order, found);
	else
		platform_report(pool, "bad page: pfn %llu: pa_free_pages(order %u): expected the head "
				      "of an allocated block of order %u; found %s; refused",
				(unsigned long long)pfn, order, order, found);
	if (pool->cfg.bad_page == PA_BAD_PAGE_PANIC)
		abort();
}

/* Wipe a block's bytes (init_on_free) outside the lock: the head says PS_FREEING meanwhile. */
static void wipe_block(struct pa_zone *z, pa_pfn_t pfn, unsigned order)
{
	struct pa_pool *pool = z->pool;
	pfn_page(pool, pfn)->state = PS_FREEING;
	pa_unlock(&z->lock);
	memset(pool->base + (pfn << pool->cfg.page_shift), 0, (size_t)1 << (pool->cfg.page_shift + order));
	pa_lock(&z->lock, SITE_FREE);
}

void pa_free_pages(struct pa_pool *pool, struct pa_page *page, unsigned int order)
{
	pa_pfn_t pfn = page ? pa_page_to_pfn(pool, page) : PA_PFN_INVALID;
	struct pa_zone *z = pfn != PA_PFN_INVALID ? zone_of_pfn(pool, pfn) : NULL;
	if (unlikely(!z)) {
		bad_page(pool, PA_PFN_INVALID, order, page ? "a pointer outside the frame map" : "NULL");
		return;
	}
	pa_lock(&z->lock, SITE_FREE);
	struct pa_page *p = pfn_page(pool, pfn);
	if (unlikely(p->state != PS_ALLOC || p->order != order)) {
		char found[160];
		describe_frame(pool, pfn, order, found, sizeof found);
		pa_unlock(&z->lock);
		bad_page(pool, pfn, order, found);
		return;
	}
	if (unlikely(pool->cfg.init_on_free) && pool->base)
		wipe_block(z, pfn, order);
	buddy_free_block(z, pfn, order, pageblock_mt(pool, pfn));
	z->stat[PA_ZS_PGFREE] += 1ull << order;
	z->stat[PA_ZS_FREE_CALLS]++;
	pa_unlock(&z->lock);
}

/* ---------------------------------------------------------------------- */
/* Folios                                                                  */
/* ---------------------------------------------------------------------- */

/* The allocated or free head whose block covers pfn, or PA_NIL. Zone lock held. */
static pa_pfn_t covering_head(const struct pa_pool *pool, pa_pfn_t pfn)
{
	for (unsigned o = 0; o <= pool->cfg.max_order; o++) {
		pa_pfn_t head = pfn & ~((1ull << o) - 1);
		const struct pa_page *h = pfn_page(pool, head);
		if ((h->state == PS_ALLOC || h->state == PS_FREE || h->state == PS_FREEING) &&
		    h->order >= o)
			return head;
	}
	return PA_NIL;
}

struct pa_page *pa_folio_head(const struct pa_pool *pool, const struct pa_page *page)
{
	pa_pfn_t pfn = page ? pa_page_to_pfn(pool, page) : PA_PFN_INVALID;
	struct pa_zone *z = pfn != PA_PFN_INVALID ? zone_of_pfn(pool, pfn) : NULL;
	struct pa_page *res = NULL;
	if (!z)
		return NULL;
	pa_lock(&z->lock, SITE_ADMIN);
	pa_pfn_t head = covering_head(pool, pfn);
	if (head != PA_NIL) {
		struct pa_page *h = pfn_page(pool, head);
		if (h->state == PS_ALLOC && (head == pfn || (h->flags & PF_COMP)))
			res = h;
	}
	pa_unlock(&z->lock);
	return res;
}

int pa_folio_order(const struct pa_pool *pool, const struct pa_page *page)
{
	pa_pfn_t pfn = page ? pa_page_to_pfn(pool, page) : PA_PFN_INVALID;
	struct pa_zone *z = pfn != PA_PFN_INVALID ? zone_of_pfn(pool, pfn) : NULL;
	int order = -1;
	if (!z)
		return -1;
	pa_lock(&z->lock, SITE_ADMIN);
	if (page->state == PS_ALLOC)
		order = page->order;
	pa_unlock(&z->lock);
	return order;
}
