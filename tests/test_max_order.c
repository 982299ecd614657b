/* SPDX-License-Identifier: MIT */
/*
 * max_order written at run time through ctl: lowering splits the free blocks
 * above the new order and switches per-CPU orders above it off; allocated
 * blocks above it are split when freed; raising merges the free blocks up to
 * the new order again. pa_validate passes after every change, with blocks
 * of every order allocated across the changes.
 */
#include "helpers.h"

#include <errno.h>

static unsigned ctl_order(struct pa_pool *pool)
{
	char buf[32] = "";
	REQUIRE(pa_ctl_read(pool, "max_order", buf, sizeof buf) > 0);
	return (unsigned)strtoul(buf, NULL, 10);
}

static void set_order(struct pa_pool *pool, unsigned order)
{
	char v[16];
	snprintf(v, sizeof v, "%u", order);
	REQUIRE(pa_ctl_write(pool, "max_order", v) == 0);
	CHECK_EQ_U64(ctl_order(pool), order);
	VALIDATE(pool);
}

#define LINE "mem=8G max_order=20 kcompactd=manual min_free_kbytes=0 pcp_orders=0-3,9,12"

TEST(max_order_lowered_and_raised_on_one_pool)
{
	struct pa_pool *pool = test_boot(LINE);
	pa_pfn_t big = must_alloc(pool, PA_GFP_MOVABLE, 18);
	pa_pfn_t mid = must_alloc(pool, PA_GFP_MOVABLE, 12); /* through the per-CPU lists */
	pa_pfn_t small = must_alloc(pool, PA_GFP_KERNEL, 3);
	uint64_t free_before = usage(pool).free;
	set_order(pool, 10);
	CHECK_EQ_U64(free_frames_from(pool, 11), 0); /* every free block above 10 split */
	CHECK_EQ_U64(usage(pool).free, free_before);
	CHECK(pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 11) == NULL);
	char buf[8];
	REQUIRE(pa_ctl_read(pool, "pcp/orders/12/enabled", buf, sizeof buf) > 0);
	CHECK(buf[0] == '0');
	pa_pfn_t ten = must_alloc(pool, PA_GFP_MOVABLE, 10);
	free_pfn(pool, big, 18); /* allocated before: freed as 256 blocks of order 10 */
	VALIDATE(pool);
	CHECK_EQ_U64(free_frames_from(pool, 11), 0);
	set_order(pool, 20);
	CHECK_EQ_U64(free_frames_from(pool, 20), 1ull << 20); /* DMA32 merged up again */
	free_pfn(pool, mid, 12);
	free_pfn(pool, ten, 10);
	free_pfn(pool, small, 3);
	pa_drain_all(pool);
	CHECK_EQ_U64(free_frames_from(pool, 20), 2ull << 20); /* and Normal, once emptied */
	pa_pfn_t huge = must_alloc(pool, PA_GFP_MOVABLE, 20);
	set_order(pool, 14);
	free_pfn(pool, huge, 20); /* as 64 blocks of order 14 */
	CHECK_EQ_U64(free_frames_from(pool, 15), 0);
	set_order(pool, 20);
	REQUIRE(pa_ctl_write(pool, "pcp/orders/12/enabled", "1") == 0);
	expect_as_fresh(pool, LINE);
	pa_shutdown(pool);
}

TEST(max_order_refuses_orders_out_of_range)
{
	struct pa_pool *pool = test_boot("mem=1G max_order=12");
	CHECK_EQ_U64(pa_ctl_write(pool, "max_order", "13"), -EINVAL); /* above the booted order */
	CHECK_EQ_U64(pa_ctl_write(pool, "max_order", "8"), -EINVAL);  /* below the pageblock */
	CHECK_EQ_U64(pa_ctl_write(pool, "max_order", "x"), -EINVAL);
	CHECK_EQ_U64(ctl_order(pool), 12);
	struct pa_pool *raw = NULL;
	char err[128];
	REQUIRE((pa_boot)("mem=64G", NULL, &raw, err, sizeof err) == 0);
	int rc = pa_ctl_write(raw, "max_order", "9");
	CHECK(rc == 0 || rc == -EBUSY); /* -EBUSY while deferred init runs */
	pa_deferred_init_wait(raw);
	CHECK_EQ_U64(pa_ctl_write(raw, "max_order", "10"), 0);
	VALIDATE(raw);
	pa_shutdown(raw);
	VALIDATE(pool);
	pa_shutdown(pool);
}

