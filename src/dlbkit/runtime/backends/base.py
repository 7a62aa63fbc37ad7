"""What the backends and the families share: the transport interface, the program interface, and the
one path from a failure of user code to :class:`~dlbkit.errors.TaskError`.

A **backend** (:mod:`.local`, :mod:`.mpi`, :mod:`.dask`) owns everything that is not a family's rule: starting the
workers, moving messages (a :class:`Transport`), noticing a dead worker (a ``Died`` message),
fixing run time 0, broadcasting the outcome, aborting, stopping and cleaning up. A family's **program**
(``dlbkit.families.<family>.runtime.program``) supplies only its coordinator rules and its worker loop,
as a :class:`Program` object that a backend executes with :func:`dlbkit.runtime.backends.execute`.

The error path: a worker that catches an exception of the user's code sends :func:`error_message`, an
:class:`~dlbkit.runtime.messages.Error` (where, the pickled exception or None, the traceback text);
the coordinator turns it into a :class:`TaskError` with :func:`task_error` and raises it; the backend stops every worker
(:func:`drive`) and, under MPI, tells the worker ranks why. A message the worker cannot pickle (a
result, a task, a value of the user's) takes the same path: :func:`send_or_report` sends instead an
``Error`` naming the first part that cannot be pickled, and why.
"""

from __future__ import annotations

import itertools
import os
import pickle
import sysconfig
import traceback
from abc import ABC, abstractmethod
from multiprocessing.reduction import ForkingPickler
from typing import Any, Callable, Iterable

from dlbkit.errors import ConfigError, RemoteTraceback, TaskError, in_dlbkit
from dlbkit.runtime.emulation import Emulation
from dlbkit.runtime.messages import Error
from dlbkit.runtime.progress import Progress

__all__ = ["COORDINATOR", "Transport", "Program", "drive", "task_error", "error_message", "pickled", "short_repr", "unpicklable",
           "send_or_report", "user_frame", "UserCode"]

#: ``send_to``'s destination for the coordinator (a worker's index is 0 … n - 1)
COORDINATOR = -1


class Transport(ABC):
    """What a coordinator needs: ``n_workers``, ``send(w, msg)``, ``recv(timeout)`` and ``stop()``."""

    n_workers: int
    #: True when the workers already hold the items (no need to send them with each chunk)
    shares_items: bool = False

    @abstractmethod
    def send(self, w: int, msg: tuple) -> None:
        """Send *msg* to worker *w* (silently dropped if *w* has died: its death is reported)."""

    @abstractmethod
    def recv(self, timeout: float | None = None) -> tuple[int, tuple] | None:
        """The next message as (worker, msg), or None after *timeout* seconds without one."""

    @abstractmethod
    def stop(self, *, kill: bool = False) -> None:
        """End every worker (after Stop was sent, or by force with *kill*)."""


class UserCode:
    """Marks where a worker runs the user's code: ``with user:`` around each call of it (a map's
    chunk, a tree's ``expand``/``combine``, an SPMD step, a graph task), inside the ``try`` that
    reports its failure as the item's or the task's. :attr:`inside` is true exactly within.

    The MPI backend gives each worker rank's loop one (``interruptible=``, see
    :attr:`Program.interruptible`) and reads :attr:`inside` from its signal handlers: Ctrl-C then
    interrupts the user's code only, and a user's own handler (a SIGALRM timeout, say) runs at once
    there instead of at the rank's next wait, so what either raises fails that task. Elsewhere (the
    local backend) the loop makes a private one that nobody reads. A class, not a generator-based
    context manager: a tree's tasks may take microseconds, and entering costs one attribute store.
    """

    __slots__ = ("inside",)

    def __init__(self):
        self.inside = False

    def __enter__(self) -> None:
        self.inside = True

    def __exit__(self, *exc) -> None:
        self.inside = False


