"""Phase-based adaptivity (Haron): per workload phase, another balancer or another LB interval."""

from __future__ import annotations

import math
from numbers import Real
from collections.abc import Sequence
from typing import Any

from dlbkit.errors import ConfigError
from dlbkit.families.tree.model.view import TreeView
from dlbkit.params import Interval, Options
from dlbkit.families.tree.balancers.base import MigrationBalancer
from dlbkit.balancers.base import Taxonomy, Transfer
from dlbkit.balancers.registry import REGISTRY, make, names, register

__all__ = ["PhaseAdaptive", "PHASES"]

PHASES = (1, 2, 3)  # I filling, II steady, III emptying (001 §2.7)


class _Triple:
    """A constraint form: a sequence of exactly three entries, each accepted by *item*; *text* says
    what an entry may be (a callable: said when an error is, so that it can list the registry)."""

    def __init__(self, item, text):
        self.item, self.text = item, text

    def accepts(self, value: Any) -> bool:
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) != 3:
            return False
        return all(self.item(v) for v in value)

    def __str__(self) -> str:
        text = self.text() if callable(self.text) else self.text
        return f"a sequence of three {text} (phases I, II, III)"


def _is_balancer(v) -> bool:
    if v is None or isinstance(v, MigrationBalancer):
        return True
    if isinstance(v, str):
        key = v.lower()
        return key == "none" or (key in REGISTRY and REGISTRY[key].kind == "migration" and key != PhaseAdaptive.name)
    return False


def _is_interval(v) -> bool:
    return isinstance(v, Real) and not isinstance(v, bool) and not math.isnan(v) and v >= 1


