"""What `dlbkit simulate` prints and the report says, per workload family: the terminal table leads with
the family's main metric and keeps to TABLE_WIDTH, leaving the rest to summary.csv and the report; every
grid point gets a verdict line; the report words each metric as the family means it."""

import csv
import math
from html import escape

import pytest

from dlbkit import families
from dlbkit.face.experiments import Experiment, format_table, format_verdict, run_sweep, summarise, write_report
from dlbkit.face.experiments.summary import TABLE_WIDTH, Stat, format_cell


def stats(table: dict[str, dict[str, tuple[float, float]]], point: str = "", n: int = 3) -> list[Stat]:
    """Stat rows from {label: {metric: (mean, ci95)}}, in the order given."""
    return [Stat(label, label.split(" ")[0], point, m, n, mean, 1.0, ci)
            for label, row in table.items() for m, (mean, ci) in row.items()]


# --- the columns -----------------------------------------------------------------------------------------------
def test_every_family_leads_its_table_with_its_main_metric_and_shows_only_what_it_fills():
    for name in families.names():
        fam = families.get(name)
        assert fam.columns[0] == fam.bar_metrics[0], name
        assert set(fam.columns) <= set(fam.metric_names), name
        assert len(set(fam.columns)) == len(fam.columns), name


def test_a_family_declaring_a_column_or_a_wording_it_does_not_fill_is_refused():
    fam = families.get("graph")
    with pytest.raises(TypeError, match=r"family 'x': table_metrics names \['queue_mean'\], not among its "
                                        r"metric_names"):
        families.Family(**{**fam.__dict__, "name": "x", "table_metrics": ("makespan", "queue_mean")})
    with pytest.raises(TypeError, match=r"metric_text names \['dp_moved'\]"):
        families.Family(**{**fam.__dict__, "name": "x", "metric_text": {"dp_moved": "data points"}})
    with pytest.raises(TypeError, match=r"^family 'x': its table's first column is 'chunks'; it must be its main "
                                        r"metric, bar_metrics\[0\] \('makespan'\)$"):
        families.Family(**{**fam.__dict__, "name": "x", "table_metrics": ("chunks", "makespan")})
    with pytest.raises(TypeError, match=r"^family 'x': figure_captions names \['work'\], not among its figure_kinds$"):
        families.Family(**{**fam.__dict__, "name": "x", "figure_captions": {"work": ("work", "items done")}})


LEGEND = "mean ± 95% CI half-width (Student's t) over repetitions; * best mean per metric"

STREAM = {  # two placement rules; every stream metric with a value (streams_hetero's orders of magnitude)
    "jsq / exact": {"response_mean": (0.5248, 0.0487), "response_p50": (0.3032, 0.0192), "response_p95": (1.726, 0.207),
                    "response_p99": (3.592, 0.674), "slowdown_mean": (2.557, 0.138), "queue_mean": (1.057, 0.118),
                    "queue_max": (3.0, 0.0), "queue_maxdiff": (2.667, 1.434), "throughput": (63.07, 2.79),
                    "utilisation": (0.8419, 0.0198), "makespan": (190.3, 8.4), "lower_bound": (187.0, 3.0),
                    "efficiency": (0.9827, 0.0420), "tasks_moved": (11624.0, 31.0),
                    "messages": (11624.0, 31.0), "bytes": (0.0, 0.0), "info_messages": (0.0, 0.0),
                    "info_bytes": (0.0, 0.0), "info_age_mean": (0.0, 0.0), "info_freshness": (0.0, 0.0),
                    "convergence_time": (math.nan, math.nan)},
    "random-place / gossip": {"response_mean": (30.16, 4.27), "response_p50": (3.091, 1.411),
                              "response_p95": (154.8, 23.6), "response_p99": (192.8, 15.6),
                              "slowdown_mean": (1209.0, 3907.0), "queue_mean": (33.32, 3.79),
                              "queue_max": (220.3, 34.9), "queue_maxdiff": (219.0, 35.0), "throughput": (29.25, 1.56),
                              "utilisation": (0.4854, 0.0244), "makespan": (410.4, 21.7), "lower_bound": (187.0, 3.0),
                              "efficiency": (0.4558, 0.0186),
                              "tasks_moved": (11609.0, 91.0), "messages": (11609.0, 91.0), "bytes": (0.0, 0.0),
                              "info_messages": (11893.0, 243.0), "info_bytes": (6469973.0, 132112.0),
                              "info_age_mean": (math.nan, math.nan), "info_freshness": (9.565, 1.386),
                              "convergence_time": (math.nan, math.nan)},
}


