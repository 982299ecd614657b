/* SPDX-License-Identifier: MIT */
/*
 * Reports and counters: buddyinfo, pagetypeinfo, vmstat, unusable and extfrag
 * indexes in the exact /proc formats and as JSON that parses; pa_report's
 * snprintf-like length; pa_vmstat_read; frame accounting (managed = free +
 * allocated + reserved); pa_ctl_read/pa_ctl_write of watermark_scale_factor.
 */
#include "test.h"
#include "helpers.h"

#include "platform/platform.h"
#include "memmap.h"
#include "pageblock.h"
#include "minijson.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>

#define MiB (1ull << 20)
#define GiB (1ull << 30)

/* The value of `name` in the vmstat text, or -1 if there is no such line. */
static int64_t vmstat_text_value(const char *text, const char *name)
{
	size_t n = strlen(name);
	for (const char *line = text; *line;) {
		const char *end = strchr(line, '\n');
		if (!end)
			end = line + strlen(line);
		if ((size_t)(end - line) > n && !strncmp(line, name, n) && line[n] == ' ')
			return strtoll(line + n + 1, NULL, 10);
		line = *end ? end + 1 : end;
	}
	return -1;
}

static void append(char *buf, size_t len, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

/* "Node %d, zone %8s " + "%6lu " per order + "\n". */
static void buddy_line(char *buf, size_t len, int node, const char *zone, const uint64_t *counts,
                       unsigned max_order)
{
	append(buf, len, "Node %d, zone %8s ", node, zone);
	for (unsigned o = 0; o <= max_order; o++)
		append(buf, len, "%6lu ", (unsigned long)counts[o]);
	append(buf, len, "\n");
}

static void check_json(struct pa_pool *pool, enum pa_report_kind kind)
{
	char *json = report_alloc(pool, kind, PA_REPORT_JSON);
	char err[256];
	struct jv *root = jparse(json, err, sizeof err);
	CHECK_MSG(root != NULL, "%s JSON does not parse: %s\n%.400s", pa_report_name(kind), err,
	          json);
	CHECK_MSG(root == NULL || root->type == J_OBJ || root->type == J_ARR,
	          "%s JSON is not an object or array", pa_report_name(kind));
	jfree(root);
	free(json);
}

/* --- pa_report mechanics ------------------------------------------------------ */

TEST(stats_report_returns_needed_length_like_snprintf)
{
	struct pa_pool *pool = test_boot("mem=64M");
	for (int k = 0; k < PA_REPORT_COUNT; k++) {
		for (unsigned flags = 0; flags <= PA_REPORT_JSON; flags += PA_REPORT_JSON) {
			char *full = report_alloc(pool, (enum pa_report_kind)k, flags);
			int n = (int)strlen(full);
			char small[11];
			memset(small, 'X', sizeof small);
			int m = pa_report(pool, (enum pa_report_kind)k, flags, small, 10);
			CHECK_EQ_U64(m, n);
			CHECK(small[9] == '\0');
			CHECK(small[10] == 'X');
			CHECK(!strncmp(small, full, 9));
			char one = 'X';
			CHECK_EQ_U64(pa_report(pool, (enum pa_report_kind)k, flags, &one, 1), n);
			CHECK(one == '\0');
			free(full);
		}
	}
	char buf[16];
	CHECK(pa_report(pool, PA_REPORT_COUNT, 0, buf, sizeof buf) < 0);
	CHECK(pa_report(pool, (enum pa_report_kind)99, 0, buf, sizeof buf) < 0);
	pa_shutdown(pool);
}

TEST(stats_report_names)
{
	CHECK(pa_report_name(PA_REPORT_BUDDYINFO) &&
	      !strcmp(pa_report_name(PA_REPORT_BUDDYINFO), "buddyinfo"));
	CHECK(pa_report_name(PA_REPORT_PAGETYPEINFO) &&
	      !strcmp(pa_report_name(PA_REPORT_PAGETYPEINFO), "pagetypeinfo"));
	CHECK(pa_report_name(PA_REPORT_VMSTAT) &&
	      !strcmp(pa_report_name(PA_REPORT_VMSTAT), "vmstat"));
	for (int k = 0; k < PA_REPORT_COUNT; k++)
		CHECK(pa_report_name((enum pa_report_kind)k) != NULL);
	CHECK(pa_report_name(PA_REPORT_COUNT) == NULL);
}

TEST(stats_every_json_report_parses)
{
	static const char *const lines[] = { "mem=64M", "mem=8G numa=2 movablecore=1G",
		                             "mem=1G page_shift=14 thp=0", "mem=512M max_order=0" };
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		struct pa_pool *pool = test_boot(lines[i]);
		struct pa_page *p = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0);
		for (int k = 0; k < PA_REPORT_COUNT; k++)
			check_json(pool, (enum pa_report_kind)k);
		if (p)
			pa_free_pages(pool, p, 0);
		pa_shutdown(pool);
	}
}

/* --- buddyinfo ------------------------------------------------------------------ */

TEST(stats_buddyinfo_exact_format_fresh_pool)
{
	struct pa_pool *pool = test_boot("mem=64M min_free_kbytes=0 max_order=10");
	uint64_t counts[11] = { 0 };
	counts[10] = 16; /* 64M / 4M */
	char expect[512] = "";
	buddy_line(expect, sizeof expect, 0, "DMA32", counts, 10);
	char *got = report_alloc(pool, PA_REPORT_BUDDYINFO, 0);
	CHECK_MSG(!strcmp(got, expect), "buddyinfo:\n%s\nexpected:\n%s", got, expect);
	free(got);
	pa_shutdown(pool);
}

TEST(stats_buddyinfo_lists_zones_and_nodes)
{
	/* Two nodes: node 0 is DMA32 [0,4G), node 1 Normal [4G,8G), 1024 4M blocks each. */
	struct pa_pool *pool = test_boot("mem=8G numa=2 max_order=10");
	uint64_t c1024[11] = { 0 }, c512[11] = { 0 };
	c1024[10] = 1024;
	c512[10] = 512;
	char expect[2048] = "";
	buddy_line(expect, sizeof expect, 0, "DMA32", c1024, 10);
	buddy_line(expect, sizeof expect, 1, "Normal", c1024, 10);
	char *got = report_alloc(pool, PA_REPORT_BUDDYINFO, 0);
	CHECK_MSG(!strcmp(got, expect), "buddyinfo:\n%s\nexpected:\n%s", got, expect);
	free(got);
	pa_shutdown(pool);
	/* One node, three zones, lowest first: DMA32 [0,4G), Normal [4G,6G), Movable [6G,8G). */
	pool = test_boot("mem=8G movablecore=2G max_order=10");
	expect[0] = '\0';
	buddy_line(expect, sizeof expect, 0, "DMA32", c1024, 10);
	buddy_line(expect, sizeof expect, 0, "Normal", c512, 10);
	buddy_line(expect, sizeof expect, 0, "Movable", c512, 10);
	got = report_alloc(pool, PA_REPORT_BUDDYINFO, 0);
	CHECK_MSG(!strcmp(got, expect), "buddyinfo:\n%s\nexpected:\n%s", got, expect);
	free(got);
	pa_shutdown(pool);
}

TEST(stats_buddyinfo_follows_allocations)
{
	/* pcp_orders=none: the exact split of one allocation, with no per-CPU refill batch. */
	struct pa_pool *pool = test_boot("mem=16M min_free_kbytes=0 max_order=10 pcp_orders=none");
	struct pa_page *p = pa_alloc_pages(pool, PA_GFP_KERNEL, 0);
	REQUIRE(p);
	/* One 4M block split down to order 0: one free block of each order 0..9, three of order 10. */
	uint64_t counts[11];
	for (int o = 0; o < 10; o++)
		counts[o] = 1;
	counts[10] = 3;
	char expect[512] = "";
	buddy_line(expect, sizeof expect, 0, "DMA32", counts, 10);
	char *got = report_alloc(pool, PA_REPORT_BUDDYINFO, 0);
	CHECK_MSG(!strcmp(got, expect), "buddyinfo:\n%s\nexpected:\n%s", got, expect);
	free(got);
	pa_free_pages(pool, p, 0);
	counts[10] = 4;
	for (int o = 0; o < 10; o++)
		counts[o] = 0;
	expect[0] = '\0';
	buddy_line(expect, sizeof expect, 0, "DMA32", counts, 10);
	got = report_alloc(pool, PA_REPORT_BUDDYINFO, 0);
	CHECK_MSG(!strcmp(got, expect), "buddyinfo:\n%s\nexpected:\n%s", got, expect);
	free(got);
	pa_shutdown(pool);
}

