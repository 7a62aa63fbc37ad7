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
* **Network**: a steal is a request through the coordinator to a victim and the answer back. A busy victim
  reads its requests only at its check points (the first task end past every
  :data:`~dlbkit.families.tree.runtime.worker.CHECK_S`), and a request waits at the coordinator for the Mail
  that replies to the victim's next check point's Report, read at the check point after: the victim's
  **answer delay** (:func:`answer_delay`, per worker from its recorded stretches: its check points rebuilt
  from its tasks' measured costs and its stretches' measured times) is most of a steal's time, where the
  simulator's victim answers when the request arrives. The **relay** (both ways through the coordinator) is
  the shortest recorded wait for a next stretch (at most: that wait had its own victim's delay in it, about
  3 ms under random stealing, where a rule that pushes tasks to a reading worker records 0.01-0.02 ms). The replay's one-way latency is half of relay + the mean
  answer delay over the workers (a random victim; ``latency=`` overrides it), on a network with no byte cost
  (the pipes' bytes are not measured). Empty answers back off as the runtime's coordinator does
  (:data:`~dlbkit.families.tree.runtime.coordinator.STEAL_BACKOFF_S`) in the simulator too, so the recorded
  waits (which count those back-offs) are not the latency (their median halved was, before: 7 ms for a
  steal whose round trip is about 5). The recorded topology and information model are kept.
* **Startup**: the replay's root starts when the recorded one did (worker 0's first stretch), its times
  shifted by it, so replay/real compares like with like.

What it misses: the answer delay is one mean, where a slow victim's is longer than a fast one's (15 against
5 ms on speeds 1, 1, 0.5, 0.25 with 1-4 ms tasks); the runtime's load information is as old as the last check
point's Report, the simulator's (exact information) is the truth, so a rule that reads loads (RID) diffuses
sooner in the replay; the workers other than 0 start together with the root, where the real ones started up to
tens of ms later on a loaded machine; faults. A random rule's replay is one draw of the simulator's random
choices and the real run another (tests/families/tree/face/test_replay.py states the tolerances).
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from dlbkit.balancers.base import Balancer
from dlbkit.errors import ConfigError
from dlbkit.families.replay import (ReplayReport, ReplayResult, check_no_death, check_seconds, earlier, makespan_report,
                                    measured_speed, pieces, recorded_balancer, shift, speeds_text)
from dlbkit.families.tree.model.workload import RecordedTree
from dlbkit.model.availability import Recorded
from dlbkit.model.platform import Network, Node, Platform
from dlbkit.model.trace import Trace

__all__ = ["recorded_tree", "estimate", "replay_tree", "steal_latency", "answer_delay", "report"]

#: the replay network's bandwidth (bytes/s): the runtime's messages cross pipes whose bytes are not measured
_BANDWIDTH = 1e12


def recorded_tree(trace: Trace) -> tuple[RecordedTree, list[list[float]]]:
    """The recorded tree of a real tree run, and each worker's measured task costs in the order it expanded
    them; a ConfigError naming the field for a recording without them (a simulated run, or one recorded
    before tree runs kept their tasks)."""
    check_no_death(trace, "a dead worker's tasks were expanded again by another, so the recorded tree is not "
                          "one tree")
    if (trace.meta.get("journal") or {}).get("resumed"):
        raise ConfigError("trace meta.journal.resumed", True, "false (a run that began at the root: a resumed "
                          "run's tree begins at its journal's frontier)")
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
    one steal's round trip through the coordinator, halved (0 if no worker ever waited). The estimate before
    :func:`answer_delay` (kept for comparison): a wait counts every empty answer and its back-off, which the
    replay's engine adds again."""
    waits = _waits(trace)
    return float(np.median(waits)) / 2 if waits else 0.0


def _waits(trace: Trace) -> list[float]:
    by_worker: dict[int, list[int]] = {}
    for k in sorted(range(trace.n_intervals), key=trace.t_start.__getitem__):
        by_worker.setdefault(int(trace.node[k]), []).append(k)
    return [trace.t_start[k] - trace.t_ask[k] for rows in by_worker.values() for k in rows[1:]]


