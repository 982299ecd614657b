/* SPDX-License-Identifier: MIT */
/*
 * Memory hotplug at memory-block granularity (memory_block_size=, a section
 * by default), as Linux's offline_pages() and online_pages().
 *
 * Offlining checks first that every allocated frame of the range can move
 * (else -EBUSY, nothing changed), isolates the range's pageblocks (the
 * per-CPU lists are drained), moves the movable folios out to blocks the
 * allocator hands out (from any zone a movable request may use, so the
 * last block of a zone empties too), checks that every frame is free and
 * isolated, and takes the frames out of their zone: present and managed
 * pages drop, the watermarks and per-CPU list sizes are recomputed, and the
 * frames read as holes (pa_pfn_to_page() gives NULL, as
 * pfn_to_online_page()). The pageblocks stay isolated while offline, so
 * nothing is ever freed there.
 *
 * Onlining gives the frames to the zone the online type asks for (by
 * default the one its pageblocks belonged to), as MOVABLE pageblocks, freed
 * through the buddy so that they merge with free neighbours up to the max
 * order, across section and block boundaries (never into another zone's
 * pageblocks); with shuffle=1 the zone's max-order lists are shuffled
 * again after.
 *
 * Zone spans follow, as Linux's shrink_zone_span() and resize_zone_range():
 * offlining a block at the edge of its zone shrinks the span to the nearest
 * online pageblock of the zone (an empty span where none is left; an empty
 * ZONE_MOVABLE goes back to the node's top, where boot puts it), and
 * onlining grows it to cover the block. As in Linux since 4.13, an offline
 * block may be onlined into any zone of its node (online_movable,
 * online_kernel; memory/<N>/valid_zones lists them), each type picking its
 * zone by the spans as Linux's zone_for_pfn_range(), so spans may overlap:
 * a frame's zone is its pageblock's entry in pb_zone, which changes only
 * while the block is offline and under both zones' locks. Every walker of
 * a span asks pfn_in_zone() under its zone's lock before it touches a
 * frame: the buddy's merge loop (above the pageblock order), compaction's
 * scanners and region choice, superblock steering's pageblock searches,
 * contiguous ranges (refused across zones), pa_validate's frame census and
 * list checks, pagetypeinfo's pageblock counts. Every node has a
 * ZONE_MOVABLE (zone.c), empty without movablecore=. A block changes zone
 * only once deferred init is done: its walk takes a span's frames for the
 * zone's.
 */
#include "hotplug.h"

#include "platform/platform.h"
#include "boot.h"
#include "buddy.h"
#include "deferred.h"
#include "isolation.h"
#include "memmap.h"
#include "migrate.h"
#include "pageblock.h"
#include "shuffle.h"
#include "zone.h"

static uint64_t block_frames(const struct pa_pool *pool)
{
	return 1ull << pool->cfg.block_shift;
}

int hotplug_init(struct pa_pool *pool, char *err, size_t errlen)
{
	const struct pa_boot_config *c = &pool->cfg;
	pool->nr_blocks = (pool->nr_frames + block_frames(pool) - 1) >> c->block_shift;
	pool->block_offline = pa_calloc(&pool->plat, pool->nr_blocks, 1);
	if (!pool->block_offline) {
		pa_snprintf(err, errlen, "memory_block_size=%s: out of memory for %llu blocks",
		            c->memory_block_arg, (unsigned long long)pool->nr_blocks);
		return -ENOMEM;
	}
	uint64_t pb = 1ull << c->pageblock_order;
	for (unsigned i = 0; i < c->nr_offline; i++) {
		pa_pfn_t s = c->offline[i].start >> c->page_shift;
		pa_pfn_t e = c->offline[i].end >> c->page_shift;
		for (pa_pfn_t b = s >> c->block_shift; b < e >> c->block_shift; b++)
			pool->block_offline[b] = 1;
		for (pa_pfn_t p = s; p < e; p += pb) /* as after an offline: isolated */
			pool->pb_bits[p >> c->pageblock_order] |= PB_ISOLATE;
	}
	return 0;
}

void hotplug_destroy(struct pa_pool *pool)
{
	pa_free(&pool->plat, pool->block_offline);
	pool->block_offline = NULL;
}

/* Does [start, start + n) hold any memory (online or not)? */
static bool range_has_memory(const struct pa_pool *pool, pa_pfn_t start, uint64_t n)
{
	for (pa_pfn_t p = start; p < start + n; p++)
		if (memmap_section_present(pool, p) && !boot_pfn_in_hole(&pool->cfg, p))
			return true;
	return false;
}

