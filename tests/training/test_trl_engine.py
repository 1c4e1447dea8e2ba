"""The multi-turn pipeline's TRL engine (``--engine trl``) on a tiny offline model: TRL's
SFTTrainer on the OpenAI-format export, GRPOTrainer(environment_factory) whose every rollout
replays to its logged reward, and phases that resume from their checkpoints."""

from __future__ import annotations

import copy
import json

import pytest

pytest.importorskip("trl", reason='needs pip install "meeting-gym[trl]"')

from trl_tiny import tiny_qwen3

from meeting_gym.adapters import trl as adapter
from meeting_gym.agents.policies import make_policy
from meeting_gym.core.protocol import AnswerAction, ToolCallsAction, parse_action
from meeting_gym.training import tool_options, tool_run, trl_tools

ENV = "MeetingSlot-v0"


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    """The tiny Qwen3-style model and its tokenizer, saved as a folder ``--model`` reads."""
    import torch

    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("tiny")
    model, tokenizer = tiny_qwen3(folder)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def trl_args(out, model, *flags):
    return tool_options.parse_args(
        [
            "--engine",
            "trl",
            "--model",
            str(model),
            "--out",
            str(out),
            "--episodes",
            "2",
            "--batch",
            "1",
            "--save-every",
            "1",
            "--lr",
            "1e-3",
            "--no-bf16",
            "--grpo-steps",
            "1",
            "--prompts",
            "1",
            "--group",
            "2",
            "--max-completion",
            "16",
            "--max-turns",
            "3",
            *flags,
        ]
    )


@pytest.fixture(scope="module")
def sft_run(tiny_folder, tmp_path_factory):
    """The export and sft phases run once: two steps of one episode each."""
    out = tmp_path_factory.mktemp("trl_run")
    args = trl_args(out, tiny_folder, "--phases", "export,sft")
    assert tool_run.run(args) == 0
    return out, args


def test_sft_trains_on_the_openai_export_and_saves_a_folder_with_the_tools_template(sft_run):
    from trl.chat_template_utils import qwen2_5_chat_template

    from meeting_gym.agentkit.local import template_has_tools
    from meeting_gym.agentkit.prompts import trained_prompt
    from meeting_gym.training.trl_runs import load

    out, args = sft_run
    rows = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and all(r["format"] == "openai" and r["tools"] for r in rows)
    assert all(r["reward"] == pytest.approx(1.2) for r in rows)  # replayed to gold's best
    log = json.loads((out / "sft" / "sft_log.json").read_text())
    assert [e["step"] for e in log] == [1, 2] and all(e["loss"] > 0 for e in log)
    tokenizer, _ = load(str(out / "sft_model"))
    assert tokenizer.chat_template == qwen2_5_chat_template and template_has_tools(tokenizer)
    assert trained_prompt(str(out / "sft_model")) == (True, args.prompt_text)
    # the phase is done: run again, it reads it back and takes no step
    assert tool_run.run(args) == 0
    assert json.loads((out / "sft" / "sft_log.json").read_text()) == log


def test_the_loss_is_on_the_assistants_tokens_only(sft_run, tiny_folder):
    """TRL's training variant of the Qwen2.5 template marks the calls and the answer, never
    the system prompt, the question or a tool result."""
    from trl.chat_template_utils import get_training_chat_template, qwen2_5_chat_template

    from meeting_gym.training.trl_runs import load

    out, _ = sft_run
    tokenizer, _ = load(str(tiny_folder))
    tokenizer.chat_template = qwen2_5_chat_template
    row = json.loads((out / "episodes.jsonl").read_text().splitlines()[0])
    done = tokenizer.apply_chat_template(
        row["messages"],
        tools=row["tools"],
        chat_template=get_training_chat_template(tokenizer),
        return_assistant_tokens_mask=True,
        return_dict=True,
        tokenize=True,
    )
    marks = zip(done["input_ids"], done["assistant_masks"], strict=True)
    learnt = tokenizer.decode([t for t, m in marks if m])
    assert '{"name": "list_attendees", "arguments": {}}' in learnt and "<answer>" in learnt
    tool_results = [m["content"] for m in row["messages"] if m["role"] == "tool"]
    assert "Find the earliest" not in learnt and tool_results[0] not in learnt


