"""Results as pandas DataFrames: one row per run, every counter and metric a column."""

from __future__ import annotations

import math
from typing import Any, Dict, Iterable, List, Optional

import pandas as pd

PAGE_SIZE = 4096

#: Columns that say which run a row is, first in every frame.
ID_COLUMNS = ["scenario", "policy", "seed"]


def _flatten_into(row: Dict[str, Any], prefix: str, value: Any) -> None:
    """Numbers (and booleans) of nested objects as ``prefix.key`` columns."""
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten_into(row, f"{prefix}.{k}" if prefix else str(k), v)
    elif isinstance(value, bool):
        row[prefix] = value
    elif isinstance(value, (int, float)):
        row[prefix] = value
    elif isinstance(value, list) and value and all(isinstance(x, (int, float)) for x in value):
        for i, x in enumerate(value):
            row[f"{prefix}.{i}"] = x


def flatten_result(result: Dict[str, Any]) -> Dict[str, Any]:
    """One run's JSON result (``reclaimlab run --json``) as a flat row.

    Columns: scenario, policy, seed; the headline figures (accesses, hit_ratio, misses,
    ops_per_sec, sim_time_ns, ...); ``latency.*``; ``vmstat.*`` (/proc/vmstat names);
    ``meminfo.*``; per memcg ``memcg.PATH.memory.current`` and ``memory.max`` (bytes),
    ``memcg.PATH.memory.stat.*`` and ``memcg.PATH.memory.events.*``; ``fairness_*``,
    ``requests.*``; and any other object the result holds (``cpu.*``, ``psi.*``) flattened the
    same way. Text (lru_gen files), per-thread rows and the time series are left out.
    """
    row: Dict[str, Any] = {k: result.get(k) for k in ID_COLUMNS}
    skip = {"scenario", "policy", "seed", "memcgs", "threads", "timeseries", "lru_gen",
            "lru_gen_full", "lru_gen_samples", "lru_gen_commands"}
    for key, value in result.items():
        if key in skip:
            continue
        _flatten_into(row, key, value)
    for mc in result.get("memcgs") or []:
        base = f"memcg.{mc.get('path')}"
        row[f"{base}.memory.current"] = mc.get("current_pages", 0) * PAGE_SIZE
        mx = mc.get("max_pages")
        row[f"{base}.memory.max"] = math.inf if mx is None else mx * PAGE_SIZE
        row[f"{base}.memory.swap.current"] = mc.get("swap_pages", 0) * PAGE_SIZE
        for k, v in (mc.get("stat") or {}).items():
            row[f"{base}.memory.stat.{k}"] = v
        for k, v in (mc.get("events") or {}).items():
            row[f"{base}.memory.events.{k}"] = v
        for k, v in mc.items():
            if k not in ("path", "current_pages", "max_pages", "swap_pages", "stat", "events"):
                _flatten_into(row, f"{base}.{k}", v)
    return row


def runs_frame(results: Iterable[Dict[str, Any]],
               params: Optional[List[Dict[str, Any]]] = None) -> pd.DataFrame:
    """A DataFrame of runs: one row each, parameters (if any) then the flattened result."""
    rows = []
    for i, r in enumerate(results):
        row = {}
        if params is not None:
            row.update({k: v for k, v in params[i].items()})
        flat = flatten_result(r)
        for k, v in flat.items():
            if k not in row or row[k] is None:
                row[k] = v
        rows.append(row)
    df = pd.DataFrame(rows)
    first = [c for c in ID_COLUMNS if c in df.columns]
    return df[first + [c for c in df.columns if c not in first]]


def timeseries_frame(result: Dict[str, Any]) -> Optional[pd.DataFrame]:
    """A run's time series (``sample_ms``) as a DataFrame indexed by simulated ``time_ms``,
    one column per counter (``vmstat.*``, ``memcg.PATH.memory.current``,
    ``memcg.PATH.memory.stat.*``, ``lru_gen.PATH.nodeN.genK.{anon,file}_pages``, ...), or
    None when the run was not sampled."""
    ts = result.get("timeseries")
    if not ts:
        return None
    cols = ts["columns"]
    data = []
    times = []
    for s in ts["samples"]:
        vals = list(s["values"]) + [None] * (len(cols) - len(s["values"]))
        data.append(vals)
        times.append(s["time_ns"] / 1e6)
    df = pd.DataFrame(data, columns=cols, index=pd.Index(times, name="time_ms"))
    return df.astype("float64") if df.isna().any().any() else df.astype("int64")
