"""Platform: the cluster's nodes, network and per-node availability. Loadable from TOML.

Units: speed in work units per second; memory in bytes; latency in seconds per hop; bandwidth in
bytes per second. A node with ``cores = c`` contributes c workers of the node's speed.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Mapping, Sequence

import networkx as nx
import numpy as np

from ..errors import ConfigError
from . import check
from .availability import Constant, availability_from_dict
from .topology import build, hop_matrix, topology_from_dict

__all__ = ["Node", "Network", "Platform", "load_toml"]


@dataclass(frozen=True)
class Node:
    """One machine: *speed* (work units/s), *cores*, *memory* (bytes, None = unlimited), availability."""

    name: str
    speed: float = 1.0
    cores: int = 1
    memory: float | None = None
    availability: Any = field(default_factory=Constant)

    def __post_init__(self):
        f = f"node {self.name!r}"
        check.number(self.speed, f"{f}.speed", lo=0.0, lo_open=True)
        check.integer(self.cores, f"{f}.cores", lo=1)
        if self.memory is not None:
            check.number(self.memory, f"{f}.memory", lo=0.0)


@dataclass(frozen=True)
class Network:
    """*latency* seconds per hop, *bandwidth* bytes/s, and a topology (kind name or networkx graph)."""

    latency: float = 1e-4
    bandwidth: float = 125e6
    topology: Any = "complete"

    def __post_init__(self):
        check.number(self.latency, "network.latency", lo=0.0)
        check.number(self.bandwidth, "network.bandwidth", lo=0.0, lo_open=True)


class Platform:
    """Nodes and the network that joins them.

    >>> p = Platform([Node("a", speed=2.0), Node("b")], Network(latency=0.001))
    >>> p.n_nodes, p.total_speed
    (2, 3.0)
    """

    def __init__(self, nodes: Sequence[Node], network: Network | None = None, *, name: str = "platform"):
        if not nodes:
            raise ConfigError("nodes", [], "a non-empty list (a cluster needs at least one node)")
        names = [n.name for n in nodes]
        dup = {x for x in names if names.count(x) > 1}
        if dup:
            raise ConfigError("nodes.name", sorted(dup)[0], "unique across nodes")
        self.nodes = list(nodes)
        self.network = network or Network()
        self.name = name
        topo = self.network.topology
        self.graph: nx.Graph = topo if isinstance(topo, nx.Graph) else build(topo, len(self.nodes),
                                                                                 field="network.topology")
        if self.graph.number_of_nodes() != len(self.nodes):
            raise ConfigError("network.topology", f"{self.graph.number_of_nodes()} vertices",
                              f"a graph with one vertex per node ({len(self.nodes)})")

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

    @cached_property
    def hops(self) -> np.ndarray:
        """All-pairs hop counts (quadratic: prefer :meth:`hops_from` for one source)."""
        return hop_matrix(self.graph)

    def hops_from(self, src: int) -> np.ndarray:
        """Hop counts from node *src* to every node (one breadth-first search)."""
        cache = self.__dict__.setdefault("_hops_from", {})
        if src not in cache:
            h = np.zeros(self.n_nodes, dtype=np.int64)
            for dst, d in nx.single_source_shortest_path_length(self.graph, src).items():
                h[dst] = d
            cache[src] = h
        return cache[src]

    def index(self, name: str) -> int:
        for i, n in enumerate(self.nodes):
            if n.name == name:
                return i
        raise ConfigError("node name", name, "one of " + ", ".join(n.name for n in self.nodes))

    def message_time(self, src: int, dst: int, nbytes: float) -> float:
        """Latency per hop plus size over bandwidth; zero within a node."""
        if src == dst:
            return 0.0
        return float(self.hops_from(src)[dst]) * self.network.latency + nbytes / self.network.bandwidth

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
            count = check.integer(nd.get("count", 1), f"{path}.count", lo=1)
            speed = check.number(check.required(nd, "speed", path), f"{path}.speed", lo=0.0, lo_open=True)
            cores = check.integer(nd.get("cores", 1), f"{path}.cores", lo=1)
            memory = nd.get("memory")
            if memory is not None:
                memory = check.number(memory, f"{path}.memory", lo=0.0)
            avail = availability_from_dict(nd.get("availability", 1.0), f"{path}.availability", base_dir)
            base = nd.get("name", f"n{len(nodes)}")
            if not isinstance(base, str) or not base:
                raise ConfigError(f"{path}.name", base, "a non-empty string")
            for k in range(count):
                nm = base if count == 1 else f"{base}{k}"
                nodes.append(Node(nm, speed, cores, memory, avail))
        net = check.table(d.get("network", {}), "network")
        check.known_keys(net, "network", {"latency", "bandwidth", "topology"})
        latency = check.number(net.get("latency", 1e-4), "network.latency", lo=0.0)
        bandwidth = check.number(net.get("bandwidth", 125e6), "network.bandwidth", lo=0.0, lo_open=True)
        graph = topology_from_dict(net.get("topology", "complete"), len(nodes))
        return cls(nodes, Network(latency, bandwidth, graph), name=str(d.get("name", name)))

    @classmethod
    def from_toml(cls, path: str | Path) -> "Platform":
        path = Path(path)
        return cls.from_dict(load_toml(path), base_dir=path.parent, name=path.stem)


def load_toml(path: str | Path) -> dict:
    """Read a TOML file; a missing file or a syntax error becomes a ConfigError naming the file."""
    path = Path(path)
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError("file", str(path), "an existing TOML file") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"TOML syntax in {path}", str(e), "valid TOML") from None
