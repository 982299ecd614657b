/* SPDX-License-Identifier: MIT */
/* Lock contention, as perf lock contention prints it. */
#include "stats.h"

#include "../platform/platform.h"
#include "../pcp.h"
#include "../zone.h"

/*
 * One row per (lock, call site) that was ever contended, most contended
 * first, in the layout of `perf lock contention`:
 *
 *    contended   total wait     max wait     avg wait         type   caller
 *          713      4.64 ms     74.37 us      6.51 us     spinlock   pa_alloc_pages (zone->lock Node 0 Normal)
 *
 * Zone locks are spin locks that sleep after a while ("spinlock", as perf
 * names Linux's zone lock), one per zone. The per-CPU list locks are spin
 * locks ("spinlock") too, summed over the CPUs of a zone: a
 * CPU's failed trylock (it then takes the zone path) counts as a contended
 * acquisition with no wait, so contended = waits + failed trylocks, and the
 * wait figures are those of the waits. avg = total / contended, as perf.
 * JSON: {"locks":[{"name","caller","type","contended","total_wait_ns",
 * "max_wait_ns","avg_wait_ns"}]}, in the same order.
 *
 * A zone lock's figures are read under that lock, a CPU's list lock's under
 * the list lock (they are written only by holders), the failed-trylock
 * counts with atomic loads.
 */

static const char *const lock_site_names[PA_NR_LOCK_SITES] = {
#define X(id, name) [id] = name,
	PA_LOCK_SITES(X)
#undef X
};

struct lock_row {
	char name[48];
	const char *caller, *type;
	uint64_t contended, total_wait_ns, max_wait_ns;
};

struct lock_rows {
	struct lock_row *row;
	unsigned nr;
};

static void lock_rows_add(struct lock_rows *r, const char *name, const char *type,
                          const struct pa_lock_stat *site, const uint64_t *busy)
{
	for (unsigned s = 0; s < PA_NR_LOCK_SITES; s++) {
		uint64_t contended = site[s].contended + (busy ? busy[s] : 0);
		if (!contended)
			continue;
		struct lock_row *row = &r->row[r->nr++];
		*row = (struct lock_row){ .caller = lock_site_names[s],
			                  .type = type,
			                  .contended = contended,
			                  .total_wait_ns = site[s].total_wait_ns,
			                  .max_wait_ns = site[s].max_wait_ns };
		pa_snprintf(row->name, sizeof row->name, "%s", name);
	}
}

static void snap_zone_lock(struct pa_zone *zone, struct pa_lock_stat *site)
{
	pa_lock(&zone->lock, SITE_ADMIN);
	memcpy(site, zone->lock.site, sizeof zone->lock.site);
	pa_unlock(&zone->lock);
}

void stats_zone_lock_totals(struct pa_zone *zone, uint64_t *contended, uint64_t *wait_ns)
{
	struct pa_lock_stat site[PA_NR_LOCK_SITES];
	snap_zone_lock(zone, site);
	*contended = *wait_ns = 0;
	for (unsigned s = 0; s < PA_NR_LOCK_SITES; s++) {
		*contended += site[s].contended;
		*wait_ns += site[s].total_wait_ns;
	}
}

/* Every CPU's list lock of the zone, summed: waits and failed trylocks per site. */
static void snap_pcp_locks(struct pa_zone *zone, struct pa_lock_stat *site, uint64_t *busy)
{
	struct pa_pool *pool = zone->pool;
	for (unsigned c = 0; c < pool->cfg.nr_cpus; c++) {
		struct pa_spin *l = &zone->pcp[c]->lock;
		platform_spin_lock(pool, l, SITE_ADMIN);
		for (unsigned s = 0; s < PA_NR_LOCK_SITES; s++) {
			site[s].contended += l->site[s].contended;
			site[s].total_wait_ns += l->site[s].total_wait_ns;
			if (l->site[s].max_wait_ns > site[s].max_wait_ns)
				site[s].max_wait_ns = l->site[s].max_wait_ns;
		}
		pa_spin_unlock(l);
		for (unsigned s = 0; s < PA_NR_LOCK_SITES; s++)
			busy[s] += atomic_load_explicit(&l->busy[s], memory_order_relaxed);
	}
}

