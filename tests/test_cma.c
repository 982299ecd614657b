/* SPDX-License-Identifier: MIT */
/*
 * CMA areas: cma=SIZE[@START] on the boot line,
 * pa_cma_get(), pa_cma_alloc(), pa_cma_release(), and the balance rule by
 * which movable allocations borrow CMA pageblocks.
 *
 * What is proved here: seed 004's example (page_shift=14 mem=1G cma=4M
 * reserves 32 MiB for the 4 MiB asked for, 4 MiB with pageblock_order_ceil=7),
 * sizes rounded up to the CMA alignment, an aligned START honoured and a
 * misaligned one refused naming cma, areas placed at the top of memory and
 * never overlapping, pagetypeinfo and info counting the CMA pageblocks;
 * movable allocations take CMA pageblocks exactly when Linux's rule says
 * (first while CMA holds over half the zone's free memory, else once the
 * movable lists are dry) and unmovable or reclaimable ones never do;
 * pa_cma_alloc() moves the borrowers out with their bytes, honours
 * align_order, and fails cleanly (nothing moved, nothing taken) when the area
 * is exhausted or a borrower is pinned; pa_cma_release() refuses frames that
 * are not an allocation of that area.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "test.h"

#include "platform/platform.h"
#include "pageblock.h"
#include "minijson.h"
#include "owner.h"
#include "helpers.h"

#define QUIET "kcompactd=manual pcp_orders=none min_free_kbytes=0 "
#define MiB   (1ull << 20)

/* ---------------------------------------------------------------------- */
/* Helpers                                                                 */
/* ---------------------------------------------------------------------- */

static struct pa_cma_info cma(struct pa_pool *pool, unsigned area)
{
	struct pa_cma_info ci;
	memset(&ci, 0, sizeof ci);
	REQUIRE(pa_cma_get(pool, area, &ci) == 0);
	return ci;
}

static bool in_area(const struct pa_cma_info *ci, pa_pfn_t pfn)
{
	return pfn >= ci->start_pfn && pfn < ci->start_pfn + ci->nr_pages;
}

/* Free frames on the CMA lists of every zone, and all free frames. */
static void zone_free(struct pa_pool *pool, uint64_t *cma_free, uint64_t *all_free,
                      uint64_t *movable_free)
{
	*cma_free = *all_free = *movable_free = 0;
	for (unsigned i = 0; i < pool->nr_zones; i++) {
		struct pa_zone *z = &pool->zones[i];
		pa_lock(&z->lock, SITE_ADMIN);
		for (unsigned o = 0; o <= pool->cfg.max_order; o++) {
			*cma_free += zone_free_count(z, o, PA_MT_CMA) << o;
			*movable_free += zone_free_count(z, o, PA_MT_MOVABLE) << o;
		}
		*all_free += z->free_pages;
		pa_unlock(&z->lock);
	}
}

/* Every pageblock of the area is CMA; the ones around it are not. */
static void expect_area_pageblocks(struct pa_pool *pool, const struct pa_cma_info *ci)
{
	uint64_t pb = 1ull << pool->cfg.pageblock_order;
	CHECK_EQ_U64(ci->start_pfn % pb, 0);
	CHECK_EQ_U64(ci->nr_pages % pb, 0);
	for (pa_pfn_t p = ci->start_pfn; p < ci->start_pfn + ci->nr_pages; p += pb)
		CHECK_MSG(pageblock_mt(pool, p) == PA_MT_CMA,
		          "%s: pageblock at %" PRIu64 " has type %u", ci->name, p,
		          pageblock_mt(pool, p));
	if (ci->start_pfn >= pb)
		CHECK(pageblock_mt(pool, ci->start_pfn - 1) != PA_MT_CMA ||
		      pageblock_base_mt(pool, ci->start_pfn - 1) ==
		              PA_MT_CMA); /* another area may abut */
}

struct boot_row {
	const char *cmd;
	uint64_t requested, reserved, start; /* start in bytes; UINT64_MAX: at the top */
};

static void expect_area(const struct boot_row *r)
{
	fprintf(stderr, "  %s\n", r->cmd);
	struct pa_pool *pool = test_boot(r->cmd);
	struct pa_config c;
	pa_get_config(pool, &c);
	REQUIRE(pa_cma_count(pool) == 1);
	struct pa_cma_info ci = cma(pool, 0);
	CHECK(strcmp(ci.name, "cma0") == 0);
	CHECK_EQ_U64(ci.requested_bytes, r->requested);
	CHECK_EQ_U64(ci.reserved_bytes, r->reserved);
	CHECK_EQ_U64(ci.nr_pages, r->reserved >> c.page_shift);
	CHECK_EQ_U64(ci.reserved_bytes % c.cma_alignment_bytes, 0);
	CHECK_EQ_U64(ci.allocated_pages, 0);
	uint64_t start =
	        r->start == UINT64_MAX ? c.total_pages - ci.nr_pages : r->start >> c.page_shift;
	CHECK_EQ_U64(ci.start_pfn, start);
	expect_area_pageblocks(pool, &ci);
	CHECK_EQ_U64(json_blocks(pool, "CMA"), ci.nr_pages >> c.pageblock_order);
	uint64_t cf, af, mf;
	zone_free(pool, &cf, &af, &mf);
	CHECK_EQ_U64(cf, ci.nr_pages);
	CHECK(pa_cma_get(pool, 1, &ci) == -ENOENT);
	VALIDATE(pool);
	pa_shutdown(pool);
}

