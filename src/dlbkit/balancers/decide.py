"""Asking a balancer for a decision, and checking the answer: written once for every engine.

A balancer decides and an engine does; between the two sits what every engine must do with an
answer before acting on it: clamp it to what is possible (a chunk to [1, remaining], a gift to the
tasks the victim holds) and refuse what is not allowed (a victim that is not another node, a transfer
to oneself, a move between nodes that are not neighbours). Each function here asks one hook and
returns the checked answer, raising :class:`~dlbkit.errors.ConfigError` that names the balancer, the
hook and the node. The simulator and the runtime call these same functions, so given the same view a
balancer's decision is the same in both (tests/test_same_decisions_sim_and_runtime.py records the views of real runs
and feeds them to both engines' paths).

A hot loop may inline one of these for speed (the M1 engine inlines :func:`chunk`); it then says so
where it does, and a test checks the inlined copy against this one.

**Decision records.** Given a list as *record*, each function appends a
:class:`~dlbkit.model.trace.Decision` (time, deciding node, hook, checked answer, the mean age of the
other nodes' entries in the view, and a copy of the view): an engine asked to record decisions passes
its trace's ``decisions``. Replaying the recorded views through these functions with a fresh balancer
gives the recorded answers (tests/test_same_decisions_sim_and_runtime.py), whichever engine recorded them.
"""

from __future__ import annotations

import copy
from numbers import Integral
from typing import Sequence

from dlbkit.balancers.base import Transfer
from dlbkit.errors import ConfigError
from dlbkit.model.trace import Decision

__all__ = ["is_int", "note", "checked_transfers"]


def is_int(x) -> bool:
    return isinstance(x, Integral) and not isinstance(x, bool)


def note(record: list | None, view, node: int, hook: str, answer, view_copy=None) -> None:
    """Append the decision to *record* (None: not recording): the view as it was when asked."""
    if record is None:
        return
    others = [view.time - view.updated_at[j] for j in range(view.n_nodes) if j != node]
    age = sum(others) / len(others) if others else 0.0
    record.append(Decision(view.time, node, hook, answer, age, view_copy if view_copy is not None else
                           copy.deepcopy(view)))




def checked_transfers(balancer, where: str, decided: Sequence, P: int) -> list[Transfer]:
    out = []
    for tr in decided:
        ok = isinstance(tr, Transfer) and all(is_int(x) for x in (tr.src, tr.dst, tr.n))
        if not (ok and 0 <= tr.src < P and 0 <= tr.dst < P and tr.src != tr.dst):
            raise ConfigError(f"a transfer {balancer.name}.{where} returned", tr,
                              f"a Transfer with src != dst, both in 0..{P - 1}, n an integer")
        out.append(Transfer(int(tr.src), int(tr.dst), int(tr.n), int(tr.step)))
    return out





