"""Revealed-state rows: the incremental updates agree with a from-scratch computation."""

from __future__ import annotations

import random

import numpy as np
import pytest

from meeting_gym.envs.meeting_slot.discrete.actions import ActionTable
from meeting_gym.envs.meeting_slot.discrete.reveal import Revealed
from meeting_gym.envs.meeting_slot.domain.generator import generate

TABLE = ActionTable()


def reveals(scenario):
    out = [("list",)]
    for i in range(len(scenario.attendees)):
        out += [("zone", i), ("hours", i)]
        out += [("busy", i, j) for j in range(scenario.window_days + 2)]
    return out


def apply(rev, step):
    kind, *args = step
    {"list": rev.reveal_list, "zone": rev.reveal_zone, "hours": rev.reveal_hours}.get(
        kind, rev.reveal_busy
    )(*args)


def rows(rev):
    return rev.available, rev.unavailable, rev.person_fit, rev.fit


@pytest.mark.parametrize("difficulty", ["easy", "hard", "expert"])
def test_any_reveal_order_gives_the_rows_of_a_fresh_computation(difficulty):
    rng = random.Random(difficulty)
    for _ in range(30):
        scenario = generate(rng, difficulty)
        steps = reveals(scenario)
        rng.shuffle(steps)
        cut = rng.randrange(len(steps) + 1)
        incremental = Revealed(scenario, TABLE)
        for step in steps[:cut]:
            apply(incremental, step)
        # from scratch: busy dates first, so zone/hours recompute each row whole
        fresh = Revealed(scenario, TABLE)
        ordered = sorted(steps[:cut], key=lambda s: s[0] != "busy")
        for step in ordered:
            apply(fresh, step)
        for a, b in zip(rows(incremental), rows(fresh), strict=True):
            np.testing.assert_array_equal(a, b)
        assert not (incremental.available & incremental.unavailable).any()
