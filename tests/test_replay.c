/* SPDX-License-Identifier: MIT */
/*
 * pagealloc replay (tools/replay/): the parser against one line of every
 * event shape of the Linux 6.1 sample and every gfp flag name; plain, xz and
 * gzip input giving the same events; and a replay of the first 3,000 events
 * of the sample, from its `before/` snapshot, with exact counts and a clean
 * pa_validate.
 *
 * The expected counts were taken from the text with a separate script (a
 * dictionary of live head pfns): 1,488 mm_page_alloc, 197 mm_page_free, of
 * which 173 free a live traced allocation of the same order and 24 name a
 * block allocated before tracing began.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "test.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "replay/replay.h"
#include "replay/run.h"

#define DATA PA_SOURCE_DIR "/tests/data/replay"

static struct rp_trace read_trace(const char *path)
{
	struct rp_trace t;
	REQUIRE(rp_trace_read(path, &t, NULL) == 0);
	return t;
}

TEST(parser_reads_every_event_shape_of_the_sample)
{
	struct rp_trace t = read_trace(DATA "/shapes.txt");
	CHECK_EQ_U64(t.unparsed, 0);
	CHECK_EQ_U64(t.nr_cpus, 2);
	/* One line per shape; four names come twice (failed alloc, sync begin, taken isolation). */
	for (unsigned n = 0; n < RPN_COUNT; n++) {
		unsigned want = n == RPN_MM_PAGE_ALLOC || n == RPN_COMPACTION_BEGIN ||
		                                n == RPN_COMPACTION_ISOLATE_FREEPAGES ?
		                        2 :
		                        1;
		CHECK_MSG(t.per_name[n] == want, "%s: %llu lines, expected %u", rp_event_names[n],
		          (unsigned long long)t.per_name[n], want);
	}
	const struct rp_event *e = &t.ev[0];
	REQUIRE(t.nr > 0);
	/* init-1 [001] 11.396290: mm_page_alloc: pfn=0x1008dc order=1 migratetype=0 GFP_KERNEL_ACCOUNT|__GFP_ZERO */
	CHECK_EQ_U64(e->type, RP_ALLOC);
	CHECK_EQ_U64(e->pfn, 0x1008dc);
	CHECK_EQ_U64(e->order, 1);
	CHECK_EQ_U64(e->mt, 0);
	CHECK_EQ_U64(e->cpu, 1);
	CHECK_EQ_U64(e->ts_ns, 11396290000ull);
	CHECK_EQ_U64(e->arg, PA_GFP_ZERO);
	unsigned seen[RP_NR_ACTIONS] = { 0 };
	for (size_t i = 0; i < t.nr; i++)
		seen[t.ev[i].type]++;
	CHECK_EQ_U64(seen[RP_ALLOC], 1);
	CHECK_EQ_U64(seen[RP_ALLOC_FAILED], 1);
	CHECK_EQ_U64(seen[RP_FREE], 1);
	CHECK_EQ_U64(seen[RP_MARK], 1);
	CHECK_EQ_U64(seen[RP_KCOMPACTD], 1);
	CHECK_EQ_U64(seen[RP_ISOLATE_FREE], 1);
	/*
	 * kswapd's reclaim: wake and sleep, the end of the pass between them
	 * after kswapd's last line, and 7.x's balance_pgdat begin and end.
	 */
	CHECK_EQ_U64(seen[RP_RECLAIM], 5);
	static const unsigned reclaim[] = { RP_RECLAIM_WAKE, RP_RECLAIM_IDLE, RP_RECLAIM_SLEEP,
		                            RP_RECLAIM_BEGIN, RP_RECLAIM_END };
	unsigned nr_reclaim = 0;
	for (size_t i = 0; i < t.nr; i++) {
		if (t.ev[i].type == RP_RECLAIM && nr_reclaim < 5)
			CHECK_EQ_U64(t.ev[i].arg, reclaim[nr_reclaim++]);
		/* The failed THP came after the task's direct compaction. */
		if (t.ev[i].type == RP_ALLOC_FAILED)
			CHECK(t.ev[i].arg & RP_ALLOC_COMPACTED);
		if (t.ev[i].type == RP_ALLOC)
			CHECK(!(t.ev[i].arg & RP_ALLOC_COMPACTED));
	}
	REQUIRE(t.nr_marks == 1);
	CHECK(strcmp(t.marks[0], "PHASE 0 start") == 0);
	rp_trace_free(&t);
}

static void parse_all(struct rp_trace *t, const char *const *lines, size_t n)
{
	for (size_t i = 0; i < n; i++)
		CHECK_MSG(rp_parse_line(t, lines[i], strlen(lines[i])) == 0, "line %zu: %s", i,
		          t->err);
}

/* Drop the starting state's RP_STOCK events (a test of their own reads them). */
static void drop_stock(struct rp_trace *t)
{
	size_t n = 0;
	for (size_t i = 0; i < t->nr; i++)
		if (t->ev[i].type != RP_STOCK)
			t->ev[n++] = t->ev[i];
	t->nr = n;
}

/*
 * Replay a trace with no recording around it (a pool from boot, no
 * snapshots), validating after every event; boot: the whole boot line, or
 * NULL for the one the trace implies.
 */
static void lone_replay(const struct rp_trace *t, const char *boot, struct rp_result *r)
{
	struct rp_machine *m = calloc(1, sizeof *m);
	REQUIRE(m);
	m->min_free_kbytes = -1;
	struct rp_options opt = { .boot = boot, .validate_every = 1 };
	REQUIRE(rp_replay(t, m, &opt, r) == 0);
	free(r->series);
	r->series = NULL;
	free(m);
}

TEST(parser_action_fields)
{
	struct rp_trace t = { 0 };
	static const char *const lines[] = {
		"  toucher-1128    [001] .....    82.914143: mm_page_alloc: page=0000000000000000 "
		"pfn=0x0 order=9 migratetype=1 gfp_flags=GFP_TRANSHUGE|__GFP_NORETRY|__GFP_THISNODE",
		"  kcompactd0-34   [000] .....    83.158728: mm_compaction_kcompactd_wake: nid=0 "
		"order=9 classzone_idx=Normal  ",
		"  toucher-1128    [001] .....    82.912113: mm_compaction_isolate_freepages: "
		"range=(0x182800 ~ 0x182a00) nr_scanned=512 nr_taken=7",
		"  init-1          [001] .....    87.125592: mm_compaction_begin: zone_start=0x1 "
		"migrate_pfn=0x1 free_pfn=0xe00 zone_end=0x1000, mode=sync",
		"  init-1          [001] .....    87.125984: mm_compaction_begin: zone_start=0x1000 "
		"migrate_pfn=0x1000 free_pfn=0xffe00 zone_end=0x100000, mode=sync",
		"  cut-422         [000] ...1.    11.403202: mm_page_free: page=000000005d0a61df "
		"pfn=0x100a06 order=1",
		"  kworker/u4:1 x-45 [000] d..3.   11.5: mm_page_pcpu_drain: page=0 pfn=0x12 order=2 "
		"migratetype=0",
		"  dd-493 [000] d..3. 13.808218: mm_page_alloc_extfrag: page=0 pfn=0x16604 "
		"alloc_order=2 fallback_order=10 pageblock_order=9 alloc_migratetype=0 "
		"fallback_migratetype=1 fragmenting=0 change_ownership=1",
	};
	parse_all(&t, lines, sizeof lines / sizeof lines[0]);
	REQUIRE(t.nr == 7);
	CHECK_EQ_U64(t.ev[0].type, RP_ALLOC_FAILED);
	CHECK_EQ_U64(t.ev[0].arg, PA_GFP_MOVABLE | PA_GFP_COMP | PA_GFP_NOWARN | PA_GFP_NORETRY |
	                                  PA_GFP_THISNODE);
	CHECK_EQ_U64(t.ev[1].type, RP_KCOMPACTD);
	CHECK_EQ_U64(t.ev[1].order, 9); /* the order it woke for, asked of the pool's */
	CHECK_EQ_U64(t.ev[2].type, RP_ISOLATE_FREE);
	CHECK_EQ_U64(t.ev[2].pfn, 0x182800);
	CHECK_EQ_U64(t.ev[2].arg, 0x182a00);
	/* A compact_memory sweep: one event for its first zone, none for the next. */
	CHECK_EQ_U64(t.ev[3].type, RP_COMPACT_MEMORY);
	CHECK_EQ_U64(t.ev[4].type, RP_FREE);
	CHECK_EQ_U64(t.ev[4].ts_ns, 11403202000ull);
	CHECK_EQ_U64(t.per_name[RPN_MM_PAGE_PCPU_DRAIN], 1);
	/* A drain of a block no line named before: a CPU's list held it at the start. */
	CHECK_EQ_U64(t.ev[5].type, RP_STOCK);
	CHECK_EQ_U64(t.ev[5].pfn, 0x10);
	CHECK_EQ_U64(t.ev[5].order, 2);
	CHECK_EQ_U64(t.ev[5].mt, PA_MT_UNMOVABLE);
	/* A fallback: the free block it took from, and that block's type. */
	CHECK_EQ_U64(t.ev[6].type, RP_EXTFRAG);
	CHECK_EQ_U64(t.ev[6].pfn, 0x16400);
	CHECK_EQ_U64(t.ev[6].order, 10);
	CHECK_EQ_U64(t.ev[6].mt, PA_MT_MOVABLE);

	/* Bad lines are counted and the first one is described. */
	const char *bad = "  init-1 [001] .....    1.0: mm_page_alloc: pfn=0x10 order=0 "
	                  "migratetype=0 gfp_flags=GFP_KERNEL|__GFP_BOGUS";
	CHECK(rp_parse_line(&t, bad, strlen(bad)) == -1);
	CHECK(strstr(t.err, "__GFP_BOGUS") != NULL);
	const char *junk = "not a trace line";
	CHECK(rp_parse_line(&t, junk, strlen(junk)) == -1);
	CHECK_EQ_U64(t.unparsed, 2);
	rp_trace_free(&t);
}

/*
 * A CPU's run of mm_page_alloc_zone_locked lines with percpu_refill=1 is one
 * refill (RP_REFILL, arg: its pages), even with another CPU's lines between;
 * any other line of the CPU ends it, and a line of another list starts the next.
 */
TEST(parser_tells_refills_by_their_runs)
{
	struct rp_trace t = { 0 };
	static const char *const lines[] = {
		"  dd-493 [000] d..3. 14.922443: mm_page_alloc_zone_locked: page=0 pfn=0x31de "
		"order=0 migratetype=1 percpu_refill=1",
		"  dd-493 [000] d..3. 14.922549: mm_page_alloc_zone_locked: page=0 pfn=0x5c83 "
		"order=0 migratetype=1 percpu_refill=1",
		"  sh-500 [001] d..3. 14.922550: mm_page_alloc_zone_locked: page=0 pfn=0x7000 "
		"order=0 migratetype=0 percpu_refill=1",
		"  dd-493 [000] d..3. 14.922552: mm_page_alloc_zone_locked: page=0 pfn=0x5c9a "
		"order=0 migratetype=1 percpu_refill=1",
		"  dd-493 [000] ..... 14.922600: mm_page_alloc: page=0 pfn=0x31de order=0 "
		"migratetype=1 gfp_flags=GFP_HIGHUSER_MOVABLE",
		"  dd-493 [000] d..3. 14.922700: mm_page_alloc_zone_locked: page=0 pfn=0x6000 "
		"order=0 migratetype=1 percpu_refill=1",
		"  dd-493 [000] d..3. 14.922701: mm_page_alloc_zone_locked: page=0 pfn=0x6100 "
		"order=3 migratetype=0 percpu_refill=1",
		"  dd-493 [000] d..3. 14.922702: mm_page_alloc_zone_locked: page=0 pfn=0x8000 "
		"order=4 migratetype=1 percpu_refill=0",
	};
	parse_all(&t, lines, sizeof lines / sizeof lines[0]);
	REQUIRE(t.nr == 5);
	CHECK_EQ_U64(t.ev[0].type, RP_REFILL);
	CHECK_EQ_U64(t.ev[0].cpu, 0);
	CHECK_EQ_U64(t.ev[0].pfn, 0x31de);
	CHECK_EQ_U64(t.ev[0].mt, PA_MT_MOVABLE);
	CHECK_EQ_U64(t.ev[0].arg, 3); /* CPU 1's line between does not end CPU 0's run */
	CHECK_EQ_U64(t.ev[1].type, RP_REFILL);
	CHECK_EQ_U64(t.ev[1].cpu, 1);
	CHECK_EQ_U64(t.ev[1].arg, 1);
	CHECK_EQ_U64(t.ev[2].type, RP_ALLOC);
	CHECK_EQ_U64(t.ev[3].type, RP_REFILL); /* after the allocation: a new run */
	CHECK_EQ_U64(t.ev[3].arg, 1);
	CHECK_EQ_U64(t.ev[4].type, RP_REFILL); /* another list's */
	CHECK_EQ_U64(t.ev[4].order, 3);
	CHECK_EQ_U64(t.ev[4].mt, PA_MT_UNMOVABLE);
	rp_trace_free(&t);
}

