/* SPDX-License-Identifier: MIT */
/*
 * Zones and nodes: x86-64's layout (DMA32 below 4 GiB whether or not memory
 * extends past it, NORMAL above, DMA for the first 16 MiB with zone_dma=1),
 * one NORMAL zone per node with zones=flat, MOVABLE from movablecore at the
 * top of each node; nodes split memory
 * evenly at 128 MiB boundaries; gfp zone modifiers pick the right zones;
 * watermarks follow Linux's formulas and the watermark check includes the
 * order and lets PA_GFP_HIGH dip below min.
 */
#include "test.h"
#include "helpers.h"

#include "minijson.h"

#include <errno.h>

#define MiB       (1ull << 20)
#define GiB       (1ull << 30)
#define MAX_ZONES 200

struct zinfo {
	int node;
	char name[16];
	uint64_t start, end, managed, wmin, wlow, whigh;
};

struct layout {
	int nr_nodes;
	int node_id[64];
	int nr;
	struct zinfo z[MAX_ZONES];
};

/* Zones of the info JSON, in the order the nodes and zones appear. */
static void get_layout(struct pa_pool *pool, struct layout *l)
{
	char *json = report_alloc(pool, PA_REPORT_INFO, PA_REPORT_JSON);
	char err[256];
	struct jv *root = jparse(json, err, sizeof err);
	CHECK_MSG(root != NULL, "info JSON does not parse: %s", err);
	free(json);
	REQUIRE(root);
	memset(l, 0, sizeof *l);
	struct jv *nodes = jget(root, "nodes");
	REQUIRE(nodes && nodes->type == J_ARR);
	for (size_t i = 0; i < nodes->n && i < 64; i++) {
		struct jv *node = jat(nodes, i);
		l->node_id[l->nr_nodes++] = (int)jint(node, "id", -1);
		struct jv *zones = jget(node, "zones");
		REQUIRE(zones && zones->type == J_ARR);
		for (size_t j = 0; j < zones->n && l->nr < MAX_ZONES; j++) {
			struct jv *z = jat(zones, j);
			struct zinfo *zi = &l->z[l->nr++];
			zi->node = (int)jint(node, "id", -1);
			snprintf(zi->name, sizeof zi->name, "%s", jstr(z, "name"));
			zi->start = (uint64_t)jint(z, "start_pfn", -1);
			zi->end = (uint64_t)jint(z, "end_pfn", -1);
			zi->managed = (uint64_t)jint(z, "managed_pages", -1);
			zi->wmin = (uint64_t)jint(z, "watermark_min", -1);
			zi->wlow = (uint64_t)jint(z, "watermark_low", -1);
			zi->whigh = (uint64_t)jint(z, "watermark_high", -1);
		}
	}
	jfree(root);
}

static const struct zinfo *find_zone(const struct layout *l, int node, const char *name)
{
	for (int i = 0; i < l->nr; i++)
		if (l->z[i].node == node && !strcmp(l->z[i].name, name))
			return &l->z[i];
	return NULL;
}

static int count_zones(const struct layout *l, const char *name)
{
	int n = 0;
	for (int i = 0; i < l->nr; i++)
		n += !strcmp(l->z[i].name, name);
	return n;
}

#define CHECK_ZONE(l, node, name, start_, end_)                                                    \
	do {                                                                                       \
		const struct zinfo *z_ = find_zone((l), (node), (name));                           \
		CHECK_MSG(z_ != NULL, "node %d has no %s zone", (node), (name));                   \
		if (z_) {                                                                          \
			CHECK_EQ_U64(z_->start, (start_));                                         \
			CHECK_EQ_U64(z_->end, (end_));                                             \
		}                                                                                  \
	} while (0)

static uint64_t pfn_of(uint64_t bytes)
{
	return bytes >> 12;
}

static uint64_t isqrt64(uint64_t x)
{
	uint64_t r = 0;
	for (uint64_t bit = 1ull << 62; bit; bit >>= 2) {
		if (x >= r + bit) {
			x -= r + bit;
			r = (r >> 1) + bit;
		} else {
			r >>= 1;
		}
	}
	return r;
}

/* Linux's __setup_per_zone_wmarks() over the zones of l; mfk < 0 means the formula. */
static void check_watermarks(const struct layout *l, unsigned page_shift, int64_t mfk, uint64_t wsf)
{
	uint64_t lowmem = 0;
	for (int i = 0; i < l->nr; i++)
		lowmem += l->z[i].managed;
	REQUIRE(lowmem > 0);
	if (mfk < 0) {
		uint64_t v = isqrt64((lowmem << (page_shift - 10)) * 16);
		mfk = (int64_t)(v < 128 ? 128 : v > 262144 ? 262144 : v);
	}
	uint64_t pages_min = (uint64_t)mfk >> (page_shift - 10);
	for (int i = 0; i < l->nr; i++) {
		const struct zinfo *z = &l->z[i];
		uint64_t min = pages_min * z->managed / lowmem;
		uint64_t scaled = z->managed * wsf / 10000;
		uint64_t delta = min / 4 > scaled ? min / 4 : scaled;
		CHECK_MSG(z->wmin == min && z->wlow == min + delta && z->whigh == min + 2 * delta,
		          "node %d %s (managed %" PRIu64 "): watermarks %" PRIu64 "/%" PRIu64
		          "/%" PRIu64 ", expected %" PRIu64 "/%" PRIu64 "/%" PRIu64,
		          z->node, z->name, z->managed, z->wmin, z->wlow, z->whigh, min,
		          min + delta, min + 2 * delta);
	}
}

