"""Synthetic scientific workflows from WfCommons' recipes (the optional extra ``dlbkit[wfcommons]``).

WfCommons (https://wfcommons.org; Coleman et al., "WfCommons: A framework for enabling scientific
workflow research and development", FGCS 128, 2022) ships, per application, a *recipe* made by WfChef
from real execution instances: base graphs, the microstructures that recur in them, and fitted
distributions of each task type's runtime and file sizes. ``WorkflowGenerator(recipe).build_workflow()``
grows the base graph closest to the size asked for by duplicating microstructures and draws every
runtime and file size; :func:`generate` turns that workflow into a
:class:`~dlbkit.families.graph.model.workload.TaskGraph` through dlbkit's WfFormat reader
(:mod:`.wfformat`: a task's load is its ``runtimeInSeconds``, an edge's data the bytes of the files the
child reads from the parent), so :attr:`TaskGraph.meta` is the reader's, plus ``generator``
(app, tasks, seed and the wfcommons version).

**Determinism.** WfCommons 1.6 takes no seed. It draws from three sources, read from its sources
(``wfchef/duplicate.py``, ``wfchef/wfchef_abstract_recipe.py``, ``wfgen/abstract_recipe.py``,
``utils.generate_rvs``): Python's global ``random`` (which microstructure to duplicate), numpy's global
``RandomState`` (scipy.stats' ``rvs`` for runtimes and file sizes) and ``uuid.uuid4`` (the names of
duplicated nodes and the ids of files, which come from the operating system and cannot be seeded).
:func:`generate` seeds the first two from *seed*, stands a seeded ``uuid4`` in for the real one in
those two modules, and puts all three back afterwards (under a lock, since they are process-wide), so
the same (app, tasks, seed, wfcommons version) gives the same workflow file byte for byte but its two
timestamps (``createdAt``, ``executedAt``), whatever ``PYTHONHASHSEED`` is
(``tests/families/graph/model/test_wfcommons_recipes.py``). Another wfcommons release may draw other
workflows from the same seed: the version is kept in the graph's meta and in an experiment's run
fingerprints. The author's name, which WfCommons takes from ``getpass.getuser()`` (a ``KeyError`` for a
process whose uid has no name, as in some containers), is ``dlbkit`` in the block. What is not isolated:
another thread of the same process drawing from ``random`` or numpy's global generator during a
generation would change the workflow (and lose its own draws to the restore); dlbkit itself draws from
neither (its streams are its own Generators), and an experiment builds its workflows in the main thread
before any run starts.

**Apps** are named as WfCommons names them (:data:`APPS`). Its ``RnaseqRecipe`` is left out: its base
graphs have no microstructures, and its fallback duplicates a Python ``set`` of node names, whose order
follows the string hash seed of the process, so no seed reproduces it (two processes with the same
seed and different ``PYTHONHASHSEED`` wrote different files).

**Tasks** is WfCommons' ``num_tasks``: an upper bound; the graph has at most that many tasks (the base
graph's entry and exit nodes count; 194–198 tasks for 200 asked in wfcommons 1.6, at the shipped
experiment's seeds). The least it takes is the recipe's smallest base graph (:func:`min_tasks`: 60 for
montage), below which WfCommons raises.
"""

from __future__ import annotations

import importlib
import json
import random
import threading
import types
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from dlbkit.errors import ConfigError, closest
from dlbkit.families.graph.model.workload import TaskGraph, from_wfformat
from dlbkit.model import check

__all__ = ["APPS", "EXTRA", "generate", "min_tasks", "version", "write"]

#: app name (as WfCommons names it) → its recipe class in ``wfcommons.wfchef.recipes``
APPS = {"montage": "MontageRecipe", "epigenomics": "EpigenomicsRecipe", "blast": "BlastRecipe",
        "seismology": "SeismologyRecipe", "1000genome": "GenomeRecipe", "cycles": "CyclesRecipe",
        "soykb": "SoykbRecipe", "srasearch": "SrasearchRecipe", "bwa": "BwaRecipe"}

#: what to install when the package is missing
EXTRA = "the wfcommons package installed: pip install 'dlbkit[wfcommons]'"

#: the most tasks asked for: WfCommons grows a graph one microstructure at a time in Python (about
#: 0.06 s for 200 tasks); past this a generation would run for minutes before the first simulation
MAX_TASKS = 20_000

# random, numpy's global RandomState and the stand-in uuid4 are process-wide while a workflow is drawn
_LOCK = threading.Lock()


