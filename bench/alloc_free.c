/* SPDX-License-Identifier: MIT */
/*
 * alloc-free-hot and alloc-free-bulk: the cost of one allocation and one
 * free, with the block freed at once (hot: the same block comes back every
 * time) or after N others (bulk: the free lists are walked down and built
 * back up), as page_bench measures the kernel's.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HOT_BOOT           "mem=1G min_free_kbytes=0"
#define BULK_BOOT          "mem=4G min_free_kbytes=0"
#define DEFAULT_RUNS       5
#define BULK_DEFAULT_NR    (1ull << 20)
#define BULK_DEFAULT_BATCH 128

static unsigned opt_order(const struct bench_opts *opt)
{
	return opt->order < 0 ? 0 : (unsigned)opt->order;
}

static unsigned opt_runs(const struct bench_opts *opt, const struct pa_pool *given)
{
	return given ? 1 : opt->runs ? opt->runs : DEFAULT_RUNS;
}

static unsigned opt_threads(const struct bench_opts *opt)
{
	return opt->threads ? opt->threads : 1;
}

/* Large blocks cost more per pair; keep a run near a second at most. */
static uint64_t hot_default_ops(unsigned order)
{
	return order <= 3 ? 10000000 : order <= 12 ? 1000000 : 100000;
}

/* Figures common to both workloads' output. */
static void out_header(struct bench_out *o, const struct bench_opts *opt, const char *boot,
                       unsigned runs)
{
	bench_out_str(o, "boot", boot);
	bench_out_u64(o, "order", opt_order(opt));
	char gfp[160];
	bench_out_str(o, "gfp", bench_gfp_name(opt->gfp, gfp, sizeof gfp));
	bench_out_u64(o, "threads", opt_threads(opt));
	bench_out_u64(o, "runs", runs);
}

/* ---------------------------------------------------------------------- */
/* alloc-free-hot                                                          */
/* ---------------------------------------------------------------------- */

struct hot_thread {
	struct pa_pool *pool;
	pa_gfp_t gfp;
	unsigned order;
	uint64_t ops;
	uint64_t ns;
	uint64_t done; /* pairs completed; fewer than ops when an allocation failed */
};

static void *hot_worker(void *arg)
{
	struct hot_thread *t = arg;
	uint64_t start = bench_now_ns(), i;
	for (i = 0; i < t->ops; i++) {
		struct pa_page *page = pa_alloc_pages(t->pool, t->gfp, t->order);
		if (__builtin_expect(!page, 0))
			break;
		pa_free_pages(t->pool, page, t->order);
	}
	t->ns = bench_now_ns() - start;
	t->done = i;
	return NULL;
}

/* One run on every thread; the mean ns per pair over the threads, or -1 on a failure. */
static double hot_run(struct pa_pool *pool, const struct bench_opts *opt, struct hot_thread *t,
                      unsigned nt)
{
	uint64_t ops = opt->ops ? opt->ops : hot_default_ops(opt_order(opt));
	for (unsigned i = 0; i < nt; i++)
		t[i] = (struct hot_thread){
			.pool = pool, .gfp = opt->gfp, .order = opt_order(opt), .ops = ops
		};
	if (bench_parallel(nt, hot_worker, t, sizeof *t))
		return -1;
	double sum = 0;
	for (unsigned i = 0; i < nt; i++) {
		if (t[i].done < t[i].ops) {
			fprintf(stderr,
			        "pagealloc: alloc-free-hot: order-%u allocation failed after "
			        "%llu pairs\n",
			        t[i].order, (unsigned long long)t[i].done);
			return -1;
		}
		sum += (double)t[i].ns / (double)t[i].ops;
	}
	return sum / nt;
}

int bench_alloc_free_hot(const struct bench_opts *opt, struct pa_pool *given, FILE *out)
{
	struct pa_pool *pool = given;
	if (!pool && bench_boot(opt, HOT_BOOT, &pool))
		return 1;
	unsigned runs = opt_runs(opt, given), nt = opt_threads(opt);
	struct hot_thread *t = calloc(nt, sizeof *t);
	double *ns = calloc(runs, sizeof *ns);
	int ret = !t || !ns || bench_check_order(pool, opt_order(opt));
	for (unsigned r = 0; !ret && r < runs; r++) {
		bench_progress_step(r, runs);
		ns[r] = hot_run(pool, opt, t, nt);
		ret = ns[r] < 0;
	}
	if (!ret && !given) {
		struct bench_out o;
		bench_out_begin(&o, out, opt->json, "alloc-free-hot");
		out_header(&o, opt, bench_boot_line(opt, HOT_BOOT), runs);
		bench_out_u64(&o, "ops", t[0].ops);
		bench_out_metric(&o, "ns_per_op", "ns per alloc+free pair", ns, runs);
		bench_out_end(&o);
	}
	free(t);
	free(ns);
	if (!given)
		pa_shutdown(pool);
	return ret;
}

