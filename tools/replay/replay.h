/* SPDX-License-Identifier: MIT */
/*
 * pagealloc replay: a Linux ftrace recording of the page allocator (kmem,
 * compaction, vmscan and migrate events) replayed on a pool shaped like the
 * traced machine, side by side with the kernel's own /proc snapshots.
 *
 * The work runs in steps, one file each in tools/replay/:
 *   parse.c    text (plain, .xz, .gz, stdin) -> a compact event array
 *   machine.c  the snapshot folders -> a boot line, the starting state
 *   start.c    the pool's state at the trace's start
 *   run.c      the events on the pool: kernel pfn -> pool block map (run.h)
 *   taint.c    pageblocks and regions that mixed types
 *   report.c   side-by-side tables, JSON, --series, --svg, compare
 *   cli.c      options, --compare in parallel processes
 */
#ifndef PA_REPLAY_H
#define PA_REPLAY_H

#include "pagealloc.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* What the replay loop acts on; every other event is counted only. */
enum rp_type {
	RP_ALLOC,          /* mm_page_alloc with a pfn */
	RP_ALLOC_FAILED,   /* mm_page_alloc with pfn 0: the kernel failed */
	RP_FREE,           /* mm_page_free (arg: enum rp_free_kind) */
	RP_MARK,           /* tracing_mark_write (arg: index into the marker texts) */
	RP_KCOMPACTD,      /* mm_compaction_kcompactd_wake (arg: node, order: its order) */
	RP_COMPACT_MEMORY, /* a full compaction of every zone (/proc/sys/vm/compact_memory) */
	RP_ISOLATE_FREE,   /* mm_compaction_isolate_freepages that took pages (pfn, arg: end) */
	RP_DRAIN,          /* the kernel drained per-CPU lists (arg: enum rp_drain) */
	RP_RECLAIM,        /* kswapd on node pfn: arg an enum rp_reclaim */
	RP_DECAY,          /* the CPU's vmstat worker gave frames back (decay_pcp_high()) */
	RP_PROACTIVE,      /* kcompactd compacted unasked: a proactive pass (arg: node) */
	RP_EXTFRAG,        /* a fallback's free block (mt: its type); the start reads it */
	RP_REFILL, /* a CPU refilled its list of order and mt (pfn: first page, arg: pages) */
	RP_STOCK,  /* a block a CPU's list held at the start (mt: its type); the start reads it */
	RP_NR_ACTIONS
};

/* What an RP_RECLAIM event saw of kswapd. */
enum rp_reclaim {
	RP_RECLAIM_END,   /* mm_vmscan_balance_pgdat_end */
	RP_RECLAIM_BEGIN, /* mm_vmscan_balance_pgdat_begin */
	RP_RECLAIM_WAKE,  /* mm_vmscan_kswapd_wake: before each balance_pgdat() */
	RP_RECLAIM_SLEEP, /* mm_vmscan_kswapd_sleep */
	/*
	 * Without balance_pgdat events (6.1): after kswapd's last event before
	 * its next wake or sleep, where its pass ended (the parser puts it there).
	 */
	RP_RECLAIM_IDLE,
};

/*
 * Drains of per-CPU lists the trace shows (mm_page_pcpu_drain right after):
 * every CPU's after a direct reclaim that did not help (drain_all_pages), or
 * the event CPU's while compaction migrates (drain_local_pages).
 */
enum rp_drain { RP_DRAIN_ALL, RP_DRAIN_LOCAL };

/*
 * Who freed a page, as the parser tells from the task's compaction events.
 * Compaction moves a page by taking a free one off the buddy lists (no alloc
 * event) and freeing the old one (mm_page_free between the task's
 * mm_compaction_isolate_migratepages and mm_compaction_migratepages): the
 * allocation lives on at the new pfn. The free pages compaction took and
 * did not use are freed at the end of its run, before mm_compaction_end.
 */
