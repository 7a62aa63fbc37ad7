"""The bags family's real run: a backend's program (coordinator rules and worker loop)."""
