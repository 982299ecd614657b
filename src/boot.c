/* SPDX-License-Identifier: MIT */
/*
 * Boot: parse and validate the kernel-style command line, derive the
 * configuration (huge order, pageblock order, section size), and bring a pool
 * up layer by layer. Every error names the key and the value and says what
 * would be valid; nothing is left allocated after a failed boot.
 */
#include "boot.h"

#include "platform/platform.h"
#include "compaction.h"
#include "deferred.h"
#include "device.h"
#include "hotplug.h"
#include "isolation.h"
#include "linux.h"
#include "memmap.h"
#include "pcp.h"
#include "reporting.h"
#include "shuffle.h"
#include "superblock.h"
#include "zone.h"

#include <stdarg.h>

#define KEY_MAX 64
#define VAL_MAX 512

struct parse_ctx {
	struct pa_boot_config *cfg;
	const char *key;
	const char *val;
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 2, 3))) static int fail(struct parse_ctx *p, const char *fmt, ...)
{
	if (p->err && p->errlen) {
		int n = pa_snprintf(p->err, p->errlen, "%s=%s: ", p->key, p->val);
		if (n >= 0 && (size_t)n < p->errlen) {
			va_list ap;
			va_start(ap, fmt);
			pa_vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
			va_end(ap);
		}
	}
	return -EINVAL;
}

/*
 * Decimal digits and nothing before them: no sign, no 0x, and no leading
 * zero, which C (and Linux's memparse) would read as octal.
 */
static bool decimal_start(const char *s)
{
	return s[0] >= '0' && s[0] <= '9' && !(s[0] == '0' && s[1] >= '0' && s[1] <= '9');
}

/* A decimal number with an optional K/M/G/T suffix; false on any junk or overflow. */
static bool parse_size(const char *s, uint64_t *out)
{
	const char *end;
	bool overflow;
	if (!decimal_start(s))
		return false;
	uint64_t v = pa_parse_u64(s, &end, &overflow);
	if (overflow)
		return false;
	unsigned shift = 0;
	switch (*end) {
	case 'K':
	case 'k':
		shift = 10;
		end++;
		break;
	case 'M':
	case 'm':
		shift = 20;
		end++;
		break;
	case 'G':
	case 'g':
		shift = 30;
		end++;
		break;
	case 'T':
	case 't':
		shift = 40;
		end++;
		break;
	default:
		break;
	}
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return false;
	*out = (uint64_t)v << shift;
	return true;
}

static bool parse_int(const char *s, int64_t *out)
{
	const char *end;
	bool overflow, neg = s[0] == '-';
	if (!decimal_start(neg ? s + 1 : s))
		return false;
	uint64_t mag = pa_parse_u64(neg ? s + 1 : s, &end, &overflow);
	if (overflow || *end || mag > (uint64_t)INT64_MAX + neg)
		return false;
	*out = neg ? (int64_t)(0 - mag) : (int64_t)mag;
	return true;
}

static int get_uint(struct parse_ctx *p, int64_t lo, int64_t hi, unsigned *out)
{
	int64_t v;
	if (!parse_int(p->val, &v))
		return fail(p, "not a decimal number (valid: %lld..%lld)", (long long)lo,
		            (long long)hi);
	if (v < lo || v > hi)
		return fail(p, "out of range (valid: %lld..%lld)", (long long)lo, (long long)hi);
	*out = (unsigned)v;
	return 0;
}

static int get_bool(struct parse_ctx *p, bool *out)
{
	unsigned v = 0; /* get_uint sets it only on success; -O3 cannot tell */
	int rc = get_uint(p, 0, 1, &v);
	if (rc == 0)
		*out = v != 0;
	return rc;
}

static int get_size(struct parse_ctx *p, uint64_t *out)
{
	if (!parse_size(p->val, out))
		return fail(p, "not a size (valid: a decimal number below 2^64 bytes, no leading "
		               "zero, with an optional K, M, G or T suffix)");
	return 0;
}

static int key_mem(struct parse_ctx *p)
{
	pa_snprintf(p->cfg->mem_arg, sizeof p->cfg->mem_arg, "%s", p->val);
	int rc = get_size(p, &p->cfg->mem);
	if (rc == 0 && p->cfg->mem == 0)
		return fail(p, "memory size must be above zero");
	return rc;
}

static int key_numa(struct parse_ctx *p)
{
	return get_uint(p, 1, PA_MAX_NODES, &p->cfg->numa);
}

static int get_range(struct parse_ctx *p, struct pa_range *r, const char *example);

/* A hole, or (reserved) memory the pool leaves out of the buddy: both are holes to it. */
static int add_hole(struct parse_ctx *p, bool reserved, const char *example)
{
	struct pa_boot_config *c = p->cfg;
	struct pa_range r = { 0 };
	int rc = get_range(p, &r, example);
	if (rc)
		return rc;
	if (c->nr_holes == PA_MAX_HOLES)
		return fail(p, "too many memhole= and memreserve= ranges (at most %d)",
		            PA_MAX_HOLES);
	r.reserved = reserved;
	c->holes[c->nr_holes++] = r;
	return 0;
}

static int key_memhole(struct parse_ctx *p)
{
	return add_hole(p, false, "memhole=1G-2G");
}

