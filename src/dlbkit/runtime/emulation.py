"""Heterogeneity emulation on one machine: slow a real worker down as a platform node would be.

A worker of speed s on a node with availability a(t) that computed for ``busy`` real seconds (its
work, in seconds of this machine) from run time t0 reports the chunk as ending at the t1 with
s·∫_{t0}^{t1} a = busy, and sleeps until then: it takes 1/s as long at speed s, longer while the
node's availability is below 1. Only the stretch is emulated; the computation itself is real, so a
speed above 1 cannot be: the worker still takes its real time (it cannot compute faster than this
machine), and every worker of speed ≥ 1 runs alike. The speeds are kept as given (balancers, traces
and replays read them), so a run's lower bound and efficiency, which use them, then understate what
was possible; :func:`emulation_from` warns (:class:`~dlbkit.errors.DlbkitWarning`): divide the
speeds by the fastest (factors in (0, 1]) to emulate their ratios. A speed below
:data:`MIN_EMULATED_SPEED` is emulated, but every item then takes over a thousand times its real time,
and it is warned about too, as is an availability level that brings a platform's worker below it
(speed × level) while the level lasts.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence


from dlbkit.errors import ConfigError, DlbkitWarning, caller_level
from dlbkit.model.availability import Constant, Piecewise
from dlbkit.model.check import number, renamed
from dlbkit.model.platform import Platform
from dlbkit.model.seeding import Layout, streams

__all__ = ["Emulation", "emulation_from", "speed_factors", "MIN_EMULATED_SPEED", "EMULATION"]

#: the streams an emulated platform's availability is drawn from when the caller names no family's layout: the
#: seed's second child, where most simulators' layouts put ``availability`` after the stream their workload is
#: drawn from (a family's real run passes its simulator's layout, so that it emulates what its simulation draws)
EMULATION = Layout("emulation", ("workload", "availability"))

#: The slowest emulated speed factor that runs without a word: below it every item takes over 1 000
#: times its real time (a millisecond of work, more than a second). A warning (DlbkitWarning), not a
#: floor that refuses, as for a speed above 1: what a stretch costs is the item's real time, which only
#: the run knows (a 10 µs item at factor 1e-4 takes 0.1 s, a fair emulation), so a slower factor stays
#: legal. But emulate=[1e-9] stretched every item 10⁹ times without a word, and the run (an MPI job
#: above all) looked hung; now the user is told why at once, and how to keep the ratios.
MIN_EMULATED_SPEED = 1e-3


@dataclass
class Emulation:
    """Per-worker speed factors and realised availabilities."""

    speeds: list[float]
    availability: list[Piecewise]
    #: the platform node of each worker (one worker per core), from :meth:`from_platform`; None for
    #: speed factors (one worker, one node)
    node_of: list[int] | None = None

    @classmethod
    def from_speeds(cls, speeds: Iterable[float]) -> "Emulation":
        out = speed_factors(speeds)  # an inf factor passed here (a zero stretch), 1e-300 a 10³⁰⁰ one
        return cls(out, [Constant(1.0).realise() for _ in out])

    @classmethod
    def from_platform(cls, platform: Platform | str | Path, *, seed: int = 0,
                      master: str | int | None = None, layout: Layout = EMULATION) -> "Emulation":
        """One worker per core of every node (but *master*'s), with the node's speed and availability.

        The availability is realised from *layout*'s ``availability`` stream of *seed*
        (:mod:`dlbkit.model.seeding`): the layout of the family's simulator, so that a real run
        emulates the availability its simulation with the same seed draws (by default
        :data:`EMULATION`'s)."""
        if not isinstance(platform, Platform):
            platform = Platform.read(platform)
        exclude = platform.index(master) if isinstance(master, str) else master
        rng = streams(seed, layout).rng("availability")
        realised = platform.realise_availability(rng, limited=False)
        nodes = platform.worker_nodes(exclude=exclude)
        return cls([platform.nodes[n].speed for n in nodes], [realised[n] for n in nodes], list(nodes))

    def per_node(self) -> tuple["Emulation", list[int]]:
        """The emulation with one entry per platform node instead of per core, and each node's cores
        (its slots); speed factors: itself, one slot each (``dlbkit.Cluster``'s nodes)."""
        if self.node_of is None:
            return self, [1] * self.n_workers
        first: dict[int, int] = {}
        cores: dict[int, int] = {}
        for w, k in enumerate(self.node_of):
            first.setdefault(k, w)
            cores[k] = cores.get(k, 0) + 1
        nodes = list(first)
        return (Emulation([self.speeds[first[k]] for k in nodes], [self.availability[first[k]] for k in nodes]),
                [cores[k] for k in nodes])

    @property
    def n_workers(self) -> int:
        return len(self.speeds)

    def duration(self, w: int, t0: float, busy: float) -> float:
        """Seconds worker *w* should appear to take for *busy* seconds of work started at run time t0."""
        return self.availability[w].finish(t0, busy / self.speeds[w]) - t0

    def stretch(self, w: int, origin: float, t_start: float, t_busy_end: float) -> None:
        """Sleep until worker *w*'s work, real from ``time.perf_counter()`` readings *t_start* to
        *t_busy_end* (run time 0 at *origin*), has taken as long as it would on its emulated node."""
        end = t_start + self.duration(w, t_start - origin, t_busy_end - t_start)
        delay = end - time.perf_counter()
        if delay > 0:
            time.sleep(delay)


def emulation_from(emulate: Any, seed: int = 0, master: str | int | None = None, *,
                   layout: Layout = EMULATION) -> Emulation | None:
    """The emulation an ``emulate=`` argument asks for, checked (``dlbkit.map`` and its siblings, and
    ``dlbkit.Cluster``, take the same argument): None; an :class:`Emulation`; speed factors, one per
    worker; or a :class:`~dlbkit.model.platform.Platform` or platform TOML path (one worker per core,
    with its node's speed and availability, drawn from *layout*'s stream: :meth:`Emulation.from_platform`).
    *master* only with a platform: its node that coordinates and does not compute. A ConfigError names
    the field and what is allowed."""
    platform = isinstance(emulate, (Platform, str, Path))
    if master is not None:
        if not platform:
            raise ConfigError("master", master, "None unless emulate is a Platform or a platform TOML path (the "
                              "master is a platform node that coordinates and does not compute)")
        if isinstance(master, bool) or not isinstance(master, (str, int)):
            raise ConfigError("master", master, "a node name or index of the emulated platform, or None")
    if emulate is None:
        return None
    if isinstance(emulate, Emulation):
        return emulate
    if platform:
        if isinstance(emulate, (str, Path)):
            with renamed("file", "emulate"):  # a missing file is named as the caller's argument
                emulate = Platform.read(emulate)
        if isinstance(master, int) and not 0 <= master < emulate.n_nodes:
            raise ConfigError("master", master, f"a node index in [0, {emulate.n_nodes - 1}] or a node name")
        if isinstance(master, str):
            emulate.index(master, "master")  # a ConfigError naming the nodes if there is none of that name
        if master is not None and len(emulate.worker_nodes(exclude=emulate.index(master) if isinstance(master, str)
                                                             else master)) == 0:
            raise ConfigError("master", master, "a node of a platform with other nodes to compute")
        return _checked_speeds(Emulation.from_platform(emulate, seed=seed, master=master, layout=layout), emulate)
    if isinstance(emulate, Iterable) and not isinstance(emulate, (bytes, Mapping)):
        return _checked_speeds(Emulation.from_speeds(emulate))
    raise ConfigError("emulate", emulate, "a Platform, a platform TOML path or a list of speed factors")


def speed_factors(values: Iterable, field: str = "emulate") -> list[float]:
    """Speed factors, one per worker, checked (the one check of ``emulate=`` and of the command line's
    ``--emulate 1,0.5``, which names its flag as *field*): a non-empty list of finite numbers > 0 within
    dlbkit's magnitudes."""
    speeds = list(values)
    if not speeds:
        raise ConfigError(field, speeds, "a non-empty list of speed factors (one per worker), a Platform "
                          "or a platform TOML path")
    return [number(x, f"{field}[{i}]", lo=0.0, lo_open=True) for i, x in enumerate(speeds)]


def emulated_speed_warning(speeds: Sequence[float]) -> str | None:
    """What to say when some emulated speed exceeds 1 (the module docstring: it cannot be emulated) or
    is below :data:`MIN_EMULATED_SPEED` (it stretches every item over a thousandfold), or None."""
    fastest, slowest = max(speeds, default=1.0), min(speeds, default=1.0)
    said = []
    if fastest > 1.0:
        said.append(f"emulated speeds above 1 (the fastest {fastest:g}) cannot be emulated: a worker computes at "
                    f"this machine's speed at most, so every worker of speed >= 1 runs alike and the run's lower "
                    f"bound and efficiency, computed from the speeds as given, understate it; divide the speeds by "
                    f"{fastest:g} (factors in (0, 1]) to emulate their ratios")
    if slowest < MIN_EMULATED_SPEED:
        keep = (f"; multiply the speeds by {1 / fastest:.3g} to emulate their ratios with the fastest at 1"
                if fastest < 1.0 else "")
        said.append(f"emulated speeds below {MIN_EMULATED_SPEED:g} (the slowest {slowest:g}) stretch every item "
                    f"{1 / slowest:.3g} times its real time (a millisecond of work takes {1e-3 / slowest:.3g} s), "
                    f"so the run may take very long: a factor is a fraction of this machine's speed{keep}")
    return "; ".join(said) or None


def emulated_availability_warning(speeds: Sequence[float], lowest: Sequence[float],
                                  nodes: Sequence[str]) -> str | None:
    """What to say when a worker's availability brings it below :data:`MIN_EMULATED_SPEED` (its speed
    × its lowest level *lowest*, on platform node *nodes*, one entry per worker): a low level stretches
    every item as a tiny speed does, while it lasts. Names the slowest such worker, or None. A worker
    whose speed alone is below the threshold is counted here only if its availability slows it more."""
    slow = [w for w, (s, a) in enumerate(zip(speeds, lowest)) if a < 1.0 and s * a < MIN_EMULATED_SPEED]
    if not slow:
        return None
    w = min(slow, key=lambda w: speeds[w] * lowest[w])
    effective = speeds[w] * lowest[w]
    others = f" (and {len(slow) - 1} other worker{'s' * (len(slow) > 2)})" if len(slow) > 1 else ""
    return (f"emulated availability level {lowest[w]:g} of worker {w} (node {nodes[w]!r}, speed {speeds[w]:g}){others} "
            f"gives an effective speed {effective:g}, below {MIN_EMULATED_SPEED:g}: while that level lasts, every "
            f"item there takes {1 / effective:.3g} times its real time (a millisecond of work takes "
            f"{1e-3 / effective:.3g} s), so the run may take very long")


def _checked_speeds(emulation: Emulation, platform: Platform | None = None) -> Emulation:
    """*emulation*, having warned (once: one warning for everything) of speeds and, from *platform*
    (which it was made from), availability levels that cannot be emulated or stretch over a thousandfold."""
    said = [emulated_speed_warning(emulation.speeds)]
    if platform is not None and emulation.node_of is not None:
        nodes = [platform.nodes[k] for k in emulation.node_of]
        said.append(emulated_availability_warning(emulation.speeds, [n.availability.lowest() for n in nodes],
                                                  [n.name for n in nodes]))
    message = "; ".join(m for m in said if m) or None
    if message is not None:
        warnings.warn(message, DlbkitWarning, stacklevel=caller_level())
    return emulation
