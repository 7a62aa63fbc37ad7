"""The accepted-input fuzzers' common parts: the small experiments of every family, edge values
the loader accepts, and loading and running one to a finite result.

Moved from the test modules that shared them (test modules never import one another).
"""

from __future__ import annotations

import json
import math
import shutil
import tomllib
import warnings
from numbers import Integral

import pytest
from hypothesis import strategies as st

import dlbkit
from dlbkit.errors import ConfigError
from dlbkit.face.experiments import load_experiment

from support.experiment_files import TINY
from support.fuzz import DATA, Hang, _parent, deadline, paths, to_toml

RUN_S = 10  # a tiny run takes milliseconds; one taking longer is a hang


RUNS_PER_EXAMPLE = 3


def _exp(name: str) -> dict:
    return tomllib.loads((DATA / "experiments" / f"{name}.toml").read_text())


def bases() -> dict[str, dict]:
    """The experiments fuzzed, already small."""
    out = {}
    g = _exp("graph_pd_vs_heft")
    g["workload"].update(n=10, width=3)
    out["graph_pd_vs_heft"] = g
    inline = {
        "name": "graph_inline", "seed": 1,
        "platform": {"nodes": [{"name": "a", "speed": 1.0},
                               {"name": "b", "speed": 2.0, "availability": {"kind": "markov", "mean_free": 2.0,
                                                                           "mean_busy": 1.0, "low": 0.3}},
                               {"name": "c", "speed": 1.0, "availability": {"kind": "step", "at": 1.0,
                                                                           "level": 0.5}}],
                     "network": {"latency": 0.001, "bandwidth": 10.0, "topology": "ring"}},
        "workload": {"kind": "graph",
                     "tasks": [{"id": "a", "load": 1.0}, {"id": "b", "load": 2.0}, {"id": "c", "load": 1.5},
                               {"id": "d", "load": 0.5}],
                     "edges": [{"from": "a", "to": "b", "data": 1.0}, {"from": "a", "to": "c", "data": 2.0},
                               {"from": "b", "to": "d", "data": 0.5}]},
        "engine": {"name": "dynamic"},
        "balancers": [{"name": "heft"}, {"name": "pd"}, {"name": "heft-replan"},
                      {"name": "cpop", "engine": {"name": "static", "contention": "link"}}],
    }
    out["graph_inline"] = inline
    for name, w in (("graph_stg", {"kind": "graph", "file": "g.stg"}),
                    ("graph_json", {"kind": "graph", "file": "g.json"}),
                    ("graph_gaussian", {"kind": "graph", "generator": "gaussian", "m": 3, "ccr": 1.0}),
                    ("graph_in_tree", {"kind": "graph", "generator": "in-tree", "m": 2, "k": 3})):
        d = json.loads(json.dumps(inline))
        d["name"], d["workload"] = name, w
        d["engine"] = {"name": "static", "cost_model": "thesis"}
        d["balancers"] = [{"name": "heft"}, {"name": "hlf"}, {"name": "pd", "engine": {"name": "dynamic"}}]
        out[name] = d
    s = _exp("streams_hetero")
    s["workload"]["jobs"] = 30
    s["engine"]["samples"] = 5
    s["platform"] = {"nodes": [{"name": "n", "count": 3, "speed": 1.0},
                               {"name": "hot", "speed": 2.0, "availability": {"kind": "pulse", "start": 1.0,
                                                                             "duration": 3.0, "level": 0.1}}],
                     "network": {"topology": "star"}}
    out["streams_hetero"] = s
    s2 = json.loads(json.dumps(s))
    s2["name"] = "streams_scatter"
    s2["workload"].update(width=2, initial=[3, 0, 0, 1])
    s2["engine"].update(service="ps", info={"model": "scatter-4.3", "period": 0.5, "timeout": 2, "inactive": [1]})
    s2["balancers"] = [{"name": "nezha"}, {"name": "power-of-d", "info": {"model": "monitored", "period": 0.5,
                                                                          "lag": 0.1}},
                       {"name": "spillback", "info": {"model": "scatter-old", "period": 0.5, "l": 3}}]
    out["streams_scatter"] = s2
    la = _exp("loop_auto")
    la["workload"]["items"] = 40
    la["engine"]["steps"] = 3
    out["loop_auto"] = la
    t = tomllib.loads(TINY)
    t["engine"]["steps"] = 3
    t["balancers"] = [{"name": "auto"}, {"name": "awf-c"}]
    t["platform"]["network"]["topology"] = {"kind": "edges", "edges": [[0, 1], [1, 2]]}
    t["platform"]["nodes"][1]["availability"] = {"kind": "trace", "times": [0.0, 2.0], "levels": [1.0, 0.5]}
    out["divisible_steps_auto"] = t
    h = _exp("haron_torus64_info")
    h["platform"]["nodes"][0]["count"] = 4
    h["workload"].update(depth=6, grain=1.0)
    out["haron_torus64_info"] = h
    for d in out.values():
        d["repetitions"] = 1
    return out


BASES = bases()


