"""Thesis ``.ntp`` network files: :mod:`test_schedule_platforms_fuzz` runs
``schedule`` on small mutated ones; here the loader itself
(:func:`dlbkit.families.graph.model.costs.platform_from_ntp`), against a reference reading written plainly in
this file, on files of every layout (one number a line, a row a line, everything on one line, blank
lines, tabs) mutated as text, and on files of thousands of nodes.

The rule: a file is accepted exactly when the reference finds m, then m speeds in dlbkit's range, then
an m × m matrix that is the hop count of a connected graph, and the platform then has those speeds and
hops; a refusal is one ConfigError whose field names the file and, for an entry, the line that holds
it (``net.ntp:3000 distances[2][7]``). A file of 3 000 nodes (9 M numbers) loads in seconds and a
few hundred MB; before, it took a minute and gigabytes, and an error named no line (a word that is
not a number was shown as the file's first three words). Derandomized; the large files are checked
once each (about 2 s), the fuzz runs at its full count in the full tier.
"""

import math
import re
import subprocess
import sys

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlbkit.errors import ConfigError
from dlbkit.model.check import HUGE, TINY
from dlbkit.families.graph.model.costs import MAX_PROCESSORS, platform_from_ntp
from dlbkit.model.topology import hop_matrix

from support.fuzz import FUZZ, deadline
from support.fuzz_emulate import _event as event
from support.fuzz_entries import mutated_text
from support.profiles import examples

GRAPHS = {"bus": nx.complete_graph, "ring": nx.cycle_graph, "chain": nx.path_graph,
          "star": nx.star_graph, "hypercube": lambda m: nx.convert_node_labels_to_integers(
              nx.hypercube_graph(max(1, m.bit_length() - 1)))}


def matrix(kind: str, m: int) -> np.ndarray:
    g = GRAPHS[kind](m - 1 if kind == "star" else m)
    return hop_matrix(nx.convert_node_labels_to_integers(g))


def layout(m: int, speeds, d: np.ndarray, how: str) -> str:
    rows = [" ".join(str(int(x)) for x in r) for r in d]
    if how == "rows":
        return "\n".join([str(m), *map(repr, speeds), *rows]) + "\n"
    if how == "one line":
        return " ".join([str(m), *map(repr, speeds), *rows])
    if how == "speeds on a line, tabs":
        return f"{m}\n" + "\t".join(map(repr, speeds)) + "\n" + "\n".join(r.replace(" ", "\t") for r in rows)
    words = [str(m), *map(repr, speeds), *" ".join(rows).split()]  # one a line, some blank lines between
    return "\n".join(w + ("\n" if k % 7 == 3 else "") for k, w in enumerate(words)) + "\n\n"


def reference(path):
    """(speeds, D) if the file is a valid .ntp file, else None: what the loader must decide, plainly."""
    with open(path, encoding="utf-8") as f:
        words = f.read().split()
    try:
        m = int(words[0])
        nums = [float(w) for w in words[1:]]
    except (IndexError, ValueError):
        return None
    if not 1 <= m <= MAX_PROCESSORS or len(nums) != m + m * m:
        return None
    speeds, flat = nums[:m], nums[m:]
    if not all(math.isfinite(s) and TINY <= s <= HUGE for s in speeds):
        return None
    if not all(math.isfinite(x) and 0 <= x < m and x.is_integer() for x in flat):  # no hop count of m nodes is m
        return None
    d = np.array(flat, dtype=np.int64).reshape(m, m)
    g = nx.Graph()
    g.add_nodes_from(range(m))
    g.add_edges_from((i, j) for i in range(m) for j in range(i + 1, m) if d[i, j] == 1)
    if not nx.is_connected(g) or not np.array_equal(hop_matrix(g), d):
        return None
    return speeds, d


def token_lines(path) -> list[int]:
    """The line of each number of the file, in order (the file's own lines, as Python reads text)."""
    with open(path, encoding="utf-8") as f:
        return [ln for ln, line in enumerate(f, 1) for _ in line.split()]


ENTRY = re.compile(r"^(?P<path>.*?):(?P<line>\d+)(?: (?P<entry>m|speeds\[(?P<s>\d+)\]|distances\[(?P<i>\d+)\]\[(?P<j>\d+)\]))?$")