class Program(ABC):
    """One real run of a family's program, as a backend executes it: its coordinator rules and its worker loop.

    A backend calls, in this order (``backend`` is ``"local"``, ``"mpi"`` or ``"dask"``; the Dask
    backend calls steps 1, 3 and 4, then :attr:`answer` on the workers, or where there is none
    ``serve`` as one Dask task per worker with :meth:`worker_args_at` that worker's clock):

    1. ``empty(n)`` (local: before anything starts, with the workers asked for or None): the
       outcome of a run with nothing to do, or None. Under MPI it is asked after step 4.
    2. ``default_workers(cpus)``: the worker count when the user gave none (local only).
    3. ``problem(n, backend)``: a :class:`ConfigError` if the run cannot go on *n* workers, or None
       (local: raised before any worker starts; MPI: rank 0's verdict, raised on rank 0 while the
       other ranks leave with one line).
    4. ``setup(n, origin, shared)`` on every process (every rank): fix the worker count, run time 0
       (a ``time.perf_counter()`` reading) and ``shared`` (rank 0's :meth:`shared`, broadcast under
       MPI so the ranks cannot disagree).
    5. Worker side: ``serve(conn, w, *worker_args(backend))`` (``conn`` has ``send``/``recv`` of
       a pipe end; under MPI an interruptible family's worker also gets ``interruptible=``, a
       :class:`UserCode`, see :attr:`interruptible`).
       Coordinator side: ``coordinate(transport, backend)``, which returns the run's **outcome**, a
       tuple whose last element is its :class:`~dlbkit.model.trace.Trace`; it sends Stop and calls
       ``transport.stop()`` when it ends normally. On any exception the backend stops every worker
       by force and closes :attr:`progress` (:func:`drive`).
    6. MPI only: rank 0 broadcasts ``for_workers(outcome)``; every rank returns an outcome.
       A failure is described to the worker ranks by ``failure_reason(e)`` (None: the backend's words).

    Worker messages carry **run times** (seconds since run time 0 on the sender's own clock), so
    no backend rewrites a message.
    """

    #: the emulated heterogeneity (rank 0's is broadcast under MPI)
    emulation: Emulation | None = None
    #: the progress bar, closed by the backend however the run ends
    progress: Progress | None = None
    #: whether the local backend warns of more workers than CPUs; False for a family whose caller
    #: warns itself (``dlbkit.Cluster`` starts its nodes from a thread of its own, where the warning
    #: could not point at the user's line)
    warns_oversubscription: bool = True
    #: True: ``serve`` takes ``interruptible=`` (a :class:`UserCode`, or None) and marks with it each
    #: call of the user's code, where on an MPI worker rank Ctrl-C and a user's signal handler
    #: interrupt it (the task fails); False: Ctrl-C is ignored on a worker rank and a user's handler
    #: waits for the rank's next wait
    interruptible: bool = False
    #: the worker loop, a module-level function ``serve(conn, w, *args)`` (picklable for spawn)
    serve: Callable[..., None]
    #: the workers talk to one another, not only to the coordinator (the cluster's nodes): each
    #: worker's ``conn`` then also has ``send_to(dst, msg, droppable=False)``, which sends to worker
    #: *dst* (or to the coordinator, :data:`COORDINATOR`) without holding up the worker's loop on a
    #: peer (locally queued and written in the order posted; under MPI a pending send, ordered per
    #: destination), ``drain(peer)`` (what a dead peer sent that is not yet taken; nothing under MPI,
    #: where no worker outlives a peer), and its ``poll``/``recv`` take messages from the coordinator
    #: and from every other worker (:class:`~.local_mesh.MeshConn` locally, :class:`~.mpi_transport.RankConn`)
    mesh: bool = False
    #: run time 0, a ``time.perf_counter()`` reading on the coordinator (set by :meth:`setup`)
    origin: float = 0.0
    #: the worker as one answer per message, for a backend that runs each message to a worker as a task
    #: of its own (:mod:`.dask`): a module-level function ``answer(send, msg, w, origin, *answer_args(backend))``
    #: that calls ``send`` with each reply (nothing kept from one message to the next); *msg* None first,
    #: for what the worker says when it starts; *origin* run time 0 on that worker's clock. None: the
    #: family's workers keep state between messages and run only as the loop :attr:`serve`
    answer: Callable[..., None] | None = None

    def worker_args_at(self, backend: str, origin: float) -> tuple:
        """:meth:`worker_args` for a worker whose clock reads *origin* at run time 0 (the Dask backend's
        worker on another machine). A family whose worker arguments hold run time 0 moves it here; by
        default the arguments hold none."""
        return self.worker_args(backend)

    def answer_args(self, backend: str) -> tuple:
        """The arguments of :attr:`answer` after ``(send, msg, w, origin)``, sent to every worker once
        (none by default: a family with an ``answer`` that needs some names them here)."""
        return ()

    def task_name(self, msg: tuple) -> str:
        """What *msg* asks, in words a user reads on a Dask dashboard (the chunk's or the task's name)."""
        return type(msg).__name__

    def empty(self, n_workers: int | None, backend: str) -> tuple | None:
        return None

    def default_workers(self, cpus: int) -> int:
        return cpus

    def problem(self, n_workers: int, backend: str) -> ConfigError | None:
        return None

    def shared(self) -> Any:
        return self.emulation

    def setup(self, n_workers: int, origin: float, shared: Any) -> None:
        self.emulation = shared

    @abstractmethod
    def worker_args(self, backend: str) -> tuple:
        """The arguments of :attr:`serve` after ``(conn, w)``."""

    @abstractmethod
    def coordinate(self, transport: Transport, backend: str) -> tuple:
        """Drive the workers to the end; the outcome (its last element the Trace)."""

    def for_workers(self, outcome: tuple) -> tuple:
        return outcome

    def sent_to_workers(self) -> list[tuple[str, Any]]:
        """``(argument name, object)`` of the user's objects the workers receive pickled when they do
        not inherit them (local start methods other than fork); checked before any worker starts."""
        return []

    def failure_reason(self, e: BaseException) -> str | None:
        return None


