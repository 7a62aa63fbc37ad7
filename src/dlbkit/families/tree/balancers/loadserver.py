"""Loadserver (LDSV): a central Load Information Server queues light nodes; heavy nodes ask it for one."""

from __future__ import annotations

from collections import deque
from numbers import Integral, Real

from dlbkit.errors import ConfigError
from dlbkit.families.tree.model.view import TreeView
from dlbkit.params import Interval
from dlbkit.families.tree.balancers.base import MigrationBalancer
from dlbkit.balancers.base import Taxonomy, Transfer
from dlbkit.balancers.registry import register

__all__ = ["Loadserver"]


@register
class Loadserver(MigrationBalancer):
    """Loadserver: node *server* runs the Load Information Server (LIS), a FIFO queue of the ids of
    light nodes (queue ≤ *light*); a heavy node (queue > *heavy*) asks the LIS for a light node and
    sends it *tasks* of its oldest waiting tasks, until it is no longer heavy or the LIS is empty.

    Source: 001 §2.2 (Haron 1998, after Davy; REDEC'96): scheduling is local, only *who is light* is
    central; a light node registers once and its registration is cleared when the LIS hands it out
    (001 §3.9 item 4 [INF]); 001 §5.2.5 uses h = 1, l = 0, r = 1 (the defaults: light = empty, heavy
    = two or more waiting tasks, one task per migration); *light* must be below *heavy* (at light =
    heavy a node that receives a task is heavy at once: the task would move back and forth without end).
    *lights_per_reply* > 1 is the improvement
    001 §6.3.1 proposes: a reply carries up to that many light ids (the query carries the heavy node's
    surplus, so no id is handed out in vain). *interval* is Haron's LB interval i (001 §2.9); the
    default 0 means "at every load update" in an event-driven engine (the asynchronous protocol of
    001 Fig. 2.3: a worker checks its load after every task) and runs as i = 1 in the superstep
    engine (the synchronised form of 001 §4, Tables 4.7–4.8).

    One invocation is 001 Fig. 4.8 (the synchronised form): every currently light node registers first
    (in node order; "all light workers register before heavy ones are served", 001 §3.9 item 4, which
    makes 001 Table 4.8 exact), then rounds visit the nodes in a fresh random order (drawn from the
    engine's Generator) and each heavy node not yet told "no light node" makes one query, until a round
    migrates nothing. The server computes nothing: *server* −1 (default) is the last node, so with the
    roots on node 0 the root starts on worker 0 and W = n − 1 nodes work (001 §5.1.1). Each call
    leaves ``log_``: ``("register", node)`` and ``("query", node, round, ((light, n), ...))`` in order,
    which a superstep engine costs (registration one send; query one ping-pong plus LIS service time;
    ``protocol = "server"``); ``Transfer.step`` is the round, from 0.

    Helps: global migration space — a light node anywhere is found in one round trip, so filling
    takes log_f p rounds on any topology (001 §2.7, the reason it is the phase I candidate); LIS
    messages are one integer. Backfires: in the steady phase busy nodes keep querying an empty LIS
    (all cost, no benefit); the LIS is a central point of contention, and synchronised (a PROCEED
    broadcast per invocation) it is much slower than GDEM (001 §4.4).
    """

    name = "ldsv"
    source = "001 §2.2, §4.2.2 (Haron 1998; Davy's Loadserver, REDEC 1996)"
    taxonomy = Taxonomy("periodic (sender: a heavy node asks; receivers register when light)", "hybrid",
                        "central: the LIS's FIFO of light nodes", "tasks per light node while heavy",
                        "oldest waiting tasks; the light node that registered first")
    periodic = True
    protocol = "server"
    _parameter_constraints = {"heavy": [Interval(Integral, 0, None)], "light": [Interval(Integral, 0, None)],
                              "tasks": [Interval(Integral, 1, None)],
                              "lights_per_reply": [Interval(Integral, 1, None)],
                              "server": [Interval(Integral, -1, None)],
                              "interval": [Interval(Real, 0, None)]}

    def __init__(self, *, heavy: int = 1, light: int = 0, tasks: int = 1, lights_per_reply: int = 1,
                 server: int = -1, interval: float = 0):
        self.heavy = heavy
        self.light = light
        self.tasks = tasks
        self.lights_per_reply = lights_per_reply
        self.server = server
        self.interval = interval

    def reserved_node(self) -> int | None:
        return self.server_

    def last_exchange(self) -> list:
        return self.log_

    def validate(self) -> None:
        super().validate()
        if self.light >= self.heavy:
            # light = heavy = h: a light node (h tasks) that receives one is heavy at once and a heavy one
            # (h + 1) that gives one is light, so the task goes back and forth without end (the run hung)
            raise ConfigError(self.param_field("light"), self.light,
                              f"below heavy = {self.heavy} (at light = heavy a node that receives a task is "
                              "heavy at once, and the task moves back and forth without end)")

    def check_nodes(self, n: int, start_node: int | None = None) -> None:
        if n < 2:
            raise ConfigError(f"nodes for {self.name}", n, "at least 2 (one LIS and one worker)")
        if self.server >= n:
            raise ConfigError(self.param_field("server"), self.server, f"-1 or a node index below {n}")
        if start_node is not None and (n - 1 if self.server == -1 else self.server) == start_node:
            raise ConfigError(self.param_field("server"), self.server,
                              f"a node other than start_node {start_node}, where the root starts (the Load "
                              "Information Server computes nothing; -1 is the last node)")

    def start(self, view: TreeView, rng=None) -> None:
        super().start(view, rng)
        n = view.n_nodes
        self.validate()  # parameters set after construction (set_params) are checked here too
        self.check_nodes(n)
        self.server_ = n - 1 if self.server == -1 else int(self.server)
        self.workers_ = [j for j in range(n) if j != self.server_]
        self.lis_: deque[int] = deque()
        self.registered_ = [False] * n
        self.log_: list[tuple] = []

    def balance(self, view: TreeView) -> list[Transfer]:
        loads = list(view.queue)
        h, lo, r, k = self.heavy, self.light, self.tasks, self.lights_per_reply
        lis, reg = self.lis_, self.registered_
        log: list[tuple] = []
        out: list[Transfer] = []
        for j in self.workers_:  # every light worker registers before any heavy one is served
            if loads[j] <= lo and not reg[j]:
                lis.append(j)
                reg[j] = True
                log.append(("register", j))
        if any(loads[j] > h for j in self.workers_):
            told_empty = [False] * view.n_nodes
            workers = self.workers_
            rnd, again = 0, True
            while again:
                again = False
                for i in self.rng_.permutation(len(workers)).tolist():
                    j = workers[i]
                    if loads[j] <= lo and not reg[j]:
                        lis.append(j)
                        reg[j] = True
                        log.append(("register", j))
                    elif loads[j] > h and not told_empty[j]:
                        got = []
                        surplus = -(-(loads[j] - h) // r)  # migrations this node can still make
                        while lis and len(got) < min(k, surplus):
                            dst = lis.popleft()
                            reg[dst] = False
                            if dst == j:  # registered while light, heavy since: it cannot feed itself
                                continue
                            n = min(r, loads[j] - h)
                            loads[j] -= n
                            loads[dst] += n
                            got.append((dst, n))
                            out.append(Transfer(j, dst, n, rnd))
                        log.append(("query", j, rnd, tuple(got)))
                        if got:
                            again = True
                        else:
                            told_empty[j] = True
                rnd += 1
        self.log_ = log
        return out
