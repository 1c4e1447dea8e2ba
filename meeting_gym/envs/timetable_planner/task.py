"""TimetablePlanner's task behind the family's seam: scenarios, splits, tools, reward, grading.

The items are :class:`~.scenario.Scenario` objects; the truth of an item is its loaded
:class:`~.problem.Problem` (defaults and disruption applied, indexed), built once. An
episode is a :class:`PlannerEpisode`: the family's :class:`~meeting_gym.core.episode.StepEpisode`
around the domain's step pipeline (:class:`~.episode.TimetableEpisode`), which pays the
reward of ``ajay-sreeram/timetable_planner`` (the env this one succeeds) on every step
(score delta, penalties, submit bonus) and ends itself on a submit (terminated) or when the
step budget runs out (truncated). Its grade reports the seven component scores by name
with the episode's return as ``reward``
(:meth:`~meeting_gym.core.rubric.Rubric.grade_with_reward`); ``overall_score`` is
``info["score"]``. No gymnasium here.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any, ClassVar

from meeting_gym.core.bounded import show
from meeting_gym.core.episode import StepEpisode
from meeting_gym.core.rubric import Grade, Rubric, Term
from meeting_gym.core.task import Setting, Task
from meeting_gym.envs.timetable_planner.domain import catalogue, generator
from meeting_gym.envs.timetable_planner.domain.actions import ACTION_FIELDS, Rejected
from meeting_gym.envs.timetable_planner.domain.episode import (
    STARTS,
    SUBMIT_BONUS,
    SUBMIT_BONUS_THRESHOLD,
    StepResult,
    TimetableEpisode,
)
from meeting_gym.envs.timetable_planner.domain.problem import Problem, problem_of
from meeting_gym.envs.timetable_planner.domain.scenario import DIFFICULTIES, Scenario, content_key
from meeting_gym.envs.timetable_planner.domain.scoring import COMPONENTS, WEIGHTS
from meeting_gym.envs.timetable_planner.tools import TOOLSET
from meeting_gym.envs.timetable_planner.view import reset_text

__all__ = ["RUBRICS", "PlannerEpisode", "TimetablePlannerTask", "content_key"]

_POLICIES = "meeting_gym.envs.timetable_planner.policies"

LABELS = {
    "hard_constraint_score": "hard",
    "coverage_score": "coverage",
    "compactness_score": "compact",
    "room_fit_score": "room_fit",
    "preference_score": "prefer",
    "daily_balance_score": "balance",
    "stability_score": "stable",
}
RUBRICS: Mapping[str, Rubric] = {
    level: Rubric(*(Term(c, WEIGHTS[level][c], LABELS[c]) for c in COMPONENTS))
    for level in DIFFICULTIES
}
"""The seven components with each difficulty's weights (RULES 5.3)."""

MAX_RETURN = 1.0 + SUBMIT_BONUS
"""No return exceeds this: the score is at most 1, never below 0, and one bonus at most."""

SYSTEM_PROMPT = """\
You build a weekly school timetable. Each session (a class of a teacher with a student \
group, of a duration in consecutive slots) is placed at a day, a start slot and a room. \
The first message describes the problem as JSON: days, slots per day, teachers (available \
and preferred slots), groups, rooms (type, capacity, available slots), sessions (teacher, \
group, allowed room types, required capacity, duration, must_schedule) and, for hard and \
expert scenarios, the baseline timetable from before a disruption. Every later message \
shows the state: the timetable, unscheduled must_schedule sessions, conflict counts, \
scores and the remaining step budget.

Act with one of five actions per call (tool calls, or a JSON action object such as \
{"action_type": "assign_session", "session_id": "S1", "day": 0, "start_slot": 1, \
"room_id": "R2"}): assign_session, move_session, swap_sessions (exchanges day, start and \
room of two placed sessions), unassign_session, submit_timetable. Every action uses one \
unit of the step budget. The reward of an action is the change of the overall score; an \
invalid action costs 0.02 and an action that changes nothing 0.01. submit_timetable ends \
the episode and earns 0.05 more if the overall score is at least 0.90; running out of \
budget ends it too.

The overall score (0 to 1) weighs, by difficulty: hard constraints (no teacher, group or \
room in two places at once; from medium on also rooms of an allowed type, big enough, and \
teachers and rooms available), coverage of must_schedule sessions, compactness (few gaps \
in a teacher's or group's day), room fit (room capacity close to the need), teacher \
preferences, a balanced number of sessions per day and, for hard and expert, stability \
(sessions kept exactly where the baseline had them). Place every session without \
conflicts, then submit."""


