/* SPDX-License-Identifier: MIT */
/* Helpers the test files share: see helpers.h. */
#include "helpers.h"

#include "minijson.h"
#include "memmap.h"

struct pa_usage usage(struct pa_pool *pool)
{
	struct pa_usage u;
	pa_get_usage(pool, &u);
	CHECK_MSG(u.managed == u.free + u.allocated + u.reserved,
	          "managed %" PRIu64 " != free %" PRIu64 " + allocated %" PRIu64
	          " + reserved %" PRIu64,
	          u.managed, u.free, u.allocated, u.reserved);
	return u;
}

uint64_t vmstat(struct pa_pool *pool, const char *name)
{
	uint64_t v = 0;
	int rc = pa_vmstat_read(pool, name, &v);
	CHECK_MSG(rc == 0, "pa_vmstat_read(\"%s\") = %d", name, rc);
	return v;
}

char *report(struct pa_pool *pool, enum pa_report_kind kind, unsigned flags)
{
	for (;;) {
		char one[1];
		int n = pa_report(pool, kind, flags, one, sizeof one);
		REQUIRE(n >= 0);
		/* Threads still running may lengthen it between the two calls: room, then retry. */
		size_t room = (size_t)n + 4096;
		char *buf = malloc(room);
		REQUIRE(buf);
		int m = pa_report(pool, kind, flags, buf, room);
		REQUIRE(m >= 0);
		if ((size_t)m < room)
			return buf;
		free(buf);
	}
}

char *report_alloc(struct pa_pool *pool, enum pa_report_kind kind, unsigned flags)
{
	int n = pa_report(pool, kind, flags, NULL, 0);
	REQUIRE(n > 0);
	char *buf = malloc((size_t)n + 1);
	REQUIRE(buf);
	int m = pa_report(pool, kind, flags, buf, (size_t)n + 1);
	CHECK_EQ_U64(m, n);
	CHECK_EQ_U64(strlen(buf), n);
	return buf;
}

int64_t json_blocks(struct pa_pool *pool, const char *type)
{
	char *txt = report(pool, PA_REPORT_PAGETYPEINFO, PA_REPORT_JSON);
	char err[128] = "";
	struct jv *root = jparse(txt, err, sizeof err);
	free(txt);
	CHECK_MSG(root, "pagetypeinfo json: %s", err);
	if (!root)
		return -1;
	int64_t n = 0;
	struct jv *nodes = jget(root, "nodes");
	for (size_t i = 0; nodes && i < nodes->n; i++) {
		struct jv *zones = jget(jat(nodes, i), "zones");
		for (size_t j = 0; zones && j < zones->n; j++)
			n += jint(jget(jat(zones, j), "blocks"), type, 0);
	}
	jfree(root);
	return n;
}

void expect_all_free(struct pa_pool *pool)
{
	pa_drain_all(pool);
	struct pa_usage u = usage(pool);
	CHECK_EQ_U64(u.allocated, 0);
	CHECK_EQ_U64(u.reserved, 0);
	CHECK_EQ_U64(u.free, u.managed);
	VALIDATE(pool);
}

void expect_as_fresh_after(struct pa_pool *pool, const char *cmdline, const char *step)
{
	expect_all_free(pool);
	struct pa_pool *fresh = test_boot(cmdline);
	char *want = report(fresh, PA_REPORT_BUDDYINFO, 0);
	char *got = report(pool, PA_REPORT_BUDDYINFO, 0);
	CHECK_MSG(strcmp(want, got) == 0,
	          "[%s] after %s, not merged as at boot:\n got:  %s want: %s", cmdline, step, got,
	          want);
	free(want);
	free(got);
	pa_shutdown(fresh);
}

pa_pfn_t must_alloc(struct pa_pool *pool, pa_gfp_t gfp, unsigned order)
{
	struct pa_page *page = pa_alloc_pages(pool, gfp, order);
	CHECK_MSG(page != NULL, "allocation of order %u (gfp %#x) failed", order, gfp);
	if (!page)
		test_abort_case();
	pa_pfn_t pfn = pa_page_to_pfn(pool, page);
	CHECK_MSG(pfn % (1ull << order) == 0, "order-%u block at pfn %" PRIu64 " is not aligned",
	          order, pfn);
	return pfn;
}

void free_pfn(struct pa_pool *pool, pa_pfn_t pfn, unsigned order)
{
	pa_free_pages(pool, pa_pfn_to_page(pool, pfn), order);
}

uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

struct pa_zone *zone_of_type(struct pa_pool *pool, enum pa_zone_type type)
{
	for (unsigned z = 0; z < pool->nr_zones; z++)
		if (pool->zones[z].type == type)
			return &pool->zones[z];
	return NULL;
}

