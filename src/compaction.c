/* SPDX-License-Identifier: MIT */
/*
 * Compaction: move movable folios so that free memory becomes contiguous.
 *
 * One pass over a zone, as Linux runs it since folio compaction (6.9):
 *   1. The migrate scanner walks up from the zone start a pageblock at a
 *      time and isolates movable folios (never one larger than the order
 *      asked for: moving it cannot help and costs the most; with linux=
 *      before 6.9, order-0 pages only).
 *   2. The free scanner walks down from the zone end and captures free
 *      blocks whole, unprepared, into one list per order.
 *   3. Each folio gets a destination of its own order; a larger captured
 *      block is split only when no block of that order is left. A folio
 *      that finds none after one more round of the free scanner goes back
 *      whole, and the pass goes on with the smaller ones.
 *   4. Bytes are copied and the owner told (migrate.c); the source is freed
 *      (a whole-zone pass frees it through the per-CPU lists, as Linux's
 *      folio_put() does, and drains none of them).
 *   5. The pass ends when the scanners meet or the order asked for is free;
 *      captured blocks go back to the buddy.
 * With compaction_split_folios=1 it behaves as before: large folios are
 * split and every captured block is cut to order 0 at once.
 *
 * Orders above the pageblock order (up to max_order, 1 GiB at 4 KiB pages)
 * take another route: pick the aligned regions that are cheapest to empty
 * (no unmovable or pinned frame, fewest movable frames), capture their free
 * blocks so nobody takes them, and move every folio out (compact_region).
 *
 * Deferral, cached scanner positions and skip hints follow Linux. The zone
 * lock is held for one pageblock at a time and never while data is copied.
 */
#include "compaction.h"

#include "platform/platform.h"
#include "buddy.h"
#include "isolation.h"
#include "linux.h"
#include "memmap.h"
#include "migrate.h"
#include "pageblock.h"
#include "pcp.h"
#include "zone.h"

#define COMPACT_CLUSTER_MAX     32 /* folios isolated per round, as Linux's */
#define COMPACT_MAX_DEFER_SHIFT 6
#define COMPACT_RETRIES         3   /* sync modes retry a migration that answered AGAIN */
#define EXTFRAG_THRESHOLD       500 /* Linux's vm.extfrag_threshold default */

struct compact_control {
	struct pa_pool *pool;
	struct pa_zone *zone;
	int order; /* -1: the whole zone, no order in mind */
	enum compact_mode mode;
	bool daemon, split_folios;
	bool any_target; /* Linux's ignore_block_suitable: free frames of any pageblock type */
	pa_pfn_t migrate_pfn, free_pfn;
	pa_pfn_t region_start, region_end; /* compact_region(): keep destinations outside */
	uint32_t *captured;                /* [order]: stack of captured blocks through lru.next */
	uint32_t held; /* a range being emptied: its frames, kept out of use (a stack) */
	pa_pfn_t highest_returned; /* end of the highest captured block given back unused */
	uint64_t nr_captured;      /* frames */
	pa_pfn_t migrate[COMPACT_CLUSTER_MAX];
	unsigned nr_migrate;
	pa_pfn_t to_free;  /* a moved folio's old block, freed once the zone lock is dropped */
	uint64_t migrated; /* frames moved */
	uint64_t scanned_migrate, scanned_free;
};

/* Anything to move at all? Without a registered owner nothing is movable. */
static bool pool_has_owners(const struct pa_pool *pool)
{
	return atomic_load_explicit(&pool->nr_owners, memory_order_acquire) > 1;
}

static unsigned pb_frames(const struct pa_pool *pool)
{
	return 1u << pool->cfg.pageblock_order;
}

/* ---------------------------------------------------------------------- */
/* Captured free blocks                                                    */
/* ---------------------------------------------------------------------- */

static void capture_push(struct compact_control *cc, pa_pfn_t pfn, unsigned order)
{
	struct pa_page *p = pfn_page(cc->pool, pfn);
	set_page_state(p, PS_CAPTURED);
	set_page_order(p, order);
	p->lru.next = cc->captured[order];
	cc->captured[order] = (uint32_t)pfn;
	cc->nr_captured += 1ull << order;
}

static pa_pfn_t capture_pop(struct compact_control *cc, unsigned order)
{
	pa_pfn_t pfn = cc->captured[order];
	if (pfn == PA_NIL)
		return PA_NIL;
	cc->captured[order] = pfn_page(cc->pool, pfn)->lru.next;
	cc->nr_captured -= 1ull << order;
	return pfn;
}

/* Keep a block of the range being emptied: never a destination, freed at the end. Zone lock held. */
static void hold_block(struct compact_control *cc, pa_pfn_t pfn, unsigned order)
{
	struct pa_page *p = pfn_page(cc->pool, pfn);
	set_page_state(p, PS_CAPTURED);
	set_page_order(p, order);
	p->lru.next = cc->held;
	cc->held = (uint32_t)pfn;
	cc->zone->reserved_pages += 1ull << order;
}

/* Zone lock held: a free block leaves the buddy for the captured lists. */
static void capture_block(struct compact_control *cc, pa_pfn_t pfn, unsigned order)
{
	buddy_list_del(cc->zone, pfn);
	cc->zone->reserved_pages += 1ull << order;
	if (!cc->split_folios) {
		capture_push(cc, pfn, order);
		return;
	}
	for (uint64_t i = 0; i < (1ull << order); i++) /* the old way: order-0 pages only */
		capture_push(cc, pfn + i, 0);
}

