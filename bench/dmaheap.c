/* SPDX-License-Identifier: MIT */
/*
 * dmaheap: the dma-buf system heap of seed 004 (shared/reference/workloads.md),
 * at pageblock order 10 and 7 on 16 KiB pages, side by side.
 *
 * A buffer is allocated as drivers/dma-buf/heaps/system_heap.c does: round
 * the size up to pages, then repeatedly take the largest order of {8, 4, 0}
 * that fits what is left and is not above the last order that succeeded.
 * Order 8 is tried with no compaction and no retry (HIGH_ORDER_GFP), order 4
 * quietly (MID_ORDER_GFP), order 0 normally (LOW_ORDER_GFP); all are
 * unmovable (GFP_HIGHUSER) and zeroed. Each buffer is freed at once, as
 * the seed's loop releases it: --count buffers of each of the sizes 8M, 4M,
 * 2M, 1M, 64 B, 8 B, 4 B (the last three are one page) per run.
 *
 * --cma allocates each buffer from a CMA area instead, as the CMA heap
 * does (one pa_cma_alloc, aligned to its order capped at 8), while load
 * threads keep the area about half borrowed by movable folios that each
 * allocation has to move out.
 */
#define _GNU_SOURCE
#include "compact_common.h"
#include "movable.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define DH_BOOT      "mem=4G page_shift=14 pageblock_order_ceil=%u"
#define DH_CMA_BOOT  "mem=512M page_shift=14 pageblock_order_ceil=%u cma=16M kcompactd=manual"
#define DH_COUNT     200
#define DH_RUNS      3
#define DH_CMA_ALIGN 8 /* Linux's CONFIG_CMA_ALIGNMENT */
#define DH_NR_SIZES  7
#define DH_NR_ORDERS 3
#define DH_MAX_CONF  2

static const uint64_t dh_sizes[DH_NR_SIZES] = { 8u << 20, 4u << 20, 2u << 20, 1u << 20, 64, 8, 4 };
static const char *const dh_size_names[DH_NR_SIZES] = { "8M", "4M", "2M", "1M", "64", "8", "4" };
static const unsigned dh_pageblock[DH_MAX_CONF] = { 10, 7 };
static const unsigned dh_orders[DH_NR_ORDERS] = { 8, 4, 0 };
/* system_heap.c's order_flags[]: HIGH_ORDER_GFP, MID_ORDER_GFP, LOW_ORDER_GFP. */
static const pa_gfp_t dh_gfp[DH_NR_ORDERS] = {
	PA_GFP_ZERO | PA_GFP_NOWARN | PA_GFP_NORETRY | PA_GFP_NOCOMPACT | PA_GFP_COMP,
	PA_GFP_ZERO | PA_GFP_NOWARN,
	PA_GFP_ZERO,
};

/* The figures of one configuration (one boot line), over all its runs. */
struct dh_conf {
	char boot[512];
	unsigned pageblock_order;
	uint64_t cma_requested, cma_reserved;
	double *allocs_per_sec;       /* [run] */
	double *lat_ns;               /* [run][i][size] */
	uint64_t pages[DH_NR_ORDERS]; /* blocks taken per order of dh_orders */
	uint64_t fails[DH_NR_ORDERS]; /* attempts that failed per order */
	uint64_t failed;              /* buffers that could not be allocated */
	uint64_t moved;               /* --cma: folios moved out of the area */
	double borrowed_pct; /* --cma: the area's share held by folios at the start, last run */
};

struct dh {
	const struct bench_opts *opt;
	uint64_t count;
	unsigned runs, nr_conf, threads;
	struct dh_conf conf[DH_MAX_CONF];
};

/* One block of a buffer. */
struct dh_block {
	struct pa_page *page;
	unsigned order;
};

/* ---------------------------------------------------------------------- */
/* The system heap                                                         */
/* ---------------------------------------------------------------------- */