/*
 * The checks both directions share: a pool, whole memory blocks in one zone,
 * with memory, every block in the state `offline` says. The zone, or NULL
 * with *rc set. Hotplug lock held.
 */
static struct pa_zone *hotplug_range(struct pa_pool *pool, pa_pfn_t start, uint64_t n, bool offline,
                                     int *rc)
{
	*rc = -EINVAL;
	uint64_t bf = block_frames(pool);
	if (!n || start % bf || n % bf || start >= pool->nr_frames || n > pool->nr_frames - start)
		return NULL;
	struct pa_zone *z = zone_of_pfn(pool, start);
	if (!z || zone_of_pfn(pool, start + n - 1) != z || !range_has_memory(pool, start, n))
		return NULL;
	for (uint64_t b = start / bf; b < (start + n) / bf; b++)
		if (pool->block_offline[b] != offline)
			return NULL;
	*rc = 0;
	return z;
}

/* Every frame of [start, end) a hole or in a free isolated block inside the range. Zone lock held. */
static bool range_free_inside(struct pa_zone *z, pa_pfn_t start, pa_pfn_t end)
{
	struct pa_pool *pool = z->pool;
	for (pa_pfn_t p = start; p < end;) {
		const struct pa_page *h = pfn_page(pool, p);
		unsigned st = page_state(h);
		if (st == PS_HOLE) {
			p++;
			continue;
		}
		if (st != PS_FREE || h->mt != PA_MT_ISOLATE || p + (1ull << h->order) > end)
			return false;
		p += 1ull << h->order;
	}
	return true;
}

/* Take the free blocks out of the zone; their frames read as holes. Zone lock held. */
static void remove_frames(struct pa_zone *z, pa_pfn_t start, pa_pfn_t end)
{
	struct pa_pool *pool = z->pool;
	for (pa_pfn_t p = start; p < end;) {
		struct pa_page *h = pfn_page(pool, p);
		if (page_state(h) == PS_HOLE) {
			p++;
			continue;
		}
		uint64_t n = 1ull << h->order;
		buddy_list_del(z, p);
		z->managed_pages -= n;
		zone_set_present(z, z->present_pages - n);
		for (pa_pfn_t q = p; q < p + n; q++)
			set_page_state(pfn_page(pool, q), PS_HOLE);
		p += n;
	}
	atomic_store(&z->populated, z->present_pages > 0);
}

/* Is the pageblock at p the zone's and online? */
static bool pageblock_online_in(const struct pa_zone *z, pa_pfn_t p)
{
	const struct pa_pool *pool = z->pool;
	return pool->pb_zone[p >> pool->cfg.pageblock_order] == z->index &&
	       !pool->block_offline[p >> pool->cfg.block_shift];
}

/* A new span; deferred init stays done, compaction starts over at its ends. Zone lock held. */
static void set_span(struct pa_zone *z, pa_pfn_t lo, pa_pfn_t hi)
{
	z->start_pfn = lo;
	__atomic_store_n(&z->end_pfn, hi,
	                 __ATOMIC_RELAXED); /* zone_gfp_allows() reads it unlocked */
	z->init_pfn = hi;
	z->compact_cached_migrate_pfn = lo;
	z->compact_cached_free_pfn = hi;
}

/*
 * [s, e) just went offline (block_offline set): where it was an edge of the
 * span, the span shrinks to the nearest online pageblock of the zone; a zone
 * with none left gets the empty span [s, s), and an empty ZONE_MOVABLE goes
 * back to where boot puts it, the node's top, so that the node's highest
 * block can go movable again whatever the kernel zone has grown over since.
 * Zone and hotplug locks held.
 */
static void span_shrink(struct pa_zone *z, pa_pfn_t s, pa_pfn_t e)
{
	uint64_t pb = 1ull << z->pool->cfg.pageblock_order;
	pa_pfn_t lo = z->start_pfn, hi = z->end_pfn;
	if (z->init_pfn < hi)
		return; /* deferred init still walks the zone */
	if (s <= lo)
		for (lo = e; lo < hi && !pageblock_online_in(z, lo);)
			lo += pb;
	if (e >= hi)
		for (hi = s; hi > lo && !pageblock_online_in(z, (hi - 1) & ~(pb - 1));)
			hi = (hi - 1) & ~(pb - 1);
	if (lo >= hi)
		lo = hi = z->type == PA_ZONE_MOVABLE ? z->pool->nodes[z->node].end_pfn : s;
	set_span(z, lo, hi);
}

