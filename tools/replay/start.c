/* SPDX-License-Identifier: MIT */
/*
 * The kernel's starting state, and the memory that was in use then.
 *
 * The first snapshot says how many free blocks of each order and type every
 * zone held and how many pageblocks each type had. The pool is brought there
 * in three steps, with the per-CPU lists and the watermarks off so that every
 * frame can be placed:
 *   1. fill: allocate every frame, as movable blocks as large as possible;
 *   2. retype: for each unmovable or reclaimable pageblock the kernel had,
 *      free one pageblock and allocate it back with that type, which claims
 *      it (Linux's fallback rules);
 *   3. free: for each (order, type), free that many blocks inside pageblocks
 *      of the type, always keeping a block's buddy allocated, so that none
 *      merge and the free lists come out as the kernel's; first where the
 *      trace shows the kernel's memory free then (a frame's first event an
 *      allocation) and none in use (a first event a free) nor on a CPU's
 *      list (a first event a drain), then where it shows neither, then so
 *      in pageblocks of the types Linux falls back to, then anywhere.
 * Then each CPU's lists get the kernel's count (fill_pcp()).
 * What stays allocated is "pre-trace" memory. Kernel frees of blocks that no
 * traced allocation covers come out of it (rp_free_pre), at the kernel's pfn
 * where the starting state kept it there.
 */
#define _GNU_SOURCE
#include "run.h"

#include <stdlib.h>
#include <string.h>

#define PB_ORDER 9 /* the pageblock order of every x86-64 trace */

/* ---------------------------------------------------------------------- */
/* Pre-trace blocks                                                        */
/* ---------------------------------------------------------------------- */

/* The head of the pre-trace block covering pool pfn p, its order in *order; UINT64_MAX if none. */
static uint64_t pre_head(const struct rp_ctx *c, uint64_t p, unsigned *order)
{
	for (unsigned o = 0; o <= c->max_order; o++) {
		uint64_t h = p & ~((1ull << o) - 1);
		if (c->pre[h] && c->pre[h] - 1u >= o) {
			*order = c->pre[h] - 1u;
			return h;
		}
	}
	return UINT64_MAX;
}

static bool pre_split(struct rp_ctx *c, uint64_t h, unsigned from, unsigned to)
{
	if (pa_split_folio(c->pool, pa_pfn_to_page(c->pool, h), from, to) != 0) {
		c->map_errors++;
		return false;
	}
	for (uint64_t i = 0; i < (1ull << from); i += 1ull << to)
		c->pre[h + i] = (uint8_t)(to + 1);
	return true;
}

static void pre_free(struct rp_ctx *c, uint64_t p, unsigned order)
{
	struct pa_page *page = pa_pfn_to_page(c->pool, p);
	c->pre[p] = 0;
	if (c->pre_list < 0 ||
	    pa_pcp_free_on(c->pool, page, order, c->cpu, (unsigned)c->pre_list) != 0)
		pa_free_pages(c->pool, page, order);
}

/* Free the aligned (p, order) out of the pre-trace block at h of order r >= order. */
static void pre_take(struct rp_ctx *c, uint64_t h, unsigned r, uint64_t p, unsigned order)
{
	if (r > order && !pre_split(c, h, r, order))
		return;
	pre_free(c, p, order);
}

/* The zone of st holding pfn k, or -1. */
static int state_zone(const struct rp_state *st, uint64_t k)
{
	for (unsigned z = 0; z < st->nr_zones && z < RP_MAX_ZONES; z++)
		if (k >= st->zone[z].start_pfn && k < st->zone[z].end_pfn)
			return (int)z;
	return -1;
}

/* The kernel zone holding pfn k (index into the first snapshot), or -1. */
static int kernel_zone(const struct rp_ctx *c, uint64_t k)
{
	return c->m->nr_snapshots ? state_zone(&c->m->snap[0].kernel, k) : -1;
}

/*
 * What the trace says of each frame at the start: one whose first event is
 * an allocation was free then (in the buddy or on a CPU's list), one whose
 * first event is a free was in use, one first drained (RP_STOCK) was on a
 * CPU's list.
 */
struct start_evidence {
	uint8_t *free, *used, *listed; /* bit per frame */
	const struct rp_event **stock; /* the RP_STOCK events, in the trace's order */
	size_t nr_stock;
	unsigned pass; /* 0: free frames, none used or listed; 1: none used or listed; 2: any */
};

/* Mark [lo, hi) seen; of it, what was not seen before also in `to` (if any). */
static void mark_first(uint8_t *seen, uint8_t *to, uint64_t lo, uint64_t hi)
{
	for (uint64_t k = lo; k < hi;) {
		if ((k & 7) == 0 && k + 8 <= hi) { /* eight frames at once */
			uint8_t fresh = (uint8_t)~seen[k >> 3];
			seen[k >> 3] = 0xff;
			if (to)
				to[k >> 3] |= fresh;
			k += 8;
		} else {
			if (!rp_bit(seen, k) && to)
				rp_set_bit(to, k);
			rp_set_bit(seen, k++);
		}
	}
}

static void evidence_read(const struct rp_ctx *c, struct start_evidence *e)
{
	uint64_t bytes = c->nr_frames / 8 + 1;
	uint8_t *seen = calloc(bytes, 1);
	e->free = calloc(bytes, 1);
	e->used = calloc(bytes, 1);
	e->listed = calloc(bytes, 1);
	e->stock = NULL;
	e->nr_stock = 0;
	size_t cap = 0;
	for (size_t i = 0; seen && e->free && e->used && e->listed && i < c->trace->nr; i++) {
		const struct rp_event *ev = rp_pass_event(c->trace, i);
		if (ev->type == RP_STOCK && ev->pfn + (1ull << ev->order) <= c->nr_frames) {
			if (e->nr_stock == cap) {
				const struct rp_event **grown = realloc(
				        e->stock, (cap = cap ? cap * 2 : 256) * sizeof *grown);
				if (!grown)
					break;
				e->stock = grown;
			}
			e->stock[e->nr_stock++] = ev;
			for (uint64_t k = ev->pfn; k < ev->pfn + (1ull << ev->order); k++)
				rp_set_bit(seen, k), rp_set_bit(e->listed, k);
			continue;
		}
		bool alloc = ev->type == RP_ALLOC, isolate = ev->type == RP_ISOLATE_FREE;
		if (!alloc && !isolate &&
		    (ev->type != RP_FREE || RP_FREE_KIND(ev->arg) == RP_FREE_UNUSED))
			continue; /* compaction's unused targets were free pages it had taken */
		/*
		 * Compaction's free scanner takes pages without an event of their
		 * own, and their frees would read as memory in use: a range it
		 * scanned says nothing, either way.
		 */
		uint64_t end = isolate ? ev->arg : ev->pfn + (1ull << ev->order);
		mark_first(seen,
		           isolate ? NULL :
		           alloc   ? e->free :
		                     e->used,
		           ev->pfn, end < c->nr_frames ? end : c->nr_frames);
	}
	free(seen);
}

