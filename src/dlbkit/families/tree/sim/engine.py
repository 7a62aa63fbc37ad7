"""The asynchronous, event-driven task-tree engine: nodes run their own work, run low, and ask each
other for more through messages that take time.

Why asynchronous: 001 (Haron 1998) could simulate only synchronous (BSP) balancing, so asynchronous
rules had to be given a barrier and a "proceed" broadcast, which penalised Loadserver and made
diffusion and algorithmic adaptivity untestable (001 §4.5; 001 §6.2 item 1 asks for "a discrete-event
(asynchronous) engine: LDSV as designed, asynchronous diffusion, work stealing"). Here nothing waits
for anyone: each node decides when its own state changes, and every decision travels as a message.

Model (the same kernel as the real runtime, :mod:`dlbkit.families.tree.runtime.worker`, 001 §1.3):

* **Nodes.** Every node of the platform is one worker (a node with several cores is rejected: give
  each core its own node) with a deque of waiting tasks; the task it runs is in no deque. A free node
  with waiting tasks runs the newest (order ``df``) or the oldest (``bf``). A task runs for
  ``workload.cost(task) / speed`` at full availability, integrated exactly over the node's
  availability otherwise (as :mod:`dlbkit.families.divisible.sim.engine` does). Handling a message takes no time and
  happens while the node computes. When a task completes, its children (``workload.children``) are
  created: they stay on the node, or, with a sender-initiated balancer, :meth:`on_spawn` places each
  one (children sent elsewhere travel, one message per destination, in creation order).
* **Messages** take ``platform.message_time(src, dst, bytes)``: latency per hop plus bytes over
  bandwidth, with :data:`CONTROL_BYTES` per message plus :data:`TASK_BYTES` per task carried.
  Migration always moves the *oldest* tasks; received tasks are appended at the back, in order.
* **Receiver-initiated** balancers: a node with no request outstanding that is free with an empty
  deque, or (``low_water`` > 0) holds at most ``low_water`` waiting tasks, calls :meth:`on_idle`,
  which names a victim (an int), a :class:`~dlbkit.balancers.base.Transfer` or a list of them (one
  request each). This is evaluated at t = 0 in node order, after each of the node's completions,
  after tasks arrive, after the reply to its last outstanding request, and (``low_water`` > 0) after
  it gave tasks away. The victim answers when the request is delivered, with :meth:`on_request`
  (how many of its oldest tasks; clamped to what it holds); an empty reply to the last outstanding
  request makes the node ask again. ``None`` from :meth:`on_idle` means "ask nobody": the node is
  asked again at its next such moment, or, for a rule that reads loads, as soon as the queue of one
  of its neighbours changes (its view changed: a runtime worker reconsiders when reports reach it).
* **Periodic** balancers mirror the runtime coordinator: :meth:`balance` is called as soon as some
  node has completed ``interval`` tasks since the last call (001 §2.9: the LB interval i is the
  number of nodes a processor executes between invocations; in a superstep every processor runs up
  to i, here the first to get there calls it), and ``interval`` 0 after every event that changed a
  queue.
  The centre is, as in the runtime, a coordinator one hop from every node (node
  ``info.centre``, 0 by default, for what it knows: see "Information" below). Each decision
  Transfer(src, dst, n) with n > 0 becomes an order that reaches *src* one hop later (latency +
  :data:`CONTROL_BYTES` / bandwidth); *src* then sends its ``min(n, |D_src|)`` oldest tasks to *dst*.
  The centre knows its own orders: from the moment of an order, its view counts the n tasks at
  *dst* and not at *src* (until they arrive, or turn out not to come), and it orders no more than
  *src* holds by that count. Without this, every call while an order travels would repeat it.
* **Information** (:mod:`dlbkit.info`). With the default, exact information, every decider reads
  the true loads at the moment it decides, for free. With another model (``info=``), the model's
  rounds run on the kernel every period (at URGENT priority), its messages take their network time
  (hops · latency + bytes / bandwidth) and are merged on arrival; a rule that reads loads then
  decides from its node's knowledge (:meth:`~dlbkit.info.InfoModel.fill`: its own load exact, the
  others as old as their last message; a node reports its queue), a periodic rule from the centre's
  knowledge plus its own orders still in flight (an order that took effect after a node's last
  report is not corrected for: that is the staleness; a rule that reads remaining work needs exact
  information), and a parked receiver-initiated node asks again when new loads reach it (not,
  as with exact information, whenever a neighbour's queue changes). The trace counts the model's
  messages and bytes and the mean age of what deciders read (``info_messages``, ``info_bytes``,
  ``info_age_mean``); the specialised loop runs only with exact information.
* **Phase adaptivity.** A rule that declares ``observes`` (``phase-adaptive``) is called
  there at every periodic point — with the *current* phase's interval — before its current rule
  (:meth:`acting`) balances; when that is None (phase III) no transfer is ordered.
  ``trace.meta["phases"]`` lists (time, phase) at the start and at each change.
* **View.** Hooks read a :class:`~dlbkit.families.tree.model.view.TreeView` with the platform's neighbour lists
  and nominal speeds; ``time`` and ``node`` are set before every call and ``done`` is always exact
  (the engine counts in it). When ``balancer.reads_loads`` the view is exact for every node at every
  decision (``queue``, ``updated_at`` and ``work`` = the sum of ``workload.estimate`` over waiting
  tasks, kept incrementally); otherwise only the deciding node's own ``queue``/``updated_at`` are
  refreshed before each hook (``work`` stays 0): a rule that reads no loads needs no more.

* **Back-off** (``backoff``; the rule is :func:`dlbkit.families.tree.model.backoff.backoff_delay`, the one the
  runtime's tree coordinator applies). An empty reply to a node's *k*-th consecutive failed request
  reaches it ``min(first · 2^(k−1), longest)`` seconds after its network time; a reply with tasks
  resets *k*. The node is still waiting for that reply meanwhile (it asks nobody else, and it starts
  any task pushed or ordered to it), so the back-off adds no event: it thins the polling. Without it
  an idle node asks every round trip for as long as it is idle, which is most of a run whose tasks
  last 10^6 latencies. ``"auto"`` (default): *first* = one round trip of a control message over one
  hop, *longest* = :data:`AUTO_LONGEST_TASKS` of the mean task's time (mean root cost over mean speed),
  so the polling costs a bounded number of messages per task time whatever the units. ``"off"`` (or
  ``(0, 0)``): ask again at once, M2 of docs/reference-models.md (``dlbkit bench m2`` passes it).

Order and time. The rules are handlers on a :class:`~dlbkit.sim.kernel.Kernel`, all at priority
``NORMAL``: events are processed in time order and simultaneous events in the order they were
scheduled (FIFO by the kernel's sequence number), which is M2's canonical order (docs/reference-models.md); at t = 0
nodes start in index order (a node with work starts its task, then a node without work asks). Times
are float seconds, and times closer than :data:`~dlbkit.sim.timebase.SIMULTANEITY_TOLERANCE` are
the same instant; or, with *ticks_per_second*, exact integer ticks (every duration rounded to a
tick: exact when durations are multiples of it, as in M2). Use ticks for bit-exact reproduction:
an idle node that polls for thousands of round trips adds the same latency over and over, and in
floats the round-off of those additions can exceed the tolerance.

Ends at the completion that leaves no task waiting, running or in flight: ``makespan`` is its time,
events at that instant processed after it are not counted, messages still in flight are discarded.
``trace.events`` counts model events: completions plus messages delivered (requests, replies, tasks
pushed, periodic orders); ``trace.messages``/``bytes`` count messages sent.

Speed: when messages all take the same time (a complete graph and no per-task bytes) and the rule
is receiver-initiated or none, with ``reads_loads`` False, the same semantics run in a specialised
loop: messages are then delivered in the order they are sent, so they sit in a FIFO queue and only
completions need a heap (*fast_path*; tests compare its event log with the kernel's, event for event).
"""

