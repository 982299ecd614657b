/* SPDX-License-Identifier: MIT */
/*
 * Misuse of the public API: every public function with every kind of bad
 * argument (a NULL pool, descriptor or output; a descriptor of another pool
 * or not a descriptor at all; a pfn or order out of range; unknown gfp bits;
 * a node that does not exist; empty and reversed ranges; unknown control
 * paths and bad values). Each call is refused with the error its header
 * comment documents, and refusing changes nothing: after every case the pool
 * validates, its frame accounting is what it was, and every report line the
 * refusals produced was counted.
 *
 * The number of bad calls checked is printed at the end.
 */
#include "test.h"

#include <errno.h>
#include <limits.h>

#define BOOT_LINE                                                                                  \
	"mem=256M numa=2 max_order=10 cma=4M memhole=192M-193M min_free_kbytes=0 "                 \
	"kcompactd=manual nr_cpus=2"
#define HOLE_BYTES (192ull << 20)

static unsigned nr_cases;

/* One bad call: its result must be the documented refusal. */
#define REFUSED(expr, expected)                                                                    \
	do {                                                                                       \
		nr_cases++;                                                                        \
		long long got_ = (long long)(expr), want_ = (long long)(expected);                 \
		if (got_ != want_)                                                                 \
			test_fail(__FILE__, __LINE__, "%s: %lld, expected %lld", #expr, got_,      \
			          want_);                                                          \
	} while (0)

