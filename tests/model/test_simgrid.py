"""SimGrid platform XML (dlbkit.model.simgrid): read, write, refuse.

The expected numbers are worked by hand from SimGrid's units (XML reference,
https://simgrid.org/doc/latest/XML_reference.html, and ``xbt_parse_units``). The cross-check against
SimGrid itself (the last test) runs where the ``simgrid`` package is installed, and skips here: PyPI holds
only its source (``simgrid-4.1.tar.gz``), which builds SimGrid's C++ core (cmake and Boost, neither of which
this project's install brings; tens of minutes on 2 cores), far beyond CI's install. So the files follow
SimGrid's documented format and examples (``examples/platforms/small_platform.xml``,
``cluster_backbone.xml``) instead.
"""

import math
import warnings

import pytest

from dlbkit import Network, Node, Platform
from dlbkit.errors import ConfigError, DlbkitWarning
from dlbkit.face.cli import main
from dlbkit.model import simgrid

from support.experiment_files import TINY

HEAD = '<?xml version="1.0"?>\n<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'

SMALL = HEAD + """<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="a" speed="2Gf" core="4"/>
    <host id="b" speed="500Mf,100Mf"/>
    <host id="c" speed="1.5e9f"><prop id="colour" value="blue"/></host>
    <link id="l1" bandwidth="125MBps" latency="50us"/>
    <link id="l2" bandwidth="2Gbps" latency="1ms"/>
    <route src="a" dst="b"><link_ctn id="l1"/></route>
    <route src="b" dst="c"><link_ctn id="l2"/></route>
    <route src="a" dst="c"><link_ctn id="l1"/><link_ctn id="l2"/></route>
  </zone>
</platform>
"""

CLUSTER = HEAD + """<platform version="4.1">
  <cluster id="c" prefix="node-" suffix=".me" radical="0-1,5,7" speed="1Gf" core="2"
           bw="1.25GBps" lat="10us" bb_bw="1GBps" bb_lat="5us"/>
</platform>
"""


def put(tmp_path, text, name="p.xml"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def read(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DlbkitWarning)
        return Platform.read(path, **kw)


# --- units --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, flops", [("1Gf", 1e9), ("2.5Mf", 2.5e6), ("3kf", 3e3), ("1Tf", 1e12), ("1Pf", 1e15),
                                         ("7f", 7.0), ("1megaflops", 1e6), ("1flops", 1.0), ("1e9", 1e9)])
def test_speed_units(text, flops):
    assert simgrid.parse_speed(text) == pytest.approx(flops, rel=1e-15)


@pytest.mark.parametrize("text, bps", [("125MBps", 125e6), ("1Gbps", 125e6), ("1KiBps", 1024.0), ("8bps", 1.0),
                                       ("1MiBps", 1024.0 ** 2), ("2kBps", 2e3), ("1TBps", 1e12)])
def test_bandwidth_units(text, bps):
    assert simgrid.parse_bandwidth(text) == pytest.approx(bps, rel=1e-15)


@pytest.mark.parametrize("text, s", [("50us", 5e-5), ("1ms", 1e-3), ("3ns", 3e-9), ("2ps", 2e-12), ("1s", 1.0),
                                     ("2m", 120.0), ("1h", 3600.0), ("0", 0.0)])
def test_time_units(text, s):
    assert simgrid.parse_time(text) == pytest.approx(s, rel=1e-15)


# --- reading ------------------------------------------------------------------------------------------
def test_small_platform_worked_by_hand(tmp_path):
    path = put(tmp_path, SMALL)
    with pytest.warns(DlbkitWarning) as caught:
        p = Platform.read(path)
    text = " ".join(str(w.message) for w in caught)
    assert "<prop>" in text and "routes differ" in text
    assert [n.name for n in p.nodes] == ["a", "b", "c"]
    # 1 Gf = one work unit/s; b's first pstate (500 Mf) is its speed
    assert [n.speed for n in p.nodes] == pytest.approx([2.0, 0.5, 1.5])
    assert [n.cores for n in p.nodes] == [4, 1, 1]
    # routes: a-b 50 us at 125 MB/s; b-c 1 ms at 2 Gb/s = 250 MB/s; a-c over both: 1.05 ms at 125 MB/s
    assert p.network.latency == pytest.approx((50e-6 + 1e-3 + 1.05e-3) / 3)  # 0.7 ms
    assert p.network.bandwidth == pytest.approx(3 / (1 / 125e6 + 1 / 250e6 + 1 / 125e6))  # 150 MB/s
    assert p.complete and p.name == "p"