static uint64_t pfn_at(struct pa_pool *pool, struct pa_page *p)
{
	return pa_page_to_pfn(pool, p);
}

/* Free blocks of order >= order, from buddyinfo. */
static uint64_t blocks_at_or_above(struct pa_pool *pool, unsigned order, unsigned max_order)
{
	uint64_t counts[32], total = 0;
	REQUIRE(max_order < 32);
	buddy_counts(pool, counts, max_order + 1);
	for (unsigned o = order; o <= max_order; o++)
		total += counts[o];
	return total;
}

/* --- Layout ------------------------------------------------------------------- */

TEST(zone_below_4g_is_all_dma32)
{
	struct pa_pool *pool = test_boot("mem=1G");
	struct layout l;
	get_layout(pool, &l);
	CHECK_EQ_U64(l.nr_nodes, 1);
	CHECK_EQ_U64(l.node_id[0], 0);
	CHECK_EQ_U64(l.nr, 1);
	CHECK_ZONE(&l, 0, "DMA32", 0, pfn_of(GiB));
	CHECK_EQ_U64(l.z[0].managed, pfn_of(GiB));
	pa_shutdown(pool);
}

TEST(zone_exactly_4g_is_all_dma32)
{
	struct pa_pool *pool = test_boot("mem=4G");
	struct layout l;
	get_layout(pool, &l);
	CHECK_EQ_U64(l.nr, 1);
	CHECK_ZONE(&l, 0, "DMA32", 0, pfn_of(4 * GiB));
	CHECK_EQ_U64(count_zones(&l, "Normal"), 0);
	CHECK_EQ_U64(count_zones(&l, "DMA"), 0);
	pa_shutdown(pool);
}

TEST(zone_dma_is_the_first_16m_with_zone_dma)
{
	static const char *const lines[] = { "mem=1G zone_dma=1", "mem=8G zone_dma=1 numa=2" };
	for (size_t i = 0; i < 2; i++) {
		struct pa_pool *pool = test_boot(lines[i]);
		struct layout l;
		get_layout(pool, &l);
		CHECK_ZONE(&l, 0, "DMA", 0, pfn_of(16 * MiB));
		CHECK_ZONE(&l, 0, "DMA32", pfn_of(16 * MiB), l.z[1].end);
		CHECK_EQ_U64(count_zones(&l, "DMA"), 1); /* node 0 only */
		pa_shutdown(pool);
	}
	struct pa_pool *pool = test_boot("mem=16M zone_dma=1");
	struct layout l;
	get_layout(pool, &l);
	CHECK_EQ_U64(l.nr, 1);
	CHECK_ZONE(&l, 0, "DMA", 0, pfn_of(16 * MiB));
	pa_shutdown(pool);
}

TEST(zone_flat_is_one_normal_zone_per_node)
{
	struct pa_pool *pool = test_boot("mem=8G numa=2 zones=flat");
	struct layout l;
	get_layout(pool, &l);
	CHECK_EQ_U64(l.nr, 2);
	CHECK_ZONE(&l, 0, "Normal", 0, pfn_of(4 * GiB));
	CHECK_ZONE(&l, 1, "Normal", pfn_of(4 * GiB), pfn_of(8 * GiB));
	pa_shutdown(pool);
	pool = test_boot("mem=1G zones=flat movablecore=256M");
	get_layout(pool, &l);
	CHECK_EQ_U64(l.nr, 2);
	CHECK_ZONE(&l, 0, "Normal", 0, pfn_of(768 * MiB));
	CHECK_ZONE(&l, 0, "Movable", pfn_of(768 * MiB), pfn_of(GiB));
	pa_shutdown(pool);
}