/*
 * A run of mm_page_pcpu_drain lines right after a direct reclaim is
 * drain_all_pages(); after a compaction step, drain_local_pages(); after a
 * free (or from another task, or the idle task's pid 0) it is a spill.
 */
TEST(parser_drains_after_reclaim_and_compaction)
{
	struct rp_trace t = { 0 };
	static const char *const lines[] = {
		"  <idle>-0   [000] d.s2.  83.0: mm_page_pcpu_drain: page=0 pfn=0x10 order=0 "
		"migratetype=0",
		"  toucher-1128 [001] .....  83.079988: mm_vmscan_direct_reclaim_end: nr_reclaimed=17",
		"  <idle>-0   [000] d.s2.  83.08: mm_page_pcpu_drain: page=0 pfn=0x11 order=0 "
		"migratetype=0",
		"  toucher-1128 [001] d..2.  83.080235: mm_page_pcpu_drain: page=0 pfn=0x3306 order=0 "
		"migratetype=1",
		"  toucher-1128 [001] d..2.  83.080240: mm_page_pcpu_drain: page=0 pfn=0x3307 order=0 "
		"migratetype=1",
		"  toucher-1128 [001] .....  83.1: mm_compaction_migratepages: nr_migrated=3 "
		"nr_failed=0",
		"  toucher-1128 [001] d..2.  83.2: mm_page_pcpu_drain: page=0 pfn=0x3308 order=0 "
		"migratetype=1",
		"  toucher-1128 [001] .....  83.3: mm_vmscan_direct_reclaim_end: nr_reclaimed=1",
		"  toucher-1128 [001] ...1.  83.4: mm_page_free: page=0 pfn=0x100a06 order=0",
		"  toucher-1128 [001] d..2.  83.5: mm_page_pcpu_drain: page=0 pfn=0x3309 order=0 "
		"migratetype=1",
	};
	parse_all(&t, lines, sizeof lines / sizeof lines[0]);
	drop_stock(&t);
	REQUIRE(t.nr == 3);
	CHECK_EQ_U64(t.ev[0].type, RP_DRAIN);
	CHECK_EQ_U64(t.ev[0].arg, RP_DRAIN_ALL);
	CHECK_EQ_U64(t.ev[0].cpu, 1);
	CHECK_EQ_U64(t.ev[1].type, RP_DRAIN);
	CHECK_EQ_U64(t.ev[1].arg, RP_DRAIN_LOCAL);
	CHECK_EQ_U64(t.ev[1].pfn, 0x3308); /* its first page names the zone drained */
	CHECK_EQ_U64(t.ev[2].type, RP_FREE);
	CHECK_EQ_U64(t.per_name[RPN_MM_PAGE_PCPU_DRAIN], 6);
	rp_trace_free(&t);
}

/*
 * kcompactd's compaction between a wake for an order and its sleep answers
 * the order (RP_KCOMPACTD); a sweep of it with no wake before is its
 * proactive compaction (RP_PROACTIVE, on its node), one per sweep.
 */
TEST(parser_tells_kcompactds_proactive_passes)
{
	struct rp_trace t = { 0 };
	static const char *const lines[] = {
		"  kcompactd0-39 [000] .....  63.3: mm_compaction_kcompactd_sleep: nid=0",
		"  kcompactd0-39 [000] .....  63.374: mm_compaction_begin: zone_start=0x1 "
		"migrate_pfn=0x1 free_pfn=0xe00 zone_end=0x1000, mode=sync",
		"  kcompactd0-39 [000] .....  63.375: mm_compaction_begin: zone_start=0x1000 "
		"migrate_pfn=0x1000 free_pfn=0x7fe00 zone_end=0x7ffd7, mode=sync",
		"  kcompactd0-39 [000] .....  63.4: mm_compaction_kcompactd_sleep: nid=0",
		"  kcompactd0-39 [000] .....  65.7: mm_compaction_kcompactd_wake: nid=0 order=9 "
		"classzone_idx=DMA32",
		"  kcompactd0-39 [000] .....  65.8: mm_compaction_begin: zone_start=0x1000 "
		"migrate_pfn=0x1000 free_pfn=0x7fe00 zone_end=0x7ffd7, mode=sync",
		"  kcompactd0-39 [000] .....  65.9: mm_compaction_kcompactd_sleep: nid=0",
		"  kcompactd1-40 [001] .....  66.0: mm_compaction_begin: zone_start=0x80000 "
		"migrate_pfn=0x80000 free_pfn=0xffe00 zone_end=0x100000, mode=sync",
	};
	parse_all(&t, lines, sizeof lines / sizeof lines[0]);
	REQUIRE(t.nr == 3);
	CHECK_EQ_U64(t.ev[0].type, RP_PROACTIVE);
	CHECK_EQ_U64(t.ev[0].arg, 0);
	CHECK_EQ_U64(t.ev[1].type, RP_KCOMPACTD);
	CHECK_EQ_U64(t.ev[1].order, 9);
	CHECK_EQ_U64(t.ev[2].type, RP_PROACTIVE);
	CHECK_EQ_U64(t.ev[2].arg, 1);
	rp_trace_free(&t);
}

/*
 * An allocation after the task's direct compaction carries how hard the
 * kernel compacted: the lowest priority (Linux's COMPACT_PRIO_*) of its
 * tries that began a run, for the pool to go no harder; each allocation
 * starts afresh.
 */
TEST(parser_keeps_how_hard_the_kernel_compacted)
{
	struct rp_trace t = { 0 };
	static const char *const lines[] = {
		"  t-7 [001] .....  1.0: mm_compaction_try_to_compact_pages: order=9 "
		"gfp_mask=GFP_TRANSHUGE priority=2",
		"  t-7 [001] .....  1.1: mm_compaction_begin: zone_start=0x1000 migrate_pfn=0x1000 "
		"free_pfn=0x7e00 zone_end=0x8000, mode=async",
		"  t-7 [001] .....  1.2: mm_compaction_try_to_compact_pages: order=9 "
		"gfp_mask=GFP_TRANSHUGE priority=1",
		"  t-7 [001] .....  1.3: mm_compaction_begin: zone_start=0x1000 migrate_pfn=0x1000 "
		"free_pfn=0x7e00 zone_end=0x8000, mode=sync",
		"  t-7 [001] .....  1.4: mm_page_alloc: page=0 pfn=0x2000 order=9 migratetype=1 "
		"gfp_flags=GFP_TRANSHUGE",
		"  t-7 [001] .....  2.0: mm_compaction_try_to_compact_pages: order=9 "
		"gfp_mask=GFP_TRANSHUGE priority=2",
		"  t-7 [001] .....  2.1: mm_compaction_begin: zone_start=0x1000 migrate_pfn=0x1000 "
		"free_pfn=0x7e00 zone_end=0x8000, mode=async",
		"  t-7 [001] .....  2.4: mm_page_alloc: page=0 pfn=0x2200 order=9 migratetype=1 "
		"gfp_flags=GFP_TRANSHUGE",
	};
	parse_all(&t, lines, sizeof lines / sizeof lines[0]);
	REQUIRE(t.nr == 2);
	for (unsigned i = 0; i < 2; i++) {
		CHECK_EQ_U64(t.ev[i].type, RP_ALLOC);
		CHECK(t.ev[i].arg & RP_ALLOC_COMPACTED);
		CHECK_EQ_U64((t.ev[i].arg & RP_ALLOC_PRIO_MASK) >> RP_ALLOC_PRIO_SHIFT, i ? 2 : 1);
		CHECK_EQ_U64(t.ev[i].arg & ~RP_ALLOC_FLAGS & PA_GFP_ALL_FLAGS,
		             t.ev[i].arg & ~RP_ALLOC_FLAGS);
	}
	rp_trace_free(&t);
}

/*
 * A run of mm_page_pcpu_drain lines of a per-CPU kworker that starts its
 * CPU's lines afresh is the vmstat worker's decay (RP_DECAY, on that CPU);
 * a run after the kworker's own free is a spill, and an unbound kworker's
 * ("kworker/u4:1") is not the vmstat worker.
 */
TEST(parser_tells_the_vmstat_workers_decay_from_spills)
{
	struct rp_trace t = { 0 };
	static const char *const lines[] = {
		"  kworker/1:1-46 [001] d..2.  20.776131: mm_page_pcpu_drain: page=0 pfn=0x16374 "
		"order=0 migratetype=0",
		"  kworker/1:1-46 [001] d..2.  20.776142: mm_page_pcpu_drain: page=0 pfn=0x16373 "
		"order=0 migratetype=0",
		"  kworker/0:0-9  [000] .....  20.8: mm_page_free: page=0 pfn=0x72b4 order=0",
		"  kworker/0:0-9  [000] d..2.  20.8: mm_page_pcpu_drain: page=0 pfn=0x72b5 order=0 "
		"migratetype=1",
		"  kworker/u4:1-45 [000] d..3. 21.0: mm_page_pcpu_drain: page=0 pfn=0x12 order=0 "
		"migratetype=0",
		"  sh-550         [001] .....  21.5: mm_page_alloc: page=0 pfn=0x60f6 order=0 "
		"migratetype=0 gfp_flags=GFP_KERNEL",
		"  kworker/1:1-46 [001] d..2.  21.767537: mm_page_pcpu_drain: page=0 pfn=0x16375 "
		"order=0 migratetype=0",
	};
	parse_all(&t, lines, sizeof lines / sizeof lines[0]);
	drop_stock(&t);
	REQUIRE(t.nr == 4);
	CHECK_EQ_U64(t.ev[0].type, RP_DECAY);
	CHECK_EQ_U64(t.ev[0].cpu, 1);
	CHECK_EQ_U64(t.ev[1].type, RP_FREE);
	CHECK_EQ_U64(t.ev[2].type, RP_ALLOC);
	CHECK_EQ_U64(t.ev[3].type, RP_DECAY);
	CHECK_EQ_U64(t.ev[3].ts_ns, 21767537000ull);
	rp_trace_free(&t);
}

/*
 * The replay runs the vmstat worker once a second on each CPU, at the first
 * event of any CPU after it is due: a CPU without allocator events is not
 * idle to its timers. A decay the trace shows runs at once if the last was
 * half a second ago or more, and sets the phase either way.
 */
TEST(replay_decays_each_cpus_high_once_a_second)
{
	struct rp_trace t = { 0 };
	static const char *const lines[] = {
		/* CPU 0: due at its first event, then a second later. */
		"  a-1 [000] .....  10.0: mm_page_alloc: page=0 pfn=0x100 order=0 migratetype=0 "
		"gfp_flags=GFP_KERNEL",
		"  a-1 [000] .....  10.5: mm_page_free: page=0 pfn=0x100 order=0",
		"  a-1 [000] .....  11.0: mm_page_alloc: page=0 pfn=0x101 order=0 migratetype=0 "
		"gfp_flags=GFP_KERNEL",
		/* 0.9 s after the last: the kernel's worker ran, so here too, from now on. */
		"  kworker/0:1-9 [000] d..2. 11.9: mm_page_pcpu_drain: page=0 pfn=0x102 order=0 "
		"migratetype=0",
		"  a-1 [000] .....  12.5: mm_page_free: page=0 pfn=0x101 order=0",
		"  a-1 [000] .....  12.95: mm_page_alloc: page=0 pfn=0x103 order=0 migratetype=0 "
		"gfp_flags=GFP_KERNEL",
		/* 0.1 s after: the same pass, not another. */
		"  kworker/0:1-9 [000] d..2. 13.05: mm_page_pcpu_drain: page=0 pfn=0x104 order=0 "
		"migratetype=0",
		/* CPU 1: events at the start only; its worker runs on all the same. */
		"  b-2 [001] .....  10.2: mm_page_alloc: page=0 pfn=0x200 order=0 migratetype=0 "
		"gfp_flags=GFP_KERNEL",
		"  b-2 [001] .....  10.4: mm_page_free: page=0 pfn=0x200 order=0",
	};
	parse_all(&t, lines, sizeof lines / sizeof lines[0]);
	drop_stock(&t);
	REQUIRE(t.nr == 9);
	struct rp_result r;
	lone_replay(&t, "mem=64M max_order=9 nr_cpus=2 kcompactd=manual", &r);
	/* CPU 0 at 10.0, 11.0, 11.9, 12.95; CPU 1 at 10.0, 11.0 and 12.5 (due at 12.0) */
	CHECK_EQ_U64(r.decays, 7);
	CHECK_EQ_U64(r.bad_page, 0);
	rp_trace_free(&t);
}

