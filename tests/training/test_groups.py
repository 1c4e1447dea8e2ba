"""``meeting-gym rows groups``: the per-step table of a GRPO run's groups, read from its rows."""

from __future__ import annotations

import json

import pytest

from meeting_gym.cli import main as cli_main
from meeting_gym.training import groups as bench


def run(argv: list[str]) -> int:
    return cli_main(["rows", "groups", *argv])


def row(step: int, answer: str, gold: str) -> dict:
    return {
        "env": "MeetingSlot-v0",
        "item_id": f"item-{step}",
        "step": step,
        "answer": answer,
        "gold": gold,
        "breakdown": {"exact_match": float(answer == gold)},
    }


ROWS = [
    row(1, "2024-03-11T09:00:00Z", "2024-03-11T13:00:00Z"),
    row(1, "2024-03-11T13:00:00Z", "2024-03-11T13:00:00Z"),
    row(1, "NONE", "NONE"),
    row(1, "2024-03-12T09:00:00Z", "NONE"),
    row(2, "2024-05-01T09:00:00Z", "2024-05-01T09:00:00Z"),
    row(2, "2024-05-02T09:00:00Z", "2024-05-01T09:00:00Z"),
]


def test_the_answers_at_given_times_of_day_are_counted_on_any_date_beside_golds():
    table = bench.step_table(ROWS, 2, frozenset({"09:00:00Z"}))
    assert [(t["step"], t["groups"], t["answers_per_group"], t["exact"]) for t in table] == [
        (1, 2, 2.0, 2),
        (2, 1, 2.0, 1),
    ]
    assert [(t["at_times"], t["gold_at_times"], t["rollouts"]) for t in table] == [
        (2, 0, 4),
        (2, 2, 2),
    ]
    assert bench.time_of_day("NONE") == "NONE"


def test_the_printed_table_gains_the_two_columns_only_when_times_are_asked(tmp_path, capsys):
    path = tmp_path / "rollouts.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    assert run([str(path), "--group", "2"]) == 0
    assert "| 1 | 2 | 2.00 | 2 of 4 |" in capsys.readouterr().out.splitlines()
    assert run([str(path), "--group", "2", "--times", "09:00:00Z, 13:00:00Z"]) == 0
    assert "| 1 | 2 | 2.00 | 2 of 4 | 3 of 4 | 2 of 4 |" in capsys.readouterr().out.splitlines()


def test_rows_that_are_not_whole_groups_are_one_line_of_error(tmp_path, capsys):
    path = tmp_path / "rollouts.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS[:5]))
    assert run([str(path), "--group", "2"]) == 2
    assert "5 rows are not whole groups of 2" in capsys.readouterr().err


def test_held_out_rows_without_a_step_are_one_line(tmp_path, capsys):
    path = tmp_path / "eval_grpo.jsonl"
    held_out = [{k: v for k, v in r.items() if k != "step"} for r in ROWS]
    path.write_text("".join(json.dumps(r) + "\n" for r in held_out))
    assert run([str(path), "--group", "1", "--times", "09:00:00Z"]) == 0
    assert "| held out | 6 | 1.00 | 3 of 6 | 4 of 6 | 2 of 6 |" in capsys.readouterr().out
    # a run's rows and held-out rows in one group are two steps
    with pytest.raises(ValueError, match="span two steps"):
        bench.step_table([ROWS[0], held_out[1]], 2)


def episode(*turns: str, listed: str = '["Ava", "Ben"]') -> dict:
    """A transcript: list_attendees, its result, then the assistant's further turns."""
    listing = '<tool_call>{"name": "list_attendees", "arguments": {}}</tool_call>'
    messages = [
        {"role": "assistant", "content": listing},
        {"role": "user", "content": listed},
    ]
    for turn in turns:
        messages += [{"role": "assistant", "content": turn}, {"role": "user", "content": "[]"}]
    return {"transcript": messages}


def call(tool: str, name: str) -> str:
    return json.dumps({"name": tool, "arguments": {"name": name, "date": "2024-03-11"}})