/*
 * Memory that is there but never the buddy's: Linux's boot-time
 * reservations (the kernel image, the frame descriptors, firmware tables).
 * It counts in the zone's present frames, not in its managed ones, so the
 * watermarks and lowmem reserves come out as the kernel's; to every path
 * of the pool it is a hole.
 */
static int key_memreserve(struct parse_ctx *p)
{
	return add_hole(p, true, "memreserve=16M-64M");
}

static int key_movablecore(struct parse_ctx *p)
{
	pa_snprintf(p->cfg->movablecore_arg, sizeof p->cfg->movablecore_arg, "%s", p->val);
	size_t n = pa_strlen(p->val);
	if (n && p->val[n - 1] == '%') {
		char buf[32];
		int64_t v;
		pa_snprintf(buf, sizeof buf, "%.*s", (int)(n - 1), p->val);
		if (n > sizeof buf || !parse_int(buf, &v) || v < 0 || v >= 100)
			return fail(p, "percent out of range (valid: 0%%..99%%)");
		p->cfg->movablecore_pct = (unsigned)v;
		p->cfg->movablecore_bytes = 0;
		return 0;
	}
	p->cfg->movablecore_pct = 0;
	return get_size(p, &p->cfg->movablecore_bytes);
}

static int key_page_shift(struct parse_ctx *p)
{
	unsigned v = 0;
	int rc = get_uint(p, 12, 16, &v);
	if (rc)
		return rc;
	if (v != 12 && v != 14 && v != 16)
		return fail(p, "unsupported page size (valid: 12, 14 or 16)");
	p->cfg->page_shift = v;
	return 0;
}

static int key_max_order(struct parse_ctx *p)
{
	return get_uint(p, 0, PA_MAX_ORDER_LIMIT, &p->cfg->max_order);
}

static int key_pb_ceil(struct parse_ctx *p)
{
	return get_uint(p, 1, PA_MAX_ORDER_LIMIT, &p->cfg->pageblock_order_ceil);
}

static int key_thp(struct parse_ctx *p)
{
	return get_bool(p, &p->cfg->thp);
}

/* "none", or a list of orders and ranges: "0-3,9". Checked against max_order later. */
static int key_pcp_orders(struct parse_ctx *p)
{
	uint64_t mask = 0;
	pa_snprintf(p->cfg->pcp_orders_arg, sizeof p->cfg->pcp_orders_arg, "%s", p->val);
	if (pa_strcmp(p->val, "none") == 0)
		goto done;
	for (const char *s = p->val; *s;) {
		const char *end;
		bool overflow;
		uint64_t lo = pa_parse_u64(s, &end, &overflow), hi = lo;
		if (end == s || lo > PA_MAX_ORDER_LIMIT)
			return fail(p, "expected orders like 0-3,9 (each 0..%d) or none",
			            PA_MAX_ORDER_LIMIT);
		if (*end == '-') {
			s = end + 1;
			hi = pa_parse_u64(s, &end, &overflow);
			if (end == s || hi < lo || hi > PA_MAX_ORDER_LIMIT)
				return fail(p, "bad order range (valid: LO-HI with LO <= HI <= %d)",
				            PA_MAX_ORDER_LIMIT);
		}
		for (uint64_t o = lo; o <= hi; o++)
			mask |= 1ull << o;
		if (*end == ',')
			end++;
		else if (*end)
			return fail(p, "unexpected '%c' (expected orders like 0-3,9)", *end);
		s = end;
	}
done:
	p->cfg->pcp_orders = mask;
	p->cfg->pcp_orders_set = true;
	return 0;
}

static int key_nr_cpus(struct parse_ctx *p)
{
	return get_uint(p, 1, PA_MAX_CPUS, &p->cfg->nr_cpus);
}

static int key_cma(struct parse_ctx *p)
{
	struct pa_boot_config *c = p->cfg;
	char buf[VAL_MAX];
	pa_snprintf(buf, sizeof buf, "%s", p->val);
	char *at = pa_strchr(buf, '@');
	struct pa_cma_request r = { .start = UINT64_MAX };
	if (at)
		*at = '\0';
	if (!parse_size(buf, &r.size) || r.size == 0 || (at && !parse_size(at + 1, &r.start)))
		return fail(p, "expected SIZE[@START] with decimal sizes like 64M");
	if (at && r.start > UINT64_MAX - r.size)
		return fail(p, "START + SIZE is past 2^64 bytes");
	if (c->nr_cma == PA_MAX_CMA)
		return fail(p, "too many CMA areas (at most %d)", PA_MAX_CMA);
	pa_snprintf(r.arg, sizeof r.arg, "%s", p->val);
	c->cma[c->nr_cma++] = r;
	return 0;
}

static int key_backing(struct parse_ctx *p)
{
	struct pa_boot_config *c = p->cfg;
	if (pa_strcmp(p->val, "none") == 0)
		c->backing = PA_BACKING_NONE;
	else if (pa_strcmp(p->val, "anon") == 0)
		c->backing = PA_BACKING_ANON;
	else if (pa_strcmp(p->val, "hugetlb") == 0)
		c->backing = PA_BACKING_HUGETLB;
	else if (pa_strcmp(p->val, "platform") == 0)
		c->backing = PA_BACKING_PLATFORM;
	else if (pa_strncmp(p->val, "file:", 5) == 0 && p->val[5]) {
		if (pa_strlen(p->val + 5) >= sizeof c->backing_path)
			return fail(p, "path too long (at most %zu bytes)",
			            sizeof c->backing_path - 1);
		c->backing = PA_BACKING_FILE;
		pa_snprintf(c->backing_path, sizeof c->backing_path, "%s", p->val + 5);
	} else
		return fail(p, "unknown backing (valid: none, anon, file:PATH, hugetlb, platform)");
	return 0;
}

