/* SPDX-License-Identifier: MIT */
/*
 * Deferred frame init and untouched memory: a pool booted with
 * deferred_init=1 allocates, frees and validates while its init threads
 * run, and once they are done its buddy is exactly that of the same pool
 * booted with deferred_init=0: the same free blocks at the same pfns, the
 * same counts, watermarks and per-CPU list sizes. Max orders 10, 18 and 20
 * (a max-order block larger than a section), with holes.
 */
#include "test.h"

#include "memmap.h"
#include "pcp.h"

#include <pthread.h>

/* Boot without the settling wrapper of test.h: deferred init still running. */
static struct pa_pool *boot_raw(const char *line)
{
	char err[512] = "";
	struct pa_pool *pool = NULL;
	int rc = (pa_boot)(line, NULL, &pool, err, sizeof err);
	if (rc || !pool) {
		test_fail(__FILE__, __LINE__, "pa_boot(\"%s\") = %d: %s", line, rc, err);
		test_abort_case();
	}
	return pool;
}

static char *report(struct pa_pool *pool, enum pa_report_kind kind)
{
	size_t len = 1 << 20;
	char *buf = malloc(len);
	REQUIRE(buf);
	REQUIRE(pa_report(pool, kind, 0, buf, len) >= 0);
	return buf;
}

static void check_same_report(struct pa_pool *a, struct pa_pool *b, enum pa_report_kind kind,
                              const char *line)
{
	char *ra = report(a, kind), *rb = report(b, kind);
	CHECK_MSG(strcmp(ra, rb) == 0, "%s: %s differs:\n--- deferred\n%s--- at boot\n%s", line,
	          pa_report_name(kind), ra, rb);
	free(ra);
	free(rb);
}

/* Every frame's descriptor: the same free block heads (order, list) at the same pfns. */
static void check_same_buddy(struct pa_pool *a, struct pa_pool *b, const char *line)
{
	test_touch_all(a);
	test_touch_all(b);
	REQUIRE(a->nr_zones == b->nr_zones && a->nr_frames == b->nr_frames);
	unsigned bad = 0;
	for (pa_pfn_t pfn = 0; pfn < a->nr_frames && bad < 5; pfn++) {
		if (!memmap_section_present(a, pfn))
			continue;
		const struct pa_page *x = pfn_page(a, pfn), *y = pfn_page(b, pfn);
		if (x->state != y->state ||
		    (x->state == PS_FREE && (x->order != y->order || x->mt != y->mt))) {
			test_fail(__FILE__, __LINE__,
			          "%s: pfn %llu: state %u order %u mt %u, at boot %u %u %u", line,
			          (unsigned long long)pfn, x->state, x->order, x->mt, y->state,
			          y->order, y->mt);
			bad++;
		}
	}
	for (unsigned i = 0; i < a->nr_zones; i++) {
		CHECK_EQ_U64(a->zones[i].managed_pages, b->zones[i].managed_pages);
		CHECK_EQ_U64(a->zones[i].present_pages, b->zones[i].present_pages);
		CHECK_EQ_U64(a->zones[i].free_pages, b->zones[i].free_pages);
	}
}

/* Free lists, reports and counts the same; both pools valid; then both shut down. */
static void check_same_then_shutdown(struct pa_pool *a, struct pa_pool *b, const char *line)
{
	check_same_report(a, b, PA_REPORT_BUDDYINFO, line);
	check_same_report(a, b, PA_REPORT_PAGETYPEINFO, line);
	check_same_buddy(a, b, line);
	VALIDATE(a);
	VALIDATE(b);
	pa_shutdown(a);
	pa_shutdown(b);
}

static const char *const lines[] = {
	"mem=1G max_order=10 memhole=100M-104M memhole=300M-301M",
	"mem=4G max_order=18 memhole=1G-1028M memhole=2500M-2600M numa=2",
	"mem=16G max_order=20 memhole=5G-5124M memhole=9G-10G",
};

/* The line booted twice: deferred (returned, its line in l1) and at boot (*at_boot). */
static struct pa_pool *boot_pair(const char *line, char *l1, size_t len, struct pa_pool **at_boot)
{
	char l0[256];
	snprintf(l1, len, "%s kcompactd=manual deferred_init=1", line);
	snprintf(l0, sizeof l0, "%s kcompactd=manual deferred_init=0", line);
	*at_boot = boot_raw(l0);
	return boot_raw(l1);
}

