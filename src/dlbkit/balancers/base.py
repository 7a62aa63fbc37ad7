"""Balancer base classes: a balancer decides, an engine does.

A balancer is a :class:`~dlbkit.params.Parameterised` object: keyword-only parameters stored
unchanged, declared constraints, ``get_params``/``set_params``/``clone``. Learned state ends in ``_``
and is reset by ``start(view)``, which engines call before the first decision of every run.
Randomised balancers draw only from the Generator the engine passes to ``start``.
"""

from __future__ import annotations

from abc import ABC
from dataclasses import asdict, dataclass
from typing import ClassVar

import numpy as np

from dlbkit.params import Parameterised

__all__ = ["Taxonomy", "Balancer", "start_step", "end_step", "Transfer"]


@dataclass(frozen=True)
class Taxonomy:
    """Where a balancer sits on the axes of notes/overview.md §3 (after Osman 2003 §2.5, Haron §2.4).

    *initiation*: who triggers a decision (sender, receiver, periodic, master, arrival);
    *location*: where it is made (central, distributed, hybrid);
    *information*: what it uses (none, local, neighbourhood, global; and how fresh);
    *transfer*: the rule that sets how much work moves; *selection*: which work moves.
    """

    initiation: str
    location: str
    information: str
    transfer: str
    selection: str

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


class Balancer(Parameterised, ABC):
    """Root of every balancer. Subclasses set ``name``, ``kind``, ``source`` and ``taxonomy``."""

    name: ClassVar[str] = ""
    kind: ClassVar[str] = ""
    source: ClassVar[str] = ""
    taxonomy: ClassVar[Taxonomy]
    #: how an error names a balancer of this kind where "a <kind> balancer" does not read (set on a kind's base)
    kind_noun: ClassVar[str] = ""
    #: where balancers of this kind run, for an error that refuses one where another kind is asked for
    #: (set on a kind's base)
    kind_use: ClassVar[str] = ""

    #: True for rules that learn, in one run of a loop, something worth keeping for the next run of
    #: the same loop (a time step): engines then hand :meth:`carry`'s data to :meth:`resume`.
    carries_state: ClassVar[bool] = False
    #: True for rules that choose, between time steps, from a simulated prediction of the next step
    #: (``auto``). Pure data: an engine that runs time steps then calls the one shared predictor,
    #: :func:`dlbkit.families.divisible.sim.auto.after_step`, after each step, which measures the step and asks the
    #: balancer, on its carried state, through its ``observe``, ``due``, ``candidate_names``,
    #: ``max_items`` and ``evaluated`` (see :class:`~dlbkit.families.divisible.balancers.auto.Auto`); the
    #: engine never looks at a balancer's name. Implies :attr:`carries_state`.
    predicts_between_steps: ClassVar[bool] = False

    def start(self, view, rng: np.random.Generator | None = None) -> None:
        """Validate parameters and reset learned state before a run (engines call this)."""
        self.validate()
        self.rng_ = rng

    # --- state carried from one time step to the next (pure data; engines only pass it along) ---
    def carry(self, view) -> dict | None:
        """What this balancer learned in the run that just ended, as pure data (numbers and lists of
        numbers), for the next time step of the same loop; *view* is the run's view as it ended.
        None: nothing to carry (the default; rules that learn across steps set :attr:`carries_state`)."""
        return None

    def resume(self, state: dict) -> None:
        """Take up *state*, :meth:`carry`'s data from the previous time step; engines call it right
        after :meth:`start` (which reset the learned state) and before the first decision."""


def start_step(balancer: Balancer, view, rng, state: dict | None) -> None:
    """Start *balancer* for a run that is one time step of a loop: :meth:`Balancer.start`, then
    :meth:`Balancer.resume` with the previous step's *state* (None for the first step, or a rule
    that carries nothing). The one call every engine makes at a step's start."""
    balancer.start(view, rng)
    if state is not None and balancer.carries_state:
        balancer.resume(state)


def end_step(balancer: Balancer, view) -> dict | None:
    """The state *balancer* carries to the next step (:meth:`Balancer.carry`), or None."""
    return balancer.carry(view) if balancer.carries_state else None


def whole(answer) -> int:
    """A rule's numeric *answer* as an int (its integer part); TypeError, ValueError or OverflowError
    for None, NaN, infinity or anything else ``int()`` refuses, and for text even when it spells a
    number (``int("12")`` would take it). Callers turn these into the ConfigError naming the rule."""
    if isinstance(answer, (str, bytes, bytearray)):
        raise TypeError(answer)
    return int(answer)



@dataclass(frozen=True)
class Transfer:
    """Move up to *n* waiting tasks from node *src* to node *dst* (the *n* oldest: migration is FIFO).

    Returned by :meth:`MigrationBalancer.balance`; as a request from :meth:`MigrationBalancer.on_idle`
    (``src`` the victim, ``dst`` the asking node) ``n`` is the amount wanted, 0 meaning "whatever the
    victim's :meth:`~MigrationBalancer.on_request` gives". Engines clamp ``n`` to what *src* holds.
    ``step`` orders a periodic decision's transfers into exchange steps (GDEM: the colour index;
    Loadserver: the LIS round), applied in order; 0 for rules with a single step.
    """

    src: int
    dst: int
    n: int = 0
    step: int = 0





