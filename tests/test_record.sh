#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `pagealloc record` on this machine's own kernel, for real: a few seconds
# around a small workload (page cache, a file written and read, forks) with a
# snapshot taken from inside it, then `pagealloc replay` of the folder: no bad
# page, no allocation failed that the kernel served, the end snapshot's
# distance printed. Also: the machine's tracing state is as it was after a
# recording and after a Ctrl-C, and the errors without root and on bad use.
#
# Skipped (exit 77) where tracefs cannot be used: not root, no tracefs, or a
# container that may not mount it.
#
# Usage: bash tests/test_record.sh PATH-TO-pagealloc   (or $PAGEALLOC)
set -u

source "$(dirname "${BASH_SOURCE[0]}")/cli_helpers.bash" "$@"
PA="$(cd "$(dirname "$PA")" && pwd)/$(basename "$PA")"

skip() { echo "SKIPPED: $1"; exit 77; }
[ "$(id -u)" = 0 ] || skip "pagealloc record needs root to use tracefs; run as root to test it"
[ -d /sys/kernel/tracing ] || skip "no /sys/kernel/tracing: this kernel has no tracefs"

# What "the machine's tracing state" means here: mounts, instances, the
# top-level buffer, clock, overwrite option and enabled events.
tracing_state() {
	grep -E ' /sys/kernel/(tracing|debug) ' /proc/mounts | awk '{print $2, $3}' | sort
	if [ -d /sys/kernel/tracing/instances ]; then
		ls /sys/kernel/tracing/instances
		cat /sys/kernel/tracing/buffer_size_kb /sys/kernel/tracing/trace_clock \
			/sys/kernel/tracing/options/overwrite /sys/kernel/tracing/set_event \
			/sys/kernel/tracing/tracing_on
	fi
}
tracing_state > "$TMP/state.before"

# The workload: page cache of a file written and read back, forks, a
# snapshot folder taken from inside it, a marker.
cat > "$TMP/work.sh" <<EOF
set -e
head -c 24M /dev/urandom > "$TMP/data"
cat "$TMP/data" > /dev/null
for i in 1 2 3 4 5 6 7 8; do sh -c : ; done
"$PA" record --snapshot mid
"$PA" record --mark "PHASE 1 second half"
cp "$TMP/data" "$TMP/data2"
rm -f "$TMP/data" "$TMP/data2"
sleep 1
EOF

"$PA" record -o "$TMP/rec" --mark "PHASE 0 test_record" -- bash "$TMP/work.sh" \
	> "$TMP/out" 2> "$TMP/rec.err"
rc=$?
if [ $rc != 0 ] && grep -qE 'cannot mount tracefs|has no tracefs|no instances/|needs root|cannot create the tracing instance' "$TMP/rec.err"; then
	cat "$TMP/rec.err"
	skip "tracefs cannot be used here"
fi
if [ $rc = 0 ]; then pass "record exits 0 and calls the recording complete"; else fail "record exits 0 (rc $rc)" "$(head -n 8 "$TMP/rec.err")"; fi
cat "$TMP/out"

check "the folder has the layout the replay reads" \
	bash -c "cd '$TMP/rec' && for f in trace.txt.xz uname.txt cmdline.txt info/iomem info/sysctl_vm.txt info/trace_stats.txt info/ftrace_setup.txt formats/header_page formats/kmem/mm_page_alloc.format; do [ -s \$f ] || { echo missing \$f; exit 1; }; done; for s in before mid after; do for f in buddyinfo pagetypeinfo zoneinfo vmstat meminfo uptime; do [ -s \$s/\$f ] || { echo missing \$s/\$f; exit 1; }; done; done; [ ! -e INCOMPLETE ]"

check "the trace is xz with the events, both markers and the snapshot marker" \
	bash -c "xz -dc '$TMP/rec/trace.txt.xz' > '$TMP/trace.txt' && grep -q ' mm_page_alloc: ' '$TMP/trace.txt' && grep -q ' mm_page_free: ' '$TMP/trace.txt' && grep -q 'tracing_mark_write: PHASE 0 test_record' '$TMP/trace.txt' && grep -q 'tracing_mark_write: PHASE 1 second half' '$TMP/trace.txt' && grep -q 'tracing_mark_write: SNAPSHOT mid' '$TMP/trace.txt'"

check "the kernel lost no events (per-CPU stats)" \
	bash -c "! grep -E '^(overrun|commit overrun|dropped events): [1-9]' '$TMP/rec/info/trace_stats.txt' && grep -q '^dropped events: 0' '$TMP/rec/info/trace_stats.txt'"

check "snapshots are in the trace's clock: before < mid < after, inside the events' span" \
	bash -c "python3 - '$TMP/rec' '$TMP/trace.txt' <<'PY'
