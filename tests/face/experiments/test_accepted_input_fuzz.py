"""Fuzzing inputs the loader ACCEPTS: the newer families and features —
task graphs (inline, generators, .stg/.json files, the static and dynamic engines), job streams with
information models, time-stepping loops under ``balancer = "auto"``, task trees with ``[info]``,
platforms with topologies and availabilities — are mutated (types, signs, 0, NaN/inf, huge and tiny
values, empty and one-element lists, unknown names, missing keys, a graph with no edge, a disconnected
graph, a cycle, a self-loop). Each mutation is loaded as drawn (the loader must refuse or bound its
sizes, under a deadline); one the loader accepts is then shrunk to tiny sizes (one repetition, a few
items/tasks/jobs/steps) and RUN (its first runs, through :func:`dlbkit.simulate` as a sweep runs them). Each run must give a ConfigError or a finished result
with a finite makespan >= 0: never another exception (numpy's RuntimeWarnings are errors here), never
a hang (:func:`deadline`), never a ConfigError the loader should have given (a sweep records that run
as failed because of its input).

Time scales are bounded when shrinking (speeds, availability sojourns, information periods, bytes
and overheads): a valid experiment whose time scale is far finer than its run (a gossip period of
1e-9 s, Markov sojourns of 0.1 s on a run of 10^6 s) is legitimately long, not a defect of the input
checks. Derandomized; the default run takes a few seconds (at most 10 examples a property in the fast tier, 1 500 and 1 000 in the full one).
Below, one regression test per defect the fuzzing found.
"""

import json
import math
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dlbkit
from dlbkit import Platform
from dlbkit.errors import ConfigError
from dlbkit.face.experiments import load_experiment

from support.fuzz import FUZZ, deadline, mutated, to_toml
from support.fuzz_runs import (
    BASES,
    CAP,
    FLOOR,
    edged,
    load_and_run,
    param_values,
    workdir,  # noqa: F401 (fixtures)
)
from support.profiles import examples


def test_the_bases_run(workdir):
    assert {name: load_and_run(d, workdir) for name, d in BASES.items()} == {
        name: "ran" for name in BASES}


@settings(FUZZ, max_examples=examples(1500))  # halved 2026-12-03 (the full tier near 30 min on CI's 2 cores); the full profile draws fresh examples each run
@given(data=st.data(), name=st.sampled_from(sorted(BASES)), edge=st.booleans())
def test_accepted_mutations_run_to_a_finite_result(data, name, edge, workdir):
    load_and_run(data.draw(edged(BASES[name]) if edge else mutated(BASES[name])), workdir)


# --- regressions --------------------------------------------------------------------------------------
@pytest.mark.parametrize("edges, field", [
    ([5, [1, 2]], "network.topology.edges[0]"),       # a number, not a pair: was TypeError (no len())
    ([{"a": 0}, [1, 2]], "network.topology.edges[0]"),
    (5, "network.topology.edges"),                    # not a list: was TypeError (not iterable)
    ([[True, 1], [1, 2]], "network.topology.edges[0]"),  # a bool is not a node index
])
def test_topology_edges_that_are_not_pairs_are_one_config_error(edges, field):
    nodes = [{"name": x, "speed": 1.0} for x in "abc"]
    with deadline(), pytest.raises(ConfigError) as e:
        Platform.from_dict({"nodes": nodes, "network": {"topology": {"kind": "edges", "edges": edges}}})
    assert e.value.field == field and "pair" in str(e.value)


def test_a_task_tree_on_nodes_of_several_cores_is_refused_on_load(workdir):
    """The asynchronous tree engine takes one worker per node; a tree experiment on a node of 3 cores
    loaded, and then every run was recorded as failed with the engine's ConfigError."""
    d = json.loads(json.dumps(BASES["haron_torus64_info"]))
    d["platform"]["nodes"].append({"name": "big", "speed": 1.0, "cores": 3})
    d["platform"]["network"]["topology"] = "complete"  # a torus of 5 nodes is refused first
    path = workdir / "experiments" / "cores.toml"
    path.write_text(to_toml(d))
    with deadline(), pytest.raises(ConfigError) as e:
        load_experiment(path)
    assert e.value.field == "platform.nodes.cores" and "'big'" in str(e.value) and "1 for a task tree" in str(e.value)


