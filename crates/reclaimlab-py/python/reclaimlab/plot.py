"""Plots of reclaimlab results on matplotlib.

Each function draws on an Axes (a new figure when none is given) and returns it:

- :func:`timeseries`: counters over simulated time (``run(..., sample_ms=N).timeseries``, or a
  ``--timeseries`` CSV/JSONL file); event counters can be shown as rates per second.
- :func:`mrc`: miss-ratio curves (``reclaimlab mrc`` CSV or JSON).
- :func:`compare_bars`: each policy's mean of a metric with its 95% interval (the compare
  table, :func:`reclaimlab.compare_table`, or result files).
- :func:`latency_cdf`: the CDF of access latencies from the runs' power-of-two buckets.
- :func:`generations`: MGLRU's generation sizes over time, stacked, youngest on top.

``python -m reclaimlab.plot KIND INPUTS... -o FILE`` (what ``reclaimlab plot`` runs) draws one
of them into a file.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

# matplotlib picks a backend that needs no display where there is none (Agg), and a
# notebook's own in a notebook.
import matplotlib.pyplot as plt
import pandas as pd

from ._cli import ReclaimlabError
from .frames import timeseries_frame

PathLike = Union[str, os.PathLike]

#: Counters drawn by default: reclaim activity and refaults, as `vmstat 1` users watch them.
DEFAULT_COUNTERS = [
    "vmstat.pgscan_kswapd",
    "vmstat.pgscan_direct",
    "vmstat.pgsteal_kswapd",
    "vmstat.pgsteal_direct",
    "vmstat.workingset_refault_file",
    "vmstat.workingset_refault_anon",
    "vmstat.pswpout",
]


def _axes(ax):
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    return ax


def read_timeseries(path: PathLike) -> pd.DataFrame:
    """A time series from a ``--timeseries`` file (CSV or JSON lines) or a run's JSON."""
    path = os.fspath(path)
    if path.endswith(".csv"):
        return pd.read_csv(path, index_col="time_ms")
    with open(path) as f:
        text = f.read()
    if path.endswith((".jsonl", ".ndjson")):
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        return pd.DataFrame(rows).set_index("time_ms")
    data = json.loads(text)
    runs = data if isinstance(data, list) else [data]
    df = timeseries_frame(runs[0].get("result", runs[0]))
    if df is None:
        raise ValueError(f"{path}: the run has no time series (run it with --sample-ms)")
    return df


def timeseries(data: Union[pd.DataFrame, Dict[str, Any], PathLike],
               columns: Optional[Sequence[str]] = None, *, rate: bool = True,
               ax=None, title: Optional[str] = None):
    """Counters over simulated time. ``rate``: event counters (those that never decrease)
    as events per simulated second between samples, gauges as they are."""
    if isinstance(data, dict):
        data = timeseries_frame(data.get("result", data))
    elif not isinstance(data, pd.DataFrame):
        data = read_timeseries(data)
    if columns is None or len(columns) == 0:
        # Global reclaim's counters, and each limited memcg's own reclaim (memory.stat).
        memcg_reclaim = [c for c in data.columns if c.startswith("memcg.")
                         and not c.startswith("memcg./.")
                         and c.endswith((".memory.stat.pgscan", ".memory.stat.pgsteal"))]
        columns = [c for c in DEFAULT_COUNTERS + memcg_reclaim
                   if c in data.columns and data[c].max() > 0]
        if not columns:
            columns = [c for c in data.columns if c.startswith("vmstat.")][:6]
    missing = [c for c in columns if c not in data.columns]
    if missing:
        raise KeyError(f"no such time-series column(s): {', '.join(missing)}")
    ax = _axes(ax)
    t = data.index.to_numpy(dtype=float)
    for c in columns:
        y = data[c].astype(float)
        if rate and len(y) > 1 and (y.diff().dropna() >= 0).all() and not c.endswith(
                ("memory.current", "_pages", "max_seq")) and ".nr_" not in c:
            dy = y.diff() / (data.index.to_series().diff() / 1e3)
            ax.plot(t[1:], dy.to_numpy()[1:], label=f"{c} /s")
        else:
            ax.plot(t, y.to_numpy(), label=c)
    ax.set_xlabel("simulated time (ms)")
    ax.set_ylabel("events per second" if rate else "value")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    if title:
        ax.set_title(title)
    return ax


def read_mrc(path: PathLike) -> pd.DataFrame:
    """A miss-ratio curve from ``reclaimlab mrc`` (CSV, or JSON with ``--json``)."""
    path = os.fspath(path)
    with open(path) as f:
        text = f.read()
    if text.lstrip().startswith("{"):
        return pd.DataFrame(json.loads(text)["curve"])
    return pd.read_csv(io.StringIO(text))


def mrc(data: Union[pd.DataFrame, Dict[str, Any], PathLike], *, ax=None,
        title: Optional[str] = None):
    """Miss ratio against cache size in pages, one line per policy."""
    if isinstance(data, dict):
        data = pd.DataFrame(data["curve"])
    elif not isinstance(data, pd.DataFrame):
        data = read_mrc(data)
    ax = _axes(ax)
    for policy, g in data.groupby("policy", sort=False):
        g = g.sort_values("cache_pages")
        ax.plot(g["cache_pages"], g["miss_ratio"], marker="o", markersize=3, label=str(policy))
    ax.set_xlabel("cache size (pages)")
    ax.set_ylabel("miss ratio")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    ax.set_title(title or "miss-ratio curve")
    return ax


