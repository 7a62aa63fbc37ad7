"""The task-tree family: tasks that spawn tasks (divide and conquer, branch and bound), moved between nodes (001).

Rooms (``docs/design.md``, "A family's rooms"): ``model`` → ``balancers`` → ``sim`` | ``runtime`` → ``face``.
"""
