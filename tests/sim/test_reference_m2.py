"""Reference model M2 (random work stealing) through the general tree engine: the seed-1 table bit for
bit, the Mersenne Twister stream, and ``dlbkit bench m2``."""

import json
import random

import numpy as np
import pytest

from dlbkit import ConfigError
from dlbkit.face.cli import main
from dlbkit.face.bench import MODELS, MersenneIntegers, run_m1, run_m2

# docs/reference-models.md, M2 reference values, seed 1, canonical order (exact)
M2_REFERENCE = [(2, 3, 7.7, 7_202, 1), (16, 10_000, 835.122, 140_999, 148),
                (128, 100_000, 1048.518, 1_992_859, 1_750)]


@pytest.mark.parametrize("workers, tasks, makespan, events, steals", M2_REFERENCE)
def test_m2_reference_values_bit_for_bit(workers, tasks, makespan, events, steals):
    r = run_m2(workers, tasks, seed=1)
    assert r["makespan"] == makespan  # exact: integer ticks / 8,400,000 is the nearest double
    assert r["events"] == events and r["successful_steals"] == steals


@pytest.mark.full
def test_m2_largest_reference_row():
    r = run_m2(1024, 1_000_000, seed=1)
    assert (r["makespan"], r["events"], r["successful_steals"]) == (1307.438, 16_822_121, 17_786)


def test_m2_reports_m1s_keys_and_successful_steals():
    r = run_m2(4, 50)
    assert set(r) == set(run_m1(4, 50)) | {"successful_steals"}
    assert (r["model"], r["workers"], r["tasks"]) == ("m2", 4, 50)
    assert r["events_per_s"] == pytest.approx(r["events"] / r["wall_s"])
    assert MODELS["m2"] is run_m2


def test_other_seeds_give_other_runs_near_the_bound():
    """docs/reference-models.md: the ideal bound at (16, 10,000) is 826.389 s; stealing stays within 2 % of it."""
    spans = {s: run_m2(16, 10_000, seed=s)["makespan"] for s in (1, 2, 3)}
    assert len(set(spans.values())) == 3
    assert all(826.389 <= m <= 826.389 * 1.02 for m in spans.values()), spans


@pytest.mark.parametrize("workers, tasks", [(1, 10), (0, 10), (4, 0), (4, -1)])
def test_m2_rejects_bad_sizes(workers, tasks):
    with pytest.raises(ConfigError, match="--workers" if workers < 2 else "--tasks"):
        run_m2(workers, tasks)


# --- the RNG: Python's Mersenne Twister, as randrange draws it ---------------------------------------------
@pytest.mark.parametrize("seed", [1, 2, 12345])
def test_integers_is_randrange_on_the_same_stream(seed):
    ours, ref = MersenneIntegers(seed), random.Random(seed)
    bounds = [1, 2, 3, 7, 8, 15, 16, 17, 100, 127, 128, 1023, 1024, 2**31 + 5] * 300
    assert [ours.integers(n) for n in bounds] == [ref.randrange(n) for n in bounds]
    # numpy integers and the (low, high) form draw the same stream too
    assert ours.integers(np.int64(1023)) == ref.randrange(1023)
    assert ours.integers(5, 9) == 5 + ref.randrange(4)
    assert ours.integers(10, size=6).tolist() == [ref.randrange(10) for _ in range(6)]


def test_integers_refuses_an_empty_range():
    with pytest.raises(ValueError):
        MersenneIntegers(1).integers(0)


# --- the command line ------------------------------------------------------------------------------------
def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_bench_m2_json(capsys):
    code, out, _ = run(capsys, "bench", "m2", "--workers", "16", "--tasks", "10000", "--seed", "1", "--json")
    assert code == 0
    res = json.loads(out)
    assert set(res) == {"model", "workers", "tasks", "makespan", "events", "wall_s", "events_per_s",
                        "successful_steals"}
    assert (res["model"], res["workers"], res["tasks"]) == ("m2", 16, 10000)
    assert (res["makespan"], res["events"], res["successful_steals"]) == (835.122, 140_999, 148)


def test_bench_m2_defaults_to_the_reference_seed_and_prints_text(capsys):
    code, out, _ = run(capsys, "bench", "m2", "-P", "2", "-N", "3")
    assert code == 0 and "7.700000" in out and "7202" in out and "1 successful" in out


@pytest.mark.parametrize("argv, field", [
    (["--workers", "1", "--tasks", "10"], "--workers"),
    (["--workers", "4", "--tasks", "0"], "--tasks"),
    (["--workers", "4", "--tasks", "10", "--seed", "x"], "--seed"),
])
def test_bench_m2_bad_values_are_one_line_with_status_2(capsys, argv, field):
    code, out, err = run(capsys, "bench", "m2", *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("dlbkit: error:") and field in err
