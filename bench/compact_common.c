/* SPDX-License-Identifier: MIT */
/*
 * The owner, counters, latency and figures the compaction workloads share
 * (compact_common.h).
 */
#define _GNU_SOURCE
#include "compact_common.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------- */
/* The pattern                                                             */
/* ---------------------------------------------------------------------- */

static uint64_t cw_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/*
 * Word k of frame `frame` (counted in the folio as allocated) is its tag + k:
 * one hash per frame keeps filling near memset speed, and a frame copied to
 * the wrong place, or not copied, still shows.
 */
static uint64_t cw_tag(uint64_t cookie, uint64_t frame)
{
	return cw_mix(cookie * 0x100000001b3ull + frame);
}

static void cw_fill(const struct cw_owner *o, struct pa_page *page, uint64_t cookie,
                    uint64_t frames)
{
	uint64_t *w = pa_page_address(o->pool, page);
	for (uint64_t f = 0; f < frames; f++, w += o->words_per_frame) {
		uint64_t tag = cw_tag(cookie, f);
		for (size_t k = 0; k < o->words_per_frame; k++)
			w[k] = tag + k;
	}
}

/* Does the folio at page hold frames first.. of the pattern? */
static bool cw_check_bytes(const struct cw_owner *o, const struct pa_page *page, uint64_t cookie,
                           uint64_t first, uint64_t frames)
{
	const uint64_t *w = pa_page_address(o->pool, page);
	for (uint64_t f = first; f < first + frames; f++, w += o->words_per_frame) {
		uint64_t tag = cw_tag(cookie, f);
		for (size_t k = 0; k < o->words_per_frame; k++)
			if (w[k] != tag + k)
				return false;
	}
	return true;
}

void cw_pattern_fill(const struct cw_owner *o, struct pa_page *page, uint64_t tag, uint64_t frames)
{
	if (o->backed)
		cw_fill(o, page, tag, frames);
}

bool cw_pattern_check(const struct cw_owner *o, const struct pa_page *page, uint64_t tag,
                      uint64_t frames)
{
	return !o->backed || cw_check_bytes(o, page, tag, 0, frames);
}

/* ---------------------------------------------------------------------- */
/* The owner                                                               */
/* ---------------------------------------------------------------------- */

/* The slot a cookie names (its low 32 bits, less one). */
static uint64_t cw_slot_of(uint64_t cookie)
{
	return (cookie & 0xffffffffu) - 1;
}

static pthread_mutex_t *cw_lock(struct cw_owner *o, uint64_t slot)
{
	return &o->lock[slot % CW_LOCKS];
}

/* The table's reference to old: the head, or a piece of a split folio; NULL if none. Lock held. */
static struct pa_page **cw_ref(struct cw_owner *o, struct cw_folio *f, struct pa_page *old)
{
	if (!f->page)
		return NULL;
	if (!f->pieces)
		return f->page == old ? &f->page : NULL;
	uint64_t n = 1ull << f->order, guess = pa_page_to_pfn(o->pool, old) - f->split_pfn;
	if (guess < n && f->pieces[guess] == old)
		return &f->pieces
		                [guess]; /* a piece's first move: it is still where the split left it */
	for (uint64_t i = 0; i < n; i++)
		if (f->pieces[i] == old)
			return &f->pieces[i];
	return NULL;
}

/*
 * Compaction asks to move a folio: the reference moves if the table still
 * names the old folio. Anything else (freed meanwhile) answers BUSY, and
 * the library puts the folio back or frees it.
 */
static enum pa_migrate_result cw_migrate(void *ctx, uint64_t cookie, struct pa_page *old_folio,
                                         struct pa_page *new_folio, unsigned order)
{
	struct cw_owner *o = ctx;
	uint64_t slot = cw_slot_of(cookie);
	(void)order;
	if (slot >= o->cap) {
		atomic_fetch_add_explicit(&o->refused, 1, memory_order_relaxed);
		return PA_MIGRATE_BUSY;
	}
	pthread_mutex_lock(cw_lock(o, slot));
	struct pa_page **ref = cw_ref(o, &o->f[slot], old_folio);
	if (ref)
		*ref = new_folio;
	pthread_mutex_unlock(cw_lock(o, slot));
	atomic_fetch_add_explicit(ref ? &o->moved : &o->refused, 1, memory_order_relaxed);
	return ref ? PA_MIGRATE_OK : PA_MIGRATE_BUSY;
}