TEST(zone_layout_keys_refuse_bad_values)
{
	static const struct {
		const char *line, *needle;
	} cases[] = {
		{ "zones=x86", "zones=x86: unknown layout" },
		{ "zone_dma=2", "zone_dma=2: out of range" },
		{ "zone_dma=1 zones=flat", "zone_dma=1: needs zones=x86_64" },
		{ "zone_dma=1 page_shift=16", "zone_dma=1: the 16 MiB of ZONE_DMA are not whole" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct pa_pool *pool = NULL;
		char err[256] = "";
		CHECK_EQ_U64(pa_boot(cases[i].line, NULL, &pool, err, sizeof err), -EINVAL);
		CHECK_MSG(strstr(err, cases[i].needle) != NULL, "%s: error \"%s\" lacks \"%s\"",
		          cases[i].line, err, cases[i].needle);
		CHECK(pool == NULL);
	}
}

TEST(zone_dma32_below_4g_normal_above)
{
	struct pa_pool *pool = test_boot("mem=8G");
	struct layout l;
	get_layout(pool, &l);
	CHECK_EQ_U64(l.nr, 2);
	CHECK_ZONE(&l, 0, "DMA32", 0, pfn_of(4 * GiB));
	CHECK_ZONE(&l, 0, "Normal", pfn_of(4 * GiB), pfn_of(8 * GiB));
	pa_shutdown(pool);
}

TEST(zone_dma32_with_16k_pages)
{
	struct pa_pool *pool = test_boot("mem=8G page_shift=14");
	struct layout l;
	get_layout(pool, &l);
	CHECK_ZONE(&l, 0, "DMA32", 0, (4 * GiB) >> 14);
	CHECK_ZONE(&l, 0, "Normal", (4 * GiB) >> 14, (8 * GiB) >> 14);
	pa_shutdown(pool);
}

TEST(zone_numa_splits_memory_evenly)
{
	struct pa_pool *pool = test_boot("mem=4G numa=4 zones=flat");
	struct layout l;
	get_layout(pool, &l);
	CHECK_EQ_U64(l.nr_nodes, 4);
	for (int n = 0; n < 4; n++) {
		CHECK_EQ_U64(l.node_id[n], n);
		CHECK_ZONE(&l, n, "Normal", pfn_of((uint64_t)n * GiB),
		           pfn_of((uint64_t)(n + 1) * GiB));
	}
	struct pa_config c;
	pa_get_config(pool, &c);
	CHECK_EQ_U64(c.nr_nodes, 4);
	pa_shutdown(pool);
}

TEST(zone_numa_boundaries_are_section_multiples)
{
	static const char *const lines[] = { "mem=1G numa=3", "mem=3G numa=5", "mem=1664M numa=7" };
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		struct pa_pool *pool = test_boot(lines[i]);
		struct pa_config c;
		pa_get_config(pool, &c);
		struct layout l;
		get_layout(pool, &l);
		CHECK_EQ_U64(l.nr_nodes, c.nr_nodes);
		uint64_t section = 1ull << c.section_shift;
		uint64_t expect_start = 0;
		uint64_t even = c.total_pages / c.nr_nodes;
		for (int n = 0; n < l.nr_nodes; n++) {
			uint64_t lo = UINT64_MAX, hi = 0;
			for (int j = 0; j < l.nr; j++) {
				if (l.z[j].node != n)
					continue;
				lo = l.z[j].start < lo ? l.z[j].start : lo;
				hi = l.z[j].end > hi ? l.z[j].end : hi;
			}
			CHECK_MSG(lo == expect_start,
			          "%s: node %d starts at %" PRIu64 ", expected %" PRIu64, lines[i],
			          n, lo, expect_start);
			CHECK_MSG(hi > lo, "%s: node %d is empty", lines[i], n);
			CHECK_MSG(lo % section == 0, "%s: node %d starts off a section boundary",
			          lines[i], n);
			uint64_t span = hi - lo;
			CHECK_MSG(span + section > even && span < even + section,
			          "%s: node %d spans %" PRIu64 " frames, even share %" PRIu64,
			          lines[i], n, span, even);
			expect_start = hi;
		}
		CHECK_EQ_U64(expect_start, c.total_pages);
		pa_shutdown(pool);
	}
}

TEST(zone_numa_node_across_4g)
{
	struct pa_pool *pool = test_boot("mem=6G numa=2");
	struct layout l;
	get_layout(pool, &l);
	CHECK_EQ_U64(l.nr, 3);
	CHECK_ZONE(&l, 0, "DMA32", 0, pfn_of(3 * GiB));
	CHECK_ZONE(&l, 1, "DMA32", pfn_of(3 * GiB), pfn_of(4 * GiB));
	CHECK_ZONE(&l, 1, "Normal", pfn_of(4 * GiB), pfn_of(6 * GiB));
	CHECK(find_zone(&l, 0, "Normal") == NULL);
	pa_shutdown(pool);
}

TEST(zone_movablecore_takes_the_top)
{
	static const char *const lines[] = { "mem=1G movablecore=256M", "mem=1G movablecore=25%" };
	for (size_t i = 0; i < 2; i++) {
		struct pa_pool *pool = test_boot(lines[i]);
		struct layout l;
		get_layout(pool, &l);
		CHECK_EQ_U64(l.nr, 2);
		CHECK_ZONE(&l, 0, "DMA32", 0, pfn_of(768 * MiB));
		CHECK_ZONE(&l, 0, "Movable", pfn_of(768 * MiB), pfn_of(GiB));
		pa_shutdown(pool);
	}
}

TEST(zone_movablecore_above_4g)
{
	struct pa_pool *pool = test_boot("mem=8G movablecore=2G");
	struct layout l;
	get_layout(pool, &l);
	CHECK_EQ_U64(l.nr, 3);
	CHECK_ZONE(&l, 0, "DMA32", 0, pfn_of(4 * GiB));
	CHECK_ZONE(&l, 0, "Normal", pfn_of(4 * GiB), pfn_of(6 * GiB));
	CHECK_ZONE(&l, 0, "Movable", pfn_of(6 * GiB), pfn_of(8 * GiB));
	pa_shutdown(pool);
}

TEST(zone_movablecore_from_the_top_of_each_node)
{
	struct pa_pool *pool = test_boot("mem=2G numa=2 movablecore=512M");
	struct layout l;
	get_layout(pool, &l);
	uint64_t movable = 0;
	for (int n = 0; n < 2; n++) {
		const struct zinfo *m = find_zone(&l, n, "Movable");
		const struct zinfo *z = find_zone(&l, n, "DMA32");
		CHECK_MSG(m != NULL, "node %d has no Movable zone", n);
		if (!m)
			continue;
		CHECK_EQ_U64(m->end, pfn_of((uint64_t)(n + 1) * GiB)); /* the node's top */
		if (z)
			CHECK_EQ_U64(z->end, m->start);
		movable += m->end - m->start;
	}
	CHECK_EQ_U64(movable, pfn_of(512 * MiB));
	pa_shutdown(pool);
}

