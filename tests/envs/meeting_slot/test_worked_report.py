"""``meeting-gym rows steps``: a worked-solutions model's last turns, marked step by step."""

from __future__ import annotations

import json
import re

import pytest

from meeting_gym.cli import main
from meeting_gym.core.splits import load_split
from meeting_gym.envs.meeting_slot.domain.solver import solve
from meeting_gym.envs.meeting_slot.domain.timeutil import format_utc
from meeting_gym.envs.meeting_slot.domain.worked import worked_solution


def steps(argv: list[str]) -> int:
    return main(["rows", "steps", *argv])


ENV = "MeetingSlot-v0"
SEED = 42


def row(k: int, last: str, exact: float) -> dict:
    return {
        "env": ENV,
        "item_id": f"item-{k}",
        "options": {"split": "eval", "index": k, "split_seed": SEED},
        "breakdown": {"exact_match": exact, "reward": 0.2 + exact},
        "transcript": [
            {"role": "user", "content": "a question"},
            {"role": "assistant", "content": '<tool_call>{"name": "list_attendees"}</tool_call>'},
            {"role": "tool", "content": "the attendees"},
            {"role": "assistant", "content": last},
        ],
    }


def reference(scenario) -> str:
    gold = solve(scenario).gold
    answer = "NONE" if gold is None else format_utc(gold)
    return f"{worked_solution(scenario)}\n<answer>{answer}</answer>"


def test_the_steps_are_counted_over_the_rows_in_item_order(tmp_path, capsys):
    with pytest.warns(UserWarning, match="curated"):
        items = load_split("eval", 3, SEED, env=ENV)
    right = [reference(s) for s in items]
    # item 1 copies its first attendee's working hours wrong and answers off its last step
    first = next(line for line in right[1].splitlines() if line.startswith("- "))
    works = first.split("works ", 1)[1].split(";", 1)[0]
    wrong = right[1].replace(first, first.replace(works, "2000-01-01 09:00-17:00", 1))
    wrong = wrong.rsplit("<answer>", 1)[0] + "<answer>2000-01-01T09:00:00Z</answer>"
    path = tmp_path / "eval_sft.jsonl"
    rows = [row(2, right[2], 1.0), row(0, right[0], 1.0), row(1, wrong, 0.0)]  # as they ended
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))

    assert steps([str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    by_zone = lines.index("working hours right, by zone")
    out = dict(re.split(r"  +", line, maxsplit=1) for line in lines[:by_zone])
    zones = dict(line.strip().split("  ", 1) for line in lines[by_zone + 1 :])
    people = sum(len(s.attendees) for s in items)
    assert out["episodes"] == "3"
    assert out["attendee lines written"] == f"{people} of {people} (100%)"
    assert out["working hours in UTC right"].startswith(f"{people - 1} of {people}")
    assert out["busy blocks in UTC right"].startswith(f"{people} of {people}")
    assert out["answer = its own last step"] == "2 of 3 (67%)"
    assert out["exact answers"] == "2 of 3 (67%)"
    wrong_zone = items[1].attendees[0].timezone
    assert sorted(zones) == sorted({a.timezone for s in items for a in s.attendees})
    assert sum(int(v.split(" of ")[1].split()[0]) for v in zones.values()) == people
    assert not zones[wrong_zone].endswith("(100%)")

    assert steps([str(path), "--rows", "1:2"]) == 0  # item 1 alone
    lines = capsys.readouterr().out.splitlines()
    out = dict(re.split(r"  +", line.strip(), maxsplit=1) for line in lines if "  " in line)
    assert out["episodes with every hour right"] == "0 of 1 (0%)"


def test_bad_input_is_one_line_naming_it(tmp_path, capsys):
    other = tmp_path / "eval_other.jsonl"
    other.write_text(json.dumps({**row(0, "", 0.0), "env": "CalendarMath-v0"}) + "\n")
    for argv, says in (
        ([str(tmp_path / "missing.jsonl")], "missing.jsonl"),
        ([str(other)], "row 0 is not a MeetingSlot-v0 episode"),
        ([str(other), "--rows", "5:"], "no rows in 5:"),
    ):
        assert steps(argv) == 2
        err = capsys.readouterr().err
        assert says in err and err.count("\n") == 1, err
