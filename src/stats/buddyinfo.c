/* SPDX-License-Identifier: MIT */
/*
 * /proc/buddyinfo, and the writer of every report with a row per zone and a
 * cell per order (buddyinfo here, unusable and extfrag index in
 * extfrag.c): a report of that shape is a struct order_report, data
 * that says how a cell is computed and printed.
 */
#include "stats.h"

#include "../platform/platform.h"
#include "../zone.h"

/* Copy the free block counts per order of a zone, under its lock. */
static void snap_nr_free(struct pa_zone *zone, uint64_t *out)
{
	pa_lock(&zone->lock, SITE_ADMIN);
	for (unsigned o = 0; o < stats_nr_orders(zone->pool); o++)
		out[o] = zone_free_blocks(zone, o);
	pa_unlock(&zone->lock);
}

static int64_t cell_nr_free(const uint64_t *nr_free, unsigned orders, unsigned order)
{
	(void)orders;
	return (int64_t)nr_free[order];
}

static void text_count(struct sbuf *sb, int64_t v)
{
	stats_printf(sb, "%6" PRIu64 " ", (uint64_t)v);
}

static const struct order_report buddyinfo_report = { "free", cell_nr_free, text_count, false };

static void order_row(struct sbuf *sb, const struct order_report *r, const struct pa_zone *zone,
                      const uint64_t *nr_free)
{
	unsigned orders = stats_nr_orders(zone->pool);
	const char *name = zone_name(zone->type);
	if (sb->json) {
		stats_js_open(sb, NULL, '{');
		stats_js_u64(sb, "node", zone->node);
		stats_js_str(sb, "zone", name);
		stats_js_open(sb, r->json_key, '[');
	} else {
		stats_printf(sb, "Node %u, zone %8s ", zone->node, name);
	}
	for (unsigned o = 0; o < orders; o++) {
		int64_t v = r->cell(nr_free, orders, o);
		if (!sb->json)
			r->text(sb, v);
		else if (r->milli)
			stats_js_milli(sb, NULL, v);
		else
			stats_js_i64(sb, NULL, v);
	}
	if (sb->json) {
		stats_js_close(sb, ']');
		stats_js_close(sb, '}');
	} else {
		stats_puts(sb, "\n");
	}
}

int stats_order_report(struct pa_pool *pool, struct sbuf *sb, const struct order_report *r)
{
	uint64_t *nr_free = pa_calloc(&pool->plat, pool->max_order_boot + 1,
	                              sizeof *nr_free); /* max_order may rise meanwhile */
	if (!nr_free)
		return -ENOMEM;
	if (sb->json) {
		stats_js_open(sb, NULL, '{');
		stats_js_open(sb, "zones", '[');
	}
	for (unsigned nid = 0; nid < pool->nr_nodes; nid++) {
		for (unsigned t = 0; t < PA_ZONE_COUNT; t++) {
			struct pa_zone *zone = stats_node_zone(pool, nid, t);
			if (!zone)
				continue;
			snap_nr_free(zone, nr_free);
			order_row(sb, r, zone, nr_free);
		}
	}
	if (sb->json) {
		stats_js_close(sb, ']');
		stats_js_close(sb, '}');
	}
	pa_free(&pool->plat, nr_free);
	return 0;
}

int stats_buddyinfo(struct pa_pool *pool, struct sbuf *sb)
{
	return stats_order_report(pool, sb, &buddyinfo_report);
}