static void evidence_free(struct start_evidence *e)
{
	free(e->free), free(e->used), free(e->listed), free(e->stock);
}

/* Is any bit of [lo, hi) set? 64 at a time where whole words lie inside. */
static bool bits_any(const uint8_t *bits, uint64_t lo, uint64_t hi)
{
	for (; lo < hi && (lo & 63); lo++)
		if (rp_bit(bits, lo))
			return true;
	for (; lo + 64 <= hi; lo += 64) {
		uint64_t w;
		memcpy(&w, bits + (lo >> 3), sizeof w);
		if (w)
			return true;
	}
	for (; lo < hi; lo++)
		if (rp_bit(bits, lo))
			return true;
	return false;
}

/* May a kernel free block go at [p, p + 2^order) on this pass? */
static bool evidence_allows(const struct start_evidence *e, uint64_t p, unsigned order)
{
	if (!e || e->pass >= 2 || !e->free || !e->used || !e->listed)
		return true;
	uint64_t end = p + (1ull << order);
	return !bits_any(e->used, p, end) && !bits_any(e->listed, p, end) &&
	       (e->pass == 1 || bits_any(e->free, p, end));
}

/*
 * A pre-trace block of at least order in the kernel zone `zone`, in a
 * pageblock of type mt (pbtype[]) unless mt < 0, searched round from a
 * cursor: freed, it lands on that type's lists.
 */
static bool pre_free_where(struct rp_ctx *c, int zone, unsigned order, int mt,
                           const uint8_t *pbtype, uint64_t *cursor)
{
	uint64_t n = c->nr_frames, p = *cursor % n;
	uint8_t *miss = mt < 0 && zone >= -1 && zone < RP_MAX_ZONES ? &c->pre_miss[zone + 1] : NULL;
	if (miss && *miss && order + 1 >= *miss)
		return false;
	for (uint64_t seen = 0; seen < n;) {
		unsigned r = c->pre[p] ? c->pre[p] - 1u : 0;
		uint64_t step = c->pre[p] ? 1ull << r : 1;
		if (c->pre[p] && r >= order && kernel_zone(c, p) == zone &&
		    (mt < 0 || pbtype[p >> PB_ORDER] == mt)) {
			pre_take(c, p, r, p, order);
			*cursor = p;
			return true;
		}
		seen += step;
		p = (p + step) % n;
	}
	if (miss && (!*miss || order + 1 < *miss))
		*miss = (uint8_t)(order + 1);
	return false;
}

/* Any pre-trace block of at least order in k's zone. */
static bool pre_free_anywhere(struct rp_ctx *c, uint64_t k, unsigned order)
{
	return pre_free_where(c, kernel_zone(c, k), order, -1, NULL, &c->pre_cursor);
}

enum rp_pre_found rp_free_pre(struct rp_ctx *c, uint64_t k, unsigned order)
{
	unsigned r;
	uint64_t h = k < c->nr_frames ? pre_head(c, k, &r) : UINT64_MAX;
	if (h != UINT64_MAX && r >= order && (k & ((1ull << order) - 1)) == 0) {
		pre_take(c, h, r, k, order);
		return RP_PRE_AT_PFN;
	}
	return pre_free_anywhere(c, k, order) ? RP_PRE_ELSEWHERE : RP_PRE_NONE;
}

/* Is pool pfn p in a movable (or CMA) pageblock? */
static bool movable_block(const struct rp_ctx *c, uint64_t p)
{
	int mt = pa_pfn_migratetype(c->pool, p);
	return mt == PA_MT_MOVABLE || mt == PA_MT_CMA;
}

static struct rp_moved *moved_of(struct rp_ctx *c, uint64_t pfn, unsigned order)
{
	int zone = kernel_zone(c, pfn);
	return order < RP_MOVED_ORDERS ? &c->moved_q[zone + 1][order] : NULL;
}

void rp_queue_moved(struct rp_ctx *c, uint32_t ppfn, unsigned order)
{
	struct rp_moved *m = moved_of(c, ppfn, order);
	if (!m)
		return;
	if (m->tail == m->cap) {
		if (m->head) { /* what was given back makes room */
			memmove(m->pfn, m->pfn + m->head, (m->tail - m->head) * sizeof *m->pfn);
			m->tail -= m->head, m->head = 0;
		} else {
			size_t cap = m->cap ? 2 * m->cap : 1024;
			uint32_t *grown = realloc(m->pfn, cap * sizeof *grown);
			if (!grown)
				return; /* found as pre-trace memory, then */
			m->pfn = grown, m->cap = cap;
		}
	}
	m->pfn[m->tail++] = ppfn;
}

/*
 * A free of a page the kernel's compaction moved one to: the moved memory
 * goes, not memory allocated before tracing, which the kernel still has.
 * Which of the moved blocks the trace cannot say (the page it moved to has
 * no line); the oldest moved of that order in k's kernel zone, as Linux's
 * migration puts the new page at the young end of its LRU list
 * (folio_add_lru()) and reclaim takes the old end first, in a movable
 * pageblock, as the kernel's was (suitable_migration_target()): freed, it
 * goes on the movable lists. A block given back since, split, or in a
 * pageblock of another type now leaves the queue.
 */
bool rp_free_moved(struct rp_ctx *c, uint64_t k, unsigned order)
{
	struct rp_moved *m = moved_of(c, k, order);
	while (m && m->head < m->tail) {
		uint32_t p = m->pfn[m->head++];
		if (c->pre[p] == order + 1 && movable_block(c, p)) {
			pre_take(c, p, order, p, order);
			return true;
		}
	}
	return false;
}