/* compaction_split_folios=1 split the folio at head: from now on the table holds its pieces. */
static void cw_split(void *ctx, uint64_t cookie, struct pa_page *head, unsigned order)
{
	struct cw_owner *o = ctx;
	uint64_t slot = cw_slot_of(cookie);
	if (slot >= o->cap)
		return;
	struct pa_page **pieces = malloc(sizeof *pieces << order);
	if (!pieces) {
		fprintf(stderr, "pagealloc: out of memory for the pieces of a split folio\n");
		abort(); /* the owner would lose track of 2^order folios */
	}
	pa_pfn_t pfn = pa_page_to_pfn(o->pool, head);
	for (uint64_t i = 0; i < (1ull << order); i++)
		pieces[i] = pa_pfn_to_page(o->pool, pfn + i);
	pthread_mutex_lock(cw_lock(o, slot));
	struct cw_folio *f = &o->f[slot];
	if (f->page == head && !f->pieces && f->order == order) {
		f->pieces = pieces;
		f->split_pfn = pfn;
		pieces = NULL;
	}
	pthread_mutex_unlock(cw_lock(o, slot));
	free(pieces);
}

int cw_owner_init(struct cw_owner *o, struct pa_pool *pool, uint64_t cap)
{
	struct pa_config cfg;
	pa_get_config(pool, &cfg);
	memset(o, 0, sizeof *o);
	o->pool = pool;
	o->cap = cap ? cap : 1;
	o->words_per_frame = cfg.page_size / sizeof(uint64_t);
	o->backed = pa_page_address(pool, pa_pfn_to_page(pool, 0)) != NULL;
	o->f = calloc(o->cap, sizeof *o->f);
	o->free_slots = calloc(o->cap, sizeof *o->free_slots);
	for (unsigned i = 0; i < CW_LOCKS; i++)
		pthread_mutex_init(&o->lock[i], NULL);
	pthread_mutex_init(&o->slots_lock, NULL);
	if (!o->f || !o->free_slots) {
		fprintf(stderr, "pagealloc: out of memory for a table of %" PRIu64 " folios\n",
		        o->cap);
		return -1;
	}
	struct pa_owner_ops ops = {
		.name = "compaction-workload", .ctx = o, .migrate = cw_migrate, .split = cw_split
	};
	o->id = pa_owner_register(pool, &ops);
	if (o->id < 1) {
		fprintf(stderr, "pagealloc: pa_owner_register: %s\n", strerror(-o->id));
		return -1;
	}
	return 0;
}

void cw_owner_destroy(struct cw_owner *o)
{
	if (!o->pool)
		return; /* never set up */
	for (uint64_t s = 0; o->f && s < o->cap; s++)
		free(o->f[s].pieces);
	free(o->f);
	free(o->free_slots);
	for (unsigned i = 0; i < CW_LOCKS; i++)
		pthread_mutex_destroy(&o->lock[i]);
	pthread_mutex_destroy(&o->slots_lock);
	o->f = NULL;
	o->free_slots = NULL;
}

/* An emptied slot, or a new one; CW_NONE when the table is full. */
static uint64_t cw_slot_get(struct cw_owner *o)
{
	pthread_mutex_lock(&o->slots_lock);
	uint64_t slot = o->nr_free ? o->free_slots[--o->nr_free] : CW_NONE;
	pthread_mutex_unlock(&o->slots_lock);
	if (slot == CW_NONE) {
		slot = atomic_fetch_add(&o->next, 1);
		if (slot >= o->cap)
			return CW_NONE;
	}
	return slot;
}

/* A slot back on the stack: its allocation failed. */
static void cw_slot_put(struct cw_owner *o, uint64_t slot)
{
	pthread_mutex_lock(&o->slots_lock);
	o->free_slots[o->nr_free++] = slot;
	pthread_mutex_unlock(&o->slots_lock);
}

