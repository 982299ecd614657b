/* SPDX-License-Identifier: MIT */
/*
 * The frame map: one virtually contiguous array of descriptors for the whole
 * pfn span (the userspace form of SPARSEMEM_VMEMMAP). Only sections that hold
 * memory are backed; the rest of the array reads as zero and costs nothing,
 * so a buddy in an absent section simply never looks free. Also the pageblock
 * bitmap beside it and the optional backing memory of the frames.
 */
#include "memmap.h"

#include "platform/platform.h"

static int memmap_map_backing(struct pa_pool *pool, char *err, size_t errlen);

static uint64_t div_up(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

/* Is any frame of [lo, hi) outside every hole? */
static bool range_has_memory(const struct pa_boot_config *c, pa_pfn_t lo, pa_pfn_t hi)
{
	/* Holes may overlap: walk forward past every hole that covers lo. */
	for (bool moved = true; moved && lo < hi;) {
		moved = false;
		for (unsigned i = 0; i < c->nr_holes; i++) {
			pa_pfn_t hs = c->holes[i].start >> c->page_shift;
			pa_pfn_t he = div_up(c->holes[i].end, 1ull << c->page_shift);
			if (hs <= lo && lo < he) {
				lo = he;
				moved = true;
			}
		}
	}
	return lo < hi;
}

bool memmap_frame_present(const struct pa_pool *pool, pa_pfn_t pfn)
{
	return pfn < pool->nr_frames && memmap_section_present(pool, pfn) &&
	       page_state(pfn_page(pool, pfn)) != PS_HOLE;
}

/* Back the descriptors of every section with memory; mark partial holes. */
static int memmap_back_sections(struct pa_pool *pool, char *err, size_t errlen)
{
	const struct pa_boot_config *c = &pool->cfg;
	uint64_t sec_frames = 1ull << c->section_shift;
	size_t sec_bytes = sec_frames * sizeof(struct pa_page);
	/* One commit per run of present sections: a 4 TiB pool is one or a few calls, not 32768. */
	for (uint64_t s = 0, run = 0; s <= pool->nr_sections; s++) {
		pa_pfn_t lo = s * sec_frames;
		pa_pfn_t hi = lo + sec_frames < pool->nr_frames ? lo + sec_frames : pool->nr_frames;
		if (s < pool->nr_sections && range_has_memory(c, lo, hi)) {
			pool->section_present[s] = 1;
			continue;
		}
		if (s > run) {
			int rc = pool->plat.commit(pool->plat.ctx,
			                           (char *)pool->map + run * sec_bytes,
			                           (s - run) * sec_bytes);
			if (rc) {
				pa_snprintf(
				        err, errlen,
				        "mem: cannot back the frame map of sections %llu..%llu (%s)",
				        (unsigned long long)run, (unsigned long long)s - 1,
				        platform_strerror(-rc));
				return rc;
			}
		}
		run = s + 1;
	}
	/* Holes, and memory offline at boot: no frame the buddy may use (hotplug.c onlines the latter). */
	for (unsigned i = 0; i < c->nr_holes + c->nr_offline; i++) {
		const struct pa_range *r =
		        i < c->nr_holes ? &c->holes[i] : &c->offline[i - c->nr_holes];
		pa_pfn_t hs = r->start >> c->page_shift;
		pa_pfn_t he = div_up(r->end, 1ull << c->page_shift);
		for (pa_pfn_t pfn = hs; pfn < he && pfn < pool->nr_frames; pfn++)
			if (memmap_section_present(pool, pfn))
				set_page_state(pfn_page(pool, pfn), PS_HOLE);
	}
	return 0;
}

/*
 * The metadata that boot and deferred init make resident: two bytes per
 * pageblock (its bits and its zone), a byte per section, a bit per chunk of
 * untouched memory, a byte per CMA frame, and the descriptors of the
 * sections a hole or an offline range touches (written frame by frame).
 * Descriptors of free memory are written only as it is used (a free
 * max-order block costs none), so this, not a descriptor per frame, is what
 * a pool needs to come up; using memory grows it by at most a descriptor
 * per frame used.
 */
uint64_t memmap_metadata_bytes(const struct pa_boot_config *c)
{
	uint64_t frames = c->mem >> c->page_shift, cma = 0, sec = 1ull << c->section_shift;
	uint64_t sections_written = 0;
	for (unsigned i = 0; i < c->nr_cma; i++)
		cma += c->cma[i].size >> c->page_shift;
	for (unsigned i = 0; i < c->nr_holes + c->nr_offline; i++) {
		const struct pa_range *r =
		        i < c->nr_holes ? &c->holes[i] : &c->offline[i - c->nr_holes];
		pa_pfn_t s = r->start >> c->page_shift, e = div_up(r->end, 1ull << c->page_shift);
		sections_written += div_up(e, sec) - s / sec;
	}
	return 2 * div_up(frames, 1ull << c->pageblock_order) + div_up(frames, sec) +
	       div_up(frames, 1ull << c->chunk_order) / 8 + cma +
	       sections_written * sec * sizeof(struct pa_page);
}

/*
 * Fail now rather than be killed later: a pool whose metadata would not fit
 * in the machine's memory is refused before anything is reserved.
 */
static int memmap_check_fits(struct pa_pool *pool, char *err, size_t errlen)
{
	const struct pa_boot_config *c = &pool->cfg;
	uint64_t need = memmap_metadata_bytes(c);
	uint64_t have = platform_machine_bytes(pool);
	if (need <= have)
		return 0;
	pa_snprintf(err, errlen,
	            "mem=%s: the frame metadata would need %llu MiB at boot and the machine has "
	            "%llu MiB; use a smaller mem= or a larger page_shift=",
	            c->mem_arg, (unsigned long long)div_up(need, 1ull << 20),
	            (unsigned long long)(have >> 20));
	return -ENOMEM;
}

int memmap_init(struct pa_pool *pool, char *err, size_t errlen)
{
	const struct pa_boot_config *c = &pool->cfg;
	int fits = memmap_check_fits(pool, err, errlen);
	if (fits)
		return fits;
	pool->nr_frames = c->mem >> c->page_shift;
	pool->nr_sections = div_up(pool->nr_frames, 1ull << c->section_shift);
	pool->map_bytes = pool->nr_sections * (sizeof(struct pa_page) << c->section_shift);
	pool->map = pool->plat.reserve(pool->plat.ctx, pool->map_bytes);
	pool->section_present = pa_calloc(&pool->plat, pool->nr_sections, 1);
	pool->nr_pageblocks = div_up(pool->nr_frames, 1ull << c->pageblock_order);
	pool->pb_bits = pa_malloc(&pool->plat, pool->nr_pageblocks);
	if (!pool->map || !pool->section_present || !pool->pb_bits) {
		pa_snprintf(err, errlen, "mem=%llu: cannot reserve the frame map (%zu bytes)",
		            (unsigned long long)c->mem, pool->map_bytes);
		return -ENOMEM;
	}
	/* As Linux, every pageblock starts MOVABLE; claims retype them as needed. */
	memset(pool->pb_bits, PA_MT_MOVABLE, pool->nr_pageblocks);
	int rc = memmap_back_sections(pool, err, errlen);
	return rc ? rc : memmap_map_backing(pool, err, errlen);
}

/* backing=platform: the embedder's memory (a kernel's direct map); the rest is the OS's. */
static int memmap_map_backing(struct pa_pool *pool, char *err, size_t errlen)
{
	if (pool->cfg.backing != PA_BACKING_PLATFORM)
		return platform_backing_map(pool, err, errlen);
	pool->base = pool->plat.frames ? pool->plat.frames(pool->plat.ctx, pool->cfg.mem) : NULL;
	pool->base_bytes = (size_t)pool->cfg.mem;
	if (!pool->base) {
		pa_snprintf(err, errlen, "backing=platform: %s",
		            pool->plat.frames ? "the platform's frames hook gave no memory" :
		                                "the platform has no frames hook");
		return -EINVAL;
	}
	return 0;
}

void memmap_destroy(struct pa_pool *pool)
{
	platform_backing_unmap(pool);
	if (pool->map)
		pool->plat.release(pool->plat.ctx, pool->map, pool->map_bytes);
	pa_free(&pool->plat, pool->section_present);
	pa_free(&pool->plat, pool->pb_bits);
}

pa_pfn_t pa_page_to_pfn(const struct pa_pool *pool, const struct pa_page *page)
{
	if (!pool || !page)
		return PA_PFN_INVALID;
	return page_to_pfn_checked(pool, page);
}

struct pa_page *pa_pfn_to_page(const struct pa_pool *pool, pa_pfn_t pfn)
{
	return pool && memmap_frame_present(pool, pfn) ? pfn_page(pool, pfn) : NULL;
}

void *pa_page_address(const struct pa_pool *pool, const struct pa_page *page)
{
	pa_pfn_t pfn = pa_page_to_pfn(pool, page);
	if (pfn == PA_PFN_INVALID || !pool->base)
		return NULL;
	return pool->base + (pfn << pool->cfg.page_shift);
}

pa_pfn_t memmap_block_head(const struct pa_pool *pool, pa_pfn_t pfn)
{
	/* An allocated block may be above max_order, lowered since it was handed out. */
	for (unsigned o = 0; o <= pool->max_order_boot; o++) {
		pa_pfn_t head = pfn & ~((1ull << o) - 1);
		const struct pa_page *h = pfn_page(pool, head);
		unsigned st = page_state(h);
		if (st != PS_BODY && st != PS_HOLE)
			return page_order(h) >= o ? head : PA_NIL;
		if (st == PS_HOLE)
			return PA_NIL;
	}
	return PA_NIL;
}
