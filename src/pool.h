/* SPDX-License-Identifier: MIT */
/*
 * The structures every layer shares: the statistics lists that generate
 * the counters' fields and names, zones and nodes, the boot configuration
 * and the pool; then what needs the whole pool to be known: the zone
 * lock's fast path, debug asserts, and the pool-wide counters.
 * Each layer's own declarations are in its header (docs/design.md).
 */
#ifndef PA_POOL_H
#define PA_POOL_H

#include "page.h"
#include "lock.h"
#include "platform/platform.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------------- */
/* Statistics: one list generates the fields, names and output            */
/* ---------------------------------------------------------------------- */

/* Counters kept per zone under the zone lock; folded over zones on read. */
#define PA_ZONE_STATS(X)                                                                           \
	X(PGALLOC, "pgalloc")                       /* frames allocated, printed per zone type */  \
	X(PGFREE, "pgfree")                         /* frames freed */                             \
	X(ALLOC_SUCCESS, "alloc_success")           /* successful allocations (blocks) */          \
	X(FREE_CALLS, "free_calls")                 /* blocks freed */                             \
	X(FALLBACK_STEAL, "pgalloc_fallback_steal") /* taken from another type's pageblock */      \
	X(FALLBACK_CLAIM, "pgalloc_fallback_claim") /* another type's pageblock claimed */         \
	X(HIGHATOMIC_RESERVE, "highatomic_reserve")                                                \
	X(HIGHATOMIC_UNRESERVE, "highatomic_unreserve")                                            \
	X(COMPACT_MIGRATE_SCANNED, "compact_migrate_scanned")                                      \
	X(COMPACT_FREE_SCANNED, "compact_free_scanned")                                            \
	X(COMPACT_ISOLATED, "compact_isolated")                                                    \
	X(COMPACT_DAEMON_MIGRATE_SCANNED, "compact_daemon_migrate_scanned")                        \
	X(COMPACT_DAEMON_FREE_SCANNED, "compact_daemon_free_scanned")                              \
	X(PGMIGRATE_SUCCESS, "pgmigrate_success")                                                  \
	X(PGMIGRATE_FAIL, "pgmigrate_fail")                                                        \
	X(COMPACT_FOLIOS_SPLIT, "compact_folios_split")                                            \
	X(NUMA_MISS, "numa_miss")   /* allocations here that preferred another node */             \
	X(PCP_REFILL, "pcp_refill") /* frames the per-CPU lists took from the buddy */             \
	X(PCP_SPILL, "pcp_spill")   /* frames they gave back (spills, drains, decay) */            \
	X(SB_FALLBACK_CLEAN, "superblock_fallback_clean") /* a fallback polluted a clean region */ \
	X(SB_STEER_POLLUTED, "superblock_steer_polluted") /* a fallback kept in a polluted one */  \
	X(SB_STEER_MOVABLE,                                                                        \
	  "superblock_steer_movable")      /* a movable split moved off a clean one */             \
	X(ZONE_LOCK, "zone_lock_acquired") /* the zone lock taken (not by reports) */

enum pa_zone_stat {
#define X(id, name) PA_ZS_##id,
	PA_ZONE_STATS(X)
#undef X
	        PA_NR_ZONE_STATS
};

/* Pool-wide counters, updated atomically (rare events). */
#define PA_POOL_STATS(X)                                                                           \
	X(BAD_PAGE, "bad_page")                                                                    \
	X(ALLOC_FAIL, "pgalloc_fail")                                                              \
	X(COMPACT_STALL, "compact_stall")                                                          \
	X(COMPACT_FAIL, "compact_fail")                                                            \
	X(COMPACT_SUCCESS, "compact_success")                                                      \
	X(COMPACT_DAEMON_WAKE, "compact_daemon_wake")                                              \
	X(COMPACT_DEFERRED, "compact_deferred")                                                    \
	X(REPORTED_PAGES, "page_reporting_pages")                                                  \
	X(REPORT_CALLS, "page_reporting_calls")                                                    \
	X(REPORT_REFUSED, "page_reporting_refused")                                                \
	X(MEMORY_OFFLINE, "memory_offline")                                                        \
	X(MEMORY_ONLINE, "memory_online")                                                          \
	X(DEFRAG_COMPACT_SUCCESS, "defrag_compact_success")                                        \
	X(DEFRAG_COMPACT_FAIL, "defrag_compact_fail")                                              \
	X(PGSCRUB, "pgscrub")               /* free frames the scrubber zeroed */                  \
	X(PGZERO_ALLOC, "pgzero_alloc")     /* frames zeroed at allocation (dirty ones) */         \
	X(PGZERO_CLEARED, "pgzero_cleared") /* frames handed to a zeroing request already zero */