# after mutation: sizes at most these (0, 1, negative, NaN are kept: the loader must judge them) ...
CAP = {"repetitions": 1, "items": 40, "n": 12, "jobs": 30, "steps": 3, "count": 4, "depth": 6, "width": 4,
       "m": 4, "k": 3, "points": 8, "samples": 5, "fanout": 3, "master_overhead": 1.0, "latency": 1.0, "grain": 10.0,
       "load": 10.0, "mean": 10.0, "value": 10.0, "high": 10.0, "data": 10.0, "task_bytes": 1e6, "bytes_in": 1e6,
       "bytes_out": 1e6, "broadcast_bytes": 1e6, "request_bytes": 1e6, "control_bytes": 1e6,
       "master_cost_per_byte": 1e-6, "imbalance": 0.5}


# ... and time scales at least these (a finer one over a long run is legitimately long work)
FLOOR = {"speed": 0.1, "level": 0.05, "low": 0.05, "period": 0.05, "mean_free": 0.05, "mean_busy": 0.05,
         "bandwidth": 1e3, "rates": 0.1, "levels": 0.05}


def _num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


# the search mappers' budgets and the run's own limits, capped and floored as the rest
CAP.update({"loops": 12, "time_limit": 2.0, "moves": 200, "improving": 200, "patience": 10, "max_stages": 20,
            "candidates": 20, "perturbations": 20, "tenure": 20, "max_swaps": 50,
            "capacity": 8,  # max-k1-sum pads the graph to m × capacity tasks: O(m·(m·k)²) work
            "cores": 4})  # 4 371 cores are 4 372 processors: max-k1-sum's m·(m·k)² is then a long valid run
# HiGHS's time limit is wall clock: under 1e-9 s (or a busy machine's 0.01 s) it has no incumbent, and the
# relaxed model's run says so (a ConfigError naming time_limit: "large enough for HiGHS to find a feasible
# plan"; the exact model returns HEFT's plan instead), which no check on load can foresee; a second is
# plenty for these few tasks. Its node limit is the same kind of
# budget: with one node, the root's heuristics may find no plan; a hundred nodes are plenty here
FLOOR["time_limit"] = 1.0
FLOOR["node_limit"] = 100


def shrink(d):
    """*d* with every size capped and every time scale floored, in place (other values untouched)."""
    if isinstance(d, dict):
        for k, v in d.items():
            if k in CAP and _num(v) and v > CAP[k]:
                d[k] = type(v)(CAP[k])
            elif k in FLOOR and _num(v) and 0 < v < FLOOR[k]:
                d[k] = FLOOR[k]
            elif k in FLOOR and isinstance(v, list):
                d[k] = [FLOOR[k] if _num(x) and 0 < x < FLOOR[k] else x for x in v]
            else:
                shrink(v)
    elif isinstance(d, list):
        for x in d:
            shrink(x)
    return d


EDGE = st.sampled_from([0, 1, 2, 3, 0.0, 0.5, 1.0, 1e-9, 1e-300, 1e-3, 100, 1e6, 1e12])


NAMES = st.sampled_from(["", "none", "static", "dynamic", "exact", "gossip", "periodic", "neighbour", "auto", "heft",
                         "pd", "ring", "star", "chain", "hypercube", "mesh", "torus", "complete", "edges", "layered",
                         "fft", "df", "bf", "exponential", "uniform", "deterministic", "markov", "step", "pulse",
                         "rounds", "ps", "fifo", "thesis", "link", "gss", "jsq", "nezha", "scatter-old",
                         "scatter-4.1", "scatter-4.2", "scatter-4.3", "monitored", "constrained"])


@st.composite
def edged(draw, base: dict) -> dict:
    """*base* (deep-copied) with one to three edge-value changes: a number set to 0, 1, tiny or huge; a
    list emptied, cut to one element, reversed or given its first element twice; a name swapped for
    another known name; a task graph given a cycle, a self-loop, no edges, a task with no edge or an
    edge to an unknown task."""
    d = json.loads(json.dumps(base))
    for _ in range(draw(st.integers(1, 3))):
        where = paths(d)
        op = draw(st.sampled_from(["number", "number", "list", "name", "graph"]))
        of = {"number": _num, "list": lambda v: isinstance(v, list), "name": lambda v: isinstance(v, str)}
        if op in of:
            hits = [p for p in where if of[op](_parent(d, p)[p[-1]])]
            if not hits:
                continue
            path = draw(st.sampled_from(hits))
            parent, v = _parent(d, path), _parent(d, path)[path[-1]]
            if op == "number":
                parent[path[-1]] = draw(EDGE)
            elif op == "name":
                parent[path[-1]] = draw(NAMES)
            else:
                how = draw(st.sampled_from(["empty", "one", "twice", "reversed"]))
                parent[path[-1]] = {"empty": [], "one": v[:1], "twice": v + v[:1], "reversed": v[::-1]}[how]
        else:
            w = d.get("workload", {})
            if not w.get("edges"):
                continue
            e0, e1 = w["edges"][0], w["edges"][-1]
            how = draw(st.sampled_from(["cycle", "self-loop", "no edges", "lone task", "unknown task"]))
            if how == "cycle":
                w["edges"].append({"from": e1["to"], "to": e0["from"], "data": 1.0})
            elif how == "self-loop":
                w["edges"].append({"from": e0["from"], "to": e0["from"], "data": 1.0})
            elif how == "no edges":
                w["edges"] = []
            elif how == "lone task":
                w["tasks"].append({"id": "lone", "load": 1.0})
            else:
                w["edges"].append({"from": e0["from"], "to": "nope", "data": 1.0})
    return d


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """Shipped platforms beside an experiments folder holding the graph files the bases name."""
    root = tmp_path_factory.mktemp("fuzzruns")
    shutil.copytree(DATA / "platforms", root / "platforms")
    (root / "experiments").mkdir()
    # Kasahara STG: 4 tasks between a dummy entry 0 and exit 5
    (root / "experiments" / "g.stg").write_text("4\n0 0 0\n1 2 1 0\n2 3 1 0\n3 1 2 1 2\n4 2 1 3\n5 0 1 4\n")
    from dlbkit.families.graph.model.generate import topcuoglu10
    topcuoglu10().write(root / "experiments" / "g.json")
    return root