void rp_moved_free(struct rp_ctx *c)
{
	for (unsigned z = 0; z <= RP_MAX_ZONES; z++)
		for (unsigned o = 0; o < RP_MOVED_ORDERS; o++)
			free(c->moved_q[z][o].pfn);
}

/* ---------------------------------------------------------------------- */
/* The three steps                                                         */
/* ---------------------------------------------------------------------- */

static int ctl_num(struct rp_ctx *c, const char *path, uint64_t v)
{
	char val[32];
	snprintf(val, sizeof val, "%llu", (unsigned long long)v);
	return pa_ctl_write(c->pool, path, val);
}

/* Switch the per-CPU lists of every order off (saving which were on), or back on. */
static void pcp_switch(struct rp_ctx *c, bool off, uint64_t *saved)
{
	for (unsigned o = 0; o <= c->max_order; o++) {
		char path[64];
		uint64_t on = 0;
		snprintf(path, sizeof path, "pcp/orders/%u/enabled", o);
		if (off) {
			if (pa_ctl_read_u64(c->pool, path, &on) == 0 && on)
				*saved |= 1ull << o;
			ctl_num(c, path, 0);
		} else if (*saved & (1ull << o)) {
			ctl_num(c, path, 1);
		}
	}
}

/*
 * Take every free frame. The lower zones keep their lowmem reserve from
 * requests that a higher zone could serve, so DMA32 and then DMA requests
 * take what is left there.
 */
static void fill(struct rp_ctx *c)
{
	static const pa_gfp_t zone_gfp[] = { 0, PA_GFP_DMA32, PA_GFP_DMA };
	const pa_gfp_t gfp = PA_GFP_MOVABLE | PA_GFP_COMP | PA_GFP_NOWARN | PA_GFP_NOCOMPACT;
	for (unsigned z = 0; z < sizeof zone_gfp / sizeof zone_gfp[0]; z++) {
		for (int o = (int)c->max_order; o >= 0; o--) {
			struct pa_page *p;
			while ((p = pa_alloc_pages(c->pool, gfp | zone_gfp[z], (unsigned)o))) {
				pa_pfn_t pfn = pa_page_to_pfn(c->pool, p);
				c->pre[pfn] = (uint8_t)(o + 1);
				pa_set_owner(c->pool, p, c->owner, RP_COOKIE_PRE);
			}
		}
	}
}

/* The zone modifier that reaches pfn past the lowmem reserves: DMA below 16 MiB, DMA32 below 4 GiB. */
static pa_gfp_t zone_gfp_of(uint64_t pfn)
{
	return pfn < (16ull << 20) >> 12 ? PA_GFP_DMA : pfn < (4ull << 30) >> 12 ? PA_GFP_DMA32 : 0;
}

static pa_gfp_t mt_gfp(unsigned mt)
{
	return mt == PA_MT_RECLAIMABLE ? PA_GFP_RECLAIMABLE :
	       mt == PA_MT_MOVABLE     ? PA_GFP_MOVABLE :
	                                 0;
}

/* The type the starting state builds for a kernel pageblock type: HighAtomic as Unmovable. */
static unsigned pool_mt(unsigned mt)
{
	return mt == PA_MT_HIGHATOMIC ? PA_MT_UNMOVABLE : mt;
}

/* Make pageblock b (pfn) of type mt: free it, allocate it back as mt. */
static bool retype_block(struct rp_ctx *c, uint64_t b, unsigned mt)
{
	unsigned r = 0;
	uint64_t h = pre_head(c, b, &r);
	if (h != b || r < PB_ORDER)
		return false;
	if (r > PB_ORDER && !pre_split(c, h, r, PB_ORDER))
		return false;
	pre_free(c, b, PB_ORDER);
	const pa_gfp_t gfp = mt_gfp(mt) | PA_GFP_COMP | PA_GFP_NOWARN | PA_GFP_NOCOMPACT;
	struct pa_page *p = pa_alloc_pages(c->pool, gfp | zone_gfp_of(b), PB_ORDER);
	if (!p && zone_gfp_of(b) == PA_GFP_DMA) /* no ZONE_DMA: b is in DMA32 */
		p = pa_alloc_pages(c->pool, gfp | PA_GFP_DMA32, PB_ORDER);
	if (!p)
		return false;
	uint64_t got = pa_page_to_pfn(c->pool, p);
	c->pre[got] = PB_ORDER + 1;
	if (mt != PA_MT_MOVABLE)
		rp_set_bit(c->pre_kernel, got >> PB_ORDER);
	if (got != b)
		c->map_errors++;
	return true;
}

/*
 * A pageblock with holes (the first of a zone that starts at pfn 1, as
 * x86-64's DMA): free the pre-trace pieces in it and allocate them back as
 * mt; with the rest of the zone allocated they come from this pageblock, and
 * being half of it or more, the first claims it. Such a pageblock can hold
 * no free block of its order, so the kernel's early boot allocations there
 * make it the likeliest of a zone's unmovable ones.
 */
static bool retype_partial(struct rp_ctx *c, const struct rp_zone_state *kz, uint64_t b,
                           unsigned mt)
{
	uint64_t lo = b < kz->start_pfn ? kz->start_pfn : b, hi = b + (1u << PB_ORDER), freed = 0;
	hi = hi < kz->end_pfn ? hi : kz->end_pfn;
	for (uint64_t p = lo, h; p < hi; p++) {
		unsigned r = 0;
		if ((h = pre_head(c, p, &r)) != p || h + (1ull << r) > hi)
			continue;
		pre_free(c, h, r);
		freed += 1ull << r;
		p += (1ull << r) - 1;
	}
	pa_gfp_t gfp = mt_gfp(mt) | PA_GFP_NOWARN | PA_GFP_NOCOMPACT | zone_gfp_of(b);
	for (int o = PB_ORDER; o >= 0; o--) {
		struct pa_page *p;
		while (freed >= 1ull << o &&
		       ((p = pa_alloc_pages(c->pool, gfp, (unsigned)o)) ||
		        ((gfp & PA_GFP_DMA) && /* no ZONE_DMA: b is in DMA32 */
		         (p = pa_alloc_pages(c->pool, gfp ^ PA_GFP_DMA ^ PA_GFP_DMA32,
		                             (unsigned)o))))) {
			pa_pfn_t pfn = pa_page_to_pfn(c->pool, p);
			c->pre[pfn] = (uint8_t)(o + 1);
			pa_set_owner(c->pool, p, c->owner, RP_COOKIE_PRE);
			freed -= 1ull << o;
			if (pfn < lo || pfn >= hi)
				c->map_errors++;
		}
	}
	struct pa_pageblock_info info;
	if (pa_pageblock_info(c->pool, b >> PB_ORDER, &info) != 0 || info.mt != mt)
		return false;
	rp_set_bit(c->pre_kernel, b >> PB_ORDER);
	return true;
}

