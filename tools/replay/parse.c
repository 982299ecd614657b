/* SPDX-License-Identifier: MIT */
/*
 * Reading an ftrace text recording into a compact event array.
 *
 * A line is "TASK-PID [CPU] FLAGS SECONDS.MICROS: EVENT: key=value ...".
 * The replay acts on allocations, frees, phase markers and the compaction
 * events that start work (kcompactd wakeups, compact_memory, free-page
 * isolation, the drains of per-CPU lists that follow a direct reclaim or a
 * compaction step); every other event is counted by name. mm_page_free_batched
 * repeats a page that mm_page_free already named, so it is counted and
 * nothing more. Input is plain text, xz or gzip (told by the magic bytes,
 * so stdin works too).
 */
#define _GNU_SOURCE
#include "replay.h"

#include <errno.h>
#include <lzma.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

const char *const rp_event_names[RPN_COUNT] = {
#define X(id, name) name,
	RP_EVENT_NAMES(X)
#undef X
};

/* ---------------------------------------------------------------------- */
/* gfp flag names                                                          */
/* ---------------------------------------------------------------------- */

/* Linux's gfp bits that the mapping needs: reclaim decides whether compaction may run. */
enum {
	K_DIRECT = 1u << 0, /* __GFP_DIRECT_RECLAIM */
	K_KSWAPD = 1u << 1, /* __GFP_KSWAPD_RECLAIM */
};

struct gfp_name {
	const char *name;
	pa_gfp_t pa;     /* PA_GFP_* it carries */
	unsigned kernel; /* K_* it carries */
};

#ifdef PA_GFP_DMA
#define RP_GFP_DMA PA_GFP_DMA
#else
#define RP_GFP_DMA PA_GFP_DMA32 /* no ZONE_DMA: the lowest zone there is */
#endif

/*
 * Every name Linux 6.1's show_gfp_flags() prints (include/trace/events/
 * mmflags.h), composites first as the kernel prints them. Names without a
 * pagealloc meaning (__GFP_IO, __GFP_FS, __GFP_HIGHMEM on x86-64, ...) map
 * to nothing but are known, so that an unknown name is an error.
 */
static const struct gfp_name gfp_names[] = {
	{ "GFP_TRANSHUGE", PA_GFP_MOVABLE | PA_GFP_COMP | PA_GFP_NOWARN, K_DIRECT },
	{ "GFP_TRANSHUGE_LIGHT", PA_GFP_MOVABLE | PA_GFP_COMP | PA_GFP_NOWARN, 0 },
	{ "GFP_HIGHUSER_MOVABLE", PA_GFP_MOVABLE, K_DIRECT | K_KSWAPD },
	{ "GFP_HIGHUSER", 0, K_DIRECT | K_KSWAPD },
	{ "GFP_USER", 0, K_DIRECT | K_KSWAPD },
	{ "GFP_KERNEL_ACCOUNT", 0, K_DIRECT | K_KSWAPD },
	{ "GFP_KERNEL", 0, K_DIRECT | K_KSWAPD },
	{ "GFP_NOFS", 0, K_DIRECT | K_KSWAPD },
	{ "GFP_ATOMIC", PA_GFP_HIGH, K_KSWAPD },
	{ "GFP_NOIO", 0, K_DIRECT | K_KSWAPD },
	{ "GFP_NOWAIT", 0, K_KSWAPD },
	{ "GFP_DMA", RP_GFP_DMA, 0 },
	{ "__GFP_HIGHMEM", 0, 0 },
	{ "GFP_DMA32", PA_GFP_DMA32, 0 },
	{ "__GFP_DMA", RP_GFP_DMA, 0 },
	{ "__GFP_DMA32", PA_GFP_DMA32, 0 },
	{ "__GFP_HIGH", PA_GFP_HIGH, 0 },
	{ "__GFP_ATOMIC", PA_GFP_HIGH, 0 },
	{ "__GFP_IO", 0, 0 },
	{ "__GFP_FS", 0, 0 },
	{ "__GFP_NOWARN", PA_GFP_NOWARN, 0 },
	{ "__GFP_RETRY_MAYFAIL", 0, 0 },
	{ "__GFP_NOFAIL", 0, 0 },
	{ "__GFP_NORETRY", PA_GFP_NORETRY, 0 },
	{ "__GFP_COMP", PA_GFP_COMP, 0 },
	{ "__GFP_ZERO", PA_GFP_ZERO, 0 },
	{ "__GFP_NOMEMALLOC", PA_GFP_NOMEMALLOC, 0 },
	{ "__GFP_MEMALLOC", 0, 0 },
	{ "__GFP_HARDWALL", 0, 0 },
	{ "__GFP_THISNODE", PA_GFP_THISNODE, 0 },
	{ "__GFP_RECLAIMABLE", PA_GFP_RECLAIMABLE, 0 },
	{ "__GFP_MOVABLE", PA_GFP_MOVABLE, 0 },
	{ "__GFP_ACCOUNT", 0, 0 },
	{ "__GFP_WRITE", 0, 0 },
	{ "__GFP_RECLAIM", 0, K_DIRECT | K_KSWAPD },
	{ "__GFP_DIRECT_RECLAIM", 0, K_DIRECT },
	{ "__GFP_KSWAPD_RECLAIM", 0, K_KSWAPD },
	{ "__GFP_ZEROTAGS", 0, 0 },
	{ "__GFP_SKIP_ZERO", 0, 0 },
	{ "__GFP_SKIP_KASAN_UNPOISON", 0, 0 },
	{ "__GFP_SKIP_KASAN_POISON", 0, 0 },
	{ "__GFP_NOLOCKDEP", 0, 0 },
	{ "__GFP_OTHER_NODE", 0, 0 },
	{ "none", 0, 0 },
};

static const struct gfp_name *gfp_lookup(const char *s, size_t len)
{
	for (size_t i = 0; i < sizeof gfp_names / sizeof gfp_names[0]; i++)
		if (strlen(gfp_names[i].name) == len && memcmp(gfp_names[i].name, s, len) == 0)
			return &gfp_names[i];
	return NULL;
}

