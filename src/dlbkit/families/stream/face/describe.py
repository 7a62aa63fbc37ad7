"""What ``dlbkit describe FILE`` says of the job-stream family's files: SWF logs (``.swf``, read by
:meth:`Stream.read <dlbkit.families.stream.model.workload.Stream.read>` with its default filters, as an
experiment's ``swf = "..."`` reads one) and arrivals CSV files (``time,origin,demand[,width]``,
:func:`~dlbkit.families.stream.model.workload.read_arrivals_csv`, as an experiment's ``trace = "..."``);
:data:`FILES` is the family's ``Family.files``.

A job of width w and demand d is w tasks of demand d: its work is w × d (an SWF job of run time r on p
processors: p tasks of demand r, work r × p processor-seconds). The **span** is from the first arrival to the
last; the **offered load** is the work per second of span, and for an SWF log whose header gives ``MaxProcs``
also per processor of it (a share of the logged machine: 1 keeps every processor busy).
"""

from __future__ import annotations

import csv
from pathlib import Path

from dlbkit.families.stream.model.swf import NUMERIC_HEADER, SwfLog
from dlbkit.families.stream.model.workload import Stream, read_arrivals_csv
from dlbkit.model import check
from dlbkit.model.description import Description, Fact, FileKind

__all__ = ["FILES", "describe_csv", "describe_swf", "stream_facts"]

#: the header an arrivals CSV file begins with (its fourth column, width, optional)
_CSV_HEADER = ["time", "origin", "demand"]
#: SwfLog's attribute of each numeric header field
_HEADER_ATTR = {"MaxJobs": "max_jobs", "MaxRecords": "max_records", "MaxProcs": "max_procs",
                "MaxNodes": "max_nodes", "UnixStartTime": "unix_start_time"}


def stream_facts(s: Stream, max_procs: int | None = None, jobs: str = "jobs") -> list[Fact]:
    """The facts of a recorded stream *s* (module docstring); *max_procs*: the logged machine's processors,
    for the offered load per processor; *jobs*: the label of the job count."""
    times = [r[0] for r in s.trace]
    span = times[-1] - times[0]
    work = sum(r[2] * r[3] for r in s.trace)
    load = work / span if span > 0 else None
    facts = [Fact("jobs", jobs, len(s.trace)),
             Fact("tasks", "tasks (a job of width w is w tasks)", sum(r[3] for r in s.trace)),
             Fact("origins", "origins (nodes jobs arrive at)", len({r[1] for r in s.trace})),
             Fact("span", "span (first to last arrival)", span, "s"),
             Fact("total_work", "total work (width × demand)", work, "work units"),
             Fact("offered_load", "offered load (work per second of span)", load, "work units/s",
                  none="none (every job arrives at once)")]
    if max_procs:
        facts.append(Fact("offered_load_per_processor", "offered load per processor (of MaxProcs)",
                          None if load is None else load / max_procs, none="none (every job arrives at once)"))
    facts.append(Fact("widest_job", "widest job (tasks)", max(r[3] for r in s.trace)))
    return facts


def describe_swf(path: Path) -> Description:
    """An SWF log, as an experiment reads it by default: completed jobs (status 1) with a known run time and
    processors, each one task per processor, all arriving at node 0."""
    s = Stream.read(path)
    log: SwfLog = s.source
    facts = [Fact("records", "job lines in the file", log.records),
             Fact("left_out", "completed jobs left out (no run time or processors)", log.dropped)]
    facts += stream_facts(s, log.max_procs, jobs="jobs kept (completed, status 1)")
    facts += [Fact(name, f"{name} (header)", getattr(log, _HEADER_ATTR[name])) for name in NUMERIC_HEADER
              if getattr(log, _HEADER_ATTR[name]) is not None]
    return Description(str(path), "job stream (SWF log)", "Stream.read", tuple(facts))


def describe_csv(path: Path) -> Description | None:
    """An arrivals CSV file; None for a CSV file whose header is not ``time,origin,demand[,width]`` (another
    table)."""
    try:
        text = check.decode(path.read_bytes(), path)
    except OSError:
        text = None  # the reader names the problem
    if text is not None:
        header = [h.strip() for h in next(csv.reader(text.splitlines()[:1]), [])]
        if header[:3] != _CSV_HEADER:
            return None
    s = Stream(trace=read_arrivals_csv(path), name=path.stem)
    return Description(str(path), "job stream (arrivals CSV)", "read_arrivals_csv", tuple(stream_facts(s)))


#: the family's kinds of file, in the order ``dlbkit describe`` tries them
FILES = (FileKind("job stream (SWF log)", (".swf",), describe_swf),
         FileKind("job stream (arrivals CSV: time,origin,demand[,width])", (".csv",), describe_csv))