/* ---------------------------------------------------------------------- */
/* Boot: sizes, alignment, placement                                       */
/* ---------------------------------------------------------------------- */

TEST(cma_seed004_4m_request_reserves_32m_on_16k_pages_and_4m_at_ceiling_7)
{
	static const struct boot_row rows[] = {
		{ "page_shift=14 mem=1G cma=4M", 4 * MiB, 32 * MiB, UINT64_MAX },
		{ "page_shift=14 mem=1G cma=4M pageblock_order_ceil=7", 4 * MiB, 4 * MiB,
		  UINT64_MAX },
		{ "mem=1G cma=4M", 4 * MiB, 4 * MiB, UINT64_MAX },
		{ "page_shift=16 mem=2G cma=4M", 4 * MiB, 512 * MiB, UINT64_MAX },
		{ "page_shift=16 mem=2G cma=4M pageblock_order_ceil=5", 4 * MiB, 4 * MiB,
		  UINT64_MAX },
		{ "page_shift=14 mem=1G cma=33M", 33 * MiB, 64 * MiB, UINT64_MAX },
		{ "page_shift=14 mem=1G cma=1 pageblock_order_ceil=7", 1, 2 * MiB, UINT64_MAX },
		{ "mem=1G cma=5M pageblock_order_ceil=1", 5 * MiB, 5 * MiB, UINT64_MAX },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		expect_area(&rows[i]);
	/* The seed's figure side by side: pageblock order 11 vs 7 on 16 KiB pages. */
	struct pa_pool *a = test_boot("page_shift=14 mem=1G cma=4M");
	struct pa_pool *b = test_boot("page_shift=14 mem=1G cma=4M pageblock_order_ceil=7");
	struct pa_config ca, cb;
	pa_get_config(a, &ca);
	pa_get_config(b, &cb);
	CHECK_EQ_U64(ca.pageblock_order, 11);
	CHECK_EQ_U64(cb.pageblock_order, 7);
	CHECK_EQ_U64(ca.cma_alignment_bytes, 32 * MiB);
	CHECK_EQ_U64(cb.cma_alignment_bytes, 2 * MiB);
	CHECK_EQ_U64(json_blocks(a, "CMA"), 1);
	CHECK_EQ_U64(json_blocks(b, "CMA"), 2);
	/* Everything outside the area stays usable by non-movable allocations. */
	CHECK_EQ_U64(json_blocks(a, "Movable"), 31);
	CHECK_EQ_U64(json_blocks(b, "Movable"), 510);
	pa_shutdown(a);
	pa_shutdown(b);
}

TEST(cma_info_report_lists_each_area)
{
	struct pa_pool *pool = test_boot("page_shift=14 mem=1G cma=4M cma=4M@512M");
	char *txt = report(pool, PA_REPORT_INFO, PA_REPORT_JSON);
	char err[128] = "";
	struct jv *root = jparse(txt, err, sizeof err);
	REQUIRE(root);
	struct jv *areas = jget(root, "cma");
	REQUIRE(areas && areas->type == J_ARR && areas->n == 2);
	for (unsigned i = 0; i < 2; i++) {
		struct pa_cma_info ci = cma(pool, i);
		struct jv *a = jat(areas, i);
		CHECK(jstr(a, "name") && strcmp(jstr(a, "name"), ci.name) == 0);
		CHECK_EQ_U64(jint(a, "start_pfn", -1), ci.start_pfn);
		CHECK_EQ_U64(jint(a, "requested_bytes", -1), 4 * MiB);
		CHECK_EQ_U64(jint(a, "reserved_bytes", -1), 32 * MiB);
	}
	CHECK_EQ_U64(jint(jat(areas, 1), "start_pfn", -1), (512 * MiB) >> 14);
	jfree(root);
	free(txt);
	txt = report(pool, PA_REPORT_INFO, 0);
	CHECK(strstr(txt, "cma0") && strstr(txt, "cma1") && strstr(txt, "33554432"));
	free(txt);
	pa_shutdown(pool);
}

TEST(cma_aligned_start_is_honoured_misaligned_fails_the_boot_naming_cma)
{
	static const struct boot_row ok[] = {
		{ "page_shift=14 mem=1G cma=4M@512M", 4 * MiB, 32 * MiB, 512 * MiB },
		{ "page_shift=14 mem=1G cma=4M@0", 4 * MiB, 32 * MiB, 0 },
		{ "page_shift=14 mem=1G cma=4M@2M pageblock_order_ceil=7", 4 * MiB, 4 * MiB,
		  2 * MiB },
		{ "mem=256M cma=8M@100M", 8 * MiB, 8 * MiB, 100 * MiB },
	};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
		expect_area(&ok[i]);
	static const char *const bad[] = {
		"page_shift=14 mem=1G cma=4M@1M",                        /* 1M: not 32M-aligned */
		"page_shift=14 mem=1G cma=4M@16M",                       /* 16M: not 32M-aligned */
		"page_shift=14 mem=1G cma=4M@1M pageblock_order_ceil=7", /* 1M: not 2M-aligned */
		"page_shift=14 mem=1G cma=4M@3M pageblock_order_ceil=7",
		"mem=256M cma=8M@101M",
		"page_shift=14 mem=1G cma=40M@992M", /* past the end */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char err[512] = "";
		struct pa_pool *pool = NULL;
		int rc = pa_boot(bad[i], NULL, &pool, err, sizeof err);
		CHECK_MSG(rc == -EINVAL && pool == NULL, "pa_boot(\"%s\") = %d, expected -EINVAL",
		          bad[i], rc);
		CHECK_MSG(strstr(err, "cma") != NULL,
		          "pa_boot(\"%s\"): the message does not name cma: %s", bad[i], err);
		const char *arg = strstr(bad[i], "cma=") + 4;
		char val[32];
		snprintf(val, sizeof val, "%.*s", (int)strcspn(arg, " "), arg);
		CHECK_MSG(strstr(err, val) != NULL,
		          "pa_boot(\"%s\"): the message does not name %s: %s", bad[i], val, err);
		if (pool)
			pa_shutdown(pool);
	}
}

TEST(cma_areas_go_at_the_top_and_never_overlap)
{
	struct {
		const char *cmd;
		unsigned n;
	} rows[] = {
		{ "mem=256M cma=8M cma=8M", 2 },
		{ "mem=256M cma=8M@64M cma=8M", 2 },
		{ "mem=256M cma=8M cma=8M@64M cma=3M", 3 },
		{ "page_shift=14 mem=1G cma=4M cma=4M", 2 },
		{ "page_shift=14 mem=1G cma=4M cma=4M pageblock_order_ceil=7", 2 },
		{ "mem=1G memhole=1000M-1024M cma=8M", 1 },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		fprintf(stderr, "  %s\n", rows[i].cmd);
		struct pa_pool *pool = test_boot(rows[i].cmd);
		REQUIRE(pa_cma_count(pool) == rows[i].n);
		struct pa_cma_info ci[8];
		pa_pfn_t top = 0;
		for (unsigned a = 0; a < rows[i].n; a++) {
			ci[a] = cma(pool, a);
			char name[16];
			snprintf(name, sizeof name, "cma%u", a);
			CHECK(strcmp(ci[a].name, name) == 0);
			expect_area_pageblocks(pool, &ci[a]);
			for (unsigned b = 0; b < a; b++)
				CHECK_MSG(ci[a].start_pfn >= ci[b].start_pfn + ci[b].nr_pages ||
				                  ci[b].start_pfn >=
				                          ci[a].start_pfn + ci[a].nr_pages,
				          "%s and %s overlap", ci[a].name, ci[b].name);
			for (pa_pfn_t p = ci[a].start_pfn; p < ci[a].start_pfn + ci[a].nr_pages;
			     p++)
				CHECK(pa_pfn_to_page(pool, p) != NULL); /* no hole inside */
			if (ci[a].start_pfn + ci[a].nr_pages > top)
				top = ci[a].start_pfn + ci[a].nr_pages;
		}
		/* The first area without START sits at the highest place that has memory. */
		pa_pfn_t last_present = pool->nr_frames;
		while (last_present && !pa_pfn_to_page(pool, last_present - 1))
			last_present--;
		CHECK_EQ_U64(top, last_present);
		uint64_t cf, af, mf, total = 0;
		for (unsigned a = 0; a < rows[i].n; a++)
			total += ci[a].nr_pages;
		zone_free(pool, &cf, &af, &mf);
		CHECK_EQ_U64(cf, total);
		CHECK_EQ_U64(json_blocks(pool, "CMA"), total >> pool->cfg.pageblock_order);
		VALIDATE(pool);
		pa_shutdown(pool);
	}
	/* Two areas asked for at the same place: the boot fails naming the second. */
	static const char *const clash[] = { "mem=256M cma=8M@64M cma=8M@64M",
		                             "mem=256M cma=8M cma=8M@248M",
		                             "mem=256M cma=8M@64M cma=8M@70M" };
	for (size_t i = 0; i < sizeof clash / sizeof clash[0]; i++) {
		char err[512] = "";
		struct pa_pool *pool = NULL;
		int rc = pa_boot(clash[i], NULL, &pool, err, sizeof err);
		CHECK_MSG(rc == -EINVAL && strstr(err, "cma"), "pa_boot(\"%s\") = %d: %s", clash[i],
		          rc, err);
		if (pool)
			pa_shutdown(pool);
	}
}

/* ---------------------------------------------------------------------- */
/* Borrowing: Linux's balance rule                                         */
/* ---------------------------------------------------------------------- */

/*
 * Allocate order-0 movable blocks until none is left, predicting each one's
 * source from the zone's state just before: CMA when it holds over half the
 * free memory, else the movable lists, else CMA.
 */
static void expect_balance_rule(const char *cmd, bool cma_first)
{
	fprintf(stderr, "  %s\n", cmd);
	struct pa_pool *pool = test_boot(cmd);
	struct pa_cma_info ci = cma(pool, 0);
	struct pa_page **held = calloc(pool->nr_frames, sizeof *held);
	REQUIRE(held);
	size_t n = 0, from_cma = 0, wrong = 0, first_cma = SIZE_MAX;
	for (;;) {
		uint64_t cf, af, mf;
		zone_free(pool, &cf, &af, &mf);
		bool want_cma = (cf && cf > af / 2) || (!mf && cf);
		struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 0);
		if (!p)
			break;
		held[n++] = p;
		bool got_cma = in_area(&ci, pa_page_to_pfn(pool, p));
		from_cma += got_cma;
		if (got_cma && first_cma == SIZE_MAX)
			first_cma = n - 1;
		if (got_cma != want_cma && wrong++ < 3)
			test_fail(__FILE__, __LINE__,
			          "allocation %zu (cma free %" PRIu64 ", free %" PRIu64
			          ", movable free %" PRIu64 "): from %s, the balance rule says %s",
			          n - 1, cf, af, mf, got_cma ? "CMA" : "movable",
			          want_cma ? "CMA" : "movable");
	}
	CHECK_EQ_U64(n, pool->nr_frames);
	CHECK_EQ_U64(from_cma, ci.nr_pages);
	CHECK_MSG(cma_first ? first_cma == 0 : first_cma > 0, "first CMA allocation: %zu",
	          first_cma);
	fprintf(stderr, "    %zu allocations, the first from CMA was number %zu\n", n, first_cma);
	VALIDATE(pool);
	for (size_t i = 0; i < n; i++)
		pa_free_pages(pool, held[i], 0);
	free(held);
	expect_as_fresh(pool, cmd);
	pa_shutdown(pool);
}

