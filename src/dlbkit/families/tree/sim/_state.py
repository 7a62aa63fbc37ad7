"""One run of the asynchronous tree engine (:mod:`dlbkit.families.tree.sim.engine`): its state, built in named
steps, and the helpers both loops use (the general loop of :mod:`._tree_rules` and the specialised one
of :mod:`._tree_fast`, which reads and writes these very attributes)."""

from __future__ import annotations

from collections import deque
from typing import Any, NamedTuple

from dlbkit.families.tree.balancers.decide import checked_requests
from dlbkit.errors import ConfigError
from dlbkit.families.tree.model.backoff import backoff_delay
from dlbkit.families.tree.model.seeding import TREE
from dlbkit.model.seeding import streams
from dlbkit.families.tree.model.view import TreeView
from dlbkit.families.tree.sim._options import check_arguments, check_network, resolve_backoff, root_places
from dlbkit.sim.costs import constant_rates, finish_ticks, finish_time, message_time, ticks
from dlbkit.sim.timebase import SIMULTANEITY_TOLERANCE

__all__ = ["Limits", "TreeState"]


class Limits(NamedTuple):
    """A run's limits: the message budget (*messages* plus *per_node_task* per node and completed task)
    and the ``waiting`` series' length (*samples* to twice as many points). The engine reads them from
    :mod:`dlbkit.families.tree.sim.engine`'s constants at each call (they are changed there)."""

    messages: int
    per_node_task: int
    samples: int


