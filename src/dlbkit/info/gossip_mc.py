"""Monte-Carlo gossip: how many propagation steps until one node's information reaches every active
node, by simulating the steps (003 §4.4.1; the recursion's model, :mod:`dlbkit.model.gossip_recursion`,
checked independently, and Algorithm 4.1's constrained selection, whose effect has no exact recursion).

Model (synchronous steps, vectorised over trials): N nodes, the first n active, the origin node 0.
Step 1 informs the origin and one other active node drawn uniformly (the recursion's Pr(1, 2) = 1).
At every later step every informed node sends once; a send to an active uninformed node informs it
at the end of the step. Selection: ``"uniform"`` (the old algorithm: a peer drawn uniformly from the
N − 1 others, independently each step) or ``"constrained"`` (Algorithm 4.1, ``constraint_select``:
each node walks a random permutation of its N − 1 peers, a fresh one when it has used them all (the
draws of :mod:`dlbkit.info.selection`, shared with the information models); every node's walk
starts at step 1, when the information is born).

Also here: :func:`gossip_stamps`, push (or push-pull) gossip of whole timestamped tables vectorised
over the nodes (the ``gossip`` information model's stamps, for ``benchmarks/bench_gossip.py``).
"""

from __future__ import annotations

import numpy as np

from dlbkit.info.selection import SELECTIONS, permutations, skip_self

__all__ = ["pr_all_informed", "gossip_stamps", "SELECTIONS"]
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


def gossip_stamps(n: int, periods: int, rng: np.random.Generator, selection: str = "uniform",
                  pull: bool = False, *, window: int = 255) -> tuple[np.ndarray, np.ndarray]:
    """Push (or push-pull) gossip of whole timestamped tables among *n* nodes for *periods* periods,
    vectorised over the nodes: the stamps of the ``gossip`` information model (fanout 1, zero transfer
    time), which decide everything freshest-wins does (a value is the load its node had at its stamp).

    Period t (1, 2, …): every node's own stamp becomes t; every node sends its table as it is at the
    start of the period to one peer (``"uniform"``: drawn uniformly from the others; ``"constrained"``:
    Algorithm 4.1's permutations, the draws of :class:`dlbkit.info.selection.Epochs`, so the stamps
    equal the information model's with ``selection="constrained"``); with *pull* the peer answers with
    its table of the start of the period; a receiver keeps the newer stamp entry by entry. Stamps are
    period numbers (0: the start). Returns the final stamps (row i: what node i knows; int16 below 2^15
    periods, else int32) and the mean age of the other nodes' entries at the end of each period, in periods.

    Speed (BENCHMARKS.md): the stamps are kept as ``uint8`` offsets from a sliding base (half the
    int16 memory traffic, the 1024 × 1024 matrix 1 MB): when a new stamp would not fit in *window*
    (≤ 255), the base moves up by the oldest entry's offset. An entry older than *window* periods (a
    node not heard of for that long) cannot be kept so; the matrix then widens to int32 offsets and the
    run goes on exactly as before. Every receiver's row is merged once from the senders' rows of the
    period's start, which no write touches before the end of the period (no copy of the matrix), into
    buffers allocated once, the receivers of most senders first (each layer a contiguous block); the
    mean age sums the matrix in blocks of 256 rows in uint16 (exact: 256 × 255 < 2^16)."""
    if selection not in SELECTIONS:
        raise ValueError(f"selection must be one of {SELECTIONS}; got {selection!r}")
    if n < 2:
        raise ValueError(f"need n >= 2; got {n}")
    if not 1 <= window <= 255:
        raise ValueError(f"window must be in 1 … 255; got {window}")
    R = np.zeros((n, n), dtype=np.uint8)  # stamps − base
    base = 0
    nodes = np.arange(n)
    diag = nodes * (n + 1)
    ages = np.empty(periods)
    order = None
    pairs = n * (n - 1)
    bufs = _buffers(n, R.dtype, pull)
    for t in range(1, periods + 1):
        if t - base > window:
            if R.dtype == np.uint8 and (m := int(R.min())) > 0:
                np.subtract(R, np.uint8(m), out=R)  # every entry keeps its stamp: base + offset
                base += m
            if t - base > window:  # an entry window periods old: widen (exact for any run length)
                R = R.astype(np.int32)
                window = 2 ** 31 - 1
                bufs = _buffers(n, R.dtype, pull)
        got_buf, old_buf, more_buf, pulled = bufs
        R.reshape(-1)[diag] = t - base
        if selection == "uniform":
            dst = skip_self(rng.integers(n - 1, size=n), nodes)
        else:
            pos = (t - 1) % (n - 1)
            if pos == 0:
                order = skip_self(permutations(rng, (n,), n - 1), nodes[:, None])
            dst = order[:, pos]
        if pull:  # the peers' tables at the start of the period
            np.take(R, dst, axis=0, out=pulled, mode="clip")
        # the tables sent, grouped by receiver, the groups largest first, so that the receivers with
        # more than k senders are the first rows of `got`: one max per layer k over contiguous rows.
        # Every read of R comes before the one write, so each sender's row is its table of the period's
        # start. (np.take with out= and mode="clip" fills a buffer in place: no allocation, no
        # "raise"-mode copy; the indices are valid.)
        by = np.argsort(dst, kind="stable")
        d = dst[by]
        starts = np.flatnonzero(np.r_[True, d[1:] != d[:-1]])
        sizes = np.diff(np.r_[starts, n])
        big = np.argsort(-sizes, kind="stable")
        starts, sizes = starts[big], sizes[big]
        m = len(starts)
        got = got_buf[:m]
        np.take(R, by[starts], axis=0, out=got, mode="clip")
        for k in range(1, int(sizes[0])):
            c = int(np.count_nonzero(sizes > k))
            more = more_buf[:c]
            np.take(R, by[starts[:c] + k], axis=0, out=more, mode="clip")
            np.maximum(got[:c], more, out=got[:c])
        rows = d[starts]
        old = old_buf[:m]
        np.take(R, rows, axis=0, out=old, mode="clip")
        np.maximum(got, old, out=got)
        R[rows] = got
        if pull:
            np.maximum(R, pulled, out=R)
        ages[t - 1] = t - base - (_total(R) - n * (t - base)) / pairs
    out = np.int16 if periods < 2 ** 15 else np.int32
    return (R.astype(np.int64) + base).astype(out), ages


def _buffers(n: int, dtype, pull: bool) -> tuple:
    """Work arrays of gossip_stamps, allocated once (a temporary of a few hundred kB each period costs
    fresh pages): merged rows, the receivers' own rows, one layer's senders, the pulled tables."""
    return (np.empty((n, n), dtype), np.empty((n, n), dtype), np.empty((n, n), dtype),
            np.empty((n, n), dtype) if pull else None)


def _total(R: np.ndarray) -> int:
    """The sum of every entry of *R* (uint8: blocks of 256 rows summed in uint16, which cannot overflow)."""
    if R.dtype != np.uint8:
        return int(R.sum(dtype=np.int64))
    n = len(R)
    if n % 256 == 0:  # one call over every block (a fifth faster than a loop of blocks at n = 1024)
        return int(R.reshape(n // 256, 256, -1).sum(axis=1, dtype=np.uint16).sum(dtype=np.int64))
    return sum(int(R[i:i + 256].sum(axis=0, dtype=np.uint16).sum(dtype=np.int64)) for i in range(0, n, 256))
