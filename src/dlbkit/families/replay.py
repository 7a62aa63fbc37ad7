"""What every family's replay shares: the Result of a replay, reading a recording, the recorded balancer, the rows
of a comparison (:func:`compare_rows`) and ``dlbkit replay``'s report (:class:`ReplayReport`), with the makespan
table the families whose main metric is the makespan print (:func:`makespan_report`).

A family replays its recordings with its own hooks (``Family.replay``, a :class:`~dlbkit.families.registry.Replay`:
the divisible family's :mod:`dlbkit.families.divisible.face.replay`, the other families' likewise);
:func:`dlbkit.replay` and ``dlbkit replay`` dispatch by the recording's family.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from dlbkit.balancers.base import Balancer
from dlbkit.balancers.registry import REGISTRY, resolve
from dlbkit.errors import ConfigError
from dlbkit.families import registry
from dlbkit.families.result import Result
from dlbkit.model.availability import Piecewise, Recorded
from dlbkit.model.trace import Column, Trace
from dlbkit.runtime.record import load_trace

__all__ = ["ReplayResult", "ReplayReport", "as_trace", "check_whole", "trust", "trust_line", "TRUSTED", "pieces", "recorded_balancer", "check_seconds", "compare_rows",
           "makespan_report", "earlier", "shift", "speeds_text", "measured_speed"]


class ReplayResult(Result):
    """A replay's :class:`~dlbkit.families.result.Result`, with the recorded run it replays (*recorded*) and the
    model used (*model*)."""

    def __init__(self, trace: Trace, balancer, *, platform=None, recorded: Trace | None = None,
                 model: Any = None):
        super().__init__(trace, balancer, platform=platform)
        self.recorded = recorded
        self.model = model

    @property
    def real_makespan(self) -> float:
        return self.recorded.makespan if self.recorded is not None and len(self.recorded.t_end) else math.nan

    @property
    def ratio(self) -> float:
        """Simulated makespan / real makespan."""
        real = self.real_makespan
        return self.makespan / real if real > 0 else math.nan


def as_trace(trace_or_path: Trace | str | Path) -> Trace:
    """*trace_or_path* as a Trace: a Trace itself, or the recording saved at that path."""
    if isinstance(trace_or_path, Trace):
        return trace_or_path
    if isinstance(trace_or_path, (str, Path)):
        return load_trace(trace_or_path)
    raise ConfigError("trace", type(trace_or_path).__name__, "a Trace or the path of a recorded trace file")


def check_whole(trace: Trace) -> None:
    """A ConfigError for the recording of a run that failed part-way (``meta["partial"]``, written by
    ``record=`` when a task raised): a replay or an advice needs every unit's measured cost, which
    such a run did not measure. The recording itself is kept to be read (:func:`dlbkit.load_trace`)."""
    part = trace.meta.get("partial")
    if part:
        part = part if isinstance(part, dict) else {}
        raise ConfigError("trace", f"a run that failed at {part.get('failed', '?')} after {part.get('done', '?')} of "
                          f"{part.get('of', '?')} {part.get('unit', 'units')}", "the recording of a whole run (a "
                          "replay needs every unit's measured cost; this part is kept to read with dlbkit.load_trace)")


def check_no_death(trace: Trace, why: str) -> None:
    """A ConfigError for the recording of a run in which a worker died and was survived (``meta["dead"]``,
    written by the tree and SPMD runs): *why* its recording is not a run the replay model describes."""
    if trace.meta.get("dead"):
        raise ConfigError("trace meta.dead", list(trace.meta["dead"]), f"[] (a run in which no worker died: {why})")


def pieces(a: Any, until: float) -> Recorded:
    """A recorded availability as its pieces up to *until* (a realised Piecewise made Recorded)."""
    if isinstance(a, Recorded):
        return a
    if isinstance(a, Piecewise):
        times, levels = a.segments_until(until)
        return Recorded(tuple(float(t) for t in times), tuple(float(x) for x in levels))
    raise ConfigError("trace.availability", a, "realised availabilities (Piecewise)")


def measured_speed(speed: float, availability: Recorded, runs) -> float:
    """A worker's replay speed from its recorded stretches of work: its *speed* factor times the ratio of the time
    the *runs* should have taken (each ``(work, t0, t1)``: seconds of measured cost, started at t0, ended at t1;
    the work at *speed* under the recorded *availability*) to the time they did take; *speed* itself if either
    is 0. It folds in what the per-task timers miss: the emulation's oversleep, the costs between two tasks
    (messages, results), contention for the CPU."""
    pw = availability.realise()
    expected = taken = 0.0
    for work, t0, t1 in runs:
        expected += pw.finish(t0, work / speed) - t0
        taken += t1 - t0
    if expected > 0 and taken > 0:
        speed *= expected / taken
    return speed


def shift(trace: Trace, s: float) -> None:
    """Move a replay's times *s* seconds later, in place (its asks, starts, ends, end time and recorded
    makespan): a replay that starts when the recorded run's work did, so replay/real compares like with like
    (the recorded process start is no part of the model)."""
    trace.t_ask = Column("d", [t + s for t in trace.t_ask])
    trace.t_start = Column("d", [t + s for t in trace.t_start])
    trace.t_end = Column("d", [t + s for t in trace.t_end])
    trace.end_time = float(trace.end_time) + s
    if "makespan" in trace.meta:
        trace.meta["makespan"] = trace.end_time


def earlier(a: Recorded, s: float) -> Recorded:
    """Recorded availability *a* as seen from *s* seconds into the recording: its level at *s* from 0 on, its
    later changes *s* seconds sooner. A replay simulated from 0 and then :func:`shift`-ed by *s* meets the
    availability the recorded run met at the same instants."""
    if s <= 0:
        return a
    k = max(i for i, t in enumerate(a.times) if t <= s)
    times = (0.0,) + tuple(t - s for t in a.times[k + 1:])
    return Recorded(times, (a.levels[k],) + tuple(a.levels[k + 1:]), source=a.source)


def check_seconds(name: str, v: Any) -> None:
    """A replay's time option (*latency*, *overhead*): a finite number of seconds >= 0, or a ConfigError naming it."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
        raise ConfigError(name, v, "a finite number of seconds >= 0")


