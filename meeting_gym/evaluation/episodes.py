"""Expert episodes as chat data: the reference policy's whole episodes, replay-checked.

A multi-turn env (MeetingSlot-v0, CronSchedule-Tools-v0, TimetablePlanner-v0) is learnt
from whole episodes, not from a question and its answer: the system prompt, the question,
each assistant turn (tool calls in the text protocol, then the final answer) and each
tool result. :func:`expert_episode` plays the env's reference policy on one item and
writes the conversation exactly as :class:`~meeting_gym.agentkit.llm.LLMAgent` writes a
model's in the ``text`` tool protocol (the protocol of a chat template that renders no
tools, SmolLM2's): assistant messages whose content is the action, tool results as
``user`` messages. So a model fine-tuned on these rows is shown, token for token, the
conversations it is evaluated on.

Every episode is replayed on a fresh env before it is kept (:func:`replay_messages`): the
observations must be the recorded ones and the return the recorded one, and it must be
the env's best (``Task.max_reward_for``, where the env documents one for the item). A
wrong episode raises ``ValueError``: no wrong target is ever written.

Rows are TRL's conversational shape (``messages``) plus what replays them: ``env``,
``env_kwargs``, ``options`` (the item's reset options), ``seed``, ``id``, ``reward``,
``turns`` and ``tool_calls``. Nothing here imports torch or TRL.

``tool_format="openai"`` writes the same episodes in the standard tool-call shape that
tools-aware chat templates (Qwen2.5/3, Llama 3.1+, Mistral) and TRL's ``SFTTrainer`` take:
each call turn is an assistant message with ``tool_calls`` (``arguments`` an object, as
Hugging Face chat templates render them), each result a ``tool`` message with its
``tool_call_id`` and ``name``, the answer an assistant message's content, and the row
carries ``tools``, the env's JSON schemas (one source: the env's tool functions) and
``format: "openai"``. Such a row is replayed through the native tool protocol, the one
:class:`~meeting_gym.agentkit.llm.LLMAgent` plays a tool-calling model with.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from meeting_gym.agentkit.messages import (
    AssistantTurn,
    assistant_turn,
    initial_messages,
    observation_messages,
)
from meeting_gym.core.loop import ScriptedAgent, play
from meeting_gym.core.protocol import ToolCallsAction, parse_action

__all__ = ["TOOL_FORMATS", "episode_rows", "expert_episode", "export_episodes", "replay_messages"]

MULTI_TURN_HINT = "expert episodes are for tool envs; a single-turn env exports its items"
TOOL_FORMATS = ("text", "openai")
"""How tool calls are written: the text protocol (SmolLM2's), or OpenAI-style ``tool_calls``."""


def _calls(action: str, answer_tag: str, tools: set[str]) -> list[tuple[str, Any]] | None:
    """The (name, arguments) calls of a text action, or None for an answer or other text.

    Besides the protocol's call forms, an action object ``{"action_type": TOOL, **arguments}``
    naming one of the env's tools is that call: TimetablePlanner's seed wrote its actions so,
    and its reference policy still does (its ``tools`` module takes both as the same call).
    """
    parsed = parse_action(action, answer_tag=answer_tag)
    if isinstance(parsed, ToolCallsAction):
        return [(c.name, c.arguments) for c in parsed.calls]
    try:
        data = json.loads(action)
    except ValueError:
        return None
    if isinstance(data, dict) and data.get("action_type") in tools:
        return [(data["action_type"], {k: v for k, v in data.items() if k != "action_type"})]
    return None


def _openai_turn(
    action: str, answer_tag: str, number: int, tools: set[str]
) -> tuple[dict[str, Any], AssistantTurn]:
    """The expert's text action as an OpenAI-style assistant message (arguments as objects)
    and the native-protocol turn the env plays for it (the same calls, in order)."""
    found = _calls(action, answer_tag, tools)
    if found is None:
        message = {"role": "assistant", "content": action}
        return message, assistant_turn(message, "native", answer_tag=answer_tag)
    calls = []
    for index, (name, arguments) in enumerate(found):
        if isinstance(arguments, str):  # the protocol accepts a JSON-encoded string too
            arguments = json.loads(arguments)
        calls.append(
            {
                "id": f"call_{number}_{index}",
                "type": "function",
                "function": {"name": name, "arguments": arguments},
            }
        )
    message = {"role": "assistant", "content": "", "tool_calls": calls}
    return message, assistant_turn(message, "native", answer_tag=answer_tag)


def _result_messages(observation: str, turn: AssistantTurn, message: dict[str, Any]) -> list:
    """The messages that carry ``observation`` back after ``message`` (its turn ``turn``):
    one ``user`` message in the text protocol, one named ``tool`` message per call else."""
    names = {c["id"]: c["function"]["name"] for c in message.get("tool_calls") or []}
    out = observation_messages(observation, turn)
    for m in out:
        if m["role"] == "tool":
            m["name"] = names[m["tool_call_id"]]
    return out


def _turns(row: dict[str, Any]) -> list[tuple[dict[str, Any], AssistantTurn, list[dict]]]:
    """Each assistant message of a row, the turn the env plays for it, and the messages
    recorded after it (up to the next assistant message)."""
    messages = row["messages"]
    protocol = "native" if row.get("format") == "openai" else "text"
    tag = row.get("answer_tag", "answer")
    found = []
    for i, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        after = []
        for following in messages[i + 1 :]:
            if following["role"] == "assistant":
                break
            after.append(following)
        found.append((message, assistant_turn(message, protocol, answer_tag=tag), after))
    return found


def _make_env(env_id: str, env_kwargs: dict[str, Any]) -> Any:
    import gymnasium as gym

    import meeting_gym  # noqa: F401  (registers the env ids)

    return gym.make(env_id, mode="text", disable_env_checker=True, **env_kwargs)


class _Recorder:
    """An expert whose turns are written down as :class:`~meeting_gym.agentkit.llm.LLMAgent`
    writes a model's (text protocol): the conversation a model is trained on."""

    def __init__(self, expert: Any, system_prompt: str | None, tool_format: str = "text") -> None:
        if tool_format not in TOOL_FORMATS:
            raise ValueError(f"unknown tool format {tool_format!r}; choose one of {TOOL_FORMATS}")
        self.expert, self.system_prompt, self.tool_format = expert, system_prompt, tool_format
        self.name = getattr(expert, "name", "expert")

    def reset(self, observation: Any, info: dict[str, Any], *, env: Any, seed: int | None) -> None:
        self.messages = initial_messages(observation, info, self.system_prompt)
        self.answer_tag = info.get("answer_tag", "answer")
        self.tools = list(info.get("tools") or [])
        self.calls, self.turn, self.message = 0, None, None
        self.expert.reset(observation, info, env=env, seed=seed)

    def act(self, observation: Any, info: dict[str, Any]) -> Any:
        if self.turn is not None:  # the observation answers the previous turn
            self.messages.extend(_result_messages(observation, self.turn, self.message))
        action = self.expert.act(observation, info)
        if self.tool_format == "openai":
            number = sum(m["role"] == "assistant" for m in self.messages)
            names = {t["function"]["name"] for t in self.tools}
            self.message, self.turn = _openai_turn(action, self.answer_tag, number, names)
        else:
            self.turn = assistant_turn({"role": "assistant", "content": action}, "text")
            self.message = self.turn.message
        self.messages.append(self.message)
        parsed = parse_action(action, answer_tag=self.answer_tag)
        if isinstance(parsed, ToolCallsAction):
            self.calls += len(parsed.calls)
        return self.turn.action


def expert_episode(
    env: Any,
    options: dict[str, Any],
    *,
    seed: int | None = None,
    system_prompt: str | None = None,
    policy: str | None = None,
    tool_format: str = "text",
) -> dict[str, Any]:
    """Play the reference policy (or ``policy``) on the item ``options`` address.

    ``env`` is a text-mode env; ``system_prompt`` None keeps the env's own; ``tool_format``
    one of :data:`TOOL_FORMATS`. Returns the row (see the module doc); nothing is checked
    here (:func:`replay_messages` checks).
    """
    from meeting_gym.agents.policies import make_policy

    task = env.unwrapped.task
    env_id = env.spec.id if env.spec is not None else task.env_id
    expert = make_policy(policy or task.reference_policy, seed=seed, env=env_id)
    recorder = _Recorder(expert, system_prompt, tool_format)
    rollout = play(env, recorder, seed=seed, options=options)
    extra: dict[str, Any] = {}
    if tool_format == "openai":
        extra = {"format": "openai", "tools": recorder.tools, "answer_tag": recorder.answer_tag}
    return {
        "id": rollout.reset_info.get(task.id_key),
        "env": env_id,
        "env_kwargs": {
            k: v for k, v in task.config().items() if v is not None and k != "difficulty"
        },
        "options": dict(options),
        "seed": seed,
        "messages": recorder.messages,
        "reward": rollout.total_reward,
        "turns": rollout.turns,
        "tool_calls": recorder.calls,
        **extra,
    }


def replay_messages(row: dict[str, Any], env: Any | None = None) -> float:
    """Replay ``row``'s assistant turns on a fresh env; the return, checked.

    The turns are played through the one episode loop (:func:`~meeting_gym.core.loop.play`)
    by a :class:`~meeting_gym.core.loop.ScriptedAgent`. Raises ``ValueError`` naming the
    row if an observation differs from the recorded one, the episode does not end on its
    last turn, the return differs from the row's, or it is not the env's best for the item
    (where the env documents one).
    """
    own = env is None
    if env is None:
        env = _make_env(row["env"], row.get("env_kwargs") or {})
    try:
        messages = row["messages"]
        user = [m for m in messages if m["role"] == "user"]
        turns = _turns(row)
        name = f"episode {row.get('id')!r} ({row['env']} {row['options']})"
        wrong: list[int] = []

        def observed(k: int, observation: Any) -> None:
            message, turn, recorded = turns[k]
            if _result_messages(observation, turn, message) != recorded:
                wrong.append(k)

        agent = ScriptedAgent([turn.action for _, turn, _ in turns], observed)
        rollout = play(env, agent, seed=row.get("seed"), options=row["options"])
        if not user or user[0]["content"] != agent.first:
            raise ValueError(f"{name}: the env's question is not the recorded one")
        if wrong:
            raise ValueError(f"{name}: turn {wrong[0] + 1}'s result is not the recorded one")
        if agent.left:
            raise ValueError(f"{name}: the episode ended before turn {agent.played + 1}")
        if not rollout.done:
            raise ValueError(f"{name}: the episode has not ended after its last turn")
        total = rollout.total_reward
        if not math.isclose(total, row["reward"], abs_tol=1e-9):
            raise ValueError(f"{name}: replayed return {total} is not the recorded {row['reward']}")
        task = env.unwrapped.task
        best = task.max_reward_for(env.unwrapped.episode.item)
        if best is not None and not math.isclose(total, best, abs_tol=1e-9):
            raise ValueError(f"{name}: the expert earns {total}, not the env's best {best}")
        return total
    finally:
        if own:
            env.close()


def episode_rows(
    env_id: str,
    split: str = "train",
    n: int = 100,
    *,
    split_seed: int | None = None,
    difficulty: str | None = None,
    system_prompt: str | None = None,
    start: int = 0,
    policy: str | None = None,
    tool_format: str = "text",
    **env_kwargs: Any,
) -> Iterator[dict[str, Any]]:
    """Expert episodes of items ``start`` to ``start + n - 1`` of ``split``, each replayed.

    ``policy`` names the expert (default: the env's reference policy; MeetingSlot's
    ``gold-worked`` writes a worked solution before its answer); ``tool_format`` how its
    calls are written (:data:`TOOL_FORMATS`). ``env_kwargs`` are the env's settings
    (``gym.make`` keywords). Raises ``ValueError`` for a single-turn env, or at the first
    episode that does not replay to the env's best.
    """
    from meeting_gym.core.registry import task_class

    if task_class(env_id).toolset is None:
        raise ValueError(f"{env_id}: {MULTI_TURN_HINT}")
    play_env = _make_env(env_id, env_kwargs)
    check_env = _make_env(env_id, env_kwargs)
    try:
        for index in range(start, start + n):
            options: dict[str, Any] = {"split": split, "index": index}
            if split_seed is not None:
                options["split_seed"] = split_seed
            if difficulty is not None:
                options["difficulty"] = difficulty
            row = expert_episode(
                play_env,
                options,
                seed=index,
                system_prompt=system_prompt,
                policy=policy,
                tool_format=tool_format,
            )
            replay_messages(row, check_env)
            yield row
    finally:
        play_env.close()
        check_env.close()


def export_episodes(
    path: str | Path, env_id: str, split: str = "train", n: int = 100, **kw: Any
) -> int:
    """Write :func:`episode_rows` as JSONL to ``path``; the number written.

    The file is written whole or not at all: a wrong episode stops the export before
    ``path`` is touched.
    """
    rows = list(episode_rows(env_id, split, n, **kw))
    target = Path(path)
    with open(target, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return len(rows)
