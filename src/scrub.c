/* SPDX-License-Identifier: MIT */
/*
 * The scrubber: zero dirty free memory while the pool is idle, so that
 * zeroing allocations find it zero (Xen's idle scrubbing).
 *
 * A pass walks each zone's lists from the largest order down and takes the
 * first block that is not all known zero: off its list, its head PS_CAPTURED
 * and its frames counted as reserved (pa_validate sees them held), so no
 * one allocates it. The zone lock is dropped and the block is zeroed from
 * its clean prefix on, a piece at a time; between pieces the scrubber looks
 * whether anyone wants the zone (its lock taken, its free count moved) and
 * if so stops at once. The block goes back with the frames zeroed so far
 * known zero, merging with its buddies as any free does.
 *
 * pa_scrub() runs a pass in the caller's thread; pa_scrubber_start() runs
 * one every interval from a worker of the platform's thread service (a
 * platform without threads refuses it, -ENOSYS, and calls pa_scrub()).
 */
#include "device.h"

#include "platform/platform.h"
#include "buddy.h"
#include "memmap.h"

#define SCRUB_PIECE_BYTES (256u << 10) /* zeroed between two looks at the zone */
#define SCRUB_LOOK        64           /* blocks looked at per list and pass */

struct pa_scrubber {
	struct pa_pool *pool;
	pa_thread_t thread;
	struct pa_mutex lock; /* guards stop */
	struct pa_cond cond;
	bool stop;
	unsigned interval_ms;
};

/* The first dirty free block of the largest order that has one, taken off its list. Zone lock. */
static pa_pfn_t scrub_pick(struct pa_zone *z, struct pa_clean *clean)
{
	struct pa_pool *pool = z->pool;
	for (unsigned o = pool->cfg.max_order + 1; o-- > 0;)
		for (unsigned mt = 0; mt < PA_MT_COUNT; mt++) {
			if (mt == PA_MT_ISOLATE)
				continue;
			pa_pfn_t pfn = buddy_list_peek(z, o, mt);
			for (unsigned n = 0; pfn != PA_NIL && n < SCRUB_LOOK; n++) {
				*clean = buddy_head_clean(z, pfn);
				if (clean_count(*clean, 1ull << o) < (1ull << o)) {
					buddy_list_del(z, pfn);
					set_page_state(pfn_page(pool, pfn), PS_CAPTURED);
					z->reserved_pages += 1ull << o;
					return pfn;
				}
				pfn = pfn_page(pool, pfn)->lru.next;
			}
		}
	return PA_NIL;
}

/* Does anyone want the zone? Its lock held by another, or its free memory moved. */
static bool scrub_contended(struct pa_zone *z, uint64_t free0)
{
	return atomic_load_explicit(&z->lock.v, memory_order_relaxed) != 0 ||
	       zone_nr_free(z) != free0;
}

/*
 * Zero frames [from, n) of the held block at pfn, a piece at a time, until
 * done, the budget is spent or the zone is wanted. Returns where it got.
 */
static uint64_t scrub_zero(struct pa_zone *z, pa_pfn_t pfn, uint64_t from, uint64_t n,
                           uint64_t budget, uint64_t free0)
{
	struct pa_pool *pool = z->pool;
	uint64_t piece = SCRUB_PIECE_BYTES >> pool->cfg.page_shift;
	if (piece == 0)
		piece = 1;
	while (from < n && budget) {
		uint64_t k = n - from < piece ? n - from : piece;
		if (k > budget)
			k = budget;
		memset(pool->base + ((pfn + from) << pool->cfg.page_shift), 0,
		       (size_t)k << pool->cfg.page_shift);
		from += k;
		budget -= k;
		if (scrub_contended(z, free0))
			break;
	}
	return from;
}

