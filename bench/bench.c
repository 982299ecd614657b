/* SPDX-License-Identifier: MIT */
/*
 * The benchmark runner: the table of workloads, the options they share,
 * timing, summaries (median, min, max, stddev) and the text/JSON writer.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------------- */
/* The workloads, as data                                                  */
/* ---------------------------------------------------------------------- */

static const struct bench_workload workloads[] = {
	{ "churn", "random allocations and frees of orders 0..10 on a 1 GiB pool (the default)",
	  "  --seconds S    how long to churn (default 2), or --ops N in all\n"
	  "  --threads N    threads sharing the pool, each with its own blocks (default 1)\n"
	  "  --order N      largest order of the mix (default 10, at most max_order)\n"
	  "  --seed N       random seed (default 42; printed)\n"
	  "  --runs N       repetitions (default 1)\n"
	  "  --keep         with --run: leave the blocks allocated\n"
	  "  default boot:  mem=1G\n",
	  false, bench_churn },
	{ "alloc-free-hot", "allocate one block and free it at once, --ops times",
	  "  --order N      block order (default 0)\n"
	  "  --ops N        pairs per run and thread (default 10M up to order 3, 1M up to\n"
	  "                 order 12, 100K above)\n"
	  "  --threads N    threads doing the same (default 1)\n"
	  "  --gfp FLAGS    e.g. kernel, movable, reclaimable,high (default kernel)\n"
	  "  --runs N       repetitions (default 5)\n"
	  "  default boot:  mem=1G min_free_kbytes=0 (orders above 10: pass --boot\n"
	  "                 \"mem=4G max_order=18 min_free_kbytes=0\")\n",
	  false, bench_alloc_free_hot },
	{ "alloc-free-bulk", "allocate N blocks, then free all N",
	  "  --order N      block order (default 0)\n"
	  "  --nr N         blocks per run (default 1Mi), in rounds: a round allocates\n"
	  "                 as many as the free memory holds (at most N) and then\n"
	  "                 frees them all (a round cut short by a failed allocation\n"
	  "                 sets the size of the next); a run makes as many rounds as N\n"
	  "                 holds, at least one (order 0 on 4 GiB: one round of\n"
	  "                 what fits; order 9: 512 rounds of the pool's 2,048)\n"
	  "  --api A        loop (pa_alloc_pages, default) or bulk (pa_alloc_pages_bulk)\n"
	  "  --batch N      blocks per pa_alloc_pages_bulk call (default 128)\n"
	  "  --threads N    threads, each with nr/threads blocks and posing as its own\n"
	  "                 CPU (default 1); ops_per_sec is their aggregate throughput\n"
	  "  --gfp FLAGS    as alloc-free-hot (default kernel)\n"
	  "  --runs N       repetitions (default 5), after one warm-up run not counted\n"
	  "  --compare      runs alternate with the order off and on the per-CPU lists\n"
	  "                 in one pool; both, and on/off of each pair of runs\n"
	  "  --scaling      runs alternate one thread and --threads (default 2) in one\n"
	  "                 pool; both, and the throughput of each pair of runs, N/1,\n"
	  "                 in wall time and in CPU time (threads / CPU ns per op)\n"
	  "  each run also reports what kept the threads off their CPUs: wall minus\n"
	  "  CPU time, run-queue wait (schedstat), preemptions and sleeps; one thread\n"
	  "  runs on the machine's CPU ids, with no posing hook\n"
	  "  --keep         with --run: leave the blocks allocated\n"
	  "  default boot:  mem=4G min_free_kbytes=0 (nr_cpus=threads)\n",
	  false, bench_alloc_free_bulk },
	{ "page-fault1",
	  "will-it-scale page_fault1: threads map and unmap 128 MiB; ops/s and lock contention",
	  "  --threads N    threads, each posing as its own CPU (default 4)\n"
	  "  --order N      folio order of the mapping: 0, 4 (64 KiB mTHP), 9 (default 0)\n"
	  "  --iterations N map/unmap cycles per thread and run (default: about 4M\n"
	  "                 operations per thread and run: 60 cycles at order 0, 946 at 4)\n"
	  "  --runs N       repetitions, each on a fresh pool (default 5)\n"
	  "  --compare      run twice: the order off the per-CPU lists, then on; print both\n"
	  "                 lock tables and the zone lock's contended counts with their ratio\n"
	  "  default boot:  mem=4G+threads*2G nr_cpus=threads: the per-CPU lists' high_max\n"
	  "                 (managed/8/CPUs) is then 256 MiB, twice what a thread maps\n",
	  true, bench_page_fault1 },
	{ "gigantic", "1 GiB blocks in a fragmented movable pool: buddy order 18 vs contig pages",
	  "  --order N          block order (default 18: 1 GiB at 4 KiB pages); the buddy\n"
	  "                     way boots max_order=N, the contig way max_order=10\n"
	  "  --fill-pct P       memory left in movable folios after fragmenting (default 15)\n"
	  "  --unmovable-pct P  memory in unmovable order-0 pages, allocated while\n"
	  "                     fragmenting and placed by the allocator (default 0.02)\n"
	  "  --transient-pct P  memory in unmovable pages allocated like those and freed\n"
	  "                     again: their pageblocks stay typed unmovable (default 0)\n"
	  "  --pinned-pct P     share of the movable folios pinned (default 0)\n"
	  "  --seed N           random seed (default 42)\n"
	  "  --runs N           runs per way, each on a fresh pool (default 3)\n"
	  "  default boot:      mem=8G; each way appends max_order=N and kcompactd=manual\n"
	  "                     (--boot \"mem=64G\" for a larger pool)\n",
	  true, bench_gigantic },
	{ "dmaheap", "dma-buf system heap: greedy orders {8,4,0}, pageblock order 10 vs 7",
	  "  --count N      buffers of each size (8M 4M 2M 1M 64 8 4 bytes) per run\n"
	  "                 (default 200; the seed ran 100000)\n"
	  "  --runs N       runs per configuration, each on a fresh pool (default 3)\n"
	  "  --cma          each buffer from a CMA area (pa_cma_alloc, the CMA heap) while\n"
	  "                 --threads threads keep movable folios borrowing the area\n"
	  "  --threads N    --cma: load threads (default 1)\n"
	  "  default boot:  \"mem=4G page_shift=14 pageblock_order_ceil=10\", then =7\n"
	  "                 (--cma: mem=512M and cma=16M); --boot runs that line only\n",
	  true, bench_dmaheap },
	{ "cma-alloc", "pa_cma_alloc of 64 MiB from a CMA area half full of movable folios",
	  "  --nr N         frames per pa_cma_alloc (default: 64 MiB of them)\n"
	  "  --order N      alignment order of the allocation (default 8, Linux's\n"
	  "                 CONFIG_CMA_ALIGNMENT)\n"
	  "  --runs N       runs, each on a fresh pool (default 9)\n"
	  "  default boot:  mem=2G cma=128M kcompactd=manual\n",
	  true, bench_cma_alloc },
	{ "hotplug", "pa_memory_offline of a memory block full of movable folios",
	  "  --folio-order K    order of the folios that fill memory (default 2)\n"
	  "  --runs N           runs, each on a fresh pool (default 5)\n"
	  "  default boot:      mem=1G backing=anon kcompactd=manual; the block in the\n"
	  "                     middle of the pool goes offline, every folio moving out\n",
	  true, bench_hotplug },
	{ "thpcompact", "fault, punch half of every 2 MiB, refill with page cache, then THPs",
	  "  --threads N        threads, each faulting its share of memory (default 1)\n"
	  "  --order N          the huge order (default the pool's: 9 at 4 KiB pages)\n"
	  "  --folio-order K    order of the faulted folios (default 0; 4 for 64 KiB mTHP)\n"
	  "  --compare          also with compaction_split_folios=1: both side by side\n"
	  "  --runs N           runs per mode, each on a fresh pool (default 5)\n"
	  "  default boot:      mem=1G; kcompactd=manual is appended (backing=anon also\n"
	  "                     checks every folio's bytes at the end)\n",
	  true, bench_thpcompact },
	{ "highalloc-frag", "7/32 of memory free, scattered; huge blocks until failure",
	  "  --order N          block order: 9 (default) or 18 (1 GiB; boots mem=16G\n"
	  "                     max_order=18 unless --boot says otherwise)\n"
	  "  --folio-order K    order of the movable folios (default 0; 4, or 9 with\n"
	  "                     --order 18, to see folios moved whole)\n"
	  "  --unmovable-pct P  that share of the remainder as unmovable order-0 pages,\n"
	  "                     spread evenly over the pool (default 0)\n"
	  "  --compare          also with compaction_split_folios=1: both side by side\n"
	  "  --runs N           runs per mode, each on a fresh pool (default 5)\n"
	  "  default boot:      mem=1G; kcompactd=manual is appended (backing=anon also\n"
	  "                     checks every folio's bytes at the end)\n",
	  true, bench_highalloc_frag },
	{ "compact-copy", "compaction's data-move bandwidth against memcpy's, in one run",
	  "  --folio-order K    order of the movable folios (default 0)\n"
	  "  --runs N           runs, each on a fresh pool (default 5)\n"
	  "  default boot:      mem=1G backing=anon; kcompactd=manual is appended\n",
	  true, bench_compact_copy },
	{ "soak",
	  "threads, compaction, drains, contiguous ranges and CMA at once; every byte checked",
	  "  --seconds S    how long to run (default 10); checkpoints every 0.5 s\n"
	  "  --threads N    allocating threads, each posing as its own CPU (default 2);\n"
	  "                 one more runs compaction (with compaction/fail_pct), drains,\n"
	  "                 per-CPU order switches, contiguous ranges and CMA\n"
	  "  --seed N       random seed (default 42)\n"
	  "  default boot:  mem=128M backing=anon cma=16M kcompactd=manual (nr_cpus=threads+1)\n"
	  "  exits 1 on a corrupt byte, a lost frame or a failed pa_validate\n",
	  true, bench_soak },
	{ "fragbench",
	  "long churn in the trace's mix: 1 GiB regions tainted and 1 GiB blocks, per policy",
	  "  --unmovable-pct P  share of the allocated frames that are unmovable or\n"
	  "                     reclaimable (default 5; the trace has 3.7)\n"
	  "  --turnover N       memory turned over N times (default 10)\n"
	  "  --policy P         linux (superblock_order=0 defrag_mode=0 fallback_order=10:\n"
	  "                     the kernel's order-10 claims), linux-whole (the same at\n"
	  "                     this max_order: claims up to a whole max-order block) or\n"
	  "                     superblock (the default superblock_order, defrag_mode=1);\n"
	  "                     default superblock\n"
	  "  --compare          every policy on the same stream, side by side\n"
	  "  --mem SIZE         pool size for the default boot line (default 64G)\n"
	  "  --seed N           random seed (default 42)\n"
	  "  default boot:      mem=64G max_order=18; kcompactd=manual and nr_cpus=1 are\n"
	  "                     appended (the run is deterministic for a seed)\n",
	  true, bench_fragbench },
	{ "device",
	  "device memory: 4-8 KiB churn then the largest contiguous, fragmentation, zeroing",
	  "  --runs N       runs of each part, each on fresh pools (default 3)\n"
	  "  --seed N       random seed of the churn (default 42)\n"
	  "  --boot LINE    one boot line for all three parts; without it: (a) "
	  "mem=256M,\n"
	  "                 (b) mem=1G, (c) mem=256M backing=anon, all zones=flat\n"
	  "                 min_free_kbytes=0 kcompactd=manual\n",
	  true, bench_device },
	{ "balloon", "a guest's churn with a free page reporting device, reporting off then on",
	  "  --seconds S    length of each run (default 2): 8 grow/shrink cycles\n"
	  "  --runs N       runs each way, each on fresh pools (default 3)\n"
	  "  --seed N       random seed (default 42)\n"
	  "  default boot:  "
	  "mem=1G backing=anon page_reporting_delay_ms=50\n",
	  true, bench_balloon },
	{ "boot",
	  "boot time, first allocation and resident memory, 1 GiB to 4 TiB, both init modes",
	  "  --runs N       repetitions (default 5)\n"
	  "  --boot LINE    one pool; without it, mem=1G..4T with deferred_init=1 and 0\n",
	  true, bench_boot_time },
};

