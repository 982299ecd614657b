/* SPDX-License-Identifier: MIT */
/*
 * What a replay prints: the kernel and pagealloc side by side at every
 * snapshot (text and JSON), --series as JSON, --svg as a picture of
 * fragmentation over time, and the lkp-ncompare-style table of several runs.
 */
#define _GNU_SOURCE
#include "replay.h"

#include "../../tests/minijson.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PB_ORDER_X86 9 /* the pageblock order of every x86-64 trace */

const char *const rp_free_class_names[RPF_COUNT] = {
#define X(id, name) name,
	RP_FREE_CLASSES(X)
#undef X
};

static const char *const mt_short[RP_NR_MT] = { "Unmovable",  "Movable", "Reclaimable",
	                                        "HighAtomic", "CMA",     "Isolate" };

/* ---------------------------------------------------------------------- */
/* Figures of a state                                                      */
/* ---------------------------------------------------------------------- */

/* Orders of a state (or the larger of two), never past the arrays. */
static unsigned orders_of(const struct rp_state *a, const struct rp_state *b)
{
	unsigned n = b && b->nr_orders > a->nr_orders ? b->nr_orders : a->nr_orders;
	return n < RP_MAX_ORDERS ? n : RP_MAX_ORDERS;
}

uint64_t rp_state_free(const struct rp_state *st)
{
	uint64_t n = 0;
	for (unsigned z = 0; z < st->nr_zones; z++)
		for (unsigned o = 0; o < orders_of(st, NULL); o++)
			n += st->zone[z].free[o] << o;
	return n;
}

/* Free pages in blocks of at least order, and free blocks in all. */
static void suitable(const struct rp_state *st, unsigned order, uint64_t *pages, uint64_t *blocks,
                     uint64_t *suitable_blocks)
{
	*pages = *blocks = *suitable_blocks = 0;
	for (unsigned z = 0; z < st->nr_zones; z++)
		for (unsigned o = 0; o < orders_of(st, NULL); o++) {
			*blocks += st->zone[z].free[o];
			if (o >= order) {
				*pages += st->zone[z].free[o] << o;
				*suitable_blocks += st->zone[z].free[o] << (o - order);
			}
		}
}

double rp_state_unusable(const struct rp_state *st, unsigned order)
{
	uint64_t free = rp_state_free(st), ok, blocks, sb;
	suitable(st, order, &ok, &blocks, &sb);
	return free ? (double)(free - ok) / (double)free : 0;
}

double rp_state_extfrag(const struct rp_state *st, unsigned order)
{
	uint64_t free = rp_state_free(st), ok, blocks, sb;
	suitable(st, order, &ok, &blocks, &sb);
	if (!blocks)
		return 0;
	if (sb)
		return -1;
	/* Linux's fragmentation_index(): 1 - (1 + free/requested) / blocks. */
	return 1.0 - (1.0 + (double)free / (double)(1ull << order)) / (double)blocks;
}

double rp_state_tvd(const struct rp_state *a, const struct rp_state *b)
{
	uint64_t fa = rp_state_free(a), fb = rp_state_free(b);
	unsigned orders = orders_of(a, b);
	double d = 0;
	for (unsigned o = 0; o < orders; o++) {
		uint64_t pa = 0, pb = 0;
		for (unsigned z = 0; z < a->nr_zones; z++)
			pa += a->zone[z].free[o] << o;
		for (unsigned z = 0; z < b->nr_zones; z++)
			pb += b->zone[z].free[o] << o;
		d += fabs((fa ? (double)pa / (double)fa : 0) - (fb ? (double)pb / (double)fb : 0));
	}
	return d / 2;
}

static uint64_t state_pcp(const struct rp_state *st)
{
	uint64_t n = 0;
	for (unsigned z = 0; z < st->nr_zones; z++)
		n += st->zone[z].pcp;
	return n;
}

static uint64_t state_boost(const struct rp_state *st)
{
	uint64_t n = 0;
	for (unsigned z = 0; z < st->nr_zones; z++)
		n += st->zone[z].boost;
	return n;
}

static uint64_t state_pageblocks(const struct rp_state *st, unsigned mt)
{
	uint64_t n = 0;
	for (unsigned z = 0; z < st->nr_zones; z++)
		n += st->zone[z].pageblocks[mt];
	return n;
}

/*
 * The kernel's zones folded into the pool's: a pool without ZONE_DMA holds
 * the kernel's DMA zone in its DMA32, so a row per pool zone sums the kernel
 * zones that start inside it.
 */
