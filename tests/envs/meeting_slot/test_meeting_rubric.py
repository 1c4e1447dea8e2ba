"""Rubric tables: every accepted and rejected spelling, and the documented scores."""

from __future__ import annotations

import pytest
from scenarios import utc

from meeting_gym.envs.meeting_slot.domain.curated import CURATED_BY_ID
from meeting_gym.envs.meeting_slot.domain.solver import solve
from meeting_gym.envs.meeting_slot.domain.timeutil import format_utc
from meeting_gym.envs.meeting_slot.rubric import NONE, grade, parse_answer

GOLD = "2024-03-11T13:00:00Z"

ACCEPTED = [
    "2024-03-11T13:00:00Z",
    "2024-03-11T13:00Z",
    "2024-03-11 13:00:00Z",
    "2024-03-11 13:00",
    "2024-03-11T13:00:00+00:00",
    "2024-03-11T13:00+00:00",
    "2024-03-11 13:00:00 UTC",
    "2024-03-11T13:00 utc",
    "2024-03-11t13:00:00z",
    "  2024-03-11T13:00:00Z \n",
    "2024-03-11T13:00:00",
]

REJECTED = [
    "2024-03-11T13:00:30Z",  # non-zero seconds
    "2024-03-11T13:00:00.000Z",  # fractional seconds
    "2024-03-11T14:00:00+01:00",  # other offset, same instant
    "2024-03-11T09:00:00-04:00",
    "2024-03-11T13:00:00 EST",
    "2024-03-11T13:00:00Z please",
    "The answer is 2024-03-11T13:00:00Z",
    "2024-03-11T13:00:00ZZ",
    "2024-3-11T13:00:00Z",
    "2024-03-11T1:00:00Z",
    "2024-03-11T24:00:00Z",
    "2024-02-30T13:00:00Z",
    "2024-03-11T13:60Z",
    "2024-03-11",
    "13:00",
    "",
    "NONE.",
    "N/A",
    "1710162000",
]


@pytest.mark.parametrize("text", ACCEPTED)
def test_accepted_spellings(text):
    assert parse_answer(text) == utc(GOLD)


@pytest.mark.parametrize("text", REJECTED)
def test_rejected_spellings(text):
    assert parse_answer(text) is None


@pytest.mark.parametrize("text", ["NONE", "none", " None ", "nOnE"])
def test_none_any_case(text):
    assert parse_answer(text) == NONE


SOLUTION = solve(CURATED_BY_ID["same_tz_empty_busy"])  # gold 13:00Z, NY 09:00-17:00
NONE_SOLUTION = solve(CURATED_BY_ID["no_overlap_ny_kolkata"])

# (text, solution, (exact, format, partial, reward))
SCORES = [
    (f"<answer>{GOLD}</answer>", SOLUTION, (1, 1, 0, 1.2)),
    ("<ANSWER>2024-03-11 13:00</Answer>", SOLUTION, (1, 1, 0, 1.2)),
    ("< answer >2024-03-11T13:00Z</ answer >", SOLUTION, (1, 1, 0, 1.2)),
    ("thinking... <answer>\n2024-03-11T13:00:00Z\n</answer> done", SOLUTION, (1, 1, 0, 1.2)),
    ("<answer>2024-03-11T14:00:00Z</answer>", SOLUTION, (0, 1, 0.5, 0.3)),
    ("<answer>2024-03-11T05:00:00Z</answer>", SOLUTION, (0, 1, 0, 0.2)),
    ("<answer>NONE</answer>", SOLUTION, (0, 1, 0, 0.2)),
    ("<answer>none</answer>", NONE_SOLUTION, (1, 1, 0, 1.2)),
    ("<answer>2024-03-11T13:00:00Z</answer>", NONE_SOLUTION, (0, 1, 0, 0.2)),
    ("<answer>2024-03-11T09:00:00-04:00</answer>", SOLUTION, (0, 1, 0, 0.2)),
    ("<answer>2024-03-11T13:00:30Z</answer>", SOLUTION, (0, 1, 0, 0.2)),
    ("<answer>2024-03-11T14:00:00.5Z</answer>", SOLUTION, (0, 1, 0, 0.2)),
    ("<answer>2024-03-12T13:00:00Z</answer>", SOLUTION, (0, 1, 0, 0.2)),  # outside window
    ("<answer>garbage</answer>", SOLUTION, (0, 1, 0, 0.2)),
    ("<answer></answer>", SOLUTION, (0, 1, 0, 0.2)),
    (GOLD, SOLUTION, (0, 0, 0, 0.0)),  # no tags
    ("<answer>" + GOLD, SOLUTION, (0, 0, 0, 0.0)),  # unclosed
    # the first block counts, later ones are ignored
    (f"<answer>2024-03-11T05:00:00Z</answer><answer>{GOLD}</answer>", SOLUTION, (0, 1, 0, 0.2)),
    (f"<answer>{GOLD}</answer><answer>garbage</answer>", SOLUTION, (1, 1, 0, 1.2)),
    # listing many instants in one block is not an instant
    (f"<answer>{GOLD}, 2024-03-11T14:00:00Z</answer>", SOLUTION, (0, 1, 0, 0.2)),
]


@pytest.mark.parametrize("text, solution, expected", SCORES, ids=lambda x: str(x)[:40])
def test_scores(text, solution, expected):
    result = grade(text, solution)
    assert (result["exact_match"], result["format"], result["partial_credit"]) == expected[:3]
    assert result.reward == pytest.approx(expected[3])
    assert result.reward <= 1.2


def test_partial_credit_uses_the_same_validity_as_gold():
    # Every valid minute on the curated day earns partial (or exact for gold).
    for minute in range(utc("2024-03-11T00:00:00Z"), utc("2024-03-12T00:00:00Z"), 60):
        result = grade(f"<answer>{format_utc(minute)}</answer>", SOLUTION)
        if minute == SOLUTION.gold:
            assert result.reward == pytest.approx(1.2)
        elif SOLUTION.is_valid(minute):
            assert result.reward == pytest.approx(0.3)
        else:
            assert result.reward == pytest.approx(0.2)


def test_format_utc_matches_datetime_and_parses_back():
    """format_utc is plain arithmetic; it must spell exactly what datetime would."""
    import random
    from datetime import datetime, timezone

    rng = random.Random(5)
    instants = [0, -1, -86_400, 86_399, 951_782_400, 4_102_444_799, 7_258_118_400 - 1]
    instants += [rng.randrange(-2_208_988_800, 7_258_118_400) for _ in range(2000)]
    for instant in instants:
        expected = datetime.fromtimestamp(instant, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        assert format_utc(instant) == expected
        if instant % 60 == 0:
            assert parse_answer(format_utc(instant)) == instant
