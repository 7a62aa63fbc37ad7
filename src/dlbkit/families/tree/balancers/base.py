"""The migration kind: the base of the task-tree family's balancers (which tasks move between nodes)."""

from __future__ import annotations

from typing import ClassVar, Sequence

import numpy as np

from dlbkit.balancers.base import Balancer, Transfer
from dlbkit.errors import ConfigError
from dlbkit.families.tree.model.view import TreeView

__all__ = ["MigrationBalancer"]


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
    (:mod:`dlbkit.families.tree.balancers`). **Receiver-initiated diffusion** (RID, §2.3) sets
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

    Superstep engines (:mod:`dlbkit.families.tree.sim.superstep`, 001 §4) and phase-based adaptivity add three
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
    kind_use = "it moves a task tree's work between nodes: dlbkit.tree, a task-tree workload"
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