int rp_parse_gfp(const char *s, size_t len, pa_gfp_t *out, char *bad, size_t badlen)
{
	pa_gfp_t pa = 0;
	unsigned kernel = 0;
	while (len) {
		const char *bar = memchr(s, '|', len);
		size_t n = bar ? (size_t)(bar - s) : len;
		const struct gfp_name *g = gfp_lookup(s, n);
		if (!g) {
			if (bad)
				snprintf(bad, badlen, "%.*s", (int)(n < 64 ? n : 64), s);
			return -1;
		}
		pa |= g->pa;
		kernel |= g->kernel;
		s += n + (bar != NULL);
		len -= n + (bar != NULL);
	}
	/* Without direct reclaim the kernel never compacts for the allocation either. */
	if (!(kernel & K_DIRECT))
		pa |= PA_GFP_NOCOMPACT;
	*out = pa;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* One line                                                                */
/* ---------------------------------------------------------------------- */

static int parse_fail(struct rp_trace *t, const char *line, size_t len, const char *why)
{
	t->unparsed++;
	if (!t->err[0])
		snprintf(t->err, sizeof t->err, "line %llu: %s: %.*s", (unsigned long long)t->lines,
		         why, (int)(len < 120 ? len : 120), line);
	return -1;
}

/*
 * The value after "key" (which includes the '='), within [s, end); NULL if
 * absent. A search by the key's first character: memmem's general method
 * cost a sixth of the parse on these short lines.
 */
static const char *field(const char *s, const char *end, const char *key)
{
	size_t n = strlen(key);
	while (s + n <= end) {
		const char *p = memchr(s, key[0], (size_t)(end - s) - n + 1);
		if (!p)
			return NULL;
		if (memcmp(p, key, n) == 0)
			return p + n;
		s = p + 1;
	}
	return NULL;
}

/* Digits of base 10 or 16 at s, below end, into *v; where they stop (s: none). */
static const char *scan_digits(const char *s, const char *end, unsigned base, uint64_t *v)
{
	uint64_t x = 0;
	const char *d = s;
	unsigned max = base == 16 ? 16 : 19; /* no overflow below these */
	for (; s < end && (unsigned)(s - d) < max; s++) {
		unsigned c = (unsigned char)*s, h;
		if (c - '0' < 10)
			h = c - '0';
		else if (base == 16 && (c | 32) - 'a' < 6)
			h = (c | 32) - 'a' + 10;
		else
			break;
		x = x * base + h;
	}
	*v = x;
	return s;
}

static bool is_digit_of(char c, unsigned base)
{
	return (c >= '0' && c <= '9') || (base == 16 && ((c | 32) >= 'a' && (c | 32) <= 'f'));
}

/*
 * strtoull(p, &e, 0) where the trace has "0x..." or decimal: the common
 * forms read inline, anything else (octal, signs, spaces, too many digits)
 * by strtoull itself. strtoull was a tenth of the parse.
 */
static bool scan_u64(const char *p, const char *end, uint64_t *v, const char **after)
{
	unsigned base = end - p > 2 && p[0] == '0' && (p[1] | 32) == 'x' ? 16 : 10;
	const char *d = base == 16 ? p + 2 : p;
	bool plain = d < end && is_digit_of(*d, base) &&
	             (base == 16 || *d != '0' || d + 1 == end || !is_digit_of(d[1], 10));
	if (plain) {
		const char *e = scan_digits(d, end, base, v);
		if (e == end || !is_digit_of(*e, base)) {
			*after = e;
			return true;
		}
	}
	char *e;
	errno = 0;
	*v = strtoull(p, &e, 0);
	*after = e;
	return e != p && errno == 0 && e <= end;
}

static bool get_num(const char *s, const char *end, const char *key, uint64_t *v)
{
	const char *p = field(s, end, key);
	const char *e;
	return p && scan_u64(p, end, v, &e);
}

static struct rp_event *push(struct rp_trace *t)
{
	if (t->nr == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1u << 16;
		struct rp_event *ev = realloc(t->ev, cap * sizeof *ev);
		if (!ev)
			return NULL;
		t->ev = ev;
		t->cap = cap;
	}
	struct rp_event *e = &t->ev[t->nr++];
	memset(e, 0, sizeof *e);
	return e;
}

/*
 * An event of the block of order (at most 40) holding pfn: its head (a
 * line may name a page inside it), order and migratetype; -1 when out of
 * memory.
 */
static int push_block(struct rp_trace *t, enum rp_type type, uint64_t pfn, uint64_t order,
                      uint64_t mt)
{
	struct rp_event *e = push(t);
	if (!e)
		return -1;
	e->type = (uint8_t)type;
	e->pfn = (uint32_t)(pfn & ~((1ull << order) - 1));
	e->order = (uint8_t)order;
	e->mt = (uint8_t)(mt < UINT8_MAX ? mt : UINT8_MAX);
	return 0;
}

/* What the line's header says: CPU, timestamp, pid, and where the event name starts. */
struct line_head {
	unsigned cpu;
	uint64_t ts_ns;
	uint32_t pid;
	const char *task, *name, *args, *end;
	size_t task_len, name_len;
	bool irq; /* in an interrupt: the event is not the task's own doing */
};

static bool parse_head(const char *line, const char *end, struct line_head *h)
{
	const char *s = line;
	while (s < end && *s == ' ')
		s++;
	h->task = s;
	/* "[CPU]": the task name may hold spaces or dashes, but not "[digits] ". */
	const char *b = s;
	for (;;) {
		b = memchr(b, '[', (size_t)(end - b));
		if (!b)
			return false;
		uint64_t cpu;
		const char *e = scan_digits(b + 1, end, 10, &cpu);
		if (e > b + 1 && e < end && *e == ']' && e + 1 < end && e[1] == ' ') {
			h->cpu = (unsigned)cpu;
			s = e + 2;
			break;
		}
		b++;
	}
	const char *dash = b;
	while (dash > h->task && *dash != '-')
		dash--;
	h->task_len = (size_t)(dash - h->task);
	uint64_t pid;
	scan_digits(dash + 1, end, 10, &pid);
	h->pid = (uint32_t)pid;
	/* The flags column: its third character marks hard and soft interrupts ("d.s1."). */
	const char *flags = s;
	while (s < end && *s != ' ')
		s++;
	h->irq = s - flags >= 3 && strchr("hsHzZ", flags[2]) != NULL;
	while (s < end && *s == ' ')
		s++;
	uint64_t sec, us;
	const char *e = scan_digits(s, end, 10, &sec);
	if (e == s || e >= end || *e != '.')
		return false;
	const char *frac = e + 1;
	e = scan_digits(frac, end, 10, &us);
	if (e == frac || e >= end || *e != ':')
		return false;
	for (ptrdiff_t d = e - frac; d < 9; d++)
		us *= 10;
	h->ts_ns = sec * 1000000000ull + us;
	h->name = e + 2;
	const char *colon = memchr(h->name, ':', (size_t)(end - h->name));
	if (!colon)
		return false;
	h->name_len = (size_t)(colon - h->name);
	h->args = colon + 1;
	h->end = end;
	return true;
}

/* The names' lengths, so that most names are told apart without a comparison. */
static const uint8_t event_name_len[RPN_COUNT] = {
#define X(id, name) sizeof name - 1,
	RP_EVENT_NAMES(X)
#undef X
};

static int lookup_name(const char *s, size_t n)
{
	for (int i = 0; i < RPN_COUNT; i++)
		if (event_name_len[i] == n && memcmp(rp_event_names[i], s, n) == 0)
			return i;
	return -1;
}

static void note_pfn(struct rp_trace *t, uint64_t pfn, unsigned order)
{
	uint64_t end = pfn + (1ull << order);
	if (end > t->max_pfn)
		t->max_pfn = end;
}

/*
 * Frames a trace may name: 16 TiB of memory (the event's pfn field is 32
 * bits); blocks of 4 GiB (of 4 KiB pages) at most, larger than any
 * kernel's: a bad line's order 40 would take a while.
 */
#define NAMED_MAX       (1ull << 32)
#define NAMED_MAX_ORDER 20

/* named and buddy cover [0, end), zeroed past what they covered. */
static bool grow_bits(struct rp_trace *t, uint64_t end)
{
	if (end <= t->named_bits)
		return true;
	uint64_t bits = t->named_bits ? t->named_bits : 1ull << 20;
	while (bits < end && bits < NAMED_MAX)
		bits *= 2;
	if (end > bits)
		return false;
	uint8_t *maps[2] = { t->named, t->buddy };
	for (unsigned i = 0; i < 2; i++) {
		uint8_t *grown = realloc(maps[i], bits / 8);
		if (!grown)
			return false; /* a drain then tells nothing: no stock is known */
		memset(grown + t->named_bits / 8, 0, (bits - t->named_bits) / 8);
		*(i ? &t->buddy : &t->named) = grown;
	}
	t->named_bits = bits;
	return true;
}

/*
 * Mark [pfn, end) named, and in the buddy or not (the line that names it
 * last says); true if no frame of it was named before.
 */
static bool note_named(struct rp_trace *t, uint64_t pfn, uint64_t end, bool to_buddy)
{
	if (!grow_bits(t, end))
		return false;
	bool fresh = true;
	for (uint64_t k = pfn; k < end; k++) {
		fresh &= !rp_bit(t->named, k);
		rp_set_bit(t->named, k);
		if (to_buddy)
			rp_set_bit(t->buddy, k);
		else
			t->buddy[k >> 3] &= (uint8_t) ~(1u << (k & 7));
	}
	return fresh;
}

/*
 * The frames the lines name (allocated, freed, taken by a refill or a
 * fallback, drained), in the trace's order: the block of order at pfn,
 * which a drain puts in the buddy and the others take out of it (or put on
 * a list); true if no line named any of it before.
 */
static bool note_block(struct rp_trace *t, uint64_t pfn, uint64_t order, bool to_buddy)
{
	if (!pfn || order > NAMED_MAX_ORDER)
		return false;
	pfn &= ~((1ull << order) - 1);
	return note_named(t, pfn, pfn + (1ull << order), to_buddy);
}

/* Did the last line that named pfn put it in the buddy? */
static bool in_buddy(const struct rp_trace *t, uint64_t pfn)
{
	return pfn < t->named_bits && rp_bit(t->buddy, pfn);
}

/*
 * A drain of a block no line named before (the buddy's own allocations
 * print mm_page_alloc_zone_locked, a fallback mm_page_alloc_extfrag): a
 * CPU's list held it when the trace began. An RP_STOCK event says where,
 * for the starting state.
 */
static int parse_drained(struct rp_trace *t, const struct line_head *h)
{
	uint64_t pfn, order, mt;
	if (!get_num(h->args, h->end, "pfn=", &pfn) || pfn > UINT32_MAX ||
	    !get_num(h->args, h->end, "order=", &order) ||
	    !get_num(h->args, h->end, "migratetype=", &mt) || !note_block(t, pfn, order, true))
		return 0;
	return push_block(t, RP_STOCK, pfn, order, mt);
}

static int parse_alloc(struct rp_trace *t, const struct line_head *h, const char *line, size_t len)
{
	uint64_t pfn, order, mt;
	if (!get_num(h->args, h->end, "pfn=", &pfn) ||
	    !get_num(h->args, h->end, "order=", &order) ||
	    !get_num(h->args, h->end, "migratetype=", &mt) || order > 40 || pfn > UINT32_MAX)
		return parse_fail(t, line, len, "mm_page_alloc without pfn, order or migratetype");
	const char *g = field(h->args, h->end, "gfp_flags=");
	if (!g)
		return parse_fail(t, line, len, "mm_page_alloc without gfp_flags");
	const char *gend = g;
	while (gend < h->end && *gend != ' ' && *gend != '\n' && *gend != '\r')
		gend++;
	pa_gfp_t gfp;
	char bad[80];
	if (rp_parse_gfp(g, (size_t)(gend - g), &gfp, bad, sizeof bad)) {
		char why[128];
		snprintf(why, sizeof why, "unknown gfp flag '%s'", bad);
		return parse_fail(t, line, len, why);
	}
	/* The migratetype field is what the kernel used: it wins over the flag names. */
	gfp &= ~(PA_GFP_MOVABLE | PA_GFP_RECLAIMABLE);
	if (mt == 1)
		gfp |= PA_GFP_MOVABLE;
	else if (mt == 2)
		gfp |= PA_GFP_RECLAIMABLE;
	struct rp_event *e = push(t);
	if (!e)
		return parse_fail(t, line, len, "out of memory");
	e->type = pfn ? RP_ALLOC : RP_ALLOC_FAILED;
	e->pfn = (uint32_t)pfn;
	e->order = (uint8_t)order;
	e->mt = (uint8_t)mt;
	e->arg = gfp;
	if (pfn) {
		note_pfn(t, pfn, (unsigned)order);
		note_block(t, pfn, order, false);
	}
	return 0;
}

/* The index of the compaction run the task is in, or -1. */
static int run_find(const struct rp_trace *t, uint32_t pid)
{
	for (unsigned i = 0; i < t->nr_runs; i++)
		if (t->run[i].pid == pid)
			return (int)i;
	return -1;
}

/*
 * Follow each task's compaction runs: a run is mm_compaction_begin .. _end;
 * it migrates from an mm_compaction_isolate_migratepages that took pages to
 * the mm_compaction_migratepages that follows. Events in interrupts are not
 * the task's.
 */
static void note_run(struct rp_trace *t, int id, const struct line_head *h)
{
	uint64_t taken;
	if (h->irq)
		return;
	int i = run_find(t, h->pid);
	if (id == RPN_COMPACTION_BEGIN && i < 0 && t->nr_runs < RP_MAX_RUNS)
		i = (int)t->nr_runs++;
	if (id == RPN_COMPACTION_BEGIN && i >= 0) /* a begin without an end starts over */
		t->run[i].pid = h->pid, t->run[i].migrating = false;
	else if (id == RPN_COMPACTION_ISOLATE_MIGRATEPAGES && i >= 0)
		t->run[i].migrating = get_num(h->args, h->end, "nr_taken=", &taken) && taken;
	else if (id == RPN_COMPACTION_MIGRATEPAGES && i >= 0)
		t->run[i].migrating = false;
	else if (id == RPN_COMPACTION_END && i >= 0)
		t->run[i] = t->run[--t->nr_runs];
}

static enum rp_free_kind free_kind(const struct rp_trace *t, const struct line_head *h)
{
	int i = h->irq ? -1 : run_find(t, h->pid);
	if (i < 0)
		return RP_FREE_PLAIN;
	return t->run[i].migrating ? RP_FREE_MIGRATED : RP_FREE_UNUSED;
}

static int parse_free(struct rp_trace *t, const struct line_head *h, const char *line, size_t len)
{
	uint64_t pfn, order;
	if (!get_num(h->args, h->end, "pfn=", &pfn) ||
	    !get_num(h->args, h->end, "order=", &order) || order > 40 || pfn > UINT32_MAX)
		return parse_fail(t, line, len, "mm_page_free without pfn or order");
	struct rp_event *e = push(t);
	if (!e)
		return parse_fail(t, line, len, "out of memory");
	e->type = RP_FREE;
	e->pfn = (uint32_t)pfn;
	e->order = (uint8_t)order;
	e->arg = free_kind(t, h) | (in_buddy(t, pfn) ? RP_FREE_FROM_BUDDY : 0);
	note_pfn(t, pfn, (unsigned)order);
	note_block(t, pfn, order, false);
	return 0;
}

static int parse_mark(struct rp_trace *t, const struct line_head *h)
{
	const char *s = h->args;
	while (s < h->end && *s == ' ')
		s++;
	const char *e = h->end;
	while (e > s && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' '))
		e--;
	char **marks = realloc(t->marks, (t->nr_marks + 1) * sizeof *marks);
	char *text = strndup(s, (size_t)(e - s));
	struct rp_event *ev = push(t);
	if (!marks || !text || !ev) {
		free(text);
		if (marks)
			t->marks = marks;
		return -1;
	}
	t->marks = marks;
	ev->type = RP_MARK;
	ev->arg = t->nr_marks;
	t->marks[t->nr_marks++] = text;
	return 0;
}