static void fold_kernel(const struct rp_state *k, const struct rp_zone_state *pz, uint64_t *free,
                        unsigned orders)
{
	memset(free, 0, orders * sizeof *free);
	for (unsigned z = 0; z < k->nr_zones; z++)
		if (k->zone[z].start_pfn >= pz->start_pfn && k->zone[z].start_pfn < pz->end_pfn)
			for (unsigned o = 0; o < orders; o++)
				free[o] += k->zone[z].free[o];
}

/* ---------------------------------------------------------------------- */
/* The side-by-side table                                                  */
/* ---------------------------------------------------------------------- */

static void row_u(FILE *f, const char *what, uint64_t k, uint64_t p)
{
	fprintf(f, "  %-30s %14llu %14llu\n", what, (unsigned long long)k, (unsigned long long)p);
}

static void row_d(FILE *f, const char *what, double k, double p)
{
	fprintf(f, "  %-30s %14.3f %14.3f\n", what, k, p);
}

/* A figure only pagealloc's side has: the kernel's column says "-". */
static void row_model(FILE *f, const char *what, uint64_t p)
{
	fprintf(f, "  %-30s %14s %14llu\n", what, "-", (unsigned long long)p);
}

static void print_taint_rows(FILE *f, const struct rp_state *p)
{
	if (!p->taint_known)
		return;
	row_model(f, "1 GiB regions", p->regions);
	row_model(f, "regions tainted", p->tainted_regions);
	row_model(f, "pageblocks tainted", p->tainted_pageblocks);
	row_model(f, "movable pageblocks tainted", p->mixed_pageblocks);
}

static void print_zone_rows(FILE *f, const struct rp_state *k, const struct rp_state *p)
{
	unsigned orders = orders_of(k, p);
	for (unsigned z = 0; z < p->nr_zones; z++) {
		uint64_t kf[RP_MAX_ORDERS];
		fold_kernel(k, &p->zone[z], kf, orders);
		fprintf(f, "  free blocks per order, %s\n", p->zone[z].name);
		fprintf(f, "    kernel   ");
		for (unsigned o = 0; o < orders; o++)
			fprintf(f, " %6llu", (unsigned long long)kf[o]);
		fprintf(f, "\n    pagealloc");
		for (unsigned o = 0; o < orders; o++)
			fprintf(f, " %6llu", (unsigned long long)p->zone[z].free[o]);
		fprintf(f, "\n");
	}
}

static void print_snapshot(FILE *f, const struct rp_snapshot *s)
{
	const struct rp_state *k = &s->kernel, *p = &s->model;
	fprintf(f, "\n%s (uptime %.2f s, before event %zu)\n", s->name, k->uptime, s->at_event);
	fprintf(f, "  %-30s %14s %14s\n", "", "kernel", "pagealloc");
	row_u(f, "free pages", rp_state_free(k), rp_state_free(p));
	row_u(f, "per-CPU pages", state_pcp(k), state_pcp(p));
	row_u(f, "watermark boost", state_boost(k), state_boost(p));
	row_d(f, "unusable index, order 3", rp_state_unusable(k, 3), rp_state_unusable(p, 3));
	row_d(f, "unusable index, order 9", rp_state_unusable(k, 9), rp_state_unusable(p, 9));
	row_d(f, "extfrag index, order 3", rp_state_extfrag(k, 3), rp_state_extfrag(p, 3));
	row_d(f, "extfrag index, order 9", rp_state_extfrag(k, 9), rp_state_extfrag(p, 9));
	for (unsigned mt = 0; mt < RP_NR_MT; mt++) {
		char what[48];
		snprintf(what, sizeof what, "pageblocks %s", mt_short[mt]);
		if (state_pageblocks(k, mt) || state_pageblocks(p, mt))
			row_u(f, what, state_pageblocks(k, mt), state_pageblocks(p, mt));
	}
	print_taint_rows(f, p);
	print_zone_rows(f, k, p);
	fprintf(f, "  total variation distance of free pages by order: %.4f\n", rp_state_tvd(k, p));
}

