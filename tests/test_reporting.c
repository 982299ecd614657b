/* SPDX-License-Identifier: MIT */
/*
 * Free page reporting: what is reported (free blocks of the reporting order
 * and up, in batches of at most PA_REPORTING_CAPACITY, each once until
 * allocated), what is not (allocated frames, untouched memory, blocks after
 * they merged with unreported ones), a device that takes smaller ranges
 * than the buddy's blocks, the worker thread, and reporting racing
 * allocations (run under TSan too).
 */
#include "helpers.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>

/* A device that records what it was handed, and may check each frame against a map of allocations. */
struct device {
	struct pa_pool *pool;
	_Atomic uint64_t calls, frames, bad;
	unsigned max_nr, min_order, max_order;
	int answer;             /* what report() returns */
	_Atomic uint8_t *alloc; /* [pfn]: 1 while a test thread holds the frame; NULL: no check */
	uint8_t *seen;          /* [pfn]: reported in this test (single-threaded tests) */
};

static int dev_report(void *arg, const struct pa_reported_range *r, unsigned nr)
{
	struct device *d = arg;
	d->calls++;
	if (nr > d->max_nr)
		d->max_nr = nr;
	for (unsigned i = 0; i < nr; i++) {
		uint64_t n = 1ull << r[i].order;
		d->min_order = r[i].order < d->min_order ? r[i].order : d->min_order;
		d->max_order = r[i].order > d->max_order ? r[i].order : d->max_order;
		if (r[i].pfn & (n - 1))
			d->bad++;
		for (uint64_t k = 0; d->alloc && k < n; k++)
			if (atomic_load(&d->alloc[r[i].pfn + k]))
				d->bad++; /* an allocated frame handed to the device */
		for (uint64_t k = 0; d->seen && k < n; k++)
			d->seen[r[i].pfn + k]++;
		d->frames += n;
	}
	return d->answer;
}

static const struct pa_page_reporting_ops dev_ops = { dev_report };

static void device_init(struct device *d, struct pa_pool *pool)
{
	memset(d, 0, sizeof *d);
	d->pool = pool;
	d->min_order = 64;
}

/* Allocate every free block of order, then free them all: the pool's free memory is listed, not untouched. */
static void touch_free_memory(struct pa_pool *pool, unsigned order)
{
	size_t cap = 1 << 16, n = 0;
	struct pa_page **held = malloc(cap * sizeof *held);
	REQUIRE(held);
	while (n < cap && (held[n] = pa_alloc_pages(
	                           pool, PA_GFP_MOVABLE | PA_GFP_HIGH | PA_GFP_NOWARN, order)))
		n++;
	while (n--)
		pa_free_pages(pool, held[n], order);
	free(held);
	pa_drain_all(pool);
}

/* Passes until one reports nothing (each list has a budget per pass, as Linux's); frames reported. */
static long report_all(struct pa_pool *pool)
{
	long total = 0, n;
	for (int i = 0; i < 10000 && (n = pa_page_reporting_run(pool)) > 0; i++)
		total += n;
	return total;
}

#define MANUAL "page_reporting=manual kcompactd=manual pcp_orders=none min_free_kbytes=0 "

