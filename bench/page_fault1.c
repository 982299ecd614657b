/* SPDX-License-Identifier: MIT */
/*
 * page-fault1: will-it-scale's page_fault1 reduced to allocator operations
 * (shared/reference/workloads.md), the workload of seed 002.
 *
 * Each thread, per iteration, "maps 128 MiB": it allocates movable folios of
 * --order covering 128 MiB (PA_GFP_USER_MOVABLE | PA_GFP_COMP), with one
 * unmovable order-0 page-table page ahead of every 2 MiB, as the first
 * fault in a 2 MiB range allocates its PTE page. Then it "unmaps": the
 * folios are freed in batches of 31 (the library has no bulk free, so a
 * batch is 31 calls in a row, as free_unref_folios() walks its batch), then
 * the page-table pages, as free_pgtables() runs after unmap_vmas().
 *
 * Threads pose as CPUs 0..threads-1 (bench_boot_posing), so each uses its
 * own per-CPU lists as the seed's tasks did, whatever core they run on.
 * Every run boots a fresh pool, so each lock table counts one run only.
 * --compare runs the order off the per-CPU lists (as mainline Linux keeps
 * order 4 off) and then on, switched with pcp/orders/<N>/enabled.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PF1_MAP_BYTES      (128ull << 20)
#define PF1_PT_SPAN        (2ull << 20) /* bytes one page-table page maps */
#define PF1_FREE_BATCH     31
#define PF1_THREADS        4
#define PF1_RUNS           5
#define PF1_OPS_PER_RUN    4000000 /* per thread: sets the default --iterations */
/*
 * The default pool: ZONE_DMA32 (the first 4 GiB) plus a Normal zone of 2 GiB
 * per thread. Linux caps a CPU's lists at high_max = managed / 8 / CPUs, so
 * this gives each posing CPU 256 MiB of list room in the zone it allocates
 * from, twice the 128 MiB it maps, as on the seed's large machine. With
 * less (mem=2G: high_max 64 MiB) half of every mapping goes through
 * refills and spills, which the contention ratio is not about.
 */
#define PF1_DMA32_MB       4096
#define PF1_MEM_PER_THREAD 2048 /* MiB of Normal zone per thread */
#define PF1_FOLIO_GFP      (PA_GFP_USER_MOVABLE | PA_GFP_COMP)

/* Whether the order goes through the per-CPU lists in a configuration. */
enum pf1_pcp { PF1_AS_BOOTED, PF1_OFF, PF1_ON };

struct pf1_thread {
	struct pa_pool *pool;
	unsigned cpu, order;
	uint64_t iterations, nr_folios, nr_tables;
	struct pa_page **folios, **tables;
	uint64_t ops, ns;
	bool failed;
};

/* The figures of one configuration. */
struct pf1_result {
	enum pf1_pcp pcp;
	double *ops_per_sec;         /* [run], per thread */
	char *lock_text, *lock_json; /* the last run's lock table */
	double *contended;           /* [run], zone-lock contended acquisitions */
	double *wait_ms;             /* [run], ms waited for the zone locks */
};

struct pf1 {
	const struct bench_opts *opt;
	unsigned nt, order, runs;
	uint64_t iterations;
	char def_boot[64], boot[1024];
	struct pf1_thread *t;
};

/* ---------------------------------------------------------------------- */
/* The threads                                                             */
/* ---------------------------------------------------------------------- */

/* Fault in 128 MiB: a page-table page first in every 2 MiB, then the folio. */
static uint64_t pf1_map(struct pf1_thread *t, uint64_t folio_bytes)
{
	uint64_t ops = 0, tables = 0;
	for (uint64_t i = 0; i < t->nr_folios; i++) {
		if ((i * folio_bytes) % PF1_PT_SPAN == 0 && tables < t->nr_tables) {
			t->tables[tables] = pa_alloc_pages(t->pool, PA_GFP_KERNEL, 0);
			if (!t->tables[tables++])
				return t->failed = true, ops;
			ops++;
		}
		t->folios[i] = pa_alloc_pages(t->pool, PF1_FOLIO_GFP, t->order);
		if (!t->folios[i])
			return t->failed = true, ops;
		ops++;
	}
	return ops;
}

