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

from typing import Any

from dlbkit.families.tree.balancers.base import MigrationBalancer
from dlbkit.errors import ConfigError
from dlbkit.info import resolve as resolve_info
from dlbkit.model.gcpause import paused_gc
from dlbkit.model.platform import Platform
from dlbkit.model.trace import Trace
from dlbkit.families.tree.sim._fast import fast_loop
from dlbkit.families.tree.sim._options import AUTO_LONGEST_TASKS, resolve_backoff
from dlbkit.families.tree.sim._rules import TreeRun
from dlbkit.families.tree.sim._state import Limits
from dlbkit.families.tree.sim._trace import tree_trace
from dlbkit.families.tree.sim.options import CONTROL_BYTES, TASK_BYTES, TreeOptions
from dlbkit.sim.progress import ticker

__all__ = ["simulate_tree_async", "TreeOptions", "CONTROL_BYTES", "TASK_BYTES", "WAITING_SAMPLES", "AUTO_LONGEST_TASKS",
           "resolve_backoff", "MAX_MESSAGES", "MAX_MESSAGES_PER_NODE_TASK"]

#: the ``waiting`` series (and ``queues``, waiting tasks per node at the same instants) keeps between
#: this many and twice as many points (decimated as it grows)
WAITING_SAMPLES = 512
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

# AUTO_LONGEST_TASKS (the "auto" back-off's longest, in mean task times) and resolve_backoff live with the
# other argument checks, in _tree_options; the limits above are read at each call (Limits), so a change
# of them here holds for the next run.


def simulate_tree_async(platform: Platform, workload: Any, balancer: MigrationBalancer, *,
                        seed: int | None = None, options: TreeOptions | None = None, **kwargs: Any) -> Trace:
    """Run task-tree *workload* (:class:`~dlbkit.families.tree.model.workload.TaskTree`, :class:`FlatTasks` or any
    object with ``roots()``, ``children(task)``, ``cost(task)``, ``estimate(task)`` and ``order``)
    on *platform* with migration *balancer*, asynchronously; return the Trace.

    *seed* seeds the availability draws and the balancer's Generator (None: fresh entropy). The options
    are a :class:`~dlbkit.families.tree.sim.options.TreeOptions` (*options*), or its fields as keywords
    (over *options*, if both): *rng* replaces that Generator (any object with the ``integers`` the
    balancer calls). *start_node* is the node holding the roots, or one node per root. *record* False
    skips the chunk rows and the ``waiting`` series. *ticks_per_second* switches to exact integer time (see the module doc).
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
    o = TreeOptions.of(options, kwargs, "simulate_tree_async")
    limits = Limits(MAX_MESSAGES, MAX_MESSAGES_PER_NODE_TASK, WAITING_SAMPLES)
    run = TreeRun(platform, workload, balancer, seed, o, resolve_info(o.info, "info"), limits)
    if o.record_decisions:
        run.decided = []
    run.tick = ticker(o.progress)
    if run.tick is not None:
        run.tick(0, run.remaining)
    fast = _takes_fast_loop(run, o.fast_path)
    balancer.start(run.view, run.rng)
    run.start_info()
    server = balancer.reserved_node()
    if server is not None and run.dq[server]:
        # the Loadserver's LIS computes nothing (001 §2.2): a root there would run there, alone
        raise ConfigError("start_node", server, f"a node other than {balancer.name}'s server node {server} "
                          "(its Load Information Server computes nothing)")
    # millions of short-lived tuples and no reference cycles: the cyclic collector only costs time
    log: list | None = [] if o.log_events else None
    with paused_gc():
        if fast:
            fast_loop(run, log)
        else:
            k = run.general(o.log_events)
            log = k.log
    if run.tick is not None:
        run.tick.finish(run.n_done)
    tr = tree_trace(run, fast)
    if log is not None:
        tr.meta["event_log"] = log
    return tr


def _takes_fast_loop(run: TreeRun, fast_path: bool | None) -> bool:
    """Whether *run* goes through the specialised loop: *fast_path* None when it applies, True only
    where it applies (else a ConfigError), False never."""
    eligible = run.fast_eligible()
    if fast_path is None:
        return eligible
    if fast_path and not eligible:
        raise ConfigError("fast_path", True, "False or None unless every message takes the same time (complete "
                          "topology, task_bytes 0), the information is exact and the balancer is neither "
                          "periodic nor sender-initiated nor reads loads")
    return bool(fast_path)
