"""The same seed gives a balancer the same random stream in a real run as in its family's simulator
(:mod:`dlbkit.model.seeding`: a real run derives its streams with its simulator's layout and names).

A spy subclass of each randomised balancer records, at every ``start``, the first draws of the
Generator it is handed (from a copy: the balancer's own draws are untouched) and the SeedSequence
under it. A tiny real local run and a simulation with the same seed are compared: a balancer of the
coordinator gets the simulator's very stream; one per process (a tree's workers, a cluster's nodes,
where the simulator has one balancer for every node) gets child *w* of it. Starts on other
generators (a balancer checked before a run, on ``default_rng(0)``) are not the run's and are
left out by the seed's entropy. Spies in worker processes append to a file.
"""

from __future__ import annotations

import copy
import inspect
import json
import operator
import os
import re

import numpy as np
import pytest

import dlbkit
from dlbkit.balancers.registry import REGISTRY

SEED = 20240611  # not 0: a check's default_rng(0) is told apart by its entropy
WORKERS = 2
PLATFORM = dlbkit.Platform([dlbkit.Node("m"), dlbkit.Node("a"), dlbkit.Node("b", speed=2.0)])

#: the balancers whose decisions draw from the engine's Generator, by kind (the family they run in);
#: auto and phase-adaptive hand theirs to the rules they delegate to
RANDOMISED = {
    "chunking": ["rnd", "auto"],
    "migration": ["steal", "random", "ldsv", "phase-adaptive"],
    "mapping": ["random-map", "metis", "annealing", "tabu"],
    "placement": ["batch-sampling", "hybrid-batch", "jiq", "jsq", "nezha", "power-of-d", "random-place", "speed-d",
                  "spillback"],
}


def first_draws(rng: np.random.Generator) -> list:
    g = copy.deepcopy(rng)
    return g.integers(0, 2**62, size=4).tolist() + g.random(2).tolist()


def spy(name: str, log) -> dlbkit.balancers.base.Balancer:
    """Balancer *name* (registered) as a spy whose every ``start`` appends a record to *log*."""
    cls = REGISTRY[name]

    def start(self, view, rng=None):
        seq = rng.bit_generator.seed_seq
        record = {"pid": os.getpid(), "node": getattr(view, "node", None), "entropy": seq.entropy,
                  "spawn_key": list(seq.spawn_key), "draws": first_draws(rng)}
        with open(type(self).log, "a") as f:
            f.write(json.dumps(record) + "\n")
        cls.start(self, view, rng)

    spied = type(f"Spy{cls.__name__}", (cls,), {"start": start, "log": str(log)})
    return spied()


def records(log, *, here: bool | None = None) -> list[dict]:
    """The run's starts from *log* (those on the seed's streams); *here*: only this process's (True)
    or only the workers' (False)."""
    if not os.path.exists(log):
        return []
    with open(log) as f:
        rows = [json.loads(line) for line in f]
    os.remove(log)
    rows = [r for r in rows if r["entropy"] == SEED]
    if here is not None:
        rows = [r for r in rows if (r["pid"] == os.getpid()) == here]
    return rows


def child_draws(parent: dict, n: int) -> list[list]:
    """The first draws of children 0 … n−1 of the SeedSequence recorded in *parent*."""
    seq = np.random.SeedSequence(parent["entropy"], spawn_key=tuple(parent["spawn_key"]))
    return [first_draws(np.random.default_rng(c)) for c in seq.spawn(n)]


def simulated(balancer, workload, **engine) -> dict:
    """The one start of the simulator's run with the seed (its balancer stream)."""
    dlbkit.simulate(PLATFORM, workload, balancer, seed=SEED, **engine)
    got = records(balancer.log)
    assert len(got) >= 1 and all(r["draws"] == got[0]["draws"] for r in got)  # a restart starts the stream again
    return got[0]


