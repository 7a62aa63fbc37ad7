"""The synchronous (BSP, superstep) task-tree simulator of Haron's thesis (001 §4), T3D-costed.

One iteration (001 Fig. 4.1): every processor executes up to *i* nodes of its local queue (children
created during the iteration are eligible), then the balancer decides (:meth:`balance`), the engine
moves the tasks and costs the information exchange and the migrations, then an ``MPI_Allreduce``
barrier ends the iteration and carries the global task count n(t) (001 §3.9 item 1). The run ends
after the iteration whose barrier counts no waiting task; that iteration counts.

Costing (001 §3.3–3.6 and the reconstruction details of §3.9 items 6–7, the ones that make the
thesis's numbers reproducible), per processor clock, µs, restarted at 0 every iteration:

* compute: ``T_c + g·T_fl`` per node plus ``T_e`` per child created;
* ``protocol == "pairwise"`` (GDEM): colour by colour, every pair (a, b) exchanges loads
  sequentially — a sends one integer, b receives (``max(R + T_recvmin, S + T_recv)``) and sends
  back, a receives — then each transfer of *m* tasks (a task message is 3 integers per node) costs
  the sender ``m·T_dq + T_send(3m)`` and the receiver ``max(R + T_recvmin(3m), S + T_recv(3m)) +
  m·T_eq``. The pairs of one colour are disjoint, so each colour is costed as numpy vectors;
* ``protocol == "server"`` (Loadserver): a light registration costs ``T_send(1)``; a query one
  ping-pong plus the LIS service time of the cost model's contention rule; migrations as above; then
  PROCEED: worker 0 sends W − 1 sequential one-integer messages starting at the latest clock, and
  each receiver pays the receive delay (001 §3.9 item 7). The LIS node computes nothing and is left
  out of the averages and of the barrier (W = p − 1 workers);
* ``protocol == "none"`` (any other rule with a ``balance`` hook): only the migrations, in order;
* receiver-initiated rules (``steal``, ``rid``): after the compute phase, one synchronous round in
  which every worker with at most ``low_water`` waiting tasks sends its requests (one integer) and
  each victim answers with its oldest tasks or an empty one-integer reply;
* sender-initiated rules (``sid``, ``random``): each expansion's children go where
  :meth:`on_spawn` says (deciding on the loads of the last barrier, the node's own exact); those
  for other processors travel, one task message per destination, at the start of the LB phase.

Each iteration's compute, LB (including waiting inside LB) and idle (waiting for the slowest before
the barrier) times are averaged over the (worker) processors; synch is ``T_allreduce`` over them. Total =
Compute + LB + Idle + Synch summed over iterations (001 §3.3 [INF]). A phase wrapper is told the
global count after every barrier (:meth:`observe`) and its ``interval`` and :meth:`acting` are read
every iteration; ``interval`` ``inf`` (phase III) runs every local task in one iteration.

The result carries the run's :class:`~dlbkit.model.trace.Trace` too (``result.trace``, family
"tree"), in the same format as every other engine's: per iteration and processor one interval (the
nodes it executed, from the iteration's start on the global clock to the end of its compute phase),
the tasks that moved (stamped with the time of the iteration's barrier), the waiting tasks per
processor after every barrier (``series["waiting"]``), and the 001 breakdown in ``meta``. Work is
counted in seconds of T3D computation (speed 1 per processor), so the trace's lower bound is the
compute spread evenly over all p processors.
"""

from __future__ import annotations

import math
import operator
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from dlbkit.families.tree.balancers.base import MigrationBalancer
from dlbkit.families.tree.balancers.decide import given, placements, victims
from dlbkit.families.tree.balancers.decide import transfers as decided_transfers
from dlbkit.balancers.registry import resolve
from dlbkit.errors import ConfigError
from dlbkit.families.tree.model.seeding import SUPERSTEP
from dlbkit.model.seeding import streams
from dlbkit.model.topology import build, dims_create, edge_colouring, given_graph, is_networkx, kary_ncube, neighbour_lists
from dlbkit.model.availability import Constant
from dlbkit.model.platform import MAX_NODES
from dlbkit.model.trace import Trace
from dlbkit.families.tree.model.workload import FlatTasks, TaskTree
from dlbkit.families.tree.model.view import TreeView
from dlbkit.families.tree.sim.t3d import T3D

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["SuperstepResult", "simulate_superstep", "TOPOLOGIES", "topology_graph"]

