"""Time steps: one loop run K times in a row (a time-stepping application), as one Trace and as K.

A run of K steps (``dlbkit.Loop``, the divisible simulator's ``steps``) is recorded as **one** trace on
the run's global clock: the steps' intervals one after another, item indices offset so that step k's
item i is ``k·N + i`` (its measured cost ``meta["item_cost"][k·N + i]`` in a real run), and
``meta["time_steps"]``: one entry per step, ``start``/``end`` (seconds on the global clock: the step began
when it was handed to the workers, and ended when its last result was in), ``first`` (its first
global item index), ``items``, ``chunks`` (its interval rows ``[lo, hi)``), ``rounds`` (its round indices ``[lo, hi)``: each step's rounds
are renumbered after the steps before it, in ``round_of``, the ``rounds`` rows and the ``transfers``) and
``transfers`` (its transfer rows ``[lo, hi)``), and its own ``messages``, ``bytes`` and ``events``. Metrics of that trace are
over all steps (the makespan is the end of the last step). :func:`step_trace` cuts out step k as a
trace of its own, with times and items counted from the step's start, the availability seen from
there: exactly what a one-step run (``dlbkit.map``) would record, so its metrics are the step's
(its own rounds and transfers, renumbered from 0; the decisions made in ``[start, end)``, the last
step's ``[start, end]``, at times from its start).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

from dlbkit.model.availability import Piecewise
from dlbkit.model.trace import Trace

__all__ = ["join_steps", "step_trace", "n_steps", "shifted"]


def shifted(a: Any, t0: float) -> Any:
    """Availability *a* (a :class:`Piecewise`) as seen from time *t0* on, with *t0* as its time 0."""
    if not isinstance(a, Piecewise) or a.constant is not None or t0 <= 0:
        return a
    level = a.level(t0)  # also realises a lazily extended function past t0
    segs = [(0.0, level)] + [(t - t0, x) for t, x in zip(a.times, a.levels) if t > t0]
    return Piecewise(segs)


def _n_rounds(p: Trace) -> int:
    """How many rounds step *p* numbers (its largest round index + 1; 0 without rounds)."""
    idx = [r for r in p.round_of if r >= 0] + [r[0] for r in p.rounds if r[0] >= 0] + \
        [t[0] for t in p.transfers if t[0] >= 0]
    return int(max(idx)) + 1 if idx else 0


def join_steps(parts: Sequence[Trace], *, carried: Sequence[Any] = ()) -> Trace:
    """One trace of the steps *parts* (each on the global clock, items counted from 0 within the step);
    *carried*: the state each step handed to the next (recorded in ``meta["carried"]``)."""
    first = parts[0]
    out = dataclasses.replace(first, node=[], first=[], count=[], t_ask=[], t_start=[], t_end=[], round_of=[],
                              rounds=[], transfers=[], decisions=[], meta=dict(first.meta))
    steps, offset, r_off = [], 0, 0
    costs: list[float] = []
    has_costs = all("item_cost" in p.meta for p in parts)
    for k, p in enumerate(parts):
        lo = len(out.node)
        n_items = int(p.meta.get("step_items", sum(p.count)))
        out.node.extend(p.node)
        out.first.extend([f + offset for f in p.first])
        out.count.extend(p.count)
        out.t_ask.extend(p.t_ask)
        out.t_start.extend(p.t_start)
        out.t_end.extend(p.t_end)
        # rounds are numbered per step from 0: renumber after the steps before (times stay, every part
        # is on the global clock already)
        n_rounds = _n_rounds(p)
        x_lo = len(out.transfers)
        out.round_of.extend([r + r_off if r >= 0 else r for r in p.round_of])
        out.rounds += [(r[0] + r_off, *r[1:]) if r[0] >= 0 else tuple(r) for r in p.rounds]
        out.transfers += [(t[0] + r_off, *t[1:]) if t[0] >= 0 else tuple(t) for t in p.transfers]
        out.decisions += p.decisions
        if has_costs:
            costs += list(p.meta["item_cost"])
        start = float(p.meta.get("step_start", 0.0))
        steps.append({"step": k, "start": start, "end": float(p.end_time), "first": offset, "items": n_items,
                      "chunks": [lo, len(out.node)],
                      "rounds": [r_off, r_off + n_rounds], "transfers": [x_lo, len(out.transfers)], "balancer": p.balancer,
                      "work": float(p.total_work), "max_item": float(p.max_item),
                      "messages": int(p.messages), "bytes": float(p.bytes), "events": int(p.events),
                      **({"auto": p.meta["auto"]} if "auto" in p.meta else {})})
        offset += n_items
        r_off += n_rounds
    out.messages = sum(p.messages for p in parts)
    out.bytes = float(sum(p.bytes for p in parts))
    out.events = sum(p.events for p in parts)
    out.end_time = float(parts[-1].end_time)
    out.total_work = float(sum(p.total_work for p in parts))
    out.max_item = float(max(p.max_item for p in parts))
    for key in ("step_start", "step_items", "auto", "event_log"):
        out.meta.pop(key, None)
    if has_costs:
        out.meta["item_cost"] = costs
    out.meta["time_steps"] = steps
    if carried:
        out.meta["carried"] = list(carried)
    names = {p.balancer for p in parts}
    out.balancer = first.balancer if len(names) == 1 else "auto"
    return out


def n_steps(trace: Trace) -> int:
    """The number of time steps *trace* records (1 for a trace without ``meta["time_steps"]``)."""
    return len(trace.meta.get("time_steps") or ()) or 1


def step_trace(trace: Trace, k: int) -> Trace:
    """Step *k* of a time-stepping trace as a one-step trace: times from the step's start, items from
    its first, availability seen from its start (a trace without steps is its own step 0)."""
    steps = trace.meta.get("time_steps")
    if not steps:
        if k != 0:
            raise IndexError(k)
        return trace
    s = steps[k]
    lo, hi = s["chunks"]
    t0, f0, n = s["start"], s["first"], s["items"]
    meta = {key: v for key, v in trace.meta.items() if key not in ("time_steps", "carried", "item_cost")}
    if "item_cost" in trace.meta:
        meta["item_cost"] = list(trace.meta["item_cost"][f0:f0 + n])
    meta.update(step=k, step_start=t0, **({"auto": s["auto"]} if "auto" in s else {}))
    sl = slice(lo, hi)
    # the step's rounds renumbered from 0 (as a one-step run numbers them), so round_of, the rounds
    # rows and the transfers agree and per-step round metrics are the step's own
    r_lo, r_hi = s.get("rounds", (0, 0))
    x_lo, x_hi = s.get("transfers", (0, 0))
    round_of = [r - r_lo if r >= 0 else r for r in trace.round_of[sl]]
    rounds = [(r[0] - r_lo, r[1], r[2], r[3] - t0, *r[4:]) for r in trace.rounds if r_lo <= r[0] < r_hi]
    transfers = [(t[0] - r_lo if t[0] >= 0 else t[0], t[1] - t0, *t[2:]) for t in trace.transfers[x_lo:x_hi]]
    # a decision at the boundary between two steps is the later step's (the step began then); the
    # last step keeps its end
    end, last = s["end"], k == len(steps) - 1
    decisions = [dataclasses.replace(d, time=d.time - t0) for d in trace.decisions
                 if t0 <= d.time and (d.time < end or (last and d.time <= end))]
    return dataclasses.replace(
        trace, balancer=s.get("balancer", trace.balancer), node=trace.node[sl],
        first=[f - f0 for f in trace.first[sl]], count=trace.count[sl],
        t_ask=[max(t - t0, 0.0) for t in trace.t_ask[sl]], t_start=[t - t0 for t in trace.t_start[sl]],
        t_end=[t - t0 for t in trace.t_end[sl]], round_of=round_of, rounds=rounds, transfers=transfers,
        decisions=decisions,
        availability=[shifted(a, t0) for a in trace.availability], end_time=end - t0,
        total_work=float(s["work"]), max_item=float(s["max_item"]),
        # the step's own counts (a recording made before they were kept per step: 0, unknown)
        messages=int(s.get("messages", 0)), bytes=float(s.get("bytes", 0.0)), events=int(s.get("events", 0)),
        meta=meta)
