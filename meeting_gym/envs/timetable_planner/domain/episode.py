"""One timetable episode: the step pipeline of RULES 3.2, with submit ending the episode.

:class:`TimetableEpisode` is the engine every interface (discrete, text) drives. A step:

1. parse the action (a JSON-like object) or take an already parsed :class:`Action`;
2. validate it: invalid costs :data:`INVALID_PENALTY` (-0.02) with the ``action_error``
   of ``ajay-sreeram/timetable_planner`` (the env this one succeeds), a valid no-op
   :data:`NOOP_PENALTY` (-0.01), otherwise it is applied;
3. every step uses one unit of the step budget (valid, invalid, no-op or submit);
4. score; ``reward = (score - previous score) + penalty``;
5. ``submit_timetable`` ends the episode (``terminated``) and earns :data:`SUBMIT_BONUS`
   (+0.05) if the score is at least :data:`SUBMIT_BONUS_THRESHOLD` (0.90); otherwise the
   step that spends the last unit of budget ends it (``truncated``). A submit on the last
   unit is ``terminated`` only.

**D3 fixed**: the original kept processing actions after a submit's ``done`` and paid
the bonus again on every repeated submit. Here the episode is over: :meth:`step` raises
``RuntimeError`` until a new episode is made. What an env does after the end (the family
raises too) is the env's decision; the original's ``step_budget_exhausted`` replies all
came after the end.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from meeting_gym.envs.timetable_planner.domain.actions import (
    APPLY,
    INVALID,
    NOOP,
    Action,
    Check,
    Rejected,
    check_action,
    parse_action,
)
from meeting_gym.envs.timetable_planner.domain.problem import Problem, problem_of
from meeting_gym.envs.timetable_planner.domain.scenario import Scenario
from meeting_gym.envs.timetable_planner.domain.scoring import Conflicts, Scores, Timetable

__all__ = [
    "INVALID_PENALTY",
    "NOOP_PENALTY",
    "STARTS",
    "SUBMIT_BONUS",
    "SUBMIT_BONUS_THRESHOLD",
    "StepResult",
    "TimetableEpisode",
]

INVALID_PENALTY = -0.02
NOOP_PENALTY = -0.01
SUBMIT_BONUS = 0.05
SUBMIT_BONUS_THRESHOLD = 0.90

STARTS = ("initial", "baseline")
"""Where an episode starts: the scenario's ``initial_assignments`` (empty in all 23 shipped
scenarios, as the original's code does, D2) or its ``baseline_assignments`` (what the
original's README promised for hard and expert)."""


@dataclass(frozen=True)
class StepResult:
    """What one step did, and the state after it."""

    action: Action | None
    """The parsed action (None if parsing failed)."""
    outcome: str
    """``apply``, ``noop`` or ``invalid`` (a parse failure is ``invalid``)."""
    action_error: str | None
    action_penalty: float | None
    """-0.02, -0.01 or None (the bonus is not a penalty and is not included)."""
    submit_bonus: float
    reward: float
    terminated: bool
    truncated: bool
    scores: Scores
    conflicts: Conflicts
    remaining_budget: int

    @property
    def done(self) -> bool:
        return self.terminated or self.truncated


class TimetableEpisode:
    """A timetable being built under a step budget (see the module docstring)."""

    def __init__(self, scenario: Scenario | Problem, start: str = "initial") -> None:
        if start not in STARTS:
            raise ValueError(f"unknown start {start!r}; choose one of {', '.join(STARTS)}")
        self.problem = scenario if isinstance(scenario, Problem) else problem_of(scenario)
        p = self.problem
        if start == "baseline":
            spots = [p.spot_of(b) for b in p.scenario.baseline_assignments]
        else:
            spots = list(p.initial)
        self.start = start
        self.timetable = Timetable(p, spots)
        self.remaining_budget = p.step_budget
        self.step_count = 0
        self.scores = self.timetable.scores()
        self.conflicts = self.timetable.conflicts()
        self.terminated = False
        self.truncated = False
        self.total_reward = 0.0
        self.invalid_actions = 0
        self.noop_actions = 0
        self.last: StepResult | None = None

    @property
    def scenario(self) -> Scenario:
        return self.problem.scenario

    @property
    def done(self) -> bool:
        return self.terminated or self.truncated

    @property
    def score(self) -> float:
        """The current ``overall_score``."""
        return self.scores.overall_score

    def parse(self, raw: Any) -> Action | Rejected:
        """Parse a JSON-like action object against this scenario's day labels."""
        return parse_action(raw, self.problem.day_labels)

    def check(self, action: Action) -> Check:
        """Validate a parsed action against the current timetable; changes nothing."""
        return check_action(self.problem, self.timetable, action)

    def step(self, action: Action | Rejected | Mapping[str, Any] | Any) -> StepResult:
        """Play one action: an :class:`Action`, an action object to parse, or a
        :class:`Rejected` (an action an interface could not read: invalid, with its message)."""
        if self.done:
            raise RuntimeError("the episode is over: start a new one")
        self.step_count += 1
        parsed = action if isinstance(action, Action | Rejected) else self.parse(action)
        bonus = 0.0
        if isinstance(parsed, Rejected):
            outcome, error, penalty, kind = INVALID, parsed.message, INVALID_PENALTY, None
            parsed_action = None
        else:
            parsed_action = parsed
            kind = parsed.action_type
            check = self.check(parsed)
            outcome, error = check.verdict, check.error
            if outcome == INVALID:
                penalty = INVALID_PENALTY
            elif outcome == NOOP:
                penalty = NOOP_PENALTY
            else:
                penalty = 0.0
                self._apply(parsed, check)
        if outcome == INVALID:
            self.invalid_actions += 1
        elif outcome == NOOP:
            self.noop_actions += 1

        self.remaining_budget = max(0, self.remaining_budget - 1)
        previous = self.scores.overall_score
        if outcome == APPLY and kind != "submit_timetable":
            self.scores = self.timetable.scores()
            self.conflicts = self.timetable.conflicts()
        score = self.scores.overall_score
        reward = (score - previous) + penalty
        if kind == "submit_timetable":
            self.terminated = True
            if score >= SUBMIT_BONUS_THRESHOLD:
                bonus = SUBMIT_BONUS
                reward += bonus
        elif self.remaining_budget == 0:
            self.truncated = True
        self.total_reward += reward
        self.last = StepResult(
            action=parsed_action,
            outcome=outcome,
            action_error=error,
            action_penalty=penalty if penalty != 0.0 else None,
            submit_bonus=bonus,
            reward=reward,
            terminated=self.terminated,
            truncated=self.truncated,
            scores=self.scores,
            conflicts=self.conflicts,
            remaining_budget=self.remaining_budget,
        )
        return self.last

    def _apply(self, action: Action, check: Check) -> None:
        table = self.timetable
        kind = action.action_type
        if kind == "assign_session":
            assert check.session is not None and check.spot is not None
            table.place(check.session, check.spot)
        elif kind == "move_session":
            assert check.session is not None and check.spot is not None
            table.move(check.session, check.spot)
        elif kind == "swap_sessions":
            assert check.session is not None and check.target is not None
            table.swap(check.session, check.target)
        elif kind == "unassign_session":
            assert check.session is not None
            table.remove(check.session)
