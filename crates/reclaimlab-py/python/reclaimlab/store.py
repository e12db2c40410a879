"""The results store (an SQLite file that ``compare``, ``sweep`` and ``mrc`` keep their runs
in) read from Python.

>>> import reclaimlab.store
>>> reclaimlab.store.open("results.sqlite").runs()   # one row per stored run
"""

from __future__ import annotations

import json
import os
import sqlite3
from typing import Any, Dict, Iterator, List, Optional, Union

import pandas as pd

from .frames import flatten_result

_KEY = ["scenario", "scale", "policy", "policy_config", "seed", "options", "model_version",
        "stored_unix"]


def default_path() -> str:
    """The CLI's default store: ``$XDG_CACHE_HOME/reclaimlab/results.sqlite`` (or
    ``~/.cache/reclaimlab/results.sqlite``)."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "reclaimlab", "results.sqlite")


class Store:
    """A results store opened read-only (the CLI may be writing it at the same time)."""

    def __init__(self, path: Union[str, os.PathLike]):
        self.path = os.fspath(path)
        if not os.path.exists(self.path):
            raise FileNotFoundError(f"results store {self.path}: no such file")
        self._conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
        version = self._conn.execute("PRAGMA user_version").fetchone()[0]
        if version != 1:
            raise ValueError(f"results store {self.path}: layout version {version}, expected 1 "
                             "(not a reclaimlab results store, or a newer one)")

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def records(self, model_version: Optional[str] = None) -> Iterator[Dict[str, Any]]:
        """Every stored run: its key columns and ``result`` (the run's JSON, as a dict)."""
        sql = f"SELECT {', '.join(_KEY)}, result FROM runs"
        args: List[Any] = []
        if model_version is not None:
            sql += " WHERE model_version = ?"
            args.append(model_version)
        sql += " ORDER BY scenario, scale, policy, seed, options, model_version"
        for row in self._conn.execute(sql, args):
            rec = dict(zip(_KEY, row[:-1]))
            rec["options"] = json.loads(rec["options"]) if rec["options"] else {}
            rec["result"] = json.loads(row[-1])
            yield rec

    def runs(self, model_version: Optional[str] = None) -> pd.DataFrame:
        """One row per stored run: the key (scenario, scale, policy, seed, model_version,
        stored_unix, and the options as JSON text) and every counter and metric of its
        result. ``model_version`` keeps only that model's runs (e.g.
        ``reclaimlab.model_version()``: the ones this build would reuse)."""
        rows = []
        for rec in self.records(model_version):
            row = {k: rec[k] for k in _KEY if k != "options"}
            row["options"] = json.dumps(rec["options"], sort_keys=True)
            flat = flatten_result(rec["result"])
            for k, v in flat.items():
                if k not in ("scenario", "policy", "seed"):
                    row[k] = v
            rows.append(row)
        return pd.DataFrame(rows)


def open(path: Union[str, os.PathLike, None] = None) -> Store:  # noqa: A001 - the API's name
    """Opens a results store (default: the CLI's default store) for reading."""
    return Store(path if path is not None else default_path())

