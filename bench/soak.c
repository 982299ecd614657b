/* SPDX-License-Identifier: MIT */
/*
 * soak: everything at once for a while, and nothing lost or corrupted.
 *
 * Threads (each posing as its own CPU) allocate and free blocks of mixed
 * orders in a backed pool, holding up to 60 % of it: mostly movable folios
 * of an owner (compact_common.h), which compaction, contiguous ranges and
 * CMA move, some unmovable and reclaimable pages. Every block carries a
 * pattern, checked before it is freed. Meanwhile one more thread runs the
 * background jobs at random: compaction (whole pool or one kcompactd pass)
 * with compaction/fail_pct fault injection, drains, per-CPU order switches,
 * contiguous ranges and CMA allocations (filled, checked, given back).
 *
 * The run is cut into rounds. Between rounds, with every thread stopped,
 * the pool is drained and checked: pa_validate, every folio where its
 * owner thinks it is with its bytes intact, and the frames allocated equal
 * to the frames the threads hold (a difference is a lost frame). At the end
 * everything is freed and no frame may stay allocated.
 *
 * Exits non-zero on any corrupt byte, lost frame or failed validation.
 */
#define _GNU_SOURCE
#include "compact_common.h"

#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define SK_BOOT          "mem=128M backing=anon cma=16M kcompactd=manual"
#define SK_SECONDS       10.0
#define SK_THREADS       2 /* allocating threads; one more runs the background jobs */
#define SK_SEED          42
#define SK_ROUND_NS      500000000ull /* between checkpoints */
#define SK_JOB_GAP_NS    2000000ull   /* between background jobs */
#define SK_HELD_PERCENT  85           /* of managed frames, shared by the threads */
#define SK_ALLOC_PERCENT 55           /* of steps, while under the budget */
#define SK_CLOCK_EVERY   64           /* steps between looks at the clock */

enum sk_kind { SK_OWNED, SK_PLAIN };

/* A block a thread holds: an owner's slot, or a page of its own. */
struct sk_block {
	uint64_t slot;        /* SK_OWNED */
	struct pa_page *page; /* SK_PLAIN */
	uint64_t tag;         /* SK_PLAIN: its pattern */
	uint8_t order, kind;
};

struct sk_counts {
	uint64_t ops, allocs, frees, alloc_fails, checks, bad;
	uint64_t compactions, drains, switches, contig_tried, contig_ok, cma_tried, cma_ok;
};

struct soak;

struct sk_thread {
	struct soak *s;
	unsigned id; /* 0: the background jobs; 1..: allocating */
	uint64_t rng;
	struct sk_block *set;
	uint64_t nr, cap;   /* blocks held, room */
	uint64_t held;      /* frames held */
	uint64_t budget;    /* frames it may hold */
	uint64_t next_tag;  /* patterns of its own pages */
	struct sk_counts c; /* what it did */
	char error[256];    /* the first corruption it saw */
};

struct soak {
	const struct bench_opts *opt;
	struct pa_pool *pool;
	struct pa_config cfg;
	struct cw_owner owner;
	char boot[1024];
	unsigned nt; /* threads, the background one included */
	struct sk_thread *t;
	uint64_t round_end_ns;
	uint64_t baseline;  /* frames allocated right after boot */
	uint64_t migrated0; /* pgmigrate_success right after boot */
	uint64_t rounds, validates, validate_failures, verified, verify_bad, lost;
	char error[512]; /* the first failure of a checkpoint */
};

static uint64_t sk_vmstat(struct pa_pool *pool, const char *name)
{
	uint64_t v = 0;
	pa_vmstat_read(pool, name, &v);
	return v;
}

static void sk_note(struct sk_thread *t, const char *what, uint64_t order)
{
	if (t->c.bad++ == 0)
		snprintf(t->error, sizeof t->error, "%s of order %" PRIu64 " lost its pattern",
		         what, order);
}

