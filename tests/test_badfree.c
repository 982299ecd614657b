/* SPDX-License-Identifier: MIT */
/*
 * Bad frees: a double free, a frame never allocated, a tail frame, the wrong
 * order, a descriptor out of range or not of this pool, NULL. Each one is
 * reported through the platform's report hook (a line naming the pfn),
 * counted as bad_page, and refused: the pool validates, the usage and the
 * buddyinfo are unchanged, and the real block can still be freed. With
 * bad_page=panic the process aborts.
 */
#include "test.h"

#include "platform/platform.h"
#include "memmap.h"

#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define MiB (1ull << 20)

struct fixture {
	struct pa_pool *pool;
	struct report_capture cap;
	struct pa_platform plat;
};

static void fixture_boot(struct fixture *f, const char *line)
{
	memset(f, 0, sizeof *f);
	f->plat.ctx = &f->cap;
	f->plat.report = capture_report;
	f->pool = test_boot_on(line, &f->plat);
}

struct snapshot {
	struct pa_usage usage;
	uint64_t bad_page;
	char buddyinfo[4096];
	int lines;
};

static void take_snapshot(struct fixture *f, struct snapshot *s)
{
	memset(s, 0, sizeof *s);
	pa_get_usage(f->pool, &s->usage);
	REQUIRE(pa_vmstat_read(f->pool, "bad_page", &s->bad_page) == 0);
	int n = pa_report(f->pool, PA_REPORT_BUDDYINFO, 0, s->buddyinfo, sizeof s->buddyinfo);
	REQUIRE(n > 0 && (size_t)n < sizeof s->buddyinfo);
	s->lines = f->cap.lines;
}

static bool line_names_pfn(const char *line, uint64_t pfn)
{
	char dec[32], hex[32], hex2[32];
	snprintf(dec, sizeof dec, "%" PRIu64, pfn);
	snprintf(hex, sizeof hex, "0x%" PRIx64, pfn);
	snprintf(hex2, sizeof hex2, "%#" PRIx64, pfn);
	/* The decimal digits must stand alone, not inside a longer number. */
	for (const char *p = strstr(line, dec); p; p = strstr(p + 1, dec)) {
		bool left = p == line || !(p[-1] >= '0' && p[-1] <= '9');
		char r = p[strlen(dec)];
		if (left && !(r >= '0' && r <= '9'))
			return true;
	}
	return strstr(line, hex) || strstr(line, hex2);
}

/*
 * After a bad free: one more report line (naming pfn when pfn is not
 * PA_PFN_INVALID), bad_page one higher, and nothing else changed.
 */
static void expect_refused(struct fixture *f, const struct snapshot *before, uint64_t pfn,
                           const char *what)
{
	struct snapshot after;
	take_snapshot(f, &after);
	CHECK_MSG(after.lines == before->lines + 1, "%s: %d report lines, expected 1", what,
	          after.lines - before->lines);
	if (after.lines > before->lines) {
		fprintf(stderr, "    %s: \"%s\"\n", what, f->cap.last);
		if (pfn != PA_PFN_INVALID)
			CHECK_MSG(line_names_pfn(f->cap.last, pfn),
			          "%s: report \"%s\" does not name pfn %" PRIu64, what, f->cap.last,
			          pfn);
	}
	CHECK_MSG(after.bad_page == before->bad_page + 1, "%s: bad_page %" PRIu64 " -> %" PRIu64,
	          what, before->bad_page, after.bad_page);
	CHECK_MSG(after.usage.free == before->usage.free &&
	                  after.usage.allocated == before->usage.allocated &&
	                  after.usage.reserved == before->usage.reserved &&
	                  after.usage.managed == before->usage.managed,
	          "%s: usage changed (free %" PRIu64 " -> %" PRIu64 ", allocated %" PRIu64
	          " -> %" PRIu64 ")",
	          what, before->usage.free, after.usage.free, before->usage.allocated,
	          after.usage.allocated);
	CHECK_MSG(!strcmp(after.buddyinfo, before->buddyinfo), "%s: buddyinfo changed:\n%s->\n%s",
	          what, before->buddyinfo, after.buddyinfo);
	char err[512];
	CHECK_MSG(pa_validate(f->pool, err, sizeof err) == 0, "%s: pa_validate: %s", what, err);
}

