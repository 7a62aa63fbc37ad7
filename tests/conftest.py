"""Shared fixtures: a small heterogeneous platform, a view, a seeded generator, a working directory."""

import numpy as np
import pytest

from dlbkit import Divisible, LoopView, Network, Node, Platform, Pulse


@pytest.fixture
def platform():
    """Master plus three workers of speeds 1, 2, 4; the fastest has a background-load pulse."""
    return Platform([Node("master"), Node("a", speed=1.0), Node("b", speed=2.0),
                     Node("c", speed=4.0, availability=Pulse(start=5.0, duration=10.0, level=0.5))],
                    Network(latency=1e-3, bandwidth=1e8))


@pytest.fixture
def workload():
    return Divisible(1000)


@pytest.fixture
def view():
    """A fresh view of a 100-item loop on 4 workers of equal nominal speed."""
    return LoopView(n_items=100, n_nodes=4, speeds=[1.0] * 4)


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def here(tmp_path, monkeypatch):
    """*tmp_path*, made the working directory for the test (runs that write files where they run)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path
