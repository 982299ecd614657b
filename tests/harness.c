/* SPDX-License-Identifier: MIT */
/* The shared main() of the test executables: see test.h. */
#include "test.h"

#include "zone.h"

#include <setjmp.h>
#include <stdarg.h>
#include <time.h>

#define MAX_TESTS 512

static struct {
	const char *name;
	test_fn fn;
	bool may_skip;
} tests[MAX_TESTS];
static int nr_tests;
static int case_failures;
static bool case_skipped;
static bool case_may_skip;
static jmp_buf case_env;

void test_register(const char *name, test_fn fn, bool may_skip)
{
	if (nr_tests == MAX_TESTS) {
		fprintf(stderr, "harness: more than %d tests in one file\n", MAX_TESTS);
		exit(2);
	}
	tests[nr_tests].name = name;
	tests[nr_tests].fn = fn;
	tests[nr_tests].may_skip = may_skip;
	nr_tests++;
}

void test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "  %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	case_failures++;
}

_Noreturn void test_abort_case(void)
{
	longjmp(case_env, 1);
}

_Noreturn void test_skip(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "  skipped: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (!case_may_skip) /* a skip ctest would not show: a failure */
		test_fail(__FILE__, __LINE__, "test_skip() in a case not declared TEST_MAY_SKIP");
	else
		case_skipped = true;
	longjmp(case_env, 1);
}

double test_scale(void)
{
	const char *s = getenv("PA_TEST_SCALE");
	double v = s ? atof(s) : 1.0;
	return v > 0 ? v : 1.0;
}

uint64_t test_seed(void)
{
	const char *s = getenv("PA_TEST_SEED");
	if (s)
		return strtoull(s, NULL, 0);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec;
}

int test_boot_settled(const char *cmdline, const struct pa_platform *platform, struct pa_pool **out,
                      char *err, size_t errlen)
{
	int rc = (pa_boot)(cmdline, platform, out, err, errlen);
	if (rc == 0)
		pa_deferred_init_wait(*out);
	return rc;
}

void test_touch_all(struct pa_pool *pool)
{
	pa_deferred_init_wait(pool);
	for (unsigned i = 0; i < pool->nr_zones; i++) {
		struct pa_zone *z = &pool->zones[i];
		pa_lock(&z->lock, SITE_ADMIN);
		zone_prepare_range(z, z->start_pfn, z->end_pfn);
		pa_unlock(&z->lock);
	}
}

void capture_report(void *ctx, const char *line)
{
	struct report_capture *c = ctx;
	c->lines++;
	snprintf(c->last, sizeof c->last, "%s", line);
}

struct pa_pool *test_boot(const char *cmdline)
{
	return test_boot_on(cmdline, NULL);
}

struct pa_pool *test_boot_on(const char *cmdline, const struct pa_platform *platform)
{
	char err[512] = "";
	struct pa_pool *pool = NULL;
	int rc = pa_boot(cmdline, platform, &pool, err, sizeof err);
	if (rc != 0 || !pool) {
		test_fail(__FILE__, __LINE__, "pa_boot(\"%s\") = %d: %s", cmdline, rc, err);
		test_abort_case();
	}
	return pool;
}

/* Is case i in this run: every case, those whose names contain a filter, or all but may-skip ones. */
static bool selected(int i, int argc, char **argv)
{
	if (argc < 2)
		return true;
	if (strcmp(argv[1], "--no-may-skip") == 0)
		return !tests[i].may_skip;
	return strstr(tests[i].name, argv[1]) != NULL;
}

/* Run case i: 1 passed, 0 skipped, -1 failed. */
static int run_case(int i)
{
	case_failures = 0;
	case_skipped = false;
	case_may_skip = tests[i].may_skip;
	fprintf(stderr, "[ RUN  ] %s\n", tests[i].name);
	if (setjmp(case_env) == 0)
		tests[i].fn();
	else if (case_failures == 0 && !case_skipped)
		case_failures = 1;
	const char *verdict = case_failures ? "FAIL" : case_skipped ? "SKIP" : " OK ";
	fprintf(stderr, "[ %s ] %s\n", verdict, tests[i].name);
	return case_failures ? -1 : case_skipped ? 0 : 1;
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0, skipped = 0;
	for (int i = 0; i < nr_tests; i++) {
		if (!selected(i, argc, argv))
			continue;
		int r = run_case(i);
		passed += r > 0;
		skipped += r == 0;
		failed += r < 0;
	}
	printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
	if (failed)
		return 1;
	return skipped && !passed ? TEST_SKIPPED : 0;
}
