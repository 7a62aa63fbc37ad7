"""Sizes each within its own limit whose product could not be held: refused before any work, with
the field, the limit and why."""

import pytest

from dlbkit import ConfigError
from dlbkit.families.stream.model.workload import MAX_JOBS, MAX_TASKS, MAX_WIDTH, Stream

WHY = "(dlbkit's limit: every task's demand is drawn up front and the engine keeps state per task)"


def test_jobs_times_width_is_bounded():
    """50 M jobs of 100 000 tasks passed both checks and then asked numpy for 36 TiB of demands."""
    with pytest.raises(ConfigError) as e:
        Stream(rates=1.0, jobs=MAX_JOBS, width=MAX_WIDTH)
    assert str(e.value) == (f"workload.jobs × workload.width must be at most {MAX_TASKS:,} tasks in all {WHY}; "
                            f"got '{MAX_JOBS * MAX_WIDTH:,} tasks'")


def test_the_limit_itself_is_allowed_and_counts_initial_tasks():
    assert Stream(rates=1.0, jobs=MAX_TASKS // MAX_WIDTH, width=MAX_WIDTH).width == MAX_WIDTH
    with pytest.raises(ConfigError, match=r"^workload.jobs × workload.width \+ workload.initial must be at most "
                                          r"50,000,000 tasks in all .*; got '50,000,001 tasks'$"):
        Stream(rates=1.0, jobs=MAX_TASKS // MAX_WIDTH, width=MAX_WIDTH, initial=(1, 0))


def test_a_recorded_trace_counts_its_widths():
    rows = [(float(k), 0, 1.0, MAX_WIDTH) for k in range(MAX_TASKS // MAX_WIDTH + 1)]
    with pytest.raises(ConfigError, match=r"^workload.trace widths must be at most 50,000,000 tasks in all"):
        Stream(trace=rows)


def test_a_gossip_round_is_bounded_before_the_tables():
    """Each node pushes its whole table to fanout peers, all in flight at once: 8 192 nodes at fanout 1
    peaked at 3.2 GB (27 s); now refused before any table is made."""
    import numpy as np

    from dlbkit.info.gossip import MAX_ROUND_ENTRIES, Gossip

    n = 5793  # 5 792² ≤ 2²⁵ < 5 793²
    with pytest.raises(ConfigError) as e:
        Gossip(period=0.5).start(n, [[]] * n, [0.0] * n, np.random.default_rng(1))
    assert str(e.value) == (f"info.fanout must be a fanout whose rounds send at most {MAX_ROUND_ENTRIES:,} load entries "
                            f"(dlbkit's limit: each of 5,793 nodes sends its whole table to fanout peers, every message "
                            f"in flight at once; this one {n * n:,}); got 1")


@pytest.mark.parametrize("kw,ok", [({}, True), ({"fanout": 2}, False), ({"pull": True}, False),
                                   ({"fanout": 40}, False)])
def test_the_gossip_round_counts_fanout_and_pull(monkeypatch, kw, ok):
    import numpy as np

    from dlbkit.info import gossip

    monkeypatch.setattr(gossip, "MAX_ROUND_ENTRIES", 16 * 16)
    g = gossip.Gossip(period=0.5, **kw)
    start = lambda: g.start(16, [list(range(16))] * 16, [1.0] * 16, np.random.default_rng(1))  # noqa: E731
    if ok:
        start()
        assert g.values_.shape == (16, 16)
    else:
        with pytest.raises(ConfigError, match=r"^info\.fanout must be a fanout whose rounds send at most 256 load "
                                              r"entries .*; this one (512|3,840)\)"):
            start()