/*
 * Free everything left and check the pool is back to its boot state. Good
 * frees of enabled orders wait on the per-CPU lists (out of the buddy, as in
 * Linux), so the lists are drained first; then every frame must be free.
 */
static void expect_clean_after(struct fixture *f, const char *boot_buddyinfo)
{
	char now[4096];
	pa_drain_all(f->pool);
	struct pa_usage u;
	pa_get_usage(f->pool, &u);
	CHECK_MSG(u.free == u.managed && u.allocated == 0 && u.reserved == 0,
	          "after the good frees and a drain: free %" PRIu64 " allocated %" PRIu64
	          " reserved %" PRIu64 " of managed %" PRIu64,
	          u.free, u.allocated, u.reserved, u.managed);
	pa_report(f->pool, PA_REPORT_BUDDYINFO, 0, now, sizeof now);
	CHECK_MSG(!strcmp(now, boot_buddyinfo), "after the good frees, buddyinfo\n%s!= boot\n%s",
	          now, boot_buddyinfo);
	VALIDATE(f->pool);
	pa_shutdown(f->pool);
}

#define POOL_LINE "mem=64M min_free_kbytes=0"

TEST(badfree_double_free_is_refused)
{
	struct fixture f;
	fixture_boot(&f, POOL_LINE);
	struct snapshot boot, s;
	take_snapshot(&f, &boot);
	/* Keep a neighbour allocated so the freed frame stays a block head of its own. */
	struct pa_page *keep = pa_alloc_pages(f.pool, PA_GFP_KERNEL, 0);
	struct pa_page *p = pa_alloc_pages(f.pool, PA_GFP_KERNEL, 0);
	REQUIRE(keep && p);
	pa_pfn_t pfn = pa_page_to_pfn(f.pool, p);
	pa_free_pages(f.pool, p, 0);
	take_snapshot(&f, &s);
	CHECK_EQ_U64(s.bad_page, 0);
	pa_free_pages(f.pool, p, 0);
	expect_refused(&f, &s, pfn, "double free of order 0");
	pa_free_pages(f.pool, keep, 0);
	expect_clean_after(&f, boot.buddyinfo);
}

TEST(badfree_double_free_of_high_order_block_is_refused)
{
	struct fixture f;
	fixture_boot(&f, POOL_LINE);
	struct snapshot boot, s;
	take_snapshot(&f, &boot);
	struct pa_page *p = pa_alloc_pages(f.pool, PA_GFP_KERNEL | PA_GFP_COMP, 4);
	REQUIRE(p);
	pa_pfn_t pfn = pa_page_to_pfn(f.pool, p);
	pa_free_pages(f.pool, p, 4);
	take_snapshot(&f, &s);
	pa_free_pages(f.pool, p, 4); /* the block merged back: pfn is inside a free block now */
	expect_refused(&f, &s, pfn, "double free of an order-4 folio");
	expect_clean_after(&f, boot.buddyinfo);
}

TEST(badfree_never_allocated_frame_is_refused)
{
	struct fixture f;
	fixture_boot(&f, POOL_LINE);
	struct snapshot s;
	take_snapshot(&f, &s);
	struct pa_config c;
	pa_get_config(f.pool, &c);
	/* The head of a free max-order block, and a frame inside one. */
	pa_pfn_t pfns[] = { 0, 1, 777, c.total_pages - 1, 1024 };
	for (size_t i = 0; i < sizeof pfns / sizeof pfns[0]; i++) {
		struct snapshot before;
		take_snapshot(&f, &before);
		pa_free_pages(f.pool, pa_pfn_to_page(f.pool, pfns[i]), 0);
		expect_refused(&f, &before, pfns[i], "free of a never-allocated frame");
	}
	/* The same with a higher order. */
	struct snapshot before;
	take_snapshot(&f, &before);
	pa_free_pages(f.pool, pa_pfn_to_page(f.pool, 2048), 10);
	expect_refused(&f, &before, 2048, "order-10 free of a free block");
	expect_clean_after(&f, s.buddyinfo);
}

