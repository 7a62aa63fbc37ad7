"""What a task graph costs on a set of processors: execution times, transfer times, priorities.

Two cost models (``kind``), one formula for a transfer of *data* from processor p to q:
``0`` if p and q share a machine, else ``lat[p][q] + data · per[p][q]``.

* ``"standard"`` — the list-scheduling model (Topcuoglu, Hariri & Wu 2002 §3; Kwok & Ahmad 1999):
  a transfer between distinct machines takes latency × hops + data / bandwidth over the platform's
  topology, zero on one machine; processors are free while data is in flight; no contention. With a
  bare processor count M (no platform) the processors are identical of speed 1 and a transfer takes
  exactly ``data``.
* ``"thesis"`` — Sinclair 1993 (002 §2.4, verified by the note's §9.4): a message of *c* costs
  ``c · d`` where *d* is the hop distance (1 on a bus, and with a bare count M), and it occupies
  **both** ends: the evaluator adds it to the sender's and the receiver's time on their processor.
  Here *data* is a time per hop (002 §4: "the time taken to transmit"), never bytes.

Option ``contention`` (standard model only): the **bidirectional one-port** model (Bhat, Raghavendra &
Prasanna 2003, "Efficient collective communication in distributed heterogeneous systems", JPDC
63(3); used for DAG scheduling by Beaumont, Boudet & Robert 2002, "A realistic model and an efficient
heuristic for scheduling with heterogeneous processors", HCW): each machine sends at most one
message at a time and receives at most one at a time, a message occupying the sender's and the
receiver's port for its whole transfer time (latency included); processors still compute while
data flies, and transfers between cores of one machine stay free and take no port. The evaluator
(:mod:`dlbkit.families.graph.model.evaluate`) places the messages.

Option ``contention="link"`` (standard model on a platform): **link contention** on the routed
topology (Sinnen & Sousa 2005, "Communication contention in task scheduling", IEEE TPDS 16(6), §3):
a message between two machines follows one shortest path of the platform's topology (networkx's,
fixed per pair), occupies every link of it at once for its whole transfer time (cut-through), and a
link carries one message at a time in each direction (full duplex: the two directions are two
links); machines' ports are not limited. On a complete topology every pair has its own link.

A platform node with *c* cores gives *c* processors (``Platform.worker_nodes``); transfers between
cores of one machine are free. :func:`upward_rank` is the priority both evaluators and HEFT use
(002 §2.2's precedence level ``prec``; HEFT's rank_u).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from itertools import chain, compress

import numpy as np

from dlbkit.errors import ConfigError
from dlbkit.model import check
from dlbkit.families.graph.model.workload import TaskGraph

__all__ = ["GraphCosts", "costs_for", "platform_from_ntp", "write_ntp",
           "level_weights", "upward_rank", "downward_rank", "critical_path_bound", "COST_MODELS",
           "MAX_PROCESSORS", "MAX_ROUTED"]

COST_MODELS = ("standard", "thesis")
#: the most processors a task graph is costed on: its costs keep m × m latency and transfer tables
#: (a table of one value is one shared row: 0.9 GB for 1 000 tasks at this size, 1.0 GB through
#: ``heft``, 1.7 GB through ``pd``, which copies both into arrays)
MAX_PROCESSORS = 8192
#: the most machines with ``contention="link"``: a route (a tuple of links) per ordered pair
MAX_ROUTED = 1024


@dataclass(frozen=True, eq=False)
class GraphCosts:
    """Execution and transfer times of *graph* on ``n_nodes`` processors under cost model *kind*.

    ``exec[i][p]``: task i's time on processor p; ``host[p]``: the machine of processor p;
    ``lat``/``per``: the transfer formula's terms (module docstring); ``speeds[p]``; ``contention``:
    the one-port model of the module docstring (standard model only).
    """

    graph: TaskGraph
    kind: str
    speeds: tuple
    host: tuple
    exec: list
    lat: list
    per: list
    contention: bool = False
    #: link contention (``contention="link"``): per ordered pair of distinct machines, the directed
    #: links of its route (ids); None for the one-port model or none
    routes: dict | None = None

    @property
    def n_nodes(self) -> int:
        return len(self.speeds)

    def comm(self, data: float, p: int, q: int) -> float:
        """Time of a transfer of *data* from processor p to q (0 on one machine)."""
        if self.host[p] == self.host[q]:
            return 0.0
        return self.lat[p][q] + data * self.per[p][q]

    def mean_exec(self) -> list[float]:
        """w̄: each task's mean execution time over the processors (Topcuoglu 2002 §4.1)."""
        m = self.n_nodes
        return [sum(r) / m for r in self.exec]

    def mean_comm_factor(self) -> tuple[float, float]:
        """(mean latency, mean per-unit time) over ordered pairs of processors on distinct machines
        (HEFT's average communication cost, Topcuoglu 2002 §4.1); (0, 0) on one machine."""
        m, host = self.n_nodes, self.host
        # the pairs on distinct machines: all but those within a machine (c² for a machine of c cores)
        count = m * m - sum(c * c for c in Counter(host).values())
        if not count:
            return 0.0, 0.0
        # summed pair by pair in (p, q) order by one sum() (the same floats in the same order as a loop
        # over the pairs), each row's entries off its machine picked in C: a Python test per pair took
        # 2.7 s at 4 096 processors; no list of the m² pairs (16 M tuples, a GB, at 4 096), one row's
        # mask at a time
        machine = np.unique(np.asarray(host), return_inverse=True)[1].reshape(-1)

        def off_machine(table):
            return chain.from_iterable(compress(table[p], (machine != machine[p]).tolist()) for p in range(m))
        return sum(off_machine(self.lat)) / count, sum(off_machine(self.per)) / count


