#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The allocation mix of a page-allocator ftrace trace, as fragbench models it.

usage: trace_mix.py TRACE_DIR_OR_FILE [MANAGED_FRAMES]

For each class of allocation (unmovable, reclaimable, anonymous order 0,
page cache order 0, THP order 9) it prints the allocations per order, the
share of allocated frames, the share still live at the end of the trace and
the quantiles of the lifetime of the freed ones. A lifetime is counted in
frames allocated between the allocation and its free, divided by the
traced machine's managed frames: 1.0 means memory turned over once. A free
matches the live allocation with the same head pfn and order (the README
of the trace: 98.5 % of the frees do).
"""
import collections
import lzma
import os
import re
import sys

KV = re.compile(r'(\w+)=(\S+)')
EVENT = re.compile(r': (mm_page_alloc|mm_page_free): (.*)$')


def klass(order, mt, gfp):
    if mt == 0:
        return 'unmovable'
    if mt == 2:
        return 'reclaimable'
    if order >= 9:
        return 'thp'
    # Page cache: writes (__GFP_WRITE) and readahead (GFP_NOFS); the rest are anonymous faults.
    if '__GFP_WRITE' in gfp or gfp.startswith('GFP_NOFS'):
        return 'pagecache'
    return 'anon'


def main():
    path = sys.argv[1]
    if os.path.isdir(path):
        path = os.path.join(path, 'trace.txt.xz')
    managed = float(sys.argv[2]) if len(sys.argv) > 2 else 3840 + 754593 + 758405
    clock = 0  # frames allocated so far
    live = {}  # (pfn, order) -> (class, clock at allocation)
    orders = collections.defaultdict(collections.Counter)
    frames = collections.Counter()
    lifetimes = collections.defaultdict(list)
    opener = lzma.open if path.endswith('.xz') else open
    with opener(path, 'rt', errors='replace') as fh:
        for line in fh:
            m = EVENT.search(line)
            if not m:
                continue
            kv = dict(KV.findall(m.group(2)))
            pfn, order = int(kv['pfn'], 16), int(kv['order'])
            if m.group(1) == 'mm_page_alloc':
                if pfn == 0:
                    continue  # a failed attempt
                c = klass(order, int(kv['migratetype']), kv.get('gfp_flags', ''))
                orders[c][order] += 1
                frames[c] += 1 << order
                clock += 1 << order
                live[(pfn, order)] = (c, clock)
            else:
                hit = live.pop((pfn, order), None)
                if hit:
                    lifetimes[hit[0]].append((clock - hit[1]) / managed)
    survivors = collections.Counter(c for c, _ in live.values())
    total = sum(frames.values())
    print(f'frames allocated {total}, managed {int(managed)}, turnover {total / managed:.2f}')
    qs = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99)
    print(f'{"class":12} {"frames%":>8} {"live@end%":>9} orders (count)  lifetime quantiles '
          + ' '.join(f'p{int(q * 100)}' for q in qs))
    for c in ('unmovable', 'reclaimable', 'anon', 'pagecache', 'thp'):
        n = sum(orders[c].values())
        lt = sorted(lifetimes[c])
        qv = ' '.join(f'{lt[min(len(lt) - 1, int(q * len(lt)))]:.4f}' for q in qs) if lt else '-'
        print(f'{c:12} {100 * frames[c] / total:8.3f} {100 * survivors[c] / max(n, 1):9.2f} '
              f'{dict(sorted(orders[c].items()))}  {qv}')


if __name__ == '__main__':
    main()
