/* SPDX-License-Identifier: MIT */
/*
 * Statistics: the counter names, and every report of the pool in the exact
 * /proc text and as JSON: /proc/buddyinfo, /proc/pagetypeinfo, /proc/vmstat,
 * /proc/zoneinfo, debugfs extfrag/{unusable,extfrag}_index, the derived
 * configuration, and the lock contention table of `perf lock contention`.
 *
 * How a report is made: the figures of each zone are copied under its lock
 * (a snapshot), then formatted with no lock held, through one bounded string
 * builder that keeps counting past the end of the buffer, so that
 * pa_report() answers like snprintf. Text and JSON come from the same
 * snapshot, and where the layouts agree (a row per zone, a cell per order;
 * a list of name/value pairs) from the same writer.
 */
#include "internal.h"

#include <ctype.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Used by ctl.c too; belongs in internal.h (see the note there). */

const char *const pa_zone_stat_names[PA_NR_ZONE_STATS] = {
#define X(id, name) [PA_ZS_##id] = name,
	PA_ZONE_STATS(X)
#undef X
};

const char *const pa_pool_stat_names[PA_NR_POOL_STATS] = {
#define X(id, name) [PA_PS_##id] = name,
	PA_POOL_STATS(X)
#undef X
};

/* ---------------------------------------------------------------------- */
/* The string builder, and the JSON writer on top of it                    */
/* ---------------------------------------------------------------------- */

struct sbuf {
	char *buf;
	size_t len; /* capacity of buf */
	size_t pos; /* bytes the report needs so far; may run past len */
	bool json;  /* the report is JSON */
	bool comma; /* JSON: the next value at this level needs a comma first */
};

