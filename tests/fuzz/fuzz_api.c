/* SPDX-License-Identifier: MIT */
/*
 * A stream of API calls read from the input, against a shadow model.
 *
 * The first byte picks a pool (metadata-only or backed, one or two nodes,
 * CMA, holes, ZONE_MOVABLE); every later op is one byte of kind and a few
 * bytes of arguments. The model holds what the caller holds: blocks (with
 * their order, folio flag, owner and pins), contiguous ranges and CMA
 * ranges. Each call is checked against it: what must be refused is refused
 * with the documented error and changes nothing, what must succeed does, a
 * block is where and what the model says, and after every call pa_validate()
 * passes and the pool's allocated frames equal the model's. In a backed pool
 * every block carries a tag in its first and last frame, so a move that
 * loses or misplaces bytes shows. At the end everything is given back and
 * the pool must be empty.
 *
 * Any broken expectation aborts with a line saying what, so that libFuzzer
 * keeps the input.
 */
#include "fuzz.h"

#include <errno.h>
#include <limits.h>

#define MAX_HELD 384
#define MAX_OPS  512

enum held_kind { H_BLOCK, H_CONTIG, H_CMA };

struct held {
	enum held_kind kind;
	struct pa_page *page; /* the head (H_BLOCK), the first frame otherwise */
	pa_pfn_t pfn;
	uint64_t nr;    /* frames */
	unsigned order; /* H_BLOCK */
	unsigned area;  /* H_CMA */
	bool movable, comp, owned;
	unsigned pins;
	uint64_t tag; /* backed pools: written at both ends */
};

enum owner_answer { ANSWER_OK, ANSWER_AGAIN, ANSWER_BUSY };

static struct model {
	struct pa_pool *pool;
	struct pa_config cfg;
	struct fuzz_platform plat;
	struct held held[MAX_HELD];
	unsigned nr_held;
	uint64_t held_frames;
	uint64_t next_tag;
	int owner;
	enum owner_answer answer;
	bool in_call; /* the migrate callback may only run inside a library call */
} m;

static const char *const pools[] = {
	"mem=32M max_order=10 nr_cpus=2 cma=4M min_free_kbytes=64 kcompactd=manual",
	("mem=16M backing=anon max_order=7 pageblock_order_ceil=5 cma=1M nr_cpus=3 "
	 "pcp_orders=0-7 kcompactd=manual"),
	("mem=256M numa=2 memhole=16M-128M memhole=144M-256M max_order=10 nr_cpus=2 cma=4M@8M "
	 "kcompactd=manual"),
	"mem=64M memhole=16M-17M movablecore=25% nr_cpus=2 cma=2M kcompactd=manual",
	"mem=8M backing=anon init_on_free=1 max_order=9 nr_cpus=2 debug=1 kcompactd=manual",
	"mem=64M page_shift=14 cma=8M cma=4M nr_cpus=4 pcp_orders=none kcompactd=manual",
};

/* ---------------------------------------------------------------------- */
/* The model                                                               */
/* ---------------------------------------------------------------------- */

static pa_pfn_t pfn_of(struct pa_page *p)
{
	return pa_page_to_pfn(m.pool, p);
}

static struct held *find_pfn(pa_pfn_t pfn)
{
	for (unsigned i = 0; i < m.nr_held; i++)
		if (pfn >= m.held[i].pfn && pfn - m.held[i].pfn < m.held[i].nr)
			return &m.held[i];
	return NULL;
}

static struct held *find_page(const struct pa_page *page)
{
	for (unsigned i = 0; i < m.nr_held; i++)
		if (m.held[i].kind == H_BLOCK && m.held[i].page == page)
			return &m.held[i];
	return NULL;
}

/* The i-th held item of a kind (counting round), or NULL if none. */
static struct held *pick(struct input *in, enum held_kind kind)
{
	unsigned n = 0;
	for (unsigned i = 0; i < m.nr_held; i++)
		n += m.held[i].kind == kind;
	if (!n)
		return NULL;
	unsigned k = in_u8(in) % n;
	for (unsigned i = 0; i < m.nr_held; i++)
		if (m.held[i].kind == kind && k-- == 0)
			return &m.held[i];
	return NULL;
}

