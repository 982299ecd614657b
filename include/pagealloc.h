/* SPDX-License-Identifier: MIT */
/*
 * pagealloc - the Linux page-frame allocator design as an embeddable C library.
 *
 * This is the one public header. A pool (struct pa_pool) is one booted
 * instance: the frames of one "machine", split into nodes and zones, handed
 * out in power-of-two blocks by a buddy allocator whose largest order is a
 * boot parameter. Frames are named by pool-relative page frame numbers
 * (pa_pfn_t) and described by struct pa_page, an opaque 16-byte descriptor.
 *
 * Thread safety: every function may be called from any thread at any time,
 * except pa_shutdown(), which must be the last call on a pool.
 *
 * Bad arguments: every function refuses a NULL pool, a NULL descriptor or a
 * NULL output pointer, unknown gfp bits and a node below -1, with what its
 * comment says (-EINVAL, NULL, 0, PA_PFN_INVALID, or nothing done). A
 * descriptor must come from this pool; anything else is refused the same way.
 */
#ifndef PAGEALLOC_H
#define PAGEALLOC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PAGEALLOC_VERSION_MAJOR 0
#define PAGEALLOC_VERSION_MINOR 1
#define PAGEALLOC_VERSION_PATCH 0

/* A pool-relative page frame number. */
typedef uint64_t pa_pfn_t;
#define PA_PFN_INVALID ((pa_pfn_t)-1)

/* Allocation flags: Linux's gfp meanings with a PA_GFP_ prefix. */
typedef uint32_t pa_gfp_t;

#define PA_GFP_MOVABLE     (1u << 0)  /* data that compaction may move */
#define PA_GFP_RECLAIMABLE (1u << 1)  /* caches the owner can drop */
#define PA_GFP_ZERO        (1u << 2)  /* zero the bytes (backed pools) */
#define PA_GFP_COMP        (1u << 3)  /* a folio: tail frames know their head */
#define PA_GFP_NORETRY     (1u << 4)  /* one light attempt, then fail */
#define PA_GFP_NOWARN      (1u << 5)  /* do not report a failure */
#define PA_GFP_HIGH        (1u << 6)  /* may dip below the min watermark; atomic reserve */
#define PA_GFP_THISNODE    (1u << 7)  /* only the preferred node */
#define PA_GFP_DMA32       (1u << 8)  /* only zones below 4 GiB: ZONE_DMA32 (and ZONE_DMA) */
#define PA_GFP_NOCOMPACT   (1u << 9)  /* never compact nor drain other CPUs (no direct reclaim) */
#define PA_GFP_DMA         (1u << 10) /* only zones below 16 MiB: ZONE_DMA (zone_dma=1) */

/* Every flag above; a request with any other bit set is refused. */
#define PA_GFP_ALL_FLAGS                                                                           \
	(PA_GFP_MOVABLE | PA_GFP_RECLAIMABLE | PA_GFP_ZERO | PA_GFP_COMP | PA_GFP_NORETRY |        \
	 PA_GFP_NOWARN | PA_GFP_HIGH | PA_GFP_THISNODE | PA_GFP_DMA32 | PA_GFP_NOCOMPACT |         \
	 PA_GFP_DMA)

/* Unmovable kernel data; may compact. */
#define PA_GFP_KERNEL       ((pa_gfp_t)0)
/* User pages: movable, from ZONE_MOVABLE or CMA where there is one. */
#define PA_GFP_USER_MOVABLE (PA_GFP_MOVABLE)

/* Migratetypes, as Linux numbers them. */
enum pa_migratetype {
	PA_MT_UNMOVABLE = 0,
	PA_MT_MOVABLE,
	PA_MT_RECLAIMABLE,
	PA_MT_HIGHATOMIC,
	PA_MT_CMA,
	PA_MT_ISOLATE,
	PA_MT_COUNT
};

/*
 * Zone types, lowest first, as x86-64 Linux numbers them. The default
 * layout (zones=x86_64) puts memory below 4 GiB in DMA32 and the rest in
 * NORMAL; zone_dma=1 adds DMA for the first 16 MiB; zones=flat makes one
 * NORMAL zone per node. MOVABLE comes from movablecore.
 */
enum pa_zone_type {
	PA_ZONE_DMA = 0,
	PA_ZONE_DMA32,
	PA_ZONE_NORMAL,
	PA_ZONE_MOVABLE,
	PA_ZONE_COUNT
};

