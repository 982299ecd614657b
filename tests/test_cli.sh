#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The `pagealloc` program: info/buddyinfo/pagetypeinfo/vmstat/zoneinfo/lockstat/ctl
# with --boot, --json output that parses and has the documented keys, the seed 004
# values, /proc text formats, the compaction knobs and workloads, --help for every
# subcommand, and bad boot lines that exit non-zero with the message on stderr.
#
# Usage: bash tests/test_cli.sh PATH-TO-pagealloc   (or $PAGEALLOC)
set -u

source "$(dirname "${BASH_SOURCE[0]}")/cli_helpers.bash" "$@"

# --- info --json ----------------------------------------------------------------

expect_ok info_default "info --json exits 0" info --json
json_check info_default "info --json has the documented keys and defaults" '
for k in ("page_size", "page_shift", "max_order", "huge_order", "pageblock_order",
          "pageblock_order_ceil", "cma_alignment_bytes", "metadata_bytes_per_frame",
          "nr_cpus", "nodes"):
    assert k in j, "missing key " + k
assert j["page_size"] == 4096, j["page_size"]
assert j["page_shift"] == 12
assert j["max_order"] == 10
assert j["huge_order"] == 9
assert j["pageblock_order"] == 9
assert j["pageblock_order_ceil"] == 10
assert j["cma_alignment_bytes"] == 2 << 20
assert 1 <= j["metadata_bytes_per_frame"] <= 16, j["metadata_bytes_per_frame"]
assert 1 <= j["nr_cpus"] <= 1024
assert len(j["nodes"]) == 1 and j["nodes"][0]["id"] == 0
zones = j["nodes"][0]["zones"]
assert [z["name"] for z in zones] == ["DMA32"], zones  # x86-64: below 4G is DMA32
z = zones[0]
for k in ("name", "start_pfn", "end_pfn", "managed_pages", "watermark_min",
          "watermark_low", "watermark_high"):
    assert k in z, "zone lacks " + k
assert z["start_pfn"] == 0 and z["end_pfn"] == (1 << 30) // 4096, z
assert z["managed_pages"] == 262144
assert (z["watermark_min"], z["watermark_low"], z["watermark_high"]) == (1024, 1286, 1548), z
'

expect_ok info_nothp "info --json --boot thp=0 exits 0" info --boot "thp=0" --json
json_check info_nothp "info --json: huge_order is null without THP" '
assert j["huge_order"] is None, j["huge_order"]
assert j["pageblock_order"] == 10
assert j["cma_alignment_bytes"] == 4 << 20
'

# The seed 004 tables through the program.
seed_row() {
	local boot="$1" pb="$2" cma="$3" n="seed$4"
	expect_ok "$n" "info --boot \"$boot\" exits 0" info --boot "$boot" --json
	json_check "$n" "seed 004: \"$boot\" -> pageblock order $pb, CMA alignment $cma" "
assert j['pageblock_order'] == $pb, j['pageblock_order']
assert j['cma_alignment_bytes'] == $cma, j['cma_alignment_bytes']
"
}
seed_row "mem=1G page_shift=12 max_order=10" 9 $((2 << 20)) 1
seed_row "mem=1G page_shift=14 max_order=11" 11 $((32 << 20)) 2
seed_row "mem=4G page_shift=16 max_order=13" 13 $((512 << 20)) 3
seed_row "mem=1G page_shift=12 max_order=15 thp=0" 15 $((128 << 20)) 4
seed_row "mem=1G page_shift=14 max_order=13 thp=0" 13 $((128 << 20)) 5
seed_row "mem=4G page_shift=16 max_order=13 thp=0" 13 $((512 << 20)) 6
seed_row "mem=1G page_shift=14 pageblock_order_ceil=7" 7 $((2 << 20)) 7

