"""Memory per segment of realised availabilities (`Piecewise`) and the time of their lookups.

Usage: python benchmarks/bench_piecewise.py
Four Markov nodes (sojourns of mean 0.1 s, low 0.5, seeds 0-3) realised to t = 20 000 s under
tracemalloc: bytes kept and traced peak per segment. Then 200 000 random times, each asked level,
capacity and finish (best of 5), and digests of the answers, the segments and a lazily extended
Pulse's finish times, to compare two versions bit for bit.
"""
import hashlib
import struct
import tracemalloc

import numpy as np
from dlbkit.model.availability import Markov, Pulse
from timing import best_of
spec = Markov(mean_free=0.1, mean_busy=0.1, low=0.5)
tracemalloc.start()
pws = []
for s in range(4):
    pw = spec.realise(np.random.default_rng(s)); pw.level(20_000.0); pws.append(pw)
cur, peak = tracemalloc.get_traced_memory()
tracemalloc.stop()
segs = sum(len(p.times) for p in pws)
print(f"4 Markov nodes to t=20000: {segs:,} segments, kept {cur/segs:.1f} B/segment, peak {peak/segs:.1f} B/segment")
rng = np.random.default_rng(7)
qs = rng.uniform(0, 19_000, 200_000).tolist()
pw = pws[0]
def lookups():
    out = []
    for t in qs:
        out.append(pw.level(t)); out.append(pw.capacity(t)); out.append(pw.finish(t, 3.0))
    return out
secs, out = best_of(lookups, 5)
h = hashlib.sha256(struct.pack(f"{len(out)}d", *out)).hexdigest()[:16]
h2 = hashlib.sha256(b"".join(struct.pack(f"{len(p.times)}d", *p.times) + struct.pack(f"{len(p.cum)}d", *p.cum) + struct.pack(f"{len(p.levels)}d", *p.levels) for p in pws)).hexdigest()[:16]
# a lazily extended Pulse, extended query by query
pp = Pulse(start=0.5, duration=0.25, level=0.5, period=1.0).realise()
o2 = [pp.finish(t, 0.7) for t in np.linspace(0, 5000, 20000).tolist()]
h3 = hashlib.sha256(struct.pack(f"{len(o2)}d", *o2)).hexdigest()[:16]
print(f"600 000 lookups (level, capacity, finish) best of 5: {secs:.3f} s; digests lookups {h} segments {h2} pulse {h3}")
