/* SPDX-License-Identifier: MIT */
/*
 * Running a parsed trace on a pool.
 *
 * The pool has the kernel's pfns (machine.c), but pagealloc places
 * its allocations where its own policy says, so every traced allocation is
 * kept in a map from the kernel pfn to the pool block that pagealloc handed
 * out. The replay registers itself as the owner of every movable block, so
 * pagealloc's compaction may move them: the migrate callback keeps the map
 * right. Each event runs on the event's CPU and at the event's time through
 * the platform hooks, so per-CPU lists and their decay see what the kernel's
 * saw.
 *
 * Before the first event the pool is brought to the kernel's starting state
 * (start.c), and the memory in use then is held as "pre-trace"
 * blocks: a free of a kernel pfn that no traced allocation covers is served
 * from them, at the same pfn when the pool holds it there.
 */
#define _GNU_SOURCE
#include "run.h"

#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static unsigned plat_cpu(void *ctx)
{
	return ((struct rp_ctx *)ctx)->cpu;
}

static uint64_t plat_now(void *ctx)
{
	return ((struct rp_ctx *)ctx)->now_ns;
}

/* Counted, not printed: the replay reports the totals. */
static void plat_report(void *ctx, const char *line)
{
	struct rp_ctx *c = ctx;
	if (!c->first_report[0])
		snprintf(c->first_report, sizeof c->first_report, "%s", line);
}

/* ---------------------------------------------------------------------- */
/* The owner: keeps the maps right when pagealloc moves or splits a block  */
/* ---------------------------------------------------------------------- */

static enum pa_migrate_result owner_migrate(void *ctx, uint64_t cookie, struct pa_page *old_folio,
                                            struct pa_page *new_folio, unsigned order)
{
	struct rp_ctx *c = ctx;
	pa_pfn_t from = pa_page_to_pfn(c->pool, old_folio), to = pa_page_to_pfn(c->pool, new_folio);
	(void)order;
	if (cookie & RP_COOKIE_PRE) {
		c->pre[to] = c->pre[from];
		c->pre[from] = 0;
	} else if (cookie < c->nr_kmap && c->kmap[cookie].ppfn == from) {
		c->kmap[cookie].ppfn = (uint32_t)to;
	} else {
		c->map_errors++;
	}
	c->moved++;
	return PA_MIGRATE_OK;
}

/* compaction_split_folios=1: the folio became order-0 folios; give each its own cookie. */
static void owner_split(void *ctx, uint64_t cookie, struct pa_page *head, unsigned order)
{
	struct rp_ctx *c = ctx;
	pa_pfn_t p = pa_page_to_pfn(c->pool, head);
	for (uint64_t i = 0; i < (1ull << order); i++) {
		struct pa_page *piece = pa_pfn_to_page(c->pool, p + i);
		if (cookie & RP_COOKIE_PRE) {
			c->pre[p + i] = 1;
			continue;
		}
		c->kmap[cookie + i] = (struct rp_kmap){ (uint32_t)(p + i), 0, KM_LIVE, 0 };
		if (i)
			pa_set_owner(c->pool, piece, c->owner, cookie + i);
	}
}

/* ---------------------------------------------------------------------- */
/* Allocations and frees                                                   */
/* ---------------------------------------------------------------------- */

static void give_owner(struct rp_ctx *c, struct pa_page *p, pa_gfp_t gfp, uint64_t cookie)
{
	if (gfp & PA_GFP_MOVABLE)
		pa_set_owner(c->pool, p, c->owner, cookie);
}

/* Free a traced block the map names; its pieces after a split are in the map too. */
static void free_mapped(struct rp_ctx *c, uint64_t k)
{
	struct rp_kmap *e = &c->kmap[k];
	if (e->kind == KM_LIVE)
		pa_free_pages(c->pool, pa_pfn_to_page(c->pool, e->ppfn), e->order);
	e->kind = KM_NONE;
}

/* The index (pa_zone_info()) of the zone holding pfn, or -1. */
static int zone_of(struct pa_pool *pool, uint64_t pfn)
{
	struct pa_zone_info zi;
	for (unsigned i = 0; pa_zone_info(pool, i, &zi) == 0; i++)
		if (pfn >= zi.start_pfn && pfn < zi.end_pfn && zi.present)
			return (int)i;
	return -1;
}

/* This CPU's lists of zone index i go back to the buddy (drain_local_pages(zone)). */
static void drain_local_index(struct pa_pool *pool, unsigned i)
{
	struct pa_zone_info zi;
	if (pa_zone_info(pool, i, &zi) == 0)
		pa_drain_zone(pool, zi.node, zi.type, 0);
}

/*
 * Compaction drains this CPU's lists of the zone it compacts
 * (drain_local_pages(zone)): the zone holding pfn, the drain's first page.
 */
static void drain_local_zone(struct pa_pool *pool, uint64_t pfn)
{
	int i = zone_of(pool, pfn);
	if (i >= 0)
		drain_local_index(pool, (unsigned)i);
	else
		pa_drain_local(pool);
}

/*
 * The allocation in the kernel's context: its gfp flags, and direct
 * compaction only where the kernel compacted for it, no harder than the
 * kernel's tries (the pool boots with compaction/direct=0). THPs are
 * counted on both sides.
 */
static struct pa_page *alloc_as_kernel(struct rp_ctx *c, const struct rp_event *ev, pa_gfp_t gfp)
{
	bool compact = ev->arg & RP_ALLOC_COMPACTED;
	if (compact) {
		char prio[2] = {
			(char)('0' + ((ev->arg & RP_ALLOC_PRIO_MASK) >> RP_ALLOC_PRIO_SHIFT)), 0
		};
		pa_ctl_write(c->pool, "compaction/direct_priority", prio);
		pa_ctl_write(c->pool, "compaction/direct", "1");
	}
	struct pa_page *p = pa_alloc_pages(c->pool, gfp, ev->order);
	if (compact) {
		pa_ctl_write(c->pool, "compaction/direct", "0");
		pa_ctl_write(c->pool, "compaction/direct_priority", "0");
	}
	if (ev->order == c->pb_order && (gfp & PA_GFP_MOVABLE)) {
		c->res->thp_tried++;
		c->res->thp_kernel += ev->type == RP_ALLOC;
		c->res->thp_served += p != NULL;
	}
	return p;
}

