"""The bad-input fuzzers' common parts: settings, the hang guard, TOML writing, mutations of a
valid file's values, odd values.

Moved from the test modules that shared them (test modules never import one another).
"""

from __future__ import annotations

import copy
import json
import math
import re
import signal
from contextlib import contextmanager
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import dlbkit

from support.profiles import examples

DATA = Path(dlbkit.__file__).parent / "data"


VALIDATION_S = 20  # any single validation taking longer is a hang (they take milliseconds)


FUZZ = settings(max_examples=examples(120), deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                       HealthCheck.data_too_large])


class Hang(Exception):
    pass


@contextmanager
def deadline(seconds: float = VALIDATION_S, *, wall: bool = False):
    """Raise :class:`Hang` in the block if it takes more than *seconds* (main thread only).

    By default the seconds are this process's CPU time (``ITIMER_PROF``): a check or a simulation
    that hangs loops, and its CPU time does not grow when other processes load the machine, as a
    wall-clock alarm's does (under 4× oversubscription a 20 s alarm fired on a sweep that takes 3 s
    alone). With *wall* the seconds are wall-clock (``ITIMER_REAL``): for a block that waits on worker
    processes, whose hang uses no CPU here; give it a ceiling a loaded machine does not reach."""
    which, signum = (signal.ITIMER_REAL, signal.SIGALRM) if wall else (signal.ITIMER_PROF, signal.SIGPROF)

    def on_alarm(signum, frame):
        raise Hang(f"no answer within {seconds} s of {'wall-clock' if wall else 'CPU'} time")

    old = signal.signal(signum, on_alarm)
    signal.setitimer(which, seconds)
    try:
        yield
    finally:
        signal.setitimer(which, 0)
        signal.signal(signum, old)


# --- TOML writing: every mutated table goes back to a file --------------------------------------------
def _key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k)


def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # a TOML basic string for the ASCII strings used here
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return "{" + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + "}"


def to_toml(d: dict) -> str:
    return "".join(f"{_key(k)} = {_value(v)}\n" for k, v in d.items())


# --- mutations ----------------------------------------------------------------------------------------
WEIRD = st.one_of(
    st.sampled_from([math.nan, math.inf, -math.inf, 0, -1, -1.5, 0.0, 1e308, -1e308, 1e-320, 10**18, 10**30,
                     2**63 - 1, "", "x", "1", True, False, [], [1, 2], {}, {"kind": "x"}, [{}]]),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(alphabet="abcxyz_-.", max_size=6),
)


def paths(v, prefix=()):
    """Every path to a value inside nested dicts and lists (the root excluded)."""
    out = []
    if isinstance(v, dict):
        for k, x in v.items():
            out.append(prefix + (k,))
            out += paths(x, prefix + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            out.append(prefix + (i,))
            out += paths(x, prefix + (i,))
    return out


def _parent(d, path):
    cur = d
    for step in path[:-1]:
        cur = cur[step]
    return cur


@st.composite
def mutated(draw, base: dict) -> dict:
    """*base* (deep-copied) with one to three mutations: a value replaced by a weird one, a key
    deleted, an unknown key added."""
    d = json.loads(json.dumps(base))
    for _ in range(draw(st.integers(1, 3))):
        where = paths(d)
        if not where:
            break
        path = draw(st.sampled_from(where))
        parent = _parent(d, path)
        op = draw(st.sampled_from(["replace", "replace", "replace", "delete", "unknown", "size"]))
        if op == "size":  # the sizes and magnitudes that used to hang or exhaust memory
            sizes = [p for p in where if p[-1] in ("repetitions", "items", "speed", "depth", "fanout", "count",
                                                "n", "m", "k", "points", "jobs", "width", "steps")]
            if sizes:
                path = draw(st.sampled_from(sizes))
                parent = _parent(d, path)
            parent[path[-1]] = draw(st.sampled_from([10**12, 10**15, 2**63 - 1, 1e308, 1e300, 10**9]))
        elif op == "replace":
            parent[path[-1]] = copy.deepcopy(draw(WEIRD))  # a fresh copy: sampled lists and tables are shared
        elif op == "delete" and isinstance(parent, dict):
            del parent[path[-1]]
        elif op == "unknown":
            target = parent[path[-1]] if isinstance(parent[path[-1]], dict) else (
                parent if isinstance(parent, dict) else d)
            target[draw(st.sampled_from(["colour", "speeed", "x_y", "itemz"]))] = copy.deepcopy(draw(WEIRD))
    return d


# --- command-line flags -------------------------------------------------------------------------------
FLAG_TEXT = st.one_of(st.sampled_from(["0", "-1", "1", "2", "1e400", "nan", "inf", "-inf", "", "x", "99999999999999",
                                       "gss", "heft", "nezha", "pd", "awf-c", "auto", "a=1", "min_chunk=0",
                                       "min_chunk=x", "=", "1,0", "1,1,0.5", "nope.toml", "p.toml", "dir",
                                       "dir/sub/x.png", "--", "-b"]),
                      st.text(alphabet="abz019_=-.,/", max_size=8))
