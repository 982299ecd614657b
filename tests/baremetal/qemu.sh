#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Boot examples/baremetal's kernel under QEMU (TCG, so that no KVM is needed)
# and check its serial output: every step passed, the reports printed,
# pa_validate's verdict ok, and isa-debug-exit's status for "passed" (0x10:
# QEMU exits 33). Skipped (77) where qemu-system-x86_64 is not installed.
# Usage: qemu.sh KERNEL.elf
set -u
kernel=$1
qemu=$(command -v qemu-system-x86_64) || {
	echo "SKIP: qemu-system-x86_64 is not installed (Debian: apt-get install qemu-system-x86)"
	exit 77
}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
timeout 300 "$qemu" -accel tcg -nographic -no-reboot -m 256M -kernel "$kernel" \
	-device isa-debug-exit,iobase=0xf4,iosize=0x04 </dev/null >"$out" 2>&1
rc=$?
# The kernel's lines only (the firmware draws its banner on the same port).
tr -d '\r' <"$out" | sed -n '/^.*pagealloc bare-metal kernel/,$p' | sed 's/^.*\(pagealloc bare-metal kernel\)/\1/'
fail=0
for want in "page tables: .* maps 64 pool pages" "orders allocated, written and freed: 11" \
	"compaction: owned folios moved, bytes checked: [1-9]" "cma: frames taken and released" \
	"^/proc/buddyinfo" "^Node 0, zone    DMA32 " "^/proc/zoneinfo" "pa_validate: ok" \
	"baremetal: passed"; do
	if ! tr -d '\r' <"$out" | grep -q -- "$want"; then
		echo "FAIL: no line matching '$want' in the serial output"
		fail=1
	fi
done
if tr -d '\r' <"$out" | grep -q "FAIL"; then
	fail=1
fi
if [ "$rc" -ne 33 ]; then
	echo "FAIL: QEMU exited $rc, not 33 (isa-debug-exit 0x10: passed)"
	fail=1
fi
exit $fail
