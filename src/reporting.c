/* SPDX-License-Identifier: MIT */
/*
 * Free page reporting, as Linux's mm/page_reporting.c and the devices that
 * use it (virtio-balloon's free page reporting): free blocks of order >=
 * page_reporting_order are taken off the free lists in batches of up to
 * PA_REPORTING_CAPACITY, handed to the device with the zone lock dropped,
 * and put back marked reported (PF_REPORTED), so they are not reported again
 * until allocated. A block put back that merges with its buddy is no longer
 * marked: the merged block is reported again as a whole.
 *
 * Linux's rules: a zone is skipped while its free pages are below the low
 * watermark plus a batch of the reporting order; each free list gets a
 * budget of ceil(nr_free / (capacity * 16)) batches per pass, after which a
 * new pass is requested; ISOLATE lists are skipped; the worker runs a delay
 * (page_reporting_delay_ms, Linux's 2 s) after a free of the reporting order
 * asks for it. A device that takes ranges only up to page_reporting_max_order
 * gets a larger block as several ranges; the buddy keeps it whole.
 *
 * While held for the call a block is PS_CAPTURED and counted in the zone's
 * reserved pages, as compaction's captured blocks are, so pa_validate and
 * every scanner see it as neither free nor allocated.
 *
 * Untouched memory (free chunks never handed out since boot, whose
 * descriptors were never written; zone.c) is not reported, on purpose: it
 * was never written, so a hypervisor never backed it and there is nothing
 * to give back, and reporting it would write a descriptor per max-order
 * block, the cost that keeping it untouched saves (about a byte per frame
 * of the frame map made resident). vmstat's nr_free_untouched counts it.
 * Everything else that is free is reportable: a chunk's descriptors are
 * written when the first of its blocks is handed out or walked, and its
 * blocks go on the free lists from then on, never back to untouched.
 */
#include "reporting.h"

#include "platform/platform.h"
#include "buddy.h"
#include "device.h"
#include "memmap.h"
#include "zone.h"

struct pa_reporting {
	struct pa_pool *pool;
	unsigned order;     /* the smallest order reported */
	unsigned dev_order; /* the largest range the device takes */

	struct pa_mutex dev_lock; /* a pass or a (un)registration at a time */
	struct pa_page_reporting_ops ops;
	void *arg;
	bool registered;
	_Atomic unsigned flags; /* PA_REPORTING_ZEROES */

	/* The worker (page_reporting=thread), running while a device is registered. */
	struct pa_mutex lock;
	struct pa_cond cond;
	pa_thread_t thread;
	bool has_thread, stop; /* lock */
	_Atomic bool requested;
};

/* ---------------------------------------------------------------------- */
/* One pass                                                                */
/* ---------------------------------------------------------------------- */

/* Hand held blocks of one order to the device as ranges of at most dev_order. 0 or its error. */
static int deliver(struct pa_reporting *r, const pa_pfn_t *blocks, unsigned n, unsigned order)
{
	struct pa_pool *pool = r->pool;
	struct pa_reported_range ranges[PA_REPORTING_CAPACITY];
	unsigned ro = order < r->dev_order ? order : r->dev_order, nr = 0;
	uint64_t per_block = 1ull << (order - ro);
	for (unsigned b = 0; b < n; b++) {
		for (uint64_t i = 0; i < per_block; i++) {
			ranges[nr++] = (struct pa_reported_range){ blocks[b] + (i << ro), ro };
			bool last = b + 1 == n && i + 1 == per_block;
			if (nr < PA_REPORTING_CAPACITY && !last)
				continue;
			int rc = r->ops.report(r->arg, ranges, nr);
			pool_stat_inc(pool, PA_PS_REPORT_CALLS);
			if (rc) {
				pool_stat_inc(pool, PA_PS_REPORT_REFUSED);
				return rc;
			}
			atomic_fetch_add_explicit(&pool->pool_stat[PA_PS_REPORTED_PAGES],
			                          (uint64_t)nr << ro, memory_order_relaxed);
			nr = 0;
		}
	}
	return 0;
}

