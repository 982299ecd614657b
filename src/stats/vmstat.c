/* SPDX-License-Identifier: MIT */
/*
 * /proc/vmstat, pa_vmstat_read() and pa_vmstat_foreach(): one walk over every counter (the Linux
 * part, then the counters of the lists, then the per-order ones) either
 * prints each line or looks one up by name.
 */
#include "stats.h"

#include "../platform/platform.h"
#include "../pcp.h"
#include "../zone.h"

/* Counters folded over the zones, each zone's read under its lock. */
struct vm_snap {
	uint64_t free_pages, free_cma, isolated, numa_foreign;
	uint64_t free_untouched;         /* of free_pages, in chunks never handed out since boot */
	uint64_t free_cleared;           /* of free_pages, known zero (device.c's cleared memory) */
	uint64_t pgalloc[PA_ZONE_COUNT]; /* PA_ZS_PGALLOC by zone type */
	uint64_t zstat[PA_NR_ZONE_STATS];
	uint64_t *alloc_order;     /* [order] */
	uint64_t *folios_migrated; /* [order]: folios compaction moved whole */
};

static void vm_snap_free(const struct pa_pool *pool, struct vm_snap *s)
{
	pa_free(&pool->plat, s->alloc_order);
	pa_free(&pool->plat, s->folios_migrated);
}

/* The zone's free frames and folios moved per order, which change under its lock. */
static void vm_snap_zone_locked(struct pa_zone *zone, struct vm_snap *s)
{
	pa_lock(&zone->lock, SITE_ADMIN);
	s->free_pages += zone_nr_free(zone);
	s->free_cma += zone_free_cma(zone);
	s->free_untouched += zone->nr_untouched << zone->pool->cfg.chunk_order;
	s->free_cleared += zone->clean_pages;
	s->numa_foreign += atomic_load_explicit(&zone->numa_foreign, memory_order_relaxed);
	for (unsigned o = 0; o < stats_nr_orders(zone->pool); o++)
		s->folios_migrated[o] += zone->folios_migrated[o];
	pa_unlock(&zone->lock);
}

static int vm_snapshot(struct pa_pool *pool, struct vm_snap *s)
{
	unsigned orders = pool->max_order_boot + 1; /* max_order may rise meanwhile */
	memset(s, 0, sizeof *s);
	s->alloc_order = pa_calloc(&pool->plat, orders, sizeof *s->alloc_order);
	s->folios_migrated = pa_calloc(&pool->plat, orders, sizeof *s->folios_migrated);
	uint64_t *order = pa_calloc(&pool->plat, orders, sizeof *order);
	if (!s->alloc_order || !s->folios_migrated || !order) {
		vm_snap_free(pool, s);
		pa_free(&pool->plat, order);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < pool->nr_zones; i++) {
		struct pa_zone *zone = &pool->zones[i];
		uint64_t zstat[PA_NR_ZONE_STATS];
		zone_fold_stats(zone, zstat, order); /* the zone's and every CPU's lists' */
		vm_snap_zone_locked(zone, s);
		s->pgalloc[zone->type] += zstat[PA_ZS_PGALLOC];
		for (unsigned k = 0; k < PA_NR_ZONE_STATS; k++)
			s->zstat[k] += zstat[k];
		for (unsigned o = 0; o < orders; o++)
			s->alloc_order[o] += order[o];
	}
	for (unsigned nid = 0; nid < pool->nr_nodes; nid++)
		s->isolated += stats_node_isolated(pool, nid);
	pa_free(&pool->plat, order);
	return 0;
}

typedef pa_vmstat_fn vm_visit_fn; /* one counter of the walk */

/* Where a vmstat line's value comes from. */
enum vm_src {
	VM_FREE,     /* frames on the free lists */
	VM_FREE_CMA, /* of them, on the CMA lists */
	VM_ISOLATED, /* frames compaction holds isolated */
	VM_NUMA_HIT, /* allocations on the preferred node: all but numa_miss */
	VM_NUMA_FOREIGN,
	VM_PGALLOC, /* pgalloc_<zone type>, one line per type of the layout */
	VM_ZONE,    /* a zone counter (PA_ZONE_STATS), folded */
	VM_POOL,    /* a pool counter (PA_POOL_STATS) */
};

struct vm_item {
	const char *name;
	enum vm_src src;
	unsigned id; /* VM_ZONE, VM_POOL: the counter */
};

