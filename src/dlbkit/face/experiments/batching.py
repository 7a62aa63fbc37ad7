"""How many runs of a sweep go into one executor task (``run_sweep(batch=...)``, ``--batch N|auto``).

Each task pays a round trip (the spec out, the rows back; under ``mpi4py.futures`` the worker ranks
also poll for work with a back-off of up to 1 ms): 1–2.5 ms per task on one MPI rank here,
against runs of a millisecond in a small sweep. Sending several runs per task amortises it; sending
too many at once unbalances the workers at the end of the sweep and delays the rows (a row is
written when its task comes back). ``batch="auto"`` sizes each task by two rules at once:

- **time**: about :data:`BATCH_TARGET_S` of measured work per task, ``floor(T / mean run time)``, the
  mean over every run finished so far (its ``wall_s``, measured on the worker). Runs of T or more go
  one per task, as with ``batch=1``; the first tasks, before anything is measured, hold one run each.
  This caps what a task can hold however many runs remain: a row is written, and the progress bar
  moves, at least every T or so per worker, and a lost task loses about T of work.
- **factoring** (Hummel, Schonberg & Flynn 1992, "Factoring: a method for scheduling parallel
  loops", CACM 35(8): FAC2, dlbkit's ``fac2``, half of what is left per round of W chunks): at most
  ``ceil(remaining / (2 W))`` runs, *remaining* the runs not yet sent and *W* the executor's workers,
  so the batches shrink as the sweep ends and the workers finish together (within about one run).

Why a time rule and not factoring alone: factoring over runs, not over seconds, would send a quarter
of a 1 000-run sweep of one-minute runs to each of two workers in its first tasks: four hours before
the first row. Why not a fixed size: the right size depends on the run time, which the user of
``dlbkit simulate`` does not know in advance, and the sweep measures it.

W is known for ``concurrent.futures`` pools and ``mpi4py.futures`` executors (``_max_workers``; for
``MPICommExecutor``, the ranks but the root) and for a Dask ``Client.get_executor()`` (the threads of
its client's workers). For an executor whose workers cannot be counted, ``auto`` falls back to one
run per task (``batch=1``, today's behaviour): without W the end of the sweep cannot be balanced.
"""

from __future__ import annotations

import math
from concurrent.futures import Executor

from dlbkit.errors import ConfigError

__all__ = ["BATCH_TARGET_S", "FACTOR", "DEFAULT_BATCH", "check_batch", "batch_size", "workers_of"]

#: seconds of measured work per task under ``batch="auto"``: 40 round trips of 2.5 ms, so the round
#: trip costs at most about 2.5% of a batch; short enough that rows and the progress bar still move
#: several times a second per worker
BATCH_TARGET_S = 0.1

#: factoring's divisor: a batch holds at most remaining / (FACTOR × workers) runs (FAC2, CACM 1992)
FACTOR = 2

#: ``run_sweep``'s and ``dlbkit simulate``'s default: measured faster than one run per task in every
#: configuration (local processes, one and two MPI ranks, runs of 0.4 and 1.5 ms: 1.7-4.1x) and the
#: same within noise on runs past the target, where it sends one run per task anyway (BENCHMARKS.md,
#: "Several runs per task"); its rows are the same, so nothing but the speed depends on it
DEFAULT_BATCH = "auto"


def check_batch(value, field: str = "batch") -> int | str:
    """*value* as ``run_sweep`` takes it: an integer >= 1 or ``"auto"`` (a CLI string of digits is
    read as the integer); raise ConfigError naming *field* otherwise."""
    given = value
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if value == "auto" or (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
        return value
    raise ConfigError(field, given, "an integer >= 1 (runs per executor task; 1 = one run per task) or 'auto' "
                                    "(sized by the measured run time and the workers)")


def batch_size(remaining: int, workers: int, mean_s: float | None, *, target_s: float = BATCH_TARGET_S,
               factor: int = FACTOR) -> int:
    """Runs in the next task under ``batch="auto"``: ``min(floor(target_s / mean_s),
    ceil(remaining / (factor × workers)))``, at least 1 and at most *remaining*; 1 while no run has
    been measured (*mean_s* None)."""
    if remaining <= 0:
        return 0
    if mean_s is None:
        return 1
    by_time = math.floor(target_s / mean_s) if mean_s > 0 else remaining
    by_factoring = math.ceil(remaining / (factor * workers))
    return max(1, min(by_time, by_factoring, remaining))


def workers_of(executor: Executor) -> int | None:
    """How many runs *executor* runs at once, or None if it cannot say."""
    n = getattr(executor, "_max_workers", None)  # concurrent.futures pools, mpi4py.futures' MPIPoolExecutor
    if isinstance(n, int) and not isinstance(n, bool) and n >= 1:
        return n
    client = getattr(executor, "_client", None)  # distributed.cfexecutor.ClientExecutor
    if client is not None and hasattr(client, "ncores"):
        try:
            n = sum(client.ncores().values())
        except Exception:  # an asynchronous client, a scheduler gone: count nothing, fall back
            return None
        return n if isinstance(n, int) and n >= 1 else None
    return None