TREE = {  # haron_torus64_info's orders of magnitude: work stealing and GDEM under exact and gossip information
    "steal / exact": {"makespan": (0.05284, 0.02461), "lower_bound": (0.0475, 0.02468), "efficiency": (0.8804, 0.0844),
                      "imbalance": (1.031, 0.028), "idle_share": (0.1196, 0.0844), "chunks": (1002.0, 295.0),
                      "messages": (20189.0, 2052.0), "bytes": (666528.0, 67316.0), "tasks_moved": (1280.0, 441.0),
                      "info_messages": (0.0, 0.0), "info_bytes": (0.0, 0.0), "info_age_mean": (0.0, 0.0)},
    "gdem / exact": {"makespan": (0.0596, 0.02269), "lower_bound": (0.0475, 0.02468), "efficiency": (0.7676, 0.1589),
                     "imbalance": (1.1, 0.094), "idle_share": (0.2324, 0.1589), "chunks": (237.2, 71.4),
                     "messages": (4795.0, 2170.0), "bytes": (204630.0, 93409.0), "tasks_moved": (3200.0, 1499.0),
                     "info_messages": (0.0, 0.0), "info_bytes": (0.0, 0.0), "info_age_mean": (0.0, 0.0)},
    "gdem / gossip": {"makespan": (0.07612, 0.0301), "lower_bound": (0.0475, 0.02468),
                      "efficiency": (0.6240, 0.1102), "imbalance": (1.182, 0.101), "idle_share": (0.3760, 0.1102),
                      "chunks": (301.4, 80.2), "messages": (5120.0, 2301.0), "bytes": (219880.0, 99012.0),
                      "tasks_moved": (3388.0, 1520.0), "info_messages": (612340.0, 1020.0),
                      "info_bytes": (10342000.0, 17000.0), "info_age_mean": (0.000512, 0.000011)},
}


def test_a_tree_table_shows_balancing_and_information_cost_within_the_width():
    """The tree's order of interest: makespan, efficiency, imbalance, the moves and messages, what knowing
    the loads cost, then the rest while it fits; idle_share (1 − efficiency here) is left to the CSV."""
    text = format_table(stats(TREE), family="tree")
    assert text.splitlines() == [
        "balancer       n             makespan         efficiency        imbalance   tasks_moved"
        "       messages        info_bytes        info_age_mean             bytes",
        "-------------  -  -------------------  -----------------  ---------------  ------------"
        "  -------------  ----------------  -------------------  ----------------",
        "steal / exact  3  0.05284 ± 0.02461 *  0.8804 ± 0.0844 *  1.031 ± 0.028 *  1280 ± 441 *"
        "   20189 ± 2052     0.00 ± 0.00 *        0.00 ± 0.00 *    666528 ± 67316",
        "gdem / exact   3    0.05960 ± 0.02269    0.7676 ± 0.1589    1.100 ± 0.094   3200 ± 1499"
        "  4795 ± 2170 *     0.00 ± 0.00 *        0.00 ± 0.00 *  204630 ± 93409 *",
        "gdem / gossip  3    0.07612 ± 0.03010    0.6240 ± 0.1102    1.182 ± 0.101   3388 ± 1520"
        "    5120 ± 2301  10342000 ± 17000  0.000512 ± 0.000011    219880 ± 99012",
        "same for every balancer: lower_bound 0.04750 ± 0.02468",
        "in summary.csv and report.html only: chunks, idle_share, info_messages",
        LEGEND]
    assert max(map(len, text.splitlines())) == 159  # chunks (16 wide) would make it 177
    assert format_verdict(stats(TREE), families.get("tree").bar_metrics[0]) == [  # 178 characters: wrapped
        "best makespan (lower is better): steal / exact 0.05284 s; runner-up gdem / exact 0.05960 s (+12.8%, 95% "
        "intervals overlap: not a clear win); last gdem / gossip",
        "  0.07612 s (+44.1%)"]