#define NR_WORKLOADS (sizeof workloads / sizeof workloads[0])

const struct bench_workload *bench_find(const char *name)
{
	for (size_t i = 0; i < NR_WORKLOADS; i++)
		if (strcmp(workloads[i].name, name) == 0)
			return &workloads[i];
	return NULL;
}

void bench_list(FILE *f)
{
	for (size_t i = 0; i < NR_WORKLOADS; i++)
		fprintf(f, "  %-18s %s\n", workloads[i].name, workloads[i].help);
}

static const char common_usage[] =
        "options every workload takes:\n"
        "  --boot \"CMDLINE\"  boot line of the pool (default: the workload's)\n"
        "  --runs N         repetitions; median, min, max and stddev are printed\n"
        "  --ops N, --seconds S, --threads N, --order N, --seed N\n"
        "  --json           machine-readable output\n";

void bench_common_usage(FILE *f)
{
	fputs(common_usage, f);
}

void bench_usage(const struct bench_workload *w, FILE *f)
{
	fprintf(f, "usage: pagealloc bench %s [options]\n%s\n\n%s\n", w->name, w->help, w->usage);
	bench_common_usage(f);
}

void bench_opts_init(struct bench_opts *opt)
{
	*opt = (struct bench_opts){ .order = -1,
		                    .gfp = PA_GFP_KERNEL,
		                    .fill_pct = -1,
		                    .unmovable_pct = -1,
		                    .pinned_pct = -1,
		                    .transient_pct = -1,
		                    .folio_order = -1 };
}

