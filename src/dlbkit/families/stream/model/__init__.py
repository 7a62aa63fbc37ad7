"""The stream family's model: its workload (Stream, Demand), the queues' statistics and the view a placement balancer reads."""