TOPOLOGIES = ("torus", "mesh", "ring", "chain", "hypercube", "complete")
#: integers per migrated tree node in a task message (001 §3.9 item 6)
NODE_INTS = 3
_US = 1e-6


@dataclass
class SuperstepResult:
    """A superstep run. Times in seconds: *compute*, *lb*, *idle* and *synch* are averaged over the
    processors that compute (the W workers for the Loadserver) and summed over iterations; *total*
    is their sum (001's "Total"). *n_series[t]* is the global waiting-task count at the barrier of
    iteration t + 1 (Haron's n(t), after LB); *queue_series* the per-processor counts (iterations ×
    p); *interval_series* and *phase_series* what the balancer used each iteration; *trace* the run
    as a :class:`~dlbkit.model.trace.Trace` (see the module's docstring)."""

    total: float
    compute: float
    lb: float
    idle: float
    synch: float
    iterations: int
    nodes: int
    p: int
    workers: int
    messages: int
    tasks_moved: int
    transfers: int
    n_series: np.ndarray
    queue_series: np.ndarray
    executed: np.ndarray
    interval_series: list = field(default_factory=list)
    phase_series: list = field(default_factory=list)
    _raw: tuple | None = field(default=None, repr=False, compare=False)
    _trace: Trace | None = field(default=None, repr=False, compare=False)

    @property
    def trace(self) -> Trace:
        """The run as a :class:`Trace`, built on first use (most reproduction runs need only the
        breakdown)."""
        if self._trace is None:
            self._trace = _trace(self, *self._raw)
            self._raw = None
        return self._trace

    @property
    def speed(self) -> float:
        """Nodes executed per second of total time (001 §4.2.3)."""
        return self.nodes / self.total if self.total > 0 else math.inf

    def breakdown(self) -> dict[str, Any]:
        """The columns of 001's detailed tables: Total, Compute, LB, Idle, Synch, Iter, Speed."""
        return {"total": self.total, "compute": self.compute, "lb": self.lb, "idle": self.idle,
                "synch": self.synch, "iterations": self.iterations, "speed": self.speed, "nodes": self.nodes}


def topology_graph(kind: str | nx.Graph, p: int) -> nx.Graph:
    """The interconnect on *p* processors: a 2-D torus or mesh of ``dims_create(p, 2)`` sides (001
    §3.1: 8 → 4×2, 128 → 16×8), a ring, a chain, a hypercube, the complete graph, or a given graph."""
    if is_networkx(kind):
        import networkx as nx

        g = given_graph(kind, p, "topology", per="processor")
        # a kary_ncube passed as a graph is coloured by its shape, as the named torus is; a shape that
        # is not the graph's (a stale or foreign attribute) coloured pairs that are not linked
        dims = kind.graph.get("dims")
        try:
            sides = tuple(operator.index(d) for d in dims) if dims is not None else ()
        except TypeError:
            sides = ()
        if sides and min(sides) >= 1 and math.prod(sides) == p:
            shaped = kary_ncube(sides, wrap=bool(kind.graph.get("wrap")))
            if {frozenset(e) for e in shaped.edges} == {frozenset(e) for e in g.edges}:
                return shaped
        if not kind.is_directed() and not kind.is_multigraph() and nx.number_of_selfloops(kind) == 0:
            # a simple graph as the caller built it, less any shape: the greedy edge colouring follows
            # its node and edge order (given_graph's 0..p-1 rebuild coloured it otherwise, and changed
            # the numbers a graph gave before it was checked)
            own = kind.copy()
            own.graph.pop("dims", None)
            return own
        return g
    if kind not in TOPOLOGIES:
        raise ConfigError("topology", kind, "a networkx graph or one of " + ", ".join(TOPOLOGIES))
    if kind in ("torus", "mesh"):
        return kary_ncube(dims_create(p, 2), wrap=(kind == "torus"))
    if kind in ("ring", "chain"):
        return kary_ncube((p,), wrap=(kind == "ring"))
    return build(kind, p, field="topology")  # hypercube, complete


def _balancer(b) -> MigrationBalancer | None:
    return resolve(b, kind="migration", allow_none=True)