struct pa_pool;
struct pa_page; /* opaque; at most 16 bytes per frame */

/*
 * Platform services. Every hook is optional: a NULL hook (or a NULL
 * platform) gets the default userspace implementation.
 */
struct pa_platform {
	void *ctx;
	/* The CPU the caller runs on, 0..nr_cpus-1 (values are taken modulo nr_cpus). */
	unsigned (*cpu_id)(void *ctx);
	/* A monotonic clock in nanoseconds. */
	uint64_t (*now_ns)(void *ctx);
	/* Reserve address space for metadata (no memory behind it yet); NULL on failure. */
	void *(*reserve)(void *ctx, size_t bytes);
	/* Back [addr, addr+bytes) with zero-filled memory; 0 or -errno. */
	int (*commit)(void *ctx, void *addr, size_t bytes);
	/* Give back a whole reservation. */
	void (*release)(void *ctx, void *addr, size_t bytes);
	/* A one-line report (a bad free, an allocation failure). Default: stderr. */
	void (*report)(void *ctx, const char *line);
};

/* --- Boot ------------------------------------------------------------- */

/*
 * Boot a pool from a kernel-style command line ("mem=4G numa=2 max_order=18").
 * platform may be NULL. Returns 0 and sets *out, or -errno with a message
 * naming the offending key and value in err (when err is not NULL).
 * -EINVAL when cmdline or out is NULL.
 */
int pa_boot(const char *cmdline, const struct pa_platform *platform, struct pa_pool **out,
            char *err, size_t errlen);

/* Release the pool and everything it holds. NULL: nothing happens. */
void pa_shutdown(struct pa_pool *pool);

/*
 * Wait until deferred frame init (deferred_init=1, the default) has put
 * every frame of the pool into the buddy and the watermarks were set from
 * the full size. Returns at once with deferred_init=0 or when it is done.
 * Allocations need not wait: one that runs short initialises more itself.
 */
void pa_deferred_init_wait(struct pa_pool *pool);

/* --- Allocation -------------------------------------------------------- */

/*
 * Allocate a block of 1 << order frames; NULL on failure (counted, reported
 * unless NOWARN). NULL for a NULL pool, and for unknown gfp bits (reported).
 */
struct pa_page *pa_alloc_pages(struct pa_pool *pool, pa_gfp_t gfp, unsigned int order);

/*
 * Free a block. A bad free (double free, a frame never allocated, a tail
 * frame, the wrong order, a descriptor not of this pool, a block of a
 * pa_cma_alloc(), which pa_cma_release() gives back) is reported,
 * counted as bad_page and refused; with bad_page=panic it aborts. A NULL
 * page is such a bad free; with a NULL pool nothing happens.
 */
void pa_free_pages(struct pa_pool *pool, struct pa_page *page, unsigned int order);

/*
 * Allocate up to nr blocks into out[]; returns how many were allocated.
 * 0 for a NULL pool, a NULL out or unknown gfp bits.
 */
unsigned pa_alloc_pages_bulk(struct pa_pool *pool, pa_gfp_t gfp, unsigned int order, unsigned nr,
                             struct pa_page **out);

/* Frame number of a descriptor; PA_PFN_INVALID if it is not one of this pool's (or NULL). */
pa_pfn_t pa_page_to_pfn(const struct pa_pool *pool, const struct pa_page *page);

/* Descriptor of a frame; NULL for a hole, an absent section, a pfn out of range, a NULL pool. */
struct pa_page *pa_pfn_to_page(const struct pa_pool *pool, pa_pfn_t pfn);

/* The bytes of a frame in a backed pool; NULL in a metadata-only pool or for NULL arguments. */
void *pa_page_address(const struct pa_pool *pool, const struct pa_page *page);

/*
 * The head of the allocated block that holds page: the head of a folio
 * (PA_GFP_COMP) for any of its frames, or page itself when it heads an
 * allocated block. NULL otherwise (free frame, body of a non-folio block,
 * NULL arguments).
 */
struct pa_page *pa_folio_head(const struct pa_pool *pool, const struct pa_page *page);

/* Order of the allocated block headed by page, or -1 if it heads none (or for NULL arguments). */
int pa_folio_order(const struct pa_pool *pool, const struct pa_page *page);

