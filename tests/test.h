/* SPDX-License-Identifier: MIT */
/*
 * A small self-registering test harness. Each tests/test_*.c file is one
 * executable; TEST(name) defines a case that registers itself, and the shared
 * main() in harness.c runs them all (or those whose names contain argv[1]) and
 * closes with the line "N passed, N failed".
 *
 * CHECK() records a failure and goes on; REQUIRE() ends the case at once.
 *
 * A case that cannot run on some machines is a TEST_MAY_SKIP(name) and
 * calls test_skip() with the reason there. ctest runs each such case on its
 * own (CMakeLists.txt finds them in the source), with SKIP_RETURN_CODE
 * TEST_SKIPPED, so that a skip shows as skipped, never as passed; the file's
 * main entry runs the others (--no-may-skip).
 */
#ifndef PA_TEST_H
#define PA_TEST_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pagealloc.h"

/*
 * Tests see a pool as it is once deferred init is done: pa_boot() here waits
 * for it. A test of deferred init itself calls the library's own with
 * (pa_boot)(...). test_touch_all() also writes the descriptors of untouched
 * memory, for tests that walk the free lists and descriptors directly.
 */
int test_boot_settled(const char *cmdline, const struct pa_platform *platform, struct pa_pool **out,
                      char *err, size_t errlen);
#define pa_boot(...) test_boot_settled(__VA_ARGS__)
void test_touch_all(struct pa_pool *pool);

/* The exit status of a run in which every case skipped (ctest's SKIP_RETURN_CODE). */
#define TEST_SKIPPED 77

typedef void (*test_fn)(void);
void test_register(const char *name, test_fn fn, bool may_skip);
void test_fail(const char *file, int line, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
_Noreturn void test_abort_case(void);
/* End the case as skipped, saying why (printed). Only in a TEST_MAY_SKIP case. */
_Noreturn void test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Scale for sizes and iteration counts: 1 by default, smaller under sanitizers
 * (PA_TEST_SCALE=0.1), larger by flag (PA_TEST_SCALE=10). */
double test_scale(void);
/* Seed for random tests: PA_TEST_SEED or the time; printed by the caller. */
uint64_t test_seed(void);

#define TEST_REGISTERED(name, may_skip)                                                            \
	static void name(void);                                                                    \
	__attribute__((constructor)) static void name##_register(void)                             \
	{                                                                                          \
		test_register(#name, name, may_skip);                                              \
	}                                                                                          \
	static void name(void)
#define TEST(name)          TEST_REGISTERED(name, false)
#define TEST_MAY_SKIP(name) TEST_REGISTERED(name, true)

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			test_fail(__FILE__, __LINE__, "CHECK(%s)", #cond);                         \
	} while (0)

#define CHECK_MSG(cond, ...)                                                                       \
	do {                                                                                       \
		if (!(cond))                                                                       \
			test_fail(__FILE__, __LINE__, __VA_ARGS__);                                \
	} while (0)

#define REQUIRE(cond)                                                                              \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			test_fail(__FILE__, __LINE__, "REQUIRE(%s)", #cond);                       \
			test_abort_case();                                                         \
		}                                                                                  \
	} while (0)

#define CHECK_EQ_U64(a, b)                                                                         \
	do {                                                                                       \
		uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                                   \
		if (a_ != b_)                                                                      \
			test_fail(__FILE__, __LINE__, "%s == %s: %" PRIu64 " != %" PRIu64, #a, #b, \
			          a_, b_);                                                         \
	} while (0)

/* Boot a pool or end the case with the boot error. */
struct pa_pool *test_boot(const char *cmdline);
/* The same with platform hooks (platform may be NULL). */
struct pa_pool *test_boot_on(const char *cmdline, const struct pa_platform *platform);

/* A report platform hook: ctx is a struct report_capture, which counts the lines and keeps the last. */
struct report_capture {
	int lines;
	char last[512];
};
void capture_report(void *ctx, const char *line);

/* pa_validate() must pass; on failure the message is printed and the case ends. */
#define VALIDATE(pool)                                                                             \
	do {                                                                                       \
		char verr_[512];                                                                   \
		if (pa_validate((pool), verr_, sizeof verr_) != 0) {                               \
			test_fail(__FILE__, __LINE__, "pa_validate: %s", verr_);                   \
			test_abort_case();                                                         \
		}                                                                                  \
	} while (0)

#endif
