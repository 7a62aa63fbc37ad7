"""`[platform] availability` beside a platform file (dlbkit.face.experiments.spec): background load on the
file's nodes by name, a SimGrid file having no place for it; bad names and values are one line."""

import pytest

from dlbkit.errors import ConfigError
from dlbkit.face.experiments import Experiment
from dlbkit.model.availability import Constant, Pulse

XML = """<?xml version="1.0"?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1"><zone id="z" routing="Full">
  <host id="a" speed="1Gf"/><host id="b" speed="2Gf"/>
  <link id="l" bandwidth="125MBps" latency="100us"/>
  <route src="a" dst="b"><link_ctn id="l"/></route>
</zone></platform>
"""

TOML = """[[nodes]]
name = "a"
speed = 1.0
[[nodes]]
name = "b"
speed = 2.0
availability = 0.5
"""


def _experiment(tmp_path, platform: dict) -> Experiment:
    (tmp_path / "p.xml").write_text(XML)
    (tmp_path / "p.toml").write_text(TOML)
    d = {"name": "t", "platform": platform,
         "workload": {"kind": "divisible", "items": 10, "cost": 1.0}, "balancers": [{"name": "static"}]}
    return Experiment.from_dict(d, base_dir=tmp_path)


def test_a_simgrid_file_gets_the_named_nodes_load(tmp_path):
    pulse = {"kind": "pulse", "start": 1.0, "duration": 2.0, "level": 0.25}
    exp = _experiment(tmp_path, {"file": "p.xml", "availability": {"b": pulse}})
    a, b = exp.platform.nodes
    assert isinstance(a.availability, Constant) and a.availability.level == 1.0
    assert isinstance(b.availability, Pulse) and (b.availability.start, b.availability.level) == (1.0, 0.25)
    # ∫ a dt from 0: 1 by t = 1, then 0.25 × 2 = 0.5 more by t = 3, then 1 more by t = 4: 2.5 at t = 4
    assert b.availability.realise().finish(0.0, 2.5) == pytest.approx(4.0)


def test_the_file_overrides_a_toml_files_own_availability(tmp_path):
    exp = _experiment(tmp_path, {"file": "p.toml", "availability": {"b": 0.75, "a": 0.5}})
    assert [n.availability.level for n in exp.platform.nodes] == [0.5, 0.75]


def test_an_unknown_node_is_named_with_the_files_nodes(tmp_path):
    with pytest.raises(ConfigError) as e:
        _experiment(tmp_path, {"file": "p.xml", "availability": {"bb": 0.5}})
    assert e.value.field == "platform.availability.bb"
    assert "a, b" in str(e.value) and "p.xml" in str(e.value) and "\n" not in str(e.value)


def test_a_bad_level_names_the_node_in_the_file(tmp_path):
    with pytest.raises(ConfigError) as e:
        _experiment(tmp_path, {"file": "p.xml", "availability": {"b": 1.5}})
    assert "p.xml" in e.value.field and "nodes[1].availability" in e.value.field


def test_inline_nodes_state_their_own(tmp_path):
    with pytest.raises(ConfigError) as e:
        _experiment(tmp_path, {"nodes": [{"name": "a", "speed": 1.0}], "availability": {"a": 0.5}})
    assert e.value.field == "platform.availability" and "only with platform.file" in str(e.value)