/* migrate_folio()'s release callback: a freed source, or a destination not used. */
static void capture_release(void *ctx, pa_pfn_t pfn, unsigned order)
{
	struct compact_control *cc = ctx;
	struct pa_page *p = pfn_page(cc->pool, pfn);
	if (page_state(p) == PS_MIGRATING) {
		capture_push(cc, pfn, order); /* unused: a destination for the next folio */
	} else if (cc->region_end > cc->region_start) {
		hold_block(cc, pfn, order); /* a source inside the range being emptied */
	} else if (cc->order < 0) {
		/*
		 * A whole-zone pass frees the old block as Linux's folio_put()
		 * does, through the per-CPU lists; only a pass for an order
		 * drains them (Linux's compact_zone()). An allocated block of
		 * nobody's until then, freed after the zone lock is dropped;
		 * counted allocated, as the free counts it freed.
		 */
		cc->zone->stat[PA_ZS_PGALLOC] += 1ull << order;
		set_page_owner(p, 0);
		p->private = 0;
		__atomic_store_n(&p->state, (uint8_t)PS_ALLOC, __ATOMIC_RELEASE);
		cc->to_free = pfn;
	} else {
		pageblock_free_block(cc->zone, pfn, order);
	}
}

/* Give every captured block back to the buddy. */
static void capture_release_all(struct compact_control *cc)
{
	struct pa_zone *z = cc->zone;
	pa_lock(&z->lock, SITE_ADMIN);
	for (unsigned o = 0; o <= cc->pool->max_order_boot; o++) { /* max_order may have moved */
		for (pa_pfn_t pfn; (pfn = capture_pop(cc, o)) != PA_NIL;) {
			z->reserved_pages -= 1ull << o;
			if (pfn + (1ull << o) > cc->highest_returned)
				cc->highest_returned = pfn + (1ull << o);
			pageblock_free_block(z, pfn, o);
		}
	}
	while (cc->held != PA_NIL) {
		pa_pfn_t pfn = cc->held;
		struct pa_page *p = pfn_page(cc->pool, pfn);
		unsigned o = page_order(p);
		cc->held = p->lru.next;
		z->reserved_pages -= 1ull << o;
		pageblock_free_block(z, pfn, o);
	}
	pa_unlock(&z->lock);
}

/* ---------------------------------------------------------------------- */
/* The free scanner                                                        */
/* ---------------------------------------------------------------------- */

/*
 * Linux's suitable_migration_target(): movable pageblocks, or any at the
 * last priority of direct compaction (ignore_block_suitable); free blocks of
 * the order asked for stay (keep_free()).
 */
static bool free_target(const struct compact_control *cc, pa_pfn_t pb_start)
{
	return pfn_in_zone(cc->zone, pb_start) &&
	       (cc->any_target || pageblock_mt(cc->pool, pb_start) == PA_MT_MOVABLE) &&
	       !(cc->pool->pb_bits[pb_start >> cc->pool->cfg.pageblock_order] & PB_ISOLATE);
}

/* Would capturing this free block undo what the pass is for? */
static bool keep_free(const struct compact_control *cc, unsigned order)
{
	if (cc->region_end > cc->region_start)
		return false; /* emptying a region: any free block outside it will do */
	unsigned limit = cc->order >= 0 ? (unsigned)cc->order : cc->pool->cfg.pageblock_order;
	return order >= limit;
}

/* Capture the free blocks of one pageblock. Zone lock held. */
static void isolate_free_block(struct compact_control *cc, pa_pfn_t start, pa_pfn_t end)
{
	struct pa_pool *pool = cc->pool;
	for (pa_pfn_t pfn = start; pfn < end;) {
		struct pa_page *p = pfn_page(pool, pfn);
		unsigned st = page_state(p);
		uint64_t n = block_step(p, st);
		cc->scanned_free += n;
		if (st == PS_FREE && !keep_free(cc, page_order(p)) &&
		    (pfn + n <= cc->region_start || pfn >= cc->region_end))
			capture_block(cc, pfn, page_order(p));
		pfn += n;
	}
}

/* Walk down from free_pfn, a pageblock at a time, until something is captured. */
static void isolate_freepages(struct compact_control *cc)
{
	struct pa_zone *z = cc->zone;
	uint64_t before = cc->nr_captured;
	while (cc->free_pfn > cc->migrate_pfn && cc->nr_captured == before) {
		pa_pfn_t start = (cc->free_pfn - 1) & ~(pa_pfn_t)(pb_frames(cc->pool) - 1);
		if (start < z->start_pfn)
			start = z->start_pfn;
		if (start < cc->migrate_pfn) {
			cc->free_pfn =
			        cc->migrate_pfn; /* the scanners met: the next pass starts over */
			break;
		}
		pa_lock(&z->lock, SITE_ADMIN);
		if (free_target(cc, start))
			isolate_free_block(cc, start, cc->free_pfn);
		pa_unlock(&z->lock);
		cc->free_pfn = start;
	}
}

/*
 * The smallest captured block of at least this order, split down to it, as
 * a destination; PA_NIL when none. Zone lock held: the lists are the pass's
 * own, but the frame map they write is read whole by pa_validate(), which
 * must never see a block half split.
 */
