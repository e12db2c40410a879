"""reclaimlab.run / compare / compare_table: the CLI's runs as DataFrames, keyword
arguments checked against the CLI's options, the CLI's errors as ReclaimlabError."""

import json
import math
import subprocess

import pandas as pd
import pytest

import reclaimlab
from reclaimlab import ReclaimlabError


def test_run_is_the_cli_run_as_a_dataframe():
    r = reclaimlab.run("memcg-limit", policy="mglru:7.2", scale=0.25, seed=2)
    assert isinstance(r.df, pd.DataFrame) and len(r.df) == 1
    row = r.df.iloc[0]
    assert (row["scenario"], row["policy"], row["seed"]) == ("memcg-limit", "mglru:7.2", 2)
    # The row holds the JSON's counters under kernel names.
    assert row["vmstat.pgscan_file"] == r.json["vmstat"]["pgscan_file"]
    limited = next(m for m in r.json["memcgs"] if m["path"] == "/limited")
    assert row["memcg./limited.memory.current"] == limited["current_pages"] * 4096
    assert row["memcg./limited.memory.max"] == limited["max_pages"] * 4096
    assert math.isinf(row["memcg./.memory.max"])
    assert row["memcg./limited.memory.stat.file"] == limited["stat"]["file"]
    assert row["memcg./limited.memory.events.max"] == limited["events"]["max"]
    assert row["latency.p99_ns"] == r.json["latency"]["p99_ns"]
    assert row["hit_ratio"] == r.json["hit_ratio"]
    # CPU time and memory PSI are columns too.
    assert row["cpu.sys_ns"] == r.json["cpu"]["sys_ns"] > 0
    assert row["cpu.runqueue_wait_ns"] == r.json["cpu"]["runqueue_wait_ns"]
    assert row["psi.memory.some.total_us"] == r.json["psi"]["memory"]["some"]["total_us"]
    assert r.timeseries is None
    # The same run as the command line's, byte for byte.
    cli = json.loads(reclaimlab.cli("run", "memcg-limit", "--policy", "mglru:7.2",
                                    "--scale", "0.25", "--seed", "2", "--json"))
    assert cli == r.json


def test_run_with_sample_ms_has_a_timeseries_and_the_same_result():
    plain = reclaimlab.run("memcg-limit", policy="mglru:7.2", scale=0.25)
    r = reclaimlab.run("memcg-limit", policy="mglru:7.2", scale=0.25, sample_ms=25)
    ts = r.timeseries
    assert ts.index.name == "time_ms"
    assert list(ts.index[:3]) == [0.0, 25.0, 50.0]
    assert "vmstat.pgfault" in ts.columns
    assert "memcg./limited.memory.current" in ts.columns
    assert "lru_gen./limited.node0.gen0.file_pages" in ts.columns
    assert ts["vmstat.pgfault"].is_monotonic_increasing
    assert ts["psi.memory.some.total_us"].is_monotonic_increasing
    assert (ts["psi.memory.full.total_us"] <= ts["psi.memory.some.total_us"]).all()
    assert "memcg./limited.memory.pressure.some.total_us" in ts.columns
    assert ts["memcg./limited.memory.current"].max() <= plain.df["memcg./limited.memory.max"][0]
    sampled = dict(r.json)
    del sampled["timeseries"]
    assert sampled == plain.json
    pd.testing.assert_frame_equal(r.df, plain.df)


def test_unknown_and_reserved_keywords_are_type_errors():
    with pytest.raises(TypeError, match="unexpected keyword argument 'memory_maxx'"):
        reclaimlab.run("zipf", memory_maxx="/x=1M")
    with pytest.raises(TypeError, match="'json'"):
        reclaimlab.run("zipf", json=True)
    with pytest.raises(TypeError, match="'save'"):
        reclaimlab.compare("zipf", save="x.json")
    with pytest.raises(TypeError, match="flag"):
        reclaimlab.run("zipf", check="yes")


def test_cli_errors_are_reclaimlab_errors_with_the_cli_message():
    with pytest.raises(ReclaimlabError, match="unknown scenario|no scenario|nope"):
        reclaimlab.run("nope")
    # An option that would do nothing, refused as on the command line.
    with pytest.raises(ReclaimlabError, match="--min-ttl-ms has no effect here"):
        reclaimlab.run("zipf", policy="classic", min_ttl_ms=1000)
    with pytest.raises(ReclaimlabError, match="--timeseries has no effect"):
        reclaimlab.run("zipf", timeseries="x.csv")


def test_with_underscore_is_the_with_option():
    a = reclaimlab.run("zipf", policy="mglru:7.1", scale=0.125,
                       with_=["smaller-reclaim-batch"])
    b = reclaimlab.run("zipf", policy="mglru:7.1+smaller-reclaim-batch", scale=0.125)
    assert a.json == b.json


def test_compare_has_one_row_per_policy_and_seed(tmp_path):
    store = tmp_path / "r.sqlite"
    df = reclaimlab.compare("zipf", policies=["classic", "mglru:7.2", "lru"], seeds=3,
                            scale=0.125, store=store)
    assert len(df) == 9
    assert list(df[["policy", "seed"]].itertuples(index=False, name=None)) == [
        (p, s) for p in ("classic:6.12", "mglru:7.2", "lru") for s in (1, 2, 3)]
    assert {"vmstat.pgscan_kswapd", "hit_ratio", "ops_per_sec"} <= set(df.columns)
    # The store keeps them: the same frame again, every run reused.
    again = reclaimlab.compare("zipf", policies=["classic", "mglru:7.2", "lru"], seeds=3,
                               scale=0.125, store=store)
    pd.testing.assert_frame_equal(df, again)
    runs = reclaimlab.store.open(store).runs()
    assert len(runs) == 9
    assert set(runs["model_version"]) == {reclaimlab.model_version()}
    one = reclaimlab.compare("zipf", policies="classic,lru", seeds=1, scale=0.125, store=False)
    assert list(one["policy"]) == ["classic:6.12", "lru"]


def test_compare_table_is_the_cli_csv():
    t = reclaimlab.compare_table("zipf", policies="classic,lru", seeds=3, scale=0.125,
                                 store=False)
    assert list(t.columns) == ["metric", "policy", "mean", "ci95_low", "ci95_high",
                               "vs_first_welch95"]
    hit = t[(t.metric == "hit_ratio")]
    assert list(hit.policy) == ["classic:6.12", "lru"]
    assert (hit.ci95_low <= hit["mean"]).all() and (hit["mean"] <= hit.ci95_high).all()


def test_the_command_line_and_python_agree(tmp_path):
    from conftest import cli_binary
    binary = cli_binary()
    if binary is None:
        pytest.skip("the CLI is not built (cargo build --release -p reclaimlab-cli)")
    out = subprocess.run([binary, "run", "zipf", "--scale", "0.125", "--policy", "mglru:7.2",
                          "--json"], capture_output=True, text=True, check=True).stdout
    r = reclaimlab.run("zipf", scale=0.125, policy="mglru:7.2")
    assert json.loads(out) == r.json
