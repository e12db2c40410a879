#!/usr/bin/env python3
"""reclaimlab and libCacheSim side by side on the same oracleGeneral traces.

Outside the test suite and not a project dependency: libCacheSim (PyPI `libcachesim`) and numpy
are installed into a virtual environment of their own (default
${XDG_CACHE_HOME:-~/.cache}/reclaimlab/bench-venv). Every run is a child process, timed with
time.perf_counter and measured with wait4's ru_maxrss, so both tools are measured the same way.

Traces:
  zipf   N requests (default 20M, --quick 2M) Zipf(alpha=1.0) over 1M objects of 4096 bytes,
         drawn with numpy's seeded Generator (inverse CDF), one request per second of clock_time
         per 1000 requests; cached on disk.
  cloudphysics   ../shared/traces/cloudPhysicsIO.vscsi converted to oracleGeneral with one
         4096-byte object per 4 KiB page each request covers (reclaimlab's own vscsi page
         mapping), so both tools see the same page requests.

For each trace and capacity (1%, 10%, 50% of the distinct pages) it runs libCacheSim's LRU and
reclaimlab's lru, classic and mglru:7.2 with --cache-pages, and prints a Markdown table:
misses, miss ratio, requests/s, peak RSS and reclaimlab's speed relative to libCacheSim's LRU.
Textbook LRU must miss exactly as libCacheSim's LRU does (MATCH).

  python3 scripts/bench_libcachesim.py [--quick] [--reclaimlab PATH] [--json OUT]
"""

import argparse
import json
import os
import struct
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "reclaimlab"
PAGE = 4096
OBJECTS = 1_000_000

GENERATE = r"""
import sys, numpy as np
n_req, n_obj, out, seed = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
rng = np.random.default_rng(seed)
w = 1.0 / np.arange(1, n_obj + 1)
cdf = np.cumsum(w); cdf /= cdf[-1]
ranks = np.searchsorted(cdf, rng.random(n_req))
ids = (rng.permutation(n_obj)[ranks] + 1).astype(np.uint64)
rec = np.zeros(n_req, dtype=[('t', '<u4'), ('id', '<u8'), ('sz', '<u4'), ('nx', '<i8')])
rec['t'] = np.arange(n_req) // 1000
rec['id'] = ids
rec['sz'] = 4096
rec['nx'] = -1
rec.tofile(out)
print(len(np.unique(ids)))
"""

LIBCACHESIM_LRU = r"""
import sys, libcachesim as lcs
reader = lcs.TraceReader(sys.argv[1], lcs.TraceType.ORACLE_GENERAL_TRACE)
cache = lcs.LRU(int(sys.argv[2]) * 4096)
miss_ratio, _ = cache.process_trace(reader)
print(repr(miss_ratio))
"""


def venv_python(venv: Path) -> Path:
    """The virtual environment's python, created with libcachesim and numpy if missing."""
    python = venv / "bin" / "python"
    if not python.exists():
        print(f"creating {venv} (libcachesim, numpy from PyPI)", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "libcachesim", "numpy"], check=True)
    return python


GNU_TIME = Path("/usr/bin/time")


def timed(cmd):
    """Runs cmd; returns (stdout, wall seconds, peak RSS MiB).

    The peak RSS comes from GNU time when it is installed: a child forked from this (large)
    Python process would otherwise report the parent's RSS at the fork as its own peak."""
    rss_file = CACHE / "bench-rss.txt"
    wrapped = [str(GNU_TIME), "-f", "%M", "-o", str(rss_file), *map(str, cmd)] if GNU_TIME.exists() else cmd
    start = time.perf_counter()
    child = subprocess.Popen(wrapped, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = child.stdout.read()
    err = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(map(str, cmd))}\n{err.decode(errors='replace')}")
    rss_kib = int(rss_file.read_text().split()[-1]) if GNU_TIME.exists() else usage.ru_maxrss
    return out.decode(), wall, rss_kib / 1024


def zipf_trace(python: Path, requests: int) -> tuple[Path, int]:
    path = CACHE / f"zipf1.0-{requests}-{OBJECTS}.oracleGeneral"
    meta = path.with_suffix(".distinct")
    if not (path.exists() and meta.exists()):
        path.parent.mkdir(parents=True, exist_ok=True)
        out = subprocess.run(
            [str(python), "-c", GENERATE, str(requests), str(OBJECTS), str(path), "42"],
            check=True, capture_output=True, text=True,
        ).stdout
        meta.write_text(out.strip())
    return path, int(meta.read_text())


