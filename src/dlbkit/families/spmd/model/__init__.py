"""The spmd family's model: its workload (Spmd, the HNOW model), the view a repartition balancer reads (SpmdView), its trace, bounds and metrics."""