static bool hold(struct rp_ctx *c, struct pa_page *p)
{
	if (c->nr_held == c->cap_held) {
		size_t cap = c->cap_held ? 2 * c->cap_held : 1024;
		uint32_t *h = realloc(c->held, cap * sizeof *h);
		if (!h)
			return false;
		c->held = h, c->cap_held = cap;
	}
	c->held[c->nr_held++] = (uint32_t)pa_page_to_pfn(c->pool, p);
	if (c->nr_held > c->max_held)
		c->max_held = c->nr_held;
	c->res->untraced_taken++;
	return true;
}

/*
 * An order-0 request fails only at a watermark: when the kernel failed
 * one that the pool served in the same context, the kernel had fewer free
 * pages than the pool. The difference is memory the kernel took without a
 * trace event (alloc_pages_bulk(), compaction's targets): the pool takes as
 * much, in the request's context, until the request fails here too. A
 * safety bound keeps a failure the pool cannot explain (a cpuset, say) from
 * taking more than 1/32 of the memory.
 */
static void held_untraced(struct rp_ctx *c, pa_gfp_t gfp)
{
	size_t bound = c->nr_frames / 32;
	struct pa_page *p;
	while (c->nr_held < bound && (p = pa_alloc_pages(c->pool, gfp, 0)))
		if (!hold(c, p)) {
			pa_free_pages(c->pool, p, 0);
			return;
		}
}

/*
 * A block of a high order that the kernel failed to find where the pool
 * served it in the same context: the kernel's free memory there was in
 * smaller pieces. Break the pool's block the least that makes it so: one
 * frame held as above (given back with them, when it merges again), the
 * rest freed in the largest pieces its alignment allows.
 */
static void held_fragment(struct rp_ctx *c, struct pa_page *p, unsigned order)
{
	uint64_t head = pa_page_to_pfn(c->pool, p);
	if (pa_split_folio_at(c->pool, p, order, 0, p) != 0) {
		pa_free_pages(c->pool, p, order);
		return;
	}
	for (unsigned o = 0; o < order; o++)
		pa_free_pages(c->pool, pa_pfn_to_page(c->pool, head + (1ull << o)), o);
	if (!hold(c, p))
		pa_free_pages(c->pool, p, 0);
}

/*
 * A free of memory the kernel took without an event: give back n frames of
 * what was held. Returns the zones they went to (bit i: zone index i).
 */
static unsigned give_held(struct rp_ctx *c, uint64_t n)
{
	unsigned zones = 0;
	for (; n && c->nr_held; n--) {
		uint32_t pfn = c->held[--c->nr_held];
		int z = zone_of(c->pool, pfn);
		zones |= z >= 0 && z < 32 ? 1u << z : 0;
		pa_free_pages(c->pool, pa_pfn_to_page(c->pool, pfn), 0);
		c->res->untraced_given++;
	}
	return zones;
}

/* Frames in the buddy's free lists of the zones in mask (bit i: zone index i). */
static uint64_t buddy_free(struct rp_ctx *c, unsigned zones)
{
	uint64_t n = 0;
	struct pa_zone_info zi;
	for (unsigned i = 0; zones >> i && i < 32; i++)
		if ((zones >> i & 1) && pa_zone_info(c->pool, i, &zi) == 0)
			n += zi.free;
	return n;
}

/*
 * The kernel had the memory: what was held for untraced allocations comes
 * back first, before anything the kernel did not do. Given back, it lands
 * on this CPU's lists, outside the zone's free count the watermarks read,
 * where the kernel had it: the lists of the zones it went to go back to
 * them once it is all given back (the other zones' lists stay as they are).
 */
static struct pa_page *alloc_from_held(struct rp_ctx *c, const struct rp_event *ev, pa_gfp_t gfp)
{
	struct pa_page *p = NULL;
	unsigned gave = 0;
	/* Tried again once some reached the buddy (a spill): a try a spill, not a frame. */
	for (uint64_t seen = 0, now; !p && c->nr_held;) {
		gave |= give_held(c, 1ull << ev->order);
		if ((now = buddy_free(c, gave)) != seen || !c->nr_held) {
			seen = now;
			p = pa_alloc_pages(c->pool, gfp, ev->order);
		}
	}
	if (!p && gave) {
		for (unsigned i = 0; i < 32; i++)
			if (gave & 1u << i)
				drain_local_index(c->pool, i);
		p = pa_alloc_pages(c->pool, gfp, ev->order);
	}
	return p;
}

/*
 * The kernel served it, and the pool's watermarks carry a boost: a fallback
 * raised them (perhaps one the kernel did not make, whose kswapd pass the
 * trace cannot show), and Linux's kswapd, woken by it, would have ended it.
 * The boosts end now, as such a pass that found nothing to reclaim would,
 * and the request is tried again in its own context.
 */
static struct pa_page *alloc_unboosted(struct rp_ctx *c, const struct rp_event *ev, pa_gfp_t gfp)
{
	bool boosted = false;
	for (unsigned z = 0, n = pa_zone_count(c->pool); z < n && !boosted; z++) {
		struct pa_zone_info zi;
		boosted = pa_zone_info(c->pool, z, &zi) == 0 && zi.watermark_boost;
	}
	if (!boosted)
		return NULL;
	rp_ctl_zones(c, "watermark_boost", "0"); /* an unboosted zone's stays 0 */
	c->res->boosts_ended++;
	return alloc_as_kernel(c, ev, gfp);
}

