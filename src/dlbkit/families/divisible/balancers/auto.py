"""AUTO: the chunking balancer of the next time step chosen by simulating the candidates on what the
last step measured (the decisions; the engines predict: :mod:`dlbkit.families.divisible.sim.auto`)."""

from __future__ import annotations

import math
from numbers import Integral, Real

from dlbkit.errors import ConfigError
from dlbkit.families.divisible.model.view import LoopView
from dlbkit.params import Interval
from dlbkit.families.divisible.balancers.base import ChunkingBalancer
from dlbkit.balancers.registry import REGISTRY, make, names as registered_names, register
from dlbkit.families.divisible.balancers._common import request_driven

__all__ = ["Auto", "DEFAULT_CANDIDATES", "ROBUST_DEFAULT", "SMOOTHING"]

#: every registered self-scheduling rule that runs with its defaults, deterministically (not
#: ``rnd``: one random draw predicts nothing; not ``sanchez``/``proportional``: 004's rules for the
#: rounds mechanism)
DEFAULT_CANDIDATES = ("static", "ss", "fsc", "mfsc", "gss", "tss", "tfss", "fac", "fac2", "wf", "tap", "fiss",
                      "viss", "pls", "af", "awf", "awf-b", "awf-c", "awf-d", "awf-e")
#: weight of the newest step in the smoothed speed shares that the shift trigger compares: one step's
#: measurement on a loaded machine moves a share by ±30% (BENCHMARKS.md); a real change shows at half
#: its size after one step and three quarters after two
SMOOTHING = 0.5
#: the first step's rule, before anything is measured: AWF-C learns unequal or changing speeds within
#: the loop, with FAC2's few chunks (it is dlbkit.map's default; the demo's best at 0.99 efficiency)
ROBUST_DEFAULT = "awf-c"


class _Name:
    """A parameter form: a balancer name (a string), or with *many* a list of them (checked against
    the registry by :meth:`Auto.validate`, which knows every balancer registered by then)."""

    def __init__(self, many: bool = False):
        self.many = many

    def accepts(self, value) -> bool:
        if self.many:
            return isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)
        return isinstance(value, str)

    def __str__(self) -> str:
        return "a list of chunking balancer names" if self.many else "a chunking balancer name"


