/* SPDX-License-Identifier: MIT */
/*
 * What the compaction workloads share (thpcompact, highalloc-frag,
 * compact-copy, soak; the owner also gigantic, dmaheap and cma-alloc):
 *
 *  - an owner of movable folios that follows every move and split, keeps a
 *    pattern in each folio of a backed pool and checks it, and can pin;
 *  - the compaction counters of vmstat, read before and after a phase;
 *  - the figures of a run from one list, printed for one mode, or for the
 *    old mode (compaction_split_folios=1) beside the default in the layout
 *    of the LKP comparisons in the seeds (old, %change, new).
 */
#ifndef PA_BENCH_COMPACT_COMMON_H
#define PA_BENCH_COMPACT_COMMON_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "bench.h"
#include "pagealloc.h"

/* ---------------------------------------------------------------------- */
/* The owner                                                               */
/* ---------------------------------------------------------------------- */

#define CW_NONE  UINT64_MAX /* no slot */
#define CW_LOCKS 64         /* slot s is guarded by lock[s % CW_LOCKS] */

/*
 * One folio of the owner's table. Its cookie is the slot + 1 in the low 32
 * bits and the slot's generation above, so that a reused slot gets a new
 * pattern: bytes left over from the slot's last folio do not pass for its own.
 */
struct cw_folio {
	struct pa_page *page;    /* the head now; NULL: the slot is empty */
	struct pa_page **pieces; /* after a split (compaction_split_folios=1): 1 << order folios */
	pa_pfn_t split_pfn;      /* where it was split: piece i starts out at split_pfn + i */
	uint64_t cookie;         /* of the folio now in the slot */
	uint32_t gen;            /* folios the slot has held; kept when it is emptied */
	uint8_t order;           /* as allocated */
	bool pinned;             /* by cw_pin */
};

struct cw_owner {
	struct pa_pool *pool;
	int id;
	bool backed; /* the pool has bytes: folios carry a pattern */
	size_t words_per_frame;
	pthread_mutex_t lock[CW_LOCKS];
	struct cw_folio *f; /* [slot] */
	uint64_t cap;
	_Atomic uint64_t next;           /* slots handed out */
	pthread_mutex_t slots_lock;      /* guards the stack of emptied slots */
	uint64_t *free_slots, nr_free;   /* emptied slots, reused first */
	_Atomic uint64_t moved, refused; /* migrate callbacks answered OK / BUSY */
};

/* Register an owner with room for cap folios. 0, or -1 with a message. */
int cw_owner_init(struct cw_owner *o, struct pa_pool *pool, uint64_t cap);
/* After pa_shutdown(): until then a compactor may call the owner. */
void cw_owner_destroy(struct cw_owner *o);

/*
 * Allocate a movable folio (gfp | MOVABLE | COMP | NOWARN), write its
 * pattern, then give it to the owner: only then can compaction move it.
 * Its slot, or CW_NONE.
 */
uint64_t cw_alloc(struct cw_owner *o, pa_gfp_t gfp, unsigned order);
/* Free a slot's folio (its pieces after a split); nothing for an empty slot. The slot is reused. */
void cw_free(struct cw_owner *o, uint64_t slot);
/* Pin a slot's folio (once; it stops being movable): 0 or -errno. cw_free unpins it. */
int cw_pin(struct cw_owner *o, uint64_t slot);
/* What a slot holds now: false for an empty slot. */
struct cw_view {
	pa_pfn_t pfn;
	unsigned order;
	bool pinned;
};
bool cw_view(struct cw_owner *o, uint64_t slot, struct cw_view *v);
/*
 * Do the bytes of a slot's folio hold its pattern? Safe while compaction
 * moves it: the library copies before it hands the owner the new folio.
 * True for an empty slot or a metadata-only pool.
 */
bool cw_check(struct cw_owner *o, uint64_t slot);
/* The first frame of a slot's folio now; PA_PFN_INVALID when empty. */
pa_pfn_t cw_pfn(struct cw_owner *o, uint64_t slot);
/* Slots handed out (some may be empty). */
uint64_t cw_nr_slots(struct cw_owner *o);

/*
 * Check every live folio where the owner thinks it is: allocated, of its
 * order, with its cookie and (backed pools) its pattern. Returns the folios
 * found wrong; *checked gets the folios looked at. Nothing may run meanwhile.
 */
uint64_t cw_verify(struct cw_owner *o, uint64_t *checked);

/*
 * The pattern, for frames the owner does not hold (unmovable pages,
 * contiguous ranges, CMA): fill `frames` frames from page (contiguous in a
 * backed pool) with the pattern of tag, or check them.
 */
void cw_pattern_fill(const struct cw_owner *o, struct pa_page *page, uint64_t tag, uint64_t frames);
bool cw_pattern_check(const struct cw_owner *o, const struct pa_page *page, uint64_t tag,
                      uint64_t frames);

/* ---------------------------------------------------------------------- */
/* Counters                                                                */
/* ---------------------------------------------------------------------- */

