/* SPDX-License-Identifier: MIT */
/*
 * /proc/pagetypeinfo: free blocks per order and migratetype, and pageblocks
 * per type, by node.
 */
#include "stats.h"

#include "../platform/platform.h"
#include "../memmap.h"
#include "../pageblock.h"
#include "../zone.h"

/* /proc stops counting a free list at this many blocks and prints ">100000". */
#define PAGETYPE_COUNT_CAP 100000
/* Pageblocks looked at per hold of the zone lock, so allocations are not held up. */
#define PAGEBLOCK_BATCH    4096

struct pt_zone {
	struct pa_zone *zone;
	uint64_t *nr_free_mt;         /* [order * PA_MT_COUNT + mt] */
	uint64_t blocks[PA_MT_COUNT]; /* pageblocks by type; the isolate bit counts as Isolate */
};

/* Count the zone's pageblocks by type, as pagetypeinfo_showblockcount_print(). */
static void count_blocks(struct pa_zone *zone, uint64_t *blocks)
{
	struct pa_pool *pool = zone->pool;
	unsigned pbo = pool->cfg.pageblock_order;
	uint64_t first = zone->start_pfn >> pbo, end = ((zone->end_pfn - 1) >> pbo) + 1;
	for (uint64_t pb = first; pb < end;) {
		uint64_t stop = end - pb > PAGEBLOCK_BATCH ? pb + PAGEBLOCK_BATCH : end;
		pa_lock(&zone->lock, SITE_ADMIN);
		for (; pb < stop; pb++) {
			/* Offline memory is not counted: Linux's walk takes online pages only. */
			if (pool->pb_zone[pb] != zone->index ||
			    !memmap_section_present(pool, pb << pbo) ||
			    __atomic_load_n(
			            &pool->block_offline[(pb << pbo) >> pool->cfg.block_shift],
			            __ATOMIC_RELAXED))
				continue;
			/*
			 * Isolated blocks count as Isolate whatever their base type
			 * (pageblock_mt(): the isolate bit first), as Linux 6.17
			 * prints them; a CMA block counts as CMA by its base type.
			 */
			unsigned mt = pageblock_mt(pool, pb << pbo);
			if (mt < PA_MT_COUNT)
				blocks[mt]++;
		}
		pa_unlock(&zone->lock);
	}
}

int pa_zone_pagetypes(struct pa_pool *pool, unsigned index, uint64_t *nr_free, unsigned orders,
                      uint64_t pageblocks[PA_MT_COUNT])
{
	if (!pool)
		return -EINVAL;
	if (index >= pool->nr_zones)
		return -ENOENT;
	struct pa_zone *zone = &pool->zones[index];
	if (nr_free) {
		memset(nr_free, 0, (size_t)orders * PA_MT_COUNT * sizeof *nr_free);
		pa_lock(&zone->lock, SITE_ADMIN);
		unsigned held = stats_nr_orders(pool);
		for (unsigned o = 0; o < orders && o < held; o++)
			for (unsigned mt = 0; mt < PA_MT_COUNT; mt++)
				nr_free[o * PA_MT_COUNT + mt] = zone_free_count(zone, o, mt);
		pa_unlock(&zone->lock);
	}
	if (pageblocks) {
		memset(pageblocks, 0, PA_MT_COUNT * sizeof *pageblocks);
		count_blocks(zone, pageblocks);
	}
	return 0;
}

static void snap_pagetypes(struct pa_zone *zone, struct pt_zone *pz)
{
	pz->zone = zone;
	pa_zone_pagetypes(zone->pool, zone->index, pz->nr_free_mt, stats_nr_orders(zone->pool),
	                  pz->blocks);
}

static void pt_text_free(struct sbuf *sb, unsigned nid, const struct pt_zone *pz, unsigned nz,
                         unsigned orders)
{
	stats_printf(sb, "%-43s ", "Free pages count per migrate type at order");
	for (unsigned o = 0; o < orders; o++)
		stats_printf(sb, "%6u ", o);
	stats_puts(sb, "\n");
	for (unsigned i = 0; i < nz; i++) {
		for (unsigned mt = 0; mt < PA_MT_COUNT; mt++) {
			stats_printf(sb, "Node %4u, zone %8s, type %12s ", nid,
			             zone_name(pz[i].zone->type), pa_migratetype_names[mt]);
			for (unsigned o = 0; o < orders; o++) {
				uint64_t n = pz[i].nr_free_mt[o * PA_MT_COUNT + mt];
				bool over = n >= PAGETYPE_COUNT_CAP;
				stats_printf(sb, "%s%6" PRIu64 " ", over ? ">" : "",
				             over ? (uint64_t)PAGETYPE_COUNT_CAP : n);
			}
			stats_puts(sb, "\n");
		}
	}
}

