/* SPDX-License-Identifier: MIT */
/*
 * The frame map (memmap.c): sections, pfn <-> descriptor, block heads.
 */
#ifndef PA_MEMMAP_H
#define PA_MEMMAP_H

#include "pool.h"

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

#endif /* PA_MEMMAP_H */