static pa_pfn_t take_captured(struct compact_control *cc, unsigned order)
{
	for (unsigned o = order; o <= cc->pool->max_order_boot; o++) {
		pa_pfn_t pfn = capture_pop(cc, o);
		if (pfn == PA_NIL)
			continue;
		while (o > order) { /* split on demand: keep the upper halves */
			o--;
			capture_push(cc, pfn + (1ull << o), o);
		}
		struct pa_page *d = pfn_page(cc->pool, pfn);
		set_page_order(d, order);
		set_page_state(d, PS_MIGRATING);
		return pfn;
	}
	return PA_NIL;
}

/*
 * A destination of this order: captured, split from a larger one, or
 * scanned for. As Linux's compaction_alloc(), the free scanner runs once
 * more when nothing captured is large enough, and a folio that then finds
 * none fails (Linux splits it then, a split not modelled here: it goes back
 * whole); emptying a region scans on until a block that large turns up or
 * the scanners meet, since every folio in the region must go.
 */
static pa_pfn_t compaction_alloc(struct compact_control *cc, unsigned order)
{
	bool scan_on = order && cc->region_end > cc->region_start;
	for (int tries = 0; tries < 2 || (scan_on && cc->free_pfn > cc->migrate_pfn); tries++) {
		pa_lock(&cc->zone->lock, SITE_ADMIN);
		pa_pfn_t pfn = take_captured(cc, order);
		pa_unlock(&cc->zone->lock);
		if (pfn != PA_NIL)
			return pfn;
		isolate_freepages(cc);
	}
	return PA_NIL;
}

/* ---------------------------------------------------------------------- */
/* The migrate scanner                                                     */
/* ---------------------------------------------------------------------- */

/* Isolate the movable folios of [start, end). Zone lock held. */
static void isolate_migrate_block(struct compact_control *cc, pa_pfn_t start, pa_pfn_t end)
{
	struct pa_pool *pool = cc->pool;
	/*
	 * Linux's skip_isolation_on_order(): a folio of the order asked for (or
	 * of the pageblock, for a whole-zone pass) is left alone: it is no
	 * obstacle, and no captured block could take it. Emptying a range
	 * moves everything; the old mode splits large folios first.
	 */
	int limit = cc->order >= 0 ? cc->order : (int)pool->cfg.pageblock_order;
	bool all = cc->region_end > cc->region_start || cc->split_folios;
	if (!all && limit == 0)
		return;
	unsigned max = all ? pool_max_order(pool) :
	               linux_rule(pool, LR_FOLIO_COMPACTION) ?
	                     (unsigned)limit - 1 :
	                     0; /* before 6.9: order-0 folios only */
	for (pa_pfn_t pfn = start; pfn < end && cc->nr_migrate < COMPACT_CLUSTER_MAX;) {
		struct pa_page *p = pfn_page(pool, pfn);
		unsigned st = page_state(p);
		uint64_t n = block_step(p, st);
		cc->scanned_migrate += n;
		if (st == PS_ALLOC && migrate_isolate(pool, pfn, max)) {
			if (cc->split_folios && page_order(p))
				migrate_split_folio(cc->zone, pfn);
			cc->migrate[cc->nr_migrate++] = pfn;
			n = 1ull << page_order(p);
		}
		pfn += n;
	}
}

/* Linux's isolate_migratepages(): the next pageblock that is worth scanning. */
static void isolate_migratepages(struct compact_control *cc)
{
	struct pa_pool *pool = cc->pool;
	struct pa_zone *z = cc->zone;
	pa_pfn_t start = cc->migrate_pfn;
	pa_pfn_t end = (start | (pb_frames(pool) - 1)) + 1;
	if (end > cc->free_pfn)
		end = cc->free_pfn;
	uint8_t *bits = &pool->pb_bits[start >> pool->cfg.pageblock_order];
	pa_lock(&z->lock, SITE_ADMIN);
	/* Async passes skip blocks that gave nothing before, and non-movable blocks. */
	bool skip = !pfn_in_zone(z, start) || /* another zone's, inside the span (hotplug) */
	            (cc->mode == COMPACT_ASYNC &&
	             ((*bits & PB_SKIP) || pageblock_mt(pool, start) != PA_MT_MOVABLE));
	if (!skip) {
		unsigned before = cc->nr_migrate;
		isolate_migrate_block(cc, start, end);
		if (cc->nr_migrate == before && cc->order >= 0)
			__atomic_fetch_or(bits, (uint8_t)PB_SKIP, __ATOMIC_RELAXED);
	}
	pa_unlock(&z->lock);
	/* A full cluster may have stopped mid-block: resume after the last folio. */
	if (cc->nr_migrate == COMPACT_CLUSTER_MAX) {
		pa_pfn_t last = cc->migrate[cc->nr_migrate - 1];
		end = last + (1ull << page_order(pfn_page(pool, last)));
	}
	cc->migrate_pfn = end;
}

/* Give an isolated folio back to its owner. */
static void putback(struct compact_control *cc, pa_pfn_t src)
{
	pa_lock(&cc->zone->lock, SITE_ADMIN);
	migrate_putback(cc->zone, src);
	pa_unlock(&cc->zone->lock);
}

/*
 * Move one isolated folio. Sync modes ask again after PA_MIGRATE_AGAIN,
 * keeping the folio isolated in between (so it cannot change under us);
 * false when no destination of its order could be found.
 */