def test_a_graph_file_is_read_from_the_experiments_folder(workdir, tmp_path, monkeypatch):
    """``[workload] file = "g.stg"`` was read from the working directory (the graph family named no
    file keys), so an experiment run from elsewhere was refused (or read another folder's graph)."""
    monkeypatch.chdir(tmp_path)  # no g.stg here
    path = workdir / "experiments" / "graph_file.toml"
    path.write_text(to_toml(BASES["graph_stg"]))
    with deadline():
        experiment = load_experiment(path)
    assert experiment.workload.n_tasks == 6 and experiment.workload.n_edges == 6  # dummy entry and exit kept
    assert load_and_run(BASES["graph_stg"], workdir) == "ran"


@pytest.mark.parametrize("f, allowed", [(5, "the path of a .json"), ([1], "the path of a .json"),
                                        ("", "the path of a .json"), ("nope.stg", "an existing .json")])
def test_a_graph_file_that_is_not_a_path_is_one_config_error(f, allowed, workdir):
    """``file = 5`` was a TypeError from pathlib; every refusal now names workload.file."""
    d = json.loads(json.dumps(BASES["graph_stg"]))
    d["workload"]["file"] = f
    path = workdir / "experiments" / "graph_file.toml"
    path.write_text(to_toml(d))
    with deadline(), pytest.raises(ConfigError) as e:
        load_experiment(path)
    assert e.value.field == "workload.file" and allowed in str(e.value)


@pytest.mark.parametrize("where", ["[info]", "balancer", "[engine]"])
@pytest.mark.parametrize("info, field, allowed", [
    ({"model": "periodic", "period": 0.5}, "info.model", "every node decides"),
    ({"model": "periodic", "period": 0.5, "centre": 99}, "parameter 'centre' of periodic", "below 4"),
    ({"model": "scatter-4.1", "period": 0.5, "inactive": [0, 9]}, "parameter 'inactive'[1] of scatter-4.1", "below 4"),
])
def test_a_stream_information_model_the_run_refuses_is_refused_on_load(where, info, field, allowed, workdir):
    """A stream under ``periodic`` (only the centre learns the loads), a centre or an inactive node
    beyond the platform: the experiment loaded and every run failed with the engine's ConfigError;
    ``[engine] info = ...`` was not checked on load at all."""
    d = json.loads(json.dumps(BASES["streams_hetero"]))
    d["platform"] = {"nodes": [{"name": "n", "count": 4, "speed": 1.0}]}
    for b in d["balancers"]:
        b.pop("info", None)
    if where == "[info]":
        d["info"], prefix = info, ""
    elif where == "balancer":
        d["balancers"][1]["info"], prefix = info, "balancers[1]."
    else:
        d["engine"]["info"], prefix = info, "engine."
    path = workdir / "experiments" / "stream_info.toml"
    path.write_text(to_toml(d))
    with deadline(), pytest.raises(ConfigError) as e:
        load_experiment(path)
    # the table that holds the model is named (a node index beyond the platform said only "parameter
    # 'centre' of periodic", the same wherever the table was)
    want = prefix + field if field.startswith("info") else f"{prefix}info ({field})"
    assert e.value.field == want and allowed in str(e.value)


def test_a_tree_information_model_centre_beyond_the_platform_is_refused_on_load(workdir):
    d = json.loads(json.dumps(BASES["haron_torus64_info"]))
    d["info"] = {"model": "periodic", "period": 5e-4, "centre": 4}  # the platform has 4 nodes: 0..3
    for b in d["balancers"]:
        b.pop("info", None)
    path = workdir / "experiments" / "tree_info.toml"
    path.write_text(to_toml(d))
    with deadline(), pytest.raises(ConfigError) as e:
        load_experiment(path)
    assert e.value.field == "info (parameter 'centre' of periodic)" and "a node index below 4" in str(e.value)