/* Unmap: the folios in batches of 31, then the page tables; NULLs from a failed map skipped. */
static uint64_t pf1_unmap(struct pf1_thread *t)
{
	uint64_t ops = 0;
	for (uint64_t i = 0; i < t->nr_folios; i += PF1_FREE_BATCH) {
		uint64_t end =
		        i + PF1_FREE_BATCH < t->nr_folios ? i + PF1_FREE_BATCH : t->nr_folios;
		for (uint64_t k = i; k < end; k++)
			if (t->folios[k])
				pa_free_pages(t->pool, t->folios[k], t->order), ops++;
	}
	for (uint64_t i = 0; i < t->nr_tables; i++)
		if (t->tables[i])
			pa_free_pages(t->pool, t->tables[i], 0), ops++;
	return ops;
}

static void *pf1_worker(void *arg)
{
	struct pf1_thread *t = arg;
	struct pa_config cfg;
	pa_get_config(t->pool, &cfg);
	uint64_t folio_bytes = cfg.page_size << t->order;
	bench_pose_as_cpu(t->cpu);
	uint64_t start = bench_now_ns();
	for (uint64_t it = 0; it < t->iterations && !t->failed; it++) {
		memset(t->folios, 0, t->nr_folios * sizeof *t->folios);
		memset(t->tables, 0, t->nr_tables * sizeof *t->tables);
		t->ops += pf1_map(t, folio_bytes);
		t->ops += pf1_unmap(t);
	}
	t->ns = bench_now_ns() - start;
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* Setup                                                                   */
/* ---------------------------------------------------------------------- */

static uint64_t pf1_nr_folios(const struct pa_config *cfg, unsigned order)
{
	uint64_t n = PF1_MAP_BYTES / (cfg->page_size << order);
	return n ? n : 1;
}

/* Enough iterations for about PF1_OPS_PER_RUN operations per thread (with 4 KiB pages). */
static uint64_t pf1_default_iterations(unsigned order)
{
	uint64_t per_iter = 2 * ((PF1_MAP_BYTES >> 12 >> order) + PF1_MAP_BYTES / PF1_PT_SPAN);
	uint64_t n = PF1_OPS_PER_RUN / per_iter;
	return n ? n : 1;
}

static int pf1_setup(struct pf1 *c, const struct bench_opts *opt)
{
	c->opt = opt;
	c->nt = opt->threads ? opt->threads : PF1_THREADS;
	c->order = opt->order < 0 ? 0 : (unsigned)opt->order;
	c->runs = opt->runs ? opt->runs : PF1_RUNS;
	c->iterations = opt->iterations ? opt->iterations : pf1_default_iterations(c->order);
	uint64_t mb = PF1_DMA32_MB + (uint64_t)c->nt * PF1_MEM_PER_THREAD;
	snprintf(c->def_boot, sizeof c->def_boot, "mem=%" PRIu64 "M", mb);
	bench_posing_line(opt, c->def_boot, c->nt, c->boot, sizeof c->boot);
	c->t = calloc(c->nt, sizeof *c->t);
	return c->t ? 0 : -1;
}

static int pf1_threads_init(struct pf1 *c, struct pa_pool *pool)
{
	struct pa_config cfg;
	pa_get_config(pool, &cfg);
	for (unsigned i = 0; i < c->nt; i++) {
		struct pf1_thread *t = &c->t[i];
		*t = (struct pf1_thread){ .pool = pool,
			                  .cpu = i,
			                  .order = c->order,
			                  .iterations = c->iterations,
			                  .nr_folios = pf1_nr_folios(&cfg, c->order),
			                  .nr_tables = PF1_MAP_BYTES / PF1_PT_SPAN };
		t->folios = calloc(t->nr_folios, sizeof *t->folios);
		t->tables = calloc(t->nr_tables, sizeof *t->tables);
		if (!t->folios || !t->tables)
			return -1;
	}
	return 0;
}

static void pf1_threads_free(struct pf1 *c)
{
	for (unsigned i = 0; i < c->nt; i++) {
		free(c->t[i].folios);
		free(c->t[i].tables);
	}
}

/* Switch the order on or off the per-CPU lists through the control tree. */
static int pf1_set_pcp(struct pa_pool *pool, unsigned order, enum pf1_pcp pcp)
{
	if (pcp == PF1_AS_BOOTED)
		return 0;
	char path[48];
	snprintf(path, sizeof path, "pcp/orders/%u/enabled", order);
	int ret = pa_ctl_write(pool, path, pcp == PF1_ON ? "1" : "0");
	if (ret)
		fprintf(stderr, "pagealloc: page-fault1: %s: %s\n", path, strerror(-ret));
	return ret;
}

/* ---------------------------------------------------------------------- */
/* A run                                                                   */
/* ---------------------------------------------------------------------- */

/* The ops per second per thread of the run (mean of the threads), or -1 on a failure. */
static double pf1_measure(struct pf1 *c)
{
	if (bench_parallel(c->nt, pf1_worker, c->t, sizeof *c->t))
		return -1;
	double sum = 0;
	for (unsigned i = 0; i < c->nt; i++) {
		if (c->t[i].failed) {
			fprintf(stderr,
			        "pagealloc: page-fault1: thread %u could not map 128 MiB of order-%u "
			        "folios; boot with more memory (--boot \"mem=...\")\n",
			        i, c->order);
			return -1;
		}
		sum += (double)c->t[i].ops * 1e9 / (double)(c->t[i].ns ? c->t[i].ns : 1);
	}
	return sum / c->nt;
}

/* Count the run's zone-lock contention; keep the lock table of the last run. */
static int pf1_keep_locks(struct pa_pool *pool, struct pf1_result *res, unsigned run, bool last)
{
	uint64_t contended, wait_ns;
	bench_zone_lock_totals(pool, &contended, &wait_ns);
	res->contended[run] = (double)contended;
	res->wait_ms[run] = (double)wait_ns / 1e6;
	if (!last)
		return 0;
	char *json = bench_report_text(pool, PA_REPORT_LOCKSTAT, PA_REPORT_JSON);
	if (!json)
		return -1;
	free(res->lock_text);
	free(res->lock_json);
	res->lock_json = json;
	res->lock_text = bench_report_text(pool, PA_REPORT_LOCKSTAT, 0);
	return res->lock_text ? 0 : -1;
}

static int pf1_validate(struct pa_pool *pool)
{
	char err[512] = "";
	if (pa_validate(pool, err, sizeof err) == 0)
		return 0;
	fprintf(stderr, "pagealloc: page-fault1: pa_validate: %s\n", err);
	return -1;
}

/* One run on a fresh pool. */
static int pf1_run(struct pf1 *c, struct pf1_result *res, unsigned run)
{
	struct pa_pool *pool;
	if (bench_boot_posing(c->opt, c->def_boot, c->nt, &pool))
		return -1;
	int ret = bench_check_order(pool, c->order) || pf1_set_pcp(pool, c->order, res->pcp) ||
	          pf1_threads_init(c, pool);
	if (!ret) {
		res->ops_per_sec[run] = pf1_measure(c);
		ret = res->ops_per_sec[run] < 0 || pf1_validate(pool);
	}
	if (!ret)
		ret = pf1_keep_locks(pool, res, run, run + 1 == c->runs);
	pf1_threads_free(c);
	pa_shutdown(pool);
	return ret ? -1 : 0;
}

static int pf1_config(struct pf1 *c, struct pf1_result *res)
{
	res->ops_per_sec = calloc(c->runs, sizeof *res->ops_per_sec);
	res->contended = calloc(c->runs, sizeof *res->contended);
	res->wait_ms = calloc(c->runs, sizeof *res->wait_ms);
	if (!res->ops_per_sec || !res->contended || !res->wait_ms)
		return -1;
	for (unsigned r = 0; r < c->runs; r++) {
		bench_progress_step(r, c->runs);
		if (pf1_run(c, res, r))
			return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Output                                                                  */
/* ---------------------------------------------------------------------- */

static const char *pf1_pcp_name(enum pf1_pcp pcp)
{
	return pcp == PF1_ON ? "on" : pcp == PF1_OFF ? "off" : "as booted";
}

/* The JSON array of the lockstat report {"locks":[...]}. */
static void pf1_out_locks(struct bench_out *o, const char *json)
{
	const char *open = strchr(json, '['), *close = strrchr(json, ']');
	if (!open || !close || close < open) {
		bench_out_json(o, "locks", "null");
		return;
	}
	char *arr = strndup(open, (size_t)(close - open + 1));
	bench_out_json(o, "locks", arr ? arr : "null");
	free(arr);
}

static void pf1_out_result(struct bench_out *o, const struct pf1 *c, const struct pf1_result *res)
{
	bench_out_metric(o, "ops_per_sec_per_thread", "allocations+frees per second per thread",
	                 res->ops_per_sec, c->runs);
	bench_out_metric(o, "zone_lock_contended", "contended zone-lock acquisitions per run",
	                 res->contended, c->runs);
	/* A count, not a cost: waiters that spin on keep meeting; the time waited says what it cost. */
	bench_out_metric(o, "zone_lock_wait_ms",
	                 "ms waited for the zone locks per run, all threads", res->wait_ms,
	                 c->runs);
	if (o->json)
		pf1_out_locks(o, res->lock_json);
	else
		fprintf(o->f, "\nlock contention, last run:\n%s", res->lock_text);
}

static void pf1_out_head(struct bench_out *o, const struct pf1 *c)
{
	bench_out_str(o, "boot", c->boot);
	bench_out_u64(o, "order", c->order);
	bench_out_u64(o, "threads", c->nt);
	bench_out_u64(o, "iterations", c->iterations);
	bench_out_u64(o, "runs", c->runs);
}

/* Median off / median on; no ratio (NaN: null in JSON) when on is 0. */
static double pf1_ratio(const struct pf1 *c, const struct pf1_result res[2], double *off,
                        double *on)
{
	struct bench_summary s[2];
	for (unsigned i = 0; i < 2; i++)
		bench_summarize(res[i].contended, c->runs, &s[i]);
	*off = s[0].median;
	*on = s[1].median;
	return *on > 0 ? *off / *on : NAN;
}

static void pf1_print(const struct pf1 *c, const struct pf1_result *res, unsigned nr, FILE *out)
{
	struct bench_out o;
	bench_out_begin(&o, out, c->opt->json, "page-fault1");
	pf1_out_head(&o, c);
	if (nr == 1) {
		bench_out_str(&o, "pcp_order", pf1_pcp_name(res[0].pcp));
		pf1_out_result(&o, c, &res[0]);
	}
	for (unsigned i = 0; nr == 2 && i < 2; i++) {
		char head[64];
		snprintf(head, sizeof head, "%s", pf1_pcp_name(res[i].pcp));
		if (!o.json)
			snprintf(head, sizeof head, "order %u %s the per-CPU lists", c->order,
			         res[i].pcp == PF1_ON ? "on" : "off");
		bench_out_open(&o, head);
		pf1_out_result(&o, c, &res[i]);
		bench_out_close(&o);
	}
	if (nr == 2) {
		double off, on, ratio = pf1_ratio(c, res, &off, &on);
		if (!o.json)
			fprintf(out,
			        "\nzone lock contended, median of %u runs: %.0f off, %.0f on\n",
			        c->runs, off, on);
		bench_out_f64(&o, "zone_lock_contended_ratio", ratio);
	}
	bench_out_end(&o);
}

int bench_page_fault1(const struct bench_opts *opt, struct pa_pool *given, FILE *out)
{
	(void)given; /* own_pool: it boots one pool per run */
	struct pf1 c = { 0 };
	struct pf1_result res[2] = { { .pcp = opt->compare ? PF1_OFF : PF1_AS_BOOTED },
		                     { .pcp = PF1_ON } };
	unsigned nr = opt->compare ? 2 : 1;
	int ret = pf1_setup(&c, opt);
	for (unsigned i = 0; !ret && i < nr; i++)
		ret = pf1_config(&c, &res[i]);
	if (!ret)
		pf1_print(&c, res, nr, out);
	for (unsigned i = 0; i < 2; i++) {
		free(res[i].ops_per_sec);
		free(res[i].contended);
		free(res[i].wait_ms);
		free(res[i].lock_text);
		free(res[i].lock_json);
	}
	free(c.t);
	return ret ? 1 : 0;
}
