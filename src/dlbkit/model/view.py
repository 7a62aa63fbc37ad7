"""Views: what a deciding node knows when a balancer is asked for a decision.

Engines own a view and update it in place as measurements arrive (the simulator from its model, the
runtime from real timers); balancers only read it. Per-node measurements are plain lists indexed by
node, so the simulator's hot loop updates them cheaply.

One base, :class:`View`, names what every family's view has (see docs/design.md, "Glossary"):
``n_nodes`` (the nodes that compute: a view's index runs over them; the divisible family's master,
which only hands out work, is not one of them), ``time`` (now, seconds; the SPMD family's loop clock
counts loops), ``node`` (the deciding node, -1 for a central decision), ``speeds`` (nominal speeds
from the platform description), ``updated_at`` (when each node's entries were measured) with
:meth:`View.age`, ``neighbours`` (node i's neighbours: a list per node) and
:meth:`View.measured_speed`. Each family's view adds its own measurements.
"""

from __future__ import annotations

import math
from collections.abc import Sequence as SequenceABC
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from dlbkit.model.topology import complete_neighbours

__all__ = ["View", "LoopView", "TreeView", "SpmdView", "GraphView", "GraphOnlineView", "Candidates", "StreamView"]


class View:
    """What every view has; the families' views are dataclasses that declare these fields.

    ``n_nodes``, ``time``, ``node``, ``speeds`` (nominal, work units per second; empty when the engine
    does not know them, as in a real SPMD run), ``updated_at`` and ``neighbours`` (a sequence of node ids per
    node: whom node i may exchange work with; all the others, as
    :class:`~dlbkit.model.topology.Others`, unless the family has a topology; left empty by the loop and
    stream views, where no rule reads it).
    """

    n_nodes: int
    time: float
    node: int
    speeds: list[float]
    updated_at: list[float]
    neighbours: list[Sequence[int]]

    def age(self, i: int) -> float:
        """Seconds since node i's entries were measured (as known by the deciding node)."""
        return self.time - self.updated_at[i]

    def measured_speed(self, i: int) -> float:
        """Work node i did per second of its own time recently, background load included (the
        family's unit: items, tasks, data points); NaN before it was measured."""
        return math.nan

    def _fill(self, n: int, **defaults) -> None:
        """Each named list left empty becomes *n* copies of its default (each family view's
        ``__post_init__`` fills its own per-node or per-task entries with it)."""
        for name, value in defaults.items():
            if not getattr(self, name):
                setattr(self, name, [value] * n)

    def _fill_common(self) -> None:
        """Defaults of the common fields (called by each family view's ``__post_init__``)."""
        p = self.n_nodes
        self._fill(p, updated_at=0.0)
        if not self.neighbours:
            self.neighbours = complete_neighbours(p)


def _line(p: int, ring: bool) -> list[list[int]]:
    """Neighbour lists of a line 0–1–…–(p−1), or a ring (a ring of two is a line of two)."""
    if ring and p > 2:
        return [[(i - 1) % p, (i + 1) % p] for i in range(p)]
    return [[j for j in (i - 1, i + 1) if 0 <= j < p] for i in range(p)]