static uint64_t *tag_at(pa_pfn_t pfn)
{
	return pa_page_address(m.pool, pa_pfn_to_page(m.pool, pfn));
}

static void tag_write(struct held *h)
{
	if (!m.cfg.page_size || !tag_at(h->pfn))
		return;
	h->tag = ++m.next_tag * 0x9e3779b97f4a7c15ull;
	*tag_at(h->pfn) = h->tag;
	*(tag_at(h->pfn + h->nr - 1) + 1) = ~h->tag;
}

static void tag_check(const struct held *h, const char *when)
{
	if (h->kind != H_BLOCK || !tag_at(h->pfn))
		return;
	FUZZ_EXPECT(*tag_at(h->pfn) == h->tag && *(tag_at(h->pfn + h->nr - 1) + 1) == ~h->tag,
	            "%s: the bytes of the order-%u block at pfn %llu are not what was written",
	            when, h->order, (unsigned long long)h->pfn);
}

static struct held *hold(enum held_kind kind, struct pa_page *page, uint64_t nr)
{
	FUZZ_EXPECT(m.nr_held < MAX_HELD, "model full");
	struct held *h = &m.held[m.nr_held++];
	*h = (struct held){ .kind = kind, .page = page, .pfn = pfn_of(page), .nr = nr };
	m.held_frames += nr;
	return h;
}

static void unhold(struct held *h)
{
	m.held_frames -= h->nr;
	*h = m.held[--m.nr_held];
}

static struct held *hold_block(struct pa_page *p, unsigned order, pa_gfp_t gfp)
{
	pa_pfn_t pfn = pfn_of(p);
	FUZZ_EXPECT(pfn != PA_PFN_INVALID && pfn % (1ull << order) == 0,
	            "an order-%u block at pfn %llu: not one of the pool's, or not aligned", order,
	            (unsigned long long)pfn);
	FUZZ_EXPECT(!find_pfn(pfn) && !find_pfn(pfn + (1ull << order) - 1),
	            "the order-%u block at pfn %llu overlaps one the caller holds", order,
	            (unsigned long long)pfn);
	FUZZ_EXPECT(pa_folio_order(m.pool, p) == (int)order && pa_folio_head(m.pool, p) == p,
	            "a new order-%u block at pfn %llu: folio order %d", order,
	            (unsigned long long)pfn, pa_folio_order(m.pool, p));
	if ((gfp & PA_GFP_ZERO) && tag_at(pfn))
		FUZZ_EXPECT(*tag_at(pfn) == 0, "PA_GFP_ZERO block at pfn %llu not zeroed",
		            (unsigned long long)pfn);
	struct held *h = hold(H_BLOCK, p, 1ull << order);
	h->order = order;
	h->movable = gfp & PA_GFP_MOVABLE;
	h->comp = gfp & PA_GFP_COMP;
	tag_write(h);
	return h;
}

/* The pool's allocated frames are the model's, and every invariant holds. */
static void check_pool(const char *after)
{
	char err[512];
	int rc = pa_validate(m.pool, err, sizeof err);
	FUZZ_EXPECT(rc == 0, "after %s: pa_validate: %s", after, err);
	struct pa_usage u;
	pa_get_usage(m.pool, &u);
	FUZZ_EXPECT(u.allocated == m.held_frames,
	            "after %s: %llu frames allocated, the caller holds %llu", after,
	            (unsigned long long)u.allocated, (unsigned long long)m.held_frames);
	FUZZ_EXPECT(u.free + u.allocated + u.reserved == u.managed,
	            "after %s: free + allocated + reserved != managed", after);
}

/* The owner: the model's reference follows the folio when the library moves it. */
static enum pa_migrate_result owner_migrate(void *ctx, uint64_t cookie, struct pa_page *old_folio,
                                            struct pa_page *new_folio, unsigned order)
{
	(void)ctx, (void)cookie;
	FUZZ_EXPECT(m.in_call, "migrate callback outside a library call");
	struct held *h = find_page(old_folio);
	FUZZ_EXPECT(h && h->owned && h->order == order && !h->pins,
	            "migrate of a folio the owner does not hold (order %u)", order);
	if (m.answer != ANSWER_OK)
		return m.answer == ANSWER_AGAIN ? PA_MIGRATE_AGAIN : PA_MIGRATE_BUSY;
	tag_check(h, "migrate (the library copies first)");
	h->page = new_folio;
	h->pfn = pfn_of(new_folio);
	return PA_MIGRATE_OK;
}

