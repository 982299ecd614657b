/* SPDX-License-Identifier: MIT */
/* The derived configuration: page size, orders, zones, watermarks, CMA areas. */
#include "stats.h"

#include "../platform/platform.h"
#include "../linux.h"
#include "../pcp.h"
#include "../zone.h"

/* One "key: value" of the configuration; the same list gives text and JSON. */
struct info_field {
	const char *key;
	enum { IF_U64, IF_OPT, IF_STR } kind; /* IF_OPT: a number, or null when negative */
	int64_t num;
	const char *str;
};

static const char *backing_name(const struct pa_boot_config *c, char *buf, size_t len)
{
	static const char *const names[] = { "none", "anon", "file", "hugetlb" };
	if (c->backing == PA_BACKING_FILE) {
		pa_snprintf(buf, len, "file:%s", c->backing_path);
		return buf;
	}
	return c->backing < sizeof names / sizeof names[0] ? names[c->backing] : "?";
}

static unsigned info_fields(struct pa_pool *pool, struct info_field *f, char *bbuf, size_t blen)
{
	const struct pa_boot_config *c = &pool->cfg;
	unsigned n = 0;
#define U(k, v) f[n++] = (struct info_field){ .key = k, .kind = IF_U64, .num = (int64_t)(v) }
	U("page_size", 1ull << c->page_shift);
	U("page_shift", c->page_shift);
	U("max_order", c->max_order);
	f[n++] = (struct info_field){ .key = "huge_order", .kind = IF_OPT, .num = c->huge_order };
	U("pageblock_order", c->pageblock_order);
	U("pageblock_order_ceil", c->pageblock_order_ceil);
	U("pages_per_block", 1ull << c->pageblock_order);
	U("cma_alignment_bytes", (1ull << c->page_shift) << c->pageblock_order);
	U("metadata_bytes_per_frame", sizeof(struct pa_page));
	U("nr_cpus", c->nr_cpus);
	U("nr_nodes", pool->nr_nodes);
	U("section_bytes", (1ull << c->page_shift) << c->section_shift);
	U("total_pages", pool->nr_frames);
	U("mem_bytes", c->mem);
	f[n++] = (struct info_field){ .key = "zones",
		                      .kind = IF_STR,
		                      .str = c->zone_layout == PA_ZONES_FLAT ? "flat" : "x86_64" };
	U("zone_dma", c->zone_dma);
	f[n++] = (struct info_field){ .key = "backing",
		                      .kind = IF_STR,
		                      .str = backing_name(c, bbuf, blen) };
	U("min_free_kbytes", atomic_load(&pool->min_free_kbytes));
	U("watermark_scale_factor", atomic_load(&pool->watermark_scale_factor));
	U("watermark_boost_factor", atomic_load(&pool->watermark_boost_factor));
#undef U
	return n;
}

/* A zone's figures; watermarks change at run time, so they are read under the lock. */
struct info_zone {
	uint64_t spanned, present, managed, wmark[PA_NR_WMARK];
};

static void snap_info_zone(struct pa_zone *zone, struct info_zone *iz)
{
	pa_lock(&zone->lock, SITE_ADMIN); /* hotplug changes spans and sizes under it */
	iz->spanned = zone->end_pfn - zone->start_pfn;
	iz->present = zone->present_pages;
	iz->managed = zone->managed_pages;
	memcpy(iz->wmark, zone->wmark, sizeof iz->wmark);
	pa_unlock(&zone->lock);
}

static void info_json_zone(struct sbuf *sb, struct pa_zone *zone)
{
	struct info_zone iz;
	snap_info_zone(zone, &iz);
	stats_js_open(sb, NULL, '{');
	stats_js_str(sb, "name", zone_name(zone->type));
	stats_js_u64(sb, "start_pfn", zone->start_pfn);
	stats_js_u64(sb, "end_pfn", zone->end_pfn);
	stats_js_u64(sb, "spanned_pages", iz.spanned);
	stats_js_u64(sb, "present_pages", iz.present);
	stats_js_u64(sb, "managed_pages", iz.managed);
	stats_js_u64(sb, "watermark_min", iz.wmark[PA_WMARK_MIN]);
	stats_js_u64(sb, "watermark_low", iz.wmark[PA_WMARK_LOW]);
	stats_js_u64(sb, "watermark_high", iz.wmark[PA_WMARK_HIGH]);
	stats_js_close(sb, '}');
}

