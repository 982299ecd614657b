/* SPDX-License-Identifier: MIT */
/*
 * What the fuzz targets share: reading numbers from the input, a platform
 * whose CPU the input chooses and whose reports are counted, and a check
 * that aborts with a message (libFuzzer keeps the input that caused it).
 *
 * Each target defines LLVMFuzzerTestOneInput(). Built with clang and
 * -fsanitize=fuzzer it is a fuzzer (make fuzz); built with replay.c it runs
 * the files named on its command line once each (the regression tests).
 */
#ifndef PA_FUZZ_H
#define PA_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pagealloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_EXPECT(cond, ...)                                                                     \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                            \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* The input, consumed from the front; past its end every number is 0. */
struct input {
	const uint8_t *d;
	size_t n;
};

static inline uint8_t in_u8(struct input *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->d++;
}

static inline uint16_t in_u16(struct input *in)
{
	uint16_t lo = in_u8(in);
	return (uint16_t)(lo | (uint16_t)in_u8(in) << 8);
}

static inline uint32_t in_u32(struct input *in)
{
	uint32_t lo = in_u16(in);
	return lo | (uint32_t)in_u16(in) << 16;
}

struct fuzz_platform {
	struct pa_platform plat;
	unsigned cpu; /* what cpu_id answers (the pool takes it modulo nr_cpus) */
	int lines;    /* report lines */
};

static inline unsigned fuzz_cpu_id(void *ctx)
{
	return ((struct fuzz_platform *)ctx)->cpu;
}

static inline void fuzz_report(void *ctx, const char *line)
{
	(void)line;
	((struct fuzz_platform *)ctx)->lines++;
}

static inline void fuzz_platform_init(struct fuzz_platform *fp)
{
	memset(fp, 0, sizeof *fp);
	fp->plat.ctx = fp;
	fp->plat.cpu_id = fuzz_cpu_id;
	fp->plat.report = fuzz_report;
}

/* Boot a pool that must boot. */
static inline struct pa_pool *fuzz_boot(const char *line, struct fuzz_platform *fp)
{
	char err[512] = "";
	struct pa_pool *pool = NULL;
	fuzz_platform_init(fp);
	int rc = pa_boot(line, &fp->plat, &pool, err, sizeof err);
	FUZZ_EXPECT(rc == 0 && pool, "pa_boot(\"%s\") = %d: %s", line, rc, err);
	return pool;
}

/* An allocated descriptor of another pool, booted once for the process. */
static inline struct pa_page *fuzz_foreign_page(void)
{
	static struct fuzz_platform fp;
	static struct pa_pool *other;
	static struct pa_page *page;
	if (!other) {
		other = fuzz_boot("mem=4M min_free_kbytes=0 kcompactd=manual nr_cpus=1", &fp);
		page = pa_alloc_pages(other, PA_GFP_KERNEL, 0);
		FUZZ_EXPECT(page, "no page in the foreign pool");
	}
	return page;
}

#endif
