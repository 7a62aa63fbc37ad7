"""Write ``synthetic64.swf``, the small synthetic SWF log of the shipped experiment ``swf_stream``.

Run it from anywhere (``python src/dlbkit/data/logs/make_synthetic64.py``, or with ``--out PATH``): it
writes the same bytes every time (seeded; every number written is an integer, so no float formatting
enters), and ``tests/data/logs/test_make_synthetic64.py`` checks that it reproduces the
committed file byte for byte. Only numpy and the standard library are used (numpy does not promise
a Generator's stream across its versions, NEP 19; the file was written with numpy 2.4.6).

The model (none of it is measured from a real machine; it is shaped like the Parallel Workloads
Archive's logs, Feitelson et al., https://www.cs.huji.ac.il/labs/parallel/workload/swf.html):

* **machine**: 16 nodes of 4 processors (``MaxNodes: 16``, ``MaxProcs: 64``), one FCFS queue;
* **arrivals**: a Poisson process with a daily cycle, rate λ(t) = λ̄ · (1 + 0.6 · cos(2π (h − 14) / 24)),
  h the hour of the day (most submissions at 14:00, fewest at 02:00), λ̄ = 1500 jobs / 5 days, drawn by
  thinning a Poisson process of rate 1.6 λ̄; submit times floored to whole seconds; 1500 jobs;
* **width**: 2^k processors, k = 0..6 with probabilities 0.30 0.15 0.17 0.15 0.12 0.07 0.04 (mean 9.2);
* **run time**: lognormal, median 330 s, log-sd 1.4 (mean about 880 s), rounded to whole seconds and
  clipped to [1 s, 12 h], independent of the width;
* **status**: 1 (completed) with probability 0.90, 0 (failed) 0.06: ran a uniform share of its run
  time, 5 (cancelled) 0.04: never started (run time, wait time and allocated processors -1);
* **wait time**: the log's own FCFS schedule on the 64 processors (a job starts when it is first in
  line and enough processors are free, never before an earlier job; no backfilling);
* **requested time**: the smallest of 30 min, 1, 2, 4, 8, 12, 24 h that is at least 1.5 × the run
  time the job would have had; **queue** 1 when that is at most 1 h, else 2; **user** 1..40 drawn with
  weight 1/user, **group** (user − 1) mod 6 + 1; requested processors = the width; the other fields
  (CPU time, memory, executable, partition 1, preceding job, think time) -1 or constant.
"""

from __future__ import annotations

import argparse
import heapq
import time
from pathlib import Path

import numpy as np

SEED = 20260033
JOBS = 1500
DAYS = 5
DAY = 86400
PROCS, NODES = 64, 16
#: 2026-01-05 00:00:00 UTC, a Monday (the log's clock starts at midnight)
UNIX_START = 1767571200
WIDTH_P = (0.30, 0.15, 0.17, 0.15, 0.12, 0.07, 0.04)  # of 2^0 .. 2^6 processors
RUN_MEDIAN, RUN_SIGMA, RUN_MAX = 330.0, 1.4, 12 * 3600
STATUS_P = {1: 0.90, 0: 0.06, 5: 0.04}
LIMITS = (1800, 3600, 7200, 14400, 28800, 43200, 86400)  # requested-time classes (s)
USERS, GROUPS = 40, 6
OUT = Path(__file__).with_name("synthetic64.swf")


def _arrivals(rng: np.random.Generator) -> np.ndarray:
    """JOBS submit times (whole seconds, sorted) of the cycled Poisson process, by thinning."""
    mean = JOBS / (DAYS * DAY)
    peak = 1.6 * mean
    out: list[int] = []
    t = 0.0
    while len(out) < JOBS:
        t += rng.exponential(1.0 / peak)
        hour = (t % DAY) / 3600.0
        if rng.random() * peak < mean * (1.0 + 0.6 * np.cos(2 * np.pi * (hour - 14.0) / 24.0)):
            out.append(int(t))
    return np.asarray(out, dtype=np.int64)


def _waits(submit, run, procs) -> list[int]:
    """The FCFS start of each started job (run > 0) on PROCS processors, as a wait time; -1 for the others."""
    free = [0] * PROCS  # a heap of the times each processor becomes free
    last = 0
    waits = []
    for s, r, p in zip(submit.tolist(), run.tolist(), procs.tolist()):
        if r < 0:
            waits.append(-1)
            continue
        taken = [heapq.heappop(free) for _ in range(p)]
        start = max(s, last, taken[-1])  # FCFS: not before the job ahead of it
        for _ in taken:
            heapq.heappush(free, start + r)
        last = start
        waits.append(start - s)
    return waits


