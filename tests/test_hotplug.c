/* SPDX-License-Identifier: MIT */
/*
 * Memory hotplug: a block full of movable folios goes offline (the folios
 * move out, bytes intact) and online again, after which a 4 GiB block forms
 * across it; a frame that cannot move gives -EBUSY with everything as it
 * was; ranges that are not whole blocks are refused; offline= on the boot
 * line and the memory/<N>/online ctl paths; offlining while other threads
 * allocate (run under TSan too).
 */
#include "owner.h"
#include "buddy.h"
#include "memmap.h"
#include "pcp.h"
#include "zone.h"

#include <errno.h>
#include <time.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static uint64_t ctl_u64(struct pa_pool *pool, const char *path)
{
	char buf[64] = "";
	REQUIRE(pa_ctl_read(pool, path, buf, sizeof buf) >= 0);
	return strtoull(buf, NULL, 10);
}

#define BIG "mem=8G max_order=20 backing=anon kcompactd=manual pcp_orders=none min_free_kbytes=0"

TEST(hotplug_offline_full_block_then_online_merges_a_4g_block)
{
	struct pa_pool *pool = test_boot(BIG);
	struct towner o;
	to_init(&o, pool, 1 << 14);
	struct pa_zone *z = zone_of_type(pool, PA_ZONE_NORMAL);
	REQUIRE(z);
	pa_pfn_t s = z->start_pfn, n = 1ull << pool->cfg.block_shift, e = s + n;
	while (folios_in(&o, s, e) < n / 4 && to_alloc(&o, PA_GFP_COMP, 2) >= 0)
		;
	REQUIRE(folios_in(&o, s, e) == n / 4); /* the block is full of order-2 folios */
	uint64_t present = z->present_pages, managed = z->managed_pages;
	uint64_t migrated = vmstat(pool, "pgmigrate_success");
	char path[64];
	snprintf(path, sizeof path, "memory/%llu/online", (unsigned long long)(s / n));
	CHECK_EQ_U64(ctl_u64(pool, path), 1);
	double t0 = now_ms();
	REQUIRE(pa_memory_offline(pool, s, n) == 0);
	double ms = now_ms() - t0;
	uint64_t moved = vmstat(pool, "pgmigrate_success") - migrated;
	fprintf(stderr,
	        "  offline of a %llu MiB block full of order-2 folios: %llu frames moved in "
	        "%.1f ms\n",
	        (unsigned long long)(n << pool->cfg.page_shift >> 20), (unsigned long long)moved,
	        ms);
	CHECK_EQ_U64(moved, n); /* pgmigrate_success counts frames */
	CHECK_EQ_U64(z->present_pages, present - n);
	CHECK_EQ_U64(z->managed_pages, managed - n);
	CHECK_EQ_U64(ctl_u64(pool, path), 0);
	CHECK(pa_pfn_to_page(pool, s) == NULL && pa_pfn_to_page(pool, e - 1) == NULL);
	CHECK_EQ_U64(folios_in(&o, s, e), 0);
	CHECK_EQ_U64(to_check_all(&o), n / 4); /* every folio's bytes intact where it went */
	VALIDATE(pool);
	CHECK_EQ_U64(pa_memory_offline(pool, s, n), -EINVAL); /* offline already */
	REQUIRE(pa_ctl_write(pool, path, "1") == 0);
	CHECK_EQ_U64(z->present_pages, present);
	CHECK_EQ_U64(z->managed_pages, managed);
	VALIDATE(pool);
	to_free_all(&o);
	pa_drain_all(pool);
	CHECK_EQ_U64(zone_free_blocks(z, 20),
	             1); /* 4 GiB across the block that went and came back */
	CHECK_EQ_U64(vmstat(pool, "memory_offline"), 1);
	CHECK_EQ_U64(vmstat(pool, "memory_online"), 1);
	to_expect_clean(&o);
	to_finish_as_fresh(&o, BIG);
}

/* An unmovable or a pinned frame: -EBUSY, and the pool is exactly as before. */
TEST(hotplug_offline_of_a_fixed_frame_is_ebusy_and_changes_nothing)
{
	const char *line = "mem=1G kcompactd=manual pcp_orders=none min_free_kbytes=0";
	struct pa_pool *pool = test_boot(line);
	struct towner o;
	to_init(&o, pool, 1 << 12);
	uint64_t n = 1ull << pool->cfg.block_shift;
	pa_pfn_t fixed = must_alloc(pool, PA_GFP_KERNEL, 0);
	pa_pfn_t s = fixed & ~(n - 1);
	for (int i = 0; i < 64; i++)
		to_alloc(&o, 0, 0);
	char *before = report(pool, PA_REPORT_ZONEINFO, 0);
	struct pa_usage u0 = usage(pool);
	CHECK_EQ_U64(pa_memory_offline(pool, s, n), -EBUSY);
	char *after = report(pool, PA_REPORT_ZONEINFO, 0);
	CHECK_MSG(strcmp(before, after) == 0, "zoneinfo changed:\n%s\n---\n%s", before, after);
	struct pa_usage u1 = usage(pool);
	CHECK_EQ_U64(u1.free, u0.free);
	CHECK_EQ_U64(u1.allocated, u0.allocated);
	VALIDATE(pool);
	free_pfn(pool, fixed, 0);
	/* A pinned folio is as fixed. */
	long idx = to_alloc(&o, 0, 0);
	REQUIRE(idx >= 0);
	pa_pfn_t pin = to_pfn(&o, (size_t)idx);
	REQUIRE(pa_pin(pool, pa_pfn_to_page(pool, pin)) == 0);
	CHECK_EQ_U64(pa_memory_offline(pool, pin & ~(n - 1), n), -EBUSY);
	VALIDATE(pool);
	REQUIRE(pa_unpin(pool, pa_pfn_to_page(pool, pin)) == 0);
	CHECK_EQ_U64(pa_memory_offline(pool, pin & ~(n - 1), n), 0); /* nothing was left isolated */
	CHECK_EQ_U64(pa_memory_online(pool, pin & ~(n - 1), n), 0);
	free(before);
	free(after);
	to_expect_clean(&o);
	to_finish_as_fresh(&o, line);
}