/* ---------------------------------------------------------------------- */
/* Ops                                                                     */
/* ---------------------------------------------------------------------- */

static pa_gfp_t in_gfp(struct input *in)
{
	uint16_t v = in_u16(in);
	pa_gfp_t gfp = v & PA_GFP_ALL_FLAGS;
	if ((v >> 12) == 0xf)
		gfp |= 1u << (10 + (v & 15)); /* now and then an unknown bit */
	return gfp;
}

static unsigned in_order(struct input *in)
{
	return in_u8(in) % (m.cfg.max_order + 3);
}

static pa_pfn_t in_pfn(struct input *in)
{
	return in_u32(in) % (m.cfg.total_pages + 8);
}

static void op_alloc(struct input *in, bool owned)
{
	pa_gfp_t gfp = in_gfp(in);
	unsigned order = in_order(in);
	if (m.nr_held == MAX_HELD)
		return;
	m.in_call = true;
	struct pa_page *p = owned ? pa_alloc_owned(m.pool, gfp, order, m.owner, m.next_tag) :
	                            pa_alloc_pages(m.pool, gfp, order);
	m.in_call = false;
	bool refused = (gfp & ~PA_GFP_ALL_FLAGS) || order > m.cfg.max_order ||
	               (owned && !(gfp & PA_GFP_MOVABLE));
	FUZZ_EXPECT(!(p && refused), "gfp %#x order %u: allocated, expected a refusal", gfp, order);
	if (p)
		hold_block(p, order, gfp)->owned = owned;
}

static void op_bulk(struct input *in)
{
	pa_gfp_t gfp = in_gfp(in);
	unsigned order = in_order(in), nr = in_u8(in) % 17;
	struct pa_page *out[16];
	if (m.nr_held + nr > MAX_HELD)
		return;
	m.in_call = true;
	unsigned got = pa_alloc_pages_bulk(m.pool, gfp, order, nr, out);
	m.in_call = false;
	FUZZ_EXPECT(got <= nr, "bulk of %u gave %u", nr, got);
	if ((gfp & ~PA_GFP_ALL_FLAGS) || order > m.cfg.max_order)
		FUZZ_EXPECT(got == 0, "bulk with gfp %#x order %u: %u blocks", gfp, order, got);
	for (unsigned i = 0; i < got; i++)
		hold_block(out[i], order, gfp);
}

static void unpin_all(struct held *h)
{
	for (; h->pins; h->pins--)
		FUZZ_EXPECT(pa_unpin(m.pool, h->page) == 0, "unpin of a pinned block refused");
}

static void free_block(struct held *h)
{
	tag_check(h, "free");
	unpin_all(h);
	m.in_call = true;
	pa_free_pages(m.pool, h->page, h->order);
	m.in_call = false;
	unhold(h);
}

static void op_free(struct input *in)
{
	struct held *h = pick(in, H_BLOCK);
	if (h)
		free_block(h);
}

static uint64_t bad_pages(void)
{
	uint64_t v = 0;
	FUZZ_EXPECT(pa_vmstat_read(m.pool, "bad_page", &v) == 0, "vmstat bad_page unreadable");
	return v;
}

/* A free that must be refused: reported, counted once, nothing else changes. */
static void op_free_wrong(struct input *in)
{
	uint8_t how = in_u8(in) % 4;
	pa_pfn_t pfn = in_pfn(in);
	unsigned order = in_u8(in);
	struct pa_page *page = NULL;
	if (how == 1)
		page = fuzz_foreign_page();
	else if (how >= 2)
		page = pa_pfn_to_page(m.pool, pfn);
	if (how >= 2 && page) {
		int real = pa_folio_order(m.pool, page);
		if (real >= 0 && (unsigned)real == order)
			order = (unsigned)real + 1 +
			        order % 3; /* a wrong order, never the right one */
		if (how == 3)
			page = (struct pa_page *)((uintptr_t)page + 1 + order % 15);
	}
	uint64_t before = bad_pages();
	int lines = m.plat.lines;
	pa_free_pages(m.pool, page, order);
	FUZZ_EXPECT(bad_pages() == before + 1 && m.plat.lines == lines + 1,
	            "a bad free (kind %u, pfn %llu, order %u) was not refused once", how,
	            (unsigned long long)pfn, order);
}

