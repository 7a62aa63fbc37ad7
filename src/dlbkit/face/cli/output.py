"""What the commands print and write alike: values made JSON, one-line messages and warnings, plain-text
tables, a balancer's label, the line naming a recording, a figure saved to a file."""

from __future__ import annotations

import contextlib
import json
import math
import shlex
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any

__all__ = ["jsonable", "one_line", "wrapped_table", "balancer_label", "warnings_in_one_line", "recorded_line",
           "save_figure"]


def one_line(text: str) -> str:
    """*text* with every run of white space (newlines too) one space: an error or warning on one line."""
    return " ".join(text.split())


def jsonable(v: Any) -> Any:
    """*v* as values JSON holds: a float that is not finite as its text, numpy scalars as Python's, a
    mapping's keys as strings, anything else as its repr."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else str(v)
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if hasattr(v, "item"):  # numpy scalars
        return jsonable(v.item())
    return repr(v)


def wrapped_table(header: list[str], rows: list[list[str]], max_widths: list[int]) -> str:
    """An aligned plain-text table whose cells wrap within *max_widths* (rows separated by blank lines
    when any cell wraps)."""
    wrapped = [[textwrap.wrap(c, w, break_long_words=True) or [""] for c, w in zip(r, max_widths)] for r in rows]
    widths = [max([len(h)] + [max(len(x) for x in r[i]) for r in wrapped]) for i, h in enumerate(header)]
    multi = any(len(cell) > 1 for r in wrapped for cell in r)
    out = ["  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip(), "  ".join("-" * w for w in widths)]
    for k, r in enumerate(wrapped):
        if multi and k:
            out.append("")
        for j in range(max(len(cell) for cell in r)):
            out.append("  ".join((cell[j] if j < len(cell) else "").ljust(w) for cell, w in zip(r, widths)).rstrip())
    return "\n".join(out)


def balancer_label(name: str, params: dict) -> str:
    """``name`` or ``name(k=v, ...)`` with the parameters that differ from the defaults."""
    from dlbkit.balancers.registry import REGISTRY

    cls = REGISTRY.get(name)
    defaults = cls.param_defaults() if cls is not None else {}
    shown = [f"{k}={json.dumps(jsonable(v))}" for k, v in params.items() if k not in defaults or v != defaults[k]]
    return name + (f"({', '.join(shown)})" if shown else "")


def recorded_line(record: Path) -> str:
    """The line that says where a run (``--record``) was saved, with the command that replays it."""
    return f"recorded the run in {record} (dlbkit replay {shlex.quote(str(record))})"


@contextlib.contextmanager
def warnings_in_one_line(rank: int):
    """While a run goes on, print each :class:`DlbkitWarning` as one line on stderr (rank 0 only),
    when it is raised: ``dlbkit: warning: <message>``; other warnings as Python prints them."""
    from dlbkit.errors import DlbkitWarning

    with warnings.catch_warnings():
        warnings.simplefilter("always", DlbkitWarning)
        shown = warnings.showwarning

        def show(message, category, filename, lineno, file=None, line=None):
            if not issubclass(category, DlbkitWarning):
                return shown(message, category, filename, lineno, file, line)
            if rank == 0:
                print(f"dlbkit: warning: {one_line(str(message))}", file=sys.stderr, flush=True)

        warnings.showwarning = show
        yield


def save_figure(fig, path: Path, **savefig) -> None:
    """*fig* drawn to *path* (*savefig*: matplotlib's options, e.g. dpi), then closed: main() runs
    in-process too (tests, notebooks), where pyplot would keep every chart open."""
    import matplotlib.pyplot as plt

    fig.savefig(path, **savefig)
    plt.close(fig)
