"""The family registry: each workload family declared once (the registry itself; the families'
declarations are the sibling modules, imported by the package).

A *family* is a kind of parallel program (DESIGN.md's table): divisible loops, task trees, SPMD
domains, task graphs and job streams. Its declaration says everything the face layer needs
to serve it: the workload type and how an experiment file's ``[workload]`` table builds one, the view
its balancers read, the balancer kind that decides for it (and whether "no balancing" is a valid
reference run), its simulation engines (the first is the default) with their option schemas, its
real-run entry point, its metrics and its plots. :func:`dlbkit.simulate`, experiment files, the
report, the plots and ``dlbkit families`` dispatch through this registry and nothing else, so a new
family is its own modules plus one :func:`register` call (a module in this package, imported at the
package's ``__init__``).
"""

from __future__ import annotations

import importlib
import inspect
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping

from dlbkit.errors import ConfigError, closest
from dlbkit.model import check
from dlbkit.model.description import FileKind
from dlbkit.model.metrics import METRICS
from dlbkit.plugins import Registry
from dlbkit.sim.options import EngineOptions

if TYPE_CHECKING:
    from dlbkit.runtime.record import Recording

__all__ = ["Engine", "Replay", "Family", "deferred", "register", "get", "names", "of", "FAMILIES", "PACKAGES", "DEFAULT",
           "metrics_table", "declared_in", "declaring_module",
           "GANTT_CAPTION"]


@dataclass(frozen=True)
class Engine:
    """One simulation engine of a family.

    *run* ``(platform, workload, balancer, seed=..., **options)`` returns the run's trace; *kinds* are
    the balancer kinds it runs (empty: the family's :attr:`Family.kind`; :meth:`Family.kinds_of`).
    *options* is the engine's options class (a :class:`~dlbkit.sim.options.EngineOptions`, the one
    declaration of them), from which follow :attr:`schema` (that class), the keys an experiment file's
    ``[engine]`` table may set with their meaning (*options* then reads as that mapping, name → meaning),
    *check* ``(options, platform, path)`` (the class's :meth:`~dlbkit.sim.options.EngineOptions.check_dict`,
    a ConfigError naming ``path.key``) and :attr:`api_options`, every keyword :func:`dlbkit.simulate` passes
    to *run* (the Python-only ones too, e.g. an explicit cost array). An engine declared elsewhere may
    still give *options* as a mapping and *check* as a function; its keywords are then *run*'s.
    *on_platform* False marks an engine with a cost model of its own that does not take a
    :class:`~dlbkit.model.platform.Platform` (the Cray T3D superstep model of 001): it is listed, and
    called directly, but not from simulate or experiments.
    """

    name: str
    summary: str
    entry: str  #: the engine's public function, for the docs and ``dlbkit families``
    run: Callable[..., Any] | None
    options: Mapping[str, str] | type[EngineOptions] = field(default_factory=dict)
    check: Callable[[Mapping, Any, str], None] | None = None
    on_platform: bool = True
    kinds: tuple[str, ...] = ()  #: the balancer kinds it accepts; empty: the family's kind
    #: the options class (given as *options*); None: an engine whose options are a mapping and *run*'s keywords
    schema: type[EngineOptions] | None = None

    def __post_init__(self):
        if isinstance(self.options, type):
            if not issubclass(self.options, EngineOptions):
                raise TypeError(f"engine {self.name!r}: options must be an EngineOptions class or a mapping")
            object.__setattr__(self, "schema", self.options)
        if self.schema is not None:
            object.__setattr__(self, "options", self.schema.help())
            if self.check is None:
                object.__setattr__(self, "check", self.schema.check_dict)

    @property
    def api_options(self) -> list[str]:
        """Keywords :func:`dlbkit.simulate` passes through to this engine."""
        if self.schema is not None:
            return self.schema.names()
        if self.run is None:
            return []
        sig = inspect.signature(self.run)
        skip = {"platform", "workload", "balancer", "seed"}
        return [n for n, p in sig.parameters.items() if p.kind == p.KEYWORD_ONLY and n not in skip]

    def validate(self, options: Mapping, platform: Any, path: str = "engine") -> dict:
        """*options* checked: known keys only (an experiment's [engine] keys), then the engine's check."""
        d = check.table(options, path)
        check.known_keys(d, path, set(self.options))
        if self.check is not None:
            self.check(d, platform, path)
        return dict(d)