def costs_for(graph: TaskGraph, nodes, kind: str = "standard", *, contention: bool | str = False) -> GraphCosts:
    """The costs of *graph* on *nodes*: a processor count M (identical, speed 1, transfer = data) or a
    :class:`~dlbkit.model.platform.Platform`; *contention*: True, one message at a time per machine's
    send and receive port; ``"link"``, one at a time per directed link of the routed topology (a
    platform only); standard model only (module docstring)."""
    from dlbkit.model.platform import Platform
    if kind not in COST_MODELS:
        raise ConfigError("cost_model", kind, "one of " + ", ".join(repr(k) for k in COST_MODELS))
    if contention == "link":
        if not isinstance(nodes, Platform):
            raise ConfigError("contention", "link", "a Platform (links are its topology's), not a processor count")
        if kind != "standard":
            raise ConfigError("contention", "link", "the standard cost model")
        if nodes.n_nodes > MAX_ROUTED:
            raise ConfigError("contention", "link", f"a platform of at most {MAX_ROUTED:,} machines (dlbkit's limit: "
                              f"it keeps a route per ordered pair; this one has {nodes.n_nodes:,})")
        c = costs_for(graph, nodes, kind, contention=True)
        return GraphCosts(c.graph, c.kind, c.speeds, c.host, c.exec, c.lat, c.per, True, _routes(nodes))
    if not isinstance(contention, bool):
        raise ConfigError("contention", contention, "true, false or 'link'")
    if contention and kind != "standard":
        raise ConfigError("contention", contention, "false with the thesis cost model (it already keeps both "
                          "ends of every message busy); link contention is an option of the standard model")
    if isinstance(nodes, Platform):
        host = tuple(nodes.worker_nodes())
        speeds = tuple(nodes.nodes[h].speed for h in host)
        m = len(host)
        if m > MAX_PROCESSORS:
            raise ConfigError("nodes", f"a platform of {m:,} workers", f"at most {MAX_PROCESSORS:,} workers for a "
                              "task graph (dlbkit's limit: its costs keep m × m latency and transfer tables)")
        # one float per hop count, shared by every pair at that distance (m² entries, a few objects);
        # the hop rows one at a time (a list of all m of them was 0.5 GB at 8 192), and on a complete
        # platform without its m × m hop matrix (1 GB to build at 8 192)
        rows = (nodes.hops_from(h).tolist() for h in host)
        if kind == "standard":
            lat_s, inv_bw = nodes.network.latency, 1.0 / nodes.network.bandwidth
            by_hops: dict[int, float] = {}
            lat = [[by_hops.setdefault(row[h], float(row[h]) * lat_s) for h in host] for row in rows]
            per = _same_rows(inv_bw, m)
        else:
            lat = _same_rows(0.0, m)
            as_float: dict[int, float] = {}
            per = [[as_float.setdefault(row[h], float(row[h])) for h in host] for row in rows]
    else:
        if isinstance(nodes, bool) or not isinstance(nodes, int) or not 1 <= nodes <= MAX_PROCESSORS:
            raise ConfigError("nodes", nodes, f"an integer in [1, {MAX_PROCESSORS:,}] (a processor count; dlbkit's "
                              "limit: a task graph's costs keep m × m tables) or a Platform")
        m = nodes
        host = tuple(range(m))
        speeds = (1.0,) * m
        lat = _same_rows(0.0, m)
        per = _same_rows(1.0, m)
    ex = graph.exec_times(speeds)
    return GraphCosts(graph, kind, speeds, host, ex, lat, per, contention)