TEST(stats_buddyinfo_json_matches_text)
{
	struct pa_pool *pool = test_boot("mem=8G max_order=12");
	struct pa_page *p = pa_alloc_pages(pool, PA_GFP_KERNEL, 3);
	REQUIRE(p);
	char *json = report_alloc(pool, PA_REPORT_BUDDYINFO, PA_REPORT_JSON);
	char *text = report_alloc(pool, PA_REPORT_BUDDYINFO, 0);
	char err[256];
	struct jv *root = jparse(json, err, sizeof err);
	CHECK_MSG(root, "buddyinfo JSON: %s", err);
	struct jv *zones = jget(root, "zones");
	REQUIRE(zones && zones->type == J_ARR);
	CHECK_EQ_U64(zones->n, 2);
	char rebuilt[2048] = "";
	for (size_t i = 0; i < zones->n; i++) {
		struct jv *z = jat(zones, i);
		struct jv *free_ = jget(z, "free");
		REQUIRE(free_ && free_->type == J_ARR);
		CHECK_EQ_U64(free_->n, 13); /* orders 0..12 */
		uint64_t counts[13] = { 0 };
		for (size_t o = 0; o < free_->n && o < 13; o++)
			counts[o] = (uint64_t)jat(free_, o)->num;
		buddy_line(rebuilt, sizeof rebuilt, (int)jint(z, "node", -1), jstr(z, "zone"),
		           counts, 12);
	}
	CHECK_MSG(!strcmp(rebuilt, text), "buddyinfo JSON gives\n%s\ntext is\n%s", rebuilt, text);
	jfree(root);
	free(json);
	free(text);
	pa_free_pages(pool, p, 3);
	pa_shutdown(pool);
}

/* --- pagetypeinfo -------------------------------------------------------------- */

TEST(stats_pagetypeinfo_format)
{
	struct pa_pool *pool = test_boot("mem=64M min_free_kbytes=0");
	char *t = report_alloc(pool, PA_REPORT_PAGETYPEINFO, 0);
	CHECK_MSG(!strncmp(t, "Page block order: 9\nPages per block:  512\n\n", 42),
	          "pagetypeinfo starts:\n%.120s", t);
	char hdr[256] = "";
	append(hdr, sizeof hdr, "%-43s ", "Free pages count per migrate type at order");
	for (int o = 0; o <= 10; o++)
		append(hdr, sizeof hdr, "%6d ", o);
	append(hdr, sizeof hdr, "\n");
	CHECK_MSG(strstr(t, hdr) != NULL, "no free pages header line \"%s\" in\n%s", hdr, t);
	/* Fresh: every block is Movable. */
	char row[256] = "";
	append(row, sizeof row, "Node %4d, zone %8s, type %12s ", 0, "DMA32", "Movable");
	for (int o = 0; o < 10; o++)
		append(row, sizeof row, "%6lu ", 0ul);
	append(row, sizeof row, "%6lu \n", 16ul);
	CHECK_MSG(strstr(t, row) != NULL, "no row \"%s\" in\n%s", row, t);
	char unmov[256] = "";
	append(unmov, sizeof unmov, "Node %4d, zone %8s, type %12s ", 0, "DMA32", "Unmovable");
	CHECK(strstr(t, unmov) != NULL);
	/* The block count table. */
	char bhdr[256] = "";
	append(bhdr, sizeof bhdr, "\n%-23s", "Number of blocks type ");
	static const char *const types[] = { "Unmovable",  "Movable", "Reclaimable",
		                             "HighAtomic", "CMA",     "Isolate" };
	for (int i = 0; i < 6; i++)
		append(bhdr, sizeof bhdr, "%12s ", types[i]);
	append(bhdr, sizeof bhdr, "\n");
	CHECK_MSG(strstr(t, bhdr) != NULL, "no block count header \"%s\" in\n%s", bhdr, t);
	char brow[256] = "";
	append(brow, sizeof brow, "Node %d, zone %8s ", 0, "DMA32");
	uint64_t nblocks[6] = { 0, 32, 0, 0, 0, 0 };
	for (int i = 0; i < 6; i++)
		append(brow, sizeof brow, "%12lu ", (unsigned long)nblocks[i]);
	append(brow, sizeof brow, "\n");
	CHECK_MSG(strstr(t, brow) != NULL, "no block count row \"%s\" in\n%s", brow, t);
	free(t);
	pa_shutdown(pool);
}

TEST(stats_pagetypeinfo_counts_unmovable_blocks)
{
	struct pa_pool *pool = test_boot("mem=64M min_free_kbytes=0");
	struct pa_page *p = pa_alloc_pages(pool, PA_GFP_KERNEL, 0);
	REQUIRE(p);
	char *t = report_alloc(pool, PA_REPORT_PAGETYPEINFO, 0);
	char *row = strstr(t, "Node 0, zone    DMA32 ");
	/* Skip the free-page rows ("Node    0, ..."): the block row uses "Node %d". */
	REQUIRE(row);
	unsigned long n[6];
	int got = sscanf(row + strlen("Node 0, zone    DMA32 "), "%lu %lu %lu %lu %lu %lu", &n[0],
	                 &n[1], &n[2], &n[3], &n[4], &n[5]);
	CHECK_EQ_U64(got, 6);
	/* An unmovable request claims a whole pageblock (or two: a 4M block holds two). */
	CHECK_MSG(n[0] >= 1 && n[0] <= 2, "unmovable blocks %lu", n[0]);
	CHECK_EQ_U64(n[0] + n[1] + n[2] + n[3] + n[4] + n[5], 32);
	free(t);
	pa_free_pages(pool, p, 0);
	VALIDATE(pool);
	pa_shutdown(pool);
}

TEST(stats_pagetypeinfo_caps_counts_at_100000)
{
	/* max_order=0: 131072 free order-0 blocks, printed as ">100000". */
	struct pa_pool *pool = test_boot("mem=512M max_order=0");
	char *t = report_alloc(pool, PA_REPORT_PAGETYPEINFO, 0);
	char row[256] = "";
	append(row, sizeof row, "Node %4d, zone %8s, type %12s >%6lu \n", 0, "DMA32", "Movable",
	       100000ul);
	CHECK_MSG(strstr(t, row) != NULL, "no row \"%s\" in\n%.1500s", row, t);
	CHECK(strstr(t, "Page block order: 0\nPages per block:  1\n") == t);
	free(t);
	pa_shutdown(pool);
}

TEST(stats_pagetypeinfo_follows_pageblock_ceiling)
{
	struct pa_pool *pool = test_boot("mem=1G page_shift=14 pageblock_order_ceil=7");
	char *t = report_alloc(pool, PA_REPORT_PAGETYPEINFO, 0);
	CHECK(strstr(t, "Page block order: 7\nPages per block:  128\n") == t);
	free(t);
	pa_shutdown(pool);
}

/* --- vmstat --------------------------------------------------------------------- */

TEST(stats_vmstat_lines_are_name_value)
{
	struct pa_pool *pool = test_boot("mem=64M");
	char *t = report_alloc(pool, PA_REPORT_VMSTAT, 0);
	int lines = 0;
	for (const char *p = t; *p;) {
		const char *q = p;
		while (*q == '_' || islower((unsigned char)*q) || isdigit((unsigned char)*q))
			q++;
		CHECK_MSG(q > p && *q == ' ', "vmstat line \"%.60s\" is not \"name value\"", p);
		if (*q != ' ')
			break;
		q++;
		const char *digits = q;
		while (isdigit((unsigned char)*q))
			q++;
		CHECK_MSG(q > digits && *q == '\n', "vmstat line \"%.60s\" is not \"name value\"",
		          p);
		if (*q != '\n')
			break;
		p = q + 1;
		lines++;
	}
	CHECK(lines >= 4);
	static const char *const names[] = { "pgfree", "bad_page", "pgalloc_dma32",
		                             "nr_free_pages" };
	for (size_t i = 0; i < 4; i++)
		CHECK_MSG(vmstat_text_value(t, names[i]) >= 0, "vmstat has no \"%s\" line",
		          names[i]);
	free(t);
	uint64_t v;
	CHECK_EQ_U64(pa_vmstat_read(pool, "no_such_counter", &v), -ENOENT);
	CHECK_EQ_U64(pa_vmstat_read(pool, "", &v), -ENOENT);
	pa_shutdown(pool);
}

