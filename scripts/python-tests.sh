#!/usr/bin/env bash
# The Python package's tests (crates/reclaimlab-py/tests): builds the package with maturin into
# a virtual environment of its own (target/python-venv, made on first use) with pandas,
# matplotlib, pyarrow, pytest and Ray, installs Debian's chromium for the report test when it
# is missing (as root), and runs pytest. Results stores stay in a temporary cache directory.
set -euo pipefail
cd "$(dirname "$0")/.."

python=${PYTHON:-python3}
venv=${RECLAIMLAB_VENV:-target/python-venv}
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q "maturin>=1.7,<2" pandas matplotlib pyarrow pytest
# Ray is an optional extra: its tests skip (saying why) where it cannot be installed.
"$venv/bin/python" -m pip install -q "ray>=2.9" \
  || echo "warning: Ray could not be installed: its tests will be skipped" >&2

if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing Debian's chromium for the report's rendering test" >&2
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

# The package as `pip install crates/reclaimlab-py` builds it (maturin, release profile, into
# the workspace's target directory).
"$venv/bin/python" -m pip install -q ./crates/reclaimlab-py

cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
cd crates/reclaimlab-py
XDG_CACHE_HOME="$cache" RECLAIMLAB_PYTHON="$PWD/../../$venv/bin/python" \
  "../../$venv/bin/python" -m pytest -q tests