uint64_t cw_alloc(struct cw_owner *o, pa_gfp_t gfp, unsigned order)
{
	pa_gfp_t g = gfp | PA_GFP_MOVABLE | PA_GFP_COMP | PA_GFP_NOWARN;
	uint64_t slot = cw_slot_get(o);
	if (slot == CW_NONE)
		return CW_NONE;
	pthread_mutex_lock(cw_lock(o, slot));
	uint32_t gen = o->f[slot].gen + 1;
	pthread_mutex_unlock(cw_lock(o, slot));
	uint64_t cookie = (uint64_t)gen << 32 | (slot + 1);
	/*
	 * A backed folio is owned once its pattern is written (a move meanwhile
	 * would copy half of it); a metadata-only one from the start, so that no
	 * contiguous allocation finds it movable by nobody. Until the table
	 * names it, a migrate callback answers BUSY.
	 */
	struct pa_page *p = o->backed ? pa_alloc_pages(o->pool, g, order) :
	                                pa_alloc_owned(o->pool, g, order, o->id, cookie);
	if (!p) {
		cw_slot_put(o, slot);
		return CW_NONE;
	}
	pthread_mutex_lock(cw_lock(o, slot));
	o->f[slot] = (struct cw_folio){
		.page = p, .cookie = cookie, .gen = gen, .order = (uint8_t)order
	};
	pthread_mutex_unlock(cw_lock(o, slot));
	if (!o->backed)
		return slot;
	cw_fill(o, p, cookie, 1ull << order);
	int rc = pa_set_owner(o->pool, p, o->id, cookie);
	if (rc)
		fprintf(stderr, "pagealloc: pa_set_owner: %s (the folio stays unmovable)\n",
		        strerror(-rc));
	return slot;
}

/*
 * Under the slot's lock, so that a migrate callback sees either the folio
 * or an empty slot. pa_free_pages() never waits for a move, and the
 * callbacks take no pool lock, so holding this lock across it is safe.
 */
void cw_free(struct cw_owner *o, uint64_t slot)
{
	pthread_mutex_lock(cw_lock(o, slot));
	struct cw_folio *f = &o->f[slot];
	if (f->pinned)
		pa_unpin(o->pool, f->page);
	if (f->pieces) {
		for (uint64_t i = 0; i < (1ull << f->order); i++)
			pa_free_pages(o->pool, f->pieces[i], 0);
		free(f->pieces);
	} else if (f->page) {
		pa_free_pages(o->pool, f->page, f->order);
	}
	bool held = f->page != NULL;
	*f = (struct cw_folio){ .gen = f->gen };
	pthread_mutex_unlock(cw_lock(o, slot));
	if (held) {
		pthread_mutex_lock(&o->slots_lock);
		o->free_slots[o->nr_free++] = slot;
		pthread_mutex_unlock(&o->slots_lock);
	}
}

int cw_pin(struct cw_owner *o, uint64_t slot)
{
	pthread_mutex_lock(cw_lock(o, slot));
	struct cw_folio *f = &o->f[slot];
	int rc = f->pinned ? 0 : f->page && !f->pieces ? pa_pin(o->pool, f->page) : -EINVAL;
	f->pinned |= rc == 0;
	pthread_mutex_unlock(cw_lock(o, slot));
	return rc;
}

bool cw_view(struct cw_owner *o, uint64_t slot, struct cw_view *v)
{
	pthread_mutex_lock(cw_lock(o, slot));
	const struct cw_folio *f = &o->f[slot];
	struct pa_page *p = f->pieces ? f->pieces[0] : f->page;
	*v = (struct cw_view){ .pfn = p ? pa_page_to_pfn(o->pool, p) : PA_PFN_INVALID,
		               .order = f->order,
		               .pinned = f->pinned };
	pthread_mutex_unlock(cw_lock(o, slot));
	return p != NULL;
}

bool cw_check(struct cw_owner *o, uint64_t slot)
{
	bool ok = true;
	pthread_mutex_lock(cw_lock(o, slot));
	struct cw_folio *f = &o->f[slot];
	for (uint64_t i = 0; o->backed && f->pieces && i < (1ull << f->order); i++)
		ok &= cw_check_bytes(o, f->pieces[i], f->cookie, i, 1);
	if (o->backed && f->page && !f->pieces)
		ok = cw_check_bytes(o, f->page, f->cookie, 0, 1ull << f->order);
	pthread_mutex_unlock(cw_lock(o, slot));
	return ok;
}

