"""A bagging balancer's answer, checked: the one way every engine of the family asks it."""

from __future__ import annotations

import copy

from sixth.balancers.base import BaggingBalancer
from sixth.model.view import BagView

from dlbkit.balancers.decide import is_int, note
from dlbkit.errors import ConfigError

__all__ = ["pick"]


def pick(balancer: BaggingBalancer, view: BagView, record: list | None = None) -> int:
    """The node *balancer* places the next task on; a ConfigError naming the balancer for an answer
    that is not a node index (None from a forgotten ``return``, a float, a node beyond the view)."""
    seen = copy.deepcopy(view) if record is not None else None
    answer = balancer.pick(view)
    if not is_int(answer) or not 0 <= answer < view.n_nodes:
        raise ConfigError(f"the answer of {balancer.name}.pick", answer, f"a node index in [0, {view.n_nodes - 1}]")
    note(record, view, view.node, "pick", int(answer), seen)
    return int(answer)
