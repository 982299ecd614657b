/* SPDX-License-Identifier: MIT */
/*
 * The owner's list lock by restartable sequence (pcp_rseq_trylock()) against
 * remote takers (platform_spin_lock(): a compare-and-swap of a token, then
 * membarrier's rseq fence, then the word read again).
 *
 * The sequence is inline assembly that TSan cannot see into, so these cases
 * run in the plain and ASan builds; the TSan build has no sequence (owners
 * exchange, as with a cpu_id hook) and the cases skip there, as they do
 * where the kernel has no rseq or no membarrier fence.
 *
 * What is proven:
 * - the lock excludes: owners on every CPU, more of them than cores (so that
 *   sequences are preempted and restarted), and remote takers of every CPU's
 *   lock each add one to a plain counter under the lock, slowly; no addition
 *   is lost (without the fence, additions are lost within a few runs);
 * - owners allocating and freeing orders 0-3 through the lists while other
 *   threads drain every CPU, validate the pool, read the counters, switch
 *   order 1 off and on, compact and ask for order-9 blocks (which drains
 *   when it fails): no block is handed out twice (a frame map of who holds
 *   what), no bad free is reported, validation passes throughout, and once
 *   all is freed and drained the pool is whole;
 * - pcp_rseq=0 boots a pool whose owners exchange (2 is refused); a cpu_id hook does too, and
 *   so does nr_cpus below the machine's CPUs (an id wrapped onto another
 *   CPU's lists is no owner there).
 */
#include "test.h"
#include "helpers.h"

#include "platform/platform.h"
#include "pcp.h"

#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct pa_pool *boot_rseq(const char *cmdline)
{
	struct pa_pool *pool = test_boot(cmdline);
	if (!pool->pcp_rseq) {
		pa_shutdown(pool);
		test_skip("no restartable-sequence list lock here (no rseq, no membarrier fence, "
		          "or a TSan build)");
	}
	return pool;
}

/* ---------------------------------------------------------------------- */
/* The lock alone                                                          */
/* ---------------------------------------------------------------------- */

struct excl {
	struct pa_pool *pool;
	struct pa_zone *zone;
	uint64_t *counter; /* [cpu]: plain, written only under that CPU's list lock */
	_Atomic uint64_t remote_holds;
	uint64_t remote_min; /* owners go on until the remote takers held this often */
	_Atomic bool stop;
};

struct excl_thread {
	struct excl *e;
	pthread_t thread;
	uint64_t seed, iters;
	uint64_t *added; /* [cpu]: what this thread added */
	uint64_t busy;   /* owner trylocks that failed */
};

/* A read, a pause, a write: two holders at once lose an addition. */
static void slow_add(uint64_t *c)
{
	uint64_t v = *(volatile uint64_t *)c;
	for (int i = 0; i < 20; i++)
		__asm__ volatile("" ::: "memory");
	*(volatile uint64_t *)c = v + 1;
}

/*
 * Until iters holds and remote_min remote ones (3 s at most): a remote
 * taker holds the lock through its fence, a system call, and may be slow to
 * be scheduled beside owners that spin.
 */
static void *excl_owner_main(void *arg)
{
	struct excl_thread *t = arg;
	struct excl *e = t->e;
	time_t end = time(NULL) + 3;
	for (uint64_t held = 0; held < t->iters || (atomic_load(&e->remote_holds) < e->remote_min &&
	                                            time(NULL) < end);) {
		unsigned cpu = pool_cpu_nocall(e->pool);
		if (cpu >= e->pool->cfg.nr_cpus)
			continue;
		struct pa_pcp *pcp = e->zone->pcp[cpu];
		if (!pcp_trylock(e->pool, pcp, cpu)) {
			t->busy++;
			continue;
		}
		slow_add(&e->counter[cpu]);
		t->added[cpu]++;
		held++;
		pa_spin_unlock(&pcp->lock);
		for (int k = 0; k < 200;
		     k++) /* work outside the lock: remote takers get their turn */
			__asm__ volatile("" ::: "memory");
	}
	return NULL;
}

static void *excl_remote_main(void *arg)
{
	struct excl_thread *t = arg;
	struct excl *e = t->e;
	unsigned cpus = e->pool->cfg.nr_cpus;
	while (!atomic_load(&e->stop)) {
		unsigned cpu = (unsigned)(rng_next(&t->seed) % cpus);
		struct pa_pcp *pcp = e->zone->pcp[cpu];
		platform_spin_lock(e->pool, &pcp->lock, SITE_ADMIN);
		slow_add(&e->counter[cpu]);
		t->added[cpu]++;
		pa_spin_unlock(&pcp->lock);
		atomic_fetch_add(&e->remote_holds, 1);
		if (rng_next(&t->seed) % 4 == 0)
			sched_yield(); /* let owners in now and then */
	}
	return NULL;
}

