"""Balancer base classes: a balancer decides, an engine does.

A balancer is a :class:`~dlbkit.params.Parameterised` object: keyword-only parameters stored
unchanged, declared constraints, ``get_params``/``set_params``/``clone``. Learned state ends in ``_``
and is reset by ``start(view)``, which engines call before the first decision of every run.
Randomised balancers draw only from the Generator the engine passes to ``start``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass
from typing import ClassVar, Sequence

import numpy as np

from dlbkit.errors import ConfigError
from dlbkit.model.view import LoopView, StreamView, TreeView
from dlbkit.params import Parameterised

__all__ = ["Taxonomy", "Balancer", "start_step", "end_step", "ChunkingBalancer", "MigrationBalancer", "Transfer", "MappingBalancer", "Plan",
           "OnlineMapping", "PlacementBalancer"]


@dataclass(frozen=True)
class Taxonomy:
    """Where a balancer sits on the axes of notes/overview.md §3 (after Osman 2003 §2.5, Haron §2.4).

    *initiation*: who triggers a decision (sender, receiver, periodic, master, arrival);
    *location*: where it is made (central, distributed, hybrid);
    *information*: what it uses (none, local, neighbourhood, global; and how fresh);
    *transfer*: the rule that sets how much work moves; *selection*: which work moves.
    """

    initiation: str
    location: str
    information: str
    transfer: str
    selection: str

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


class Balancer(Parameterised, ABC):
    """Root of every balancer. Subclasses set ``name``, ``kind``, ``source`` and ``taxonomy``."""

    name: ClassVar[str] = ""
    kind: ClassVar[str] = ""
    source: ClassVar[str] = ""
    taxonomy: ClassVar[Taxonomy]

    #: True for rules that learn, in one run of a loop, something worth keeping for the next run of
    #: the same loop (a time step): engines then hand :meth:`carry`'s data to :meth:`resume`.
    carries_state: ClassVar[bool] = False
    #: True for rules that choose, between time steps, from a simulated prediction of the next step
    #: (``auto``). Pure data: an engine that runs time steps then calls the one shared predictor,
    #: :func:`dlbkit.sim.auto.after_step`, after each step, which measures the step and asks the
    #: balancer, on its carried state, through its ``observe``, ``due``, ``candidate_names``,
    #: ``max_items`` and ``evaluated`` (see :class:`~dlbkit.balancers.chunking.auto.Auto`); the
    #: engine never looks at a balancer's name. Implies :attr:`carries_state`.
    predicts_between_steps: ClassVar[bool] = False

    def start(self, view, rng: np.random.Generator | None = None) -> None:
        """Validate parameters and reset learned state before a run (engines call this)."""
        self.validate()
        self.rng_ = rng

    # --- state carried from one time step to the next (pure data; engines only pass it along) ---
    def carry(self, view) -> dict | None:
        """What this balancer learned in the run that just ended, as pure data (numbers and lists of
        numbers), for the next time step of the same loop; *view* is the run's view as it ended.
        None: nothing to carry (the default; rules that learn across steps set :attr:`carries_state`)."""
        return None

    def resume(self, state: dict) -> None:
        """Take up *state*, :meth:`carry`'s data from the previous time step; engines call it right
        after :meth:`start` (which reset the learned state) and before the first decision."""


def start_step(balancer: Balancer, view, rng, state: dict | None) -> None:
    """Start *balancer* for a run that is one time step of a loop: :meth:`Balancer.start`, then
    :meth:`Balancer.resume` with the previous step's *state* (None for the first step, or a rule
    that carries nothing). The one call every engine makes at a step's start."""
    balancer.start(view, rng)
    if state is not None and balancer.carries_state:
        balancer.resume(state)


def end_step(balancer: Balancer, view) -> dict | None:
    """The state *balancer* carries to the next step (:meth:`Balancer.carry`), or None."""
    return balancer.carry(view) if balancer.carries_state else None