TEST(hotplug_refuses_ranges_that_are_not_whole_online_blocks)
{
	struct pa_pool *pool = test_boot("mem=1G memory_block_size=256M memhole=768M-1G");
	uint64_t n = 1ull << pool->cfg.block_shift;
	CHECK_EQ_U64(n << 12, 256ull << 20);
	CHECK_EQ_U64(pa_memory_offline(NULL, 0, n), -EINVAL);
	CHECK_EQ_U64(pa_memory_offline(pool, n / 2, n), -EINVAL); /* a section, not a block */
	CHECK_EQ_U64(pa_memory_offline(pool, n, n / 2), -EINVAL);
	CHECK_EQ_U64(pa_memory_offline(pool, n, 0), -EINVAL);
	CHECK_EQ_U64(pa_memory_offline(pool, 4 * n, n), -EINVAL); /* past the end */
	CHECK_EQ_U64(pa_memory_offline(pool, 3 * n, n), -EINVAL); /* all hole */
	CHECK_EQ_U64(pa_memory_online(pool, n, n), -EINVAL);      /* online already */
	CHECK_EQ_U64(pa_memory_online(NULL, n, n), -EINVAL);
	CHECK_EQ_U64(pa_memory_offline(pool, UINT64_MAX - n + 1, n), -EINVAL);
	CHECK_EQ_U64(pa_memory_offline(pool, n, n), 0);
	CHECK_EQ_U64(pa_memory_offline(pool, 0, 2 * n), -EINVAL); /* part of it offline */
	CHECK_EQ_U64(pa_memory_online(pool, n, n), 0);
	CHECK_EQ_U64(ctl_u64(pool, "memory/block_size_bytes"), 256ull << 20);
	char buf[16];
	CHECK_EQ_U64(pa_ctl_read(pool, "memory/4/online", buf, sizeof buf), -EINVAL);
	CHECK_EQ_U64(pa_ctl_write(pool, "memory/1/online", "2"), -EINVAL);
	VALIDATE(pool);
	pa_shutdown(pool);
	const char *bad[] = { "mem=1G offline=100M-228M", "mem=1G offline=512M-2G",
		              "mem=1G memory_block_size=64M", "mem=1G memory_block_size=384M",
		              "mem=1G memory_block_size=256M offline=128M-256M" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char err[256] = "";
		struct pa_pool *q = NULL;
		CHECK_EQ_U64(pa_boot(bad[i], NULL, &q, err, sizeof err), -EINVAL);
		CHECK_MSG(strstr(err, "offline=") || strstr(err, "memory_block_size="), "%s: %s",
		          bad[i], err);
	}
}

/* offline= keeps memory present but out of the zone until it is onlined; deferred init or not. */
TEST(hotplug_offline_at_boot_then_online_is_the_pool_without_it)
{
	for (int deferred = 0; deferred < 2; deferred++) {
		char line[128];
		snprintf(line, sizeof line, "mem=1G offline=512M-768M deferred_init=%d", deferred);
		struct pa_pool *whole = test_boot("mem=1G"), *pool = NULL;
		char err[256];
		REQUIRE((pa_boot)(line, NULL, &pool, err, sizeof err) ==
		        0); /* init may be running */
		uint64_t n = 1ull << pool->cfg.block_shift, s = (512ull << 20) >> 12;
		CHECK_EQ_U64(ctl_u64(pool, "memory/4/online"), 0);
		CHECK_EQ_U64(ctl_u64(pool, "memory/5/online"), 0);
		CHECK_EQ_U64(ctl_u64(pool, "memory/3/online"), 1);
		CHECK(pa_pfn_to_page(pool, s) == NULL);
		/* pagetypeinfo counts online pageblocks only, as Linux's walk does. */
		uint64_t blocks[PA_MT_COUNT], all = 0;
		REQUIRE(pa_zone_pagetypes(pool, 0, NULL, 0, blocks) == 0);
		for (unsigned mt = 0; mt < PA_MT_COUNT; mt++)
			all += blocks[mt];
		CHECK_EQ_U64(blocks[PA_MT_ISOLATE], 0);
		CHECK_EQ_U64(all,
		             ((1ull << 30) - (256ull << 20)) >> 12 >> pool->cfg.pageblock_order);
		REQUIRE(pa_ctl_write(pool, "memory/5/online", "1") == 0);
		REQUIRE(pa_memory_online(pool, s, n) == 0);
		VALIDATE(pool);
		pa_deferred_init_wait(pool);
		VALIDATE(pool);
		CHECK_EQ_U64(usage(pool).managed, usage(whole).managed);
		CHECK_EQ_U64(usage(pool).free, usage(whole).free);
		char *a = report(pool, PA_REPORT_BUDDYINFO, 0),
		     *b = report(whole, PA_REPORT_BUDDYINFO, 0);
		CHECK_MSG(strcmp(a, b) == 0, "%s\n---\n%s", a, b);
		free(a);
		free(b);
		pa_shutdown(pool);
		pa_shutdown(whole);
	}
}

/*
 * Which block is offline as the racers see it: the block plus one in the
 * low half (0: none), and in the high half a count of the announcements,
 * so that a racer can tell whether it read the word before and after the
 * same one.
 */
typedef _Atomic uint64_t offline_word;

static int word_block(uint64_t w)
{
	return (int)(uint32_t)w - 1;
}

/* Announce block b offline (-1: none); only the test's thread writes the word. */
static void announce_offline(offline_word *word, int b)
{
	uint64_t w = atomic_load(word);
	atomic_store(word, (((w >> 32) + 1) << 32) | (uint32_t)(b + 1));
}

struct racer {
	struct towner o;       /* each thread's own movable owner */
	offline_word *offline; /* the block offline now */
	unsigned id;
	uint64_t ops, bad;
};

