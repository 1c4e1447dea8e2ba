"""verifiers environments for every env of the family (``pip install "meeting-gym[verifiers]"``).

Two verifiers lines, one scoring path:

* :mod:`.taskset`: the current API (verifiers 0.4+, ``verifiers.v1``): a parametrised
  ``Taskset`` that ``vf-eval meeting-gym-verifiers`` finds through the
  ``meeting_gym_verifiers`` package; the task's tools as an MCP ``Toolset``; the rubric
  terms as weighted ``@vf.reward`` functions.
* :mod:`.legacy`: the 0.3.x line's ``load_environment`` (a ``SingleTurnEnv`` or a
  ``StatefulToolEnv`` with the rubric terms as weighted reward functions), the API the
  users of the original verifiers environments are on. It needs verifiers 0.3.x, whose
  pins (``mcp<2``) conflict with 0.4's (``mcp==2.0``): one venv per line.

This module holds what both share and imports no verifiers: the items of a split as
task rows, and :func:`replay`, which scores a conversation by playing it through
``gymnasium.make(env, mode="text")``: each assistant message becomes one ``env.step``,
exactly as ``meeting-gym eval --policy openai`` turns a chat message into an action
(:func:`meeting_gym.agentkit.assistant_turn`). The reward either line reports is the
env's final ``info``: its rubric terms, weighted by the env's rubric.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import gymnasium as gym

from meeting_gym.agentkit import assistant_turn
from meeting_gym.core.loop import ScriptedAgent, play
from meeting_gym.core.registry import entry, load_object, make_task, task_class
from meeting_gym.core.splits import DEFAULT_ENV, DEFAULT_SEED, load_split, options_item

INSTALL_HINT = 'the verifiers adapter needs verifiers 0.4: pip install "meeting-gym[verifiers]"'
LEGACY_HINT = 'the 0.3.x adapter needs verifiers 0.3.x: pip install "meeting-gym[verifiers03]"'

__all__ = [
    "DEFAULT_ENV",
    "DEFAULT_SEED",
    "check_env",
    "item_row",
    "make_env",
    "options_row",
    "replay",
    "reward_weights",
    "task_rows",
    "toolset",
    "verifiers_version",
]


def verifiers_version() -> tuple[int, ...] | None:
    """The installed verifiers version as numbers (None if it is not installed)."""
    try:
        text = version("verifiers")
    except PackageNotFoundError:
        return None
    numbers = []
    for part in text.split(".")[:3]:
        digits = "".join(ch for ch in part if ch.isdigit())
        numbers.append(int(digits or 0))
    return tuple(numbers)


def require_verifiers(*, v1: bool) -> None:
    """Raise ``ImportError`` with an install hint unless the wanted verifiers line is installed."""
    found = verifiers_version()
    if v1 and (found is None or found < (0, 4)):
        raise ImportError(f"{INSTALL_HINT} (found {found or 'none'})")
    if not v1 and (found is None or found >= (0, 4)):
        raise ImportError(f"{LEGACY_HINT} (found {found or 'none'})")


def check_env(env_id: str) -> str:
    """``env_id`` if it is a registered env with a text mode, else ``ValueError`` naming them."""
    import meeting_gym  # noqa: F401 - registers every env id

    spec = gym.spec(entry(env_id).env_id)  # entry() names the registered envs
    if "text" not in load_object(spec.entry_point).modes:
        raise ValueError(f"{env_id} has no text mode")
    return env_id


def make_env(env_id: str, settings: Mapping[str, Any] | None = None) -> gym.Env:
    """The env as every adapter plays it: ``gym.make(env_id, mode="text")`` with its settings."""
    return gym.make(env_id, mode="text", disable_env_checker=True, **dict(settings or {}))


def toolset(env_id: str) -> Any:
    """The task's :class:`~meeting_gym.agentkit.ToolSet`, or None for a single-turn task."""
    return task_class(check_env(env_id)).toolset


