"""The MPI backend: rank 0 coordinates, worker w is rank w + 1; written once for every family's program.

Run a script that calls ``dlbkit.map(fn, items, backend="mpi")`` (or ``tree``, ``spmd``) on every
rank (SPMD)::

    mpiexec -n 4 python script.py        # 1 coordinator + 3 workers

Every rank must make the same sequence of calls with the same functions. Only rank 0's data
matter: rank 0 sends the workers what they need with the work orders (``shares_items`` is False),
and its emulation settings (with whatever else the family's ``shared()`` names) are broadcast, so
the ranks cannot disagree. When the run is done rank 0 broadcasts the outcome (results **and the
trace**), so every rank returns the same (for a map the worker ranks' trace lacks only
``meta["item_cost"]``, the per-item costs a recording needs: rank 0 writes recordings; and so, under
``auto``, the prediction made from them, ``meta["auto"]``).

What this module owns, for every family (:class:`~.base.Program`): the job check and start
(:func:`start_run`), the one coordinate shell (rank 0: run the family's coordinator, then broadcast
its outcome, or stop the workers and broadcast why the run failed), the one worker shell
(:func:`serve_rank`: the family's worker loop on a :class:`RankConn`, then rank 0's outcome), and
abort. :func:`run` executes a program.

Clocks. Each rank's ``time.perf_counter`` has its own origin (in general on another machine;
``MPI.Wtime`` is not guaranteed to be synchronised either). At the start of a run every rank
waits in a barrier and reads its own clock right after it: that instant is run time 0 on every
rank (its error is the barrier's exit skew: microseconds on one machine, about a network latency
across machines). Workers stamp their messages with run times read on their own clock from that
instant, so no stamp is ever shifted.

Failures.

* ``fn`` raises on some item: the worker reports Error; rank 0's coordinator raises
  :class:`~dlbkit.errors.TaskError` (item index, original traceback) after stopping every worker:
  each finishes the chunk in hand, gets Stop and says Bye; then rank 0 broadcasts the failure and
  the worker ranks raise ``SystemExit("dlbkit: rank k stopping: item i failed on rank j ...")`` (a
  graph's ``task 'k'``, a tree's ``task (13, 3)``, as its TaskError names it; one line on stderr, exit status 1) while the
  TaskError leaves ``map`` on rank 0. Unless the script catches it, ``mpiexec`` exits non-zero and
  the traceback is printed once, by rank 0.
  The job cannot run another MPI ``map`` afterwards (the worker ranks have left): rank 0 raises
  :class:`~dlbkit.errors.DlbkitError` if asked to.
* Workers that do not stop within :data:`GRACE_S` seconds (``DLBKIT_MPI_GRACE_S``; a long chunk in
  hand), or a second Ctrl-C while stopping: rank 0 prints the error and calls ``MPI_Abort``.
* Ctrl-C: ``mpiexec`` forwards SIGINT to every rank. On a worker rank it interrupts the user's
  code only (a map's function, a tree's ``expand``/``combine``, an SPMD step, a graph task: what
  the family's worker loop marks with a :class:`~.base.UserCode`; the item or task is reported
  failed, the rank waits for Stop; elsewhere it is ignored, as on a job-cluster's node ranks),
  so the workers stop at once instead of finishing their chunks or tasks; rank 0 raises
  KeyboardInterrupt, stops the workers as above and re-raises it.
* A result (or a tree's task or value) that cannot be pickled: the worker sends an Error naming
  the item and the pickling problem instead (:func:`~.base.send_or_report`), so it ends as above,
  cleanly; an item rank 0 cannot pickle to send is a :class:`~dlbkit.errors.DlbkitError` naming it.
* The user's code that runs on rank 0 raises (a balancer's rule of the user's): rank 0 stops the
  workers as above and raises it as it is, noted "raised by Rule.decide (file:line) in the
  coordinator (rank 0), not in a worker" (:func:`~.base.drive`); the worker ranks' line names it too.
* A ``dlbkit.Loop`` closed by rank 0's signal handler during a step: :meth:`MPITransport.interrupt`
  makes the coordinator's next wait raise, and the step ends as above.
* The user's signal handler (any signal but SIGINT) that raises, a SIGTERM handler calling
  ``sys.exit`` say: during a run (from the start-up barrier to the final broadcast) its signal is
  held back and its handler runs at the rank's next wait (:mod:`.deferred`; in the user's code on a
  worker rank, marked as for Ctrl-C, it runs at once and what it raises fails that item or task: a
  ``signal.alarm`` per-task timeout ends the run with a TaskError naming the task). Raised
  elsewhere on a worker rank, the rank sends
  :class:`Signalled`, takes no more work, and once the run has ended raises what its handler
  raised; rank 0 ends the run with ``DlbkitError("rank 1 stopped the run: its handler of SIGTERM
  raised SystemExit: 3")`` and the other ranks stop with one line naming it. On rank 0 it ends the
  run as any failure of the coordinator. What is still held back when the run ends (a signal during
  the final broadcast) is delivered then, as just after the call. Before, the rank called
  ``MPI_Abort``. Not covered: a handler raising when ``agree``'s ``allgather`` returns (the entry
  point's argument check, before the run): that rank leaves, and the others wait for it in the
  run's start for ever.
* Any other exception inside this module, on any rank (a bug): the rank prints its traceback and
  calls ``MPI_Abort``, which ends the whole job.
* Exceptions in the script outside ``map`` are the script's own: run it as
  ``mpiexec -n N python -m mpi4py script.py`` to have any unhandled exception abort the job.
* A worker rank that dies (killed, segfault) cannot be survived under MPI: ``mpiexec`` (MPICH's
  Hydra) notices, kills every other rank at once with SIGKILL and exits non-zero with its own
  "BAD TERMINATION" banner (the dead process's PID and exit code), so the job never hangs. No rank
  survives to say which chunk the dead rank held (rank 0 is killed as abruptly as the others;
  surviving would need ``mpiexec -disable-auto-cleanup`` and MPI fault tolerance, which this
  backend does not use). Nothing is recovered: the job must be rerun. The coordinators' DIED
  handling is therefore never used by this backend. Launched through ``dlbkit run … --ranks N``
  (:mod:`dlbkit.runtime.launch`), every rank keeps a status file (:mod:`dlbkit.runtime.status`) and the
  launcher, outside MPI, names the rank that died and what it was doing in one line.
* Rank 0 that dies or gets SIGTERM: it ends (the local backend's SIGTERM handling is not installed
  here), and ``mpiexec`` kills every other rank the same way (``tests/runtime/test_mpi.py``).
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from typing import Any

from dlbkit.errors import ConfigError, DlbkitError, TaskError
from dlbkit.runtime.emulation import Emulation
from dlbkit.runtime import status
from dlbkit.runtime.backends.base import Program, UserCode, drive, user_frame
from dlbkit.runtime.backends.deferred import Deferred
from dlbkit.runtime.backends.mpi_messages import Failed, Succeeded
from dlbkit.runtime.backends.mpi_transport import MPITransport, RankConn, abort_job, load_mpi, quiet_barrier

__all__ = ["run", "rank", "start_run", "emulation_problem", "serve_rank", "coordinate_rank", "agree", "check_workers",
           "Rejected"]

_failed = False  # a run of this process failed: its worker ranks have left the job


def _reason(e: BaseException, transport: MPITransport | None) -> str:
    """One line telling the worker ranks why rank 0 ended the run."""
    if isinstance(e, TaskError):
        where = f" on rank {transport.error_rank}" if transport and transport.error_rank else ""
        return f"{e.label} failed{where} (traceback on rank 0)"  # named as the TaskError names it
    if isinstance(e, KeyboardInterrupt):
        return "rank 0 was interrupted"
    first = str(e).strip().splitlines()[0] if str(e).strip() else ""
    where = user_frame(e)  # the user's code on rank 0 (a balancer's rule): no worker failed
    by = f" (raised by {where} on rank 0)" if where is not None else ""
    return f"rank 0 stopped the run: {type(e).__name__}: {first}".rstrip(": ") + by


def start_run(problem_of: Callable[[int], ConfigError | None], payload: Any = None):
    """The start every MPI run shares, called on every rank.

    Check the job (at least 2 ranks, no earlier failed run), take a private communicator, fix run
    time 0 right after a barrier (the quiet one gathers the ranks without spinning, so the real one
    is left with nothing to wait for but itself), and broadcast rank 0's verdict on the arguments
    (``problem_of(size)``: a ConfigError or None) with rank 0's *payload* and clock origin. A
    rejected run ends on every rank: rank 0 raises the ConfigError, the others exit with one line.
    Return ``(comm, rank, size, origin, origin0, payload)``.
    """
    MPI = load_mpi()
    world = MPI.COMM_WORLD
    size, rank = world.Get_size(), world.Get_rank()
    status.open_for(rank)  # a launched job (dlbkit run --ranks): what this rank does, for the launcher
    status.doing("starting the run")
    if size < 2:
        raise ConfigError("MPI ranks", size, "at least 2 for backend 'mpi' (rank 0 coordinates, the others "
                          "compute): start the script with mpiexec -n 3 python script.py")
    if _failed:
        raise DlbkitError("a previous MPI run of this job failed and its worker ranks have left: "
                          "the job cannot run another one")
    problem = None
    try:
        comm = world.Dup()
        quiet_barrier(comm)
        comm.Barrier()
        origin = time.perf_counter()
        if rank == 0:
            problem = problem_of(size)
        header = (_verdict(problem), origin, payload) if rank == 0 else None
        verdict, origin0, payload = comm.bcast(header, root=0)
    except BaseException:  # noqa: BLE001 - any failure here must end the whole job, not hang it
        abort_job("unexpected error while starting the MPI run", rank)
    if verdict is not None:
        comm.Free()
        status.done()
        if rank == 0:
            raise problem
        raise Rejected(rank, 0, verdict)
    return comm, rank, size, origin, origin0, payload


class Rejected(SystemExit):
    """How a rank ends when another rank rejected the run (start-up's argument check or :func:`agree`):
    one line, ``dlbkit: rank 1 stopping: rank 0 rejected the run: …``. *error* is that rank's
    ConfigError, rebuilt here (its value as that rank's ``repr``), or None for another exception: a
    caller that names its fields otherwise (the CLI: ``--emulate`` for ``emulate``, as it does on the
    refusing rank) says the same line with :meth:`naming`."""

    def __init__(self, rank: int, by: int, verdict: tuple):
        self.rank, self.by, self.verdict = rank, by, tuple(verdict)
        self.error = _rebuilt(verdict)
        super().__init__(f"dlbkit: rank {rank} stopping: rank {by} rejected the run: {verdict[3]}")

    def __reduce__(self):
        # an exception pickles as cls(*args), and args is the one line: rebuild from the parts instead
        # (copy.copy, or a process pool handing it back, failed with a TypeError)
        return type(self), (self.rank, self.by, self.verdict)

    def naming(self, error: ConfigError) -> "Rejected":
        """The same end, saying *error* (this one's ConfigError, renamed) instead."""
        return Rejected(self.rank, self.by, _verdict(error))


def _verdict(problem: BaseException | None) -> tuple | None:
    """*problem* as the ranks pass it to each other (a ConfigError's parts, its value as a ``repr``:
    any value pickles), or None."""
    if problem is None:
        return None
    if isinstance(problem, ConfigError):
        return (problem.field, repr(problem.value), problem.allowed, str(problem), problem.suggest)
    return (None, None, None, f"{type(problem).__name__}: {problem}", None)


def _rebuilt(verdict: tuple, note: str = "") -> ConfigError | None:
    """The ConfigError another rank passed as *verdict* (*note* added to what is allowed), or None
    when it passed another exception."""
    field, value, allowed, _, suggest = verdict
    return None if field is None else ConfigError(field, _Shown(value), allowed + note, suggest=suggest)


def check_workers(workers: int) -> None:
    """A worker count the user gave must be the job's worker ranks."""
    size = load_mpi().COMM_WORLD.Get_size()
    if workers != size - 1:
        raise ConfigError("workers", workers, f"the MPI job's worker ranks ({size - 1}: all ranks but rank 0), or None")


def agree(checks: Callable[[], Any]) -> Any:
    """Run an entry point's argument *checks* on every rank and agree on the verdict before any run:
    their value when every rank's checks passed. A failure on any rank ends the call on every rank: a
    rank that failed raises its own error; rank 0, if only others failed, raises the first one's
    ConfigError (saying which rank), or a DlbkitError naming another exception (one rank's items'
    generator raising, say); the other ranks exit with one line. Raised on one rank
    alone (one rank's own items, balancer or worker count), the others went on into the run and
    waited for it forever. Called by every rank once per entry point (one ``allgather`` of a short
    string); only refusals are compared, not the arguments themselves (docs/api.md, "Errors": every rank
    must pass the same; rank 0's are the run's). A rank given another ``backend=`` never comes here (a
    local run takes no part in MPI, as it must on a rank running one alone): the others wait for it."""
    problem = None
    try:
        out = checks()
    except Exception as e:  # noqa: BLE001 - any failure of one rank's checks (its items' generator
        # raising, say) must reach the others, or they wait for it for ever; it is raised below
        out, problem = None, e
    world = load_mpi().COMM_WORLD
    me = world.Get_rank()
    if world.Get_size() < 2 or _failed:  # start_run refuses these (the other ranks are gone, or none)
        if problem is not None:
            raise problem
        return out
    said = world.allgather(_verdict(problem))
    first = next((k for k, v in enumerate(said) if v is not None), None)
    if first is None:
        return out
    if problem is not None:
        raise problem
    if me == 0:
        error = _rebuilt(said[first], f" (rank {first}'s argument: every rank must pass the same)")
        raise error or DlbkitError(f"rank {first} failed checking its arguments: {said[first][3]} "
                                   "(every rank must pass the same)")
    raise Rejected(me, first, said[first])


class _Shown(str):
    """Another rank's value, shown as that rank's ``repr`` of it."""

    def __repr__(self) -> str:
        return str(self)


def from_rank0(value: Any) -> Any:
    """Rank 0's *value* on every rank (one ``bcast`` on ``COMM_WORLD``; every rank calls it at the same
    point of the script, between runs: what rank 0 alone read, a journal, say)."""
    return load_mpi().COMM_WORLD.bcast(value, root=0)


def rank() -> int:
    """This process's rank in ``COMM_WORLD`` (0 coordinates)."""
    return load_mpi().COMM_WORLD.Get_rank()


def emulation_problem(emulation: Emulation | None, size: int) -> ConfigError | None:
    """An emulation must give one speed per worker rank."""
    if emulation is not None and emulation.n_workers != size - 1:
        return ConfigError("emulate", list(emulation.speeds),
                           f"one speed per worker rank: {size - 1} for this {size}-rank MPI job (rank 0 coordinates)")
    return None


def run(program: Program, *, workers: int | None = None) -> tuple:
    """Every rank calls this; rank 0 coordinates, the others run the family's worker loop; every
    rank returns the outcome. *workers*, if the user gave it, must be the job's worker ranks."""
    if workers is not None:
        check_workers(workers)
    with Deferred() as signals:  # the user's signal handlers run where no rank's conversation is half done
        comm, rank, size, origin, _origin0, shared = start_run(
            lambda size: emulation_problem(program.emulation, size) or program.problem(size - 1, "mpi"), program.shared())
        program.setup(size - 1, origin, shared)
        outcome = program.empty(size - 1, "mpi")
        if outcome is not None:
            comm.Free()
            status.done()
            return outcome
        if rank == 0:
            return coordinate_rank(comm, program, signals)
        return serve_rank(comm, rank, program, signals)


def coordinate_rank(comm, program: Program, signals: Deferred | None = None) -> tuple:
    """Rank 0: the family's coordinator on an :class:`MPITransport`, then the outcome to every rank
    (or, when it failed, every worker stopped and told why, and the error raised here)."""
    global _failed
    transport = MPITransport(comm, mesh=program.mesh)
    transport.signals = signals
    status.doing("coordinating the run")
    try:
        outcome = drive(program, transport, "mpi")
        if transport.signalled is not None:  # a worker rank's handler raised after its last unit of work
            raise transport.signalled
    except BaseException as e:
        _failed = True
        status.doing("stopping the worker ranks after: %s", _reason(e, transport))
        try:
            transport.stop(kill=True)  # no-op when the coordinator has done it
            quiet_barrier(comm)
            comm.bcast(Failed(program.failure_reason(e) or _reason(e, transport)), root=0)
            comm.Free()
        except BaseException:  # noqa: BLE001 - any failure here must end the whole job, not hang it
            abort_job("could not stop the worker ranks cleanly; aborting the MPI job")
        status.done()
        raise
    try:
        outcome[-1].meta["ranks"] = comm.Get_size()
        quiet_barrier(comm)
        comm.bcast(Succeeded(program.for_workers(outcome)), root=0)
        comm.Free()
    except BaseException:  # noqa: BLE001 - ditto
        abort_job("could not send the results to the worker ranks; aborting the MPI job")
    status.done()
    return outcome


class _Interruptible(UserCode):
    """Ctrl-C on a worker rank interrupts the user's code, never dlbkit's own.

    ``mpiexec`` forwards Ctrl-C to every rank. While ``inside`` (the family's worker loop enters
    this :class:`~.base.UserCode` around each call of the user's code), the KeyboardInterrupt is
    reported like any failure of the item or task (Error), the rank leaves its loop at once and
    waits for rank 0's Stop; anywhere else (waiting for work, sending a result) it is ignored:
    rank 0, which got the same Ctrl-C, stops the run.
    """

    __slots__ = ()

    def on_sigint(self, signum, frame) -> None:
        if self.inside:
            raise KeyboardInterrupt


def serve_rank(comm, rank: int, program: Program, signals: Deferred | None = None) -> tuple:
    """A worker rank: ``program.serve(conn, rank - 1, *program.worker_args("mpi"))`` with Ctrl-C
    ignored, or interrupting only the user's code when ``program.interruptible`` (rank 0 alone
    decides how the run ends), then rank 0's outcome. Return it when the run succeeded; otherwise
    leave the job with one line (the error was reported on rank 0)."""
    global _failed
    guard = _Interruptible() if program.interruptible else None
    extra = {"interruptible": guard} if guard is not None else {}
    if signals is not None and guard is not None:  # in the user's function a handler runs at once
        signals.inside = lambda: guard.inside
    old = None
    if threading.current_thread() is threading.main_thread():
        old = signal.signal(signal.SIGINT, guard.on_sigint if guard is not None else signal.SIG_IGN)
    try:
        status.doing("waiting for its first work")
        conn = RankConn(comm, mesh=program.mesh)
        conn.signals = signals
        try:
            program.serve(conn, rank - 1, *program.worker_args("mpi"), **extra)
        finally:  # a signal at the very return of UserCode.__enter__ skips __exit__: never left marked
            if guard is not None:
                guard.inside = False
        status.doing("waiting for rank 0's outcome")
        conn.close()
        quiet_barrier(comm)
        said = comm.bcast(None, root=0)
        comm.Free()
    except BaseException:  # noqa: BLE001 - any failure here must end the whole job, not hang it
        abort_job("unexpected error on a worker rank; aborting the MPI job", rank)
    finally:
        if old is not None:
            signal.signal(signal.SIGINT, old)
    status.done()
    if conn.signalled is not None:  # this rank's handler raised: rank 0 ended the run; it ends as the handler said
        _failed = True
        raise conn.signalled
    if type(said) is Succeeded:
        return said.outcome
    _failed = True
    raise SystemExit(f"dlbkit: rank {rank} stopping: {said.reason}")
