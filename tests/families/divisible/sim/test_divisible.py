"""The divisible master–worker engine: reference model M1, cost model, determinism, invariants."""


import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlbkit import (
    ChunkingBalancer,
    ConfigError,
    CostModel,
    Divisible,
    Network,
    Node,
    Platform,
    Step,
    Taxonomy,
    simulate,
)
from dlbkit.families.divisible.balancers import SelfScheduling, Static
from dlbkit.model.metrics import compute, lower_bound
from dlbkit.families.divisible.sim.engine import simulate_divisible
from dlbkit.face.bench import run_m1

from support.profiles import examples

# docs/reference-models.md, M1 reference values (exact)
M1_REFERENCE = [
    (1, 1, 1.002, 5), (2, 3, 5.804, 13), (7, 1000, 213.678, 3014), (8, 5000, 835.086, 15016),
    (16, 10000, 832.594, 30032), (128, 100000, 1044.558, 300256), (1024, 20000, 35.512, 62048),
]


@pytest.mark.parametrize("workers, tasks, makespan, events", M1_REFERENCE)
def test_m1_reference_values(workers, tasks, makespan, events):
    r = run_m1(workers, tasks)
    assert r["makespan"] == pytest.approx(makespan, rel=1e-9)
    assert r["events"] == events


def test_m1_worked_example_chunk_by_chunk():
    """docs/reference-models.md: worker 0 gets tasks 0 then 2, worker 1 task 1; completions 1.002, 1.452, 5.804."""
    from dlbkit.families.divisible.model.workload import m1_costs
    from dlbkit.face.bench import m1_platform
    tr = simulate_divisible(m1_platform(2), Divisible(3), SelfScheduling(), costs=m1_costs(3))
    assert tr.node == [0, 1, 0] and tr.first == [0, 1, 2]
    assert tr.t_end == pytest.approx([1.002, 1.452, 5.804], rel=1e-12)
    assert tr.t_start == pytest.approx([0.002, 0.002, 1.004], rel=1e-12)
    assert tr.t_ask == pytest.approx([0.0, 0.0, 1.002], rel=1e-12)


def test_simultaneous_requests_are_served_in_worker_order():
    """Equal workers ask at the same instant: the lower index gets the lower items every time."""
    p = Platform([Node("m")] + [Node(f"w{i}") for i in range(4)], Network(latency=0.1, bandwidth=1.0))
    tr = simulate_divisible(p, Divisible(12), SelfScheduling())
    assert tr.node == [0, 1, 2, 3] * 3
    assert tr.first == list(range(12))


def test_message_cost_latency_hops_and_bandwidth():
    """Chain m-a-b: b is 2 hops away. 10 items × 100 B at 1000 B/s = 1 s of transfer each way."""
    p = Platform([Node("m"), Node("a"), Node("b")], Network(latency=0.5, bandwidth=1000.0, topology="chain"))
    tr = simulate_divisible(p, Divisible(20, bytes_in=100, bytes_out=50), Static())
    # Static: 10 items each. a's request arrives at 0.5; the blocking send takes 1 s, then 0.5 s latency
    # -> starts at 2.0. b's request arrives at 1.0 but the master sends until 1.5; 1.5 + 1 + 2 × 0.5 = 3.5
    assert tr.t_start == pytest.approx([2.0, 3.5])
    assert tr.t_end == pytest.approx([12.0, 13.5])
    # results: 10 × 50 B = 0.5 s, plus latency per hop
    assert tr.end_time == pytest.approx(13.5 + 1.0 + 0.5)
    assert tr.bytes == 20 * 150
    assert tr.messages == 2 * (2 + 2)


def test_compute_integrates_availability_exactly():
    """A worker at speed 2 whose availability drops to 0.25 at t=3: 10 units from t=0.
    6 units by t=3 (2/s), then 0.5/s: 4 more units need 8 s -> ends at 11."""
    p = Platform([Node("m"), Node("w", speed=2.0, availability=Step(at=3.0, level=0.25))],
                 Network(latency=0.0, bandwidth=1.0))
    tr = simulate_divisible(p, Divisible(10), Static())
    assert tr.t_end == [pytest.approx(11.0, rel=1e-15)]
    assert lower_bound(tr) == pytest.approx(11.0, rel=1e-12)


