"""Runs whose length over a user's time scale would be a hang: cheap where the work can be, otherwise
stopped by a named per-run limit with a ConfigError naming the field (docs/experiments.md, "Limits").

The limits are monkeypatched small so that each case ends at once; what is asserted is the field and
the words of the error, never a time."""

import tomllib

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dlbkit
import dlbkit.info.base as info_base
import dlbkit.model.availability as availability
from dlbkit import ConfigError, Markov, Platform, Pulse, TaskTree, make
from dlbkit.face.cli import main
from dlbkit.face.experiments import Experiment, run_sweep
from dlbkit.model import Node
from dlbkit.model.availability import Piecewise
from dlbkit.families.stream.model.workload import Stream
from dlbkit.families.divisible.model.workload import CostModel, Divisible
from dlbkit.families.tree.sim import engine as tree_async
from dlbkit.families.stream.sim.engine import simulate_stream
from dlbkit.families.tree.sim.engine import simulate_tree_async

from support.profiles import examples

TORUS = {"nodes": [{"name": "pe", "count": 16, "speed": 5.8e6}],
         "network": {"latency": 8.6e-6, "bandwidth": 1e8, "topology": "torus"}}
TREE = TaskTree("imbalance", imbalance=0.2, depth=12, fanout=2, grain=1000, seed=3)


# --- the Markov availability: drawn in blocks, the same trajectory and the same random stream ------

def reference_markov(spec: Markov, rng: np.random.Generator) -> Piecewise:
    """The sojourn-by-sojourn trajectory, as Markov.realise drew it before blocks (one
    ``rng.exponential(mean)`` per sojourn, pulled lazily)."""
    def gen():
        t, busy = 0.0, spec.start_busy
        while True:
            yield (t, spec.low if busy else spec.high)
            t += float(rng.exponential(spec.mean_busy if busy else spec.mean_free))
            busy = not busy
    return Piecewise(gen())


def same_queries(spec, seed, queries, n_nodes=3):
    """*n_nodes* trajectories sharing one Generator (as every engine's nodes share theirs), asked the
    same questions in the same order by the reference and by realise: the same answers, segments and
    Generator state afterwards."""
    r_ref, r_new = np.random.default_rng(seed), np.random.default_rng(seed)
    ref = [reference_markov(spec, r_ref) for _ in range(n_nodes)]
    new = [spec.realise(r_new) for _ in range(n_nodes)]
    for node, kind, t in queries:
        a, b = ref[node % n_nodes], new[node % n_nodes]
        if kind == 0:
            assert a.capacity(t) == b.capacity(t)
        elif kind == 1:
            assert a.finish(t, 0.5 * t + 1e-3) == b.finish(t, 0.5 * t + 1e-3)
        else:
            assert a.level(t) == b.level(t)
    for a, b in zip(ref, new):
        assert (a.times, a.levels, a.cum) == (b.times, b.levels, b.cum)
    assert r_ref.bit_generator.state == r_new.bit_generator.state


@settings(max_examples=examples(40), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), free=st.floats(0.01, 10), busy=st.floats(0.01, 10),
       low=st.floats(0.05, 1.0), start_busy=st.booleans(),
       queries=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 2), st.floats(0, 5e3)), min_size=1, max_size=30))
def test_markov_blocks_give_the_sojourn_by_sojourn_trajectory(seed, free, busy, low, start_busy, queries):
    same_queries(Markov(free, busy, low, start_busy=start_busy), seed, queries)


@pytest.mark.parametrize("block, short", [(1, 0), (2, 1), (7, 3), (64, 16)])
def test_markov_blocks_rewind_to_what_they_used_at_any_block_size(monkeypatch, block, short):
    """Small blocks: many block ends and rewinds, in both kinds of extension (time and capacity)."""
    monkeypatch.setattr(availability, "_BLOCK", block)
    monkeypatch.setattr(availability, "_SHORT", short)
    rq = np.random.default_rng(11)
    queries = [(int(rq.integers(4)), int(rq.integers(3)), float(rq.exponential(10.0 ** rq.integers(-1, 3))))
               for _ in range(200)]
    for seed in (0, 1, 2, 3):
        same_queries(Markov(0.3, 1.7, 0.25, 0.9, start_busy=bool(seed % 2)), seed, queries, n_nodes=4)


def test_a_long_markov_extension_is_drawn_in_blocks_with_the_reference_result():
    """10^5 sojourns at once (one query far ahead): the same segments and stream as one by one."""
    same_queries(Markov(0.1, 0.1, 0.5), 7, [(0, 0, 1e4), (1, 1, 5e3), (0, 2, 2e4)], n_nodes=2)


# --- availabilities: past MAX_SEGMENTS the run stops naming the time scale ---------------------------

