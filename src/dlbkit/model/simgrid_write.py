"""Platforms written as SimGrid XML (version 4.1): the inverse of :mod:`dlbkit.model.simgrid`.

SimGrid's reference: https://simgrid.org/doc/latest/XML_reference.html (``<zone routing="Full">``
and ``"Floyd"``, ``<host>``, ``<link>``, ``<route>``).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from xml.sax.saxutils import quoteattr

from dlbkit.errors import DlbkitWarning, caller_level
from dlbkit.model import check
from dlbkit.model.availability import Constant
from dlbkit.model.simgrid import DEFAULT_SPEED_UNIT

__all__ = ["write"]


def _num(x: float) -> str:
    return repr(float(x))


def write(platform, path: str | Path, *, speed_unit: float = DEFAULT_SPEED_UNIT) -> None:
    """Write *platform* as SimGrid 4.1 XML: one ``<host>`` per node (speed × *speed_unit* flop/s,
    ``core`` = cores) and one ``<link>`` per pair of neighbours (the network's latency and
    bandwidth). A complete platform is a ``Full`` zone with a route for every pair; any other
    topology a ``Floyd`` zone with a route per link, so that SimGrid routes the other pairs over the
    fewest links as dlbkit counts hops. Nodes' memory and availability have no place in SimGrid's
    host (availability is a profile file): a :class:`~dlbkit.errors.DlbkitWarning` says they are
    left out."""
    path = Path(path)
    unit = check.number(speed_unit, "speed_unit", lo=0.0, lo_open=True)
    lost = sorted({f for n in platform.nodes for f, bad in (("memory", n.memory is not None),
                   ("availability", not isinstance(n.availability, Constant) or n.availability.level != 1.0))
                   if bad})
    if lost:
        warnings.warn(f"{path}: SimGrid's hosts hold no node {' or '.join(lost)}: left out", DlbkitWarning,
                      stacklevel=caller_level())
    net = platform.network
    full = platform.complete
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
             '<!-- written by dlbkit: speed 1 = %s flop/s -->' % _num(unit),
             '<platform version="4.1">',
             f'  <zone id={quoteattr(platform.name or "platform")} routing="{"Full" if full else "Floyd"}">']
    for n in platform.nodes:
        lines.append(f'    <host id={quoteattr(n.name)} speed="{_num(n.speed * unit)}f" core="{n.cores}"/>')
    if full:
        pairs = [(i, j) for i in range(platform.n_nodes) for j in range(i + 1, platform.n_nodes)]
    else:
        pairs = sorted((min(a, b), max(a, b)) for a, b in platform.graph.edges())
    link = f'bandwidth="{_num(net.bandwidth)}Bps" latency="{_num(net.latency)}s"'
    for i, j in pairs:
        lines.append(f'    <link id="l{i}_{j}" {link}/>')
    for i, j in pairs:
        a, b = quoteattr(platform.nodes[i].name), quoteattr(platform.nodes[j].name)
        lines.append(f'    <route src={a} dst={b}><link_ctn id="l{i}_{j}"/></route>')
    lines += ["  </zone>", "</platform>", ""]
    path.write_text("\n".join(lines), encoding="utf-8")
