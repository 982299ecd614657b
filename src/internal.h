/* SPDX-License-Identifier: MIT */
/*
 * Internal declarations shared between the layers, grouped by the file that
 * defines them. Calls go downward (alloc -> pageblock -> buddy -> zone ->
 * memmap -> platform); nothing here is part of the public API.
 */
#ifndef PA_INTERNAL_H
#define PA_INTERNAL_H

#include "pagealloc.h"
#include "platform.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#define PA_NIL                    UINT32_MAX   /* end of a free list (pfn links are 32-bit) */
#define PA_MAX_ORDER_LIMIT        40           /* largest max_order the boot line accepts */
#define PA_MAX_FRAMES             (1ull << 32) /* pfns must fit the 32-bit list links */
#define PA_MAX_NODES              64
#define PA_MAX_CPUS               1024
#define PA_MAX_HOLES              32
#define PA_MAX_CMA                8
#define PA_SECTION_BYTES_SHIFT    27 /* 128 MiB memory sections, as x86-64 */
#define PA_NR_PCP_TYPES           3  /* UNMOVABLE, MOVABLE, RECLAIMABLE */
#define PA_COSTLY_ORDER           3  /* PAGE_ALLOC_COSTLY_ORDER */
#define PA_SUPERBLOCK_ORDER_LIMIT 32 /* a region of 2^32 frames covers the largest pool */

/* ---------------------------------------------------------------------- */
/* The frame descriptor                                                    */
/* ---------------------------------------------------------------------- */

/*
 * What a descriptor says. Only the first frame of a block (its head) carries
 * the block's state; every other frame of a block is PS_BODY, so that blocks
 * of any order are allocated and freed without touching their bodies. Frames
 * of holes inside a present section are PS_HOLE. Descriptors of absent
 * sections read as zero (PS_BODY) and are never written.
 */
enum pa_page_state {
	PS_BODY = 0,  /* inside a block headed elsewhere (zero: untouched memory) */
	PS_FREE,      /* head of a free block on a free list */
	PS_ALLOC,     /* head of an allocated block */
	PS_HOLE,      /* no memory behind this frame */
	PS_FREEING,   /* head of a block being freed outside the lock (init_on_free) */
	PS_PCP,       /* head of a free block on a per-CPU list */
	PS_ISOLATED,  /* head of an allocated folio that compaction is moving */
	PS_CAPTURED,  /* head of a free block that compaction holds as a destination */
	PS_MIGRATING, /* head of a destination being filled: counted as captured until done */
};

enum pa_page_flags {
	PF_COMP = 1u << 0,         /* allocated as a folio (PA_GFP_COMP) */
	PF_REPORTED = 1u << 1,     /* free block already reported (free page reporting) */
	PF_FREE_PENDING = 1u << 2, /* freed by its owner while isolated: compaction frees it */
	PF_CONTIG = 1u << 3, /* a block of a contiguous range: pa_free_contig_range() frees it */
	PF_CMA = 1u << 4,    /* taken by pa_cma_alloc(): only pa_cma_release() frees it */
	/*
	 * On a free head: linked from an untouched chunk and never relinked
	 * since, so no descriptor inside the block was ever written (all still
	 * read as zero, PS_BODY). Set only by buddy_materialise(); any relink
	 * (mark_free) or allocation writes the flags anew and drops it.
	 */
	PF_UNTOUCHED = 1u << 5,
	/*
	 * On a free head in the buddy lists: its `clean` fields say which frames
	 * are known zero (struct pa_clean; buddy.c). Without it nothing is known: a head
	 * written by any other path (mark_free, a split's halves, the per-CPU
	 * lists) drops it, so stale knowledge is never trusted.
	 */
	PF_CLEARED = 1u << 6,
};

struct pa_page {
	union {
		struct {
			uint8_t state; /* enum pa_page_state */
			uint8_t order; /* head: order of the block */
			uint8_t mt; /* free: the list it is on; allocated: the type it was allocated as */
			uint8_t flags; /* enum pa_page_flags */
			union {
				struct {
					uint8_t owner; /* allocated: registered owner that can move it (0: none) */
					uint8_t pins; /* allocated: pa_pin() count; a pinned folio is never moved */
					uint16_t spare;
				};
				/*
				 * free with PF_CLEARED: the head's, frames known zero from the
				 * block's start (pa_clean.pre); the next frame's (a body frame
				 * of a block of order >= 1), frames known zero at its end (suf)
				 */
				uint32_t clean;
			};
		};
		uint32_t head; /* state, order, mt and flags, for one store: page_head() */
		uint64_t
		        word; /* all of them, for one compare and swap on the free path (pcp_claim) */
	};
	union {
		struct { /* PS_FREE: links of the free list, as pfns */
			uint32_t next;
			uint32_t prev;
		} lru;
		uint64_t private; /* PS_ALLOC: the owner's cookie */
	};
};
_Static_assert(sizeof(struct pa_page) <= 16, "a frame descriptor must stay within 16 bytes");
_Static_assert((sizeof(struct pa_page) & (sizeof(struct pa_page) - 1)) == 0,
               "page_to_pfn_checked() rotates: a descriptor's size must be a power of two");

/* Where byte i of a descriptor's first eight (state 0, order 1, ... spare 6-7) sits in word. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define PAGE_WORD_BYTE(i, v) ((uint64_t)(v) << (8 * (i)))
#else
#define PAGE_WORD_BYTE(i, v) ((uint64_t)(v) << (8 * (7 - (i))))
#endif

/*
 * The state byte is written under a zone lock or a per-CPU lock, and read
 * under the other (a buddy looking at its neighbour, a scanner). It is
 * stored with release and loaded with acquire order, so a reader that sees
 * a state also sees the fields written before it; on x86 both are plain
 * moves. The owner, pins and flags bytes, which scanners peek at without
 * taking the block, are relaxed atomics for the same reason.
 */
static inline unsigned page_state(const struct pa_page *p)
{
	return __atomic_load_n(&p->state, __ATOMIC_ACQUIRE);
}

static inline void set_page_state(struct pa_page *p, unsigned state)
{
	__atomic_store_n(&p->state, (uint8_t)state, __ATOMIC_RELEASE);
}

/* The buddy's own loops run under the zone lock, which orders what they read: relaxed suffices. */
static inline unsigned page_state_relaxed(const struct pa_page *p)
{
	return __atomic_load_n(&p->state, __ATOMIC_RELAXED);
}

#define PAGE_BYTE_ACCESSORS(field)                                                                 \
	static inline unsigned page_##field(const struct pa_page *p)                               \
	{                                                                                          \
		return __atomic_load_n(&p->field, __ATOMIC_RELAXED);                               \
	}                                                                                          \
	static inline void set_page_##field(struct pa_page *p, unsigned v)                         \
	{                                                                                          \
		__atomic_store_n(&p->field, (uint8_t)v, __ATOMIC_RELAXED);                         \
	}
PAGE_BYTE_ACCESSORS(order)
PAGE_BYTE_ACCESSORS(owner)
PAGE_BYTE_ACCESSORS(pins)
PAGE_BYTE_ACCESSORS(flags)
#undef PAGE_BYTE_ACCESSORS

/* The type an allocated block was taken as: set under a list lock, read under the zone lock. */
static inline unsigned page_mt(const struct pa_page *p)
{
	return __atomic_load_n(&p->mt, __ATOMIC_RELAXED);
}

static inline void set_page_mt(struct pa_page *p, unsigned mt)
{
	__atomic_store_n(&p->mt, (uint8_t)mt, __ATOMIC_RELAXED);
}

/*
 * Make a block taken off a free list an allocated one; its order is already
 * right. The state goes last, with release order: compaction reads the
 * other fields after it takes the state with an acquiring compare-and-swap.
 */
static inline void page_prep_fields(struct pa_page *p, unsigned mt, uint32_t gfp)
{
	set_page_mt(p, mt);
	/* A block taken whole or split from a reported one stays marked: pa_page_reported() */
	set_page_flags(p, ((gfp & PA_GFP_COMP) ? PF_COMP : 0) | (page_flags(p) & PF_REPORTED));
	set_page_owner(p, 0);
	set_page_pins(p, 0);
	p->private = 0;
	set_page_state(p, PS_ALLOC);
}

/*
 * What is known zero of a free block (cleared memory, buddy.c): its first
 * `pre` and its last `suf` frames. Two regions at the two ends, so that a
 * merge keeps what each buddy knew at its outer end and a split hands every
 * part its share, each at a cost that does not depend on the block's size.
 * Normalised (clean_norm()): a block known zero whole has pre = suf = size.
 */
struct pa_clean {
	uint64_t pre, suf;
};
#define PA_CLEAN_NONE ((struct pa_clean){ 0, 0 })

static inline struct pa_clean clean_norm(struct pa_clean c, uint64_t size)
{
	if (c.pre >= size || c.suf >= size || c.pre + c.suf >= size)
		return (struct pa_clean){ size, size };
	return c;
}

static inline struct pa_clean clean_full(uint64_t size)
{
	return (struct pa_clean){ size, size };
}

static inline bool clean_any(struct pa_clean c)
{
	return (c.pre | c.suf) != 0;
}

/* Frames known zero of a block of size frames. */
static inline uint64_t clean_count(struct pa_clean c, uint64_t size)
{
	return c.pre + c.suf >= size ? size : c.pre + c.suf;
}

/* What a block of size frames knows of its part [off, off + n). */
static inline struct pa_clean clean_slice(struct pa_clean c, uint64_t size, uint64_t off,
                                          uint64_t n)
{
	struct pa_clean r = PA_CLEAN_NONE;
	uint64_t tail = size - c.suf; /* where the known-zero end begins */
	if (c.pre > off)
		r.pre = c.pre - off < n ? c.pre - off : n;
	if (c.suf && tail < off + n)
		r.suf = off + n - (tail > off ? tail : off);
	return clean_norm(r, n);
}