def test_speed_unit_keyword(tmp_path):
    p = read(put(tmp_path, SMALL), speed_unit="500Mf")
    assert [n.speed for n in p.nodes] == pytest.approx([4.0, 1.0, 3.0])
    assert [n.speed for n in read(tmp_path / "p.xml", speed_unit=1e6).nodes] == pytest.approx([2000, 500, 1500])


def test_pstate_attribute_chooses_the_speed(tmp_path):
    p = read(put(tmp_path, SMALL.replace('speed="500Mf,100Mf"', 'speed="500Mf,100Mf" pstate="1"')))
    assert p.nodes[1].speed == pytest.approx(0.1)


def test_missing_routes_give_a_neighbour_graph(tmp_path):
    p = read(put(tmp_path, SMALL.replace('<route src="a" dst="c"><link_ctn id="l1"/><link_ctn id="l2"/></route>', "")))
    assert not p.complete and p.neighbours() == [[1], [0, 2], [1]]
    assert p.network.latency == pytest.approx((50e-6 + 1e-3) / 2)


def test_uniform_routes_give_no_warning(tmp_path):
    text = SMALL.replace('bandwidth="2Gbps" latency="1ms"', 'bandwidth="1Gbps" latency="50us"').replace(
        '<link_ctn id="l1"/><link_ctn id="l2"/>', '<link_ctn id="l2"/>').replace('<prop id="colour" value="blue"/>', "")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = Platform.read(put(tmp_path, text))
    assert (p.network.latency, p.network.bandwidth) == pytest.approx((50e-6, 125e6))


def test_cluster_of_four_hosts(tmp_path):
    p = read(put(tmp_path, CLUSTER))
    assert [n.name for n in p.nodes] == ["node-0.me", "node-1.me", "node-5.me", "node-7.me"]
    assert all(n.speed == pytest.approx(1.0) and n.cores == 2 for n in p.nodes)
    # private link, backbone, private link: 10 + 5 + 10 us; the least of 1.25 GB/s and 1 GB/s
    assert p.complete and p.network.latency == pytest.approx(25e-6) and p.network.bandwidth == pytest.approx(1e9)


def test_floyd_zone_through_a_router(tmp_path):
    text = HEAD + """<platform version="4.1"><zone id="z" routing="Floyd">
      <host id="a" speed="1Gf"/><host id="b" speed="1Gf"/><router id="r"/>
      <link id="la" bandwidth="100MBps" latency="1ms"/><link id="lb" bandwidth="50MBps" latency="2ms"/>
      <route src="a" dst="r"><link_ctn id="la"/></route><route src="r" dst="b"><link_ctn id="lb"/></route>
    </zone></platform>"""
    p = read(put(tmp_path, text))
    assert p.complete and p.network.latency == pytest.approx(3e-3) and p.network.bandwidth == pytest.approx(50e6)