/*
 * Is the folio in slot idx, looked up now, in the block that `seen` (the
 * word, read after the folio was allocated) says is offline, with no
 * announcement in between? Without that last check a racer that read the
 * word and was then preempted looks up a folio that the next offline has
 * just moved into that block, which came back online meanwhile.
 */
static bool in_offline_block(struct racer *r, size_t idx, uint64_t seen)
{
	int off = word_block(seen);
	if (off < 0)
		return false;
	pa_pfn_t pfn = to_pfn(&r->o, idx);
	return pfn != PA_PFN_INVALID && (pfn >> r->o.pool->cfg.block_shift) == (unsigned)off &&
	       atomic_load(r->offline) == seen;
}

static void *racer_main(void *arg)
{
	struct racer *r = arg;
	long held[64];
	uint64_t rng = r->id + 7;
	for (unsigned k = 0; k < 64; k++)
		held[k] = -1;
	for (uint64_t i = 0; i < r->ops; i++) {
		unsigned k = (unsigned)(rng_next(&rng) % 64);
		if (held[k] >= 0)
			to_free(&r->o, (size_t)held[k]);
		/* The second racer asks for DMA32, whose zone test reads spans hotplug changes. */
		held[k] = to_alloc(&r->o, r->id ? PA_GFP_DMA32 : 0, (unsigned)(rng_next(&rng) % 4));
		uint64_t seen = atomic_load(r->offline);
		if (held[k] >= 0 && in_offline_block(r, (size_t)held[k], seen))
			r->bad++; /* handed a frame of a block that is offline */
	}
	to_free_all(&r->o);
	return NULL;
}

/* Two racers allocating and freeing in pool; each checks against the offline word. */
struct racers {
	offline_word offline;
	pthread_t t[2];
	struct racer r[2];
};

static void racers_start(struct racers *rs, struct pa_pool *pool)
{
	uint64_t ops = (uint64_t)(30000 * test_scale()) + 500;
	atomic_init(&rs->offline, 0);
	for (unsigned k = 0; k < 2; k++) {
		rs->r[k] = (struct racer){ .offline = &rs->offline, .id = k, .ops = ops };
		to_init(&rs->r[k].o, pool, ops + 64);
		rs->r[k].o.strict = false;
		REQUIRE(pthread_create(&rs->t[k], NULL, racer_main, &rs->r[k]) == 0);
	}
}

/* Block b is offline for a moment, as the racers see it. */
static void racers_see_offline(struct racers *rs, unsigned b, long ns)
{
	announce_offline(&rs->offline, (int)b);
	nanosleep(&(struct timespec){ 0, ns }, NULL);
	announce_offline(&rs->offline, -1);
}

static void racers_join(struct racers *rs)
{
	for (unsigned k = 0; k < 2; k++) {
		pthread_join(rs->t[k], NULL);
		CHECK_EQ_U64(rs->r[k].bad, 0);
		to_expect_clean(&rs->r[k].o);
	}
}

static void racers_destroy(struct racers *rs)
{
	for (unsigned k = 0; k < 2; k++)
		to_destroy(&rs->r[k].o);
}

/* Blocks full of other threads' movable folios go offline and online as they allocate (TSan too). */
TEST(hotplug_offline_while_other_threads_allocate)
{
	const char *line = "mem=256M kcompactd=manual";
	struct pa_pool *pool = test_boot(line);
	struct racers rs;
	racers_start(&rs, pool);
	uint64_t n = 1ull << pool->cfg.block_shift, ok = 0, busy = 0;
	for (unsigned i = 0; i < 12; i++) {
		unsigned b = i % 2;
		int rc = pa_memory_offline(pool, b * n, n);
		CHECK(rc == 0 || rc == -EBUSY);
		if (rc == 0) {
			ok++;
			racers_see_offline(&rs, b, 2000000);
			CHECK_EQ_U64(pa_memory_online(pool, b * n, n), 0);
		} else {
			/*
			 * A racer's folio just allocated and not yet given to its owner
			 * keeps the block busy; a busy try takes well under a millisecond,
			 * so without a pause the rest could all meet the same one.
			 */
			busy++;
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
		}
		char err[256];
		CHECK_MSG(pa_validate(pool, err, sizeof err) == 0, "pa_validate: %s", err);
	}
	racers_join(&rs);
	fprintf(stderr, "  %llu offlines succeeded, %llu were busy\n", (unsigned long long)ok,
	        (unsigned long long)busy);
	CHECK(ok > 0);
	expect_as_fresh(pool, line);
	pa_shutdown(pool);
	racers_destroy(&rs);
}

/*
 * The racers' check, with the interleaving that once made the test above
 * flaky played in one thread: a folio allocated while block 0 is offline
 * (so in block 1), the word read; block 0 back online and block 1 offline,
 * which moves the folio into block 0. Looked up now, the folio is in the
 * block the word named, but that block came back between the two reads:
 * not a frame of an offline block. With the word unchanged it would be.
 */
TEST(hotplug_racer_check_ignores_a_folio_moved_into_a_block_back_online)
{
	const char *line = "mem=256M kcompactd=manual";
	struct pa_pool *pool = test_boot(line);
	uint64_t n = 1ull << pool->cfg.block_shift;
	offline_word word;
	atomic_init(&word, 0);
	struct racer r = { .offline = &word };
	to_init(&r.o, pool, 4);
	REQUIRE(pa_memory_offline(pool, 0, n) == 0);
	announce_offline(&word, 0);
	long idx = to_alloc(&r.o, 0, 0);
	REQUIRE(idx >= 0);
	CHECK_EQ_U64(to_pfn(&r.o, (size_t)idx) / n, 1);
	uint64_t seen = atomic_load(&word); /* the racer is preempted here */
	announce_offline(&word, -1);
	REQUIRE(pa_memory_online(pool, 0, n) == 0);
	REQUIRE(pa_memory_offline(pool, n, n) == 0);
	announce_offline(&word, 1);
	CHECK_EQ_U64(to_pfn(&r.o, (size_t)idx) / n, 0); /* moved out of block 1 */
	CHECK(!in_offline_block(&r, (size_t)idx, seen));
	/* The same lookup against a word that did not change counts it. */
	announce_offline(&word, 0); /* as if block 0 were offline */
	CHECK(in_offline_block(&r, (size_t)idx, atomic_load(&word)));
	REQUIRE(pa_memory_online(pool, n, n) == 0);
	VALIDATE(pool);
	to_expect_clean(&r.o);
	to_finish_as_fresh(&r.o, line);
}