def whole(answer) -> int:
    """A rule's numeric *answer* as an int (its integer part); TypeError, ValueError or OverflowError
    for None, NaN, infinity or anything else ``int()`` refuses, and for text even when it spells a
    number (``int("12")`` would take it). Callers turn these into the ConfigError naming the rule."""
    if isinstance(answer, (str, bytes, bytearray)):
        raise TypeError(answer)
    return int(answer)


def chunk_count(balancer: ChunkingBalancer, answer) -> int:
    """A chunking rule's *answer* as a whole number of items (:func:`whole`), or a ConfigError
    naming the balancer: a rule's own code returning None (a forgotten ``return``), text or NaN
    otherwise surfaced as a bare ``int()`` error from inside dlbkit."""
    try:
        return whole(answer)
    except (TypeError, ValueError, OverflowError):
        raise ConfigError(f"the answer of {balancer.name}.chunk", answer,
                          "a number of items (engines take its integer part, clamped to [1, remaining])") from None


class ChunkingBalancer(Balancer):
    """Decides how many items the next request (or round) gets.

    One required method, :meth:`chunk`. Optional hooks for the round-based mechanism:
    :meth:`allocate` (all workers' counts for the next round; default asks :meth:`chunk` per worker
    in send order) and :meth:`send_order`. Engines clamp a decision to [1, remaining] and record it.
    """

    kind = "chunking"
    #: False for rules that never read the view's per-worker measurements; engines then skip
    #: updating them (the simulator's hot loop). Adaptive rules leave it True.
    reads_measurements: ClassVar[bool] = True

    @abstractmethod
    def chunk(self, view: LoopView, worker: int) -> int:
        """The number of items to give *worker* now (engines clamp it to [1, remaining])."""

    def allocate(self, view: LoopView) -> list[int]:
        counts = [0] * view.n_nodes
        left = view.remaining
        for w in self.send_order(view):
            if left <= 0:
                break
            n = max(1, min(chunk_count(self, self.chunk(view, w)), left))
            counts[w] = n
            left -= n
            view.remaining = left  # rules such as GSS read the remainder as they go
        view.remaining = left + sum(counts)
        return counts

    def send_order(self, view: LoopView) -> list[int]:
        return list(range(view.n_nodes))


@dataclass(frozen=True)
class Transfer:
    """Move up to *n* waiting tasks from node *src* to node *dst* (the *n* oldest: migration is FIFO).

    Returned by :meth:`MigrationBalancer.balance`; as a request from :meth:`MigrationBalancer.on_idle`
    (``src`` the victim, ``dst`` the asking node) ``n`` is the amount wanted, 0 meaning "whatever the
    victim's :meth:`~MigrationBalancer.on_request` gives". Engines clamp ``n`` to what *src* holds.
    ``step`` orders a periodic decision's transfers into exchange steps (GDEM: the colour index;
    Loadserver: the LIS round), applied in order; 0 for rules with a single step.
    """

    src: int
    dst: int
    n: int = 0
    step: int = 0