enum pa_pool_stat {
#define X(id, name) PA_PS_##id,
	PA_POOL_STATS(X)
#undef X
	        PA_NR_POOL_STATS
};

/* ---------------------------------------------------------------------- */
/* Zones and nodes                                                        */
/* ---------------------------------------------------------------------- */

enum pa_wmark { PA_WMARK_MIN, PA_WMARK_LOW, PA_WMARK_HIGH, PA_NR_WMARK };

struct pa_zone {
	/*
	 * What the per-CPU fast path compares free_pages with: the low watermark
	 * plus what a request may not use, by its gfp type bits (cpu_pcp_slot()):
	 * a movable request (bit 0) may borrow CMA, others not (zone_set_pcp_mark()).
	 * First in the struct: the fast path indexes it with no offset to add.
	 */
	_Atomic uint64_t pcp_mark[4];
	/* What a request may not use, [may borrow CMA]: the atomic reserve, CMA. */
	_Atomic uint64_t unusable[2];
	struct pa_pool *pool;
	unsigned index; /* in pool->zones */
	unsigned node;
	enum pa_zone_type type;
	_Atomic bool populated; /* present_pages > 0; read without the lock by zonelist walks */
	pa_pfn_t start_pfn, end_pfn; /* span [start, end) */
	uint64_t present_pages;      /* frames of the span with memory */
	uint64_t managed_pages;      /* present frames the buddy manages */
	/*
	 * The watermarks in force: wmark_base plus watermark_boost, as Linux's
	 * wmark_pages(), kept summed so that every check reads one number
	 * (zone_apply_boost(); zone lock).
	 */
	uint64_t wmark[PA_NR_WMARK];
	uint64_t wmark_base[PA_NR_WMARK]; /* Linux's _watermark[]: from min_free_kbytes */
	/*
	 * Linux's watermark_boost: raised a pageblock by a fallback that mixes
	 * pageblocks, ended by the end of kswapd's reclaim (zone_boost_watermark()).
	 */
	uint64_t watermark_boost;
	uint64_t boost_at_reclaim; /* the boost when the current reclaim began */
	_Atomic bool boost_wake;   /* Linux's ZONE_BOOSTED_WATERMARK: wake kswapd */
	/* Linux's lowmem_reserve ("protection"): frames kept from requests that could use zone type [t]. */
	uint64_t lowmem_reserve[PA_ZONE_COUNT];
	uint64_t highatomic_max;     /* cap on nr_reserved_highatomic */
	_Atomic bool reclaim_active; /* Linux's ZONE_RECLAIM_ACTIVE: per-CPU lists capped */
	_Atomic bool below_high;     /* Linux 6.7's ZONE_BELOW_HIGH: per-CPU high at high_min */

	struct pa_lock lock; /* guards everything below and the zone's pageblock bits */
	uint32_t *list_head; /* [order * PA_MT_COUNT + mt], PA_NIL when empty */
	uint32_t *list_tail; /* [order * PA_MT_COUNT + mt], meaningful while its head is not */
	/*
	 * The upper halves of the last split (buddy.c), orders [low, high) above
	 * the block at pfn: free and written, but on no list yet and counted only
	 * on read (zone_free_count()). Freeing the block at pfn again merges them
	 * back without ever linking or counting them; any other buddy operation
	 * links and counts them first. pfn PA_NIL: none pending.
	 */
	struct {
		uint32_t pfn;
		uint8_t low, high, mt;
		uint64_t listed; /* which of those orders' lists held blocks before */
	} split;
	uint64_t shuffle_rng; /* page shuffling's random state */
	uint64_t *nr_free_mt; /* [order * PA_MT_COUNT + mt]; read it through zone_free_count() */
	uint64_t nonempty[PA_MT_COUNT]; /* bit o set: the (o, mt) list is not empty */
	_Atomic uint64_t free_pages; /* frames on the free lists; zone_free_add(), zone_nr_free() */
	uint64_t nr_reserved_highatomic;
	uint64_t
	        reserved_pages; /* managed frames held by the pool itself, neither free nor allocated */
	uint64_t cma_pages;     /* frames in CMA pageblocks */
	uint64_t
	        clean_pages; /* free frames on the lists known zero: the sum of their heads' clean */
	struct pa_clean taken_clean; /* what was known zero of the block taken last (buddy.c) */
	bool taken_known;            /* taken_clean is of the block taken last */
	uint64_t stat[PA_NR_ZONE_STATS];
	uint64_t *alloc_order;         /* [order]: successful allocations per order */
	_Atomic uint64_t numa_foreign; /* allocations that preferred this zone and went elsewhere */

