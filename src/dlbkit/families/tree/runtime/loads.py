"""What the tree coordinator knows of every worker's load: reported loads adjusted for work in flight.

This is the one place where the coordinator's load view is made: :class:`InFlightLoads` writes
``view.queue``, the loads a balancer reads (periodic rules on the coordinator, and the loads sent to
workers with every Mail and Post). An information layer (exact, periodic, neighbour exchange,
gossip) plugs in here to decide which load view the coordinator hands the balancer.
"""

from __future__ import annotations

from collections import deque

from dlbkit.families.tree.model.view import TreeView
from dlbkit.families.tree.runtime.messages import ARRIVALS, Order

__all__ = ["InFlightLoads"]


class InFlightLoads:
    """The coordinator's estimate of every worker's waiting tasks, written into ``view.queue``.

    A worker's report says how many tasks it held when it sent it; tasks the coordinator has sent
    it since (in a Mail or Post the report's ``seen`` does not cover yet), or holds in its mailbox,
    or has ordered another worker to send it, are added; tasks a periodic transfer has ordered it to
    give away are subtracted. So a balancer never acts twice on a load that its own earlier
    decision has already changed (a periodic rule runs far more often than a worker reports).
    """

    def __init__(self, view: TreeView):
        P = view.n_nodes
        self.view = view
        self.reported = [1 if w == 0 else 0 for w in range(P)]  # worker 0 starts with the root
        self.sent = [0] * P  # Mail/Post messages sent to each worker
        self.flight: list[deque] = [deque() for _ in range(P)]  # (message number, task delta)
        self.flight_sum = [0] * P
        self.mail = [0] * P  # task delta of what waits in the mailbox
        self.promised = [0] * P  # tasks ordered to come here whose sender has not sent them yet
        self.orders: list[deque] = [deque() for _ in range(P)]  # (dst, n) ordered of each source
        self.gone: set[int] = set()  # dead workers: no load, whatever was sent or ordered them
        for w in range(P):
            self.refresh(w)

    @staticmethod
    def delta(item: tuple) -> int:
        """The change in its receiver's tasks that an item of a Mail or Post makes."""
        kind = type(item)
        if kind in ARRIVALS:
            return len(item.tasks)
        if kind is Order:
            return -int(item.n)
        return 0  # a steal request: the answer says what left

    def refresh(self, w: int) -> None:
        if w in self.gone:
            self.view.queue[w] = 0
            return
        self.view.queue[w] = max(0, self.reported[w] + self.flight_sum[w] + self.mail[w] + self.promised[w])

    def died(self, w: int) -> None:
        """Worker *w* died: it holds nothing from now on (its tasks are redone elsewhere), and what it was
        ordered to send will not come."""
        self.gone.add(w)
        while self.orders[w]:
            self.order_done(w)
        self.refresh(w)

    def queued(self, w: int, item: tuple) -> None:
        d = self.delta(item)
        if d:
            self.mail[w] += d
            self.refresh(w)

    def posted(self, w: int) -> None:
        self.sent[w] += 1
        if self.mail[w]:
            self.flight[w].append((self.sent[w], self.mail[w]))
            self.flight_sum[w] += self.mail[w]
            self.mail[w] = 0

    def report(self, w: int, q: int, seen: int) -> None:
        self.reported[w] = q
        fl = self.flight[w]
        while fl and fl[0][0] <= seen:
            self.flight_sum[w] -= fl.popleft()[1]
        self.refresh(w)

    def order(self, src: int, dst: int, n: int) -> None:
        self.orders[src].append((dst, n))
        self.promised[dst] += n
        self.refresh(dst)

    def order_done(self, src: int) -> None:
        dst, n = self.orders[src].popleft()
        self.promised[dst] -= n
        self.refresh(dst)
