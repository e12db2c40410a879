#!/usr/bin/env python3
"""Seed 002's own fio-on-pmem runs, per request: what the seed's machine spent and counted.

Seed 002 (Shuang Zhai's fio/pmem benchmark, line 531) published the metrics of every data
point at github.com/zhaishuang1/MglruPerf: per run a `perf report` and its flame graph, and
`vmstat` and `top` once a minute. This script reads a checkout of that repository and the
seed's throughput table (its appendix, `raw_data_fio.r`) and prints, per cell (kernel x
distribution x jobs), means over the data points of:

- requests/s (the seed's MiB/s x 256: 4 KiB reads), and the CPUs busy (`top`'s %Cpu line);
- per request: the CPU time, vmstat's counters over the measured 10 minutes (minutes 20-29:
  `--ramp_time=20m --runtime=10m`);
- the share of cycles in the lruvec lock's spin, in the pmem driver's copy (`copy_mc_fragile`),
  in io_uring's worker threads (`iou-wrk-*`), fio's own threads and kswapd;
- the pmem copy per 4 KiB miss;
- the lock's hold per operation (baseline only: cycles under the lock outside the spin, per
  folio added, activated or isolated), from the flame graphs.

Usage: seed002_profile.py MGLRUPERF_DIR SEED_002_TXT (prints a markdown table)
"""
import collections
import glob
import os
import re
import statistics
import sys

JOBS = {"40": 40, "80": 80}
DISTS = ["random", "zipf", "normal"]
CPUS_BOUND = 40  # numactl --cpubind=0: one socket of 40 CPUs (seed 002, line 466)
RUN_MINUTES = (20, 29)  # vmstat-20 .. vmstat-29: inside the 10 minutes measured


def seed_throughput(seed_txt):
    """The appendix's raw MiB/s: baseline then patched, 40 then 80 jobs, random/zipf/normal."""
    text = open(seed_txt).read()
    body = text[text.index("v <- c(") : text.index("a <- array(")]
    values = [float(x) for x in re.findall(r"\d+\.\d+", body)]
    if len(values) != 120:
        sys.exit(f"{seed_txt}: expected 120 throughput values, found {len(values)}")
    cells = {}
    k = 0
    for kernel in ("baseline", "patched"):
        for jobs in ("40", "80"):
            for dist in DISTS:
                cells[(kernel, dist, jobs)] = values[k : k + 10]
                k += 10
    return cells


def vmstat(path):
    out = {}
    for line in open(path):
        f = line.split()
        if len(f) == 2:
            out[f[0]] = int(f[1])
    return out


def busy_cpus(run_dir):
    """CPUs busy from top's '%Cpu(s)' line (all 80 CPUs of the machine), over the run."""
    busy = []
    for m in range(*RUN_MINUTES):
        path = os.path.join(run_dir, f"top-{m}")
        if not os.path.exists(path):
            continue
        for line in open(path):
            if line.startswith("%Cpu"):
                idle = float(re.search(r"([\d.]+) id", line).group(1))
                wa = float(re.search(r"([\d.]+) wa", line).group(1))
                busy.append((100 - idle - wa) / 100 * 80)
                break
    return statistics.mean(busy) if busy else float("nan")


def perf_shares(path):
    """Self cycles by symbol and by command (threads of a kind summed), in % of all."""
    by_sym = collections.Counter()
    by_cmd = collections.Counter()
    for line in open(path):
        if line.startswith("#"):
            continue
        f = line.split()
        if len(f) < 6 or not f[0].endswith("%") or not f[1].endswith("%"):
            continue
        self_pct = float(f[1][:-1])
        by_sym[f[-1]] += self_pct
        by_cmd[re.sub(r"-\d+$", "", f[2])] += self_pct
    return by_sym, by_cmd


FRAME = re.compile(
    r'<title>(.*?) \(([\d,]+) samples?, [\d.]+%\)</title><rect x="([\d.]+)" y="([\d.]+)" '
    r'width="([\d.]+)"'
)
# The kernel functions of 5.15 that hold lruvec->lru_lock around their per-folio work.
LOCK_SITES = {
    "__pagevec_lru_add": "add",
    "pagevec_lru_move_fn": "activate",
    "isolate_lru_pages": "isolate",
    "lru_note_cost": "note_cost",
}
SPIN = "native_queued_spin_lock_slowpath"


