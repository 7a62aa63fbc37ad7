"""Replay a recorded real run in the simulator, with the balancer it used or any other (:func:`replay`), and
compare several balancers on the same recorded loads (:func:`compare`).

A real run records what it did (``record=`` of :func:`dlbkit.map`, :func:`dlbkit.graph`, :class:`dlbkit.Cluster`,
``dlbkit run --record``); a replay rebuilds from that record alone the simulator's picture of the run and
simulates it (DESIGN.md: "record the run, and replay the recorded loads in the simulator"). How is the recording
family's own (``Family.replay``): a loop's model of speeds, latency and startup is
:mod:`dlbkit.families.divisible.face.replay`'s, a task graph's :mod:`dlbkit.families.graph.face.replay`'s, a job
stream's :mod:`dlbkit.families.stream.face.replay`'s. This module dispatches by the recording's family.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from dlbkit import families
from dlbkit.balancers.base import Balancer
from dlbkit.errors import ConfigError
from dlbkit.families.replay import ReplayResult, as_trace, check_whole, compare_rows
from dlbkit.model.trace import Trace

# the families' replay functions under the names callers have imported from here (dispatch is the registry's)
from dlbkit.families.divisible.face.replay import MODELS, ReplayModel, estimate  # noqa: E402
from dlbkit.families.graph.face.replay import dispatch_latency, replay_graph  # noqa: E402
from dlbkit.families.stream.face.replay import replay_stream  # noqa: E402

__all__ = ["replay", "compare", "check_replayable", "replayable_family", "replaying", "replay_kinds", "ReplayResult",
           "estimate", "replay_graph", "replay_stream", "dispatch_latency", "ReplayModel", "MODELS"]


def replaying() -> list:
    """The families that replay their recordings, in the registry's order."""
    return [f for f in families.FAMILIES.values() if f.replay is not None]


def replayable_family(trace: Trace):
    """The family of *trace*, if it replays its recordings; else a ConfigError naming what can be replayed
    (or saying that the recording is of a run that failed part-way: :func:`~dlbkit.families.replay.check_whole`)."""
    check_whole(trace)
    family = families.FAMILIES.get(trace.family)
    if family is None or family.replay is None:  # a family that declares no replay, or none registered
        kinds = [f.replay.recorded_by for f in replaying()]
        listing = ", ".join(kinds[:-1]) + " or " + kinds[-1] if len(kinds) > 1 else "".join(kinds)
        raise ConfigError("trace family", trace.family, "a recording dlbkit replays: " + listing)
    return family


def check_replayable(trace: Trace) -> None:
    """A ConfigError naming what can be replayed, for a recording of a family that does not replay."""
    replayable_family(trace)


def replay_kinds(trace: Trace) -> tuple[str, ...]:
    """The balancer kinds *trace*'s recording replays under (its family's engines' kinds)."""
    return replayable_family(trace).kinds


def replay(trace_or_path: Trace | str | Path, balancer: Balancer | str | None = None,
           params: Mapping[str, Any] | None = None, seed: int | None = None, *, model: str | None = None,
           latency: float | None = None, overhead: float | None = None) -> ReplayResult:
    """Simulate a recorded run's loads under *balancer* (default: the one it used); a
    :class:`ReplayResult` (``.makespan``, ``.metrics``, ``.trace``, ``.ratio`` to the real makespan).

    *trace_or_path*: a Trace (``RunResult.trace``) or a file written by ``RunResult.save`` /
    ``record=``. *balancer*: a registered name or object; with no name or the recorded name, the
    recorded parameters apply, updated by *params*. *seed*: for randomised balancers (default the
    recorded seed, else 0). *model*: ``"measured"`` (None: the default) or ``"emulated"`` speeds
    (module docstring); *latency* / *overhead* override the estimated network latency and master
    overhead (seconds). A task graph takes *latency* only and a job stream none of the three: they
    replay on their recorded speeds (a ConfigError names an option given for them).

    Example::

        dlbkit.run_map(f, items, balancer="fac2", record="run.json")
        replay("run.json").ratio               # about 1: the replay reproduces the real makespan
        replay("run.json", "awf-c").makespan   # what AWF-C would have done with the same loads
    """
    trace = as_trace(trace_or_path)
    family = replayable_family(trace)
    options = {"model": model, "overhead": overhead, "latency": latency}
    for name, v in options.items():
        if v is not None and name not in family.replay.options:  # not silently ignored
            takers = [f.replay.noun for f in replaying() if name in f.replay.options]
            raise ConfigError(name, v, f"absent for a {family.replay.noun} recording (a {' or '.join(takers)} "
                              f"recording's option: a {family.name} replays on its recorded speeds)")
    return family.replay.run(trace, balancer, params, seed, **{k: v for k, v in options.items() if k in family.replay.options})


def compare(trace_or_path: Trace | str | Path, balancers: Sequence[str | Balancer] = (),
            params: Mapping[str, Any] | None = None, seed: int | None = None, *,
            model: str | None = None) -> list[dict]:
    """Replay the recorded balancer (as recorded), then each of *balancers* (with *params*, e.g. from
    ``dlbkit replay --param``); one row per replay, the recorded one first.

    Each row: ``balancer``, ``params``, ``makespan`` (simulated), ``efficiency`` (its lower bound /
    makespan), ``recorded`` (True for the balancer the run used), and for that row ``real_makespan``
    and ``ratio`` (replay / real; None on the other rows). A named balancer equal to the recorded one
    with no *params* is the recorded row and is not repeated.
    """
    trace = as_trace(trace_or_path)

    def run(t, b, p, s):
        return replay(t, b, p, s, model=model)

    return compare_rows(run, trace, balancers, params, seed)
