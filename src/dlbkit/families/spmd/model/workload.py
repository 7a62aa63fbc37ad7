"""The pipelined-SPMD workload (Osman 2003, 000) and its mapping from a Platform to an HNOW.

An :class:`Spmd` workload is a 1-D domain of datapoints (000's DP) split into contiguous blocks, one
per node; every loop each node computes its block and exchanges ``boundary`` DP with each neighbour
(000 §4.4). :func:`hnow_from_platform` turns a :class:`~dlbkit.model.platform.Platform` and an
:class:`Spmd` into the :class:`~dlbkit.families.spmd.model.hnow.Hnow` the engine
(:func:`dlbkit.families.spmd.sim.engine.simulate_spmd`) runs. How the platform's units map:

* **work**: one DP is one work unit, so a node's ``speed`` (work units/s) is its PP in DP/s;
* **bytes**: one DP is ``bytes_per_point`` bytes (default 1: Table 8.1 of 000 equates 10,000,000
  DP/s with "10 MB/S"), so ``network.bandwidth`` (B/s) / bytes_per_point is the link's DP/s and a
  node's ``memory`` (B) / bytes_per_point its RAM in DP. A node without ``memory`` (the platform's
  "unlimited") never swaps: its RAM is the whole domain. Platforms carry no swap disk, so swap rate
  and latency are Table 8.1's;
* **latency**: ``network.latency`` (s per hop) is every link's latency (neighbours are one hop apart);
* **availability**: each node's availability is passed through unchanged and read on the **loop
  clock** (its time axis counts loops, as :mod:`dlbkit.families.spmd.model.hnow` documents): ``pulse`` with
  ``start = 100, duration = 500`` is 000 §8.4.2's disturbance from loop 100 to loop 600;
* **topology**: an SPMD pipeline's neighbours form a line or a ring. A ``chain`` platform is a line,
  a ``ring`` platform a ring; on a ``complete`` network any layout fits, so ``layout`` picks it
  (default ring). Any other topology, or a layout the topology does not have, is a ConfigError;
* **cores**: one workstation is one process (000's HNOW), so a node must have one core.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral
from typing import Any

from dlbkit.errors import ConfigError
from dlbkit.model import check
from dlbkit.families.spmd.model.hnow import BOUNDARY, BOUNDARY_K, CPU_NOISE, LAYOUTS, WORKLOAD, Hnow, Workstation, check_loops
from dlbkit.model.platform import Platform

__all__ = ["Spmd", "spmd_from_dict", "hnow_from_platform", "platform_layout", "LOOPS", "BYTES_PER_POINT",
           "MAX_POINTS"]

LOOPS = 700  #: loops of 000's runs (§8.2: disturbances at loops 100 and 600 inside a 700-loop run)
BYTES_PER_POINT = 1.0  #: Table 8.1: 10,000,000 DP/s "corresponds to 10 MB/S", i.e. one byte per DP
#: DP of the whole domain at most 10**14: counts, sums and moves stay exact in a float64 (at 2**60
#: optimal-chain's targets no longer summed to the domain, at 2**63 numpy overflowed), and
#: optimal-chain's repair step, which adds about 1e-9 × DP one at a time, stays under a second (at
#: 2**52 it took 11 s a call)
MAX_POINTS = 10**14
_KEYS = {"kind", "points", "loops", "boundary", "boundary_k", "noise", "layout", "bytes_per_point"}


@dataclass(frozen=True)
class Spmd:
    """A pipelined SPMD loop (000 §4.4): *loops* iterations over a domain of datapoints (DP).

    *points*: DP per node, an integer (every node starts with it: 000's equal split; Table 8.1:
    9,800,000) or a sequence with one count per node (an explicit initial split); *boundary*: DP
    exchanged with each neighbour per loop (Table 8.1: 200,000); *boundary_k*: 000's K (eq 7.9);
    *noise*: per-loop CPU noise, each loop's power uniform in PP·(1 ± noise) (Table 8.1: 0.1);
    *layout*: "ring", "line" or None (the platform's: see :func:`platform_layout`);
    *bytes_per_point*: bytes per DP, to read the platform's bandwidth and memory in DP.
    Raise :exc:`~dlbkit.errors.ConfigError` naming the field (``workload.points``) for a bad value.

    >>> Spmd(points=1000, loops=5).total_points(3)
    3000
    """

    points: Any = WORKLOAD
    loops: int = LOOPS
    boundary: float = BOUNDARY
    boundary_k: float = BOUNDARY_K
    noise: float = CPU_NOISE
    layout: str | None = None
    bytes_per_point: float = BYTES_PER_POINT
    family = "spmd"

    def __post_init__(self):
        if isinstance(self.points, (list, tuple)):
            pts = tuple(check.integer(p, f"workload.points[{i}]", lo=1) for i, p in enumerate(self.points))
            if not pts:
                raise ConfigError("workload.points", [], "a positive integer or a non-empty list of them")
            _check_total(sum(pts))
            object.__setattr__(self, "points", pts)
        elif not isinstance(self.points, Integral) or isinstance(self.points, bool):
            raise ConfigError("workload.points", self.points, "a positive integer (DP per node) or a list "
                              "with one per node")
        else:
            check.integer(self.points, "workload.points", lo=1)
            _check_total(self.points)
        check_loops(self.loops, "workload.loops")  # × the nodes, once known: hnow_from_platform
        check.number(self.boundary, "workload.boundary", lo=0.0)
        check.number(self.boundary_k, "workload.boundary_k", lo=0.0)
        check.number(self.noise, "workload.noise", lo=0.0, hi=1.0, hi_open=True)
        if self.layout is not None:
            check.choice(self.layout, "workload.layout", LAYOUTS)
        check.number(self.bytes_per_point, "workload.bytes_per_point", lo=0.0, lo_open=True)

    def split(self, n_nodes: int) -> tuple[int, ...]:
        """The initial DP of each of *n_nodes* nodes; ConfigError if an explicit split has another length."""
        if isinstance(self.points, tuple):
            if len(self.points) != n_nodes:
                raise ConfigError("workload.points", f"{len(self.points)} counts",
                                  f"one count per platform node ({n_nodes})")
            return self.points
        _check_total(int(self.points) * n_nodes, n_nodes)
        return (int(self.points),) * n_nodes

    def total_points(self, n_nodes: int) -> int:
        return sum(self.split(n_nodes))


def _check_total(total: int, n_nodes: int | None = None) -> None:
    if total > MAX_POINTS:
        on = "" if n_nodes is None else f" (× {n_nodes} nodes)"
        raise ConfigError("workload.points", f"{total:,} DP in all{on}",
                          f"at most {MAX_POINTS:,} DP in the whole domain (dlbkit's limit)")


def spmd_from_dict(d: Any, field: str = "workload") -> Spmd:
    """An :class:`Spmd` from a TOML table (``kind = "spmd"`` and the fields by name)."""
    d = check.table(d, field)
    check.known_keys(d, field, _KEYS)
    check.choice(d.get("kind", "spmd"), f"{field}.kind", {"spmd"})
    kw: dict[str, Any] = {k: v for k, v in d.items() if k != "kind"}
    try:
        return Spmd(**kw)
    except ConfigError as e:
        raise ConfigError(e.field.replace("workload", field, 1), e.value, e.allowed) from None


def platform_layout(platform: Platform, layout: str | None = None) -> str:
    """The SPMD layout of *platform*'s topology: "line" for a chain 0–1–…–(P−1), "ring" for a ring that
    adds (P−1)–0; on a complete network *layout* (default "ring"; "line" for one node). Raise
    ConfigError naming ``network.topology`` for any other graph, ``workload.layout`` for a layout the
    topology does not have."""
    P = platform.n_nodes
    if platform.complete:  # (also a 2-node chain): every neighbour pair is a link
        chosen = layout or ("line" if P == 1 else "ring")
        if chosen == "ring" and P < 2:
            raise ConfigError("workload.layout", chosen, "'line' for a single node (a ring needs two or more)")
        return chosen
    edges = {tuple(sorted(e)) for e in platform.graph.edges()}
    line = {(i, i + 1) for i in range(P - 1)}
    ring = line | ({(0, P - 1)} if P > 2 else set())
    found = "line" if edges == line else "ring" if edges == ring else None
    if found is None:
        raise ConfigError("network.topology", f"a graph with {len(edges)} edges",
                          "'chain', 'ring' or 'complete' for an SPMD workload (its neighbours form a line "
                          "or a ring, in node order)")
    if layout is not None and layout != found:
        raise ConfigError("workload.layout", layout, f"{found!r} (the platform's topology) or omitted")
    return found


def hnow_from_platform(platform: Platform, workload: Spmd) -> Hnow:
    """The :class:`~dlbkit.families.spmd.model.hnow.Hnow` of *workload* on *platform* (units as the module says)."""
    if not isinstance(workload, Spmd):
        raise ConfigError("workload", type(workload).__name__, "an Spmd workload")
    layout = platform_layout(platform, workload.layout)
    split = workload.split(platform.n_nodes)
    check_loops(workload.loops, "workload.loops", platform.n_nodes)
    bpp = workload.bytes_per_point
    unlimited = float(sum(split))  # RAM for the whole domain: a node can never hold more, so never swaps
    ws = []
    for i, n in enumerate(platform.nodes):
        if n.cores != 1:
            raise ConfigError(f"nodes[{i}].cores", n.cores, "1 for an SPMD workload (one workstation is "
                              "one process, 000 §4.5)")
        ws.append(Workstation(speed=float(n.speed),
                              memory=unlimited if n.memory is None else float(n.memory) / bpp,
                              bandwidth=platform.network.bandwidth / bpp, latency=platform.network.latency,
                              points=split[i], availability=n.availability))
    return Hnow(tuple(ws), layout, workload.boundary, workload.boundary_k, workload.noise, name=platform.name)