/* Take a free block off its list for the call; what is known zero of it. Zone lock held. */
static struct pa_clean hold(struct pa_zone *z, pa_pfn_t pfn, unsigned order)
{
	struct pa_clean clean = buddy_head_clean(z, pfn);
	buddy_list_del(z, pfn);
	set_page_state(pfn_page(z->pool, pfn), PS_CAPTURED);
	z->reserved_pages += 1ull << order;
	return clean;
}

/*
 * Free the held blocks again, with what was known zero of them (all of
 * them when the device took them and says they read as zero now); marked
 * reported if the device took them and they stay unmerged.
 */
static void put_back(struct pa_reporting *r, struct pa_zone *z, const pa_pfn_t *blocks,
                     const struct pa_clean *clean, unsigned n, unsigned order, bool reported)
{
	struct pa_pool *pool = z->pool;
	bool zeroed = reported &&
	              (atomic_load_explicit(&r->flags, memory_order_relaxed) & PA_REPORTING_ZEROES);
	for (unsigned b = 0; b < n; b++) {
		z->reserved_pages -= 1ull << order;
		/* split where its pageblocks now differ */
		device_free_block_clean(z, blocks[b], order,
		                        zeroed ? clean_full(1ull << order) : clean[b]);
	}
	for (unsigned b = 0; reported && b < n; b++) {
		struct pa_page *p = pfn_page(pool, blocks[b]);
		if (page_state_relaxed(p) == PS_FREE && page_order(p) == order)
			set_page_flags(p, (page_flags(p) & PF_CLEARED) | PF_REPORTED);
	}
}

/*
 * Report the unreported blocks of one free list, a batch at a time, within
 * the budget. The walk starts over from the head after each batch: the list
 * changed while the lock was dropped. Zone lock held on entry and exit.
 * Returns frames reported; *err is set on a refusal, *again when the budget ran
 * out (the other lists go on, as Linux's page_reporting_cycle()).
 */
static uint64_t report_list(struct pa_reporting *r, struct pa_zone *z, unsigned order, unsigned mt,
                            uint64_t budget, int *err, bool *again)
{
	pa_pfn_t blocks[PA_REPORTING_CAPACITY];
	struct pa_clean clean[PA_REPORTING_CAPACITY];
	unsigned n = 0;
	uint64_t frames = 0;
	for (pa_pfn_t pfn = buddy_list_peek(z, order, mt); pfn != PA_NIL || n;) {
		if (pfn != PA_NIL) {
			struct pa_page *p = pfn_page(z->pool, pfn);
			pa_pfn_t next = p->lru.next;
			if (!(page_flags(p) & PF_REPORTED)) {
				clean[n] = hold(z, pfn, order);
				blocks[n++] = pfn;
			}
			pfn = next;
			if (n < PA_REPORTING_CAPACITY && pfn != PA_NIL)
				continue;
		}
		pa_unlock(&z->lock);
		int rc = deliver(r, blocks, n, order);
		pa_lock(&z->lock, SITE_ADMIN);
		put_back(r, z, blocks, clean, n, order, rc == 0);
		frames += rc == 0 ? (uint64_t)n << order : 0;
		n = 0;
		if (rc) {
			*err = rc;
			break;
		}
		if (--budget == 0) {
			*again = true;
			break;
		}
		pfn = buddy_list_peek(z, order, mt);
	}
	return frames;
}