def flame(svg):
    """A flame graph's frames as call chains (the frame first, then its callers), each with its
    own samples (its width less its children's), and the samples of all."""
    frames = [
        (n, int(c.replace(",", "")), float(x), float(y), float(w))
        for n, c, x, y, w in FRAME.findall(open(svg).read())
    ]
    by_y = collections.defaultdict(list)
    for i, f in enumerate(frames):
        by_y[f[3]].append(i)
    parent = {}
    for i, f in enumerate(frames):
        # The caller is the frame one row (16 px) below that spans this one.
        for j in by_y.get(f[3] + 16, []):
            g = frames[j]
            if g[2] - 0.01 <= f[2] and f[2] + f[4] <= g[2] + g[4] + 0.01:
                parent[i] = j
                break
    kids = collections.Counter()
    for i, j in parent.items():
        kids[j] += frames[i][1]
    total = sum(f[1] for i, f in enumerate(frames) if i not in parent)
    chains, own = [], []
    for i, f in enumerate(frames):
        chain, k = [f[0]], i
        while k in parent:
            k = parent[k]
            chain.append(frames[k][0])
        chains.append(chain)
        own.append(f[1] - kids[i])
    return chains, own, total


def lock_holds(graph):
    """Cycles (fraction of all) spent by each lock site outside the spin, from a flame graph
    (`flame`): every frame's own samples, assigned to the nearest lock site among its
    callers."""
    frames, own, total = graph
    held = collections.Counter()
    for chain, samples in zip(frames, own):
        if SPIN in chain:
            continue
        site = next((LOCK_SITES[c] for c in chain if c in LOCK_SITES), None)
        if site:
            held[site] += samples
    return {s: v / total for s, v in held.items()}


# The model's own costs within a read miss, left out of the miss's remaining CPU: the copy
# (the device), the lock's spin and adds (`lru_lock_hold_ns` and the lock's waits), reclaim
# entered from the allocation (its own costs), the allocation itself (`alloc_page_ns`).
MISS_ROOT = "page_cache_ra_unbounded"
MISS_EXCLUDE = {
    "copy_mc_fragile",
    SPIN,
    "try_to_free_pages",
    "__alloc_pages",
    "__pagevec_lru_add",
}


def miss_cpu(graph):
    """Cycles (fraction of all) of the read misses' own work, from a flame graph (`flame`):
    frames under `page_cache_ra_unbounded` (5.15's readahead, which FMODE_RANDOM's one-page
    reads go through) outside MISS_EXCLUDE."""
    frames, own, total = graph
    miss = sum(
        samples
        for chain, samples in zip(frames, own)
        if MISS_ROOT in chain and not MISS_EXCLUDE.intersection(chain)
    )
    return miss / total


