"""Task-graph generators: random layered DAGs, Gaussian elimination, FFT, the worst-case in-tree of
002 §10, WfCommons' synthetic scientific workflows (:mod:`.wfcommons_recipes`), and the graphs the
note gives in full (the atmospheric graph, Appendix A.1; the Max (k-1) Sum examples of §3.4.1 and
§3.5.2, Appendix B; Topcuoglu, Hariri & Wu 2002's Fig. 2 example).

Every generator returns a :class:`~dlbkit.families.graph.model.workload.TaskGraph`; the layered one
draws from ``numpy.random.default_rng(seed)`` only, the WfCommons one from WfCommons' own random
sources seeded from its seed, so a seed gives one graph.
"""

from __future__ import annotations

import math
import re

import numpy as np

from dlbkit.errors import ConfigError, closest
from dlbkit.model import check
from dlbkit.model.gcpause import paused_gc
from dlbkit.families.graph.model.workload import MAX_TASKS, TaskGraph  # a generator past MAX_TASKS would run for hours before a run
from dlbkit.families.graph.model import wfcommons_recipes

__all__ = ["layered", "gaussian_elimination", "fft", "in_tree", "atmospheric", "sinclair_kmeans9",
           "sinclair_equal5", "topcuoglu10", "wfcommons", "GENERATORS", "SEEDED"]


#: entries of a generated cost table (n × nodes): 800 MB of floats, as a divisible loop's item costs
MAX_COST_ENTRIES = 10**8


def _bounded(count: int, limit: int, field: str, value, what: str, exact: bool = True) -> None:
    """Refuse a generator size giving more than *limit* (*count*: how many, or, not *exact*, a partial
    sum already past the limit)."""
    if count > limit:
        raise ConfigError(field, value, f"a size giving at most {limit:,} {what} (dlbkit's limit; this one "
                          + (f"{count:,})" if exact else "more)"))


def layered(n: int = 100, *, width: int = 10, density: float = 0.3, ccr: float = 1.0, load: float = 10.0,
            nodes: int | None = None, beta: float = 0.5, seed: int = 0) -> TaskGraph:
    """A random layered DAG of *n* tasks, about *width* per layer (layer sizes uniform in
    [1, 2·width − 1]). Every task of a layer after the first gets an edge from each task of the layer
    above with probability *density*, and at least one. Loads are uniform in [0.5, 1.5]·*load*; an
    edge's data is uniform in [0.5, 1.5]·*ccr*·*load* (so the communication-to-computation ratio is
    *ccr* on average). With *nodes*, tasks get a cost table instead (unrelated machines, Topcuoglu
    et al. 2002 §5.1's range method: node costs uniform in load·[1 − β/2, 1 + β/2])."""
    n = check.size(n, "n", MAX_TASKS, "tasks of a generated graph")
    # layer sizes are drawn below 2·width as numpy int64s: 2**63 − 1 was a ValueError (high is out of bounds)
    width = check.size(width, "width", MAX_TASKS, "about that many tasks per layer of a generated graph")
    density = check.number(density, "density", lo=0.0, hi=1.0)
    ccr = check.number(ccr, "ccr", lo=0.0)
    load = check.number(load, "load", lo=0.0, lo_open=True)
    beta = check.number(beta, "beta", lo=0.0, hi=2.0)
    seed = check.integer(seed, "seed", lo=0)
    if nodes is not None:
        nodes = check.integer(nodes, "nodes", lo=1)
        _bounded(n * nodes, MAX_COST_ENTRIES, "n", n, f"n × nodes ({nodes:,}) cost-table entries")
    rng = np.random.default_rng(seed)
    bounds = [0]  # layer k is tasks bounds[k] … bounds[k + 1] − 1
    while bounds[-1] < n:
        bounds.append(bounds[-1] + min(n - bounds[-1], int(rng.integers(1, 2 * width))))
    edges = _layer_edges(rng, bounds, density, ccr, load)
    loads = rng.uniform(0.5, 1.5, size=n) * load
    if nodes is None:
        return TaskGraph(list(range(n)), loads=loads.tolist(), edges=edges, name=f"layered{n}")
    costs = loads[:, None] * rng.uniform(1 - beta / 2, 1 + beta / 2, size=(n, nodes))
    return TaskGraph(list(range(n)), costs=costs.tolist(), edges=edges, name=f"layered{n}x{nodes}")


#: doubles read ahead at once by :func:`_layer_edges` (at most, unless a task needs more): 512 kB,
#: enough that numpy, not Python, takes the time, and small next to a large graph's edges
_BLOCK = 1 << 16


