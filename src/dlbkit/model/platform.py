"""Platform: the cluster's nodes, network and per-node availability. Loadable from TOML.

Units: speed in work units per second; memory in bytes; latency in seconds per hop; bandwidth in
bytes per second. A node with ``cores = c`` contributes c workers of the node's speed.
"""

from __future__ import annotations

import tomllib
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from dlbkit.errors import ConfigError
from dlbkit.model import check
from dlbkit.model.availability import Constant, as_availability, availability_from_dict
from dlbkit.model.topology import (build, complete_neighbours, given_graph, hop_matrix, is_complete, is_networkx, neighbour_lists,
                       parse)

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["Node", "Network", "Platform", "load_toml", "MAX_NODES", "MAX_CORES"]

#: the most nodes of a platform and cores of a node (dlbkit's limits: the engines keep per-worker
#: state and the topologies per-pair hop counts; far beyond the platforms of the sources, 64 nodes)
MAX_NODES = 100_000
MAX_CORES = 10_000


@dataclass(frozen=True)
class Node:
    """One machine: *name* (a non-empty string), *speed* (work units/s, > 0), *cores* (1 to
    :data:`MAX_CORES`), *memory* (bytes, None = unlimited) and *availability*: an availability
    (:class:`~dlbkit.model.availability.Constant`, ``Step``, ``Pulse``, ``Markov``, ``Recorded``), or
    as in a platform file a bare level in (0, 1] or a table with ``kind``.

    Raise :exc:`~dlbkit.errors.ConfigError` naming ``node 'name'.field`` for a bad value.
    """

    name: str
    speed: float = 1.0
    cores: int = 1
    memory: float | None = None
    availability: Any = field(default_factory=Constant)

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ConfigError("node name", self.name, "a non-empty string")
        f = f"node {self.name!r}"
        object.__setattr__(self, "speed", check.number(self.speed, f"{f}.speed", lo=0.0, lo_open=True))
        check.size(self.cores, f"{f}.cores", MAX_CORES, "workers per node")
        if self.memory is not None:
            check.number(self.memory, f"{f}.memory", lo=0.0)
        object.__setattr__(self, "availability", as_availability(self.availability, f"{f}.availability"))


@dataclass(frozen=True)
class Network:
    """*latency* seconds per hop, *bandwidth* bytes/s, and a topology (kind name or networkx graph)."""

    latency: float = 1e-4
    bandwidth: float = 125e6
    topology: Any = "complete"

    def __post_init__(self):
        object.__setattr__(self, "latency", check.number(self.latency, "network.latency", lo=0.0))
        object.__setattr__(self, "bandwidth", check.number(self.bandwidth, "network.bandwidth", lo=0.0, lo_open=True))
        if not isinstance(self.topology, (str, Mapping)) and not is_networkx(self.topology):
            raise ConfigError("network.topology", self.topology, "a topology name, a table with kind, or a networkx graph")


