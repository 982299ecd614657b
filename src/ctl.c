/* SPDX-License-Identifier: MIT */
/*
 * The runtime control tree: sysfs-like paths read and written as text.
 *
 * Policy as data: one table of paths, each with a reader, a writer (none:
 * read-only) and a line of help. Number knobs share one reader and one
 * writer and differ only in their get/set hooks and bounds. A path may hold
 * "<N>" where a decimal number goes ("pcp/orders/<N>/enabled"); the number
 * reaches the hooks in ctl_call.index, after the entry's index_max hook has
 * bounded it.
 *
 * Reading "help" lists the tree. Errors: an unknown path -ENOENT; a value
 * that is not a number in range, or an <N> that is not a number in range,
 * -EINVAL; a write to a read-only path, or a read of a write-only one
 * ("pcp/drain"), -EPERM; "compaction/kcompactd_run/<N>" in a pool whose
 * compactors are threads (not kcompactd=manual), -EOPNOTSUPP. Nothing
 * changes when a write fails: every check comes before the first change.
 */
#include "platform/platform.h"
#include "hotplug.h"
#include "linux.h"
#include "max_order.h"
#include "pcp.h"
#include "zone.h"

struct ctl_entry;

/* One request: the pool, the entry that matched, and the number in place of <N>. */
struct ctl_call {
	struct pa_pool *pool;
	const struct ctl_entry *entry;
	uint64_t index;
};

struct ctl_entry {
	const char *path;
	const char *help;
	/* The full length of the text, written into buf like snprintf; or -errno. */
	int (*read)(const struct ctl_call *c, char *buf, size_t len);
	/* 0 or -errno; NULL: read-only. */
	int (*write)(const struct ctl_call *c, const char *value);
	/* Paths with <N>: the largest index they take; a larger one is -EINVAL. */
	uint64_t (*index_max)(const struct ctl_call *c);
	/* Number knobs. */
	uint64_t (*get)(const struct ctl_call *c);
	int (*set)(const struct ctl_call *c, uint64_t value);
	uint64_t min, max; /* what a write accepts, inclusive */
	/* Report paths. */
	enum pa_report_kind report;
};

/* ---------------------------------------------------------------------- */
/* Number knobs                                                            */
/* ---------------------------------------------------------------------- */

/*
 * A decimal number, as a sysctl takes it: spaces around it (the newline of
 * `echo 10 >`) are fine; a sign, a suffix or any other junk is not.
 */