class TreeState:
    """One run's state, shared by the general and the specialised loop, and their shared helpers."""

    def __init__(self, platform, workload, balancer, seed, options, info, limits: Limits):
        """*options*: the run's :class:`~dlbkit.families.tree.sim.options.TreeOptions` (checked); *info*:
        its information model, resolved."""
        o = options
        control_bytes, task_bytes, tps = o.control_bytes, o.task_bytes, o.ticks_per_second
        order = check_arguments(platform, workload, balancer)
        self._settings(platform, workload, balancer, seed, o.record, tps, order, control_bytes, task_bytes)
        check_network(platform, balancer, control_bytes)
        self._network()
        self._draws(seed, o.rng, info)
        self._view()
        roots = list(workload.roots())
        places = root_places(roots, o.start_node, self.P)
        self._backoff(o.backoff, roots, limits)
        self._nodes(roots, places)
        self._counters(len(roots))
        self._samples(len(roots), limits.samples)
        if self.loads:
            self._exact_loads()

    # --- the steps of __init__ ----------------------------------------------------------------------
    def _settings(self, platform, workload, balancer, seed, record, tps, order, control_bytes, task_bytes) -> None:
        """What the caller gave, as the loops read it."""
        self.P = platform.n_nodes
        self.platform, self.workload, self.balancer = platform, workload, balancer
        self.seed, self.record = seed, bool(record)
        self.tps = int(tps) if tps is not None else None
        self.tol = 0 if tps is not None else SIMULTANEITY_TOLERANCE
        self.lifo = order == "df"
        self.cost, self.children = workload.cost, workload.children
        self.control_bytes, self.task_bytes = control_bytes, task_bytes

    def _network(self) -> None:
        """The network's constants, and the memo of message times."""
        self.complete = self.P <= 1 or self.platform.complete
        net = self.platform.network
        self.latency, self.bandwidth = net.latency, net.bandwidth
        self._delays: dict = {}  # (hops, bytes) -> a message's time in engine units

    def _draws(self, seed, rng, info) -> None:
        """The seeded streams: the nodes' availability, the balancer's Generator, the information model's."""
        platform = self.platform
        rs = streams(seed, TREE)
        rng_avail = rs.rng("availability")
        self.availability = platform.realise_availability(rng_avail)
        self.speeds = [float(n.speed) for n in platform.nodes]
        self.rates = constant_rates(self.speeds, self.availability)
        # ticks per unit of work at each node's constant rate (tick mode)
        self.tscale = [self.tps / r if (self.tps and r) else 0.0 for r in self.rates]
        self.rng = rng if rng is not None else rs.rng("balancer")
        self.info = info
        self.decided: list | None = None  # the decisions with their views, when asked to record them
        self.exact = info.exact  # exact information: the engine's own exact view, no rounds
        self.rng_info = rs.rng("info")

    def _view(self) -> None:
        """The view the hooks read, and what the rule asks of it."""
        P, balancer = self.P, self.balancer
        neighbours = self.platform.neighbours() if P > 1 else [[]]
        self.view = TreeView(P, neighbours=neighbours, speeds=list(self.speeds))
        self.loads = bool(balancer.reads_loads)
        self.low = int(balancer.low_water) if balancer.receiver_initiated else 0
        # a rule that adapts per phase (PhaseAdaptive) watches the global state at every periodic
        # point, whether or not its current phase's rule balances there
        self.observes = balancer.observes
        self.phases: list = []  # (time, phase) at the start and at each phase change

    def _backoff(self, backoff, roots: list, limits: Limits) -> None:
        """The back-off of idle nodes' requests, and the message budget."""
        P = self.P
        self.backoff = resolve_backoff(backoff, self.platform, self.workload, roots, self.control_bytes)
        # the back-off after k consecutive empty replies, in engine units, for k = 0 .. len - 1 (the
        # last entry is the longest: it holds for every larger k); [0] when there is none
        self.pauses = self._pauses(*self.backoff)
        self.fails = [0] * P  # consecutive empty replies per node (reset by a reply with tasks)
        # the message budget: at most poll_floor + poll_step · (completed tasks) messages (see the limit)
        self.limits = limits
        self.poll_floor = limits.messages
        self.poll_step = P * limits.per_node_task

    def _nodes(self, roots: list, places: list[int]) -> None:
        """Per-node state: the roots in their deques, every node free."""
        P = self.P
        self.dq = [deque() for _ in range(P)]
        for task, x in zip(roots, places):
            self.dq[x].append(task)
        self.busy = [False] * P
        self.out = [0] * P  # requests outstanding
        # tasks the centre has ordered in (+) or out (-) of each node and not yet seen arrive or leave
        self.pend = [0] * P
        # a receiver-initiated rule that reads loads: nodes whose on_idle named nobody (parked), and
        # the nodes whose queue changed in the current event (a parked neighbour then asks again)
        self.watch = bool(self.balancer.receiver_initiated and self.balancer.reads_loads)
        self.parked: set = set()
        self.touched: set = set()
        self.done = self.view.done  # the engine's counters are the view's: always exact
        self.running: list = [None] * P
        self.s_first = [0] * P  # the current busy stretch: tasks done before it, and its start
        zero = 0 if self.tps else 0.0  # engine time: ticks or seconds
        self.s_start: list = [zero] * P
        self.free_since: list = [zero] * P

    def _counters(self, n_roots: int) -> None:
        """The run's counters, all at their start."""
        self.events = self.messages = 0
        self.bytes = 0.0
        self.steal_requests = self.steals = self.tasks_moved = self.transfers = 0
        self.waiting = n_roots
        self.remaining = n_roots  # created and not completed
        self.n_done = 0
        self.work = 0.0
        self.max_cost = 0.0
        self.makespan: Any = 0 if self.tps else 0.0
        self.tick = None  # the progress Ticker (dlbkit.sim.progress), if any
        self.countdown = 1  # completions until the ticker is asked again (general loop)

    def _samples(self, n_roots: int, samples: int) -> None:
        """The trace's rows and the ``waiting`` series, with its first point."""
        zero = 0 if self.tps else 0.0
        self.rows: tuple[list, ...] = ([], [], [], [], [], [])
        self.w_t: list = [zero]
        self.w_n: list = [n_roots]
        self.w_q: list = [list(map(len, self.dq))]  # waiting tasks per node, at the same instants (lists: the
        # trace keeps these very rows, no copy of up to 2 × WAITING_SAMPLES × nodes counts at the end)
        self.w_mask = 0  # sample when n_done & mask == 0 (the stride is a power of two)
        self.w_limit = 2 * samples

    def _exact_loads(self) -> None:
        """The exact view's queues and work at the start (a rule that reads loads)."""
        est = self.workload.estimate
        vw, vq = self.view.work, self.view.queue
        for i, d in enumerate(self.dq):
            vq[i] = len(d)
            vw[i] = float(sum(est(x) for x in d))

    # --- shared helpers -------------------------------------------------------------------------
    def _pauses(self, first: float, longest: float) -> list:
        if not first > 0:
            return [0]
        out = [0]
        k = 1
        while True:
            d = backoff_delay(k, first, longest)
            out.append(ticks(d, self.tps))
            if d >= longest:
                return out
            k += 1

    def polling_exceeded(self, t) -> None:
        """Raise the ConfigError of a run past its message budget (:data:`~dlbkit.families.tree.sim.engine.MAX_MESSAGES`)."""
        first, longest = self.backoff
        now = self.sec(t)
        raise ConfigError("backoff", [first, longest] if first else "off",
                          f"a back-off under which idle nodes' requests for work stay within "
                          f"{self.limits.messages:,} messages plus {self.limits.per_node_task:,} per node and "
                          f"completed task (dlbkit's limit, passed at simulated time {now:.6g} s after "
                          f"{self.n_done:,} tasks while idle nodes kept asking busy ones: give backoff = "
                          "[first, longest] in seconds with a longer longest, or a shorter run)")

    def pause(self, thief: int, tasks) -> Any:
        """Count *thief*'s failed requests (reset by *tasks*); the back-off its reply is held by."""
        if tasks:
            self.fails[thief] = 0
            return 0
        k = self.fails[thief] = self.fails[thief] + 1
        p = self.pauses
        return p[k] if k < len(p) else p[-1]

    def fast_eligible(self) -> bool:
        """Whether the specialised loop applies (see "Speed" in :mod:`dlbkit.families.tree.sim.engine`)."""
        b = self.balancer
        return (self.complete and self.task_bytes == 0 and not b.periodic and not b.sender_initiated
                and not b.reads_loads and not self.observes and self.exact and self.decided is None)

    def sec(self, t):
        """Engine time to seconds."""
        return t / self.tps if self.tps else t

    def delay(self, src: int, dst: int, nbytes: float):
        """A message's time in engine units (:func:`~dlbkit.sim.costs.message_time`, kept per hop
        count and size: a run sends millions of messages of a few kinds)."""
        if src == dst:
            return 0
        h = 1 if self.complete else int(self.platform.hops_from(src)[dst])
        key = (h, nbytes)
        d = self._delays.get(key)
        if d is None:
            d = self._delays[key] = ticks(message_time(h, nbytes, self.latency, self.bandwidth), self.tps)
        return d

    def _one_hop(self):
        """An order's time from the centre (one hop from every node)."""
        return ticks(message_time(1, self.control_bytes, self.latency, self.bandwidth), self.tps)

    def uniform_delay(self):
        """Every message's time when they all take the same (the specialised loop's case)."""
        return self.delay(0, 1, self.control_bytes) if self.P > 1 else 0

    def end_time(self, w: int, t, c: float):
        """When task work *c* started at *t* on node *w* ends (engine units; :mod:`~dlbkit.sim.costs`)."""
        if self.tps:
            return finish_ticks(self.availability[w], t, c, self.speeds[w], self.tscale[w], self.tps)
        return finish_time(self.availability[w], t, c, self.speeds[w], self.rates[w])

    def requests(self, w: int, decision) -> list[tuple[int, int]]:
        """:meth:`on_idle`'s answer as validated (victim, wanted) pairs."""
        if decision.__class__ is int and 0 <= decision < self.P and decision != w:
            return [(decision, 0)]  # one victim, the common case: what checked_requests gives it
        return checked_requests(self.balancer, w, decision, self.P)