/*
 * The kernel served it, without compacting or after a compaction at a
 * priority that did not find the pool a block: the pool's free blocks
 * differ from the kernel's here. Take the pool's whole slow path
 * (compaction and the lists' drains) rather than fail what the kernel
 * served (counted: compactions the kernel did not run), compacting as hard
 * as Linux can: its last priority, the whole zone, ignoring deferral, which
 * Linux keeps from a costly order (the kernel's block was there without it).
 * A request that may not reclaim (nor so compact or drain) gets the lists'
 * drain alone: the kernel's lists held less of the zone there.
 */
static struct pa_page *alloc_compacting(struct rp_ctx *c, const struct rp_event *ev, pa_gfp_t gfp)
{
	pa_ctl_write(c->pool, "compaction/direct", "1");
	pa_ctl_write(c->pool, "compaction/direct_drain", "1");
	pa_ctl_write(c->pool, "compaction/direct_costly_sync", "1");
	struct pa_page *p =
	        pa_alloc_pages(c->pool, gfp & ~PA_GFP_NORETRY, ev->order); /* up to sync */
	pa_ctl_write(c->pool, "compaction/direct_costly_sync", "0");
	pa_ctl_write(c->pool, "compaction/direct_drain", "0");
	pa_ctl_write(c->pool, "compaction/direct", "0");
	if (!p && (gfp & PA_GFP_NOCOMPACT)) {
		pa_drain_all(c->pool);
		p = pa_alloc_pages(c->pool, gfp, ev->order);
	}
	c->res->extra_compactions++;
	return p;
}

static void do_alloc(struct rp_ctx *c, const struct rp_event *ev)
{
	struct rp_result *r = c->res;
	uint64_t k = ev->pfn;
	r->allocs++;
	if (k >= c->nr_kmap)
		return;
	c->freed[k >> 3] &= (uint8_t) ~(1u << (k & 7));
	if (c->kmap[k].kind != KM_NONE) { /* a free the trace did not show: keep the pool whole */
		c->realloc_live++;
		free_mapped(c, k);
	}
	pa_gfp_t gfp = ((pa_gfp_t)ev->arg & ~RP_ALLOC_FLAGS) | PA_GFP_NOWARN;
	struct pa_page *p = alloc_as_kernel(c, ev, gfp);
	if (!p) {
		p = alloc_from_held(c, ev, gfp);
		if (!p)
			p = alloc_unboosted(c, ev, gfp);
		if (!p)
			p = alloc_compacting(c, ev, gfp);
		if (p && ev->order == c->pb_order && (gfp & PA_GFP_MOVABLE))
			r->thp_served++; /* alloc_as_kernel() counted the try */
	}
	if (!p) {
		r->failed_kernel_served++;
		c->kmap[k] = (struct rp_kmap){ 0, ev->order, KM_FAILED, 0 };
		return;
	}
	give_owner(c, p, gfp, k);
	c->kmap[k] = (struct rp_kmap){ (uint32_t)pa_page_to_pfn(c->pool, p), ev->order, KM_LIVE,
		                       !(gfp & PA_GFP_MOVABLE) };
}

/*
 * The kernel failed; pagealloc tries too, in the same context (compacting
 * only if the kernel did), and gives back what it got.
 */
static void do_alloc_failed(struct rp_ctx *c, const struct rp_event *ev)
{
	c->res->kernel_failed_attempts++;
	pa_gfp_t gfp = ((pa_gfp_t)ev->arg & ~RP_ALLOC_FLAGS) | PA_GFP_NOWARN;
	struct pa_page *p = alloc_as_kernel(c, ev, gfp);
	if (p) {
		c->res->kernel_failed_served++;
		if (ev->order == 0) {
			pa_free_pages(c->pool, p, 0);
			held_untraced(c, gfp);
		} else {
			held_fragment(c, p, ev->order);
		}
	}
}

/* Cut the mapped block at head (of order `from`) into pieces of `to`, each in the map. */
static void split_mapped(struct rp_ctx *c, uint64_t head, unsigned from, unsigned to)
{
	struct rp_kmap e = c->kmap[head];
	if (e.kind == KM_LIVE &&
	    pa_split_folio(c->pool, pa_pfn_to_page(c->pool, e.ppfn), from, to) != 0) {
		c->map_errors++;
		return;
	}
	for (uint64_t i = 0; i < (1ull << from); i += 1ull << to) {
		c->kmap[head + i] =
		        (struct rp_kmap){ e.ppfn + (uint32_t)i, (uint8_t)to, e.kind, e.kernel };
		if (e.kind == KM_LIVE && i)
			pa_set_owner(c->pool, pa_pfn_to_page(c->pool, e.ppfn + i), c->owner,
			             head + i);
	}
}

/* The live (or failed) mapped block covering k at an order above `order`; head or UINT64_MAX. */
static uint64_t covering(const struct rp_ctx *c, uint64_t k, unsigned order)
{
	for (unsigned o = order + 1; o <= c->max_order; o++) {
		uint64_t h = k & ~((1ull << o) - 1);
		if (c->kmap[h].kind != KM_NONE && c->kmap[h].order >= o)
			return h;
	}
	return UINT64_MAX;
}

/* A free whose pfn range holds mapped blocks smaller than itself: free each. */
static bool free_smaller(struct rp_ctx *c, uint64_t k, unsigned order)
{
	bool any = false;
	for (uint64_t i = 0; i < (1ull << order) && k + i < c->nr_kmap;) {
		struct rp_kmap *e = &c->kmap[k + i];
		if (e->kind == KM_NONE) {
			i++;
			continue;
		}
		any = true;
		uint64_t step = 1ull << e->order;
		free_mapped(c, k + i);
		i += step;
	}
	return any;
}