TEST_MAY_SKIP(pcp_rseq_lock_excludes_owners_and_remote_takers)
{
	enum { OWNERS = 6, REMOTES = 2 };
	struct pa_pool *pool = boot_rseq("mem=64M");
	unsigned cpus = pool->cfg.nr_cpus;
	struct excl e = { .pool = pool,
		          .zone = pool->cpu_pcp[0]->zone,
		          .remote_min = (uint64_t)(5000 * test_scale()) };
	e.counter = calloc(cpus, sizeof *e.counter);
	REQUIRE(e.counter);
	struct excl_thread t[OWNERS + REMOTES];
	uint64_t seed = test_seed();
	fprintf(stderr, "  seed %#" PRIx64 " (PA_TEST_SEED)\n", seed);
	uint64_t iters = (uint64_t)(300000 * test_scale());
	for (int i = 0; i < OWNERS + REMOTES; i++) {
		t[i] = (struct excl_thread){ .e = &e, .seed = seed + (uint64_t)i, .iters = iters };
		t[i].added = calloc(cpus, sizeof *t[i].added);
		REQUIRE(t[i].added);
	}
	for (int i = 0; i < REMOTES; i++)
		REQUIRE(pthread_create(&t[OWNERS + i].thread, NULL, excl_remote_main,
		                       &t[OWNERS + i]) == 0);
	for (int i = 0; i < OWNERS; i++)
		REQUIRE(pthread_create(&t[i].thread, NULL, excl_owner_main, &t[i]) == 0);
	for (int i = 0; i < OWNERS; i++)
		pthread_join(t[i].thread, NULL);
	atomic_store(&e.stop, true);
	for (int i = 0; i < REMOTES; i++)
		pthread_join(t[OWNERS + i].thread, NULL);

	uint64_t owned = 0, remote = 0, busy = 0;
	for (unsigned c = 0; c < cpus; c++) {
		uint64_t sum = 0;
		for (int i = 0; i < OWNERS + REMOTES; i++)
			sum += t[i].added[c];
		CHECK_MSG(e.counter[c] == sum,
		          "CPU %u: %" PRIu64 " additions made under its lock, the counter says "
		          "%" PRIu64,
		          c, sum, e.counter[c]);
	}
	for (int i = 0; i < OWNERS + REMOTES; i++) {
		for (unsigned c = 0; c < cpus; c++)
			*(i < OWNERS ? &owned : &remote) += t[i].added[c];
		busy += t[i].busy;
		free(t[i].added);
	}
	fprintf(stderr, "  %" PRIu64 " owner and %" PRIu64 " remote holds, %" PRIu64 " busy\n",
	        owned, remote, busy);
	CHECK(owned > 0);
	CHECK(remote > 0);
	free(e.counter);
	pa_shutdown(pool);
}

/* ---------------------------------------------------------------------- */
/* The lists under fire                                                    */
/* ---------------------------------------------------------------------- */

struct fire {
	struct pa_pool *pool;
	_Atomic uint8_t *held; /* [pfn]: 1 while a head of a block some owner holds */
	_Atomic bool stop;
	_Atomic uint64_t twice, remote_rounds, compactions;
	_Atomic unsigned validate_errors;
	char validate_error[256];
};

struct owner {
	struct fire *f;
	pthread_t thread;
	uint64_t seed, iters, allocs;
	struct pa_page *page[64];
	uint8_t order[64];
};

static void owner_free(struct owner *o, unsigned i)
{
	pa_pfn_t pfn = pa_page_to_pfn(o->f->pool, o->page[i]);
	atomic_store(&o->f->held[pfn], 0);
	pa_free_pages(o->f->pool, o->page[i], o->order[i]);
	o->page[i] = NULL;
}

static void *owner_main(void *arg)
{
	struct owner *o = arg;
	struct fire *f = o->f;
	for (uint64_t n = 0; n < o->iters; n++) {
		uint64_t r = rng_next(&o->seed);
		unsigned i = (unsigned)(r % 64), order = (unsigned)(r >> 8) % 4;
		if (o->page[i]) {
			owner_free(o, i);
			continue;
		}
		pa_gfp_t gfp = (r >> 16) & 1 ? PA_GFP_MOVABLE : PA_GFP_KERNEL;
		struct pa_page *p = pa_alloc_pages(f->pool, gfp | PA_GFP_NOWARN, order);
		if (!p)
			continue;
		if (atomic_exchange(&f->held[pa_page_to_pfn(f->pool, p)], 1))
			atomic_fetch_add(&f->twice, 1);
		o->page[i] = p;
		o->order[i] = (uint8_t)order;
		o->allocs++;
	}
	for (unsigned i = 0; i < 64; i++)
		if (o->page[i])
			owner_free(o, i);
	return NULL;
}