def answer_delay(trace: Trace, per_worker: list[list[float]], check_s: float) -> list[float]:
    """Per worker, the mean time a steal request that reaches the coordinator while it is busy waits for its
    answer: the coordinator hands the request over with the Mail that replies to the worker's next check
    point's Report, which the worker reads at the check point after (:mod:`dlbkit.families.tree.runtime.worker`:
    a check point is the end of the first task past every *check_s*; the end of a stretch reads the pending
    Mail and then answers at once). The check points are rebuilt from the recording: each stretch's tasks
    fill its measured time in proportion to their measured costs. A request arriving at a uniformly random
    moment of the worker's busy time, between check points p_j and p_j+1, is answered at p_j+2 (the stretch's
    end at the latest); the mean is Σ (L_j²/2 + L_j·(p_j+2 − p_j+1)) / Σ L_j over its stretches (0 for a worker
    that was never busy)."""
    P = trace.n_nodes
    cum = [np.concatenate(([0.0], np.cumsum(c))) for c in per_worker]
    num, den = [0.0] * P, [0.0] * P
    for k in range(trace.n_intervals):
        w, first, count = int(trace.node[k]), int(trace.first[k]), int(trace.count[k])
        t0, t1 = float(trace.t_start[k]), float(trace.t_end[k])
        if count <= 0 or t1 <= t0 or first + count >= len(cum[w]):
            continue
        costs = np.asarray(per_worker[w][first:first + count])
        total = float(costs.sum())
        ends = t0 + (np.cumsum(costs) / total * (t1 - t0) if total > 0 else np.linspace(t1 - t0, t1 - t0, count))
        points, nxt = [t0], t0 + check_s
        for e in ends[:-1]:
            if e >= nxt:
                points.append(float(e))
                nxt = e + check_s
        points.append(t1)
        for j in range(len(points) - 1):
            L = points[j + 1] - points[j]
            answer = points[j + 2] if j + 2 < len(points) else t1
            num[w] += L * L / 2 + L * (answer - points[j + 1])
            den[w] += L
    return [n / d if d > 0 else 0.0 for n, d in zip(num, den)]


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
    ones), availabilities, ``relay`` and per worker ``answer_delay`` (s), the one-way ``latency`` (*latency*,
    else half of relay + the mean answer delay), ``startup`` (the root's start) and the steals' back-off."""
    from dlbkit.families.tree.runtime.coordinator import STEAL_BACKOFF_S

    tree, per_worker = recorded_tree(trace)
    from dlbkit.families.tree.runtime.worker import CHECK_S

    delays = answer_delay(trace, per_worker, float(trace.meta.get("check_s", CHECK_S)))
    waits = _waits(trace)
    relay = max(0.0, float(min(waits))) if waits else 0.0
    if latency is None:
        latency = (relay + float(np.mean(delays))) / 2
    else:
        check_seconds("latency", latency)
    until = max([float(trace.end_time)] + [float(t) for t in trace.t_end])
    speeds, avail = _speeds(trace, per_worker, until)
    root = [k for k in range(trace.n_intervals) if int(trace.node[k]) == 0 and int(trace.first[k]) == 0]
    startup = float(trace.t_start[root[0]]) if root else 0.0
    return tree, {"model": "measured", "speeds": speeds, "nominal_speeds": [float(s) for s in trace.speeds],
                  "availability": avail, "latency": float(latency), "relay": relay, "answer_delay": delays,
                  "startup": startup, "backoff": list(STEAL_BACKOFF_S), "tasks": len(tree.costs)}


def replay_tree(trace: Trace, balancer: Balancer | str | None = None, params: Mapping[str, Any] | None = None,
                seed: int | None = None, *, latency: float | None = None) -> ReplayResult:
    """A recorded real tree run in the asynchronous tree engine under *balancer* (default: the one it used, a
    migration rule); see the module docstring. *latency* overrides the estimated one-way latency (seconds)."""
    from dlbkit.families.tree.sim.engine import simulate_tree_async

    tree, model = estimate(trace, latency)
    # the availability as the replay meets it: simulated from 0, then shifted by the startup
    nodes = [Node(f"w{w}", speed=s, availability=earlier(a, model["startup"]))
             for w, (s, a) in enumerate(zip(model["speeds"], model["availability"]))]
    platform = Platform(nodes, Network(latency=model["latency"], bandwidth=_BANDWIDTH,
                                       topology=_topology(trace.meta.get("topology"))), name="replay")
    if seed is None:
        seed = trace.seed if trace.seed is not None else 0
    b = recorded_balancer(trace, balancer, params)
    info = trace.meta.get("info")
    info = {k: v for k, v in info.items() if k != "rounds"} if isinstance(info, Mapping) else None
    tr = simulate_tree_async(platform, tree, b, seed=seed, info=info, backoff=model["backoff"])
    shift(tr, model["startup"])  # the replay's root starts when the recorded run's did
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
            f"(half a steal's round trip: relay {model['relay'] * 1e3:.3g} ms + victim's answer delay); startup "
            f"{model['startup'] * 1e3:.3g} ms")
    return makespan_report(trace, named, replay_tree, seed=seed, source=source, label=label, model=model,
                           model_line=line, count=len(tree.costs), unit="tasks")
