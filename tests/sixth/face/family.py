"""The bags family's declaration: the one registration line (``FAMILY = register(Family(...))``) that
makes ``dlbkit.simulate``, experiment files, the report and ``dlbkit families`` serve it."""

from __future__ import annotations

import sixth.balancers  # noqa: F401  (registers the family's balancers)
from sixth.face.plots import CAPTIONS, LEGEND, figures
from sixth.model.metrics import OWN_METRICS, metrics
from sixth.model.view import BagView
from sixth.model.workload import Bag
from sixth.sim.engine import BagsOptions, simulate_bags

from dlbkit.families import Engine, Family, register
from dlbkit.families.registry import deferred

__all__ = ["FAMILY", "describe", "sample_view"]


def describe(w: Bag) -> str:
    jitter = f", actual work within ±{w.jitter:.0%} of each size" if w.jitter else ""
    return f"a bag of {w.n_tasks} tasks of {sum(w.sizes):g} work units in all (largest {max(w.sizes):g}){jitter}"


def sample_view() -> BagView:
    """A task of size 2 to place on 3 nodes of speeds 1, 2, 3 holding loads 1, 0, 4."""
    return BagView(3, [1.0, 2.0, 3.0], loads=[1.0, 0.0, 4.0], tasks=[1, 0, 2], next_size=2.0, remaining=4)


FAMILY = register(Family(
    name="bags",
    summary="a bag of independent tasks of known sizes, each placed on a node by one dispatcher (test-only)",
    source="tests/sixth: the family that proves the house",
    workloads=(Bag,),
    view=BagView,
    kind="bagging",
    engines=(Engine("dispatch", "discrete-event dispatcher and per-node FIFO queues, on the core kernel",
                    "sixth.sim.engine.simulate_bags", simulate_bags, BagsOptions),),
    runtime="sixth.face.run.bags, sixth.face.run.run_bags",
    run=deferred("sixth.face.run", "bags"),
    metrics=metrics,
    metric_names=("makespan", "lower_bound", "efficiency", "imbalance", "idle_share", "messages", "finish_spread"),
    metric_text={"makespan": "time the last task ended (s)", "messages": "tasks sent to the nodes (one each)"},
    table_metrics=("makespan", "efficiency", "finish_spread", "imbalance"),
    figures=figures,
    figure_kinds=("gantt", "stack"),
    figure_captions=CAPTIONS,
    bar_metrics=("makespan", "finish_spread"),
    parse=Bag.from_dict,
    describe=describe,
    sample_view=sample_view,
    gantt_legend=LEGEND,
    progress_unit="tasks",
    own_metrics=OWN_METRICS,
))
