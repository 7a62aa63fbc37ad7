"""Functions and balancers that Loop's tests run in worker processes and MPI jobs (importable there).

Moved from the test modules that shared them (test modules never import one another).
"""

from __future__ import annotations

from dlbkit.families.divisible.balancers.base import ChunkingBalancer
from dlbkit.balancers.base import Taxonomy


def square(x):
    return x * x


class RaisesOnTen(ChunkingBalancer):
    """A balancer of the user's whose rule raises on a loop of 10 items: in the coordinator, not a worker."""

    name = "test-raises-on-ten"
    source = "test"
    taxonomy = Taxonomy("-", "-", "-", "-", "-")

    def __init__(self):
        pass

    def chunk(self, view, worker):
        if view.n_items == 10:
            raise ValueError("no chunk for ten")
        return 1
