"""The stream family's runtime: its real run: the cluster's nodes (agents) and the client's coordinator."""
