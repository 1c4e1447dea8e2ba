"""An OpenEnv server and client for every registered env (``pip install "meeting-gym[serve]"``).

``meeting-gym serve --env ID`` runs :func:`create_server_app` under uvicorn: OpenEnv's
routes (``/health /metadata /schema /reset /step /state /ws``), one env per WebSocket
session, many sessions at once, idle sessions expired. Each env gets typed models
derived from its task:

* the action: for a task with tools, exactly one of ``tool_call`` (``{"name",
  "arguments"}``, the name one of the task's tools), ``tool_calls`` (several, run in
  order in one turn), ``answer`` (the content of the final answer block) or ``text`` (a
  raw text-protocol action, as an LLM wrote it); for a single-turn task, ``answer`` or
  ``text``;
* the observation: ``text`` (what ``env.step`` returned) and ``info`` (its info), with
  OpenEnv's ``reward`` and ``done``;
* the state: ``env_id``, ``item_id``, ``turn``, ``max_turns``, ``done``.

``reset`` takes ``seed`` and the env's own reset options by name (``split`` and
``index``, ``split_seed``, ``difficulty``, ``item``, and the task's own, such as
MeetingSlot's ``scenario_id``). Everything runs through ``gymnasium.make(env_id,
mode="text")``: the reward a client sees is the env's own.

Plain HTTP ``/reset`` and ``/step`` are stateless in OpenEnv (each request builds a
fresh env), so an episode is played over the WebSocket with :func:`client` (async, or
``.sync()`` for blocking use). Bad payloads get an error that names the field: a 422
over HTTP, an error message over the WebSocket, whose session stays usable.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

import gymnasium as gym
import numpy as np

from meeting_gym.core.registry import task_class
from meeting_gym.core.splits import SPLIT_OPTIONS
from meeting_gym.core.text_env import MAX_CALLS_PER_TURN

INSTALL_HINT = 'the OpenEnv server needs openenv-core: pip install "meeting-gym[serve]"'
DEFAULT_MAX_SESSIONS = 64
DEFAULT_IDLE_TIMEOUT_S = 300.0


def _openenv() -> Any:
    try:
        from openenv.core.env_server import interfaces, types
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError(INSTALL_HINT) from exc
    return interfaces, types


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


@dataclass(frozen=True)
class Models:
    """The typed OpenEnv classes of one env id."""

    env_id: str
    action: type
    observation: type
    state: type
    environment: type
    reset_options: frozenset[str]
    object_fields: tuple[str, ...] = ()


@cache
def models(env_id: str) -> Models:
    """The action, observation, state and server environment classes of ``env_id``."""
    from pydantic import BaseModel, ConfigDict, Field, model_validator
    from pydantic_core import PydanticCustomError

    interfaces, types = _openenv()
    cls = task_class(env_id)
    stem = re.sub(r"[^0-9A-Za-z]", "", env_id.rsplit("-v", 1)[0])  # MeetingSlot-v0: MeetingSlot
    toolset = cls.toolset
    answer_tag = cls.answer_tag
    options = frozenset(SPLIT_OPTIONS | {"item"} | cls.reset_options)

    fields: dict[str, Any] = {}
    if cls.answers:
        fields["answer"] = (
            str | None,
            Field(None, description=f"the final answer: the content of <{answer_tag}>...</..>"),
        )
    fields["text"] = (
        str | None,
        Field(None, description="a raw text-protocol action, as an LLM wrote it"),
    )
    if toolset is not None:
        names = tuple(tool.name for tool in toolset)

        class ToolCall(BaseModel):
            model_config = ConfigDict(extra="forbid")
            name: Literal[names]  # type: ignore[valid-type]
            arguments: dict[str, Any] = Field(default_factory=dict)

        ToolCall.__name__ = f"{stem}ToolCall"
        fields["tool_call"] = (ToolCall | None, Field(None, description="one tool call"))
        fields["tool_calls"] = (
            list[ToolCall] | None,
            Field(None, min_length=1, max_length=MAX_CALLS_PER_TURN, description="calls, in order"),
        )
    choices = tuple(fields)
    # the task's own action object, field by field (TimetablePlanner: its predecessor's
    # TimetablePlannerAction, so old payloads work unchanged); any JSON value, as there:
    # the env's parser coerces and names what is wrong. OpenEnv's base has ``metadata``.
    object_fields = tuple(name for name in cls.action_fields if name != "metadata")
    for name in object_fields:
        fields[name] = (Any, Field(None, description=f"the action object's {name}"))
    if object_fields:
        choices = (*choices, "an action object (" + ", ".join(object_fields) + ")")

    def given_choices(self: Any) -> list[str]:
        given = [name for name in fields if name not in object_fields]
        given = [name for name in given if getattr(self, name) is not None]
        if any(getattr(self, name) is not None for name in object_fields):
            given.append("action object")
        return given

    def exactly_one(self: Any) -> Any:
        given = given_choices(self)
        if len(given) != 1:
            # a custom error keeps the error's context JSON-serialisable: OpenEnv 0.3 drops
            # the WebSocket session when a ValueError object sits in it
            raise PydanticCustomError(
                "one_action",
                "give exactly one of {choices} (got {count})",
                {"choices": ", ".join(choices), "count": len(given)},
            )
        return self

    from pydantic import create_model

    action = create_model(
        f"{stem}Action",
        __base__=types.Action,
        __validators__={"exactly_one": model_validator(mode="after")(exactly_one)},
        **fields,
    )
    observation = create_model(
        f"{stem}Observation",
        __base__=types.Observation,
        text=(str, Field("", description="the env's observation")),
        info=(dict[str, Any], Field(default_factory=dict, description="the env's info")),
    )
    state = create_model(
        f"{stem}State",
        __base__=types.State,
        env_id=(str, env_id),
        item_id=(str | None, None),
        turn=(int, 0),
        max_turns=(int, 0),
        done=(bool, False),
    )
    environment = type(
        f"{stem}Environment",
        (_ServedEnv, interfaces.Environment),
        {
            "SUPPORTS_CONCURRENT_SESSIONS": True,
            "env_id": env_id,
            "models": None,
            "__doc__": f"The OpenEnv server environment of {env_id}.",
        },
    )
    built = Models(env_id, action, observation, state, environment, options, object_fields)
    environment.models = built
    return built


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


class _ServedEnv:
    """One session's env: OpenEnv's Environment interface over ``gym.make(env_id, mode="text")``.

    Mixed into a per-env subclass of OpenEnv's ``Environment`` by :func:`models`.
    """

    env_id: str
    models: Models

    def __init__(self, **env_kwargs: Any) -> None:
        super().__init__()
        self.env = gym.make(self.env_id, mode="text", disable_env_checker=True, **env_kwargs)
        self.episode_id: str | None = None
        self.steps = 0
        self.last_info: dict[str, Any] = {}
        self.done = False
        self.started = False

    def reset(self, seed: int | None = None, episode_id: str | None = None, **options: Any) -> Any:
        unknown = sorted(set(options) - self.models.reset_options)
        if unknown:
            known = ", ".join(sorted(self.models.reset_options))
            raise ValueError(f"unknown reset field(s) {', '.join(unknown)}; known: seed, {known}")
        observation, info = self.env.reset(seed=seed, options=options or None)
        self.episode_id, self.steps, self.done, self.started = episode_id, 0, False, True
        self.last_info = jsonable(info)
        return self.models.observation(text=observation, info=self.last_info, reward=None)

    def step(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> Any:
        if not self.started:
            raise NoEpisodeError(
                "no episode: call reset first (plain HTTP /step is stateless; "
                "play episodes over /ws, e.g. with meeting_gym.adapters.openenv.client)"
            )
        if self.done:
            raise NoEpisodeError("the episode is over: call reset")
        text = to_text(action, self.env.unwrapped.task.answer_tag, self.models.object_fields)
        observation, reward, terminated, truncated, info = self.env.step(text)
        self.steps += 1
        self.done = bool(terminated or truncated)
        self.last_info = jsonable(info)
        return self.models.observation(
            text=observation, info=self.last_info, reward=float(reward), done=self.done
        )

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

        _, types = _openenv()
        task = self.env.unwrapped.task
        return types.EnvironmentMetadata(
            name=self.env_id,
            description=f"{self.env_id}: {task.summary} (meeting_gym {__version__})",
            version=__version__,
            documentation_url="the meeting_gym README, section OpenEnv",
        )

    def close(self) -> None:
        self.env.close()


def create_server_app(
    env_id: str,
    *,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    idle_timeout_s: float | None = DEFAULT_IDLE_TIMEOUT_S,
    **env_kwargs: Any,
) -> Any:
    """The FastAPI app serving ``env_id`` (OpenEnv's routes and WebSocket sessions)."""
    from fastapi import Request
    from fastapi.responses import JSONResponse
    from openenv.core.env_server.http_server import create_app
    from openenv.core.env_server.types import ConcurrencyConfig

    if max_sessions < 1:
        raise ValueError(f"max_sessions must be at least 1, got {max_sessions}")
    built = models(env_id)
    # a class with the session flag (OpenEnv checks it on the factory), made with env_kwargs
    factory = built.environment
    if env_kwargs:
        served = factory

        def init(self: Any) -> None:
            served.__init__(self, **env_kwargs)

        factory = type(served.__name__, (served,), {"__init__": init})
    app = create_app(
        factory,
        built.action,
        built.observation,
        env_name=env_id,
        concurrency_config=ConcurrencyConfig(
            max_concurrent_envs=max_sessions, session_timeout=idle_timeout_s
        ),
    )

    async def bad_request(request: Request, exc: Exception) -> JSONResponse:
        # a reset option or a step the env refuses: the client's mistake, named, not a 500
        status = 409 if isinstance(exc, NoEpisodeError) else 422
        return JSONResponse(status_code=status, content={"detail": str(exc)})

    app.add_exception_handler(ValueError, bad_request)
    return app


def serve(
    env_id: str,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    idle_timeout_s: float | None = DEFAULT_IDLE_TIMEOUT_S,
    log_level: str = "warning",
) -> None:
    """Run the server until interrupted (uvicorn)."""
    import uvicorn

    app = create_server_app(env_id, max_sessions=max_sessions, idle_timeout_s=idle_timeout_s)
    uvicorn.run(app, host=host, port=port, log_level=log_level, ws_max_size=1 << 24)


@cache
def client_class(env_id: str) -> type:
    """The async OpenEnv client class of ``env_id`` (``.sync()`` on an instance blocks)."""
    from openenv.core.client_types import StepResult
    from openenv.core.env_client import EnvClient

    built = models(env_id)

    def step_payload(self: Any, action: Any) -> dict[str, Any]:
        if isinstance(action, dict):
            action = built.action(**action)
        return action.model_dump(exclude_none=True, exclude={"metadata"})

    def parse_result(self: Any, payload: dict[str, Any]) -> Any:
        return StepResult(
            observation=built.observation(**payload.get("observation", {})),
            reward=payload.get("reward"),
            done=bool(payload.get("done", False)),
        )

    def parse_state(self: Any, payload: dict[str, Any]) -> Any:
        return built.state(**payload)

    stem = built.action.__name__.removesuffix("Action")
    return type(
        f"{stem}Client",
        (EnvClient,),
        {
            "_step_payload": step_payload,
            "_parse_result": parse_result,
            "_parse_state": parse_state,
            "__doc__": f"Async OpenEnv client of {env_id}; ``.sync()`` gives a blocking one.",
        },
    )


def client(env_id: str, base_url: str, **kwargs: Any) -> Any:
    """An async client of ``env_id`` at ``base_url`` (``await c.reset(...)``; ``c.sync()``)."""
    return client_class(env_id)(base_url=base_url, **kwargs)