def test_a_stream_table_leads_with_response_time_and_fits_the_width():
    """18 stream metrics made a 330-character table with response_mean ninth; it now opens the table, the
    makespan follows the response percentiles with its lower bound (equal for both rules: stated once below)
    and their ratio, efficiency; the columns stop before TABLE_WIDTH (tasks_moved would make 167), and one
    line names what is only in summary.csv and report.html (info_age_mean and bytes, zero or n/a for all,
    are left out as before)."""
    text = format_table(stats(STREAM), family="stream")
    assert text.splitlines() == [
        "balancer               n      response_mean     response_p95     response_p99       makespan"
        "         efficiency       queue_mean        utilisation",
        "---------------------  -  -----------------  ---------------  ---------------  -------------"
        "  -----------------  ---------------  -----------------",
        "jsq / exact            3  0.5248 ± 0.0487 *  1.726 ± 0.207 *  3.592 ± 0.674 *  190.3 ± 8.4 *"
        "  0.9827 ± 0.0420 *  1.057 ± 0.118 *  0.8419 ± 0.0198 *",
        "random-place / gossip  3       30.16 ± 4.27     154.8 ± 23.6     192.8 ± 15.6   410.4 ± 21.7"
        "    0.4558 ± 0.0186     33.32 ± 3.79    0.4854 ± 0.0244",
        "same for every balancer: lower_bound 187.0 ± 3.0",
        "in summary.csv and report.html only: tasks_moved, info_bytes, throughput, slowdown_mean, response_p50, "
        "queue_max, queue_maxdiff, messages, info_messages,",
        "  info_freshness",
        LEGEND]
    assert max(map(len, text.splitlines())) == 153
    assert format_verdict(stats(STREAM), families.get("stream").bar_metrics[0]) == [
        "best response_mean (lower is better): jsq / exact 0.5248 s; runner-up random-place / gossip 30.16 s "
        "(+5647.0%, 95% intervals apart)"]


def graph_point(point: str, heft: float, pd: float) -> list[Stat]:
    """graph_pd_vs_heft's orders of magnitude: HEFT's plan against PD online."""
    row = {"lower_bound": (8.466, 0.354), "efficiency": (0.2622, 0.0107), "imbalance": (1.004, 0.001),
           "idle_share": (0.4556, 0.0117), "chunks": (200.0, 0.0), "messages": (379.4, 54.3), "bytes": (192.2, 29.4)}
    pd_row = {"efficiency": (0.2965, 0.0272), "idle_share": (0.3592, 0.0533), "chunks": (235.4, 2.4),
              "messages": (363.2, 60.1), "bytes": (181.8, 31.8)}
    return stats({"HEFT": {"makespan": (heft, 0.34), **row},
                  "PD (online)": {"makespan": (pd, 0.34), **row, **pd_row}}, point)


