"""The bags family's model: its workload, its view, its random streams and its own metric."""
