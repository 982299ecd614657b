/* SPDX-License-Identifier: MIT */
/*
 * `pagealloc map`: the pool drawn one cell per pageblock. The colour is the
 * pageblock's migratetype; its strength is how much of the block is in use
 * (pale: free, full colour: allocated); frames on per-CPU lists show as a
 * yellow bar in the cell, holes as black. Rows break at regions, whose grid
 * is drawn: the superblocks (superblock_order) with whether each is tainted,
 * or 1 GiB without them; zone, node and CMA boundaries are marked and named.
 * As SVG (--svg FILE) or as text, one character per pageblock.
 */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char *const zone_names[PA_ZONE_COUNT] = { "DMA", "DMA32", "Normal", "Movable" };
static const char *const mt_names[PA_MT_COUNT] = { "Unmovable",  "Movable", "Reclaimable",
	                                           "HighAtomic", "CMA",     "Isolate" };
static const char mt_letters[PA_MT_COUNT] = { 'u', 'm', 'r', 'h', 'c', 'i' };
static const char *const mt_colours[PA_MT_COUNT] = { "#d62728", "#1f77b4", "#2ca02c",
	                                             "#ff7f0e", "#9467bd", "#7f7f7f" };

/* The pool as the map needs it. */
struct map {
	struct pa_config cfg;
	uint64_t nr;                   /* pageblocks */
	struct pa_pageblock_info *pb;  /* [nr] */
	uint64_t region;               /* pageblocks per region (at least 1) */
	struct pa_superblock_info *sb; /* [pageblock / region] when superblocks are on, else NULL */
	uint64_t nr_sb;
	unsigned cols; /* pageblocks per row */
	struct pa_cma_info cma[8];
	unsigned nr_cma;
};

static int map_load(struct pa_pool *pool, struct map *m)
{
	pa_get_config(pool, &m->cfg);
	m->nr = pa_pageblock_count(pool);
	m->pb = calloc(m->nr ? m->nr : 1, sizeof *m->pb);
	if (!m->pb)
		return -ENOMEM;
	for (uint64_t i = 0; i < m->nr; i++)
		if (pa_pageblock_info(pool, i, &m->pb[i]))
			return -EIO;
	unsigned shift = m->cfg.page_shift + m->cfg.pageblock_order;
	m->region = shift >= 30 ? 1 : 1ull << (30 - shift);
	if (m->cfg.superblock_order) {
		m->region = 1ull << (m->cfg.superblock_order - m->cfg.pageblock_order);
		m->nr_sb = pa_superblock_count(pool);
		m->sb = calloc(m->nr_sb ? m->nr_sb : 1, sizeof *m->sb);
		if (!m->sb)
			return -ENOMEM;
		for (uint64_t i = 0; i < m->nr_sb; i++)
			if (pa_superblock_info(pool, i, &m->sb[i]))
				return -EIO;
	}
	m->cols = m->region < 64 ? (unsigned)m->region : 64;
	m->nr_cma = pa_cma_count(pool);
	if (m->nr_cma > 8)
		m->nr_cma = 8;
	for (unsigned i = 0; i < m->nr_cma; i++)
		pa_cma_get(pool, i, &m->cma[i]);
	return 0;
}

/* Frames in use: allocated, reserved at boot, or held by the pool for its own work. */
static uint64_t in_use(const struct pa_pageblock_info *b)
{
	return b->allocated + b->other + b->reserved;
}

/* Zone or node changes between pageblock i - 1 and i. */
static bool zone_starts(const struct map *m, uint64_t i)
{
	const struct pa_pageblock_info *b = &m->pb[i];
	if (b->node < 0)
		return false;
	if (i == 0)
		return true;
	const struct pa_pageblock_info *a = &m->pb[i - 1];
	return a->node != b->node || a->zone != b->zone;
}

/* A CMA area starts (1) or ends (-1) at pageblock i, else 0; *area gets which. */
static int cma_edge(const struct map *m, uint64_t i, unsigned *area)
{
	pa_pfn_t pfn = i << m->cfg.pageblock_order;
	for (unsigned a = 0; a < m->nr_cma; a++) {
		*area = a;
		if (pfn == m->cma[a].start_pfn)
			return 1;
		if (pfn == m->cma[a].start_pfn + m->cma[a].nr_pages)
			return -1;
	}
	return 0;
}