TEST(cma_movable_allocations_borrow_by_the_balance_rule)
{
	expect_balance_rule(QUIET "mem=64M cma=8M", false);
	expect_balance_rule(QUIET "mem=64M cma=40M", true);
	expect_balance_rule(QUIET "mem=64M cma=32M", false); /* exactly half: not over it */
	expect_balance_rule(QUIET "page_shift=14 mem=256M cma=4M pageblock_order_ceil=7", false);
}

TEST(cma_unmovable_and_reclaimable_allocations_never_use_cma)
{
	static const char *const cmds[] = { QUIET "mem=64M cma=16M",
		                            "kcompactd=manual min_free_kbytes=0 mem=64M cma=16M",
		                            QUIET "mem=64M cma=40M" };
	static const pa_gfp_t gfps[] = { PA_GFP_KERNEL, PA_GFP_RECLAIMABLE, PA_GFP_HIGH,
		                         PA_GFP_KERNEL | PA_GFP_COMP };
	for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
		for (size_t g = 0; g < sizeof gfps / sizeof gfps[0]; g++) {
			struct pa_pool *pool = test_boot(cmds[c]);
			struct pa_cma_info ci = cma(pool, 0);
			struct pa_page **held = calloc(pool->nr_frames, sizeof *held);
			unsigned *ord = calloc(pool->nr_frames, sizeof *ord);
			REQUIRE(held && ord);
			size_t n = 0, inside = 0;
			uint64_t frames = 0;
			/* High orders first, then down to order 0, of this type and then the others. */
			for (int order = (int)pool->cfg.max_order; order >= 0; order--) {
				for (size_t k = 0; k < sizeof gfps / sizeof gfps[0]; k++) {
					pa_gfp_t gfp = gfps[(g + k) % 4];
					struct pa_page *p;
					if ((gfp & PA_GFP_HIGH) && order > 0)
						continue; /* a high-order atomic reserve would outlive the test */
					while ((p = pa_alloc_pages(pool, gfp | PA_GFP_NOWARN,
					                           (unsigned)order))) {
						pa_pfn_t pfn = pa_page_to_pfn(pool, p);
						inside += pfn + (1ull << order) > ci.start_pfn &&
						          pfn < ci.start_pfn + ci.nr_pages;
						held[n] = p;
						ord[n++] = (unsigned)order;
						frames += 1ull << order;
					}
				}
			}
			CHECK_MSG(inside == 0,
			          "%s, gfp %#x first: %zu non-movable blocks in the CMA area",
			          cmds[c], gfps[g], inside);
			/* Everything but the area was taken, the area is whole and free. */
			pa_drain_all(pool);
			uint64_t cf, af, mf;
			zone_free(pool, &cf, &af, &mf);
			CHECK_EQ_U64(frames, pool->nr_frames - ci.nr_pages);
			CHECK_EQ_U64(cf, ci.nr_pages);
			CHECK_EQ_U64(af, ci.nr_pages);
			/* A movable allocation still finds the area. */
			struct pa_page *m = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0);
			CHECK(m && in_area(&ci, pa_page_to_pfn(pool, m)));
			if (m)
				pa_free_pages(pool, m, 0);
			VALIDATE(pool);
			for (size_t i = 0; i < n; i++)
				pa_free_pages(pool, held[i], ord[i]);
			free(held);
			free(ord);
			expect_as_fresh(pool, cmds[c]);
			pa_shutdown(pool);
		}
	}
}

