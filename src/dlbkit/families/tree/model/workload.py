"""Task-tree workloads (001 §3.2): balanced, repeatable random and imbalance trees, and flat task sets.

A task is an ``int`` that packs the node's id and depth, ``(id << 8) | depth``: the root is id 0 at
depth 1 and child c (0 … f−1, left to right) of node v is id ``v·f + c + 1``, so ids are unique and
the right-most child of v has ``(id − 1) % f == f − 1``. Whether a node splits is a pure function of
(seed, id, depth) through a SplitMix64 hash, so every engine, every traversal order and every rerun
expands the *same* tree (001 §6.2 item 5: the thesis's imbalance tree was not repeatable, so its
adaptive and non-adaptive runs ran different trees; here they cannot).

Splitting rules, with d the maximum depth (nothing splits at depth d):

* ``balanced``: every node above depth d splits into f (f = 2, d = 16: 65 535 nodes).
* ``random`` (after Nash et al., 001 §3.2): a node at depth k splits with probability
  ``1 − slope·(k − 1 − min_split_depth)`` once k > min_split_depth, always above it. The thesis
  gives neither slope nor hash; slope 0.00845 gives an expected 29 535 nodes at f = 2, d = 16
  (the note's calibration of the thesis's standard tree), and :meth:`TaskTree.count` reports the
  realised size for a seed. The thesis says only that the probability is "a linear function which
  decreases with depth", not that it is 1 at the root: *intercept* (default 1) is that function's
  value where it starts, ``p(k) = min(1, intercept − slope·(k − 1 − min_split_depth))``, so an
  intercept above 1 gives a tree that is full down to the depth where the line crosses 1 and thins
  steeply below it (what 001's Table 5.8 iteration counts suggest: reproduce/haron1998.py, H13).
* ``imbalance`` (Davy, 001 §3.2): the root and the right-most child of every splitting node
  always split; other children split with probability ``1 − m``. Erratum applied: the text says
  "split if rand ≤ m", which contradicts "m = 0 is the balanced tree" (001 §4.10 item 1).

Grain ``g`` is the work of every node, leaf or not (flops in 001); engines add their own per-node
and per-child overheads (the T3D model of :mod:`dlbkit.families.tree.sim.t3d`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple, Sequence

import numpy as np

from dlbkit.errors import ConfigError
from dlbkit.model import check

__all__ = ["TaskTree", "FlatTasks", "RecordedTree", "TreeSize", "tree_from_dict", "KINDS", "ORDERS", "task_id", "task_depth",
           "MAX_TREE_NODES"]


class TreeSize(NamedTuple):
    """What :meth:`TaskTree.count` returns: *nodes*, every task of the tree, and *internal*, the
    tasks that split (the rest, ``nodes - internal``, are leaves). A tuple, so ``n, k = tree.count()``
    still unpacks."""

    nodes: int
    internal: int

KINDS = ("balanced", "random", "imbalance")
ORDERS = ("df", "bf")
_MASK = (1 << 64) - 1
#: the largest expected size of a simulated tree (dlbkit's limit: a simulation handles every task as
#: events, about a microsecond each, so 1e8 tasks is minutes of simulation; 001's trees have 65 535)
MAX_TREE_NODES = 10**8
_DEPTH_BITS = 8
_DEPTH_MASK = (1 << _DEPTH_BITS) - 1


def task_id(task: int) -> int:
    return task >> _DEPTH_BITS


def task_depth(task: int) -> int:
    return task & _DEPTH_MASK


def _unit(seed: int, node: int) -> float:
    """A uniform draw in [0, 1) that depends only on (seed, node id): SplitMix64's finaliser."""
    z = (seed * 0x9E3779B97F4A7C15 + node + 1) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    z ^= z >> 31
    return (z >> 11) * (1.0 / (1 << 53))