static void snap_locks(struct pa_pool *pool, struct lock_rows *r)
{
	for (unsigned i = 0; i < pool->nr_zones; i++) {
		struct pa_zone *zone = &pool->zones[i];
		struct pa_lock_stat site[PA_NR_LOCK_SITES] = { 0 };
		uint64_t busy[PA_NR_LOCK_SITES] = { 0 };
		char name[48];
		snap_zone_lock(zone, site);
		pa_snprintf(name, sizeof name, "zone->lock Node %u %s", zone->node,
		            zone_name(zone->type));
		lock_rows_add(r, name, "spinlock", site, NULL);
		memset(site, 0, sizeof site);
		snap_pcp_locks(zone, site, busy);
		pa_snprintf(name, sizeof name, "pcp->lock Node %u %s", zone->node,
		            zone_name(zone->type));
		lock_rows_add(r, name, "spinlock", site, busy);
	}
}

/* Most contended first; ties by total wait, then by name, so the order is stable. */
static int lock_row_cmp(const void *a, const void *b)
{
	const struct lock_row *x = a, *y = b;
	if (x->contended != y->contended)
		return x->contended < y->contended ? 1 : -1;
	if (x->total_wait_ns != y->total_wait_ns)
		return x->total_wait_ns < y->total_wait_ns ? 1 : -1;
	int c = pa_strcmp(x->name, y->name);
	return c ? c : pa_strcmp(x->caller, y->caller);
}

/* perf's time column: two decimals in the largest unit that fits, whole nanoseconds below 1 us. */
static void lock_time(char *buf, size_t len, uint64_t ns)
{
	static const struct {
		double base;
		const char *unit;
	} units[] = {
		{ 3600e9, "h " }, { 60e9, "m " }, { 1e9, "s " }, { 1e6, "ms" }, { 1e3, "us" }
	};
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		if ((double)ns >= units[i].base) {
			pa_snprintf(buf, len, "%.2f %s", (double)ns / units[i].base, units[i].unit);
			return;
		}
	}
	pa_snprintf(buf, len, "%" PRIu64 " ns", ns);
}

static void lock_row_out(struct sbuf *sb, const struct lock_row *row)
{
	uint64_t avg = row->total_wait_ns / row->contended;
	if (sb->json) {
		stats_js_open(sb, NULL, '{');
		stats_js_str(sb, "name", row->name);
		stats_js_str(sb, "caller", row->caller);
		stats_js_str(sb, "type", row->type);
		stats_js_u64(sb, "contended", row->contended);
		stats_js_u64(sb, "total_wait_ns", row->total_wait_ns);
		stats_js_u64(sb, "max_wait_ns", row->max_wait_ns);
		stats_js_u64(sb, "avg_wait_ns", avg);
		stats_js_close(sb, '}');
		return;
	}
	char total[24], max[24], mean[24];
	lock_time(total, sizeof total, row->total_wait_ns);
	lock_time(max, sizeof max, row->max_wait_ns);
	lock_time(mean, sizeof mean, avg);
	stats_printf(sb, "%10" PRIu64 " %12s %12s %12s %12s   %s (%s)\n", row->contended, total,
	             max, mean, row->type, row->caller, row->name);
}

int stats_lockstat(struct pa_pool *pool, struct sbuf *sb)
{
	struct lock_rows r = { .row = pa_calloc(&pool->plat,
		                                (size_t)pool->nr_zones * 2 * PA_NR_LOCK_SITES,
		                                sizeof *r.row) };
	if (!r.row)
		return -ENOMEM;
	snap_locks(pool, &r);
	pa_sort(r.row, r.nr, sizeof *r.row, lock_row_cmp);
	if (sb->json) {
		stats_js_open(sb, NULL, '{');
		stats_js_open(sb, "locks", '[');
	} else {
		stats_printf(sb, "%10s %12s %12s %12s %12s   %s\n", "contended", "total wait",
		             "max wait", "avg wait", "type", "caller");
	}
	for (unsigned i = 0; i < r.nr; i++)
		lock_row_out(sb, &r.row[i]);
	if (sb->json) {
		stats_js_close(sb, ']');
		stats_js_close(sb, '}');
	}
	pa_free(&pool->plat, r.row);
	return 0;
}