static void pt_text_blocks(struct sbuf *sb, unsigned nid, const struct pt_zone *pz, unsigned nz)
{
	stats_printf(sb, "\n%-23s", "Number of blocks type ");
	for (unsigned mt = 0; mt < PA_MT_COUNT; mt++)
		stats_printf(sb, "%12s ", pa_migratetype_names[mt]);
	stats_puts(sb, "\n");
	for (unsigned i = 0; i < nz; i++) {
		stats_printf(sb, "Node %u, zone %8s ", nid, zone_name(pz[i].zone->type));
		for (unsigned mt = 0; mt < PA_MT_COUNT; mt++)
			stats_printf(sb, "%12" PRIu64 " ", pz[i].blocks[mt]);
		stats_puts(sb, "\n");
	}
}

/* JSON gives the exact counts: the /proc cap exists only to bound a list walk. */
static void pt_json_zone(struct sbuf *sb, const struct pt_zone *pz, unsigned orders)
{
	stats_js_open(sb, NULL, '{');
	stats_js_str(sb, "zone", zone_name(pz->zone->type));
	stats_js_open(sb, "free", '{');
	for (unsigned mt = 0; mt < PA_MT_COUNT; mt++) {
		stats_js_open(sb, pa_migratetype_names[mt], '[');
		for (unsigned o = 0; o < orders; o++)
			stats_js_u64(sb, NULL, pz->nr_free_mt[o * PA_MT_COUNT + mt]);
		stats_js_close(sb, ']');
	}
	stats_js_close(sb, '}');
	stats_js_open(sb, "blocks", '{');
	for (unsigned mt = 0; mt < PA_MT_COUNT; mt++)
		stats_js_u64(sb, pa_migratetype_names[mt], pz->blocks[mt]);
	stats_js_close(sb, '}');
	stats_js_close(sb, '}');
}

static void pt_node(struct pa_pool *pool, struct sbuf *sb, unsigned nid, struct pt_zone *pz)
{
	unsigned orders = stats_nr_orders(pool), nz = 0;
	for (unsigned t = 0; t < PA_ZONE_COUNT; t++) {
		struct pa_zone *zone = stats_node_zone(pool, nid, t);
		if (zone)
			snap_pagetypes(zone, &pz[nz++]);
	}
	if (sb->json) {
		stats_js_open(sb, NULL, '{');
		stats_js_u64(sb, "node", nid);
		stats_js_open(sb, "zones", '[');
		for (unsigned i = 0; i < nz; i++)
			pt_json_zone(sb, &pz[i], orders);
		stats_js_close(sb, ']');
		stats_js_close(sb, '}');
		return;
	}
	stats_printf(sb, "Page block order: %u\n", pool->cfg.pageblock_order);
	stats_printf(sb, "Pages per block:  %" PRIu64 "\n",
	             (uint64_t)1 << pool->cfg.pageblock_order);
	stats_puts(sb, "\n");
	pt_text_free(sb, nid, pz, nz, orders);
	pt_text_blocks(sb, nid, pz, nz);
}

int stats_pagetypeinfo(struct pa_pool *pool, struct sbuf *sb)
{
	size_t per_zone = (size_t)(pool->max_order_boot + 1) * PA_MT_COUNT; /* max_order may rise */
	uint64_t *counts = pa_calloc(&pool->plat, per_zone * PA_ZONE_COUNT, sizeof *counts);
	if (!counts)
		return -ENOMEM;
	struct pt_zone pz[PA_ZONE_COUNT];
	for (unsigned t = 0; t < PA_ZONE_COUNT; t++)
		pz[t].nr_free_mt = counts + t * per_zone;
	if (sb->json) {
		stats_js_open(sb, NULL, '{');
		stats_js_u64(sb, "pageblock_order", pool->cfg.pageblock_order);
		stats_js_u64(sb, "pages_per_block", 1ull << pool->cfg.pageblock_order);
		stats_js_open(sb, "migratetypes", '[');
		for (unsigned mt = 0; mt < PA_MT_COUNT; mt++)
			stats_js_str(sb, NULL, pa_migratetype_names[mt]);
		stats_js_close(sb, ']');
		stats_js_open(sb, "nodes", '[');
	}
	for (unsigned nid = 0; nid < pool->nr_nodes; nid++)
		if (stats_node_has_memory(pool, nid)) /* as /proc skips memoryless nodes */
			pt_node(pool, sb, nid, pz);
	if (sb->json) {
		stats_js_close(sb, ']');
		stats_js_close(sb, '}');
	}
	pa_free(&pool->plat, counts);
	return 0;
}
