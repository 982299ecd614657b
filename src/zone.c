/* SPDX-License-Identifier: MIT */
/*
 * Nodes, zones and zonelists, watermarks and managed-page accounting.
 *
 * Layout: pfns run from 0 to mem / page_size. Memory is split evenly into
 * nodes whose boundaries are rounded to whole sections and pageblocks. The
 * zone types are fixed address ranges, as on x86-64 Linux: DMA below 16 MiB
 * (zone_dma=1 only), DMA32 below 4 GiB, NORMAL above (zones=flat: NORMAL
 * everywhere); a node holds the part of each range that falls in it. ZONE_MOVABLE
 * (movablecore) is what Linux leaves above kernelcore spread over the nodes,
 * from the highest of those types that has memory, in whole max-order blocks
 * (movable_starts()). Every node has a ZONE_MOVABLE, empty (span
 * [end, end) at the node's top, nothing present) without movablecore=, so
 * that online_movable has a zone to give memory to and the zonelists, built
 * once at boot, never change under running allocations. Node boundaries are section and pageblock
 * aligned, zone boundaries pageblock aligned, so a pageblock belongs to one zone.
 */
#include "zone.h"

#include "platform/platform.h"
#include "alloc.h"
#include "boot.h"
#include "buddy.h"
#include "compaction.h"
#include "linux.h"
#include "memmap.h"
#include "pageblock.h"
#include "pcp.h"
#include "shuffle.h"

static const char *const zone_names[PA_ZONE_COUNT] = { "DMA", "DMA32", "Normal", "Movable" };

const char *zone_name(enum pa_zone_type type)
{
	return type < PA_ZONE_COUNT ? zone_names[type] : "?";
}

const char *pa_zone_name(enum pa_zone_type type)
{
	return zone_name(type);
}

static uint64_t align_down(uint64_t v, uint64_t a)
{
	return v / a * a;
}

/* Frames per unit of layout: zone and node boundaries are multiples of it. */
static uint64_t layout_unit(const struct pa_boot_config *c)
{
	unsigned o = c->section_shift > c->pageblock_order ? c->section_shift : c->pageblock_order;
	return 1ull << o;
}

/*
 * Where zone type t ends, as a pfn (MOVABLE aside: it ends where NORMAL
 * does). Types the layout does not have end where the one below ends. The
 * 4 GiB line is rounded down to a pageblock, so a huge pageblock never
 * straddles it (zone_dma=1 insists on an exact 16 MiB, see boot.c).
 */
pa_pfn_t zone_type_end_pfn(const struct pa_pool *pool, enum pa_zone_type t)
{
	const struct pa_boot_config *c = &pool->cfg;
	bool x86 = c->zone_layout == PA_ZONES_X86_64;
	pa_pfn_t dma = x86 && c->zone_dma ? PA_ZONE_DMA_BYTES >> c->page_shift : 0;
	pa_pfn_t dma32 =
	        x86 ? align_down((4ull << 30) >> c->page_shift, 1ull << c->pageblock_order) : 0;
	if (dma32 < dma)
		dma32 = dma;
	switch (t) {
	case PA_ZONE_DMA:
		return dma;
	case PA_ZONE_DMA32:
		return dma32;
	default:
		return PA_PFN_INVALID;
	}
}

bool zone_type_in_layout(const struct pa_pool *pool, enum pa_zone_type t)
{
	const struct pa_boot_config *c = &pool->cfg;
	if (t == PA_ZONE_DMA)
		return c->zone_layout == PA_ZONES_X86_64 && c->zone_dma;
	return t != PA_ZONE_DMA32 || c->zone_layout == PA_ZONES_X86_64;
}

static pa_pfn_t zone_type_start_pfn(const struct pa_pool *pool, enum pa_zone_type t)
{
	return t == PA_ZONE_DMA ? 0 : zone_type_end_pfn(pool, t - 1);
}

