"""Trace: the record of one run, in one format for every family, simulated and real.

Columnar, typed storage: each interval column is a :class:`Column`, an :class:`array.array`
(``'q'``: 64-bit integers for ``node``, ``first``, ``count``, ``round_of``; ``'d'``: doubles for
``t_ask``, ``t_start``, ``t_end``), 8 bytes a row, growable (engines append in their hot loops, or assign a whole column once: a list, a
numpy array or another ``array.array`` given to a column is converted on assignment), read by numpy
without a copy through the buffer protocol, pickled as raw bytes (multiprocess and MPI runs). A list
of Python floats held about 32 bytes a value (the float object and its slot); the arrays hold 8. An
integer column refuses a float or None (``TypeError``), a float column None: a column never holds a
value of another kind. Columns support ``append``, ``extend``, ``len``, indexing and slicing (a slice
is a plain ``array.array`` of the same kind) and compare equal to a list of the same values; not
concatenation with ``+`` a list, nor ``sort``.

* **intervals**: one row per stretch of work a node did: ``node``, ``first`` and ``count`` (which
  work: items of a loop, a task, the data points a node held in an SPMD loop), ``t_ask`` (the node
  asked for it or was ready), ``t_start``, ``t_end``, ``round_of`` (the round, SPMD loop or
  iteration it belongs to; -1 outside rounds);
* **rounds**: per round and node, the round mechanism's measurements (004 §2.2), one row of
  :data:`ROUND_COLUMNS` per chunk: a :class:`Rows` (typed columns, ``'qqqdddd'``) read and written as
  a list of tuples;
* **transfers**: one row per move of work that balancing decided and carried out: ``(round, time, src,
  dst, n)`` (round -1 outside rounds; time NaN where the engine counts loops, not seconds);
* **decisions**: when the engine was asked to record them, one :class:`Decision` per call of a
  balancer: which node decided what, from a view of which age;
* **series**: named arrays of a family's per-round measurements (SPMD: ``loop_time`` and ``points``,
  loops × nodes; a task tree's ``waiting``), and ``meta`` for the rest.

Metrics are computed from a trace (:mod:`dlbkit.model.metrics`, and each family's own, see
``dlbkit families``); plots draw it (:mod:`dlbkit.plots`).
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Trace", "Decision", "Column", "Rows", "column", "INTERVAL_COLUMNS", "ROUND_COLUMNS", "TRANSFER_COLUMNS"]

INTERVAL_COLUMNS = ("node", "first", "count", "t_ask", "t_start", "t_end", "round")
ROUND_COLUMNS = ("round", "node", "count", "t_send", "send_time", "calc_time", "exe_time")
TRANSFER_COLUMNS = ("round", "time", "src", "dst", "n")

#: the Trace's interval attributes and each one's array typecode ('q': int64, 'd': float64)
_TYPECODE = {"node": "q", "first": "q", "count": "q", "t_ask": "d", "t_start": "d", "t_end": "d", "round_of": "q"}
_DTYPE = {"q": np.int64, "d": np.float64}


class Column(array):
    """An interval column: an :class:`array.array` that also compares equal to a list or tuple of the
    same values, as the lists it replaced did (``trace.node == [0, 1, 0]``). Copies stay columns."""

    __slots__ = ()

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, (list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return array.__eq__(self, other)

    def __ne__(self, other: Any) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None  # type: ignore[assignment]  # mutable, as a list

    def __copy__(self) -> Column:
        return Column(self.typecode, self)

    def __deepcopy__(self, memo: Any) -> Column:
        return Column(self.typecode, self)


def column(typecode: str, values: Any = ()) -> Column:
    """*values* as an interval column of *typecode* (``'q'`` or ``'d'``); a :class:`Column` of that
    typecode is kept as it is (not copied). A numpy array is copied in one piece when its dtype casts
    safely (integers to a float column too), else value by value, so that a float in an integer column
    raises ``TypeError`` as it does from a list."""
    if values.__class__ is Column and values.typecode == typecode:
        return values
    if isinstance(values, np.ndarray):
        dtype = _DTYPE[typecode]
        if np.can_cast(values.dtype, dtype, "safe"):
            out = Column(typecode)
            out.frombytes(np.ascontiguousarray(values, dtype=dtype).ravel().view(np.uint8))
            return out
        values = values.tolist()
    return Column(typecode, values)


class Rows:
    """Rows of a fixed width kept as one typed :class:`Column` per field (*typecodes*, one letter a
    field), read and written as the list of tuples it replaced: ``append(row)``, ``extend(rows)``,
    ``+=``, ``len``, iteration and indexing give tuples, a slice a list of them, and rows compare equal
    to a list of the same tuples. 8 bytes a field instead of a tuple and its numbers (~180 bytes a
    round row). A row of the wrong width, or a value of another kind (a float or None in an integer
    field), raises and leaves the rows as they were."""

    __slots__ = ("typecodes", "columns")

    def __init__(self, typecodes: str, rows: Any = ()):
        self.typecodes = typecodes
        self.columns = tuple(Column(c) for c in typecodes)
        self.extend(rows)

    def append(self, row: Any) -> None:
        cols = self.columns
        if len(row) != len(cols):
            raise ValueError(f"a row of {len(cols)} values, not {len(row)}: {row!r}")
        n = len(cols[0])
        try:
            for c, x in zip(cols, row):
                c.append(x)
        except (TypeError, OverflowError):  # a float or None in an integer field; an int beyond int64
            for c in cols:
                del c[n:]
            raise

    def extend(self, rows: Any) -> None:
        if isinstance(rows, Rows) and rows.typecodes == self.typecodes:
            for c, o in zip(self.columns, rows.columns):
                c.extend(o)
            return
        for row in rows:
            self.append(row)

    def __iadd__(self, rows: Any) -> Rows:
        self.extend(rows)
        return self

    def __len__(self) -> int:
        return len(self.columns[0])

    def __iter__(self):
        return zip(*self.columns)

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, slice):
            return list(zip(*(c[k] for c in self.columns)))
        return tuple(c[k] for c in self.columns)

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, (Rows, list, tuple)):
            return len(self) == len(other) and all(a == tuple(b) for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, as a list

    def __repr__(self) -> str:
        return f"Rows({self.typecodes!r}, {list(self)!r})"

    def __reduce__(self) -> Any:  # pickled as its columns' raw bytes
        return _rows_from_columns, (self.typecodes, self.columns)


def _rows_from_columns(typecodes: str, columns: Any) -> Rows:
    out = Rows(typecodes)
    for c, o in zip(out.columns, columns):
        c.extend(o)
    return out


#: the typecodes of a round row's fields (ROUND_COLUMNS)
ROUND_TYPES = "qqqdddd"


def _round_rows() -> Rows:
    return Rows(ROUND_TYPES)


def _ints() -> Column:
    return Column("q")


def _floats() -> Column:
    return Column("d")


@dataclass(frozen=True)
class Decision:
    """One call of a balancer: at *time* node *node* (-1: a central decider) asked *hook* and got
    *answer*; *age* is the mean over the other nodes of ``view.time − view.updated_at[j]`` in the
    view it read (with exact information entries are current, and a node's ``updated_at`` is when
    its load last changed; with an information model, when the decider last heard of it). *view* is
    a copy of that view (to replay the decisions: tests/test_same_decisions_sim_and_runtime.py)."""

    time: float
    node: int
    hook: str
    answer: Any
    age: float = 0.0
    view: Any = None


@dataclass
class Trace:
    """What happened in a run; metrics are computed from it (see :mod:`dlbkit.model.metrics`).

    *n_nodes* nodes (the view's index); ``node_of[i]`` is the platform node that node i ran on (the
    divisible family's master is not a node of the view); *family* names the workload family.
    """

    n_nodes: int
    node_of: list[int]
    balancer: str = ""
    seed: int | None = None
    source: str = "sim"  # "sim" or a runtime backend name
    family: str = ""  # the family's name, set by its engines and real runs ("": none said, a bare trace)
    # the interval columns: array.array (see the module docstring); any sequence assigned is converted
    node: Column = field(default_factory=_ints)
    first: Column = field(default_factory=_ints)
    count: Column = field(default_factory=_ints)
    t_ask: Column = field(default_factory=_floats)
    t_start: Column = field(default_factory=_floats)
    t_end: Column = field(default_factory=_floats)
    round_of: Column = field(default_factory=_ints)
    rounds: Rows = field(default_factory=_round_rows)  # reads as a list of ROUND_COLUMNS tuples
    transfers: list[tuple] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    series: dict[str, np.ndarray] = field(default_factory=dict)
    messages: int = 0
    bytes: float = 0.0
    events: int = 0
    end_time: float = 0.0  # when the last result is in (the master holds every result)
    #: the information layer's cost and the mean age of the loads deciders read (NaN: the engine
    #: has no information layer; dlbkit.info)
    info_messages: float = math.nan
    info_bytes: float = math.nan
    info_age_mean: float = math.nan
    #: per-node speed and realised availability, total work and the largest item (for bounds)
    speeds: list[float] = field(default_factory=list)
    availability: list[Any] = field(default_factory=list)
    total_work: float = 0.0
    max_item: float = 0.0
    meta: dict = field(default_factory=dict)

    def __setattr__(self, name: str, value: Any) -> None:
        # an interval column is always a typed array, however it was given (the dataclass's __init__,
        # dataclasses.replace and engines assigning a whole column all pass here)
        code = _TYPECODE.get(name)
        if code is not None:
            value = column(code, value)
        elif name == "rounds" and not (value.__class__ is Rows and value.typecodes == ROUND_TYPES):
            value = Rows(ROUND_TYPES, value)
        object.__setattr__(self, name, value)

    def add_interval(self, node: int, first: int, count: int, t_ask: float, t_start: float, t_end: float,
                     round: int = -1) -> None:
        """Append one interval row (engines with a hot loop append to the columns directly); a value a
        column refuses raises and leaves every column as it was."""
        n = len(self.node)
        try:
            self.node.append(node)
            self.first.append(first)
            self.count.append(count)
            self.t_ask.append(t_ask)
            self.t_start.append(t_start)
            self.t_end.append(t_end)
            self.round_of.append(round)
        except (TypeError, OverflowError):
            for name in _TYPECODE:
                del getattr(self, name)[n:]
            raise

    def keep_rows(self, keep) -> None:
        """Keep only the interval rows where *keep* (a boolean per row) is true (an engine that redoes
        part of a run drops what it redoes)."""
        keep = np.asarray(keep, dtype=bool)
        for name in _TYPECODE:
            setattr(self, name, np.asarray(getattr(self, name))[keep])

    def intervals(self) -> dict[str, np.ndarray]:
        """The interval rows as columns (:data:`INTERVAL_COLUMNS`)."""
        # copies (a caller may change them; a numpy view would also pin the column's size)
        return {"node": np.array(self.node, dtype=np.int64), "first": np.array(self.first, dtype=np.int64),
                "count": np.array(self.count, dtype=np.int64), "t_ask": np.array(self.t_ask, dtype=float),
                "t_start": np.array(self.t_start, dtype=float), "t_end": np.array(self.t_end, dtype=float),
                "round": np.array(self.round_of, dtype=np.int64)}

    def round_table(self) -> dict[str, np.ndarray]:
        """The round rows as columns (:data:`ROUND_COLUMNS`; copies)."""
        if not self.rounds:
            return {name: np.asarray([]) for name in ROUND_COLUMNS}
        return {name: np.array(col, dtype=_DTYPE[col.typecode])
                for name, col in zip(ROUND_COLUMNS, self.rounds.columns)}

    def transfer_table(self) -> dict[str, np.ndarray]:
        """The transfer rows as columns (:data:`TRANSFER_COLUMNS`)."""
        cols = list(zip(*self.transfers)) if self.transfers else [[] for _ in TRANSFER_COLUMNS]
        return {name: np.asarray(col, dtype=float if name == "time" else np.int64)
                for name, col in zip(TRANSFER_COLUMNS, cols)}

    @property
    def n_intervals(self) -> int:
        return len(self.node)

    @property
    def moved(self) -> int:
        """Work moved by balancing: the sum of the transfers' amounts."""
        return int(sum(t[4] for t in self.transfers))

    @property
    def makespan(self) -> float:
        """When the last interval ended (0 for an empty run)."""
        return float(np.max(self.t_end)) if len(self.t_end) else 0.0

    def name_nodes(self, platform) -> None:
        """Record *platform*'s node names (``meta["node_names"]``, kept if already set): the Gantt rows and
        :meth:`node_labels` name the nodes by them."""
        self.meta.setdefault("node_names", [n.name for n in platform.nodes])

    def node_labels(self) -> list[str] | None:
        """Per node of the view, the name of the platform node it ran on (``meta["node_names"]``, as
        simulations record it), "/k" numbering the nodes of a platform node with several cores; None
        when no names are recorded (a real run, whose workers are processes)."""
        names = self.meta.get("node_names")
        if not names:
            return None
        per_node: dict[int, int] = {}
        for n in self.node_of:
            per_node[n] = per_node.get(n, 0) + 1
        seen: dict[int, int] = {}
        out = []
        for n in self.node_of:
            k = seen[n] = seen.get(n, -1) + 1
            name = str(names[n]) if 0 <= n < len(names) else f"node {n}"
            out.append(f"{name}/{k}" if per_node[n] > 1 else name)
        return out

    def story(self, item: int) -> dict | None:
        """Which interval processed *item*: node, bounds and times (None if never processed)."""
        for k in range(self.n_intervals):
            if self.first[k] <= item < self.first[k] + self.count[k]:
                return {c: getattr(self, "round_of" if c == "round" else c)[k] for c in INTERVAL_COLUMNS}
        return None