/* Untouched, the two pools are the same, reports and all. */
TEST(deferred_init_ends_as_init_at_boot)
{
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		char l1[256];
		struct pa_pool *b, *a = boot_pair(lines[i], l1, sizeof l1, &b);
		VALIDATE(a);
		pa_deferred_init_wait(a);
		pa_deferred_init_wait(b); /* returns at once */
		VALIDATE(a);
		check_same_report(a, b, PA_REPORT_ZONEINFO, l1);
		check_same_then_shutdown(a, b, l1);
	}
}

/* Allocations right after boot: a shortfall initialises more, nothing fails early. */
TEST(deferred_init_allocations_during_init_then_same_buddy)
{
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		char l1[256];
		struct pa_pool *b, *a = boot_pair(lines[i], l1, sizeof l1, &b);
		size_t cap = (size_t)(4096 * test_scale()) + 64, n = 0;
		struct pa_page **held = calloc(cap, sizeof *held);
		unsigned *ord = calloc(cap, sizeof *ord);
		REQUIRE(held && ord);
		uint64_t seed = test_seed() + i;
		while (n < cap) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			unsigned o =
			        (unsigned)(seed >> 33) % 6; /* up to 32 frames: well within 1G */
			held[n] = pa_alloc_pages(a, PA_GFP_MOVABLE | PA_GFP_NOWARN, o);
			if (!held[n])
				break;
			ord[n++] = o;
			if (n % 64 == 0) {
				VALIDATE(a);
				for (size_t k = n - 64; k < n;
				     k += 2) { /* give every other one back */
					pa_free_pages(a, held[k], ord[k]);
					held[k] = NULL;
				}
			}
		}
		CHECK_MSG(n == cap, "%s: only %zu of %zu allocations right after boot", l1, n, cap);
		VALIDATE(a);
		pa_deferred_init_wait(a);
		for (size_t k = 0; k < n; k++)
			if (held[k])
				pa_free_pages(a, held[k], ord[k]);
		pa_drain_all(a);
		VALIDATE(a);
		free(held);
		free(ord);
		check_same_then_shutdown(a, b, l1);
	}
}

/* Nearly all memory right after boot: the allocation path itself grows the zone. */
TEST(deferred_init_grow_zone_serves_the_whole_pool)
{
	struct pa_pool *a = boot_raw("mem=8G max_order=18 memhole=3G-3100M kcompactd=manual "
	                             "min_free_kbytes=0 pcp_orders=none");
	struct pa_pool *b = boot_raw("mem=8G max_order=18 memhole=3G-3100M kcompactd=manual "
	                             "min_free_kbytes=0 pcp_orders=none deferred_init=0");
	struct pa_usage ub;
	pa_get_usage(b, &ub);
	uint64_t got = 0;
	struct pa_page *p;
	while ((p = pa_alloc_pages(a, PA_GFP_MOVABLE | PA_GFP_HIGH | PA_GFP_NOWARN, 9)))
		got += 512;
	pa_deferred_init_wait(a);
	struct pa_usage ua;
	pa_get_usage(a, &ua);
	CHECK_EQ_U64(ua.managed, ub.managed);
	CHECK_MSG(got + ua.free == ua.managed, "allocated %llu + free %llu != managed %llu",
	          (unsigned long long)got, (unsigned long long)ua.free,
	          (unsigned long long)ua.managed);
	CHECK_MSG(got > ub.managed / 2, "only %llu of %llu frames allocated right after boot",
	          (unsigned long long)got, (unsigned long long)ub.managed);
	VALIDATE(a);
	pa_shutdown(a);
	pa_shutdown(b);
}

/* Frames of the zones that end their node (Linux defers only those): managed now. */
static uint64_t last_zones_managed(struct pa_pool *pool)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < pool->nr_zones; i++)
		if (pool->zones[i].end_pfn == pool->nodes[pool->zones[i].node].end_pfn)
			n += pool->zones[i].managed_pages;
	return n;
}

/*
 * deferred_init=lazy starts no threads: only the zone that ends each node
 * waits, and only pa_deferred_grow() sets it up, in order; once the last
 * frame is, the pool is the one booted with deferred_init=0.
 */
