/* SPDX-License-Identifier: MIT */
/*
 * Superblocks: the pool cut into aligned regions of 2^superblock_order
 * frames (1 GiB at the default), each with how many of its pageblocks are of
 * each migratetype and how many of its frames are free. A region that holds
 * a pageblock of a polluting type (unmovable, reclaimable, high-atomic) can
 * never be handed out whole again until those pageblocks empty; the
 * allocator uses the counts to keep such pageblocks together (steering, in
 * pageblock.c) so that the other regions stay whole.
 *
 * What is counted, exactly:
 *   - pageblocks: every pageblock of a present section, by its base type
 *     (the isolate bit is a state over the type, not a type: an isolated
 *     pageblock still counts as what it will be again). Every retype goes
 *     through pageblock_set_mt(), which calls superblock_retype().
 *   - free frames: frames in the buddy's free lists, untouched chunks
 *     included; frames on per-CPU lists are not free here (they are out of
 *     the buddy, as zone free_pages counts them). The buddy's zone-level
 *     operations (add, delete, free, take) report them, never a merge or
 *     split level and never the per-CPU fast path.
 * Both are kept per pageblock (free) and per region; a region can span
 * zones, so its counters are atomics; a pageblock belongs to one zone, so
 * its free count is written under that zone's lock only.
 *
 * With superblock_order=0 nothing is allocated and every hook is one
 * predictable branch on pool->sb.
 */
#include "superblock.h"

#include "platform/platform.h"
#include "buddy.h"
#include "compaction.h"
#include "isolation.h"
#include "memmap.h"
#include "pageblock.h"
#include "zone.h"

/* Does a pageblock of this type keep its region from being handed out whole for good? */
static const bool mt_pollutes[PA_MT_COUNT] = {
	[PA_MT_UNMOVABLE] = true,   /* kernel data: never moves */
	[PA_MT_MOVABLE] = false,    /* compaction can empty it */
	[PA_MT_RECLAIMABLE] = true, /* caches: freed only when their owner drops them */
	[PA_MT_HIGHATOMIC] = true,  /* a reserve for atomic high-order (unmovable) requests */
	[PA_MT_CMA] = false,        /* only movable data borrows it */
	[PA_MT_ISOLATE] = false,    /* never a base type */
};

int superblock_init(struct pa_pool *pool, char *err, size_t errlen)
{
	const struct pa_boot_config *c = &pool->cfg;
	if (!c->superblock_order)
		return 0;
	pool->nr_superblocks = ((pool->nr_frames - 1) >> c->superblock_order) + 1;
	pool->sb = pa_calloc(&pool->plat, pool->nr_superblocks, sizeof *pool->sb);
	pool->pb_free = pa_calloc(&pool->plat, pool->nr_pageblocks, sizeof *pool->pb_free);
	if (!pool->sb || !pool->pb_free) {
		pa_snprintf(err, errlen, "superblock_order=%u: out of memory for %llu regions",
		            c->superblock_order, (unsigned long long)pool->nr_superblocks);
		superblock_destroy(pool);
		return -ENOMEM;
	}
	/* Before the zones free their memory: nothing is free yet, every type is as memmap set it. */
	for (uint64_t pb = 0; pb < pool->nr_pageblocks; pb++) {
		pa_pfn_t pfn = pb << c->pageblock_order;
		if (memmap_section_present(pool, pfn))
			atomic_fetch_add_explicit(
			        &superblock_of(pool, pfn)->blocks[pageblock_base_mt(pool, pfn)], 1,
			        memory_order_relaxed);
	}
	return 0;
}

void superblock_destroy(struct pa_pool *pool)
{
	pa_free(&pool->plat, pool->sb);
	pa_free(&pool->plat, pool->pb_free);
	pool->sb = NULL;
	pool->pb_free = NULL;
	pool->nr_superblocks = 0;
}

void superblock_retype(struct pa_pool *pool, pa_pfn_t pfn, unsigned old_mt, unsigned new_mt)
{
	if (!memmap_section_present(pool, pfn))
		return;
	struct pa_superblock *sb = superblock_of(pool, pfn);
	atomic_fetch_sub_explicit(&sb->blocks[old_mt], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&sb->blocks[new_mt], 1, memory_order_relaxed);
}