TEST(reporting_bad_arguments)
{
	struct pa_pool *pool = test_boot(MANUAL "mem=256M");
	struct device d;
	device_init(&d, pool);
	const struct pa_page_reporting_ops none = { NULL };
	CHECK_EQ_U64(pa_page_reporting_register(NULL, &dev_ops, &d), -EINVAL);
	CHECK_EQ_U64(pa_page_reporting_register(pool, NULL, &d), -EINVAL);
	CHECK_EQ_U64(pa_page_reporting_register(pool, &none, &d), -EINVAL);
	CHECK_EQ_U64(pa_page_reporting_run(NULL), -EINVAL);
	CHECK_EQ_U64(pa_page_reporting_run(pool), -ENODEV);
	CHECK_EQ_U64(pa_page_reporting_register(pool, &dev_ops, &d), 0);
	CHECK_EQ_U64(pa_page_reporting_register(pool, &dev_ops, &d), -EBUSY);
	CHECK_EQ_U64(pa_page_reported(NULL, NULL), -EINVAL);
	CHECK_EQ_U64(pa_page_reported(pool, NULL), -EINVAL);
	struct pa_page *p = pa_alloc_pages(pool, PA_GFP_KERNEL, 0);
	REQUIRE(p);
	CHECK_EQ_U64(pa_page_reported(pool, p + 1), -EINVAL); /* not a head: free memory */
	pa_free_pages(pool, p, 0);
	CHECK_EQ_U64(pa_page_reported(pool, p), -EINVAL); /* free now */
	pa_page_reporting_unregister(NULL);
	pa_page_reporting_unregister(pool);
	pa_page_reporting_unregister(pool); /* twice is harmless */
	CHECK_EQ_U64(pa_page_reporting_run(pool), -ENODEV);
	pa_shutdown(pool);
	const char *bad[] = { "page_reporting=sometimes", "page_reporting_delay_ms=-1",
		              "page_reporting_max_order=11", "page_reporting_max_order=-2" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char err[256] = "";
		struct pa_pool *q = NULL;
		CHECK_EQ_U64(pa_boot(bad[i], NULL, &q, err, sizeof err), -EINVAL);
		CHECK_MSG(strstr(err, "page_reporting"), "%s: message names no key: %s", bad[i],
		          err);
	}
}

/* Each free block of the reporting order and up once, in batches of at most 32; then nothing. */
TEST(reporting_manual_pass_reports_each_free_block_once)
{
	struct pa_pool *pool = test_boot(MANUAL "mem=256M");
	touch_free_memory(pool, 9);
	struct device d;
	device_init(&d, pool);
	d.seen = calloc(pool->nr_frames, 1);
	REQUIRE(d.seen);
	uint64_t want = free_frames_from(pool, 9);
	REQUIRE(pa_page_reporting_register(pool, &dev_ops, &d) == 0);
	long got = pa_page_reporting_run(pool);
	CHECK(got > 0 && got <= (long)want); /* a budget of batches per list and pass */
	got += report_all(pool);
	CHECK_EQ_U64(got, want);
	CHECK_EQ_U64(d.frames, want);
	CHECK(d.max_nr <= PA_REPORTING_CAPACITY);
	CHECK(d.min_order >= 9);
	CHECK_EQ_U64(d.bad, 0);
	for (pa_pfn_t p = 0; p < pool->nr_frames; p++)
		CHECK_MSG(d.seen[p] <= 1, "pfn %llu reported %u times", (unsigned long long)p,
		          d.seen[p]);
	CHECK_EQ_U64(pa_page_reporting_run(pool), 0); /* all marked: none again */
	CHECK_EQ_U64(vmstat(pool, "page_reporting_pages"), want);
	CHECK_EQ_U64(vmstat(pool, "page_reporting_calls"), d.calls);
	CHECK_EQ_U64(free_frames_from(pool, 9), want); /* back on the lists, whole */
	VALIDATE(pool);
	free(d.seen);
	pa_shutdown(pool);
}

/*
 * Memory never handed out was never backed: it is not reported, and vmstat
 * counts it (nr_free_untouched). Once a block of an untouched chunk is
 * handed out, the whole chunk is reportable; so is every frame ever used.
 */
TEST(reporting_untouched_memory_is_counted_not_reported)
{
	struct pa_pool *pool = test_boot(MANUAL "mem=1G");
	struct device d;
	device_init(&d, pool);
	REQUIRE(pa_page_reporting_register(pool, &dev_ops, &d) == 0);
	uint64_t chunk = 1ull << pool->cfg.chunk_order, free0 = usage(pool).free;
	CHECK_EQ_U64(vmstat(pool, "nr_free_untouched"), free0); /* nothing was ever handed out */
	CHECK_EQ_U64(pa_page_reporting_run(pool), 0);
	pa_pfn_t pfn = must_alloc(pool, PA_GFP_MOVABLE, 0); /* writes one chunk's descriptors */
	CHECK_EQ_U64(vmstat(pool, "nr_free_untouched"), free0 - chunk);
	free_pfn(pool, pfn, 0);
	long got = report_all(pool);
	CHECK_EQ_U64(got, chunk); /* the chunk, the frame handed out included */
	CHECK_EQ_U64(got, free_frames_from(pool, 9) - vmstat(pool, "nr_free_untouched"));
	touch_free_memory(pool, 9); /* every chunk used once: nothing left untouched */
	CHECK_EQ_U64(vmstat(pool, "nr_free_untouched"), 0);
	got = report_all(pool);
	CHECK_EQ_U64((uint64_t)got, free_frames_from(pool, 9)); /* each used since: all again */
	VALIDATE(pool);
	pa_shutdown(pool);
}