enum rp_free_kind {
	RP_FREE_PLAIN,    /* the page's user let it go */
	RP_FREE_MIGRATED, /* the source of a page compaction moved */
	RP_FREE_UNUSED,   /* a free page compaction took and gave back unused */
};
/*
 * In a free's arg beside its kind: the last line that named the block put
 * it in the buddy (a per-CPU drain), and none took it out again. The kernel
 * took it without a line: from the buddy's lists, which alloc_pages_bulk()
 * never reads (it takes from the per-CPU lists) and compaction's fast free
 * scanner does (fast_isolate_freepages() prints nothing), so what is freed
 * here is a page compaction moved to.
 */
#define RP_FREE_FROM_BUDDY (1u << 8)
#define RP_FREE_KIND(arg)  ((enum rp_free_kind)((arg)&0xff))

/*
 * In an allocation's arg beside the gfp: the kernel compacted directly
 * before it, and the most effort its runs took (Linux's COMPACT_PRIO_*:
 * 0 sync, 1 sync-light, 2 async).
 */
#define RP_ALLOC_COMPACTED  (1u << 31)
#define RP_ALLOC_PRIO_SHIFT 29
#define RP_ALLOC_PRIO_MASK  (3u << RP_ALLOC_PRIO_SHIFT)
#define RP_ALLOC_FLAGS      (RP_ALLOC_COMPACTED | RP_ALLOC_PRIO_MASK)

#define RP_MAX_RUNS 16 /* compaction runs in progress at once (tasks), tracked by the parser */

/* One event, 24 bytes: the whole sample fits in about 45 MB. */
struct rp_event {
	uint64_t ts_ns;
	uint32_t pfn;
	uint32_t arg; /* gfp (PA_GFP_*) for allocations; see enum rp_type */
	uint8_t type;
	uint8_t order;
	uint8_t cpu;
	uint8_t mt;
	uint32_t spare;
};

static inline bool rp_bit(const uint8_t *bits, uint64_t i)
{
	return (bits[i >> 3] >> (i & 7)) & 1;
}

static inline void rp_set_bit(uint8_t *bits, uint64_t i)
{
	bits[i >> 3] |= (uint8_t)(1u << (i & 7));
}