static double gib(const struct map *m, uint64_t pageblock)
{
	return (double)((pageblock << m->cfg.pageblock_order) << m->cfg.page_shift) /
	       (double)(1ull << 30);
}

/* ---------------------------------------------------------------------- */
/* Text                                                                    */
/* ---------------------------------------------------------------------- */

/*
 * One character: the type's letter, upper case when at least half the
 * block is in use, lower case when less; '.' for a wholly free movable
 * block, ':' when at least half of it is known zero (cleared memory); 'p'
 * when most of it sits on per-CPU lists; ' ' for a hole.
 */
static char text_cell(const struct pa_pageblock_info *b)
{
	if (b->hole == b->nr_frames)
		return ' ';
	if (b->pcp * 2 > b->nr_frames)
		return 'p';
	char c = mt_letters[b->mt < PA_MT_COUNT ? b->mt : PA_MT_ISOLATE];
	if (in_use(b) * 2 >= b->nr_frames - b->hole)
		return (char)(c - 'a' + 'A');
	if (!in_use(b) && b->mt == PA_MT_MOVABLE)
		return b->cleared * 2 >= b->nr_frames - b->hole ? ':' : '.';
	return c;
}

static void text_marks(const struct map *m, uint64_t i, FILE *out)
{
	unsigned area;
	int edge = cma_edge(m, i, &area);
	if (zone_starts(m, i))
		fprintf(out, "-- node %d, zone %s, from %.3f GiB (pfn %" PRIu64 ")\n",
		        m->pb[i].node, zone_names[m->pb[i].zone], gib(m, i), m->pb[i].start_pfn);
	if (edge)
		fprintf(out, "-- %s %s at %.3f GiB (pfn %" PRIu64 ")\n", m->cma[area].name,
		        edge > 0 ? "starts" : "ends", gib(m, i), m->pb[i].start_pfn);
}

/* The line above a region: its offset, and with superblocks whether it is tainted. */
static void text_region(const struct map *m, uint64_t i, FILE *out)
{
	if (!m->sb) {
		fprintf(out, "== %.0f GiB\n", gib(m, i));
		return;
	}
	const struct pa_superblock_info *s = &m->sb[i / m->region];
	fprintf(out, "== region %" PRIu64 " at %.3f GiB: ", i / m->region, gib(m, i));
	if (s->tainted)
		fprintf(out, "tainted, %" PRIu64 " polluting pageblocks\n", s->polluted);
	else
		fprintf(out, "clean\n");
}

static void map_text(const struct map *m, FILE *out)
{
	fprintf(out,
	        "one character per pageblock (%" PRIu64 " KiB): u unmovable, m movable, "
	        "r reclaimable, h highatomic, c CMA, i isolated;\nUPPER CASE at least half in "
	        "use, lower case less, '.' a free movable block (':' mostly cleared), p mostly on "
	        "per-CPU lists, ' ' a hole\n",
	        ((uint64_t)1 << (m->cfg.pageblock_order + m->cfg.page_shift)) >> 10);
	uint64_t col = 0;
	for (uint64_t i = 0; i < m->nr; i++) {
		unsigned area;
		bool mark = zone_starts(m, i) || cma_edge(m, i, &area);
		bool region = i % m->region == 0;
		if (i && (mark || region || col == m->cols)) {
			fputc('\n', out);
			col = 0;
		}
		if (region)
			text_region(m, i, out);
		if (mark)
			text_marks(m, i, out);
		if (col == 0)
			fprintf(out, "%9.3f GiB  ", gib(m, i));
		fputc(text_cell(&m->pb[i]), out);
		col++;
	}
	fputc('\n', out);
	uint64_t free = 0, cleared = 0;
	for (uint64_t i = 0; i < m->nr; i++) {
		free += m->pb[i].free;
		cleared += m->pb[i].cleared;
	}
	fprintf(out,
	        "free: %" PRIu64 " frames, %" PRIu64 " cleared (known zero), %" PRIu64 " dirty\n",
	        free, cleared, free - cleared);
}

/* ---------------------------------------------------------------------- */
/* SVG                                                                     */
/* ---------------------------------------------------------------------- */

