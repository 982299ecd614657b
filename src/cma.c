/* SPDX-License-Identifier: MIT */
/*
 * CMA areas: ranges of MIGRATE_CMA pageblocks reserved at boot
 * (cma=SIZE[@START]) for large contiguous allocations. Until then movable
 * allocations borrow them (Linux's balance rule in pageblock_rmqueue());
 * pa_cma_alloc() moves the borrowers out through pa_alloc_contig_range().
 *
 * An area is aligned to, and its size rounded up to, the CMA alignment,
 * page_size << pageblock_order: the pageblock is the unit of migratetype,
 * so a smaller pageblock order (the ceiling of seed 004) means smaller,
 * less wasteful reservations.
 */
#include "isolation.h"

#include "platform/platform.h"
#include "buddy.h"
#include "memmap.h"
#include "pageblock.h"
#include "zone.h"

struct pa_cma_area {
	struct pa_cma_info info;
	uint8_t *used;        /* [frame]: 1 when taken by pa_cma_alloc() */
	struct pa_mutex lock; /* guards used and info.allocated_pages */
};

static uint64_t pb_frames(const struct pa_pool *pool)
{
	return 1ull << pool->cfg.pageblock_order;
}

/* Is [s, s + n) inside one zone, free of holes, and clear of the other areas? */
static struct pa_zone *area_fits(const struct pa_pool *pool, pa_pfn_t s, uint64_t n)
{
	struct pa_zone *z = zone_of_pfn(pool, s);
	if (!z || s + n > z->end_pfn || z->type == PA_ZONE_MOVABLE)
		return NULL;
	for (unsigned i = 0; i < pool->nr_cma; i++) {
		const struct pa_cma_info *a = &pool->cma[i].info;
		if (s < a->start_pfn + a->nr_pages && a->start_pfn < s + n)
			return NULL;
	}
	for (pa_pfn_t p = s; p < s + n; p++)
		if (!memmap_frame_present(pool, p))
			return NULL;
	return z;
}

/* The highest aligned place for n frames, as Linux places CMA at the top of memory. */
static pa_pfn_t area_place(const struct pa_pool *pool, uint64_t n)
{
	uint64_t align = pb_frames(pool);
	for (pa_pfn_t s = (pool->nr_frames - n) & ~(align - 1);; s -= align) {
		if (area_fits(pool, s, n))
			return s;
		if (s < align)
			return PA_NIL;
	}
}

/* Retype the area's pageblocks to CMA and move their free blocks. Boot, single-threaded. */
static void area_reserve(struct pa_pool *pool, struct pa_zone *z, pa_pfn_t s, uint64_t n)
{
	pa_lock(&z->lock, SITE_ADMIN);
	zone_prepare_range(z, s, s + n);
	for (pa_pfn_t p = s; p < s + n; p += pb_frames(pool))
		pageblock_set_mt(pool, p, PA_MT_CMA);
	/* Re-free every free block overlapping the area: pieces land on their pageblock's list. */
	for (pa_pfn_t p = s; p < s + n;) {
		pa_pfn_t head = memmap_block_head(pool, p);
		struct pa_page *h = pfn_page(pool, head);
		unsigned order = h->order;
		pa_pfn_t tail = head + (1ull << order);
		buddy_list_del(z, head);
		unsigned o = order < pool->cfg.pageblock_order ? order : pool->cfg.pageblock_order;
		for (pa_pfn_t q = head; q < tail; q += 1ull << o)
			buddy_free_block(z, q, o, pageblock_mt(pool, q));
		p = tail;
	}
	z->cma_pages += n;
	zone_set_pcp_mark(z);
	pa_unlock(&z->lock);
}

static int area_init(struct pa_pool *pool, unsigned i, char *err, size_t errlen)
{
	const struct pa_cma_request *r = &pool->cfg.cma[i];
	uint64_t align_bytes = (1ull << pool->cfg.page_shift) << pool->cfg.pageblock_order;
	uint64_t bytes = (r->size + align_bytes - 1) / align_bytes * align_bytes;
	uint64_t n = bytes >> pool->cfg.page_shift;
	pa_pfn_t s =
	        r->start == UINT64_MAX ? area_place(pool, n) : r->start >> pool->cfg.page_shift;
	if (r->start != UINT64_MAX && r->start % align_bytes) {
		pa_snprintf(err, errlen,
		            "cma=%s: START is not aligned to the CMA alignment of %llu bytes",
		            r->arg, (unsigned long long)align_bytes);
		return -EINVAL;
	}
	struct pa_zone *z = s == PA_NIL ? NULL : area_fits(pool, s, n);
	if (!z) {
		pa_snprintf(err, errlen,
		            "cma=%s: no room for %llu bytes (aligned to %llu) in one zone, "
		            "clear of holes and other areas",
		            r->arg, (unsigned long long)bytes, (unsigned long long)align_bytes);
		return -EINVAL;
	}
	struct pa_cma_area *a = &pool->cma[i];
	pa_snprintf(a->info.name, sizeof a->info.name, "cma%u", i);
	a->info.start_pfn = s;
	a->info.nr_pages = n;
	a->info.requested_bytes = r->size;
	a->info.reserved_bytes = bytes;
	a->used = pa_calloc(&pool->plat, n, 1);
	pa_mutex_init(&a->lock, &pool->plat);
	pool->nr_cma = i + 1;
	if (!a->used)
		return -ENOMEM;
	area_reserve(pool, z, s, n);
	return 0;
}