def test_a_graph_table_and_a_verdict_for_each_grid_point_even_where_the_balancers_are_alike():
    """At nodes=8 both mappers print 12.50 ± 0.34: nothing to rank, but the point still gets its line."""
    summary = graph_point("nodes=4", 32.29, 28.62) + graph_point("nodes=8", 12.5, 12.5)
    assert format_table(summary, family="graph").splitlines() == [
        "balancer     grid point  n        makespan         efficiency         idle_share       chunks"
        "        messages           bytes",
        "-----------  ----------  -  --------------  -----------------  -----------------  -----------"
        "  --------------  --------------",
        "HEFT         nodes=4     3    32.29 ± 0.34    0.2622 ± 0.0107    0.4556 ± 0.0117    200 ± 0 *"
        "    379.4 ± 54.3    192.2 ± 29.4",
        "PD (online)  nodes=4     3  28.62 ± 0.34 *  0.2965 ± 0.0272 *  0.3592 ± 0.0533 *  235.4 ± 2.4"
        "  363.2 ± 60.1 *  181.8 ± 31.8 *",
        "HEFT         nodes=8     3    12.50 ± 0.34    0.2622 ± 0.0107    0.4556 ± 0.0117    200 ± 0 *"
        "    379.4 ± 54.3    192.2 ± 29.4",
        "PD (online)  nodes=8     3    12.50 ± 0.34  0.2965 ± 0.0272 *  0.3592 ± 0.0533 *  235.4 ± 2.4"
        "  363.2 ± 60.1 *  181.8 ± 31.8 *",
        "same for every balancer: lower_bound 8.466 ± 0.354; imbalance 1.004 ± 0.001",
        LEGEND]
    assert format_verdict(summary, families.get("graph").bar_metrics[0]) == [
        "at nodes=4: best makespan (lower is better): PD (online) 28.62 s; runner-up HEFT 32.29 s (+12.8%, 95% "
        "intervals apart)",
        "at nodes=8: all balancers alike on makespan: 12.50 s"]
    # a narrow terminal: the main metric alone, and the lists below broken between items, never in a cell
    assert format_table(summary, family="graph", width=60).splitlines()[-5:] == [
        "same for every balancer: lower_bound 8.466 ± 0.354;",
        "  imbalance 1.004 ± 0.001",
        "in summary.csv and report.html only: efficiency, idle_share,",
        "  chunks, messages, bytes",
        LEGEND]


def test_a_verdict_longer_than_the_table_is_wrapped_with_a_hanging_indent():
    """A verdict line is kept to the table's width (streams_hetero's was about 170 characters): it goes on
    in lines indented by two, broken at spaces but never inside a label, a grid point or a value with its
    unit; a verdict that fits is one line, as before."""
    labels = ["power-of-d / gossip", "round-robin-place / exact", "random-place / gossip", "hybrid-batch / gossip"]
    ranked = [(1.234, 0.05), (1.301, 0.04), (31.52, 3.9), (math.nan, math.nan)]
    alike = [(2.5, 0.1)] * 3 + [(math.nan, math.nan)]
    summary = stats({k: {"response_mean": v} for k, v in zip(labels, ranked)}, "rates=2.0, hot=0.1")
    far = "rates=0.5, hot=0.1, period=0.5, fanout=1, selection=constrained"
    summary += stats({k: {"response_mean": v} for k, v in zip(labels, alike)}, far)
    summary += stats({"a": {"response_mean": (2.5, 0.1)}, "b": {"response_mean": (2.5, 0.1)}}, "rates=1.0")
    assert format_verdict(summary, "response_mean") == [
        "at rates=2.0, hot=0.1: best response_mean (lower is better): power-of-d / gossip 1.234 s; runner-up "
        "round-robin-place / exact 1.301 s (+5.4%, 95% intervals",
        "  overlap: not a clear win); last random-place / gossip 31.52 s (+2454.3%); 1 other without a response_mean",
        "at rates=0.5, hot=0.1, period=0.5, fanout=1, selection=constrained: the 3 balancers with a response_mean "
        "alike on response_mean: 2.500 s; 1 other without a",
        "  response_mean",
        "at rates=1.0: all balancers alike on response_mean: 2.500 s"]
    assert max(map(len, format_verdict(summary, "response_mean"))) == 155 <= TABLE_WIDTH
    assert format_verdict(summary[:4], "response_mean", width=60) == [
        "at rates=2.0, hot=0.1: best response_mean (lower is better):",
        "  power-of-d / gossip 1.234 s; runner-up",
        "  round-robin-place / exact 1.301 s (+5.4%, 95% intervals",
        "  overlap: not a clear win); last random-place / gossip",
        "  31.52 s (+2454.3%); 1 other without a response_mean"]


