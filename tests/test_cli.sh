#!/usr/bin/env bash
# The `pagealloc` program: info/buddyinfo/pagetypeinfo/vmstat/ctl with --boot,
# --json output that parses and has the documented keys, the seed 004 values,
# /proc text formats, --help for every subcommand, and bad boot lines that exit
# non-zero with the message on stderr.
#
# Usage: bash tests/test_cli.sh PATH-TO-pagealloc   (or $PAGEALLOC)
set -u

PA="${1:-${PAGEALLOC:-}}"
if [ -z "$PA" ] || [ ! -x "$PA" ]; then
	echo "usage: $0 PATH-TO-pagealloc" >&2
	exit 2
fi
command -v python3 >/dev/null || { echo "python3 is needed" >&2; exit 2; }

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
passed=0
failed=0

pass() { passed=$((passed + 1)); echo "[  OK  ] $1"; }
fail() { failed=$((failed + 1)); echo "[ FAIL ] $1"; shift; for l in "$@"; do echo "    $l"; done; }

# run NAME ARGS...: run the program, keep stdout/stderr/status in $TMP/NAME.*
run() {
	local name="$1"; shift
	"$PA" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
	echo $? >"$TMP/$name.rc"
}
rc_of() { cat "$TMP/$1.rc"; }

# expect_ok NAME DESC ARGS...: exit status 0
expect_ok() {
	local name="$1" desc="$2"; shift 2
	run "$name" "$@"
	if [ "$(rc_of "$name")" = 0 ]; then
		pass "$desc"
	else
		fail "$desc" "pagealloc $* exited $(rc_of "$name")" "stderr: $(head -c 400 "$TMP/$name.err")"
	fi
}

# json_check NAME DESC PYTHON: the stdout of NAME parses as JSON (bound to j);
# PYTHON is a series of assert statements.
json_check() {
	local name="$1" desc="$2" code="$3"
	if python3 - "$TMP/$name.out" "$code" >"$TMP/$name.py" 2>&1 <<'EOF'
import json, sys
with open(sys.argv[1]) as f:
    j = json.load(f)
exec(sys.argv[2])
EOF
	then
		pass "$desc"
	else
		fail "$desc" "$(tail -n 3 "$TMP/$name.py")" "output: $(head -c 300 "$TMP/$name.out")"
	fi
}

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
assert [z["name"] for z in zones] == ["Normal"], zones
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
assert set(zones) == {"Normal", "Movable"}, zones
assert zones["Movable"]["start_pfn"] == (768 << 20) // 4096
assert zones["Movable"]["end_pfn"] == (1 << 30) // 4096
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
assert z["node"] == 0 and z["zone"] == "Normal", z
assert z["free"] == [0] * 10 + [16], z["free"]
'

expect_ok buddy_text "buddyinfo (text) exits 0" buddyinfo --boot "mem=64M min_free_kbytes=0"
expected="$(printf 'Node %d, zone %8s ' 0 Normal; for o in $(seq 0 9); do printf '%6d ' 0; done; printf '%6d ' 16)"
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

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
