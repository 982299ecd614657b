/* SPDX-License-Identifier: MIT */
/*
 * debugfs extfrag/unusable_index and extfrag/extfrag_index: Linux's
 * fragmentation indexes per zone and order, written through the per-order
 * report writer of buddyinfo.c.
 */
#include "stats.h"

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

/* As Linux prints an index: integer part, then the thousandths. */
static void text_unusable(struct sbuf *sb, int64_t v)
{
	stats_printf(sb, "%d.%03d ", (int)(v / 1000), (int)(v % 1000));
}

static void text_extfrag(struct sbuf *sb, int64_t v)
{
	stats_printf(sb, "%2d.%03d ", (int)(v / 1000), (int)(v % 1000));
}

static const struct order_report unusable_report = { "unusable_index", cell_unusable, text_unusable,
	                                             true };
static const struct order_report extfrag_report = { "extfrag_index", cell_extfrag, text_extfrag,
	                                            true };

int stats_unusable(struct pa_pool *pool, struct sbuf *sb)
{
	return stats_order_report(pool, sb, &unusable_report);
}

int stats_extfrag(struct pa_pool *pool, struct sbuf *sb)
{
	return stats_order_report(pool, sb, &extfrag_report);
}