/* Two buddies of half frames each, merged: each end keeps its side's, grown over a whole half. */
static inline struct pa_clean clean_merge(struct pa_clean lo, struct pa_clean hi, uint64_t half)
{
	struct pa_clean r = { lo.pre >= half ? half + hi.pre : lo.pre,
		              hi.suf >= half ? half + lo.suf : hi.suf };
	return clean_norm(r, 2 * half);
}

/* The state, order, mt and flags bytes of a descriptor as one word, in the machine's byte order. */
static inline uint32_t page_head(unsigned state, unsigned order, unsigned mt, unsigned flags)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return state << 24 | (order & 0xff) << 16 | (mt & 0xff) << 8 | (flags & 0xff);
#else
	return (state & 0xff) | (order & 0xff) << 8 | (mt & 0xff) << 16 | (flags & 0xff) << 24;
#endif
}

/* The same for a block whose order changes (zone lock held). */
static inline void page_prep_alloc(struct pa_page *p, unsigned order, unsigned mt, uint32_t gfp)
{
	set_page_order(p, order);
	page_prep_fields(p, mt, gfp);
}

/* ---------------------------------------------------------------------- */
/* Locks with contention statistics ("platform.c")                         */
/* ---------------------------------------------------------------------- */

/* Call sites whose contention is counted separately, as perf lock shows callers. */
#define PA_LOCK_SITES(X)                                                                           \
	X(SITE_ALLOC, "pa_alloc_pages")                                                            \
	X(SITE_ALLOC_BULK, "pa_alloc_pages_bulk")                                                  \
	X(SITE_FREE, "pa_free_pages")                                                              \
	X(SITE_PCP_REFILL, "pcp_refill")                                                           \
	X(SITE_PCP_SPILL, "pcp_spill")                                                             \
	X(SITE_PCP_ALLOC, "pcp_alloc")                                                             \
	X(SITE_PCP_FREE, "pcp_free")                                                               \
	X(SITE_DRAIN, "pcp_drain")                                                                 \
	X(SITE_ADMIN, "admin")

enum pa_lock_site {
#define X(id, name) id,
	PA_LOCK_SITES(X)
#undef X
	        PA_NR_LOCK_SITES
};

struct pa_lock_stat {
	uint64_t contended;
	uint64_t total_wait_ns;
	uint64_t max_wait_ns;
};

/*
 * The zone lock: a word taken with one compare-and-swap and given back with
 * one exchange, as Linux's zone lock is a spinlock. A waiter spins a while,
 * then sleeps on the word (v = 2 says someone may sleep), so
 * that a holder preempted on a busy machine costs no CPU. How long it spins
 * adapts to how long waits that ended spinning took (platform_lock_slow).
 */
struct pa_lock {
	_Atomic uint32_t v;     /* 0 free, 1 held, 2 held and a waiter may sleep */
	_Atomic uint32_t spins; /* the spin budget: a running average, set by holders */
	const char *name;
	struct pa_pool *pool;                       /* for the clock */
	_Atomic(unsigned long) owner;               /* holder's thread id when debug >= 1, else 0 */
	struct pa_lock_stat site[PA_NR_LOCK_SITES]; /* written only by the holder */
	uint64_t acquired; /* times taken, reports' excepted; written only by the holder */
};

/*
 * The per-CPU list lock: a test-and-set spin lock, two instructions when
 * free. The owning CPU only ever trylocks it and takes the zone path when it
 * is busy; drains and validation wait for it. A failed trylock is counted as
 * a contended acquisition with no wait.
 */
struct pa_spin {
	/* 0: free; 1: an owner's (pcp_trylock()); else a remote taker's token (platform.c) */
	_Atomic uint32_t v;
	uint32_t cpu; /* the CPU whose lists it guards: the one a remote taker fences */
	_Atomic uint64_t busy[PA_NR_LOCK_SITES];    /* trylocks that found it taken */
	struct pa_lock_stat site[PA_NR_LOCK_SITES]; /* written only by the holder */
};

/*
 * The plain read first is worth its two instructions where the lock may be
 * held: without it the exchange, early in a short path, waits on more of
 * the stores before it (an owner's path with an exchange took 25% more CPU
 * time; pcp_trylock() now takes a compare-and-swap).
 */
static inline bool pa_spin_trylock(struct pa_spin *s)
{
	return atomic_load_explicit(&s->v, memory_order_relaxed) == 0 &&
	       atomic_exchange_explicit(&s->v, 1, memory_order_acquire) == 0;
}

static inline void pa_spin_unlock(struct pa_spin *s)
{
	atomic_store_explicit(&s->v, 0, memory_order_release);
}

/* Take the lock, waiting if need be; the wait is timed and counted at site. */
void platform_spin_lock(struct pa_pool *pool, struct pa_spin *s, enum pa_lock_site site);
/* (Whether owners take it by restartable sequence: PA_RSEQ_LOCK, platform.h.) */

/* ---------------------------------------------------------------------- */
/* Statistics ("stats.c"): one list generates the fields, names and output */
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
	X(NUMA_MISS, "numa_miss") /* allocations here that preferred another node */               \
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
/* Zones and nodes                                                         */
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

	struct pa_lock lock;            /* guards everything below and the zone's pageblock bits */
	uint32_t *list_head;            /* [order * PA_MT_COUNT + mt], PA_NIL when empty */
	uint32_t max_tail[PA_MT_COUNT]; /* last block of each max-order list (shuffle's tail) */
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
/* The boot configuration ("boot.c")                                       */
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
	bool pcp_rseq; /* owners take their list lock by restartable sequence where they can */
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

/* Parse and validate a command line into cfg; 0 or -EINVAL with a message. */
int boot_parse(const char *cmdline, unsigned online_cpus, struct pa_boot_config *cfg, char *err,
               size_t errlen);

/* ---------------------------------------------------------------------- */
/* The pool                                                                */
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
	struct pa_mutex pcp_order_mutex;    /* serializes switching orders */

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
	_Atomic bool defrag_mode; /* compact within polluted regions before polluting a clean one */
	unsigned linux_rules;     /* bit per enum linux_rule in force ("linux.c"); set at boot */
	_Atomic bool direct_compaction; /* 0: the slow path neither compacts nor drains */

	/* Superblocks ("superblock.c"): NULL when superblock_order=0. */
	struct pa_superblock *sb; /* [pfn >> superblock_order] */
	uint64_t nr_superblocks;
	_Atomic uint32_t *pb_free; /* [pageblock]: frames free in the buddy */

	/* CMA areas ("cma.c"), fixed at boot. */
	unsigned nr_cma;
	struct pa_cma_area *cma;
};

/* ---------------------------------------------------------------------- */
/* "platform.c"                                                            */
/* ---------------------------------------------------------------------- */