static bool migrate_one(struct compact_control *cc, pa_pfn_t src, unsigned order)
{
	int tries = cc->mode == COMPACT_ASYNC ? 1 : COMPACT_RETRIES;
	for (int t = 0; t < tries; t++) {
		pa_pfn_t dst = compaction_alloc(cc, order);
		if (dst == PA_NIL) {
			putback(cc, src);
			return false;
		}
		enum pa_migrate_result r =
		        migrate_folio(cc->zone, src, dst, t + 1 < tries, capture_release, cc);
		if (cc->to_free != PA_NIL) {
			pa_free_pages(cc->pool, pfn_page(cc->pool, cc->to_free), order);
			cc->to_free = PA_NIL;
		}
		if (r == PA_MIGRATE_OK)
			cc->migrated += 1ull << order;
		if (r != PA_MIGRATE_AGAIN || t + 1 == tries)
			return true; /* done with it: migrate_folio() put it back or freed it */
	}
	return true;
}

/*
 * Move every isolated folio. A folio that finds no destination is put back,
 * and so are larger ones after it; the pass goes on while order-0 folios
 * can still move. False when nothing can move any more.
 */
static bool migrate_pages(struct compact_control *cc)
{
	unsigned fail_order = pool_max_order(cc->pool) + 1;
	for (unsigned i = 0; i < cc->nr_migrate; i++) {
		pa_pfn_t src = cc->migrate[i];
		unsigned order = page_order(pfn_page(cc->pool, src));
		if (order >= fail_order)
			putback(cc, src);
		else if (!migrate_one(cc, src, order))
			fail_order = order;
	}
	cc->nr_migrate = 0;
	return fail_order > 0;
}

/* ---------------------------------------------------------------------- */
/* A pass over a zone                                                      */
/* ---------------------------------------------------------------------- */

/* Is a block of the order asked for free now (Linux's __compact_finished)? */
static bool order_free(const struct pa_zone *z, int order)
{
	if (order < 0)
		return false;
	for (unsigned mt = 0; mt < PA_NR_PCP_TYPES; mt++)
		if (buddy_first_order(z, (unsigned)order, mt) >= 0)
			return true;
	return false;
}

static void compact_stats(struct compact_control *cc)
{
	struct pa_zone *z = cc->zone;
	pa_lock(&z->lock, SITE_ADMIN);
	z->stat[cc->daemon ? PA_ZS_COMPACT_DAEMON_MIGRATE_SCANNED :
	                     PA_ZS_COMPACT_MIGRATE_SCANNED] += cc->scanned_migrate;
	z->stat[cc->daemon ? PA_ZS_COMPACT_DAEMON_FREE_SCANNED : PA_ZS_COMPACT_FREE_SCANNED] +=
	        cc->scanned_free;
	pa_unlock(&z->lock);
}

static bool compact_cc_init(struct compact_control *cc, struct pa_zone *z, int order,
                            enum compact_mode mode, bool whole_zone)
{
	memset(cc, 0, sizeof *cc);
	cc->pool = z->pool;
	cc->zone = z;
	cc->order = order;
	cc->mode = mode;
	cc->split_folios = z->pool->cfg.compaction_split_folios;
	cc->held = PA_NIL;
	cc->to_free = PA_NIL;
	cc->captured =
	        pa_malloc(&z->pool->plat, (z->pool->max_order_boot + 1) * sizeof *cc->captured);
	if (!cc->captured)
		return false;
	for (unsigned o = 0; o <= z->pool->max_order_boot; o++)
		cc->captured[o] = PA_NIL;
	pa_lock(&z->lock, SITE_ADMIN);
	/* The scanners read descriptors: untouched memory gets them written first. */
	zone_prepare_range(z, z->start_pfn, z->init_pfn);
	cc->migrate_pfn = whole_zone ? z->start_pfn : z->compact_cached_migrate_pfn;
	cc->free_pfn = whole_zone ? z->end_pfn : z->compact_cached_free_pfn;
	if (cc->migrate_pfn >= cc->free_pfn) { /* a pass ended: start over, forget skip hints */
		cc->migrate_pfn = z->start_pfn;
		cc->free_pfn = z->end_pfn;
		for (pa_pfn_t pfn = z->start_pfn; pfn < z->end_pfn; pfn += pb_frames(cc->pool))
			__atomic_fetch_and(&cc->pool->pb_bits[pfn >> cc->pool->cfg.pageblock_order],
			                   (uint8_t)~PB_SKIP, __ATOMIC_RELAXED);
	}
	pa_unlock(&z->lock);
	return true;
}

/* One pass; returns the frames moved. */
static uint64_t compact_zone(struct pa_zone *z, int order, enum compact_mode mode, bool whole_zone,
                             bool any_target, bool daemon)
{
	struct compact_control cc;
	if (!zone_populated(z) || !compact_cc_init(&cc, z, order, mode, whole_zone))
		return 0; /* an empty zone (ZONE_MOVABLE with nothing onlined) has nothing to move */
	cc.daemon = daemon;
	cc.any_target = any_target;
	while (cc.migrate_pfn < cc.free_pfn) {
		pa_lock(&z->lock, SITE_ADMIN);
		bool done = order_free(z, order);
		pa_unlock(&z->lock);
		if (done)
			break;
		isolate_migratepages(&cc);
		if (cc.nr_migrate && !migrate_pages(&cc))
			break;
	}
	capture_release_all(&cc);
	compact_stats(&cc);
	pa_lock(&z->lock, SITE_ADMIN);
	z->stat[PA_ZS_COMPACT_ISOLATED] += cc.migrated;
	z->compact_cached_migrate_pfn = cc.migrate_pfn;
	/* As Linux: the free scanner resumes at the highest block it gave back, not below it. */
	pa_pfn_t back = cc.highest_returned ?
	                        ((cc.highest_returned - 1) | (pb_frames(cc.pool) - 1)) + 1 :
	                        0;
	z->compact_cached_free_pfn =
	        back > cc.free_pfn && cc.free_pfn > cc.migrate_pfn ? back : cc.free_pfn;
	if (z->compact_cached_free_pfn > z->end_pfn)
		z->compact_cached_free_pfn = z->end_pfn;
	pa_unlock(&z->lock);
	pa_free(&z->pool->plat, cc.captured);
	return cc.migrated;
}

