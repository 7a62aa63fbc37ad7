"""The task-graph family's views: what a mapper reads of a graph and its costs (GraphView), and what an online mapper reads during a run (GraphOnlineView)."""

from __future__ import annotations

import math
from collections.abc import Sequence as SequenceABC
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from dlbkit.model.view import View

__all__ = ["GraphView", "GraphOnlineView", "Candidates"]


@dataclass
class GraphView(View):
    """What a mapping balancer decides from (the task-graph family, 002): the whole graph and its
    costs, known before the run (a static plan). ``costs`` is a
    :class:`~dlbkit.families.graph.model.costs.GraphCosts` (execution time of every task on every processor,
    the transfer formula, the cost model's name); ``n_nodes`` counts processors (a platform node with
    c cores gives c). The decider is central (``node`` = -1) and every processor neighbours every other.
    """

    n_nodes: int
    costs: object = None
    speeds: list[float] = field(default_factory=list)
    time: float = 0.0
    node: int = -1
    updated_at: list[float] = field(default_factory=list)
    neighbours: list[Sequence[int]] = field(default_factory=list)

    def __post_init__(self):
        if not self.speeds and self.costs is not None:
            self.speeds = list(self.costs.speeds)
        self._fill_common()

    @property
    def graph(self):
        return self.costs.graph


@dataclass
class GraphOnlineView(GraphView):
    """What an online mapper decides from (the graph family's ``dynamic`` engine; 002 §5.2.4's Global
    Scheduling Table as the engine keeps it). Besides :class:`GraphView`'s graph and costs, at ``time``:

    * ``placed[i]``: task i's processor, -1 while unplaced;
    * ``candidates``: the unplaced tasks that may be placed now (their program has arrived and every
      predecessor is placed and has begun to receive its input: zero *holds*, 002 §5.2.4);
    * ``gst``: every unplaced task in the table (the candidates and the tasks with holds left; a
      task enters when one of its predecessors is placed, or with its program's roots);
    * ``holds[i]``: i's holds remaining;
    * ``load_level[p]``: the execution time on p of the tasks placed there and not finished (002's
      L(j) = Σ l_i / s_j);
    * ``active``: the tasks placed, ready (every input arrived) or running, not finished;
    * ``priority[i]``: the local schedulers' priority, 002's precedence level shifted by the §6 rule
      for programs arriving at different times (prec(i) − mp(P) − arrival(P)); one program: prec − mp;
    * ``start[i]``: when task i first ran, None before; ``finish[i]``: when it ended, None before
      (so the tasks in flight are those with a start and no finish); ``n_finished``: how many ended;
    * ``measured_speed[p]``: processor p's speed as last measured (the ``dynamic`` engine: its speed ×
      its availability at ``time``, what a monitor reads now, never a later value; a real run: the
      estimated time at speed 1 ÷ the measured seconds of the last task it finished, its nominal
      speed before any). Comparing it with ``speeds`` tells a mapper how far a processor has slowed;
    * ``active_load``, ``candidate_load``: the sum of the tasks' loads (``graph.weight(i)``, work at
      speed 1) over ``active`` and over ``candidates``, exact and rounded once (as :func:`math.fsum`);
      ``gst_min_priority``: the least ``priority`` of a task in ``gst`` (002's t_p), inf when it is
      empty. Kept by the table as the sets change (:class:`~dlbkit.families.graph.model.gst.Table`), so a mapper
      reads them without a pass over the sets (thousands of an in-tree's leaves are candidates at once).

    ``candidates`` is a :class:`Candidates` (the table's, live: it changes as the table does); given a
    list at construction, the view makes it one. Built from its arguments, a view computes the three
    sums from the sets it is given; an engine then updates one view in place between decisions,
    through the table. A list put on ``candidates`` later, by hand, stays a list and comes with no
    table: the sums then say nothing of it, and ``pd`` counts P and t_p from the sets instead. A
    balancer reads the view, never writes it.
    """

    placed: list[int] = field(default_factory=list)
    candidates: Sequence[int] = field(default_factory=list)  # a Candidates once built (__post_init__)
    gst: set = field(default_factory=set)
    holds: list[int] = field(default_factory=list)
    load_level: list[float] = field(default_factory=list)
    active: set = field(default_factory=set)
    priority: list[float] = field(default_factory=list)
    start: list = field(default_factory=list)
    finish: list = field(default_factory=list)
    measured_speed: list[float] = field(default_factory=list)
    n_finished: int = 0
    active_load: float = 0.0
    candidate_load: float = 0.0
    gst_min_priority: float = math.inf

    def __post_init__(self):
        super().__post_init__()
        n = self.costs.graph.n_tasks if self.costs is not None else 0
        self._fill(n, placed=-1, holds=0, start=None, finish=None)
        self._fill(self.n_nodes, load_level=0.0)
        if not self.measured_speed:
            self.measured_speed = list(self.speeds)
        if not isinstance(self.candidates, Candidates):
            self.candidates = Candidates(self.candidates)
        if self.costs is not None:
            weight = self.costs.graph.weight
            self.active_load = math.fsum(map(weight, self.active))
            self.candidate_load = math.fsum(map(weight, self.candidates))
        if len(self.priority):  # a view built without priorities (a mapper that reads none) has no t_p
            self.gst_min_priority = min(map(self.priority.__getitem__, self.gst), default=math.inf)


class Candidates(SequenceABC):
    """The tasks placeable now, in table order (the order in which they became placeable: 002 §5.4's
    "table order", by which mappers break ties): :attr:`GraphOnlineView.candidates`.

    A sequence whose membership test, length, iteration (forward and reversed) and truth take no pass
    over its tasks, so that an engine hands the same live object to every decision instead of a fresh
    list (a list per decision made placing the 2^(k−1) leaves of an in-tree quadratic). Indexing and
    slicing build the list once per change. It equals a list or tuple of the same tasks in the same
    order. :meth:`rank` numbers the entries in table order. Only the table changes it (``_add``,
    ``_remove``); a balancer reads it.
    """

    __slots__ = ("_rank", "_next", "_list")

    def __init__(self, tasks: Iterable[int] = ()):
        self._rank: dict[int, int] = {}  # task → its entry's number; a dict keeps insertion (table) order
        self._next = 0
        self._list: list[int] | None = None  # the tasks as a list, built on indexing, dropped on a change
        for i in tasks:
            self._add(i)

    def _add(self, i: int) -> None:
        """*i* joins at the end (a task already in keeps its place)."""
        if i not in self._rank:
            self._rank[i] = self._next
            self._next += 1
            self._list = None

    def _remove(self, i: int) -> None:
        del self._rank[i]
        self._list = None

    def rank(self, i: int) -> int:
        """A number that grows with table order: task *i*'s entry's (a task that leaves and joins again
        gets a new, larger one). KeyError if *i* is not a candidate."""
        return self._rank[i]

    def __contains__(self, i) -> bool:
        return i in self._rank

    def __len__(self) -> int:
        return len(self._rank)

    def __iter__(self):
        return iter(self._rank)

    def __reversed__(self):
        return reversed(self._rank)

    def __getitem__(self, k):
        if self._list is None:
            self._list = list(self._rank)
        return self._list[k]

    def __eq__(self, other) -> bool:
        if isinstance(other, (Candidates, list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None

    def __repr__(self) -> str:
        return f"Candidates({list(self._rank)!r})"