def test_every_randomised_balancer_is_checked():
    """A balancer whose own code (or a base class's, below the kinds' common bases) reads ``rng_`` or
    ``draws_`` is listed in RANDOMISED, so a new randomised rule cannot skip the check."""
    found = set()
    for name, cls in REGISTRY.items():
        for c in cls.__mro__:
            if not c.__module__.startswith("dlbkit.balancers.") or c.__module__ == "dlbkit.balancers.base":
                continue
            code = [ln for ln in inspect.getsource(c).splitlines() if not re.search(r"self\.(rng_|draws_)\s*=", ln)]
            if any(re.search(r"\b(rng_|draws_)\b", ln) for ln in code):
                found.add((cls.kind, name))
    listed = {(kind, n) for kind, ns in RANDOMISED.items() for n in ns}
    assert found <= listed, sorted(found - listed)
    assert all(REGISTRY[n].kind == kind for kind, n in listed)


# --- one balancer in the coordinator: the simulator's stream itself ----------------------------------
def inc(x):
    return x + 1


@pytest.mark.parametrize("name", RANDOMISED["chunking"])
def test_a_chunking_balancer_draws_alike_in_map_loop_and_the_divisible_simulator(name, tmp_path):
    b = spy(name, tmp_path / "log")
    sim = simulated(b, dlbkit.Divisible(60))
    dlbkit.run_map(inc, range(60), balancer=b, workers=WORKERS, seed=SEED)
    real = records(b.log)
    with dlbkit.Loop(inc, balancer=b, workers=WORKERS, seed=SEED) as loop:
        loop.run(range(60))
    stepped = records(b.log)
    assert [r["draws"] for r in real] == [sim["draws"]]
    assert [r["draws"] for r in stepped][:1] == [sim["draws"]]


def _tasks() -> dict:
    return {"a": (operator.add, 1, 2), "b": (operator.mul, "a", 10), "c": (operator.sub, "a", 1),
            "d": (operator.add, "b", "c"), "e": (abs, -3), "f": (operator.add, "d", "e")}


@pytest.mark.parametrize("name", RANDOMISED["mapping"])
def test_a_mapping_balancer_draws_alike_in_graph_and_the_graph_simulator(name, tmp_path):
    b = spy(name, tmp_path / "log")
    g = dlbkit.TaskGraph(["a", "b", "c", "d", "e", "f"], loads=[1, 2, 1, 3, 1, 1],
                         edges=[("a", "b", 1), ("a", "c", 1), ("b", "d", 1), ("c", "d", 1), ("d", "f", 1),
                                ("e", "f", 1)])
    sim = simulated(b, g)
    r = dlbkit.run_graph(_tasks(), balancer=b, workers=WORKERS, seed=SEED)
    assert r.results["f"] == 35
    assert [x["draws"] for x in records(b.log)] == [sim["draws"]]


def smooth(u):
    return (u[:-2] + u[1:-1] + u[2:]) / 3.0


def test_a_repartition_balancer_is_handed_the_spmd_simulators_stream(tmp_path):
    """No repartition rule draws yet; the stream it would draw from is the simulator's all the same."""
    b = spy("dlah", tmp_path / "log")
    sim = simulated(b, dlbkit.Spmd(points=200, loops=10, boundary=10), window=5)
    dlbkit.run_spmd(smooth, np.linspace(0.0, 1.0, 42), iterations=10, window=5, workers=WORKERS, balancer=b,
                    seed=SEED)
    assert [x["draws"] for x in records(b.log)] == [sim["draws"]]


# --- one balancer per process: child w of the simulator's stream ---------------------------------------
def binary(n):
    return ([n - 1, n - 1] if n > 0 else []), 1


