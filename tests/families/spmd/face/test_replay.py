"""A real SPMD run recorded (per iteration and worker: loop time, rows held, when halos went and steps began)
and replayed in the pipelined simulator under its own repartition rule and others
(:mod:`dlbkit.families.spmd.face.replay`)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dlbkit
from dlbkit.errors import ConfigError
from dlbkit.face.cli import main
from dlbkit.face.replay import compare
from dlbkit.families.spmd.face.replay import estimate


def mean3(u):
    return (u[:-2] + u[1:-1] + u[2:]) / 3.0


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    path = tmp_path_factory.mktemp("spmd") / "spmd.json"
    dlbkit.run_spmd(mean3, np.linspace(0.0, 1.0, 42), iterations=20, window=5, workers=2, balancer="dlah",
                    record=path)
    return path


def test_the_model_is_the_recorded_rows_over_the_recorded_loop_times(recorded):
    """Exact arithmetic of the model: each worker's speed is Σ rows / Σ loop time of the recording."""
    t = dlbkit.load_trace(recorded)
    m = estimate(t)
    lt, pts = np.asarray(t.series["loop_time"]), np.asarray(t.series["points"])
    assert m["speeds"] == pytest.approx(list(pts.sum(axis=0) / lt.sum(axis=0)), rel=1e-12)
    assert (m["split"], m["loops"], m["halo"], m["window"], m["items"]) == ([20, 20], 20, 1, 5, 40)
    assert m["latency"] >= 0 and m["startup"] == pytest.approx(min(t.t_ask))


def test_replay_under_its_own_rule_and_another(recorded):
    """The replay's makespan is within a factor 2 of the real one: the speeds and the halos' latency are means
    of a run whose steps take microseconds on a machine shared with other processes (what is exact is the model,
    above); the same seed gives the same replay."""
    own = dlbkit.replay(recorded)
    assert own.balancer.name == "dlah" and own.trace.source == "replay" and own.trace.family == "spmd"
    assert 0.5 < own.ratio < 2.0
    again = dlbkit.replay(recorded)
    assert again.makespan == own.makespan and own.trace.transfers == again.trace.transfers
    other = dlbkit.replay(recorded, "homogeneous-diffusion")
    assert other.balancer.name == "homogeneous-diffusion" and other.makespan > 0
    rows = compare(recorded, ["homogeneous-diffusion"])
    assert [r["balancer"] for r in rows] == ["dlah", "homogeneous-diffusion"]


def test_a_balancer_of_another_kind_is_refused_naming_the_field(recorded):
    with pytest.raises(ConfigError) as e:
        dlbkit.replay(recorded, "steal")
    assert e.value.field == "balancer" and "repartition" in str(e.value)


def test_a_recording_without_its_loop_times_says_what_it_lacks(recorded, tmp_path):
    d = json.loads(recorded.read_text())
    del d["meta"]["halo"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(d))
    with pytest.raises(ConfigError) as e:
        dlbkit.replay(old)
    assert e.value.field == "trace meta.halo"
    sim = dlbkit.simulate(dlbkit.Platform([dlbkit.Node("a"), dlbkit.Node("b")]), dlbkit.Spmd(points=50, loops=20),
                          "dlah")
    sim.save(tmp_path / "sim.json")
    with pytest.raises(ConfigError, match="a simulated run cannot be replayed"):
        dlbkit.replay(tmp_path / "sim.json")


def test_the_command_line_prints_the_table_without_efficiency(recorded, capsys):
    assert main(["replay", str(recorded), "-b", "homogeneous-diffusion"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"replay of {recorded}: dlah on 2 workers (local), 40 rows; real makespan ")
    assert lines[3].split() == ["balancer", "makespan", "(s)", "replay/real"]
    assert [ln.split()[0] for ln in lines[5:]] == ["dlah", "homogeneous-diffusion", "real"]
