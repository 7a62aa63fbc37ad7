"""The divisible family's runtime: its real run: the map's coordinator rules and worker loop, a persistent pool's steps."""
