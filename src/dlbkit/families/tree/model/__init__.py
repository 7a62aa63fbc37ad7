"""The tree family's model: its workloads (TaskTree, FlatTasks), the view a migration balancer reads (TreeView), back-off, Haron's metrics."""