static pa_pfn_t clamp_pfn(pa_pfn_t v, pa_pfn_t lo, pa_pfn_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

enum pa_zone_type zone_movable_source(const struct pa_pool *pool)
{
	enum pa_zone_type t = PA_ZONE_NORMAL;
	while (t > PA_ZONE_DMA && zone_type_start_pfn(pool, t) >= pool->nr_frames)
		t--;
	return t;
}

/*
 * ZONE_MOVABLE is sized and placed in whole max-order blocks, as Linux's
 * find_zone_movable_pfns_for_nodes() does: the size is rounded up (so the
 * zone is at least what was asked) and each node's start up to a block
 * boundary, so that neither a pageblock nor a max-order block straddles the
 * zone edge whatever the size of memory. Linux's max-order block is never
 * larger than a section; here max_order may reach 1 GiB and beyond, so the
 * unit stops at the layout unit (a section, or a pageblock if larger),
 * which also keeps every section and memory block in one zone.
 */
static uint64_t movable_unit(const struct pa_boot_config *c)
{
	uint64_t block = 1ull << c->max_order, layout = layout_unit(c);
	return block < layout ? block : layout;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* A memhole= range as pfns [*s, *e), partly covered pages included. */
static void hole_pfns(const struct pa_boot_config *c, unsigned i, pa_pfn_t *s, pa_pfn_t *e)
{
	*s = c->holes[i].start >> c->page_shift;
	*e = (c->holes[i].end + (1ull << c->page_shift) - 1) >> c->page_shift;
}

/* The first run of memory (no memhole=) in [pfn, end) as [*s, *e); false when there is none. */
static bool next_memory_run(const struct pa_boot_config *c, pa_pfn_t pfn, pa_pfn_t end, pa_pfn_t *s,
                            pa_pfn_t *e)
{
	pa_pfn_t hs, he;
	for (bool moved = true; moved && pfn < end;) {
		moved = false;
		for (unsigned i = 0; i < c->nr_holes; i++) {
			hole_pfns(c, i, &hs, &he);
			if (hs <= pfn && pfn < he) {
				pfn = he;
				moved = true;
			}
		}
	}
	if (pfn >= end)
		return false;
	*s = pfn;
	*e = end;
	for (unsigned i = 0; i < c->nr_holes; i++) {
		hole_pfns(c, i, &hs, &he);
		if (hs > pfn && hs < *e)
			*e = hs;
	}
	return true;
}

static uint64_t memory_frames(const struct pa_boot_config *c, pa_pfn_t lo, pa_pfn_t hi)
{
	uint64_t n = 0;
	for (pa_pfn_t s, e; next_memory_run(c, lo, hi, &s, &e); lo = e)
		n += e - s;
	return n;
}

/* What placing kernelcore walks: the memory the kernel zones must keep, and the source zone's start. */
struct kernelcore {
	uint64_t required; /* frames still to place */
	pa_pfn_t usable;   /* ZONE_MOVABLE starts no lower than this */
};

/*
 * One node's share of kernelcore, from the bottom of its memory: memory
 * below the movable source zone counts as kernel memory whatever the share;
 * *zm ends where the node's kernel memory ends (Linux's zone_movable_pfn).
 */
static void kernelcore_node(const struct pa_boot_config *c, pa_pfn_t lo, pa_pfn_t hi,
                            uint64_t share, struct kernelcore *k, pa_pfn_t *zm)
{
	for (pa_pfn_t s, e; next_memory_run(c, lo, hi, &s, &e); lo = e) {
		if (s < *zm)
			s = *zm;
		if (s >= e)
			continue;
		if (s < k->usable) {
			uint64_t below = min_u64(e, k->usable) - s;
			share -= min_u64(below, share);
			k->required -= min_u64(below, k->required);
			if (e <= k->usable) {
				*zm = e;
				continue;
			}
			s = k->usable;
		}
		uint64_t size = min_u64(e - s, share);
		*zm = s + size;
		k->required -= min_u64(size, k->required);
		share -= size;
		if (!share)
			break;
	}
}

/*
 * Where ZONE_MOVABLE starts on each node, as Linux places movablecore: the
 * rest of memory (kernelcore) is spread evenly over the nodes with memory,
 * from the bottom of each, nodes that cannot hold their share passing it on
 * to the others; ZONE_MOVABLE is each node's memory above its kernelcore,
 * from the highest zone type that has memory. A node's entry is its end
 * when it gets none. movablecore of all memory leaves no kernel memory, so,
 * as in Linux, no ZONE_MOVABLE (boot.c refuses it outright).
 */
static void movable_starts(const struct pa_pool *pool, pa_pfn_t bounds[][2], pa_pfn_t *mstart)
{
	const struct pa_boot_config *c = &pool->cfg;
	uint64_t total = 0, unit = movable_unit(c);
	unsigned nodes = 0;
	pa_pfn_t zm[PA_MAX_NODES] = { 0 };
	for (unsigned i = 0; i < pool->nr_nodes; i++) {
		uint64_t n = memory_frames(c, bounds[i][0], bounds[i][1]);
		mstart[i] = bounds[i][1];
		total += n;
		nodes += n > 0;
	}
	uint64_t movable = c->movablecore_pct ? total * c->movablecore_pct / 100 :
	                                        c->movablecore_bytes >> c->page_shift;
	if (!movable)
		return;
	movable = min_u64(align_up(movable, unit), total);
	struct kernelcore k = { .required = total - movable,
		                .usable = zone_type_start_pfn(pool, zone_movable_source(pool)) };
	if (!k.required || !nodes)
		return;
	do {
		uint64_t share = k.required / nodes;
		for (unsigned i = 0; i < pool->nr_nodes; i++) {
			if (k.required < share)
				share = k.required / nodes;
			kernelcore_node(c, bounds[i][0], bounds[i][1], share, &k, &zm[i]);
		}
	} while (--nodes && k.required > nodes);
	for (unsigned i = 0; i < pool->nr_nodes; i++) {
		pa_pfn_t m = align_up(zm[i], unit);
		if (zm[i] && m < bounds[i][1])
			mstart[i] = m;
	}
}

/* Split node [start, end) into zone spans, ZONE_MOVABLE from mstart (empty at end). */
static void node_zone_spans(const struct pa_pool *pool, pa_pfn_t start, pa_pfn_t end,
                            pa_pfn_t mstart, pa_pfn_t span[PA_ZONE_COUNT][2])
{
	for (unsigned t = PA_ZONE_DMA; t < PA_ZONE_MOVABLE; t++) {
		span[t][0] = clamp_pfn(zone_type_start_pfn(pool, t), start, mstart);
		span[t][1] = clamp_pfn(zone_type_end_pfn(pool, t), start, mstart);
	}
	span[PA_ZONE_MOVABLE][0] = mstart;
	span[PA_ZONE_MOVABLE][1] = end;
}

static int zone_alloc_arrays(struct pa_zone *z, unsigned max_order)
{
	size_t orders = max_order + 1;
	z->list_head = pa_malloc(&z->pool->plat, orders * PA_MT_COUNT * sizeof *z->list_head);
	z->list_tail = pa_malloc(&z->pool->plat, orders * PA_MT_COUNT * sizeof *z->list_tail);
	z->nr_free_mt = pa_calloc(&z->pool->plat, orders * PA_MT_COUNT, sizeof *z->nr_free_mt);
	z->alloc_order = pa_calloc(&z->pool->plat, orders, sizeof *z->alloc_order);
	z->folios_migrated = pa_calloc(&z->pool->plat, orders, sizeof *z->folios_migrated);
	if (!z->list_head || !z->list_tail || !z->nr_free_mt || !z->alloc_order ||
	    !z->folios_migrated)
		return -ENOMEM;
	for (size_t i = 0; i < orders * PA_MT_COUNT; i++)
		z->list_head[i] = z->list_tail[i] = PA_NIL;
	z->split.pfn = PA_NIL;
	return 0;
}

/* Hand the run [lo, hi) of present frames to the buddy as maximal aligned blocks. */
static void zone_free_run(struct pa_zone *z, pa_pfn_t lo, pa_pfn_t hi)
{
	unsigned max_order = z->pool->cfg.max_order;
	while (lo < hi) {
		unsigned order = lo ? (unsigned)__builtin_ctzll(lo) : max_order;
		if (order > max_order)
			order = max_order;
		while (lo + (1ull << order) > hi)
			order--;
		buddy_list_add(z, lo, order, pageblock_mt(z->pool, lo));
		z->managed_pages += 1ull << order;
		lo += 1ull << order;
	}
}

/* Does any hole, or memory offline since boot, overlap [lo, hi)? */
static bool range_has_hole(const struct pa_pool *pool, pa_pfn_t lo, pa_pfn_t hi)
{
	return boot_range_hidden(&pool->cfg, lo, hi);
}

/* Is every frame of [lo, hi) present: whole present sections and no hole? */
static bool range_whole(const struct pa_pool *pool, pa_pfn_t lo, pa_pfn_t hi)
{
	uint64_t sec = 1ull << pool->cfg.section_shift;
	for (pa_pfn_t p = lo; p < hi; p = align_down(p, sec) + sec)
		if (!memmap_section_present(pool, p))
			return false;
	return !range_has_hole(pool, lo, hi);
}

/*
 * Walk [lo, hi) a section at a time, frame by frame only where a hole
 * touches a section; call fn on each run of present frames.
 */
static uint64_t for_each_present_run(struct pa_zone *z, pa_pfn_t lo, pa_pfn_t hi,
                                     void (*fn)(struct pa_zone *z, pa_pfn_t lo, pa_pfn_t hi))
{
	struct pa_pool *pool = z->pool;
	uint64_t sec = 1ull << pool->cfg.section_shift, present_frames = 0;
	pa_pfn_t run = PA_PFN_INVALID;
	for (pa_pfn_t pfn = lo; pfn < hi;) {
		pa_pfn_t next = align_down(pfn, sec) + sec;
		if (next > hi)
			next = hi;
		bool none = !memmap_section_present(pool, pfn);
		bool whole = !none && !range_has_hole(pool, pfn, next);
		if (!whole && !none)
			next = pfn + 1;
		bool present = whole || (!none && page_state(pfn_page(pool, pfn)) != PS_HOLE);
		if (present && run == PA_PFN_INVALID)
			run = pfn;
		if (!present && run != PA_PFN_INVALID) {
			if (fn)
				fn(z, run, pfn);
			run = PA_PFN_INVALID;
		}
		present_frames += present ? next - pfn : 0;
		pfn = next;
	}
	if (run != PA_PFN_INVALID && fn)
		fn(z, run, hi);
	return present_frames;
}

/*
 * Initialise the next chunk of the zone: a whole aligned chunk with no hole
 * is only counted (untouched); anything else is freed block by block.
 */
bool zone_init_next_chunk(struct pa_zone *z)
{
	const struct pa_boot_config *c = &z->pool->cfg;
	pa_pfn_t lo = z->init_pfn;
	if (lo >= z->end_pfn)
		return false;
	uint64_t chunk = 1ull << c->chunk_order;
	pa_pfn_t hi = align_down(lo, chunk) + chunk;
	if (hi > z->end_pfn)
		hi = z->end_pfn;
	if (lo % chunk == 0 && hi - lo == chunk && range_whole(z->pool, lo, hi)) {
		buddy_add_untouched(z, lo);
		z->managed_pages += chunk;
	} else {
		for_each_present_run(z, lo, hi, zone_free_run);
	}
	z->init_pfn = hi;
	z->highatomic_max = z->managed_pages / 100 + (1ull << c->pageblock_order);
	if (hi >= z->end_pfn)
		deferred_zone_whole(z);
	return true;
}

pa_pfn_t zone_untouched_pop(struct pa_zone *z)
{
	for (uint64_t w = z->untouched_hint + 1; w-- > 0;) {
		if (!z->untouched[w])
			continue;
		unsigned b = 63 - (unsigned)__builtin_clzll(z->untouched[w]);
		z->untouched[w] &= ~(1ull << b);
		z->untouched_hint = w;
		z->nr_untouched--;
		return z->chunk_base + ((w * 64 + b) << z->pool->cfg.chunk_order);
	}
	return PA_NIL;
}

void zone_prepare_range(struct pa_zone *z, pa_pfn_t start, pa_pfn_t end)
{
	unsigned co = z->pool->cfg.chunk_order;
	if (end > z->end_pfn)
		end = z->end_pfn;
	while (z->init_pfn < end && zone_init_next_chunk(z))
		;
	/* A span grown by hotplug has nothing untouched outside what it had at boot. */
	start = start < z->chunk_base ? z->chunk_base : start;
	end = end > z->untouched_end ? z->untouched_end : end;
	if (!z->nr_untouched || start >= end)
		return;
	for (uint64_t i = (start - z->chunk_base) >> co; i <= (end - 1 - z->chunk_base) >> co;
	     i++) {
		if (!((z->untouched[i / 64] >> (i % 64)) & 1))
			continue;
		z->untouched[i / 64] &= ~(1ull << (i % 64));
		z->nr_untouched--;
		buddy_materialise(z, z->chunk_base + (i << co));
	}
}

static int zone_alloc_untouched(struct pa_zone *z)
{
	unsigned co = z->pool->cfg.chunk_order;
	z->chunk_base = align_down(z->start_pfn, 1ull << co);
	z->untouched_end = z->end_pfn;
	uint64_t chunks =
	        z->end_pfn > z->start_pfn ? ((z->end_pfn - 1 - z->chunk_base) >> co) + 1 : 0;
	z->untouched = pa_calloc(&z->pool->plat, chunks / 64 + 1,
	                         sizeof *z->untouched); /* a word when empty */
	return z->untouched ? 0 : -ENOMEM;
}

/*
 * Where Linux sets the frame descriptors up late (deferred struct page init,
 * defer_init()): only in the zone that ends its node, from the first section
 * boundary after a section's worth of the zone's memory (holes not counted,
 * reserved memory counted: it is memory to memblock).
 */
static pa_pfn_t deferred_from(const struct pa_pool *pool, pa_pfn_t start, pa_pfn_t end)
{
	const struct pa_boot_config *c = &pool->cfg;
	uint64_t section = 1ull << c->section_shift, seen = 0;
	for (pa_pfn_t p = start; p < end; p++) {
		if (boot_pfn_in_memhole(c, p))
			continue;
		if (++seen > section && p % section == 0)
			return p;
	}
	return end;
}

/*
 * The type of a pageblock whose first frame is memreserve= memory. Linux
 * sets every pageblock it initialises early to Movable, reserved or not;
 * before 6.13 the reserved frames of the deferred part were initialised
 * apart (init_reserved_page()), without a type, and their pageblocks kept
 * type 0, Unmovable, with whatever free frames share them. 6.13 gives them
 * Movable too.
 */
static void zone_type_reserved(struct pa_pool *pool, pa_pfn_t start, pa_pfn_t end, bool ends_node)
{
	const struct pa_boot_config *c = &pool->cfg;
	if (!c->deferred_init || !ends_node || linux_rule(pool, LR_RESERVED_MOVABLE) ||
	    !boot_reserved_frames(c, start, end))
		return;
	uint64_t pb = 1ull << c->pageblock_order;
	for (pa_pfn_t p = align_down(deferred_from(pool, start, end) + pb - 1, pb); p < end;
	     p += pb)
		if (boot_reserved_frames(c, p, p + 1))
			pool->pb_bits[p >> c->pageblock_order] = PA_MT_UNMOVABLE;
}

static int zone_init(struct pa_pool *pool, struct pa_zone *z, unsigned node, enum pa_zone_type type,
                     pa_pfn_t start, pa_pfn_t end, bool ends_node)
{
	static const char *const lock_names[PA_ZONE_COUNT] = { "zone->lock (DMA)",
		                                               "zone->lock (DMA32)",
		                                               "zone->lock (Normal)",
		                                               "zone->lock (Movable)" };
	z->pool = pool;
	z->index = (unsigned)(z - pool->zones);
	z->node = node;
	z->type = type;
	z->start_pfn = start;
	z->end_pfn = end;
	z->compact_cached_migrate_pfn = start;
	z->compact_cached_free_pfn = end;
	if (pool->cfg.shuffle)
		shuffle_seed(z);
	platform_lock_init(&z->lock, pool, lock_names[type]);
	if (zone_alloc_arrays(z, pool->cfg.max_order) || zone_alloc_untouched(z) ||
	    pcp_init_zone(z))
		return -ENOMEM;
	uint64_t pb = pool->cfg.pageblock_order;
	for (uint64_t b = start >> pb; start < end && b < ((end + (1ull << pb) - 1) >> pb); b++)
		pool->pb_zone[b] = (uint8_t)z->index;
	pool->zone_pcp[z->index] = z->pcp;
	/* memreserve= memory is present, a hole to the buddy: Linux's reserved pages. */
	z->present_pages = for_each_present_run(z, start, end, NULL) +
	                   boot_reserved_frames(&pool->cfg, start, end);
	atomic_store(&z->populated, z->present_pages > 0);
	zone_type_reserved(pool, start, end, ends_node);
	/*
	 * With deferred init, boot takes the first chunk; the rest waits for the
	 * threads. Lazy, as Linux's defer_init(): every zone but the one that
	 * ends the node whole, that one up to its deferred part.
	 */
	const struct pa_boot_config *c = &pool->cfg;
	pa_pfn_t upto = !c->deferred_init ? end :
	                c->deferred_lazy  ? (ends_node ? deferred_from(pool, start, end) : end) :
	                                    start;
	z->init_pfn = start;
	while (zone_init_next_chunk(z) && z->init_pfn < upto)
		;
	pool->nodes[node].zones[type] = z;
	pool->nodes[node].nr_zones++;
	return 0;
}

/* Ring distance, as a SLIT table: 10 local, 10 more per hop. */
static unsigned node_distance(const struct pa_pool *pool, unsigned a, unsigned b)
{
	unsigned d = a > b ? a - b : b - a;
	if (pool->nr_nodes - d < d)
		d = pool->nr_nodes - d;
	return 10 + 10 * d;
}

/* Own zones from the highest type down, then the other nodes by distance. */
static int node_build_zonelist(struct pa_pool *pool, struct pa_node *n)
{
	n->zonelist = pa_calloc(&pool->plat, pool->nr_zones, sizeof *n->zonelist);
	if (!n->zonelist)
		return -ENOMEM;
	for (unsigned d = 10; n->nr_zonelist < pool->nr_zones; d += 10) {
		for (unsigned k = 0; k < pool->nr_nodes; k++) {
			struct pa_node *m = &pool->nodes[(n->id + k) % pool->nr_nodes];
			if (node_distance(pool, n->id, m->id) != d)
				continue;
			for (int t = PA_ZONE_COUNT - 1; t >= 0; t--)
				if (m->zones[t])
					n->zonelist[n->nr_zonelist++] = m->zones[t];
		}
	}
	return 0;
}

/*
 * The zone each CPU's fast path allocates from: the first of its node's
 * zonelist with memory that an unmovable (or a movable) request may use.
 * Hotplug calls it again when a zone gains or loses all its memory; a fast
 * path that read the old zone meanwhile still allocates correctly there (a
 * zone is never freed before the pool), or falls to the zonelist walk.
 * Which zone a request prefers, and so its ALLOC_NOFRAGMENT, changes then too.
 */
void zone_update_cpu_zones(struct pa_pool *pool)
{
	unsigned cpus = pool->cfg.nr_cpus;
	for (unsigned c = 0; c < cpus; c++) {
		const struct pa_node *n = &pool->nodes[(uint64_t)c * pool->nr_nodes / cpus];
		for (unsigned m = 0; m < 2; m++) {
			enum pa_zone_type highest = m ? PA_ZONE_MOVABLE : PA_ZONE_NORMAL;
			struct pa_zone *pick = NULL;
			for (unsigned i = 0; i < n->nr_zonelist && !pick; i++)
				if (n->zonelist[i]->type <= highest &&
				    zone_populated(n->zonelist[i]))
					pick = n->zonelist[i];
			if (pick) /* else (every zone offline) the old one: it fails over to the walk */
				for (unsigned r = 0; r < 2;
				     r++) /* with and without the reclaimable bit */
					__atomic_store_n(
					        &pool->cpu_pcp[cpu_pcp_slot(
					                c, m * PA_GFP_MOVABLE |
					                           r * PA_GFP_RECLAIMABLE)],
					        pick->pcp[c], __ATOMIC_RELAXED);
		}
	}
	alloc_update_node_flags(pool);
}

static int zone_init_cpu_zones(struct pa_pool *pool)
{
	pool->cpu_pcp =
	        pa_calloc(&pool->plat, cpu_pcp_slot(pool->cfg.nr_cpus, 0), sizeof *pool->cpu_pcp);
	if (!pool->cpu_pcp)
		return -ENOMEM;
	zone_update_cpu_zones(pool);
	return 0;
}

static unsigned count_zones(const struct pa_pool *pool, pa_pfn_t bounds[][2],
                            const pa_pfn_t *mstart)
{
	unsigned n = 0;
	for (unsigned i = 0; i < pool->nr_nodes; i++) {
		pa_pfn_t span[PA_ZONE_COUNT][2];
		node_zone_spans(pool, bounds[i][0], bounds[i][1], mstart[i], span);
		for (unsigned t = 0; t < PA_ZONE_COUNT; t++)
			n += span[t][1] > span[t][0] || t == PA_ZONE_MOVABLE;
	}
	return n;
}

static uint64_t default_min_free_kbytes(const struct pa_pool *pool);

int zone_init_all(struct pa_pool *pool, char *err, size_t errlen)
{
	const struct pa_boot_config *c = &pool->cfg;
	pa_pfn_t bounds[PA_MAX_NODES][2];
	pool->nr_nodes = c->numa;
	for (unsigned i = 0; i < c->numa; i++) {
		bounds[i][0] = i ? bounds[i - 1][1] : 0;
		bounds[i][1] = i + 1 == c->numa ? pool->nr_frames :
		                                  align_down(pool->nr_frames * (i + 1) / c->numa,
		                                             layout_unit(c));
		pool->nodes[i] = (struct pa_node){ .id = i,
			                           .start_pfn = bounds[i][0],
			                           .end_pfn = bounds[i][1] };
	}
	pa_pfn_t mstart[PA_MAX_NODES];
	movable_starts(pool, bounds, mstart);
	unsigned nz = count_zones(pool, bounds, mstart);
	pool->zones = pa_calloc(&pool->plat, nz, sizeof *pool->zones);
	pool->pb_zone = pa_malloc(&pool->plat, pool->nr_pageblocks);
	pool->alloc_fail_order =
	        pa_calloc(&pool->plat, c->max_order + 1, sizeof *pool->alloc_fail_order);
	if (!pool->zones || !pool->pb_zone || !pool->alloc_fail_order || nz > 0xff)
		goto nomem;
	memset(pool->pb_zone, 0xff, pool->nr_pageblocks);
	for (unsigned i = 0; i < c->numa; i++) {
		pa_pfn_t span[PA_ZONE_COUNT][2];
		node_zone_spans(pool, bounds[i][0], bounds[i][1], mstart[i], span);
		for (unsigned t = 0; t < PA_ZONE_COUNT; t++) {
			if (span[t][1] <= span[t][0] && t != PA_ZONE_MOVABLE)
				continue; /* ZONE_MOVABLE always, empty at the node's top without movablecore= */
			if (zone_init(pool, &pool->zones[pool->nr_zones++], i, t, span[t][0],
			              span[t][1], span[t][1] == bounds[i][1]))
				goto nomem;
		}
	}
	for (unsigned i = 0; i < pool->nr_nodes; i++)
		if (node_build_zonelist(pool, &pool->nodes[i]))
			goto nomem;
	uint64_t present = 0;
	for (unsigned i = 0; i < pool->nr_zones; i++)
		present += pool->zones[i].present_pages;
	if (present == boot_reserved_frames(c, 0, pool->nr_frames)) {
		pa_snprintf(err, errlen,
		            "memhole/memreserve: the holes and reservations leave no memory of "
		            "mem=%s to manage",
		            c->mem_arg);
		return -EINVAL;
	}
	if (zone_init_cpu_zones(pool))
		goto nomem;
	atomic_store(&pool->watermark_scale_factor, c->watermark_scale_factor);
	atomic_store(&pool->watermark_boost_factor, c->watermark_boost_factor);
	atomic_store(&pool->pcp_orders, c->pcp_orders);
	pcp_gates_update(pool);
	atomic_store(&pool->pcp_rules, c->pcp_rules);
	atomic_store(&pool->pcp_huge_direct, true);
	atomic_store(&pool->pcp_stream_refill, true);
	atomic_store(&pool->min_free_kbytes, c->min_free_kbytes < 0 ?
	                                             (int64_t)default_min_free_kbytes(pool) :
	                                             c->min_free_kbytes);
	zone_setup_watermarks(pool);
	return 0;
nomem:
	pa_snprintf(err, errlen, "boot: out of memory setting up %u zones", nz);
	return -ENOMEM;
}

void zone_destroy_all(struct pa_pool *pool)
{
	for (unsigned i = 0; i < pool->nr_zones; i++) {
		struct pa_zone *z = &pool->zones[i];
		platform_lock_destroy(&z->lock);
		pcp_destroy_zone(z);
		pa_free(&pool->plat, z->list_head);
		pa_free(&pool->plat, z->list_tail);
		pa_free(&pool->plat, z->nr_free_mt);
		pa_free(&pool->plat, z->alloc_order);
		pa_free(&pool->plat, z->folios_migrated);
		pa_free(&pool->plat, z->untouched);
	}
	for (unsigned i = 0; i < pool->nr_nodes; i++)
		pa_free(&pool->plat, pool->nodes[i].zonelist);
	pa_free(&pool->plat, pool->zones);
	pa_free(&pool->plat, pool->cpu_pcp);
	pa_free(&pool->plat, pool->pb_zone);
	pa_free(&pool->plat, (void *)pool->alloc_fail_order);
}

static uint64_t int_sqrt(uint64_t x)
{
	uint64_t r = 0;
	for (uint64_t bit = 1ull << 62; bit; bit >>= 2) {
		if (x >= r + bit) {
			x -= r + bit;
			r = (r >> 1) + bit;
		} else
			r >>= 1;
	}
	return r;
}

/* Linux's default: sqrt(lowmem_kbytes * 16), clamped to 128..262144; lowmem is below MOVABLE. */
static uint64_t default_min_free_kbytes(const struct pa_pool *pool)
{
	uint64_t lowmem = 0;
	for (unsigned i = 0; i < pool->nr_zones; i++) {
		struct pa_zone *z = &pool->zones[i];
		pa_lock(&z->lock, SITE_ADMIN); /* hotplug may be changing it */
		lowmem += z->type != PA_ZONE_MOVABLE ? z->managed_pages : 0;
		pa_unlock(&z->lock);
	}
	uint64_t kb = int_sqrt((lowmem << pool->cfg.page_shift >> 10) * 16);
	return kb < 128 ? 128 : kb > 262144 ? 262144 : kb;
}

void zone_init_done(struct pa_pool *pool)
{
	pa_mutex_lock(&pool->ctl_lock);
	if (pool->cfg.min_free_kbytes < 0 && !atomic_load(&pool->min_free_kbytes_user))
		atomic_store(&pool->min_free_kbytes, (int64_t)default_min_free_kbytes(pool));
	/* high starts over from the new high_min, as at boot */
	for (unsigned i = 0; i < pool->nr_zones; i++)
		for (unsigned c = 0; c < pool->cfg.nr_cpus; c++) {
			struct pa_pcp *pcp = pool->zones[i].pcp[c];
			platform_spin_lock(pool, &pcp->lock, SITE_ADMIN);
			pcp_set_high(pcp, 0);
			pa_spin_unlock(&pcp->lock);
		}
	zone_setup_watermarks(pool);
	pa_mutex_unlock(&pool->ctl_lock);
	shuffle_pool(pool); /* where Linux's page_alloc_init_late() shuffles */
}

/*
 * Linux's setup_per_zone_lowmem_reserve() with its default
 * lowmem_reserve_ratio (DMA 256, DMA32 256, Normal 32, Movable 0): a zone
 * keeps, from a request that could have used a higher zone type t of the
 * same node, the managed frames of the zones between them over its ratio,
 * so that lower zones are not eaten up by what higher ones could serve.
 * A zone with no managed frames (an empty ZONE_MOVABLE) keeps nothing: its
 * protection is all 0, and a lower zone's column for it repeats the one
 * before, as 6.1's zoneinfo shows: "(0, 2947, 5910, 5910, 5910)" for DMA
 * below an empty Movable and Device, and "(0, 0, 0, 0, 0)" for those two.
 */
static void zone_setup_lowmem_reserve(struct pa_node *n)
{
	static const unsigned ratio[PA_ZONE_COUNT] = { 256, 256, 32, 0 };
	for (unsigned i = 0; i < PA_ZONE_COUNT; i++) {
		struct pa_zone *z = n->zones[i];
		uint64_t above = 0;
		if (!z)
			continue;
		for (unsigned t = 0; t < PA_ZONE_COUNT; t++) {
			if (t > i && n->zones[t])
				above += n->zones[t]->managed_pages;
			/* Stored atomically: the lists' watermark check reads it without the lock. */
			__atomic_store_n(&z->lowmem_reserve[t],
			                 t > i && ratio[i] && z->managed_pages ? above / ratio[i] :
			                                                         0,
			                 __ATOMIC_RELAXED);
		}
	}
}

/*
 * min: each zone's share of min_free_kbytes by managed pages;
 * low = min + delta, high = low + delta, delta = max(min / 4, managed * wsf / 10000).
 * Runs with every zone lock held, so allocations see a consistent set.
 */
void zone_setup_watermarks(struct pa_pool *pool)
{
	for (unsigned i = 0; i < pool->nr_zones; i++)
		pa_lock(&pool->zones[i].lock, SITE_ADMIN);
	uint64_t kb = (uint64_t)atomic_load(&pool->min_free_kbytes);
	uint64_t pages_min = kb >> (pool->cfg.page_shift - 10), total = 0;
	uint64_t wsf = atomic_load(&pool->watermark_scale_factor);
	for (unsigned i = 0; i < pool->nr_zones; i++)
		total += pool->zones[i].managed_pages;
	for (unsigned i = 0; i < pool->nr_zones; i++) {
		struct pa_zone *z = &pool->zones[i];
		uint64_t min = total ? pages_min * z->managed_pages / total : 0;
		uint64_t delta = z->managed_pages * wsf / 10000;
		if (delta < min / 4)
			delta = min / 4;
		z->wmark_base[PA_WMARK_MIN] = min;
		z->wmark_base[PA_WMARK_LOW] = min + delta;
		z->wmark_base[PA_WMARK_HIGH] = min + 2 * delta;
		z->watermark_boost = 0; /* as Linux: new watermarks start unboosted */
		zone_apply_boost(z);
	}
	for (unsigned i = 0; i < pool->nr_nodes; i++)
		zone_setup_lowmem_reserve(&pool->nodes[i]);
	for (unsigned i = pool->nr_zones; i-- > 0;)
		pa_unlock(&pool->zones[i].lock);
	/* The list locks nest outside the zone locks: size the lists after letting go. */
	for (unsigned i = 0; i < pool->nr_zones; i++)
		pcp_setup_sizes(&pool->zones[i]);
}

/*
 * An upper bound of what an order-0 request may not use, over the low
 * watermark: the whole atomic reserve, and for a request that may not borrow
 * CMA every CMA frame. Above it the fast path needs no closer look. Under
 * Linux 6.7's list rules, over the high watermark while the zone is not
 * known to be under it: the allocation that first finds it there takes the
 * zone path, whose walk marks it (Linux's get_page_from_freelist() checks
 * each zone against its high mark first; zone_set_below_high()).
 */
void zone_set_pcp_mark(struct pa_zone *z)
{
	bool high = !pcp_rules_61(z->pool) &&
	            !atomic_load_explicit(&z->below_high, memory_order_relaxed);
	uint64_t mark = z->wmark[high ? PA_WMARK_HIGH : PA_WMARK_LOW] + z->nr_reserved_highatomic;
	for (unsigned bits = 0; bits < 4; bits++)
		atomic_store_explicit(&z->pcp_mark[bits],
		                      bits & PA_GFP_MOVABLE ? mark : mark + z->cma_pages,
		                      memory_order_relaxed);
	atomic_store_explicit(&z->unusable[0], z->nr_reserved_highatomic + z->cma_pages,
	                      memory_order_relaxed);
	atomic_store_explicit(&z->unusable[1], z->nr_reserved_highatomic, memory_order_relaxed);
}

void zone_set_below_high(struct pa_zone *z, bool on)
{
	if (atomic_load_explicit(&z->below_high, memory_order_relaxed) == on)
		return;
	pa_lock(&z->lock, SITE_ADMIN);
	atomic_store_explicit(&z->below_high, on, memory_order_relaxed);
	zone_set_pcp_mark(z);
	pa_unlock(&z->lock);
	if (on)
		pcp_zone_below_high(z);
}

void zone_apply_boost(struct pa_zone *z)
{
	/* Stored atomically: the per-CPU free path reads the high mark without the lock. */
	for (unsigned w = 0; w < PA_NR_WMARK; w++)
		__atomic_store_n(&z->wmark[w], z->wmark_base[w] + z->watermark_boost,
		                 __ATOMIC_RELAXED);
	zone_set_pcp_mark(z);
}

bool zone_boost_watermark(struct pa_zone *z)
{
	uint64_t factor =
	        atomic_load_explicit(&z->pool->watermark_boost_factor, memory_order_relaxed);
	uint64_t pb = 1ull << z->pool->cfg.pageblock_order;
	/* A small zone would run out of memory on the boost alone (Linux's reason). */
	if (!factor || pb * 4 > z->managed_pages)
		return false;
	/* No high mark yet (min_free_kbytes=0): reclaim could not give it back. */
	uint64_t max = z->wmark_base[PA_WMARK_HIGH] * factor / 10000;
	if (!max)
		return false;
	if (max < pb)
		max = pb;
	/*
	 * Without an external kswapd the pool is its own, which has nothing to
	 * reclaim and would end the boost at once (zone_boost_wake()): it is
	 * never raised, and no path that boosts can leave it behind.
	 */
	if (atomic_load_explicit(&z->pool->kswapd_external, memory_order_relaxed)) {
		z->watermark_boost = z->watermark_boost + pb < max ? z->watermark_boost + pb : max;
		zone_apply_boost(z);
	}
	atomic_store_explicit(&z->boost_wake, true, memory_order_relaxed);
	pa_lock_defer(&z->lock);
	return true;
}

/*
 * Lower the boost by at most by; a boost that ended (or wake: a boosted pass)
 * wakes the compactor. Takes the zone lock.
 */
static void boost_end(struct pa_zone *z, uint64_t by, bool wake)
{
	pa_lock(&z->lock, SITE_ADMIN);
	bool was = z->watermark_boost != 0;
	z->watermark_boost -= by < z->watermark_boost ? by : z->watermark_boost;
	zone_apply_boost(z);
	pa_unlock(&z->lock);
	/* Linux's kswapd: "there is now likely space", defragment pageblocks. */
	if ((was && by) || wake)
		compaction_wake(z->pool, z->node, z->pool->cfg.pageblock_order);
}

void zone_boost_wake(struct pa_zone *z)
{
	atomic_store_explicit(&z->boost_wake, false, memory_order_relaxed);
	/* What an external kswapd left when it was switched off ends too. */
	if (!atomic_load_explicit(&z->pool->kswapd_external, memory_order_relaxed))
		boost_end(z, UINT64_MAX, true);
}

void zone_end_boost(struct pa_zone *z)
{
	boost_end(z, UINT64_MAX, false);
}

void zone_reclaim_pass(struct pa_zone *z, bool on)
{
	if (on) {
		pa_lock(&z->lock, SITE_ADMIN);
		z->boost_at_reclaim = z->watermark_boost;
		pa_unlock(&z->lock);
		return;
	}
	pa_lock(&z->lock, SITE_ADMIN);
	uint64_t by = z->boost_at_reclaim;
	z->boost_at_reclaim = 0;
	pa_unlock(&z->lock);
	boost_end(z, by, false);
}

static uint64_t free_of_type(const struct pa_zone *z, unsigned mt)
{
	uint64_t n = 0;
	for (unsigned o = 0; o <= z->pool->cfg.max_order; o++)
		n += zone_free_count(z, o, mt) << o;
	return n;
}

uint64_t zone_free_cma(const struct pa_zone *z)
{
	return z->cma_pages ? free_of_type(z, PA_MT_CMA) : 0;
}

bool zone_watermark_ok(const struct pa_zone *z, unsigned order, uint64_t mark, unsigned flags)
{
	int64_t free = (int64_t)zone_nr_free(z) - ((1ll << order) - 1);
	int64_t min = zone_flags_mark(mark, flags);
	if (!(flags & (ALLOC_MIN_RESERVE | ALLOC_NON_BLOCK | ALLOC_HIGHATOMIC)) &&
	    unlikely(z->nr_reserved_highatomic))
		/* The reserve: what it holds free (Linux 6.12), before all it reserved. */
		free -= linux_rule(z->pool, LR_HIGHATOMIC_FREE) ?
		                (int64_t)free_of_type(z, PA_MT_HIGHATOMIC) :
		                (int64_t)z->nr_reserved_highatomic;
	if (unlikely(z->cma_pages) && !(flags & ALLOC_CMA))
		free -= (int64_t)zone_free_cma(z); /* what this request may not borrow */
	if (free <= min)
		return false;
	if (order == 0)
		return true;
	return (zone_usable_orders(z, flags & ALLOC_HIGHATOMIC, flags & ALLOC_CMA) >> order) != 0;
}