def deferred(module: str, name: str) -> Callable[..., Any]:
    """*module*'s *name*, imported when first called: a family's declaration names its real run, replay and advice
    without loading the runtime or the replay model when the registry discovers it."""
    def call(*args, **kwargs):
        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__module__ = module  # whose code it runs: a figure's digest covers the module of the family's figures
    call.__doc__ = f"``{module}.{name}``, imported on first call."
    return call


@dataclass(frozen=True)
class Replay:
    """How a family replays its real runs' recordings in its simulator (:func:`dlbkit.replay`, ``dlbkit replay``).

    *run* ``(trace, balancer, params, seed, **options)`` returns a :class:`~dlbkit.families.replay.ReplayResult`;
    *options* are the keywords of :func:`dlbkit.replay` it takes (a keyword it does not take, given, is a
    ConfigError naming the families that do); *recorded_by* says what records such a run (with its article: "a loop (dlbkit.map, ...)") and *noun* how an
    error names the recording ("loop", "task-graph"), for the errors that list what can be replayed.

    *report* ``(trace, named, *, seed, source, label, **flags)`` is ``dlbkit replay``'s body for the family: the
    recorded balancer and each ``(name, params)`` of *named* replayed, as a
    :class:`~dlbkit.families.replay.ReplayReport` (the ``--json`` object, and the lines and table of the text);
    *source* is the recording as the user named it, *label* ``(name, params)`` how the command line writes a
    balancer. *cli_flags* are the command's family-specific flags it takes, by their keyword in *flags*
    (``"model"`` for ``--model``): one given for a recording whose family does not declare it is a ConfigError
    naming the recordings it applies to."""

    run: Callable[..., Any]
    recorded_by: str
    noun: str
    report: Callable[..., Any]
    options: tuple[str, ...] = ()
    cli_flags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Family:
    """A workload family: everything the face layer needs to simulate, report and plot it.

    Hooks (all plain functions of the family's own modules):

    * *parse* ``(table, path)``: an experiment's ``[workload]`` table (``kind`` = the family's name)
      → the workload object, raising ConfigError naming ``path.field``;
    * *metrics* ``(trace)``: the metrics of one run, those of METRICS it fills and its :attr:`own_metrics`
      (NaN, or left out, where a metric does not apply);
    * *figures* ``(trace, title)``: the plots of one run, kind → matplotlib Figure (the report's; a family's
      are in its ``face/plots.py``, named with :func:`deferred` so that matplotlib is imported only to draw);
    * *describe* ``(workload)``: one sentence for the report;
    * *per_repetition* ``(workload, table, seed)``: the workload of one repetition (a random tree
      without a seed of its own is drawn anew per repetition; others are returned unchanged);
    * *check_fit* ``(platform, workload)``: does the workload fit the platform (raise ConfigError);
    * *check_balancer* ``(platform, balancer, path, workload, options)``: does a built balancer fit the
      platform, the workload and the engine options of its runs (raise ConfigError naming *path*): an
      experiment file's checks that need the node count (``power-of-d`` with d > n without replacement,
      ``ldsv``'s ``server``), the workload's size (``max-k1-sum``'s ``capacity``) or an option
      (``ldsv``'s ``server`` not the tree's ``start_node``), so they are one line and exit 2 rather than
      a failed run;
    * *sample_view* ``()``: a small view of the family (a few nodes), on which the balancer contract
      tests start every balancer of its kind (``tests/balancers/test_contract.py``);
    * *files*: the kinds of file its readers read, each a :class:`~dlbkit.model.description.FileKind` (a name,
      its suffixes and ``describe(path)`` → what ``dlbkit describe FILE`` prints, or None for a file of such a
      suffix that is not of that kind); empty: ``dlbkit describe`` reads no file of the family's.

    *metric_text*: the family's wording of the METRICS whose meaning it narrows (a tree's makespan is
    when its last task ended, not a chunk); the report reads :meth:`describe_metric`, which falls back
    to METRICS' family-neutral text. *table_metrics*: the columns of the terminal table, the main metric
    (``bar_metrics[0]``) first, in order of interest (empty: *metric_names*); the rest stay in
    summary.csv and the report.

    *runtime* None: the family has no real run yet (``dlbkit families`` prints "none yet").
    *gantt_legend*: the Gantt legend's labels that differ from :data:`dlbkit.plots.GANTT_LEGEND` (keys
    ``busy``, ``wait`` = the stretch from ``t_ask`` to ``t_start``, ``idle``), as the family's trace
    means them; empty: those labels. *progress_unit*: what ``done`` and ``total`` of the engines'
    ``progress(done, total)`` count (the bar's unit).
    """

    name: str
    summary: str
    source: str
    workloads: tuple[type, ...]
    view: type
    kind: str  #: the balancer kind that decides for this family (its default engine's; others: Engine.kinds)
    engines: tuple[Engine, ...]
    runtime: str | None  #: the real-run entry point(s), e.g. "dlbkit.map, dlbkit.run_map"; None: none yet
    metrics: Callable[[Any], dict]
    metric_names: tuple[str, ...]  #: the metrics this family fills, of METRICS and its own (the rest are NaN)
    figures: Callable[[Any, str], dict]
    figure_kinds: tuple[str, ...]
    bar_metrics: tuple[str, ...]  #: metrics the report draws as bars, per balancer
    parse: Callable[[Mapping, str], Any]
    describe: Callable[[Any], str]
    allow_none: bool = False  #: "none" (no balancing) is a valid reference run
    master_worker: bool = False  #: one node is a master that hands out work (the report's roles)
    per_repetition: Callable[[Any, Mapping, int], Any] = lambda workload, table, seed: workload
    check_fit: Callable[[Any, Any], None] = lambda platform, workload: None
    check_balancer: Callable[..., None] = lambda platform, balancer, path, workload=None, options=None: None
    #: keys of an experiment's ``[workload]`` table that name a file, read relative to the experiment
    #: file's folder as ``platform.file`` is (a stream's ``trace``)
    file_keys: tuple[str, ...] = ()
    #: ``(table) -> {name: version}``: what else than the table and its files decides the workload an
    #: experiment's ``[workload]`` table gives (a generator library's version), for the runs' fingerprints
    inputs: Callable[[Mapping], Mapping] = lambda table: {}
    sample_view: Callable[[], Any] | None = None
    gantt_legend: Mapping[str, str] = field(default_factory=dict)
    #: what the engines' ``progress(done, total)`` counts, for the bar (items, tasks, loops)
    progress_unit: str = "items"
    #: the plots a :class:`~dlbkit.families.result.Result` of this family draws besides every family's (its Gantt
    #: chart and work done): name → ``(trace, ax=None, **kw)`` → Figure, drawn by ``Result.plot_<name>``
    plots: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    #: the family's own metrics, those no other family fills: name → (description, "lower" or "higher": which
    #: direction is better), as METRICS holds the shared ones; :func:`metrics_table` holds them all
    own_metrics: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    #: the metric of METRICS after which the own metrics go in :func:`metrics_table` (the columns of
    #: results.csv, the rows of summary.csv); empty: after all of them
    own_metrics_after: str = ""
    #: metric name → what it means in this family, where METRICS' general wording does not say it
    metric_text: Mapping[str, str] = field(default_factory=dict)
    #: the terminal table's columns, main metric first (empty: metric_names)
    table_metrics: tuple[str, ...] = ()
    #: figure kind → (label, caption): the label names a run's image of that kind (its alt text), the caption
    #: (a sentence or a part of one, `code` in backticks) says in the report what the images of that kind show;
    #: a kind without an entry is labelled with its own name and has no caption
    figure_captions: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    #: the real run's entry (``dlbkit.map``'s for a loop: the user's function on real processes), called through
    #: the registry as the user calls it; None: no real run yet (*runtime* names it for the listing)
    run: Callable[..., Any] | None = None
    #: how its recordings replay in its simulator (:func:`dlbkit.replay`); None: they do not
    replay: Replay | None = None
    #: how its recordings are read: its own fields checked, what older ones lack rebuilt, the mechanisms they
    #: named before recordings named their family (:class:`dlbkit.runtime.record.Recording`); None: as any trace
    recording: Recording | None = None
    #: ``(trace, **options)`` → the balancers ranked for another run of a recording (:func:`dlbkit.advise`);
    #: None: the family gives no advice
    advise: Callable[..., Any] | None = None
    #: the kinds of file the family reads, for ``dlbkit describe`` (:mod:`dlbkit.face.describe`); empty: none
    files: tuple[FileKind, ...] = ()
    #: the trace's times are on the clock the platform's availabilities are read on, so an availability that
    #: changes only after the makespan had no effect (warned); False: read on another clock (SPMD's loops)
    availability_on_run_clock: bool = True

    def __post_init__(self):
        unknown = sorted(set(self.figure_captions) - set(self.figure_kinds))
        if unknown:
            raise TypeError(f"family {self.name!r}: figure_captions names {unknown}, not among its figure_kinds")
        extra = set(self.gantt_legend) - set(GANTT_PARTS)
        if extra:
            raise TypeError(f"family {self.name!r}: gantt_legend keys {sorted(extra)} are not among {GANTT_PARTS}")
        odd = [k for k, v in self.figure_captions.items()
               if not (isinstance(v, tuple) and len(v) == 2 and all(isinstance(s, str) for s in v))]
        if odd:
            raise TypeError(f"family {self.name!r}: figure_captions of {odd} must each be a (label, caption) pair of "
                            "strings")
        clash = sorted(set(self.own_metrics) & set(METRICS))
        if clash:
            raise TypeError(f"family {self.name!r}: own_metrics {clash} are among the shared METRICS")
        if self.own_metrics_after and self.own_metrics_after not in METRICS:
            raise TypeError(f"family {self.name!r}: own_metrics_after {self.own_metrics_after!r} is not among METRICS")
        odd = [k for k in self.files if not isinstance(k, FileKind)]
        if odd:
            raise TypeError(f"family {self.name!r}: files must be FileKind objects (got {odd})")
        unknown = [m for m in self.metric_names if m not in METRICS and m not in self.own_metrics]
        if unknown:
            raise TypeError(f"family {self.name!r}: metric_names {unknown} are neither among METRICS nor its "
                            "own_metrics")
        for what, names in (("metric_text", self.metric_text), ("table_metrics", self.table_metrics)):
            unknown = [m for m in names if m not in self.metric_names]
            if unknown:
                raise TypeError(f"family {self.name!r}: {what} names {unknown}, not among its metric_names")
        # the table leads with the metric the verdict line ranks by and the bar charts draw first
        if self.bar_metrics and self.columns and self.columns[0] != self.bar_metrics[0]:
            raise TypeError(f"family {self.name!r}: its table's first column is {self.columns[0]!r}; it must be "
                            f"its main metric, bar_metrics[0] ({self.bar_metrics[0]!r})")

    def describe_metric(self, name: str) -> str:
        """What metric *name* means in this family: its own wording, else :func:`metrics_table`'s (the name
        itself for a metric the table does not list)."""
        return self.metric_text.get(name) or metrics_table().get(name, (name, ""))[0]

    @property
    def columns(self) -> tuple[str, ...]:
        """The terminal table's metrics, main one first (:attr:`table_metrics`, else :attr:`metric_names`)."""
        return self.table_metrics or self.metric_names

    @property
    def engine(self) -> Engine:
        """The default engine (the one :func:`dlbkit.simulate` and experiment files use unless told)."""
        return self.engines[0]

    def engine_named(self, name: Any = None, field: str = "engine.name") -> Engine:
        """The engine called *name* (None: the default), one that runs on a platform; a ConfigError
        naming *field* lists them."""
        runs = [e for e in self.engines if e.on_platform and e.run is not None]
        if name is None:
            return self.engine
        for e in runs:
            if e.name == name:
                return e
        raise ConfigError(field, name, f"an engine of the {self.name} family: " + ", ".join(e.name for e in runs),
                          suggest=closest(name, [e.name for e in runs]))

    def kinds_of(self, engine: Engine) -> tuple[str, ...]:
        """The balancer kinds *engine* accepts (its own declaration, else the family's kind)."""
        return engine.kinds or (self.kind,)

    @property
    def kinds(self) -> tuple[str, ...]:
        """Every balancer kind some engine of the family accepts, the family's kind first."""
        out = [self.kind]
        for e in self.engines:
            out += [k for k in self.kinds_of(e) if k not in out]
        return tuple(out)

    def check_kind(self, engine: Engine, kind: str, name: str, field: str = "balancer") -> None:
        """Raise a ConfigError naming *field* unless *engine* accepts balancer *name* of *kind*; it
        names the kinds the engine accepts and the engines that would take *name*."""
        accepted = self.kinds_of(engine)
        if kind in accepted:
            return
        others = [e.name for e in self.engines if e.on_platform and kind in self.kinds_of(e)]
        hint = f" ({name!r} is a {kind} balancer: the " + " or ".join(repr(o) for o in others) + " engine runs it)" \
            if others else ""
        raise ConfigError(field, name, f"a balancer of kind {' or '.join(accepted)} for the {self.name} family's "
                          f"{engine.name} engine{hint}")

    def as_dict(self) -> dict:
        """What ``dlbkit families --json`` prints for this family."""
        return {"name": self.name, "summary": self.summary, "source": self.source,
                "workload": [f"{t.__module__}.{t.__qualname__}" for t in self.workloads],
                "view": f"{self.view.__module__}.{self.view.__qualname__}", "balancer_kind": self.kind,
                "no_balancing_reference": self.allow_none,
                "balancer_kinds": list(self.kinds),
                "engines": [{"name": e.name, "summary": e.summary, "entry": e.entry, "default": i == 0,
                             "balancer_kinds": list(self.kinds_of(e)),
                             "on_platform": e.on_platform, "options": dict(e.options),
                             "api_options": e.api_options} for i, e in enumerate(self.engines)],
                "runtime": self.runtime, "metrics": list(self.metric_names), "plots": list(self.figure_kinds),
                "files": [k.listed for k in self.files]}


