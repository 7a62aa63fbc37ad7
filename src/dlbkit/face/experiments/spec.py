"""Experiment files: parse and validate an experiment TOML, expand it into run specs.

An experiment is platform × workload × balancers × parameter grid × repetitions::

    name = "demo"
    description = "..."
    repetitions = 10            # >= 1
    seed = 1                    # base seed (common random numbers, see run_seed)
    [platform]
    file = "../platforms/demo16.toml"     # relative to the experiment file, or inline nodes/network
    availability = { n3 = 0.5 }           # optional, with a file: background load on its nodes, by name
    [workload]
    kind = "divisible"
    items = 20000
    cost = {dist = "uniform", low = 0.5, high = 1.5}
    [engine]                    # optional engine options (see dlbkit.families.divisible.sim.engine.simulate_divisible)
    name = "master-worker"      # optional: which engine of the family (default its first: dlbkit families)
    mechanism = "self-scheduling"
    master = "master"
    [[balancers]]
    name = "gss"
    label = "GSS"               # optional; defaults to name (+ params)
    params = { min_chunk = 1 }
    engine = { mechanism = "rounds" }   # optional: engine options (and name) for this balancer only
    [grid]                      # optional: cartesian product over dotted keys
    "workload.items" = [1000, 10000]

``[engine] name`` chooses one of the family's engines (``dlbkit families`` lists them and the balancer
kinds each accepts); a balancer's own ``engine = { name = ... }`` runs that balancer on another, so a
task graph's static plan (``heft``, replayed on the ``dynamic`` engine) and the online ``pd`` compare in
one experiment. Every balancer must be of a kind its engine accepts.

A task-tree experiment sets ``[workload] kind = "tree"`` with the tree's fields (``shape`` =
balanced, random or imbalance; depth, fanout, grain, imbalance, min_split_depth, slope, seed,
order), names migration balancers, and runs on the asynchronous engine
(:func:`dlbkit.families.tree.sim.engine.simulate_tree_async`; engine keys ``start_node``, ``control_bytes``,
``task_bytes``). The topology over which neighbourhood balancers work is the platform's. A random
or imbalance tree without a ``seed`` is drawn anew in every repetition (from the repetition's
seed, so every balancer runs the same trees).

A pipelined-SPMD experiment (Osman 2003, 000) sets ``[workload] kind = "spmd"`` with the fields of
:class:`~dlbkit.families.spmd.model.workload.Spmd` (points, loops, boundary, boundary_k, noise, layout,
bytes_per_point), names repartition balancers (dlah, homogeneous-diffusion, processor-only,
optimal-chain, or ``none`` for the unbalanced reference) and runs on the SPMD engine (engine key ``window``, loops per measurement window).
The platform's topology must be a chain, a ring or complete, and its availability is read on the
loop clock (see :mod:`dlbkit.families.spmd.model.workload` for how platform units map to datapoints).

Every bad input raises :class:`~dlbkit.errors.ConfigError` naming the field path
(``balancers[2].name``, ``platform.nodes[0].speed``, ``workload.items``), the value and what is
allowed. Validation is complete before anything runs: every grid point is built once.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import re
import sys
from dataclasses import dataclass, field
from numbers import Real
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from dlbkit import families, info
from dlbkit.balancers import registry
from dlbkit.errors import ConfigError, closest
from dlbkit.families import Engine, Family
from dlbkit.families.registry import DEFAULT
from dlbkit.model import check
from dlbkit.model.names import slug
from dlbkit.model.platform import Platform, load_toml
from dlbkit.face.own_modules import PRIVATE_PREFIX

__all__ = ["BalancerSpec", "Experiment", "RunSpec", "load_experiment", "run_seed", "point_key", "MAX_REPETITIONS",
           "MAX_RUNS", "MAX_POINTS"]

TOP_KEYS = {"name", "description", "repetitions", "seed", "platform", "workload", "engine", "info", "balancers",
            "grid"}
BALANCER_KEYS = {"name", "label", "params", "engine", "info"}
PLATFORM_KEYS = {"file", "speed_unit", "availability", "name", "nodes", "network"}
ENGINE_NAME = "name"  #: the ``[engine]`` key that chooses the family's engine (not an engine option)
NO_BALANCING = "none"  #: a family's unbalanced reference (``name = "none"``, where the family allows it)
GRID_ROOTS = ("platform", "workload", "engine", "info")
#: dlbkit's limits on the size of a sweep, checked before anything is built or run (a sweep keeps
#: one run description per run in memory, about 1 kB each): far beyond any sweep worth running
MAX_REPETITIONS = 100_000
MAX_RUNS = 1_000_000
#: grid points: each is built and checked when the experiment is read (0.15 ms a point for the tiny
#: divisible sweep here: 15 s and 0.4 GB at 10**5; 10**6 points within MAX_RUNS took minutes and GBs)
MAX_POINTS = 100_000


def run_seed(seed: int, repetition: int) -> int:
    """The seed of repetition *repetition*: the same for every balancer and grid point (common random
    numbers), so differences between balancers are not differences between draws."""
    return int(np.random.SeedSequence([seed, repetition]).generate_state(1)[0])


def point_key(point: tuple[tuple[str, Any], ...]) -> str:
    """Canonical text of a grid point, e.g. ``workload.items=1000, engine.master_overhead=0.001``
    ("" when the experiment has no grid). Used as part of a run's key in results.csv."""
    return ", ".join(f"{k}={json.dumps(v)}" for k, v in point)