/*
 * Zone edges that come from a size or a percentage (movablecore, numa=
 * splits, memhole= edges, the 4 GiB line with odd mem= sizes) never split a
 * pageblock: every edge of a zone with memory is a pageblock multiple or the
 * end of memory, and ZONE_MOVABLE starts on a max-order block (capped at the
 * layout unit). pa_validate with debug=2 checks every pageblock's zone after
 * a short churn of every order and type.
 */
static void check_zone_edges(struct pa_pool *pool, const char *line)
{
	struct pa_config cfg;
	pa_get_config(pool, &cfg);
	uint64_t pb = 1ull << cfg.pageblock_order, block = 1ull << cfg.max_order;
	uint64_t layout = 1ull << (cfg.section_shift > cfg.pageblock_order ? cfg.section_shift :
	                                                                     cfg.pageblock_order);
	uint64_t unit = block < layout ? block : layout;
	for (unsigned i = 0; i < pa_zone_count(pool); i++) {
		struct pa_zone_info z;
		REQUIRE(pa_zone_info(pool, i, &z) == 0);
		if (!z.present)
			continue;
		CHECK_MSG(z.start_pfn % pb == 0 &&
		                  (z.end_pfn % pb == 0 || z.end_pfn == cfg.total_pages),
		          "%s: node %u %s [%" PRIu64 ", %" PRIu64
		          ") splits a pageblock of %" PRIu64,
		          line, z.node, pa_zone_name(z.type), z.start_pfn, z.end_pfn, pb);
		if (z.type == PA_ZONE_MOVABLE)
			CHECK_MSG(z.start_pfn % unit == 0,
			          "%s: node %u Movable starts at %" PRIu64
			          ", not a multiple of %" PRIu64,
			          line, z.node, z.start_pfn, unit);
	}
}

static void boot_churn_validate(const char *line, uint64_t *seed)
{
	struct pa_pool *pool = test_boot(line);
	check_zone_edges(pool, line);
	struct pa_config cfg;
	pa_get_config(pool, &cfg);
	static const pa_gfp_t gfps[] = { PA_GFP_KERNEL, PA_GFP_MOVABLE, PA_GFP_RECLAIMABLE,
		                         PA_GFP_MOVABLE | PA_GFP_DMA32 };
	struct pa_page *page[32];
	unsigned order[32];
	for (unsigned i = 0; i < 32; i++) {
		uint64_t r = rng_next(seed);
		order[i] = (unsigned)(r % (cfg.max_order + 1));
		page[i] = pa_alloc_pages(pool, gfps[(r >> 8) % 4] | PA_GFP_NOWARN, order[i]);
	}
	for (unsigned i = 0; i < 32; i += 2)
		if (page[i])
			pa_free_pages(pool, page[i], order[i]);
	VALIDATE(pool);
	for (unsigned i = 1; i < 32; i += 2)
		if (page[i])
			pa_free_pages(pool, page[i], order[i]);
	VALIDATE(pool);
	pa_shutdown(pool);
}

TEST(zone_movablecore_percentages_split_no_pageblock)
{
	static const char *const mems[] = { "513M", "1025M", "3071M", "4097M", "6151M" };
	static const unsigned numas[] = { 1, 3 };
	unsigned step = test_scale() < 1 ? 7 : 1;
	uint64_t seed = test_seed();
	printf("  seed %" PRIu64 "\n", seed);
	for (size_t m = 0; m < sizeof mems / sizeof mems[0]; m++)
		for (size_t n = 0; n < sizeof numas / sizeof numas[0]; n++)
			for (unsigned pct = 1; pct <= 99; pct += step) {
				char line[128];
				snprintf(line, sizeof line,
				         "mem=%s numa=%u movablecore=%u%% debug=2", mems[m],
				         numas[n], pct);
				boot_churn_validate(line, &seed);
			}
}

TEST(zone_edges_from_sizes_holes_and_nodes_split_no_pageblock)
{
	static const char *const lines[] = {
		"mem=513M",
		"mem=4097M numa=3",
		"mem=4097M movablecore=100M",
		"mem=2G numa=2 memhole=1536M-1600M movablecore=10%",
		"mem=3071M numa=3 memhole=100M-333M movablecore=33%",
		"mem=3071M numa=3 memhole=1000M-1100M memhole=2001M-2003M movablecore=777M",
		"mem=5121M zone_dma=1 movablecore=777M",
		"mem=5121M zone_dma=1 numa=2 movablecore=61%",
		"mem=4097M page_shift=14 movablecore=41%",
		"mem=4G max_order=18 movablecore=13%",
		"mem=1G max_order=18 movablecore=25%",
		"mem=8191M numa=5 movablecore=3333M memhole=4000M-4100M",
		"mem=8191M numa=5 zones=flat movablecore=47%",
		"mem=6151M numa=3 movablecore=99%",
	};
	uint64_t seed = test_seed();
	printf("  seed %" PRIu64 "\n", seed);
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		char line[160];
		snprintf(line, sizeof line, "%s debug=2", lines[i]);
		boot_churn_validate(line, &seed);
	}
}

TEST(zone_managed_pages_exclude_holes)
{
	struct pa_pool *pool = test_boot("mem=8G memhole=1G-2G memhole=5000M-5001M");
	struct layout l;
	get_layout(pool, &l);
	const struct zinfo *d = find_zone(&l, 0, "DMA32");
	const struct zinfo *n = find_zone(&l, 0, "Normal");
	REQUIRE(d && n);
	CHECK_EQ_U64(d->end - d->start, pfn_of(4 * GiB)); /* spanned pages keep the hole */
	CHECK_EQ_U64(d->managed, pfn_of(3 * GiB));
	CHECK_EQ_U64(n->managed, pfn_of(4 * GiB) - pfn_of(MiB));
	struct pa_usage u;
	pa_get_usage(pool, &u);
	CHECK_EQ_U64(u.managed, d->managed + n->managed);
	pa_shutdown(pool);
}