@dataclass(frozen=True)
class TaskTree:
    """A divide-and-conquer or branch-and-bound tree (001 §3.2): *kind*, maximum *depth* d (root at
    depth 1), *fanout* f, *grain* g (work per node), *imbalance* m, *min_split_depth*, the random
    tree's *slope* (and *intercept*, last so that positional use is unchanged), *seed* (for random and
    imbalance trees) and the local traversal *order*: ``df``
    (LIFO stack, run the newest; the default, as in 001 Ch. 5) or ``bf`` (FIFO queue, run the
    oldest). Migration always takes the oldest task, the one nearest the root."""

    kind: str = "balanced"
    depth: int = 16
    fanout: int = 2
    grain: float = 100.0
    imbalance: float = 0.0
    min_split_depth: int = 0
    slope: float = 0.00845
    seed: int = 0
    order: str = "df"
    intercept: float = 1.0

    def __post_init__(self):
        check.choice(self.kind, "workload.kind", KINDS)
        check.choice(self.order, "workload.order", ORDERS)
        check.integer(self.depth, "workload.depth", lo=1, hi=(1 << _DEPTH_BITS) - 1)
        check.integer(self.fanout, "workload.fanout", lo=1)
        check.number(self.grain, "workload.grain", lo=0.0)
        check.number(self.imbalance, "workload.imbalance", lo=0.0, hi=1.0)
        check.integer(self.min_split_depth, "workload.min_split_depth", lo=0)
        check.number(self.slope, "workload.slope", lo=0.0, hi=1.0)
        check.number(self.intercept, "workload.intercept", lo=0.0)
        check.integer(self.seed, "workload.seed", lo=0)
        expected = self.expected_nodes()
        if expected > MAX_TREE_NODES:
            raise ConfigError("workload.depth", self.depth, f"small enough for the fanout ({self.fanout}) that "
                              f"the tree has at most {MAX_TREE_NODES:,} tasks (dlbkit's limit on simulated trees; "
                              f"this one has about {expected:.3g})")

    # -- structure ---------------------------------------------------------------------------------

    def roots(self) -> list[int]:
        """The initial tasks, all on node 0 (oldest first)."""
        return [1]  # id 0, depth 1

    def splits(self, task: int) -> bool:
        """Whether *task* expands into children (False: a leaf)."""
        k = task & _DEPTH_MASK
        if k >= self.depth:
            return False
        kind = self.kind
        if kind == "balanced":
            return True
        v = task >> _DEPTH_BITS
        if kind == "random":
            if k <= self.min_split_depth:
                return True
            return _unit(self.seed, v) < self.intercept - self.slope * (k - 1 - self.min_split_depth)
        f = self.fanout
        if v == 0 or (v - 1) % f == f - 1:
            return True
        return _unit(self.seed, v) < 1.0 - self.imbalance

    def children(self, task: int) -> list[int]:
        """The children of *task* in creation order (left to right); empty for a leaf."""
        if not self.splits(task):
            return []
        f = self.fanout
        base = (task >> _DEPTH_BITS) * f + 1
        k = (task & _DEPTH_MASK) + 1
        return [((base + c) << _DEPTH_BITS) | k for c in range(f)]

    def cost(self, task: int) -> float:
        """Work of one node (its grain)."""
        return self.grain

    def estimate(self, task: int) -> float:
        """Expected number of nodes in the subtree rooted at *task*, itself included (the remaining
        work a queued task stands for: what a work-based phase detector sums, 001 §6.2 item 3)."""
        k = task & _DEPTH_MASK
        spine, other = self._subtree_sizes
        if self.kind == "imbalance":
            v = task >> _DEPTH_BITS
            f = self.fanout
            return spine[k] if v == 0 or (v - 1) % f == f - 1 else other[k]
        return other[k]

    def _p_random(self, k: int) -> float:
        """The random tree's split probability at depth k > min_split_depth, clipped to [0, 1]."""
        return min(1.0, max(0.0, self.intercept - self.slope * (k - 1 - self.min_split_depth)))

    @cached_property
    def _subtree_sizes(self) -> tuple[list[float], list[float]]:
        """Expected subtree sizes by depth: (always-splitting nodes, other nodes); index = depth."""
        f, d = self.fanout, self.depth
        spine = [0.0] * (d + 2)
        other = [0.0] * (d + 2)
        for k in range(d, 0, -1):
            if k == d:
                spine[k] = other[k] = 1.0
                continue
            if self.kind == "balanced" or (self.kind == "random" and k <= self.min_split_depth):
                p = 1.0
            elif self.kind == "random":
                p = self._p_random(k)
            else:
                p = 1.0 - self.imbalance
            if self.kind == "imbalance":
                below = spine[k + 1] + (f - 1) * other[k + 1]
                spine[k] = 1.0 + below
                other[k] = 1.0 + p * below
            else:
                other[k] = spine[k] = 1.0 + p * f * other[k + 1]
        return spine, other

    def count(self) -> TreeSize:
        """The tree's size, by expanding it: ``TreeSize(nodes, internal)``, every task and the tasks
        that split (a named tuple: ``tree.count().nodes``)."""
        nodes = internal = 0
        stack = self.roots()
        while stack:
            t = stack.pop()
            nodes += 1
            ch = self.children(t)
            if ch:
                internal += 1
                stack.extend(ch)
        return TreeSize(nodes, internal)

    def expected_nodes(self) -> float:
        """The expected size over seeds (exact for balanced; per-depth expectation otherwise)."""
        f, d = self.fanout, self.depth
        if self.kind == "imbalance":
            # splitting nodes per level grow by 1 + (f - 1)(1 - m): each has one always-splitting
            # right-most child and f - 1 others that split with probability 1 - m
            grow, splitting, total = 1 + (f - 1) * (1 - self.imbalance), 1.0, 1.0
            for _ in range(d - 1):
                total += f * splitting
                splitting *= grow
            return total
        total, level = 0.0, 1.0
        for k in range(1, d + 1):
            total += level
            if self.kind == "balanced" or k <= self.min_split_depth:
                p = 1.0
            else:
                p = self._p_random(k)
            level *= f * p if k < d else 0.0
        return total