static enum rp_free_class free_traced(struct rp_ctx *c, uint64_t k, unsigned order)
{
	struct rp_kmap *e = &c->kmap[k];
	if (e->kind != KM_NONE && e->order == order) {
		enum rp_free_class cls = e->kind == KM_LIVE ? RPF_TRACED : RPF_FAILED;
		free_mapped(c, k);
		return cls;
	}
	if (e->kind != KM_NONE && e->order > order) { /* the head of a split THP */
		split_mapped(c, k, e->order, order);
		enum rp_free_class cls = e->kind == KM_LIVE ? RPF_SPLIT : RPF_FAILED;
		free_mapped(c, k);
		return cls;
	}
	uint64_t h = covering(c, k, order);
	if (h != UINT64_MAX) { /* a tail page of a split THP */
		enum rp_free_class cls = c->kmap[h].kind == KM_LIVE ? RPF_SPLIT : RPF_FAILED;
		split_mapped(c, h, c->kmap[h].order, order);
		free_mapped(c, k);
		return cls;
	}
	if (e->kind != KM_NONE && free_smaller(c, k, order))
		return RPF_TRACED;
	return RPF_COUNT;
}

/*
 * The traced block at k lives on where the kernel's compaction moved it, a
 * pfn the trace does not name (mm_compaction_isolate_freepages gives a range
 * and a count): it joins the memory whose kernel pfn is unknown, as if
 * allocated before tracing, and a later free of an unknown pfn gives it
 * back. In the pool it stays where it is: pagealloc's own compaction placed it.
 */
static void keep_moved(struct rp_ctx *c, uint64_t k)
{
	struct rp_kmap *e = &c->kmap[k];
	if (e->kind == KM_LIVE) {
		c->pre[e->ppfn] = (uint8_t)(e->order + 1);
		rp_queue_moved(c, e->ppfn, e->order);
		memset(c->pre_miss, 0, sizeof c->pre_miss);
		if (!e->kernel) /* movable: give_owner() made the replay its owner */
			pa_set_owner(c->pool, pa_pfn_to_page(c->pool, e->ppfn), c->owner,
			             RP_COOKIE_PRE);
		else
			rp_set_bit(c->pre_kernel, e->ppfn >> c->pb_order);
	}
	e->kind = KM_NONE;
}

/* The old page of a page compaction moved: the allocation is kept, under no kernel pfn. */
static void move_traced(struct rp_ctx *c, uint64_t k, unsigned order)
{
	struct rp_kmap *e = &c->kmap[k];
	if (e->kind != KM_NONE && e->order > order) /* a piece of a larger block */
		split_mapped(c, k, e->order, order);
	uint64_t h = e->kind == KM_NONE ? covering(c, k, order) : UINT64_MAX;
	if (h != UINT64_MAX)
		split_mapped(c, h, c->kmap[h].order, order);
	if (e->kind != KM_NONE && e->order == order)
		keep_moved(c, k);
	/* Pre-trace memory stays pre-trace; the move changes nothing the replay knows. */
}

/*
 * The kernel set frames up late (deferred_grow_zone(): a section, freed a
 * max-order block at a time): the pool sets up as far (its chunks are
 * sections too), unless its own allocations that ran short did already.
 */
static void lazy_grow(struct rp_ctx *c, uint64_t k, unsigned order)
{
	c->res->deferred_grown += pa_deferred_grow(c->pool, k + (1ull << order) - 1);
}

/*
 * Building the starting state allocates every frame: none of the part the
 * kernel had not set up yet may be (ctl deferred_on_demand). Before it the
 * pool is set up as far as the kernel's was; after it, allocations that run
 * short set up more, as the kernel's do.
 */
static void lazy_building(struct rp_ctx *c, bool on)
{
	if (!c->lazy_hi || !c->pool)
		return;
	pa_ctl_write(c->pool, "deferred_on_demand", on ? "0" : "1");
	if (on)
		pa_deferred_grow(c->pool, c->lazy_lo - 1);
}

static void do_free(struct rp_ctx *c, const struct rp_event *ev)
{
	uint64_t k = ev->pfn;
	c->res->frees++;
	enum rp_free_class cls = RPF_UNMATCHED;
	if (k < c->nr_kmap && RP_FREE_KIND(ev->arg) == RP_FREE_MIGRATED) {
		move_traced(c, k, ev->order);
		cls = RPF_MIGRATED;
	} else if (k < c->nr_kmap && RP_FREE_KIND(ev->arg) == RP_FREE_UNUSED) {
		cls = RPF_UNUSED; /* pagealloc never took it */
	} else if (k < c->nr_kmap) {
		cls = free_traced(c, k, ev->order);
		/*
		 * A page compaction moved one to (in a range its free scanner
		 * printed, or taken from the buddy without a line), or one
		 * allocated before tracing.
		 */
		bool moved_to = rp_bit(c->ctarget, k) || (ev->arg & RP_FREE_FROM_BUDDY);
		if (cls != RPF_COUNT) {
			rp_set_bit(c->freed, k);
		} else if (!moved_to && rp_bit(c->freed, k)) {
			/*
			 * The trace freed this block and never allocated it again: the
			 * kernel did, without an mm_page_alloc (alloc_pages_bulk(),
			 * vmalloc's). It was free here all along: nothing to free.
			 */
			c->freed[k >> 3] &= (uint8_t) ~(1u << (k & 7));
			cls = RPF_UNTRACED;
			give_held(c, 1ull << ev->order);
		} else if (k >= c->lazy_lo && k < c->lazy_hi) {
			cls = RPF_DEFERRED;
			lazy_grow(c, k, ev->order);
		} else if (cls == RPF_COUNT) {
			enum rp_pre_found found = moved_to && rp_free_moved(c, k, ev->order) ?
			                                  RP_PRE_ELSEWHERE :
			                                  rp_free_pre(c, k, ev->order);
			cls = found == RP_PRE_NONE ? RPF_UNMATCHED :
			      moved_to             ? RPF_COMPACTION :
			                             RPF_PRE_TRACE;
			c->res->pre_elsewhere += cls == RPF_PRE_TRACE && found == RP_PRE_ELSEWHERE;
		}
	}
	c->res->free_class[cls]++;
}

