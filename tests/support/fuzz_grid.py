"""The ``[grid]`` fuzzers' common parts: grids drawn over an experiment's own keys, capped to stay small.

Moved from the test modules that shared them (test modules never import one another).
"""

from __future__ import annotations

import copy
import json
import re
import tomllib

from hypothesis import event
from hypothesis import strategies as st

from support.experiment_files import TINY
from support.fuzz import WEIRD, paths
from support.fuzz_runs import BASES as RUN_BASES
from support.fuzz_runs import (
    CAP,
    EDGE,
    FLOOR,
    NAMES,
    shrink,
)

BASES = {**RUN_BASES, "tiny": {**tomllib.loads(TINY), "repetitions": 1}}


ROOTS = ("platform", "workload", "engine", "info")


WRONG_KEYS = ["workload.colour", "engine.x.y", "platform.nodes[99].speed", "platform.nodes[0].speeed", "info.period",
              "info.model", "workload..items", "Workload.items", "workload.items[", "workload.items[0]",
              "balancers[0].name", "seed", "workload", "repetitions.x", "platform.network.latency",
              "engine.name", "workload.kind", "platform.nodes", "workload.cost.high", "engine.info.period"]


def dotted(path: tuple) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else step)
    return out


def own_keys(d: dict) -> list[str]:
    """The dotted keys of the experiment's own values (what a sweep varies), as [grid] spells them."""
    keys = []
    for root in ROOTS:
        if isinstance(d.get(root), dict):
            for p in paths(d[root], (root,)):
                k = dotted(p)
                if re.fullmatch(r"[A-Za-z_][\w]*(\[\d+\])*(\.[A-Za-z_]\w*(\[\d+\])*)+", k):
                    keys.append(k)
    return keys


def _value_at(d: dict, key: str):
    cur = d
    for seg in key.split("."):
        name, idx = re.match(r"([^\[]*)(.*)", seg).groups()
        cur = cur.get(name) if isinstance(cur, dict) else None
        for i in re.findall(r"\d+", idx):
            cur = cur[int(i)] if isinstance(cur, list) and int(i) < len(cur) else None
    return cur


@st.composite
def values_for(draw, current) -> list:
    how = draw(st.sampled_from(["edge", "edge", "edge", "edge", "weird", "twice", "empty", "no list", "long", "same",
                                "same"]))
    event(f"values {how}")
    if how == "edge":
        kind = NAMES if isinstance(current, str) else EDGE
        return draw(st.lists(kind, min_size=1, max_size=4, unique_by=lambda v: json.dumps(v)))
    if how == "weird":
        return [copy.deepcopy(v) for v in draw(st.lists(WEIRD, min_size=1, max_size=3))]
    if how == "twice":
        v = current if current is not None else draw(EDGE)
        return [copy.deepcopy(v), draw(st.sampled_from([0, 1, 2, 0.5])), copy.deepcopy(v)]
    if how == "empty":
        return []
    if how == "no list":
        return copy.deepcopy(draw(WEIRD))
    if how == "long":
        return list(range(1, draw(st.sampled_from([20, 120, 700])) + 1))  # 700 × 700 passes the limit
    return [copy.deepcopy(current) if current is not None else draw(EDGE)]  # the base's own value: one point


@st.composite
def gridded(draw, base: dict, mild: bool = False) -> dict:
    """*base* (deep-copied) with a [grid] of one to three drawn keys and value lists (*mild*: one or
    two of the experiment's own keys, each its own value and an edge value, or its value twice)."""
    d = json.loads(json.dumps(base))
    own = own_keys(d)
    grid = {}
    if mild:
        for key in draw(st.lists(st.sampled_from(own), min_size=1, max_size=2, unique=True)):
            current = _value_at(d, key)
            other = draw(NAMES if isinstance(current, str) else EDGE)
            grid[key] = draw(st.sampled_from([[current], [current, other], [other, current], [current, current]]))
        d["grid"] = grid
        return d
    for _ in range(draw(st.integers(1, 3))):
        how = draw(st.sampled_from(["own", "own", "own", "own", "own", "wrong", "respelled"]))
        if how == "own" and own:
            key = draw(st.sampled_from(own))
        elif how == "respelled" and grid:  # a key already swept, spelled another way or inside it
            first = next(iter(grid))
            key = draw(st.sampled_from([re.sub(r"\[(\d+)\]", r"[0\1]", first), first.rsplit(".", 1)[0],
                                        first + ".x"]))
        else:
            key = draw(st.sampled_from(WRONG_KEYS))
        grid[key] = draw(values_for(_value_at(d, key)))
    d["grid"] = grid
    return d


def capped(d: dict) -> dict:
    """*d* with the grid's values bounded as :func:`shrink` bounds the tables (sizes capped, time
    scales floored), each list's duplicates created by the capping dropped."""
    d = json.loads(json.dumps(d))
    grid = d.get("grid")
    if isinstance(grid, dict):
        for key, values in grid.items():
            last = re.sub(r"\[\d+\]", "", key.rsplit(".", 1)[-1])
            if isinstance(values, list) and (last in CAP or last in FLOOR):
                out = []
                for v in values:
                    v = shrink({last: v})[last]
                    if v not in out:
                        out.append(v)
                grid[key] = out
            elif isinstance(values, list):
                grid[key] = [shrink(v) for v in values]
    return d