def test_a_markov_load_too_fine_for_the_run_names_its_sojourn(monkeypatch):
    monkeypatch.setattr(availability, "MAX_SEGMENTS", 1000)
    spec = Markov(mean_free=0.1, mean_busy=0.5, low=0.5)
    with pytest.raises(ConfigError) as e:
        spec.realise(np.random.default_rng(0), "node 'a'.availability").capacity(1e6)
    assert e.value.field == "node 'a'.availability.mean_free" and e.value.value == 0.1
    assert "at most 1,000 changes of level" in str(e.value) and "a coarser time scale or a shorter run" in str(e.value)
    p = Markov(mean_free=3.0, mean_busy=0.2, low=0.5).realise(np.random.default_rng(0))
    with pytest.raises(ConfigError, match=r"^availability\.mean_busy must be a mean sojourn"):
        p.finish(0.0, 1e6)  # the capacity route (finish) is bounded too


def test_a_repeating_pulse_too_fine_for_the_run_names_its_period(monkeypatch):
    monkeypatch.setattr(availability, "MAX_SEGMENTS", 1000)
    p = Pulse(start=0.0, duration=1e-9, level=0.5, period=2e-9).realise(None, "node 'b'.availability")
    with pytest.raises(ConfigError) as e:
        p.capacity(1.0)
    assert e.value.field == "node 'b'.availability.period" and "at most 1,000 changes of level" in str(e.value)


def test_a_simulated_run_on_a_too_fine_markov_node_names_the_node(monkeypatch):
    """The hang case: sojourns of 0.1 s on a run of ~10^6 s (one node computes alone)."""
    monkeypatch.setattr(availability, "MAX_SEGMENTS", 2000)
    p = Platform([Node("fast", 1.0), Node("flaky", 1.0, availability=Markov(0.1, 0.1, 0.5))])
    with pytest.raises(ConfigError) as e:
        dlbkit.simulate(p, Divisible(2, CostModel("constant", value=1e6)), "static", seed=1)
    assert e.value.field == "node 'flaky'.availability.mean_free"


# --- information rounds: past MAX_SIM_ROUNDS the run stops naming the period ------------------------

def test_a_tree_run_with_a_tiny_information_period_names_the_period(monkeypatch):
    monkeypatch.setattr(info_base, "MAX_SIM_ROUNDS", 500)
    with pytest.raises(ConfigError) as e:
        dlbkit.simulate(Platform.from_dict(TORUS), TREE, "rid", seed=1, info={"model": "periodic", "period": 1e-9})
    assert e.value.field == "info.period" and e.value.value == 1e-9
    assert "at most 500 information rounds" in str(e.value) and "periodic's rounds" in str(e.value)
    # at the limit itself a run is fine: this one holds 628 rounds (one fewer allowed stops it)
    monkeypatch.setattr(info_base, "MAX_SIM_ROUNDS", 627)
    with pytest.raises(ConfigError, match="at most 627 information rounds"):
        dlbkit.simulate(Platform.from_dict(TORUS), TREE, "rid", seed=1, info={"model": "periodic", "period": 5e-4})
    monkeypatch.setattr(info_base, "MAX_SIM_ROUNDS", 628)
    r = dlbkit.simulate(Platform.from_dict(TORUS), TREE, "rid", seed=1, info={"model": "periodic", "period": 5e-4})
    assert r.trace.meta["info"]["rounds"] == 628


def test_a_stream_run_with_a_tiny_gossip_period_is_refused_before_its_rounds(monkeypatch):
    """A stream's rounds run until its last arrival, known before the first round: a period that makes
    more rounds than the limit is refused then (a gossip period of 1e-9 ran 157 s before the budget error)."""
    monkeypatch.setattr(info_base, "MAX_SIM_ROUNDS", 300)
    p = Platform([Node(f"n{i}", 1.0) for i in range(4)])
    rounds = []
    monkeypatch.setattr(info_base.InfoModel, "round", lambda self, t, loads: rounds.append(t) or [])
    with pytest.raises(ConfigError) as e:
        simulate_stream(p, Stream(rates=0.5, jobs=50), make("power-of-d"), seed=1, samples=0,
                        info={"model": "gossip", "period": 1e-6})
    assert e.value.field == "info.period" and e.value.value == 1e-6 and rounds == []
    got = re.search(r"the jobs arrive over ([\d.]+) s, ([\d,]+) rounds at this period", str(e.value))
    span, n = float(got.group(1)), int(got.group(2).replace(",", ""))
    assert n == pytest.approx(span / 1e-6, rel=1e-5)  # the span is printed to 6 digits
    assert "at most 300 information rounds" in str(e.value)
    # 1e9 jobs at 1e-9 s of gossip, the case at full size, is refused at once as well
    monkeypatch.setattr(info_base, "MAX_SIM_ROUNDS", 1_000_000)
    with pytest.raises(ConfigError, match="info.period must be a period long enough"):
        simulate_stream(p, Stream(rates=0.5, jobs=2000), make("power-of-d"), seed=1, samples=0,
                        info={"model": "gossip", "period": 1e-9})
    assert rounds == []


