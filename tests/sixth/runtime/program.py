"""The bags family's real run: the coordinator places every task (the balancer deciding on a
:class:`~sixth.model.view.BagView` of estimated loads, as the simulator does with ``dispatch_time`` 0)
and sends it to its worker; each worker runs the user's function on its tasks in the order received.

The outcome is ``(values in task order, trace)``; the trace (family ``bags``) has one interval per task
on the worker that ran it, its measured seconds as the task's work (speed 1: a real run knows no speeds).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from sixth.balancers import decide
from sixth.model.view import BagView
from sixth.runtime.messages import Done, Take

from dlbkit.errors import DlbkitError
from dlbkit.model.availability import Constant
from dlbkit.model.trace import Trace
from dlbkit.runtime.backends import execute
from dlbkit.runtime.backends.base import Program, UserCode, error_message, send_or_report, task_error
from dlbkit.runtime.messages import Died, Error, Stop

__all__ = ["BagRun", "run_bags", "serve_bags"]


def serve_bags(conn, w: int, fn: Callable, origin: float, interruptible: UserCode | None = None) -> None:
    """The worker loop: ``fn(arg)`` for each task sent, until Stop or the coordinator goes away."""
    user = interruptible or UserCode()
    clock = time.perf_counter
    try:
        while True:
            msg = conn.recv()
            if type(msg) is Stop:
                return
            t0 = clock()
            try:
                with user:
                    value = fn(msg.arg)
            except BaseException as e:  # noqa: BLE001 - every failure of user code goes to the caller
                conn.send(error_message(msg.index, e))
                return
            if not send_or_report(conn.send, Done(msg.index, value, t0 - origin, clock() - origin),
                                  lambda i=msg.index, v=value: ((i, "the result", v),)):
                return
    except (EOFError, BrokenPipeError, ConnectionResetError):
        return  # the coordinator ended the run


class BagRun(Program):
    """*args* (one per task, estimated *sizes*) placed by *balancer* on the workers."""

    serve = staticmethod(serve_bags)
    interruptible = True

    def __init__(self, fn: Callable, args: Sequence, sizes: Sequence[float], balancer, rng):
        self.fn, self.args, self.sizes, self.balancer, self.rng = fn, list(args), list(sizes), balancer, rng
        self.origin, self.n = 0.0, 0

    def setup(self, n_workers: int, origin: float, shared: Any) -> None:
        self.n, self.origin, self.emulation = n_workers, origin, shared

    def worker_args(self, backend: str) -> tuple:
        return (self.fn, self.origin)

    def sent_to_workers(self) -> list[tuple[str, Any]]:
        return [("fn", self.fn)]

    def coordinate(self, transport, backend: str) -> tuple:
        n, N = transport.n_workers, len(self.args)
        view = BagView(n, [1.0] * n, remaining=N)
        self.balancer.start(view, self.rng)
        trace = Trace(n_nodes=n, node_of=list(range(n)), balancer=self.balancer.name, source=backend, family="bags")
        placed_at, placement = [0.0] * N, [0] * N
        for k, arg in enumerate(self.args):  # every task placed now, in order: the simulator's dispatch_time 0
            view.time, view.next_size = time.perf_counter() - self.origin, self.sizes[k]
            w = decide.pick(self.balancer, view)
            view.loads[w] += self.sizes[k]
            view.tasks[w] += 1
            view.remaining -= 1
            placed_at[k], placement[k] = view.time, w
            transport.send(w, Take(k, arg))
        values: list[Any] = [None] * N
        busy = [0.0] * N
        got = 0
        while got < N:
            msg = transport.recv(0.5)
            if msg is None:
                continue
            w, m = msg
            kind = type(m)
            if kind is Done:
                values[m.index], busy[m.index] = m.value, m.t_end - m.t_start
                view.loads[w] -= self.sizes[m.index]
                view.updated_at[w] = m.t_end
                trace.add_interval(w, m.index, 1, placed_at[m.index], m.t_start, m.t_end)
                got += 1
            elif kind is Error:
                raise task_error(m, what="task")
            elif kind is Died:
                raise DlbkitError(f"worker {w} died (exit code {m.exitcode}) before its tasks were done")
        for w in range(n):
            transport.send(w, Stop())
        transport.stop()
        trace.speeds, trace.availability = [1.0] * n, [Constant(1.0).realise() for _ in range(n)]
        trace.total_work, trace.max_item = float(sum(busy)), float(max(busy, default=0.0))
        trace.messages, trace.end_time = 2 * N + n, trace.makespan
        trace.meta["placement"] = placement
        return values, trace


def run_bags(fn: Callable, args: Sequence, sizes: Sequence[float], balancer, *, backend: str = "local",
             workers: int | None = None, rng=None, start_method: str | None = None) -> tuple[list, Trace]:
    """The family's runner: every task on *backend*; ``(values in task order, trace)``. *balancer* is resolved."""
    return execute(BagRun(fn, args, sizes, balancer, rng), backend, workers=workers, start_method=start_method)
