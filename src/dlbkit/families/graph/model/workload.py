"""The task-graph workload: a DAG of tasks with computation weights and edges with data volumes (002).

A :class:`TaskGraph` is what the graph family schedules (Sinclair 1993, 002 §2.1: a *program graph*;
Topcuoglu, Hariri & Wu 2002: an *application DAG*). Each task has either a **load** (time at speed 1;
on a node of speed *s* it takes ``load / s``: uniform machines, 002 §2.3) or a **cost table** (its time
on each node: unrelated machines, as in Topcuoglu 2002's Table 1). Each edge ``(src, dst, data)``
is a precedence constraint carrying *data* (a volume; what it costs in time is the cost model's
business, :mod:`dlbkit.families.graph.model.costs`).

Tasks are indexed 0 … n−1 in the order given; ``ids`` keep the user's names (strings or ints). The
graph is checked once, when built: unique ids, loads finite and ≥ 0, a cost table of one width,
edges between known tasks, data ≥ 0, no self-loop, no duplicate edge, no cycle. Every failure is a
:class:`~dlbkit.errors.ConfigError` naming the field, the value and what is allowed.

Readers and writers: JSON (``{"tasks": [{"id": "a", "load": 3} | {"id": "a", "costs": [14, 16, 9]}],
"edges": [{"from": "a", "to": "b", "data": 18}]}``), the Kasahara Standard Task Graph format ``.stg``
(below), WfCommons' WfFormat workflows (a ``.json`` with ``schemaVersion`` and ``workflow`` at its top
level: :func:`read_wfformat`, parsed by :mod:`dlbkit.families.graph.model.wfformat`; written by
:func:`write_wfformat`, :mod:`dlbkit.families.graph.model.wfformat_write`), Pegasus DAX workflows (a
``.dax``, or an ``.xml`` whose root is ``<adag>``: :func:`read_dax`, parsed by
:mod:`dlbkit.families.graph.model.dax`), and networkx
(:meth:`TaskGraph.to_networkx`,
:meth:`TaskGraph.from_networkx`). Generators live in :mod:`dlbkit.families.graph.model.generate`.

**STG** (Kasahara laboratory, Waseda University, "Standard Task Graph Set", format page): the first
line is the number *n* of tasks, not counting the two dummies; then *n* + 2 lines ``task time
n_preds pred ...``: task 0 is the dummy entry and task *n* + 1 the dummy exit, both of processing
time 0. Lines starting with ``#`` (the information part) and blank lines are ignored. The set has
no communication costs: every edge's data is 0. Task ids are the integers of the file, dummies
included (002 §2.1 adds the same dummy entry and exit tasks of zero weight).

**ADG** (the application descriptor of Sinclair's PD simulator, 002 §6 as the note's §8.8 gives it):
one task per line, ``id type n_preds load prec (succ,comm) (succ,comm) ...`` with type 1 = root,
2 = normal, 3 = terminal. The reader takes ids, loads and the edges; it checks that *n_preds* is the
number of edges into the task and that the type agrees with the edges; *prec* is recomputed by dlbkit
(the writer writes 002's precedence level, terminal load included).

The STG and ADG readers were written from the formats' descriptions, not from any other parser.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from itertools import chain
from numbers import Real
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Hashable, Iterable, Mapping, Sequence

import numpy as np

from dlbkit.errors import ConfigError
from dlbkit.model import check
from dlbkit.model.check import renamed
from dlbkit.model.gcpause import paused_gc
from dlbkit.model.topology import is_networkx

from . import dax, wfformat
from .wfformat_write import to_wfformat, write_wfformat

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["TaskGraph", "read", "write", "read_wfformat", "from_wfformat", "to_wfformat", "write_wfformat",
           "read_dax", "from_dax", "from_stg", "to_stg", "from_json", "to_json", "from_adg", "to_adg",
           "MAX_TASKS"]

#: the most tasks a graph may have, generated (:mod:`.graph_gen`) or a real run's
#: (:mod:`dlbkit.families.graph.runtime.tasks`: checked before any work, the coordinator keeps every result)
MAX_TASKS = 10_000_000


def _num(value: Any, field_: str) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ConfigError(field_, value, "a finite number >= 0")
    try:
        finite = math.isfinite(value)
    except OverflowError:  # an int too large for a float (a 400-digit integer in a JSON file)
        finite = False
    if not finite or value < 0:
        raise ConfigError(field_, value, "a finite number >= 0")
    # dlbkit's magnitude limit (1e30): a load or data of 1e308 made every sum along a path inf
    # (an infinite makespan, metis's weight scaling a NaN traceback)
    return check.number(value, field_, lo=0.0)


@dataclass(frozen=True, eq=False)
class TaskGraph:
    """A DAG of *ids* with *loads* (one per task) or *costs* (one row per task, one column per node),
    and *edges* ``(src_id, dst_id, data)``.

    >>> g = TaskGraph(["a", "b", "c"], loads=[1, 2, 3], edges=[("a", "b", 4), ("a", "c", 0)])
    >>> g.n_tasks, g.n_edges, g.succs[0]
    (3, 2, [(1, 4.0), (2, 0.0)])
    """

    ids: tuple
    loads: tuple | None = None
    costs: tuple | None = None
    edges: tuple = ()
    name: str = "graph"
    # derived (indices, filled by __post_init__)
    index: dict = field(init=False, repr=False)
    preds: list = field(init=False, repr=False)  #: preds[i] = [(p, data), ...]
    succs: list = field(init=False, repr=False)  #: succs[i] = [(s, data), ...]
    topo: tuple = field(init=False, repr=False)  #: a topological order (smallest index first among ready)
    #: what a reader kept from its file beyond the graph (a WfFormat workflow's machines and recorded
    #: makespan: :mod:`.wfformat`); a plain class attribute, not a field, so it is in no equality,
    #: digest or writer, and a graph built otherwise has this empty mapping
    meta = MappingProxyType({})

    def __post_init__(self):
        with paused_gc():  # a large graph is millions of tuples and lists, and no cycle
            self._build()

    def _build(self):
        ids = tuple(self.ids)
        if not ids:
            raise ConfigError("tasks", [], "a non-empty list of tasks")
        index = _index_fast(ids)
        if index is None:
            index = _index_checked(ids)
        n = len(ids)
        if (self.loads is None) == (self.costs is None):
            raise ConfigError("tasks", "loads and costs" if self.loads is not None else "neither",
                              "either a load per task or a cost table (one row per task), not both")
        loads = costs = None
        if self.loads is not None:
            loads = tuple(self.loads)
            if len(loads) != n:
                raise ConfigError("loads", f"{len(loads)} values", f"one load per task ({n})")
            fast = _numbers_fast(loads)
            loads = fast if fast is not None else tuple(_num(v, f"tasks[{ids[i]!r}].load") for i, v in enumerate(loads))
        else:
            rows = [tuple(r) if isinstance(r, (list, tuple)) else r for r in self.costs]
            if len(rows) != n:
                raise ConfigError("costs", f"{len(rows)} rows", f"one row per task ({n})")
            costs = _table_fast(rows)
            if costs is None:
                costs = _table_checked(rows, ids)
        fast = _edges_fast(self.edges, index, n)
        edges, preds, succs, ordered = fast if fast is not None else _edges_checked(self.edges, index, n)
        # Kahn's order, smallest index first, is 0 … n−1 when every edge goes to a later index (once
        # 0 … i−1 are out, task i is ready and every other ready task comes later): no heap needed
        topo = tuple(range(n)) if ordered else _topological(preds, succs, ids)
        for name, v in (("ids", ids), ("loads", loads), ("costs", costs), ("edges", tuple(edges)),
                        ("index", index), ("preds", preds), ("succs", succs), ("topo", topo)):
            object.__setattr__(self, name, v)

    # --- size and weights ----------------------------------------------------------------------
    @property
    def n_tasks(self) -> int:
        return len(self.ids)

    @property
    def n_edges(self) -> int:
        return len(self.edges)

    @property
    def width(self) -> int | None:
        """The cost table's number of columns (nodes), or None for loads."""
        return None if self.costs is None else len(self.costs[0])

    def weight(self, i: int) -> float:
        """Task *i*'s computation at speed 1: its load, or the mean of its cost row."""
        if self.loads is not None:
            return self.loads[i]
        row = self.costs[i]
        return sum(row) / len(row)

    def exec_times(self, speeds: Sequence[float]) -> list[list[float]]:
        """Task × node execution times: ``load / speed``, or the cost table (its width must be the
        number of nodes)."""
        m = len(speeds)
        if self.costs is not None:
            if self.width != m:
                raise ConfigError("costs", f"{self.width} columns",
                                  f"a cost table with one column per node ({m} nodes)")
            return [list(r) for r in self.costs]
        inv = [1.0 / s for s in speeds]
        return [[w * v for v in inv] for w in self.loads]

    @property
    def entries(self) -> list[int]:
        return [i for i in range(self.n_tasks) if not self.preds[i]]

    @property
    def exits(self) -> list[int]:
        return [i for i in range(self.n_tasks) if not self.succs[i]]

    # --- networkx ------------------------------------------------------------------------------
    def to_networkx(self) -> nx.DiGraph:
        """A DiGraph with node attribute ``load`` (or ``costs``) and edge attribute ``data``, in task order."""
        import networkx as nx

        g = nx.DiGraph(name=self.name)
        for i, t in enumerate(self.ids):
            if self.loads is not None:
                g.add_node(t, load=self.loads[i])
            else:
                g.add_node(t, costs=list(self.costs[i]))
        for s, d, data in self.edges:
            g.add_edge(s, d, data=data)
        return g

    @classmethod
    def from_networkx(cls, g: nx.DiGraph, *, name: str | None = None) -> "TaskGraph":
        """From a DiGraph whose nodes carry ``load`` (default 1 when no node has costs) or ``costs``,
        and whose edges carry ``data`` (default 0)."""
        if not is_networkx(g, "DiGraph"):
            raise ConfigError("graph", type(g).__name__, "a networkx.DiGraph")
        nodes = list(g.nodes(data=True))
        has_costs = any("costs" in a for _, a in nodes)
        ids = [t for t, _ in nodes]
        edges = [(s, d, a.get("data", 0.0)) for s, d, a in g.edges(data=True)]
        nm = name or g.graph.get("name") or "graph"
        if has_costs:
            missing = [t for t, a in nodes if "costs" not in a]
            if missing:
                raise ConfigError(f"node {missing[0]!r}.costs", "<missing>",
                                  "given for every node when one node has costs")
            return cls(ids, costs=[a["costs"] for _, a in nodes], edges=edges, name=nm)
        return cls(ids, loads=[a.get("load", 1.0) for _, a in nodes], edges=edges, name=nm)

    # --- dict (JSON) ---------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The JSON form (``{"tasks": [...], "edges": [...]}``); :meth:`from_dict` reads it back."""
        tasks = []
        for i, t in enumerate(self.ids):
            tasks.append({"id": t, "load": self.loads[i]} if self.loads is not None else
                         {"id": t, "costs": list(self.costs[i])})
        return {"name": self.name, "tasks": tasks,
                "edges": [{"from": s, "to": d, "data": data} for s, d, data in self.edges]}

    @classmethod
    def from_dict(cls, d: Mapping, path: str = "graph") -> "TaskGraph":
        if not isinstance(d, Mapping):
            raise ConfigError(path, type(d).__name__, 'an object {"tasks": [...], "edges": [...]}')
        unknown = set(d) - {"name", "tasks", "edges"}
        if unknown:
            raise ConfigError(f"{path}.{sorted(unknown)[0]}", "<unknown field>", "absent; known fields: name, tasks, edges")
        tasks = d.get("tasks")
        if not isinstance(tasks, list) or not tasks:
            raise ConfigError(f"{path}.tasks", tasks, 'a non-empty list of {"id": ..., "load": x} or {"id": ..., "costs": [...]}')
        ids, loads, costs = [], [], []
        for k, t in enumerate(tasks):
            if not isinstance(t, Mapping) or "id" not in t or (("load" in t) == ("costs" in t)):
                raise ConfigError(f"{path}.tasks[{k}]", t, 'an object with "id" and exactly one of "load" or "costs"')
            extra = set(t) - {"id", "load", "costs"}
            if extra:
                raise ConfigError(f"{path}.tasks[{k}].{sorted(extra)[0]}", "<unknown field>", "absent; known: id, load, costs")
            ids.append(t["id"])
            (loads if "load" in t else costs).append(t.get("load", t.get("costs")))
        if loads and costs:
            raise ConfigError(f"{path}.tasks", "a mix of load and costs", "all tasks with a load, or all with costs")
        edges = []
        raw = d.get("edges", [])
        if not isinstance(raw, list):
            raise ConfigError(f"{path}.edges", raw, 'a list of {"from": id, "to": id, "data": x}')
        for k, e in enumerate(raw):
            if not isinstance(e, Mapping) or "from" not in e or "to" not in e or set(e) - {"from", "to", "data"}:
                raise ConfigError(f"{path}.edges[{k}]", e, 'an object {"from": id, "to": id, "data": x} (data optional)')
            edges.append((e["from"], e["to"], e.get("data", 0.0)))
        name = d.get("name", "graph")
        # the constructor's "edges[k]…" and "tasks[…]…", under *path* as the file has them
        with renamed("edges", f"{path}.edges"), renamed("tasks", f"{path}.tasks"):
            if loads:
                return cls(ids, loads=loads, edges=edges, name=str(name))
            return cls(ids, costs=costs, edges=edges, name=str(name))

    # --- files ---------------------------------------------------------------------------------
    @classmethod
    def read(cls, path, *, reference_mhz: float | None = None) -> "TaskGraph":
        """Read a ``.json`` (dlbkit's or a WfCommons WfFormat workflow, by content), Kasahara ``.stg``,
        thesis ``.adg`` or Pegasus DAX (``.dax``, ``.xml``) file (by suffix; :func:`read`)."""
        return read(path, reference_mhz=reference_mhz)

    def write(self, path) -> None:
        """Write a ``.json`` (dlbkit's), ``.stg`` or ``.adg`` file (by suffix; :func:`write`); WfFormat:
        :func:`write_wfformat`."""
        write(self, path)

    def __repr__(self) -> str:
        kind = "loads" if self.loads is not None else f"costs on {self.width} nodes"
        return f"TaskGraph({self.name!r}, {self.n_tasks} tasks, {self.n_edges} edges, {kind})"


