"""The spmd family's face: its declaration and ``dlbkit.spmd``/``run_spmd``."""