class PlannerEpisode(StepEpisode):
    """A family episode around the step pipeline: it pays each step's reward as it comes.

    ``engine`` is the :class:`~.episode.TimetableEpisode`; :meth:`play` runs one action
    on it. ``calls`` records every action played as (action_type, action object,
    action_error); its length is the number of actions (the evaluation's "tool calls").
    """

    action_fields = ACTION_FIELDS
    stats = ("steps", "invalid_actions", "noop_actions", "submitted")
    truncation_note = "step budget used up before a submit; scored as the timetable stood"

    def __init__(self, task: TimetablePlannerTask, item: Scenario, truth: Problem | None = None):
        super().__init__(task, item, truth)
        self.engine = TimetableEpisode(self.truth, start=task.start)

    @property
    def done(self) -> bool:
        return self.engine.done

    @property
    def truncated(self) -> bool:
        return self.engine.truncated

    def play(self, action: Any) -> StepResult:
        """Play one action (an :class:`~.actions.Action`, a JSON-like object or a
        :class:`~.actions.Rejected`); raises ``RuntimeError`` once the episode is over."""
        result = self.engine.step(action)
        self.pay(result.reward)
        kind = result.action.action_type if result.action is not None else "invalid"
        shown = result.action.to_dict() if result.action is not None else _shown(action)
        self.calls.append((kind, shown, result.action_error or ""))
        return result

    def act_text(self, action: Mapping[str, Any]) -> str:
        """Play one action object and return its result as text (the tools' body)."""
        from meeting_gym.envs.timetable_planner.view import step_text

        self.play(action)
        return step_text(self.engine)

    def step_info(self) -> dict[str, Any]:
        """The info entries of every step: the original's per-step fields."""
        engine = self.engine
        last = engine.last
        return {
            "score": engine.scores.overall_score,
            "score_breakdown": engine.scores.as_dict(),
            "conflict_summary": engine.conflicts.as_dict(),
            "remaining_step_budget": engine.remaining_budget,
            "outcome": None if last is None else last.outcome,
            "action_error": None if last is None else last.action_error,
            "action_penalty": None if last is None else last.action_penalty,
        }

    def outcome(self) -> dict[str, Any]:
        engine = self.engine
        task = self.task
        grade: Grade = task.rubric_for(self.item).grade_with_reward(
            engine.total_reward, **engine.scores.components()
        )
        out: dict[str, Any] = grade.as_dict()
        out["score"] = engine.scores.overall_score
        out["gold"] = self.gold
        out["answered"] = engine.terminated
        out["answer"] = f"{engine.scores.overall_score:.4f}" + (
            "" if engine.terminated else " (no submit)"
        )
        out["submitted"] = engine.terminated
        out["steps"] = engine.step_count
        out["invalid_actions"] = engine.invalid_actions
        out["noop_actions"] = engine.noop_actions
        return out


def _shown(action: Any) -> Any:
    if isinstance(action, Rejected):
        return action.message
    if isinstance(action, Mapping):
        return {str(k)[:100]: v for k, v in list(action.items())[:10]}
    return show(action, 200)


