/* SPDX-License-Identifier: MIT */
/*
 * Frame map: pfns run 0 .. mem / page_size; pfn <-> descriptor conversions
 * round-trip; absent sections (a hole covering a whole 128 MiB section) have
 * no descriptor and cost no memory; frames of a partial hole have a
 * descriptor but are never handed out; a 64G metadata-only pool boots with at
 * most 16 bytes per frame.
 */
#include "helpers.h"

#include "platform/platform.h"
#include "memmap.h"

#include <errno.h>
#include <time.h>

#define MiB (1ull << 20)
#define GiB (1ull << 30)

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif
#ifndef UNDER_SANITIZER
#define UNDER_SANITIZER 0
#endif

static uint64_t proc_status_kib(const char *field)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	uint64_t v = 0;
	size_t n = strlen(field);
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, field, n) && line[n] == ':')
			v = strtoull(line + n + 1, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static struct pa_config config_of(struct pa_pool *pool)
{
	struct pa_config c;
	pa_get_config(pool, &c);
	return c;
}

/*
 * Take every managed frame as an order-0 block (exact capacity: not one more),
 * CHECK that none is in the hole [lo, hi), and free them all again.
 */
static void expect_fill_avoids_hole(struct pa_pool *pool, uint64_t managed, pa_pfn_t lo,
                                    pa_pfn_t hi)
{
	uint64_t nr;
	struct pa_page **pages =
	        alloc_order0_all(pool, PA_GFP_NOWARN | PA_GFP_NOCOMPACT, managed + 16, &nr);
	CHECK_EQ_U64(nr, managed);
	for (uint64_t i = 0; i < nr; i++) {
		pa_pfn_t pfn = pa_page_to_pfn(pool, pages[i]);
		CHECK_MSG(pfn < lo || pfn >= hi, "pfn %" PRIu64 " of the hole was allocated",
		          (uint64_t)pfn);
	}
	VALIDATE(pool);
	free_order0_all(pool, pages, nr);
}

TEST(memmap_pfn_span_is_mem_over_page_size)
{
	static const struct {
		const char *line;
		uint64_t total;
	} rows[] = {
		{ "mem=1G", GiB >> 12 },
		{ "mem=1G page_shift=14", GiB >> 14 },
		{ "mem=4G page_shift=16", (4 * GiB) >> 16 },
		{ "mem=64M", (64 * MiB) >> 12 },
		{ "mem=1G memhole=896M-1G", GiB >> 12 }, /* a hole at the end keeps the span */
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		struct pa_pool *pool = test_boot(rows[i].line);
		struct pa_config c = config_of(pool);
		CHECK_MSG(c.total_pages == rows[i].total,
		          "%s: total_pages %" PRIu64 ", expected %" PRIu64, rows[i].line,
		          c.total_pages, rows[i].total);
		CHECK_EQ_U64(c.section_shift, 27 - c.page_shift);
		CHECK(pa_pfn_to_page(pool, c.total_pages) == NULL);
		CHECK(pa_pfn_to_page(pool, c.total_pages + 12345) == NULL);
		CHECK(pa_pfn_to_page(pool, PA_PFN_INVALID) == NULL);
		pa_shutdown(pool);
	}
}

TEST(memmap_pfn_and_descriptor_round_trip)
{
	struct pa_pool *pool = test_boot("mem=1G");
	struct pa_config c = config_of(pool);
	struct pa_page *prev = NULL;
	for (pa_pfn_t pfn = 0; pfn < c.total_pages; pfn += 4093) {
		struct pa_page *p = pa_pfn_to_page(pool, pfn);
		REQUIRE(p != NULL);
		CHECK(p != prev);
		CHECK_EQ_U64(pa_page_to_pfn(pool, p), pfn);
		prev = p;
	}
	pa_pfn_t last = c.total_pages - 1;
	CHECK(pa_pfn_to_page(pool, last) != NULL);
	CHECK_EQ_U64(pa_page_to_pfn(pool, pa_pfn_to_page(pool, last)), last);
	CHECK_EQ_U64(pa_page_to_pfn(pool, pa_pfn_to_page(pool, 0)), 0);
	/* Allocated blocks convert too. */
	struct pa_page *blk = pa_alloc_pages(pool, PA_GFP_KERNEL, 5);
	REQUIRE(blk);
	pa_pfn_t head = pa_page_to_pfn(pool, blk);
	CHECK(head < c.total_pages);
	CHECK_EQ_U64(head % 32, 0);
	CHECK(pa_pfn_to_page(pool, head) == blk);
	pa_free_pages(pool, blk, 5);
	VALIDATE(pool);
	pa_shutdown(pool);
}

TEST(memmap_page_to_pfn_rejects_foreign_descriptors)
{
	struct pa_pool *a = test_boot("mem=64M");
	struct pa_pool *b = test_boot("mem=64M");
	struct pa_page *pb = pa_pfn_to_page(b, 100);
	REQUIRE(pb);
	CHECK_EQ_U64(pa_page_to_pfn(a, pb), PA_PFN_INVALID);
	CHECK_EQ_U64(pa_page_to_pfn(b, pb), 100);
	uint64_t local[4] = { 0 };
	CHECK_EQ_U64(pa_page_to_pfn(a, (struct pa_page *)local), PA_PFN_INVALID);
	CHECK_EQ_U64(pa_page_to_pfn(a, NULL), PA_PFN_INVALID);
	/* Inside the map but not on a descriptor boundary. */
	struct pa_page *pa100 = pa_pfn_to_page(a, 100);
	REQUIRE(pa100);
	CHECK_EQ_U64(pa_page_to_pfn(a, (struct pa_page *)((char *)pa100 + 1)), PA_PFN_INVALID);
	/* One past the end of the map. */
	struct pa_page *lastp = pa_pfn_to_page(a, config_of(a).total_pages - 1);
	REQUIRE(lastp);
	CHECK_EQ_U64(pa_page_to_pfn(a, lastp + 1), PA_PFN_INVALID);
	pa_shutdown(a);
	pa_shutdown(b);
}

TEST(memmap_descriptor_is_at_most_16_bytes)
{
	CHECK(sizeof(struct pa_page) <= 16);
	static const char *const lines[] = { "mem=64M", "mem=1G page_shift=14",
		                             "mem=4G page_shift=16", "mem=1G max_order=20" };
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		struct pa_pool *pool = test_boot(lines[i]);
		unsigned m = config_of(pool).metadata_bytes_per_frame;
		CHECK_MSG(m >= 1 && m <= 16, "%s: metadata_bytes_per_frame %u", lines[i], m);
		pa_shutdown(pool);
	}
}