/* A 256 MiB pool whose free memory, all in order-10 blocks, was reported to d. */
static struct pa_pool *all_reported(struct device *d)
{
	struct pa_pool *pool = test_boot(MANUAL "mem=256M");
	touch_free_memory(pool, 10);
	device_init(d, pool);
	REQUIRE(pa_page_reporting_register(pool, &dev_ops, d) == 0);
	REQUIRE(report_all(pool) > 0);
	return pool;
}

/* A block handed out from reported memory says so; once used and freed, it does not. */
TEST(reporting_allocated_block_knows_it_was_reported)
{
	struct device d;
	struct pa_pool *pool = all_reported(&d);
	struct pa_page *a = pa_alloc_pages(pool, PA_GFP_MOVABLE, 9);
	struct pa_page *b = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0);
	REQUIRE(a && b);
	CHECK_EQ_U64(pa_page_reported(pool, a), 1);
	CHECK_EQ_U64(pa_page_reported(pool, b), 1); /* split from a reported block */
	pa_free_pages(pool, a, 9);
	struct pa_page *c = pa_alloc_pages(pool, PA_GFP_MOVABLE, 9);
	REQUIRE(c);
	CHECK(c == a); /* the most recently freed block comes first */
	CHECK_EQ_U64(pa_page_reported(pool, c), 0);
	pa_free_pages(pool, c, 9);
	pa_free_pages(pool, b, 0);
	VALIDATE(pool);
	pa_shutdown(pool);
}

/* A reported half merged with its unreported buddy is an unreported block, reported again whole. */
TEST(reporting_merge_with_unreported_gives_unreported)
{
	struct device d;
	struct pa_pool *pool = all_reported(&d);
	struct pa_page *a = pa_alloc_pages(pool, PA_GFP_MOVABLE, 9); /* half of an order-10 block */
	REQUIRE(a);
	pa_free_pages(pool, a, 9); /* merges with the reported other half */
	CHECK_EQ_U64(pa_page_reporting_run(pool), 1024);
	CHECK_EQ_U64(pa_page_reporting_run(pool), 0);
	VALIDATE(pool);
	pa_shutdown(pool);
}

/* A device that takes 2 MiB ranges gets each 1 GiB block as 512 of them; the buddy keeps it whole. */
TEST(reporting_gigabyte_blocks_at_max_order_18)
{
	struct pa_pool *pool = test_boot(MANUAL "mem=4G max_order=18 page_reporting_max_order=9");
	touch_free_memory(pool, 18);
	uint64_t whole = free_frames_from(pool, 18);
	REQUIRE(whole >= 1ull << 18);
	struct device d;
	device_init(&d, pool);
	REQUIRE(pa_page_reporting_register(pool, &dev_ops, &d) == 0);
	CHECK_EQ_U64(pa_page_reporting_run(pool), whole);
	CHECK_EQ_U64(d.frames, whole);
	CHECK_EQ_U64(d.min_order, 9);
	CHECK_EQ_U64(d.max_order, 9);
	CHECK_EQ_U64(d.calls, (whole >> 9) / PA_REPORTING_CAPACITY);
	CHECK_EQ_U64(free_frames_from(pool, 18), whole); /* not split */
	CHECK_EQ_U64(pa_page_reporting_run(pool), 0);
	struct pa_page *g = pa_alloc_pages(pool, PA_GFP_MOVABLE, 18);
	REQUIRE(g);
	CHECK_EQ_U64(pa_page_reported(pool, g), 1);
	pa_free_pages(pool, g, 18);
	VALIDATE(pool);
	pa_shutdown(pool);
}