/* ---------------------------------------------------------------------- */
/* Orders above the pageblock: empty the cheapest aligned region           */
/* ---------------------------------------------------------------------- */

/*
 * What it costs to empty [start, start + 2^order): the movable frames to
 * move, or UINT64_MAX when a frame cannot be moved (unmovable, pinned, a
 * hole, being moved already). Per-CPU lists were drained before. Zone lock held.
 */
static uint64_t region_cost(const struct pa_pool *pool, pa_pfn_t start, unsigned order)
{
	uint64_t cost = 0;
	for (pa_pfn_t pfn = start; pfn < start + (1ull << order);) {
		const struct pa_page *p = pfn_page(pool, pfn);
		unsigned st = page_state(p);
		if (st == PS_FREE) {
			pfn += 1ull << page_order(p);
			continue;
		}
		if (st != PS_ALLOC || !migrate_movable(pool, p))
			return UINT64_MAX;
		cost += 1ull << page_order(p);
		pfn += 1ull << page_order(p);
	}
	return cost;
}

/* The aligned region of the zone cheapest to empty; PA_NIL if every one holds a fixed frame. */
static pa_pfn_t cheapest_region(struct pa_zone *z, unsigned order)
{
	struct pa_pool *pool = z->pool;
	uint64_t size = 1ull << order, best_cost = UINT64_MAX;
	pa_pfn_t best = PA_NIL;
	for (pa_pfn_t s = (z->start_pfn + size - 1) & ~(size - 1); s + size <= z->end_pfn;
	     s += size) {
		if (!memmap_section_present(pool, s))
			continue;
		pa_lock(&z->lock, SITE_ADMIN);
		uint64_t cost =
		        range_in_zone(z, s, s + size) ? region_cost(pool, s, order) : UINT64_MAX;
		pa_unlock(&z->lock);
		if (cost < best_cost) {
			best_cost = cost;
			best = s;
		}
	}
	return best;
}

/* Capture every free block of [start, end). Zone lock held. */
static void capture_region_free(struct compact_control *cc, pa_pfn_t start, pa_pfn_t end)
{
	for (pa_pfn_t pfn = start; pfn < end;) {
		struct pa_page *p = pfn_page(cc->pool, pfn);
		unsigned st = page_state(p);
		uint64_t n = block_step(p, st);
		if (st == PS_FREE) {
			buddy_list_del(cc->zone, pfn);
			hold_block(cc, pfn, page_order(p));
		}
		pfn += n;
	}
}

/*
 * Empty [start, end): capture its free blocks (so no allocation lands
 * there), move its folios to free blocks outside it, keep what they leave
 * behind, and finally give the range back to the buddy, where it merges
 * (or, when isolated, waits on the ISOLATE lists). Returns the frames moved.
 */
static uint64_t compact_range(struct pa_zone *z, pa_pfn_t start, pa_pfn_t end, bool daemon)
{
	struct compact_control cc;
	if (!compact_cc_init(&cc, z, (int)pool_max_order(z->pool), COMPACT_SYNC, true))
		return 0;
	cc.daemon = daemon;
	/* cc.split_folios as booted: the old mode splits what it moves out of a region too */
	cc.region_start = start;
	cc.region_end = end;
	cc.migrate_pfn = z->start_pfn; /* destinations may come from anywhere outside the range */
	pa_lock(&z->lock, SITE_ADMIN);
	/* A folio that straddles the start is scanned from its head, outside the range. */
	pa_pfn_t first = memmap_block_head(z->pool, start);
	first = first == PA_NIL || first > start ? start : first;
	capture_region_free(&cc, start, end);
	pa_unlock(&z->lock);
	for (pa_pfn_t pfn = first; pfn < end;) {
		pa_lock(&z->lock, SITE_ADMIN);
		isolate_migrate_block(&cc, pfn, end);
		pa_unlock(&z->lock);
		if (!cc.nr_migrate)
			break;
		pa_pfn_t last = cc.migrate[cc.nr_migrate - 1];
		pfn = last + (1ull << page_order(pfn_page(z->pool, last)));
		if (!migrate_pages(&cc))
			break;
	}
	capture_release_all(&cc);
	compact_stats(&cc);
	pa_lock(&z->lock, SITE_ADMIN);
	z->stat[PA_ZS_COMPACT_ISOLATED] += cc.migrated;
	pa_unlock(&z->lock);
	pa_free(&z->pool->plat, cc.captured);
	return cc.migrated;
}

uint64_t compaction_range(struct pa_zone *z, pa_pfn_t start, pa_pfn_t end)
{
	return pool_has_owners(z->pool) ? compact_range(z, start, end, false) : 0;
}

