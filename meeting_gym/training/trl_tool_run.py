"""The multi-turn pipeline's TRL engine (``--engine trl``): TRL's own trainers on whole episodes.

The phases of :mod:`meeting_gym.training.tool_run`, with TRL doing the training:

1. ``export``: the reference policy's whole episodes in the OpenAI tool-call format
   (``tool_calls``, ``tool`` messages, the env's ``tools`` schemas; each replayed before it is
   written: :mod:`meeting_gym.evaluation.episodes`), as ``episodes.jsonl``;
2. ``sft``: TRL's ``SFTTrainer`` on that file as it is, the model given TRL's Qwen2.5 chat
   template (ChatML, as SmolLM2's own, but it renders tools and reads ``<tool_call>`` blocks),
   the loss on the assistant's tokens only (``assistant_only_loss``: TRL's training variant
   of the template marks them); checkpointed every ``--save-every`` steps and resumed from the
   last checkpoint; ``sft_model/`` keeps the template, so ``meeting-gym eval --policy local
   --model OUT/sft_model`` plays it with native tool calls;
3. ``grpo``: ``GRPOTrainer(environment_factory=...)`` from ``sft_model/`` over whole episodes of
   fresh train items (never the SFT ones), up to ``--max-turns`` generations a rollout and
   ``--max-completion`` tokens in all, the env's grade the only reward
   (:mod:`meeting_gym.training.trl_tools`); every rollout written to ``grpo/rollouts.jsonl``
   and replayed on a fresh env at the end of the sitting (``grpo/replay_check.json``); saved
   every step and resumed; ``grpo_model/`` at the end.

The ``eval`` phase is the package's (:func:`~meeting_gym.training.tool_eval.evaluate_all`): a
folder whose template renders tools is played with native tool calls. Each phase stops after
``--phase-minutes`` at a saved checkpoint; run it again to go on. torch, transformers, TRL and
datasets are imported inside the functions.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from meeting_gym.agentkit.prompts import save_trained
from meeting_gym.training.runs import StepProgress
from meeting_gym.training.tool_options import SPLIT_SEED
from meeting_gym.training.trl_runs import load, quiet_trl_deprecations, trainer_settings

__all__ = ["export", "grpo", "grpo_rows", "sft"]

ENGINE_HINT = "export it again with --engine trl (into a fresh --out)"


def export(args: argparse.Namespace, out: Path) -> Path:
    """``episodes.jsonl`` in the OpenAI tool-call format (kept if already written)."""
    from meeting_gym.training import tool_run

    path = tool_run.export(args, out, tool_format="openai")
    check_format(path)
    return path


def check_format(episodes: Path) -> None:
    """Refuse episodes that are not the OpenAI format's (the own engine's text protocol)."""
    with open(episodes, encoding="utf-8") as handle:
        first = json.loads(handle.readline() or "{}")
    if first.get("format") != "openai":
        raise ValueError(f"{episodes} holds text-protocol episodes: {ENGINE_HINT}")


def _callback(progress: StepProgress, deadline_s: float, facts: tuple[str, ...]) -> Any:
    """A TrainerCallback: ``phase: step k/N ..., ETA`` from the trainer's log of each step,
    and training stopped at a saved checkpoint once ``deadline_s`` has passed."""
    from transformers import TrainerCallback

    started = time.perf_counter()

    class Progress(TrainerCallback):
        def on_train_begin(self, args: Any, state: Any, control: Any, **_: Any) -> None:
            progress.total = state.max_steps
            progress.begin(state.global_step or None)
            left = state.max_steps - state.global_step
            progress.say(f"{left} steps to take of {state.max_steps}")

        def on_step_begin(self, args: Any, state: Any, control: Any, **_: Any) -> None:
            if progress.phase == "grpo":  # a GRPO step is minutes of rollouts: say it began
                progress.say(f"step {state.global_step + 1}/{state.max_steps}: rolling out ...")

        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **_: Any) -> None:
            if logs and "loss" in logs:
                print(json.dumps({"step": state.global_step, **logs}), file=sys.stderr)
                shown = {k.split("/")[-1]: float(logs[k]) for k in facts if k in logs}
                progress.step(state.global_step, **shown)

        def on_step_end(self, args: Any, state: Any, control: Any, **_: Any) -> None:
            late = time.perf_counter() - started > deadline_s
            if late and state.global_step < state.max_steps:
                control.should_save = True
                control.should_training_stop = True

    return Progress()


def _last_checkpoint(folder: Path) -> str | None:
    from transformers.trainer_utils import get_last_checkpoint

    return get_last_checkpoint(str(folder)) if folder.is_dir() else None


def sft(args: argparse.Namespace, out: Path, episodes: Path) -> dict[str, Any]:
    """TRL's SFTTrainer on ``episodes.jsonl`` (or resumed); ``sft_model/`` once every step is
    taken."""
    from datasets import load_dataset
    from trl import SFTConfig, SFTTrainer
    from trl.chat_template_utils import qwen2_5_chat_template

    folder, state_dir = out / "sft_model", out / "sft"
    log_file = state_dir / "sft_log.json"
    if folder.is_dir() and log_file.is_file():
        return {"log": json.loads(log_file.read_text()), "done": True}
    check_format(episodes)
    quiet_trl_deprecations()
    if args.batch % args.micro_batch:
        raise ValueError("--batch must be a multiple of --micro-batch with --engine trl")
    progress = StepProgress("sft", 0)
    progress.say(f"loading {args.model} ...")
    tokenizer, model = load(args.model)
    # ChatML like SmolLM2's own, and it renders tools and reads <tool_call> blocks
    tokenizer.chat_template = qwen2_5_chat_template
    data = load_dataset("json", data_files=str(episodes), split="train")
    settings = trainer_settings(bf16=args.bf16, seed=args.seed, progress=False)
    config = SFTConfig(
        output_dir=str(state_dir),
        per_device_train_batch_size=args.micro_batch,
        gradient_accumulation_steps=args.batch // args.micro_batch,
        num_train_epochs=args.epochs,
        learning_rate=args.lr,
        lr_scheduler_type="cosine",
        warmup_steps=0,
        **{**settings, "save_strategy": "steps"},
        save_steps=args.save_every,
        save_total_limit=1,  # a resume needs the last checkpoint only (1.6 GB each)
        max_length=None,  # an episode is learnt whole, never cut
        assistant_only_loss=True,
    )
    callback = _callback(progress, args.phase_minutes * 60, ("loss",))
    trainer = SFTTrainer(
        model=model,
        args=config,
        train_dataset=data,
        processing_class=tokenizer,
        callbacks=[callback],
    )
    last = _last_checkpoint(state_dir)
    progress.say(
        f"{len(data)} episodes, {args.batch} a step" + (f"; resuming {last}" if last else "")
    )
    trainer.train(resume_from_checkpoint=last)
    log = [e for e in trainer.state.log_history if "loss" in e]
    done = trainer.state.global_step >= trainer.state.max_steps
    if done:
        save_trained(model, tokenizer, folder, args.env, args.prompt_text)
        log_file.write_text(json.dumps(log, indent=1))
    return {"log": log, "done": done}


def grpo_rows(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The GRPO phase's dataset rows: the train items after the SFT ones, one a prompt."""
    from meeting_gym.adapters.trl import rows

    n = args.episodes + args.grpo_steps * args.prompts
    every = rows(
        args.env,
        "train",
        n,
        seed=SPLIT_SEED,
        difficulty=args.difficulty or None,
        system_prompt=args.prompt_text,
    )
    return every[args.episodes :]


