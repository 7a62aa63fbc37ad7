"""Monte-Carlo gossip: how many propagation steps until one node's information reaches every active
node, by simulating the steps (003 §4.4.1; the recursion's model, :mod:`dlbkit.model.gossip_recursion`,
checked independently, and Algorithm 4.1's constrained selection, whose effect has no exact recursion).

Model (synchronous steps, vectorised over trials): N nodes, the first n active, the origin node 0.
Step 1 informs the origin and one other active node drawn uniformly (the recursion's Pr(1, 2) = 1).
At every later step every informed node sends once; a send to an active uninformed node informs it
at the end of the step. Selection: ``"uniform"`` (the old algorithm: a peer drawn uniformly from the
N − 1 others, independently each step) or ``"constrained"`` (Algorithm 4.1, ``constraint_select``:
each node walks a random permutation of its N − 1 peers, a fresh one when it has used them all (the
draws of :mod:`dlbkit.info.selection`, shared with the information models); every
node's walk starts at step 1, when the information is born).
"""

from __future__ import annotations

import numpy as np

from ..info.selection import SELECTIONS, permutations, skip_self

__all__ = ["pr_all_informed", "SELECTIONS"]
#: trials simulated at once (memory: chunk × N × (N − 1) floats for the permutations)
CHUNK = 10_000


def pr_all_informed(n: int, N: int, steps: int, trials: int, rng: np.random.Generator,
                    selection: str = "uniform") -> np.ndarray:
    """The share of *trials* in which all *n* active nodes are informed after step j, j = 1 … *steps*."""
    if selection not in SELECTIONS:
        raise ValueError(f"selection must be one of {SELECTIONS}; got {selection!r}")
    if not 2 <= n <= N:
        raise ValueError(f"need 2 <= n <= N; got n={n}, N={N}")
    done = np.zeros(steps)
    left = trials
    nodes = np.arange(N)
    while left > 0:
        T = min(CHUNK, left)
        left -= T
        inf = np.zeros((T, N), dtype=bool)
        inf[:, 0] = True
        inf[np.arange(T), 1 + rng.integers(n - 1, size=T)] = True
        done[0] += np.count_nonzero(inf[:, :n].all(axis=1))
        perm = None
        for j in range(2, steps + 1):
            if selection == "uniform":
                r = rng.integers(N - 1, size=(T, N))
            else:
                pos = (j - 2) % (N - 1)
                if pos == 0:
                    perm = permutations(rng, (T, N), N - 1)
                r = perm[:, :, pos]
            target = skip_self(r, nodes)
            rows, cols = np.nonzero(inf)
            hit = np.zeros((T, N), dtype=bool)
            hit[rows, target[rows, cols]] = True
            inf |= hit
            inf[:, n:] = False  # inactive nodes drop what they receive
            done[j - 1] += np.count_nonzero(inf[:, :n].all(axis=1))
    return done / trials
