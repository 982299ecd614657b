#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tools/trace_mix.py, which derives fragbench's allocation mix from a trace,
# on a hand-made trace whose classes, shares, survivors and lifetimes are
# worked out below: a free matches the live allocation of the same pfn and
# order, failed attempts (pfn 0) and unmatched frees count for nothing.
#
# Usage: bash tests/test_trace_mix.sh PATH-TO-pagealloc   (or $PAGEALLOC)
set -u
source "$(dirname "${BASH_SOURCE[0]}")/cli_helpers.bash" "$@"
MIX="$(dirname "${BASH_SOURCE[0]}")/../tools/trace_mix.py"

alloc() { echo "  t-1 [000] .....  1.0: mm_page_alloc: page=0 pfn=$1 order=$2 migratetype=$3 gfp_flags=$4"; }
free() { echo "  t-1 [000] .....  1.0: mm_page_free: page=0 pfn=$1 order=$2"; }
{
	alloc 0x10 0 0 "GFP_KERNEL"          # unmovable, clock 1
	alloc 0x20 1 2 "GFP_KERNEL|__GFP_RECLAIMABLE"  # reclaimable, clock 3
	alloc 0x30 0 1 "GFP_HIGHUSER_MOVABLE"   # anonymous, clock 4
	alloc 0x40 0 1 "GFP_NOFS|__GFP_MOVABLE" # page cache (readahead), clock 5
	alloc 0x41 0 1 "GFP_HIGHUSER_MOVABLE|__GFP_WRITE" # page cache (a write), clock 6
	alloc 0 0 0 "GFP_KERNEL"             # a failed attempt
	alloc 0x200 9 1 "GFP_TRANSHUGE"      # THP, clock 518
	free 0x10 0                        # unmovable lived 517 frames
	free 0x30 0                        # anonymous lived 514 frames
	free 0x99 0                        # never allocated
	free 0x20 0                        # wrong order: the order-1 block stays live
	alloc 0x50 0 0 "GFP_KERNEL"          # unmovable, clock 519
	free 0x50 0                        # lived 0 frames
	echo "  t-1 [000] .....  1.0: mm_page_pcpu_drain: page=0 pfn=0x60 order=0 migratetype=1"
} >"$TMP/trace.txt"

if python3 "$MIX" "$TMP/trace.txt" 100 >"$TMP/mix.out" 2>"$TMP/mix.err"; then
	pass "trace_mix.py reads a trace file"
else
	fail "trace_mix.py reads a trace file" "$(head -c 400 "$TMP/mix.err")"
fi
text_check mix "totals: 519 frames on 100 managed, turnover 5.19" '
assert "frames allocated 519, managed 100, turnover 5.19" in t, t'
text_check mix "classes: frames %, live at the end %, orders, lifetimes" '
rows = {l.split()[0]: l for l in t.splitlines()[2:]}
def row(c):
    f = rows[c].split()
    return float(f[1]), float(f[2]), rows[c]
assert row("unmovable")[:2] == (round(200 / 519, 3), 0.0), row("unmovable")
assert "{0: 2}" in rows["unmovable"], rows["unmovable"]
assert row("reclaimable")[:2] == (round(200 / 519, 3), 100.0), row("reclaimable")
assert "{1: 1}" in rows["reclaimable"] and rows["reclaimable"].endswith("-"), rows["reclaimable"]
assert row("anon")[:2] == (round(100 / 519, 3), 0.0), row("anon")
assert rows["anon"].split()[-11:] == ["5.1400"] * 11, rows["anon"]
assert row("pagecache")[:2] == (round(200 / 519, 3), 100.0), row("pagecache")
assert "{0: 2}" in rows["pagecache"], rows["pagecache"]
assert row("thp")[:2] == (round(51200 / 519, 3), 100.0), row("thp")
assert "{9: 1}" in rows["thp"], rows["thp"]
# Two unmovable lifetimes, 0.00 and 5.17: p10..p40 the first, p50 on the second.
q = rows["unmovable"].split()[-11:]
assert q[:4] == ["0.0000"] * 4 and q[4:] == ["5.1700"] * 7, q'

mkdir -p "$TMP/dir"
python3 -c 'import lzma, sys; open(sys.argv[2], "wb").write(lzma.compress(open(sys.argv[1], "rb").read()))' \
	"$TMP/trace.txt" "$TMP/dir/trace.txt.xz"
python3 "$MIX" "$TMP/dir" 100 >"$TMP/dir.out" 2>&1
if cmp -s "$TMP/dir.out" "$TMP/mix.out"; then
	pass "a trace directory's trace.txt.xz reads the same"
else
	fail "a trace directory's trace.txt.xz reads the same" "$(diff "$TMP/mix.out" "$TMP/dir.out" | head -5)"
fi
finish
