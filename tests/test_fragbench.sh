#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `pagealloc bench fragbench` scaled down (4 GiB, memory turned over twice):
# the JSON keys of every policy, figures that agree with each other, the
# same figures for the same seed, the text table, and bad options refused.
#
# Usage: bash tests/test_fragbench.sh PATH-TO-pagealloc   (or $PAGEALLOC)
set -u
source "$(dirname "${BASH_SOURCE[0]}")/cli_helpers.bash" "$@"

SMALL=(bench fragbench --mem 4G --turnover 2)

expect_ok cmp "fragbench --compare --json exits 0" "${SMALL[@]}" --compare --json
json_check cmp "--compare: both policies with every key, figures consistent" '
assert j["workload"] == "fragbench" and j["turnover"] == 2 and j["unmovable_pct"] == "5", j
keys = ("boot", "elapsed_s", "regions", "tainted_regions", "tainted_regions_pct",
        "regions_with_unmovable", "regions_with_reclaimable", "gig_blocks", "gig_blocks_bound",
        "gig_pct_of_bound", "allocations", "alloc_failures", "alloc_failures_by_class",
        "tainted_pageblocks", "pageblocks", "held_frames", "kernel_frames", "free_frames",
        "compacted_frames", "vmstat")
for name in ("linux", "linux-whole", "superblock"):
    p = j[name]
    for k in keys:
        assert k in p, (name, k)
    assert p["regions"] == 4, p["regions"]
    assert 0 <= p["tainted_regions"] <= p["regions"], p
    assert p["tainted_regions"] >= max(p["regions_with_unmovable"], p["regions_with_reclaimable"])
    assert abs(p["tainted_regions_pct"] - 100.0 * p["tainted_regions"] / p["regions"]) < 1e-3
    assert 0 <= p["gig_blocks"] <= p["gig_blocks_bound"] <= p["regions"] - p["tainted_regions"], p
    assert 0 <= p["gig_pct_of_bound"] <= 100, p
    assert p["alloc_failures"] == sum(p["alloc_failures_by_class"].values()), p
    assert set(p["alloc_failures_by_class"]) == {"unmovable", "reclaimable", "anon", "pagecache", "thp"}
    assert sum(p["pageblocks"].values()) == 2048, p["pageblocks"]
    assert p["tainted_pageblocks"] <= 2048 and (p["tainted_pageblocks"] > 0) == (p["tainted_regions"] > 0)
    assert 0 < p["kernel_frames"] < p["held_frames"] and p["held_frames"] + p["free_frames"] <= 1 << 20
    assert p["allocations"] > 100000, p["allocations"]
    assert "pgalloc_fallback_claim" in p["vmstat"], p["vmstat"]
assert "superblock_order=0" in j["linux"]["boot"] and "defrag_mode=1" in j["superblock"]["boot"]
assert "fallback_order=10" in j["linux"]["boot"] and "fallback_order" not in j["linux-whole"]["boot"]
assert j["linux"]["allocations"] == j["linux-whole"]["allocations"] == j["superblock"]["allocations"], \
    "one stream for every policy"
'

expect_ok again "fragbench --compare --json again with the same seed" "${SMALL[@]}" --compare --json
if python3 - "$TMP/cmp.out" "$TMP/again.out" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for d in (a, b):
    for name in ("linux", "linux-whole", "superblock"):
        del d[name]["elapsed_s"]
assert a == b, "the same seed gave other figures"
PY
then pass "the same seed gives the same figures"; else fail "the same seed gives the same figures"; fi

expect_ok seed "fragbench --policy linux --seed 7 --json exits 0" "${SMALL[@]}" --policy linux --seed 7 --json
json_check seed "--policy linux: that policy alone, another stream" '
assert "linux" in j and "linux-whole" not in j and "superblock" not in j and j["seed"] == 7, j
assert j["linux"]["allocations"] > 0
'

expect_ok text "fragbench --compare (text) exits 0" "${SMALL[@]}" --compare --unmovable-pct 1
text_check text "the text table has a column per policy" '
assert re.search(r"^\s+linux\s+linux-whole\s+superblock$", t, re.M), t
assert re.search(r"^tainted_regions_pct\s+[\d.]+\s+[\d.]+\s+[\d.]+$", t, re.M), t
assert re.search(r"^gig_blocks_bound\s+\d+\s+\d+\s+\d+$", t, re.M), t
'

expect_refused bad_policy "--policy names linux, linux-whole or superblock" "linux-whole or superblock" \
	bench fragbench --policy buddy
expect_refused both "--compare and --policy together are refused" "drop --policy" \
	bench fragbench --compare --policy linux
expect_refused memboot "--mem with --boot is refused" "mem=" \
	bench fragbench --mem 4G --boot "mem=4G"
expect_refused turnover "--turnover 0 is refused" "1..1000" bench fragbench --turnover 0
expect_refused mem "--mem needs a size" "a size" bench fragbench --mem lots
expect_refused small "a pool below max_order 18 is refused" "max_order" \
	bench fragbench --boot "mem=1G max_order=10"

finish
