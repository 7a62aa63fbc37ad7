"""The stream family's face: its declaration and ``dlbkit.Cluster``."""
