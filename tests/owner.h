/* SPDX-License-Identifier: MIT */
/*
 * A movable owner for the migration and compaction tests (test_migrate.c,
 * test_compaction.c).
 *
 * The owner keeps a table of folios indexed by cookie under its own mutex,
 * as an embedder would: the migrate callback takes the mutex, checks that
 * the old folio is the one the table names, checks (in backed pools) that
 * the library copied the bytes before asking, and moves the reference.
 * Every folio's bytes hold a pattern derived from its cookie, so that a lost
 * or misplaced copy shows. Knobs make the callback answer AGAIN or BUSY (all
 * the time or at random), or free or pin a folio in the middle of its move.
 *
 * The callbacks run in the compacting thread: they never call CHECK (the
 * harness is single-threaded); they record the first inconsistency, which
 * to_expect_clean() reports from the test's thread.
 */
#ifndef PA_TEST_OWNER_H
#define PA_TEST_OWNER_H

#include "helpers.h"
#include "test.h"

#include "platform/platform.h"
#include "pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdarg.h>

enum to_answer {
	TO_OK,     /* move the reference, answer PA_MIGRATE_OK */
	TO_AGAIN,  /* answer PA_MIGRATE_AGAIN, keep the reference */
	TO_BUSY,   /* answer PA_MIGRATE_BUSY, keep the reference */
	TO_RANDOM, /* fail_pct of the calls answer AGAIN or BUSY, the rest OK */
};

/* Something the callback does during a move, on the next `action_left` calls. */
enum to_action {
	TO_NONE,
	TO_FREE_OLD, /* free the old folio (as another thread of the owner would), answer OK */
	TO_FREE_NEW, /* move the reference, then free through it (the new folio), answer OK */
	TO_PIN_OLD,  /* pin the old folio (a pin that arrived during the copy), move, answer OK */
};

struct tfolio {
	struct pa_page *page; /* current head; after a split, pieces[] instead */
	struct pa_page *
	        *pieces; /* after a split (compaction_split_folios=1): 1 << order order-0 folios */
	struct pa_page *pinned; /* the folio a TO_PIN_OLD pin is on */
	pa_pfn_t first_pfn;     /* where it was allocated */
	uint32_t gen;           /* bumped when the slot is reused */
	uint8_t order;
	bool live, split;
	uint32_t pins; /* pins the owner took (and knows of): the callback answers BUSY */
	uint32_t moves;
	uint32_t asked; /* migrate callbacks for this folio */
};

struct towner {
	pthread_mutex_t lock;
	struct pa_pool *pool;
	int id;
	bool backed;
	bool check_copy; /* backed pools: verify the new folio's bytes in the callback */
	bool strict;     /* single-threaded tests: a callback for an unknown folio is an error */
	struct tfolio *f;
	size_t nr, cap;
	enum to_answer answer;
	unsigned fail_pct;
	enum to_action action;
	unsigned action_left;
	uint64_t rng;
	/* What happened (under lock). */
	uint64_t calls, oks, agains, busies, stale, split_calls, pieces_moved;
	uint64_t moved_order[PA_MAX_ORDER_LIMIT + 1];
	int pin_rc;                /* what pa_pin answered in TO_PIN_OLD */
	size_t acted;              /* slot of the last action taken */
	struct pa_page *acted_old; /* its old folio */
	unsigned errors;
	char error[256];
};

#define TO_COOKIE_TAG 0xC0000000ull /* keeps cookies away from 0 and from small numbers */

static inline uint64_t to_cookie(const struct towner *o, size_t idx)
{
	return ((uint64_t)o->f[idx].gen << 40) | (TO_COOKIE_TAG << 8) | idx;
}

static inline size_t to_cookie_index(uint64_t cookie)
{
	return (size_t)(cookie & 0xffffffffull);
}

static inline uint64_t to_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static inline uint64_t to_rand(uint64_t *s)
{
	*s += 0x9e3779b97f4a7c15ull;
	return to_mix(*s);
}

/* Word k (counted over the whole original folio) of the folio with this cookie. */
static inline uint64_t to_word(uint64_t cookie, uint64_t k)
{
	return to_mix(cookie * 0x100000001b3ull + k);
}

static inline size_t to_words_per_frame(const struct pa_pool *pool)
{
	return ((size_t)1 << pool->cfg.page_shift) / sizeof(uint64_t);
}