/* One bad call that returns a pointer: NULL. */
#define REFUSED_NULL(expr)                                                                         \
	do {                                                                                       \
		nr_cases++;                                                                        \
		const void *got_ = (expr);                                                         \
		if (got_ != NULL)                                                                  \
			test_fail(__FILE__, __LINE__, "%s: %p, expected NULL", #expr, got_);       \
	} while (0)

/* One bad call that returns nothing: it must return (and leave the pool as it was). */
#define IGNORED(stmt)                                                                              \
	do {                                                                                       \
		nr_cases++;                                                                        \
		stmt;                                                                              \
	} while (0)

__attribute__((destructor)) static void print_count(void)
{
	fprintf(stderr, "%u bad calls checked\n", nr_cases);
}

/* A pool whose reports are counted, and what it looked like before the bad calls. */
struct fx {
	struct pa_pool *pool;
	struct pa_platform plat;
	struct report_capture cap;
	struct pa_usage usage;
	uint64_t bad_page;
	struct pa_config cfg;
};

static uint64_t fx_bad_page(struct fx *f)
{
	uint64_t v = 0;
	REQUIRE(pa_vmstat_read(f->pool, "bad_page", &v) == 0);
	return v;
}

static void fx_boot(struct fx *f, const char *line)
{
	memset(f, 0, sizeof *f);
	f->plat.ctx = &f->cap;
	f->plat.report = capture_report;
	f->pool = test_boot_on(line, &f->plat);
	pa_get_config(f->pool, &f->cfg);
	pa_get_usage(f->pool, &f->usage);
	f->bad_page = fx_bad_page(f);
}

/*
 * After the bad calls: the pool validates, holds what it held, counted
 * bad_frees bad frees and printed `lines` report lines; then shut it down.
 */
static void fx_done(struct fx *f, uint64_t bad_frees, int lines)
{
	VALIDATE(f->pool);
	struct pa_usage u;
	pa_drain_all(f->pool);
	pa_get_usage(f->pool, &u);
	CHECK_EQ_U64(u.managed, f->usage.managed);
	CHECK_EQ_U64(u.allocated, f->usage.allocated);
	CHECK_EQ_U64(u.free + u.reserved, f->usage.free + f->usage.reserved);
	CHECK_EQ_U64(fx_bad_page(f) - f->bad_page, bad_frees);
	CHECK_MSG(f->cap.lines == lines, "%d report lines, expected %d (last: %s)", f->cap.lines,
	          lines, f->cap.last);
	pa_shutdown(f->pool);
}

/* A descriptor pointer that is not one: inside the map but between two descriptors. */
static struct pa_page *misaligned(struct pa_page *p)
{
	return (struct pa_page *)((uintptr_t)p + 1);
}

/* The descriptor k frames after p's (p heads a block of pool). */
static struct pa_page *at(struct pa_pool *pool, struct pa_page *p, uint64_t k)
{
	struct pa_page *q = pa_pfn_to_page(pool, pa_page_to_pfn(pool, p) + k);
	if (!q) {
		test_fail(__FILE__, __LINE__, "no frame %" PRIu64 " frames after the block", k);
		test_abort_case();
	}
	return q;
}

/* Descriptor-sized steps just outside the frame map: below its first and past its last. */
static struct pa_page *below_map(struct pa_pool *pool)
{
	uintptr_t first = (uintptr_t)pa_pfn_to_page(pool, 0);
	return (struct pa_page *)(first - ((uintptr_t)pa_pfn_to_page(pool, 1) - first));
}

static struct pa_page *past_map(struct pa_pool *pool, uint64_t total_pages)
{
	uintptr_t first = (uintptr_t)pa_pfn_to_page(pool, 0);
	return (struct pa_page *)(first +
	                          total_pages * ((uintptr_t)pa_pfn_to_page(pool, 1) - first));
}

TEST(boot_refuses_null_and_bad_lines)
{
	struct pa_pool *pool = (struct pa_pool *)&nr_cases; /* a sentinel that must stay put */
	char err[256];
	REFUSED(pa_boot("mem=64M", NULL, NULL, err, sizeof err), -EINVAL);
	CHECK(strstr(err, "out") != NULL);
	REFUSED(pa_boot(NULL, NULL, &pool, err, sizeof err), -EINVAL);
	CHECK(strstr(err, "cmdline") != NULL);
	REFUSED(pa_boot(NULL, NULL, NULL, NULL, 0), -EINVAL);
	REFUSED(pa_boot("bogus=1", NULL, &pool, NULL, 0), -EINVAL);
	REFUSED(pa_boot("bogus=1", NULL, &pool, NULL, sizeof err), -EINVAL);
	strcpy(err, "untouched");
	REFUSED(pa_boot("bogus=1", NULL, &pool, err, 0), -EINVAL);
	CHECK(strcmp(err, "untouched") == 0);
	static const char *const bad[] = {
		"bogus=1",       "mem",          "mem=",           "mem=abc",      "mem=0",
		"mem=64Q",       "mem=1K",       "max_order=99",   "max_order=-1", "page_shift=13",
		"numa=0",        "nr_cpus=0",    "cma=huge",       "cma=128M",     "memhole=9M-8M",
		"pcp_orders=99", "backing=tape", "bad_page=maybe", "debug=3",      "=1",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char line[128];
		snprintf(line, sizeof line, "mem=64M %s", bad[i]);
		err[0] = '\0';
		nr_cases++;
		int rc = pa_boot(line, NULL, &pool, err, sizeof err);
		CHECK_MSG(rc < 0, "pa_boot(\"%s\") = %d", line, rc);
		CHECK_MSG(err[0] != '\0', "pa_boot(\"%s\"): no message", line);
	}
	CHECK(pool == (struct pa_pool *)&nr_cases);
	IGNORED(pa_shutdown(NULL));
}

static void *never_reserve(void *ctx, size_t bytes)
{
	(void)ctx, (void)bytes;
	return NULL;
}

static int never_commit(void *ctx, void *addr, size_t bytes)
{
	(void)ctx, (void)addr, (void)bytes;
	return -ENOMEM;
}

static void never_release(void *ctx, void *addr, size_t bytes)
{
	(void)ctx, (void)addr, (void)bytes;
}

TEST(boot_refuses_one_or_two_of_the_memory_hooks)
{
	struct pa_pool *pool = (struct pa_pool *)&nr_cases;
	char err[256];
	for (unsigned set = 1; set < 7; set++) { /* every mix of the three but none and all */
		struct pa_platform plat = { .reserve = (set & 1) ? never_reserve : NULL,
			                    .commit = (set & 2) ? never_commit : NULL,
			                    .release = (set & 4) ? never_release : NULL };
		err[0] = '\0';
		REFUSED(pa_boot("mem=64M", &plat, &pool, err, sizeof err), -EINVAL);
		CHECK_MSG(strstr(err, "reserve, commit and release") != NULL, "set %u: %s", set,
		          err);
	}
	CHECK(pool == (struct pa_pool *)&nr_cases);
}

TEST(alloc_refuses_null_pool_unknown_gfp_and_orders)
{
	struct fx f;
	fx_boot(&f, BOOT_LINE);
	REFUSED_NULL(pa_alloc_pages(NULL, PA_GFP_KERNEL, 0));
	REFUSED_NULL(pa_alloc_pages(NULL, PA_GFP_MOVABLE, 3));
	REFUSED_NULL(pa_alloc_pages(f.pool, 1u << 31, 0));
	CHECK(strstr(f.cap.last, "gfp") != NULL);
	REFUSED_NULL(pa_alloc_pages(f.pool, PA_GFP_MOVABLE | (1u << 12), 0));
	REFUSED_NULL(pa_alloc_pages(f.pool, ~PA_GFP_ALL_FLAGS, 0));
	REFUSED_NULL(pa_alloc_pages(f.pool, UINT32_MAX, 2));
	unsigned orders[] = { f.cfg.max_order + 1, 31, 32, 63, 64, UINT_MAX };
	for (size_t i = 0; i < sizeof orders / sizeof orders[0]; i++) {
		REFUSED_NULL(pa_alloc_pages(f.pool, PA_GFP_KERNEL, orders[i]));
		REFUSED_NULL(pa_alloc_pages(f.pool, PA_GFP_MOVABLE | PA_GFP_ZERO, orders[i]));
		REFUSED_NULL(pa_alloc_pages(f.pool, PA_GFP_HIGH | PA_GFP_NOWARN, orders[i]));
	}
	/* 4 unknown-gfp reports, and one failure report per order without NOWARN. */
	fx_done(&f, 0, 4 + 2 * 6);
}

TEST(bulk_refuses_null_pool_null_out_unknown_gfp_and_orders)
{
	struct fx f;
	fx_boot(&f, BOOT_LINE);
	struct pa_page *out[8] = { 0 };
	REFUSED(pa_alloc_pages_bulk(NULL, PA_GFP_KERNEL, 0, 8, out), 0);
	REFUSED(pa_alloc_pages_bulk(f.pool, PA_GFP_KERNEL, 0, 8, NULL), 0);
	REFUSED(pa_alloc_pages_bulk(NULL, PA_GFP_KERNEL, 0, 8, NULL), 0);
	REFUSED(pa_alloc_pages_bulk(f.pool, 1u << 20, 0, 8, out), 0);
	REFUSED(pa_alloc_pages_bulk(f.pool, PA_GFP_KERNEL, f.cfg.max_order + 1, 8, out), 0);
	REFUSED(pa_alloc_pages_bulk(f.pool, PA_GFP_KERNEL, UINT_MAX, 8, out), 0);
	REFUSED(pa_alloc_pages_bulk(f.pool, PA_GFP_KERNEL, 0, 0, out), 0);
	for (int i = 0; i < 8; i++)
		CHECK(out[i] == NULL);
	fx_done(&f, 0, 3);
}

TEST(free_refuses_null_foreign_misaligned_and_wrong_orders)
{
	struct fx f, other;
	fx_boot(&f, BOOT_LINE);
	fx_boot(&other, "mem=16M min_free_kbytes=0");
	struct pa_page *p = pa_alloc_pages(f.pool, PA_GFP_KERNEL, 2);
	struct pa_page *q = pa_alloc_pages(other.pool, PA_GFP_KERNEL, 2);
	REQUIRE(p && q);
	IGNORED(pa_free_pages(NULL, p, 2)); /* nothing happens: p is still allocated */
	CHECK(pa_folio_order(f.pool, p) == 2);
	IGNORED(pa_free_pages(NULL, NULL, 0));
	uint64_t bad = 0;
	IGNORED(pa_free_pages(f.pool, NULL, 0));
	bad++;
	IGNORED(pa_free_pages(f.pool, q, 2)); /* the other pool's */
	bad++;
	IGNORED(pa_free_pages(f.pool, misaligned(p), 2));
	bad++;
	IGNORED(pa_free_pages(f.pool, below_map(f.pool), 0)); /* just below the map */
	bad++;
	IGNORED(pa_free_pages(f.pool, past_map(f.pool, f.cfg.total_pages), 0)); /* just past it */
	bad++;
	unsigned orders[] = { 0, 1, 3, f.cfg.max_order, f.cfg.max_order + 1, 32, 64, UINT_MAX };
	for (size_t i = 0; i < sizeof orders / sizeof orders[0]; i++) {
		IGNORED(pa_free_pages(f.pool, p, orders[i]));
		bad++;
	}
	IGNORED(pa_free_pages(f.pool, at(f.pool, p, 1), 0)); /* a tail frame */
	bad++;
	IGNORED(pa_free_pages(f.pool, at(f.pool, p, 4), 2)); /* a frame never allocated */
	bad++;
	CHECK(pa_folio_order(f.pool, p) == 2);
	CHECK(pa_folio_order(other.pool, q) == 2);
	/* The real frees still work, and a second one is a double free. */
	pa_free_pages(f.pool, p, 2);
	pa_free_pages(other.pool, q, 2);
	IGNORED(pa_free_pages(other.pool, q, 2));
	fx_done(&f, bad, (int)bad);
	fx_done(&other, 1, 1);
}

TEST(lookups_refuse_null_foreign_and_out_of_range)
{
	struct fx f, other;
	fx_boot(&f, BOOT_LINE);
	fx_boot(&other, "mem=16M min_free_kbytes=0");
	struct pa_page *p = pa_alloc_pages(f.pool, PA_GFP_MOVABLE | PA_GFP_COMP, 2);
	struct pa_page *q = pa_alloc_pages(other.pool, PA_GFP_KERNEL, 0);
	REQUIRE(p && q);
	REFUSED(pa_page_to_pfn(NULL, p), PA_PFN_INVALID);
	REFUSED(pa_page_to_pfn(f.pool, NULL), PA_PFN_INVALID);
	REFUSED(pa_page_to_pfn(NULL, NULL), PA_PFN_INVALID);
	REFUSED(pa_page_to_pfn(f.pool, q), PA_PFN_INVALID);
	REFUSED(pa_page_to_pfn(f.pool, misaligned(p)), PA_PFN_INVALID);
	REFUSED(pa_page_to_pfn(f.pool, below_map(f.pool)), PA_PFN_INVALID);
	REFUSED(pa_page_to_pfn(f.pool, past_map(f.pool, f.cfg.total_pages)), PA_PFN_INVALID);
	REFUSED(pa_page_to_pfn(f.pool, (struct pa_page *)&f), PA_PFN_INVALID);

	pa_pfn_t hole = HOLE_BYTES >> f.cfg.page_shift;
	REFUSED_NULL(pa_pfn_to_page(NULL, 0));
	REFUSED_NULL(pa_pfn_to_page(f.pool, f.cfg.total_pages));
	REFUSED_NULL(pa_pfn_to_page(f.pool, PA_PFN_INVALID));
	REFUSED_NULL(pa_pfn_to_page(f.pool, 1ull << 62));
	REFUSED_NULL(pa_pfn_to_page(f.pool, hole));

	REFUSED_NULL(pa_page_address(NULL, p));
	REFUSED_NULL(pa_page_address(f.pool, NULL));
	REFUSED_NULL(pa_page_address(f.pool, q));
	REFUSED_NULL(pa_page_address(f.pool, misaligned(p)));

	REFUSED_NULL(pa_folio_head(NULL, p));
	REFUSED_NULL(pa_folio_head(f.pool, NULL));
	REFUSED_NULL(pa_folio_head(f.pool, q));
	REFUSED_NULL(pa_folio_head(f.pool, misaligned(p)));
	REFUSED_NULL(pa_folio_head(f.pool, at(f.pool, p, 4))); /* a free frame */
	REFUSED(pa_folio_order(NULL, p), -1);
	REFUSED(pa_folio_order(f.pool, NULL), -1);
	REFUSED(pa_folio_order(f.pool, q), -1);
	REFUSED(pa_folio_order(f.pool, misaligned(p)), -1);
	REFUSED(pa_folio_order(f.pool, at(f.pool, p, 1)), -1); /* a tail: the head has the order */
	REFUSED(pa_folio_order(f.pool, at(f.pool, p, 4)), -1);
	CHECK(pa_folio_head(f.pool, at(f.pool, p, 3)) == p);

	REFUSED(pa_page_cookie(NULL, p), 0);
	REFUSED(pa_page_cookie(f.pool, NULL), 0);
	REFUSED(pa_page_cookie(f.pool, q), 0);
	REFUSED(pa_page_cookie(f.pool, at(f.pool, p, 4)), 0);
	pa_free_pages(f.pool, p, 2);
	pa_free_pages(other.pool, q, 0);
	fx_done(&f, 0, 0);
	fx_done(&other, 0, 0);
}

TEST(drains_and_pcp_info_refuse_null_and_unknown_zones)
{
	struct fx f;
	fx_boot(&f, BOOT_LINE);
	struct pa_pcp_info info;
	uint64_t blocks[(10 + 1) * 3];
	IGNORED(pa_drain_local(NULL));
	IGNORED(pa_drain_all(NULL));
	REFUSED(pa_drain_zone(NULL, 0, PA_ZONE_DMA32, 0), -EINVAL);
	REFUSED(pa_drain_zone(f.pool, 2, PA_ZONE_DMA32, 1), -ENOENT);
	REFUSED(pa_drain_zone(f.pool, 0, (enum pa_zone_type) - 1, 0), -ENOENT);
	REFUSED(pa_pcp_decay_frames(NULL, 0), -EINVAL);
	REFUSED(pa_pcp_decay_frames(f.pool, UINT_MAX), -EINVAL);
	REFUSED(pa_drain_list(NULL, 0, PA_ZONE_DMA32, 0, 0, 1), -EINVAL);
	REFUSED(pa_drain_list(f.pool, 0, PA_ZONE_DMA32, 0, 0, 3), -EINVAL);
	REFUSED(pa_drain_list(f.pool, 0, PA_ZONE_DMA32, 0, 0, UINT_MAX), -EINVAL);
	REFUSED(pa_drain_list(f.pool, UINT_MAX, PA_ZONE_DMA32, 0, 0, 1), -ENOENT);
	REFUSED(pa_drain_list(f.pool, 0, PA_ZONE_COUNT, 0, 0, 1), -ENOENT);
	REFUSED(pa_drain_list(f.pool, 0, PA_ZONE_DMA32, UINT_MAX, 0, 1), -ENOENT);
	REFUSED(pa_drain_list(f.pool, 0, PA_ZONE_DMA32, 0, UINT_MAX, 1), -ENOENT);
	REFUSED(pa_pcp_info(NULL, 0, PA_ZONE_DMA32, 0, &info, blocks), -EINVAL);
	REFUSED(pa_pcp_info(f.pool, 0, PA_ZONE_DMA32, 0, NULL, blocks), -EINVAL);
	REFUSED(pa_pcp_info(f.pool, 2, PA_ZONE_DMA32, 0, &info, blocks), -ENOENT);
	REFUSED(pa_pcp_info(f.pool, UINT_MAX, PA_ZONE_DMA32, 0, &info, blocks), -ENOENT);
	REFUSED(pa_pcp_info(f.pool, 0, PA_ZONE_COUNT, 0, &info, blocks), -ENOENT);
	REFUSED(pa_pcp_info(f.pool, 0, (enum pa_zone_type) - 1, 0, &info, blocks), -ENOENT);
	CHECK_EQ_U64(pa_pcp_info(f.pool, 0, PA_ZONE_MOVABLE, 0, &info, blocks), 0); /* empty */
	REFUSED(pa_pcp_info(f.pool, 0, PA_ZONE_DMA, 0, &info, blocks), -ENOENT);    /* zone_dma=0 */
	REFUSED(pa_pcp_info(f.pool, 0, PA_ZONE_DMA32, 2, &info, blocks), -ENOENT);
	REFUSED(pa_pcp_info(f.pool, 0, PA_ZONE_DMA32, UINT_MAX, &info, blocks), -ENOENT);
	fx_done(&f, 0, 0);
}

static enum pa_migrate_result no_move(void *ctx, uint64_t cookie, struct pa_page *old_folio,
                                      struct pa_page *new_folio, unsigned order)
{
	(void)ctx, (void)cookie, (void)old_folio, (void)new_folio, (void)order;
	return PA_MIGRATE_BUSY;
}

TEST(owners_and_pins_refuse_null_unknown_owners_and_wrong_blocks)
{
	struct fx f, other;
	fx_boot(&f, BOOT_LINE);
	fx_boot(&other, "mem=16M min_free_kbytes=0");
	struct pa_owner_ops ops = { .name = "misuse", .migrate = no_move };
	struct pa_owner_ops no_migrate = { .name = "nomigrate" };
	REFUSED(pa_owner_register(NULL, &ops), -EINVAL);
	REFUSED(pa_owner_register(f.pool, NULL), -EINVAL);
	REFUSED(pa_owner_register(f.pool, &no_migrate), -EINVAL);
	int id = pa_owner_register(f.pool, &ops);
	REQUIRE(id == 1);

	struct pa_page *mov = pa_alloc_pages(f.pool, PA_GFP_MOVABLE, 1);
	struct pa_page *unmov = pa_alloc_pages(f.pool, PA_GFP_KERNEL, 0);
	struct pa_page *q = pa_alloc_pages(other.pool, PA_GFP_MOVABLE, 0);
	REQUIRE(mov && unmov && q);
	REFUSED(pa_set_owner(NULL, mov, id, 7), -EINVAL);
	REFUSED(pa_set_owner(f.pool, NULL, id, 7), -EINVAL);
	REFUSED(pa_set_owner(f.pool, q, id, 7), -EINVAL);
	REFUSED(pa_set_owner(f.pool, misaligned(mov), id, 7), -EINVAL);
	REFUSED(pa_set_owner(f.pool, at(f.pool, mov, 1), id, 7), -EINVAL); /* a tail */
	REFUSED(pa_set_owner(f.pool, at(f.pool, mov, 2), id, 7), -EINVAL); /* free */
	REFUSED(pa_set_owner(f.pool, unmov, id, 7), -EINVAL);
	REFUSED(pa_set_owner(f.pool, mov, -1, 7), -EINVAL);
	REFUSED(pa_set_owner(f.pool, mov, id + 1, 7), -EINVAL);
	REFUSED(pa_set_owner(f.pool, mov, 256, 7), -EINVAL);
	REFUSED(pa_set_owner(f.pool, mov, INT_MIN, 7), -EINVAL);
	CHECK(pa_page_cookie(f.pool, mov) == 0);

	REFUSED_NULL(pa_alloc_owned(NULL, PA_GFP_MOVABLE, 0, id, 1));
	REFUSED_NULL(pa_alloc_owned(f.pool, PA_GFP_KERNEL, 0, id, 1));               /* reported */
	REFUSED_NULL(pa_alloc_owned(f.pool, PA_GFP_MOVABLE | (1u << 30), 0, id, 1)); /* reported */
	REFUSED_NULL(pa_alloc_owned(f.pool, PA_GFP_MOVABLE, 0, id + 1, 1));
	REFUSED_NULL(pa_alloc_owned(f.pool, PA_GFP_MOVABLE, 0, -1, 1));
	REFUSED_NULL(pa_alloc_owned(f.pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, UINT_MAX, id, 1));

	REFUSED(pa_pin(NULL, mov), -EINVAL);
	REFUSED(pa_pin(f.pool, NULL), -EINVAL);
	REFUSED(pa_pin(f.pool, q), -EINVAL);
	REFUSED(pa_pin(f.pool, misaligned(mov)), -EINVAL);
	REFUSED(pa_pin(f.pool, at(f.pool, mov, 1)), -EINVAL);
	REFUSED(pa_pin(f.pool, at(f.pool, mov, 2)), -EINVAL);
	REFUSED(pa_unpin(NULL, mov), -EINVAL);
	REFUSED(pa_unpin(f.pool, NULL), -EINVAL);
	REFUSED(pa_unpin(f.pool, q), -EINVAL);
	REFUSED(pa_unpin(f.pool, mov), -EINVAL); /* not pinned */
	REFUSED(pa_unpin(f.pool, at(f.pool, mov, 2)), -EINVAL);
	for (int i = 0; i < 255; i++)
		REQUIRE(pa_pin(f.pool, unmov) == 0);
	REFUSED(pa_pin(f.pool, unmov), -EOVERFLOW);
	for (int i = 0; i < 255; i++)
		REQUIRE(pa_unpin(f.pool, unmov) == 0);
	REFUSED(pa_unpin(f.pool, unmov), -EINVAL);

	for (int i = 2; i < 256; i++)
		REQUIRE(pa_owner_register(f.pool, &ops) == i);
	REFUSED(pa_owner_register(f.pool, &ops), -ENOSPC);
	pa_free_pages(f.pool, mov, 1);
	pa_free_pages(f.pool, unmov, 0);
	fx_done(&f, 0, 2);
	pa_free_pages(other.pool, q, 0);
	fx_done(&other, 0, 0);
}

TEST(split_refuses_null_foreign_tails_free_blocks_wrong_orders_and_pins)
{
	struct fx f, other;
	fx_boot(&f, BOOT_LINE);
	fx_boot(&other, "mem=16M min_free_kbytes=0");
	struct pa_page *p = pa_alloc_pages(f.pool, PA_GFP_MOVABLE | PA_GFP_COMP, 3);
	struct pa_page *q = pa_alloc_pages(other.pool, PA_GFP_KERNEL, 3);
	REQUIRE(p && q);
	REFUSED(pa_split_folio(NULL, p, 3, 0), -EINVAL);
	REFUSED(pa_split_folio(f.pool, NULL, 3, 0), -EINVAL);
	REFUSED(pa_split_folio(f.pool, q, 3, 0), -EINVAL); /* another pool's */
	REFUSED(pa_split_folio(f.pool, misaligned(p), 3, 0), -EINVAL);
	REFUSED(pa_split_folio(f.pool, below_map(f.pool), 3, 0), -EINVAL);
	REFUSED(pa_split_folio(f.pool, at(f.pool, p, 1), 3, 0), -EINVAL); /* a tail */
	REFUSED(pa_split_folio(f.pool, at(f.pool, p, 8), 3, 0), -EINVAL); /* free */
	REFUSED(pa_split_folio(f.pool, p, 2, 0), -EINVAL);                /* wrong order */
	REFUSED(pa_split_folio(f.pool, p, 3, 3), -EINVAL);                /* not smaller */
	REFUSED(pa_split_folio(f.pool, p, 3, UINT_MAX), -EINVAL);
	REFUSED(pa_split_folio(f.pool, p, UINT_MAX, 0), -EINVAL);
	REFUSED(pa_split_folio_at(NULL, p, 3, 0, p), -EINVAL);
	REFUSED(pa_split_folio_at(f.pool, NULL, 3, 0, p), -EINVAL);
	REFUSED(pa_split_folio_at(f.pool, p, 3, 0, NULL), -EINVAL);
	REFUSED(pa_split_folio_at(f.pool, p, 3, 0, q), -EINVAL); /* a frame of another pool */
	REFUSED(pa_split_folio_at(f.pool, p, 3, 0, misaligned(p)), -EINVAL);
	REFUSED(pa_split_folio_at(f.pool, p, 3, 0, at(f.pool, p, 8)), -EINVAL); /* outside */
	REFUSED(pa_split_folio_at(f.pool, at(f.pool, p, 1), 3, 0, p), -EINVAL);
	REFUSED(pa_split_folio_at(f.pool, p, 2, 0, p), -EINVAL);
	REFUSED(pa_split_folio_at(f.pool, p, 3, 3, p), -EINVAL);
	REQUIRE(pa_pin(f.pool, p) == 0);
	REFUSED(pa_split_folio(f.pool, p, 3, 0), -EBUSY);
	REFUSED(pa_split_folio_at(f.pool, p, 3, 0, p), -EBUSY);
	REQUIRE(pa_unpin(f.pool, p) == 0);
	CHECK(pa_folio_order(f.pool, p) == 3); /* every refusal left it whole */
	pa_free_pages(f.pool, p, 3);
	fx_done(&f, 0, 0);
	pa_free_pages(other.pool, q, 3);
	fx_done(&other, 0, 0);
}

TEST(compaction_refuses_null_and_missing_nodes)
{
	struct fx f;
	fx_boot(&f, BOOT_LINE);
	int nodes[] = { -2, -3, INT_MIN, 2, 3, INT_MAX };
	REFUSED(pa_compact(NULL, -1), -EINVAL);
	REFUSED(pa_compact(NULL, 0), -EINVAL);
	REFUSED(pa_kcompactd_run(NULL, 0), -EINVAL);
	REFUSED(pa_kcompactd_run(f.pool, -1), -EINVAL);
	for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
		REFUSED(pa_compact(f.pool, nodes[i]), -EINVAL);
		REFUSED(pa_kcompactd_run(f.pool, nodes[i]), -EINVAL);
	}
	fx_done(&f, 0, 0);
}