#define SVG_LEFT   90 /* room for the row labels */
#define SVG_TOP    60 /* title and legend */
#define SVG_RIGHT  300
#define SVG_BOTTOM 30

struct svg {
	const struct map *m;
	FILE *f;
	unsigned cell;
	uint64_t rows;
	uint64_t label_row; /* labels of one row go side by side */
	unsigned label_x;
};

/* The colour of the type, mixed with white by how much of the block is free. */
static void svg_fill(const struct pa_pageblock_info *b, char *buf, size_t len)
{
	unsigned r, g, bl;
	sscanf(mt_colours[b->mt < PA_MT_COUNT ? b->mt : PA_MT_ISOLATE] + 1, "%2x%2x%2x", &r, &g,
	       &bl);
	uint64_t present = b->nr_frames - b->hole;
	double used = present ? (double)in_use(b) / (double)present : 0;
	double k = 0.18 + 0.82 * used; /* a free block keeps a tint of its type */
	snprintf(buf, len, "rgb(%u,%u,%u)", (unsigned)(255 - (255 - r) * k),
	         (unsigned)(255 - (255 - g) * k), (unsigned)(255 - (255 - bl) * k));
}

static void svg_cell(struct svg *s, uint64_t i)
{
	const struct pa_pageblock_info *b = &s->m->pb[i];
	unsigned x = SVG_LEFT + (unsigned)(i % s->m->cols) * s->cell;
	uint64_t y = SVG_TOP + (i / s->m->cols) * s->cell;
	char fill[32];
	if (b->hole == b->nr_frames)
		snprintf(fill, sizeof fill, "black");
	else
		svg_fill(b, fill, sizeof fill);
	fprintf(s->f, "<rect x=\"%u\" y=\"%" PRIu64 "\" width=\"%u\" height=\"%u\" fill=\"%s\"/>\n",
	        x, y, s->cell, s->cell, fill);
	if (b->pcp) {
		double w = (double)s->cell * (double)b->pcp / (double)b->nr_frames;
		fprintf(s->f,
		        "<rect x=\"%u\" y=\"%" PRIu64 "\" width=\"%.2f\" height=\"%u\" "
		        "fill=\"#ffd700\"/>\n",
		        x, y + s->cell - s->cell / 3, w < 1 ? 1 : w, s->cell / 3);
	}
}

/*
 * A boundary before pageblock i, traced between the blocks before it and
 * from it on (along the top of its row from i, down its left edge, along
 * the top of the next row up to i), and named at the row's end.
 */
static void svg_mark(struct svg *s, uint64_t i, const char *colour, const char *label)
{
	unsigned x = SVG_LEFT + (unsigned)(i % s->m->cols) * s->cell;
	unsigned left = SVG_LEFT, right = SVG_LEFT + s->m->cols * s->cell;
	uint64_t row = i / s->m->cols, y = SVG_TOP + row * s->cell, y2 = y + s->cell;
	fprintf(s->f,
	        "<polyline points=\"%u,%" PRIu64 " %u,%" PRIu64 " %u,%" PRIu64 " %u,%" PRIu64 "\" "
	        "fill=\"none\" stroke=\"%s\" stroke-width=\"2.5\"/>\n",
	        right, y, x, y, x, y2, left, y2, colour);
	if (row != s->label_row || !s->label_x) {
		s->label_row = row;
		s->label_x = right + 8;
	}
	fprintf(s->f, "<text x=\"%u\" y=\"%" PRIu64 "\" fill=\"%s\">%s</text>\n", s->label_x,
	        y + 10, colour, label);
	s->label_x += 7 * (unsigned)strlen(label) + 12;
}

static void svg_marks(struct svg *s, uint64_t i)
{
	char label[96];
	unsigned area;
	int edge = cma_edge(s->m, i, &area);
	if (zone_starts(s->m, i)) {
		snprintf(label, sizeof label, "node %d %s", s->m->pb[i].node,
		         zone_names[s->m->pb[i].zone]);
		svg_mark(s, i, "black", label);
	}
	if (edge) {
		snprintf(label, sizeof label, "%s %s", s->m->cma[area].name,
		         edge > 0 ? "starts" : "ends");
		svg_mark(s, i, mt_colours[PA_MT_CMA], label);
	}
}

/*
 * The region grid: a line above each region's first row, labelled with its
 * offset; with superblocks a tainted region's line and label are red.
 */