class MigrationBalancer(Balancer):
    """Decides which waiting tasks of a task tree move where (divide and conquer, branch and bound).

    Mechanics are the engine's and fixed, after 001 §1.3 (Haron's Loadserver kernel): every node keeps
    a double-ended queue of waiting tasks; it runs the newest (depth-first, LIFO, bounded memory) and
    gives away the oldest (FIFO end: nearest the root, likely the largest subtrees). A balancer only
    answers *who*, *whom* and *how many*, through four optional hooks with documented defaults; class
    attributes say which triggers a rule uses, so an engine never calls (or pays for) an unused hook:

    * ``receiver_initiated``: when a node holds at most ``low_water`` waiting tasks and has no
      request out, :meth:`on_idle` ``(view, node)``, evaluated for the asking node, names a victim,
      or several :class:`Transfer` requests (RID asks each loaded neighbour for δ_j). Default: None.
    * any request is answered by :meth:`on_request` ``(view, victim, thief, queue_length, wanted)``,
      evaluated in the victim with exact local knowledge. Default: half its waiting tasks.
    * ``sender_initiated``: after every expansion that created children, :meth:`on_spawn`
      ``(view, node, n_children)`` gives each child a node. Default: all stay local.
    * ``periodic``: as soon as some node has completed ``interval`` tasks since the last call (0: at
      every load update; a superstep engine runs up to ``interval`` tasks per node per iteration),
      :meth:`balance` ``(view)``, central and global, returns transfers. Default: none.

    A parameter with the name of a trigger attribute (``low_water``, ``interval``) overrides it per
    instance, since parameters are stored as instance attributes (GDEM(interval=16) is Haron's i).

    How the later rules fit (001 §2): **work stealing** and **random** are one hook each
    (:mod:`dlbkit.balancers.migration`). **Receiver-initiated diffusion** (RID, §2.3) sets
    ``low_water`` = L_LOW and returns from :meth:`on_idle` one Transfer(j, node, δ_j) per
    neighbour with excess, read from ``view.neighbours`` and the (aged) ``view.queue``; the victim's
    :meth:`on_request` gives at most half its load. **Sender-initiated diffusion** places children
    on lighter neighbours in :meth:`on_spawn`. **GDEM** (§2.1) is periodic: :meth:`balance` visits
    the edge colours of ``view.neighbours`` and, per pair with difference > 1, returns
    Transfer(heavy, light, ⌊λ(l_i − l_j)⌋). **Loadserver** (§2.2) is periodic with ``interval`` 0
    (called at every load update the centre receives): light nodes (``queue ≤ l``, oldest update
    first, i.e. the LIS's FIFO) get one task (``r``) from each heavy node (``queue > h``).
    **Greedy/refine** (Charm++) are periodic and global. Phase-based adaptivity (§2.7) reads
    ``view.waiting`` (Haron's n(t)) in any hook.

    Superstep engines (:mod:`dlbkit.sim.superstep`, 001 §4) and phase-based adaptivity add three
    optional hooks. :meth:`observe` ``(view)`` (when ``observes``) is called at every barrier, after balancing (the
    asynchronous engine and the runtime: at every periodic point, before balancing), with the
    global counts (``view.queue``; ``view.work`` too when ``reads_work``): a phase detector reads
    Haron's n(t) there, and engines re-read ``interval`` (``inf``: run every local task, no LB) each
    iteration. :meth:`acting` names the balancer whose decision :meth:`balance` returns now (a
    wrapper's current phase; None = balancing off). ``protocol`` says how a superstep engine costs
    the information behind a decision: "none" (only migrations), "pairwise" (GDEM: every pair of every
    colour class :meth:`last_exchange` lists swaps loads, colour by colour; ``Transfer.step`` is the
    colour), "server" (Loadserver: the registrations and LIS queries :meth:`last_exchange` lists; node
    :meth:`reserved_node` computes nothing). ``barrier_ints`` is the number of integers the barrier's allreduce carries (1: n(t)).

    Decisions are pure: a hook reads the view (never a clock) and draws only from ``self.rng_``.
    Engines clamp every answer (a victim must be another node; counts to [0, tasks held]) and record
    it. The simulator and the runtime call the same hooks, so a rule cannot tell them apart.
    """

    kind = "migration"
    #: engines call :meth:`on_idle` when a node holds at most ``low_water`` waiting tasks
    receiver_initiated: ClassVar[bool] = False
    #: waiting tasks at or below which a receiver-initiated node asks for work (0: when it runs dry)
    low_water: ClassVar[int] = 0
    #: engines call :meth:`on_spawn` for every expansion that created children
    sender_initiated: ClassVar[bool] = False
    #: engines call :meth:`balance` once a node completed ``interval`` tasks since the last call (0: every update)
    periodic: ClassVar[bool] = False
    interval: ClassVar[float] = 1
    #: False for rules that never read other nodes' loads; engines then need not ship them around
    reads_loads: ClassVar[bool] = True
    #: True when a rule reads ``view.work`` (estimated remaining work); engines fill it only then
    reads_work: ClassVar[bool] = False
    #: how a superstep engine costs the information exchange: "none", "pairwise" or "server"
    protocol: ClassVar[str] = "none"
    #: integers the iteration barrier's allreduce carries (001 §3.5: the global task count)
    barrier_ints: ClassVar[int] = 1
    #: True for a rule whose :meth:`observe` does something (engines call it only then)
    observes: ClassVar[bool] = False

    # --- what engines may read of a rule's learned state (nothing else: the ``_`` attributes are its own)
    def reserved_node(self) -> int | None:
        """A node the rule keeps for itself, which computes nothing (the Loadserver's LIS), or None."""
        return None

    def phase(self) -> int | None:
        """The workload phase the rule believes it is in (phase-based adaptivity, 001 §2.7), or None."""
        return None

    def last_exchange(self) -> list:
        """The information exchanged for the last :meth:`balance` decision, in the form ``protocol``
        names: "pairwise", the colour classes of node pairs that swapped loads, in order; "server",
        the registrations and queries (``("register", node)``, ``("query", node, round, ((light,
        n), ...))``); "none", an empty list. A superstep engine costs these messages."""
        return []

    def observe(self, view: TreeView) -> None:
        """Called by engines at every barrier (or periodic point) with the global counts (default: nothing)."""

    def acting(self) -> "MigrationBalancer | None":
        """The balancer deciding now (a phase wrapper's current one; None: balancing is off)."""
        return self

    def check_nodes(self, n: int, start_node: int | None = None) -> None:
        """Raise ConfigError if the rule cannot run on *n* nodes with the root on *start_node* (None:
        not known yet): the Loadserver's LIS index beyond them, or on the root's node. Called by
        :meth:`start`, and by an experiment file's loader before any run (default: any n)."""

    def start(self, view, rng: np.random.Generator | None = None) -> None:
        """As :meth:`Balancer.start`, and require the engine's Generator: every migration rule gets
        one, drawn from or not, so an engine that forgets it fails the same way for every rule."""
        super().start(view, rng)
        if rng is None:
            raise ConfigError(f"the rng passed to {self.name}.start", None,
                              "a numpy.random.Generator (engines pass one)")
        if type(self).observe is not MigrationBalancer.observe and not self.observes:
            # engines call observe() only for rules that declare it: never skip one silently
            raise ConfigError(f"{type(self).__name__}.observes", False, "True for a rule that overrides observe()")

    def on_idle(self, view: TreeView, node: int) -> int | Sequence[Transfer] | None:
        """Whom *node* asks for work: a victim, a list of requests Transfer(victim, node, wanted),
        or None (ask nobody; the node waits until work is sent to it)."""
        return None

    def on_request(self, view: TreeView, victim: int, thief: int, queue_length: int, wanted: int = 0) -> int:
        """How many of its *queue_length* waiting tasks *victim* gives *thief* (the oldest ones).

        Default: half, rounded down (so a single waiting task is kept), and at most *wanted* when the
        request names an amount.
        """
        n = queue_length // 2
        return min(n, wanted) if wanted > 0 else n

    def on_spawn(self, view: TreeView, node: int, n_children: int) -> list[int]:
        """Where each of the *n_children* just created on *node* goes, in order (default: all stay)."""
        return [node] * n_children

    def balance(self, view: TreeView) -> list[Transfer]:
        """Periodic, central decision: the transfers to make now (default: none)."""
        return []

    @staticmethod
    def requests(node: int, decision: int | Sequence[Transfer] | None) -> list[Transfer]:
        """:meth:`on_idle`'s answer as a list of requests (what engines send)."""
        if decision is None:
            return []
        if isinstance(decision, Transfer):
            return [decision]
        if isinstance(decision, (int, np.integer)):
            return [Transfer(int(decision), node, 0)]
        return list(decision)