	/* [cpu]: each CPU's lists, in one block sized at boot for max_order (pcp_init_zone()). */
	struct pa_pcp **pcp;

	/*
	 * Deferred init and untouched memory (zone.c, deferred.c; zone lock).
	 * [init_pfn, end_pfn) is not initialised yet: no frame of it is in the
	 * buddy. An untouched chunk (2^chunk_order frames, aligned, wholly
	 * present) is free memory whose descriptors were never written: it
	 * counts as 2^(chunk_order - max_order) free MOVABLE blocks of the max
	 * order, and its descriptors are written only when the buddy takes one
	 * of its blocks or a scanner is about to walk it.
	 */
	pa_pfn_t init_pfn;
	uint64_t *untouched;     /* bit per chunk, from chunk_base */
	pa_pfn_t chunk_base;     /* start_pfn rounded down to a chunk */
	pa_pfn_t untouched_end;  /* end_pfn at boot: a span grown by hotplug has no chunk above */
	uint64_t nr_untouched;   /* chunks with their bit set */
	uint64_t untouched_hint; /* no bit is set above this word */

	/* Compaction (zone lock): cached scanner positions and deferral, as Linux's. */
	pa_pfn_t compact_cached_migrate_pfn, compact_cached_free_pfn;
	unsigned compact_considered, compact_defer_shift, compact_order_failed;
	uint64_t *folios_migrated; /* [order]: folios moved whole */

	/* Steering ("superblock.c", zone lock): the regions the zone spans, ranked per fallback. */
	struct sb_rank *sb_rank;
	uint32_t sb_rank_cap;
	unsigned sb_defrag_skip, sb_defrag_shift; /* defrag_mode's deferral after failures */
};

/* free_pages is written under the zone lock and read without it by the per-CPU fast path. */
static inline void zone_free_add(struct pa_zone *z, uint64_t delta)
{
	uint64_t v = atomic_load_explicit(&z->free_pages, memory_order_relaxed);
	atomic_store_explicit(&z->free_pages, v + delta, memory_order_relaxed);
}

/* clean_pages likewise: written under the zone lock, read without it (device.c's hint). */
static inline void zone_clean_add(struct pa_zone *z, uint64_t delta)
{
	uint64_t v = __atomic_load_n(&z->clean_pages, __ATOMIC_RELAXED);
	__atomic_store_n(&z->clean_pages, v + delta, __ATOMIC_RELAXED);
}

static inline uint64_t zone_nr_free(const struct pa_zone *z)
{
	return atomic_load_explicit(&z->free_pages, memory_order_relaxed);
}

/* Free blocks of an order and type: the count, and a pending split's half of that order. */
static inline uint64_t zone_free_count(const struct pa_zone *z, unsigned order, unsigned mt)
{
	bool half = z->split.pfn != PA_NIL && mt == z->split.mt && order >= z->split.low &&
	            order < z->split.high;
	return z->nr_free_mt[order * PA_MT_COUNT + mt] + half;
}

/*
 * Free blocks of an order, all types: summed on read, so that a merge or
 * split level updates one count. Zone lock held.
 */
static inline uint64_t zone_free_blocks(const struct pa_zone *z, unsigned order)
{
	uint64_t n = 0;
	for (unsigned mt = 0; mt < PA_MT_COUNT; mt++)
		n += zone_free_count(z, order, mt);
	return n;
}

