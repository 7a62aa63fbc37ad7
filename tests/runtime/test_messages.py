"""The runtime's messages: one named tuple per kind, a top-level class that crosses processes pickled,
and the frequent kinds pickled by a copyreg extension code (runtime/messages.py): as small as the tag
tuples they replaced, and with no class name in the bytes."""

from __future__ import annotations

import copyreg
import importlib
import inspect
import pickle
import pickletools
import subprocess
import sys
from multiprocessing.reduction import ForkingPickler

import pytest

from dlbkit.runtime import messages
from dlbkit.runtime.backends import mpi_messages
from dlbkit.families.stream.runtime import messages as cluster_messages
from dlbkit.families.graph.runtime import messages as graph_messages
from dlbkit.families.divisible.runtime import messages as map_messages
from dlbkit.families.spmd.runtime import messages as spmd_messages
from dlbkit.families.tree.runtime import messages as tree_messages

MODULES = [messages, mpi_messages, cluster_messages, graph_messages, map_messages, spmd_messages, tree_messages]


def kinds() -> list[type]:
    """Every message kind: the NamedTuple classes the message modules define (mpi_messages: the MPI backend's own)."""
    return [c for m in MODULES for _, c in inspect.getmembers(m, inspect.isclass)
            if c.__module__ == m.__name__ and issubclass(c, tuple) and hasattr(c, "_fields")]


def sample(kind: type) -> tuple:
    return kind(*range(len(kind._fields)))


def opcodes(data: bytes) -> list[str]:
    return [op.name for op, _, _ in pickletools.genops(data)]


@pytest.mark.parametrize("kind", kinds(), ids=lambda k: f"{k.__module__.rsplit('.', 1)[-1]}.{k.__name__}")
def test_every_kind_crosses_a_pipe_and_mpi_as_itself(kind):
    msg = sample(kind)
    for data in (bytes(ForkingPickler.dumps(msg)), pickle.dumps(msg, protocol=pickle.HIGHEST_PROTOCOL)):
        back = pickle.loads(data)
        assert type(back) is kind and back == msg


def test_the_compact_kinds_are_registered_and_named_right():
    table = copyreg._extension_registry  # (module, name) -> code: what pickle itself consults
    for k, (module, name) in enumerate(messages.COMPACT):
        cls = getattr(importlib.import_module(module), name)
        assert cls in kinds()
        assert table[(module, name)] == messages.FIRST_CODE + k
    assert messages.FIRST_CODE + len(messages.COMPACT) - 1 <= 239  # copyreg's range for third parties


@pytest.mark.parametrize("module, name", messages.COMPACT, ids=lambda x: x.rsplit(".", 1)[-1] if "." in x else x)
def test_a_compact_kind_pickles_by_its_code_not_its_name(module, name):
    cls = getattr(importlib.import_module(module), name)
    data = bytes(ForkingPickler.dumps(sample(cls)))
    assert {"EXT1"} <= set(opcodes(data)) and "STACK_GLOBAL" not in opcodes(data)
    assert module.encode() not in data
    assert len(data) <= len(bytes(ForkingPickler.dumps(("D",) + sample(cls))))  # the tag tuple's size, at most


def test_a_process_that_never_imported_a_family_reads_its_compact_messages():
    """The code names the class by module and name: the reader imports the family's module itself."""
    data = bytes(ForkingPickler.dumps(map_messages.Done(0, 1, [2], 0.5, 0.75, [0.25])))
    code = ("import pickle, sys; import dlbkit.runtime.messages; "
            "assert 'dlbkit.families.divisible.runtime.messages' not in sys.modules; "
            "m = pickle.loads(sys.stdin.buffer.read()); print(type(m).__name__, m.results, m.t_end)")
    out = subprocess.run([sys.executable, "-c", code], input=data, capture_output=True, check=True)
    assert out.stdout.decode().split() == ["Done", "[2]", "0.75"]