/*
 * The Linux part of /proc/vmstat: the 6.1 lines that mean something here, in
 * 6.1's order. Every other counter of the lists follows it (ours), then the
 * per-order counters.
 */
static const struct vm_item vm_linux[] = {
	{ "nr_free_pages", VM_FREE, 0 },
	{ "nr_free_cma", VM_FREE_CMA, 0 },
	{ "numa_hit", VM_NUMA_HIT, 0 },
	{ "numa_miss", VM_ZONE, PA_ZS_NUMA_MISS },
	{ "numa_foreign", VM_NUMA_FOREIGN, 0 },
	{ "numa_local", VM_NUMA_HIT, 0 },           /* the preferred node is the CPU's own */
	{ "numa_other", VM_ZONE, PA_ZS_NUMA_MISS }, /* likewise */
	{ "nr_isolated_anon", VM_ISOLATED, 0 },
	{ "pgalloc_", VM_PGALLOC, 0 },
	{ "pgfree", VM_ZONE, PA_ZS_PGFREE },
	{ "pgmigrate_success", VM_ZONE, PA_ZS_PGMIGRATE_SUCCESS },
	{ "pgmigrate_fail", VM_ZONE, PA_ZS_PGMIGRATE_FAIL },
	{ "compact_migrate_scanned", VM_ZONE, PA_ZS_COMPACT_MIGRATE_SCANNED },
	{ "compact_free_scanned", VM_ZONE, PA_ZS_COMPACT_FREE_SCANNED },
	{ "compact_isolated", VM_ZONE, PA_ZS_COMPACT_ISOLATED },
	{ "compact_stall", VM_POOL, PA_PS_COMPACT_STALL },
	{ "compact_fail", VM_POOL, PA_PS_COMPACT_FAIL },
	{ "compact_success", VM_POOL, PA_PS_COMPACT_SUCCESS },
	{ "compact_daemon_wake", VM_POOL, PA_PS_COMPACT_DAEMON_WAKE },
	{ "compact_daemon_migrate_scanned", VM_ZONE, PA_ZS_COMPACT_DAEMON_MIGRATE_SCANNED },
	{ "compact_daemon_free_scanned", VM_ZONE, PA_ZS_COMPACT_DAEMON_FREE_SCANNED },
};
#define NR_VM_LINUX (sizeof vm_linux / sizeof vm_linux[0])

static bool vm_in_linux_part(enum vm_src src, unsigned id)
{
	for (size_t i = 0; i < NR_VM_LINUX; i++)
		if (vm_linux[i].src == src && vm_linux[i].id == id)
			return true;
	return src == VM_ZONE && id == PA_ZS_PGALLOC; /* printed per zone type */
}

static void vm_visit_zone_types(struct pa_pool *pool, const struct vm_snap *s, vm_visit_fn fn,
                                void *ctx)
{
	for (unsigned t = 0; t < PA_ZONE_COUNT; t++) {
		if (!zone_type_in_layout(pool, t))
			continue;
		char name[32];
		int n = pa_snprintf(name, sizeof name, "%s_", pa_zone_stat_names[PA_ZS_PGALLOC]);
		for (const char *z = zone_name(t); *z && n + 1 < (int)sizeof name; z++)
			name[n++] = pa_tolower(*z);
		name[n] = '\0';
		fn(ctx, name, s->pgalloc[t]);
	}
}

static uint64_t vm_pool_stat(struct pa_pool *pool, unsigned k)
{
	return atomic_load_explicit(&pool->pool_stat[k], memory_order_relaxed);
}

static void vm_visit_linux(struct pa_pool *pool, const struct vm_snap *s, vm_visit_fn fn, void *ctx)
{
	for (size_t i = 0; i < NR_VM_LINUX; i++) {
		const struct vm_item *it = &vm_linux[i];
		switch (it->src) {
		case VM_FREE:
			fn(ctx, it->name, s->free_pages);
			break;
		case VM_FREE_CMA:
			fn(ctx, it->name, s->free_cma);
			break;
		case VM_ISOLATED:
			fn(ctx, it->name, s->isolated);
			break;
		case VM_NUMA_HIT:
			fn(ctx, it->name,
			   s->zstat[PA_ZS_ALLOC_SUCCESS] - s->zstat[PA_ZS_NUMA_MISS]);
			break;
		case VM_NUMA_FOREIGN:
			fn(ctx, it->name, s->numa_foreign);
			break;
		case VM_PGALLOC:
			vm_visit_zone_types(pool, s, fn, ctx);
			break;
		case VM_ZONE:
			fn(ctx, it->name, s->zstat[it->id]);
			break;
		case VM_POOL:
			fn(ctx, it->name, vm_pool_stat(pool, it->id));
			break;
		}
	}
}