/*
 * Pageblocks of [start, end) holding boot-reserved memory, per type the
 * pool has them as already: the kernel's version typed them at boot
 * (reserved_movable), and its pagetypeinfo counts them so.
 */
static void typed_already(const struct rp_ctx *c, uint64_t start, uint64_t end,
                          uint64_t have[RP_NR_MT])
{
	memset(have, 0, RP_NR_MT * sizeof *have);
	for (uint64_t b = start >> PB_ORDER; b < (end + (1u << PB_ORDER) - 1) >> PB_ORDER; b++) {
		struct pa_pageblock_info info;
		if (pa_pageblock_info(c->pool, b, &info) == 0 && info.reserved &&
		    info.mt < RP_NR_MT)
			have[info.mt]++;
	}
}

/*
 * Each pageblock's type as the trace first shows it: 1 + the migratetype of
 * the first allocation inside it, or the one a fallback names for the free
 * block it took from (all of whose pageblocks then serve the other type
 * without changing theirs), 0 where the trace allocates nothing. An
 * allocation comes from a pageblock of its own type but for a fallback.
 */
static uint8_t *first_types(const struct rp_ctx *c)
{
	uint64_t nr = (c->nr_frames >> PB_ORDER) + 1;
	uint8_t *t = calloc(nr, 1);
	for (size_t i = 0; t && i < c->trace->nr; i++) {
		const struct rp_event *ev = rp_pass_event(c->trace, i);
		if (ev->type != RP_ALLOC && ev->type != RP_EXTFRAG)
			continue;
		uint64_t b = ev->pfn >> PB_ORDER, end = b + 1;
		if (ev->type == RP_EXTFRAG && ev->order > PB_ORDER)
			end = b + (1ull << (ev->order - PB_ORDER));
		for (; b < end && b < nr; b++)
			if (!t[b])
				t[b] = (uint8_t)(ev->mt + 1);
	}
	return t;
}

/* How many pageblocks the trace shows unmovable or reclaimable at first, and of them typed so. */
static void count_typed(const struct rp_ctx *c, const uint8_t *seen, const uint8_t *pbtype)
{
	for (uint64_t b = 0; seen && b < c->nr_frames >> PB_ORDER; b++) {
		unsigned mt = seen[b] ? seen[b] - 1u : PA_MT_MOVABLE;
		if (mt == PA_MT_UNMOVABLE || mt == PA_MT_RECLAIMABLE) {
			c->res->start_pb_seen++;
			c->res->start_pb_typed += pbtype[b] == mt;
		}
	}
}

/* Make pageblock b (pfn) of kz of type mt, as the pool's; false where it cannot be. */
static bool type_block(struct rp_ctx *c, const struct rp_zone_state *kz, uint8_t *pbtype,
                       uint64_t b, unsigned mt)
{
	unsigned as = pool_mt(mt);
	if (pbtype[b >> PB_ORDER] != PA_MT_MOVABLE || b + (1u << PB_ORDER) > kz->end_pfn ||
	    !(retype_block(c, b, as) || (b < kz->start_pfn && retype_partial(c, kz, b, as))))
		return false;
	pbtype[b >> PB_ORDER] = (uint8_t)mt;
	return true;
}

/*
 * What the trace first shows of the pageblocks of the largest block at u:
 * bit 0 some of type mt, bit 1 some of another.
 */
static unsigned unit_seen(const struct rp_ctx *c, const uint8_t *seen, uint64_t u, uint64_t span,
                          unsigned mt)
{
	unsigned found = 0;
	for (uint64_t b = u; seen && b < u + span && b < c->nr_frames; b += 1u << PB_ORDER) {
		unsigned ev = seen[b >> PB_ORDER];
		found |= !ev ? 0u : ev == mt + 1 ? 1u : 2u;
	}
	return found;
}

/* retype()'s passes, the likeliest places for a kernel pageblock of a type first. */
enum retype_pass {
	RETYPE_SEEN_WHOLE,   /* whole largest blocks the trace shows of that type and no other */
	RETYPE_SEEN,         /* single pageblocks the trace shows of that type */
	RETYPE_UNSEEN_WHOLE, /* whole largest blocks the trace allocates nothing in */
	RETYPE_ANYWHERE,
	RETYPE_PASSES
};

/* Does the pass take a pageblock first seen as `ev` (1 + type, 0: not seen) in a block `found`? */
static bool pass_takes(enum retype_pass pass, unsigned found, unsigned ev, unsigned mt)
{
	switch (pass) {
	case RETYPE_SEEN_WHOLE:
		return found == 1;
	case RETYPE_SEEN:
		return ev == mt + 1;
	case RETYPE_UNSEEN_WHOLE:
		return found == 0;
	default:
		return true;
	}
}

/*
 * The kernel's pageblocks of other types than movable, as many as its
 * pagetypeinfo counts, where the trace first shows that type: whole blocks
 * of the largest order where it shows no other (a fallback that takes such
 * a block claims all its pageblocks, and the kernel's free blocks of that
 * order need whole movable ones), then single pageblocks; then whole
 * blocks where the trace allocates nothing, then anywhere. The lowest
 * first within each (early allocations of a freshly booted kernel sit low
 * in a zone).
 */
