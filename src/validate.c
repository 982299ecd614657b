/*
 * The full invariant check (pa_validate) and frame accounting. Everything is
 * recomputed from the raw state: the free lists are walked, then every frame
 * of every zone, so a counter that drifted or a descriptor that lies is found
 * whatever code path caused it.
 */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>

struct vctx {
	struct pa_pool *pool;
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 3, 4))) static int vfail(struct vctx *v, const struct pa_zone *z,
						       const char *fmt, ...)
{
	if (v->err && v->errlen) {
		int n = snprintf(v->err, v->errlen, "node %u zone %s: ", z->node, zone_name(z->type));
		va_list ap;
		va_start(ap, fmt);
		if (n >= 0 && (size_t)n < v->errlen)
			vsnprintf(v->err + n, v->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EFAULT;
}

/* Every pageblock under a free block must have the type of the list the block is on. */
static bool block_types_agree(const struct pa_pool *pool, pa_pfn_t pfn, unsigned order, unsigned mt)
{
	unsigned pb = pool->cfg.pageblock_order;
	uint64_t n = order > pb ? 1ull << (order - pb) : 1;
	for (uint64_t i = 0; i < n; i++)
		if (pageblock_mt(pool, pfn + (i << pb)) != mt)
			return false;
	return true;
}

/* Walk one free list; count its blocks into *count. */
static int check_list(struct vctx *v, struct pa_zone *z, unsigned order, unsigned mt, uint64_t *count)
{
	struct pa_pool *pool = v->pool;
	uint32_t prev = PA_NIL;
	uint64_t n = 0, limit = (z->end_pfn - z->start_pfn) >> order;
	for (uint32_t pfn = buddy_list_first(z, order, mt); pfn != PA_NIL;) {
		const struct pa_page *p = pfn_page(pool, pfn);
		if (pfn < z->start_pfn || pfn >= z->end_pfn || (pfn & ((1ull << order) - 1)))
			return vfail(v, z, "list (order %u, %s) holds pfn %u outside the zone or misaligned",
				     order, pa_migratetype_names[mt], pfn);
		if (p->state != PS_FREE || p->order != order || p->mt != mt || p->lru.prev != prev)
			return vfail(v, z, "list (order %u, %s): pfn %u says state %u order %u type %u",
				     order, pa_migratetype_names[mt], pfn, p->state, p->order, p->mt);
		if (!block_types_agree(pool, pfn, order, mt))
			return vfail(v, z, "free block at pfn %u (order %u) on the %s list lies in a "
					   "pageblock of type %s",
				     pfn, order, pa_migratetype_names[mt],
				     pa_migratetype_names[pageblock_mt(pool, pfn)]);
		if (++n > limit)
			return vfail(v, z, "list (order %u, %s) loops", order, pa_migratetype_names[mt]);
		prev = pfn;
		pfn = p->lru.next;
	}
	*count = n;
	return 0;
}

static int check_lists(struct vctx *v, struct pa_zone *z, uint64_t *free_frames, uint64_t *free_blocks)
{
	for (unsigned o = 0; o <= v->pool->cfg.max_order; o++) {
		uint64_t order_total = 0;
		for (unsigned mt = 0; mt < PA_MT_COUNT; mt++) {
			uint64_t n = 0;
			int rc = check_list(v, z, o, mt, &n);
			if (rc)
				return rc;
			if (n != z->nr_free_mt[o * PA_MT_COUNT + mt] || !n != !(z->nonempty[mt] >> o & 1))
				return vfail(v, z, "order %u %s: %llu blocks on the list, counted %llu",
					     o, pa_migratetype_names[mt], (unsigned long long)n,
					     (unsigned long long)z->nr_free_mt[o * PA_MT_COUNT + mt]);
			order_total += n;
		}
		if (order_total != z->nr_free[o])
			return vfail(v, z, "order %u: %llu free blocks on the lists, nr_free says %llu", o,
				     (unsigned long long)order_total, (unsigned long long)z->nr_free[o]);
		*free_blocks += order_total;
		*free_frames += order_total << o;
	}
	return 0;
}

/* Every frame of a block but the head is PS_BODY, in a present section. */
static int check_body(struct vctx *v, struct pa_zone *z, pa_pfn_t head, unsigned order)
{
	struct pa_pool *pool = v->pool;
	for (pa_pfn_t p = head + 1; p < head + (1ull << order); p++) {
		if (!memmap_section_present(pool, p))
			return vfail(v, z, "block at pfn %llu (order %u) covers absent pfn %llu",
				     (unsigned long long)head, order, (unsigned long long)p);
		if (pfn_page(pool, p)->state != PS_BODY)
			return vfail(v, z, "block at pfn %llu (order %u) overlaps pfn %llu (state %u)",
				     (unsigned long long)head, order, (unsigned long long)p,
				     pfn_page(pool, p)->state);
	}
	return 0;
}

struct frame_census {
	uint64_t free, allocated, free_heads;
};

/* Walk every frame of the zone: each is a hole, or in exactly one block. */
static int check_frames(struct vctx *v, struct pa_zone *z, struct frame_census *c)
{
	struct pa_pool *pool = v->pool;
	uint64_t sec = 1ull << pool->cfg.section_shift;
	for (pa_pfn_t pfn = z->start_pfn; pfn < z->end_pfn;) {
		if (!memmap_section_present(pool, pfn)) {
			pfn = (pfn / sec + 1) * sec;
			continue;
		}
		const struct pa_page *p = pfn_page(pool, pfn);
		if (p->state == PS_HOLE) {
			pfn++;
			continue;
		}
		/* PS_FREEING: a free wiping its bytes outside the lock; still allocated. */
		if (p->state != PS_FREE && p->state != PS_ALLOC && p->state != PS_FREEING)
			return vfail(v, z, "pfn %llu is in no block (state %u)", (unsigned long long)pfn,
				     p->state);
		unsigned order = p->order;
		if (order > pool->cfg.max_order || (pfn & ((1ull << order) - 1)) ||
		    pfn + (1ull << order) > z->end_pfn)
			return vfail(v, z, "block at pfn %llu has a bad order %u", (unsigned long long)pfn,
				     order);
		int rc = check_body(v, z, pfn, order);
		if (rc)
			return rc;
		if (p->state == PS_FREE) {
			c->free += 1ull << order;
			c->free_heads++;
		} else
			c->allocated += 1ull << order;
		pfn += 1ull << order;
	}
	return 0;
}

static int check_zone(struct vctx *v, struct pa_zone *z)
{
	uint64_t list_frames = 0, list_blocks = 0;
	struct frame_census c = { 0, 0, 0 };
	int rc = check_lists(v, z, &list_frames, &list_blocks);
	if (rc == 0)
		rc = check_frames(v, z, &c);
	if (rc)
		return rc;
	uint64_t allocated = z->stat[PA_ZS_PGALLOC] - z->stat[PA_ZS_PGFREE];
	if (list_frames != z->free_pages || c.free != list_frames || c.free_heads != list_blocks)
		return vfail(v, z, "free frames: %llu on the lists, %llu counted, %llu in the frame map",
			     (unsigned long long)list_frames, (unsigned long long)z->free_pages,
			     (unsigned long long)c.free);
	if (c.allocated != allocated)
		return vfail(v, z, "allocated frames: %llu in the frame map, %llu counted",
			     (unsigned long long)c.allocated, (unsigned long long)allocated);
	if (c.free + c.allocated + z->reserved_pages != z->managed_pages)
		return vfail(v, z, "free %llu + allocated %llu + reserved %llu != managed %llu",
			     (unsigned long long)c.free, (unsigned long long)c.allocated,
			     (unsigned long long)z->reserved_pages, (unsigned long long)z->managed_pages);
	return 0;
}

int validate_locked(struct pa_pool *pool, char *err, size_t errlen)
{
	struct vctx v = { pool, err, errlen };
	if (err && errlen)
		err[0] = '\0';
	for (unsigned i = 0; i < pool->nr_zones; i++) {
		int rc = check_zone(&v, &pool->zones[i]);
		if (rc)
			return rc;
	}
	return 0;
}

static void lock_all(struct pa_pool *pool)
{
	for (unsigned i = 0; i < pool->nr_zones; i++)
		pa_lock(&pool->zones[i].lock, SITE_ADMIN);
}

static void unlock_all(struct pa_pool *pool)
{
	for (unsigned i = pool->nr_zones; i-- > 0;)
		pa_unlock(&pool->zones[i].lock);
}

int pa_validate(struct pa_pool *pool, char *err, size_t errlen)
{
	lock_all(pool);
	int rc = validate_locked(pool, err, errlen);
	unlock_all(pool);
	return rc;
}

void pa_get_usage(struct pa_pool *pool, struct pa_usage *out)
{
	*out = (struct pa_usage){ 0 };
	for (unsigned i = 0; i < pool->nr_zones; i++) {
		struct pa_zone *z = &pool->zones[i];
		pa_lock(&z->lock, SITE_ADMIN);
		out->managed += z->managed_pages;
		out->free += z->free_pages;
		out->allocated += z->stat[PA_ZS_PGALLOC] - z->stat[PA_ZS_PGFREE];
		out->reserved += z->reserved_pages;
		pa_unlock(&z->lock);
	}
}