/*
 * Offline the block, retrying while it is busy: a folio just allocated is
 * not movable until its owner takes it, and that thread may be off the CPU.
 */
static int offline_retry(struct pa_pool *pool, pa_pfn_t b, uint64_t n)
{
	int rc = pa_memory_offline(pool, b, n);
	for (int i = 0; i < 2000 && rc == -EBUSY; i++) {
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
		rc = pa_memory_offline(pool, b, n);
	}
	return rc;
}

/*
 * The node's top two blocks go between Normal and ZONE_MOVABLE (booted
 * without movablecore=, so empty at first) while other threads allocate
 * and free movable folios: their allocations follow the zones as they
 * change (the per-CPU fast path's zone included), never land in an offline
 * block, and the pool checks out after each step (TSan too).
 */
TEST(hotplug_blocks_move_between_zones_while_other_threads_allocate)
{
	const char *line = "mem=1G kcompactd=manual";
	struct pa_pool *pool = test_boot(line);
	struct pa_zone *mz = pool->nodes[0].zones[PA_ZONE_MOVABLE];
	REQUIRE(mz && mz->present_pages == 0);
	struct racers rs;
	racers_start(&rs, pool);
	uint64_t n = 1ull << pool->cfg.block_shift, moved = 0;
	pa_pfn_t top = pool->nodes[0].end_pfn;
	for (unsigned i = 0; i < 8; i++) {
		/* Movable: the upper block first, then the lower; back to the kernel lower first. */
		bool to_movable = i % 4 < 2;
		pa_pfn_t b = to_movable == (i % 2 == 0) ? top - n : top - 2 * n;
		int rc = offline_retry(pool, b, n);
		CHECK_MSG(rc == 0, "offline of block %llu: %d", (unsigned long long)(b / n), rc);
		if (rc)
			break;
		racers_see_offline(&rs, (unsigned)(b / n), 1000000);
		rc = pa_memory_online_type(pool, b, n,
		                           to_movable ? PA_ONLINE_MOVABLE : PA_ONLINE_KERNEL);
		CHECK_MSG(rc == 0, "online of block %llu: %d", (unsigned long long)(b / n), rc);
		CHECK(zone_of_pfn(pool, b) ==
		      (to_movable ? mz : pool->nodes[0].zones[PA_ZONE_DMA32]));
		moved += rc == 0;
		char err[256];
		CHECK_MSG(pa_validate(pool, err, sizeof err) == 0, "pa_validate: %s", err);
	}
	racers_join(&rs);
	CHECK_EQ_U64(moved, 8);
	CHECK_EQ_U64(mz->present_pages, 0);
	expect_as_fresh(pool, line);
	pa_shutdown(pool);
	racers_destroy(&rs);
}

/* Direction changes along the max-order MOVABLE list, counting only blocks at or above from. */
static unsigned list_turns(struct pa_zone *z, pa_pfn_t from, unsigned *seen)
{
	unsigned turns = 0, mo = z->pool->cfg.max_order;
	int dir = 0;
	pa_pfn_t last = PA_NIL;
	*seen = 0;
	pa_lock(&z->lock, SITE_ADMIN);
	for (pa_pfn_t p = buddy_list_peek(z, mo, PA_MT_MOVABLE); p != PA_NIL;
	     p = pfn_page(z->pool, p)->lru.next) {
		if (p < from)
			continue;
		int d = last == PA_NIL ? 0 : p > last ? 1 : -1;
		turns += dir && d && d != dir;
		dir = d ? d : dir;
		last = p;
		(*seen)++;
	}
	pa_unlock(&z->lock);
	return turns;
}

/* shuffle=1: memory onlined is shuffled into the zone's lists, not left in address order. */
TEST(hotplug_online_with_shuffle_shuffles_the_new_blocks)
{
	struct pa_pool *pool = test_boot("mem=2G offline=1G-2G shuffle=1 kcompactd=manual");
	uint64_t n = 1ull << pool->cfg.block_shift, s = (1ull << 30) >> pool->cfg.page_shift;
	for (pa_pfn_t b = s; b < 2 * s; b += n)
		REQUIRE(pa_memory_online(pool, b, n) == 0);
	VALIDATE(pool);
	unsigned seen, turns = list_turns(zone_of_pfn(pool, s), s, &seen);
	uint64_t want = s >> pool->cfg.max_order;
	CHECK_EQ_U64(seen, want);
	/* In address order, or head-or-tail alone, gives at most one turn; a shuffle about 2/3 of them. */
	CHECK_MSG(turns > want / 4, "%u turns along %u onlined blocks", turns, seen);
	pa_shutdown(pool);
}

/* A zone's span, present and managed frames and high watermark, as zoneinfo prints them. */
struct zone_view {
	uint64_t spanned, present, managed, high, start_pfn;
};

/* The number after key in the zone's text at `at`; 0 when the zone's short form has none. */
static uint64_t zi_field(const char *at, const char *key)
{
	const char *p = strstr(at, key), *next = strstr(at + 1, "Node ");
	if (!p || (next && p > next))
		return 0;
	return strtoull(p + strlen(key), NULL, 10);
}

static struct zone_view view(struct pa_pool *pool, const char *zone)
{
	char *zi = report(pool, PA_REPORT_ZONEINFO, 0), head[64];
	snprintf(head, sizeof head, "zone %8s", zone);
	const char *at = strstr(zi, head);
	REQUIRE(at);
	struct zone_view v = { zi_field(at, "spanned"), zi_field(at, "present"),
		               zi_field(at, "managed"), zi_field(at, "high"),
		               zi_field(at, "start_pfn:") };
	free(zi);
	return v;
}

