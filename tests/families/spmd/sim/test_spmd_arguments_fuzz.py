"""The SPMD engine's run arguments: :func:`dlbkit.families.spmd.sim.engine.simulate_spmd` with loops,
window, noise and seed drawn from odd values, and an SPMD experiment whose ``loops`` is huge.

The rule: one ConfigError naming the argument, or a run to a finite makespan; never numpy's "array is
too big" (loops = 10**18 was that traceback: the engine allocates loops × workstations tables first)
or an out-of-memory kill (10**9). Derandomized, bounded: a run here is at most 2 000 loops.
"""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlbkit.face.cli import main
from dlbkit.errors import ConfigError
from dlbkit.families.spmd.model.hnow import MAX_LOOP_CELLS, Hnow, Workstation
from dlbkit.families.spmd.model.workload import Spmd
from dlbkit.families.spmd.sim.engine import simulate_spmd

from support.fuzz import DATA, FUZZ, WEIRD, deadline
from support.profiles import examples

HNOW = Hnow(tuple(Workstation(speed=s, memory=1e9, bandwidth=1e6, latency=1e-3, points=1000) for s in (1.0, 0.5, 2.0)),
            "ring", 100, 1.0, 0.1)
ODD = st.one_of(st.sampled_from([1, 2, 3, 2000, MAX_LOOP_CELLS // 3 + 1, 10**9, 10**18, np.int64(4), 0, -1, 1.5,
                                 True, None, "3", math.inf, math.nan]), WEIRD)
SMALL = 2000  # loops a run may have here


@settings(FUZZ, max_examples=examples(60))
@given(key=st.sampled_from(["loops", "window", "noise", "seed"]), value=ODD)
def test_spmd_run_arguments_are_refused_by_name_or_run(key, value):
    kw = {"loops": 20, "window": 5, "noise": None, "seed": 0, key: value}
    if key == "loops" and isinstance(value, (int, np.integer)) and not isinstance(value, bool) and \
            SMALL < value <= MAX_LOOP_CELLS // 3:
        kw["loops"] = SMALL  # a valid, long run: not a defect
    try:
        with warnings.catch_warnings(), deadline(30):
            warnings.simplefilter("error")
            t = simulate_spmd(HNOW, None, **kw)
    except ConfigError as e:
        assert e.field == key and "\n" not in str(e), (key, value, str(e))
        return
    assert math.isfinite(t.makespan) and t.makespan > 0


@pytest.mark.parametrize("loops, nodes", [(10**18, 3), (10**9, 3), (MAX_LOOP_CELLS // 3 + 1, 3)])
def test_loops_beyond_the_limit_are_refused_before_any_table_is_made(loops, nodes):
    with deadline(5), pytest.raises(ConfigError) as e:
        simulate_spmd(HNOW, None, loops=loops)
    assert str(e.value).startswith(f"loops must be an integer in [1, {MAX_LOOP_CELLS // nodes:,}] on {nodes} "
                                   "workstations (dlbkit's limit")
    with pytest.raises(ConfigError, match=r"^workload\.loops must be an integer in \[1, 10,000,000\]"):
        Spmd(points=10, loops=MAX_LOOP_CELLS + 1)


def test_an_experiment_with_too_many_loops_for_its_nodes_is_one_line(tmp_path, capsys):
    """osman_ring10 (10 workstations) with 2 000 000 loops: within Spmd's own bound, beyond the
    platform's; refused when the file is read (the family's fit check), exit 2."""
    text = (DATA / "experiments" / "osman_ring10.toml").read_text().replace("loops = 700", "loops = 2000000")
    assert "loops = 2000000" in text
    (tmp_path / "e.toml").write_text(text)
    assert main(["simulate", str(tmp_path / "e.toml"), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "workload.loops must be an integer in [1, 1,000,000] on 10 workstations" in err, err
