"""Pegasus DAX workflows read as TaskGraphs (dlbkit.families.graph.model.dax): DAX 2.x and 3.x by hand,
bad input named at its element, the CLI, and a property (random DAGs written as DAX read back)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.graphs import dags
from support.profiles import examples

from dlbkit.errors import ConfigError
from dlbkit.families.graph.model import workload
from dlbkit.families.graph.model.dax import NAMESPACE
from dlbkit.families.graph.model.workload import TaskGraph, from_dax, read_dax

# One workflow, by hand. a (10 s) reads the input f0 (7 B, written by nobody) and writes f1 (100 B) and
# f2 (200 B); b (4 s) reads f1 and writes f3 (50 B); c (6 s, given by its pegasus profile, not an
# attribute) reads f1 and f2, but its <uses> says f2 is 210 B (the size the child reads counts), and
# writes f4 (25 B) and the inout file log (5 B); d (2 s) reads f3, f4, log and f0. d's parent b is listed
# twice (one edge).
#   edges: a→b f1 = 100; a→c f1 + f2 = 100 + 210 = 310; b→d f3 = 50; c→d f4 + log = 25 + 5 = 30
#   (f0 is no parent's output): 4 edges, 490 B.   loads: the seconds, 10 + 4 + 6 + 2 = 22.
EDGES = {("a", "b"): 100.0, ("a", "c"): 310.0, ("b", "d"): 50.0, ("c", "d"): 30.0}
JOBS = [  # id, runtime (None: in the profile), [(file, link, size)]
    ("a", "10", [("f0", "input", 7), ("f1", "output", 100), ("f2", "output", 200)]),
    ("b", "4", [("f1", "input", 100), ("f3", "output", 50)]),
    ("c", None, [("f1", "input", 100), ("f2", "input", 210), ("f4", "output", 25), ("log", "inout", 5)]),
    ("d", "2.0", [("f3", "input", 50), ("f4", "input", 25), ("log", "input", 5), ("f0", "input", 7)]),
]
DEPS = [("b", ["a"]), ("c", ["a"]), ("d", ["b", "c", "b"])]


def dax(jobs=JOBS, deps=DEPS, version="3.6", name="toy"):
    """DAX text: 3.x with its namespace and ``name=`` on <uses>, 2.x without a namespace and with ``file=``."""
    three = version.startswith("3")
    attr = "name" if three else "file"
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           f'<adag {f"xmlns={NAMESPACE!r} " if three else ""}version="{version}" name="{name}">',
           '  <metadata key="created">today</metadata>' if three else '  <filename file="f0" link="input"/>']
    for jid, runtime, uses in jobs:
        rt = "" if runtime is None else f' runtime="{runtime}"'
        out.append(f'  <job id="{jid}" namespace="toy" name="step"{rt}>')
        if runtime is None:
            out.append('    <profile namespace="pegasus" key="runtime">6</profile>')
        out += [f'    <uses {attr}="{f}" link="{link}" size="{size}"/>' for f, link, size in uses]
        out.append("  </job>")
    for child, parents in deps:
        out.append(f'  <child ref="{child}">' + "".join(f'<parent ref="{p}"/>' for p in parents) + "</child>")
    return "\n".join(out + ["</adag>"]) + "\n"


def _edges(g):
    return {(s, d): data for s, d, data in g.edges}


@pytest.mark.parametrize("version", ["3.6", "3.4", "2.1"])
def test_the_toy_workflow_by_hand(tmp_path, version):
    p = tmp_path / "wf.dax"
    p.write_text(dax(version=version), encoding="utf-8")
    g = TaskGraph.read(p)
    assert g.ids == ("a", "b", "c", "d") and g.name == "toy"
    assert g.n_tasks == 4 and g.n_edges == 4
    assert _edges(g) == EDGES and sum(_edges(g).values()) == 490
    assert g.loads == (10.0, 4.0, 6.0, 2.0) and sum(g.loads) == 22
    assert dict(g.meta) == {"format": "DAX", "version": version, "name": "toy", "makespan": None}


def test_an_xml_whose_root_is_adag_reads_and_any_other_is_refused(tmp_path):
    p = tmp_path / "Montage_4.xml"
    p.write_text(dax(version="2.1"), encoding="utf-8")
    assert _edges(workload.read(p)) == EDGES and _edges(read_dax(p)) == EDGES
    p.write_text('<?xml version="1.0"?><platform version="4.1"/>', encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        TaskGraph.read(p)
    assert e.value.field == f"{p}: root element" and e.value.value == "<platform>"


def test_text_bytes_and_a_missing_version_or_name():
    g = from_dax(dax(), "x.dax")  # text is read as its UTF-8 bytes
    assert _edges(g) == EDGES
    bare = dax(version="2.1").replace(' version="2.1" name="toy"', "")  # hand-written DAXes omit both
    g = from_dax(bare.encode(), "dir/hand.dax")
    assert g.name == "hand" and g.meta["version"] is None and g.meta["name"] is None and _edges(g) == EDGES


def test_links_none_and_checkpoint_and_absent_sizes_carry_no_data():
    """a writes f1 (no size: 0 B) and f2 (100 B, link none); b reads both: a→b carries 0 + 0 = 0."""
    jobs = [("a", "1", [("f1", "output", None), ("f2", "none", 100)]),
            ("b", "1", [("f1", "input", None), ("f2", "checkpoint", 100)])]
    text = dax(jobs, [("b", ["a"])]).replace(' size="None"', "")
    assert _edges(from_dax(text)) == {("a", "b"): 0.0}


def test_reference_mhz_is_refused_for_a_dax(tmp_path):
    p = tmp_path / "wf.dax"
    p.write_text(dax(), encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        TaskGraph.read(p, reference_mhz=1000)
    assert e.value.field == "reference_mhz"


def _bad(text, field, value=None, *, data=None):
    with pytest.raises(ConfigError) as e:
        from_dax(text.encode() if data is None else data, "wf.dax")
    err = e.value
    assert err.field.startswith(("wf.dax", "file wf.dax")) and field in err.field, err.field
    assert "\n" not in str(err)
    if value is not None:
        assert err.value == value, err.value
    return err


def _job(k, key, value):
    jobs = [list(j) for j in JOBS]
    jobs[k][1 if key == "runtime" else 0] = value
    return dax([tuple(j) for j in jobs])


def test_bad_input_names_the_file_and_the_element():
    _bad(_job(1, "runtime", "-1"), "wf.dax job[1].runtime", "-1")
    _bad(_job(1, "runtime", "nan"), "wf.dax job[1].runtime", "nan")
    _bad(_job(3, "runtime", "two"), "wf.dax job[3].runtime", "two")
    _bad(dax().replace('<profile namespace="pegasus" key="runtime">6</profile>', ""), "wf.dax job[2].runtime",
         "<missing>")
    e = _bad(_job(2, "id", "a"), "wf.dax job[2].id", "a")
    assert "job[0] has it too" in e.allowed
    _bad(dax().replace('<job id="b"', '<job'), "wf.dax job[1].id", "<missing>")
    _bad(dax(deps=[("b", ["zz"])]), "wf.dax child[0].parent[0].ref", "zz")  # a parent naming no job
    _bad(dax(deps=[("c", ["a"]), ("zz", ["a"])]), "wf.dax child[1].ref", "zz")
    _bad(dax(deps=[("b", ["a", "b"])]), "wf.dax child[0].parent[1].ref", "b")  # a self-loop
    e = _bad(dax(deps=DEPS + [("a", ["d"])]), "wf.dax job (child/parent)")  # a → b → d → a
    assert "acyclic" in e.allowed and "->" in e.value
    _bad(dax().replace('size="200"', 'size="-5"'), "wf.dax job[0].uses[2].size", "-5")
    _bad(dax().replace('link="output" size="200"', 'link="both" size="200"'), "wf.dax job[0].uses[2].link", "both")
    _bad(dax().replace('name="f2" link="output"', 'link="output"'), "wf.dax job[0].uses[2]", "<missing>")
    _bad(dax(version="4.0"), "wf.dax <adag>.version", "4.0")
    _bad(dax(jobs=[], deps=[]), "wf.dax: jobs", "none")
    _bad(dax().replace("</adag>", '<dax id="sub" file="sub.dax"/></adag>'), "wf.dax <dax>", "sub")
    _bad(dax().replace("</adag>", ""), "file wf.dax")  # XML syntax


def test_unsafe_or_non_utf8_files_are_refused():
    entity = dax().replace('<?xml version="1.0" encoding="UTF-8"?>',
                           '<?xml version="1.0"?>\n<!DOCTYPE adag [<!ENTITY x SYSTEM "file:///etc/passwd">]>')
    entity = entity.replace('name="toy"', 'name="&x;"')
    e = _bad(entity, "file wf.dax")
    assert "refused for safety" in e.allowed
    _bad("", "file wf.dax", data=dax().encode().replace(b'name="toy"', b'name="t\xff"'))
    with pytest.raises(ConfigError, match="an existing Pegasus DAX file"):
        read_dax("/nonexistent/wf.dax")


def test_an_experiment_file_names_a_dax(tmp_path):
    from dlbkit.face.experiments.spec import load_experiment

    (tmp_path / "wf.dax").write_text(dax(), encoding="utf-8")
    exp = tmp_path / "exp.toml"
    exp.write_text('name = "dax"\n[platform]\nnodes = [{name = "n0", speed = 1.0}, {name = "n1", speed = 2.0}]\n'
                   '[workload]\nkind = "graph"\nfile = "wf.dax"\n[[balancers]]\nname = "heft"\n', encoding="utf-8")
    g = load_experiment(exp).workload
    assert isinstance(g, TaskGraph) and g.loads == (10.0, 4.0, 6.0, 2.0) and _edges(g) == EDGES


def test_cli_schedules_a_dax_and_a_bad_one_is_one_line(tmp_path, capsys):
    from dlbkit.face.cli import main

    (tmp_path / "wf.dax").write_text(dax(), encoding="utf-8")
    assert main(["schedule", str(tmp_path / "wf.dax"), "--nodes", "2"]) == 0
    capsys.readouterr()
    (tmp_path / "bad.dax").write_text(dax(deps=[("b", ["zz"])]), encoding="utf-8")
    assert main(["schedule", str(tmp_path / "bad.dax"), "--nodes", "2"]) == 2
    err = capsys.readouterr().err
    assert "child[0].parent[0].ref" in err and len(err.strip().splitlines()) == 1


@settings(max_examples=examples(60), deadline=None)
@given(dags(), st.sampled_from(["2.1", "3.6"]))
def test_random_dags_read_back(dag, version):
    """Each edge i→j is one file f_i_j the parent writes and the child reads: the graph is the DAG."""
    n, sizes, runtimes = dag
    ids = [f"t{i}" for i in range(n)]
    jobs = [(ids[j], str(runtimes[j]),
             [(f"f{i}_{j}", "input", s) for (i, k), s in sizes.items() if k == j]
             + [(f"f{j}_{k}", "output", s) for (i, k), s in sizes.items() if i == j]) for j in range(n)]
    deps = [(ids[j], [ids[i] for (i, k) in sizes if k == j]) for j in range(n)]
    g = from_dax(dax(jobs, [d for d in deps if d[1]], version=version))
    assert g.ids == tuple(ids)
    assert g.loads == tuple(map(float, runtimes))
    assert _edges(g) == {(ids[i], ids[j]): float(s) for (i, j), s in sizes.items()}


def test_a_simgrid_platform_given_as_a_dax_is_named_by_its_root(tmp_path):
    """A SimGrid platform (which carries a DOCTYPE, refused in a DAX) given where a DAX is read: the error
    says it is not a DAX (its root), not that its DOCTYPE is unsafe."""
    p = tmp_path / "p.xml"
    p.write_text('<?xml version="1.0"?>\n<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
                 '<platform version="4.1"><zone id="z" routing="Full"><host id="a" speed="1Gf"/></zone></platform>\n')
    with pytest.raises(ConfigError, match=r"root element must be <adag> .*got '<platform>'"):
        TaskGraph.read(p)
