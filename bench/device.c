/* SPDX-License-Identifier: MIT */
/*
 * device: what a device or VRAM memory manager asks of the allocator, in
 * three parts, each --runs times on fresh pools (median, min and max):
 *
 * (a) churn: tens of thousands of 4-8 KiB buffers allocated in jobs of 32;
 *     half the jobs freed, their buffers alternately cleared and dirty (the
 *     pattern that keeps gpu_buddy's two trees from merging); then the
 *     largest contiguous allocation that still succeeds, against the
 *     largest run of free frames and the free memory there is.
 * (b) gpu_buddy_fragmentation_performance's scenario: all memory as 8 KiB
 *     blocks at 64 KiB alignment, a quarter pattern freed cleared and the
 *     rest dirty, then every 64 KiB block taken (ms, and how many succeed);
 *     then the reverse-order free of the same pattern, all cleared (ms).
 * (c) a 2 MiB PA_GFP_ZERO allocation in a backed pool that has been in use
 *     (every frame written and freed dirty once), the buffer written and
 *     freed dirty, with 2 ms of idle time between: ns per allocation and
 *     bytes zeroed at allocation and by the scrubber, scrubber off and on.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEVICE_RUNS   3
#define CHURN_BOOT    "mem=256M zones=flat min_free_kbytes=0 kcompactd=manual"
#define FRAG_BOOT     "mem=1G zones=flat min_free_kbytes=0 kcompactd=manual"
#define ZERO_BOOT     "mem=256M zones=flat min_free_kbytes=0 kcompactd=manual backing=anon"
#define CHURN_JOB     32
#define ZERO_ALLOCS   200
#define ZERO_IDLE_NS  2000000L
#define SCRUB_TICK_MS 1

static int dev_alloc(struct pa_pool *pool, struct pa_block_list *l, uint64_t nr, unsigned min,
                     unsigned align, unsigned flags)
{
	struct pa_device_request r = { .nr_frames = nr,
		                       .min_order = min,
		                       .align_order = align,
		                       .gfp = PA_GFP_MOVABLE | PA_GFP_NOWARN,
		                       .flags = flags };
	return pa_device_alloc(pool, &r, l);
}

static uint64_t vm(struct pa_pool *pool, const char *name)
{
	uint64_t v = 0;
	pa_vmstat_read(pool, name, &v);
	return v;
}

/* A list of one block, for freeing blocks one by one. */
static void free_one(struct pa_pool *pool, struct pa_block b, unsigned flags)
{
	struct pa_block_list one = { &b, 1, 1 };
	pa_device_free(pool, &one, flags);
}

static int cmp_pfn(const void *a, const void *b)
{
	pa_pfn_t x = ((const struct pa_block *)a)->pfn, y = ((const struct pa_block *)b)->pfn;
	return x < y ? -1 : x > y;
}

/* The longest run of frames no block of the list covers, in a pool of n frames. */
static uint64_t largest_gap(struct pa_block *b, uint32_t nr, uint64_t n)
{
	qsort(b, nr, sizeof *b, cmp_pfn);
	uint64_t best = 0, at = 0;
	for (uint32_t i = 0; i < nr; i++) {
		if (b[i].pfn - at > best)
			best = b[i].pfn - at;
		at = b[i].pfn + (1ull << b[i].order);
	}
	return n - at > best ? n - at : best;
}

/* The largest contiguous request that succeeds (binary search, each success freed again). */
static uint64_t largest_contig(struct pa_pool *pool, uint64_t hi)
{
	struct pa_block store[128];
	uint64_t lo = 0;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo + 1) / 2;
		struct pa_block_list l = { store, 0, 128 };
		if (dev_alloc(pool, &l, mid, 0, 0, PA_DEVICE_CONTIGUOUS) == 0) {
			pa_device_free(pool, &l, 0);
			lo = mid;
		} else {
			hi = mid - 1;
		}
	}
	return lo;
}

struct churn_run {
	double buffers, free_frames, gap, contig, cleared;
};