/* ---------------------------------------------------------------------- */
/* Options                                                                 */
/* ---------------------------------------------------------------------- */

static int parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* An option held in an unsigned; *out is written only on success. */
static int parse_unsigned(const char *s, uint64_t lo, uint64_t hi, unsigned *out)
{
	uint64_t n;
	if (parse_u64(s, lo, hi, &n))
		return -1;
	*out = (unsigned)n;
	return 0;
}

static int opt_runs(struct bench_opts *o, const char *v)
{
	return parse_unsigned(v, 1, 100000, &o->runs);
}

static int opt_ops(struct bench_opts *o, const char *v)
{
	return parse_u64(v, 1, UINT64_MAX, &o->ops);
}

static int opt_seconds(struct bench_opts *o, const char *v)
{
	char *end;
	errno = 0;
	double s = strtod(v, &end);
	if (errno || *end || end == v || !(s > 0 && s < 1e6))
		return -1;
	o->seconds = s;
	return 0;
}

static int opt_threads(struct bench_opts *o, const char *v)
{
	return parse_unsigned(v, 1, 1024, &o->threads);
}

static int opt_order(struct bench_opts *o, const char *v)
{
	uint64_t n = 0; /* parse_u64 sets it only on success */
	int ret = parse_u64(v, 0, 63, &n);
	o->order = (int)n;
	return ret;
}

