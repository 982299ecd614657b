/* SPDX-License-Identifier: MIT */
/*
 * Movable owners, pins, moving one folio (migrate.c).
 */
#ifndef PA_MIGRATE_H
#define PA_MIGRATE_H

#include "pool.h"

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

#endif /* PA_MIGRATE_H */
