/* SPDX-License-Identifier: MIT */
/*
 * churn: the default workload. Threads share a pool; each keeps its own set
 * of blocks and, for a time or a number of operations, either allocates a
 * block or frees a random one of its set, holding up to ~70 % of memory.
 *
 * Orders are drawn so that each order gets about the same share of memory
 * (order k with probability 2^-(k+1)), which is what fragments a buddy
 * allocator: many small blocks pin the pageblocks that large ones need.
 * Migratetypes are mixed as on a busy machine: mostly movable, some
 * unmovable and reclaimable, so pageblocks get stolen and claimed.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define CHURN_BOOT          "mem=1G"
#define CHURN_SECONDS       2.0
#define CHURN_SEED          42
#define CHURN_MAX_ORDER     10
#define CHURN_HELD_PERCENT  70   /* of managed frames, split between the threads */
#define CHURN_ALLOC_PERCENT 55   /* of steps, while under the budget */
#define CHURN_CHECK_EVERY   1024 /* steps between looks at the clock */

struct churn_block {
	struct pa_page *page;
	unsigned order;
};

struct churn_thread {
	struct pa_pool *pool;
	uint64_t rng;
	unsigned max_order;
	uint64_t budget; /* frames this thread may hold */
	uint64_t held;   /* frames it holds */
	struct churn_block *set;
	uint64_t nr;        /* blocks in set */
	uint64_t ops_limit; /* 0: run until the deadline */
	uint64_t start_ns, deadline_ns;
	double progress_base, progress_span; /* thread 0: this run's share of the progress */
	uint64_t ops, frees;
	uint64_t *allocs, *fails; /* [order] */
};

/* Order k with probability 2^-(k+1); the rest of the mass on max_order. */
static unsigned churn_order(uint64_t r, unsigned max_order)
{
	unsigned k = (unsigned)__builtin_ctzll(r | (1ull << 63));
	return k < max_order ? k : max_order;
}

/* 60 % movable (user memory), 25 % unmovable (kernel), 15 % reclaimable (caches). */
static pa_gfp_t churn_gfp(uint64_t r)
{
	unsigned p = (unsigned)(r % 100);
	pa_gfp_t type = p < 60 ? PA_GFP_MOVABLE : p < 85 ? PA_GFP_KERNEL : PA_GFP_RECLAIMABLE;
	return type | PA_GFP_NOWARN;
}

static void churn_free_one(struct churn_thread *t, uint64_t r)
{
	uint64_t i = r % t->nr;
	struct churn_block b = t->set[i];
	t->set[i] = t->set[--t->nr];
	pa_free_pages(t->pool, b.page, b.order);
	t->held -= 1ull << b.order;
	t->frees++;
}

static void churn_step(struct churn_thread *t)
{
	uint64_t r = bench_rand(&t->rng);
	unsigned order = churn_order(r, t->max_order);
	bool fits = t->held + (1ull << order) <= t->budget;
	if (t->nr && (!fits || (r >> 48) % 100 >= CHURN_ALLOC_PERCENT)) {
		churn_free_one(t, r >> 16);
		return;
	}
	if (!fits)
		return; /* holds nothing and the block is larger than its whole budget */
	struct pa_page *page = pa_alloc_pages(t->pool, churn_gfp(r >> 24), order);
	if (!page) {
		t->fails[order]++;
		return;
	}
	t->set[t->nr++] = (struct churn_block){ page, order };
	t->held += 1ull << order;
	t->allocs[order]++;
}

/* Thread 0 tells the progress line how far the run is (by ops or by time). */
static void churn_progress(const struct churn_thread *t, uint64_t now)
{
	if (t->progress_span <= 0)
		return;
	double done = t->ops_limit ?
	                      (double)t->ops / (double)t->ops_limit :
	                      (double)(now - t->start_ns) / (double)(t->deadline_ns - t->start_ns);
	/* A run that overshoots its deadline (a busy machine) must not reach into the next one's share. */
	if (done > 1)
		done = 1;
	bench_progress(NULL, t->progress_base + t->progress_span * done);
}

static void *churn_worker(void *arg)
{
	struct churn_thread *t = arg;
	for (;;) {
		uint64_t steps = CHURN_CHECK_EVERY;
		if (t->ops_limit && t->ops_limit - t->ops < steps)
			steps = t->ops_limit - t->ops;
		for (uint64_t i = 0; i < steps; i++)
			churn_step(t);
		t->ops += steps;
		uint64_t now = bench_now_ns();
		churn_progress(t, now);
		if (t->ops_limit ? t->ops >= t->ops_limit : now >= t->deadline_ns)
			break;
	}
	return NULL;
}

static void churn_free_all(struct churn_thread *t)
{
	while (t->nr) {
		t->nr--;
		pa_free_pages(t->pool, t->set[t->nr].page, t->set[t->nr].order);
	}
	t->held = 0;
}

/* ---------------------------------------------------------------------- */
/* Setup and results                                                       */
/* ---------------------------------------------------------------------- */