def _load(d: dict, workdir):
    path = workdir / "experiments" / "fuzz.toml"
    path.write_text(to_toml(d))
    try:
        with deadline():
            return load_experiment(path)
    except ConfigError as e:
        assert e.field and "\n" not in str(e)
        return None


def load_and_run(d: dict, workdir) -> str:
    """Load *d* as drawn (sizes too: the loader must refuse or bound them), then shrunk, and run the
    shrunk experiment's first runs: 'rejected' or 'ran'; anything else fails."""
    if _load(d, workdir) is None:
        return "rejected"
    d = shrink(json.loads(json.dumps(d)))
    w = d.get("workload")
    if isinstance(w, dict) and w.get("kind") == "tree" and "depth" not in w:
        w["depth"] = CAP["depth"]  # a deleted depth is the default 16: millions of tasks, a long valid run
    for b in d.get("balancers", []) if isinstance(d.get("balancers"), list) else []:
        if isinstance(b, dict) and b.get("name") == "milp" and isinstance(b.get("params", {}), dict):
            b.setdefault("params", {}).setdefault("time_limit", CAP["time_limit"])  # the default is 60 s
    experiment = _load(d, workdir)
    if experiment is None:
        return "rejected"
    for spec in experiment.expand()[:RUNS_PER_EXAMPLE]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # dlbkit's own warnings (an availability change after the end)
            warnings.simplefilter("error", RuntimeWarning)
            try:
                with deadline(RUN_S):
                    r = dlbkit.simulate(spec.platform, spec.workload, spec.balancer, params=spec.params,
                                        seed=spec.seed, engine_name=spec.engine_name, **spec.engine)
            except ConfigError as e:  # accepted on load, refused by the run: the sweep records a failure
                pytest.fail(f"{spec.label}: the loader accepted what the run refused: {e}\n{to_toml(d)}")
            except Hang:
                pytest.fail(f"{spec.label}: no result within {RUN_S} s\n{to_toml(d)}")
        assert math.isfinite(r.makespan) and r.makespan >= 0, (spec.label, r.makespan)
    return "ran"


def allowed_values(constraint) -> list:
    """Values at and near the edges of one of a balancer's parameter constraints
    (:mod:`dlbkit.params`): its options, both bools, an interval's ends, the smallest positive number
    (1e-30) and the largest magnitude (1e30), and an integer of 29 digits."""
    from dlbkit.params import Interval, Options

    if constraint is None:  # "omitted": TOML has no null
        return []
    if constraint is bool:
        return [True, False]
    if isinstance(constraint, Options):
        return sorted(constraint.values)
    if isinstance(constraint, Interval):
        lo = 0 if constraint.left is None else constraint.left
        hi = 1e30 if constraint.right is None else constraint.right
        vals = [lo, lo + 1, hi, (lo + hi) / 2, 2, 8] if constraint.right is None else [lo, hi, (lo + hi) / 2, 0.5]
        vals += [1e-30, 1e-9, 0.999] if constraint.kind is not Integral else [10**29]
        return [int(v) if constraint.kind is Integral and _num(v) else v for v in vals]
    accepts = getattr(constraint, "accepts", None)  # phase-adaptive's triples
    return [["gdem", "gdem", "none"], ["ldsv", "steal", "rid"], [1, 8, math.inf], [1, 1, 1], [1e30, 2, math.inf]] \
        if accepts else []


def param_values(name: str, key: str):
    """A value for parameter *key* of balancer *name*: one the constraint allows (9 times in 10) or a
    weird one."""
    cons = getattr(dlbkit.REGISTRY[name], "_parameter_constraints", {}).get(key, [])
    good = sorted({repr(v): v for c in cons for v in allowed_values(c)}.values(), key=repr)
    weird = st.sampled_from([math.nan, math.inf, -math.inf, 0, -1, -0.5, 0.0, 1e-300, 1e308, 10**40, 2**63 - 1,
                             "", "x", True, False, [], {}, [1, 2], ["gdem"]])
    return st.one_of(weird, *[st.sampled_from(good)] * 9) if good else weird