TEST(contig_refuses_null_empty_reversed_and_out_of_range)
{
	struct fx f;
	fx_boot(&f, BOOT_LINE);
	uint64_t n = f.cfg.total_pages;
	pa_pfn_t hole = HOLE_BYTES >> f.cfg.page_shift;
	REFUSED(pa_alloc_contig_range(NULL, 0, 16, PA_MT_MOVABLE, 0), -EINVAL);
	REFUSED(pa_alloc_contig_range(f.pool, 16, 16, PA_MT_MOVABLE, 0), -EINVAL);
	REFUSED(pa_alloc_contig_range(f.pool, 32, 16, PA_MT_MOVABLE, 0), -EINVAL);
	REFUSED(pa_alloc_contig_range(f.pool, n - 16, n + 16, PA_MT_MOVABLE, 0), -EINVAL);
	REFUSED(pa_alloc_contig_range(f.pool, n, n + 1, PA_MT_MOVABLE, 0), -EINVAL);
	REFUSED(pa_alloc_contig_range(f.pool, UINT64_MAX - 1, UINT64_MAX, PA_MT_MOVABLE, 0),
	        -EINVAL);
	REFUSED(pa_alloc_contig_range(f.pool, 0, 16, PA_MT_UNMOVABLE, 0), -EINVAL);
	REFUSED(pa_alloc_contig_range(f.pool, 0, 16, PA_MT_ISOLATE, 0), -EINVAL);
	REFUSED(pa_alloc_contig_range(f.pool, 0, 16, PA_MT_COUNT, 0), -EINVAL);
	REFUSED(pa_alloc_contig_range(f.pool, 0, 16, UINT_MAX, 0), -EINVAL);
	REFUSED(pa_alloc_contig_range(f.pool, 0, 16, PA_MT_MOVABLE, 1u << 31), -EINVAL);
	REFUSED(pa_alloc_contig_range(f.pool, hole - 8, hole + 8, PA_MT_MOVABLE, 0), -EINVAL);
	REFUSED(pa_alloc_contig_range(f.pool, n / 2 - 8, n / 2 + 8, PA_MT_MOVABLE, 0), -EINVAL);

	REFUSED_NULL(pa_alloc_contig_pages(NULL, 16, PA_GFP_MOVABLE, -1));
	REFUSED_NULL(pa_alloc_contig_pages(f.pool, 0, PA_GFP_MOVABLE, -1));
	REFUSED_NULL(pa_alloc_contig_pages(f.pool, n + 1, PA_GFP_MOVABLE, -1));
	REFUSED_NULL(pa_alloc_contig_pages(f.pool, UINT64_MAX, PA_GFP_MOVABLE, -1));
	REFUSED_NULL(pa_alloc_contig_pages(f.pool, 16, PA_GFP_MOVABLE, -2));
	REFUSED_NULL(pa_alloc_contig_pages(f.pool, 16, PA_GFP_MOVABLE, INT_MIN));
	REFUSED_NULL(pa_alloc_contig_pages(f.pool, 16, PA_GFP_MOVABLE, 2));
	REFUSED_NULL(pa_alloc_contig_pages(f.pool, 16, PA_GFP_MOVABLE | (1u << 13), -1));

	IGNORED(pa_free_contig_range(NULL, 0, 16));
	IGNORED(pa_free_contig_range(f.pool, 0, 0));
	IGNORED(pa_free_contig_range(f.pool, n, 1));  /* past the end: a bad free */
	IGNORED(pa_free_contig_range(f.pool, 64, 4)); /* never allocated: one bad free */
	fx_done(&f, 2, 2);
}