/* Linux's page_reporting_process_zone(). */
static uint64_t report_zone(struct pa_reporting *r, struct pa_zone *z, int *err, bool *again)
{
	struct pa_pool *pool = r->pool;
	uint64_t frames = 0;
	pa_lock(&z->lock, SITE_ADMIN);
	uint64_t mark = z->wmark[PA_WMARK_LOW] + ((uint64_t)PA_REPORTING_CAPACITY << r->order);
	if (!zone_watermark_ok(z, 0, mark, ALLOC_CMA)) {
		pa_unlock(&z->lock);
		return 0;
	}
	for (unsigned o = r->order; o <= pool->cfg.max_order && !*err; o++) {
		uint64_t budget = (zone_free_blocks(z, o) + PA_REPORTING_CAPACITY * 16 - 1) /
		                  (PA_REPORTING_CAPACITY * 16);
		for (unsigned mt = 0; mt < PA_MT_COUNT && !*err; mt++)
			if (mt != PA_MT_ISOLATE && buddy_list_peek(z, o, mt) != PA_NIL)
				frames += report_list(r, z, o, mt, budget ? budget : 1, err, again);
	}
	pa_unlock(&z->lock);
	return frames;
}

/* One pass over every zone; -ENODEV without a device. *again: more remains for another pass. */
static long reporting_pass(struct pa_reporting *r, bool *again)
{
	struct pa_pool *pool = r->pool;
	int err = 0;
	uint64_t frames = 0;
	pa_mutex_lock(&r->dev_lock);
	if (!r->registered) {
		pa_mutex_unlock(&r->dev_lock);
		return -ENODEV;
	}
	for (unsigned i = 0; i < pool->nr_zones && !err; i++)
		frames += report_zone(r, &pool->zones[i], &err, again);
	pa_mutex_unlock(&r->dev_lock);
	return (long)frames;
}

/* ---------------------------------------------------------------------- */
/* The worker                                                              */
/* ---------------------------------------------------------------------- */

/* Wait on the condition until the delay has passed or stop; r->lock held. */
static void wait_for(struct pa_reporting *r, uint64_t delay_ns)
{
	const struct pa_platform *plat = &r->pool->plat;
	uint64_t start = plat->now_ns(plat->ctx);
	for (uint64_t spent = 0; !r->stop && spent < delay_ns;
	     spent = plat->now_ns(plat->ctx) - start)
		pa_cond_timedwait(&r->cond, &r->lock, delay_ns - spent);
}

static void reporting_main(void *arg)
{
	struct pa_reporting *r = arg;
	pa_mutex_lock(&r->lock);
	while (!r->stop) {
		if (!atomic_load(&r->requested)) {
			pa_cond_wait(&r->cond, &r->lock);
			continue;
		}
		/* Let free memory build up for the delay, as Linux's delayed work. */
		wait_for(r, (uint64_t)r->pool->cfg.page_reporting_delay_ms * 1000000ull);
		if (r->stop)
			break;
		atomic_store(&r->requested, false);
		pa_mutex_unlock(&r->lock);
		bool again = false;
		reporting_pass(r, &again);
		pa_mutex_lock(&r->lock);
		if (again)
			atomic_store(&r->requested, true);
	}
	pa_mutex_unlock(&r->lock);
}

void reporting_notify(struct pa_pool *pool)
{
	struct pa_reporting *r = pool->reporting;
	if (atomic_exchange(&r->requested, true))
		return;
	pa_mutex_lock(&r->lock);
	if (r->has_thread)
		pa_cond_signal(&r->cond);
	pa_mutex_unlock(&r->lock);
}

static void worker_stop(struct pa_reporting *r)
{
	pa_mutex_lock(&r->lock);
	bool had = r->has_thread;
	r->stop = true;
	pa_cond_broadcast(&r->cond);
	pa_mutex_unlock(&r->lock);
	if (had)
		platform_thread_join(&r->pool->plat, r->thread);
	pa_mutex_lock(&r->lock);
	r->has_thread = false;
	r->stop = false;
	pa_mutex_unlock(&r->lock);
}

/* ---------------------------------------------------------------------- */
/* Public API                                                              */
/* ---------------------------------------------------------------------- */

