/* SPDX-License-Identifier: MIT */
/*
 * What the files of the statistics layer share: the string builder and JSON
 * writer (stats.c), the zone walks every report makes as /proc does, and one
 * writer per report (stats/<report>.c), which pa_report() dispatches to.
 * The counters themselves are one list in pool.h; their names are stats.c's.
 */
#ifndef PA_STATS_H
#define PA_STATS_H

#include "../zone.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------------- */
/* "stats.c"                                                               */
/* ---------------------------------------------------------------------- */

extern const char *const pa_zone_stat_names[PA_NR_ZONE_STATS];
extern const char *const pa_pool_stat_names[PA_NR_POOL_STATS];

/* A report being written: bounded, but counting on past the end (as snprintf). */
struct sbuf {
	char *buf;
	size_t len; /* capacity of buf */
	size_t pos; /* bytes the report needs so far; may run past len */
	bool json;  /* the report is JSON */
	bool comma; /* JSON: the next value at this level needs a comma first */
};

__attribute__((format(printf, 2, 3))) void stats_printf(struct sbuf *sb, const char *fmt, ...);
void stats_puts(struct sbuf *sb, const char *s);

/* JSON values; key NULL inside an array. open/close take '{' / '[' and '}' / ']'. */
void stats_js_name(struct sbuf *sb, const char *key);
void stats_js_open(struct sbuf *sb, const char *key, char bracket);
void stats_js_close(struct sbuf *sb, char bracket);
void stats_js_u64(struct sbuf *sb, const char *key, uint64_t v);
void stats_js_i64(struct sbuf *sb, const char *key, int64_t v);
void stats_js_null(struct sbuf *sb, const char *key);
/* A number kept in thousandths, written as a decimal: -1000 is -1.000. */
void stats_js_milli(struct sbuf *sb, const char *key, int64_t v);
/* A string, escaped. */
void stats_js_str(struct sbuf *sb, const char *key, const char *s);

/* Zone t of node nid when it has memory; /proc skips unpopulated zones. */
static inline struct pa_zone *stats_node_zone(const struct pa_pool *pool, unsigned nid, unsigned t)
{
	struct pa_zone *zone = pool->nodes[nid].zones[t];
	return zone && zone_populated(zone) ? zone : NULL;
}

static inline bool stats_node_has_memory(const struct pa_pool *pool, unsigned nid)
{
	for (unsigned t = 0; t < PA_ZONE_COUNT; t++)
		if (stats_node_zone(pool, nid, t))
			return true;
	return false;
}

static inline unsigned stats_nr_orders(const struct pa_pool *pool)
{
	return pool_max_order(pool) + 1;
}

/* Frames of the node that compaction holds isolated, by a walk over block heads. */
uint64_t stats_node_isolated(const struct pa_pool *pool, unsigned nid);

/* The zone lock's contended acquisitions and wait, summed over its call sites (lockstat.c). */
void stats_zone_lock_totals(struct pa_zone *zone, uint64_t *contended, uint64_t *wait_ns);

/* ---------------------------------------------------------------------- */
/* One writer per report; each returns 0 or -ENOMEM                        */
/* ---------------------------------------------------------------------- */

/* "buddyinfo.c": the reports with a row per zone and a cell per order, as data. */
struct order_report {
	const char *json_key; /* the per-zone array in JSON */
	int64_t (*cell)(const uint64_t *nr_free, unsigned orders, unsigned order);
	void (*text)(struct sbuf *sb, int64_t v);
	bool milli; /* the cells are thousandths */
};
int stats_order_report(struct pa_pool *pool, struct sbuf *sb, const struct order_report *r);
int stats_buddyinfo(struct pa_pool *pool, struct sbuf *sb);

/* "extfrag.c" */
int stats_unusable(struct pa_pool *pool, struct sbuf *sb);
int stats_extfrag(struct pa_pool *pool, struct sbuf *sb);

/* "pagetypeinfo.c" */
int stats_pagetypeinfo(struct pa_pool *pool, struct sbuf *sb);

/* "vmstat.c" (pa_vmstat_read() too) */
int stats_vmstat(struct pa_pool *pool, struct sbuf *sb);

/* "zoneinfo.c" */
int stats_zoneinfo(struct pa_pool *pool, struct sbuf *sb);

/* "lockstat.c" */
int stats_lockstat(struct pa_pool *pool, struct sbuf *sb);

/* "superblockinfo.c": per-region pageblocks and free frames */
int stats_superblockinfo(struct pa_pool *pool, struct sbuf *sb);

/* "info.c": the derived configuration */
int stats_info(struct pa_pool *pool, struct sbuf *sb);

#endif /* PA_STATS_H */