/* Every event name the recording recipe enables, counted by name. */
#define RP_EVENT_NAMES(X)                                                                          \
	X(MM_PAGE_ALLOC, "mm_page_alloc")                                                          \
	X(MM_PAGE_FREE, "mm_page_free")                                                            \
	X(MM_PAGE_FREE_BATCHED, "mm_page_free_batched")                                            \
	X(MM_PAGE_ALLOC_ZONE_LOCKED, "mm_page_alloc_zone_locked")                                  \
	X(MM_PAGE_PCPU_DRAIN, "mm_page_pcpu_drain")                                                \
	X(MM_PAGE_ALLOC_EXTFRAG, "mm_page_alloc_extfrag")                                          \
	X(COMPACTION_BEGIN, "mm_compaction_begin")                                                 \
	X(COMPACTION_END, "mm_compaction_end")                                                     \
	X(COMPACTION_SUITABLE, "mm_compaction_suitable")                                           \
	X(COMPACTION_FINISHED, "mm_compaction_finished")                                           \
	X(COMPACTION_ISOLATE_MIGRATEPAGES, "mm_compaction_isolate_migratepages")                   \
	X(COMPACTION_ISOLATE_FREEPAGES, "mm_compaction_isolate_freepages")                         \
	X(COMPACTION_MIGRATEPAGES, "mm_compaction_migratepages")                                   \
	X(COMPACTION_TRY, "mm_compaction_try_to_compact_pages")                                    \
	X(COMPACTION_DEFERRED, "mm_compaction_deferred")                                           \
	X(COMPACTION_DEFER_COMPACTION, "mm_compaction_defer_compaction")                           \
	X(COMPACTION_DEFER_RESET, "mm_compaction_defer_reset")                                     \
	X(COMPACTION_KCOMPACTD_SLEEP, "mm_compaction_kcompactd_sleep")                             \
	X(COMPACTION_KCOMPACTD_WAKE, "mm_compaction_kcompactd_wake")                               \
	X(COMPACTION_WAKEUP_KCOMPACTD, "mm_compaction_wakeup_kcompactd")                           \
	X(VMSCAN_KSWAPD_WAKE, "mm_vmscan_kswapd_wake")                                             \
	X(VMSCAN_KSWAPD_SLEEP, "mm_vmscan_kswapd_sleep")                                           \
	X(VMSCAN_WAKEUP_KSWAPD, "mm_vmscan_wakeup_kswapd")                                         \
	X(VMSCAN_DIRECT_BEGIN, "mm_vmscan_direct_reclaim_begin")                                   \
	X(VMSCAN_DIRECT_END, "mm_vmscan_direct_reclaim_end")                                       \
	X(VMSCAN_BALANCE_BEGIN, "mm_vmscan_balance_pgdat_begin")                                   \
	X(VMSCAN_BALANCE_END, "mm_vmscan_balance_pgdat_end")                                       \
	X(VMSCAN_LRU_SHRINK_INACTIVE, "mm_vmscan_lru_shrink_inactive")                             \
	X(VMSCAN_LRU_SHRINK_ACTIVE, "mm_vmscan_lru_shrink_active")                                 \
	X(VMSCAN_KSWAPD_RECLAIM_FAIL, "mm_vmscan_kswapd_reclaim_fail")                             \
	X(VMSCAN_KSWAPD_CLEAR_HOPELESS, "mm_vmscan_kswapd_clear_hopeless")                         \
	X(VMSCAN_NODE_RECLAIM_BEGIN, "mm_vmscan_node_reclaim_begin")                               \
	X(VMSCAN_NODE_RECLAIM_END, "mm_vmscan_node_reclaim_end")                                   \
	X(VMSCAN_THROTTLED, "mm_vmscan_throttled")                                                 \
	X(VMSCAN_RECLAIM_PAGES, "mm_vmscan_reclaim_pages")                                         \
	X(COMPACTION_FAST_ISOLATE_FREEPAGES, "mm_compaction_fast_isolate_freepages")               \
	X(MIGRATE_PAGES, "mm_migrate_pages")                                                       \
	X(MARK, "tracing_mark_write")

enum rp_name {
#define X(id, name) RPN_##id,
	RP_EVENT_NAMES(X)
#undef X
	        RPN_COUNT
};
extern const char *const rp_event_names[RPN_COUNT];

#define RP_MAX_CPUS   64 /* per-CPU state kept: the parser's, the starting state's */
#define RP_PCP_ORDERS 4  /* the orders below the pageblock's that every kernel lists */
#define RP_PCP_TYPES  3  /* unmovable, movable, reclaimable: the lists' types */

/* A parsed trace. */
struct rp_trace {
	struct rp_event *ev;
	size_t nr, cap;
	uint64_t per_name[RPN_COUNT]; /* lines per event name */
	uint64_t lines, unparsed;
	unsigned nr_cpus; /* "#P:N" of the header, else the highest CPU seen + 1 */
	char **marks;     /* marker texts */
	unsigned nr_marks;
	uint64_t max_pfn;     /* highest kernel pfn named, + 1 */
	uint64_t first_ts_ns; /* the first event line's timestamp */
	unsigned cpus_seen;   /* highest CPU of an event, + 1 */
	/* Parser state: the task in direct compaction, the compact_memory sweep. */
	uint32_t direct_pid, sweep_pid;
	bool direct_ran; /* direct_pid's compaction began a run (not deferred, not skipped) */
	uint8_t try_prio, direct_prio; /* its last try's priority; the lowest of those that ran */
	bool kcompactd_woken;          /* kcompactd woke for an order; until it sleeps */
	uint32_t drain_pid; /* a task whose next mm_page_pcpu_drain is a drain of drain_kind */
	uint8_t drain_kind;
	bool drain_pending; /* drain_pid is set (pid 0 is the idle task's) */
	/* Each CPU's last line: its task and event (a drain run's start is told by them). */
	uint32_t last_pid[RP_MAX_CPUS];
	uint8_t last_id[RP_MAX_CPUS];
	/* Compaction runs in progress (mm_compaction_begin .. _end): the task, and whether it migrates. */
	struct {
		uint32_t pid;
		bool migrating;
	} run[RP_MAX_RUNS];
	unsigned nr_runs;
	uint64_t sweep_start;
	/* kswapd's passes in a trace without balance_pgdat events (parse_reclaim()). */
	uint32_t kswapd_pid;
	size_t kswapd_last; /* events before the end of kswapd's last line */
	size_t idle_at;     /* where an RP_RECLAIM_IDLE goes in, after the line */
	bool balance_seen, pass_open, idle_pending;
	char err[256];                    /* the first line that could not be parsed, and why */
	uint32_t refill_run[RP_MAX_CPUS]; /* 1 + the CPU's RP_REFILL its next lines may add to */
	uint8_t *named;      /* bit per frame a line named so far (note_named()); parsing only */
	uint8_t *buddy;      /* bit per frame whose last line put it in the buddy; parsing only */
	uint64_t named_bits; /* of each */
	void *map;           /* ev lies in this mapping of a cache file (cache.c), else NULL */
	size_t map_len;
};