/* alloc_largest_available(): the index in dh_orders of the block taken, or -1. */
static int dh_alloc_largest(struct pa_pool *pool, uint64_t left, unsigned max_order,
                            struct dh_block *b, struct dh_conf *c)
{
	for (int i = 0; i < DH_NR_ORDERS; i++) {
		unsigned o = dh_orders[i];
		if (left < (1ull << o) || o > max_order)
			continue;
		b->page = pa_alloc_pages(pool, dh_gfp[i], o);
		if (b->page) {
			b->order = o;
			return i;
		}
		c->fails[i]++;
	}
	return -1;
}

static void dh_free_blocks(struct pa_pool *pool, struct dh_block *b, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		pa_free_pages(pool, b[i].page, b[i].order);
}

/* system_heap_allocate(): the blocks of one buffer into b; their number, or 0 on failure. */
static uint64_t dh_alloc_buffer(struct pa_pool *pool, uint64_t pages, struct dh_block *b,
                                struct dh_conf *c)
{
	uint64_t n = 0;
	unsigned max_order = dh_orders[0];
	for (uint64_t left = pages; left;) {
		int i = dh_alloc_largest(pool, left, max_order, &b[n], c);
		if (i < 0) {
			dh_free_blocks(pool, b, n);
			return 0;
		}
		c->pages[i]++;
		left -= 1ull << b[n].order;
		max_order = b[n++].order;
	}
	return n;
}

/* The CMA heap: the buffer in one range of the area; 1, or 0 on failure. */
static uint64_t dh_alloc_cma(struct pa_pool *pool, uint64_t pages, struct dh_block *b)
{
	unsigned align = 63 - (unsigned)__builtin_clzll(pages);
	align += (1ull << align) < pages; /* get_order(): round up */
	b->page = pa_cma_alloc(pool, 0, pages, align < DH_CMA_ALIGN ? align : DH_CMA_ALIGN);
	b->order = 0;
	return b->page != NULL;
}

/* ---------------------------------------------------------------------- */
/* The movable load of --cma                                               */
/* ---------------------------------------------------------------------- */

struct dh_load {
	struct cw_owner *owner;
	uint64_t target; /* folios this thread holds */
	uint64_t rng;
	uint64_t *slots, nr;
	atomic_bool *stop;
	atomic_uint *ready;
};

/* Hold target folios, then keep replacing random ones until told to stop. */
static void *dh_load_main(void *arg)
{
	struct dh_load *l = arg;
	while (l->nr < l->target) {
		uint64_t s = cw_alloc(l->owner, PA_GFP_USER_MOVABLE, 0);
		if (s == CW_NONE)
			break;
		l->slots[l->nr++] = s;
	}
	atomic_fetch_add(l->ready, 1);
	while (!atomic_load_explicit(l->stop, memory_order_relaxed) && l->nr) {
		uint64_t k = bench_rand(&l->rng) % l->nr;
		cw_free(l->owner, l->slots[k]);
		uint64_t s = cw_alloc(l->owner, PA_GFP_USER_MOVABLE, 0);
		if (s != CW_NONE)
			l->slots[k] = s;
		else
			l->slots[k] = l->slots[--l->nr];
	}
	return NULL;
}

/* The share of the CMA area that folios of the owner hold now. */
static double dh_borrowed_pct(struct pa_pool *pool, struct cw_owner *o)
{
	struct pa_cma_info a;
	if (pa_cma_get(pool, 0, &a))
		return 0;
	uint64_t in = 0;
	for (uint64_t s = 0; s < cw_nr_slots(o); s++) {
		pa_pfn_t pfn = cw_pfn(o, s);
		in += pfn >= a.start_pfn && pfn < a.start_pfn + a.nr_pages;
	}
	return 100.0 * (double)in / (double)a.nr_pages;
}

struct dh_loaders {
	struct cw_owner owner;
	struct dh_load *load;
	pthread_t *tid;
	unsigned n, started;
	atomic_bool stop;
	atomic_uint ready;
};

