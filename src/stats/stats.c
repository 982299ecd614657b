/* SPDX-License-Identifier: MIT */
/*
 * Statistics: the counter names, the string builder and JSON writer every
 * report writes through, the zone walks the reports share, and pa_report(),
 * which dispatches to one file per report beside this one: info.c, buddyinfo.c,
 * extfrag.c, pagetypeinfo.c, vmstat.c, zoneinfo.c, lockstat.c,
 * superblockinfo.c.
 *
 * How a report is made: the figures of each zone are copied under its lock
 * (a snapshot), then formatted with no lock held, through one bounded string
 * builder that keeps counting past the end of the buffer, so that
 * pa_report() answers like snprintf. Text and JSON come from the same
 * snapshot, and where the layouts agree (a row per zone, a cell per order;
 * a list of name/value pairs) from the same writer.
 */
#include "stats.h"

#include "../platform/platform.h"
#include "../memmap.h"

#include <limits.h>
#include <stdarg.h>

/* The counters' names, from the lists that make their fields (pool.h). */

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

void stats_printf(struct sbuf *sb, const char *fmt, ...)
{
	char *dst = NULL;
	size_t room = 0;
	if (sb->pos < sb->len) {
		dst = sb->buf + sb->pos;
		room = sb->len - sb->pos;
	}
	va_list ap;
	va_start(ap, fmt);
	int n = pa_vsnprintf(dst, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		sb->pos += (size_t)n;
}

void stats_puts(struct sbuf *sb, const char *s)
{
	stats_printf(sb, "%s", s);
}

/* Terminate the buffer and give the length the whole report needs. */
static int stats_finish(struct sbuf *sb)
{
	if (sb->len)
		sb->buf[sb->pos < sb->len ? sb->pos : sb->len - 1] = '\0';
	return sb->pos > INT_MAX ? -EOVERFLOW : (int)sb->pos;
}

/* Start a value: a comma after its sibling, then its key inside an object. */
void stats_js_name(struct sbuf *sb, const char *key)
{
	if (sb->comma)
		stats_puts(sb, ",");
	if (key)
		stats_printf(sb, "\"%s\":", key);
	sb->comma = true;
}

void stats_js_open(struct sbuf *sb, const char *key, char bracket)
{
	stats_js_name(sb, key);
	stats_printf(sb, "%c", bracket);
	sb->comma = false;
}

void stats_js_close(struct sbuf *sb, char bracket)
{
	stats_printf(sb, "%c", bracket);
	sb->comma = true;
}

void stats_js_u64(struct sbuf *sb, const char *key, uint64_t v)
{
	stats_js_name(sb, key);
	stats_printf(sb, "%" PRIu64, v);
}

void stats_js_i64(struct sbuf *sb, const char *key, int64_t v)
{
	stats_js_name(sb, key);
	stats_printf(sb, "%" PRId64, v);
}

void stats_js_null(struct sbuf *sb, const char *key)
{
	stats_js_name(sb, key);
	stats_puts(sb, "null");
}

/* A number kept in thousandths, written as a decimal: -1000 is -1.000. */
void stats_js_milli(struct sbuf *sb, const char *key, int64_t v)
{
	stats_js_name(sb, key);
	uint64_t a = v < 0 ? (uint64_t)-v : (uint64_t)v;
	stats_printf(sb, "%s%" PRIu64 ".%03u", v < 0 ? "-" : "", a / 1000, (unsigned)(a % 1000));
}

/* A string, escaped (a backing file path may hold anything). */
void stats_js_str(struct sbuf *sb, const char *key, const char *s)
{
	stats_js_name(sb, key);
	stats_puts(sb, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			stats_printf(sb, "\\%c", c);
		else if (c < 0x20)
			stats_printf(sb, "\\u%04x", c);
		else
			stats_printf(sb, "%c", c);
	}
	stats_puts(sb, "\"");
}

/* ---------------------------------------------------------------------- */
/* Walking the zones as /proc does                                         */
/* ---------------------------------------------------------------------- */

/* Frames of the node that compaction holds isolated, by a walk over block heads. */
uint64_t stats_node_isolated(const struct pa_pool *pool, unsigned nid)
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

/* ---------------------------------------------------------------------- */
/* pa_report                                                               */
/* ---------------------------------------------------------------------- */

static const struct report_desc {
	const char *name;
	int (*write)(struct pa_pool *pool, struct sbuf *sb);
} reports[PA_REPORT_COUNT] = {
	[PA_REPORT_INFO] = { "info", stats_info },
	[PA_REPORT_BUDDYINFO] = { "buddyinfo", stats_buddyinfo },
	[PA_REPORT_PAGETYPEINFO] = { "pagetypeinfo", stats_pagetypeinfo },
	[PA_REPORT_VMSTAT] = { "vmstat", stats_vmstat },
	[PA_REPORT_UNUSABLE_INDEX] = { "unusable_index", stats_unusable },
	[PA_REPORT_EXTFRAG_INDEX] = { "extfrag_index", stats_extfrag },
	[PA_REPORT_ZONEINFO] = { "zoneinfo", stats_zoneinfo },
	[PA_REPORT_LOCKSTAT] = { "lockstat", stats_lockstat },
	[PA_REPORT_SUPERBLOCKINFO] = { "superblockinfo", stats_superblockinfo },
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
		stats_puts(&sb, "\n");
	return stats_finish(&sb);
}
