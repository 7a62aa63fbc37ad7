"""Algorithm 4.2: the old algorithm's load vector, sent to peers chosen by Algorithm 4.1."""

from __future__ import annotations

from dlbkit.info.registry import register
from dlbkit.info.scatter_vector import ShiftMerge

__all__ = ["Scatter42"]


@register
class Scatter42(ShiftMerge):
    """Every *period* seconds each node sends the first half of its load vector (length *l*, None: N)
    to the next peer of its Algorithm 4.1 permutation (no peer twice until every peer has had a turn);
    the receiver shifts and merges it as in the old algorithm (:class:`ShiftMerge
    <dlbkit.info.scatter_vector.ShiftMerge>`). It differs from ``scatter-old`` only in the selection.

    Source: 003 §4.3.2, Algorithm 4.2 (``propagation_improved1``: combine every received vector, then
    ``send_to(constraint_select(S, N), V_i)``), measured in §4.3.3 against the old algorithm with the
    same load vector (Tables 4–5: η = 21–26% at l = N = 4, 6, 8); Corollary 4.1 (never slower to
    inform everyone than the old algorithm).

    Helps: no node waits more than two epochs (2(N − 2) + 1 periods) for a given peer's message, so
    entries are fresher at the same cost. Backfires: the shift-and-merge still has no stamps, so an
    older value can overwrite a newer one; and sends to inactive nodes are still wasted (Algorithm 4.3).
    """

    name = "scatter-4.2"
    selection = "constrained"