/* [s, e) came online in the zone: the span covers it. Zone and hotplug locks held. */
static void span_grow(struct pa_zone *z, pa_pfn_t s, pa_pfn_t e)
{
	if (z->init_pfn < z->end_pfn)
		return; /* deferred init: nothing was shrunk, so the span covers the block */
	if (z->start_pfn == z->end_pfn)
		set_span(z, s, e);
	else
		set_span(z, s < z->start_pfn ? s : z->start_pfn, e > z->end_pfn ? e : z->end_pfn);
}

/* Frames changed: watermarks and list sizes follow, as Linux's zone_pcp_update(). */
static void hotplug_resize(struct pa_pool *pool, struct pa_zone *z)
{
	pa_lock(&z->lock, SITE_ADMIN);
	z->highatomic_max = z->managed_pages / 100 + (1ull << pool->cfg.pageblock_order);
	pa_unlock(&z->lock);
	zone_setup_watermarks(pool); /* not under ctl_lock: a ctl write may be what called us */
	zone_update_cpu_zones(pool); /* the zone may have gained its first or lost its last frame */
}

static void set_blocks(struct pa_pool *pool, pa_pfn_t start, uint64_t n, uint8_t offline)
{
	for (uint64_t b = start >> pool->cfg.block_shift; b < (start + n) >> pool->cfg.block_shift;
	     b++)
		pool->block_offline[b] = offline;
}

#define MIGRATE_BATCH 32 /* folios isolated at a time, as Linux's migration batches */

/* Isolate up to MIGRATE_BATCH movable folios of [*pfn, end); *pfn steps past them. Zone lock held. */
static unsigned isolate_batch(struct pa_zone *z, pa_pfn_t *pfn, pa_pfn_t end, pa_pfn_t *out)
{
	struct pa_pool *pool = z->pool;
	unsigned n = 0;
	pa_pfn_t p = *pfn;
	while (p < end && n < MIGRATE_BATCH) {
		struct pa_page *pg = pfn_page(pool, p);
		unsigned st = page_state(pg);
		uint64_t step = block_step(pg, st);
		if (st == PS_ALLOC && migrate_isolate(pool, p, pool->max_order_boot)) {
			out[n++] = p;
			step = 1ull << page_order(pg);
		}
		p += step;
	}
	*pfn = p;
	return n;
}

/*
 * Move the movable folios out of the isolated range, each to a block the
 * allocator hands out (any zone a movable request may use, never the
 * isolated range), as Linux's do_migrate_range(): a compaction pass would
 * look for destinations in this zone alone, and the zone may have nothing
 * outside the range (the last block of a ZONE_MOVABLE).
 */
static void migrate_range_out(struct pa_zone *z, pa_pfn_t start, pa_pfn_t end)
{
	pa_pfn_t batch[MIGRATE_BATCH];
	/* A folio that straddles the start is taken from its head, outside the range. */
	pa_pfn_t p = memmap_block_head(z->pool, start);
	p = p == PA_NIL || p > start ? start : p;
	while (p < end) {
		pa_lock(&z->lock, SITE_ADMIN);
		unsigned n = isolate_batch(z, &p, end, batch);
		pa_unlock(&z->lock);
		for (unsigned i = 0; i < n; i++)
			migrate_folio_out(z, batch[i]);
	}
}

/* Empty the isolated range; a few tries, as Linux retries migration. Zone lock held on return if true. */
static bool empty_range(struct pa_zone *z, pa_pfn_t start, pa_pfn_t end)
{
	for (int tries = 0; tries < 3; tries++) {
		migrate_range_out(z, start, end);
		pa_drain_all(z->pool);
		pa_lock(&z->lock, SITE_ADMIN);
		if (range_free_inside(z, start, end))
			return true;
		pa_unlock(&z->lock);
	}
	return false;
}

int pa_memory_offline(struct pa_pool *pool, pa_pfn_t start_pfn, uint64_t nr_pages)
{
	if (!pool)
		return -EINVAL;
	int rc;
	pa_mutex_lock(&pool->hotplug_lock);
	struct pa_zone *z = hotplug_range(pool, start_pfn, nr_pages, false, &rc);
	pa_pfn_t end = start_pfn + nr_pages;
	if (z) {
		pa_lock(&z->lock, SITE_ADMIN);
		zone_prepare_range(z, start_pfn, end);
		/* Boot-reserved memory (memreserve=) never leaves, as Linux's PageReserved. */
		bool movable = !boot_reserved_frames(&pool->cfg, start_pfn, end) &&
		               contig_range_movable(pool, start_pfn, end, false);
		pa_unlock(&z->lock);
		rc = movable ? isolation_start(z, start_pfn, end) : -EBUSY;
	}
	if (z && rc == 0) {
		if (empty_range(z, start_pfn, end)) {
			remove_frames(z, start_pfn, end);
			set_blocks(pool, start_pfn, nr_pages, 1);
			span_shrink(z, start_pfn, end);
			pa_unlock(&z->lock);
			pool_stat_inc(pool, PA_PS_MEMORY_OFFLINE);
			hotplug_resize(pool, z);
		} else {
			isolation_undo(z, start_pfn,
			               end); /* an unmovable frame came in meanwhile */
			rc = -EBUSY;
		}
	}
	pa_mutex_unlock(&pool->hotplug_lock);
	return rc;
}

