"""The divisible family: a loop of independent items handed out in chunks by a master (004, loop self-scheduling).

Rooms (``docs/design.md``, "A family's rooms"): ``model`` → ``balancers`` → ``sim`` | ``runtime`` → ``face``.
"""
