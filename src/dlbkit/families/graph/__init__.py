"""The task-graph family: a DAG of tasks mapped onto heterogeneous processors (002; Topcuoglu 2002).

Rooms (``docs/design.md``, "A family's rooms"): ``model`` → ``balancers`` → ``sim`` | ``runtime`` → ``face``.
"""