pa_pfn_t cw_pfn(struct cw_owner *o, uint64_t slot)
{
	pthread_mutex_lock(cw_lock(o, slot));
	const struct cw_folio *f = &o->f[slot];
	struct pa_page *p = f->pieces ? f->pieces[0] : f->page;
	pa_pfn_t pfn = p ? pa_page_to_pfn(o->pool, p) : PA_PFN_INVALID;
	pthread_mutex_unlock(cw_lock(o, slot));
	return pfn;
}

uint64_t cw_nr_slots(struct cw_owner *o)
{
	uint64_t n = atomic_load(&o->next);
	return n < o->cap ? n : o->cap;
}

/* One folio (or piece) as the library sees it: order, cookie, bytes. */
static bool cw_check_one(struct cw_owner *o, struct pa_page *p, uint64_t cookie, unsigned order,
                         uint64_t first)
{
	if (pa_folio_order(o->pool, p) != (int)order || pa_page_cookie(o->pool, p) != cookie)
		return false;
	return !o->backed || cw_check_bytes(o, p, cookie, first, 1ull << order);
}

uint64_t cw_verify(struct cw_owner *o, uint64_t *checked)
{
	uint64_t bad = 0, n = 0;
	for (uint64_t s = 0; s < cw_nr_slots(o); s++) {
		pthread_mutex_lock(cw_lock(o, s));
		struct cw_folio *f = &o->f[s];
		if (f->page) {
			n++;
			bool ok = true;
			for (uint64_t i = 0; f->pieces && i < (1ull << f->order); i++)
				ok &= cw_check_one(o, f->pieces[i], f->cookie, 0, i);
			if (!f->pieces)
				ok = cw_check_one(o, f->page, f->cookie, f->order, 0);
			bad += !ok;
		}
		pthread_mutex_unlock(cw_lock(o, s));
	}
	*checked = n;
	return bad;
}

/* ---------------------------------------------------------------------- */
/* Counters                                                                */
/* ---------------------------------------------------------------------- */

static uint64_t cw_vmstat(struct pa_pool *pool, const char *name)
{
	uint64_t v = 0;
	if (pa_vmstat_read(pool, name, &v))
		fprintf(stderr, "pagealloc: vmstat has no %s\n", name);
	return v;
}

void cw_counters_read(struct pa_pool *pool, struct cw_counters *c)
{
	static const char *const scanned[] = { "compact_migrate_scanned", "compact_free_scanned",
		                               "compact_daemon_migrate_scanned",
		                               "compact_daemon_free_scanned" };
	struct pa_config cfg;
	pa_get_config(pool, &cfg);
	*c = (struct cw_counters){ 0 };
	for (size_t i = 0; i < sizeof scanned / sizeof scanned[0]; i++)
		c->scanned += cw_vmstat(pool, scanned[i]);
	c->migrated = cw_vmstat(pool, "pgmigrate_success");
	c->split = cw_vmstat(pool, "compact_folios_split");
	for (unsigned k = 1; k <= cfg.max_order; k++) {
		char name[48];
		snprintf(name, sizeof name, "compact_folios_migrated_order_%u", k);
		c->whole += cw_vmstat(pool, name);
	}
}

void cw_counters_sub(struct cw_counters *after, const struct cw_counters *before)
{
	after->scanned -= before->scanned;
	after->migrated -= before->migrated;
	after->whole -= before->whole;
	after->split -= before->split;
}

/* ---------------------------------------------------------------------- */
/* Latency                                                                 */
/* ---------------------------------------------------------------------- */

static int cw_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void cw_latency(double *ns, uint64_t n, struct cw_latency *out)
{
	*out = (struct cw_latency){ 0 };
	if (!n)
		return;
	qsort(ns, n, sizeof *ns, cw_cmp_double);
	for (uint64_t i = 0; i < n; i++)
		out->mean += ns[i] / (double)n;
	uint64_t rank = (n * 95 + 99) / 100; /* nearest rank, 1-based */
	out->p95 = ns[(rank ? rank : 1) - 1];
	out->max = ns[n - 1];
}

/* ---------------------------------------------------------------------- */
/* Figures                                                                 */
/* ---------------------------------------------------------------------- */