unsigned zones_with_memory(const struct pa_pool *pool)
{
	unsigned n = 0;
	for (unsigned z = 0; z < pool->nr_zones; z++)
		n += pool->zones[z].present_pages > 0;
	return n;
}

uint64_t free_frames_from(struct pa_pool *pool, unsigned order)
{
	uint64_t n = 0;
	for (unsigned z = 0; z < pool->nr_zones; z++) {
		pa_lock(&pool->zones[z].lock, SITE_ADMIN);
		for (unsigned o = order; o <= pool->cfg.max_order; o++)
			n += zone_free_blocks(&pool->zones[z], o) << o;
		pa_unlock(&pool->zones[z].lock);
	}
	return n;
}

unsigned fit_order(const struct pa_pool *pool, pa_pfn_t p, pa_pfn_t e)
{
	unsigned o = p ? (unsigned)__builtin_ctzll(p) : pool->cfg.max_order;
	if (o > pool->cfg.max_order)
		o = pool->cfg.max_order;
	while (p + (1ull << o) > e)
		o--;
	return o;
}

pa_pfn_t body_stray(const struct pa_pool *pool, pa_pfn_t p, unsigned o)
{
	for (pa_pfn_t q = p + 1; q < p + (1ull << o); q++)
		if (page_state(pfn_page(pool, q)) != PS_BODY)
			return q;
	return PA_NIL;
}

unsigned expect_range_blocks(struct pa_pool *pool, pa_pfn_t s, pa_pfn_t e, unsigned mt)
{
	unsigned blocks = 0, bad = 0;
	for (pa_pfn_t p = s; p < e; blocks++) {
		unsigned o = fit_order(pool, p, e);
		struct pa_page *pg = pa_pfn_to_page(pool, p);
		int got = pa_folio_order(pool, pg);
		if ((got != (int)o || page_mt(pg) != mt || page_owner(pg) != 0) && bad++ < 3)
			test_fail(__FILE__, __LINE__,
			          "range [%" PRIu64 ", %" PRIu64 "): block at %" PRIu64
			          " order %d type %u owner %u, "
			          "expected an order-%u block of type %u",
			          s, e, p, got, page_mt(pg), page_owner(pg), o, mt);
		pa_pfn_t stray = body_stray(pool, p, o);
		if (stray != PA_NIL && bad++ < 3)
			test_fail(__FILE__, __LINE__,
			          "range [%" PRIu64 ", %" PRIu64 "): pfn %" PRIu64
			          " inside the order-%u block at %" PRIu64
			          " says state %u, not a body frame",
			          s, e, stray, o, p, page_state(pfn_page(pool, stray)));
		p += 1ull << o;
	}
	return blocks;
}

__thread unsigned fake_cpu;

unsigned fake_cpu_id(void *ctx)
{
	(void)ctx;
	return fake_cpu;
}

uint64_t alloc_order0_into(struct pa_pool *pool, pa_gfp_t gfp, struct pa_page **pages, uint64_t *n,
                           uint64_t cap)
{
	uint64_t took = 0;
	while (*n < cap) {
		struct pa_page *p = pa_alloc_pages(pool, gfp, 0);
		if (!p)
			break;
		pages[(*n)++] = p;
		took++;
	}
	return took;
}

struct pa_page **alloc_order0_all(struct pa_pool *pool, pa_gfp_t gfp, uint64_t cap, uint64_t *nr)
{
	struct pa_page **pages = malloc(cap * sizeof *pages);
	REQUIRE(pages);
	*nr = 0;
	alloc_order0_into(pool, gfp, pages, nr, cap);
	return pages;
}

void free_order0_all(struct pa_pool *pool, struct pa_page **pages, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		pa_free_pages(pool, pages[i], 0);
	free(pages);
}

/* Free blocks per order, summed over every zone of the buddyinfo text. */
void buddy_counts(struct pa_pool *pool, uint64_t *counts, unsigned nr_orders)
{
	char buf[8192];
	int n = pa_report(pool, PA_REPORT_BUDDYINFO, 0, buf, sizeof buf);
	REQUIRE(n > 0 && (size_t)n < sizeof buf);
	memset(counts, 0, nr_orders * sizeof *counts);
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		char *p = strstr(line, "zone");
		REQUIRE(p);
		p += 4;
		while (*p == ' ')
			p++;
		while (*p && *p != ' ')
			p++; /* the zone name */
		for (unsigned o = 0; o < nr_orders; o++) {
			char *end;
			counts[o] += strtoull(p, &end, 10);
			REQUIRE(end != p);
			p = end;
		}
	}
}
