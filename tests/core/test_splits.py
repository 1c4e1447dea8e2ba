"""Splits: composition, determinism, item independence and the JSONL export."""

from __future__ import annotations

import json

import pytest

from meeting_gym.core.splits import export_jsonl, held_out, item_rng, load_split, to_row
from meeting_gym.envs.meeting_slot.domain.curated import CURATED
from meeting_gym.envs.meeting_slot.domain.generator import generate


def test_curated_split_is_the_fifteen_cases():
    assert load_split("curated") == list(CURATED)


def test_eval_split_starts_with_curated_then_generated_from_seed_plus_one():
    scenarios = load_split("eval", n=40, seed=42)
    assert scenarios[:15] == list(CURATED)
    # then held-out draws from seed + 1 (the first draw whose id is held out)
    first = next(
        s for s in (generate(item_rng(43, 0, attempt)) for attempt in range(4096)) if held_out(s.id)
    )
    assert scenarios[15] == first
    assert len({s.id for s in scenarios}) == 40


def test_train_split_is_deterministic_and_seeded():
    assert load_split("train", n=20) == load_split("train", n=20)
    assert load_split("train", n=20, seed=1) != load_split("train", n=20, seed=2)
    # any item regenerates alone: the first 10 of 20 are the 10 of a shorter list
    assert load_split("train", n=20)[:10] == load_split("train", n=10)


def test_difficulty_pins_generation_and_filters_curated():
    scenarios = load_split("eval", n=30, difficulty="easy")
    assert all(s.difficulty == "easy" for s in scenarios)
    assert [s.id for s in scenarios[:2]] == ["same_tz_empty_busy", "no_slot_fully_booked"]


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"name": "test"}, "unknown split"),
        ({"name": "train", "difficulty": "legendary"}, "unknown difficulty"),
        ({"name": "train", "n": -1}, "non-negative"),
    ],
)
def test_bad_split_arguments(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        load_split(**kwargs)


def test_jsonl_rows(tmp_path):
    path = tmp_path / "eval.jsonl"
    assert export_jsonl(load_split("curated"), path) == 15
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert rows[0]["answer"] == "2024-03-11T13:00:00Z" and rows[2]["answer"] == "NONE"
    assert rows[0]["info"]["id"] == "same_tz_empty_busy"
    assert "30-minute meeting" in rows[0]["question"]
    assert to_row(CURATED[0]) == rows[0]


def test_an_abandoned_eval_walk_stops_and_keeps_what_it_walked():
    """``abandon_when``: a walk whose event is set stops at the next item with
    WalkAbandoned (a server sets it when the client leaves); the items walked stay, and a
    later reader walks on from them to the items a fresh walk gives."""
    import threading

    from meeting_gym.core import splits
    from meeting_gym.core.registry import make_task

    task = make_task("MeetingSlot-v0")
    stream = splits._EvalStream(task, 991_207, task.difficulty)
    stream.item(3)
    walked = len(stream.items)
    left = threading.Event()
    left.set()
    with splits.abandon_when(left), pytest.raises(splits.WalkAbandoned, match="the client left"):
        stream.item(walked + 5)
    assert len(stream.items) == walked
    fresh = splits._EvalStream(task, 991_207, task.difficulty)
    assert task.item_id(stream.item(walked + 5)) == task.item_id(fresh.item(walked + 5))


def test_a_note_goes_to_the_callers_channel_or_warns_without_one():
    """``load_split(note=...)``: a short eval split's note is one call of ``note`` (what a
    command line prints as a line) and no warning; without ``note``, a UserWarning."""
    import warnings

    said: list[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning fails the block
        items = load_split("eval", n=3, env="MeetingSlot-v0", note=said.append)
    assert len(items) == 3
    assert said == ["eval n=3 keeps only the first 3 of its 15 curated items"]
    with pytest.warns(UserWarning, match="keeps only the first 3 of its 15"):
        load_split("eval", n=3, env="MeetingSlot-v0")
    said.clear()
    load_split("eval", n=20, env="MeetingSlot-v0", note=said.append)
    assert said == []  # nothing to say
