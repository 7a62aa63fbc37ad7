"""The synthetic SWF log of the shipped experiment swf_stream (src/dlbkit/data/logs/synthetic64.swf) and the
script that writes it: the script reproduces the committed file byte for byte; the file has the Parallel
Workloads Archive's header lines and 18 fields per job; read back by ``Stream.read`` it gives the jobs, the
header numbers and the work that an independent reading with numpy gives; the log's own FCFS schedule never
uses more than its 64 processors."""

import importlib.util

import numpy as np
from support import REPO

from dlbkit.families.stream.model.workload import Stream

LOGS = REPO / "src" / "dlbkit" / "data" / "logs"
LOG = LOGS / "synthetic64.swf"
SCRIPT = LOGS / "make_synthetic64.py"


def _script():
    spec = importlib.util.spec_from_file_location("make_synthetic64", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _jobs() -> np.ndarray:
    """The job lines as numbers, read with numpy alone (not dlbkit's reader)."""
    return np.loadtxt(LOG, comments=";", ndmin=2)


def test_the_script_reproduces_the_committed_file_byte_for_byte(tmp_path):
    out = tmp_path / "again.swf"
    _script().main(["--out", str(out)])
    assert out.read_bytes() == LOG.read_bytes()
    assert LOG.stat().st_size < 200_000  # small enough to ship in the package


def test_the_header_and_the_fields_are_those_of_an_archive_log():
    """Every header key a Parallel Workloads Archive log opens with, the note saying it is synthetic; 18
    fields a line, -1 for what the model does not know (CPU time, memory, requested memory, executable,
    preceding job, think time), job numbers 1..1500 in submit order."""
    lines = LOG.read_text(encoding="ascii").splitlines()
    header = [ln for ln in lines if ln.startswith(";")]
    keys = {ln[1:].split(":", 1)[0].strip() for ln in header if ":" in ln}
    assert {"Version", "Computer", "MaxJobs", "MaxRecords", "MaxNodes", "MaxProcs", "UnixStartTime",
            "TimeZoneString", "StartTime", "EndTime", "Note"} <= keys
    assert "; Version: 2.2" in header and "; MaxProcs: 64" in header and "; MaxJobs: 1500" in header
    assert "; StartTime: Mon Jan 05 00:00:00 UTC 2026" in header  # UnixStartTime 1767571200
    assert "SYNTHETIC" in next(ln for ln in header if ln.startswith("; Note:"))
    a = _jobs()
    assert a.shape == (1500, 18) and all(len(ln.split()) == 18 for ln in lines if not ln.startswith(";"))
    assert (a[:, 0] == np.arange(1, 1501)).all() and (np.diff(a[:, 1]) >= 0).all()
    for col in (5, 6, 9, 13, 16, 17):  # fields 6, 7, 10, 14, 17, 18
        assert (a[:, col] == -1).all(), col + 1
    procs = a[:, 7]
    assert set(np.unique(procs)) == {1, 2, 4, 8, 16, 32, 64}  # powers of two up to MaxProcs
    assert set(np.unique(a[:, 10])) == {0, 1, 5} and (a[:, 3] <= 12 * 3600).all()


def test_the_log_read_back_gives_what_numpy_reads():
    """Kept by Stream.read's defaults: status 1 with a run time > 0 and known processors. numpy's reading:
    1,360 such jobs of the 1,500, Σ run time × processors = 9,584,490 processor-seconds, their submit
    times spanning 411,100 s (first 0, so the stream's times are the submit times)."""
    a = _jobs()
    kept = (a[:, 10] == 1) & (a[:, 3] > 0) & (a[:, 4] > 0)
    work = float((a[kept, 3] * a[kept, 4]).sum())
    assert int(kept.sum()) == 1360 and work == 9_584_490.0
    s = Stream.read(LOG)
    assert (s.source.records, s.source.kept, s.source.dropped) == (1500, 1360, 0)
    assert (s.source.max_procs, s.source.max_nodes, s.source.max_jobs, s.source.max_records) == (64, 16, 1500, 1500)
    assert s.source.unix_start_time == 1767571200
    assert sum(d * w for _, _, d, w in s.trace) == work
    assert [t for t, *_ in s.trace] == (a[kept, 1] - a[kept, 1][0]).tolist()
    assert s.trace[-1][0] == 411_100.0
    assert [w for *_, w in s.trace] == a[kept, 4].astype(int).tolist()


def test_the_logged_fcfs_schedule_fits_the_machine():
    """The wait times are the script's FCFS schedule: started jobs start in submit order and never hold more
    than 64 processors at once (ends before starts at one instant; a job of run time 0 holds none); cancelled jobs (status 5) never started."""
    a = _jobs()
    ran = a[:, 3] >= 0
    assert (a[~ran, 10] == 5).all() and (a[~ran, 2] == -1).all() and (a[ran, 2] >= 0).all()
    start = a[ran, 1] + a[ran, 2]
    assert (np.diff(start) >= 0).all()
    held = a[:, 3] > 0  # a failed job of run time 0 holds nothing
    start = a[held, 1] + a[held, 2]
    t = np.concatenate((start, start + a[held, 3]))
    step = np.concatenate((a[held, 4], -a[held, 4]))
    order = np.lexsort((step, t))  # at one time, the ends (negative) first
    busy = np.cumsum(step[order])
    assert busy.max() == 64 and busy.min() >= 0  # a 64-wide job fills the machine
