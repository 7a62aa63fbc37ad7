"""The specialised loops (M1's in the divisible engine, M2's ``_tree_fast``) give the kernel path's
trace event for event: same events, same order, same times, same arguments, on seeded cases with
several balancers, availability changes and simultaneous events."""

import numpy as np
import pytest

from dlbkit import Divisible, Markov, Network, Node, Platform, Pulse, Step
from dlbkit.balancers import registry
from dlbkit.families.tree.balancers import WorkStealing
from dlbkit.families.tree.model.workload import FlatTasks, TaskTree
from dlbkit.families.divisible.model.workload import CostModel, m1_costs
from dlbkit.families.divisible.sim.engine import simulate_divisible
from dlbkit.families.tree.sim.engine import simulate_tree_async
from dlbkit.face.bench import M2_TICKS_PER_SECOND, MersenneIntegers, m1_platform, m2_platform
from dlbkit.sim.kernel import NORMAL

COLUMNS = ("node", "first", "count", "t_ask", "t_start", "t_end", "round_of", "events", "messages", "bytes",
           "end_time", "total_work", "max_item")


def same_run(fast, kernel):
    """Equal event logs (the proof) and equal traces (what users see), bit for bit."""
    lf, lk = fast.meta.pop("event_log"), kernel.meta.pop("event_log")
    assert len(lf) == len(lk) and lf == lk
    for col in COLUMNS:
        assert getattr(fast, col) == getattr(kernel, col), col
    fm = {k: v for k, v in fast.meta.items() if k != "fast_path"}
    km = {k: v for k, v in kernel.meta.items() if k != "fast_path"}
    assert fm == km
    return lf


# --- divisible (M1's loop) ------------------------------------------------------------------------------
def hetero(master_computes_latency=1e-3, availability=None):
    av = availability or {}
    return Platform([Node("m")] + [Node(f"w{i}", speed=float(s), **({"availability": av[i]} if i in av else {}))
                                   for i, s in enumerate([1, 2, 2, 4, 1, 3])],
                    Network(latency=master_computes_latency, bandwidth=1e6))


AVAIL = {1: Pulse(start=2.0, duration=5.0, level=0.5, period=20.0), 3: Step(at=4.0, level=0.25),
         4: Markov(mean_free=3.0, mean_busy=1.0, low=0.3)}


def divisible(platform, balancer, fast, **kw):
    return simulate_divisible(platform, kw.pop("workload", Divisible(2000, CostModel("uniform", low=0.5, high=1.5))),
                              registry.make(balancer), fast_path=fast, log_events=True, **kw)


@pytest.mark.parametrize("balancer", ["ss", "gss", "fac2", "tss", "awf-b", "af", "wf", "rnd"])
@pytest.mark.parametrize("seed", [0, 3])
def test_divisible_fast_loop_logs_the_kernel_paths_events(balancer, seed):
    p = hetero(availability=AVAIL)
    fast, kernel = (divisible(p, balancer, f, seed=seed) for f in (True, False))
    assert fast.meta.get("fast_path") is None  # the divisible engine does not record the path
    log = same_run(fast, kernel)
    assert len(log) == fast.messages // 2  # one kernel event per request served


@pytest.mark.parametrize("kw", [
    {"master_computes": True},  # a worker on the master's node: no latency, no bytes
    {"master_overhead": 1e-3, "request_bytes": 64.0},
    {"master_cost_per_byte": 1e-7, "broadcast_bytes": 1e4},
    {"master_computes": True, "master_overhead": 2e-3},
], ids=["master-computes", "overhead-bytes", "blocking-sends", "computes-overhead"])
def test_divisible_fast_loop_equals_kernel_path_with_master_costs(kw):
    p = hetero(availability=AVAIL)
    w = Divisible(3000, CostModel("exponential", mean=1.0), bytes_in=100.0, bytes_out=50.0)
    for b in ("gss", "awf-c", "fsc"):
        same_run(*(divisible(p, b, f, seed=5, workload=w, **kw) for f in (True, False)))


@pytest.mark.parametrize("p, n", [(2, 3), (7, 1000), (16, 10_000)])
def test_m1_ties_are_served_by_worker_index_on_both_paths(p, n):
    """M1 has many simultaneous requests (exact rationals in floats); the kernel ranks them by worker."""
    runs = [simulate_divisible(m1_platform(p), Divisible(n, CostModel("constant")), registry.make("ss"),
                               costs=m1_costs(n), fast_path=f, log_events=True) for f in (True, False)]
    log = same_run(*runs)
    instants = {}
    for t, prio, rank, seq, name, args in log:
        assert prio == NORMAL and name == "on_request" and args == (rank,)
        instants.setdefault(round(t * 8_400_000), []).append(rank)
    ties = [r for r in instants.values() if len(r) > 1]
    assert ties and all(r == sorted(r) for r in ties)


