"""The runtime's families: each supplies its coordinator rules and worker loop as a
:class:`~dlbkit.runtime.backends.base.Family`, and a runner that the backends execute.

* :mod:`.map`: a chunking balancer hands chunks of items to a user's function.
* :mod:`.tree`: a task tree grown by the user's ``expand``, balanced by migration.
* :mod:`.spmd`: 1-D decomposed iterations of a user's ``step``, balanced by repartition.
"""