/* The vmstat counters a compaction workload reports, as deltas of two reads. */
struct cw_counters {
	uint64_t scanned;  /* compact_{,daemon_}{migrate,free}_scanned */
	uint64_t migrated; /* pgmigrate_success: frames */
	uint64_t whole;    /* compact_folios_migrated_order_N, N >= 1: large folios moved unsplit */
	uint64_t split;    /* compact_folios_split */
};
void cw_counters_read(struct pa_pool *pool, struct cw_counters *c);
void cw_counters_sub(struct cw_counters *after, const struct cw_counters *before);

/* ---------------------------------------------------------------------- */
/* Latency                                                                 */
/* ---------------------------------------------------------------------- */

/* Mean, 95th percentile (nearest rank) and max of n samples in ns; sorts them. */
struct cw_latency {
	double mean, p95, max;
};
void cw_latency(double *ns, uint64_t n, struct cw_latency *out);

/* ---------------------------------------------------------------------- */
/* Figures                                                                 */
/* ---------------------------------------------------------------------- */

/*
 * Every figure a compaction workload may report: id, JSON key (a dot
 * nests: "latency_ns.mean" is "latency_ns": {"mean": ...}), unit. A
 * workload reports the ones in its mask.
 */
#define CW_METRICS(X)                                                                              \
	X(SUCCESS_PCT, "success_pct", "%")                                                         \
	X(LAT_MEAN, "latency_ns.mean", "ns")                                                       \
	X(LAT_P95, "latency_ns.p95", "ns")                                                         \
	X(LAT_MAX, "latency_ns.max", "ns")                                                         \
	X(PAGES_SCANNED, "pages_scanned", "pages")                                                 \
	X(PAGES_MIGRATED, "pages_migrated", "pages")                                               \
	X(FOLIOS_WHOLE, "folios_migrated_whole", "folios")                                         \
	X(FOLIOS_SPLIT, "folios_split", "folios")                                                  \
	X(ATTEMPTS, "attempts", "allocations")                                                     \
	X(BLOCKS, "blocks", "blocks")                                                              \
	X(FREE_BEFORE, "free_pages_before", "pages")                                               \
	X(UNMOVABLE, "unmovable_pages", "pages")                                                   \
	X(REGIONS_ELIGIBLE, "regions_eligible", "regions")                                         \
	X(REGIONS_OBTAINABLE, "regions_obtainable", "regions")                                     \
	X(REGION_SUCCESS_PCT, "region_success_pct", "%")                                           \
	X(ELAPSED_MS, "elapsed_ms", "ms")

enum cw_metric {
#define X(id, key, unit) CW_##id,
	CW_METRICS(X)
#undef X
	        CW_NR_METRICS
};
#define CW_BIT(id) (1u << CW_##id)
/* What every compaction workload reports. */
#define CW_BASE_MASK                                                                               \
	(CW_BIT(SUCCESS_PCT) | CW_BIT(LAT_MEAN) | CW_BIT(LAT_P95) | CW_BIT(LAT_MAX) |              \
	 CW_BIT(PAGES_SCANNED) | CW_BIT(PAGES_MIGRATED) | CW_BIT(FOLIOS_WHOLE) |                   \
	 CW_BIT(FOLIOS_SPLIT) | CW_BIT(ATTEMPTS) | CW_BIT(BLOCKS))

/* The figures of one mode: samples[metric][run]; data_bad counts corrupt folios over the runs. */
struct cw_result {
	const char *name; /* "default" or "split_folios" */
	char boot[512];
	unsigned runs;
	double *samples[CW_NR_METRICS];
	bool backed;
	uint64_t data_checked, data_bad;
};
int cw_result_init(struct cw_result *r, const char *name, unsigned runs);
void cw_result_free(struct cw_result *r);
/* Fill a run's latency and counter figures. */
void cw_result_common(struct cw_result *r, unsigned run, const struct cw_latency *lat,
                      const struct cw_counters *c);

/*
 * Print one mode (nr 1) or the old mode beside the default (nr 2: res[0]
 * old, res[1] new): head lines come from the caller, already written to o.
 */
void cw_print(struct bench_out *o, const struct cw_result *res, unsigned nr, unsigned mask,
              const char *workload);

/*
 * The boot line of a mode: the user's (or def), with kcompactd=manual
 * unless it names kcompactd, and compaction_split_folios=1 for the old mode.
 */
void cw_boot_line(const struct bench_opts *opt, const char *def, bool split, char *buf, size_t len);

/* Boot a pool from a line; the error printed. 0 or -1. */
int cw_boot(const struct bench_opts *opt, const char *line, struct pa_pool **pool);

/* Set a number knob through the control tree, keeping its old value in *old (may be NULL). */
int cw_ctl_set(struct pa_pool *pool, const char *path, uint64_t value, uint64_t *old);

#endif /* PA_BENCH_COMPACT_COMMON_H */