/* A device that refuses: the blocks come back unreported and are offered again. */
TEST(reporting_refused_blocks_come_back_unreported)
{
	struct pa_pool *pool = test_boot(MANUAL "mem=256M");
	touch_free_memory(pool, 9);
	uint64_t want = free_frames_from(pool, 9);
	struct device d;
	device_init(&d, pool);
	d.answer = -EIO;
	REQUIRE(pa_page_reporting_register(pool, &dev_ops, &d) == 0);
	CHECK_EQ_U64(pa_page_reporting_run(pool), 0);
	CHECK_EQ_U64(vmstat(pool, "page_reporting_refused"), 1);
	CHECK_EQ_U64(free_frames_from(pool, 9), want);
	VALIDATE(pool);
	d.answer = 0;
	CHECK_EQ_U64(report_all(pool), want);
	pa_shutdown(pool);
}

/* The worker reports a delay after memory was freed. */
TEST(reporting_worker_reports_after_the_delay)
{
	struct pa_pool *pool = test_boot("mem=256M kcompactd=manual page_reporting_delay_ms=10");
	struct device d;
	device_init(&d, pool);
	REQUIRE(pa_page_reporting_register(pool, &dev_ops, &d) == 0);
	touch_free_memory(pool, 9);
	for (int i = 0; i < 500 && vmstat(pool, "page_reporting_pages") == 0; i++)
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	CHECK(vmstat(pool, "page_reporting_pages") > 0);
	pa_page_reporting_unregister(pool);
	VALIDATE(pool);
	pa_shutdown(pool);
}

struct churn {
	struct pa_pool *pool;
	struct device *d;
	unsigned id;
	uint64_t ops;
};

static void mark(struct device *d, const struct pa_page *p, unsigned order, uint8_t v)
{
	pa_pfn_t pfn = pa_page_to_pfn(d->pool, p);
	for (uint64_t k = 0; k < 1ull << order; k++)
		atomic_store(&d->alloc[pfn + k], v);
}

static void *churn_main(void *arg)
{
	struct churn *c = arg;
	struct pa_page *held[64] = { 0 };
	unsigned ord[64] = { 0 };
	uint64_t s = c->id + 1;
	for (uint64_t i = 0; i < c->ops; i++) {
		unsigned k = (unsigned)(rng_next(&s) % 64);
		if (held[k]) {
			mark(c->d, held[k], ord[k],
			     0); /* before the free: the frames may be reported after */
			pa_free_pages(c->pool, held[k], ord[k]);
		}
		ord[k] = (unsigned)(rng_next(&s) % 11);
		held[k] = pa_alloc_pages(c->pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, ord[k]);
		if (held[k])
			mark(c->d, held[k], ord[k], 1);
	}
	for (unsigned k = 0; k < 64; k++)
		if (held[k]) {
			mark(c->d, held[k], ord[k], 0);
			pa_free_pages(c->pool, held[k], ord[k]);
		}
	return NULL;
}

/* Threads allocate and free while the worker and direct passes report: no allocated frame is ever handed over. */
TEST(reporting_races_allocations_and_never_reports_an_allocated_frame)
{
	struct pa_pool *pool = test_boot(
	        "mem=256M kcompactd=manual page_reporting_delay_ms=1 page_reporting_order=3");
	struct device d;
	device_init(&d, pool);
	d.alloc = calloc(pool->nr_frames, 1);
	REQUIRE(d.alloc);
	touch_free_memory(pool, 10);
	REQUIRE(pa_page_reporting_register(pool, &dev_ops, &d) == 0);
	pthread_t t[2];
	struct churn c[2];
	for (unsigned k = 0; k < 2; k++) {
		c[k] = (struct churn){ pool, &d, k, (uint64_t)(40000 * test_scale()) + 200 };
		REQUIRE(pthread_create(&t[k], NULL, churn_main, &c[k]) == 0);
	}
	for (int i = 0; i < 20; i++) {
		pa_page_reporting_run(pool);
		char err[256];
		CHECK_MSG(pa_validate(pool, err, sizeof err) == 0, "pa_validate: %s", err);
	}
	for (unsigned k = 0; k < 2; k++)
		pthread_join(t[k], NULL);
	pa_page_reporting_unregister(pool);
	CHECK_EQ_U64(d.bad, 0);
	CHECK(d.frames > 0);
	pa_drain_all(pool);
	VALIDATE(pool);
	CHECK_EQ_U64(usage(pool).allocated, 0);
	free((void *)d.alloc);
	pa_shutdown(pool);
}