def _same_rows(value: float, m: int) -> list:
    """An m × m table of one *value*: m references to one row (the tables are read, never written;
    m rows of their own were 0.5 GB at 8 192 processors)."""
    return [[value] * m] * m


def _routes(platform) -> dict:
    """Per ordered pair of distinct machines, the ids of the directed links on one shortest path of
    the platform's topology (networkx's ``shortest_path``, deterministic for a given graph)."""
    import networkx as nx
    g = platform.graph
    ids: dict = {}
    out = {}
    n = len(platform.nodes)
    for a in range(n):
        paths = nx.single_source_shortest_path(g, a)
        for b in range(n):
            if a != b:
                path = paths[b]
                out[(a, b)] = tuple(ids.setdefault((u, v), len(ids)) for u, v in zip(path, path[1:]))
    return out


def level_weights(costs: GraphCosts) -> tuple[list[float], float, float]:
    """The weights of a path's length under the precedence level (:func:`upward_rank`): (per-task
    weight, mean latency, mean per-unit transfer time). Standard model: w̄ (:meth:`GraphCosts.mean_exec`)
    and HEFT's mean transfer terms (:meth:`GraphCosts.mean_comm_factor`). Thesis model: the loads
    (speed 1; a cost table's row mean) and the data at distance 1, as 002 §2.2 defines it."""
    if costs.kind == "thesis":
        g = costs.graph
        return [g.weight(i) for i in range(g.n_tasks)], 0.0, 1.0
    lat_m, per_m = costs.mean_comm_factor()
    return costs.mean_exec(), lat_m, per_m


def upward_rank(costs: GraphCosts) -> list[float]:
    """rank_u(i) = w̄_i + max over successors j of (c̄_ij + rank_u(j)), 0 over none (Topcuoglu 2002
    eq. 3; 002 §2.2's ``prec`` with the terminal task's own load included, as its data file has it).

    Standard model: w̄ the mean execution time over processors, c̄ the mean transfer time over pairs
    of distinct machines. Thesis model: the compile-time precedence level, from the loads (speed 1;
    a cost table's row mean) and the data at distance 1, as 002 defines it."""
    g = costs.graph
    w, lat_m, per_m = level_weights(costs)
    rank = [0.0] * g.n_tasks
    for i in reversed(g.topo):
        best = 0.0
        for j, d in g.succs[i]:
            v = rank[j] + (lat_m + d * per_m if (d or lat_m) else 0.0)
            if v > best:
                best = v
        rank[i] = w[i] + best
    return rank


def downward_rank(costs: GraphCosts) -> list[float]:
    """rank_d(i) = max over predecessors j of (rank_d(j) + w̄_j + c̄_ji), 0 for an entry task
    (Topcuoglu 2002 eq. 4), with the standard model's means."""
    g = costs.graph
    w = costs.mean_exec()
    lat_m, per_m = costs.mean_comm_factor()
    rank = [0.0] * g.n_tasks
    for i in g.topo:
        best = 0.0
        for j, d in g.preds[i]:
            v = rank[j] + w[j] + (lat_m + d * per_m if (d or lat_m) else 0.0)
            if v > best:
                best = v
        rank[i] = best
    return rank


