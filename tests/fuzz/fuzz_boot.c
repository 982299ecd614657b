/* SPDX-License-Identifier: MIT */
/*
 * The boot line: any text either boots a pool that validates, reports and
 * serves a block of every order, or is refused with -errno and a message.
 *
 * The platform refuses to commit more than METADATA_BUDGET bytes of frame
 * metadata, so a huge mem= fails fast with -ENOMEM instead of paging the
 * fuzzer out (boots that large are the benchmarks' business). Lines that
 * name a backing file are skipped: the fuzzer must not create files.
 */
#include "fuzz.h"

#include <errno.h>
#include <sys/mman.h>

#define METADATA_BUDGET (32u << 20)
#define LINE_MAX_BYTES  1024

static size_t committed;

/* The three memory hooks go together (the pool takes all or none); these are the defaults plus a budget. */
static void *budget_reserve(void *ctx, size_t bytes)
{
	(void)ctx;
	void *p = mmap(NULL, bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void budget_release(void *ctx, void *addr, size_t bytes)
{
	(void)ctx;
	munmap(addr, bytes);
}

static int budget_commit(void *ctx, void *addr, size_t bytes)
{
	(void)ctx;
	if (bytes > METADATA_BUDGET - committed)
		return -ENOMEM;
	if (mprotect(addr, bytes, PROT_READ | PROT_WRITE) != 0)
		return -errno;
	committed += bytes;
	return 0;
}

/* What a booted pool must do: validate, describe itself, serve and take back every order. */
static void exercise(struct pa_pool *pool, const char *line)
{
	char err[512];
	FUZZ_EXPECT(pa_validate(pool, err, sizeof err) == 0, "\"%s\": pa_validate: %s", line, err);
	struct pa_config cfg;
	pa_get_config(pool, &cfg);
	FUZZ_EXPECT(cfg.page_size == 1ull << cfg.page_shift && cfg.nr_nodes >= 1 &&
	                    cfg.nr_cpus >= 1 && cfg.pageblock_order <= cfg.max_order,
	            "\"%s\": inconsistent configuration", line);
	static char buf[1 << 16];
	for (unsigned k = 0; k < PA_REPORT_COUNT; k++) {
		int n = pa_report(pool, (enum pa_report_kind)k, k & 1 ? PA_REPORT_JSON : 0, buf,
		                  sizeof buf);
		FUZZ_EXPECT(n >= 0, "\"%s\": report %s: %d", line,
		            pa_report_name((enum pa_report_kind)k), n);
	}
	for (unsigned order = 0; order <= cfg.max_order; order++) {
		struct pa_page *p = pa_alloc_pages(pool, PA_GFP_NOWARN, order);
		struct pa_page *q = pa_alloc_pages(pool, PA_GFP_MOVABLE | PA_GFP_NOWARN, order);
		if (p)
			pa_free_pages(pool, p, order);
		if (q)
			pa_free_pages(pool, q, order);
	}
	pa_drain_all(pool);
	FUZZ_EXPECT(pa_validate(pool, err, sizeof err) == 0, "\"%s\": after allocating: %s", line,
	            err);
	struct pa_usage u;
	pa_get_usage(pool, &u);
	FUZZ_EXPECT(u.allocated == 0, "\"%s\": %llu frames still allocated", line,
	            (unsigned long long)u.allocated);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char line[LINE_MAX_BYTES + 1];
	size_t n = size < LINE_MAX_BYTES ? size : LINE_MAX_BYTES;
	memcpy(line, data, n);
	line[n] = '\0';
	if (strstr(line, "file"))
		return 0;
	struct fuzz_platform fp;
	fuzz_platform_init(&fp);
	fp.plat.reserve = budget_reserve;
	fp.plat.commit = budget_commit;
	fp.plat.release = budget_release;
	committed = 0;
	struct pa_pool *pool = NULL;
	char err[256] = "";
	int rc = pa_boot(line, &fp.plat, &pool, err, sizeof err);
	if (rc != 0) {
		FUZZ_EXPECT(rc < 0 && !pool, "\"%s\": pa_boot = %d", line, rc);
		FUZZ_EXPECT(err[0] != '\0', "\"%s\": refused (%d) without a message", line, rc);
		return 0;
	}
	FUZZ_EXPECT(pool, "\"%s\": booted without a pool", line);
	exercise(pool, line);
	pa_shutdown(pool);
	return 0;
}