@pytest.mark.parametrize("workload, field, allowed", [
    ({"generator": "layered", "n": 10, "width": 2**63 - 1}, "workload.width", "[1, 10,000,000]"),  # was ValueError
    ({"generator": "in-tree", "k": 3}, "workload.m", "generator 'in-tree' needs m, k"),  # was TypeError
    ({"generator": "in-tree", "m": 2, "k": 2, "l": "x"}, "workload.l", "a finite number"),  # was ValueError
    ({"generator": "layered", "n": 5, "seed": -1}, "workload.seed", "an integer >= 0"),  # was ValueError
    ({"generator": "layered", "n": 5, "seed": "x"}, "workload.seed", "an integer >= 0"),  # was TypeError
    ({"generator": "fft", "points": 3}, "workload.points", "a power of 2"),  # was named "points"
    # sizes that hung (or were a MemoryError) while the experiment was read
    ({"generator": "layered", "n": 10**12}, "workload.n", "10,000,000"),
    ({"generator": "layered", "n": 10**7, "nodes": 11}, "workload.n", "100,000,000 n × nodes"),
    ({"generator": "gaussian", "m": 10**6}, "workload.m", "this one 500,000,499,999"),
    ({"generator": "fft", "points": 2**40}, "workload.points", "10,000,000 tasks"),
    ({"generator": "in-tree", "m": 1000, "k": 6}, "workload.k", "10,000,000 tasks"),
])
def test_graph_generator_keywords_are_one_config_error_naming_the_workload_key(workload, field, allowed, workdir):
    d = json.loads(json.dumps(BASES["graph_gaussian"]))
    d["workload"] = {"kind": "graph", **workload}
    path = workdir / "experiments" / "generator.toml"
    path.write_text(to_toml(d))
    with deadline(5), pytest.raises(ConfigError) as e:
        load_experiment(path)
    assert e.value.field == field and allowed in str(e.value)


@pytest.mark.parametrize("where", ["[info]", "[engine]"])
def test_an_information_model_named_by_a_list_is_one_config_error(where, workdir):
    """``model = []`` was a TypeError (unhashable type: 'list') from the model registry."""
    d = json.loads(json.dumps(BASES["streams_scatter"]))
    spec = {"model": [], "period": 0.5}
    if where == "[info]":
        d["info"] = spec
        d["engine"].pop("info")
        for b in d["balancers"]:
            b.pop("info", None)
    else:
        d["engine"]["info"] = spec
    path = workdir / "experiments" / "info_list.toml"
    path.write_text(to_toml(d))
    with deadline(), pytest.raises(ConfigError) as e:
        load_experiment(path)
    assert e.value.field == ("info.model" if where == "[info]" else "engine.info.model")
    assert "an information model: exact" in str(e.value)


@pytest.mark.parametrize("speed", [10**30, 1e-30])
def test_auto_predicts_on_workers_at_the_speed_limits(speed):
    """auto's prediction rebuilt each worker at nominal speed × the top measured/nominal ratio: a
    worker of speed 10**30 (accepted: the limit) measured a rounding faster became
    1.0000000000000009e30 and the run failed with the Node's ConfigError (found by the fuzzer on
    loop_auto)."""
    from dlbkit import CostModel, Divisible, Network, Node, Step
    from dlbkit.families.simulate import UnusedAvailabilityWarning
    from dlbkit.face.experiments.spec import run_seed

    p = Platform([Node("master"), Node("w0"), Node("w1", availability=Step(at=3.675, level=0.25)),
                  Node("w2", speed=speed), Node("w3", speed=0.25)], Network(5e-5, 1e12))
    with deadline(), warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedAvailabilityWarning)  # w1's drop falls after this short run
        r = dlbkit.simulate(p, Divisible(40, CostModel("exponential", mean=2e-4)), "auto", master="master",
                            master_computes=False, steps=3, seed=run_seed(0, 0))
    assert math.isfinite(r.makespan) and r.makespan > 0
    assert len(r.trace.meta["time_steps"]) == 3


@pytest.mark.parametrize("end", [[], {}, [1, 2]])
def test_a_graph_edge_whose_end_is_a_list_or_table_is_one_config_error(end, workdir):
    """``edges = [{from = [], to = "b"}]`` was a TypeError (unhashable type: 'list') from the task
    lookup; an end that is not a task's id (a string or an integer) is the ConfigError of any unknown id,
    named as the file has it (it said edges[0].from, not workload.edges[0].from)."""
    d = json.loads(json.dumps(BASES["graph_inline"]))
    d["workload"]["edges"][0]["from"] = end
    path = workdir / "experiments" / "edge_end.toml"
    path.write_text(to_toml(d))
    with deadline(), pytest.raises(ConfigError) as e:
        load_experiment(path)
    assert e.value.field == "workload.edges[0].from" and "the id of a task of the graph" in str(e.value)