def jobs() -> list[tuple[int, ...]]:
    """The log's 1500 job lines, 18 integers each (SWF 2.2's fields, in order)."""
    rng = np.random.default_rng(SEED)
    submit = _arrivals(rng)
    n = len(submit)
    procs = 2 ** rng.choice(len(WIDTH_P), size=n, p=WIDTH_P)
    intended = np.clip(np.rint(rng.lognormal(np.log(RUN_MEDIAN), RUN_SIGMA, size=n)), 1, RUN_MAX).astype(np.int64)
    status = rng.choice(list(STATUS_P), size=n, p=list(STATUS_P.values()))
    share = rng.random(n)
    users = rng.choice(np.arange(1, USERS + 1), size=n, p=(w := 1.0 / np.arange(1, USERS + 1)) / w.sum())
    run = np.where(status == 1, intended, np.where(status == 0, np.floor(share * intended), -1)).astype(np.int64)
    waits = _waits(submit, run, procs)
    rows = []
    for k in range(n):
        req_time = next(x for x in LIMITS if x >= 1.5 * intended[k]) if 1.5 * intended[k] <= LIMITS[-1] else LIMITS[-1]
        started = run[k] >= 0
        rows.append((k + 1, int(submit[k]), waits[k], int(run[k]), int(procs[k]) if started else -1, -1, -1,
                     int(procs[k]), req_time, -1, int(status[k]), int(users[k]), (int(users[k]) - 1) % GROUPS + 1, -1,
                     1 if req_time <= 3600 else 2, 1, -1, -1))
    return rows


def _date(t: int) -> str:
    return time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(t))


def text() -> str:
    """The whole file: the header comments, then one right-aligned line per job."""
    rows = jobs()
    end = max(r[1] + max(r[2], 0) + max(r[3], 0) for r in rows)  # the last job's end on the log's clock
    header = [
        "; Version: 2.2",
        f"; Computer: dlbkit synthetic cluster ({NODES} nodes of {PROCS // NODES} processors)",
        "; Installation: none (a synthetic log, no real machine)",
        "; Information: https://www.cs.huji.ac.il/labs/parallel/workload/swf.html",
        "; Conversion: written by src/dlbkit/data/logs/make_synthetic64.py (dlbkit)",
        f"; MaxJobs: {len(rows)}",
        f"; MaxRecords: {len(rows)}",
        "; Preemption: No",
        f"; UnixStartTime: {UNIX_START}",
        "; TimeZoneString: UTC",
        f"; StartTime: {_date(UNIX_START)}",
        f"; EndTime: {_date(UNIX_START + end)}",
        f"; MaxNodes: {NODES}",
        f"; MaxProcs: {PROCS}",
        f"; MaxRuntime: {RUN_MAX}",
        "; MaxQueues: 2",
        "; Queues: 1 short (requested time up to 1 h), 2 long",
        "; MaxPartitions: 1",
        f"; Note: SYNTHETIC, not a real machine's log. Made by make_synthetic64.py (numpy seed {SEED}):",
        f";       {JOBS} jobs over {DAYS} days; Poisson arrivals with a daily cycle (rate x (1 + 0.6 cos(2 pi (h - 14)/24)));",
        ";       widths 2^k processors, k = 0..6 (p = .30 .15 .17 .15 .12 .07 .04); lognormal run times (median",
        ";       330 s, log-sd 1.4, 1 s to 12 h); status 1 (90%), 0 failed (6%), 5 cancelled (4%, never started);",
        ";       wait times from an FCFS schedule on the 64 processors; the script's docstring states the model.",
    ]
    widths = [max(len(str(r[j])) for r in rows) for j in range(18)]
    lines = [" ".join(str(v).rjust(widths[j]) for j, v in enumerate(r)) for r in rows]
    return "\n".join(header + lines) + "\n"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT, help=f"where to write (default {OUT.name} beside this script)")
    args = ap.parse_args(argv)
    args.out.write_bytes(text().encode("ascii"))


if __name__ == "__main__":
    main()