static void svg_grid(struct svg *s)
{
	unsigned right = SVG_LEFT + s->m->cols * s->cell;
	for (uint64_t i = 0; i < s->m->nr; i += s->m->region) {
		uint64_t y = SVG_TOP + (i / s->m->cols) * s->cell;
		bool tainted = s->m->sb && s->m->sb[i / s->m->region].tainted;
		const char *colour = tainted ? mt_colours[PA_MT_UNMOVABLE] : "#333";
		fprintf(s->f,
		        "<line x1=\"%u\" y1=\"%" PRIu64 "\" x2=\"%u\" y2=\"%" PRIu64 "\" "
		        "stroke=\"%s\" stroke-width=\"%u\"/>\n"
		        "<text x=\"%u\" y=\"%" PRIu64 "\" text-anchor=\"end\" fill=\"%s\">",
		        SVG_LEFT - 4, y, right, y, colour, tainted ? 2 : 1, SVG_LEFT - 8, y + 10,
		        colour);
		fprintf(s->f, gib(s->m, s->m->region) >= 1 ? "%.0f GiB" : "%.3f GiB", gib(s->m, i));
		fprintf(s->f, "%s</text>\n", tainted ? " tainted" : "");
	}
}

static void svg_legend(struct svg *s)
{
	fprintf(s->f,
	        "<text x=\"10\" y=\"18\" font-size=\"14\" font-weight=\"bold\">pagealloc map: "
	        "%" PRIu64 " pageblocks of %" PRIu64 " KiB, %u per row, %s grid</text>\n",
	        s->m->nr, ((uint64_t)1 << (s->m->cfg.pageblock_order + s->m->cfg.page_shift)) >> 10,
	        s->m->cols, s->m->sb ? "superblock (red: tainted)" : "1 GiB");
	unsigned x = 10;
	for (unsigned t = 0; t < PA_MT_COUNT; t++) {
		fprintf(s->f,
		        "<rect x=\"%u\" y=\"28\" width=\"12\" height=\"12\" fill=\"%s\"/>"
		        "<text x=\"%u\" y=\"38\">%s</text>\n",
		        x, mt_colours[t], x + 16, mt_names[t]);
		x += 16 + 8 * (unsigned)strlen(mt_names[t]) + 10;
	}
	fprintf(s->f,
	        "<rect x=\"%u\" y=\"28\" width=\"12\" height=\"12\" fill=\"#ffd700\"/>"
	        "<text x=\"%u\" y=\"38\">per-CPU lists</text>\n"
	        "<text x=\"10\" y=\"54\" fill=\"#555\">pale: free, full colour: allocated; "
	        "black: hole; thick lines: zone, node and CMA boundaries</text>\n",
	        x, x + 16);
}

static int map_svg(const struct map *m, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "pagealloc map: %s: %s\n", path, strerror(errno));
		return -1;
	}
	struct svg s = { .m = m, .f = f, .cell = m->nr > 16384 ? 5 : 10 };
	s.rows = (m->nr + m->cols - 1) / m->cols;
	unsigned width = SVG_LEFT + m->cols * s.cell + SVG_RIGHT;
	if (width < 760)
		width = 760;
	fprintf(f,
	        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%" PRIu64 "\" "
	        "font-family=\"sans-serif\" font-size=\"11\">\n"
	        "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
	        width, SVG_TOP + s.rows * s.cell + SVG_BOTTOM);
	svg_legend(&s);
	for (uint64_t i = 0; i < m->nr; i++)
		svg_cell(&s, i);
	svg_grid(&s);
	for (uint64_t i = 0; i < m->nr; i++)
		svg_marks(&s, i);
	fprintf(f, "</svg>\n");
	if (fclose(f)) {
		fprintf(stderr, "pagealloc map: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

int cli_map(struct pa_pool *pool, const char *svg_path, FILE *out)
{
	struct map m = { 0 };
	int ret = map_load(pool, &m);
	if (ret)
		fprintf(stderr, "pagealloc map: cannot read the pageblocks: %s\n", strerror(-ret));
	else if (svg_path)
		ret = map_svg(&m, svg_path);
	else
		map_text(&m, out);
	free(m.pb);
	free(m.sb);
	return ret ? -1 : 0;
}
