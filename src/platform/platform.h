/* SPDX-License-Identifier: MIT */
/*
 * The platform layer, as the core sees it: the one header through which
 * every service from outside is reached. Only freestanding headers are
 * included here or in any other file of the core; the operating system is
 * behind struct pa_platform's hooks, whose defaults come from one file per
 * platform (platform/posix.c: pthreads, futex, rseq, membarrier, mmap;
 * platform/freestanding.c: none of them, for PA_FREESTANDING=ON), and the C
 * library's few functions the core uses are its own (lib.c). The locks,
 * mutexes and condition variables built on the wait and wake hooks, and
 * the metadata allocations through the alloc hook, are in platform/platform.c.
 */
#ifndef PA_PLATFORM_H
#define PA_PLATFORM_H

#include "pagealloc.h"

#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------------- */
/* What the C library would have given                                     */
/* ---------------------------------------------------------------------- */

/* Error numbers, Linux's values: the public API returns them negated. */
#ifndef EPERM
#define EPERM 1
#endif
#ifndef ENOENT
#define ENOENT 2
#endif
#ifndef EAGAIN
#define EAGAIN 11
#endif
#ifndef ENOMEM
#define ENOMEM 12
#endif
#ifndef EFAULT
#define EFAULT 14
#endif
#ifndef EBUSY
#define EBUSY 16
#endif
#ifndef EEXIST
#define EEXIST 17
#endif
#ifndef ENODEV
#define ENODEV 19
#endif
#ifndef EINVAL
#define EINVAL 22
#endif
#ifndef ENOSPC
#define ENOSPC 28
#endif
#ifndef ERANGE
#define ERANGE 34
#endif
#ifndef ENOSYS
#define ENOSYS 38
#endif
#ifndef EOVERFLOW
#define EOVERFLOW 75
#endif
#ifndef EOPNOTSUPP
#define EOPNOTSUPP 95
#endif
#ifndef ENOBUFS
#define ENOBUFS 105
#endif
#ifndef ETIMEDOUT
#define ETIMEDOUT 110
#endif

/* Format macros for the fixed-width types (inttypes.h's, for pa_snprintf). */
#ifndef PRIu64
#if ULONG_MAX == UINT64_MAX
#define PRIu64 "lu"
#define PRId64 "ld"
#define PRIx64 "lx"
#else
#define PRIu64 "llu"
#define PRId64 "lld"
#define PRIx64 "llx"
#endif
#endif

/* "lib.c": snprintf's contract, for the conversions d i u x c s p f %. */
int pa_snprintf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int pa_vsnprintf(char *buf, size_t len, const char *fmt, va_list ap)
        __attribute__((format(printf, 3, 0)));
size_t pa_strlen(const char *s);
int pa_strcmp(const char *a, const char *b);
int pa_strncmp(const char *a, const char *b, size_t n);
char *pa_strchr(const char *s, int c);
size_t pa_strspn(const char *s, const char *accept);
size_t pa_strcspn(const char *s, const char *reject);
bool pa_isspace(int c);
bool pa_isdigit(int c);
char pa_tolower(char c);
uint64_t pa_parse_u64(const char *s, const char **end, bool *overflow);
void pa_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

/*
 * The four the embedder provides, as string.h declares them (a compiler
 * calls them for copies and clears of its own anyway).
 */
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);

/* ---------------------------------------------------------------------- */
/* Hooks and their defaults                                                */
/* ---------------------------------------------------------------------- */

/*
 * Fill every hook left NULL with this platform's default
 * (platform/posix.c or platform/freestanding.c); refused hook sets (some of
 * a pair) were turned away by platform_check() first.
 */
void platform_fill_defaults(struct pa_platform *plat);
/* NULL, or what is wrong with the hooks given (a partial set), for pa_boot's error. */
const char *platform_check(const struct pa_platform *plat);
/* The defaults of this platform, for the hooks left NULL ("platform/<name>.c"). */
void platform_os_defaults(struct pa_platform *plat);
/* The CPUs online, for the nr_cpus default. */
unsigned platform_online_cpus(void);
/* A text for an error number, in messages. */
const char *platform_strerror(int e);
/* A line where no pool's report hook can take it (a failed assertion): stderr, or nowhere. */
void platform_stderr(const char *line);
/* Let another thread run (a spin lock's holder may be preempted); a pause without threads. */
void platform_yield(void);
/* A fatal error: bad_page=panic, a failed debug assertion. */
__attribute__((noreturn)) void platform_panic(void);

/*
 * The frames' bytes for backing=anon, file:PATH and hugetlb (pool->base,
 * base_bytes): 0, or -errno with a message; unmapped again (and a file the
 * pool created removed) at shutdown. A platform without them refuses.
 */
struct pa_pool;
int platform_backing_map(struct pa_pool *pool, char *err, size_t errlen);
void platform_backing_unmap(struct pa_pool *pool);

/* ---------------------------------------------------------------------- */
/* Memory for the core's own structures ("platform.c")                     */
/* ---------------------------------------------------------------------- */

/* Through the alloc hook; the size is kept in front, for its free. NULL when out of memory. */
void *pa_malloc(const struct pa_platform *plat, size_t bytes);
void *pa_calloc(const struct pa_platform *plat, size_t n, size_t size);
void pa_free(const struct pa_platform *plat, void *p);
/* Aligned to align (a power of two), for structures kept on cache lines of their own. */
void *pa_malloc_aligned(const struct pa_platform *plat, size_t bytes, size_t align);
void pa_free_aligned(const struct pa_platform *plat, void *p);

/* ---------------------------------------------------------------------- */
/* Sleeping locks, condition variables, workers ("platform.c")            */
/* ---------------------------------------------------------------------- */

