"""The local transport: what a worker sent before dying is read, and its death is reported."""


from dlbkit.runtime.backends.local import LocalTransport
from dlbkit.runtime.messages import Died, Stop

from support import HANG_S


def _say_and_exit(conn, w):
    conn.send(("last words", w))


def _wait_for_stop(conn, w):
    conn.recv()


def test_a_message_sent_before_dying_survives_a_failed_send_to_the_dead_worker():
    """Regression: a send that failed used to hide the worker from recv, losing its last message
    (an Error) and hanging the coordinator."""
    t = LocalTransport(1, _say_and_exit)
    t._procs[0].join(HANG_S)  # the worker has sent and exited
    assert t._procs[0].exitcode is not None
    for _ in range(3):
        t.send(0, ("work",))  # fails: nobody reads any more (or succeeds into a dead pipe)
    got = t.recv(timeout=HANG_S)
    assert got == (0, ("last words", 0))
    w, msg = t.recv(timeout=HANG_S)
    assert w == 0 and type(msg) is Died
    assert t.recv(timeout=0.1) is None
    t.stop()


def test_stop_ends_every_worker():
    t = LocalTransport(2, _wait_for_stop)
    pids = t.pids
    for w in range(2):
        t.send(w, Stop())
    t.stop()
    assert all(not p.is_alive() for p in t._procs) and len(pids) == 2
