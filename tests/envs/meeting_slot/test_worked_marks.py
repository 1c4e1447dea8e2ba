"""Marks for a written worked solution (domain/worked_marks.py), step by step.

The reference's own text earns every mark; each kind of mistake a model makes (a clock
copied without its offset, an attendee left out, an answer its last step does not say)
costs exactly the mark of its step.
"""

from __future__ import annotations

import random

import pytest

from meeting_gym.envs.meeting_slot.domain.curated import CURATED_BY_ID
from meeting_gym.envs.meeting_slot.domain.generator import DIFFICULTIES, generate
from meeting_gym.envs.meeting_slot.domain.solver import solve
from meeting_gym.envs.meeting_slot.domain.timeutil import format_utc
from meeting_gym.envs.meeting_slot.domain.worked import worked_solution
from meeting_gym.envs.meeting_slot.domain.worked_marks import FIELDS, WorkedMarks, mark_worked


def reply(scenario, work: str | None = None) -> str:
    gold = solve(scenario).gold
    answer = "NONE" if gold is None else format_utc(gold)
    return f"{worked_solution(scenario) if work is None else work}\n<answer>{answer}</answer>"


def counts(marks: WorkedMarks) -> tuple[int, ...]:
    return (marks.attendees, marks.written, *(marks.count(f) for f in FIELDS))


SCENARIOS = list(CURATED_BY_ID.values()) + [
    generate(random.Random(seed), level) for level in DIFFICULTIES for seed in range(8)
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_the_reference_text_earns_every_mark(scenario):
    marks = mark_worked(reply(scenario), scenario)
    n = len(scenario.attendees)
    assert counts(marks) == (n, n, n, n, n)
    assert marks.starts and marks.earliest and marks.consistent
    assert [(p.name, p.zone) for p in marks.people] == [
        (a.name, a.timezone) for a in scenario.attendees
    ]


def test_a_local_clock_copied_as_utc_costs_that_attendees_working_hours():
    scenario = CURATED_BY_ID["same_tz_empty_busy"]  # two in New York, 09:00-17:00 local
    text = reply(scenario)
    first = next(line for line in text.splitlines() if line.startswith("- Ava "))
    wrong = first.replace("13:00-21:00", "09:00-17:00", 1)
    assert wrong != first
    marks = mark_worked(text.replace(first, wrong), scenario)
    assert counts(marks) == (2, 2, 1, 2, 2)
    assert [p.works for p in marks.people] == [False, True]  # Ava's, not Ben's
    assert marks.starts and marks.earliest and marks.consistent


def test_an_attendee_left_out_is_not_written_and_earns_nothing():
    scenario = CURATED_BY_ID["four_person_summer"]
    text = reply(scenario)
    dropped = "\n".join(line for line in text.splitlines() if not line.startswith("- Jules "))
    marks = mark_worked(dropped, scenario)
    assert counts(marks) == (4, 3, 3, 3, 3)
    [jules] = [p for p in marks.people if not p.written]
    assert jules.name == "Jules" and not (jules.works or jules.busy or jules.free)


def test_an_answer_the_last_step_does_not_say_is_inconsistent():
    scenario = CURATED_BY_ID["overlapping_busy"]
    text = reply(scenario).replace("<answer>2024-03-11T18:00:00Z", "<answer>2024-03-11T03:00:00Z")
    marks = mark_worked(text, scenario)
    assert marks.earliest and marks.consistent is False
    unanswered = mark_worked(worked_solution(scenario), scenario)
    assert unanswered.earliest and unanswered.consistent is None


def test_a_wrong_last_step_that_the_answer_follows_is_consistent_and_wrong():
    scenario = CURATED_BY_ID["no_overlap_ny_kolkata"]  # no start fits
    text = reply(scenario)
    assert "<answer>NONE</answer>" in text
    moved = text.replace(
        "No start fits everyone inside the window.", "The earliest start: 2024-03-11T03:00:00Z"
    ).replace("<answer>NONE", "<answer>2024-03-11T03:00:00Z")
    marks = mark_worked(moved, scenario)
    assert marks.starts and not marks.earliest and marks.consistent is True


@pytest.mark.parametrize(
    "text", ["", "<answer>2024-03-11T13:00:00Z</answer>", "- Ava: works 09:00-17:00"]
)
def test_text_without_steps_earns_no_mark(text):
    marks = mark_worked(text, CURATED_BY_ID["same_tz_empty_busy"])
    assert counts(marks) == (2, 0, 0, 0, 0)
    assert (marks.starts, marks.earliest, marks.consistent) == (False, False, None)


def test_a_count_names_a_field_it_knows():
    marks = mark_worked("", CURATED_BY_ID["same_tz_empty_busy"])
    with pytest.raises(ValueError, match="field must be one of works, busy, free, got 'zone'"):
        marks.count("zone")
