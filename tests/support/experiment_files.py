"""Experiment files shared by the CLI and experiments tests."""

TINY = """
name = "tiny"
description = "two balancers on a three-node platform"
repetitions = 3
seed = 7

[platform]
nodes = [
  {name = "m", speed = 1.0},
  {name = "a", speed = 1.0},
  {name = "b", speed = 2.0, availability = {kind = "pulse", start = 5.0, duration = 10.0, level = 0.5}},
]
network = {latency = 1e-3, bandwidth = 1e8}

[workload]
kind = "divisible"
items = 120
cost = {dist = "uniform", low = 0.5, high = 1.5}

[engine]
master = "m"

[[balancers]]
name = "ss"

[[balancers]]
name = "static"
label = "STATIC"
"""