/*
 * Start the load: together the threads hold all but an area's worth of
 * memory, so that free memory is about the area's size. Linux's balance
 * rule (borrow CMA while it holds over half the free memory) then leaves
 * the area about half borrowed. Waits until they hold it.
 */
static int dh_load_start(struct dh_loaders *L, struct pa_pool *pool, unsigned n, uint64_t seed)
{
	struct pa_usage u;
	struct pa_cma_info a;
	pa_get_usage(pool, &u);
	if (pa_cma_get(pool, 0, &a)) {
		fprintf(stderr, "pagealloc: dmaheap --cma: the boot line has no cma= area\n");
		return -1;
	}
	uint64_t hold = u.free > 2 * a.nr_pages ? u.free - a.nr_pages : u.free / 2;
	L->n = n;
	L->load = calloc(n, sizeof *L->load);
	L->tid = calloc(n, sizeof *L->tid);
	if (!L->load || !L->tid || cw_owner_init(&L->owner, pool, u.managed))
		return -1;
	for (unsigned i = 0; i < n; i++) {
		struct dh_load *l = &L->load[i];
		*l = (struct dh_load){ .owner = &L->owner,
			               .target = hold / n,
			               .rng = bench_seed_state(seed, i),
			               .stop = &L->stop,
			               .ready = &L->ready };
		l->slots = calloc(l->target ? l->target : 1, sizeof *l->slots);
		if (!l->slots || pthread_create(&L->tid[i], NULL, dh_load_main, l))
			return -1;
		L->started++;
	}
	while (atomic_load(&L->ready) < n)
		sched_yield();
	return 0;
}

/* Stop the load threads; the folios stay until the pool is shut down. */
static void dh_load_stop(struct dh_loaders *L)
{
	atomic_store(&L->stop, true);
	for (unsigned i = 0; i < L->started; i++)
		pthread_join(L->tid[i], NULL);
}

static void dh_load_free(struct dh_loaders *L)
{
	for (unsigned i = 0; L->load && i < L->n; i++)
		free(L->load[i].slots);
	free(L->load);
	free(L->tid);
	cw_owner_destroy(&L->owner);
}

/* ---------------------------------------------------------------------- */
/* A run                                                                   */
/* ---------------------------------------------------------------------- */

/*
 * The seed's loop: every size, count times; each buffer allocated, then
 * freed. Not inlined, so that `valgrind --tool=callgrind
 * --toggle-collect=dh_loop` counts the loop alone.
 */
static __attribute__((noinline)) double
dh_loop(struct dh *d, struct dh_conf *c, struct pa_pool *pool, struct dh_block *b, double *lat)
{
	struct pa_config cfg;
	pa_get_config(pool, &cfg);
	uint64_t start = bench_now_ns();
	for (uint64_t i = 0; i < d->count; i++) {
		for (unsigned s = 0; s < DH_NR_SIZES; s++) {
			uint64_t pages = (dh_sizes[s] + cfg.page_size - 1) >> cfg.page_shift;
			uint64_t t0 = bench_now_ns();
			uint64_t n = d->opt->cma ? dh_alloc_cma(pool, pages, b) :
			                           dh_alloc_buffer(pool, pages, b, c);
			lat[i * DH_NR_SIZES + s] = (double)(bench_now_ns() - t0);
			c->failed += n == 0;
			if (d->opt->cma && n)
				pa_cma_release(pool, 0, b->page, pages);
			else
				dh_free_blocks(pool, b, n);
		}
	}
	uint64_t ns = bench_now_ns() - start;
	return (double)(d->count * DH_NR_SIZES) * 1e9 / (double)(ns ? ns : 1);
}