static void retype(struct rp_ctx *c, const struct rp_zone_state *kz, uint8_t *pbtype,
                   const uint8_t *seen)
{
	uint64_t span = 1ull << (c->max_order > PB_ORDER ? c->max_order : PB_ORDER);
	uint64_t first = kz->start_pfn & ~(span - 1), have[RP_NR_MT], n[RP_NR_MT] = { 0 };
	typed_already(c, kz->start_pfn, kz->end_pfn, have);
	for (unsigned mt = 0; mt < RP_NR_MT; mt++)
		if (mt != PA_MT_MOVABLE && mt != PA_MT_ISOLATE && kz->pageblocks[mt] > have[mt])
			n[mt] = kz->pageblocks[mt] - have[mt];
	for (unsigned pass = 0; pass < RETYPE_PASSES; pass++)
		for (unsigned mt = 0; mt < RP_NR_MT; mt++) {
			unsigned as = pool_mt(mt);
			for (uint64_t u = first; n[mt] && u < kz->end_pfn; u += span) {
				unsigned found = unit_seen(c, seen, u, span, as);
				for (uint64_t b = u; n[mt] && b < u + span; b += 1u << PB_ORDER)
					if (pass_takes(pass, found, seen ? seen[b >> PB_ORDER] : 0,
					               as))
						n[mt] -= type_block(c, kz, pbtype, b, mt);
			}
		}
}

/* Can the block at p never be a free buddy of `order`: a hole, or held pre-trace memory? */
static bool held(const struct rp_ctx *c, uint64_t p)
{
	unsigned r;
	return p >= c->nr_frames || !pa_pfn_to_page(c->pool, p) || pre_head(c, p, &r) != UINT64_MAX;
}

/* If [q, q + 2^order) is all pre-trace blocks, free them (they merge); else change nothing. */
static bool free_pieces(struct rp_ctx *c, uint64_t q, unsigned order)
{
	uint64_t end = q + (1ull << order);
	for (uint64_t p = q; p < end; p += 1ull << (c->pre[p] - 1u))
		if (!c->pre[p])
			return false;
	for (uint64_t p = q; p < end;) {
		uint64_t step = 1ull << (c->pre[p] - 1u);
		pre_free(c, p, c->pre[p] - 1u);
		p += step;
	}
	return true;
}

/* The first frame at or after p, before end, that starts a pre-trace block; end if none. */
static uint64_t next_pre(const uint8_t *pre, uint64_t p, uint64_t end)
{
	for (; p < end && (p & 7); p++)
		if (pre[p])
			return p;
	for (; p + 8 <= end; p += 8) { /* freed and in-use stretches are long: a word at a time */
		uint64_t w;
		memcpy(&w, pre + p, sizeof w);
		if (w)
			break;
	}
	for (; p < end; p++)
		if (pre[p])
			return p;
	return end;
}

/*
 * Free up to *count blocks of order inside [b, b + span). Below the kernel's
 * largest order a freed block's buddy stays held, so that it does not merge;
 * blocks of the kernel's largest order merge as a pool with a larger
 * max_order would merge them.
 */
static void free_in(struct rp_ctx *c, uint64_t b, uint64_t span, unsigned order, uint64_t *count,
                    const struct start_evidence *e)
{
	bool top = order >= c->m->max_order || order == c->max_order;
	unsigned r0, span_order = (unsigned)__builtin_ctzll(span);
	uint64_t h = pre_head(c, b, &r0);
	if (h != UINT64_MAX && r0 > span_order) /* a block larger than the span: cut it to spans */
		pre_split(c, h, r0, span_order);
	for (uint64_t p = b; p < b + span && *count;) {
		if (!c->pre[p]) {
			p = next_pre(c->pre, p, b + span);
			continue;
		}
		unsigned r = c->pre[p] - 1u;
		uint64_t size = 1ull << r;
		if (r < order && top && (p & ((1ull << order) - 1)) == 0 &&
		    evidence_allows(e, p, order) && free_pieces(c, p, order)) {
			--*count; /* smaller pieces (cut by retyping) freed together merge */
			size = 1ull << order;
		} else if (r == order && (top || held(c, p ^ (1ull << order))) &&
		           evidence_allows(e, p, order)) {
			pre_free(c, p, order);
			--*count;
		} else if (r > order && evidence_allows(e, p, r) && pre_split(c, p, r, order)) {
			/* Even pieces go free; each odd one stays as its neighbour's buddy. */
			for (uint64_t j = 0; j < size && *count;
			     j += (top ? 1ull : 2ull) << order) {
				pre_free(c, p + j, order);
				--*count;
			}
		}
		p += size;
	}
}

/* Free blocks of (order, mt) in kz's pageblocks of type mt, from the top of the zone down. */
static uint64_t place_free(struct rp_ctx *c, const struct rp_zone_state *kz, const uint8_t *pbtype,
                           unsigned mt, unsigned order, uint64_t count,
                           const struct start_evidence *e)
{
	uint64_t span = order > PB_ORDER ? 1ull << order : 1ull << PB_ORDER;
	/* The zone's first span too where the zone starts inside it (DMA at pfn 1): a hole is never freed. */
	uint64_t first = kz->start_pfn & ~(span - 1);
	if (kz->end_pfn < first + span)
		return count;
	for (uint64_t b = (kz->end_pfn - span) & ~(span - 1); count && b >= first; b -= span) {
		bool all = true;
		for (uint64_t q = b; all && q < b + span; q += 1u << PB_ORDER)
			all &= pbtype[q >> PB_ORDER] == mt;
		if (all)
			free_in(c, b, span, order, &count, e);
		if (b < first + span)
			break;
	}
	return count;
}

/*
 * Where the kernel's free blocks of a type go, in turn: an evidence pass
 * (start_evidence) in the pageblocks of that type (other -1) or of a type
 * Linux falls back to from it (other 0, 1: fallback_of[], in its order).
 */
static const struct place_step {
	unsigned pass;
	int other;
} place_steps[] = { { 0, -1 }, { 1, -1 }, { 1, 0 }, { 1, 1 }, { 2, -1 } };

static const unsigned fallback_of[RP_PCP_TYPES][2] = {
	[PA_MT_UNMOVABLE] = { PA_MT_RECLAIMABLE, PA_MT_MOVABLE },
	[PA_MT_MOVABLE] = { PA_MT_RECLAIMABLE, PA_MT_UNMOVABLE },
	[PA_MT_RECLAIMABLE] = { PA_MT_UNMOVABLE, PA_MT_MOVABLE },
};

/*
 * The kernel's free blocks, largest first, where the trace shows the
 * kernel's free memory first. Where its type's pageblocks have no room left
 * but on frames the trace shows in use or on a CPU's list, a block goes in
 * another type's pageblocks first (free there, of the kernel's order, on
 * that type's list): the trace names those frames, the type is only a
 * count of the zone's. Put on the lists' frames, the kernel's free blocks
 * left the lists' stock to come from memory beside them, with which it
 * merged when spilled. A block that finds no room of its order (the boot reservations sit
 * across where the kernel had one) goes in as two of the order below, so
 * that the zone's free count, which every watermark reads, stays the
 * kernel's.
 */