/* Give [start, end) back to the zone as maximal aligned blocks, each merged with its buddies. */
static void add_frames(struct pa_zone *z, pa_pfn_t start, pa_pfn_t end)
{
	struct pa_pool *pool = z->pool;
	unsigned pbo = pool->cfg.pageblock_order;
	for (pa_pfn_t p = start; p < end; p += 1ull << pbo) {
		pageblock_set_mt(pool, p, PA_MT_MOVABLE);
		__atomic_fetch_and(&pool->pb_bits[p >> pbo], (uint8_t) ~(PB_ISOLATE | PB_SKIP),
		                   __ATOMIC_RELAXED);
	}
	for (pa_pfn_t p = start; p < end;) {
		if (boot_pfn_in_hole(&pool->cfg, p) || !memmap_section_present(pool, p)) {
			p++;
			continue;
		}
		pa_pfn_t run = p;
		while (p < end && memmap_section_present(pool, p) &&
		       !boot_pfn_in_hole(&pool->cfg, p))
			set_page_state(pfn_page(pool, p++), PS_BODY);
		for (pa_pfn_t q = run; q < p;) {
			unsigned o = q ? (unsigned)__builtin_ctzll(q) : pool->cfg.max_order;
			o = o > pool->cfg.max_order ? pool->cfg.max_order : o;
			while (q + (1ull << o) > p)
				o--;
			z->managed_pages += 1ull << o;
			zone_set_present(z, z->present_pages + (1ull << o));
			buddy_free_block(z, q, o, PA_MT_MOVABLE);
			q += 1ull << o;
		}
	}
	atomic_store(&z->populated, z->present_pages > 0);
}

/* Does z's span meet [s, e)? An empty span meets nothing (Linux's zone_intersects()). */
static bool span_meets(const struct pa_zone *z, pa_pfn_t s, pa_pfn_t e)
{
	return z && z->start_pfn < z->end_pfn && s < z->end_pfn && z->start_pfn < e;
}

/*
 * online_kernel's zone, as Linux's default_kernel_zone_for_pfn(): the
 * lowest kernel zone below Normal whose span meets the range, else the
 * highest kernel zone the node has (Normal where there is one).
 */
static struct pa_zone *kernel_zone(const struct pa_pool *pool, const struct pa_node *n, pa_pfn_t s,
                                   pa_pfn_t e)
{
	enum pa_zone_type top = zone_movable_source(pool);
	for (int t = PA_ZONE_DMA; t < (int)top; t++)
		if (span_meets(n->zones[t], s, e))
			return n->zones[t];
	for (int t = (int)top; t >= PA_ZONE_DMA; t--)
		if (n->zones[t])
			return n->zones[t];
	return NULL;
}

/*
 * online's zone, as Linux's default_zone_for_pfn() (no movable_node): the
 * block stays with whichever of the kernel zone and ZONE_MOVABLE alone
 * spans it; where both or neither do, the kernel zone.
 */
static struct pa_zone *default_zone(const struct pa_pool *pool, const struct pa_node *n, pa_pfn_t s,
                                    pa_pfn_t e)
{
	struct pa_zone *k = kernel_zone(pool, n, s, e), *m = n->zones[PA_ZONE_MOVABLE];
	return span_meets(m, s, e) && !span_meets(k, s, e) ? m : k;
}

/*
 * The zone that the type sends the offline block [s, e) to, its pageblocks
 * being z's: any zone of its node, chosen as Linux's zone_for_pfn_range()
 * (spans may overlap); NULL with *rc set when the node has no such zone, or
 * -EBUSY while deferred init runs (its walk takes a span's frames for the
 * zone's). Hotplug lock held.
 */