@dataclass(frozen=True)
class BalancerSpec:
    """One ``[[balancers]]`` entry: *label* (unique), registry *name*, *params*, engine overrides, and
    its own information model (an ``info`` table replacing the experiment's ``[info]``; None: that one)."""

    label: str
    name: str
    params: dict = field(default_factory=dict)
    engine: dict = field(default_factory=dict)
    info: dict | None = None


@dataclass
class RunSpec:
    """One simulation to run: a balancer at a grid point in one repetition (picklable)."""

    label: str
    balancer: str
    params: dict
    point: tuple
    repetition: int
    seed: int
    platform: Platform
    workload: Any
    engine: dict
    fingerprint: str
    #: the engine of the family that runs it (None: the family's default engine)
    engine_name: str | None = None
    #: the module registering a balancer of the user's own (None: one of dlbkit's), imported by a
    #: worker process that has not (a spawned or forkserver pool, a Dask worker): only a forked one
    #: inherits the registry of ``--import`` or of the user's script
    module: str | None = None
    #: the file *module* was executed from when its name cannot be imported elsewhere (a ``--import``
    #: file named like another module runs under a private name: :mod:`dlbkit.face.own_modules`), else None
    module_file: str | None = None
    #: the module that registered the workload's family when it is declared outside dlbkit (None: a built-in
    #: family), imported by such a worker before *module*, and the file it loads it from (as *module_file*)
    family_module: str | None = None
    family_module_file: str | None = None

    @property
    def point_text(self) -> str:
        return point_key(self.point)

    @property
    def key(self) -> tuple[str, str, int]:
        """What identifies a run in results.csv (resumability): label, grid point, repetition."""
        return (self.label, self.point_text, self.repetition)