static void dh_read_cma(struct dh_conf *c, struct pa_pool *pool)
{
	struct pa_cma_info a;
	if (pa_cma_get(pool, 0, &a) == 0) {
		c->cma_requested = a.requested_bytes;
		c->cma_reserved = a.reserved_bytes;
	}
}

static int dh_validate(struct pa_pool *pool)
{
	char err[512] = "";
	if (pa_validate(pool, err, sizeof err) == 0)
		return 0;
	fprintf(stderr, "pagealloc: dmaheap: pa_validate: %s\n", err);
	return -1;
}

static int dh_run(struct dh *d, struct dh_conf *c, unsigned run)
{
	struct pa_pool *pool;
	if (bench_boot_with(d->opt, c->boot, NULL, &pool))
		return -1;
	struct pa_config cfg;
	pa_get_config(pool, &cfg);
	c->pageblock_order = cfg.pageblock_order;
	dh_read_cma(c, pool);
	struct dh_block *b = calloc((dh_sizes[0] >> cfg.page_shift) + 1, sizeof *b);
	struct dh_loaders L = { 0 };
	int ret = b ? 0 : -1;
	if (!ret && d->opt->cma) {
		ret = dh_load_start(&L, pool, d->threads, d->opt->seed_set ? d->opt->seed : 42);
		if (!ret)
			c->borrowed_pct = dh_borrowed_pct(pool, &L.owner);
	}
	uint64_t moved = L.owner.moved;
	if (!ret)
		c->allocs_per_sec[run] =
		        dh_loop(d, c, pool, b, c->lat_ns + run * d->count * DH_NR_SIZES);
	if (d->opt->cma) {
		dh_load_stop(&L);
		c->moved += L.owner.moved - moved;
	}
	ret = ret || dh_validate(pool);
	pa_shutdown(pool);
	if (d->opt->cma)
		dh_load_free(&L);
	free(b);
	return ret;
}

/* ---------------------------------------------------------------------- */
/* Output                                                                  */
/* ---------------------------------------------------------------------- */

/* Percentile pct of one size's samples (s < DH_NR_SIZES) or of all (s == DH_NR_SIZES), in ns. */
static double dh_lat_ns(const struct dh *d, const struct dh_conf *c, unsigned s, double pct)
{
	uint64_t n = d->count * d->runs, m = 0;
	uint64_t all = s == DH_NR_SIZES ? DH_NR_SIZES : 1;
	double *v = malloc(n * all * sizeof *v);
	if (!v)
		return 0;
	for (uint64_t k = 0; k < n * DH_NR_SIZES; k++)
		if (all > 1 || k % DH_NR_SIZES == s)
			v[m++] = c->lat_ns[k];
	double r = bench_percentile(v, m, pct);
	free(v);
	return r;
}

static double dh_median(const double *v, unsigned n)
{
	struct bench_summary s;
	bench_summarize(v, n, &s);
	return s.median;
}

/* One row of the side-by-side table. */
static void dh_row(FILE *f, const char *label, const double *v, unsigned n, const char *fmt)
{
	fprintf(f, "%-28s", label);
	for (unsigned i = 0; i < n; i++) {
		char cell[64];
		snprintf(cell, sizeof cell, fmt, v[i]);
		fprintf(f, " %-20s", cell);
	}
	fputc('\n', f);
}

static void dh_text_latency(const struct dh *d, FILE *f)
{
	double v[DH_MAX_CONF];
	char label[64];
	for (unsigned s = 0; s <= DH_NR_SIZES; s++) {
		for (unsigned k = 0; k < d->nr_conf; k++)
			v[k] = dh_lat_ns(d, &d->conf[k], s, 50);
		snprintf(label, sizeof label, "latency p50 ns, %s",
		         s < DH_NR_SIZES ? dh_size_names[s] : "all");
		dh_row(f, label, v, d->nr_conf, "%.0f");
	}
	for (unsigned k = 0; k < d->nr_conf; k++)
		v[k] = dh_lat_ns(d, &d->conf[k], DH_NR_SIZES, 99);
	dh_row(f, "latency p99 ns, all", v, d->nr_conf, "%.0f");
}

