"""examples/train_tool_env.py's curriculum settings, read without a model.

GRPO on ``easy`` MeetingSlot items learnt to answer 09:00Z (gold's answer on many of them
and almost no harder ones), so a run can start its curriculum at a harder difficulty.
"""

from __future__ import annotations

import importlib.util

import pytest
from paths import ROOT

spec = importlib.util.spec_from_file_location(
    "train_tool_env_example", ROOT / "examples" / "train_tool_env.py"
)
script = importlib.util.module_from_spec(spec)
spec.loader.exec_module(script)

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
    args = script.parse_args([*BASE, *flags])
    curriculum = script.curriculum_for(args, 42)
    assert curriculum.levels == levels
    assert curriculum.current == levels[0]
    # GRPO's first items are of the first difficulty
    chosen = script.item_source(args, curriculum)(0, 0, 2)
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
        script.parse_args([*BASE, *flags])
    assert stop.value.code == 2
    assert message in capsys.readouterr().err


def test_without_a_curriculum_there_are_no_curriculum_rules():
    assert script.parse_args(["--phases", "grpo"]).rules is None
