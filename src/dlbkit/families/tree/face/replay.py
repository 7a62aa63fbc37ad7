"""Replay a recorded real task-tree run (``dlbkit.run_tree(...)``, ``TreeResult.save(path)``) in the task-tree
family's asynchronous engine, with the balancer it used or any other migration rule (the family's
``Family.replay``: :func:`replay_tree`, and ``dlbkit replay``'s table, :func:`report`).

What a real tree run records (``trace.meta["task_tree"]``, :func:`dlbkit.run_tree`): every task it expanded, on
which worker, its measured cost (seconds of the user's ``expand`` on the recording machine, before emulation's
stretch) and its number of children; the ids that travelled with the tasks say which task created which. Its
chunk rows are the workers' busy stretches (tasks expanded back to back), with when the worker ran dry before
each.

The replay model:

* **Workload**: the recorded tree itself (:class:`~dlbkit.families.tree.model.workload.RecordedTree`): the same
  tasks with their measured costs and the same parent → children shape, the root on worker 0 as in the run.
  Which tasks exist does not depend on the balancer, so every balancer replays the same tree (with branch and
  bound a task pruned in the run stays pruned: the recorded tree is the one that was expanded).
* **Platform**: one node per worker. Its **speed** is measured, as a loop's (``model="measured"`` of
  :mod:`dlbkit.families.divisible.face.replay`): the emulated speed factor times the ratio of the time its busy
  stretches should have taken (their tasks' costs at that speed under the recorded availability) to the time
  they took, which folds in what the per-task timers miss (the check points' reports and mail between two
  tasks, answering steals, the emulation's oversleep). The recorded availability is kept.
* **Network**: a worker that ran dry waited ``t_start - t_ask`` for its next stretch: a request through the
  coordinator to a victim, which reads it at its next check point (every
  :data:`~dlbkit.families.tree.runtime.worker.CHECK_S`), and the answer back. The median of these waits (every
  stretch but a worker's first) is one steal's round trip; half of it is the replay's latency (``latency=``
  overrides it), on a network with no byte cost (the pipes' bytes are not measured). Empty answers back off as
  the runtime's coordinator does (:data:`~dlbkit.families.tree.runtime.coordinator.STEAL_BACKOFF_S`); the
  recorded topology and information model are kept.

Why this model, and what it misses: the simulator answers a request the moment it arrives, the runtime at the
victim's next check point, and the runtime's messages all pass the coordinator (two hops) where the simulator's
travel one; the latency estimate folds both into one number, right on average and not per message. Replaying a
run with equal task costs on equal speeds gives back its makespan within the stretches' startup and the
steals' spread (tests/families/tree/face/test_replay.py states the tolerance). Not replayed: the time to start
the workers (the replay starts them at 0) and faults.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from dlbkit.balancers.base import Balancer
from dlbkit.errors import ConfigError
from dlbkit.families.replay import (ReplayReport, ReplayResult, check_seconds, makespan_report, measured_speed,
                                    pieces, recorded_balancer, speeds_text)
from dlbkit.families.tree.model.workload import RecordedTree
from dlbkit.model.availability import Recorded
from dlbkit.model.platform import Network, Node, Platform
from dlbkit.model.trace import Trace

__all__ = ["recorded_tree", "estimate", "replay_tree", "steal_latency", "report"]

#: the replay network's bandwidth (bytes/s): the runtime's messages cross pipes whose bytes are not measured
_BANDWIDTH = 1e12


def recorded_tree(trace: Trace) -> tuple[RecordedTree, list[list[float]]]:
    """The recorded tree of a real tree run, and each worker's measured task costs in the order it expanded
    them; a ConfigError naming the field for a recording without them (a simulated run, or one recorded
    before tree runs kept their tasks)."""
    d = trace.meta.get("task_tree")
    if not isinstance(d, Mapping) or not all(isinstance(d.get(k), list) for k in ("worker", "id", "cost", "children")):
        raise ConfigError("trace meta.task_tree", "<missing>", "the tasks of a real tree run (dlbkit.tree and run_tree "
                          "record them; a simulated run, or one recorded by an older dlbkit, cannot be replayed)")
    P = trace.n_nodes
    workers, ids, costs, counts = d["worker"], d["id"], d["cost"], d["children"]
    if not (len(workers) == len(ids) == len(costs) == len(counts)) or not ids:
        raise ConfigError("trace meta.task_tree", f"{len(ids)} tasks", "columns worker, id, cost, children of one "
                          "length, at least the root")
    index = {int(t): k for k, t in enumerate(ids)}
    created = [0] * P  # tasks each worker has created so far: its k-th child's id is 1 + w + P·k
    kids: list[list[int]] = []
    per_worker: list[list[float]] = [[] for _ in range(P)]
    for w, n, c in zip(workers, counts, costs):
        w, n = int(w), int(n)
        try:
            kids.append([index[1 + w + P * k] for k in range(created[w], created[w] + n)])
        except KeyError as e:
            raise ConfigError("trace meta.task_tree.id", f"task {e.args[0]} missing", "every task created, expanded "
                              "(a complete run)") from None
        created[w] += n
        per_worker[w].append(float(c))
    if 0 not in index:
        raise ConfigError("trace meta.task_tree.id", "no root", "the root's id 0 among the tasks")
    root = index[0]
    if root != 0:  # the workload's root is task 0: swap the root to the front
        order = [root] + [k for k in range(len(ids)) if k != root]
        pos = {k: j for j, k in enumerate(order)}
        kids = [[pos[c] for c in kids[k]] for k in order]
        costs = [costs[k] for k in order]
    return RecordedTree(costs, kids), per_worker


def steal_latency(trace: Trace) -> float:
    """Half the median wait of a worker that ran dry for its next busy stretch (every stretch but its first):
    one steal's round trip through the coordinator, halved (0 if no worker ever waited)."""
    by_worker: dict[int, list[int]] = {}
    for k in sorted(range(trace.n_intervals), key=trace.t_start.__getitem__):
        by_worker.setdefault(int(trace.node[k]), []).append(k)
    waits = [trace.t_start[k] - trace.t_ask[k] for rows in by_worker.values() for k in rows[1:]]
    return float(np.median(waits)) / 2 if waits else 0.0


