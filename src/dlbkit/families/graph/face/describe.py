"""What ``dlbkit describe FILE`` says of the graph family's files: task graphs (dlbkit's JSON, WfCommons
WfFormat, Kasahara ``.stg``, the thesis's ``.adg``) and the thesis's ``.ntp`` network files (:data:`FILES`, the
family's ``Family.files``).

A graph is read by :meth:`TaskGraph.read <dlbkit.families.graph.model.workload.TaskGraph.read>`, as
``dlbkit schedule`` reads it, and described by its size, work, critical path, width and data:

* a task's **work** is its load (its time at speed 1), or for a cost table the mean of its row;
* the **critical path** is the longest path by work (every task at speed 1, communication free). With
  communication (given only when the graph has data), each edge of the path also adds a transfer: in a
  WfFormat file, whose data are bytes, dlbkit's default network's latency plus data / bandwidth
  (:class:`~dlbkit.model.platform.Network`: 0.1 ms, 125 MB/s); in dlbkit's JSON and the thesis's ADG, its data
  as time, as ``dlbkit schedule --nodes M`` costs a transfer (and 002 a message on one hop);
* the **width** is the most tasks in one topological level, a task's level being the most edges on a path
  from an entry task to it. Tasks of one level are never on one path, so the true width (the largest
  antichain, which Dilworth's theorem gives through a bipartite matching, costly on a large graph) is at
  least this.
"""

from __future__ import annotations

import json
from pathlib import Path

from dlbkit.families.graph.model import wfformat
from dlbkit.families.graph.model.workload import TaskGraph
from dlbkit.model.description import Description, Fact, FileKind
from dlbkit.model.platform import Network
from dlbkit.model.platform_facts import platform_facts

__all__ = ["FILES", "describe_dax", "describe_json", "describe_ntp", "describe_text_graph", "graph_facts"]

#: each text format's name in a description, by suffix
_FORMATS = {".stg": "Kasahara STG", ".adg": "thesis ADG (002)"}


def graph_facts(g: TaskGraph, *, network: Network | None = None) -> list[Fact]:
    """The facts of graph *g* (the module docstring says how each is worked out). *network*: its edges' data
    are bytes, a transfer taking its latency plus data / bandwidth; None: data units, a transfer taking its
    data as time."""
    n = g.n_tasks
    if network is None:
        def transfer(data: float) -> float:
            return data
        comm = "critical path, data as time (as --nodes M)"
    else:
        def transfer(data: float) -> float:
            return network.latency + data / network.bandwidth
        comm = f"critical path, {network.latency * 1e3:g} ms + data / {network.bandwidth / 1e6:g} MB/s per edge"
    work = [g.weight(i) for i in range(n)]
    unit = "s at speed 1" if g.loads is not None else "s (mean of each task's costs)"
    plain, with_comm, level = [0.0] * n, [0.0] * n, [0] * n
    for i in g.topo:  # every predecessor of i comes before it
        preds = g.preds[i]
        plain[i] = work[i] + max((plain[p] for p, _ in preds), default=0.0)
        with_comm[i] = work[i] + max((with_comm[p] + transfer(data) for p, data in preds), default=0.0)
        level[i] = max((level[p] + 1 for p, _ in preds), default=0)
    per_level = [0] * (max(level) + 1)
    for lv in level:
        per_level[lv] += 1
    data = sum(d for _, _, d in g.edges)
    facts = [Fact("name", "name", g.name),
             Fact("tasks", "tasks", n),
             Fact("edges", "edges", g.n_edges),
             Fact("weights", "task weights", "loads (time at speed 1)" if g.loads is not None
                  else f"a cost table on {g.width} nodes (work: the mean of a task's row)"),
             Fact("total_work", "total work", sum(work), unit),
             Fact("critical_path", "critical path, no communication", max(plain), unit)]
    if data > 0:
        facts.append(Fact("critical_path_with_communication", comm, max(with_comm), unit))
    facts += [Fact("levels", "topological levels", len(per_level)),
              Fact("width", "width (most tasks in one level)", max(per_level)),
              Fact("total_data", "total data (over the edges)", data, "data units" if network is None else "B")]
    return facts