def test_data_for_a_worker_on_the_master_node_is_not_sent():
    """master_computes: the master's own worker gets its chunk at once, whatever its size."""
    p = Platform([Node("m", speed=0.01), Node("a")], Network(latency=1.0, bandwidth=10.0))
    tr = simulate_divisible(p, Divisible(2, bytes_in=100.0), Static(), master_computes=True,
                            master_cost_per_byte=0.01)
    # worker 0 (on m, speed 0.01) starts item 0 at once; a asks at 1: m sends 100 B: 10 s on the link + 100 × 0.01/0.01 s of CPU
    assert tr.t_start == pytest.approx([0.0, 1.0 + 110.0 + 1.0])


def test_broadcast_precedes_work():
    """100 B of shared data at 100 B/s to two workers, one after the other, before any request."""
    p = Platform([Node("m"), Node("a"), Node("b")], Network(latency=0.5, bandwidth=100.0))
    tr = simulate_divisible(p, Divisible(2), Static(), broadcast_bytes=100.0)
    # a has it at 1.5, b at 2.5; requests arrive 2.0 and 3.0; replies 2.5 and 3.5
    assert tr.t_start == pytest.approx([2.5, 3.5])
    rounds = simulate_divisible(p, Divisible(2), Static(), broadcast_bytes=100.0, mechanism="rounds")
    # round 0 starts when the master has sent both copies (2.0); chunks carry no bytes
    assert rounds.t_start == pytest.approx([2.5, 2.5])
    assert tr.messages == 2 * (2 + 2) + 2 and tr.bytes == 200.0


def test_master_overhead_is_serialised():
    """Two workers ask at t=0.1; the master takes 1 s per decision, one after the other."""
    p = Platform([Node("m"), Node("a"), Node("b")], Network(latency=0.1, bandwidth=1.0))
    tr = simulate_divisible(p, Divisible(2), SelfScheduling(), master_overhead=1.0)
    assert tr.t_start == pytest.approx([1.2, 2.2])


def test_master_that_computes_gets_work_without_messages():
    """The master (speed 0.25) starts item 0 at once; a's request and reply take 1 s each."""
    p = Platform([Node("m", speed=0.25), Node("a", speed=1.0)], Network(latency=1.0, bandwidth=1.0))
    tr = simulate_divisible(p, Divisible(2), SelfScheduling(), master_computes=True)
    assert tr.node_of == [0, 1]
    assert tr.node == [0, 1]
    assert tr.t_start == pytest.approx([0.0, 2.0])
    assert tr.t_end == pytest.approx([4.0, 3.0])


class _Spy(ChunkingBalancer):
    """Records what the view showed at each decision (a test double, not registered)."""

    name = "spy"
    source = "test"
    taxonomy = Taxonomy("receiver", "central", "global", "1", "next")

    def __init__(self):
        pass

    def start(self, view, rng=None):
        super().start(view, rng)
        self.seen_ = []

    def chunk(self, view, worker):
        self.seen_.append((view.time, worker, list(view.items_done), view.remaining))
        return 2


def test_measurements_reach_the_master_only_with_the_next_request():
    """Information has an age: worker 1's result is not in the view before its request arrives."""
    p = Platform([Node("m"), Node("a", speed=1.0), Node("b", speed=4.0)], Network(latency=1.0, bandwidth=1.0))
    spy = _Spy()
    simulate_divisible(p, Divisible(8), spy)
    t0, w0, done0, rem0 = spy.seen_[0]
    assert (t0, w0, done0, rem0) == (1.0, 0, [0, 0], 8)
    # b (speed 4) finishes 2 items at 2.5, its request arrives at 3.5 with 2 items done
    t, w, done, rem = spy.seen_[2]
    assert (t, w, done, rem) == (3.5, 1, [0, 2], 4)


def test_unknown_mechanism_and_bad_master():
    p = Platform([Node("m"), Node("a")])
    with pytest.raises(ConfigError, match="engine.mechanism"):
        simulate_divisible(p, Divisible(3), Static(), mechanism="gossip")
    with pytest.raises(ConfigError, match="engine.master"):
        simulate_divisible(p, Divisible(3), Static(), master=5)
    with pytest.raises(ConfigError, match=r"^engine.master must be one of m, a; got 'zz'$"):  # named as an index is
        simulate_divisible(p, Divisible(3), Static(), master="zz")
    with pytest.raises(ConfigError, match="master_computes"):
        simulate_divisible(Platform([Node("m")]), Divisible(3), Static())


