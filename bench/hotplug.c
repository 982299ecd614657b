/* SPDX-License-Identifier: MIT */
/*
 * hotplug: the time to offline a memory block full of movable folios.
 *
 * Each run boots a fresh pool, fills all of memory with owned folios of
 * --folio-order (2 by default: 16 KiB), picks the block nearest the middle
 * of the pool that the folios fill whole (the few frames below the min
 * watermark that stay free may lie anywhere), then frees every other folio
 * outside it, so that half of the rest is free for its folios to move to (memory that
 * was written, as a machine's memory is). One timed pa_memory_offline
 * takes the block out: every folio moves, bytes intact. The block comes
 * back online and the pool is checked.
 */
#include "compact_common.h"

#include <inttypes.h>
#include <stdlib.h>

#define HP_BOOT        "mem=1G backing=anon kcompactd=manual"
#define HP_RUNS        5
#define HP_FOLIO_ORDER 2

struct hp {
	const struct bench_opts *opt;
	unsigned runs, order;
	uint64_t block_frames;
	double *ms, *us_per_folio, *folios, *frames;
};

/* Frames in a memory block; 0 if it cannot be read. */
static uint64_t hp_block_frames(struct pa_pool *pool)
{
	uint64_t bytes = 0;
	struct pa_config cfg;
	pa_get_config(pool, &cfg);
	pa_ctl_read_u64(pool, "memory/block_size_bytes", &bytes);
	return bytes >> cfg.page_shift;
}