from __future__ import annotations

import math
from collections import deque
from numbers import Integral
from typing import Any, Sequence

from dlbkit.families.tree.balancers.base import MigrationBalancer
from dlbkit.families.tree.balancers.decide import checked_requests, given, placements, transfers, victims
from dlbkit.errors import ConfigError, DlbkitError
from dlbkit.info import resolve as resolve_info
from dlbkit.families.tree.model.backoff import AUTO, NO_BACKOFF, backoff_delay, check_backoff
from dlbkit.model.gcpause import paused_gc
from dlbkit.model.platform import Platform
from dlbkit.model.seeding import TREE, streams
from dlbkit.model.trace import Trace
from dlbkit.families.tree.model.view import TreeView
from dlbkit.families.tree.sim._fast import _EMPTY, _INF, fast_loop
from dlbkit.sim.progress import ticker
from dlbkit.sim.costs import constant_rates, finish_ticks, finish_time, message_time, ticks
from dlbkit.sim.kernel import URGENT, Kernel
from dlbkit.sim.timebase import SIMULTANEITY_TOLERANCE

__all__ = ["simulate_tree_async", "CONTROL_BYTES", "TASK_BYTES", "WAITING_SAMPLES", "AUTO_LONGEST_TASKS",
           "resolve_backoff", "MAX_MESSAGES", "MAX_MESSAGES_PER_NODE_TASK"]

