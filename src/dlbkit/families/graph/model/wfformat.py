"""Workflows in WfCommons' **WfFormat** JSON, read into a :class:`~.workload.TaskGraph` (issue 33).

WfFormat is the JSON instance format of the WfCommons project (https://github.com/wfcommons/wfformat,
its ``wfcommons-schema.json`` per release; real instances in github.com/wfcommons/WfInstances). This
reader was written from the schemas of releases 1.3, 1.4 and 1.5 and their migration notes, not from
WfCommons' code. Two layouts:

* **1.5** (and **1.6**, as the ``wfcommons`` 1.6 package writes it: 1.5's layout with ``metrics``
  objects beside the task lists, and ``makespanInSeconds`` 0 for a generated instance, read as no
  recorded makespan): ``workflow.specification.tasks`` (``id``, ``name``, ``parents``, ``children``, ``inputFiles``,
  ``outputFiles``: file ids), ``workflow.specification.files`` (``id``, ``sizeInBytes``),
  ``workflow.execution.tasks`` (``id``, ``runtimeInSeconds``, ``machines``: node names),
  ``workflow.execution.machines`` (``nodeName``, ``cpu: {coreCount, speedInMHz}``),
  ``workflow.execution.makespanInSeconds``.
* **1.3 / 1.4**: ``workflow.tasks``, each with ``name`` (the key ``parents`` refer to; ``id`` optional),
  ``parents``, optional ``children``, ``files`` (``name``, ``link`` input|output, ``size`` in 1.3 /
  ``sizeInBytes`` in 1.4), ``runtime`` (1.3) / ``runtimeInSeconds`` (1.4), ``machine``;
  ``workflow.machines`` (``nodeName``, ``cpu: {count, speed}``), ``workflow.makespan`` (1.3) /
  ``makespanInSeconds`` (1.4).

What the graph gets:

* **tasks**: ids are 1.5's ``id``, 1.3/1.4's ``name`` (a parent that is no task's name may be a task's
  ``id``: some converted instances list ids);
* **loads**: ``load = runtimeInSeconds × speedInMHz / reference_mhz`` for a task whose machine's speed
  is known (the mean speed when it ran on several), ``reference_mhz`` a keyword; with no
  ``reference_mhz``, or no known speed for the task, ``load = runtimeInSeconds``: the recorded seconds
  as work at speed 1. ``coreCount`` is not used (a dlbkit task runs on one node);
* **edges**: the declared ``parents`` (and ``children``: their union, once per pair), parent → child,
  ``data`` = the total ``sizeInBytes`` of the files the child reads that the parent writes, 0 when
  none. Files never add an edge: a workflow's dependencies are the ones it declares;
* ``TaskGraph.meta`` (a plain attribute, not a dataclass field:
  in no equality, digest or writer): ``format``, ``schemaVersion``, ``name``, ``makespan`` (seconds,
  or None), ``machines`` ({nodeName: {"speedInMHz", "coreCount"}}), ``task_machines`` ({task id:
  node names}), ``reference_mhz``.

The graph is built by :func:`dlbkit.families.graph.model.workload.read` (a ``.json`` with ``schemaVersion``
and ``workflow`` at its top level), :func:`~dlbkit.families.graph.model.workload.read_wfformat` and
:func:`~dlbkit.families.graph.model.workload.from_wfformat`. Bad input is one
:class:`~dlbkit.errors.ConfigError` whose field names the file and the place in it
(``wf.json workflow.specification.tasks[3].parents[0]``).
"""

from __future__ import annotations

import math
from numbers import Real
from pathlib import Path
from typing import Any, Mapping, NamedTuple

from dlbkit.errors import ConfigError
from dlbkit.model import check

__all__ = ["parse", "read_text", "is_wfformat", "Parsed", "VERSIONS"]

#: the schemaVersions read; 1.0–1.2 (``workflow.jobs``) are migrated to these by WfCommons' own
#: ``tools/wfcommons-migrate-instance.py``
VERSIONS = ("1.3", "1.4", "1.5", "1.6")
#: the versions in the specification/execution layout (1.6, as the ``wfcommons`` 1.6 package writes it, is
#: 1.5's layout with ``metrics`` objects added beside ``tasks``, which this reader does not need)
_SPLIT = ("1.5", "1.6")


def is_wfformat(doc: Any) -> bool:
    """Whether a parsed JSON document is a WfFormat instance: an object with ``schemaVersion`` and
    ``workflow`` at its top level (dlbkit's own JSON has ``tasks`` and ``edges``)."""
    return isinstance(doc, Mapping) and "schemaVersion" in doc and "workflow" in doc


