/* SPDX-License-Identifier: MIT */
/*
 * The default userspace platform: CPU id, clock, metadata memory, reports,
 * and locks that count their contention. Everything the core needs from the
 * outside world goes through struct pa_platform, so an embedder can replace
 * any of it.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <linux/membarrier.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

_Thread_local struct platform_cpu_cache platform_cpu_cache
        __attribute__((tls_model("initial-exec"))) = { UINT32_MAX, UINT32_MAX };

/* Without rseq, sched_getcpu() is a system call: asked only when the cache was forgotten. */
unsigned platform_cpu_slow(void)
{
	int cpu = sched_getcpu();
	platform_cpu_cache.cpu = cpu < 0 ? 0 : (unsigned)cpu;
	return platform_cpu_cache.cpu;
}

ptrdiff_t platform_cpu_offset(bool hook)
{
	char *tp = __builtin_thread_pointer();
	if (hook)
		return (char *)&platform_cpu_cache.none - tp;
	if (!__rseq_size)
		return (char *)&platform_cpu_cache.cpu - tp;
	return __rseq_offset + (ptrdiff_t)offsetof(struct rseq, cpu_id);
}

unsigned pool_cpu_slow(const struct pa_pool *pool, unsigned cpu)
{
	if (!pool->cpu_default)
		cpu = pool->plat.cpu_id(pool->plat.ctx);
	else if ((int)cpu < 0)
		cpu = platform_cpu_slow(); /* the cache was empty, or rseq is not registered here */
	return cpu < pool->cfg.nr_cpus ? cpu : cpu % pool->cfg.nr_cpus;
}

static unsigned default_cpu_id(void *ctx)
{
	(void)ctx;
	return platform_cpu();
}

static uint64_t default_now_ns(void *ctx)
{
	(void)ctx;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Reserved metadata reads as zero without memory behind it: the kernel maps
 * its shared zero page on a read fault. The buddy relies on that to look at
 * the descriptor of a buddy in an absent section without a validity check.
 */
static void *default_reserve(void *ctx, size_t bytes)
{
	(void)ctx;
	void *p = mmap(NULL, bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static int default_commit(void *ctx, void *addr, size_t bytes)
{
	(void)ctx;
	return mprotect(addr, bytes, PROT_READ | PROT_WRITE) == 0 ? 0 : -errno;
}

static void default_release(void *ctx, void *addr, size_t bytes)
{
	(void)ctx;
	munmap(addr, bytes);
}

static uint64_t default_machine_bytes(void *ctx)
{
	(void)ctx;
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : UINT64_MAX;
}

static void default_report(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "pagealloc: %s\n", line);
}

bool platform_memory_hooks_partial(const struct pa_platform *plat)
{
	unsigned given = !!plat->reserve + !!plat->commit + !!plat->release;
	return given != 0 && given != 3;
}

/* A set of memory hooks is all three or none (pa_boot checked): NULL gets all three defaults. */
void platform_fill_defaults(struct pa_platform *plat)
{
	if (!plat->cpu_id)
		plat->cpu_id = default_cpu_id;
	if (!plat->now_ns)
		plat->now_ns = default_now_ns;
	if (!plat->reserve) {
		plat->reserve = default_reserve;
		plat->commit = default_commit;
		plat->release = default_release;
	}
	if (!plat->report)
		plat->report = default_report;
	if (!plat->machine_bytes)
		plat->machine_bytes = default_machine_bytes;
}

unsigned platform_online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : (unsigned)n;
}

void platform_report(const struct pa_pool *pool, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	pool->plat.report(pool->plat.ctx, line);
}

void pa_assert_fail(const char *expr, const char *file, int line, const char *func)
{
	fprintf(stderr, "pagealloc: assertion failed: %s (%s:%d, %s)\n", expr, file, line, func);
	abort();
}

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
	pthread_mutex_init(&lock->mutex, NULL);
	pthread_cond_init(&lock->cond, NULL);
	lock->name = name;
	lock->pool = pool;
	atomic_init(&lock->owner, 0);
	for (unsigned i = 0; i < PA_NR_LOCK_SITES; i++)
		lock->site[i] = (struct pa_lock_stat){ 0 };
}

