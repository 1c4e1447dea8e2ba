"""One session's env, served: OpenEnv's ``Environment`` interface over a text-mode env.

Besides the env's own action (:func:`~meeting_gym.adapters.openenv.typed.models`), a
session takes OpenEnv's MCP actions: ``ListToolsAction`` answers the task's tools (names,
descriptions and JSON schemas from the task's own tool functions, the source the text
protocol and the OpenAI export read too), and ``CallToolAction`` is one tool call, played
as the env's turn that makes that one call. The answer is the env's own action.
"""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import numpy as np

from meeting_gym.core.curriculum import Curriculum
from meeting_gym.core.curriculum_wrapper import CurriculumWrapper
from meeting_gym.core.tools import ERROR_PREFIX

INSTALL_HINT = 'the OpenEnv server needs OpenEnv: pip install "meeting-gym[serve]"'


def openenv_modules() -> Any:
    """OpenEnv's server ``interfaces`` and ``types`` modules, or an ImportError that says
    what to install."""
    try:
        from openenv.core.env_server import interfaces, types
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError(INSTALL_HINT) from exc
    return interfaces, types


MCP_ACTIONS = ("list_tools", "call_tool")
"""The ``type`` of OpenEnv's MCP actions (``ListToolsAction``, ``CallToolAction``)."""


def mcp_action(data: dict[str, Any]) -> Any:
    """``data`` as OpenEnv's ``ListToolsAction`` or ``CallToolAction`` (by its ``type``,
    one of :data:`MCP_ACTIONS`); pydantic's ``ValidationError`` names a wrong field."""
    from openenv.core.env_server.mcp_types import CallToolAction, ListToolsAction

    kind = ListToolsAction if data.get("type") == "list_tools" else CallToolAction
    return kind.model_validate(data)


def tool_list(task: Any) -> list[dict[str, Any]]:
    """The task's tools as MCP lists them: ``name``, ``description``, ``input_schema``
    (empty for a task without tools)."""
    toolset = task.toolset
    if toolset is None:
        return []
    return [
        {"name": t.name, "description": t.description, "input_schema": t.parameters}
        for t in toolset
    ]


class NoEpisodeError(ValueError):
    """A step without an episode (plain HTTP ``/step`` is stateless: use the WebSocket)."""


