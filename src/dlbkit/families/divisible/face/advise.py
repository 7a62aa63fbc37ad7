"""``dlbkit advise`` for a loop (the divisible family's ``Family.advise``): which chunking balancer the next run of a
recorded loop should use.

:func:`advise` reads a recording (``dlbkit.run_map(..., record=)``, ``Loop.save``, a simulated
trace with item costs) and predicts every candidate's makespan for one more run of its last step,
by simulating it on what that step measured (:func:`dlbkit.families.divisible.sim.auto.predict`: the measured item
costs and worker speeds, each worker's latency to the master as the replay measures it), best
first, with the measured makespan of the step beside the prediction for the balancer that ran it
(how far the model is off there).
:func:`plot_auto` draws a time-stepping run under ``balancer="auto"``: each step's measured makespan,
the prediction for the balancer it used, and the choices.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from dlbkit.families.divisible.balancers.auto import Auto
from dlbkit.errors import ConfigError
from dlbkit.families.divisible.model.steps import n_steps, step_trace
from dlbkit.model.trace import Trace
from dlbkit.families.divisible.face.replay import estimate
from dlbkit.families.replay import as_trace
from dlbkit.families.divisible.sim.auto import measured_speeds, predict
from dlbkit.families.divisible.sim.engine import simulate_divisible

__all__ = ["advise", "plot_auto", "format_advice"]


def advise(trace: Trace | str | Path, *, candidates: list[str] | None = None, max_items: int = 2048) -> list[dict]:
    """The candidates ranked by predicted makespan for another run of *trace*'s last step (the last
    that computed items: a step of none measured nothing), best first:
    dicts ``rank``, ``balancer``, ``predicted`` (s), ``used`` (True for the balancer that ran that
    step), ``measured`` (the step's makespan, for that balancer only; else None) and ``error``
    (predicted / measured − 1, likewise). *candidates* default to every self-scheduling rule AUTO
    considers; a name that is not a chunking balancer is a ConfigError. The balancer that ran the step
    is always ranked (added to *candidates* if they leave it out)."""
    tr = as_trace(trace)
    if tr.family != "divisible":
        raise ConfigError("trace family", tr.family, "a divisible (loop) run: dlbkit advise ranks chunking balancers")
    names = Auto(candidates=candidates, max_items=max_items).validate().candidate_names()
    k = n_steps(tr) - 1
    last = step_trace(tr, k)
    while not last.n_intervals and k > 0:  # a step of no items measured nothing: rank the one before
        k -= 1
        last = step_trace(tr, k)
    costs = last.meta.get("item_cost")
    if costs is None and not last.n_intervals:  # a step of no items: nothing was measured
        raise ConfigError("trace chunks", 0, "a run that computed at least one item")
    if costs is None:
        raise ConfigError("trace item_cost", "<missing>", "a recorded real run or a loop's trace with its item costs")
    costs = np.asarray(costs, dtype=float)
    if not last.n_intervals:
        raise ConfigError("trace chunks", 0, "a run that computed at least one item")
    used = (last.meta.get("auto") or {}).get("used") or last.balancer
    if used not in names and _chunking(used):  # its measured makespan stands beside its prediction
        names.append(used)
    latency = estimate(last).links  # each worker's own link: one slow link is not spread over all
    speeds = measured_speeds(last, costs)
    preds, _ = predict(costs, speeds, list(last.speeds), names, simulate=simulate_divisible, latency=latency,
                       max_items=max_items)
    measured = float(last.makespan)
    out = []
    for k, (name, m) in enumerate(preds, 1):
        mine = name == used
        out.append({"rank": k, "balancer": name, "predicted": float(m), "used": mine,
                    "measured": measured if mine else None,
                    "error": (m / measured - 1.0) if mine and measured > 0 else None})
    return out


def _chunking(name: str) -> bool:
    """True if *name* is a chunking balancer AUTO could run (the recorded step's own balancer)."""
    try:
        Auto._make(name, "trace balancer")
    except ConfigError:
        return False
    return True


def format_advice(rows: list[dict], source: str = "") -> str:
    """The ranking as a text table (the CLI's output)."""
    lines = [f"predicted makespan of another run of the last step{' of ' + source if source else ''}, best first:",
             f"{'rank':>4}  {'balancer':<10} {'predicted (s)':>14} {'measured (s)':>13}  {'error':>7}"]
    for r in rows:
        meas = f"{r['measured']:13.6g}" if r["measured"] is not None else " " * 13
        err = f"{r['error']:+7.1%}" if r["error"] is not None else ""
        lines.append(f"{r['rank']:>4}  {r['balancer']:<10} {r['predicted']:14.6g} {meas}  {err:>7}"
                     + ("  <- used" if r["used"] else ""))
    return "\n".join(lines)


def plot_auto(trace: Trace | str | Path, ax: Any = None):
    """A time-stepping run under ``balancer="auto"``: per step the measured makespan (dots coloured by
    the balancer used), the prediction for that balancer (crosses), evaluations (vertical lines).
    The drawing is :func:`dlbkit.families.divisible.face.plots.auto_steps` (also an experiment's
    ``auto_<label>.png``); this returns the Axes."""
    from dlbkit.families.divisible.face.plots import auto_steps

    fig = auto_steps(as_trace(trace), ax)
    return ax if ax is not None else fig.axes[0]
