/* SPDX-License-Identifier: MIT */
/*
 * The platform layer's own half: what the core builds on the hooks of
 * struct pa_platform, the same on every platform. The zone lock's slow path
 * and the sleeping mutexes and condition variables sleep through the wait
 * and wake hooks (a futex where there is one); the core's small allocations
 * go through the alloc hook; workers start through thread_start, and where
 * a platform has none their callers do the work themselves. The defaults of
 * the hooks are one file per platform (platform/posix.c,
 * platform/freestanding.c).
 */
#include "platform.h"

#include "../pool.h"

const char *platform_check(const struct pa_platform *plat)
{
	unsigned mem = !!plat->reserve + !!plat->commit + !!plat->release;
	if (mem != 0 && mem != 3)
		return "reserve, commit and release are given all three or none";
	if (!plat->alloc != !plat->free)
		return "alloc and free are given both or neither";
	if (!plat->wait != !plat->wake)
		return "wait and wake are given both or neither";
	if (!plat->thread_start != !plat->thread_join)
		return "thread_start and thread_join are given both or neither";
	return NULL;
}

void platform_fill_defaults(struct pa_platform *plat)
{
	platform_os_defaults(plat);
}

/* ---------------------------------------------------------------------- */
/* Small allocations                                                       */
/* ---------------------------------------------------------------------- */

/* The size asked, kept in front of the block for pa_free(); 16 bytes keep the alignment. */
#define ALLOC_HEADER 16
/* Without an alloc hook (a freestanding build's default): whole pages of the metadata hooks. */
#define ALLOC_PAGE   4096

static void *alloc_pages(const struct pa_platform *plat, size_t *bytes)
{
	*bytes = (*bytes + ALLOC_PAGE - 1) & ~(size_t)(ALLOC_PAGE - 1);
	void *p = plat->reserve(plat->ctx, *bytes);
	if (p && plat->commit(plat->ctx, p, *bytes) != 0) {
		plat->release(plat->ctx, p, *bytes);
		p = NULL;
	}
	return p;
}

void *pa_malloc(const struct pa_platform *plat, size_t bytes)
{
	if (bytes > SIZE_MAX - ALLOC_PAGE)
		return NULL;
	size_t total = bytes + ALLOC_HEADER;
	char *p = plat->alloc ? plat->alloc(plat->ctx, total) : alloc_pages(plat, &total);
	if (!p)
		return NULL;
	*(size_t *)p = total;
	return p + ALLOC_HEADER;
}

void *pa_calloc(const struct pa_platform *plat, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	void *p = pa_malloc(plat, n * size);
	if (p)
		memset(p, 0, n * size);
	return p;
}

void pa_free(const struct pa_platform *plat, void *p)
{
	if (!p)
		return;
	char *block = (char *)p - ALLOC_HEADER;
	if (plat->free)
		plat->free(plat->ctx, block, *(size_t *)block);
	else
		plat->release(plat->ctx, block, *(size_t *)block);
}

/* The address pa_malloc() gave is kept in the word before the aligned block. */
void *pa_malloc_aligned(const struct pa_platform *plat, size_t bytes, size_t align)
{
	if (bytes > SIZE_MAX - align - sizeof(void *))
		return NULL;
	char *raw = pa_malloc(plat, bytes + align + sizeof(void *));
	if (!raw)
		return NULL;
	uintptr_t at = ((uintptr_t)raw + sizeof(void *) + align - 1) & ~(uintptr_t)(align - 1);
	((void **)at)[-1] = raw;
	return (void *)at;
}

void pa_free_aligned(const struct pa_platform *plat, void *p)
{
	if (p)
		pa_free(plat, ((void **)p)[-1]);
}

/* ---------------------------------------------------------------------- */
/* Sleeping mutexes and condition variables                                */
/* ---------------------------------------------------------------------- */

void pa_mutex_init(struct pa_mutex *m, const struct pa_platform *plat)
{
	atomic_init(&m->v, 0);
	m->plat = plat;
}

/* 0 -> 1 takes it; else mark it 2 (a sleeper may be waiting) and sleep until it is free. */
void pa_mutex_lock(struct pa_mutex *m)
{
	uint32_t free = 0;
	if (atomic_compare_exchange_strong_explicit(&m->v, &free, 1, memory_order_acquire,
	                                            memory_order_relaxed))
		return;
	while (atomic_exchange_explicit(&m->v, 2, memory_order_acquire) != 0)
		platform_wait(m->plat, &m->v, 2, UINT64_MAX);
}

