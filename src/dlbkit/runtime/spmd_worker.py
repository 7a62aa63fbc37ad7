"""The worker side of ``dlbkit.spmd``: own a contiguous block of rows, step it, ship slabs.

A worker holds its block between iterations and does only what the coordinator asks; it decides
nothing. Messages (first element a kind; ``STOP`` and ``ERROR`` are the runtime's own, so the MPI
transport's stop/drain protocol works unchanged):

Coordinator → worker:

* ``(INIT, block)``: the worker's first rows.
* ``(STEP, it, lo, hi)``: compute iteration *it* on ``concatenate([lo, block, hi])`` (*lo*/*hi* are
  the ``halo`` rows above and below the block: the neighbours' edge rows after iteration it − 1, or
  the domain's fixed boundary rows at the global edges).
* ``(SHIP, side, k)``: give away the *k* rows at *side* (``"lo"``: the first rows, ``"hi"``: the last).
* ``(TAKE, side, rows)``: add *rows* at *side* (they come from the neighbour on that side).
* ``(GATHER,)``: send the block back; ``(STOP,)``: leave.

Worker → coordinator:

* ``(STEPPED, it, top, bottom, work, t_start, t_end)``: the block's first and last ``halo`` rows
  after iteration *it*, the measured seconds of ``step`` on this machine (*work*), and when the
  step began and ended (run time; *t_end* includes the emulated stretch).
* ``(SHIPPED, rows, top, bottom)``, ``(TOOK, top, bottom)``: after a transfer, with the new edges.
* ``(BLOCK, block)``; ``(ERROR, it, exc_bytes, traceback_text)`` when *step* raised (or returned
  a block of the wrong shape).
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .emulation import Emulation
from .messages import ERROR, STOP
from .worker import _pickled

__all__ = ["SpmdSpec", "serve_spmd"]

INIT = "init"
STEP = "step"
STEPPED = "stepped"
SHIP = "ship"
SHIPPED = "shipped"
TAKE = "take"
TOOK = "took"
GATHER = "gather"
BLOCK = "block"


@dataclass
class SpmdSpec:
    """What every worker needs (sent once, with the process or broadcast under MPI)."""

    step: Callable[[np.ndarray], Any]
    halo: int
    emulation: Emulation | None = None
    origin: float = 0.0  # perf_counter reading that is run time 0 on this process


def _step(spec: SpmdSpec, w: int, it: int, block: np.ndarray, lo, hi, send) -> tuple | None:
    """One iteration: (new block, message to send), or None after reporting an ERROR."""
    clock = time.perf_counter
    t_start = clock()
    try:
        ext = np.concatenate([lo, block, hi])
        new = np.asarray(spec.step(ext))
        if new.shape != block.shape:
            raise ValueError(f"step returned an array of shape {new.shape}; expected {block.shape} "
                             f"(its input without the {spec.halo} halo rows at each end)")
        block[...] = new  # the cast the serial loop's ``domain[h:-h] = step(domain)`` makes
    except BaseException as e:  # noqa: BLE001 - every failure of user code goes to the coordinator
        send((ERROR, it, _pickled(e), traceback.format_exc()))
        return None
    t_done = clock()
    work = t_done - t_start
    if spec.emulation is not None:
        end = t_start + spec.emulation.duration(w, t_start - spec.origin, work)
        delay = end - clock()
        if delay > 0:
            time.sleep(delay)
    h = spec.halo
    return block, (STEPPED, it, block[:h], block[-h:], work, t_start - spec.origin, clock() - spec.origin)


def serve_spmd(conn, w: int, spec: SpmdSpec) -> None:
    """Process entry point of an SPMD worker: follow the coordinator's orders until STOP."""
    send = conn.send
    h = spec.halo
    block = np.empty(0)
    try:
        while True:
            msg = conn.recv()
            kind = msg[0]
            if kind == STEP:
                out = _step(spec, w, msg[1], block, msg[2], msg[3], send)
                if out is None:
                    return
                block, reply = out
                send(reply)
            elif kind == SHIP:
                _, side, k = msg
                if side == "lo":
                    rows, block = block[:k].copy(), block[k:].copy()
                else:
                    rows, block = block[-k:].copy(), block[:-k].copy()
                send((SHIPPED, rows, block[:h], block[-h:]))
            elif kind == TAKE:
                _, side, rows = msg
                block = np.concatenate([rows, block] if side == "lo" else [block, rows])
                send((TOOK, block[:h], block[-h:]))
            elif kind == INIT:
                block = np.array(msg[1])  # a private, writable copy
            elif kind == GATHER:
                send((BLOCK, block))
            elif kind == STOP:
                return
    except (EOFError, BrokenPipeError, ConnectionResetError):
        return  # the coordinator ended the run
