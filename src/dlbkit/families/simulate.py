"""The Python entry points: ``dlbkit.simulate`` and its Result."""

from __future__ import annotations

import warnings
from numbers import Integral
from pathlib import Path
from typing import Any, Mapping

from dlbkit import families
from dlbkit.balancers.base import Balancer
from dlbkit.balancers.registry import resolve
from dlbkit.errors import ConfigError, closest
from dlbkit.families.result import Result
from dlbkit.model.availability import Pulse, Recorded, Step
from dlbkit.model.platform import Platform

__all__ = ["simulate", "Result", "UnusedAvailabilityWarning", "unused_availability"]


def simulate(platform: Platform | str | Path, workload: Any, balancer: Balancer | str | None = "gss", *,
             params: Mapping[str, Any] | None = None, seed: int = 0, engine_name: str | None = None,
             **engine: Any) -> Result:
    """Simulate *workload* on *platform* under *balancer*; return a :class:`Result`.

    The workload's family (``dlbkit families``) picks the default engine and the balancer kind: a
    :class:`~dlbkit.families.divisible.model.workload.Divisible` loop runs on the master–worker engine with a chunking
    balancer; a :class:`~dlbkit.families.tree.model.workload.TaskTree` on the asynchronous tree engine with a migration
    balancer; an :class:`~dlbkit.families.spmd.model.workload.Spmd` loop (Osman 2003, 000) on the pipelined-SPMD engine
    with a repartition balancer or ``"none"``/None (no balancing); a
    :class:`~dlbkit.families.graph.model.workload.TaskGraph` on the static-plan engine with a mapping balancer; a
    :class:`~dlbkit.families.stream.model.workload.Stream` on the job-stream engine with a placement balancer.
    *engine_name* chooses another engine of the family (None: its first, the default; an experiment
    file's ``[engine] name``), e.g. ``engine_name="dynamic"`` for a task graph under changing
    availability, where an online mapper (``pd``) or a static plan replayed runs. The balancer must be
    of a kind that engine accepts (``dlbkit families`` lists them per engine).
    *balancer* is a balancer object or a registered name (with *params*, a dict of its
    parameters); *platform* a Platform or the path of a platform TOML file; *seed* an integer >= 0.
    *engine* options go to the engine (``dlbkit families`` lists them per family) and are checked as
    an experiment file's ``[engine]`` table is; an unknown one is a ConfigError naming those allowed.
    Every engine takes ``progress``: a function ``progress(done, total)`` called now and then during
    the run with the work completed so far (items of a loop, tasks of a tree, loops of an SPMD run,
    tasks of a graph) and the total, non-decreasing, ending with ``done == total``; at most a few
    calls a second, only on completions (:mod:`dlbkit.sim.progress`). None (the default) costs nothing;
    it never changes the run.

    **The divisible family has a master.** Its engine makes one platform node the master, which
    hands out work and does **not** compute: node 0 unless ``master=`` names another, and only with
    ``master_computes=True`` does it also compute. (A real run, :func:`dlbkit.map` with *emulate*,
    makes every node a worker unless its *master* is given.) ``result.trace.meta["master"]`` names it.

    Raise :exc:`~dlbkit.errors.ConfigError` naming the argument for bad input; warn
    (:class:`UnusedAvailabilityWarning`) when a node's availability changes only after the run ended.

    >>> from dlbkit import Platform, Node, Divisible, simulate
    >>> p = Platform([Node("m"), Node("a", speed=1.0), Node("b", speed=3.0)])
    >>> r = simulate(p, Divisible(400), "ss", seed=1)
    >>> round(r.metrics["efficiency"], 2)
    1.0
    """
    if isinstance(platform, (str, Path)):
        platform = Platform.read(platform)
    if not isinstance(platform, Platform):
        raise ConfigError("platform", platform, "a Platform or the path of a platform file (TOML, or SimGrid XML)")
    if isinstance(seed, bool) or not isinstance(seed, Integral) or seed < 0:
        raise ConfigError("seed", seed, "an integer >= 0")
    family = families.of(workload)
    eng = family.engine_named(engine_name, "engine_name")
    allowed = eng.api_options
    for k in engine:
        if k not in allowed:
            raise ConfigError(f"engine.{k}", "<unknown option>",
                              f"an option of the {family.name} family's {eng.name} engine: " + ", ".join(allowed),
                              suggest=closest(k, allowed))
    # the options an experiment file may set are checked as there (one path); but info, which the engine
    # checks as it starts and names as this call's keyword (info.model), not as an [engine] key
    eng.validate({k: v for k, v in engine.items() if k in eng.options and k != "info"}, platform, "engine")
    b = resolve(balancer, params, kind=family.kinds, allow_none=family.allow_none)
    if b is not None:
        family.check_kind(eng, b.kind, b.name)
    family.check_fit(platform, workload)  # as an experiment file's: e.g. an SWF job wider than the platform
    trace = eng.run(platform, workload, b, seed=int(seed), **engine)
    if not trace.family:  # an engine of a family declared elsewhere that left it unnamed: the family it ran for
        trace.family = family.name
    trace.name_nodes(platform)
    for message in unused_availability(platform, trace):
        warnings.warn(message, UnusedAvailabilityWarning, stacklevel=2)
    return Result(trace, b, platform=platform)


class UnusedAvailabilityWarning(UserWarning):
    """A node's availability changes only after the run ended: the background load it describes
    had no effect on the run (often a pulse given in the wrong unit of time)."""


def unused_availability(platform: Platform, trace: Any) -> list[str]:
    """One message per node whose availability (a step, pulse or recorded trace) first changes after
    the run's makespan: what it describes did not happen during the run."""
    family = families.FAMILIES.get(trace.family)
    if family is not None and not family.availability_on_run_clock:  # e.g. SPMD's loop clock
        return []
    end = trace.makespan
    out = []
    for n in platform.nodes:
        a = n.availability
        first = (a.start if isinstance(a, Pulse) and a.start > 0 else
                 a.at if isinstance(a, Step) and a.at > 0 and a.level != a.before else
                 a.times[1] if isinstance(a, Recorded) and len(a.times) > 1 else None)
        if first is not None and end > 0 and first >= end:
            kind = type(a).__name__.lower()
            out.append(f"node {n.name!r}: its availability {kind} begins at t = {first:g} s, after the run "
                       f"ended (makespan {end:.4g} s): it had no effect")
    return out


