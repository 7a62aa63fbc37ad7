"""Platforms in SimGrid's XML (version 4.1, as SimGrid, WRENCH and Batsim users write them).

SimGrid's reference: https://simgrid.org/doc/latest/XML_reference.html (the tags) and
https://simgrid.org/doc/latest/Platform_examples.html; the units are those of SimGrid's
``xbt_parse_units`` (speeds in ``f``/``flops`` with k, M, G, T, P, E, Z, Y prefixes; bandwidths in
``Bps`` or ``bps`` with decimal or binary ``Ki``, ``Mi``… prefixes; times in w, d, h, m, s, ms, us, ns,
ps). A value without a unit is read in the base unit (flop/s, byte/s, s), as SimGrid reads it (with
its deprecation warning).

What is mapped (:func:`read_table`; the writer is :mod:`dlbkit.model.simgrid_write`):

* ``<host id speed core>`` → a :class:`~dlbkit.model.platform.Node` of ``cores = core`` and
  ``speed = flop/s ÷ speed_unit`` (dlbkit's speed is work units per second: *speed_unit* flop/s is one
  unit, 1 Gf by default). A list of pstate speeds (``"1Gf,500Mf"``) gives the ``pstate`` attribute's
  (0, the first, by default).
* ``<cluster id prefix radical suffix speed core bw lat bb_bw bb_lat>`` → one node per radical number
  (``prefix + number + suffix``), and between two of its hosts the route SimGrid takes: the source's
  private link, the backbone (if any), the destination's private link.
* ``<link>`` + ``<route src dst><link_ctn id/></route>`` (symmetrical unless ``symmetrical="NO"``)
  → per pair, latency = the sum over the route's links and bandwidth = the least of them. In a
  ``Floyd`` or ``Dijkstra`` zone whose routes go through ``<router>`` elements, each pair of hosts
  takes the route of fewest links through them.

dlbkit's :class:`~dlbkit.model.platform.Network` holds *one* latency (seconds per hop) and *one*
bandwidth, and a topology of which nodes are neighbours. Per-pair values therefore become: the
topology = the pairs that have a route (``complete`` when every pair has one, else ``edges``),
latency = the mean of the routes' latencies and bandwidth = the harmonic mean of their bandwidths
(together: the mean, over the routed pairs, of a message's time, for every message size). When the
routes differ a :class:`~dlbkit.errors.DlbkitWarning` says so, with their range.

Not mapped, and said once in a warning: ``<prop>``, ``<host_link>``, ``<disk>``, ``<config>``,
host and link profiles (``availability_file``, ``speed_file``, ``state_file``, ``bandwidth_file``,
``latency_file``, ``<trace>``), sharing policies and loopback links. Refused with a
:class:`~dlbkit.errors.ConfigError`: routes between zones (``zoneRoute``, ``ASroute``,
``bypassRoute``), Vivaldi and cluster zones that build a torus, fat tree or dragonfly (their routes
are SimGrid's own computation, not in the file), and a platform file with an actor deployment.
"""

from __future__ import annotations

import math
import re
import warnings
from collections import deque
from pathlib import Path
from typing import Any

from dlbkit.errors import ConfigError, DlbkitWarning, caller_level
from dlbkit.model import check, safexml

__all__ = ["read_table", "parse_speed", "parse_bandwidth", "parse_time", "DEFAULT_SPEED_UNIT"]

#: flop/s that are one dlbkit work unit per second, by default (1 Gf: a node of ``speed="1Gf"``
#: has speed 1, the speed of dlbkit's default node)
DEFAULT_SPEED_UNIT = 1e9

#: the most numbers a cluster's radical expands to: dlbkit's limit on nodes
#: (:data:`dlbkit.model.platform.MAX_NODES`, which a test keeps equal: platform imports this module,
#: so it cannot import platform), checked before a range is expanded
MAX_RADICAL = 100_000