TEST(memmap_absent_section_has_no_descriptor)
{
	/* 256M-512M covers sections 2 and 3 entirely: they are absent. */
	struct pa_pool *pool = test_boot("mem=1G memhole=256M-512M");
	pa_pfn_t lo = (256 * MiB) >> 12, hi = (512 * MiB) >> 12;
	CHECK(pa_pfn_to_page(pool, lo - 1) != NULL);
	CHECK(pa_pfn_to_page(pool, hi) != NULL);
	for (pa_pfn_t pfn = lo; pfn < hi; pfn += 511)
		CHECK_MSG(pa_pfn_to_page(pool, pfn) == NULL, "pfn %" PRIu64 " in an absent section",
		          (uint64_t)pfn);
	CHECK(pa_pfn_to_page(pool, hi - 1) == NULL);
	CHECK(!memmap_section_present(pool, lo));
	CHECK(!memmap_section_present(pool, hi - 1));
	CHECK(memmap_section_present(pool, lo - 1));
	struct pa_usage u;
	pa_get_usage(pool, &u);
	CHECK_EQ_U64(u.managed, (GiB - 256 * MiB) >> 12);
	CHECK_EQ_U64(u.free + u.allocated + u.reserved, u.managed);
	/* Fresh pool: only whole order-10 blocks (4M), 768M of them. */
	uint64_t counts[11];
	buddy_counts(pool, counts, 11);
	CHECK_EQ_U64(counts[10], 768 / 4);
	for (unsigned o = 0; o < 10; o++)
		CHECK_EQ_U64(counts[o], 0);
	VALIDATE(pool);
	pa_shutdown(pool);
}

