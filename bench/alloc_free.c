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
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

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

/*
 * What keeps a thread off its CPU while it runs: waiting on a run queue,
 * runnable, while other tasks run (the kernel's schedstat for the thread,
 * -1 where it keeps none), and how often it was switched out, by sleeping
 * (voluntary: a lock's wait that sleeps) or by preemption (involuntary).
 */
struct off_cpu {
	int64_t runq_ns;
	int64_t sleeps, preempted;
};

static struct off_cpu off_cpu_now(void)
{
	struct off_cpu o = { .runq_ns = -1 };
	struct rusage ru;
	if (getrusage(RUSAGE_THREAD, &ru) == 0) {
		o.sleeps = ru.ru_nvcsw;
		o.preempted = ru.ru_nivcsw;
	}
	FILE *f = fopen("/proc/thread-self/schedstat", "r");
	unsigned long long run, wait;
	if (f && fscanf(f, "%llu %llu", &run, &wait) == 2)
		o.runq_ns = (int64_t)wait;
	if (f)
		fclose(f);
	return o;
}

static struct off_cpu off_cpu_since(struct off_cpu a)
{
	struct off_cpu b = off_cpu_now();
	return (struct off_cpu){ .runq_ns = a.runq_ns < 0 || b.runq_ns < 0 ? -1 :
		                                                             b.runq_ns - a.runq_ns,
		                 .sleeps = b.sleeps - a.sleeps,
		                 .preempted = b.preempted - a.preempted };
}

struct bulk_thread {
	struct pa_pool *pool;
	const struct bench_opts *opt;
	unsigned order, cpu; /* cpu: the CPU it poses as */
	uint64_t nr;         /* blocks to take in a round */
	uint64_t rounds;     /* rounds of nr allocations, then nr frees, in a run */
	struct pa_page **blocks;
	uint64_t got; /* blocks taken in the run, all rounds */
	uint64_t alloc_ns, free_ns;
	uint64_t cpu_ns;        /* the thread's CPU time for both */
	uint64_t span_ns;       /* the wall time over which cpu_ns was taken */
	struct off_cpu off;     /* what kept it off its CPU meanwhile */
	bool keep;              /* leave the blocks allocated */
} __attribute__((aligned(64))); /* the threads' figures on lines of their own */

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
	struct off_cpu off0 = off_cpu_now();
	uint64_t cpu0 = thread_cpu_ns(), span0 = bench_now_ns();
	t->got = t->alloc_ns = t->free_ns = 0;
	for (uint64_t r = 0; r < t->rounds; r++) {
		uint64_t start = bench_now_ns();
		uint64_t got = t->opt->api_bulk ? bulk_alloc_api(t, gfp) : bulk_alloc_loop(t, gfp);
		uint64_t mid = bench_now_ns();
		for (uint64_t i = 0; i < got && !t->keep; i++)
			pa_free_pages(t->pool, t->blocks[i], t->order);
		t->alloc_ns += mid - start;
		t->free_ns += bench_now_ns() - mid;
		t->got += got;
		if (!got)
			break;
		t->nr = got; /* short of the free count (watermarks, lists): rounds of what it gave */
	}
	t->span_ns = bench_now_ns() - span0;
	t->cpu_ns = thread_cpu_ns() - cpu0;
	t->off = off_cpu_since(off0);
	return NULL;
}

/*
 * Blocks per run: --nr, or 1 Mi. A run takes them in rounds of as many as
 * the free memory holds (at most nr), each round allocating its blocks and
 * then freeing them all (an allocation that fails ends a round, and the
 * rounds after it take as many as it got), and makes as many whole rounds
 * as nr holds, at least one: order 0 is one round of what fits of 1 Mi, order 9 on 4 GiB is
 * 512 rounds of the pool's 2,048 blocks, so that no one timer tick or fault
 * decides a run. --keep makes one round.
 */
static uint64_t bulk_nr(const struct bench_opts *opt)
{
	return opt->nr ? opt->nr : BULK_DEFAULT_NR;
}

