"""The general loop of the asynchronous tree engine (:mod:`dlbkit.families.tree.sim.engine`): the family's rules
as handlers on a :class:`~dlbkit.sim.kernel.Kernel`, on a run's state (:class:`~._tree_state.TreeState`).

The module doc of :mod:`dlbkit.families.tree.sim.engine` gives the rules; the handlers' names are the ones the
specialised loop (:mod:`._tree_fast`) writes in the event log it keeps for the same run.
"""

from __future__ import annotations

from dlbkit.families.tree.balancers.decide import given, placements, transfers, victims
from dlbkit.errors import ConfigError, DlbkitError
from dlbkit.families.tree.model.view import TreeView
from dlbkit.families.tree.sim._fast import _EMPTY, _INF
from dlbkit.families.tree.sim._state import TreeState
from dlbkit.sim.kernel import URGENT, Kernel
from dlbkit.sim.costs import ticks

__all__ = ["TreeRun"]


class TreeRun(TreeState):
    """A run that the general loop can run: its rules as kernel handlers (:meth:`general`)."""

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
        """Append *tasks* to node *w*'s deque; a free node starts one."""
        self.dq[w].extend(tasks)
        self.waiting += len(tasks)
        self.changed = True
        if self.loads:
            self._loads(w, t, tasks, +1)
        if not self.busy[w]:
            self.start(w, t)

    def start(self, w: int, t) -> None:
        """Node *w* starts its newest (df) or oldest (bf) waiting task; its completion is scheduled."""
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
        """A point of the ``waiting`` series at every stride-th completion (the stride doubles as it grows)."""
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
        """Node *w* asks :meth:`on_idle`'s victims for work (nobody named: it is parked, for a watcher)."""
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
        """Node *w*'s task completed: its children created, the next task started or the node freed;
        True when it was the last task."""
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
        """A periodic point: the centre decides on its view and sends its orders (one hop each)."""
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

