/* SPDX-License-Identifier: MIT */
/*
 * Workloads and the benchmark runner of the `pagealloc` program.
 *
 * A workload drives a pool through the public API only. Workloads are
 * listed in one table (name, help, options, run function); the runner
 * parses the options every workload shares, repeats a measurement --runs
 * times and prints median, min, max and stddev as text or JSON.
 *
 * A workload runs in one of two ways:
 *  - measured (`pagealloc bench NAME`): it boots its own pool from --boot
 *    (or its default boot line) and prints its figures;
 *  - on a given pool (`pagealloc buddyinfo --run NAME`): once, quietly, so
 *    that the caller can print a report of the state it leaves.
 */
#ifndef PA_BENCH_H
#define PA_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pagealloc.h"

/* Most --ctl PATH=VALUE settings a command takes. */
#define BENCH_MAX_CTLS 32

/* Options; a zero value (or NULL) means the workload's default. */
struct bench_opts {
	const char *boot;                 /* boot command line */
	const char *ctls[BENCH_MAX_CTLS]; /* --ctl PATH=VALUE, applied after each boot */
	unsigned nr_ctls;
	unsigned runs;    /* repetitions of the measurement */
	uint64_t ops;     /* operations per run (per thread where threads share the work) */
	double seconds;   /* length of a timed run */
	unsigned threads; /* threads sharing the pool */
	int order;        /* block order; -1: default */
	uint64_t seed;    /* random seed */
	bool seed_set;
	bool json;           /* machine-readable output */
	uint64_t nr;         /* alloc-free-bulk: blocks held at once */
	unsigned batch;      /* alloc-free-bulk --api bulk: blocks per call */
	bool api_bulk;       /* alloc-free-bulk: pa_alloc_pages_bulk instead of a loop */
	pa_gfp_t gfp;        /* allocation flags (--gfp) */
	bool keep;           /* on a given pool: leave the blocks allocated at the end */
	uint64_t iterations; /* page-fault1: map/unmap cycles per thread and run */
	bool compare; /* page-fault1, alloc-free-bulk: the order off and on the per-CPU lists */
	bool scaling; /* alloc-free-bulk: runs of one thread and of --threads alternate */
	/* gigantic, dmaheap, cma-alloc; a negative percentage means the default. */
	uint64_t count;       /* dmaheap: buffers of each size per run */
	bool cma;             /* dmaheap: allocate from a CMA area under movable load */
	double fill_pct;      /* gigantic: share of memory left in movable folios */
	double unmovable_pct; /* gigantic: share of memory in scattered unmovable pages */
	double pinned_pct;    /* gigantic: share of the movable folios pinned */
	double transient_pct; /* gigantic: share of memory in unmovable pages freed again */
	/* thpcompact, highalloc-frag, compact-copy. */
	int folio_order; /* order of the movable folios; -1: the default (0) */
	/* fragbench. */
	unsigned turnover;  /* memory turned over this many times; 0: the default */
	const char *policy; /* "linux" or "superblock"; NULL: the default */
	const char *mem;    /* pool size for the default boot line ("4G"); NULL: the default */
};

struct bench_workload {
	const char *name;
	const char *help;  /* one line, for the list */
	const char *usage; /* its options and defaults, for `bench NAME --help` */
	bool own_pool;     /* needs pools of its own: cannot --run on a given one */
	/*
	 * Run the workload. pool NULL: boot, measure, print to out. pool set:
	 * run once on it, print nothing. 0, or non-zero after printing why to stderr.
	 */
	int (*run)(const struct bench_opts *opt, struct pa_pool *pool, FILE *out);
};

/* --- The table (bench.c) ------------------------------------------------ */

const struct bench_workload *bench_find(const char *name);
void bench_list(FILE *f);
void bench_usage(const struct bench_workload *w, FILE *f);
void bench_common_usage(FILE *f);
void bench_opts_init(struct bench_opts *opt);

