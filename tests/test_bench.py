"""The bench command's table structure (never its numbers: timing belongs to the bench)."""

from __future__ import annotations

import json

from meeting_gym import bench
from meeting_gym.cli import main

TINY = bench.Budget(
    repeats=1,
    cartpole_steps=300,
    steps=50,
    resets=5,
    solves_per_difficulty=3,
    vector_steps=5,
    items=20,
)


def test_quick_bench_table_has_every_row_and_a_ratio_column(monkeypatch):
    monkeypatch.setattr(bench, "QUICK", TINY)
    rows, cartpole = bench.measure(quick=True)
    assert cartpole > 0
    names = [row.measure for row in rows]
    assert names[0].startswith("CartPole-v1")
    for mode in ("discrete", "text"):
        assert f"{mode}: step(), random legal actions" in names
        assert f"{mode}: random rollouts incl. reset" in names
        assert f"{mode}: make_vec sync x8" in names and f"{mode}: make_vec async x2" in names
        for difficulty in ("default mix", "easy", "medium", "hard", "expert"):
            assert f"{mode}: reset() fresh scenario, {difficulty}" in names
    assert "gold solve alone (all difficulties)" in names
    frames = rows[names.index("rgb_array frame (render per step)")]
    assert frames.note == bench.MISSING or (
        frames.value().endswith("frames/s") and frames.ratio > 0
    )
    for row in rows:
        if row.measure.startswith("text") or row.measure.startswith("gold"):
            assert row.ratio is not None and row.ratio > 0, row
        if row is not frames:
            assert not row.note, row  # every other row of MeetingSlot's plan is measured
        if row.target:
            assert row.met in (True, False) or row.note
    table = bench.format_table(rows, quick=True)
    assert "vs CartPole" in table.splitlines()[1] and "target" in table.splitlines()[1]
    assert len(table.splitlines()) == len(rows) + 5
    assert table.splitlines()[0] == "meeting-gym bench  env=MeetingSlot-v0"
    assert table.splitlines()[-1].startswith("targets met: ")


def test_bench_command_json(capsys, monkeypatch):
    monkeypatch.setattr(bench, "QUICK", TINY)
    assert main(["bench", "--quick", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert (
        payload["env"] == "MeetingSlot-v0"
        and payload["quick"] is True
        and payload["cartpole_steps_per_s"] > 0
    )
    assert payload["note"].startswith("targets met: ")
    assert {"measure", "rate", "seconds", "ratio", "target", "met", "note"} <= set(
        payload["rows"][0]
    )
