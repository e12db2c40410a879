"""docs/python.md: every ```python block runs, in order, in a scratch directory, and output the
document shows after "prints" is what its block prints."""

import contextlib
import io
import os
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[3] / "docs" / "python.md"


def blocks():
    """(language, code, the text before the block) of each fenced block."""
    text = DOC.read_text()
    out = []
    for m in re.finditer(r"```(\w*)\n(.*?)```", text, re.S):
        before = text[:m.start()].rstrip().splitlines()[-1] if text[:m.start()].strip() else ""
        out.append((m.group(1), m.group(2), before))
    return out


def test_the_worked_example_runs_and_prints_what_the_document_shows(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ns = {}
    bs = blocks()
    ran = 0
    for i, (lang, code, _) in enumerate(bs):
        if lang != "python":
            continue
        if "backend=\"ray\"" in code:
            try:
                import ray
            except ImportError:
                continue
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, f"{DOC.name} block {i}", "exec"), ns)
        if "backend=\"ray\"" in code:
            import ray
            ray.shutdown()
            import pandas as pd
            pd.testing.assert_frame_equal(ns["df_ray"], ns["df"])
        ran += 1
        # The block after "prints" shows this block's output.
        if i + 1 < len(bs) and bs[i + 1][2] == "prints":
            assert out.getvalue() == bs[i + 1][1], (
                f"docs/python.md shows another output than block {i} prints now (a model "
                f"change moves the numbers: paste the new output):\n{out.getvalue()}")
    assert ran >= 4
    assert (tmp_path / "mysql-report.html").stat().st_size > 10_000
    assert (tmp_path / "mysql-sweep.parquet").exists()
    assert (tmp_path / "generations.png").exists()
