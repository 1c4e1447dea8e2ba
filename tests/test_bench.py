"""The bench command's table structure (never its numbers: timing belongs to the bench)."""

from __future__ import annotations

import json

from benches import tiny

from meeting_gym import bench
from meeting_gym.cli import main

TINY = tiny()


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
        assert row.met is None, row  # a quick run shows the targets, judges none
    assert any(row.target for row in rows)
    table = bench.format_table(rows, quick=True)
    assert "vs CartPole" in table.splitlines()[1] and "target" in table.splitlines()[1]
    assert len(table.splitlines()) == len(rows) + 5
    assert table.splitlines()[0] == "meeting-gym bench  env=MeetingSlot-v0"
    assert table.splitlines()[-1] == QUICK_NOTE + "."
    assert "NOT" not in table and "yes" not in table  # the met column stays empty


QUICK_NOTE = (
    "targets not judged: a quick run is too short to judge them "
    "(run `meeting-gym bench --env MeetingSlot-v0` without --quick)"
)


def test_a_full_run_judges_every_target(monkeypatch):
    monkeypatch.setattr(bench, "FULL", TINY)  # the judging, not the speed: a tiny budget
    rows, _ = bench.measure()
    judged = [row for row in rows if row.target and not row.note]
    assert judged and all(row.met in (True, False) for row in judged)
    assert bench.format_table(rows).splitlines()[-1].startswith("targets met: ")


def test_a_quick_run_says_it_cannot_judge_even_a_missed_target():
    rows = [bench.Row("slow", rate=1.0, ratio=0.01, target=">= 10% of CartPole", met=False)]
    assert bench.closing_note(rows).startswith("targets met: 0 of 1 measured; NOT met: slow")
    assert bench.closing_note(rows, quick=True) == QUICK_NOTE + "."


def test_bench_command_json(capsys, monkeypatch):
    monkeypatch.setattr(bench, "QUICK", TINY)
    assert main(["bench", "--quick", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert (
        payload["env"] == "MeetingSlot-v0"
        and payload["quick"] is True
        and payload["cartpole_steps_per_s"] > 0
    )
    assert payload["note"] == QUICK_NOTE + "."
    assert all(row["met"] is None for row in payload["rows"])
    assert {"measure", "rate", "seconds", "ratio", "target", "met", "note"} <= set(
        payload["rows"][0]
    )


def test_eval_item_rows_reset_far_items_and_judge_v1_only(monkeypatch, capsys):
    """-v1: items 0, 999 and 99,999 of new split seeds, each with a target; -v0: its far items
    walk (seconds), so only a budget that walks resets them, and never past its bound."""
    monkeypatch.setattr(bench, "FULL", TINY)
    rows, _ = bench.measure("CalendarMath-v1", only="eval")
    names = [row.measure for row in rows[1:]]
    assert names == [f"reset() eval item {i}, new split seed" for i in ("0", "999", "99,999")]
    assert all(row.target == "< 5.00 ms" and row.met in (True, False) for row in rows[1:])
    rows, _ = bench.measure("TimetablePlanner-v1", only="eval")
    assert {row.target for row in rows[1:]} == {"< 50.00 ms"}
    rows, _ = bench.measure("CalendarMath-v0", only="eval")
    assert [row.measure for row in rows[1:]] == ["reset() eval item 0, new split seed"]
    assert rows[1].target == "" and rows[1].seconds is not None
    monkeypatch.setattr(bench, "FULL", tiny(walks=True))
    rows, _ = bench.measure("CalendarMath-v0", only="eval")
    assert [row.measure for row in rows[1:]][-1] == "reset() eval item 999, new split seed"
    assert main(["bench", "--env", "CalendarMath-v1", "--only", "nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "meeting-gym: error: no row of CalendarMath-v1's bench has a key starting with 'nope'"
    ]
