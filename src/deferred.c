/* SPDX-License-Identifier: MIT */
/*
 * Deferred frame init, as Linux's CONFIG_DEFERRED_STRUCT_PAGE_INIT: boot
 * initialises the first chunk of each zone, and a thread per node (Linux's
 * pgdatinitN) the rest, a chunk at a time under the zone lock. A chunk is
 * aligned to the larger of a section and a max-order block, so no
 * max-order block is ever freed half-initialised (the case the seed's
 * patch 4 fixes). An allocation that runs short before the threads are
 * done initialises more itself (deferred_grow_zone, in alloc.c). When the
 * last thread ends, min_free_kbytes, the watermarks and the per-CPU list
 * sizes are computed again from the full managed size, so the pool ends
 * exactly as one booted with deferred_init=0.
 */
#include "deferred.h"

#include "platform/platform.h"
#include "zone.h"

struct deferred_arg {
	struct pa_deferred *d;
	unsigned node;
};

struct pa_deferred {
	struct pa_pool *pool;
	pa_thread_t threads[PA_MAX_NODES];
	unsigned nr_threads;
	_Atomic bool stop;
	struct pa_mutex lock;
	struct pa_cond done_cond;
	unsigned running;         /* threads not finished (lock) */
	bool done;                /* every zone initialised, watermarks redone (lock) */
	_Atomic unsigned pending; /* lazy: zones with frames still to set up */
	struct deferred_arg arg[PA_MAX_NODES];
};

static void mark_done(struct pa_deferred *d)
{
	pa_mutex_lock(&d->lock);
	d->done = true;
	pa_cond_broadcast(&d->done_cond);
	pa_mutex_unlock(&d->lock);
}

static bool zone_pending(struct pa_zone *z)
{
	pa_lock(&z->lock, SITE_ADMIN);
	bool more = !atomic_load_explicit(&z->pool->deferred->stop, memory_order_relaxed) &&
	            zone_init_next_chunk(z);
	pa_unlock(&z->lock);
	return more;
}

static void deferred_main(void *argp)
{
	const struct deferred_arg *a = argp;
	struct pa_deferred *d = a->d;
	unsigned node = a->node;
	struct pa_pool *pool = d->pool;
	for (unsigned i = 0; i < pool->nr_zones; i++)
		if (pool->zones[i].node == node)
			while (zone_pending(&pool->zones[i]))
				;
	pa_mutex_lock(&d->lock);
	bool last = --d->running == 0;
	pa_mutex_unlock(&d->lock);
	if (last && !atomic_load(&d->stop))
		zone_init_done(pool);
	if (last)
		mark_done(d);
}

static unsigned zones_pending(const struct pa_pool *pool)
{
	unsigned n = 0;
	for (unsigned i = 0; i < pool->nr_zones; i++)
		n += pool->zones[i].init_pfn < pool->zones[i].end_pfn;
	return n;
}

void deferred_zone_whole(struct pa_zone *z)
{
	struct pa_pool *pool = z->pool;
	if (!pool->deferred || !pool->cfg.deferred_lazy ||
	    atomic_fetch_sub(&pool->deferred->pending, 1) != 1)
		return;
	atomic_store_explicit(&pool->deferred_finish, true, memory_order_relaxed);
	pa_lock_defer(&z->lock);
}

void deferred_finish(struct pa_pool *pool)
{
	if (!atomic_exchange(&pool->deferred_finish, false))
		return;
	zone_init_done(pool);
	mark_done(pool->deferred);
}

/* Lazy: no threads; allocations that run short and pa_deferred_grow() set frames up. */
static int lazy_start(struct pa_pool *pool, struct pa_deferred *d)
{
	atomic_store(&d->pending, zones_pending(pool));
	pool->deferred = d;
	return 0;
}

int deferred_init_start(struct pa_pool *pool, char *err, size_t errlen)
{
	if (!zones_pending(pool))
		return 0;
	struct pa_deferred *d = pa_calloc(&pool->plat, 1, sizeof *d);
	if (!d) {
		pa_snprintf(err, errlen, "deferred_init: out of memory");
		return -ENOMEM;
	}
	d->pool = pool;
	pa_mutex_init(&d->lock, &pool->plat);
	pa_cond_init(&d->done_cond, &pool->plat);
	if (pool->cfg.deferred_lazy)
		return lazy_start(pool, d);
	pool->deferred = d;
	d->running = pool->nr_nodes;
	for (unsigned n = 0; n < pool->nr_nodes; n++) {
		d->arg[n].d = d;
		d->arg[n].node = n;
		int rc = -platform_thread_start(&pool->plat, &d->threads[n], deferred_main,
		                                &d->arg[n]);
		if (rc == ENOSYS && n == 0) {
			/* No workers here: the nodes are initialised now, in the caller's context. */
			for (unsigned m = 0; m < pool->nr_nodes; m++) {
				d->arg[m] = (struct deferred_arg){ d, m };
				deferred_main(&d->arg[m]);
			}
			return 0;
		}
		if (rc) {
			pa_snprintf(err, errlen, "deferred_init: cannot start a thread (%s)",
			            platform_strerror(rc));
			atomic_store(&d->stop, true);
			pa_mutex_lock(&d->lock);
			d->running -= pool->nr_nodes - n; /* the threads never started */
			d->done = d->running == 0;
			pa_mutex_unlock(&d->lock);
			return -rc;
		}
		d->nr_threads++;
	}
	return 0;
}

bool deferred_init_done(struct pa_pool *pool)
{
	struct pa_deferred *d = pool->deferred;
	if (!d)
		return true;
	pa_mutex_lock(&d->lock);
	bool done = d->done;
	pa_mutex_unlock(&d->lock);
	return done;
}

void pa_deferred_init_wait(struct pa_pool *pool)
{
	if (!pool || !pool->deferred || pool->cfg.deferred_lazy)
		return;
	struct pa_deferred *d = pool->deferred;
	pa_mutex_lock(&d->lock);
	while (!d->done)
		pa_cond_wait(&d->done_cond, &d->lock);
	pa_mutex_unlock(&d->lock);
}

uint64_t pa_deferred_grow(struct pa_pool *pool, pa_pfn_t pfn)
{
	if (!pool || pfn >= pool->nr_frames)
		return 0;
	uint8_t zi =
	        __atomic_load_n(&pool->pb_zone[pfn >> pool->cfg.pageblock_order], __ATOMIC_RELAXED);
	if (zi >= pool->nr_zones)
		return 0; /* outside every zone */
	struct pa_zone *z = &pool->zones[zi];
	pa_lock(&z->lock, SITE_ADMIN);
	uint64_t was = z->managed_pages;
	while (z->init_pfn <= pfn && zone_init_next_chunk(z))
		;
	uint64_t grown = z->managed_pages - was;
	pa_unlock(&z->lock);
	deferred_finish(pool);
	return grown;
}

void deferred_init_stop(struct pa_pool *pool)
{
	struct pa_deferred *d = pool->deferred;
	if (!d)
		return;
	atomic_store(&d->stop, true);
	for (unsigned i = 0; i < d->nr_threads; i++)
		platform_thread_join(&pool->plat, d->threads[i]);
	pa_free(&pool->plat, d);
	pool->deferred = NULL;
}
