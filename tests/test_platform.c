/* SPDX-License-Identifier: MIT */
/*
 * The platform layer: hook sets given whole or refused; every small
 * allocation of the core goes through the alloc hook and comes back
 * through free; the locks sleep and wake through the wait and wake hooks;
 * a platform whose thread_start answers -ENOSYS gets no workers and loses
 * nothing (deferred init done at boot, kcompactd and reporting run by
 * hand); backing=platform puts frames' bytes where the frames hook says;
 * the core's formatter writes what the C library's snprintf writes.
 */
#include "helpers.h"

#include "platform/platform.h"
#include "pool.h"

#include <errno.h>
#include <stdarg.h>
#include <sys/mman.h>

/* The counts of one platform's hooks. */
struct counts {
	_Atomic uint64_t allocs, frees, bytes_out, waits, wakes, starts;
};

static struct counts counts;

static void *count_alloc(void *ctx, size_t bytes)
{
	struct counts *c = ctx;
	atomic_fetch_add(&c->allocs, 1);
	atomic_fetch_add(&c->bytes_out, bytes);
	return malloc(bytes);
}

static void count_free(void *ctx, void *p, size_t bytes)
{
	struct counts *c = ctx;
	atomic_fetch_add(&c->frees, 1);
	atomic_fetch_sub(&c->bytes_out, bytes);
	free(p);
}

static void spin_wait(void *ctx, uint32_t *word, uint32_t expected, uint64_t timeout_ns)
{
	struct counts *c = ctx;
	(void)timeout_ns;
	atomic_fetch_add(&c->waits, 1);
	/* A sleeping wait on a platform that only has sched_yield. */
	for (int i = 0; i < 100 && __atomic_load_n(word, __ATOMIC_ACQUIRE) == expected; i++)
		sched_yield();
}

static void spin_wake(void *ctx, uint32_t *word, unsigned nr)
{
	struct counts *c = ctx;
	(void)word;
	(void)nr;
	atomic_fetch_add(&c->wakes, 1);
}

static int no_threads(void *ctx, void **thread, void (*fn)(void *arg), void *arg)
{
	struct counts *c = ctx;
	(void)thread;
	(void)fn;
	(void)arg;
	atomic_fetch_add(&c->starts, 1);
	return -ENOSYS;
}

static void no_join(void *ctx, void *thread)
{
	(void)ctx;
	(void)thread;
}

TEST(partial_hook_sets_are_refused)
{
	struct pa_platform plat = { .alloc = count_alloc };
	struct pa_pool *pool = NULL;
	char err[256];
	CHECK(pa_boot("mem=64M", &plat, &pool, err, sizeof err) == -EINVAL);
	CHECK_MSG(strstr(err, "alloc and free"), "%s", err);
	plat = (struct pa_platform){ .wake = spin_wake };
	CHECK(pa_boot("mem=64M", &plat, &pool, err, sizeof err) == -EINVAL);
	CHECK_MSG(strstr(err, "wait and wake"), "%s", err);
	plat = (struct pa_platform){ .thread_join = no_join };
	CHECK(pa_boot("mem=64M", &plat, &pool, err, sizeof err) == -EINVAL);
	CHECK_MSG(strstr(err, "thread_start and thread_join"), "%s", err);
	CHECK(pool == NULL);
}

TEST(small_allocations_go_through_the_alloc_hook_and_all_come_back)
{
	memset(&counts, 0, sizeof counts);
	struct pa_platform plat = { .ctx = &counts, .alloc = count_alloc, .free = count_free };
	struct pa_pool *pool = test_boot_on("mem=256M numa=2 cma=16M", &plat);
	char buf[1 << 16];
	CHECK(pa_report(pool, PA_REPORT_ZONEINFO, 0, buf, sizeof buf) > 0); /* scratch too */
	CHECK(pa_report(pool, PA_REPORT_LOCKSTAT, 0, buf, sizeof buf) > 0);
	CHECK(atomic_load(&counts.allocs) > 10);
	pa_shutdown(pool);
	CHECK_EQ_U64(atomic_load(&counts.frees), atomic_load(&counts.allocs));
	CHECK_EQ_U64(atomic_load(&counts.bytes_out), 0);
}

/* Two threads on one zone lock, each holding it a while: the loser sleeps through the hook. */
static void *hammer(void *arg)
{
	struct pa_pool *pool = arg;
	struct pa_zone *z = &pool->zones[0];
	for (int i = 0; i < 2000; i++) {
		pa_lock(&z->lock, SITE_ADMIN);
		for (volatile int k = 0; k < 2000; k++)
			;
		pa_unlock(&z->lock);
	}
	return NULL;
}