# --- checking a graph when it is built ------------------------------------------------------------
# Each part has a checked loop (the reference: it names the first bad field) and a fast path for the
# common case (plain ints, strings and floats; numpy checks the numbers), which returns None as soon as
# anything is unusual, and the checked loop then runs from the start. So a graph is the same, and an
# error the same message, whichever path builds it; the fast path builds the 8.4 M-task in-tree in
# 15 s of CPU instead of 52 (BENCHMARKS.md, "Building large graphs, availability segments and Gantt
# rectangles").
_ID_TYPES = {int, str}
_NUMBER_TYPES = {float, int}


def _index_checked(ids: tuple) -> dict:
    index: dict[Hashable, int] = {}
    for i, t in enumerate(ids):
        if isinstance(t, bool) or not isinstance(t, (str, int)):
            raise ConfigError(f"tasks[{i}].id", t, "a string or an integer")
        if t in index:
            raise ConfigError(f"tasks[{i}].id", t, "unique across tasks")
        index[t] = i
    return index


def _index_fast(ids: tuple) -> dict | None:
    if not set(map(type, ids)) <= _ID_TYPES:  # bool, a subclass of int, is refused by the checked loop
        return None
    index = dict(zip(ids, range(len(ids))))
    return index if len(index) == len(ids) else None


