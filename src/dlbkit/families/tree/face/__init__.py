"""The tree family's face: its declaration and ``dlbkit.tree``/``run_tree``."""
