"""The SPMD family: a decomposed domain, iterate and exchange boundaries; data points move (000)."""

from __future__ import annotations

from dlbkit.errors import ConfigError
from dlbkit.model.platform import Platform
from dlbkit.families.spmd.model.workload import Spmd, hnow_from_platform, spmd_from_dict
from dlbkit.families.spmd.model.view import SpmdView
from dlbkit.families.spmd.model.metrics import OWN_METRICS
from dlbkit.families.spmd.model.metrics import metrics as spmd_metrics
from dlbkit.families.spmd.sim.platform import SpmdOptions, simulate_spmd_platform
import dlbkit.families.spmd.balancers  # noqa: F401  (registers the family's balancers)
from dlbkit.families.registry import Engine, Family, Replay, deferred, register
from dlbkit.families.spmd.runtime import recording
from dlbkit.runtime.record import Recording

__all__ = ["FAMILY", "describe"]


def check_fit(platform: Platform, workload: Spmd) -> None:
    """The workload must fit the platform (topology, one core per node, one count per node) before
    anything runs; errors name the platform's field by its path in an experiment."""
    try:
        hnow_from_platform(platform, workload)
    except ConfigError as e:
        field = e.field if e.field.startswith("workload") else f"platform.{e.field}"
        raise ConfigError(field, e.value, e.allowed) from None


def describe(w: Spmd) -> str:
    pts = (f"{w.points:,} DP per node" if isinstance(w.points, int) else
           "DP per node " + ", ".join(f"{p:,}" for p in w.points))
    return (f"pipelined SPMD loop (Osman 2003): {w.loops:,} loops, {pts}, {w.boundary:,g} DP boundary per "
            f"neighbour per loop, K = {w.boundary_k:g}, CPU noise ±{w.noise:g}, "
            f"{w.bytes_per_point:g} B per DP, layout {w.layout or 'from the platform'}; availability is "
            "read on the loop clock (time = loop number)")


def sample_view() -> SpmdView:
    """3 workstations of speeds 1, 2, 3 holding 100, 200, 300 points."""
    return SpmdView(3, [100, 200, 300], [1.0, 2.0, 3.0], [100.0] * 3, [1e3] * 3, [1e-3] * 3, [1e6] * 3)


FAMILY = register(Family(
    name="spmd",
    summary="a domain split in contiguous blocks; every loop each node computes its block and exchanges "
            "boundaries, and data points move between neighbours",
    source="000 (Osman 2003)",
    workloads=(Spmd,),
    view=SpmdView,
    kind="repartition",
    engines=(Engine("pipelined", "vectorised pipelined-SPMD rounds on non-dedicated workstations (CPU noise, "
                    "memory and swap, links, disturbances)",
                    "dlbkit.families.spmd.sim.platform.simulate_spmd_platform", simulate_spmd_platform, SpmdOptions),),
    run=deferred("dlbkit.families.spmd.face.run", "spmd"),
    runtime="dlbkit.spmd, dlbkit.run_spmd",
    metrics=spmd_metrics,
    own_metrics=OWN_METRICS,
    own_metrics_after="tasks_moved",  # where they have always been among results.csv's columns
    metric_names=("makespan", "imbalance", "idle_share", "steps_to_balance", "dp_moved", "loops_to_steady"),
    metric_text={"makespan": "time the last loop ended (s)",
                 "imbalance": "max / mean of the nodes' loop times over the last measurement window",
                 "idle_share": "share of node time outside its loops (waiting for a neighbour's boundary), "
                               "up to the makespan"},
    figures=deferred("dlbkit.families.spmd.face.plots", "figures"),
    plots={"loop_times": deferred("dlbkit.families.spmd.face.plots", "spmd_loop_times"),
           "points": deferred("dlbkit.families.spmd.face.plots", "spmd_points")},
    figure_kinds=("looptime", "points"),
    figure_captions={"looptime": ("loop time", "Pipelined SPMD: loop time (busy seconds: compute, swap, boundary "
                                  "exchange and transfers) per workstation over the loops,"),
                     "points": ("data points", "and the data points each holds; dotted lines mark loops that ended in a "
                                "balancing transfer.")},
    bar_metrics=("makespan", "dp_moved", "steps_to_balance"),
    parse=spmd_from_dict,
    describe=describe,
    allow_none=True,
    check_fit=check_fit,
    sample_view=sample_view,
    progress_unit="loops",
    availability_on_run_clock=False,  # an SPMD run reads availability on its loop clock
    recording=Recording(legacy_mechanisms=("spmd",), restore=recording.restore),
    replay=Replay(deferred("dlbkit.families.spmd.face.replay", "replay_spmd"),
                  recorded_by="an SPMD run (dlbkit.spmd, run_spmd)", noun="SPMD",
                  report=deferred("dlbkit.families.spmd.face.replay", "report"), options=("latency",)),
))