def read_text(path) -> tuple[str, str]:
    """(the text of file *path*, its name as errors give it); a missing or unreadable file, or bytes that
    are not UTF-8, is a ConfigError naming the file."""
    p = Path(path)
    try:
        return p.read_bytes().decode("utf-8"), str(p)
    except FileNotFoundError:
        raise ConfigError("graph file", str(p), "an existing WfFormat .json file") from None
    except UnicodeDecodeError as e:
        raise ConfigError("graph file", str(p), f"UTF-8 text (bytes at offset {e.start} are not)") from None
    except OSError as e:
        raise ConfigError("graph file", str(p), f"a readable file ({e})") from None


class Parsed(NamedTuple):
    """What :func:`parse` (and :func:`.dax.parse`) finds: the TaskGraph's arguments, its ``meta``,
    *where* (the file's place of the tasks) and *deps* (what declares its edges), for the errors the
    graph's constructor still finds (a cycle). :mod:`.workload` builds the graph (this module does not
    import it: it imports this one, to read a ``.json`` by content)."""
    ids: list
    loads: list
    edges: list
    name: str
    meta: dict
    where: str
    deps: str = "parents/children"


# --- typed access: each names the place in the file ------------------------------------------------
class _At:
    """Checks on a file's values, each error naming ``<file> <place>``."""

    def __init__(self, path: str):
        self.path = path

    def err(self, where: str, value: Any, allowed: str) -> ConfigError:
        return ConfigError(f"{self.path} {where}", value, allowed)

    # each check tests the plain JSON type first: the ABCs' isinstance is most of a 10 000-task read
    def obj(self, v, where: str) -> Mapping:
        if type(v) is not dict and not isinstance(v, Mapping):
            raise self.err(where, v if v is None else type(v).__name__, "an object")
        return v

    def lst(self, v, where: str, *, empty: bool = True) -> list:
        if not isinstance(v, list) or (not empty and not v):
            raise self.err(where, v if v is None or isinstance(v, list) else type(v).__name__,
                           "a list" if empty else "a non-empty list")
        return v

    def strs(self, v, where: str) -> list:
        if type(v) is list and all(type(s) is str and s for s in v):
            return v
        for k, s in enumerate(self.lst(v, where)):
            self.text(s, f"{where}[{k}]")
        return v

    def text(self, v, where: str) -> str:
        if not isinstance(v, str) or not v:
            raise self.err(where, v, "a non-empty string")
        return v

    def num(self, v, where: str, *, what: str = "a finite number >= 0") -> float:
        # a runtime or a size becomes a load or a data: finite and >= 0, as TaskGraph wants them
        if type(v) is float and 0 <= v < math.inf or type(v) is int and 0 <= v < 2 ** 1023:
            return float(v)
        if isinstance(v, bool) or not isinstance(v, Real):
            raise self.err(where, "<missing>" if v is None else v, what)
        try:
            ok = math.isfinite(v) and v >= 0
        except OverflowError:  # an int too large for a float
            ok = False
        if not ok:
            raise self.err(where, v, what)
        return float(v)


class _Task:
    __slots__ = ("id", "where", "parents", "children", "inputs", "outputs", "runtime", "machines")

    def __init__(self, tid, where):
        self.id, self.where = tid, where
        self.parents: list = []
        self.children: list = []
        self.inputs: dict = {}  # file key -> bytes (a dict: a file read twice is counted once)
        self.outputs: dict = {}
        self.runtime: float | None = None
        self.machines: tuple = ()


