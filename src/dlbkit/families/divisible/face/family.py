"""The divisible family: a loop of independent items handed out in chunks (004, loop self-scheduling)."""

from __future__ import annotations

from dlbkit.model.metrics import compute
from dlbkit.families.divisible.model.view import LoopView
from dlbkit.families.divisible.model.workload import Divisible
from dlbkit.families.divisible.sim.engine import DivisibleOptions, simulate_divisible
import dlbkit.families.divisible.balancers  # noqa: F401  (registers the family's balancers)
from dlbkit.families.registry import Engine, Family, Replay, deferred, register

__all__ = ["FAMILY", "describe"]


def describe(w: Divisible) -> str:
    c = w.cost
    cost = {"constant": lambda: f"constant {c.value:g}",
            "uniform": lambda: f"uniform in [{c.low:g}, {c.high:g}]",
            "normal": lambda: f"normal(mean {c.mean:g}, std {c.std:g}), floored at {c.floor:g}",
            "exponential": lambda: f"exponential(mean {c.mean:g}), floored at {c.floor:g}",
            "linear": lambda: f"linear from {c.first:g} to {c.last:g} across the loop",
            "array": lambda: f"{len(c.values)} given costs"}.get(c.dist, lambda: c.dist)()
    text = f"divisible loop of {w.n_items:,} items; item cost (work units): {cost}"
    if w.bytes_in or w.bytes_out:
        text += f"; {w.bytes_in:g} B in and {w.bytes_out:g} B out per item"
    return text


def figures(trace, run: str) -> dict:
    """A Gantt chart and the work done per worker over time; for time steps run by ``balancer="auto"``
    also its choice and the predicted against the measured makespan per step ("auto")."""
    from dlbkit.plots import auto_records, auto_steps, chunk_figures
    out = chunk_figures(trace, run)
    if auto_records(trace):  # only auto records them: every other run's figures are as they were
        out["auto"] = auto_steps(trace, title=f"auto's choices: {run} (seed {trace.seed})")
    return out



def sample_view() -> LoopView:
    """50 items left on 3 nodes of speeds 1, 2 and 3."""
    return LoopView(50, 3, [1.0, 2.0, 3.0])


FAMILY = register(Family(
    name="divisible",
    summary="a loop of independent items, handed out in chunks by a master",
    source="004 (Sánchez et al.) and the loop self-scheduling literature",
    workloads=(Divisible,),
    view=LoopView,
    kind="chunking",
    engines=(Engine("master-worker", "discrete-event master–worker engine (self-scheduling or rounds)",
                    "dlbkit.families.divisible.sim.engine.simulate_divisible", simulate_divisible, DivisibleOptions),),
    run=deferred("dlbkit.families.divisible.face.run", "map"),
    runtime="dlbkit.map, dlbkit.run_map",
    metrics=compute,
    metric_names=("makespan", "lower_bound", "efficiency", "imbalance", "idle_share", "chunks", "messages",
                  "bytes", "rounds_to_balance"),
    metric_text={"makespan": "time of the last chunk's completion (s)",
                 "imbalance": "max / mean of the workers' finish times",
                 "idle_share": "share of worker time not computing, up to the makespan",
                 "chunks": "chunks handed out (scheduling decisions)",
                 "messages": "balancing messages: requests, replies and STOPs",
                 "bytes": "bytes moved with the chunks' items and results"},
    figures=figures,
    figure_kinds=("gantt", "work", "auto"),
    bar_metrics=("makespan", "efficiency"),
    parse=Divisible.from_dict,
    describe=describe,
    sample_view=sample_view,
    master_worker=True,
    replay=Replay(deferred("dlbkit.families.divisible.face.replay", "replay_loop"), recorded_by="loop (dlbkit.map, run_map, Loop, dlbkit run)", noun="loop",
                  options=("model", "latency", "overhead")),
    advise=deferred("dlbkit.families.divisible.face.advise", "advise"),
))
