"""Workload families, each declared once (:mod:`.registry`): divisible loops, task trees, SPMD domains, task graphs, job streams.

Adding a family: write its workload (``dlbkit.model``), view, balancers, engine (``dlbkit.sim``) and
real-run runner (``dlbkit.runtime``), then one module here that builds its :class:`Family` and calls
:func:`register`, and one line below. Nothing in the face layer's dispatch changes.
"""

from dlbkit.families.registry import FAMILIES, Engine, Family, get, names, of, register

from dlbkit.families import divisible, tree, spmd, graph, stream  # noqa: E402,F401,I001  (one line per family; this order is the listing's)

__all__ = ["Engine", "Family", "register", "get", "names", "of", "FAMILIES"]