/* ---------------------------------------------------------------------- */
/* pa_cma_alloc and pa_cma_release                                         */
/* ---------------------------------------------------------------------- */

static void fill_with_borrowers(struct towner *o, unsigned free_pct, uint64_t seed)
{
	uint64_t rng = seed;
	while (to_alloc(o, PA_GFP_COMP | PA_GFP_NOCOMPACT, (unsigned)(to_rand(&rng) % 4)) >= 0 ||
	       to_alloc(o, PA_GFP_COMP | PA_GFP_NOCOMPACT, 0) >= 0)
		;
	for (size_t i = 0; i < o->nr; i++)
		if (to_rand(&rng) % 100 < free_pct)
			to_free(o, i);
}

/* What a refused request must leave alone. */
struct snap {
	struct pa_usage u;
	char *buddy, *types;
	pa_pfn_t *pfns;
	uint64_t cma_allocated;
};

static void snap_take(struct snap *s, struct pa_pool *pool, struct towner *o)
{
	pa_drain_all(pool);
	s->u = usage(pool);
	s->buddy = report(pool, PA_REPORT_BUDDYINFO, 0);
	s->types = report(pool, PA_REPORT_PAGETYPEINFO, 0);
	s->pfns = malloc((o->nr ? o->nr : 1) * sizeof *s->pfns);
	REQUIRE(s->pfns);
	for (size_t i = 0; i < o->nr; i++)
		s->pfns[i] = to_pfn(o, i);
	s->cma_allocated = cma(pool, 0).allocated_pages;
}

