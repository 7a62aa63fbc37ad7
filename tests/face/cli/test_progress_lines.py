"""No long command is silent: off a terminal (a log file, a pipe) the commands print a progress line every
``LINE_S`` seconds (runtime/progress.py), on stderr, which keeps stdout for the results and the JSON.

``LINE_S`` is made short here so that runs of a fraction of a second print lines; the clock of the
format test is a fake one, so its numbers are exact.
"""

from __future__ import annotations

import io
import json
import re
import time

import pytest

import dlbkit
from dlbkit.face.cli import main
from dlbkit.runtime import progress as progress_module
from dlbkit.runtime.progress import LINES, Progress, line_mode


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def test_a_line_every_line_s_with_the_share_done_and_the_time_left(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(progress_module.time, "monotonic", clock)
    out = io.StringIO()
    p = Progress(400, LINES, stream=out, unit="items", what="map")
    p.update(10)  # before LINE_S: nothing
    clock.t += progress_module.LINE_S
    p.update(100)
    clock.t += 1.0
    p.update(150)  # 1 s after the last line: nothing
    clock.t += progress_module.LINE_S - 1.0
    p.update(200)
    p.close()
    p.close()  # once
    assert out.getvalue().splitlines() == [
        "dlbkit: map: 100 of 400 items (25%), 5 s, about 15 s left",
        "dlbkit: map: 200 of 400 items (50%), 10 s, about 10 s left",
        "dlbkit: map: stopped at 200 of 400 items (50%) in 10 s",  # closed before the end
    ]


def test_a_run_shorter_than_line_s_prints_nothing_and_a_bar_or_nothing_elsewhere():
    out = io.StringIO()
    p = Progress(10, LINES, stream=out)
    p.update(10)
    p.close()
    assert out.getvalue() == ""
    assert line_mode(None, io.StringIO()) == LINES  # the command line's default off a terminal
    assert [line_mode(v, io.StringIO()) for v in (True, False)] == [True, False]


def test_beating_says_a_silent_call_still_runs(monkeypatch):
    monkeypatch.setattr(progress_module, "LINE_S", 0.05)
    out = io.StringIO()
    p = Progress(0, LINES, stream=out, unit="", what="schedule: milp")
    with p.beating():
        time.sleep(0.3)
    p.close()
    lines = out.getvalue().splitlines()
    assert len(lines) >= 3 and all(re.fullmatch(r"dlbkit: schedule: milp: running, \d+ s", ln) for ln in lines[:-1])
    assert re.fullmatch(r"dlbkit: schedule: milp: done in \d+ s", lines[-1])


def test_progress_lines_is_a_value_of_the_api_and_anything_else_is_refused(monkeypatch, capsys):
    monkeypatch.setattr(progress_module, "LINE_S", 0.05)
    assert dlbkit.map(_slow, range(40), workers=2, progress="lines") == list(range(40))
    err = capsys.readouterr().err
    assert re.search(r"^dlbkit: \d+ of 40 items \(\d+%\)", err, re.M) and "done: 40 of 40 items (100%)" in err
    with pytest.raises(dlbkit.ConfigError, match=r'progress must be True \(a bar\), False, None .* or "lines"'):
        dlbkit.map(abs, [1], progress="line")


def _slow(x):
    time.sleep(0.01)
    return x


def test_dlbkit_run_prints_lines_to_a_log_and_none_with_no_progress(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(progress_module, "LINE_S", 0.05)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "slowjob.py").write_text("import time\ndef f(x):\n    time.sleep(0.01)\n    return x\n")
    assert main(["run", "slowjob:f", "--items", "60", "--workers", "2"]) == 0
    out, err = capsys.readouterr()
    assert "60 items on 2 workers" in out and "dlbkit: done: 60 of 60 items (100%)" in err
    assert main(["run", "slowjob:f", "--items", "60", "--workers", "2", "--no-progress"]) == 0
    assert capsys.readouterr().err == ""


def test_dlbkit_cluster_prints_the_jobs_done(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(progress_module, "LINE_S", 0.05)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "cjob.py").write_text("import time\ndef job(i):\n    time.sleep(0.01)\n    return i\n")
    assert main(["cluster", "cjob:job", "--jobs", "60", "--workers", "2", "--rate", "200", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["jobs"] == 60  # stdout is the JSON alone
    assert re.search(r"^dlbkit: cluster: \d+ of 60 jobs", err, re.M) and "cluster: done: 60 of 60 jobs (100%)" in err


def test_dlbkit_schedule_says_the_solver_runs_and_keeps_stdout_for_the_json(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(progress_module, "LINE_S", 0.05)
    monkeypatch.setattr(progress_module.Progress, "beating", _slow_beating(progress_module.Progress.beating))
    g = tmp_path / "g.json"
    g.write_text(json.dumps({"tasks": [{"id": "a", "load": 2}, {"id": "b", "load": 3}, {"id": "c", "load": 1}],
                             "edges": [{"from": "a", "to": "c", "data": 1}, {"from": "b", "to": "c", "data": 1}]}))
    assert main(["schedule", str(g), "--nodes", "2", "--balancer", "milp", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["makespan"] > 0
    lines = err.splitlines()
    assert lines and all(re.fullmatch(r"dlbkit: schedule: milp: running, \d+ s", ln) for ln in lines[:-1])
    assert re.fullmatch(r"dlbkit: schedule: milp: done in \d+ s", lines[-1])
    assert main(["schedule", str(g), "--nodes", "2", "--balancer", "milp", "--json", "--no-progress"]) == 0
    assert capsys.readouterr().err == ""


def _slow_beating(beating):
    """Progress.beating, the call inside it taking 0.2 s more (a small MILP solves in milliseconds)."""
    class Slow:
        def __init__(self, p):
            self.inner = beating(p)

        def __enter__(self):
            p = self.inner.__enter__()
            time.sleep(0.2)
            return p

        def __exit__(self, *exc):
            return self.inner.__exit__(*exc)

    return lambda self: Slow(self)


def test_the_last_line_of_a_run_that_stopped_says_where(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(progress_module.time, "monotonic", clock)
    out = io.StringIO()
    p = Progress(100, LINES, stream=out)
    clock.t += progress_module.LINE_S
    p.update(40)
    p.close()
    assert out.getvalue().splitlines()[-1] == "dlbkit: stopped at 40 of 100 items (40%) in 5 s"
