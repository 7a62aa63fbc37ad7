"""The divisible family's model: its workload (Divisible, CostModel), the view a chunking balancer reads (LoopView) and time steps."""