static int churn_once(const struct bench_opts *opt, uint64_t seed, struct churn_run *r)
{
	struct pa_pool *pool;
	if (bench_boot(opt, CHURN_BOOT, &pool))
		return 1;
	struct pa_config cfg;
	pa_get_config(pool, &cfg);
	uint64_t cap = cfg.total_pages, rng = bench_seed_state(seed, 1);
	struct pa_block *held = malloc(cap * sizeof *held);
	struct pa_block_list l = { held, 0, (uint32_t)cap };
	/* fill to 90%: jobs of 32 buffers of 1 or 2 frames */
	uint64_t used = 0;
	while (used < cap * 9 / 10 && l.nr + 2 < l.cap) {
		uint64_t n = 1 + (bench_rand(&rng) & 1);
		if (dev_alloc(pool, &l, n, 0, 0, 0))
			break;
		used += n;
	}
	r->buffers = l.nr;
	/* free half the jobs, their buffers alternately cleared and dirty */
	uint32_t kept = 0;
	for (uint32_t i = 0; i < l.nr; i++) {
		uint64_t job = i / CHURN_JOB;
		if ((bench_rand(&(uint64_t){ bench_seed_state(seed, job + 2) }) & 1) == 0)
			free_one(pool, held[i], i % 2 ? PA_DEVICE_FREE_CLEARED : 0);
		else
			held[kept++] = held[i];
	}
	l.nr = kept;
	struct pa_usage u;
	pa_get_usage(pool, &u);
	r->free_frames = (double)u.free;
	r->cleared = (double)vm(pool, "nr_free_cleared");
	r->contig = (double)largest_contig(pool, u.free);
	r->gap = (double)largest_gap(held, kept, cfg.total_pages);
	pa_device_free(pool, &l, 0);
	free(held);
	pa_shutdown(pool);
	return 0;
}

struct frag_run {
	double alloc_ms, reverse_ms, ok;
};

static bool quarter_clear(uint32_t i)
{
	return i % 4 == 0 || i % 4 == 3;
}

static int frag_once(const struct bench_opts *opt, struct frag_run *r)
{
	struct pa_pool *pool;
	if (bench_boot(opt, FRAG_BOOT, &pool))
		return 1;
	struct pa_config cfg;
	pa_get_config(pool, &cfg);
	uint32_t n = (uint32_t)(cfg.total_pages / 16);
	struct pa_block *b = malloc((size_t)n * 2 * sizeof *b);
	struct pa_block_list l = { b, 0, n }, t = { b + n, 0, n };
	uint64_t t0 = bench_now_ns();
	for (uint32_t i = 0; i < n; i++)
		dev_alloc(pool, &l, 2, 0, 4, 0);
	for (uint32_t i = 0; i < l.nr; i++)
		free_one(pool, b[i], quarter_clear(i) ? PA_DEVICE_FREE_CLEARED : 0);
	l.nr = 0;
	uint32_t ok = 0;
	for (uint32_t i = 0; i < n; i++)
		ok += dev_alloc(pool, &t, 16, 4, 4, 0) == 0;
	pa_device_free(pool, &t, 0);
	r->alloc_ms = (double)(bench_now_ns() - t0) / 1e6;
	r->ok = ok;
	t0 = bench_now_ns();
	for (uint32_t i = 0; i < n; i++)
		dev_alloc(pool, &l, 2, 0, 4, 0);
	for (uint32_t i = 0; i < l.nr; i += 2)
		free_one(pool, b[i], PA_DEVICE_FREE_CLEARED);
	for (uint32_t i = l.nr; i-- > 0;)
		if (i % 2)
			free_one(pool, b[i], PA_DEVICE_FREE_CLEARED);
	r->reverse_ms = (double)(bench_now_ns() - t0) / 1e6;
	free(b);
	pa_shutdown(pool);
	return 0;
}

struct zero_run {
	double ns, zeroed_alloc, zeroed_bg;
};

/* A pool in use for a while: every frame handed out, written and freed dirty once. */
static void zero_warm(struct pa_pool *pool, size_t bytes)
{
	struct pa_config cfg;
	pa_get_config(pool, &cfg);
	uint64_t n = cfg.total_pages >> 9, got = 0;
	struct pa_page **p = calloc(n, sizeof *p);
	if (!p)
		return;
	while (got < n && (p[got] = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 9)))
		memset(pa_page_address(pool, p[got++]), 0x5a, bytes);
	while (got)
		pa_free_pages(pool, p[--got], 9);
	free(p);
	pa_drain_all(pool);
}

