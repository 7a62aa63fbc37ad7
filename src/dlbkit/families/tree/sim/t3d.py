"""The Cray T3D cost model of Haron's BSP simulator (001 §3.4–3.7), in microseconds.

Computation (001 Table 4.2): a node costs ``T_c + g·T_fl`` plus ``T_e`` per child it creates.
Point-to-point (Howell's model, 001 Table 4.3): sender delay ``T_send``, receiver delay
``max(R + T_recvmin, S + T_recv)`` with R and S the receiver's and sender's clocks just before the
communication; messages of at most 32 integers are "small". Collective: the recalibrated
``T_allreduce = 54.8 + 0.42·p + 93.3·ln(p)·dsize`` (001 Table 4.4; natural log, erratum 001 §4.10
item 2). The network speed *s* (001 §5.3.2) divides only the data-size terms. LB processing (001 Table
4.5): ``T_dq`` per dequeued and ``T_eq`` per enqueued node. LIS contention (001 §4.3.3): the
optimistic, pessimistic and intermediate waiting models around one ping-pong ``T_rt``.

Every method takes plain numbers or numpy arrays (elementwise), so an engine can cost all pairs of
an edge colour, or all processors, at once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dlbkit.errors import ConfigError
from dlbkit.model.check import integer, number

__all__ = ["T3D", "CONTENTION_MODELS", "ALLREDUCE_MODELS"]

CONTENTION_MODELS = ("optimistic", "pessimistic", "intermediate")
ALLREDUCE_MODELS = ("recalibrated", "howell")
_TIMES = ("t_fl", "t_c", "t_e", "t_eq", "t_dq", "t_sv")  # the constants in µs, each a finite number >= 0


@dataclass(frozen=True)
class T3D:
    """Cost constants of a 512-PE Cray T3D with CRI/EPCC MPI 1.7a (001 §3.7), all in µs.

    *t_fl* is the per-flop time the thesis's tables imply (0.1724; printed 0.172, erratum 001 §4.10
    item 3). *speed* is the network speed s relative to the T3D (001 §5.3.2). *contention* picks the
    LIS waiting model (001 uses "intermediate"); *allreduce* the collective model ("recalibrated",
    001 Table 4.4, or Howell's original, which over-estimates).
    """

    t_fl: float = 0.1724   # one floating-point operation [INF 001 §3.4; printed 0.172]
    t_c: float = 7.433     # per-node housekeeping
    t_e: float = 17.792    # per child expansion
    t_eq: float = 4.015    # enqueue one migrated tree node (allocation + copy)
    t_dq: float = 0.9      # dequeue one tree node for migration (pointer work)
    t_sv: float = 0.775    # LIS service time: dequeue one integer
    small_cut: int = 32    # messages of at most this many integers use the small-message model
    speed: float = 1.0     # network speed s (link bandwidth × the T3D's)
    contention: str = "intermediate"
    allreduce_model: str = "recalibrated"

    def __post_init__(self):
        # every constant is checked here, once: a NaN, an inf, a negative time, a string or an array
        # given for one of them used to run on and fail deep in the engine (a TypeError, a NaN total, a
        # negative compute time), or to give a wrong answer silently
        for f in _TIMES:
            object.__setattr__(self, f, number(getattr(self, f), f"cost.{f}", lo=0.0))  # µs; 0 switches a term off
        # compared with numpy int64 message sizes: a bound well inside int64 (10**400 passed unchecked)
        object.__setattr__(self, "small_cut", integer(self.small_cut, "cost.small_cut", lo=0, hi=10**18))
        try:
            speed = number(self.speed, "cost.speed", lo=0.0, lo_open=True)
        except ConfigError as e:  # the check's range, with what the number means
            raise ConfigError("cost.speed", self.speed, f"{e.allowed} (network speed relative to the T3D)") from None
        object.__setattr__(self, "speed", speed)
        if not isinstance(self.contention, str) or self.contention not in CONTENTION_MODELS:
            raise ConfigError("cost.contention", self.contention, "one of " + ", ".join(CONTENTION_MODELS))
        if not isinstance(self.allreduce_model, str) or self.allreduce_model not in ALLREDUCE_MODELS:
            raise ConfigError("cost.allreduce_model", self.allreduce_model, "one of " + ", ".join(ALLREDUCE_MODELS))

    # --- computation (001 Table 4.2) ------------------------------------------------------------------
    def node(self, grain, children=0):
        """One tree node: ``T_c + g·T_fl + T_e·children`` (leaf: children = 0)."""
        return self.t_c + grain * self.t_fl + self.t_e * children

    # --- point-to-point (001 Table 4.3), dsize in integers -----------------------------------------
    def _p2p(self, n, small_a, small_b, large_a, large_b):
        s = self.speed
        if isinstance(n, np.ndarray):
            return np.where(n <= self.small_cut, small_a + small_b * n / s, large_a + large_b * n / s)
        return small_a + small_b * n / s if n <= self.small_cut else large_a + large_b * n / s

    def send(self, n=1):
        """Sender delay of a blocking send of *n* integers."""
        return self._p2p(n, 70.0, 3.0, 100.0, 0.09)

    def recv(self, n=1):
        """Receiver delay when sender and receiver start together (printed "70 + 5 × size")."""
        return self._p2p(n, 70.0, 5.0, 200.0, 0.5)

    def recvmin(self, n=1):
        """Receiver delay when the message has already arrived."""
        return self._p2p(n, 50.0, 3.0, 100.0, 0.4)

    def receive(self, r, s, n=1):
        """The receiver's clock after receiving: ``max(R + T_recvmin, S + T_recv)``."""
        if isinstance(r, np.ndarray) or isinstance(s, np.ndarray):
            return np.maximum(r + self.recvmin(n), s + self.recv(n))
        return max(r + self.recvmin(n), s + self.recv(n))

    def pingpong(self, n=1):
        """Minimum cost of one request/reply access (small model only): ``200 + 8·dsize``."""
        return 200.0 + 8.0 * n / self.speed

    # --- collective (001 Table 4.4) -------------------------------------------------------------------
    def allreduce(self, p: int, n: int = 1) -> float:
        """``MPI_Allreduce`` of *n* integers over *p* processors (the iteration barrier, T_sy)."""
        if p <= 1:
            return 0.0
        if self.allreduce_model == "howell":
            return 300.0 + 20.0 * p + 0.9 * math.log(p) * n / self.speed
        return 54.8 + 0.42 * p + 93.3 * math.log(p) * n / self.speed

    # --- LIS contention (001 §4.3.3) ------------------------------------------------------------------
    def lis_wait(self, k: int, contenders: int, first_round: bool) -> float:
        """Waiting time of the *k*-th (from 1) of *contenders* simultaneous LIS queries, one ping-pong
        ``T_rt`` plus service: optimistic ``T_sv``; pessimistic ``contenders·T_sv``; intermediate
        ``k·T_sv`` in the first round of an invocation and ``T_sv`` (staggered) in later ones."""
        rt = self.pingpong(1)
        if self.contention == "optimistic":
            return rt + self.t_sv
        if self.contention == "pessimistic":
            return rt + contenders * self.t_sv
        return rt + (k if first_round else 1) * self.t_sv