def _numbers_ok(values, types: set) -> bool:
    """Whether *values* (a list of numbers, or of equal-length tuples of numbers, of *types*) are each a
    float or an int that :func:`_num` accepts: finite, in [0, HUGE]. One numpy array checks them all."""
    if not types <= _NUMBER_TYPES:
        return False
    try:
        arr = np.array(values, dtype=float)
    except OverflowError:  # an int too large for a float
        return False
    if not ((arr >= 0.0).all() and (arr <= check.HUGE).all()):  # NaN fails both
        return False
    # an int compares with HUGE exactly, its conversion rounds: leave such ints to the checked loop
    return not (int in types and arr.size and arr.max() > 2.0 ** 53)


def _numbers_fast(values) -> tuple | None:
    """*values* as a tuple of floats when each is a float or an int, finite, in [0, HUGE] (what
    :func:`_num` accepts and returns), else None."""
    if not _numbers_ok(values, set(map(type, values))):
        return None
    return tuple(map(float, values))  # a float is returned as is: equal values share one object


def _table_checked(rows: list, ids: tuple) -> tuple:
    """The cost table as a tuple of float tuples: the checked loop (*rows*: each task's row, a tuple
    when it was a list or a tuple); it names the first bad row or entry."""
    width = None
    out = []
    for i, r in enumerate(rows):
        if not isinstance(r, tuple) or not r:
            raise ConfigError(f"tasks[{ids[i]!r}].costs", r, "a non-empty list of numbers, one per node")
        if width is None:
            width = len(r)
        elif len(r) != width:
            raise ConfigError(f"tasks[{ids[i]!r}].costs", f"{len(r)} values",
                              f"{width} values, one per node (the width of the first task's costs)")
        out.append(tuple(_num(v, f"tasks[{ids[i]!r}].costs[{k}]") for k, v in enumerate(r)))
    return tuple(out)