/* Fill `frames` frames at page with the pattern, starting at frame `first` of the folio. */
static inline void to_fill(const struct pa_pool *pool, struct pa_page *page, uint64_t cookie,
                           uint64_t first, uint64_t frames)
{
	uint64_t *w = pa_page_address(pool, page);
	size_t wpf = to_words_per_frame(pool);
	for (uint64_t k = 0; k < frames * wpf; k++)
		w[k] = to_word(cookie, first * wpf + k);
}

/* -1 if the bytes hold the pattern, else the index of the first wrong word. */
static inline int64_t to_verify(const struct pa_pool *pool, const struct pa_page *page,
                                uint64_t cookie, uint64_t first, uint64_t frames)
{
	const uint64_t *w = pa_page_address(pool, page);
	size_t wpf = to_words_per_frame(pool);
	for (uint64_t k = 0; k < frames * wpf; k++)
		if (w[k] != to_word(cookie, first * wpf + k))
			return (int64_t)k;
	return -1;
}

static inline void to_error(struct towner *o, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
static inline void to_error(struct towner *o, const char *fmt, ...)
{
	if (o->errors++ == 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(o->error, sizeof o->error, fmt, ap);
		va_end(ap);
	}
}

static inline enum pa_migrate_result to_migrate_cb(void *ctx, uint64_t cookie,
                                                   struct pa_page *old_folio,
                                                   struct pa_page *new_folio, unsigned order)
{
	struct towner *o = ctx;
	struct pa_pool *pool = o->pool;
	enum pa_migrate_result r = PA_MIGRATE_OK;
	pthread_mutex_lock(&o->lock);
	o->calls++;
	size_t idx = to_cookie_index(cookie);
	struct tfolio *f = idx < o->nr ? &o->f[idx] : NULL;
	/* Which reference of the table the old folio is: the head or a split piece. */
	struct pa_page **ref = NULL;
	uint64_t piece = 0;
	if (f && f->live && to_cookie(o, idx) == cookie) {
		if (!f->split && f->page == old_folio)
			ref = &f->page;
		for (uint64_t i = 0; f->split && i < (1ull << f->order); i++)
			if (f->pieces[i] == old_folio) {
				ref = &f->pieces[i];
				piece = i;
			}
	}
	if (!ref) {
		/* A folio the owner freed while it was isolated, or a stranger. */
		o->stale++;
		if (o->strict)
			to_error(o,
			         "migrate: cookie %#" PRIx64 " old pfn %" PRIu64
			         " is no live folio of the table",
			         cookie, pa_page_to_pfn(pool, old_folio));
		o->busies++;
		pthread_mutex_unlock(&o->lock);
		return PA_MIGRATE_BUSY;
	}
	f->asked++;
	unsigned want = f->split ? 0 : f->order;
	if (order != want)
		to_error(o, "migrate: cookie %#" PRIx64 ": order %u, the folio is order %u", cookie,
		         order, want);
	pa_pfn_t opfn = pa_page_to_pfn(pool, old_folio), npfn = pa_page_to_pfn(pool, new_folio);
	if (npfn == PA_PFN_INVALID || npfn % (1ull << order) || npfn == opfn)
		to_error(o,
		         "migrate: cookie %#" PRIx64 ": bad destination pfn %" PRIu64
		         " for order %u",
		         cookie, npfn, order);
	if (o->backed && o->check_copy) {
		int64_t bad = to_verify(pool, new_folio, cookie, piece, 1ull << order);
		if (bad >= 0)
			to_error(o,
			         "migrate: cookie %#" PRIx64 ": new folio (pfn %" PRIu64
			         ") word %" PRId64 " differs: bytes not copied before the callback",
			         cookie, npfn, bad);
	}
	switch (f->pins ? TO_BUSY : o->answer) {
	case TO_OK:
		break;
	case TO_AGAIN:
		r = PA_MIGRATE_AGAIN;
		break;
	case TO_BUSY:
		r = PA_MIGRATE_BUSY;
		break;
	case TO_RANDOM:
		if (to_rand(&o->rng) % 100 < o->fail_pct)
			r = to_rand(&o->rng) & 1 ? PA_MIGRATE_AGAIN : PA_MIGRATE_BUSY;
		break;
	}
	enum to_action act = TO_NONE;
	if (r == PA_MIGRATE_OK && o->action != TO_NONE && o->action_left) {
		act = o->action;
		o->action_left--;
	}
	if (act != TO_NONE) {
		o->acted = idx;
		o->acted_old = old_folio;
	}
	if (r == PA_MIGRATE_OK) {
		o->oks++;
		switch (act) {
		case TO_FREE_OLD: /* freed by the owner before it moved the reference */
			f->live = false;
			pa_free_pages(pool, old_folio, order);
			break;
		case TO_FREE_NEW: /* moved, then freed through the new reference */
			*ref = new_folio;
			f->live = false;
			pa_free_pages(pool, new_folio, order);
			break;
		case TO_PIN_OLD: /* the library may refuse the pin (the folio is being moved) */
			o->pin_rc = pa_pin(pool, old_folio);
			if (o->pin_rc == 0)
				f->pinned = old_folio;
			*ref = new_folio;
			break;
		case TO_NONE:
			*ref = new_folio;
			break;
		}
		if (act == TO_NONE || act == TO_PIN_OLD) {
			f->moves++;
			o->moved_order[order]++;
			if (f->split)
				o->pieces_moved++;
		}
	} else if (r == PA_MIGRATE_AGAIN) {
		o->agains++;
	} else {
		o->busies++;
	}
	pthread_mutex_unlock(&o->lock);
	return r;
}

static inline void to_split_cb(void *ctx, uint64_t cookie, struct pa_page *head, unsigned order)
{
	struct towner *o = ctx;
	pthread_mutex_lock(&o->lock);
	o->split_calls++;
	size_t idx = to_cookie_index(cookie);
	struct tfolio *f = idx < o->nr ? &o->f[idx] : NULL;
	if (!f || !f->live || to_cookie(o, idx) != cookie || f->split || f->page != head ||
	    f->order != order) {
		to_error(o,
		         "split: cookie %#" PRIx64
		         " order %u is no live unsplit folio of the table",
		         cookie, order);
	} else {
		f->pieces = malloc(sizeof *f->pieces << order);
		pa_pfn_t pfn = pa_page_to_pfn(o->pool, head);
		for (uint64_t i = 0; f->pieces && i < (1ull << order); i++)
			f->pieces[i] = pa_pfn_to_page(o->pool, pfn + i);
		f->split = f->pieces != NULL;
		if (!f->pieces)
			to_error(o, "split: out of memory");
	}
	pthread_mutex_unlock(&o->lock);
}

/* Set up the owner and register it with the pool. */
static inline void to_init(struct towner *o, struct pa_pool *pool, size_t cap)
{
	memset(o, 0, sizeof *o);
	pthread_mutex_init(&o->lock, NULL);
	o->pool = pool;
	o->backed = pool->base != NULL;
	o->check_copy = true;
	o->strict = true;
	o->rng = 12345;
	o->cap = cap;
	o->f = calloc(cap ? cap : 1, sizeof *o->f);
	REQUIRE(o->f);
	struct pa_owner_ops ops = {
		.name = "test-owner", .ctx = o, .migrate = to_migrate_cb, .split = to_split_cb
	};
	o->id = pa_owner_register(pool, &ops);
	REQUIRE(o->id >= 1);
}

/* After pa_shutdown(): until then a background compactor may call the owner. */
static inline void to_destroy(struct towner *o)
{
	for (size_t i = 0; i < o->nr; i++)
		free(o->f[i].pieces);
	free(o->f);
	pthread_mutex_destroy(&o->lock);
}

/*
 * Allocate a movable folio, fill its pattern, then give it to the owner (it
 * becomes movable only once its bytes are written). Returns the slot, or -1
 * when the allocation fails. Caller must not hold o->lock.
 */
static inline long to_alloc(struct towner *o, pa_gfp_t gfp, unsigned order)
{
	struct pa_pool *pool = o->pool;
	struct pa_page *p = pa_alloc_pages(pool, gfp | PA_GFP_MOVABLE | PA_GFP_NOWARN, order);
	if (!p)
		return -1;
	pthread_mutex_lock(&o->lock);
	if (o->nr == o->cap) {
		pthread_mutex_unlock(&o->lock);
		pa_free_pages(pool, p, order);
		return -1;
	}
	size_t idx = o->nr++;
	struct tfolio *f = &o->f[idx];
	f->page = p;
	f->first_pfn = pa_page_to_pfn(pool, p);
	f->order = (uint8_t)order;
	f->live = true;
	uint64_t cookie = to_cookie(o, idx);
	pthread_mutex_unlock(&o->lock);
	if (o->backed)
		to_fill(pool, p, cookie, 0, 1ull << order);
	int rc = pa_set_owner(pool, p, o->id, cookie);
	if (rc != 0) {
		pthread_mutex_lock(&o->lock);
		to_error(o, "pa_set_owner(pfn %" PRIu64 ") = %d", f->first_pfn, rc);
		pthread_mutex_unlock(&o->lock);
	}
	return (long)idx;
}

/* The folio's current head (its first piece after a split). Lock held. */
static inline struct pa_page *to_head_locked(const struct towner *o, size_t idx)
{
	const struct tfolio *f = &o->f[idx];
	return f->split ? f->pieces[0] : f->page;
}

static inline pa_pfn_t to_pfn(struct towner *o, size_t idx)
{
	pthread_mutex_lock(&o->lock);
	pa_pfn_t pfn =
	        o->f[idx].live ? pa_page_to_pfn(o->pool, to_head_locked(o, idx)) : PA_PFN_INVALID;
	pthread_mutex_unlock(&o->lock);
	return pfn;
}

/*
 * Check one live folio as the owner sees it: an allocated folio of its order
 * (or its pieces at order 0) at an aligned pfn, with its cookie and, in a
 * backed pool, its bytes. Returns false (with a message) on the first fault.
 * Lock held.
 */
static inline bool to_check_locked(struct towner *o, size_t idx, char *msg, size_t len)
{
	struct pa_pool *pool = o->pool;
	struct tfolio *f = &o->f[idx];
	uint64_t cookie = to_cookie(o, idx);
	uint64_t n = f->split ? 1ull << f->order : 1;
	unsigned order = f->split ? 0 : f->order;
	for (uint64_t i = 0; i < n; i++) {
		struct pa_page *p = f->split ? f->pieces[i] : f->page;
		pa_pfn_t pfn = pa_page_to_pfn(pool, p);
		if (pfn == PA_PFN_INVALID || pfn % (1ull << order)) {
			snprintf(msg, len, "slot %zu: bad pfn %" PRIu64, idx, pfn);
			return false;
		}
		/*
		 * A folio the owner was just handed (its callback answered OK) is
		 * allocated once compaction commits the move, which needs no owner
		 * lock: wait for that.
		 */
		for (int spin = 0; page_state(p) == PS_MIGRATING && spin < 1000000; spin++)
			sched_yield();
		if (pa_folio_order(pool, p) != (int)order) {
			snprintf(msg, len,
			         "slot %zu (pfn %" PRIu64 "): pa_folio_order %d, expected %u", idx,
			         pfn, pa_folio_order(pool, p), order);
			return false;
		}
		if (pa_page_cookie(pool, p) != cookie) {
			snprintf(msg, len,
			         "slot %zu (pfn %" PRIu64 "): cookie %#" PRIx64
			         ", expected %#" PRIx64,
			         idx, pfn, pa_page_cookie(pool, p), cookie);
			return false;
		}
		if (o->backed) {
			int64_t bad = to_verify(pool, p, cookie, f->split ? i : 0, 1ull << order);
			if (bad >= 0) {
				snprintf(msg, len,
				         "slot %zu (pfn %" PRIu64 ", moved %u times): word %" PRId64
				         " of the data differs",
				         idx, pfn, f->moves, bad);
				return false;
			}
		}
	}
	return true;
}

/* Every live folio checked; returns how many are live. Test thread only. */
static inline size_t to_check_all(struct towner *o)
{
	char msg[256];
	size_t live = 0, bad = 0;
	pthread_mutex_lock(&o->lock);
	for (size_t i = 0; i < o->nr; i++) {
		if (!o->f[i].live)
			continue;
		live++;
		if (!to_check_locked(o, i, msg, sizeof msg) && bad++ < 3)
			test_fail(__FILE__, __LINE__, "owner's folio: %s", msg);
	}
	pthread_mutex_unlock(&o->lock);
	CHECK_MSG(bad == 0, "%zu of %zu live folios are wrong", bad, live);
	return live;
}

/* Give a folio's memory back: its pieces after a split, else the folio. Owner's lock held. */
static inline void to_free_pages(struct towner *o, const struct tfolio *f)
{
	if (f->split)
		for (uint64_t i = 0; i < (1ull << f->order); i++)
			pa_free_pages(o->pool, f->pieces[i], 0);
	else
		pa_free_pages(o->pool, f->page, f->order);
}

/* Free one live folio through the owner's reference (its pieces after a split). */
static inline void to_free(struct towner *o, size_t idx)
{
	pthread_mutex_lock(&o->lock);
	struct tfolio *f = &o->f[idx];
	if (f->live) {
		f->live = false;
		if (f->pinned) {
			pa_unpin(o->pool, f->pinned);
			f->pinned = NULL;
		}
		to_free_pages(o, f);
	}
	pthread_mutex_unlock(&o->lock);
}

static inline void to_free_all(struct towner *o)
{
	for (size_t i = 0; i < o->nr; i++)
		to_free(o, i);
}

/* Owned folios of `order` until the pool is full (no compaction while filling). */
static inline size_t fill_owned(struct towner *o, unsigned order)
{
	size_t n = 0;
	while (to_alloc(o, PA_GFP_COMP | PA_GFP_NOCOMPACT, order) >= 0)
		n++;
	return n;
}

/*
 * Free the live unsplit folios whose pfn >> shift is odd (holes of order
 * `shift` or the folio's); returns the frames freed. Each is looked at
 * under the lock: a background compactor may be moving it.
 */
static inline uint64_t free_odd_at(struct towner *o, unsigned shift)
{
	uint64_t frames = 0;
	for (size_t i = 0; i < o->nr; i++) {
		pthread_mutex_lock(&o->lock);
		struct tfolio *f = &o->f[i];
		bool odd = f->live && !f->split &&
		           (pa_page_to_pfn(o->pool, f->page) >> shift) % 2 == 1;
		frames += odd ? 1ull << f->order : 0;
		pthread_mutex_unlock(&o->lock);
		if (odd)
			to_free(o, i);
	}
	return frames;
}

/* The current pfn of every slot (PA_PFN_INVALID when not live); free() it. */
static inline pa_pfn_t *snapshot_pfns(struct towner *o)
{
	pa_pfn_t *s = malloc((o->nr ? o->nr : 1) * sizeof *s);
	REQUIRE(s);
	for (size_t i = 0; i < o->nr; i++)
		s[i] = to_pfn(o, i);
	return s;
}

/* Live folios with a frame in [s, e). */
static inline size_t folios_in(struct towner *o, pa_pfn_t s, pa_pfn_t e)
{
	size_t n = 0;
	for (size_t i = 0; i < o->nr; i++) {
		pa_pfn_t p = to_pfn(o, i);
		n += p != PA_PFN_INVALID && p < e && p + (1ull << o->f[i].order) > s;
	}
	return n;
}

/*
 * The end of a case: every folio freed through the owner, the pool all free
 * again (expect_all_free), shut down, and then the owner (a compactor may
 * call it until the pool is gone).
 */
static inline void to_finish(struct towner *o)
{
	to_free_all(o);
	expect_all_free(o->pool);
	pa_shutdown(o->pool);
	to_destroy(o);
}

/* to_finish, with the pool merged as a fresh boot of cmdline (expect_as_fresh). */
static inline void to_finish_as_fresh(struct towner *o, const char *cmdline)
{
	to_free_all(o);
	expect_as_fresh(o->pool, cmdline);
	pa_shutdown(o->pool);
	to_destroy(o);
}

/* No callback found anything wrong. */
#define to_expect_clean(o)                                                                         \
	do {                                                                                       \
		char m_[sizeof(o)->error];                                                         \
		pthread_mutex_lock(&(o)->lock);                                                    \
		unsigned e_ = (o)->errors;                                                         \
		memcpy(m_, (o)->error, sizeof m_);                                                 \
		pthread_mutex_unlock(&(o)->lock);                                                  \
		CHECK_MSG(e_ == 0, "owner callbacks found %u errors; first: %s", e_, m_);          \
	} while (0)

#endif