@dataclass
class Experiment:
    """A validated experiment. Build with :func:`load_experiment` or :meth:`from_dict`."""

    name: str
    description: str
    repetitions: int
    seed: int
    platform: Platform
    workload: Any
    engine: dict
    balancers: list[BalancerSpec]
    grid: dict[str, list]
    path: Path | None = None
    platform_source: str = "inline"
    #: the workload's family (dlbkit.families): its engine, balancer kind, metrics and plots
    family: Family | None = None
    #: raw tables (after resolving the platform file), the base that grid overrides modify
    raw: dict = field(default_factory=dict, repr=False)
    _points: list = field(default_factory=list, repr=False)

    # --- construction ---------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, d: Mapping, *, base_dir: Path | None = None, default_name: str = "experiment",
                  path: Path | None = None) -> "Experiment":
        d = check.table(d, "experiment")
        check.known_keys(d, "", TOP_KEYS)
        name = d.get("name", default_name)
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.\-]+", name):
            raise ConfigError("name", name, "a non-empty string of letters, digits, '_', '-' or '.'")
        description = d.get("description", "")
        if not isinstance(description, str):
            raise ConfigError("description", description, "a string")
        repetitions = check.size(d.get("repetitions", 1), "repetitions", MAX_REPETITIONS,
                                 "runs are held in memory before they run")
        seed = check.integer(d.get("seed", 0), "seed", lo=0)

        platform_dict, platform_dir, source = _platform_table(check.required(d, "platform", ""), base_dir)
        workload_dict = _files_resolved(dict(check.table(check.required(d, "workload", ""), "workload")), base_dir)
        engine_dict = dict(check.table(d.get("engine", {}), "engine"))
        info_dict = dict(check.table(d["info"], "info")) if "info" in d else {}
        platform = _build_platform(platform_dict, platform_dir, source)
        workload = _workload(workload_dict, "workload")
        family = families.of(workload)
        family.check_fit(platform, workload)
        engine, _options = _engine(family, engine_dict, platform, "engine")
        if info_dict:
            _info(info_dict, family, "info", engine, platform)
        balancers = _balancers(check.required(d, "balancers", ""), platform, engine_dict, family, workload)
        grid = _grid(d.get("grid", {}))
        n_points = math.prod(len(v) for v in grid.values())
        if n_points > MAX_POINTS:  # within MAX_RUNS, 10**6 points took minutes and gigabytes to check
            raise ConfigError("grid points (the product of the [grid] list lengths)", n_points,
                              f"at most {MAX_POINTS:,} (dlbkit's limit: every point's platform and workload are "
                              "built and checked before any run; split the sweep into several experiments)")
        n_runs = repetitions * len(balancers) * n_points
        if n_runs > MAX_RUNS:
            raise ConfigError("runs (repetitions × balancers × grid points)", n_runs,
                              f"at most {MAX_RUNS:,} (dlbkit's limit: runs are held in memory before they run; "
                              "split the sweep into several experiments)")
        own = [i for i, b in enumerate(balancers) if b.info is not None]
        swept = [k for k in grid if k.startswith("info.")]
        if own and swept:  # a balancer's own info table replaces [info], so the sweep would not reach it
            raise ConfigError(f"grid.{swept[0]}", grid[swept[0]], f"absent while balancers[{own[0]}] has its own "
                              "info table (sweep [info] with every balancer using it, or give each its own)")

        exp = cls(name, description, repetitions, seed, platform, workload, engine_dict, balancers, grid,
                  path=path, platform_source=source, family=family,
                  raw={"platform": platform_dict, "platform_dir": platform_dir, "workload": workload_dict,
                       "engine": engine_dict, "info": info_dict})
        exp._points = exp._build_points()
        return exp

    # --- grid -----------------------------------------------------------------------------------
    def _configs_at(self, point: tuple) -> tuple[dict, dict, dict, dict]:
        tables = {k: copy.deepcopy(self.raw[k]) for k in GRID_ROOTS}
        for key, value in point:
            _set_dotted(tables, key, value)
        return tables["platform"], tables["workload"], tables["engine"], tables["info"]

    def _build_at(self, point: tuple) -> tuple[Platform, Any, dict, dict, dict, dict]:
        pd, wd, ed, it = self._configs_at(point)
        platform = self.platform if pd == self.raw["platform"] else _build_platform(
            pd, self.raw["platform_dir"], self.platform_source)
        workload = _workload(wd, "workload")
        if families.of(workload) is not self.family:
            raise ConfigError("workload.kind", wd.get("kind"), f"{self.family.name!r} "
                              "at every grid point (one workload family per experiment)")
        self.family.check_fit(platform, workload)
        for i, b in enumerate(self.balancers):
            eng, options = _engine(self.family, {**ed, **b.engine}, platform, "engine")
            if b.name != NO_BALANCING:
                self.family.check_kind(eng, registry.get(b.name).kind, b.name, f"balancers[{i}].name")
                self.family.check_balancer(platform, registry.make(b.name, b.params), f"balancers[{i}].params",
                                          workload, options)
        if it:
            _info(it, self.family, "info", self.family.engine_named(ed.get(ENGINE_NAME), f"engine.{ENGINE_NAME}"),
                  platform)
        return platform, workload, ed, pd, wd, it

    def _build_points(self) -> list:
        keys = list(self.grid)
        # each value alone first, so an error names the grid key and index that caused it
        for key in keys:
            for j, value in enumerate(self.grid[key]):
                with check.within(f"grid.{key}[{j}]"):
                    self._build_at(((key, value),))
        points = []
        for values in itertools.product(*(self.grid[k] for k in keys)):
            point = tuple(zip(keys, values))
            with check.within(f"grid point {point_key(point)}"):
                built = self._build_at(point)
            points.append((point, built))
        return points

    @property
    def points(self) -> list[tuple]:
        """The grid points, each a tuple of (dotted key, value); ``[()]`` without a grid."""
        return [p for p, _ in self._points]

    @property
    def grid_keys(self) -> list[str]:
        return list(self.grid)

    def expand(self) -> list[RunSpec]:
        """Every run, ordered by grid point, then repetition, then balancer (so an interrupted sweep
        has compared all balancers on the first repetitions)."""
        specs = []
        family_module = _loadable(families.declared_in(self.family.name))
        read: dict = {}  # path -> digest of its bytes: each workload file hashed once
        for point, (platform, workload, engine, pd, wd, it) in self._points:
            for r in range(self.repetitions):
                seed = run_seed(self.seed, r)
                work = self.family.per_repetition(workload, wd, seed)
                for b in self.balancers:
                    eng = {**engine, **b.engine}
                    name = eng.pop(ENGINE_NAME, None)
                    if name == self.family.engine.name:  # the default named: the run (and fingerprint) of before
                        name = None
                    chosen = it if b.info is None else b.info
                    if chosen:  # absent: the engine's default (exact), and the fingerprint of before
                        eng["info"] = dict(chosen)
                    fp = _fingerprint(pd, wd, eng if name is None else {**eng, ENGINE_NAME: name}, b, seed,
                                      {**_file_digests(wd, self.family.file_keys, read), **self.family.inputs(wd)})
                    specs.append(RunSpec(b.label, b.name, dict(b.params), point, r, seed, platform, work,
                                         eng, fp, name, *_own_module(b.name), *family_module))
        return specs

    @property
    def n_runs(self) -> int:
        return len(self._points) * self.repetitions * len(self.balancers)