def compare_table_of(paths: Sequence[PathLike]) -> pd.DataFrame:
    """The compare tables of result files (``reclaimlab report --table-json``): one row per
    (group, metric, policy) with mean, ci95_low, ci95_high and vs_first."""
    from ._cli import call
    tables = json.loads(call(["report", *[os.fspath(p) for p in paths], "--table-json"]))
    rows = []
    for t in tables:
        for r in t["rows"]:
            rows.append(dict(r, group=t["group"]))
    return pd.DataFrame(rows)


def compare_bars(table: Union[pd.DataFrame, Sequence[PathLike]], metric: str = "hit_ratio", *,
                 group: Optional[str] = None, ax=None, title: Optional[str] = None):
    """Each policy's mean of ``metric`` with its 95% interval, from a compare table
    (:func:`reclaimlab.compare_table`, or result files, whose tables are computed as
    ``compare`` computes them)."""
    if not isinstance(table, pd.DataFrame):
        table = compare_table_of(table)
    rows = table[table["metric"] == metric]
    if group is not None and "group" in rows.columns:
        rows = rows[rows["group"] == group]
    if rows.empty:
        raise KeyError(f"no metric {metric!r} in the table (zero in every run, or unknown)")
    ax = _axes(ax)
    labels = [f"{p}\n{g}" if "group" in rows.columns and rows["group"].nunique() > 1 else str(p)
              for p, g in zip(rows["policy"], rows.get("group", rows["policy"]))]
    mean = rows["mean"].astype(float).to_numpy()
    low = rows["ci95_low"].astype(float).to_numpy()
    high = rows["ci95_high"].astype(float).to_numpy()
    x = range(len(rows))
    ax.bar(x, mean, color="#4878a8", yerr=[mean - low, high - mean], capsize=4,
           error_kw={"elinewidth": 1})
    ax.set_xticks(list(x))
    ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=7)
    ax.set_ylabel(metric)
    ax.set_title(title or f"{metric}: mean and 95% CI")
    ax.grid(axis="y", alpha=0.3)
    return ax


def _runs_of(data) -> List[Dict[str, Any]]:
    if isinstance(data, dict):
        return [data.get("result", data)]
    out: List[Dict[str, Any]] = []
    for item in data:
        if isinstance(item, (str, os.PathLike)):
            with open(os.fspath(item)) as f:
                out.extend(_runs_of(_flat(json.load(f))))
        elif isinstance(item, list):
            out.extend(_runs_of(item))
        else:
            out.append(item.get("result", item))
    return out


def _flat(v):
    if isinstance(v, list):
        return [x for item in v for x in (_flat(item) if isinstance(item, list) else [item])]
    return [v]


def latency_cdf(runs, *, ax=None, title: Optional[str] = None):
    """The CDF of access latencies per policy (all its runs together), from each run's
    ``latency_buckets_us`` ([0,1), [1,2), [2,4), ... µs)."""
    runs = _runs_of(runs)
    ax = _axes(ax)
    by_policy: Dict[str, List[int]] = {}
    for r in runs:
        b = r.get("latency_buckets_us") or []
        acc = by_policy.setdefault(r["policy"], [])
        acc.extend([0] * (len(b) - len(acc)))
        for i, n in enumerate(b):
            acc[i] += n
    for policy, counts in by_policy.items():
        total = sum(counts)
        if total == 0:
            continue
        edges = [2.0 ** i for i in range(len(counts))]  # upper edges: 1, 2, 4, ... µs
        cum = 0
        ys = []
        for n in counts:
            cum += n
            ys.append(cum / total)
        ax.step(edges, ys, where="post", label=policy)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("access latency (µs, upper bucket edge)")
    ax.set_ylabel("fraction of accesses")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    ax.set_title(title or "access latency CDF")
    return ax


