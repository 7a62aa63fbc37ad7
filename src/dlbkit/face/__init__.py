"""The face: what a user runs. The command line, experiment files (sweeps, reports, figures), the
reproductions of the documents' tables, ``dlbkit.simulate``, ``replay``, ``advise`` and the reference-model
benchmarks. It dispatches to the families through the registry (``dlbkit.families``); the places that still
name a family are listed in ``tests/test_family_names.py``.
"""
