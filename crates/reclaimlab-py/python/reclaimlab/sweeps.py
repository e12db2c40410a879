"""Sweeps of a grid on this machine's cores or on a Ray cluster.

Both backends run the same runs (``reclaimlab sweep --plan`` lists them) with the same code
and keep them in the same results store, so their results are identical, and a sweep that was
killed, run again, repeats no finished run. With Ray, each run that the store lacks is one Ray
task (``reclaimlab sweep --only I --no-store --json`` on a worker); the driver stores each
result as soon as its task ends (``--ingest``) and finally reads the whole grid back from the
store, exactly as a local sweep would print it.

``python -m reclaimlab.sweeps GRID --ray ADDRESS`` is what ``reclaimlab sweep --ray`` runs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from typing import Any, Dict, List, Optional, Union

import pandas as pd

from ._cli import call, store_args
from .frames import runs_frame


def grid_json(grid: Union[Dict[str, Any], str, os.PathLike]) -> str:
    """A grid (dict, or TOML/JSON file) as JSON text."""
    if isinstance(grid, dict):
        return json.dumps(grid)
    path = os.fspath(grid)
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".json"):
        return json.dumps(json.loads(data))
    try:
        import tomllib  # Python 3.11+
    except ModuleNotFoundError:  # pragma: no cover - older Pythons
        import tomli as tomllib  # type: ignore[no-redef]
    return json.dumps(tomllib.loads(data.decode()))


def records_frame(records: List[Dict[str, Any]]) -> pd.DataFrame:
    """Sweep records (``reclaimlab sweep --json``) as a DataFrame, one row per run."""
    df = runs_frame([r["result"] for r in records], params=[r["params"] for r in records])
    df.insert(0, "index", [r["index"] for r in records])
    return df.set_index("index")


def _run_one(grid: str, index: int) -> str:
    """One run of the grid, on whichever machine runs it: its sweep record (JSON)."""
    return call(["sweep", "--grid-json", grid, "--only", str(index), "--no-store", "--json"])


def run_ray(grid: str, store: Any, address: Optional[str]) -> None:
    """Runs the runs the store lacks as Ray tasks, storing each as its task ends."""
    try:
        import ray
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            "backend='ray' needs Ray: pip install 'reclaimlab[ray]' (or pip install ray)"
        ) from e
    plan = json.loads(call(["sweep", "--grid-json", grid, "--plan", *store_args(store)]))
    todo = [p["index"] for p in plan if not p["stored"]]
    if not todo:
        return
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    remote = ray.remote(num_cpus=1, max_retries=2)(_run_one)
    pending = [remote.remote(grid, i) for i in todo]
    with tempfile.TemporaryDirectory(prefix="reclaimlab-ray-") as tmp:
        n = 0
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            records = []
            for ref in done:
                records.extend(json.loads(ray.get(ref)))
            path = os.path.join(tmp, f"records-{n}.json")
            n += 1
            with open(path, "w") as f:
                json.dump(records, f)
            call(["sweep", "--grid-json", grid, "--ingest", path, *store_args(store)])


def sweep(grid: Union[Dict[str, Any], str, os.PathLike], *, backend: str = "local",
          store: Any = None, jobs: int = 0, address: Optional[str] = None,
          save: Union[str, os.PathLike, None] = None) -> pd.DataFrame:
    """See :func:`reclaimlab.sweep`."""
    if backend not in ("local", "ray"):
        raise ValueError(f"backend {backend!r}: expected 'local' or 'ray'")
    if address is not None and backend != "ray":
        raise ValueError("address is the Ray cluster's: give it with backend='ray'")
    text = grid_json(grid)
    with tempfile.TemporaryDirectory(prefix="reclaimlab-sweep-") as tmp:
        if backend == "ray":
            # Without a store of the user's, a temporary one carries the tasks' results.
            if store is False:
                store = os.path.join(tmp, "results.sqlite")
            run_ray(text, store, address)
        final = ["sweep", "--grid-json", text, "--json", "--jobs", str(jobs), *store_args(store)]
        if save is not None:
            final += ["--save", os.fspath(save)]
        out = call(final)
    return records_frame(json.loads(out))


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m reclaimlab.sweeps",
                                 description="reclaimlab sweep on a Ray cluster")
    ap.add_argument("grid", nargs="?")
    ap.add_argument("--grid-json")
    ap.add_argument("--ray", required=True, metavar="ADDRESS")
    ap.add_argument("--store")
    ap.add_argument("--no-store", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--save")
    a = ap.parse_args(argv)
    if (a.grid is None) == (a.grid_json is None):
        ap.error("give a grid file or --grid-json")
    text = a.grid_json if a.grid_json is not None else grid_json(a.grid)
    store: Any = False if a.no_store else a.store
    with tempfile.TemporaryDirectory(prefix="reclaimlab-sweep-") as tmp:
        if store is False:
            store = os.path.join(tmp, "results.sqlite")
        address = None if a.ray in ("local", "") else a.ray
        run_ray(text, store, address)
        final = ["sweep", "--grid-json", text, *store_args(store)]
        if a.json:
            final.append("--json")
        if a.save:
            final += ["--save", a.save]
        sys.stdout.write(call(final))
    return 0


if __name__ == "__main__":
    sys.exit(main())
