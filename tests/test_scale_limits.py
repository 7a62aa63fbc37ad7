"""Sizes each within its own limit whose product could not be held: refused before any work, with
the field, the limit and why."""

import pytest

from dlbkit import ConfigError
from dlbkit.model.stream import MAX_JOBS, MAX_TASKS, MAX_WIDTH, Stream

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