static void do_isolate_free(struct rp_ctx *c, const struct rp_event *ev)
{
	for (uint64_t k = ev->pfn; k < ev->arg && k < c->nr_kmap; k++)
		if (c->kmap[k].kind == KM_NONE)
			rp_set_bit(c->ctarget, k);
}

/* ---------------------------------------------------------------------- */
/* The loop                                                                */
/* ---------------------------------------------------------------------- */

static void validate(struct rp_ctx *c)
{
	char err[256];
	c->res->validations++;
	if (pa_validate(c->pool, err, sizeof err) != 0) {
		if (!c->res->validate_failures++)
			snprintf(c->res->first_validate_error, sizeof c->res->first_validate_error,
			         "%s", err);
	}
}

static double clock_s(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/*
 * kswapd's reclaim: ZONE_RECLAIM_ACTIVE on (zone/<N>/reclaim_active), and
 * the end of a pass ends the watermark boosts from before it. Every zone of
 * the pool: the pool has the traced machine's one node.
 */
void rp_ctl_zones(struct rp_ctx *c, const char *knob, const char *value)
{
	for (unsigned z = 0, n = pa_zone_count(c->pool); z < n; z++) {
		char path[64];
		snprintf(path, sizeof path, "zone/%u/%s", z, knob);
		if (pa_ctl_write(c->pool, path, value) != 0)
			break;
	}
}

static void set_reclaim(struct rp_ctx *c, bool on)
{
	c->reclaim_on = on;
	c->res->reclaim_changes++;
	rp_ctl_zones(c, "reclaim_active", on ? "1" : "0");
}

/*
 * Linux keeps ZONE_RECLAIM_ACTIVE set for one balance_pgdat(): from
 * mm_vmscan_balance_pgdat_begin to _end where the trace has them (7.x).
 * Without them, from kswapd's wake, which it prints before each
 * balance_pgdat(), to just after its last line before its next wake or its
 * sleep (RP_RECLAIM_IDLE, which the parser puts there).
 */
static void on_reclaim(struct rp_ctx *c, enum rp_reclaim what)
{
	if (what == RP_RECLAIM_BEGIN || what == RP_RECLAIM_END)
		c->seen_balance = true;
	else if (c->seen_balance)
		return;
	bool on = what == RP_RECLAIM_BEGIN || what == RP_RECLAIM_WAKE;
	if (on != c->reclaim_on)
		set_reclaim(c, on);
}

/* A run of the vmstat worker the trace shows: one more clue to the jiffies' second. */
static void learn_tick(struct rp_tick *t, uint64_t now)
{
	uint64_t frac = now % VMSTAT_INTERVAL_NS;
	unsigned bin = (unsigned)(frac / (VMSTAT_INTERVAL_NS / RP_TICK_BINS));
	if (!t->runs[bin]++ || frac < t->first[bin])
		t->first[bin] = frac;
	if (!t->known || t->runs[bin] > t->runs[t->best])
		t->best = bin;
	/* Runs on time straddle the second: the bin before may hold the earliest. */
	unsigned prev = (t->best + RP_TICK_BINS - 1) % RP_TICK_BINS;
	t->phase = t->runs[prev] ? t->first[prev] : t->first[t->best];
	t->known = true;
}

/*
 * When the worker that ran at `now` runs next: Linux queues it again with
 * round_jiffies_relative(HZ), a second on, rounded to a whole second of
 * jiffies: down when within a quarter second past one, else up. So a run
 * late by more than a quarter second is followed by one almost two seconds
 * on. Without a run in the trace to place the seconds, a second on.
 */
static uint64_t vmstat_due(const struct rp_tick *t, uint64_t now)
{
	const uint64_t s = VMSTAT_INTERVAL_NS;
	uint64_t due = now + s;
	if (!t->known)
		return due;
	uint64_t rem = (due + s - t->phase) % s;
	return rem < s / 4 ? due - rem : due - rem + s;
}

/*
 * Did the run at `now` come for the same whole second of jiffies as the one
 * at `last` (late, as a deferrable timer's may be)? Without the seconds
 * placed, runs within half a second are taken as one.
 */
static bool same_slot(const struct rp_tick *t, uint64_t last, uint64_t now)
{
	const uint64_t s = VMSTAT_INTERVAL_NS;
	if (!t->known)
		return now - last < s / 2;
	return (last + s - t->phase) / s == (now + s - t->phase) / s;
}

/*
 * Linux 6.7's vmstat worker decays each CPU's per-CPU high about once a
 * second (decay_pcp_high()). The trace shows a run where it gave pages back
 * (RP_DECAY), which places the jiffies' seconds and that CPU's run; one for
 * the same second as the last is that pass going on, or a pass already made
 * here (on time, where the kernel's came late). A pass due here that would
 * give pages back waits for the trace's: had the kernel's run with lists as
 * full, the trace would show it (Linux 6.18, a busy CPU's worker went 8 s
 * without a pass while its lists stayed full).
 */
static void vmstat_worker(struct rp_ctx *c, unsigned cpu, bool seen)
{
	if (cpu >= RP_MAX_CPUS)
		return;
	if (seen)
		learn_tick(&c->tick, c->now_ns);
	bool run = seen ? !same_slot(&c->tick, c->decay_last[cpu], c->now_ns) :
	                  c->now_ns >= c->decay_due[cpu];
	if (run && !seen && pa_pcp_decay_frames(c->pool, cpu) > 0) {
		c->decay_due[cpu] = vmstat_due(&c->tick, c->now_ns);
		return;
	}
	if (seen || run) {
		c->decay_last[cpu] = c->now_ns;
		c->decay_due[cpu] = vmstat_due(&c->tick, c->now_ns);
	}
	if (run) {
		pa_pcp_decay(c->pool, cpu);
		c->res->decays++;
	}
}

/*
 * Every CPU's worker, due or shown, at this event. A CPU with no allocator
 * event for seconds is not idle to its timers: the worker's timer is
 * deferrable, but interrupts and other work wake the CPU, and the kernel's
 * own figures show it on time (Linux 6.18, a CPU without an allocator event
 * for 4 s at a stretch: its high at the snapshot is the one of a decay a
 * second, not of a decay at each of its events).
 */
static void vmstat_workers(struct rp_ctx *c, const struct rp_event *ev)
{
	vmstat_worker(c, ev->cpu, ev->type == RP_DECAY);
	if (ev->cpu < RP_MAX_CPUS && c->decay_due[ev->cpu] < c->decay_next)
		c->decay_next = c->decay_due[ev->cpu];
	if (c->now_ns < c->decay_next)
		return;
	uint64_t next = UINT64_MAX;
	for (unsigned cpu = 0; cpu < c->nr_cpus; cpu++) {
		vmstat_worker(c, cpu, false);
		next = c->decay_due[cpu] < next ? c->decay_due[cpu] : next;
	}
	c->decay_next = next;
}

/*
 * The kernel refills a list only when it is empty (__rmqueue_pcplist()).
 * At a list's first refill, what the pool's list still holds is what the
 * starting state stocked there past the kernel's (it knows only each CPU's
 * total): it goes back to the buddy, so that the pool refills as the
 * kernel did. Later refills are evidence only: from then on the lists
 * follow the pool's own rules. A run of one line is no sure refill.
 */
static void first_refill(struct rp_ctx *c, const struct rp_event *ev)
{
	int z = ev->arg >= 2 ? zone_of(c->pool, ev->pfn) : -1;
	struct pa_zone_info zi;
	uint8_t *seen = NULL;
	if (z >= 0 && z < PA_ZONE_COUNT && ev->cpu < RP_MAX_CPUS && ev->order < RP_PCP_ORDERS &&
	    ev->mt < RP_PCP_TYPES && pa_zone_info(c->pool, (unsigned)z, &zi) == 0)
		seen = &c->refilled[z][ev->cpu][ev->order];
	long given = 0;
	if (seen && !(*seen & 1u << ev->mt)) {
		*seen |= (uint8_t)(1u << ev->mt);
		given = pa_drain_list(c->pool, zi.node, zi.type, ev->cpu, ev->order, ev->mt);
	}
	if (given <= 0) {
		c->evidence_only++; /* nothing to give back: the event changed nothing */
		return;
	}
	c->res->start_pcp_lists++;
	c->res->start_pcp_excess += (uint64_t)given;
}

static void do_event(struct rp_ctx *c, const struct rp_event *ev)
{
	if (ev->type == RP_EXTFRAG || ev->type == RP_STOCK) {
		c->evidence_only++; /* the starting state's: the allocation or drain acts */
		return;
	}
	if (ev->type == RP_REFILL) {
		first_refill(c, ev);
		return;
	}
	c->cpu = ev->cpu;
	c->now_ns = ev->ts_ns;
	vmstat_workers(c, ev);
	switch (ev->type) {
	case RP_ALLOC:
		do_alloc(c, ev);
		break;
	case RP_ALLOC_FAILED:
		c->res->allocs++;
		do_alloc_failed(c, ev);
		break;
	case RP_FREE:
		do_free(c, ev);
		break;
	case RP_MARK:
		c->res->marks++;
		break;
	case RP_KCOMPACTD: {
		double t0 = now_s();
		c->res->kcompactd_wakes++;
		pa_kcompactd_wake(c->pool, (int)ev->arg, ev->order); /* the kernel's order */
		pa_kcompactd_run(c->pool, (int)ev->arg);
		c->res->compact_seconds += now_s() - t0;
		break;
	}
	case RP_PROACTIVE: { /* Linux's compact_node(pgdat, true): every zone, the whole of it */
		double t0 = now_s();
		c->res->proactive++;
		pa_compact(c->pool, (int)ev->arg);
		c->res->compact_seconds += now_s() - t0;
		break;
	}
	case RP_COMPACT_MEMORY: {
		double t0 = now_s();
		c->res->compact_memory++;
		pa_compact(c->pool, -1);
		c->res->compact_seconds += now_s() - t0;
		break;
	}
	case RP_ISOLATE_FREE:
		do_isolate_free(c, ev);
		break;
	case RP_RECLAIM:
		on_reclaim(c, (enum rp_reclaim)ev->arg);
		break;
	case RP_DRAIN:
		c->res->drains++;
		if (ev->arg == RP_DRAIN_ALL)
			pa_drain_all(c->pool);
		else
			drain_local_zone(c->pool, ev->pfn);
		break;
	default:
		break;
	}
}

/* Snapshots are taken before the first event at or after their uptime. */
static void place_snapshots(struct rp_ctx *c)
{
	const struct rp_trace *t = c->trace;
	double skew = rp_clock_skew(c->m, t); /* the snapshots' clock, on the trace's */
	for (unsigned s = 0; s < c->m->nr_snapshots; s++) {
		struct rp_snapshot *sn = &c->m->snap[s];
		double up = sn->kernel.uptime - skew;
		uint64_t at = sn->kernel.uptime < 0 ? UINT64_MAX :
		              up > 0                ? (uint64_t)(up * 1e9) :
		                                      0;
		size_t lo = 0, hi = t->nr;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (t->ev[mid].ts_ns < at)
				lo = mid + 1;
			else
				hi = mid;
		}
		sn->at_event = lo;
		sn->taken = false;
	}
}

