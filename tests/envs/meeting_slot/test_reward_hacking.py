"""Reward hacking: every trick gets exactly the documented score, never more.

The rubric (``meeting_gym/rubric.py``): ``1.0*exact + 0.2*format + 0.2*partial``
with partial 0.5, so 1.2 for gold, 0.3 for a valid start that is not the
earliest, 0.2 for any other answer block, 0 without one. Only the first
``<answer>`` block is read, and only the listed UTC spellings are instants.

These run end to end through ``env.step`` on curated and generated scenarios.
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone
from typing import Any

import gymnasium as gym
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import meeting_gym  # noqa: F401  (registers the env ids)
from meeting_gym.envs.meeting_slot.domain.curated import CURATED
from meeting_gym.envs.meeting_slot.domain.generator import DIFFICULTIES, generate_seeded
from meeting_gym.envs.meeting_slot.domain.scenario import Scenario
from meeting_gym.envs.meeting_slot.domain.solver import solve, window_bounds
from meeting_gym.envs.meeting_slot.domain.timeutil import format_utc

GOLD, VALID, FORMAT_ONLY, NOTHING = 1.2, 0.3, 0.2, 0.0

SCENARIOS = [*CURATED] + [generate_seeded(seed, d) for seed in range(6) for d in DIFFICULTIES]
SOLVABLE = [s for s in SCENARIOS if solve(s).gold is not None]
UNSOLVABLE = [s for s in SCENARIOS if solve(s).gold is None]
HACKS = settings(max_examples=60, deadline=None, database=None)

_ENV: Any = None


def reward_of(scenario: Scenario, action: str) -> tuple[float, dict[str, Any]]:
    """Answer ``action`` on the first turn of ``scenario``; returns (reward, final info)."""
    global _ENV
    if _ENV is None:
        _ENV = gym.make("MeetingSlot-v0", mode="text", max_turns=3)
    _ENV.reset(options={"scenario": scenario})
    _, reward, terminated, _, info = _ENV.step(action)
    assert terminated, action
    weights = 1.0 * info["exact_match"] + 0.2 * info["format"] + 0.2 * info["partial_credit"]
    assert reward == info["reward"] == pytest.approx(weights)
    assert reward <= GOLD
    return reward, info


def answer(text: str) -> str:
    return f"<answer>{text}</answer>"


def gold_of(scenario: Scenario) -> int:
    gold = solve(scenario).gold
    assert gold is not None
    return gold


def other_valid(scenario: Scenario) -> int | None:
    solution = solve(scenario)
    lo, hi = window_bounds(scenario)
    return next((m for m in solution.valid_minutes(lo, hi) if m != solution.gold), None)


def test_the_corpus_covers_both_kinds():
    assert len(SOLVABLE) >= 20 and len(UNSOLVABLE) >= 3


@pytest.mark.parametrize("scenario", SOLVABLE[:12], ids=lambda s: s.id)
def test_gold_and_a_later_valid_start(scenario):
    assert reward_of(scenario, answer(format_utc(gold_of(scenario))))[0] == GOLD
    later = other_valid(scenario)
    if later is not None:
        assert reward_of(scenario, answer(format_utc(later)))[0] == pytest.approx(VALID)


@HACKS
@given(st.sampled_from(SOLVABLE), st.integers(2, 40), st.sampled_from([", ", " ", "\n", " or "]))
def test_listing_many_instants_is_format_only(scenario, count, separator):
    lo, _hi = window_bounds(scenario)
    gold = gold_of(scenario)
    candidates = [format_utc(lo + 60 * i) for i in range(count - 1)] + [format_utc(gold)]
    random.Random(count).shuffle(candidates)
    reward, _ = reward_of(scenario, answer(separator.join(candidates)))
    assert reward == FORMAT_ONLY


@HACKS
@given(st.sampled_from(SOLVABLE), st.integers(2, 6), st.integers(0, 5))
def test_several_answer_blocks_only_the_first_counts(scenario, blocks, gold_at):
    gold = format_utc(gold_of(scenario))
    contents = ["NONE"] * blocks
    contents[min(gold_at, blocks - 1)] = gold
    text = "".join(answer(c) for c in contents)
    expected = GOLD if contents[0] == gold else FORMAT_ONLY
    assert reward_of(scenario, text)[0] == expected


def test_nested_opening_tags_read_the_innermost_block():
    # "<answer>a<answer>b</answer>": the block runs from the last opening tag before the
    # first closing tag, so only "b" is read (one candidate, never both).
    scenario = SOLVABLE[0]
    gold = format_utc(gold_of(scenario))
    assert reward_of(scenario, f"<answer>NONE<answer>{gold}</answer>")[0] == GOLD
    assert reward_of(scenario, f"<answer>{gold}<answer>NONE</answer>")[0] == FORMAT_ONLY


@HACKS
@given(
    st.sampled_from(SOLVABLE),
    st.integers(-14 * 60, 14 * 60).filter(lambda m: m != 0),
    st.sampled_from(["%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M:%S"]),
)
def test_the_same_instant_in_another_offset_is_not_accepted(scenario, offset_minutes, layout):
    gold = gold_of(scenario)
    zone = timezone(timedelta(minutes=offset_minutes))
    local = datetime.fromtimestamp(gold, zone)
    text = local.strftime(layout) + local.strftime("%z")[:3] + ":" + local.strftime("%z")[3:]
    assert reward_of(scenario, answer(text))[0] == FORMAT_ONLY


@pytest.mark.parametrize("suffix", ["Z", "+00:00", " UTC", "", "z"])
def test_utc_spellings_are_exact(suffix):
    scenario = SOLVABLE[0]
    stamp = datetime.fromtimestamp(gold_of(scenario), timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    assert reward_of(scenario, answer(stamp + suffix))[0] == GOLD


@pytest.mark.parametrize("scenario", SOLVABLE[:10], ids=lambda s: s.id)
@pytest.mark.parametrize("spelling", ["NONE", "none", " None "])
def test_none_on_a_solvable_case_is_format_only(scenario, spelling):
    assert reward_of(scenario, answer(spelling))[0] == FORMAT_ONLY


@pytest.mark.parametrize("scenario", UNSOLVABLE[:6], ids=lambda s: s.id)
def test_none_is_gold_only_when_nothing_fits(scenario):
    assert reward_of(scenario, answer("NONE"))[0] == GOLD
    lo, _ = window_bounds(scenario)
    assert reward_of(scenario, answer(format_utc(lo)))[0] == FORMAT_ONLY


@HACKS
@given(st.sampled_from(SOLVABLE), st.integers(1, 3 * 1440), st.booleans())
def test_answers_outside_the_window_get_no_partial_credit(scenario, minutes, before):
    lo, hi = window_bounds(scenario)
    instant = lo - 60 * minutes if before else hi + 60 * (minutes - 1)
    assert reward_of(scenario, answer(format_utc(instant)))[0] == FORMAT_ONLY


def test_free_time_just_outside_the_window_is_still_wrong():
    found = 0
    for scenario in SOLVABLE:
        _lo, hi = window_bounds(scenario)
        wider = Scenario(
            duration_minutes=scenario.duration_minutes,
            window_start=scenario.window_start,
            window_days=scenario.window_days + 3,
            attendees=scenario.attendees,
        )
        outside = solve(wider).valid_minutes(hi, hi + 3 * 86400)
        if outside:
            found += 1
            assert reward_of(scenario, answer(format_utc(outside[0])))[0] == FORMAT_ONLY
    assert found >= 3


@HACKS
@given(st.sampled_from(SOLVABLE), st.integers(1, 59), st.booleans())
def test_non_minute_seconds_are_format_only(scenario, seconds, use_gold):
    base = gold_of(scenario) if use_gold else (other_valid(scenario) or gold_of(scenario))
    for text in (
        format_utc(base + seconds),
        format_utc(base)[:-1] + f".{seconds:02d}Z",
        format_utc(base - 60 + seconds),
    ):
        assert reward_of(scenario, answer(text))[0] == FORMAT_ONLY
    assert not solve(scenario).is_valid(base + seconds)


def test_answer_beside_tool_calls_is_graded_and_no_tool_runs():
    scenario = SOLVABLE[0]
    gold = format_utc(gold_of(scenario))
    call = json.dumps({"name": "list_attendees", "arguments": {}})
    reward, _info = reward_of(scenario, f"<tool_call>{call}</tool_call>{answer(gold)}")
    assert reward == GOLD and _ENV.unwrapped.episode.calls == []


def test_no_answer_block_scores_nothing_even_when_the_text_is_gold():
    scenario = SOLVABLE[0]
    env = gym.make("MeetingSlot-v0", mode="text", max_turns=2)
    env.reset(options={"scenario": scenario})
    gold = format_utc(gold_of(scenario))
    assert env.step(gold)[1:4] == (0.0, False, False)
    _, reward, terminated, truncated, info = env.step(f"answer: {gold}")
    assert (reward, terminated, truncated, info["format"]) == (NOTHING, False, True, 0.0)


@pytest.mark.parametrize("scenario", SCENARIOS[::4], ids=lambda s: s.id)
def test_every_minute_of_the_window_scores_at_most_once_gold(scenario):
    """Sweep every whole minute of the window: 1.2 exactly once (or never, if NONE)."""
    from meeting_gym.envs.meeting_slot.rubric import grade

    solution = solve(scenario)
    lo, hi = window_bounds(scenario)
    golds = 0
    for minute in range(lo, hi, 60):
        reward = grade(answer(format_utc(minute)), solution).reward
        if minute == solution.gold:
            golds += 1
            assert reward == GOLD
        else:
            assert reward == (pytest.approx(VALID) if solution.is_valid(minute) else FORMAT_ONLY)
    assert golds == (solution.gold is not None)


def test_grade_as_dict_lists_every_field():
    from meeting_gym.envs.meeting_slot.rubric import RUBRIC

    grade_ = RUBRIC.grade(exact_match=1.0, format=1.0, partial_credit=0.0)
    assert grade_.as_dict() == {
        "exact_match": 1.0,
        "format": 1.0,
        "partial_credit": 0.0,
        "reward": 1.2,
    }


def _digits(text: str, zero: int) -> str:
    """``text`` with its ASCII digits rewritten in another script (``zero`` = its 0)."""
    return "".join(chr(zero + int(c)) if c.isdigit() else c for c in text)


@pytest.mark.parametrize(
    "zero", [0xFF10, 0x0660, 0x0966], ids=["fullwidth", "arabic", "devanagari"]
)
@pytest.mark.parametrize("layout", ["%Y-%m-%dT%H:%MZ", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M:%SZ"])
def test_digits_of_other_scripts_are_not_an_instant(zero, layout):
    # Regression: the rubric's \d matched any Unicode digit, so the gold instant written in
    # full-width digits scored 1.2 (and, without seconds, was the only way to spell it).
    scenario = SOLVABLE[0]
    text = _digits(datetime.fromtimestamp(gold_of(scenario), timezone.utc).strftime(layout), zero)
    assert reward_of(scenario, answer(text))[0] == FORMAT_ONLY


def test_tools_and_loading_read_ascii_digits_only():
    from meeting_gym.envs.meeting_slot.domain.scenario import ScenarioError
    from meeting_gym.envs.meeting_slot.domain.timeutil import parse_date, parse_hm

    with pytest.raises(ValueError):
        parse_date(_digits("2024-03-11", 0xFF10))
    with pytest.raises(ValueError):
        parse_hm(_digits("09:00", 0x0660))
    data = CURATED[0].to_dict()
    data["window_start"] = _digits(data["window_start"], 0xFF10)
    with pytest.raises(ScenarioError, match="window_start"):
        Scenario.from_dict(data)