/* ---------------------------------------------------------------------- */
/* Allocating threads                                                      */
/* ---------------------------------------------------------------------- */

/* Half order 0, then small orders, some mid-sized, a few huge (THP-sized). */
static unsigned sk_order(const struct soak *s, uint64_t r)
{
	unsigned p = (unsigned)(r % 100), k = (unsigned)(r / 100 % 3);
	unsigned huge =
	        s->cfg.huge_order >= 0 ? (unsigned)s->cfg.huge_order : s->cfg.pageblock_order;
	unsigned order = p < 50 ? 0 : p < 80 ? 1 + k : p < 95 ? 4 + k : huge;
	return order < s->cfg.max_order ? order : s->cfg.max_order;
}

static void sk_alloc(struct sk_thread *t, uint64_t r)
{
	struct soak *s = t->s;
	unsigned order = sk_order(s, r >> 8);
	unsigned kind = (unsigned)(r >> 32) % 100;
	struct sk_block b = { .order = (uint8_t)order, .kind = kind < 80 ? SK_OWNED : SK_PLAIN };
	bool ok;
	if (b.kind == SK_OWNED) {
		b.slot = cw_alloc(&s->owner, 0, order);
		ok = b.slot != CW_NONE;
	} else {
		pa_gfp_t gfp = kind < 95 ? PA_GFP_KERNEL : PA_GFP_RECLAIMABLE;
		b.page = pa_alloc_pages(s->pool, gfp | PA_GFP_NOWARN, order);
		b.tag = (uint64_t)t->id << 48 | ++t->next_tag;
		ok = b.page != NULL;
		if (ok)
			cw_pattern_fill(&s->owner, b.page, b.tag, 1ull << order);
	}
	if (!ok) {
		t->c.alloc_fails++;
		return;
	}
	t->set[t->nr++] = b;
	t->held += 1ull << order;
	t->c.allocs++;
}

/* Check the block's bytes, then free it. */
static void sk_free(struct sk_thread *t, uint64_t i)
{
	struct soak *s = t->s;
	struct sk_block b = t->set[i];
	bool ok;
	if (b.kind == SK_OWNED) {
		ok = cw_check(&s->owner, b.slot);
		cw_free(&s->owner, b.slot);
	} else {
		ok = cw_pattern_check(&s->owner, b.page, b.tag, 1ull << b.order);
		pa_free_pages(s->pool, b.page, b.order);
	}
	if (!ok)
		sk_note(t, b.kind == SK_OWNED ? "a movable folio" : "an unmovable page", b.order);
	t->c.checks++;
	t->set[i] = t->set[--t->nr];
	t->held -= 1ull << b.order;
	t->c.frees++;
}

static void sk_step(struct sk_thread *t)
{
	uint64_t r = bench_rand(&t->rng);
	if (r % 100 < SK_ALLOC_PERCENT && t->held < t->budget && t->nr < t->cap)
		sk_alloc(t, r);
	else if (t->nr)
		sk_free(t, bench_rand(&t->rng) % t->nr);
	if (r % 1024 == 1) {
		pa_drain_local(t->s->pool);
		t->c.drains++;
	}
	t->c.ops++;
}

/* ---------------------------------------------------------------------- */
/* Background jobs                                                         */
/* ---------------------------------------------------------------------- */

/* Fill a range the thread was given, check it, give it back. */
static bool sk_range_check(struct sk_thread *t, struct pa_page *p, uint64_t nr)
{
	uint64_t tag = (uint64_t)t->id << 48 | ++t->next_tag;
	cw_pattern_fill(&t->s->owner, p, tag, nr);
	sched_yield(); /* let the others run while it is held */
	bool ok = cw_pattern_check(&t->s->owner, p, tag, nr);
	t->c.checks++;
	return ok;
}