static void take_snapshots(struct rp_ctx *c, size_t i)
{
	for (unsigned s = 0; s < c->m->nr_snapshots; s++) {
		struct rp_snapshot *sn = &c->m->snap[s];
		if (!sn->taken && sn->at_event <= i) {
			rp_model_state(c, &sn->model);
			rp_model_taint(c, &sn->model);
			sn->taken = true;
		}
	}
}

/* Fallbacks (claims and steals) and zone-lock acquisitions so far. */
static void read_counts(struct rp_ctx *c, uint64_t *fallbacks, uint64_t *lock)
{
	uint64_t claim = 0, steal = 0;
	*lock = 0;
	pa_vmstat_read(c->pool, "pgalloc_fallback_claim", &claim);
	pa_vmstat_read(c->pool, "pgalloc_fallback_steal", &steal);
	pa_vmstat_read(c->pool, "zone_lock_acquired", lock);
	*fallbacks = claim + steal;
}

static void run_events(struct rp_ctx *c)
{
	const struct rp_trace *t = c->trace;
	uint64_t vevery = c->opt->validate_every, severy = c->opt->series_every;
	if (vevery == RP_VALIDATE_AUTO)
		vevery = c->nr_frames > RP_VALIDATE_MIN ? c->nr_frames : RP_VALIDATE_MIN;
	if (c->opt->want_series && !severy)
		severy = t->nr / 300 ? t->nr / 300 : 1;
	double busy = 0, cpu = 0;
	size_t chunk = 65536;
	for (size_t i = 0; i < t->nr;) {
		size_t end = i + chunk < t->nr ? i + chunk : t->nr;
		/* Stop at the next snapshot, validation or series point. */
		for (unsigned s = 0; s < c->m->nr_snapshots; s++)
			if (!c->m->snap[s].taken && c->m->snap[s].at_event > i &&
			    c->m->snap[s].at_event < end)
				end = c->m->snap[s].at_event;
		if (vevery && (i / vevery + 1) * vevery < end)
			end = (i / vevery + 1) * vevery;
		if (severy && (i / severy + 1) * severy < end)
			end = (i / severy + 1) * severy;
		take_snapshots(c, i);
		double s0 = now_s(), c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
		for (; i < end; i++)
			do_event(c, rp_pass_event(t, i));
		busy += now_s() - s0;
		cpu += clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
		if (vevery && i % vevery == 0)
			validate(c);
		if (severy && i % severy == 0)
			rp_sample(c, i);
		if (c->opt->progress)
			c->opt->progress("replaying", (double)i / (double)t->nr);
	}
	take_snapshots(c, t->nr);
	uint64_t fallbacks, lock;
	read_counts(c, &fallbacks, &lock);
	c->res->fallbacks = fallbacks - c->start_fallbacks;
	c->res->zone_lock = lock - c->start_zone_lock;
	/* Every trace event counts: those the loop does not act on were handled when parsed. */
	uint64_t events = 0;
	for (unsigned n = 0; n < RPN_COUNT; n++)
		events += t->per_name[n];
	c->res->events = events;
	c->res->actions = t->nr - c->evidence_only;
	c->res->seconds = busy;
	c->res->events_per_sec = busy > 0 ? (double)events / busy : 0;
	c->res->cpu_seconds = cpu;
	c->res->events_per_cpu_sec = cpu > 0 ? (double)events / cpu : 0;
}

