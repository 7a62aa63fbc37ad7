"""Workflows in Pegasus' **DAX** (XML, versions 2.x and 3.x), read into a :class:`~.workload.TaskGraph` (issue 33).

A DAX ("directed acyclic graph in XML") is the abstract workflow of the Pegasus workflow management
system up to Pegasus 4.9 (Pegasus 5 writes YAML instead). This reader was written from Pegasus' XML
schemas, ``dax-2.1.xsd`` and ``dax-3.6.xsd`` (github.com/pegasus-isi/pegasus, ``etc/`` and
``share/pegasus/schema/``; namespace ``http://pegasus.isi.edu/schema/DAX``), and from the generated
DAXes of the Pegasus workflow generator (Bharathi et al.'s synthetic Montage, CyberShake, Epigenomics,
LIGO and SIPHT workflows, as WorkflowSim ships them in ``config/dax/``), not from any other parser:

* ``<adag version name>``: the root; ``version`` 2.x or 3.x (the schemas require it; a hand-written
  DAX without one is read, its version None);
* ``<job id name ... runtime=...>``: a task (a ``cores`` attribute is not used: a dlbkit task runs on
  one node). The schemas have no runtime; the generated DAXes carry it as the attribute ``runtime``
  (seconds), and Pegasus' own profile ``<profile namespace="pegasus" key="runtime">`` (the expected
  runtime in seconds, Pegasus' docs) says the same: the attribute is read, else that profile;
* ``<uses file=... link=... size=...>`` in a job (DAX 2.x names the file ``file``, 3.x ``name``):
  ``link`` ``input``, ``output`` or ``inout`` (both); ``none``, ``checkpoint`` or no link carry no
  data between jobs. ``size`` (bytes) is optional in the schema: absent, the file counts 0 bytes;
* ``<child ref><parent ref/>...</child>``: the dependencies, parent → child.

What the graph gets: tasks = the jobs, in file order, ids = their ``id``; **loads** = the runtimes
(seconds at speed 1, as WfFormat's without ``reference_mhz``: a DAX records no machine); **edges** =
the declared ``<child>/<parent>`` pairs (once per pair), ``data`` = the total size of the files the
child uses as input (or inout) that the parent uses as output (or inout), at the size the *child's*
``<uses>`` gives (the generated DAXes give one file different sizes at its writer and at its readers:
the bytes a child reads are what travel), 0 when none. Files never add an edge: a workflow's
dependencies are the ones it declares. ``TaskGraph.meta`` = ``{"format": "DAX", "version", "name",
"makespan": None}`` (a DAX is a plan: no run is recorded).

Refused, each as one :class:`~dlbkit.errors.ConfigError` naming the file and the place in it (``k``
counts the adag's ``<job>`` / ``<child>`` elements from 0): a root other than ``<adag>``, a version
other than 2.x/3.x, no job, a job id missing or repeated (``job[4].id``), a runtime missing,
negative or not a number (``job[2].runtime``), a size negative or not a number
(``job[2].uses[1].size``), a ``link`` outside the schema's, a child or parent ref naming no job
(``child[3].parent[0].ref``) or the job itself, a cycle, a sub-workflow (``<dag>``, ``<dax>``: not
read), bytes that are not UTF-8, and XML with a DOCTYPE, entity declarations or external references
(:mod:`dlbkit.model.safexml`). Other elements (``<filename>``, ``<file>``, ``<executable>``,
``<transformation>``, ``<metadata>``, ``<invoke>``) and attributes are ignored.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from dlbkit.errors import ConfigError
from dlbkit.model import check, safexml

from .wfformat import Parsed

__all__ = ["NAMESPACE", "parse"]

#: the namespace of every DAX schema's elements (a DAX without one is read too)
NAMESPACE = "http://pegasus.isi.edu/schema/DAX"
_VERSION = re.compile(r"[23]\.\d+[a-z]?")  # 2.1, 3.6; the 2.x schemas allow a letter after
#: the links a schema allows; those that move data between jobs (inout is both)
_LINKS = ("input", "output", "inout", "none", "checkpoint")
_READS, _WRITES = ("input", "inout"), ("output", "inout")


def _local(tag) -> str | None:
    """An element's name without the DAX namespace; None for a comment or another namespace's element."""
    if not isinstance(tag, str):
        return None
    if tag.startswith("{"):
        ns, _, name = tag[1:].partition("}")
        return name if ns == NAMESPACE else None
    return tag


def _number(text, field: str, what: str) -> float:
    """A finite number >= 0 from attribute or element text *text*."""
    try:
        v = float(text)
    except (TypeError, ValueError):
        v = math.nan
    if not (math.isfinite(v) and v >= 0):
        raise ConfigError(field, "<missing>" if text is None else text, what)
    return v


class _Job:
    __slots__ = ("id", "inputs", "outputs", "runtime")

    def __init__(self, jid: str, runtime: float):
        self.id, self.runtime = jid, runtime
        self.inputs: dict = {}  # file name -> bytes (a dict: a file used twice is counted once)
        self.outputs: dict = {}


def _job(el, at: str) -> _Job:
    jid = el.get("id")
    if not jid:
        raise ConfigError(f"{at}.id", "<missing>" if jid is None else jid, "a non-empty job id")
    runtime = el.get("runtime")
    if runtime is None:  # Pegasus' own place for it: the job's pegasus profile "runtime"
        for p in el:
            if _local(p.tag) == "profile" and p.get("namespace") == "pegasus" and p.get("key") == "runtime":
                runtime = (p.text or "").strip()
    job = _Job(jid, _number(runtime, f"{at}.runtime", 'a runtime in seconds >= 0 (the attribute runtime=, '
                            'or <profile namespace="pegasus" key="runtime">)'))
    uses = [u for u in el if _local(u.tag) == "uses"]
    for j, u in enumerate(uses):
        w = f"{at}.uses[{j}]"
        name = u.get("file", u.get("name"))  # DAX 2.x: file=, 3.x: name=
        if not name:
            raise ConfigError(w, "<missing>" if name is None else name, "a file name (file= in DAX 2, name= in DAX 3)")
        link = u.get("link", "none")
        if link not in _LINKS:
            raise ConfigError(f"{w}.link", link, ", ".join(_LINKS))
        size = u.get("size")
        size = 0.0 if size is None else _number(size, f"{w}.size", "a size in bytes >= 0")
        if link in _READS:
            job.inputs.setdefault(name, size)
        if link in _WRITES:
            job.outputs.setdefault(name, size)
    return job


def parse(data: bytes, path: str = "workflow.dax") -> Parsed:
    """The graph in DAX file contents *data* (*path* names it in errors); every check but the cycle's
    (the graph's constructor's)."""
    check.decode(data, path)  # DAXes are UTF-8 (every generator writes it); other bytes named here
    other = safexml.root_name(data)
    if other is not None and other != "adag":  # a SimGrid platform (with its DOCTYPE) is named as that first
        raise ConfigError(f"{path}: root element", f"<{other}>", f"<adag> (a Pegasus DAX, namespace {NAMESPACE})")
    root = safexml.parse(data, path, "a Pegasus DAX (XML)", dtd=False)  # a DAX has no DOCTYPE: none allowed
    if _local(root.tag) != "adag":
        raise ConfigError(f"{path}: root element", f"<{root.tag}>", f"<adag> (a Pegasus DAX, namespace {NAMESPACE})")
    version = root.get("version")  # required by the schemas; absent in some hand-written DAXes, read as None
    if version is not None and not _VERSION.fullmatch(version):
        raise ConfigError(f"{path} <adag>.version", version, "a DAX version 2.x or 3.x")
    jobs: dict = {}
    at_of: dict = {}  # job id -> its place, for the error of a repeated id
    deps = []
    counts = {"job": 0, "child": 0}
    for el in root:
        name = _local(el.tag)
        if name in ("dag", "dax"):
            raise ConfigError(f"{path} <{name}>", el.get("id", "<no id>"), "a <job> (sub-workflows, <dag> and <dax>, "
                              "are not read)")
        if name not in counts:
            continue
        at = f"{path} {name}[{counts[name]}]"
        counts[name] += 1
        if name == "child":
            deps.append((el, at))
            continue
        job = _job(el, at)
        if job.id in jobs:
            raise ConfigError(f"{at}.id", job.id, f"unique across jobs ({at_of[job.id]} has it too)")
        jobs[job.id], at_of[job.id] = job, at.split(" ", 1)[1]
    if not jobs:
        raise ConfigError(f"{path}: jobs", "none", "at least one <job>")

    pairs: dict = {}  # (parent id, child id) -> None, in file order
    for el, at in deps:
        child = el.get("ref")
        if child not in jobs:
            raise ConfigError(f"{at}.ref", "<missing>" if child is None else child, "the id of a job of the DAX")
        parents = [p for p in el if _local(p.tag) == "parent"]
        for j, p in enumerate(parents):
            ref = p.get("ref")
            if ref not in jobs:
                raise ConfigError(f"{at}.parent[{j}].ref", "<missing>" if ref is None else ref,
                                  "the id of a job of the DAX")
            if ref == child:
                raise ConfigError(f"{at}.parent[{j}].ref", ref, "a job other than the child (no self-loop)")
            pairs.setdefault((ref, child), None)
    edges = []
    for p, c in pairs:
        outs, ins = jobs[p].outputs, jobs[c].inputs
        # over the smaller of the two (a merge job reads thousands of files, one from each parent), the size
        # the child declares
        few = outs if len(outs) < len(ins) else ins
        edges.append((p, c, float(sum(ins[f] for f in few if f in outs and f in ins))))
    name = root.get("name")
    meta = {"format": "DAX", "version": version, "name": name, "makespan": None}
    return Parsed([j.id for j in jobs.values()], [j.runtime for j in jobs.values()], edges,
                  name if name else Path(path).stem, meta, "job", "child/parent")
