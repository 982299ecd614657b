/* SPDX-License-Identifier: MIT */
/*
 * The kernel versions modelled (linux.c): their rule changes as data.
 */
#ifndef PA_LINUX_H
#define PA_LINUX_H

#include "pool.h"

#define LINUX_V(major, minor) ((major)*100u + (minor))
#define LINUX_V_OLDEST        LINUX_V(6, 1)
#define LINUX_V_NEWEST        LINUX_V(7, 2)

/* A change to the allocator's rules, in force from the version in its table row on. */
enum linux_rule {
	LR_PCP_HIGH_TUNED,     /* 6.7: per-CPU high auto-tuned (pcp_rules 6.7) */
	LR_FOLIO_COMPACTION,   /* 6.9: compaction migrates large folios, not only order 0 */
	LR_FREELIST_HYGIENE,   /* 6.10: free blocks always on their pageblock's list */
	LR_HIGHATOMIC_ALIGNED, /* 6.10: the reserve's cap in whole pageblocks, none in small zones */
	LR_HIGHATOMIC_FREE, /* 6.12: watermarks leave out the reserve's free pages, not all of it */
	LR_RESERVED_MOVABLE, /* 6.13: reserved memory's pageblocks Movable in the deferred part too */
	LR_FALLBACK_CLAIM,   /* 6.15: claim a whole pageblock or take the smallest block */
	LR_DEFRAG_MODE,      /* 6.15: vm.defrag_mode exists */
	LR_ISOLATE_BIT,      /* 6.17: isolation keeps the pageblock's type */
	LR_PCP_SPILL_STEPS,  /* 6.19: spills and decays give back a batch at a time, whole blocks */
	LR_NORETRY_RECLAIMS, /* 7.0: a costly NORETRY request reclaims once after any compaction */
	LR_NR
};

static inline bool linux_rule(const struct pa_pool *pool, enum linux_rule r)
{
	return (pool->linux_rules >> r) & 1;
}

/* The rules of a version: every change that landed in it or before. */
unsigned linux_rules_for(unsigned version);
const char *linux_rule_name(unsigned rule);
unsigned linux_rule_version(unsigned rule);
const char *linux_rule_what(unsigned rule);
/*
 * "6.1" .. "7.2" (or X.Y.Z; not strict: a uname release such as
 * 7.2.13+deb14-amd64) -> LINUX_V(); -1 outside the versions modelled.
 */
int linux_version_parse(const char *s, bool strict, unsigned *out);
const char *linux_version_name(unsigned version, char *buf, size_t len);
/* The names of the rules in mask, comma-separated; returns the length it needs. */
size_t linux_rules_list(unsigned mask, char *buf, size_t len);

#endif /* PA_LINUX_H */
