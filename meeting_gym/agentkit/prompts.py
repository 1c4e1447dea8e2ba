"""System prompts: which one a model is told, and the one a trained model's folder records.

* :func:`system_prompt_for` picks what the model is told: the env's own system prompt, or a
  short one stating the same answer format. What the model is told is a choice of the
  trainer, not of the env: the rubric grades the reply either way. The short prompts exist
  because the envs' own are long (CalendarMath's is 308 SmolLM2 tokens against a
  30-token question), and on a CPU the cost of every training step grows with it.
* :func:`save_trained` writes a trained model's folder with the prompt it was trained with;
  :func:`trained_prompt` reads it back, so an evaluation of the folder uses it.

Nothing here imports gymnasium at module level, torch or transformers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from meeting_gym.core.registry import ENVS, task_class

__all__ = ["PROMPT_FILE", "save_trained", "system_prompt_for", "trained_prompt"]


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