def grpo_config(args: argparse.Namespace, state_dir: Path, *, save: bool = True) -> Any:
    """TRL's GRPOConfig of the phase: a CPU run, saved every step (unless not ``save``: a
    benchmark's), ``--max-turns`` generations a rollout."""
    from trl import GRPOConfig

    settings = trainer_settings(bf16=args.bf16, seed=args.seed, progress=False)
    saving = {"save_strategy": "steps", "save_steps": 1} if save else {}
    return GRPOConfig(
        output_dir=str(state_dir),
        per_device_train_batch_size=args.prompts * args.group,
        num_generations=args.group,
        max_completion_length=args.max_completion,
        max_steps=args.grpo_steps,
        learning_rate=args.grpo_lr,
        lr_scheduler_type="constant",
        temperature=args.temperature,
        beta=args.kl,
        **{**settings, **saving},
        save_total_limit=1,  # a resume needs the last checkpoint only
        shuffle_dataset=False,  # the rows are already one fresh item per prompt
        max_tool_calling_iterations=args.max_turns - 1,  # the last generation answers
    )


def grpo(args: argparse.Namespace, out: Path) -> dict[str, Any]:
    """GRPOTrainer over whole episodes from ``sft_model/`` (or resumed); ``grpo_model/`` at
    the end. The sitting's rollouts are replayed before it returns; a rollout that does not
    replay to its logged reward stops the run (``ValueError``) after the check is written."""
    import os

    from datasets import Dataset
    from trl import GRPOTrainer

    from meeting_gym.agentkit.local import template_has_tools
    from meeting_gym.training.tool_run import drop_unsaved_rollouts
    from meeting_gym.training.trl_tools import (
        read_rollouts,
        recorded_factory,
        render_env_schemas,
        replay_rollouts,
        submit_replies,
    )

    folder, state_dir = out / "grpo_model", out / "grpo"
    log_file, rollouts = state_dir / "grpo_log.json", state_dir / "rollouts.jsonl"
    if folder.is_dir() and log_file.is_file():
        return {"log": json.loads(log_file.read_text()), "done": True}
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # environment_factory's notice
    quiet_trl_deprecations()
    state_dir.mkdir(parents=True, exist_ok=True)
    last = _last_checkpoint(state_dir)
    # a step stopped before its checkpoint is played again: its rows go
    drop_unsaved_rollouts(rollouts, int(last.rsplit("-", 1)[1]) if last else 0)
    progress = StepProgress("grpo", args.grpo_steps)
    progress.say("loading the SFT model ...")
    tokenizer, model = load(str(out / "sft_model"))
    if not template_has_tools(tokenizer):
        raise ValueError(f"{out / 'sft_model'} renders no tools: {ENGINE_HINT}, then sft")

    def sink(row: dict[str, Any]) -> None:
        with open(rollouts, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")

    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[submit_replies],
        args=grpo_config(args, state_dir),
        train_dataset=Dataset.from_list(grpo_rows(args)),
        processing_class=tokenizer,
        environment_factory=recorded_factory(args.env, sink),
        callbacks=[_callback(progress, args.phase_minutes * 60, ("reward", "loss"))],
    )
    render_env_schemas(trainer, args.env)
    each = f"{args.prompts} items x {args.group} episodes, up to {args.max_turns} generations"
    progress.say(each + (f"; resuming {last}" if last else ""))
    trainer.train(resume_from_checkpoint=last)
    log = [e for e in trainer.state.log_history if "reward" in e]
    check = replay_rollouts(read_rollouts(rollouts))
    (state_dir / "replay_check.json").write_text(json.dumps(check, indent=1))
    print(
        f"grpo: {check['replayed']} of {check['rows']} rollouts replay to their logged reward",
        file=sys.stderr,
        flush=True,
    )
    if check["mismatches"]:
        raise ValueError(f"grpo: a rollout does not replay: {check['mismatches'][0]}")
    done = trainer.state.global_step >= trainer.state.max_steps
    if done:
        save_trained(model, tokenizer, folder, args.env, args.prompt_text)
        log_file.write_text(json.dumps(log, indent=1))
    return {"log": log, "done": done, "replay": check}