TEST(badfree_tail_frame_of_a_block_is_refused)
{
	struct fixture f;
	fixture_boot(&f, POOL_LINE);
	struct snapshot boot;
	take_snapshot(&f, &boot);
	struct pa_page *blk = pa_alloc_pages(f.pool, PA_GFP_KERNEL, 3); /* not a folio */
	REQUIRE(blk);
	pa_pfn_t head = pa_page_to_pfn(f.pool, blk);
	struct {
		unsigned off, order;
	} cases[] = { { 1, 0 }, { 7, 0 }, { 4, 2 }, { 1, 3 }, { 2, 1 } };
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct snapshot before;
		take_snapshot(&f, &before);
		pa_free_pages(f.pool, pa_pfn_to_page(f.pool, head + cases[i].off), cases[i].order);
		expect_refused(&f, &before, head + cases[i].off, "free of a tail frame of a block");
	}
	pa_free_pages(f.pool, blk, 3);
	expect_clean_after(&f, boot.buddyinfo);
}

TEST(badfree_tail_frame_of_a_folio_is_refused)
{
	struct fixture f;
	fixture_boot(&f, POOL_LINE);
	struct snapshot boot;
	take_snapshot(&f, &boot);
	struct pa_page *folio = pa_alloc_pages(f.pool, PA_GFP_MOVABLE | PA_GFP_COMP, 5);
	REQUIRE(folio);
	pa_pfn_t head = pa_page_to_pfn(f.pool, folio);
	struct pa_page *tail = pa_pfn_to_page(f.pool, head + 2);
	CHECK(pa_folio_head(f.pool, tail) == folio);
	struct snapshot before;
	take_snapshot(&f, &before);
	pa_free_pages(f.pool, tail, 0);
	expect_refused(&f, &before, head + 2, "order-0 free of a folio tail");
	take_snapshot(&f, &before);
	pa_free_pages(f.pool, pa_pfn_to_page(f.pool, head + 16), 4);
	expect_refused(&f, &before, head + 16, "order-4 free of a folio's upper half");
	CHECK(pa_folio_head(f.pool, tail) == folio);
	CHECK_EQ_U64(pa_folio_order(f.pool, folio), 5);
	pa_free_pages(f.pool, folio, 5);
	expect_clean_after(&f, boot.buddyinfo);
}

TEST(badfree_wrong_order_is_refused)
{
	struct fixture f;
	fixture_boot(&f, POOL_LINE);
	struct snapshot boot;
	take_snapshot(&f, &boot);
	struct pa_page *blk = pa_alloc_pages(f.pool, PA_GFP_KERNEL, 3);
	struct pa_page *folio = pa_alloc_pages(f.pool, PA_GFP_KERNEL | PA_GFP_COMP, 3);
	REQUIRE(blk && folio);
	unsigned wrong[] = { 0, 2, 4, 10 };
	for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
		struct snapshot before;
		take_snapshot(&f, &before);
		pa_free_pages(f.pool, blk, wrong[i]);
		expect_refused(&f, &before, pa_page_to_pfn(f.pool, blk),
		               "free with the wrong order");
		take_snapshot(&f, &before);
		pa_free_pages(f.pool, folio, wrong[i]);
		expect_refused(&f, &before, pa_page_to_pfn(f.pool, folio),
		               "free of a folio with the wrong order");
	}
	/* Orders beyond max_order, even absurd ones. */
	unsigned absurd[] = { 11, 40, 64, 255, 100000 };
	for (size_t i = 0; i < sizeof absurd / sizeof absurd[0]; i++) {
		struct snapshot before;
		take_snapshot(&f, &before);
		pa_free_pages(f.pool, blk, absurd[i]);
		expect_refused(&f, &before, pa_page_to_pfn(f.pool, blk),
		               "free with an order > max_order");
	}
	pa_free_pages(f.pool, blk, 3);
	pa_free_pages(f.pool, folio, 3);
	expect_clean_after(&f, boot.buddyinfo);
}