/*
 * A compaction run that is neither direct (the task asked for a page) nor
 * kcompactd's is a write to /proc/sys/vm/compact_memory: one synchronous run
 * per zone from the lowest up. kcompactd's runs between its sleep and a
 * wake for an order answer that order (RP_KCOMPACTD); a sweep of it
 * without a wake is its proactive compaction (compact_node(), on its
 * timer, which the trace does not show). The first zone of a sweep starts it.
 */
static int parse_compaction_begin(struct rp_trace *t, const struct line_head *h)
{
	static const char kcompactd[] = "kcompactd"; /* then the node: "kcompactd0" */
	size_t n = sizeof kcompactd - 1;
	uint64_t start;
	if (!field(h->args, h->end, "mode=sync") ||
	    !get_num(h->args, h->end, "zone_start=", &start))
		return 0;
	bool daemon = h->task_len >= n && memcmp(h->task, kcompactd, n) == 0;
	if ((daemon && t->kcompactd_woken) || h->pid == t->direct_pid)
		return 0;
	bool new_sweep = h->pid != t->sweep_pid || start <= t->sweep_start;
	t->sweep_pid = h->pid;
	t->sweep_start = start;
	if (!new_sweep)
		return 0;
	struct rp_event *e = push(t);
	if (!e)
		return -1;
	e->type = daemon ? RP_PROACTIVE : RP_COMPACT_MEMORY;
	e->arg = daemon ? (uint32_t)strtoul(h->task + n, NULL, 10) : 0;
	return 0;
}

