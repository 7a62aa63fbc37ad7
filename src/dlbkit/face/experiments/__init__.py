"""Experiments: sweeps of platform × workload × balancers × grid × repetitions, their summaries
with 95% confidence intervals, plots and an HTML report.

Typical use (the CLI's ``dlbkit simulate`` does exactly this)::

    from dlbkit.face.experiments import format_table, format_verdict, load_experiment, run_sweep, summarise, write_outputs
    exp = load_experiment("demo.toml")
    sweep = run_sweep(exp, "out/demo", jobs=2)
    summary = summarise(sweep.rows)
    print(format_table(summary, family=exp.family))  # the family's columns, main metric first
    print("\n".join(format_verdict(summary, exp.family.bar_metrics[0])))
    write_outputs(sweep, summary=summary, jobs=2)  # summary.csv, the figures, report.html
"""

from dlbkit.plots import efficiency_bars, gantt, makespan_bars, metric_bars, work_over_time
from dlbkit.face.experiments.figures import save_all
from dlbkit.face.experiments.outputs import write_outputs
from dlbkit.face.experiments.report import write_report
from dlbkit.face.experiments.runner import Sweep, read_results, run_sweep
from dlbkit.face.experiments.spec import BalancerSpec, Experiment, RunSpec, load_experiment, run_seed
from dlbkit.face.experiments.summary import Stat, format_table, format_verdict, mean_ci, summarise, write_summary_csv

__all__ = [
    # specification
    "Experiment", "BalancerSpec", "RunSpec", "load_experiment", "run_seed",
    # running
    "Sweep", "run_sweep", "read_results",
    # summarising
    "Stat", "mean_ci", "summarise", "format_table", "format_verdict", "write_summary_csv",
    # plots and report
    "gantt", "work_over_time", "makespan_bars", "efficiency_bars", "metric_bars", "save_all", "write_report", "write_outputs",
]