/* 1000 pages taken on CPU 0 at 10 s, 400 given back; one event a second from 11.1 s to 30.1 s. */
static void parse_lists_then_a_quiet_cpu(struct rp_trace *t)
{
	char line[160];
	for (unsigned i = 0; i < 1400; i++) {
		if (i < 1000)
			snprintf(
			        line, sizeof line,
			        "  a-1 [000] .....  10.%03u: mm_page_alloc: page=0 pfn=%#x order=0 "
			        "migratetype=0 gfp_flags=GFP_KERNEL",
			        i / 8, 0x1000 + i);
		else
			snprintf(line, sizeof line,
			         "  a-1 [000] .....  10.%03u: mm_page_free: page=0 pfn=%#x order=0",
			         200 + (i - 1000) / 4, 0x1000 + i - 1000);
		REQUIRE(rp_parse_line(t, line, strlen(line)) == 0);
	}
	for (unsigned sec = 11; sec <= 30; sec++) {
		if (sec % 2)
			snprintf(
			        line, sizeof line,
			        "  a-1 [000] .....  %u.1: mm_page_alloc: page=0 pfn=0x2000 order=0 "
			        "migratetype=1 gfp_flags=GFP_HIGHUSER_MOVABLE",
			        sec);
		else
			snprintf(line, sizeof line,
			         "  a-1 [000] .....  %u.1: mm_page_free: page=0 pfn=0x2000 order=0",
			         sec);
		REQUIRE(rp_parse_line(t, line, strlen(line)) == 0);
	}
}

/*
 * A decay due here that would give pages back waits for the trace's: with
 * the lists that full, the kernel's worker would have shown its pass as the
 * worker's drain lines. As high decays toward what CPU 0's lists hold, the
 * passes stop (without the rule: one a second, 21); a pass the trace shows
 * runs.
 */
TEST(replay_a_decay_that_would_give_pages_back_waits_for_the_traces)
{
	struct rp_trace quiet = { 0 }, shown = { 0 };
	parse_lists_then_a_quiet_cpu(&quiet);
	parse_lists_then_a_quiet_cpu(&shown);
	static const char *const worker[] = {
		"  kworker/0:1-9 [000] d..2. 30.5: mm_page_pcpu_drain: page=0 pfn=0x1000 order=0 "
		"migratetype=0",
	};
	parse_all(&shown, worker, 1);
	struct rp_result rq, rs;
	lone_replay(&quiet, "mem=64M max_order=9 nr_cpus=1 kcompactd=manual", &rq);
	lone_replay(&shown, "mem=64M max_order=9 nr_cpus=1 kcompactd=manual", &rs);
	CHECK_MSG(rq.decays >= 3 && rq.decays < 15, "%llu decays", (unsigned long long)rq.decays);
	CHECK_EQ_U64(rs.decays, rq.decays + 1);
	CHECK_EQ_U64(rq.bad_page + rs.bad_page, 0);
	rp_trace_free(&quiet);
	rp_trace_free(&shown);
}

/*
 * The kernel refills a list only when it is empty: at a list's first refill
 * run, what the pool's list holds goes back to the buddy (the starting
 * stock's excess); later runs, and a lone line (an allocation that may have
 * gone past the lists), change nothing.
 */
TEST(replay_empties_a_list_at_its_first_refill)
{
	struct rp_trace t = { 0 };
	static const char *const lines[] = {
		"  a-1 [000] ..... 10.0: mm_page_alloc: page=0 pfn=0x100 order=0 migratetype=0 "
		"gfp_flags=GFP_KERNEL",
		"  a-1 [000] ..... 10.1: mm_page_alloc: page=0 pfn=0x200 order=0 migratetype=1 "
		"gfp_flags=GFP_HIGHUSER_MOVABLE",
		/* A lone line: no sure refill of the unmovable list. */
		"  a-1 [000] d..3. 10.2: mm_page_alloc_zone_locked: page=0 pfn=0x300 order=0 "
		"migratetype=0 percpu_refill=1",
		"  a-1 [000] ..... 10.3: mm_page_alloc: page=0 pfn=0x300 order=0 migratetype=0 "
		"gfp_flags=GFP_KERNEL",
		/* The movable list's first refill: the pool's list empties first. */
		"  a-1 [000] d..3. 10.4: mm_page_alloc_zone_locked: page=0 pfn=0x400 order=0 "
		"migratetype=1 percpu_refill=1",
		"  a-1 [000] d..3. 10.4: mm_page_alloc_zone_locked: page=0 pfn=0x401 order=0 "
		"migratetype=1 percpu_refill=1",
		"  a-1 [000] ..... 10.5: mm_page_alloc: page=0 pfn=0x400 order=0 migratetype=1 "
		"gfp_flags=GFP_HIGHUSER_MOVABLE",
		/* Its next refill: the lists follow the pool's own rules from now on. */
		"  a-1 [000] d..3. 10.6: mm_page_alloc_zone_locked: page=0 pfn=0x500 order=0 "
		"migratetype=1 percpu_refill=1",
		"  a-1 [000] d..3. 10.6: mm_page_alloc_zone_locked: page=0 pfn=0x501 order=0 "
		"migratetype=1 percpu_refill=1",
		"  a-1 [000] ..... 10.7: mm_page_alloc: page=0 pfn=0x500 order=0 migratetype=1 "
		"gfp_flags=GFP_HIGHUSER_MOVABLE",
	};
	parse_all(&t, lines, sizeof lines / sizeof lines[0]);
	REQUIRE(t.nr == 8);
	struct rp_result r;
	lone_replay(&t, "mem=64M max_order=9 nr_cpus=1 kcompactd=manual", &r);
	CHECK_EQ_U64(r.start_pcp_lists, 1);
	CHECK(r.start_pcp_excess > 0); /* the refill for 0x200 less that page */
	CHECK_EQ_U64(r.allocs, 5);
	CHECK_EQ_U64(r.failed_kernel_served, 0);
	CHECK_EQ_U64(r.bad_page, 0);
	CHECK_EQ_U64(r.validate_failures, 0);
	rp_trace_free(&t);
}

/*
 * The worker queues itself again a second on, rounded to a whole second of
 * jiffies (round_jiffies_relative()): a run the trace shows places the
 * seconds (x.8 here); one that came late for a second the replay already
 * ran (13.2 for 12.8) is not run again, and, more than a quarter second
 * late, puts the next two seconds on (14.8, after the trace's end).
 */
TEST(replay_queues_the_worker_on_whole_seconds_of_jiffies)
{
	struct rp_trace t = { 0 };
	char line[200];
	for (unsigned ds = 100; ds <= 145; ds++) { /* an event on CPU 0 every 0.1 s */
		if (ds == 108 || ds == 132) {
			snprintf(line, sizeof line,
			         "  kworker/0:1-9 [000] d..2. %u.%u: mm_page_pcpu_drain: page=0 "
			         "pfn=0x500 order=0 migratetype=0",
			         ds / 10, ds % 10);
			CHECK(rp_parse_line(&t, line, strlen(line)) == 0);
		}
		snprintf(
		        line, sizeof line,
		        ds % 2 ?
		                "  a-1 [000] ..... %u.%u: mm_page_free: page=0 pfn=0x100 order=0" :
		                "  a-1 [000] ..... %u.%u: mm_page_alloc: page=0 pfn=0x100 order=0 migratetype=0 gfp_flags=GFP_KERNEL",
		        ds / 10, ds % 10);
		CHECK_MSG(rp_parse_line(&t, line, strlen(line)) == 0, "%s: %s", line, t.err);
	}
	struct rp_result r;
	lone_replay(&t, "mem=64M max_order=9 nr_cpus=1 kcompactd=manual", &r);
	CHECK_EQ_U64(r.decays, 4); /* 10.0 (the first event), 10.8, 11.8, 12.8 */
	CHECK_EQ_U64(r.bad_page, 0);
	rp_trace_free(&t);
}

/*
 * By default a replay validates the pool every as many events as it has
 * frames (at least every 200,000): each validation walks every frame.
 */
TEST(replay_validates_as_often_as_the_pool_is_large)
{
	struct rp_trace t = { 0 };
	char line[200];
	for (unsigned i = 0; i < 300000; i++) {
		snprintf(
		        line, sizeof line,
		        i % 2 ? "  a-1 [000] ..... %u.%06u: mm_page_free: page=0 pfn=0x%x order=0" :
		                "  a-1 [000] ..... %u.%06u: mm_page_alloc: page=0 pfn=0x%x order=0 "
		                "migratetype=1 gfp_flags=GFP_HIGHUSER_MOVABLE",
		        10 + i / 1000000, i % 1000000, 0x1000 + (i / 2) % 4096);
		REQUIRE(rp_parse_line(&t, line, strlen(line)) == 0);
	}
	struct rp_machine *m = calloc(1, sizeof *m);
	REQUIRE(m);
	m->min_free_kbytes = -1;
	static const struct {
		const char *boot;
		uint64_t validations; /* periodic ones, and the one at the end */
	} cases[] = {
		{ "mem=256M max_order=10 nr_cpus=1 kcompactd=manual", 1 + 1 }, /* 65,536 frames */
		{ "mem=1G max_order=10 nr_cpus=1 kcompactd=manual", 1 + 1 },   /* 262,144 */
		{ "mem=2G max_order=10 nr_cpus=1 kcompactd=manual", 0 + 1 },   /* 524,288 */
	};
	for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct rp_options opt = { .boot = cases[i].boot,
			                  .validate_every = RP_VALIDATE_AUTO };
		struct rp_result r;
		REQUIRE(rp_replay(&t, m, &opt, &r) == 0);
		free(r.series);
		CHECK_MSG(r.validations == cases[i].validations, "%s: %llu validations",
		          cases[i].boot, (unsigned long long)r.validations);
		CHECK_EQ_U64(r.validate_failures, 0);
	}
	free(m);
	rp_trace_free(&t);
}

/* A compaction run of kcompactd, as Linux 6.1 traces it, then a task freeing what was moved. */
static const char *const compaction_run[] = {
	"  init-5       [000] .....  83.0: mm_page_alloc: page=0 pfn=0x1000 order=0 "
	"migratetype=1 gfp_flags=GFP_HIGHUSER_MOVABLE",
	"  init-5       [000] .....  83.0: mm_page_alloc: page=0 pfn=0x1001 order=0 "
	"migratetype=1 gfp_flags=GFP_HIGHUSER_MOVABLE",
	"  kcompactd0-34 [001] .....  83.1: mm_compaction_begin: zone_start=0x1000 "
	"migrate_pfn=0x1000 free_pfn=0x4000 zone_end=0x4000, mode=sync",
	"  kcompactd0-34 [001] .....  83.1: mm_compaction_isolate_migratepages: "
	"range=(0x1000 ~ 0x1200) nr_scanned=2 nr_taken=2",
	"  kcompactd0-34 [001] .....  83.1: mm_compaction_isolate_freepages: "
	"range=(0x2000 ~ 0x2040) nr_scanned=64 nr_taken=3",
	"  kcompactd0-34 [001] .....  83.1: mm_page_free: page=0 pfn=0x1001 order=0",
	"  kcompactd0-34 [001] .....  83.1: mm_page_free: page=0 pfn=0x1000 order=0",
	"  kcompactd0-34 [001] .....  83.1: mm_migrate_pages: nr_succeeded=2 nr_failed=0 "
	"nr_thp_succeeded=0 nr_thp_failed=0 nr_thp_split=0 mode=MIGRATE_SYNC reason=compaction",
	"  kcompactd0-34 [001] .....  83.1: mm_compaction_migratepages: nr_migrated=2 "
	"nr_failed=0",
	"  kcompactd0-34 [001] .....  83.1: mm_compaction_isolate_migratepages: "
	"range=(0x1200 ~ 0x1400) nr_scanned=512 nr_taken=0",
	"  kcompactd0-34 [001] .....  83.1: mm_page_free: page=0 pfn=0x2002 order=0",
	"  kcompactd0-34 [001] .....  83.1: mm_compaction_end: zone_start=0x1000 "
	"migrate_pfn=0x1400 free_pfn=0x1400 zone_end=0x4000, mode=sync status=complete",
	"  kcompactd0-34 [001] .....  83.2: mm_page_free: page=0 pfn=0x2001 order=0",
	"  init-5       [000] .....  83.3: mm_page_free: page=0 pfn=0x2000 order=0",
	"  init-5       [000] .....  83.3: mm_page_free: page=0 pfn=0x2003 order=0",
};

