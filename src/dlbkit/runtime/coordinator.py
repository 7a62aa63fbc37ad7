"""The coordinator of a real divisible run: the runtime twin of the simulator's master.

It owns the same :class:`~dlbkit.model.view.LoopView` and writes the same
:class:`~dlbkit.model.trace.Trace` as :mod:`dlbkit.sim.divisible`, so a chunking balancer cannot
tell a real run from a simulated one and every metric and plot works on both. Measurements arrive
with each worker's result (which doubles as its next request), exactly as in the simulator.

Faults: a worker that dies has its outstanding chunk handed, whole, to the next worker that asks
(results are kept per item and accepted once, so every item is computed and returned exactly once).
An exception in the user's function stops every worker and is raised as :class:`TaskError` with the
item's index and the worker's traceback.
"""

from __future__ import annotations

import math
import pickle
import time
from collections import deque
from typing import Any, Sequence

from ..balancers.base import ChunkingBalancer
from ..errors import DlbkitError, RemoteTraceback, TaskError
from ..model.availability import Constant
from ..model.trace import Trace
from ..model.view import LoopView
from .emulation import Emulation
from .messages import DIED, DONE, ERROR, READY, STOP, WORK
from .progress import Progress
from .transport import Transport

__all__ = ["coordinate"]

_MISSING = object()
POLL_S = 0.2  # how often the progress bar refreshes while no message arrives


def coordinate(transport: Transport, balancer: ChunkingBalancer, items: Sequence, *, origin: float,
               emulation: Emulation | None = None, progress: Progress | None = None,
               rng=None, backend: str = "local") -> tuple[list, Trace]:
    """Drive *transport*'s workers through *items* with *balancer*; return (results, trace)."""
    N = len(items)
    P = transport.n_workers
    speeds = list(emulation.speeds) if emulation else [1.0] * P
    view = LoopView(N, P, speeds)
    balancer.start(view, rng)
    trace = Trace(P, list(range(P)), balancer=balancer.name, source=backend, speeds=speeds,
                  availability=list(emulation.availability) if emulation else [Constant().realise()] * P)
    results: list[Any] = [_MISSING] * N
    item_cost = [0.0] * N  # measured seconds per item (this machine, before emulation)
    outstanding: dict[int, tuple[int, int, float]] = {}  # worker -> (first, count, t_ask)
    requeued: deque[tuple[int, int]] = deque()
    waiting: list[tuple[int, float]] = []  # workers asking while nothing is left to hand out
    alive = set(range(P))
    next_item = 0
    done = 0
    messages = 0
    faults: list[tuple[int, int, int, float]] = []  # (worker, first, count, time) of lost chunks
    send_items = not transport.shares_items
    clock = time.perf_counter

    def give(w: int, t_ask: float) -> None:
        nonlocal next_item, messages
        if requeued:
            first, count = requeued.popleft()
        elif next_item < N:
            view.time = clock() - origin
            view.remaining = N - next_item
            count = int(balancer.chunk(view, w))
            count = 1 if count < 1 else min(count, N - next_item)
            first = next_item
            next_item += count
        else:
            waiting.append((w, t_ask))
            return
        outstanding[w] = (first, count, t_ask)
        payload = list(items[first:first + count]) if send_items else None
        transport.send(w, (WORK, first, count, payload))
        messages += 1

    try:
        while done < N:
            got = transport.recv(POLL_S if progress and progress.enabled else None)
            if got is None:
                if progress:
                    progress.update(done)
                continue
            w, msg = got
            kind = msg[0]
            messages += 1
            if kind == DONE:
                _, first, count, res, t_start, t_end, times = msg
                if outstanding.get(w, (None,))[:2] != (first, count):
                    continue  # a stale copy of a chunk already reassigned: never counted twice
                t_ask = outstanding.pop(w)[2]
                results[first:first + count] = res
                item_cost[first:first + count] = times
                done += count
                t_start -= origin
                t_end -= origin
                _measure(view, w, count, t_start, t_end, t_ask, times)
                trace.add_chunk(w, first, count, t_ask, t_start, t_end)
                if progress:
                    progress.update(done)
                if done < N:
                    give(w, t_end)
            elif kind == READY:
                give(w, msg[1] - origin)
            elif kind == ERROR:
                _, index, exc_bytes, tb = msg
                raise _task_error(index, exc_bytes, tb)
            elif kind == DIED:
                alive.discard(w)
                lost = outstanding.pop(w, None)
                if lost is not None:
                    faults.append((w, lost[0], lost[1], clock() - origin))
                    requeued.append(lost[:2])
                    while requeued and waiting:
                        give(*waiting.pop(0))
                if not alive:
                    raise DlbkitError(f"every worker died (the last, {w}, with exit code {msg[1]}); "
                                      f"{N - done} of {N} items were not computed")
            else:  # pragma: no cover - a protocol error is a bug, never silent
                raise DlbkitError(f"unexpected message {kind!r} from worker {w}")
    except BaseException:
        transport.stop(kill=True)
        raise
    finally:
        if progress:
            progress.close()
    for w in range(P):
        transport.send(w, (STOP,))
    transport.stop()
    n_chunks = len(trace.worker)
    trace.messages = messages + P
    trace.end_time = max(trace.t_end, default=0.0)
    trace.total_work = float(sum(item_cost))
    trace.max_item = float(max(item_cost, default=0.0))
    trace.events = 2 * (n_chunks + P) + n_chunks
    trace.meta.update(mechanism="self-scheduling", backend=backend, item_cost=item_cost, faults=faults,
                      balancer_params=balancer.get_params())
    return results, trace


def _measure(view: LoopView, w: int, count: int, t_start: float, t_end: float, t_ask: float,
             times: Sequence[float]) -> None:
    """Book a chunk's measurements in the view, as the simulator does when a result arrives."""
    dt = t_end - t_start
    busy = sum(times)
    scale = dt / busy if busy > 0 else 0.0  # emulation stretches every item alike
    view.items_done[w] += count
    view.chunks_done[w] += 1
    view.compute_time[w] += dt
    view.sq_item_time[w] += scale * scale * math.fsum(t * t for t in times)
    view.overhead_time[w] += max(t_start - t_ask, 0.0)
    view.last_chunk[w] = count
    view.last_time[w] = dt
    view.updated_at[w] = t_end


def _task_error(index: int, exc_bytes: bytes | None, tb: str) -> TaskError:
    cause: BaseException = RemoteTraceback(tb)
    if exc_bytes is not None:
        try:
            cause = pickle.loads(exc_bytes)
            cause.__cause__ = RemoteTraceback(tb)
        except Exception:  # noqa: BLE001 - keep the text if the exception cannot be rebuilt here
            pass
    err = TaskError(index, f"{type(cause).__name__}: {cause}" if not isinstance(cause, RemoteTraceback)
                    else tb.strip().splitlines()[-1], tb)
    err.__cause__ = cause
    return err
