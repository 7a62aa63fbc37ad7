"""Invariants of the job-stream family over every registered placement balancer and information model.

sim/test_stream.py and sim/test_stream_disciplines.py check conservation and FIFO order for most rules
with exact information; sim/test_stream_late_binding.py late binding under gossip. Here every rule, with its
options, under every information model the engine takes, both services, with and without a transfer
cost and initial loads: every task (a job's and an initial one) is served exactly once, no task starts
before its job arrived nor ends before it starts, a node never runs more tasks than its slots under FIFO,
a job departs when its last task ends, and the same seed gives the same trace.
"""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dlbkit import make
from dlbkit.balancers.registry import REGISTRY
from dlbkit.model import Network, Node, Platform, Pulse
from dlbkit.families.stream.model.workload import Demand, Stream
from dlbkit.families.stream.sim.engine import simulate_stream

from support.profiles import examples

PLACEMENT = sorted(n for n, c in REGISTRY.items() if c.kind == "placement")
OPTIONS = {"batch-sampling": [{}, {"late_binding": True}], "power-of-d": [{}, {"d": 3, "replace": False}],
           "nezha": [{}, {"load": "wait"}]}
INFO = [None, "neighbour", "gossip", "scatter-old", "scatter-4.1", "scatter-4.2", "scatter-4.3", "monitored"]
N_NODES = 5


@st.composite
def cases(draw):
    name = draw(st.sampled_from(PLACEMENT))
    return {"name": name, "params": draw(st.sampled_from(OPTIONS.get(name, [{}]))),
            "info": draw(st.sampled_from(INFO)), "service": draw(st.sampled_from(["fifo", "ps"])),
            "jobs": draw(st.integers(1, 40)), "width": draw(st.integers(1, 3)), "rate": draw(st.floats(0.1, 2.0)),
            "initial": draw(st.lists(st.integers(0, 3), min_size=N_NODES, max_size=N_NODES)),
            "task_bytes": draw(st.sampled_from([0.0, 1e3])), "seed": draw(st.integers(0, 2**20)),
            "batch_update": draw(st.booleans()),
            "kind": draw(st.sampled_from(["exponential", "deterministic", "lognormal"]))}


def run(c):
    p = Platform([Node(f"n{i}", speed=1.0 + i % 3, cores=1 + i % 2,
                       availability=Pulse(start=2.0, duration=5.0, level=0.3) if i == 0 else 1.0)
                  for i in range(N_NODES)], Network(latency=1e-3, bandwidth=1e6))
    w = Stream(rates=c["rate"], jobs=c["jobs"], width=c["width"], demand=Demand(c["kind"], mean=0.7, sigma=0.5),
               initial=c["initial"])
    info = None if c["info"] is None else {"model": c["info"], "period": 0.5}
    b = make(c["name"], c["params"] or None)
    late = c["params"].get("late_binding", False)
    service = "fifo" if late else c["service"]  # late binding needs FIFO service
    tr = simulate_stream(p, w, b, seed=c["seed"], info=info, task_bytes=c["task_bytes"], samples=5, service=service,
                        batch_update=c.get("batch_update", True), inline=c.get("inline", True))
    return tr, p, service


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_every_task_served_once_after_its_job_arrived(c):
    tr, p, service = run(c)
    n_tasks = c["jobs"] * c["width"] + sum(c["initial"])
    iv = tr.intervals()
    assert sorted(iv["first"].tolist()) == list(range(n_tasks))  # every task once: none lost, none twice
    assert np.all(iv["t_ask"] >= 0) and np.all(iv["t_start"] >= iv["t_ask"] - 1e-12)
    assert np.all(iv["t_end"] > iv["t_start"])
    s = tr.series
    assert len(s["job_time"]) == c["jobs"] and np.all(np.isfinite(s["job_done"]))
    for b in range(c["jobs"]):  # a job arrives once, departs once, when its last task ends, after it arrived
        f, k = int(s["job_first"][b]), int(s["job_width"][b])
        assert k == c["width"]
        mine = np.isin(iv["first"], np.arange(f, f + k))
        assert mine.sum() == k
        assert iv["t_ask"][mine].min() >= s["job_time"][b]
        assert s["job_done"][b] == iv["t_end"][mine].max() > s["job_time"][b]
    if service == "fifo":
        for j in range(N_NODES):  # never more tasks running than the node's slots
            m = iv["node"] == j
            ev = sorted([(t, 1) for t in iv["t_start"][m]] + [(t, -1) for t in iv["t_end"][m]], key=lambda x: (x[0], x[1]))
            run_ = 0
            for _, dx in ev:
                run_ += dx
                assert run_ <= p.nodes[j].cores


@settings(max_examples=examples(50), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_same_seed_same_trace(c):
    (a, _, _), (b, _, _) = run(c), run(c)
    ia, ib = a.intervals(), b.intervals()
    for col in ("node", "first", "t_ask", "t_start", "t_end"):
        assert ia[col].tolist() == ib[col].tolist(), col
    assert a.series["job_done"].tolist() == b.series["job_done"].tolist()
    assert a.meta.get("info_messages") == b.meta.get("info_messages")


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_the_inlined_decision_gives_decide_places_trace(c):
    """The hot loop inlines the placement decision; through decide.place (inline=False) the trace is the same."""
    c = {**c, "inline": True}
    (a, _, _), (b, _, _) = run(c), run({**c, "inline": False})
    ia, ib = a.intervals(), b.intervals()
    for col in ("node", "first", "t_ask", "t_start", "t_end"):
        assert ia[col].tolist() == ib[col].tolist(), col


def test_different_seeds_differ_under_a_random_rule_and_gossip():
    c = {"name": "power-of-d", "params": {}, "info": "gossip", "service": "fifo", "jobs": 40, "width": 1,
         "rate": 1.0, "initial": [0] * N_NODES, "task_bytes": 0.0, "kind": "exponential"}
    ends = {tuple(run({**c, "seed": s})[0].intervals()["t_end"].tolist()) for s in range(3)}
    assert len(ends) > 1


# --- the real cluster (dlbkit.Cluster, local backend) ------------------------------------------------------------
def twice(x):
    return 2 * x


@settings(max_examples=examples(10), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(PLACEMENT), info=st.sampled_from(["gossip", "neighbour", "scatter-old", "scatter-4.1", "scatter-4.2", "scatter-4.3"]),
       jobs=st.integers(1, 25), workers=st.integers(2, 3), origins=st.lists(st.integers(0, 2), min_size=25, max_size=25),
       seed=st.integers(0, 1000))
def test_real_cluster_runs_every_job_once_under_every_rule_and_model(name, info, jobs, workers, origins, seed):
    """Each future holds its own job's result; every job arrives once, is done once, after it was submitted."""
    import dlbkit
    with dlbkit.Cluster(workers, balancer=name, info=info, seed=seed) as c:
        fs = [c.submit(twice, i, origin=origins[i] % workers) for i in range(jobs)]
        assert [f.result(timeout=60) for f in fs] == [2 * i for i in range(jobs)]
        ps = c.ps()
    assert [j.job for j in ps] == list(range(jobs)) and all(j.state == "done" for j in ps)
    assert all(j.submitted <= j.started <= j.ended and 0 <= j.node < workers for j in ps)
    tr = c.result().trace
    assert tr.meta["duplicates"] == 0 and sorted(tr.first) == list(range(jobs))