static uint64_t bulk_fit(struct pa_pool *pool, const struct bench_opts *opt)
{
	struct pa_usage u;
	pa_get_usage(pool, &u);
	return u.free >> opt_order(opt);
}

static int bulk_setup(struct pa_pool *pool, const struct bench_opts *opt, struct bulk_thread *t,
                      unsigned nt, bool keep)
{
	uint64_t nr = bulk_nr(opt), fit = bulk_fit(pool, opt);
	for (unsigned i = 0; i < nt; i++) {
		uint64_t share = nr / nt + (i < nr % nt), room = fit / nt + (i < fit % nt);
		uint64_t round = share < room ? share : room;
		t[i] = (struct bulk_thread){ .pool = pool,
			                     .opt = opt,
			                     .order = opt_order(opt),
			                     .cpu = i,
			                     .nr = round,
			                     .rounds = keep || !round ? 1 : share / round,
			                     .keep = keep };
		t[i].blocks = calloc(round ? round : 1, sizeof *t[i].blocks);
		if (!t[i].blocks)
			return -1;
	}
	return 0;
}

/*
 * Threads pose as CPUs of their own, through a cpu_id hook called on every
 * operation. One thread runs as an embedder without a hook does: the
 * library reads the CPU id itself (rseq, or the cached id), on a pool of
 * the machine's CPUs unless the boot line names nr_cpus, so that the hook's
 * call does not weigh on the per-CPU lists alone in --compare.
 */
static int bulk_boot(const struct bench_opts *opt, unsigned nt, struct pa_pool **pool)
{
	if (nt > 1)
		return bench_boot_posing(opt, BULK_BOOT, nt, pool);
	return bench_boot(opt, BULK_BOOT, pool);
}

static const char *bulk_boot_line(const struct bench_opts *opt, unsigned nt, char *buf, size_t len)
{
	if (nt > 1)
		return bench_posing_line(opt, BULK_BOOT, nt, buf, len);
	return bench_boot_line(opt, BULK_BOOT);
}

/* The figures of a run, one sample each. */
enum {
	BM_ALLOC,     /* ns per allocation, mean over threads */
	BM_FREE,      /* ns per free */
	BM_PAIR,      /* both */
	BM_OPS,       /* operations per second, all threads, over the longest thread's time */
	BM_CPU,       /* CPU ns per operation, all threads */
	BM_CONTENDED, /* contended zone-lock acquisitions */
	BM_WAIT,      /* ns waited for the zone lock */
	BM_OFF_CPU,   /* ms of the threads' wall time off their CPU, all threads */
	BM_RUNQ,      /* ms the threads waited on a run queue, all threads (-1: not known) */
	BM_SLEEPS,    /* voluntary context switches, all threads */
	BM_PREEMPTED, /* involuntary ones */
	BM_STEAL,     /* ms of the machine's CPU time stolen by the hypervisor (-1: not known) */
	BM_NR
};

/*
 * A way of running: how many threads, and the order on or off the per-CPU
 * lists (-1: as booted). --compare and --scaling alternate two in one pool.
 */
struct bulk_mode {
	char name[16];
	unsigned nt;
	int pcp;
	struct bulk_thread *t;
	double *s[BM_NR]; /* [run] */
};

/* The zone lock's contended acquisitions and wait so far. */
static void bulk_lock_totals(struct pa_pool *pool, double *contended, double *wait)
{
	uint64_t c, w;
	bench_zone_lock_totals(pool, &c, &w);
	*contended = (double)c;
	*wait = (double)w;
}

static int bulk_set_pcp(struct pa_pool *pool, unsigned order, int pcp)
{
	if (pcp < 0)
		return 0;
	char path[48];
	snprintf(path, sizeof path, "pcp/orders/%u/enabled", order);
	int ret = pa_ctl_write(pool, path, pcp ? "1" : "0");
	if (ret)
		fprintf(stderr, "pagealloc: alloc-free-bulk: %s: %s\n", path, bench_ctl_error(ret));
	return ret;
}