TEST(stats_vmstat_counts_pages_allocated_and_freed)
{
	struct pa_pool *pool = test_boot("mem=64M min_free_kbytes=0");
	uint64_t managed = (64 * MiB) >> 12;
	CHECK_EQ_U64(vmstat(pool, "nr_free_pages"), managed);
	uint64_t a0 = vmstat(pool, "pgalloc_dma32"), f0 = vmstat(pool, "pgfree");
	struct pa_page *p3 = pa_alloc_pages(pool, PA_GFP_KERNEL, 3);
	struct pa_page *p0[5];
	for (int i = 0; i < 5; i++)
		p0[i] = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0);
	REQUIRE(p3 && p0[4]);
	CHECK_EQ_U64(vmstat(pool, "pgalloc_dma32") - a0, 8 + 5);
	/* nr_free_pages counts the buddy only: frames on the per-CPU lists are out of it (as
	 * Linux's NR_FREE_PAGES), and pa_get_usage counts them as reserved. */
	struct pa_usage u;
	pa_get_usage(pool, &u);
	CHECK_EQ_U64(u.allocated, 13);
	CHECK_EQ_U64(vmstat(pool, "nr_free_pages"), u.free);
	CHECK_EQ_U64(vmstat(pool, "nr_free_pages") + u.reserved, managed - 13);
	pa_free_pages(pool, p3, 3);
	for (int i = 0; i < 5; i++)
		pa_free_pages(pool, p0[i], 0);
	CHECK_EQ_U64(vmstat(pool, "pgfree") - f0, 13);
	pa_drain_all(pool); /* the frees wait on the per-CPU lists until drained */
	CHECK_EQ_U64(vmstat(pool, "nr_free_pages"), managed);
	/* The text agrees with pa_vmstat_read. */
	char *t = report_alloc(pool, PA_REPORT_VMSTAT, 0);
	static const char *const names[] = { "pgfree", "bad_page", "pgalloc_dma32",
		                             "nr_free_pages" };
	for (size_t i = 0; i < 4; i++)
		CHECK_EQ_U64(vmstat_text_value(t, names[i]), vmstat(pool, names[i]));
	free(t);
	pa_shutdown(pool);
}

TEST(stats_vmstat_counts_per_zone)
{
	struct pa_pool *pool = test_boot("mem=8G movablecore=1G");
	uint64_t d0 = vmstat(pool, "pgalloc_dma32"), n0 = vmstat(pool, "pgalloc_normal");
	uint64_t m0 = vmstat(pool, "pgalloc_movable");
	struct pa_page *d = pa_alloc_pages(pool, PA_GFP_DMA32, 2);
	struct pa_page *n = pa_alloc_pages(pool, PA_GFP_KERNEL, 1);
	struct pa_page *m = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0);
	REQUIRE(d && n && m);
	CHECK_EQ_U64(vmstat(pool, "pgalloc_dma32") - d0, 4);
	CHECK_EQ_U64(vmstat(pool, "pgalloc_normal") - n0, 2);
	CHECK_EQ_U64(vmstat(pool, "pgalloc_movable") - m0, 1);
	pa_free_pages(pool, d, 2);
	pa_free_pages(pool, n, 1);
	pa_free_pages(pool, m, 0);
	pa_shutdown(pool);
}

TEST(stats_vmstat_counts_failures_per_order)
{
	struct pa_pool *pool = test_boot("mem=16M min_free_kbytes=0 max_order=10");
	struct pa_page *p[4];
	for (int i = 0; i < 4; i++) {
		p[i] = pa_alloc_pages(pool, PA_GFP_KERNEL, 10);
		REQUIRE(p[i]);
	}
	uint64_t f0 = vmstat(pool, "pgalloc_fail");
	CHECK(pa_alloc_pages(pool, PA_GFP_KERNEL | PA_GFP_NOWARN, 10) == NULL);
	CHECK(pa_alloc_pages(pool, PA_GFP_KERNEL | PA_GFP_NOWARN, 0) == NULL);
	CHECK(pa_alloc_pages(pool, PA_GFP_KERNEL | PA_GFP_NOWARN, 0) == NULL);
	CHECK_EQ_U64(vmstat(pool, "pgalloc_fail") - f0, 3);
	CHECK_EQ_U64(vmstat(pool, "pgalloc_fail_order_10"), 1);
	CHECK_EQ_U64(vmstat(pool, "pgalloc_fail_order_0"), 2);
	CHECK_EQ_U64(vmstat(pool, "pgalloc_order_10"), 4);
	for (int i = 0; i < 4; i++)
		pa_free_pages(pool, p[i], 10);
	VALIDATE(pool);
	pa_shutdown(pool);
}

/* A failed allocation is reported through the platform unless PA_GFP_NOWARN. */
TEST(stats_allocation_failure_is_reported_unless_nowarn)
{
	struct report_capture cap = { 0 };
	struct pa_platform plat = { .ctx = &cap, .report = capture_report };
	struct pa_pool *pool = test_boot_on("mem=4M min_free_kbytes=0 max_order=10", &plat);
	struct pa_page *p = pa_alloc_pages(pool, PA_GFP_KERNEL, 10);
	REQUIRE(p);
	cap.lines = 0;
	CHECK(pa_alloc_pages(pool, PA_GFP_KERNEL | PA_GFP_NOWARN, 0) == NULL);
	CHECK_EQ_U64(cap.lines, 0);
	CHECK(pa_alloc_pages(pool, PA_GFP_KERNEL, 0) == NULL);
	CHECK_EQ_U64(cap.lines, 1);
	pa_free_pages(pool, p, 10);
	pa_shutdown(pool);
}

TEST(stats_vmstat_json_parses_and_agrees)
{
	struct pa_pool *pool = test_boot("mem=64M");
	struct pa_page *p = pa_alloc_pages(pool, PA_GFP_KERNEL, 2);
	REQUIRE(p);
	char *json = report_alloc(pool, PA_REPORT_VMSTAT, PA_REPORT_JSON);
	char err[256];
	struct jv *root = jparse(json, err, sizeof err);
	CHECK_MSG(root, "vmstat JSON: %s", err);
	if (root) {
		/* Either a flat object or one with the counters nested: find nr_free_pages. */
		struct jv *v = jget(root, "nr_free_pages");
		for (size_t i = 0; !v && root->type == J_OBJ && i < root->n; i++)
			v = jget(root->items[i], "nr_free_pages");
		CHECK_MSG(v && v->type == J_NUM, "vmstat JSON has no nr_free_pages number");
		if (v && v->type == J_NUM)
			CHECK_EQ_U64((uint64_t)v->num, vmstat(pool, "nr_free_pages"));
	}
	jfree(root);
	free(json);
	pa_free_pages(pool, p, 2);
	pa_shutdown(pool);
}

/* --- unusable and extfrag indexes ---------------------------------------------- */

/*
 * 16M, all allocated, then every even pfn freed: 2048 free order-0 blocks, no pairs.
 * pcp_orders=none: exact capacity, and the freed frames go straight to the buddy.
 */
static struct pa_pool *fragmented_pool(struct pa_page ***kept, uint64_t *nr_kept)
{
	struct pa_pool *pool = test_boot("mem=16M min_free_kbytes=0 max_order=10 pcp_orders=none");
	uint64_t total = (16 * MiB) >> 12, n;
	struct pa_page **all = alloc_order0_all(pool, PA_GFP_NOWARN | PA_GFP_NOCOMPACT, total, &n);
	REQUIRE(n == total);
	uint64_t k = 0;
	for (uint64_t i = 0; i < n; i++) {
		if (pa_page_to_pfn(pool, all[i]) % 2 == 0)
			pa_free_pages(pool, all[i], 0);
		else
			all[k++] = all[i];
	}
	*kept = all;
	*nr_kept = k;
	return pool;
}

TEST(stats_unusable_index_format_and_values)
{
	struct pa_pool *pool = test_boot("mem=16M min_free_kbytes=0 max_order=10");
	char expect[512] = "";
	append(expect, sizeof expect, "Node %d, zone %8s ", 0, "DMA32");
	for (int o = 0; o <= 10; o++)
		append(expect, sizeof expect, "%d.%03d ", 0, 0);
	append(expect, sizeof expect, "\n");
	char *t = report_alloc(pool, PA_REPORT_UNUSABLE_INDEX, 0);
	CHECK_MSG(!strcmp(t, expect), "unusable_index:\n%s\nexpected:\n%s", t, expect);
	free(t);
	pa_shutdown(pool);

	struct pa_page **kept;
	uint64_t nk;
	pool = fragmented_pool(&kept, &nk);
	expect[0] = '\0';
	append(expect, sizeof expect, "Node %d, zone %8s ", 0, "DMA32");
	append(expect, sizeof expect, "%d.%03d ", 0, 0);
	for (int o = 1; o <= 10; o++)
		append(expect, sizeof expect, "%d.%03d ", 1, 0);
	append(expect, sizeof expect, "\n");
	t = report_alloc(pool, PA_REPORT_UNUSABLE_INDEX, 0);
	CHECK_MSG(!strcmp(t, expect), "unusable_index:\n%s\nexpected:\n%s", t, expect);
	free(t);
	free_order0_all(pool, kept, nk);
	VALIDATE(pool);
	pa_shutdown(pool);
}