struct churn {
	const struct bench_opts *opt;
	struct pa_pool *pool;
	unsigned nt, max_order, runs;
	uint64_t seed;
	struct churn_thread *t;
	uint64_t *counts;    /* allocs and fails of every thread, then the totals */
	double *ops_per_sec; /* [run] */
};

static int churn_setup(struct churn *c)
{
	const struct bench_opts *opt = c->opt;
	struct pa_config cfg;
	struct pa_usage u;
	pa_get_config(c->pool, &cfg);
	pa_get_usage(c->pool, &u);
	unsigned want = opt->order < 0 ? CHURN_MAX_ORDER : (unsigned)opt->order;
	c->max_order = want < cfg.max_order ? want : cfg.max_order;
	c->nt = opt->threads ? opt->threads : 1;
	c->seed = opt->seed_set ? opt->seed : CHURN_SEED;
	unsigned orders = c->max_order + 1;
	c->t = calloc(c->nt, sizeof *c->t);
	c->counts = calloc(2 * (size_t)orders * (c->nt + 1), sizeof *c->counts);
	c->ops_per_sec = calloc(c->runs, sizeof *c->ops_per_sec);
	if (!c->t || !c->counts || !c->ops_per_sec)
		return -1;
	uint64_t budget = u.managed * CHURN_HELD_PERCENT / 100 / c->nt;
	for (unsigned i = 0; i < c->nt; i++) {
		struct churn_thread *t = &c->t[i];
		*t = (struct churn_thread){ .pool = c->pool,
			                    .max_order = c->max_order,
			                    .budget = budget };
		t->allocs = c->counts + 2 * (size_t)orders * i;
		t->fails = t->allocs + orders;
		t->set = calloc(budget + 1, sizeof *t->set);
		if (!t->set)
			return -1;
	}
	return 0;
}

static void churn_cleanup(struct churn *c)
{
	for (unsigned i = 0; c->t && i < c->nt; i++)
		free(c->t[i].set);
	free(c->t);
	free(c->counts);
	free(c->ops_per_sec);
}

/* One timed run; every thread starts from an empty set with its own stream. */
static int churn_run(struct churn *c, unsigned run)
{
	const struct bench_opts *opt = c->opt;
	double seconds = opt->seconds > 0 ? opt->seconds : CHURN_SECONDS;
	uint64_t start = bench_now_ns();
	for (unsigned i = 0; i < c->nt; i++) {
		struct churn_thread *t = &c->t[i];
		t->rng = bench_seed_state(c->seed, (uint64_t)run * c->nt + i);
		t->ops = 0;
		t->ops_limit = opt->ops ? (opt->ops + c->nt - 1) / c->nt : 0;
		t->start_ns = start;
		t->deadline_ns = start + (uint64_t)(seconds * 1e9);
		t->progress_base = (double)run / c->runs;
		t->progress_span = i == 0 ? 1.0 / c->runs : 0;
	}
	if (bench_parallel(c->nt, churn_worker, c->t, sizeof *c->t))
		return -1;
	double elapsed = (double)(bench_now_ns() - start) / 1e9;
	uint64_t ops = 0;
	for (unsigned i = 0; i < c->nt; i++)
		ops += c->t[i].ops;
	c->ops_per_sec[run] = elapsed > 0 ? (double)ops / elapsed : 0;
	return 0;
}

static void churn_totals(struct churn *c, uint64_t *allocs, uint64_t *fails, uint64_t *sum)
{
	unsigned orders = c->max_order + 1;
	sum[0] = sum[1] = sum[2] = sum[3] = 0;
	for (unsigned i = 0; i < c->nt; i++) {
		for (unsigned k = 0; k < orders; k++) {
			allocs[k] += c->t[i].allocs[k];
			fails[k] += c->t[i].fails[k];
		}
		sum[2] += c->t[i].frees;
		sum[3] += c->t[i].ops;
	}
	for (unsigned k = 0; k < orders; k++) {
		sum[0] += allocs[k];
		sum[1] += fails[k];
	}
}

static void churn_print_counts(struct churn *c, struct bench_out *o)
{
	unsigned orders = c->max_order + 1;
	uint64_t *allocs = c->counts + 2 * (size_t)orders * c->nt, *fails = allocs + orders, s[4];
	churn_totals(c, allocs, fails, s);
	bench_out_u64(o, "allocations", s[0]);
	bench_out_u64(o, "failures", s[1]);
	bench_out_u64(o, "frees_during_churn", s[2]);
	bench_out_u64(o, "ops_last_run", s[3]);
	const char *names[] = { "allocations", "failures" };
	const uint64_t *rows[] = { allocs, fails };
	bench_out_orders(o, "per_order", names, rows, 2, orders);
	bench_out_note(o, "the churn's own allocations and failures, per block order");
}

/* The vmstat lines worth a look after a churn; names not present are skipped. */
static const char *const vmstat_highlights[] = {
	"nr_free_pages",
	"pgalloc_dma",
	"pgalloc_dma32",
	"pgalloc_normal",
	"pgalloc_movable",
	"pgfree",
	"pgalloc_fail",
	"pgalloc_fallback_steal",
	"pgalloc_fallback_claim",
	"highatomic_reserve",
	"bad_page",
};