/* What each row of a snapshot means, printed once before the first one. */
static void print_legend(FILE *f)
{
	static const char *const lines[] = {
		"free pages: frames on the buddy free lists (per-CPU pages not included)",
		"per-CPU pages: frames the CPUs' lists hold, free but not the zone's",
		"watermark boost: what fallbacks added to the zones' watermarks, not yet reclaimed",
		"unusable index, order N: share of free memory in blocks smaller than N "
		"(0 all usable, 1 none)",
		"extfrag index, order N: near 1 a failure at N is fragmentation, near 0 "
		"lack of memory; -1 the order is served",
		"pageblocks TYPE: pageblocks of each migratetype",
		"regions tainted: 1 GiB regions holding an unmovable or reclaimable allocation "
		"(pagealloc only; such a region never becomes a 1 GiB block)",
		"pageblocks tainted: pageblocks holding one; movable pageblocks tainted: of those, "
		"the ones typed movable (a fallback stole from them)",
		"free blocks per order: buddyinfo, one column per order from 0",
		"total variation distance: 0 when both hold free pages in the same orders, 1 "
		"when they share none",
	};
	fprintf(f, "\nwhat the rows say:\n");
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
		fprintf(f, "  %s\n", lines[i]);
}

/* The phase markers (tracing_mark_write) with their time and place in the trace. */
static void print_marks(FILE *f, const struct rp_trace *t)
{
	for (size_t i = 0; i < t->nr; i++)
		if (rp_pass_event(t, i)->type == RP_MARK)
			fprintf(f, "  %12.6f s  event %-8zu %s\n", (double)t->ev[i].ts_ns / 1e9, i,
			        t->marks[t->ev[i].arg]);
}

void rp_print_table(FILE *f, const struct rp_machine *m, const struct rp_result *r,
                    const struct rp_trace *t)
{
	fprintf(f, "boot: %s\n", r->boot);
	fprintf(f,
	        "kernel %s; Linux %s's allocator rules, per-CPU lists under %s's (pcp_rules=%s)\n",
	        m->release[0] ? m->release : "unknown", r->linux_ver, r->pcp_rules, r->pcp_rules);
	if (m->page_reporting)
		fprintf(f,
		        "free page reporting: the guest's balloon reports free blocks of order %u "
		        "and up to its hypervisor, taking them off the free lists for each report "
		        "with no trace event; a snapshot taken during one reads short of the events "
		        "(docs/replay.md)\n",
		        m->page_reporting_order);
	fprintf(f,
	        "events %llu (%llu acted on): allocations %llu, frees %llu; %.2f M events/s "
	        "(replay loop %.3f s, of which %.3f s compact_memory and kcompactd runs); "
	        "%.2f M events per second of its CPU time (%.3f s)\n",
	        (unsigned long long)r->events, (unsigned long long)r->actions,
	        (unsigned long long)r->allocs, (unsigned long long)r->frees,
	        r->events_per_sec / 1e6, r->seconds, r->compact_seconds,
	        r->events_per_cpu_sec / 1e6, r->cpu_seconds);
	fprintf(f, "frees by class:");
	for (unsigned i = 0; i < RPF_COUNT; i++)
		fprintf(f, " %s %llu", rp_free_class_names[i],
		        (unsigned long long)r->free_class[i]);
	fprintf(f,
	        "\nfailed in pagealloc, served by the kernel: %llu; failed by the kernel, served "
	        "by pagealloc: %llu of %llu\n",
	        (unsigned long long)r->failed_kernel_served,
	        (unsigned long long)r->kernel_failed_served,
	        (unsigned long long)r->kernel_failed_attempts);
	if (r->deferred_grown)
		fprintf(f,
		        "memory the kernel set up during the recording (deferred_grow_zone()): %llu "
		        "frames set up where the trace showed it\n",
		        (unsigned long long)r->deferred_grown);
	fprintf(f,
	        "held for allocations without an event (order-0 failures of the kernel the pool "
	        "served, a frame of each block it broke): %llu frames taken, %llu given back (their frees, allocations only the kernel "
	        "could serve), at most %llu at once\n",
	        (unsigned long long)r->untraced_taken, (unsigned long long)r->untraced_given,
	        (unsigned long long)r->untraced_max);
	fprintf(f,
	        "fallbacks: kernel %llu, pagealloc %llu; THPs served by the kernel %llu, by "
	        "pagealloc %llu, of %llu; zone lock taken %llu times; kswapd reclaim began or ended "
	        "%llu times; allocations retried with the watermark boosts ended %llu, with a "
	        "compaction the kernel did not run %llu\n",
	        (unsigned long long)t->per_name[RPN_MM_PAGE_ALLOC_EXTFRAG],
	        (unsigned long long)r->fallbacks, (unsigned long long)r->thp_kernel,
	        (unsigned long long)r->thp_served, (unsigned long long)r->thp_tried,
	        (unsigned long long)r->zone_lock, (unsigned long long)r->reclaim_changes,
	        (unsigned long long)r->boosts_ended, (unsigned long long)r->extra_compactions);
	fprintf(f, "bad pages %llu; pa_validate %llu runs, %llu failed%s%s\n",
	        (unsigned long long)r->bad_page, (unsigned long long)r->validations,
	        (unsigned long long)r->validate_failures, r->validate_failures ? ": " : "",
	        r->first_validate_error);
	fprintf(f,
	        "phase markers %llu, compact_memory %llu, kcompactd wakeups %llu, kcompactd "
	        "proactive passes %llu, per-CPU list drains %llu, per-CPU decays %llu, blocks "
	        "moved by pagealloc %llu\n",
	        (unsigned long long)r->marks, (unsigned long long)r->compact_memory,
	        (unsigned long long)r->kcompactd_wakes, (unsigned long long)r->proactive,
	        (unsigned long long)r->drains, (unsigned long long)r->decays,
	        (unsigned long long)r->moved);
	if (r->start_shortfall || r->map_errors || r->realloc_live || r->pre_elsewhere ||
	    r->start_pb_seen || r->start_pcp_lists || r->start_listed)
		fprintf(f,
		        "starting state: %llu free blocks placed as two halves; %llu of %llu "
		        "pageblocks the trace first shows unmovable or reclaimable typed so; %llu "
		        "frees of pre-trace memory found it elsewhere; %llu per-CPU frames at the "
		        "pfns the trace first drains them from; %llu per-CPU frames on %llu "
		        "lists given back at their first refill; map errors %llu; pfns "
		        "allocated again while live %llu\n",
		        (unsigned long long)r->start_shortfall,
		        (unsigned long long)r->start_pb_typed, (unsigned long long)r->start_pb_seen,
		        (unsigned long long)r->pre_elsewhere, (unsigned long long)r->start_listed,
		        (unsigned long long)r->start_pcp_excess,
		        (unsigned long long)r->start_pcp_lists, (unsigned long long)r->map_errors,
		        (unsigned long long)r->realloc_live);
	if (t->nr_marks) {
		fprintf(f, "phase markers:\n");
		print_marks(f, t);
	}
	if (m->nr_snapshots)
		print_legend(f);
	for (unsigned s = 0; s < m->nr_snapshots; s++)
		if (m->snap[s].taken)
			print_snapshot(f, &m->snap[s]);
}