expect_ok info_numa "info --json with two nodes exits 0" info --boot "mem=8G numa=2" --json
json_check info_numa "info --json: nodes and zones around 4G" '
nodes = j["nodes"]
assert [n["id"] for n in nodes] == [0, 1], nodes
z0 = nodes[0]["zones"]; z1 = nodes[1]["zones"]
assert [z["name"] for z in z0] == ["DMA32"], z0
assert [z["name"] for z in z1] == ["Normal"], z1
assert (z0[0]["start_pfn"], z0[0]["end_pfn"]) == (0, 1 << 20)
assert (z1[0]["start_pfn"], z1[0]["end_pfn"]) == (1 << 20, 2 << 20)
'

expect_ok info_movable "info --json with movablecore exits 0" info --boot "mem=1G movablecore=256M" --json
json_check info_movable "info --json: Movable zone at the top" '
zones = {z["name"]: z for z in j["nodes"][0]["zones"]}
assert set(zones) == {"DMA32", "Movable"}, zones
assert zones["Movable"]["start_pfn"] == (768 << 20) // 4096
assert zones["Movable"]["end_pfn"] == (1 << 30) // 4096
'

expect_ok info_dma "info --json with zone_dma=1 exits 0" info --boot "mem=1G zone_dma=1" --json
json_check info_dma "info --json: zone_dma=1 puts the first 16 MiB in DMA" '
zones = j["nodes"][0]["zones"]
assert [(z["name"], z["start_pfn"], z["end_pfn"]) for z in zones] == [
    ("DMA", 0, 4096), ("DMA32", 4096, 262144)], zones
assert (j["zones"], j["zone_dma"]) == ("x86_64", 1), (j["zones"], j["zone_dma"])
'

expect_ok info_flat "info --json with zones=flat exits 0" info --boot "mem=8G zones=flat" --json
json_check info_flat "info --json: zones=flat is one Normal zone" '
zones = j["nodes"][0]["zones"]
assert [(z["name"], z["start_pfn"], z["end_pfn"]) for z in zones] == [("Normal", 0, 2 << 20)], zones
assert (j["zones"], j["zone_dma"]) == ("flat", 0), (j["zones"], j["zone_dma"])
'

expect_ok info_64g "info --json --boot mem=64G exits 0" info --boot "mem=64G" --json
json_check info_64g "info --json: 64G metadata-only pool, at most 16 bytes a frame" '
assert j["metadata_bytes_per_frame"] <= 16
assert sum(z["managed_pages"] for n in j["nodes"] for z in n["zones"]) == (64 << 30) // 4096
'

expect_ok info_text "info (text) exits 0" info --boot "mem=64M"
if [ -s "$TMP/info_text.out" ]; then pass "info (text) prints something"; else fail "info (text) prints nothing"; fi

# --- buddyinfo --------------------------------------------------------------------

expect_ok buddy_json "buddyinfo --json exits 0" buddyinfo --boot "mem=64M min_free_kbytes=0" --json
json_check buddy_json "buddyinfo --json: zones with node, zone and free per order" '
zs = j["zones"]
assert len(zs) == 1, zs
z = zs[0]
assert z["node"] == 0 and z["zone"] == "DMA32", z
assert z["free"] == [0] * 10 + [16], z["free"]
'

expect_ok buddy_text "buddyinfo (text) exits 0" buddyinfo --boot "mem=64M min_free_kbytes=0"
expected="$(printf 'Node %d, zone %8s ' 0 DMA32; for o in $(seq 0 9); do printf '%6d ' 0; done; printf '%6d ' 16)"
if [ "$(cat "$TMP/buddy_text.out")" = "$expected" ]; then
	pass "buddyinfo (text) is the /proc/buddyinfo line"
else
	fail "buddyinfo (text) is the /proc/buddyinfo line" "got:      '$(cat "$TMP/buddy_text.out")'" "expected: '$expected'"
fi

expect_ok buddy_json2 "buddyinfo --json with two zones exits 0" buddyinfo --boot "mem=8G max_order=12" --json
json_check buddy_json2 "buddyinfo --json: DMA32 and Normal, max_order + 1 orders" '
zs = j["zones"]
assert [z["zone"] for z in zs] == ["DMA32", "Normal"], zs
for z in zs:
    assert len(z["free"]) == 13, z
    assert z["free"][12] == 256, z  # 4G / 16M