TEST(pageblock_info_refuses_null_and_indexes_past_the_end)
{
	struct fx f;
	fx_boot(&f, BOOT_LINE);
	struct pa_pageblock_info b;
	uint64_t n = pa_pageblock_count(f.pool);
	REFUSED(pa_pageblock_count(NULL), 0);
	REFUSED(pa_pageblock_info(NULL, 0, &b), -EINVAL);
	REFUSED(pa_pageblock_info(f.pool, 0, NULL), -EINVAL);
	REFUSED(pa_pageblock_info(f.pool, n, &b), -ENOENT);
	REFUSED(pa_pageblock_info(f.pool, UINT64_MAX, &b), -ENOENT);
	fx_done(&f, 0, 0);
}

TEST(superblock_info_refuses_null_and_indexes_past_the_end)
{
	struct fx f;
	fx_boot(&f, BOOT_LINE " superblock_order=12");
	struct pa_superblock_info b;
	uint64_t n = pa_superblock_count(f.pool);
	CHECK(n > 0);
	REFUSED(pa_superblock_count(NULL), 0);
	REFUSED(pa_superblock_info(NULL, 0, &b), -EINVAL);
	REFUSED(pa_superblock_info(f.pool, 0, NULL), -EINVAL);
	REFUSED(pa_superblock_info(f.pool, n, &b), -ENOENT);
	REFUSED(pa_superblock_info(f.pool, UINT64_MAX, &b), -ENOENT);
	fx_done(&f, 0, 0);
}