def _wfformat_facts(g: TaskGraph) -> list[Fact]:
    """What a WfFormat file records beyond its graph: its version, machines and the real run's makespan."""
    meta = g.meta
    speeds = sorted({m["speedInMHz"] for m in meta["machines"].values() if m["speedInMHz"] is not None})
    return [Fact("schema_version", "schemaVersion", meta["schemaVersion"]),
            Fact("machines", "machines", len(meta["machines"])),
            Fact("machine_mhz", "machine speeds (distinct)", speeds, "MHz", none="none recorded"),
            Fact("recorded_makespan", "recorded makespan of the real run", meta["makespan"], "s",
                 none="none recorded")]


def describe_json(path: Path) -> Description | None:
    """A ``.json`` task graph (dlbkit's or WfFormat, by content, as :func:`~.workload.read` chooses); None for
    a JSON document that is neither (an object without ``tasks``, nor ``schemaVersion`` and ``workflow``). A
    file that is not JSON, or not UTF-8, is the reader's to refuse."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        doc = None  # the reader names the problem
    else:
        if not (wfformat.is_wfformat(doc) or (isinstance(doc, dict) and "tasks" in doc)):
            return None
    g = TaskGraph.read(path)
    if g.meta.get("format") == "WfFormat":
        kind = f"task graph (WfCommons WfFormat {g.meta['schemaVersion']})"
        facts = graph_facts(g, network=Network()) + _wfformat_facts(g)
    else:
        kind, facts = "task graph (dlbkit JSON)", graph_facts(g)
    return Description(str(path), kind, "TaskGraph.read", tuple(facts))


def describe_dax(path: Path) -> Description | None:
    """A Pegasus DAX (``.dax``, or an ``.xml`` whose root is ``<adag>``; None for another ``.xml``, a SimGrid
    platform's): its sizes are bytes, costed as a WfFormat workflow's."""
    from dlbkit.model import safexml

    if path.suffix.lower() == ".xml" and safexml.root_name(path) != "adag":
        return None
    g = TaskGraph.read(path)
    facts = graph_facts(g, network=Network()) + [Fact("version", "DAX version", g.meta.get("version"),
                                                      none="not given")]
    return Description(str(path), "task graph (Pegasus DAX)", "TaskGraph.read", tuple(facts))


def describe_text_graph(path: Path) -> Description:
    """A Kasahara ``.stg`` or thesis ``.adg`` task graph."""
    suffix = path.suffix.lower()
    g = TaskGraph.read(path)
    return Description(str(path), f"task graph ({_FORMATS[suffix]})", "TaskGraph.read",
                       tuple(graph_facts(g)))


def describe_ntp(path: Path) -> Description:
    """The thesis's ``.ntp`` network file: the platform it gives (relative speeds; latency 0 and bandwidth 1,
    so that a message of data c costs c × hops: :func:`~dlbkit.families.graph.model.costs.platform_from_ntp`)."""
    from dlbkit.families.graph.model.costs import platform_from_ntp

    p = platform_from_ntp(path)
    return Description(str(path), "platform (thesis .ntp network file, 002)", "costs.platform_from_ntp",
                       platform_facts(p, speed_unit="relative speed", bandwidth_unit="data units/s"))


#: the family's kinds of file, in the order ``dlbkit describe`` tries them
FILES = (FileKind("task graph (dlbkit JSON or WfCommons WfFormat)", (".json",), describe_json),
         FileKind("task graph (Kasahara STG, thesis ADG)", (".stg", ".adg"), describe_text_graph),
         FileKind("task graph (Pegasus DAX)", (".dax", ".xml"), describe_dax),
         FileKind("platform (thesis network file)", (".ntp",), describe_ntp))
