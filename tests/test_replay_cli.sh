#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `pagealloc replay` and `pagealloc compare` as a user runs them: the table,
# --json with the documented keys, stdin input, --series/--svg/--map files,
# --compare in parallel processes, compare of saved JSON, and bad input that
# exits non-zero with a message naming it.
#
# Usage: bash tests/test_replay_cli.sh PATH-TO-pagealloc   (or $PAGEALLOC)
set -u

source "$(dirname "${BASH_SOURCE[0]}")/cli_helpers.bash" "$@"
DATA="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/data/replay"

check "replay prints the side-by-side table" \
	bash -c "'$PA' replay '$DATA/start' > '$TMP/table' && grep -q 'free blocks per order, Normal' '$TMP/table' && grep -q 'bad pages 0; pa_validate' '$TMP/table'"

check "replay --json has the documented keys and counts" \
	bash -c "'$PA' replay '$DATA/start' --json > '$TMP/a.json' && python3 - '$TMP/a.json' <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for k in ['events', 'allocs', 'frees', 'failed_kernel_served', 'kernel_failed', 'kernel_failed_served',
          'bad_page', 'validate_failures', 'events_per_sec', 'free_classes', 'snapshots', 'linux',
          'pcp_rules', 'kernel_fallbacks', 'fallbacks', 'thp_served', 'zone_lock', 'decays']:
    assert k in d, k
assert d['kernel_fallbacks'] == 1, d  # the sample's one mm_page_alloc_extfrag line
assert d['kernel_failed'] >= d['kernel_failed_served'] and d['zone_lock'] > 0, d
assert d['events'] == 3000 and d['allocs'] == 1488 and d['frees'] == 197, d
assert d['free_classes']['traced'] == 173 and d['free_classes']['pre_trace'] == 24
s = d['snapshots'][0]
assert s['name'] == 'before' and 'tvd' in s
for side in ('kernel', 'pagealloc'):
    for k in ('free', 'pcp', 'buddyinfo'):
        assert k in s[side], (side, k)
    z = s[side]['buddyinfo'][0]
    assert 'zone' in z and len(z['free']) == 11
PY"

check "replay --linux takes another version's rules, and its per-CPU era" \
	bash -c "'$PA' replay '$DATA/start' --linux 6.1 > '$TMP/l61' && grep -q \"Linux 6.1's allocator rules, per-CPU lists under 6.1's\" '$TMP/l61' && '$PA' replay '$DATA/start' --linux 7.2 --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[\"linux\"] == \"7.2\" and d[\"pcp_rules\"] == \"6.7\", d'"
check "replay --linux refuses a version not modelled" \
	bash -c "! '$PA' replay '$DATA/start' --linux 5.4 2>'$TMP/l54' >/dev/null && grep -q 'linux' '$TMP/l54'"

check "replay reads a gzip trace from stdin" \
	bash -c "'$PA' replay - --json < '$DATA/excerpt.txt.gz' | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[\"allocs\"] == 1488, d'"

check "--series, --svg and --map write their files" \
	bash -c "'$PA' replay '$DATA/start' --series '$TMP/s.json' --svg '$TMP/f.svg' --map '$TMP/m.svg' >/dev/null && python3 -c 'import json; d=json.load(open(\"$TMP/s.json\")); assert len(d[\"samples\"]) > 10' && grep -q '</svg>' '$TMP/f.svg' && grep -q '</svg>' '$TMP/m.svg'"

check "--compare runs each configuration and prints %change" \
	bash -c "'$PA' replay '$DATA/start' --compare 'max_order=10' 'max_order=12' -j 2 > '$TMP/cmp' && grep -q '%change' '$TMP/cmp' && grep -q 'max_order=12' '$TMP/cmp' && grep -q 'before.free' '$TMP/cmp' && grep -Eq '^ +0 +[0-9]+  before.free_blocks.order12$' '$TMP/cmp'"

check "--compare --json lists configs with their boot lines" \
	bash -c "'$PA' replay '$DATA/start' --compare 'max_order=10' 'max_order=11' --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert len(d[\"configs\"]) == 2 and \"max_order=11\" in d[\"configs\"][1][\"boot\"]'"

