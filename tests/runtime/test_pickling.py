"""What cannot be pickled is reported per item (or task), naming it and the pickling problem:
never "every worker died", never a multiprocessing traceback."""

import threading

import numpy as np
import pytest

import dlbkit
from dlbkit import ConfigError, TaskError
from dlbkit.runtime.backends.base import unpicklable


def lock_at_3(x):
    return threading.Lock() if x == 3 else x


def lock_always(x):
    return threading.Lock()


def test_a_result_that_cannot_be_pickled_names_its_item_and_the_reason():
    with pytest.raises(TaskError) as info:
        dlbkit.map(lock_at_3, range(8), workers=2, balancer="ss")
    e = info.value
    assert e.index == 3
    msg = str(e)
    assert msg.startswith("item 3 failed: PicklingError: the result of lock_at_3 cannot be pickled")
    assert "cannot pickle '_thread.lock' object" in msg
    assert "every worker died" not in msg and "\n" not in msg


def test_every_result_unpicklable_is_still_one_item_not_dead_workers():
    with pytest.raises(TaskError, match=r"^item \d+ failed: PicklingError: the result of lock_always"):
        dlbkit.map(lock_always, range(20), workers=2)


def test_a_function_that_spawn_cannot_send_is_refused_before_any_worker_starts():
    with pytest.raises(ConfigError, match=r"^fn must be picklable with start method 'spawn'.*; got "):
        dlbkit.run_map(lambda x: x, range(3), workers=2, start_method="spawn")
    with pytest.raises(ConfigError, match=r"^step must be picklable with start method 'spawn'"):
        dlbkit.run_spmd(lambda u: u[1:-1], np.zeros(6), iterations=1, workers=2, balancer=None,
                        start_method="spawn")
    with pytest.raises(ConfigError, match=r"^expand must be picklable with start method 'spawn'"):
        dlbkit.run_tree(lambda n: ([], 1), 0, workers=2, start_method="spawn")


def test_fork_needs_no_pickling_of_the_function():
    assert dlbkit.map(lambda x: x + 1, range(3), workers=2) == [1, 2, 3]


class Unpicklable:
    def __init__(self, depth):
        self.depth = depth
        self.lock = threading.Lock()

    def __repr__(self):
        return f"Unpicklable({self.depth})"


def wide(task):
    depth = task if isinstance(task, int) else task.depth
    if depth >= 3:
        return [], 1
    return [Unpicklable(depth + 1) for _ in range(40)], 1


def test_a_tree_task_that_cannot_move_names_the_task():
    with pytest.raises(TaskError) as info:
        dlbkit.tree(wide, 0, workers=2)
    assert str(info.value).startswith("task Unpicklable(") and info.value.what == "task"
    assert "a task created by expand cannot be pickled" in str(info.value)


def value_lock(n):
    return ([n + 1] if n < 3 else []), threading.Lock()


def keep_first(a, b):
    return a


def test_a_tree_value_that_cannot_be_pickled_is_named():
    with pytest.raises(TaskError, match=r"^worker 0's value failed: PicklingError: the value folded from worker 0's "
                       r"tasks cannot be pickled") as info:
        dlbkit.tree(value_lock, 0, workers=1, combine=keep_first)
    assert (info.value.what, info.value.index) == ("value", 0)


def test_unpicklable_says_why():
    assert unpicklable([1, "a"]) is None
    assert unpicklable(threading.Lock()) == "TypeError: cannot pickle '_thread.lock' object"


def refuse_3(x):
    if x == 3:
        raise ConfigError("size", x, "an even number")
    return x


def test_dlbkits_own_errors_cross_processes_whole():
    """Exception's own pickling re-calls ``__init__`` with the message alone, which ConfigError (three
    arguments) and TaskError (three) refused: a ConfigError raised in a worker reached the caller as
    traceback text only. Now both round-trip with every field and their notes."""
    import pickle
    e = ConfigError("balancer", "gsss", "a balancer", suggest="gss")
    e.add_note("in grid point x=1")
    back = pickle.loads(pickle.dumps(e))
    assert (str(back), back.field, back.value, back.allowed, back.suggest, back.__notes__) == \
        (str(e), "balancer", "gsss", "a balancer", "gss", ["in grid point x=1"])
    t = TaskError((13, 3), "ValueError: x", "traceback text", what="task", label="task (13, 3)")
    back = pickle.loads(pickle.dumps(t))
    assert (str(back), back.index, back.error, back.what, back.label, back.remote_traceback) == \
        ("task (13, 3) failed: ValueError: x", (13, 3), "ValueError: x", "task", "task (13, 3)", "traceback text")
    with pytest.raises(TaskError) as err:
        dlbkit.map(refuse_3, range(6), workers=2)
    assert isinstance(err.value.__cause__, ConfigError) and err.value.__cause__.field == "size"
    assert str(err.value) == "item 3 failed: ConfigError: size must be an even number; got 3"