def _slow_job(x):
    import time
    time.sleep(0.02)
    return x


def test_a_real_cluster_has_no_round_or_availability_limit(monkeypatch):
    """The limits are the simulated engines': a real dlbkit.Cluster is paced by the clock, and one that
    has run long must not fail. Its information rounds (every 5 ms) and its emulated Markov node (5 ms
    sojourns) pass limits set far below what the run makes (the emulation raised ConfigError naming
    mean_free, speaking of 'simulated time', in every job placed on that node)."""
    monkeypatch.setattr(info_base, "MAX_SIM_ROUNDS", 2)
    monkeypatch.setattr(availability, "MAX_SEGMENTS", 5)
    p = Platform([Node("a", 1.0, availability=Markov(0.005, 0.005, 0.5)), Node("b", 1.0)])
    with dlbkit.Cluster(2, emulate=p, info={"model": "gossip", "period": 0.005}, start_method="fork") as c:
        assert [f.result(timeout=120) for f in [c.submit(_slow_job, i) for i in range(30)]] == list(range(30))
    # and the simulated ones do stop (the same spec, the same limits)
    with pytest.raises(ConfigError, match="mean_free"):
        p.realise_availability(np.random.default_rng(0))[0].capacity(1.0)


def test_a_limit_allows_exactly_max_segments_changes_of_level(monkeypatch):
    """MAX_SEGMENTS counts changes of level (as the message says): that many are made, one more is not;
    sojourn by sojourn and in blocks alike."""
    monkeypatch.setattr(availability, "MAX_SEGMENTS", 40)
    for t in (2.0, 1e9):  # a short extension (one by one), a long one (blocks)
        pw = Markov(0.01, 0.01, 0.5).realise(np.random.default_rng(3), "x")
        with pytest.raises(ConfigError, match="at most 40 changes of level"):
            while True:
                pw.level(pw.times[-1] if t == 2.0 else t)
        assert len(pw.times) == 41
    pw = Pulse(start=0.0, duration=1.0, level=0.5, period=2.0).realise(None, "y")
    with pytest.raises(ConfigError, match="y.period"):
        pw.level(1e9)
    assert len(pw.times) == 41
    assert Pulse(start=0.0, duration=1.0, level=0.5, period=2.0).realise(None).unbounded().level(99.5) == 1.0


# --- the sweep keeps the other runs; the CLI says one line -------------------------------------------

SWEEP = """
name = "fine"
repetitions = 1
seed = 3
[platform]
nodes = [{name = "n", count = 9, speed = 1e6}]
network = {latency = 2e-5, bandwidth = 1e8, topology = "torus"}
[workload]
kind = "tree"
shape = "imbalance"
imbalance = 0.2
depth = 10
grain = 1000
[[balancers]]
name = "rid"
label = "coarse"
info = {model = "gossip", period = 1e-3}
[[balancers]]
name = "rid"
label = "fine"
info = {model = "gossip", period = 1e-9}
"""


