"""The messages of :class:`dlbkit.Cluster`: between the client (:mod:`.cluster`) and the nodes
(:mod:`.cluster_agent`), and from node to node over the backend's mesh.

Times are run times (seconds from the cluster's time 0). Every message a node sends the client
carries, last, ``started``: the jobs that started on that node since its previous message,
``[(jid, t_start), ...]``, so the client learns that a job is running within one information period
(a :class:`Started` goes alone only when a job started), or with the next result.
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["Submit", "SubmitBatch", "NodeDied", "Forward", "Info", "Placed", "Started", "Held", "Result",
           "Stats"]


# --- client → node ---------------------------------------------------------------------------------
class Submit(NamedTuple):
    """A job submitted to this node, its origin: *payload* is the pickled ``(fn, args, kwargs)``."""

    jid: int
    payload: bytes


class SubmitBatch(NamedTuple):
    """Jobs submitted together to this node, placed at once by the balancer's batch rule."""

    jobs: list[tuple[int, bytes]]  # (jid, payload)


class NodeDied(NamedTuple):
    """*node* died; which of *asked* (the jobs the client still has at it as their origin) did it
    forward to this node? Answered by :class:`Held`."""

    node: int
    asked: list[int]


# --- node → node (the mesh) ------------------------------------------------------------------------
class Forward(NamedTuple):
    """A job its origin placed on this node."""

    jid: int
    payload: bytes
    origin: int


class Info(NamedTuple):
    """Load entries: the information model's own message (an :class:`~dlbkit.info.base.InfoMessage`)."""

    message: Any


# --- node → client ---------------------------------------------------------------------------------
class Placed(NamedTuple):
    """This origin placed job *jid* on *node* (sent after the job itself)."""

    jid: int
    node: int
    started: list[tuple[int, float]]


class Started(NamedTuple):
    """Jobs started on this node (sent at an information round when no other message carried them)."""

    started: list[tuple[int, float]]


class Held(NamedTuple):
    """The answer to :class:`NodeDied`: the asked-about jobs that *dead* had forwarded to this node."""

    dead: int
    jobs: list[int]
    started: list[tuple[int, float]]


class Result(NamedTuple):
    """Job *jid* ended: *ok* True, *data* is its pickled value; False, an
    :class:`~dlbkit.runtime.messages.Error`. *t_busy*: when the function returned (before the
    emulated stretch)."""

    jid: int
    ok: bool
    data: Any
    t_start: float
    t_busy: float
    t_end: float
    started: list[tuple[int, float]]


class Stats(NamedTuple):
    """A node's last message, when it stops: its samples, messages and decisions."""

    stats: dict