def _scale(unit: str, base: float, prefixes: str, mult: float) -> dict[str, float]:
    out, value = {unit: base}, base
    for p in prefixes.split():
        value *= mult
        out[p + unit] = value
    return out


_DEC, _BIN = "k M G T P E Z Y", "Ki Mi Gi Ti Pi Ei Zi Yi"
_DEC_LONG = "kilo mega giga tera peta exa zeta yotta"  # SimGrid's spelling, "zeta"
#: SimGrid's units (xbt_parse_units): abbreviated speeds decimal only; bandwidths decimal and binary
SPEED_UNITS = {**_scale("f", 1.0, _DEC, 1e3), **_scale("flops", 1.0, _DEC_LONG, 1e3)}
BANDWIDTH_UNITS = {**_scale("bps", 0.125, _DEC, 1e3), **_scale("bps", 0.125, _BIN, 1024.0),
                   **_scale("Bps", 1.0, _DEC, 1e3), **_scale("Bps", 1.0, _BIN, 1024.0)}
TIME_UNITS = {"w": 7 * 86400.0, "d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6,
              "ns": 1e-9, "ps": 1e-12}
_NUMBER = re.compile(r"\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*(.*?)\s*")

#: tags read; the rest of SimGrid's tags are either noted as not modelled or refused
_IGNORED_TAGS = {"prop", "host_link", "disk", "config", "trace", "trace_connect", "model_prop", "storage",
                 "storage_type", "mount", "include", "backbone"}
_REFUSED_TAGS = {"zoneRoute": "a route between zones", "ASroute": "a route between zones",
                 "bypassRoute": "a bypass route", "bypassZoneRoute": "a bypass route",
                 "bypassASroute": "a bypass route", "peer": "a Vivaldi peer", "cabinet": "a cabinet",
                 "actor": "an actor deployment", "process": "an actor deployment"}
_ZONE_TAGS = {"zone", "AS"}  # AS: the name of a zone before SimGrid 3.16 (platform version 4)
_ROUTINGS = {"Full", "Floyd", "Dijkstra", "DijkstraCache", "None"}
_IGNORED_ATTRS = {"availability_file", "speed_file", "state_file", "bandwidth_file", "latency_file",
                  "sharing_policy", "bb_sharing_policy", "loopback_bw", "loopback_lat", "limiter_link",
                  "coordinates", "pstate"}


def _value(text: Any, units: dict[str, float], field: str, what: str, example: str) -> float:
    if not isinstance(text, str):
        raise ConfigError(field, text, f"a {what} with a unit (e.g. {example!r})")
    m = _NUMBER.fullmatch(text)
    if m is None:
        raise ConfigError(field, text, f"a {what}: a number and a unit (e.g. {example!r})")
    number, unit = m.groups()
    if unit and unit not in units:
        from dlbkit.errors import closest

        names = sorted(units, key=units.get)
        shown = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
        raise ConfigError(field, text, f"a {what} in one of SimGrid's units ({shown})", suggest=closest(unit, units))
    x = float(number) * (units[unit] if unit else 1.0)  # unit-less: SimGrid's base unit
    if not math.isfinite(x):
        raise ConfigError(field, text, f"a finite {what}")
    return x


def parse_speed(text: str, field: str = "speed") -> float:
    """A SimGrid speed in flop/s (``"1Gf"`` → 1e9, ``"2.5megaflops"`` → 2.5e6)."""
    return _value(text, SPEED_UNITS, field, "speed", "1Gf")


def parse_bandwidth(text: str, field: str = "bandwidth") -> float:
    """A SimGrid bandwidth in bytes/s (``"125MBps"`` → 1.25e8, ``"1Gbps"`` → 1.25e8, ``"1KiBps"`` → 1024)."""
    return _value(text, BANDWIDTH_UNITS, field, "bandwidth", "125MBps")