static int parse_isolate_free(struct rp_trace *t, const struct line_head *h)
{
	uint64_t start, end, taken;
	const char *r = field(h->args, h->end, "range=(");
	if (!r || !get_num(h->args, h->end, "nr_taken=", &taken) || !taken)
		return 0;
	char *e;
	start = strtoull(r, &e, 0);
	const char *tilde = memchr(e, '~', (size_t)(h->end - e));
	if (!tilde)
		return 0;
	end = strtoull(tilde + 1, NULL, 0);
	struct rp_event *ev = push(t);
	if (!ev)
		return -1;
	ev->type = RP_ISOLATE_FREE;
	ev->pfn = (uint32_t)start;
	ev->arg = (uint32_t)end;
	return 0;
}

/*
 * A drain shows as a run of mm_page_pcpu_drain lines of the task that
 * drains, right after what made it drain; a run after a free is a spill,
 * which pagealloc's lists do by their own rules. A run of a per-CPU
 * kworker ("kworker/1:1") that starts the CPU's lines afresh (not after its
 * own free) is the vmstat worker's decay of that CPU's high (Linux 6.7's
 * decay_pcp_high()): it shows when the worker ran there.
 */
static bool decay_run(const struct rp_trace *t, int id, const struct line_head *h)
{
	static const char kworker[] = "kworker/"; /* then the CPU ("kworker/u4:1" is unbound) */
	size_t n = sizeof kworker - 1;
	if (id != RPN_MM_PAGE_PCPU_DRAIN || h->cpu >= RP_MAX_CPUS || h->task_len <= n ||
	    memcmp(h->task, kworker, n) || h->task[n] < '0' || h->task[n] > '9')
		return false;
	int last = t->last_id[h->cpu];
	return t->last_pid[h->cpu] != h->pid ||
	       (last != RPN_MM_PAGE_PCPU_DRAIN && last != RPN_MM_PAGE_FREE &&
	        last != RPN_MM_PAGE_FREE_BATCHED);
}

