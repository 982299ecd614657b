/* SPDX-License-Identifier: MIT */
/*
 * The locks every layer takes: the zone lock (struct pa_lock) and the
 * per-CPU list lock (struct pa_spin), with their contention statistics by
 * call site. Their slow halves are platform/platform.c's; the zone lock's
 * inline fast path reads the pool's debug level, so it is in pool.h.
 */
#ifndef PA_LOCK_H
#define PA_LOCK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct pa_pool;

/* Call sites whose contention is counted separately, as perf lock shows callers. */
#define PA_LOCK_SITES(X)                                                                           \
	X(SITE_ALLOC, "pa_alloc_pages")                                                            \
	X(SITE_ALLOC_BULK, "pa_alloc_pages_bulk")                                                  \
	X(SITE_FREE, "pa_free_pages")                                                              \
	X(SITE_PCP_REFILL, "pcp_refill")                                                           \
	X(SITE_PCP_SPILL, "pcp_spill")                                                             \
	X(SITE_PCP_ALLOC, "pcp_alloc")                                                             \
	X(SITE_PCP_FREE, "pcp_free")                                                               \
	X(SITE_DRAIN, "pcp_drain")                                                                 \
	X(SITE_ADMIN, "admin")

enum pa_lock_site {
#define X(id, name) id,
	PA_LOCK_SITES(X)
#undef X
	        PA_NR_LOCK_SITES
};

struct pa_lock_stat {
	uint64_t contended;
	uint64_t total_wait_ns;
	uint64_t max_wait_ns;
};

/*
 * The zone lock: a word taken with one compare-and-swap and given back with
 * one exchange, as Linux's zone lock is a spinlock. A waiter spins a while,
 * then sleeps on the word (v = 2 says someone may sleep), so
 * that a holder preempted on a busy machine costs no CPU. How long it spins
 * adapts to how long waits that ended spinning took (platform_lock_slow).
 */
struct pa_lock {
	_Atomic uint32_t v;     /* 0 free, 1 held, 2 held and a waiter may sleep */
	_Atomic uint32_t spins; /* the spin budget: a running average, set by holders */
	const char *name;
	struct pa_pool *pool;                       /* for the clock */
	_Atomic(unsigned long) owner;               /* holder's thread id when debug >= 1, else 0 */
	struct pa_lock_stat site[PA_NR_LOCK_SITES]; /* written only by the holder */
	uint64_t acquired; /* times taken, reports' excepted; written only by the holder */
};

/*
 * The per-CPU list lock: a test-and-set spin lock, two instructions when
 * free. The owning CPU only ever trylocks it and takes the zone path when it
 * is busy; drains and validation wait for it. A failed trylock is counted as
 * a contended acquisition with no wait.
 */
struct pa_spin {
	/* 0: free; 1: an owner's (pcp_trylock()); else a remote taker's token (platform.c) */
	_Atomic uint32_t v;
	uint32_t cpu; /* the CPU whose lists it guards: the one a remote taker fences */
	_Atomic uint64_t busy[PA_NR_LOCK_SITES];    /* trylocks that found it taken */
	struct pa_lock_stat site[PA_NR_LOCK_SITES]; /* written only by the holder */
};

/*
 * The plain read first is worth its two instructions where the lock may be
 * held: without it the exchange, early in a short path, waits on more of
 * the stores before it (an owner's path with an exchange took 25% more CPU
 * time; pcp_trylock() now takes a compare-and-swap).
 */
static inline bool pa_spin_trylock(struct pa_spin *s)
{
	return atomic_load_explicit(&s->v, memory_order_relaxed) == 0 &&
	       atomic_exchange_explicit(&s->v, 1, memory_order_acquire) == 0;
}

static inline void pa_spin_unlock(struct pa_spin *s)
{
	atomic_store_explicit(&s->v, 0, memory_order_release);
}

/* Take the lock, waiting if need be; the wait is timed and counted at site. */
void platform_spin_lock(struct pa_pool *pool, struct pa_spin *s, enum pa_lock_site site);
/* (Whether owners take it by restartable sequence: PA_RSEQ_LOCK, platform/platform.h.) */
void platform_lock_init(struct pa_lock *lock, struct pa_pool *pool, const char *name);
void platform_lock_destroy(struct pa_lock *lock);
void platform_lock_slow(struct pa_lock *lock, enum pa_lock_site site, unsigned min_spins);
void platform_lock_wake(struct pa_lock *lock);

/*
 * Spin tries a per-CPU refill or spill of a streaming CPU makes before it
 * may sleep (pcp.c): it most likely waits for the like, held 3-6 us.
 */
#define PA_LOCK_SPINS_BATCH 256

#endif /* PA_LOCK_H */