static uint64_t hp_distance(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* The first pfn of the block nearest the middle that the owner's folios fill (or PA_PFN_INVALID). */
static pa_pfn_t hp_full_block(struct pa_pool *pool, struct cw_owner *o, unsigned order,
                              uint64_t frames)
{
	struct pa_config cfg;
	pa_get_config(pool, &cfg);
	uint64_t nb = cfg.total_pages / frames, best = UINT64_MAX;
	uint64_t *held = calloc(nb ? nb : 1, sizeof *held);
	for (uint64_t slot = 0; held && slot < cw_nr_slots(o); slot++) {
		pa_pfn_t pfn = cw_pfn(o, slot);
		if (pfn != PA_PFN_INVALID && pfn / frames < nb)
			held[pfn / frames] += 1ull << order;
	}
	for (uint64_t b = 0; held && b < nb; b++)
		if (held[b] == frames &&
		    (best == UINT64_MAX || hp_distance(b, nb / 2) < hp_distance(best, nb / 2)))
			best = b;
	free(held);
	return best == UINT64_MAX ? PA_PFN_INVALID : best * frames;
}

/* Fill memory, pick a full block [*s, *s + frames), free every other folio outside it. */
static uint64_t hp_fill(struct pa_pool *pool, struct cw_owner *o, unsigned order, uint64_t frames,
                        pa_pfn_t *s)
{
	uint64_t inside = 0, outside = 0;
	while (cw_alloc(o, PA_GFP_USER_MOVABLE, order) != CW_NONE)
		;
	*s = hp_full_block(pool, o, order, frames);
	pa_pfn_t e = *s + frames;
	for (uint64_t slot = 0; *s != PA_PFN_INVALID && slot < cw_nr_slots(o); slot++) {
		pa_pfn_t pfn = cw_pfn(o, slot);
		if (pfn >= *s && pfn < e)
			inside++;
		else if (pfn != PA_PFN_INVALID && outside++ % 2)
			cw_free(o, slot);
	}
	return inside;
}

static int hp_check(struct pa_pool *pool, struct cw_owner *o, const char *when)
{
	char err[512] = "";
	uint64_t checked = 0;
	if (pa_validate(pool, err, sizeof err) == 0 && cw_verify(o, &checked) == 0)
		return 0;
	fprintf(stderr, "pagealloc: hotplug: %s: %s\n", when, err[0] ? err : "a folio is wrong");
	return -1;
}

static int hp_run(struct hp *h, unsigned run)
{
	struct pa_pool *pool;
	struct cw_owner o = { 0 };
	if (bench_boot(h->opt, HP_BOOT, &pool))
		return -1;
	struct pa_usage u;
	pa_get_usage(pool, &u);
	h->block_frames = hp_block_frames(pool);
	int ret = h->block_frames && !cw_owner_init(&o, pool, u.managed >> h->order) ? 0 : -1;
	pa_pfn_t s = PA_PFN_INVALID;
	uint64_t inside = ret ? 0 : hp_fill(pool, &o, h->order, h->block_frames, &s);
	if (!ret && s == PA_PFN_INVALID) {
		fprintf(stderr, "pagealloc: hotplug: no memory block is full of folios\n");
		ret = -1;
	}
	if (!ret) {
		pa_drain_all(pool);
		uint64_t moved = atomic_load(&o.moved), t0 = bench_now_ns();
		int rc = pa_memory_offline(pool, s, h->block_frames);
		h->ms[run] = (double)(bench_now_ns() - t0) / 1e6;
		h->folios[run] = (double)(atomic_load(&o.moved) - moved);
		h->frames[run] = h->folios[run] * (double)(1ull << h->order);
		h->us_per_folio[run] = h->folios[run] ? h->ms[run] * 1e3 / h->folios[run] : 0;
		if (rc || h->folios[run] != (double)inside)
			fprintf(stderr,
			        "pagealloc: hotplug: offline returned %d, %.0f of %" PRIu64
			        " folios moved\n",
			        rc, h->folios[run], inside);
		ret = rc || h->folios[run] != (double)inside ||
		      hp_check(pool, &o, "after the offline") ||
		      pa_memory_online(pool, s, h->block_frames) ||
		      hp_check(pool, &o, "after the online");
	}
	pa_shutdown(pool);
	cw_owner_destroy(&o);
	return ret;
}

static void hp_print(struct hp *h, FILE *f)
{
	struct bench_out o;
	bench_out_begin(&o, f, h->opt->json, "hotplug");
	bench_out_str(&o, "boot", bench_boot_line(h->opt, HP_BOOT));
	bench_out_u64(&o, "folio_order", h->order);
	bench_out_u64(&o, "block_frames", h->block_frames);
	bench_out_u64(&o, "runs", h->runs);
	bench_out_metric(&o, "folios_moved", "folios moved out of the block", h->folios, h->runs);
	bench_out_metric(&o, "frames_moved", "frames moved out of the block", h->frames, h->runs);
	bench_out_metric(&o, "offline_ms", "ms per pa_memory_offline of the block", h->ms, h->runs);
	bench_out_metric(&o, "us_per_folio", "us per folio moved", h->us_per_folio, h->runs);
	bench_out_end(&o);
}

int bench_hotplug(const struct bench_opts *opt, struct pa_pool *given, FILE *out)
{
	(void)given; /* own_pool: a fresh pool per run */
	struct hp h = { .opt = opt };
	h.runs = opt->runs ? opt->runs : HP_RUNS;
	h.order = opt->folio_order >= 0 ? (unsigned)opt->folio_order : HP_FOLIO_ORDER;
	h.ms = calloc(h.runs, sizeof *h.ms);
	h.us_per_folio = calloc(h.runs, sizeof *h.us_per_folio);
	h.folios = calloc(h.runs, sizeof *h.folios);
	h.frames = calloc(h.runs, sizeof *h.frames);
	int ret = !h.ms || !h.us_per_folio || !h.folios || !h.frames;
	for (unsigned r = 0; !ret && r < h.runs; r++) {
		bench_progress_step(r, h.runs);
		ret = hp_run(&h, r);
	}
	if (!ret)
		hp_print(&h, out);
	free(h.ms);
	free(h.us_per_folio);
	free(h.folios);
	free(h.frames);
	return ret ? 1 : 0;
}