static void place_all(struct rp_ctx *c, const struct rp_zone_state *kz, const uint8_t *pbtype,
                      struct start_evidence *e)
{
	uint64_t carry[RP_NR_MT] = { 0 };
	for (int o = (int)c->max_order; o >= 0; o--)
		for (unsigned mt = 0; mt < RP_NR_MT; mt++) {
			unsigned want = pool_mt(mt);
			uint64_t n = kz->free_mt[mt][o] + carry[mt];
			carry[mt] = 0;
			if (!n || mt == PA_MT_ISOLATE)
				continue;
			for (size_t i = 0; i < sizeof place_steps / sizeof place_steps[0] && n;
			     i++) {
				const struct place_step *st = &place_steps[i];
				if (st->other >= 0 && want >= RP_PCP_TYPES)
					continue;
				e->pass = st->pass;
				n = place_free(c, kz, pbtype,
				               st->other < 0 ? want : fallback_of[want][st->other],
				               (unsigned)o, n, e);
			}
			carry[mt] = o > 0 ? 2 * n : 0;
			c->res->start_shortfall += n;
		}
}

/* The zone an event's pfn names, the last one found first (events come in runs per zone). */
struct zone_hint {
	const struct rp_state *st;
	int z;
};

static int hinted_zone(struct zone_hint *h, uint64_t pfn)
{
	const struct rp_zone_state *kz = h->z >= 0 ? &h->st->zone[h->z] : NULL;
	if (!kz || pfn < kz->start_pfn || pfn >= kz->end_pfn)
		h->z = state_zone(h->st, pfn);
	return h->z;
}

/* One list's count while the trace is read: what it ran ahead by, its most, its first refill. */
struct list_acc {
	int64_t bal;
	uint64_t most;
	uint32_t refill;
};

/* The list an event names (zone, CPU, order) and mt; NULL where there is none. */
static struct list_acc *list_of(struct zone_hint *h, struct list_acc *acc,
                                const struct rp_event *ev, unsigned mt)
{
	int z = hinted_zone(h, ev->pfn);
	if (z < 0 || ev->order >= RP_PCP_ORDERS || ev->cpu >= RP_MAX_CPUS || mt >= RP_PCP_TYPES)
		return NULL;
	return &acc[((z * RP_MAX_CPUS + ev->cpu) * RP_PCP_ORDERS + ev->order) * RP_PCP_TYPES + mt];
}

struct rp_pcp_stock *rp_pcp_stock(const struct rp_trace *t, const struct rp_state *st)
{
	enum { LISTS = RP_MAX_ZONES * RP_MAX_CPUS * RP_PCP_ORDERS * RP_PCP_TYPES };
	struct rp_pcp_stock *s = calloc(1, sizeof *s);
	uint8_t *type = calloc(t->max_pfn ? t->max_pfn : 1, 1); /* 1 + a live block's type */
	struct list_acc *acc = calloc(LISTS, sizeof *acc), *l;
	struct zone_hint hint = { st, -1 };
	if (!s || !type || !acc) {
		free(s), free(type), free(acc);
		return NULL;
	}
	for (size_t i = 0; i < t->nr; i++) {
		const struct rp_event *ev = rp_pass_event(t, i);
		if (ev->order >= RP_PCP_ORDERS || ev->pfn >= t->max_pfn)
			continue;
		if (ev->type == RP_REFILL) { /* a run of one line is no sure refill */
			if (ev->arg >= 2 && (l = list_of(&hint, acc, ev, ev->mt)) && !l->refill)
				l->refill = (uint32_t)(i + 1);
			continue;
		}
		int64_t n = 1ll << ev->order;
		unsigned mt;
		if (ev->type == RP_ALLOC && ev->mt < RP_PCP_TYPES) {
			mt = ev->mt;
			type[ev->pfn] = (uint8_t)(mt + 1);
		} else if (ev->type == RP_FREE && type[ev->pfn]) {
			mt = type[ev->pfn] - 1u;
			type[ev->pfn] = 0;
			n = -n;
		} else {
			continue;
		}
		if (!(l = list_of(&hint, acc, ev, mt)) || l->refill)
			continue; /* no list, or refilled before: what it held is spent */
		l->bal += n;
		if (l->bal > (int64_t)l->most)
			l->most = (uint64_t)l->bal;
	}
	uint64_t *need = &s->need[0][0][0][0];
	uint32_t *refill = &s->first_refill[0][0][0][0];
	for (size_t i = 0; i < LISTS; i++)
		need[i] = acc[i].most, refill[i] = acc[i].refill;
	free(type);
	free(acc);
	return s;
}

/*
 * The type of zone z's order-0 list that CPU's allocations never drew dry
 * (no refill in the trace) and drew on least; -1 if each ran dry. What the
 * kernel's lists held beyond what the trace drew on was on such a list.
 */
static int idle_type(const struct rp_pcp_stock *s, int z, unsigned cpu)
{
	int best = -1;
	for (unsigned mt = 0; mt < RP_PCP_TYPES; mt++)
		if (!s->first_refill[z][cpu][0][mt] &&
		    (best < 0 || s->need[z][cpu][0][mt] < s->need[z][cpu][0][best]))
			best = (int)mt;
	return best;
}

uint64_t rp_pcp_stock_drawn(const struct rp_pcp_stock *s, int zone, unsigned cpu)
{
	uint64_t n = 0;
	for (unsigned o = 0; o < RP_PCP_ORDERS; o++)
		for (unsigned mt = 0; mt < RP_PCP_TYPES; mt++)
			n += s->need[zone][cpu][o][mt];
	return n;
}

/*
 * Could CPU cpu's list have held the block the trace drains at event `at`?
 * Not once the list was refilled: Linux refills only an empty list. Room
 * for it too.
 */
static bool stock_fits(const struct rp_pcp_stock *s, int zone, unsigned cpu,
                       const struct rp_event *ev, size_t at, const uint64_t *room)
{
	if (cpu >= RP_MAX_CPUS || room[cpu] < 1ull << ev->order)
		return false;
	uint32_t refill = ev->order < RP_PCP_ORDERS && ev->mt < RP_PCP_TYPES ?
	                          s->first_refill[zone][cpu][ev->order][ev->mt] :
	                          0;
	return !refill || refill - 1u > at;
}