check "compare combines saved runs" \
	bash -c "'$PA' replay '$DATA/start' --boot 'max_order=12' --json > '$TMP/b.json' && '$PA' compare '$TMP/a.json' '$TMP/b.json' | grep -q 'before.unusable9'"

check "replay counts tainted 1 GiB regions and pageblocks on pagealloc's side" \
	bash -c "python3 - '$TMP/a.json' <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for s in d['snapshots']:
    p = s['pagealloc']
    assert p['regions'] == 6, p['regions']   # 7 GiB of span, the one above 3 GiB all hole
    assert 0 < p['tainted_regions'] <= p['regions'], p
    assert p['mixed_pageblocks'] <= p['tainted_pageblocks'], p
    # every unmovable pageblock of the start holds pre-trace memory the kernel had there
    assert p['tainted_pageblocks'] >= p['pageblocks']['Unmovable'] > 0, p
    assert 'tainted_regions' not in s['kernel']
PY"

check "--compare with and without superblocks shows polluted regions and pageblocks" \
	bash -c "'$PA' replay '$DATA/start' --compare 'superblock_order=0' 'superblock_order=18 defrag_mode=1' > '$TMP/sb' && grep -q 'before.tainted_regions' '$TMP/sb' && grep -q 'before.mixed_pageblocks' '$TMP/sb' && grep -q 'before.pageblocks.Unmovable' '$TMP/sb' && '$PA' replay '$DATA/start' | grep -q 'regions tainted'"

# The parsed trace kept between replays: the second replay reads it (the
# text, overwritten in place with the same size and mtime, is not read
# again) and prints the same; a changed trace is parsed again;
# PAGEALLOC_CACHE=off keeps nothing.
cat > "$TMP/strip.py" <<'PY'
import json, sys
d = json.load(sys.stdin)
print(json.dumps({k: v for k, v in d.items() if 'sec' not in k}, sort_keys=True))
PY
cp -r "$DATA/start" "$TMP/cached"
T="$TMP/cached/trace.txt.xz"
check "a second replay reads the cached parse and prints the same" \
	bash -c "PAGEALLOC_CACHE='$TMP/cache' '$PA' replay '$TMP/cached' --json | python3 '$TMP/strip.py' > '$TMP/c1' && ls '$TMP/cache'/trace-*.events > /dev/null && cp -p '$T' '$TMP/ref' && head -c \$(stat -c %s '$T') /dev/zero | dd of='$T' conv=notrunc status=none && touch -r '$TMP/ref' '$T' && PAGEALLOC_CACHE='$TMP/cache' '$PA' replay '$TMP/cached' --json | python3 '$TMP/strip.py' > '$TMP/c2' && cmp '$TMP/c1' '$TMP/c2'"
check "a changed trace is parsed again; PAGEALLOC_CACHE=off keeps nothing" \
	bash -c "xz -dc '$TMP/ref' | head -n 200 | xz > '$T' && PAGEALLOC_CACHE='$TMP/cache' '$PA' replay '$TMP/cached' --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[\"events\"] < 200, d[\"events\"]' && PAGEALLOC_CACHE='$TMP/off' '$PA' replay '$TMP/cached' > /dev/null && [ -e '$TMP/off' ] && PAGEALLOC_CACHE=off '$PA' replay '$TMP/cached' > /dev/null && [ ! -e off ] && [ \$(ls '$TMP/cache' | wc -l) = 1 ]"

check "a missing trace is refused with its name" \
	bash -c "! '$PA' replay '$TMP/nope' 2>'$TMP/e1' >/dev/null && grep -q nope '$TMP/e1'"
check "a bad boot key is refused with its name" \
	bash -c "! '$PA' replay '$DATA/start' --boot 'max_order=99' 2>'$TMP/e2' >/dev/null && grep -q max_order '$TMP/e2'"
check "compare refuses a file that is not a replay's JSON" \
	bash -c "echo 'not json' > '$TMP/x.json'; ! '$PA' compare '$TMP/x.json' 2>/dev/null"

finish