@pytest.mark.parametrize("name", RANDOMISED["migration"])
def test_a_migration_balancer_draws_alike_in_tree_and_the_tree_simulator(name, tmp_path):
    b = spy(name, tmp_path / "log")
    sim = simulated(b, dlbkit.TaskTree("balanced", depth=5))
    r = dlbkit.run_tree(binary, 6, balancer=b, workers=WORKERS, seed=SEED)
    assert r.value == 2**7 - 1
    log = b.log
    rows = records(log, here=None)
    coordinator = [x for x in rows if x["pid"] == os.getpid()]
    workers = sorted((x for x in rows if x["pid"] != os.getpid()), key=lambda x: x["node"])
    assert [x["draws"] for x in coordinator] == [sim["draws"]]  # central rules draw as in the simulator
    assert [x["node"] for x in workers] == list(range(WORKERS))
    assert [x["draws"] for x in workers] == child_draws(sim, WORKERS)


def job(x):
    return x * 2


@pytest.mark.parametrize("name", RANDOMISED["placement"])
def test_a_placement_balancer_draws_alike_in_the_cluster_and_the_stream_simulator(name, tmp_path):
    b = spy(name, tmp_path / "log")
    sim = simulated(b, dlbkit.Stream(rates=0.5, jobs=20))
    with dlbkit.Cluster(WORKERS, balancer=b, seed=SEED) as c:
        assert [f.result(timeout=60) for f in [c.submit(job, i) for i in range(4)]] == [0, 2, 4, 6]
    nodes = {}
    for x in records(b.log, here=False):
        nodes.setdefault(x["node"], x)  # a node's first start (a view change starts it again)
    assert sorted(nodes) == list(range(WORKERS))
    assert [nodes[w]["draws"] for w in range(WORKERS)] == child_draws(sim, WORKERS)


# --- an emulated platform's availability: the simulator's "availability" stream --------------------------
def _markov(name: str) -> dlbkit.Node:
    return dlbkit.Node(name, availability=dlbkit.Markov(mean_free=0.05, mean_busy=0.03, low=0.5))


MARKOV = dlbkit.Platform([_markov("a"), _markov("b")])


def first_sojourns(availability) -> list[float]:
    """When each node's first sojourn ends: drawn in node order as the availability is realised (a
    Markov trajectory draws the rest on demand, from a generator its nodes share, so only the first
    sojourns do not depend on the order the run asks for them)."""
    return [pw.times[1] for pw in availability]


def _cluster_availability():
    with dlbkit.Cluster(2, emulate=MARKOV, seed=SEED) as c:
        assert c.submit(job, 1).result(timeout=60) == 2
    return c._run.program.emulation.availability


REAL_AVAILABILITY = {  # the family's real run with the platform emulated, and its simulation
    "tree": (lambda: dlbkit.run_tree(binary, 4, workers=2, emulate=MARKOV, seed=SEED).trace.availability,
             lambda: dlbkit.simulate(MARKOV, dlbkit.TaskTree("balanced", depth=4), "steal", seed=SEED)),
    "map": (lambda: dlbkit.run_map(inc, range(20), emulate=MARKOV, master="a", seed=SEED).trace.availability,
            lambda: dlbkit.simulate(MARKOV, dlbkit.Divisible(20), "gss", seed=SEED)),  # the master: node a
    "graph": (lambda: dlbkit.run_graph(_tasks(), workers=2, emulate=MARKOV, balancer="heft",
                                       seed=SEED).trace.availability,
              lambda: dlbkit.simulate(MARKOV, dlbkit.TaskGraph(["a", "b"], loads=[1, 2], edges=[("a", "b", 1)]),
                                      "heft", seed=SEED)),
    "cluster": (_cluster_availability, lambda: dlbkit.simulate(MARKOV, dlbkit.Stream(rates=0.5, jobs=10), "jsq",
                                                               seed=SEED)),
}


@pytest.mark.parametrize("family", sorted(REAL_AVAILABILITY))
def test_an_emulated_platform_draws_the_availability_its_simulator_draws(family):
    real, simulate = REAL_AVAILABILITY[family]
    sim = first_sojourns(simulate().trace.availability)
    assert len(sim) >= 1 and first_sojourns(real()) == sim
