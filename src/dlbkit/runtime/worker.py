"""The worker side of ``dlbkit.map``: run the user's function on the chunks the coordinator sends.

A worker asks for work by reporting (READY first, then each DONE doubles as the next request), times
every item with ``time.perf_counter`` and, when emulating a slower node, sleeps so that the chunk
takes as long as it would there. It never decides anything: chunk sizes come from the coordinator.
"""

from __future__ import annotations

import pickle
import time
import traceback
from typing import Any, Callable, Sequence

from .emulation import Emulation
from .messages import DONE, ERROR, READY, STOP

__all__ = ["serve", "run_chunk"]


def run_chunk(fn: Callable, items: Sequence | None, payload: Sequence | None, first: int, count: int,
              w: int, emulation: Emulation | None, origin: float, conn_send: Callable,
              interruptible: Any = None) -> bool:
    """Compute one chunk and report it; False if the user's function raised (reported as ERROR).

    *interruptible*, if given, has a boolean ``inside`` that is true exactly while the chunk's
    items are being computed (an MPI rank lets Ctrl-C interrupt only that part).
    """
    source, offset = (payload, 0) if payload is not None else (items, first)
    results = [None] * count
    item_time = [0.0] * count
    clock = time.perf_counter
    j = 0
    t_start = t_prev = clock()
    if interruptible is not None:
        interruptible.inside = True
    try:
        for j in range(count):
            results[j] = fn(source[offset + j])
            t = clock()  # one clock read per item: the end of one item starts the next
            item_time[j] = t - t_prev
            t_prev = t
    except BaseException as e:  # noqa: BLE001 - every failure of user code goes to the caller
        if interruptible is not None:
            interruptible.inside = False
        conn_send((ERROR, first + j, _pickled(e), traceback.format_exc()))
        return False
    if interruptible is not None:
        interruptible.inside = False
    if emulation is not None:
        end = t_start + emulation.duration(w, t_start - origin, t_prev - t_start)
        delay = end - clock()
        if delay > 0:
            time.sleep(delay)
    conn_send((DONE, first, count, results, t_start, clock(), item_time))
    return True


def serve(conn, w: int, fn: Callable, items: Sequence | None, emulation: Emulation | None,
          origin: float, interruptible: Any = None) -> None:
    """Process entry point of a local worker: serve chunks until STOP or the coordinator goes away."""
    send = conn.send
    try:
        send((READY, time.perf_counter()))
        while True:
            msg = conn.recv()
            if msg[0] == STOP:
                return
            _, first, count, payload = msg
            if not run_chunk(fn, items, payload, first, count, w, emulation, origin, send, interruptible):
                return
    except (EOFError, BrokenPipeError, ConnectionResetError):
        return  # the coordinator ended the run


def _pickled(e: BaseException) -> bytes | None:
    try:
        return pickle.dumps(e)
    except Exception:  # noqa: BLE001 - an unpicklable exception still reaches the caller as text
        return None