/* --- gfp zone modifiers and zonelists ---------------------------------------------- */

TEST(zone_gfp_dma32_stays_below_4g)
{
	struct pa_pool *pool = test_boot("mem=8G");
	uint64_t limit = pfn_of(4 * GiB);
	struct pa_page *k = pa_alloc_pages(pool, PA_GFP_KERNEL, 0);
	REQUIRE(k);
	CHECK_MSG(pfn_at(pool, k) >= limit, "a plain allocation came from DMA32 (pfn %" PRIu64 ")",
	          pfn_at(pool, k));
	pa_free_pages(pool, k, 0);
	struct pa_page *p[64];
	for (int i = 0; i < 64; i++) {
		p[i] = pa_alloc_pages(pool, PA_GFP_DMA32, (unsigned)(i % 4));
		REQUIRE(p[i]);
		CHECK_MSG(pfn_at(pool, p[i]) < limit, "PA_GFP_DMA32 gave pfn %" PRIu64,
		          pfn_at(pool, p[i]));
	}
	uint64_t v = 0;
	if (pa_vmstat_read(pool, "pgalloc_dma32", &v) == 0)
		CHECK(v >= 64);
	for (int i = 0; i < 64; i++)
		pa_free_pages(pool, p[i], (unsigned)(i % 4));
	VALIDATE(pool);
	pa_shutdown(pool);
}

TEST(zone_gfp_dma32_uses_low_zones_without_dma32)
{
	/* No DMA32 zone: every zone ends at or below 4 GiB and serves PA_GFP_DMA32. */
	struct pa_pool *pool = test_boot("mem=1G zones=flat");
	struct pa_page *p = pa_alloc_pages(pool, PA_GFP_DMA32, 3);
	CHECK(p != NULL);
	if (p)
		pa_free_pages(pool, p, 3);
	pa_shutdown(pool);
	/* Node 1 lies above 4 GiB: DMA32 requests go to node 0. */
	pool = test_boot("mem=8G numa=2 min_free_kbytes=0");
	for (int i = 0; i < 32; i++) {
		p = pa_alloc_pages(pool, PA_GFP_DMA32, 0);
		REQUIRE(p);
		CHECK(pfn_at(pool, p) < pfn_of(4 * GiB));
		pa_free_pages(pool, p, 0);
	}
	VALIDATE(pool);
	pa_shutdown(pool);
}

TEST(zone_gfp_dma_stays_below_16m)
{
	struct pa_pool *pool = test_boot("mem=1G zone_dma=1 min_free_kbytes=0");
	uint64_t limit = pfn_of(16 * MiB), got = 0;
	struct pa_page *k = pa_alloc_pages(pool, PA_GFP_KERNEL, 0);
	REQUIRE(k);
	CHECK_MSG(pfn_at(pool, k) >= limit, "a plain allocation came from DMA (pfn %" PRIu64 ")",
	          pfn_at(pool, k));
	pa_free_pages(pool, k, 0);
	/*
	 * ZONE_DMA serves PA_GFP_DMA until it is empty, and nothing else does
	 * (the slow path drains what other CPUs' lists of it hold).
	 */
	struct pa_page **p = malloc(limit * sizeof *p);
	REQUIRE(p);
	for (; got < limit; got++) {
		p[got] = pa_alloc_pages(pool, PA_GFP_DMA | PA_GFP_NOWARN, 0);
		if (!p[got])
			break;
		CHECK_MSG(pfn_at(pool, p[got]) < limit, "PA_GFP_DMA gave pfn %" PRIu64,
		          pfn_at(pool, p[got]));
	}
	CHECK_EQ_U64(got, limit);
	CHECK_EQ_U64(vmstat(pool, "pgalloc_dma"), limit);
	CHECK(pa_alloc_pages(pool, PA_GFP_DMA | PA_GFP_MOVABLE | PA_GFP_NOWARN, 0) == NULL);
	for (uint64_t i = 0; i < got; i++)
		pa_free_pages(pool, p[i], 0);
	free(p);
	VALIDATE(pool);
	pa_shutdown(pool);
	/* Without ZONE_DMA no zone ends below 16 MiB: PA_GFP_DMA fails, counted. */
	pool = test_boot("mem=1G");
	CHECK(pa_alloc_pages(pool, PA_GFP_DMA | PA_GFP_NOWARN, 0) == NULL);
	CHECK_EQ_U64(vmstat(pool, "pgalloc_fail"), 1);
	pa_shutdown(pool);
}

TEST(zone_kernel_allocations_never_use_movable)
{
	/* pcp_orders=none: exact capacity per zone, with no frame left on another CPU's list. */
	struct pa_pool *pool =
	        test_boot("mem=256M movablecore=128M min_free_kbytes=0 pcp_orders=none");
	uint64_t half = pfn_of(128 * MiB);
	struct pa_page **pages = malloc(2 * half * sizeof *pages);
	REQUIRE(pages);
	uint64_t nk = 0, nm = 0;
	while (nk < 2 * half) {
		struct pa_page *p =
		        pa_alloc_pages(pool, PA_GFP_KERNEL | PA_GFP_NOWARN | PA_GFP_NOCOMPACT, 0);
		if (!p)
			break;
		CHECK_MSG(pfn_at(pool, p) < half, "unmovable pfn %" PRIu64 " in ZONE_MOVABLE",
		          pfn_at(pool, p));
		pages[nk++] = p;
	}
	CHECK_EQ_U64(nk, half);
	while (nk + nm < 2 * half) {
		struct pa_page *p =
		        pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN | PA_GFP_NOCOMPACT, 0);
		if (!p)
			break;
		CHECK(pfn_at(pool, p) >= half);
		pages[nk + nm++] = p;
	}
	CHECK_EQ_U64(nm, half);
	VALIDATE(pool);
	for (uint64_t i = 0; i < nk + nm; i++)
		pa_free_pages(pool, pages[i], 0);
	free(pages);
	VALIDATE(pool);
	pa_shutdown(pool);
}