def _table_fast(rows: list) -> tuple | None:
    """What :func:`_table_checked` returns, when every row is a non-empty tuple of one width and every
    entry a float or an int it accepts; else None. The loop calls :func:`_num` per entry (96 % of
    building ``layered(200_000, nodes=64)``'s 12.8 M entries); here one array checks them all."""
    if not rows or set(map(type, rows)) != {tuple}:
        return None
    width = len(rows[0])
    if not width or set(map(len, rows)) != {width}:  # equal widths: np.array makes one 2-D array
        return None
    types = set(map(type, chain.from_iterable(rows)))
    if not _numbers_ok(rows, types):
        return None
    if types == {float}:  # the loop's rows would be equal tuples of the same floats: keep these
        return tuple(rows)
    return tuple(tuple(map(float, r)) for r in rows)


def _edges_checked(given, index: dict, n: int) -> tuple:
    """(edges, preds, succs, ordered): the checked loop; *ordered*: every edge goes to a later index."""
    preds: list[list] = [[] for _ in range(n)]
    succs: list[list] = [[] for _ in range(n)]
    edges = []
    seen = set()
    ordered = True
    for k, e in enumerate(given):
        if not isinstance(e, (list, tuple)) or len(e) not in (2, 3):
            raise ConfigError(f"edges[{k}]", e, "(from, to) or (from, to, data)")
        s, d = e[0], e[1]
        data = _num(e[2] if len(e) == 3 else 0.0, f"edges[{k}].data")
        for end, t in (("from", s), ("to", d)):
            if isinstance(t, bool) or not isinstance(t, (str, int)) or t not in index:  # ids: str or int
                raise ConfigError(f"edges[{k}].{end}", t, "the id of a task of the graph")
        i, j = index[s], index[d]
        if i == j:
            raise ConfigError(f"edges[{k}]", (s, d), "an edge between two different tasks (no self-loop)")
        if (i, j) in seen:
            raise ConfigError(f"edges[{k}]", (s, d), "at most one edge per ordered pair of tasks")
        seen.add((i, j))
        ordered = ordered and i < j
        edges.append((s, d, data))
        succs[i].append((j, data))
        preds[j].append((i, data))
    return edges, preds, succs, ordered