static int key_backing_keep(struct parse_ctx *p)
{
	return get_bool(p, &p->cfg->backing_keep);
}

static int key_reporting_order(struct parse_ctx *p)
{
	int64_t v;
	if (!parse_int(p->val, &v) || v < -1 || v > PA_MAX_ORDER_LIMIT)
		return fail(p, "out of range (valid: -1 for the pageblock order, or 0..max_order)");
	p->cfg->page_reporting_order = (int)v;
	return 0;
}

static int key_min_free_kbytes(struct parse_ctx *p)
{
	int64_t v;
	if (!parse_int(p->val, &v) || v < 0 || v > (1ll << 40))
		return fail(p, "out of range (valid: 0..%lld)", 1ll << 40);
	p->cfg->min_free_kbytes = v;
	return 0;
}

static int key_wsf(struct parse_ctx *p)
{
	return get_uint(p, 0, 3000, &p->cfg->watermark_scale_factor);
}

static int key_wbf(struct parse_ctx *p)
{
	return get_uint(p, 0, 1000000, &p->cfg->watermark_boost_factor);
}

static int key_pcp_rules(struct parse_ctx *p)
{
	int r = pcp_rules_parse(p->val);
	if (r < 0)
		return fail(p, "unknown rules (valid: 6.7, or 6.1 for Linux 6.1's fixed high)");
	p->cfg->pcp_rules = (unsigned)r;
	p->cfg->pcp_rules_set = true;
	return 0;
}

/* linux=6.1 .. 7.2: every rule change up to that version ("linux.c"). */
static int key_linux(struct parse_ctx *p)
{
	if (linux_version_parse(p->val, true, &p->cfg->linux_version))
		return fail(p, "unknown version (valid: 6.1 .. 6.19, 7.0 .. 7.2)");
	return 0;
}

/* Checked against the version once every key is read. */
static int key_linux_defrag_mode(struct parse_ctx *p)
{
	return get_bool(p, &p->cfg->linux_defrag_mode);
}

static int key_split_folios(struct parse_ctx *p)
{
	return get_bool(p, &p->cfg->compaction_split_folios);
}
static int key_shuffle(struct parse_ctx *p)
{
	return get_bool(p, &p->cfg->shuffle);
}
static int key_init_on_free(struct parse_ctx *p)
{
	return get_bool(p, &p->cfg->init_on_free);
}
static int key_pcp_rseq(struct parse_ctx *p)
{
	return get_bool(p, &p->cfg->pcp_rseq);
}
/* 0, 1 (threads), or lazy: no threads, frames set up only as they are needed. */
static int key_deferred_init(struct parse_ctx *p)
{
	bool lazy = pa_strcmp(p->val, "lazy") == 0, on = pa_strcmp(p->val, "1") == 0;
	if (!lazy && !on && pa_strcmp(p->val, "0") != 0)
		return fail(p, "unknown mode (valid: 0, 1 or lazy)");
	p->cfg->deferred_lazy = lazy;
	p->cfg->deferred_init = lazy || on;
	return 0;
}
static int key_zone_dma(struct parse_ctx *p)
{
	return get_bool(p, &p->cfg->zone_dma);
}
static int key_zones(struct parse_ctx *p)
{
	if (pa_strcmp(p->val, "x86_64") == 0)
		p->cfg->zone_layout = PA_ZONES_X86_64;
	else if (pa_strcmp(p->val, "flat") == 0)
		p->cfg->zone_layout = PA_ZONES_FLAT;
	else
		return fail(p, "unknown layout (valid: x86_64 for DMA32 below 4G and Normal above, "
		               "or flat for one Normal zone per node)");
	return 0;
}
static int key_page_reporting(struct parse_ctx *p)
{
	if (pa_strcmp(p->val, "thread") == 0)
		p->cfg->page_reporting_manual = false;
	else if (pa_strcmp(p->val, "manual") == 0)
		p->cfg->page_reporting_manual = true;
	else
		return fail(p,
		            "unknown mode (valid: thread, or manual for pa_page_reporting_run())");
	return 0;
}

static int key_reporting_delay(struct parse_ctx *p)
{
	return get_uint(p, 0, 3600000, &p->cfg->page_reporting_delay_ms);
}

static int key_reporting_max_order(struct parse_ctx *p)
{
	int64_t v;
	if (!parse_int(p->val, &v) || v < -1 || v > PA_MAX_ORDER_LIMIT)
		return fail(p, "out of range (valid: -1 for max_order, or 0..max_order)");
	p->cfg->page_reporting_max_order = (int)v;
	return 0;
}

static int key_memory_block_size(struct parse_ctx *p)
{
	uint64_t v = 0;
	int rc = get_size(p, &v);
	if (rc)
		return rc;
	uint64_t sec = 1ull << PA_SECTION_BYTES_SHIFT;
	if (v < sec || (v & (v - 1)))
		return fail(p, "not a power of two of at least a section (valid: 128M, 256M, ...)");
	pa_snprintf(p->cfg->memory_block_arg, sizeof p->cfg->memory_block_arg, "%s", p->val);
	p->cfg->memory_block_size = v;
	return 0;
}

