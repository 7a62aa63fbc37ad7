"""Shared fixtures (a small heterogeneous platform, a view, a seeded generator, a working directory),
the hypothesis profiles of the two tiers, and the check that no test leaves a process behind.

The tiers (README, "The two commands"): ``make test`` runs every test not marked ``full``, with the
``fast`` hypothesis profile; ``make test-all`` runs every test with the ``full`` profile, and is what
CI runs. Helpers shared by several test modules live in :mod:`support`, never in a test module.
"""

import os
import signal

# Dask's worker profiler samples every thread of its process every 10 ms. The tests' in-process Dask
# clusters (LocalCluster(processes=False), up to 8 workers beside the scheduler, the client and dlbkit's
# coordinator in one process) then starved the coordinator of the GIL under a loaded CI: strace showed its
# thread waiting for the GIL for 30 minutes while a worker's IO loop ran Worker.trigger_profile, and the
# test's own timeout could not fire. Set before anything imports dask; the tests measure dlbkit, not it.
os.environ.setdefault("DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED", "False")

import numpy as np
import pytest
from hypothesis import settings

from dlbkit import Divisible, LoopView, Network, Node, Platform, Pulse

from support import profiles
from support.processes import Watch

# registered and loaded here, before collection, so that a module's ``examples(n)`` reads the tier's
# profile; ``--hypothesis-profile=full`` (hypothesis' own option, read in its configure step after
# this) switches to the full tier
profiles.register()
settings.load_profile(profiles.FAST)

# A shell starts a background job (`make test-all &`, nohup in a script, a CI runner's step) with SIGINT
# ignored, and an ignored signal stays ignored in every process started from it: the tests that press
# Ctrl-C on a child (a map, a Cluster's client, an mpiexec job) then saw it ignored and failed or hung,
# which read as "fails under load". The suite runs as if started from a terminal.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


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


@pytest.fixture(autouse=True)
def no_process_left_behind(request):
    """Fail the test that leaves a process running (killing it first), so that it cannot slow or
    break the tests after it (:mod:`support.processes`)."""
    watch = Watch(request.node.nodeid)
    watch.start()
    yield
    left = watch.leaked()
    if left:
        pytest.fail(f"{len(left)} process(es) the test started outlived it (killed now): " + "; ".join(left),
                    pytrace=False)
