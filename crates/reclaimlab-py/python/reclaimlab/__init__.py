"""reclaimlab from Python: runs, comparisons and sweeps of the Linux page-reclaim model as
pandas DataFrames, plots (``reclaimlab.plot``) and HTML reports.

Every function runs the reclaimlab command line's own code in this process (the native
module ``reclaimlab._native``), so keyword arguments are the CLI's options (``memory_max=``
is ``--memory-max``, ``sample_ms=`` is ``--sample-ms``), checked and refused exactly as the CLI
checks and refuses them, with the CLI's one-line error as a :class:`ReclaimlabError`.

>>> import reclaimlab
>>> r = reclaimlab.run("memcg-limit", policy="mglru:7.2", sample_ms=100)
>>> r.df[["policy", "hit_ratio", "vmstat.pgscan_direct"]]
>>> r.timeseries["memcg./limited.memory.current"].plot()
>>> reclaimlab.compare("zipf", policies="classic,mglru:7.2", seeds=3, scale=0.125)
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Union

import pandas as pd

from . import _native
from ._cli import ReclaimlabError, argv_of, call, call_json, options, store_args
from .frames import flatten_result, runs_frame, timeseries_frame

__all__ = [
    "ReclaimlabError",
    "RunResult",
    "run",
    "compare",
    "compare_table",
    "sweep",
    "report",
    "export",
    "options",
    "cli",
    "model_version",
    "flatten_result",
    "runs_frame",
    "timeseries_frame",
]


def __getattr__(name: str) -> Any:
    """``reclaimlab.store``, ``reclaimlab.plot`` (matplotlib) and ``reclaimlab.sweeps``,
    imported on first use."""
    if name in ("store", "plot", "sweeps", "frames"):
        import importlib
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'reclaimlab' has no attribute {name!r}")


def model_version() -> str:
    """The model version runs are keyed by (crate version and a hash of the model's sources)."""
    return _native.model_version()


def cli(*args: str) -> str:
    """Runs ``reclaimlab ARGS...`` in this process and returns what it printed.

    >>> print(reclaimlab.cli("scenarios"))
    """
    return call(list(args))


@dataclass
class RunResult:
    """One run: ``json`` is the CLI's whole result (``reclaimlab run --json``), ``df`` a
    one-row DataFrame of every counter and metric, ``timeseries`` the counters over simulated
    time (a DataFrame indexed by ``time_ms``) when run with ``sample_ms``, else None."""

    json: Dict[str, Any]
    df: pd.DataFrame = field(repr=False)
    timeseries: Optional[pd.DataFrame] = field(repr=False, default=None)

    def __getitem__(self, key: str) -> Any:
        return self.json[key]


def run(scenario: Optional[str] = None, *, policy: str = "classic", seed: int = 1,
        **options: Any) -> RunResult:
    """Runs one scenario (or ``trace=PATH``) under one policy, as ``reclaimlab run``.

    Keyword arguments are ``reclaimlab run``'s options, underscores for dashes: ``scale``,
    ``memory_mib``, ``memory_max`` (``"/app=64M"`` or a list), ``swappiness``,
    ``min_ttl_ms``, ``with_`` and ``without`` (MGLRU switches; or write them into the policy,
    ``"mglru:7.1+smaller-reclaim-batch"``), ``max_time``, ``sample_ms`` (the time series),
    ``timeseries`` (also write it to a file), ``cache_pages``, ``cost`` (a list of
    ``"NAME=NS"``), ... An option the CLI does not have is a TypeError; an invalid value or
    an option that would do nothing is a :class:`ReclaimlabError` with the CLI's message.
    """
    positional = [scenario] if scenario is not None else []
    kw = dict(options, policy=policy, seed=seed)
    # --lru-gen and --lru-gen-full print text after the JSON: the result has both files.
    argv = argv_of("run", "run", positional, kw,
                   reserved=("json", "lru-gen", "lru-gen-full")) + ["--json"]
    result = call_json(argv)
    return RunResult(json=result, df=runs_frame([result]), timeseries=timeseries_frame(result))


def _compare_argv(function: str, scenario: Optional[str], policies: Union[str, Sequence[str]],
                  seeds: int, store: Any, options: Dict[str, Any], reserved) -> List[str]:
    if not isinstance(policies, str):
        policies = ",".join(policies)
    positional = [scenario] if scenario is not None else []
    kw = dict(options, policies=policies, seeds=seeds)
    return argv_of("compare", function, positional, kw,
                   reserved=tuple(reserved) + ("store", "no-store")) + store_args(store)


def compare(scenario: Optional[str] = None, *, policies: Union[str, Sequence[str]] = "classic,lru",
            seeds: int = 6, store: Any = None, **options: Any) -> pd.DataFrame:
    """Runs every policy x seed, as ``reclaimlab compare``: a DataFrame with one row per
    (policy, seed) run and every counter and metric as columns.

    ``store``: None keeps and reuses runs in the CLI's default results store, a path uses
    that store, False runs everything and stores nothing. Other keyword arguments are
    ``reclaimlab compare``'s options (``scale``, ``seed`` (the first seed), ``jobs``, ...).
    """
    argv = _compare_argv("compare", scenario, policies, seeds, store, options,
                         ("json", "csv", "save")) + ["--json"]
    out = call_json(argv)
    runs = [r for group in out for r in (group if isinstance(group, list) else [group])]
    return runs_frame(runs)


def compare_table(scenario: Optional[str] = None, *,
                  policies: Union[str, Sequence[str]] = "classic,lru", seeds: int = 6,
                  store: Any = None, **options: Any) -> pd.DataFrame:
    """``reclaimlab compare --csv``: per metric and policy the mean, its 95% CI and the 95%
    CI of the relative change against the first policy (``vs_first_welch95``)."""
    if seeds < 2:
        raise ValueError("compare_table needs seeds >= 2 (intervals need repetitions)")
    import io
    argv = _compare_argv("compare_table", scenario, policies, seeds, store, options,
                         ("json", "csv", "save")) + ["--csv"]
    return pd.read_csv(io.StringIO(call(argv)))


def sweep(grid: Union[Dict[str, Any], str, os.PathLike], *, backend: str = "local",
          store: Any = None, jobs: int = 0, address: Optional[str] = None,
          save: Union[str, os.PathLike, None] = None) -> pd.DataFrame:
    """Runs a grid (a dict, or a TOML/JSON file) as ``reclaimlab sweep``: a DataFrame with one
    row per run, its parameters (scenario, policy, knobs, seed) and every counter and metric.

    ``backend="local"`` uses all cores (``jobs``); ``backend="ray"`` runs each run as a Ray task
    on the cluster at ``address`` (default: the running one, or a new local one). Both keep
    finished runs in the results store (``store`` as for :func:`compare`), so a sweep killed
    and run again repeats no finished run, and both give identical results. ``save``: also
    write the sweep's records (parameters and whole results, JSON) to this file, for
    :func:`report`.

    The grid's keys: ``scenarios``, ``policies`` (behaviour switches as policy strings,
    ``"mglru:7.2-dont-abort-after-aging"``), ``seeds`` (a count or a list), and knobs, each a
    value or a list: ``scale``, ``memory_max`` (``"/memcg=64M"``), ``swappiness``,
    ``min_ttl_ms``, ``enabled``, ``cache_pages``, ``max_time``, ``sample_ms``, ``cpus``.
    """
    from . import sweeps as _sweep
    return _sweep.sweep(grid, backend=backend, store=store, jobs=jobs, address=address,
                        save=save)


def report(inputs: Sequence[Union[str, os.PathLike]], output: Union[str, os.PathLike], *,
           title: Optional[str] = None, plots: bool = True) -> None:
    """``reclaimlab report INPUTS... -o OUTPUT``: one self-contained HTML file with the
    compare tables (95% intervals), the plots, each run's parameters and the model version."""
    argv = ["report", *[os.fspath(p) for p in inputs], "-o", os.fspath(output)]
    if title is not None:
        argv += ["--title", title]
    if not plots:
        argv.append("--no-plots")
    call(argv)


def export(df: pd.DataFrame, path: Union[str, os.PathLike]) -> None:
    """Writes a DataFrame as Parquet (``.parquet``, through pyarrow) or CSV (``.csv``),
    atomically: a temporary file in the same directory, renamed over ``path``."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".reclaimlab-", suffix=".tmp", dir=directory)
    os.close(fd)
    try:
        if path.endswith(".parquet"):
            df.to_parquet(tmp, engine="pyarrow")
        elif path.endswith(".csv"):
            df.to_csv(tmp, index=isinstance(df.index, pd.MultiIndex) or df.index.name is not None)
        else:
            raise ValueError(f"export: {path}: expected a .parquet or .csv name")
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