def critical_path_bound(costs: GraphCosts) -> float:
    """A lower bound on any schedule's makespan under either model: the longest path with every task
    at its fastest time and free communication, or the total of fastest times over the processors."""
    g = costs.graph
    fastest = [min(r) for r in costs.exec]
    longest = [0.0] * g.n_tasks
    for i in g.topo:
        longest[i] = fastest[i] + max((longest[p] for p, _ in g.preds[i]), default=0.0)
    return max(max(longest), sum(fastest) / costs.n_nodes)


def platform_from_ntp(path, *, name: str | None = None):
    """A :class:`~dlbkit.model.platform.Platform` from the thesis simulator's network topology file
    ``.ntp`` (002 §6, the note's §8.8): the node count m, then m relative speeds, then the m × m
    communications distance matrix D (0 on the diagonal), separated by any white space. D must be the
    hop count of a graph (bus = complete, rings, hypercubes: every file the thesis shipped); the
    platform joins the nodes by that graph with latency 0 and bandwidth 1, so under the thesis cost
    model a message of c costs c · D. A bus (every distance 1) is the complete topology, which is not
    built (``Platform.complete``). m is at most :data:`MAX_PROCESSORS` (the platform is for costing
    task graphs). An error names the file, the line and the entry (``net.ntp:3000 distances[2][7]``)."""
    from dlbkit.model.platform import Network, Node, Platform
    p = _Ntp(path)
    m = p.count()
    speeds, d = p.speeds, p.distances
    # D is the hop count of the graph its 1s draw (upper triangle) iff it equals that graph's hop
    # matrix; a bus is checked against 1 − I, anything else row block by row block with scipy's
    # breadth-first searches (O(m · links), in C): networkx's took 13 s and 0.9 GB at m = 2 000
    upper = np.triu(d == 1, 1)
    links = int(upper.sum())
    if links == m * (m - 1) // 2:
        want, topology = None, "complete"
    else:
        import networkx as nx
        from scipy.sparse import csr_matrix
        from scipy.sparse.csgraph import shortest_path
        a, b = np.nonzero(upper)
        want = csr_matrix((np.ones(links, dtype=np.int8), (a, b)), shape=(m, m))
        topology = nx.Graph()
        topology.add_nodes_from(range(m))
        topology.add_edges_from(zip(a.tolist(), b.tolist()))  # row-major, as the nested loops added them
    for lo in range(0, m, _NTP_ROWS):
        rows = np.arange(lo, min(m, lo + _NTP_ROWS))
        if want is None:
            hops = (rows[:, None] != np.arange(m)[None, :]).astype(float)
        else:
            hops = shortest_path(want, unweighted=True, directed=False, indices=rows)
        bad = np.argwhere(hops != d[rows])
        if len(bad):
            i, j = int(rows[bad[0][0]]), int(bad[0][1])
            h = hops[i - lo, j]
            shown = "no path" if math.isinf(h) else f"{int(h)} hops"
            raise ConfigError(p.at(m + i * m + j, f"distances[{i}][{j}]"), int(d[i, j]),
                              f"the hop counts of a connected graph (bus, ring, hypercube, ...): the graph whose "
                              f"links are the distances of 1 joins nodes {i} and {j} by {shown}")
    nodes = [Node(f"n{i}", speed=s) for i, s in enumerate(speeds)]
    return Platform(nodes, Network(latency=0.0, bandwidth=1.0, topology=topology), name=name or p.path.stem)


_NTP_ROWS = 256  # rows of D compared at once with their hop counts: 256 × m floats (16 MB at m = 8 192)


