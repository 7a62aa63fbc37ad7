"""The cost functions every engine shares: compute under availability, and message time over the topology.

* **Compute.** Work W started at t0 on a node of speed s with availability a(t) ends at the t1 with
  s·∫_{t0}^{t1} a = W, integrated exactly over a's pieces (:meth:`Piecewise.finish
  <dlbkit.model.availability.Piecewise.finish>`). When a is one constant level the engines divide by
  the *rate* s·a instead (:func:`constant_rates`): the same time, computed in one division. The two
  forms round differently in the last bit, so each caller keeps the form it has always used (results
  do not change); the hot loops inline ``t0 + W / rate`` and call :func:`finish_time` otherwise.
* **Messages.** A message of *nbytes* over *hops* links takes ``hops · latency + nbytes / bandwidth``
  (:func:`message_time`; zero within a node). The SPMD engine's links are one hop (neighbours). The
  divisible engine charges the latency part here and the bytes per item sent (a blocking send at the
  master occupies it per byte, 004 §2.5), which is the same term factored per item.
* **Ticks.** An engine in exact integer time rounds every duration to a tick (:func:`ticks`,
  :func:`finish_ticks`).
"""

from __future__ import annotations

from typing import Sequence

from dlbkit.model.availability import Piecewise

__all__ = ["constant_rates", "finish_time", "finish_ticks", "message_time", "ticks"]


def constant_rates(speeds: Sequence[float], availability: Sequence[Piecewise]) -> list[float]:
    """Work per second of each node whose availability is one constant level (speed × level); 0.0
    where it varies (then :func:`finish_time` integrates)."""
    return [s * a.constant if a.constant is not None else 0.0 for s, a in zip(speeds, availability)]


def finish_time(availability: Piecewise, t0: float, work: float, speed: float, rate: float = 0.0) -> float:
    """When *work* started at *t0* on a node of *speed* under *availability* ends (seconds).

    *rate*: the node's constant rate (:func:`constant_rates`), 0.0 to integrate the availability.
    """
    return t0 + work / rate if rate else availability.finish(t0, work / speed)


def finish_ticks(availability: Piecewise, t0: int, work: float, speed: float, tscale: float, tps: int) -> int:
    """:func:`finish_time` in integer ticks (*tps* per second), the duration rounded to a tick.

    *tscale*: ticks per unit of work at the node's constant rate (``tps / rate``), 0.0 to integrate.
    """
    if tscale:
        return t0 + round(work * tscale)
    return max(t0, round(availability.finish(t0 / tps, work / speed) * tps))


def message_time(hops: float, nbytes: float, latency: float, bandwidth: float) -> float:
    """``hops · latency + nbytes / bandwidth`` seconds; 0 within a node (*hops* 0)."""
    if not hops:
        return 0.0
    return float(hops) * latency + nbytes / bandwidth


def ticks(seconds: float, tps: int | None):
    """*seconds* in engine time: rounded to integer ticks when *tps* is set, unchanged otherwise."""
    return round(seconds * tps) if tps else seconds
