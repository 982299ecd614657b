/* SPDX-License-Identifier: MIT */
/*
 * Kernel versions as data: the changes to Linux's page allocator between
 * 6.1 and 7.2 that change where a block goes or whether a request fails,
 * each with the version it landed in. A pool boots with `linux=VERSION` and
 * holds every change up to that version as a bit of pool->linux_rules; the
 * layers that differ ask linux_rule(). The default is the newest version.
 */
#include "linux.h"

#include "platform/platform.h"

/* The table: one row per change, oldest first. */
static const struct linux_rule_desc {
	const char *name;
	unsigned version; /* LINUX_V(major, minor) it landed in */
	const char *what;
} rule_table[LR_NR] = {
	[LR_PCP_HIGH_TUNED] = { "pcp_high_tuned", LINUX_V(6, 7),
	                        "per-CPU high tuned between high_min and high_max and decayed "
	                        "(6.1: fixed at the low watermark's share; pcp_rules=)" },
	[LR_FOLIO_COMPACTION] = { "folio_compaction", LINUX_V(6, 9),
	                          "compaction's scanners migrate folios above order 0, below the "
	                          "order asked for and the pageblock order (6.1: order-0 pages "
	                          "only; ranges emptied whole move everything in every version)" },
	[LR_FREELIST_HYGIENE] = { "freelist_hygiene", LINUX_V(6, 10),
	                          "a free block is always on the list of its pageblock's type "
	                          "(6.1: a fallback's remainder stays on the requester's list)" },
	[LR_HIGHATOMIC_ALIGNED] = { "highatomic_aligned", LINUX_V(6, 10),
	                            "the high-atomic reserve: 1% of the zone rounded up to "
	                            "pageblocks, none in a zone under 100 pageblocks (6.1: 1% plus "
	                            "a pageblock, in every zone)" },
	[LR_HIGHATOMIC_FREE] = { "highatomic_free", LINUX_V(6, 12),
	                         "a request without reserves loses the reserve's free pages from "
	                         "its watermark check (6.1: every page reserved, free or not)" },
	[LR_RESERVED_MOVABLE] = { "reserved_movable", LINUX_V(6, 13),
	                          "a pageblock starting with memreserve= memory is Movable where "
	                          "deferred init sets it up too (6.1: Unmovable there, with the "
	                          "free frames beside it)" },
	[LR_FALLBACK_CLAIM] = { "fallback_claim_or_smallest", LINUX_V(6, 15),
	                        "a fallback claims a whole pageblock or takes the smallest block "
	                        "of another type, and boosts the watermarks only where it tries to "
	                        "claim (6.1: steals from the largest block, boosts on every "
	                        "fallback below a pageblock)" },
	[LR_DEFRAG_MODE] = { "defrag_mode", LINUX_V(6, 15),
	                     "vm.defrag_mode (boot key linux_defrag_mode=1): no fallback below a "
	                     "pageblock until compaction has run" },
	[LR_ISOLATE_BIT] = { "isolate_bit", LINUX_V(6, 17),
	                     "pageblock isolation is a bit of its own and keeps the type "
	                     "(pagealloc keeps it in every version; 6.1 set the caller's type "
	                     "after); with CMA, migratetype 4 is CMA and 5 Isolate" },
	[LR_PCP_SPILL_STEPS] = { "pcp_spill_steps", LINUX_V(6, 19),
	                         "a per-CPU spill or decay gives back a batch of frames at a time, "
	                         "each step whole blocks from the list it starts at, so a list of "
	                         "THPs gives back a THP per batch asked for (6.1-6.18: the frames "
	                         "asked for, one block over at most)" },
	[LR_NORETRY_RECLAIMS] = { "noretry_reclaims", LINUX_V(7, 0),
	                          "a costly __GFP_NORETRY request whose first compaction found "
	                          "nothing to work with still gets its round of reclaim, the "
	                          "per-CPU lists drained (6.1-6.19: fails at once; a THP's first "
	                          "try, with __GFP_THISNODE, fails there in every version)" },
};

unsigned linux_rules_for(unsigned version)
{
	unsigned mask = 0;
	for (unsigned r = 0; r < LR_NR; r++)
		if (version >= rule_table[r].version)
			mask |= 1u << r;
	return mask;
}

const char *linux_rule_name(unsigned rule)
{
	return rule < LR_NR ? rule_table[rule].name : "?";
}

unsigned linux_rule_version(unsigned rule)
{
	return rule < LR_NR ? rule_table[rule].version : 0;
}

const char *linux_rule_what(unsigned rule)
{
	return rule < LR_NR ? rule_table[rule].what : "?";
}

/* The last minor version of each major this project models. */
static unsigned last_minor(unsigned major)
{
	return major == 6 ? 19 : major == 7 ? 2 : 0;
}

static const char *parse_uint(const char *s, unsigned *v)
{
	if (*s < '0' || *s > '9')
		return NULL;
	unsigned n = 0;
	for (; *s >= '0' && *s <= '9' && n < 1000; s++)
		n = n * 10 + (unsigned)(*s - '0');
	*v = n;
	return s;
}

int linux_version_parse(const char *s, bool strict, unsigned *out)
{
	unsigned major, minor;
	const char *p = parse_uint(s, &major);
	if (!p || *p != '.' || !(p = parse_uint(p + 1, &minor)))
		return -1;
	/* X.Y, X.Y.Z, or (not strict) a release string such as 7.2.13+deb14-amd64. */
	if (*p == '.') {
		unsigned patch;
		const char *q = parse_uint(p + 1, &patch);
		if (!q)
			return -1;
		p = q;
	}
	if (*p && (strict || (*p != '-' && *p != '+' && *p != '_')))
		return -1;
	unsigned v = LINUX_V(major, minor);
	if (v < LINUX_V_OLDEST || v > LINUX_V_NEWEST || minor > last_minor(major))
		return -1;
	*out = v;
	return 0;
}

const char *linux_version_name(unsigned version, char *buf, size_t len)
{
	pa_snprintf(buf, len, "%u.%u", version / 100, version % 100);
	return buf;
}

size_t linux_rules_list(unsigned mask, char *buf, size_t len)
{
	size_t n = 0;
	if (len)
		buf[0] = '\0';
	for (unsigned r = 0; r < LR_NR; r++) {
		if (!((mask >> r) & 1))
			continue;
		int w = pa_snprintf(buf + n, n < len ? len - n : 0, "%s%s", n ? "," : "",
		                    rule_table[r].name);
		n += w > 0 ? (size_t)w : 0;
	}
	return n;
}