struct pa_node {
	unsigned id;
	pa_pfn_t start_pfn, end_pfn;
	unsigned nr_zones;
	struct pa_zone *zones[PA_ZONE_COUNT]; /* by type; NULL when the node has none */
	/* Fallback order: own zones from the highest type down, then other nodes by distance. */
	unsigned nr_zonelist;
	struct pa_zone **zonelist;
	unsigned alloc_flags[2]; /* a request's first alloc flags, [movable] (alloc.c) */
};

/* ---------------------------------------------------------------------- */
/* The boot configuration (boot.c parses it)                              */
/* ---------------------------------------------------------------------- */

enum pa_zone_layout { PA_ZONES_X86_64, PA_ZONES_FLAT };
#define PA_ZONE_DMA_BYTES (16ull << 20) /* ZONE_DMA with zone_dma=1, as x86-64 */

enum pa_backing {
	PA_BACKING_NONE,
	PA_BACKING_ANON,
	PA_BACKING_FILE,
	PA_BACKING_HUGETLB,
	PA_BACKING_PLATFORM, /* the platform's frames hook says where they live */
};
enum pa_bad_page_mode { PA_BAD_PAGE_REPORT, PA_BAD_PAGE_PANIC };

#define PA_ARG_MAX 64 /* a boot value kept as written, for messages */

struct pa_range {
	uint64_t start, end; /* bytes, [start, end) */
	char arg[PA_ARG_MAX];
	bool reserved; /* in holes[]: memreserve=, memory present but never the buddy's */
};

struct pa_cma_request {
	uint64_t size;
	uint64_t start; /* UINT64_MAX: anywhere */
	char arg[PA_ARG_MAX];
};

struct pa_boot_config {
	uint64_t mem;
	char mem_arg[PA_ARG_MAX], movablecore_arg[PA_ARG_MAX], pcp_orders_arg[PA_ARG_MAX];
	unsigned numa;
	unsigned nr_holes;
	struct pa_range holes[PA_MAX_HOLES];
	uint64_t movablecore_bytes;
	unsigned movablecore_pct; /* used when movablecore_bytes is 0 */
	unsigned page_shift;
	unsigned max_order;
	unsigned pageblock_order_ceil;
	bool thp;
	uint64_t pcp_orders; /* bit o: order o on the per-CPU lists */
	bool pcp_orders_set; /* given on the command line */
	unsigned pcp_rules;  /* enum pcp_rules */
	unsigned nr_cpus;
	unsigned nr_cma;
	struct pa_cma_request cma[PA_MAX_CMA];
	enum pa_backing backing;
	char backing_path[256];
	bool backing_keep; /* backing_keep=1: a file:PATH created at boot outlives the pool */
	int page_reporting_order; /* -1: the pageblock order */
	int64_t min_free_kbytes;  /* -1: Linux's formula */
	unsigned watermark_scale_factor;
	unsigned watermark_boost_factor;
	bool compaction_split_folios;
	bool kcompactd_manual; /* kcompactd=manual: no threads; pa_kcompactd_run() drives them */
	unsigned compaction_proactiveness;
	bool shuffle, init_on_free, deferred_init;
	bool deferred_lazy; /* deferred_init=lazy: no init threads (deferred.c) */
	bool pcp_rseq;      /* owners take their list lock by restartable sequence where they can */
	bool page_reporting_manual;       /* page_reporting=manual: no worker thread */
	unsigned page_reporting_delay_ms; /* the worker's delay after free memory builds up */
	int page_reporting_max_order;     /* -1: max_order; the largest range a device takes */
	uint64_t memory_block_size;       /* hotplug unit, bytes: a power of two of sections */
	char memory_block_arg[PA_ARG_MAX];
	unsigned nr_offline; /* offline=START-END: present but offline at boot */
	struct pa_range offline[PA_MAX_HOLES];
	bool zone_dma;                   /* ZONE_DMA below 16 MiB */
	enum pa_zone_layout zone_layout; /* zones=x86_64 or flat */
	unsigned debug;
	enum pa_bad_page_mode bad_page;
	unsigned
	        superblock_order; /* 0: off; regions of 2^superblock_order frames ("superblock.c") */
	bool defrag_mode;         /* as booted; pool->defrag_mode is the value in force */
	unsigned linux_version;   /* linux=: LINUX_V(major, minor) whose rules apply */
	bool linux_defrag_mode;   /* linux_defrag_mode=1: Linux's vm.defrag_mode (6.15) */
	bool pcp_rules_set;       /* pcp_rules= given: it overrides the version's */
	unsigned fallback_order;  /* largest free block Linux's fallback claims whole */