def simulate_superstep(workload: TaskTree | FlatTasks, balancer: MigrationBalancer | str | None = "gdem", *,
                       p: int, topology: str | nx.Graph = "torus", cost: T3D | None = None, seed: int = 0,
                       interval: float | None = None) -> SuperstepResult:
    """Run *workload* on *p* processors with *balancer* (an instance, a registry name, or None /
    "none" for no balancing) under the T3D *cost* model (default :class:`T3D`).

    *interval* overrides the balancer's LB interval (Haron's i: nodes each processor executes per
    iteration); without a balancer it defaults to ``inf`` (each processor runs its whole subtree).
    An interval below 1 (the Loadserver's asynchronous "every update") runs as 1. *seed* seeds the
    Generator passed to the balancer's ``start``. The workload's ``order`` picks local depth-first
    (run the newest) or breadth-first (run the oldest); migration always takes the oldest.
    """
    p = _checked(workload, p, interval, cost)
    return _Superstep(workload, _balancer(balancer), p, topology, cost or T3D(), seed, interval).run()


def _checked(workload, p, interval, cost) -> int:
    """Refuse a bad *p*, *workload*, *interval* or *cost* (in that order); *p* as an int."""
    # bounded as a platform's nodes are: p = 10**18 spent forever factorising the torus's sides
    if not isinstance(p, (int, np.integer)) or isinstance(p, bool) or not 1 <= p <= MAX_NODES:
        raise ConfigError("p", p, f"a positive int (processors), at most {MAX_NODES:,} (dlbkit's limit)")
    if not all(callable(getattr(workload, a, None)) for a in ("roots", "children", "cost", "estimate")) or \
            getattr(workload, "order", None) not in ("df", "bf"):
        raise ConfigError("workload", type(workload).__name__, "a TaskTree or FlatTasks")
    if interval is not None and (isinstance(interval, bool) or not isinstance(interval, (int, float))
                                 or math.isnan(interval) or interval < 0):
        raise ConfigError("interval", interval, "None or a number >= 0 (inf: every local task in one iteration)")
    if cost is not None and not isinstance(cost, T3D):  # a dict or a number used to fail as an AttributeError
        raise ConfigError("cost", cost, "None or a dlbkit.families.tree.sim.t3d.T3D (its constants as keywords: T3D(t_fl=0.2))")
    return int(p)