def _own_module(name: str) -> tuple[str | None, str | None]:
    """The module that registered balancer *name*, unless it is dlbkit's own (or *name* is "none",
    no balancing), and the file a worker loads it from when the name is a private one (else None)."""
    cls = registry.REGISTRY.get(name.lower())
    return _loadable(None if cls is None else cls.__module__)


def _loadable(module: str | None) -> tuple[str | None, str | None]:
    """*module* (None unless it is the user's: not dlbkit's own) and the file a worker loads it from when its
    name is a private one (:mod:`dlbkit.face.own_modules`), else None."""
    if module is None or module == "dlbkit" or module.startswith("dlbkit."):
        return None, None
    if not module.startswith(PRIVATE_PREFIX):
        return module, None
    return module, getattr(sys.modules.get(module), "__file__", None)


def load_experiment(path: str | Path) -> Experiment:
    """Read and validate the experiment file *path* (relative paths inside resolve from its folder)."""
    path = Path(path)
    d = load_toml(path)
    return Experiment.from_dict(d, base_dir=path.parent, default_name=path.stem, path=path)


# --- helpers ----------------------------------------------------------------------------------------
def _platform_table(d: Any, base_dir: Path | None) -> tuple[dict, Path | None, str]:
    """The platform as a plain table (reading ``file`` if given), the folder its paths resolve from,
    and a description of where it came from."""
    d = check.table(d, "platform")
    check.known_keys(d, "platform", PLATFORM_KEYS)
    if "file" not in d:
        if "speed_unit" in d:
            raise ConfigError("platform.speed_unit", d["speed_unit"], "given only with a SimGrid platform.file (.xml)")
        if "availability" in d:
            raise ConfigError("platform.availability", "<given without platform.file>",
                              "given only with platform.file (inline nodes state their own availability)")
        return dict(d), base_dir, "inline"
    f = d["file"]
    if not isinstance(f, str) or not f:
        raise ConfigError("platform.file", f, "a path to a platform file (TOML, or SimGrid XML)")
    xml = f.lower().endswith(".xml")
    # speed_unit: SimGrid's flop/s per work unit; availability: background load on the file's nodes
    with_file = {"file", "speed_unit", "availability"} if xml else {"file", "availability"}
    if set(d) - with_file:
        extra = sorted(set(d) - with_file)[0]
        raise ConfigError(f"platform.{extra}", "<given with platform.file>",
                          "absent when platform.file is given (a platform is a file or inline tables"
                          + ("; speed_unit is for a SimGrid .xml file)" if extra == "speed_unit" and not xml else ")"))
    p = Path(f)
    if base_dir is not None and not p.is_absolute():
        p = base_dir / p
    if not p.is_file():
        raise ConfigError("platform.file", f, f"an existing platform file (looked for {p})")
    p = p.resolve()
    if xml:
        from dlbkit.model import simgrid

        # the SimGrid file becomes a platform table, so that a grid may vary it as a TOML platform's
        with check.renamed("speed_unit", "platform.speed_unit"):
            table = simgrid.read_table(p, speed_unit=d.get("speed_unit", simgrid.DEFAULT_SPEED_UNIT))
    else:
        table = load_toml(p)
    table.setdefault("name", p.stem)
    if "availability" in d:
        _overlay_availability(table, d["availability"], str(p))
    return table, p.parent, str(p)