/* The machine's memory in bytes, from the platform hook. */
static inline uint64_t platform_machine_bytes(const struct pa_pool *pool)
{
	return pool->plat.machine_bytes(pool->plat.ctx);
}
void platform_lock_init(struct pa_lock *lock, struct pa_pool *pool, const char *name);
void platform_lock_destroy(struct pa_lock *lock);
void platform_lock_slow(struct pa_lock *lock, enum pa_lock_site site, unsigned min_spins);
void platform_lock_wake(struct pa_lock *lock);
void platform_report(const struct pa_pool *pool, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/*
 * Spin tries a per-CPU refill or spill of a streaming CPU makes before it
 * may sleep (pcp.c): it most likely waits for the like, held 3-6 us.
 */
#define PA_LOCK_SPINS_BATCH 256

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

/* ---------------------------------------------------------------------- */
/* "memmap.c"                                                              */
/* ---------------------------------------------------------------------- */

/* The metadata bytes boot and deferred init make resident (boot refuses more than the machine has). */
uint64_t memmap_metadata_bytes(const struct pa_boot_config *c);
int memmap_init(struct pa_pool *pool, char *err, size_t errlen);
void memmap_destroy(struct pa_pool *pool);
bool memmap_frame_present(const struct pa_pool *pool, pa_pfn_t pfn); /* memory behind it */
/*
 * The head of the block (free, allocated, or held) that covers pfn, found
 * by looking at the aligned candidates from order 0 up; PA_NIL for a hole.
 * Under the lock of whatever state the caller relies on.
 */
pa_pfn_t memmap_block_head(const struct pa_pool *pool, pa_pfn_t pfn);

static inline struct pa_page *pfn_page(const struct pa_pool *pool, pa_pfn_t pfn)
{
	return &pool->map[pfn];
}

static inline pa_pfn_t page_pfn(const struct pa_pool *pool, const struct pa_page *page)
{
	return (pa_pfn_t)(page - pool->map);
}

/*
 * How far a scanner steps from a frame in state st: the whole block from a
 * head, one frame from a hole or a body frame (inside a block begun before).
 */
static inline uint64_t block_step(const struct pa_page *p, unsigned st)
{
	return (st == PS_HOLE || st == PS_BODY) ?
	               1 :
	               1ull << __atomic_load_n(&p->order, __ATOMIC_RELAXED);
}

/* The pfn of a descriptor pointer from outside; PA_PFN_INVALID if it is not one of ours. */
static inline pa_pfn_t page_to_pfn_checked(const struct pa_pool *pool, const struct pa_page *page)
{
	uintptr_t off = (uintptr_t)page - (uintptr_t)pool->map; /* wraps above for pointers below */
	/* Rotated, a pointer inside a descriptor (low bits set) is huge: one compare checks both. */
	unsigned shift = __builtin_ctz(sizeof *page);
	uint64_t idx = off >> shift | (uint64_t)off << (64 - shift);
	if (unlikely(idx >= pool->nr_frames))
		return PA_PFN_INVALID;
	return idx;
}

static inline bool memmap_section_present(const struct pa_pool *pool, pa_pfn_t pfn)
{
	return pool->section_present[pfn >> pool->cfg.section_shift] != 0;
}

/* ---------------------------------------------------------------------- */
/* "zone.c"                                                                */
/* ---------------------------------------------------------------------- */

int zone_init_all(struct pa_pool *pool, char *err, size_t errlen);
void zone_update_cpu_zones(struct pa_pool *pool);
void zone_destroy_all(struct pa_pool *pool);
/* Initialise the next chunk of a zone's deferred memory; false when none is left. Zone lock held. */
bool zone_init_next_chunk(struct pa_zone *zone);
/* Is pfn (in the zone) in memory not initialised yet, or in an untouched chunk? Zone lock held. */
static inline bool zone_pfn_pending(const struct pa_zone *z, pa_pfn_t pfn)
{
	if (pfn >= z->init_pfn)
		return true;
	if (likely(!z->nr_untouched) || pfn < z->chunk_base || pfn >= z->untouched_end)
		return false; /* outside: the span grew by hotplug, where nothing is untouched */
	uint64_t i = (pfn - z->chunk_base) >> z->pool->cfg.chunk_order;
	return (z->untouched[i / 64] >> (i % 64)) & 1;
}
/*
 * Make [start, end) of the zone walkable by scanners: initialise deferred
 * memory up to end and write the descriptors of the untouched chunks it
 * overlaps. Zone lock held.
 */
void zone_prepare_range(struct pa_zone *zone, pa_pfn_t start, pa_pfn_t end);
/* Take the highest untouched chunk (clearing its bit); PA_NIL if none. Zone lock held. */
pa_pfn_t zone_untouched_pop(struct pa_zone *zone);
/* Default min_free_kbytes and watermarks again, once deferred init has grown managed pages. */
void zone_init_done(struct pa_pool *pool);

/* "max_order.c": max_order changed at run time (ctl max_order), up to max_order_boot */
int max_order_set(struct pa_pool *pool, unsigned max_order);
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
/* Has deferred init finished (or never run)? */
bool deferred_init_done(struct pa_pool *pool);

/* "hotplug.c": memory blocks offline and online */
int hotplug_init(struct pa_pool *pool, char *err, size_t errlen);
void hotplug_destroy(struct pa_pool *pool);
/* sysfs's valid_zones of memory block `block`, as text into buf (snprintf's length). */
int hotplug_valid_zones(struct pa_pool *pool, uint64_t block, char *buf, size_t len);
/* Is pfn in a memhole= hole (never memory), as opposed to offline memory? */
bool boot_pfn_in_hole(const struct pa_boot_config *c, pa_pfn_t pfn);
/* Is any frame of [lo, hi) in a hole or offline at boot? */
bool boot_range_hidden(const struct pa_boot_config *c, pa_pfn_t lo, pa_pfn_t hi);
/* contig.c: can every allocated frame of [start, end) move (holes skipped)? Zone lock held. */
bool contig_range_movable(const struct pa_pool *pool, pa_pfn_t start, pa_pfn_t end, bool cma);

/* "reporting.c": free page reporting */
int reporting_init(struct pa_pool *pool, char *err, size_t errlen);
void reporting_stop(struct pa_pool *pool);
/* A free of a block of the reporting order or above: schedule a pass (zone lock may be held). */
void reporting_notify(struct pa_pool *pool);

/* "deferred.c": background init threads, one per node */
int deferred_init_start(struct pa_pool *pool, char *err, size_t errlen);
void deferred_init_stop(struct pa_pool *pool);
void zone_setup_watermarks(struct pa_pool *pool);
/* Recompute the fast path's marks after the watermarks, reserve or CMA changed. Zone lock held. */
void zone_set_pcp_mark(struct pa_zone *z);
/*
 * Watermark boosting (Linux's boost_watermark()): a fallback that mixes
 * pageblocks raises the zone's watermarks by a pageblock, up to
 * watermark_boost_factor of the high mark; true when it did (kswapd is then
 * woken: zone_boost_wake()). Zone lock held.
 */
bool zone_boost_watermark(struct pa_zone *z);
/* The watermarks from wmark_base and the boost, and the fast path's marks. Zone lock held. */
void zone_apply_boost(struct pa_zone *z);
/*
 * kswapd woken for a boosted zone (after the allocation that boosted it, no
 * lock held): the pool, with nothing to reclaim, ends the boost at once, as a
 * boosted pass of Linux's kswapd that reclaims nothing does, and wakes the
 * background compactor for a pageblock. With kswapd_external the boost stays
 * until the external reclaim's pass ends (zone_reclaim_pass()).
 */
void zone_boost_wake(struct pa_zone *z);
/*
 * Linux's rmqueue() ends by waking kswapd for a zone its fallback boosted.
 * No lock held. The zone path asks only when its unlock took the slow path,
 * where zone_boost_watermark() sends it (pa_lock_defer()).
 */
static inline void zone_boost_check(struct pa_zone *z)
{
	if (unlikely(atomic_load_explicit(&z->boost_wake, memory_order_relaxed)))
		zone_boost_wake(z);
}
/* An external reclaim pass begins (on) or ends: a boost from before it ends with it. */
void zone_reclaim_pass(struct pa_zone *z, bool on);
const char *zone_name(enum pa_zone_type type);
/* The pfn where zone type t's address range ends; PA_PFN_INVALID for NORMAL and MOVABLE. */
pa_pfn_t zone_type_end_pfn(const struct pa_pool *pool, enum pa_zone_type t);
/* The highest type below MOVABLE with memory in the pool: ZONE_MOVABLE is taken from it. */
enum pa_zone_type zone_movable_source(const struct pa_pool *pool);
/* Does the layout have zone type t (zone_dma=1 for DMA, zones=x86_64 for DMA32)? */
bool zone_type_in_layout(const struct pa_pool *pool, enum pa_zone_type t);

/* Linux's ALLOC_* flags, as far as they matter here. */
enum alloc_flags {
	ALLOC_WMARK_MIN = 0,
	ALLOC_WMARK_LOW = 1,
	ALLOC_WMARK_MASK = 3,
	ALLOC_MIN_RESERVE = 1u << 2, /* PA_GFP_HIGH: may use half of the min reserve */
	ALLOC_HIGHATOMIC = 1u << 3,  /* high-order PA_GFP_HIGH: may use the atomic reserve */
	ALLOC_CMA = 1u << 4,         /* movable: may borrow CMA pageblocks */
	ALLOC_NO_POLLUTE = 1u << 5,  /* defrag_mode: no fallback into a clean region */
	ALLOC_NOFRAGMENT = 1u << 6,  /* Linux's: no fallback below a pageblock (claims only) */
	ALLOC_NON_BLOCK = 1u << 7,   /* no direct reclaim (PA_GFP_NOCOMPACT), in the slow path */
};

/* Free frames on the CMA lists. Zone lock held. */
uint64_t zone_free_cma(const struct pa_zone *z);

/*
 * Linux's __zone_watermark_ok(): enough free frames above the mark once the
 * request is taken, and a free block of the order or larger that the request
 * may use. Zone lock held.
 */
bool zone_watermark_ok(const struct pa_zone *z, unsigned order, uint64_t mark, unsigned flags);

/*
 * Has the zone any memory? Every node has a ZONE_MOVABLE from boot, empty
 * until movablecore= or online_movable gives it some, so that zonelists
 * never change; walks skip an empty zone as Linux leaves it out of them.
 */
static inline bool zone_populated(const struct pa_zone *z)
{
	return atomic_load_explicit(&z->populated, memory_order_relaxed);
}

/* present_pages where the zone lock is not held (kcompactd's score): hotplug changes it. */
static inline uint64_t zone_present(const struct pa_zone *z)
{
	return __atomic_load_n(&z->present_pages, __ATOMIC_RELAXED);
}

/* Its writer, zone lock held. */
static inline void zone_set_present(struct pa_zone *z, uint64_t n)
{
	__atomic_store_n(&z->present_pages, n, __ATOMIC_RELAXED);
}

/*
 * May an allocation with these gfp flags use zone z (node aside)? Linux's
 * gfp zone modifiers, by address so that they mean the same in every
 * layout: ZONE_MOVABLE only for movable data and never for a DMA request;
 * PA_GFP_DMA32 only zones that end at or below 4 GiB, PA_GFP_DMA only
 * zones that end at or below 16 MiB.
 */
static inline bool zone_gfp_allows(const struct pa_zone *z, pa_gfp_t gfp)
{
	unsigned shift = z->pool->cfg.page_shift;
	if (unlikely(!zone_populated(z)))
		return false; /* no memory: an empty ZONE_MOVABLE before a block is onlined there */
	if (likely(!(gfp & (PA_GFP_DMA | PA_GFP_DMA32))))
		return z->type != PA_ZONE_MOVABLE || (gfp & PA_GFP_MOVABLE);
	if (z->type == PA_ZONE_MOVABLE)
		return false;
	pa_pfn_t end = __atomic_load_n(&z->end_pfn, __ATOMIC_RELAXED); /* hotplug moves it */
	if (gfp & PA_GFP_DMA)
		return end <= (PA_ZONE_DMA_BYTES >> shift);
	return end <= ((4ull << 30) >> shift);
}

/* Linux's gfp_zone(): the highest zone type a request may use. */
static inline enum pa_zone_type gfp_highest_zone(pa_gfp_t gfp)
{
	if (gfp & PA_GFP_DMA)
		return PA_ZONE_DMA;
	if (gfp & PA_GFP_DMA32)
		return PA_ZONE_DMA32;
	return (gfp & PA_GFP_MOVABLE) ? PA_ZONE_MOVABLE : PA_ZONE_NORMAL;
}

/* The zone that holds pfn, or NULL. */
static inline struct pa_zone *zone_of_pfn(const struct pa_pool *pool, pa_pfn_t pfn)
{
	if (unlikely(pfn >= pool->nr_frames))
		return NULL;
	uint8_t z = pool->pb_zone[pfn >> pool->cfg.pageblock_order];
	return z == 0xff ? NULL : &pool->zones[z];
}

/*
 * Is the pageblock of pfn zone z's? Zone spans may overlap (a memory block
 * onlined into another zone of its node, as Linux allows since 4.13), so a
 * walker of a span asks before it touches a frame, under z's lock: a
 * pageblock changes zone only under the locks of both zones.
 */
static inline bool pfn_in_zone(const struct pa_zone *z, pa_pfn_t pfn)
{
	const struct pa_pool *pool = z->pool;
	return __atomic_load_n(&pool->pb_zone[pfn >> pool->cfg.pageblock_order],
	                       __ATOMIC_RELAXED) == z->index;
}

/* Is every pageblock of [s, e) zone z's? */
static inline bool range_in_zone(const struct pa_zone *z, pa_pfn_t s, pa_pfn_t e)
{
	uint64_t pb = 1ull << z->pool->cfg.pageblock_order;
	for (pa_pfn_t p = s & ~(pb - 1); p < e; p += pb)
		if (!pfn_in_zone(z, p))
			return false;
	return true;
}

/* ---------------------------------------------------------------------- */
/* "linux.c": the kernel versions modelled, their rule changes as data     */
/* ---------------------------------------------------------------------- */

#define LINUX_V(major, minor) ((major)*100u + (minor))
#define LINUX_V_OLDEST        LINUX_V(6, 1)
#define LINUX_V_NEWEST        LINUX_V(7, 2)

/* A change to the allocator's rules, in force from the version in its table row on. */
enum linux_rule {
	LR_PCP_HIGH_TUNED,     /* 6.7: per-CPU high auto-tuned (pcp_rules 6.7) */
	LR_FREELIST_HYGIENE,   /* 6.10: free blocks always on their pageblock's list */
	LR_HIGHATOMIC_ALIGNED, /* 6.10: the reserve's cap in whole pageblocks, none in small zones */
	LR_HIGHATOMIC_FREE, /* 6.12: watermarks leave out the reserve's free pages, not all of it */
	LR_FALLBACK_CLAIM,  /* 6.15: claim a whole pageblock or take the smallest block */
	LR_DEFRAG_MODE,     /* 6.15: vm.defrag_mode exists */
	LR_ISOLATE_BIT,     /* 6.17: isolation keeps the pageblock's type */
	LR_NR
};

static inline bool linux_rule(const struct pa_pool *pool, enum linux_rule r)
{
	return (pool->linux_rules >> r) & 1;
}

/* The rules of a version: every change that landed in it or before. */
unsigned linux_rules_for(unsigned version);
const char *linux_rule_name(unsigned rule);
unsigned linux_rule_version(unsigned rule);
const char *linux_rule_what(unsigned rule);
/*
 * "6.1" .. "7.2" (or X.Y.Z; not strict: a uname release such as
 * 7.2.13+deb14-amd64) -> LINUX_V(); -1 outside the versions modelled.
 */
int linux_version_parse(const char *s, bool strict, unsigned *out);
const char *linux_version_name(unsigned version, char *buf, size_t len);
/* The names of the rules in mask, comma-separated; returns the length it needs. */
size_t linux_rules_list(unsigned mask, char *buf, size_t len);

/* ---------------------------------------------------------------------- */
/* "buddy.c": free lists, merge and split; no policy                      */
/* ---------------------------------------------------------------------- */

void buddy_list_add(struct pa_zone *zone, pa_pfn_t pfn, unsigned order, unsigned mt);
void buddy_list_del(struct pa_zone *zone, pa_pfn_t pfn);
void buddy_list_move(struct pa_zone *zone, pa_pfn_t pfn, unsigned new_mt);
/* Free a block into the lists, merging with its buddies. */
void buddy_free_block(struct pa_zone *zone, pa_pfn_t pfn, unsigned order, unsigned mt);
/*
 * The same for a block of which `clean` is known zero (device.c):
 * the knowledge merges with the buddies' (buddy.c's cleared memory).
 */
void buddy_free_block_clean(struct pa_zone *zone, pa_pfn_t pfn, unsigned order, unsigned mt,
                            struct pa_clean clean);
/* buddy_list_add() of a block of which `clean` is known zero. */
void buddy_list_add_clean(struct pa_zone *zone, pa_pfn_t pfn, unsigned order, unsigned mt,
                          struct pa_clean clean);
/* What is known zero of the free block at pfn (nothing if it is not on the lists). */
struct pa_clean buddy_head_clean(const struct pa_zone *zone, pa_pfn_t pfn);
/* What was known zero of the part taken by the last take of a block (zone lock held). */
struct pa_clean buddy_taken_clean(const struct pa_zone *zone);
/* Take the smallest free block of type mt with order >= order, split to order; PA_NIL if none. */
pa_pfn_t buddy_take_smallest(struct pa_zone *zone, unsigned order, unsigned mt);
/* Remove a free block of order `high` and give back its upper halves down to `low`. */
void buddy_take_block(struct pa_zone *zone, pa_pfn_t pfn, unsigned low, unsigned high);
/* The same for the first block of the (high, mt) list, which must hold one; returns it. */
pa_pfn_t buddy_take_first(struct pa_zone *zone, unsigned low, unsigned high, unsigned mt);
/*
 * The first block of the (order, mt) list; PA_NIL if empty. An empty
 * (max order, MOVABLE) list takes its next block from an untouched chunk.
 */
pa_pfn_t buddy_list_first(struct pa_zone *zone, unsigned order, unsigned mt);
/* The tail of each max-order list found again, after max_order changed. Zone lock held. */
void buddy_reset_max_tails(struct pa_zone *zone);
/* The first block of the list, for readers that walk it without taking blocks. */
pa_pfn_t buddy_list_peek(struct pa_zone *zone, unsigned order, unsigned mt);
/* Count an untouched chunk as free blocks of the max order (init); no descriptor is written. */
void buddy_add_untouched(struct pa_zone *zone, pa_pfn_t chunk);
/* Write the descriptors of an untouched chunk (its bit cleared) and link its blocks. */
void buddy_materialise(struct pa_zone *zone, pa_pfn_t chunk);
/* Make the max-order list of mt hold exactly pfns[0..n), in that order (page shuffling). */
void buddy_relink_max(struct pa_zone *zone, unsigned mt, const uint32_t *pfns, uint64_t n);

/* ---------------------------------------------------------------------- */
/* "shuffle.c": Linux's page shuffling (shuffle=1)                         */
/* ---------------------------------------------------------------------- */

/* A random state for the zone, from the clock: every boot shuffles differently. */
void shuffle_seed(struct pa_zone *zone);
/* Shuffle every zone's max-order free lists: at boot, or when deferred init is done. */
void shuffle_pool(struct pa_pool *pool);
/* Shuffle one zone's max-order lists (shuffle=1 only): memory came online in it. */
void shuffle_zone(struct pa_zone *zone);
/* A freed max-order block goes to the tail of its list: a coin flip. Zone lock held. */
bool shuffle_pick_tail(struct pa_zone *zone);

/* First order >= order with a free block of a type in mask `mts`; -1 if none. */
static inline int buddy_first_order(const struct pa_zone *zone, unsigned order, unsigned mt)
{
	uint64_t bits = zone->nonempty[mt] >> order;
	return bits ? (int)order + __builtin_ctzll(bits) : -1;
}

/* ---------------------------------------------------------------------- */
/* "superblock.c": per-region pageblock and free counts                    */
/* ---------------------------------------------------------------------- */

/* One aligned region of 2^superblock_order frames. Written under the lock of any zone it spans. */
struct pa_superblock {
	_Atomic uint32_t blocks[PA_MT_COUNT]; /* pageblocks of present sections by base type */
	_Atomic uint64_t free;                /* frames free in the buddy */
};

static inline struct pa_superblock *superblock_of(const struct pa_pool *pool, pa_pfn_t pfn)
{
	return &pool->sb[pfn >> pool->cfg.superblock_order];
}

int superblock_init(struct pa_pool *pool, char *err, size_t errlen);
void superblock_destroy(struct pa_pool *pool);
/* A present pageblock changed base type (pageblock_set_mt). Zone lock held. */
void superblock_retype(struct pa_pool *pool, pa_pfn_t pfn, unsigned old_mt, unsigned new_mt);
/* A block of 2^order frames at pfn entered (add) or left the buddy. Zone lock held. */
void superblock_count_free(struct pa_pool *pool, pa_pfn_t pfn, unsigned order, bool add);
/* Pageblocks of polluting types (unmovable, reclaimable, high-atomic) in region index. */
uint64_t superblock_polluted(const struct pa_pool *pool, uint64_t index);
/* The counts against a recount from the lists and pageblock bits; every zone lock held. */
int superblock_validate_locked(struct pa_pool *pool, char *err, size_t errlen);

/* Steering's view of the regions (zone lock held): see pageblock.c for the policy. */
struct sb_rank {
	uint64_t key;
	uint32_t index;
};
/* A zone's region order buffers, after the zones are up; freed before they go. */
int superblock_init_zones(struct pa_pool *pool, char *err, size_t errlen);
void superblock_destroy_zones(struct pa_pool *pool);
/* Does the region of pfn hold a polluting pageblock? */
bool superblock_pfn_polluted(const struct pa_pool *pool, pa_pfn_t pfn);
/* Is every frame of the region of pfn (its pageblocks with memory) free in the buddy? */
bool superblock_pfn_whole(const struct pa_pool *pool, pa_pfn_t pfn);
/*
 * The regions of zone z in z->sb_rank, in the order a polluting fallback
 * tries them: polluted ones, most polluted first, then (unless
 * polluted_only) clean ones, fullest first. Returns how many.
 */
unsigned superblock_rank(struct pa_zone *z, bool polluted_only);
/*
 * A wholly free pageblock of region index in zone z that heads a free
 * block of order >= the pageblock order and >= need (its order in *order)
 * on a list in the mask mts; untouched memory is written as needed. PA_NIL
 * if none.
 */
pa_pfn_t superblock_free_pageblock(struct pa_zone *z, uint64_t index, unsigned mts, unsigned need,
                                   unsigned *order);
#define SB_PARTIAL_TRIES 4 /* partly free pageblocks a region search walks, fullest first */
struct sb_pick {
	pa_pfn_t large, small; /* the largest and the smallest free block found; PA_NIL: none */
	unsigned large_order, small_order;
};
/*
 * In the fullest partly free pageblocks of region index whose type is in
 * mts, free blocks of order or above: true with the pick of the first
 * pageblock that has one.
 */
bool superblock_partial_pageblock(struct pa_zone *z, uint64_t index, unsigned order, unsigned mts,
                                  struct sb_pick *pick);

/*
 * defrag_mode: free a pageblock inside a polluted region of z by moving its
 * movable folios out, so that a fallback of start_mt can claim it there
 * instead of polluting a clean region. Zone lock not held; true on success.
 */
bool superblock_defrag(struct pa_zone *z, unsigned start_mt);
/* ALLOC_NO_POLLUTE for a request of type mt when defrag_mode is on and it may compact. */
static inline unsigned superblock_alloc_flags(struct pa_pool *pool, unsigned mt, pa_gfp_t gfp)
{
	if (likely(!pool->sb) || mt == PA_MT_MOVABLE || (gfp & (PA_GFP_NOCOMPACT | PA_GFP_HIGH)) ||
	    !atomic_load_explicit(&pool->defrag_mode, memory_order_relaxed))
		return 0;
	return ALLOC_NO_POLLUTE;
}

/* The buddy's hook: one branch when superblocks are off. */
static inline void superblock_free_hook(struct pa_pool *pool, pa_pfn_t pfn, unsigned order,
                                        bool add)
{
	if (unlikely(pool->sb != NULL))
		superblock_count_free(pool, pfn, order, add);
}

/* ---------------------------------------------------------------------- */
/* "pageblock.c": pageblock bits and the migratetype fallback policy      */
/* ---------------------------------------------------------------------- */

#define PB_MT_MASK 0x07u
#define PB_ISOLATE 0x08u
#define PB_SKIP    0x10u

/*
 * The list a free block of this pageblock belongs on: its migratetype, or
 * ISOLATE while the pageblock is isolated (a separate bit, as Linux 6.17
 * keeps it, so that un-isolating restores the type). Read without the zone
 * lock by the per-CPU free path: a relaxed atomic byte.
 */
static inline unsigned pageblock_mt(const struct pa_pool *pool, pa_pfn_t pfn)
{
	uint8_t b =
	        __atomic_load_n(&pool->pb_bits[pfn >> pool->cfg.pageblock_order], __ATOMIC_RELAXED);
	return (b & PB_ISOLATE) ? PA_MT_ISOLATE : (b & PB_MT_MASK);
}

/* The type and isolation bits: below PA_NR_PCP_TYPES, an ordinary pageblock of that type. */
static inline unsigned pageblock_list_bits(const uint8_t *pb_bits)
{
	return __atomic_load_n(pb_bits, __ATOMIC_RELAXED) & (PB_MT_MASK | PB_ISOLATE);
}

/* The pageblock's migratetype, isolated or not. */
static inline unsigned pageblock_base_mt(const struct pa_pool *pool, pa_pfn_t pfn)
{
	return __atomic_load_n(&pool->pb_bits[pfn >> pool->cfg.pageblock_order], __ATOMIC_RELAXED) &
	       PB_MT_MASK;
}

void pageblock_set_mt(struct pa_pool *pool, pa_pfn_t pfn, unsigned mt);
/* Set the type of every pageblock of a block of order >= pageblock_order. */
void pageblock_set_mt_range(struct pa_pool *pool, pa_pfn_t pfn, unsigned order, unsigned mt);
/* The first pageblock under the block [pfn, pfn + 2^order) not of type mt, or PA_NIL. */
pa_pfn_t pageblock_first_other(const struct pa_pool *pool, pa_pfn_t pfn, unsigned order,
                               unsigned mt);
/* A block wider than a pageblock freed: pageblock_free_block() for those. */
void pageblock_free_wide(struct pa_zone *zone, pa_pfn_t pfn, unsigned order);

/* Free a block onto the lists of its pageblocks' types, split where they differ. */
static inline void pageblock_free_block(struct pa_zone *z, pa_pfn_t pfn, unsigned order)
{
	if (likely(order <= z->pool->cfg.pageblock_order))
		buddy_free_block(z, pfn, order, pageblock_mt(z->pool, pfn));
	else
		pageblock_free_wide(z, pfn, order);
}
/* Move the free blocks of the pageblock holding pfn to the mt list; returns frames moved. */
uint64_t pageblock_move_free(struct pa_zone *zone, pa_pfn_t pfn, unsigned mt);
/*
 * The list a request of type mt takes from before any fallback: CMA first
 * while it holds over half the zone's free memory (Linux's balance rule),
 * then its own type, then CMA if it may borrow. -1 if none has a block of
 * order or larger; else the type, with the smallest such order in *found.
 */
int pageblock_own_list(const struct pa_zone *zone, unsigned order, unsigned mt,
                       unsigned alloc_flags, unsigned *found);
/* Take a block of order for type mt: its own lists first, then the fallback policy. */
pa_pfn_t pageblock_rmqueue(struct pa_zone *zone, unsigned order, unsigned mt, unsigned alloc_flags);
/*
 * Allocate from another type's pageblocks by Linux's claim/steal rules,
 * steered by region when superblocks are on; PA_NIL if none (or, under
 * ALLOC_NO_POLLUTE, if only a clean region could give one).
 */
pa_pfn_t pageblock_rmqueue_fallback(struct pa_zone *zone, unsigned order, unsigned mt,
                                    unsigned alloc_flags);
/*
 * The block to take from the (*found, type) list for a request of type mt:
 * the first, or a polluted region's free pageblock in place of a split of a
 * clean region's (steering; *found is updated).
 */
pa_pfn_t pageblock_own_first(struct pa_zone *zone, unsigned *found, unsigned need, unsigned type,
                             unsigned mt);
/* Make the pageblock of an allocation a HIGHATOMIC reserve, if the cap allows. */
void pageblock_reserve_highatomic(struct pa_zone *zone, pa_pfn_t pfn, unsigned order);
/* Give back one HIGHATOMIC pageblock to mt; true if one was given back. */
bool pageblock_unreserve_highatomic(struct pa_zone *zone, unsigned mt);
extern const char *const pa_migratetype_names[PA_MT_COUNT];

/* ---------------------------------------------------------------------- */
/* Per-CPU lists ("pcp.c")                                                 */
/* ---------------------------------------------------------------------- */

/*
 * Whose rules size the lists: Linux 6.7's (high auto-tuned between
 * high_min and high_max, decayed once a second) or Linux 6.1's (high fixed
 * at the low watermark's share, refills of one batch, and a run of frees
 * that reaches a high-order page empties the lists), as a replay of a 6.1
 * kernel wants.
 */
enum pcp_rules { PCP_RULES_67, PCP_RULES_61, PCP_NR_RULES };

/*
 * One order's lists of one CPU: a stack per PCP type, and what went through
 * them. head[PA_NR_PCP_TYPES] stays empty (PA_NIL): an allocation indexes
 * head by its gfp type bits, and both bits set find it empty and go to the
 * refill, which takes the movable list (gfp_migratetype()).
 */
struct pcp_order {
	/* Blocks allocated from and freed to the lists; the zone's pgalloc,
	 * pgfree and per-order counts are folded from these on read. */
	uint64_t allocs, frees;
	uint32_t head[PA_NR_PCP_TYPES + 1];
};

/*
 * One CPU's lists for one zone: a list per (order, PCP type) for every order
 * 0..max_order, so any order can be switched on at run time. Blocks on them
 * are out of the buddy (PS_PCP) and count as reserved frames. Aligned to a
 * cache line so that two CPUs' lists never share one.
 */
struct pa_pcp {
	struct pa_spin lock;
	struct pa_zone *zone; /* whose lists: the fast paths find them without the zone */
	/*
	 * Every field is read and written under the lock; the heads are also
	 * stored relaxed-atomically (plain moves all the same), for the peek of
	 * pcp_free_direct_guess().
	 */
	/*
	 * high minus the frames on the lists (pcp_count()): a free that takes
	 * it to 0 or below spills, one subtraction and one branch. high is
	 * changed through pcp_set_high(), which keeps the difference.
	 */
	int32_t room;
	uint32_t high; /* spill to the buddy from this many frames on the lists */
	/*
	 * The highest pageblock list bits (pageblock_list_bits()) whose order-0
	 * frees go on the lists: PA_NR_PCP_TYPES - 1, or -1 while order 0's
	 * free gate is shut. pcp_gates_update() writes it under the lock before
	 * a switch drains, so that the fast path's one compare of the type
	 * under the lock also reads the switch where a drain can't miss it.
	 */
	int64_t order0_type_max;
	uint32_t high_min, high_max;
	uint32_t batch;      /* blocks per refill or spill, in order-0 frames */
	uint32_t free_count; /* frames freed in a row, capped where read: scales the spill */
	/* Refills in a row without a free: scales the refill (order 0). Halved by each free
	 * as of frees_seen: the fast path only counts frees (pcp.c catches up). */
	uint32_t alloc_factor;
	uint64_t frees_seen;
	/* Frees of orders outside 1..PA_COSTLY_ORDER at the last one inside (Linux's
	 * PCPF_PREV_FREE_HIGH_ORDER while unchanged; pcp_free_costly_unlock()). */
	uint64_t frees_at_costly;
	uint32_t spill_next; /* the list a spill starts from */
	uint64_t last_decay_ns;
	/* pcp_rules=6.1: Linux 6.1's free_factor, and the allocations it was last halved up to. */
	uint32_t free_factor;
	uint64_t allocs_seen;
	/*
	 * [order], 0..max_order_boot: sized at boot, at the end so that order
	 * 0's fields sit at fixed offsets for the fast paths. Per-list counts
	 * are walked on read.
	 */
	struct pcp_order orders[];
} __attribute__((aligned(64)));

/* Frames on a CPU's lists. */
static inline uint32_t pcp_count(const struct pa_pcp *pcp)
{
	return pcp->high - (uint32_t)pcp->room;
}

static inline void pcp_set_high(struct pa_pcp *pcp, uint32_t high)
{
	pcp->room += (int32_t)(high - pcp->high);
	pcp->high = high;
}

/* A list's number, as spills walk them and pa_pcp_info() reports them. */
#define pcp_index(order, type)     ((order)*PA_NR_PCP_TYPES + (type))
/* The head of the (order, type) list, and of list number i. */
#define pcp_head(pcp, order, type) ((pcp)->orders[order].head[type])
#define pcp_list_head(pcp, i)      pcp_head(pcp, (i) / PA_NR_PCP_TYPES, (i) % PA_NR_PCP_TYPES)

int pcp_init_zone(struct pa_zone *zone);
void pcp_destroy_zone(struct pa_zone *zone);
/* Batch and high from the zone's size and watermarks (Linux's formulas). */
void pcp_setup_sizes(struct pa_zone *zone);
/* pool_cpu() for an id out of range: ask again where it is unknown, then wrap it. */
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

/* Is order on the per-CPU lists now? */
static inline bool pcp_order_enabled(const struct pa_pool *pool, unsigned order)
{
	return (atomic_load_explicit(&pool->pcp_orders, memory_order_relaxed) >> order) & 1;
}

/* Is bit order of a gate word (pcp_alloc_gate, pcp_free_gate) set? Never for 64 and up. */
static inline bool pcp_gate_open(const _Atomic uint64_t *gate, unsigned order)
{
	return order < 64 && (atomic_load_explicit(gate, memory_order_relaxed) >> order) & 1;
}
/* The same for an order known to be below 64 (checked before, or a constant). */
static inline bool pcp_gate_bit(const _Atomic uint64_t *gate, unsigned order)
{
	return (atomic_load_explicit(gate, memory_order_relaxed) >> order) & 1;
}

/*
 * Slow halves of the fast paths below, entered with the list lock held and
 * leaving it released, so that the fast paths end in tail calls and keep
 * their registers to themselves.
 */
struct pa_page *pcp_refill_unlock(struct pa_zone *zone, struct pa_pcp *pcp, unsigned order,
                                  unsigned mt, pa_gfp_t gfp);
/* Spill from list `list` (pcp_index) on, where the overflowing free went. */
bool pcp_spill_unlock(struct pa_zone *zone, struct pa_pcp *pcp, unsigned list);
/* The same from the list whose top is pfn (the free that overflowed): the fast path keeps no type. */
bool pcp_spill_top_unlock(struct pa_pcp *pcp, unsigned order, pa_pfn_t pfn);
/* A free of order 1..PA_COSTLY_ORDER just linked (full: the lists reach high): Linux's free_high. */
bool pcp_free_costly_unlock(struct pa_pcp *pcp, unsigned order, pa_pfn_t pfn, bool full);
bool pcp_free_wipe_unlock(struct pa_zone *zone, struct pa_pcp *pcp, pa_pfn_t pfn, unsigned order);

/* The top block of a list taken off it, still PS_PCP; NULL if the list is empty. */
static inline struct pa_page *pcp_unlink(struct pa_pool *pool, struct pa_pcp *pcp, unsigned order,
                                         size_t type)
{
	uint32_t pfn = pcp_head(pcp, order, type);
	if (pfn == PA_NIL)
		return NULL;
	struct pa_page *p = pfn_page(pool, pfn);
	__atomic_store_n(&pcp_head(pcp, order, type), p->lru.next,
	                 __ATOMIC_RELAXED); /* pcp_free_direct_guess() */
	pcp->room += 1 << order;
	return p;
}

static inline pa_pfn_t pcp_pop(struct pa_pool *pool, struct pa_pcp *pcp, unsigned order,
                               unsigned type)
{
	struct pa_page *p = pcp_unlink(pool, pcp, order, type);
	return p ? page_pfn(pool, p) : PA_NIL;
}

/*
 * A list is a stack through lru.next: the most recently freed block is the
 * cache-hottest. Returns whether the lists reach high now (struct pa_pcp),
 * from the room before, so that the room is updated in place.
 */
static inline bool pcp_link_page(struct pa_pcp *pcp, struct pa_page *p, pa_pfn_t pfn,
                                 unsigned order, size_t type)
{
	bool full = pcp->room <= 1 << order;
	p->lru.next = pcp_head(pcp, order, type);
	__atomic_store_n(&pcp_head(pcp, order, type), (uint32_t)pfn,
	                 __ATOMIC_RELAXED); /* pcp_free_direct_guess() */
	pcp->room -= 1 << order;
	return full;
}

/*
 * A block whose state is not PS_PCP yet, made one that may go on a list.
 * A block on a list has no owner and no pins, and of its flags at most
 * PF_REPORTED, so that pcp_prep() writes only what an allocation changes.
 */
static inline struct pa_page *pcp_listable(struct pa_pool *pool, pa_pfn_t pfn)
{
	struct pa_page *p = pfn_page(pool, pfn);
	set_page_flags(p, page_flags(p) & PF_REPORTED);
	set_page_owner(p, 0);
	set_page_pins(p, 0);
	set_page_state(p, PS_PCP);
	return p;
}

/* The same, onto a list. */
static inline void pcp_push(struct pa_pool *pool, struct pa_pcp *pcp, pa_pfn_t pfn, unsigned order,
                            unsigned type)
{
	pcp_link_page(pcp, pcp_listable(pool, pfn), pfn, order, type);
}

/*
 * A block popped off a list becomes an allocated one: order, owner and pins
 * are already right (pcp_push(), pcp_claim()), and of the flags only
 * PF_COMP may be added (a reported block stays marked: pa_page_reported()).
 * The state goes last, with release order, as page_prep_fields() does.
 */
static inline struct pa_page *pcp_prep(struct pa_pcp *pcp, struct pa_page *p, unsigned order,
                                       unsigned mt, pa_gfp_t gfp)
{
	p->private = 0;
	set_page_mt(p, mt);
	if (gfp & PA_GFP_COMP)
		set_page_flags(p, page_flags(p) | PF_COMP);
	set_page_state(p, PS_ALLOC);
	pcp->orders[order].allocs++;
	pcp->free_count >>= 1;
	return p;
}

/* The top block of the (order, mt) list made an allocated one; NULL if the list is empty. */
static inline struct pa_page *pcp_take(struct pa_pool *pool, struct pa_pcp *pcp, unsigned order,
                                       unsigned mt, pa_gfp_t gfp)
{
	struct pa_page *p = pcp_unlink(pool, pcp, order, mt);
	return likely(p) ? pcp_prep(pcp, p, order, mt, gfp) : NULL;
}

#ifdef PA_RSEQ_LOCK
#define PA_STR_(x) #x
#define PA_STR(x)  PA_STR_(x)
/*
 * The owner's list lock without an atomic: a restartable sequence that
 * checks it still runs on cpu, finds the lock free and stores 1, the store
 * being its commit. Another thread on the same CPU can only run between two
 * instructions of it by preempting it, which restarts it (the kernel moves
 * it to the abort handler): the check and the store are one step for every
 * thread of that CPU. A remote taker (platform.c) swaps its token in with
 * a compare-and-swap, then has every sequence in flight on that CPU
 * restarted (membarrier's rseq fence) and reads the word again: still its
 * token, it holds the lock; 1, an owner committed first and holds it. A
 * sequence that starts after the swap sees the token and gives up. The
 * lock is released as any: a store of 0. Aborted, or on another CPU (the
 * thread moved, or its id was wrapped to nr_cpus): busy, the zone path.
 */
static inline bool pcp_rseq_trylock(const struct pa_pool *pool, struct pa_spin *s, unsigned cpu)
{
	__asm__ goto(".pushsection __rseq_cs, \"aw\"\n\t"
	             ".balign 32\n"
	             "333:\n\t"
	             ".long 0, 0\n\t"                    /* version, flags */
	             ".quad 331f, 332f - 331f, 334f\n\t" /* start, length, abort */
	             ".popsection\n\t"
	             "leaq 333b(%%rip), %%rax\n\t"
	             "movq %%rax, %%fs:(%[cs])\n\t"
	             "movq %[cpu_off], %%rax\n"
	             "331:\n\t"
	             "cmpl %[cpu], %%fs:(%%rax)\n\t"
	             "jne %l[busy]\n\t"
	             "cmpl $0, (%[lock])\n\t"
	             "jne %l[busy]\n\t"
	             "movl $1, (%[lock])\n"
	             "332:\n\t"
	             ".pushsection __rseq_failure, \"ax\"\n\t"
	             ".long " PA_STR(PA_RSEQ_SIG) "\n"
	                                          "334:\n\t"
	                                          "jmp %l[busy]\n\t"
	                                          ".popsection"
	             :
	             : [cs] "r"(pool->rseq_cs_off), [cpu_off] "m"(pool->cpu_off), [cpu] "r"(cpu),
	               [lock] "r"(&s->v)
	             : "rax", "memory", "cc"
	             : busy);
	return true;
busy:
	return false;
}
#endif

/*
 * The owner's trylock of its CPU's lists: by restartable sequence where the
 * pool can (pcp_rseq_trylock()), else one compare-and-swap of 0 to 1 (it
 * leaves a remote taker's token alone; with no plain read first: as fast
 * as pa_spin_trylock() on the hot pair, 26.3-26.7 ns against 26.7-26.9 ns
 * with pcp_rseq=0, and 5 instructions fewer). cpu is the id the lists were
 * picked by.
 */
static inline bool pcp_trylock(const struct pa_pool *pool, struct pa_pcp *pcp, unsigned cpu)
{
#ifdef PA_RSEQ_LOCK
	if (likely(pool->pcp_rseq))
		return pcp_rseq_trylock(pool, &pcp->lock, cpu);
#endif
	(void)pool;
	(void)cpu;
	uint32_t free_word = 0;
	return atomic_compare_exchange_strong_explicit(&pcp->lock.v, &free_word, 1,
	                                               memory_order_acquire, memory_order_relaxed);
}

/* The owner found its list lock busy: counted; its CPU id may be stale, so it is asked again. */
static inline void pcp_busy(struct pa_pcp *pcp, enum pa_lock_site site)
{
	atomic_fetch_add_explicit(&pcp->lock.busy[site], 1, memory_order_relaxed);
	platform_cpu_forget();
}

/*
 * Allocate from this CPU's list, refilling it from the buddy when dry.
 * NULL when the list lock is busy or the zone has nothing: the caller
 * takes the zone path.
 */
static inline struct pa_page *pcp_alloc(struct pa_zone *z, unsigned cpu, unsigned order,
                                        unsigned mt, pa_gfp_t gfp)
{
	struct pa_pcp *pcp = z->pcp[cpu];
	if (unlikely(!pcp_trylock(z->pool, pcp, cpu))) {
		pcp_busy(pcp, SITE_PCP_ALLOC);
		return NULL;
	}
	struct pa_page *p = pcp_take(z->pool, pcp, order, mt, gfp);
	if (unlikely(!p))
		return pcp_refill_unlock(z, pcp, order, mt, gfp);
	pa_spin_unlock(&pcp->lock);
	return p;
}

/*
 * Is this descriptor word (one load of p->word) the head of an allocated
 * block of order, and no CMA allocation? State, order and flags are in the
 * word, so one compare checks them all; an order of 256 or more never
 * matches. A descriptor of an absent frame reads as zero and fails.
 */
static inline bool pcp_claimable(uint64_t w, unsigned order)
{
	uint64_t mask =
	        PAGE_WORD_BYTE(0, 0xff) | PAGE_WORD_BYTE(1, 0xff) | PAGE_WORD_BYTE(3, PF_CMA);
	uint64_t want = PAGE_WORD_BYTE(0, PS_ALLOC) | PAGE_WORD_BYTE(1, 1) * order;
	return (w & mask) == want;
}

/*
 * Take a claimable block (word w) for a list: PS_ALLOC -> PS_PCP, and in
 * the same compare-and-swap flags, owner and pins cleared (used memory is
 * not reported any more). A compare-and-swap, not a store: compaction may be
 * isolating the folio under the zone lock, or a second free of the block be
 * racing on another CPU; the loser finds the word changed.
 */
static inline bool pcp_claim(struct pa_page *p, uint64_t w)
{
	uint64_t keep = PAGE_WORD_BYTE(1, 0xff) | PAGE_WORD_BYTE(2, 0xff) |
	                PAGE_WORD_BYTE(6, 0xff) | PAGE_WORD_BYTE(7, 0xff);
	return __atomic_compare_exchange_n(&p->word, &w, (w & keep) | PAGE_WORD_BYTE(0, PS_PCP),
	                                   false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static inline uint64_t page_word(const struct pa_page *p)
{
	return __atomic_load_n(&p->word, __ATOMIC_RELAXED);
}

/* Both, for a block whose word is not read yet. */
static inline bool pcp_free_claim(struct pa_page *p, unsigned order)
{
	uint64_t w = page_word(p);
	return pcp_claimable(w, order) && pcp_claim(p, w);
}

/*
 * A claimed block onto the type's list, spilling when the lists pass high.
 * Frees in a row are counted uncapped (pcp_prep halves them): the spill
 * caps them where it reads them. Leaves the list lock released.
 */
static inline bool pcp_free_commit(struct pa_pcp *pcp, struct pa_page *p, pa_pfn_t pfn,
                                   unsigned order, size_t type)
{
	bool full = pcp_link_page(pcp, p, pfn, order, type); /* the CAS made it PS_PCP */
	pcp->orders[order].frees++;
	pcp->free_count += 1u << order;
	if (order != 0 && order <= PA_COSTLY_ORDER) /* folds away in order 0's inline path */
		return pcp_free_costly_unlock(pcp, order, pfn, full);
	if (unlikely(full))
		return pcp_spill_top_unlock(pcp, order, pfn);
	pa_spin_unlock(&pcp->lock);
	return true;
}

/* May a free of this order skip the lists? Linux 6.1's rules look at every free
 * (pcp_spill_unlock()). */
static inline bool pcp_free_may_go_direct(const struct pa_pool *pool, unsigned order)
{
	return order >= pool->cfg.pageblock_order &&
	       atomic_load_explicit(&pool->pcp_rules, memory_order_relaxed) != PCP_RULES_61;
}

/*
 * Does a block of a pageblock or more go straight to the buddy? It waits
 * on its list only while the list is empty and high has room for it: one
 * is what a CPU that frees and allocates it again reuses (a refill's spare
 * counts), and a spill would give back just it. Blocks freed in bulk skip
 * the list, whose stack would only hand them back in reverse. List lock
 * held: count and high are plain, so that the order-0 fast paths update
 * them in place.
 */
static inline bool pcp_free_direct(const struct pa_pool *pool, const struct pa_pcp *pcp,
                                   unsigned order, unsigned type)
{
	return pcp_free_may_go_direct(pool, order) &&
	       (pcp_head(pcp, order, type) != PA_NIL || pcp->room <= (int64_t)(1ull << order));
}

/*
 * Its first half without the list lock, from the head alone: a huge block
 * whose list holds one goes straight to the buddy, with no atomic more than
 * the buddy path's (blocks freed in bulk). A stale head only decides one
 * free's way, both right; the lock makes the rest exact.
 */
static inline bool pcp_free_direct_guess(const struct pa_pool *pool, const struct pa_pcp *pcp,
                                         unsigned order, unsigned type)
{
	return pcp_free_may_go_direct(pool, order) &&
	       __atomic_load_n(&pcp_head(pcp, order, type), __ATOMIC_RELAXED) != PA_NIL;
}

/* The list a free of a pageblock of type mt waits on: HIGHATOMIC and CMA on the movable one. */
static inline unsigned pcp_type(unsigned mt)
{
	return mt < PA_NR_PCP_TYPES ? mt : PA_MT_MOVABLE;
}

/*
 * Free onto this CPU's list, its lock held; false when the zone path must
 * decide (the free is bad, a huge block goes straight to the buddy, the
 * order was switched off meanwhile, the pageblock is isolated, or a CMA
 * pageblock's block is a CMA allocation, which only pa_cma_release()
 * frees). HIGHATOMIC and CMA blocks wait on the movable list; a spill
 * returns them to the buddy by their pageblock's type. Leaves the list
 * lock released either way.
 */
static inline bool pcp_free_locked(struct pa_zone *z, struct pa_pcp *pcp, pa_pfn_t pfn,
                                   unsigned order)
{
	struct pa_pool *pool = z->pool;
	struct pa_page *p = pfn_page(pool, pfn);
	unsigned mt = pageblock_mt(pool, pfn), type = pcp_type(mt);
	if (unlikely(pcp_free_direct(pool, pcp, order, type) || !pcp_order_enabled(pool, order) ||
	             (mt >= PA_MT_CMA && (mt == PA_MT_ISOLATE || (page_flags(p) & PF_CMA))) ||
	             !pcp_free_claim(p, order))) {
		pa_spin_unlock(&pcp->lock);
		return false;
	}
	if (unlikely(pool->cfg.init_on_free))
		return pcp_free_wipe_unlock(z, pcp, pfn, order);
	return pcp_free_commit(pcp, p, pfn, order, type);
}

/* pcp_free_locked() with the list lock taken first; false also when it is busy. */
static inline bool pcp_free(struct pa_zone *z, unsigned cpu, pa_pfn_t pfn, unsigned order)
{
	struct pa_pcp *pcp = z->pcp[cpu];
	if (unlikely(!pcp_trylock(z->pool, pcp, cpu))) {
		pcp_busy(pcp, SITE_PCP_FREE);
		return false;
	}
	return pcp_free_locked(z, pcp, pfn, order);
}

/* Give back to the buddy every block of the orders in mask from one CPU's lists. */
void pcp_drain_cpu(struct pa_zone *zone, unsigned cpu, uint64_t order_mask);
/* Drain every CPU's lists; true if any held a block (the allocation slow path retries then). */
bool pcp_drain_all_if_any(struct pa_pool *pool);
/* 0 (auto-tuned high) or at least 8; -EINVAL otherwise. Resizes every CPU's lists. */
int pcp_set_high_fraction(struct pa_pool *pool, unsigned fraction);
/* "6.7" or "6.1" -> enum pcp_rules; -1 for anything else. */
int pcp_rules_parse(const char *s);
const char *pcp_rules_name(unsigned rules);
void pcp_set_rules(struct pa_pool *pool, enum pcp_rules rules);
/*
 * Linux's ZONE_RECLAIM_ACTIVE on or off: while on, each CPU's lists hold at
 * most 4 batches (nr_pcp_high()); high starts over from high_min after.
 */
void pcp_set_reclaim_active(struct pa_zone *zone, bool on);
/* Switch an order on or off; off drains it from every CPU. */
void pcp_set_order(struct pa_pool *pool, unsigned order, bool on);
/* The gate words from pcp_orders, after each change of it. */
void pcp_gates_update(struct pa_pool *pool);
/* A zone's counters with every CPU's folded in (alloc_order may be NULL); takes the locks. */
void zone_fold_stats(struct pa_zone *zone, uint64_t stat[PA_NR_ZONE_STATS], uint64_t *alloc_order);
/* The same with the zone's list locks and zone lock held. */
void zone_fold_stats_locked(const struct pa_zone *zone, uint64_t stat[PA_NR_ZONE_STATS],
                            uint64_t *alloc_order);

/* ---------------------------------------------------------------------- */
/* "migrate.c": movable owners, pins, moving one folio                     */
/* ---------------------------------------------------------------------- */

/* Can compaction move this allocated block? Zone lock held, state taken (PS_ISOLATED). */
static inline bool migrate_movable(const struct pa_pool *pool, const struct pa_page *p)
{
	unsigned owner = page_owner(p);
	return owner && owner < atomic_load_explicit(&pool->nr_owners, memory_order_acquire) &&
	       !page_pins(p) && page_mt(p) == PA_MT_MOVABLE;
}

/* Take an allocated block for moving: PS_ALLOC -> PS_ISOLATED if it is movable. Zone lock held. */
bool migrate_isolate(struct pa_pool *pool, pa_pfn_t pfn, unsigned max_order);
/* Give an isolated block back to its owner, or free it if it was freed meanwhile. Zone lock held. */
void migrate_putback(struct pa_zone *zone, pa_pfn_t pfn);
/*
 * Move the isolated folio at src into the block at dst (PS_MIGRATING, same
 * order): copy the bytes, ask the owner, then commit or undo under the zone
 * lock. Called without the zone lock. On success src is handed to release
 * (freed to the buddy, or kept by the caller); on failure dst goes back
 * through release and src to its owner, except after PA_MIGRATE_AGAIN with
 * keep_on_again, when src stays isolated for another try. Returns the answer.
 */
enum pa_migrate_result migrate_folio(struct pa_zone *zone, pa_pfn_t src, pa_pfn_t dst,
                                     bool keep_on_again,
                                     void (*release)(void *ctx, pa_pfn_t pfn, unsigned order),
                                     void *ctx);
/*
 * Move the isolated folio at src (zone z) to a block the allocator hands
 * out, from whatever zone a movable request may use, as Linux's
 * migrate_pages() with alloc_migration_target(): how offlining empties a
 * block, even the last one of its zone. Called without a zone lock; src is
 * freed on success and given back to its owner otherwise. The answer, or
 * PA_MIGRATE_BUSY when no block could be had.
 */
enum pa_migrate_result migrate_folio_out(struct pa_zone *z, pa_pfn_t src);
/* Linux's folio split (compaction_split_folios=1): an isolated folio into order-0 folios. */
void migrate_split_folio(struct pa_zone *zone, pa_pfn_t pfn);
/* pa_free_pages() of a block being moved: mark it; the mover frees it. Zone lock held. */
void migrate_free_pending(struct pa_page *p);

/* ---------------------------------------------------------------------- */
/* "compaction.c"                                                          */
/* ---------------------------------------------------------------------- */

enum compact_mode { COMPACT_ASYNC, COMPACT_SYNC_LIGHT, COMPACT_SYNC };

int compaction_init(struct pa_pool *pool, char *err, size_t errlen);
void compaction_stop(struct pa_pool *pool);
/* Direct compaction from the allocation slow path; true if a block of order may now exist. */
bool compaction_direct(struct pa_pool *pool, const struct pa_node *node, unsigned order,
                       pa_gfp_t gfp, enum compact_mode mode);
/* A high-order allocation failed: wake node's background compactor. */
void compaction_wake(struct pa_pool *pool, unsigned node, unsigned order);

/* ---------------------------------------------------------------------- */
/* "isolation.c", "contig.c", "cma.c"                                      */
/* ---------------------------------------------------------------------- */

/*
 * Isolate the pageblocks covering [start, end) of one zone: their free
 * blocks move to the ISOLATE lists and frees into them stay there. Per-CPU
 * lists are drained. -EBUSY if one is isolated already (nothing changes).
 */
int isolation_start(struct pa_zone *zone, pa_pfn_t start, pa_pfn_t end);
/* Cut the free block wider than a pageblock that covers pfn (if any) into pageblocks. Zone lock held. */
void isolation_split_to_pageblocks(struct pa_zone *zone, pa_pfn_t pfn);
/* Undo isolation_start(): free blocks go back to their type's lists, merged. */
void isolation_undo(struct pa_zone *zone, pa_pfn_t start, pa_pfn_t end);
/* Is every frame of [start, end) free on an ISOLATE list? Zone lock held. */
bool isolation_range_free(struct pa_zone *zone, pa_pfn_t start, pa_pfn_t end);
/* Move the movable folios out of [start, end) (zone lock not held); the frames moved. */
uint64_t compaction_range(struct pa_zone *zone, pa_pfn_t start, pa_pfn_t end);
/* Move every movable folio out of [start, end); true if the range is then free. */
bool compaction_empty_range(struct pa_zone *zone, pa_pfn_t start, pa_pfn_t end);
/* pa_alloc_contig_range() whose blocks carry flags (PF_CONTIG, and PF_CMA for an area). */
int contig_alloc_range(struct pa_pool *pool, pa_pfn_t start, pa_pfn_t end, unsigned mt,
                       unsigned flags);
/*
 * Free [pfn, pfn + nr) if it is all blocks of contiguous ranges, taken by
 * pa_cma_alloc() exactly when cma says so: 0, or -EINVAL with nothing freed
 * and what was found written into why.
 */
int contig_free_range(struct pa_pool *pool, pa_pfn_t pfn, uint64_t nr, bool cma, char *why,
                      size_t len);
int cma_init(struct pa_pool *pool, char *err, size_t errlen);
void cma_destroy(struct pa_pool *pool);

/* ---------------------------------------------------------------------- */
/* "alloc.c"                                                               */
/* ---------------------------------------------------------------------- */

/* A bad free other than pa_free_pages()'s: report "bad page: <what>; refused", count it. */
void alloc_bad_free(struct pa_pool *pool, const char *what);
/*
 * init_on_free's wipe of a checked block, outside the zone lock (held on
 * entry and on return): the head says PS_FREEING meanwhile.
 */
void alloc_wipe_block(struct pa_zone *z, pa_pfn_t pfn, unsigned order);
/* Each node's alloc_flags[] again: at boot and when a zone gains or loses all its memory. */
void alloc_update_node_flags(struct pa_pool *pool);

/*
 * Where cpu_pcp holds a CPU's lists for gfp: by the two type bits, which the
 * fast path also takes as the list's type (struct pcp_order); odd slots are
 * the movable request's zone.
 */
static inline size_t cpu_pcp_slot(unsigned cpu, pa_gfp_t gfp)
{
	_Static_assert(PA_GFP_MOVABLE == PA_MT_MOVABLE && PA_GFP_RECLAIMABLE == PA_MT_RECLAIMABLE &&
	                       PA_MT_UNMOVABLE == 0 && PA_NR_PCP_TYPES == 3,
	               "the gfp type bits are the list's type; both set index the empty head");
	return (size_t)cpu * 4 + (gfp & (PA_GFP_MOVABLE | PA_GFP_RECLAIMABLE));
}

/* Which pageblocks an allocation of gfp belongs to. */
static inline unsigned gfp_migratetype(pa_gfp_t gfp)
{
	/* By the two type bits, one load: movable wins over reclaimable. */
	static const uint8_t mt[4] = { PA_MT_UNMOVABLE, PA_MT_MOVABLE, PA_MT_RECLAIMABLE,
		                       PA_MT_MOVABLE };
	_Static_assert(PA_GFP_MOVABLE == 1 && PA_GFP_RECLAIMABLE == 2, "the type bits index mt[]");
	return mt[gfp & (PA_GFP_MOVABLE | PA_GFP_RECLAIMABLE)];
}

/* ---------------------------------------------------------------------- */
/* "stats.c"                                                               */
/* ---------------------------------------------------------------------- */

extern const char *const pa_zone_stat_names[PA_NR_ZONE_STATS];
extern const char *const pa_pool_stat_names[PA_NR_POOL_STATS];
static inline void pool_stat_inc(struct pa_pool *pool, enum pa_pool_stat s)
{
	atomic_fetch_add_explicit(&pool->pool_stat[s], 1, memory_order_relaxed);
}

/* ---------------------------------------------------------------------- */
/* "validate.c"                                                            */
/* ---------------------------------------------------------------------- */

/* Same as pa_validate with every zone lock already held by the caller. */
int validate_locked(struct pa_pool *pool, char *err, size_t errlen);

#endif /* PA_INTERNAL_H */
