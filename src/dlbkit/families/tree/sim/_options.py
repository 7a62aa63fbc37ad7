"""The arguments of :func:`~dlbkit.families.tree.sim.engine.simulate_tree_async` checked, and its back-off resolved.

Each check raises the :exc:`~dlbkit.errors.ConfigError` naming the field; the engine calls them in the
order of its signature's meaning (the rule, the workload, the platform, the sizes, the time base, the
network, the roots, the back-off), so a call with several bad arguments names the same one first.
"""

from __future__ import annotations

import math
from numbers import Integral
from typing import Any, Sequence

from dlbkit.families.tree.balancers.base import MigrationBalancer
from dlbkit.errors import ConfigError
from dlbkit.families.tree.model.backoff import AUTO, NO_BACKOFF, check_backoff
from dlbkit.model.platform import Platform
from dlbkit.sim.costs import message_time

__all__ = ["AUTO_LONGEST_TASKS", "check_arguments", "check_network", "root_places", "resolve_backoff"]

#: ``backoff="auto"``: the longest back-off is this many times the mean task's run time (the mean cost
#: of the root tasks at the platform's mean speed). Why a task time, not a latency: an idle node then
#: sends a bounded number of requests per task time it waits, whatever the ratio of task time to
#: latency (10^6 in a tree of grain 1000 at speed 1 with 0.2 ms latency: about 16 requests per idle node
#: per task time); and it notices new work at most a sixteenth of a task (plus a round trip) later
#: than a node that polls every round trip. Measured: on haron_torus64 (tasks of 20 latencies) a
#: quarter of a task cost steal 3 points of efficiency (0.884 -> 0.854), a sixteenth 0.4 points.
AUTO_LONGEST_TASKS = 0.0625


def check_arguments(platform: Platform, workload: Any, balancer: Any) -> str:
    """Check the rule (a migration balancer), the workload (a task tree with an order) and the nodes (one
    core each; the message sizes and the time base are options, checked with them:
    :class:`~dlbkit.families.tree.sim.options.TreeOptions`); return the workload's order ("df" or "bf")."""
    if not isinstance(balancer, MigrationBalancer):
        raise ConfigError("balancer", getattr(balancer, "name", balancer),
                          "a migration balancer for a task-tree workload")
    for attr in ("roots", "children", "cost", "estimate"):
        if not callable(getattr(workload, attr, None)):
            raise ConfigError("workload", type(workload).__name__,
                              "a task tree (TaskTree, FlatTasks, or roots/children/cost/estimate methods)")
    order = getattr(workload, "order", "df")
    if order not in ("df", "bf"):
        raise ConfigError("workload.order", order, "'df' or 'bf'")
    for i, n in enumerate(platform.nodes):
        if n.cores != 1:
            raise ConfigError(f"nodes[{i}].cores", n.cores,
                              "1 in the asynchronous tree engine (one worker per node: give each core a node)")
    return order


def check_network(platform: Platform, balancer: MigrationBalancer, control_bytes: float) -> None:
    """Refuse a disconnected topology, and messages that take no time with a rule that asks or orders."""
    P = platform.n_nodes
    if not (P <= 1 or platform.complete):
        import networkx as nx

        if not nx.is_connected(platform.graph):
            raise ConfigError("network.topology", "a disconnected graph", "a connected graph")
    polls = balancer.receiver_initiated or balancer.periodic
    if P > 1 and polls and platform.network.latency == 0 and control_bytes == 0:
        raise ConfigError("network.latency", 0.0, "> 0 (or control_bytes > 0) for a balancer that asks or "
                          "orders: messages that take no time would poll forever at one instant")


def root_places(roots: list, start_node: Any, P: int) -> list[int]:
    """The node of each root: *start_node* one node for all of them, or one node per root."""
    if not roots:
        raise ConfigError("workload.roots()", roots, "at least one task")
    if isinstance(start_node, Integral) and not isinstance(start_node, bool):
        places = [int(start_node)] * len(roots)
    else:
        try:
            places = [int(x) for x in start_node]
        except (TypeError, ValueError):
            raise ConfigError("start_node", start_node, "a node index or one node index per root") from None
        if len(places) != len(roots):
            raise ConfigError("start_node", f"{len(places)} nodes", f"one node per root ({len(roots)})")
    for x in places:
        if not 0 <= x < P:
            raise ConfigError("start_node", x, f"a node index in [0, {P - 1}]")
    return places


def resolve_backoff(backoff: Any, platform: Platform, workload: Any, roots: Sequence,
                    control_bytes: float) -> tuple[float, float]:
    """The (first, longest) back-off in seconds of a run: *backoff* checked by
    :func:`~dlbkit.families.tree.model.backoff.check_backoff`; ``"auto"`` is first = one request round trip (two
    control messages over one hop: M2's polling period) and longest = :data:`AUTO_LONGEST_TASKS` mean
    task times (the mean cost of the first 1024 roots at the platform's mean speed), at least first.
    (0, 0) without messages that take time (one node, or latency and control bytes 0)."""
    backoff = check_backoff(backoff, "backoff")
    if backoff != AUTO:
        return backoff
    net = platform.network
    first = 2 * message_time(1, control_bytes, net.latency, net.bandwidth)
    if platform.n_nodes < 2 or not first > 0:
        return NO_BACKOFF
    costs = [float(workload.cost(r)) for r in roots[:1024]]
    speed = sum(float(n.speed) for n in platform.nodes) / platform.n_nodes
    task = sum(costs) / len(costs) / speed if speed > 0 else 0.0
    longest = AUTO_LONGEST_TASKS * task if math.isfinite(task) else first
    return first, max(first, longest)
