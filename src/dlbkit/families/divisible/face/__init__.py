"""The divisible family's face: its declaration, ``dlbkit.map``/``run_map`` and ``dlbkit.Loop``."""