static int ctl_parse_u64(const char *s, uint64_t *out)
{
	while (pa_isspace((unsigned char)*s))
		s++;
	if (!pa_isdigit((unsigned char)*s))
		return -EINVAL;
	const char *end;
	bool overflow;
	uint64_t v = pa_parse_u64(s, &end, &overflow);
	if (overflow)
		return -EINVAL;
	while (pa_isspace((unsigned char)*end))
		end++;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

static int read_number(const struct ctl_call *c, char *buf, size_t len)
{
	return pa_snprintf(buf, len, "%" PRIu64 "\n", c->entry->get(c));
}

static int write_number(const struct ctl_call *c, const char *value)
{
	uint64_t v;
	if (ctl_parse_u64(value, &v) || v < c->entry->min || v > c->entry->max)
		return -EINVAL;
	return c->entry->set(c, v);
}

static uint64_t get_max_order(const struct ctl_call *c)
{
	return pool_max_order(c->pool);
}

/* Free blocks above a lowered order are split, those of the old order merge when raised. */
static int set_max_order(const struct ctl_call *c, uint64_t v)
{
	return max_order_set(c->pool, (unsigned)v);
}

static uint64_t get_pageblock_order(const struct ctl_call *c)
{
	return c->pool->cfg.pageblock_order;
}

static uint64_t get_superblock_order(const struct ctl_call *c)
{
	return c->pool->cfg.superblock_order;
}

static uint64_t get_fallback_order(const struct ctl_call *c)
{
	return c->pool->cfg.fallback_order;
}

static uint64_t get_defrag_mode(const struct ctl_call *c)
{
	return atomic_load(&c->pool->defrag_mode);
}

/* As Linux's vm.defrag_mode: read by the next allocation that would pollute a clean region. */
static int set_defrag_mode(const struct ctl_call *c, uint64_t v)
{
	atomic_store(&c->pool->defrag_mode, v != 0);
	return 0;
}

static uint64_t get_page_size(const struct ctl_call *c)
{
	return (uint64_t)1 << c->pool->cfg.page_shift;
}

static uint64_t get_wsf(const struct ctl_call *c)
{
	return atomic_load(&c->pool->watermark_scale_factor);
}

/* As Linux's sysctl handler: store the factor, then recompute every zone's watermarks. */
static int set_wsf(const struct ctl_call *c, uint64_t v)
{
	atomic_store(&c->pool->watermark_scale_factor, (unsigned)v);
	zone_setup_watermarks(c->pool);
	return 0;
}

static uint64_t get_wbf(const struct ctl_call *c)
{
	return atomic_load(&c->pool->watermark_boost_factor);
}

static int set_wbf(const struct ctl_call *c, uint64_t v)
{
	atomic_store(&c->pool->watermark_boost_factor, (unsigned)v);
	return 0;
}

static uint64_t get_huge_direct(const struct ctl_call *c)
{
	return atomic_load(&c->pool->pcp_huge_direct);
}

static int set_huge_direct(const struct ctl_call *c, uint64_t v)
{
	atomic_store(&c->pool->pcp_huge_direct, v != 0);
	return 0;
}

static uint64_t get_stream_refill(const struct ctl_call *c)
{
	return atomic_load(&c->pool->pcp_stream_refill);
}

static int set_stream_refill(const struct ctl_call *c, uint64_t v)
{
	atomic_store(&c->pool->pcp_stream_refill, v != 0);
	return 0;
}

static uint64_t get_decay_external(const struct ctl_call *c)
{
	return atomic_load(&c->pool->pcp_decay_external);
}

static int set_decay_external(const struct ctl_call *c, uint64_t v)
{
	atomic_store(&c->pool->pcp_decay_external, v != 0);
	return 0;
}

static uint64_t get_kswapd_external(const struct ctl_call *c)
{
	return atomic_load(&c->pool->kswapd_external);
}

static int set_kswapd_external(const struct ctl_call *c, uint64_t v)
{
	atomic_store(&c->pool->kswapd_external, v != 0);
	return 0;
}

static uint64_t get_on_demand(const struct ctl_call *c)
{
	return atomic_load(&c->pool->deferred_on_demand);
}

static int set_on_demand(const struct ctl_call *c, uint64_t v)
{
	atomic_store(&c->pool->deferred_on_demand, v != 0);
	return 0;
}

static uint64_t get_min_free_kbytes(const struct ctl_call *c)
{
	return (uint64_t)atomic_load(&c->pool->min_free_kbytes);
}

/* A written value is kept as the user's, as Linux's user_min_free_kbytes; watermarks follow. */
static int set_min_free_kbytes(const struct ctl_call *c, uint64_t v)
{
	atomic_store(&c->pool->min_free_kbytes, (int64_t)v);
	atomic_store(&c->pool->min_free_kbytes_user, true);
	zone_setup_watermarks(c->pool);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Per-CPU lists                                                           */
/* ---------------------------------------------------------------------- */

/* "pcp/orders/<N>/enabled": any order the buddy has may go on the lists. */
/* Orders up to the booted max_order have a path; one above the current max_order stays off. */
static uint64_t pcp_order_max(const struct ctl_call *c)
{
	return c->pool->max_order_boot;
}

static uint64_t get_pcp_order(const struct ctl_call *c)
{
	return pcp_order_enabled(c->pool, (unsigned)c->index);
}

/* Switching off drains the order from every CPU (pcp_set_order), so nothing stays behind. */
static int set_pcp_order(const struct ctl_call *c, uint64_t v)
{
	if (v && c->index > pool_max_order(c->pool))
		return -EINVAL;
	pcp_set_order(c->pool, (unsigned)c->index, v != 0);
	return 0;
}

static uint64_t get_high_fraction(const struct ctl_call *c)
{
	return atomic_load(&c->pool->pcp_high_fraction);
}

/* 0 (auto-tuned) or at least 8; pcp_set_high_fraction refuses 1..7 before changing anything. */
static int set_high_fraction(const struct ctl_call *c, uint64_t v)
{
	return pcp_set_high_fraction(c->pool, (unsigned)v);
}

static int read_pcp_rules(const struct ctl_call *c, char *buf, size_t len)
{
	return pa_snprintf(buf, len, "%s\n", pcp_rules_name(atomic_load(&c->pool->pcp_rules)));
}

/* "6.7" or "6.1", with the newline of `echo 6.1 >` allowed. */
static int write_pcp_rules(const struct ctl_call *c, const char *value)
{
	char v[8];
	size_t n = pa_strcspn(value, " \n");
	if (n >= sizeof v || value[n + pa_strspn(value + n, " \n")])
		return -EINVAL;
	pa_snprintf(v, sizeof v, "%.*s", (int)n, value);
	int r = pcp_rules_parse(v);
	if (r < 0)
		return -EINVAL;
	pcp_set_rules(c->pool, (enum pcp_rules)r);
	return 0;
}

/* "pcp/drain": writing 1 gives every CPU's lists back to the buddy. */
static int set_drain(const struct ctl_call *c, uint64_t v)
{
	(void)v;
	pa_drain_all(c->pool);
	return 0;
}

/* A write-only path has nothing to show, as a sysfs trigger file. */
static int read_write_only(const struct ctl_call *c, char *buf, size_t len)
{
	(void)c;
	(void)buf;
	(void)len;
	return -EPERM;
}

/* ---------------------------------------------------------------------- */
/* Compaction                                                              */
/* ---------------------------------------------------------------------- */

/* "compact_memory": writing 1 compacts every node, as /proc/sys/vm/compact_memory. */
static int set_compact_memory(const struct ctl_call *c, uint64_t v)
{
	(void)v;
	long moved = pa_compact(c->pool, -1);
	return moved < 0 ? (int)moved : 0;
}

static uint64_t get_proactiveness(const struct ctl_call *c)
{
	return atomic_load(&c->pool->compaction_proactiveness);
}

/* Read by the background compactor at each proactive check: the next one follows it. */
static int set_proactiveness(const struct ctl_call *c, uint64_t v)
{
	atomic_store(&c->pool->compaction_proactiveness, (unsigned)v);
	return 0;
}

static uint64_t get_fail_pct(const struct ctl_call *c)
{
	return atomic_load(&c->pool->compact_fail_pct);
}

/* Fault injection (migrate.c): that share of migrations fails as an owner's AGAIN or BUSY. */
static int set_fail_pct(const struct ctl_call *c, uint64_t v)
{
	atomic_store(&c->pool->compact_fail_pct, (unsigned)v);
	return 0;
}

/* "compaction/kcompactd_run/<N>": a node number. */
static uint64_t zone_max(const struct ctl_call *c)
{
	return c->pool->nr_zones - 1;
}

static uint64_t get_reclaim_active(const struct ctl_call *c)
{
	return atomic_load(&c->pool->zones[c->index].reclaim_active);
}

/* As Linux's ZONE_RECLAIM_ACTIVE, which kswapd sets while it balances the node. */
static int set_reclaim_active(const struct ctl_call *c, uint64_t v)
{
	struct pa_zone *z = &c->pool->zones[c->index];
	if (atomic_load(&z->reclaim_active) != (v != 0))
		zone_reclaim_pass(z, v != 0);
	pcp_set_reclaim_active(z, v != 0);
	return 0;
}

static uint64_t get_below_high(const struct ctl_call *c)
{
	return atomic_load(&c->pool->zones[c->index].below_high);
}

static int set_below_high(const struct ctl_call *c, uint64_t v)
{
	if (pcp_rules_61(c->pool))
		return -EOPNOTSUPP; /* 6.1 has no such bit */
	zone_set_below_high(&c->pool->zones[c->index], v != 0);
	return 0;
}

static int set_watermark_boost(const struct ctl_call *c, uint64_t v)
{
	(void)v; /* 0: the only value taken */
	zone_end_boost(&c->pool->zones[c->index]);
	return 0;
}

static uint64_t get_watermark_boost(const struct ctl_call *c)
{
	struct pa_zone *z = &c->pool->zones[c->index];
	pa_lock(&z->lock, SITE_ADMIN);
	uint64_t v = z->watermark_boost;
	pa_unlock(&z->lock);
	return v;
}

static int read_linux(const struct ctl_call *c, char *buf, size_t len)
{
	char v[16];
	return pa_snprintf(buf, len, "%s\n",
	                   linux_version_name(c->pool->cfg.linux_version, v, sizeof v));
}

static uint64_t get_direct_compaction(const struct ctl_call *c)
{
	return atomic_load(&c->pool->direct_compaction);
}

static int set_direct_compaction(const struct ctl_call *c, uint64_t v)
{
	atomic_store(&c->pool->direct_compaction, v != 0);
	return 0;
}

static uint64_t get_direct_drain(const struct ctl_call *c)
{
	return atomic_load(&c->pool->direct_drain);
}

static int set_direct_drain(const struct ctl_call *c, uint64_t v)
{
	atomic_store(&c->pool->direct_drain, v != 0);
	return 0;
}

static uint64_t get_direct_priority(const struct ctl_call *c)
{
	return atomic_load(&c->pool->direct_priority);
}

static int set_direct_priority(const struct ctl_call *c, uint64_t v)
{
	atomic_store(&c->pool->direct_priority, (unsigned)v);
	return 0;
}

static uint64_t get_direct_costly_sync(const struct ctl_call *c)
{
	return atomic_load(&c->pool->direct_costly_sync);
}

static int set_direct_costly_sync(const struct ctl_call *c, uint64_t v)
{
	atomic_store(&c->pool->direct_costly_sync, v != 0);
	return 0;
}

static uint64_t node_max(const struct ctl_call *c)
{
	return c->pool->nr_nodes - 1;
}

/*
 * One pass of node N's background compactor. Only with kcompactd=manual:
 * where threads run, a pass is theirs to schedule, and a second driver
 * would make the figures of a manual run mean nothing.
 */
static int set_kcompactd_run(const struct ctl_call *c, uint64_t v)
{
	(void)v;
	if (!c->pool->cfg.kcompactd_manual)
		return -EOPNOTSUPP;
	long moved = pa_kcompactd_run(c->pool, (int)c->index);
	return moved < 0 ? (int)moved : 0;
}

/* "memory/<N>/online": a memory block's state, as /sys/devices/system/memory/memoryN. */
static uint64_t block_max(const struct ctl_call *c)
{
	return c->pool->nr_blocks - 1;
}

static uint64_t get_block_online(const struct ctl_call *c)
{
	return !__atomic_load_n(&c->pool->block_offline[c->index], __ATOMIC_RELAXED);
}

/* The words of sysfs's state file; "1" and "0" stand for "online" and "offline". */
static const char *const block_states[] = { "offline", "online", "online_kernel",
	                                    "online_movable" };

static int read_block_state(const struct ctl_call *c, char *buf, size_t len)
{
	return pa_snprintf(buf, len, "%s\n", block_states[get_block_online(c)]);
}

/* A word of block_states, or 0 or 1, with the newline of `echo online >` allowed. */
static int write_block_online(const struct ctl_call *c, const char *value)
{
	struct pa_pool *pool = c->pool;
	size_t w = pa_strcspn(value, " \n");
	int state = -1;
	if (value[w + pa_strspn(value + w, " \n")])
		return -EINVAL;
	for (int i = 0; i < 4; i++)
		if (pa_strlen(block_states[i]) == w && !pa_strncmp(value, block_states[i], w))
			state = i;
	if (w == 1 && (value[0] == '0' || value[0] == '1'))
		state = value[0] - '0';
	if (state < 0)
		return -EINVAL;
	pa_pfn_t start = c->index << pool->cfg.block_shift;
	uint64_t n = 1ull << pool->cfg.block_shift;
	if (start + n > pool->nr_frames)
		n = pool->nr_frames - start;
	if ((state != 0) == get_block_online(c))
		return 0; /* as sysfs: already in that state (whatever its zone) */
	if (!state)
		return pa_memory_offline(pool, start, n);
	static const enum pa_online_type type[] = { 0, PA_ONLINE_DEFAULT, PA_ONLINE_KERNEL,
		                                    PA_ONLINE_MOVABLE };
	return pa_memory_online_type(pool, start, n, type[state]);
}

static int read_valid_zones(const struct ctl_call *c, char *buf, size_t len)
{
	return hotplug_valid_zones(c->pool, c->index, buf, len);
}

static uint64_t get_block_size(const struct ctl_call *c)
{
	return c->pool->cfg.memory_block_size;
}

/* ---------------------------------------------------------------------- */
/* Reports                                                                 */
/* ---------------------------------------------------------------------- */

static int read_report(const struct ctl_call *c, char *buf, size_t len)
{
	return pa_report(c->pool, c->entry->report, 0, buf, len);
}

/* ---------------------------------------------------------------------- */
/* The tree                                                                */
/* ---------------------------------------------------------------------- */

#define CTL_NUM_RO(p, g, h)                                                                        \
	{                                                                                          \
		.path = p, .help = h, .read = read_number, .get = g                                \
	}
#define CTL_NUM_RW(p, g, s, lo, hi, h)                                                             \
	{                                                                                          \
		.path = p, .help = h, .read = read_number, .write = write_number, .get = g,        \
		.set = s, .min = lo, .max = hi                                                     \
	}
#define CTL_NUM_WO(p, s, lo, hi, h)                                                                \
	{                                                                                          \
		.path = p, .help = h, .read = read_write_only, .write = write_number, .set = s,    \
		.min = lo, .max = hi                                                               \
	}
/* A zone's 0/1 state, "zone/<N>/...": N as pa_pageblock_info numbers the zones. */
#define CTL_ZONE_FLAG(p, g, s, h)                                                                  \
	{                                                                                          \
		.path = p, .help = h, .read = read_number, .write = write_number,                  \
		.index_max = zone_max, .get = g, .set = s, .min = 0, .max = 1                      \
	}
#define CTL_REPORT(p, k, h)                                                                        \
	{                                                                                          \
		.path = p, .help = h, .read = read_report, .report = k                             \
	}

static const struct ctl_entry ctl_table[] = {
	CTL_NUM_RW("watermark_scale_factor", get_wsf, set_wsf, 0, 3000,
	           "watermark gap in 1/10000 of a zone's pages (0..3000; 0: only min/4)"),
	CTL_NUM_RW("watermark_boost_factor", get_wbf, set_wbf, 0, 1000000,
	           "a fallback that mixes pageblocks raises a zone's watermarks by a pageblock, "
	           "up to this share of the high mark in 1/10000 (0: no boosting)"),
	CTL_NUM_RW(
	        "kswapd_external", get_kswapd_external, set_kswapd_external, 0, 1,
	        "1: reclaim runs outside the pool, and a watermark boost lasts until "
	        "zone/<N>/reclaim_active ends its pass; 0: no boost is kept (nothing to reclaim)"),
	CTL_NUM_RW("deferred_on_demand", get_on_demand, set_on_demand, 0, 1,
	           "1: an allocation that runs short sets deferred frames up (Linux's "
	           "deferred_grow_zone()); 0: only the init threads and pa_deferred_grow() do"),
	CTL_NUM_RW("min_free_kbytes", get_min_free_kbytes, set_min_free_kbytes, 0, 1ull << 40,
	           "KiB kept free below the min watermarks, shared by zone size"),
	{ .path = "pcp/orders/<N>/enabled",
	  .help = "1: order N (0..max_order) goes through the per-CPU lists; 0: drained, off",
	  .read = read_number,
	  .write = write_number,
	  .index_max = pcp_order_max,
	  .get = get_pcp_order,
	  .set = set_pcp_order,
	  .min = 0,
	  .max = 1 },
	CTL_NUM_RW("pcp/high_fraction", get_high_fraction, set_high_fraction, 0, UINT32_MAX,
	           "per-CPU high = managed / N / CPUs (0: auto-tuned; else at least 8)"),
	CTL_NUM_RW("pcp/huge_direct", get_huge_direct, set_huge_direct, 0, 1,
	           "1: a free of a pageblock or more goes to the buddy unless its list is empty "
	           "and high has room (bulk frees skip the lists); 0: on the lists, as Linux"),
	CTL_NUM_RW("pcp/stream_refill", get_stream_refill, set_stream_refill, 0, 1,
	           "1: once refills in a row reach Linux's batch << 5, a CPU's unmovable and "
	           "reclaimable refills take whole blocks on to batch << 8; 0: Linux's cap"),
	CTL_NUM_RW("pcp/decay_external", get_decay_external, set_decay_external, 0, 1,
	           "1: the embedder decays each CPU's high once a second (pa_pcp_decay(), "
	           "Linux's vmstat worker); 0: a CPU's refills and spills do, a second apart"),
	{ .path = "pcp/rules",
	  .help = "6.7: high auto-tuned and decayed (default); 6.1: Linux 6.1's fixed high, "
	          "refills of a batch, a run of frees reaching order 1..3 empties the lists",
	  .read = read_pcp_rules,
	  .write = write_pcp_rules },
	CTL_ZONE_FLAG("zone/<N>/reclaim_active", get_reclaim_active, set_reclaim_active,
	              "zone N (as pa_pageblock_info numbers them): 1 while reclaim runs (Linux's "
	              "ZONE_RECLAIM_ACTIVE): per-CPU lists capped at 4 batches"),
	CTL_ZONE_FLAG("zone/<N>/below_high", get_below_high, set_below_high,
	              "zone N: 1 once an allocation found it under its high watermark, until a "
	              "spill finds it above (Linux 6.7's ZONE_BELOW_HIGH): no refill raises a "
	              "CPU's high, each free lowers it toward high_min; 0 clears it, as such a "
	              "spill does"),
	{ .path = "zone/<N>/watermark_boost",
	  .help = "zone N's watermark boost in frames (Linux's zoneinfo \"boost\"); write 0 "
	          "to end it, as a kswapd pass that finds nothing to reclaim does",
	  .read = read_number,
	  .write = write_number,
	  .index_max = zone_max,
	  .get = get_watermark_boost,
	  .set = set_watermark_boost,
	  .min = 0,
	  .max = 0 },
	{ .path = "linux",
	  .help = "the Linux version whose allocator rules apply (boot key linux=)",
	  .read = read_linux },
	CTL_NUM_WO("pcp/drain", set_drain, 1, 1,
	           "write 1: give every CPU's lists back to the buddy"),
	CTL_NUM_WO("compact_memory", set_compact_memory, 1, 1,
	           "write 1: compact every node (pa_compact), as /proc/sys/vm/compact_memory"),
	CTL_NUM_RW("compaction_proactiveness", get_proactiveness, set_proactiveness, 0, 100,
	           "proactive compaction: 0 off; higher keeps the fragmentation score lower"),
	CTL_NUM_RW(
	        "compaction/direct", get_direct_compaction, set_direct_compaction, 0, 1,
	        "1: the allocation slow path compacts and drains every CPU's lists; 0: "
	        "neither (the caller runs them where it wants, as a replay where the kernel did)"),
	CTL_NUM_RW("compaction/direct_drain", get_direct_drain, set_direct_drain, 0, 1,
	           "1: the slow path drains every CPU's lists as Linux's reclaim round"),
	CTL_NUM_RW("compaction/direct_priority", get_direct_priority, set_direct_priority, 0, 2,
	           "direct compaction's most effort: 0 sync, 1 sync-light, 2 async"),
	CTL_NUM_RW("compaction/direct_costly_sync", get_direct_costly_sync, set_direct_costly_sync,
	           0, 1,
	           "1: an order above 3 up to the pageblock's goes on to sync too (Linux: "
	           "sync-light)"),
	CTL_NUM_RW("compaction/fail_pct", get_fail_pct, set_fail_pct, 0, 100,
	           "fault injection: percent of migrations that fail as AGAIN or BUSY"),
	{ .path = "compaction/kcompactd_run/<N>",
	  .help = "write 1: one pass of node N's compactor (boot with kcompactd=manual)",
	  .read = read_write_only,
	  .write = write_number,
	  .index_max = node_max,
	  .set = set_kcompactd_run,
	  .min = 1,
	  .max = 1 },
	{ .path = "memory/<N>/online",
	  .help = "memory block N: 1 online, 0 offline; write 1, 0 or a word of state",
	  .read = read_number,
	  .write = write_block_online,
	  .index_max = block_max,
	  .get = get_block_online },
	{ .path = "memory/<N>/state",
	  .help = "memory block N: online or offline; write online, offline, online_kernel "
	          "or online_movable (the zone it goes to)",
	  .read = read_block_state,
	  .write = write_block_online,
	  .index_max = block_max,
	  .get = get_block_online },
	{ .path = "memory/<N>/valid_zones",
	  .help = "memory block N: its zone when online; when offline, the zones it may go to, "
	          "the default first",
	  .read = read_valid_zones,
	  .index_max = block_max },
	CTL_NUM_RO("memory/block_size_bytes", get_block_size, "bytes per memory block"),
	CTL_NUM_RW("max_order", get_max_order, set_max_order, 0, PA_MAX_ORDER_LIMIT,
	           "largest buddy order, inclusive; writable from the pageblock order up to the "
	           "booted max_order"),
	CTL_NUM_RO("pageblock_order", get_pageblock_order, "order of a pageblock"),
	CTL_NUM_RO("page_size", get_page_size, "bytes per frame"),
	CTL_NUM_RO("superblock_order", get_superblock_order,
	           "order of the regions whose pollution is tracked and steered (0: off)"),
	CTL_NUM_RO("fallback_order", get_fallback_order,
	           "largest free block a fallback claims whole under Linux's policy"),
	CTL_NUM_RW("defrag_mode", get_defrag_mode, set_defrag_mode, 0, 1,
	           "1: compact within polluted regions before a fallback pollutes a clean one"),
	CTL_REPORT("info", PA_REPORT_INFO, "the derived configuration"),
	CTL_REPORT("vmstat", PA_REPORT_VMSTAT, "counters, as /proc/vmstat"),
	CTL_REPORT("buddyinfo", PA_REPORT_BUDDYINFO, "free blocks per order, as /proc/buddyinfo"),
	CTL_REPORT("pagetypeinfo", PA_REPORT_PAGETYPEINFO,
	           "free blocks per type and pageblocks per type, as /proc/pagetypeinfo"),
	CTL_REPORT("zoneinfo", PA_REPORT_ZONEINFO,
	           "zones and per-CPU lists with per-order counts, as /proc/zoneinfo"),
	CTL_REPORT("superblockinfo", PA_REPORT_SUPERBLOCKINFO,
	           "per superblock: pageblocks per type, free frames, tainted"),
	CTL_REPORT("lockstat", PA_REPORT_LOCKSTAT,
	           "lock contention per lock and call site, as perf lock contention"),
	CTL_REPORT("extfrag/unusable_index", PA_REPORT_UNUSABLE_INDEX,
	           "unusable free space index per order, as debugfs"),
	CTL_REPORT("extfrag/extfrag_index", PA_REPORT_EXTFRAG_INDEX,
	           "external fragmentation index per order, as debugfs"),
};

#define CTL_NR_ENTRIES (sizeof ctl_table / sizeof ctl_table[0])

enum ctl_match { CTL_NO_MATCH, CTL_MATCH, CTL_BAD_INDEX };

/*
 * The path component in place of "<N>": a decimal number into *index, or
 * false when it is anything else (empty, a sign, letters, too large).
 */
static bool ctl_index(const char *s, size_t n, uint64_t *index)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(s[i] - '0');
		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*index = v;
	return n > 0;
}

/*
 * Does path match pattern, where "<N>" stands for one path component? A
 * path that matches but for a component there that is not a number is
 * CTL_BAD_INDEX (-EINVAL, as an order out of range), not an unknown path.
 */
static enum ctl_match ctl_match(const char *pattern, const char *path, uint64_t *index)
{
	bool bad = false;
	while (*pattern) {
		if (pa_strncmp(pattern, "<N>", 3) == 0) {
			size_t n = pa_strcspn(path, "/");
			bad |= !ctl_index(path, n, index);
			path += n;
			pattern += 3;
			continue;
		}
		if (*pattern++ != *path++)
			return CTL_NO_MATCH;
	}
	if (*path)
		return CTL_NO_MATCH;
	return bad ? CTL_BAD_INDEX : CTL_MATCH;
}

/* The entry of path: -ENOENT when none matches, -EINVAL when its <N> is not a number in range. */
static int ctl_lookup(struct pa_pool *pool, const char *path, struct ctl_call *c)
{
	for (size_t i = 0; i < CTL_NR_ENTRIES; i++) {
		*c = (struct ctl_call){ .pool = pool, .entry = &ctl_table[i] };
		enum ctl_match m = ctl_match(ctl_table[i].path, path, &c->index);
		if (m == CTL_NO_MATCH)
			continue;
		if (m == CTL_BAD_INDEX ||
		    (c->entry->index_max && c->index > c->entry->index_max(c)))
			return -EINVAL;
		return 0;
	}
	return -ENOENT;
}

static const char *ctl_mode(const struct ctl_entry *e)
{
	if (!e->write)
		return "ro";
	return e->read == read_write_only ? "wo" : "rw";
}

/* The path "help": one line per entry, "PATH rw|ro|wo HELP". */
#define CTL_HELP_PATH "help"

static int ctl_list(char *buf, size_t len)
{
	size_t pos = 0;
	for (size_t i = 0; i < CTL_NR_ENTRIES; i++) {
		const struct ctl_entry *e = &ctl_table[i];
		size_t room = pos < len ? len - pos : 0;
		int n = pa_snprintf(room ? buf + pos : NULL, room, "%-28s %s  %s\n", e->path,
		                    ctl_mode(e), e->help);
		if (n > 0)
			pos += (size_t)n;
	}
	if (len)
		buf[pos < len ? pos : len - 1] = '\0';
	return (int)pos;
}

int pa_ctl_read(struct pa_pool *pool, const char *path, char *buf, size_t len)
{
	if (!pool || !path || (!buf && len))
		return -EINVAL;
	if (len)
		buf[0] = '\0';
	if (pa_strcmp(path, CTL_HELP_PATH) == 0)
		return ctl_list(buf, len);
	struct ctl_call c;
	int ret = ctl_lookup(pool, path, &c);
	return ret ? ret : c.entry->read(&c, buf, len);
}

int pa_ctl_read_u64(struct pa_pool *pool, const char *path, uint64_t *value)
{
	if (!pool || !path || !value)
		return -EINVAL;
	struct ctl_call c;
	int ret = ctl_lookup(pool, path, &c);
	if (ret)
		return ret;
	if (c.entry->read != read_number)
		return -EINVAL; /* a report, a word of state or a write-only knob */
	*value = c.entry->get(&c);
	return 0;
}

int pa_ctl_entry(unsigned index, struct pa_ctl_entry *out)
{
	if (!out)
		return -EINVAL;
	if (index >= CTL_NR_ENTRIES)
		return -ENOENT;
	const struct ctl_entry *e = &ctl_table[index];
	*out = (struct pa_ctl_entry){ .path = e->path, .mode = ctl_mode(e), .help = e->help };
	return 0;
}

int pa_ctl_write(struct pa_pool *pool, const char *path, const char *value)
{
	if (!pool || !path || !value)
		return -EINVAL;
	struct ctl_call c;
	int ret = ctl_lookup(pool, path, &c);
	if (ret)
		return pa_strcmp(path, CTL_HELP_PATH) ? ret : -EPERM;
	if (!c.entry->write)
		return -EPERM;
	pa_mutex_lock(&pool->ctl_lock);
	ret = c.entry->write(&c, value);
	pa_mutex_unlock(&pool->ctl_lock);
	return ret;
}