void pa_mutex_unlock(struct pa_mutex *m)
{
	if (atomic_exchange_explicit(&m->v, 0, memory_order_release) == 2)
		platform_wake(m->plat, &m->v, 1);
}

void pa_cond_init(struct pa_cond *c, const struct pa_platform *plat)
{
	atomic_init(&c->seq, 0);
	c->plat = plat;
}

/*
 * The sequence is read before the mutex is dropped: a signal between the
 * unlock and the sleep moves it on, and the wait hook then returns at once.
 */
static void cond_sleep(struct pa_cond *c, struct pa_mutex *m, uint64_t timeout_ns)
{
	uint32_t seq = atomic_load_explicit(&c->seq, memory_order_relaxed);
	pa_mutex_unlock(m);
	platform_wait(c->plat, &c->seq, seq, timeout_ns);
	pa_mutex_lock(m);
}

void pa_cond_wait(struct pa_cond *c, struct pa_mutex *m)
{
	cond_sleep(c, m, UINT64_MAX);
}

int pa_cond_timedwait(struct pa_cond *c, struct pa_mutex *m, uint64_t timeout_ns)
{
	const struct pa_platform *plat = c->plat;
	uint64_t t0 = plat->now_ns(plat->ctx);
	cond_sleep(c, m, timeout_ns);
	return plat->now_ns(plat->ctx) - t0 >= timeout_ns ? -ETIMEDOUT : 0;
}

void pa_cond_signal(struct pa_cond *c)
{
	atomic_fetch_add_explicit(&c->seq, 1, memory_order_release);
	platform_wake(c->plat, &c->seq, 1);
}

void pa_cond_broadcast(struct pa_cond *c)
{
	atomic_fetch_add_explicit(&c->seq, 1, memory_order_release);
	platform_wake(c->plat, &c->seq, UINT_MAX);
}

/* ---------------------------------------------------------------------- */
/* Workers                                                                 */
/* ---------------------------------------------------------------------- */

int platform_thread_start(const struct pa_platform *plat, pa_thread_t *t, void (*fn)(void *arg),
                          void *arg)
{
	if (!plat->thread_start)
		return -ENOSYS;
	return plat->thread_start(plat->ctx, t, fn, arg);
}

void platform_thread_join(const struct pa_platform *plat, pa_thread_t t)
{
	plat->thread_join(plat->ctx, t);
}

/* ---------------------------------------------------------------------- */
/* CPU id, reports, assertions                                             */
/* ---------------------------------------------------------------------- */

unsigned pool_cpu_slow(const struct pa_pool *pool, unsigned cpu)
{
	if (!pool->cpu_default)
		cpu = pool->plat.cpu_id(pool->plat.ctx);
	else if ((int)cpu < 0)
		cpu = platform_cpu_slow(); /* the cache was empty, or rseq is not registered here */
	return cpu < pool->cfg.nr_cpus ? cpu : cpu % pool->cfg.nr_cpus;
}

void platform_report(const struct pa_pool *pool, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	pa_vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	pool->plat.report(pool->plat.ctx, line);
}

void pa_assert_fail(const char *expr, const char *file, int line, const char *func)
{
	char msg[512];
	pa_snprintf(msg, sizeof msg, "assertion failed: %s (%s:%d, %s)", expr, file, line, func);
	platform_stderr(msg);
	platform_panic();
}

/* ---------------------------------------------------------------------- */
/* The zone lock and the per-CPU list lock                                 */
/* ---------------------------------------------------------------------- */

/*
 * Spin tries before sleeping: twice the running average of the tries that
 * waits ending in the spin took, at least 32 and at most 1000. A wait that
 * had to sleep halves the average: its holder was most likely preempted, and
 * spinning on a preempted holder only burns the CPU it needs. A caller that
 * knows it waits for a long hold asks for more (pa_lock_min_spins()).
 */
#define LOCK_SPINS_MIN   16
#define LOCK_SPINS_START 100 /* 200 tries at first */
#define LOCK_SPINS_MAX   1000