static int opt_seed(struct bench_opts *o, const char *v)
{
	o->seed_set = true;
	return parse_u64(v, 0, UINT64_MAX, &o->seed);
}

static int opt_iterations(struct bench_opts *o, const char *v)
{
	return parse_u64(v, 1, UINT32_MAX, &o->iterations);
}

static int opt_nr(struct bench_opts *o, const char *v)
{
	return parse_u64(v, 1, 1ull << 32, &o->nr);
}

static int opt_batch(struct bench_opts *o, const char *v)
{
	return parse_unsigned(v, 1, 1u << 20, &o->batch);
}

static int opt_api(struct bench_opts *o, const char *v)
{
	if (strcmp(v, "loop") && strcmp(v, "bulk"))
		return -1;
	o->api_bulk = strcmp(v, "bulk") == 0;
	return 0;
}

static int opt_count(struct bench_opts *o, const char *v)
{
	return parse_u64(v, 1, 1ull << 32, &o->count);
}

/* A percentage 0..100, with a fraction ("0.005"). */
static int parse_pct(const char *v, double *out)
{
	char *end;
	errno = 0;
	double p = strtod(v, &end);
	if (errno || *end || end == v || !(p >= 0 && p <= 100))
		return -1;
	*out = p;
	return 0;
}

static int opt_fill_pct(struct bench_opts *o, const char *v)
{
	return parse_pct(v, &o->fill_pct);
}

static int opt_unmovable_pct(struct bench_opts *o, const char *v)
{
	return parse_pct(v, &o->unmovable_pct);
}

static int opt_pinned_pct(struct bench_opts *o, const char *v)
{
	return parse_pct(v, &o->pinned_pct);
}

static int opt_transient_pct(struct bench_opts *o, const char *v)
{
	return parse_pct(v, &o->transient_pct);
}

static int opt_folio_order(struct bench_opts *o, const char *v)
{
	uint64_t n = 0; /* parse_u64 sets it only on success */
	int ret = parse_u64(v, 0, 63, &n);
	o->folio_order = (int)n;
	return ret;
}

static const struct {
	const char *name;
	pa_gfp_t flags;
} gfp_names[] = {
	{ "kernel", PA_GFP_KERNEL },
	{ "movable", PA_GFP_MOVABLE },
	{ "reclaimable", PA_GFP_RECLAIMABLE },
	{ "zero", PA_GFP_ZERO },
	{ "comp", PA_GFP_COMP },
	{ "noretry", PA_GFP_NORETRY },
	{ "nowarn", PA_GFP_NOWARN },
	{ "high", PA_GFP_HIGH },
	{ "thisnode", PA_GFP_THISNODE },
	{ "dma32", PA_GFP_DMA32 },
	{ "dma", PA_GFP_DMA },
	{ "nocompact", PA_GFP_NOCOMPACT },
};