class _Superstep:
    """One superstep run: the processors' queues, the balancer and its view, the 001 times accumulated
    (µs, averaged over the workers) and what the trace keeps; :meth:`run` iterates to the end."""

    def __init__(self, workload, bal: MigrationBalancer | None, p: int, topology, cost: T3D, seed: int,
                 interval: float | None):
        self.p, self.bal, self.cost, self.seed, self.interval = p, bal, cost, seed, interval
        self._machine(topology)
        self._tasks(workload)
        self._accounts()

    # --- the steps of __init__ ----------------------------------------------------------------------
    def _machine(self, topology) -> None:
        """The interconnect, the balancer's view (started), and the workers (all but a Loadserver's LIS)."""
        p, bal = self.p, self.bal
        g = topology_graph(topology, p)
        pairwise = bal is not None and bal.protocol == "pairwise"
        colours = edge_colouring(g) if g.graph.get("dims") or pairwise else []
        self.view = TreeView(p, neighbours=neighbour_lists(g), colours=colours)
        rng = streams(self.seed, SUPERSTEP).rng("balancer")
        if bal is not None:
            bal.start(self.view, rng)
        server = bal.reserved_node() if bal is not None else None  # the LIS computes nothing
        self.workers = [j for j in range(p) if j != server]
        self.widx = np.array(self.workers, dtype=np.int64)
        self.W = len(self.workers)

    def _tasks(self, workload) -> None:
        """The workload as the compute phase reads it, and its roots on the first worker."""
        cost = self.cost
        self.workload = workload
        self.df = workload.order == "df"
        self.uniform = isinstance(workload, TaskTree)
        self.node_cost = cost.t_c + (workload.grain * cost.t_fl if self.uniform else 0.0)
        self.queues = [deque() for _ in range(self.p)]
        self.queues[self.workers[0]].extend(workload.roots())

    def _accounts(self) -> None:
        """The barrier's cost, the accumulated times and counts, and the series the result keeps."""
        bal = self.bal
        # the barrier's allreduce spans the computing processors: all p, or the W = p - 1 workers when a
        # Loadserver's LIS sits out (001 Tables 5.5, 5.21, 5.27 need T_allreduce(p - 1): 14 iterations
        # at p = 128 give 0.0078 s, 25 at p = 32 give 0.0097 s; T_allreduce(p) gives 0.0079 and 0.0098)
        self.sy = self.cost.allreduce(self.W, bal.barrier_ints if bal is not None else 1)
        self.cp_acc = self.lb_acc = self.idle_acc = self.sy_acc = 0.0
        self.nodes = self.messages = self.moved = self.n_transfers = 0
        self.executed = np.zeros(self.p, dtype=np.int64)
        self.n_series: list[int] = []
        self.q_series: list[list[int]] = []
        self.i_series: list[float] = []
        self.ph_series: list[Any] = []
        self.pair_cache: dict[int, tuple] = {}
        # for the trace: per iteration each processor's compute (µs) and node count, the iteration's
        # span (µs, the slowest worker's clock before the barrier) and the moves carried out
        self.rec_comp: list[list[float]] = []
        self.rec_n: list[list[int]] = []
        self.rec_span: list[float] = []
        self.moves: list[list[tuple[int, int, int]]] = []

    # --- one iteration, step by step ----------------------------------------------------------------
    def run(self) -> SuperstepResult:
        """Iterate (compute, balance, barrier) until a barrier counts no waiting task; the result."""
        bal = self.bal
        it = 0
        while True:
            it += 1
            act = bal.acting() if bal is not None else None
            comp, ns, outbox = self._compute(self._next_interval(), act)
            T = np.array(comp)
            self.cp_acc += T[self.widx].sum() / self.W
            log: list[tuple[int, int, int]] = []
            if act is not None:
                self._balance(act, T, outbox, log)
            self._wait(T, comp, ns, log)
            if self._barrier() == 0:
                break
        return self._result(it)

    def _next_interval(self) -> float:
        """The iteration's interval (at least 1; inf: every local task), and the balancer's phase, kept."""
        bal = self.bal
        if self.interval is not None:
            i = self.interval
        elif bal is None:
            i = math.inf
        else:
            i = bal.interval
        i = max(1, i) if not math.isinf(i) else math.inf
        self.i_series.append(i)
        if bal is not None and bal.observes:
            self.ph_series.append(bal.phase())
        return i

    def _compute(self, i: float, act) -> tuple[list[float], list[int], dict]:
        """Every worker executes up to *i* nodes of its queue (children created meanwhile are eligible);
        each one's compute time (µs) and node count, and the children a sender-initiated rule placed
        elsewhere ((src, dst) -> tasks, to travel in the LB phase)."""
        p, queues, view, cost = self.p, self.queues, self.view, self.cost
        df, uniform, node_cost = self.df, self.uniform, self.node_cost
        children, grain_of = self.workload.children, self.workload.cost
        t_fl, t_e = cost.t_fl, cost.t_e
        executed = self.executed
        comp = [0.0] * p
        ns = [0] * p
        spawn = act is not None and act.sender_initiated
        outbox: dict[tuple[int, int], list] = {}
        for j in self.workers:
            q = queues[j]
            if not q:
                continue
            pop = q.pop if df else q.popleft
            n = nch = 0
            gsum = 0.0
            while q and n < i:
                t = pop()
                n += 1
                if not uniform:
                    gsum += grain_of(t)
                ch = children(t)
                if ch:
                    nch += len(ch)
                    if spawn:
                        view.queue[j] = len(q)
                        view.node = j
                        for c, d in zip(ch, placements(act, view, j, len(ch))):
                            if d == j:
                                q.append(c)
                            else:
                                outbox.setdefault((j, int(d)), []).append(c)
                    else:
                        q.extend(ch)
            executed[j] += n
            ns[j] = n
            self.nodes += n
            comp[j] = n * node_cost + nch * t_e + gsum * t_fl
        return comp, ns, outbox

    def _balance(self, act, T, outbox: dict, log: list) -> None:
        """The LB phase on the clocks *T*: placed children travel, a receiver-initiated rule's steal
        round, a periodic rule's decision costed by its protocol; its time joins LB."""
        queues, view, cost, widx = self.queues, self.view, self.cost, self.widx
        T0 = T.copy()
        view.queue = [len(q) for q in queues]
        view.time = (self.cp_acc + self.lb_acc + self.idle_acc + self.sy_acc) * _US
        for (src, dst), tasks in outbox.items():  # children placed elsewhere travel now
            queues[dst].extend(tasks)
            log.append((src, dst, len(tasks)))
            _migrate(T, cost, src, dst, len(tasks))
            self.messages += 1
            self.moved += len(tasks)
            self.n_transfers += 1
        if act.receiver_initiated:
            view.queue = [len(q) for q in queues]
            m, n_moved, n_tr = _steal_round(act, view, queues, T, cost, self.workers, log)
            self.messages += m
            self.moved += n_moved
            self.n_transfers += n_tr
        if act.periodic:
            self._decide(act, T, log)
        self.lb_acc += (T[widx] - T0[widx]).sum() / self.W

    def _decide(self, act, T, log: list) -> None:
        """A periodic rule decides on the current queues; its transfers carried out and costed by its
        protocol (pairwise exchange, the Loadserver's, or the migrations alone)."""
        queues, view, cost = self.queues, self.view, self.cost
        view.queue = [len(q) for q in queues]
        view.node = -1
        transfers = decided_transfers(self.bal, view)
        proto = act.protocol
        if proto == "pairwise":
            self.messages += _cost_pairwise(act, transfers, queues, T, cost, self.pair_cache, log)
        elif proto == "server":
            self.messages += _cost_server(act, transfers, queues, T, cost, self.workers, log)
        else:
            self.messages += _cost_plain(transfers, queues, T, cost, log)
        for tr in transfers:
            self.moved += tr.n
        self.n_transfers += len(transfers)

    def _wait(self, T, comp: list, ns: list, log: list) -> None:
        """The workers wait for the slowest (Idle), then the barrier's allreduce (Synch); the
        iteration's rows kept for the trace."""
        Tw = T[self.widx]
        self.idle_acc += (Tw.max() - Tw).sum() / self.W
        self.rec_comp.append(comp)
        self.rec_n.append(ns)
        self.rec_span.append(float(Tw.max()))
        self.moves.append(log)
        self.sy_acc += self.sy

    def _barrier(self) -> int:
        """The barrier's global count n(t), kept with the queues; the balancer observes it. Return it."""
        bal, view, queues = self.bal, self.view, self.queues
        counts = [len(q) for q in queues]
        n_tot = sum(counts)
        self.n_series.append(n_tot)
        self.q_series.append(counts)
        if bal is not None:
            view.queue = list(counts)  # a copy: hooks write into view.queue, q_series keeps counts
            view.time = (self.cp_acc + self.lb_acc + self.idle_acc + self.sy_acc) * _US
            view.updated_at = [view.time] * self.p  # every count is fresh at the barrier
            if bal.reads_work:
                est = self.workload.estimate
                view.work = [float(sum(est(t) for t in q)) for q in queues]
            bal.observe(view)
        return n_tot

    def _result(self, iterations: int) -> SuperstepResult:
        """The run's result after *iterations*, with what its trace is built from on first use."""
        bal, cost = self.bal, self.cost
        cp, lb, idle, synch = (float(x) * _US for x in (self.cp_acc, self.lb_acc, self.idle_acc, self.sy_acc))
        res = SuperstepResult(total=cp + lb + idle + synch, compute=cp, lb=lb, idle=idle, synch=synch,
                              iterations=iterations, nodes=self.nodes, p=self.p, workers=self.W,
                              messages=self.messages, tasks_moved=self.moved, transfers=self.n_transfers,
                              n_series=np.array(self.n_series, dtype=np.int64),
                              queue_series=np.array(self.q_series, dtype=np.int32), executed=self.executed,
                              interval_series=self.i_series, phase_series=self.ph_series)
        # one node's compute, µs
        biggest = self.node_cost if self.uniform else cost.t_c + max(self.workload.costs) * cost.t_fl
        res._raw = (bal.name if bal is not None else "none", self.seed, self.sy, self.rec_comp, self.rec_n,
                    self.rec_span, self.moves, biggest * _US)
        return res


