"""The tasks of a real graph run (``dlbkit.graph``): the user's DAG of Python functions, checked once
and turned into a :class:`~dlbkit.families.graph.model.workload.TaskGraph` (what the mapping balancers read) plus what
the workers need to call each function.

The forms accepted (:func:`parse_tasks`):

* **Dask's legacy graph spec**: a dict ``key → (fn, *arguments)``. An argument equal to a key of the dict is
  that task's result (a dependency); a list is searched element by element; a tuple whose first element
  is callable is a nested call, made on the worker; anything else is passed as it is (a literal). As
  in Dask, a value that merely looks like a key but is not one of the dict's keys is a literal.
* **Dask's task-spec graph** (what current Dask collections build): a dict ``key → GraphNode`` of
  ``dask._task_spec`` objects (``Task``, ``Alias``, ``DataNode``, the ``List``/``Dict``/``Tuple``/``Set``
  containers, arguments that are ``TaskRef``), legacy tuples allowed beside them (converted by Dask's
  ``convert_legacy_graph``, so there a value that is not a task is data). A node's ``dependencies``
  are its task's; the worker calls the node with a dict of their values, as Dask does. A dependency
  that is not a key of the dict is an error. Dask is only used when such a node is seen.
* **a Dask collection** (anything with ``__dask_graph__`` and ``__dask_keys__``): its graph, as above.
* **a networkx DiGraph**: every node carries ``fn`` (a callable) and optionally ``load``; an edge
  u → v makes v depend on u, and v is called as ``fn(*results of its predecessors)``, in the order
  networkx lists them (insertion order). An edge's ``data`` attribute, if any, is its data volume for
  the mapper's plan.

A task's **load** is its estimated time at speed 1 (networkx ``load``; 1 when not given, and always 1
for the dict form): the static mappers plan with it, and the online ``pd`` scores with it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Hashable, Mapping, NamedTuple

from dlbkit.errors import ConfigError
from dlbkit.families.graph.model.workload import MAX_TASKS, TaskGraph
from dlbkit.runtime.backends.base import short_repr

__all__ = ["Ref", "Call", "DaskNode", "GraphTasks", "is_dask_collection", "parse_tasks", "resolve", "MAX_TASKS"]

_ALLOWED = ("a dict key → (callable, *arguments) (Dask's graph spec) or key → a dask._task_spec node, a Dask "
            "collection, or a networkx DiGraph whose nodes carry 'fn' (a callable) and optionally 'load'")


class Ref(NamedTuple):
    """An argument that is the result of the task's *pos*-th dependency."""

    pos: int


class Call(NamedTuple):
    """A nested call ``fn(*args)`` made on the worker (Dask's task inside a task)."""

    fn: Any
    args: tuple


@dataclass
class GraphTasks:
    """One run's tasks, indexed 0…n−1 in the order given: ``keys`` (the user's), ``fns``, ``args``
    (per task a tuple of argument templates: :class:`Ref`, :class:`Call`, lists, literals), ``deps``
    (per task its dependencies' indices, each once, in the order its templates' :class:`Ref` count
    them) and ``graph`` (the TaskGraph the balancers read: ids, loads, edges)."""

    keys: list
    fns: list
    args: list
    deps: list
    graph: TaskGraph

    @property
    def n_tasks(self) -> int:
        return len(self.keys)


class DaskNode:
    """A ``dask._task_spec`` node as a task's function: called with its dependencies' values (in the
    order of *deps*, the keys), it calls the node with the dict ``key → value``, as Dask runs it."""

    __slots__ = ("node", "deps")

    def __init__(self, node: Any, deps: tuple):
        self.node, self.deps = node, deps

    def __call__(self, *values: Any) -> Any:
        return self.node(dict(zip(self.deps, values)))

    def __reduce__(self):
        return DaskNode, (self.node, self.deps)

    def __repr__(self) -> str:
        return f"DaskNode({short_repr(self.node, 60)})"


