/* SPDX-License-Identifier: MIT */
/* /proc/zoneinfo. */
#include "stats.h"

#include "../platform/platform.h"
#include "../pcp.h"
#include "../zone.h"

#include <stddef.h>

/*
 * Linux 6.1's /proc/zoneinfo: for every zone type of the layout on every
 * node, the lines 6.1 prints that mean something here, in 6.1's order and
 * spacing, then ours. An unpopulated zone stops after "protection:", as in
 * Linux. The node's first populated zone carries the per-node stats.
 *
 *   Node 0, zone    DMA32
 *     per-node stats                       (first populated zone of the node)
 *         nr_isolated_anon 0               (frames compaction holds isolated)
 *     pages free     250873
 *           boost    0                     (the watermark boost; min, low, high include it)
 *           min      ...                   (low, high, spanned, present, managed)
 *           cma      0                     (frames in CMA pageblocks)
 *           protection: (0, 0, 0)          (lowmem reserve by zone type)
 *         nr_free_pages 250873
 *         nr_free_cma  0
 *         pgalloc      ...                 (ours: every zone counter)
 *     pagesets
 *       cpu: 0
 *                 count: 9
 *                 high:  5253
 *                 batch: 63
 *     vm stats threshold: 24               (Linux's for the zone size and CPUs)
 *                 high_min: 1286           (ours, as Linux 6.7)
 *                 high_max: 8192
 *                 order_%u:  unmovable %lu movable %lu reclaimable %lu
 *     node_unreclaimable:  0               (no reclaim here: always 0)
 *     start_pfn:           0
 *
 * An "order_N:" line is printed for each order of which the CPU holds at
 * least one block, and gives blocks (not frames) per PCP migratetype; it
 * parses as /order_(\d+):\s+unmovable (\d+) movable (\d+) reclaimable (\d+)/.
 * JSON names each row by its key in the tables below: {"zones":[{"node",
 * "zone","populated","per_node_stats":{...},"free","boost",...,"protection":
 * [...],"stats":{...},"pagesets":[{"cpu","count","high","batch",
 * "vm_stats_threshold","high_min","high_max","orders":[{"order","unmovable",
 * "movable","reclaimable"}]}],"node_unreclaimable","start_pfn"}]}.
 */

static const char *const pcp_type_names[PA_NR_PCP_TYPES] = { "unmovable", "movable",
	                                                     "reclaimable" };

/* A zone's figures, read under its lock (counters under every list lock too). */
struct zi_zone {
	uint64_t free, boost, min, low, high, spanned, present, managed, cma;
	uint64_t protection[PA_ZONE_COUNT];
	uint64_t free_cma, numa_hit, numa_miss, numa_foreign, threshold, node_unreclaimable,
	        start_pfn;
	uint64_t stat[PA_NR_ZONE_STATS];
};

/* One row: its JSON key, its text before the value, and the field it shows. */
struct zi_row {
	const char *key;
	const char *text;
	size_t off;
};
#define ZI_ROW(key, text, field)                                                                   \
	{                                                                                          \
		key, text, offsetof(struct zi_zone, field)                                         \
	}

/* "pages free" to "cma", then "protection:"; all an unpopulated zone shows. */
static const struct zi_row zi_head_rows[] = {
	ZI_ROW("free", "  pages free     ", free),
	ZI_ROW("boost", "        boost    ", boost),
	ZI_ROW("min", "        min      ", min),
	ZI_ROW("low", "        low      ", low),
	ZI_ROW("high", "        high     ", high),
	ZI_ROW("spanned", "        spanned  ", spanned),
	ZI_ROW("present", "        present  ", present),
	ZI_ROW("managed", "        managed  ", managed),
	ZI_ROW("cma", "        cma      ", cma),
};

/* 6.1's zone items that mean something here, each "      %-12s %lu"; then every zone counter. */
static const struct zi_row zi_stat_rows[] = {
	ZI_ROW("nr_free_pages", NULL, free),
	ZI_ROW("nr_free_cma", NULL, free_cma),
	ZI_ROW("numa_hit", NULL, numa_hit),
	ZI_ROW("numa_miss", NULL, numa_miss),
	ZI_ROW("numa_foreign", NULL, numa_foreign),
	ZI_ROW("numa_local", NULL, numa_hit),  /* the preferred node is the CPU's own */
	ZI_ROW("numa_other", NULL, numa_miss), /* likewise */
};

