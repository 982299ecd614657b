/* SPDX-License-Identifier: MIT */
/*
 * balloon: a guest-like churn with a free page reporting device, as a VM
 * with virtio-balloon's free page reporting runs. The guest grows its
 * working set to about 70 % of memory, shrinks it to about 10 %, and again,
 * for the run's length; the device (page_reporting=thread, the worker's
 * delay from the boot line) takes what is reported and, in a backed pool,
 * gives it back to the host with madvise(MADV_DONTNEED), as a hypervisor
 * discards reported pages. The same churn runs without a device, then with
 * one, --runs times on fresh pools: reported bytes, reports per second,
 * the time per allocation and per free (timed in batches of 32 calls), and
 * the resident memory at the end, each as the median, min and max.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define BALLOON_BOOT    "mem=1G backing=anon page_reporting_delay_ms=50"
#define BALLOON_SECONDS 2.0
#define BALLOON_RUNS    3 /* each way: median, min and max of each figure */
#define BALLOON_PHASE   8 /* grow/shrink cycles per run */
#define BALLOON_BATCH   32

struct balloon_dev {
	struct pa_pool *pool;
	uint64_t calls, frames;
};

static int balloon_report(void *arg, const struct pa_reported_range *r, unsigned nr)
{
	struct balloon_dev *d = arg;
	struct pa_config cfg;
	pa_get_config(d->pool, &cfg);
	for (unsigned i = 0; i < nr; i++) {
		void *addr = pa_page_address(d->pool, pa_pfn_to_page(d->pool, r[i].pfn));
		if (addr)
			madvise(addr, (size_t)cfg.page_size << r[i].order, MADV_DONTNEED);
		d->frames += 1ull << r[i].order;
	}
	d->calls++;
	return 0;
}

struct balloon_run {
	double seconds, alloc_ns, free_ns;
	uint64_t allocs, frees, reported_bytes, calls, rss;
};

/* A "VmRSS:   1234 kB" line of /proc/self/status, in bytes. */
static uint64_t rss_bytes(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	uint64_t v = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, "VmRSS:", 6) == 0)
			v = strtoull(line + 6, NULL, 10) * 1024;
	fclose(f);
	return v;
}

struct guest {
	struct pa_pool *pool;
	struct pa_page **page;
	unsigned *order;
	uint64_t nr, cap, held, rng, page_size;
	uint64_t alloc_ns, free_ns, allocs, frees;
};

/* Allocate a batch, writing the first byte of each page as a guest would. false when full. */
static bool guest_grow(struct guest *g)
{
	unsigned n = 0;
	uint64_t t0 = bench_now_ns();
	for (; n < BALLOON_BATCH && g->nr < g->cap; n++) {
		unsigned o = (unsigned)__builtin_ctzll(bench_rand(&g->rng) | (1ull << 9));
		struct pa_page *p = pa_alloc_pages(g->pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, o);
		if (!p)
			break;
		g->page[g->nr] = p;
		g->order[g->nr++] = o;
		g->held += 1ull << o;
	}
	g->alloc_ns += bench_now_ns() - t0;
	g->allocs += n;
	for (uint64_t i = g->nr - n; i < g->nr; i++) {
		char *a = pa_page_address(g->pool, g->page[i]);
		for (uint64_t k = 0; a && k < 1ull << g->order[i]; k++)
			a[k * g->page_size] = 1;
	}
	return n == BALLOON_BATCH;
}

/* Free a batch of random blocks. */
static void guest_shrink(struct guest *g)
{
	unsigned n = 0;
	uint64_t t0 = bench_now_ns();
	for (; n < BALLOON_BATCH && g->nr; n++) {
		uint64_t i = bench_rand(&g->rng) % g->nr;
		pa_free_pages(g->pool, g->page[i], g->order[i]);
		g->held -= 1ull << g->order[i];
		g->page[i] = g->page[--g->nr];
		g->order[i] = g->order[g->nr];
	}
	g->free_ns += bench_now_ns() - t0;
	g->frees += n;
}