/* A comma-separated list of flag names. */
static int opt_gfp(struct bench_opts *o, const char *v)
{
	pa_gfp_t gfp = 0;
	while (*v) {
		size_t n = strcspn(v, ","), k;
		for (k = 0; k < sizeof gfp_names / sizeof gfp_names[0]; k++)
			if (strlen(gfp_names[k].name) == n && strncmp(v, gfp_names[k].name, n) == 0)
				break;
		if (k == sizeof gfp_names / sizeof gfp_names[0])
			return -1;
		gfp |= gfp_names[k].flags;
		v += n + (v[n] == ',');
	}
	o->gfp = gfp;
	return 0;
}

const char *bench_gfp_name(pa_gfp_t gfp, char *buf, size_t len)
{
	size_t pos = 0;
	buf[0] = '\0';
	for (size_t k = 1; k < sizeof gfp_names / sizeof gfp_names[0]; k++) {
		if (!(gfp & gfp_names[k].flags))
			continue;
		int n = snprintf(buf + pos, len - pos, "%s%s", pos ? "," : "", gfp_names[k].name);
		if (n < 0 || (size_t)n >= len - pos)
			break;
		pos += (size_t)n;
	}
	return pos ? buf : gfp_names[0].name;
}

/* The order a workload may ask of this pool; the message says how to get more. */
int bench_check_order(struct pa_pool *pool, unsigned order)
{
	struct pa_config cfg;
	pa_get_config(pool, &cfg);
	if (order <= cfg.max_order)
		return 0;
	fprintf(stderr,
	        "pagealloc: order %u is above this pool's max_order %u; boot with "
	        "--boot \"mem=4G max_order=%u min_free_kbytes=0\"\n",
	        order, cfg.max_order, order < 18 ? 18 : order);
	return -1;
}

static int opt_turnover(struct bench_opts *o, const char *v)
{
	return parse_unsigned(v, 1, 1000, &o->turnover);
}

static int opt_policy(struct bench_opts *o, const char *v)
{
	if (strcmp(v, "linux") && strcmp(v, "linux-whole") && strcmp(v, "superblock"))
		return -1;
	o->policy = v;
	return 0;
}

/* A size as mem= takes it: digits, then an optional K, M, G or T. */
static int opt_mem(struct bench_opts *o, const char *v)
{
	size_t digits = strspn(v, "0123456789");
	if (!digits || digits > 12 ||
	    (v[digits] && (strchr("KMGT", v[digits]) == NULL || v[digits + 1])))
		return -1;
	o->mem = v;
	return 0;
}

static int opt_boot(struct bench_opts *o, const char *v)
{
	o->boot = v;
	return 0;
}

static const struct bench_option {
	const char *name;
	int (*set)(struct bench_opts *o, const char *value); /* NULL: a flag */
	const char *valid;
} options[] = {
	{ "--boot", opt_boot, "a boot command line" },
	{ "--runs", opt_runs, "1..100000" },
	{ "--ops", opt_ops, "a positive number" },
	{ "--seconds", opt_seconds, "a positive number of seconds" },
	{ "--threads", opt_threads, "1..1024" },
	{ "--order", opt_order, "0..63" },
	{ "--seed", opt_seed, "a number" },
	{ "--nr", opt_nr, "1..4294967296" },
	{ "--iterations", opt_iterations, "1..4294967295" },
	{ "--batch", opt_batch, "1..1048576" },
	{ "--api", opt_api, "loop or bulk" },
	{ "--gfp", opt_gfp,
	  "comma-separated: kernel movable reclaimable zero comp noretry "
	  "nowarn high thisnode dma32 nocompact" },
	{ "--count", opt_count, "1..4294967296" },
	{ "--fill-pct", opt_fill_pct, "a percentage, 0..100" },
	{ "--unmovable-pct", opt_unmovable_pct, "a percentage, 0..100" },
	{ "--folio-order", opt_folio_order, "0..63" },
	{ "--pinned-pct", opt_pinned_pct, "a percentage, 0..100" },
	{ "--transient-pct", opt_transient_pct, "a percentage, 0..100" },
	{ "--turnover", opt_turnover, "1..1000" },
	{ "--policy", opt_policy, "linux, linux-whole or superblock" },
	{ "--mem", opt_mem, "a size such as 4G or 512M" },
	{ "--json", NULL, NULL },
	{ "--keep", NULL, NULL },
	{ "--compare", NULL, NULL },
	{ "--scaling", NULL, NULL },
	{ "--cma", NULL, NULL },
};

static void opt_flag(struct bench_opts *o, const char *name)
{
	if (strcmp(name, "--json") == 0)
		o->json = true;
	else if (strcmp(name, "--compare") == 0)
		o->compare = true;
	else if (strcmp(name, "--scaling") == 0)
		o->scaling = true;
	else if (strcmp(name, "--cma") == 0)
		o->cma = true;
	else
		o->keep = true;
}

