"""The graph family's model: its workload (TaskGraph), costs, evaluation of a plan, generators, bounds and the views of mappers."""