static void info_text_zone(struct sbuf *sb, struct pa_zone *zone)
{
	struct info_zone iz;
	snap_info_zone(zone, &iz);
	stats_printf(sb,
	             "%4u %-8s %12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %12" PRIu64
	             " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 "\n",
	             zone->node, zone_name(zone->type), (uint64_t)zone->start_pfn,
	             (uint64_t)zone->end_pfn, iz.spanned, iz.present, iz.managed,
	             iz.wmark[PA_WMARK_MIN], iz.wmark[PA_WMARK_LOW], iz.wmark[PA_WMARK_HIGH]);
}

/*
 * The CMA areas (cma=SIZE[@START]), in boot order. JSON: "cma", a list of
 * {name, start_pfn, nr_pages, requested_bytes, reserved_bytes,
 * allocated_pages}; text: a table after the zones, when there are areas.
 */
static void info_json_cma(struct pa_pool *pool, struct sbuf *sb)
{
	stats_js_open(sb, "cma", '[');
	for (unsigned i = 0; i < pa_cma_count(pool); i++) {
		struct pa_cma_info a;
		if (pa_cma_get(pool, i, &a))
			continue;
		stats_js_open(sb, NULL, '{');
		stats_js_str(sb, "name", a.name);
		stats_js_u64(sb, "start_pfn", a.start_pfn);
		stats_js_u64(sb, "nr_pages", a.nr_pages);
		stats_js_u64(sb, "requested_bytes", a.requested_bytes);
		stats_js_u64(sb, "reserved_bytes", a.reserved_bytes);
		stats_js_u64(sb, "allocated_pages", a.allocated_pages);
		stats_js_close(sb, '}');
	}
	stats_js_close(sb, ']');
}

static void info_text_cma(struct pa_pool *pool, struct sbuf *sb)
{
	if (!pa_cma_count(pool))
		return;
	stats_printf(sb, "\n%-6s %12s %12s %16s %16s %12s\n", "cma", "start_pfn", "nr_pages",
	             "requested_bytes", "reserved_bytes", "allocated");
	for (unsigned i = 0; i < pa_cma_count(pool); i++) {
		struct pa_cma_info a;
		if (pa_cma_get(pool, i, &a))
			continue;
		stats_printf(sb,
		             "%-6s %12" PRIu64 " %12" PRIu64 " %16" PRIu64 " %16" PRIu64
		             " %12" PRIu64 "\n",
		             a.name, (uint64_t)a.start_pfn, a.nr_pages, a.requested_bytes,
		             a.reserved_bytes, a.allocated_pages);
	}
}

static void info_json_nodes(struct pa_pool *pool, struct sbuf *sb)
{
	stats_js_open(sb, "nodes", '[');
	for (unsigned nid = 0; nid < pool->nr_nodes; nid++) {
		const struct pa_node *node = &pool->nodes[nid];
		stats_js_open(sb, NULL, '{');
		stats_js_u64(sb, "id", node->id);
		stats_js_u64(sb, "start_pfn", node->start_pfn);
		stats_js_u64(sb, "end_pfn", node->end_pfn);
		stats_js_open(sb, "zones", '[');
		for (unsigned t = 0; t < PA_ZONE_COUNT; t++)
			if (stats_node_zone(pool, nid,
			                    t)) /* with memory, as buddyinfo lists them */
				info_json_zone(sb, node->zones[t]);
		stats_js_close(sb, ']');
		stats_js_close(sb, '}');
	}
	stats_js_close(sb, ']');
	info_json_cma(pool, sb);
}

