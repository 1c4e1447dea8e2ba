"""``meeting-gym export --episodes --format openai``: expert episodes as standard tool-call
data (``tool_calls``, ``tool`` messages, ``tools``), each replayed before it is written; the
calls survive a tools-aware chat template (Qwen2.5's, as TRL ships it), and TRL's
``SFTTrainer`` takes the file as it is."""

from __future__ import annotations

import copy
import json
import re

import pytest

import meeting_gym  # noqa: F401
from meeting_gym.cli import main
from meeting_gym.core.protocol import AnswerAction, ToolCallsAction, parse_action
from meeting_gym.evaluation.episodes import episode_rows, replay_messages

TOOL_ENVS = ["MeetingSlot-v0", "CronSchedule-Tools-v0", "TimetablePlanner-v0"]


def calls_of(action) -> list[tuple[str, dict]] | str:
    """An action as (name, arguments) pairs, or the answer text: what must survive."""
    if isinstance(action, AnswerAction):
        return action.text
    assert isinstance(action, ToolCallsAction), action
    return [
        (c.name, json.loads(c.arguments) if isinstance(c.arguments, str) else c.arguments)
        for c in action.calls
    ]


def text_action(content: str, tag: str) -> list[tuple[str, dict]] | str:
    """A text-protocol action as calls or answer; TimetablePlanner's reference policy writes
    the seed's action object, ``{"action_type": TOOL, **arguments}``."""
    data = json.loads(content) if content.startswith('{"action_type"') else None
    if data is not None:
        return [(data.pop("action_type"), data)]
    return calls_of(parse_action(content, answer_tag=tag))


def text_actions(row: dict) -> list:
    tag = "cron" if row["env"].startswith("CronSchedule") else "answer"
    return [text_action(m["content"], tag) for m in row["messages"] if m["role"] == "assistant"]


@pytest.mark.parametrize("env_id", TOOL_ENVS)
def test_the_openai_export_plays_the_same_episodes_as_the_text_one(env_id):
    text = list(episode_rows(env_id, "curated", 4))
    native = list(episode_rows(env_id, "curated", 4, tool_format="openai"))
    for t, o in zip(text, native, strict=True):
        assert (o["reward"], o["turns"], o["tool_calls"]) == (
            t["reward"],
            t["turns"],
            t["tool_calls"],
        )
        assert o["format"] == "openai" and o["tools"] and "format" not in t
        assert {m["role"] for m in o["messages"]} <= {"system", "user", "assistant", "tool"}
        calls = [m for m in o["messages"] if m.get("tool_calls")]
        for message in calls:  # arguments as objects, every call answered by its own result
            for call in message["tool_calls"]:
                assert isinstance(call["function"]["arguments"], dict)
        ids = [c["id"] for m in calls for c in m["tool_calls"]]
        answered = [m["tool_call_id"] for m in o["messages"] if m["role"] == "tool"]
        assert answered == ids[: len(answered)] and len(set(ids)) == len(ids)
        native_actions = []
        for m in o["messages"]:
            if m["role"] != "assistant":
                continue
            if m.get("tool_calls"):
                native_actions.append(
                    [(c["function"]["name"], c["function"]["arguments"]) for c in m["tool_calls"]]
                )
            else:
                native_actions.append(m["content"])
        assert native_actions == text_actions(t)


def test_a_tampered_openai_row_does_not_replay():
    row = next(episode_rows("MeetingSlot-v0", "curated", 1, tool_format="openai"))
    assert replay_messages(row) == pytest.approx(1.2)
    bad = copy.deepcopy(row)
    tool = next(m for m in bad["messages"] if m["role"] == "tool")
    tool["content"] = '["Someone else"]'
    with pytest.raises(ValueError, match="result is not the recorded one"):
        replay_messages(bad)
    bad = copy.deepcopy(row)
    call = next(m for m in bad["messages"] if m.get("tool_calls"))["tool_calls"][0]
    call["function"]["name"] = "get_timezone"
    with pytest.raises(ValueError):
        replay_messages(bad)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """100 MeetingSlot train episodes exported by the command, in both formats."""
    folder = tmp_path_factory.mktemp("export")
    for fmt in ("openai", "text"):
        args = ["export", "--env", "MeetingSlot-v0", "--split", "train", "-n", "100"]
        assert main([*args, "--episodes", "--format", fmt, "--out", str(folder / fmt)]) == 0
    read = [json.loads(line) for line in (folder / "openai").read_text().splitlines()]
    text = [json.loads(line) for line in (folder / "text").read_text().splitlines()]
    return folder / "openai", read, text


ASSISTANT = re.compile(r"<\|im_start\|>assistant\n(.*?)<\|im_end\|>", re.S)


def test_100_episodes_round_trip_through_qwen25s_template(exported):
    pytest.importorskip("trl", reason='needs pip install "meeting-gym[trl]"')
    from transformers.utils.chat_template_utils import render_jinja_template
    from trl.chat_template_utils import qwen2_5_chat_template

    _, rows, text_rows = exported
    assert len(rows) == 100
    for row, text in zip(rows, text_rows, strict=True):
        rendered = render_jinja_template(
            [row["messages"]], tools=row["tools"], chat_template=qwen2_5_chat_template
        )
        rendered = rendered[0] if isinstance(rendered, tuple) else rendered
        rendered = rendered[0] if isinstance(rendered, list) else rendered
        # the tools' schemas are in the system turn, each call in its own <tool_call> block
        for tool in row["tools"]:
            assert json.dumps(tool["function"]["name"]) in rendered
        back = [calls_of(parse_action(turn)) for turn in ASSISTANT.findall(rendered)]
        assert back == text_actions(text), row["id"]


def test_trls_sft_trainer_takes_the_file_as_it_is(exported, tmp_path):
    pytest.importorskip("trl", reason='needs pip install "meeting-gym[trl]"')
    pytest.importorskip("gguf", reason='needs pip install "meeting-gym[local]"')
    import transformers
    from datasets import load_dataset
    from tiny_llama import tiny_llama
    from trl import SFTConfig, SFTTrainer
    from trl.chat_template_utils import qwen2_5_chat_template

    from meeting_gym.agentkit.local import resolve_model

    try:
        source = resolve_model("smollm2")  # its tokenizer: ChatML, as Qwen2.5's template is
    except ValueError as exc:
        pytest.skip(str(exc))
    tokenizer = transformers.AutoTokenizer.from_pretrained(
        str(source.folder), gguf_file=source.gguf_file, local_files_only=True
    )
    tokenizer.chat_template = qwen2_5_chat_template
    path, _, _ = exported
    data = load_dataset("json", data_files=str(path), split="train")
    config = SFTConfig(
        output_dir=str(tmp_path),
        max_steps=2,
        per_device_train_batch_size=1,
        max_length=4096,
        use_cpu=True,
        bf16=False,
        report_to=[],
        save_strategy="no",
        logging_steps=1,
        disable_tqdm=True,
    )
    trainer = SFTTrainer(
        model=tiny_llama(len(tokenizer), context=4096),
        args=config,
        train_dataset=data,
        processing_class=tokenizer,
    )
    first = tokenizer.decode(trainer.train_dataset[0]["input_ids"])
    assert "<tools>" in first and '<tool_call>\n{"name": "list_attendees"' in first
    trainer.train()
    losses = [e["loss"] for e in trainer.state.log_history if "loss" in e]
    assert len(losses) == 2 and all(loss > 0 for loss in losses)