def _overlay_availability(table: dict, given: Any, source: str) -> None:
    """Set the availability of the nodes of platform *table* (read from file *source*) that *given*
    names (``{node name: availability}``): a SimGrid file has no dlbkit availability, and a load
    study may keep one platform file under several loads. The value is checked with the platform."""
    given = check.table(given, "platform.availability")
    nodes = table.get("nodes")
    by_name = {n.get("name"): n for n in nodes if isinstance(n, dict)} if isinstance(nodes, list) else {}
    for name, value in given.items():
        if name not in by_name:
            raise ConfigError(f"platform.availability.{name}", name,
                              f"the name of a node of {source}: " + ", ".join(str(k) for k in by_name),
                              suggest=closest(name, [str(k) for k in by_name]))
        by_name[name]["availability"] = value


def _build_platform(d: dict, base_dir: Path | None, source: str) -> Platform:
    try:
        return Platform.from_dict(d, base_dir=base_dir)
    except ConfigError as e:
        where = "platform." if source == "inline" else f"platform file {source}: "
        raise ConfigError(f"{where}{e.field}", e.value, e.allowed) from None


def _files_resolved(d: dict, base_dir: Path | None) -> dict:
    """Workload table *d* with the file names of its family's ``file_keys`` (a stream's ``trace``) made
    relative to the experiment file's folder, as ``platform.file`` is (not to the working directory)."""
    if base_dir is None or not isinstance(d.get("kind"), str) or d["kind"] not in families.names():
        return d  # no file to resolve, or a kind that _workload names as unknown
    for key in families.get(d["kind"]).file_keys:
        f = d.get(key)
        if isinstance(f, str) and f and not Path(f).is_absolute():
            d[key] = str(base_dir / f)
    return d


def _workload(d: Mapping, path: str) -> Any:
    """The workload of table *d*: its ``kind`` names the family (default :data:`~dlbkit.families.registry.DEFAULT`),
    whose parser builds it."""
    d = check.table(d, path)
    family = families.get(d.get("kind", DEFAULT), f"{path}.kind")
    return family.parse(d, path)


def _balancers(raw: Any, platform: Platform, engine: dict, family: Family, workload: Any = None) -> list[BalancerSpec]:
    if not isinstance(raw, list) or not raw:
        raise ConfigError("balancers", raw, "a non-empty list of [[balancers]] tables")
    out: list[BalancerSpec] = []
    labels: dict[str, int] = {}
    for i, b in enumerate(raw):
        path = f"balancers[{i}]"
        b = check.table(b, path)
        check.known_keys(b, path, BALANCER_KEYS)
        name = check.required(b, "name", path)
        if not isinstance(name, str):
            raise ConfigError(f"{path}.name", name, f"a {' or '.join(family.kinds)} balancer for a {family.name} "
                              "workload: " + ", ".join(n for k in family.kinds for n in registry.names(k)))
        if name == NO_BALANCING and family.allow_none:  # the unbalanced reference run
            if b.get("params") or ("params" in b and not isinstance(b["params"], Mapping)):
                raise ConfigError(f"{path}.params", b["params"], f"none for {NO_BALANCING!r} (no balancing)")
            name, params = NO_BALANCING, {}
        else:
            name, params = _registered(b, name, path, family)
        eng = dict(check.table(b.get("engine", {}), f"{path}.engine"))
        chosen, options = _engine(family, {**engine, **eng}, platform, f"{path}.engine")
        if name != NO_BALANCING:
            family.check_kind(chosen, registry.get(name).kind, name, f"{path}.name")
            family.check_balancer(platform, registry.make(name, params), f"{path}.params", workload, options)
        own_info = None
        if "info" in b:
            own_info = dict(check.table(b["info"], f"{path}.info"))
            _info(own_info, family, f"{path}.info", chosen, platform)
        label = b.get("label", _default_label(name, params))
        if not isinstance(label, str) or not label.strip():
            raise ConfigError(f"{path}.label", label, "a non-empty string")
        if label in labels:
            raise ConfigError(f"{path}.label", label, f"unique across balancers (balancers[{labels[label]}] has it)")
        # its figures are saved as <kind>_<slug>.png: two labels of one slug would overwrite each other's
        clash = next((k for k in labels if slug(k) == slug(label)), None)
        if clash is not None:
            raise ConfigError(f"{path}.label", label, f"unique across balancers as a file name too (balancers"
                              f"[{labels[clash]}]'s {clash!r} is saved as {slug(clash)!r} too)")
        labels[label] = i
        out.append(BalancerSpec(label, name, params, eng, own_info))
    return out