/* ---------------------------------------------------------------------- */
/* JSON                                                                    */
/* ---------------------------------------------------------------------- */

static void json_side(FILE *f, const struct rp_state *st, const struct rp_state *zones, bool kernel)
{
	unsigned orders = orders_of(st, NULL);
	fprintf(f,
	        "{\"free\": %llu, \"pcp\": %llu, \"boost\": %llu, \"unusable\": {\"3\": %.4f, "
	        "\"9\": %.4f}, \"extfrag\": {\"3\": %.4f, \"9\": %.4f}, \"pageblocks\": {",
	        (unsigned long long)rp_state_free(st), (unsigned long long)state_pcp(st),
	        (unsigned long long)state_boost(st), rp_state_unusable(st, 3),
	        rp_state_unusable(st, 9), rp_state_extfrag(st, 3), rp_state_extfrag(st, 9));
	for (unsigned mt = 0; mt < RP_NR_MT; mt++)
		fprintf(f, "%s\"%s\": %llu", mt ? ", " : "", mt_short[mt],
		        (unsigned long long)state_pageblocks(st, mt));
	fprintf(f, "}");
	if (st->taint_known)
		fprintf(f,
		        ", \"regions\": %llu, \"tainted_regions\": %llu, \"tainted_pageblocks\": "
		        "%llu, \"mixed_pageblocks\": %llu",
		        (unsigned long long)st->regions, (unsigned long long)st->tainted_regions,
		        (unsigned long long)st->tainted_pageblocks,
		        (unsigned long long)st->mixed_pageblocks);
	fprintf(f, ", \"buddyinfo\": [");
	for (unsigned z = 0; z < zones->nr_zones; z++) {
		uint64_t kf[RP_MAX_ORDERS];
		const uint64_t *free = zones->zone[z].free;
		if (kernel) {
			fold_kernel(st, &zones->zone[z], kf, orders);
			free = kf;
		}
		fprintf(f, "%s{\"zone\": \"%s\", \"free\": [", z ? ", " : "", zones->zone[z].name);
		for (unsigned o = 0; o < orders; o++)
			fprintf(f, "%s%llu", o ? ", " : "", (unsigned long long)free[o]);
		fprintf(f, "]}");
	}
	fprintf(f, "]}");
}