#: the built-in family packages (``dlbkit.families.<name>``), in the order ``dlbkit families`` lists them; a family is
#: named as its package. Adding a built-in family is adding its package and its name here.
PACKAGES = ("divisible", "tree", "spmd", "graph", "stream")

#: the family of an experiment's ``[workload]`` table that names no ``kind`` (experiment files began with loops)
DEFAULT = "divisible"

#: the report's label and caption of the shared Gantt chart (:func:`dlbkit.plots.gantt`) with its default legend, for a
#: family's ``figure_captions``
GANTT_CAPTION = ("Gantt", "Gantt chart: a bar per chunk; orange = waiting for work, blank = idle, red shade = "
                          "background load.")

#: the parts of a Gantt chart a family may relabel (:data:`dlbkit.plots.GANTT_LEGEND`'s keys)
GANTT_PARTS = ("busy", "wait", "idle")

#: name → Family, in the order of :data:`dlbkit.families.PACKAGES` (then any registered from elsewhere);
#: complete on first read (:mod:`dlbkit.plugins`)
FAMILIES: dict[str, Family] = Registry("dlbkit.families", order=lambda reg: _listing_order(reg))


def _listing_order(reg) -> list[str]:
    return [name for name in PACKAGES if dict.__contains__(reg, name)]


