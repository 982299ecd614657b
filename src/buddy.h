/* SPDX-License-Identifier: MIT */
/*
 * The buddy (buddy.c): free lists, merge and split; no policy.
 */
#ifndef PA_BUDDY_H
#define PA_BUDDY_H

#include "pool.h"

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
/* The tail of each list found again, after max_order changed. Zone lock held. */
void buddy_reset_tails(struct pa_zone *zone);
/* The first block of the list, for readers that walk it without taking blocks. */
pa_pfn_t buddy_list_peek(struct pa_zone *zone, unsigned order, unsigned mt);
/* Count an untouched chunk as free blocks of the max order (init); no descriptor is written. */
void buddy_add_untouched(struct pa_zone *zone, pa_pfn_t chunk);
/* Write the descriptors of an untouched chunk (its bit cleared) and link its blocks. */
void buddy_materialise(struct pa_zone *zone, pa_pfn_t chunk);
/* Make the max-order list of mt hold exactly pfns[0..n), in that order (page shuffling). */
void buddy_relink_max(struct pa_zone *zone, unsigned mt, const uint32_t *pfns, uint64_t n);

/* First order >= order with a free block of a type in mask `mts`; -1 if none. */
static inline int buddy_first_order(const struct pa_zone *zone, unsigned order, unsigned mt)
{
	uint64_t bits = zone->nonempty[mt] >> order;
	return bits ? (int)order + __builtin_ctzll(bits) : -1;
}

#endif /* PA_BUDDY_H */