/*
 * Event i of a pass over the whole trace. Such a pass does little per event
 * and waits on memory (the events of a few million lines are tens of MB):
 * fetching 32 events ahead lets the loads overlap.
 */
static inline const struct rp_event *rp_pass_event(const struct rp_trace *t, size_t i)
{
	__builtin_prefetch(t->ev + i + 32);
	return t->ev + i;
}

/* How far a long step is (0..1), for a progress line; may be NULL. */
typedef void (*rp_progress_fn)(const char *what, double fraction);

/* Read a trace file (plain, .xz, .gz; "-" is stdin). 0, or -1 with a message on stderr. */
int rp_trace_read(const char *path, struct rp_trace *t, rp_progress_fn progress);
/* Parse one line into t; 0, or -1 with the reason in t->err (the line is counted unparsed). */
int rp_parse_line(struct rp_trace *t, const char *line, size_t len);
void rp_trace_free(struct rp_trace *t);
/*
 * The parsed trace of a trace file kept from an earlier replay (cache.c):
 * 0 and t filled, or -1 (none, stale, or caching off: PAGEALLOC_CACHE=off).
 */
int rp_cache_load(const char *path, struct rp_trace *t);
void rp_cache_store(const char *path, const struct rp_trace *t);
/* gfp flag names ("GFP_KERNEL|__GFP_ZERO") -> PA_GFP_*; -1 and the unknown name in bad. */
int rp_parse_gfp(const char *s, size_t len, pa_gfp_t *out, char *bad, size_t badlen);

/* --- Snapshots ------------------------------------------------------------ */

#define RP_MAX_ZONES  8
#define RP_MAX_ORDERS 41
#define RP_NR_MT      6 /* Unmovable Movable Reclaimable HighAtomic CMA Isolate */

/* What one side (kernel or pagealloc) looked like at one moment. */
struct rp_zone_state {
	char name[16];
	uint64_t start_pfn, end_pfn;               /* kernel zones: from zoneinfo */
	uint64_t free[RP_MAX_ORDERS];              /* blocks per order (buddyinfo) */
	uint64_t free_mt[RP_NR_MT][RP_MAX_ORDERS]; /* blocks per type and order */
	uint64_t pageblocks[RP_NR_MT];             /* pageblocks per type */
	uint64_t pcp;                              /* frames on per-CPU lists */
	uint64_t pcp_cpu[RP_MAX_CPUS];             /* the same per CPU (kernel zoneinfo) */
	uint64_t pcp_high[RP_MAX_CPUS];            /* each CPU's high then (zoneinfo) */
	uint64_t present, managed, min_wmark; /* min_wmark with the boost, as zoneinfo prints it */
	uint64_t boost;                       /* the watermark boost (zoneinfo's "boost") */
};