/* START-END as bytes into r, for memhole= and offline=. */
static int get_range(struct parse_ctx *p, struct pa_range *r, const char *example)
{
	char buf[VAL_MAX];
	pa_snprintf(buf, sizeof buf, "%s", p->val);
	char *dash = pa_strchr(buf, '-');
	if (!dash)
		return fail(p, "expected START-END (e.g. %s)", example);
	*dash = '\0';
	if (!parse_size(buf, &r->start) || !parse_size(dash + 1, &r->end))
		return fail(p, "START and END must be sizes (e.g. %s)", example);
	if (r->start >= r->end)
		return fail(p, "START must be below END");
	pa_snprintf(r->arg, sizeof r->arg, "%s", p->val);
	return 0;
}

static int key_offline(struct parse_ctx *p)
{
	struct pa_boot_config *c = p->cfg;
	struct pa_range r;
	int rc = get_range(p, &r, "offline=512M-640M");
	if (rc)
		return rc;
	if (c->nr_offline == PA_MAX_HOLES)
		return fail(p, "too many offline ranges (at most %d)", PA_MAX_HOLES);
	c->offline[c->nr_offline++] = r;
	return 0;
}

static int key_kcompactd(struct parse_ctx *p)
{
	if (pa_strcmp(p->val, "thread") == 0)
		p->cfg->kcompactd_manual = false;
	else if (pa_strcmp(p->val, "manual") == 0)
		p->cfg->kcompactd_manual = true;
	else
		return fail(p, "unknown mode (valid: thread, or manual for pa_kcompactd_run())");
	return 0;
}

static int key_proactiveness(struct parse_ctx *p)
{
	return get_uint(p, 0, 100, &p->cfg->compaction_proactiveness);
}

/* 0: off; checked against the pageblock order once that is derived. */
static int key_superblock_order(struct parse_ctx *p)
{
	return get_uint(p, 0, PA_SUPERBLOCK_ORDER_LIMIT, &p->cfg->superblock_order);
}

static int key_defrag_mode(struct parse_ctx *p)
{
	return get_bool(p, &p->cfg->defrag_mode);
}

/* Checked against the pageblock and max orders once they are derived. */
static int key_fallback_order(struct parse_ctx *p)
{
	return get_uint(p, 0, PA_MAX_ORDER_LIMIT, &p->cfg->fallback_order);
}

static int key_debug(struct parse_ctx *p)
{
	return get_uint(p, 0, 2, &p->cfg->debug);
}

static int key_bad_page(struct parse_ctx *p)
{
	if (pa_strcmp(p->val, "report") == 0)
		p->cfg->bad_page = PA_BAD_PAGE_REPORT;
	else if (pa_strcmp(p->val, "panic") == 0)
		p->cfg->bad_page = PA_BAD_PAGE_PANIC;
	else
		return fail(p, "unknown mode (valid: report or panic)");
	return 0;
}

/* The boot keys, as data. A key given twice is refused unless it adds to a list. */
static const struct boot_key {
	const char *name;
	int (*parse)(struct parse_ctx *p);
} boot_keys[] = {
	{ "mem", key_mem },
	{ "numa", key_numa },
	{ "memhole", key_memhole },
	{ "memreserve", key_memreserve },
	{ "movablecore", key_movablecore },
	{ "page_shift", key_page_shift },
	{ "max_order", key_max_order },
	{ "pageblock_order_ceil", key_pb_ceil },
	{ "page_block_max_order", key_pb_ceil },
	{ "thp", key_thp },
	{ "pcp_orders", key_pcp_orders },
	{ "pcp_rules", key_pcp_rules },
	{ "nr_cpus", key_nr_cpus },
	{ "cma", key_cma },
	{ "backing", key_backing },
	{ "backing_keep", key_backing_keep },
	{ "page_reporting_order", key_reporting_order },
	{ "memory_block_size", key_memory_block_size },
	{ "offline", key_offline },
	{ "page_reporting", key_page_reporting },
	{ "page_reporting_delay_ms", key_reporting_delay },
	{ "page_reporting_max_order", key_reporting_max_order },
	{ "min_free_kbytes", key_min_free_kbytes },
	{ "watermark_scale_factor", key_wsf },
	{ "watermark_boost_factor", key_wbf },
	{ "compaction_split_folios", key_split_folios },
	{ "compaction_proactiveness", key_proactiveness },
	{ "kcompactd", key_kcompactd },
	{ "shuffle", key_shuffle },
	{ "init_on_free", key_init_on_free },
	{ "pcp_rseq", key_pcp_rseq },
	{ "deferred_init", key_deferred_init },
	{ "zone_dma", key_zone_dma },
	{ "zones", key_zones },
	{ "superblock_order", key_superblock_order },
	{ "defrag_mode", key_defrag_mode },
	{ "linux", key_linux },
	{ "linux_defrag_mode", key_linux_defrag_mode },
	{ "fallback_order", key_fallback_order },
	{ "debug", key_debug },
	{ "bad_page", key_bad_page },
};