	/* Derived. */
	int huge_order; /* -1 without THP */
	unsigned pageblock_order;
	unsigned section_shift; /* frames per section, log2 */
	unsigned chunk_order;   /* init and untouched unit: max(section, max-order block), log2 */
	unsigned block_shift;   /* frames per memory block, log2 */
};

/* ---------------------------------------------------------------------- */
/* The pool                                                               */
/* ---------------------------------------------------------------------- */

struct pa_pool {
	struct pa_boot_config cfg;
	struct pa_platform plat;
	bool cpu_default; /* no cpu_id hook given: read the CPU id inline */
	/* The CPU id word from the thread pointer (platform_cpu_offset()): one load finds the CPU. */
	ptrdiff_t cpu_off;
	/* Owners take their list lock by restartable sequence (pcp_trylock()); remote takers fence. */
	bool pcp_rseq;
	ptrdiff_t rseq_cs_off; /* the rseq area's rseq_cs word from the thread pointer */
	/* Frees of orders below this take pa_free_pages()'s inline path: pageblock_order, 0 with init_on_free. */
	unsigned free_fast_below;

	/* Frame map ("memmap.c"): one array for the whole span, present sections backed. */
	struct pa_page *map;
	size_t map_bytes;
	pa_pfn_t nr_frames; /* span of pfns */
	uint64_t nr_sections;
	uint8_t *section_present; /* [section]: 1 when backed */

	/* Pageblocks ("pageblock.c"): one byte of bits per pageblock. */
	uint8_t *pb_bits;
	uint64_t nr_pageblocks;

	/* Backing memory: frame bytes at base + (pfn << page_shift); NULL if none. */
	uint8_t *base;
	size_t base_bytes;
	int backing_fd;
	bool backing_created; /* backing=file: boot created the file (removed at shutdown) */

	unsigned nr_nodes;
	struct pa_node nodes[PA_MAX_NODES];
	unsigned nr_zones;
	struct pa_zone *zones; /* ordered by start pfn */
	uint8_t *pb_zone;      /* [pageblock]: zone index, 0xff outside every zone */
	/*
	 * [zone index]: the zone's table of lists (zone->pcp), NULL at 0xff
	 * (outside every zone): the free path finds its lists from pb_zone in
	 * three loads, with no table of 8 bytes per pageblock to write at boot
	 * (16 MiB for 4 TiB).
	 */
	struct pa_pcp **zone_pcp[256];

	_Atomic uint64_t pool_stat[PA_NR_POOL_STATS];
	_Atomic uint64_t *alloc_fail_order; /* [order] */
	_Atomic unsigned watermark_scale_factor;
	_Atomic unsigned watermark_boost_factor; /* Linux's vm.watermark_boost_factor */
	/*
	 * Reclaim runs outside the pool (an embedder's kswapd, a replayed
	 * trace's): a boost lasts until zone/<N>/reclaim_active ends its pass.
	 * Otherwise the pool is its own kswapd, with nothing to reclaim.
	 */
	_Atomic bool kswapd_external;
	/*
	 * The embedder runs Linux's vmstat worker (pa_pcp_decay() once a second
	 * a CPU): the lists' high is not decayed at refills and spills.
	 */
	_Atomic bool pcp_decay_external;
	_Atomic int64_t
	        min_free_kbytes;  /* the value in force: the boot key's, or Linux's formula */
	struct pa_mutex ctl_lock; /* serializes control writes (a knob and what follows from it) */

