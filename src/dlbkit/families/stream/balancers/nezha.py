"""Nezha's Algorithm 3.1: d choices within a scaling window of the servers that are not over-loaded."""

from __future__ import annotations

import math
from numbers import Integral, Real

from dlbkit.errors import ConfigError
from dlbkit.params import Interval, Options
from dlbkit.balancers.base import Taxonomy
from dlbkit.balancers.registry import register
from dlbkit.families.stream.balancers._draw import RandomizedPlacement, least

__all__ = ["Nezha", "loads", "window"]


def loads(view, load: str = "queue") -> list[float]:
    """Each node's load L_j as nezha reads it: ``queue[j] / slots[j]`` (*load* "queue", the seed's
    per-slot load) or ``(queue[j] + 1) / (speeds[j] · slots[j])`` ("wait": the expected completion of
    one more task there, in mean task demands: the tasks ahead of it and itself, served by the node's
    slots at its nominal speed; ``speed-d``'s key)."""
    q, c = view.queue, view.slots
    if load == "wait":
        s = view.speeds
        return [(q[j] + 1) / (s[j] * c[j]) for j in range(view.n_nodes)]
    return [q[j] / c[j] for j in range(view.n_nodes)]


def window(view, threshold: str, kappa: float, delta: float, level: float, floor: float, cap: float,
           load: str = "queue") -> tuple[list[int], list[float], float]:
    """The scaling window (003 §3.3.3, §3.3.5): (active nodes, loads L, l_max).

    L is :func:`loads` (*load* "queue": L_j = ``queue[j] / slots[j]``; "wait": the expected
    completion ``(queue[j] + 1) / (speeds[j] · slots[j])``). The over-load threshold l_max is
    ``mean(L) + kappa·std(L)`` (*threshold* "adaptive"), ``min(L) + delta`` ("level": the prototype's
    level-based classifier of §6.3.2.1) or *level* ("constant"), then clamped to [*floor*, *cap*]:
    *delta*, *level*, *floor* and *cap* are in L's units. A node is over-loaded (f = 1) when
    L_j > l_max, and active otherwise.
    """
    L = loads(view, load)
    if threshold == "adaptive":
        m = sum(L) / len(L)
        sd = math.sqrt(max(sum(x * x for x in L) / len(L) - m * m, 0.0))
        lmax = m + kappa * sd
    elif threshold == "level":
        lmax = min(L) + delta
    else:
        lmax = level
    lmax = min(max(lmax, floor), cap)
    return [j for j, x in enumerate(L) if x <= lmax], L, lmax