@dataclass
class LoopView(View):
    """The master's knowledge of a divisible loop (what a chunking balancer decides from).

    Per node i (lists of length ``n_nodes``: the nodes that compute, which 004 calls workers): ``items_done[i]``, ``chunks_done[i]``,
    ``compute_time[i]`` (measured seconds spent computing), ``sq_item_time[i]`` (sum of squared
    per-item times, for the standard deviation), ``overhead_time[i]`` (seconds between asking for work
    and starting it: scheduling overhead plus communication), ``last_chunk[i]``, ``last_time[i]``, and
    ``updated_at[i]`` (when those measurements were taken: their age is ``time - updated_at[i]``).

    ``speeds`` are the *nominal* node speeds from the platform description (what a static or
    weighted technique may assume); the measurements are what adaptive techniques learn from.
    The master decides (``node`` = -1); every node is every other's neighbour.
    In the round-based mechanism (Sánchez et al.) ``round`` counts completed rounds and
    ``exe_time``/``calc_time``/``send_time``/``last_chunk`` describe the last round, ``order`` its
    send order. 004 calls ``calc_time`` t_calc, ``exe_time`` t_exe and items "information units".
    """

    n_items: int
    n_nodes: int
    speeds: list[float]
    remaining: int = -1
    time: float = 0.0
    node: int = -1
    items_done: list[int] = field(default_factory=list)
    chunks_done: list[int] = field(default_factory=list)
    compute_time: list[float] = field(default_factory=list)
    sq_item_time: list[float] = field(default_factory=list)
    overhead_time: list[float] = field(default_factory=list)
    last_chunk: list[int] = field(default_factory=list)
    last_time: list[float] = field(default_factory=list)
    updated_at: list[float] = field(default_factory=list)
    round: int = 0
    exe_time: list[float] = field(default_factory=list)
    calc_time: list[float] = field(default_factory=list)
    send_time: list[float] = field(default_factory=list)
    order: list[int] = field(default_factory=list)
    neighbours: list[Sequence[int]] = field(default_factory=list)

    def __post_init__(self):
        p = self.n_nodes
        # ``neighbours`` stays empty: the master serves every worker and no chunking rule reads a
        # topology (not built: a loop may have 10^5 workers, and P² entries took minutes and GBs)
        self._fill(p, updated_at=0.0)
        if self.remaining < 0:
            self.remaining = self.n_items
        self._fill(p, items_done=0, chunks_done=0, last_chunk=0, compute_time=0.0, sq_item_time=0.0,
                   overhead_time=0.0, last_time=0.0, exe_time=0.0, calc_time=0.0, send_time=0.0)
        if not self.order:
            self.order = list(range(p))

    # --- derived estimates (read by adaptive balancers) ----------------------------------------
    def mean_item_time(self, i: int) -> float:
        """Measured mean seconds per item of worker i (NaN before its first result)."""
        n = self.items_done[i]
        return self.compute_time[i] / n if n else math.nan

    def std_item_time(self, i: int) -> float:
        """Measured standard deviation of seconds per item of worker i (NaN before two items)."""
        n = self.items_done[i]
        if n < 2:
            return math.nan
        mu = self.compute_time[i] / n
        return math.sqrt(max(self.sq_item_time[i] / n - mu * mu, 0.0))

    def measured_speed(self, i: int) -> float:
        """Items per second node i computed so far (NaN before its first result)."""
        c = self.compute_time[i]
        return self.items_done[i] / c if c > 0 else math.nan

    def mean_overhead(self, i: int) -> float:
        c = self.chunks_done[i]
        return self.overhead_time[i] / c if c else math.nan

    @property
    def assigned(self) -> int:
        return self.n_items - self.remaining


@dataclass
class TreeView(View):
    """A deciding node's knowledge of a task-tree computation (what a migration balancer reads).

    Per node i (lists of length ``n_nodes``): ``queue[i]``, the tasks waiting in its queue (Haron's
    load measure, 001 §2.1: queue length, not counting the task it is running); ``done[i]``, tasks it
    has completed; ``updated_at[i]``, when those two were measured (their age is ``time -
    updated_at[i]``: a node knows its own entry exactly and others' only as recently as a message
    brought them); ``neighbours[i]``, the nodes it may exchange work with (the topology; the complete
    graph by default); ``speeds[i]``, nominal speeds (1.0 by default); ``work[i]``, the estimated
    remaining work its waiting tasks stand for, in tree nodes (the sum of the workload's expected
    subtree sizes; all zero when the engine has no estimate, as for user trees in real runs).
    ``node`` is the deciding node
    (-1 for a central decision, e.g. :meth:`~dlbkit.balancers.base.MigrationBalancer.balance`).
    ``colours`` are the topology's edge colour classes (lists of disjoint node pairs, in exchange
    order; :func:`dlbkit.model.topology.edge_colouring`) when the engine knows the topology; empty
    means a dimension-exchange rule derives them from ``neighbours``.
    """

    n_nodes: int
    time: float = 0.0
    queue: list[int] = field(default_factory=list)
    updated_at: list[float] = field(default_factory=list)
    done: list[int] = field(default_factory=list)
    neighbours: list[Sequence[int]] = field(default_factory=list)
    speeds: list[float] = field(default_factory=list)
    work: list[float] = field(default_factory=list)
    node: int = -1
    colours: list[list[tuple[int, int]]] = field(default_factory=list)

    def __post_init__(self):
        self._fill(self.n_nodes, queue=0, done=0, speeds=1.0, work=0.0)
        self._fill_common()

    @property
    def waiting(self) -> int:
        """Tasks waiting over all nodes as known here (Haron's n(t), 001 §2.7)."""
        return sum(self.queue)


