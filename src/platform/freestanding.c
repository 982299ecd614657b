/* SPDX-License-Identifier: MIT */
/*
 * The platform of a freestanding build (PA_FREESTANDING=ON): no operating
 * system, no C library. The embedder gives reserve, commit and release
 * (pa_boot refuses without them); every other hook has a default that
 * suits one CPU without threads: CPU 0, a clock that counts its calls,
 * small allocations in whole pages of the metadata hooks, waits that
 * return at once (their callers spin), no workers (their callers do the
 * work: the manual modes), reports dropped, no limit on memory, a fixed
 * seed. No thread pointer is read: the CPU id always comes from the hook.
 */
#include "platform.h"

#include "../pool.h"

static unsigned fs_cpu_id(void *ctx)
{
	(void)ctx;
	return 0;
}

/* Only the order of events matters to the core (lock statistics, deadlines): a count will do. */
static uint64_t fs_now_ns(void *ctx)
{
	(void)ctx;
	static _Atomic uint64_t ticks;
	return atomic_fetch_add_explicit(&ticks, 1000, memory_order_relaxed);
}

static void fs_report(void *ctx, const char *line)
{
	(void)ctx;
	(void)line;
}

static uint64_t fs_machine_bytes(void *ctx)
{
	(void)ctx;
	return UINT64_MAX;
}

static void fs_wait(void *ctx, uint32_t *word, uint32_t expected, uint64_t timeout_ns)
{
	(void)ctx;
	(void)word;
	(void)expected;
	(void)timeout_ns;
	platform_relax();
}

static void fs_wake(void *ctx, uint32_t *word, unsigned nr)
{
	(void)ctx;
	(void)word;
	(void)nr;
}

static uint64_t fs_random_seed(void *ctx)
{
	(void)ctx;
	return 0x2545f4914f6cdd1dull;
}

void platform_os_defaults(struct pa_platform *plat)
{
	if (!plat->cpu_id)
		plat->cpu_id = fs_cpu_id;
	if (!plat->now_ns)
		plat->now_ns = fs_now_ns;
	if (!plat->report)
		plat->report = fs_report;
	if (!plat->machine_bytes)
		plat->machine_bytes = fs_machine_bytes;
	if (!plat->wait) {
		plat->wait = fs_wait;
		plat->wake = fs_wake;
	}
	if (!plat->random_seed)
		plat->random_seed = fs_random_seed;
}

unsigned platform_online_cpus(void)
{
	return 1;
}

const char *platform_strerror(int e)
{
	switch (e) {
	case ENOMEM:
		return "out of memory";
	case EINVAL:
		return "invalid argument";
	case ENOSYS:
		return "not supported by the platform";
	default:
		return "error";
	}
}

void platform_stderr(const char *line)
{
	(void)line;
}

void platform_yield(void)
{
	platform_relax();
}

void platform_panic(void)
{
	__builtin_trap();
}

unsigned long platform_self(void)
{
	return 1;
}

unsigned platform_cpu_slow(void)
{
	return 0;
}

ptrdiff_t platform_cpu_offset(bool hook)
{
	(void)hook;
	return 0;
}

ptrdiff_t platform_rseq_cs_offset(void)
{
	return 0;
}

bool platform_rseq_lock_init(unsigned nr_cpus)
{
	(void)nr_cpus;
	return false;
}

bool platform_rseq_trylock_remote(_Atomic uint32_t *word, unsigned cpu)
{
	(void)word;
	(void)cpu;
	__builtin_trap(); /* never: pcp_rseq is off without rseq */
}

int platform_backing_map(struct pa_pool *pool, char *err, size_t errlen)
{
	if (pool->cfg.backing == PA_BACKING_NONE)
		return 0;
	pa_snprintf(err, errlen,
	            "backing: anon, file:PATH and hugetlb need the POSIX platform; "
	            "use backing=platform with a frames hook");
	return -EINVAL;
}

void platform_backing_unmap(struct pa_pool *pool)
{
	(void)pool;
}