__attribute__((format(printf, 2, 3))) static void sb_printf(struct sbuf *sb, const char *fmt, ...)
{
	char *dst = NULL;
	size_t room = 0;
	if (sb->pos < sb->len) {
		dst = sb->buf + sb->pos;
		room = sb->len - sb->pos;
	}
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(dst, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		sb->pos += (size_t)n;
}

static void sb_puts(struct sbuf *sb, const char *s)
{
	sb_printf(sb, "%s", s);
}

/* Terminate the buffer and give the length the whole report needs. */
static int sb_finish(struct sbuf *sb)
{
	if (sb->len)
		sb->buf[sb->pos < sb->len ? sb->pos : sb->len - 1] = '\0';
	return sb->pos > INT_MAX ? -EOVERFLOW : (int)sb->pos;
}

/* Start a value: a comma after its sibling, then its key inside an object. */
static void js_name(struct sbuf *sb, const char *key)
{
	if (sb->comma)
		sb_puts(sb, ",");
	if (key)
		sb_printf(sb, "\"%s\":", key);
	sb->comma = true;
}

static void js_open(struct sbuf *sb, const char *key, char bracket)
{
	js_name(sb, key);
	sb_printf(sb, "%c", bracket);
	sb->comma = false;
}

static void js_close(struct sbuf *sb, char bracket)
{
	sb_printf(sb, "%c", bracket);
	sb->comma = true;
}

static void js_u64(struct sbuf *sb, const char *key, uint64_t v)
{
	js_name(sb, key);
	sb_printf(sb, "%" PRIu64, v);
}

static void js_i64(struct sbuf *sb, const char *key, int64_t v)
{
	js_name(sb, key);
	sb_printf(sb, "%" PRId64, v);
}

static void js_null(struct sbuf *sb, const char *key)
{
	js_name(sb, key);
	sb_puts(sb, "null");
}

/* A number kept in thousandths, written as a decimal: -1000 is -1.000. */
static void js_milli(struct sbuf *sb, const char *key, int64_t v)
{
	js_name(sb, key);
	uint64_t a = v < 0 ? (uint64_t)-v : (uint64_t)v;
	sb_printf(sb, "%s%" PRIu64 ".%03u", v < 0 ? "-" : "", a / 1000, (unsigned)(a % 1000));
}

/* A string, escaped (a backing file path may hold anything). */
static void js_str(struct sbuf *sb, const char *key, const char *s)
{
	js_name(sb, key);
	sb_puts(sb, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			sb_printf(sb, "\\%c", c);
		else if (c < 0x20)
			sb_printf(sb, "\\u%04x", c);
		else
			sb_printf(sb, "%c", c);
	}
	sb_puts(sb, "\"");
}

/* ---------------------------------------------------------------------- */
/* Walking the zones as /proc does                                         */
/* ---------------------------------------------------------------------- */

/* Zone t of node nid when it has memory; /proc skips unpopulated zones. */
static struct pa_zone *node_zone(const struct pa_pool *pool, unsigned nid, unsigned t)
{
	struct pa_zone *zone = pool->nodes[nid].zones[t];
	return zone && zone->present_pages ? zone : NULL;
}

static bool node_has_memory(const struct pa_pool *pool, unsigned nid)
{
	for (unsigned t = 0; t < PA_ZONE_COUNT; t++)
		if (node_zone(pool, nid, t))
			return true;
	return false;
}

/* Frames of the node that compaction holds isolated, by a walk over block heads. */
static uint64_t node_isolated(const struct pa_pool *pool, unsigned nid)
{
	const struct pa_node *n = &pool->nodes[nid];
	uint64_t sec = 1ull << pool->cfg.section_shift, frames = 0;
	for (pa_pfn_t pfn = n->start_pfn; pfn < n->end_pfn;) {
		if (!memmap_section_present(pool, pfn)) {
			pfn = (pfn / sec + 1) * sec;
			continue;
		}
		const struct pa_page *p = pfn_page(pool, pfn);
		unsigned st = page_state(p);
		uint64_t step = block_step(p, st);
		if (st == PS_ISOLATED)
			frames += step;
		pfn += step;
	}
	return frames;
}

static unsigned nr_orders(const struct pa_pool *pool)
{
	return pool_max_order(pool) + 1;
}

/* Copy the free block counts per order of a zone, under its lock. */
static void snap_nr_free(struct pa_zone *zone, uint64_t *out)
{
	pa_lock(&zone->lock, SITE_ADMIN);
	for (unsigned o = 0; o < nr_orders(zone->pool); o++)
		out[o] = zone_free_blocks(zone, o);
	pa_unlock(&zone->lock);
}

/* ---------------------------------------------------------------------- */
/* Reports with a row per zone and a cell per order                        */
/* ---------------------------------------------------------------------- */

/* Linux's contig_page_info: what the free lists offer a request of one order. */
struct contig_info {
	uint64_t free_pages;
	uint64_t free_blocks_total;
	uint64_t free_blocks_suitable; /* blocks of at least the order, counted in that order */
};

static void fill_contig_info(const uint64_t *nr_free, unsigned orders, unsigned suitable_order,
                             struct contig_info *info)
{
	*info = (struct contig_info){ 0 };
	for (unsigned o = 0; o < orders; o++) {
		info->free_blocks_total += nr_free[o];
		info->free_pages += nr_free[o] << o;
		if (o >= suitable_order)
			info->free_blocks_suitable += nr_free[o] << (o - suitable_order);
	}
}

static int64_t cell_nr_free(const uint64_t *nr_free, unsigned orders, unsigned order)
{
	(void)orders;
	return (int64_t)nr_free[order];
}

/* unusable_free_index(): the share of free memory too fragmented for this order. */
static int64_t cell_unusable(const uint64_t *nr_free, unsigned orders, unsigned order)
{
	struct contig_info info;
	fill_contig_info(nr_free, orders, order, &info);
	if (info.free_pages == 0)
		return 1000; /* no free memory counts as all of it unusable */
	uint64_t usable = info.free_blocks_suitable << order;
	return (int64_t)((info.free_pages - usable) * 1000 / info.free_pages);
}

/*
 * __fragmentation_index(): towards 0 a failure would be for lack of memory,
 * towards 1000 for fragmentation; -1000 when the request would succeed.
 */
static int64_t cell_extfrag(const uint64_t *nr_free, unsigned orders, unsigned order)
{
	struct contig_info info;
	fill_contig_info(nr_free, orders, order, &info);
	if (info.free_blocks_total == 0)
		return 0;
	if (info.free_blocks_suitable)
		return -1000;
	uint64_t requested = 1ull << order;
	return 1000 -
	       (int64_t)((1000 + info.free_pages * 1000 / requested) / info.free_blocks_total);
}

static void text_count(struct sbuf *sb, int64_t v)
{
	sb_printf(sb, "%6" PRIu64 " ", (uint64_t)v);
}

/* As Linux prints an index: integer part, then the thousandths. */
static void text_unusable(struct sbuf *sb, int64_t v)
{
	sb_printf(sb, "%d.%03d ", (int)(v / 1000), (int)(v % 1000));
}

static void text_extfrag(struct sbuf *sb, int64_t v)
{
	sb_printf(sb, "%2d.%03d ", (int)(v / 1000), (int)(v % 1000));
}

/* The reports of this shape, as data. */
struct order_report {
	const char *json_key; /* the per-zone array in JSON */
	int64_t (*cell)(const uint64_t *nr_free, unsigned orders, unsigned order);
	void (*text)(struct sbuf *sb, int64_t v);
	bool milli; /* the cells are thousandths */
};

static const struct order_report buddyinfo_report = { "free", cell_nr_free, text_count, false };
static const struct order_report unusable_report = { "unusable_index", cell_unusable, text_unusable,
	                                             true };
static const struct order_report extfrag_report = { "extfrag_index", cell_extfrag, text_extfrag,
	                                            true };

static void order_row(struct sbuf *sb, const struct order_report *r, const struct pa_zone *zone,
                      const uint64_t *nr_free)
{
	unsigned orders = nr_orders(zone->pool);
	const char *name = zone_name(zone->type);
	if (sb->json) {
		js_open(sb, NULL, '{');
		js_u64(sb, "node", zone->node);
		js_str(sb, "zone", name);
		js_open(sb, r->json_key, '[');
	} else {
		sb_printf(sb, "Node %u, zone %8s ", zone->node, name);
	}
	for (unsigned o = 0; o < orders; o++) {
		int64_t v = r->cell(nr_free, orders, o);
		if (!sb->json)
			r->text(sb, v);
		else if (r->milli)
			js_milli(sb, NULL, v);
		else
			js_i64(sb, NULL, v);
	}
	if (sb->json) {
		js_close(sb, ']');
		js_close(sb, '}');
	} else {
		sb_puts(sb, "\n");
	}
}

static int write_order_report(struct pa_pool *pool, struct sbuf *sb, const struct order_report *r)
{
	uint64_t *nr_free = calloc(nr_orders(pool), sizeof *nr_free);
	if (!nr_free)
		return -ENOMEM;
	if (sb->json) {
		js_open(sb, NULL, '{');
		js_open(sb, "zones", '[');
	}
	for (unsigned nid = 0; nid < pool->nr_nodes; nid++) {
		for (unsigned t = 0; t < PA_ZONE_COUNT; t++) {
			struct pa_zone *zone = node_zone(pool, nid, t);
			if (!zone)
				continue;
			snap_nr_free(zone, nr_free);
			order_row(sb, r, zone, nr_free);
		}
	}
	if (sb->json) {
		js_close(sb, ']');
		js_close(sb, '}');
	}
	free(nr_free);
	return 0;
}

static int report_buddyinfo(struct pa_pool *pool, struct sbuf *sb)
{
	return write_order_report(pool, sb, &buddyinfo_report);
}

static int report_unusable(struct pa_pool *pool, struct sbuf *sb)
{
	return write_order_report(pool, sb, &unusable_report);
}

static int report_extfrag(struct pa_pool *pool, struct sbuf *sb)
{
	return write_order_report(pool, sb, &extfrag_report);
}

/* ---------------------------------------------------------------------- */
/* /proc/pagetypeinfo                                                      */
/* ---------------------------------------------------------------------- */

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
			if (pool->pb_zone[pb] != zone->index ||
			    !memmap_section_present(pool, pb << pbo))
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

static void snap_pagetypes(struct pa_zone *zone, struct pt_zone *pz)
{
	size_t n = (size_t)nr_orders(zone->pool) * PA_MT_COUNT;
	pz->zone = zone;
	pa_lock(&zone->lock, SITE_ADMIN);
	memcpy(pz->nr_free_mt, zone->nr_free_mt, n * sizeof *pz->nr_free_mt);
	pa_unlock(&zone->lock);
	memset(pz->blocks, 0, sizeof pz->blocks);
	count_blocks(zone, pz->blocks);
}

static void pt_text_free(struct sbuf *sb, unsigned nid, const struct pt_zone *pz, unsigned nz,
                         unsigned orders)
{
	sb_printf(sb, "%-43s ", "Free pages count per migrate type at order");
	for (unsigned o = 0; o < orders; o++)
		sb_printf(sb, "%6u ", o);
	sb_puts(sb, "\n");
	for (unsigned i = 0; i < nz; i++) {
		for (unsigned mt = 0; mt < PA_MT_COUNT; mt++) {
			sb_printf(sb, "Node %4u, zone %8s, type %12s ", nid,
			          zone_name(pz[i].zone->type), pa_migratetype_names[mt]);
			for (unsigned o = 0; o < orders; o++) {
				uint64_t n = pz[i].nr_free_mt[o * PA_MT_COUNT + mt];
				bool over = n >= PAGETYPE_COUNT_CAP;
				sb_printf(sb, "%s%6" PRIu64 " ", over ? ">" : "",
				          over ? (uint64_t)PAGETYPE_COUNT_CAP : n);
			}
			sb_puts(sb, "\n");
		}
	}
}

static void pt_text_blocks(struct sbuf *sb, unsigned nid, const struct pt_zone *pz, unsigned nz)
{
	sb_printf(sb, "\n%-23s", "Number of blocks type ");
	for (unsigned mt = 0; mt < PA_MT_COUNT; mt++)
		sb_printf(sb, "%12s ", pa_migratetype_names[mt]);
	sb_puts(sb, "\n");
	for (unsigned i = 0; i < nz; i++) {
		sb_printf(sb, "Node %u, zone %8s ", nid, zone_name(pz[i].zone->type));
		for (unsigned mt = 0; mt < PA_MT_COUNT; mt++)
			sb_printf(sb, "%12" PRIu64 " ", pz[i].blocks[mt]);
		sb_puts(sb, "\n");
	}
}

/* JSON gives the exact counts: the /proc cap exists only to bound a list walk. */
static void pt_json_zone(struct sbuf *sb, const struct pt_zone *pz, unsigned orders)
{
	js_open(sb, NULL, '{');
	js_str(sb, "zone", zone_name(pz->zone->type));
	js_open(sb, "free", '{');
	for (unsigned mt = 0; mt < PA_MT_COUNT; mt++) {
		js_open(sb, pa_migratetype_names[mt], '[');
		for (unsigned o = 0; o < orders; o++)
			js_u64(sb, NULL, pz->nr_free_mt[o * PA_MT_COUNT + mt]);
		js_close(sb, ']');
	}
	js_close(sb, '}');
	js_open(sb, "blocks", '{');
	for (unsigned mt = 0; mt < PA_MT_COUNT; mt++)
		js_u64(sb, pa_migratetype_names[mt], pz->blocks[mt]);
	js_close(sb, '}');
	js_close(sb, '}');
}

static void pt_node(struct pa_pool *pool, struct sbuf *sb, unsigned nid, struct pt_zone *pz)
{
	unsigned orders = nr_orders(pool), nz = 0;
	for (unsigned t = 0; t < PA_ZONE_COUNT; t++) {
		struct pa_zone *zone = node_zone(pool, nid, t);
		if (zone)
			snap_pagetypes(zone, &pz[nz++]);
	}
	if (sb->json) {
		js_open(sb, NULL, '{');
		js_u64(sb, "node", nid);
		js_open(sb, "zones", '[');
		for (unsigned i = 0; i < nz; i++)
			pt_json_zone(sb, &pz[i], orders);
		js_close(sb, ']');
		js_close(sb, '}');
		return;
	}
	sb_printf(sb, "Page block order: %u\n", pool->cfg.pageblock_order);
	sb_printf(sb, "Pages per block:  %" PRIu64 "\n", (uint64_t)1 << pool->cfg.pageblock_order);
	sb_puts(sb, "\n");
	pt_text_free(sb, nid, pz, nz, orders);
	pt_text_blocks(sb, nid, pz, nz);
}

static int report_pagetypeinfo(struct pa_pool *pool, struct sbuf *sb)
{
	size_t per_zone = (size_t)nr_orders(pool) * PA_MT_COUNT;
	uint64_t *counts = calloc(per_zone * PA_ZONE_COUNT, sizeof *counts);
	if (!counts)
		return -ENOMEM;
	struct pt_zone pz[PA_ZONE_COUNT];
	for (unsigned t = 0; t < PA_ZONE_COUNT; t++)
		pz[t].nr_free_mt = counts + t * per_zone;
	if (sb->json) {
		js_open(sb, NULL, '{');
		js_u64(sb, "pageblock_order", pool->cfg.pageblock_order);
		js_u64(sb, "pages_per_block", 1ull << pool->cfg.pageblock_order);
		js_open(sb, "migratetypes", '[');
		for (unsigned mt = 0; mt < PA_MT_COUNT; mt++)
			js_str(sb, NULL, pa_migratetype_names[mt]);
		js_close(sb, ']');
		js_open(sb, "nodes", '[');
	}
	for (unsigned nid = 0; nid < pool->nr_nodes; nid++)
		if (node_has_memory(pool, nid)) /* as /proc skips memoryless nodes */
			pt_node(pool, sb, nid, pz);
	if (sb->json) {
		js_close(sb, ']');
		js_close(sb, '}');
	}
	free(counts);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* /proc/vmstat                                                            */
/* ---------------------------------------------------------------------- */

/* Counters folded over the zones, each zone's read under its lock. */
struct vm_snap {
	uint64_t free_pages, free_cma, isolated, numa_foreign;
	uint64_t pgalloc[PA_ZONE_COUNT]; /* PA_ZS_PGALLOC by zone type */
	uint64_t zstat[PA_NR_ZONE_STATS];
	uint64_t *alloc_order;     /* [order] */
	uint64_t *folios_migrated; /* [order]: folios compaction moved whole */
};

static void vm_snap_free(struct vm_snap *s)
{
	free(s->alloc_order);
	free(s->folios_migrated);
}

/* The zone's free frames and folios moved per order, which change under its lock. */
static void vm_snap_zone_locked(struct pa_zone *zone, struct vm_snap *s)
{
	pa_lock(&zone->lock, SITE_ADMIN);
	s->free_pages += zone_nr_free(zone);
	s->free_cma += zone_free_cma(zone);
	s->numa_foreign += atomic_load_explicit(&zone->numa_foreign, memory_order_relaxed);
	for (unsigned o = 0; o < nr_orders(zone->pool); o++)
		s->folios_migrated[o] += zone->folios_migrated[o];
	pa_unlock(&zone->lock);
}

static int vm_snapshot(struct pa_pool *pool, struct vm_snap *s)
{
	unsigned orders = nr_orders(pool);
	memset(s, 0, sizeof *s);
	s->alloc_order = calloc(orders, sizeof *s->alloc_order);
	s->folios_migrated = calloc(orders, sizeof *s->folios_migrated);
	uint64_t *order = calloc(orders, sizeof *order);
	if (!s->alloc_order || !s->folios_migrated || !order) {
		vm_snap_free(s);
		free(order);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < pool->nr_zones; i++) {
		struct pa_zone *zone = &pool->zones[i];
		uint64_t zstat[PA_NR_ZONE_STATS];
		zone_fold_stats(zone, zstat, order); /* the zone's and every CPU's lists' */
		vm_snap_zone_locked(zone, s);
		s->pgalloc[zone->type] += zstat[PA_ZS_PGALLOC];
		for (unsigned k = 0; k < PA_NR_ZONE_STATS; k++)
			s->zstat[k] += zstat[k];
		for (unsigned o = 0; o < orders; o++)
			s->alloc_order[o] += order[o];
	}
	for (unsigned nid = 0; nid < pool->nr_nodes; nid++)
		s->isolated += node_isolated(pool, nid);
	free(order);
	return 0;
}

typedef void (*vm_visit_fn)(void *ctx, const char *name, uint64_t value);

/* Where a vmstat line's value comes from. */
enum vm_src {
	VM_FREE,     /* frames on the free lists */
	VM_FREE_CMA, /* of them, on the CMA lists */
	VM_ISOLATED, /* frames compaction holds isolated */
	VM_NUMA_HIT, /* allocations on the preferred node: all but numa_miss */
	VM_NUMA_FOREIGN,
	VM_PGALLOC, /* pgalloc_<zone type>, one line per type of the layout */
	VM_ZONE,    /* a zone counter (PA_ZONE_STATS), folded */
	VM_POOL,    /* a pool counter (PA_POOL_STATS) */
};

struct vm_item {
	const char *name;
	enum vm_src src;
	unsigned id; /* VM_ZONE, VM_POOL: the counter */
};

/*
 * The Linux part of /proc/vmstat: the 6.1 lines that mean something here, in
 * 6.1's order. Every other counter of the lists follows it (ours), then the
 * per-order counters.
 */
static const struct vm_item vm_linux[] = {
	{ "nr_free_pages", VM_FREE, 0 },
	{ "nr_free_cma", VM_FREE_CMA, 0 },
	{ "numa_hit", VM_NUMA_HIT, 0 },
	{ "numa_miss", VM_ZONE, PA_ZS_NUMA_MISS },
	{ "numa_foreign", VM_NUMA_FOREIGN, 0 },
	{ "numa_local", VM_NUMA_HIT, 0 },           /* the preferred node is the CPU's own */
	{ "numa_other", VM_ZONE, PA_ZS_NUMA_MISS }, /* likewise */
	{ "nr_isolated_anon", VM_ISOLATED, 0 },
	{ "pgalloc_", VM_PGALLOC, 0 },
	{ "pgfree", VM_ZONE, PA_ZS_PGFREE },
	{ "pgmigrate_success", VM_ZONE, PA_ZS_PGMIGRATE_SUCCESS },
	{ "pgmigrate_fail", VM_ZONE, PA_ZS_PGMIGRATE_FAIL },
	{ "compact_migrate_scanned", VM_ZONE, PA_ZS_COMPACT_MIGRATE_SCANNED },
	{ "compact_free_scanned", VM_ZONE, PA_ZS_COMPACT_FREE_SCANNED },
	{ "compact_isolated", VM_ZONE, PA_ZS_COMPACT_ISOLATED },
	{ "compact_stall", VM_POOL, PA_PS_COMPACT_STALL },
	{ "compact_fail", VM_POOL, PA_PS_COMPACT_FAIL },
	{ "compact_success", VM_POOL, PA_PS_COMPACT_SUCCESS },
	{ "compact_daemon_wake", VM_POOL, PA_PS_COMPACT_DAEMON_WAKE },
	{ "compact_daemon_migrate_scanned", VM_ZONE, PA_ZS_COMPACT_DAEMON_MIGRATE_SCANNED },
	{ "compact_daemon_free_scanned", VM_ZONE, PA_ZS_COMPACT_DAEMON_FREE_SCANNED },
};
#define NR_VM_LINUX (sizeof vm_linux / sizeof vm_linux[0])

static bool vm_in_linux_part(enum vm_src src, unsigned id)
{
	for (size_t i = 0; i < NR_VM_LINUX; i++)
		if (vm_linux[i].src == src && vm_linux[i].id == id)
			return true;
	return src == VM_ZONE && id == PA_ZS_PGALLOC; /* printed per zone type */
}

static void vm_visit_zone_types(struct pa_pool *pool, const struct vm_snap *s, vm_visit_fn fn,
                                void *ctx)
{
	for (unsigned t = 0; t < PA_ZONE_COUNT; t++) {
		if (!zone_type_in_layout(pool, t))
			continue;
		char name[32];
		int n = snprintf(name, sizeof name, "%s_", pa_zone_stat_names[PA_ZS_PGALLOC]);
		for (const char *z = zone_name(t); *z && n + 1 < (int)sizeof name; z++)
			name[n++] = (char)tolower((unsigned char)*z);
		name[n] = '\0';
		fn(ctx, name, s->pgalloc[t]);
	}
}

static uint64_t vm_pool_stat(struct pa_pool *pool, unsigned k)
{
	return atomic_load_explicit(&pool->pool_stat[k], memory_order_relaxed);
}

static void vm_visit_linux(struct pa_pool *pool, const struct vm_snap *s, vm_visit_fn fn, void *ctx)
{
	for (size_t i = 0; i < NR_VM_LINUX; i++) {
		const struct vm_item *it = &vm_linux[i];
		switch (it->src) {
		case VM_FREE:
			fn(ctx, it->name, s->free_pages);
			break;
		case VM_FREE_CMA:
			fn(ctx, it->name, s->free_cma);
			break;
		case VM_ISOLATED:
			fn(ctx, it->name, s->isolated);
			break;
		case VM_NUMA_HIT:
			fn(ctx, it->name,
			   s->zstat[PA_ZS_ALLOC_SUCCESS] - s->zstat[PA_ZS_NUMA_MISS]);
			break;
		case VM_NUMA_FOREIGN:
			fn(ctx, it->name, s->numa_foreign);
			break;
		case VM_PGALLOC:
			vm_visit_zone_types(pool, s, fn, ctx);
			break;
		case VM_ZONE:
			fn(ctx, it->name, s->zstat[it->id]);
			break;
		case VM_POOL:
			fn(ctx, it->name, vm_pool_stat(pool, it->id));
			break;
		}
	}
}

/*
 * Every vmstat line in order: the Linux part (vm_linux), then our counters
 * (those of the lists that Linux does not have), then the per-order ones:
 * failures, allocations, and folios compaction moved whole (without a
 * split; compact_folios_split counts the others).
 */
static void vm_walk(struct pa_pool *pool, const struct vm_snap *s, vm_visit_fn fn, void *ctx)
{
	char name[48];
	vm_visit_linux(pool, s, fn, ctx);
	for (unsigned k = 0; k < PA_NR_ZONE_STATS; k++)
		if (!vm_in_linux_part(VM_ZONE, k))
			fn(ctx, pa_zone_stat_names[k], s->zstat[k]);
	for (unsigned k = 0; k < PA_NR_POOL_STATS; k++)
		if (!vm_in_linux_part(VM_POOL, k))
			fn(ctx, pa_pool_stat_names[k], vm_pool_stat(pool, k));
	for (unsigned o = 0; o < nr_orders(pool); o++) {
		snprintf(name, sizeof name, "pgalloc_fail_order_%u", o);
		fn(ctx, name,
		   atomic_load_explicit(&pool->alloc_fail_order[o], memory_order_relaxed));
	}
	for (unsigned o = 0; o < nr_orders(pool); o++) {
		snprintf(name, sizeof name, "pgalloc_order_%u", o);
		fn(ctx, name, s->alloc_order[o]);
	}
	for (unsigned o = 0; o < nr_orders(pool); o++) {
		snprintf(name, sizeof name, "compact_folios_migrated_order_%u", o);
		fn(ctx, name, s->folios_migrated[o]);
	}
}

static void vm_emit(void *ctx, const char *name, uint64_t value)
{
	struct sbuf *sb = ctx;
	if (sb->json)
		js_u64(sb, name, value);
	else
		sb_printf(sb, "%s %" PRIu64 "\n", name, value);
}

static int report_vmstat(struct pa_pool *pool, struct sbuf *sb)
{
	struct vm_snap s;
	int ret = vm_snapshot(pool, &s);
	if (ret)
		return ret;
	if (sb->json)
		js_open(sb, NULL, '{');
	vm_walk(pool, &s, vm_emit, sb);
	if (sb->json)
		js_close(sb, '}');
	vm_snap_free(&s);
	return 0;
}

struct vm_lookup {
	const char *name;
	uint64_t *value;
	bool found;
};

static void vm_match(void *ctx, const char *name, uint64_t value)
{
	struct vm_lookup *l = ctx;
	if (!l->found && strcmp(name, l->name) == 0) {
		*l->value = value;
		l->found = true;
	}
}

int pa_vmstat_read(struct pa_pool *pool, const char *name, uint64_t *value)
{
	if (!pool || !name || !value)
		return -EINVAL;
	struct vm_snap s;
	int ret = vm_snapshot(pool, &s);
	if (ret)
		return ret;
	struct vm_lookup l = { .name = name, .value = value };
	vm_walk(pool, &s, vm_match, &l);
	vm_snap_free(&s);
	return l.found ? 0 : -ENOENT;
}

/* ---------------------------------------------------------------------- */
/* /proc/zoneinfo                                                          */
/* ---------------------------------------------------------------------- */

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
 *           boost    0                     (no watermark boosting: always 0)
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
	zi->spanned = zone->end_pfn - zone->start_pfn;
	zi->start_pfn = zone->start_pfn;
	pa_lock(&zone->lock, SITE_ADMIN);
	zi->free = zone_nr_free(zone);
	zi->min = zone->wmark[PA_WMARK_MIN];
	zi->low = zone->wmark[PA_WMARK_LOW];
	zi->high = zone->wmark[PA_WMARK_HIGH];
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

static void zi_value(struct sbuf *sb, const char *key, const char *text, uint64_t v)
{
	if (sb->json)
		js_u64(sb, key, v);
	else if (text)
		sb_printf(sb, "%s%" PRIu64 "\n", text, v);
	else
		sb_printf(sb, "      %-12s %" PRIu64 "\n", key, v);
}

static void zi_per_node(struct pa_pool *pool, struct sbuf *sb, unsigned nid)
{
	if (sb->json)
		js_open(sb, "per_node_stats", '{');
	else
		sb_puts(sb, "  per-node stats\n");
	zi_value(sb, "nr_isolated_anon", NULL, node_isolated(pool, nid));
	if (sb->json)
		js_close(sb, '}');
}

/* "pages free" through "protection:": the lines every zone prints. */
static void zi_head(struct sbuf *sb, const struct zi_zone *zi, const bool *types)
{
	for (size_t i = 0; i < sizeof zi_head_rows / sizeof zi_head_rows[0]; i++)
		zi_value(sb, zi_head_rows[i].key, zi_head_rows[i].text,
		         zi_field(zi, zi_head_rows[i].off));
	if (sb->json)
		js_open(sb, "protection", '[');
	else
		sb_puts(sb, "        protection: (");
	for (unsigned t = 0, first = 1; t < PA_ZONE_COUNT; t++) {
		if (!types[t])
			continue;
		if (sb->json)
			js_u64(sb, NULL, zi->protection[t]);
		else
			sb_printf(sb, "%s%" PRIu64, first ? "" : ", ", zi->protection[t]);
		first = 0;
	}
	if (sb->json)
		js_close(sb, ']');
	else
		sb_puts(sb, ")\n");
}

static void zi_stats(struct sbuf *sb, const struct zi_zone *zi)
{
	if (sb->json)
		js_open(sb, "stats", '{');
	for (size_t i = 0; i < sizeof zi_stat_rows / sizeof zi_stat_rows[0]; i++)
		zi_value(sb, zi_stat_rows[i].key, NULL, zi_field(zi, zi_stat_rows[i].off));
	for (unsigned k = 0; k < PA_NR_ZONE_STATS; k++)
		if (k != PA_ZS_NUMA_MISS) /* a row above */
			zi_value(sb, pa_zone_stat_names[k], NULL, zi->stat[k]);
	if (sb->json)
		js_close(sb, '}');
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
		js_open(sb, "orders", '[');
	for (unsigned o = 0; o < orders; o++) {
		if (!zi_order_held(blocks, o))
			continue;
		const uint64_t *b = blocks + o * PA_NR_PCP_TYPES;
		if (!sb->json) {
			char key[24];
			snprintf(key, sizeof key, "order_%u:", o);
			sb_printf(sb,
			          "              %-9s unmovable %" PRIu64 " movable %" PRIu64
			          " reclaimable %" PRIu64 "\n",
			          key, b[0], b[1], b[2]);
			continue;
		}
		js_open(sb, NULL, '{');
		js_u64(sb, "order", o);
		for (unsigned t = 0; t < PA_NR_PCP_TYPES; t++)
			js_u64(sb, pcp_type_names[t], b[t]);
		js_close(sb, '}');
	}
	if (sb->json)
		js_close(sb, ']');
}

static void zi_pageset(struct sbuf *sb, unsigned cpu, const struct pa_pcp_info *info,
                       const struct zi_zone *zi, const uint64_t *blocks, unsigned orders)
{
	if (sb->json) {
		js_open(sb, NULL, '{');
		js_u64(sb, "cpu", cpu);
	} else {
		sb_printf(sb, "    cpu: %u\n", cpu);
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
		js_close(sb, '}');
}

static void zi_pagesets(struct pa_pool *pool, struct sbuf *sb, struct pa_zone *zone,
                        const struct zi_zone *zi, uint64_t *blocks)
{
	if (sb->json)
		js_open(sb, "pagesets", '[');
	else
		sb_puts(sb, "  pagesets\n");
	for (unsigned cpu = 0; cpu < pool->cfg.nr_cpus; cpu++) {
		struct pa_pcp_info info;
		if (pa_pcp_info(pool, zone->node, zone->type, cpu, &info, blocks) == 0)
			zi_pageset(sb, cpu, &info, zi, blocks, nr_orders(pool));
	}
	if (sb->json)
		js_close(sb, ']');
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
		js_open(sb, NULL, '{');
		js_u64(sb, "node", nid);
		js_str(sb, "zone", zone_name(t));
		js_name(sb, "populated");
		sb_puts(sb, populated ? "true" : "false");
	} else {
		sb_printf(sb, "Node %u, zone %8s\n", nid, zone_name(t));
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
		js_close(sb, '}');
}

static int report_zoneinfo(struct pa_pool *pool, struct sbuf *sb)
{
	uint64_t *blocks = calloc((size_t)nr_orders(pool) * PA_NR_PCP_TYPES, sizeof *blocks);
	if (!blocks)
		return -ENOMEM;
	bool types[PA_ZONE_COUNT];
	for (unsigned t = 0; t < PA_ZONE_COUNT; t++)
		types[t] = zone_type_in_layout(pool, t);
	if (sb->json) {
		js_open(sb, NULL, '{');
		js_open(sb, "zones", '[');
	}
	for (unsigned nid = 0; nid < pool->nr_nodes; nid++) {
		bool first = true;
		for (unsigned t = 0; t < PA_ZONE_COUNT; t++) {
			if (!types[t])
				continue;
			bool populated = node_zone(pool, nid, t) != NULL;
			zi_zone(pool, sb, nid, t, populated && first, blocks, types);
			first = first && !populated;
		}
	}
	if (sb->json) {
		js_close(sb, ']');
		js_close(sb, '}');
	}
	free(blocks);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Lock contention, as perf lock contention                                */
/* ---------------------------------------------------------------------- */

/*
 * One row per (lock, call site) that was ever contended, most contended
 * first, in the layout of `perf lock contention`:
 *
 *    contended   total wait     max wait     avg wait         type   caller
 *          713      4.64 ms     74.37 us      6.51 us     spinlock   pa_alloc_pages (zone->lock Node 0 Normal)
 *
 * Zone locks are spin locks that sleep after a while ("spinlock", as perf
 * names Linux's zone lock), one per zone. The per-CPU list locks are spin
 * locks ("spinlock") too, summed over the CPUs of a zone: a
 * CPU's failed trylock (it then takes the zone path) counts as a contended
 * acquisition with no wait, so contended = waits + failed trylocks, and the
 * wait figures are those of the waits. avg = total / contended, as perf.
 * JSON: {"locks":[{"name","caller","type","contended","total_wait_ns",
 * "max_wait_ns","avg_wait_ns"}]}, in the same order.
 *
 * A zone lock's figures are read under that lock, a CPU's list lock's under
 * the list lock (they are written only by holders), the failed-trylock
 * counts with atomic loads.
 */

static const char *const lock_site_names[PA_NR_LOCK_SITES] = {
#define X(id, name) [id] = name,
	PA_LOCK_SITES(X)
#undef X
};

struct lock_row {
	char name[48];
	const char *caller, *type;
	uint64_t contended, total_wait_ns, max_wait_ns;
};

struct lock_rows {
	struct lock_row *row;
	unsigned nr;
};

static void lock_rows_add(struct lock_rows *r, const char *name, const char *type,
                          const struct pa_lock_stat *site, const uint64_t *busy)
{
	for (unsigned s = 0; s < PA_NR_LOCK_SITES; s++) {
		uint64_t contended = site[s].contended + (busy ? busy[s] : 0);
		if (!contended)
			continue;
		struct lock_row *row = &r->row[r->nr++];
		*row = (struct lock_row){ .caller = lock_site_names[s],
			                  .type = type,
			                  .contended = contended,
			                  .total_wait_ns = site[s].total_wait_ns,
			                  .max_wait_ns = site[s].max_wait_ns };
		snprintf(row->name, sizeof row->name, "%s", name);
	}
}

static void snap_zone_lock(struct pa_zone *zone, struct pa_lock_stat *site)
{
	pa_lock(&zone->lock, SITE_ADMIN);
	memcpy(site, zone->lock.site, sizeof zone->lock.site);
	pa_unlock(&zone->lock);
}

/* Every CPU's list lock of the zone, summed: waits and failed trylocks per site. */
static void snap_pcp_locks(struct pa_zone *zone, struct pa_lock_stat *site, uint64_t *busy)
{
	struct pa_pool *pool = zone->pool;
	for (unsigned c = 0; c < pool->cfg.nr_cpus; c++) {
		struct pa_spin *l = &zone->pcp[c].lock;
		platform_spin_lock(pool, l, SITE_ADMIN);
		for (unsigned s = 0; s < PA_NR_LOCK_SITES; s++) {
			site[s].contended += l->site[s].contended;
			site[s].total_wait_ns += l->site[s].total_wait_ns;
			if (l->site[s].max_wait_ns > site[s].max_wait_ns)
				site[s].max_wait_ns = l->site[s].max_wait_ns;
		}
		pa_spin_unlock(l);
		for (unsigned s = 0; s < PA_NR_LOCK_SITES; s++)
			busy[s] += atomic_load_explicit(&l->busy[s], memory_order_relaxed);
	}
}

static void snap_locks(struct pa_pool *pool, struct lock_rows *r)
{
	for (unsigned i = 0; i < pool->nr_zones; i++) {
		struct pa_zone *zone = &pool->zones[i];
		struct pa_lock_stat site[PA_NR_LOCK_SITES] = { 0 };
		uint64_t busy[PA_NR_LOCK_SITES] = { 0 };
		char name[48];
		snap_zone_lock(zone, site);
		snprintf(name, sizeof name, "zone->lock Node %u %s", zone->node,
		         zone_name(zone->type));
		lock_rows_add(r, name, "spinlock", site, NULL);
		memset(site, 0, sizeof site);
		snap_pcp_locks(zone, site, busy);
		snprintf(name, sizeof name, "pcp->lock Node %u %s", zone->node,
		         zone_name(zone->type));
		lock_rows_add(r, name, "spinlock", site, busy);
	}
}

/* Most contended first; ties by total wait, then by name, so the order is stable. */
static int lock_row_cmp(const void *a, const void *b)
{
	const struct lock_row *x = a, *y = b;
	if (x->contended != y->contended)
		return x->contended < y->contended ? 1 : -1;
	if (x->total_wait_ns != y->total_wait_ns)
		return x->total_wait_ns < y->total_wait_ns ? 1 : -1;
	int c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->caller, y->caller);
}

/* perf's time column: two decimals in the largest unit that fits, whole nanoseconds below 1 us. */
static void lock_time(char *buf, size_t len, uint64_t ns)
{
	static const struct {
		double base;
		const char *unit;
	} units[] = {
		{ 3600e9, "h " }, { 60e9, "m " }, { 1e9, "s " }, { 1e6, "ms" }, { 1e3, "us" }
	};
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		if ((double)ns >= units[i].base) {
			snprintf(buf, len, "%.2f %s", (double)ns / units[i].base, units[i].unit);
			return;
		}
	}
	snprintf(buf, len, "%" PRIu64 " ns", ns);
}

static void lock_row_out(struct sbuf *sb, const struct lock_row *row)
{
	uint64_t avg = row->total_wait_ns / row->contended;
	if (sb->json) {
		js_open(sb, NULL, '{');
		js_str(sb, "name", row->name);
		js_str(sb, "caller", row->caller);
		js_str(sb, "type", row->type);
		js_u64(sb, "contended", row->contended);
		js_u64(sb, "total_wait_ns", row->total_wait_ns);
		js_u64(sb, "max_wait_ns", row->max_wait_ns);
		js_u64(sb, "avg_wait_ns", avg);
		js_close(sb, '}');
		return;
	}
	char total[24], max[24], mean[24];
	lock_time(total, sizeof total, row->total_wait_ns);
	lock_time(max, sizeof max, row->max_wait_ns);
	lock_time(mean, sizeof mean, avg);
	sb_printf(sb, "%10" PRIu64 " %12s %12s %12s %12s   %s (%s)\n", row->contended, total, max,
	          mean, row->type, row->caller, row->name);
}

static int report_lockstat(struct pa_pool *pool, struct sbuf *sb)
{
	struct lock_rows r = { .row = calloc((size_t)pool->nr_zones * 2 * PA_NR_LOCK_SITES,
		                             sizeof *r.row) };
	if (!r.row)
		return -ENOMEM;
	snap_locks(pool, &r);
	qsort(r.row, r.nr, sizeof *r.row, lock_row_cmp);
	if (sb->json) {
		js_open(sb, NULL, '{');
		js_open(sb, "locks", '[');
	} else {
		sb_printf(sb, "%10s %12s %12s %12s %12s   %s\n", "contended", "total wait",
		          "max wait", "avg wait", "type", "caller");
	}
	for (unsigned i = 0; i < r.nr; i++)
		lock_row_out(sb, &r.row[i]);
	if (sb->json) {
		js_close(sb, ']');
		js_close(sb, '}');
	}
	free(r.row);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* The derived configuration                                               */
/* ---------------------------------------------------------------------- */

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
		snprintf(buf, len, "file:%s", c->backing_path);
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
#undef U
	return n;
}

/* A zone's figures; watermarks change at run time, so they are read under the lock. */
struct info_zone {
	uint64_t spanned, present, managed, wmark[PA_NR_WMARK];
};

static void snap_info_zone(struct pa_zone *zone, struct info_zone *iz)
{
	iz->spanned = zone->end_pfn - zone->start_pfn;
	pa_lock(&zone->lock, SITE_ADMIN);
	iz->present = zone->present_pages;
	iz->managed = zone->managed_pages;
	memcpy(iz->wmark, zone->wmark, sizeof iz->wmark);
	pa_unlock(&zone->lock);
}

static void info_json_zone(struct sbuf *sb, struct pa_zone *zone)
{
	struct info_zone iz;
	snap_info_zone(zone, &iz);
	js_open(sb, NULL, '{');
	js_str(sb, "name", zone_name(zone->type));
	js_u64(sb, "start_pfn", zone->start_pfn);
	js_u64(sb, "end_pfn", zone->end_pfn);
	js_u64(sb, "spanned_pages", iz.spanned);
	js_u64(sb, "present_pages", iz.present);
	js_u64(sb, "managed_pages", iz.managed);
	js_u64(sb, "watermark_min", iz.wmark[PA_WMARK_MIN]);
	js_u64(sb, "watermark_low", iz.wmark[PA_WMARK_LOW]);
	js_u64(sb, "watermark_high", iz.wmark[PA_WMARK_HIGH]);
	js_close(sb, '}');
}

static void info_text_zone(struct sbuf *sb, struct pa_zone *zone)
{
	struct info_zone iz;
	snap_info_zone(zone, &iz);
	sb_printf(sb,
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
	js_open(sb, "cma", '[');
	for (unsigned i = 0; i < pa_cma_count(pool); i++) {
		struct pa_cma_info a;
		if (pa_cma_get(pool, i, &a))
			continue;
		js_open(sb, NULL, '{');
		js_str(sb, "name", a.name);
		js_u64(sb, "start_pfn", a.start_pfn);
		js_u64(sb, "nr_pages", a.nr_pages);
		js_u64(sb, "requested_bytes", a.requested_bytes);
		js_u64(sb, "reserved_bytes", a.reserved_bytes);
		js_u64(sb, "allocated_pages", a.allocated_pages);
		js_close(sb, '}');
	}
	js_close(sb, ']');
}

static void info_text_cma(struct pa_pool *pool, struct sbuf *sb)
{
	if (!pa_cma_count(pool))
		return;
	sb_printf(sb, "\n%-6s %12s %12s %16s %16s %12s\n", "cma", "start_pfn", "nr_pages",
	          "requested_bytes", "reserved_bytes", "allocated");
	for (unsigned i = 0; i < pa_cma_count(pool); i++) {
		struct pa_cma_info a;
		if (pa_cma_get(pool, i, &a))
			continue;
		sb_printf(sb,
		          "%-6s %12" PRIu64 " %12" PRIu64 " %16" PRIu64 " %16" PRIu64 " %12" PRIu64
		          "\n",
		          a.name, (uint64_t)a.start_pfn, a.nr_pages, a.requested_bytes,
		          a.reserved_bytes, a.allocated_pages);
	}
}

static void info_json_nodes(struct pa_pool *pool, struct sbuf *sb)
{
	js_open(sb, "nodes", '[');
	for (unsigned nid = 0; nid < pool->nr_nodes; nid++) {
		const struct pa_node *node = &pool->nodes[nid];
		js_open(sb, NULL, '{');
		js_u64(sb, "id", node->id);
		js_u64(sb, "start_pfn", node->start_pfn);
		js_u64(sb, "end_pfn", node->end_pfn);
		js_open(sb, "zones", '[');
		for (unsigned t = 0; t < PA_ZONE_COUNT; t++)
			if (node->zones[t])
				info_json_zone(sb, node->zones[t]);
		js_close(sb, ']');
		js_close(sb, '}');
	}
	js_close(sb, ']');
	info_json_cma(pool, sb);
}

static void info_text_nodes(struct pa_pool *pool, struct sbuf *sb)
{
	for (unsigned nid = 0; nid < pool->nr_nodes; nid++) {
		const struct pa_node *node = &pool->nodes[nid];
		sb_printf(sb, "node %u: pfn %" PRIu64 "-%" PRIu64 "\n", node->id,
		          (uint64_t)node->start_pfn, (uint64_t)node->end_pfn);
	}
	sb_printf(sb, "\n%4s %-8s %12s %12s %12s %12s %12s %10s %10s %10s\n", "node", "zone",
	          "start_pfn", "end_pfn", "spanned", "present", "managed", "min", "low", "high");
	for (unsigned nid = 0; nid < pool->nr_nodes; nid++)
		for (unsigned t = 0; t < PA_ZONE_COUNT; t++)
			if (pool->nodes[nid].zones[t])
				info_text_zone(sb, pool->nodes[nid].zones[t]);
	info_text_cma(pool, sb);
}

static void info_field_out(struct sbuf *sb, const struct info_field *f)
{
	if (sb->json) {
		if (f->kind == IF_STR)
			js_str(sb, f->key, f->str);
		else if (f->kind == IF_OPT && f->num < 0)
			js_null(sb, f->key);
		else
			js_i64(sb, f->key, f->num);
		return;
	}
	int pad = 26 - (int)strlen(f->key);
	sb_printf(sb, "%s:%*s ", f->key, pad > 0 ? pad : 0, "");
	if (f->kind == IF_STR)
		sb_printf(sb, "%s\n", f->str);
	else if (f->kind == IF_OPT && f->num < 0)
		sb_puts(sb, "none\n");
	else
		sb_printf(sb, "%" PRId64 "\n", f->num);
}

static int report_info(struct pa_pool *pool, struct sbuf *sb)
{
	struct info_field f[32];
	char bbuf[300];
	unsigned n = info_fields(pool, f, bbuf, sizeof bbuf);
	if (sb->json)
		js_open(sb, NULL, '{');
	for (unsigned i = 0; i < n; i++)
		info_field_out(sb, &f[i]);
	if (sb->json) {
		info_json_nodes(pool, sb);
		js_close(sb, '}');
	} else {
		info_text_nodes(pool, sb);
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* pa_report                                                               */
/* ---------------------------------------------------------------------- */

static const struct report_desc {
	const char *name;
	int (*write)(struct pa_pool *pool, struct sbuf *sb);
} reports[PA_REPORT_COUNT] = {
	[PA_REPORT_INFO] = { "info", report_info },
	[PA_REPORT_BUDDYINFO] = { "buddyinfo", report_buddyinfo },
	[PA_REPORT_PAGETYPEINFO] = { "pagetypeinfo", report_pagetypeinfo },
	[PA_REPORT_VMSTAT] = { "vmstat", report_vmstat },
	[PA_REPORT_UNUSABLE_INDEX] = { "unusable_index", report_unusable },
	[PA_REPORT_EXTFRAG_INDEX] = { "extfrag_index", report_extfrag },
	[PA_REPORT_ZONEINFO] = { "zoneinfo", report_zoneinfo },
	[PA_REPORT_LOCKSTAT] = { "lockstat", report_lockstat },
};

const char *pa_report_name(enum pa_report_kind kind)
{
	return (unsigned)kind < PA_REPORT_COUNT ? reports[kind].name : NULL;
}

int pa_report(struct pa_pool *pool, enum pa_report_kind kind, unsigned flags, char *buf, size_t len)
{
	if (!pool || (unsigned)kind >= PA_REPORT_COUNT || (flags & ~PA_REPORT_JSON) ||
	    (!buf && len))
		return -EINVAL;
	struct sbuf sb = { .buf = buf, .len = len, .json = flags & PA_REPORT_JSON };
	int ret = reports[kind].write(pool, &sb);
	if (ret) {
		if (len)
			buf[0] = '\0';
		return ret;
	}
	if (sb.json)
		sb_puts(&sb, "\n");
	return sb_finish(&sb);
}