static int note_drain(struct rp_trace *t, int id, const struct line_head *h)
{
	bool after_drain_cause = t->drain_pending && h->pid == t->drain_pid;
	if (after_drain_cause)
		t->drain_pending = false;
	if (id == RPN_VMSCAN_DIRECT_END || id == RPN_COMPACTION_MIGRATEPAGES ||
	    id == RPN_COMPACTION_ISOLATE_MIGRATEPAGES || id == RPN_COMPACTION_END) {
		t->drain_pending = true;
		t->drain_pid = h->pid;
		t->drain_kind = id == RPN_VMSCAN_DIRECT_END ? RP_DRAIN_ALL : RP_DRAIN_LOCAL;
	}
	bool decay = !after_drain_cause && decay_run(t, id, h);
	if (h->cpu < RP_MAX_CPUS) {
		t->last_pid[h->cpu] = h->pid;
		t->last_id[h->cpu] = (uint8_t)id;
	}
	if (!decay && (!after_drain_cause || id != RPN_MM_PAGE_PCPU_DRAIN))
		return 0;
	struct rp_event *e = push(t);
	if (!e)
		return -1;
	e->type = decay ? RP_DECAY : RP_DRAIN;
	e->arg = decay ? 0 : t->drain_kind;
	uint64_t pfn = 0; /* a local drain empties one zone's lists: the one of its first page */
	get_num(h->args, h->end, "pfn=", &pfn);
	e->pfn = (uint32_t)pfn;
	return 0;
}

/* kswapd's passes (run.c's on_reclaim() reads them). */
static int parse_reclaim(struct rp_trace *t, int id, const struct line_head *h)
{
	uint64_t nid = 0;
	get_num(h->args, h->end, "nid=", &nid);
	struct rp_event *e = push(t);
	if (!e)
		return -1;
	e->type = RP_RECLAIM;
	e->pfn = (uint32_t)nid;
	bool balance = id == RPN_VMSCAN_BALANCE_BEGIN || id == RPN_VMSCAN_BALANCE_END;
	t->balance_seen |= balance;
	if (!t->balance_seen) {
		/* The pass before ended after kswapd's last line; this wake begins the next. */
		if (t->pass_open) {
			t->idle_pending = true;
			t->idle_at = t->kswapd_last;
		}
		t->pass_open = id == RPN_VMSCAN_KSWAPD_WAKE;
		if (t->pass_open)
			t->kswapd_pid = h->pid;
	}
	e->arg = id == RPN_VMSCAN_BALANCE_BEGIN ? RP_RECLAIM_BEGIN :
	         id == RPN_VMSCAN_BALANCE_END   ? RP_RECLAIM_END :
	         id == RPN_VMSCAN_KSWAPD_WAKE   ? RP_RECLAIM_WAKE :
	                                          RP_RECLAIM_SLEEP;
	return 0;
}

/*
 * A per-CPU refill (rmqueue_bulk()) is a run of the CPU's
 * mm_page_alloc_zone_locked lines with percpu_refill=1, one per page, and
 * the kernel refills a list only when it is empty: an RP_REFILL event says
 * so (arg: the run's lines). A run of one may be an allocation that went
 * past the lists (percpu_refill only says the order and type could use
 * them). The first refill of each list also marks where its starting stock
 * ran out.
 */
static int note_refill(struct rp_trace *t, const struct line_head *h)
{
	uint64_t order, mt, refill, pfn;
	if (!get_num(h->args, h->end, "pfn=", &pfn) || pfn > UINT32_MAX ||
	    !get_num(h->args, h->end, "order=", &order))
		return 0;
	note_block(t, pfn, order, false); /* the buddy's: no list held it */
	if (h->cpu >= RP_MAX_CPUS || order >= RP_PCP_ORDERS ||
	    !get_num(h->args, h->end, "migratetype=", &mt) || mt >= RP_PCP_TYPES ||
	    !get_num(h->args, h->end, "percpu_refill=", &refill) || !refill)
		return 0;
	uint32_t open = t->refill_run[h->cpu];
	if (open && t->ev[open - 1].order == order && t->ev[open - 1].mt == mt) {
		t->ev[open - 1].arg++;
		return 0;
	}
	if (push_block(t, RP_REFILL, pfn, order, mt))
		return -1;
	t->ev[t->nr - 1].arg = 1;
	t->refill_run[h->cpu] = (uint32_t)t->nr;
	return 0;
}

/*
 * A fallback (mm_page_alloc_extfrag): the free block it took from and the
 * type that block's pageblocks had, for the starting state.
 */