# --- the two layouts ------------------------------------------------------------------------------
def _layout_15(wf: Mapping, at: _At) -> tuple[list, dict, float | None]:
    spec = at.obj(wf.get("specification"), "workflow.specification")
    raw = at.lst(spec.get("tasks"), "workflow.specification.tasks", empty=False)
    sizes: dict = {}
    for k, f in enumerate(at.lst(spec.get("files", []), "workflow.specification.files")):
        w = f"workflow.specification.files[{k}]"
        at.obj(f, w)
        fid = at.text(f.get("id"), f"{w}.id")
        sizes[fid] = at.num(f.get("sizeInBytes"), f"{w}.sizeInBytes", what="a size in bytes >= 0")
    tasks = []
    for k, t in enumerate(raw):
        w = f"workflow.specification.tasks[{k}]"
        at.obj(t, w)
        task = _Task(at.text(t.get("id"), f"{w}.id"), w)
        if "name" in t:
            at.text(t["name"], f"{w}.name")
        task.parents = at.strs(t.get("parents", []), f"{w}.parents")
        task.children = at.strs(t.get("children", []), f"{w}.children")
        for key, into in (("inputFiles", task.inputs), ("outputFiles", task.outputs)):
            for j, fid in enumerate(at.strs(t.get(key, []), f"{w}.{key}")):
                if fid not in sizes:
                    raise at.err(f"{w}.{key}[{j}]", fid, "the id of a file in workflow.specification.files")
                into[fid] = sizes[fid]
        tasks.append(task)
    by_id = _unique(tasks, "id", at)
    ex = at.obj(wf.get("execution"), "workflow.execution")
    for k, e in enumerate(at.lst(ex.get("tasks"), "workflow.execution.tasks")):
        w = f"workflow.execution.tasks[{k}]"
        at.obj(e, w)
        tid = at.text(e.get("id"), f"{w}.id")
        task = by_id.get(tid)
        if task is None:
            raise at.err(f"{w}.id", tid, "the id of a task in workflow.specification.tasks")
        if task.runtime is not None:
            raise at.err(f"{w}.id", tid, "one execution record per task (this task has two)")
        task.runtime = at.num(e.get("runtimeInSeconds"), f"{w}.runtimeInSeconds")
        task.machines = tuple(at.strs(e.get("machines", []), f"{w}.machines"))
    for t in tasks:
        if t.runtime is None:  # named at the specification's task: that is the one without a runtime
            raise at.err(f"{t.where}.id", t.id, "a task with a record in workflow.execution.tasks "
                         "(its runtimeInSeconds)")
    machines = _machines(ex.get("machines", []), "workflow.execution.machines", ("coreCount", "speedInMHz"), at)
    makespan = ex.get("makespanInSeconds")
    return tasks, machines, None if makespan is None else at.num(makespan, "workflow.execution.makespanInSeconds")


def _layout_14(wf: Mapping, at: _At, version: str) -> tuple[list, dict, float | None]:
    old = version == "1.3"  # 1.4 renamed runtime, size and makespan with their units
    runtime_key, size_key, makespan_key = (("runtime", "size", "makespan") if old else
                                           ("runtimeInSeconds", "sizeInBytes", "makespanInSeconds"))
    raw = at.lst(wf.get("tasks"), "workflow.tasks", empty=False)
    tasks = []
    for k, t in enumerate(raw):
        w = f"workflow.tasks[{k}]"
        at.obj(t, w)
        task = _Task(at.text(t.get("name"), f"{w}.name"), w)
        if "id" in t:
            at.text(t["id"], f"{w}.id")
        task.parents = at.strs(t.get("parents", []), f"{w}.parents")
        task.children = at.strs(t.get("children", []), f"{w}.children")
        for j, f in enumerate(at.lst(t.get("files", []), f"{w}.files")):
            fw = f"{w}.files[{j}]"
            at.obj(f, fw)
            # the file's key: its path and name, as WfCommons' 1.4 → 1.5 migration makes its id
            fname, fpath = at.text(f.get("name"), f"{fw}.name"), f.get("path")
            key = fpath + fname if isinstance(fpath, str) else fname
            size = at.num(f.get(size_key), f"{fw}.{size_key}", what="a size in bytes >= 0")
            link = f.get("link")
            if link not in ("input", "output"):
                raise at.err(f"{fw}.link", link, '"input" or "output"')
            (task.inputs if link == "input" else task.outputs)[key] = size
        task.runtime = at.num(t.get(runtime_key), f"{w}.{runtime_key}")
        if "machine" in t:
            task.machines = (at.text(t["machine"], f"{w}.machine"),)
        tasks.append(task)
    _unique(tasks, "name", at)
    machines = _machines(wf.get("machines", []), "workflow.machines", ("count", "speed"), at)
    makespan = wf.get(makespan_key)
    return tasks, machines, None if makespan is None else at.num(makespan, f"workflow.{makespan_key}")


def _unique(tasks: list, key: str, at: _At) -> dict:
    """{id: task}; a repeated id is an error at its second task."""
    out: dict = {}
    for t in tasks:
        if t.id in out:
            raise at.err(f"{t.where}.{key}", t.id, "unique across tasks")
        out[t.id] = t
    return out


