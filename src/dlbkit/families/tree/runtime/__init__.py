"""The tree family's runtime: its real run: the coordinator's rules, the worker loop, the load table."""