bool compaction_empty_range(struct pa_zone *z, pa_pfn_t start, pa_pfn_t end)
{
	if (pool_has_owners(z->pool))
		compact_range(z, start, end, false);
	pa_lock(&z->lock, SITE_ADMIN);
	bool free = isolation_range_free(z, start, end);
	pa_unlock(&z->lock);
	return free;
}

/* ---------------------------------------------------------------------- */
/* Deferral (Linux's defer_compaction and friends; zone lock held)         */
/* ---------------------------------------------------------------------- */

static void defer_compaction(struct pa_zone *z, unsigned order)
{
	z->compact_considered = 0;
	if (z->compact_defer_shift < COMPACT_MAX_DEFER_SHIFT)
		z->compact_defer_shift++;
	if (order < z->compact_order_failed)
		z->compact_order_failed = order;
}

static bool compaction_deferred(struct pa_zone *z, unsigned order)
{
	unsigned limit = 1u << z->compact_defer_shift;
	if (order < z->compact_order_failed)
		return false;
	if (++z->compact_considered >= limit) {
		z->compact_considered = limit;
		return false;
	}
	return true;
}

static void compaction_defer_reset(struct pa_zone *z, unsigned order)
{
	z->compact_considered = 0;
	z->compact_defer_shift = 0;
	if (order >= z->compact_order_failed)
		z->compact_order_failed = order + 1;
}

/* ---------------------------------------------------------------------- */
/* Entry points                                                            */
/* ---------------------------------------------------------------------- */

/*
 * Compact one zone for order: the region route above the pageblock order.
 * Direct compaction's sync pass is Linux's MIN_COMPACT_PRIORITY: the whole
 * zone, and free frames of any pageblock type as destinations.
 */
static uint64_t compact_zone_order(struct pa_zone *z, int order, enum compact_mode mode,
                                   bool daemon)
{
	if (order > (int)z->pool->cfg.pageblock_order) {
		pa_drain_all(z->pool);
		pa_pfn_t start = cheapest_region(z, (unsigned)order);
		return start == PA_NIL ? 0 :
		                         compact_range(z, start, start + (1ull << order), daemon);
	}
	bool min_priority = order >= 0 && mode == COMPACT_SYNC;
	return compact_zone(z, order, mode, order < 0 || min_priority, min_priority, daemon);
}

static bool zone_allows(const struct pa_zone *z, const struct pa_node *node, pa_gfp_t gfp)
{
	return zone_gfp_allows(z, gfp) && (!(gfp & PA_GFP_THISNODE) || z->node == node->id);
}

/*
 * Linux's __fragmentation_index() at order: towards 0 a failure there would
 * be for lack of memory, towards 1000 for fragmentation; -1000 when a
 * block of the order is free. Zone lock held.
 */
static int fragmentation_index(const struct pa_zone *z, unsigned order)
{
	uint64_t blocks = 0, frames = 0, suitable = 0;
	for (unsigned o = 0; o <= z->pool->cfg.max_order; o++) {
		uint64_t n = zone_free_blocks(z, o);
		blocks += n;
		frames += n << o;
		suitable += o >= order ? n : 0;
	}
	if (!blocks)
		return 0;
	if (suitable)
		return -1000;
	return 1000 - (int)((1000 + frames * 1000 / (1ull << order)) / blocks);
}

enum suit { SUIT_DONE, SUIT_SKIP, SUIT_GO };

/*
 * Linux's compaction_suit_allocation_order() for a zone of the request's
 * zonelist: done where the request's watermark already holds at the order;
 * skipped where the zone lacks the free memory to migrate into (the
 * request's watermark, the low one above the costly order, plus twice the
 * block) or where a failure would be for lack of memory rather than
 * fragmentation (the index at most vm.extfrag_threshold's 500). Orders
 * above the pageblock, which Linux does not have, empty a region instead
 * (compact_zone_order()) and go on. Zone lock held.
 */
static enum suit compaction_suit(const struct pa_zone *z, unsigned order, unsigned alloc_flags,
                                 enum pa_zone_type highest)
{
	uint64_t reserve = z->lowmem_reserve[highest],
	         mark = z->wmark[alloc_flags & ALLOC_WMARK_MASK];
	if (zone_watermark_ok(z, order, mark + reserve, alloc_flags))
		return SUIT_DONE;
	if (order > z->pool->cfg.pageblock_order)
		return SUIT_GO;
	uint64_t room = mark + reserve + (2ull << order);
	if (order > PA_COSTLY_ORDER)
		room += z->wmark[PA_WMARK_LOW] - z->wmark[PA_WMARK_MIN];
	if (!zone_watermark_ok(z, 0, room, ALLOC_CMA))
		return SUIT_SKIP;
	int index = order > PA_COSTLY_ORDER ? fragmentation_index(z, order) : -1;
	return index >= 0 && index <= EXTFRAG_THRESHOLD ? SUIT_SKIP : SUIT_GO;
}