TEST(zone_allocations_fall_back_to_other_nodes)
{
	/* pcp_orders=none: exact capacity per node, with no frame left on another CPU's list.
	 * Posing as CPU 0 keeps the local node fixed when the thread moves between cores. */
	struct pa_platform plat = { .cpu_id = fake_cpu_id };
	fake_cpu = 0;
	struct pa_pool *pool =
	        test_boot_on("mem=256M numa=2 min_free_kbytes=0 pcp_orders=none", &plat);
	uint64_t total = pfn_of(256 * MiB), node_pages = total / 2;
	struct pa_page **pages = malloc(total * sizeof *pages);
	REQUIRE(pages);
	/* THISNODE: one node's worth, all on one node. */
	uint64_t n = 0;
	int node = -1;
	while (n < total) {
		struct pa_page *p =
		        pa_alloc_pages(pool, PA_GFP_THISNODE | PA_GFP_NOWARN | PA_GFP_NOCOMPACT, 0);
		if (!p)
			break;
		int pn = pfn_at(pool, p) < node_pages ? 0 : 1;
		if (node < 0)
			node = pn;
		CHECK_MSG(pn == node, "PA_GFP_THISNODE allocations came from nodes %d and %d", node,
		          pn);
		pages[n++] = p;
	}
	CHECK_EQ_U64(n, node_pages);
	CHECK_EQ_U64(vmstat(pool, "numa_miss"), 0);
	/* Without THISNODE the rest comes from the other node: each one a NUMA miss. */
	alloc_order0_into(pool, PA_GFP_NOWARN | PA_GFP_NOCOMPACT, pages, &n, total);
	CHECK_EQ_U64(n, total);
	CHECK_EQ_U64(vmstat(pool, "numa_miss"), total - node_pages);
	CHECK_EQ_U64(vmstat(pool, "numa_other"), total - node_pages);
	CHECK_EQ_U64(vmstat(pool, "numa_foreign"), total - node_pages);
	CHECK_EQ_U64(vmstat(pool, "numa_hit"), node_pages);
	CHECK_EQ_U64(vmstat(pool, "numa_local"), node_pages);
	free_order0_all(pool, pages, n);
	VALIDATE(pool);
	pa_shutdown(pool);
}

/* With as many CPUs as nodes, each CPU has a node of its own; allocations start there. */
TEST(zone_allocations_prefer_the_calling_cpus_node)
{
	struct pa_platform plat = { .cpu_id = fake_cpu_id };
	struct pa_pool *pool =
	        test_boot_on("mem=1G numa=4 nr_cpus=4 max_order=16 min_free_kbytes=0", &plat);
	uint64_t node_pages = pfn_of(256 * MiB);
	int seen[4] = { 0 };
	for (unsigned cpu = 0; cpu < 4; cpu++) {
		fake_cpu = cpu;
		struct pa_page *p = pa_alloc_pages(pool, PA_GFP_KERNEL, 0);
		REQUIRE(p);
		uint64_t node = pfn_at(pool, p) / node_pages;
		seen[node]++;
		struct pa_page *q = pa_alloc_pages(pool, PA_GFP_THISNODE, 3);
		REQUIRE(q);
		CHECK_MSG(pfn_at(pool, q) / node_pages == node,
		          "CPU %u: a plain allocation came from node %" PRIu64
		          ", THISNODE from node %" PRIu64,
		          cpu, node, pfn_at(pool, q) / node_pages);
		pa_free_pages(pool, p, 0);
		pa_free_pages(pool, q, 3);
	}
	for (int n = 0; n < 4; n++)
		CHECK_MSG(seen[n] == 1, "node %d was the local node of %d CPUs", n, seen[n]);
	/* The frees above wait on the CPUs' per-CPU lists; give them back so node 0 is whole. */
	pa_drain_all(pool);
	/* Node 0 full: CPU 0's next allocation falls back to another node. */
	fake_cpu = 0;
	struct pa_page *big = pa_alloc_pages(pool, PA_GFP_THISNODE | PA_GFP_NOWARN, 16); /* 256M */
	REQUIRE(big);
	uint64_t home = pfn_at(pool, big) / node_pages;
	CHECK(pa_alloc_pages(pool, PA_GFP_THISNODE | PA_GFP_NOWARN | PA_GFP_NOCOMPACT, 0) == NULL);
	struct pa_page *p = pa_alloc_pages(pool, PA_GFP_KERNEL, 0);
	REQUIRE(p);
	CHECK(pfn_at(pool, p) / node_pages != home);
	pa_free_pages(pool, p, 0);
	pa_free_pages(pool, big, 16);
	VALIDATE(pool);
	pa_shutdown(pool);
}

/* --- Watermarks ------------------------------------------------------------------------ */