	_Atomic uint64_t pcp_orders; /* bit o: order o goes through the per-CPU lists */
	/* pcp_orders folded with the fast paths' order limits, so that each gate is one
	 * bit test (pcp_gates_update()): alloc, orders below the pageblock order; free,
	 * orders below free_fast_below. */
	_Atomic uint64_t pcp_alloc_gate, pcp_free_gate;
	/* [cpu_pcp_slot()]: the lists a CPU's fast path allocates from, in its zone */
	struct pa_pcp **cpu_pcp;
	_Atomic unsigned pcp_high_fraction; /* 0: high auto-tuned; N: managed / N / CPUs */
	_Atomic unsigned pcp_rules;         /* enum pcp_rules: whose high and batch rules */
	/* A free of a pageblock or more skips lists that hold one (pcp_free_direct()); 0: Linux's. */
	_Atomic bool pcp_huge_direct;
	/* A streaming CPU's unmovable and reclaimable refills go past Linux's cap; 0: Linux's. */
	_Atomic bool pcp_stream_refill;
	struct pa_mutex pcp_order_mutex; /* serializes switching orders */

	/* Movable owners ("migrate.c"): id -> ops; registered once, read without a lock. */
	struct pa_owner_ops owners[256];
	_Atomic unsigned nr_owners;
	struct pa_mutex owner_lock;
	_Atomic unsigned compact_fail_pct; /* fault injection: migrations answered AGAIN/BUSY */
	_Atomic uint64_t fault_rng;        /* fault injection's random state (random_seed hook) */
	_Atomic unsigned compaction_proactiveness;
	struct pa_kcompactd *kcompactd; /* [node] */

	struct pa_deferred *deferred; /* background init ("deferred.c"); NULL when done at boot */
	unsigned max_order_boot;      /* max_order as booted: what arrays by order are sized for */
	/* Memory hotplug ("hotplug.c"): a state per memory block. */
	uint8_t *block_offline; /* [block]: 1 while offline */
	uint64_t nr_blocks;
	struct pa_mutex hotplug_lock; /* one offline or online at a time */
	struct pa_scrubber *scrubber; /* the background scrubber ("scrub.c"); NULL: none runs */
	/* Free page reporting ("reporting.c"); frees of this order or above notify it. */
	struct pa_reporting *reporting;
	_Atomic unsigned reporting_notify_order; /* UINT32_MAX while no device is registered */
	_Atomic bool min_free_kbytes_user;       /* written through ctl: kept when init ends */
	/* deferred_init=lazy: the last frame is set up; the next unlock's work ends init */
	_Atomic bool deferred_finish;
	/* An allocation that runs short sets deferred frames up (ctl deferred_on_demand) */
	_Atomic bool deferred_on_demand;
	_Atomic bool defrag_mode; /* compact within polluted regions before polluting a clean one */
	unsigned linux_rules;     /* bit per enum linux_rule in force ("linux.c"); set at boot */
	_Atomic bool direct_compaction;   /* 0: the slow path neither compacts nor drains */
	_Atomic bool direct_drain;        /* 0: it does not drain the CPUs' lists either */
	_Atomic unsigned direct_priority; /* its compaction's most effort: 0 sync .. 2 async */
	_Atomic bool direct_costly_sync;  /* 1: a costly order too goes on to sync */

	/* Superblocks ("superblock.c"): NULL when superblock_order=0. */
	struct pa_superblock *sb; /* [pfn >> superblock_order] */
	uint64_t nr_superblocks;
	_Atomic uint32_t *pb_free; /* [pageblock]: frames free in the buddy */

	/* CMA areas ("cma.c"), fixed at boot. */
	unsigned nr_cma;
	struct pa_cma_area *cma;
};

/* ---------------------------------------------------------------------- */
/* What needs the pool (platform/platform.c, stats/stats.c, max_order.c)  */
/* ---------------------------------------------------------------------- */