/*
 * Compaction's own frees: the old pages of the pages it moved (between the
 * task's isolate_migratepages that took pages and its migratepages), and
 * the free pages it took but did not use (after, up to mm_compaction_end).
 * A free in an interrupt on that CPU, or after the run, is nobody's move.
 */
TEST(parser_tells_compactions_frees_apart)
{
	struct rp_trace t = { 0 };
	parse_all(&t, compaction_run, sizeof compaction_run / sizeof compaction_run[0]);
	static const unsigned want[] = { RP_FREE_MIGRATED, RP_FREE_MIGRATED, RP_FREE_UNUSED,
		                         RP_FREE_PLAIN,    RP_FREE_PLAIN,    RP_FREE_PLAIN };
	unsigned n = 0;
	for (size_t i = 0; i < t.nr; i++) {
		if (t.ev[i].type != RP_FREE)
			continue;
		REQUIRE(n < sizeof want / sizeof want[0]);
		CHECK_MSG(t.ev[i].arg == want[n], "free %u (pfn 0x%x): kind %u, expected %u", n,
		          t.ev[i].pfn, t.ev[i].arg, want[n]);
		n++;
	}
	CHECK_EQ_U64(n, sizeof want / sizeof want[0]);
	CHECK_EQ_U64(t.nr_runs, 0);
	/* Mid-run, a free in a soft interrupt on the compacting CPU. */
	static const char *const irq[] = {
		"  kcompactd0-34 [001] .....  83.9: mm_compaction_kcompactd_wake: nid=0 order=9 "
		"classzone_idx=DMA32",
		"  kcompactd0-34 [001] .....  84.0: mm_compaction_begin: zone_start=0x1000 "
		"migrate_pfn=0x1000 free_pfn=0x4000 zone_end=0x4000, mode=sync",
		"  kcompactd0-34 [001] .....  84.1: mm_compaction_isolate_migratepages: "
		"range=(0x1000 ~ 0x1200) nr_scanned=2 nr_taken=2",
		"  kcompactd0-34 [001] ..s1.  84.2: mm_page_free: page=0 pfn=0x3000 order=0",
	};
	size_t before = t.nr;
	parse_all(&t, irq, sizeof irq / sizeof irq[0]);
	REQUIRE(t.nr == before + 2); /* the wake, the free */
	CHECK_EQ_U64(t.ev[before + 1].arg, RP_FREE_PLAIN);
	CHECK_EQ_U64(t.nr_runs, 1);
	rp_trace_free(&t);
}

/*
 * The kernel moved two traced pages to pfns it took without an alloc event:
 * the allocations live on, so freeing the old pages frees nothing, and the
 * later frees of two of the pages it took give them back. What it took and
 * did not use, and a third free there, have nothing behind them.
 */
TEST(replay_keeps_what_compaction_moved_until_its_new_page_is_freed)
{
	struct rp_trace t = { 0 };
	parse_all(&t, compaction_run, sizeof compaction_run / sizeof compaction_run[0]);
	struct rp_result r;
	lone_replay(&t, NULL, &r);
	CHECK_EQ_U64(r.allocs, 2);
	CHECK_EQ_U64(r.free_class[RPF_MIGRATED], 2);
	CHECK_EQ_U64(r.free_class[RPF_UNUSED], 1);
	/* 0x2000 and 0x2001 give the two moved pages back; 0x2003 finds none left. */
	CHECK_EQ_U64(r.free_class[RPF_COMPACTION], 2);
	CHECK_EQ_U64(r.free_class[RPF_UNMATCHED], 1);
	CHECK_EQ_U64(r.free_class[RPF_TRACED], 0);
	CHECK_EQ_U64(r.bad_page, 0);
	CHECK_EQ_U64(r.validate_failures, 0);
	CHECK_EQ_U64(r.map_errors, 0);
	rp_trace_free(&t);
}

/*
 * A free of a page compaction moved one to gives back a moved block: the
 * oldest of that order still whole, in a movable pageblock (the kernel's
 * page was one: suitable_migration_target()). One given back since, or in
 * a pageblock of another type, leaves the queue.
 */
TEST(replay_gives_back_the_oldest_moved_block_in_a_movable_pageblock)
{
	struct pa_pool *pool = test_boot("mem=64M max_order=9 nr_cpus=1");
	struct rp_machine m = { 0 };
	struct rp_ctx c = { .pool = pool, .m = &m, .pre_list = -1 };
	c.pre = calloc((size_t)64 << 8, 1);
	REQUIRE(c.pre);
	struct pa_page *pg[4] = { pa_alloc_pages(pool, PA_GFP_KERNEL, 0) }; /* unmovable */
	uint32_t pfn[4];
	for (unsigned i = 0; i < 4; i++) {
		if (i)
			pg[i] = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0);
		REQUIRE(pg[i]);
		pfn[i] = (uint32_t)pa_page_to_pfn(pool, pg[i]);
		c.pre[pfn[i]] = 1; /* order 0 + 1 */
		rp_queue_moved(&c, pfn[i], 0);
	}
	pa_free_pages(pool, pg[1], 0); /* given back another way */
	c.pre[pfn[1]] = 0;
	CHECK(!rp_free_moved(&c, 0x1000, 1)); /* none of order 1 */
	CHECK(rp_free_moved(&c, 0x1000, 0));
	CHECK(c.pre[pfn[2]] == 0 && c.pre[pfn[3]] == 1 && c.pre[pfn[0]] == 1);
	CHECK(rp_free_moved(&c, 0x1000, 0));
	CHECK(c.pre[pfn[3]] == 0);
	CHECK(!rp_free_moved(&c, 0x1000,
	                     0)); /* the unmovable one is not a page compaction moved to */
	CHECK(c.pre[pfn[0]] == 1);
	pa_free_pages(pool, pg[0], 0);
	VALIDATE(pool);
	rp_moved_free(&c);
	free(c.pre);
	pa_shutdown(pool);
}

/* One event line of task-1 on CPU 0 at 10 s plus *us microseconds (counted up). */
static void parse_one(struct rp_trace *t, unsigned *us, const char *fmt, ...)
{
	char line[256];
	int n = snprintf(line, sizeof line, "  task-1 [000] .....  10.%06u: ", (*us)++);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
	va_end(ap);
	CHECK_MSG(rp_parse_line(t, line, strlen(line)) == 0, "%s: %s", line, t->err);
}

/*
 * A free of a block whose last line drained it into the buddy (and none
 * took it out again) is of a page the kernel took from the buddy without a
 * line: compaction's fast free scanner's, not alloc_pages_bulk()'s, which
 * takes from the lists. A block freed onto a list, or refilled from the
 * buddy, is not; a refill takes only the frames it names, a fallback's
 * block stays free but for what its allocation takes.
 */
TEST(parser_tells_a_free_of_what_the_buddy_held)
{
	struct rp_trace t = { 0 };
	unsigned us = 0;
	static const char alloc[] = "mm_page_alloc: page=0 pfn=%#x order=0 migratetype=1 "
	                            "gfp_flags=GFP_HIGHUSER_MOVABLE";
	static const char free_[] = "mm_page_free: page=0 pfn=%#x order=0";
	static const char drain[] = "mm_page_pcpu_drain: page=0 pfn=%#x order=%u migratetype=1";
	parse_one(&t, &us, alloc, 0x3000);
	parse_one(&t, &us, free_, 0x3000);
	parse_one(&t, &us, drain, 0x3000, 0);
	parse_one(&t, &us, free_, 0x3000); /* from the buddy */
	parse_one(&t, &us, alloc, 0x3100);
	parse_one(&t, &us, free_, 0x3100);
	parse_one(&t, &us, free_, 0x3100); /* from a list */
	parse_one(&t, &us, drain, 0x3200, 3);
	parse_one(&t, &us,
	          "mm_page_alloc_zone_locked: page=0 pfn=0x3200 order=0 migratetype=1 "
	          "percpu_refill=1");
	parse_one(&t, &us, free_, 0x3200); /* refilled: from a list */
	parse_one(&t, &us, free_, 0x3203); /* still the buddy's */
	parse_one(&t, &us, free_, 0x3203); /* freed since: from a list */
	parse_one(&t, &us,
	          "mm_page_alloc_extfrag: page=0 pfn=0x3400 alloc_order=0 fallback_order=3 "
	          "pageblock_order=9 alloc_migratetype=0 fallback_migratetype=1 fragmenting=1 "
	          "change_ownership=0");
	parse_one(&t, &us, alloc, 0x3400);
	parse_one(&t, &us, free_, 0x3400); /* the fallback's allocation */
	parse_one(&t, &us, free_, 0x3405); /* the rest of its block stayed free */
	static const bool want[] = { false, true, false, false, false, true, false, false, true };
	unsigned n = 0;
	for (size_t i = 0; i < t.nr; i++) {
		if (t.ev[i].type != RP_FREE)
			continue;
		REQUIRE(n < sizeof want / sizeof want[0]);
		CHECK_MSG(!(t.ev[i].arg & RP_FREE_FROM_BUDDY) == !want[n], "free %u (pfn %#x)", n,
		          t.ev[i].pfn);
		CHECK_EQ_U64(RP_FREE_KIND(t.ev[i].arg), RP_FREE_PLAIN);
		n++;
	}
	CHECK_EQ_U64(n, sizeof want / sizeof want[0]);
	rp_trace_free(&t);
}

/*
 * Compaction moved a traced page to a free page its fast free scanner took
 * (no mm_compaction_isolate_freepages names it): the trace drained that
 * page into the buddy last. Its free gives the moved allocation back; a
 * page the trace left on a list reads as alloc_pages_bulk()'s, and gives
 * nothing back.
 */
TEST(replay_gives_back_what_compaction_moved_to_a_page_it_took_unprinted)
{
	for (int drained = 0; drained < 2; drained++) {
		struct rp_trace t = { 0 };
		unsigned us = 0;
		static const char alloc[] = "mm_page_alloc: page=0 pfn=%#x order=0 migratetype=1 "
		                            "gfp_flags=GFP_HIGHUSER_MOVABLE";
		parse_one(&t, &us, alloc, 0x1000);
		parse_one(&t, &us, alloc, 0x5000);
		parse_one(&t, &us, "mm_page_free: page=0 pfn=0x5000 order=0");
		if (drained)
			parse_one(&t, &us,
			          "mm_page_pcpu_drain: page=0 pfn=0x5000 order=0 migratetype=1");
		parse_one(&t, &us,
		          "mm_compaction_begin: zone_start=0x1000 migrate_pfn=0x1000 "
		          "free_pfn=0x8000 zone_end=0x8000, mode=sync");
		parse_one(&t, &us,
		          "mm_compaction_isolate_migratepages: range=(0x1000 ~ 0x1200) "
		          "nr_scanned=1 nr_taken=1");
		parse_one(&t, &us, "mm_page_free: page=0 pfn=0x1000 order=0");
		parse_one(&t, &us, "mm_compaction_migratepages: nr_migrated=1 nr_failed=0");
		parse_one(&t, &us,
		          "mm_compaction_end: zone_start=0x1000 migrate_pfn=0x1200 "
		          "free_pfn=0x8000 zone_end=0x8000, mode=sync status=complete");
		parse_one(&t, &us, "mm_page_free: page=0 pfn=0x5000 order=0");
		struct rp_result r;
		lone_replay(&t, NULL, &r);
		CHECK_EQ_U64(r.free_class[RPF_MIGRATED], 1);
		CHECK_EQ_U64(r.free_class[RPF_COMPACTION], drained ? 1 : 0);
		CHECK_EQ_U64(r.free_class[RPF_UNTRACED], drained ? 0 : 1);
		CHECK_EQ_U64(r.bad_page, 0);
		CHECK_EQ_U64(r.validate_failures, 0);
		rp_trace_free(&t);
	}
}

/* The kernel allocates 31 of a 64 MiB pool's 32 pageblocks, unmovable. */
static void take_all_but_a_pageblock(struct rp_trace *t, unsigned *us)
{
	for (unsigned i = 0; i < 31; i++)
		parse_one(
		        t, us,
		        "mm_page_alloc: page=0 pfn=%#x order=9 migratetype=0 gfp_flags=GFP_KERNEL",
		        0x10000 + i * 512);
}

#define NOWAIT "GFP_NOWAIT|__GFP_NORETRY|__GFP_NOMEMALLOC"
#define THP    "GFP_TRANSHUGE|__GFP_NORETRY|__GFP_THISNODE"

/*
 * An order-0 failure of the kernel that the pool would serve shows memory
 * the kernel took without an event: the pool holds as much, until the
 * request fails here too, and the next such failure fails on its own. A
 * free of a block the trace freed before (taken again untraced) gives one
 * frame back, and so does an allocation the kernel served that the pool
 * could not.
 */