static void sk_contig(struct sk_thread *t, uint64_t r)
{
	struct pa_pool *pool = t->s->pool;
	uint64_t nr = 1ull << (4 + r % 5); /* 16..256 frames */
	t->c.contig_tried++;
	struct pa_page *p = pa_alloc_contig_pages(pool, nr, PA_GFP_NOWARN, -1);
	if (!p)
		return;
	t->c.contig_ok++;
	if (!sk_range_check(t, p, nr))
		sk_note(t, "a contiguous range", nr);
	pa_free_contig_range(pool, pa_page_to_pfn(pool, p), nr);
}

static void sk_cma(struct sk_thread *t, uint64_t r)
{
	struct pa_pool *pool = t->s->pool;
	uint64_t count = 1ull << (r % 9); /* 1..256 frames */
	unsigned align = (unsigned)(r >> 8) % 4;
	if (!pa_cma_count(pool))
		return;
	t->c.cma_tried++;
	struct pa_page *p = pa_cma_alloc(pool, 0, count, align);
	if (!p)
		return;
	t->c.cma_ok++;
	if (!sk_range_check(t, p, count))
		sk_note(t, "a CMA allocation", count);
	if (pa_cma_release(pool, 0, p, count))
		sk_note(t, "a CMA release", count);
}

/* Turn one order of the per-CPU lists on or off (never order 0, nor past a pageblock). */
static void sk_switch(struct sk_thread *t, uint64_t r)
{
	struct soak *s = t->s;
	unsigned top = s->cfg.pageblock_order < s->cfg.max_order ? s->cfg.pageblock_order :
	                                                           s->cfg.max_order;
	if (top < 1)
		return;
	char path[48];
	uint64_t on;
	snprintf(path, sizeof path, "pcp/orders/%u/enabled", 1 + (unsigned)(r % top));
	if (pa_ctl_read_u64(s->pool, path, &on) < 0)
		return;
	if (pa_ctl_write(s->pool, path, on ? "0" : "1") == 0)
		t->c.switches++;
}

static void sk_compact(struct sk_thread *t, uint64_t r)
{
	static const uint64_t fail_pct[] = { 0, 0, 10, 25, 50 };
	struct pa_pool *pool = t->s->pool;
	cw_ctl_set(pool, "compaction/fail_pct", fail_pct[r % 5], NULL);
	if ((r >> 8) & 1)
		pa_compact(pool, -1);
	else
		pa_kcompactd_run(pool, 0);
	t->c.compactions++;
}

static void sk_job(struct sk_thread *t)
{
	uint64_t r = bench_rand(&t->rng);
	switch (r % 6) {
	case 0:
		sk_compact(t, r >> 3);
		break;
	case 1:
		pa_drain_all(t->s->pool);
		t->c.drains++;
		break;
	case 2:
		sk_switch(t, r >> 3);
		break;
	case 3:
	case 4:
		sk_contig(t, r >> 3);
		break;
	default:
		sk_cma(t, r >> 3);
		break;
	}
	t->c.ops++;
}