'

# --- pagetypeinfo -------------------------------------------------------------------

expect_ok pti "pagetypeinfo exits 0" pagetypeinfo --boot "mem=64M"
if head -n 2 "$TMP/pti.out" | diff -q - <(printf 'Page block order: 9\nPages per block:  512\n') >/dev/null; then
	pass "pagetypeinfo header lines"
else
	fail "pagetypeinfo header lines" "got: $(head -n 2 "$TMP/pti.out" | tr '\n' '|')"
fi
if grep -q '^Number of blocks type ' "$TMP/pti.out" && grep -q 'Free pages count per migrate type at order' "$TMP/pti.out"; then
	pass "pagetypeinfo has both tables"
else
	fail "pagetypeinfo has both tables" "$(head -c 600 "$TMP/pti.out")"
fi
expect_ok pti_ceil "pagetypeinfo with a pageblock ceiling exits 0" pagetypeinfo --boot "mem=1G page_shift=14 pageblock_order_ceil=7"
if head -n 1 "$TMP/pti_ceil.out" | grep -qx 'Page block order: 7'; then
	pass "pagetypeinfo follows pageblock_order_ceil"
else
	fail "pagetypeinfo follows pageblock_order_ceil" "$(head -n 2 "$TMP/pti_ceil.out")"
fi
expect_ok pti_json "pagetypeinfo --json exits 0" pagetypeinfo --boot "mem=64M" --json
json_check pti_json "pagetypeinfo --json parses" 'assert isinstance(j, (dict, list))'

# --- vmstat ---------------------------------------------------------------------------

expect_ok vmstat "vmstat exits 0" vmstat --boot "mem=64M"
if [ -s "$TMP/vmstat.out" ] && ! grep -qvE '^[a-z0-9_]+ [0-9]+$' "$TMP/vmstat.out"; then
	pass "vmstat prints name value lines"
else
	fail "vmstat prints name value lines" "bad lines: $(grep -vE '^[a-z0-9_]+ [0-9]+$' "$TMP/vmstat.out" | head -n 3 | tr '\n' '|')"
fi
for name in pgfree bad_page pgalloc_normal nr_free_pages; do
	if grep -qE "^$name [0-9]+$" "$TMP/vmstat.out"; then
		pass "vmstat has $name"
	else
		fail "vmstat has $name"
	fi
done
if grep -qx 'nr_free_pages 16384' "$TMP/vmstat.out"; then
	pass "vmstat nr_free_pages of a fresh 64M pool is 16384"
else
	fail "vmstat nr_free_pages of a fresh 64M pool is 16384" "$(grep nr_free_pages "$TMP/vmstat.out")"
fi
expect_ok vmstat_json "vmstat --json exits 0" vmstat --boot "mem=64M" --json
json_check vmstat_json "vmstat --json parses" 'assert isinstance(j, (dict, list))'

# --- ctl --------------------------------------------------------------------------------

expect_ok ctl_read "ctl watermark_scale_factor exits 0" ctl watermark_scale_factor --boot "mem=64M"
if grep -qx '10' "$TMP/ctl_read.out" || grep -qE '(^|[^0-9])10$' "$TMP/ctl_read.out"; then
	pass "ctl reads watermark_scale_factor 10"
else
	fail "ctl reads watermark_scale_factor 10" "got: $(cat "$TMP/ctl_read.out")"
fi
expect_ok ctl_write "ctl watermark_scale_factor 100 exits 0" ctl watermark_scale_factor 100 --boot "mem=64M"
run ctl_bad ctl no/such/knob --boot "mem=64M"
if [ "$(rc_of ctl_bad)" != 0 ] && [ -s "$TMP/ctl_bad.err" ]; then
	pass "ctl with an unknown path fails with a message"
else
	fail "ctl with an unknown path fails with a message" "rc $(rc_of ctl_bad)"
fi
run ctl_badval ctl watermark_scale_factor abc --boot "mem=64M"
if [ "$(rc_of ctl_badval)" != 0 ] && [ -s "$TMP/ctl_badval.err" ]; then
	pass "ctl with a bad value fails with a message"