/* The mode's threads at once; their figures into row. */
static int bulk_threads(const struct bulk_mode *m, double row[BM_NR])
{
	struct bulk_thread *t = m->t;
	if (bench_parallel(m->nt, bulk_worker, t, sizeof *t))
		return -1;
	uint64_t ops = 0, wall = 1, cpu = 0;
	for (unsigned i = 0; i < m->nt; i++) {
		const struct off_cpu *off = &t[i].off;
		row[BM_RUNQ] = row[BM_RUNQ] < 0 || off->runq_ns < 0 ?
		                       -1 :
		                       row[BM_RUNQ] + off->runq_ns / 1e6;
		row[BM_OFF_CPU] += ((double)t[i].span_ns - (double)t[i].cpu_ns) / 1e6;
		row[BM_SLEEPS] += (double)off->sleeps;
		row[BM_PREEMPTED] += (double)off->preempted;
		if (!t[i].got) {
			fprintf(stderr,
			        "pagealloc: alloc-free-bulk: no order-%u block could be "
			        "allocated\n",
			        t[i].order);
			return -1;
		}
		row[BM_ALLOC] += (double)t[i].alloc_ns / (double)t[i].got / m->nt;
		row[BM_FREE] += (double)t[i].free_ns / (double)t[i].got / m->nt;
		ops += 2 * t[i].got;
		cpu += t[i].cpu_ns;
		if (t[i].alloc_ns + t[i].free_ns > wall)
			wall = t[i].alloc_ns + t[i].free_ns;
	}
	row[BM_PAIR] = row[BM_ALLOC] + row[BM_FREE];
	row[BM_OPS] = (double)ops * 1e9 / (double)wall;
	row[BM_CPU] = (double)cpu / (double)ops;
	return 0;
}

/* The machine's stolen CPU time so far, in ms (/proc/stat, all CPUs); -1 if unknown. */
static double steal_ms(void)
{
	FILE *f = fopen("/proc/stat", "r");
	unsigned long long v[8];
	int n = f ? fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
	                   &v[3], &v[4], &v[5], &v[6], &v[7]) :
	            0;
	if (f)
		fclose(f);
	long hz = sysconf(_SC_CLK_TCK);
	return n == 8 && hz > 0 ? (double)v[7] * 1e3 / (double)hz : -1;
}

/*
 * One run of a mode, into sample r (r < 0: a warm-up, not kept). On a pool
 * of its own each run starts with the per-CPU lists empty, as the first did.
 */
static int bulk_run(struct pa_pool *pool, struct bulk_mode *m, int r, bool own)
{
	double row[BM_NR] = { 0 }, c0, w0;
	if (bulk_set_pcp(pool, m->t[0].order, m->pcp))
		return -1;
	if (own)
		pa_drain_all(pool);
	bulk_lock_totals(pool, &c0, &w0);
	double s0 = steal_ms();
	if (bulk_threads(m, row))
		return -1;
	double s1 = steal_ms();
	row[BM_STEAL] = s0 < 0 || s1 < 0 ? -1 : s1 - s0;
	bulk_lock_totals(pool, &row[BM_CONTENDED], &row[BM_WAIT]);
	row[BM_CONTENDED] -= c0;
	row[BM_WAIT] -= w0;
	for (unsigned k = 0; r >= 0 && k < BM_NR; k++)
		m->s[k][r] = row[k];
	return 0;
}

static uint64_t bulk_sum(const double *s, unsigned n)
{
	double sum = 0;
	for (unsigned i = 0; i < n; i++)
		sum += s[i];
	return (uint64_t)sum;
}

/* Does every sample hold a figure (not -1, unknown)? */
static bool bulk_known(const double *s, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (s[i] < 0)
			return false;
	return true;
}

