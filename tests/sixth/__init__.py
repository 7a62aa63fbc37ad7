"""The sixth family, *bags*: a bag of independent tasks of known sizes, each placed on a node by one
dispatcher that reads the nodes' loads. It lives under ``tests/`` to prove the house: a family is one
package with the rooms of ``docs/design.md`` ("A family's rooms") plus one registration line, and needs
no edit of a shared module. ``import sixth.face.family`` (or ``dlbkit … --import sixth.face.family``)
registers it and its balancers.

Rooms: ``model`` → ``balancers`` → ``sim`` | ``runtime`` → ``face``, as in ``dlbkit.families.<family>``.
"""