else
	fail "ctl with a bad value fails with a message" "rc $(rc_of ctl_badval)"
fi

# --- ctl: compaction ----------------------------------------------------------------------

expect_ok ctl_compact "ctl compact_memory 1 exits 0" ctl compact_memory 1 --boot "mem=64M"
expect_refused ctl_compact2 "ctl compact_memory 2 is refused (EINVAL)" 'Invalid argument' \
	ctl compact_memory 2 --boot "mem=64M"
expect_refused ctl_compact_rd "ctl compact_memory cannot be read (write-only)" 'write-only' \
	ctl compact_memory --boot "mem=64M"
expect_ok ctl_pro "ctl compaction_proactiveness exits 0" ctl compaction_proactiveness --boot "mem=64M"
expect_ok ctl_pro_w "ctl compaction_proactiveness 55 exits 0" ctl compaction_proactiveness 55 --boot "mem=64M"
if [ "$(cat "$TMP/ctl_pro.out")" = 20 ] && [ "$(cat "$TMP/ctl_pro_w.out")" = 55 ]; then
	pass "compaction_proactiveness reads 20 by default and 55 after writing 55"
else
	fail "compaction_proactiveness reads 20, then 55" "got '$(cat "$TMP/ctl_pro.out")', '$(cat "$TMP/ctl_pro_w.out")'"
fi
expect_ok ctl_fail_w "ctl compaction/fail_pct 30 exits 0" ctl compaction/fail_pct 30 --boot "mem=64M"
if [ "$(cat "$TMP/ctl_fail_w.out")" = 30 ]; then
	pass "compaction/fail_pct reads back 30"
else
	fail "compaction/fail_pct reads back 30" "got '$(cat "$TMP/ctl_fail_w.out")'"
fi
n=0
for bad in "compaction_proactiveness 101" "compaction/fail_pct 101" "compaction/fail_pct -1" \
	"compaction_proactiveness x"; do
	set -- $bad
	n=$((n + 1))
	expect_refused "ctl_cbad$n" "ctl $bad is refused (EINVAL)" 'Invalid argument' \
		ctl "$1" "$2" --boot "mem=64M"
done
expect_ok ctl_kcd "ctl compaction/kcompactd_run/1 1 (kcompactd=manual, two nodes) exits 0" \
	ctl compaction/kcompactd_run/1 1 --boot "mem=256M numa=2 kcompactd=manual"
expect_refused ctl_kcd_thr "ctl compaction/kcompactd_run/0 is refused where compactors are threads" \
	'not supported' ctl compaction/kcompactd_run/0 1 --boot "mem=64M"
expect_refused ctl_kcd_node "ctl compaction/kcompactd_run/1 on a one-node pool is refused (EINVAL)" \
	'Invalid argument' ctl compaction/kcompactd_run/1 1 --boot "mem=64M kcompactd=manual"
expect_ok ctl_help "ctl (the list) exits 0" ctl --boot "mem=64M"
text_check ctl_help "ctl lists the compaction knobs with their modes" '
for path, mode in (("compact_memory", "wo"), ("compaction_proactiveness", "rw"),
                   ("compaction/fail_pct", "rw"), ("compaction/kcompactd_run/<N>", "wo")):
    assert re.search(r"^" + re.escape(path) + r"\s+" + mode + r"\s", t, re.M), path
'

# --- vmstat, info, pagetypeinfo: compaction and CMA -------------------------------------------

expect_ok vmstat_c "vmstat --json exits 0" vmstat --boot "mem=64M max_order=12" --json
json_check vmstat_c "vmstat has the compaction counters and a folios-moved counter per order" '
for k in ("compact_stall", "compact_fail", "compact_success", "compact_migrate_scanned",
          "compact_free_scanned", "compact_isolated", "compact_daemon_wake",
          "compact_daemon_migrate_scanned", "compact_daemon_free_scanned", "pgmigrate_success",
          "pgmigrate_fail", "compact_folios_split"):
    assert k in j, k