def _edges_fast(given, index: dict, n: int) -> tuple | None:
    """What :func:`_edges_checked` returns, for edges that are all (from, to, data) tuples of int or
    string ids and float or int data, with no self-loop and no duplicate; else None."""
    if not isinstance(given, (list, tuple)) or not given:  # an iterator is read once, by the checked loop
        return None
    if set(map(type, given)) != {tuple} or set(map(len, given)) != {3}:
        return None
    srcs, dsts, datas = zip(*given)
    if not (set(map(type, srcs)) <= _ID_TYPES and set(map(type, dsts)) <= _ID_TYPES):
        return None
    data = _numbers_fast(datas)
    if data is None:
        return None
    try:
        src = np.fromiter(map(index.__getitem__, srcs), dtype=np.int64, count=len(srcs))
        dst = np.fromiter(map(index.__getitem__, dsts), dtype=np.int64, count=len(dsts))
    except KeyError:
        return None
    if (src == dst).any():
        return None
    pairs = src * n + dst  # one code per (from, to)
    if not (pairs[1:] > pairs[:-1]).all():  # not listed in (from, to) order: sort to find a repeat
        pairs.sort()
        if (pairs[1:] == pairs[:-1]).any():
            return None
    # preds[j] / succs[i] list their edges in the given order: a stable sort by task, then one slice
    # per task of the sorted (other end, data) pairs. The pairs hold the index's ints and the data's
    # floats, as the checked loop's do, not copies (a copy is 32 B an int, 24 B a float)
    numbers = list(index.values())  # numbers[i] is i: ids are unique, the index lists them in order
    succs = _grouped(src, dst, numbers, data, n)
    preds = _grouped(dst, src, numbers, data, n)
    return list(zip(srcs, dsts, data)), preds, succs, bool((src < dst).all())


