"""The specialised inner loop of :mod:`dlbkit.families.tree.sim.engine` (M2's hot loop).

Same semantics as ``TreeRun.general`` (:mod:`._tree_rules`) on the :class:`~dlbkit.sim.kernel.Kernel`,
for the case where every message takes the same time and the balancer is receiver-initiated (or none),
not periodic, not sender-initiated, and reads no loads: messages are then delivered in the order they
were sent, so they sit in a FIFO queue and only completions need a heap. An empty reply held back by
the back-off (the tree engine's ``backoff``) arrives later than the messages sent after it: it goes into
the heap too, as an entry whose node is negative (``~(thief · P + victim)``), handled when popped as the
general loop's ``on_reply``. Bookkeeping the general loop does in small methods is inlined here, and
counts that follow from others are derived once at the end instead of kept per event. Simultaneous
events keep the kernel's order (all NORMAL, rank 0: FIFO by sequence number, instants formed by
:func:`~dlbkit.sim.kernel.pop_instant`), and the loop writes the kernel's event log on request, so a
test compares the two paths event for event.
"""

from __future__ import annotations

from collections import deque
from heapq import heappop, heappush
from operator import itemgetter

from dlbkit.errors import DlbkitError
from dlbkit.sim.kernel import NORMAL, pop_instant, simultaneous

__all__ = ["fast_loop"]

# kinds of the messages in the FIFO queue (entries (time, seq, kind, dst, src, payload)): a steal
# request, its reply; and the name of the general loop's handler for each, for the event log
_REQ, _REP = range(2)
_HANDLER = {_REQ: "on_request", _REP: "on_reply"}
_COMPLETION = "on_completion"
_EMPTY: tuple = ()
_INF = float("inf")
_SEQ = itemgetter(1)  # completions are (time, seq, node): simultaneous ones run in scheduling order


def group(heap: list, tol: float) -> list:
    """The completions of the heap's next instant, ordered so that ``pop()`` gives the one scheduled
    first (the kernel's order: every event of this loop is NORMAL with rank 0)."""
    return pop_instant(heap, tol, _SEQ)


def _logging(msgs: deque, log: list):
    """The message queue's take and put-back functions that also write the event log: a message
    taken and put back (a completion runs first) is struck off again. Swapped in only when logging,
    so the loop pays nothing for the log on its messages (most of M2's events)."""
    take, put_back, note, strike = msgs.popleft, msgs.appendleft, log.append, log.pop

    def receive():
        m = take()
        note((m[0], NORMAL, 0, m[1], _HANDLER[m[2]], m[3:]))
        return m

    def unreceive(m):
        strike()
        put_back(m)

    return receive, unreceive