void platform_lock_destroy(struct pa_lock *lock)
{
	pthread_mutex_destroy(&lock->mutex);
	pthread_cond_destroy(&lock->cond);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

/* Spin for the lock, at most limit tries; the tries it took, or 0 if it is still taken. */
static unsigned lock_spin(struct pa_lock *lock, unsigned limit)
{
	for (unsigned i = 1; i <= limit; i++) {
		uint32_t free = 0;
		cpu_relax();
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
 * then sleep until an unlock that sees 2 wakes us. Taking the word with 2
 * after a sleep is conservative: the next unlock wakes whoever else sleeps.
 * The wait is accounted to the call site while the lock is held, so the
 * figures need no atomics; every call is one contended acquisition, however
 * it ends.
 */
void platform_lock_slow(struct pa_lock *lock, enum pa_lock_site site, unsigned min_spins)
{
	const struct pa_platform *plat = &lock->pool->plat;
	uint64_t t0 = plat->now_ns(plat->ctx);
	unsigned limit = 2 * atomic_load_explicit(&lock->spins, memory_order_relaxed);
	limit = limit < min_spins ? min_spins : limit;
	unsigned spun = lock_spin(lock, limit < LOCK_SPINS_MAX ? limit : LOCK_SPINS_MAX);
	if (!spun) {
		pthread_mutex_lock(&lock->mutex);
		while (atomic_exchange_explicit(&lock->v, 2, memory_order_acquire) != 0)
			pthread_cond_wait(&lock->cond, &lock->mutex);
		pthread_mutex_unlock(&lock->mutex);
	}
	lock_adapt(lock, spun);
	uint64_t waited = plat->now_ns(plat->ctx) - t0;
	struct pa_lock_stat *st = &lock->site[site];
	st->contended++;
	st->total_wait_ns += waited;
	if (waited > st->max_wait_ns)
		st->max_wait_ns = waited;
}

/* An unlock found a waiter that may sleep: the mutex orders this after its check. */
void platform_lock_wake(struct pa_lock *lock)
{
	pthread_mutex_lock(&lock->mutex);
	pthread_cond_signal(&lock->cond);
	pthread_mutex_unlock(&lock->mutex);
}

/* Wait for a per-CPU list lock (a drain, validation, or a remote CPU's lists). */
bool platform_rseq_lock_init(unsigned nr_cpus)
{
#ifdef PA_RSEQ_LOCK
	/* A CPU id from nr_cpus up is wrapped onto another CPU's lists: those need the exchange. */
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	return __rseq_size > offsetof(struct rseq, cpu_id) && cpus > 0 &&
	       (unsigned long)cpus <= nr_cpus &&
	       syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ, 0, 0) == 0;
#else
	(void)nr_cpus;
	return false;
#endif
}

/*
 * Restart every restartable sequence in flight on cpu: aimed at cpu, else
 * at every CPU (a kernel before 5.10), else registered again first (a child
 * after fork() has a new mm). Registered at boot, so it can't fail for long:
 * a lock taken without it would be unsafe.
 */
static void rseq_fence(unsigned cpu)
{
	for (int tries = 0; tries < 2; tries++) {
		if (syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ,
		            MEMBARRIER_CMD_FLAG_CPU, cpu) == 0 ||
		    syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, 0, 0) == 0)
			return;
		syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ, 0, 0);
	}
	abort();
}

/* A thread's token as a remote taker of list locks: unique, never 0 or 1. */
static _Thread_local uint32_t spin_token;
static _Atomic uint32_t spin_tokens = 2;

/*
 * A remote taker of a list lock whose owners take it by restartable
 * sequence (pcp_rseq_trylock()): its token in, the owner's sequences in
 * flight restarted, then still its token or an owner got there first.
 */
static bool spin_trylock_remote(struct pa_spin *s)
{
	while (unlikely(spin_token < 2))
		spin_token = atomic_fetch_add_explicit(&spin_tokens, 1, memory_order_relaxed);
	uint32_t free = 0;
	if (atomic_load_explicit(&s->v, memory_order_relaxed) != 0 ||
	    !atomic_compare_exchange_strong_explicit(&s->v, &free, spin_token, memory_order_acquire,
	                                             memory_order_relaxed))
		return false;
	rseq_fence(s->cpu);
	return atomic_load_explicit(&s->v, memory_order_acquire) == spin_token;
}

static bool spin_trylock(const struct pa_pool *pool, struct pa_spin *s)
{
	return pool->pcp_rseq ? spin_trylock_remote(s) : pa_spin_trylock(s);
}

void platform_spin_lock(struct pa_pool *pool, struct pa_spin *s, enum pa_lock_site site)
{
	if (spin_trylock(pool, s))
		return;
	const struct pa_platform *plat = &pool->plat;
	uint64_t t0 = plat->now_ns(plat->ctx);
	for (unsigned spins = 0; !spin_trylock(pool, s); spins++) {
		if (spins < 64)
			cpu_relax();
		else
			sched_yield(); /* the holder may be preempted: a 2-core machine runs 4 threads */
	}
	uint64_t waited = plat->now_ns(plat->ctx) - t0;
	struct pa_lock_stat *st = &s->site[site];
	st->contended++;
	st->total_wait_ns += waited;
	if (waited > st->max_wait_ns)
		st->max_wait_ns = waited;
}