TEST(cma_refuses_null_unknown_areas_and_foreign_frames)
{
	struct fx f;
	fx_boot(&f, BOOT_LINE);
	struct pa_cma_info ci;
	REFUSED(pa_cma_count(NULL), 0);
	REFUSED(pa_cma_get(NULL, 0, &ci), -EINVAL);
	REFUSED(pa_cma_get(f.pool, 0, NULL), -EINVAL);
	REFUSED(pa_cma_get(f.pool, 1, &ci), -ENOENT);
	REFUSED(pa_cma_get(f.pool, UINT_MAX, &ci), -ENOENT);
	REQUIRE(pa_cma_get(f.pool, 0, &ci) == 0);

	REFUSED_NULL(pa_cma_alloc(NULL, 0, 1, 0));
	REFUSED_NULL(pa_cma_alloc(f.pool, 1, 1, 0));
	REFUSED_NULL(pa_cma_alloc(f.pool, UINT_MAX, 1, 0));
	REFUSED_NULL(pa_cma_alloc(f.pool, 0, 0, 0));
	REFUSED_NULL(pa_cma_alloc(f.pool, 0, ci.nr_pages + 1, 0));
	REFUSED_NULL(pa_cma_alloc(f.pool, 0, 1, f.cfg.max_order + 1));
	REFUSED_NULL(pa_cma_alloc(f.pool, 0, 1, UINT_MAX));

	struct pa_page *c = pa_cma_alloc(f.pool, 0, 4, 0);
	struct pa_page *k = pa_alloc_pages(f.pool, PA_GFP_KERNEL, 0);
	REQUIRE(c && k);
	struct pa_page *area_end = pa_pfn_to_page(f.pool, ci.start_pfn + ci.nr_pages - 1);
	REQUIRE(area_end);
	REFUSED(pa_cma_release(NULL, 0, c, 4), -EINVAL);
	REFUSED(pa_cma_release(f.pool, 0, NULL, 4), -EINVAL);
	REFUSED(pa_cma_release(f.pool, 1, c, 4), -EINVAL);
	REFUSED(pa_cma_release(f.pool, UINT_MAX, c, 4), -EINVAL);
	REFUSED(pa_cma_release(f.pool, 0, misaligned(c), 4), -EINVAL);
	REFUSED(pa_cma_release(f.pool, 0, k, 1), -EINVAL);                /* not in the area */
	REFUSED(pa_cma_release(f.pool, 0, at(f.pool, c, 4), 1), -EINVAL); /* in it, not taken */
	REFUSED(pa_cma_release(f.pool, 0, c, 5), -EINVAL);                /* one frame too many */
	REFUSED(pa_cma_release(f.pool, 0, area_end, 2), -EINVAL);         /* past the area */
	REFUSED(pa_cma_release(f.pool, 0, c, ci.nr_pages), -EINVAL);      /* most not taken */
	CHECK(pa_cma_release(f.pool, 0, c, 4) == 0);
	REFUSED(pa_cma_release(f.pool, 0, c, 4), -EINVAL); /* twice */
	pa_free_pages(f.pool, k, 0);
	fx_done(&f, 0, 0);
}