def _grouped(key: np.ndarray, other: np.ndarray, numbers: list, data: tuple, n: int) -> list:
    order = np.argsort(key, kind="stable")
    pairs = list(zip(map(numbers.__getitem__, other[order].tolist()), map(data.__getitem__, order.tolist())))
    bounds = np.searchsorted(key[order], np.arange(n + 1)).tolist()
    return [pairs[a:b] for a, b in zip(bounds, bounds[1:])]

def _topological(preds: list, succs: list, ids: tuple) -> tuple:
    """Kahn's algorithm (smallest index first); a cycle is a ConfigError naming tasks on it."""
    import heapq
    n = len(preds)
    npred = [len(p) for p in preds]
    ready = [i for i in range(n) if npred[i] == 0]
    heapq.heapify(ready)
    out = []
    while ready:
        i = heapq.heappop(ready)
        out.append(i)
        for j, _ in succs[i]:
            npred[j] -= 1
            if npred[j] == 0:
                heapq.heappush(ready, j)
    if len(out) < n:
        left = {i for i in range(n) if npred[i] > 0}
        # walk predecessors inside the leftover set until a task repeats: that is a cycle
        i = min(left)
        path, pos = [], {}
        while i not in pos:
            pos[i] = len(path)
            path.append(i)
            i = next(p for p, _ in preds[i] if p in left)
        cyc = path[pos[i]:][::-1]
        raise ConfigError("edges", " -> ".join(str(ids[k]) for k in cyc + [cyc[0]]),
                          "a directed acyclic graph (this is a cycle)")
    return tuple(out)


def from_edges(loads: Mapping[Hashable, float], edges: Iterable[tuple], name: str = "graph") -> TaskGraph:
    """Shorthand: a TaskGraph from ``{id: load}`` and ``(src, dst, data)`` triples."""
    return TaskGraph(list(loads), loads=list(loads.values()), edges=list(edges), name=name)


# --- files: JSON and STG ---------------------------------------------------------------------------
def from_json(text: str, path: str = "graph") -> TaskGraph:
    try:
        d = json.loads(text)
    except json.JSONDecodeError as e:
        raise ConfigError(f"JSON in {path}", str(e), "valid JSON") from None
    return TaskGraph.from_dict(d, path)


def to_json(g: TaskGraph) -> str:
    return json.dumps(g.to_dict(), indent=1)


