#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `pagealloc map`: the text map has one character per pageblock and marks
# zones, nodes and CMA areas; --svg writes well-formed SVG with one cell per
# pageblock that rsvg-convert renders; --boot, --ctl and --run are taken.
#
# Usage: bash tests/test_map.sh PATH-TO-pagealloc   (or $PAGEALLOC)
set -u

source "$(dirname "${BASH_SOURCE[0]}")/cli_helpers.bash" "$@"

BOOT="mem=6G numa=2 cma=64M movablecore=1G memhole=2560M-2816M"

expect_ok text "map (text) exits 0" map --boot "$BOOT" --run churn --ops 20000 --keep
text_check text "text map: one character per pageblock (3072 of 2 MiB), zones, nodes, CMA" '
cells = "".join(m.group(1) for m in re.finditer(r"^ *[0-9.]+ GiB  (.*)$", t, re.M))
assert len(cells) == 3072, len(cells)
assert set(cells) <= set("umrhciUMRHCIp. "), set(cells)
assert cells.count(" ") == 128, cells.count(" ")          # the 256 MiB hole
assert cells.count("c") + cells.count("C") == 32, cells    # 64 MiB of CMA
assert any(c.isupper() for c in cells), "the churn left nothing allocated"
for mark in ("node 0, zone DMA32", "node 1, zone DMA32", "node 1, zone Normal",
             "node 1, zone Movable", "cma0 starts", "cma0 ends", "== 1 GiB", "== 5 GiB"):
    assert mark in t, mark
'

expect_ok svg "map --svg exits 0" map --boot "$BOOT" --ctl pcp/orders/0/enabled=1 \
	--run churn --ops 20000 --keep --svg "$TMP/map.svg"
cp "$TMP/map.svg" "$TMP/svg_file.out" 2>/dev/null
if python3 - "$TMP/map.svg" >"$TMP/svg.log" 2>&1 <<'PY'
import sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == ns + "svg", root.tag
rects = root.findall(ns + "rect")
cells = [r for r in rects if r.get("width") == r.get("height") == "10"]
assert len(cells) == 3072, len(cells)
assert sum(r.get("fill") == "black" for r in cells) == 128           # the hole
assert any(r.get("fill") == "#ffd700" for r in rects), "no per-CPU frames drawn"
labels = " ".join(t.text or "" for t in root.iter(ns + "text"))
for mark in ("node 0 DMA32", "node 1 Normal", "node 1 Movable", "cma0 starts", "5 GiB"):
    assert mark in labels, mark
PY
then
	pass "the SVG parses: one cell per pageblock, holes, per-CPU frames, boundaries named"
else
	fail "the SVG parses: one cell per pageblock, holes, per-CPU frames, boundaries named" \
		"$(tail -n 3 "$TMP/svg.log")"
fi
if ! command -v rsvg-convert >/dev/null; then
	fail "rsvg-convert renders the SVG" "rsvg-convert is not installed (Debian: librsvg2-bin)"
elif rsvg-convert "$TMP/map.svg" -o "$TMP/map.png" 2>"$TMP/rsvg.err" && [ -s "$TMP/map.png" ]; then
	pass "rsvg-convert renders the SVG"
else
	fail "rsvg-convert renders the SVG" "$(head -c 300 "$TMP/rsvg.err")"
fi

expect_refused svg_bad "map --svg into a missing directory fails, naming the file" \
	"/nonexistent/map.svg" map --boot "mem=64M" --svg /nonexistent/map.svg
expect_refused map_ctl "map --ctl with an unknown path fails" "no such path" \
	map --boot "mem=64M" --ctl no/such=1

finish
