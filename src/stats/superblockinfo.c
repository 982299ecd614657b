/* SPDX-License-Identifier: MIT */
/*
 * superblockinfo: one row per superblock (superblock.c), its span, zone,
 * pageblocks per migratetype, free frames and whether it is tainted. The
 * columns are one table, so that the text and the JSON cannot drift; the
 * rows come from pa_superblock_info(), as an embedder would read them.
 */
#include "stats.h"

#include "../platform/platform.h"
#include "../pageblock.h"
#include "../zone.h"

struct sb_column {
	const char *name; /* text header and JSON key */
	int width;
	uint64_t (*get)(const struct pa_superblock_info *s);
};

static uint64_t col_start(const struct pa_superblock_info *s)
{
	return s->start_pfn;
}

static uint64_t col_end(const struct pa_superblock_info *s)
{
	return s->start_pfn + s->nr_frames;
}

static uint64_t col_free(const struct pa_superblock_info *s)
{
	return s->free;
}

static uint64_t col_polluted(const struct pa_superblock_info *s)
{
	return s->polluted;
}

static const struct sb_column columns[] = {
	{ "start_pfn", 12, col_start },
	{ "end_pfn", 12, col_end },
	{ "free", 10, col_free },
	{ "polluted", 9, col_polluted },
};
#define NR_COLUMNS (sizeof columns / sizeof columns[0])

/* The pageblock types a row shows: every type a pageblock can have (Isolate is a state). */
#define NR_ROW_TYPES PA_MT_ISOLATE

static void text_header(struct sbuf *sb)
{
	stats_printf(sb, "%6s %4s %-8s", "region", "node", "zone");
	for (unsigned i = 0; i < NR_COLUMNS; i++)
		stats_printf(sb, " %*s", columns[i].width, columns[i].name);
	for (unsigned mt = 0; mt < NR_ROW_TYPES; mt++)
		stats_printf(sb, " %11s", pa_migratetype_names[mt]);
	stats_printf(sb, " %s\n", "tainted");
}

static void text_row(struct sbuf *sb, uint64_t index, const struct pa_superblock_info *s)
{
	stats_printf(sb, "%6" PRIu64 " %4d %-8s", index, s->node,
	             s->node >= 0 ? zone_name(s->zone) : "-");
	for (unsigned i = 0; i < NR_COLUMNS; i++)
		stats_printf(sb, " %*" PRIu64, columns[i].width, columns[i].get(s));
	for (unsigned mt = 0; mt < NR_ROW_TYPES; mt++)
		stats_printf(sb, " %11" PRIu64, s->pageblocks[mt]);
	stats_printf(sb, " %s\n", s->tainted ? "yes" : "no");
}

static void json_row(struct sbuf *sb, uint64_t index, const struct pa_superblock_info *s)
{
	stats_js_open(sb, NULL, '{');
	stats_js_u64(sb, "index", index);
	stats_js_i64(sb, "node", s->node);
	if (s->node >= 0)
		stats_js_str(sb, "zone", zone_name(s->zone));
	else
		stats_js_null(sb, "zone");
	for (unsigned i = 0; i < NR_COLUMNS; i++)
		stats_js_u64(sb, columns[i].name, columns[i].get(s));
	stats_js_open(sb, "pageblocks", '{');
	for (unsigned mt = 0; mt < NR_ROW_TYPES; mt++)
		stats_js_u64(sb, pa_migratetype_names[mt], s->pageblocks[mt]);
	stats_js_close(sb, '}');
	stats_js_name(sb, "tainted");
	stats_puts(sb, s->tainted ? "true" : "false");
	stats_js_close(sb, '}');
}

int stats_superblockinfo(struct pa_pool *pool, struct sbuf *sb)
{
	uint64_t n = pa_superblock_count(pool), tainted = 0;
	struct pa_superblock_info s;
	for (uint64_t i = 0; i < n; i++)
		tainted += pa_superblock_info(pool, i, &s) == 0 && s.tainted;
	unsigned order = pool->cfg.superblock_order;
	if (sb->json) {
		stats_js_open(sb, NULL, '{');
		stats_js_u64(sb, "superblock_order", order);
		stats_js_u64(sb, "region_frames", order ? 1ull << order : 0);
		stats_js_u64(sb, "nr_regions", n);
		stats_js_u64(sb, "tainted", tainted);
		stats_js_open(sb, "regions", '[');
	} else if (!n) {
		stats_puts(sb, "superblocks off (superblock_order=0)\n");
		return 0;
	} else {
		stats_printf(sb,
		             "superblock_order %u: %" PRIu64 " regions of %" PRIu64
		             " frames, %" PRIu64 " tainted\n",
		             order, n, (uint64_t)1 << order, tainted);
		text_header(sb);
	}
	for (uint64_t i = 0; i < n; i++) {
		if (pa_superblock_info(pool, i, &s) != 0)
			continue;
		if (sb->json)
			json_row(sb, i, &s);
		else
			text_row(sb, i, &s);
	}
	if (sb->json) {
		stats_js_close(sb, ']');
		stats_js_close(sb, '}');
	}
	return 0;
}