/* Scrub one block of the zone; the frames zeroed, 0 when nothing is dirty. *stop: wanted. */
static uint64_t scrub_one(struct pa_zone *z, uint64_t budget, bool *stop)
{
	struct pa_pool *pool = z->pool;
	struct pa_clean clean = PA_CLEAN_NONE;
	pa_lock(&z->lock, SITE_ADMIN);
	pa_pfn_t pfn = scrub_pick(z, &clean);
	uint64_t free0 = zone_nr_free(z);
	pa_unlock(&z->lock);
	if (pfn == PA_NIL)
		return 0;
	unsigned order = pfn_page(pool, pfn)->order;
	uint64_t size = 1ull << order, dirty_end = size - clean.suf; /* the dirty middle's end */
	uint64_t done = scrub_zero(z, pfn, clean.pre, dirty_end, budget, free0);
	*stop = done < dirty_end;
	struct pa_clean now = clean_norm((struct pa_clean){ done, clean.suf }, size);
	pa_lock(&z->lock, SITE_ADMIN);
	z->reserved_pages -= size;
	device_free_block_clean(z, pfn, order, now);
	pa_unlock(&z->lock);
	atomic_fetch_add_explicit(&pool->pool_stat[PA_PS_PGSCRUB], done - clean.pre,
	                          memory_order_relaxed);
	return done - clean.pre;
}

long pa_scrub(struct pa_pool *pool, uint64_t max_frames)
{
	if (!pool)
		return -EINVAL;
	if (!pool->base)
		return 0; /* no bytes: a device's memory is cleared by the device */
	uint64_t budget = max_frames ? max_frames : UINT64_MAX, total = 0;
	for (unsigned i = 0; i < pool->nr_zones && total < budget; i++) {
		struct pa_zone *z = &pool->zones[i];
		bool stop = false;
		while (total < budget && !stop) {
			uint64_t n = scrub_one(z, budget - total, &stop);
			if (n == 0 && !stop)
				break; /* nothing dirty left in this zone */
			total += n;
		}
		if (stop)
			break;
	}
	return (long)total;
}

/* Sleep interval_ms, or until told to stop; true when stopping. */
static bool scrub_wait(struct pa_scrubber *s)
{
	const struct pa_platform *plat = &s->pool->plat;
	uint64_t delay = (uint64_t)s->interval_ms * 1000000ull, start = plat->now_ns(plat->ctx);
	pa_mutex_lock(&s->lock);
	for (uint64_t spent = 0; !s->stop && spent < delay; spent = plat->now_ns(plat->ctx) - start)
		pa_cond_timedwait(&s->cond, &s->lock, delay - spent);
	bool stop = s->stop;
	pa_mutex_unlock(&s->lock);
	return stop;
}

static void scrub_main(void *arg)
{
	struct pa_scrubber *s = arg;
	while (!scrub_wait(s))
		pa_scrub(s->pool, 0);
}

int pa_scrubber_start(struct pa_pool *pool, unsigned interval_ms)
{
	if (!pool || interval_ms == 0)
		return -EINVAL;
	struct pa_scrubber *s = pa_calloc(&pool->plat, 1, sizeof *s);
	if (!s)
		return -ENOMEM;
	*s = (struct pa_scrubber){ .pool = pool, .interval_ms = interval_ms };
	pa_mutex_init(&s->lock, &pool->plat);
	pa_cond_init(&s->cond, &pool->plat);
	struct pa_scrubber *none = NULL;
	if (!__atomic_compare_exchange_n(&pool->scrubber, &none, s, false, __ATOMIC_ACQ_REL,
	                                 __ATOMIC_ACQUIRE)) {
		pa_free(&pool->plat, s);
		return -EBUSY;
	}
	/* -ENOSYS without threads: such a platform calls pa_scrub() when it is idle. */
	int rc = platform_thread_start(&pool->plat, &s->thread, scrub_main, s);
	if (rc) {
		__atomic_store_n(&pool->scrubber, NULL, __ATOMIC_RELEASE);
		pa_free(&pool->plat, s);
	}
	return rc;
}

void scrub_stop(struct pa_pool *pool)
{
	struct pa_scrubber *s = __atomic_exchange_n(&pool->scrubber, NULL, __ATOMIC_ACQ_REL);
	if (!s)
		return;
	pa_mutex_lock(&s->lock);
	s->stop = true;
	pa_cond_signal(&s->cond);
	pa_mutex_unlock(&s->lock);
	platform_thread_join(&s->pool->plat, s->thread);
	pa_free(&s->pool->plat, s);
}

void pa_scrubber_stop(struct pa_pool *pool)
{
	if (pool)
		scrub_stop(pool);
}