def play_gold(instance, row) -> str:
    """Gold's tool calls through the instance's methods, as TRL calls them; its answer text."""
    import gymnasium as gym

    env = gym.make(ENV, mode="text")
    question, info = env.reset(options={k: row[k] for k in adapter.ROW_KEYS if k in row})
    policy = make_policy("gold", env=ENV)
    policy.reset(question, info)
    observation = question
    for _ in range(40):
        action = parse_action(policy.act(observation))
        if isinstance(action, AnswerAction):
            return f"<answer>{action.answer}</answer>"
        assert isinstance(action, ToolCallsAction)
        results = [getattr(instance, c.name)(**c.arguments) for c in action.calls]
        observation = results[0] if len(results) == 1 else json.dumps(results)
    raise AssertionError("gold did not answer")


def test_a_submitted_reply_is_graded_and_its_row_replays_and_a_tampered_one_does_not():
    written = []
    cls = trl_tools.recorded_factory(ENV, written.append)
    assert not hasattr(cls, "answer")  # the model answers in its reply, as it was taught
    (row,) = adapter.rows(ENV, "curated", 1)
    envs = [cls(), cls()]
    answers = []
    for instance in envs:
        instance.reset(**row)
        answers.append(play_gold(instance, row))
    completions = [
        [{"role": "assistant", "content": answers[0]}],  # gold's answer
        [{"role": "assistant", "content": "<answer>NONE</answer>"}],  # a wrong one
    ]
    state = type("State", (), {"global_step": 4})()
    assert trl_tools.submit_replies(completions, envs, trainer_state=state) == [None, None]
    rewards = [instance.get_reward() for instance in envs]
    assert rewards[0] == pytest.approx(1.2) and rewards[1] < 1.2
    assert [w["reward"] for w in written] == rewards and {w["step"] for w in written} == {5}
    assert all(w["answered"] and w["tool_calls"] == len(w["actions"]) - 1 for w in written)
    check = trl_tools.replay_rollouts(written)
    assert check == {"rows": 2, "replayed": 2, "mismatches": []}
    tampered = copy.deepcopy(written)
    tampered[1]["reward"] = 1.2
    check = trl_tools.replay_rollouts(tampered)
    assert check["replayed"] == 1 and "not the logged reward" in check["mismatches"][0]["why"]
    tampered = copy.deepcopy(written)
    tampered[0]["observations"][0] = '["Someone else"]'
    assert "observation" in trl_tools.replay_rollouts(tampered)["mismatches"][0]["why"]


def test_get_reward_before_the_reply_is_submitted_is_refused():
    instance = trl_tools.recorded_factory(ENV, lambda row: None)()
    instance.reset(**adapter.rows(ENV, "curated", 1)[0])
    with pytest.raises(RuntimeError, match="submit_replies"):
        instance.get_reward()


def test_grpo_takes_a_step_of_group_2_and_every_rollout_replays(sft_run, tmp_path):
    import shutil

    src, _ = sft_run
    out = tmp_path / "run"
    shutil.copytree(src, out)
    args = trl_args(out, "unused", "--phases", "grpo")
    assert tool_run.run(args) == 0
    rows = trl_tools.read_rollouts(out / "grpo" / "rollouts.jsonl")
    assert len(rows) == 2 and {r["step"] for r in rows} == {1}
    first = adapter.rows(ENV, "train", 3, seed=42, system_prompt=args.prompt_text)[2]
    assert all(
        r["options"] == {k: first[k] for k in ("split", "index", "split_seed")} for r in rows
    )
    check = json.loads((out / "grpo" / "replay_check.json").read_text())
    assert check == {"rows": 2, "replayed": 2, "mismatches": []}
    log = json.loads((out / "grpo" / "grpo_log.json").read_text())
    assert [e["step"] for e in log] == [1]
    assert log[0]["reward"] == pytest.approx(sum(r["reward"] for r in rows) / 2)
    assert (out / "grpo_model" / "config.json").is_file()


