"""The HNOW model of Osman (000): a heterogeneous network of workstations running a pipelined SPMD loop.

A :class:`Hnow` is plain configuration: one :class:`Workstation` per node (processing power, RAM,
swap, network link, initial data points, background load), the layout (a line 0–1–…–(P−1) or a
ring that adds (P−1)–0), the boundary exchanged with each neighbour per loop and 000's boundary
constant K. Units are 000's (Table 6.1): work in *datapoints* (DP), speed in DP/s, memory in DP,
bandwidth in DP/s, times in seconds. The engine is :func:`dlbkit.families.spmd.sim.engine.simulate_spmd`.

Background load (non-dedication) is an availability spec (:mod:`dlbkit.model.availability`) read on
the **loop clock**: its time axis counts loops, so ``Pulse(start=100, duration=500, level=0.4)`` is
000 §8.4.2's step disturbance "at loop 100, then releasing them back at loop 600". ``availability``
scales the CPU share (a node's effective power is PP × availability × noise), ``memory_availability``
the share of its RAM the job keeps.

Defaults are Table 8.1 of 000 ("Simulation parameters", §8.2), exactly.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dlbkit.errors import ConfigError
from dlbkit.model import check
from dlbkit.model.availability import Constant, Markov, Piecewise, Pulse, Recorded, Step

__all__ = ["Workstation", "Hnow", "MAX_LOOP_CELLS", "check_loops", "LAYOUTS", "PP", "CPU_NOISE", "MEMORY", "DISK_ACCESS", "DISK_LATENCY",
           "BANDWIDTH", "LATENCY", "WORKLOAD", "BOUNDARY", "BOUNDARY_K", "THRESHOLD", "levels_on_loops"]

# --- Table 8.1 of 000 (§8.2), exact ----------------------------------------------------------------
#: loops × workstations of one SPMD run at most: the engine keeps each loop's time, compute, DP and
#: start per workstation (about 120 bytes a cell with the trace), so 10⁷ cells are 1.2 GB and some
#: ten minutes (10⁶ loops on 4 nodes: 63 s, 0.56 GB); loops = 10**18 was a numpy "array is too big"
#: traceback, 10**9 an out-of-memory kill. 000's runs are 700 loops on up to 16 workstations.
MAX_LOOP_CELLS = 10_000_000
PP = 100_000.0  #: processing power, DP/s ("default of 100,000 DP/S")
CPU_NOISE = 0.1  #: each loop's power is uniform in PP ± 0.1 × PP (drawn per loop: note §5.6)
MEMORY = 10_000_000.0  #: RAM available to the application, DP
DISK_ACCESS = 2_100_000.0  #: swap ("hard disk access") rate, DP/s: M_a = 1/DISK_ACCESS s per swapped DP
DISK_LATENCY = 0.010  #: swap latency, s, paid once per loop in which the node swaps (note §3.4)
BANDWIDTH = 10_000_000.0  #: network bandwidth, DP/s ("corresponds to 10 MB/S")
LATENCY = 0.001  #: network latency, s
WORKLOAD = 9_800_000  #: DP per workstation ("occupies the default memory size")
BOUNDARY = 200_000.0  #: DP exchanged with each neighbour per loop ("from both left and right neighbors")
THRESHOLD = 0.3  #: the balancers' c ("0.3 of the local average loop time"); belongs to the balancer
# --- not in Table 8.1 --------------------------------------------------------------------------------
BOUNDARY_K = 0.0  #: 000's K (eq 7.9), never given; 0 for a 1-D slab decomposition (note §6.2, item 4)

LAYOUTS = ("line", "ring")
_SPECS = (Constant, Step, Pulse, Markov, Recorded)


@dataclass(frozen=True)
class Workstation:
    """One workstation of an HNOW (000 §4.5, Table 6.1), Table 8.1 defaults.

    *speed* PP (000's F), DP/s; *memory* M_f, DP of RAM the job may use (DP beyond it are swapped);
    *swap_rate* DP/s of the swap disk (M_a = 1/swap_rate s per swapped DP) and *swap_latency* s per
    loop that swaps; *bandwidth* (DP/s) and *latency* (s) of its network link (a message between two
    workstations goes at the slower link's bandwidth and the larger latency); *points*, the DP it
    holds at loop 0; *availability* and *memory_availability*, background load on the loop clock.
    """

    speed: float = PP
    memory: float = MEMORY
    swap_rate: float = DISK_ACCESS
    swap_latency: float = DISK_LATENCY
    bandwidth: float = BANDWIDTH
    latency: float = LATENCY
    points: int = WORKLOAD
    availability: Any = field(default=Constant(1.0))
    memory_availability: Any = field(default=Constant(1.0))

    def validate(self, path: str = "workstation") -> None:
        f = lambda k: f"{path}.{k}"  # noqa: E731
        check.number(self.speed, f("speed"), lo=0.0, lo_open=True)
        check.number(self.memory, f("memory"), lo=0.0)
        check.number(self.swap_rate, f("swap_rate"), lo=0.0, lo_open=True)
        check.number(self.swap_latency, f("swap_latency"), lo=0.0)
        check.number(self.bandwidth, f("bandwidth"), lo=0.0, lo_open=True)
        check.number(self.latency, f("latency"), lo=0.0)
        check.integer(self.points, f("points"), lo=1)
        for name in ("availability", "memory_availability"):
            spec = getattr(self, name)
            if not isinstance(spec, _SPECS):
                raise ConfigError(f(name), spec, "an availability spec (Constant, Step, Pulse, Markov, Recorded)")


@dataclass(frozen=True)
class Hnow:
    """A network of workstations in a line or a ring, with 000's per-loop constants.

    *boundary*: DP exchanged with each neighbour per loop (Table 8.1: 200,000); *boundary_k*: 000's K,
    extra boundary DP per DP held (eq 7.9; 0 for slabs); *noise*: per-loop CPU noise, each loop's
    power is uniform in PP·(1 ± noise) (Table 8.1: 0.1; 0 for deterministic runs).
    Raise :exc:`~dlbkit.errors.ConfigError` naming the field for a bad value.
    """

    workstations: tuple[Workstation, ...]
    layout: str = "ring"
    boundary: float = BOUNDARY
    boundary_k: float = BOUNDARY_K
    noise: float = CPU_NOISE
    name: str = ""

    def __post_init__(self):
        object.__setattr__(self, "workstations", tuple(self.workstations))
        self.validate()

    def validate(self) -> None:
        ws = self.workstations
        if len(ws) < 1:
            raise ConfigError("workstations", len(ws), "at least one workstation")
        for i, w in enumerate(ws):
            if not isinstance(w, Workstation):
                raise ConfigError(f"workstations[{i}]", w, "a Workstation")
            w.validate(f"workstations[{i}]")
        check.choice(self.layout, "layout", LAYOUTS)
        if self.layout == "ring" and len(ws) < 2:
            raise ConfigError("layout", self.layout, "'line' for a single workstation (a ring needs two or more)")
        check.number(self.boundary, "boundary", lo=0.0)
        check.number(self.boundary_k, "boundary_k", lo=0.0)
        check.number(self.noise, "noise", lo=0.0, hi=1.0, hi_open=True)

    # --- construction helpers -----------------------------------------------------------------------
    @classmethod
    def homogeneous(cls, n: int, *, layout: str = "ring", boundary: float = BOUNDARY,
                    boundary_k: float = BOUNDARY_K, noise: float = CPU_NOISE, name: str = "",
                    **workstation: Any) -> "Hnow":
        """*n* identical workstations (Table 8.1 defaults, overridden by *workstation* fields)."""
        check.integer(n, "n", lo=1)
        return cls(tuple(Workstation(**workstation) for _ in range(n)), layout, boundary, boundary_k, noise, name)

    def with_workstation(self, i: int, **changes: Any) -> "Hnow":
        """A copy with workstation *i*'s fields replaced (e.g. WS[0]'s speed in a sensitivity sweep)."""
        ws = list(self.workstations)
        ws[i] = dataclasses.replace(ws[i], **changes)
        return dataclasses.replace(self, workstations=tuple(ws))

    def replace(self, **changes: Any) -> "Hnow":
        return dataclasses.replace(self, **changes)

    # --- topology -----------------------------------------------------------------------------------
    @property
    def n(self) -> int:
        return len(self.workstations)

    def neighbours(self, i: int) -> list[int]:
        """Node i's neighbours (the same rule as :meth:`dlbkit.families.spmd.model.view.SpmdView.neighbours`)."""
        P = self.n
        if self.layout == "ring" and P > 2:
            return [(i - 1) % P, (i + 1) % P]
        return [j for j in (i - 1, i + 1) if 0 <= j < P]

    @property
    def total_points(self) -> int:
        return sum(w.points for w in self.workstations)


def levels_on_loops(curve: Piecewise, loops: int):
    """The level a(k) of a realised availability for loops k = 0 … loops−1 (loop clock)."""
    if curve.constant is not None:
        return np.full(loops, curve.constant)
    times, levels = curve.segments_until(float(loops))
    idx = np.searchsorted(times, np.arange(loops, dtype=float), side="right") - 1
    return np.asarray(levels)[idx]


def check_loops(loops: Any, field: str, nodes: int = 1) -> int:
    """*loops* an integer >= 1 with loops × *nodes* at most :data:`MAX_LOOP_CELLS` (checked before
    the engine allocates its per-loop tables)."""
    n = check.integer(loops, field, lo=1)
    if n * nodes > MAX_LOOP_CELLS:
        most = MAX_LOOP_CELLS // nodes
        on = "" if nodes == 1 else f" on {nodes} workstations"
        raise ConfigError(field, loops, f"an integer in [1, {most:,}]{on} (dlbkit's limit: loops × workstations at "
                          f"most {MAX_LOOP_CELLS:,}, each loop's times kept per workstation)")
    return n