int pa_page_reporting_register(struct pa_pool *pool, const struct pa_page_reporting_ops *ops,
                               void *arg)
{
	if (!pool || !ops || !ops->report)
		return -EINVAL;
	struct pa_reporting *r = pool->reporting;
	pa_mutex_lock(&r->dev_lock);
	if (r->registered) {
		pa_mutex_unlock(&r->dev_lock);
		return -EBUSY;
	}
	r->ops = *ops;
	r->arg = arg;
	r->registered = true;
	atomic_store(&r->flags,
	             0u); /* a new device: nothing said yet (pa_page_reporting_set_flags) */
	atomic_store(&r->requested, true); /* as Linux: assume there is free memory to report */
	int rc = 0;
	if (!pool->cfg.page_reporting_manual) {
		pa_mutex_lock(&r->lock);
		rc = platform_thread_start(&pool->plat, &r->thread, reporting_main, r);
		r->has_thread = rc == 0;
		/* Without threads, reporting is what page_reporting=manual makes it: pa_page_reporting_run(). */
		if (rc == -ENOSYS)
			rc = 0;
		pa_mutex_unlock(&r->lock);
	}
	r->registered = rc == 0;
	atomic_store(&pool->reporting_notify_order, rc == 0 ? r->order : UINT32_MAX);
	pa_mutex_unlock(&r->dev_lock);
	return rc;
}

void pa_page_reporting_unregister(struct pa_pool *pool)
{
	if (!pool)
		return;
	struct pa_reporting *r = pool->reporting;
	atomic_store(&pool->reporting_notify_order, UINT32_MAX);
	worker_stop(r);
	pa_mutex_lock(&r->dev_lock); /* waits for a pass in progress */
	r->registered = false;
	atomic_store(&r->requested, false);
	pa_mutex_unlock(&r->dev_lock);
}

int pa_page_reporting_set_flags(struct pa_pool *pool, unsigned flags)
{
	if (!pool || (flags & ~PA_REPORTING_ZEROES))
		return -EINVAL;
	struct pa_reporting *r = pool->reporting;
	pa_mutex_lock(&r->dev_lock);
	int rc = r->registered ? 0 : -ENODEV;
	if (rc == 0)
		atomic_store(&r->flags, flags);
	pa_mutex_unlock(&r->dev_lock);
	return rc;
}

long pa_page_reporting_run(struct pa_pool *pool)
{
	if (!pool)
		return -EINVAL;
	bool again = false;
	return reporting_pass(pool->reporting, &again);
}

int pa_page_reported(struct pa_pool *pool, const struct pa_page *page)
{
	pa_pfn_t pfn = pool && page ? page_to_pfn_checked(pool, page) : PA_PFN_INVALID;
	struct pa_zone *z = pfn != PA_PFN_INVALID ? zone_of_pfn(pool, pfn) : NULL;
	if (!z)
		return -EINVAL;
	pa_lock(&z->lock, SITE_ADMIN);
	unsigned st = page_state(page);
	int rc = st == PS_ALLOC || st == PS_ISOLATED ? !!(page_flags(page) & PF_REPORTED) : -EINVAL;
	pa_unlock(&z->lock);
	return rc;
}

int reporting_init(struct pa_pool *pool, char *err, size_t errlen)
{
	const struct pa_boot_config *c = &pool->cfg;
	struct pa_reporting *r = pa_calloc(&pool->plat, 1, sizeof *r);
	atomic_store(&pool->reporting_notify_order, UINT32_MAX);
	if (!r) {
		pa_snprintf(err, errlen, "page_reporting: out of memory");
		return -ENOMEM;
	}
	r->pool = pool;
	r->order = c->page_reporting_order < 0 ? c->pageblock_order :
	                                         (unsigned)c->page_reporting_order;
	r->dev_order = c->page_reporting_max_order < 0 ? c->max_order :
	                                                 (unsigned)c->page_reporting_max_order;
	pa_mutex_init(&r->dev_lock, &pool->plat);
	pa_mutex_init(&r->lock, &pool->plat);
	pa_cond_init(&r->cond, &pool->plat);
	pool->reporting = r;
	return 0;
}

void reporting_stop(struct pa_pool *pool)
{
	struct pa_reporting *r = pool->reporting;
	if (!r)
		return;
	pa_page_reporting_unregister(pool);
	pa_free(&pool->plat, r);
	pool->reporting = NULL;
}