static void json_escape(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++)
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	fputc('"', f);
}

void rp_print_json(FILE *f, const struct rp_machine *m, const struct rp_result *r,
                   const struct rp_trace *t)
{
	fprintf(f, "{\"boot\": ");
	json_escape(f, r->boot);
	fprintf(f, ", \"linux\": \"%s\", \"pcp_rules\": \"%s\"", r->linux_ver, r->pcp_rules);
	if (m->page_reporting)
		fprintf(f, ", \"page_reporting_order\": %u", m->page_reporting_order);
	fprintf(f,
	        ", \"events\": %llu, \"allocs\": %llu, \"frees\": %llu, \"failed_kernel_served\": "
	        "%llu, \"kernel_failed\": %llu, \"kernel_failed_served\": %llu, \"bad_page\": %llu, "
	        "\"validate_failures\": %llu, \"events_per_sec\": %.0f, \"events_per_cpu_sec\": %.0f, "
	        "\"kernel_fallbacks\": %llu, \"fallbacks\": %llu, \"thp_tried\": %llu, \"thp_kernel\": %llu, \"thp_served\": "
	        "%llu, \"zone_lock\": %llu, \"boosts_ended\": %llu, \"extra_compactions\": %llu, "
	        "\"untraced_taken\": %llu, "
	        "\"untraced_given\": %llu, \"untraced_max\": %llu, \"drains\": %llu, \"decays\": "
	        "%llu, \"compact_memory\": %llu, \"kcompactd_wakes\": %llu, \"kcompactd_proactive\": "
	        "%llu, \"free_classes\": {",
	        (unsigned long long)r->events, (unsigned long long)r->allocs,
	        (unsigned long long)r->frees, (unsigned long long)r->failed_kernel_served,
	        (unsigned long long)r->kernel_failed_attempts,
	        (unsigned long long)r->kernel_failed_served, (unsigned long long)r->bad_page,
	        (unsigned long long)r->validate_failures, r->events_per_sec, r->events_per_cpu_sec,
	        (unsigned long long)t->per_name[RPN_MM_PAGE_ALLOC_EXTFRAG],
	        (unsigned long long)r->fallbacks, (unsigned long long)r->thp_tried,
	        (unsigned long long)r->thp_kernel, (unsigned long long)r->thp_served,
	        (unsigned long long)r->zone_lock, (unsigned long long)r->boosts_ended,
	        (unsigned long long)r->extra_compactions, (unsigned long long)r->untraced_taken,
	        (unsigned long long)r->untraced_given, (unsigned long long)r->untraced_max,
	        (unsigned long long)r->drains, (unsigned long long)r->decays,
	        (unsigned long long)r->compact_memory, (unsigned long long)r->kcompactd_wakes,
	        (unsigned long long)r->proactive);
	for (unsigned i = 0; i < RPF_COUNT; i++)
		fprintf(f, "%s\"%s\": %llu", i ? ", " : "", rp_free_class_names[i],
		        (unsigned long long)r->free_class[i]);
	fprintf(f,
	        "}, \"deferred_grown\": %llu, \"moved\": %llu, \"pre_trace_elsewhere\": %llu, "
	        "\"start_pageblocks_seen\": "
	        "%llu, \"start_pageblocks_typed\": %llu, \"start_pcp_excess\": %llu, "
	        "\"start_pcp_excess_lists\": %llu, \"start_listed\": %llu, \"marks\": [",
	        (unsigned long long)r->deferred_grown, (unsigned long long)r->moved,
	        (unsigned long long)r->pre_elsewhere, (unsigned long long)r->start_pb_seen,
	        (unsigned long long)r->start_pb_typed, (unsigned long long)r->start_pcp_excess,
	        (unsigned long long)r->start_pcp_lists, (unsigned long long)r->start_listed);
	bool any = false;
	for (size_t i = 0; i < t->nr; i++)
		if (rp_pass_event(t, i)->type == RP_MARK) {
			fprintf(f, "%s{\"t\": %.6f, \"event\": %zu, \"text\": ", any ? ", " : "",
			        (double)t->ev[i].ts_ns / 1e9, i);
			json_escape(f, t->marks[t->ev[i].arg]);
			fputc('}', f);
			any = true;
		}
	fprintf(f, "], \"snapshots\": [");
	bool first = true;
	for (unsigned s = 0; s < m->nr_snapshots; s++) {
		const struct rp_snapshot *sn = &m->snap[s];
		if (!sn->taken)
			continue;
		fprintf(f, "%s{\"name\": ", first ? "" : ", ");
		json_escape(f, sn->name);
		fprintf(f, ", \"kernel\": ");
		json_side(f, &sn->kernel, &sn->model, true);
		fprintf(f, ", \"pagealloc\": ");
		json_side(f, &sn->model, &sn->model, false);
		fprintf(f, ", \"tvd\": %.4f}", rp_state_tvd(&sn->kernel, &sn->model));
		first = false;
	}
	fprintf(f, "]}\n");
}

