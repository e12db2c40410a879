"""Keyword arguments to reclaimlab command lines, checked against the CLI's own options."""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Dict, Iterable, List, Optional

from . import _native

ReclaimlabError = _native.ReclaimlabError


def options(subcommand: str) -> Dict[str, tuple]:
    """The long options of ``reclaimlab SUBCOMMAND``: ``{name: (takes_value, repeatable)}``."""
    opts = _native.options(subcommand)
    if opts is None:
        raise ValueError(f"reclaimlab has no subcommand {subcommand!r}")
    return {name: (takes, repeat) for name, takes, repeat in opts}


def argv_of(
    subcommand: str,
    function: str,
    positional: Iterable[str],
    kwargs: Dict[str, Any],
    reserved: Iterable[str] = (),
) -> List[str]:
    """``[subcommand, *positional, --opt value...]`` from keyword arguments.

    A keyword ``memory_max`` is the option ``--memory-max``; ``True`` gives a flag, ``None``
    and ``False`` leave the option out, a list or tuple repeats it. An unknown keyword, or one
    the Python function sets itself (``reserved``), is a TypeError naming it.
    """
    known = options(subcommand)
    reserved = set(reserved)
    argv = [subcommand, *positional]
    for key, value in kwargs.items():
        # `with_=` for --with (a Python keyword), as usual in Python APIs.
        name = key.rstrip("_").replace("_", "-")
        if name not in known or name in reserved or name in ("help", "version"):
            allowed = sorted(
                k.replace("-", "_") for k in known if k not in reserved and k not in ("help", "version")
            )
            raise TypeError(
                f"{function}() got an unexpected keyword argument {key!r} "
                f"(`reclaimlab {subcommand}` options it takes: {', '.join(allowed)})"
            )
        takes_value, repeatable = known[name]
        if value is None or value is False:
            continue
        if not takes_value:
            if value is not True:
                raise TypeError(f"{function}(): {key} is a flag: give True or False, not {value!r}")
            argv.append(f"--{name}")
            continue
        values = list(value) if isinstance(value, (list, tuple)) else [value]
        if len(values) > 1 and not repeatable:
            raise TypeError(f"{function}(): {key} takes one value, not {value!r}")
        for v in values:
            argv.append(f"--{name}={_text(v)}")
    return argv


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def call(argv: List[str]) -> str:
    """Runs ``reclaimlab ARGV...`` in this process; its stdout. Raises ReclaimlabError."""
    # Commands that start Python themselves (plot, report, sweep --ray) use this interpreter.
    os.environ.setdefault("RECLAIMLAB_PYTHON", sys.executable)
    return _native.cli([str(a) for a in argv])


def call_json(argv: List[str]) -> Any:
    return json.loads(call(argv))


def store_args(store: Any) -> List[str]:
    """``store``: None (the CLI's default store), False (no store) or a path."""
    if store is None:
        return []
    if store is False:
        return ["--no-store"]
    return ["--store", os.fspath(store)]
