"""The bags family's simulated engine."""
