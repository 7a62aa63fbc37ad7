"""The graph family's runtime: its real run: the coordinator's rules, the worker loop, the user's tasks checked."""