#: name → the module that registered each family (:func:`declared_in`, :func:`declaring_module`)
_DECLARED_IN: dict[str, str] = {}


def register(family: Family, module: str | None = None) -> Family:
    """Add *family* to the registry and return it. *module* is the module that declares it, which a process
    that did not fork from this one imports to have it registered (:func:`declared_in`); by default the
    caller's, as when ``FAMILY = register(Family(...))`` stands at a module's top level (a helper that calls
    ``register`` for its caller passes the caller's module)."""
    if module is None:
        module = sys._getframe(1).f_globals.get("__name__", "")
    builtin = module.startswith(f"{__package__}.")
    if not builtin:
        FAMILIES.discover()  # a family of the user's meets the built-in ones first, whatever was imported before
    if FAMILIES.raw_get(family.name) is not None:
        raise TypeError(f"workload family {family.name!r} is registered twice")
    for other in dict.values(FAMILIES):
        clash = sorted(set(family.own_metrics) & set(other.own_metrics))
        if clash:
            raise TypeError(f"family {family.name!r}: own_metrics {clash} are the {other.name} family's already")
    FAMILIES[family.name] = family
    if family.recording is not None:  # the recording reader, below the families, reads the family's rules there
        from dlbkit.runtime.record import RECORDINGS

        RECORDINGS[family.name] = family.recording
    _DECLARED_IN[family.name] = module
    return family