TEST(memmap_holes_at_the_edges)
{
	struct pa_pool *pool = test_boot("mem=1G memhole=0-128M memhole=896M-1G");
	CHECK(pa_pfn_to_page(pool, 0) == NULL);
	CHECK(pa_pfn_to_page(pool, (128 * MiB >> 12) - 1) == NULL);
	CHECK(pa_pfn_to_page(pool, 128 * MiB >> 12) != NULL);
	CHECK(pa_pfn_to_page(pool, (896 * MiB >> 12) - 1) != NULL);
	CHECK(pa_pfn_to_page(pool, 896 * MiB >> 12) == NULL);
	CHECK(pa_pfn_to_page(pool, (GiB >> 12) - 1) == NULL);
	struct pa_usage u;
	pa_get_usage(pool, &u);
	CHECK_EQ_U64(u.managed, (768 * MiB) >> 12);
	VALIDATE(pool);
	pa_shutdown(pool);
}

TEST(memmap_partial_hole_frames_are_never_allocated)
{
	/* 16M-17M: 256 frames inside section 0, which stays present. pcp_orders=none: the
	 * test counts exact capacity and the buddy's merges, with no frame on a per-CPU list. */
	struct pa_pool *pool =
	        test_boot("mem=64M memhole=16M-17M min_free_kbytes=0 pcp_orders=none");
	pa_pfn_t lo = (16 * MiB) >> 12, hi = (17 * MiB) >> 12;
	/*
	 * The hole's frames have descriptors (their section is backed), marked as
	 * holes; the public lookup says NULL for them, as for any frame without memory.
	 */
	for (pa_pfn_t pfn = lo; pfn < hi; pfn++) {
		CHECK(pa_pfn_to_page(pool, pfn) == NULL);
		CHECK(memmap_section_present(pool, pfn));
		CHECK(!memmap_frame_present(pool, pfn));
		CHECK_EQ_U64(pfn_page(pool, pfn)->state, PS_HOLE);
	}
	CHECK(pa_pfn_to_page(pool, lo - 1) != NULL);
	CHECK(pa_pfn_to_page(pool, hi) != NULL);
	CHECK(pa_folio_head(pool, pfn_page(pool, lo)) == NULL);
	CHECK_EQ_U64(pa_folio_order(pool, pfn_page(pool, lo)), (uint64_t)-1);

	struct pa_usage u;
	pa_get_usage(pool, &u);
	uint64_t managed = ((64 - 1) * MiB) >> 12;
	CHECK_EQ_U64(u.managed, managed);

	/* The hole splits the merge: 0-16M in 4M blocks, 17M (1M), 18M (2M), 20M-64M in 4M. */
	uint64_t counts[11];
	buddy_counts(pool, counts, 11);
	CHECK_EQ_U64(counts[10], 4 + 11);
	CHECK_EQ_U64(counts[9], 1);
	CHECK_EQ_U64(counts[8], 1);
	for (unsigned o = 0; o < 8; o++)
		CHECK_EQ_U64(counts[o], 0);

	expect_fill_avoids_hole(pool, managed, lo, hi);
	buddy_counts(pool, counts, 11);
	CHECK_EQ_U64(counts[10], 15);
	CHECK_EQ_U64(counts[9], 1);
	CHECK_EQ_U64(counts[8], 1);
	VALIDATE(pool);
	pa_shutdown(pool);
}

TEST(memmap_hole_across_a_section_boundary)
{
	/* 120M-136M crosses the 128M boundary: both sections hold memory, so both stay present.
	 * pcp_orders=none: exact capacity, with no frame left on another CPU's list. */
	struct pa_pool *pool =
	        test_boot("mem=256M memhole=120M-136M min_free_kbytes=0 pcp_orders=none");
	pa_pfn_t lo = (120 * MiB) >> 12, hi = (136 * MiB) >> 12;
	CHECK(memmap_section_present(pool, lo));
	CHECK(memmap_section_present(pool, hi - 1));
	CHECK(pa_pfn_to_page(pool, lo) == NULL);
	CHECK(pa_pfn_to_page(pool, hi - 1) == NULL);
	CHECK(pa_pfn_to_page(pool, lo - 1) != NULL);
	CHECK(pa_pfn_to_page(pool, hi) != NULL);
	uint64_t managed = (240 * MiB) >> 12;
	struct pa_usage u;
	pa_get_usage(pool, &u);
	CHECK_EQ_U64(u.managed, managed);
	expect_fill_avoids_hole(pool, managed, lo, hi);
	VALIDATE(pool);
	pa_shutdown(pool);
}

