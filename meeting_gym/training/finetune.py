"""What the single-turn pipeline needs besides TRL: SFT rows and the model to train.

* :func:`sft_rows` turns a split exported by :func:`~meeting_gym.core.splits.export_split`
  into TRL's conversational prompt/completion rows. The completion is the reply the env's
  reference policy gives on the row's item (the exported gold answer in the env's answer
  block), and each one is graded by the env before it is used: a target that does not earn
  the env's maximum stops the run.
* The system prompts (:mod:`meeting_gym.agentkit.prompts`) and the intervals
  (:mod:`meeting_gym.evaluation.intervals`) are handed on from here too.

Nothing here imports gymnasium at module level, torch or TRL.
"""

from __future__ import annotations

import copy
import json
import math
import re
from pathlib import Path
from typing import Any

from meeting_gym.agentkit.prompts import (  # re-exported: the pipeline's names
    save_trained,
    system_prompt_for,
    trained_prompt,
)
from meeting_gym.core.registry import task_class
from meeting_gym.evaluation.intervals import mean_interval, paired_interval

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