int bench_parse_opt(struct bench_opts *opt, int argc, char **argv, int *i)
{
	const char *arg = argv[*i];
	for (size_t k = 0; k < sizeof options / sizeof options[0]; k++) {
		size_t n = strlen(options[k].name);
		if (strncmp(arg, options[k].name, n) != 0 || (arg[n] && arg[n] != '='))
			continue;
		if (!options[k].set) {
			if (arg[n])
				break; /* a flag takes no value */
			opt_flag(opt, options[k].name);
			return 1;
		}
		const char *v = arg[n] ? arg + n + 1 : NULL;
		if (!v && *i + 1 < argc)
			v = argv[++*i];
		if (!v) {
			fprintf(stderr, "pagealloc: %s needs a value (%s)\n", options[k].name,
			        options[k].valid);
			return -1;
		}
		if (options[k].set(opt, v)) {
			fprintf(stderr, "pagealloc: %s: bad value '%s' (valid: %s)\n",
			        options[k].name, v, options[k].valid);
			return -1;
		}
		return 1;
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Helpers                                                                 */
/* ---------------------------------------------------------------------- */

uint64_t bench_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const char *bench_boot_line(const struct bench_opts *opt, const char *def)
{
	return opt->boot ? opt->boot : def;
}

const char *bench_ctl_error(int err)
{
	return err == -ENOENT ? "no such path" : strerror(-err);
}

int bench_apply_ctls(const struct bench_opts *opt, struct pa_pool *pool)
{
	for (unsigned i = 0; i < opt->nr_ctls; i++) {
		char path[256];
		const char *set = opt->ctls[i], *eq = strchr(set, '=');
		size_t n = eq ? (size_t)(eq - set) : 0;
		int ret = -EINVAL;
		if (eq && n && n < sizeof path) {
			memcpy(path, set, n);
			path[n] = '\0';
			ret = pa_ctl_write(pool, path, eq + 1);
		}
		if (ret) {
			fprintf(stderr,
			        "pagealloc: --ctl %s: %s (`pagealloc ctl` lists the paths and their "
			        "values)\n",
			        set, !eq || !n ? "not PATH=VALUE" : bench_ctl_error(ret));
			return -1;
		}
	}
	return 0;
}

int bench_boot_with(const struct bench_opts *opt, const char *line,
                    const struct pa_platform *platform, struct pa_pool **pool)
{
	char err[512] = "";
	int ret = pa_boot(line, platform, pool, err, sizeof err);
	if (ret) {
		fprintf(stderr, "pagealloc: boot \"%s\": %s\n", line,
		        err[0] ? err : strerror(-ret));
		return ret;
	}
	pa_deferred_init_wait(*pool); /* measure the allocator, not the init threads */
	if (bench_apply_ctls(opt, *pool)) {
		pa_shutdown(*pool);
		*pool = NULL;
		return -EINVAL;
	}
	return 0;
}

int bench_boot(const struct bench_opts *opt, const char *def, struct pa_pool **pool)
{
	return bench_boot_with(opt, bench_boot_line(opt, def), NULL, pool);
}

static _Thread_local unsigned posed_cpu;

void bench_pose_as_cpu(unsigned cpu)
{
	posed_cpu = cpu;
}

static unsigned posed_cpu_id(void *ctx)
{
	(void)ctx;
	return posed_cpu;
}

const char *bench_posing_line(const struct bench_opts *opt, const char *def, unsigned cpus,
                              char *buf, size_t len)
{
	const char *base = bench_boot_line(opt, def);
	if (strstr(base, "nr_cpus="))
		snprintf(buf, len, "%s", base);
	else
		snprintf(buf, len, "%s%snr_cpus=%u", base, *base ? " " : "", cpus);
	return buf;
}

int bench_boot_posing(const struct bench_opts *opt, const char *def, unsigned cpus,
                      struct pa_pool **pool)
{
	static const struct pa_platform posing = { .cpu_id = posed_cpu_id };
	char line[1024];
	bench_posing_line(opt, def, cpus, line, sizeof line);
	return bench_boot_with(opt, line, &posing, pool);
}

uint64_t bench_seed_state(uint64_t seed, uint64_t stream)
{
	uint64_t z = seed + (stream + 1) * 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return z ? z : 1;
}

uint64_t bench_pcp_frames(struct pa_pool *pool)
{
	struct pa_config cfg;
	pa_get_config(pool, &cfg);
	uint64_t sum = 0;
	for (unsigned n = 0; n < cfg.nr_nodes; n++)
		for (unsigned z = 0; z < PA_ZONE_COUNT; z++)
			for (unsigned cpu = 0; cpu < cfg.nr_cpus; cpu++) {
				struct pa_pcp_info info;
				if (pa_pcp_info(pool, n, (enum pa_zone_type)z, cpu, &info, NULL) ==
				    0)
					sum += info.count;
			}
	return sum;
}

char *bench_report_text(struct pa_pool *pool, enum pa_report_kind kind, unsigned flags)
{
	int n = pa_report(pool, kind, flags, NULL, 0);
	if (n < 0)
		return NULL;
	char *buf = malloc((size_t)n + 1);
	if (buf && pa_report(pool, kind, flags, buf, (size_t)n + 1) < 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

void bench_zone_lock_totals(struct pa_pool *pool, uint64_t *contended, uint64_t *wait_ns)
{
	*contended = *wait_ns = 0;
	unsigned n = pa_zone_count(pool);
	for (unsigned i = 0; i < n; i++) {
		struct pa_zone_info z;
		if (pa_zone_info(pool, i, &z) == 0) {
			*contended += z.lock_contended;
			*wait_ns += z.lock_wait_ns;
		}
	}
}

/* Start n threads on fn together (a barrier), wait for all; one runs inline. */
struct parallel_arg {
	void *(*fn)(void *);
	void *arg;
	pthread_barrier_t *start;
};

static void *parallel_tramp(void *p)
{
	struct parallel_arg *a = p;
	pthread_barrier_wait(a->start);
	return a->fn(a->arg);
}

int bench_parallel(unsigned n, void *(*fn)(void *), void *args, size_t size)
{
	if (n <= 1) {
		fn(args);
		return 0;
	}
	pthread_t *tid = calloc(n, sizeof *tid);
	struct parallel_arg *pa = calloc(n, sizeof *pa);
	pthread_barrier_t start;
	if (!tid || !pa || pthread_barrier_init(&start, NULL, n)) {
		free(tid);
		free(pa);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < n; i++) {
		pa[i] = (struct parallel_arg){ fn, (char *)args + i * size, &start };
		if (pthread_create(&tid[i], NULL, parallel_tramp, &pa[i])) {
			fprintf(stderr, "pagealloc: cannot start thread %u\n", i);
			abort(); /* the others wait at the barrier for it */
		}
	}
	for (unsigned i = 0; i < n; i++)
		pthread_join(tid[i], NULL);
	pthread_barrier_destroy(&start);
	free(tid);
	free(pa);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Summaries                                                               */
/* ---------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Newton's method, so the program needs no libm. */
static double bench_sqrt(double x)
{
	if (!(x > 0))
		return 0;
	double r = x > 1 ? x : 1;
	for (int i = 0; i < 2000; i++) {
		double next = 0.5 * (r + x / r);
		if (next >= r)
			break;
		r = next;
	}
	return r;
}

void bench_summarize(const double *samples, unsigned n, struct bench_summary *s)
{
	*s = (struct bench_summary){ 0 };
	if (!n)
		return;
	double *v = malloc(n * sizeof *v);
	if (!v)
		return;
	memcpy(v, samples, n * sizeof *v);
	qsort(v, n, sizeof *v, cmp_double);
	s->min = v[0];
	s->max = v[n - 1];
	s->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	for (unsigned i = 0; i < n; i++)
		s->mean += v[i] / n;
	double sq = 0;
	for (unsigned i = 0; i < n; i++)
		sq += (v[i] - s->mean) * (v[i] - s->mean);
	s->stddev = n > 1 ? bench_sqrt(sq / (n - 1)) : 0;
	free(v);
}

/* ---------------------------------------------------------------------- */
/* Output                                                                  */
/* ---------------------------------------------------------------------- */

static void out_key(struct bench_out *o, const char *key)
{
	if (o->json)
		fprintf(o->f, "%s\n  \"%s\": ", o->comma ? "," : "", key);
	else
		fprintf(o->f, "%-24s ", key);
	o->comma = true;
}

void bench_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static bool is_finite(double v)
{
	return v == v && v - v == 0;
}

/* A double for JSON: a whole number as an integer (counts stay counts), no nan or inf. */
static void json_double(FILE *f, double v)
{
	if (!is_finite(v))
		fputs("null", f);
	else if (v == (double)(int64_t)v && v < 9007199254740992.0 && v > -9007199254740992.0)
		fprintf(f, "%" PRId64, (int64_t)v);
	else
		fprintf(f, "%.3f", v);
}

void bench_out_begin(struct bench_out *o, FILE *f, bool json, const char *workload)
{
	*o = (struct bench_out){ .f = f, .json = json };
	if (json)
		fputc('{', f);
	bench_out_str(o, "workload", workload);
}

void bench_out_str(struct bench_out *o, const char *key, const char *value)
{
	out_key(o, key);
	if (o->json)
		bench_json_string(o->f, value);
	else
		fprintf(o->f, "%s\n", value);
}

void bench_out_u64(struct bench_out *o, const char *key, uint64_t value)
{
	out_key(o, key);
	fprintf(o->f, o->json ? "%" PRIu64 : "%" PRIu64 "\n", value);
}

void bench_out_f64(struct bench_out *o, const char *key, double value)
{
	out_key(o, key);
	if (o->json)
		json_double(o->f, value);
	else if (is_finite(value))
		fprintf(o->f, "%.2f\n", value);
	else
		fputs("n/a\n", o->f);
}

void bench_out_metric(struct bench_out *o, const char *key, const char *unit, const double *samples,
                      unsigned n)
{
	struct bench_summary s;
	bench_summarize(samples, n, &s);
	out_key(o, key);
	if (!o->json) {
		fprintf(o->f, "median %.2f  min %.2f  max %.2f  stddev %.2f  %s, %u run%s\n",
		        s.median, s.min, s.max, s.stddev, unit, n, n == 1 ? "" : "s");
		return;
	}
	const char *names[] = { "median", "min", "max", "mean", "stddev" };
	double vals[] = { s.median, s.min, s.max, s.mean, s.stddev };
	fputc('{', o->f);
	for (unsigned i = 0; i < 5; i++) {
		fprintf(o->f, "\"%s\": ", names[i]);
		json_double(o->f, vals[i]);
		fputs(", ", o->f);
	}
	fprintf(o->f, "\"unit\": \"%s\", \"samples\": [", unit);
	for (unsigned i = 0; i < n; i++) {
		fputs(i ? ", " : "", o->f);
		json_double(o->f, samples[i]);
	}
	fputs("]}", o->f);
}

void bench_out_report(struct bench_out *o, const char *key, struct pa_pool *pool,
                      enum pa_report_kind kind)
{
	bench_out_report_note(o, key, NULL, pool, kind);
}

void bench_out_note(struct bench_out *o, const char *note)
{
	if (!o->json)
		fprintf(o->f, "  (%s)\n", note);
}

void bench_out_report_note(struct bench_out *o, const char *key, const char *note,
                           struct pa_pool *pool, enum pa_report_kind kind)
{
	char *text = bench_report_text(pool, kind, o->json ? PA_REPORT_JSON : 0);
	if (o->json) {
		out_key(o, key);
		size_t n = text ? strlen(text) : 0;
		while (n && text[n - 1] == '\n')
			text[--n] = '\0';
		fputs(text ? text : "null", o->f);
	} else {
		fprintf(o->f, "\n%s:%s%s\n%s", key, note ? " " : "", note ? note : "",
		        text ? text : "(report failed)\n");
	}
	free(text);
}

void bench_out_orders(struct bench_out *o, const char *key, const char *const *names,
                      const uint64_t *const *rows, unsigned nr_rows, unsigned orders)
{
	if (o->json) {
		out_key(o, key);
		fputc('{', o->f);
		for (unsigned r = 0; r < nr_rows; r++) {
			fprintf(o->f, "%s\"%s\": [", r ? ", " : "", names[r]);
			for (unsigned k = 0; k < orders; k++)
				fprintf(o->f, "%s%" PRIu64, k ? ", " : "", rows[r][k]);
			fputc(']', o->f);
		}
		fputc('}', o->f);
		return;
	}
	fprintf(o->f, "\n%s:\n%-12s", key, "order");
	for (unsigned k = 0; k < orders; k++)
		fprintf(o->f, " %9u", k);
	fputc('\n', o->f);
	for (unsigned r = 0; r < nr_rows; r++) {
		fprintf(o->f, "%-12s", names[r]);
		for (unsigned k = 0; k < orders; k++)
			fprintf(o->f, " %9" PRIu64, rows[r][k]);
		fputc('\n', o->f);
	}
	o->comma = true;
}

void bench_out_open(struct bench_out *o, const char *key)
{
	if (!o->json) {
		fprintf(o->f, "\n%s:\n", key);
		return;
	}
	out_key(o, key);
	fputc('{', o->f);
	o->comma = false;
}

void bench_out_close(struct bench_out *o)
{
	if (o->json)
		fputc('}', o->f);
	o->comma = true;
}

void bench_out_json(struct bench_out *o, const char *key, const char *json)
{
	if (!o->json)
		return;
	out_key(o, key);
	fputs(json, o->f);
}

void bench_out_end(struct bench_out *o)
{
	if (o->json)
		fputs("\n}\n", o->f);
	fflush(o->f);
}