@dataclass
class SpmdView(View):
    """What the workstations of a 1-D decomposed SPMD computation know (000 §7.3).

    The domain's data points (DP) are split into contiguous blocks, one per node in node order;
    each loop every node computes its block and exchanges boundaries with its neighbours (a line:
    0–1–…–(P−1); a ring adds (P−1)–0). Per node i, measured over the last measurement window:
    ``points[i]`` DP owned; ``loop_time[i]`` mean busy seconds per loop (000's T_actual: compute,
    swap and communication); ``speed[i]`` effective processing power F (DP/s, measured, so it folds
    in background load); ``free_memory[i]`` M_f, DP that still fit in RAM (≤ 0 once swapping);
    ``swap_cost[i]`` M_a, seconds per swapped DP; ``bandwidth[i]`` BW, DP/s of its link;
    ``updated_at[i]`` when it was measured. ``boundary`` is 000's K (extra boundary DP per DP moved).
    ``speeds[i]`` is node i's nominal processing power from the platform description (DP/s,
    never updated; empty when unknown, as in a real run) — what a balancer that ignores the current
    load assumes. ``neighbours`` follow the layout (a line, or a ring).
    A distributed balancer deciding for node i may read only i and its neighbours.
    """

    n_nodes: int
    points: list[int]
    loop_time: list[float]
    measured_speeds: list[float]
    free_memory: list[float]
    swap_cost: list[float]
    bandwidth: list[float]
    layout: str = "line"
    boundary: float = 0.0
    loop: int = 0
    time: float = 0.0
    updated_at: list[float] = field(default_factory=list)
    speeds: list[float] = field(default_factory=list)
    node: int = -1
    neighbours: list[Sequence[int]] = field(default_factory=list)

    def __post_init__(self):
        if not self.neighbours:
            self.neighbours = _line(self.n_nodes, self.layout == "ring")
        self._fill_common()

    def measured_speed(self, i: int) -> float:
        return self.measured_speeds[i]


@dataclass
class GraphView(View):
    """What a mapping balancer decides from (the task-graph family, 002): the whole graph and its
    costs, known before the run (a static plan). ``costs`` is a
    :class:`~dlbkit.model.graph_costs.GraphCosts` (execution time of every task on every processor,
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
      empty. Kept by the table as the sets change (:class:`~dlbkit.model.graph_gst.Table`), so a mapper
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


@dataclass
class StreamView(View):
    """What a node knows when a job arrives at it and it places the job's tasks (the job-stream
    family, 003): the deciding ``node`` is the job's origin; per node i, ``queue[i]`` is the tasks
    in its system (waiting and in service: the supermarket model's "customers", 003 §3.2), as the
    origin knows it (exactly, or as old as ``updated_at[i]`` under an information model),
    ``slots[i]`` its cores (tasks it serves at once) and ``speeds[i]`` its nominal speed. A
    balancer placing a batch may add to ``queue`` as it goes (the engine refreshes the view before
    every decision). ``neighbours`` is empty: every node may place on every other.
    """

    n_nodes: int
    queue: list[int] = field(default_factory=list)
    slots: list[int] = field(default_factory=list)
    speeds: list[float] = field(default_factory=list)
    time: float = 0.0
    node: int = 0
    updated_at: list[float] = field(default_factory=list)
    neighbours: list[Sequence[int]] = field(default_factory=list)

    def __post_init__(self):
        self._fill(self.n_nodes, queue=0, slots=1, speeds=1.0, updated_at=0.0)
        # ``neighbours`` stays empty: every node may place on every other (not built: a stream view
        # may have 10^5 nodes, and P² neighbour entries would dwarf the rest)