static int zero_once(const struct bench_opts *opt, bool scrub, struct zero_run *r)
{
	struct pa_pool *pool;
	if (bench_boot(opt, ZERO_BOOT, &pool))
		return 1;
	struct pa_config cfg;
	pa_get_config(pool, &cfg);
	size_t bytes = (size_t)cfg.page_size << 9;
	zero_warm(pool, bytes);
	if (scrub && pa_scrubber_start(pool, SCRUB_TICK_MS)) {
		fprintf(stderr, "bench device: cannot start the scrubber\n");
		pa_shutdown(pool);
		return 1;
	}
	uint64_t ns = 0, z0 = vm(pool, "pgzero_alloc"), s0 = vm(pool, "pgscrub");
	for (unsigned i = 0; i < ZERO_ALLOCS; i++) {
		struct timespec idle = { 0, ZERO_IDLE_NS };
		nanosleep(&idle, NULL); /* the device busy elsewhere: the pool idle */
		uint64_t t0 = bench_now_ns();
		struct pa_page *p = pa_alloc_pages(pool, PA_GFP_ZERO | PA_GFP_MOVABLE, 9);
		ns += bench_now_ns() - t0;
		if (!p)
			break;
		memset(pa_page_address(pool, p), 0x5a, bytes); /* used: dirty when freed */
		pa_free_pages(pool, p, 9);
	}
	pa_scrubber_stop(pool);
	r->ns = (double)ns / ZERO_ALLOCS;
	r->zeroed_alloc = (double)((vm(pool, "pgzero_alloc") - z0) * cfg.page_size);
	r->zeroed_bg = (double)((vm(pool, "pgscrub") - s0) * cfg.page_size);
	pa_shutdown(pool);
	return 0;
}

static void churn_out(struct bench_out *o, const struct churn_run *c, unsigned runs)
{
	double s[5][16];
	for (unsigned i = 0; i < runs; i++) {
		s[0][i] = c[i].buffers;
		s[1][i] = c[i].free_frames;
		s[2][i] = c[i].gap;
		s[3][i] = c[i].contig;
		s[4][i] = c[i].cleared;
	}
	bench_out_open(o, "churn");
	bench_out_metric(o, "buffers", "4-8 KiB buffers allocated", s[0], runs);
	bench_out_metric(o, "free_frames", "free frames after half the jobs freed", s[1], runs);
	bench_out_metric(o, "cleared_frames", "of them known zero", s[4], runs);
	bench_out_metric(o, "largest_free_run", "largest run of free frames", s[2], runs);
	bench_out_metric(o, "largest_contiguous", "largest contiguous allocation that succeeds",
	                 s[3], runs);
	bench_out_close(o);
}

static void frag_out(struct bench_out *o, const struct frag_run *f, unsigned runs)
{
	double s[3][16];
	for (unsigned i = 0; i < runs; i++) {
		s[0][i] = f[i].alloc_ms;
		s[1][i] = f[i].ok;
		s[2][i] = f[i].reverse_ms;
	}
	bench_out_open(o, "fragmentation");
	bench_out_metric(o, "fragmented_ms", "8 KiB at 64 KiB, freed mixed, all 64 KiB again", s[0],
	                 runs);
	bench_out_metric(o, "blocks_64k", "64 KiB allocations that succeeded", s[1], runs);
	bench_out_metric(o, "reverse_free_ms", "the reverse-order free, all cleared", s[2], runs);
	bench_out_close(o);
}

static void zero_out(struct bench_out *o, const char *key, const struct zero_run *z, unsigned runs)
{
	double s[3][16];
	for (unsigned i = 0; i < runs; i++) {
		s[0][i] = z[i].ns;
		s[1][i] = z[i].zeroed_alloc;
		s[2][i] = z[i].zeroed_bg;
	}
	bench_out_open(o, key);
	bench_out_metric(o, "ns_per_alloc", "ns per 2 MiB PA_GFP_ZERO allocation", s[0], runs);
	bench_out_metric(o, "bytes_zeroed_at_alloc", "bytes zeroed by the allocations", s[1], runs);
	bench_out_metric(o, "bytes_scrubbed", "bytes zeroed by the scrubber", s[2], runs);
	bench_out_close(o);
}

int bench_device(const struct bench_opts *opt, struct pa_pool *given, FILE *out)
{
	if (given) {
		fprintf(stderr, "bench device: boots pools of its own (no --run)\n");
		return 1;
	}
	unsigned runs = opt->runs ? opt->runs : DEVICE_RUNS;
	runs = runs > 16 ? 16 : runs;
	uint64_t seed = opt->seed_set ? opt->seed : 42;
	struct churn_run c[16];
	struct frag_run f[16];
	struct zero_run zoff[16], zon[16];
	for (unsigned i = 0; i < runs; i++) {
		bench_progress_step(i, runs);
		if (churn_once(opt, seed + i, &c[i]) || frag_once(opt, &f[i]) ||
		    zero_once(opt, false, &zoff[i]) || zero_once(opt, true, &zon[i]))
			return 1;
	}
	struct bench_out o;
	bench_out_begin(&o, out, opt->json, "device");
	bench_out_u64(&o, "runs", runs);
	churn_out(&o, c, runs);
	frag_out(&o, f, runs);
	zero_out(&o, "zero_scrubber_off", zoff, runs);
	zero_out(&o, "zero_scrubber_on", zon, runs);
	bench_out_end(&o);
	return 0;
}
