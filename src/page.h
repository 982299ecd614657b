/* SPDX-License-Identifier: MIT */
/*
 * The frame descriptor and the constants every layer shares: what a
 * struct pa_page says, its accessors, and what is known zero of a free
 * block (struct pa_clean).
 */
#ifndef PA_PAGE_H
#define PA_PAGE_H

#include "pagealloc.h"

#include <stdbool.h>
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

#endif /* PA_PAGE_H */