static void check_span(struct pa_pool *pool, const char *name, struct pa_zone *z, pa_pfn_t s,
                       pa_pfn_t e)
{
	struct zone_view v = view(pool, name);
	CHECK_EQ_U64(z->start_pfn, s);
	CHECK_EQ_U64(z->end_pfn, e);
	CHECK_EQ_U64(v.spanned, e - s);
	if (e > s)
		CHECK_EQ_U64(v.start_pfn, s);
}

#define MOV "mem=8G movablecore=2G kcompactd=manual"

/* Offlining an edge block shrinks the span; onlining grows it; the zone's sizes follow. */
TEST(hotplug_zone_spans_shrink_and_grow_at_the_edges)
{
	struct pa_pool *pool = test_boot(MOV);
	struct pa_zone *nz = zone_of_type(pool, PA_ZONE_NORMAL),
	               *mz = zone_of_type(pool, PA_ZONE_MOVABLE);
	REQUIRE(nz && mz);
	uint64_t nb = 1ull << pool->cfg.block_shift;
	pa_pfn_t lo = nz->start_pfn, hi = nz->end_pfn;
	struct zone_view n0 = view(pool, "Normal"), m0 = view(pool, "Movable");
	uint32_t pcp_high = nz->pcp[0]->high_max;
	REQUIRE(pa_memory_offline(pool, lo, nb) == 0); /* the lowest block */
	check_span(pool, "Normal", nz, lo + nb, hi);
	struct zone_view n1 = view(pool, "Normal");
	CHECK_EQ_U64(n1.present, n0.present - nb);
	CHECK_EQ_U64(n1.managed, n0.managed - nb);
	CHECK(n1.high < n0.high);                           /* watermarks recomputed */
	CHECK(nz->pcp[0]->high_max < pcp_high);             /* and the per-CPU list sizes */
	REQUIRE(pa_memory_offline(pool, hi - nb, nb) == 0); /* the highest */
	check_span(pool, "Normal", nz, lo + nb, hi - nb);
	REQUIRE(pa_memory_offline(pool, lo + 4 * nb, nb) == 0); /* one inside: the span stays */
	check_span(pool, "Normal", nz, lo + nb, hi - nb);
	VALIDATE(pool);
	REQUIRE(pa_memory_online(pool, hi - nb, nb) == 0);
	check_span(pool, "Normal", nz, lo + nb, hi);
	REQUIRE(pa_memory_online(pool, lo, nb) == 0);
	REQUIRE(pa_memory_online(pool, lo + 4 * nb, nb) == 0);
	check_span(pool, "Normal", nz, lo, hi);
	struct zone_view n2 = view(pool, "Normal");
	CHECK_EQ_U64(n2.present, n0.present);
	CHECK_EQ_U64(n2.high, n0.high);
	CHECK_EQ_U64(nz->pcp[0]->high_max, pcp_high);
	VALIDATE(pool);
	/* Every block of ZONE_MOVABLE offline: an empty span, then the whole zone back. */
	pa_pfn_t ms = mz->start_pfn, me = mz->end_pfn;
	for (pa_pfn_t b = me - nb; b + 1 > ms && b < me; b -= nb)
		REQUIRE(pa_memory_offline(pool, b, nb) == 0);
	CHECK_EQ_U64(view(pool, "Movable").spanned, 0);
	CHECK_EQ_U64(view(pool, "Movable").present, 0);
	VALIDATE(pool);
	/* As Linux: a block no zone spans goes online to the kernel zone, unless asked otherwise. */
	char path[64], buf[64];
	snprintf(path, sizeof path, "memory/%llu/valid_zones", (unsigned long long)(ms / nb));
	REQUIRE(pa_ctl_read(pool, path, buf, sizeof buf) > 0);
	CHECK_MSG(strcmp(buf, "Normal Movable\n") == 0, "%s", buf);
	for (pa_pfn_t b = ms; b < me; b += nb)
		REQUIRE(pa_memory_online_type(pool, b, nb, PA_ONLINE_MOVABLE) == 0);
	check_span(pool, "Movable", mz, ms, me);
	CHECK_EQ_U64(view(pool, "Movable").managed, m0.managed);
	expect_as_fresh(pool, MOV);
	pa_shutdown(pool);
}