def _layer_edges(rng: np.random.Generator, bounds: list, density: float, ccr: float, load: float, *,
                 block: int = _BLOCK) -> list:
    """:func:`layered`'s edges: the draws of this per-task loop (``above``: the layer above task j's),
    read in numpy blocks, in the same order, so that a seed gives the graph it always gave::

        for j in each layer after the first:
            ps = [i for i in above if rng.random() < density] or [above[int(rng.integers(len(above)))]]
            edges.extend((i, j, float(rng.uniform(0.5, 1.5) * ccr * load)) for i in ps)

    ``random()`` and ``uniform(0.5, 1.5)`` each take the stream's next double (uniform is 0.5 + 1.0 × it),
    so a block of doubles read ahead (a copy of *rng*'s bit generator draws it) holds a task's tests
    and then its edges' data, one double per edge. A pass over the tasks (Python ints only) finds where
    each task's doubles start; numpy reads the edges out of the block. ``integers()`` (a task whose
    tests all failed) takes 32-bit halves that the bit generator keeps between calls, so nothing may
    stand in for it: *rng* itself draws up to that task's last test and makes the call, and the scan
    goes on after the 64-bit outputs it took. tests/families/graph/model/test_graph_build.py compares with the loop (*block*:
    the block size, small there so that blocks turn often)."""
    gen = rng.bit_generator
    look = np.random.Generator(type(gen)(0))  # reads the stream ahead; rng draws only what the loop drew
    widths = [b - a for a, b in zip(bounds, bounds[1:])]
    # a task's doubles: a test per task above (w), then a datum per edge (≤ w), or integers()'s 64-bit
    # outputs (0 or 1; more only after a rejection, a chance of about w in 2^32) and one datum
    need = [2 * w + 2 for w in widths]
    # a block holds any task's doubles, and no more than the whole graph's at most (a small graph's)
    size = max(max(need), min(block, sum(x * y for x, y in zip(need, widths[1:]))))
    edges: list = []
    doubles = hits = None
    starts: list = []  # (first double, tests, first task above, j) of the block's tasks; a failed
    # task has 0 tests, its parent as the first task above and its datum as its first double
    p = pos = size  # the block's doubles the scan has used, and those rng has drawn (pos ≤ p)
    for k in range(1, len(widths)):
        a, w = bounds[k - 1], widths[k - 1]
        for j in range(bounds[k], bounds[k + 1]):
            if p + need[k - 1] > size:  # the task's doubles may pass the block's end: the next block
                edges += _block_edges(doubles, starts, density, ccr, load)
                rng.random(p - pos)
                look.bit_generator.state = gen.state
                doubles = look.random(size)
                hits = np.zeros(size + 1, dtype=np.int64)  # hits[q]: the tests passed in doubles[:q]
                np.cumsum(doubles < density, out=hits[1:])
                hits = hits.tolist()
                starts, p, pos = [], 0, 0
            c = hits[p + w] - hits[p]
            if c:
                starts.append((p, w, a, j))
                p += w + c
                continue
            rng.random(p + w - pos)  # rng at the task's last test, as the loop has it
            before = gen.state
            parent = a + int(rng.integers(w))
            p = pos = p + w + _outputs_since(gen, before, look.bit_generator)
            if p < size:
                starts.append((p, 0, parent, j))
                p += 1
            else:  # integers() took the rest of the block (rejections): the datum as the loop draws it
                edges += _block_edges(doubles, starts, density, ccr, load)
                edges.append((parent, j, float(rng.uniform(0.5, 1.5) * ccr * load)))
                starts, p, pos = [], size, size
    edges += _block_edges(doubles, starts, density, ccr, load)
    rng.random(p - pos)  # rng where the loop leaves it: the loads come next
    return edges


def _outputs_since(gen, before: dict, probe) -> int:
    """How many 64-bit outputs PCG64 *gen* gave since its state was *before* (*probe*: a spare PCG64)."""
    now = gen.state["state"]["state"]
    if now == before["state"]["state"]:  # none: integers() took the half kept from an earlier call
        return 0
    probe.state = before
    k = 0
    while probe.state["state"]["state"] != now:
        probe.random_raw()
        k += 1
    return k


