"""The random tree's *intercept* (001 §4.2.3: "a linear function which decreases with depth"):
p(k) = min(1, intercept − slope·(k − 1 − min_split_depth)); the default 1 is the earlier tree."""

import pytest

from dlbkit.errors import ConfigError
from dlbkit.families.tree.model.workload import TaskTree, tree_from_dict


def levels(t: TaskTree) -> list[int]:
    counts = [0] * (t.depth + 1)
    stack = t.roots()
    while stack:
        task = stack.pop()
        counts[task & 0xFF] += 1
        stack.extend(t.children(task))
    return counts[1:]


def test_default_intercept_is_the_earlier_tree():
    a = TaskTree("random", depth=12, seed=5, slope=0.05)
    b = TaskTree("random", depth=12, seed=5, slope=0.05, intercept=1.0)
    assert a == b and a.count() == b.count()


def test_intercept_above_one_fills_the_tree_to_where_the_line_crosses_one():
    # 1.63 − 0.07·(k − 1) ≥ 1 for k ≤ 10: depths 1 … 10 always split, so levels 1 … 11 are full
    t = TaskTree("random", depth=16, seed=121, slope=0.07003, intercept=1.63027)
    lv = levels(t)
    assert lv[:11] == [2 ** k for k in range(11)]
    assert lv[11] < 2 ** 11
    assert sum(lv) == t.count()[0] == 29589


def test_expected_size_follows_the_clipped_line():
    t = TaskTree("random", depth=16, slope=0.07003, intercept=1.63027)
    # full to depth 11 (2047 nodes), then 1024·2·p(11)·… with p(k) = 1.63027 − 0.07003·(k − 1)
    level, total = 1024.0, 2047.0
    for k in range(11, 16):
        level *= 2 * (1.63027 - 0.07003 * (k - 1))
        total += level
    assert t.expected_nodes() == pytest.approx(total, rel=1e-12)
    assert t.expected_nodes() == pytest.approx(29535, abs=2)
    mean = sum(TaskTree("random", depth=16, slope=0.07003, intercept=1.63027, seed=s).count()[0]
               for s in range(20)) / 20
    assert mean == pytest.approx(29535, rel=0.02)


def test_estimate_uses_the_clipped_probability():
    t = TaskTree("random", depth=4, slope=0.5, intercept=2.0)  # p = 1, 1, 1 at depths 1 … 3: balanced
    assert t.estimate(1) == pytest.approx(15.0) and t.count() == (15, 7)


def test_intercept_is_validated_and_read_from_toml():
    with pytest.raises(ConfigError, match="workload.intercept"):
        TaskTree("random", intercept=-0.1)
    t = tree_from_dict({"shape": "random", "slope": 0.07003, "intercept": 1.63027, "seed": 121})
    assert t.intercept == 1.63027 and t.count()[0] == 29589
