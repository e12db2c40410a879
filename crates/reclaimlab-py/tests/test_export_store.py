"""Export as Parquet and CSV through pandas, and the results store read from Python."""

import sqlite3

import pandas as pd
import pytest

import reclaimlab
import reclaimlab.store


def test_parquet_and_csv_round_trip(tmp_path):
    df = reclaimlab.compare("zipf", policies="classic,lru", seeds=2, scale=0.125, store=False)
    reclaimlab.export(df, tmp_path / "runs.parquet")
    back = pd.read_parquet(tmp_path / "runs.parquet")
    pd.testing.assert_frame_equal(back, df)
    reclaimlab.export(df, tmp_path / "runs.csv")
    csv = pd.read_csv(tmp_path / "runs.csv")
    assert list(csv.columns) == list(df.columns)
    assert list(csv["hit_ratio"]) == list(df["hit_ratio"])
    ts = reclaimlab.run("zipf", scale=0.125, sample_ms=50).timeseries
    reclaimlab.export(ts, tmp_path / "ts.parquet")
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "ts.parquet"), ts)
    with pytest.raises(ValueError, match="parquet or .csv"):
        reclaimlab.export(df, tmp_path / "runs.xlsx")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs.csv", "runs.parquet",
                                                         "ts.parquet"]


def test_the_store_reads_back_every_run(tmp_path):
    path = tmp_path / "s.sqlite"
    df = reclaimlab.compare("mixed-rw", policies="classic,mglru:7.2", seeds=2, scale=0.125,
                            store=path)
    with reclaimlab.store.open(path) as st:
        runs = st.runs()
        recs = list(st.records())
    assert len(runs) == 4
    assert {"scenario", "scale", "policy", "seed", "options", "model_version",
            "hit_ratio", "vmstat.pswpout"} <= set(runs.columns)
    merged = runs.merge(df, on=["policy", "seed"], suffixes=("", "_run"))
    assert (merged["hit_ratio"] == merged["hit_ratio_run"]).all()
    assert all(r["result"]["scenario"] == "mixed-rw" for r in recs)
    assert len(st_runs := reclaimlab.store.open(path).runs(model_version="other")) == 0, st_runs


def test_a_file_that_is_no_store_is_refused(tmp_path):
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("PRAGMA user_version = 7").connection.commit()
    with pytest.raises(ValueError, match="layout version 7"):
        reclaimlab.store.open(other)
    with pytest.raises(FileNotFoundError):
        reclaimlab.store.open(tmp_path / "missing.sqlite")