@register
class Auto(ChunkingBalancer):
    """AUTO: run a robust default, then, between time steps, switch to the candidate whose makespan a
    simulation of the next step predicts to be the lowest.

    Source: simulation-assisted selection of a loop scheduling technique (SimAS: Mohammed & Ciorba,
    "SimAS: a simulation-assisted approach for the scheduling algorithm selection under perturbations",
    Concurrency Computat. Pract. Exper. 2020), here on dlbkit's own simulator with the same balancer
    objects. The rule: step 1 runs *default*. After a step the engine measures every item's cost and
    every worker's speed (as :func:`dlbkit.replay` does) and, when :meth:`due`, simulates each of
    *candidates* on them (:mod:`dlbkit.families.divisible.sim.auto`: a rule that carries state across steps is
    simulated for two steps and judged on the second, so it is judged with what it would have
    learned); :meth:`choose` takes the lowest predicted makespan (ties: the earlier candidate). It is
    due after the first step, every *every* steps after the last evaluation, and whenever a
    worker's share of the measured total speed (smoothed over steps, :data:`SMOOTHING`) moved by more
    than *shift* (relative) from what the last evaluation saw (a load that slows every worker alike
    changes no choice). It keeps the rule
    it runs unless the best prediction beats that rule's by more than *margin* (relative): one
    step's measurements are noisy on a loaded machine, and a switch on noise costs more than it
    gains (BENCHMARKS.md: without it, a real 50-step run switched nearly every step). And
    measurements overrule predictions: when the rule it switched to measures slower than another
    rule's last measured step by more than *margin*, it goes back to that rule and no longer believes
    the slower rule's predictions (``state["distrusted"]``); a shift of the speeds forgets the other
    rules' measurements (they ran on another machine, in effect).
    *max_items* bounds the items a prediction simulates: a longer loop is coarsened into that many
    blocks of consecutive items (costs summed), which keeps a prediction for 10⁵ items on 16 workers
    over every candidate well under a second (BENCHMARKS.md, with the error it costs).

    Within a step AUTO is the rule it chose (``current_``): an engine that does not evaluate (a
    single simulated run) runs *default* throughout. Choices and predictions are the engine's to
    record (``trace.meta["time_steps"][k]["auto"]``).

    Helps: no rule wins everywhere (GSS is poor on unequal workers, AF on uneven items); AUTO follows
    the best one for the measured loop. Backfires: a prediction is only as good as the replay model
    (a step whose costs differ from the last one's is mispredicted), and evaluations cost master time.
    """

    name = "auto"
    source = "simulation-assisted selection (SimAS, Mohammed & Ciorba 2020), on dlbkit's simulator"
    taxonomy = request_driven("measured item costs and worker speeds of the last time step",
                              "the candidate rule predicted best for the next step")
    carries_state = True
    predicts_between_steps = True  # the engines predict between steps (dlbkit.families.divisible.sim.auto.after_step)
    _parameter_constraints = {"default": [_Name()], "candidates": [None, _Name(many=True)],
                              "every": [Interval(Integral, 1, None)],
                              "shift": [Interval(Real, 0, None, closed="neither")],
                              "max_items": [Interval(Integral, 16, None)],
                              "margin": [Interval(Real, 0, 1, closed="left")]}

    def __init__(self, *, default: str = ROBUST_DEFAULT, candidates: list[str] | None = None, every: int = 10,
                 shift: float = 0.25, max_items: int = 2048, margin: float = 0.05):
        self.default = default
        self.candidates = candidates
        self.every = every
        self.shift = shift
        self.max_items = max_items
        self.margin = margin

    # --- the checks of the parameters that name other balancers ----------------------------------
    def candidate_names(self) -> list[str]:
        """The candidates, checked: a non-empty list of distinct names of chunking balancers."""
        names = list(DEFAULT_CANDIDATES if self.candidates is None else self.candidates)
        if not names:
            raise ConfigError(self.param_field("candidates"), [], "a non-empty list of chunking balancer names "
                              "(or None: " + ", ".join(DEFAULT_CANDIDATES) + ")")
        for i, n in enumerate(names):
            self._make(n, self.param_field("candidates", i))
        if len(set(names)) != len(names):
            raise ConfigError(self.param_field("candidates"), names, "distinct names")
        return names

    @staticmethod
    def _make(name: str, field: str) -> ChunkingBalancer:
        cls = REGISTRY.get(name.lower()) if isinstance(name, str) else None
        if cls is None or cls.kind != "chunking" or cls is Auto:  # a typo and a wrong kind alike: what fits
            raise ConfigError(field, name, "the name of a chunking balancer other than auto: "
                              + ", ".join(n for n in registered_names("chunking") if n != "auto"))
        return make(name, {}, field)

    def validate(self):
        super().validate()
        self._make(self.default, self.param_field("default"))
        self.candidate_names()
        return self

    # --- within a step: the chosen rule --------------------------------------------------------------
    def start(self, view, rng=None) -> None:
        super().start(view, rng)
        self.chosen_ = self.default
        self.current_ = self._make(self.default, self.param_field("default"))
        self.current_.start(view, rng)
        self.view_ = view
        self.state_ = self.first_state()  # what it carries (pure data; the engines book into it)
        self.step_ = 0  # steps completed before this one
        self.evaluated_at_ = None  # steps completed at the last evaluation
        self.predictions_ = None  # its [name, predicted makespan], best first

    def chunk(self, view: LoopView, worker: int) -> int:
        return self.current_.chunk(view, worker)

    def allocate(self, view: LoopView) -> list[int]:
        return self.current_.allocate(view)

    def send_order(self, view: LoopView) -> list[int]:
        return self.current_.send_order(view)

    # --- between steps: what the engines ask (on the carried state, pure data) ----------------------
    def observe(self, state: dict, speeds: list[float], measured: float | None = None) -> dict:
        """*state* with the step's measurements booked: its *measured* makespan under the rule it ran
        (the latest per rule, ``state["measured"]``), and each worker's share of the total measured
        *speeds* (a load that slows every worker alike changes no choice), exponentially smoothed with
        weight :data:`SMOOTHING` on the newest step (one step's speeds are noisy on a loaded machine)."""
        if measured is not None and math.isfinite(measured):
            state = {**state, "measured": {**(state.get("measured") or {}), state["chosen"]: float(measured)}}
        total = sum(s for s in speeds if math.isfinite(s) and s > 0)
        shares = [s / total if total > 0 and math.isfinite(s) and s > 0 else math.nan for s in speeds]
        old = state.get("smoothed_shares")
        if old is not None and len(old) == len(shares):
            shares = [n if not math.isfinite(o) else o if not math.isfinite(n) else SMOOTHING * n + (1 - SMOOTHING) * o
                      for n, o in zip(shares, old)]
        state = {**state, "smoothed_shares": shares}
        if self._moved(state) > self.shift and measured is not None:  # the other rules ran on another machine
            state["measured"] = {state["chosen"]: float(measured)}
        return state

    @staticmethod
    def _moved(state: dict) -> float:
        """How far (relative) the largest smoothed speed share moved from the last evaluation's."""
        ref, now = state.get("reference_shares"), state.get("smoothed_shares")
        if ref is None or now is None or len(ref) != len(now):
            return 0.0
        return max((abs(n / r - 1.0) for n, r in zip(now, ref) if r > 0 and math.isfinite(n)), default=0.0)

    def due(self, state: dict) -> str | None:
        """Why the step that just ended (its carried *state*, :meth:`observe`'d) calls for an
        evaluation, or None."""
        if state["evaluated_at"] is None:
            return "first step measured"
        worse = self._regressed(state)
        if worse is not None:
            return f"{state['chosen']} measured slower than {worse}'s last step (by > {self.margin:.0%})"
        if state["step"] - state["evaluated_at"] >= self.every:
            return f"{self.every} steps since the last evaluation"
        moved = self._moved(state)
        if moved > self.shift:
            return f"a worker's share of the measured speed moved by {moved:.0%} (> {self.shift:.0%})"
        return None

    def choose(self, predictions: list[tuple[str, float]], current: str | None = None) -> str | None:
        """The candidate of the lowest predicted makespan (the list's order breaks ties), unless it
        beats *current*'s prediction by less than *margin* (relative): then *current* (measurements
        are noisy: a switch must pay). None if no prediction is finite."""
        finite = [(m, i, n) for i, (n, m) in enumerate(predictions) if math.isfinite(m)]
        if not finite:
            return None
        best_m, _, best = min(finite)
        mine = [m for m, _, n in finite if n == current]
        if mine and best_m > (1.0 - self.margin) * mine[0]:
            return current
        return best

    def _regressed(self, state: dict) -> str | None:
        """The rule whose last measured step beat the current rule's last step by more than *margin*,
        when the current rule was switched to on a prediction (the prediction was wrong), else None."""
        m = state.get("measured") or {}
        used = state["chosen"]
        others = {k: v for k, v in m.items() if k != used}
        if used not in m or not others:
            return None
        best = min(others, key=others.get)
        return best if m[used] > (1.0 + self.margin) * others[best] else None

    def evaluated(self, state: dict, speeds: list[float], predictions: list[tuple[str, float]],
                  seeds: dict) -> dict:
        """The state for the next step after an evaluation: the chosen candidate (:meth:`choose`), and
        when it changes, the state it starts from (*seeds*: candidate → what it carried out of the
        prediction's first simulated step, or None). A rule measured slower than another rule's last
        step by more than *margin* is set aside (``state["distrusted"]``: its predictions are no
        longer believed) and the faster rule measured comes back: measurements overrule predictions."""
        distrusted = list(state.get("distrusted") or [])
        back = self._regressed(state)
        if back is not None:
            distrusted.append(state["chosen"])
        believed = [(n, m) for n, m in predictions if n not in distrusted]
        chosen = back or self.choose(believed, state["chosen"]) or state["chosen"]
        inner = state["inner"] if chosen == state["chosen"] else seeds.get(chosen)
        return {**state, "chosen": chosen, "inner": inner, "evaluated_at": state["step"],
                "reference_speeds": [float(s) for s in speeds],
                "reference_shares": state.get("smoothed_shares"), "distrusted": distrusted,
                "predictions": [[n, float(m)] for n, m in predictions]}

    # --- the state carried across steps (pure data) ------------------------------------------------
    def carry(self, view) -> dict:
        return {**self.state_, "chosen": self.chosen_, "step": self.step_ + 1,
                "inner": self.current_.carry(view) if self.current_.carries_state else None}

    def first_state(self) -> dict:
        """What :meth:`carry` says after a first step run with *default* that carried nothing (a
        one-shot run's recording, advised after the fact)."""
        return {"chosen": self.default, "inner": None, "step": 1, "evaluated_at": None, "reference_speeds": None,
                "predictions": None}

    def resume(self, state: dict) -> None:
        self.state_ = dict(state)  # everything the engines booked (evaluations, smoothed speed shares)
        self.chosen_ = state["chosen"]
        self.step_ = int(state["step"])
        self.evaluated_at_ = state["evaluated_at"]
        self.predictions_ = state["predictions"]
        self.current_ = self._make(self.chosen_, "auto's choice")
        self.current_.start(self.view_, self.rng_)
        if state["inner"] is not None and self.current_.carries_state:
            self.current_.resume(state["inner"])