static void snap_expect_same(struct snap *s, struct pa_pool *pool, struct towner *o,
                             const char *what)
{
	pa_drain_all(pool);
	VALIDATE(pool);
	struct pa_usage u = usage(pool);
	CHECK_MSG(u.free == s->u.free && u.allocated == s->u.allocated,
	          "%s: usage changed: free %" PRIu64 " -> %" PRIu64 ", allocated %" PRIu64
	          " -> %" PRIu64,
	          what, s->u.free, u.free, s->u.allocated, u.allocated);
	char *buddy = report(pool, PA_REPORT_BUDDYINFO, 0),
	     *types = report(pool, PA_REPORT_PAGETYPEINFO, 0);
	CHECK_MSG(strcmp(buddy, s->buddy) == 0, "%s: buddyinfo changed:\n was: %s now: %s", what,
	          s->buddy, buddy);
	CHECK_MSG(strcmp(types, s->types) == 0, "%s: pagetypeinfo changed", what);
	size_t moved = 0;
	for (size_t i = 0; i < o->nr; i++)
		moved += to_pfn(o, i) != s->pfns[i];
	CHECK_MSG(moved == 0, "%s: %zu of the owner's folios moved", what, moved);
	CHECK_EQ_U64(cma(pool, 0).allocated_pages, s->cma_allocated);
	to_check_all(o);
	to_expect_clean(o);
	free(buddy);
	free(types);
	free(s->buddy);
	free(s->types);
	free(s->pfns);
}

TEST(cma_alloc_moves_borrowers_out_with_their_data)
{
	const char *cmd = QUIET "mem=64M cma=16M backing=anon";
	struct pa_pool *pool = test_boot(cmd);
	struct towner o;
	to_init(&o, pool, 20000);
	fill_with_borrowers(&o, 40, 11);
	struct pa_cma_info ci = cma(pool, 0);
	pa_pfn_t a0 = ci.start_pfn, a1 = ci.start_pfn + ci.nr_pages;
	size_t borrowers = folios_in(&o, a0, a1);
	REQUIRE(borrowers > 100);
	uint64_t half = ci.nr_pages / 2;
	struct pa_usage u0 = usage(pool);
	/* The lower half, then the upper half: every borrower ends up outside the area. */
	struct pa_page *p1 = pa_cma_alloc(pool, 0, half, 0);
	REQUIRE(p1);
	CHECK_EQ_U64(pa_page_to_pfn(pool, p1), a0);
	CHECK_EQ_U64(folios_in(&o, a0, a0 + half), 0);
	expect_range_blocks(pool, a0, a0 + half, PA_MT_CMA);
	CHECK_EQ_U64(cma(pool, 0).allocated_pages, half);
	to_check_all(&o);
	struct pa_page *p2 = pa_cma_alloc(pool, 0, ci.nr_pages - half, 0);
	REQUIRE(p2);
	CHECK_EQ_U64(pa_page_to_pfn(pool, p2), a0 + half);
	CHECK_EQ_U64(folios_in(&o, a0, a1), 0);
	expect_range_blocks(pool, a0 + half, a0 + ci.nr_pages, PA_MT_CMA);
	CHECK_EQ_U64(cma(pool, 0).allocated_pages, ci.nr_pages);
	CHECK_EQ_U64(usage(pool).allocated, u0.allocated + ci.nr_pages);
	to_check_all(&o); /* cookies and bytes followed every moved folio */
	to_expect_clean(&o);
	VALIDATE(pool);
	fprintf(stderr, "  %zu borrowers moved out of %s\n", borrowers, ci.name);
	/* Exhausted: nothing more, and nothing changes. */
	struct snap sn;
	snap_take(&sn, pool, &o);
	CHECK(pa_cma_alloc(pool, 0, 1, 0) == NULL);
	CHECK(pa_cma_alloc(pool, 0, ci.nr_pages, 0) == NULL);
	snap_expect_same(&sn, pool, &o, "exhausted area");
	/* Back: the frames are movable memory again, borrowable. */
	CHECK_EQ_U64(pa_cma_release(pool, 0, p1, half), 0);
	CHECK_EQ_U64(pa_cma_release(pool, 0, p2, ci.nr_pages - half), 0);
	CHECK_EQ_U64(cma(pool, 0).allocated_pages, 0);
	CHECK_EQ_U64(usage(pool).allocated, u0.allocated);
	uint64_t cf, af, mf;
	zone_free(pool, &cf, &af, &mf);
	CHECK_EQ_U64(cf, ci.nr_pages);
	VALIDATE(pool);
	to_finish_as_fresh(&o, cmd);
}