def _machines(raw, where: str, keys: tuple, at: _At) -> dict:
    """{nodeName: {"coreCount": int | None, "speedInMHz": float | None}}, from 1.5's or 1.3/1.4's keys."""
    out = {}
    for k, m in enumerate(at.lst(raw, where)):
        w = f"{where}[{k}]"
        at.obj(m, w)
        name = at.text(m.get("nodeName"), f"{w}.nodeName")
        cpu = at.obj(m.get("cpu", {}), f"{w}.cpu")
        cores, speed = (cpu.get(key) for key in keys)
        out[name] = {"coreCount": None if cores is None else at.num(cores, f"{w}.cpu.{keys[0]}"),
                     "speedInMHz": None if speed is None else at.num(speed, f"{w}.cpu.{keys[1]}")}
        if out[name]["speedInMHz"] == 0:
            raise at.err(f"{w}.cpu.{keys[1]}", speed, "a speed in MHz > 0")
    return out


# --- the graph -----------------------------------------------------------------------------------
def parse(doc: Any, path: str = "workflow.json", *, reference_mhz: float | None = None) -> Parsed:
    """The graph in parsed WfFormat document *doc* (*path* names it in errors); every check but the
    cycle's (the graph's constructor's)."""
    at = _At(path)
    if reference_mhz is not None:  # a keyword, not the file's: named alone (an experiment renames it)
        reference_mhz = check.number(reference_mhz, "reference_mhz", lo=0.0, lo_open=True)
    at.obj(doc, "(top level)")
    version = doc.get("schemaVersion")
    if not isinstance(version, str) or version not in VERSIONS:
        raise at.err("schemaVersion", version, "one of the WfFormat versions read: " + ", ".join(VERSIONS)
                     + " (older files: WfCommons' tools/wfcommons-migrate-instance.py)")
    wf = at.obj(doc.get("workflow"), "workflow")
    tasks, machines, makespan = _layout_15(wf, at) if version in _SPLIT else _layout_14(wf, at, version)
    if makespan == 0.0:
        # WfCommons' generators write 0 for a synthetic instance, which never ran: no recorded makespan
        # (a run of tasks with runtimes takes time)
        makespan = None

    ids, loads = [], []
    index = {t.id: t for t in tasks}  # unique: each layout checked
    alias: dict = {}  # 1.3/1.4: a reference that is no task's name may be a task's id (converted instances)
    if version not in _SPLIT:
        for raw, t in zip(wf["tasks"], tasks):
            if "id" in raw and raw["id"] not in index:
                alias.setdefault(raw["id"], t.id)
    pairs: dict = {}  # (parent id, child id) -> None, in first-seen order: parents, then children
    for t in tasks:
        for key, refs in (("parents", t.parents), ("children", t.children)):
            for j, r in enumerate(refs):
                other = r if r in index else alias.get(r)
                if other is None:
                    raise at.err(f"{t.where}.{key}[{j}]", r, "the id of a task of the workflow"
                                 if version in _SPLIT else "the name (or id) of a task of the workflow")
                if other == t.id:
                    raise at.err(f"{t.where}.{key}[{j}]", r, "a task other than itself (no self-loop)")
                pairs.setdefault((other, t.id) if key == "parents" else (t.id, other), None)
    edges = []
    for p, c in pairs:
        outs, ins = index[p].outputs, index[c].inputs
        small, big = (outs, ins) if len(outs) < len(ins) else (ins, outs)
        edges.append((p, c, float(sum(size for f, size in small.items() if f in big))))

    speeds = {name: m["speedInMHz"] for name, m in machines.items() if m["speedInMHz"] is not None}
    for t in tasks:
        ids.append(t.id)
        known = [speeds[m] for m in t.machines if m in speeds]
        if reference_mhz is not None and known:
            # the work a task did is its time × its machine's speed; at the reference speed it takes
            # runtime × speed / reference: so load / speed on a node of that relative speed
            loads.append(t.runtime * (sum(known) / len(known)) / reference_mhz)
        else:
            loads.append(t.runtime)
    name = doc.get("name")
    meta = {"format": "WfFormat", "schemaVersion": version, "name": name, "makespan": makespan,
            "machines": machines, "task_machines": {t.id: t.machines for t in tasks if t.machines},
            "reference_mhz": reference_mhz}
    return Parsed(ids, loads, edges, name if isinstance(name, str) and name else Path(path).stem, meta,
                  "workflow.specification.tasks" if version in _SPLIT else "workflow.tasks")