def _task_spec(tasks: Mapping) -> Any:
    """``dask._task_spec`` if a value of *tasks* is one of its nodes, else None (Dask not imported:
    such a node exists only if Dask's module is loaded)."""
    ts = sys.modules.get("dask._task_spec")
    if ts is None or not any(isinstance(v, ts.GraphNode) for v in tasks.values()):
        return None
    return ts


def is_dask_collection(obj: Any) -> bool:
    """Whether *obj* is a Dask collection (it has ``__dask_graph__`` and ``__dask_keys__``)."""
    return not isinstance(obj, type) and hasattr(obj, "__dask_graph__") and hasattr(obj, "__dask_keys__")


def _dask_tasks(tasks: Mapping, ts: Any, keys: list, index: Mapping, fns: list, args: list, deps: list) -> None:
    """*tasks* (Dask nodes and legacy tuples) as DaskNode functions, one Ref per dependency."""
    try:
        nodes = ts.convert_legacy_graph(tasks)
    except Exception as e:  # noqa: BLE001 - Dask's own check of a node
        raise ConfigError("tasks", short_repr(e, 120), "a graph Dask's convert_legacy_graph accepts") from None
    for i, k in enumerate(keys):
        field = f"tasks[{short_repr(k, 60)}]"
        node = nodes.get(k)
        if node is None:  # Dask drops an alias of the key to itself
            raise ConfigError(field, short_repr(tasks[k], 80), "a task that does not depend on itself")
        try:
            d = sorted({index[j] for j in node.dependencies})
        except KeyError:
            missing = [j for j in node.dependencies if j not in index]
            raise ConfigError(field, f"depends on {short_repr(missing[0], 60)}, not a key of tasks",
                              "dependencies that are keys of tasks") from None
        except TypeError:
            raise ConfigError(field, short_repr(node, 80), "dependencies that are keys of tasks") from None
        if i in d:
            raise ConfigError(field, short_repr(tasks[k], 80), "a task that does not depend on itself")
        fns.append(DaskNode(node, tuple(keys[j] for j in d)))
        args.append(tuple(Ref(p) for p in range(len(d))))
        deps.append(d)


def resolve(template: Any, values: tuple) -> Any:
    """An argument template with its dependencies' *values* filled in (nested calls made)."""
    t = type(template)
    if t is Ref:
        return values[template.pos]
    if t is Call:
        return template.fn(*[resolve(a, values) for a in template.args])
    if t is list:
        return [resolve(a, values) for a in template]
    return template


def _template(arg: Any, index: Mapping, deps: list, where: dict, depth: int, field: str) -> Any:
    """*arg* as a template: dependencies become :class:`Ref` (appended to *deps* once)."""
    if depth > 100:
        raise ConfigError(field, "arguments nested more than 100 deep", "at most 100 levels of lists or calls")
    try:
        j = index.get(arg) if isinstance(arg, Hashable) else None
    except TypeError:  # a tuple holding something unhashable
        j = None
    if j is not None:
        if j not in where:
            where[j] = len(deps)
            deps.append(j)
        return Ref(where[j])
    if isinstance(arg, tuple) and arg and callable(arg[0]):
        return Call(arg[0], tuple(_template(a, index, deps, where, depth + 1, field) for a in arg[1:]))
    if isinstance(arg, list):
        return [_template(a, index, deps, where, depth + 1, field) for a in arg]
    return arg


def _ids(keys: list) -> tuple:
    """TaskGraph ids for the user's keys: the key itself when it is a string or an integer, else its
    ``repr``; the index if that would not be unique."""
    ids = tuple(k if isinstance(k, str) or (isinstance(k, int) and not isinstance(k, bool)) else repr(k)
                for k in keys)
    return ids if len(set(ids)) == len(ids) else tuple(range(len(keys)))


def _load(v: Any, field: str) -> float:
    import math
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
        raise ConfigError(field, v, "a finite number >= 0 (the task's estimated time at speed 1)")
    return float(v)