def _loads_as_the_reference_says(path) -> str:
    try:
        with deadline(30):
            want = reference(path)
    except UnicodeDecodeError:
        want = None
    try:
        with deadline(30):
            got = platform_from_ntp(path)
    except ConfigError as e:
        assert "\n" not in str(e) and len(str(e)) < 2000, str(e)[:3000]
        assert want is None, f"refused a file the reference accepts: {e}"
        hit = ENTRY.match(e.field)
        if hit is None:  # the file as a whole: unreadable, empty, too few numbers
            assert e.field in (str(path), "network topology file"), e.field
            event("refused: the file")
            return "refused"
        assert hit["path"] == str(path)
        lines = token_lines(path)
        if hit["entry"] is None:  # a number beyond m + m²
            k = None
        elif hit["entry"] == "m":
            k = 0
        elif hit["s"] is not None:
            k = 1 + int(hit["s"])
        else:
            m = int(open(path, encoding="utf-8").read().split()[0])
            k = 1 + m + int(hit["i"]) * m + int(hit["j"])
        if k is not None:
            assert lines[k] == int(hit["line"]), (e.field, k, lines[k])
        event(f"refused: {'beyond the end' if k is None else hit['entry'].split('[')[0]}")
        return "refused"
    assert want is not None, "accepted a file the reference refuses"
    speeds, d = want
    assert got.speeds.tolist() == speeds and np.array_equal(got.hops, d)
    assert got.complete == bool((d + np.eye(len(d), dtype=d.dtype) == 1).all())
    event("accepted")
    return "accepted"


CASES = st.tuples(st.sampled_from(sorted(GRAPHS)), st.integers(1, 24),
                  st.sampled_from(["rows", "one line", "speeds on a line, tabs", "one a line"]))


def _mutated_file_loads_as_the_reference_says(data, case, tmp_path):
    kind, m, how = case
    if kind == "star":
        m = max(m, 2)
    d = matrix(kind, m)
    m = len(d)
    speeds = data.draw(st.lists(st.sampled_from([1.0, 0.5, 2.5, 1 / 3, 1e-30, 1e30]), min_size=m, max_size=m))
    text = layout(m, speeds, d, how)
    if data.draw(st.integers(0, 5)):
        text = data.draw(mutated_text(text))
    path = tmp_path / "net.ntp"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    _loads_as_the_reference_says(path)


@settings(FUZZ, max_examples=examples(2000))
@given(data=st.data(), case=CASES)
def test_a_mutated_ntp_file_loads_as_the_reference_says_or_names_its_line(data, case, tmp_path_factory):
    _mutated_file_loads_as_the_reference_says(data, case, tmp_path_factory.mktemp("ntp"))


@pytest.mark.parametrize("kind", sorted(GRAPHS))
@pytest.mark.parametrize("how", ["rows", "one line", "speeds on a line, tabs", "one a line"])
def test_every_layout_of_every_topology_loads_as_written(kind, how, tmp_path):
    d = matrix(kind, 9)
    path = tmp_path / "net.ntp"
    path.write_text(layout(len(d), [1.0 + k for k in range(len(d))], d, how))
    assert _loads_as_the_reference_says(path) == "accepted"


# --- thousands of nodes ---------------------------------------------------------------------------
BIG = 3000


@pytest.fixture(scope="module")
def big_ring(tmp_path_factory) -> str:
    """The text of a ring of 3 000 nodes, a row a line (line 1: m; lines 2..3001: speeds; row i on
    line 3002 + i), written with numpy (writing it by hand takes longer than loading it)."""
    i = np.arange(BIG)
    d = np.abs(i[:, None] - i[None, :])
    d = np.minimum(d, BIG - d)
    path = tmp_path_factory.mktemp("big") / "ring.ntp"
    with open(path, "w") as f:
        f.write(f"{BIG}\n" + "1.0\n" * BIG)
        np.savetxt(f, d, fmt="%d")
    return path.read_text()


def _with_line(text: str, ln: int, change) -> str:
    lines = text.split("\n")
    lines[ln - 1] = change(lines[ln - 1])
    return "\n".join(lines)


