/* SPDX-License-Identifier: MIT */
/*
 * What run.c and start.c share: the replay's context and maps.
 */
#ifndef PA_REPLAY_RUN_H
#define PA_REPLAY_RUN_H

#include "replay.h"

/* Cookies: a kernel pfn for traced blocks; this bit for pre-trace blocks. */
#define RP_COOKIE_PRE (1ull << 62)

enum rp_kmap_kind { KM_NONE, KM_LIVE, KM_FAILED };

/* A kernel pfn that heads a traced allocation: where pagealloc put it. */
struct rp_kmap {
	uint32_t ppfn;
	uint8_t order;
	uint8_t kind;   /* enum rp_kmap_kind */
	uint8_t kernel; /* an unmovable or reclaimable allocation (it taints its region) */
};

#define RP_MOVED_ORDERS 16 /* moved blocks of higher orders are found as pre-trace memory */

/* Linux's sysctl_stat_interval (HZ): how often the vmstat worker runs on a CPU. */
#define VMSTAT_INTERVAL_NS 1000000000ull

/*
 * Where the jiffies clock's whole seconds fall on the trace's clock, learnt
 * from the vmstat worker's runs the trace shows: a run is on time or late,
 * so the busiest twentieth of a second, from its earliest run (or the
 * earliest of the twentieth before it), is taken.
 */
#define RP_TICK_BINS 20
struct rp_tick {
	uint32_t runs[RP_TICK_BINS];
	uint64_t first[RP_TICK_BINS]; /* the earliest run in the bin, ns past the second */
	unsigned best;                /* the bin with the most runs (the first to get there) */
	uint64_t phase;               /* ns past each second of the trace's clock */
	bool known;
};

struct rp_ctx {
	const struct rp_trace *trace;
	struct rp_machine *m;
	const struct rp_options *opt;
	struct rp_result *res;
	struct pa_pool *pool;
	int owner;
	unsigned cpu;    /* the CPU hook's answer: the current event's CPU */
	uint64_t now_ns; /* the clock hook's answer: the current event's time */
	unsigned max_order, pb_order;
	bool kernel_has_dma;
	uint64_t nr_frames, nr_kmap;
	unsigned nr_cpus;     /* the pool's CPUs, at most RP_MAX_CPUS */
	struct rp_kmap *kmap; /* [kernel pfn] */
	size_t kmap_bytes;    /* its mapping's length (kmap_alloc()) */
	uint8_t *pre;         /* [pool pfn]: order + 1 of a pre-trace block's head, else 0 */
	uint8_t *ctarget;     /* bit per kernel pfn: in a range kernel compaction took from */
	uint8_t *freed;       /* bit per kernel pfn: a traced free's head, not allocated since */
	uint8_t *pre_kernel;  /* bit per pageblock: the start state allocated it unmovable */
	uint64_t pre_cursor;  /* where the search for any pre-trace block resumes */
	int pre_list; /* >= 0: pre-trace frees go on this PCP type's list (the start's stock) */
	uint64_t map_errors, realloc_live, moved;
	/*
	 * Frames held for allocations the trace does not show (held_untraced()):
	 * order-0 frames, the last taken first given back.
	 */
	uint32_t *held;
	size_t nr_held, cap_held, max_held;
	/*
	 * The pool's blocks of allocations the kernel's compaction moved to
	 * pfns the trace does not name (keep_moved()), by kernel zone (index +
	 * 1, 0 for none) and order, oldest first: a free of such a pfn gives
	 * one back (rp_free_moved()).
	 */
	struct rp_moved {
		uint32_t *pfn;
		size_t head, tail, cap;
	} moved_q[RP_MAX_ZONES + 1][RP_MOVED_ORDERS];
	uint64_t decay_last[RP_MAX_CPUS]; /* when each CPU's vmstat worker last ran */
	uint64_t decay_due[RP_MAX_CPUS];  /* and when its timer expires next */
	uint64_t decay_next;              /* the earliest of decay_due[] */
	uint64_t evidence_only;           /* events for the starting state alone */
	/* Per zone index (a single node's), CPU and order, a bit per type: refilled before. */
	uint8_t refilled[PA_ZONE_COUNT][RP_MAX_CPUS][RP_PCP_ORDERS];
	struct rp_tick tick;                       /* the whole seconds of the kernel's jiffies */
	uint64_t start_fallbacks, start_zone_lock; /* counts once the starting state was built */
	bool reclaim_on;                           /* a kswapd pass is under way */
	bool seen_balance;         /* the trace prints balance_pgdat's begin and end */
	uint64_t lazy_lo, lazy_hi; /* set up late by the kernel (rp_machine_lazy_range()) */
	char first_report[256];
	/*
	 * Per kernel zone (index + 1; 0: outside every zone): 1 + the lowest
	 * order a walk of all memory found no pre-trace block of, of any type;
	 * 0 when none failed. Blocks only shrink or go, so a search for as much
	 * fails again without a walk, until memory joins them (keep_moved()).
	 */
	uint8_t pre_miss[RP_MAX_ZONES + 1];
};

/* run.c */
/* Write the knob zone/<N>/knob of every zone of the pool; stops at the first refusal. */
void rp_ctl_zones(struct rp_ctx *c, const char *knob, const char *value);

/* start.c */
/* Bring the pool to the first snapshot's state (or leave it empty without one). */
int rp_start_state(struct rp_ctx *c);
/*
 * Free pre-trace memory for a kernel free of (k, order): at k if held there,
 * else anywhere; says where it found it (at the kernel's pfn, another
 * block, none left).
 */
enum rp_pre_found { RP_PRE_NONE, RP_PRE_AT_PFN, RP_PRE_ELSEWHERE };
enum rp_pre_found rp_free_pre(struct rp_ctx *c, uint64_t k, unsigned order);
/* Moved blocks (rp_ctx.moved_q): queue one, free one for a free of kernel pfn k, free all. */
void rp_queue_moved(struct rp_ctx *c, uint32_t ppfn, unsigned order);
bool rp_free_moved(struct rp_ctx *c, uint64_t k, unsigned order);
void rp_moved_free(struct rp_ctx *c);
/* The pool as a snapshot sees it; a --series point. */
void rp_model_state(struct rp_ctx *c, struct rp_state *st);
void rp_sample(struct rp_ctx *c, size_t event);

/* taint.c */
/* Regions and pageblocks holding unmovable or reclaimable allocations, into st. */
void rp_model_taint(struct rp_ctx *c, struct rp_state *st);

#endif
