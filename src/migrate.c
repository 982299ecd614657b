/* SPDX-License-Identifier: MIT */
/*
 * Movable owners and moving one folio.
 *
 * Whoever allocates a movable folio may register how to move it: an owner
 * (a table of callbacks) and a cookie. Compaction moves only folios that are
 * allocated PA_GFP_MOVABLE, have an owner and are not pinned.
 *
 * A folio being moved is PS_ISOLATED (taken from PS_ALLOC with a
 * compare-and-swap, so a concurrent free through a per-CPU list cannot slip
 * in), and its destination is PS_MIGRATING (counted with the captured free
 * pages). The bytes are copied and the owner is asked with no lock held;
 * the result is committed or undone under the zone lock. A free that
 * arrives meanwhile only marks the block (PF_FREE_PENDING): the move is
 * undone and the block freed when the mover lets go of it.
 */
#include "migrate.h"

#include "platform/platform.h"
#include "memmap.h"
#include "pageblock.h"
#include "zone.h"

int pa_owner_register(struct pa_pool *pool, const struct pa_owner_ops *ops)
{
	if (!pool || !ops || !ops->migrate)
		return -EINVAL;
	pa_mutex_lock(&pool->owner_lock);
	unsigned id = atomic_load(&pool->nr_owners);
	if (id < 256) {
		pool->owners[id] = *ops;
		/* Release: a reader that sees the count sees the table entry. */
		atomic_store_explicit(&pool->nr_owners, id + 1, memory_order_release);
	}
	pa_mutex_unlock(&pool->owner_lock);
	return id < 256 ? (int)id : -ENOSPC;
}

/* The allocated head page names, with its zone locked; NULL (nothing locked) otherwise. */
static struct pa_zone *lock_allocated(struct pa_pool *pool, const struct pa_page *page,
                                      pa_pfn_t *pfn)
{
	*pfn = pa_page_to_pfn(pool, page);
	struct pa_zone *z = *pfn != PA_PFN_INVALID ? zone_of_pfn(pool, *pfn) : NULL;
	if (!z)
		return NULL;
	pa_lock(&z->lock, SITE_ADMIN);
	unsigned st = page_state(page);
	if (st == PS_ALLOC || st == PS_ISOLATED || st == PS_MIGRATING)
		return z;
	pa_unlock(&z->lock);
	return NULL;
}

int pa_set_owner(struct pa_pool *pool, struct pa_page *page, int owner, uint64_t cookie)
{
	pa_pfn_t pfn;
	if (!pool || owner < 0 ||
	    owner >= (int)atomic_load_explicit(&pool->nr_owners, memory_order_acquire))
		return -EINVAL;
	struct pa_zone *z = lock_allocated(pool, page, &pfn);
	if (!z)
		return -EINVAL;
	int rc = page_mt(page) == PA_MT_MOVABLE ? 0 : -EINVAL;
	if (rc == 0 && page_state(page) == PS_MIGRATING)
		rc = -EBUSY; /* the move sets it from the old folio */
	if (rc == 0) {
		set_page_owner(page, (unsigned)owner);
		page->private = cookie;
	}
	pa_unlock(&z->lock);
	return rc;
}

struct pa_page *pa_alloc_owned(struct pa_pool *pool, pa_gfp_t gfp, unsigned int order, int owner,
                               uint64_t cookie)
{
	if (!pool)
		return NULL;
	if (!(gfp & PA_GFP_MOVABLE)) {
		platform_report(pool,
		                "pa_alloc_owned: gfp %#x is not PA_GFP_MOVABLE: an owned folio "
		                "must be movable",
		                gfp);
		return NULL;
	}
	struct pa_page *p = pa_alloc_pages(pool, gfp, order);
	if (p && pa_set_owner(pool, p, owner, cookie) != 0) {
		pa_free_pages(pool, p, order);
		return NULL;
	}
	return p;
}