def fast_loop(run, log: list | None = None) -> None:
    """Run *run* (a :class:`~._tree_state.TreeState`) to its end and store the counters back into it;
    append the kernel's event log entries to *log* (the general loop's handler names and arguments)."""
    P = run.P
    dq, busy, out, done, running = run.dq, run.busy, run.out, run.done, run.running
    s_first, s_start, free_since = run.s_first, run.s_start, run.free_since
    lifo = run.lifo
    cost_of, children_of = run.cost, run.children
    rates, tscale, tps = run.rates, run.tscale, run.tps
    end_time = run.end_time
    L = run.uniform_delay()
    tol = run.tol
    fuzzy = tol > 0
    bal = run.balancer
    recv = bal.receiver_initiated
    low = run.low
    prefetch = low > 0  # asks while it still holds up to low waiting tasks
    on_idle, on_request = bal.on_idle, bal.on_request
    pauses, fails = run.pauses, run.fails
    backoff = len(pauses) > 1  # empty replies are held back (see the tree engine's backoff)
    last_pause = len(pauses) - 1
    view = run.view
    vq, vupd = view.queue, view.updated_at
    record = run.record
    R_w, R_first, R_count, R_ask, R_start, R_end = run.rows
    W_t, W_n, W_q, w_mask, w_limit = run.w_t, run.w_n, run.w_q, run.w_mask, run.w_limit
    # one test per completion serves both the waiting samples (record) and the progress ticker: a
    # completion is looked at when n_done & s_mask == 0, s_mask the smaller of the two strides' masks
    # (all 2^k - 1, so either's test then still decides); -1: never (neither is wanted)
    tick = run.tick
    p_mask = 0
    s_mask = (w_mask if record else -1) if tick is None else (min(w_mask, p_mask) if record else p_mask)
    REQ, REP, EMPTY, INF = _REQ, _REP, _EMPTY, _INF
    msgs: deque = deque()
    send, receive, unreceive = msgs.append, msgs.popleft, msgs.appendleft
    if log is not None:
        receive, unreceive = _logging(msgs, log)
    comps: list = []
    cb: list = []  # completions at one instant, taken from the heap in scheduling order (float time)
    seq = steals = moved = n_done = 0
    waiting, remaining = run.waiting, run.remaining
    work, mx = run.work, run.max_cost
    tc = tc_lo = INF  # the next completion's time, and that minus the tolerance
    # the message budget (engine.MAX_MESSAGES): messages = seq − n_done − (completions scheduled
    # and not yet run, one per busy node), so the budget's poll_floor + poll_step · n_done is
    # seq − sum(busy) <= seq_cap, seq_cap raised at each completion (one comparison per empty reply,
    # the sum only once seq passes seq_cap; one addition per completion)
    seq_cap, cap_step = run.poll_floor, run.poll_step + 1

    # t = 0: nodes in index order; a node with work starts it, a node that wants work asks
    for w in range(P):
        d = dq[w]
        if d:
            task = d.pop() if lifo else d.popleft()
            waiting -= 1
            c = cost_of(task)
            work += c
            if c > mx:
                mx = c
            running[w] = task
            busy[w] = True
            te = end_time(w, 0, c)
            heappush(comps, (te, seq, w))
            seq += 1
            if te < tc:
                tc, tc_lo = te, te - tol
        if recv and ((not busy[w] and not d) or (prefetch and len(d) <= low)):
            view.time = 0.0
            view.node = w
            vq[w] = len(d)
            vupd[w] = 0.0
            for v, wanted in run.requests(w, on_idle(view, w)):
                send((L, seq, REQ, v, w, wanted))
                seq += 1
                out[w] += 1

    while True:
        # --- the next event: the oldest message, unless a completion is earlier, or simultaneous
        # and scheduled before it
        if msgs:
            t, sq, kind, x, y, pay = m = receive()
            if t < tc_lo:
                go = True
            elif t > tc + tol:
                go = False
            else:
                if fuzzy and not cb and simultaneous(comps, tol):
                    cb = group(comps, tol)
                go = sq < (cb[-1][1] if cb else comps[0][1])
            if not go:
                unreceive(m)
        else:
            go = False

        if go:
            if kind == REQ:  # delivered to victim x from thief y, wanting pay tasks
                d = dq[x]
                q = len(d)
                s = t / tps if tps else t
                view.time = s
                view.node = x
                vq[x] = q
                vupd[x] = s
                # NOTE: balancers.decide.given inlined (M2's hot loop); the general loop calls it, and
                # tests/sim/test_fast_paths.py checks the two loops give one trace
                n = on_request(view, x, y, q, pay)
                if n > 0:
                    if n.__class__ is not int:
                        n = int(n)
                    if n >= q:
                        n = q
                        pay = list(d)
                        d.clear()
                    else:
                        pay = [d.popleft() for _ in range(n)]
                    waiting -= n
                    moved += n
                    if backoff:
                        fails[y] = 0
                else:
                    pay = EMPTY
                    # seq also counts the completions scheduled and not yet run (one per busy node):
                    # only near the budget, count them out
                    if seq > seq_cap and seq - sum(busy) > seq_cap:
                        run.n_done = n_done
                        run.polling_exceeded(t)
                    if backoff:
                        k = fails[y] = fails[y] + 1
                        held = pauses[k if k < last_pause else last_pause]
                        if held:  # the reply waits in the heap (it arrives after later messages)
                            te = t + L + held
                            heappush(comps, (te, seq, ~(y * P + x)))
                            seq += 1
                            if te < tc and not cb:
                                tc, tc_lo = te, te - tol
                            pay = None
                if pay is not None:
                    send((t + L, seq, REP, y, x, pay))
                    seq += 1
                if not (prefetch and not out[x] and len(d) <= low):
                    continue
                w = x
            else:  # a reply delivered to thief x
                w = x
                o = out[w] - 1
                out[w] = o
                d = dq[w]
                if pay:
                    steals += 1
                    d.extend(pay)
                    waiting += len(pay)
                    if not busy[w]:
                        task = d.pop() if lifo else d.popleft()
                        waiting -= 1
                        c = cost_of(task)
                        work += c
                        if c > mx:
                            mx = c
                        running[w] = task
                        busy[w] = True
                        s_first[w] = done[w]
                        s_start[w] = t
                        r = rates[w]
                        te = (t + round(c * tscale[w]) if tps else t + c / r) if r else end_time(w, t, c)
                        heappush(comps, (te, seq, w))
                        seq += 1
                        if te < tc and not cb:
                            tc, tc_lo = te, te - tol
                if o or not ((not busy[w] and not d) or (prefetch and len(d) <= low)):
                    continue
        else:
            if cb:
                t, sq, w = cb.pop()
            elif fuzzy and simultaneous(comps, tol):
                cb = group(comps, tol)
                t, sq, w = cb.pop()
            elif comps:
                t, sq, w = heappop(comps)
            else:  # pragma: no cover - a waiting task always has a busy node: a bug
                raise DlbkitError(f"internal: no event scheduled with {remaining} tasks left")
            if not cb:
                if comps:
                    tc = comps[0][0]
                    tc_lo = tc - tol
                else:
                    tc = tc_lo = INF
            if w < 0:  # an empty reply held back by the back-off, delivered to thief w from victim
                w, victim = divmod(~w, P)
                if log is not None:
                    log.append((t, NORMAL, 0, sq, _HANDLER[REP], (w, victim, EMPTY)))
                o = out[w] - 1
                out[w] = o
                d = dq[w]
                if o or not ((not busy[w] and not d) or (prefetch and len(d) <= low)):
                    continue
            else:  # a completion of node w
                if log is not None:
                    log.append((t, NORMAL, 0, sq, _COMPLETION, (w,)))
                done[w] += 1
                n_done += 1
                seq_cap += cap_step
                remaining -= 1
                d = dq[w]
                kids = children_of(running[w])
                if kids:
                    d.extend(kids)
                    remaining += len(kids)
                    waiting += len(kids)
                if not (n_done & s_mask):
                    if record and not (n_done & w_mask):
                        W_t.append(t)
                        W_n.append(waiting)
                        W_q.append(list(map(len, dq)))
                        if len(W_t) > w_limit:
                            W_t, W_n, W_q = W_t[::2], W_n[::2], W_q[::2]
                            w_mask = 2 * w_mask + 1
                            if tick is None:
                                s_mask = w_mask
                    if tick is not None and not (n_done & p_mask):
                        p_mask = tick(n_done, n_done + remaining) - 1
                        s_mask = (w_mask if w_mask < p_mask else p_mask) if record else p_mask
                if remaining == 0:
                    if record:
                        R_w.append(w)
                        R_first.append(s_first[w])
                        R_count.append(done[w] - s_first[w])
                        R_ask.append(free_since[w])
                        R_start.append(s_start[w])
                        R_end.append(t)
                    run.makespan = t
                    break
                if d:
                    task = d.pop() if lifo else d.popleft()
                    waiting -= 1
                    c = cost_of(task)
                    work += c
                    if c > mx:
                        mx = c
                    running[w] = task
                    r = rates[w]
                    te = (t + round(c * tscale[w]) if tps else t + c / r) if r else end_time(w, t, c)
                    heappush(comps, (te, seq, w))
                    seq += 1
                    if te < tc and not cb:
                        tc, tc_lo = te, te - tol
                    if not (recv and prefetch and not out[w] and len(d) <= low):
                        continue
                else:
                    running[w] = None
                    busy[w] = False
                    if record:
                        R_w.append(w)
                        R_first.append(s_first[w])
                        R_count.append(done[w] - s_first[w])
                        R_ask.append(free_since[w])
                        R_start.append(s_start[w])
                        R_end.append(t)
                    free_since[w] = t
                    if not recv or out[w]:
                        continue

        # --- node w asks for work (on_idle); one victim is the common case
        s = t / tps if tps else t
        view.time = s
        view.node = w
        vq[w] = len(d)
        vupd[w] = s
        v = on_idle(view, w)
        if v.__class__ is int and 0 <= v < P and v != w:
            send((t + L, seq, REQ, v, w, 0))
            seq += 1
            out[w] = 1
        elif v is not None:
            for v, wanted in run.requests(w, v):
                send((t + L, seq, REQ, v, w, wanted))
                seq += 1
                out[w] += 1

    # Counts that follow from the others (no per-event increments): every scheduled completion was
    # processed (nothing runs at the end), so seq - n_done messages were sent, all but those still
    # queued (or held back in the heap) delivered; every request delivered was answered by one reply.
    messages = seq - n_done
    req_in_flight = sum(1 for e in msgs if e[2] == REQ)
    held = sum(1 for e in comps if e[2] < 0) + sum(1 for e in cb if e[2] < 0)
    run.seq, run.messages = seq, messages
    run.events = n_done + messages - len(msgs) - held
    run.steal_requests = (messages + req_in_flight) // 2
    run.bytes = float(messages * run.control_bytes)
    run.steals, run.tasks_moved = steals, moved
    run.n_done, run.waiting, run.remaining, run.work, run.max_cost = n_done, waiting, remaining, work, mx
    run.w_t, run.w_n, run.w_q, run.w_mask = W_t, W_n, W_q, w_mask