static int parse_extfrag(struct rp_trace *t, const struct line_head *h)
{
	uint64_t pfn, mt, order;
	if (!get_num(h->args, h->end, "pfn=", &pfn) || pfn > UINT32_MAX ||
	    !get_num(h->args, h->end, "fallback_order=", &order) || order > 40 ||
	    !get_num(h->args, h->end, "fallback_migratetype=", &mt) || mt >= RP_NR_MT)
		return 0;
	/* The fallback's block: what its allocation does not take stays free, in the buddy. */
	note_block(t, pfn, order, true);
	return push_block(t, RP_EXTFRAG, pfn, order, mt);
}

static int parse_event(struct rp_trace *t, int id, const struct line_head *h, const char *line,
                       size_t len)
{
	if (note_drain(t, id, h))
		return -1;
	note_run(t, id, h);
	if (id != RPN_MM_PAGE_ALLOC_ZONE_LOCKED && h->cpu < RP_MAX_CPUS)
		t->refill_run[h->cpu] = 0; /* the CPU's refill, if any, is over */
	switch (id) {
	case RPN_MM_PAGE_ALLOC: {
		bool compacted = h->pid == t->direct_pid && t->direct_pid && t->direct_ran;
		if (compacted)
			t->direct_pid = 0; /* its direct compaction, if any, is over */
		if (parse_alloc(t, h, line, len))
			return -1;
		if (compacted)
			t->ev[t->nr - 1].arg |= RP_ALLOC_COMPACTED | (uint32_t)t->direct_prio
			                                                     << RP_ALLOC_PRIO_SHIFT;
		return 0;
	}
	case RPN_VMSCAN_KSWAPD_WAKE:
	case RPN_VMSCAN_BALANCE_BEGIN:
	case RPN_VMSCAN_BALANCE_END:
	case RPN_VMSCAN_KSWAPD_SLEEP:
		return parse_reclaim(t, id, h);
	case RPN_MM_PAGE_FREE:
		return parse_free(t, h, line, len);
	case RPN_MM_PAGE_ALLOC_ZONE_LOCKED:
		return note_refill(t, h);
	case RPN_MM_PAGE_ALLOC_EXTFRAG:
		return parse_extfrag(t, h);
	case RPN_MM_PAGE_PCPU_DRAIN:
		return parse_drained(t, h);
	case RPN_MARK:
		return parse_mark(t, h);
	case RPN_COMPACTION_TRY: {
		uint64_t prio = 0; /* without the field: as hard as Linux may go */
		get_num(h->args, h->end, "priority=", &prio);
		if (h->pid != t->direct_pid)
			t->direct_prio = 2;
		t->direct_pid = h->pid;
		t->direct_ran = false; /* deferred or unsuitable until a run begins */
		t->try_prio = prio < 2 ? (uint8_t)prio : 2;
		return 0;
	}
	case RPN_COMPACTION_BEGIN:
		if (h->pid == t->direct_pid && t->direct_pid) {
			t->direct_ran = true;
			if (t->try_prio < t->direct_prio)
				t->direct_prio = t->try_prio;
		}
		return parse_compaction_begin(t, h);
	case RPN_COMPACTION_ISOLATE_FREEPAGES:
		return parse_isolate_free(t, h);
	case RPN_COMPACTION_KCOMPACTD_SLEEP:
		t->kcompactd_woken = false;
		return 0;
	case RPN_COMPACTION_KCOMPACTD_WAKE: {
		uint64_t nid = 0, order = 0;
		get_num(h->args, h->end, "nid=", &nid);
		get_num(h->args, h->end, "order=", &order);
		struct rp_event *e = push(t);
		if (!e)
			return -1;
		e->type = RP_KCOMPACTD;
		e->arg = (uint32_t)nid;
		e->order = order < 255 ? (uint8_t)order : 255; /* what it woke for */
		t->kcompactd_woken = true;
		return 0;
	}
	default:
		return 0; /* counted by name only */
	}
}

static void parse_header_line(struct rp_trace *t, const char *line, const char *end)
{
	const char *p = memmem(line, (size_t)(end - line), "#P:", 3);
	if (p)
		t->nr_cpus = (unsigned)strtoul(p + 3, NULL, 10);
}

/* The end of kswapd's last pass, moved in after its last line (RP_RECLAIM_IDLE). */
static int insert_idle(struct rp_trace *t)
{
	t->idle_pending = false;
	size_t at = t->idle_at < t->nr ? t->idle_at : t->nr;
	if (!push(t))
		return -1;
	memmove(&t->ev[at + 1], &t->ev[at], (t->nr - 1 - at) * sizeof *t->ev);
	for (unsigned cpu = 0; cpu < RP_MAX_CPUS; cpu++)
		if (t->refill_run[cpu] > at) /* an open run moved up with the events after `at` */
			t->refill_run[cpu]++;
	const struct rp_event *before = at ? &t->ev[at - 1] : &t->ev[at + 1];
	t->ev[at] = (struct rp_event){ .type = RP_RECLAIM,
		                       .arg = RP_RECLAIM_IDLE,
		                       .ts_ns = before->ts_ns,
		                       .cpu = before->cpu };
	return 0;
}

int rp_parse_line(struct rp_trace *t, const char *line, size_t len)
{
	const char *end = line + len;
	t->lines++;
	if (len == 0)
		return 0;
	if (line[0] == '#') {
		parse_header_line(t, line, end);
		return 0;
	}
	struct line_head h;
	if (!parse_head(line, end, &h))
		return parse_fail(t, line, len, "not an ftrace event line");
	int id = lookup_name(h.name, h.name_len);
	if (id < 0)
		return parse_fail(t, line, len, "an event the replay does not know");
	t->per_name[id]++;
	if (!t->first_ts_ns)
		t->first_ts_ns = h.ts_ns;
	size_t before = t->nr;
	if (parse_event(t, id, &h, line, len))
		return -1;
	for (size_t i = before; i < t->nr; i++) {
		t->ev[i].ts_ns = h.ts_ns;
		t->ev[i].cpu = (uint8_t)(h.cpu < 255 ? h.cpu : 255);
	}
	if (t->idle_pending && insert_idle(t))
		return -1;
	if (t->kswapd_pid && h.pid == t->kswapd_pid && !h.irq)
		t->kswapd_last = t->nr;
	if (h.cpu >= t->cpus_seen)
		t->cpus_seen = h.cpu + 1;
	return 0;
}

