"""The divisible family: a loop of independent items handed out in chunks (004, loop self-scheduling)."""

from __future__ import annotations

from dlbkit.families.divisible.model.metrics import OWN_METRICS, metrics
from dlbkit.families.divisible.model.view import LoopView
from dlbkit.families.divisible.model.workload import Divisible
from dlbkit.families.divisible.sim.engine import DivisibleOptions, simulate_divisible
import dlbkit.families.divisible.balancers  # noqa: F401  (registers the family's balancers)
from dlbkit.families.registry import GANTT_CAPTION, Engine, Family, Replay, deferred, register
from dlbkit.runtime.record import Recording

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
    metrics=metrics,
    own_metrics=OWN_METRICS,
    own_metrics_after="bytes",  # where rounds_to_balance has always been among results.csv's columns
    metric_names=("makespan", "lower_bound", "efficiency", "imbalance", "idle_share", "chunks", "messages",
                  "bytes", "rounds_to_balance"),
    metric_text={"makespan": "time of the last chunk's completion (s)",
                 "imbalance": "max / mean of the workers' finish times",
                 "idle_share": "share of worker time not computing, up to the makespan",
                 "chunks": "chunks handed out (scheduling decisions)",
                 "messages": "balancing messages: requests, replies and STOPs",
                 "bytes": "bytes moved with the chunks' items and results"},
    figures=deferred("dlbkit.families.divisible.face.plots", "figures"),
    figure_kinds=("gantt", "work", "auto"),
    figure_captions={"gantt": GANTT_CAPTION,
                     "work": ("work over time", "Below it, items completed per worker over time."),
                     "auto": ("auto choices", 'Time steps under `balancer = "auto"` (repetition 0, its seed in the title): '
                              "per step the measured makespan, coloured by the rule auto ran, the prediction for that "
                              "rule made at the last evaluation (×), and the evaluations (dotted, labelled with the "
                              "rule chosen for the next step).")},
    bar_metrics=("makespan", "efficiency"),
    parse=Divisible.from_dict,
    describe=describe,
    sample_view=sample_view,
    master_worker=True,
    replay=Replay(deferred("dlbkit.families.divisible.face.replay", "replay_loop"),
                  recorded_by="a loop (dlbkit.map, run_map, Loop, dlbkit run)", noun="loop",
                  report=deferred("dlbkit.families.divisible.face.replay", "report"),
                  options=("model", "latency", "overhead"), cli_flags=("model",)),
    advise=deferred("dlbkit.families.divisible.face.advise", "advise"),
    # dlbkit recorded only loops before recordings named their family
    recording=Recording(legacy_default=True),
))