static const struct zi_row zi_tail_rows[] = {
	ZI_ROW("node_unreclaimable", "  node_unreclaimable:  ", node_unreclaimable),
	ZI_ROW("start_pfn", "  start_pfn:           ", start_pfn),
};

/* A CPU's pageset: 6.1's rows, the threshold line, then ours. */
struct zi_pcp_row {
	const char *key;
	const char *text;
	size_t off; /* in struct pa_pcp_info */
};
#define ZI_PCP(key, text, field)                                                                   \
	{                                                                                          \
		key, text, offsetof(struct pa_pcp_info, field)                                     \
	}
static const struct zi_pcp_row zi_pcp_rows[] = {
	ZI_PCP("count", "              count: ", count),
	ZI_PCP("high", "              high:  ", high),
	ZI_PCP("batch", "              batch: ", batch),
};
static const struct zi_pcp_row zi_pcp_ours[] = {
	ZI_PCP("high_min", "              high_min: ", high_min),
	ZI_PCP("high_max", "              high_max: ", high_max),
};

static uint64_t zi_field(const void *base, size_t off)
{
	uint64_t v;
	memcpy(&v, (const char *)base + off, sizeof v);
	return v;
}

static unsigned fls64(uint64_t x)
{
	return x ? 64u - (unsigned)__builtin_clzll(x) : 0;
}

/* Linux's calculate_normal_threshold(): how far a CPU's counters may drift before folding. */
static uint64_t zi_threshold(const struct pa_pool *pool, uint64_t managed)
{
	uint64_t mem = managed >> (27 - pool->cfg.page_shift);
	uint64_t t = 2ull * fls64(pool->cfg.nr_cpus) * (1 + fls64(mem));
	return t < 125 ? t : 125;
}

/* The zone's figures; zone may be NULL (a type the node lacks): all zero. */
static void snap_zoneinfo(struct pa_pool *pool, struct pa_zone *zone, struct zi_zone *zi)
{
	memset(zi, 0, sizeof *zi);
	if (!zone)
		return;
	zone_fold_stats(zone, zi->stat, NULL);
	pa_lock(&zone->lock, SITE_ADMIN); /* hotplug changes spans and sizes under it */
	zi->spanned = zone->end_pfn - zone->start_pfn;
	zi->start_pfn = zone->start_pfn;
	zi->free = zone_nr_free(zone);
	zi->min = zone->wmark[PA_WMARK_MIN];
	zi->low = zone->wmark[PA_WMARK_LOW];
	zi->high = zone->wmark[PA_WMARK_HIGH];
	zi->boost = zone->watermark_boost;
	zi->present = zone->present_pages;
	zi->managed = zone->managed_pages;
	zi->cma = zone->cma_pages;
	zi->free_cma = zone_free_cma(zone);
	memcpy(zi->protection, zone->lowmem_reserve, sizeof zi->protection);
	pa_unlock(&zone->lock);
	zi->threshold = zi_threshold(pool, zi->managed);
	zi->numa_miss = zi->stat[PA_ZS_NUMA_MISS];
	zi->numa_hit = zi->stat[PA_ZS_ALLOC_SUCCESS] - zi->numa_miss;
	zi->numa_foreign = atomic_load_explicit(&zone->numa_foreign, memory_order_relaxed);
}

unsigned pa_zone_count(const struct pa_pool *pool)
{
	return pool ? pool->nr_zones : 0;
}

int pa_zone_info(struct pa_pool *pool, unsigned index, struct pa_zone_info *out)
{
	if (!pool || !out)
		return -EINVAL;
	if (index >= pool->nr_zones)
		return -ENOENT;
	struct pa_zone *zone = &pool->zones[index];
	struct zi_zone zi;
	snap_zoneinfo(pool, zone, &zi);
	*out = (struct pa_zone_info){ .node = zone->node,
		                      .type = zone->type,
		                      .start_pfn = zi.start_pfn,
		                      .end_pfn = zi.start_pfn + zi.spanned,
		                      .present = zi.present,
		                      .managed = zi.managed,
		                      .free = zi.free,
		                      .watermark_min = zi.min,
		                      .watermark_low = zi.low,
		                      .watermark_high = zi.high,
		                      .watermark_boost = zi.boost,
		                      .cma = zi.cma,
		                      .free_cma = zi.free_cma };
	for (unsigned cpu = 0; cpu < pool->cfg.nr_cpus; cpu++) {
		struct pa_pcp_info info;
		if (pa_pcp_info(pool, zone->node, zone->type, cpu, &info, NULL) == 0)
			out->pcp += info.count;
	}
	stats_zone_lock_totals(zone, &out->lock_contended, &out->lock_wait_ns);
	return 0;
}

