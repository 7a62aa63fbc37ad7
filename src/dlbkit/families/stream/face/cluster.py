"""``dlbkit.Cluster``: a decentralised job cluster for real Python jobs (the job-stream family's runtime).

A :class:`concurrent.futures.Executor` whose nodes place work themselves, with the stream family's
placement balancers and information models — the system of 003 §1.2–1.4 (§5.1 of its note): on
every node a load monitor (the information model's messages, ``gossip`` by default), a scheduler
(the placement balancer, ``nezha`` by default) and a dispatcher, with no central master. The
process that creates the cluster is only the client: it holds the futures and hands each job to an
origin node (round-robin, or ``submit(fn, *args, origin=k)``), which decides where it runs. See
``docs/cluster.md``; the nodes are :mod:`dlbkit.families.stream.runtime.agent`, the client
:mod:`dlbkit.families.stream.runtime.program`.
"""

from __future__ import annotations

import os
import pickle
import warnings
from concurrent.futures import Executor, Future
from numbers import Integral
from typing import Any, Callable, Iterable, Mapping

from dlbkit.balancers.registry import resolve
from dlbkit.errors import ConfigError, DlbkitWarning
from dlbkit.model.check import number
from dlbkit.families.stream.model.seeding import STREAM
from dlbkit.info import names as info_names
from dlbkit.info import resolve as resolve_info
from dlbkit.families.result import Result
from dlbkit.families.stream.sim.engine import INFO_REFUSED
from dlbkit.runtime.backends.base import short_repr, unpicklable
from dlbkit.runtime.backends.local import check_workers, default_workers, oversubscription_warning
from dlbkit.runtime.emulation import emulation_from
from dlbkit.runtime.backends.mpi import agree
from dlbkit.runtime.backends.mpi import check_workers as check_mpi_workers
from dlbkit.runtime.backends.mpi import rank as mpi_rank
from dlbkit.runtime.record import save_trace
from dlbkit.families.stream.runtime.program import ClusterRun, Job
from dlbkit.families.run import _backend, check_record, open_journal

__all__ = ["Cluster", "Job", "NOT_IN_A_CLUSTER"]

#: most slots (runner threads) a node may have: a slot is a thread in the node's process, and
#: thousands of threads would exhaust the process before they served anything
MAX_SLOTS = 256

#: information models a cluster refuses beyond the stream engine's (``INFO_REFUSED``) and ``exact``:
#: those that model no message, whose knowledge only a simulator can hand out for free
NOT_IN_A_CLUSTER = {"monitored": "it models no message (a free copy of the true loads, which only a "
                                 "simulator has)"}


def _pickled(fn: Callable, args: tuple, kwargs: dict) -> bytes:
    """The job as it crosses to a node; a ConfigError naming the part that cannot be pickled (or a
    *fn* that is not callable: said now, as for an unpicklable one, not by the job's Future later)."""
    if not callable(fn):
        raise ConfigError("fn", short_repr(fn, 80), "a callable")
    try:
        return pickle.dumps((fn, args, kwargs))
    except Exception:  # noqa: BLE001 - find which part, for the message
        for what, obj in (("fn", fn), ("args", args), ("kwargs", kwargs)):
            reason = unpicklable(obj)
            if reason is not None:
                raise ConfigError(what, short_repr(obj, 80), "picklable, since a job crosses to another process "
                                  f"(a module-level function, not a lambda or a local one): {reason}") from None
        raise


def _slots(slots: Any, emulation) -> int | list[int]:
    """The jobs each node runs at once, checked: an int for every node, or one per node."""
    if slots is None:
        return 1
    if emulation is not None and emulation.node_of is not None:
        raise ConfigError("slots", slots, "None with a platform: each node's cores are its slots")
    allowed = f"an integer in [1, {MAX_SLOTS}] (jobs the node runs at once)"
    if isinstance(slots, int) and not isinstance(slots, bool):
        if not 1 <= slots <= MAX_SLOTS:
            raise ConfigError("slots", slots, allowed + ", or one per node")
        return slots
    if isinstance(slots, Iterable) and not isinstance(slots, (str, bytes, Mapping)):
        out = list(slots)
        if not out:
            raise ConfigError("slots", out, allowed + ", or one per node")
        for i, s in enumerate(out):
            if isinstance(s, bool) or not isinstance(s, int) or not 1 <= s <= MAX_SLOTS:
                raise ConfigError(f"slots[{i}]", s, allowed)
        return out
    raise ConfigError("slots", slots, allowed + ", or one per node")


