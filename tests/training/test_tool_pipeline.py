"""The multi-turn pipeline's settings and the rows it reads back, without a model
(``meeting-gym train``, ``examples/train_tool_env.py``).

GRPO on ``easy`` MeetingSlot items learnt to answer 09:00Z (gold's answer on many of them
and almost no harder ones), so a run can start its curriculum at a harder difficulty.
"""

from __future__ import annotations

import json
import warnings

import pytest

from meeting_gym.cli import main as cli
from meeting_gym.training import tool_eval, tool_options, tool_run

BASE = ["--phases", "grpo", "--curriculum", "--difficulty", ""]


@pytest.mark.parametrize(
    ("flags", "levels"),
    [
        ([], ("easy", "medium", "hard", "expert")),
        (["--curriculum-up-to", "hard"], ("easy", "medium", "hard")),
        (["--curriculum-from", "medium", "--curriculum-up-to", "hard"], ("medium", "hard")),
        (["--curriculum-from", "hard"], ("hard", "expert")),
    ],
)
def test_the_curriculum_spans_from_its_first_to_its_last_difficulty(flags, levels):
    args = tool_options.parse_args([*BASE, *flags])
    curriculum = tool_options.curriculum_for(args, 42)
    assert curriculum.levels == levels
    assert curriculum.current == levels[0]
    # GRPO's first items are of the first difficulty
    chosen = tool_run.item_source(args, curriculum)(0, 0, 2)
    assert [options["difficulty"] for options, _ in chosen] == [levels[0]] * 2


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--curriculum-from", "nope"], "--curriculum: MeetingSlot-v0 has no difficulty 'nope'"),
        (["--curriculum-up-to", "nope"], "--curriculum: MeetingSlot-v0 has no difficulty 'nope'"),
        (
            ["--curriculum-from", "hard", "--curriculum-up-to", "medium"],
            "--curriculum: MeetingSlot-v0: 'hard' is harder than 'medium', so no level is left",
        ),
    ],
)
def test_a_wrong_span_exits_with_one_line_naming_it(flags, message, capsys):
    with pytest.raises(SystemExit) as stop:
        tool_options.parse_args([*BASE, *flags])
    assert stop.value.code == 2
    assert message in capsys.readouterr().err


KL = "--kl must be a finite number at least 0"
# --phase-minutes was taken as given: -1 ran the phases as 0 does, and nan never stopped them
PHASE = "--phase-minutes must be a finite number at least 0"


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        *(("--kl", value, KL) for value in ("-0.1", "nan", "inf")),
        *(("--phase-minutes", value, PHASE) for value in ("-1", "nan", "inf")),
        ("--save-every", "0", "--save-every must be at least 1"),
        ("--grpo-steps", "0", "--grpo-steps must be at least 1"),
        ("--prompts", "0", "--prompts must be at least 1"),
        ("--group", "1", "--group must be at least 2"),
    ],
)
def test_a_setting_out_of_range_exits_with_one_line(flag, value, message, capsys):
    with pytest.raises(SystemExit) as stop:
        tool_options.parse_args(["--phases", "sft,grpo", flag, value])
    assert stop.value.code == 2
    assert message in capsys.readouterr().err


def test_without_a_curriculum_there_are_no_curriculum_rules():
    assert tool_options.parse_args(["--phases", "grpo"]).rules is None


def model_row(k: int) -> dict:
    """A scripted model's episode on eval item ``k`` (one tool call, then an answer), with
    its transcript, as the example logs it."""
    from types import SimpleNamespace

    from meeting_gym.agentkit.llm import LLMAgent
    from meeting_gym.core.splits import load_split
    from meeting_gym.evaluation.chat import replayable_row
    from meeting_gym.evaluation.evaluate import evaluate

    replies = iter(
        [
            '<tool_call>{"name": "list_attendees", "arguments": {}}</tool_call>',
            "<answer>NONE</answer>",
        ]
    )

    def create(**_request):
        message = SimpleNamespace(content=next(replies), tool_calls=None)
        return SimpleNamespace(choices=[SimpleNamespace(message=message, finish_reason="stop")])

    client = SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=create)))
    env = "MeetingSlot-v0"
    item = load_split("eval", 2, 42, None, env=env)[k]
    make = lambda: LLMAgent(client, "m", tool_protocol="text")  # noqa: E731
    [result] = evaluate(make, [item], env=env, seed=k)
    options = {"split": "eval", "index": k, "split_seed": 42}
    return replayable_row(result, env=env, seed=k, options=options, tool_protocol="text")


def test_rows_an_earlier_run_wrote_are_read_back_and_replay(tmp_path):
    rows = [model_row(0), model_row(1)]
    path = tmp_path / "eval_sft.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert tool_eval.read_logged(path) == rows
    for k, row in enumerate(rows):
        tool_eval.check_replay("sft", k, row)  # returns: the row replays to its grade


@pytest.mark.parametrize(
    ("second", "message"),
    [
        ("{not json", "eval_sft.jsonl:2: not JSON"),
        (
            '{"env": "MeetingSlot-v0", "item_id": "x", "breakdown": [1]}',
            "eval_sft.jsonl:2: breakdown must be an object of numbers",
        ),
        ('["a list"]', "eval_sft.jsonl:2: not an episode row"),
    ],
)
def test_a_damaged_line_stops_the_resume_with_one_line_naming_it(tmp_path, second, message):
    path = tmp_path / "eval_sft.jsonl"
    path.write_text(json.dumps(model_row(0)) + "\n" + second + "\n")
    with pytest.raises(ValueError, match=message):
        tool_eval.read_logged(path)