def test_grpo_renders_the_envs_own_schemas_as_sft_and_evaluation_do(sft_run):
    """The GRPO prompt is token for token the one the SFT model learnt and is evaluated on."""
    import trl
    from datasets import Dataset

    from meeting_gym.agentkit.local import render_chat
    from meeting_gym.core.registry import task_class
    from meeting_gym.training import trl_tool_run
    from meeting_gym.training.trl_runs import load

    out, args = sft_run
    tokenizer, model = load(str(out / "sft_model"))
    trainer = trl.GRPOTrainer(
        model=model,
        reward_funcs=[trl_tools.submit_replies],
        args=trl_tool_run.grpo_config(args, out / "probe"),
        train_dataset=Dataset.from_list(trl_tool_run.grpo_rows(args)),
        processing_class=tokenizer,
        environment_factory=trl_tools.recorded_factory(ENV, lambda row: None),
    )
    trl_tools.render_env_schemas(trainer, ENV)
    prompt = trl_tool_run.grpo_rows(args)[0]["prompt"]
    trainer._batch_environments = [None]  # what the trainer sets for each batch
    ids = trainer._tokenize_prompts([prompt])[0][0]
    schemas = task_class(ENV).toolset.schemas()
    assert tokenizer.decode(ids) == render_chat(tokenizer, prompt, schemas)


def test_a_stopped_sft_phase_resumes_from_its_checkpoint(tiny_folder, tmp_path):
    out = tmp_path / "run"
    args = trl_args(out, tiny_folder, "--phases", "export,sft", "--phase-minutes", "0")
    assert tool_run.run(args) == 0  # stops after its first step, checkpointed
    assert not (out / "sft_model").exists()
    assert sorted(p.name for p in (out / "sft").glob("checkpoint-*")) == ["checkpoint-1"]
    args = trl_args(out, tiny_folder, "--phases", "sft")
    assert tool_run.run(args) == 0
    log = json.loads((out / "sft" / "sft_log.json").read_text())
    # one log of both sittings: step 1 from the first, step 2 from the second
    assert [e["step"] for e in log] == [1, 2] and (out / "sft_model").is_dir()


def test_the_engine_refuses_episodes_of_the_other_and_settings_it_has_none_of(tmp_path, capsys):
    from meeting_gym.evaluation.episodes import export_episodes

    export_episodes(tmp_path / "episodes.jsonl", ENV, "train", 1, split_seed=42)
    args = trl_args(tmp_path, "unused", "--phases", "sft")
    with pytest.raises(ValueError, match="text-protocol episodes: export it again"):
        tool_run.run(args)
    with pytest.raises(SystemExit):
        trl_args(tmp_path, "unused", "--phases", "grpo", "--rollout", "last-turn")
    assert "--engine trl takes neither" in capsys.readouterr().err


def test_a_stopped_grpo_phase_resumes_from_its_checkpoint_and_keeps_its_rollouts(sft_run, tmp_path):
    import shutil

    src, _ = sft_run
    out = tmp_path / "run"
    shutil.copytree(src, out)
    flags = ("--phases", "grpo", "--grpo-steps", "2")
    assert tool_run.run(trl_args(out, "unused", *flags, "--phase-minutes", "0")) == 0
    assert not (out / "grpo_model").exists()
    assert [p.name for p in (out / "grpo").glob("checkpoint-*")] == ["checkpoint-1"]
    # a row of a step played after the last checkpoint (a stop mid-step) is dropped on resume
    with open(out / "grpo" / "rollouts.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"step": 2, "unsaved": True}) + "\n")
    assert tool_run.run(trl_args(out, "unused", *flags)) == 0
    rows = trl_tools.read_rollouts(out / "grpo" / "rollouts.jsonl")
    assert [r["step"] for r in rows] == [1, 1, 2, 2] and not any("unsaved" in r for r in rows)
    # step 2 played the second item: the resumed trainer went on in its data, not from the top
    assert rows[2]["options"]["index"] == rows[0]["options"]["index"] + 1
    log = json.loads((out / "grpo" / "grpo_log.json").read_text())
    assert [e["step"] for e in log] == [1, 2]
    check = json.loads((out / "grpo" / "replay_check.json").read_text())
    assert check == {"rows": 4, "replayed": 4, "mismatches": []}