TEST(zone_watermarks_default_formula)
{
	struct pa_pool *pool = test_boot("mem=1G");
	struct layout l;
	get_layout(pool, &l);
	REQUIRE(l.nr == 1);
	/* int_sqrt(1048576 * 16) = 4096 KiB = 1024 pages; delta = max(256, 262). */
	CHECK_EQ_U64(l.z[0].wmin, 1024);
	CHECK_EQ_U64(l.z[0].wlow, 1024 + 262);
	CHECK_EQ_U64(l.z[0].whigh, 1024 + 2 * 262);
	check_watermarks(&l, 12, -1, 10);
	pa_shutdown(pool);
}

TEST(zone_watermarks_split_by_managed_share)
{
	static const char *const lines[] = { "mem=8G", "mem=8G memhole=1G-2G", "mem=6G numa=2",
		                             "mem=4G numa=4 memhole=100M-300M" };
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		struct pa_pool *pool = test_boot(lines[i]);
		struct layout l;
		get_layout(pool, &l);
		fprintf(stderr, "    %s: %d zones\n", lines[i], l.nr);
		check_watermarks(&l, 12, -1, 10);
		pa_shutdown(pool);
	}
}

TEST(zone_watermarks_follow_page_size)
{
	struct pa_pool *pool = test_boot("mem=4G page_shift=16");
	struct layout l;
	get_layout(pool, &l);
	/* int_sqrt(4194304 * 16) = 8192 KiB = 128 pages of 64 KiB. */
	REQUIRE(l.nr == 1);
	CHECK_EQ_U64(l.z[0].wmin, 128);
	check_watermarks(&l, 16, -1, 10);
	pa_shutdown(pool);
	pool = test_boot("mem=8G page_shift=14");
	get_layout(pool, &l);
	check_watermarks(&l, 14, -1, 10);
	pa_shutdown(pool);
}

TEST(zone_watermarks_explicit_min_free_kbytes_and_scale)
{
	struct pa_pool *pool = test_boot("mem=1G min_free_kbytes=8192");
	struct layout l;
	get_layout(pool, &l);
	CHECK_EQ_U64(l.z[0].wmin, 2048);
	CHECK_EQ_U64(l.z[0].wlow, 2048 + 512);
	CHECK_EQ_U64(l.z[0].whigh, 2048 + 1024);
	pa_shutdown(pool);

	pool = test_boot("mem=1G watermark_scale_factor=1000");
	get_layout(pool, &l);
	CHECK_EQ_U64(l.z[0].wmin, 1024);
	CHECK_EQ_U64(l.z[0].wlow, 1024 + 26214);
	CHECK_EQ_U64(l.z[0].whigh, 1024 + 2 * 26214);
	pa_shutdown(pool);

	pool = test_boot("mem=8G min_free_kbytes=65536 watermark_scale_factor=300");
	get_layout(pool, &l);
	check_watermarks(&l, 12, 65536, 300);
	pa_shutdown(pool);

	pool = test_boot("mem=1G min_free_kbytes=0 watermark_scale_factor=0");
	get_layout(pool, &l);
	CHECK_EQ_U64(l.z[0].wmin, 0);
	CHECK_EQ_U64(l.z[0].wlow, 0);
	CHECK_EQ_U64(l.z[0].whigh, 0);
	pa_shutdown(pool);
}

TEST(zone_min_free_kbytes_is_clamped)
{
	/* 512 KiB: int_sqrt(512 * 16) = 90, clamped up to 128 KiB = 32 pages. */
	struct pa_pool *pool = test_boot("mem=512K max_order=5");
	struct layout l;
	get_layout(pool, &l);
	REQUIRE(l.nr == 1);
	CHECK_EQ_U64(l.z[0].wmin, 32);
	check_watermarks(&l, 12, -1, 10);
	pa_shutdown(pool);
	/* 5 TiB: int_sqrt(5 TiB in KiB * 16) > 262144, clamped down to 262144 KiB. */
	pool = test_boot("mem=5T page_shift=16 max_order=20");
	get_layout(pool, &l);
	uint64_t sum = 0;
	for (int i = 0; i < l.nr; i++)
		sum += l.z[i].wmin;
	CHECK_MSG(sum <= 262144 >> 6 && sum + (uint64_t)l.nr >= 262144 >> 6,
	          "sum of min watermarks %" PRIu64 ", expected about %d", sum, 262144 >> 6);
	check_watermarks(&l, 16, -1, 10);
	pa_shutdown(pool);
}

/* min_free_kbytes=0: no reserve; every managed frame can be allocated. */
TEST(zone_min_free_kbytes_zero_gives_exact_capacity)
{
	/* pcp_orders=none: exact capacity, with no frame left on another CPU's list. */
	struct pa_pool *pool = test_boot("mem=64M min_free_kbytes=0 pcp_orders=none");
	uint64_t managed = pfn_of(64 * MiB);
	uint64_t n;
	struct pa_page **pages =
	        alloc_order0_all(pool, PA_GFP_NOWARN | PA_GFP_NOCOMPACT, managed + 1, &n);
	CHECK_EQ_U64(n, managed);
	struct pa_usage u;
	pa_get_usage(pool, &u);
	CHECK_EQ_U64(u.free, 0);
	CHECK_EQ_U64(u.allocated, managed);
	VALIDATE(pool);
	free_order0_all(pool, pages, n);
	pa_get_usage(pool, &u);
	CHECK_EQ_U64(u.free + u.reserved, managed);
	VALIDATE(pool);
	pa_shutdown(pool);
}