static void dh_text_orders(const struct dh *d, FILE *f)
{
	double v[DH_MAX_CONF];
	char label[64];
	for (unsigned i = 0; i < DH_NR_ORDERS; i++) {
		for (unsigned k = 0; k < d->nr_conf; k++)
			v[k] = (double)d->conf[k].pages[i];
		snprintf(label, sizeof label, "order-%u blocks", dh_orders[i]);
		dh_row(f, label, v, d->nr_conf, "%.0f");
	}
	for (unsigned i = 0; i < DH_NR_ORDERS; i++) {
		for (unsigned k = 0; k < d->nr_conf; k++)
			v[k] = (double)d->conf[k].fails[i];
		snprintf(label, sizeof label, "order-%u attempts failed", dh_orders[i]);
		dh_row(f, label, v, d->nr_conf, "%.0f");
	}
}

static void dh_text(const struct dh *d, FILE *f)
{
	double v[DH_MAX_CONF];
	fprintf(f, "\n%-28s", "");
	for (unsigned k = 0; k < d->nr_conf; k++) {
		char h[32];
		snprintf(h, sizeof h, "pageblock order %u", d->conf[k].pageblock_order);
		fprintf(f, " %-20s", h);
	}
	fputc('\n', f);
	for (unsigned k = 0; k < d->nr_conf; k++)
		v[k] = dh_median(d->conf[k].allocs_per_sec, d->runs);
	dh_row(f, "allocations/s (median run)", v, d->nr_conf, "%.0f");
	dh_text_latency(d, f);
	if (!d->opt->cma)
		dh_text_orders(d, f);
	for (unsigned k = 0; k < d->nr_conf; k++)
		v[k] = (double)d->conf[k].failed;
	dh_row(f, "buffers failed", v, d->nr_conf, "%.0f");
	if (!d->opt->cma)
		return;
	for (unsigned k = 0; k < d->nr_conf; k++)
		v[k] = (double)d->conf[k].cma_reserved / (1 << 20);
	dh_row(f, "cma reserved MiB", v, d->nr_conf, "%.0f");
	for (unsigned k = 0; k < d->nr_conf; k++)
		v[k] = d->conf[k].borrowed_pct;
	dh_row(f, "cma borrowed at start %", v, d->nr_conf, "%.1f");
	for (unsigned k = 0; k < d->nr_conf; k++)
		v[k] = (double)d->conf[k].moved;
	dh_row(f, "folios moved out", v, d->nr_conf, "%.0f");
}

static void dh_json_conf(const struct dh *d, const struct dh_conf *c, struct bench_out *o)
{
	bench_out_str(o, "boot", c->boot);
	bench_out_u64(o, "pageblock_order", c->pageblock_order);
	bench_out_metric(o, "allocs_per_sec", "buffers allocated (and freed) per second",
	                 c->allocs_per_sec, d->runs);
	bench_out_f64(o, "latency_p50_ns", dh_lat_ns(d, c, DH_NR_SIZES, 50));
	bench_out_f64(o, "latency_p99_ns", dh_lat_ns(d, c, DH_NR_SIZES, 99));
	bench_out_open(o, "latency_p50_ns_by_size");
	for (unsigned s = 0; s < DH_NR_SIZES; s++)
		bench_out_f64(o, dh_size_names[s], dh_lat_ns(d, c, s, 50));
	bench_out_close(o);
	bench_out_open(o, "order_blocks");
	for (unsigned i = 0; i < DH_NR_ORDERS; i++) {
		char k[8];
		snprintf(k, sizeof k, "%u", dh_orders[i]);
		bench_out_u64(o, k, c->pages[i]);
	}
	bench_out_close(o);
	bench_out_open(o, "order_failures");
	for (unsigned i = 0; i < DH_NR_ORDERS; i++) {
		char k[8];
		snprintf(k, sizeof k, "%u", dh_orders[i]);
		bench_out_u64(o, k, c->fails[i]);
	}
	bench_out_close(o);
	bench_out_u64(o, "buffers_failed", c->failed);
	if (d->opt->cma) {
		bench_out_u64(o, "cma_requested_bytes", c->cma_requested);
		bench_out_u64(o, "cma_reserved_bytes", c->cma_reserved);
		bench_out_f64(o, "cma_borrowed_pct", c->borrowed_pct);
		bench_out_u64(o, "folios_moved", c->moved);
	}
}

