"""The bags family's workload: a bag of independent tasks of known sizes, each run whole on one node."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dlbkit.errors import ConfigError
from dlbkit.model import check

__all__ = ["MAX_TASKS", "Bag"]

#: the most tasks of a bag (the engine keeps per-task arrays; a test family has no use for more)
MAX_TASKS = 1_000_000


@dataclass(frozen=True)
class Bag:
    """*sizes*: each task's estimated work (work units: a node of speed s runs it in size / s seconds at
    full availability). *jitter* in [0, 1): each task's actual work is its size times a factor drawn
    uniformly in [1 - jitter, 1 + jitter] from the run's ``jitter`` stream (0: the sizes are exact), so
    the dispatcher decides from estimates and the seed decides what they turn out to be."""

    sizes: tuple[float, ...]
    jitter: float = 0.0

    def __post_init__(self):
        s = self.sizes
        if isinstance(s, (str, bytes)) or not isinstance(s, Sequence) or not s:
            raise ConfigError("sizes", s, "a non-empty list of task sizes (work units)")
        check.size(len(s), "sizes", MAX_TASKS, "tasks of a bag")
        object.__setattr__(self, "sizes", tuple(check.number(x, f"sizes[{k}]", lo=0.0, lo_open=True)
                                                for k, x in enumerate(s)))
        object.__setattr__(self, "jitter", check.number(self.jitter, "jitter", lo=0.0, hi=1.0, hi_open=True))

    @property
    def n_tasks(self) -> int:
        return len(self.sizes)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], path: str = "workload") -> Bag:
        """An experiment's ``[workload]`` table: ``kind = "bags"``, ``sizes = [...]``, optional ``jitter``;
        an error names ``<path>.<field>``."""
        d = check.table(d, path)
        check.known_keys(d, path, {"kind", "sizes", "jitter"})
        check.required(d, "sizes", path)
        with check.renamed("sizes", f"{path}.sizes"), check.renamed("jitter", f"{path}.jitter"):
            return cls(d["sizes"], d.get("jitter", 0.0))