int cma_init(struct pa_pool *pool, char *err, size_t errlen)
{
	if (!pool->cfg.nr_cma)
		return 0;
	pool->cma = pa_calloc(&pool->plat, pool->cfg.nr_cma, sizeof *pool->cma);
	if (!pool->cma)
		return -ENOMEM;
	for (unsigned i = 0; i < pool->cfg.nr_cma; i++) {
		int rc = area_init(pool, i, err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

void cma_destroy(struct pa_pool *pool)
{
	for (unsigned i = 0; i < pool->nr_cma; i++) {
		pa_free(&pool->plat, pool->cma[i].used);
	}
	pa_free(&pool->plat, pool->cma);
}

unsigned pa_cma_count(const struct pa_pool *pool)
{
	return pool ? pool->nr_cma : 0;
}

int pa_cma_get(struct pa_pool *pool, unsigned area, struct pa_cma_info *out)
{
	if (!pool || !out)
		return -EINVAL;
	if (area >= pool->nr_cma)
		return -ENOENT;
	struct pa_cma_area *a = &pool->cma[area];
	pa_mutex_lock(&a->lock);
	*out = a->info;
	pa_mutex_unlock(&a->lock);
	return 0;
}

/* Claim [off, off + count) of the area's map if it is clear. Area lock held. */
static bool claim(struct pa_cma_area *a, uint64_t off, uint64_t count, uint8_t v)
{
	if (v)
		for (uint64_t i = off; i < off + count; i++)
			if (a->used[i])
				return false;
	memset(a->used + off, v, count);
	a->info.allocated_pages += v ? count : -count;
	return true;
}

struct pa_page *pa_cma_alloc(struct pa_pool *pool, unsigned area, uint64_t count,
                             unsigned align_order)
{
	if (!pool || area >= pool->nr_cma || !count || align_order > pool_max_order(pool) ||
	    count > pool->cma[area].info.nr_pages)
		return NULL;
	struct pa_cma_area *a = &pool->cma[area];
	uint64_t align = 1ull << align_order, n = a->info.nr_pages;
	pa_pfn_t base = a->info.start_pfn;
	/* count <= n: the last start, base + n - count, cannot wrap */
	for (pa_pfn_t s = (base + align - 1) & ~(align - 1); s <= base + n - count; s += align) {
		pa_mutex_lock(&a->lock);
		bool mine = claim(a, s - base, count, 1);
		pa_mutex_unlock(&a->lock);
		if (!mine)
			continue;
		if (contig_alloc_range(pool, s, s + count, PA_MT_CMA, PF_CONTIG | PF_CMA) == 0)
			return pfn_page(pool, s);
		pa_mutex_lock(&a->lock);
		claim(a, s - base, count, 0);
		pa_mutex_unlock(&a->lock);
	}
	return NULL;
}

int pa_cma_release(struct pa_pool *pool, unsigned area, struct pa_page *page, uint64_t count)
{
	if (!pool || area >= pool->nr_cma || !page)
		return -EINVAL;
	struct pa_cma_area *a = &pool->cma[area];
	pa_pfn_t pfn = pa_page_to_pfn(pool, page), base = a->info.start_pfn;
	uint64_t n = a->info.nr_pages;
	/* In the area without computing pfn + count, which a huge count would wrap. */
	if (pfn == PA_PFN_INVALID || pfn < base || count == 0 || count > n ||
	    pfn - base > n - count)
		return -EINVAL;
	pa_mutex_lock(&a->lock);
	bool ok = true;
	for (uint64_t i = pfn - base; i < pfn - base + count; i++)
		ok &= a->used[i] != 0;
	pa_mutex_unlock(&a->lock);
	char why[160];
	/* Freed first, the map cleared after: the frames are never claimed by two at once. */
	if (!ok || contig_free_range(pool, pfn, count, true, why, sizeof why) != 0)
		return -EINVAL;
	pa_mutex_lock(&a->lock);
	claim(a, pfn - base, count, 0);
	pa_mutex_unlock(&a->lock);
	return 0;
}