def _registered(b: Mapping, name: str, path: str, family: Family) -> tuple[str, dict]:
    """The registry name and validated params of balancer entry *b*, of the kind *family* needs."""
    cls = registry.REGISTRY.get(name.lower())
    if cls is None or cls.kind not in family.kinds:  # a typo is answered as a wrong kind: with what fits
        extra = f", {NO_BALANCING}" if family.allow_none else ""
        fits = [n for k in family.kinds for n in registry.names(k)] + ([NO_BALANCING] if family.allow_none else [])
        raise ConfigError(f"{path}.name", name, f"a {' or '.join(family.kinds)} balancer for a {family.name} workload: "
                          + ", ".join(n for k in family.kinds for n in registry.names(k)) + extra,
                          suggest=closest(name, fits))
    params = dict(check.table(b.get("params", {}), f"{path}.params"))
    cls.check_param_names(params, f"{path}.params", repr(cls.name))
    try:
        registry.make(cls.name, params, f"{path}.name")
    except ConfigError as e:
        raise ConfigError(f"{path}.params ({e.field})", e.value, e.allowed) from None
    except TypeError as e:  # a constructor rejecting a value before validate() sees it
        raise ConfigError(f"{path}.params", params, f"parameters {cls.name!r} accepts ({e})") from None
    return cls.name, params


def _engine(family: Family, table: Mapping, platform: Platform, path: str) -> tuple[Engine, dict]:
    """The engine an ``[engine]`` table (with a balancer's own keys over it) names with ``name`` (absent:
    the family's default), and the table's other keys, its options, checked against that engine."""
    options = dict(table)
    engine = family.engine_named(options.pop(ENGINE_NAME, None), f"{path}.{ENGINE_NAME}")
    engine.validate(options, platform, path)
    return engine, options


def _info(d: dict, family: Family, path: str, engine: Engine, platform: Platform) -> None:
    """An ``[info]`` table: *engine* must take an information model, and *d* must build one that can
    keep the platform's nodes' tables (checked here, before any run); an engine that takes ``info``
    among its options checks it there too (a model it refuses)."""
    n_nodes = platform.n_nodes
    if "info" not in engine.api_options:
        takes = [f.name for f in families.FAMILIES.values() if "info" in f.engine.api_options]
        raise ConfigError(path, d, f"absent: the {family.name} family's {engine.name} engine has no "
                          "information layer (families whose engine has one: " + (", ".join(takes) or "none") + ")")
    info.resolve_for(d, path, n_nodes)
    if "info" in engine.options and engine.check is not None:
        with check.renamed("engine.info", path):
            engine.check({"info": d}, platform, "engine")


def _default_label(name: str, params: Mapping) -> str:
    if not params:
        return name
    return f"{name}(" + ", ".join(f"{k}={v}" for k, v in params.items()) + ")"


def _grid(raw: Any) -> dict[str, list]:
    raw = check.table(raw, "grid")
    grid: dict[str, list] = {}
    paths: dict[str, list] = {}
    for key, values in raw.items():
        if isinstance(values, Mapping):  # an unquoted dotted key: [grid] workload.items = [...]
            raise ConfigError(f"grid.{key}", values, 'a list under a quoted dotted key, e.g. "workload.items" = [..]')
        root = key.split(".", 1)[0]
        if root not in GRID_ROOTS or "." not in key:
            raise ConfigError(f"grid.{key}", "<key>", "a dotted key starting with " +
                              ", ".join(f"{r}." for r in GRID_ROOTS) + ' (e.g. "workload.items")')
        if not isinstance(values, list) or not values:
            raise ConfigError(f"grid.{key}", values, "a non-empty list of values")
        seen: dict = {}
        for j, v in enumerate(values):  # a value twice ran its point twice: one key in results.csv, twice the runs
            c = _same(v)
            if c in seen:
                raise ConfigError(f"grid.{key}[{j}]", v, f"a value not given before in the list (it is "
                                  f"grid.{key}[{seen[c]}])")
            seen[c] = j
        steps = _parse_path(key, f"grid.{key}")
        for other, its in paths.items():  # two keys setting one value: results.csv would name the one overridden
            if steps[:len(its)] == its or its[:len(steps)] == steps:
                raise ConfigError(f"grid.{key}", "<key>", f"a value no other grid key sets (grid.{other} sets it, "
                                  "or the table or list holding it)")
        paths[key] = steps
        grid[key] = values
    return grid