TEST(badfree_descriptor_out_of_range_is_refused)
{
	struct fixture f;
	fixture_boot(&f, POOL_LINE);
	struct snapshot boot;
	take_snapshot(&f, &boot);
	struct pa_page *p = pa_alloc_pages(f.pool, PA_GFP_KERNEL, 0);
	REQUIRE(p);
	struct pa_pool *pool = f.pool;
	struct pa_page *bad[] = {
		pool->map + pool->nr_frames,          /* one past the last frame */
		pool->map + pool->nr_frames + 100000, /* far past it */
		pool->map - 1,                        /* before the map */
		(struct pa_page *)((char *)p + 1),    /* inside the map, off a descriptor */
		(struct pa_page *)((char *)p + 8),
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct snapshot before;
		take_snapshot(&f, &before);
		pa_free_pages(f.pool, bad[i], 0);
		expect_refused(&f, &before, PA_PFN_INVALID, "free of a descriptor out of range");
	}
	pa_free_pages(f.pool, p, 0);
	expect_clean_after(&f, boot.buddyinfo);
}

TEST(badfree_descriptor_of_another_pool_is_refused)
{
	struct fixture f;
	fixture_boot(&f, POOL_LINE);
	struct snapshot boot;
	take_snapshot(&f, &boot);
	struct pa_pool *other = test_boot("mem=64M min_free_kbytes=0");
	struct pa_page *theirs = pa_alloc_pages(other, PA_GFP_KERNEL, 2);
	REQUIRE(theirs);
	struct snapshot before;
	take_snapshot(&f, &before);
	pa_free_pages(f.pool, theirs, 2);
	expect_refused(&f, &before, PA_PFN_INVALID, "free of another pool's block");
	/* It is still allocated in its own pool. */
	CHECK_EQ_U64(pa_folio_order(other, theirs), 2);
	pa_free_pages(other, theirs, 2);
	VALIDATE(other);
	pa_shutdown(other);

	uint64_t junk[8] = { 0 };
	take_snapshot(&f, &before);
	pa_free_pages(f.pool, (struct pa_page *)junk, 0);
	expect_refused(&f, &before, PA_PFN_INVALID, "free of a pointer into the stack");
	expect_clean_after(&f, boot.buddyinfo);
}

TEST(badfree_null_page_is_refused)
{
	struct fixture f;
	fixture_boot(&f, POOL_LINE);
	struct snapshot boot;
	take_snapshot(&f, &boot);
	struct snapshot before;
	take_snapshot(&f, &before);
	pa_free_pages(f.pool, NULL, 0);
	expect_refused(&f, &before, PA_PFN_INVALID, "free of NULL");
	expect_clean_after(&f, boot.buddyinfo);
}

TEST(badfree_hole_frames_are_refused)
{
	struct fixture f;
	/* 128M-256M: an absent section (its descriptors are not even backed); 300M-301M: a partial hole. */
	fixture_boot(&f, "mem=512M memhole=128M-256M memhole=300M-301M min_free_kbytes=0");
	struct snapshot boot;
	take_snapshot(&f, &boot);
	pa_pfn_t absent = (200 * MiB) >> 12, partial = (300 * MiB) >> 12;
	CHECK(pa_pfn_to_page(f.pool, absent) == NULL);
	CHECK(pa_pfn_to_page(f.pool, partial) == NULL);
	REQUIRE(memmap_section_present(f.pool, partial));
	struct snapshot before;
	take_snapshot(&f, &before);
	pa_free_pages(f.pool, f.pool->map + absent, 0);
	expect_refused(&f, &before, absent, "free of a frame in an absent section");
	take_snapshot(&f, &before);
	pa_free_pages(f.pool, f.pool->map + partial, 0);
	expect_refused(&f, &before, partial, "free of a hole frame");
	take_snapshot(&f, &before);
	pa_free_pages(f.pool, f.pool->map + partial + 1, 3);
	expect_refused(&f, &before, partial + 1, "order-3 free of a hole frame");
	expect_clean_after(&f, boot.buddyinfo);
}

