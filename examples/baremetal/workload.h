/* SPDX-License-Identifier: MIT */
/*
 * What an embedder without a C library does with a pool, shared by the
 * bare-metal kernel (kernel.c) and the no-libc test (tests/nolibc/): every
 * order allocated, written, checked and freed; folios; owned folios moved
 * by pa_compact() with their bytes checked where they land; a contiguous
 * range; a CMA allocation; pa_validate() after each step. Written against
 * the public header only, with no library calls but the four mem* ones.
 */
#ifndef PA_EXAMPLE_WORKLOAD_H
#define PA_EXAMPLE_WORKLOAD_H

#include <pagealloc.h>

/* Where the workload's lines go (a serial port, a write system call). */
typedef void (*workload_put_fn)(const char *s);

/* Run it on a booted pool; the number of failed checks (0: all passed), each one put. */
unsigned workload_run(struct pa_pool *pool, workload_put_fn put);

/* A report (PA_REPORT_BUDDYINFO, ...) put as it is; 0, or 1 when it cannot be written. */
unsigned workload_put_report(struct pa_pool *pool, enum pa_report_kind kind, workload_put_fn put);

/* Decimal digits of v into buf (at least 21 bytes), NUL-terminated; buf. */
char *workload_u64(char *buf, uint64_t v);

#endif