def cell_figures(root, kernel, dist, jobs, mibs):
    rows = []
    for point, rate in enumerate(mibs, start=1):
        run = os.path.join(root, "fio", f"{kernel}_{dist}_{jobs}_{point}")
        if not os.path.isdir(run):
            continue
        req_s = rate * 256
        a = vmstat(os.path.join(run, f"vmstat-{RUN_MINUTES[0]}"))
        b = vmstat(os.path.join(run, f"vmstat-{RUN_MINUTES[1]}"))
        reqs = req_s * 60 * (RUN_MINUTES[1] - RUN_MINUTES[0])
        per_req = {k: (b[k] - a[k]) / reqs for k in b if k in a}
        cpus = busy_cpus(run)
        syms, cmds = collections.Counter(), collections.Counter()
        perfs = sorted(glob.glob(os.path.join(run, "perf-*.txt")))
        for p in perfs:
            s, c = perf_shares(p)
            syms.update(s)
            cmds.update(c)
        n = max(len(perfs), 1)
        # Each flame graph is parsed once; the lock sites are 5.15 classic's.
        graphs = [flame(p) for p in sorted(glob.glob(os.path.join(run, "perf-*.svg")))]
        holds = collections.Counter()
        if kernel == "baseline":
            for g in graphs:
                holds.update(lock_holds(g))
        miss_share = statistics.mean(miss_cpu(g) for g in graphs) if graphs else 0.0
        misses = per_req.get("pgpgin", 0) / 4
        cpu_per_req_us = cpus / req_s * 1e6
        row = {
            "req_s": req_s,
            "cpus": cpus,
            "cpu_us": cpu_per_req_us,
            "misses": misses,
            "scan_direct": per_req.get("pgscan_direct", 0),
            "scan_kswapd": per_req.get("pgscan_kswapd", 0),
            "activate": per_req.get("pgactivate", 0),
            "deactivate": per_req.get("pgdeactivate", 0),
            "spin": syms[SPIN] / n,
            "copy_mc": syms["copy_mc_fragile"] / n,
            "iou_wrk": cmds["iou-wrk"] / n,
            "fio": cmds["fio"] / n,
            "kswapd": cmds["kswapd0"] / n,
        }
        row["copy_us_per_miss"] = row["copy_mc"] / 100 * cpu_per_req_us / misses if misses else 0
        row["miss_cpu_us"] = miss_share * cpu_per_req_us / misses if misses else 0
        if graphs and kernel == "baseline":
            k = len(graphs)
            per_op = {
                "add": misses,
                "activate": row["activate"],
                "isolate": row["scan_direct"] + row["scan_kswapd"] + row["deactivate"],
            }
            for site, ops in per_op.items():
                frac = holds[site] / k
                row[f"hold_{site}_ns"] = frac * cpu_per_req_us * 1e3 / ops if ops else 0
            row["hold_total_ns"] = sum(holds.values()) / k * cpu_per_req_us * 1e3
        rows.append(row)
    return {k: statistics.mean(r[k] for r in rows) for k in rows[0]} if rows else None


def main():
    args = sys.argv[1:]
    if len(args) != 2 or any(a.startswith("-") for a in args):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    root, seed_txt = args
    if not os.path.isdir(os.path.join(root, "fio")):
        sys.exit(f"{root}: no fio/ directory (a checkout of zhaishuang1/MglruPerf?)")
    tput = seed_throughput(seed_txt)
    cols = [
        ("req/s", "req_s", "{:.3g}"),
        ("CPUs busy", "cpus", "{:.1f}"),
        ("CPU/req µs", "cpu_us", "{:.1f}"),
        ("misses/req", "misses", "{:.3f}"),
        ("pgscan direct/req", "scan_direct", "{:.3f}"),
        ("pgscan kswapd/req", "scan_kswapd", "{:.3f}"),
        ("pgactivate/req", "activate", "{:.3f}"),
        ("spin %", "spin", "{:.1f}"),
        ("copy_mc %", "copy_mc", "{:.1f}"),
        ("iou-wrk %", "iou_wrk", "{:.1f}"),
        ("fio %", "fio", "{:.1f}"),
        ("kswapd %", "kswapd", "{:.2f}"),
        ("copy/miss µs", "copy_us_per_miss", "{:.2f}"),
        ("miss CPU µs", "miss_cpu_us", "{:.2f}"),
        ("hold/req ns", "hold_total_ns", "{:.0f}"),
        ("hold/add ns", "hold_add_ns", "{:.0f}"),
        ("hold/activate ns", "hold_activate_ns", "{:.0f}"),
        ("hold/isolate ns", "hold_isolate_ns", "{:.0f}"),
    ]
    print("| cell | " + " | ".join(c[0] for c in cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for jobs in ("40", "80"):
        for dist in DISTS:
            for kernel in ("baseline", "patched"):
                f = cell_figures(root, kernel, dist, jobs, tput[(kernel, dist, jobs)])
                if f is None:
                    continue
                cells = [fmt.format(f[key]) if key in f else "" for _, key, fmt in cols]
                name = f"{kernel} {dist} {jobs} jobs"
                print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