struct rp_state {
	unsigned nr_zones, nr_orders;
	unsigned nr_nodes; /* the highest "Node N" seen, + 1 */
	struct rp_zone_state zone[RP_MAX_ZONES];
	double uptime; /* seconds; -1 if unknown */
	/*
	 * Pollution, known for pagealloc's side only (taint_known): 1 GiB regions
	 * with memory, those holding an unmovable or reclaimable allocation, the
	 * pageblocks holding one, and of those the ones typed movable.
	 */
	bool taint_known;
	uint64_t regions, tainted_regions, tainted_pageblocks, mixed_pageblocks;
};

/* A snapshot folder of the recording. */
struct rp_snapshot {
	char name[64];
	struct rp_state kernel;
	struct rp_state model; /* filled when the replay reaches it */
	size_t at_event;       /* replayed before the event of this index */
	bool taken;
};

/* The recording folder: the trace, its snapshots and the machine's settings. */
struct rp_machine {
	char dir[1024];
	char trace_path[1100];
	unsigned nr_snapshots;
	struct rp_snapshot snap[16];
	int64_t min_free_kbytes; /* -1 if unknown */
	unsigned watermark_scale_factor;
	long watermark_boost_factor; /* -1: not recorded (the pool's default, Linux's) */
	unsigned max_order;          /* from buddyinfo's columns */
	char release[64];            /* the kernel's release (uname.txt), "" if unknown */
	char linux_ver[16];          /* linux= for the pool: the release's X.Y, or "" if unknown */
	double tracing_on;           /* /proc/uptime when tracing began (info/), -1 if unknown */
	bool page_reporting;         /* the guest reports free memory to its hypervisor, */
	unsigned page_reporting_order; /* from blocks of this order up (info/page_reporting.txt) */
};

/*
 * How far the trace's clock runs behind /proc/uptime, which the snapshots
 * read: a recording traced with the `global` or `local` clock (sched_clock)
 * drifts from CLOCK_BOOTTIME, noticeably under QEMU's TCG. No event comes
 * before tracing began, so the trace is at least tracing_on - first event
 * behind; 0 where that is negative or unknown (`pagealloc record` traces
 * with the `boot` clock, the snapshots' own).
 */
double rp_clock_skew(const struct rp_machine *m, const struct rp_trace *t);

/* A whole stream as a NUL-terminated string (NULL when out of memory). */
char *rp_read_stream(FILE *f);
/* Read a folder (or take a lone trace file). 0, or -1 with a message on stderr. */
int rp_machine_load(const char *path, struct rp_machine *m);
/* The zone of st named name (zones are matched by name), added if new; NULL when st is full. */
struct rp_zone_state *rp_state_zone(struct rp_state *st, const char *name);
/* Read the kernel's /proc buddyinfo and pagetypeinfo text into st. */
int rp_state_parse_buddyinfo(const char *text, struct rp_state *st);
int rp_state_parse_pagetypeinfo(const char *text, struct rp_state *st);
/* The kernel's zoneinfo: spans, present, managed, min watermark, boost, per-CPU counts (zones with memory only). */
void rp_state_parse_zoneinfo(const char *text, struct rp_state *st);
/*
 * The frames the kernel had not set up at the first snapshot and set up
 * during the recording (Linux's deferred_grow_zone(): a section at a time,
 * each max-order block an mm_page_free), whole sections: [*lo, *hi), which
 * the pool (deferred_init=lazy) sets up as the trace's frees there show;
 * both 0 when the kernel set up nothing late.
 */
#define RP_SECTION_FRAMES (128ull << 20 >> 12) /* x86-64's memory section */
void rp_machine_lazy_range(const struct rp_machine *m, uint64_t *lo, uint64_t *hi);

/*
 * What each CPU's lists held of each order and type when the trace began,
 * per zone of st (each zone has its own lists; a zone is told by the
 * pfn): a list serves from what it holds until it runs dry and is refilled
 * (the trace shows the first refill), so it held at least the most its
 * allocations there ran ahead of the frees onto it. A freed block goes to
 * its pageblock's type's list, taken as the type of its allocation in the
 * trace; frees of memory allocated before the trace are left out.
 */