static void op_folio_query(struct input *in)
{
	pa_pfn_t pfn = in_pfn(in);
	struct pa_page *page = pa_pfn_to_page(m.pool, pfn);
	if (!page)
		return;
	struct pa_page *head = pa_folio_head(m.pool, page);
	int order = pa_folio_order(m.pool, page);
	uint64_t cookie = pa_page_cookie(m.pool, page);
	(void)cookie;
	struct held *h = find_pfn(pfn);
	if (!h) {
		FUZZ_EXPECT(!head && order == -1,
		            "pfn %llu is not allocated, yet it has a folio head or order %d",
		            (unsigned long long)pfn, order);
		return;
	}
	if (h->kind != H_BLOCK)
		return;
	bool is_head = pfn == h->pfn;
	FUZZ_EXPECT(head == ((is_head || h->comp) ? h->page : NULL),
	            "pfn %llu of an order-%u block (folio %d): wrong folio head",
	            (unsigned long long)pfn, h->order, h->comp);
	FUZZ_EXPECT(order == (is_head ? (int)h->order : -1), "pfn %llu: folio order %d",
	            (unsigned long long)pfn, order);
}

static void op_set_owner(struct input *in)
{
	struct held *h = pick(in, H_BLOCK);
	uint8_t which = in_u8(in) % 4;
	if (!h)
		return;
	int owner = which == 0 ? 0 : which == 1 ? m.owner : which == 2 ? m.owner + 1 : -1;
	int rc = pa_set_owner(m.pool, h->page, owner, 42);
	int want = (owner < 0 || owner > m.owner || !h->movable) ? -EINVAL : 0;
	FUZZ_EXPECT(rc == want, "pa_set_owner(owner %d) of a %smovable block: %d, expected %d",
	            owner, h->movable ? "" : "non-", rc, want);
	if (rc == 0)
		h->owned = owner != 0;
}

static void op_pin(struct input *in, bool pin)
{
	struct held *h = pick(in, H_BLOCK);
	if (!h)
		return;
	if (pin) {
		int rc = pa_pin(m.pool, h->page);
		FUZZ_EXPECT(rc == (h->pins == 255 ? -EOVERFLOW : 0), "pa_pin: %d with %u pins", rc,
		            h->pins);
		h->pins += rc == 0;
	} else {
		int rc = pa_unpin(m.pool, h->page);
		FUZZ_EXPECT(rc == (h->pins ? 0 : -EINVAL), "pa_unpin: %d with %u pins", rc,
		            h->pins);
		h->pins -= rc == 0;
	}
}

static void op_split(struct input *in)
{
	struct held *h = pick(in, H_BLOCK);
	unsigned new_order = in_u8(in) % 12, claim = in_u8(in) % 8;
	if (!h)
		return;
	unsigned order = claim == 0 ? h->order + 1 : h->order; /* now and then a wrong one */
	uint64_t pieces = new_order < order ? 1ull << (order - new_order) : 0;
	if (pieces && m.nr_held + pieces > MAX_HELD)
		return;
	int rc = pa_split_folio(m.pool, h->page, order, new_order);
	int want = (order != h->order || new_order >= order) ? -EINVAL : h->pins ? -EBUSY : 0;
	FUZZ_EXPECT(rc == want, "split of an order-%u block (%u pins) as %u to %u: %d, expected %d",
	            h->order, h->pins, order, new_order, rc, want);
	if (rc)
		return;
	struct held whole = *h;
	unhold(h);
	for (uint64_t i = 0; i < pieces; i++) {
		pa_pfn_t pfn = whole.pfn + (i << new_order);
		struct held *p = hold(H_BLOCK, pa_pfn_to_page(m.pool, pfn), 1ull << new_order);
		p->order = new_order;
		p->movable = whole.movable;
		p->comp = whole.comp;
		p->owned = whole.owned;
		tag_write(p);
	}
}