/* n frames at pfn, within one pageblock, became free (add) or stopped being free. */
static void count_pageblock(struct pa_pool *pool, pa_pfn_t pfn, uint64_t n, bool add)
{
	_Atomic uint32_t *f = &pool->pb_free[pfn >> pool->cfg.pageblock_order];
	uint32_t v = atomic_load_explicit(f, memory_order_relaxed); /* the zone lock is held */
	atomic_store_explicit(f, add ? v + (uint32_t)n : v - (uint32_t)n, memory_order_relaxed);
}

void superblock_count_free(struct pa_pool *pool, pa_pfn_t pfn, unsigned order, bool add)
{
	unsigned pbo = pool->cfg.pageblock_order, sbo = pool->cfg.superblock_order;
	uint64_t n = 1ull << order;
	if (order <= pbo) {
		count_pageblock(pool, pfn, n, add);
	} else {
		for (uint64_t i = 0; i < 1ull << (order - pbo); i++)
			count_pageblock(pool, pfn + (i << pbo), 1ull << pbo, add);
	}
	uint64_t per = order <= sbo ? n : 1ull << sbo;
	for (uint64_t off = 0; off < n; off += per) {
		_Atomic uint64_t *free = &superblock_of(pool, pfn + off)->free;
		if (add)
			atomic_fetch_add_explicit(free, per, memory_order_relaxed);
		else
			atomic_fetch_sub_explicit(free, per, memory_order_relaxed);
	}
}

uint64_t superblock_polluted(const struct pa_pool *pool, uint64_t index)
{
	const struct pa_superblock *sb = &pool->sb[index];
	uint64_t n = 0;
	for (unsigned mt = 0; mt < PA_MT_COUNT; mt++)
		if (mt_pollutes[mt])
			n += atomic_load_explicit(&sb->blocks[mt], memory_order_relaxed);
	return n;
}

/* ---------------------------------------------------------------------- */
/* Where a fallback goes: regions ranked, free pageblocks found in one      */
/* ---------------------------------------------------------------------- */

int superblock_init_zones(struct pa_pool *pool, char *err, size_t errlen)
{
	unsigned sbo = pool->cfg.superblock_order;
	for (unsigned i = 0; pool->sb && i < pool->nr_zones; i++) {
		struct pa_zone *z = &pool->zones[i];
		/* The node's regions: hotplug may move a zone's span anywhere in its node. */
		const struct pa_node *n = &pool->nodes[z->node];
		z->sb_rank_cap = (uint32_t)(((n->end_pfn - 1) >> sbo) - (n->start_pfn >> sbo) + 1);
		z->sb_rank = pa_calloc(&pool->plat, z->sb_rank_cap, sizeof *z->sb_rank);
		if (!z->sb_rank) {
			pa_snprintf(err, errlen, "superblock_order=%u: out of memory for zone %u",
			            sbo, i);
			return -ENOMEM;
		}
	}
	return 0;
}

void superblock_destroy_zones(struct pa_pool *pool)
{
	for (unsigned i = 0; pool->zones && i < pool->nr_zones; i++) {
		pa_free(&pool->plat, pool->zones[i].sb_rank);
		pool->zones[i].sb_rank = NULL;
	}
}

bool superblock_pfn_polluted(const struct pa_pool *pool, pa_pfn_t pfn)
{
	return superblock_polluted(pool, pfn >> pool->cfg.superblock_order) != 0;
}

bool superblock_pfn_whole(const struct pa_pool *pool, pa_pfn_t pfn)
{
	const struct pa_superblock *sb = superblock_of(pool, pfn);
	uint64_t blocks = 0;
	for (unsigned mt = 0; mt < PA_MT_COUNT; mt++)
		blocks += atomic_load_explicit(&sb->blocks[mt], memory_order_relaxed);
	return atomic_load_explicit(&sb->free, memory_order_relaxed) ==
	       blocks << pool->cfg.pageblock_order;
}

/*
 * The order regions are tried in: polluted ones first, the most polluted
 * first (concentrating the polluting types is the point); then the clean
 * ones, the one with the least free memory first (the least likely to be
 * handed out whole anyway). Ties go to the lower region, so that a seeded
 * run is repeatable.
 */