TEST(cma_alloc_respects_align_order_and_refuses_bad_requests)
{
	const char *cmd = QUIET "mem=64M cma=16M";
	struct pa_pool *pool = test_boot(cmd);
	struct pa_cma_info ci = cma(pool, 0);
	pa_pfn_t a0 = ci.start_pfn;
	REQUIRE(a0 % 1024 == 0 && ci.nr_pages == 4096);
	struct {
		uint64_t count;
		unsigned align;
		pa_pfn_t want; /* offset in the area */
	} steps[] = {
		{ 100, 0, 0 },   /* [0, 100) */
		{ 100, 7, 128 }, /* the next 128-aligned place */
		{ 1, 10, 1024 }, /* the next 1024-aligned place */
		{ 3, 0, 100 },   /* the first gap that fits */
		{ 28, 2, 228 },  /* every 4-aligned place below 228 overlaps one taken */
		{ 1000, 3, 1032 },
		{ 2048, 10, 2048 }, /* the upper half: 1024 overlaps [1032, 2032) */
	};
	struct pa_page *got[8];
	uint64_t taken = 0;
	for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
		got[i] = pa_cma_alloc(pool, 0, steps[i].count, steps[i].align);
		CHECK_MSG(got[i] && pa_page_to_pfn(pool, got[i]) == a0 + steps[i].want,
		          "pa_cma_alloc(%" PRIu64 ", align %u): %s %" PRIu64
		          ", expected offset %" PRIu64,
		          steps[i].count, steps[i].align, got[i] ? "offset" : "failed",
		          got[i] ? pa_page_to_pfn(pool, got[i]) - a0 : 0, steps[i].want);
		if (!got[i])
			continue;
		pa_pfn_t at = pa_page_to_pfn(pool, got[i]);
		CHECK_EQ_U64(at % (1ull << steps[i].align), 0);
		expect_range_blocks(pool, at, at + steps[i].count, PA_MT_CMA);
		taken += steps[i].count;
		CHECK_EQ_U64(cma(pool, 0).allocated_pages, taken);
	}
	/* Requests that cannot be: nothing changes. */
	struct pa_usage u = usage(pool);
	CHECK(pa_cma_alloc(pool, 0, 0, 0) == NULL);
	CHECK(pa_cma_alloc(pool, 0, ci.nr_pages + 1, 0) == NULL);
	CHECK(pa_cma_alloc(pool, 0, 2048, 10) ==
	      NULL); /* every 1024-aligned place overlaps one taken */
	CHECK(pa_cma_alloc(pool, 0, 769, 0) == NULL); /* the largest gap is [256, 1024) */
	CHECK(pa_cma_alloc(pool, 1, 1, 0) == NULL);
	CHECK(pa_cma_alloc(pool, 99, 1, 0) == NULL);
	CHECK(pa_cma_alloc(NULL, 0, 1, 0) == NULL);
	CHECK_EQ_U64(usage(pool).allocated, u.allocated);
	CHECK_EQ_U64(cma(pool, 0).allocated_pages, taken);
	VALIDATE(pool);
	for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
		if (got[i])
			CHECK_EQ_U64(pa_cma_release(pool, 0, got[i], steps[i].count), 0);
	CHECK_EQ_U64(cma(pool, 0).allocated_pages, 0);
	expect_as_fresh(pool, cmd);
	pa_shutdown(pool);
}

/*
 * Counts that reach past the area or wrap around are refused at once and
 * change nothing: no read or write beyond the area's map.
 */