static void op_pcp_order(struct input *in)
{
	unsigned order = in_u8(in) % (m.cfg.max_order + 3), v = in_u8(in) % 3;
	char path[64], val[8];
	snprintf(path, sizeof path, "pcp/orders/%u/enabled", order);
	snprintf(val, sizeof val, "%u", v);
	int rc = pa_ctl_write(m.pool, path, val);
	int want = (order > m.cfg.max_order || v > 1) ? -EINVAL : 0;
	FUZZ_EXPECT(rc == want, "%s = %s: %d, expected %d", path, val, rc, want);
}

static void op_drain(struct input *in)
{
	switch (in_u8(in) % 3) {
	case 0:
		pa_drain_local(m.pool);
		break;
	case 1:
		pa_drain_all(m.pool);
		break;
	default:
		FUZZ_EXPECT(pa_ctl_write(m.pool, "pcp/drain", "1") == 0, "pcp/drain refused");
	}
}

static void check_all_tags(const char *when)
{
	for (unsigned i = 0; i < m.nr_held; i++)
		tag_check(&m.held[i], when);
}

static void op_compact(struct input *in, bool kcompactd)
{
	int node = (int)(in_u8(in) % (m.cfg.nr_nodes + 3)) - 2;
	m.in_call = true;
	long rc = kcompactd ? pa_kcompactd_run(m.pool, node) : pa_compact(m.pool, node);
	m.in_call = false;
	bool bad = node < (kcompactd ? 0 : -1) || node >= (int)m.cfg.nr_nodes;
	FUZZ_EXPECT(bad ? rc == -EINVAL : rc >= 0, "compaction of node %d: %ld", node, rc);
	check_all_tags("compaction");
}

static void op_contig_range(struct input *in)
{
	pa_pfn_t start = in_pfn(in);
	uint64_t len = in_u16(in) % 2048;
	unsigned mt = in_u8(in) % 8 == 0 ? PA_MT_CMA : PA_MT_MOVABLE;
	if (m.nr_held == MAX_HELD)
		return;
	m.in_call = true;
	int rc = pa_alloc_contig_range(m.pool, start, start + len, mt, 0);
	m.in_call = false;
	FUZZ_EXPECT(rc == 0 || rc == -EINVAL || rc == -EBUSY, "contig range: %d", rc);
	if (len == 0 || start + len > m.cfg.total_pages)
		FUZZ_EXPECT(rc == -EINVAL, "contig range [%llu, +%llu): %d, expected -EINVAL",
		            (unsigned long long)start, (unsigned long long)len, rc);
	if (rc == 0)
		hold(H_CONTIG, pa_pfn_to_page(m.pool, start), len);
	check_all_tags("a contiguous range");
}

static void op_contig_pages(struct input *in)
{
	uint64_t nr = in_u16(in) % 2048;
	pa_gfp_t gfp = in_gfp(in) | PA_GFP_NOWARN;
	int node = (int)(in_u8(in) % (m.cfg.nr_nodes + 3)) - 2;
	if (m.nr_held == MAX_HELD)
		return;
	m.in_call = true;
	struct pa_page *p = pa_alloc_contig_pages(m.pool, nr, gfp, node);
	m.in_call = false;
	if (nr == 0 || node < -1 || node >= (int)m.cfg.nr_nodes || (gfp & ~PA_GFP_ALL_FLAGS))
		FUZZ_EXPECT(!p, "contig pages (%llu, node %d, gfp %#x) not refused",
		            (unsigned long long)nr, node, gfp);
	if (p) {
		struct held *h = hold(H_CONTIG, p, nr);
		FUZZ_EXPECT(h->pfn % (1ull << (63 - __builtin_clzll(nr))) == 0,
		            "contig pages of %llu at pfn %llu: not aligned", (unsigned long long)nr,
		            (unsigned long long)h->pfn);
	}
	check_all_tags("contiguous pages");
}

/* Take [lo, hi) out of the held ranges of a kind (and CMA area): what a release gave back. */
static void release_frames(enum held_kind kind, unsigned area, pa_pfn_t lo, pa_pfn_t hi)
{
	for (unsigned i = m.nr_held; i-- > 0;) {
		struct held whole = m.held[i];
		pa_pfn_t end = whole.pfn + whole.nr;
		if (whole.kind != kind || whole.area != area || hi <= whole.pfn || lo >= end)
			continue;
		unhold(&m.held[i]); /* the last one moves here: it was looked at already */
		if (whole.pfn < lo)
			hold(kind, whole.page, lo - whole.pfn)->area = area;
		if (hi < end)
			hold(kind, pa_pfn_to_page(m.pool, hi), end - hi)->area = area;
	}
}