TEST(replay_holds_for_allocations_the_trace_does_not_show)
{
	struct rp_trace t = { 0 };
	unsigned us = 0;
	take_all_but_a_pageblock(&t, &us); /* then a page allocated and freed */
	parse_one(&t, &us,
	          "mm_page_alloc: page=0 pfn=0x20000 order=0 migratetype=0 gfp_flags=GFP_KERNEL");
	parse_one(&t, &us, "mm_page_free: page=0 pfn=0x20000 order=0");
	for (unsigned i = 0; i < 2; i++)
		parse_one(&t, &us,
		          "mm_page_alloc: page=0000000000000000 pfn=0x0 order=0 migratetype=0 "
		          "gfp_flags=" NOWAIT);
	parse_one(&t, &us, "mm_page_free: page=0 pfn=0x20000 order=0");
	parse_one(&t, &us,
	          "mm_page_alloc: page=0 pfn=0x20001 order=0 migratetype=0 gfp_flags=" NOWAIT);
	struct rp_result r;
	lone_replay(&t, "mem=64M max_order=9 nr_cpus=1 min_free_kbytes=1024 kcompactd=manual", &r);
	CHECK_EQ_U64(r.kernel_failed_attempts, 2);
	CHECK_EQ_U64(r.kernel_failed_served, 1); /* the first; the second fails here */
	/* About the last pageblock down to the min watermark (256 frames): not the bound (512). */
	CHECK_MSG(r.untraced_taken > 128 && r.untraced_taken < 384, "held %llu",
	          (unsigned long long)r.untraced_taken);
	CHECK_EQ_U64(r.free_class[RPF_UNTRACED], 1);
	/* The served one took back all that was held (one by one, then from the lists). */
	CHECK_EQ_U64(r.untraced_given, r.untraced_taken);
	CHECK_EQ_U64(r.failed_kernel_served, 0);
	CHECK_EQ_U64(r.untraced_max, r.untraced_taken);
	CHECK_EQ_U64(r.bad_page, 0);
	CHECK_EQ_U64(r.validate_failures, 0);
	rp_trace_free(&t);
}

/*
 * A fallback of the pool's raises its watermarks by a pageblock (Linux
 * 6.1's boost_watermark()), and no kswapd pass in the trace ends the boost:
 * the kernel made no such fallback. What the kernel served next, over its
 * min watermark, the boost keeps the pool from: the boost ends, as the pass
 * the kernel's kswapd would have run for it would end it, and the pool
 * serves them too, with no compaction the kernel did not run.
 */
TEST(replay_ends_a_boost_that_keeps_the_pool_from_what_the_kernel_served)
{
	struct rp_trace t = { 0 };
	unsigned us = 0;
	take_all_but_a_pageblock(&t, &us);
	static const char movable[] = "mm_page_alloc: page=0 pfn=%#x order=0 migratetype=1 "
	                              "gfp_flags=GFP_HIGHUSER_MOVABLE";
	parse_one(&t, &us, movable, 0x20000); /* the last pageblock splits */
	parse_one(&t, &us,
	          "mm_page_alloc: page=0 pfn=0x20100 order=0 migratetype=0 gfp_flags=GFP_KERNEL");
	for (unsigned i = 1; i < 300; i++)
		parse_one(&t, &us, movable, 0x20000 + i);
	struct rp_result r;
	lone_replay(
	        &t,
	        "mem=64M max_order=9 nr_cpus=1 min_free_kbytes=512 kcompactd=manual linux=6.1 pcp_orders=0-3",
	        &r);
	CHECK(r.fallbacks >= 1);
	CHECK(r.boosts_ended >= 1);
	CHECK_EQ_U64(r.failed_kernel_served, 0);
	CHECK_EQ_U64(r.extra_compactions, 0);
	CHECK_EQ_U64(r.bad_page, 0);
	CHECK_EQ_U64(r.validate_failures, 0);
	rp_trace_free(&t);
}

/*
 * The kernel served a request that may not reclaim (GFP_NOWAIT) where the
 * pool's zone sits under its min watermark only because another CPU's list
 * holds a refill: the kernel's lists held less there. The retry drains the
 * lists and serves it, without compacting (the request may not).
 */
TEST(replay_drains_the_lists_for_a_request_that_may_not_reclaim)
{
	struct rp_trace t = { 0 };
	unsigned us = 0;
	take_all_but_a_pageblock(&t, &us);
	char line[256];
	snprintf(line, sizeof line,
	         "  task-2 [001] .....  10.%06u: mm_page_alloc: page=0 pfn=0x20000 order=0 "
	         "migratetype=1 gfp_flags=GFP_HIGHUSER_MOVABLE",
	         us++);
	REQUIRE(rp_parse_line(&t, line, strlen(line)) == 0);
	for (unsigned i = 1; i < 250; i++)
		parse_one(&t, &us,
		          "mm_page_alloc: page=0 pfn=%#x order=0 migratetype=1 gfp_flags=" NOWAIT
		          "|__GFP_MOVABLE",
		          0x20000 + i);
	struct rp_result r;
	lone_replay(
	        &t,
	        "mem=64M max_order=9 nr_cpus=2 min_free_kbytes=1024 kcompactd=manual pcp_orders=0-3",
	        &r);
	CHECK_EQ_U64(r.failed_kernel_served, 0);
	CHECK(r.extra_compactions >= 1);
	CHECK_EQ_U64(r.bad_page, 0);
	CHECK_EQ_U64(r.validate_failures, 0);
	rp_trace_free(&t);
}

/*
 * A THP the kernel failed to find where the pool has a free pageblock: the
 * pool breaks the block (one frame held, the rest freed), so the next such
 * failure fails here too; a THP the kernel then served takes the frame back
 * before it tries anything the kernel did not do (a compaction), and the
 * block merges whole again.
 */
TEST(replay_breaks_a_block_the_kernel_had_not)
{
	struct rp_trace t = { 0 };
	unsigned us = 0;
	take_all_but_a_pageblock(&t, &us);
	for (unsigned i = 0; i < 2; i++)
		parse_one(&t, &us,
		          "mm_page_alloc: page=0000000000000000 pfn=0x0 order=9 migratetype=1 "
		          "gfp_flags=" THP);
	parse_one(&t, &us,
	          "mm_page_alloc: page=0 pfn=0x20000 order=9 migratetype=1 gfp_flags=" THP);
	struct rp_result r;
	/* Pageblocks off the lists: the last one stays in the buddy, not on a CPU's list. */
	lone_replay(&t,
	            "mem=64M max_order=9 nr_cpus=1 min_free_kbytes=0 kcompactd=manual "
	            "pcp_orders=0-3",
	            &r);
	CHECK_EQ_U64(r.kernel_failed_attempts, 2);
	CHECK_EQ_U64(r.kernel_failed_served, 1); /* the first; the second fails here */
	CHECK_EQ_U64(r.untraced_taken, 1);
	CHECK_EQ_U64(r.untraced_given, 1);
	CHECK_EQ_U64(r.extra_compactions, 0); /* the frame came back first */
	CHECK_EQ_U64(r.thp_served, 2);        /* the kernel's failure served first, then this */
	CHECK_EQ_U64(r.failed_kernel_served, 0);
	CHECK_EQ_U64(r.bad_page, 0);
	CHECK_EQ_U64(r.validate_failures, 0);
	rp_trace_free(&t);
}

/*
 * A THP the kernel served without compacting, where the pool's only free
 * memory is single frames in unmovable pageblocks: Linux's slow path stops
 * a THP's compaction at sync-light, which moves into movable pageblocks
 * only; the replay's retry goes on to the last priority and makes it.
 */
/*
 * Four and a half pageblocks of unmovable pages, every other one freed
 * again; movable pages in all but a few hundred frames of the rest; then a
 * THP the kernel served, after its own asynchronous compaction if `async`.
 */
static struct rp_result thp_after_fragmenting(bool async)
{
	struct rp_trace t = { 0 };
	unsigned us = 0, nu = 9 * 256, nm = 13700;
	for (unsigned i = 0; i < nu; i++)
		parse_one(
		        &t, &us,
		        "mm_page_alloc: page=0 pfn=%#x order=0 migratetype=0 gfp_flags=GFP_KERNEL",
		        0x10000 + i);
	for (unsigned i = 0; i < nu; i += 2)
		parse_one(&t, &us, "mm_page_free: page=0 pfn=%#x order=0", 0x10000 + i);
	for (unsigned i = 0; i < nm; i++)
		parse_one(&t, &us,
		          "mm_page_alloc: page=0 pfn=%#x order=0 migratetype=1 "
		          "gfp_flags=GFP_HIGHUSER_MOVABLE",
		          0x20000 + i);
	if (async) {
		parse_one(&t, &us,
		          "mm_compaction_try_to_compact_pages: order=9 gfp_mask=" THP
		          " priority=2");
		parse_one(&t, &us,
		          "mm_compaction_begin: zone_start=0x1000 migrate_pfn=0x1000 "
		          "free_pfn=0x3fe00 zone_end=0x40000, mode=async");
	}
	parse_one(&t, &us,
	          "mm_page_alloc: page=0 pfn=0x30000 order=9 migratetype=1 gfp_flags=" THP);
	struct rp_result r;
	lone_replay(&t, "mem=64M max_order=9 nr_cpus=1 min_free_kbytes=0 kcompactd=manual", &r);
	CHECK_EQ_U64(r.allocs, nu + nm + 1);
	CHECK_EQ_U64(r.bad_page, 0);
	CHECK_EQ_U64(r.validate_failures, 0);
	rp_trace_free(&t);
	return r;
}

/*
 * What the kernel served, the pool serves with a compaction as hard as
 * Linux's can be, where its own first try (none, or the kernel's
 * asynchronous one) finds no block: the pool's free blocks differ.
 */
TEST(replay_compacts_as_hard_as_linux_can_for_what_the_kernel_served)
{
	for (int async = 0; async < 2; async++) {
		struct rp_result r = thp_after_fragmenting(async);
		CHECK_EQ_U64(r.extra_compactions, 1);
		CHECK_EQ_U64(r.failed_kernel_served, 0);
		CHECK_EQ_U64(r.thp_served, 1);
	}
}

/*
 * What a CPU's lists held when the trace began, per zone, order and type: a
 * list serves from its stock until the trace shows its first refill, so the
 * stock is the most its allocations ran ahead of the frees onto it by then.
 * Each zone has its own lists: a refill in one ends no other zone's stock.
 */
TEST(parser_finds_what_each_cpus_lists_held_at_the_start)
{
	struct rp_trace t = { 0 };
	struct rp_state st = { .nr_zones = 2 };
	st.zone[0].end_pfn = st.zone[1].start_pfn = 0x1000;
	st.zone[1].end_pfn = 0x2000;
	unsigned us = 0;
	static const char alloc[] = "mm_page_alloc: page=0 pfn=%#x order=%u migratetype=%u "
	                            "gfp_flags=GFP_KERNEL";
	static const char refill[] = "mm_page_alloc_zone_locked: page=0 pfn=%#x order=0 "
	                             "migratetype=%u percpu_refill=%u";
	for (unsigned i = 0; i < 3; i++)
		parse_one(&t, &us, alloc, 0x100 + i, 0, 0);
	parse_one(&t, &us, "mm_page_free: page=0 pfn=0x100 order=0");
	parse_one(&t, &us, alloc, 0x103, 0, 0); /* 3 ahead, as before the free */
	parse_one(&t, &us, alloc, 0x300, 0, 1);
	parse_one(&t, &us, alloc, 0x1100, 0, 0); /* the other zone's list */
	size_t refill_at = t.nr;
	parse_one(&t, &us, refill, 0x200, 0, 1);
	parse_one(&t, &us, refill, 0x201, 0, 1);
	parse_one(&t, &us, refill, 0x600, 1, 0); /* the buddy's own: no refill */
	parse_one(&t, &us, alloc, 0x305, 0, 1);
	parse_one(&t, &us, refill, 0x700, 1, 1); /* a lone line: no sure refill */
	for (unsigned i = 0; i < 5; i++)         /* refilled: these come from the refill */
		parse_one(&t, &us, alloc, 0x200 + i, 0, 0);
	parse_one(&t, &us, alloc, 0x1101, 0, 0); /* zone 1's list was not refilled */
	parse_one(&t, &us, alloc, 0x301, 0, 1);
	parse_one(&t, &us, "mm_page_free: page=0 pfn=0x300 order=0");
	parse_one(&t, &us, alloc, 0x400, 1, 0);
	struct rp_pcp_stock *s = rp_pcp_stock(&t, &st);
	REQUIRE(s);
	CHECK_EQ_U64(s->first_refill[0][0][0][0], refill_at + 1);
	CHECK_EQ_U64(s->first_refill[0][0][0][1], 0);
	CHECK_EQ_U64(s->first_refill[1][0][0][0], 0);
	CHECK_EQ_U64(s->need[0][0][0][0], 3);
	CHECK_EQ_U64(s->need[0][0][0][1], 3); /* never refilled: over the whole trace */
	CHECK_EQ_U64(s->need[0][0][1][0], 2); /* one order-1 block */
	CHECK_EQ_U64(s->need[0][0][0][2], 0);
	CHECK_EQ_U64(s->need[1][0][0][0], 2);
	CHECK_EQ_U64(s->need[0][1][0][0], 0);
	free(s);
	rp_trace_free(&t);
}

