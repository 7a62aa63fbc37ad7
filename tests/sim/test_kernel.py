"""The simulation kernel: the order of simultaneous events (time, priority, rank, sequence), instants
under a tolerance, run(until), stop, failures, and the event log."""

import pytest

from dlbkit import ConfigError
from dlbkit.sim.kernel import NORMAL, URGENT, Kernel, pop_instant, simultaneous


def recorder(out):
    def ev(t, name):
        out.append((t, name))
    return ev


def test_events_run_in_time_order():
    out = []
    k = Kernel()
    for t, name in ((3, "c"), (1, "a"), (2, "b")):
        k.schedule(t, recorder(out), name)
    k.run()
    assert out == [(1, "a"), (2, "b"), (3, "c")] and k.now == 3 and k.processed == 3


def test_simultaneous_events_run_by_priority_then_rank_then_sequence():
    """At one time: URGENT before NORMAL, then lower rank first, then first scheduled first."""
    out = []
    k = Kernel()
    ev = recorder(out)
    k.schedule(5, ev, "normal-r2-first", rank=2)
    k.schedule(5, ev, "normal-r0-first")
    k.schedule(5, ev, "normal-r0-second")
    k.schedule(5, ev, "urgent", priority=URGENT)
    k.schedule(5, ev, "normal-r1", priority=NORMAL, rank=1)
    k.run()
    assert [n for _, n in out] == ["urgent", "normal-r0-first", "normal-r0-second", "normal-r1",
                                   "normal-r2-first"]


def test_times_within_the_tolerance_are_one_instant_ordered_by_rank_not_round_off():
    """0.3 and 0.1 + 0.2 differ by round-off only: the rank decides, as exact arithmetic would."""
    out = []
    k = Kernel(tolerance=1e-9)
    ev = recorder(out)
    k.schedule(0.1 + 0.2, ev, "rank0", rank=0)  # 0.30000000000000004
    k.schedule(0.3, ev, "rank1", rank=1)
    k.schedule(0.3 + 1e-6, ev, "later")
    k.run()
    assert [n for _, n in out] == ["rank0", "rank1", "later"]
    assert out[0][0] == 0.1 + 0.2 and out[1][0] == 0.3  # each runs at its own time


def test_without_tolerance_round_off_orders_events():
    out = []
    k = Kernel()
    ev = recorder(out)
    k.schedule(0.1 + 0.2, ev, "rank0", rank=0)
    k.schedule(0.3, ev, "rank1", rank=1)
    k.run()
    assert [n for _, n in out] == ["rank1", "rank0"]


def test_events_scheduled_during_an_instant_run_after_it():
    """An instant is fixed when it opens: an urgent event scheduled in it for the same time runs in
    the next round of that instant, after the instant's other events."""
    out = []
    k = Kernel()

    def first(t):
        out.append("first")
        k.schedule(t, lambda t: out.append("urgent-late"), priority=URGENT)

    k.schedule(1, first)
    k.schedule(1, lambda t: out.append("second"))
    k.run()
    assert out == ["first", "second", "urgent-late"]


def test_an_urgent_event_scheduled_before_the_instant_runs_first():
    out = []
    k = Kernel()

    def before(t):
        k.schedule(2, lambda t: out.append("urgent"), priority=URGENT)

    k.schedule(2, lambda t: out.append("normal"))
    k.schedule(1, before)
    k.run()
    assert out == ["urgent", "normal"]


def test_run_until_stops_before_events_at_until_and_resumes():
    out = []
    k = Kernel()
    for t in (1, 2, 3, 4):
        k.schedule(t, recorder(out), t)
    k.run(until=3)
    assert [n for _, n in out] == [1, 2] and k.now == 3 and len(k) == 2
    k.run(until=3)  # nothing new: until equal to now is allowed
    assert len(out) == 2
    k.run()
    assert [n for _, n in out] == [1, 2, 3, 4] and k.now == 4


def test_run_until_inside_an_open_instant_keeps_its_order():
    out = []
    k = Kernel(tolerance=0.5)
    ev = recorder(out)
    k.schedule(1.0, ev, "b", rank=1)
    k.schedule(1.2, ev, "a", rank=0)
    k.run(until=1.1)  # "a" (rank 0, time 1.2) runs first in the instant and is at/after until
    assert out == [] and k.now == 1.1
    k.run()
    assert [n for _, n in out] == ["a", "b"]


def test_run_until_in_the_past_raises_quoting_the_value():
    k = Kernel()
    k.schedule(5, lambda t: None)
    k.run()
    with pytest.raises(ConfigError, match=r"until must be a time not before the kernel's now \(5\); got 4"):
        k.run(until=4)


def test_scheduling_in_the_past_raises():
    k = Kernel()
    k.schedule(5, lambda t: k.schedule(4, lambda t: None))
    with pytest.raises(ConfigError, match="got 4"):
        k.run()


def test_a_failing_handler_propagates_its_exception_with_the_event_in_a_note():
    def broken(t, x):
        raise ZeroDivisionError("boom")

    k = Kernel()
    k.schedule(2, broken, 7, rank=3)
    with pytest.raises(ZeroDivisionError, match="boom") as err:
        k.run()
    note = "\n".join(err.value.__notes__)
    assert "broken(7,)" in note and "at time 2" in note and "rank 3" in note and "sequence 0" in note
    k2 = Kernel()
    k2.schedule(1, broken, 1)
    with pytest.raises(ZeroDivisionError):
        k2.step()


def test_stop_ends_the_run_after_the_running_event():
    out = []
    k = Kernel()

    def last(t):
        out.append(t)
        k.stop()

    k.schedule(1, last)
    k.schedule(2, recorder(out), "never")
    k.run()
    assert out == [1] and k.processed == 1 and len(k) == 1


def test_step_runs_one_event_and_reports_an_empty_queue():
    out = []
    k = Kernel()
    k.schedule(1, recorder(out), "a")
    assert k.peek() == 1
    assert k.step() and out == [(1, "a")]
    assert not k.step() and k.peek() == float("inf")


def test_the_log_records_every_event_in_order():
    k = Kernel(log=True)

    def hop(t, n):
        if n:
            k.schedule(t + 1, hop, n - 1, rank=n)

    k.schedule(0, hop, 2)
    k.run()
    assert k.log == [(0, NORMAL, 0, 0, "hop", (2,)), (1, NORMAL, 2, 1, "hop", (1,)), (2, NORMAL, 1, 2, "hop", (0,))]


def test_same_schedule_same_log():
    """No randomness and no dependence on object identity: two identical runs log the same events."""
    def run():
        k = Kernel(tolerance=1e-9, log=True)

        def ping(t, i):
            if t < 10:
                k.schedule(t + 0.1 * (i % 3 + 1), ping, (i * 7 + 1) % 5, rank=i % 2)

        for i in range(5):
            k.schedule(0.0, ping, i, rank=i % 2)
        k.run()
        return k.log

    a, b = run(), run()
    assert a == b and len(a) > 100


def test_pop_instant_and_simultaneous():
    import heapq
    h = [(1.0, "x"), (1.0 + 1e-12, "a"), (2.0, "b")]
    heapq.heapify(h)
    assert simultaneous(h, 1e-9) and not simultaneous(h, 0)
    got = pop_instant(h, 1e-9, order=lambda e: e[1])
    assert got == [(1.0, "x"), (1.0 + 1e-12, "a")] and h == [(2.0, "b")]  # pop() gives "a" first
    assert not simultaneous(h, 1.0)


def test_a_negative_tolerance_is_rejected():
    with pytest.raises(ConfigError, match="tolerance"):
        Kernel(tolerance=-1)
