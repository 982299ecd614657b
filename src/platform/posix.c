/* SPDX-License-Identifier: MIT */
/*
 * The POSIX/Linux platform: the defaults of struct pa_platform's hooks
 * (sched_getcpu or the rseq area for the CPU id, clock_gettime, mmap for
 * metadata, malloc, a futex for sleeping waits, pthreads for workers,
 * stderr for reports), the restartable-sequence list lock's cross-CPU fence
 * (membarrier), and the frames' backing memory (backing=anon, file:PATH,
 * hugetlb). The only file of the library that includes an OS header.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "platform.h"

#include "../pool.h"

_Static_assert(PA_RSEQ_SIG == RSEQ_SIG, "the rseq signature of pcp_rseq_trylock()");

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

ptrdiff_t platform_rseq_cs_offset(void)
{
	return __rseq_offset + (ptrdiff_t)offsetof(struct rseq, rseq_cs);
}

/*
 * The default CPU id: the kernel's restartable-sequence area, which glibc
 * registers for every thread; a read of one word. Where it is missing (an
 * old kernel, valgrind) the per-thread cache stands in.
 */
static unsigned default_cpu_id(void *ctx)
{
	(void)ctx;
	if (likely(__rseq_size)) {
		const struct rseq *rs =
		        (const struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
		int cpu = (int)__atomic_load_n(&rs->cpu_id, __ATOMIC_RELAXED);
		if (likely(cpu >= 0))
			return (unsigned)cpu;
	}
	if (unlikely(platform_cpu_cache.cpu == UINT32_MAX))
		return platform_cpu_slow();
	return platform_cpu_cache.cpu;
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

static void *default_alloc(void *ctx, size_t bytes)
{
	(void)ctx;
	return malloc(bytes);
}

static void default_free(void *ctx, void *p, size_t bytes)
{
	(void)ctx;
	(void)bytes;
	free(p);
}

/* A futex wait, private to the process; a relative timeout. Any return is a wake-up. */
static void default_wait(void *ctx, uint32_t *word, uint32_t expected, uint64_t timeout_ns)
{
	(void)ctx;
	struct timespec ts = { .tv_sec = (time_t)(timeout_ns / 1000000000ull),
		               .tv_nsec = (long)(timeout_ns % 1000000000ull) };
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected,
	        timeout_ns == UINT64_MAX ? NULL : &ts, NULL, 0);
}

static void default_wake(void *ctx, uint32_t *word, unsigned nr)
{
	(void)ctx;
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, nr > INT_MAX ? INT_MAX : (int)nr, NULL, NULL,
	        0);
}

/* A worker's function and argument, carried to its pthread. */
struct thread_start {
	void (*fn)(void *arg);
	void *arg;
};

static void *thread_main(void *p)
{
	struct thread_start st = *(struct thread_start *)p;
	free(p);
	st.fn(st.arg);
	return NULL;
}

static int default_thread_start(void *ctx, void **thread, void (*fn)(void *arg), void *arg)
{
	(void)ctx;
	struct thread_start *st = malloc(sizeof *st);
	pthread_t *t = malloc(sizeof *t);
	if (!st || !t) {
		free(st);
		free(t);
		return -ENOMEM;
	}
	*st = (struct thread_start){ fn, arg };
	int rc = pthread_create(t, NULL, thread_main, st);
	if (rc) {
		free(st);
		free(t);
		return -rc;
	}
	*thread = t;
	return 0;
}

static void default_thread_join(void *ctx, void *thread)
{
	(void)ctx;
	pthread_join(*(pthread_t *)thread, NULL);
	free(thread);
}

static uint64_t default_random_seed(void *ctx)
{
	return default_now_ns(ctx);
}

/* Hook sets come whole or not at all (platform_check()): one NULL stands for its set. */
void platform_os_defaults(struct pa_platform *plat)
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
	if (!plat->alloc) {
		plat->alloc = default_alloc;
		plat->free = default_free;
	}
	if (!plat->wait) {
		plat->wait = default_wait;
		plat->wake = default_wake;
	}
	if (!plat->thread_start) {
		plat->thread_start = default_thread_start;
		plat->thread_join = default_thread_join;
	}
	if (!plat->random_seed)
		plat->random_seed = default_random_seed;
}

unsigned platform_online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : (unsigned)n;
}

const char *platform_strerror(int e)
{
	return strerror(e);
}

