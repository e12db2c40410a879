"""Every test keeps results stores in temporary directories, never the user's cache."""

import os

import pytest


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    yield


def cli_binary():
    """The workspace's release build of the `reclaimlab` command, or None."""
    here = os.path.dirname(os.path.abspath(__file__))
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(here, "..", "..", "..", "target")
    path = os.path.join(target, "release", "reclaimlab")
    return path if os.path.exists(path) else None