void platform_lock_init(struct pa_lock *lock, struct pa_pool *pool, const char *name)
{
	atomic_init(&lock->v, 0);
	atomic_init(&lock->spins, LOCK_SPINS_START);
	lock->name = name;
	lock->pool = pool;
	atomic_init(&lock->owner, 0);
	for (unsigned i = 0; i < PA_NR_LOCK_SITES; i++)
		lock->site[i] = (struct pa_lock_stat){ 0 };
}

void platform_lock_destroy(struct pa_lock *lock)
{
	(void)lock;
}

/* Spin for the lock, at most limit tries; the tries it took, or 0 if it is still taken. */
static unsigned lock_spin(struct pa_lock *lock, unsigned limit)
{
	for (unsigned i = 1; i <= limit; i++) {
		uint32_t free = 0;
		platform_relax();
		if (atomic_load_explicit(&lock->v, memory_order_relaxed) == 0 &&
		    atomic_compare_exchange_weak_explicit(&lock->v, &free, 1, memory_order_acquire,
		                                          memory_order_relaxed))
			return i;
	}
	return 0;
}

/* Fold one wait into the budget; the lock is held, so the update needs no compare-and-swap. */
static void lock_adapt(struct pa_lock *lock, unsigned spun)
{
	uint32_t avg = atomic_load_explicit(&lock->spins, memory_order_relaxed);
	avg = spun ? avg + ((int32_t)spun - (int32_t)avg) / 8 : avg / 2;
	if (avg < LOCK_SPINS_MIN)
		avg = LOCK_SPINS_MIN;
	atomic_store_explicit(&lock->spins, avg, memory_order_relaxed);
}

/*
 * The compare-and-swap failed: spin while the holder is likely running,
 * then sleep on the word (the wait hook) until an unlock that sees 2 wakes
 * us. Taking the word with 2 after a sleep is conservative: the next unlock
 * wakes whoever else sleeps. The wait is accounted to the call site while
 * the lock is held, so the figures need no atomics; every call is one
 * contended acquisition, however it ends.
 */
void platform_lock_slow(struct pa_lock *lock, enum pa_lock_site site, unsigned min_spins)
{
	const struct pa_platform *plat = &lock->pool->plat;
	uint64_t t0 = plat->now_ns(plat->ctx);
	unsigned limit = 2 * atomic_load_explicit(&lock->spins, memory_order_relaxed);
	limit = limit < min_spins ? min_spins : limit;
	unsigned spun = lock_spin(lock, limit < LOCK_SPINS_MAX ? limit : LOCK_SPINS_MAX);
	if (!spun)
		while (atomic_exchange_explicit(&lock->v, 2, memory_order_acquire) != 0)
			platform_wait(plat, &lock->v, 2, UINT64_MAX);
	lock_adapt(lock, spun);
	uint64_t waited = plat->now_ns(plat->ctx) - t0;
	struct pa_lock_stat *st = &lock->site[site];
	st->contended++;
	st->total_wait_ns += waited;
	if (waited > st->max_wait_ns)
		st->max_wait_ns = waited;
}

/* An unlock found a waiter that may sleep. */
void platform_lock_wake(struct pa_lock *lock)
{
	platform_wake(&lock->pool->plat, &lock->v, 1);
}

static bool spin_trylock(const struct pa_pool *pool, struct pa_spin *s)
{
	return pool->pcp_rseq ? platform_rseq_trylock_remote(&s->v, s->cpu) : pa_spin_trylock(s);
}

void platform_spin_lock(struct pa_pool *pool, struct pa_spin *s, enum pa_lock_site site)
{
	if (spin_trylock(pool, s))
		return;
	const struct pa_platform *plat = &pool->plat;
	uint64_t t0 = plat->now_ns(plat->ctx);
	for (unsigned spins = 0; !spin_trylock(pool, s); spins++) {
		if (spins < 64)
			platform_relax();
		else
			platform_yield(); /* the holder may be preempted: a 2-core machine runs 4 threads */
	}
	uint64_t waited = plat->now_ns(plat->ctx) - t0;
	struct pa_lock_stat *st = &s->site[site];
	st->contended++;
	st->total_wait_ns += waited;
	if (waited > st->max_wait_ns)
		st->max_wait_ns = waited;
}