@pytest.mark.full  # scale: thousands of nodes
def test_an_ntp_file_of_thousands_of_nodes_loads_in_seconds_and_little_memory(big_ring, tmp_path):
    """A ring of 3 000 nodes is 9 M numbers: the loader read them as Python words and floats, then
    lists of ints, and checked the hop counts with networkx (a minute, gigabytes); now numpy line by
    line and scipy's breadth-first searches. Loaded in a fresh interpreter, whose peak resident memory
    is then the loader's (tracemalloc would slow the 9 M words tenfold)."""
    path = tmp_path / "ring.ntp"
    path.write_text(big_ring)
    code = ("import resource, sys, time; from dlbkit.families.graph.model.costs import platform_from_ntp; "
            "base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss; t = time.perf_counter(); "
            "p = platform_from_ntp(sys.argv[1]); took = time.perf_counter() - t; "
            "print(p.n_nodes, p.complete, int(p.hops_from(0)[p.n_nodes // 2]), took, "
            "(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) // 1024)")
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    n, complete, half, took, grown_mb = done.stdout.split()
    assert (int(n), complete, int(half)) == (BIG, "False", BIG // 2)
    assert int(grown_mb) < 400, f"{grown_mb} MB"  # the m × m int16 matrix is 18 MB; before, over 2 GB
    assert float(took) < 30, f"{took} s"


@pytest.mark.parametrize("ln, change, field, value", [
    (3000, lambda s: "1.x", "speeds[2998]", "'1.x'"),
    (3000, lambda s: "0", "speeds[2998]", "0.0"),
    (4500, lambda s: "one" + s[len("1498"):], f"distances[{4500 - 3002}][0]", "'one'"),
    (4500, lambda s: s.replace(" 2 ", " 2.5 ", 1), f"distances[{4500 - 3002}][", "2.5"),
    (6001, lambda s: s + " 7", f"distances[{BIG - 1}][{BIG}]", None),
], ids=["speed not a number", "speed 0", "distance not a number", "distance not whole", "one number too many"])
def test_a_malformed_line_deep_in_a_large_ntp_file_is_named_by_its_line(big_ring, tmp_path, ln, change, field, value):
    path = tmp_path / "ring.ntp"
    path.write_text(_with_line(big_ring, ln, change))
    with deadline(60), pytest.raises(ConfigError) as e:
        platform_from_ntp(path)
    if value is None:  # the extra number: named by its line, beyond the m + m² numbers
        assert e.value.field == f"{path}:{ln}" and "m + m² = 9003000" in str(e.value), str(e.value)
        return
    assert e.value.field.startswith(f"{path}:{ln} {field}"), e.value.field
    assert str(e.value).endswith(f"got {value}") and "\n" not in str(e.value)


def test_a_distance_that_is_not_the_hop_count_names_the_entry_and_its_line_not_the_matrix(big_ring, tmp_path):
    """A ring with one wrong but whole distance deep inside: the error printed the whole 3 000 × 3 000
    matrix as its value (one line of 9 M numbers); now the entry, its line and the hop count."""
    path = tmp_path / "ring.ntp"
    row = 4500 - 3002  # distances[1498][0] is 1498 hops on the ring; say 1497
    path.write_text(_with_line(big_ring, 4500, lambda s: "1497" + s[len("1498"):]))
    with deadline(60), pytest.raises(ConfigError) as e:
        platform_from_ntp(path)
    assert str(e.value) == (f"{path}:4500 distances[{row}][0] must be the hop counts of a connected graph (bus, ring, "
                            f"hypercube, ...): the graph whose links are the distances of 1 joins nodes {row} and 0 by "
                            f"1498 hops; got 1497")


def test_a_node_count_beyond_the_limit_is_refused_before_its_matrix_is_made(tmp_path):
    path = tmp_path / "huge.ntp"
    path.write_text(f"\n  {10**9}\n1 2 3\n")
    with deadline(5), pytest.raises(ConfigError) as e:
        platform_from_ntp(path)
    assert e.value.field == f"{path}:2 m" and f"an integer in [1, {MAX_PROCESSORS:,}]" in str(e.value)


def test_a_disconnected_distance_matrix_says_no_path(tmp_path):
    path = tmp_path / "two.ntp"
    path.write_text("3\n1 1 1\n0 1 2\n1 0 1\n2 1 0\n".replace("0 1 2\n1 0 1\n2 1 0", "0 1 2\n1 0 2\n2 2 0"))
    with pytest.raises(ConfigError) as e:
        platform_from_ntp(path)
    assert e.value.field == f"{path}:3 distances[0][2]" and "joins nodes 0 and 2 by no path" in str(e.value)


def test_the_first_bad_entry_of_the_file_is_the_one_named(tmp_path):
    """A bad speed before a bad distance is named first, whatever the order of the checks."""
    path = tmp_path / "two.ntp"
    path.write_text("2\n1\nnan\n0 x\n1 0\n")
    with pytest.raises(ConfigError) as e:
        platform_from_ntp(path)
    assert e.value.field == f"{path}:3 speeds[1]"