/* online_movable and online_kernel move the boundary between Normal and Movable a block at a time. */
TEST(hotplug_online_movable_and_kernel_move_the_zone_boundary)
{
	struct pa_pool *pool = test_boot(MOV);
	struct pa_zone *nz = zone_of_type(pool, PA_ZONE_NORMAL),
	               *mz = zone_of_type(pool, PA_ZONE_MOVABLE);
	uint64_t nb = 1ull << pool->cfg.block_shift;
	pa_pfn_t lo = nz->start_pfn, mid = mz->start_pfn, top = mz->end_pfn;
	struct zone_view m0 = view(pool, "Movable");
	char path[64], buf[64];
	snprintf(path, sizeof path, "memory/%llu/state", (unsigned long long)((mid - nb) / nb));
	CHECK_EQ_U64(pa_memory_online_type(pool, mid - nb, nb, PA_ONLINE_MOVABLE), -EINVAL);
	/* The two Normal blocks below the boundary go movable, one after the other. */
	for (pa_pfn_t b = mid - nb; b >= mid - 2 * nb; b -= nb) {
		REQUIRE(pa_memory_offline(pool, b, nb) == 0);
		if (b == mid - nb) {
			REQUIRE(pa_ctl_read(pool, "memory/47/valid_zones", buf, sizeof buf) > 0);
			CHECK_MSG(b / nb == 47 && strcmp(buf, "Normal Movable\n") == 0, "%s", buf);
			REQUIRE(pa_ctl_write(pool, path, "online_movable\n") == 0);
		} else
			REQUIRE(pa_memory_online_type(pool, b, nb, PA_ONLINE_MOVABLE) == 0);
		CHECK(zone_of_pfn(pool, b) == mz && zone_of_pfn(pool, b + nb - 1) == mz);
		check_span(pool, "Normal", nz, lo, b);
		check_span(pool, "Movable", mz, b, top);
		VALIDATE(pool);
	}
	CHECK_EQ_U64(view(pool, "Movable").present, m0.present + 2 * nb);
	REQUIRE(pa_ctl_read(pool, path, buf, sizeof buf) > 0);
	CHECK_MSG(strcmp(buf, "online\n") == 0, "%s", buf);
	/* Kernel allocations never land there: fill Normal and DMA32 with them. */
	uint64_t kernel_in_movable = 0;
	for (struct pa_page *p; (p = pa_alloc_pages(pool, PA_GFP_KERNEL | PA_GFP_NOWARN, 9));)
		kernel_in_movable += zone_of_pfn(pool, pa_page_to_pfn(pool, p)) == mz;
	CHECK_EQ_U64(kernel_in_movable, 0);
	pa_shutdown(pool);
	pool = test_boot(MOV);
	nz = zone_of_type(pool, PA_ZONE_NORMAL);
	mz = zone_of_type(pool, PA_ZONE_MOVABLE);
	/* Inside Normal's span: ZONE_MOVABLE's span grows over Normal's (they overlap), and back. */
	REQUIRE(pa_memory_offline(pool, lo + nb, nb) == 0);
	REQUIRE(pa_ctl_read(pool, "memory/33/valid_zones", buf, sizeof buf) > 0);
	CHECK_MSG(strcmp(buf, "Normal Movable\n") == 0, "%s", buf);
	CHECK_EQ_U64(pa_memory_online_type(pool, lo + nb, nb, PA_ONLINE_MOVABLE), 0);
	CHECK(zone_of_pfn(pool, lo + nb) == mz);
	check_span(pool, "Normal", nz, lo, mid);
	check_span(pool, "Movable", mz, lo + nb, top);
	VALIDATE(pool);
	REQUIRE(pa_memory_offline(pool, lo + nb, nb) == 0);
	check_span(pool, "Movable", mz, mid, top); /* shrunk to the next online block of its own */
	CHECK_EQ_U64(ctl_u64(pool, "memory/33/online"), 0);
	CHECK_EQ_U64(pa_memory_online_type(pool, lo + nb, nb, PA_ONLINE_KERNEL), 0);
	CHECK(zone_of_pfn(pool, lo + nb) == nz);
	VALIDATE(pool);
	/* The lowest Movable block goes back to the kernel zone. */
	REQUIRE(pa_memory_online_type(pool, mid, nb, PA_ONLINE_KERNEL) == -EINVAL); /* online */
	REQUIRE(pa_memory_offline(pool, mid, nb) == 0);
	check_span(pool, "Movable", mz, mid + nb, top);
	REQUIRE(pa_memory_online_type(pool, mid, nb, PA_ONLINE_KERNEL) == 0);
	CHECK(zone_of_pfn(pool, mid) == nz);
	check_span(pool, "Normal", nz, lo, mid + nb);
	VALIDATE(pool);
	/* And back again: the pool is as booted. */
	REQUIRE(pa_memory_offline(pool, mid, nb) == 0);
	REQUIRE(pa_memory_online_type(pool, mid, nb, PA_ONLINE_MOVABLE) == 0);
	check_span(pool, "Normal", nz, lo, mid);
	check_span(pool, "Movable", mz, mid, top);
	expect_as_fresh(pool, MOV);
	pa_shutdown(pool);
	/* Without movablecore= the lowest Normal block goes movable too, below Normal's span. */
	pool = test_boot("mem=8G");
	nz = zone_of_type(pool, PA_ZONE_NORMAL);
	mz = pool->nodes[0].zones[PA_ZONE_MOVABLE];
	REQUIRE(pa_memory_offline(pool, lo, nb) == 0);
	CHECK_EQ_U64(pa_ctl_write(pool, "memory/32/state", "online_movable"), 0);
	check_span(pool, "Movable", mz, lo, lo + nb);
	check_span(pool, "Normal", nz, lo + nb, nz->end_pfn);
	VALIDATE(pool);
	REQUIRE(pa_memory_offline(pool, lo, nb) == 0);
	CHECK_EQ_U64(pa_memory_online_type(pool, lo, nb, PA_ONLINE_KERNEL), 0);
	expect_as_fresh(pool, "mem=8G");
	pa_shutdown(pool);
}

/*
 * Fill half of memory with order-0 folios (both zones: movable requests
 * take ZONE_MOVABLE first), free every other one, and compact: the free
 * scanners walk down through the other zone's pageblocks in their span.
 */
static void fragment_and_compact(struct pa_pool *pool)
{
	struct towner o;
	uint64_t want = (uint64_t)((double)(pool->nr_frames / 2) * test_scale()) + 1024;
	to_init(&o, pool, want);
	while (o.nr < want && to_alloc(&o, 0, 0) >= 0)
		;
	for (size_t i = 1; i < o.nr; i += 2)
		to_free(&o, i);
	CHECK(pa_compact(pool, -1) > 0);
	VALIDATE(pool);
	CHECK_EQ_U64(to_check_all(&o), (o.nr + 1) / 2);
	to_free_all(&o);
	to_expect_clean(&o);
	to_destroy(&o);
}

/*
 * Every other block inside DMA32 goes movable, so the two spans overlap
 * block by block, while other threads allocate and free movable folios;
 * compaction passes, a contiguous range in a movable block (and one across
 * a zone change, refused), then the blocks go back. The walkers of a span
 * (buddy merging, compaction's scanners, superblock steering with
 * max_order=18, pa_validate) take only their own zone's pageblocks.
 */