def task_rows(
    env_id: str,
    split: str = "eval",
    n: int | None = None,
    seed: int = DEFAULT_SEED,
    difficulty: str | None = None,
    settings: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """One row per item of the split: the env's prompt, its id, the options that address it,
    its gold ``answer``, its rubric weights (``task.rubric_for(item)``) and the turn budget.

    ``options`` replays the item: ``env.reset(options=row["options"])`` plays
    ``load_split(split, ...)[index]``, and its observation is ``row["prompt"]``.
    """
    check_env(env_id)
    settings = dict(settings or {})
    task = make_task(env_id, **settings)
    items = load_split(split, n, seed, difficulty, env=task)
    rows = []
    for index, item in enumerate(items):
        options: dict[str, Any] = {"split": split, "index": index, "split_seed": seed}
        if difficulty is not None:
            options["difficulty"] = difficulty
        rows.append(item_row(env_id, task, item, options, settings))
    return rows


def options_row(
    env_id: str,
    options: Mapping[str, Any],
    settings: Mapping[str, Any] | None = None,
    *,
    task: Any = None,
) -> dict[str, Any]:
    """The row of the one item the split ``options`` address (a curriculum draw's, say).

    ``task`` is the env's task made with ``settings``, when the caller has it already (a
    curriculum reads one row per draw: the task is made once, not at every read).
    """
    settings = dict(settings or {})
    if task is None:
        task = make_task(check_env(env_id), **settings)
    found = options_item(task, options)
    if found is None:
        raise ValueError(f"the options {dict(options)!r} address no split item")
    return item_row(env_id, task, found[0], dict(options), settings)


def item_row(
    env_id: str, task: Any, item: Any, options: dict[str, Any], settings: dict[str, Any]
) -> dict[str, Any]:
    """One task row: what :func:`task_rows` lists for each item."""
    return {
        "id": task.item_id(item),
        "name": f"{env_id}/{options['split']}/{options['index']}",
        "prompt": task.question(item),
        "system_prompt": task.system_prompt(),
        "env": env_id,
        "options": options,
        "settings": settings,
        "answer": task.gold(item, task.truth(item)),
        "rubric": reward_weights(task, item),
        "max_turns": task.turns_for(item),
    }


def reward_weights(task: Any, item: Any) -> dict[str, float]:
    """The rewards a verifiers rubric reports for ``item``, each with its weight.

    A terminal rubric's terms with their weights: their weighted sum is the env's reward.
    A task that pays every step (``dense_reward``, TimetablePlanner) is rewarded by its
    return: ``reward`` (the sum of the step rewards, the env's final ``info["reward"]``)
    at weight 1, its terms (the component scores) reported beside it at weight 0, so
    the weighted sum is still exactly the env's reward.
    """
    terms = {t.name: t.weight for t in task.rubric_for(item).terms}
    if task.episode_class.dense_reward:
        return {"reward": 1.0, **dict.fromkeys(terms, 0.0)}
    return terms


def _role(message: Any) -> Any:
    return message.get("role") if isinstance(message, dict) else getattr(message, "role", None)


def replay(env: gym.Env, options: Mapping[str, Any], messages: Iterable[Any]) -> dict[str, Any]:
    """The env's final ``info`` for a conversation, its assistant messages played through ``env``.

    ``env`` is reset to the item ``options`` address; other roles are skipped, and each
    assistant message (a dict or an object with ``content`` / ``tool_calls``, in OpenAI's,
    verifiers 0.3's or 0.4's shape) is one
    ``env.step``, as in the package's own LLM loop: all its tool calls are one turn, and a
    message with an ``<answer>`` block or without tool calls is read by the text protocol
    (an answer block ends the episode; calls are not run beside it). The replay stops
    when the env ends the episode; a conversation that ends first scores what the env
    scores an unanswered episode (0). Returns every rubric term, ``reward``, ``gold``,
    ``answer``, ``answered``, ``turns`` and the item's id under ``item_id``.

    Both adapters report the reward as weighted terms (:func:`reward_weights`), so an
    outcome whose reward is not their weighted sum raises ``ValueError`` rather than be
    reported as a reward the env did not give.
    """
    base = env.unwrapped
    tag = base.task.answer_tag
    actions = [
        assistant_turn(message, "native", answer_tag=tag).action
        for message in messages
        if _role(message) == "assistant"
    ]
    # the package's one episode loop: it stops where the env ends the episode (an answer,
    # or the turn budget), or where the conversation ends first (the script runs out)
    rollout = play(env, ScriptedAgent(actions), options=dict(options))
    turns = rollout.turns
    outcome = base.episode.outcome()
    weights = reward_weights(base.task, base.episode.item)
    weighted = round(sum(weight * outcome[name] for name, weight in weights.items()), 10)
    if weighted != round(outcome["reward"], 10):
        raise ValueError(
            f"{base.task.env_id or type(base.task).__name__}: the reward {outcome['reward']} "
            f"is not the weighted sum of its rubric terms ({weighted}); the verifiers "
            "adapters report rewards as weighted terms and cannot express it"
        )
    outcome["turns"] = turns
    outcome["item_id"] = base.episode.item_id
    return outcome