TEST(cma_alloc_and_release_refuse_counts_that_overflow)
{
	const char *cmd = QUIET "mem=64M cma=4M";
	struct pa_pool *pool = test_boot(cmd);
	struct pa_cma_info ci = cma(pool, 0);
	CHECK(pa_cma_alloc(pool, 0, UINT64_MAX, 0) == NULL);
	CHECK(pa_cma_alloc(pool, 0, UINT64_MAX - ci.start_pfn + 1, 0) == NULL);
	CHECK(pa_cma_alloc(pool, 0, 1ull << 63, 3) == NULL);
	CHECK_EQ_U64(cma(pool, 0).allocated_pages, 0);
	struct pa_page *p = pa_cma_alloc(pool, 0, 64, 0);
	REQUIRE(p);
	pa_pfn_t pfn = pa_page_to_pfn(pool, p);
	struct pa_usage u = usage(pool);
	const uint64_t counts[] = {
		0 - pfn + 1, 0 - pfn, UINT64_MAX, 1ull << 62, ci.nr_pages + 1, 0
	};
	for (unsigned i = 0; i < sizeof counts / sizeof counts[0]; i++)
		CHECK_MSG(pa_cma_release(pool, 0, p, counts[i]) == -EINVAL,
		          "pa_cma_release(count %" PRIu64 ") was not refused", counts[i]);
	CHECK_EQ_U64(cma(pool, 0).allocated_pages, 64);
	CHECK_EQ_U64(usage(pool).allocated, u.allocated);
	VALIDATE(pool);
	CHECK_EQ_U64(pa_cma_release(pool, 0, p, 64), 0);
	CHECK_EQ_U64(cma(pool, 0).allocated_pages, 0);
	expect_as_fresh(pool, cmd);
	pa_shutdown(pool);
}

TEST(cma_alloc_with_a_pinned_borrower_fails_cleanly_and_the_pin_stays)
{
	const char *cmd = QUIET "mem=64M cma=8M backing=anon";
	struct pa_pool *pool = test_boot(cmd);
	struct towner o;
	to_init(&o, pool, 20000);
	fill_with_borrowers(&o, 50, 23);
	struct pa_cma_info ci = cma(pool, 0);
	REQUIRE(ci.nr_pages == 2048);
	pa_pfn_t a0 = ci.start_pfn;
	/* Pin a borrower in the upper half of the area. */
	long idx = -1;
	for (pa_pfn_t p = a0 + 1500; p < a0 + 2048 && idx < 0; p++)
		for (size_t i = 0; i < o.nr && idx < 0; i++)
			if (o.f[i].live && to_pfn(&o, i) == p)
				idx = (long)i;
	REQUIRE(idx >= 0);
	pa_pfn_t pinned_at = to_pfn(&o, (size_t)idx);
	REQUIRE(pa_pin(pool, o.f[idx].page) == 0);
	o.f[idx].pins++;
	REQUIRE(folios_in(&o, a0, a0 + 1024) > 0);
	/* The whole area: refused, and nothing moved or taken. */
	struct snap sn;
	snap_take(&sn, pool, &o);
	struct pa_page *p = pa_cma_alloc(pool, 0, 2048, 0);
	CHECK(p == NULL);
	CHECK_EQ_U64(to_pfn(&o, (size_t)idx), pinned_at);
	snap_expect_same(&sn, pool, &o, "the whole area with a pinned borrower");
	/* The lower half does not hold it: taken, the pin stays put. */
	struct pa_page *low = pa_cma_alloc(pool, 0, 1024, 10);
	CHECK(low && pa_page_to_pfn(pool, low) == a0);
	CHECK_EQ_U64(to_pfn(&o, (size_t)idx), pinned_at);
	/* The upper half holds it: refused, nothing changes. */
	snap_take(&sn, pool, &o);
	CHECK(pa_cma_alloc(pool, 0, 1024, 10) == NULL);
	snap_expect_same(&sn, pool, &o, "the upper half with a pinned borrower");
	/* Unpinned, it moves. */
	REQUIRE(pa_unpin(pool, o.f[idx].page) == 0);
	o.f[idx].pins--;
	struct pa_page *high = pa_cma_alloc(pool, 0, 1024, 10);
	CHECK(high && pa_page_to_pfn(pool, high) == a0 + 1024);
	CHECK(to_pfn(&o, (size_t)idx) != pinned_at);
	to_check_all(&o);
	to_expect_clean(&o);
	if (low)
		CHECK_EQ_U64(pa_cma_release(pool, 0, low, 1024), 0);
	if (high)
		CHECK_EQ_U64(pa_cma_release(pool, 0, high, 1024), 0);
	CHECK_EQ_U64(cma(pool, 0).allocated_pages, 0);
	to_finish_as_fresh(&o, cmd);
}