def _trace(res: SuperstepResult, balancer: str, seed: int, sy: float, comp, ns, span, moves,
           max_item: float) -> Trace:
    """The run as a :class:`Trace` (the module's docstring says what its rows hold)."""
    p = res.p
    C = np.asarray(comp, dtype=float) * _US  # iterations × p, seconds
    N = np.asarray(ns, dtype=np.int64)
    # the global clock: an iteration lasts its slowest worker's clock, then the barrier
    ends = np.cumsum((np.asarray(span, dtype=float) + sy) * _US)
    ends[-1] = res.total  # the same sum added in another order: the last barrier is Total, exactly
    starts = np.concatenate(([0.0], ends[:-1]))
    it, node = np.nonzero(N)  # iteration-major, as the processors ran
    before = np.cumsum(N, axis=0) - N  # nodes each processor had executed before the iteration
    tr = Trace(p, list(range(p)), balancer=balancer, seed=seed, source="sim",
               family="tree", speeds=[1.0] * p, availability=[Constant(1.0).realise()] * p,
               total_work=float(C.sum()), max_item=float(max_item))
    tr.node, tr.first, tr.count = node.tolist(), before[it, node].tolist(), N[it, node].tolist()
    tr.t_ask = starts[it].tolist()
    tr.t_start = list(tr.t_ask)
    tr.t_end = (starts[it] + C[it, node]).tolist()
    tr.round_of = it.tolist()
    tr.transfers = [(k, float(ends[k]), s, d, n) for k, log in enumerate(moves) for s, d, n in log]
    tr.series["waiting"] = res.queue_series
    tr.messages = res.messages
    tr.end_time = res.total
    # n(t) and the queues after every barrier, and the phase transitions, as the async engine keeps
    # them (so the tree family's "tasks" figure draws either engine's trace)
    phases = [(float(starts[k]), ph) for k, ph in enumerate(res.phase_series)
              if k == 0 or ph != res.phase_series[k - 1]]
    tr.meta.update(mechanism="superstep", breakdown=res.breakdown(), intervals=list(res.interval_series),
                   workers=res.workers, waiting=list(zip(ends.tolist(), res.n_series.tolist())),
                   queues=[tuple(q) for q in res.queue_series.tolist()], phases=phases)
    return tr


