"""A platform's facts for ``dlbkit describe``: hosts, cores, speeds, capacity, network and topology, as
:class:`~dlbkit.model.description.Fact` objects (the face's core describes TOML and SimGrid files with them, a
family its own platform files)."""

from __future__ import annotations

from collections.abc import Mapping

from dlbkit.model.availability import Constant
from dlbkit.model.description import Fact
from dlbkit.model.platform import Platform
from dlbkit.model.topology import is_networkx

__all__ = ["SHORT", "platform_facts"]

#: the most hosts whose speeds are listed one by one (beyond, only min, mean and max)
SHORT = 8


def platform_facts(p: Platform, *, speed_scale: float = 1.0, speed_unit: str = "work/s",
                   bandwidth_unit: str = "B/s") -> tuple[Fact, ...]:
    """The facts of platform *p*. Speeds are dlbkit's (work units per second) times *speed_scale*, in
    *speed_unit*: a SimGrid file's flop/s are speed × its speed unit (1 Gf by default). The mean speed is over
    hosts (each counted once, whatever its cores); the capacity is the sum of speed × cores. Latency and
    bandwidth are the one pair dlbkit's network holds (a SimGrid file's routes averaged:
    :mod:`dlbkit.model.simgrid`). A host is not fully available when its availability is anything but a
    constant 1 (a lower level, a step, pulses, a Markov chain, a recorded trace: :mod:`dlbkit.model.availability`),
    and the kinds of those availabilities are listed."""
    speeds = [n.speed * speed_scale for n in p.nodes]
    cores = sum(n.cores for n in p.nodes)
    facts = [Fact("hosts", "hosts", p.n_nodes),
             Fact("cores", "cores (in all)", cores),
             Fact("speed_min", "speed (slowest host)", min(speeds), speed_unit),
             Fact("speed_mean", "speed (mean over hosts)", sum(speeds) / len(speeds), speed_unit),
             Fact("speed_max", "speed (fastest host)", max(speeds), speed_unit)]
    if len(speeds) <= SHORT:
        facts.append(Fact("speeds", "speeds (host by host)", speeds, speed_unit))
    facts += [Fact("capacity", "total capacity (speed × cores)", p.total_speed * speed_scale, speed_unit),
              Fact("latency", "network latency (per hop)", p.network.latency, "s"),
              Fact("bandwidth", "network bandwidth", p.network.bandwidth, bandwidth_unit),
              Fact("topology", "topology", _kind(p.network.topology)),
              Fact("links", "links", p.n_links)]
    # the share of a host's CPU the job gets (other users share it): anything but a constant 1 is named
    shared = [n.availability for n in p.nodes if not (isinstance(n.availability, Constant) and n.availability.level == 1.0)]
    facts.append(Fact("shared_hosts", "hosts not fully available (availability)", len(shared)))
    if shared:
        facts.append(Fact("availability_kinds", "their availability", sorted({type(a).__name__ for a in shared})))
    return tuple(facts)


def _kind(topology) -> str:
    """A topology's kind as the platform names it: its kind name, a table's ``kind``, or a given graph."""
    if isinstance(topology, str):
        return topology
    if isinstance(topology, Mapping):
        return str(topology.get("kind"))
    if is_networkx(topology):
        return "a given graph"
    return type(topology).__name__
