"""The README's Python example runs and prints what a reader would expect."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_example_runs(capsys):
    code = re.search(r"```python\n(.*?)```", README.read_text(), re.S).group(1)
    exec(compile(code, "README.md", "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    assert [ln.split()[0] for ln in lines] == ["static", "gss", "fac2", "awf-c"]
    eff = {ln.split()[0]: float(ln.split()[-1]) for ln in lines}
    # speed-aware adaptive rule beats the static split on this 1:4 cluster with a pulse
    assert eff["awf-c"] > 0.9 > eff["static"]


def test_readme_names_every_registered_balancer():
    from dlbkit.balancers import REGISTRY
    text = README.read_text()
    missing = [n for n in REGISTRY if f"`{n}`" not in text]
    assert missing == []