/* ---------------------------------------------------------------------- */
/* --series and --svg                                                      */
/* ---------------------------------------------------------------------- */

int rp_write_series(const char *path, const struct rp_result *r)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		return -1;
	}
	fprintf(f, "{\"boot\": ");
	json_escape(f, r->boot);
	fprintf(f, ", \"samples\": [");
	for (size_t i = 0; i < r->nr_series; i++) {
		const struct rp_sample *s = &r->series[i];
		fprintf(f,
		        "%s\n {\"t\": %.6f, \"event\": %zu, \"free\": %llu, \"pcp\": %llu, "
		        "\"unusable9\": %.4f, \"free_blocks\": [",
		        i ? "," : "", s->t, s->event, (unsigned long long)s->free,
		        (unsigned long long)s->pcp, s->unusable9);
		for (unsigned o = 0; o < r->nr_orders && o < RP_MAX_ORDERS; o++)
			fprintf(f, "%s%llu", o ? ", " : "", (unsigned long long)s->free_blocks[o]);
		fprintf(f, "], \"pageblocks\": {");
		for (unsigned mt = 0; mt < RP_NR_MT; mt++)
			fprintf(f, "%s\"%s\": %llu", mt ? ", " : "", mt_short[mt],
			        (unsigned long long)s->pageblocks[mt]);
		fprintf(f, "}}");
	}
	fprintf(f, "\n]}\n");
	return fclose(f) ? -1 : 0;
}

/* The unusable index at order 9 over time, phase markers as lines, kernel snapshots as dots. */
int rp_write_svg(const char *path, const struct rp_machine *m, const struct rp_result *r,
                 const struct rp_trace *t)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		return -1;
	}
	const double W = 900, H = 360, L = 60, R = 20, T = 30, B = 40;
	double t0 = t->nr ? (double)t->ev[0].ts_ns / 1e9 : 0;
	double t1 = t->nr ? (double)t->ev[t->nr - 1].ts_ns / 1e9 : 1;
	if (t1 <= t0)
		t1 = t0 + 1;
#define X(tv) (L + ((tv)-t0) / (t1 - t0) * (W - L - R))
#define Y(v)  (T + (1 - (v)) * (H - T - B))
	fprintf(f,
	        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
	        "font-family=\"sans-serif\" font-size=\"11\">\n",
	        W, H);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	fprintf(f,
	        "<text x=\"%.0f\" y=\"18\">unusable free index at order 9 over time: pagealloc "
	        "(line), kernel snapshots (dots)</text>\n",
	        L);
	fprintf(f, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n", L,
	        Y(0), W - R, Y(0));
	fprintf(f, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n", L,
	        Y(0), L, Y(1));
	for (int i = 0; i <= 4; i++)
		fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%.2f</text>\n", L - 4,
		        Y(i / 4.0) + 4, i / 4.0);
	fprintf(f,
	        "<text x=\"%.0f\" y=\"%.0f\">%.1f s</text><text x=\"%.0f\" y=\"%.0f\" "
	        "text-anchor=\"end\">%.1f s</text>\n",
	        L, H - 10, t0, W - R, H - 10, t1);
	for (size_t i = 0; i < t->nr; i++)
		if (rp_pass_event(t, i)->type == RP_MARK) {
			double x = X((double)t->ev[i].ts_ns / 1e9);
			/* "PHASE 6b ..." is labelled "6b"; another marker by its first word. */
			const char *mk = t->marks[t->ev[i].arg];
			if (strncmp(mk, "PHASE ", 6) == 0)
				mk += 6;
			fprintf(f,
			        "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" "
			        "stroke=\"#bbb\"/><text x=\"%.1f\" y=\"%.0f\" fill=\"#777\">%.*s</text>\n",
			        x, Y(0), x, Y(1), x + 2, Y(1) + 10, (int)strcspn(mk, " <&"), mk);
		}
	fprintf(f, "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.5\" points=\"");
	for (size_t i = 0; i < r->nr_series; i++)
		fprintf(f, "%.1f,%.1f ", X(r->series[i].t), Y(r->series[i].unusable9));
	fprintf(f, "\"/>\n");
	for (unsigned s = 0; s < m->nr_snapshots; s++) {
		const struct rp_snapshot *sn = &m->snap[s];
		double x = X(sn->kernel.uptime < t0 ? t0 :
		             sn->kernel.uptime > t1 ? t1 :
		                                      sn->kernel.uptime);
		fprintf(f,
		        "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#d62728\"><title>%s kernel "
		        "%.3f</title></circle>\n",
		        x, Y(rp_state_unusable(&sn->kernel, 9)), sn->name,
		        rp_state_unusable(&sn->kernel, 9));
	}
