"""CronSchedule's bench plan: its rows and targets are there (never its numbers)."""

from __future__ import annotations

from benches import tiny

from meeting_gym import bench

TINY = tiny(items=50)


def test_the_plan_has_the_issue_targets(monkeypatch):
    # a full run (a quick one judges no target), with a tiny budget: the plan, not the speed
    monkeypatch.setattr(bench, "FULL", TINY)
    rows, _ = bench.measure("CronSchedule-v0")
    by_name = {row.measure: row for row in rows}
    targets = {
        "text: episodes (reset + one answer)": ">= 10% of CartPole",
        "generate items + gold (50 per repeat)": ">= 5% (10,000 in 200,000 CartPole steps)",
        "equivalence check: parse + compare (median)": "within 50 CartPole steps",
    }
    for name, target in targets.items():
        row = by_name[name]
        assert row.target == target and row.met in (True, False) and row.ratio > 0, row
    assert by_name["next 10 run times (median)"].seconds > 0
    for level in ("default mix", "1", "2", "3", "4"):
        assert by_name[f"text: reset() fresh item, {level}"].seconds > 0
    table = bench.format_table(rows, env="CronSchedule-v0")
    assert table.splitlines()[0] == "meeting-gym bench  env=CronSchedule-v0"
    assert table.splitlines()[-1].startswith("targets met: ")


def test_a_time_row_can_have_a_ratio_target():
    """The shared machinery's time rows take a minimum ratio to CartPole (used above)."""
    item = bench.Measure("x", "x", lambda r: [0.001], kind="time", min_ratio=0.5)
    row = bench._row(item, {}, {"x": [0.2]}, {"x": [0.001]})
    assert (row.met, row.target) == (False, ">= 50% of CartPole")
    row = bench._row(item, {}, {"x": [0.7]}, {"x": [0.001]})
    assert row.met is True
