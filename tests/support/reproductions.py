"""Each reproduction's full run made once per test process.

A full ``osman2003`` run is minutes of CPU on two shared cores, ``haron1998`` one and a half; the
module's full-tier tests, the README's counts and the CLI's ``--json`` test read the same rows. A
module-scoped fixture would be made again whenever xdist hands the process another module's test in
between (the full tier once made osman2003's three times), so the rows are kept by the process, and the
tests that read them share an ``xdist_group`` so that they land on one process.
"""

import functools


@functools.cache
def _full(name: str) -> tuple:
    from dlbkit.face.reproduce import run

    return tuple(run(name))


def full_claims(name: str) -> list:
    """The rows of ``dlbkit reproduce NAME`` (a new list each call; the rows themselves are shared)."""
    return list(_full(name))
