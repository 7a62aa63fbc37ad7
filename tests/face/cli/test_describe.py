"""``dlbkit describe FILE`` (dlbkit.face.cli.describe): one tiny file of every kind, its counts, totals,
critical path and width worked out by hand in each test's docstring and asserted in the text and the JSON;
``dlbkit schedule`` of a WfFormat workflow on a SimGrid platform; bad input one line, exit 2."""

from __future__ import annotations

import json

import pytest

from dlbkit.face.cli import main
from dlbkit.face.cli.describe import shown

HEAD = '<?xml version="1.0"?>\n<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'

#: two hosts, fast at 2 Gf (dlbkit speed 2) and slow at 1 Gf (speed 1), one link of 1 MB/s and no latency
TWO_HOSTS = HEAD + """<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="fast" speed="2Gf"/>
    <host id="slow" speed="1Gf"/>
    <link id="l" bandwidth="1MBps" latency="0"/>
    <route src="fast" dst="slow"><link_ctn id="l"/></route>
  </zone>
</platform>
"""


def chain_wfformat(makespan=13.5):
    """A WfFormat 1.5 chain a → b → c: runtimes 4, 2, 6 s on machine m1 (2400 MHz); a writes f1 (1000 B),
    which b reads; b writes f2 (2000 B), which c reads."""
    return {"name": "chain", "schemaVersion": "1.5", "workflow": {
        "specification": {
            "tasks": [{"id": "a", "name": "a", "parents": [], "children": ["b"], "inputFiles": [],
                       "outputFiles": ["f1"]},
                      {"id": "b", "name": "b", "parents": ["a"], "children": ["c"], "inputFiles": ["f1"],
                       "outputFiles": ["f2"]},
                      {"id": "c", "name": "c", "parents": ["b"], "children": [], "inputFiles": ["f2"],
                       "outputFiles": []}],
            "files": [{"id": "f1", "sizeInBytes": 1000}, {"id": "f2", "sizeInBytes": 2000}]},
        "execution": {
            "makespanInSeconds": makespan,
            "machines": [{"nodeName": "m1", "cpu": {"coreCount": 8, "speedInMHz": 2400}}],
            "tasks": [{"id": t, "runtimeInSeconds": r, "machines": ["m1"]} for t, r in (("a", 4), ("b", 2), ("c", 6))]}}}


def put(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text if isinstance(text, str) else json.dumps(text), encoding="utf-8")
    return p