/* ---------------------------------------------------------------------- */
/* alloc-free-bulk                                                         */
/* ---------------------------------------------------------------------- */

struct bulk_thread {
	struct pa_pool *pool;
	const struct bench_opts *opt;
	unsigned order, cpu; /* cpu: the CPU it poses as */
	uint64_t nr;         /* blocks to take */
	struct pa_page **blocks;
	uint64_t got; /* blocks taken */
	uint64_t alloc_ns, free_ns;
	uint64_t cpu_ns; /* the thread's CPU time for both */
	bool keep;       /* leave the blocks allocated */
};

static uint64_t bulk_alloc_loop(struct bulk_thread *t, pa_gfp_t gfp)
{
	uint64_t i;
	for (i = 0; i < t->nr; i++) {
		t->blocks[i] = pa_alloc_pages(t->pool, gfp, t->order);
		if (!t->blocks[i])
			break;
	}
	return i;
}

static uint64_t bulk_alloc_api(struct bulk_thread *t, pa_gfp_t gfp)
{
	unsigned batch = t->opt->batch ? t->opt->batch : BULK_DEFAULT_BATCH;
	uint64_t got = 0;
	while (got < t->nr) {
		uint64_t want = t->nr - got < batch ? t->nr - got : batch;
		unsigned n = pa_alloc_pages_bulk(t->pool, gfp, t->order, (unsigned)want,
		                                 t->blocks + got);
		got += n;
		if (n < want)
			break;
	}
	return got;
}

/* On a loaded machine wall time shows the load; CPU time shows what the threads cost each other. */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *bulk_worker(void *arg)
{
	struct bulk_thread *t = arg;
	/* Past what fits, an allocation fails: that ends the run, quietly. */
	pa_gfp_t gfp = t->opt->gfp | PA_GFP_NOWARN;
	bench_pose_as_cpu(t->cpu);
	uint64_t cpu0 = thread_cpu_ns(), start = bench_now_ns();
	t->got = t->opt->api_bulk ? bulk_alloc_api(t, gfp) : bulk_alloc_loop(t, gfp);
	uint64_t mid = bench_now_ns();
	for (uint64_t i = 0; i < t->got && !t->keep; i++)
		pa_free_pages(t->pool, t->blocks[i], t->order);
	t->alloc_ns = mid - start;
	t->free_ns = bench_now_ns() - mid;
	t->cpu_ns = thread_cpu_ns() - cpu0;
	return NULL;
}

/* Blocks per run: --nr, or 1Mi, but never more than the free memory holds. */
static uint64_t bulk_nr(struct pa_pool *pool, const struct bench_opts *opt)
{
	if (opt->nr)
		return opt->nr;
	struct pa_usage u;
	pa_get_usage(pool, &u);
	uint64_t fit = u.free >> opt_order(opt);
	return fit < BULK_DEFAULT_NR ? fit : BULK_DEFAULT_NR;
}

static int bulk_setup(struct pa_pool *pool, const struct bench_opts *opt, struct bulk_thread *t,
                      unsigned nt, bool keep)
{
	uint64_t nr = bulk_nr(pool, opt);
	for (unsigned i = 0; i < nt; i++) {
		uint64_t share = nr / nt + (i < nr % nt);
		t[i] = (struct bulk_thread){ .pool = pool,
			                     .opt = opt,
			                     .order = opt_order(opt),
			                     .cpu = i,
			                     .nr = share,
			                     .keep = keep };
		t[i].blocks = calloc(share ? share : 1, sizeof *t[i].blocks);
		if (!t[i].blocks)
			return -1;
	}
	return 0;
}

/*
 * The samples of one run: ns per allocation, per free, per pair (means over
 * threads), and the throughput of all threads: their operations over the
 * longest thread's time (they start together at a barrier).
 */