/*
 * Split an allocated block of `order` (a folio or not) into 2^(order -
 * new_order) allocated blocks of new_order, as Linux's split_folio_to_order():
 * each piece has its own head, is freed on its own with pa_free_pages(..,
 * new_order), and keeps the block's migratetype, folio flag, owner and
 * cookie; a pinned block is refused, so every piece starts unpinned.
 * 0; -EINVAL when folio is not the head of an allocated block (a tail frame,
 * a free block, a frame of another pool), when order is not its order, or
 * new_order >= order; -EBUSY when it is pinned or compaction is moving it.
 * On failure nothing changes.
 */
int pa_split_folio(struct pa_pool *pool, struct pa_page *folio, unsigned order, unsigned new_order);

/*
 * Give the blocks that this CPU's (pa_drain_local) or every CPU's
 * (pa_drain_all) per-CPU lists hold back to the buddy. NULL: nothing happens.
 */
void pa_drain_local(struct pa_pool *pool);
void pa_drain_all(struct pa_pool *pool);

/* One CPU's per-CPU lists in one zone, as /proc/zoneinfo's pagesets show them. */
struct pa_pcp_info {
	uint64_t count;              /* frames on the lists */
	uint64_t high;               /* spill to the buddy above this many frames */
	uint64_t high_min, high_max; /* the range auto-tuning moves high in */
	uint64_t batch;              /* frames moved per refill or spill */
};

/*
 * Read CPU cpu's lists in the zone of type `zone` on node `node`. When
 * blocks is not NULL it gets the blocks held per order and PCP migratetype
 * (unmovable, movable, reclaimable): blocks[order * 3 + type] for order
 * 0..max_order, so the caller sizes it (max_order + 1) * 3.
 * 0, or -ENOENT when there is no such zone or CPU; -EINVAL for a NULL pool or info.
 */
int pa_pcp_info(struct pa_pool *pool, unsigned node, enum pa_zone_type zone, unsigned cpu,
                struct pa_pcp_info *info, uint64_t *blocks);

/* --- Movable owners, pinning and compaction ------------------------------ */

/* What an owner's migrate callback answers. */
enum pa_migrate_result {
	PA_MIGRATE_OK = 0, /* references moved to the new folio: the old one is freed */
	PA_MIGRATE_AGAIN,  /* not now; compaction may retry (sync modes) */
	PA_MIGRATE_BUSY,   /* not movable at the moment; the folio stays where it is */
};

/*
 * How an owner moves its folios. Compaction, contiguous allocation and
 * offlining move only allocated PA_GFP_MOVABLE blocks that have an owner and
 * no pins. In a backed pool the library copies the bytes before calling
 * migrate; in a metadata-only pool migrate moves whatever the owner keeps.
 * The callbacks run in the compacting thread with no pool lock held; they may
 * call pa_page_to_pfn() and friends but must not allocate from the pool.
 *
 * Freeing a folio that compaction is moving is safe: pa_free_pages() of the
 * old folio (or of the new one, once migrate has handed it over) marks it,
 * and when the move ends the move is undone and both copies go back to the
 * free lists; the owner must not free the other copy. pa_free_pages() never
 * waits for a move.
 */
struct pa_owner_ops {
	const char *name;
	void *ctx;
	enum pa_migrate_result (*migrate)(void *ctx, uint64_t cookie, struct pa_page *old_folio,
	                                  struct pa_page *new_folio, unsigned order);
	/*
	 * Optional, for compaction_split_folios=1: the folio at head (of order)
	 * was split into order-0 folios, each with the same owner and cookie.
	 */
	void (*split)(void *ctx, uint64_t cookie, struct pa_page *head, unsigned order);
};

/* Register an owner; returns its id (1..255), -ENOSPC, or -EINVAL (NULL pool, ops or migrate). */
int pa_owner_register(struct pa_pool *pool, const struct pa_owner_ops *ops);

/*
 * Make an allocated movable block movable by owner (an id from
 * pa_owner_register, or 0 for none) with the owner's cookie.
 * 0, or -EINVAL when page heads no allocated PA_GFP_MOVABLE block, for an
 * owner not registered and for a NULL pool or page.
 */
int pa_set_owner(struct pa_pool *pool, struct pa_page *page, int owner, uint64_t cookie);

/* pa_alloc_pages() and pa_set_owner() in one; NULL if either refuses. */
struct pa_page *pa_alloc_owned(struct pa_pool *pool, pa_gfp_t gfp, unsigned int order, int owner,
                               uint64_t cookie);

/* The owner's cookie of an allocated block (0 if none, or for NULL arguments). */
uint64_t pa_page_cookie(const struct pa_pool *pool, const struct pa_page *page);