def vscsi_requests(data: bytes):
    """(time_us, first_page, pages) of every read or write request (trace/vscsi.rs)."""
    def tag(size, ver_at):
        return all(struct.unpack_from("<H", data, i * size + ver_at)[0] >> 8 == (2 if size == 40 else 1)
                   for i in range(2))
    size = 40 if tag(40, 2) else 32 if tag(32, 14) else None
    if size is None:
        sys.exit("not a vscsi trace")
    reads = {0x08, 0x28, 0x2D, 0x88, 0xA8}
    writes = {0x0A, 0x2A, 0x3F, 0x8A, 0x8E, 0x9A, 0x9C, 0xAA, 0xAE}
    for off in range(0, len(data) - len(data) % size, size):
        if size == 40:
            cmd, = struct.unpack_from("<H", data, off)
            length, = struct.unpack_from("<I", data, off + 8)
        else:
            length, = struct.unpack_from("<I", data, off + 4)
            cmd, = struct.unpack_from("<H", data, off + 12)
        lbn, ts = struct.unpack_from("<QQ", data, off + 16)
        if cmd not in reads and cmd not in writes:
            continue
        start = lbn * 512
        last = start + max(length, 1) - 1
        yield ts, start // PAGE, last // PAGE - start // PAGE + 1


def cloudphysics_trace() -> tuple[Path, int]:
    src = REPO.parent / "shared" / "traces" / "cloudPhysicsIO.vscsi"
    path = CACHE / "cloudPhysicsIO.pages.oracleGeneral"
    meta = path.with_suffix(".distinct")
    if not (path.exists() and meta.exists()):
        path.parent.mkdir(parents=True, exist_ok=True)
        requests = list(vscsi_requests(src.read_bytes()))
        t0 = min(ts for ts, _, _ in requests)
        pages = set()
        with open(path, "wb") as out:
            for ts, first, n in requests:
                for p in range(first, first + n):
                    pages.add(p)
                    out.write(struct.pack("<IQIq", (ts - t0) // 1_000_000, p + 1, PAGE, -1))
        meta.write_text(str(len(pages)))
    return path, int(meta.read_text())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reclaimlab", type=Path, default=REPO / "target" / "release" / "reclaimlab")
    ap.add_argument("--venv", type=Path, default=CACHE / "bench-venv")
    ap.add_argument("--quick", action="store_true", help="a 2M-request Zipf trace")
    ap.add_argument("--requests", type=int, help="requests of the Zipf trace (default 20M)")
    ap.add_argument("--policies", default="lru,classic,mglru:7.2")
    ap.add_argument("--json", type=Path, help="also write the rows as JSON")
    a = ap.parse_args()
    if not a.reclaimlab.exists():
        subprocess.run(["cargo", "build", "--release", "-p", "reclaimlab-cli"], cwd=REPO, check=True)
    python = venv_python(a.venv)
    requests = a.requests or (2_000_000 if a.quick else 20_000_000)
    traces = [("zipf", *zipf_trace(python, requests)), ("cloudphysics", *cloudphysics_trace())]
    rows = []
    for name, path, distinct in traces:
        n = path.stat().st_size // 24
        for pct in (1, 10, 50):
            cap = max(1, distinct * pct // 100)
            out, wall, rss = timed([str(python), "-c", LIBCACHESIM_LRU, str(path), str(cap)])
            base = {"trace": name, "requests": n, "distinct": distinct, "capacity_pages": cap}
            lcs_misses = round(float(out) * n)
            rows.append({**base, "tool": "libCacheSim LRU", "misses": lcs_misses, "wall_s": wall, "rss_mib": rss})
            lcs_rate = n / wall
            for policy in a.policies.split(","):
                out, wall, rss = timed([str(a.reclaimlab), "run", "--trace", str(path), "--format",
                                        "oracleGeneral", "--policy", policy, "--cache-pages", str(cap), "--json"])
                r = json.loads(out)
                row = {**base, "tool": f"reclaimlab {policy}", "misses": r["misses"], "wall_s": wall,
                       "rss_mib": rss, "capacity_got": r["capacity_pages"], "vs_libcachesim": (n / wall) / lcs_rate}
                if policy == "lru":
                    row["check"] = "MATCH" if r["misses"] == lcs_misses else "MISMATCH"
                rows.append(row)
    print("| trace | requests | capacity pages | tool | misses | miss ratio | req/s | peak RSS MiB | vs libCacheSim LRU | check |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print(f"| {r['trace']} | {r['requests']:,} | {r['capacity_pages']:,} | {r['tool']} | {r['misses']:,} | "
              f"{r['misses'] / r['requests']:.4f} | {r['requests'] / r['wall_s'] / 1e6:.2f} M | {r['rss_mib']:.0f} | "
              f"{r.get('vs_libcachesim', 1.0):.2f}x | {r.get('check', '')} |")
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))
    if any(r.get("check") == "MISMATCH" for r in rows):
        sys.exit("textbook LRU and libCacheSim LRU disagree")


if __name__ == "__main__":
    main()