void rp_trace_free(struct rp_trace *t)
{
	free(t->named);
	free(t->buddy);
	if (t->map)
		munmap(t->map, t->map_len);
	else
		free(t->ev);
	for (unsigned i = 0; i < t->nr_marks; i++)
		free(t->marks[i]);
	free(t->marks);
	memset(t, 0, sizeof *t);
}

/* ---------------------------------------------------------------------- */
/* Input: plain, xz, gzip                                                  */
/* ---------------------------------------------------------------------- */

enum { IN_PLAIN, IN_XZ, IN_GZ };

struct input {
	FILE *f;
	int kind;
	lzma_stream xz;
	z_stream gz;
	uint8_t raw[1 << 16];
	size_t raw_len;
	bool eof;
	uint64_t raw_read; /* compressed bytes read, for progress */
};

/*
 * A file of several xz blocks (pagealloc record writes them) decodes on
 * every CPU; a file of one block decodes as before, in one thread.
 */
static lzma_ret xz_decoder(lzma_stream *xz)
{
#if LZMA_VERSION >= 50040002
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	lzma_mt mt = {
		.flags = LZMA_CONCATENATED,
		.threads = cpus > 1 ? (uint32_t)(cpus < 8 ? cpus : 8) : 1,
		.memlimit_threading = 128ull << 20, /* larger blocks: one thread, as before */
		.memlimit_stop = UINT64_MAX,
	};
	if (mt.threads > 1)
		return lzma_stream_decoder_mt(xz, &mt);
#endif
	return lzma_stream_decoder(xz, UINT64_MAX, LZMA_CONCATENATED);
}

