"""One Result for every run, simulated or real: its trace, the metrics computed from it, its plots.

The trace's family (``trace.family``, :mod:`dlbkit.families`) says which metrics apply and which
figures describe a run; every plot method here draws from the trace alone
(:mod:`dlbkit.plots`, and the family's own plots: ``Family.plots``). A real run's result adds what the
user's code produced (:mod:`dlbkit.families.run`: ``results``, a tree's ``value``, an SPMD ``domain``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dlbkit import families
from dlbkit.model.trace import Trace

__all__ = ["Result"]


class Result:
    """One run: its :class:`~dlbkit.model.trace.Trace`, the ``metrics`` computed from it by its family,
    the balancer that decided (None: no balancing), and the platform it was simulated on (None for a
    real run)."""

    def __init__(self, trace: Trace, balancer: Any, *, platform: Any = None, metrics: dict | None = None):
        self.trace = trace
        self.balancer = balancer
        self.platform = platform
        self.family = families.get(trace.family, "trace.family")
        self.metrics = dict(metrics) if metrics is not None else self.family.metrics(trace)

    @property
    def makespan(self) -> float:
        return self.metrics["makespan"]

    def table(self) -> dict[str, list]:
        """The trace's intervals as a dict of columns, column name → list of values, all of one length
        (one row per chunk, task stretch or SPMD loop of a node): ``node`` (the view's index),
        ``first`` and ``count`` (the first item and how many; tasks for a tree, rows for SPMD),
        ``t_ask``, ``t_start``, ``t_end`` (s) and ``round`` (-1 outside round-based engines); see
        ``dlbkit.model.trace.INTERVAL_COLUMNS``. For a table object: ``pandas.DataFrame(result.table())``.
        """
        return {k: v.tolist() for k, v in self.trace.intervals().items()}

    def figures(self, title: str = "") -> dict:
        """Every figure the family draws for one run, kind → matplotlib Figure (``dlbkit families``)."""
        return self.family.figures(self.trace, title or self.trace.balancer)

    def plot_gantt(self, ax=None, **kw):
        """A bar per interval on each node's row (waiting for work in orange, background load shaded),
        labelled as the family's trace means it (``Family.gantt_legend``)."""
        from dlbkit.plots import gantt
        return gantt(self.trace, ax=ax, **{"legend": self.family.gantt_legend, **kw})

    def plot_work(self, ax=None, **kw):
        """Work completed per node over time."""
        from dlbkit.plots import work_over_time
        return work_over_time(self.trace, ax=ax, **kw)

    def plot_tasks(self, ax=None, **kw):
        """Task trees: waiting tasks per node over time, and n(t) with Haron's three phases."""
        return self._plot("tasks", ax, kw)

    def plot_loop_times(self, ax=None, **kw):
        """SPMD: loop time per node over the loops."""
        return self._plot("loop_times", ax, kw)

    def plot_points(self, ax=None, **kw):
        """SPMD: data points per node over the loops."""
        return self._plot("points", ax, kw)

    def _plot(self, name: str, ax, kw: dict):
        """The family's plot *name* (``Family.plots``) of this run; a ValueError names the families that draw it."""
        draw = self.family.plots.get(name)
        if draw is None:
            have = [f.name for f in families.FAMILIES.values() if name in f.plots]
            raise ValueError(f"plot_{name} draws a run of the {' or '.join(have) or 'no'} family, not of the "
                             f"{self.family.name} family")
        return draw(self.trace, ax=ax, **kw)

    def save(self, path: str | Path) -> Path:
        """Record the run to a file (for ``dlbkit replay``; :func:`dlbkit.save_trace`)."""
        from dlbkit.runtime.record import save_trace
        return save_trace(self.trace, path)

    def __repr__(self) -> str:
        name = getattr(self.balancer, "name", "none") if self.balancer is not None else "none"
        master = self.trace.meta.get("master")
        role = ""
        if master is not None:  # the divisible family's master: say whether it computed
            role = f", master {master!r}" + (" also computes" if self.trace.meta.get("master_computes")
                                              else " hands out work, does not compute")
        return f"<{type(self).__name__} {self.family.name}, {name}: makespan {self.makespan:.6g} s{role}>"