static void bulk_out_mode(struct bench_out *o, const struct bulk_mode *m, unsigned runs)
{
	bench_out_metric(o, "alloc_ns_per_op", "ns per allocation", m->s[BM_ALLOC], runs);
	bench_out_metric(o, "free_ns_per_op", "ns per free", m->s[BM_FREE], runs);
	bench_out_metric(o, "ns_per_op", "ns per alloc+free pair", m->s[BM_PAIR], runs);
	bench_out_metric(o, "ops_per_sec", "allocations+frees per second, all threads",
	                 m->s[BM_OPS], runs);
	bench_out_metric(o, "cpu_ns_per_op", "CPU ns per allocation or free, all threads' CPU time",
	                 m->s[BM_CPU], runs);
	/* Refills and spills share the zone lock: its contention over the runs counted. */
	bench_out_u64(o, "zone_lock_contended", bulk_sum(m->s[BM_CONTENDED], runs));
	bench_out_u64(o, "zone_lock_wait_ns", bulk_sum(m->s[BM_WAIT], runs));
	/* Where wall time went that CPU time does not show, per run: every sample kept. */
	bench_out_metric(o, "off_cpu_ms", "ms of the threads' wall time off their CPU, all threads",
	                 m->s[BM_OFF_CPU], runs);
	if (bulk_known(m->s[BM_RUNQ], runs))
		bench_out_metric(o, "runq_wait_ms",
		                 "ms the threads waited runnable while other tasks ran (schedstat)",
		                 m->s[BM_RUNQ], runs);
	bench_out_metric(o, "sleeps", "voluntary context switches, all threads", m->s[BM_SLEEPS],
	                 runs);
	bench_out_metric(o, "preemptions", "involuntary context switches, all threads",
	                 m->s[BM_PREEMPTED], runs);
	if (bulk_known(m->s[BM_STEAL], runs))
		bench_out_metric(o, "steal_ms", "ms of CPU time the hypervisor took, all CPUs",
		                 m->s[BM_STEAL], runs);
}

/* Per pair of runs, b's metric k over a's, times scale (1 / a's over b's when inverse). */
static void bulk_out_ratio(struct bench_out *o, const char *key, const char *unit,
                           const struct bulk_mode *a, const struct bulk_mode *b, unsigned k,
                           unsigned runs, double scale, bool inverse)
{
	double *ratio = calloc(runs, sizeof *ratio);
	if (!ratio)
		return;
	for (unsigned r = 0; r < runs; r++) {
		double x = inverse ? b->s[k][r] : a->s[k][r], y = inverse ? a->s[k][r] : b->s[k][r];
		ratio[r] = x > 0 ? scale * y / x : 0;
	}
	bench_out_metric(o, key, unit, ratio, runs);
	free(ratio);
}

static void bulk_print(const struct bench_opts *opt, const struct bulk_mode *m, unsigned nm,
                       unsigned runs, FILE *out)
{
	const struct bulk_mode *last = &m[nm - 1];
	uint64_t got = 0, round = 0;
	for (unsigned i = 0; i < last->nt; i++) {
		got += last->t[i].got;
		round += last->t[i].nr;
	}
	struct bench_out o;
	bench_out_begin(&o, out, opt->json, "alloc-free-bulk");
	char boot[1024];
	out_header(&o, opt, bulk_boot_line(opt, last->nt, boot, sizeof boot), runs);
	bench_out_str(&o, "api", opt->api_bulk ? "pa_alloc_pages_bulk" : "pa_alloc_pages");
	bench_out_u64(&o, "blocks", got);
	bench_out_u64(&o, "blocks_per_round", round);
	bench_out_u64(&o, "rounds", last->t[0].rounds);
	if (nm == 1)
		bulk_out_mode(&o, &m[0], runs);
	for (unsigned i = 0; nm == 2 && i < 2; i++) {
		bench_out_open(&o, m[i].name);
		bulk_out_mode(&o, &m[i], runs);
		bench_out_close(&o);
	}
	if (nm == 2 && opt->compare)
		bulk_out_ratio(&o, "free_on_off", "ns per free on / off, each pair of runs", &m[0],
		               &m[1], BM_FREE, runs, 1, false);
	if (nm == 2 && opt->scaling) {
		bulk_out_ratio(&o, "speedup",
		               "operations per second, N threads / 1, each pair of runs", &m[0],
		               &m[1], BM_OPS, runs, 1, false);
		/* As if each thread had its CPU to itself: N / CPU ns per operation. */
		bulk_out_ratio(&o, "cpu_speedup",
		               "operations per CPU-second times threads, N threads / 1, each pair "
		               "of runs",
		               &m[0], &m[1], BM_CPU, runs, (double)m[1].nt / m[0].nt, true);
	}
	bench_out_end(&o);
}