/*
 * Parse the option at argv[*i] (with its value, as "--opt V" or "--opt=V").
 * 1: taken (and *i moved past a separate value); 0: not a bench option;
 * -1: a bad value (the message is on stderr).
 */
int bench_parse_opt(struct bench_opts *opt, int argc, char **argv, int *i);

/* --- Helpers the workloads share (bench.c) ------------------------------ */

uint64_t bench_now_ns(void);

/* Boot from opt->boot, or def when it is not given; the error is printed. */
int bench_boot(const struct bench_opts *opt, const char *def, struct pa_pool **pool);

/*
 * Boot from line with platform (may be NULL), then apply opt's --ctl
 * settings. Every workload boots through this (or bench_boot*), so that
 * --ctl reaches every pool. 0, or non-zero with the error printed and
 * nothing left booted.
 */
int bench_boot_with(const struct bench_opts *opt, const char *line,
                    const struct pa_platform *platform, struct pa_pool **pool);

/* What a pa_ctl_write()/pa_ctl_read() error means, in words. */
const char *bench_ctl_error(int err);

/* Apply opt's --ctl PATH=VALUE settings in order; 0, or -1 with the refused one printed. */
int bench_apply_ctls(const struct bench_opts *opt, struct pa_pool *pool);

/*
 * Progress on stderr, only when stderr is a terminal and the command has run
 * for more than 2 s: "WHAT  PCT%  ELAPSEDs", redrawn in place by a ticker
 * thread twice a second and erased at the end. Workloads say what they do
 * and how far they are with bench_progress(); the program brackets each
 * command with bench_progress_start() and bench_progress_stop().
 */
void bench_progress_start(const char *what);
void bench_progress(const char *what, double fraction); /* what may be NULL: unchanged */
void bench_progress_stop(void);
/* Step done of total (0-based) is starting. */
void bench_progress_step(unsigned done, unsigned total);
const char *bench_boot_line(const struct bench_opts *opt, const char *def);

/*
 * Threads that pose as CPUs: a pool booted by bench_boot_posing() asks its
 * cpu_id hook, which answers what the calling thread last passed to
 * bench_pose_as_cpu() (0 until then). So N worker threads use the per-CPU
 * lists of CPUs 0..N-1, one each, as a kernel's tasks pinned to N CPUs
 * would, whatever CPU the scheduler runs them on. The boot line gets
 * nr_cpus=cpus unless it names nr_cpus itself.
 */
void bench_pose_as_cpu(unsigned cpu);
const char *bench_posing_line(const struct bench_opts *opt, const char *def, unsigned cpus,
                              char *buf, size_t len);
int bench_boot_posing(const struct bench_opts *opt, const char *def, unsigned cpus,
                      struct pa_pool **pool);

/* The names of gfp flags, comma-separated, as --gfp takes them ("kernel" for none). */
const char *bench_gfp_name(pa_gfp_t gfp, char *buf, size_t len);

/* 0 if order is at most the pool's max_order; else -1, with a message on how to boot. */
int bench_check_order(struct pa_pool *pool, unsigned order);

/* Frames on every CPU's per-CPU lists, all nodes and zones. */
uint64_t bench_pcp_frames(struct pa_pool *pool);

/* A report of the pool in a malloc'd string (free it), or NULL. */
char *bench_report_text(struct pa_pool *pool, enum pa_report_kind kind, unsigned flags);
/* The zone locks' contended acquisitions and wait so far, summed over the zones. */
void bench_zone_lock_totals(struct pa_pool *pool, uint64_t *contended, uint64_t *wait_ns);

/*
 * Run fn on n threads at once (released together by a barrier), each given
 * its own element of args (n elements of size bytes); waits for all. One
 * thread runs inline. 0 or -ENOMEM.
 */
int bench_parallel(unsigned n, void *(*fn)(void *), void *args, size_t size);

