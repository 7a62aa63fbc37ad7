"""Random workflows for the property tests of the graph readers and writers (WfFormat, DAX)."""

from hypothesis import strategies as st

__all__ = ["dags"]


@st.composite
def dags(draw):
    """(n, {(parent, child): bytes}, runtimes): n tasks, edges i → j with i < j (so acyclic), each edge's
    data and each task's runtime an integer."""
    n = draw(st.integers(1, 12))
    pairs = draw(st.sets(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)).filter(lambda e: e[0] < e[1]),
                         max_size=30))
    runtimes = draw(st.lists(st.integers(0, 10 ** 6), min_size=n, max_size=n))
    sizes = {e: draw(st.integers(0, 10 ** 9)) for e in sorted(pairs)}
    return n, sizes, runtimes