static struct pa_zone *online_target(struct pa_pool *pool, struct pa_zone *z, pa_pfn_t s,
                                     pa_pfn_t e, enum pa_online_type type, int *rc)
{
	const struct pa_node *n = &pool->nodes[z->node];
	struct pa_zone *t = type == PA_ONLINE_MOVABLE ? n->zones[PA_ZONE_MOVABLE] :
	                    type == PA_ONLINE_KERNEL  ? kernel_zone(pool, n, s, e) :
	                                                default_zone(pool, n, s, e);
	*rc = -EINVAL;
	if (!t)
		return NULL;
	if (t != z && !deferred_init_done(pool)) {
		*rc = -EBUSY;
		return NULL;
	}
	*rc = 0;
	return t;
}

/*
 * The block's pageblocks become t's (it is offline: nothing of it is on
 * any list), under both zones' locks, in pool order: a walker of either
 * span asks pfn_in_zone() under its zone's lock.
 */
static void move_blocks(struct pa_pool *pool, pa_pfn_t s, pa_pfn_t e, struct pa_zone *z,
                        struct pa_zone *t)
{
	unsigned pbo = pool->cfg.pageblock_order;
	struct pa_zone *first = z->index < t->index ? z : t, *second = first == z ? t : z;
	pa_lock(&first->lock, SITE_ADMIN);
	pa_lock(&second->lock, SITE_ADMIN);
	for (pa_pfn_t p = s; p < e; p += 1ull << pbo)
		__atomic_store_n(&pool->pb_zone[p >> pbo], (uint8_t)t->index, __ATOMIC_RELAXED);
	pa_unlock(&second->lock);
	pa_unlock(&first->lock);
}

int pa_memory_online_type(struct pa_pool *pool, pa_pfn_t start_pfn, uint64_t nr_pages,
                          enum pa_online_type type)
{
	if (!pool || (unsigned)type > PA_ONLINE_MOVABLE)
		return -EINVAL;
	int rc;
	pa_pfn_t end = start_pfn + nr_pages;
	pa_mutex_lock(&pool->hotplug_lock);
	struct pa_zone *z = hotplug_range(pool, start_pfn, nr_pages, true, &rc);
	struct pa_zone *t = z ? online_target(pool, z, start_pfn, end, type, &rc) : NULL;
	if (t) {
		/* Deferred init first, while the range still reads as holes: it must not free it too. */
		pa_lock(&z->lock, SITE_ADMIN);
		zone_prepare_range(z, start_pfn, end);
		pa_unlock(&z->lock);
		if (t != z)
			move_blocks(pool, start_pfn, end, z, t);
		pa_lock(&t->lock, SITE_ADMIN);
		add_frames(t, start_pfn, end);
		set_blocks(pool, start_pfn, nr_pages, 0);
		span_grow(t, start_pfn, end);
		pa_unlock(&t->lock);
		pool_stat_inc(pool, PA_PS_MEMORY_ONLINE);
		hotplug_resize(pool, t);
		shuffle_zone(t); /* shuffle=1: the new blocks would come out in address order */
	}
	pa_mutex_unlock(&pool->hotplug_lock);
	return rc;
}

/* Appended at n of buf[len], as snprintf counts. */
static int append(char *buf, size_t len, int n, const char *s)
{
	size_t at = (size_t)n < len ? (size_t)n : len;
	return n + pa_snprintf(buf + at, len - at, "%s", s);
}

/*
 * As Linux's valid_zones: an online block's zone; an offline one's zone
 * for online first, then those online_kernel and online_movable would
 * pick where they differ.
 */
int hotplug_valid_zones(struct pa_pool *pool, uint64_t block, char *buf, size_t len)
{
	pa_pfn_t s = block << pool->cfg.block_shift, e = s + block_frames(pool);
	pa_mutex_lock(&pool->hotplug_lock);
	struct pa_zone *z = zone_of_pfn(pool, s), *def = z;
	bool offline = z && pool->block_offline[block];
	int rc, n = 0;
	if (offline && (def = online_target(pool, z, s, e, PA_ONLINE_DEFAULT, &rc)) == NULL)
		def = z; /* deferred init still runs: the block can only go back to z */
	n = append(buf, len, n, def ? zone_name(def->type) : "none");
	for (unsigned t = PA_ONLINE_KERNEL; offline && t <= PA_ONLINE_MOVABLE; t++) {
		struct pa_zone *to = online_target(pool, z, s, e, (enum pa_online_type)t, &rc);
		if (to && to != def) {
			n = append(buf, len, n, " ");
			n = append(buf, len, n, zone_name(to->type));
		}
	}
	n = append(buf, len, n, "\n");
	pa_mutex_unlock(&pool->hotplug_lock);
	return n;
}

int pa_memory_online(struct pa_pool *pool, pa_pfn_t start_pfn, uint64_t nr_pages)
{
	return pa_memory_online_type(pool, start_pfn, nr_pages, PA_ONLINE_DEFAULT);
}