@pytest.mark.parametrize("task, field", [({"id": "a", "load": 1.0}, "workload.tasks[1].id"),
                                         ({"id": "z", "load": -1.0}, "workload.tasks['z'].load")])
def test_a_bad_inline_graph_task_is_named_as_the_file_has_it(task, field, workdir):
    """A task the graph's constructor refuses (a repeated id, a negative load) was named
    ``tasks[1].id``, without the ``workload.`` its edges already had."""
    d = json.loads(json.dumps(BASES["graph_inline"]))
    d["workload"]["tasks"] = [d["workload"]["tasks"][0] | {"id": "a"}, task] + d["workload"]["tasks"][1:]
    d["workload"]["edges"] = []
    path = workdir / "experiments" / "task_field.toml"
    path.write_text(to_toml(d))
    with deadline(), pytest.raises(ConfigError) as e:
        load_experiment(path)
    assert e.value.field == field


# --- balancer parameters, the SPMD family, the task-tree family, the search mappers ------------------
# One balancer per drawn experiment, with its own parameters drawn from the registry's names: weird
# values (types, signs, 0, NaN/inf, huge and tiny), plausible ones, option names and lists; then, half
# the time, the rest of the experiment mutated as above. The search mappers' budgets (HiGHS's time
# limit, annealing's moves and stages, tabu's candidates) are capped when shrinking like any size.
SPMD_BASE = {
    "name": "spmd_fuzz", "seed": 4, "repetitions": 1,
    "platform": {"nodes": [{"name": "slow", "speed": 1000.0, "memory": 2500,
                            "availability": {"kind": "pulse", "start": 3, "duration": 6, "level": 0.25}},
                           {"name": "ws", "count": 2, "speed": 1000.0},
                           {"name": "odd", "speed": 2000.0, "availability": {"kind": "markov", "mean_free": 4.0,
                                                                             "mean_busy": 2.0, "low": 0.3}}],
                 "network": {"latency": 0.001, "bandwidth": 1e6, "topology": "ring"}},
    "workload": {"kind": "spmd", "points": 1000, "boundary": 10, "loops": 12, "noise": 0.1, "boundary_k": 1.0,
                 "bytes_per_point": 1.0},
    "engine": {"window": 3},
    "balancers": [{"name": "dlah"}],
}
# an explicit split, a complete network whose layout the workload picks, a step and a recorded trace
SPMD_LIST_BASE = json.loads(json.dumps(SPMD_BASE)) | {"name": "spmd_list"}
SPMD_LIST_BASE["workload"].update(points=[400, 800, 1200, 300], layout="line")
SPMD_LIST_BASE["platform"] = {
    "nodes": [{"name": "a", "speed": 500.0, "availability": {"kind": "step", "at": 4, "level": 0.5}},
              {"name": "b", "speed": 1000.0, "memory": 900,
               "availability": {"kind": "trace", "times": [0, 3, 6], "levels": [1.0, 0.2, 0.7]}},
              {"name": "c", "speed": 1500.0}, {"name": "d", "speed": 1000.0}],
    "network": {"latency": 0.01, "bandwidth": 1e4}}
TREE_BASE = {k: v for k, v in BASES["haron_torus64_info"].items() if k != "balancers"}
# the engine's options, a random tree on a ring with speeds and a drop
TREE_OPTIONS_BASE = json.loads(json.dumps(TREE_BASE)) | {
    "name": "tree_options",
    "platform": {"nodes": [{"name": "p", "count": 3, "speed": 2.0},
                           {"name": "q", "speed": 1.0, "availability": {"kind": "pulse", "start": 0.5,
                                                                        "duration": 2.0, "level": 0.3}}],
                 "network": {"latency": 0.001, "bandwidth": 1e6, "topology": "ring"}},
    "workload": {"kind": "tree", "shape": "random", "depth": 5, "fanout": 3, "grain": 0.05, "order": "bf"},
    "engine": {"start_node": 1, "task_bytes": 100, "control_bytes": 8, "backoff": [0.001, 0.01]}}
MAPPING_BASE = {k: v for k, v in BASES["graph_inline"].items() if k != "balancers"} | {"engine": {"name": "static"}}