static int balloon_once(const struct bench_opts *opt, bool report, struct balloon_run *out)
{
	struct pa_pool *pool;
	if (bench_boot(opt, BALLOON_BOOT, &pool))
		return -1;
	struct pa_config cfg;
	struct pa_usage u;
	pa_get_config(pool, &cfg);
	pa_get_usage(pool, &u);
	struct balloon_dev dev = { pool, 0, 0 };
	struct pa_page_reporting_ops ops = { balloon_report };
	struct guest g = { .pool = pool,
		           .rng = bench_seed_state(opt->seed_set ? opt->seed : 42, 0),
		           .page_size = cfg.page_size };
	g.cap = u.managed;
	g.page = malloc(g.cap * sizeof *g.page);
	g.order = malloc(g.cap * sizeof *g.order);
	int rc = g.page && g.order ? 0 : -1;
	if (!rc && report)
		rc = pa_page_reporting_register(pool, &ops, &dev);
	double seconds = opt->seconds > 0 ? opt->seconds : BALLOON_SECONDS;
	uint64_t t0 = bench_now_ns(), phase_ns = (uint64_t)(seconds * 1e9 / BALLOON_PHASE / 2);
	for (unsigned ph = 0; !rc && ph < 2 * BALLOON_PHASE; ph++) {
		bool grow = ph % 2 == 0;
		uint64_t end = t0 + (ph + 1) * phase_ns;
		while (bench_now_ns() < end) {
			if (grow && g.held * 10 < u.managed * 7)
				grow = guest_grow(&g) || g.held * 10 < u.managed * 7;
			else if (!grow && g.held * 10 > u.managed)
				guest_shrink(&g);
			else
				nanosleep(&(struct timespec){ 0, 1000000 },
				          NULL); /* the guest idles */
		}
	}
	out->seconds = (double)(bench_now_ns() - t0) / 1e9;
	if (report)
		pa_page_reporting_unregister(pool);
	out->rss = rss_bytes();
	while (g.nr)
		guest_shrink(&g);
	out->alloc_ns = g.allocs ? (double)g.alloc_ns / (double)g.allocs : 0;
	out->free_ns = g.frees ? (double)g.free_ns / (double)g.frees : 0;
	out->allocs = g.allocs;
	out->frees = g.frees;
	out->reported_bytes = dev.frames * cfg.page_size;
	out->calls = dev.calls;
	free(g.page);
	free(g.order);
	pa_shutdown(pool);
	return rc;
}

/* Each figure of a run, as samples for bench_out_metric: [figure][run]. */
enum {
	B_REPORTED_MIB,
	B_REPORTS_PER_S,
	B_ALLOC_OFF,
	B_ALLOC_ON,
	B_FREE_OFF,
	B_FREE_ON,
	B_ALLOCS_OFF,
	B_ALLOCS_ON,
	B_RSS_OFF,
	B_RSS_ON,
	B_NR
};

static void balloon_sample(double *v, unsigned runs, unsigned r, const struct balloon_run *off,
                           const struct balloon_run *on)
{
	double f[B_NR] = { (double)on->reported_bytes / 1048576.0,
		           (double)on->calls / on->seconds,
		           off->alloc_ns,
		           on->alloc_ns,
		           off->free_ns,
		           on->free_ns,
		           (double)off->allocs,
		           (double)on->allocs,
		           (double)off->rss / 1048576.0,
		           (double)on->rss / 1048576.0 };
	for (unsigned k = 0; k < B_NR; k++)
		v[k * runs + r] = f[k];
}

int bench_balloon(const struct bench_opts *opt, struct pa_pool *given, FILE *out)
{
	static const char *const key[B_NR][2] = {
		{ "reported_mib", "MiB reported per run, reporting on" },
		{ "reports_per_second", "device calls per second, reporting on" },
		{ "alloc_ns_reporting_off", "ns per allocation, reporting off" },
		{ "alloc_ns_reporting_on", "ns per allocation, reporting on" },
		{ "free_ns_reporting_off", "ns per free, reporting off" },
		{ "free_ns_reporting_on", "ns per free, reporting on" },
		{ "allocs_off", "allocations per run, reporting off" },
		{ "allocs_on", "allocations per run, reporting on" },
		{ "rss_mib_at_end_off", "resident MiB at the end, reporting off" },
		{ "rss_mib_at_end_on", "resident MiB at the end, reporting on" },
	};
	if (given) {
		fprintf(stderr, "pagealloc: the balloon workload boots pools of its own\n");
		return 1;
	}
	unsigned runs = opt->runs ? opt->runs : BALLOON_RUNS;
	double *v = calloc((size_t)B_NR * runs, sizeof *v);
	struct balloon_run off, on = { 0 };
	for (unsigned r = 0; v && r < runs; r++) {
		bench_progress_step(r, runs);
		if (balloon_once(opt, false, &off) || balloon_once(opt, true, &on)) {
			free(v);
			return 1;
		}
		balloon_sample(v, runs, r, &off, &on);
	}
	if (!v)
		return 1;
	struct bench_out o;
	bench_out_begin(&o, out, opt->json, "balloon");
	bench_out_str(&o, "boot", bench_boot_line(opt, BALLOON_BOOT));
	bench_out_u64(&o, "runs", runs);
	bench_out_f64(&o, "seconds", on.seconds);
	for (unsigned k = 0; k < B_NR; k++)
		bench_out_metric(&o, key[k][0], key[k][1], v + (size_t)k * runs, runs);
	bench_out_end(&o);
	free(v);
	return 0;
}