orders = sorted(int(k.rsplit("_", 1)[1]) for k in j if k.startswith("compact_folios_migrated_order_"))
assert orders == list(range(13)), orders
'
expect_ok info_cma "info --json with two CMA areas exits 0" info --boot "mem=1G cma=4M cma=3M@512M" --json
json_check info_cma "info --json lists the CMA areas" '
a = j["cma"]
assert [x["name"] for x in a] == ["cma0", "cma1"], a
for x in a:
    for k in ("start_pfn", "nr_pages", "requested_bytes", "reserved_bytes", "allocated_pages"):
        assert k in x, k
assert (a[0]["requested_bytes"], a[0]["reserved_bytes"], a[0]["nr_pages"]) == (4 << 20, 4 << 20, 1024), a[0]
assert (a[1]["requested_bytes"], a[1]["reserved_bytes"], a[1]["start_pfn"]) == (3 << 20, 4 << 20, 131072), a[1]
assert all(x["allocated_pages"] == 0 for x in a)
'
expect_ok info_nocma "info --json without CMA exits 0" info --boot "mem=64M" --json
json_check info_nocma "info --json: cma is an empty list without areas" 'assert j["cma"] == [], j["cma"]'
expect_ok info_cma_t "info (text) with a CMA area exits 0" info --boot "mem=1G cma=4M"
text_check info_cma_t "info (text) lists the CMA area" '
assert re.search(r"^cma0\s+\d+\s+1024\s+4194304\s+4194304\s+0$", t, re.M), t[-300:]
'
expect_ok pti_cma "pagetypeinfo --json with 16M of CMA exits 0" pagetypeinfo --boot "mem=1G cma=16M" --json
json_check pti_cma "pagetypeinfo counts the CMA pageblocks as CMA" '
b = j["nodes"][0]["zones"][0]["blocks"]
assert b["CMA"] == 8 and b["Isolate"] == 0 and b["Movable"] == 504, b
'

# --- zoneinfo and lockstat ------------------------------------------------------------------

# A state that does not depend on the scheduler: one CPU, one thread, a fixed churn.
ZI_RUN=(--boot "mem=256M nr_cpus=1" --run churn --ops 20000 --seed 7 --keep)
expect_ok zi_text "zoneinfo --run churn exits 0" zoneinfo "${ZI_RUN[@]}"
expect_ok zi_json "zoneinfo --json --run churn exits 0" zoneinfo "${ZI_RUN[@]}" --json
text_check zi_text "zoneinfo: one order_N: line per order held; they add up to the count" '
cpus = re.split(r"^    cpu: \d+$", t, flags=re.M)[1:]
assert cpus, "no pagesets"
held = 0
for c in cpus:
    count = int(re.search(r"count:\s+(\d+)", c).group(1))
    lines = re.findall(r"^\s+order_(\d+):\s+unmovable (\d+) movable (\d+) reclaimable (\d+)$", c, re.M)
    assert len(lines) == len(re.findall(r"order_", c)), "a malformed order line"
    orders = [int(l[0]) for l in lines]
    assert orders == sorted(set(orders)), orders
    assert all(sum(map(int, l[1:])) > 0 for l in lines), "an order line with nothing held"
    assert count == sum(sum(map(int, l[1:])) << int(l[0]) for l in lines), (count, lines)
    held += len(lines)
assert held > 0, "the churn left nothing on the lists"
'
json_check zi_json "zoneinfo --json: the documented keys, the same pagesets as the text" '
import re
t = open(sys.argv[1].replace("zi_json", "zi_text")).read()
text = [tuple(map(int, m)) for m in
        re.findall(r"order_(\d+):\s+unmovable (\d+) movable (\d+) reclaimable (\d+)", t)]
z = j["zones"][0]
for k in ("node", "zone", "free", "min", "low", "high", "spanned", "present", "managed",
          "start_pfn", "stats", "pagesets"):
    assert k in z, k
js = []
for ps in z["pagesets"]:
    for k in ("cpu", "count", "high", "high_min", "high_max", "batch", "orders"):
        assert k in ps, k
    assert ps["count"] == sum((o["unmovable"] + o["movable"] + o["reclaimable"]) << o["order"]
                              for o in ps["orders"])
    js += [(o["order"], o["unmovable"], o["movable"], o["reclaimable"]) for o in ps["orders"]]