# a generated graph (a new one per repetition), on machines of several cores, under the thesis's costs
SEARCH_LAYERED_BASE = {k: v for k, v in BASES["graph_pd_vs_heft"].items() if k != "balancers"} | {
    "name": "search_layered", "engine": {"name": "static", "cost_model": "thesis"}}
SEARCH_LAYERED_BASE["platform"] = {"nodes": [{"name": "x", "speed": 1.0, "cores": 2}, {"name": "y", "speed": 3.0}],
                                   "network": {"latency": 0.01, "bandwidth": 5.0, "topology": "chain"}}

FAMILY_BALANCERS = {
    "spmd": (SPMD_BASE, ["dlah", "homogeneous-diffusion", "processor-only", "optimal-chain", "none"]),
    "spmd_list": (SPMD_LIST_BASE, ["dlah", "homogeneous-diffusion", "processor-only", "optimal-chain", "none"]),
    "tree": (TREE_BASE, ["steal", "random", "rid", "sid", "gdem", "ldsv", "greedy", "refine", "phase-adaptive"]),
    "tree_options": (TREE_OPTIONS_BASE, ["steal", "random", "rid", "sid", "gdem", "ldsv", "greedy", "refine",
                                         "phase-adaptive"]),
    "search": (MAPPING_BASE, ["milp", "annealing", "tabu"]),
    "search_layered": (SEARCH_LAYERED_BASE, ["milp", "annealing", "tabu", "max-k1-sum", "elastic-force"]),
    "mapping": (MAPPING_BASE, ["heft", "cpop", "peft", "hlf", "elastic-force", "max-k1-sum", "linear-clustering",
                               "metis", "random-map", "round-robin", "pd", "heft-replan"]),
}


@st.composite
def with_balancer(draw, family: str) -> dict:
    base, names = FAMILY_BALANCERS[family]
    d = json.loads(json.dumps(base))
    name = draw(st.sampled_from(names))
    keys = dlbkit.REGISTRY[name].param_names() if name != "none" else []
    params = {}
    for key in draw(st.lists(st.sampled_from(keys), max_size=3, unique=True)) if keys else []:
        params[key] = draw(param_values(name, key))
    d["balancers"] = [{"name": name, "params": params}]
    if name in ("pd", "heft-replan"):  # the online mappers run on the dynamic engine only
        d["balancers"][0]["engine"] = {"name": "dynamic"}
    if draw(st.integers(0, 2)) == 0:
        d = draw(st.one_of(mutated(d), edged(d)))
    return d


@settings(FUZZ, max_examples=examples(1000))  # halved 2026-12-03 (the full tier near 30 min on CI's 2 cores); the full profile draws fresh examples each run
@given(data=st.data(), family=st.sampled_from(sorted(FAMILY_BALANCERS)))
def test_balancer_parameters_and_families_run_to_a_finite_result(data, family, workdir):
    load_and_run(data.draw(with_balancer(family)), workdir)


def _refused(d: dict, workdir) -> ConfigError:
    path = workdir / "experiments" / "refused.toml"
    path.write_text(to_toml(d))
    with deadline(), pytest.raises(ConfigError) as e:
        load_experiment(path)
    return e.value


@pytest.mark.parametrize("balancer, count, field, allowed", [
    ({"name": "ldsv", "params": {"server": 4}}, 4, "parameter 'server' of ldsv", "-1 or a node index below 4"),
    ({"name": "ldsv", "params": {"heavy": 0, "light": 1}}, 4, "parameter 'light' of ldsv", "below heavy = 0"),
    # light = heavy: the tasks went back and forth and the run hung (the fuzzer, on the tree family)
    ({"name": "ldsv", "params": {"heavy": 2, "light": 2}}, 4, "parameter 'light' of ldsv", "below heavy = 2"),
    ({"name": "ldsv", "params": {"heavy": 0}}, 4, "parameter 'light' of ldsv", "below heavy = 0"),
    ({"name": "ldsv"}, 1, "nodes for ldsv", "at least 2 (one LIS and one worker)"),
    # inside phase-adaptive, each phase's balancer is checked against the node count
    ({"name": "phase-adaptive", "params": {"balancers": ["ldsv", "gdem", "none"]}}, 1, "nodes for ldsv",
     "at least 2"),
])
def test_ldsv_parameters_the_run_refused_are_refused_on_load(balancer, count, field, allowed, workdir):
    """A Loadserver whose LIS is beyond the platform's nodes, whose light threshold is above its heavy
    one, or on one node: the experiment loaded and every run failed with the balancer's ConfigError;
    with light = heavy every run hung (both found by the fuzzer on the tree family)."""
    d = json.loads(json.dumps(TREE_BASE))
    d["balancers"] = [balancer]
    d["platform"]["nodes"][0]["count"] = count
    d["platform"]["network"]["topology"] = "complete"
    e = _refused(d, workdir)
    assert e.field == f"balancers[0].params ({field})" and allowed in str(e)


