"""The mapping and graph-online kinds: the bases of the task-graph family's balancers (a static plan; tasks placed during the run)."""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass
from typing import ClassVar

from dlbkit.balancers.base import Balancer

__all__ = ["Plan", "MappingBalancer", "OnlineMapping"]


@dataclass(frozen=True)
class Plan:
    """A static mapping of a task graph: ``assignment[i]`` is task i's processor; ``order`` a global
    sequence of all tasks that is a topological order (each processor runs its tasks in that
    sequence), or None for the evaluator's list rule (highest priority first among the ready tasks,
    002 App. A.2). ``info`` carries what the balancer wants reported (its own estimate, a gap)."""

    assignment: tuple
    order: tuple | None = None
    info: dict | None = None


class MappingBalancer(Balancer):
    """Decides where every task of a task graph runs, and optionally in which order (static mapping).

    One required method, :meth:`map`: from a :class:`~dlbkit.families.graph.model.view.GraphView` (the graph, the
    execution time of every task on every processor, the transfer formula) return a :class:`Plan`.
    The balancer decides; the engine times the plan (:func:`dlbkit.families.graph.sim.static.evaluate`, one evaluator
    for every mapper) and :func:`dlbkit.families.graph.balancers.decide.plan` checks it first. Randomised mappers
    draw only from ``self.rng_`` (the engine's Generator, passed to :meth:`start`).
    """

    kind = "mapping"
    kind_use = "it plans before the run: dlbkit.graph, dlbkit schedule, a task graph's static engine"

    def check_graph(self, n_tasks: int, n_processors: int) -> None:
        """Raise ConfigError if the mapper cannot place *n_tasks* tasks on *n_processors* processors
        (max-k1-sum's *capacity* slots per processor): called by an experiment file's loader before
        any run (default: any sizes)."""

    @abstractmethod
    def map(self, view) -> Plan:
        """The plan for the graph in *view*."""


class OnlineMapping(Balancer):
    """Decides where a task of a task graph runs when it becomes placeable, during the run (an online
    mapper; 002 §5's Pseudo-Dynamic load balancing is one).

    Kind ``"graph-online"``: the task-graph family's ``dynamic`` engine runs it (the ``static`` engine,
    which times one plan, does not: ``Engine.kinds``). One required method, :meth:`place`: from a
    :class:`~dlbkit.families.graph.model.view.GraphOnlineView` (the graph and its costs, the time, where the placed
    tasks are, the tasks that may be placed now, each node's load level, the tasks ready or running)
    return ``[(task, node), ...]``, the tasks to place now (a subset of ``view.candidates``; an empty
    list waits for the next event). :func:`dlbkit.families.graph.balancers.decide.online_place` checks the answer.
    ``view.candidates`` is the table's live :class:`~dlbkit.families.graph.model.view.Candidates` (a sequence in table
    order: ``in``, ``len`` and iteration without a pass; indexing as a list's), and the view keeps sums
    a mapper would otherwise recount per decision (``active_load``, ``candidate_load``,
    ``gst_min_priority``), all kept by :class:`~dlbkit.families.graph.model.gst.Table` in both engines.

    Declared surface the engine reads besides :meth:`place`: ``preemptive`` (bool: the node's local
    scheduler lets a ready task of higher priority preempt a computing one, 002 §5.3 rule 2), and
    ``local_order``: ``"priority"`` (the default, 002 §5.3 rule 1: a node runs its ready task of
    highest priority) or ``"plan"``: :meth:`place` returns ``(task, node, key)`` triples and each node
    runs its placed tasks in increasing key, waiting for the next one's inputs even when a later one
    is ready (non-work-conserving, as a replayed static plan); the key, a number or a tuple of
    numbers, is fixed when the task is placed, and the mapper keeps the keys consistent with
    precedence (a task's key above its predecessors' on every node), else the run can stall.
    """

    kind = "graph-online"
    kind_noun = "an online mapping balancer"
    kind_use = ("it places each task when its inputs exist, during the run: dlbkit.graph, a task graph's "
                "dynamic engine")
    online: ClassVar[bool] = True
    preemptive: bool = False
    local_order: str = "priority"

    @abstractmethod
    def place(self, view) -> list:
        """The (task, node) pairs to place now, from ``view.candidates``."""
