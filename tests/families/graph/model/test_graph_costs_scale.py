"""Task-graph costs at many workers: the same tables as the all-pairs construction, without the
complete platform's hop matrix or m rows of one repeated value (2.4 GB at 8 192 workers, now 0.9)."""

import pytest

from dlbkit import Platform
from dlbkit.families.graph.model.costs import costs_for
from dlbkit.families.graph.model.generate import layered


def _platform(topology: str | None) -> Platform:
    net = {"latency": 0.003, "bandwidth": 7.0}
    if topology:
        net["topology"] = topology
    return Platform.from_dict({"nodes": [{"name": "a", "speed": 1.0, "cores": 2}, {"name": "b", "count": 7, "speed": 2.5},
                                         {"name": "c", "speed": 0.5, "cores": 3}], "network": net})


def _all_pairs(platform: Platform, kind: str):
    """The tables as they were built: from the all-pairs hop matrix, row by row."""
    host = platform.worker_nodes()
    m = len(host)
    rows = [platform.hops[h].tolist() for h in host]
    if kind == "standard":
        lat_s, inv_bw = platform.network.latency, 1.0 / platform.network.bandwidth
        return [[float(r[h]) * lat_s for h in host] for r in rows], [[inv_bw] * m for _ in range(m)]
    return [[0.0] * m for _ in range(m)], [[float(r[h]) for h in host] for r in rows]


@pytest.mark.parametrize("topology", [None, "ring", "torus"])
@pytest.mark.parametrize("kind", ["standard", "thesis"])
def test_tables_equal_the_all_pairs_construction(topology, kind):
    p = _platform(topology)
    c = costs_for(layered(30, seed=2), p, kind)
    lat, per = _all_pairs(p, kind)
    assert c.lat == lat and c.per == per
    assert all(type(x) is float for row in c.lat + c.per for x in row)


def test_a_processor_count_has_zero_latency_and_unit_transfer():
    c = costs_for(layered(12, seed=1), 9)
    assert c.lat == [[0.0] * 9] * 9 and c.per == [[1.0] * 9] * 9


def test_complete_platform_builds_no_hop_matrix(monkeypatch):
    """The m × m hop matrix (1 - eye, int64) was built for every complete platform: 1 GB at 8 192."""
    p = _platform(None)

    def refuse(self):
        raise AssertionError("the all-pairs hop matrix of a complete platform")

    monkeypatch.setattr(Platform, "hops", property(refuse))
    c = costs_for(layered(20, seed=3), p)
    assert c.lat[0][1] == 0.0 and c.lat[0][2] == 0.003  # workers 0, 1 share machine a


@pytest.mark.parametrize("kind,table", [("standard", "per"), ("thesis", "lat")])
def test_a_table_of_one_value_is_one_row(kind, table):
    """m rows of one repeated value were m² references of their own (0.5 GB at 8 192 workers)."""
    rows = getattr(costs_for(layered(10, seed=1), _platform("ring"), kind), table)
    assert len(rows) == 12 and all(r is rows[0] for r in rows)


def test_pd_tables_are_the_costs_with_zero_within_a_machine():
    """PD's m × m tables are built in place from numpy host ids (they were m² Python booleans and an
    np.where copy per table: 2.2 GB at 8 192 workers, now 1.7): the same numbers."""
    import numpy as np

    from dlbkit import simulate
    from dlbkit.families.graph.balancers.pd import PseudoDynamic

    seen = {}
    start = PseudoDynamic.start

    def keep(self, view, rng=None):
        start(self, view, rng)
        seen["pd"], seen["costs"] = self, view.costs

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(PseudoDynamic, "start", keep)
        simulate(_platform("ring"), layered(25, seed=4), "pd", engine_name="dynamic", seed=1)
    pd, c = seen["pd"], seen["costs"]
    m = len(c.host)
    same = np.array([[c.host[p] == c.host[q] for q in range(m)] for p in range(m)])
    assert np.array_equal(pd.lat_, np.where(same, 0.0, np.asarray(c.lat, dtype=float)))
    assert np.array_equal(pd.per_, np.where(same, 0.0, np.asarray(c.per, dtype=float)))
    assert pd.lat_[0, 1] == 0.0 and pd.lat_[0, 2] > 0  # workers 0 and 1 share machine a
    pd.per_[0, 2] = -1.0  # its own copy: the shared rows of the costs stay as they are
    assert c.per[0][2] > 0