static int input_open(struct input *in, const char *path)
{
	memset(in, 0, sizeof *in);
	in->f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	if (!in->f) {
		fprintf(stderr, "pagealloc replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	in->raw_len = fread(in->raw, 1, sizeof in->raw, in->f);
	in->raw_read = in->raw_len;
	static const uint8_t xz_magic[6] = { 0xfd, '7', 'z', 'X', 'Z', 0 };
	if (in->raw_len >= 6 && memcmp(in->raw, xz_magic, 6) == 0) {
		in->kind = IN_XZ;
		lzma_stream init = LZMA_STREAM_INIT;
		in->xz = init;
		if (xz_decoder(&in->xz) != LZMA_OK) {
			fprintf(stderr, "pagealloc replay: %s: cannot start the xz decoder\n",
			        path);
			return -1;
		}
		in->xz.next_in = in->raw;
		in->xz.avail_in = in->raw_len;
	} else if (in->raw_len >= 2 && in->raw[0] == 0x1f && in->raw[1] == 0x8b) {
		in->kind = IN_GZ;
		if (inflateInit2(&in->gz, 15 + 32) != Z_OK) {
			fprintf(stderr, "pagealloc replay: %s: cannot start the gzip decoder\n",
			        path);
			return -1;
		}
		in->gz.next_in = in->raw;
		in->gz.avail_in = (uInt)in->raw_len;
	}
	return 0;
}

static void refill_raw(struct input *in)
{
	in->raw_len = fread(in->raw, 1, sizeof in->raw, in->f);
	in->raw_read += in->raw_len;
}

/* Up to cap bytes of text into buf; 0 at the end, -1 on a damaged stream. */
static ssize_t input_read(struct input *in, char *buf, size_t cap, const char *path)
{
	if (in->kind == IN_PLAIN) {
		size_t n = 0;
		if (in->raw_len) {
			n = in->raw_len < cap ? in->raw_len : cap;
			memcpy(buf, in->raw, n);
			memmove(in->raw, in->raw + n, in->raw_len - n);
			in->raw_len -= n;
			return (ssize_t)n;
		}
		n = fread(buf, 1, cap, in->f);
		in->raw_read += n;
		return (ssize_t)n;
	}
	if (in->kind == IN_XZ) {
		in->xz.next_out = (uint8_t *)buf;
		in->xz.avail_out = cap;
		while (in->xz.avail_out == cap) {
			if (in->xz.avail_in == 0 && !feof(in->f)) {
				refill_raw(in);
				in->xz.next_in = in->raw;
				in->xz.avail_in = in->raw_len;
			}
			lzma_ret r = lzma_code(
			        &in->xz, feof(in->f) && !in->xz.avail_in ? LZMA_FINISH : LZMA_RUN);
			if (r == LZMA_STREAM_END)
				break;
			if (r != LZMA_OK) {
				fprintf(stderr, "pagealloc replay: %s: damaged xz data (%d)\n",
				        path, (int)r);
				return -1;
			}
		}
		return (ssize_t)(cap - in->xz.avail_out);
	}
	in->gz.next_out = (Bytef *)buf;
	in->gz.avail_out = (uInt)cap;
	while (in->gz.avail_out == cap) {
		if (in->gz.avail_in == 0) {
			if (feof(in->f))
				break;
			refill_raw(in);
			in->gz.next_in = in->raw;
			in->gz.avail_in = (uInt)in->raw_len;
		}
		int r = inflate(&in->gz, Z_NO_FLUSH);
		if (r == Z_STREAM_END) {
			if (in->gz.avail_in == 0 && feof(in->f))
				break;
			inflateReset(&in->gz); /* concatenated members, as gzip writes them */
			continue;
		}
		if (r != Z_OK && r != Z_BUF_ERROR) {
			fprintf(stderr, "pagealloc replay: %s: damaged gzip data (%d)\n", path, r);
			return -1;
		}
	}
	return (ssize_t)(cap - in->gz.avail_out);
}

static void input_close(struct input *in)
{
	if (in->kind == IN_XZ)
		lzma_end(&in->xz);
	else if (in->kind == IN_GZ)
		inflateEnd(&in->gz);
	if (in->f && in->f != stdin)
		fclose(in->f);
}

/* Split the text into lines; a partial last line stays at the front of buf. */
static size_t parse_lines(struct rp_trace *t, char *buf, size_t len)
{
	char *s = buf, *end = buf + len;
	for (;;) {
		char *nl = memchr(s, '\n', (size_t)(end - s));
		if (!nl)
			break;
		rp_parse_line(t, s, (size_t)(nl - s));
		s = nl + 1;
	}
	size_t rest = (size_t)(end - s);
	memmove(buf, s, rest);
	return rest;
}

/*
 * Decompression runs in a thread of its own, a few chunks ahead of the
 * parser: xz decoding is the slowest step of a replay (about 1 s of the
 * 7.2 recording's 1.5 s), and the parser's work then fits beside it. A
 * chunk carries how far into the file it was read, for the progress line.
 */
enum { READER_SLOTS = 4, READER_CHUNK = 1 << 20 };

struct reader {
	struct input in;
	const char *path;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char *data[READER_SLOTS];
	size_t len[READER_SLOTS];
	uint64_t raw_read[READER_SLOTS];
	unsigned head, count; /* filled slots: head .. head + count - 1 */
	bool done, failed, stop;
};

static void *reader_thread(void *arg)
{
	struct reader *r = arg;
	for (;;) {
		pthread_mutex_lock(&r->mu);
		while (r->count == READER_SLOTS && !r->stop)
			pthread_cond_wait(&r->cv, &r->mu);
		unsigned slot = (r->head + r->count) % READER_SLOTS;
		bool stop = r->stop;
		pthread_mutex_unlock(&r->mu);
		ssize_t n = stop ? 0 : input_read(&r->in, r->data[slot], READER_CHUNK, r->path);
		pthread_mutex_lock(&r->mu);
		if (n > 0) {
			r->len[slot] = (size_t)n;
			r->raw_read[slot] = r->in.raw_read;
			r->count++;
		} else {
			r->done = true;
			r->failed = n < 0;
		}
		pthread_cond_broadcast(&r->cv);
		pthread_mutex_unlock(&r->mu);
		if (n <= 0)
			return NULL;
	}
}

/* The next chunk into dst (room for READER_CHUNK); its length, 0 at the end, -1 on an error. */
static ssize_t reader_next(struct reader *r, char *dst, uint64_t *raw_read)
{
	pthread_mutex_lock(&r->mu);
	while (r->count == 0 && !r->done)
		pthread_cond_wait(&r->cv, &r->mu);
	ssize_t n = r->failed ? -1 : 0;
	if (r->count) {
		unsigned slot = r->head;
		pthread_mutex_unlock(&r->mu);
		memcpy(dst, r->data[slot], r->len[slot]); /* the slot stays ours until head moves */
		pthread_mutex_lock(&r->mu);
		n = (ssize_t)r->len[slot];
		*raw_read = r->raw_read[slot];
		r->head = (r->head + 1) % READER_SLOTS;
		r->count--;
		pthread_cond_broadcast(&r->cv);
	}
	pthread_mutex_unlock(&r->mu);
	return n;
}

static void reader_stop(struct reader *r, pthread_t th)
{
	pthread_mutex_lock(&r->mu);
	r->stop = true;
	r->count = 0;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	pthread_join(th, NULL);
}

/* Parse the text chunk by chunk as the reader thread delivers it. */
static int parse_from(struct reader *r, struct rp_trace *t, rp_progress_fn progress, double size)
{
	size_t cap = 2 * READER_CHUNK, len = 0;
	char *buf = malloc(cap + 1);
	int rc = buf ? 0 : -1;
	uint64_t raw_read = 0;
	while (rc == 0) {
		if (cap - len < READER_CHUNK) { /* a line longer than a chunk: not a trace */
			fprintf(stderr, "pagealloc replay: %s: a line longer than 1 MB\n", r->path);
			rc = -1;
			break;
		}
		ssize_t n = reader_next(r, buf + len, &raw_read);
		if (n < 0)
			rc = -1;
		if (n <= 0)
			break;
		len = parse_lines(t, buf, len + (size_t)n);
		if (progress)
			progress("parsing the trace", size > 0 ? (double)raw_read / size : 0);
	}
	if (rc == 0 && len)
		rp_parse_line(t, buf, len);
	free(buf);
	return rc;
}

int rp_trace_read(const char *path, struct rp_trace *t, rp_progress_fn progress)
{
	struct reader r = { .path = path };
	memset(t, 0, sizeof *t);
	if (rp_cache_load(path, t) == 0)
		return 0;
	if (input_open(&r.in, path))
		return -1;
	struct stat sb;
	double size = strcmp(path, "-") && stat(path, &sb) == 0 ? (double)sb.st_size : 0;
	int rc = 0;
	for (unsigned i = 0; i < READER_SLOTS; i++)
		if (!(r.data[i] = malloc(READER_CHUNK)))
			rc = -1;
	pthread_t th;
	pthread_mutex_init(&r.mu, NULL);
	pthread_cond_init(&r.cv, NULL);
	if (rc == 0 && pthread_create(&th, NULL, reader_thread, &r) != 0)
		rc = -1;
	if (rc == 0) {
		rc = parse_from(&r, t, progress, size);
		reader_stop(&r, th);
	}
	pthread_mutex_destroy(&r.mu);
	pthread_cond_destroy(&r.cv);
	for (unsigned i = 0; i < READER_SLOTS; i++)
		free(r.data[i]);
	input_close(&r.in);
	if (t->nr_cpus < t->cpus_seen)
		t->nr_cpus = t->cpus_seen;
	free(t->named); /* the parser's alone */
	free(t->buddy);
	t->named = t->buddy = NULL;
	t->named_bits = 0;
	if (rc == 0 && t->lines - t->unparsed == 0) {
		fprintf(stderr, "pagealloc replay: %s: no ftrace events%s%s\n", path,
		        t->err[0] ? ": " : "", t->err);
		rc = -1;
	}
	if (rc == 0)
		rp_cache_store(path, t);
	return rc;
}