/* ---------------------------------------------------------------------- */
/* Boot and run                                                            */
/* ---------------------------------------------------------------------- */

/* Does a token after `from` in line set the key of the token at tok (its first klen bytes)? */
static bool set_again(const char *from, const char *tok, size_t klen)
{
	for (const char *s = from; *s;) {
		s += strspn(s, " ");
		if (strncmp(s, tok, klen) == 0 && s[klen] == '=')
			return true;
		s += strcspn(s, " ");
	}
	return false;
}

/*
 * The pool refuses a key given twice: where the options set a key of the
 * machine's line again, keep the last (memhole=, memreserve= and cma= add to lists).
 */
static void keep_last_keys(char *line)
{
	char out[1024];
	size_t n = 0;
	for (const char *s = line; *s;) {
		s += strspn(s, " ");
		size_t len = strcspn(s, " "), klen = strcspn(s, "= ");
		bool list = (klen == 7 && !strncmp(s, "memhole", 7)) ||
		            (klen == 10 && !strncmp(s, "memreserve", 10)) ||
		            (klen == 3 && !strncmp(s, "cma", 3));
		if (len && (list || !set_again(s + len, s, klen)) && n + len + 1 < sizeof out)
			n += (size_t)snprintf(out + n, sizeof out - n, "%s%.*s", n ? " " : "",
			                      (int)len, s);
		s += len;
	}
	out[n] = '\0';
	strcpy(line, out);
}