static int bulk_run(struct bulk_thread *t, unsigned nt, double *alloc, double *freeing,
                    double *pair, double *ops_per_sec, double *cpu_per_op)
{
	if (bench_parallel(nt, bulk_worker, t, sizeof *t))
		return -1;
	uint64_t ops = 0, wall = 1, cpu = 0;
	*alloc = *freeing = *pair = 0;
	for (unsigned i = 0; i < nt; i++) {
		if (!t[i].got) {
			fprintf(stderr,
			        "pagealloc: alloc-free-bulk: no order-%u block could be "
			        "allocated\n",
			        t[i].order);
			return -1;
		}
		*alloc += (double)t[i].alloc_ns / (double)t[i].got / nt;
		*freeing += (double)t[i].free_ns / (double)t[i].got / nt;
		ops += 2 * t[i].got;
		cpu += t[i].cpu_ns;
		if (t[i].alloc_ns + t[i].free_ns > wall)
			wall = t[i].alloc_ns + t[i].free_ns;
	}
	*pair = *alloc + *freeing;
	*ops_per_sec = (double)ops * 1e9 / (double)wall;
	*cpu_per_op = (double)cpu / (double)ops;
	return 0;
}

static void bulk_print(struct pa_pool *pool, const struct bench_opts *opt,
                       const struct bulk_thread *t, unsigned nt, double *const samples[5],
                       unsigned runs, FILE *out)
{
	uint64_t got = 0;
	for (unsigned i = 0; i < nt; i++)
		got += t[i].got;
	struct bench_out o;
	bench_out_begin(&o, out, opt->json, "alloc-free-bulk");
	char boot[1024];
	out_header(&o, opt, bench_posing_line(opt, BULK_BOOT, nt, boot, sizeof boot), runs);
	bench_out_str(&o, "api", opt->api_bulk ? "pa_alloc_pages_bulk" : "pa_alloc_pages");
	bench_out_u64(&o, "blocks", got);
	bench_out_metric(&o, "alloc_ns_per_op", "ns per allocation", samples[0], runs);
	bench_out_metric(&o, "free_ns_per_op", "ns per free", samples[1], runs);
	bench_out_metric(&o, "ns_per_op", "ns per alloc+free pair", samples[2], runs);
	bench_out_metric(&o, "ops_per_sec", "allocations+frees per second, all threads", samples[3],
	                 runs);
	bench_out_metric(&o, "cpu_ns_per_op",
	                 "CPU ns per allocation or free, all threads' CPU time", samples[4], runs);
	char *locks = bench_report_text(pool, PA_REPORT_LOCKSTAT, PA_REPORT_JSON);
	if (locks) /* refills and spills of every run share the zone lock: its contention */
		bench_out_u64(&o, "zone_lock_contended", bench_zone_lock_contended(locks));
	free(locks);
	bench_out_end(&o);
}

int bench_alloc_free_bulk(const struct bench_opts *opt, struct pa_pool *given, FILE *out)
{
	struct pa_pool *pool = given;
	unsigned runs = opt_runs(opt, given), nt = opt_threads(opt);
	/* Each thread poses as its own CPU, so that threads never share per-CPU lists. */
	if (!pool && bench_boot_posing(opt, BULK_BOOT, nt, &pool))
		return 1;
	struct bulk_thread *t = calloc(nt, sizeof *t);
	double *s = calloc(5 * (size_t)runs, sizeof *s);
	double *const samples[5] = { s, s + runs, s + 2 * runs, s + 3 * runs, s + 4 * runs };
	int ret = !t || !s || bench_check_order(pool, opt_order(opt)) ||
	          bulk_setup(pool, opt, t, nt, given && opt->keep);
	for (unsigned r = 0; !ret && r < runs; r++) {
		bench_progress_step(r, runs);
		ret = bulk_run(t, nt, &samples[0][r], &samples[1][r], &samples[2][r],
		               &samples[3][r], &samples[4][r]) != 0;
	}
	if (!ret && !given)
		bulk_print(pool, opt, t, nt, samples, runs, out);
	for (unsigned i = 0; t && i < nt; i++)
		free(t[i].blocks);
	free(t);
	free(s);
	if (!given)
		pa_shutdown(pool);
	return ret;
}