def _wfcommons() -> types.ModuleType:
    """The wfcommons package, or the ConfigError naming the extra to install."""
    try:
        return importlib.import_module("wfcommons")
    except ImportError:
        raise ConfigError("generator", "wfcommons", EXTRA) from None


def _recipe_class(app):
    """The recipe class of *app*, checked by name before wfcommons is imported."""
    if not isinstance(app, str) or app not in APPS:
        raise ConfigError("app", app, "a WfCommons application: " + ", ".join(APPS), suggest=closest(app, APPS))
    _wfcommons()
    recipes = importlib.import_module("wfcommons.wfchef.recipes")
    return getattr(recipes, APPS[app])


def min_tasks(app: str) -> int:
    """The fewest tasks WfCommons builds *app* from: the order of its recipe's smallest base graph
    (read from the recipe's ``microstructures/summary.json``)."""
    cls = _recipe_class(app)
    summary = cls.from_num_tasks(num_tasks=1).this_dir / "microstructures" / "summary.json"
    return min(int(g["order"]) for g in json.loads(summary.read_text())["base_graphs"].values())


@contextmanager
def _seeded(seed: int) -> Iterator[None]:
    """WfCommons' three random sources seeded from *seed* for the block, and put back after it."""
    from wfcommons.common import workflow
    from wfcommons.wfchef import duplicate
    from wfcommons.wfgen import abstract_recipe

    # a stream of its own for the ids (a str seed is hashed by sha512, not by the process's hash seed)
    ids = random.Random(f"dlbkit-wfcommons-uuid-{seed}")

    def uuid4() -> uuid.UUID:
        return uuid.UUID(int=ids.getrandbits(128), version=4)

    with _LOCK:
        kept = (random.getstate(), np.random.get_state(), duplicate.uuid4, abstract_recipe.uuid, workflow.getpass)
        random.seed(seed)
        np.random.seed(np.random.SeedSequence(seed).generate_state(4))  # any seed ≥ 0, not only < 2**32
        duplicate.uuid4 = uuid4  # ``from uuid import uuid4`` there
        abstract_recipe.uuid = types.SimpleNamespace(uuid4=uuid4)  # ``uuid.uuid4()`` there
        workflow.getpass = types.SimpleNamespace(getuser=lambda: "dlbkit")  # ``getpass.getuser()`` there
        try:
            yield
        finally:
            random.setstate(kept[0])
            np.random.set_state(kept[1])
            duplicate.uuid4, abstract_recipe.uuid, workflow.getpass = kept[2], kept[3], kept[4]


def _workflow(app, tasks, seed):
    """WfCommons' Workflow object of *app* with at most *tasks* tasks, drawn from *seed*."""
    cls = _recipe_class(app)
    tasks = check.size(tasks, "tasks", MAX_TASKS, "tasks asked of a WfCommons recipe")
    seed = check.integer(seed, "seed", lo=0)
    least = min_tasks(app)
    if tasks < least:
        raise ConfigError("tasks", tasks, f"at least {least} for {app} (its WfCommons recipe's smallest base graph)")
    from wfcommons import WorkflowGenerator

    with _seeded(seed):
        return WorkflowGenerator(cls.from_num_tasks(num_tasks=tasks)).build_workflow()


def version() -> str:
    """The installed wfcommons' version (what draws a seed's workflow)."""
    _wfcommons()
    return getattr(importlib.import_module("wfcommons.version"), "__version__", "unknown")


def generate(app: str = "montage", tasks: int = 200, seed: int = 0) -> TaskGraph:
    """A synthetic *app* workflow of at most *tasks* tasks drawn by WfCommons from *seed* (same seed,
    same graph), as a TaskGraph read by the WfFormat reader: loads are the runtimes in seconds, edge
    data the bytes the child reads from the parent. ConfigError: an unknown *app* (the known ones
    listed), *tasks* below the recipe's least (:func:`min_tasks`), wfcommons not installed."""
    wf = _workflow(app, tasks, seed)
    wf.generate_json()
    g = from_wfformat(wf.workflow_json, f"wfcommons {app}")
    g.meta["generator"] = {"app": app, "tasks": tasks, "seed": seed, "wfcommons": version()}
    return g


def write(path, app: str = "montage", tasks: int = 200, seed: int = 0) -> Path:
    """Write :func:`generate`'s workflow as WfCommons writes it (a WfFormat 1.6 ``.json``) to *path*."""
    p = Path(path)
    _workflow(app, tasks, seed).write_json(p)
    return p