/* Order 0 stops at the min watermark; PA_GFP_HIGH may take half of it, and a quarter more
 * of the rest when it may not reclaim (Linux's ALLOC_NON_BLOCK). */
TEST(zone_watermark_check_stops_at_min_and_high_dips_below)
{
	/* 64M: min_free_kbytes = int_sqrt(65536 * 16) = 1024 KiB = 256 pages. pcp_orders=none:
	 * watermark arithmetic of the zone path; a per-CPU list hit checks no watermark (as Linux). */
	struct pa_pool *pool = test_boot("mem=64M pcp_orders=none");
	struct layout l;
	get_layout(pool, &l);
	REQUIRE(l.nr == 1);
	CHECK_EQ_U64(l.z[0].wmin, 256);
	uint64_t managed = pfn_of(64 * MiB);
	struct pa_page **pages = malloc(managed * sizeof *pages);
	REQUIRE(pages);
	uint64_t n = 0;
	const pa_gfp_t gfp = PA_GFP_NOWARN | PA_GFP_NOCOMPACT;
	alloc_order0_into(pool, gfp, pages, &n, managed);
	CHECK_EQ_U64(n, managed - 256);
	/* Without direct reclaim too (GFP_ATOMIC): a quarter of the rest more, 256 - 96. */
	CHECK_EQ_U64(alloc_order0_into(pool, gfp | PA_GFP_HIGH, pages, &n, managed), 160);
	/* Give one back above the line: a plain allocation still fails, HIGH works. */
	pa_free_pages(pool, pages[--n], 0);
	CHECK(pa_alloc_pages(pool, gfp, 0) == NULL);
	struct pa_page *p = pa_alloc_pages(pool, gfp | PA_GFP_HIGH, 0);
	CHECK(p != NULL);
	if (p)
		pages[n++] = p;
	uint64_t fails = 0;
	if (pa_vmstat_read(pool, "pgalloc_fail", &fails) == 0)
		CHECK(fails >= 2);
	VALIDATE(pool);
	free_order0_all(pool, pages, n);
	VALIDATE(pool);
	pa_shutdown(pool);
}

/* free - (2^order - 1) must stay above min: the check includes the order. */
TEST(zone_watermark_check_includes_the_order)
{
	/* pcp_orders=none: exact watermark arithmetic of the zone path, every free frame in the buddy. */
	struct pa_pool *pool =
	        test_boot("mem=64M min_free_kbytes=1024 max_order=10 pcp_orders=none");
	uint64_t managed = pfn_of(64 * MiB);
	struct pa_page **pages = malloc(managed * sizeof *pages);
	REQUIRE(pages);
	const pa_gfp_t gfp = PA_GFP_NOWARN | PA_GFP_NOCOMPACT;
	uint64_t n = 0;
	for (; n < managed - 300; n++) {
		pages[n] = pa_alloc_pages(pool, gfp, 0);
		REQUIRE(pages[n]);
	}
	struct pa_usage u;
	pa_get_usage(pool, &u);
	REQUIRE(u.free == 300);
	/* 300 - 63 = 237 <= 256: order 6 fails whatever blocks exist. */
	CHECK(pa_alloc_pages(pool, gfp, 6) == NULL);
	/* 300 - 31 = 269 > 256: order 5 succeeds when a block of order >= 5 is free. */
	struct pa_page *o5 = NULL, *o3 = NULL, *o2 = NULL;
	if (blocks_at_or_above(pool, 5, 10)) {
		o5 = pa_alloc_pages(pool, gfp, 5);
		CHECK(o5 != NULL);
	} else {
		fprintf(stderr,
		        "    no free block of order >= 5 left; order-5 success not checked\n");
	}
	if (o5) {
		/* 268 - 15 = 253: order 4 fails; 268 - 7 = 261: order 3 succeeds. */
		CHECK(pa_alloc_pages(pool, gfp, 4) == NULL);
		if (blocks_at_or_above(pool, 3, 10)) {
			o3 = pa_alloc_pages(pool, gfp, 3);
			CHECK(o3 != NULL);
		}
		if (o3 && blocks_at_or_above(pool, 2, 10)) {
			/* 260 - 3 = 257 > 256. */
			o2 = pa_alloc_pages(pool, gfp, 2);
			CHECK(o2 != NULL);
			/* 256 left: even order 0 fails. */
			if (o2)
				CHECK(pa_alloc_pages(pool, gfp, 0) == NULL);
		}
	}
	VALIDATE(pool);
	if (o2)
		pa_free_pages(pool, o2, 2);
	if (o3)
		pa_free_pages(pool, o3, 3);
	if (o5)
		pa_free_pages(pool, o5, 5);
	free_order0_all(pool, pages, n);
	pa_get_usage(pool, &u);
	CHECK_EQ_U64(u.free + u.reserved, managed);
	VALIDATE(pool);
	pa_shutdown(pool);
}

TEST(zone_watermark_scale_factor_ctl_recomputes_watermarks)
{
	struct pa_pool *pool = test_boot("mem=1G");
	CHECK_EQ_U64(pa_ctl_write(pool, "watermark_scale_factor", "1000"), 0);
	struct layout l;
	get_layout(pool, &l);
	CHECK_EQ_U64(l.z[0].wmin, 1024);
	CHECK_EQ_U64(l.z[0].wlow, 1024 + 26214);
	CHECK_EQ_U64(l.z[0].whigh, 1024 + 2 * 26214);
	pa_shutdown(pool);
}