/* Drains, validation, counters and switching order 1, round after round. */
static void *remote_main(void *arg)
{
	struct fire *f = arg;
	char err[256];
	uint64_t v;
	for (unsigned r = 0; !atomic_load(&f->stop); r++) {
		pa_drain_all(f->pool);
		if (pa_validate(f->pool, err, sizeof err) != 0 &&
		    atomic_fetch_add(&f->validate_errors, 1) == 0)
			snprintf(f->validate_error, sizeof f->validate_error, "%s", err);
		pa_vmstat_read(f->pool, "pgalloc_normal", &v);
		if (r % 8 == 0)
			pa_ctl_write(f->pool, "pcp/orders/1/enabled", r % 16 ? "1" : "0");
		atomic_fetch_add(&f->remote_rounds, 1);
	}
	pa_ctl_write(f->pool, "pcp/orders/1/enabled", "1");
	return NULL;
}

static void *compactor_main(void *arg)
{
	struct fire *f = arg;
	while (!atomic_load(&f->stop)) {
		pa_compact(f->pool, -1);
		struct pa_page *p = pa_alloc_pages(f->pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, 9);
		if (p)
			pa_free_pages(f->pool, p, 9);
		atomic_fetch_add(&f->compactions, 1);
	}
	return NULL;
}

TEST_MAY_SKIP(pcp_rseq_owners_lose_nothing_against_drains_and_compaction)
{
	enum { OWNERS = 5 };
	struct pa_pool *pool = boot_rseq("mem=64M kcompactd=manual");
	uint64_t managed = usage(pool).managed;
	struct fire f = { .pool = pool };
	f.held = calloc(pool->nr_frames, 1);
	REQUIRE(f.held);
	uint64_t seed = test_seed();
	fprintf(stderr, "  seed %#" PRIx64 " (PA_TEST_SEED)\n", seed);
	struct owner o[OWNERS];
	for (int i = 0; i < OWNERS; i++)
		o[i] = (struct owner){ .f = &f,
			               .seed = seed + (uint64_t)i * 0x9e3779b97f4a7c15ull,
			               .iters = (uint64_t)(400000 * test_scale()) };
	pthread_t remote, comp;
	REQUIRE(pthread_create(&remote, NULL, remote_main, &f) == 0);
	REQUIRE(pthread_create(&comp, NULL, compactor_main, &f) == 0);
	for (int i = 0; i < OWNERS; i++)
		REQUIRE(pthread_create(&o[i].thread, NULL, owner_main, &o[i]) == 0);
	uint64_t allocs = 0;
	for (int i = 0; i < OWNERS; i++) {
		pthread_join(o[i].thread, NULL);
		allocs += o[i].allocs;
	}
	atomic_store(&f.stop, true);
	pthread_join(remote, NULL);
	pthread_join(comp, NULL);

	fprintf(stderr,
	        "  %" PRIu64 " allocations; %" PRIu64 " remote rounds, %" PRIu64
	        " compactions; owner lock busy %" PRIu64 "\n",
	        allocs, (uint64_t)atomic_load(&f.remote_rounds),
	        (uint64_t)atomic_load(&f.compactions),
	        (uint64_t)atomic_load(&pool->cpu_pcp[0]->lock.busy[SITE_PCP_ALLOC]));
	CHECK(allocs > 0);
	CHECK(atomic_load(&f.remote_rounds) > 0);
	CHECK_EQ_U64(atomic_load(&f.twice), 0);
	CHECK_MSG(atomic_load(&f.validate_errors) == 0, "%u validations failed; first: %s",
	          atomic_load(&f.validate_errors), f.validate_error);
	CHECK_EQ_U64(vmstat(pool, "bad_page"), 0);
	VALIDATE(pool);
	CHECK_EQ_U64(usage(pool).managed, managed);
	expect_all_free(pool);
	free(f.held);
	pa_shutdown(pool);
}

TEST(pcp_rseq_off_by_boot_key_or_cpu_hook)
{
	struct pa_pool *pool = test_boot("mem=64M pcp_rseq=0");
	CHECK(!pool->pcp_rseq);
	struct pa_page *p = pa_alloc_pages(pool, PA_GFP_KERNEL, 0);
	REQUIRE(p);
	pa_free_pages(pool, p, 0);
	VALIDATE(pool);
	pa_shutdown(pool);
	char err[256] = "";
	pool = NULL;
	CHECK(pa_boot("mem=64M pcp_rseq=2", NULL, &pool, err, sizeof err) < 0);
	CHECK(pool == NULL);
	CHECK_MSG(strstr(err, "pcp_rseq") != NULL, "the error names the key: %s", err);
	struct pa_platform plat = { .cpu_id = fake_cpu_id };
	pool = test_boot_on("mem=64M", &plat);
	CHECK(!pool->pcp_rseq);
	pa_shutdown(pool);
	if (sysconf(_SC_NPROCESSORS_CONF) > 1) {
		pool = test_boot("mem=64M nr_cpus=1");
		CHECK(!pool->pcp_rseq);
		pa_shutdown(pool);
	}
}
