/* SPDX-License-Identifier: MIT */
/*
 * The full invariant check (pa_validate) and frame accounting. Everything is
 * recomputed from the raw state: the free lists are walked, then every frame
 * of every zone, so a counter that drifted or a descriptor that lies is found
 * whatever code path caused it.
 */
#include "validate.h"

#include "platform/platform.h"
#include "buddy.h"
#include "linux.h"
#include "memmap.h"
#include "pageblock.h"
#include "pcp.h"
#include "superblock.h"
#include "zone.h"

#include <stdarg.h>

struct vctx {
	struct pa_pool *pool;
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 3, 4))) static int vfail(struct vctx *v, const struct pa_zone *z,
                                                       const char *fmt, ...)
{
	if (v->err && v->errlen) {
		int n = pa_snprintf(v->err, v->errlen, "node %u zone %s: ", z->node,
		                    zone_name(z->type));
		va_list ap;
		va_start(ap, fmt);
		if (n >= 0 && (size_t)n < v->errlen)
			pa_vsnprintf(v->err + n, v->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EFAULT;
}

/* Are the bytes of frames [pfn, pfn + n) zero? Only a backed pool has bytes to look at. */
static bool frames_zero(const struct pa_pool *pool, pa_pfn_t pfn, uint64_t n)
{
	if (!pool->base)
		return true;
	const uint64_t *w = (const uint64_t *)(pool->base + (pfn << pool->cfg.page_shift));
	for (uint64_t i = 0, end = (n << pool->cfg.page_shift) / 8; i < end; i++)
		if (w[i])
			return false;
	return true;
}

/*
 * What a free head knows is zero: something, no more than the block, and
 * with debug=2 really zero in a backed pool.
 */
static int check_clean(struct vctx *v, struct pa_zone *z, uint32_t pfn, unsigned order,
                       uint64_t *clean)
{
	struct pa_clean c = buddy_head_clean(z, pfn);
	uint64_t size = 1ull << order;
	if (!(page_flags(pfn_page(v->pool, pfn)) & PF_CLEARED))
		return 0;
	if (!clean_any(c) || c.pre > size || c.suf > size)
		return vfail(v, z,
		             "free block at pfn %u (order %u) says %llu + %llu frames are clean",
		             pfn, order, (unsigned long long)c.pre, (unsigned long long)c.suf);
	if (v->pool->cfg.debug >= 2 &&
	    (!frames_zero(v->pool, pfn, c.pre) || !frames_zero(v->pool, pfn + size - c.suf, c.suf)))
		return vfail(v, z, "free block at pfn %u (order %u): its clean frames are not zero",
		             pfn, order);
	*clean += clean_count(c, size);
	return 0;
}

/* Walk one free list; count its blocks into *count and its clean frames into *clean. */
static int check_list(struct vctx *v, struct pa_zone *z, unsigned order, unsigned mt,
                      uint64_t *count, uint64_t *clean)
{
	struct pa_pool *pool = v->pool;
	uint32_t prev = PA_NIL;
	uint64_t n = 0, limit = (z->end_pfn - z->start_pfn) >> order;
	for (uint32_t pfn = buddy_list_peek(z, order, mt); pfn != PA_NIL;) {
		const struct pa_page *p = pfn_page(pool, pfn);
		if (pfn < z->start_pfn || pfn >= z->end_pfn || (pfn & ((1ull << order) - 1)) ||
		    !pfn_in_zone(z, pfn))
			return vfail(
			        v, z,
			        "list (order %u, %s) holds pfn %u outside the zone or misaligned",
			        order, pa_migratetype_names[mt], pfn);
		if (page_state(p) != PS_FREE || p->order != order || p->mt != mt ||
		    p->lru.prev != prev)
			return vfail(v, z,
			             "list (order %u, %s): pfn %u says state %u order %u type %u",
			             order, pa_migratetype_names[mt], pfn, page_state(p), p->order,
			             p->mt);
		/* Every pageblock under a free block has the type of the list it is on
		 * (from Linux 6.10 on; before, a fallback's remainder is not). */
		pa_pfn_t other = linux_rule(pool, LR_FREELIST_HYGIENE) ?
		                         pageblock_first_other(pool, pfn, order, mt) :
		                         PA_NIL;
		if (other != PA_NIL)
			return vfail(v, z,
			             "free block at pfn %u (order %u) on the %s list covers the "
			             "pageblock at pfn %llu of type %s",
			             pfn, order, pa_migratetype_names[mt],
			             (unsigned long long)other,
			             pa_migratetype_names[pageblock_mt(pool, other)]);
		if (++n > limit)
			return vfail(v, z, "list (order %u, %s) loops", order,
			             pa_migratetype_names[mt]);
		int rc = check_clean(v, z, pfn, order, clean);
		if (rc)
			return rc;
		prev = pfn;
		pfn = p->lru.next;
	}
	uint32_t tail = z->list_tail[order * PA_MT_COUNT + mt];
	if (prev != PA_NIL && tail != prev)
		return vfail(v, z, "list (order %u, %s) ends at pfn %u, its tail says %u", order,
		             pa_migratetype_names[mt], prev, tail);
	*count = n;
	return 0;
}

static int check_lists(struct vctx *v, struct pa_zone *z, uint64_t *free_frames,
                       uint64_t *free_blocks)
{
	uint64_t clean = 0;
	for (unsigned o = 0; o <= v->pool->cfg.max_order; o++) {
		uint64_t order_total = 0;
		for (unsigned mt = 0; mt < PA_MT_COUNT; mt++) {
			uint64_t n = 0;
			int rc = check_list(v, z, o, mt, &n, &clean);
			if (rc)
				return rc;
			if (o == v->pool->cfg.max_order && mt == PA_MT_MOVABLE)
				n += z->nr_untouched << (v->pool->cfg.chunk_order - o);
			if (n != zone_free_count(z, o, mt) || !n != !(z->nonempty[mt] >> o & 1))
				return vfail(v, z,
				             "order %u %s: %llu blocks on the list, counted %llu",
				             o, pa_migratetype_names[mt], (unsigned long long)n,
				             (unsigned long long)zone_free_count(z, o, mt));
			order_total += n;
		}
		*free_blocks += order_total;
		*free_frames += order_total << o;
	}
	if (clean != z->clean_pages)
		return vfail(v, z, "clean free frames: %llu on the lists, %llu counted",
		             (unsigned long long)clean, (unsigned long long)z->clean_pages);
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
		if (page_state(pfn_page(pool, p)) != PS_BODY)
			return vfail(v, z,
			             "block at pfn %llu (order %u) overlaps pfn %llu (state %u)",
			             (unsigned long long)head, order, (unsigned long long)p,
			             page_state(pfn_page(pool, p)));
	}
	return 0;
}

/*
 * Must the body of this block be walked frame by frame? Not that of a free
 * block linked from an untouched chunk and never relinked (PF_UNTOUCHED): no
 * descriptor in it was written, so every one still reads PS_BODY. Skipping
 * it keeps the cost of a check proportional to the memory in use: a block
 * wrongly inside it would still show, as a head on a list, a per-CPU list
 * or the allocated count that the frame census then disagrees with.
 * debug=2 (the expensive checks) walks every body.
 */
static bool body_written(const struct pa_pool *pool, const struct pa_page *head, unsigned st)
{
	return st != PS_FREE || !(page_flags(head) & PF_UNTOUCHED) || pool->cfg.debug >= 2;
}

/* An untouched chunk: every pageblock MOVABLE and not isolated, the head never written. */
static int check_untouched(struct vctx *v, struct pa_zone *z, pa_pfn_t chunk)
{
	struct pa_pool *pool = v->pool;
	uint64_t pb = 1ull << pool->cfg.pageblock_order;
	for (pa_pfn_t p = chunk; p < chunk + (1ull << pool->cfg.chunk_order); p += pb)
		if (pageblock_mt(pool, p) != PA_MT_MOVABLE)
			return vfail(v, z, "untouched chunk at pfn %llu: pageblock at %llu is %s",
			             (unsigned long long)chunk, (unsigned long long)p,
			             pa_migratetype_names[pageblock_mt(pool, p)]);
	if (page_state(pfn_page(pool, chunk)) != PS_BODY)
		return vfail(v, z, "untouched chunk at pfn %llu has a written head",
		             (unsigned long long)chunk);
	return 0;
}

struct frame_census {
	uint64_t free, allocated, free_heads, pcp, pcp_heads, captured;
};

/* Walk every frame of the zone: each is a hole, or in exactly one block. */
static int check_frames(struct vctx *v, struct pa_zone *z, struct frame_census *c)
{
	struct pa_pool *pool = v->pool;
	uint64_t sec = 1ull << pool->cfg.section_shift;
	uint64_t chunk = 1ull << pool->cfg.chunk_order;
	uint64_t pb = 1ull << pool->cfg.pageblock_order;
	for (pa_pfn_t pfn = z->start_pfn; pfn < z->init_pfn;) {
		if (!pfn_in_zone(z, pfn)) { /* another zone's pageblock inside the span (hotplug) */
			pfn = (pfn | (pb - 1)) + 1;
			continue;
		}
		if (zone_pfn_pending(z, pfn)) { /* untouched: free, no descriptor written */
			int rc = check_untouched(v, z, pfn);
			if (rc)
				return rc;
			c->free += chunk;
			c->free_heads += chunk >> pool->cfg.max_order;
			pfn += chunk;
			continue;
		}
		if (!memmap_section_present(pool, pfn)) {
			pfn = (pfn / sec + 1) * sec;
			continue;
		}
		const struct pa_page *p = pfn_page(pool, pfn);
		if (page_state(p) == PS_HOLE) {
			pfn++;
			continue;
		}
		/* PS_FREEING: a free wiping its bytes outside the lock; still allocated. */
		unsigned st = page_state(p);
		if (st == PS_BODY)
			return vfail(v, z, "pfn %llu is in no block (state %u)",
			             (unsigned long long)pfn, st);
		unsigned order = p->order;
		/* An allocated block may be above max_order if it was lowered since (ctl max_order). */
		unsigned limit = st == PS_FREE ? pool->cfg.max_order : pool->max_order_boot;
		if (order > limit || (pfn & ((1ull << order) - 1)) ||
		    pfn + (1ull << order) > z->end_pfn)
			return vfail(v, z, "block at pfn %llu has a bad order %u",
			             (unsigned long long)pfn, order);
		int rc = body_written(pool, p, st) ? check_body(v, z, pfn, order) : 0;
		if (rc)
			return rc;
		if (st == PS_FREE) {
			c->free += 1ull << order;
			c->free_heads++;
		} else if (st == PS_PCP) {
			c->pcp += 1ull << order;
			c->pcp_heads++;
		} else if (st == PS_CAPTURED || st == PS_MIGRATING) {
			c->captured += 1ull << order; /* held by a compaction pass */
		} else
			c->allocated += 1ull << order; /* PS_ALLOC, PS_ISOLATED, PS_FREEING */
		pfn += 1ull << order;
	}
	return 0;
}

/*
 * Walk one CPU's lists: every block is a PS_PCP head of this zone with the
 * list's order, linked back to the one before it, and the last is the tail.
 */
static int check_pcp_cpu(struct vctx *v, struct pa_zone *z, unsigned cpu, uint64_t *frames,
                         uint64_t *blocks)
{
	struct pa_pool *pool = v->pool;
	const struct pa_pcp *pcp = z->pcp[cpu];
	uint64_t cpu_frames = 0;
	for (unsigned o = 0; o <= pool->cfg.max_order; o++) {
		for (unsigned t = 0; t < PA_NR_PCP_TYPES; t++) {
			uint64_t n = 0, limit = (z->end_pfn - z->start_pfn) >> o;
			uint32_t last = PA_NIL;
			for (uint32_t pfn = pcp_head(pcp, o, t); pfn != PA_NIL; n++) {
				const struct pa_page *p = pfn_page(pool, pfn);
				if (n >= limit || zone_of_pfn(pool, pfn) != z ||
				    page_state(p) != PS_PCP || p->order != o ||
				    (last != PA_NIL && p->lru.prev != last))
					return vfail(
					        v, z,
					        "cpu %u list (order %u, %s): bad block at pfn %u",
					        cpu, o, pa_migratetype_names[t], pfn);
				last = pfn;
				pfn = p->lru.next;
			}
			if (last != PA_NIL && pcp_tail(pcp, o, t) != last)
				return vfail(
				        v, z, "cpu %u list (order %u, %s): tail %u, last block %u",
				        cpu, o, pa_migratetype_names[t], pcp_tail(pcp, o, t), last);
			cpu_frames += n << o;
			*blocks += n;
		}
	}
	if (cpu_frames != pcp_count(pcp))
		return vfail(v, z, "cpu %u lists hold %llu frames, counted %u", cpu,
		             (unsigned long long)cpu_frames, pcp_count(pcp));
	*frames += cpu_frames;
	return 0;
}

static int check_pcp(struct vctx *v, struct pa_zone *z, const struct frame_census *c)
{
	uint64_t frames = 0, blocks = 0;
	for (unsigned cpu = 0; cpu < v->pool->cfg.nr_cpus; cpu++) {
		int rc = check_pcp_cpu(v, z, cpu, &frames, &blocks);
		if (rc)
			return rc;
	}
	if (frames != c->pcp || blocks != c->pcp_heads)
		return vfail(
		        v, z,
		        "per-CPU lists hold %llu frames in %llu blocks, the frame map %llu in %llu",
		        (unsigned long long)frames, (unsigned long long)blocks,
		        (unsigned long long)c->pcp, (unsigned long long)c->pcp_heads);
	return 0;
}

static int check_zone(struct vctx *v, struct pa_zone *z)
{
	uint64_t list_frames = 0, list_blocks = 0, stat[PA_NR_ZONE_STATS];
	struct frame_census c = { 0, 0, 0, 0, 0, 0 };
	int rc = check_lists(v, z, &list_frames, &list_blocks);
	if (rc == 0)
		rc = check_frames(v, z, &c);
	if (rc == 0)
		rc = check_pcp(v, z, &c);
	if (rc)
		return rc;
	zone_fold_stats_locked(z, stat, NULL);
	uint64_t allocated = stat[PA_ZS_PGALLOC] - stat[PA_ZS_PGFREE];
	uint64_t reserved = z->reserved_pages + c.pcp;
	if (list_frames != zone_nr_free(z) || c.free != list_frames || c.free_heads != list_blocks)
		return vfail(v, z,
		             "free frames: %llu on the lists, %llu counted, %llu in the frame map",
		             (unsigned long long)list_frames, (unsigned long long)zone_nr_free(z),
		             (unsigned long long)c.free);
	if (c.captured != z->reserved_pages)
		return vfail(v, z, "compaction holds %llu frames, reserved_pages says %llu",
		             (unsigned long long)c.captured, (unsigned long long)z->reserved_pages);
	if (c.allocated != allocated)
		return vfail(v, z, "allocated frames: %llu in the frame map, %llu counted",
		             (unsigned long long)c.allocated, (unsigned long long)allocated);
	if (c.free + c.allocated + reserved != z->managed_pages)
		return vfail(v, z, "free %llu + allocated %llu + reserved %llu != managed %llu",
		             (unsigned long long)c.free, (unsigned long long)c.allocated,
		             (unsigned long long)reserved, (unsigned long long)z->managed_pages);
	return 0;
}

/*
 * Zone spans (hotplug shrinks and grows them): each covers every online
 * pageblock of its zone; they may overlap. Every zone lock held.
 */
static int check_spans(struct vctx *v)
{
	struct pa_pool *pool = v->pool;
	unsigned pbo = pool->cfg.pageblock_order;
	for (uint64_t b = 0; b < pool->nr_pageblocks; b++) {
		uint8_t zi = __atomic_load_n(&pool->pb_zone[b], __ATOMIC_RELAXED);
		pa_pfn_t p = b << pbo;
		if (zi == 0xff || pool->block_offline[p >> pool->cfg.block_shift])
			continue;
		const struct pa_zone *z = &pool->zones[zi];
		if (p < z->start_pfn || p >= z->end_pfn)
			return vfail(
			        v, z,
			        "online pageblock at pfn %llu is outside the span [%llu, %llu)",
			        (unsigned long long)p, (unsigned long long)z->start_pfn,
			        (unsigned long long)z->end_pfn);
	}
	/* Spans may overlap (a block onlined into another zone): pb_zone says whose a frame is. */
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
	int rc = pool->block_offline ? check_spans(&v) : 0;
	return rc ? rc : superblock_validate_locked(pool, err, errlen);
}

/* Every list lock, then every zone lock: the order the allocation paths nest them. */
static void lock_all(struct pa_pool *pool)
{
	for (unsigned i = 0; i < pool->nr_zones; i++)
		for (unsigned c = 0; c < pool->cfg.nr_cpus; c++)
			platform_spin_lock(pool, &pool->zones[i].pcp[c]->lock, SITE_ADMIN);
	for (unsigned i = 0; i < pool->nr_zones; i++)
		pa_lock(&pool->zones[i].lock, SITE_ADMIN);
}

static void unlock_all(struct pa_pool *pool)
{
	for (unsigned i = pool->nr_zones; i-- > 0;)
		pa_unlock(&pool->zones[i].lock);
	for (unsigned i = 0; i < pool->nr_zones; i++)
		for (unsigned c = 0; c < pool->cfg.nr_cpus; c++)
			pa_spin_unlock(&pool->zones[i].pcp[c]->lock);
}

int pa_validate(struct pa_pool *pool, char *err, size_t errlen)
{
	if (!pool) {
		if (err && errlen)
			pa_snprintf(err, errlen, "pa_validate: pool is NULL");
		return -EINVAL;
	}
	lock_all(pool);
	int rc = validate_locked(pool, err, errlen);
	unlock_all(pool);
	return rc;
}

void pa_get_usage(struct pa_pool *pool, struct pa_usage *out)
{
	if (!out)
		return;
	*out = (struct pa_usage){ 0 };
	if (!pool)
		return;
	lock_all(pool);
	for (unsigned i = 0; i < pool->nr_zones; i++) {
		struct pa_zone *z = &pool->zones[i];
		uint64_t stat[PA_NR_ZONE_STATS];
		zone_fold_stats_locked(z, stat, NULL);
		out->managed += z->managed_pages;
		out->free += zone_nr_free(z);
		out->allocated += stat[PA_ZS_PGALLOC] - stat[PA_ZS_PGFREE];
		out->reserved += z->reserved_pages;
		for (unsigned c = 0; c < pool->cfg.nr_cpus; c++)
			out->reserved += pcp_count(z->pcp[c]);
	}
	unlock_all(pool);
}