def test_a_verdict_keeps_a_labels_tab_as_it_is():
    # textwrap would expand a tab to spaces, even in a verdict short enough to stay one line
    summary = stats({"a\tb": {"makespan": (1.0, 0.1)}, "c": {"makespan": (2.0, 0.1)}})
    assert format_verdict(summary, "makespan") == [
        "best makespan (lower is better): a\tb 1 s; runner-up c 2 s (+100.0%, 95% intervals apart)"]


def test_a_point_with_one_balancer_or_none_with_a_value_still_gets_a_verdict():
    one = stats({"steal": {"makespan": (0.05284, 0.02461)}}, "p=64")
    assert format_verdict(one, "makespan") == ["at p=64: only steal ran: makespan 0.05284 s"]
    partly = stats({"a": {"makespan": (3.25, 0.1)}, "b": {"makespan": (math.nan, math.nan)},
                    "c": {"makespan": (math.nan, math.nan)}})
    assert format_verdict(partly, "makespan") == ["only a has a makespan: 3.250 s; 2 others without a makespan"]
    alike = stats({"a": {"makespan": (3.25, 0.1)}, "b": {"makespan": (3.25, 0.1)}, "c": {"makespan": (math.nan, 0)}})
    assert format_verdict(alike, "makespan") == [
        "the 2 balancers with a makespan alike on makespan: 3.250 s; 1 other without a makespan"]
    ranked = stats({"a": {"throughput": (3.25, 0.1)}, "b": {"throughput": (2.5, 0.1)}, "c": {"throughput": (math.nan, 0)}})
    assert format_verdict(ranked, "throughput") == [
        "best throughput (higher is better): a 3.250; runner-up b 2.500 (-23.1%, 95% intervals apart); "
        "1 other without a throughput"]
    none = stats({"a": {"makespan": (math.nan, math.nan)}, "b": {"makespan": (math.nan, math.nan)}})
    assert format_verdict(none, "makespan") == ["no balancer has a makespan"]


# --- the report's words ------------------------------------------------------------------------------------------
PLATFORM = {"nodes": [{"name": "n", "count": 4, "speed": 1.0}], "network": {"latency": 1e-3, "bandwidth": 1e8}}
WORKLOADS = {
    "divisible": ({"kind": "divisible", "items": 200, "cost": {"dist": "uniform", "low": 0.5, "high": 1.5}}, "gss"),
    "tree": ({"kind": "tree", "shape": "imbalance", "imbalance": 0.2, "depth": 8, "grain": 1.0}, "steal"),
    "graph": ({"kind": "graph", "generator": "atmospheric"}, "heft"),
    "stream": ({"kind": "stream", "rates": 0.5, "jobs": 200, "width": 2}, "jsq"),
}
#: each family's meaning of a metric, as its report's legend must print it (not read from the declarations,
#: so a wording lost on the way fails here)
SAID = {
    "divisible": {"makespan": "time of the last chunk's completion (s)",
                  "chunks": "chunks handed out (scheduling decisions)",
                  "messages": "balancing messages: requests, replies and STOPs"},
    "tree": {"makespan": "time the last task ended (s)",
             "chunks": "busy stretches: tasks a node ran back to back between idle times",
             "messages": "balancing messages sent: requests, replies, pushed tasks and orders"},
    "graph": {"makespan": "time the last task ended (s)",
              "messages": "edges whose data crosses machines (a message each)",
              "imbalance": "max / mean of the processors' finish times"},
    "stream": {"makespan": "time the last task left its node (s)",
               "tasks_moved": "tasks sent from the node their job arrived at to another (a placement that takes no "
                              "time, zero latency and task_bytes, is not counted)",
               "response_mean": "mean response time of a job: arrival at its origin to its last task's end (s)"},
}


