/* SPDX-License-Identifier: MIT */
/* The shared workload of the bare-metal kernel and the no-libc test (workload.h). */
#include "workload.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

void *memset(void *dst, int c, size_t n);

#define NR_OWNED 1024

/* The owned folios, indexed by their cookie, as a kernel's page cache would know them. */
struct owned {
	struct pa_page *page;
	unsigned order;
	uint64_t moves;
};

struct run {
	struct pa_pool *pool;
	workload_put_fn put;
	unsigned failed;
	struct owned owned[NR_OWNED];
	uint64_t bad_copies; /* migrate callbacks that found the bytes not yet copied */
};

char *workload_u64(char *buf, uint64_t v)
{
	char tmp[21];
	unsigned n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (unsigned i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	buf[n] = '\0';
	return buf;
}

/* "what: value" on a line. */
static void put_value(struct run *r, const char *what, uint64_t v)
{
	char num[21];
	r->put(what);
	r->put(": ");
	r->put(workload_u64(num, v));
	r->put("\n");
}

static void check(struct run *r, bool ok, const char *what)
{
	if (ok)
		return;
	r->failed++;
	r->put("FAIL: ");
	r->put(what);
	r->put("\n");
}

static void validate(struct run *r, const char *after)
{
	char err[256];
	int rc = pa_validate(r->pool, err, sizeof err);
	if (rc == 0)
		return;
	r->failed++;
	r->put("FAIL: pa_validate after ");
	r->put(after);
	r->put(": ");
	r->put(err);
	r->put("\n");
}

/* The bytes every frame of a block holds: its seed in every word, the frame's index mixed in. */
static uint64_t pattern(uint64_t seed, uint64_t frame)
{
	return (seed + 1) * 0x9e3779b97f4a7c15ull ^ frame;
}

static void fill(struct run *r, struct pa_page *p, unsigned order, uint64_t seed)
{
	uint64_t *w = pa_page_address(r->pool, p);
	struct pa_config cfg;
	pa_get_config(r->pool, &cfg);
	uint64_t words = cfg.page_size / 8;
	for (uint64_t f = 0; f < 1ull << order; f++)
		for (uint64_t i = 0; i < words; i += 61) /* a sample of every frame's words */
			w[f * words + i] = pattern(seed, f);
}

static bool holds(struct run *r, const struct pa_page *p, unsigned order, uint64_t seed)
{
	const uint64_t *w = pa_page_address(r->pool, p);
	struct pa_config cfg;
	pa_get_config(r->pool, &cfg);
	uint64_t words = cfg.page_size / 8;
	for (uint64_t f = 0; f < 1ull << order; f++)
		for (uint64_t i = 0; i < words; i += 61)
			if (w[f * words + i] != pattern(seed, f))
				return false;
	return true;
}

/* Every order: as many blocks as 1/8 of the pool holds (at least one), written, checked, freed. */
static void every_order(struct run *r)
{
	struct pa_config cfg;
	pa_get_config(r->pool, &cfg);
	static struct pa_page *held[512];
	for (unsigned o = 0; o <= cfg.max_order; o++) {
		uint64_t want = (cfg.total_pages / 8) >> o;
		unsigned n = 0;
		want = want < 1 ? 1 : want > 512 ? 512 : want;
		for (; n < want; n++) {
			held[n] =
			        pa_alloc_pages(r->pool, n & 1 ? PA_GFP_MOVABLE : PA_GFP_KERNEL, o);
			if (!held[n])
				break;
			fill(r, held[n], o, o * 1000 + n);
		}
		check(r, n == want, "every order: an allocation failed");
		for (unsigned i = 0; i < n; i++) {
			check(r, holds(r, held[i], o, o * 1000 + i),
			      "every order: a block's bytes");
			pa_free_pages(r->pool, held[i], o);
		}
		validate(r, "every order");
	}
	put_value(r, "orders allocated, written and freed", cfg.max_order + 1);
}

/* Folios: any frame of one finds its head. */
static void folios(struct run *r)
{
	for (unsigned o = 1; o <= 4; o++) {
		struct pa_page *head = pa_alloc_pages(r->pool, PA_GFP_COMP | PA_GFP_ZERO, o);
		check(r, head != NULL, "folio: allocation");
		if (!head)
			continue;
		pa_pfn_t pfn = pa_page_to_pfn(r->pool, head);
		struct pa_page *tail = pa_pfn_to_page(r->pool, pfn + (1u << o) - 1);
		check(r, pa_folio_head(r->pool, tail) == head, "folio: a tail frame's head");
		check(r, pa_folio_order(r->pool, head) == (int)o, "folio: its order");
		pa_free_pages(r->pool, head, o);
	}
	validate(r, "folios");
}

/* The owner's migrate: the library copied the bytes first; the table follows the folio. */
static enum pa_migrate_result owned_migrate(void *ctx, uint64_t cookie, struct pa_page *old_folio,
                                            struct pa_page *new_folio, unsigned order)
{
	struct run *r = ctx;
	if (cookie >= NR_OWNED)
		return PA_MIGRATE_BUSY;
	struct owned *o = &r->owned[cookie];
	if (o->page != old_folio || o->order != order)
		return PA_MIGRATE_BUSY;
	if (!holds(r, new_folio, order, cookie))
		r->bad_copies++;
	o->page = new_folio;
	o->moves++;
	return PA_MIGRATE_OK;
}

/*
 * Owned folios of orders 0 and 1 over several pageblocks, half of them
 * freed, then pa_compact(): the low ones move up into the gaps of the high
 * pageblocks (compaction fills partly used pageblocks, never whole free
 * ones), and each holds its bytes where it lands.
 */
static void compaction(struct run *r)
{
	static const struct pa_owner_ops ops_template = { "workload", NULL, owned_migrate, NULL };
	struct pa_owner_ops ops = ops_template;
	ops.ctx = r;
	int id = pa_owner_register(r->pool, &ops);
	check(r, id > 0, "compaction: owner registration");
	if (id <= 0)
		return;
	/* A device holds the CMA area meanwhile: the folios go where compaction moves them. */
	struct pa_cma_info cma = { .nr_pages = 0 };
	struct pa_page *device = NULL;
	if (pa_cma_count(r->pool) && pa_cma_get(r->pool, 0, &cma) == 0)
		device = pa_cma_alloc(r->pool, 0, cma.nr_pages, 0);
	for (uint64_t c = 0; c < NR_OWNED; c++) {
		unsigned order = (unsigned)(c % 2);
		struct pa_page *p =
		        pa_alloc_owned(r->pool, PA_GFP_MOVABLE | PA_GFP_COMP, order, id, c);
		r->owned[c] = (struct owned){ p, order, 0 };
		check(r, p != NULL, "compaction: an owned folio");
		if (p)
			fill(r, p, order, c);
	}
	for (uint64_t c = 0; c < NR_OWNED; c++)
		if (c % 4 >= 2 && r->owned[c].page) {
			pa_free_pages(r->pool, r->owned[c].page, r->owned[c].order);
			r->owned[c].page = NULL;
		}
	pa_drain_all(r->pool);
	long moved = pa_compact(r->pool, -1);
	uint64_t folios_moved = 0;
	for (uint64_t c = 0; c < NR_OWNED; c++) {
		if (!r->owned[c].page)
			continue;
		folios_moved += r->owned[c].moves != 0;
		check(r, holds(r, r->owned[c].page, r->owned[c].order, c),
		      "compaction: a moved folio's bytes");
	}
	check(r, moved > 0 && folios_moved > 0, "compaction: nothing moved");
	check(r, r->bad_copies == 0, "compaction: a new folio without the old one's bytes");
	put_value(r, "compaction: frames migrated", (uint64_t)(moved > 0 ? moved : 0));
	put_value(r, "compaction: owned folios moved, bytes checked", folios_moved);
	for (uint64_t c = 0; c < NR_OWNED; c++)
		if (r->owned[c].page)
			pa_free_pages(r->pool, r->owned[c].page, r->owned[c].order);
	if (device)
		check(r, pa_cma_release(r->pool, 0, device, cma.nr_pages) == 0,
		      "compaction: the CMA area back");
	validate(r, "compaction");
}

/* A contiguous range found and taken, and a CMA allocation, both given back. */
static void contiguous(struct run *r)
{
	struct pa_page *range = pa_alloc_contig_pages(r->pool, 256, PA_GFP_MOVABLE, -1);
	check(r, range != NULL, "contig: 256 frames");
	if (range) {
		fill(r, range, 8, 77);
		check(r, holds(r, range, 8, 77), "contig: its bytes");
		pa_free_contig_range(r->pool, pa_page_to_pfn(r->pool, range), 256);
		put_value(r, "contiguous range: frames taken and freed", 256);
	}
	if (pa_cma_count(r->pool)) {
		struct pa_page *cma = pa_cma_alloc(r->pool, 0, 128, 4);
		check(r, cma != NULL, "cma: 128 frames");
		if (cma) {
			check(r, pa_cma_release(r->pool, 0, cma, 128) == 0, "cma: release");
			put_value(r, "cma: frames taken and released", 128);
		}
	}
	validate(r, "contiguous");
}

unsigned workload_put_report(struct pa_pool *pool, enum pa_report_kind kind, workload_put_fn put)
{
	static char buf[32768];
	int n = pa_report(pool, kind, 0, buf, sizeof buf);
	if (n < 0 || (size_t)n >= sizeof buf)
		return 1;
	put(buf);
	return 0;
}

unsigned workload_run(struct pa_pool *pool, workload_put_fn put)
{
	static struct run r;
	memset(&r, 0, sizeof r);
	r.pool = pool;
	r.put = put;
	every_order(&r);
	folios(&r);
	compaction(&r);
	contiguous(&r);
	return r.failed;
}
