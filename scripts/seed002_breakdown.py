#!/usr/bin/env python3
"""Seed 002's fio-on-pmem CPU per request, by kernel path: where a request's CPU went on the
seed's machine, classic (5.15) against MGLRU (5.15 + MGLRU v6), for one cell of its matrix.

Reads a checkout of github.com/zhaishuang1/MglruPerf (seed 002, line 531) and the seed's
throughput table, as `seed002_profile.py` does, and splits each data point's CPU per request
(CPUs busy / requests per second) by the flame graphs' frames: every frame's own samples go
to the first category below found on its call chain (the frame itself, then its callers), in
the order listed, so the lock's spin inside direct reclaim counts as spin. Means over the
cell's data points and their flame graphs.

Usage: seed002_breakdown.py MGLRUPERF_DIR SEED_002_TXT [DIST JOBS]
(default: random 40; prints a markdown table)
"""
import collections
import glob
import importlib.util
import os
import statistics
import sys

# (category, frame): the first frame of this list on a sample's chain names its category.
CATEGORIES = [
    ("lruvec lock spin", "native_queued_spin_lock_slowpath"),
    ("pmem copy (`copy_mc_fragile`)", "copy_mc_fragile"),
    ("direct reclaim (`try_to_free_pages`)", "try_to_free_pages"),
    ("kswapd", "kswapd"),
    ("page allocation", "__alloc_pages"),
    ("miss path (`page_cache_ra_unbounded`)", "page_cache_ra_unbounded"),
    ("copy to user", "copy_user_enhanced_fast_string"),
    ("rest of `filemap_read`", "filemap_read"),
    ("io-wq: `schedule`", "schedule"),
    ("io-wq: `try_to_wake_up`", "try_to_wake_up"),
    ("io_uring submission (`io_submit_sqes`)", "io_submit_sqes"),
    ("io-wq worker loop (`io_wqe_worker`)", "io_wqe_worker"),
    ("idle", "cpuidle_enter"),
]
OTHER = "other"


def profile_module():
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location(
        "seed002_profile", os.path.join(here, "seed002_profile.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def shares(graph):
    """Fraction of all samples per category, from a flame graph (`seed002_profile.flame`)."""
    chains, own, total = graph
    c = collections.Counter()
    for chain, samples in zip(chains, own):
        cat = next((name for name, frame in CATEGORIES if frame in chain), OTHER)
        c[cat] += samples
    return {k: v / total for k, v in c.items()}


def cell(p, root, kernel, dist, jobs, mibs):
    """Mean µs per request of each category over the cell's data points."""
    per_point = []
    for point, rate in enumerate(mibs, start=1):
        run = os.path.join(root, "fio", f"{kernel}_{dist}_{jobs}_{point}")
        svgs = sorted(glob.glob(os.path.join(run, "perf-*.svg")))
        if not svgs:
            continue
        cpu_us = p.busy_cpus(run) / (rate * 256) * 1e6
        graphs = [shares(p.flame(s)) for s in svgs]
        names = {k for g in graphs for k in g}
        per_point.append({k: cpu_us * statistics.mean(g.get(k, 0) for g in graphs)
                          for k in names} | {"total": cpu_us})
    if not per_point:
        return None
    names = {k for r in per_point for k in r}
    return {k: statistics.mean(r.get(k, 0) for r in per_point) for k in names}


def main():
    args = sys.argv[1:]
    if len(args) not in (2, 4) or any(a.startswith("-") for a in args):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    root, seed_txt = args[:2]
    dist, jobs = (args[2], args[3]) if len(args) == 4 else ("random", "40")
    if not os.path.isdir(os.path.join(root, "fio")):
        sys.exit(f"{root}: no fio/ directory (a checkout of zhaishuang1/MglruPerf?)")
    p = profile_module()
    tput = p.seed_throughput(seed_txt)
    cells = {}
    for kernel in ("baseline", "patched"):
        mibs = tput.get((kernel, dist, jobs))
        if not mibs:
            sys.exit(f"{seed_txt}: no throughput for {kernel} {dist} {jobs}")
        cells[kernel] = cell(p, root, kernel, dist, jobs, mibs)
        if cells[kernel] is None:
            sys.exit(f"{root}: no flame graphs for {kernel} {dist} {jobs}")
    print(f"| µs per request ({dist}, {jobs} jobs) | 5.15 (classic) | 5.15 + MGLRU |")
    print("|---|---|---|")
    for name in [n for n, _ in CATEGORIES] + [OTHER, "total"]:
        row = [cells[k].get(name, 0) for k in ("baseline", "patched")]
        label = f"**{name}**" if name == "total" else name
        print(f"| {label} | {row[0]:.2f} | {row[1]:.2f} |")


if __name__ == "__main__":
    main()
