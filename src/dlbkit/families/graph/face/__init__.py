"""The graph family's face: its declaration, ``dlbkit.graph``/``run_graph`` and ``dlbkit.schedule``."""
