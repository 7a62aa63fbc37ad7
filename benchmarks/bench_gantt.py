"""Memory and time of drawing a Gantt chart (dlbkit.plots.gantt), and a digest of its pixels.

Usage: python benchmarks/bench_gantt.py N [PIXELS.npy]
The chart of `ss` on N unit items (a master and 4 unit workers with a repeating pulse of background
load). Without PIXELS: under tracemalloc, the traced peak and the memory still held after drawing,
per chunk. With PIXELS: timed without tracemalloc (wall and CPU of gantt() + canvas.draw()), and the
rendered RGBA array saved there, to compare two versions pixel by pixel.
"""
import gc
import hashlib
import sys
import time
import tracemalloc

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from dlbkit import Divisible, Platform, simulate
from dlbkit.plots import gantt
N = int(sys.argv[1]); save = sys.argv[2] if len(sys.argv) > 2 else None
w = {"name": "w", "count": 4, "speed": 1.0, "availability": {"kind": "pulse", "start": 1.0, "duration": 2.0, "level": 0.3, "period": 50.0}}
trace = simulate(Platform.from_dict({"nodes": [{"name": "m", "speed": 1.0}, w]}), Divisible(N), "ss", seed=1).trace
chunks = trace.n_intervals
gc.collect()
if not save: tracemalloc.start()
t0, c0 = time.perf_counter(), time.process_time()
fig = gantt(trace)
fig.canvas.draw()
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
cur, peak = tracemalloc.get_traced_memory() if tracemalloc.is_tracing() else (0, 0)
tracemalloc.stop()
px = np.asarray(fig.canvas.buffer_rgba()).copy()
if save:
    np.save(save, px)
print(f"{chunks:,} chunks: gantt+draw {wall:.2f} s wall, {cpu:.2f} s CPU{'' if save else ' (under tracemalloc)'}; traced peak {peak/chunks:.0f} B/chunk, "
      f"held {cur/chunks:.0f} B/chunk; pixels {hashlib.sha256(px.tobytes()).hexdigest()[:16]}")