def parse_time(text: str, field: str = "latency") -> float:
    """A SimGrid time in seconds (``"50us"`` → 5e-5)."""
    return _value(text, TIME_UNITS, field, "time", "50us")


def parse_radical(text: Any, field: str) -> list[int]:
    """A cluster's radical, ``"0-15"`` or ``"0-3,8,10-11"``, as its numbers in order."""
    allowed = "ranges of numbers like '0-15' or '0-3,8,10-11'"
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(field, text, allowed)
    out: list[int] = []
    for part in text.split(","):
        m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if m is None:
            raise ConfigError(field, text, allowed)
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo:
            raise ConfigError(field, text, allowed + f" (a range low-high with low <= high; got {part.strip()!r})")
        if len(out) + hi - lo + 1 > MAX_RADICAL:  # checked before the list is made: "0-99999999999"
            raise ConfigError(field, text, f"at most {MAX_RADICAL:,} numbers (dlbkit's limit on nodes)")
        out.extend(range(lo, hi + 1))
    return out


class _Reader:
    """One file's hosts, links and per-pair routes, gathered zone by zone."""

    def __init__(self, path: Path, speed_unit: float):
        self.path = path
        self.speed_unit = speed_unit
        self.hosts: dict[str, dict] = {}  # id → node table, in file order
        self.links: dict[str, tuple[float, float]] = {}  # id → (latency s, bandwidth B/s)
        self.pairs: dict[tuple[str, str], tuple[float, float]] = {}  # (src, dst) → route (latency, bandwidth)
        #: clusters: (their hosts, the one route cost between any two), kept whole: a cluster of 10⁵ hosts
        #: has 10¹⁰ pairs, all alike
        self.clusters: list[tuple[list[str], tuple[float, float]]] = []
        self.ignored: set[str] = set()

    def where(self, el, attr: str | None = None) -> str:
        ident = el.get("id")
        tag = f"<{el.tag} id={ident!r}>" if ident is not None else f"<{el.tag}>"
        return f"{self.path}: {tag}" + (f".{attr}" if attr else "")

    def need(self, el, attr: str) -> str:
        v = el.get(attr)
        if v is None or not v.strip():
            raise ConfigError(self.where(el, attr), "<missing>", "given (SimGrid requires it)")
        return v

    def note(self, el) -> None:
        for a in el.attrib:
            if a in _IGNORED_ATTRS and not (a == "pstate" and el.tag == "host"):
                self.ignored.add(f"{el.tag}.{a}")

    # --- elements ------------------------------------------------------------------------------
    def add_host(self, name: str, speeds: str, cores: Any, el) -> None:
        if name in self.hosts or name in self.links:
            raise ConfigError(self.where(el, "id"), name, "an id used once in the file")
        parts = [s for s in speeds.split(",")]
        state = el.get("pstate", "0") if el.tag == "host" else "0"
        if not state.strip().isdigit() or int(state) >= len(parts):
            raise ConfigError(self.where(el, "pstate"), state, f"a pstate index in [0, {len(parts) - 1}]")
        flops = parse_speed(parts[int(state)], self.where(el, "speed"))
        self._positive(flops, el, "speed", strict=True)
        try:
            n_cores = int(cores)
        except ValueError:
            raise ConfigError(self.where(el, "core"), cores, "a whole number of cores") from None
        self.hosts[name] = {"name": name, "speed": flops / self.speed_unit, "cores": n_cores}

    def add_link(self, name: str, el) -> None:
        if name in self.links or name in self.hosts:
            raise ConfigError(self.where(el, "id"), name, "an id used once in the file")
        bandwidth = parse_bandwidth(self.need(el, "bandwidth"), self.where(el, "bandwidth"))
        latency = parse_time(el.get("latency", "0s"), self.where(el, "latency"))
        self._positive(bandwidth, el, "bandwidth", strict=True)
        self._positive(latency, el, "latency", strict=False)
        self.links[name] = (latency, bandwidth)

    def _positive(self, x: float, el, attr: str, *, strict: bool) -> None:
        # named at the element: past here a bad value would be named as dlbkit's network field
        if x < 0 or (strict and x == 0):
            raise ConfigError(self.where(el, attr), el.get(attr), "a value > 0" if strict else "a value >= 0")

    def route_cost(self, el) -> tuple[float, float]:
        lat, bw = 0.0, math.inf
        for ctn in el:
            if ctn.tag != "link_ctn":
                continue
            lid = self.need(ctn, "id")
            if lid not in self.links:
                from dlbkit.errors import closest

                raise ConfigError(f"{self.where(el)} <link_ctn id={lid!r}>", lid, "a link declared before the route",
                                  suggest=closest(lid, self.links))
            lat += self.links[lid][0]
            bw = min(bw, self.links[lid][1])
        return lat, bw

    def zone(self, zone, depth: int = 0) -> None:
        if depth > 64:
            raise ConfigError(self.where(zone), "zones nested more than 64 deep", "a platform of reasonable depth")
        routing = zone.get("routing", "None")
        if zone.tag != "platform" and routing not in _ROUTINGS:
            allowed = "one of " + ", ".join(sorted(_ROUTINGS)) + " (dlbkit reads the routes written in the file)"
            if routing.startswith("Cluster") or routing == "Vivaldi":
                allowed += "; a cluster is read from <cluster>"
            raise ConfigError(self.where(zone, "routing"), routing, allowed)
        routers: set[str] = set()
        routes: list = []
        for el in zone:
            tag = el.tag
            if not isinstance(tag, str):  # a comment or processing instruction
                continue
            self.note(el)
            if tag in _ZONE_TAGS:
                self.need(el, "id")
                self.zone(el, depth + 1)
            elif tag == "host":
                self.add_host(self.need(el, "id"), self.need(el, "speed"), el.get("core", "1"), el)
                self.ignored.update(f"host <{c.tag}>" for c in el if isinstance(c.tag, str))
            elif tag == "link":
                self.add_link(self.need(el, "id"), el)
                self.ignored.update(f"link <{c.tag}>" for c in el if isinstance(c.tag, str))
            elif tag == "router":
                routers.add(self.need(el, "id"))
            elif tag == "route":
                routes.append(el)
            elif tag == "cluster":
                self.cluster(el)
            elif tag in _REFUSED_TAGS:
                raise ConfigError(self.where(el), f"<{tag}>", f"absent: dlbkit does not model {_REFUSED_TAGS[tag]} "
                                  "(it reads hosts, links, routes within a zone and clusters)")
            elif tag in _IGNORED_TAGS:
                self.ignored.add(f"<{tag}>")
            else:
                raise ConfigError(self.where(el), f"<{tag}>", "a SimGrid platform tag (zone, host, link, route, "
                                  "router, cluster, prop, ...)")
        if routes:
            self.routes(zone, routes, routers, routing)

    def routes(self, zone, routes: list, routers: set[str], routing: str) -> None:
        ends = set(self.hosts) | routers
        edges: dict[tuple[str, str], tuple[float, float]] = {}
        for el in routes:
            src, dst = self.need(el, "src"), self.need(el, "dst")
            for attr, end in (("src", src), ("dst", dst)):
                if end not in ends:
                    from dlbkit.errors import closest

                    raise ConfigError(self.where(el, attr), end, "a host (or router) declared before the route",
                                      suggest=closest(end, ends))
            cost = self.route_cost(el)
            edges[(src, dst)] = cost
            if el.get("symmetrical", "YES").upper() != "NO":
                edges.setdefault((dst, src), cost)
        if routing in ("Floyd", "Dijkstra", "DijkstraCache") and routers:
            edges = _through_routers(edges, [h for h in self.hosts if any(h in e for e in edges)])
        for (a, b), cost in edges.items():
            if a != b and a in self.hosts and b in self.hosts:
                self.pairs[(a, b)] = cost

    def cluster(self, el) -> None:
        self.need(el, "id")
        topo = el.get("topology", "FLAT")
        if topo != "FLAT":
            raise ConfigError(self.where(el, "topology"), topo, "'FLAT' (dlbkit does not compute torus, fat tree or "
                              "dragonfly routes)")
        numbers = parse_radical(self.need(el, "radical"), self.where(el, "radical"))
        prefix, suffix = el.get("prefix", ""), el.get("suffix", "")
        speed, cores = self.need(el, "speed"), el.get("core", "1")
        bw, lat = self.need(el, "bw"), self.need(el, "lat")
        link = parse_time(lat, self.where(el, "lat")), parse_bandwidth(bw, self.where(el, "bw"))
        self._positive(link[0], el, "lat", strict=False)
        self._positive(link[1], el, "bw", strict=True)
        backbone = (0.0, math.inf)
        if el.get("bb_bw") is not None or el.get("bb_lat") is not None:
            backbone = (parse_time(el.get("bb_lat", "0s"), self.where(el, "bb_lat")),
                        parse_bandwidth(self.need(el, "bb_bw"), self.where(el, "bb_bw")))
        names = [f"{prefix}{k}{suffix}" for k in numbers]
        for nm in names:
            self.add_host(nm, speed, cores, el)
        self.ignored.update(f"cluster <{c.tag}>" for c in el if isinstance(c.tag, str))
        # SimGrid's flat cluster: source's private link, the backbone, destination's private link
        self.clusters.append((names, (2 * link[0] + backbone[0], min(link[1], backbone[1]))))