void platform_stderr(const char *line)
{
	fprintf(stderr, "pagealloc: %s\n", line);
}

void platform_yield(void)
{
	sched_yield();
}

void platform_panic(void)
{
	abort();
}

unsigned long platform_self(void)
{
	return (unsigned long)pthread_self();
}

/* ---------------------------------------------------------------------- */
/* The restartable-sequence list lock's fence                              */
/* ---------------------------------------------------------------------- */

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

bool platform_rseq_trylock_remote(_Atomic uint32_t *word, unsigned cpu)
{
	while (unlikely(spin_token < 2))
		spin_token = atomic_fetch_add_explicit(&spin_tokens, 1, memory_order_relaxed);
	uint32_t free = 0;
	if (atomic_load_explicit(word, memory_order_relaxed) != 0 ||
	    !atomic_compare_exchange_strong_explicit(word, &free, spin_token, memory_order_acquire,
	                                             memory_order_relaxed))
		return false;
	rseq_fence(cpu);
	return atomic_load_explicit(word, memory_order_acquire) == spin_token;
}

/* ---------------------------------------------------------------------- */
/* The frames' backing memory                                              */
/* ---------------------------------------------------------------------- */

static int backing_fail(char *err, size_t errlen, const char *what, int e)
{
	pa_snprintf(err, errlen, "%s (%s)", what, strerror(e));
	return -e;
}

/*
 * backing=file:PATH: open the file, creating it if it is not there (then it
 * is ours to remove at shutdown, unless backing_keep=1), and size it to mem.
 * Errors name the path.
 */
static int backing_open_file(struct pa_pool *pool, size_t bytes, char *err, size_t errlen)
{
	const char *path = pool->cfg.backing_path;
	char what[400];
	pool->backing_fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	pool->backing_created = pool->backing_fd >= 0;
	if (pool->backing_fd < 0 && errno == EEXIST)
		pool->backing_fd = open(path, O_RDWR | O_CLOEXEC);
	if (pool->backing_fd < 0) {
		pa_snprintf(what, sizeof what, "backing=file:%s: cannot open or create the file",
		            path);
		return backing_fail(err, errlen, what, errno);
	}
	if (ftruncate(pool->backing_fd, (off_t)bytes) != 0) {
		pa_snprintf(what, sizeof what, "backing=file:%s: cannot size the file to mem",
		            path);
		return backing_fail(err, errlen, what, errno);
	}
	return 0;
}

/* Map the bytes behind the frames, for backing=anon, file:PATH and hugetlb. */
int platform_backing_map(struct pa_pool *pool, char *err, size_t errlen)
{
	const struct pa_boot_config *c = &pool->cfg;
	size_t bytes = (size_t)c->mem;
	void *p = MAP_FAILED;
	switch (c->backing) {
	default: /* none and platform: memmap.c's */
		return 0;
	case PA_BACKING_ANON:
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED)
			return backing_fail(err, errlen, "backing=anon: cannot map mem", errno);
		break;
	case PA_BACKING_FILE: {
		int rc = backing_open_file(pool, bytes, err, errlen);
		if (rc)
			return rc;
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, pool->backing_fd, 0);
		if (p == MAP_FAILED) {
			char what[400];
			pa_snprintf(what, sizeof what, "backing=file:%s: cannot map the file",
			            c->backing_path);
			return backing_fail(err, errlen, what, errno);
		}
		break;
	}
	case PA_BACKING_HUGETLB:
		/* No MAP_NORESERVE: without reserved huge pages this must fail now, not SIGBUS later. */
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		         MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
		if (p == MAP_FAILED)
			return backing_fail(
			        err, errlen,
			        "backing=hugetlb: cannot map mem from huge pages; reserve "
			        "enough in /proc/sys/vm/nr_hugepages, and make mem a multiple "
			        "of the huge page size",
			        errno);
		break;
	}
	pool->base = p;
	pool->base_bytes = bytes;
	return 0;
}

void platform_backing_unmap(struct pa_pool *pool)
{
	if (pool->base && pool->cfg.backing != PA_BACKING_PLATFORM)
		munmap(pool->base, pool->base_bytes);
	if (pool->backing_fd >= 0)
		close(pool->backing_fd);
	if (pool->backing_created && !pool->cfg.backing_keep)
		unlink(pool->cfg.backing_path);
}