/* A small fast seeded generator (xorshift64*). */
static inline uint64_t bench_rand(uint64_t *state)
{
	uint64_t x = *state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* A nonzero generator state from a seed and a stream number (splitmix64). */
uint64_t bench_seed_state(uint64_t seed, uint64_t stream);

/* Median, min, max, mean and sample standard deviation of n samples. */
struct bench_summary {
	double median, min, max, mean, stddev;
};
void bench_summarize(const double *samples, unsigned n, struct bench_summary *s);

/*
 * The figures of one workload, as "key: value" text or one JSON object.
 * A metric is a list of samples, one per run, printed summarized.
 */
struct bench_out {
	FILE *f;
	bool json;
	bool comma;
};
void bench_out_begin(struct bench_out *o, FILE *f, bool json, const char *workload);
void bench_out_str(struct bench_out *o, const char *key, const char *value);
void bench_out_u64(struct bench_out *o, const char *key, uint64_t value);
void bench_out_f64(struct bench_out *o, const char *key, double value);
void bench_out_metric(struct bench_out *o, const char *key, const char *unit, const double *samples,
                      unsigned n);
/* A report of the pool: its JSON under key, or its /proc text under a heading. */
void bench_out_report(struct bench_out *o, const char *key, struct pa_pool *pool,
                      enum pa_report_kind kind);
/* The same, with a one-line explanation after the heading (text only). */
void bench_out_report_note(struct bench_out *o, const char *key, const char *note,
                           struct pa_pool *pool, enum pa_report_kind kind);
/* A one-line explanation of the figure just printed (text only). */
void bench_out_note(struct bench_out *o, const char *note);
/* Per-order figures: JSON arrays or one text table row per name. */
void bench_out_orders(struct bench_out *o, const char *key, const char *const *names,
                      const uint64_t *const *rows, unsigned nr_rows, unsigned orders);
/* s as a JSON string, quoted and escaped. */
void bench_json_string(FILE *f, const char *s);
/* A nested object under key (JSON), or a heading (text); closed by bench_out_close. */
void bench_out_open(struct bench_out *o, const char *key);
void bench_out_close(struct bench_out *o);
/* A JSON value written as is (JSON only; text prints nothing). */
void bench_out_json(struct bench_out *o, const char *key, const char *json);
void bench_out_end(struct bench_out *o);

/* --- The workloads ------------------------------------------------------ */

int bench_alloc_free_hot(const struct bench_opts *opt, struct pa_pool *pool, FILE *out);
int bench_alloc_free_bulk(const struct bench_opts *opt, struct pa_pool *pool, FILE *out);
int bench_boot_time(const struct bench_opts *opt, struct pa_pool *pool, FILE *out);
int bench_balloon(const struct bench_opts *opt, struct pa_pool *pool, FILE *out);
int bench_device(const struct bench_opts *opt, struct pa_pool *pool, FILE *out);
int bench_churn(const struct bench_opts *opt, struct pa_pool *pool, FILE *out);
int bench_page_fault1(const struct bench_opts *opt, struct pa_pool *pool, FILE *out);
int bench_gigantic(const struct bench_opts *opt, struct pa_pool *pool, FILE *out);
int bench_dmaheap(const struct bench_opts *opt, struct pa_pool *pool, FILE *out);
int bench_cma_alloc(const struct bench_opts *opt, struct pa_pool *pool, FILE *out);
int bench_hotplug(const struct bench_opts *opt, struct pa_pool *pool, FILE *out);
int bench_thpcompact(const struct bench_opts *opt, struct pa_pool *pool, FILE *out);
int bench_highalloc_frag(const struct bench_opts *opt, struct pa_pool *pool, FILE *out);
int bench_compact_copy(const struct bench_opts *opt, struct pa_pool *pool, FILE *out);
int bench_soak(const struct bench_opts *opt, struct pa_pool *pool, FILE *out);
int bench_fragbench(const struct bench_opts *opt, struct pa_pool *pool, FILE *out);

#endif /* PA_BENCH_H */