TEST(hotplug_overlapping_zones_while_other_threads_allocate)
{
	const char *lines[] = { "mem=2G kcompactd=manual", "mem=2G max_order=18 kcompactd=manual" };
	for (size_t l = 0; l < sizeof lines / sizeof lines[0]; l++) {
		struct pa_pool *pool = test_boot(lines[l]);
		struct pa_zone *kz = pool->nodes[0].zones[PA_ZONE_DMA32],
		               *mz = pool->nodes[0].zones[PA_ZONE_MOVABLE];
		REQUIRE(kz && mz);
		struct racers rs;
		racers_start(&rs, pool);
		uint64_t n = 1ull << pool->cfg.block_shift;
		char err[256];
		for (unsigned pass = 0; pass < 2; pass++) {
			for (pa_pfn_t b = 3 * n; b < 12 * n; b += 2 * n) {
				int rc = offline_retry(pool, b, n);
				CHECK_MSG(rc == 0, "offline of block %llu: %d",
				          (unsigned long long)(b / n), rc);
				if (rc)
					continue;
				racers_see_offline(&rs, (unsigned)(b / n), 500000);
				CHECK_EQ_U64(pa_memory_online_type(pool, b, n,
				                                   pass ? PA_ONLINE_KERNEL :
				                                          PA_ONLINE_MOVABLE),
				             0);
				CHECK(zone_of_pfn(pool, b) == (pass ? kz : mz));
				CHECK_MSG(pa_validate(pool, err, sizeof err) == 0,
				          "pa_validate: %s", err);
			}
			if (pass == 0) {
				check_span(pool, "Movable", mz, 3 * n, 12 * n);
				fragment_and_compact(pool);
				CHECK_MSG(pa_validate(pool, err, sizeof err) == 0,
				          "after compaction: %s", err);
				CHECK_EQ_U64(pa_alloc_contig_range(pool, 4 * n - 16, 4 * n + 16,
				                                   PA_MT_MOVABLE, 0),
				             -EINVAL); /* Movable, then DMA32 */
				int rc = pa_alloc_contig_range(pool, 5 * n, 5 * n + 512,
				                               PA_MT_MOVABLE, 0);
				CHECK(rc == 0 || rc == -EBUSY);
				if (rc == 0)
					pa_free_contig_range(pool, 5 * n, 512);
				CHECK_MSG(pa_validate(pool, err, sizeof err) == 0,
				          "after a contiguous range: %s", err);
			}
		}
		racers_join(&rs);
		CHECK_EQ_U64(mz->present_pages, 0);
		expect_as_fresh(pool, lines[l]);
		pa_shutdown(pool);
		racers_destroy(&rs);
	}
}

static void read_ctl(struct pa_pool *pool, const char *path, char *buf, size_t len)
{
	REQUIRE(pa_ctl_read(pool, path, buf, len) > 0);
}

/* The zoneinfo "protection:" line of a zone, e.g. "(0, 4096, 4096)". */
static void protection(struct pa_pool *pool, const char *zone, char *out, size_t len)
{
	char *zi = report(pool, PA_REPORT_ZONEINFO, 0), head[64];
	snprintf(head, sizeof head, "zone %8s", zone);
	const char *at = strstr(zi, head), *p = at ? strstr(at, "protection: ") : NULL;
	REQUIRE(p);
	p += strlen("protection: ");
	snprintf(out, len, "%.*s", (int)strcspn(p, "\n"), p);
	free(zi);
}

#define PLAIN "mem=8G kcompactd=manual"

/*
 * No movablecore=: the node's ZONE_MOVABLE is there from boot, empty, and
 * zoneinfo prints it as Linux prints an empty zone. The top block of the
 * node goes offline and online_movable gives it to ZONE_MOVABLE; movable
 * allocations are served from there, kernel ones never; it goes offline
 * again and back to Normal with online_kernel, and the pool is as booted.
 */