static int boot(struct rp_ctx *c)
{
	char err[512], line[1024];
	const struct rp_options *o = c->opt;
	struct pa_platform plat = {
		.ctx = c, .cpu_id = plat_cpu, .now_ns = plat_now, .report = plat_report
	};
	if (o->boot)
		snprintf(line, sizeof line, "%s", o->boot);
	else
		rp_machine_boot_line(c->m, c->trace, line, sizeof line);
	rp_machine_lazy_range(c->m, &c->lazy_lo, &c->lazy_hi);
	/* kcompactd runs when the trace says it woke; with a ZONE_DMA when the pool has one. */
	size_t n = strlen(line);
	snprintf(line + n, sizeof line - n, " kcompactd=manual%s%s%s%s%s",
	         c->kernel_has_dma ? " zone_dma=1" : "", o->linux_ver ? " linux=" : "",
	         o->linux_ver ? o->linux_ver : "", o->boot_extra ? " " : "",
	         o->boot_extra ? o->boot_extra : "");
	keep_last_keys(line);
	int rc = pa_boot(line, &plat, &c->pool, err, sizeof err);
	const char *dma = c->kernel_has_dma ? strstr(line, " zone_dma=1") : NULL;
	if (rc && dma) {
		/*
		 * Without ZONE_DMA (huge pageblocks cannot hold its 16 MiB) the
		 * kernel's DMA zone is part of DMA32. If the pool fails to boot
		 * that way too, the first line and its error stand.
		 */
		char alt[sizeof line], alt_err[sizeof err];
		snprintf(alt, sizeof alt, "%.*s%s", (int)(dma - line), line, dma + 11);
		if (pa_boot(alt, &plat, &c->pool, alt_err, sizeof alt_err) == 0) {
			rc = 0;
			memcpy(line, alt, sizeof line);
		}
	}
	snprintf(c->res->boot, sizeof c->res->boot, "%s", line);
	if (rc) {
		fprintf(stderr, "pagealloc replay: boot \"%s\": %s\n", line, err);
		return -1;
	}
	/*
	 * The kernel's deferred init was over long before tracing began; left
	 * running, the pool's threads would race the replay (their end resets
	 * the watermarks), and two replays of one trace could differ.
	 */
	pa_deferred_init_wait(c->pool);
	/* Compaction where the kernel's ran: the trace says where (alloc_as_kernel). */
	pa_ctl_write(c->pool, "compaction/direct", "0");
	/* The kernel's drains after direct reclaim are in the trace (RP_DRAIN). */
	pa_ctl_write(c->pool, "compaction/direct_drain", "0");
	/* The trace's kswapd ends the watermark boosts (set_reclaim()). */
	pa_ctl_write(c->pool, "kswapd_external", "1");
	/* Freed THPs wait on the per-CPU lists, as the kernel's do. */
	pa_ctl_write(c->pool, "pcp/huge_direct", "0");
	/* Refills no larger than the kernel's (batch << 5 at most). */
	pa_ctl_write(c->pool, "pcp/stream_refill", "0");
	/* Each CPU's high decays on the trace's clock (vmstat_worker()). */
	pa_ctl_write(c->pool, "pcp/decay_external", "1");
	pa_ctl_read(c->pool, "linux", c->res->linux_ver, sizeof c->res->linux_ver);
	pa_ctl_read(c->pool, "pcp/rules", c->res->pcp_rules, sizeof c->res->pcp_rules);
	c->res->linux_ver[strcspn(c->res->linux_ver, "\n")] = 0;
	c->res->pcp_rules[strcspn(c->res->pcp_rules, "\n")] = 0;
	for (unsigned i = 0; i < o->nr_ctl; i++) {
		char path[256];
		const char *eq = strchr(o->ctl[i], '=');
		snprintf(path, sizeof path, "%.*s", eq ? (int)(eq - o->ctl[i]) : 0, o->ctl[i]);
		if (!eq || pa_ctl_write(c->pool, path, eq + 1) != 0) {
			fprintf(stderr, "pagealloc replay: --ctl %s: refused\n", o->ctl[i]);
			return -1;
		}
	}
	return 0;
}

/*
 * The kernel-pfn map, its pages faulted in at once: a snapshot reads it
 * whole, and a first read of untouched memory faults a page at a time (on a
 * 24 GiB machine's 52 MB, 0.1 s of a 0.65 s replay). NULL on failure.
 */
static struct rp_kmap *kmap_alloc(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static int alloc_maps(struct rp_ctx *c)
{
	struct pa_config cfg;
	pa_get_config(c->pool, &cfg);
	c->max_order = cfg.max_order;
	c->pb_order = cfg.pageblock_order;
	c->nr_frames = cfg.total_pages;
	c->nr_cpus = cfg.nr_cpus < RP_MAX_CPUS ? cfg.nr_cpus : RP_MAX_CPUS;
	c->nr_kmap = c->trace->max_pfn > cfg.total_pages ? c->trace->max_pfn : cfg.total_pages;
	c->kmap_bytes = (c->nr_kmap + (1ull << cfg.max_order)) * sizeof *c->kmap;
	c->kmap = kmap_alloc(c->kmap_bytes);
	c->pre = calloc(c->nr_frames, 1);
	c->pre_list = -1;
	c->ctarget = calloc(c->nr_kmap / 8 + 1, 1);
	c->freed = calloc(c->nr_kmap / 8 + 1, 1);
	c->pre_kernel = calloc((c->nr_frames >> cfg.pageblock_order) / 8 + 1, 1);
	struct pa_owner_ops ops = {
		.name = "replay", .ctx = c, .migrate = owner_migrate, .split = owner_split
	};
	c->owner = pa_owner_register(c->pool, &ops);
	return c->kmap && c->pre && c->ctarget && c->freed && c->pre_kernel && c->owner > 0 ? 0 :
	                                                                                      -1;
}

int rp_replay(const struct rp_trace *t, struct rp_machine *m, const struct rp_options *opt,
              struct rp_result *res)
{
	struct rp_ctx *c = calloc(1, sizeof *c);
	if (!c)
		return -1;
	memset(res, 0, sizeof *res);
	*c = (struct rp_ctx){ .trace = t, .m = m, .opt = opt, .res = res };
	c->kernel_has_dma = m->nr_snapshots && strcmp(m->snap[0].kernel.zone[0].name, "DMA") == 0;
	int rc = boot(c);
	if (rc == 0)
		rc = alloc_maps(c);
	lazy_building(c, true);
	if (rc == 0)
		rc = rp_start_state(c);
	lazy_building(c, false);
	if (rc == 0) {
		place_snapshots(c);
		/* What the trace did, not what building its starting state took. */
		read_counts(c, &c->start_fallbacks, &c->start_zone_lock);
		run_events(c);
		validate(c);
		uint64_t bad = 0;
		pa_vmstat_read(c->pool, "bad_page", &bad);
		res->bad_page = bad;
		res->map_errors = c->map_errors;
		res->realloc_live = c->realloc_live;
		res->moved = c->moved;
		res->untraced_max = c->max_held;
		if (opt->map_path && cli_map(c->pool, opt->map_path, NULL))
			rc = -1;
	}
	if (c->pool)
		pa_shutdown(c->pool);
	if (c->kmap)
		munmap(c->kmap, c->kmap_bytes);
	free(c->pre), free(c->ctarget), free(c->pre_kernel), free(c->freed);
	free(c->held);
	rp_moved_free(c);
	free(c);
	return rc;
}