def metrics_table(family: Family | None = None) -> dict[str, tuple[str, str]]:
    """Every metric a run may have, name → (description, which direction is better): METRICS (the shared ones)
    with every registered family's :attr:`~Family.own_metrics` placed after its ``own_metrics_after`` (families
    in the registry's order). With *family*: the metrics of that family's experiments, whose order is the
    columns of results.csv and the rows of summary.csv: the built-in families' and, for a family declared
    elsewhere, its own — not another such family's, so a built-in experiment's columns do not depend on what
    else the process imported."""
    after: dict[str, list[Family]] = {}
    for fam in FAMILIES.values():
        if family is not None and fam is not family and fam.name not in PACKAGES:
            continue
        after.setdefault(fam.own_metrics_after, []).append(fam)
    out: dict[str, tuple[str, str]] = {}
    for name, entry in METRICS.items():
        out[name] = entry
        for fam in after.get(name, []):
            out.update(fam.own_metrics)
    for fam in after.get("", []):
        out.update(fam.own_metrics)
    return out


def declared_in(name: str) -> str | None:
    """The module that registered family *name* when it is declared outside dlbkit (a user's, the test-only
    one), which a process that did not fork from the caller (a sweep's spawned, MPI or Dask worker) imports
    to have it registered, as it imports the module of a balancer of the user's own; None for a built-in
    family (discovery finds it) or one registered from ``__main__`` (no other process can import that)."""
    module = _DECLARED_IN.get(name)
    return None if not module or module == "__main__" or module.startswith(f"{__package__}.") else module


def declaring_module(name: str) -> str | None:
    """The module that registered family *name* (a built-in family's ``face/family.py`` too), e.g. for a
    digest of the code its figures read."""
    return _DECLARED_IN.get(name)


def names() -> list[str]:
    return list(FAMILIES)


def get(name: Any, field: str = "family") -> Family:
    """The family called *name*; a ConfigError naming *field* lists the registered ones."""
    if isinstance(name, Family):
        return name
    if isinstance(name, str) and name in FAMILIES:
        return FAMILIES[name]
    raise ConfigError(field, name, "a workload family: " + ", ".join(FAMILIES), suggest=closest(name, FAMILIES))


def of(workload: Any, field: str = "workload") -> Family:
    """The family whose workload type *workload* is."""
    for fam in FAMILIES.values():
        if isinstance(workload, fam.workloads):
            return fam
    allowed = ", ".join(t.__name__ for fam in FAMILIES.values() for t in fam.workloads)
    raise ConfigError(field, type(workload).__name__, f"a workload of a registered family ({allowed})")