assert js == text, (js, text)
'
# --- extfrag: each debugfs file on its own, exactly as Linux 6.1 prints it -----------------

FIXTURES="$(cd "$(dirname "$0")" && pwd)/linux-6.1"
for f in unusable:unusable_index index:extfrag_index; do
	opt="${f%%:*}" file="${f#*:}"
	expect_ok "ef_$opt" "extfrag --$opt exits 0" extfrag --$opt --boot "mem=6G zone_dma=1"
	# A fresh pool of the fixture kernel's zones: the same lines, digit for digit in shape.
	if [ "$(tr '0-9' '9' <"$TMP/ef_$opt.out")" = "$(tr '0-9' '9' <"$FIXTURES/$file")" ]; then
		pass "extfrag --$opt is exactly debugfs extfrag/$file"
	else
		fail "extfrag --$opt is exactly debugfs extfrag/$file" "got: $(head -c 300 "$TMP/ef_$opt.out")"
	fi
done
expect_ok ef_json "extfrag --index --json exits 0" extfrag --index --json
json_check ef_json "extfrag --index --json: one file, zones with extfrag_index" '
assert list(j) == ["zones"], list(j)
assert all(len(z["extfrag_index"]) == 11 for z in j["zones"]), j
'
expect_ok ef_both "extfrag without a file prints both" extfrag
text_check ef_both "extfrag without a file: both files under their names" '
assert t.startswith("unusable_index:\n") and "\nextfrag_index:\n" in t, t
'

LS_RUN=(--boot "mem=256M" --run churn --ops 200000 --threads 2)
expect_ok ls_text "lockstat --run churn with two threads exits 0" lockstat "${LS_RUN[@]}"
text_check ls_text "lockstat (text): perf lock contention's header and rows" '
lines = t.splitlines()
assert re.match(r"^\s+contended\s+total wait\s+max wait\s+avg wait\s+type\s+caller$", lines[0]), lines[0]
row = r"^\s+\d+(\s+[\d.]+ (ns|us|ms|s|m|h)){3}\s+(mutex|spinlock)\s+\S+ \((zone|pcp)->lock Node \d+ \w+\)$"
for l in lines[1:]:
    assert re.match(row, l), l
'
expect_ok ls_json "lockstat --json exits 0" lockstat "${LS_RUN[@]}" --json
json_check ls_json "lockstat --json: the documented keys, most contended first" '
rows = j["locks"]
for r in rows:
    for k in ("name", "caller", "type", "contended", "total_wait_ns", "max_wait_ns", "avg_wait_ns"):
        assert k in r, k
    assert r["contended"] >= 1 and r["avg_wait_ns"] == r["total_wait_ns"] // r["contended"], r
    assert r["max_wait_ns"] <= r["total_wait_ns"], r
assert [r["contended"] for r in rows] == sorted((r["contended"] for r in rows), reverse=True)
'

# --- superblockinfo ---------------------------------------------------------------------------

SB_RUN=(--boot "mem=1G superblock_order=15" --run churn --ops 50000 --keep)
expect_ok sb_text "superblockinfo --run churn exits 0" superblockinfo "${SB_RUN[@]}"
text_check sb_text "superblockinfo (text): a summary, a header, a row per 128 MiB region" '
lines = t.splitlines()
m = re.match(r"^superblock_order 15: 8 regions of 32768 frames, (\d+) tainted$", lines[0])
assert m, lines[0]
assert lines[1].split() == ["region", "node", "zone", "start_pfn", "end_pfn", "free", "polluted",
    "Unmovable", "Movable", "Reclaimable", "HighAtomic", "CMA", "tainted"], lines[1]
rows = [l.split() for l in lines[2:]]
assert len(rows) == 8, rows
assert sum(r[-1] == "yes" for r in rows) == int(m.group(1)) >= 1, rows
for r in rows:
    assert sum(int(x) for x in r[7:12]) == 64, r
    assert (int(r[6]) > 0) == (r[-1] == "yes"), r