@pytest.mark.parametrize("family", list(WORKLOADS))
def test_the_report_words_each_metric_as_the_family_means_it(family, tmp_path):
    """A tree's, a graph's or a stream's report said "time of the last chunk's completion" and "chunks handed
    out": the loop's words. Each family's legend (and column titles) now say what its runs measured."""
    workload, balancer = WORKLOADS[family]
    exp = Experiment.from_dict({"platform": PLATFORM, "workload": workload, "repetitions": 2,
                                "balancers": [{"name": balancer}, {"name": "random" if family == "tree" else
                                               {"divisible": "static", "graph": "round-robin",
                                                "stream": "local"}[family]}]})
    assert exp.family.name == family
    sweep = run_sweep(exp, tmp_path)
    html = write_report(tmp_path / "report.html", sweep, summarise(sweep.rows), {}).read_text()
    for metric, text in SAID[family].items():
        said = f"{escape(text)} ({families.metrics_table()[metric][1]} is better)"
        assert f"<li><b>{metric}</b>: {said}</li>" in html, metric
        assert f"<th title='{said}'>{metric}</th>" in html, metric
    if family != "divisible":
        assert "chunk's completion" not in html and "chunks handed out" not in html, family


# --- what `dlbkit simulate` prints ---------------------------------------------------------------------------------
def test_simulate_prints_a_stream_table_led_by_response_time_and_says_when_the_balancers_are_alike(tmp_path, capsys):
    """Two labels of one rule give identical runs: the table keeps its columns and says so, and the verdict
    line, which used to be left out, says they are alike on the main metric."""
    from dlbkit.face.cli import main

    f = tmp_path / "alike.toml"
    f.write_text('name = "alike"\nrepetitions = 2\n[platform]\nnodes = [{name = "n", count = 4, speed = 1.0}]\n'
                 '[workload]\nkind = "stream"\nrates = 0.5\njobs = 200\nwidth = 2\n'
                 '[[balancers]]\nname = "local"\nlabel = "one"\n[[balancers]]\nname = "local"\nlabel = "two"\n')
    assert main(["simulate", str(f), "--out", str(tmp_path / "o"), "--no-progress"]) == 0
    printed = capsys.readouterr().out.splitlines()
    head = next(i for i, ln in enumerate(printed) if ln.startswith("balancer"))
    assert printed[head].split()[:3] == ["balancer", "n", "response_mean"]
    assert all(len(ln) <= TABLE_WIDTH for ln in printed[head:head + 4])
    assert printed[head + 2].startswith("one ") and printed[head + 3].startswith("two ")
    assert "every balancer gave identical results" in printed
    with open(tmp_path / "o" / "results.csv", newline="") as fh:
        mean = next(s.mean for s in summarise(list(csv.DictReader(fh))) if s.metric == "response_mean")
    assert [ln for ln in printed if ln.startswith("all balancers")] == [
        f"all balancers alike on response_mean: {format_cell(mean, math.nan)} s"]


def test_the_report_lays_out_a_familys_figures_in_its_order_with_its_labels_and_captions(tmp_path):
    """The report reads a family's ``figure_kinds`` and ``figure_captions`` (no layout per family of its own): a run's
    images in the declared order, each labelled as declared, the captions of the kinds drawn once above the runs,
    `backticks` as code; an undeclared kind after them under its own name."""
    from dlbkit.face.experiments.report import _runs_html

    fam = families.Family(**{**families.get("graph").__dict__, "name": "x", "figure_kinds": ("b", "a"),
                             "figure_captions": {"a": ("the a", "A's `x = 1` <shown>."), "b": ("the b", "")}})
    images = {"a": [tmp_path / "a_r1.png", tmp_path / "a_r2.png"], "b": [tmp_path / "b_r1.png"],
              "zz": [tmp_path / "zz_r1.png"], "bars": [tmp_path / "makespan.png"]}
    html = _runs_html(images, fam, lambda p, alt: f"[{p.name}|{alt}]")
    assert html.split("\n") == [
        "<h2>Runs (repetition 0 of each balancer)</h2><p class=muted>A's <code>x = 1</code> &lt;shown&gt;.</p>",
        "<details open><summary>r1</summary>[b_r1.png|the b r1][a_r1.png|the a r1][zz_r1.png|zz r1]</details>",
        "<details open><summary>r2</summary>[a_r2.png|the a r2]</details>"]
    assert _runs_html({"bars": images["bars"]}, fam, lambda p, alt: "") == ""