uint64_t pa_page_cookie(const struct pa_pool *pool, const struct pa_page *page)
{
	pa_pfn_t pfn;
	struct pa_zone *z = lock_allocated((struct pa_pool *)pool, page, &pfn);
	if (!z)
		return 0;
	uint64_t cookie = page->private;
	pa_unlock(&z->lock);
	return cookie;
}

int pa_pin(struct pa_pool *pool, struct pa_page *page)
{
	pa_pfn_t pfn;
	struct pa_zone *z = lock_allocated(pool, page, &pfn);
	if (!z)
		return -EINVAL;
	int rc = page_pins(page) == UINT8_MAX ? -EOVERFLOW : 0;
	if (page_state(page) != PS_ALLOC)
		rc = -EBUSY; /* being moved: the owner may be pointing at the other copy by now */
	if (rc == 0)
		set_page_pins(page, page_pins(page) + 1);
	pa_unlock(&z->lock);
	return rc;
}

int pa_unpin(struct pa_pool *pool, struct pa_page *page)
{
	pa_pfn_t pfn;
	struct pa_zone *z = lock_allocated(pool, page, &pfn);
	if (!z)
		return -EINVAL;
	int rc = page_pins(page) ? 0 : -EINVAL;
	if (rc == 0)
		set_page_pins(page, page_pins(page) - 1);
	pa_unlock(&z->lock);
	return rc;
}