@dataclass(frozen=True)
class FlatTasks:
    """N independent tasks (no children) with given costs, all queued on node 0 with task 0 oldest
    (the workload of docs/reference-models.md, M2). Tasks are their indices."""

    costs: Sequence[float]
    order: str = "df"

    def __post_init__(self):
        check.choice(self.order, "workload.order", ORDERS)
        if isinstance(self.costs, (str, bytes)) or not hasattr(self.costs, "__len__") or len(self.costs) < 1:
            raise ConfigError("workload.costs", self.costs, "a non-empty sequence of task costs")
        try:
            arr = np.asarray(self.costs, dtype=float)
        except (TypeError, ValueError):
            arr = None
        bad = np.ones(1, dtype=bool) if arr is None or arr.ndim != 1 else ~(np.isfinite(arr) & (arr >= 0))
        if bad.any():  # name the first offending cost, checked one by one
            for k, c in enumerate(self.costs):
                check.number(c, f"workload.costs[{k}]", lo=0.0)

    def roots(self) -> list[int]:
        return list(range(len(self.costs)))

    def splits(self, task: int) -> bool:
        return False

    def children(self, task: int) -> list[int]:
        return []

    def cost(self, task: int) -> float:
        return self.costs[task]

    def estimate(self, task: int) -> float:
        return 1.0

    def count(self) -> TreeSize:
        """``TreeSize(nodes, internal)``: every task, none of which splits."""
        return TreeSize(len(self.costs), 0)


class RecordedTree:
    """A task tree given task by task: task k's *costs*[k] and its *children*[k] (task indices, in creation
    order); task 0 is the root, queued on node 0. A real run's recorded tree
    (:mod:`dlbkit.families.tree.face.replay`). A task's :meth:`estimate` is its subtree's exact size."""

    def __init__(self, costs: Sequence[float], children: Sequence[Sequence[int]], order: str = "df"):
        check.choice(order, "workload.order", ORDERS)
        if len(costs) < 1 or len(children) != len(costs):
            raise ConfigError("workload.children", f"{len(children)} lists", f"one per task ({len(costs)})")
        self.costs = [float(c) for c in costs]
        self.kids = [list(c) for c in children]
        self.order = order
        size = [1] * len(costs)
        for k in reversed(self._preorder()):  # children before parents
            size[k] += sum(size[c] for c in self.kids[k])
        self.sizes = size

    def _preorder(self) -> list[int]:
        out, stack = [], [0]
        while stack:
            k = stack.pop()
            out.append(k)
            stack.extend(self.kids[k])
        return out

    def roots(self) -> list[int]:
        return [0]

    def splits(self, task: int) -> bool:
        return bool(self.kids[task])

    def children(self, task: int) -> list[int]:
        return self.kids[task]

    def cost(self, task: int) -> float:
        return self.costs[task]

    def estimate(self, task: int) -> float:
        return float(self.sizes[task])

    def count(self) -> TreeSize:
        """``TreeSize(nodes, internal)``: every task, and the tasks that have children."""
        return TreeSize(len(self.costs), sum(1 for c in self.kids if c))


def tree_from_dict(d: Any, field: str = "workload") -> TaskTree:
    """A :class:`TaskTree` from a TOML table: ``kind = "tree"`` (the family, optional), ``shape``
    (balanced, random or imbalance: the dataclass's *kind*), and the other fields by name."""
    d = check.table(d, field)
    allowed = {"kind", "shape", "depth", "fanout", "grain", "imbalance", "min_split_depth", "slope", "intercept",
               "seed", "order"}
    check.known_keys(d, field, allowed)
    check.choice(d.get("kind", "tree"), f"{field}.kind", {"tree"})
    kw: dict[str, Any] = {k: v for k, v in d.items() if k not in ("kind", "shape")}
    if "shape" in d:
        kw["kind"] = d["shape"]
    try:
        return TaskTree(**kw)
    except ConfigError as e:
        where = e.field.replace("workload.kind", f"{field}.shape").replace("workload", field, 1)
        raise ConfigError(where, e.value, e.allowed) from None
