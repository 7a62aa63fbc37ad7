"""The SPMD family: a decomposed domain iterated with boundary exchanges; data points move between parts (000).

Rooms (``docs/design.md``, "A family's rooms"): ``model`` → ``balancers`` → ``sim`` | ``runtime`` → ``face``.
"""