TEST(badfree_counts_in_vmstat_text)
{
	struct fixture f;
	fixture_boot(&f, POOL_LINE);
	for (int i = 0; i < 3; i++)
		pa_free_pages(f.pool, pa_pfn_to_page(f.pool, 5), 0);
	char buf[16384];
	int n = pa_report(f.pool, PA_REPORT_VMSTAT, 0, buf, sizeof buf);
	REQUIRE(n > 0 && (size_t)n < sizeof buf);
	CHECK_MSG(strstr(buf, "\nbad_page 3\n") || !strncmp(buf, "bad_page 3\n", 11),
	          "vmstat has no line \"bad_page 3\"");
	CHECK_EQ_U64(f.cap.lines, 3);
	VALIDATE(f.pool);
	pa_shutdown(f.pool);
}

TEST(badfree_default_report_goes_to_stderr_and_pool_survives)
{
	/* No report hook: the default platform writes the line to stderr; nothing breaks. */
	struct pa_pool *pool = test_boot(POOL_LINE);
	struct pa_page *p = pa_alloc_pages(pool, PA_GFP_KERNEL, 1);
	REQUIRE(p);
	pa_free_pages(pool, p, 1);
	pa_free_pages(pool, p, 1);
	uint64_t v = 0;
	CHECK(pa_vmstat_read(pool, "bad_page", &v) == 0);
	CHECK_EQ_U64(v, 1);
	VALIDATE(pool);
	pa_shutdown(pool);
}

static int report_fd = -1;

static void pipe_report(void *ctx, const char *line)
{
	(void)ctx;
	if (report_fd >= 0) {
		ssize_t w = write(report_fd, line, strlen(line));
		(void)w;
		w = write(report_fd, "\n", 1);
		(void)w;
	}
}

/* In a child: boot with bad_page=panic, free something bad; the child must die of SIGABRT. */
static void expect_panic(const char *what, void (*bad)(struct pa_pool *))
{
	int fds[2];
	REQUIRE(pipe(fds) == 0);
	fflush(NULL);
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		struct rlimit no_core = { 0, 0 };
		setrlimit(RLIMIT_CORE, &no_core);
		report_fd = fds[1];
		struct pa_platform plat = { .report = pipe_report };
		struct pa_pool *pool = NULL;
		char err[256];
		if (pa_boot("mem=64M min_free_kbytes=0 bad_page=panic", &plat, &pool, err,
		            sizeof err) != 0)
			_exit(3);
		bad(pool);
		_exit(4); /* survived: wrong */
	}
	close(fds[1]);
	char out[1024] = "";
	size_t got = 0;
	ssize_t r;
	while (got + 1 < sizeof out && (r = read(fds[0], out + got, sizeof out - 1 - got)) > 0)
		got += (size_t)r;
	out[got] = '\0';
	close(fds[0]);
	int status = 0;
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
	          "%s with bad_page=panic: child %s %d, expected SIGABRT", what,
	          WIFSIGNALED(status) ? "died of signal" : "exited with",
	          WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	CHECK_MSG(got > 0, "%s with bad_page=panic: nothing reported before the abort", what);
	fprintf(stderr, "    %s, panic report: %s", what, got ? out : "(none)\n");
}

static void panic_double_free(struct pa_pool *pool)
{
	struct pa_page *p = pa_alloc_pages(pool, PA_GFP_KERNEL, 0);
	pa_free_pages(pool, p, 0);
	pa_free_pages(pool, p, 0);
}

static void panic_wrong_order(struct pa_pool *pool)
{
	struct pa_page *p = pa_alloc_pages(pool, PA_GFP_KERNEL, 2);
	pa_free_pages(pool, p, 3);
}

static void panic_null(struct pa_pool *pool)
{
	pa_free_pages(pool, NULL, 0);
}

TEST(badfree_panic_mode_aborts)
{
	expect_panic("double free", panic_double_free);
	expect_panic("wrong order", panic_wrong_order);
	expect_panic("NULL page", panic_null);
}

TEST(badfree_panic_mode_allows_good_frees)
{
	struct pa_pool *pool = test_boot("mem=64M bad_page=panic");
	struct pa_page *p = pa_alloc_pages(pool, PA_GFP_KERNEL, 4);
	REQUIRE(p);
	pa_free_pages(pool, p, 4);
	VALIDATE(pool);
	pa_shutdown(pool);
}

/* --- Freeing the wrong kind of range, and counts that overflow ----------------- */

/*
 * pa_free_contig_range() over part of a block from pa_alloc_pages() would
 * split the owner's block: refused, and the owner's free still works.
 */