/*
 * Pin a folio (it is not moved while pinned) and unpin it. 0; -EINVAL when
 * page heads no allocated block (or, unpinning, is not pinned) or for a
 * NULL pool or page; -EOVERFLOW past 255 pins; -EBUSY while compaction is
 * moving it (try again).
 */
int pa_pin(struct pa_pool *pool, struct pa_page *page);
int pa_unpin(struct pa_pool *pool, struct pa_page *page);

/*
 * Compact every zone of node (or of every node with -1) until its free
 * memory is as contiguous as moving movable folios makes it, as writing
 * /proc/sys/vm/compact_memory does. Returns the frames migrated, or -EINVAL
 * for a NULL pool or no such node.
 */
long pa_compact(struct pa_pool *pool, int node);

/*
 * With kcompactd=manual on the boot line, run one pass of node's background
 * compactor (what its thread would do when woken). Returns frames migrated;
 * -EINVAL for a NULL pool or no such node (-1 included).
 */
long pa_kcompactd_run(struct pa_pool *pool, int node);

/* --- Contiguous ranges and CMA ------------------------------------------ */

/*
 * Allocate exactly the frames [start_pfn, end_pfn) of one zone, moving the
 * movable folios in the way, as Linux's alloc_contig_range(). migratetype
 * is PA_MT_MOVABLE or PA_MT_CMA. The range becomes a row of allocated
 * blocks (the largest aligned ones that fit): give it back with
 * pa_free_contig_range(). 0; -EINVAL for an empty range, one not inside a
 * single zone or with a hole, another migratetype, unknown gfp bits or a
 * NULL pool; -EBUSY when a frame cannot be moved (unmovable, pinned, no
 * owner, refused by its owner) or the range is being taken already;
 * -ENOMEM. On failure nothing changes: every pageblock keeps its type and
 * the free memory is what it was. Only what an attempt must do stays done:
 * the per-CPU lists are drained, and a folio that was moved out before
 * another refused stays where it went (its owner was told).
 */
int pa_alloc_contig_range(struct pa_pool *pool, pa_pfn_t start_pfn, pa_pfn_t end_pfn,
                          unsigned migratetype, pa_gfp_t gfp);

/*
 * Find and allocate nr_pages contiguous frames, aligned to the largest power
 * of two not above nr_pages, on node (-1: any) in the zones gfp allows.
 * The first frame's descriptor, or NULL (also for a NULL pool, nr_pages 0,
 * unknown gfp bits or no such node).
 */
struct pa_page *pa_alloc_contig_pages(struct pa_pool *pool, uint64_t nr_pages, pa_gfp_t gfp,
                                      int node);

/*
 * Free what pa_alloc_contig_range() or pa_alloc_contig_pages() took, all of
 * it or any part. A range that is not wholly such frames (a block of
 * pa_alloc_pages(), a CMA allocation, free frames, a range past the pool or
 * a count that wraps) is a bad free: reported, counted, refused, and nothing
 * is freed. NULL pool or nr_pages 0: nothing.
 */
void pa_free_contig_range(struct pa_pool *pool, pa_pfn_t pfn, uint64_t nr_pages);

/* A CMA area (cma=SIZE[@START] on the boot line, in order). */
struct pa_cma_info {
	char name[16]; /* "cma0", "cma1", ... */
	pa_pfn_t start_pfn;
	uint64_t nr_pages; /* reserved, a multiple of the pageblock */
	uint64_t requested_bytes;
	uint64_t reserved_bytes;
	uint64_t allocated_pages; /* taken by pa_cma_alloc() */
};

/*
 * Number of CMA areas (0 for a NULL pool), and one area's description: 0,
 * -ENOENT for no such area, -EINVAL for a NULL pool or out.
 */
unsigned pa_cma_count(const struct pa_pool *pool);
int pa_cma_get(struct pa_pool *pool, unsigned area, struct pa_cma_info *out);

/*
 * Allocate count frames from CMA area, aligned to 1 << align_order frames,
 * moving the movable folios that borrowed the area. NULL when no such range
 * can be emptied (or for a NULL pool, no such area, count 0 or larger than
 * the area, align_order above max_order). Release with pa_cma_release(),
 * never pa_free_pages() or pa_free_contig_range() (refused as bad frees).
 */
struct pa_page *pa_cma_alloc(struct pa_pool *pool, unsigned area, uint64_t count,
                             unsigned align_order);
