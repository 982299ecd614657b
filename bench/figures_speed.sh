#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The allocation-speed figures as a Markdown section: instructions per
# alloc+free pair (callgrind), the hot pair's profile, timings (median, min,
# max of several runs), bulk frees with an order on and off the per-CPU
# lists, two-thread scaling with the zone lock's contention, and the
# compaction workloads that must not regress.
#
#   bench/figures_speed.sh [NEW [OLD]]
#
# NEW is the pagealloc program to measure (default ./build/pagealloc). With
# OLD, every row shows OLD -> NEW. RUNS (default 5) sets the repetitions of
# the timed workloads. Timings on a shared machine vary: compare medians and
# read min and max. Callgrind counts do not vary; valgrind has no restartable
# sequences, so there the CPU id comes from the cached sched_getcpu() path.
set -eu

NEW=${1:-./build/pagealloc}
OLD=${2:-}
RUNS=${RUNS:-5}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# metric FILE NAME -> "median min max" of a bench --json metric
metric() {
	tr -d '\n' <"$1" | sed -n "s/.*\"$2\": {\"median\": \([^,]*\), \"min\": \([^,]*\), \"max\": \([^,]*\),.*/\1 \2 \3/p"
}

# scalar FILE NAME -> a plain "name": value of a bench --json output
scalar() {
	tr -d '\n' <"$1" | sed -n "s/.*\"$2\": \([0-9.]*\).*/\1/p"
}

# fmt "median min max" -> "median (min-max)"
fmt() {
	set -- $1
	printf '%.2f (%.2f-%.2f)' "$1" "$2" "$3"
}

# both CELL_FOR_OLD CELL_FOR_NEW -> "old -> new", or "new" without OLD
both() {
	if [ -n "$OLD" ]; then printf '%s -> %s' "$1" "$2"; else printf '%s' "$2"; fi
}

# ir PROGRAM BOOT -> instructions per order-0 alloc+free pair: the difference of two runs
ir() {
	for n in 100000 200000; do
		valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.$n" "$1" bench alloc-free-hot \
			--order 0 --ops $n --runs 1 --boot "$2" 2>"$TMP/vg.$n" >/dev/null
	done
	a=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$TMP/vg.100000")
	b=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$TMP/vg.200000")
	echo $(((b - a) / 100000))
}

# timed PROGRAM OUT ARGS... -> bench --json into OUT
timed() {
	prog=$1 out=$2
	shift 2
	"$prog" bench "$@" --runs "$RUNS" --json >"$out"
}

HOT="mem=1G min_free_kbytes=0"
BULK="mem=4G min_free_kbytes=0"

echo "## Allocation speed"
echo
echo "Machine: $(uname -m), $(nproc) CPUs ($(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)); $(date -u '+%Y-%m-%d %H:%M UTC'); commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown); \`bench/figures_speed.sh\`, $RUNS runs per timing."
echo
echo "### Instructions per order-0 alloc+free pair (callgrind)"
echo
echo "| path | instructions | goal |"
echo "|---|---|---|"
new_hot=$(ir "$NEW" "$HOT")
new_buddy=$(ir "$NEW" "$HOT pcp_orders=none")
old_hot= old_buddy=
if [ -n "$OLD" ]; then
	old_hot=$(ir "$OLD" "$HOT")
	old_buddy=$(ir "$OLD" "$HOT pcp_orders=none")
fi
echo "| hot pair through the per-CPU lists (\`alloc-free-hot --order 0\`) | $(both "$old_hot" "$new_hot") | <= 100 |"
echo "| the buddy path (\`--boot \"$HOT pcp_orders=none\"\`) | $(both "$old_buddy" "$new_buddy") | <= 800 |"
echo
echo "Each count is the difference of runs of 200,000 and 100,000 pairs, divided by 100,000."
echo
echo "### Where the hot pair's instructions go"
echo
ir "$NEW" "$HOT" >/dev/null
echo '```'
callgrind_annotate "$TMP/cg.200000" 2>/dev/null | sed -n '/file:function/,$p' | sed 1,2d |
	sed 's/ \[.*\]$//' | tr -d , | awk '$1 >= 100000 && n++ < 12 {
		name = $0
		sub(/^ *[0-9]+ *\( *[0-9.]+%\) */, "", name)
		printf "%8.1f  %s\n", $1 / 200000, name
	}'