class Cluster(Executor):
    """A decentralised cluster of *workers* nodes running Python jobs: ``submit``, ``map``,
    ``submit_batch``, ``shutdown``, a context manager; the futures are ``concurrent.futures.Future``.

    *balancer* (a placement balancer's name or object, with *params*) decides at each job's origin
    node where the job runs, on that node's view of the others' loads, which the information model
    *info* (a name, an ``{"model": ..., **params}`` table as ``simulate`` takes, or an object: a
    model that sends messages — ``gossip``, ``neighbour``, the scattering models) builds from messages between the nodes. *emulate*: speed factors,
    one per node, or a platform (file) with availability traces, as :func:`dlbkit.map` takes.
    *backend* ``"local"`` (worker processes, pipes: no network listener), ``"mpi"`` (every rank
    runs the script; rank 0 is the client, the others the nodes) or ``"dask"`` (each node's daemon one
    long-running task on a worker of *client*: a ``distributed.Client``, a scheduler's address, or
    None for the Client running here; every Dask worker is a node unless *workers* says fewer). *seed* fixes each node's
    balancer and information draws. *suspect_after* (seconds, more than the model's period): a node
    whose entry in a node's table is older leaves that node's view until a fresher one arrives (a
    silent node is avoided; a dead one is also announced by the transport); the age counts from that
    node's own start at the earliest, so a node started late does not suspect peers it has not heard
    from yet. *slots*: the jobs a node
    runs at once (an int, or one per node; default 1; with a platform, each node's cores), each slot
    a thread of the node's process, so jobs that compute in Python share its GIL.
    ``ps()`` lists the jobs, ``pids()`` the nodes' processes,
    ``result()`` the run as the stream simulator's :class:`~dlbkit.families.result.Result`.

    *journal*: a file to which each job's result is appended as it arrives, before its future is set
    (flushed; :mod:`dlbkit.runtime.journal`). A job is known by its pickled function and arguments and
    by how many equal jobs were submitted before it, so a rerun after a crash (the client killed, a time
    limit, under MPI a dead rank) that submits the same jobs gets every result the journal holds at once,
    without running the job, and runs only the others; a job that raised is run again. ``journaled``
    counts the futures set from the journal; ``ps()`` and the trace are of the jobs this run ran.
    Under MPI rank 0 (the client) keeps it.
    """

    def __init__(self, workers: int | None = None, *, backend: str = "local", balancer: Any = "nezha",
                 params: Mapping[str, Any] | None = None, info: Any = "gossip", emulate: Any = None, seed: int = 0,
                 record: Any = None, start_method: str | None = None, record_decisions: bool = False,
                 suspect_after: float | None = None, slots: int | Iterable[int] | None = None,
                 client: Any = None, journal: Any = None):
        _backend(backend, client)

        def checks():
            if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
                raise ConfigError("seed", seed, "an integer >= 0")
            if not isinstance(record_decisions, bool):  # as every run_* entry point: "yes" was taken as True
                raise ConfigError("record_decisions", record_decisions, "True or False")
            b = resolve(balancer, params, kind="placement")
            model = resolve_info(info)
            refused = {**INFO_REFUSED, **NOT_IN_A_CLUSTER, "exact": "it sends nothing (true loads for free, which "
                       "only a simulator has)"}
            if model.name in refused:
                raise ConfigError("info", model.name, "an information model whose messages tell every node the "
                                  "loads (" + ", ".join(n for n in info_names() if n not in refused)
                                  + f"): {model.name!r} is refused, {refused[model.name]}")
            if suspect_after is not None:
                number(suspect_after, "suspect_after", lo=0.0, lo_open=True)
                if not suspect_after > model.interval:
                    raise ConfigError("suspect_after", suspect_after, f"None or more seconds than the {model.name} "
                                      f"model's period ({model.interval:g} s): an entry is that old between two "
                                      "messages")
            emulation = emulation_from(emulate, seed, layout=STREAM)
            per_node = _slots(slots, emulation)
            if emulation is not None and emulation.node_of is not None:  # a platform: its nodes, their cores slots
                emulation, per_node = emulation.per_node()
            if backend == "local":
                n = check_workers(workers if workers is not None else
                                  (emulation.n_workers if emulation is not None else
                                   len(per_node) if isinstance(per_node, list) else default_workers()), mesh=True)
                if isinstance(per_node, list) and len(per_node) != n:
                    raise ConfigError("slots", per_node, f"an integer or one per node ({n})")
                if emulation is not None and emulation.n_workers != n:
                    raise ConfigError("emulate", f"{emulation.n_workers} nodes", f"one per worker ({n})")
            else:  # the nodes are the job's worker ranks or the Dask cluster's workers: counted at start
                if workers is not None and (isinstance(workers, bool) or not isinstance(workers, Integral)
                                            or workers < 1):
                    everyone = "every rank but rank 0" if backend == "mpi" else "every Dask worker"
                    raise ConfigError("workers", workers, f"None ({everyone}) or a positive integer")
                n = workers if workers is None else int(workers)
                if n is not None and backend == "mpi":  # checked here (agreed): rank 0 alone refused
                    check_mpi_workers(n)  # it once the run started, and the nodes waited for it
            if (record is not None and not isinstance(record, (str, bytes))
                    and not hasattr(record, "__fspath__")):
                raise ConfigError("record", record, "None or a path to write the recording to")
            if record is not None:  # now, not at shutdown after every job ran (rank 0's verdict under MPI)
                check_record(os.fsdecode(os.fspath(record)), backend)
            # the client's (rank 0's under MPI), opened in the checks: another run's refused on every rank
            return b, model, emulation, per_node, n, open_journal(journal, backend, "dlbkit.Cluster", kind="jobs")

        # under MPI every rank checks its own arguments and the verdict is agreed: raised on one rank
        # alone (its own balancer, seed, info), the others went on into the run and waited for it
        b, model, emulation, slots, n, kept = checks() if backend != "mpi" else agree(checks)
        self.record = record
        self.balancer = b
        self.info = model
        self._run = ClusterRun(n, b, model, backend=backend, emulation=emulation, seed=seed,
                               start_method=start_method, record_decisions=record_decisions,
                               suspect_after=suspect_after, slots=slots, client=client, journal=kept)
        if backend == "mpi" and mpi_rank() != 0:
            # a worker rank is a node until rank 0 shuts the cluster down; then the script ends here
            self._run.serve_rank()
            raise SystemExit(0)
        if backend == "local":
            # the nodes start in the client's own thread, where a warning would point at threading.py:
            # the cluster warns here, at the caller's line, and the backend does not (ClusterProgram)
            message = oversubscription_warning(n)
            if message is not None:
                warnings.warn(message, DlbkitWarning, stacklevel=2)
        self._run.start()
        self._shut = False

    # --- the Executor ------------------------------------------------------------------------------------
    def submit(self, fn: Callable, /, *args, origin: int | None = None, **kwargs) -> Future:
        """Run ``fn(*args, **kwargs)`` on the node its origin (*origin*, or the next by round-robin)
        chooses; its Future. An *origin* that has died cannot receive the job: it goes to the next live
        node by round-robin instead, and ``ps()`` shows that node as the job's origin."""
        self._check_origin(origin)
        return self._run.submit([_pickled(fn, args, kwargs)], origin)[0]

    def submit_batch(self, fn: Callable, argsets: Iterable, *, origin: int | None = None) -> list[Future]:
        """One job per argument tuple of *argsets*, placed at once by one origin with its balancer's
        batch rule (``hybrid-batch``, ``batch-sampling``); their Futures in order."""
        self._check_origin(origin)
        payloads = []
        for i, a in enumerate(argsets):
            a = a if isinstance(a, tuple) else (a,)
            payloads.append(_pickled(fn, a, {}))
        if not payloads:
            return []
        return self._run.submit(payloads, origin)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop accepting jobs; with *cancel_futures* cancel those not finished; stop every node
        (after the remaining jobs, unless cancelled). With *wait*, return when every node has ended."""
        self._shut = True
        self._run.shutdown(wait=wait, cancel_futures=cancel_futures)
        if wait and self.record is not None:
            save_trace(self._run.trace(), self.record)

    def __exit__(self, exc_type, exc, tb) -> bool:
        # Ctrl-C (or SystemExit) in the with-block: stop every node now instead of running the queued
        # jobs to the end; an ordinary exception leaves as with concurrent.futures (the jobs finish)
        self.shutdown(wait=True, cancel_futures=exc_type is not None and not issubclass(exc_type, Exception))
        return False

    def _check_origin(self, origin: Any) -> None:
        n = self._run.n
        if origin is not None and (isinstance(origin, bool) or not isinstance(origin, int) or not 0 <= origin < n):
            raise ConfigError("origin", origin, f"None or a node index in [0, {n - 1}]")

    # --- observability -------------------------------------------------------------------------------------
    @property
    def workers(self) -> int:
        return self._run.n

    def ps(self) -> list[Job]:
        """Every job so far: job id, origin, node, state, submitted/started/ended times (s from the
        cluster's start), busy seconds, resubmissions."""
        return self._run.ps()

    def pids(self) -> list[int]:
        """The nodes' process ids (local backend), node by node."""
        return list(self._run.pids)

    @property
    def journaled(self) -> int:
        """Futures set from the journal (jobs that ran in an earlier run)."""
        return self._run.journaled

    def alive(self) -> list[int]:
        """The nodes the client knows to be alive."""
        return list(self._run.live)

    def decisions(self, node: int) -> list:
        """The decisions *node* made, each with a copy of its view (``record_decisions=True``; after
        ``shutdown``), in order: :func:`dlbkit.families.stream.balancers.decide.place`'s records."""
        st = self._run.stats.get(node)
        return list(st["decisions"] or []) if st else []

    def result(self) -> Result:
        """The run as the stream simulator's Result (after ``shutdown``: the nodes' queue and view-age
        series arrive with their goodbye)."""
        return Result(self._run.trace(), self.balancer)