def test_an_episode_that_never_asked_about_a_listed_attendee_is_counted(tmp_path, capsys):
    both = episode(
        f"<tool_call>{call('get_timezone', 'Ava')}</tool_call>",
        f"[{call('get_busy', 'Ben')}]",  # a bare list of calls counts too
        "<answer>NONE</answer>",
    )
    one = episode(f"<tool_call>{call('get_timezone', 'Ava')}</tool_call>", "<answer>NONE</answer>")
    assert not bench.unasked(both) and bench.unasked(one)
    # a tool's own name is not a person's; never listing the attendees is not skipping one
    assert bench.unasked(episode(f"<tool_call>{call('get_busy', 'Ava')}</tool_call>"))
    assert not bench.unasked(episode(listed="not json"))
    answered = {"role": "assistant", "content": "<answer>x</answer>"}
    assert not bench.unasked({"transcript": [answered]})
    rows = [{**row(1, "NONE", "NONE"), **e} for e in (both, one)]
    path = tmp_path / "rollouts.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert run([str(path), "--group", "2", "--unasked"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("| an attendee never asked |") and out[1] == "|---|---|---|---|---|"
    assert out[2] == "| 1 | 1 | 1.00 | 2 of 2 | 1 of 2 |"


def branch(reward: float, *sampled: str, answer: str | None = "NONE") -> dict:
    """A last-turn branch: two scripted turns, then the turns it sampled."""
    return {
        **row(1, str(answer), "NONE"),
        "answer": answer,
        "breakdown": {"exact_match": 0.0, "reward": reward},
        "finish_reasons": ["scripted", "scripted", *sampled],
    }


def test_branches_that_did_not_answer_at_once_are_counted_with_their_mean_advantage(
    tmp_path, capsys
):
    group = [
        branch(1.2, "stop"),
        branch(0.2, "stop"),
        branch(0.2, "stop", "stop"),  # called a tool first, then answered
        branch(0.0, "stop", answer=None),  # wrote no answer
    ]
    assert [bench.answered_at_branch(r) for r in group] == [True, True, False, False]
    flat = [branch(0.2, "stop")] * 3 + [branch(0.2, "stop", "stop")]  # no spread
    (line,) = bench.step_table(group, 4)
    # returns 1.2, 0.2, 0.2, 0.0: mean 0.4, population sd 0.469...
    assert (line["answered_at_branch"], line["not_answered_at_branch"]) == (2, 2)
    assert line["advantage_answered"] == pytest.approx(
        ((1.2 - 0.4) + (0.2 - 0.4)) / 2 / 0.4690, 1e-3
    )
    assert line["advantage_answered"] == pytest.approx(-line["advantage_not_answered"])
    path = tmp_path / "rollouts.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in group + flat))
    assert run([str(path), "--group", "4", "--branches"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("| answered at the branch (advantage) | did not (advantage) |")
    # the flat group counts, but adds no advantage
    assert out[2] == "| 1 | 2 | 1.50 | 0 of 8 | 5 (+0.64) | 3 (-0.64) |"


# the fields every episode row carries, then the ones a test varies
EPISODE = '{"env": "MeetingSlot-v0", "item_id": "a", "answer": "NONE", "gold": "NONE", '


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("[1, 2]", "rollouts.jsonl:1: not an episode row (env, item_id, breakdown)"),
        (EPISODE + '"breakdown": [1]}', "rollouts.jsonl:1: breakdown must be an object of numbers"),
        (EPISODE + '"breakdown": {}}', "rollouts.jsonl: row 1 has no answer, gold or exact_match"),
        ("{not json", "rollouts.jsonl:1: not JSON"),
        (b'{"env": "\xff"}', "rollouts.jsonl:1: not UTF-8 text"),
        (
            EPISODE + '"breakdown": {"exact_match": 1}, "finish_reasons": 7}',
            "not of the types the package writes",
        ),
    ],
)
def test_a_hand_edited_row_is_one_line_of_error_naming_it(tmp_path, capsys, line, says):
    path = tmp_path / "rollouts.jsonl"
    path.write_bytes((line if isinstance(line, bytes) else line.encode()) + b"\n")
    assert run([str(path), "--group", "1", "--branches"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert says in err[-1] and "Traceback" not in "".join(err)


def test_a_missing_file_is_one_line_naming_it(tmp_path, capsys):
    path = tmp_path / "rollouts.jsonl"
    assert run([str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].endswith(f"{path}: No such file or directory")


def test_a_group_below_one_is_one_line(tmp_path, capsys):
    assert run([str(tmp_path / "rollouts.jsonl"), "--group", "0"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