def test_a_mistyped_master_name_in_an_experiment_gets_the_closest_node():
    from dlbkit.families.divisible.sim.options import DivisibleOptions
    with pytest.raises(ConfigError) as e:
        DivisibleOptions.check_dict({"master": "mastr"}, Platform([Node("master"), Node("a")]), "engine")
    assert str(e.value) == "engine.master must be a node name (master, a) or index; got 'mastr' (did you mean 'master'?)"


def test_rounds_mechanism_equal_chunks():
    """Static size 5 per round on speeds 1 and 2, no communication: rounds last 5 s (the slow one)."""
    p = Platform([Node("m"), Node("a", speed=1.0), Node("b", speed=2.0)], Network(latency=0.0, bandwidth=1.0))
    tr = simulate_divisible(p, Divisible(30), Static(size=5), mechanism="rounds")
    assert tr.meta["n_rounds"] == 3
    assert max(tr.t_end) == pytest.approx(15.0)
    rt = tr.round_table()
    assert rt["exe_time"].tolist() == pytest.approx([5.0, 2.5] * 3)


def _tiles(trace, n):
    pairs = sorted(zip(trace.first, trace.count))
    pos = 0
    for first, count in pairs:
        if first != pos or count < 1:
            return False
        pos += count
    return pos == n


@settings(max_examples=examples(60), deadline=None)
@given(n=st.integers(1, 400), speeds=st.lists(st.floats(0.1, 8.0), min_size=1, max_size=6),
       size=st.integers(1, 9), seed=st.integers(0, 1000), rounds=st.booleans(),
       pulse=st.floats(0.05, 1.0))
def test_every_item_processed_exactly_once_and_bound_holds(n, speeds, size, seed, rounds, pulse):
    from dlbkit import Pulse
    nodes = [Node("m")] + [Node(f"w{i}", speed=s, availability=Pulse(start=1.0, duration=3.0, level=pulse))
                           for i, s in enumerate(speeds)]
    p = Platform(nodes, Network(latency=1e-3, bandwidth=1e6))
    wl = Divisible(n, CostModel("exponential", mean=1.0), bytes_in=8.0)
    tr = simulate_divisible(p, wl, SelfScheduling(size=size), seed=seed,
                            mechanism="rounds" if rounds else "self-scheduling")
    assert _tiles(tr, n)
    m = compute(tr)
    assert m["makespan"] >= m["lower_bound"] * (1 - 1e-12)
    assert 0 < m["efficiency"] <= 1 + 1e-12
    again = simulate_divisible(p, wl, SelfScheduling(size=size), seed=seed,
                               mechanism="rounds" if rounds else "self-scheduling")
    assert again.t_end == tr.t_end and again.node == tr.node


def test_different_seeds_draw_different_costs():
    p = Platform([Node("m"), Node("a"), Node("b", speed=2.0)])
    wl = Divisible(50, CostModel("uniform", low=0.5, high=1.5))
    a = simulate(p, wl, "ss", seed=1).makespan
    b = simulate(p, wl, "ss", seed=2).makespan
    assert a != b


def test_lower_bound_closed_form():
    """Speeds 1 and 3, 40 units of work: fluid bound 10 s; the largest item (20) alone takes 20/3."""
    p = Platform([Node("m"), Node("a", speed=1.0), Node("b", speed=3.0)], Network(latency=0.0, bandwidth=1.0))
    tr = simulate_divisible(p, Divisible(3, CostModel("array", values=(10.0, 10.0, 20.0))), SelfScheduling())
    assert lower_bound(tr) == pytest.approx(10.0)
    m = compute(tr)
    # SS: a gets item 0 (10 s), b item 1 (3.33 s) then item 2 (6.67 s) -> both end at 10 s
    assert m["makespan"] == pytest.approx(10.0)
    assert m["efficiency"] == pytest.approx(1.0)
    assert m["imbalance"] == pytest.approx(1.0)
    assert m["idle_share"] == pytest.approx(0.0, abs=1e-12)