/*
 * A drain of a block that no line named before (allocated, freed, taken by
 * a refill or a fallback, drained) was on a CPU's list when the trace
 * began: RP_STOCK, with the drain's pfn, order, type and CPU. A block of
 * which one frame was named says nothing.
 */
TEST(parser_names_the_blocks_the_lists_held_at_the_start)
{
	struct rp_trace t = { 0 };
	static const char *const lines[] = {
		"  a-1 [000] .....  1.0: mm_page_alloc: page=0 pfn=0x100 order=0 migratetype=1 "
		"gfp_flags=GFP_HIGHUSER_MOVABLE",
		"  a-1 [000] d..2.  1.1: mm_page_pcpu_drain: page=0 pfn=0x100 order=0 migratetype=1",
		"  a-1 [000] d..2.  1.2: mm_page_alloc_zone_locked: page=0 pfn=0x200 order=0 "
		"migratetype=1 percpu_refill=1",
		"  a-1 [000] d..2.  1.3: mm_page_pcpu_drain: page=0 pfn=0x200 order=0 migratetype=1",
		"  a-1 [000] d..2.  1.4: mm_page_alloc_extfrag: page=0 pfn=0x401 alloc_order=0 "
		"fallback_order=2 pageblock_order=9 alloc_migratetype=1 fallback_migratetype=0 "
		"fragmenting=1 change_ownership=0",
		"  a-1 [000] d..2.  1.5: mm_page_pcpu_drain: page=0 pfn=0x402 order=0 migratetype=1",
		"  a-1 [000] .....  1.6: mm_page_free: page=0 pfn=0x600 order=0",
		"  a-1 [000] d..2.  1.7: mm_page_pcpu_drain: page=0 pfn=0x601 order=0 migratetype=1",
		"  b-2 [001] d..2.  1.8: mm_page_pcpu_drain: page=0 pfn=0x500 order=1 migratetype=2",
		"  b-2 [001] d..2.  1.9: mm_page_pcpu_drain: page=0 pfn=0x500 order=1 migratetype=2",
		"  a-1 [000] .....  2.0: mm_page_alloc: page=0 pfn=0x701 order=0 migratetype=1 "
		"gfp_flags=GFP_HIGHUSER_MOVABLE",
		"  b-2 [001] d..2.  2.1: mm_page_pcpu_drain: page=0 pfn=0x700 order=1 migratetype=1",
		/* No kernel's block: named by nothing, at once. */
		"  b-2 [001] d..2.  2.2: mm_page_pcpu_drain: page=0 pfn=0x1 order=30 migratetype=1",
	};
	parse_all(&t, lines, sizeof lines / sizeof lines[0]);
	static const struct {
		uint32_t pfn;
		uint8_t order, mt, cpu;
	} want[] = { { 0x601, 0, PA_MT_MOVABLE, 0 }, { 0x500, 1, PA_MT_RECLAIMABLE, 1 } };
	unsigned n = 0;
	for (size_t i = 0; i < t.nr; i++) {
		const struct rp_event *ev = &t.ev[i];
		if (ev->type != RP_STOCK)
			continue;
		REQUIRE(n < sizeof want / sizeof want[0]);
		CHECK_EQ_U64(ev->pfn, want[n].pfn);
		CHECK_EQ_U64(ev->order, want[n].order);
		CHECK_EQ_U64(ev->mt, want[n].mt);
		CHECK_EQ_U64(ev->cpu, want[n].cpu);
		n++;
	}
	CHECK_EQ_U64(n, sizeof want / sizeof want[0]);
	rp_trace_free(&t);
}

TEST(gfp_every_flag_name_of_linux_6_1)
{
	static const char *const names[] = {
		"GFP_TRANSHUGE",
		"GFP_TRANSHUGE_LIGHT",
		"GFP_HIGHUSER_MOVABLE",
		"GFP_HIGHUSER",
		"GFP_USER",
		"GFP_KERNEL_ACCOUNT",
		"GFP_KERNEL",
		"GFP_NOFS",
		"GFP_ATOMIC",
		"GFP_NOIO",
		"GFP_NOWAIT",
		"GFP_DMA",
		"__GFP_HIGHMEM",
		"GFP_DMA32",
		"__GFP_HIGH",
		"__GFP_ATOMIC",
		"__GFP_IO",
		"__GFP_FS",
		"__GFP_NOWARN",
		"__GFP_RETRY_MAYFAIL",
		"__GFP_NOFAIL",
		"__GFP_NORETRY",
		"__GFP_COMP",
		"__GFP_ZERO",
		"__GFP_NOMEMALLOC",
		"__GFP_MEMALLOC",
		"__GFP_HARDWALL",
		"__GFP_THISNODE",
		"__GFP_RECLAIMABLE",
		"__GFP_MOVABLE",
		"__GFP_ACCOUNT",
		"__GFP_WRITE",
		"__GFP_RECLAIM",
		"__GFP_DIRECT_RECLAIM",
		"__GFP_KSWAPD_RECLAIM",
		"__GFP_ZEROTAGS",
		"__GFP_SKIP_ZERO",
		"__GFP_SKIP_KASAN_UNPOISON",
		"__GFP_SKIP_KASAN_POISON",
		"none",
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		pa_gfp_t g;
		CHECK_MSG(rp_parse_gfp(names[i], strlen(names[i]), &g, NULL, 0) == 0, "%s",
		          names[i]);
	}
	static const struct {
		const char *flags;
		pa_gfp_t want;
	} cases[] = {
		{ "GFP_KERNEL", 0 },
		{ "GFP_KERNEL_ACCOUNT|__GFP_ZERO", PA_GFP_ZERO },
		{ "GFP_ATOMIC", PA_GFP_HIGH | PA_GFP_NOCOMPACT },
		{ "GFP_NOWAIT|__GFP_NOWARN", PA_GFP_NOWARN | PA_GFP_NOCOMPACT },
		{ "GFP_HIGHUSER_MOVABLE|__GFP_COMP", PA_GFP_MOVABLE | PA_GFP_COMP },
		{ "GFP_TRANSHUGE", PA_GFP_MOVABLE | PA_GFP_COMP | PA_GFP_NOWARN },
		{ "GFP_TRANSHUGE_LIGHT",
		  PA_GFP_MOVABLE | PA_GFP_COMP | PA_GFP_NOWARN | PA_GFP_NOCOMPACT },
		{ "__GFP_IO|__GFP_NOWARN|__GFP_NORETRY|__GFP_COMP|__GFP_NOMEMALLOC|__GFP_RECLAIMABLE",
		  PA_GFP_NOWARN | PA_GFP_NORETRY | PA_GFP_COMP | PA_GFP_RECLAIMABLE |
		          PA_GFP_NOCOMPACT | PA_GFP_NOMEMALLOC },
		{ "GFP_DMA32|__GFP_DIRECT_RECLAIM", PA_GFP_DMA32 },
		{ "none", PA_GFP_NOCOMPACT },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		pa_gfp_t g = 0;
		REQUIRE(rp_parse_gfp(cases[i].flags, strlen(cases[i].flags), &g, NULL, 0) == 0);
		CHECK_MSG(g == cases[i].want, "%s: %#x, expected %#x", cases[i].flags, g,
		          cases[i].want);
	}
	char bad[80];
	pa_gfp_t g;
	CHECK(rp_parse_gfp("GFP_KERNEL|__GFP_NOPE", 21, &g, bad, sizeof bad) == -1);
	CHECK(strcmp(bad, "__GFP_NOPE") == 0);
}

TEST(parser_plain_xz_and_gzip_give_the_same_events)
{
	struct rp_trace xz = read_trace(DATA "/start/trace.txt.xz");
	struct rp_trace gz = read_trace(DATA "/excerpt.txt.gz");
	CHECK_EQ_U64(xz.lines, 3012);
	CHECK_EQ_U64(xz.unparsed, 0);
	REQUIRE(xz.nr == gz.nr);
	CHECK(memcmp(xz.ev, gz.ev, xz.nr * sizeof *xz.ev) == 0);
	CHECK(memcmp(xz.per_name, gz.per_name, sizeof xz.per_name) == 0);
	rp_trace_free(&xz);
	rp_trace_free(&gz);
	struct rp_trace missing;
	CHECK(rp_trace_read(DATA "/no-such-file", &missing, NULL) == -1);
}

/* The zone of a snapshot named name; NULL if it has none. */
static struct rp_zone_state *snap_zone(struct rp_state *st, const char *name)
{
	for (unsigned z = 0; z < st->nr_zones; z++)
		if (strcmp(st->zone[z].name, name) == 0)
			return &st->zone[z];
	return NULL;
}

/* The 6.1 sample's machine (DATA/start: its before/ snapshot, iomem, uname); the caller frees it. */
static struct rp_machine *start_machine(void)
{
	struct rp_machine *m = calloc(1, sizeof *m);
	REQUIRE(m && rp_machine_load(DATA "/start", m) == 0);
	return m;
}

/* Replay t from m's starting state, validating every 500 events; linux_ver NULL: the recording's. */
static struct rp_result start_replay(const struct rp_trace *t, struct rp_machine *m,
                                     const char *linux_ver)
{
	struct rp_options opt = { .validate_every = 500, .linux_ver = linux_ver };
	struct rp_result r;
	REQUIRE(rp_replay(t, m, &opt, &r) == 0);
	free(r.series);
	r.series = NULL;
	return r;
}

/*
 * The boot line gives the pool what the kernel managed: the kernel's
 * reservations (present, not managed) go in as memreserve=, the image where
 * iomem shows it, so watermarks and the per-CPU sizes come out as the
 * kernel's zoneinfo has them.
 */
TEST(replay_pool_manages_what_the_kernel_managed)
{
	struct rp_machine *m = start_machine();
	struct rp_trace t = read_trace(m->trace_path);
	char line[4096];
	rp_machine_boot_line(m, &t, line, sizeof line);
	strcat(line, " zone_dma=1"); /* as the replay adds for a kernel with a DMA zone */
	CHECK_MSG(strstr(line, "memreserve=16384K-30724K") != NULL, "no kernel code in %s", line);
	struct pa_pool *pool = NULL;
	char err[256];
	REQUIRE(pa_boot(line, NULL, &pool, err, sizeof err) == 0);
	pa_deferred_init_wait(pool);
	struct pa_zone_info zi;
	for (unsigned i = 0; pa_zone_info(pool, i, &zi) == 0; i++) {
		const struct rp_zone_state *kz =
		        snap_zone(&m->snap[0].kernel, pa_zone_name(zi.type));
		if (!kz)
			continue; /* the empty Movable */
		CHECK_EQ_U64(zi.present, kz->present);
		CHECK_EQ_U64(zi.managed, kz->managed);
		CHECK_EQ_U64(zi.watermark_min, kz->min_wmark);
	}
	pa_shutdown(pool);
	rp_trace_free(&t);
	free(m);
}

/*
 * Each CPU's high starts where the kernel's zoneinfo had it: a CPU whose
 * lists held more than high_min (the tuning had raised its high) keeps them
 * at the start, where a high at high_min would give the surplus back.
 */
TEST(replay_starts_each_cpus_high_at_the_kernels)
{
	struct rp_machine *m = start_machine();
	struct rp_zone_state *normal = snap_zone(&m->snap[0].kernel, "Normal");
	REQUIRE(normal);
	const uint64_t held = 12000; /* above high_min (5,279), below high_max */
	normal->pcp += held - normal->pcp_cpu[0];
	normal->pcp_cpu[0] = held;
	normal->pcp_high[0] = held + 500;
	struct rp_trace t = read_trace(m->trace_path);
	struct rp_result r = start_replay(&t, m, "7.2");
	struct rp_zone_state *model = snap_zone(&m->snap[0].model, "Normal");
	REQUIRE(model);
	CHECK_EQ_U64(model->pcp_cpu[0], held);
	CHECK_EQ_U64(r.validate_failures, 0);
	rp_trace_free(&t);
	free(m);
}