static void churn_print_vmstat(struct churn *c, struct bench_out *o)
{
	uint64_t v;
	if (!o->json)
		fprintf(o->f, "\nvmstat highlights: counters of the whole run, as /proc/vmstat\n");
	for (size_t i = 0; i < sizeof vmstat_highlights / sizeof vmstat_highlights[0]; i++)
		if (pa_vmstat_read(c->pool, vmstat_highlights[i], &v) == 0)
			bench_out_u64(o, vmstat_highlights[i], v);
}

/* Where every frame is after the churn: the buddy, the per-CPU lists, or held. */
static void churn_print_usage(struct churn *c, struct bench_out *o)
{
	struct pa_usage u;
	pa_get_usage(c->pool, &u);
	uint64_t pcp = bench_pcp_frames(c->pool);
	bench_out_open(o, "frames_after");
	bench_out_u64(o, "managed", u.managed);
	bench_out_u64(o, "free_in_buddy", u.free);
	bench_out_u64(o, "on_per_cpu_lists", pcp);
	bench_out_u64(o, "allocated", u.allocated);
	bench_out_u64(o, "other_reserved", u.reserved > pcp ? u.reserved - pcp : 0);
	bench_out_note(o, "managed = free in the buddy + on the per-CPU lists + allocated + "
	                  "other reserved; `pcp/drain` gives the per-CPU frames back");
	bench_out_close(o);
}

static int churn_validate(struct churn *c, struct bench_out *o)
{
	char err[512] = "";
	int ret = pa_validate(c->pool, err, sizeof err);
	bench_out_str(o, "validate", ret ? err : "ok");
	return ret;
}

/* ---------------------------------------------------------------------- */
/* The workload                                                            */
/* ---------------------------------------------------------------------- */

static void churn_print_head(struct churn *c, struct bench_out *o)
{
	const struct bench_opts *opt = c->opt;
	bench_out_str(o, "boot", bench_boot_line(opt, CHURN_BOOT));
	bench_out_u64(o, "seed", c->seed);
	bench_out_u64(o, "threads", c->nt);
	bench_out_u64(o, "max_order", c->max_order);
	bench_out_u64(o, "runs", c->runs);
	if (opt->ops)
		bench_out_u64(o, "ops", opt->ops);
	else
		bench_out_f64(o, "seconds", opt->seconds > 0 ? opt->seconds : CHURN_SECONDS);
	bench_out_u64(o, "budget_frames_per_thread", c->t[0].budget);
}

/* Measured: boot, churn --runs times, and print the state before, during and after. */
static int churn_measured(struct churn *c, FILE *out)
{
	struct bench_out o;
	int ret = 0;
	bench_out_begin(&o, out, c->opt->json, "churn");
	churn_print_head(c, &o);
	bench_out_report_note(&o, "buddyinfo_before",
	                      "free blocks per order (0 to max_order, left to right), after boot",
	                      c->pool, PA_REPORT_BUDDYINFO);
	for (unsigned r = 0; !ret && r < c->runs; r++) {
		bench_progress_step(r, c->runs);
		ret = churn_run(c, r);
		if (!ret && r + 1 == c->runs)
			bench_out_report_note(&o, "buddyinfo_held",
			                      "the same at the end of the last run, the churn's "
			                      "blocks still held",
			                      c->pool, PA_REPORT_BUDDYINFO);
		for (unsigned i = 0; i < c->nt; i++)
			churn_free_all(&c->t[i]);
	}
	if (ret)
		return ret;
	bench_out_metric(&o, "ops_per_sec", "operations per second, all threads", c->ops_per_sec,
	                 c->runs);
	bench_out_note(&o, "an operation is one allocation or one free of a random order");
	churn_print_counts(c, &o);
	churn_print_vmstat(c, &o);
	bench_out_report_note(&o, "buddyinfo_after",
	                      "the same after every block was freed; frames cached on the "
	                      "per-CPU lists are not in it",
	                      c->pool, PA_REPORT_BUDDYINFO);
	churn_print_usage(c, &o);
	ret = churn_validate(c, &o);
	bench_out_end(&o);
	return ret ? 1 : 0;
}

int bench_churn(const struct bench_opts *opt, struct pa_pool *given, FILE *out)
{
	struct churn c = { .opt = opt, .pool = given };
	c.runs = given ? 1 : opt->runs ? opt->runs : 1;
	if (!c.pool && bench_boot(opt, CHURN_BOOT, &c.pool))
		return 1;
	int ret = churn_setup(&c);
	if (ret)
		fprintf(stderr, "pagealloc: churn: out of memory\n");
	else if (!given)
		ret = churn_measured(&c, out);
	else if (!(ret = churn_run(&c, 0)) && !opt->keep)
		for (unsigned i = 0; i < c.nt; i++)
			churn_free_all(&c.t[i]);
	churn_cleanup(&c);
	if (!given)
		pa_shutdown(c.pool);
	return ret ? 1 : 0;
}
