"""The suite's xdist groups hold: a module whose tests share an expensive fixture runs on one worker.

Every expensive module fixture (a reduced reproduction, a Dask cluster) and the full reproductions'
rows (``support.reproductions``) are made once only if pytest-xdist's ``--dist loadgroup`` keeps an
``xdist_group`` on one worker. It does so by appending ``@group`` to the test's node id; pytest 9.2 made
the node id read-only to that, and every group was silently split (each module fixture made on both
workers, the full tier about twice as long). This fails when the suffix does not reach the scheduler.
"""

import pytest


@pytest.mark.xdist_group("xdist_groups")
def test_an_xdist_group_mark_reaches_the_scheduler(request):
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("not an xdist worker under --dist loadgroup")
    assert request.node.nodeid.endswith("@xdist_groups"), request.node.nodeid
