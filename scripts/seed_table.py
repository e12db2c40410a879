"""Builds the seed-scenario results table (markdown) from `compare --save` JSON files.

Usage: python3 scripts/seed_table.py target/release/reclaimlab DIR > table.md, where DIR holds
NAME.json from `reclaimlab compare NAME --policies classic:6.12,classic:7.2,mglru:6.12,mglru:7.1,
mglru:7.2,mglru:7.2.13 --seeds 6 --save DIR/NAME.json` for every seed scenario
(docs/seed-results.md).

Per scenario and metric: each policy's mean with its 95% CI (cut at 0, or to [0, 1] for Jain's
index), 95% CIs of the relative change (Welch's t on the log ratio of the means)
of MGLRU 6.12 against classic 6.12, of MGLRU 7.2 against the classical path of 7.2 (the seeds'
"CLRU"), of 7.2 against 7.1 (the 2026 series' own effect) and of mglru:7.2.13 (Debian's 7.2)
against classic 7.2, each where the runs have both policies. The
statistics come from `reclaimlab stats` (the same code as `compare`).
"""
import json
import re
import subprocess
import sys

BIN = sys.argv[1]
DIR = sys.argv[2]


def root_stat(r, k):
    for m in r["memcgs"]:
        if m["path"] == "/":
            return m["stat"].get(k, 0)
    return 0


def req(r, f):
    q = r["requests"]
    return f(q) if q else 0.0


GET = {
    "ops/s": lambda r: req(r, lambda q: q["per_sec"]),
    # The sum of the clients' own rates: a time-based run's total (scripts/claims.py).
    "requests/s, clients summed": lambda r: req(r, lambda q: q.get("workers_per_sec", 0.0)),
    "req latency mean (us)": lambda r: req(r, lambda q: q["latency"]["mean_ns"] / 1e3),
    "req latency p95 (us)": lambda r: req(r, lambda q: q["latency"]["p95_ns"] / 1e3),
    "Jain over clients": lambda r: req(r, lambda q: (q["fairness_workers"] or {}).get("jain", 0)),
    "Jain over memcgs": lambda r: req(r, lambda q: (q["fairness_memcgs"] or {}).get("jain", 0)),
    "rounds": lambda r: r["marks"] / 96,
    "OOM kills": lambda r: r["oom_kills"],
    "elapsed (s)": lambda r: r["sim_time_ns"] / 1e9,
    "direct reclaim (ms)": lambda r: r["vmstat"].get("direct_reclaim_ns", 0) / 1e6,
    "direct reclaim pages": lambda r: root_stat(r, "pgsteal_direct"),
    "dirty throttle (ms)": lambda r: r["vmstat"].get("dirty_throttle_ns", 0) / 1e6,
    "misses": lambda r: r["misses"],
    "sys CPU (s)": lambda r: r.get("cpu", {}).get("sys_ns", 0) / 1e9,
    "kswapd CPU (ms)": lambda r: r.get("cpu", {}).get("kswapd_ns", 0) / 1e6,
    "run-queue wait (ms)": lambda r: r.get("cpu", {}).get("runqueue_wait_ns", 0) / 1e6,
}
for k in ["pgpgin", "pgpgout", "pswpin", "workingset_refault_file", "workingset_refault_anon"]:
    GET[k] = (lambda k: lambda r: r["vmstat"].get(k, 0))(k)