static void *sk_thread_main(void *arg)
{
	struct sk_thread *t = arg;
	uint64_t end = t->s->round_end_ns, next_job = 0;
	bench_pose_as_cpu(t->id);
	for (uint64_t i = 0;; i++) {
		if (t->id == 0) {
			uint64_t now = bench_now_ns();
			if (now >= end)
				break;
			if (now >= next_job) {
				sk_job(t);
				next_job = now + SK_JOB_GAP_NS;
			} else {
				sched_yield();
			}
			continue;
		}
		/* The clock only after the first steps: a worker the machine started late still works. */
		if (i % SK_CLOCK_EVERY == SK_CLOCK_EVERY - 1 && bench_now_ns() >= end)
			break;
		sk_step(t);
	}
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* Checkpoints                                                             */
/* ---------------------------------------------------------------------- */

static void sk_fail(struct soak *s, const char *fmt, const char *what)
{
	if (!s->error[0])
		snprintf(s->error, sizeof s->error, fmt, what);
}

/* Nothing runs: the pool is drained and every frame and byte accounted for. */
static void sk_checkpoint(struct soak *s)
{
	char err[400] = "";
	pa_drain_all(s->pool);
	s->validates++;
	if (pa_validate(s->pool, err, sizeof err)) {
		s->validate_failures++;
		sk_fail(s, "pa_validate: %s", err);
	}
	uint64_t checked, bad = cw_verify(&s->owner, &checked);
	s->verified += checked;
	s->verify_bad += bad;
	if (bad)
		sk_fail(s, "%s", "a folio is not where its owner thinks, or its bytes changed");
	uint64_t held = 0;
	for (unsigned i = 0; i < s->nt; i++)
		held += s->t[i].held;
	struct pa_usage u;
	pa_get_usage(s->pool, &u);
	uint64_t want = s->baseline + held;
	if (u.allocated != want) {
		s->lost += u.allocated > want ? u.allocated - want : want - u.allocated;
		sk_fail(s, "%s", "the frames allocated differ from the frames held");
	}
}

/* Free what every thread holds (checking it); then no frame may stay allocated. */
static void sk_finish(struct soak *s)
{
	for (unsigned i = 0; i < s->nt; i++)
		while (s->t[i].nr)
			sk_free(&s->t[i], s->t[i].nr - 1);
	cw_ctl_set(s->pool, "compaction/fail_pct", 0, NULL);
	sk_checkpoint(s);
}

/* ---------------------------------------------------------------------- */
/* The run                                                                 */
/* ---------------------------------------------------------------------- */

static int sk_setup(struct soak *s)
{
	unsigned workers = s->opt->threads ? s->opt->threads : SK_THREADS;
	s->nt = workers + 1;
	bench_posing_line(s->opt, SK_BOOT, s->nt, s->boot, sizeof s->boot);
	if (bench_boot_posing(s->opt, SK_BOOT, s->nt, &s->pool))
		return -1;
	pa_get_config(s->pool, &s->cfg);
	struct pa_usage u;
	pa_get_usage(s->pool, &u);
	s->baseline = u.allocated;
	s->migrated0 = sk_vmstat(s->pool, "pgmigrate_success");
	if (cw_owner_init(&s->owner, s->pool, s->cfg.total_pages + 1))
		return -1;
	if (!s->owner.backed) {
		fprintf(stderr,
		        "pagealloc: soak needs a backed pool (backing=anon) to check bytes\n");
		return -1;
	}
	s->t = calloc(s->nt, sizeof *s->t);
	if (!s->t)
		return -1;
	uint64_t budget = u.managed * SK_HELD_PERCENT / 100 / workers;
	uint64_t seed = s->opt->seed_set ? s->opt->seed : SK_SEED;
	for (unsigned i = 0; i < s->nt; i++) {
		struct sk_thread *t = &s->t[i];
		*t = (struct sk_thread){ .s = s, .id = i, .rng = bench_seed_state(seed, i) };
		t->budget = i ? budget : 0;
		t->cap = t->budget + 1;
		t->set = calloc(t->cap, sizeof *t->set);
		if (!t->set)
			return -1;
	}
	return 0;
}

static void sk_sum(const struct soak *s, struct sk_counts *c)
{
	*c = (struct sk_counts){ 0 };
	for (unsigned i = 0; i < s->nt; i++) {
		const struct sk_counts *x = &s->t[i].c;
		c->ops += x->ops;
		c->allocs += x->allocs;
		c->frees += x->frees;
		c->alloc_fails += x->alloc_fails;
		c->checks += x->checks;
		c->bad += x->bad;
		c->compactions += x->compactions;
		c->drains += x->drains;
		c->switches += x->switches;
		c->contig_tried += x->contig_tried;
		c->contig_ok += x->contig_ok;
		c->cma_tried += x->cma_tried;
		c->cma_ok += x->cma_ok;
	}
}

static const char *sk_first_error(const struct soak *s)
{
	for (unsigned i = 0; i < s->nt; i++)
		if (s->t[i].error[0])
			return s->t[i].error;
	return s->error;
}

static void sk_print(const struct soak *s, double seconds, FILE *f)
{
	struct sk_counts c;
	struct bench_out o;
	char buf[64];
	sk_sum(s, &c);
	bool ok = !c.bad && !s->verify_bad && !s->lost && !s->validate_failures;
	bench_out_begin(&o, f, s->opt->json, "soak");
	bench_out_str(&o, "boot", s->boot);
	bench_out_f64(&o, "seconds", seconds);
	bench_out_u64(&o, "threads", s->nt - 1);
	bench_out_u64(&o, "operations", c.ops);
	bench_out_u64(&o, "allocations", c.allocs);
	bench_out_u64(&o, "allocation_failures", c.alloc_fails);
	bench_out_u64(&o, "frees", c.frees);
	bench_out_u64(&o, "moves", atomic_load(&s->owner.moved));
	bench_out_u64(&o, "moves_refused", atomic_load(&s->owner.refused));
	bench_out_u64(&o, "pages_migrated", sk_vmstat(s->pool, "pgmigrate_success") - s->migrated0);
	bench_out_u64(&o, "compactions", c.compactions);
	bench_out_u64(&o, "drains", c.drains);
	bench_out_u64(&o, "pcp_order_switches", c.switches);
	snprintf(buf, sizeof buf, "%" PRIu64 " of %" PRIu64, c.contig_ok, c.contig_tried);
	bench_out_str(&o, "contig_ranges", buf);
	snprintf(buf, sizeof buf, "%" PRIu64 " of %" PRIu64, c.cma_ok, c.cma_tried);
	bench_out_str(&o, "cma_allocations", buf);
	bench_out_u64(&o, "checks", c.checks + s->verified);
	bench_out_u64(&o, "corrupt", c.bad + s->verify_bad);
	bench_out_u64(&o, "validates", s->validates);
	bench_out_u64(&o, "validate_failures", s->validate_failures);
	bench_out_u64(&o, "lost_frames", s->lost);
	bench_out_str(&o, "result", ok ? "ok" : sk_first_error(s));
	bench_out_end(&o);
}

static void sk_teardown(struct soak *s)
{
	if (s->pool)
		pa_shutdown(s->pool);
	cw_owner_destroy(&s->owner);
	for (unsigned i = 0; s->t && i < s->nt; i++)
		free(s->t[i].set);
	free(s->t);
}

static int sk_failed(const struct soak *s)
{
	struct sk_counts c;
	sk_sum(s, &c);
	return c.bad || s->verify_bad || s->lost || s->validate_failures;
}

int bench_soak(const struct bench_opts *opt, struct pa_pool *given, FILE *out)
{
	(void)given; /* own_pool */
	struct soak s = { .opt = opt };
	double seconds = opt->seconds > 0 ? opt->seconds : SK_SECONDS;
	int ret = sk_setup(&s);
	uint64_t t0 = bench_now_ns(), end = t0 + (uint64_t)(seconds * 1e9);
	while (!ret && !sk_failed(&s) && bench_now_ns() < end) {
		uint64_t now = bench_now_ns();
		s.round_end_ns = now + SK_ROUND_NS < end ? now + SK_ROUND_NS : end;
		ret = bench_parallel(s.nt, sk_thread_main, s.t, sizeof *s.t);
		s.rounds++;
		sk_checkpoint(&s);
	}
	if (!ret) {
		sk_finish(&s);
		sk_print(&s, (double)(bench_now_ns() - t0) / 1e9, out);
		ret = sk_failed(&s);
		if (ret)
			fprintf(stderr, "pagealloc: soak: %s\n", sk_first_error(&s));
	}
	sk_teardown(&s);
	return ret ? 1 : 0;
}