def generations(data: Union[pd.DataFrame, Dict[str, Any], PathLike], memcg: Optional[str] = None,
                node: int = 0, *, ax=None, title: Optional[str] = None):
    """MGLRU's generation sizes over time for one memcg and node (default: the memcg with
    the most pages), stacked: gen0 (youngest) to gen3, anon and file together, in pages."""
    if isinstance(data, dict):
        data = timeseries_frame(data.get("result", data))
    elif not isinstance(data, pd.DataFrame):
        data = read_timeseries(data)
    cols = [c for c in data.columns if c.startswith("lru_gen.") and ".gen" in c]
    if not cols:
        raise ValueError("no MGLRU generation sizes in this time series (an mglru policy "
                         "run with sample_ms/--sample-ms has them)")
    memcgs = sorted({c[len("lru_gen."):c.rindex(".node")] for c in cols})
    if memcg is None:
        memcg = max(memcgs, key=lambda m: sum(
            data[c].fillna(0).sum() for c in cols if c.startswith(f"lru_gen.{m}.node")))
    base = f"lru_gen.{memcg}.node{node}"
    gens = sorted({c[len(base) + 1:].split(".")[0] for c in cols if c.startswith(base + ".")})
    if not gens:
        raise KeyError(f"no generations of memcg {memcg} node {node}; memcgs: {memcgs}")
    ax = _axes(ax)
    t = data.index.to_numpy(dtype=float)
    ys = []
    for g in gens:
        y = sum(data.get(f"{base}.{g}.{kind}", 0).fillna(0) for kind in ("anon_pages", "file_pages"))
        ys.append(pd.Series(y).to_numpy(dtype=float))
    names = {gens[0]: f"{gens[0]} (youngest)", gens[-1]: f"{gens[-1]} (oldest)"}
    ax.stackplot(t, *reversed(ys), labels=[names.get(g, g) for g in reversed(gens)])
    ax.set_xlabel("simulated time (ms)")
    ax.set_ylabel("pages")
    ax.legend(fontsize=8, loc="upper left")
    ax.set_title(title or f"MGLRU generations of {memcg}, node {node}")
    return ax


def save(ax, path: PathLike) -> None:
    """Saves an Axes' figure (.png, .svg, .pdf) atomically and closes it."""
    path = os.fspath(path)
    fig = ax.figure
    fig.tight_layout()
    tmp = os.path.join(os.path.dirname(os.path.abspath(path)),
                       f".reclaimlab-{os.getpid()}-{os.path.basename(path)}")
    try:
        fmt = os.path.splitext(path)[1].lstrip(".") or "png"
        fig.savefig(tmp, dpi=110, format=fmt)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
        plt.close(fig)


def report_figures(data_path: PathLike, outdir: PathLike) -> List[Dict[str, str]]:
    """The figures of ``reclaimlab report`` from its data file (runs, compare tables,
    curves): PNGs in ``outdir`` and ``manifest.json`` listing them."""
    with open(os.fspath(data_path)) as f:
        data = json.load(f)
    os.makedirs(outdir, exist_ok=True)
    made: List[Dict[str, str]] = []

    def emit(ax, title: str) -> None:
        name = f"fig{len(made):02d}.png"
        save(ax, os.path.join(outdir, name))
        made.append({"file": name, "title": title})

    rows = [dict(r, group=t["group"]) for t in data.get("tables", []) for r in t["rows"]]
    table = pd.DataFrame(rows)
    if not table.empty:
        for metric in ("hit_ratio", "ops_per_sec", "lat_p99_us", "direct_reclaim_pages"):
            if (table["metric"] == metric).any():
                emit(compare_bars(table, metric), f"{metric}: each policy's mean with its 95% CI")
    runs = [r["result"] for r in data.get("runs", [])]
    if any(r.get("latency_buckets_us") for r in runs):
        emit(latency_cdf(runs), "access latency CDF per policy")
    sampled = [r for r in runs if r.get("timeseries")]
    for r in sampled[:4]:
        label = f"{r['scenario']} {r['policy']} seed {r['seed']}"
        emit(timeseries(r, title=label), f"counters over time: {label}")
        ts = timeseries_frame(r)
        if ts is not None and any(c.startswith("lru_gen.") for c in ts.columns):
            emit(generations(ts), f"MGLRU generation sizes over time: {label}")
    for c in data.get("curves", []):
        emit(mrc(c), f"miss-ratio curve: {c.get('source', '')}")
    with open(os.path.join(outdir, "manifest.json"), "w") as f:
        json.dump(made, f)
    return made


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="reclaimlab plot", description=__doc__.split("\n\n")[0])
    ap.add_argument("kind", choices=["timeseries", "mrc", "compare", "latency", "generations",
                                     "report-figures"])
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--columns", default="")
    ap.add_argument("--metrics", default="")
    a = ap.parse_args(argv)
    try:
        if a.kind == "report-figures":
            report_figures(a.inputs[0], a.output)
            return 0
        if a.kind == "timeseries":
            cols = [c for c in a.columns.split(",") if c] or None
            ax = timeseries(a.inputs[0], cols)
        elif a.kind == "mrc":
            frames = [read_mrc(p) for p in a.inputs]
            ax = mrc(pd.concat(frames, ignore_index=True))
        elif a.kind == "compare":
            metrics = [m for m in a.metrics.split(",") if m] or ["hit_ratio", "ops_per_sec"]
            table = compare_table_of(a.inputs)
            fig, axes = plt.subplots(1, len(metrics), figsize=(5 * len(metrics), 4),
                                     squeeze=False)
            for m, ax in zip(metrics, axes[0]):
                compare_bars(table, m, ax=ax)
        elif a.kind == "latency":
            ax = latency_cdf(a.inputs)
        else:
            ax = generations(a.inputs[0])
        save(ax, a.output)
    except (KeyError, ValueError, OSError, ReclaimlabError) as e:
        msg = e.args[0] if isinstance(e, KeyError) and e.args else e
        print(f"reclaimlab: error: plot {a.kind}: {msg}", file=sys.stderr)
        return 2
    print(f"wrote {a.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