TEST(config_usage_validate_refuse_null)
{
	struct fx f;
	fx_boot(&f, BOOT_LINE);
	struct pa_config cfg;
	memset(&cfg, 0xa5, sizeof cfg);
	IGNORED(pa_get_config(NULL, &cfg));
	CHECK(cfg.page_shift == 0xa5a5a5a5u);
	IGNORED(pa_get_config(f.pool, NULL));
	struct pa_usage u;
	memset(&u, 0xa5, sizeof u);
	IGNORED(pa_get_usage(NULL, &u));
	CHECK(u.managed == 0 && u.free == 0 && u.allocated == 0 && u.reserved == 0);
	IGNORED(pa_get_usage(f.pool, NULL));
	char err[128] = "";
	REFUSED(pa_validate(NULL, err, sizeof err), -EINVAL);
	CHECK(strstr(err, "NULL") != NULL);
	REFUSED(pa_validate(NULL, NULL, 0), -EINVAL);
	strcpy(err, "untouched");
	REFUSED(pa_validate(NULL, err, 0), -EINVAL);
	CHECK(strcmp(err, "untouched") == 0);
	CHECK(pa_validate(f.pool, NULL, 0) == 0);
	CHECK(pa_validate(f.pool, NULL, 64) == 0);
	fx_done(&f, 0, 0);
}

