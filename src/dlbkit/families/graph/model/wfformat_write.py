"""A :class:`~.workload.TaskGraph` written as a WfCommons **WfFormat** instance, schema 1.5 or 1.4 (issue 33).

The layouts are those :mod:`.wfformat` reads (and WfFormat's ``wfcommons-schema.json`` of releases
1.4 and 1.5 requires): per task its id (also its ``name``), ``parents`` (and in 1.5 ``children``),
``runtimeInSeconds`` = its load; per edge **one file**, written by the parent and read by the child,
of ``sizeInBytes`` = the edge's data, id ``<parent>.out<j>`` (the parent's *j*-th out-edge, from 0:
distinct for distinct edges, since *j* is the digits after the last ``.out``). So reading the file
back (:func:`.workload.read_wfformat`) gives the graph again: the same ids (as strings), loads,
edges and data. The graph's name is the instance's ``name``. No run is recorded: ``executedAt`` is
the epoch, ``makespanInSeconds`` 0 (WfCommons' value for a generated instance, read back as none),
unless the graph was read from a file that recorded one (``g.meta["makespan"]``); no machines.
Deterministic: the same graph gives the same bytes (no creation time is written).

Written only when it can be read back: loads (a cost table has no one runtime per task, a
:class:`~dlbkit.errors.ConfigError`), ids distinct as strings. The schema wants ``sizeInBytes``
integers and ids of ``[0-9a-zA-Z-_.]``: data with a fraction is written as it is (dlbkit reads it
back exactly, a strict validator refuses it), and ids are not rewritten.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dlbkit.errors import ConfigError

# a TaskGraph is what is written, but not imported, even for its type: .workload imports this module
# (to offer write_wfformat beside read_wfformat), and the import layers allow no cycle
_TaskGraph = Any

__all__ = ["VERSIONS_WRITTEN", "to_wfformat", "write_wfformat"]

#: the schemaVersions written (1.5's layout is also 1.6's, which adds only metrics)
VERSIONS_WRITTEN = ("1.5", "1.4")
#: the start of a run that never happened (the schema requires an executedAt)
_EPOCH = "1970-01-01T00:00:00+00:00"
_DESCRIPTION = "Written by dlbkit from a task graph: one file per edge, of the edge's data"


def _size(x: float):
    # the schema's sizeInBytes is an integer: an integral value is written as one (read back exactly)
    return int(x) if float(x).is_integer() else x


def to_wfformat(g: _TaskGraph, version: str = "1.5") -> dict:
    """The WfFormat document of *g* (a dict for ``json.dump``), in schema *version* "1.5" or "1.4"."""
    if version not in VERSIONS_WRITTEN:
        raise ConfigError("version", version, "a WfFormat schemaVersion written: " + ", ".join(VERSIONS_WRITTEN))
    if g.loads is None:
        raise ConfigError("graph", g.name, "a graph with loads to write WfFormat (it records one runtime per task, "
                          "not a cost table)")
    ids = [str(t) for t in g.ids]
    if len(set(ids)) != len(ids):
        seen: set = set()
        dup = next(t for t in ids if t in seen or seen.add(t))
        raise ConfigError("graph ids", dup, "ids that stay distinct as strings (WfFormat's ids are strings)")
    inputs: list[list] = [[] for _ in ids]  # per task: (file id, size) it reads
    outputs: list[list] = [[] for _ in ids]
    for i in range(len(ids)):
        for j, (k, data) in enumerate(g.succs[i]):
            f = (f"{ids[i]}.out{j}", _size(data))
            outputs[i].append(f)
            inputs[k].append(f)
    parents = [[ids[p] for p, _ in g.preds[i]] for i in range(len(ids))]
    children = [[ids[c] for c, _ in g.succs[i]] for i in range(len(ids))]
    makespan = g.meta.get("makespan")
    makespan = makespan if isinstance(makespan, float) else 0.0
    head = {"name": g.name, "description": _DESCRIPTION, "schemaVersion": version}
    if version == "1.4":  # one list of tasks, each with its files and runtime; no children in 1.4
        tasks = [{"name": t, "type": "compute", "parents": parents[i], "runtimeInSeconds": g.loads[i],
                  "files": [{"name": f, "sizeInBytes": s, "link": "input"} for f, s in inputs[i]]
                  + [{"name": f, "sizeInBytes": s, "link": "output"} for f, s in outputs[i]]}
                 for i, t in enumerate(ids)]
        # no "machines": 1.4's schema wants the list non-empty when it is there
        return {**head, "workflow": {"makespanInSeconds": makespan, "executedAt": _EPOCH, "tasks": tasks}}
    spec = [{"name": t, "id": t, "parents": parents[i], "children": children[i],
             "inputFiles": [f for f, _ in inputs[i]], "outputFiles": [f for f, _ in outputs[i]]}
            for i, t in enumerate(ids)]
    files = [{"id": f, "sizeInBytes": s} for out in outputs for f, s in out]
    runs = [{"id": t, "runtimeInSeconds": g.loads[i]} for i, t in enumerate(ids)]
    return {**head, "workflow": {"specification": {"tasks": spec, "files": files},
                                 "execution": {"makespanInSeconds": makespan, "executedAt": _EPOCH, "tasks": runs}}}


def write_wfformat(g: _TaskGraph, path, version: str = "1.5") -> None:
    """Write *g* to *path* as a WfFormat instance of schema *version* (:func:`to_wfformat`); a ``.json``
    name lets :func:`.workload.read` tell it by content."""
    doc = to_wfformat(g, version)
    Path(path).write_text(json.dumps(doc, indent=1), encoding="utf-8")