/*
 * Release count frames (all or part of a pa_cma_alloc()). 0, or -EINVAL when
 * the frames are not a pa_cma_alloc() of this area (NULL included, a count
 * of 0 or one reaching past the area); nothing changes then.
 */
int pa_cma_release(struct pa_pool *pool, unsigned area, struct pa_page *page, uint64_t count);

/* --- Configuration, read back ------------------------------------------ */

struct pa_config {
	unsigned page_shift;
	uint64_t page_size;
	unsigned max_order; /* inclusive */
	int huge_order;     /* -1 without THP */
	unsigned pageblock_order;
	unsigned pageblock_order_ceil;
	uint64_t cma_alignment_bytes; /* page_size << pageblock_order */
	unsigned section_shift;       /* frames per section = 1 << section_shift */
	unsigned nr_cpus;
	unsigned nr_nodes;
	uint64_t total_pages; /* the pfn span */
	unsigned metadata_bytes_per_frame;
};

/* The derived configuration of a booted pool. NULL pool or out: nothing is written. */
void pa_get_config(const struct pa_pool *pool, struct pa_config *out);

/* --- Control, reports, validation --------------------------------------- */

/*
 * Write a runtime knob ("watermark_scale_factor", ...). 0 or -errno: -ENOENT
 * for an unknown path, -EPERM for a read-only one, -EINVAL for a bad value
 * or a NULL pool, path or value.
 */
int pa_ctl_write(struct pa_pool *pool, const char *path, const char *value);

/*
 * Read a knob or a report into buf (NUL-terminated); returns the full length
 * or -errno: -ENOENT for an unknown path, -EINVAL for a NULL pool or path, or
 * a NULL buf with len > 0.
 */
int pa_ctl_read(struct pa_pool *pool, const char *path, char *buf, size_t len);

/* Report formats for pa_report(). */
enum pa_report_kind {
	PA_REPORT_INFO,           /* derived configuration, zones, watermarks */
	PA_REPORT_BUDDYINFO,      /* /proc/buddyinfo */
	PA_REPORT_PAGETYPEINFO,   /* /proc/pagetypeinfo */
	PA_REPORT_VMSTAT,         /* /proc/vmstat */
	PA_REPORT_UNUSABLE_INDEX, /* debugfs extfrag/unusable_index */
	PA_REPORT_EXTFRAG_INDEX,  /* debugfs extfrag/extfrag_index */
	PA_REPORT_ZONEINFO,       /* /proc/zoneinfo, pagesets with per-order counts */
	PA_REPORT_LOCKSTAT, /* lock contention per lock and call site, as perf lock contention */
	PA_REPORT_COUNT
};
#define PA_REPORT_JSON 1u /* flag: JSON instead of the /proc text */

/*
 * Write a report into buf (always NUL-terminated when len > 0).
 * Returns the length the whole report needs, like snprintf, or -EINVAL
 * (NULL pool, unknown kind or flags, NULL buf with len > 0).
 */
int pa_report(struct pa_pool *pool, enum pa_report_kind kind, unsigned flags, char *buf,
              size_t len);

/* Name of a report kind ("buddyinfo"), or NULL for an unknown kind. */
const char *pa_report_name(enum pa_report_kind kind);

/* Read one vmstat counter by its /proc/vmstat name; -ENOENT if unknown, -EINVAL for NULLs. */
int pa_vmstat_read(struct pa_pool *pool, const char *name, uint64_t *value);

/*
 * Check every invariant from the raw state: free counts recomputed from the
 * lists, no two blocks overlapping, every frame in exactly one state, free +
 * allocated + reserved = managed, pageblock types agreeing with the lists.
 * 0, or -EFAULT with the first broken invariant described in err (which
 * may be NULL); -EINVAL for a NULL pool.
 */
int pa_validate(struct pa_pool *pool, char *err, size_t errlen);

/*
 * Frame accounting of the whole pool, as pa_validate() checks it. A NULL
 * pool gives all zeros; a NULL out is left alone.
 */
struct pa_usage {
	uint64_t managed;
	uint64_t free;      /* in the free lists */
	uint64_t allocated; /* handed out */
	uint64_t reserved;  /* held by the pool itself (per-CPU lists, isolation, capture) */
};
void pa_get_usage(struct pa_pool *pool, struct pa_usage *out);

#ifdef __cplusplus
}
#endif
#endif /* PAGEALLOC_H */