class RepartitionBalancer(Balancer):
    """Decides how many data points of a decomposed domain move between neighbouring nodes.

    One required method, :meth:`decide`: at the end of node *node*'s measurement window, the
    transfers it initiates (``Transfer(node, neighbour, dp)``; blocks stay contiguous because data
    points only move between neighbours, taken from the side that touches the receiver). A
    distributed rule (DLAH, diffusion) reads only *node* and its neighbours in the
    :class:`~dlbkit.model.view.SpmdView`; a central rule sets ``central = True`` and engines call
    :meth:`decide` once per window with ``node = -1``, accepting transfers between any neighbours.
    Engines clamp a transfer so that a sender keeps at least one data point.
    """

    kind = "repartition"
    #: True when the rule decides for the whole domain at once (engines pass node = -1)
    central: ClassVar[bool] = False

    @abstractmethod
    def decide(self, view, node: int) -> list[Transfer]:
        """The transfers to make now (an empty list when the node is balanced)."""


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

    One required method, :meth:`map`: from a :class:`~dlbkit.model.view.GraphView` (the graph, the
    execution time of every task on every processor, the transfer formula) return a :class:`Plan`.
    The balancer decides; the engine times the plan (:func:`dlbkit.sim.graph.evaluate`, one evaluator
    for every mapper) and :func:`dlbkit.balancers.decide.plan` checks it first. Randomised mappers
    draw only from ``self.rng_`` (the engine's Generator, passed to :meth:`start`).
    """

    kind = "mapping"

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
    :class:`~dlbkit.model.view.GraphOnlineView` (the graph and its costs, the time, where the placed
    tasks are, the tasks that may be placed now, each node's load level, the tasks ready or running)
    return ``[(task, node), ...]``, the tasks to place now (a subset of ``view.candidates``; an empty
    list waits for the next event). :func:`dlbkit.balancers.decide.online_place` checks the answer.
    ``view.candidates`` is the table's live :class:`~dlbkit.model.view.Candidates` (a sequence in table
    order: ``in``, ``len`` and iteration without a pass; indexing as a list's), and the view keeps sums
    a mapper would otherwise recount per decision (``active_load``, ``candidate_load``,
    ``gst_min_priority``), all kept by :class:`~dlbkit.model.graph_gst.Table` in both engines.

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
    online: ClassVar[bool] = True
    preemptive: bool = False
    local_order: str = "priority"

    @abstractmethod
    def place(self, view) -> list:
        """The (task, node) pairs to place now, from ``view.candidates``."""


class PlacementBalancer(Balancer):
    """Decides where the tasks of a job that arrived at a node run (the job-stream family, 003).

    One required method, :meth:`place`: from a :class:`~dlbkit.model.view.StreamView` whose ``node``
    is the job's origin, the node one task goes to. Optional hook :meth:`place_batch` for a job of k
    tasks (default: :meth:`place` k times, adding each placed task to ``view.queue`` in between when
    *update* is true, so that a decider does not herd its own batch onto one node; 003 §5.2's "local
    optimistic update"). Engines call them through :func:`dlbkit.balancers.decide.place`, which
    checks every answer is a node. ``reads_loads`` False: the rule never reads ``view.queue`` (local,
    random, round-robin), so engines need not fill it. Randomised rules draw only from ``self.rng_``.
    """

    kind = "placement"
    #: False for rules that never read other nodes' loads (engines then skip filling the view)
    reads_loads: ClassVar[bool] = True

    @abstractmethod
    def place(self, view: StreamView) -> int:
        """The node that one task arriving at ``view.node`` runs on."""

    def place_batch(self, view: StreamView, k: int, update: bool = True) -> list[int]:
        """The nodes of a job's *k* tasks (default: :meth:`place` each; *update*: count each placed
        task in ``view.queue`` before placing the next)."""
        out = []
        for _ in range(k):
            j = self.place(view)
            out.append(j)
            if update:
                view.queue[j] += 1
        return out