/*
 * A free block the kernel had in a zone's first pageblock, where the zone
 * starts inside it (DMA at pfn 1, its first MiB reserved): the starting
 * state places it there, in the pageblock of its type.
 */
TEST(replay_places_a_free_block_in_the_zones_partial_first_pageblock)
{
	struct rp_machine *m = start_machine();
	struct rp_zone_state *dma = snap_zone(&m->snap[0].kernel, "DMA");
	REQUIRE(dma && dma->pageblocks[PA_MT_UNMOVABLE] == 1);
	dma->free_mt[PA_MT_UNMOVABLE][7]++; /* 128 of the 256 frames above 1 MiB */
	dma->free[7]++;
	struct rp_trace t = read_trace(m->trace_path);
	struct rp_result r = start_replay(&t, m, NULL);
	CHECK_EQ_U64(r.start_shortfall, 0);
	struct rp_zone_state *model = snap_zone(&m->snap[0].model, "DMA");
	REQUIRE(model);
	CHECK_EQ_U64(model->free_mt[PA_MT_UNMOVABLE][7], 1);
	CHECK_EQ_U64(r.validate_failures, 0);
	rp_trace_free(&t);
	free(m);
}

/*
 * The trace says where the kernel's memory was in use at the start: a frame
 * whose first event is a free. The starting state keeps pre-trace memory
 * there, so that the free finds its block at the kernel's pfn, where
 * without the trace's word the kernel's free blocks would fill the zone
 * from its top down, over it.
 */
TEST(replay_keeps_pre_trace_memory_where_the_trace_frees_it_first)
{
	struct rp_machine *m = start_machine();
	/* Room for the kernel's free blocks to go elsewhere than Normal's top. */
	struct rp_zone_state *normal = snap_zone(&m->snap[0].kernel, "Normal");
	REQUIRE(normal && normal->free_mt[PA_MT_MOVABLE][10] > 16);
	normal->free_mt[PA_MT_MOVABLE][10] -= 16;
	normal->free[10] -= 16;
	struct rp_trace t = read_trace(m->trace_path);
	struct rp_event *ev = malloc((t.nr + 1) * sizeof *ev);
	REQUIRE(ev);
	memcpy(ev + 1, t.ev, t.nr * sizeof *ev);
	/* Just below Normal's reserved top, where its first free order-10 block would go. */
	ev[0] = (struct rp_event){
		.ts_ns = ev[1].ts_ns, .pfn = 0x1b8c05, .type = RP_FREE, .arg = RP_FREE_PLAIN
	};
	struct rp_trace with = t;
	with.ev = ev;
	with.nr = t.nr + 1;
	struct rp_result r = start_replay(&with, m, NULL);
	free(ev);
	CHECK_EQ_U64(r.free_class[RPF_PRE_TRACE], 25);
	CHECK_EQ_U64(r.pre_elsewhere, 0);
	CHECK_EQ_U64(r.start_shortfall, 0);
	CHECK_EQ_U64(r.validate_failures, 0);
	rp_trace_free(&t);
	free(m);
}

TEST(replay_of_3000_events_from_the_kernels_starting_state)
{
	struct rp_machine *m = start_machine();
	REQUIRE(m->nr_snapshots == 1);
	struct rp_trace t = read_trace(m->trace_path);
	struct rp_result r = start_replay(&t, m, NULL);
	CHECK_EQ_U64(r.events, 3000);
	CHECK_EQ_U64(r.allocs, 1488);
	CHECK_EQ_U64(r.frees, 197);
	CHECK_EQ_U64(r.free_class[RPF_TRACED], 173);
	CHECK_EQ_U64(r.free_class[RPF_PRE_TRACE], 24);
	CHECK_EQ_U64(r.free_class[RPF_SPLIT], 0);
	CHECK_EQ_U64(r.free_class[RPF_UNMATCHED], 0);
	CHECK_EQ_U64(r.failed_kernel_served, 0);
	CHECK_EQ_U64(r.bad_page, 0);
	CHECK_EQ_U64(r.validate_failures, 0);
	/* The marks, and the lists the start over-stocked, emptied at their first refill. */
	CHECK_EQ_U64(r.start_pcp_lists, 1);
	CHECK_EQ_U64(r.actions, 1488 + 197 + 2 + r.start_pcp_lists);
	CHECK_EQ_U64(r.validations,
	             1 + r.actions / 500); /* every 500 acted-on events, and at the end */
	CHECK_EQ_U64(r.map_errors, 0);
	CHECK_EQ_U64(r.marks, 2);
	/*
	 * The starting state is the kernel's: the same free blocks per order in
	 * every zone, DMA's free order-9 block too (its unmovable pageblock is
	 * the one with holes, below pfn 512), and the same pageblocks per type.
	 */
	const struct rp_snapshot *s = &m->snap[0];
	REQUIRE(s->taken);
	CHECK_EQ_U64(r.start_shortfall, 0);
	REQUIRE(s->model.nr_zones == s->kernel.nr_zones);
	for (unsigned z = 0; z < s->model.nr_zones; z++) {
		CHECK(strcmp(s->model.zone[z].name, s->kernel.zone[z].name) == 0);
		for (unsigned o = 0; o < 11; o++)
			CHECK_MSG(s->model.zone[z].free[o] == s->kernel.zone[z].free[o],
			          "%s order %u: %llu free blocks, the kernel %llu",
			          s->kernel.zone[z].name, o,
			          (unsigned long long)s->model.zone[z].free[o],
			          (unsigned long long)s->kernel.zone[z].free[o]);
		for (unsigned mt = 0; mt < RP_NR_MT; mt++)
			CHECK_EQ_U64(s->model.zone[z].pageblocks[mt],
			             s->kernel.zone[z].pageblocks[mt]);
	}
	CHECK(rp_state_tvd(&s->kernel, &s->model) < 0.0001);
	rp_trace_free(&t);
	free(m);
}

/*
 * The starting state types a pageblock as the trace first shows it: one
 * high in Normal whose first allocation is unmovable becomes one of the
 * kernel's unmovable pageblocks (lowest first would never reach it); one a
 * fallback names movable stays movable, though the fallback's allocation
 * there is unmovable.
 */
TEST(replay_types_pageblocks_where_the_trace_first_shows_them)
{
	struct rp_machine *m = start_machine();
	struct rp_trace t = read_trace(m->trace_path);
	struct rp_result r0 = start_replay(&t, m, NULL);
	CHECK(r0.start_pb_seen > 0);
	CHECK_EQ_U64(r0.start_pb_typed, r0.start_pb_seen);
	struct rp_event *ev = malloc((t.nr + 3) * sizeof *ev);
	REQUIRE(ev);
	memcpy(ev + 3, t.ev, t.nr * sizeof *ev);
	uint64_t ts = t.ev[0].ts_ns;
	ev[0] = (struct rp_event){ .ts_ns = ts,
		                   .pfn = 0x1a0000,
		                   .type = RP_ALLOC,
		                   .mt = PA_MT_UNMOVABLE,
		                   .arg = PA_GFP_KERNEL };
	ev[1] = (struct rp_event){
		.ts_ns = ts, .pfn = 0x180000, .type = RP_EXTFRAG, .order = 10, .mt = PA_MT_MOVABLE
	};
	ev[2] = (struct rp_event){ .ts_ns = ts,
		                   .pfn = 0x180200,
		                   .type = RP_ALLOC,
		                   .mt = PA_MT_UNMOVABLE,
		                   .arg = PA_GFP_KERNEL };
	struct rp_trace with = t;
	with.ev = ev;
	with.nr = t.nr + 3;
	struct rp_result r = start_replay(&with, m, NULL);
	free(ev);
	CHECK_EQ_U64(r.start_pb_seen, r0.start_pb_seen + 1); /* 0x1a0000's, not 0x180200's */
	CHECK_EQ_U64(r.start_pb_typed, r.start_pb_seen);
	CHECK_EQ_U64(r.actions, r0.actions + 2); /* the fallback's line is evidence only */
	CHECK_EQ_U64(r.start_shortfall, 0);
	CHECK_EQ_U64(r.validate_failures, 0);
	rp_trace_free(&t);
	free(m);
}

/* Write text to dir/name (dir/sub made if name has one). */
static void put_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	const char *slash = strchr(name, '/');
	if (slash) {
		snprintf(path, sizeof path, "%s/%.*s", dir, (int)(slash - name), name);
		mkdir(path, 0700);
	}
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	REQUIRE(f && fputs(text, f) >= 0 && fclose(f) == 0);
}

/* Load a recording folder holding an empty trace and, unless text is NULL, info file `name`. */
static int load_with_info(struct rp_machine *m, const char *name, const char *text)
{
	char dir[] = "/tmp/pagealloc-info-XXXXXX", cmd[600];
	if (!mkdtemp(dir))
		return -1;
	put_file(dir, "trace.txt", "");
	if (text)
		put_file(dir, name, text);
	int rc = rp_machine_load(dir, m);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? rc : -1;
}

/*
 * A recording of a NUMA machine is refused with a message, not replayed
 * on one node: its nodes' zones of one name are different memory. The
 * same snapshot of one node loads.
 */
TEST(replay_refuses_a_recording_of_several_numa_nodes)
{
	static const char zone0[] = "Node 0, zone   Normal\n  pages free     1000\n"
	                            "        spanned  4096\n        present  4096\n"
	                            "        managed  4000\n";
	static const char zone1[] = "Node 1, zone   Normal\n  pages free     1000\n"
	                            "        spanned  4096\n        present  4096\n"
	                            "        managed  4000\n";
	static const char buddy0[] = "Node 0, zone   Normal      0      0      0\n";
	static const char buddy1[] = "Node 1, zone   Normal      0      0      0\n";
	for (int nodes = 1; nodes <= 2; nodes++) {
		char dir[] = "/tmp/pagealloc-numa-XXXXXX", text[512];
		REQUIRE(mkdtemp(dir) != NULL);
		put_file(dir, "trace.txt", "");
		snprintf(text, sizeof text, "%s%s", zone0, nodes > 1 ? zone1 : "");
		put_file(dir, "before/zoneinfo", text);
		snprintf(text, sizeof text, "%s%s", buddy0, nodes > 1 ? buddy1 : "");
		put_file(dir, "before/buddyinfo", text);
		struct rp_machine *m = calloc(1, sizeof *m);
		REQUIRE(m);
		int rc = rp_machine_load(dir, m);
		CHECK_MSG(rc == (nodes > 1 ? -1 : 0), "%d nodes: rp_machine_load %d", nodes, rc);
		if (rc == 0) {
			CHECK_EQ_U64(m->nr_snapshots, 1);
			CHECK_EQ_U64(m->snap[0].kernel.nr_nodes, 1);
		}
		free(m);
		char cmd[600];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		CHECK(system(cmd) == 0);
	}
}

/*
 * A snapshot's uptime is CLOCK_BOOTTIME; a trace on the global or local
 * clock runs behind it (the 7.2 recording: tracing began at uptime 13.78,
 * its first event is stamped 13.722333). The skew moves the snapshots onto
 * the trace's clock; none where the first event is after tracing began or
 * the start is unknown. info/trace_window_uptime.txt is read in both of
 * its forms.
 */
TEST(replay_puts_snapshots_on_the_traces_clock)
{
	struct rp_machine *m = calloc(1, sizeof *m);
	REQUIRE(m);
	struct rp_trace t = { 0 };
	m->tracing_on = 13.78;
	t.first_ts_ns = 13722333000ull;
	CHECK_MSG(fabs(rp_clock_skew(m, &t) - 0.057667) < 1e-6, "skew %f", rp_clock_skew(m, &t));
	m->tracing_on = 11.38;
	t.first_ts_ns = 11396290000ull;
	CHECK(rp_clock_skew(m, &t) == 0);
	m->tracing_on = -1;
	CHECK(rp_clock_skew(m, &t) == 0);
	static const char *const windows[] = { "13.78 71.93\n",
		                               "tracing_on=1 at 30818.834214\n"
		                               "tracing_on=0 at 30871.419585\n",
		                               NULL };
	static const double want[] = { 13.78, 30818.834214, -1 };
	for (unsigned i = 0; i < 3; i++) {
		REQUIRE(load_with_info(m, "info/trace_window_uptime.txt", windows[i]) == 0);
		CHECK_MSG(fabs(m->tracing_on - want[i]) < 1e-9, "form %u: %f", i, m->tracing_on);
	}
	free(m);
}

/*
 * info/page_reporting.txt (pagealloc record on a guest whose balloon reports
 * free pages): read as reporting from the order it names, or from the
 * pageblock's where it names none; no file, no reporting.
 */