class Platform:
    """Nodes and the network that joins them.

    >>> p = Platform([Node("a", speed=2.0), Node("b")], Network(latency=0.001))
    >>> p.n_nodes, p.total_speed
    (2, 3.0)
    """

    def __init__(self, nodes: Sequence[Node], network: Network | None = None, *, name: str = "platform"):
        if isinstance(nodes, (str, bytes, Node)) or not isinstance(nodes, Sequence):
            raise ConfigError("nodes", nodes, "a list of Node objects")
        if not nodes:
            raise ConfigError("nodes", [], "a non-empty list (a cluster needs at least one node)")
        for i, n in enumerate(nodes):
            if not isinstance(n, Node):
                raise ConfigError(f"nodes[{i}]", n, "a Node")
        workers = sum(n.cores for n in nodes)
        if len(nodes) > MAX_NODES or workers > MAX_NODES:
            raise ConfigError("nodes", f"{len(nodes)} nodes with {workers} cores",
                              f"at most {MAX_NODES:,} nodes and cores in all (dlbkit's limit)")
        if network is not None and not isinstance(network, Network):
            raise ConfigError("network", network, "a Network or None")
        if not isinstance(name, str):
            raise ConfigError("platform name", name, "a string")
        dup = {x for x, c in Counter(n.name for n in nodes).items() if c > 1}
        if dup:
            raise ConfigError("nodes.name", sorted(dup)[0], "unique across nodes")
        self.nodes = list(nodes)
        self.network = network or Network()
        self.name = name
        topo = self.network.topology
        if is_networkx(topo):
            # the engines index nodes 0..n-1 and route over the links: other labels were an IndexError
            # (or a wrong node) in the first run, a disconnected graph an infinite hop count; the check
            # the superstep engine and the tree runtime make on their own graphs
            graph = given_graph(topo, len(self.nodes), "network.topology", per="node")
        else:
            kind, rows, edges = parse(topo)
            # a complete topology is not built: its n(n-1)/2 edges (8 M at 4 096 nodes, seconds and a
            # gigabyte) say nothing that `complete` does not; `graph` builds it if someone reads it
            graph = None if kind == "complete" else build(kind, len(self.nodes), rows=rows, edges=edges,
                                                          field="network.topology")
        if graph is not None and graph.number_of_nodes() != len(self.nodes):
            raise ConfigError("network.topology", f"{graph.number_of_nodes()} vertices",
                              f"a graph with one vertex per node ({len(self.nodes)})")
        self._graph = graph
        #: every pair of distinct nodes is joined by one link (what engines ask before the graph)
        self.complete: bool = graph is None or is_complete(graph)

    # --- derived views -------------------------------------------------------------------------
    @property
    def n_nodes(self) -> int:
        return len(self.nodes)

    @property
    def speeds(self) -> np.ndarray:
        return np.array([n.speed for n in self.nodes], dtype=float)

    @property
    def total_speed(self) -> float:
        return float(sum(n.speed * n.cores for n in self.nodes))

    @property
    def graph(self) -> nx.Graph:
        """The topology as a networkx graph on nodes 0..n-1. A complete topology is built only when
        this is read (quadratic): engines ask :attr:`complete` and :meth:`neighbours` first."""
        if self._graph is None:
            import networkx as nx

            self._graph = nx.complete_graph(self.n_nodes)
        return self._graph

    @property
    def n_links(self) -> int:
        """The number of links (edges of the topology)."""
        n = self.n_nodes
        return n * (n - 1) // 2 if self.complete else self.graph.number_of_edges()

    def neighbours(self) -> list:
        """Each node's neighbours, ascending (on a large complete platform
        :class:`~dlbkit.model.topology.Others`, which take no n² memory:
        :func:`~dlbkit.model.topology.complete_neighbours`)."""
        return complete_neighbours(self.n_nodes) if self.complete else neighbour_lists(self.graph)

    @cached_property
    def hops(self) -> np.ndarray:
        """All-pairs hop counts (quadratic: prefer :meth:`hops_from` for one source)."""
        if self.complete:
            return 1 - np.eye(self.n_nodes, dtype=np.int64)
        return hop_matrix(self.graph)

    def hops_from(self, src: int) -> np.ndarray:
        """Hop counts from node *src* to every node: one breadth-first search, kept for the next call;
        on a complete platform made anew each time (1 but 0 at *src*: kept for every source, they
        would be the n × n matrix)."""
        if self.complete:
            h = np.ones(self.n_nodes, dtype=np.int64)
            h[src] = 0
            return h
        cache = self.__dict__.setdefault("_hops_from", {})
        if src not in cache:
            import networkx as nx

            h = np.zeros(self.n_nodes, dtype=np.int64)
            for dst, d in nx.single_source_shortest_path_length(self.graph, src).items():
                h[dst] = d
            cache[src] = h
        return cache[src]

    def index(self, name: str, field: str = "node name") -> int:
        for i, n in enumerate(self.nodes):
            if n.name == name:
                return i
        raise ConfigError(field, name, "one of " + ", ".join(n.name for n in self.nodes))

    def message_time(self, src: int, dst: int, nbytes: float) -> float:
        """Latency per hop plus size over bandwidth; zero within a node."""
        if src == dst:
            return 0.0
        return float(1 if self.complete else self.hops_from(src)[dst]) * self.network.latency + nbytes / self.network.bandwidth

    def realise_availability(self, rng: np.random.Generator | None, *, limited: bool = True) -> list:
        """Every node's availability realised for one run (:class:`~.availability.Piecewise`, node
        order, drawn from *rng* in that order). *limited* (a simulated run): past
        :data:`~.availability.MAX_SEGMENTS` changes of level the run stops with an error naming the node
        (``node 'a'.availability.mean_free``); a real run's emulation passes False (the clock paces it)."""
        out = [n.availability.realise(rng, f"node {n.name!r}.availability") for n in self.nodes]
        return out if limited else [pw.unbounded() for pw in out]

    def worker_nodes(self, exclude: int | None = None) -> list[int]:
        """Node index of every worker (one per core), in node order; *exclude* drops one node."""
        return [i for i, n in enumerate(self.nodes) if i != exclude for _ in range(n.cores)]

    def subset(self, names: Sequence[str], *, name: str | None = None) -> "Platform":
        """The platform restricted to the named nodes (complete topology among them)."""
        chosen = [self.nodes[self.index(n)] for n in names]
        net = Network(self.network.latency, self.network.bandwidth, "complete")
        return Platform(chosen, net, name=name or self.name)

    def __repr__(self) -> str:
        return f"Platform({self.name!r}, {self.n_nodes} nodes, total speed {self.total_speed:g})"

    # --- construction from configuration -------------------------------------------------------
    @classmethod
    def from_dict(cls, d: Mapping, *, base_dir: Path | None = None, name: str = "platform") -> "Platform":
        d = check.table(d, "platform")
        check.known_keys(d, "", {"name", "nodes", "network"})
        raw_nodes = d.get("nodes")
        if raw_nodes is None:
            raise ConfigError("nodes", "<missing>", "a non-empty list of [[nodes]] tables")
        if not isinstance(raw_nodes, list) or not raw_nodes:
            raise ConfigError("nodes", raw_nodes, "a non-empty list of [[nodes]] tables (a cluster needs at least one node)")
        nodes: list[Node] = []
        for i, nd in enumerate(raw_nodes):
            path = f"nodes[{i}]"
            nd = check.table(nd, path)
            check.known_keys(nd, path, {"name", "speed", "cores", "memory", "availability", "count"})
            count = check.size(nd.get("count", 1), f"{path}.count", MAX_NODES, "nodes of a platform")
            if len(nodes) + count > MAX_NODES:
                raise ConfigError(f"{path}.count", count, f"at most {MAX_NODES:,} nodes in all (dlbkit's limit)")
            speed = check.required(nd, "speed", path)
            avail = availability_from_dict(nd.get("availability", 1.0), f"{path}.availability", base_dir)
            base = nd.get("name", f"n{len(nodes)}")
            if not isinstance(base, str) or not base:
                raise ConfigError(f"{path}.name", base, "a non-empty string")
            for k in range(count):
                nm = base if count == 1 else f"{base}{k}"
                with check.renamed(f"node {nm!r}", path):
                    nodes.append(Node(nm, speed, nd.get("cores", 1), nd.get("memory"), avail))
        net = check.table(d.get("network", {}), "network")
        check.known_keys(net, "network", {"latency", "bandwidth", "topology"})
        network = Network(net.get("latency", 1e-4), net.get("bandwidth", 125e6), net.get("topology", "complete"))
        return cls(nodes, network, name=str(d.get("name", name)))

    @classmethod
    def from_toml(cls, path: str | Path) -> "Platform":
        path = Path(path)
        return cls.from_dict(load_toml(path), base_dir=path.parent, name=path.stem)

    @classmethod
    def read(cls, path: str | Path, *, speed_unit: float | str | None = None) -> "Platform":
        """A platform file by its suffix: ``.xml`` SimGrid's (:mod:`dlbkit.model.simgrid`;
        *speed_unit* flop/s are one work unit per second, 1 Gf by default), any other (``.toml``)
        dlbkit's own (:meth:`from_toml`: files of other names were read as TOML before)."""
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix == ".xml":
            from dlbkit.model import simgrid

            unit = simgrid.DEFAULT_SPEED_UNIT if speed_unit is None else speed_unit
            return from_table(simgrid.read_table(path, speed_unit=unit), path)
        if speed_unit is not None:
            raise ConfigError("speed_unit", speed_unit, "absent for a TOML platform (its speeds are work units/s)")
        return cls.from_toml(path)

    def write(self, path: str | Path, *, speed_unit: float | None = None) -> None:
        """Write the platform as SimGrid 4.1 XML (a ``.xml`` *path*; :func:`dlbkit.model.simgrid_write.write`)."""
        path = Path(path)
        if path.suffix.lower() != ".xml":
            raise ConfigError("file", str(path), "a .xml file (SimGrid's platform format)")
        from dlbkit.model import simgrid_write

        simgrid_write.write(self, path, **({} if speed_unit is None else {"speed_unit": speed_unit}))