def _same(v: Any) -> Any:
    """*v* as a hashable value equal for equal settings: 1 and 1.0 alike, tables whatever their key
    order, but true apart from 1 (TOML tells them apart, and so do the checks)."""
    if isinstance(v, bool) or isinstance(v, str):
        return (type(v).__name__, v)
    if isinstance(v, list):
        return ("list", tuple(_same(x) for x in v))
    if isinstance(v, Mapping):
        return ("table", frozenset((k, _same(x)) for k, x in v.items()))
    return ("value", v)


_SEGMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)((?:\[\d+\])*)$")


def _parse_path(key: str, field: str) -> list:
    steps: list = []
    for seg in key.split("."):
        m = _SEGMENT.match(seg)
        if not m:
            raise ConfigError(field, key, "a dotted key of names and [index] parts, e.g. platform.nodes[3].speed")
        steps.append(m.group(1))
        steps.extend(int(i) for i in re.findall(r"\[(\d+)\]", m.group(2)))
    return steps


def _set_dotted(tables: dict, key: str, value: Any) -> None:
    steps = _parse_path(key, f"grid.{key}")
    cur: Any = tables
    for s, nxt in zip(steps[:-1], steps[1:]):
        if isinstance(s, int):
            if not isinstance(cur, list) or s >= len(cur):
                raise ConfigError(f"grid.{key}", s, "an index into an existing list of the experiment")
            cur = cur[s]
        else:
            if not isinstance(cur, dict):
                raise ConfigError(f"grid.{key}", s, "a key into a table of the experiment")
            if s not in cur:
                cur[s] = [] if isinstance(nxt, int) else {}
            elif not isinstance(cur[s], (dict, list)):  # e.g. cost = 1.0 swept as cost.high
                raise ConfigError(f"grid.{key}", cur[s], f"a table at {s!r} to set a key in")
            cur = cur[s]
    last = steps[-1]
    if isinstance(last, int):
        if not isinstance(cur, list) or last >= len(cur):
            raise ConfigError(f"grid.{key}", last, "an index into an existing list of the experiment")
    elif not isinstance(cur, dict):
        raise ConfigError(f"grid.{key}", last, "a key into a table of the experiment")
    cur[last] = value


def _fingerprint(platform: dict, workload: dict, engine: dict, b: BalancerSpec, seed: int,
                 files: dict | None = None) -> str:
    """A short hash of everything that determines one run's outcome (guards resumed sweeps against
    reusing rows produced by a different configuration): with *files*, the digests of the workload's files
    (a platform file is already in *platform*, read into its table) and the family's other inputs (a
    generator library's version: :attr:`~dlbkit.families.registry.Family.inputs`)."""
    d = {"platform": platform, "workload": workload, "engine": engine, "balancer": b.name, "params": b.params,
         "seed": seed}
    if files:  # absent without files: an experiment without one keeps its fingerprints of before
        d["files"] = files
    blob = json.dumps(d, sort_keys=True, default=_jsonable)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _file_digests(workload: dict, keys: tuple, read: dict) -> dict:
    """{key: sha256 of the file's bytes} for the workload's file keys that name a file (a workflow, a log), so
    that a file edited in place between two runs of a sweep gives its rows a new fingerprint (its name alone
    would not); *read* caches a path's digest."""
    out = {}
    for key in keys:
        f = workload.get(key)
        if isinstance(f, str) and f:
            if f not in read:
                try:
                    read[f] = hashlib.sha256(Path(f).read_bytes()).hexdigest()
                except OSError:  # a missing file was named when the experiment was read
                    read[f] = None
            out[key] = read[f]
    return out


def _jsonable(x: Any) -> Any:
    if isinstance(x, Real):
        return float(x)
    return str(x)