/* Linux's __fragmentation_index(). */
static int frag_index(unsigned order, uint64_t free_pages, uint64_t blocks_total,
                      uint64_t blocks_suitable)
{
	uint64_t requested = 1ull << order;
	if (!blocks_total)
		return 0;
	if (blocks_suitable)
		return -1000;
	return (int)(1000 - (1000 + free_pages * 1000 / requested) / blocks_total);
}

TEST(stats_extfrag_index_format_and_values)
{
	struct pa_pool *pool = test_boot("mem=16M min_free_kbytes=0 max_order=10");
	char expect[512] = "";
	append(expect, sizeof expect, "Node %d, zone %8s ", 0, "DMA32");
	for (int o = 0; o <= 10; o++)
		append(expect, sizeof expect, "%2d.%03d ", -1, 0);
	append(expect, sizeof expect, "\n");
	char *t = report_alloc(pool, PA_REPORT_EXTFRAG_INDEX, 0);
	CHECK_MSG(!strcmp(t, expect), "extfrag_index:\n%s\nexpected:\n%s", t, expect);
	free(t);
	pa_shutdown(pool);

	struct pa_page **kept;
	uint64_t nk;
	pool = fragmented_pool(&kept, &nk);
	expect[0] = '\0';
	append(expect, sizeof expect, "Node %d, zone %8s ", 0, "DMA32");
	for (unsigned o = 0; o <= 10; o++) {
		int idx = frag_index(o, 2048, 2048, o == 0 ? 2048 : 0);
		append(expect, sizeof expect, "%2d.%03d ", idx / 1000,
		       idx % 1000 < 0 ? -(idx % 1000) : idx % 1000);
	}
	append(expect, sizeof expect, "\n");
	t = report_alloc(pool, PA_REPORT_EXTFRAG_INDEX, 0);
	CHECK_MSG(!strcmp(t, expect), "extfrag_index:\n%s\nexpected:\n%s", t, expect);
	free(t);
	free_order0_all(pool, kept, nk);
	pa_shutdown(pool);
}

/* --- usage and validate ---------------------------------------------------------- */

TEST(stats_usage_balances_through_allocations)
{
	struct pa_pool *pool = test_boot("mem=128M min_free_kbytes=0");
	uint64_t seed = test_seed();
	fprintf(stderr, "    seed %" PRIu64 " (PA_TEST_SEED=%" PRIu64 " to repeat)\n", seed, seed);
	struct pa_page *held[256] = { 0 };
	unsigned order_of[256] = { 0 };
	uint64_t allocated = 0;
	uint64_t x = seed | 1;
	int rounds = (int)(4000 * test_scale());
	for (int i = 0; i < rounds; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		unsigned slot = (unsigned)(x % 256);
		if (held[slot]) {
			pa_free_pages(pool, held[slot], order_of[slot]);
			allocated -= 1ull << order_of[slot];
			held[slot] = NULL;
		} else {
			unsigned order = (unsigned)((x >> 20) % 8);
			pa_gfp_t gfp = (x >> 30) & 1 ? PA_GFP_MOVABLE : PA_GFP_KERNEL;
			held[slot] = pa_alloc_pages(pool, gfp | PA_GFP_NOWARN, order);
			if (held[slot]) {
				order_of[slot] = order;
				allocated += 1ull << order;
			}
		}
		if (i % 500 == 0) {
			struct pa_usage u;
			pa_get_usage(pool, &u);
			CHECK_EQ_U64(u.managed, (128 * MiB) >> 12);
			CHECK_EQ_U64(u.free + u.allocated + u.reserved, u.managed);
			CHECK_EQ_U64(u.allocated, allocated);
			VALIDATE(pool);
		}
	}
	for (unsigned s = 0; s < 256; s++)
		if (held[s])
			pa_free_pages(pool, held[s], order_of[s]);
	struct pa_usage u;
	pa_get_usage(pool, &u);
	CHECK_EQ_U64(u.allocated, 0);
	CHECK_EQ_U64(u.free + u.reserved, u.managed);
	VALIDATE(pool);
	pa_shutdown(pool);
}

/* pa_validate recomputes from the raw state: a lie in any counter or descriptor is caught. */
static void expect_invalid(struct pa_pool *pool, const char *what)
{
	char err[512] = "";
	int rc = pa_validate(pool, err, sizeof err);
	CHECK_MSG(rc == -EFAULT, "pa_validate missed %s (rc %d)", what, rc);
	CHECK_MSG(err[0] != '\0', "pa_validate found %s but said nothing", what);
	fprintf(stderr, "    %s: %s\n", what, err);
}

TEST(stats_validate_detects_corruption)
{
	struct pa_pool *pool = test_boot("mem=64M min_free_kbytes=0");
	struct pa_page *held = pa_alloc_pages(pool, PA_GFP_KERNEL, 0);
	REQUIRE(held);
	VALIDATE(pool);
	struct pa_zone *z = &pool->zones[0];

	z->nr_free_mt[10 * PA_MT_COUNT + PA_MT_MOVABLE]++;
	expect_invalid(pool, "a free count per order off by one");
	z->nr_free_mt[10 * PA_MT_COUNT + PA_MT_MOVABLE]--;
	VALIDATE(pool);

	z->free_pages += 1;
	expect_invalid(pool, "the zone's free frame count off by one");
	z->free_pages -= 1;
	VALIDATE(pool);

	/* pfn 0 heads a free max-order block of a fresh pool (or the block held came from it). */
	pa_pfn_t hp = pa_page_to_pfn(pool, held);
	pa_pfn_t victim = hp >= 1024 ? 0 : 1024;
	struct pa_page *v = pfn_page(pool, victim);
	REQUIRE(v->state == PS_FREE && v->order == 10);
	v->state = PS_ALLOC;
	expect_invalid(pool, "a free block head that says allocated");
	v->state = PS_FREE;
	VALIDATE(pool);

	/* A body frame of a free block that claims to head a block of its own. */
	struct pa_page *body = pfn_page(pool, victim + 3);
	uint8_t saved_state = body->state, saved_order = body->order;
	body->state = PS_ALLOC;
	body->order = 0;
	expect_invalid(pool, "an allocated frame inside a free block");
	body->state = saved_state;
	body->order = saved_order;
	VALIDATE(pool);

	/* The pageblock under a Movable free block retyped behind the lists' back. */
	unsigned mt = pageblock_mt(pool, victim);
	pool->pb_bits[victim >> pool->cfg.pageblock_order] ^= (uint8_t)(mt ^ PA_MT_RECLAIMABLE);
	expect_invalid(pool, "a free block in a pageblock of another type");
	pool->pb_bits[victim >> pool->cfg.pageblock_order] ^= (uint8_t)(mt ^ PA_MT_RECLAIMABLE);
	VALIDATE(pool);

	/* The allocated block's head forgets it was allocated. */
	struct pa_page *h = pfn_page(pool, hp);
	h->state = PS_BODY;
	expect_invalid(pool, "an allocated frame in no state at all");
	h->state = PS_ALLOC;
	VALIDATE(pool);

	pa_free_pages(pool, held, 0);
	VALIDATE(pool);
	pa_shutdown(pool);
}

/* --- ctl ----------------------------------------------------------------------------- */

static uint64_t ctl_u64(struct pa_pool *pool, const char *path)
{
	char buf[64] = "";
	int rc = pa_ctl_read(pool, path, buf, sizeof buf);
	CHECK_MSG(rc > 0, "pa_ctl_read(\"%s\") = %d", path, rc);
	CHECK_EQ_U64(rc, strlen(buf));
	return strtoull(buf, NULL, 10);
}

TEST(stats_ctl_watermark_scale_factor_read_write)
{
	struct pa_pool *pool = test_boot("mem=1G");
	CHECK_EQ_U64(ctl_u64(pool, "watermark_scale_factor"), 10);
	CHECK_EQ_U64(pa_ctl_write(pool, "watermark_scale_factor", "250"), 0);
	CHECK_EQ_U64(ctl_u64(pool, "watermark_scale_factor"), 250);
	CHECK_EQ_U64(pa_ctl_write(pool, "watermark_scale_factor", "0"), 0);
	CHECK_EQ_U64(ctl_u64(pool, "watermark_scale_factor"), 0);
	CHECK_EQ_U64(pa_ctl_write(pool, "watermark_scale_factor", "3000"), 0);
	CHECK_EQ_U64(ctl_u64(pool, "watermark_scale_factor"), 3000);
	pa_shutdown(pool);
}