def parse_tasks(tasks: Any) -> GraphTasks:
    """*tasks* checked and indexed (module docstring); a :class:`ConfigError` naming the task otherwise
    (not a callable, a task depending on itself, a node without ``fn``, a cycle, a bad load)."""
    keys: list = []
    fns: list = []
    args: list = []
    deps: list = []
    loads: list[float] = []
    data: dict[tuple[int, int], float] = {}
    ts = None
    if is_dask_collection(tasks) and not isinstance(tasks, Mapping):
        import importlib
        try:  # a collection's graph is Dask's, legacy tuples or not (importlib: dask stays optional)
            ts = importlib.import_module("dask._task_spec")
        except ImportError:
            raise ConfigError("tasks", type(tasks).__name__, "a Dask collection with Dask installed") from None
        tasks = dict(tasks.__dask_graph__())
    elif isinstance(tasks, Mapping):
        ts = _task_spec(tasks)
    if ts is not None:
        keys = list(tasks)
        if len(keys) > MAX_TASKS:
            raise ConfigError("tasks", f"{len(keys):,} tasks", f"at most {MAX_TASKS:,}")
        index = {k: i for i, k in enumerate(keys)}
        _dask_tasks(tasks, ts, keys, index, fns, args, deps)
        loads = [1.0] * len(keys)
    elif isinstance(tasks, Mapping):
        keys = list(tasks)
        if len(keys) > MAX_TASKS:
            raise ConfigError("tasks", f"{len(keys):,} tasks", f"at most {MAX_TASKS:,}")
        index = {k: i for i, k in enumerate(keys)}
        for i, k in enumerate(keys):
            v = tasks[k]
            field = f"tasks[{short_repr(k, 60)}]"
            if not isinstance(v, tuple) or not v or not callable(v[0]):
                raise ConfigError(field, short_repr(v, 80), "a tuple (callable, *arguments); an argument equal "
                                  "to a key of tasks is that task's result")
            d: list[int] = []
            where: dict = {}  # one for all the task's arguments: a key named twice is one dependency
            args.append(tuple(_template(a, index, d, where, 0, field) for a in v[1:]))
            if i in d:
                raise ConfigError(field, short_repr(v, 80), "a task that does not depend on itself")
            fns.append(v[0])
            deps.append(d)
            loads.append(1.0)
    else:
        import networkx as nx
        if not isinstance(tasks, nx.DiGraph):
            raise ConfigError("tasks", type(tasks).__name__, _ALLOWED)
        keys = list(tasks.nodes)
        if len(keys) > MAX_TASKS:
            raise ConfigError("tasks", f"{len(keys):,} tasks", f"at most {MAX_TASKS:,}")
        index = {k: i for i, k in enumerate(keys)}
        for i, k in enumerate(keys):
            attrs = tasks.nodes[k]
            field = f"tasks.nodes[{short_repr(k, 60)}]"
            fn = attrs.get("fn")
            if not callable(fn):
                raise ConfigError(f"{field}['fn']", short_repr(fn, 80), "a callable (every node of the graph, "
                                  "including one only named by an edge, carries fn)")
            d = [index[u] for u in tasks.predecessors(k)]
            if i in d:
                raise ConfigError(field, "an edge from the node to itself", "a task that does not depend on itself")
            fns.append(fn)
            deps.append(d)
            args.append(tuple(Ref(p) for p in range(len(d))))
            loads.append(_load(attrs.get("load", 1.0), f"{field}['load']"))
            for u in tasks.predecessors(k):
                x = tasks.edges[u, k].get("data", 0.0)
                data[(index[u], i)] = _load(x, f"tasks.edges[{short_repr(u, 40)}, {short_repr(k, 40)}]['data']")
    if not keys:
        raise ConfigError("tasks", "no tasks", "at least one task")
    ids = _ids(keys)
    edges = [(ids[j], ids[i], data.get((j, i), 0.0)) for i in range(len(keys)) for j in deps[i]]
    try:
        graph = TaskGraph(ids, loads=tuple(loads), edges=tuple(edges), name="dlbkit.graph")
    except ConfigError as e:  # a cycle, named by the TaskGraph's check
        raise ConfigError("tasks", e.value, e.allowed) from None
    return GraphTasks(keys, fns, args, deps, graph)