static const struct {
	const char *key, *unit;
} cw_metric_desc[CW_NR_METRICS] = {
#define X(id, k, u) [CW_##id] = { k, u },
	CW_METRICS(X)
#undef X
};

int cw_result_init(struct cw_result *r, const char *name, unsigned runs)
{
	memset(r, 0, sizeof *r);
	r->name = name;
	r->runs = runs;
	for (unsigned m = 0; m < CW_NR_METRICS; m++)
		if (!(r->samples[m] = calloc(runs, sizeof(double))))
			return -1;
	return 0;
}

void cw_result_free(struct cw_result *r)
{
	for (unsigned m = 0; m < CW_NR_METRICS; m++)
		free(r->samples[m]);
}

void cw_result_common(struct cw_result *r, unsigned run, const struct cw_latency *lat,
                      const struct cw_counters *c)
{
	r->samples[CW_LAT_MEAN][run] = lat->mean;
	r->samples[CW_LAT_P95][run] = lat->p95;
	r->samples[CW_LAT_MAX][run] = lat->max;
	r->samples[CW_PAGES_SCANNED][run] = (double)c->scanned;
	r->samples[CW_PAGES_MIGRATED][run] = (double)c->migrated;
	r->samples[CW_FOLIOS_WHOLE][run] = (double)c->whole;
	r->samples[CW_FOLIOS_SPLIT][run] = (double)c->split;
}

static double cw_median(const struct cw_result *r, unsigned m)
{
	struct bench_summary s;
	bench_summarize(r->samples[m], r->runs, &s);
	return s.median;
}

/* The part of a key after its group ("mean" of "latency_ns.mean"), and the group's length. */
static const char *cw_leaf(const char *key, size_t *group)
{
	const char *dot = strchr(key, '.');
	*group = dot ? (size_t)(dot - key) : 0;
	return dot ? dot + 1 : key;
}

/* Values of the metrics in mask, as JSON with dotted keys nested; value(r, m) gives each. */
static void cw_json_values(struct bench_out *o, const struct cw_result *r,
                           const struct cw_result *base, unsigned mask)
{
	char group[32] = "";
	for (unsigned m = 0; m < CW_NR_METRICS; m++) {
		if (!(mask & (1u << m)))
			continue;
		size_t g;
		const char *leaf = cw_leaf(cw_metric_desc[m].key, &g);
		if (group[0] && (g == 0 || strncmp(group, cw_metric_desc[m].key, g) || group[g])) {
			bench_out_close(o);
			group[0] = '\0';
		}
		if (g && !group[0]) {
			snprintf(group, sizeof group, "%.*s", (int)g, cw_metric_desc[m].key);
			bench_out_open(o, group);
		}
		double v = cw_median(r, m);
		if (base) { /* %change from base; not a number (null) when base is 0 */
			double b = cw_median(base, m);
			v = b != 0 ? (v - b) / b * 100 : (v == 0 ? 0 : __builtin_nan(""));
		}
		bench_out_f64(o, leaf, v);
	}
	if (group[0])
		bench_out_close(o);
}

static void cw_data_line(struct bench_out *o, const char *key, const struct cw_result *r)
{
	char buf[96];
	if (!r->backed)
		snprintf(buf, sizeof buf, "not checked (metadata-only pool)");
	else if (!r->data_bad)
		snprintf(buf, sizeof buf, "verified (%" PRIu64 " folios in %u runs)",
		         r->data_checked, r->runs);
	else
		snprintf(buf, sizeof buf, "CORRUPT: %" PRIu64 " of %" PRIu64 " folios", r->data_bad,
		         r->data_checked);
	bench_out_str(o, key, buf);
}

/* One mode: medians at this level, then each metric's median, min, max and samples under "summary". */
static void cw_out_mode(struct bench_out *o, const struct cw_result *r, unsigned mask)
{
	bench_out_str(o, "boot", r->boot);
	cw_data_line(o, "data", r);
	if (o->json) {
		cw_json_values(o, r, NULL, mask);
		bench_out_open(o, "summary");
	}
	for (unsigned m = 0; m < CW_NR_METRICS; m++)
		if (mask & (1u << m))
			bench_out_metric(o, cw_metric_desc[m].key, cw_metric_desc[m].unit,
			                 r->samples[m], r->runs);
	if (o->json)
		bench_out_close(o);
}