struct rp_pcp_stock {
	/* Frames, per zone of st, CPU, order and type. */
	uint64_t need[RP_MAX_ZONES][RP_MAX_CPUS][RP_PCP_ORDERS][RP_PCP_TYPES];
	/* 1 + the events before that list's first refill (a run of two lines or more); 0: none. */
	uint32_t first_refill[RP_MAX_ZONES][RP_MAX_CPUS][RP_PCP_ORDERS][RP_PCP_TYPES];
};
/* NULL when out of memory; free() it. */
struct rp_pcp_stock *rp_pcp_stock(const struct rp_trace *t, const struct rp_state *st);
/* The frames all of a CPU's lists in zone z need: the sum over orders and types. */
uint64_t rp_pcp_stock_drawn(const struct rp_pcp_stock *s, int z, unsigned cpu);
/* The boot line of a pool shaped like the machine (or like the trace alone). */
void rp_machine_boot_line(const struct rp_machine *m, const struct rp_trace *t, char *buf,
                          size_t len);

/* --- Replay ---------------------------------------------------------------- */

/* Where each free of the trace went. */
#define RP_FREE_CLASSES(X)                                                                         \
	X(TRACED, "traced")                /* a live traced allocation, same head and order */     \
	X(SPLIT, "split")                  /* part of a live larger allocation (a split THP) */    \
	X(PRE_TRACE, "pre_trace")          /* allocated before tracing: from the starting state */ \
	X(COMPACTION, "compaction_target") /* a page compaction moved one to: from moved memory */ \
	X(MIGRATED, "migrated")            /* the old page of one compaction moved: lives on */    \
	X(UNUSED, "compaction_unused")     /* a free page compaction took and gave back unused */  \
	X(FAILED, "failed_in_pagealloc")   /* its allocation failed in pagealloc only */           \
	X(UNTRACED, "untraced_alloc")      /* freed in the trace before, taken without an event */ \
	X(DEFERRED, "deferred_init") /* set up late by the kernel: the pool sets up as far */      \
	X(UNMATCHED, "unmatched")    /* none of these */

enum rp_free_class {
#define X(id, name) RPF_##id,
	RP_FREE_CLASSES(X)
#undef X
	        RPF_COUNT
};
extern const char *const rp_free_class_names[RPF_COUNT];

/*
 * validate_every by the pool's size: every as many events as the pool has
 * frames, at least RP_VALIDATE_MIN. A validation walks every frame, so it
 * costs about as much as replaying that many events: a large machine's
 * replay is not spent validating.
 */
#define RP_VALIDATE_AUTO UINT64_MAX
#define RP_VALIDATE_MIN  200000

struct rp_options {
	const char *boot_extra; /* keys added to the derived boot line */
	const char *boot;       /* a whole boot line instead of the derived one */
	const char *ctl[16];    /* PATH=VALUE written after boot */
	unsigned nr_ctl;
	const char *linux_ver;   /* --linux VERSION: whose rules, in place of the recording's */
	const char *map_path;    /* the pool's pageblocks at the end, as SVG */
	uint64_t validate_every; /* events between pa_validate()s; 0: at the end only */
	uint64_t series_every;   /* 0: a --series point every 1/300 of the trace */
	bool want_series;
	rp_progress_fn progress;
};

/* One point of --series. */
struct rp_sample {
	double t;
	size_t event;
	uint64_t free, pcp;
	uint64_t free_blocks[RP_MAX_ORDERS];
	double unusable9;
	uint64_t pageblocks[RP_NR_MT];
};