def drive(program: Program, transport: Transport, backend: str) -> tuple:
    """Run *program*'s coordinator on *transport*: whatever fails, no worker is left behind. An
    exception of the user's code that runs in the coordinator (a balancer's rule, a tree's *combine*)
    gets a note naming that function, so that it is not taken for a worker's failure."""
    try:
        return program.coordinate(transport, backend)
    except BaseException as e:
        transport.stop(kill=True)
        where = user_frame(e)
        if where is not None and not isinstance(e, TaskError):  # a TaskError names its unit already
            e.add_note(f"dlbkit: raised by {where} in the coordinator ({'rank 0' if backend == 'mpi' else 'this process'}), "
                       "not in a worker")
        raise
    finally:
        if program.progress:
            program.progress.close()


def user_frame(e: BaseException) -> str | None:
    """The user's function that dlbkit called and that raised *e* (itself or in what it called), as
    ``"Boom.decide (job.py:7)"`` at its line that raised or made the failing call: the first frame
    after dlbkit's last one that is not the standard library's. None when dlbkit raised it, when only
    the standard library ran after dlbkit (a pipe's error; Ctrl-C in a wait: ``selectors.py`` is no
    one's failing code), for a ``KeyboardInterrupt`` or ``SystemExit`` (a signal or an exit, not a
    failure of whatever ran), or when the traceback is gone."""
    if not isinstance(e, Exception):
        return None
    frames = []
    tb = e.__traceback__
    while tb is not None:
        frames.append((tb.tb_frame.f_code, tb.tb_lineno))
        tb = tb.tb_next
    last = max((i for i, (code, _) in enumerate(frames) if in_dlbkit(code.co_filename)), default=-1)
    for code, line in frames[last + 1:]:
        if not _in_stdlib(code.co_filename):
            name = getattr(code, "co_qualname", code.co_name)
            return f"{name} ({os.path.basename(code.co_filename)}:{line})"
    return None


def _stdlib_dirs() -> tuple[tuple[str, ...], tuple[str, ...]]:
    paths = sysconfig.get_paths()
    std = tuple(os.path.abspath(paths[k]) + os.sep for k in ("stdlib", "platstdlib") if k in paths)
    installed = tuple(os.path.abspath(paths[k]) + os.sep for k in ("purelib", "platlib") if k in paths)
    return std, installed


_STDLIB, _INSTALLED = _stdlib_dirs()


def _in_stdlib(filename: str) -> bool:
    """Whether *filename* is the standard library's (a frozen module's ``<frozen ...>`` too); an
    installed package's site-packages, inside it on some layouts, is not, nor the user's code typed
    in (``<stdin>``, ``<string>`` of ``python -c``, a notebook's ``<ipython-input-…>``)."""
    if filename.startswith("<"):
        return filename.startswith("<frozen ")
    path = os.path.abspath(filename)
    return path.startswith(_STDLIB) and not path.startswith(_INSTALLED)


def pickled(e: BaseException) -> bytes | None:
    """*e* pickled, or None if it cannot be (it still reaches the caller as text)."""
    try:
        return pickle.dumps(e)
    except Exception:  # noqa: BLE001 - an unpicklable exception still reaches the caller as text
        return None


def error_message(index: Any, e: BaseException) -> Error:
    """The message a worker sends when the user's code raised *e* at *index* (call it inside the ``except``)."""
    return Error(index=index, exception=pickled(e), traceback=traceback.format_exc())