static void zi_value(struct sbuf *sb, const char *key, const char *text, uint64_t v)
{
	if (sb->json)
		stats_js_u64(sb, key, v);
	else if (text)
		stats_printf(sb, "%s%" PRIu64 "\n", text, v);
	else
		stats_printf(sb, "      %-12s %" PRIu64 "\n", key, v);
}

static void zi_per_node(struct pa_pool *pool, struct sbuf *sb, unsigned nid)
{
	if (sb->json)
		stats_js_open(sb, "per_node_stats", '{');
	else
		stats_puts(sb, "  per-node stats\n");
	zi_value(sb, "nr_isolated_anon", NULL, stats_node_isolated(pool, nid));
	if (sb->json)
		stats_js_close(sb, '}');
}

/* "pages free" through "protection:": the lines every zone prints. */
static void zi_head(struct sbuf *sb, const struct zi_zone *zi, const bool *types)
{
	for (size_t i = 0; i < sizeof zi_head_rows / sizeof zi_head_rows[0]; i++)
		zi_value(sb, zi_head_rows[i].key, zi_head_rows[i].text,
		         zi_field(zi, zi_head_rows[i].off));
	if (sb->json)
		stats_js_open(sb, "protection", '[');
	else
		stats_puts(sb, "        protection: (");
	for (unsigned t = 0, first = 1; t < PA_ZONE_COUNT; t++) {
		if (!types[t])
			continue;
		if (sb->json)
			stats_js_u64(sb, NULL, zi->protection[t]);
		else
			stats_printf(sb, "%s%" PRIu64, first ? "" : ", ", zi->protection[t]);
		first = 0;
	}
	if (sb->json)
		stats_js_close(sb, ']');
	else
		stats_puts(sb, ")\n");
}

static void zi_stats(struct sbuf *sb, const struct zi_zone *zi)
{
	if (sb->json)
		stats_js_open(sb, "stats", '{');
	for (size_t i = 0; i < sizeof zi_stat_rows / sizeof zi_stat_rows[0]; i++)
		zi_value(sb, zi_stat_rows[i].key, NULL, zi_field(zi, zi_stat_rows[i].off));
	for (unsigned k = 0; k < PA_NR_ZONE_STATS; k++)
		if (k != PA_ZS_NUMA_MISS) /* a row above */
			zi_value(sb, pa_zone_stat_names[k], NULL, zi->stat[k]);
	if (sb->json)
		stats_js_close(sb, '}');
}

/* The blocks held of one order, by PCP type; false when there are none. */
static bool zi_order_held(const uint64_t *blocks, unsigned order)
{
	const uint64_t *b = blocks + order * PA_NR_PCP_TYPES;
	return b[0] | b[1] | b[2];
}

static void zi_orders(struct sbuf *sb, const uint64_t *blocks, unsigned orders)
{
	if (sb->json)
		stats_js_open(sb, "orders", '[');
	for (unsigned o = 0; o < orders; o++) {
		if (!zi_order_held(blocks, o))
			continue;
		const uint64_t *b = blocks + o * PA_NR_PCP_TYPES;
		if (!sb->json) {
			char key[24];
			pa_snprintf(key, sizeof key, "order_%u:", o);
			stats_printf(sb,
			             "              %-9s unmovable %" PRIu64 " movable %" PRIu64
			             " reclaimable %" PRIu64 "\n",
			             key, b[0], b[1], b[2]);
			continue;
		}
		stats_js_open(sb, NULL, '{');
		stats_js_u64(sb, "order", o);
		for (unsigned t = 0; t < PA_NR_PCP_TYPES; t++)
			stats_js_u64(sb, pcp_type_names[t], b[t]);
		stats_js_close(sb, '}');
	}
	if (sb->json)
		stats_js_close(sb, ']');
}