def test_a_row_that_does_not_replay_or_cannot_be_replayed_stops_the_run():
    row = model_row(0)
    assert row["breakdown"]["reward"] == 0.2  # an answer block, not the start
    wrong = {**row, "breakdown": {**row["breakdown"], "reward": 1.2}}
    with pytest.raises(ValueError, match="sft eval item 0 does not replay"):
        tool_eval.check_replay("sft", 0, wrong)
    cut = {k: v for k, v in row.items() if k != "tool_protocol"}
    with pytest.raises(ValueError, match="sft eval item 0 cannot be replayed: KeyError"):
        tool_eval.check_replay("sft", 0, cut)


def test_rows_of_a_larger_eval_n_are_read_for_the_first_items_and_kept(tmp_path, capsys):
    rows = [model_row(0), model_row(1)]
    path = tmp_path / "eval_sft.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    before = path.read_text()
    (tmp_path / "episodes.jsonl").write_text("")
    args = tool_options.parse_args(["--out", str(tmp_path), "--phases", "eval", "--eval-n", "1"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # said as a plain line, not warned
        results = tool_eval.evaluate_all(args, tmp_path, tmp_path / "episodes.jsonl")
    sft = results["summary"]["sft"]
    assert sft["n"] == 1 and sft["reward"]["mean"] == rows[0]["breakdown"]["reward"]
    assert path.read_text() == before  # not evaluated again, and not cut to one row
    err = capsys.readouterr().err
    assert "note: eval n=1 keeps only the first 1 of its 15 curated items\n" in err


def test_rows_written_in_the_order_episodes_ended_are_read_back_by_item(tmp_path):
    rows = [model_row(0), model_row(1)]
    path = tmp_path / "eval_sft.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in reversed(rows)))
    (tmp_path / "episodes.jsonl").write_text("")
    args = tool_options.parse_args(["--out", str(tmp_path), "--phases", "eval", "--eval-n", "2"])
    results = tool_eval.evaluate_all(args, tmp_path, tmp_path / "episodes.jsonl")
    sft = results["summary"]["sft"]
    assert sft["n"] == 2  # both read back: no model was loaded (there is none)
    assert sft["reward"]["mean"] == sum(r["breakdown"]["reward"] for r in rows) / 2


def test_a_last_row_cut_short_by_a_stop_is_dropped_and_the_rest_kept(tmp_path, capsys):
    whole, cut = json.dumps(model_row(0)) + "\n", json.dumps(model_row(1))[:50]
    path = tmp_path / "eval_sft.jsonl"
    path.write_text(whole + cut)
    assert tool_eval.read_logged(path) == [model_row(0)]
    assert path.read_text() == whole  # the next row is appended after the whole one
    assert "dropped a last row cut short by a stop" in capsys.readouterr().err


def test_rows_are_kept_by_item_and_a_file_of_other_items_is_not(tmp_path):
    rows = [model_row(0), model_row(1)]
    path = tmp_path / "eval_sft.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in reversed(rows)))
    ours = [r["options"] for r in rows]
    assert tool_eval.logged_items(path, ours) == {0: rows[0], 1: rows[1]}
    assert tool_eval.logged_items(path, ours[:1]) == {0: rows[0]}  # a larger --eval-n's file
    other = [{**o, "split_seed": 7} for o in ours]  # another split seed: other items
    assert tool_eval.logged_items(path, other) is None


def test_an_eval_without_the_exported_episodes_exits_with_one_line(tmp_path, capsys):
    args = tool_options.parse_args(["--out", str(tmp_path), "--phases", "eval", "--models", ""])
    with pytest.raises(ValueError, match=r"no episodes\.jsonl: run the export phase first"):
        tool_run.run(args)
    # the command says it in one line, exit 2
    assert cli(["train", "eval", "--out", str(tmp_path), "--models", ""]) == 2
    assert "no episodes.jsonl" in capsys.readouterr().err


def test_help_shows_each_option_s_default_once(capsys):
    """A new user found no defaults in --help (issue 49 item 8)."""
    with pytest.raises(SystemExit):
        tool_options.parse_args(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "(default: MeetingSlot-v0)" in out and "(default: smollm2)" in out
    assert "(default: None)" not in out and out.count("(default:") >= 10


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ("Nope-v0", "unknown env 'Nope-v0'; `meeting-gym envs` lists them"),
        ("CalendarMath-v0", "CalendarMath-v0 is single-turn: examples/train_grpo.py trains it"),
    ],
)
def test_a_wrong_env_is_one_line_in_the_command_and_the_example(env, message, capsys, tmp_path):
    assert cli(["train", "sft", "--env", env, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err == f"meeting-gym: error: {message}\n"
    with pytest.raises(SystemExit) as stop:
        tool_options.parse_args(["--env", env, "--phases", "sft"])
    assert stop.value.code == 2
    assert message in capsys.readouterr().err


def test_the_command_takes_its_phases_in_order_and_refuses_an_unknown_one(capsys):
    assert cli(["train", "export,bogus"]) == 2
    assert "unknown phase 'bogus'; choose from export, sft, grpo, eval" in capsys.readouterr().err


def test_the_example_s_main_is_one_line_and_exit_1_when_a_phase_cannot_start(tmp_path, capsys):
    from meeting_gym.training.runs import pipeline_main

    argv = ["--out", str(tmp_path), "--phases", "sft"]
    assert pipeline_main("train_tool_env.py", tool_options.parse_args, tool_run.run, argv) == 1
    err = capsys.readouterr().err
    assert err == "train_tool_env.py: error: no episodes.jsonl: run the export phase first\n"
