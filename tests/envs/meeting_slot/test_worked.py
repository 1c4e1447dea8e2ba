"""MeetingSlot's worked solutions (domain/worked.py): the written steps lead to the gold answer.

The answer is re-derived from the written free intervals alone (starts that fit each
attendee, intersected with each other and the window, the earliest whole minute) and
compared with the brute-force oracle (``bruteforce.py`` beside this file, minute by minute
through zoneinfo), on the curated scenarios and on generated ones of every difficulty.
"""

from __future__ import annotations

import random
import re
from datetime import datetime, timezone

import pytest
from bruteforce import brute

from meeting_gym.envs.meeting_slot.domain.curated import CURATED_BY_ID
from meeting_gym.envs.meeting_slot.domain.generator import DIFFICULTIES, generate, scenario_id
from meeting_gym.envs.meeting_slot.domain.solver import window_bounds
from meeting_gym.envs.meeting_slot.domain.worked import worked_solution
from meeting_gym.evaluation.episodes import episode_rows, replay_messages

SPAN = re.compile(r"(\d{4}-\d\d-\d\d) (\d\d:\d\d)(?:-(?:(\d{4}-\d\d-\d\d) )?(\d\d:\d\d))?")


def seconds(day: str, hm: str) -> int:
    stamp = datetime.fromisoformat(day).replace(tzinfo=timezone.utc).timestamp()
    hour, minute = map(int, hm.split(":"))
    return int(stamp) + hour * 3600 + minute * 60


def spans(text: str) -> list[tuple[int, int]]:
    out = []
    for day, start, end_day, end in SPAN.findall(text):
        a = seconds(day, start)
        out.append((a, seconds(end_day or day, end) if end else a))
    return out


def derived(work: str, duration_min: int, lo: int, hi: int) -> int | None:
    """The earliest start the written free intervals allow, re-derived from the text alone."""
    duration = duration_min * 60
    ranges = [(lo, hi - 1)]
    for line in work.splitlines():
        if not line.startswith("- "):
            continue
        free = line.split("; free ", 1)[1]
        assert "later" not in free  # every interval that matters is written
        fits = [(a, b - duration) for a, b in spans(free) if b - a >= duration]
        ranges = [
            (max(a, c), min(b, d)) for a, b in ranges for c, d in fits if max(a, c) <= min(b, d)
        ]
    starts = [a + (-a % 60) for a, b in sorted(ranges) if a + (-a % 60) <= b]
    return starts[0] if starts else None


def scenarios():
    yield from CURATED_BY_ID.values()
    rng = random.Random(7)
    for level in DIFFICULTIES:
        for _ in range(40):
            yield generate(rng, level)


@pytest.mark.parametrize("scenario", list(scenarios()), ids=scenario_id)
def test_the_written_steps_lead_to_the_brute_force_answer(scenario):
    work = worked_solution(scenario)
    assert "<answer>" not in work
    gold, _ = brute(scenario)
    lo, hi = window_bounds(scenario)
    assert derived(work, scenario.duration_minutes, lo, hi) == gold
    last = work.splitlines()[-1]
    if gold is None:
        assert last == "No start fits everyone inside the window."
    else:
        assert last.endswith(
            datetime.fromtimestamp(gold, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        )
    for person in scenario.attendees:
        assert f"- {person.name} ({person.timezone}): works " in work


def test_worked_expert_episodes_replay_to_the_best_and_differ_only_in_the_last_turn():
    plain = list(episode_rows("MeetingSlot-v0", "train", 5))
    worked = list(episode_rows("MeetingSlot-v0", "train", 5, policy="gold-worked"))
    for a, b in zip(plain, worked, strict=True):
        assert a["messages"][:-1] == b["messages"][:-1]
        assert b["messages"][-1]["content"].endswith(a["messages"][-1]["content"])
        assert replay_messages(b) == 1.2