#undef X
#undef Y
	fprintf(f, "</svg>\n");
	return fclose(f) ? -1 : 0;
}

/* ---------------------------------------------------------------------- */
/* Compare (lkp ncompare style)                                            */
/* ---------------------------------------------------------------------- */

static double jnum(struct jv *v, const char *key)
{
	struct jv *x = v && v->type == J_OBJ ? jget(v, key) : NULL;
	return x && x->type == J_NUM ? x->num : NAN;
}

/* Free blocks of one order over a side's zones (buddyinfo); 0 past a zone's orders. */
static double zones_free(struct jv *buddyinfo, unsigned order)
{
	double sum = 0;
	for (size_t z = 0; buddyinfo->type == J_ARR && z < buddyinfo->n; z++) {
		struct jv *fr = jget(buddyinfo->items[z], "free");
		if (fr && fr->type == J_ARR && order < fr->n && fr->items[order]->type == J_NUM)
			sum += fr->items[order]->num;
	}
	return sum;
}

/* The most orders any run's pool has (the length of its buddyinfo rows). */
static unsigned most_orders(struct jv **docs, unsigned n)
{
	unsigned most = 0;
	for (unsigned i = 0; i < n; i++) {
		struct jv *list = jget(docs[i], "snapshots");
		struct jv *s = list && list->type == J_ARR && list->n ? list->items[0] : NULL;
		struct jv *p = s ? jget(s, "pagealloc") : NULL;
		struct jv *bi = p ? jget(p, "buddyinfo") : NULL;
		struct jv *z = bi && bi->type == J_ARR && bi->n ? bi->items[0] : NULL;
		struct jv *fr = z ? jget(z, "free") : NULL;
		if (fr && fr->type == J_ARR && fr->n > most)
			most = (unsigned)fr->n;
	}
	return most;
}

/*
 * One metric of one run: a top-level number, or "snapshot/side/key[/subkey]";
 * key "buddyinfo" with an order as subkey is the free blocks of that order.
 */
static double metric(struct jv *doc, const char *snap, const char *side, const char *key,
                     const char *sub)
{
	if (!snap)
		return jnum(doc, key);
	struct jv *list = jget(doc, "snapshots");
	for (size_t i = 0; list && list->type == J_ARR && i < list->n; i++) {
		struct jv *s = list->items[i], *name = jget(s, "name");
		if (!name || name->type != J_STR || strcmp(name->str, snap) != 0)
			continue;
		if (!side)
			return jnum(s, key);
		struct jv *sd = jget(s, side);
		struct jv *x = sd ? jget(sd, key) : NULL;
		if (x && x->type == J_ARR && sub)
			return zones_free(x, (unsigned)atoi(sub));
		return sub ? jnum(x, sub) : (x && x->type == J_NUM ? x->num : NAN);
	}
	return NAN;
}