/* Is every frame of [lo, hi) in a held range of this kind? Which one, if a single one. */
static bool held_as(enum held_kind kind, pa_pfn_t lo, pa_pfn_t hi, struct held **single)
{
	*single = find_pfn(lo);
	for (pa_pfn_t p = lo; p < hi; p++) {
		struct held *h = find_pfn(p);
		if (!h || h->kind != kind)
			return false;
		if (h != *single)
			*single = NULL;
	}
	return true;
}

/*
 * pa_free_contig_range() of all or part of a held range, or of anything
 * else (free frames, blocks of pa_alloc_pages(), CMA ranges, past the pool,
 * a count that wraps): that must be one bad free and change nothing.
 */
static void op_free_contig(struct input *in)
{
	uint8_t how = in_u8(in) % 4;
	struct held *h = pick(in, H_CONTIG);
	uint64_t a = in_u16(in), b = in_u16(in);
	pa_pfn_t lo = in_pfn(in);
	uint64_t nr = b % 1100;
	if (m.nr_held + 2 > MAX_HELD)
		return;
	if (how < 2 && h) { /* all of a held range, or a part of it */
		uint64_t x = a % (h->nr + 1), y = b % (h->nr + 1);
		lo = h->pfn + (how == 0 ? 0 : x < y ? x : y);
		nr = how == 0 ? h->nr : (x < y ? y - x : x - y);
	} else if (how == 3) {
		nr = UINT64_MAX - (a % 4); /* wraps past the end of the pfn space */
	}
	struct held *single = NULL;
	bool fits = nr <= m.cfg.total_pages && lo + nr <= m.cfg.total_pages;
	bool valid = fits && held_as(H_CONTIG, lo, lo + nr, &single);
	uint64_t before = bad_pages();
	pa_free_contig_range(m.pool, lo, nr);
	bool refused = bad_pages() != before;
	FUZZ_EXPECT(bad_pages() <= before + 1, "free_contig_range: more than one bad free counted");
	if (nr == 0 || (valid && single))
		FUZZ_EXPECT(!refused, "free_contig_range(%llu, %llu) of a held range refused",
		            (unsigned long long)lo, (unsigned long long)nr);
	if (!valid)
		FUZZ_EXPECT(refused,
		            "free_contig_range(%llu, %llu) of frames not held as a range "
		            "was not refused",
		            (unsigned long long)lo, (unsigned long long)nr);
	if (!refused && nr)
		release_frames(H_CONTIG, 0, lo, lo + nr);
}

static void op_cma_alloc(struct input *in)
{
	unsigned nr_cma = pa_cma_count(m.pool);
	unsigned area = in_u8(in) % (nr_cma + 1);
	uint16_t c = in_u16(in);
	uint64_t count = c >= 0xfff0 ? UINT64_MAX - (c & 15) : c % 1024; /* now and then a wrap */
	unsigned align = in_u8(in) % (m.cfg.max_order + 2);
	if (m.nr_held == MAX_HELD)
		return;
	m.in_call = true;
	struct pa_page *p = pa_cma_alloc(m.pool, area, count, align);
	m.in_call = false;
	if (area >= nr_cma || !count || align > m.cfg.max_order || count > m.cfg.total_pages)
		FUZZ_EXPECT(!p, "cma alloc (area %u, count %llu, align %u) not refused", area,
		            (unsigned long long)count, align);
	if (!p)
		return;
	struct held *h = hold(H_CMA, p, count);
	h->area = area;
	struct pa_cma_info ci;
	FUZZ_EXPECT(pa_cma_get(m.pool, area, &ci) == 0 && h->pfn >= ci.start_pfn &&
	                    h->pfn + count <= ci.start_pfn + ci.nr_pages &&
	                    h->pfn % (1ull << align) == 0,
	            "cma alloc of %llu at pfn %llu: outside area %u or not aligned",
	            (unsigned long long)count, (unsigned long long)h->pfn, area);
	check_all_tags("cma");
}