TEST(stats_ctl_rejects_bad_values_and_changes_nothing)
{
	struct pa_pool *pool = test_boot("mem=1G");
	CHECK_EQ_U64(pa_ctl_write(pool, "watermark_scale_factor", "77"), 0);
	char *info0 = report_alloc(pool, PA_REPORT_INFO, PA_REPORT_JSON);
	static const char *const bad[] = { "abc", "", "-1", "3001", "12x", "99999999999999999999",
		                           "1.5" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int rc = pa_ctl_write(pool, "watermark_scale_factor", bad[i]);
		CHECK_MSG(rc == -EINVAL,
		          "pa_ctl_write(watermark_scale_factor, \"%s\") = %d, expected -EINVAL",
		          bad[i], rc);
		CHECK_EQ_U64(ctl_u64(pool, "watermark_scale_factor"), 77);
	}
	char *info1 = report_alloc(pool, PA_REPORT_INFO, PA_REPORT_JSON);
	CHECK_MSG(!strcmp(info0, info1), "a refused ctl write changed the info report");
	free(info0);
	free(info1);
	pa_shutdown(pool);
}

TEST(stats_ctl_unknown_path_is_enoent)
{
	struct pa_pool *pool = test_boot("mem=64M");
	char buf[64];
	CHECK_EQ_U64(pa_ctl_read(pool, "no/such/knob", buf, sizeof buf), -ENOENT);
	CHECK_EQ_U64(pa_ctl_write(pool, "no/such/knob", "1"), -ENOENT);
	CHECK_EQ_U64(pa_ctl_read(pool, "", buf, sizeof buf), -ENOENT);
	CHECK_EQ_U64(pa_ctl_read(pool, "watermark_scale_factor/x", buf, sizeof buf), -ENOENT);
	CHECK_EQ_U64(pa_ctl_write(pool, "watermark_scale_factorx", "1"), -ENOENT);
	CHECK_EQ_U64(pa_ctl_write(pool, "", "1"), -ENOENT);
	pa_shutdown(pool);
}

TEST(stats_ctl_help_lists_the_tree)
{
	struct pa_pool *pool = test_boot("mem=64M");
	char buf[8192];
	int n = pa_ctl_read(pool, "help", buf, sizeof buf);
	REQUIRE(n > 0 && (size_t)n < sizeof buf);
	CHECK(strstr(buf, "watermark_scale_factor") != NULL);
	pa_shutdown(pool);
}

TEST(stats_ctl_read_only_knobs_and_reports)
{
	struct pa_pool *pool = test_boot("mem=64M max_order=8");
	CHECK_EQ_U64(ctl_u64(pool, "max_order"), 8);
	CHECK_EQ_U64(ctl_u64(pool, "pageblock_order"), 8);
	CHECK_EQ_U64(ctl_u64(pool, "page_size"), 4096);
	CHECK_EQ_U64(pa_ctl_write(pool, "pageblock_order", "9"), -EPERM);
	CHECK_EQ_U64(pa_ctl_write(pool, "max_order", "9"), -EINVAL); /* above the booted one */
	CHECK_EQ_U64(ctl_u64(pool, "max_order"), 8);
	/* A report path reads the same text as pa_report, with the full length returned. */
	char *want = report_alloc(pool, PA_REPORT_BUDDYINFO, 0);
	char got[1024];
	int n = pa_ctl_read(pool, "buddyinfo", got, sizeof got);
	CHECK_EQ_U64(n, strlen(want));
	CHECK(!strcmp(got, want));
	char small[8];
	CHECK_EQ_U64(pa_ctl_read(pool, "buddyinfo", small, sizeof small), strlen(want));
	CHECK(small[7] == '\0' && !strncmp(small, want, 7));
	free(want);
	pa_shutdown(pool);
}

TEST(stats_ctl_min_free_kbytes_recomputes_watermarks)
{
	struct pa_pool *pool = test_boot("mem=1G");
	CHECK_EQ_U64(ctl_u64(pool, "min_free_kbytes"), 4096);
	CHECK_EQ_U64(pa_ctl_write(pool, "min_free_kbytes", "8192"), 0);
	CHECK_EQ_U64(ctl_u64(pool, "min_free_kbytes"), 8192);
	char *json = report_alloc(pool, PA_REPORT_INFO, PA_REPORT_JSON);
	struct jv *root = jparse(json, NULL, 0);
	REQUIRE(root);
	struct jv *z = jat(jget(jat(jget(root, "nodes"), 0), "zones"), 0);
	CHECK_EQ_U64(jint(z, "watermark_min", -1), 2048);
	CHECK_EQ_U64(jint(z, "watermark_low", -1), 2048 + 512);
	CHECK_EQ_U64(jint(z, "watermark_high", -1), 2048 + 1024);
	jfree(root);
	free(json);
	pa_shutdown(pool);
}

TEST(stats_info_json_has_the_documented_keys)
{
	struct pa_pool *pool = test_boot("mem=8G numa=2");
	char *json = report_alloc(pool, PA_REPORT_INFO, PA_REPORT_JSON);
	char err[256];
	struct jv *root = jparse(json, err, sizeof err);
	CHECK_MSG(root, "info JSON: %s", err);
	REQUIRE(root);
	static const char *const keys[] = { "page_size",
		                            "page_shift",
		                            "max_order",
		                            "huge_order",
		                            "pageblock_order",
		                            "pageblock_order_ceil",
		                            "cma_alignment_bytes",
		                            "metadata_bytes_per_frame",
		                            "nr_cpus",
		                            "nodes" };
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		CHECK_MSG(jget(root, keys[i]) != NULL, "info JSON lacks \"%s\"", keys[i]);
	CHECK_EQ_U64(jint(root, "page_size", 0), 4096);
	CHECK_EQ_U64(jint(root, "huge_order", 0), 9);
	CHECK_EQ_U64(jint(root, "cma_alignment_bytes", 0), 2 * MiB);
	CHECK(jint(root, "metadata_bytes_per_frame", 99) <= 16);
	struct jv *nodes = jget(root, "nodes");
	REQUIRE(nodes && nodes->type == J_ARR && nodes->n == 2);
	uint64_t managed = 0;
	for (size_t i = 0; i < nodes->n; i++) {
		struct jv *zones = jget(jat(nodes, i), "zones");
		REQUIRE(zones && zones->type == J_ARR);
		for (size_t j = 0; j < zones->n; j++) {
			struct jv *z = jat(zones, j);
			static const char *const zkeys[] = { "name",          "start_pfn",
				                             "end_pfn",       "managed_pages",
				                             "watermark_min", "watermark_low",
				                             "watermark_high" };
			for (size_t k = 0; k < 7; k++)
				CHECK_MSG(jget(z, zkeys[k]) != NULL, "zone lacks \"%s\"", zkeys[k]);
			managed += (uint64_t)jint(z, "managed_pages", 0);
		}
	}
	struct pa_usage u;
	pa_get_usage(pool, &u);
	CHECK_EQ_U64(managed, u.managed);
	jfree(root);
	free(json);
	pa_shutdown(pool);

	pool = test_boot("mem=1G thp=0");
	json = report_alloc(pool, PA_REPORT_INFO, PA_REPORT_JSON);
	root = jparse(json, err, sizeof err);
	REQUIRE(root);
	struct jv *h = jget(root, "huge_order");
	CHECK_MSG(h && h->type == J_NULL, "huge_order is not null with thp=0");
	jfree(root);
	free(json);
	pa_shutdown(pool);
}

/* --- Layouts held against Linux 6.1's own files (tests/linux-6.1/) ---------------- */

/* Lines of a text, split in place. */
struct lines {
	char *text;
	char **line;
	size_t n;
};

static void split_lines(char *text, struct lines *l)
{
	size_t cap = 1;
	for (const char *c = text; *c; c++)
		cap += *c == '\n';
	l->text = text;
	l->line = calloc(cap, sizeof *l->line);
	REQUIRE(l->line);
	l->n = 0;
	for (char *s = text; *s;) {
		char *nl = strchr(s, '\n');
		l->line[l->n++] = s;
		if (!nl)
			break;
		*nl = '\0';
		s = nl + 1;
	}
}

static void read_fixture(const char *name, struct lines *l)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", PA_LINUX_FIXTURES, name);
	FILE *f = fopen(path, "r");
	CHECK_MSG(f != NULL, "cannot open the Linux 6.1 file %s", path);
	REQUIRE(f);
	char *text = calloc(1, 1 << 16);
	REQUIRE(text);
	size_t n = fread(text, 1, (1 << 16) - 1, f);
	fclose(f);
	REQUIRE(n > 0);
	split_lines(text, l);
}