static void boot_defaults(struct pa_boot_config *c, unsigned online_cpus)
{
	memset(c, 0, sizeof *c);
	c->mem = 1ull << 30;
	pa_snprintf(c->mem_arg, sizeof c->mem_arg, "1G");
	c->numa = 1;
	c->page_shift = 12;
	c->max_order = UINT32_MAX;            /* by page size, once it is known */
	c->pageblock_order_ceil = UINT32_MAX; /* max_order */
	c->superblock_order = UINT32_MAX;     /* the PUD order when max_order reaches it */
	c->fallback_order = UINT32_MAX;       /* max_order */
	c->thp = true;
	c->nr_cpus = online_cpus > PA_MAX_CPUS ? PA_MAX_CPUS : online_cpus;
	c->page_reporting_order = -1;
	c->page_reporting_delay_ms = 2000;
	c->memory_block_size = 1ull << PA_SECTION_BYTES_SHIFT;
	pa_snprintf(c->memory_block_arg, sizeof c->memory_block_arg, "128M");
	c->page_reporting_max_order = -1;
	c->min_free_kbytes = -1;
	c->watermark_scale_factor = 10;
	c->watermark_boost_factor = 15000;
	c->compaction_proactiveness = 20;
	c->deferred_init = true;
	c->pcp_rseq = true;
	c->linux_version = LINUX_V_NEWEST;
}

#define NR_BOOT_KEYS (sizeof boot_keys / sizeof boot_keys[0])
_Static_assert(NR_BOOT_KEYS <= 64, "the keys seen fit in one mask");

/*
 * The key of index i (or its alias) was given before: the name it was
 * given as, or NULL when it was not or may repeat.
 */
static const char *given_before(size_t i, uint64_t seen)
{
	bool list = boot_keys[i].parse == key_memhole || boot_keys[i].parse == key_memreserve ||
	            boot_keys[i].parse == key_cma;
	for (size_t j = 0; j < NR_BOOT_KEYS && !list; j++)
		if (((seen >> j) & 1) && boot_keys[j].parse == boot_keys[i].parse)
			return boot_keys[j].name;
	return NULL;
}

static int parse_one(struct pa_boot_config *cfg, const char *tok, uint64_t *seen, char *err,
                     size_t errlen)
{
	char key[KEY_MAX];
	const char *eq = pa_strchr(tok, '=');
	struct parse_ctx p = { .cfg = cfg, .key = tok, .val = "", .err = err, .errlen = errlen };
	if (!eq) {
		pa_snprintf(err, errlen, "%s: expected key=value", tok);
		return -EINVAL;
	}
	pa_snprintf(key, sizeof key, "%.*s", (int)(eq - tok), tok);
	p.key = key;
	p.val = eq + 1;
	if (!*p.val)
		return fail(&p, "empty value");
	for (size_t i = 0; i < NR_BOOT_KEYS; i++) {
		if (pa_strcmp(key, boot_keys[i].name) != 0)
			continue;
		const char *before = given_before(i, *seen);
		if (before)
			return fail(
			        &p,
			        "%s given twice (as %s= before); only memhole=, memreserve= and "
			        "cma= may be repeated",
			        key, before);
		*seen |= 1ull << i;
		return boot_keys[i].parse(&p);
	}
	return fail(&p, "unknown boot key");
}

