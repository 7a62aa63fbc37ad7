"""Message kinds of the real runtime (first element of every message tuple).

Coordinator → worker: ``(WORK, first, count, items_or_None)``, ``(STOP,)``.
Worker → coordinator: ``(READY, t)`` once at start, ``(DONE, first, count, results, t_start, t_end,
busy, sq_item_time)`` after each chunk (it doubles as the next request), ``(ERROR, index, exc_bytes,
traceback_text)`` when the user's function raised. The transport adds ``(DIED, exitcode)``.
"""

READY = "ready"
WORK = "work"
DONE = "done"
ERROR = "error"
STOP = "stop"
DIED = "died"