static void info_text_nodes(struct pa_pool *pool, struct sbuf *sb)
{
	for (unsigned nid = 0; nid < pool->nr_nodes; nid++) {
		const struct pa_node *node = &pool->nodes[nid];
		stats_printf(sb, "node %u: pfn %" PRIu64 "-%" PRIu64 "\n", node->id,
		             (uint64_t)node->start_pfn, (uint64_t)node->end_pfn);
	}
	stats_printf(sb, "\n%4s %-8s %12s %12s %12s %12s %12s %10s %10s %10s\n", "node", "zone",
	             "start_pfn", "end_pfn", "spanned", "present", "managed", "min", "low", "high");
	for (unsigned nid = 0; nid < pool->nr_nodes; nid++)
		for (unsigned t = 0; t < PA_ZONE_COUNT; t++)
			if (stats_node_zone(pool, nid, t))
				info_text_zone(sb, pool->nodes[nid].zones[t]);
	info_text_cma(pool, sb);
}

static void info_field_out(struct sbuf *sb, const struct info_field *f)
{
	if (sb->json) {
		if (f->kind == IF_STR)
			stats_js_str(sb, f->key, f->str);
		else if (f->kind == IF_OPT && f->num < 0)
			stats_js_null(sb, f->key);
		else
			stats_js_i64(sb, f->key, f->num);
		return;
	}
	int pad = 26 - (int)pa_strlen(f->key);
	stats_printf(sb, "%s:%*s ", f->key, pad > 0 ? pad : 0, "");
	if (f->kind == IF_STR)
		stats_printf(sb, "%s\n", f->str);
	else if (f->kind == IF_OPT && f->num < 0)
		stats_puts(sb, "none\n");
	else
		stats_printf(sb, "%" PRId64 "\n", f->num);
}

/*
 * The Linux version whose rules apply (linux=), and every rule change of
 * the table with its version and whether it is in force. JSON: "linux",
 * "pcp_rules", "linux_defrag_mode" and "linux_rules", a list of {name,
 * version, in_force}.
 */
static void info_linux(struct pa_pool *pool, struct sbuf *sb)
{
	char v[16], rv[16];
	const char *pcp = pcp_rules_name(atomic_load(&pool->pcp_rules));
	linux_version_name(pool->cfg.linux_version, v, sizeof v);
	if (sb->json) {
		stats_js_str(sb, "linux", v);
		stats_js_str(sb, "pcp_rules", pcp);
		stats_js_u64(sb, "linux_defrag_mode", pool->cfg.linux_defrag_mode);
		stats_js_open(sb, "linux_rules", '[');
		for (unsigned r = 0; r < LR_NR; r++) {
			stats_js_open(sb, NULL, '{');
			stats_js_str(sb, "name", linux_rule_name(r));
			stats_js_str(sb, "version",
			             linux_version_name(linux_rule_version(r), rv, sizeof rv));
			stats_js_u64(sb, "in_force", linux_rule(pool, (enum linux_rule)r));
			stats_js_close(sb, '}');
		}
		stats_js_close(sb, ']');
		return;
	}
	stats_printf(sb, "%-26s %s\n%-26s %s\n%-26s %u\n", "linux:", v, "pcp_rules:", pcp,
	             "linux_defrag_mode:", pool->cfg.linux_defrag_mode);
	stats_printf(sb, "\n%-28s %-7s %-5s %s\n", "linux rule", "since", "on", "what");
	for (unsigned r = 0; r < LR_NR; r++)
		stats_printf(sb, "%-28s %-7s %-5s %s\n", linux_rule_name(r),
		             linux_version_name(linux_rule_version(r), rv, sizeof rv),
		             linux_rule(pool, (enum linux_rule)r) ? "yes" : "no",
		             linux_rule_what(r));
	stats_puts(sb, "\n");
}

int stats_info(struct pa_pool *pool, struct sbuf *sb)
{
	struct info_field f[32];
	char bbuf[300];
	unsigned n = info_fields(pool, f, bbuf, sizeof bbuf);
	if (sb->json)
		stats_js_open(sb, NULL, '{');
	for (unsigned i = 0; i < n; i++)
		info_field_out(sb, &f[i]);
	info_linux(pool, sb);
	if (sb->json) {
		info_json_nodes(pool, sb);
		stats_js_close(sb, '}');
	} else {
		info_text_nodes(pool, sb);
	}
	return 0;
}