def _through_routers(edges: dict, hosts: list[str]) -> dict:
    """Host-to-host routes of a Floyd or Dijkstra zone: from each host the path of fewest links
    over the declared one-hop routes (breadth-first; on ties the first found)."""
    adj: dict[str, list[str]] = {}
    for a, b in edges:
        adj.setdefault(a, []).append(b)
    out = {}
    for s in hosts:
        best = {s: (0.0, math.inf)}
        queue = deque([s])
        while queue:
            u = queue.popleft()
            for v in adj.get(u, ()):
                if v not in best:
                    lat, bw = edges[(u, v)]
                    best[v] = (best[u][0] + lat, min(best[u][1], bw))
                    queue.append(v)
        out.update({(s, t): c for t, c in best.items() if t != s and t in hosts})
    return out


def read_table(path: str | Path, *, speed_unit: float | str = DEFAULT_SPEED_UNIT) -> dict:
    """The SimGrid platform file *path* as a platform table (what
    :meth:`~dlbkit.model.platform.Platform.from_dict` reads), mapped as the module says.

    *speed_unit*: the flop/s that are one work unit per second (a number, or a SimGrid speed such as
    ``"1Gf"``). Raise :exc:`~dlbkit.errors.ConfigError` naming the file and the element for bad input.
    """
    path = Path(path)
    unit = parse_speed(speed_unit, "speed_unit") if isinstance(speed_unit, str) else check.number(
        speed_unit, "speed_unit", lo=0.0, lo_open=True)
    if unit <= 0:
        raise ConfigError("speed_unit", speed_unit, "a speed > 0 (flop/s per work unit)")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError("file", str(path), "an existing SimGrid platform file") from None
    except OSError as e:
        raise ConfigError("file", str(path), f"a readable SimGrid platform file ({e.strerror})") from None
    check.decode(data, path)  # these files are UTF-8 (SimGrid's examples); other bytes named here
    # these files come from elsewhere: entity declarations and external references refused; a DOCTYPE
    # naming SimGrid's DTD, as every example has, is allowed
    root = safexml.parse(data, path, "a SimGrid platform in XML")
    if root.tag != "platform":
        raise ConfigError(f"{path}: root element", f"<{root.tag}>", "<platform version=\"4.1\">")
    version = root.get("version", "")
    if not version.startswith("4"):
        raise ConfigError(f"{path}: <platform>.version", version or "<missing>",
                          "'4.1' (or '4': SimGrid's platform format since 3.13)")
    r = _Reader(path, unit)
    r.zone(root)
    if not r.hosts:
        raise ConfigError(f"{path}: hosts", "none", "at least one <host> or <cluster>")
    if r.ignored:
        warnings.warn(f"{path}: not modelled by dlbkit, ignored: {', '.join(sorted(r.ignored))}", DlbkitWarning,
                      stacklevel=caller_level())
    return {"name": path.stem, "nodes": list(r.hosts.values()), "network": _network(r, path)}