/*
 * Every vmstat line in order: the Linux part (vm_linux), then our counters
 * (those of the lists that Linux does not have), then the per-order ones:
 * failures, allocations, and folios compaction moved whole (without a
 * split; compact_folios_split counts the others).
 */
static void vm_walk(struct pa_pool *pool, const struct vm_snap *s, vm_visit_fn fn, void *ctx)
{
	char name[48];
	vm_visit_linux(pool, s, fn, ctx);
	/* Free but never backed: free page reporting leaves it out (reporting.c). */
	fn(ctx, "nr_free_untouched", s->free_untouched);
	/* Free and known zero: a zeroing request takes it without writing it. */
	fn(ctx, "nr_free_cleared", s->free_cleared);
	for (unsigned k = 0; k < PA_NR_ZONE_STATS; k++)
		if (!vm_in_linux_part(VM_ZONE, k))
			fn(ctx, pa_zone_stat_names[k], s->zstat[k]);
	for (unsigned k = 0; k < PA_NR_POOL_STATS; k++)
		if (!vm_in_linux_part(VM_POOL, k))
			fn(ctx, pa_pool_stat_names[k], vm_pool_stat(pool, k));
	for (unsigned o = 0; o < stats_nr_orders(pool); o++) {
		pa_snprintf(name, sizeof name, "pgalloc_fail_order_%u", o);
		fn(ctx, name,
		   atomic_load_explicit(&pool->alloc_fail_order[o], memory_order_relaxed));
	}
	for (unsigned o = 0; o < stats_nr_orders(pool); o++) {
		pa_snprintf(name, sizeof name, "pgalloc_order_%u", o);
		fn(ctx, name, s->alloc_order[o]);
	}
	for (unsigned o = 0; o < stats_nr_orders(pool); o++) {
		pa_snprintf(name, sizeof name, "compact_folios_migrated_order_%u", o);
		fn(ctx, name, s->folios_migrated[o]);
	}
}

static void vm_emit(void *ctx, const char *name, uint64_t value)
{
	struct sbuf *sb = ctx;
	if (sb->json)
		stats_js_u64(sb, name, value);
	else
		stats_printf(sb, "%s %" PRIu64 "\n", name, value);
}

int stats_vmstat(struct pa_pool *pool, struct sbuf *sb)
{
	struct vm_snap s;
	int ret = vm_snapshot(pool, &s);
	if (ret)
		return ret;
	if (sb->json)
		stats_js_open(sb, NULL, '{');
	vm_walk(pool, &s, vm_emit, sb);
	if (sb->json)
		stats_js_close(sb, '}');
	vm_snap_free(pool, &s);
	return 0;
}

struct vm_lookup {
	const char *name;
	uint64_t *value;
	bool found;
};

static void vm_match(void *ctx, const char *name, uint64_t value)
{
	struct vm_lookup *l = ctx;
	if (!l->found && pa_strcmp(name, l->name) == 0) {
		*l->value = value;
		l->found = true;
	}
}

int pa_vmstat_read(struct pa_pool *pool, const char *name, uint64_t *value)
{
	if (!pool || !name || !value)
		return -EINVAL;
	struct vm_snap s;
	int ret = vm_snapshot(pool, &s);
	if (ret)
		return ret;
	struct vm_lookup l = { .name = name, .value = value };
	vm_walk(pool, &s, vm_match, &l);
	vm_snap_free(pool, &s);
	return l.found ? 0 : -ENOENT;
}

int pa_vmstat_foreach(struct pa_pool *pool, pa_vmstat_fn fn, void *ctx)
{
	if (!pool || !fn)
		return -EINVAL;
	struct vm_snap s;
	int ret = vm_snapshot(pool, &s);
	if (ret)
		return ret;
	vm_walk(pool, &s, fn, ctx);
	vm_snap_free(pool, &s);
	return 0;
}