TEST(deferred_init_lazy_grows_on_request_then_ends_as_init_at_boot)
{
	for (size_t i = 0; i < 2; i++) {
		char l1[256], l0[256];
		snprintf(l1, sizeof l1, "%s kcompactd=manual deferred_init=lazy", lines[i]);
		snprintf(l0, sizeof l0, "%s kcompactd=manual deferred_init=0", lines[i]);
		struct pa_pool *b = boot_raw(l0), *a = boot_raw(l1);
		pa_deferred_init_wait(a); /* lazy: returns at once */
		uint64_t want = last_zones_managed(b), was = last_zones_managed(a);
		CHECK_MSG(was < want, "%s: %llu of %llu frames set up at boot", l1,
		          (unsigned long long)was, (unsigned long long)want);
		for (unsigned z = 0; z < a->nr_zones; z++)
			if (a->zones[z].end_pfn != a->nodes[a->zones[z].node].end_pfn)
				CHECK_EQ_U64(a->zones[z].managed_pages, b->zones[z].managed_pages);
		VALIDATE(a);
		CHECK_EQ_U64(pa_deferred_grow(NULL, 0), 0);
		CHECK_EQ_U64(pa_deferred_grow(a, a->nr_frames), 0);
		/* The middle of the last zone: set up to there, once. */
		const struct pa_zone *lz = &a->zones[a->nr_zones - 1];
		while (lz->start_pfn == lz->end_pfn) /* the empty ZONE_MOVABLE */
			lz--;
		pa_pfn_t mid = lz->start_pfn + (lz->end_pfn - lz->start_pfn) / 2;
		uint64_t grown = pa_deferred_grow(a, mid);
		CHECK_MSG(grown > 0 && last_zones_managed(a) == was + grown, "%s: grown %llu", l1,
		          (unsigned long long)grown);
		CHECK_EQ_U64(pa_deferred_grow(a, mid), 0);
		CHECK(lz->init_pfn > mid);
		VALIDATE(a);
		for (pa_pfn_t p = 0; p < a->nr_frames; p += 1u << 12)
			pa_deferred_grow(a, p);
		pa_deferred_grow(a, a->nr_frames - 1);
		CHECK_EQ_U64(last_zones_managed(a), want);
		check_same_report(a, b, PA_REPORT_ZONEINFO, l1);
		check_same_then_shutdown(a, b, l1);
	}
}

/* Lazy, the allocations that run short set the rest up, and the last ends init. */
TEST(deferred_init_lazy_allocations_set_up_the_rest_and_end_init)
{
	const char *l1 = "mem=4G max_order=10 kcompactd=manual pcp_orders=none deferred_init=lazy";
	const char *l0 = "mem=4G max_order=10 kcompactd=manual pcp_orders=none deferred_init=0";
	struct pa_pool *b = boot_raw(l0), *a = boot_raw(l1);
	size_t cap = 8192, n = 0;
	struct pa_page **held = calloc(cap, sizeof *held);
	REQUIRE(held);
	while (n < cap && (held[n] = pa_alloc_pages(a, PA_GFP_MOVABLE | PA_GFP_NOWARN, 9)))
		n++;
	CHECK_EQ_U64(last_zones_managed(a), last_zones_managed(b));
	VALIDATE(a);
	while (n)
		pa_free_pages(a, held[--n], 9);
	free(held);
	pa_drain_all(a);
	for (unsigned z = 0; z < pa_zone_count(a); z++) {
		struct pa_zone_info x, y;
		REQUIRE(pa_zone_info(a, z, &x) == 0 && pa_zone_info(b, z, &y) == 0);
		CHECK_EQ_U64(x.managed, y.managed);
		CHECK_EQ_U64(x.watermark_min, y.watermark_min);
		CHECK_EQ_U64(x.watermark_low, y.watermark_low);
		CHECK_EQ_U64(x.watermark_high, y.watermark_high);
		CHECK_EQ_U64(a->zones[z].pcp[0]->high_max, b->zones[z].pcp[0]->high_max);
	}
	check_same_then_shutdown(a, b, l1);
}