'
expect_ok sb_json "superblockinfo --json exits 0" superblockinfo "${SB_RUN[@]}" --json
json_check sb_json "superblockinfo --json: the same regions as the text" '
assert j["superblock_order"] == 15 and j["nr_regions"] == 8 and j["region_frames"] == 32768, j
assert len(j["regions"]) == 8
assert j["tainted"] == sum(r["tainted"] for r in j["regions"]) >= 1
for r in j["regions"]:
    assert r["end_pfn"] - r["start_pfn"] == 32768 and 0 <= r["free"] <= 32768, r
    assert r["polluted"] == r["pageblocks"]["Unmovable"] + r["pageblocks"]["Reclaimable"] + r["pageblocks"]["HighAtomic"], r
'
expect_ok sb_off "superblockinfo with superblock_order=0 exits 0" superblockinfo
text_check sb_off "superblockinfo says when superblocks are off" '
assert t == "superblocks off (superblock_order=0)\n", t
'

# --- compaction workloads ---------------------------------------------------------------------

expect_ok hf_cmp "bench highalloc-frag --compare --folio-order 4 --json exits 0" \
	bench highalloc-frag --compare --folio-order 4 --runs 1 --boot "mem=64M backing=anon" --json
json_check hf_cmp "highalloc-frag --compare: both modes, %change, order-4 folios whole vs split" '
for mode in ("split_folios", "default"):
    m = j[mode]
    for k in ("success_pct", "pages_scanned", "pages_migrated", "folios_migrated_whole", "folios_split"):
        assert isinstance(m[k], (int, float)), (mode, k)
    assert set(m["latency_ns"]) == {"mean", "p95", "max"}, m["latency_ns"]
    assert m["data"].startswith("verified"), m["data"]
    assert m["summary"]["success_pct"]["samples"], m["summary"]
assert j["split_folios"]["folios_split"] > 0 and j["split_folios"]["folios_migrated_whole"] == 0
assert j["default"]["folios_split"] == 0 and j["default"]["folios_migrated_whole"] > 0
assert "success_pct" in j["change_pct"] and "mean" in j["change_pct"]["latency_ns"]
'
expect_ok hf_text "bench highalloc-frag --compare (text) exits 0" bench highalloc-frag --compare --runs 1 --boot "mem=64M"
text_check hf_text "highalloc-frag --compare prints the LKP table" '
assert re.search(r"%stddev\s+%change\s+%stddev", t), t
assert re.search(r"^\s+[\d.]+\s+\S+%?\s+[\d.]+\s+highalloc-frag\.success_pct$", t, re.M), t
'
# Regions above the pageblock order: the zones come from the API (a parse of
# the zoneinfo JSON once stopped matching and reported 0 regions beside 2 blocks).
expect_ok hf_gig "bench highalloc-frag --order 18 on 16G exits 0" \
	bench highalloc-frag --order 18 --runs 1 --boot "mem=16G max_order=18" --json
json_check hf_gig "highalloc-frag --order 18: regions eligible, obtainable at least the blocks formed" '
assert j["regions_eligible"] >= 1, j["regions_eligible"]
assert j["regions_eligible"] >= j["regions_obtainable"] >= j["blocks"] >= 1, j
assert 0 < j["region_success_pct"] <= 100, j["region_success_pct"]
'
expect_ok tc_json "bench thpcompact --threads 2 --json exits 0" \
	bench thpcompact --threads 2 --runs 1 --boot "mem=64M backing=anon" --json
json_check tc_json "thpcompact --json: the documented keys, data verified" '
for k in ("success_pct", "pages_scanned", "pages_migrated", "folios_migrated_whole", "folios_split"):
    assert isinstance(j[k], (int, float)), k