TEST(replay_reads_whether_the_guest_reported_free_pages)
{
	struct rp_machine *m = calloc(1, sizeof *m);
	REQUIRE(m);
	static const char *const files[] = {
		"reporting_device virtio0 virtio_balloon\npage_reporting_order 10\n",
		"reporting_device virtio0 virtio_balloon\n",
		NULL,
	};
	static const bool want[] = { true, true, false };
	static const unsigned want_order[] = { 10, 9, 0 };
	for (unsigned i = 0; i < 3; i++) {
		REQUIRE(load_with_info(m, "info/page_reporting.txt", files[i]) == 0);
		CHECK_MSG(m->page_reporting == want[i], "file %u", i);
		if (want[i])
			CHECK_EQ_U64(m->page_reporting_order, want_order[i]);
	}
	free(m);
}

/*
 * A kernel that set struct pages up late, as allocations needed them
 * (deferred_grow_zone(); "deferred_init=lazy" kernels leave all of the
 * deferred part to it): Normal managed fewer frames at the first snapshot
 * than at the last, with as many present. The pool boots deferred_init=lazy,
 * set up as far as the kernel's was (whole sections from the zone's start),
 * and the trace's frees there (the kernel freeing its new section a
 * max-order block at a time) set up as much of the pool.
 */
TEST(replay_sets_up_what_the_kernel_set_up_late)
{
	struct rp_machine *m = start_machine();
	REQUIRE(m->nr_snapshots == 1);
	m->snap[1] = m->snap[0];
	snprintf(m->snap[1].name, sizeof m->snap[1].name, "after");
	m->snap[1].kernel.uptime = -1; /* at the end */
	m->snap[0].kernel.uptime = 0;  /* before the first event */
	m->nr_snapshots = 2;
	struct rp_zone_state *before = snap_zone(&m->snap[0].kernel, "Normal");
	REQUIRE(before && before->start_pfn == 0x100000 && before->end_pfn == 0x1c0000);
	const uint64_t block = RP_SECTION_FRAMES, lo = 0x1a0000, hi = 0x1c0000;
	before->managed = lo - before->start_pfn; /* 20 blocks set up, 2 left */
	uint64_t a, b;
	rp_machine_lazy_range(m, &a, &b);
	CHECK_EQ_U64(a, lo);
	CHECK_EQ_U64(b, hi);
	struct rp_trace t = read_trace(m->trace_path);
	char line[4096];
	rp_machine_boot_line(m, &t, line, sizeof line);
	CHECK_MSG(strstr(line, " deferred_init=lazy") != NULL, "%s", line);
	rp_trace_free(&t);
	memset(&t, 0, sizeof t);
	unsigned us = 0;
	for (unsigned i = 0; i < block >> 10; i++)
		parse_one(&t, &us, "mm_page_free: page=0 pfn=%#llx order=10",
		          (unsigned long long)(lo + i * 1024));
	for (unsigned i = 0; i < 4; i++)
		parse_one(&t, &us,
		          "mm_page_alloc: page=0 pfn=%#llx order=10 migratetype=1 "
		          "gfp_flags=GFP_HIGHUSER_MOVABLE",
		          (unsigned long long)(lo + i * 1024));
	struct rp_result r = start_replay(&t, m, NULL);
	CHECK_EQ_U64(r.free_class[RPF_DEFERRED], block >> 10);
	CHECK_EQ_U64(r.free_class[RPF_UNMATCHED], 0);
	CHECK_EQ_U64(r.deferred_grown, block);
	CHECK_EQ_U64(r.failed_kernel_served, 0);
	CHECK_EQ_U64(r.validate_failures, 0);
	const struct rp_zone_state *start = snap_zone(&m->snap[0].model, "Normal");
	const struct rp_zone_state *end = snap_zone(&m->snap[1].model, "Normal");
	REQUIRE(start && end && m->snap[1].taken);
	CHECK_EQ_U64(start->managed, before->managed);
	CHECK_EQ_U64(end->managed, before->managed + block);
	rp_trace_free(&t);
	free(m);
}

/*
 * A CPU's lists held more than the trace draws from them: the rest waits on
 * the list its allocations leave alone, from any pre-trace memory once the
 * pageblocks of that type have none left, and stays there. Here CPU 0's
 * reclaimable list is made the one never refilled (its refills in the
 * sample become refills of the unmovable list), and Normal's six
 * reclaimable pageblocks hold far less than the rest: none of it comes
 * back at a first refill.
 */
TEST(replay_keeps_a_cpus_unused_stock_on_a_list_it_never_refills)
{
	struct rp_machine *m = start_machine();
	struct rp_zone_state *normal = snap_zone(&m->snap[0].kernel, "Normal");
	REQUIRE(normal && normal->pageblocks[PA_MT_RECLAIMABLE] * 512 < 4000);
	const uint64_t held = 9000; /* far more than the trace draws, below high */
	normal->pcp += held - normal->pcp_cpu[0];
	normal->pcp_cpu[0] = held;
	normal->pcp_high[0] = held + 500;
	struct rp_trace t = read_trace(m->trace_path);
	struct rp_event *read = t.ev,
	                *ev = malloc(t.nr * sizeof *ev); /* read may be the cache's map */
	REQUIRE(ev);
	memcpy(ev, read, t.nr * sizeof *ev);
	for (size_t i = 0; i < t.nr; i++)
		if (ev[i].type == RP_REFILL && ev[i].cpu == 0 && ev[i].order == 0 &&
		    ev[i].mt == PA_MT_RECLAIMABLE)
			ev[i].mt = PA_MT_UNMOVABLE;
	t.ev = ev;
	struct rp_pcp_stock *s = rp_pcp_stock(&t, &m->snap[0].kernel);
	int z = (int)(normal - m->snap[0].kernel.zone);
	REQUIRE(s && s->first_refill[z][0][0][PA_MT_UNMOVABLE] &&
	        !s->first_refill[z][0][0][PA_MT_RECLAIMABLE]);
	free(s);
	struct rp_result r = start_replay(&t, m, "7.2");
	struct rp_zone_state *model = snap_zone(&m->snap[0].model, "Normal");
	REQUIRE(model);
	CHECK_EQ_U64(model->pcp_cpu[0], held);
	CHECK_MSG(r.start_pcp_excess < 100, "%llu frames given back at first refills",
	          (unsigned long long)r.start_pcp_excess);
	CHECK_EQ_U64(r.validate_failures, 0);
	CHECK_EQ_U64(r.bad_page, 0);
	t.ev = read;
	free(ev);
	rp_trace_free(&t);
	free(m);
}

/*
 * Building the starting state takes every zone under its high watermark,
 * which marks it (Linux 6.7's ZONE_BELOW_HIGH: no refill raises high); the
 * marks go with the build, so that the trace's refills raise each CPU's
 * high as the kernel's did in zones above the mark. A second snapshot at
 * the trace's end reads the highs.
 */
TEST(replay_starts_with_no_zone_marked_under_its_high_watermark)
{
	struct rp_machine *m = start_machine();
	struct rp_trace t = read_trace(m->trace_path);
	REQUIRE(m->nr_snapshots == 1 && t.nr);
	m->snap[1] = m->snap[0];
	snprintf(m->snap[1].name, sizeof m->snap[1].name, "end");
	m->snap[1].kernel.uptime = (double)t.ev[t.nr - 1].ts_ns / 1e9 + 1;
	m->nr_snapshots = 2;
	struct rp_result r = start_replay(&t, m, "7.2");
	const struct rp_state *from = &m->snap[0].model, *to = &m->snap[1].model;
	REQUIRE(m->snap[1].taken);
	unsigned raised = 0;
	for (unsigned z = 0; z < to->nr_zones; z++)
		for (unsigned cpu = 0; cpu < RP_MAX_CPUS; cpu++)
			raised += to->zone[z].pcp_high[cpu] > from->zone[z].pcp_high[cpu];
	CHECK_MSG(raised > 0, "no CPU's high rose in %zu events", t.nr);
	CHECK_EQ_U64(r.validate_failures, 0);
	rp_trace_free(&t);
	free(m);
}

/*
 * The blocks the trace drains before any line names them go on the lists
 * at their own pfns (start_listed counts them), on the CPU that drained
 * them, unless that CPU's list of their order and type was refilled before
 * the drain: Linux refills only an empty list, so it was another CPU's
 * (a remote drain names the CPU that drains), and only one with room takes
 * it. Here 32 frames drained by CPU 1 fill its lists; 16 drained by CPU 0
 * after its movable list's first refill find no list. The sample's Normal
 * is nearly all free movable blocks of order 10, so that those on the
 * listed frames' spans find room only in pageblocks of other types: they
 * go there, of their order.
 */
TEST(replay_lists_the_blocks_the_trace_drains_first_at_their_pfns)
{
	enum { ON_1 = 32, AFTER_REFILL = 16 };
	struct rp_machine *m = start_machine();
	struct rp_zone_state *normal = snap_zone(&m->snap[0].kernel, "Normal");
	REQUIRE(normal);
	int z = (int)(normal - m->snap[0].kernel.zone);
	struct rp_trace t = read_trace(m->trace_path);
	uint8_t *named = calloc(normal->end_pfn / 8 + 1, 1);
	REQUIRE(named);
	size_t refill = SIZE_MAX;
	for (size_t i = 0; i < t.nr; i++) {
		const struct rp_event *ev = &t.ev[i];
		uint64_t n = ev->type == RP_REFILL                       ? ev->arg :
		             ev->type == RP_ALLOC || ev->type == RP_FREE ? 1ull << ev->order :
		                                                           0;
		for (uint64_t k = ev->pfn; k < ev->pfn + n && k < normal->end_pfn; k++)
			rp_set_bit(named, k);
		if (ev->type == RP_REFILL && refill == SIZE_MAX && ev->cpu == 0 && ev->order == 0 &&
		    ev->mt == PA_MT_MOVABLE && ev->pfn >= normal->start_pfn)
			refill = i;
	}
	REQUIRE(refill != SIZE_MAX);
	/* The drains: every other frame no event names, down from the middle of Normal. */
	struct rp_event *ev = calloc(t.nr + ON_1 + AFTER_REFILL, sizeof *ev);
	REQUIRE(ev);
	size_t n = 0;
	uint64_t k = (normal->start_pfn + normal->end_pfn) / 2 & ~1ull; /* no reservation there */
	for (unsigned i = 0; i < ON_1 + AFTER_REFILL; i++) {
		do
			REQUIRE((k -= 2) > normal->start_pfn);
		while (rp_bit(named, k));
		if (i == ON_1) { /* the trace up to and with CPU 0's first refill */
			memcpy(ev + n, t.ev, (refill + 1) * sizeof *ev);
			n += refill + 1;
		}
		ev[n++] = (struct rp_event){ .ts_ns = t.ev[i < ON_1 ? 0 : refill].ts_ns,
			                     .pfn = (uint32_t)k,
			                     .type = RP_STOCK,
			                     .cpu = i < ON_1 ? 1 : 0,
			                     .mt = PA_MT_MOVABLE };
	}
	memcpy(ev + n, t.ev + refill + 1, (t.nr - refill - 1) * sizeof *ev);
	struct rp_event *read = t.ev;
	t.ev = ev;
	t.nr += ON_1 + AFTER_REFILL;
	struct rp_pcp_stock *s = rp_pcp_stock(&t, &m->snap[0].kernel);
	REQUIRE(s);
	uint64_t drawn0 = rp_pcp_stock_drawn(s, z, 0), drawn1 = rp_pcp_stock_drawn(s, z, 1);
	free(s);
	REQUIRE(normal->pcp_cpu[0] >= drawn0 + AFTER_REFILL); /* room on CPU 0 but for the rule */
	normal->pcp += drawn1 + ON_1 - normal->pcp_cpu[1];
	normal->pcp_cpu[1] = drawn1 + ON_1;
	struct rp_result r = start_replay(&t, m, "7.2");
	CHECK_EQ_U64(r.start_listed, ON_1);
	struct rp_zone_state *model = snap_zone(&m->snap[0].model, "Normal");
	REQUIRE(model);
	CHECK_EQ_U64(model->pcp_cpu[0], normal->pcp_cpu[0]);
	CHECK_EQ_U64(model->pcp_cpu[1], normal->pcp_cpu[1]);
	for (unsigned o = 0; o < RP_MAX_ORDERS; o++)
		CHECK_EQ_U64(model->free[o], normal->free[o]);
	CHECK_EQ_U64(r.validate_failures, 0);
	CHECK_EQ_U64(r.bad_page, 0);
	t.ev = read;
	t.nr -= ON_1 + AFTER_REFILL;
	free(ev);
	free(named);
	rp_trace_free(&t);
	free(m);
}