/* The seeds' max_order 10 against 20, on one pool: a churn at each, then all freed and merged. */
TEST(max_order_seed_comparison_on_one_pool)
{
	const char *line = "mem=4G max_order=20 kcompactd=manual min_free_kbytes=0";
	struct pa_pool *pool = test_boot(line);
	uint64_t rng = test_seed();
	size_t cap = (size_t)(20000 * test_scale()) + 100;
	pa_pfn_t *pfn = calloc(cap, sizeof *pfn);
	unsigned *ord = calloc(cap, sizeof *ord);
	REQUIRE(pfn && ord);
	for (unsigned round = 0; round < 4; round++) {
		set_order(pool, round % 2 ? 20 : 10);
		for (size_t i = 0; i < cap; i++) {
			if (pfn[i] && rng_next(&rng) % 2) {
				free_pfn(pool, pfn[i], ord[i]);
				pfn[i] = 0;
			} else if (!pfn[i]) {
				ord[i] = (unsigned)(rng_next(&rng) % 6);
				struct pa_page *p = pa_alloc_pages(
				        pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, ord[i]);
				pfn[i] = p ? pa_page_to_pfn(pool, p) : 0;
			}
		}
		VALIDATE(pool);
	}
	for (size_t i = 0; i < cap; i++)
		if (pfn[i])
			free_pfn(pool, pfn[i], ord[i]);
	set_order(pool, 20);
	expect_as_fresh(pool, line);
	free(pfn);
	free(ord);
	pa_shutdown(pool);
}

struct churner {
	struct pa_pool *pool;
	unsigned id;
	uint64_t ops;
	_Atomic int *stop;
};

/* Allocates and frees blocks of orders 0..13, some above every max_order the writer picks. */
static void *churn_main(void *arg)
{
	struct churner *c = arg;
	struct pa_page *held[32] = { 0 };
	unsigned ord[32];
	uint64_t rng = c->id * 977 + 3;
	for (uint64_t i = 0; i < c->ops || !atomic_load(c->stop); i++) {
		unsigned k = (unsigned)(rng_next(&rng) % 32);
		if (held[k]) {
			pa_free_pages(c->pool, held[k], ord[k]);
			held[k] = NULL;
			continue;
		}
		ord[k] = (unsigned)(rng_next(&rng) % 14);
		pa_gfp_t gfp =
		        (rng_next(&rng) % 2 ? PA_GFP_MOVABLE : PA_GFP_KERNEL) | PA_GFP_NOWARN;
		held[k] = pa_alloc_pages(c->pool, gfp, ord[k]);
	}
	for (unsigned k = 0; k < 32; k++)
		if (held[k])
			pa_free_pages(c->pool, held[k], ord[k]);
	return NULL;
}

/* max_order lowered and raised again and again while two threads allocate and free (TSan too). */
TEST(max_order_changed_while_other_threads_allocate)
{
	const char *line = "mem=2G max_order=16 kcompactd=manual pcp_orders=0-3,9,12";
	struct pa_pool *pool = test_boot(line);
	_Atomic int stop = 0;
	struct churner c[2];
	pthread_t t[2];
	uint64_t ops = (uint64_t)(20000 * test_scale()) + 200, rng = test_seed();
	for (unsigned k = 0; k < 2; k++) {
		c[k] = (struct churner){ .pool = pool, .id = k, .ops = ops, .stop = &stop };
		REQUIRE(pthread_create(&t[k], NULL, churn_main, &c[k]) == 0);
	}
	unsigned changes = (unsigned)(60 * test_scale()) + 10;
	for (unsigned i = 0; i < changes; i++) {
		unsigned m = pool->cfg.pageblock_order + (unsigned)(rng_next(&rng) % 8);
		char v[16], err[256];
		snprintf(v, sizeof v, "%u", m);
		CHECK_EQ_U64(pa_ctl_write(pool, "max_order", v), 0);
		CHECK_MSG(pa_validate(pool, err, sizeof err) == 0, "after max_order=%u: %s", m,
		          err);
	}
	atomic_store(&stop, 1);
	for (unsigned k = 0; k < 2; k++)
		pthread_join(t[k], NULL);
	set_order(pool, 16);
	REQUIRE(pa_ctl_write(pool, "pcp/orders/9/enabled", "1") == 0);
	REQUIRE(pa_ctl_write(pool, "pcp/orders/12/enabled", "1") == 0);
	expect_as_fresh(pool, line);
	pa_shutdown(pool);
}
