/* SPDX-License-Identifier: MIT */
/*
 * A program with no C library: its own _start, raw system calls only to
 * write its output and to exit, its own platform (a spin lock, a bump
 * allocator, static arrays for the metadata and for the frames' bytes, no
 * threads), linked with -nostdlib against the freestanding build of the
 * library. It boots a pool, runs the shared workload (every order, folios,
 * owned folios moved by pa_compact(), a contiguous range, a CMA
 * allocation), validates, and prints buddyinfo. Exit status 0 when every
 * check passed.
 */
#include <pagealloc.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "workload.h"

#define POOL_BYTES  (16u << 20)
#define ARENA_BYTES (6u << 20)

/* ---------------------------------------------------------------------- */
/* The system calls (the four mem* functions are examples/baremetal/mem.c) */
/* ---------------------------------------------------------------------- */

static long sys3(long nr, long a, long b, long c)
{
	long ret;
	__asm__ volatile("syscall"
	                 : "=a"(ret)
	                 : "a"(nr), "D"(a), "S"(b), "d"(c)
	                 : "rcx", "r11", "memory");
	return ret;
}

static void put(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	sys3(1 /* write */, 1, (long)s, (long)n);
}

__attribute__((noreturn)) static void sys_exit(int status)
{
	sys3(231 /* exit_group */, status, 0, 0);
	__builtin_unreachable();
}

/* ---------------------------------------------------------------------- */
/* The platform: static memory, the metadata through arena.c           */
/* ---------------------------------------------------------------------- */

static _Alignas(4096) unsigned char frames[POOL_BYTES];
static _Alignas(4096) unsigned char arena_mem[ARENA_BYTES];
static struct arena arena = ARENA_OVER(arena_mem);

static void *np_frames(void *ctx, uint64_t bytes)
{
	(void)ctx;
	return bytes <= POOL_BYTES ? frames : NULL;
}

static uint64_t np_now_ns(void *ctx)
{
	(void)ctx;
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

static void np_report(void *ctx, const char *line)
{
	(void)ctx;
	put("pagealloc: ");
	put(line);
	put("\n");
}

/* ---------------------------------------------------------------------- */

static int run(void)
{
	static const struct pa_platform plat = {
		.ctx = &arena,
		.now_ns = np_now_ns,
		.reserve = arena_reserve,
		.commit = arena_commit,
		.release = arena_release,
		.report = np_report,
		.alloc = arena_alloc,
		.free = arena_free,
		.frames = np_frames,
	};
	static char err[256];
	struct pa_pool *pool;
	int rc =
	        pa_boot("mem=16M nr_cpus=1 backing=platform cma=4M", &plat, &pool, err, sizeof err);
	if (rc) {
		put("pa_boot failed: ");
		put(err);
		put("\n");
		return 1;
	}
	unsigned failed = workload_run(pool, put);
	put("/proc/buddyinfo\n");
	failed += workload_put_report(pool, PA_REPORT_BUDDYINFO, put);
	rc = pa_validate(pool, err, sizeof err);
	put(rc == 0 ? "pa_validate: ok\n" : "pa_validate: FAILED: ");
	if (rc) {
		put(err);
		put("\n");
		failed++;
	}
	pa_shutdown(pool);
	put(failed ? "nolibc: FAILED\n" : "nolibc: passed\n");
	return failed ? 1 : 0;
}

__attribute__((used)) static void start_c(void)
{
	sys_exit(run());
}

/* The entry: the stack is 16-byte aligned here; a call keeps the ABI's alignment. */
__asm__(".globl _start\n"
        "_start:\n\t"
        "xorl %ebp, %ebp\n\t"
        "andq $-16, %rsp\n\t"
        "call start_c\n\t"
        "hlt\n");