SCENARIOS = [
    ("ycsb-b", ["ops/s", "req latency mean (us)", "pgpgin", "pgpgout", "workingset_refault_file", "direct reclaim (ms)", "kswapd CPU (ms)"],
     "before 60653 ops/s, refault_file 12.9M, pgpgin 165M; after 82384 (+35.8%), 7.13M (-44.7%), 113M (-31.5%); classic 93714, 15.0M, 85.4M"),
    ("chrome-node", ["ops/s", "requests/s, clients summed", "req latency mean (us)", "Jain over clients", "Jain over memcgs", "direct reclaim (ms)"],
     "MGLRU ~82-84k requests, Jain 0.991-0.997; classic ~60-62k, Jain 0.981"),
    ("file-anon-mix", ["rounds", "OOM kills", "direct reclaim (ms)"],
     "classic 128 rounds; MGLRU before the series OOM after ~10-20 rounds; after 128 rounds"),
    ("dd-throttle", ["OOM kills", "ops/s", "dirty throttle (ms)", "direct reclaim (ms)"],
     "before the series: OOM; after: none"),
    ("mysql-ro", ["ops/s", "pswpin", "direct reclaim (ms)"],
     "tps: MGLRU before 17314, after 17286, classic 16245"),
    ("fio-mmap", ["ops/s", "misses", "direct reclaim (ms)"],
     "MB/s: MGLRU before 9034, after 9066, classic 8255"),
    ("kernel-build", ["elapsed (s)", "sys CPU (s)", "kswapd CPU (ms)", "direct reclaim (ms)", "pswpin"],
     "sys time: MGLRU before 2823 s, after 2801 s, classic 5024 s"),
    ("android-launch", ["req latency mean (us)", "req latency p95 (us)", "direct reclaim (ms)", "direct reclaim pages", "workingset_refault_anon", "workingset_refault_file", "pgpgin"],
     "series v5: launch mean -2%, P95 -12% (one report); other report: refault_anon +282%, refault_file +639%, direct reclaim ~5x slower"),
    ("fio-pmem", ["ops/s", "req latency p95 (us)", "misses", "direct reclaim (ms)", "kswapd CPU (ms)", "run-queue wait (ms)"],
     "MGLRU vs 5.15: +39% to +49% uniform"),
    ("kv-cache", ["ops/s", "misses", "dirty throttle (ms)", "direct reclaim (ms)"],
     "MGLRU +14% to +32%"),
]


def stats(cols):
    """Relative-change CIs of each later column against the first, from `reclaimlab stats`."""
    n = len(cols[0])
    text = "\n".join(" ".join(repr(float(c[i])) for c in cols) for i in range(n))
    out = subprocess.run([BIN, "stats", "-"], input="a b\n" + text, capture_output=True, text=True).stdout
    m = re.search(r"\n  b\s+(\[.*?\]|no significance|-)", out)
    return m.group(1) if m else "?"


def mean_ci(xs, domain):
    n = len(xs)
    mean = sum(xs) / n
    text = "\n".join(repr(float(x)) for x in xs)
    out = subprocess.run([BIN, "stats", "--domain", domain, "-"], input="x\n" + text,
                         capture_output=True, text=True).stdout
    m = re.search(r"\n  x\s+\d+\s+(\S+)\s+(\S+)\s+\[(\S+), (\S+)\]", out)
    if not m:
        return f"{mean:.4g}"
    return f"{float(m.group(1)):.4g} [{float(m.group(3)):.4g}, {float(m.group(4)):.4g}]"


def welch(base, xs):
    if sum(base) == 0:
        return "= 0" if sum(xs) == 0 else "(classic 0)"
    if sum(xs) == 0:
        return "-100% (all 0)"
    if all(x == base[0] for x in base) and all(x == xs[0] for x in xs):
        if base[0] == xs[0]:
            return "="
        return f"{(xs[0] - base[0]) / base[0] * 100:+.1f}% (exact)" if base[0] else "exact"
    return stats([base, xs])


# The comparisons, by policy: MGLRU 6.12 against classic 6.12 (one kernel), MGLRU 7.2 against
# the classical path of the same 7.2 kernel (the seeds' "CLRU", MGLRU disabled), the 2026
# series' own effect (7.2 against 7.1) and Debian's 7.2 against that classical 7.2.
VS = [("mglru:6.12", "classic:6.12", "6.12 vs classic 6.12"),
      ("mglru:7.2", "classic:7.2", "7.2 vs classic 7.2"),
      ("mglru:7.2", "mglru:7.1", "7.2 vs 7.1"),
      ("mglru:7.2.13", "classic:7.2", "7.2.13 vs classic 7.2")]

header = None
for name, metrics, seed in SCENARIOS:
    runs = json.load(open(f"{DIR}/{name}.json"))
    pols = [r[0]["policy"] for r in runs]
    vs_here = [(pols.index(o), pols.index(b), label) for o, b, label in VS if o in pols and b in pols]
    if header is None:
        header = ["scenario", "metric"] + pols + [label for _, _, label in vs_here]
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
    elif header[2:2 + len(pols)] != pols:
        sys.exit(f"{name}.json has policies {pols}, the table's first scenario {header[2:2 + len(pols)]}")
    for k in metrics:
        cols = [[GET[k](r) for r in per] for per in runs]
        cells = [mean_ci(c, "unit" if k.startswith("Jain") else "nonnegative") for c in cols]
        vs = [welch(cols[b], cols[o]) for o, b, _ in vs_here]
        print(f"| {name} | {k} | " + " | ".join(cells + vs) + " |")
    print(f"| {name} | *seed* | {seed} " + "|" * (len(header) - 2) + "|")