/* A word the wait and wake hooks sleep on and wake (a futex). */
static inline void platform_wait(const struct pa_platform *plat, _Atomic uint32_t *word,
                                 uint32_t expected, uint64_t timeout_ns)
{
	plat->wait(plat->ctx, (uint32_t *)word, expected, timeout_ns);
}

static inline void platform_wake(const struct pa_platform *plat, _Atomic uint32_t *word,
                                 unsigned nr)
{
	plat->wake(plat->ctx, (uint32_t *)word, nr);
}

/* A sleeping mutex on one word: 0 free, 1 held, 2 held and someone may sleep. */
struct pa_mutex {
	_Atomic uint32_t v;
	const struct pa_platform *plat;
};
void pa_mutex_init(struct pa_mutex *m, const struct pa_platform *plat);
void pa_mutex_lock(struct pa_mutex *m);
void pa_mutex_unlock(struct pa_mutex *m);

/* A condition variable: a sequence number that every signal moves on. */
struct pa_cond {
	_Atomic uint32_t seq;
	const struct pa_platform *plat;
};
void pa_cond_init(struct pa_cond *c, const struct pa_platform *plat);
void pa_cond_wait(struct pa_cond *c, struct pa_mutex *m);
/* Wait at most timeout_ns; -ETIMEDOUT once that has passed, else 0 (woken, maybe spuriously). */
int pa_cond_timedwait(struct pa_cond *c, struct pa_mutex *m, uint64_t timeout_ns);
void pa_cond_signal(struct pa_cond *c);
void pa_cond_broadcast(struct pa_cond *c);

/*
 * A background worker (kcompactd, deferred init, the reporting worker):
 * 0, or -ENOSYS on a platform without threads (no hook, or a hook that
 * answers so), whose callers then do the work in their own context (the
 * manual modes), or another -errno.
 */
typedef void *pa_thread_t;
int platform_thread_start(const struct pa_platform *plat, pa_thread_t *t, void (*fn)(void *arg),
                          void *arg);
void platform_thread_join(const struct pa_platform *plat, pa_thread_t t);

/* The caller's id as a lock owner: unique per thread where there are threads, never 0. */
unsigned long platform_self(void);

static inline void platform_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

/* ---------------------------------------------------------------------- */
/* The CPU id and the cross-CPU fence ("platform/<name>.c")               */
/* ---------------------------------------------------------------------- */

#ifndef PA_FREESTANDING
/*
 * The CPU id where rseq is missing: sched_getcpu(), cached per thread;
 * UINT32_MAX until asked. Asked again after a contended list lock and on
 * every refill and spill (platform_cpu_forget()): a stale id costs nothing
 * but locality, as the lists are locked either way. `none` is always
 * UINT32_MAX: the word a pool with a cpu_id hook reads (pool->cpu_off), so
 * that its fast path goes to the hook.
 */
struct platform_cpu_cache {
	uint32_t cpu;
	uint32_t none;
};
/* Initial-exec: read in place off the thread pointer, never through __tls_get_addr(). */
extern _Thread_local struct platform_cpu_cache platform_cpu_cache
        __attribute__((tls_model("initial-exec")));

static inline void platform_cpu_forget(void)
{
	platform_cpu_cache.cpu = UINT32_MAX;
}

/* The id word a thread reads off its thread pointer (pool->cpu_off): one load finds the CPU. */
static inline unsigned platform_cpu_word(ptrdiff_t off)
{
	return __atomic_load_n((const uint32_t *)((char *)__builtin_thread_pointer() + off),
	                       __ATOMIC_RELAXED);
}
#else
/* No thread pointer to read: every CPU id comes from the cpu_id hook. */
static inline void platform_cpu_forget(void)
{
}

static inline unsigned platform_cpu_word(ptrdiff_t off)
{
	(void)off;
	return UINT32_MAX;
}
#endif

/* The default CPU id where the id word was not set for this thread (or there is none). */
unsigned platform_cpu_slow(void);
/*
 * Where, from the thread pointer, a pool's fast paths read the CPU id, a
 * choice made once at boot: the rseq cpu_id word with rseq, else the
 * per-thread cache, or with a cpu_id hook (hook) the word that is always
 * out of range. The same offset in every thread (static TLS).
 */
ptrdiff_t platform_cpu_offset(bool hook);
/* The rseq area's rseq_cs word from the thread pointer (pcp_rseq_trylock()). */
ptrdiff_t platform_rseq_cs_offset(void);
/* rseq's abort signature on x86-64 (the word before an abort handler). */
#define PA_RSEQ_SIG 0x53053053

/*
 * Can owners take their list locks by restartable sequence here? rseq is
 * registered, every CPU id is below nr_cpus (none is wrapped onto another's
 * lists), membarrier's rseq fence is available (and now registered), and
 * the build has the sequence (x86-64, not under TSan, which cannot see
 * inside it, nor freestanding). Asked once per pool at boot.
 */
bool platform_rseq_lock_init(unsigned nr_cpus);
/*
 * A remote taker of a list lock whose owners take it by restartable
 * sequence (pcp_rseq_trylock()): its token in, the owner's sequences in
 * flight on cpu restarted (membarrier's rseq fence), then still its token
 * or an owner got there first.
 */
bool platform_rseq_trylock_remote(_Atomic uint32_t *word, unsigned cpu);

#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__) && !defined(PA_FREESTANDING)
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PA_NO_RSEQ_LOCK
#endif
#endif
#ifndef PA_NO_RSEQ_LOCK
#define PA_RSEQ_LOCK 1
#endif
#endif

#endif /* PA_PLATFORM_H */