def _move(queues, src: int, dst: int, n: int, log: list) -> int:
    """Move the *n* oldest tasks of *src* to the back of *dst* (DF: its top); the count moved
    (logged as (src, dst, count) when tasks moved)."""
    if src == dst:
        raise ConfigError("transfer", (src, dst), "a transfer between two different processors")
    qs, qd = queues[src], queues[dst]
    n = min(n, len(qs))
    for _ in range(n):
        qd.append(qs.popleft())
    if n > 0:
        log.append((src, dst, n))
    return n


def _migrate(T, cost: T3D, src: int, dst: int, m: int) -> None:
    """Cost one task message of *m* nodes on the two clocks (001 §3.9 item 6)."""
    ints = NODE_INTS * m
    T[src] += m * cost.t_dq
    st = T[src]
    T[src] = st + cost.send(ints)
    T[dst] = max(T[dst] + cost.recvmin(ints), st + cost.recv(ints)) + m * cost.t_eq


def _steal_round(act, view: TreeView, queues, T, cost: T3D, workers, log) -> tuple[int, int, int]:
    """One synchronous round of a receiver-initiated rule: every worker with at most ``low_water``
    waiting tasks (in index order) asks the victims :meth:`on_idle` names; each victim answers at
    once with :meth:`on_request`'s count of its oldest tasks (a one-integer request, then a task
    message or a one-integer empty reply, costed like the migrations). Returns (messages, tasks
    moved, transfers)."""
    msgs = moved = n_tr = 0
    s1, r1, rm1 = cost.send(1), cost.recv(1), cost.recvmin(1)
    low = act.low_water
    for j in workers:
        if len(queues[j]) > low:
            continue
        view.node = j
        for v, wanted in victims(act, view, j):
            st = T[j]
            T[j] = st + s1
            T[v] = max(T[v] + rm1, st + r1)
            msgs += 1
            view.node = v
            n = given(act, view, v, j, len(queues[v]), wanted)
            m = _move(queues, v, j, n, log) if n > 0 else 0
            if m > 0:
                _migrate(T, cost, v, j, m)
                moved += m
                n_tr += 1
                view.queue[v], view.queue[j] = len(queues[v]), len(queues[j])
            else:
                st = T[v]
                T[v] = st + s1
                T[j] = max(T[j] + rm1, st + r1)
            msgs += 1
            view.node = j
    return msgs, moved, n_tr


