"""A platform's facts (dlbkit.model.platform_facts), worked by hand: speeds listed only for a few hosts, the
mean over hosts and the capacity over cores, the topology's kind however it was given."""

import networkx as nx
import pytest

from dlbkit import Network, Node, Platform, Pulse, Step
from dlbkit.model.platform_facts import SHORT, platform_facts


def facts(p, **kw):
    return {f.key: f.value for f in platform_facts(p, **kw)}


def test_many_hosts_give_min_mean_max_but_no_list():
    """SHORT + 1 = 9 hosts of speeds 1 … 9, host 9 with 3 cores: mean 45 / 9 = 5, capacity 45 + 2 × 9 = 63,
    cores 8 + 3 = 11; more than SHORT hosts, so no list; a 3 × 3 mesh has 12 links."""
    nodes = [Node(f"n{k}", speed=float(k), cores=3 if k == 9 else 1) for k in range(1, SHORT + 2)]
    f = facts(Platform(nodes, Network(latency=0.5, bandwidth=2.0, topology={"kind": "mesh", "rows": 3})))
    assert SHORT == 8 and "speeds" not in f
    assert (f["hosts"], f["cores"], f["speed_min"], f["speed_mean"], f["speed_max"], f["capacity"]) == \
        (9, 11, 1.0, 5.0, 9.0, 63.0)
    assert (f["latency"], f["bandwidth"], f["topology"], f["links"]) == (0.5, 2.0, "mesh", 12)


def test_a_scale_turns_work_units_into_the_files_unit():
    """Speeds 2 and 0.5 at 1e9 flop/s a unit: 2e9 and 5e8, capacity 2.5e9, each fact in flop/s."""
    p = Platform([Node("a", speed=2.0), Node("b", speed=0.5)])
    out = platform_facts(p, speed_scale=1e9, speed_unit="flop/s")
    f = {x.key: x for x in out}
    assert f["speeds"].value == [2e9, 5e8] and f["capacity"].value == pytest.approx(2.5e9)
    assert {x.unit for x in out if x.key.startswith(("speed", "capacity"))} == {"flop/s"}
    assert f["topology"].value == "complete" and f["links"].value == 1


def test_a_given_graph_is_named_so():
    """A path a - b - c given as a networkx graph: 2 links, kind 'a given graph'."""
    f = facts(Platform([Node(x) for x in "abc"], Network(topology=nx.path_graph(3))))
    assert (f["topology"], f["links"]) == ("a given graph", 2)


def test_hosts_that_other_users_share_are_counted_with_their_kinds_of_availability():
    """a at level 1 (full), b at a constant 0.5, c with a step, d with a pulse: 3 not fully available, of kinds
    Constant, Pulse, Step; a platform of full hosts says 0 and lists none."""
    p = Platform([Node("a"), Node("b", availability=0.5), Node("c", availability=Step(at=5.0, level=0.2)),
                  Node("d", availability=Pulse(start=1.0, duration=2.0, level=0.5))])
    f = facts(p)
    assert f["shared_hosts"] == 3 and f["availability_kinds"] == ["Constant", "Pulse", "Step"]
    full = facts(Platform([Node("a"), Node("b")]))
    assert full["shared_hosts"] == 0 and "availability_kinds" not in full