/*
 * The CPU whose list held a drained block: the one that drained it, unless
 * that list cannot have (a remote drain names the CPU that drains), else
 * the first that can; -1 if none.
 */
static int stock_cpu(const struct rp_ctx *c, const struct rp_pcp_stock *s, int zone,
                     const struct rp_event *ev, const uint64_t *room)
{
	size_t at = (size_t)(ev - c->trace->ev);
	if (stock_fits(s, zone, ev->cpu, ev, at, room))
		return ev->cpu;
	for (unsigned i = 0; i < RP_MAX_CPUS; i++)
		if (stock_fits(s, zone, i, ev, at, room))
			return (int)i;
	return -1;
}

/*
 * The blocks the trace shows drained before anything else named them
 * (RP_STOCK) were on the zone's lists: each goes on a list at its own pfn,
 * of the drain's type, on the CPU stock_cpu() finds, below what the trace
 * draws from the lists.
 */
static void stock_listed(struct rp_ctx *c, int zone, const struct start_evidence *e,
                         const struct rp_pcp_stock *s, uint64_t *room)
{
	for (size_t i = 0; i < e->nr_stock; i++) {
		const struct rp_event *ev = e->stock[i];
		if (kernel_zone(c, ev->pfn) != zone)
			continue;
		unsigned r = 0;
		uint64_t h = pre_head(c, ev->pfn, &r);
		int cpu = stock_cpu(c, s, zone, ev, room);
		if (h == UINT64_MAX || r < ev->order || cpu < 0)
			continue; /* placed as free memory after all, or no list has room */
		c->cpu = (unsigned)cpu;
		c->pre_list = ev->mt < RP_PCP_TYPES ? ev->mt : -1;
		pre_take(c, h, r, ev->pfn, ev->order);
		room[cpu] -= 1ull << ev->order;
		c->res->start_listed += 1ull << ev->order;
	}
	c->pre_list = -1;
}

/*
 * The kernel's per-CPU lists held pages too: the blocks the trace names
 * (stock_listed()), then on each CPU the zone's pre-trace memory so that
 * each list holds what the trace drew from it (rp_pcp_stock()), and the
 * rest of the kernel's count on a list the trace left alone, in single
 * frames. Linux spills a list from its tail and allocates from its head:
 * the drained blocks go on first.
 */
static void fill_pcp(struct rp_ctx *c, const struct rp_zone_state *kz, struct rp_pcp_stock *s,
                     const uint8_t *pbtype, const struct start_evidence *e)
{
	int zone = kernel_zone(c, kz->start_pfn);
	uint64_t cursor[RP_PCP_TYPES + 1] = { 0 }, kept[RP_MAX_CPUS], room[RP_MAX_CPUS];
	if (zone < 0 || zone >= RP_MAX_ZONES)
		return;
	for (unsigned cpu = 0; cpu < RP_MAX_CPUS; cpu++) {
		uint64_t d = rp_pcp_stock_drawn(s, zone, cpu), n = kz->pcp_cpu[cpu];
		kept[cpu] = d < n ? d : n; /* for what the trace draws */
		room[cpu] = n - kept[cpu];
	}
	stock_listed(c, zone, e, s, room);
	for (unsigned cpu = 0; cpu < RP_MAX_CPUS; cpu++) {
		c->cpu = cpu;
		uint64_t left = room[cpu] + kept[cpu];
		for (unsigned o = 0; o < RP_PCP_ORDERS; o++)
			for (unsigned mt = 0; mt < RP_PCP_TYPES; mt++)
				for (uint64_t *n = &s->need[zone][cpu][o][mt];
				     *n && left >= 1ull << o;) {
					if (!pre_free_where(c, zone, o, (int)mt, pbtype,
					                    &cursor[mt]))
						break;
					*n -= *n < 1ull << o ? *n : 1ull << o;
					left -= 1ull << o;
				}
		/*
		 * A search that finds nothing has walked all memory: it is not
		 * tried again. The rest waits on the idle list from pageblocks of
		 * its type, else from any: the kernel's list kept pages of other
		 * types, or the pool holds its memory elsewhere.
		 */
		int rest = idle_type(s, zone, cpu);
		while (left && rest >= 0 && pre_free_where(c, zone, 0, rest, pbtype, &cursor[rest]))
			left--;
		c->pre_list = rest;
		while (left && pre_free_where(c, zone, 0, -1, pbtype, &cursor[RP_PCP_TYPES]))
			left--;
		c->pre_list = -1;
	}
	c->cpu = 0;
}

/*
 * Each CPU's high as the kernel's zoneinfo had it: the tuning of the kernel's
 * version moved it before the trace began (a CPU that freed much has it far
 * above high_min), and it decides what the lists keep. Within the pool's
 * [high_min, high_max]; nothing to set where high is fixed (6.1).
 */
static void set_pcp_high(struct rp_ctx *c, const struct rp_zone_state *kz)
{
	for (unsigned t = 0; t < PA_ZONE_COUNT; t++) {
		if (strcmp(kz->name, pa_zone_name((enum pa_zone_type)t)) != 0)
			continue;
		for (unsigned cpu = 0; cpu < RP_MAX_CPUS; cpu++) {
			struct pa_pcp_info pi;
			if (!kz->pcp_high[cpu] ||
			    pa_pcp_info(c->pool, 0, (enum pa_zone_type)t, cpu, &pi, NULL) != 0)
				continue;
			uint64_t h = kz->pcp_high[cpu];
			h = h < pi.high_min ? pi.high_min : h > pi.high_max ? pi.high_max : h;
			pa_pcp_set_high(c->pool, 0, (enum pa_zone_type)t, cpu, h);
		}
	}
}

/* Each pageblock's type in the pool, as the starting state left them. */
static uint8_t *pool_pbtypes(const struct rp_ctx *c)
{
	uint64_t n = pa_pageblock_count(c->pool);
	uint8_t *t = calloc(n ? n : 1, 1);
	for (uint64_t i = 0; t && i < n; i++) {
		struct pa_pageblock_info info;
		if (pa_pageblock_info(c->pool, i, &info) == 0)
			t[i] = (uint8_t)info.mt;
	}
	return t;
}