import sys, re
d, trace = sys.argv[1], sys.argv[2]
up = {s: float(open(f'{d}/{s}/uptime').read().split()[0]) for s in ('before', 'mid', 'after')}
ts = [float(m.group(1)) for m in (re.search(r'\] \S+ +(\d+\.\d+): ', l) for l in open(trace)) if m]
assert up['before'] <= min(ts) and max(ts) <= up['after'], (up, min(ts), max(ts))
assert up['before'] < up['mid'] < up['after'], up
PY"

tracing_state > "$TMP/state.after"
check "the machine's tracing state is as it was" diff "$TMP/state.before" "$TMP/state.after"

"$PA" replay "$TMP/rec" > "$TMP/table" 2> "$TMP/replay.err"
"$PA" replay "$TMP/rec" --json > "$TMP/r.json" 2>> "$TMP/replay.err"
check "the replay of the recording: no bad page, nothing failed that the kernel served" \
	bash -c "python3 - '$TMP/r.json' <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d['events'] > 0 and d['allocs'] > 0, d['events']
assert d['bad_page'] == 0, d['bad_page']
assert d['failed_kernel_served'] == 0, d['failed_kernel_served']
assert d['validate_failures'] == 0, d['validate_failures']
names = [s['name'] for s in d['snapshots']]
assert names == ['before', 'mid', 'after'], names
for s in d['snapshots']:
    print(f\"{s['name']}: distance {s['tvd']:.4f}, free {s['kernel']['free']} (kernel) {s['pagealloc']['free']} (pagealloc), per-CPU {s['kernel']['pcp']} / {s['pagealloc']['pcp']}\")
print(f\"events {d['events']}, allocations {d['allocs']}, frees {d['frees']}, kernel-failed {d['kernel_failed_served']} served\")
PY"
grep -E '^(after|before|mid) \(uptime|total variation distance' "$TMP/table"

# A guest whose balloon reports free pages (virtio feature bit 5) has info/page_reporting.txt,
# and the replay says the recording cannot show those reports; a machine without one has neither.
reporting=no
for f in /sys/bus/virtio/drivers/virtio_balloon/virtio*/features; do
	[ -r "$f" ] && [ "$(cut -c6 "$f")" = 1 ] && reporting=yes
done
if [ $reporting = yes ]; then
	check "free page reporting is recorded, and the replay says so" \
		bash -c "grep -q '^reporting_device virtio' '$TMP/rec/info/page_reporting.txt' && grep -q '^free page reporting: ' '$TMP/table' && grep -q '\"page_reporting_order\": ' '$TMP/r.json'"
else
	check "no reporting device: no page_reporting.txt, nothing said" \
		bash -c "[ ! -e '$TMP/rec/info/page_reporting.txt' ] && ! grep -q '^free page reporting: ' '$TMP/table'"
fi

# Ctrl-C: the recording stops early, is kept, and the tracing state is restored.
"$PA" record -o "$TMP/rec2" --seconds 60 > "$TMP/out2" 2> "$TMP/err2" &
pid=$!
sleep 3
kill -INT $pid
wait $pid
rc=$?
check "Ctrl-C ends the recording early and keeps it" \
	bash -c "[ $rc = 0 ] && [ -s '$TMP/rec2/trace.txt.xz' ] && [ -s '$TMP/rec2/after/buddyinfo' ]"
tracing_state > "$TMP/state.after2"
check "after Ctrl-C the machine's tracing state is as it was" diff "$TMP/state.before" "$TMP/state.after2"

# Errors: without root, bad use.
if command -v setpriv > /dev/null; then
	check "without root: exit 1 and a message saying root is needed" \
		bash -c "! setpriv --reuid=65534 --regid=65534 --clear-groups '$PA' record -o '$TMP/rec3' --seconds 1 2> '$TMP/e1'; [ \$(setpriv --reuid=65534 --regid=65534 --clear-groups '$PA' record -o '$TMP/rec3' --seconds 1 >/dev/null 2>&1; echo \$?) = 1 ] && grep -q 'needs root' '$TMP/e1'"
fi
check "a bad option is a usage error naming it" \
	bash -c "'$PA' record --seconds abc 2> '$TMP/e2'; [ \$? = 2 ] && grep -q 'seconds' '$TMP/e2'"
check "a folder that is not empty is refused" \
	bash -c "'$PA' record -o '$TMP/rec' --seconds 1 2> '$TMP/e4'; [ \$? = 1 ] && grep -q 'not empty' '$TMP/e4'"
check "--snapshot outside a recording is refused" \
	bash -c "env -u PAGEALLOC_RECORD_DIR '$PA' record --snapshot x 2> '$TMP/e3'; [ \$? = 2 ] && grep -q 'inside a' '$TMP/e3'"

finish