def _speeds(trace: Trace, per_worker: list[list[float]], until: float) -> tuple[list[float], list[Recorded]]:
    """Each worker's measured speed (module docstring) and recorded availability."""
    P = trace.n_nodes
    cum = [np.concatenate(([0.0], np.cumsum(c))) for c in per_worker]
    rows_of: list[list[int]] = [[] for _ in range(P)]
    for k in range(trace.n_intervals):
        rows_of[int(trace.node[k])].append(k)
    speeds, avail = [], []
    for w in range(P):
        a = pieces(trace.availability[w], until) if trace.availability else Recorded((0.0,), (1.0,))
        s = float(trace.speeds[w]) if trace.speeds else 1.0
        runs = ((float(cum[w][trace.first[k] + trace.count[k]] - cum[w][trace.first[k]]), trace.t_start[k],
                 trace.t_end[k]) for k in rows_of[w] if trace.first[k] + trace.count[k] < len(cum[w]))
        speeds.append(float(measured_speed(s, a, runs)))
        avail.append(a)
    return speeds, avail


def _topology(recorded: Any) -> Any:
    """The recorded topology as the platform's network takes it (a graph's edges as a networkx graph)."""
    if isinstance(recorded, Mapping) and recorded.get("kind") == "edges":
        import networkx as nx

        g = nx.Graph()
        g.add_edges_from(tuple(e) for e in recorded.get("edges", []))
        return g
    return recorded or "complete"


def estimate(trace: Trace, latency: float | None = None) -> tuple[RecordedTree, dict]:
    """The replay model of a recorded real tree run: its tree, and as data its measured speeds (and the nominal
    ones), availabilities, one-way latency (*latency*, else :func:`steal_latency`) and the steals' back-off."""
    from dlbkit.families.tree.runtime.coordinator import STEAL_BACKOFF_S

    tree, per_worker = recorded_tree(trace)
    if latency is None:
        latency = steal_latency(trace)
    else:
        check_seconds("latency", latency)
    until = max([float(trace.end_time)] + [float(t) for t in trace.t_end])
    speeds, avail = _speeds(trace, per_worker, until)
    return tree, {"model": "measured", "speeds": speeds, "nominal_speeds": [float(s) for s in trace.speeds],
                  "availability": avail, "latency": float(latency), "backoff": list(STEAL_BACKOFF_S),
                  "tasks": len(tree.costs)}


def replay_tree(trace: Trace, balancer: Balancer | str | None = None, params: Mapping[str, Any] | None = None,
                seed: int | None = None, *, latency: float | None = None) -> ReplayResult:
    """A recorded real tree run in the asynchronous tree engine under *balancer* (default: the one it used, a
    migration rule); see the module docstring. *latency* overrides the estimated one-way latency (seconds)."""
    from dlbkit.families.tree.sim.engine import simulate_tree_async

    tree, model = estimate(trace, latency)
    nodes = [Node(f"w{w}", speed=s, availability=a) for w, (s, a) in enumerate(zip(model["speeds"],
                                                                                 model["availability"]))]
    platform = Platform(nodes, Network(latency=model["latency"], bandwidth=_BANDWIDTH,
                                       topology=_topology(trace.meta.get("topology"))), name="replay")
    if seed is None:
        seed = trace.seed if trace.seed is not None else 0
    b = recorded_balancer(trace, balancer, params)
    info = trace.meta.get("info")
    info = {k: v for k, v in info.items() if k != "rounds"} if isinstance(info, Mapping) else None
    tr = simulate_tree_async(platform, tree, b, seed=seed, info=info, backoff=model["backoff"])
    tr.source = "replay"
    kept = {k: v for k, v in model.items() if k != "availability"}
    tr.meta.update(replay_of=trace.balancer, replay_model=kept, balancer_params=b.get_params())
    return ReplayResult(tr, b, platform=platform, recorded=trace, model=kept)


def report(trace: Trace, named, *, seed: int | None, source: str, label) -> ReplayReport:
    """``dlbkit replay`` of a task tree (the family's ``Replay.report``): the makespan table, under the line of
    the replay model (measured speeds, the steals' latency)."""
    tree, model = estimate(trace)
    model = {k: v for k, v in model.items() if k != "availability"}
    line = (f"model: measured speeds {speeds_text(model['speeds'])}; latency {model['latency'] * 1e3:.3g} ms "
            "(half a steal's round trip)")
    return makespan_report(trace, named, replay_tree, seed=seed, source=source, label=label, model=model,
                           model_line=line, count=len(tree.costs), unit="tasks")