def _block_edges(block: np.ndarray, starts: list, density: float, ccr: float, load: float) -> list:
    """The edges of the tasks of *starts* (:func:`_layer_edges`), in order, read from *block*."""
    if not starts:
        return []
    first, w, a, j = np.array(starts, dtype=np.int64).T
    failed = w == 0
    tests = np.where(failed, 1, w)  # a failed task: one entry, its edge to the parent
    owner = np.repeat(np.arange(len(first)), tests)  # one entry per test, by task
    off = np.arange(len(owner)) - np.repeat(np.cumsum(tests) - tests, tests)  # the test's task above, from a
    passed = failed[owner] | (block[first[owner] + off] < density)
    owner, off = owner[passed], off[passed]
    # a task's k-th edge has its datum k doubles after its last test
    k = np.arange(len(owner)) - np.searchsorted(owner, owner)
    data = (0.5 + block[first[owner] + w[owner] + k]) * ccr * load
    return list(zip((a[owner] + off).tolist(), j[owner].tolist(), data.tolist()))


def gaussian_elimination(m: int = 10, *, ccr: float = 1.0) -> TaskGraph:
    """The Gaussian-elimination DAG for an m × m matrix (Topcuoglu et al. 2002 §5.2.1; (m² + m − 2)/2
    tasks): step k has a pivot task ``("p", k)`` and updates ``("u", k, j)`` of columns j > k. The
    pivot feeds its step's updates; update (k, k+1) feeds the next pivot, update (k, j) feeds (k+1, j).
    A task of step k has load m − k (the rows left) and sends ccr·(m − k) data."""
    m = check.integer(m, "m", lo=2)
    _bounded((m * m + m - 2) // 2, MAX_TASKS, "m", m, "tasks, (m² + m − 2)/2")
    ccr = check.number(ccr, "ccr", lo=0.0)
    ids, loads, edges = [], [], []
    for k in range(1, m):
        ids.append(f"p{k}")
        loads.append(float(m - k))
        for j in range(k + 1, m + 1):
            ids.append(f"u{k},{j}")
            loads.append(float(m - k))
            edges.append((f"p{k}", f"u{k},{j}", ccr * (m - k)))
            if k + 1 < m:
                edges.append((f"u{k},{j}", f"p{k + 1}" if j == k + 1 else f"u{k + 1},{j}", ccr * (m - k)))
    return TaskGraph(ids, loads=loads, edges=edges, name=f"gauss{m}")


def fft(points: int = 8, *, ccr: float = 1.0) -> TaskGraph:
    """The FFT DAG of Topcuoglu et al. 2002 §5.2.2 for *points* inputs (a power of 2): 2·points − 1
    recursive-call tasks (a binary out-tree, ``r0`` the root) and log2(points) levels of *points*
    butterfly tasks; leaf i feeds butterfly (1, i) and (1, i ^ 1), butterfly (l, i) feeds (l+1, i) and
    (l+1, i ^ 2^l). Unit loads, data *ccr* on every edge."""
    points = check.integer(points, "points", lo=2)
    if points & (points - 1):
        raise ConfigError("points", points, "a power of 2 (>= 2)")
    _bounded(2 * points - 1 + points * (points.bit_length() - 1), MAX_TASKS, "points", points,
             "tasks, 2·points − 1 + points·log2(points)")
    ccr = check.number(ccr, "ccr", lo=0.0)
    ids = [f"r{i}" for i in range(2 * points - 1)]  # heap order: children of r_i are r_{2i+1}, r_{2i+2}
    edges = [(f"r{i}", f"r{c}", ccr) for i in range(points - 1) for c in (2 * i + 1, 2 * i + 2)]
    leaves = [f"r{i}" for i in range(points - 1, 2 * points - 1)]
    levels = int(math.log2(points))
    for lv in range(1, levels + 1):
        for i in range(points):
            ids.append(f"b{lv},{i}")
            srcs = leaves if lv == 1 else [f"b{lv - 1},{x}" for x in range(points)]
            for x in sorted({i, i ^ (1 << (lv - 1))}):
                edges.append((srcs[x], f"b{lv},{i}", ccr))
    return TaskGraph(ids, loads=[1.0] * len(ids), edges=edges, name=f"fft{points}")


def in_tree(m: int, k: int, *, l: float | list = 1.0, c: float | list = 1.0) -> TaskGraph:
    """The worst-case structure of 002 §10.1 (Fig. 11): a complete m-ary in-tree of *k* levels.
    Level i (1 = the single terminal task, k = the leaves) has m^(i−1) tasks of load l_i; a task of
    level i+1 sends c_i to its parent on level i. *l* and *c* are one number for every level or
    lists indexed by level (l[0] = l_1, c[0] = c_1). Tasks are numbered in allocation order, level k
    first, siblings consecutive (the numbering under which round-robin gives C^PD, §10.5)."""
    m = check.integer(m, "m", lo=2)
    k = check.integer(k, "k", lo=2)
    level, tasks = 1, 0
    for _ in range(k):  # Σ m^(i−1) over the k levels, stopping once past the limit (m^k may be vast)
        tasks += level
        level *= m
        if tasks > MAX_TASKS:
            break
    _bounded(tasks, MAX_TASKS, "k", k, f"tasks, Σ m^(i−1) over the k levels (m = {m})", exact=False)
    ls = ([check.number(l, "l", lo=0.0)] * k if not isinstance(l, (list, tuple))
          else [check.number(x, f"l[{i}]", lo=0.0) for i, x in enumerate(l)])
    cs = ([check.number(c, "c", lo=0.0)] * k if not isinstance(c, (list, tuple))
          else [check.number(x, f"c[{i}]", lo=0.0) for i, x in enumerate(c)])
    if len(ls) != k or len(cs) < k - 1:
        raise ConfigError("l, c", (len(ls), len(cs)), f"k = {k} loads and at least k − 1 = {k - 1} communications")
    # level lv (k first) is one block of m^(lv−1) consecutive tasks; task q of a block sends to task
    # q // m of the next block, so the edges leave the tasks in index order, every task but the root
    sizes = [m ** (lv - 1) for lv in range(k, 0, -1)]
    starts = np.cumsum([0] + sizes)
    dst = np.concatenate([starts[i + 1] + np.arange(sizes[i]) // m for i in range(k - 1)])
    nxt = int(starts[-1])
    ids = list(range(nxt))
    # a level's tasks share its load's and its edges' data's float objects (24 B each otherwise)
    loads, data = [], []
    for lv, size in zip(range(k, 0, -1), sizes):
        loads += [ls[lv - 1]] * size
        if lv > 1:
            data += [cs[lv - 2]] * size
    with paused_gc():  # millions of edge tuples, no cycle
        edges = list(zip(ids[:-1], dst.tolist(), data))
        return TaskGraph(ids, loads=loads, edges=edges, name=f"intree{m}x{k}")


def atmospheric() -> TaskGraph:
    """The 18-task atmospheric-analysis module of 002 §9.1 (Fig. 8), as rebuilt in the note's Appendix
    A.1 from the thesis's Sciconic data file (App. B.4): tasks 1..18, Σ loads = 86, every edge c = 1."""
    loads = {1: 1.0, **{t: 3.0 for t in range(2, 10)}, **{t: 10.0 for t in range(10, 14)},
             **{t: 5.0 for t in range(14, 18)}, 18: 1.0}
    edges = [(1, t, 1.0) for t in range(2, 10)]
    edges += [(s, 10 + (s - 2) // 2, 1.0) for s in range(2, 10)]
    edges += [(s, d, 1.0) for s in range(10, 14) for d in range(14, 18)]
    edges += [(s, 18, 1.0) for s in range(14, 18)]
    return TaskGraph(list(loads), loads=list(loads.values()), edges=edges, name="atmospheric")


def sinclair_kmeans9() -> TaskGraph:
    """The 9-task Max (k-1) Sum example of 002 §3.5.2 (3 nodes), with the symmetric communication
    matrix Cu reconstructed in the note's Appendix B (the thesis's [C] is missing from the text). The
    example has no precedence: each Cu entry becomes one edge from the earlier to the later letter."""
    loads = dict(a=1, b=3, c=2, d=2, e=3, f=2, g=1, h=4, i=5)
    cu = [("a", "b", 2), ("a", "d", 4), ("a", "i", 10), ("b", "f", 4), ("c", "e", 2), ("c", "h", 4),
          ("c", "i", 2), ("d", "f", 4), ("f", "g", 6)]
    return TaskGraph(list(loads), loads=list(loads.values()), edges=cu, name="sinclair-3.5.2")


def sinclair_equal5() -> TaskGraph:
    """The 5-task equal-load example of 002 §3.4.1 (3 nodes). Its [C] is symmetric; each pair becomes
    one edge from the earlier letter carrying c_ij + c_ji (the algorithm reads only Cu)."""
    cu = [("a", "b", 2), ("a", "c", 4), ("a", "d", 4), ("c", "d", 2), ("c", "e", 2)]
    return TaskGraph(list("abcde"), loads=[1.0] * 5, edges=cu, name="sinclair-3.4.1")


def topcuoglu10() -> TaskGraph:
    """The 10-task example of Topcuoglu, Hariri & Wu 2002 (Fig. 2, Table 1: costs on 3 processors;
    edge weights are communication times). HEFT gives makespan 80 on it, CPOP 86 (Fig. 4)."""
    w = {1: (14, 16, 9), 2: (13, 19, 18), 3: (11, 13, 19), 4: (13, 8, 17), 5: (12, 13, 10), 6: (13, 16, 9),
         7: (7, 15, 11), 8: (5, 11, 14), 9: (18, 12, 20), 10: (21, 7, 16)}
    e = [(1, 2, 18), (1, 3, 12), (1, 4, 9), (1, 5, 11), (1, 6, 14), (2, 8, 19), (2, 9, 16), (3, 7, 23),
         (4, 8, 27), (4, 9, 23), (5, 9, 13), (6, 8, 15), (7, 10, 17), (8, 10, 11), (9, 10, 13)]
    return TaskGraph(list(w), costs=list(w.values()), edges=e, name="topcuoglu2002")


def wfcommons(app: str, tasks: int, *, seed: int = 0) -> TaskGraph:
    """A synthetic WfCommons workflow of application *app* (montage, epigenomics, …) with at most
    *tasks* tasks, drawn from *seed*: :func:`.wfcommons_recipes.generate` (the optional extra
    ``dlbkit[wfcommons]``)."""
    return wfcommons_recipes.generate(app, tasks, seed)


#: name → generator, for an experiment file's ``[workload] generator = ...``
GENERATORS = {"layered": layered, "gaussian": gaussian_elimination, "fft": fft, "in-tree": in_tree,
              "atmospheric": atmospheric, "sinclair-3.5.2": sinclair_kmeans9, "sinclair-3.4.1": sinclair_equal5,
              "topcuoglu2002": topcuoglu10, "wfcommons": wfcommons}
#: the generators that draw from a ``seed`` keyword: without one in the file, a new graph per repetition
SEEDED = ("layered", "wfcommons")


def graph_from_dict(d, path: str = "workload"):
    """An experiment's ``[workload]`` table (``kind = "graph"``) → TaskGraph: ``file = "g.json"|"g.stg"``
    (a WfFormat workflow's ``.json`` with an optional ``reference_mhz``: :func:`.workload.read_wfformat`;
    a Pegasus DAX ``.dax``: :func:`.workload.read_dax`),
    or ``generator = NAME`` with that generator's keywords (:data:`GENERATORS`), or inline ``tasks``
    and ``edges`` (the JSON form)."""
    d = dict(check.table(d, path))
    d.pop("kind", None)
    # beside a generator, ``tasks`` is its keyword (wfcommons: how many tasks), not an inline graph
    ways = [k for k in ("file", "generator") if k in d] or [k for k in ("tasks",) if k in d]
    if len(ways) != 1:
        raise ConfigError(path, ", ".join(ways) or "none of file, generator, tasks",
                          "exactly one of file = PATH, generator = NAME (with its keywords), or tasks/edges")
    if "file" in d:
        check.known_keys(d, path, {"file", "reference_mhz"})  # reference_mhz: a WfFormat workflow's
        f = d["file"]
        if not isinstance(f, str) or not f:
            raise ConfigError(f"{path}.file", f, "the path of a .json, .stg, .adg, .dax or .xml task-graph file")
        with check.renamed("graph file", f"{path}.file"), check.renamed("reference_mhz", f"{path}.reference_mhz"):
            return TaskGraph.read(f, reference_mhz=d.get("reference_mhz"))
    if ways == ["tasks"]:
        return TaskGraph.from_dict({k: v for k, v in d.items()}, path)
    name = d.pop("generator")
    if not isinstance(name, str) or name not in GENERATORS:  # a list or a table is not a name (nor hashable)
        raise ConfigError(f"{path}.generator", name, "one of " + ", ".join(GENERATORS),
                          suggest=closest(name, GENERATORS))
    import inspect
    fn = GENERATORS[name]
    sig = inspect.signature(fn).parameters
    check.known_keys(d, path, set(sig))
    for key, p in sig.items():
        if p.default is inspect.Parameter.empty and key not in d:
            raise ConfigError(f"{path}.{key}", "<missing>", f"given: generator {name!r} needs " +
                              ", ".join(k for k, q in sig.items() if q.default is inspect.Parameter.empty))
    try:
        return fn(**d)
    except ConfigError as e:  # a generator names its keyword; the file names it under [workload]
        head = re.split(r"[\[., ]", e.field, maxsplit=1)[0]
        if head in sig or head == "generator":  # "generator": an optional extra not installed
            raise ConfigError(f"{path}.{e.field}", e.value, e.allowed) from None
        raise