def recorded_balancer(trace: Trace, balancer: Balancer | str | None, params: Mapping | None) -> Balancer:
    """The balancer of a replay: *balancer* (of a kind the recording's family runs) with *params*; None or the
    recorded name: the recorded one with its recorded parameters, updated by *params*."""
    kind = registry.get(trace.family, "trace family").kinds
    recorded = dict(trace.meta.get("balancer_params") or {})
    if balancer is None or (isinstance(balancer, str) and balancer.lower() == trace.balancer):
        if not trace.balancer:
            raise ConfigError("balancer", None, "a balancer name (the trace does not name the one it used)")
        try:
            return resolve(trace.balancer, {**recorded, **dict(params or {})}, kind=kind)
        except ConfigError as e:
            if balancer is None and not params:
                own = "" if str(trace.balancer).lower() in REGISTRY else (
                    " (a balancer of your own: import the module that registers it first: `import MODULE` "
                    "in Python, `dlbkit replay --import MODULE` on the command line)")
                raise ConfigError(f"recorded {e.field}", e.value, e.allowed + own) from None
            raise
    return resolve(balancer, params, kind=kind)



def compare_rows(run: Callable[..., ReplayResult], trace: Trace, balancers: Sequence[str | Balancer] = (),
                 params: Mapping[str, Any] | None = None, seed: int | None = None) -> list[dict]:
    """The rows of :func:`dlbkit.compare`: *run* ``(trace, balancer, params, seed)`` (a replay) of the recorded
    balancer as recorded, then of each of *balancers* with *params*; the recorded one first, a balancer that
    repeats one already replayed (same name and parameters) left out.

    Each row: ``balancer``, ``params``, ``makespan`` (simulated), ``efficiency`` (its lower bound / makespan),
    ``recorded`` (True for the balancer the run used), and for that row ``real_makespan`` and ``ratio`` (replay /
    real; None on the other rows)."""
    rows = []
    seen: list = []
    for b in [None, *balancers]:
        if b is None:
            r = run(trace, None, None, seed)
        else:
            if isinstance(b, str) and b.lower() == trace.balancer and not params:
                continue
            r = run(trace, b, params, seed)
        key = (r.balancer.name, sorted(r.balancer.get_params().items(), key=lambda kv: kv[0]))
        if key in seen:
            continue
        seen.append(key)
        rows.append({"balancer": r.balancer.name, "params": r.balancer.get_params(), "makespan": r.makespan,
                     "efficiency": r.metrics["efficiency"], "recorded": b is None,
                     "real_makespan": r.real_makespan if b is None else None,
                     "ratio": r.ratio if b is None else None})
    return rows