def test_phase_adaptive_work_detector_with_an_endless_phase_two_is_refused_on_load(workdir):
    d = json.loads(json.dumps(TREE_BASE))
    d["balancers"] = [{"name": "phase-adaptive", "params": {"detector": "work", "intervals": [1, math.inf, 1]}}]
    e = _refused(d, workdir)
    assert e.field == "balancers[0].params (parameter 'intervals'[1] of phase-adaptive)" and "finite" in str(e)


def test_max_k1_sum_capacity_below_tasks_per_processor_is_refused_on_load(workdir):
    """capacity = 1 on 3 processors for 4 tasks: the run refused it (every task needs a slot) after
    the experiment had loaded."""
    d = json.loads(json.dumps(MAPPING_BASE))
    d["balancers"] = [{"name": "max-k1-sum", "params": {"capacity": 1}}]
    e = _refused(d, workdir)
    assert e.field == "balancers[0].params (parameter 'capacity' of max-k1-sum)" and "n/m = 4/3" in str(e)
    d["balancers"][0]["params"]["capacity"] = 2  # 2 × 3 ≥ 4
    assert load_and_run(d, workdir) == "ran"


def test_annealing_cooled_to_zero_keeps_only_improving_moves(workdir):
    """t0 = 1e-30 cooled by 1e-30 is 0 after one stage: -d / t was a ZeroDivisionError."""
    d = json.loads(json.dumps(MAPPING_BASE))
    d["balancers"] = [{"name": "annealing", "params": {"t0": 1e-30, "cooling": 1e-30, "patience": 20,
                                                        "max_stages": 20}}]
    assert load_and_run(d, workdir) == "ran"


@pytest.mark.parametrize("start_node, server", [(None, 0), (2, 2), (3, -1)])
def test_ldsv_server_on_the_root_node_is_refused_on_load(start_node, server, workdir):
    """The Loadserver's LIS computes nothing, so the root may not start there: ``server = 0`` (the
    engine's default start_node) loaded, and every run failed with the engine's ConfigError."""
    d = json.loads(json.dumps(TREE_BASE))
    d["balancers"] = [{"name": "ldsv", "params": {"server": server}}]
    if start_node is not None:
        d["engine"] = {"start_node": start_node}
    e = _refused(d, workdir)
    assert e.field == "balancers[0].params (parameter 'server' of ldsv)"
    assert f"a node other than start_node {start_node or 0}" in str(e)
    d["balancers"][0]["params"]["server"] = 1
    assert load_and_run(d, workdir) == "ran"


@pytest.mark.parametrize("params", [-1.5, "x", [1]])
def test_params_of_none_that_are_not_a_table_are_one_config_error(params, workdir):
    """``{name = "none", params = -1.5}``: dict(-1.5) was a TypeError (float is not iterable)."""
    d = json.loads(json.dumps(SPMD_BASE))
    d["balancers"] = [{"name": "none", "params": params}]
    e = _refused(d, workdir)
    assert e.field == "balancers[0].params" and "none for 'none'" in str(e)


def test_max_k1_sum_capacity_beyond_the_graph_limit_is_refused_on_load(workdir):
    """capacity = 10**29 (within the parameter's 1e30): the padded graph of m × capacity null tasks
    was an OverflowError (cannot fit 'int' into an index-sized integer) in the run."""
    d = json.loads(json.dumps(MAPPING_BASE))
    d["balancers"] = [{"name": "max-k1-sum", "params": {"capacity": 10**29}}]
    e = _refused(d, workdir)
    assert e.field == "balancers[0].params (parameter 'capacity' of max-k1-sum)"
    assert "at most 3,333,333 on 3 processors" in str(e) and "10,000,000" in str(e)


@pytest.mark.parametrize("bcoeff, allowed", [(1.99, "at least n/2 = 4/2 for the relaxed model"),
                                             (1e25, "a number in the range (0, 1e+19]")])