__attribute__((format(printf, 3, 4))) static int boot_error(char *err, size_t errlen,
                                                            const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		pa_vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Default max order by page size, as Linux's arm64/x86 configurations. */
static unsigned default_max_order(unsigned page_shift)
{
	return page_shift == 12 ? 10 : page_shift == 14 ? 11 : 13;
}

static unsigned min_u(unsigned a, unsigned b)
{
	return a < b ? a : b;
}

/*
 * Superblocks default to the PUD order (a 1 GiB region: 18 at 4 KiB pages)
 * when the buddy can form blocks that large, and are off otherwise: regions
 * the buddy can never hand out whole are not worth keeping clean. A region
 * smaller than a pageblock could not count pageblocks.
 */
static int derive_superblock_order(struct pa_boot_config *c, char *err, size_t errlen)
{
	unsigned pud = 30 - c->page_shift;
	if (c->superblock_order == UINT32_MAX)
		c->superblock_order = c->max_order >= pud ? pud : 0;
	else if (c->superblock_order && c->superblock_order < c->pageblock_order)
		return boot_error(err, errlen,
		                  "superblock_order=%u: below the pageblock order %u (valid: 0 for "
		                  "off, or %u..%u)",
		                  c->superblock_order, c->pageblock_order, c->pageblock_order,
		                  PA_SUPERBLOCK_ORDER_LIMIT);
	return 0;
}

/*
 * Linux's fallback claims the largest free block of another type whole, and
 * its blocks stop at order 10 (MAX_PAGE_ORDER): a claim retypes at most
 * 4 MiB. With a larger max_order the same rule retypes up to a whole
 * max-order block for one page; fallback_order=10 keeps mainline's reach.
 */
static int derive_fallback_order(struct pa_boot_config *c, char *err, size_t errlen)
{
	if (c->fallback_order == UINT32_MAX)
		c->fallback_order = c->max_order;
	else if (c->fallback_order < c->pageblock_order || c->fallback_order > c->max_order)
		return boot_error(
		        err, errlen,
		        "fallback_order=%u: outside the pageblock order %u .. max_order=%u",
		        c->fallback_order, c->pageblock_order, c->max_order);
	return 0;
}

/* Derive huge order, pageblock order and section size; check keys against each other. */
static int boot_derive(struct pa_boot_config *c, char *err, size_t errlen)
{
	unsigned rules = linux_rules_for(c->linux_version);
	if (!c->pcp_rules_set)
		c->pcp_rules = (rules >> LR_PCP_HIGH_TUNED) & 1 ? PCP_RULES_67 : PCP_RULES_61;
	if (c->linux_defrag_mode && !((rules >> LR_DEFRAG_MODE) & 1))
		return boot_error(
		        err, errlen,
		        "linux_defrag_mode=1: Linux has defrag_mode from 6.15 on (linux=%u.%u)",
		        c->linux_version / 100, c->linux_version % 100);
	if (c->max_order == UINT32_MAX)
		c->max_order = default_max_order(c->page_shift);
	if (c->pageblock_order_ceil == UINT32_MAX)
		c->pageblock_order_ceil = c->max_order;
	else if (c->pageblock_order_ceil > c->max_order)
		return boot_error(
		        err, errlen, "pageblock_order_ceil=%u: above max_order=%u (valid: 1..%u)",
		        c->pageblock_order_ceil, c->max_order, c->max_order ? c->max_order : 1);
	c->huge_order = c->thp ? (int)c->page_shift - 3 : -1;
	unsigned pb = min_u(c->pageblock_order_ceil, c->max_order);
	if (c->thp)
		pb = min_u(pb, (unsigned)c->huge_order);
	c->pageblock_order = pb;
	c->section_shift = PA_SECTION_BYTES_SHIFT - c->page_shift;
	c->chunk_order = c->section_shift > c->max_order ? c->section_shift : c->max_order;
	c->block_shift = (unsigned)__builtin_ctzll(c->memory_block_size) - c->page_shift;
	if (!c->pcp_orders_set) {
		c->pcp_orders = (1ull << (PA_COSTLY_ORDER + 1)) - 1;
		if (c->huge_order >= 0)
			c->pcp_orders |= 1ull << c->huge_order;
		c->pcp_orders &= (2ull << c->max_order) - 1;
	} else if (c->pcp_orders >> c->max_order >> 1)
		return boot_error(err, errlen, "pcp_orders=%s: order %d is above max_order=%u",
		                  c->pcp_orders_arg, 63 - __builtin_clzll(c->pcp_orders),
		                  c->max_order);
	int rc = derive_superblock_order(c, err, errlen);
	if (!rc)
		rc = derive_fallback_order(c, err, errlen);
	if (rc)
		return rc;
	if (c->page_reporting_order > (int)c->max_order)
		return boot_error(err, errlen, "page_reporting_order=%d: above max_order=%u",
		                  c->page_reporting_order, c->max_order);
	if (c->page_reporting_max_order > (int)c->max_order)
		return boot_error(err, errlen, "page_reporting_max_order=%d: above max_order=%u",
		                  c->page_reporting_max_order, c->max_order);
	return 0;
}

/* Check the memory layout keys against the size of memory and the page size. */
static int boot_check_layout(const struct pa_boot_config *c, char *err, size_t errlen)
{
	uint64_t page = 1ull << c->page_shift;
	if (c->mem % page)
		return boot_error(err, errlen, "mem=%s: not a multiple of the page size %llu",
		                  c->mem_arg, (unsigned long long)page);
	if (c->mem / page >= PA_MAX_FRAMES)
		return boot_error(err, errlen, "mem=%s: too large (valid: fewer than %llu frames)",
		                  c->mem_arg, (unsigned long long)PA_MAX_FRAMES);
	uint64_t node_align = 1ull << (PA_SECTION_BYTES_SHIFT > c->page_shift + c->pageblock_order ?
	                                       PA_SECTION_BYTES_SHIFT :
	                                       c->page_shift + c->pageblock_order);
	if (c->numa > 1 && c->mem / c->numa < node_align)
		return boot_error(err, errlen,
		                  "numa=%u: each node needs at least %llu bytes of mem=%s", c->numa,
		                  (unsigned long long)node_align, c->mem_arg);
	for (unsigned i = 0; i < c->nr_holes; i++)
		if (c->holes[i].end > c->mem)
			return boot_error(err, errlen, "%s=%s: outside mem=%s",
			                  c->holes[i].reserved ? "memreserve" : "memhole",
			                  c->holes[i].arg, c->mem_arg);
	if (c->zone_dma && c->zone_layout == PA_ZONES_FLAT)
		return boot_error(err, errlen,
		                  "zone_dma=1: needs zones=x86_64 (zones=flat has no DMA)");
	if (c->zone_dma && (PA_ZONE_DMA_BYTES >> c->page_shift) % (1ull << c->pageblock_order))
		return boot_error(err, errlen,
		                  "zone_dma=1: the 16 MiB of ZONE_DMA are not whole pageblocks of "
		                  "%llu bytes (valid with pageblocks of at most 16 MiB: lower "
		                  "pageblock_order_ceil)",
		                  (unsigned long long)(page << c->pageblock_order));
	for (unsigned i = 0; i < c->nr_offline; i++) {
		const struct pa_range *r = &c->offline[i];
		if (r->end > c->mem)
			return boot_error(err, errlen, "offline=%s: outside mem=%s", r->arg,
			                  c->mem_arg);
		if (r->start % c->memory_block_size || r->end % c->memory_block_size)
			return boot_error(err, errlen,
			                  "offline=%s: not aligned to memory_block_size=%s", r->arg,
			                  c->memory_block_arg);
	}
	if (c->movablecore_bytes >= c->mem)
		return boot_error(err, errlen, "movablecore=%s: not below mem=%s",
		                  c->movablecore_arg, c->mem_arg);
	for (unsigned i = 0; i < c->nr_cma; i++) {
		const struct pa_cma_request *r = &c->cma[i];
		if (r->size >= c->mem || (r->start != UINT64_MAX && r->start > c->mem - r->size))
			return boot_error(err, errlen, "cma=%s: does not fit in mem=%s", r->arg,
			                  c->mem_arg);
	}
	return 0;
}

static bool range_overlaps(const struct pa_boot_config *c, const struct pa_range *r, unsigned n,
                           pa_pfn_t lo, pa_pfn_t hi)
{
	for (unsigned i = 0; i < n; i++) {
		pa_pfn_t s = r[i].start >> c->page_shift;
		pa_pfn_t e = (r[i].end + (1ull << c->page_shift) - 1) >> c->page_shift;
		if (s < hi && lo < e)
			return true;
	}
	return false;
}

/* Is pfn in some hole that is (or is not) reserved? */
static bool in_hole_kind(const struct pa_boot_config *c, pa_pfn_t pfn, bool reserved)
{
	for (unsigned i = 0; i < c->nr_holes; i++)
		if (c->holes[i].reserved == reserved &&
		    range_overlaps(c, &c->holes[i], 1, pfn, pfn + 1))
			return true;
	return false;
}

/*
 * Cut [lo, hi) at every hole's ends: between two cuts a frame is reserved
 * (in a memreserve=, in no memhole=) or not throughout, so the count needs
 * a look per piece, not per frame (a pageblock walk asks for each one).
 */
uint64_t boot_reserved_frames(const struct pa_boot_config *c, pa_pfn_t lo, pa_pfn_t hi)
{
	pa_pfn_t cut[2 * PA_MAX_HOLES + 2];
	unsigned n = 0;
	bool any = false;
	for (unsigned i = 0; i < c->nr_holes && !any; i++)
		any = c->holes[i].reserved && range_overlaps(c, &c->holes[i], 1, lo, hi);
	if (!any || lo >= hi)
		return 0; /* most ranges asked about: no reservation there */
	cut[n++] = lo;
	cut[n++] = hi;
	for (unsigned i = 0; i < c->nr_holes; i++) {
		pa_pfn_t ends[2] = { c->holes[i].start >> c->page_shift,
			             (c->holes[i].end + (1ull << c->page_shift) - 1) >>
			                     c->page_shift };
		for (unsigned k = 0; k < 2; k++)
			if (ends[k] > lo && ends[k] < hi)
				cut[n++] = ends[k];
	}
	for (unsigned i = 1; i < n; i++) /* insertion sort: a few dozen at most */
		for (unsigned j = i; j > 0 && cut[j - 1] > cut[j]; j--) {
			pa_pfn_t t = cut[j];
			cut[j] = cut[j - 1];
			cut[j - 1] = t;
		}
	uint64_t frames = 0;
	for (unsigned i = 0; i + 1 < n; i++)
		if (cut[i] < cut[i + 1] && in_hole_kind(c, cut[i], true) &&
		    !in_hole_kind(c, cut[i], false))
			frames += cut[i + 1] - cut[i];
	return frames;
}

bool boot_pfn_in_hole(const struct pa_boot_config *c, pa_pfn_t pfn)
{
	return range_overlaps(c, c->holes, c->nr_holes, pfn, pfn + 1);
}

bool boot_pfn_in_memhole(const struct pa_boot_config *c, pa_pfn_t pfn)
{
	return in_hole_kind(c, pfn, false);
}

bool boot_range_hidden(const struct pa_boot_config *c, pa_pfn_t lo, pa_pfn_t hi)
{
	return range_overlaps(c, c->holes, c->nr_holes, lo, hi) ||
	       range_overlaps(c, c->offline, c->nr_offline, lo, hi);
}

int boot_parse(const char *cmdline, unsigned online_cpus, struct pa_boot_config *cfg, char *err,
               size_t errlen)
{
	char tok[KEY_MAX + VAL_MAX];
	uint64_t seen = 0;
	boot_defaults(cfg, online_cpus);
	for (const char *s = cmdline ? cmdline : ""; *s;) {
		while (*s == ' ' || *s == '\t' || *s == '\n')
			s++;
		size_t n = pa_strcspn(s, " \t\n");
		if (!n)
			break;
		if (n >= sizeof tok)
			return boot_error(err, errlen, "%.40s...: boot parameter too long", s);
		memcpy(tok, s, n);
		tok[n] = '\0';
		int rc = parse_one(cfg, tok, &seen, err, errlen);
		if (rc)
			return rc;
		s += n;
	}
	int rc = boot_derive(cfg, err, errlen);
	return rc ? rc : boot_check_layout(cfg, err, errlen);
}

int pa_boot(const char *cmdline, const struct pa_platform *platform, struct pa_pool **out,
            char *err, size_t errlen)
{
	char dummy[1];
	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof dummy;
	}
	err[0] = '\0';
	if (!out || !cmdline)
		return boot_error(err, errlen, "pa_boot: %s is NULL", out ? "cmdline" : "out");
	const char *bad = platform ? platform_check(platform) : NULL;
	if (bad)
		return boot_error(err, errlen, "pa_boot: platform hooks: %s", bad);
	struct pa_platform plat = platform ? *platform : (struct pa_platform){ 0 };
	bool cpu_default = !plat.cpu_id;
	platform_fill_defaults(&plat);
	if (!plat.reserve)
		return boot_error(err, errlen,
		                  "pa_boot: this platform has no default for reserve, commit and "
		                  "release: the embedder gives them");
	struct pa_pool *pool = pa_calloc(&plat, 1, sizeof *pool);
	if (!pool)
		return boot_error(err, errlen, "pa_boot: out of memory"), -ENOMEM;
	pool->plat = plat;
	pool->backing_fd = -1;
	pa_mutex_init(&pool->pcp_order_mutex, &pool->plat);
	pa_mutex_init(&pool->ctl_lock, &pool->plat);
	pa_mutex_init(&pool->owner_lock, &pool->plat);
	pa_mutex_init(&pool->hotplug_lock, &pool->plat);
	atomic_init(&pool->nr_owners, 1);                       /* owner 0 is "none" */
	atomic_init(&pool->reporting_notify_order, UINT32_MAX); /* no device until one registers */
	atomic_init(&pool->fault_rng, pool->plat.random_seed(pool->plat.ctx));
	pool->cpu_default = cpu_default;
	pool->cpu_off = platform_cpu_offset(!pool->cpu_default);
	int rc = boot_parse(cmdline, platform_online_cpus(), &pool->cfg, err, errlen);
	pool->max_order_boot = pool->cfg.max_order;
	pool->free_fast_below = pool->cfg.init_on_free ? 0 : pool->cfg.pageblock_order;
	pool->pcp_rseq = rc == 0 && pool->cfg.pcp_rseq && pool->cpu_default &&
	                 platform_rseq_lock_init(pool->cfg.nr_cpus);
	pool->rseq_cs_off = platform_rseq_cs_offset();
	atomic_init(&pool->defrag_mode, pool->cfg.defrag_mode);
	pool->linux_rules = linux_rules_for(pool->cfg.linux_version);
	atomic_init(&pool->direct_compaction, true);
	atomic_init(&pool->deferred_on_demand, true);
	atomic_init(&pool->direct_drain, true);
	atomic_init(&pool->direct_priority, 0);
	atomic_init(&pool->direct_costly_sync, false);
	if (rc == 0)
		rc = memmap_init(pool, err, errlen);
	if (rc == 0)
		rc = superblock_init(pool, err, errlen);
	if (rc == 0)
		rc = zone_init_all(pool, err, errlen);
	if (rc == 0)
		rc = superblock_init_zones(pool, err, errlen);
	if (rc == 0)
		rc = cma_init(pool, err, errlen);
	if (rc == 0)
		rc = hotplug_init(pool, err, errlen);
	if (rc == 0)
		rc = reporting_init(pool, err, errlen);
	if (rc == 0)
		rc = deferred_init_start(pool, err, errlen);
	if (rc == 0 && !pool->deferred)
		shuffle_pool(pool); /* every chunk is initialised: shuffle now */
	if (rc == 0) {
		atomic_store(&pool->compaction_proactiveness, pool->cfg.compaction_proactiveness);
		rc = compaction_init(pool, err, errlen);
	}
	if (rc) {
		pa_shutdown(pool);
		return rc;
	}
	*out = pool;
	return 0;
}

