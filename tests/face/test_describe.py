"""The dispatch of ``dlbkit describe`` (dlbkit.face.describe): the core's platform files first, then every
registered family's, in the registry's order; a kind that passes on a file by its content leaves it to the
next, and no kind at all is a ConfigError naming the file."""

import pytest

from dlbkit import families
from dlbkit.errors import ConfigError
from dlbkit.face.describe import PLATFORM_FILES, describe, kinds


def test_the_kinds_are_the_platform_files_then_each_familys_in_the_registrys_order():
    got = kinds()
    assert got[:2] == list(PLATFORM_FILES) and [k.suffixes for k in PLATFORM_FILES] == [(".toml",), (".xml",)]
    assert got[2:] == [k for fam in families.FAMILIES.values() for k in fam.files]
    declaring = [fam.name for fam in families.FAMILIES.values() if fam.files]
    assert declaring == ["graph", "stream"]  # the families with file readers; the others declare none


def test_an_experiment_file_is_no_platform(tmp_path):
    """A TOML file with [platform] and [workload] but no nodes: the platform kind passes, and no other kind
    reads .toml, so the error lists the kinds."""
    p = tmp_path / "e.toml"
    p.write_text('[platform]\nfile = "p.toml"\n[workload]\nkind = "graph"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        describe(p)
    assert e.value.field == "file" and e.value.allowed.startswith("a file of a kind dlbkit reads: platform")


def test_a_platform_toml_without_nodes_is_the_platform_readers_error(tmp_path):
    """A TOML file that is no experiment is a platform: a missing nodes table is the reader's error."""
    p = tmp_path / "p.toml"
    p.write_text('name = "lab"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        describe(p)
    assert e.value.field == "nodes"


def test_a_directory_is_no_file(tmp_path):
    with pytest.raises(ConfigError, match="an existing file"):
        describe(tmp_path)