assert set(j["latency_ns"]) == {"mean", "p95", "max"}
assert 0 < j["success_pct"] <= 100 and j["attempts"] >= j["blocks"] > 0, j
assert j["data"].startswith("verified"), j["data"]
'
expect_ok cc_json "bench compact-copy --json exits 0" bench compact-copy --runs 1 --boot "mem=64M backing=anon" --json
json_check cc_json "compact-copy --json: both bandwidths and their ratio" '
for k in ("memcpy_mib_per_s", "compact_mib_per_s", "ratio_pct", "pages_migrated"):
    assert j[k]["median"] > 0, k
'
expect_refused cc_meta "compact-copy refuses a metadata-only pool" 'backed pool' \
	bench compact-copy --runs 1 --boot "mem=64M"
expect_ok soak_json "bench soak --seconds 1 --json exits 0" \
	bench soak --seconds 1 --boot "mem=32M backing=anon cma=4M kcompactd=manual" --json
json_check soak_json "soak --json: work done, every check clean, no frame lost" '
assert j["operations"] > 0 and j["allocations"] > 0 and j["checks"] > 0, j
assert j["validates"] >= 2 and j["validate_failures"] == 0, j
assert j["corrupt"] == 0 and j["lost_frames"] == 0 and j["result"] == "ok", j
'
expect_refused soak_meta "soak refuses a metadata-only pool" 'backed pool' \
	bench soak --seconds 1 --boot "mem=32M"

# --- bad boot lines ---------------------------------------------------------------------

bad_boot() {
	local sub="$1" boot="$2" key="$3" n="bad$4"
	run "$n" "$sub" --boot "$boot"
	local rc; rc="$(rc_of "$n")"
	if [ "$rc" != 0 ] && grep -q -- "$key" "$TMP/$n.err"; then
		pass "$sub --boot \"$boot\" fails (rc $rc) naming $key on stderr"
	else
		fail "$sub --boot \"$boot\" fails naming $key on stderr" "rc $rc" \
			"stderr: $(head -c 300 "$TMP/$n.err")" "stdout: $(head -c 200 "$TMP/$n.out")"
	fi
}
bad_boot info "max_order=41" max_order 1
bad_boot info "bogus=1" bogus 2
bad_boot info "mem=1Q" mem 3
bad_boot info "page_shift=13" page_shift 4
bad_boot info "mem=64M pageblock_order_ceil=11" pageblock_order_ceil 5
bad_boot buddyinfo "numa=0" numa 6
bad_boot pagetypeinfo "thp=2" thp 7
bad_boot vmstat "mem=1G memhole=2G-3G" memhole 8
bad_boot vmstat "watermark_scale_factor=5000" watermark_scale_factor 9

# --- --help and usage errors --------------------------------------------------------------

for sub in info buddyinfo pagetypeinfo vmstat bench ctl; do
	run "help_$sub" "$sub" --help
	if [ "$(rc_of "help_$sub")" = 0 ] && [ -s "$TMP/help_$sub.out" -o -s "$TMP/help_$sub.err" ]; then
		if grep -q -- '--boot' "$TMP/help_$sub.out" "$TMP/help_$sub.err"; then
			pass "$sub --help works and mentions --boot"
		else
			fail "$sub --help mentions --boot" "$(head -c 300 "$TMP/help_$sub.out")"
		fi
	else
		fail "$sub --help works" "rc $(rc_of "help_$sub")"
	fi
done
run help_top --help
if [ "$(rc_of help_top)" = 0 ] && grep -q 'buddyinfo' "$TMP/help_top.out" "$TMP/help_top.err"; then
	pass "pagealloc --help lists the subcommands"
else
	fail "pagealloc --help lists the subcommands" "rc $(rc_of help_top)"
fi
run nosuch no-such-subcommand
if [ "$(rc_of nosuch)" != 0 ] && [ -s "$TMP/nosuch.err" ]; then
	pass "an unknown subcommand fails with a message"
else
	fail "an unknown subcommand fails with a message" "rc $(rc_of nosuch)"
fi
run badopt info --no-such-option
if [ "$(rc_of badopt)" != 0 ] && [ -s "$TMP/badopt.err" ]; then
	pass "an unknown option fails with a message"
else
	fail "an unknown option fails with a message" "rc $(rc_of badopt)"
fi

finish