#: bytes of a control message (request, reply header, order): a type tag, two node ids and counts
CONTROL_BYTES = 32
#: bytes per task carried: a task descriptor (TaskTree packs a task in one 64-bit int) plus framing
TASK_BYTES = 16
#: the ``waiting`` series (and ``queues``, waiting tasks per node at the same instants) keeps between
#: this many and twice as many points (decimated as it grows)
WAITING_SAMPLES = 512
#: ``backoff="auto"``: the longest back-off is this many times the mean task's run time (the mean cost
#: of the root tasks at the platform's mean speed). Why a task time, not a latency: an idle node then
#: sends a bounded number of requests per task time it waits, whatever the ratio of task time to
#: latency (10^6 in a tree of grain 1000 at speed 1 with 0.2 ms latency: about 16 requests per idle node
#: per task time); and it notices new work at most a sixteenth of a task (plus a round trip) later
#: than a node that polls every round trip. Measured: on haron_torus64 (tasks of 20 latencies) a
#: quarter of a task cost steal 3 points of efficiency (0.884 -> 0.854), a sixteenth 0.4 points.
AUTO_LONGEST_TASKS = 0.0625
#: the most messages a run may send: MAX_MESSAGES, plus MAX_MESSAGES_PER_NODE_TASK per node and
#: completed task (dlbkit's limit). An idle node asks again every round trip, or every back-off, for
#: as long as it finds nothing, so its requests grow with (the time it waits) / (that time scale), not
#: with the work: on two nodes, one 10^6 times slower holding a task, the other would ask ~5·10^7 times
#: under the "auto" back-off. The run stops, at the first empty reply past the limit, with a
#: ConfigError naming ``backoff`` (about two minutes of run time at the limit, BENCHMARKS.md). Valid
#: runs that poll most: M2 (``backoff="off"``) at 1 024 nodes sends 17.8 million messages for 1 000
#: tasks (while they complete, each adding 102 400 to the limit) and 15.8 million for 10^6 tasks; the 4-node tree of
#: docs/experiments.md with ``"off"`` 5.2 million for 573 tasks ("Limits" there lists the largest
#: counts of the shipped runs).
MAX_MESSAGES = 10_000_000
MAX_MESSAGES_PER_NODE_TASK = 100


def simulate_tree_async(platform: Platform, workload: Any, balancer: MigrationBalancer, *,
                        seed: int | None = None, rng: Any = None, start_node: int | Sequence[int] = 0,
                        record: bool = True, ticks_per_second: int | None = None,
                        control_bytes: float = CONTROL_BYTES, task_bytes: float = TASK_BYTES,
                        fast_path: bool | None = None, log_events: bool = False, info: Any = None,
                        record_decisions: bool = False, backoff: Any = AUTO, progress: Any = None) -> Trace:
    """Run task-tree *workload* (:class:`~dlbkit.families.tree.model.workload.TaskTree`, :class:`FlatTasks` or any
    object with ``roots()``, ``children(task)``, ``cost(task)``, ``estimate(task)`` and ``order``)
    on *platform* with migration *balancer*, asynchronously; return the Trace.

    *seed* seeds the availability draws and the balancer's Generator (None: fresh entropy); *rng*
    replaces that Generator (any object with the ``integers`` the balancer calls). *start_node* is
    the node holding the roots, or one node per root. *record* False skips the chunk rows and the
    ``waiting`` series. *ticks_per_second* switches to exact integer time (see the module doc).
    *fast_path* None picks the specialised loop when it applies; False forces the general loop;
    True requires the specialised one. *log_events* keeps the kernel's event log (the specialised
    loop writes the same one) in ``trace.meta["event_log"]``: (time, priority, rank, sequence,
    handler, args) per event, times in engine units. *info* is the information model (a name, an
    ``[info]`` table or a :class:`~dlbkit.info.InfoModel`; default exact): see "Information" in the
    module doc. *record_decisions* keeps every decision with a copy of its view in ``trace.decisions``
    (on the general loop). *backoff* paces an idle node's requests after empty replies (see "Back-off"
    in the module doc): ``"auto"`` (the default), ``"off"`` or ``(0, 0)`` (ask again at once: M2), or
    ``(first, longest)`` in seconds. *progress* ``(done, total)``: called now and then with the tasks
    completed so far and the tasks created so far (a tree's total grows as it runs), ending with
    ``(n, n)`` (:mod:`dlbkit.sim.progress`; None: no calls, no cost).

    Raise :exc:`~dlbkit.errors.ConfigError` for a bad argument, a node with several cores, a
    disconnected topology, messages that take no time with a rule that polls, or a hook answer that
    is not allowed (a victim that is not another node, a destination out of range).
    """
    run = _Run(platform, workload, balancer, seed, rng, start_node, record, ticks_per_second,
               control_bytes, task_bytes, resolve_info(info, "info"), backoff)
    if record_decisions:
        run.decided = []
    run.tick = ticker(progress)
    if run.tick is not None:
        run.tick(0, run.remaining)
    eligible = run.fast_eligible()
    if fast_path is None:
        fast = eligible
    elif fast_path and not eligible:
        raise ConfigError("fast_path", True, "False or None unless every message takes the same time (complete "
                          "topology, task_bytes 0), the information is exact and the balancer is neither "
                          "periodic nor sender-initiated nor reads loads")
    else:
        fast = bool(fast_path)
    balancer.start(run.view, run.rng)
    run.start_info()
    server = balancer.reserved_node()
    if server is not None and run.dq[server]:
        # the Loadserver's LIS computes nothing (001 §2.2): a root there would run there, alone
        raise ConfigError("start_node", server, f"a node other than {balancer.name}'s server node {server} "
                          "(its Load Information Server computes nothing)")
    # millions of short-lived tuples and no reference cycles: the cyclic collector only costs time
    log: list | None = [] if log_events else None
    with paused_gc():
        if fast:
            fast_loop(run, log)
        else:
            k = run.general(log_events)
            log = k.log
    if run.tick is not None:
        run.tick.finish(run.n_done)
    tr = run.trace(fast)
    if log is not None:
        tr.meta["event_log"] = log
    return tr


