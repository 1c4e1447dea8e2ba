"""What ``examples/train_grpo.py`` needs besides TRL: SFT rows, system prompts, intervals.

* :func:`sft_rows` turns a split exported by :func:`~meeting_gym.core.splits.export_split`
  into TRL's conversational prompt/completion rows. The completion is the reply the env's
  reference policy gives on the row's item (the exported gold answer in the env's answer
  block), and each one is graded by the env before it is used: a target that does not earn
  the env's maximum stops the run.
* :func:`system_prompt_for` picks what the model is told: the env's own system prompt, or a
  short one stating the same answer format. What the model is told is a choice of the
  trainer, not of the env: the rubric grades the reply either way. The short prompts exist
  because the envs' own are long (CalendarMath's is 308 SmolLM2 tokens against a
  30-token question), and on a CPU the cost of every training step grows with it.
* :func:`mean_interval` and :func:`paired_interval`: the 95% intervals the results table
  reports (normal approximation; the paired one over per-item differences).

Nothing here imports gymnasium at module level, torch or TRL.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from statistics import fmean, stdev
from typing import Any

from meeting_gym.core.registry import ENVS, task_class

__all__ = [
    "first_call_rows",
    "mean_interval",
    "paired_interval",
    "save_trained",
    "sft_rows",
    "system_prompt_for",
    "trainable",
    "trained_prompt",
    "with_answer",
]


def __getattr__(name: str) -> Any:
    # SHORT_PROMPTS: each task's ``short_system_prompt`` by env id (built when asked for,
    # so that this module imports no env)
    if name != "SHORT_PROMPTS":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return {
        env_id: task_class(env_id).short_system_prompt
        for env_id in ENVS
        if task_class(env_id).short_system_prompt is not None
    }


def system_prompt_for(env_id: str, choice: str) -> str | None:
    """The system prompt for ``choice``: ``env`` (None: the env's own), ``short``, or a text.

    Raises ``ValueError`` for ``short`` on an env that has no short prompt.
    """
    if choice == "env":
        return None
    if choice == "short":
        short = task_class(env_id).short_system_prompt
        if short is None:
            raise ValueError(
                f"no short system prompt for {env_id}; use --system-prompt env or give one"
            )
        return short
    if not choice.strip():
        raise ValueError("the system prompt is empty")
    return choice


PROMPT_FILE = "meeting_gym_prompt.json"
"""The file in a trained model's folder that says which system prompt it was trained with."""


def save_trained(model: Any, tokenizer: Any, folder: Path, env_id: str, prompt: str | None) -> None:
    """Save ``model`` and ``tokenizer`` to ``folder`` with the system prompt they were trained
    with (``prompt``; None: the env's own), so that an evaluation of the folder uses it."""
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    record = {"env": env_id, "system_prompt": prompt}
    (Path(folder) / PROMPT_FILE).write_text(json.dumps(record, indent=1) + "\n")


def trained_prompt(model: str) -> tuple[bool, str | None]:
    """``(True, prompt)`` if ``model`` is a folder that records the system prompt it was
    trained with (None: the env's own), else ``(False, None)``; ``ValueError`` naming the
    file if the record cannot be read."""
    path = Path(model) / PROMPT_FILE
    if not path.is_file():
        return False, None
    try:
        record = json.loads(path.read_text())
        prompt = record["system_prompt"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not a system prompt record ({exc})") from None
    if prompt is not None and not isinstance(prompt, str):
        raise ValueError(f"{path}: system_prompt must be a string or null")
    return True, prompt


_BLOCK = re.compile(r"<([A-Za-z_]+)>(.*)</\1>", re.DOTALL)


def with_answer(reply: str, answer: str) -> str:
    """``reply`` (one ``<tag>...</tag>`` block) holding ``answer`` instead of its content.

    The reference policy picks the block (``<answer>``, or CronSchedule's ``<cron>`` or
    ``<times>`` by the question's kind); the exported answer is what goes in it (a cron
    item's own expression, where the policy writes an equivalent canonical one). A reply of
    another shape is returned as it is.
    """
    match = _BLOCK.fullmatch(reply.strip())
    if match is None:
        return reply
    tag = match.group(1)
    return f"<{tag}>{answer}</{tag}>"


def sft_rows(path: str | Path, system_prompt: str | None = None) -> list[dict[str, Any]]:
    """Conversational SFT rows from an exported split: the item's prompt and the gold reply.

    The reply is the exported answer in the block the env's reference policy answers with
    (:func:`with_answer`). ``system_prompt`` None keeps the env's own. Raises ``ValueError``
    if the env's question is not the exported one or the reply does not earn the env's
    maximum reward, so no wrong target is ever trained on.
    """
    import gymnasium as gym

    import meeting_gym  # noqa: F401  (registers the env ids)
    from meeting_gym.agents.policies import make_policy
    from meeting_gym.core.registry import task_class

    out: list[dict[str, Any]] = []
    envs: dict[str, Any] = {}
    with open(path, encoding="utf-8") as handle:
        exported = [json.loads(line) for line in handle if line.strip()]
    for row in exported:
        env_id, kwargs = row["env"], row.get("env_kwargs") or {}
        key = json.dumps([env_id, kwargs], sort_keys=True)
        if key not in envs:
            envs[key] = gym.make(env_id, mode="text", disable_env_checker=True, **kwargs)
        env = envs[key]
        observation, info = env.reset(options=row["options"])
        if observation != row["question"]:
            raise ValueError(f"row {row['id']}: the env's question is not the exported one")
        policy = make_policy(task_class(env_id).reference_policy, env=env_id)
        policy.reset(observation, info)
        reply = with_answer(policy.act(observation), row["answer"])
        if row["answer"] not in reply:
            raise ValueError(f"row {row['id']}: the gold reply {reply!r} is not one answer block")
        _, reward, _, _, final = env.step(reply)
        best = env.unwrapped.task.max_reward
        if not math.isclose(reward, best):
            raise ValueError(
                f"row {row['id']}: the exported answer {row['answer']!r} earns {reward}, not "
                f"{best} (graded {final.get('answer')!r})"
            )
        prompt = info["system_prompt"] if system_prompt is None else system_prompt
        out.append(
            {
                "prompt": [
                    {"role": "system", "content": prompt},
                    {"role": "user", "content": observation},
                ],
                "completion": [{"role": "assistant", "content": reply}],
            }
        )
    for env in envs.values():
        env.close()
    return out


def trainable(model: Any) -> Any:
    """A plain float32 copy of a model loaded from a GGUF file, which trainers accept.

    transformers de-quantises a GGUF file's weights to float32 on load but keeps the model
    marked as quantized (its GGUF quantizer and config stay attached), and Trainer refuses
    to fine-tune a quantized model without adapters. The copy is built from the same config
    without its ``quantization_config`` and takes the same weights; a model that is not
    marked is returned as is.
    """
    if getattr(model, "hf_quantizer", None) is None and not getattr(model, "is_quantized", False):
        return model
    from transformers import AutoModelForCausalLM

    config = copy.deepcopy(model.config)
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    plain = AutoModelForCausalLM.from_config(config, dtype=model.dtype)
    plain.load_state_dict(model.state_dict())
    plain.generation_config = copy.deepcopy(model.generation_config)
    return plain


def first_call_rows(
    env_id: str,
    n: int,
    system_prompt: str | None = None,
    *,
    difficulty: str | None = None,
    **task_options: Any,
) -> list[dict[str, Any]]:
    """SFT rows for a tool env: each train item's prompt and the reference policy's first turn.

    The completion is that turn as a structured assistant message (``tool_calls`` with the
    tool's name and arguments), which a chat template that renders tools writes in its own
    call syntax; the tool's result is not part of it. Raises ``ValueError`` if the reference
    policy's first turn on an item is not a tool call.
    """
    import gymnasium as gym

    import meeting_gym  # noqa: F401  (registers the env ids)
    from meeting_gym.agents.policies import make_policy
    from meeting_gym.core.protocol import ToolCallsAction, parse_action
    from meeting_gym.core.registry import task_class

    env = gym.make(env_id, mode="text", disable_env_checker=True, **task_options)
    task = task_class(env_id)
    out = []
    for index in range(n):
        options: dict[str, Any] = {"split": "train", "index": index}
        if difficulty is not None:
            options["difficulty"] = difficulty
        observation, info = env.reset(options=options)
        policy = make_policy(task.reference_policy, env=env_id)
        policy.reset(observation, info)
        action = parse_action(policy.act(observation), answer_tag=task.answer_tag)
        if not isinstance(action, ToolCallsAction):
            raise ValueError(
                f"{env_id} train item {index}: the reference policy's first turn is not a tool call"
            )
        calls = [
            {"type": "function", "function": {"name": c.name, "arguments": dict(c.arguments)}}
            for c in action.calls
        ]
        prompt = info["system_prompt"] if system_prompt is None else system_prompt
        out.append(
            {
                "prompt": [
                    {"role": "system", "content": prompt},
                    {"role": "user", "content": observation},
                ],
                "completion": [{"role": "assistant", "content": "", "tool_calls": calls}],
            }
        )
    env.close()
    return out


def mean_interval(values: Sequence[float]) -> tuple[float, float]:
    """The mean and the half-width of its 95% interval (normal approximation)."""
    if not values:
        raise ValueError("no values")
    half = 1.96 * stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0
    return fmean(values), half


def paired_interval(after: Sequence[float], before: Sequence[float]) -> tuple[float, float]:
    """The mean per-item difference ``after - before`` and its 95% half-width."""
    if len(after) != len(before):
        raise ValueError(f"unpaired: {len(after)} values against {len(before)}")
    return mean_interval([a - b for a, b in zip(after, before, strict=True)])
