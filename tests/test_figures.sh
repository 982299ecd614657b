#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The figures generator (tools/figures.py, `make figures`) in its --quick mode
# on a few sections: it runs, writes the machine table, each table after the
# commands that made it, and charts that are well-formed SVG.
#
# Usage: bash tests/test_figures.sh PATH-TO-pagealloc   (or $PAGEALLOC)
set -u

source "$(dirname "${BASH_SOURCE[0]}")/cli_helpers.bash" "$@"
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

if python3 "$SRC/tools/figures.py" --quick --only fast-paths,page-fault1,cma,replay --program "$PA" \
	--out "$TMP/figs/figures.md" >"$TMP/figs.out" 2>"$TMP/figs.err"; then
	pass "figures.py --quick writes figures.md"
else
	fail "figures.py --quick writes figures.md" "$(tail -n 5 "$TMP/figs.err")"
fi
cp "$TMP/figs/figures.md" "$TMP/figs_md.out" 2>/dev/null
text_check figs_md "figures.md: machine, commands before tables, no section left out" '
for k in ("## Machine", "| CPU |", "| cores |", "| memory |", "| commit |", "| date |"):
    assert k in t, k
for cmd in ("bench alloc-free-hot --order 0", "bench page-fault1 --compare", "bench cma-alloc"):
    assert re.search(r"^    \S*pagealloc " + re.escape(cmd), t, re.M), cmd
assert t.index("bench alloc-free-hot") < t.index("| order | ns per alloc+free pair |")
assert "thpcompact" not in t
'
if python3 - "$TMP/figs" >"$TMP/svg.log" 2>&1 <<'PY'
import glob, sys, xml.etree.ElementTree as ET
files = glob.glob(sys.argv[1] + "/figures-*.svg")
assert len(files) == 2, files
for f in files:
    root = ET.parse(f).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg", root.tag
    assert len(root.findall(".//{http://www.w3.org/2000/svg}rect")) > 3, f
PY
then
	pass "the charts are well-formed SVG"
else
	fail "the charts are well-formed SVG" "$(tail -n 3 "$TMP/svg.log")"
fi
if python3 "$SRC/tools/figures.py" --only no-such --program "$PA" --out "$TMP/x.md" 2>"$TMP/bad.err"; then
	fail "an unknown section is refused"
else
	grep -q "no section no-such" "$TMP/bad.err" && pass "an unknown section is refused" ||
		fail "an unknown section is refused" "$(cat "$TMP/bad.err")"
fi

finish