TEST(badfree_contig_range_over_part_of_a_pa_alloc_pages_block_is_refused)
{
	struct fixture f;
	fixture_boot(&f, POOL_LINE " pcp_orders=none");
	char boot_bi[4096];
	pa_report(f.pool, PA_REPORT_BUDDYINFO, 0, boot_bi, sizeof boot_bi);
	struct pa_page *p = pa_alloc_pages(f.pool, PA_GFP_KERNEL, 3);
	REQUIRE(p);
	pa_pfn_t pfn = pa_page_to_pfn(f.pool, p);
	struct snapshot s;
	take_snapshot(&f, &s);
	pa_free_contig_range(f.pool, pfn + 2, 4);
	expect_refused(&f, &s, pfn + 2, "pa_free_contig_range over part of an order-3 block");
	take_snapshot(&f, &s);
	pa_free_contig_range(f.pool, pfn, 8);
	expect_refused(&f, &s, pfn, "pa_free_contig_range over a whole order-3 block");
	pa_free_pages(f.pool, p, 3);
	expect_clean_after(&f, boot_bi);
}

/* A page of a CMA allocation freed with pa_free_pages() would leave the area's map claimed. */
TEST(badfree_cma_allocation_freed_with_pa_free_pages_or_free_contig_range_is_refused)
{
	struct fixture f;
	fixture_boot(&f, POOL_LINE " cma=4M");
	char boot_bi[4096];
	pa_report(f.pool, PA_REPORT_BUDDYINFO, 0, boot_bi, sizeof boot_bi);
	struct pa_page *p = pa_cma_alloc(f.pool, 0, 16, 4); /* one order-4 block */
	REQUIRE(p);
	pa_pfn_t pfn = pa_page_to_pfn(f.pool, p);
	struct pa_cma_info ci;
	struct snapshot s;
	for (unsigned order = 0; order <= 4; order += 4) { /* the zone path and the CPU lists */
		take_snapshot(&f, &s);
		REQUIRE(pa_ctl_write(f.pool, "pcp/orders/4/enabled", order ? "1" : "0") == 0);
		pa_free_pages(f.pool, p, 4);
		expect_refused(&f, &s, pfn, "pa_free_pages of a CMA allocation");
		CHECK_MSG(strstr(f.cap.last, "pa_cma_release"), "report: %s", f.cap.last);
	}
	take_snapshot(&f, &s);
	pa_free_contig_range(f.pool, pfn, 16);
	expect_refused(&f, &s, pfn, "pa_free_contig_range of a CMA allocation");
	REQUIRE(pa_cma_get(f.pool, 0, &ci) == 0);
	CHECK_EQ_U64(ci.allocated_pages, 16);
	CHECK_EQ_U64(pa_cma_release(f.pool, 0, p, 16), 0);
	REQUIRE(pa_cma_get(f.pool, 0, &ci) == 0);
	CHECK_EQ_U64(ci.allocated_pages, 0);
	expect_clean_after(&f, boot_bi);
}

/* A count that reaches past the pool (or wraps) is refused at once: no endless walk. */
TEST(badfree_contig_range_with_an_overflowing_count_is_refused_at_once)
{
	struct fixture f;
	fixture_boot(&f, POOL_LINE);
	char boot_bi[4096];
	pa_report(f.pool, PA_REPORT_BUDDYINFO, 0, boot_bi, sizeof boot_bi);
	struct pa_page *p = pa_alloc_contig_pages(f.pool, 16, PA_GFP_MOVABLE, -1);
	REQUIRE(p);
	pa_pfn_t pfn = pa_page_to_pfn(f.pool, p), start = pfn + 8; /* start > 0: end wraps */
	const uint64_t counts[] = { 1ull << 62, UINT64_MAX, 0 - start + 1, 0 - start };
	for (unsigned i = 0; i < 4; i++) {
		struct snapshot s;
		take_snapshot(&f, &s);
		pa_free_contig_range(f.pool, start, counts[i]);
		expect_refused(&f, &s, start, "pa_free_contig_range with an overflowing count");
	}
	pa_free_contig_range(f.pool, pfn, 16);
	expect_clean_after(&f, boot_bi);
}