def _cost_plain(transfers, queues, T, cost, log) -> int:
    msgs = 0
    for tr in transfers:
        m = _move(queues, tr.src, tr.dst, tr.n, log)
        if m > 0:
            _migrate(T, cost, tr.src, tr.dst, m)
            msgs += 1
    return msgs


def _cost_pairwise(act, transfers, queues, T, cost, cache, log) -> int:
    """Dimension exchange: per colour, every pair swaps loads, then that colour's migrations."""
    colours = act.last_exchange()
    key = id(colours)
    if key not in cache:
        cache.clear()
        cache[key] = [(np.array([a for a, _ in c], dtype=np.int64), np.array([b for _, b in c], dtype=np.int64))
                      for c in colours]
    arrays = cache[key]
    by_step: dict[int, list] = {}
    for tr in transfers:
        by_step.setdefault(tr.step, []).append(tr)
    s1, r1, rm1 = cost.send(1), cost.recv(1), cost.recvmin(1)
    msgs = 0
    for step, (A, B) in enumerate(arrays):
        if len(A) == 0:
            continue
        ta = T[A]
        tb = np.maximum(T[B] + rm1, ta + r1)  # b receives a's load
        sb = tb
        tb = tb + s1  # and sends its own back
        T[A] = np.maximum(ta + s1 + rm1, sb + r1)
        T[B] = tb
        msgs += 2 * len(A)
        trs = by_step.get(step)
        if not trs:
            continue
        if len(trs) <= 8:
            for tr in trs:
                m = _move(queues, tr.src, tr.dst, tr.n, log)
                if m > 0:
                    _migrate(T, cost, tr.src, tr.dst, m)
                    msgs += 1
            continue
        src, dst, ms = [], [], []
        for tr in trs:
            m = _move(queues, tr.src, tr.dst, tr.n, log)
            if m > 0:
                src.append(tr.src)
                dst.append(tr.dst)
                ms.append(m)
        if not ms:
            continue
        S, R, M = np.array(src), np.array(dst), np.array(ms, dtype=np.float64)
        ints = NODE_INTS * M
        st = T[S] + M * cost.t_dq
        T[S] = st + cost.send(ints)
        T[R] = np.maximum(T[R] + cost.recvmin(ints), st + cost.recv(ints)) + M * cost.t_eq
        msgs += len(ms)
    steps = set(by_step) - set(range(len(arrays)))
    if steps:
        raise ConfigError("transfer.step", min(steps), f"a colour index below {len(arrays)}")
    return msgs


def _cost_server(act, transfers, queues, T, cost, workers, log) -> int:
    """Loadserver: registrations, LIS queries with contention, migrations, then PROCEED."""
    exchange = act.last_exchange()
    per_round: dict[int, int] = {}
    for e in exchange:
        if e[0] == "query":
            per_round[e[2]] = per_round.get(e[2], 0) + 1
    first = min(per_round) if per_round else 0
    k_in_round: dict[int, int] = {}
    msgs = 0
    pos = 0
    s1 = cost.send(1)
    for e in exchange:
        if e[0] == "register":
            T[e[1]] += s1
            msgs += 1
            continue
        _, j, rnd, got = e
        k = k_in_round[rnd] = k_in_round.get(rnd, 0) + 1
        T[j] += cost.lis_wait(k, per_round[rnd], rnd == first)
        msgs += 2
        for _dst, _n in got:
            tr = transfers[pos]
            pos += 1
            m = _move(queues, tr.src, tr.dst, tr.n, log)
            if m > 0:
                _migrate(T, cost, tr.src, tr.dst, m)
                msgs += 1
    # PROCEED: worker 0 sends W - 1 one-integer messages in turn, from the latest clock
    W = len(workers)
    if W > 1:
        w = np.array(workers[1:], dtype=np.int64)
        Tw = T[np.array(workers, dtype=np.int64)]
        t0 = Tw.max()
        starts = t0 + s1 * np.arange(W - 1)
        T[w] = np.maximum(T[w] + cost.recvmin(1), starts + cost.recv(1))
        T[workers[0]] = t0 + s1 * (W - 1)
        msgs += W - 1
    return msgs