static int rank_cmp(const void *a, const void *b)
{
	const struct sb_rank *x = a, *y = b;
	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static uint64_t rank_key(const struct pa_pool *pool, uint64_t index)
{
	uint64_t polluted = superblock_polluted(pool, index);
	uint64_t free = atomic_load_explicit(&pool->sb[index].free, memory_order_relaxed);
	if (polluted)
		return (1ull << 63) | polluted;
	return (1ull << 62) - 1 - (free < (1ull << 62) - 1 ? free : (1ull << 62) - 1);
}

unsigned superblock_rank(struct pa_zone *z, bool polluted_only)
{
	struct pa_pool *pool = z->pool;
	unsigned sbo = pool->cfg.superblock_order, n = 0;
	uint64_t first = z->start_pfn >> sbo, last = (z->end_pfn - 1) >> sbo;
	for (uint64_t i = first; z->end_pfn > z->start_pfn && i <= last && n < z->sb_rank_cap;
	     i++) {
		if (polluted_only && !superblock_polluted(pool, i))
			continue;
		z->sb_rank[n++] = (struct sb_rank){ rank_key(pool, i), (uint32_t)i };
	}
	pa_sort(z->sb_rank, n, sizeof *z->sb_rank, rank_cmp);
	return n;
}

/* The part of region index inside zone z, whole pageblocks. */
static void region_span(const struct pa_zone *z, uint64_t index, pa_pfn_t *lo, pa_pfn_t *hi)
{
	unsigned sbo = z->pool->cfg.superblock_order;
	*lo = index << sbo > z->start_pfn ? index << sbo : z->start_pfn;
	*hi = (index + 1) << sbo < z->end_pfn ? (index + 1) << sbo : z->end_pfn;
}

/* The free block headed at pfn, untouched memory written first; its order, or -1. */
static int free_head_order(struct pa_zone *z, pa_pfn_t pfn, unsigned mts)
{
	struct pa_pool *pool = z->pool;
	struct pa_page *p = pfn_page(pool, pfn);
	if (page_state_relaxed(p) == PS_BODY && zone_pfn_pending(z, pfn) && pfn < z->init_pfn) {
		zone_prepare_range(z, pfn, pfn + 1); /* an untouched chunk: its blocks are linked */
	}
	if (page_state_relaxed(p) != PS_FREE || !((mts >> p->mt) & 1))
		return -1;
	return p->order;
}

pa_pfn_t superblock_free_pageblock(struct pa_zone *z, uint64_t index, unsigned mts, unsigned need,
                                   unsigned *order)
{
	struct pa_pool *pool = z->pool;
	unsigned pbo = pool->cfg.pageblock_order, min = need > pbo ? need : pbo;
	pa_pfn_t lo, hi;
	region_span(z, index, &lo, &hi);
	for (pa_pfn_t p = lo; p < hi; p += 1ull << pbo) {
		if (atomic_load_explicit(&pool->pb_free[p >> pbo], memory_order_relaxed) !=
		            1ull << pbo ||
		    !pfn_in_zone(z, p)) /* another zone's, inside the span (hotplug) */
			continue;
		int o = free_head_order(z, p, mts);
		if (o >= (int)min) {
			*order = (unsigned)o;
			return p;
		}
	}
	return PA_NIL;
}

/*
 * The free blocks of order >= order in the pageblock at pb whose list is in
 * mts: the largest (to claim the pageblock with) and the smallest (to steal).
 */
static void scan_pageblock(struct pa_zone *z, pa_pfn_t pb, unsigned order, unsigned mts,
                           struct sb_pick *pick)
{
	struct pa_pool *pool = z->pool;
	pa_pfn_t end = pb + (1ull << pool->cfg.pageblock_order);
	if (end > z->end_pfn)
		end = z->end_pfn;
	for (pa_pfn_t p = pb; p < end;) {
		const struct pa_page *pg = pfn_page(pool, p);
		unsigned st = page_state_relaxed(pg);
		uint64_t step = block_step(pg, st);
		if (st == PS_FREE && pg->order >= order && ((mts >> pg->mt) & 1)) {
			if (pick->large == PA_NIL || pg->order > pick->large_order) {
				pick->large = p;
				pick->large_order = pg->order;
			}
			if (pick->small == PA_NIL || pg->order < pick->small_order) {
				pick->small = p;
				pick->small_order = pg->order;
			}
		}
		p += step;
	}
}

bool superblock_partial_pageblock(struct pa_zone *z, uint64_t index, unsigned order, unsigned mts,
                                  struct sb_pick *pick)
{
	struct pa_pool *pool = z->pool;
	unsigned pbo = pool->cfg.pageblock_order;
	pa_pfn_t lo, hi;
	region_span(z, index, &lo, &hi);
	/* The fullest candidates first: the fewest allocated frames to share the pageblock with. */
	pa_pfn_t best[SB_PARTIAL_TRIES];
	uint32_t best_free[SB_PARTIAL_TRIES] = { 0 };
	unsigned n = 0;
	for (pa_pfn_t p = lo; p < hi; p += 1ull << pbo) {
		uint32_t f = atomic_load_explicit(&pool->pb_free[p >> pbo], memory_order_relaxed);
		if (f < 1ull << order || !((mts >> pageblock_mt(pool, p)) & 1) ||
		    !pfn_in_zone(z, p))
			continue;
		unsigned k = n < SB_PARTIAL_TRIES ? n++ : SB_PARTIAL_TRIES;
		while (k > 0 && best_free[k - 1] < f) {
			if (k < SB_PARTIAL_TRIES) {
				best[k] = best[k - 1];
				best_free[k] = best_free[k - 1];
			}
			k--;
		}
		if (k < SB_PARTIAL_TRIES) {
			best[k] = p;
			best_free[k] = f;
		}
	}
	for (unsigned i = 0; i < n; i++) {
		*pick = (struct sb_pick){ .large = PA_NIL, .small = PA_NIL };
		scan_pageblock(z, best[i], order, mts, pick);
		if (pick->large != PA_NIL)
			return true;
	}
	return false;
}

/* ---------------------------------------------------------------------- */
/* defrag_mode: compact inside polluted regions before polluting a clean one */
/* ---------------------------------------------------------------------- */

#define DEFRAG_CANDIDATES 4  /* pageblocks one attempt tries to empty, the freest first */
#define DEFRAG_DEFER_MAX  64 /* attempts skipped at most after failures in a row */

/*
 * The movable pageblocks of the polluted regions whose frames are all free
 * or movable, the freest first (the least to move). Zone lock held.
 */
static unsigned defrag_candidates(struct pa_zone *z, pa_pfn_t *out)
{
	struct pa_pool *pool = z->pool;
	unsigned pbo = pool->cfg.pageblock_order, n = 0;
	uint32_t out_free[DEFRAG_CANDIDATES];
	unsigned regions = superblock_rank(z, true);
	for (unsigned r = 0; r < regions; r++) {
		pa_pfn_t lo, hi;
		region_span(z, z->sb_rank[r].index, &lo, &hi);
		for (pa_pfn_t p = lo; p < hi; p += 1ull << pbo) {
			uint32_t f = atomic_load_explicit(&pool->pb_free[p >> pbo],
			                                  memory_order_relaxed);
			if (pageblock_mt(pool, p) != PA_MT_MOVABLE || f == 1ull << pbo ||
			    !pfn_in_zone(z, p) ||
			    (n == DEFRAG_CANDIDATES && f <= out_free[n - 1]) ||
			    !contig_range_movable(pool, p, p + (1ull << pbo), false))
				continue;
			unsigned k = n < DEFRAG_CANDIDATES ? n++ : n - 1;
			for (; k > 0 && out_free[k - 1] < f; k--) {
				out[k] = out[k - 1];
				out_free[k] = out_free[k - 1];
			}
			out[k] = p;
			out_free[k] = f;
		}
	}
	return n;
}

static bool pageblock_all_free(struct pa_zone *z, pa_pfn_t pb)
{
	unsigned pbo = z->pool->cfg.pageblock_order;
	pa_lock(&z->lock, SITE_ADMIN);
	bool free = atomic_load_explicit(&z->pool->pb_free[pb >> pbo], memory_order_relaxed) ==
	            1ull << pbo;
	pa_unlock(&z->lock);
	return free;
}

/*
 * Linux 6.15's defrag_mode compacts the zone before an allocation may fall
 * back into another type's pageblock; here the aim is the region, so only
 * a pageblock of a polluted region is emptied (its folios go wherever the
 * compactor finds room), and the fallback then claims it. A zone where
 * this failed skips the next attempts, twice as many after each failure in
 * a row, as compaction defers.
 */
bool superblock_defrag(struct pa_zone *z, unsigned start_mt)
{
	struct pa_pool *pool = z->pool;
	pa_pfn_t cand[DEFRAG_CANDIDATES];
	(void)start_mt; /* every polluting type claims movable pageblocks */
	pa_lock(&z->lock, SITE_ADMIN);
	bool deferred = z->sb_defrag_skip > 0;
	if (deferred)
		z->sb_defrag_skip--;
	unsigned n = deferred ? 0 : defrag_candidates(z, cand);
	pa_unlock(&z->lock);
	if (!n)
		return false; /* nothing to move: no attempt */
	bool done = false;
	pa_drain_all(pool); /* frames on per-CPU lists neither move nor count as free */
	for (unsigned i = 0; i < n && !done; i++) {
		compaction_range(z, cand[i], cand[i] + (1ull << pool->cfg.pageblock_order));
		done = pageblock_all_free(z, cand[i]);
	}
	pool_stat_inc(pool, done ? PA_PS_DEFRAG_COMPACT_SUCCESS : PA_PS_DEFRAG_COMPACT_FAIL);
	pa_lock(&z->lock, SITE_ADMIN);
	if (done) {
		z->sb_defrag_shift = 0;
	} else {
		z->sb_defrag_skip = 1u << z->sb_defrag_shift;
		if ((1u << z->sb_defrag_shift) < DEFRAG_DEFER_MAX)
			z->sb_defrag_shift++;
	}
	pa_unlock(&z->lock);
	return done;
}

/* ---------------------------------------------------------------------- */
/* Validation: the counts against a recount from the raw state             */
/* ---------------------------------------------------------------------- */

struct sb_recount {
	uint64_t *blocks; /* [region * PA_MT_COUNT + mt] */
	uint64_t *free;   /* [region] */
	uint32_t *pb_free;
};

static void recount_free(struct pa_pool *pool, struct sb_recount *r, pa_pfn_t pfn, unsigned order)
{
	unsigned pbo = pool->cfg.pageblock_order;
	for (uint64_t off = 0; off < 1ull << order; off += 1ull << pbo) {
		uint64_t n = order < pbo ? 1ull << order : 1ull << pbo;
		r->pb_free[(pfn + off) >> pbo] += (uint32_t)n;
		r->free[(pfn + off) >> pool->cfg.superblock_order] += n;
	}
}

/* Every free block of the zone: its lists, and its untouched chunks. */
static void recount_zone(struct pa_zone *z, struct sb_recount *r)
{
	struct pa_pool *pool = z->pool;
	for (unsigned o = 0; o <= pool->cfg.max_order; o++)
		for (unsigned mt = 0; mt < PA_MT_COUNT; mt++)
			for (uint32_t p = buddy_list_peek(z, o, mt); p != PA_NIL;
			     p = pfn_page(pool, p)->lru.next)
				recount_free(pool, r, p, o);
	unsigned co = pool->cfg.chunk_order;
	for (pa_pfn_t c = z->chunk_base; c < z->end_pfn && z->nr_untouched; c += 1ull << co)
		if (c >= z->start_pfn && zone_pfn_pending(z, c) && c < z->init_pfn)
			recount_free(pool, r, c, co);
}

static int compare(struct pa_pool *pool, const struct sb_recount *r, char *err, size_t errlen)
{
	for (uint64_t i = 0; i < pool->nr_superblocks; i++) {
		const struct pa_superblock *sb = &pool->sb[i];
		for (unsigned mt = 0; mt < PA_MT_COUNT; mt++)
			if (atomic_load(&sb->blocks[mt]) != r->blocks[i * PA_MT_COUNT + mt])
				return pa_snprintf(
				               err, errlen,
				               "superblock %llu: %u %s pageblocks counted, %llu found",
				               (unsigned long long)i, atomic_load(&sb->blocks[mt]),
				               pa_migratetype_names[mt],
				               (unsigned long long)r->blocks[i * PA_MT_COUNT + mt]),
				       -EFAULT;
		if (atomic_load(&sb->free) != r->free[i])
			return pa_snprintf(err, errlen,
			                   "superblock %llu: %llu free frames counted, %llu found",
			                   (unsigned long long)i,
			                   (unsigned long long)atomic_load(&sb->free),
			                   (unsigned long long)r->free[i]),
			       -EFAULT;
	}
	for (uint64_t pb = 0; pb < pool->nr_pageblocks; pb++)
		if (atomic_load(&pool->pb_free[pb]) != r->pb_free[pb])
			return pa_snprintf(err, errlen,
			                   "pageblock %llu: %u free frames counted, %u found",
			                   (unsigned long long)pb, atomic_load(&pool->pb_free[pb]),
			                   r->pb_free[pb]),
			       -EFAULT;
	return 0;
}

int superblock_validate_locked(struct pa_pool *pool, char *err, size_t errlen)
{
	if (!pool->sb)
		return 0;
	struct sb_recount r = {
		.blocks = pa_calloc(&pool->plat, pool->nr_superblocks * PA_MT_COUNT,
		                    sizeof *r.blocks),
		.free = pa_calloc(&pool->plat, pool->nr_superblocks, sizeof *r.free),
		.pb_free = pa_calloc(&pool->plat, pool->nr_pageblocks, sizeof *r.pb_free),
	};
	int rc = -ENOMEM;
	if (r.blocks && r.free && r.pb_free) {
		for (uint64_t pb = 0; pb < pool->nr_pageblocks; pb++) {
			pa_pfn_t pfn = pb << pool->cfg.pageblock_order;
			if (memmap_section_present(pool, pfn))
				r.blocks[(pfn >> pool->cfg.superblock_order) * PA_MT_COUNT +
				         pageblock_base_mt(pool, pfn)]++;
		}
		for (unsigned i = 0; i < pool->nr_zones; i++)
			recount_zone(&pool->zones[i], &r);
		rc = compare(pool, &r, err, errlen);
	} else {
		pa_snprintf(err, errlen, "superblocks: out of memory for the recount");
	}
	pa_free(&pool->plat, r.blocks);
	pa_free(&pool->plat, r.free);
	pa_free(&pool->plat, r.pb_free);
	return rc;
}

/* ---------------------------------------------------------------------- */
/* The public view of one region                                           */
/* ---------------------------------------------------------------------- */

uint64_t pa_superblock_count(const struct pa_pool *pool)
{
	return pool ? pool->nr_superblocks : 0;
}

/* The zone of the region's first pageblock that has one; NULL if none. */
static const struct pa_zone *first_zone(const struct pa_pool *pool, pa_pfn_t start, pa_pfn_t end)
{
	for (pa_pfn_t p = start; p < end; p += 1ull << pool->cfg.pageblock_order) {
		const struct pa_zone *z = zone_of_pfn(pool, p);
		if (z)
			return z;
	}
	return NULL;
}

int pa_superblock_info(const struct pa_pool *pool, uint64_t index, struct pa_superblock_info *out)
{
	if (!pool || !out)
		return -EINVAL;
	if (index >= pool->nr_superblocks)
		return -ENOENT;
	unsigned sbo = pool->cfg.superblock_order;
	pa_pfn_t start = index << sbo, end = (index + 1) << sbo;
	if (end > pool->nr_frames)
		end = pool->nr_frames;
	const struct pa_zone *z = first_zone(pool, start, end);
	const struct pa_superblock *sb = &pool->sb[index];
	*out = (struct pa_superblock_info){
		.start_pfn = start,
		.nr_frames = end - start,
		.node = z ? (int)z->node : -1,
		.zone = z ? z->type : PA_ZONE_NORMAL,
		.free = atomic_load_explicit(&sb->free, memory_order_relaxed),
		.polluted = superblock_polluted(pool, index),
	};
	for (unsigned mt = 0; mt < PA_MT_COUNT; mt++)
		out->pageblocks[mt] = atomic_load_explicit(&sb->blocks[mt], memory_order_relaxed);
	out->tainted = out->polluted != 0;
	return 0;
}
