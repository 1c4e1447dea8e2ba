"""The typed OpenEnv classes of one env id: action, observation, state and the server's
environment class, all derived from the env's task."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from meeting_gym.adapters.openenv.served import ServedEnv, openenv_modules
from meeting_gym.core.registry import task_class
from meeting_gym.core.splits import SPLIT_OPTIONS
from meeting_gym.core.text_env import MAX_CALLS_PER_TURN


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

    interfaces, types = openenv_modules()
    cls = task_class(env_id)
    stem = re.sub(r"[^0-9A-Za-z]", "", env_id.rsplit("-v", 1)[0])  # MeetingSlot-v0: MeetingSlot
    toolset = cls.toolset
    answer_tag = cls.answer_tag
    options = frozenset(SPLIT_OPTIONS | {"item", "curriculum"} | cls.reset_options)

    fields: dict[str, Any] = {}
    if cls.episode_class.answers:
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
    # the task's own action object, field by field (TimetablePlanner: the original
    # timetable_planner's TimetablePlannerAction, so old payloads work unchanged); any
    # JSON value, as there: the env's parser coerces and names what is wrong. OpenEnv's
    # base has ``metadata``.
    object_fields = tuple(name for name in cls.episode_class.action_fields if name != "metadata")
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
        truncated=(
            bool,
            Field(False, description="the episode ended on its turn budget, not by itself"),
        ),
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
        (ServedEnv, interfaces.Environment),
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
