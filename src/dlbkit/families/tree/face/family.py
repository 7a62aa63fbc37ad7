"""The task-tree family: divide and conquer, branch and bound; tasks that spawn tasks (001)."""

from __future__ import annotations

import dataclasses
from typing import Mapping

from dlbkit.errors import ConfigError
from dlbkit.model import check
from dlbkit.model.metrics import compute
from dlbkit.model.platform import Platform
from dlbkit.families.tree.model.workload import FlatTasks, TaskTree, tree_from_dict
from dlbkit.families.tree.model.view import TreeView
from dlbkit.families.tree.sim.engine import CONTROL_BYTES, TreeOptions, simulate_tree_async
import dlbkit.families.tree.balancers  # noqa: F401  (registers the family's balancers)
from dlbkit.families.registry import GANTT_CAPTION, Engine, Family, Replay, deferred, register
from dlbkit.runtime.record import Recording

__all__ = ["FAMILY", "describe"]


def describe(w) -> str:
    if isinstance(w, FlatTasks):
        return f"{len(w.costs):,} independent tasks"
    text = (f"{w.kind} task tree: depth {w.depth}, fan-out {w.fanout}, grain {w.grain:g} work units per "
            f"node, {'depth' if w.order == 'df' else 'breadth'}-first local order")
    if w.kind == "imbalance":
        text += f", imbalance m = {w.imbalance:g}"
    if w.kind != "balanced":
        text += f", seed {w.seed}"
    expected = w.expected_nodes()
    if expected > 2e6:  # do not expand a huge tree just to print its size
        return text + f" (≈ {expected:,.0f} nodes expected)"
    return text + f" ({w.count()[0]:,} nodes)"


def per_repetition(w, table: Mapping, seed: int):
    """A tree without a seed of its own is drawn anew in every repetition, from the repetition's
    seed, the same for every balancer (common random numbers)."""
    if isinstance(w, TaskTree) and "seed" not in table:
        return dataclasses.replace(w, seed=seed)
    return w


def check_balancer(platform: Platform, balancer, path: str, workload=None, options: Mapping | None = None) -> None:
    """A migration rule's own checks against the node count and the engine's ``start_node`` (default
    0): ``ldsv``'s ``server`` below the node count and not the root's node, two nodes at least), so an
    experiment file refuses them before any run."""
    options = options or {}
    with check.within(path):
        balancer.check_nodes(platform.n_nodes, options.get("start_node", 0))
    # the engine's own refusal (the tree engine's check_network, sim/_options.py), on the unstarted rule as the engine reads it
    if (platform.n_nodes > 1 and (balancer.receiver_initiated or balancer.periodic)
            and platform.network.latency == 0 and options.get("control_bytes", CONTROL_BYTES) == 0):
        raise ConfigError("platform.network.latency", 0.0, f"> 0 (or engine.control_bytes > 0) for {balancer.name}, "
                          "which asks or orders: messages that take no time would poll forever at one instant")


def sample_view() -> TreeView:
    """4 nodes, nothing measured yet."""
    return TreeView(4)


FAMILY = register(Family(
    name="tree",
    summary="a task tree expanded in parallel: tasks spawn children, waiting tasks migrate",
    source="001 (Haron 1998)",
    workloads=(TaskTree, FlatTasks),
    view=TreeView,
    kind="migration",
    engines=(Engine("async", "event-driven: nodes ask each other for work with messages that take time",
                    "dlbkit.families.tree.sim.engine.simulate_tree_async", simulate_tree_async, TreeOptions),
             Engine("superstep", "bulk-synchronous iterations under the Cray T3D cost model of 001 §4 "
                    "(its own cost model, not a Platform: call it directly)",
                    "dlbkit.families.tree.sim.superstep.simulate_superstep", None, on_platform=False)),
    run=deferred("dlbkit.families.tree.face.run", "tree"),
    runtime="dlbkit.tree",
    metrics=compute,
    metric_names=("makespan", "lower_bound", "efficiency", "imbalance", "idle_share", "chunks", "messages",
                  "bytes", "tasks_moved", "info_messages", "info_bytes", "info_age_mean"),
    metric_text={"makespan": "time the last task ended (s)",
                 "imbalance": "max / mean of the nodes' finish times (each node's last task)",
                 "idle_share": "share of node time not running tasks, up to the makespan",
                 "chunks": "busy stretches: tasks a node ran back to back between idle times",
                 "messages": "balancing messages sent: requests, replies, pushed tasks and orders",
                 "bytes": "bytes of the balancing messages: a control header each plus the tasks carried"},
    # efficiency + idle_share = 1 here (the fluid bound is the work over the capacity): idle_share late
    table_metrics=("makespan", "efficiency", "imbalance", "tasks_moved", "messages", "info_bytes", "info_age_mean",
                   "bytes", "chunks", "idle_share", "info_messages", "lower_bound"),
    figures=deferred("dlbkit.families.tree.face.plots", "figures"),
    plots={"tasks": deferred("dlbkit.families.tree.face.plots", "tasks_over_time")},
    figure_kinds=("gantt", "work", "tasks"),
    figure_captions={"gantt": GANTT_CAPTION,
                     "work": ("work over time", "Below it, tasks completed per worker over time."),
                     "tasks": ("waiting tasks", "Task trees: waiting tasks per node over time, and the total n(t) with "
                               "the three workload phases of Haron 1998 §2.7 (filling until n(t) first reaches p, "
                               "emptying after it last falls below p); dashed: phase changes a phase-adaptive "
                               "balancer detected while running.")},
    bar_metrics=("makespan", "efficiency", "info_bytes"),
    parse=tree_from_dict,
    describe=describe,
    per_repetition=per_repetition,
    check_balancer=check_balancer,
    sample_view=sample_view,
    progress_unit="tasks",
    recording=Recording(legacy_mechanisms=("tree", "tree-async")),  # the real run's, the simulator's
    replay=Replay(deferred("dlbkit.families.tree.face.replay", "replay_tree"),
                  recorded_by="a task tree (dlbkit.tree, run_tree)", noun="task-tree",
                  report=deferred("dlbkit.families.tree.face.replay", "report"), options=("latency",)),
))