int rp_start_state(struct rp_ctx *c)
{
	if (!c->m->nr_snapshots)
		return 0; /* a lone trace: start from an empty pool */
	const struct rp_state *st = &c->m->snap[0].kernel;
	uint64_t mfk = 0, boost = 0;
	pa_ctl_read_u64(c->pool, "min_free_kbytes", &mfk);
	pa_ctl_read_u64(c->pool, "watermark_boost_factor", &boost);
	uint64_t saved = 0;
	pcp_switch(c, true, &saved);
	/* Building the state is no workload: no watermark, no boost from its fallbacks. */
	ctl_num(c, "min_free_kbytes", 0);
	ctl_num(c, "watermark_boost_factor", 0);
	uint8_t *pbtype = calloc((c->nr_frames >> PB_ORDER) + 1, 1);
	if (!pbtype)
		return -1;
	memset(pbtype, PA_MT_MOVABLE, (c->nr_frames >> PB_ORDER) + 1);
	fill(c);
	uint8_t *seen = first_types(c);
	for (unsigned z = 0; z < st->nr_zones; z++)
		retype(c, &st->zone[z], pbtype, seen);
	count_typed(c, seen, pbtype);
	free(seen);
	struct start_evidence e;
	evidence_read(c, &e);
	for (unsigned z = 0; z < st->nr_zones; z++)
		place_all(c, &st->zone[z], pbtype, &e);
	free(pbtype);
	ctl_num(c, "watermark_boost_factor", boost);
	ctl_num(c, "min_free_kbytes", mfk);
	/*
	 * The fill took every zone under its high watermark, which marks it
	 * (Linux 6.7's ZONE_BELOW_HIGH: no refill raises high there). That was
	 * no workload's: the marks go (6.1's rules have no such bit, and refuse),
	 * and the trace's first allocation that finds a zone under its high
	 * watermark marks it again, as the kernel's did.
	 */
	rp_ctl_zones(c, "below_high", "0");
	pcp_switch(c, false, &saved);
	struct rp_pcp_stock *stock = rp_pcp_stock(c->trace, st);
	uint8_t *types = stock ? pool_pbtypes(c) : NULL;
	if (!types) {
		free(stock);
		evidence_free(&e);
		return -1;
	}
	for (unsigned z = st->nr_zones; z-- > 0;) {
		set_pcp_high(c, &st->zone[z]);
		fill_pcp(c, &st->zone[z], stock, types, &e);
	}
	evidence_free(&e);
	free(types);
	free(stock);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* The pool as a snapshot sees it                                          */
/* ---------------------------------------------------------------------- */

/* One zone of the pool, read through the API, added into z. */
static void model_zone_add(struct pa_pool *pool, unsigned index, const struct pa_zone_info *zi,
                           struct rp_zone_state *z, uint64_t *nr_free, unsigned orders)
{
	uint64_t blocks[PA_MT_COUNT];
	if (!z->present)
		z->start_pfn = zi->start_pfn;
	z->end_pfn = zi->end_pfn;
	z->present += zi->present;
	z->managed += zi->managed;
	z->min_wmark += zi->watermark_min;
	z->boost += zi->watermark_boost;
	z->pcp += zi->pcp;
	for (unsigned cpu = 0; cpu < RP_MAX_CPUS; cpu++) {
		struct pa_pcp_info info;
		if (pa_pcp_info(pool, zi->node, zi->type, cpu, &info, NULL) == 0) {
			z->pcp_cpu[cpu] += info.count;
			z->pcp_high[cpu] = info.high;
		}
	}
	if (pa_zone_pagetypes(pool, index, nr_free, orders, blocks) != 0)
		return;
	for (unsigned mt = 0; mt < RP_NR_MT && mt < PA_MT_COUNT; mt++) {
		z->pageblocks[mt] += blocks[mt];
		for (unsigned o = 0; o < orders; o++) {
			z->free_mt[mt][o] += nr_free[o * PA_MT_COUNT + mt];
			z->free[o] += nr_free[o * PA_MT_COUNT + mt];
		}
	}
}

/* The pool as the kernel's snapshot files show a kernel: its zones with memory, through the API. */
void rp_model_state(struct rp_ctx *c, struct rp_state *st)
{
	memset(st, 0, sizeof *st);
	struct pa_config cfg;
	pa_get_config(c->pool, &cfg);
	unsigned orders = cfg.max_order + 1 < RP_MAX_ORDERS ? cfg.max_order + 1 : RP_MAX_ORDERS;
	uint64_t nr_free[RP_MAX_ORDERS * PA_MT_COUNT];
	for (unsigned i = 0, n = pa_zone_count(c->pool); i < n; i++) {
		struct pa_zone_info zi;
		if (pa_zone_info(c->pool, i, &zi) != 0 || !zi.present)
			continue;
		struct rp_zone_state *z = rp_state_zone(st, pa_zone_name(zi.type));
		if (z)
			model_zone_add(c->pool, i, &zi, z, nr_free, orders);
	}
	st->nr_orders = orders;
	st->uptime = (double)c->now_ns / 1e9;
}

void rp_sample(struct rp_ctx *c, size_t event)
{
	struct rp_result *r = c->res;
	if (r->nr_series == r->cap_series) {
		size_t cap = r->cap_series ? r->cap_series * 2 : 64;
		struct rp_sample *s = realloc(r->series, cap * sizeof *s);
		if (!s)
			return;
		r->series = s;
		r->cap_series = cap;
	}
	struct rp_state st;
	rp_model_state(c, &st);
	struct rp_sample *s = &r->series[r->nr_series++];
	memset(s, 0, sizeof *s);
	s->t = st.uptime;
	s->event = event;
	s->free = rp_state_free(&st);
	s->unusable9 = rp_state_unusable(&st, PB_ORDER);
	for (unsigned z = 0; z < st.nr_zones; z++) {
		s->pcp += st.zone[z].pcp;
		for (unsigned o = 0; o < RP_MAX_ORDERS; o++)
			s->free_blocks[o] += st.zone[z].free[o];
		for (unsigned mt = 0; mt < RP_NR_MT; mt++)
			s->pageblocks[mt] += st.zone[z].pageblocks[mt];
	}
	r->nr_orders = st.nr_orders;
}