# --- writing and the round trip -------------------------------------------------------------------------
@pytest.mark.parametrize("topology", ["complete", "ring", {"kind": "edges", "edges": [[0, 1], [1, 2], [1, 3]]}])
def test_round_trip(tmp_path, topology):
    p = Platform([Node("m", speed=1.0), Node("a", speed=2.5, cores=3), Node("b & c", speed=0.125), Node("d", 4.0)],
                 Network(latency=3.5e-4, bandwidth=1.1e9, topology=topology), name="rt")
    path = tmp_path / "rt.xml"
    p.write(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one latency and bandwidth everywhere: nothing to warn about
        q = Platform.read(path)
    assert [n.name for n in q.nodes] == [n.name for n in p.nodes]
    assert [n.speed for n in q.nodes] == pytest.approx([n.speed for n in p.nodes], rel=1e-12)
    assert [n.cores for n in q.nodes] == [n.cores for n in p.nodes]
    assert q.network.latency == pytest.approx(p.network.latency, rel=1e-12)
    assert q.network.bandwidth == pytest.approx(p.network.bandwidth, rel=1e-12)
    assert q.complete == p.complete and [list(x) for x in q.neighbours()] == [list(x) for x in p.neighbours()]


def test_write_warns_of_what_simgrid_hosts_cannot_hold(tmp_path):
    p = Platform([Node("a", memory=1e9), Node("b", availability=0.5)])
    with pytest.warns(DlbkitWarning, match="availability or memory"):
        p.write(tmp_path / "x.xml")


def test_write_needs_xml_suffix(tmp_path):
    with pytest.raises(ConfigError, match="xml"):
        Platform([Node("a")]).write(tmp_path / "x.toml")


# --- bad input: one ConfigError naming the file and the element ---------------------------------------
BAD = {
    "unknown speed unit": (SMALL.replace('"2Gf"', '"2Gx"'), "<host id='a'>.speed"),
    "unknown bandwidth unit": (SMALL.replace('"125MBps"', '"125MB"'), "<link id='l1'>.bandwidth"),
    "unknown latency unit": (SMALL.replace('"50us"', '"50 parsecs"'), "<link id='l1'>.latency"),
    "route via unknown link": (SMALL.replace('<link_ctn id="l2"/></route>\n    <route src="a"',
                                             '<link_ctn id="l9"/></route>\n    <route src="a"'), "l9"),
    "route to unknown host": (SMALL.replace('dst="c"', 'dst="zz"', 1), "<route>.dst"),
    "missing host id": (SMALL.replace('<host id="a"', '<host'), "<host>.id"),
    "missing link bandwidth": (SMALL.replace('bandwidth="125MBps" ', ""), "<link id='l1'>.bandwidth"),
    "duplicate host": (SMALL.replace('id="b"', 'id="a"'), "<host id='a'>.id"),
    "malformed radical": (CLUSTER.replace('"0-1,5,7"', '"0-1,x"'), "<cluster id='c'>.radical"),
    "reversed radical": (CLUSTER.replace('"0-1,5,7"', '"7-3"'), "<cluster id='c'>.radical"),
    "huge radical": (CLUSTER.replace('"0-1,5,7"', '"0-99999999999"'), "<cluster id='c'>.radical"),
    "zone route": (SMALL.replace("</zone>", '<zoneRoute src="x" dst="y" gw_src="a" gw_dst="b"/></zone>'),
                   "<zoneRoute>"),
    "torus cluster": (CLUSTER.replace('radical=', 'topology="TORUS" radical='), ".topology"),
    "vivaldi zone": (SMALL.replace('routing="Full"', 'routing="Vivaldi"'), ".routing"),
    "unknown tag": (SMALL.replace("</zone>", "<printer id='p'/></zone>"), "<printer"),
    "bad pstate": (SMALL.replace('speed="500Mf,100Mf"', 'speed="500Mf" pstate="3"'), ".pstate"),
    "not a platform": (HEAD + "<deployment/>", "root element"),
    "old version": (SMALL.replace('version="4.1"', 'version="3"'), "<platform>.version"),
    "no hosts": (HEAD + '<platform version="4.1"><zone id="z" routing="Full"/></platform>', "hosts"),
    "no routes": (HEAD + '<platform version="4.1"><zone id="z" routing="Full"><host id="a" speed="1Gf"/>'
                  '<host id="b" speed="1Gf"/></zone></platform>', "routes"),
    "too many cores": (SMALL.replace('core="4"', 'core="100000"'), "<host id='a'>.cores"),
    "zero bandwidth": (SMALL.replace('"125MBps"', '"0MBps"'), "<link id='l1'>.bandwidth"),
    "negative latency": (SMALL.replace('"50us"', '"-50us"'), "<link id='l1'>.latency"),
    "zero speed": (SMALL.replace('"2Gf"', '"0Gf"'), "<host id='a'>.speed"),
    "zero cluster bw": (CLUSTER.replace('bw="1.25GBps"', 'bw="0Bps"'), "<cluster id='c'>.bw"),
    "not XML": ("this is not < xml", "file"),
    "external entity": ('<?xml version="1.0"?>\n<!DOCTYPE platform [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n'
                        '<platform version="4.1"><zone id="&x;" routing="Full"/></platform>', "file"),
    "entity expansion": ('<?xml version="1.0"?>\n<!DOCTYPE platform [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]>\n'
                         '<platform version="4.1"><zone id="&b;" routing="Full"/></platform>', "file"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_names_file_and_element(tmp_path, case):
    text, where = BAD[case]
    path = put(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        read(path)
    msg = str(err.value)
    assert str(path) in msg and where in msg, msg
    assert "\n" not in msg


def test_non_utf8_is_a_config_error(tmp_path):
    path = tmp_path / "p.xml"
    path.write_bytes(SMALL.replace('id="z"', 'id="z\xe9"').encode("latin-1"))
    with pytest.raises(ConfigError, match="UTF-8") as err:
        read(path)
    assert str(path) in str(err.value)


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="existing SimGrid platform file"):
        read(tmp_path / "none.xml")


def test_entities_refused_by_defusedxml(tmp_path):
    with pytest.raises(ConfigError, match="EntitiesForbidden"):
        read(put(tmp_path, BAD["external entity"][0]))


# --- experiment files and the CLI ---------------------------------------------------------------------
def experiment(tmp_path, platform_text, extra=""):
    put(tmp_path, platform_text.replace('id="a"', 'id="m"').replace('src="a"', 'src="m"'))
    head, rest = TINY.split("[platform]")
    rest = rest.split("[workload]")[1]
    exp = tmp_path / "exp.toml"
    exp.write_text(head + '[platform]\nfile = "p.xml"\n' + extra + "\n[workload]" + rest)
    return exp


def test_cli_simulates_an_experiment_on_a_simgrid_platform(tmp_path, capsys):
    exp = experiment(tmp_path, SMALL, 'speed_unit = "1Gf"')
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DlbkitWarning)
        code = main(["simulate", str(exp), "--out", str(tmp_path / "out")])
    assert code == 0, capsys.readouterr().err
    assert (tmp_path / "out" / "report.html").is_file()
    from dlbkit.face.experiments.spec import load_experiment

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DlbkitWarning)
        e = load_experiment(exp)
    assert [n.name for n in e.platform.nodes] == ["m", "b", "c"] and e.platform.network.latency == pytest.approx(7e-4)


def test_cli_bad_simgrid_file_exits_2(tmp_path, capsys):
    exp = experiment(tmp_path, SMALL.replace('"2Gf"', '"2Gx"'))
    assert main(["simulate", str(exp), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "p.xml" in err[0] and "speed" in err[0], err


def test_speed_unit_only_with_an_xml_file(tmp_path, capsys):
    exp = tmp_path / "exp.toml"
    exp.write_text(TINY.replace("[platform]", '[platform]\nspeed_unit = "1Gf"'))
    assert main(["simulate", str(exp), "--out", str(tmp_path / "out")]) == 2
    assert "platform.speed_unit" in capsys.readouterr().err


def test_speed_unit_in_an_experiment_scales(tmp_path):
    from dlbkit.face.experiments.spec import load_experiment

    exp = experiment(tmp_path, SMALL, "speed_unit = 1e6")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DlbkitWarning)
        e = load_experiment(exp)
    assert [n.speed for n in e.platform.nodes] == pytest.approx([2000.0, 500.0, 1500.0])
    assert math.isfinite(e.platform.total_speed)


def test_radical_limit_is_dlbkits_node_limit():
    from dlbkit.model.platform import MAX_NODES

    assert simgrid.MAX_RADICAL == MAX_NODES


def test_a_large_cluster_is_read_without_its_pairs(tmp_path):
    # 20 000 hosts: 2·10⁸ pairs, all alike, never listed one by one
    p = read(put(tmp_path, CLUSTER.replace('"0-1,5,7"', '"0-19999"')))
    assert p.n_nodes == 20_000 and p.complete and p.network.latency == pytest.approx(25e-6)


def test_uniform_values_are_kept_exactly(tmp_path):
    text = HEAD + """<platform version="4.1"><zone id="z" routing="Full">
      <host id="a" speed="1Gf"/><host id="b" speed="1Gf"/><host id="c" speed="1Gf"/>
      <link id="l" bandwidth="125MBps" latency="1ms"/>
      <route src="a" dst="b"><link_ctn id="l"/></route><route src="a" dst="c"><link_ctn id="l"/></route>
      <route src="b" dst="c"><link_ctn id="l"/></route></zone></platform>"""
    p = read(put(tmp_path, text))
    assert (p.network.latency, p.network.bandwidth) == (1e-3, 125e6)  # not a mean's last-bit error


def test_asymmetric_routes_average_both_directions(tmp_path):
    text = HEAD + """<platform version="4.1"><zone id="z" routing="Full">
      <host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>
      <link id="fast" bandwidth="200MBps" latency="1ms"/><link id="slow" bandwidth="50MBps" latency="3ms"/>
      <route src="a" dst="b" symmetrical="NO"><link_ctn id="fast"/></route>
      <route src="b" dst="a" symmetrical="NO"><link_ctn id="slow"/></route></zone></platform>"""
    with pytest.warns(DlbkitWarning, match="also by direction"):
        p = Platform.read(put(tmp_path, text))
    # one pair: latency (1 + 3) / 2 ms; bandwidth 2 / (1/200 + 1/50) MB/s = 80 MB/s
    assert p.network.latency == pytest.approx(2e-3) and p.network.bandwidth == pytest.approx(80e6)


def test_a_grid_varies_a_simgrid_platform(tmp_path):
    from dlbkit.face.experiments.spec import load_experiment

    exp = experiment(tmp_path, SMALL)
    exp.write_text(exp.read_text() + '\n[grid]\n"platform.network.latency" = [1e-3, 2e-3]\n"platform.nodes[1].speed" = [3.0]\n')
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DlbkitWarning)
        e = load_experiment(exp)
        runs = e.expand()
    assert sorted({r.platform.network.latency for r in runs}) == [1e-3, 2e-3]
    assert {r.platform.nodes[1].speed for r in runs} == {3.0}


def test_other_keys_with_a_simgrid_file_are_refused(tmp_path, capsys):
    exp = experiment(tmp_path, SMALL, "nodes = []")
    assert main(["simulate", str(exp), "--out", str(tmp_path / "out")]) == 2
    assert "platform.nodes" in capsys.readouterr().err


@pytest.mark.parametrize("text", [SMALL, CLUSTER], ids=["zone", "cluster"])
def test_the_simgrid_package_reads_the_same_hosts_cores_and_speeds(tmp_path, text):
    """SimGrid's own parser (the ``simgrid`` package's ``Engine.load_platform``; a host's ``name``,
    ``core_count`` and ``speed`` in flop/s at its first pstate) and dlbkit's agree host by host, dlbkit's
    speed times its ``speed_unit`` being SimGrid's flop/s."""
    sg = pytest.importorskip("simgrid", reason="the simgrid package is not installed: PyPI has only its source, "
                             "a C++ build with cmake and Boost (module docstring)")
    path = put(tmp_path, text)
    engine = sg.Engine(["dlbkit-cross-check"])
    engine.load_platform(str(path))
    theirs = {h.name: (h.core_count, h.speed) for h in engine.all_hosts}
    unit = 1e9
    ours = read(path, speed_unit=unit)
    assert sorted(theirs) == sorted(n.name for n in ours.nodes)
    for n in ours.nodes:
        assert n.cores == theirs[n.name][0]
        assert n.speed * unit == pytest.approx(theirs[n.name][1], rel=1e-12)