class _Ntp:
    """An ``.ntp`` file read line by line into numpy (m = 3 000 is 9 M numbers: a list of Python words
    and floats for them took gigabytes), every number's line kept for the error that names it."""

    def __init__(self, path):
        from pathlib import Path
        self.path = Path(path)
        self.m: int | None = None
        self.starts: list[tuple[int, int]] = []  # (index of the line's first number after m, line number)
        self.n = 0  # numbers read after m

    def at(self, k: int, entry: str) -> str:
        """The field naming the *k*-th number after m (speeds first, then D row by row)."""
        import bisect
        i = bisect.bisect_right(self.starts, (k, math.inf)) - 1
        return f"{self.path}:{self.starts[i][1]} {entry}" if i >= 0 else f"{self.path} {entry}"

    def _entry(self, k: int) -> str:
        m = self.m
        return f"speeds[{k}]" if k < m else f"distances[{(k - m) // m}][{(k - m) % m}]"

    def count(self) -> int:
        """Read the file; return m. Speeds land in ``speeds`` (floats), D in ``distances`` (int16
        m × m: a hop count of m ≤ 8 192 nodes is below m), each checked as it is read, so the error is
        the file's first."""
        p = self.path
        try:
            with p.open(encoding="utf-8") as f:
                for ln, line in enumerate(f, 1):
                    words = line.split()
                    if not words:
                        continue
                    if self.m is None:
                        self._first(words[0], ln)
                        words = words[1:]
                        self.speeds: list[float] = []
                        self.distances = np.zeros((self.m, self.m), dtype=np.int16)
                        if not words:
                            continue
                    self._take(words, ln, np)
        except (OSError, UnicodeDecodeError) as e:
            raise ConfigError("network topology file", str(p), f"a readable .ntp file ({e})") from None
        m = self.m
        if m is None:
            raise ConfigError(f"{p}", "an empty file", "m, then m speeds, then m × m distances (numbers)")
        if self.n != m + m * m:
            raise ConfigError(f"{p}", f"{self.n} numbers after m = {m}", f"m + m² = {m + m * m}")
        return m

    def _first(self, word: str, ln: int) -> None:
        try:
            m = int(word)
        except ValueError:
            m = None
        if m is None or not 1 <= m <= MAX_PROCESSORS:  # bounded before its m × m matrix is allocated
            raise ConfigError(f"{self.path}:{ln} m", word, f"the node count, an integer in [1, {MAX_PROCESSORS:,}] "
                              "(then m speeds, then m × m distances; dlbkit's limit on the processors a task "
                              "graph is costed on)")
        self.m = m

    def _take(self, words: list[str], ln: int, np) -> None:
        m, k = self.m, self.n
        total = m + m * m
        if k + len(words) > total:
            raise ConfigError(f"{self.path}:{ln}", words[total - k], f"the end of the file: m + m² = {total} "
                              f"numbers after m = {m}")
        try:
            x = np.array(words, dtype=float)
        except ValueError:
            i = next(i for i, w in enumerate(words) if not _is_float(w))
            raise ConfigError(f"{self.path}:{ln} {self._entry(k + i)}", words[i], "a number") from None
        self.starts.append((k, ln))
        cut = max(0, min(len(x), m - k))  # this line's speeds, then its distances
        for i, v in enumerate(x[:cut].tolist()):  # named as the file has them (Node would name a node 'n0')
            self.speeds.append(check.number(v, f"{self.path}:{ln} speeds[{k + i}]", lo=0.0, lo_open=True))
        dist = x[cut:]
        if len(dist):
            ok = np.isfinite(dist) & (dist >= 0) & (dist <= m - 1) & (dist == np.floor(dist))
            if not ok.all():
                i = cut + int(np.argmin(ok))
                raise ConfigError(f"{self.path}:{ln} {self._entry(k + i)}", float(x[i]),
                                  f"a whole number of hops in [0, {m - 1}] (the hop counts of a connected graph "
                                  f"of {m} nodes)")
            start = k + cut - m
            self.distances.flat[start:start + len(dist)] = dist
        self.n = k + len(words)


def _is_float(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return True


def write_ntp(platform, path) -> None:
    """Write *platform* as the thesis simulator's ``.ntp`` network topology file (002 §6, the note's
    §8.8; :func:`platform_from_ntp` reads it back): m, the m node speeds, then the hop-count matrix of
    its topology as the distance matrix D. Latency, bandwidth and cores are not in the format (the
    thesis model reads speeds and D only); a node's speed is written with ``repr``, so it reads back
    exactly."""
    from pathlib import Path
    hops = platform.hops
    m = len(platform.nodes)
    lines = [str(m)] + [repr(float(n.speed)) for n in platform.nodes]
    lines += [" ".join(str(int(hops[i][j])) for j in range(m)) for i in range(m)]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