TEST(memmap_whole_section_hole_is_never_allocated)
{
	/* pcp_orders=none: exact capacity and the buddy's merges, with no per-CPU lists. */
	struct pa_pool *pool =
	        test_boot("mem=384M memhole=128M-256M min_free_kbytes=0 pcp_orders=none");
	uint64_t managed = (256 * MiB) >> 12;
	pa_pfn_t lo = (128 * MiB) >> 12, hi = (256 * MiB) >> 12;
	expect_fill_avoids_hole(pool, managed, lo, hi);
	uint64_t counts[11];
	buddy_counts(pool, counts, 11);
	CHECK_EQ_U64(counts[10], 64);
	VALIDATE(pool);
	pa_shutdown(pool);
}

TEST(memmap_max_order_block_spans_many_sections)
{
	/* Order 20 is 4G at 4K pages: one block spans 32 sections. */
	struct pa_pool *pool = test_boot("mem=8G max_order=20 min_free_kbytes=0");
	uint64_t counts[21];
	buddy_counts(pool, counts, 21);
	CHECK_EQ_U64(counts[20], 2); /* DMA32 [0,4G) and Normal [4G,8G) */
	for (unsigned o = 0; o < 20; o++)
		CHECK_EQ_U64(counts[o], 0);
	struct pa_page *p = pa_alloc_pages(pool, PA_GFP_NOWARN, 20);
	REQUIRE(p);
	CHECK_EQ_U64(pa_page_to_pfn(pool, p) % (1ull << 20), 0);
	struct pa_page *q = pa_alloc_pages(pool, PA_GFP_NOWARN, 18);
	REQUIRE(q);
	VALIDATE(pool);
	pa_free_pages(pool, q, 18);
	pa_free_pages(pool, p, 20);
	buddy_counts(pool, counts, 21);
	CHECK_EQ_U64(counts[20], 2);
	VALIDATE(pool);
	pa_shutdown(pool);
}

TEST(memmap_64g_metadata_only_boot)
{
	uint64_t rss0 = proc_status_kib("VmRSS");
	double t0 = now_s();
	struct pa_pool *pool = test_boot("mem=64G");
	double t = now_s() - t0;
	uint64_t rss1 = proc_status_kib("VmRSS");
	struct pa_config c = config_of(pool);
	CHECK_EQ_U64(c.total_pages, (64 * GiB) >> 12);
	CHECK(c.metadata_bytes_per_frame <= 16);
	CHECK(pa_pfn_to_page(pool, c.total_pages - 1) != NULL);
	CHECK(pa_pfn_to_page(pool, c.total_pages) == NULL);
	struct pa_usage u;
	pa_get_usage(pool, &u);
	CHECK_EQ_U64(u.managed, c.total_pages);
	uint64_t growth = rss1 > rss0 ? rss1 - rss0 : 0;
	fprintf(stderr,
	        "    mem=64G: boot %.1f ms, RSS growth %" PRIu64 " KiB (%.2f bytes/frame)\n",
	        t * 1e3, growth, (double)growth * 1024 / (double)c.total_pages);
	if (!UNDER_SANITIZER) {
		/* The whole map at 16 bytes a frame is 256 MiB; allow 32 MiB for the rest. */
		uint64_t bound_kib = c.total_pages * 16 / 1024 + 32 * 1024;
		CHECK_MSG(growth <= bound_kib, "RSS grew %" PRIu64 " KiB, bound %" PRIu64 " KiB",
		          growth, bound_kib);
		CHECK_MSG(t < 5.0, "mem=64G took %.2f s to boot", t);
	}
	pa_shutdown(pool);
}