static void free_lines(struct lines *l)
{
	free(l->text);
	free(l->line);
}

/*
 * The shape of a line: every run of digits becomes '#' (6.1 prints these
 * numbers with %lu, no width), and a protection list "(#, #, ...)" becomes
 * "(#...)", since it has one entry per zone type of the layout.
 */
static void line_shape(const char *line, char *out, size_t len)
{
	size_t o = 0;
	for (const char *c = line; *c && o + 1 < len; c++) {
		if (isdigit((unsigned char)*c)) {
			while (isdigit((unsigned char)c[1]))
				c++;
		}
		out[o++] = isdigit((unsigned char)*c) ? '#' : *c;
	}
	out[o] = '\0';
	char *p = strstr(out, "protection: (");
	if (p)
		snprintf(p, len - (size_t)(p - out), "protection: (#...)");
}

/* The shape of every line, in a second array that owns its strings. */
static char **shapes_of(const struct lines *l)
{
	char **s = calloc(l->n + 1, sizeof *s);
	REQUIRE(s);
	for (size_t i = 0; i < l->n; i++) {
		s[i] = malloc(256);
		REQUIRE(s[i]);
		line_shape(l->line[i], s[i], 256);
	}
	return s;
}

static void free_shapes(char **s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(s[i]);
	free(s);
}

static bool shape_in(char *const *s, size_t from, size_t to, const char *shape)
{
	for (size_t i = from; i < to; i++)
		if (!strcmp(s[i], shape))
			return true;
	return false;
}

/* The zone block that starts at a "Node N, zone NAME" line: [start, end). */
static size_t zone_block_end(char *const *lines, size_t n, size_t start)
{
	size_t e = start + 1;
	while (e < n && strncmp(lines[e], "Node ", 5))
		e++;
	return e;
}

static size_t find_zone_block(const struct lines *l, const char *zone, bool populated)
{
	for (size_t i = 0; i < l->n; i++) {
		if (strncmp(l->line[i], "Node ", 5))
			continue;
		const char *name = strrchr(l->line[i], ' ') + 1;
		size_t e = zone_block_end(l->line, l->n, i);
		bool pop = false;
		for (size_t k = i; k < e; k++)
			pop = pop || !strcmp(l->line[k], "  pagesets");
		if ((!zone || !strcmp(name, zone)) && pop == populated)
			return i;
	}
	return SIZE_MAX;
}

/*
 * One of our zone blocks against Linux's block of the same kind: the lines
 * whose shape Linux prints come in Linux's order and spacing (a
 * subsequence of its block), and each of our own lines comes after the
 * Linux line that ends its group (the zone's counters, a CPU's pageset).
 */
static void check_zone_block(char *const *ours, size_t n, char *const *lin, size_t ln,
                             char *const *all, size_t all_n)
{
	static const char *const anchors[] = { "      numa_other   #", "  vm stats threshold: #" };
	size_t k = 0;
	const char *last = "";
	for (size_t i = 0; i < n; i++) {
		if (!shape_in(all, 0, all_n, ours[i])) {
			bool ok = !strcmp(last, anchors[0]) || !strcmp(last, anchors[1]);
			CHECK_MSG(
			        ok,
			        "our line \"%s\" is not after a group's last Linux line (after \"%s\")",
			        ours[i], last);
			continue;
		}
		while (k < ln && strcmp(lin[k], ours[i]))
			k++;
		CHECK_MSG(k < ln, "\"%s\" (after \"%s\") is out of Linux 6.1's order or shape",
		          ours[i], last);
		if (k < ln)
			k++;
		last = ours[i];
	}
}

static bool block_has(char *const *s, size_t n, const char *shape)
{
	return shape_in(s, 0, n, shape);
}

TEST(stats_zoneinfo_layout_is_linux_6_1s)
{
	/* The kernel of the fixture: zones DMA, DMA32 and Normal, 2 CPUs, one node. */
	struct pa_pool *pool = test_boot("mem=6G zone_dma=1 nr_cpus=2");
	struct lines fx, our;
	read_fixture("zoneinfo", &fx);
	split_lines(report_alloc(pool, PA_REPORT_ZONEINFO, 0), &our);
	char **fs = shapes_of(&fx), **os = shapes_of(&our);
	static const char *const zones[] = { "DMA", "DMA32", "Normal", "Movable" };
	size_t blocks = 0;
	for (size_t i = 0; i < our.n; i++) {
		if (strncmp(our.line[i], "Node ", 5))
			continue;
		size_t e = zone_block_end(our.line, our.n, i);
		const char *name = strrchr(our.line[i], ' ') + 1;
		CHECK_MSG(blocks < 4 && !strcmp(name, zones[blocks]), "zone %zu is %s", blocks,
		          name);
		bool populated = block_has(os + i, e - i, "  pagesets");
		size_t f = find_zone_block(&fx, populated ? name : NULL, populated);
		REQUIRE(f != SIZE_MAX);
		size_t fe = zone_block_end(fx.line, fx.n, f);
		check_zone_block(os + i, e - i, fs + f, fe - f, fs, fx.n);
		if (!populated) { /* exactly what Linux prints for one */
			CHECK_EQ_U64(e - i, fe - f);
			for (size_t k = 0; k < e - i && k < fe - f; k++)
				CHECK_MSG(!strcmp(os[i + k], fs[f + k]),
				          "unpopulated %s: \"%s\" for \"%s\"", name, os[i + k],
				          fs[f + k]);
		} else {
			static const char *const need[] = {
				"        boost    #",         "        cma      #",
				"        protection: (#...)", "      nr_free_cma  #",
				"      numa_hit     #",       "  vm stats threshold: #",
				"  node_unreclaimable:  #",   "  start_pfn:           #",
			};
			for (size_t k = 0; k < sizeof need / sizeof need[0]; k++)
				CHECK_MSG(block_has(os + i, e - i, need[k]), "%s lacks \"%s\"",
				          name, need[k]);
			/* The per-node stats go with the node's first populated zone only. */
			CHECK_EQ_U64(block_has(os + i, e - i, "  per-node stats"), blocks == 0);
		}
		blocks++;
		i = e - 1;
	}
	CHECK_EQ_U64(blocks, 4);
	free_shapes(fs, fx.n);
	free_shapes(os, our.n);
	free_lines(&fx);
	free_lines(&our);
	pa_shutdown(pool);
}

TEST(stats_zoneinfo_protection_is_linux_lowmem_reserve)
{
	struct pa_pool *pool = test_boot("mem=6G zone_dma=1 movablecore=1G");
	char *t = report_alloc(pool, PA_REPORT_ZONEINFO, 0);
	struct pa_zone *z[PA_ZONE_COUNT];
	for (unsigned i = 0; i < PA_ZONE_COUNT; i++)
		z[i] = pool->nodes[0].zones[i];
	REQUIRE(z[0] && z[1] && z[2] && z[3]);
	uint64_t m1 = z[1]->managed_pages, m2 = z[2]->managed_pages, m3 = z[3]->managed_pages;
	char expect[160];
	/* DMA and DMA32 keep 1/256 of what lies above them, Normal 1/32, Movable nothing. */
	snprintf(expect, sizeof expect, "protection: (0, %" PRIu64 ", %" PRIu64 ", %" PRIu64 ")",
	         m1 / 256, (m1 + m2) / 256, (m1 + m2 + m3) / 256);
	CHECK_MSG(strstr(t, expect) != NULL, "no \"%s\" in\n%s", expect, t);
	snprintf(expect, sizeof expect, "protection: (0, 0, %" PRIu64 ", %" PRIu64 ")", m2 / 256,
	         (m2 + m3) / 256);
	CHECK_MSG(strstr(t, expect) != NULL, "no \"%s\"", expect);
	snprintf(expect, sizeof expect, "protection: (0, 0, 0, %" PRIu64 ")", m3 / 32);
	CHECK_MSG(strstr(t, expect) != NULL, "no \"%s\"", expect);
	free(t);
	pa_shutdown(pool);
}