def test_a_sweep_records_the_run_over_budget_and_keeps_the_others(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(info_base, "MAX_SIM_ROUNDS", 2000)
    sweep = run_sweep(Experiment.from_dict(tomllib.loads(SWEEP)), tmp_path)
    status = {r["label"]: (r["status"], r["error"]) for r in sweep.rows}
    assert status["coarse"] == ("ok", "")
    assert status["fine"][0] == "error" and "info.period must be a period long enough" in status["fine"][1]
    # and the command line lists it on one line, exit status 1 as for any failed run of a sweep
    f = tmp_path / "fine.toml"
    f.write_text(SWEEP)
    rc = main(["simulate", str(f), "--out", str(tmp_path / "out2"), "--no-progress"])
    out = capsys.readouterr().out
    assert rc == 1 and "1 failed" in out
    line = [x for x in out.splitlines() if x.startswith("  fine repetition 0: ")]
    assert len(line) == 1 and "info.period must be a period long enough" in line[0]


def test_the_cli_prints_one_line_and_exits_2(tmp_path, monkeypatch, capsys):
    """`dlbkit schedule` runs one simulation: a platform node too fine for the run is one line, exit 2."""
    monkeypatch.setattr(availability, "MAX_SEGMENTS", 100)
    plat = tmp_path / "p.toml"
    plat.write_text('[[nodes]]\nname = "a"\nspeed = 1.0\n'
                    '[[nodes]]\nname = "b"\nspeed = 1.0\navailability = {kind = "markov", mean_free = 0.01, '
                    'mean_busy = 0.01, low = 0.5}\n')
    graph = tmp_path / "g.json"
    graph.write_text('{"tasks": [{"id": "a", "load": 1e6}, {"id": "b", "load": 1e6}], "edges": []}')
    rc = main(["schedule", str(graph), "--platform", str(plat), "--balancer", "round-robin"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and err.startswith("dlbkit: error: ")
    assert "node 'b'.availability.mean_free must be a mean sojourn" in err


# --- idle nodes' requests for work: past the message budget the run stops naming the back-off -------

HETERO = {"nodes": [{"name": "fast", "speed": 1e6}, {"name": "slow", "speed": 1.0}],
          "network": {"latency": 1e-5, "bandwidth": 1e8}}
SMALL_TREE = TaskTree("imbalance", imbalance=0.2, depth=8, fanout=2, grain=1000, seed=3)


@pytest.mark.parametrize("fast", [False, True])
def test_idle_nodes_polling_a_slow_node_stop_at_the_message_budget(monkeypatch, fast):
    """The hang case: the slow node holds a task for ~1000 s while the fast one asks it every back-off
    (auto: a sixteenth of the mean task at the mean speed, ~1e-4 s): ~10^7 requests. Both loops stop."""
    monkeypatch.setattr(tree_async, "MAX_MESSAGES", 10_000)
    with pytest.raises(ConfigError) as e:
        simulate_tree_async(Platform.from_dict(HETERO), SMALL_TREE, make("steal"), seed=1, task_bytes=0,
                            fast_path=fast)
    assert e.value.field == "backoff" and e.value.value[0] > 0
    assert "within 10,000 messages plus 100 per node and completed task" in str(e.value)


@pytest.mark.parametrize("fast", [False, True])
def test_a_run_within_the_message_budget_is_unchanged(monkeypatch, fast):
    """A node 1000 times slower: ~10^5 messages, a run as before; with the limit at what it sends it
    still runs, the same trace; at half of it, it stops."""
    p = dict(HETERO, nodes=[HETERO["nodes"][0], {"name": "slow", "speed": 1e3}])
    kw = dict(seed=1, task_bytes=0, fast_path=fast)
    before = simulate_tree_async(Platform.from_dict(p), SMALL_TREE, make("steal"), **kw)
    floor = before.messages  # completed tasks add to it
    monkeypatch.setattr(tree_async, "MAX_MESSAGES", floor)
    monkeypatch.setattr(tree_async, "MAX_MESSAGES_PER_NODE_TASK", 0)
    after = simulate_tree_async(Platform.from_dict(p), SMALL_TREE, make("steal"), **kw)
    assert (list(after.t_end), after.messages, after.events) == (list(before.t_end), before.messages, before.events)
    monkeypatch.setattr(tree_async, "MAX_MESSAGES", floor // 2)
    with pytest.raises(ConfigError, match="^backoff must be"):
        simulate_tree_async(Platform.from_dict(p), SMALL_TREE, make("steal"), **kw)


def test_a_recorded_trace_longer_than_the_limit_is_taken_whole(monkeypatch):
    """The limit bounds what a run makes up as it goes, not what a user measured and gave."""
    monkeypatch.setattr(availability, "MAX_SEGMENTS", 10)
    p = dlbkit.Recorded(tuple(float(k) for k in range(50)), tuple(0.5 + 0.01 * k for k in range(50))).realise()
    assert len(p.times) == 50 and p.capacity(100.0) == pytest.approx(sum(0.5 + 0.01 * k for k in range(49)) + 0.99 * 51)


def test_both_tree_loops_stop_at_the_same_message(monkeypatch):
    """The fast loop counted the completions scheduled and not yet run (one per busy node) as messages, so
    near the budget it stopped runs the general loop finished, or stopped them earlier."""
    p = Platform.from_dict({"nodes": [{"name": "pe", "count": 16, "speed": 1e6}],
                            "network": {"latency": 1e-5, "bandwidth": 1e8, "topology": "complete"}})
    w = TaskTree("imbalance", imbalance=0.5, depth=10, fanout=2, grain=1000, seed=3)
    monkeypatch.setattr(tree_async, "MAX_MESSAGES_PER_NODE_TASK", 0)
    kw = dict(seed=1, backoff="off", task_bytes=0)
    full = simulate_tree_async(p, w, make("steal"), fast_path=False, **kw).messages
    for cap in list(range(1250, 1270)) + list(range(full - 20, full + 1)):
        monkeypatch.setattr(tree_async, "MAX_MESSAGES", cap)
        outcome = []
        for fast in (True, False):
            try:
                outcome.append(simulate_tree_async(p, w, make("steal"), fast_path=fast, **kw).messages)
            except ConfigError as e:
                outcome.append(str(e))
        assert outcome[0] == outcome[1], (cap, outcome)