TEST(memmap_holes_cost_no_memory)
{
	/* 48G of the 64G are a hole: those sections must not be backed. */
	uint64_t rss0 = proc_status_kib("VmRSS");
	struct pa_pool *pool = test_boot("mem=64G memhole=8G-56G");
	uint64_t rss1 = proc_status_kib("VmRSS");
	struct pa_config c = config_of(pool);
	CHECK_EQ_U64(c.total_pages, (64 * GiB) >> 12);
	CHECK(pa_pfn_to_page(pool, (8 * GiB >> 12) - 1) != NULL);
	CHECK(pa_pfn_to_page(pool, 8 * GiB >> 12) == NULL);
	CHECK(pa_pfn_to_page(pool, 30 * GiB >> 12) == NULL);
	CHECK(pa_pfn_to_page(pool, (56 * GiB >> 12) - 1) == NULL);
	CHECK(pa_pfn_to_page(pool, 56 * GiB >> 12) != NULL);
	struct pa_usage u;
	pa_get_usage(pool, &u);
	CHECK_EQ_U64(u.managed, (16 * GiB) >> 12);
	uint64_t growth = rss1 > rss0 ? rss1 - rss0 : 0;
	fprintf(stderr, "    mem=64G memhole=8G-56G: RSS growth %" PRIu64 " KiB\n", growth);
	if (!UNDER_SANITIZER)
		CHECK_MSG(growth < 64 * 1024,
		          "a pool with 48G of holes grew RSS by %" PRIu64 " KiB", growth);
	pa_shutdown(pool);
}

/*
 * A platform that counts what the pool reserves, commits and releases
 * through it, over the default hooks. Unlike RSS, the count means the same
 * under the sanitizers (whose shadow memory and allocator keep RSS up).
 */
struct counting_platform {
	struct pa_platform base; /* the defaults */
	uint64_t reserves, releases, reserved_bytes, released_bytes, committed_bytes;
};

static void *count_reserve(void *ctx, size_t bytes)
{
	struct counting_platform *c = ctx;
	void *p = c->base.reserve(c->base.ctx, bytes);
	if (p) {
		c->reserves++;
		c->reserved_bytes += bytes;
	}
	return p;
}

static int count_commit(void *ctx, void *addr, size_t bytes)
{
	struct counting_platform *c = ctx;
	int rc = c->base.commit(c->base.ctx, addr, bytes);
	if (rc == 0)
		c->committed_bytes += bytes;
	return rc;
}

static void count_release(void *ctx, void *addr, size_t bytes)
{
	struct counting_platform *c = ctx;
	c->releases++;
	c->released_bytes += bytes;
	c->base.release(c->base.ctx, addr, bytes);
}

TEST(memmap_shutdown_gives_memory_back)
{
	/* Everything the pool reserved through its platform is released at shutdown. */
	struct counting_platform c = { 0 };
	platform_fill_defaults(&c.base);
	struct pa_platform plat = { .ctx = &c,
		                    .reserve = count_reserve,
		                    .commit = count_commit,
		                    .release = count_release };
	struct pa_pool *pool = test_boot_on("mem=16G", &plat);
	pa_shutdown(pool);
	CHECK(c.reserves > 0 && c.committed_bytes > 0);
	CHECK_EQ_U64(c.releases, c.reserves);
	CHECK_EQ_U64(c.released_bytes, c.reserved_bytes);

	/* Boot and shut down a 16G pool repeatedly: RSS must not keep growing. */
	uint64_t first = 0, last = 0;
	for (int i = 0; i < 5; i++) {
		pool = test_boot("mem=16G");
		pa_shutdown(pool);
		uint64_t rss = proc_status_kib("VmRSS");
		if (i == 0)
			first = rss;
		last = rss;
	}
	fprintf(stderr, "    RSS after first %" PRIu64 " KiB, after last %" PRIu64 " KiB\n", first,
	        last);
	/* The sanitizers' shadow memory and allocator keep RSS up: there only the count above holds. */
	if (!UNDER_SANITIZER)
		CHECK_MSG(last <= first + 16 * 1024, "RSS grew from %" PRIu64 " to %" PRIu64 " KiB",
		          first, last);
}