TEST(locks_sleep_through_the_wait_hook)
{
	memset(&counts, 0, sizeof counts);
	struct pa_platform plat = { .ctx = &counts, .wait = spin_wait, .wake = spin_wake };
	struct pa_pool *pool = test_boot_on("mem=64M kcompactd=manual deferred_init=0", &plat);
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		REQUIRE(pthread_create(&t[i], NULL, hammer, pool) == 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	/* Whether a wait had to sleep depends on the scheduler; a sleeper was always woken. */
	if (atomic_load(&counts.waits))
		CHECK(atomic_load(&counts.wakes) > 0);
	VALIDATE(pool);
	pa_shutdown(pool);
}

static int take_all(void *arg, const struct pa_reported_range *ranges, unsigned nr)
{
	(void)arg;
	(void)ranges;
	(void)nr;
	return 0;
}

TEST(a_platform_without_threads_does_the_workers_work_itself)
{
	memset(&counts, 0, sizeof counts);
	struct pa_platform plat = { .ctx = &counts,
		                    .thread_start = no_threads,
		                    .thread_join = no_join };
	struct pa_pool *pool = test_boot_on("mem=512M deferred_init=1 kcompactd=thread", &plat);
	CHECK(atomic_load(&counts.starts) >= 2); /* deferred init and kcompactd asked */
	struct pa_usage u;
	pa_get_usage(pool, &u);
	CHECK_EQ_U64(u.free + u.allocated + u.reserved, u.managed);
	CHECK(vmstat(pool, "nr_free_pages") * 4096 > (400ull << 20)); /* all of it, at boot */
	pa_deferred_init_wait(pool);                                  /* returns: done */
	CHECK(pa_kcompactd_run(pool, 0) >= 0);
	static const struct pa_page_reporting_ops ops = { .report = take_all };
	CHECK(pa_page_reporting_register(pool, &ops, NULL) == 0); /* page_reporting=thread */
	struct pa_page *used[4];
	for (int i = 0; i < 4; i++)
		used[i] =
		        pa_alloc_pages(pool, PA_GFP_MOVABLE, 9); /* touched: reportable once free */
	for (int i = 0; i < 4; i++)
		if (used[i])
			pa_free_pages(pool, used[i], 9);
	CHECK(pa_page_reporting_run(pool) > 0);
	pa_page_reporting_unregister(pool);
	VALIDATE(pool);
	pa_shutdown(pool);
}

static unsigned char *frames_area;

static void *frames_here(void *ctx, uint64_t bytes)
{
	(void)ctx;
	return bytes <= (64ull << 20) ? frames_area : NULL;
}

TEST(backing_platform_puts_frames_where_the_hook_says)
{
	frames_area =
	        mmap(NULL, 64ull << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	REQUIRE(frames_area != MAP_FAILED);
	struct pa_platform plat = { .frames = frames_here };
	struct pa_pool *pool = test_boot_on("mem=64M backing=platform", &plat);
	struct pa_page *p = pa_alloc_pages(pool, PA_GFP_ZERO, 3);
	REQUIRE(p);
	unsigned char *bytes = pa_page_address(pool, p);
	CHECK(bytes == frames_area + pa_page_to_pfn(pool, p) * 4096);
	memset(bytes, 0x5a, 8 * 4096);
	pa_free_pages(pool, p, 3);
	VALIDATE(pool);
	pa_shutdown(pool);
	CHECK(bytes[0] == 0x5a); /* the embedder's memory: the pool did not unmap it */
	munmap(frames_area, 64ull << 20);

	char err[256];
	struct pa_pool *none = NULL;
	CHECK(pa_boot("mem=64M backing=platform", NULL, &none, err, sizeof err) == -EINVAL);
	CHECK_MSG(strstr(err, "backing=platform: the platform has no frames hook"), "%s", err);
	CHECK(none == NULL);
}

/* The core's formatter against the C library's, on the conversions the core writes. */
static void same(const char *fmt, ...)
{
	char a[256], b[256];
	va_list ap, aq;
	va_start(ap, fmt);
	va_copy(aq, ap);
	int na = pa_vsnprintf(a, sizeof a, fmt, ap);
	int nb = vsnprintf(b, sizeof b, fmt, aq);
	va_end(aq);
	va_end(ap);
	CHECK_MSG(na == nb && strcmp(a, b) == 0, "format \"%s\": \"%s\" (%d), libc \"%s\" (%d)",
	          fmt, a, na, b, nb);
}

TEST(the_formatter_writes_what_snprintf_writes)
{
	same("%s|%12s|%-8s|%.3s|%.*s|%*s|%c|%%", "zone", "DMA32", "x", "abcdef", 2, "xyz", 5, "r",
	     'q');
	same("%u %4u %03u %d %4d %2d %03d %lld %llu", 7u, 42u, 5u, -17, 3, -4, 9, -123456789012ll,
	     18446744073709551615ull);
	same("%lu %zu %" PRIu64 " %12" PRIu64 " %-6" PRIu64 " %" PRId64, 1ul << 40, (size_t)99,
	     (uint64_t)123, (uint64_t)4567, (uint64_t)8, (int64_t)-9);
	same("%#x %04x %x %#x", 255u, 10u, 0u, 0u);
	same("%.2f %.2f %.2f %.2f", 0.0, 1.5, 12.345678, 999.999);
	same("%d %u", INT_MIN, 0u);
	char small[5];
	CHECK(pa_snprintf(small, sizeof small, "%s", "truncated") == 9);
	CHECK(strcmp(small, "trun") == 0);
	CHECK(pa_snprintf(NULL, 0, "%u", 12345u) == 5);
}