static void zi_pageset(struct sbuf *sb, unsigned cpu, const struct pa_pcp_info *info,
                       const struct zi_zone *zi, const uint64_t *blocks, unsigned orders)
{
	if (sb->json) {
		stats_js_open(sb, NULL, '{');
		stats_js_u64(sb, "cpu", cpu);
	} else {
		stats_printf(sb, "    cpu: %u\n", cpu);
	}
	for (size_t i = 0; i < sizeof zi_pcp_rows / sizeof zi_pcp_rows[0]; i++)
		zi_value(sb, zi_pcp_rows[i].key, zi_pcp_rows[i].text,
		         zi_field(info, zi_pcp_rows[i].off));
	zi_value(sb, "vm_stats_threshold", "  vm stats threshold: ", zi->threshold);
	for (size_t i = 0; i < sizeof zi_pcp_ours / sizeof zi_pcp_ours[0]; i++)
		zi_value(sb, zi_pcp_ours[i].key, zi_pcp_ours[i].text,
		         zi_field(info, zi_pcp_ours[i].off));
	zi_orders(sb, blocks, orders);
	if (sb->json)
		stats_js_close(sb, '}');
}

static void zi_pagesets(struct pa_pool *pool, struct sbuf *sb, struct pa_zone *zone,
                        const struct zi_zone *zi, uint64_t *blocks)
{
	if (sb->json)
		stats_js_open(sb, "pagesets", '[');
	else
		stats_puts(sb, "  pagesets\n");
	for (unsigned cpu = 0; cpu < pool->cfg.nr_cpus; cpu++) {
		struct pa_pcp_info info;
		if (pa_pcp_info(pool, zone->node, zone->type, cpu, &info, blocks) == 0)
			zi_pageset(sb, cpu, &info, zi, blocks, stats_nr_orders(pool));
	}
	if (sb->json)
		stats_js_close(sb, ']');
}

/* One zone type of one node; per_node: print the node's stats first. */
static void zi_zone(struct pa_pool *pool, struct sbuf *sb, unsigned nid, unsigned t, bool per_node,
                    uint64_t *blocks, const bool *types)
{
	struct pa_zone *zone = pool->nodes[nid].zones[t];
	struct zi_zone zi;
	snap_zoneinfo(pool, zone, &zi);
	bool populated = zi.present > 0;
	if (sb->json) {
		stats_js_open(sb, NULL, '{');
		stats_js_u64(sb, "node", nid);
		stats_js_str(sb, "zone", zone_name(t));
		stats_js_name(sb, "populated");
		stats_puts(sb, populated ? "true" : "false");
	} else {
		stats_printf(sb, "Node %u, zone %8s\n", nid, zone_name(t));
	}
	if (per_node)
		zi_per_node(pool, sb, nid);
	zi_head(sb, &zi, types);
	if (populated) {
		zi_stats(sb, &zi);
		zi_pagesets(pool, sb, zone, &zi, blocks);
		for (size_t i = 0; i < sizeof zi_tail_rows / sizeof zi_tail_rows[0]; i++)
			zi_value(sb, zi_tail_rows[i].key, zi_tail_rows[i].text,
			         zi_field(&zi, zi_tail_rows[i].off));
	}
	if (sb->json)
		stats_js_close(sb, '}');
}

int stats_zoneinfo(struct pa_pool *pool, struct sbuf *sb)
{
	uint64_t *blocks = pa_calloc(&pool->plat, (size_t)stats_nr_orders(pool) * PA_NR_PCP_TYPES,
	                             sizeof *blocks);
	if (!blocks)
		return -ENOMEM;
	bool types[PA_ZONE_COUNT];
	for (unsigned t = 0; t < PA_ZONE_COUNT; t++)
		types[t] = zone_type_in_layout(pool, t);
	if (sb->json) {
		stats_js_open(sb, NULL, '{');
		stats_js_open(sb, "zones", '[');
	}
	for (unsigned nid = 0; nid < pool->nr_nodes; nid++) {
		bool first = true;
		for (unsigned t = 0; t < PA_ZONE_COUNT; t++) {
			if (!types[t])
				continue;
			bool populated = stats_node_zone(pool, nid, t) != NULL;
			zi_zone(pool, sb, nid, t, populated && first, blocks, types);
			first = first && !populated;
		}
	}
	if (sb->json) {
		stats_js_close(sb, ']');
		stats_js_close(sb, '}');
	}
	pa_free(&pool->plat, blocks);
	return 0;
}
