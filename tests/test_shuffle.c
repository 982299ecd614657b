/* SPDX-License-Identifier: MIT */
/*
 * Page shuffling (shuffle=1): the max-order free lists are in a random order
 * after boot (with and without deferred init), and a block freed up to the
 * max order goes to the head or the tail of its list at random; nothing else
 * changes: the same blocks and counts as without shuffling, pa_validate()
 * holds through a churn, and everything merges back when all is freed.
 */
#include "test.h"

#include "platform/platform.h"
#include "buddy.h"
#include "memmap.h"

#define ORDER  10 /* max order of the 1 GiB pools below */
#define BLOCKS 256

static const char *const EXACT = "mem=1G min_free_kbytes=0 ";

static struct pa_pool *boot_line(const char *extra)
{
	char line[256];
	snprintf(line, sizeof line, "%s%s", EXACT, extra);
	return test_boot(line);
}

/* Every max-order block, in the order the allocator hands them out. */
static void take_all(struct pa_pool *pool, pa_pfn_t *pfn)
{
	for (unsigned i = 0; i < BLOCKS; i++) {
		struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, ORDER);
		REQUIRE(p);
		pfn[i] = pa_page_to_pfn(pool, p);
	}
	CHECK(pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 0) == NULL);
}

static void give_all(struct pa_pool *pool, const pa_pfn_t *pfn)
{
	for (unsigned i = 0; i < BLOCKS; i++)
		pa_free_pages(pool, pa_pfn_to_page(pool, pfn[i]), ORDER);
}

/* Neighbours in rising address order; a list in address order has BLOCKS - 1 or 0. */
static unsigned rises(const pa_pfn_t *pfn)
{
	unsigned n = 0;
	for (unsigned i = 1; i < BLOCKS; i++)
		n += pfn[i] > pfn[i - 1];
	return n;
}

/* The same blocks, each once: every max-order block of the pool. */
static void check_all_blocks(const pa_pfn_t *pfn)
{
	static bool seen[BLOCKS];
	memset(seen, 0, sizeof seen);
	for (unsigned i = 0; i < BLOCKS; i++) {
		CHECK(pfn[i] % (1u << ORDER) == 0 && pfn[i] >> ORDER < BLOCKS);
		CHECK_MSG(!seen[pfn[i] >> ORDER], "pfn %" PRIu64 " handed out twice", pfn[i]);
		seen[pfn[i] >> ORDER] = true;
	}
}

static char *report(struct pa_pool *pool, enum pa_report_kind kind)
{
	int n = pa_report(pool, kind, 0, NULL, 0);
	REQUIRE(n > 0);
	char *buf = malloc((size_t)n + 1);
	REQUIRE(buf);
	pa_report(pool, kind, 0, buf, (size_t)n + 1);
	return buf;
}

TEST(shuffle_boot_hands_out_max_order_blocks_in_random_order)
{
	static pa_pfn_t plain[BLOCKS], a[BLOCKS], b[BLOCKS];
	struct pa_pool *pool = boot_line("pcp_orders=none");
	char *fresh = report(pool, PA_REPORT_BUDDYINFO);
	take_all(pool, plain);
	pa_shutdown(pool);
	/* Without shuffling: address order. */
	CHECK_MSG(rises(plain) == 0 || rises(plain) == BLOCKS - 1, "unshuffled: %u rises",
	          rises(plain));
	static const char *const lines[] = { "pcp_orders=none shuffle=1",
		                             "pcp_orders=none shuffle=1 deferred_init=0" };
	for (unsigned k = 0; k < 2; k++) {
		pool = boot_line(
		        lines[k]); /* test_boot waits for deferred init: shuffled by then */
		char *got = report(pool, PA_REPORT_BUDDYINFO);
		CHECK_MSG(!strcmp(got, fresh), "%s: buddyinfo\n%s\nwithout shuffling\n%s", lines[k],
		          got, fresh);
		free(got);
		VALIDATE(pool);
		take_all(pool, a);
		check_all_blocks(a);
		/* A random permutation of 256 has about 127 rises; address order 0 or 255. */
		CHECK_MSG(rises(a) > 64 && rises(a) < BLOCKS - 64, "%s: %u rises", lines[k],
		          rises(a));
		VALIDATE(pool);
		pa_shutdown(pool);
		/* Another boot, another order (the same one by chance: 1 in 256!). */
		pool = boot_line(lines[k]);
		take_all(pool, b);
		CHECK_MSG(memcmp(a, b, sizeof a) != 0, "%s: two boots gave the same order",
		          lines[k]);
		pa_shutdown(pool);
	}
	free(fresh);
}

TEST(shuffle_frees_go_to_the_head_or_the_tail_at_random)
{
	static pa_pfn_t first[BLOCKS], again[BLOCKS];
	static unsigned freed_at[BLOCKS];
	struct pa_pool *pool = boot_line("pcp_orders=none shuffle=1");
	take_all(pool, first);
	give_all(pool, first); /* block first[i] freed i-th */
	for (unsigned i = 0; i < BLOCKS; i++)
		freed_at[first[i] >> ORDER] = i;
	take_all(pool, again);
	check_all_blocks(again);
	/*
	 * The list is the blocks put at the head, last freed first, then those put
	 * at the tail, first freed first: falling free times, then rising ones.
	 */
	unsigned i = 1;
	while (i < BLOCKS && freed_at[again[i] >> ORDER] < freed_at[again[i - 1] >> ORDER])
		i++;
	unsigned heads = i; /* the falling run, and the first of the tail part with it */
	while (i < BLOCKS && freed_at[again[i] >> ORDER] > freed_at[again[i - 1] >> ORDER])
		i++;
	CHECK_MSG(i == BLOCKS, "the order after the frees is not heads then tails (breaks at %u)",
	          i);
	/* Each free is a coin flip: both ends get about half (below 64 has odds under 1e-15). */
	CHECK_MSG(heads > 64 && heads < BLOCKS - 64, "%u of %u frees went to the head", heads,
	          BLOCKS);
	give_all(pool, again);
	VALIDATE(pool);
	pa_shutdown(pool);
}