TEST(hotplug_online_movable_without_movablecore)
{
	struct pa_pool *pool = test_boot(PLAIN);
	struct pa_zone *nz = pool->nodes[0].zones[PA_ZONE_NORMAL],
	               *mz = pool->nodes[0].zones[PA_ZONE_MOVABLE];
	REQUIRE(nz && mz);
	uint64_t nb = 1ull << pool->cfg.block_shift;
	pa_pfn_t top = nz->end_pfn, b = top - nb;
	struct zone_view m0 = view(pool, "Movable");
	CHECK_EQ_U64(m0.spanned + m0.present + m0.managed + m0.high, 0);
	char buf[64], path[64], prot[64];
	protection(pool, "Movable", prot, sizeof prot);
	CHECK_MSG(strcmp(prot, "(0, 0, 0)") == 0, "%s", prot); /* empty: all clear, as Linux */
	protection(pool, "DMA32", prot, sizeof prot);
	CHECK_MSG(strcmp(prot, "(0, 4096, 4096)") == 0, "%s", prot); /* Normal's 4 GiB / 256 */
	char *bi = report(pool, PA_REPORT_BUDDYINFO, 0);
	CHECK_MSG(!strstr(bi, "Movable"), "%s", bi); /* only populated zones, as Linux */
	free(bi);
	snprintf(path, sizeof path, "memory/%llu/valid_zones", (unsigned long long)(b / nb));
	read_ctl(pool, path, buf, sizeof buf);
	CHECK_MSG(strcmp(buf, "Normal\n") == 0, "%s", buf); /* online: its zone */
	REQUIRE(pa_memory_offline(pool, b, nb) == 0);
	read_ctl(pool, path, buf, sizeof buf);
	CHECK_MSG(strcmp(buf, "Normal Movable\n") == 0, "%s", buf);
	VALIDATE(pool);
	snprintf(path, sizeof path, "memory/%llu/state", (unsigned long long)(b / nb));
	REQUIRE(pa_ctl_write(pool, path, "online_movable") == 0);
	VALIDATE(pool);
	CHECK(zone_of_pfn(pool, b) == mz && zone_of_pfn(pool, top - 1) == mz);
	check_span(pool, "Normal", nz, nz->start_pfn, b);
	check_span(pool, "Movable", mz, b, top);
	struct zone_view m1 = view(pool, "Movable");
	CHECK_EQ_U64(m1.present, nb);
	CHECK_EQ_U64(m1.managed, nb);
	CHECK(m1.high > 0);
	protection(pool, "DMA32", prot, sizeof prot);
	snprintf(buf, sizeof buf, "(0, %llu, %llu)",
	         (unsigned long long)((b - nz->start_pfn) / 256),
	         (unsigned long long)((b - nz->start_pfn + nb) / 256));
	CHECK_MSG(strcmp(prot, buf) == 0, "%s, expected %s", prot, buf);
	/* Movable requests come from ZONE_MOVABLE first; kernel ones never do. */
	struct towner o;
	to_init(&o, pool, 64);
	long m0i = to_alloc(&o, 0, 0), m9i = to_alloc(&o, 0, 9);
	REQUIRE(m0i >= 0 && m9i >= 0);
	pa_pfn_t ker = must_alloc(pool, PA_GFP_KERNEL, 0);
	CHECK(zone_of_pfn(pool, to_pfn(&o, (size_t)m0i)) == mz);
	CHECK(zone_of_pfn(pool, to_pfn(&o, (size_t)m9i)) == mz);
	CHECK(zone_of_pfn(pool, ker) != mz);
	VALIDATE(pool);
	CHECK_EQ_U64(pa_memory_offline(pool, b, nb), 0); /* the movable folios move out */
	CHECK_EQ_U64(folios_in(&o, b, top), 0);
	CHECK_EQ_U64(to_check_all(&o), 2);
	VALIDATE(pool);
	struct zone_view m2 = view(pool, "Movable");
	CHECK_EQ_U64(m2.spanned + m2.present + m2.managed, 0);
	snprintf(path, sizeof path, "memory/%llu/valid_zones", (unsigned long long)(b / nb));
	read_ctl(pool, path, buf, sizeof buf);
	CHECK_MSG(strcmp(buf, "Normal Movable\n") == 0, "%s", buf); /* no zone spans it: kernel */
	REQUIRE(pa_memory_online_type(pool, b, nb, PA_ONLINE_KERNEL) == 0);
	CHECK(zone_of_pfn(pool, b) == nz);
	check_span(pool, "Normal", nz, nz->start_pfn, top);
	VALIDATE(pool);
	/* The empty ZONE_MOVABLE is back at the node's top: the block can go movable again. */
	REQUIRE(pa_memory_offline(pool, b, nb) == 0);
	REQUIRE(pa_memory_online_type(pool, b, nb, PA_ONLINE_MOVABLE) == 0);
	CHECK(zone_of_pfn(pool, b) == mz);
	REQUIRE(pa_memory_offline(pool, b, nb) == 0);
	REQUIRE(pa_memory_online_type(pool, b, nb, PA_ONLINE_KERNEL) == 0);
	VALIDATE(pool);
	free_pfn(pool, ker, 0);
	to_free_all(&o);
	to_expect_clean(&o);
	to_finish_as_fresh(&o, PLAIN);
}

/*
 * Which zone a block goes online to, as Linux's zone_for_pfn_range(): a
 * block inside DMA32's span that went movable comes back to DMA32 with
 * online_kernel and online (DMA32 alone spans it), not to Normal; the top
 * block of DMA32, once no zone spans it, goes to Normal, the highest kernel
 * zone, and online_movable can still give it to ZONE_MOVABLE.
 */
TEST(hotplug_online_picks_the_zone_that_spans_the_block)
{
	struct pa_pool *pool = test_boot(PLAIN);
	struct pa_node *nd = &pool->nodes[0];
	struct pa_zone *dz = nd->zones[PA_ZONE_DMA32], *nz = nd->zones[PA_ZONE_NORMAL],
	               *mz = nd->zones[PA_ZONE_MOVABLE];
	REQUIRE(dz && nz && mz);
	uint64_t nb = 1ull << pool->cfg.block_shift;
	pa_pfn_t in = (dz->start_pfn / nb + 2) * nb, edge = dz->end_pfn - nb;
	REQUIRE(in + nb < edge && edge % nb == 0);
	char path[64], buf[64];
	for (unsigned type = PA_ONLINE_DEFAULT; type <= PA_ONLINE_KERNEL; type++) {
		REQUIRE(pa_memory_offline(pool, in, nb) == 0);
		REQUIRE(pa_memory_online_type(pool, in, nb, PA_ONLINE_MOVABLE) == 0);
		REQUIRE(zone_of_pfn(pool, in) == mz);
		REQUIRE(pa_memory_offline(pool, in, nb) == 0);
		snprintf(path, sizeof path, "memory/%llu/valid_zones",
		         (unsigned long long)(in / nb));
		read_ctl(pool, path, buf, sizeof buf);
		CHECK_MSG(strcmp(buf, "DMA32 Movable\n") == 0, "%s", buf);
		CHECK_EQ_U64(pa_memory_online_type(pool, in, nb, (enum pa_online_type)type), 0);
		CHECK(zone_of_pfn(pool, in) == dz);
		VALIDATE(pool);
	}
	REQUIRE(pa_memory_offline(pool, edge, nb) == 0);
	snprintf(path, sizeof path, "memory/%llu/valid_zones", (unsigned long long)(edge / nb));
	read_ctl(pool, path, buf, sizeof buf);
	CHECK_MSG(strcmp(buf, "Normal Movable\n") == 0, "%s", buf);
	CHECK_EQ_U64(pa_memory_online_type(pool, edge, nb, PA_ONLINE_KERNEL), 0);
	CHECK(zone_of_pfn(pool, edge) == nz);
	check_span(pool, "Normal", nz, edge, nz->end_pfn);
	VALIDATE(pool);
	REQUIRE(pa_memory_offline(pool, edge, nb) == 0);
	CHECK_EQ_U64(pa_memory_online_type(pool, edge, nb, PA_ONLINE_MOVABLE), 0);
	CHECK(zone_of_pfn(pool, edge) == mz);
	VALIDATE(pool);
	pa_shutdown(pool);
}
