"""The tasks of a real graph run (``dlbkit.graph``): the user's DAG of Python functions, checked once
and turned into a :class:`~dlbkit.families.graph.model.workload.TaskGraph` (what the mapping balancers read) plus what
the workers need to call each function.

Two forms are accepted (:func:`parse_tasks`):

* **Dask's graph spec**: a dict ``key → (fn, *arguments)``. An argument equal to a key of the dict is
  that task's result (a dependency); a list is searched element by element; a tuple whose first element
  is callable is a nested call, made on the worker; anything else is passed as it is (a literal). As
  in Dask, a value that merely looks like a key but is not one of the dict's keys is a literal.
* **a networkx DiGraph**: every node carries ``fn`` (a callable) and optionally ``load``; an edge
  u → v makes v depend on u, and v is called as ``fn(*results of its predecessors)``, in the order
  networkx lists them (insertion order). An edge's ``data`` attribute, if any, is its data volume for
  the mapper's plan.

A task's **load** is its estimated time at speed 1 (networkx ``load``; 1 when not given, and always 1
for the dict form): the static mappers plan with it, and the online ``pd`` scores with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Hashable, Mapping, NamedTuple

from dlbkit.errors import ConfigError
from dlbkit.families.graph.model.workload import MAX_TASKS, TaskGraph
from dlbkit.runtime.backends.base import short_repr

__all__ = ["Ref", "Call", "GraphTasks", "parse_tasks", "resolve", "MAX_TASKS"]

_ALLOWED = ("a dict key → (callable, *arguments) (Dask's graph spec) or a networkx DiGraph whose nodes carry "
            "'fn' (a callable) and optionally 'load'")


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
    if isinstance(tasks, Mapping):
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