TEST(shuffle_changes_nothing_but_the_order)
{
	uint64_t seed = test_seed();
	printf("  seed %" PRIu64 " (PA_TEST_SEED)\n", seed);
	unsigned ops = (unsigned)(20000 * test_scale());
	struct pa_pool *pool[2] = { boot_line("pcp_orders=0-3"),
		                    boot_line("pcp_orders=0-3 shuffle=1") };
	char *fresh = report(pool[0], PA_REPORT_BUDDYINFO);
	static struct pa_page *held[2][512];
	static unsigned order_of[512];
	for (unsigned k = 0; k < 2; k++) {
		uint64_t r = seed;
		memset(held[k], 0, sizeof held[k]);
		for (unsigned n = 0; n < ops; n++) {
			r = r * 6364136223846793005ull + 1442695040888963407ull;
			unsigned slot = (unsigned)(r >> 33) % 512;
			if (held[k][slot]) {
				pa_free_pages(pool[k], held[k][slot], order_of[slot]);
				held[k][slot] = NULL;
				continue;
			}
			order_of[slot] =
			        (unsigned)(r >> 50) % 7; /* 512 x 2^6 frames: never fails */
			held[k][slot] = pa_alloc_pages(pool[k], PA_GFP_MOVABLE | PA_GFP_NOWARN,
			                               order_of[slot]);
			if (n % 4096 == 0)
				VALIDATE(pool[k]);
		}
		VALIDATE(pool[k]);
	}
	/* The same requests, the same frames in use, whichever blocks served them. */
	struct pa_usage u[2];
	for (unsigned k = 0; k < 2; k++)
		pa_get_usage(pool[k], &u[k]);
	CHECK_EQ_U64(u[0].managed, u[1].managed);
	CHECK_EQ_U64(u[0].allocated, u[1].allocated);
	CHECK_EQ_U64(u[0].free + u[0].reserved, u[1].free + u[1].reserved);
	static const char *const counters[] = { "pgalloc_dma32", "pgfree", "pgalloc_fail" };
	for (unsigned c = 0; c < 3; c++) {
		uint64_t v[2];
		for (unsigned k = 0; k < 2; k++)
			REQUIRE(pa_vmstat_read(pool[k], counters[c], &v[k]) == 0);
		CHECK_MSG(v[0] == v[1], "%s: %" PRIu64 " without shuffling, %" PRIu64 " with",
		          counters[c], v[0], v[1]);
	}
	for (unsigned k = 0; k < 2; k++) {
		for (unsigned s = 0; s < 512; s++)
			if (held[k][s])
				pa_free_pages(pool[k], held[k][s], order_of[s]);
		pa_drain_all(pool[k]);
		VALIDATE(pool[k]);
		char *end = report(pool[k], PA_REPORT_BUDDYINFO);
		CHECK_MSG(!strcmp(end, fresh), "pool %u after freeing everything:\n%s", k, end);
		free(end);
		pa_shutdown(pool[k]);
	}
	free(fresh);
}

/* The head of the first free max-order block on the movable list, under the zone lock. */
static pa_pfn_t first_max_block(struct pa_pool *pool)
{
	struct pa_zone *z = &pool->zones[0];
	pa_lock(&z->lock, SITE_ADMIN);
	pa_pfn_t pfn = buddy_list_first(z, ORDER, PA_MT_MOVABLE);
	pa_unlock(&z->lock);
	REQUIRE(pfn != PA_NIL);
	return pfn;
}

/*
 * Shuffling links every untouched chunk at boot; those blocks are marked
 * PF_UNTOUCHED, which lets pa_validate() skip their never-written bodies. A
 * relink drops the mark, and debug=2 walks the bodies all the same: a
 * descriptor written inside such a block is caught there.
 */
TEST(shuffle_untouched_blocks_keep_their_mark_until_relinked_and_debug2_walks_them)
{
	struct pa_pool *pool = boot_line("shuffle=1 pcp_orders=none debug=2");
	pa_pfn_t pfn = first_max_block(pool);
	struct pa_page *head = pfn_page(pool, pfn);
	CHECK(page_flags(head) & PF_UNTOUCHED);
	VALIDATE(pool);
	/* A stray write inside the body: the full walk names it. */
	struct pa_page *inner = pfn_page(pool, pfn + 5);
	set_page_state(inner, PS_ALLOC);
	char err[512] = "";
	CHECK(pa_validate(pool, err, sizeof err) != 0);
	CHECK_MSG(strstr(err, "overlaps") != NULL, "pa_validate said: %s", err);
	set_page_state(inner, PS_BODY);
	VALIDATE(pool);
	/* Taken and freed again, the block is relinked: the mark is gone. */
	struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE, ORDER);
	REQUIRE(p);
	pa_pfn_t got = pa_page_to_pfn(pool, p);
	pa_free_pages(pool, p, ORDER);
	CHECK(!(page_flags(pfn_page(pool, got)) & PF_UNTOUCHED));
	VALIDATE(pool);
	pa_shutdown(pool);
}
