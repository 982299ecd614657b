#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The program's version, --ctl PATH=VALUE on every command, the ctl listing
# (text and JSON), progress on stderr (shown on a terminal for a command
# longer than 2 s, never when stderr is a file), and the figures users read:
# counts as JSON integers, page-fault1's contended counts as medians with no
# ratio when the "on" count is 0, churn's accounting of every frame.
#
# Usage: bash tests/test_cli_knobs.sh PATH-TO-pagealloc   (or $PAGEALLOC)
set -u

source "$(dirname "${BASH_SOURCE[0]}")/cli_helpers.bash" "$@"

# --- version ---------------------------------------------------------------------------

expect_ok version "--version exits 0" --version
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
want="$(sed -n 's/^project(pagealloc VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")"
if [ -n "$want" ] && [ "$(cat "$TMP/version.out")" = "pagealloc $want" ]; then
	pass "--version prints the version of CMakeLists.txt ($want)"
else
	fail "--version prints the version of CMakeLists.txt" "got $(cat "$TMP/version.out"), want $want"
fi

# --- --ctl on every command -------------------------------------------------------------

expect_ok ctl_info "info --ctl min_free_kbytes=8192 exits 0" \
	info --json --boot "mem=1G" --ctl min_free_kbytes=8192
json_check ctl_info "--ctl min_free_kbytes=8192 doubles the min watermark (1024 -> 2048)" '
z = j["nodes"][0]["zones"][0]
assert z["watermark_min"] == 2048, z
'
expect_ok ctl_two "ctl reads back two --ctl settings" \
	ctl --boot "mem=64M" --ctl pcp/orders/4/enabled=1 --ctl watermark_scale_factor=50 --json
json_check ctl_two "the listing shows both values set by --ctl, in effect" '
assert j["pcp/orders/4/enabled"]["value"] == 1, j["pcp/orders/4/enabled"]
assert j["watermark_scale_factor"]["value"] == 50, j["watermark_scale_factor"]
'
for cmd in buddyinfo pagetypeinfo vmstat zoneinfo lockstat extfrag; do
	expect_ok "ctl_$cmd" "$cmd --run churn --ctl pcp/orders/0/enabled=0 exits 0" \
		"$cmd" --boot "mem=64M" --ctl pcp/orders/0/enabled=0 --run churn --ops 2000
done
# With order 0 off the per-CPU lists, the churn's order-0 pages never sit there.
expect_ok ctl_zi "zoneinfo --json after churn with --ctl exits 0" \
	zoneinfo --boot "mem=64M" --ctl pcp/orders/0/enabled=0 --run churn --ops 2000 --json
expect_ok ctl_bench "bench alloc-free-hot --ctl pcp/orders/0/enabled=0 exits 0" \
	bench alloc-free-hot --ops 1000 --runs 1 --ctl pcp/orders/0/enabled=0
expect_refused ctl_nopath "--ctl no/such=1 is refused, naming the path" 'no/such=1: no such path' \
	buddyinfo --boot "mem=64M" --ctl no/such=1
expect_refused ctl_noeq "--ctl without = is a usage error" 'expected PATH=VALUE' \
	buddyinfo --boot "mem=64M" --ctl watermark_scale_factor
expect_refused ctl_badval "--ctl with a bad value fails in a workload" 'Invalid argument' \
	bench alloc-free-hot --ops 10 --runs 1 --ctl pcp/orders/0/enabled=7
if [ "$(rc_of ctl_noeq)" = 2 ]; then
	pass "--ctl without = exits 2"
else
	fail "--ctl without = exits 2" "rc $(rc_of ctl_noeq)"
fi

# --- the listing ------------------------------------------------------------------------

expect_ok ctl_list "ctl (no path) exits 0" ctl --boot "mem=64M"
if grep -Eq '^watermark_scale_factor +rw +10$' "$TMP/ctl_list.out" &&
	grep -Eq '^pcp/orders/10/enabled +rw +[01]$' "$TMP/ctl_list.out" &&
	grep -Eq '^pcp/drain +wo +-$' "$TMP/ctl_list.out" &&
	grep -Eq '^max_order +rw +10$' "$TMP/ctl_list.out"; then
	pass "ctl lists each path with its value, one line per pcp order"
else
	fail "ctl lists each path with its value, one line per pcp order" \
		"$(head -n 20 "$TMP/ctl_list.out")"
fi
expect_ok ctl_json "ctl --json exits 0" ctl --boot "mem=64M" --json
json_check ctl_json "ctl --json: every knob with mode and an integer value" '
assert j["min_free_kbytes"] == {"mode": "rw", "value": 1024, "report": False}, j["min_free_kbytes"]
assert [k for k in j if k.startswith("pcp/orders/")] == ["pcp/orders/%d/enabled" % n for n in range(11)]
assert j["pcp/drain"]["value"] is None and j["pcp/drain"]["mode"] == "wo"
assert j["vmstat"]["report"] is True
'
expect_ok ctl_one_json "ctl PATH --json exits 0" ctl page_size --json
json_check ctl_one_json "ctl PATH --json gives path and integer value" '
assert j == {"path": "page_size", "value": 4096}, j
'

# --- figures -------------------------------------------------------------------------------

expect_ok cma_int "bench cma-alloc --runs 1 --json exits 0" bench cma-alloc --runs 1 --json
json_check cma_int "JSON counts are integers, not 8143.000" '
m = j["folios_moved"]
assert isinstance(m["median"], int) and isinstance(m["samples"][0], int), m
assert isinstance(j["latency_ms"]["median"], (int, float))
'
expect_ok hotplug "bench hotplug --runs 1 --json exits 0" bench hotplug --runs 1 --json \
	--boot "mem=512M backing=anon kcompactd=manual"