/* The machine's memory in bytes, from the platform hook. */
static inline uint64_t platform_machine_bytes(const struct pa_pool *pool)
{
	return pool->plat.machine_bytes(pool->plat.ctx);
}
void platform_report(const struct pa_pool *pool, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/*
 * Take a lock; contention is timed and counted only when the trylock fails.
 * A wait spins at least min_spins tries, however sleeps have cut its budget.
 */
static inline void pa_lock_min_spins(struct pa_lock *lock, enum pa_lock_site site,
                                     unsigned min_spins)
{
	uint32_t free = 0;
	if (unlikely(!atomic_compare_exchange_strong_explicit(
	            &lock->v, &free, 1, memory_order_acquire, memory_order_relaxed)))
		platform_lock_slow(lock, site, min_spins);
	lock->acquired += site != SITE_ADMIN;
	if (unlikely(lock->pool->cfg.debug))
		atomic_store_explicit(&lock->owner, platform_self(), memory_order_relaxed);
}

static inline void pa_lock(struct pa_lock *lock, enum pa_lock_site site)
{
	pa_lock_min_spins(lock, site, 0);
}

/*
 * Unlock; true when the unlock took its slow path: a waiter was woken, or
 * the holder called pa_lock_defer() to leave work for after the unlock,
 * which then costs the common path nothing.
 */
static inline bool pa_unlock_slow(struct pa_lock *lock)
{
	if (unlikely(lock->pool->cfg.debug))
		atomic_store_explicit(&lock->owner, 0, memory_order_relaxed);
	if (likely(atomic_exchange_explicit(&lock->v, 0, memory_order_release) != 2))
		return false;
	platform_lock_wake(lock); /* none may wait: a wake-up too many is harmless */
	return true;
}

static inline void pa_unlock(struct pa_lock *lock)
{
	pa_unlock_slow(lock);
}

/* Send the coming unlock down its slow path (pa_unlock_slow()). Lock held. */
static inline void pa_lock_defer(struct pa_lock *lock)
{
	atomic_store_explicit(&lock->v, 2, memory_order_relaxed);
}

/* Lock precondition, checked when debug >= 1. */
#define pa_lock_held(lock)                                                                         \
	pa_assert((lock)->pool,                                                                    \
	          atomic_load_explicit(&(lock)->owner, memory_order_relaxed) == platform_self())

/* Tier 2 and 3 checks: debug asserts (debug >= 1) and expensive validation (debug >= 2). */
void pa_assert_fail(const char *expr, const char *file, int line, const char *func)
        __attribute__((noreturn));
#define pa_assert(pool, cond)                                                                      \
	do {                                                                                       \
		if (unlikely((pool)->cfg.debug >= 1) && !(cond))                                   \
			pa_assert_fail(#cond, __FILE__, __LINE__, __func__);                       \
	} while (0)
#define pa_debug_expensive(pool) unlikely((pool)->cfg.debug >= 2)

/*
 * cfg.max_order changes only with every zone lock held (max_order_set), so
 * under a zone lock it reads plainly and stays put. Without one, read it
 * once per operation with this and expect it to move under you: arrays by
 * order are sized by max_order_boot, an allocation above the current order
 * fails under the zone lock, and a block above it is split when freed.
 */
static inline unsigned pool_max_order(const struct pa_pool *pool)
{
	return __atomic_load_n(&pool->cfg.max_order, __ATOMIC_RELAXED);
}

/* pool_cpu() for an id out of range (platform/platform.c): ask again where it is unknown, then wrap it. */
unsigned pool_cpu_slow(const struct pa_pool *pool, unsigned cpu);

/*
 * The CPU the caller runs on, without a call: one load off the thread
 * pointer (the rseq cpu_id word, or the thread's cached id). Out of range
 * (0..nr_cpus-1) where pool_cpu_slow() must decide: a platform hook, an id
 * not asked yet, a thread rseq did not register (a negative id, as unsigned).
 */
static inline unsigned pool_cpu_nocall(const struct pa_pool *pool)
{
	return platform_cpu_word(pool->cpu_off);
}

/* The CPU the caller runs on, 0..nr_cpus-1. */
static inline unsigned pool_cpu(const struct pa_pool *pool)
{
	unsigned cpu = pool_cpu_nocall(pool);
	return likely(cpu < pool->cfg.nr_cpus) ? cpu : pool_cpu_slow(pool, cpu);
}

/* A pool-wide counter (PA_POOL_STATS); their names are stats/stats.c's. */
static inline void pool_stat_inc(struct pa_pool *pool, enum pa_pool_stat s)
{
	atomic_fetch_add_explicit(&pool->pool_stat[s], 1, memory_order_relaxed);
}

#endif /* PA_POOL_H */