def from_table(table: dict, path: Path) -> Platform:
    """A platform from the table a foreign file was read into, errors naming the file."""
    try:
        return Platform.from_dict(table, base_dir=path.parent, name=path.stem)
    except ConfigError as e:
        field = e.field
        if field.startswith("nodes["):  # named as the file names it: the host's id, not dlbkit's index
            i, _, rest = field[len("nodes["):].partition("]")
            if i.isdigit() and int(i) < len(table.get("nodes", ())):
                field = f"<host id={table['nodes'][int(i)]['name']!r}>{rest}"
        raise ConfigError(f"{path}: {field}", e.value, e.allowed) from None


def load_toml(path: str | Path) -> dict:
    """Read a TOML file; a missing file or a syntax error becomes a ConfigError naming the file."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError("file", str(path), "an existing TOML file") from None
    except OSError as e:  # a directory, no permission, ...
        raise ConfigError("file", str(path), f"a readable TOML file ({e.strerror})") from None
    text = check.decode(data, path)  # tomllib would raise UnicodeDecodeError on bytes that are not UTF-8
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"TOML syntax in {path}", str(e), "valid TOML") from None
    except RecursionError:
        raise ConfigError(f"TOML in {path}", "nesting too deep", "valid TOML of reasonable depth") from None