class TimetablePlannerTask(Task[Scenario, Problem]):
    """Build a weekly timetable under teacher, group and room constraints (see the env).

    Items are scenarios: ``curated`` is the original's 15 hand-crafted ones,
    ``generated`` (a fixed split) its 8 generated ones, ``train`` and ``eval`` draws of
    the original's generator from seeds (never one of those 23). Reset options:
    ``scenario_id`` (any of the 23; it wins over ``task_name``, as in the original),
    ``task_name`` (the first hand-crafted scenario of that difficulty: the
    original's meaning, for old clients), ``scenario`` (a scenario dict or object of
    your own); the family's ``difficulty`` draws a generated scenario of that
    difficulty. An unknown id or difficulty raises ``ValueError`` (D7 fixed).
    """

    summary = "build a weekly timetable: place sessions under teacher, group and room constraints"
    difficulties = DIFFICULTIES
    rubric: ClassVar[Rubric] = RUBRICS["hard"]
    max_reward = MAX_RETURN
    toolset = TOOLSET
    # submit_timetable ends an episode (not an <answer> block); each step pays its reward
    episode_class = PlannerEpisode
    max_turns = 100_000
    id_key = "scenario_id"
    policies: ClassVar[Mapping[str, str]] = {
        "solver": f"{_POLICIES}:SolverPolicy",
        "greedy": f"{_POLICIES}:GreedyPolicy",
        "random": f"{_POLICIES}:RandomPolicy",
        "empty": f"{_POLICIES}:EmptyPolicy",
    }
    reference_policy = "solver"
    reset_options = frozenset({"scenario", "scenario_id", "task_name"})
    settings = (
        Setting(
            "start",
            "where an episode starts: 'initial' (the scenario's initial_assignments, empty in "
            "all 23, as the original's code) or 'baseline' (hard/expert: the disrupted "
            "baseline, as its README said)",
            choices=STARTS,
        ),
    )
    bench = "meeting_gym.bench.timetable_planner:plan"

    def __init__(self, difficulty: str | None = None, start: str = "initial") -> None:
        super().__init__(difficulty)
        self.start = self.check_setting("start", start)

    def config(self) -> dict[str, Any]:
        return {"difficulty": self.difficulty, "start": self.start}

    # ------------------------------------------------------------------ items

    def generate(self, rng: random.Random, difficulty: str | None) -> Scenario:
        return generator.generate(rng, difficulty)

    def curated(self) -> Sequence[Scenario]:
        return catalogue.handcrafted()

    def fixed_splits(self) -> dict[str, Sequence[Scenario]]:
        return {"curated": self.curated(), "generated": catalogue.generated()}

    def eval_prefix(self) -> Sequence[Scenario]:
        # eval is generated held-out scenarios only: the 23 catalogue ones are known by id
        return ()

    def key(self, item: Scenario) -> str:
        return _key(item)

    def item_id(self, item: Scenario) -> str:
        return item.scenario_id

    def load_item(self, value: Any) -> Scenario:
        return value if isinstance(value, Scenario) else Scenario.from_dict(value)

    def item_from_options(self, options: Mapping[str, Any]) -> Scenario | None:
        if "scenario" in options:
            if "scenario_id" in options or "task_name" in options:
                raise ValueError('give reset option "scenario" or "scenario_id"/"task_name"')
            return self.load_item(options["scenario"])
        scenario_id = options.get("scenario_id")
        if isinstance(scenario_id, str) and not scenario_id.strip():
            scenario_id = None  # as in the original: a blank id counts as absent
        if scenario_id is not None:
            if not isinstance(scenario_id, str):
                raise ValueError(f"scenario_id must be a string, got {scenario_id!r}")
            try:
                return catalogue.get_scenario(scenario_id.strip())
            except catalogue.UnknownScenario as exc:
                raise ValueError(str(exc)) from None
        task_name = options.get("task_name")
        if task_name is not None:
            try:
                return catalogue.first_of_difficulty(task_name)
            except catalogue.UnknownScenario as exc:
                raise ValueError(str(exc)) from None
        return None

    # ------------------------------------------------------------------ ground truth

    def rubric_for(self, item: Scenario) -> Rubric:
        return RUBRICS[item.task_name]

    def truth(self, item: Scenario) -> Problem:
        return problem_of(item)

    def best_known(self, item: Scenario) -> dict[str, Any] | None:
        """The solver's documented result on this scenario (one of the 23), or None."""
        from meeting_gym.envs.timetable_planner.domain.best import known_best

        return known_best().get(self.key(item))

    def turns_for(self, item: Scenario) -> int:
        # every turn plays at least one action (an unreadable one included), and every
        # action spends a unit of the step budget: no episode outlasts its budget
        return min(self.max_turns, item.step_budget)

    def max_reward_for(self, item: Scenario) -> float | None:
        """The solver's return on a scenario of the catalogue (its documented result);
        None for any other scenario (every return is below :data:`MAX_RETURN`)."""
        best = self.best_known(item)
        if best is None:
            return None
        start = TimetableEpisode(problem_of(item), self.start).score
        bonus = SUBMIT_BONUS if best["score"] >= SUBMIT_BONUS_THRESHOLD else 0.0
        return best["score"] - start + bonus

    def gold(self, item: Scenario, truth: Problem) -> str:
        """The best known overall score (the solver's, for the 23 catalogue scenarios)."""
        best = self.best_known(item)
        return "" if best is None else f"{best['score']:.4f}"

    # ------------------------------------------------------------------ what the agent sees

    def question(self, item: Scenario) -> str:
        return reset_text(TimetableEpisode(problem_of(item), self.start))

    def system_prompt(self) -> str:
        return SYSTEM_PROMPT

    def reset_info(self, item: Scenario) -> dict[str, Any]:
        return {"task_name": item.task_name, "step_budget": item.step_budget}

    def row_info(self, item: Scenario) -> dict[str, Any]:
        return {"scenario": item.to_dict(), "start": self.start}


@cache
def _catalogue_keys() -> dict[int, str]:
    return {id(s): content_key(s) for s in (*catalogue.handcrafted(), *catalogue.generated())}


def _key(item: Scenario) -> str:
    known = _catalogue_keys().get(id(item))
    return known if known is not None else content_key(item)