/* The figures of one replay. */
struct rp_result {
	char boot[1024];
	char linux_ver[16], pcp_rules[16]; /* the rules the pool ran under (ctl linux, pcp/rules) */
	uint64_t events, allocs, frees, failed_kernel_served, kernel_failed_served;
	uint64_t actions; /* events the loop acted on (allocations, frees, markers, compaction) */
	uint64_t bad_page, validate_failures, validations;
	uint64_t free_class[RPF_COUNT];
	/* Frames set up as the kernel's late ones (deferred_grow_zone()). */
	uint64_t deferred_grown;
	uint64_t kernel_failed_attempts; /* allocations the kernel failed, tried again */
	/* Frames held for untraced allocations: taken, given back, most held at once. */
	uint64_t untraced_taken, untraced_given, untraced_max;
	/* THPs (movable allocations of the pageblock order): tried, served by the kernel, here. */
	uint64_t thp_tried, thp_kernel, thp_served;
	uint64_t fallbacks,
	        zone_lock;        /* at the end: vmstat's fallback claims + steals, zone lock */
	uint64_t reclaim_changes; /* kswapd reclaim began or ended (RP_RECLAIM) */
	/* Served allocations retried with a compaction the kernel did not run. */
	uint64_t extra_compactions;
	uint64_t boosts_ended; /* served allocations retried with the pool's boosts ended */
	uint64_t marks, compact_memory, kcompactd_wakes, proactive;
	uint64_t drains;                          /* per-CPU list drains replayed (RP_DRAIN) */
	uint64_t decays;                          /* vmstat worker passes run (vmstat_worker()) */
	uint64_t map_errors, realloc_live, moved; /* map upkeep: see run.c */
	/* Free blocks the start placed as two halves (order 0: not at all). */
	uint64_t start_shortfall;
	uint64_t pre_elsewhere; /* pre-trace frees that found it elsewhere, not at the pfn */
	/* Pageblocks the trace shows of a type other than movable at first; of them, typed so. */
	uint64_t start_pb_seen, start_pb_typed;
	/* Lists the start stocked past the kernel's, found at their first refill; their frames. */
	uint64_t start_pcp_lists, start_pcp_excess;
	/* Frames the start put on a list at the pfn the trace first drains them from (RP_STOCK). */
	uint64_t start_listed;
	double seconds, events_per_sec;         /* the loop's wall-clock time */
	double cpu_seconds, events_per_cpu_sec; /* its CPU time: what others' load leaves alone */
	double compact_seconds;                 /* of seconds: compact_memory and kcompactd runs */
	unsigned nr_orders;
	struct rp_sample *series;
	size_t nr_series, cap_series;
	char first_validate_error[256];
};

/* Replay t on a pool booted as m (or opt) says; 0, or -1 with a message. */
int rp_replay(const struct rp_trace *t, struct rp_machine *m, const struct rp_options *opt,
              struct rp_result *res);

/* --- Reports --------------------------------------------------------------- */

/* Free pages, and the unusable free index at order (Linux's, 0..1). */
uint64_t rp_state_free(const struct rp_state *st);
double rp_state_unusable(const struct rp_state *st, unsigned order);
/* Linux's fragmentation index at order (-1: a suitable block exists). */
double rp_state_extfrag(const struct rp_state *st, unsigned order);
/* Total variation distance between the free-pages-by-order distributions. */
double rp_state_tvd(const struct rp_state *a, const struct rp_state *b);

void rp_print_table(FILE *f, const struct rp_machine *m, const struct rp_result *r,
                    const struct rp_trace *t);
void rp_print_json(FILE *f, const struct rp_machine *m, const struct rp_result *r,
                   const struct rp_trace *t);
int rp_write_series(const char *path, const struct rp_result *r);
int rp_write_svg(const char *path, const struct rp_machine *m, const struct rp_result *r,
                 const struct rp_trace *t);

/* The ncompare-style table of several results' JSON documents (texts). */
int rp_compare_texts(FILE *f, char **texts, const char **names, unsigned n);

/* Subcommands. */
int replay_main(int argc, char **argv);
int compare_main(int argc, char **argv);
/* `pagealloc record`: this machine's kernel into a recording folder (record.c). */
int record_main(int argc, char **argv);

#endif