static void compare_row(FILE *f, struct jv **docs, unsigned n, const char *label, const char *snap,
                        const char *side, const char *key, const char *sub)
{
	double base = metric(docs[0], snap, side, key, sub);
	fprintf(f, "%16.6g", base);
	for (unsigned i = 1; i < n; i++) {
		double v = metric(docs[i], snap, side, key, sub);
		if (isnan(base) || isnan(v) || base == 0)
			fprintf(f, "  %9s %14.6g", "", v);
		else
			fprintf(f, "  %+8.1f%% %14.6g", 100 * (v - base) / fabs(base), v);
	}
	fprintf(f, "  %s\n", label);
}

int rp_compare_texts(FILE *f, char **texts, const char **names, unsigned n)
{
	struct jv *docs[64];
	char err[256];
	if (n == 0 || n > 64)
		return -1;
	for (unsigned i = 0; i < n; i++) {
		docs[i] = jparse(texts[i], err, sizeof err);
		if (!docs[i]) {
			fprintf(stderr, "pagealloc compare: %s: not a replay's JSON: %s\n",
			        names[i], err);
			for (unsigned j = 0; j < i; j++)
				jfree(docs[j]);
			return -1;
		}
	}
	for (unsigned i = 0; i < n; i++) {
		struct jv *b = jget(docs[i], "boot");
		fprintf(f, "%s[%u] %s\n", i ? "" : "configurations:\n", i,
		        b && b->type == J_STR ? b->str : names[i]);
	}
	fprintf(f, "\n%16s", "[0]");
	for (unsigned i = 1; i < n; i++)
		fprintf(f, "  %9s %14s", "%change", "");
	fprintf(f, "\n");
	static const char *const top[] = { "events",
		                           "allocs",
		                           "frees",
		                           "failed_kernel_served",
		                           "kernel_failed",
		                           "kernel_failed_served",
		                           "fallbacks",
		                           "thp_served",
		                           "zone_lock",
		                           "bad_page",
		                           "validate_failures",
		                           "events_per_sec",
		                           "events_per_cpu_sec",
		                           "moved" };
	for (size_t i = 0; i < sizeof top / sizeof top[0]; i++)
		compare_row(f, docs, n, top[i], NULL, NULL, top[i], NULL);
	unsigned orders = most_orders(docs, n);
	struct jv *snaps = jget(docs[0], "snapshots");
	for (size_t s = 0; snaps && snaps->type == J_ARR && s < snaps->n; s++) {
		struct jv *nm = jget(snaps->items[s], "name");
		if (!nm || nm->type != J_STR)
			continue;
		char label[160];
		const char *sn = nm->str;
		snprintf(label, sizeof label, "%s.free", sn);
		compare_row(f, docs, n, label, sn, "pagealloc", "free", NULL);
		snprintf(label, sizeof label, "%s.pcp", sn);
		compare_row(f, docs, n, label, sn, "pagealloc", "pcp", NULL);
		snprintf(label, sizeof label, "%s.unusable9", sn);
		compare_row(f, docs, n, label, sn, "pagealloc", "unusable", "9");
		snprintf(label, sizeof label, "%s.extfrag9", sn);
		compare_row(f, docs, n, label, sn, "pagealloc", "extfrag", "9");
		static const char *const taint[] = { "tainted_regions", "tainted_pageblocks",
			                             "mixed_pageblocks" };
		for (size_t k = 0; k < sizeof taint / sizeof taint[0]; k++) {
			snprintf(label, sizeof label, "%s.%s", sn, taint[k]);
			compare_row(f, docs, n, label, sn, "pagealloc", taint[k], NULL);
		}
		static const char *const pbs[] = { "Unmovable", "Movable", "Reclaimable" };
		for (size_t k = 0; k < sizeof pbs / sizeof pbs[0]; k++) {
			snprintf(label, sizeof label, "%s.pageblocks.%s", sn, pbs[k]);
			compare_row(f, docs, n, label, sn, "pagealloc", "pageblocks", pbs[k]);
		}
		/* Free blocks from the pageblock order up: what a larger max_order changes. */
		for (unsigned o = PB_ORDER_X86; o < orders; o++) {
			char order[16];
			snprintf(order, sizeof order, "%u", o);
			snprintf(label, sizeof label, "%s.free_blocks.order%u", sn, o);
			compare_row(f, docs, n, label, sn, "pagealloc", "buddyinfo", order);
		}
		snprintf(label, sizeof label, "%s.tvd_vs_kernel", sn);
		compare_row(f, docs, n, label, sn, NULL, "tvd", NULL);
	}
	for (unsigned i = 0; i < n; i++)
		jfree(docs[i]);
	return 0;
}
