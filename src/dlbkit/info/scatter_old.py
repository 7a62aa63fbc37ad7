"""The old scattering algorithm: push half the load vector to a peer drawn uniformly, shift and merge."""

from __future__ import annotations

from dlbkit.info.registry import register
from dlbkit.info.scatter_vector import ShiftMerge

__all__ = ["ScatterOld"]


@register
class ScatterOld(ShiftMerge):
    """Every *period* seconds each node sends the first half of its load vector (length *l*, None: N)
    to a peer drawn uniformly from the N − 1 others, independently each period (inactive nodes
    included: a send to one is wasted); the receiver shifts and merges it (:class:`ShiftMerge
    <dlbkit.info.scatter_vector.ShiftMerge>`).

    Source: 003 §4.1 and §4.3.3.2, "the old algorithm" (Drezner and Barak's probabilistic scattering,
    as in MOSIX): "a node sends its local information to a randomly selected node. Then the receiving
    node combines its local information with the received information and sends the combined
    information to another randomly selected node"; the load vector and i-4.1 as 003 implemented them
    for its Tables 4–5. Its propagation steps are :mod:`dlbkit.model.gossip_recursion`'s model.

    Helps: N messages a period of ⌊l/2⌋ entries each, no centre, every node eventually hears of every
    other. Backfires: a node may go unselected for many periods (§4.3.1, Example 4.2), and without
    stamps an old value arriving late overwrites a fresher one (Example 4.1); sends to inactive nodes
    are wasted (Table 7: 67 steps for a complete cycle with 4 of 16 nodes active).
    """

    name = "scatter-old"
    selection = "uniform"