TEST(reports_and_vmstat_refuse_null_unknown_kinds_and_flags)
{
	struct fx f;
	fx_boot(&f, BOOT_LINE);
	char buf[64];
	uint64_t v = 42;
	REFUSED(pa_report(NULL, PA_REPORT_BUDDYINFO, 0, buf, sizeof buf), -EINVAL);
	REFUSED(pa_report(f.pool, PA_REPORT_COUNT, 0, buf, sizeof buf), -EINVAL);
	REFUSED(pa_report(f.pool, (enum pa_report_kind) - 1, 0, buf, sizeof buf), -EINVAL);
	REFUSED(pa_report(f.pool, PA_REPORT_BUDDYINFO, 2, buf, sizeof buf), -EINVAL);
	REFUSED(pa_report(f.pool, PA_REPORT_BUDDYINFO, ~0u, buf, sizeof buf), -EINVAL);
	REFUSED(pa_report(f.pool, PA_REPORT_BUDDYINFO, 0, NULL, 16), -EINVAL);
	/* NULL with len 0 is the documented way to ask for the length. */
	CHECK(pa_report(f.pool, PA_REPORT_BUDDYINFO, 0, NULL, 0) > 0);
	REFUSED_NULL(pa_report_name(PA_REPORT_COUNT));
	REFUSED_NULL(pa_report_name((enum pa_report_kind) - 1));
	REFUSED(pa_vmstat_read(NULL, "bad_page", &v), -EINVAL);
	REFUSED(pa_vmstat_read(f.pool, NULL, &v), -EINVAL);
	REFUSED(pa_vmstat_read(f.pool, "bad_page", NULL), -EINVAL);
	REFUSED(pa_vmstat_read(f.pool, "no_such_counter", &v), -ENOENT);
	REFUSED(pa_vmstat_read(f.pool, "", &v), -ENOENT);
	REFUSED(pa_vmstat_read(f.pool, "bad_page ", &v), -ENOENT);
	CHECK(v == 42);
	fx_done(&f, 0, 0);
}

/* The knob's value, read back as text. */
static void ctl_value(struct pa_pool *pool, const char *path, char *buf, size_t len)
{
	REQUIRE(pa_ctl_read(pool, path, buf, len) >= 0);
}

TEST(ctl_refuses_null_unknown_paths_and_bad_values)
{
	struct fx f;
	fx_boot(&f, BOOT_LINE);
	char buf[64], before[64], after[64];
	REFUSED(pa_ctl_read(NULL, "max_order", buf, sizeof buf), -EINVAL);
	REFUSED(pa_ctl_read(f.pool, NULL, buf, sizeof buf), -EINVAL);
	REFUSED(pa_ctl_read(f.pool, "max_order", NULL, 8), -EINVAL);
	CHECK(pa_ctl_read(f.pool, "max_order", NULL, 0) > 0);
	REFUSED(pa_ctl_write(NULL, "watermark_scale_factor", "10"), -EINVAL);
	REFUSED(pa_ctl_write(f.pool, NULL, "10"), -EINVAL);
	REFUSED(pa_ctl_write(f.pool, "watermark_scale_factor", NULL), -EINVAL);

	static const char *const unknown[] = {
		"",
		"/",
		"no_such_knob",
		"max_order/",
		"/max_order",
		"MAX_ORDER",
		"pcp/orders",
		"pcp/orders/0",
		"pcp",
		"max_order ",
		"pcp/orders/0/enabled/x",
		"extfrag",
	};
	for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
		REFUSED(pa_ctl_read(f.pool, unknown[i], buf, sizeof buf), -ENOENT);
		REFUSED(pa_ctl_write(f.pool, unknown[i], "1"), -ENOENT);
	}
	REFUSED(pa_ctl_write(f.pool, "pageblock_order", "10"), -EPERM);
	REFUSED(pa_ctl_write(f.pool, "max_order", "11"), -EINVAL); /* above the booted one */
	REFUSED(pa_ctl_write(f.pool, "buddyinfo", "1"), -EPERM);
	REFUSED(pa_ctl_write(f.pool, "help", "1"), -EPERM);
	REFUSED(pa_ctl_read(f.pool, "pcp/drain", buf, sizeof buf), -EPERM);
	REFUSED(pa_ctl_read(f.pool, "compact_memory", buf, sizeof buf), -EPERM);

	char order_past[48];
	snprintf(order_past, sizeof order_past, "pcp/orders/%u/enabled", f.cfg.max_order + 1);
	static const char *const bad_index[] = {
		"pcp/orders//enabled",
		"pcp/orders/x/enabled",
		"pcp/orders/-1/enabled",
		"pcp/orders/+1/enabled",
		"pcp/orders/99999999999999999999/enabled",
		"compaction/kcompactd_run/2",
		"compaction/kcompactd_run/x",
	};
	REFUSED(pa_ctl_read(f.pool, order_past, buf, sizeof buf), -EINVAL);
	REFUSED(pa_ctl_write(f.pool, order_past, "1"), -EINVAL);
	for (size_t i = 0; i < sizeof bad_index / sizeof bad_index[0]; i++)
		REFUSED(pa_ctl_write(f.pool, bad_index[i], "1"), -EINVAL);

	struct {
		const char *path, *value;
	} bad_values[] = {
		{ "watermark_scale_factor", "" },
		{ "watermark_scale_factor", "abc" },
		{ "watermark_scale_factor", "-1" },
		{ "watermark_scale_factor", "+1" },
		{ "watermark_scale_factor", "10x" },
		{ "watermark_scale_factor", "1 0" },
		{ "watermark_scale_factor", "0x10" },
		{ "watermark_scale_factor", "3001" },
		{ "watermark_scale_factor", "18446744073709551616" },
		{ "min_free_kbytes", "1099511627777" },
		{ "pcp/orders/0/enabled", "2" },
		{ "pcp/orders/0/enabled", "yes" },
		{ "pcp/high_fraction", "4294967296" },
		{ "pcp/high_fraction", "1" },
		{ "pcp/rules", "6.2" },
		{ "pcp/rules", "6.1x" },
		{ "pcp/rules", "" },
		{ "pcp/drain", "0" },
		{ "pcp/drain", "2" },
		{ "compact_memory", "0" },
		{ "compaction_proactiveness", "101" },
		{ "compaction/fail_pct", "101" },
		{ "compaction/kcompactd_run/0", "0" },
	};
	for (size_t i = 0; i < sizeof bad_values / sizeof bad_values[0]; i++) {
		const char *path = bad_values[i].path;
		bool readable = pa_ctl_read(f.pool, path, before, sizeof before) >= 0;
		nr_cases++;
		int rc = pa_ctl_write(f.pool, path, bad_values[i].value);
		CHECK_MSG(rc == -EINVAL, "pa_ctl_write(\"%s\", \"%s\") = %d, expected -EINVAL",
		          path, bad_values[i].value, rc);
		if (readable) {
			ctl_value(f.pool, path, after, sizeof after);
			CHECK_MSG(strcmp(before, after) == 0, "%s changed: %s -> %s", path, before,
			          after);
		}
	}
	/* A buffer of one byte gets "" and the full length. */
	char one[1] = { 'x' };
	CHECK(pa_ctl_read(f.pool, "max_order", one, 1) > 0 && one[0] == '\0');
	fx_done(&f, 0, 0);
}

