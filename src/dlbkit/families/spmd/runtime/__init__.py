"""The spmd family's runtime: its real run: the coordinator's rules and the worker loop."""