enum compact_result compaction_direct(struct pa_pool *pool, const struct pa_node *node,
                                      unsigned order, pa_gfp_t gfp, enum compact_mode mode,
                                      unsigned alloc_flags, enum pa_zone_type highest)
{
	if (!pool_has_owners(pool) || order == 0 || (gfp & PA_GFP_NOCOMPACT))
		return COMPACT_R_SKIPPED;
	/* No drain of every CPU's lists: Linux's reclaim round does that (alloc_compact()). */
	bool success = false, stalled = false, ran = false;
	for (unsigned i = 0; i < node->nr_zonelist && !success; i++) {
		struct pa_zone *z = node->zonelist[i];
		if (!zone_allows(z, node, gfp))
			continue;
		pa_lock(&z->lock, SITE_ADMIN);
		bool deferred = mode != COMPACT_SYNC && compaction_deferred(z, order);
		enum suit suit =
		        deferred ? SUIT_SKIP : compaction_suit(z, order, alloc_flags, highest);
		if (suit == SUIT_DONE)
			compaction_defer_reset(z, order);
		pa_unlock(&z->lock);
		/* Linux counts a stall unless every zone was skipped (deferred ones count). */
		stalled |= deferred || suit != SUIT_SKIP;
		if (deferred)
			pool_stat_inc(pool, PA_PS_COMPACT_DEFERRED);
		success = suit == SUIT_DONE;
		if (suit != SUIT_GO)
			continue;
		ran = true;
		compact_zone_order(z, (int)order, mode, false);
		pa_lock(&z->lock, SITE_ADMIN);
		success = order_free(z, (int)order);
		if (success)
			compaction_defer_reset(z, order);
		else if (mode != COMPACT_ASYNC)
			defer_compaction(z, order);
		pa_unlock(&z->lock);
	}
	if (!stalled)
		return COMPACT_R_SKIPPED;
	pool_stat_inc(pool, PA_PS_COMPACT_STALL);
	pool_stat_inc(pool, success ? PA_PS_COMPACT_SUCCESS : PA_PS_COMPACT_FAIL);
	return success ? COMPACT_R_SUCCESS : ran ? COMPACT_R_FAILED : COMPACT_R_SKIPPED;
}

long pa_compact(struct pa_pool *pool, int node)
{
	if (!pool || node < -1 || node >= (int)pool->nr_nodes)
		return -EINVAL;
	if (!pool_has_owners(pool))
		return 0;
	/* No drain: Linux's compact_node() leaves the per-CPU lists as they are. */
	uint64_t moved = 0;
	for (unsigned i = 0; i < pool->nr_zones; i++)
		if (node < 0 || pool->zones[i].node == (unsigned)node)
			moved += compact_zone_order(&pool->zones[i], -1, COMPACT_SYNC, false);
	return (long)moved;
}

/* ---------------------------------------------------------------------- */
/* Background and proactive compaction (kcompactd)                         */
/* ---------------------------------------------------------------------- */

#define KCOMPACTD_INTERVAL_MS                                                                      \
	500 /* the proactive check, as Linux's HPAGE_FRAG_CHECK_INTERVAL_MSEC */

struct pa_kcompactd {
	struct pa_pool *pool;
	unsigned node;
	pa_thread_t thread;
	bool started, stop;
	int wake_order;       /* -1: no high-order failure to answer */
	struct pa_mutex lock; /* guards stop and wake_order */
	struct pa_cond cond;
};

/* Linux's extfrag_for_order(): the share of free memory unusable for order. */
static uint64_t zone_extfrag(struct pa_zone *z, unsigned order)
{
	uint64_t free = 0, suitable = 0;
	pa_lock(&z->lock, SITE_ADMIN);
	for (unsigned o = 0; o <= z->pool->cfg.max_order; o++) {
		uint64_t n = zone_free_blocks(z, o);
		free += n << o;
		if (o >= order)
			suitable += n << (o - order);
	}
	pa_unlock(&z->lock);
	return free ? (free - (suitable << order)) * 100 / free : 0;
}

/* Linux's fragmentation_score_node(): extfrag at the huge order, weighted by zone size. */
static uint64_t node_fragmentation_score(struct pa_pool *pool, unsigned node)
{
	unsigned order = pool->cfg.huge_order >= 0 ? (unsigned)pool->cfg.huge_order :
	                                             pool->cfg.pageblock_order;
	unsigned max_order = pool_max_order(pool);
	if (order > max_order)
		order = max_order;
	uint64_t present = 0, score = 0;
	for (unsigned i = 0; i < pool->nr_zones; i++)
		if (pool->zones[i].node == node)
			present += zone_present(&pool->zones[i]);
	for (unsigned i = 0; i < pool->nr_zones; i++) {
		struct pa_zone *z = &pool->zones[i];
		if (z->node == node)
			score += zone_present(z) * zone_extfrag(z, order) / (present + 1);
	}
	return score;
}

/* Proactive compaction: above the high threshold, compact until below the low one. */
static uint64_t proactive_compact(struct pa_pool *pool, unsigned node)
{
	unsigned p = atomic_load(&pool->compaction_proactiveness);
	uint64_t low = p >= 95 ? 5 : 100 - p, high = low + 10 > 100 ? 100 : low + 10, moved = 0;
	if (!p || node_fragmentation_score(pool, node) <= high)
		return 0;
	for (int round = 0; round < 4 && node_fragmentation_score(pool, node) > low; round++) {
		uint64_t before = moved;
		for (unsigned i = 0; i < pool->nr_zones; i++)
			if (pool->zones[i].node == node)
				moved += compact_zone(&pool->zones[i], -1, COMPACT_SYNC_LIGHT, true,
				                      false, true);
		if (moved == before)
			break; /* nothing more to gain */
	}
	return moved;
}

/*
 * Linux's kcompactd_do_work() for one zone: not where compaction is
 * deferred or would not help (compaction_suit_allocation_order() at the
 * min watermark); where it did not make the block, frames stranded on the
 * CPUs' lists of the zone could have merged into it: every CPU's lists of
 * the zone go back (drain_all_pages(zone)), and the zone defers.
 */