@register
class PhaseAdaptive(MigrationBalancer):
    """Phase-based adaptive DLB: the run goes through phase I (filling), II (steady) and III
    (emptying), detected at run time from the global count the barrier carries; each phase has its
    own balancer (*balancers*: algorithmic adaptivity, e.g. ``("ldsv", "gdem", "none")``) and LB
    interval (*intervals* (i1, i2, i3): parametric adaptivity, 001's (1, i2, ∞)).

    Source: 001 §2.7–2.8, §3 (Haron 1998): transitions t1 (I → II) when n ≥ *c1*·p and t2 (II → III)
    when n ≤ *c2*·p, with n(t) the waiting tasks summed over all processors after LB (001 §2.8
    [INF] item 1); *t1* and *t2* enable them (001's techniques "t1", "t2", "t1t2"; c1 = c2 = 1 in
    001 Ch. 5). The state machine is one-way and exactly 001 §2.8 [INF] items 2–3: after each
    iteration, phase I moves to II when n ≥ c1·p; else phase II moves to III when t2 is enabled and
    the detector fires (t2 is not evaluated before phase II). Phase I uses i1 and the first balancer
    when t1 is enabled, else phase II's; phase III (only with t2) uses i3 — ∞ runs every processor's
    remaining local subtree in one final iteration, with no LB — and the third balancer (None: off).
    Algorithmic adaptivity (001 Eq. 3.4) was proposed but never run in 001 (§5.4).

    *detector* "tasks" is 001's: t2 fires when n(t) ≤ c2·p. Under depth-first traversal the count of
    waiting tasks badly under-states the remaining work (a processor can hold one task that stands
    for a subtree of thousands), so LB is switched off far too early (001 Tables 5.8 and 5.19: −207%
    and −355%; 001 §6.2 item 3). *detector* "work" uses ``view.work`` (the engine's estimate of the
    remaining nodes per processor, the sum of the workload's expected subtree sizes): t2 fires when
    the largest local remaining work is at most c2·i2 nodes, i.e. when no processor has more than
    c2 phase-II intervals left, so that running out locally cannot cost much more than one more
    balanced iteration. t1 stays task-based (filling is about tasks, not work), and the barrier
    still carries one integer: the count (MPI_SUM) in phase I, where only t1 is checked, and the
    largest local work (MPI_MAX, rounded up) in phase II, where only t2 is; both are 0 only when
    the run is over, so termination needs nothing more.

    The wrapper delegates every hook to the current phase's balancer (:meth:`acting`); the same
    name in two phases is one instance, so e.g. the Loadserver keeps its LIS across t1. Both
    simulators take any rule per phase (the asynchronous engine observes at every periodic point);
    a real run (``dlbkit.tree``) takes only periodic rules or none per phase, since the phase changes
    in the coordinator and workers decide on_idle/on_spawn with their own copy. ``phase_``
    is the current phase, ``transitions_`` the iteration (barrier count) of each transition.

    Helps: i = 1 while filling and a larger i in the steady phase spreads the root fast without
    paying for LB every node later (001 Tables 5.3, 5.26: up to ≈ 25% time, 25–167% speed);
    switching LB off when only little work remains saves exchanges. Backfires: the task-count t2
    under depth-first order (above); the interval i2 is a compromise over p and g (up to 53% off the
    best, 001 §5.3.1); switching algorithm costs the hand-over and loses the old rule's state.
    """

    name = "phase-adaptive"
    observes = True
    source = "001 §2.7–2.8, §3, §6.2 item 3 (Haron 1998)"
    taxonomy = Taxonomy("per phase (the phase's balancer's own initiation)", "central phase detection at the barrier",
                        "global: the waiting-task count (or estimated remaining work) per iteration",
                        "the phase's balancer and interval", "the phase's balancer's")
    _parameter_constraints = {
        "balancers": [_Triple(_is_balancer, lambda: "migration balancers (" + ", ".join(
            n for n in names("migration") if n != PhaseAdaptive.name) + ", instances, or None/'none')")],
        "intervals": [_Triple(_is_interval, "LB intervals >= 1 (inf allowed)")],
        "t1": [bool], "t2": [bool],
        "c1": [Interval(Real, 0, None, closed="neither")], "c2": [Interval(Real, 0, None, closed="neither")],
        "detector": [Options("tasks", "work")],
    }

    def __init__(self, *, balancers: Sequence = ("gdem", "gdem", "none"), intervals: Sequence = (1, 16, math.inf),
                 t1: bool = True, t2: bool = True, c1: float = 1.0, c2: float = 1.0, detector: str = "tasks"):
        self.balancers = balancers
        self.intervals = intervals
        self.t1 = t1
        self.t2 = t2
        self.c1 = c1
        self.c2 = c2
        self.detector = detector

    # --- set-up --------------------------------------------------------------------------------------
    def validate(self) -> None:
        super().validate()
        if self.detector == "work" and math.isinf(self.intervals[1]):
            raise ConfigError(self.param_field("intervals", 1), self.intervals[1],
                              "finite with detector 'work' (its t2 threshold is c2 * intervals[1] nodes)")

    def check_nodes(self, n: int, start_node: int | None = None) -> None:
        for k, b in enumerate(self.balancers):  # each phase's balancer against the node count
            if isinstance(b, str) and b.lower() != "none":
                make(b, field=self.param_field("balancers", k)).check_nodes(n, start_node)
            elif isinstance(b, MigrationBalancer):
                b.check_nodes(n, start_node)

    def start(self, view: TreeView, rng=None) -> None:
        super().start(view, rng)
        self.validate()  # parameters set after construction (set_params) are checked here too
        built: dict[Any, MigrationBalancer | None] = {}
        inner: list[MigrationBalancer | None] = []
        for k, b in enumerate(self.balancers):
            key = b.lower() if isinstance(b, str) else id(b)
            if key not in built:
                if b is None or key == "none":
                    built[key] = None
                elif isinstance(b, str):
                    built[key] = make(b, field=self.param_field("balancers", k))
                else:
                    built[key] = b.clone()
                if built[key] is not None:
                    built[key].start(view, rng)
            inner.append(built[key])
        self.balancers_ = inner
        self.n_nodes_ = view.n_nodes
        self.phase_ = 1
        self.transitions_: dict[str, int] = {}
        self.barriers_ = 0

    # --- the state machine (001 §2.8 [INF] items 1–3) -----------------------------------------------
    def _slot(self) -> int:
        """Index into balancers/intervals of the current phase."""
        if self.phase_ == 1:
            return 0 if self.t1 else 1
        return self.phase_ - 1

    def observe(self, view: TreeView) -> None:
        self.barriers_ += 1
        for b in {id(b): b for b in self.balancers_ if b is not None}.values():
            b.observe(view)
        p = view.n_nodes
        n = view.waiting
        if self.phase_ == 1:
            if n >= self.c1 * p:
                self.phase_ = 2
                self.transitions_["t1"] = self.barriers_
        elif self.phase_ == 2 and self.t2 and self._emptying(view, n, p):
            self.phase_ = 3
            self.transitions_["t2"] = self.barriers_

    def _emptying(self, view: TreeView, n: int, p: int) -> bool:
        if self.detector == "tasks":
            return n <= self.c2 * p
        return max(view.work) <= self.c2 * self.intervals[1]

    # --- what engines read ---------------------------------------------------------------------------
    @property
    def interval(self) -> float:  # type: ignore[override]
        if not hasattr(self, "phase_"):
            return self.intervals[0 if self.t1 else 1]
        return self.intervals[self._slot()]

    def acting(self) -> MigrationBalancer | None:
        return self.balancers_[self._slot()]

    @property
    def protocol(self) -> str:  # type: ignore[override]
        b = self.acting() if hasattr(self, "balancers_") else None
        return "none" if b is None else b.protocol

    @property
    def reads_work(self) -> bool:  # type: ignore[override]
        return self.detector == "work"

    def reserved_node(self) -> int | None:
        """The LIS node when every phase that balances uses one Loadserver (it then never computes)."""
        inner = [b for b in getattr(self, "balancers_", []) if b is not None]
        servers = {b.reserved_node() if b.protocol == "server" else None for b in inner}
        return servers.pop() if len(servers) == 1 else None

    def phase(self) -> int | None:
        return getattr(self, "phase_", None)

    def last_exchange(self) -> list:
        b = self.acting() if hasattr(self, "balancers_") else None
        return [] if b is None else b.last_exchange()

    def _any(self, attr: str) -> bool:
        bs = getattr(self, "balancers_", None)
        return bool(bs) and any(getattr(b, attr) for b in bs if b is not None)

    @property
    def periodic(self) -> bool:  # type: ignore[override]
        return self._any("periodic") if hasattr(self, "balancers_") else True

    @property
    def receiver_initiated(self) -> bool:  # type: ignore[override]
        return self._any("receiver_initiated")

    @property
    def sender_initiated(self) -> bool:  # type: ignore[override]
        return self._any("sender_initiated")

    @property
    def low_water(self) -> int:  # type: ignore[override]
        b = self.acting() if hasattr(self, "balancers_") else None
        return 0 if b is None else b.low_water

    # --- hooks, delegated to the current phase's balancer -------------------------------------------
    def balance(self, view: TreeView) -> list[Transfer]:
        b = self.acting()
        return [] if b is None or not b.periodic else b.balance(view)

    def on_idle(self, view: TreeView, node: int):
        b = self.acting()
        return None if b is None or not b.receiver_initiated else b.on_idle(view, node)

    def on_request(self, view: TreeView, victim: int, thief: int, queue_length: int, wanted: int = 0) -> int:
        b = self.acting()
        return 0 if b is None else b.on_request(view, victim, thief, queue_length, wanted)

    def on_spawn(self, view: TreeView, node: int, n_children: int) -> list[int]:
        b = self.acting()
        if b is None or not b.sender_initiated:
            return [node] * n_children
        return b.on_spawn(view, node, n_children)
