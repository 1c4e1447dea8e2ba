"""A trained model's folder records its system prompt, and ``--policy local`` uses it unless
told otherwise (issue 49 item 8: evaluated without ``--system-prompt short`` an SFT model
scored 0.000 instead of 0.200, silently)."""

from __future__ import annotations

import argparse
import json

import pytest

from meeting_gym.agentkit.prompts import PROMPT_FILE, save_trained, trained_prompt
from meeting_gym.core.registry import task_class
from meeting_gym.evaluation.chat import local_system_prompt


class Saves:
    """A model or tokenizer stand-in: writes one file where it is saved."""

    def __init__(self, name: str) -> None:
        self.name = name

    def save_pretrained(self, folder) -> None:
        (folder / self.name).write_text("x")


def args(model: str, system_prompt: str | None = None) -> argparse.Namespace:
    return argparse.Namespace(model=model, env="MeetingSlot-v0", system_prompt=system_prompt)


def test_a_saved_model_records_its_prompt_and_an_eval_of_it_uses_it(tmp_path):
    short = task_class("MeetingSlot-v0").short_system_prompt
    save_trained(Saves("model.bin"), Saves("tokenizer.json"), tmp_path, "MeetingSlot-v0", short)
    assert (tmp_path / "model.bin").is_file() and (tmp_path / "tokenizer.json").is_file()
    assert json.loads((tmp_path / PROMPT_FILE).read_text()) == {
        "env": "MeetingSlot-v0",
        "system_prompt": short,
    }
    assert trained_prompt(str(tmp_path)) == (True, short)
    prompt, note = local_system_prompt(args(str(tmp_path)))
    assert prompt == short and str(tmp_path) in note and PROMPT_FILE in note
    # a prompt asked for wins, and nothing is said
    assert local_system_prompt(args(str(tmp_path), "env")) == (None, None)
    assert local_system_prompt(args(str(tmp_path), "a prompt")) == ("a prompt", None)


def test_the_env_s_own_prompt_is_recorded_as_null_and_used_as_such(tmp_path):
    save_trained(Saves("m"), Saves("t"), tmp_path, "MeetingSlot-v0", None)
    prompt, note = local_system_prompt(args(str(tmp_path)))
    assert prompt is None and "the env's own" in note


def test_a_model_without_a_record_gets_the_default_and_a_bad_record_is_named(tmp_path):
    assert local_system_prompt(args("smollm2")) == (None, None)
    assert local_system_prompt(args(str(tmp_path))) == (None, None)
    (tmp_path / PROMPT_FILE).write_text("[1, 2]")
    with pytest.raises(ValueError, match=PROMPT_FILE):
        trained_prompt(str(tmp_path))