static uint64_t kcompactd_zone(struct pa_zone *z, int order)
{
	if (!zone_populated(z))
		return 0;
	pa_lock(&z->lock, SITE_ADMIN);
	bool go = !compaction_deferred(z, (unsigned)order) &&
	          compaction_suit(z, (unsigned)order, ALLOC_WMARK_MIN, z->type) == SUIT_GO;
	pa_unlock(&z->lock);
	if (!go)
		return 0;
	uint64_t moved = compact_zone_order(z, order, COMPACT_SYNC_LIGHT, true);
	pa_lock(&z->lock, SITE_ADMIN);
	bool made = order_free(z, order);
	if (made)
		compaction_defer_reset(z, (unsigned)order);
	else
		defer_compaction(z, (unsigned)order);
	pa_unlock(&z->lock);
	if (!made)
		pcp_drain_zone(z);
	return moved;
}

/* One pass of a node's compactor: a pending high-order request, then the proactive check. */
static uint64_t kcompactd_pass(struct pa_kcompactd *kd)
{
	struct pa_pool *pool = kd->pool;
	pa_mutex_lock(&kd->lock);
	int order = kd->wake_order;
	kd->wake_order = -1;
	pa_mutex_unlock(&kd->lock);
	if (!pool_has_owners(pool))
		return 0;
	uint64_t moved = 0;
	if (order > 0) {
		pool_stat_inc(pool, PA_PS_COMPACT_DAEMON_WAKE);
		for (unsigned i = 0; i < pool->nr_zones; i++)
			if (pool->zones[i].node == kd->node)
				moved += kcompactd_zone(&pool->zones[i], order);
	}
	return moved + proactive_compact(pool, kd->node);
}

static void kcompactd_main(void *arg)
{
	struct pa_kcompactd *kd = arg;
	pa_mutex_lock(&kd->lock);
	while (!kd->stop) {
		if (kd->wake_order < 0)
			pa_cond_timedwait(&kd->cond, &kd->lock, KCOMPACTD_INTERVAL_MS * 1000000ull);
		if (kd->stop)
			break;
		pa_mutex_unlock(&kd->lock);
		kcompactd_pass(kd);
		pa_mutex_lock(&kd->lock);
	}
	pa_mutex_unlock(&kd->lock);
}

void compaction_wake(struct pa_pool *pool, unsigned node, unsigned order)
{
	if (!pool->kcompactd || !pool_has_owners(pool))
		return;
	struct pa_kcompactd *kd = &pool->kcompactd[node];
	pa_mutex_lock(&kd->lock);
	if ((int)order > kd->wake_order)
		kd->wake_order = (int)order;
	pa_cond_signal(&kd->cond);
	pa_mutex_unlock(&kd->lock);
}

int pa_kcompactd_wake(struct pa_pool *pool, int node, unsigned order)
{
	if (!pool || node < 0 || node >= (int)pool->nr_nodes || !pool->kcompactd || order == 0 ||
	    order > pool_max_order(pool))
		return -EINVAL;
	compaction_wake(pool, (unsigned)node, order);
	return 0;
}

long pa_kcompactd_run(struct pa_pool *pool, int node)
{
	if (!pool || node < 0 || node >= (int)pool->nr_nodes || !pool->kcompactd)
		return -EINVAL;
	return (long)kcompactd_pass(&pool->kcompactd[node]);
}

int compaction_init(struct pa_pool *pool, char *err, size_t errlen)
{
	pool->kcompactd = pa_calloc(&pool->plat, pool->nr_nodes, sizeof *pool->kcompactd);
	if (!pool->kcompactd) {
		pa_snprintf(err, errlen, "boot: out of memory for the compaction threads");
		return -ENOMEM;
	}
	for (unsigned n = 0; n < pool->nr_nodes; n++) {
		struct pa_kcompactd *kd = &pool->kcompactd[n];
		kd->pool = pool;
		kd->node = n;
		kd->wake_order = -1;
		pa_mutex_init(&kd->lock, &pool->plat);
		pa_cond_init(&kd->cond, &pool->plat);
		if (pool->cfg.kcompactd_manual)
			continue;
		int rc = platform_thread_start(&pool->plat, &kd->thread, kcompactd_main, kd);
		/* Without threads, kcompactd is what kcompactd=manual makes it: pa_kcompactd_run(). */
		if (rc == -ENOSYS)
			continue;
		if (rc) {
			pa_snprintf(
			        err, errlen,
			        "boot: cannot start kcompactd for node %u (use kcompactd=manual)",
			        n);
			return -EAGAIN;
		}
		kd->started = true;
	}
	return 0;
}

void compaction_stop(struct pa_pool *pool)
{
	for (unsigned n = 0; pool->kcompactd && n < pool->nr_nodes; n++) {
		struct pa_kcompactd *kd = &pool->kcompactd[n];
		if (!kd->pool)
			break; /* boot failed before this one was set up */
		if (kd->started) {
			pa_mutex_lock(&kd->lock);
			kd->stop = true;
			pa_cond_signal(&kd->cond);
			pa_mutex_unlock(&kd->lock);
			platform_thread_join(&pool->plat, kd->thread);
		}
	}
	pa_free(&pool->plat, pool->kcompactd);
	pool->kcompactd = NULL;
}