echo '```'
echo
echo "Self instructions per pair (\`callgrind_annotate\` of a run of 200,000 pairs, divided by"
echo "200,000; \`internal.h:f\` is what was inlined into f). Boot and shutdown add under one per pair."
echo
echo "### Timings (ns, median (min-max))"
echo
echo "| benchmark | figure |"
echo "|---|---|"
timed "$NEW" "$TMP/hot.new" alloc-free-hot --order 0
[ -n "$OLD" ] && timed "$OLD" "$TMP/hot.old" alloc-free-hot --order 0
echo "| hot order-0 pair (\`alloc-free-hot --order 0\`), goal <= 15 | $(both "$([ -n "$OLD" ] && fmt "$(metric "$TMP/hot.old" ns_per_op)")" "$(fmt "$(metric "$TMP/hot.new" ns_per_op)")") |"
for o in 0 9; do
	for which in NEW OLD; do
		eval prog=\$$which
		[ -z "$prog" ] && continue
		timed "$prog" "$TMP/on.$o.$which" alloc-free-bulk --order $o --boot "$BULK"
		timed "$prog" "$TMP/off.$o.$which" alloc-free-bulk --order $o --boot "$BULK pcp_orders=none"
	done
	ratio_new=$(awk -v a="$(metric "$TMP/on.$o.NEW" free_ns_per_op | cut -d' ' -f1)" \
		-v b="$(metric "$TMP/off.$o.NEW" free_ns_per_op | cut -d' ' -f1)" 'BEGIN { printf "%.2fx", a / b }')
	ratio_old=
	[ -n "$OLD" ] && ratio_old=$(awk -v a="$(metric "$TMP/on.$o.OLD" free_ns_per_op | cut -d' ' -f1)" \
		-v b="$(metric "$TMP/off.$o.OLD" free_ns_per_op | cut -d' ' -f1)" 'BEGIN { printf "%.2fx", a / b }')
	echo "| bulk order-$o frees, order on the lists | $(both "$([ -n "$OLD" ] && fmt "$(metric "$TMP/on.$o.OLD" free_ns_per_op)")" "$(fmt "$(metric "$TMP/on.$o.NEW" free_ns_per_op)")") |"
	echo "| bulk order-$o frees, lists off (\`pcp_orders=none\`) | $(both "$([ -n "$OLD" ] && fmt "$(metric "$TMP/off.$o.OLD" free_ns_per_op)")" "$(fmt "$(metric "$TMP/off.$o.NEW" free_ns_per_op)")") |"
	echo "| on / off (medians), goal <= 1.2x | $(both "$ratio_old" "$ratio_new") |"
done
echo
echo "### Two threads of bulk order-0 work (1 Mi blocks in all)"
echo
echo "| figure | value |"
echo "|---|---|"
for which in NEW OLD; do
	eval prog=\$$which
	[ -z "$prog" ] && continue
	timed "$prog" "$TMP/t1.$which" alloc-free-bulk --order 0 --threads 1 --boot "$BULK nr_cpus=2"
	timed "$prog" "$TMP/t2.$which" alloc-free-bulk --order 0 --threads 2 --boot "$BULK nr_cpus=2"
	eval "scale_$which=\$(awk -v a=\"\$(metric \"\$TMP/t2.\$which\" ops_per_sec | cut -d' ' -f1)\" -v b=\"\$(metric \"\$TMP/t1.\$which\" ops_per_sec | cut -d' ' -f1)\" 'BEGIN { printf \"%.2fx\", a / b }')"
	eval "cont_$which=\$(scalar \"\$TMP/t2.\$which\" zone_lock_contended)"
done
mops() { metric "$1" ops_per_sec | awk '{ printf "%.1f M (%.1f-%.1f M)", $1 / 1e6, $2 / 1e6, $3 / 1e6 }'; }
echo "| 1 thread, operations per second | $(both "$([ -n "$OLD" ] && mops "$TMP/t1.OLD")" "$(mops "$TMP/t1.NEW")") |"
echo "| 2 threads, operations per second | $(both "$([ -n "$OLD" ] && mops "$TMP/t2.OLD")" "$(mops "$TMP/t2.NEW")") |"
echo "| 2 threads / 1 thread (medians), goal >= 1.8x | $(both "${scale_OLD:-}" "$scale_NEW") |"
echo "| zone-lock contended acquisitions over the 2-thread runs (\`lockstat\`) | $(both "${cont_OLD:-}" "$cont_NEW") |"
echo
echo "### Compaction workloads (must not regress)"
echo
echo "| figure | value |"
echo "|---|---|"
for which in NEW OLD; do
	eval prog=\$$which
	[ -z "$prog" ] && continue
	"$prog" bench highalloc-frag --runs 3 --json >"$TMP/hf.$which"
	"$prog" bench thpcompact --runs 3 --json >"$TMP/thp.$which"
	"$prog" bench page-fault1 --compare --runs 3 >"$TMP/pf.$which"
done
succ() { metric "$1" success_pct | cut -d' ' -f1; }
pf() { sed -n 's/^zone lock contended: \(.*\)$/\1/p' "$1"; }
echo "| highalloc-frag success % (median of 3) | $(both "$([ -n "$OLD" ] && succ "$TMP/hf.OLD")" "$(succ "$TMP/hf.NEW")") |"
echo "| thpcompact success % (median of 3) | $(both "$([ -n "$OLD" ] && succ "$TMP/thp.OLD")" "$(succ "$TMP/thp.NEW")") |"
echo "| page-fault1 zone lock contended, lists off / on (\`--compare\`) | $(both "$([ -n "$OLD" ] && pf "$TMP/pf.OLD")" "$(pf "$TMP/pf.NEW")") |"