# --- asynchronous tree (M2's loop) ------------------------------------------------------------------------
def tree_run(fast, *, speeds, availability=None, ticks=None, balancer=None, tree=None, seed=1, latency=1e-3,
             backoff="auto"):
    av = availability or {}
    p = Platform([Node(f"n{i}", speed=float(s), **({"availability": av[i]} if i in av else {}))
                  for i, s in enumerate(speeds)], Network(latency=latency, bandwidth=1e9, topology="complete"))
    return simulate_tree_async(p, tree or TaskTree("random", depth=9, fanout=2, seed=seed, grain=1.0),
                               balancer() if balancer else WorkStealing(), seed=seed, ticks_per_second=ticks,
                               control_bytes=0, task_bytes=0, fast_path=fast, log_events=True, backoff=backoff)


def held_replies(log, latency):
    """Replies delivered later than one latency after their request (held back by the back-off)."""
    sent = {}
    held = 0
    for t, _, _, seq, name, args in log:
        if name == "on_request":
            sent[(args[1], args[0])] = t  # (thief, victim) -> when the request arrived
        elif name == "on_reply" and t > sent.pop((args[0], args[1])) + latency * (1 + 1e-9):
            assert args[2] == ()  # only empty replies are held
            held += 1
    return held


class Prefetch(WorkStealing):
    """Asks while it still holds up to two waiting tasks."""
    name = "prefetch"
    low_water = 2


@pytest.mark.parametrize("ticks", [None, 1000, M2_TICKS_PER_SECOND], ids=["float", "ticks1000", "ticksM2"])
@pytest.mark.parametrize("balancer", [WorkStealing, Prefetch, lambda: WorkStealing(fraction=0.25, max_tasks=3)],
                         ids=["steal", "prefetch", "steal-quarter"])
@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("backoff", ["off", "auto", (1e-3, 2e-2)], ids=["no-backoff", "auto", "backoff"])
def test_tree_fast_loop_logs_the_kernel_paths_events(ticks, balancer, seed, backoff):
    kw = dict(speeds=[1, 2, 2, 4, 1, 3, 1, 1], availability=AVAIL, ticks=ticks, balancer=balancer, seed=seed,
              backoff=backoff)
    fast, kernel = tree_run(True, **kw), tree_run(False, **kw)
    assert fast.meta["fast_path"] and not kernel.meta["fast_path"]
    log = same_run(fast, kernel)
    assert len(log) == fast.events
    assert {e[4] for e in log} == {"on_completion", "on_request", "on_reply"}
    held = held_replies(log, 1e-3 * (ticks or 1))  # the latency in engine units
    assert (held == 0) == (backoff == "off")


@pytest.mark.parametrize("ticks", [None, M2_TICKS_PER_SECOND], ids=["float", "ticks"])
@pytest.mark.parametrize("p, n", [(2, 3), (16, 2000)])
@pytest.mark.parametrize("backoff", ["off", "auto"])
def test_m2_fast_loop_logs_the_kernel_paths_events(ticks, p, n, backoff):
    """Equal speeds and one latency: many simultaneous completions and messages, ordered FIFO (M2 itself
    has no back-off; with one, held replies join the completions' heap and keep the kernel's order)."""
    runs = [simulate_tree_async(m2_platform(p), FlatTasks(m1_costs(n).tolist()), WorkStealing(),
                                rng=MersenneIntegers(1), ticks_per_second=ticks, control_bytes=0, task_bytes=0,
                                fast_path=f, log_events=True, backoff=backoff) for f in (True, False)]
    log = same_run(*runs)
    instants = {}
    for t, prio, rank, seq, name, args in log:
        assert prio == NORMAL and rank == 0
        instants.setdefault(t if ticks else round(t * M2_TICKS_PER_SECOND), []).append(seq)
    assert all(s == sorted(s) for s in instants.values())  # FIFO within every instant
    assert p == 2 or any(len(s) > 1 for s in instants.values())  # and there were ties


def test_same_seed_same_event_log_and_another_seed_another():
    kw = dict(speeds=[1, 2, 3, 4], availability=AVAIL)
    a, b, c = tree_run(None, seed=4, **kw), tree_run(None, seed=4, **kw), tree_run(None, seed=5, **kw)
    assert a.meta["event_log"] == b.meta["event_log"] != c.meta["event_log"]
    d1, d2 = (simulate_divisible(hetero(availability=AVAIL), Divisible(500), registry.make("rnd"), seed=9,
                                 fast_path=False, log_events=True) for _ in range(2))
    assert d1.meta["event_log"] == d2.meta["event_log"]
    assert np.all(np.diff([e[3] for e in d1.meta["event_log"][:6]]) != 0)
