"""The tree engine's per-node queue samples: kept as the trace's rows (no copy of up to
2 × WAITING_SAMPLES × nodes counts when the run ends), the same on the specialised and the general loop."""

import pytest

from dlbkit import Platform, simulate
from dlbkit.families.tree.model.workload import tree_from_dict
from dlbkit.families.tree.sim.engine import WAITING_SAMPLES


@pytest.mark.parametrize("topology", [None, "torus"])
def test_queue_rows_sum_to_the_waiting_series_on_both_loops(topology):
    net = {"latency": 8.6e-6, "bandwidth": 1e8, **({"topology": topology} if topology else {})}
    p = Platform.from_dict({"nodes": [{"name": "pe", "count": 16, "speed": 5.8e6}], "network": net})
    tree = tree_from_dict({"shape": "imbalance", "imbalance": 0.2, "depth": 13, "fanout": 2, "grain": 1000, "seed": 1})
    traces = []
    for fast in ((None, False) if topology else (True, False)):
        tr = simulate(p, tree, "steal", seed=2, fast_path=fast, task_bytes=0).trace
        q, w = tr.meta["queues"], tr.meta["waiting"]
        assert all(type(row) is list and len(row) == 16 for row in q)
        assert len(q) == len(w) <= 2 * WAITING_SAMPLES + 2
        assert [sum(row) for row in q] == [n for _, n in w]
        assert w[-1][0] == pytest.approx(tr.makespan)
        traces.append(tr)
    a, b = traces
    if topology is None:  # the specialised loop and the general one: the same samples
        assert a.meta["queues"] == b.meta["queues"] and a.meta["waiting"] == b.meta["waiting"]
