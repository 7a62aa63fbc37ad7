"""The bags family's real-run entry: ``run_bags(fn, tasks, ...)`` runs ``fn(task)`` for every task on
worker processes, each task placed by a bagging balancer; ``bags`` returns the values alone."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sixth.model.seeding import BAGS
from sixth.runtime import program

from dlbkit.balancers.registry import resolve
from dlbkit.errors import ConfigError
from dlbkit.families.run import RunResult
from dlbkit.model import check
from dlbkit.model.seeding import streams
from dlbkit.runtime.backends.local import check_workers

__all__ = ["BagResult", "bags", "run_bags"]


class BagResult(RunResult):
    """A real bags run: ``results`` (each task's value, in task order), its ``trace`` and ``metrics``."""


def run_bags(fn: Callable, tasks: Sequence, *, sizes: Sequence[float] | None = None,
             balancer: Any = "bag-least-loaded", params: Mapping | None = None, workers: int | None = None,
             seed: int = 0, start_method: str | None = None) -> BagResult:
    """``fn(task)`` for every task of *tasks* on *workers* local processes; *sizes*: the tasks' estimated
    work, which the balancer places by (default 1 each). Raise ConfigError naming the argument for bad input,
    :class:`~dlbkit.errors.TaskError` if ``fn`` raises."""
    if not callable(fn):
        raise ConfigError("fn", fn, "a callable of one argument, the task")
    tasks = list(tasks)
    if not tasks:
        raise ConfigError("tasks", tasks, "a non-empty sequence of tasks")
    sizes = [1.0] * len(tasks) if sizes is None else list(sizes)
    if len(sizes) != len(tasks):
        raise ConfigError("sizes", f"{len(sizes)} sizes", f"one size per task ({len(tasks)})")
    sizes = [check.number(s, f"sizes[{k}]", lo=0.0, lo_open=True) for k, s in enumerate(sizes)]
    b = resolve(balancer, params, kind="bagging")
    if workers is not None:
        check_workers(workers)
    rng = streams(check.integer(seed, "seed", lo=0), BAGS).rng("balancer")  # the simulator's balancer stream
    values, trace = program.run_bags(fn, tasks, sizes, b, workers=workers, rng=rng, start_method=start_method)
    trace.seed = seed
    return BagResult(values, trace, b)


def bags(fn: Callable, tasks: Sequence, **kw) -> list:
    """Every task's value, computed in parallel (:func:`run_bags`)."""
    return run_bags(fn, tasks, **kw).results