TEST(stats_vmstat_layout_is_linux_6_1s_then_ours)
{
	struct pa_pool *pool = test_boot("mem=6G zone_dma=1 nr_cpus=2");
	struct lines fx, our;
	read_fixture("vmstat", &fx);
	char *text = report_alloc(pool, PA_REPORT_VMSTAT, 0);
	split_lines(strdup(text), &our);
	long last = -1;
	bool ours = false;
	size_t linux_lines = 0;
	for (size_t i = 0; i < our.n; i++) {
		char name[64];
		unsigned long long v;
		char tail;
		CHECK_MSG(sscanf(our.line[i], "%63s %llu%c", name, &v, &tail) == 2,
		          "\"%s\" is not \"name value\"", our.line[i]);
		long at = -1;
		for (size_t k = 0; k < fx.n && at < 0; k++)
			if (!strncmp(fx.line[k], name, strlen(name)) &&
			    fx.line[k][strlen(name)] == ' ')
				at = (long)k;
		if (at < 0) {
			ours = true;
			continue;
		}
		CHECK_MSG(!ours, "Linux's %s comes after our own counters", name);
		CHECK_MSG(at > last, "%s is out of Linux 6.1's order", name);
		last = at;
		linux_lines++;
	}
	static const char *const need[] = { "nr_free_pages",      "nr_free_cma",
		                            "numa_hit",           "pgalloc_dma",
		                            "pgalloc_normal",     "pgfree",
		                            "pgmigrate_success",  "compact_stall",
		                            "compact_daemon_wake" };
	for (size_t k = 0; k < sizeof need / sizeof need[0]; k++)
		CHECK_MSG(vmstat_text_value(text, need[k]) >= 0, "no %s", need[k]);
	CHECK(linux_lines >= 20);
	CHECK(ours); /* compact_deferred and the rest follow */
	CHECK(vmstat_text_value(text, "compact_deferred") >= 0);
	free(text);
	free_lines(&fx);
	free_lines(&our);
	pa_shutdown(pool);
}

/* Every digit as '9': the extfrag files print fixed-width numbers. */
static void digits_shape(char *s)
{
	for (; *s; s++)
		if (isdigit((unsigned char)*s))
			*s = '9';
}

TEST(stats_extfrag_files_are_linux_6_1s)
{
	/* A fresh pool of the fixture's zones: every index of it has the shape Linux's has. */
	struct pa_pool *pool = test_boot("mem=6G zone_dma=1");
	static const struct {
		enum pa_report_kind kind;
		const char *file;
	} files[] = { { PA_REPORT_UNUSABLE_INDEX, "unusable_index" },
		      { PA_REPORT_EXTFRAG_INDEX, "extfrag_index" } };
	for (size_t f = 0; f < 2; f++) {
		struct lines fx, our;
		read_fixture(files[f].file, &fx);
		split_lines(report_alloc(pool, files[f].kind, 0), &our);
		CHECK_EQ_U64(our.n, fx.n);
		for (size_t i = 0; i < our.n && i < fx.n; i++) {
			digits_shape(our.line[i]);
			digits_shape(fx.line[i]);
			CHECK_MSG(!strcmp(our.line[i], fx.line[i]), "%s: \"%s\" for Linux's \"%s\"",
			          files[f].file, our.line[i], fx.line[i]);
		}
		free_lines(&fx);
		free_lines(&our);
	}
	pa_shutdown(pool);
}

TEST(stats_zoneinfo_json_has_the_text_rows)
{
	/* Two nodes: node 0 DMA and DMA32, node 1 DMA32 and Normal; Movable nowhere. */
	struct pa_pool *pool = test_boot("mem=6G numa=2 zone_dma=1 nr_cpus=2");
	char *json = report_alloc(pool, PA_REPORT_ZONEINFO, PA_REPORT_JSON);
	char *text = report_alloc(pool, PA_REPORT_ZONEINFO, 0);
	char err[256];
	struct jv *root = jparse(json, err, sizeof err);
	CHECK_MSG(root != NULL, "zoneinfo JSON does not parse: %s", err);
	REQUIRE(root);
	struct jv *zones = jget(root, "zones");
	REQUIRE(zones && zones->type == J_ARR);
	/* One entry per "Node N, zone NAME" line of the text, in the same order. */
	static const char *const expect[][2] = { { "0", "DMA" },    { "0", "DMA32" },
		                                 { "0", "Normal" }, { "0", "Movable" },
		                                 { "1", "DMA" },    { "1", "DMA32" },
		                                 { "1", "Normal" }, { "1", "Movable" } };
	CHECK_EQ_U64(zones->n, 8);
	for (size_t i = 0; i < zones->n && i < 8; i++) {
		struct jv *z = jat(zones, i);
		CHECK_EQ_U64(jint(z, "node", -1), (uint64_t)atoi(expect[i][0]));
		CHECK_MSG(!strcmp(jstr(z, "zone"), expect[i][1]), "zone %zu is %s", i,
		          jstr(z, "zone"));
		char head[64];
		snprintf(head, sizeof head, "Node %s, zone %8s\n", expect[i][0], expect[i][1]);
		CHECK_MSG(strstr(text, head) != NULL, "no \"%s\" in the text", head);
		struct jv *pop = jget(z, "populated");
		REQUIRE(pop && pop->type == J_BOOL);
		bool populated = i == 0 || i == 1 || i == 5 || i == 6;
		CHECK_EQ_U64(pop->b, populated);
		static const char *const head_keys[] = { "free",    "boost",   "min",
			                                 "low",     "high",    "spanned",
			                                 "present", "managed", "cma" };
		for (size_t k = 0; k < sizeof head_keys / sizeof head_keys[0]; k++)
			CHECK_MSG(jget(z, head_keys[k]) != NULL, "zone %zu lacks %s", i,
			          head_keys[k]);
		struct jv *prot = jget(z, "protection");
		REQUIRE(prot && prot->type == J_ARR);
		CHECK_EQ_U64(prot->n, 4); /* DMA, DMA32, Normal, Movable */
		CHECK_EQ_U64(jget(z, "per_node_stats") != NULL, i == 0 || i == 5);
		CHECK_EQ_U64(jget(z, "pagesets") != NULL, populated);
		if (!populated)
			continue;
		struct jv *stats = jget(z, "stats");
		REQUIRE(stats && stats->type == J_OBJ);
		static const char *const stat_keys[] = { "nr_free_pages", "nr_free_cma",
			                                 "numa_hit",      "numa_miss",
			                                 "numa_foreign",  "numa_local",
			                                 "numa_other",    "pgalloc" };
		for (size_t k = 0; k < sizeof stat_keys / sizeof stat_keys[0]; k++)
			CHECK_MSG(jget(stats, stat_keys[k]) != NULL, "zone %zu stats lack %s", i,
			          stat_keys[k]);
		CHECK_EQ_U64(jint(stats, "nr_free_pages", -1), jint(z, "free", -2));
		struct jv *ps = jat(jget(z, "pagesets"), 0);
		REQUIRE(ps);
		static const char *const pcp_keys[] = {
			"cpu",      "count",    "high",  "batch", "vm_stats_threshold",
			"high_min", "high_max", "orders"
		};
		for (size_t k = 0; k < sizeof pcp_keys / sizeof pcp_keys[0]; k++)
			CHECK_MSG(jget(ps, pcp_keys[k]) != NULL, "zone %zu pageset lacks %s", i,
			          pcp_keys[k]);
		CHECK(jget(z, "node_unreclaimable") && jget(z, "start_pfn"));
	}
	jfree(root);
	free(json);
	free(text);
	pa_shutdown(pool);
}

/* --- The pool's figures as numbers (pa_zone_info, pa_zone_pagetypes, ...) ---- */

TEST(stats_zone_info_agrees_with_zoneinfo)
{
	struct pa_pool *pool = test_boot("mem=6G numa=2 zone_dma=1 nr_cpus=2 cma=64M");
	pa_pfn_t held = must_alloc(pool, PA_GFP_KERNEL, 3);
	char *json = report_alloc(pool, PA_REPORT_ZONEINFO, PA_REPORT_JSON);
	char err[256];
	struct jv *root = jparse(json, err, sizeof err);
	REQUIRE(root);
	struct jv *zones = jget(root, "zones");
	REQUIRE(zones && zones->type == J_ARR);
	/* zoneinfo prints every type of every node; the pool has those with memory and Movable. */
	CHECK_EQ_U64(pa_zone_count(pool), 6);
	uint64_t free_sum = 0, managed = 0;
	for (unsigned i = 0; i < pa_zone_count(pool); i++) {
		struct pa_zone_info zi;
		REQUIRE(pa_zone_info(pool, i, &zi) == 0);
		struct jv *z = NULL;
		for (size_t k = 0; k < zones->n && !z; k++) {
			struct jv *c = jat(zones, k);
			if (jint(c, "node", -1) == zi.node &&
			    !strcmp(jstr(c, "zone"), pa_zone_name(zi.type)))
				z = c;
		}
		CHECK_MSG(z != NULL, "zone %u (node %u %s) is not in zoneinfo", i, zi.node,
		          pa_zone_name(zi.type));
		if (!z)
			continue;
		CHECK_EQ_U64(zi.free, jint(z, "free", -1));
		CHECK_EQ_U64(zi.watermark_min, jint(z, "min", -1));
		CHECK_EQ_U64(zi.watermark_low, jint(z, "low", -1));
		CHECK_EQ_U64(zi.watermark_high, jint(z, "high", -1));
		CHECK_EQ_U64(zi.end_pfn - zi.start_pfn, jint(z, "spanned", -1));
		CHECK_EQ_U64(zi.present, jint(z, "present", -1));
		CHECK_EQ_U64(zi.managed, jint(z, "managed", -1));
		CHECK_EQ_U64(zi.cma, jint(z, "cma", -1));
		if (zi.present)
			CHECK_EQ_U64(zi.start_pfn, jint(z, "start_pfn", -1));
		free_sum += zi.free;
		managed += zi.managed;
	}
	struct pa_usage u;
	pa_get_usage(pool, &u);
	CHECK_EQ_U64(free_sum, u.free);
	CHECK_EQ_U64(managed, u.managed);
	jfree(root);
	free(json);
	free_pfn(pool, held, 3);
	pa_shutdown(pool);
}