/* The ways runs are made (--compare: off, on; --scaling: 1 thread, N); how many. */
static unsigned bulk_modes(const struct bench_opts *opt, bool given, struct bulk_mode m[2])
{
	unsigned nt = opt_threads(opt);
	m[0] = (struct bulk_mode){ .name = "as booted", .nt = nt, .pcp = -1 };
	if (given || (!opt->compare && !opt->scaling))
		return 1;
	m[1] = m[0];
	if (opt->compare) {
		m[0].pcp = 0;
		m[1].pcp = 1;
		snprintf(m[0].name, sizeof m[0].name, "off");
		snprintf(m[1].name, sizeof m[1].name, "on");
	} else {
		m[0].nt = 1;
		m[1].nt = opt->threads ? nt : 2;
		snprintf(m[0].name, sizeof m[0].name, "threads_1");
		snprintf(m[1].name, sizeof m[1].name, "threads_%u", m[1].nt);
	}
	return 2;
}

static int bulk_alloc_modes(struct pa_pool *pool, const struct bench_opts *opt, struct bulk_mode *m,
                            unsigned nm, unsigned runs, bool keep)
{
	for (unsigned i = 0; i < nm; i++) {
		m[i].t = aligned_alloc(64, m[i].nt * sizeof *m[i].t);
		double *s = calloc(BM_NR * (size_t)runs, sizeof *s);
		if (!m[i].t || !s) {
			free(s);
			return -1;
		}
		for (unsigned k = 0; k < BM_NR; k++)
			m[i].s[k] = s + k * (size_t)runs;
		if (bulk_setup(pool, opt, m[i].t, m[i].nt, keep))
			return -1;
	}
	return 0;
}

static void bulk_free_modes(struct bulk_mode *m, unsigned nm)
{
	for (unsigned i = 0; i < nm; i++) {
		for (unsigned j = 0; m[i].t && j < m[i].nt; j++)
			free(m[i].t[j].blocks);
		free(m[i].t);
		free(m[i].s[0]);
	}
}

/*
 * Measured on a pool of its own: a warm-up run of each mode first (the
 * frame map and the block arrays are touched), then the modes alternate,
 * in turns a-b, b-a, so that a change of the machine's load falls on both.
 */
static int bulk_measure(struct pa_pool *pool, struct bulk_mode *m, unsigned nm, unsigned runs,
                        bool own)
{
	for (unsigned i = 0; own && i < nm; i++)
		if (bulk_run(pool, &m[i], -1, own))
			return -1;
	for (unsigned r = 0; r < runs; r++) {
		bench_progress_step(r, runs);
		for (unsigned k = 0; k < nm; k++)
			if (bulk_run(pool, &m[r % 2 ? nm - 1 - k : k], (int)r, own))
				return -1;
	}
	return 0;
}

int bench_alloc_free_bulk(const struct bench_opts *opt, struct pa_pool *given, FILE *out)
{
	struct pa_pool *pool = given;
	unsigned runs = opt_runs(opt, given);
	struct bulk_mode m[2] = { 0 };
	unsigned nm = bulk_modes(opt, given != NULL, m);
	/* Each thread poses as its own CPU, so that threads never share per-CPU lists. */
	if (!pool && bulk_boot(opt, m[nm - 1].nt, &pool))
		return 1;
	int ret = bench_check_order(pool, opt_order(opt)) ||
	          bulk_alloc_modes(pool, opt, m, nm, runs, given && opt->keep) ||
	          bulk_measure(pool, m, nm, runs, !given);
	if (!ret && !given)
		bulk_print(opt, m, nm, runs, out);
	bulk_free_modes(m, nm);
	if (!given)
		pa_shutdown(pool);
	return ret;
}