def jsonable(value: Any) -> Any:
    """``value`` with numpy arrays and scalars turned into lists and numbers."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


def to_text(action: Any, answer_tag: str, object_fields: tuple[str, ...] = ()) -> str:
    """The text-protocol action an OpenEnv action stands for."""
    given = {name: getattr(action, name) for name in object_fields}
    given = {name: value for name, value in given.items() if value is not None}
    if given:  # the action object, as JSON (null fields left out: "missing", as before)
        return json.dumps(given, ensure_ascii=False).replace("<", "\\u003c")
    if getattr(action, "text", None) is not None:
        return action.text
    if getattr(action, "answer", None) is not None:
        return f"<{answer_tag}>{action.answer}</{answer_tag}>"
    calls = action.tool_calls if getattr(action, "tool_calls", None) else [action.tool_call]
    payload = [{"name": call.name, "arguments": call.arguments} for call in calls]
    # the text protocol reads a JSON array of calls; "<" escaped as format_tool_call does
    return json.dumps(payload, ensure_ascii=False).replace("<", "\\u003c")


class ServedEnv:
    """One session's env: OpenEnv's Environment interface over ``gym.make(env_id, mode="text")``.

    Mixed into a per-env subclass of OpenEnv's ``Environment`` by :func:`models`.
    """

    env_id: str
    models: Any  # the env id's typed classes (typed.Models), set when models() builds them

    def __init__(self, **env_kwargs: Any) -> None:
        super().__init__()
        self.env = gym.make(self.env_id, mode="text", disable_env_checker=True, **env_kwargs)
        self.episode_id: str | None = None
        self.steps = 0
        self.last_info: dict[str, Any] = {}
        self.done = False
        self.started = False
        # A curriculum session plays through the same CurriculumWrapper that classic RL
        # uses (so draws and reports follow one rule); other resets go to the env itself.
        self.curriculum: CurriculumWrapper | None = None
        self.curriculum_option: Any = None
        self.playing: gym.Env = self.env

    def reset(self, seed: int | None = None, episode_id: str | None = None, **options: Any) -> Any:
        unknown = sorted(set(options) - self.models.reset_options)
        if unknown:
            known = ", ".join(sorted(self.models.reset_options))
            raise ValueError(f"unknown reset field(s) {', '.join(unknown)}; known: seed, {known}")
        self.playing = self._player(options.pop("curriculum", None), options)
        # the wrapper draws only when it is given no options of the caller's
        observation, info = self.playing.reset(seed=seed, options=options or None)
        self.episode_id, self.steps, self.done, self.started = episode_id, 0, False, True
        if self.playing is not self.env:
            info = {**info, "curriculum": self._curriculum_info()}
        self.last_info = jsonable(info)
        return self.models.observation(text=observation, info=self.last_info, reward=None)

    def _player(self, option: Any, options: dict[str, Any]) -> gym.Env:
        """The env this episode plays: the session's curriculum wrapper (made or remade as
        ``option`` asks), or the env itself when there is no curriculum option."""
        if option is None or option is False:
            return self.env
        if options:
            raise ValueError(
                "curriculum draws the item itself: give no other reset option with it "
                f"(got {', '.join(sorted(options))})"
            )
        if self.curriculum is None or option != self.curriculum_option:
            self.curriculum = CurriculumWrapper(
                self.env, Curriculum.from_option(self.env_id, option)
            )
            self.curriculum_option = option
        return self.curriculum

    def _curriculum_info(self) -> dict[str, Any]:
        assert self.curriculum is not None
        cur = self.curriculum.curriculum
        rate = cur.success_rate()
        return {
            "level": cur.current,
            "recent_success": None if rate is None else round(rate, 4),
            "drawn": sum(cur.drawn.values()),
            "moves": len(cur.moves),
        }

    def step(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> Any:
        kind = getattr(action, "type", None)
        if kind == "list_tools":  # no episode needed, and no turn taken
            return self._list_tools()
        self._playable()
        if kind == "call_tool":
            return self._call_tool(action.tool_name, action.arguments)
        text = to_text(action, self.env.unwrapped.task.answer_tag, self.models.object_fields)
        observation, reward, terminated, truncated = self._turn(text)
        return self.models.observation(
            text=observation,
            info=self.last_info,
            reward=float(reward),
            done=self.done,
            truncated=bool(truncated and not terminated),
        )

    def _turn(self, text: str) -> tuple[str, float, bool, bool]:
        observation, reward, terminated, truncated, info = self.playing.step(text)
        self.steps += 1
        self.done = bool(terminated or truncated)
        self.last_info = jsonable(info)
        return observation, reward, terminated, truncated

    def _list_tools(self) -> Any:
        from openenv.core.env_server.mcp_types import ListToolsObservation, Tool

        tools = [Tool(**entry) for entry in tool_list(self.env.unwrapped.task)]
        return ListToolsObservation(tools=tools, done=self.done, reward=None)

    def _call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        """One tool call, played as the env's turn of that one call: the result is what the
        env answered (an ``error:`` line too, which also sets ``error``); ``metadata``
        holds the turn's ``info`` and ``truncated``."""
        from openenv.core.env_server.mcp_types import CallToolObservation, ToolError, ToolErrorType

        task = self.env.unwrapped.task
        if task.toolset is None:
            raise ValueError(
                f"{self.env_id} has no tools: answer with the env's own action "
                '({"answer": ...} or {"text": ...})'
            )
        text = json.dumps([{"name": name, "arguments": arguments}], ensure_ascii=False)
        observation, reward, terminated, truncated = self._turn(text.replace("<", "\\u003c"))
        error = None
        if observation.startswith(ERROR_PREFIX):
            known = name in task.toolset
            kind = ToolErrorType.INVALID_ARGS if known else ToolErrorType.TOOL_NOT_FOUND
            error = ToolError(error_type=kind, message=observation)
        return CallToolObservation(
            tool_name=name,
            result=observation,
            error=error,
            reward=float(reward),
            done=self.done,
            metadata={"info": self.last_info, "truncated": bool(truncated and not terminated)},
        )

    def _playable(self) -> None:
        if not self.started:
            raise NoEpisodeError(
                "no episode: call reset first (plain HTTP /step is stateless; "
                "play episodes over /ws, e.g. with meeting_gym.adapters.openenv.client)"
            )
        if self.done:
            raise NoEpisodeError("the episode is over: call reset")

    @property
    def state(self) -> Any:
        base = self.env.unwrapped
        item = None if base.episode is None else base.episode.item_id
        return self.models.state(
            episode_id=self.episode_id,
            step_count=self.steps,
            item_id=item,
            turn=base.turns,
            max_turns=base.max_turns,
            done=self.done,
        )

    def get_metadata(self) -> Any:
        from meeting_gym import __version__

        _, types = openenv_modules()
        task = self.env.unwrapped.task
        return types.EnvironmentMetadata(
            name=self.env_id,
            description=f"{self.env_id}: {task.summary} (meeting_gym {__version__})",
            version=__version__,
            documentation_url="the meeting_gym README, section OpenEnv",
        )

    def close(self) -> None:
        self.env.close()
