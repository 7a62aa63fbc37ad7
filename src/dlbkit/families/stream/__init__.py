"""The job-stream family: independent jobs arriving at every node, each placed by its origin (003, Nezha).

Rooms (``docs/design.md``, "A family's rooms"): ``model`` → ``balancers`` → ``sim`` | ``runtime`` → ``face``.
"""