def describe(path, capsys):
    """(the text's facts as label → value, the JSON object) of ``dlbkit describe path``."""
    assert main(["describe", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"{path}: ")
    facts = {}
    for line in lines[1:]:
        label, _, value = line.strip().partition("  ")
        facts[label] = value.strip()
    assert main(["describe", str(path), "--json"]) == 0
    return lines[0], facts, json.loads(capsys.readouterr().out)


def test_a_dlbkit_json_graph_worked_by_hand(tmp_path, capsys):
    """a (3) → b (2) with data 10, a → c (4) with 1, b → d (1) with none, c → d with 2: 4 tasks, 4 edges,
    work 3 + 2 + 4 + 1 = 10; critical path a c d = 3 + 4 + 1 = 8 (a b d is 6); with the data as time
    a b d = 3 + 10 + 2 + 0 + 1 = 16 (a c d: 3 + 1 + 4 + 2 + 1 = 11); levels {a}, {b, c}, {d}: 3, width 2;
    data 10 + 1 + 0 + 2 = 13."""
    p = put(tmp_path, "g.json", {"name": "diamond", "tasks": [{"id": "a", "load": 3}, {"id": "b", "load": 2},
                                                              {"id": "c", "load": 4}, {"id": "d", "load": 1}],
                                 "edges": [{"from": "a", "to": "b", "data": 10}, {"from": "a", "to": "c", "data": 1},
                                           {"from": "b", "to": "d"}, {"from": "c", "to": "d", "data": 2}]})
    head, text, d = describe(p, capsys)
    assert head == f"{p}: task graph (dlbkit JSON), read by TaskGraph.read"
    assert text["tasks"] == "4" and text["edges"] == "4" and text["name"] == "diamond"
    assert text["total work"] == "10 s at speed 1"
    assert text["critical path, no communication"] == "8 s at speed 1"
    assert text["critical path, data as time (as --nodes M)"] == "16 s at speed 1"
    assert text["topological levels"] == "3" and text["width (most tasks in one level)"] == "2"
    assert text["total data (over the edges)"] == "13 data units"
    assert (d["kind"], d["reader"], d["file"]) == ("task graph (dlbkit JSON)", "TaskGraph.read", str(p))
    assert (d["tasks"], d["edges"], d["total_work"], d["critical_path"], d["critical_path_with_communication"],
            d["levels"], d["width"], d["total_data"]) == (4, 4, 10.0, 8.0, 16.0, 3, 2, 13.0)
    assert d["units"]["critical_path"] == "s at speed 1" and "tasks" not in d["units"]


def test_a_wfformat_workflow_worked_by_hand(tmp_path, capsys):
    """The chain a (4 s) → b (2 s) → c (6 s), loads its runtimes (no reference speed): work 12 = the critical
    path (one path); with communication on the default network each of the 2 edges adds 0.1 ms and its
    bytes over 125 MB/s: 12 + 2 × 1e-4 + 3000 / 125e6 = 12.000224 s; 3 levels of one task (width 1); data
    1000 + 2000 B = 3 kB; one machine of 2400 MHz; makespan recorded 13.5 s."""
    p = put(tmp_path, "wf.json", chain_wfformat())
    head, text, d = describe(p, capsys)
    assert head == f"{p}: task graph (WfCommons WfFormat 1.5), read by TaskGraph.read"
    assert text["tasks"] == "3" and text["edges"] == "2" and text["name"] == "chain"
    assert text["total work"] == text["critical path, no communication"] == "12 s at speed 1"
    assert text["critical path, 0.1 ms + data / 125 MB/s per edge"] == "12.0002 s at speed 1"
    assert d["critical_path_with_communication"] == pytest.approx(12.000224, abs=1e-12)
    assert text["width (most tasks in one level)"] == "1" and text["topological levels"] == "3"
    assert text["total data (over the edges)"] == "3 kB" and d["total_data"] == 3000.0 and d["units"]["total_data"] == "B"
    assert text["schemaVersion"] == "1.5" and text["machines"] == "1"
    assert text["machine speeds (distinct)"] == "2400 MHz" and d["machine_mhz"] == [2400.0]
    assert text["recorded makespan of the real run"] == "13.5 s" and d["recorded_makespan"] == 13.5


def test_a_wfformat_1_4_workflow_gives_the_same_facts(tmp_path, capsys):
    """The chain in 1.4's layout (workflow.tasks with files by name, runtimeInSeconds, machines with cpu.speed):
    the same 12 s, 3 kB, 2400 MHz and 13.5 s recorded."""
    doc = {"name": "chain", "schemaVersion": "1.4", "workflow": {
        "makespanInSeconds": 13.5, "machines": [{"nodeName": "m1", "cpu": {"count": 8, "speed": 2400}}],
        "tasks": [{"name": "a", "parents": [], "runtimeInSeconds": 4, "machine": "m1",
                   "files": [{"name": "f1", "sizeInBytes": 1000, "link": "output"}]},
                  {"name": "b", "parents": ["a"], "runtimeInSeconds": 2, "machine": "m1",
                   "files": [{"name": "f1", "sizeInBytes": 1000, "link": "input"},
                             {"name": "f2", "sizeInBytes": 2000, "link": "output"}]},
                  {"name": "c", "parents": ["b"], "runtimeInSeconds": 6, "machine": "m1",
                   "files": [{"name": "f2", "sizeInBytes": 2000, "link": "input"}]}]}}
    head, _, d = describe(put(tmp_path, "wf14.json", doc), capsys)
    assert head.endswith("task graph (WfCommons WfFormat 1.4), read by TaskGraph.read")
    assert (d["total_work"], d["critical_path"], d["total_data"], d["machines"], d["machine_mhz"],
            d["recorded_makespan"], d["schema_version"]) == (12.0, 12.0, 3000.0, 1, [2400.0], 13.5, "1.4")


def test_a_workflow_that_never_ran_says_none_recorded(tmp_path, capsys):
    """WfCommons writes a makespan of 0 for a generated instance: read as none (wfformat.py)."""
    _, text, d = describe(put(tmp_path, "gen.json", chain_wfformat(makespan=0)), capsys)
    assert text["recorded makespan of the real run"] == "none recorded" and d["recorded_makespan"] is None


DAX = """<?xml version="1.0" encoding="UTF-8"?>
<adag xmlns="http://pegasus.isi.edu/schema/DAX" version="2.1" name="fork">
  <job id="a" name="a" runtime="2"><uses file="f" link="output" size="1000"/></job>
  <job id="b" name="b" runtime="3"><uses file="f" link="input" size="1000"/></job>
  <job id="c" name="c" runtime="1"/>
  <child ref="b"><parent ref="a"/></child>
  <child ref="c"><parent ref="a"/></child>
</adag>
"""


@pytest.mark.parametrize("name", ["fork.dax", "fork.xml"])
def test_a_pegasus_dax_worked_by_hand(tmp_path, capsys, name):
    """a (2 s) → b (3 s) through file f of 1000 B, a → c (1 s) with no file: 3 tasks, 2 edges, work 6,
    critical path a b = 5; with communication on the default network a b = 2 + 1e-4 + 1000 / 125e6 + 3 =
    5.000108 s (a c: 3.0001); levels {a}, {b, c}: width 2; data 1000 B. An ``.xml`` whose root is <adag> is
    a DAX, not a SimGrid platform (both are .xml)."""
    p = put(tmp_path, name, DAX)
    head, text, d = describe(p, capsys)
    assert head == f"{p}: task graph (Pegasus DAX), read by TaskGraph.read"
    assert (d["tasks"], d["edges"], d["total_work"], d["critical_path"], d["levels"], d["width"],
            d["total_data"]) == (3, 2, 6.0, 5.0, 2, 2, 1000.0)
    assert d["critical_path_with_communication"] == pytest.approx(5.000108, abs=1e-12)
    assert text["name"] == "fork" and text["DAX version"] == "2.1" and text["total data (over the edges)"] == "1 kB"


def test_an_stg_graph_worked_by_hand(tmp_path, capsys):
    """Tasks 1 (2), 2 (3), 3 (4) between the dummies 0 and 4: edges 0→1, 0→2, 1→3, 2→3, 3→4 (5); work 9;
    critical path 0 2 3 4 = 3 + 4 = 7; levels {0}, {1, 2}, {3}, {4}: 4, width 2; no data, so no critical
    path with communication."""
    p = put(tmp_path, "g.stg", "3\n0 0 0\n1 2 1 0\n2 3 1 0\n3 4 2 1 2\n4 0 1 3\n")
    head, text, d = describe(p, capsys)
    assert head == f"{p}: task graph (Kasahara STG), read by TaskGraph.read"
    assert (d["tasks"], d["edges"], d["total_work"], d["critical_path"], d["levels"], d["width"],
            d["total_data"]) == (5, 5, 9.0, 7.0, 4, 2, 0.0)
    assert "critical_path_with_communication" not in d and not any(k.startswith("critical path, data") for k in text)


def test_an_adg_graph_worked_by_hand(tmp_path, capsys):
    """The diamond of the JSON test in the thesis's format (ids 1-4): the same numbers, 10, 8, 16, 3, 2, 13."""
    p = put(tmp_path, "g.adg", "1 1 0 3 16 (2,10) (3,1)\n2 2 1 2 3 (4,0)\n3 2 1 4 7 (4,2)\n4 3 2 1 1\n")
    head, _, d = describe(p, capsys)
    assert head == f"{p}: task graph (thesis ADG (002)), read by TaskGraph.read"
    assert (d["total_work"], d["critical_path"], d["critical_path_with_communication"], d["levels"], d["width"],
            d["total_data"]) == (10.0, 8.0, 16.0, 3, 2, 13.0)


def test_an_ntp_network_file_worked_by_hand(tmp_path, capsys):
    """4 nodes of relative speeds 1, 2, 1, 1 on a ring (distances 1 to the neighbours, 2 across): 4 hosts,
    mean speed 5 / 4 = 1.25, capacity 5, 4 links; latency 0 and bandwidth 1 (platform_from_ntp)."""
    p = put(tmp_path, "r.ntp", "4\n1 2 1 1\n0 1 2 1\n1 0 1 2\n2 1 0 1\n1 2 1 0\n")
    head, text, d = describe(p, capsys)
    assert head.startswith(f"{p}: platform (thesis .ntp network file, 002)")
    assert (d["hosts"], d["speed_min"], d["speed_mean"], d["speed_max"], d["speeds"], d["capacity"], d["links"],
            d["latency"], d["bandwidth"]) == (4, 1.0, 1.25, 2.0, [1.0, 2.0, 1.0, 1.0], 5.0, 4, 0.0, 1.0)
    assert text["topology"] == "a given graph"


SWF = """; Version: 2.2
; MaxProcs: 4
; MaxJobs: 4
1 0 5 10 2 -1 -1 2 -1 -1 1 1 1 1 1 1 -1 -1
2 20 0 5 1 -1 -1 1 -1 -1 1 1 1 1 1 1 -1 -1
3 30 0 0 1 -1 -1 1 -1 -1 1 1 1 1 1 1 -1 -1
4 40 0 3 4 -1 -1 4 -1 -1 0 1 1 1 1 1 -1 -1
"""


def test_an_swf_log_worked_by_hand(tmp_path, capsys):
    """4 job lines; kept (status 1 with run time and processors): job 1 (submit 0, 10 s on 2 processors) and
    job 2 (submit 20, 5 s on 1); job 3 completed with run time 0 is left out, job 4 failed (status 0) is not
    kept. Tasks 2 + 1 = 3, work 10 × 2 + 5 × 1 = 25, span 20 s, offered load 25 / 20 = 1.25 work units/s,
    per processor of MaxProcs 4: 0.3125; widest job 2 tasks; header MaxProcs 4, MaxJobs 4."""
    p = put(tmp_path, "log.swf", SWF)
    head, text, d = describe(p, capsys)
    assert head == f"{p}: job stream (SWF log), read by Stream.read"
    assert text["job lines in the file"] == "4" and text["jobs kept (completed, status 1)"] == "2"
    assert text["completed jobs left out (no run time or processors)"] == "1"
    assert text["span (first to last arrival)"] == "20 s"
    assert text["total work (width × demand)"] == "25 work units"
    assert text["offered load (work per second of span)"] == "1.25 work units/s"
    assert text["offered load per processor (of MaxProcs)"] == "0.3125"
    assert text["widest job (tasks)"] == "2" and text["MaxProcs (header)"] == "4" and text["MaxJobs (header)"] == "4"
    assert (d["records"], d["jobs"], d["left_out"], d["tasks"], d["span"], d["total_work"], d["offered_load"],
            d["offered_load_per_processor"], d["widest_job"], d["MaxProcs"], d["MaxJobs"]) == \
        (4, 2, 1, 3, 20.0, 25.0, 1.25, 0.3125, 2, 4, 4)
    assert "MaxNodes" not in d  # not in the header: not shown


def test_an_arrivals_csv_worked_by_hand(tmp_path, capsys):
    """Rows (0, node 0, demand 2), (1, node 1, demand 3, width 2), (4, node 0, demand 1): 3 jobs, 4 tasks,
    2 origins, span 4 s, work 2 + 3 × 2 + 1 = 9, offered load 9 / 4 = 2.25; widest job 2; no MaxProcs, so no
    load per processor."""
    p = put(tmp_path, "arrivals.csv", "time,origin,demand,width\n0,0,2,1\n1,1,3,2\n4,0,1,1\n")
    head, text, d = describe(p, capsys)
    assert head == f"{p}: job stream (arrivals CSV), read by read_arrivals_csv"
    assert (d["jobs"], d["tasks"], d["origins"], d["span"], d["total_work"], d["offered_load"], d["widest_job"]) == \
        (3, 4, 2, 4.0, 9.0, 2.25, 2)
    assert text["offered load (work per second of span)"] == "2.25 work units/s"
    assert "offered_load_per_processor" not in d


def test_jobs_arriving_at_one_instant_have_no_offered_load(tmp_path, capsys):
    """A span of 0 s: work per second of span is undefined, said so (not inf)."""
    _, text, d = describe(put(tmp_path, "a.csv", "time,origin,demand\n5,0,2\n5,0,3\n"), capsys)
    assert d["span"] == 0.0 and d["offered_load"] is None
    assert text["offered load (work per second of span)"] == "none (every job arrives at once)"


def test_a_toml_platform_worked_by_hand(tmp_path, capsys):
    """Host a (speed 1, 2 cores) and b0, b1 (speed 3, count 2) on a ring: 3 hosts, 4 cores, speeds 1, 3, 3
    (mean 7 / 3), capacity 1 × 2 + 3 + 3 = 8 work/s; latency 1 ms, bandwidth 1.25 MB/s; a ring of 3 has 3
    links."""
    p = put(tmp_path, "p.toml", '[[nodes]]\nname = "a"\nspeed = 1.0\ncores = 2\n[[nodes]]\nname = "b"\nspeed = 3.0\n'
                                'count = 2\n[network]\nlatency = 0.001\nbandwidth = 1.25e6\ntopology = "ring"\n')
    head, text, d = describe(p, capsys)
    assert head == f"{p}: platform (dlbkit TOML), read by Platform.read"
    assert text["hosts"] == "3" and text["cores (in all)"] == "4"
    assert text["speeds (host by host)"] == "1, 3, 3 work/s" and text["speed (mean over hosts)"] == "2.33333 work/s"
    assert text["total capacity (speed × cores)"] == "8 work/s"
    assert text["network latency (per hop)"] == "0.001 s" and text["network bandwidth"] == "1.25 MB/s"
    assert text["topology"] == "ring" and text["links"] == "3"
    assert d["speed_mean"] == pytest.approx(7 / 3) and d["units"]["bandwidth"] == "B/s"


def test_a_simgrid_platform_worked_by_hand(tmp_path, capsys):
    """fast 2 Gf and slow 1 Gf: speeds in flop/s as the file has them (2e9, 1e9; mean 1.5e9), capacity 3e9;
    one route of one link: latency 0, bandwidth 1 MB/s, complete (1 link)."""
    p = put(tmp_path, "p.xml", TWO_HOSTS)
    head, text, d = describe(p, capsys)
    assert head == f"{p}: platform (SimGrid XML), read by Platform.read"
    assert text["speeds (host by host)"] == "2 Gflop/s, 1 Gflop/s" and text["speed (mean over hosts)"] == "1.5 Gflop/s"
    assert text["total capacity (speed × cores)"] == "3 Gflop/s" and text["network bandwidth"] == "1 MB/s"
    assert (d["speeds"], d["capacity"], d["latency"], d["bandwidth"], d["topology"], d["links"]) == \
        ([2e9, 1e9], 3e9, 0.0, 1e6, "complete", 1)
    assert d["units"]["speeds"] == "flop/s"


def test_schedule_a_wfformat_workflow_on_a_simgrid_platform(tmp_path, capsys):
    """``dlbkit schedule wf.json --platform p.xml``: the chain a (4 s) → b (2 s) → c (6 s) on fast (speed 2)
    and slow (speed 1) joined at 1 MB/s. HEFT: a on fast ends at 2 (slow: 4); b on fast 2 + 1 = 3 (slow: f1's
    1000 B take 1 ms, 2.001 + 2); c on fast 3 + 3 = 6 (slow: 3.002 + 6). Makespan 6, every task on fast."""
    wf, xml = put(tmp_path, "montage.json", chain_wfformat()), put(tmp_path, "cluster.xml", TWO_HOSTS)
    assert main(["schedule", str(wf), "--platform", str(xml), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["makespan"] == 6.0 and d["assignment"] == {"a": 0, "b": 0, "c": 0}
    assert (d["start"], d["finish"]) == ({"a": 0.0, "b": 2.0, "c": 3.0}, {"a": 2.0, "b": 3.0, "c": 6.0})
    assert main(["schedule", str(wf), "--platform", str(xml)]) == 0
    out = capsys.readouterr().out
    assert "makespan 6" in out and out.splitlines()[-1].split() == ["c", "fast", "3", "6"]


@pytest.mark.parametrize("name, text, field, allowed", [
    ("missing.json", None, "file", "an existing file"),
    ("notes.txt", "hello\n", "file", "a file of a kind dlbkit reads"),
    ("run.json", '{"meta": {}, "records": []}', "file", "a file of a kind dlbkit reads"),
    ("experiment.toml", '[platform]\nfile = "p.toml"\n[workload]\nkind = "graph"\n', "file",
     "a file of a kind dlbkit reads"),
    ("cycle.json", ('{"tasks": [{"id": "a", "load": 1}, {"id": "b", "load": 1}], "edges": [{"from": "a", "to": "b"}, '
                    '{"from": "b", "to": "a"}]}'), "edges", "a directed acyclic graph"),
    ("broken.json", '{"tasks": [', "JSON in", "valid JSON"),
    ("bad.swf", "1 0 0 5\n", "line 1", "18"),
    ("bad.xml", HEAD + '<platform version="4.1"><zone id="z" routing="Full"><host id="a" speed="-1Gf"/></zone>'
                       '</platform>', "speed", "a value > 0"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, name, text, field, allowed):
    """A missing file, a kind dlbkit does not read (listing the kinds it does: a task graph, a platform, a job
    stream), or a file its reader refuses: one line on stderr naming the file, status 2, no traceback."""
    p = tmp_path / name
    if text is not None:
        p.write_text(text, encoding="utf-8")
    assert main(["describe", str(p)]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert captured.out == "" and len(err) == 1 and err[0].startswith("dlbkit: error: ")
    assert name in err[0] and field in err[0] and allowed in err[0] and "Traceback" not in captured.err
    if allowed == "a file of a kind dlbkit reads":
        for kind in ("task graph", "platform (SimGrid XML) (.xml)", "job stream (SWF log) (.swf)", ".ntp", ".csv"):
            assert kind in err[0]


def test_a_csv_of_another_table_is_no_stream(tmp_path, capsys):
    """A CSV file whose header is not time,origin,demand (results.csv) is no kind dlbkit reads."""
    p = put(tmp_path, "results.csv", "balancer,makespan\ngss,3\n")
    assert main(["describe", str(p)]) == 2
    assert "a file of a kind dlbkit reads" in capsys.readouterr().err


@pytest.mark.parametrize("value, unit, text", [
    (0, "B", "0 B"), (999, "B", "999 B"), (1000, "B", "1 kB"), (1.5e6, "B", "1.5 MB"), (125e6, "B/s", "125 MB/s"),
    (2.5e12, "flop/s", "2.5 Tflop/s"), (12345, "", "12,345"), (1 / 3, "s", "0.333333 s"), ([1.0, 2.5], "MHz", "1, 2.5 MHz"),
    ([2e9, 5e8], "flop/s", "2 Gflop/s, 500 Mflop/s"), ("ring", "", "ring"), (None, "s", "none"), ([], "MHz", "none"),
])
def test_values_are_shown_with_their_units(value, unit, text):
    """Bytes and flop/s by powers of 1000 (k, M, G, T), other units after the number, counts with separators."""
    assert shown(value, unit) == text