/*
 * pa_cma_release() of all or any part of a held CMA range, or wrongly: the
 * wrong area, a count of 0, one frame too many, a count that wraps, frames
 * not taken; and the CMA blocks given to pa_free_pages() or
 * pa_free_contig_range(), which must be bad frees.
 */
static void op_cma_release(struct input *in)
{
	struct held *h = pick(in, H_CMA);
	uint8_t how = in_u8(in) % 8;
	uint64_t a = in_u16(in), b = in_u16(in);
	if (!h || m.nr_held + 2 > MAX_HELD)
		return;
	struct held *next = find_pfn(h->pfn + h->nr);
	uint64_t before = bad_pages();
	int rc, want = -EINVAL;
	switch (how) {
	case 0:
		rc = pa_cma_release(m.pool, h->area + 1 + (unsigned)(a % 2) * 1000, h->page, h->nr);
		break;
	case 1:
		rc = pa_cma_release(m.pool, h->area, h->page, 0);
		break;
	case 2:
		if (next)
			return;
		rc = pa_cma_release(m.pool, h->area, h->page, h->nr + 1);
		break;
	case 3:
		/* pfn + count wraps to a few frames (or, at pfn 0, the count is past any area) */
		rc = pa_cma_release(m.pool, h->area, h->page,
		                    h->pfn > 3 ? 0 - h->pfn + 1 + a % 3 : UINT64_MAX - a % 4);
		break;
	case 4: /* the head block to pa_free_pages() with its own order */
		pa_free_pages(m.pool, h->page, (unsigned)pa_folio_order(m.pool, h->page));
		FUZZ_EXPECT(bad_pages() == before + 1,
		            "pa_free_pages() of a CMA block not refused");
		return;
	case 5:
		pa_free_contig_range(m.pool, h->pfn, h->nr);
		FUZZ_EXPECT(bad_pages() == before + 1,
		            "pa_free_contig_range() of a CMA range not refused");
		return;
	default: { /* all, or any part */
		uint64_t x = a % h->nr, n = how == 6 ? h->nr - x : 1 + b % (h->nr - x);
		if (how == 6 && b % 2)
			x = 0, n = h->nr;
		pa_pfn_t lo = h->pfn + x;
		unsigned area = h->area;
		rc = pa_cma_release(m.pool, area, pa_pfn_to_page(m.pool, lo), n);
		FUZZ_EXPECT(rc == 0, "cma release of %llu frames at +%llu of %llu: %d",
		            (unsigned long long)n, (unsigned long long)x, (unsigned long long)h->nr,
		            rc);
		release_frames(H_CMA, area, lo, lo + n);
		return;
	}
	}
	FUZZ_EXPECT(rc == want, "wrong cma release (kind %u): %d", how, rc);
}

static void op_ctl(struct input *in)
{
	static const char *const knobs[] = {
		"watermark_scale_factor", "min_free_kbytes",          "pcp/high_fraction",
		"compaction/fail_pct",    "compaction_proactiveness",
	};
	const char *path = knobs[in_u8(in) % 5];
	char val[16];
	snprintf(val, sizeof val, "%u", (unsigned)in_u16(in) % 4096);
	int rc = pa_ctl_write(m.pool, path, val);
	FUZZ_EXPECT(rc == 0 || rc == -EINVAL, "%s = %s: %d", path, val, rc);
}

static void op_read(struct input *in)
{
	static char buf[1 << 16];
	unsigned kind = in_u8(in) % (PA_REPORT_COUNT + 1), flags = in_u8(in) % 3;
	size_t len = in_u16(in) % sizeof buf;
	memset(buf, 'x', len < 64 ? len : 64);
	int rc = pa_report(m.pool, (enum pa_report_kind)kind, flags, len ? buf : NULL, len);
	if (kind >= PA_REPORT_COUNT || flags > 1) {
		FUZZ_EXPECT(rc == -EINVAL, "report %u flags %u: %d", kind, flags, rc);
		return;
	}
	FUZZ_EXPECT(rc >= 0, "report %u: %d", kind, rc);
	if (len)
		FUZZ_EXPECT(memchr(buf, '\0', len) != NULL, "report %u: no NUL in %zu bytes", kind,
		            len);
}