@dataclass
class ReplayReport:
    """What ``dlbkit replay`` prints of a recording (a family's ``Replay.report``): *data*, the ``--json``
    object; else the *lines* above the table, and the table (*header*, *rows* of text cells, the columns'
    widest cells *widths*, past which a cell wraps)."""

    data: dict
    lines: list[str]
    header: list[str]
    rows: list[list[str]]
    widths: list[int]


def speeds_text(speeds: Sequence[float]) -> str:
    """A replay model's speeds as the report's model line writes them."""
    return " ".join(f"{s:.3g}" for s in speeds)


#: how far a replay of the recorded run may be from it for the other rows to be read as predictions: the
#: band dlbkit's replay is held to on a quiet machine (tests/face/test_record_replay.py)
TRUSTED = 0.10


def trust(predicted: float, measured: float) -> dict:
    """How well a replay reproduces the recorded run: ``predicted`` / ``measured`` (its ``ratio``) and
    whether that is within :data:`TRUSTED` (``within``)."""
    ratio = predicted / measured if measured > 0 else math.nan
    return {"predicted": predicted, "measured": measured, "ratio": ratio, "within": abs(ratio - 1.0) <= TRUSTED}


def trust_line(balancer: str, t: dict, what: str = "makespan") -> str:
    """The report's line on :func:`trust` of *what* (the measure the report compares, in seconds):
    how far to trust the rows of the other balancers."""
    said = (f"trust: the replay of the run itself ({balancer}) gives a {what} of {t['predicted']:.4g} s for the "
            f"{t['measured']:.4g} s measured (replay/real {t['ratio']:.3f})")
    if t["within"]:
        return said + f", within the {TRUSTED:.0%} replays are held to: the other rows are predictions of that quality"
    return (said + f", {abs(t['ratio'] - 1):.0%} off, beyond the {TRUSTED:.0%} replays are held to: the run met "
            "what the model lacks (a busy machine, a change of speed); read the other rows as rough")


def makespan_report(trace: Trace, named: Sequence[tuple[str, dict]], replay: Callable[..., ReplayResult], *,
                    seed: int | None, source: str, label: Callable[[str, dict], str], model: dict,
                    model_line: str, count: int, unit: str, efficiency: bool = True) -> ReplayReport:
    """The report of a family whose replay is judged by its makespan (a loop, a task graph, a task tree, an SPMD
    run): the recorded balancer and each of *named* replayed by *replay* (:func:`compare_rows`), one row each
    with its makespan, efficiency and, for the recorded one, replay/real; then the real run. The heading says
    *count* of the recording's *unit* ("items", "tasks"; ``items`` in the JSON); *model* (the family's replay model, as data) and *model_line*
    (it, as the line under the heading) are the family's. *efficiency* False: a family without a lower bound
    (SPMD), whose table has no efficiency column (its JSON rows say NaN)."""
    from dlbkit.balancers.registry import make

    rows = compare_rows(replay, trace, [make(n, p) for n, p in named], seed=seed)
    real = rows[0]["real_makespan"]
    bound = rows[0]["makespan"] * rows[0]["efficiency"]
    real_eff = bound / real if real > 0 else math.nan
    data = {"trace": str(source), "balancer": trace.balancer,
            "params": dict(trace.meta.get("balancer_params") or {}), "workers": trace.n_nodes,
            "items": int(count),
            "backend": trace.meta.get("backend", trace.source),
            "real_makespan": real, "real_efficiency": real_eff, "model": model, "rows": rows}
    heading = (f"replay of {source}: {trace.balancer} on {trace.n_nodes} workers ({data['backend']}), "
               f"{data['items']} {unit}; real makespan {real:.4g} s")
    data["trust"] = trust(rows[0]["makespan"], real)
    lines = [heading, trust_line(trace.balancer, data["trust"]), model_line, ""]

    def cell(row) -> str:
        return label(row["balancer"], row["params"]) + (" [recorded]" if row["recorded"] else "")

    table = [[cell(r), f"{r['makespan']:.4g}", f"{r['efficiency']:.3f}",
              f"{r['ratio']:.3f}" if r["ratio"] is not None else ""] for r in rows]
    table.append([f"real run ({trace.balancer})", f"{real:.4g}", f"{real_eff:.3f}", ""])
    keep = (0, 1, 2, 3) if efficiency else (0, 1, 3)  # the efficiency is the third column

    def pick(r: list) -> list:
        return [r[j] for j in keep]

    return ReplayReport(data, lines, pick(["balancer", "makespan (s)", "efficiency", "replay/real"]),
                        [pick(r) for r in table], pick([60, 14, 10, 11]))