static void dh_print(const struct dh *d, FILE *f)
{
	struct bench_out o;
	bench_out_begin(&o, f, d->opt->json, "dmaheap");
	bench_out_str(&o, "heap",
	              d->opt->cma ? "cma (pa_cma_alloc under movable load)" :
	                            "system (greedy orders 8, 4, 0)");
	bench_out_u64(&o, "count", d->count);
	bench_out_u64(&o, "buffers_per_run", d->count * DH_NR_SIZES);
	bench_out_u64(&o, "runs", d->runs);
	if (d->opt->cma)
		bench_out_u64(&o, "load_threads", d->threads);
	for (unsigned k = 0; k < d->nr_conf; k++)
		if (!o.json) {
			char key[32];
			snprintf(key, sizeof key, "boot %u", k + 1);
			bench_out_str(&o, key, d->conf[k].boot);
		}
	if (o.json) {
		for (unsigned k = 0; k < d->nr_conf; k++) {
			char key[32];
			snprintf(key, sizeof key, "pageblock_%u", d->conf[k].pageblock_order);
			bench_out_open(&o, key);
			dh_json_conf(d, &d->conf[k], &o);
			bench_out_close(&o);
		}
	} else {
		dh_text(d, f);
	}
	bench_out_end(&o);
}

/* ---------------------------------------------------------------------- */
/* Entry                                                                   */
/* ---------------------------------------------------------------------- */

static int dh_init(struct dh *d, const struct bench_opts *opt)
{
	d->opt = opt;
	d->count = opt->count ? opt->count : DH_COUNT;
	d->runs = opt->runs ? opt->runs : DH_RUNS;
	d->threads = opt->threads ? opt->threads : 1;
	d->nr_conf = opt->boot ? 1 : DH_MAX_CONF;
	for (unsigned k = 0; k < d->nr_conf; k++) {
		struct dh_conf *c = &d->conf[k];
		if (opt->boot)
			snprintf(c->boot, sizeof c->boot, "%s", opt->boot);
		else
			snprintf(c->boot, sizeof c->boot, opt->cma ? DH_CMA_BOOT : DH_BOOT,
			         dh_pageblock[k]);
		c->allocs_per_sec = calloc(d->runs, sizeof *c->allocs_per_sec);
		c->lat_ns = calloc(d->runs * d->count * DH_NR_SIZES, sizeof *c->lat_ns);
		if (!c->allocs_per_sec || !c->lat_ns)
			return -1;
	}
	return 0;
}

int bench_dmaheap(const struct bench_opts *opt, struct pa_pool *given, FILE *out)
{
	(void)given; /* own_pool: one pool per configuration and run */
	struct dh d = { 0 };
	int ret = dh_init(&d, opt);
	for (unsigned k = 0; !ret && k < d.nr_conf; k++)
		for (unsigned r = 0; !ret && r < d.runs; r++) {
			bench_progress_step(k * d.runs + r, d.nr_conf * d.runs);
			ret = dh_run(&d, &d.conf[k], r);
		}
	if (!ret)
		dh_print(&d, out);
	for (unsigned k = 0; k < DH_MAX_CONF; k++) {
		free(d.conf[k].allocs_per_sec);
		free(d.conf[k].lat_ns);
	}
	return ret ? 1 : 0;
}
