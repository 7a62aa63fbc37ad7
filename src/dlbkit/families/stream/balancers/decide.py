"""A placement balancer's answers, checked: the one way an engine asks it."""

from __future__ import annotations

import copy

from dlbkit.balancers.decide import is_int, note
from dlbkit.errors import ConfigError
from dlbkit.families.stream.balancers.base import PlacementBalancer

__all__ = ["place", "checked_node"]


# --- placement (job streams) ------------------------------------------------------------------------------
def place(balancer: PlacementBalancer, view, k: int = 1, update: bool = True, record: list | None = None) -> list[int]:
    """The nodes of the *k* tasks of a job that arrived at ``view.node``, checked: each a node in
    [0, ``view.n_nodes``). A batch (*k* > 1) is placed on a copy of ``view.queue`` (a balancer that
    counts its own placements with *update* must not change the engine's list, which with exact
    information is the truth itself)."""
    seen = copy.deepcopy(view) if record is not None else None
    if k == 1:
        nodes = [balancer.place(view)]
    else:
        live = view.queue
        view.queue = list(live)
        try:
            nodes = balancer.place_batch(view, k, update)
        finally:
            view.queue = live
    if len(nodes) != k:
        raise ConfigError(f"the answer of {balancer.name}.place_batch", f"{len(nodes)} nodes", f"one node per task ({k})")
    nodes = [checked_node(balancer, view, j) for j in nodes]
    note(record, view, view.node, "place", list(nodes), seen)
    return nodes


def checked_node(balancer: PlacementBalancer, view, j) -> int:
    """:meth:`~PlacementBalancer.place`'s answer *j*, already asked for (a hot loop that inlines
    :func:`place` for a single task and found *j* not a plain int in range), checked as :func:`place`
    checks it: an integer (a numpy integer too) node in [0, ``view.n_nodes``), returned as an int;
    otherwise :func:`place`'s ConfigError. The balancer is not asked again."""
    n = view.n_nodes
    if not is_int(j) or not 0 <= j < n:
        raise ConfigError(f"the answer of {balancer.name}.place", j, f"a node in [0, {n - 1}]")
    return int(j)