bool migrate_isolate(struct pa_pool *pool, pa_pfn_t pfn, unsigned max_order)
{
	struct pa_page *p = pfn_page(pool, pfn);
	uint8_t alloc = PS_ALLOC;
	if (page_order(p) > max_order ||
	    !__atomic_compare_exchange_n(&p->state, &alloc, (uint8_t)PS_ISOLATED, false,
	                                 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return false;
	if (migrate_movable(pool, p))
		return true;
	__atomic_store_n(&p->state, (uint8_t)PS_ALLOC, __ATOMIC_RELEASE);
	return false;
}

void migrate_free_pending(struct pa_page *p)
{
	set_page_flags(p, page_flags(p) | PF_FREE_PENDING);
}

/* Free an allocated block that its owner already gave up. Zone lock held. */
static void free_pending_block(struct pa_zone *z, pa_pfn_t pfn, unsigned order)
{
	pageblock_free_block(z, pfn, order);
	z->stat[PA_ZS_PGFREE] += 1ull << order;
	z->stat[PA_ZS_FREE_CALLS]++;
}

void migrate_putback(struct pa_zone *z, pa_pfn_t pfn)
{
	struct pa_page *p = pfn_page(z->pool, pfn);
	if (page_flags(p) & PF_FREE_PENDING) {
		set_page_flags(p, page_flags(p) & ~PF_FREE_PENDING);
		free_pending_block(z, pfn, page_order(p));
		return;
	}
	__atomic_store_n(&p->state, (uint8_t)PS_ALLOC, __ATOMIC_RELEASE);
}

/* splitmix64 over a shared counter: lock-free, and a seed from the platform. */
static uint64_t fault_random(struct pa_pool *pool)
{
	uint64_t z = atomic_fetch_add_explicit(&pool->fault_rng, 0x9e3779b97f4a7c15ull,
	                                       memory_order_relaxed);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * The owner's answer, unless fault injection answers first: a test knob
 * that makes a share of migrations fail as an owner would, to prove that a
 * failed move leaves data and state exactly as they were.
 */
static enum pa_migrate_result ask_owner(struct pa_pool *pool, struct pa_page *src,
                                        struct pa_page *dst)
{
	unsigned pct = atomic_load_explicit(&pool->compact_fail_pct, memory_order_relaxed);
	if (pct) {
		uint64_t r = fault_random(pool);
		if (r % 100 < pct)
			return (r >> 32) & 1 ? PA_MIGRATE_AGAIN : PA_MIGRATE_BUSY;
	}
	const struct pa_owner_ops *ops = &pool->owners[page_owner(src)];
	return ops->migrate(ops->ctx, src->private, src, dst, page_order(src));
}

/* Make dst the allocated copy of src. Zone lock held. */
static void commit_dst(struct pa_page *dst, const struct pa_page *src)
{
	set_page_order(dst, page_order(src));
	set_page_mt(dst, PA_MT_MOVABLE);
	set_page_flags(dst, page_flags(src) & PF_COMP);
	set_page_owner(dst, page_owner(src));
	set_page_pins(dst, 0);
	dst->private = src->private;
	__atomic_store_n(&dst->state, (uint8_t)PS_ALLOC, __ATOMIC_RELEASE);
}

/* Copy the folio's bytes to dst and ask its owner to move over. No lock held. */
static enum pa_migrate_result copy_and_ask(struct pa_pool *pool, pa_pfn_t src, pa_pfn_t dst,
                                           unsigned order)
{
	struct pa_page *sp = pfn_page(pool, src), *dp = pfn_page(pool, dst);
	if (pool->base)
		memcpy(pool->base + (dst << pool->cfg.page_shift),
		       pool->base + (src << pool->cfg.page_shift),
		       (size_t)1 << (pool->cfg.page_shift + order));
	/* The new folio carries the owner's cookie from the start: the owner may look at it. */
	dp->private = sp->private;
	set_page_owner(dp, page_owner(sp));
	return ask_owner(pool, sp, dp);
}

enum pa_migrate_result migrate_folio(struct pa_zone *z, pa_pfn_t src, pa_pfn_t dst,
                                     bool keep_on_again,
                                     void (*release)(void *ctx, pa_pfn_t pfn, unsigned order),
                                     void *ctx)
{
	struct pa_pool *pool = z->pool;
	struct pa_page *sp = pfn_page(pool, src), *dp = pfn_page(pool, dst);
	unsigned order = page_order(sp);
	enum pa_migrate_result r = copy_and_ask(pool, src, dst, order);
	pa_lock(&z->lock, SITE_ADMIN);
	/* A free of either copy ends the move: the folio is gone, both copies go back. */
	if ((page_flags(sp) | page_flags(dp)) & PF_FREE_PENDING) {
		set_page_flags(dp, 0);
		set_page_flags(sp, page_flags(sp) | PF_FREE_PENDING);
		r = PA_MIGRATE_BUSY;
	}
	if (r == PA_MIGRATE_OK) {
		commit_dst(dp, sp);
		z->reserved_pages -= 1ull << order;
		z->stat[PA_ZS_PGMIGRATE_SUCCESS] += 1ull << order;
		z->folios_migrated[order]++;
		set_page_flags(sp, 0);
		release(ctx, src, order);
	} else {
		z->stat[PA_ZS_PGMIGRATE_FAIL] += 1ull << order;
		if (r != PA_MIGRATE_AGAIN || !keep_on_again)
			migrate_putback(z, src); /* frees it if the owner freed either copy */
		release(ctx, dst, order);        /* back to the caller's free pages */
	}
	pa_unlock(&z->lock);
	return r;
}

/* Both zones' locks, in pool order as zone_setup_watermarks() takes them; one when they are one. */
static void lock_pair(struct pa_zone *a, struct pa_zone *b)
{
	struct pa_zone *first = a->index < b->index ? a : b, *second = first == a ? b : a;
	pa_lock(&first->lock, SITE_ADMIN);
	if (second != first)
		pa_lock(&second->lock, SITE_ADMIN);
}

static void unlock_pair(struct pa_zone *a, struct pa_zone *b)
{
	if (a != b)
		pa_unlock(&b->lock);
	pa_unlock(&a->lock);
}

/* A block for the folio at sp from the allocator, held as PS_ISOLATED (a free of it is deferred). */
static pa_pfn_t alloc_target(struct pa_pool *pool, const struct pa_page *sp, unsigned order)
{
	pa_gfp_t gfp = PA_GFP_MOVABLE | PA_GFP_NOWARN | PA_GFP_NORETRY |
	               ((page_flags(sp) & PF_COMP) ? PA_GFP_COMP : 0);
	struct pa_page *dp = pa_alloc_pages(pool, gfp, order);
	if (!dp)
		return PA_NIL;
	uint8_t alloc = PS_ALLOC; /* ours alone until the owner hears of it */
	__atomic_compare_exchange_n(&dp->state, &alloc, (uint8_t)PS_ISOLATED, false,
	                            __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
	return page_to_pfn_checked(pool, dp);
}

enum pa_migrate_result migrate_folio_out(struct pa_zone *z, pa_pfn_t src)
{
	struct pa_pool *pool = z->pool;
	struct pa_page *sp = pfn_page(pool, src);
	unsigned order = page_order(sp);
	pa_pfn_t dst = alloc_target(pool, sp, order);
	if (dst == PA_NIL) {
		pa_lock(&z->lock, SITE_ADMIN);
		migrate_putback(z, src);
		pa_unlock(&z->lock);
		return PA_MIGRATE_BUSY;
	}
	struct pa_page *dp = pfn_page(pool, dst);
	struct pa_zone *dz = zone_of_pfn(pool, dst);
	enum pa_migrate_result r = copy_and_ask(pool, src, dst, order);
	lock_pair(z, dz);
	if ((page_flags(sp) | page_flags(dp)) & PF_FREE_PENDING) { /* the folio was freed */
		set_page_flags(sp, page_flags(sp) | PF_FREE_PENDING);
		r = PA_MIGRATE_BUSY;
	}
	pa_pfn_t unused = r == PA_MIGRATE_OK ? src : dst;
	struct pa_zone *uz = r == PA_MIGRATE_OK ? z : dz;
	if (r == PA_MIGRATE_OK) {
		commit_dst(dp, sp);
		z->stat[PA_ZS_PGMIGRATE_SUCCESS] += 1ull << order;
		z->folios_migrated[order]++;
	} else {
		z->stat[PA_ZS_PGMIGRATE_FAIL] += 1ull << order;
		migrate_putback(z, src); /* frees it if the owner freed either copy */
	}
	struct pa_page *u = pfn_page(pool, unused);
	set_page_flags(u, 0);
	set_page_owner(u, 0);
	u->private = 0;
	free_pending_block(uz, unused, order);
	unlock_pair(z, dz);
	return r;
}

/* Make the frame at pfn the head of an allocated block of order, a copy of head. Zone lock held. */
static void copy_head(struct pa_pool *pool, struct pa_page *head, pa_pfn_t pfn, unsigned order)
{
	struct pa_page *t = pfn_page(pool, pfn);
	if (t == head) {
		set_page_order(head, order);
		return;
	}
	set_page_order(t, order);
	set_page_mt(t, page_mt(head));
	set_page_flags(t, page_flags(head) & PF_COMP);
	set_page_owner(t, page_owner(head));
	set_page_pins(t, 0);
	t->private = head->private;
	__atomic_store_n(&t->state, (uint8_t)PS_ALLOC, __ATOMIC_RELEASE);
}

/*
 * Make the allocated block at pfn into blocks of new_order, each head a copy
 * of the old one (its folio flag, type, owner and cookie). Zone lock held.
 */
static void split_heads(struct pa_pool *pool, pa_pfn_t pfn, unsigned order, unsigned new_order)
{
	struct pa_page *head = pfn_page(pool, pfn);
	for (uint64_t i = 1ull << new_order; i < (1ull << order); i += 1ull << new_order)
		copy_head(pool, head, pfn + i, new_order);
	set_page_order(head, new_order);
}

/*
 * Split an isolated folio into order-0 folios with the same owner and
 * cookie (compaction before seed 003 did this to every large folio). The
 * owner hears of it through its split callback. Zone lock held.
 */
void migrate_split_folio(struct pa_zone *z, pa_pfn_t pfn)
{
	struct pa_pool *pool = z->pool;
	struct pa_page *head = pfn_page(pool, pfn);
	unsigned order = page_order(head);
	set_page_flags(head, page_flags(head) & ~PF_COMP);
	split_heads(pool, pfn, order, 0);
	/* Allocations are counted per order: the folio is now 2^order order-0 ones. */
	z->stat[PA_ZS_COMPACT_FOLIOS_SPLIT]++;
	const struct pa_owner_ops *ops = &pool->owners[page_owner(head)];
	if (ops->split) {
		pa_unlock(&z->lock);
		ops->split(ops->ctx, head->private, head, order);
		pa_lock(&z->lock, SITE_ADMIN);
	}
}

/*
 * Why a folio cannot be split, or 0. Zone lock held. Taking the head from
 * PS_ALLOC to PS_ISOLATED claims it: a free through a per-CPU list or a
 * compaction scanner sees a folio that is busy while the tails are written.
 */
static int split_claim(struct pa_page *head, unsigned order, unsigned new_order)
{
	unsigned st = page_state(head);
	if (st == PS_ISOLATED || st == PS_MIGRATING)
		return -EBUSY;
	if (st != PS_ALLOC || page_order(head) != order || new_order >= order)
		return -EINVAL;
	if (page_pins(head))
		return -EBUSY;
	uint8_t alloc = PS_ALLOC;
	if (!__atomic_compare_exchange_n(&head->state, &alloc, (uint8_t)PS_ISOLATED, false,
	                                 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return -EBUSY;
	return 0;
}

int pa_split_folio_at(struct pa_pool *pool, struct pa_page *folio, unsigned order,
                      unsigned new_order, struct pa_page *page)
{
	pa_pfn_t pfn = pool && folio ? page_to_pfn_checked(pool, folio) : PA_PFN_INVALID;
	pa_pfn_t at = pool && page ? page_to_pfn_checked(pool, page) : PA_PFN_INVALID;
	struct pa_zone *z = pfn != PA_PFN_INVALID ? zone_of_pfn(pool, pfn) : NULL;
	if (!z || order > pool->max_order_boot || at < pfn || at - pfn >= (1ull << order))
		return -EINVAL;
	pa_lock(&z->lock, SITE_ADMIN);
	int rc = split_claim(folio, order, new_order);
	if (rc == 0) {
		/* Halve down to new_order: the half without `at` stays whole, as a buddy split does. */
		pa_pfn_t base = pfn;
		for (unsigned o = order; o > new_order; o--) {
			uint64_t half = 1ull << (o - 1);
			pa_pfn_t other = at < base + half ? base + half : base;
			if (other == base)
				base += half;
			copy_head(pool, folio, other, o - 1);
		}
		copy_head(pool, folio, base, new_order);
		set_page_state(folio, PS_ALLOC);
	}
	pa_unlock(&z->lock);
	return rc;
}

int pa_split_folio(struct pa_pool *pool, struct pa_page *folio, unsigned order, unsigned new_order)
{
	pa_pfn_t pfn = pool && folio ? page_to_pfn_checked(pool, folio) : PA_PFN_INVALID;
	struct pa_zone *z = pfn != PA_PFN_INVALID ? zone_of_pfn(pool, pfn) : NULL;
	if (!z || order > pool->max_order_boot)
		return -EINVAL;
	pa_lock(&z->lock, SITE_ADMIN);
	int rc = split_claim(folio, order, new_order);
	if (rc == 0) {
		split_heads(pool, pfn, order, new_order);
		set_page_state(folio, PS_ALLOC);
	}
	pa_unlock(&z->lock);
	return rc;
}
