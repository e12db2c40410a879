"""reclaimlab.sweep: the grid on all cores or as Ray tasks, identical results, and resumed
from the results store after an interruption without repeating a run."""

import json
import os

import pandas as pd
import pytest

import reclaimlab
import reclaimlab.store

GRID = {
    "scenarios": ["memcg-limit"],
    "policies": ["classic", "mglru:7.2"],
    "seeds": 2,
    "scale": 0.25,
    "memory_max": ["/limited=6M", "/limited=8M"],
    "min_ttl_ms": [0, 1000],
}
# classic: 2 memory.max x 2 seeds; mglru: 2 x 2 ttl x 2 seeds.
RUNS = 4 + 8


def test_a_local_sweep_is_a_dataframe_of_the_grid(tmp_path):
    df = reclaimlab.sweep(GRID, store=tmp_path / "s.sqlite")
    assert len(df) == RUNS
    assert list(df.index) == list(range(RUNS))
    assert {"scenario", "policy", "seed", "memory_max", "min_ttl_ms", "hit_ratio"} <= set(df.columns)
    classic = df[df.policy == "classic:6.12"]
    assert classic["min_ttl_ms"].isna().all()
    # A smaller memory.max means more misses, seed by seed.
    small = df[(df.memory_max == "/limited=6M")].set_index(["policy", "min_ttl_ms", "seed"],
                                                           drop=False)
    large = df[(df.memory_max == "/limited=8M")].set_index(["policy", "min_ttl_ms", "seed"],
                                                           drop=False)
    assert (small["misses"].values > large["misses"].values).all()
    # The limit shows in the memcg's column.
    assert set(small["memcg./limited.memory.max"]) == {6 << 20}


def test_an_interrupted_sweep_resumes_without_repeating_runs(tmp_path):
    store = tmp_path / "s.sqlite"
    # Half of the grid ran before the "interruption": exactly its runs are stored.
    half = reclaimlab.cli("sweep", "--grid-json", json.dumps(GRID), "--only", "0,1,2,3,4,5",
                          "--store", str(store))
    assert half
    assert len(reclaimlab.store.open(store).runs()) == 6
    stamps = reclaimlab.store.open(store).runs().set_index(["policy", "seed", "options"])[
        "stored_unix"]
    df = reclaimlab.sweep(GRID, store=store)
    runs = reclaimlab.store.open(store).runs()
    assert len(runs) == RUNS
    # The six stored runs were not run (nor stored) again.
    again = runs.set_index(["policy", "seed", "options"])["stored_unix"]
    assert (again.loc[stamps.index] == stamps).all()
    plain = reclaimlab.sweep(GRID, store=False)
    pd.testing.assert_frame_equal(df, plain)


def test_ray_results_equal_the_local_backend_exactly(tmp_path):
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'reclaimlab[ray]')")
    local = reclaimlab.sweep(GRID, store=False)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        on_ray = reclaimlab.sweep(GRID, backend="ray", store=tmp_path / "ray.sqlite")
        # Every run was a Ray task: the store was empty, and now holds the grid.
        assert len(reclaimlab.store.open(tmp_path / "ray.sqlite").runs()) == RUNS
        no_store = reclaimlab.sweep(GRID, backend="ray", store=False)
    finally:
        ray.shutdown()
    pd.testing.assert_frame_equal(on_ray, local)
    pd.testing.assert_frame_equal(no_store, local)


def test_bad_grids_are_errors():
    with pytest.raises(reclaimlab.ReclaimlabError, match="unknown key 'swapiness'"):
        reclaimlab.sweep({"scenarios": "zipf", "policies": "classic", "swapiness": 1},
                         store=False)
    with pytest.raises(ValueError, match="backend"):
        reclaimlab.sweep(GRID, backend="spark")


def test_the_ray_sweep_command_prints_what_the_local_sweep_prints(tmp_path):
    """`reclaimlab sweep --ray ADDRESS` runs `python -m reclaimlab.sweeps`: same output."""
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'reclaimlab[ray]')")
    import subprocess
    import sys
    grid = json.dumps(GRID)
    local = reclaimlab.cli("sweep", "--grid-json", grid, "--no-store")
    env = dict(os.environ, RAY_ADDRESS="")
    out = subprocess.run(
        [sys.executable, "-m", "reclaimlab.sweeps", "--grid-json", grid, "--ray", "local",
         "--no-store"], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout == local


def test_the_cli_sweep_with_ray_runs_through_the_package(tmp_path):
    """`reclaimlab sweep GRID --ray local` (the Rust binary) prints the local sweep's table."""
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'reclaimlab[ray]')")
    import subprocess
    import sys
    from conftest import cli_binary
    binary = cli_binary()
    if binary is None:
        pytest.skip("the CLI is not built (cargo build --release -p reclaimlab-cli)")
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps(GRID))
    env = dict(os.environ, RECLAIMLAB_PYTHON=sys.executable, RAY_ADDRESS="")
    out = subprocess.run([binary, "sweep", str(grid), "--ray", "local", "--store",
                          str(tmp_path / "s.sqlite")], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout == reclaimlab.cli("sweep", str(grid), "--no-store")
    assert len(reclaimlab.store.open(tmp_path / "s.sqlite").runs()) == RUNS