def unpicklable(obj: Any) -> str | None:
    """Why *obj* cannot be pickled (one line: the exception's type and message), or None if it can."""
    try:
        ForkingPickler.dumps(obj)
    except Exception as e:  # noqa: BLE001 - any failure to pickle is the answer
        text = " ".join(str(e).split())
        return f"{type(e).__name__}: {text}" if text else type(e).__name__
    return None


def send_or_report(send: Callable[[Any], None], msg: tuple,
                   parts: Callable[[], Iterable[tuple[Any, str, Any]]],
                   replace: Callable[[tuple, Any, Error], tuple] | None = None) -> bool:
    """``send(msg)``; True if it went. If *msg* could not be pickled, send instead an
    :class:`~dlbkit.runtime.messages.Error` for the first of *parts()* — ``(index, what, object)``
    triples, *what* naming the object in words — that cannot be pickled, and return False (the
    worker then ends, as after any failure of user code). With *replace* (a run that returns
    exceptions in place of results), each part that cannot be pickled is replaced in the message
    by its Error instead (``replace(msg, index, error)`` gives the new message), which is sent, and
    the worker goes on. A failure of the transport, or one that no part explains, is raised."""
    try:
        send(msg)
        return True
    except (EOFError, OSError):
        raise
    except Exception:
        bad = ((index, _pickling_error(index, what, reason)) for index, what, obj in parts()
               if (reason := unpicklable(obj)) is not None)  # lazy: a failing run needs only the first
        first = next(bad, None)
        if first is None:
            raise
        if replace is None:
            send(first[1])
            return False
        for index, error in itertools.chain([first], bad):
            msg = replace(msg, index, error)
        send(msg)
        return True


def _pickling_error(index: Any, what: str, reason: str) -> Error:
    e = pickle.PicklingError(f"{what} cannot be pickled to cross to another process: {reason}")
    return Error(index=index, exception=pickled(e), traceback=f"{type(e).__name__}: {e}\n")


def task_error(msg: Error, *, what: str = "item", index: Any = None, label: str | None = None) -> TaskError:
    """The :class:`TaskError` for an :class:`~dlbkit.runtime.messages.Error`: the original exception
    (if it could be rebuilt here) as its cause, and the worker's traceback. *what*, *index* (default
    the message's) and *label* name what failed (:class:`~dlbkit.errors.TaskError`)."""
    exc_bytes, tb = msg.exception, msg.traceback
    index = msg.index if index is None else index
    cause: BaseException = RemoteTraceback(tb)
    if exc_bytes is not None:
        try:
            cause = pickle.loads(exc_bytes)
            cause.__cause__ = RemoteTraceback(tb)
        except Exception:  # noqa: BLE001 - keep the text if the exception cannot be rebuilt here
            pass
    err = TaskError(index, f"{type(cause).__name__}: {cause}" if not isinstance(cause, RemoteTraceback)
                    else tb.strip().splitlines()[-1], tb, what=what, label=label)
    err.__cause__ = cause
    return err


def raised(msg: Error, *, what: str = "item", index: Any = None, label: str | None = None) -> BaseException:
    """What a run that returns exceptions puts in place of the result of *msg*'s unit: the original
    exception, its ``__cause__`` the worker's traceback (as ``concurrent.futures`` gives it), or,
    when it could not be rebuilt here, the :class:`TaskError` that carries its text."""
    err = task_error(msg, what=what, index=index, label=label)
    return err if isinstance(err.__cause__, RemoteTraceback) else err.__cause__


def keep_finished(err: TaskError, results: dict, trace, done: int, of: int, unit: str) -> TaskError:
    """*err* with what was finished when it arrived: *results* (index or key → value) and the
    part's *trace*, marked ``meta["partial"]`` (``failed``: the unit's label, ``done`` of ``of``
    *unit*), which a replay refuses (it needs every unit's cost)."""
    trace.meta["partial"] = {"failed": err.label, "done": done, "of": of, "unit": unit}
    err.results, err.trace = results, trace
    return err


def short_repr(x: Any, limit: int = 200) -> str:
    """``repr(x)``, at most *limit* characters (a task named in an error)."""
    try:
        r = repr(x)
    except Exception:  # noqa: BLE001
        r = f"<{type(x).__name__} object>"
    return r if len(r) <= limit else r[:limit - 3] + "..."