enum op {
	OP_ALLOC,
	OP_ALLOC_OWNED,
	OP_BULK,
	OP_FREE,
	OP_FREE_WRONG,
	OP_FOLIO_QUERY,
	OP_SET_OWNER,
	OP_PIN,
	OP_UNPIN,
	OP_SPLIT,
	OP_PCP_ORDER,
	OP_DRAIN,
	OP_COMPACT,
	OP_KCOMPACTD,
	OP_CONTIG_RANGE,
	OP_CONTIG_PAGES,
	OP_FREE_CONTIG,
	OP_CMA_ALLOC,
	OP_CMA_RELEASE,
	OP_CPU,
	OP_ANSWER,
	OP_CTL,
	OP_READ,
	OP_COUNT
};

static const char *const op_names[OP_COUNT] = {
	"alloc",       "alloc_owned", "bulk",         "free",         "free_wrong",  "folio_query",
	"set_owner",   "pin",         "unpin",        "split",        "pcp_order",   "drain",
	"compact",     "kcompactd",   "contig_range", "contig_pages", "free_contig", "cma_alloc",
	"cma_release", "cpu",         "answer",       "ctl",          "read",
};

static void run_op(enum op op, struct input *in)
{
	switch (op) {
	case OP_ALLOC:
	case OP_ALLOC_OWNED:
		op_alloc(in, op == OP_ALLOC_OWNED);
		break;
	case OP_BULK:
		op_bulk(in);
		break;
	case OP_FREE:
		op_free(in);
		break;
	case OP_FREE_WRONG:
		op_free_wrong(in);
		break;
	case OP_FOLIO_QUERY:
		op_folio_query(in);
		break;
	case OP_SET_OWNER:
		op_set_owner(in);
		break;
	case OP_PIN:
	case OP_UNPIN:
		op_pin(in, op == OP_PIN);
		break;
	case OP_SPLIT:
		op_split(in);
		break;
	case OP_PCP_ORDER:
		op_pcp_order(in);
		break;
	case OP_DRAIN:
		op_drain(in);
		break;
	case OP_COMPACT:
	case OP_KCOMPACTD:
		op_compact(in, op == OP_KCOMPACTD);
		break;
	case OP_CONTIG_RANGE:
		op_contig_range(in);
		break;
	case OP_CONTIG_PAGES:
		op_contig_pages(in);
		break;
	case OP_FREE_CONTIG:
		op_free_contig(in);
		break;
	case OP_CMA_ALLOC:
		op_cma_alloc(in);
		break;
	case OP_CMA_RELEASE:
		op_cma_release(in);
		break;
	case OP_CPU:
		m.plat.cpu = in_u8(in);
		break;
	case OP_ANSWER:
		m.answer = (enum owner_answer)(in_u8(in) % 3);
		break;
	case OP_CTL:
		op_ctl(in);
		break;
	case OP_READ:
		op_read(in);
		break;
	default:
		break;
	}
}

/* Give everything back: the pool must then hold nothing. */
static void give_all_back(void)
{
	m.answer = ANSWER_OK;
	while (m.nr_held) {
		struct held *h = &m.held[m.nr_held - 1];
		if (h->kind == H_BLOCK) {
			free_block(h);
		} else if (h->kind == H_CONTIG) {
			pa_free_contig_range(m.pool, h->pfn, h->nr);
			unhold(h);
		} else {
			int rc = pa_cma_release(m.pool, h->area, h->page, h->nr);
			FUZZ_EXPECT(rc == 0, "final cma release: %d", rc);
			unhold(h);
		}
	}
	check_pool("giving everything back");
}

static const struct pa_owner_ops owner_ops = { .name = "fuzz", .migrate = owner_migrate };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	memset(&m, 0, sizeof m);
	const char *line = pools[in_u8(&in) % (sizeof pools / sizeof pools[0])];
	m.pool = fuzz_boot(line, &m.plat);
	pa_get_config(m.pool, &m.cfg);
	m.owner = pa_owner_register(m.pool, &owner_ops);
	FUZZ_EXPECT(m.owner == 1, "owner registration: %d", m.owner);
	for (unsigned n = 0; n < MAX_OPS && in.n; n++) {
		enum op op = (enum op)(in_u8(&in) % OP_COUNT);
		run_op(op, &in);
		check_pool(op_names[op]);
	}
	give_all_back();
	pa_shutdown(m.pool);
	return 0;
}