void pa_shutdown(struct pa_pool *pool)
{
	if (!pool)
		return;
	scrub_stop(pool);
	deferred_init_stop(pool);
	reporting_stop(pool);
	compaction_stop(pool);
	hotplug_destroy(pool);
	cma_destroy(pool);
	superblock_destroy_zones(pool);
	zone_destroy_all(pool);
	superblock_destroy(pool);
	memmap_destroy(pool);
	struct pa_platform plat = pool->plat;
	pa_free(&plat, pool);
}

void pa_get_config(const struct pa_pool *pool, struct pa_config *out)
{
	if (!pool || !out)
		return;
	const struct pa_boot_config *c = &pool->cfg;
	*out = (struct pa_config){
		.page_shift = c->page_shift,
		.page_size = 1ull << c->page_shift,
		.max_order = c->max_order,
		.huge_order = c->huge_order,
		.pageblock_order = c->pageblock_order,
		.pageblock_order_ceil = c->pageblock_order_ceil,
		.cma_alignment_bytes = (1ull << c->page_shift) << c->pageblock_order,
		.section_shift = c->section_shift,
		.nr_cpus = c->nr_cpus,
		.nr_nodes = pool->nr_nodes,
		.total_pages = pool->nr_frames,
		.metadata_bytes_per_frame = (unsigned)sizeof(struct pa_page),
		.superblock_order = c->superblock_order,
		.defrag_mode = atomic_load_explicit(&pool->defrag_mode, memory_order_relaxed),
		.fallback_order = c->fallback_order,
	};
}

const char *pa_version(void)
{
	return PA_VERSION_STRING;
}
