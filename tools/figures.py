#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run the documented benchmarks and write docs/figures.md with SVG charts beside it.

    python3 tools/figures.py [--program build/pagealloc] [--out docs/figures.md]
                             [--only NAME,NAME] [--quick] [--list] [--before PROGRAM]

`make figures` runs it. Every figure in the file comes from a command shown
above its table, run here; nothing is copied by hand.

Adding a section: write a function that takes a Figures object, runs its
commands with fig.bench(...), and returns the section's Markdown (fig.table()
and fig.chart() help); register it with @section("name", "Title"). Sections
appear in the order they are defined. Use fig.runs (5, or 1 with --quick) and
fig.quick to keep --quick runs small: the test of this script uses them.
"""
import argparse
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from xml.sax.saxutils import escape

SECTIONS = []


def section(name, title):
    """Register a function as a section of docs/figures.md."""
    def register(fn):
        SECTIONS.append((name, title, fn))
        return fn
    return register


# --------------------------------------------------------------------------
# Formatting
# --------------------------------------------------------------------------

def num(v, digits=None):
    """A number for a table: integers with thousands separators, others rounded."""
    if v is None:
        return "n/a"
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer() and digits is None):
        return f"{int(v):,}"
    if digits is None:
        digits = 2 if abs(v) < 100 else 1 if abs(v) < 1000 else 0
    return f"{v:,.{digits}f}"


def mmm(metric, digits=None):
    """A metric of the benchmark JSON as "median (min - max)"."""
    if not isinstance(metric, dict):
        return num(metric, digits)
    return f"{num(metric['median'], digits)} ({num(metric['min'], digits)} - " \
           f"{num(metric['max'], digits)})"


class Figures:
    def __init__(self, program, out_dir, quick, before=None):
        self.program = program
        self.before = before  # a program to measure first, for "before -> now" figures
        rel = os.path.relpath(program)
        self.shown_program = rel if rel.startswith(".") or os.path.isabs(rel) else "./" + rel
        self.out_dir = out_dir
        self.quick = quick
        self.runs = 1 if quick else 5
        self.seconds = 0.0

    def bench(self, *args):
        """Run `pagealloc ARGS --json`; returns (parsed JSON, the command as shown)."""
        return self.bench_with(self.program, *args)

    def bench_with(self, program, *args):
        """The same with another program (--before's)."""
        argv = [program] + [str(a) for a in args] + ["--json"]
        name = self.shown_program if program == self.program else program
        shown = " ".join(shlex.quote(str(a)) for a in [name] + list(args))
        print(f"figures: {shown}", file=sys.stderr, flush=True)
        start = time.monotonic()
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.seconds += time.monotonic() - start
        if done.returncode != 0:
            raise RuntimeError(f"{shown} exited {done.returncode}: {done.stderr.strip()}")
        return json.loads(done.stdout), shown

    @staticmethod
    def table(head, rows):
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
        return "\n".join(lines) + "\n"

    @staticmethod
    def commands(*shown):
        return "\n".join(f"    {c}" for c in shown) + "\n"

    def chart(self, name, title, unit, bars):
        """A horizontal bar chart, median with a min-max whisker: bars are
        (label, metric) with metric a {median, min, max} dict. Written to
        OUT_DIR/figures-NAME.svg; returns the Markdown image link."""
        path = os.path.join(self.out_dir, f"figures-{name}.svg")
        with open(path, "w") as f:
            f.write(bar_chart_svg(title, unit, bars))
        return f"![{title}](figures-{name}.svg)\n"


def bar_chart_svg(title, unit, bars):
    label_w, bar_w, row_h, top = 300, 420, 26, 40
    height = top + row_h * len(bars) + 30
    width = label_w + bar_w + 120
    top_value = max(max(m["max"], m["median"]) for _, m in bars) or 1
    scale = bar_w / top_value
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="10" y="20" font-size="14" font-weight="bold">{escape(title)}</text>']
    for i, (label, m) in enumerate(bars):
        y = top + i * row_h
        out.append(f'<text x="{label_w - 8}" y="{y + 15}" text-anchor="end">{escape(label)}</text>')
        out.append(f'<rect x="{label_w}" y="{y + 3}" width="{m["median"] * scale:.1f}" '
                   f'height="{row_h - 8}" fill="#4a7ab5"/>')
        x0, x1, yc = label_w + m["min"] * scale, label_w + m["max"] * scale, y + row_h / 2 - 1
        out.append(f'<line x1="{x0:.1f}" y1="{yc}" x2="{x1:.1f}" y2="{yc}" stroke="black"/>')
        for x in (x0, x1):
            out.append(f'<line x1="{x:.1f}" y1="{yc - 5}" x2="{x:.1f}" y2="{yc + 5}" stroke="black"/>')
        out.append(f'<text x="{max(x1, label_w + m["median"] * scale) + 6:.1f}" y="{y + 15}">'
                   f'{escape(num(m["median"]))}</text>')
    out.append(f'<text x="{label_w}" y="{height - 8}" fill="#555">{escape(unit)}; bar: median, '
               f'whisker: min to max</text>')
    out.append("</svg>\n")
    return "\n".join(out)


# --------------------------------------------------------------------------
# The machine
# --------------------------------------------------------------------------

def read_first(path, key):
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def git(*args):
    try:
        return subprocess.run(["git"] + list(args), stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def before_commit(program):
    """The commit of the source tree a --before program was built in, if it is a git tree."""
    where = os.path.dirname(os.path.dirname(program))  # build/pagealloc -> the tree
    done = subprocess.run(["git", "-C", where, "rev-parse", "--short=12", "HEAD"],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return done.stdout.strip() if done.returncode == 0 else "unknown"


def machine(program, before=None):
    mem_kb = read_first("/proc/meminfo", "MemTotal").split()[0]
    mem = f"{int(mem_kb) / (1 << 20):.1f} GiB" if mem_kb.isdigit() else "unknown"
    commit = git("rev-parse", "--short=12", "HEAD") or "unknown"
    if git("status", "--porcelain", "--untracked-files=no"):
        commit += " (with uncommitted changes)"
    version = subprocess.run([program, "--version"], stdout=subprocess.PIPE,
                             text=True).stdout.strip()
    rows = [("CPU", read_first("/proc/cpuinfo", "model name")),
            ("cores", str(os.cpu_count())),
            ("memory", mem),
            ("kernel", f"{platform.system()} {platform.release()}"),
            ("load average at start", " ".join(f"{x:.2f}" for x in os.getloadavg())),
            ("program", version),
            ("commit", commit),
            ("date", datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))]
    if before:
        rows.append(("before (`--before`)", f"the program built at commit {before_commit(before)}"))
    return Figures.table(["", ""], rows)


# --------------------------------------------------------------------------
# The sections
# --------------------------------------------------------------------------

@section("fast-paths", "Fast paths: one block allocated and freed, and bulk")
def fast_paths(fig):
    hot, bulk, cmds, bars = [], [], [], []
    ops = ["--ops", 200000] if fig.quick else []
    for order in (0, 3, 9):
        j, c = fig.bench("bench", "alloc-free-hot", "--order", order, "--runs", fig.runs, *ops)
        cmds.append(c)
        hot.append([order, mmm(j["ns_per_op"])])
        bars.append((f"hot pair, order {order}", j["ns_per_op"]))
    nr = ["--nr", 65536] if fig.quick else []
    for order, api in ((0, "loop"), (0, "bulk"), (9, "loop")):
        j, c = fig.bench("bench", "alloc-free-bulk", "--order", order, "--api", api,
                         "--runs", fig.runs, *nr)
        cmds.append(c)
        bulk.append([order, api, num(j["blocks"]), mmm(j["alloc_ns_per_op"]),
                     mmm(j["free_ns_per_op"])])
        bars.append((f"bulk alloc+free, order {order}, {api}", j["ns_per_op"]))
    return (fig.commands(*cmds) + "\nOne block allocated and freed at once, `--ops` times "
            "(ns per pair):\n\n" +
            fig.table(["order", "ns per alloc+free pair"], hot) +
            "\nN blocks allocated, then all N freed (`loop`: pa_alloc_pages one at a time; "
            "`bulk`: pa_alloc_pages_bulk, 128 per call):\n\n" +
            fig.table(["order", "api", "blocks", "ns per allocation", "ns per free"], bulk) +
            "\n" + fig.chart("fast-paths", "alloc + free, ns per pair", "ns per pair", bars))


@section("page-fault1", "Per-CPU lists and the zone lock: page_fault1")
def page_fault1(fig):
    rows, cmds, bars = [], [], []
    runs = 1 if fig.quick else 7
    for order in (0, 4):
        it = ["--iterations", 4] if fig.quick else []
        j, c = fig.bench("bench", "page-fault1", "--compare", "--threads", 4, "--order", order,
                         "--runs", runs, *it)
        cmds.append(c)
        ratio = j["zone_lock_contended_ratio"]
        for mode in ("off", "on"):
            r = j[mode]
            wait = r.get("zone_lock_wait_ms")
            rows.append([order, mode, mmm(r["ops_per_sec_per_thread"], 0),
                         mmm(r["zone_lock_contended"]), num(r["zone_lock_contended"]["mean"], 1),
                         mmm(wait, 1) if wait else "n/a",
                         num(ratio) if mode == "on" else ""])
            bars.append((f"order {order}, {mode} the per-CPU lists", r["ops_per_sec_per_thread"]))
    return (fig.commands(*cmds) +
            "\nFour threads, each posing as its own CPU, map and unmap 128 MiB of folios of the "
            "order; the order is taken off the per-CPU lists (`off`, as mainline Linux) or put "
            "on them (`on`). Zone-lock contended acquisitions and the time waited for the zone "
            "locks are counted per run (a fresh pool each); the ratio is the median off over "
            "the median on (n/a when on is 0). With order 4 on the lists the zone lock is "
            "taken by the first map's refills only (after it the lists hold what a thread "
            "maps): whether any of them meet depends on the four threads' scheduling on the "
            "machine's CPUs, so that many runs may count none and a few count tens; the mean "
            "says more than the median there.\n\n" +
            fig.table(["order", "per-CPU lists", "ops/s per thread", "zone lock contended",
                       "contended, mean", "zone lock wait (ms per run)", "ratio off/on"],
                      rows) + "\n" +
            fig.chart("page-fault1", "page_fault1: allocations+frees per second per thread",
                      "operations per second per thread", bars))


def compaction_table(fig, workload, variants):
    """One row per mode of each variant (a list of extra options) of a compaction
    workload; --compare runs give both modes."""
    rows, cmds = [], []
    for extra in variants:
        j, c = fig.bench("bench", workload, *extra, "--runs", fig.runs)
        cmds.append(c)
        # A --compare run has one object per mode; a plain run is the default mode itself.
        modes = {"default": j} if "summary" in j else j
        found = 0
        for mode, label in (("default", "default"), ("split_folios", "split_folios=1")):
            if mode not in modes:
                continue
            found += 1
            s = modes[mode]["summary"]
            # Above the pageblock order the workload also counts whole regions.
            regions = (f"{num(s['blocks']['median'])} / {num(s['regions_obtainable']['median'])}"
                       f" / {num(s['regions_eligible']['median'])}"
                       if "regions_obtainable" in s else "-")
            rows.append([" ".join(str(e) for e in extra if e != "--compare") or "(defaults)",
                         label, mmm(s["success_pct"]), mmm(s["latency_ns.mean"], 0),
                         mmm(s["pages_migrated"]), mmm(s["folios_migrated_whole"]),
                         mmm(s["folios_split"]), regions])
        if not found:
            raise RuntimeError(f"{c}: no mode in the output to put in the table")
    head = ["options", "mode", "success %", "mean latency ns", "pages migrated",
            "folios moved whole", "folios split", "regions: blocks / obtainable / eligible"]
    return fig.commands(*cmds), fig.table(head, rows)


@section("highalloc-frag", "Compaction: huge blocks from a fragmented pool (highalloc-frag)")
def highalloc_frag(fig):
    variants = [["--compare"], ["--compare", "--folio-order", 4],
                ["--unmovable-pct", 0.1], ["--order", 18, "--folio-order", 9, "--compare"]]
    if fig.quick:
        variants = variants[:2]
    cmds, table = compaction_table(fig, "highalloc-frag", variants)
    return (cmds + "\nThe pool (1 GiB; 16 GiB for order 18) is filled with movable folios of "
            "`--folio-order`, 7/32 of memory is freed in a scattered pattern, then blocks of "
            "`--order` (default 9) are allocated until one fails. Success is the share of the "
            "free memory obtained as blocks; `split_folios=1` is the same run with "
            "`compaction_split_folios=1` (large folios split, as before folio compaction); "
            "`--unmovable-pct` scatters that share of unmovable pages over the pool. Above the "
            "pageblock order a block is a whole region emptied: the last column gives the blocks "
            "formed, the regions the zones' free memory could fill, and the regions with no "
            "unmovable page (medians).\n\n" +
            table)


@section("thpcompact", "Compaction: THPs after page-cache refill (thpcompact)")
def thpcompact(fig):
    variants = [["--compare"], ["--compare", "--threads", 2, "--folio-order", 4]]
    cmds, table = compaction_table(fig, "thpcompact", variants[:1] if fig.quick else variants)
    return (cmds + "\nFault memory in movable folios, free the first half of every 2 MiB, "
            "refill half of that with page cache, then allocate THPs with an order-0 "
            "fallback; success is huge blocks over attempts.\n\n" + table)


@section("compact-copy", "Compaction's copy bandwidth against memcpy")
def compact_copy(fig):
    j, c = fig.bench("bench", "compact-copy", "--runs", fig.runs)
    rows = [["memcpy, one thread", mmm(j["memcpy_mib_per_s"], 0)],
            ["pa_compact (bytes migrated / time)", mmm(j["compact_mib_per_s"], 0)],
            ["compaction as % of memcpy", mmm(j["ratio_pct"], 1)]]
    return (fig.commands(c) + f"\nA backed pool; data {j['data']}.\n\n" +
            fig.table(["", "MiB/s"], rows))


@section("cma", "CMA: pa_cma_alloc of 64 MiB from a half-borrowed area")
def cma(fig):
    j, c = fig.bench("bench", "cma-alloc", "--runs", 3 if fig.quick else 9)
    rows = [["latency, ms per pa_cma_alloc", mmm(j["latency_ms"])],
            ["folios moved out per call", mmm(j["folios_moved"])],
            ["area held by movable folios before, %", mmm(j["borrowed_pct"])],
            ["calls that succeeded", f"{j['succeeded']} of {j['runs']}"]]
    return fig.commands(c) + "\n" + fig.table(["", "median (min - max)"], rows)


@section("hotplug", "Memory hotplug: offlining a 128 MiB block full of folios")
def hotplug(fig):
    j, c = fig.bench("bench", "hotplug", "--runs", 2 if fig.quick else fig.runs)
    rows = [["time to offline the block, ms", mmm(j["offline_ms"])],
            ["per folio moved, us", mmm(j["us_per_folio"])],
            ["folios moved (order " + str(j["folio_order"]) + ")", mmm(j["folios_moved"])],
            ["frames moved", mmm(j["frames_moved"])]]
    note = ("Memory is full of owned order-2 folios and half of what lies outside the block is "
            "free again (written memory, as a running machine's is); every folio of the block "
            "moves to a block the allocator hands out, bytes checked after. Nearly all of the time "
            "is the copy: the library's own work is about 1,000 instructions per folio besides "
            "the 16 KiB memcpy. In a pool whose destination memory was never written (the test's "
            "8 GiB pool) each destination page also costs the host a page fault on first write.")
    return fig.commands(c) + "\n" + fig.table(["", "median (min - max)"], rows) + "\n" + note + "\n"


@section("dmaheap", "dma-buf system heap: pageblock order 10 against 7")
def dmaheap(fig):
    count = ["--count", 20] if fig.quick else []
    j, c = fig.bench("bench", "dmaheap", "--runs", fig.runs, *count)
    rows = []
    for key in [k for k in j if k.startswith("pageblock_")]:
        r = j[key]
        fails = sum(r["order_failures"].values())
        rows.append([r["pageblock_order"], mmm(r["allocs_per_sec"], 0),
                     num(r["latency_p50_ns"]), num(r["latency_p99_ns"]), num(fails)])
    return (fig.commands(c) + "\nGreedy orders 8, 4, 0 for buffers of 8M 4M 2M 1M 64 8 4 bytes "
            "(16 KiB pages), each pageblock order on a fresh pool.\n\n" +
            fig.table(["pageblock order", "buffers per second", "p50 ns", "p99 ns",
                       "failed blocks"], rows))


@section("gigantic", "Gigantic blocks: 1 GiB by buddy order 18 and by pa_alloc_contig_pages")
def gigantic(fig):
    boot = ["--boot", "mem=4G"] if fig.quick else []
    j, c = fig.bench("bench", "gigantic", "--runs", fig.runs, *boot)
    rows = []
    for way, label in (("buddy", "buddy (pa_alloc_pages, max_order=18)"),
                       ("contig", "pa_alloc_contig_pages (max_order=10)")):
        r = j[way]
        rows.append([label, r["eligible"], r["obtained"], r["missed"],
                     num(r["latency_median_ms"]), num(r["latency_p95_ms"]),
                     num(r["latency_max_ms"]), num(r["folios_moved"])])
    return (fig.commands(c) + f"\n{j['runs']} runs per way, each on a fresh pool: memory "
            "filled with movable folios, 85 % freed at random, 0.02 % unmovable pages "
            "scattered in; then 1 GiB blocks until one fails. Counts are summed over the "
            "runs; latencies are over every successful allocation.\n\n" +
            fig.table(["way", "eligible regions", "obtained", "missed", "median ms", "p95 ms",
                       "max ms", "folios moved"], rows))


@section("fragbench", "1 GiB regions after a long churn: Linux's placement and superblocks (fragbench)")
def fragbench(fig):
    """--compare (three policies) at the defaults (64 GiB, 5 % unmovable, memory turned over 10 times), then 10 %."""
    scale = ["--mem", "4G", "--turnover", 2] if fig.quick else []
    pcts = (5,) if fig.quick else (5, 10)
    rows, cmds = [], []
    for pct in pcts:
        extra = [] if pct == 5 else ["--unmovable-pct", pct]
        j, c = fig.bench("bench", "fragbench", "--compare", *extra, *scale)
        cmds.append(c)
        for policy in ("linux", "linux-whole", "superblock"):
            r = j[policy]
            stat = r["vmstat"]
            rows.append([f"{pct} %", policy, f"{num(r['tainted_regions_pct'], 1)} "
                         f"({r['tainted_regions']} of {r['regions']})", r["gig_blocks"],
                         r["gig_blocks_bound"], num(r["gig_pct_of_bound"], 1),
                         r["alloc_failures"], r["pageblocks"]["unmovable"],
                         r["pageblocks"]["reclaimable"], r["tainted_pageblocks"],
                         stat.get("pgalloc_fallback_claim", "n/a"),
                         stat.get("pgalloc_fallback_steal", "n/a"), num(r["elapsed_s"], 1)])
    return (fig.commands(*cmds) + "\nOne seeded stream per unmovable share, the same for every "
            "policy: the orders, migratetypes and lifetimes of the shared trace "
            "linux-6.1-slab-pagecache (slab, page cache, anonymous memory, THPs), with the "
            "unmovable and reclaimable share of allocated frames set to the first column. At the "
            "end every zone is compacted; a region is tainted while it holds an unmovable or "
            "reclaimable page; the bound is, per zone, the untainted regions that its free "
            "memory above the min watermark could fill. The goal at 5 %: at most 10 % of "
            "regions tainted, at least 90 % of the bound formed, no more failures than "
            "Linux's policy (`linux`). Linux's fallback claims the largest free block of "
            "another type whole; the kernel's blocks stop at order 10, so `linux` boots with "
            "`fallback_order=10`. `linux-whole` is the same code at max_order=18, claiming "
            "free blocks up to 1 GiB whole for one page while there are some: that confines "
            "unmovable memory too, by accident.\n\n" +
            fig.table(["unmovable", "policy", "regions tainted %", "1 GiB blocks", "bound",
                       "% of bound", "failures", "unmovable pageblocks",
                       "reclaimable pageblocks", "tainted pageblocks", "fallback claims",
                       "fallback steals", "seconds"], rows))


@section("boot", "Boot: pa_boot plus the first allocation, and deferred init")
def boot(fig):
    rows, cmds = [], []
    sizes = ("1G", "64G") if fig.quick else ("1G", "64G", "1T", "4T")
    for mem in sizes:
        for deferred in (1, 0):
            j, c = fig.bench("bench", "boot", "--boot", f"mem={mem} deferred_init={deferred}",
                             "--runs", fig.runs)
            cmds.append(c)
            rows.append([mem, deferred, mmm(j["boot_ms"]), mmm(j["init_done_ms"]),
                         mmm(j["shutdown_ms"]), num(j["rss_init_bytes"] / 2**20, 1)])
    return (fig.commands(*cmds) + "\nMetadata-only pools. `boot ms` is pa_boot and the first "
            "allocation (what a user waits for); `init done` until deferred init has finished; "
            "resident memory is the largest growth over the runs.\n\n" +
            fig.table(["mem", "deferred_init", "boot ms", "init done ms", "shutdown ms",
                       "resident MiB"], rows))


@section("balloon", "Free page reporting: a guest's churn with a balloon device")
def balloon(fig):
    quick = ["--seconds", 0.5] if fig.quick else []
    j, c = fig.bench("bench", "balloon", "--runs", 1 if fig.quick else 3, *quick)
    rows = [["off", "", "", mmm(j["alloc_ns_reporting_off"]), mmm(j["free_ns_reporting_off"]),
             mmm(j["rss_mib_at_end_off"], 0)],
            ["on", mmm(j["reported_mib"], 0), mmm(j["reports_per_second"], 1),
             mmm(j["alloc_ns_reporting_on"]), mmm(j["free_ns_reporting_on"]),
             mmm(j["rss_mib_at_end_on"], 0)]]
    return (fig.commands(c) + f"\nMedian (min - max) of {j['runs']} runs each way on "
            f"{j['boot']}, each run {num(j['seconds'], 1)} s on fresh pools: the guest grows its "
            "working set to 70 % of memory and shrinks it to 10 %, eight times; the device "
            "discards what is reported (MADV_DONTNEED). Allocation and free times are per call, "
            "timed in batches of 32; resident memory is the process's at the end, with the "
            "guest holding 10 %.\n\n" +
            fig.table(["reporting", "reported MiB", "reports per second", "ns per allocation",
                       "ns per free", "resident MiB at the end"], rows))


@section("device", "Device memory: churn, gpu_buddy's fragmentation scenario, zeroing")
def device(fig):
    j, c = fig.bench("bench", "device", "--runs", 1 if fig.quick else 5)
    ch, fr = j["churn"], j["fragmentation"]
    off, on = j["zero_scrubber_off"], j["zero_scrubber_on"]
    churn = [[mmm(ch["buffers"], 0), mmm(ch["free_frames"], 0), mmm(ch["cleared_frames"], 0),
              mmm(ch["largest_free_run"], 0), mmm(ch["largest_contiguous"], 0)]]
    frag = [[mmm(fr["fragmented_ms"], 1), mmm(fr["blocks_64k"], 0),
             mmm(fr["reverse_free_ms"], 1)]]
    zero = [[name, mmm(z["ns_per_alloc"], 0),
             num(z["bytes_zeroed_at_alloc"]["median"] / (1 << 20), 0),
             num(z["bytes_scrubbed"]["median"] / (1 << 20), 0)]
            for name, z in (("off", off), ("on", on))]
    return (fig.commands(c) + f"\nMedian (min - max) of {j['runs']} runs, each part on fresh "
            "pools (zones=flat, min_free_kbytes=0).\n\n"
            "(a) 256 MiB: 4-8 KiB buffers (1 or 2 frames) allocated in jobs of 32 to 90 % of "
            "memory, half the jobs freed with their buffers alternately cleared and dirty (the "
            "pattern that keeps gpu_buddy's clear and dirty trees apart); then the largest "
            "contiguous allocation that succeeds, against the largest run of free frames: "
            "equal when cleared and dirty buddies merge.\n\n" +
            fig.table(["buffers", "free frames", "of them cleared", "largest free run",
                       "largest contiguous allocation"], churn) +
            "\n(b) gpu_buddy_fragmentation_performance on 1 GiB (the original: 4 GiB): every "
            "8 KiB block at 64 KiB alignment, a quarter pattern freed cleared and the rest "
            "dirty, then every 64 KiB block taken; then the reverse-order free of the same "
            "pattern, all cleared.\n\n" +
            fig.table(["fragmented alloc ms", "64 KiB blocks that succeeded",
                       "reverse-order free ms"], frag) +
            "\n(c) A 2 MiB PA_GFP_ZERO allocation in a 256 MiB anonymous-backed pool that has "
            "been in use (every frame written and freed dirty once), 200 allocations with 2 ms "
            "of idle time before each, the buffer written and freed dirty; the scrubber off, "
            "then on (pa_scrubber_start, a pass every 1 ms).\n\n" +
            fig.table(["scrubber", "ns per allocation", "MiB zeroed at allocation (median)",
                       "MiB zeroed by the scrubber (median)"], zero))


@section("replay", "Replaying a Linux 6.1 trace (docs/replay.md)")
def replay(fig):
    """The shipped excerpt (or PA_REPLAY_RECORDING, e.g. the whole shared recording)."""
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    rec = os.environ.get("PA_REPLAY_RECORDING",
                         os.path.join(src, "examples", "replay", "linux-6.1-compact"))
    rec = os.path.relpath(rec)
    runs, cmd = [], None
    for _ in range(fig.runs):
        start = time.monotonic()
        j, cmd = fig.bench("replay", rec)
        runs.append((j, time.monotonic() - start))
    eps = sorted(r[0]["events_per_sec"] / 1e6 for r in runs)
    cps = sorted(r[0]["events_per_cpu_sec"] / 1e6 for r in runs)
    wall = sorted(r[1] for r in runs)
    j = runs[0][0]
    rows = []
    for s in j["snapshots"]:
        k, p = s["kernel"], s["pagealloc"]
        rows.append([s["name"], f"{num(k['free'])} / {num(p['free'])}",
                     f"{num(k['pcp'])} / {num(p['pcp'])}",
                     f"{num(k['unusable']['9'], 3)} / {num(p['unusable']['9'], 3)}",
                     num(s["tvd"], 4)])
    mid = len(eps) // 2
    return (fig.commands(cmd) + f"\n{num(j['events'])} trace events ({num(j['allocs'])} "
            f"allocations, {num(j['frees'])} frees): replay loop {num(eps[mid])} M events/s "
            f"({num(eps[0])} - {num(eps[-1])}), {num(cps[mid])} M per second of its CPU time "
            f"({num(cps[0])} - {num(cps[-1])}), whole command with parsing "
            f"{num(wall[mid])} s ({num(wall[0])} - {num(wall[-1])}) over {len(runs)} runs "
            f"(load average {num(os.getloadavg()[0], 1)} on {os.cpu_count()} CPUs); "
            f"{j['failed_kernel_served']} allocations failed that the kernel served, "
            f"{j['bad_page']} bad pages, {j['validate_failures']} failed validations.\n\n"
            "Kernel / pagealloc at each snapshot (free pages, per-CPU pages, unusable index at "
            "order 9) and the total variation distance of their free-pages-by-order "
            "distributions:\n\n" +
            fig.table(["snapshot", "free pages", "per-CPU pages", "unusable (9)", "TVD"], rows))


def one(v):
    """A single figure as the {median, min, max} a chart takes."""
    return {"median": v, "min": v, "max": v}


@section("replay-versions", "Linux 6.1's rules against 7.2's on a 7.2 recording (docs/replay.md)")
def replay_versions(fig):
    """The shared Linux 7.2 recording (PA_REPLAY_72_RECORDING), replayed under
    linux=6.1 and linux=7.2, and under seed 002's per-CPU orders."""
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    rec = os.environ.get("PA_REPLAY_72_RECORDING",
                         os.path.join(src, "..", "shared", "traces", "linux-7.2-mthp-pressure"))
    if not os.path.isdir(rec):
        return (f"The recording is not here ({os.path.relpath(rec)}): set "
                "PA_REPLAY_72_RECORDING to the folder of the shared Linux 7.2 recording.\n")
    rec = os.path.relpath(rec)
    pairs = [("linux=6.1", "linux=7.2"), ("pcp_orders=0-3,9", "pcp_orders=0-4,9")]
    out, bars_lock, bars_unusable = [], [], []
    for a, b in pairs:
        j, cmd = fig.bench("replay", rec, "--compare", a, b)
        cfgs = j["configs"]
        rows = []
        fb = f"fallbacks (the kernel's: {num(cfgs[0]['kernel_fallbacks'])})"
        for name, key in ((fb, "fallbacks"), ("zone lock taken", "zone_lock"),
                          ("THPs served (of the kernel's)", "thp_served"),
                          ("failed, served by the kernel", "failed_kernel_served"),
                          ("served, failed by the kernel", "kernel_failed_served")):
            row = [name] + [num(c[key]) for c in cfgs]
            if key == "thp_served":
                row = [name] + [f"{num(c[key])} ({num(c['thp_kernel'])})" for c in cfgs]
            rows.append(row)
        for i, snap in enumerate(cfgs[0]["snapshots"]):
            sn = snap["name"]
            ps = [c["snapshots"][i]["pagealloc"] for c in cfgs]
            rows.append([f"{sn}: mixed pageblocks"] + [num(p["mixed_pageblocks"]) for p in ps])
            rows.append([f"{sn}: tainted pageblocks / regions"] +
                        [f"{num(p['tainted_pageblocks'])} / {num(p['tainted_regions'])}"
                         for p in ps])
            rows.append([f"{sn}: unusable index (9), kernel {num(snap['kernel']['unusable']['9'], 3)}"]
                        + [num(p["unusable"]["9"], 3) for p in ps])
            rows.append([f"{sn}: distance to the kernel"] +
                        [num(c["snapshots"][i]["tvd"], 4) for c in cfgs])
        for label, c in ((a, cfgs[0]), (b, cfgs[1])):
            if a.startswith("pcp_orders"):
                bars_lock.append((label, one(c["zone_lock"])))
            bars_unusable.append((label, one(c["snapshots"][-1]["pagealloc"]["unusable"]["9"])))
        out.append(fig.commands(cmd) + "\n" + fig.table(["", a, b], rows))
    return ("Fallbacks count claims and steals of another type's pageblocks; mixed pageblocks "
            "are movable pageblocks holding an unmovable or reclaimable allocation; tainted "
            "pageblocks and 1 GiB regions hold one; THPs are movable allocations of the "
            "pageblock order. The second pair is seed 002's experiment on a real workload: Linux "
            "7.2 keeps the 64 KiB mTHP allocations (order 4) off the per-CPU lists, so that each "
            "takes the zone lock.\n\n" + out[0] + "\n" + out[1] + "\n" +
            fig.chart("replay-zone-lock", "Zone lock taken, 7.2 recording", "acquisitions",
                      bars_lock) + "\n" +
            fig.chart("replay-unusable", "Unusable index (order 9) at the end, 7.2 recording",
                      "index", bars_unusable))


# --------------------------------------------------------------------------
# Allocation speed: instructions per pair, bulk frees on and off the lists,
# two threads. With --before PROGRAM, each figure is shown before -> now.
# --------------------------------------------------------------------------

HOT_BOOT = "mem=1G min_free_kbytes=0"
BULK_BOOT = "mem=4G min_free_kbytes=0"


def callgrind_pair(program, boot, ops):
    """Instructions per order-0 alloc+free pair: callgrind runs of 2*ops and ops pairs,
    the difference over ops (boot and shutdown cancel out). Returns (count, the
    annotate file of the longer run) or (None, None) without valgrind."""
    if not shutil.which("valgrind"):
        return None, None
    counts, out = [], None
    for n in (ops, 2 * ops):
        out = tempfile.NamedTemporaryFile(prefix="callgrind.", delete=False).name
        done = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                               program, "bench", "alloc-free-hot", "--order", "0", "--ops",
                               str(n), "--runs", "1", "--boot", boot],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        m = re.search(r"Collected : (\d+)", done.stderr)
        if done.returncode != 0 or not m:
            raise RuntimeError(f"callgrind of {program} exited {done.returncode}")
        counts.append(int(m.group(1)))
        if n == ops:
            os.unlink(out)
    return round((counts[1] - counts[0]) / ops), out


_free_counts = {}


def callgrind_free(program, boot, frees):
    """Instructions per pa_free_pages call of an order-9 alloc-free-bulk run of `frees`
    blocks and its warm-up run (callgrind collecting inside pa_free_pages only), or None
    without valgrind. Kept per (program, boot): a ratio asks again."""
    key = (program, boot, frees)
    if key in _free_counts:
        return _free_counts[key]
    if not shutil.which("valgrind"):
        return None
    out = tempfile.NamedTemporaryFile(prefix="callgrind.", delete=False).name
    done = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                           "--toggle-collect=pa_free_pages", program, "bench", "alloc-free-bulk",
                           "--order", "9", "--runs", "1", "--nr", str(frees), "--boot", boot,
                           "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    os.unlink(out)
    m = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or not m:
        raise RuntimeError(f"callgrind of {program} exited {done.returncode}")
    blocks = json.loads(done.stdout)["blocks"]
    _free_counts[key] = int(m.group(1)) / (2 * blocks)
    return _free_counts[key]


def annotate_summary(path, pairs, top=12):
    """The functions of a callgrind run by self instructions, per pair."""
    text = subprocess.run(["callgrind_annotate", path], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True).stdout
    os.unlink(path)
    rows = []
    table = text.split("file:function", 1)[-1].split("\n\n", 1)[0]  # up to the source listings
    for line in table.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(\S+:\S+)", line)
        if m and len(rows) < top:
            ir = int(m.group(1).replace(",", ""))
            if ir >= pairs:  # at least one per pair: boot and shutdown stay out
                rows.append([m.group(2), num(ir / pairs, 1)])
    return rows


# What a run is (the same in every output of one command), not a count to sum.
RUN_SHAPE = {"blocks", "blocks_per_round", "rounds", "runs", "order", "threads", "iterations"}


def merge_runs(a, b, key=None):
    """Two JSON outputs of one benchmark as one: metrics' samples joined (median, min and
    max taken again), counts summed, the shape of a run (RUN_SHAPE) and anything else as
    in a."""
    if key in RUN_SHAPE:
        return a
    if isinstance(a, dict) and "samples" in a and "samples" in b:
        s = a["samples"] + b["samples"]
        srt = sorted(s)
        mid = len(srt) // 2
        median = srt[mid] if len(srt) % 2 else (srt[mid - 1] + srt[mid]) / 2
        return dict(a, samples=s, median=median, min=srt[0], max=srt[-1])
    if isinstance(a, dict):
        return {k: merge_runs(v, b[k], k) if k in b else v for k, v in a.items()}
    if isinstance(a, int) and not isinstance(a, bool) and isinstance(b, int):
        return a + b
    return a


def alternate(fig, args, rounds=3):
    """args (with --runs R) run `rounds` times by the program measured, each time in a new
    process (a new layout in memory), and as many times by --before's if given, alternately:
    before, now, before, now, ..., so that a change of the machine's load falls on both. The
    outputs of a program are merged: R * rounds samples. Returns ({program: JSON}, the
    command as shown)."""
    programs = list(filter(None, (fig.before, fig.program)))
    rounds = 1 if fig.quick else rounds
    out, shown = {}, None
    for _ in range(rounds):
        for p in programs:
            if p == fig.before and out.get(p, {}) is None:
                continue
            try:
                j, c = fig.bench_with(p, *args)
            except RuntimeError:
                if p != fig.before:
                    raise
                out[p] = None  # an older program without these options: n/a
                continue
            out[p] = merge_runs(out[p], j) if p in out else j
            if p == fig.program:
                shown = c + (f"    # {rounds} times, the samples pooled" if rounds > 1 else "")
    return out, shown


def then_now(fig, fn):
    """fn(program) for the program measured, and for --before's if given: "before -> now"."""
    now = fn(fig.program)
    if not fig.before:
        return now
    try:
        then = fn(fig.before)
    except (KeyError, TypeError):  # the older program did not run it
        then = "n/a"
    return f"{then} -> {now}"


@section("speed", "Allocation speed: instructions per pair, bulk frees, two threads")
def speed(fig):
    ops = 20000 if fig.quick else 100000
    out, cmds = [], []
    annotated, buddy_annotated = [], []

    def instructions(boot, into):
        def one(program):
            n, path = callgrind_pair(program, boot, ops)
            if path and program == fig.program:
                into.extend(annotate_summary(path, 2 * ops))
            elif path:
                os.unlink(path)
            return num(n)
        return one

    rows = [["hot pair through the per-CPU lists",
             then_now(fig, instructions(HOT_BOOT, annotated)), "<= 100"],
            ["the buddy path (`pcp_orders=none`)",
             then_now(fig, instructions(HOT_BOOT + " pcp_orders=none", buddy_annotated)),
             "<= 800"]]
    shown = fig.shown_program
    out.append(fig.commands(
        f"valgrind --tool=callgrind {shown} bench alloc-free-hot --order 0 --ops N --runs 1 "
        f"--boot \"{HOT_BOOT}\"",
        f"valgrind --tool=callgrind {shown} bench alloc-free-hot --order 0 --ops N --runs 1 "
        f"--boot \"{HOT_BOOT} pcp_orders=none\""))
    out.append(f"\nInstructions per order-0 alloc+free pair: the runs of N = {2 * ops:,} and "
               f"{ops:,} pairs differ by that many pairs (the benchmark's loop, 13, included). "
               "Valgrind has no restartable sequences, so what it counts is the path of "
               "`pcp_rseq=0` and of embedders with a `cpu_id` hook: the CPU id one load off "
               "the thread pointer (the thread's cached `sched_getcpu()`), the list lock "
               "taken with an exchange. Before the lock each side tests the order's gate (a "
               "switched-off order goes to the zone without touching the lists' locks: the "
               "detour doubled the zone lock's contention in page_fault1 with the order "
               "off, 3 instructions a side); the "
               "allocation finds its list and the zone's watermark by the gfp type bits and "
               "compares the zone's free count under the lock; under the lock the free "
               "checks its pageblock's type and the order's switch with one compare and the "
               "descriptor's first word with another (read before the lock, the word would "
               "wait for the allocation's byte stores to it: 1 ns more a pair), and claims "
               "the block with one compare-and-swap of the word. The lists' fill is kept as room below "
               "`high` (one subtraction in place); the path keeps one statistics counter a "
               "side and Linux's `free_count` (added to on a free while under `batch << 5`, "
               "halved on an allocation), while `alloc_factor` is halved by the frees "
               "counted since the last refill; a free links the list's old head back to the "
               "freed block, so that spills can take the oldest blocks from the tail, as "
               "Linux's do. "
               "With rseq the list lock is taken by a restartable sequence instead: about as "
               "many instructions, no atomic."
               + (" Before -> now: `--before` names the program measured first." if fig.before
                  else "") + "\n\n")
    out.append(fig.table(["path", "instructions", "goal"], rows))

    args = ["bench", "alloc-free-hot", "--order", 0, "--runs", max(fig.runs, 6),
            *(["--ops", 200000] if fig.quick else []), "--boot"]
    got, shown = alternate(fig, args + [HOT_BOOT])
    exch, shown_exch = fig.bench(*args, HOT_BOOT + " pcp_rseq=0")
    rows = [["default (the list lock by restartable sequence where the machine allows)",
             then_now(fig, lambda p: mmm(got[p]["ns_per_op"]) if got.get(p) else "n/a"),
             "<= 15"],
            ["`pcp_rseq=0` (the list lock by exchange)", mmm(exch["ns_per_op"]), ""]]
    out.append("\n" + fig.commands(shown, shown_exch) +
               "\nNanoseconds per order-0 pair (median, min - max of the runs; with `--before`, "
               "the two programs' processes alternate). The owner's restartable sequence "
               "needs rseq registered, membarrier's rseq fence, no `cpu_id` hook, every CPU id "
               "below `nr_cpus` and an x86-64 build without TSan; the free keeps its "
               "compare-and-swap of the descriptor word (compaction may be isolating the "
               "block, or a second free racing on another CPU).\n\n")
    out.append(fig.table(["path", "ns per pair", "goal"], rows))
    if annotated:
        out.append(f"\nWhere the hot pair's instructions go (`callgrind_annotate` of the run "
                   f"of {2 * ops:,} pairs, self instructions per pair; `file.h:f` is what a "
                   "header of src/ inlined into f):\n\n")
        out.append(fig.table(["function", "per pair"], annotated))
    if buddy_annotated:
        out.append("\nThe buddy path's pair takes an order-0 block from a max-order one and "
                   "frees it at once: the allocation writes each upper half's descriptor in "
                   "one store, counts the halves only when a count is read and links them "
                   "into their lists only when another operation needs the lists, so the free "
                   "merges them back with one byte stored a level, without unlinking or "
                   "uncounting them. Where its instructions go, the same way:\n\n")
        out.append(fig.table(["function", "per pair"], buddy_annotated))

    nr = ["--nr", 65536] if fig.quick else []
    rows, rounds = [], {}
    for order, runs in ((0, 1 if fig.quick else 5), (9, 3 if fig.quick else 21)):
        args = ["bench", "alloc-free-bulk", "--order", order, "--compare", "--boot", BULK_BOOT,
                "--runs", runs] + nr
        j, c = alternate(fig, args)
        cmds.append(c)
        now = j[fig.program]
        rounds[order] = (f"{num(now['rounds'])} round{'s' if now['rounds'] > 1 else ''} of "
                         f"{num(now['blocks_per_round'])} blocks")
        rows.append([order, then_now(fig, lambda p: mmm(j[p]["on"]["free_ns_per_op"])),
                     then_now(fig, lambda p: mmm(j[p]["off"]["free_ns_per_op"])),
                     then_now(fig, lambda p: mmm(j[p]["free_on_off"]) + "x")])
    out.append("\n" + fig.commands(*cmds) +
               "\nBulk frees (ns per free) with the order on the per-CPU lists and off them "
               "(`pcp/orders/N/enabled`), in one pool: after a warm-up run of each, runs "
               "alternate off, on, on, off, ..., so that a change of the machine's load falls "
               "on both. A run allocates and frees " +
               ("65,536 blocks" if fig.quick else "1 Mi blocks") + " in rounds: a round "
               "allocates as many blocks as the free memory holds and then frees them all "
               f"(order 0: {rounds[0]}; order 9: {rounds[9]}, so that no one timer tick "
               "decides a run). One thread, on a pool of "
               "the machine's CPUs, finding its CPU as an embedder without a `cpu_id` hook "
               "does (the threads of the two-thread table below pose as CPUs through one). "
               "Each command runs " + ("once" if fig.quick else
               "three times, in three processes, so that no one layout in memory decides; the "
               "samples are pooled") + ". The last column "
               "is on / off of each pair of runs, median (min - max). Goal: on / off at most "
               "1.2x.\n\n")
    out.append(fig.table(["order", "on the lists", "off", "on / off"], rows))
    frees = 16384 if fig.quick else 65536
    on_boot, off_boot = f"{BULK_BOOT} pcp_orders=0-3,9", f"{BULK_BOOT} pcp_orders=0-3"

    def free_ratio(p):
        a, b = callgrind_free(p, on_boot, frees), callgrind_free(p, off_boot, frees)
        return num(a / b, 2) + "x" if a and b else "n/a"
    on = then_now(fig, lambda p: num(callgrind_free(p, on_boot, frees), 1))
    off = then_now(fig, lambda p: num(callgrind_free(p, off_boot, frees), 1))
    out.append("\n" + fig.commands(*(
        f"valgrind --tool=callgrind --toggle-collect=pa_free_pages {fig.shown_program} bench "
        f"alloc-free-bulk --order 9 --runs 1 --nr {frees} --boot \"{BULK_BOOT} "
        f"pcp_orders={o}\"" for o in ("0-3,9", "0-3"))) +
        "\nThe same order-9 frees counted in instructions, which the machine's load does not "
        "change: what `pa_free_pages` executes, all it calls included, over the frees of "
        "the warm-up run and the run.\n\n")
    out.append(fig.table(["order", "instructions per free, on the lists", "off", "on / off"],
                         [[9, on, off, then_now(fig, free_ratio)]]))

    runs = 1 if fig.quick else 7
    scale_nr = nr or ["--nr", 4 << 20]
    j, c = alternate(fig, ["bench", "alloc-free-bulk", "--order", 0, "--scaling", "--threads", 2,
                           "--boot", BULK_BOOT + " nr_cpus=2", "--runs", runs] + scale_nr)
    mops = lambda m: f"{m['median'] / 1e6:.1f} M ({m['min'] / 1e6:.1f} - {m['max'] / 1e6:.1f})"
    rows = [[t.replace("threads_", "") + (" thread" if t == "threads_1" else " threads"),
             then_now(fig, lambda p: mops(j[p][t]["ops_per_sec"])),
             then_now(fig, lambda p: mmm(j[p][t]["cpu_ns_per_op"])),
             then_now(fig, lambda p: mmm(j[p][t]["off_cpu_ms"], 1)),
             then_now(fig, lambda p: mmm(j[p][t]["runq_wait_ms"], 1)),
             then_now(fig, lambda p: mmm(j[p][t]["preemptions"], 0)),
             then_now(fig, lambda p: mmm(j[p][t]["sleeps"], 0)),
             then_now(fig, lambda p: num(j[p][t]["zone_lock_contended"])),
             then_now(fig, lambda p: num(j[p][t]["zone_lock_wait_ns"] / 1e3, 0))]
            for t in ("threads_1", "threads_2")]
    rows.append(["2 threads / 1 thread, wall time (each pair of runs)",
                 then_now(fig, lambda p: mmm(j[p]["speedup"]) + "x"), "", "", "", "", "", "", ""])
    rows.append(["2 threads / 1 thread, CPU time (each pair of runs)",
                 then_now(fig, lambda p: mmm(j[p]["cpu_speedup"]) + "x"), "", "", "", "", "", "",
                 ""])
    now = j[fig.program]
    blocks = (f"{num(now['blocks'])} blocks ({num(now['rounds'])} round"
              f"{'s' if now['rounds'] > 1 else ''} of {num(now['blocks_per_round'])})")
    out.append("\n" + fig.commands(c) +
               f"\nBulk order-0 work, {blocks} a run in all, each thread posing as its own "
               f"CPU, in one pool: after a warm-up run of each, runs of one thread and of two "
               f"alternate (1, 2, 2, 1, ...){'' if fig.quick else ', in three processes, the samples pooled'}. "
               f"Operations per second of all threads over the longest thread's wall time; "
               f"the threads' CPU time per operation (a wait that sleeps is not in it); what "
               f"kept the threads off their CPUs, per run, all threads: wall time minus CPU "
               f"time, of it the time they waited runnable on a run queue while other tasks "
               f"ran (the kernel's schedstat), involuntary context switches (preemptions) and "
               f"voluntary ones (sleeps: a zone-lock wait past its spins); the zone lock's "
               f"contended acquisitions and microseconds waited, summed over the "
               f"{runs * (1 if fig.quick else 3)} runs. Every sample is kept. CPU-time "
               f"scaling is threads / CPU ns per operation, two over one: the throughput had "
               f"each thread had its CPU to itself. With one thread the other vCPU takes the "
               f"machine's other work; with two, that work preempts them. Goal: two threads "
               f"at least 1.8x one.\n\n")
    out.append(fig.table(["threads", "allocations+frees per second", "CPU ns per operation",
                          "off CPU (ms per run)", "run-queue wait (ms per run)",
                          "preemptions per run", "sleeps per run", "zone lock contended",
                          "zone lock wait (us)"], rows))
    out.append(f"\nLoad average (1 min) when this section ended: {os.getloadavg()[0]:.1f} on "
               f"{os.cpu_count()} CPUs; wall-clock figures above it are shared with that load.\n")
    return "".join(out)


# --------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--program", default="build/pagealloc")
    ap.add_argument("--out", default="docs/figures.md")
    ap.add_argument("--only", help="comma-separated section names (default: all)")
    ap.add_argument("--quick", action="store_true",
                    help="one run each, small sizes: checks the generator, not the speed")
    ap.add_argument("--list", action="store_true", help="list the sections")
    ap.add_argument("--before", help="another pagealloc program: sections that compare show "
                    "its figures -> this one's")
    a = ap.parse_args()
    if a.list:
        for name, title, _ in SECTIONS:
            print(f"{name:16} {title}")
        return 0
    wanted = a.only.split(",") if a.only else [n for n, _, _ in SECTIONS]
    unknown = set(wanted) - {n for n, _, _ in SECTIONS}
    if unknown:
        print(f"figures: no section {', '.join(sorted(unknown))} (--list)", file=sys.stderr)
        return 2
    out_dir = os.path.dirname(os.path.abspath(a.out))
    os.makedirs(out_dir, exist_ok=True)
    fig = Figures(os.path.abspath(a.program), out_dir, a.quick,
                  os.path.abspath(a.before) if a.before else None)
    parts = ["# Figures\n",
             "Generated by `make figures` (tools/figures.py); do not edit by hand. Each table "
             "follows the exact commands that produced it, run from the top of the source tree "
             "after `make build`. Figures are medians of the runs with min and max in brackets unless a "
             "table says otherwise; speeds depend on the machine and its load.\n",
             "## Machine\n", machine(fig.program, fig.before)]
    for name, title, fn in SECTIONS:
        if name in wanted:
            parts += [f"## {title}\n", fn(fig)]
    parts.append(f"\n_All commands took {fig.seconds:.0f} s._\n")
    with open(a.out, "w") as f:
        f.write("\n".join(parts))
    print(f"figures: wrote {a.out} ({fig.seconds:.0f} s of benchmarks)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