def from_stg(text: str, path: str = "graph.stg") -> TaskGraph:
    """A TaskGraph from STG text (loads = processing times, data 0)."""
    lines = [ln.split() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if not lines:
        raise ConfigError(path, "<empty>", "an STG file: a task count, then one line per task")
    try:
        rows = [[int(x) for x in ln] for ln in lines]
    except ValueError:
        bad = next(ln for ln in lines if not all(x.lstrip("-").isdigit() for x in ln))
        raise ConfigError(f"{path} line {' '.join(bad)!r}", bad, "integers only (task time n_preds preds...)") from None
    if len(rows[0]) != 1 or rows[0][0] < 0:
        raise ConfigError(f"{path} first line", lines[0], "the number of tasks (one integer >= 0)")
    n = rows[0][0]
    body = rows[1:]
    if len(body) != n + 2:
        raise ConfigError(f"{path}", f"{len(body)} task lines", f"n + 2 = {n + 2} task lines (dummy entry and exit included)")
    ids, loads, edges = [], [], []
    for k, r in enumerate(body):
        if len(r) < 3 or len(r) != 3 + r[2] or r[2] < 0:
            raise ConfigError(f"{path} task line {k}", r, "task time n_preds followed by n_preds predecessors")
        if r[0] != k:
            raise ConfigError(f"{path} task line {k}", r[0], f"task number {k} (tasks are numbered in order)")
        if r[1] < 0:
            raise ConfigError(f"{path} task {k} time", r[1], "an integer >= 0")
        ids.append(k)
        loads.append(r[1])
        edges.extend((p, k, 0.0) for p in r[3:])
    if loads[0] != 0 or loads[-1] != 0:
        raise ConfigError(f"{path} dummy tasks", (loads[0], loads[-1]), "processing time 0 (entry and exit)")
    with renamed("edges", f"{path}.edges"), renamed("tasks", f"{path}.tasks"):  # the file named, as JSON's are
        return TaskGraph(ids, loads=loads, edges=edges, name=Path(path).stem)


def to_stg(g: TaskGraph) -> str:
    """STG text of *g*: tasks must be 0..n+1 with integer loads, 0 at both dummies, and no data."""
    n = g.n_tasks
    if list(g.ids) != list(range(n)) or g.loads is None:
        raise ConfigError("graph", g.name, "tasks numbered 0..n+1 with loads (the STG format) to write .stg")
    if any(float(x) != int(x) for x in g.loads) or g.loads[0] != 0 or g.loads[-1] != 0:
        raise ConfigError("graph loads", g.name, "integers, 0 at the dummy entry and exit (the STG format)")
    if any(d for _, _, d in g.edges):
        raise ConfigError("graph edges", g.name, "data 0 on every edge (STG carries no communication)")
    out = [f"{n - 2:11d}"]
    for i in range(n):
        ps = [p for p, _ in g.preds[i]]
        out.append("".join(f"{v:11d}" for v in [i, int(g.loads[i]), len(ps), *ps]))
    out.append(f"# written by dlbkit from {g.name}")
    return "\n".join(out) + "\n"


def from_adg(text: str, path: str = "graph.adg") -> TaskGraph:
    """A TaskGraph from the thesis simulator's ``.adg`` text."""
    import re
    ids, loads, edges, npreds, types = [], [], [], [], []
    for k, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        head = line.split("(")[0].split()
        pairs = re.findall(r"\(\s*([^,()\s]+)\s*,\s*([^()\s]+)\s*\)", line)
        if len(head) != 5 or line.count("(") != len(pairs):
            raise ConfigError(f"{path} line {k}", line.strip(), "id type n_preds load prec (succ,comm) ...")
        try:
            tid, typ, npred, load = int(head[0]), int(head[1]), int(head[2]), float(head[3])
            float(head[4])
            succ = [(int(a), float(b)) for a, b in pairs]
        except ValueError:
            raise ConfigError(f"{path} line {k}", line.strip(), "integers for id, type, n_preds and successor ids; "
                              "numbers for load, prec and comm") from None
        if typ not in (1, 2, 3):
            raise ConfigError(f"{path} line {k} type", typ, "1 (root), 2 (normal) or 3 (terminal)")
        ids.append(tid)
        loads.append(load)
        npreds.append(npred)
        types.append(typ)
        edges.extend((tid, j, c) for j, c in succ)
    if not ids:
        raise ConfigError(path, "<empty>", "an .adg file: one task per line")
    with renamed("edges", f"{path}.edges"), renamed("tasks", f"{path}.tasks"):  # the file named, as JSON's are
        g = TaskGraph(ids, loads=loads, edges=edges, name=Path(path).stem)
    for i, (npred, typ) in enumerate(zip(npreds, types)):
        if npred != len(g.preds[i]):
            raise ConfigError(f"{path} task {g.ids[i]} n_preds", npred, f"the number of edges into it ({len(g.preds[i])})")
        if (typ == 1) != (npred == 0) or (typ == 3 and g.succs[i]):
            raise ConfigError(f"{path} task {g.ids[i]} type", typ, "1 for a task without predecessors, 3 only for one "
                              "without successors, else 2")
    return g


def to_adg(g: TaskGraph) -> str:
    """``.adg`` text of *g* (loads; a cost table's row means), with 002's precedence levels."""
    prec = [0.0] * g.n_tasks
    for i in reversed(g.topo):
        prec[i] = g.weight(i) + max((prec[j] + d for j, d in g.succs[i]), default=0.0)
    out = []
    for i, t in enumerate(g.ids):
        typ = 1 if not g.preds[i] else 3 if not g.succs[i] else 2
        succ = " ".join(f"({g.ids[j]},{d!r})" for j, d in g.succs[i])
        out.append(f"{t} {typ} {len(g.preds[i])} {g.weight(i)!r} {prec[i]!r} {succ}".rstrip())
    return "\n".join(out) + "\n"


_SUFFIXES = (".json", ".stg", ".adg", ".dax", ".xml")
#: the suffixes of Pegasus DAX files: a ``.dax``, or an ``.xml`` (whose root must then be ``<adag>``)
_XML = (".dax", ".xml")


def read(path, *, reference_mhz: float | None = None) -> TaskGraph:
    """A ``.json``, ``.stg``, ``.adg``, ``.dax`` or ``.xml`` file (by suffix). A ``.json`` whose top level
    has ``schemaVersion`` and ``workflow`` is a WfCommons WfFormat workflow (:func:`from_wfformat`,
    which alone takes *reference_mhz*: :mod:`.wfformat`); a ``.dax`` or ``.xml`` is a Pegasus DAX
    (:func:`read_dax`; an ``.xml`` whose root is not ``<adag>`` is refused)."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in _SUFFIXES:
        raise ConfigError("graph file", str(p), "a .json, .stg, .adg, .dax or .xml file")
    if suffix in _XML:  # read as bytes: the XML parser reads its declaration
        _no_reference(reference_mhz, p)
        return read_dax(p)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("graph file", str(p), "an existing .json, .stg or .adg file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError("graph file", str(p), f"a readable UTF-8 text file ({e})") from None
    if suffix == ".json":
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            raise ConfigError(f"JSON in {p}", str(e), "valid JSON") from None
        if wfformat.is_wfformat(doc):  # by content: both are .json
            return from_wfformat(doc, str(p), reference_mhz=reference_mhz)
        _no_reference(reference_mhz, p)
        return TaskGraph.from_dict(doc, str(p))
    _no_reference(reference_mhz, p)
    return {".stg": from_stg, ".adg": from_adg}[suffix](text, str(p))


def read_wfformat(path, *, reference_mhz: float | None = None) -> TaskGraph:
    """The TaskGraph of WfCommons WfFormat file *path*, whatever its suffix (:mod:`.wfformat` says how
    runtimes become loads at *reference_mhz* and files become the edges' data)."""
    text, name = wfformat.read_text(path)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ConfigError(f"JSON in {name}", str(e), "valid JSON") from None
    return from_wfformat(doc, name, reference_mhz=reference_mhz)


def from_wfformat(doc: Any, path: str = "workflow.json", *, reference_mhz: float | None = None) -> TaskGraph:
    """The TaskGraph of a parsed WfFormat document (*path* names it in errors), with :attr:`TaskGraph.meta`
    the machines, the recorded makespan and the version."""
    return _built(wfformat.parse(doc, path, reference_mhz=reference_mhz), path)


def read_dax(path) -> TaskGraph:
    """The TaskGraph of Pegasus DAX file *path*, whatever its suffix (:mod:`.dax` says how runtimes
    become loads and files the edges' data)."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise ConfigError("graph file", str(p), "an existing Pegasus DAX file") from None
    except OSError as e:
        raise ConfigError("graph file", str(p), f"a readable file ({e})") from None
    return from_dax(data, str(p))


def from_dax(data: bytes | str, path: str = "workflow.dax") -> TaskGraph:
    """The TaskGraph of DAX document *data* (the file's bytes, or its text; *path* names it in errors),
    with :attr:`TaskGraph.meta` its format, version and name."""
    return _built(dax.parse(data.encode("utf-8") if isinstance(data, str) else data, path), path)


def _built(p: wfformat.Parsed, path: str) -> TaskGraph:
    """The graph of a reader's parts, :attr:`TaskGraph.meta` set."""
    # the only error the constructor can still find is a cycle: name the file's tasks, not our list
    with renamed("edges", f"{path} {p.where} ({p.deps})"), renamed("tasks", f"{path} {p.where}"):
        g = TaskGraph(p.ids, loads=p.loads, edges=p.edges, name=p.name)
    object.__setattr__(g, "meta", p.meta)  # frozen: set once, here, as __post_init__ sets the derived fields
    return g


def _no_reference(reference_mhz, p: Path) -> None:
    # a reference speed means nothing to a file of loads: say so rather than ignore it
    if reference_mhz is not None:
        raise ConfigError("reference_mhz", reference_mhz, f"absent: only a WfFormat workflow has machine "
                          f"speeds to normalise ({p} is not one)")


def write(g: TaskGraph, path) -> None:
    p = Path(path)
    if p.suffix.lower() == ".stg":
        p.write_text(to_stg(g), encoding="utf-8")
    elif p.suffix.lower() == ".json":
        p.write_text(to_json(g), encoding="utf-8")
    elif p.suffix.lower() == ".adg":
        p.write_text(to_adg(g), encoding="utf-8")
    else:
        raise ConfigError("graph file", str(p), "a .json, .stg or .adg file name")


def recorded_makespan(g: Any) -> dict:
    """``{"recorded_makespan": seconds}`` when graph *g* was read from a file that records its real run's
    makespan (a WfFormat workflow's ``makespanInSeconds``), else ``{}``: what the engines put in a trace's
    meta, for the family's ``recorded_makespan`` metric (the real run's, on the machines it ran on)."""
    m = (getattr(g, "meta", None) or {}).get("makespan")
    return {"recorded_makespan": float(m)} if m is not None else {}