def test_milp_relaxed_bcoeff_the_solver_cannot_use_is_refused_on_load(bcoeff, allowed, workdir):
    """Below n/2 the relaxed objective C·Σy − Σw is unbounded (each w_ij ≤ y_j / 2), and from 1e20 on
    HiGHS reads the cost as infinite: both loaded, and the run failed blaming time_limit."""
    d = json.loads(json.dumps(MAPPING_BASE))
    d["balancers"] = [{"name": "milp", "params": {"model": "relaxed", "bcoeff": bcoeff, "time_limit": 5}}]
    e = _refused(d, workdir)
    assert e.field == "balancers[0].params (parameter 'bcoeff' of milp)" and allowed in str(e)
    d["balancers"][0]["params"]["bcoeff"] = 2.0  # n/2 itself: bounded
    assert load_and_run(d, workdir) == "ran"


@pytest.mark.parametrize("family", sorted(FAMILY_BALANCERS))
def test_the_family_bases_run_with_each_balancer(family, workdir):
    base, names = FAMILY_BALANCERS[family]
    got = {}
    for name in names:
        d = json.loads(json.dumps(base))
        d["balancers"] = [{"name": name, **({"engine": {"name": "dynamic"}} if name in ("pd", "heft-replan") else {})}]
        got[name] = load_and_run(d, workdir)
    assert got == {name: "ran" for name in names}


def test_ldsv_with_light_one_below_heavy_runs(workdir):
    """The nearest thresholds allowed (light = heavy - 1) finish: the hang needs light = heavy."""
    d = json.loads(json.dumps(TREE_OPTIONS_BASE))
    d["balancers"] = [{"name": "ldsv", "params": {"heavy": 2, "light": 1}}]
    assert load_and_run(d, workdir) == "ran"


def test_a_polling_tree_balancer_on_instant_messages_is_refused_on_load(workdir):
    """latency 0 and control_bytes 0: the engine refuses a balancer that asks or orders (it would poll
    forever at one instant), but the experiment loaded, and every run failed."""
    d = json.loads(json.dumps(TREE_OPTIONS_BASE))
    d["platform"]["network"]["latency"] = 0
    d["engine"]["control_bytes"] = 0
    d["balancers"] = [{"name": "refine"}]
    e = _refused(d, workdir)
    assert e.field == "platform.network.latency" and "engine.control_bytes > 0) for refine" in str(e)
    d["balancers"] = [{"name": "steal"}]  # receiver-initiated: asks when idle
    assert _refused(d, workdir).field == "platform.network.latency"
    d["balancers"] = [{"name": "random"}]  # sender-initiated only: never polls, so instant messages do
    assert load_and_run(d, workdir) == "ran"
    d["balancers"], d["engine"]["control_bytes"] = [{"name": "refine"}], 8
    assert load_and_run(d, workdir) == "ran"


@pytest.mark.parametrize("points, shown", [([400, 800, 2**63 - 1, 300], "9,223,372,036,854,777,307 DP in all"),
                                           ([10**30, 1, 1, 1], "DP in all"),
                                           (3 * 10**13, "120,000,000,000,000 DP in all (× 4 nodes)")])
def test_an_spmd_domain_beyond_10_to_the_14_points_is_refused_on_load(points, shown, workdir):
    """A split of 2**63 - 1 points on one node: the run failed with numpy's overflow in the engine
    (10**30: OverflowError, Python int too large to convert to C long); at 2**60 in all
    optimal-chain's targets no longer summed to the domain, and at 2**53 its repair step (1e-9 × DP
    single steps) took over 10 s a call. Found by the fuzzer on SPMD."""
    d = json.loads(json.dumps(SPMD_LIST_BASE))
    d["workload"]["points"] = points
    d["balancers"] = [{"name": "homogeneous-diffusion"}]
    e = _refused(d, workdir)
    assert e.field == "workload.points" and "at most 100,000,000,000,000 DP" in str(e) and shown in str(e.value)
    d["workload"]["points"] = [10**14 - 2300, 800, 1200, 300]  # the limit itself runs, every balancer
    for name in FAMILY_BALANCERS["spmd"][1]:
        d["balancers"] = [{"name": name}]
        assert load_and_run(d, workdir) == "ran"