/* With deferred_on_demand=0 only pa_deferred_grow() sets frames up; back on, allocations do. */
TEST(deferred_init_lazy_on_demand_off_leaves_the_rest_to_pa_deferred_grow)
{
	struct pa_pool *a = boot_raw("mem=4G max_order=10 kcompactd=manual pcp_orders=none "
	                             "deferred_init=lazy");
	REQUIRE(pa_ctl_write(a, "deferred_on_demand", "0") == 0);
	uint64_t was = last_zones_managed(a);
	size_t cap = 8192, n = 0;
	struct pa_page **held = calloc(cap, sizeof *held);
	REQUIRE(held);
	while (n < cap && (held[n] = pa_alloc_pages(a, PA_GFP_MOVABLE | PA_GFP_NOWARN, 9)))
		n++;
	CHECK_EQ_U64(last_zones_managed(a), was);
	const struct pa_zone *lz = &a->zones[a->nr_zones - 1];
	while (lz->start_pfn == lz->end_pfn) /* the empty ZONE_MOVABLE */
		lz--;
	CHECK(pa_deferred_grow(a, lz->init_pfn) > 0);
	CHECK((held[n] = pa_alloc_pages(a, PA_GFP_MOVABLE | PA_GFP_NOWARN, 9)) != NULL);
	n += held[n] != NULL;
	REQUIRE(pa_ctl_write(a, "deferred_on_demand", "1") == 0);
	while (n < cap && (held[n] = pa_alloc_pages(a, PA_GFP_MOVABLE | PA_GFP_NOWARN, 9)))
		n++;
	CHECK(lz->init_pfn >= lz->end_pfn);
	VALIDATE(a);
	while (n)
		pa_free_pages(a, held[--n], 9);
	free(held);
	VALIDATE(a);
	pa_shutdown(a);
}

struct churn_arg {
	struct pa_pool *pool;
	unsigned id;
	uint64_t ops;
};

static void *churn_main(void *argp)
{
	struct churn_arg *c = argp;
	struct pa_page *held[32] = { 0 };
	unsigned ord[32] = { 0 };
	for (uint64_t i = 0; i < c->ops; i++) {
		unsigned k = (unsigned)(i * 7 + c->id) % 32;
		if (held[k])
			pa_free_pages(c->pool, held[k], ord[k]);
		ord[k] = (unsigned)(i + c->id) % 4;
		held[k] = pa_alloc_pages(c->pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, ord[k]);
	}
	for (unsigned k = 0; k < 32; k++)
		if (held[k])
			pa_free_pages(c->pool, held[k], ord[k]);
	return NULL;
}

/* Init threads, allocating threads and pa_validate at once (run under TSan too). */
TEST(deferred_init_races_allocations_and_validate)
{
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		char line[256];
		snprintf(line, sizeof line, "%s kcompactd=manual", lines[i]);
		struct pa_pool *pool = boot_raw(line);
		pthread_t t[2];
		struct churn_arg args[2];
		for (unsigned k = 0; k < 2; k++) {
			args[k] = (struct churn_arg){ pool, k,
				                      (uint64_t)(20000 * test_scale()) + 100 };
			REQUIRE(pthread_create(&t[k], NULL, churn_main, &args[k]) == 0);
		}
		for (unsigned r = 0; r < 3; r++)
			VALIDATE(pool);
		for (unsigned k = 0; k < 2; k++)
			pthread_join(t[k], NULL);
		pa_deferred_init_wait(pool);
		pa_drain_all(pool);
		VALIDATE(pool);
		struct pa_usage u;
		pa_get_usage(pool, &u);
		CHECK_EQ_U64(u.allocated, 0);
		pa_shutdown(pool);
	}
}

/* Shutting down while init threads run stops them cleanly. */
TEST(deferred_init_shutdown_during_init)
{
	for (unsigned r = 0; r < 5; r++)
		pa_shutdown(boot_raw("mem=64G max_order=10 memhole=1G-1100M"));
}

/* A 4 TiB pool, metadata only: boots with the descriptors of its free memory unwritten. */
TEST(deferred_init_untouched_memory_writes_no_descriptor)
{
	struct pa_pool *pool = boot_raw("mem=4T");
	pa_deferred_init_wait(pool);
	uint64_t untouched = 0;
	for (unsigned i = 0; i < pool->nr_zones; i++)
		untouched += pool->zones[i].nr_untouched << pool->cfg.chunk_order;
	struct pa_usage u;
	pa_get_usage(pool, &u);
	CHECK_MSG(untouched * 100 >= u.managed * 99,
	          "only %llu of %llu managed frames untouched after boot",
	          (unsigned long long)untouched, (unsigned long long)u.managed);
	struct pa_page *p = pa_alloc_pages(pool, PA_GFP_KERNEL, 0);
	REQUIRE(p);
	pa_free_pages(pool, p, 0);
	pa_shutdown(pool);
}