TEST(cma_release_rejects_frames_that_are_not_an_allocation_of_the_area)
{
	const char *cmd = QUIET "mem=64M cma=8M cma=8M";
	struct pa_pool *pool = test_boot(cmd);
	struct pa_cma_info c0 = cma(pool, 0), c1 = cma(pool, 1);
	struct pa_page *p = pa_cma_alloc(pool, 0, 64, 6);
	REQUIRE(p && in_area(&c0, pa_page_to_pfn(pool, p)));
	struct pa_page *q = pa_cma_alloc(pool, 1, 64, 6);
	REQUIRE(q && in_area(&c1, pa_page_to_pfn(pool, q)));
	/* A movable block borrowed from area 0, and one outside every area. */
	struct pa_page *b = NULL, *m = NULL, **tmp = calloc(pool->nr_frames, sizeof *tmp);
	size_t nt = 0;
	REQUIRE(tmp);
	while (!b || !m) {
		struct pa_page *x = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 0);
		REQUIRE(x);
		pa_pfn_t pfn = pa_page_to_pfn(pool, x);
		if (!b && in_area(&c0, pfn))
			b = x;
		else if (!m && !in_area(&c0, pfn) && !in_area(&c1, pfn))
			m = x;
		else
			tmp[nt++] = x;
	}
	for (size_t i = 0; i < nt; i++)
		pa_free_pages(pool, tmp[i], 0);
	free(tmp);
	uint64_t bad0 = vmstat(pool, "bad_page");
	struct pa_usage u = usage(pool);
	pa_pfn_t pp = pa_page_to_pfn(pool, p);
	struct {
		unsigned area;
		struct pa_page *page;
		uint64_t count;
		const char *what;
	} no[] = {
		{ 1, p, 64, "area 0's allocation released to area 1" },
		{ 0, q, 64, "area 1's allocation released to area 0" },
		{ 0, b, 1, "a movable block borrowed from area 0" },
		{ 0, m, 1, "a block outside every area" },
		{ 0, p, 65, "one frame more than was allocated" },
		{ 0, pa_pfn_to_page(pool, pp - 1), 65, "one frame before the allocation" },
		{ 0, pa_pfn_to_page(pool, c0.start_pfn + c0.nr_pages - 1), 2,
		  "past the end of the area" },
		{ 0, NULL, 1, "NULL" },
		{ 2, p, 64, "no such area" },
	};
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
		int rc = pa_cma_release(pool, no[i].area, no[i].page, no[i].count);
		CHECK_MSG(rc == -EINVAL, "%s: pa_cma_release = %d, expected -EINVAL", no[i].what,
		          rc);
	}
	/* Nothing was freed or forgotten. */
	CHECK_EQ_U64(vmstat(pool, "bad_page"), bad0);
	CHECK_EQ_U64(usage(pool).allocated, u.allocated);
	CHECK_EQ_U64(cma(pool, 0).allocated_pages, 64);
	CHECK_EQ_U64(cma(pool, 1).allocated_pages, 64);
	CHECK_EQ_U64(pa_folio_order(pool, b), 0);
	CHECK_EQ_U64(pa_folio_order(pool, p), 6);
	VALIDATE(pool);
	/* The right release, once. */
	CHECK_EQ_U64(pa_cma_release(pool, 0, p, 64), 0);
	CHECK_EQ_U64(pa_cma_release(pool, 0, p, 64), (uint64_t)-EINVAL);
	CHECK_EQ_U64(pa_cma_release(pool, 1, q, 64), 0);
	CHECK_EQ_U64(cma(pool, 0).allocated_pages, 0);
	CHECK_EQ_U64(cma(pool, 1).allocated_pages, 0);
	CHECK_EQ_U64(vmstat(pool, "bad_page"), bad0);
	pa_free_pages(pool, b, 0);
	pa_free_pages(pool, m, 0);
	expect_as_fresh(pool, cmd);
	pa_shutdown(pool);
}

TEST(cma_release_of_part_of_an_allocation_frees_exactly_that_part_or_is_refused)
{
	const char *cmd = QUIET "mem=64M cma=8M";
	struct pa_pool *pool = test_boot(cmd);
	struct pa_page *p = pa_cma_alloc(pool, 0, 64, 6);
	REQUIRE(p);
	pa_pfn_t pp = pa_page_to_pfn(pool, p);
	uint64_t bad0 = vmstat(pool, "bad_page");
	struct pa_usage u0 = usage(pool);
	/* The upper half of one order-6 block. */
	int rc = pa_cma_release(pool, 0, pa_pfn_to_page(pool, pp + 32), 32);
	struct pa_usage u1 = usage(pool);
	uint64_t alloc1 = cma(pool, 0).allocated_pages;
	if (rc == 0) {
		CHECK_MSG(vmstat(pool, "bad_page") == bad0,
		          "a partial release that answered 0 was a bad free");
		CHECK_MSG(u1.allocated == u0.allocated - 32,
		          "a partial release that answered 0 freed %" PRIu64 " frames, expected 32",
		          u0.allocated - u1.allocated);
		CHECK_EQ_U64(alloc1, 32);
	} else {
		CHECK_EQ_U64(rc, (uint64_t)-EINVAL);
		CHECK_EQ_U64(vmstat(pool, "bad_page"), bad0);
		CHECK_EQ_U64(u1.allocated, u0.allocated);
		CHECK_EQ_U64(alloc1, 64);
	}
	VALIDATE(pool);
	pa_shutdown(pool);
}