TEST(stats_zone_info_counts_per_cpu_frames_and_lock_contention)
{
	struct pa_pool *pool = test_boot("mem=256M nr_cpus=1");
	pa_pfn_t p = must_alloc(pool, PA_GFP_KERNEL, 0);
	free_pfn(pool, p, 0); /* onto the CPU's list */
	uint64_t pcp = 0;
	for (unsigned i = 0; i < pa_zone_count(pool); i++) {
		struct pa_zone_info zi;
		REQUIRE(pa_zone_info(pool, i, &zi) == 0);
		struct pa_pcp_info info;
		if (pa_pcp_info(pool, zi.node, zi.type, 0, &info, NULL) == 0)
			CHECK_EQ_U64(zi.pcp, info.count);
		CHECK_EQ_U64(zi.lock_contended, 0); /* one thread: never contended */
		pcp += zi.pcp;
	}
	CHECK(pcp > 0);
	pa_shutdown(pool);
}

TEST(stats_zone_api_refuses_bad_arguments)
{
	struct pa_pool *pool = test_boot("mem=64M");
	struct pa_zone_info zi;
	uint64_t nr[11 * PA_MT_COUNT], pb[PA_MT_COUNT];
	CHECK_EQ_U64(pa_zone_count(NULL), 0);
	CHECK_EQ_U64(pa_zone_info(NULL, 0, &zi), -EINVAL);
	CHECK_EQ_U64(pa_zone_info(pool, 0, NULL), -EINVAL);
	CHECK_EQ_U64(pa_zone_info(pool, pa_zone_count(pool), &zi), -ENOENT);
	CHECK_EQ_U64(pa_zone_pagetypes(NULL, 0, nr, 11, pb), -EINVAL);
	CHECK_EQ_U64(pa_zone_pagetypes(pool, pa_zone_count(pool), nr, 11, pb), -ENOENT);
	CHECK_EQ_U64(pa_zone_pagetypes(pool, 0, NULL, 0, NULL), 0);
	CHECK(!strcmp(pa_zone_name(PA_ZONE_DMA32), "DMA32"));
	CHECK(!strcmp(pa_zone_name(PA_ZONE_COUNT), "?"));
	pa_shutdown(pool);
}

TEST(stats_zone_pagetypes_agree_with_pagetypeinfo_json)
{
	struct pa_pool *pool = test_boot("mem=512M max_order=10");
	pa_pfn_t a = must_alloc(pool, PA_GFP_RECLAIMABLE, 2);
	pa_pfn_t b = must_alloc(pool, PA_GFP_MOVABLE, 0);
	pa_pfn_t z = pa_zone_count(pool);
	char *json = report_alloc(pool, PA_REPORT_PAGETYPEINFO, PA_REPORT_JSON);
	char err[256];
	struct jv *root = jparse(json, err, sizeof err);
	REQUIRE(root);
	uint64_t blocks_total[PA_MT_COUNT] = { 0 }, free_frames = 0;
	/* 12 orders asked of an order-10 pool: order 11 reads 0. */
	uint64_t nr[12 * PA_MT_COUNT], pb[PA_MT_COUNT];
	for (unsigned i = 0; i < z; i++) {
		REQUIRE(pa_zone_pagetypes(pool, i, nr, 12, pb) == 0);
		for (unsigned mt = 0; mt < PA_MT_COUNT; mt++) {
			blocks_total[mt] += pb[mt];
			CHECK_EQ_U64(nr[11 * PA_MT_COUNT + mt], 0);
			for (unsigned o = 0; o <= 10; o++)
				free_frames += nr[o * PA_MT_COUNT + mt] << o;
		}
	}
	CHECK_EQ_U64(free_frames, usage(pool).free);
	CHECK(blocks_total[PA_MT_RECLAIMABLE] >= 1);
	uint64_t all = 0;
	for (unsigned mt = 0; mt < PA_MT_COUNT; mt++)
		all += blocks_total[mt];
	CHECK_EQ_U64(all, pa_pageblock_count(pool));
	jfree(root);
	free(json);
	free_pfn(pool, a, 2);
	free_pfn(pool, b, 0);
	pa_shutdown(pool);
}

struct vm_visit {
	unsigned n;
	bool saw_free;
	uint64_t free;
};

static void count_counter(void *ctx, const char *name, uint64_t value)
{
	struct vm_visit *v = ctx;
	v->n++;
	if (!strcmp(name, "nr_free_pages")) {
		v->saw_free = true;
		v->free = value;
	}
}

TEST(stats_vmstat_foreach_visits_every_line)
{
	struct pa_pool *pool = test_boot("mem=64M");
	char *text = report_alloc(pool, PA_REPORT_VMSTAT, 0);
	unsigned lines = 0;
	for (const char *p = text; *p; p++)
		lines += *p == '\n';
	struct vm_visit v = { 0 };
	CHECK_EQ_U64(pa_vmstat_foreach(pool, count_counter, &v), 0);
	CHECK_EQ_U64(v.n, lines);
	CHECK(v.saw_free);
	CHECK_EQ_U64(v.free, vmstat(pool, "nr_free_pages"));
	CHECK_EQ_U64(pa_vmstat_foreach(NULL, count_counter, &v), -EINVAL);
	CHECK_EQ_U64(pa_vmstat_foreach(pool, NULL, &v), -EINVAL);
	free(text);
	pa_shutdown(pool);
}

TEST(stats_ctl_entries_and_numbers)
{
	struct pa_pool *pool = test_boot("mem=64M max_order=8");
	char help[8192];
	int len = pa_ctl_read(pool, "help", help, sizeof help);
	REQUIRE(len > 0 && (size_t)len < sizeof help);
	struct pa_ctl_entry e;
	unsigned n = 0;
	for (; pa_ctl_entry(n, &e) == 0; n++) {
		CHECK(!strcmp(e.mode, "rw") || !strcmp(e.mode, "ro") || !strcmp(e.mode, "wo"));
		CHECK_MSG(strstr(help, e.path) != NULL, "%s is not in help", e.path);
	}
	unsigned help_lines = 0;
	for (const char *p = help; *p; p++)
		help_lines += *p == '\n';
	CHECK_EQ_U64(n, help_lines);
	CHECK_EQ_U64(pa_ctl_entry(n, &e), -ENOENT);
	CHECK_EQ_U64(pa_ctl_entry(0, NULL), -EINVAL);
	uint64_t v = 0;
	CHECK_EQ_U64(pa_ctl_read_u64(pool, "max_order", &v), 0);
	CHECK_EQ_U64(v, 8);
	CHECK_EQ_U64(pa_ctl_read_u64(pool, "pcp/orders/0/enabled", &v), 0);
	CHECK_EQ_U64(v, 1);
	CHECK_EQ_U64(pa_ctl_read_u64(pool, "pcp/orders/9/enabled", &v), -EINVAL); /* above max */
	CHECK_EQ_U64(pa_ctl_read_u64(pool, "buddyinfo", &v), -EINVAL);            /* a report */
	CHECK_EQ_U64(pa_ctl_read_u64(pool, "pcp/drain", &v), -EINVAL);            /* write-only */
	CHECK_EQ_U64(pa_ctl_read_u64(pool, "nope", &v), -ENOENT);
	CHECK_EQ_U64(pa_ctl_read_u64(NULL, "max_order", &v), -EINVAL);
	CHECK_EQ_U64(pa_ctl_read_u64(pool, "max_order", NULL), -EINVAL);
	pa_shutdown(pool);
}