@register
class Nezha(RandomizedPlacement):
    """Algorithm 3.1 (``randdlb_improved``): find the active nodes A (those not over-loaded, by the
    fuzzy classification with an adaptive threshold); if A is empty run the task locally; otherwise
    sample *d* nodes from A (*replace*: independently, with replacement) and place the task on the
    least loaded of them (by L, see *load*; ties uniformly at random). With one active node this is
    the shortest-queue rule; with all active, the supermarket model's power of d.

    The threshold (the source gives no formula, §3.3.5 "[gap]"; these are our choices, after the
    note's (a)–(c)): loads L_j (the per-slot queue, or with *load* "wait" the expected completion);
    l_max = mean(L) + *kappa*·std(L) for *threshold* "adaptive" (it rises with the system's load and
    reacts to its spread), min(L) + *delta* for "level" (the prototype's relative, level-based
    classifier, §6.3.2.1), or *level* for "constant"; always clamped to [*floor*, *cap*] (the floor
    the source found missing at λ = 0.5, Observation 3.3; the cap the node's capacity). Over-loaded
    means L_j > l_max: with the source's "≥", a perfectly balanced cluster (std 0) would have every
    node over-loaded. *idle* is l_min: with *balance_when_idle* false, a task arriving while every
    node is idle (queue/slots ≤ l_min) stays local (§3.3.3's flag: on an idle cluster balancing may
    cost more than it gains).

    *load* (not the seed's rule: the note's modern extension, 003 §5.2 "Homogeneous servers assumed
    (same μ). Add capacity-normalized load … Heterogeneous power-of-d should compare expected
    completion time"): "queue" (default) is the seed's per-slot load L_j = queue/slots, which
    assumes identical servers; "wait" is L_j = (queue + 1)/(speed × slots), the expected completion
    of one more task there in mean task demands at speed 1 (``speed-d``'s key), used for both the
    classification and the choice among the d, so a slow node is as loaded as a fast one with
    proportionally more tasks. Under "wait" the threshold parameters keep their numbers and are read
    in the new units (one unit: the time a speed-1 slot takes for one task of mean demand); this is
    a choice made before any run, for one meaning per number and no per-node conversion: *kappa*
    is unit-free; *delta* ("level") is how much later than the best node's a task may expect to
    finish (1.0: one task at speed 1, the seed's one task per slot on unit-speed nodes); *level*
    and *cap* are bounds on that expected completion; *floor* 1.0 reads "a node on which one more
    task would finish within one task at speed 1 (an empty node of speed × slots ≥ 1) is never
    over-loaded": the seed's floor protected a node holding one task per slot, and on unit-speed
    single-slot nodes that is floor 2.0 under "wait" (L = queue + 1); an empty node slower than 1
    gets no protection from the floor, since by its expected completion it is as loaded as a speed-1
    node with tasks waiting (what the normalised load is for). *idle* is the exception: it stays on
    the per-slot queue under both loads (the idle test asks whether the cluster has work at all, not
    how fast a node would do more: under "wait" no node's L is ever 0).

    *quarantine* (§3.5.3, high availability; off by default: the source gives it as "a small
    modification to Algorithm 3.1", not part of it): when 0 < φ(t) < n, balancing is restricted to
    the φ(t) active nodes in both directions, so a node stops *receiving* tasks from others (as
    without quarantine) and also stops *sending* its own arrivals away: a task arriving at an
    over-loaded origin runs there ("the damage will be confined to the affected servers"; a
    non-malicious overload recovers by itself). A node enters quarantine, in its own view, when its
    load L (under *load*) exceeds l_max, and leaves it as soon as it is at or below l_max again: the
    classification is redone at every decision and the source gives no hysteresis, so none is added.
    The migration half of §3.5.3 has no counterpart here (this family does not migrate).

    Source: 003 §3.3.3 (Algorithm 3.1, scaling window φ(t)), §3.3.5 (fuzzy classification, adaptive
    threshold), §3.5.3 (quarantine of over-loaded nodes); *load* "wait": the note's §5.2 (not the
    dissertation's).

    Helps: over-loaded servers (a node that lost its CPU to other users, a burst at one origin) drop
    out of the sample, so the d choices are among servers that can take work; converges after an
    overload faster than the plain d choices (Observation 3.6). Backfires: needs every node's load
    (gossip, §2.8); the adaptive threshold reacts to stale loads (Observation 3.5); for a batch placed
    on one snapshot it piles tasks up (Table 15: use ``hybrid-batch`` or the view update).
    """

    name = "nezha"
    source = "003 §3.3.3 (Algorithm 3.1), §3.3.5"
    taxonomy = Taxonomy("arrival", "distributed", "global loads (as fresh as the information model)", "one task",
                        "least loaded of d random nodes within the window of nodes not over-loaded")
    _parameter_constraints = {"d": [Interval(Integral, 1, None)], "replace": [bool],
                              "threshold": [Options("adaptive", "level", "constant")],
                              "kappa": [Interval(Real, 0, None)], "delta": [Interval(Real, 0, None)],
                              "level": [Interval(Real, 0, None, closed="neither")],
                              "floor": [Interval(Real, 0, None)], "cap": [Interval(Real, 0, None, closed="neither")],
                              "idle": [Interval(Real, 0, None)], "balance_when_idle": [bool],
                              "quarantine": [bool], "load": [Options("queue", "wait")]}

    def __init__(self, *, d: int = 2, replace: bool = True, threshold: str = "adaptive", kappa: float = 1.0,
                 delta: float = 1.0, level: float = 4.0, floor: float = 1.0, cap: float = 1e6, idle: float = 0.0,
                 balance_when_idle: bool = True, quarantine: bool = False, load: str = "queue"):
        self.d = d  # 003: d = 2 is the basic form (duso, "duet-to-solo")
        self.replace = replace  # the supermarket model samples independently (with replacement)
        self.threshold = threshold
        self.kappa = kappa  # note (a): κ ≈ 1
        self.delta = delta  # note (b): Δ ≈ 1–2 load units
        self.level = level
        self.floor = floor  # note (a): at least one task per slot
        self.cap = cap  # no cap unless given (the node's capacity, per slot)
        self.idle = idle  # l_min: the load of the node's background work (0: a node with no task is idle)
        self.balance_when_idle = balance_when_idle
        self.quarantine = quarantine  # §3.5.3: over-loaded origins keep their tasks (off: Algorithm 3.1 as printed)
        self.load = load  # "queue": the seed's per-slot load; "wait": the note's expected completion (003 §5.2)

    def validate(self):
        super().validate()
        if self.floor > self.cap:
            raise ConfigError(self.param_field("floor"), self.floor, f"at most cap ({self.cap})")

    def active(self, view) -> list[int]:
        """The window: the nodes not over-loaded (:func:`window`)."""
        return window(view, self.threshold, self.kappa, self.delta, self.level, self.floor, self.cap, self.load)[0]

    def quarantined(self, view) -> bool:
        """With *quarantine*: the origin is over-loaded in its own view (its L, under *load*, above
        l_max), so it keeps its tasks (§3.5.3)."""
        if not self.quarantine:
            return False
        _, L, lmax = window(view, self.threshold, self.kappa, self.delta, self.level, self.floor, self.cap, self.load)
        return L[view.node] > lmax

    def place(self, view) -> int:
        act, L, lmax = window(view, self.threshold, self.kappa, self.delta, self.level, self.floor, self.cap, self.load)
        if not act:
            return view.node
        if self.quarantine and L[view.node] > lmax:  # the origin is over-loaded: it sends nothing away
            return view.node
        if not self.balance_when_idle and max(L if self.load == "queue" else loads(view)) <= self.idle:
            return view.node
        dr = self.draws_
        d = self.d if self.replace else min(self.d, len(act))
        return least(dr.sample(act, d, self.replace), L.__getitem__, dr)