class _Run:
    """One run's state, shared by the general and the specialised loop, and the general loop."""

    def __init__(self, platform, workload, balancer, seed, rng, start_node, record, tps, control_bytes,
                 task_bytes, info, backoff):
        if not isinstance(balancer, MigrationBalancer):
            raise ConfigError("balancer", getattr(balancer, "name", balancer),
                              "a migration balancer for a task-tree workload")
        for attr in ("roots", "children", "cost", "estimate"):
            if not callable(getattr(workload, attr, None)):
                raise ConfigError("workload", type(workload).__name__,
                                  "a task tree (TaskTree, FlatTasks, or roots/children/cost/estimate methods)")
        order = getattr(workload, "order", "df")
        if order not in ("df", "bf"):
            raise ConfigError("workload.order", order, "'df' or 'bf'")
        for i, n in enumerate(platform.nodes):
            if n.cores != 1:
                raise ConfigError(f"nodes[{i}].cores", n.cores,
                                  "1 in the asynchronous tree engine (one worker per node: give each core a node)")
        for fld, v in (("control_bytes", control_bytes), ("task_bytes", task_bytes)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0 or not math.isfinite(v):
                raise ConfigError(fld, v, "a finite number >= 0")
        if tps is not None and (isinstance(tps, bool) or not isinstance(tps, Integral) or tps < 1):
            raise ConfigError("ticks_per_second", tps, "None or an integer >= 1")
        P = self.P = platform.n_nodes
        self.platform, self.workload, self.balancer = platform, workload, balancer
        self.seed, self.record = seed, bool(record)
        self.tps = int(tps) if tps is not None else None
        self.tol = 0 if tps is not None else SIMULTANEITY_TOLERANCE
        self.lifo = order == "df"
        self.cost, self.children = workload.cost, workload.children
        self.control_bytes, self.task_bytes = control_bytes, task_bytes

        self.complete = P <= 1 or platform.complete
        if not self.complete:
            import networkx as nx

            if not nx.is_connected(platform.graph):
                raise ConfigError("network.topology", "a disconnected graph", "a connected graph")
        net = platform.network
        self.latency, self.bandwidth = net.latency, net.bandwidth
        self._delays: dict = {}  # (hops, bytes) -> a message's time in engine units
        polls = balancer.receiver_initiated or balancer.periodic
        if P > 1 and polls and self.latency == 0 and control_bytes == 0:
            raise ConfigError("network.latency", 0.0, "> 0 (or control_bytes > 0) for a balancer that asks or "
                              "orders: messages that take no time would poll forever at one instant")

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

        neighbours = platform.neighbours() if P > 1 else [[]]
        self.view = TreeView(P, neighbours=neighbours, speeds=list(self.speeds))
        self.loads = bool(balancer.reads_loads)
        self.low = int(balancer.low_water) if balancer.receiver_initiated else 0
        # a rule that adapts per phase (PhaseAdaptive) watches the global state at every periodic
        # point, whether or not its current phase's rule balances there
        self.observes = balancer.observes
        self.phases: list = []  # (time, phase) at the start and at each phase change

        roots = list(workload.roots())
        if not roots:
            raise ConfigError("workload.roots()", roots, "at least one task")
        if isinstance(start_node, Integral) and not isinstance(start_node, bool):
            places = [int(start_node)] * len(roots)
        else:
            try:
                places = [int(x) for x in start_node]
            except (TypeError, ValueError):
                raise ConfigError("start_node", start_node, "a node index or one node index per root") from None
            if len(places) != len(roots):
                raise ConfigError("start_node", f"{len(places)} nodes", f"one node per root ({len(roots)})")
        for x in places:
            if not 0 <= x < P:
                raise ConfigError("start_node", x, f"a node index in [0, {P - 1}]")
        self.backoff = resolve_backoff(backoff, platform, workload, roots, control_bytes)
        # the back-off after k consecutive empty replies, in engine units, for k = 0 .. len - 1 (the
        # last entry is the longest: it holds for every larger k); [0] when there is none
        self.pauses = self._pauses(*self.backoff)
        self.fails = [0] * P  # consecutive empty replies per node (reset by a reply with tasks)
        # the message budget: at most poll_floor + poll_step · (completed tasks) messages (see the limit)
        self.poll_floor = MAX_MESSAGES
        self.poll_step = P * MAX_MESSAGES_PER_NODE_TASK
        self.dq = [deque() for _ in range(P)]
        for task, x in zip(roots, places):
            self.dq[x].append(task)

        # per-node state
        self.busy = [False] * P
        self.out = [0] * P  # requests outstanding
        # tasks the centre has ordered in (+) or out (-) of each node and not yet seen arrive or leave
        self.pend = [0] * P
        # a receiver-initiated rule that reads loads: nodes whose on_idle named nobody (parked), and
        # the nodes whose queue changed in the current event (a parked neighbour then asks again)
        self.watch = bool(balancer.receiver_initiated and balancer.reads_loads)
        self.parked: set = set()
        self.touched: set = set()
        self.done = self.view.done  # the engine's counters are the view's: always exact
        self.running: list = [None] * P
        self.s_first = [0] * P  # the current busy stretch: tasks done before it, and its start
        zero = 0 if self.tps else 0.0  # engine time: ticks or seconds
        self.s_start: list = [zero] * P
        self.free_since: list = [zero] * P
        # counters
        self.events = self.messages = 0
        self.bytes = 0.0
        self.steal_requests = self.steals = self.tasks_moved = self.transfers = 0
        self.waiting = len(roots)
        self.remaining = len(roots)  # created and not completed
        self.n_done = 0
        self.work = 0.0
        self.max_cost = 0.0
        self.makespan: Any = zero
        self.rows: tuple[list, ...] = ([], [], [], [], [], [])
        self.w_t: list = [zero]
        self.w_n: list = [len(roots)]
        self.w_q: list = [list(map(len, self.dq))]  # waiting tasks per node, at the same instants (lists: the
        # trace keeps these very rows, no copy of up to 2 × WAITING_SAMPLES × nodes counts at the end)
        self.w_mask = 0  # sample when n_done & mask == 0 (the stride is a power of two)
        self.tick = None  # the progress Ticker (dlbkit.sim.progress), if any
        self.countdown = 1  # completions until the ticker is asked again (general loop)
        self.w_limit = 2 * WAITING_SAMPLES
        if self.loads:
            est = workload.estimate
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
        """Raise the ConfigError of a run past its message budget (:data:`MAX_MESSAGES`)."""
        first, longest = self.backoff
        now = self.sec(t)
        raise ConfigError("backoff", [first, longest] if first else "off",
                          f"a back-off under which idle nodes' requests for work stay within "
                          f"{MAX_MESSAGES:,} messages plus {MAX_MESSAGES_PER_NODE_TASK:,} per node and completed "
                          f"task (dlbkit's limit, passed at simulated time {now:.6g} s after {self.n_done:,} "
                          "tasks while idle nodes kept asking busy ones: give backoff = [first, longest] in "
                          "seconds with a longer longest, or a shorter run)")

    def pause(self, thief: int, tasks) -> Any:
        """Count *thief*'s failed requests (reset by *tasks*); the back-off its reply is held by."""
        if tasks:
            self.fails[thief] = 0
            return 0
        k = self.fails[thief] = self.fails[thief] + 1
        p = self.pauses
        return p[k] if k < len(p) else p[-1]

    def fast_eligible(self) -> bool:
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

    def trace(self, fast: bool) -> Trace:
        sec = self.sec
        tr = Trace(self.P, list(range(self.P)), balancer=self.balancer.name, seed=self.seed, source="sim",
                   family="tree", speeds=list(self.speeds), availability=self.availability, total_work=self.work,
                   max_item=self.max_cost)
        w, first, count, ask, start, end = self.rows
        tr.node, tr.first, tr.count = w, first, count
        tr.t_ask, tr.t_start, tr.t_end = ([sec(x) for x in col] for col in (ask, start, end))
        tr.round_of = [-1] * len(w)
        tr.events, tr.messages, tr.bytes = self.events, self.messages, self.bytes
        tr.end_time = sec(self.makespan)
        if self.decided is not None:
            tr.decisions = self.decided
        if self.exact:  # the decider's view is the truth, and knowing it costs nothing
            tr.info_messages, tr.info_bytes, tr.info_age_mean = 0, 0.0, 0.0
        else:
            m = self.info
            tr.info_messages, tr.info_bytes, tr.info_age_mean = m.messages_, m.bytes_, m.age_mean
            tr.meta["info"] = {"model": m.name, **m.get_params(), "rounds": m.rounds_}
        if self.record and self.w_t[-1] != self.makespan:  # always end on the last completion
            self.w_t.append(self.makespan)
            self.w_n.append(self.waiting)
            self.w_q.append(list(map(len, self.dq)))
        waiting = list(zip((sec(x) for x in self.w_t), self.w_n)) if self.record else []
        queues = self.w_q if self.record else []
        tr.meta.update(mechanism="tree-async", balancer_params=self.balancer.get_params(),
                       order="df" if self.lifo else "bf", tasks=self.n_done, expanded=list(self.done),
                       steal_requests=self.steal_requests, steals=self.steals, tasks_moved=self.tasks_moved,
                       transfers=self.transfers, waiting=waiting, queues=queues, phases=self.phases,
                       makespan=tr.end_time, fast_path=fast, backoff=list(self.backoff),
                       ticks_per_second=self.tps, control_bytes=self.control_bytes, task_bytes=self.task_bytes)
        return tr

    # --- the general loop: the family's rules as handlers on the kernel ---------------------------
    def general(self, log: bool = False) -> Kernel:
        """Run to the end on a :class:`~dlbkit.sim.kernel.Kernel` (every event at NORMAL priority, so
        simultaneous events run FIFO); *log* keeps the kernel's event log. Return the kernel."""
        k = self.kernel = Kernel(tolerance=self.tol, log=log)
        self.schedule = k.schedule
        # the handlers, bound once (a bound method per message would be built and dropped)
        self.on_completion, self.on_request, self.on_reply = self.on_completion, self.on_request, self.on_reply
        self.on_push, self.on_move, self.on_order = self.on_push, self.on_move, self.on_order
        b = self.balancer
        self.periodic = b.periodic or self.observes
        self.threshold = float(b.interval) if self.periodic else _INF
        self.since = [0] * self.P  # tasks each node completed since the last periodic point
        self.since_max = 0
        if self.observes:
            self.phases.append((0.0, b.phase()))
        self.order_delay = self._one_hop()
        # only a periodic rule or a watcher has anything to do after an event (see after())
        self.settle = self.periodic or self.watch
        for w in range(self.P):
            if self.dq[w]:
                self.start(w, 0)
            self.trigger(w, 0)
        if not self.exact and self.info_period < _INF:
            self.schedule(self.info_period, self.on_info_round, priority=URGENT)
        self.changed = False
        try:
            k.run()
        finally:
            # the bound handlers and the kernel refer back to this run: no cycles left for the collector
            del self.on_completion, self.on_request, self.on_reply, self.on_push, self.on_move, self.on_order
            del self.schedule, self.kernel
        self.events = k.processed
        if self.remaining:  # pragma: no cover - a waiting task always has a busy node: a bug
            raise DlbkitError(f"internal: no event scheduled with {self.remaining} tasks left")
        return k

    def after(self, t) -> None:
        """What follows every event when ``settle``: a periodic point if one is due, and parked nodes
        next to a changed queue ask again (nodes are only touched and parked for a watcher)."""
        if self.periodic and (self.changed if self.threshold == 0 else self.since_max >= self.threshold):
            self.balance(t)
        if self.touched:
            if self.parked:
                self.wake(t)
            else:
                self.touched.clear()
        self.changed = False

    def send(self, t, handler, src: int, dst: int, pay, ntasks: int, held=0) -> None:
        """A message from *src* to *dst*: ``handler(arrival, dst, src, pay)`` when it is delivered
        (*held* engine units after its network time: an empty reply's back-off)."""
        nbytes = self.control_bytes + ntasks * self.task_bytes
        self.messages += 1
        self.bytes += nbytes
        self.schedule(t + self.delay(src, dst, nbytes) + held, handler, dst, src, pay)

    def refresh(self, w: int, t) -> TreeView:
        """The view as node *w* sees it now (its own entries exact; the others' from the information
        model when it is not exact and the rule reads loads)."""
        v = self.view
        s = t / self.tps if self.tps else t  # NOTE: sec() inlined (twice per steal attempt)
        v.time = s
        v.node = w
        own = len(self.dq[w]) + self.pend[w]
        if not self.exact and self.loads:
            self.info.fill(w, s, max(0, own), v.queue, v.updated_at, integer=True)
            return v
        v.queue[w] = max(0, own)  # an order may outrun the queue
        v.updated_at[w] = s
        return v

    # --- the information layer (dlbkit.info) when it is not exact -------------------------------
    def start_info(self) -> None:
        """Start the information model: everyone knows the start (where the roots are)."""
        if self.exact:
            return
        if self.balancer.reads_work:  # the engine keeps view.work exact; no model carries it
            raise ConfigError("info", self.info.name, f"'exact' for {self.balancer.name} with a remaining-work "
                              "detector (the information layer carries queue lengths, not work estimates)")
        self.info.start(self.P, self.view.neighbours, [len(d) for d in self.dq], self.rng_info)
        self.info_period = ticks(self.info.interval, self.tps) if self.info.interval < _INF else _INF
        if self.info_period < _INF and not self.info_period > 0:
            raise ConfigError("info.period", self.info.interval, "a period of at least one tick")

    def on_info_round(self, t) -> None:
        """An information round: the model's messages leave now, each delivered after its network
        time (URGENT: a decision at the instant a report arrives already sees it)."""
        # what each node knows of itself: its queue (orders still on their way it cannot know; the
        # centre adds its own in-flight orders when it decides, see balance())
        truth = [len(d) for d in self.dq]
        for m in self.info.round(self.sec(t), truth):
            self.schedule(t + self.delay(m.src, m.dst, m.bytes), self.on_info, m, priority=URGENT)
        self.info.check_budget(self.sec(t))
        self.schedule(t + self.info_period, self.on_info_round, priority=URGENT)

    def on_info(self, t, m) -> None:
        """Load entries reached node ``m.dst``: merged; a parked node reconsiders (its view changed)."""
        self.info.deliver(m)
        if self.watch and m.dst in self.parked:
            self.parked.discard(m.dst)
            self.trigger(m.dst, t)

    def _loads(self, w: int, t, tasks, sign: int) -> None:
        """Keep the exact view of node *w* after *tasks* joined (+1) or left (-1) its deque."""
        v = self.view
        v.queue[w] = max(0, len(self.dq[w]) + self.pend[w])  # an order may outrun the queue
        v.updated_at[w] = self.sec(t)
        if self.watch and self.exact:  # others learn of the change at once only with exact information
            self.touched.add(w)
        if not self.dq[w]:
            v.work[w] = 0.0  # no drift from adding and subtracting floats
        else:
            est = self.workload.estimate
            v.work[w] += sign * sum(est(x) for x in tasks)
        self.changed = True

    def take(self, w: int, n: int, t) -> list:
        """Remove node *w*'s *n* oldest waiting tasks."""
        d = self.dq[w]
        tasks = [d.popleft() for _ in range(n)]
        self.waiting -= n
        self.tasks_moved += n
        self.changed = True
        if self.loads:
            self._loads(w, t, tasks, -1)
        return tasks

    def receive(self, w: int, tasks, t) -> None:
        self.dq[w].extend(tasks)
        self.waiting += len(tasks)
        self.changed = True
        if self.loads:
            self._loads(w, t, tasks, +1)
        if not self.busy[w]:
            self.start(w, t)

    def start(self, w: int, t) -> None:
        d = self.dq[w]
        task = d.pop() if self.lifo else d.popleft()
        self.waiting -= 1
        self.changed = True
        if self.loads:
            self._loads(w, t, (task,), -1)
        c = self.cost(task)
        self.work += c
        if c > self.max_cost:
            self.max_cost = c
        self.running[w] = task
        if not self.busy[w]:
            self.busy[w] = True
            self.s_first[w] = self.done[w]
            self.s_start[w] = t
        self.schedule(self.end_time(w, t, c), self.on_completion, w)

    def close(self, w: int, t) -> None:
        """End node *w*'s busy stretch at *t* (one trace row)."""
        if self.record:
            for col, x in zip(self.rows, (w, self.s_first[w], self.done[w] - self.s_first[w], self.free_since[w],
                                          self.s_start[w], t)):
                col.append(x)
        self.free_since[w] = t

    def sample(self, t) -> None:
        if self.record and not (self.n_done & self.w_mask):
            self.w_t.append(t)
            self.w_n.append(self.waiting)
            self.w_q.append(list(map(len, self.dq)))
            if len(self.w_t) > self.w_limit:
                self.w_t, self.w_n, self.w_q = self.w_t[::2], self.w_n[::2], self.w_q[::2]
                self.w_mask = 2 * self.w_mask + 1

    def trigger(self, w: int, t) -> None:
        """Ask for work if node *w* is receiver-initiated and runs (or ran) low."""
        if self.balancer.receiver_initiated and not self.out[w]:
            d = self.dq[w]
            if (not self.busy[w] and not d) or (self.low > 0 and len(d) <= self.low):
                self.ask(w, t)

    def ask(self, w: int, t) -> None:
        if self.decided is None:
            reqs = self.requests(w, self.balancer.on_idle(self.refresh(w, t), w))
        else:
            reqs = victims(self.balancer, self.refresh(w, t), w, self.decided)
        if self.watch:
            if reqs:
                self.parked.discard(w)
            else:
                self.parked.add(w)
        for v, wanted in reqs:
            self.steal_requests += 1
            self.out[w] += 1
            self.send(t, self.on_request, w, v, wanted, 0)

    def wake(self, t) -> None:
        """Parked nodes next to a node whose queue changed ask again (in node order): their view
        changed, as a runtime worker reconsiders when load reports reach it."""
        touched, self.touched = self.touched, set()
        nbrs = self.view.neighbours
        for i in sorted(self.parked):
            if i in self.parked and any(j in touched for j in nbrs[i]):
                self.parked.discard(i)
                self.trigger(i, t)

    def on_done(self, t, w: int) -> bool:
        self.done[w] += 1
        self.n_done += 1
        k = self.since[w] = self.since[w] + 1
        if k > self.since_max:
            self.since_max = k
        self.remaining -= 1
        self.changed = True
        if self.loads:
            self.view.updated_at[w] = self.sec(t)
        kids = self.children(self.running[w])
        self.running[w] = None
        if kids:
            self.remaining += len(kids)
            if self.balancer.sender_initiated:
                self.place(w, list(kids), t)
            else:
                self.dq[w].extend(kids)
                self.waiting += len(kids)
                if self.loads:
                    self._loads(w, t, kids, +1)
        self.sample(t)
        if self.tick is not None:
            self.countdown -= 1
            if not self.countdown:
                self.countdown = self.tick(self.n_done, self.n_done + self.remaining)
        if self.remaining == 0:
            self.close(w, t)
            self.makespan = t
            return True
        if self.dq[w]:
            self.start(w, t)
        else:
            self.busy[w] = False
            self.close(w, t)
        self.trigger(w, t)
        return False

    def place(self, w: int, kids: list, t) -> None:
        """Sender-initiated: on_spawn gives each child a node (the view's queue is before them)."""
        b = self.balancer
        dests = placements(b, self.refresh(w, t), w, len(kids), self.decided)
        local, away = [], {}
        for child, x in zip(kids, dests):
            if x == w:
                local.append(child)
            else:
                away.setdefault(x, []).append(child)
        if local:
            self.dq[w].extend(local)
            self.waiting += len(local)
            if self.loads:
                self._loads(w, t, local, +1)
        for x, tasks in away.items():
            self.tasks_moved += len(tasks)
            self.send(t, self.on_push, w, x, tasks, len(tasks))

    # --- event handlers (the kernel calls them; the specialised loop logs the same names) ---------
    def on_completion(self, t, w: int) -> None:
        """Node *w* completed its task."""
        if self.on_done(t, w):
            self.kernel.stop()  # the last task: nothing after it counts
        if self.settle:
            self.after(t)

    def on_request(self, t, v: int, thief: int, wanted: int) -> None:
        """A steal request from *thief* reached victim *v*."""
        q = len(self.dq[v])
        n = given(self.balancer, self.refresh(v, t), v, thief, q, wanted, self.decided)
        tasks = self.take(v, n, t) if n > 0 else _EMPTY
        if not tasks and self.messages > self.poll_floor + self.poll_step * self.n_done:
            self.polling_exceeded(t)
        held = self.pause(thief, tasks) if self.backoff[0] else 0
        self.send(t, self.on_reply, v, thief, tasks, len(tasks), held)
        if self.low > 0:
            self.trigger(v, t)
        if self.settle:
            self.after(t)

    def on_reply(self, t, thief: int, victim: int, tasks) -> None:
        """The reply to a steal request reached *thief*."""
        self.out[thief] -= 1
        if tasks:
            self.steals += 1
            self.receive(thief, tasks, t)
        self.trigger(thief, t)
        if self.settle:
            self.after(t)

    def on_push(self, t, dst: int, src: int, tasks) -> None:
        """Children that on_spawn placed on *dst* arrived."""
        self.receive(dst, tasks, t)
        self.trigger(dst, t)
        if self.settle:
            self.after(t)

    def on_move(self, t, dst: int, src: int, tasks) -> None:
        """Tasks the centre ordered from *src* arrived at *dst*."""
        self.pend[dst] -= len(tasks)
        self.receive(dst, tasks, t)
        self.trigger(dst, t)
        if self.settle:
            self.after(t)

    def on_order(self, t, src: int, dst: int, n: int) -> None:
        """The centre's order to send *n* tasks to *dst* reached *src*."""
        k = min(n, len(self.dq[src]))
        self.pend[src] += n
        self.pend[dst] -= n - k  # what will not come after all
        if self.loads:
            self._loads(dst, t, (), +1)
            self._loads(src, t, (), -1)
        if k > 0:
            self.send(t, self.on_move, src, dst, self.take(src, k, t), k)
            if self.low > 0:
                self.trigger(src, t)
        if self.settle:
            self.after(t)

    def balance(self, t) -> None:
        self.since = [0] * self.P
        self.since_max = 0
        v = self.view
        v.time = self.sec(t)
        v.node = -1
        b = self.balancer
        if not self.exact and self.loads:
            # the centre's knowledge, plus its own orders still in flight (it knows what it ordered)
            c = self.info.centre
            self.info.fill(c, v.time, max(0, len(self.dq[c]) + self.pend[c]), v.queue, v.updated_at, integer=True)
            q, pend = v.queue, self.pend
            for j in range(self.P):
                if j != c:
                    q[j] = max(0, q[j] + pend[j])
        if self.observes:
            before = b.phase()
            b.observe(v)
            self.threshold = float(b.interval)  # the new phase's interval (inf: no more)
            self.low = int(b.low_water) if b.receiver_initiated else 0
            if b.phase() != before:
                self.phases.append((v.time, b.phase()))
            if b.acting() is None:
                return
        for tr in transfers(b, v, self.decided):
            src, dst, n = tr.src, tr.dst, tr.n
            # no more than src holds, as far as the centre knows
            n = min(int(n), len(self.dq[src]) + self.pend[src] if self.exact else v.queue[src])
            if n > 0:
                self.transfers += 1
                self.messages += 1
                self.bytes += self.control_bytes
                self.pend[src] -= n
                self.pend[dst] += n
                if self.loads:
                    v.queue[src] -= n
                    v.queue[dst] += n
                self.schedule(t + self.order_delay, self.on_order, src, dst, n)


def resolve_backoff(backoff: Any, platform: Platform, workload: Any, roots: Sequence,
                    control_bytes: float) -> tuple[float, float]:
    """The (first, longest) back-off in seconds of a run: *backoff* checked by
    :func:`~dlbkit.families.tree.model.backoff.check_backoff`; ``"auto"`` is first = one request round trip (two
    control messages over one hop: M2's polling period) and longest = :data:`AUTO_LONGEST_TASKS` mean
    task times (the mean cost of the first 1024 roots at the platform's mean speed), at least first.
    (0, 0) without messages that take time (one node, or latency and control bytes 0)."""
    backoff = check_backoff(backoff, "backoff")
    if backoff != AUTO:
        return backoff
    net = platform.network
    first = 2 * message_time(1, control_bytes, net.latency, net.bandwidth)
    if platform.n_nodes < 2 or not first > 0:
        return NO_BACKOFF
    costs = [float(workload.cost(r)) for r in roots[:1024]]
    speed = sum(float(n.speed) for n in platform.nodes) / platform.n_nodes
    task = sum(costs) / len(costs) / speed if speed > 0 else 0.0
    longest = AUTO_LONGEST_TASKS * task if math.isfinite(task) else first
    return first, max(first, longest)