/* A value as LKP prints it: whole numbers when large, else two decimals. */
static void cw_lkp_value(char *buf, size_t len, const struct cw_result *r, unsigned m)
{
	struct bench_summary s;
	bench_summarize(r->samples[m], r->runs, &s);
	double rel = s.mean != 0 ? s.stddev / s.mean * 100 : 0;
	char sd[16] = "";
	if (r->runs > 1 && rel >= 1)
		snprintf(sd, sizeof sd, " \xc2\xb1%3.0f%%", rel);
	snprintf(buf, len, s.median >= 1000 || s.median <= -1000 ? "%14.0f%-6s" : "%14.2f%-6s",
	         s.median, sd);
}

/*
 * The old mode beside the new, as lkp ncompare prints two kernels: medians,
 * the relative standard deviation where it is 1 % or more, the change.
 */
static void cw_lkp_table(FILE *f, const struct cw_result res[2], unsigned mask,
                         const char *workload)
{
	fprintf(f, "\n%-20s %31s\n", "split_folios=1", "default");
	fprintf(f, "%.20s %.31s\n", "--------------------------------",
	        "--------------------------------");
	fprintf(f, "%20s %10s %20s\n", "%stddev", "%change", "%stddev");
	fprintf(f, "%14s%17s%15s\n", "\\", "|", "\\");
	for (unsigned m = 0; m < CW_NR_METRICS; m++) {
		if (!(mask & (1u << m)))
			continue;
		char a[40], b[40], chg[16];
		cw_lkp_value(a, sizeof a, &res[0], m);
		cw_lkp_value(b, sizeof b, &res[1], m);
		double x = cw_median(&res[0], m), y = cw_median(&res[1], m);
		if (x != 0)
			snprintf(chg, sizeof chg, "%+.1f%%", (y - x) / x * 100);
		else
			snprintf(chg, sizeof chg, "%s", y == 0 ? "0.0%" : "n/a");
		fprintf(f, "%s %10s %s  %s.%s\n", a, chg, b, workload, cw_metric_desc[m].key);
	}
	fprintf(f, "\nsplit_folios=1: \"%s\"\ndefault:        \"%s\"\n", res[0].boot, res[1].boot);
}

void cw_print(struct bench_out *o, const struct cw_result *res, unsigned nr, unsigned mask,
              const char *workload)
{
	if (nr == 1) {
		cw_out_mode(o, &res[0], mask);
		return;
	}
	if (!o->json) {
		cw_data_line(o, "data, split_folios=1", &res[0]);
		cw_data_line(o, "data, default", &res[1]);
		cw_lkp_table(o->f, res, mask, workload);
		return;
	}
	for (unsigned i = 0; i < 2; i++) {
		bench_out_open(o, res[i].name);
		cw_out_mode(o, &res[i], mask);
		bench_out_close(o);
	}
	bench_out_open(o,
	               "change_pct"); /* (default - split_folios) / split_folios, of the medians */
	cw_json_values(o, &res[1], &res[0], mask);
	bench_out_close(o);
}

/* ---------------------------------------------------------------------- */
/* Boot and knobs                                                          */
/* ---------------------------------------------------------------------- */

void cw_boot_line(const struct bench_opts *opt, const char *def, bool split, char *buf, size_t len)
{
	const char *base = bench_boot_line(opt, def);
	snprintf(buf, len, "%s%s%s", base, strstr(base, "kcompactd=") ? "" : " kcompactd=manual",
	         split ? " compaction_split_folios=1" : "");
}

int cw_boot(const struct bench_opts *opt, const char *line, struct pa_pool **pool)
{
	return bench_boot_with(opt, line, NULL, pool) ? -1 : 0;
}

int cw_ctl_set(struct pa_pool *pool, const char *path, uint64_t value, uint64_t *old)
{
	char buf[64];
	if (old && pa_ctl_read_u64(pool, path, old) < 0)
		return -1;
	snprintf(buf, sizeof buf, "%" PRIu64, value);
	int rc = pa_ctl_write(pool, path, buf);
	if (rc)
		fprintf(stderr, "pagealloc: ctl %s %s: %s\n", path, buf, strerror(-rc));
	return rc ? -1 : 0;
}