static int never_report(void *arg, const struct pa_reported_range *r, unsigned nr)
{
	(void)arg;
	(void)r;
	(void)nr;
	return 0;
}

TEST(deferred_init_and_reporting_refuse_null_foreign_and_free_blocks)
{
	struct fx f, g;
	fx_boot(&f, BOOT_LINE " page_reporting=manual");
	fx_boot(&g, BOOT_LINE);
	IGNORED(pa_deferred_init_wait(NULL));
	const struct pa_page_reporting_ops ops = { never_report }, none = { NULL };
	REFUSED(pa_page_reporting_register(NULL, &ops, NULL), -EINVAL);
	REFUSED(pa_page_reporting_register(f.pool, NULL, NULL), -EINVAL);
	REFUSED(pa_page_reporting_register(f.pool, &none, NULL), -EINVAL);
	REFUSED(pa_page_reporting_run(NULL), -EINVAL);
	REFUSED(pa_page_reporting_run(f.pool), -ENODEV);
	IGNORED(pa_page_reporting_unregister(NULL));
	IGNORED(pa_page_reporting_unregister(f.pool)); /* none registered */
	REQUIRE(pa_page_reporting_register(f.pool, &ops, NULL) == 0);
	REFUSED(pa_page_reporting_register(f.pool, &ops, NULL), -EBUSY);
	struct pa_page *p = pa_alloc_pages(f.pool, PA_GFP_KERNEL, 1);
	struct pa_page *q = pa_alloc_pages(g.pool, PA_GFP_KERNEL, 0);
	REQUIRE(p && q);
	REFUSED(pa_page_reported(NULL, p), -EINVAL);
	REFUSED(pa_page_reported(f.pool, NULL), -EINVAL);
	REFUSED(pa_page_reported(f.pool, q), -EINVAL); /* another pool's */
	REFUSED(pa_page_reported(f.pool, misaligned(p)), -EINVAL);
	REFUSED(pa_page_reported(f.pool, at(f.pool, p, 1)), -EINVAL); /* a tail */
	REFUSED(pa_page_reported(f.pool, below_map(f.pool)), -EINVAL);
	REFUSED(pa_page_reported(f.pool, past_map(f.pool, f.cfg.total_pages)), -EINVAL);
	CHECK(pa_page_reported(f.pool, p) == 0);
	pa_free_pages(f.pool, p, 1);
	pa_free_pages(g.pool, q, 0);
	REFUSED(pa_page_reported(f.pool, p), -EINVAL); /* free now */
	pa_page_reporting_unregister(f.pool);
	pa_deferred_init_wait(f.pool);
	CHECK(pa_version() != NULL && pa_version()[0] != '\0');
	fx_done(&f, 0, 0);
	fx_done(&g, 0, 0);
}

TEST(hotplug_refuses_null_partial_blocks_and_wrong_states)
{
	struct fx f;
	fx_boot(&f, BOOT_LINE);
	char buf[64] = "";
	REQUIRE(pa_ctl_read(f.pool, "memory/block_size_bytes", buf, sizeof buf) > 0);
	uint64_t n = strtoull(buf, NULL, 10) / f.cfg.page_size, hole = HOLE_BYTES / f.cfg.page_size;
	REFUSED(pa_memory_offline(NULL, 0, n), -EINVAL);
	REFUSED(pa_memory_online(NULL, 0, n), -EINVAL);
	REFUSED(pa_memory_offline(f.pool, 0, 0), -EINVAL);
	REFUSED(pa_memory_offline(f.pool, 1, n), -EINVAL);
	REFUSED(pa_memory_offline(f.pool, 0, n - 1), -EINVAL);
	REFUSED(pa_memory_offline(f.pool, f.cfg.total_pages, n), -EINVAL);
	REFUSED(pa_memory_offline(f.pool, UINT64_MAX - n + 1, n), -EINVAL);
	REFUSED(pa_memory_offline(f.pool, 0, UINT64_MAX), -EINVAL);
	REFUSED(pa_memory_online(f.pool, 0, n), -EINVAL); /* online already */
	REFUSED(pa_memory_online(f.pool, hole - hole % n, n), -EINVAL);
	REFUSED(pa_ctl_write(f.pool, "memory/x/online", "1"), -EINVAL);
	REFUSED(pa_ctl_write(f.pool, "memory/1/online", "on"), -EINVAL);
	REFUSED(pa_memory_online_type(NULL, 0, n, PA_ONLINE_MOVABLE), -EINVAL);
	REFUSED(pa_memory_online_type(f.pool, 0, n, (enum pa_online_type)3), -EINVAL);
	REFUSED(pa_memory_online_type(f.pool, 0, n, (enum pa_online_type) - 1), -EINVAL);
	REFUSED(pa_memory_online_type(f.pool, 1, n, PA_ONLINE_KERNEL), -EINVAL);
	REFUSED(pa_memory_online_type(f.pool, 0, n, PA_ONLINE_KERNEL), -EINVAL); /* online */
	REFUSED(pa_ctl_write(f.pool, "memory/1/state", "online_foo"), -EINVAL);
	REFUSED(pa_ctl_write(f.pool, "memory/1/state", "online movable"), -EINVAL);
	REFUSED(pa_ctl_write(f.pool, "memory/1/state", ""), -EINVAL);
	REFUSED(pa_ctl_write(f.pool, "memory/1/online", "2"), -EINVAL);
	REFUSED(pa_ctl_write(f.pool, "memory/1/valid_zones", "Movable"), -EPERM);
	REFUSED(pa_ctl_write(f.pool, "memory/1000000/online", "0"), -EINVAL);
	REFUSED(pa_ctl_write(f.pool, "memory/block_size_bytes", "1"), -EPERM);
	fx_done(&f, 0, 0);
}