json_check hotplug "hotplug: every frame of the 128 MiB block moved, as order-2 folios" '
assert j["block_frames"] == 32768, j["block_frames"]
assert j["frames_moved"]["median"] == 32768 and j["folios_moved"]["median"] == 8192, j
assert j["offline_ms"]["median"] > 0 and j["us_per_folio"]["median"] > 0
'
expect_ok pf1 "page-fault1 --compare with one thread exits 0" \
	bench page-fault1 --compare --threads 1 --iterations 2 --runs 3 --json
json_check pf1 "page-fault1: contended counts are medians with min and max; ratio null when on is 0" '
off, on = j["off"]["zone_lock_contended"], j["on"]["zone_lock_contended"]
for m in (off, on):
    assert len(m["samples"]) == 3 and m["min"] <= m["median"] <= m["max"], m
r = j["zone_lock_contended_ratio"]
if on["median"] == 0:
    assert r is None, r
else:
    assert abs(r - off["median"] / on["median"]) < 1e-3, (r, off, on)
'
expect_ok pf1_text "page-fault1 --compare text exits 0" \
	bench page-fault1 --compare --threads 1 --iterations 2 --runs 3
text_check pf1_text "page-fault1 text: the ratio is n/a or a number, never 0 counted as 1" '
m = re.search(r"^zone_lock_contended_ratio +(\S+)$", t, re.M)
assert m, t[-400:]
on = re.search(r"median of 3 runs: (\d+) off, (\d+) on", t)
assert on, t[-400:]
assert (m.group(1) == "n/a") == (on.group(2) == "0"), (m.group(1), on.groups())
'
expect_ok bulk_cmp "alloc-free-bulk --compare exits 0" \
	bench alloc-free-bulk --order 9 --compare --runs 3 --boot "mem=256M min_free_kbytes=0" --json
json_check bulk_cmp "alloc-free-bulk --compare: off and on alternate in one pool; on/off per pair" '
off, on = j["off"]["free_ns_per_op"], j["on"]["free_ns_per_op"]
r = j["free_on_off"]
assert len(off["samples"]) == len(on["samples"]) == len(r["samples"]) == 3, j
for a, b, x in zip(off["samples"], on["samples"], r["samples"]):
    assert abs(x - b / a) <= 1e-3 + 1e-3 * x, (a, b, x)  # printed to 3 decimals
assert isinstance(j["on"]["zone_lock_wait_ns"], int), j["on"]
'
expect_ok bulk_scale "alloc-free-bulk --scaling exits 0" \
	bench alloc-free-bulk --scaling --nr 4096 --runs 2 --boot "mem=256M min_free_kbytes=0" --json
json_check bulk_scale "alloc-free-bulk --scaling: one thread and two, speedup per pair" '
one, two = j["threads_1"]["ops_per_sec"], j["threads_2"]["ops_per_sec"]
for a, b, x in zip(one["samples"], two["samples"], j["speedup"]["samples"]):
    assert abs(x - b / a) <= 1e-3 + 1e-3 * x, (a, b, x)  # printed to 3 decimals
assert j["blocks"] == 4096 and "nr_cpus=2" in j["boot"], j
'
expect_ok churn_after "bench churn --json exits 0" bench churn --ops 20000 --boot "mem=64M" --json
json_check churn_after "churn: after freeing everything, every frame is in the buddy or on a per-CPU list" '
f = j["frames_after"]
assert f["managed"] == f["free_in_buddy"] + f["on_per_cpu_lists"] + f["allocated"] + f["other_reserved"], f
assert f["allocated"] == 0 and f["on_per_cpu_lists"] > 0, f
'

# --- progress -----------------------------------------------------------------------------

# Not a terminal: stderr stays empty even for a run longer than 2 s.
expect_ok quiet "bench churn --seconds 2.5 exits 0" bench churn --seconds 2.5 --boot "mem=64M"
if [ ! -s "$TMP/quiet.err" ]; then
	pass "no progress on stderr when it is not a terminal"
else
	fail "no progress on stderr when it is not a terminal" "$(head -c 300 "$TMP/quiet.err")"
fi
# A terminal: a pseudo-terminal as stderr gets what, percent and elapsed.
if python3 - "$PA" >"$TMP/tty.log" 2>&1 <<'PY'
import os, pty, subprocess, sys
master, slave = pty.openpty()
p = subprocess.Popen([sys.argv[1], "bench", "churn", "--runs", "3", "--seconds", "1.2",
                      "--boot", "mem=64M"], stdout=subprocess.DEVNULL, stderr=slave)
os.close(slave)
seen = b""
while True:
    try:
        chunk = os.read(master, 4096)
    except OSError:
        break
    if not chunk:
        break
    seen += chunk
assert p.wait() == 0
text = seen.decode()
print(repr(text[:300]))
assert "churn" in text and "%" in text and "s elapsed" in text, text
import re
pct = [float(x) for x in re.findall(r"(\d+\.\d)%", text)]
# The last run may end (100%) a moment before the line is cleared.
assert pct and pct == sorted(pct) and 0 < pct[-1] <= 100, pct
PY
then
	pass "progress on a terminal names the workload, the percent and the time"
else
	fail "progress on a terminal names the workload, the percent and the time" "$(tail -n 3 "$TMP/tty.log")"
fi

finish