def _network(r: _Reader, path: Path) -> dict:
    names = list(r.hosts)
    n = len(names)
    if n == 1:
        return {"topology": "complete"}
    index = {h: i for i, h in enumerate(names)}
    group = {h: g for g, (hs, _) in enumerate(r.clusters) for h in hs}
    # per pair of hosts (unordered) the costs of its routes, one per direction written
    pairs: dict[tuple[int, int], list[tuple[float, float]]] = {}
    for (a, b), cost in r.pairs.items():
        if a in group and group[a] == group.get(b):
            continue  # a route inside a cluster: the cluster's own route holds (SimGrid refuses one)
        pairs.setdefault((min(index[a], index[b]), max(index[a], index[b])), []).append(cost)
    # (latency, 1/bandwidth, how many pairs): a pair's directions averaged, a cluster's pairs at once
    samples = []
    for cs in pairs.values():
        lat, inv = math.fsum(c[0] for c in cs) / len(cs), math.fsum(1 / c[1] for c in cs) / len(cs)
        samples.append((lat, inv, 1, cs[0] if len(set(cs)) == 1 else (lat, 1 / inv)))
    samples += [(cost[0], 1 / cost[1], len(hs) * (len(hs) - 1) // 2, cost) for hs, cost in r.clusters if len(hs) > 1]
    if not samples:
        raise ConfigError(f"{path}: routes", "none between hosts", "a <route> (or a <cluster>) joining the hosts")
    if any(x[1] == 0 for x in samples):
        raise ConfigError(f"{path}: <route>", "a route with no link", "a route through at least one <link_ctn>")
    lats = [x[0] for x in samples]
    invs = [x[1] for x in samples]
    routed = sum(x[2] for x in samples)
    one_way = any(len(set(cs)) > 1 for cs in pairs.values())  # a pair's two directions differ
    if not one_way and max(lats) - min(lats) <= 1e-12 * max(lats) and max(invs) - min(invs) <= 1e-12 * max(invs):
        # one value everywhere: kept as written (a mean of equal floats can be off in its last bit)
        latency, bandwidth = samples[0][3]
    else:
        latency = math.fsum(x[0] * x[2] for x in samples) / routed
        # the harmonic mean: with the mean latency, the mean over the routed pairs of a message's time
        bandwidth = routed / math.fsum(x[1] * x[2] for x in samples)
        warnings.warn(f"{path}: routes differ{' (also by direction)' if one_way else ''} (latency {min(lats):g} to {max(lats):g} s, bandwidth "
                      f"{1 / max(invs):g} to {1 / min(invs):g} B/s); dlbkit's network holds one of each: the mean "
                      f"latency {latency:g} s and the harmonic-mean bandwidth {bandwidth:g} B/s over the "
                      f"{routed:,} routed pairs", DlbkitWarning, stacklevel=caller_level())
    if routed == n * (n - 1) // 2:
        topology: Any = "complete"
    else:
        edges = set(pairs)
        for hs, _ in r.clusters:
            ids = [index[h] for h in hs]
            edges.update((a, b) for i, a in enumerate(ids) for b in ids[i + 1:])
        topology = {"kind": "edges", "edges": [list(e) for e in sorted(edges)]}
    return {"latency": latency, "bandwidth": bandwidth, "topology": topology}
