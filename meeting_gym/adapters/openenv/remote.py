"""Clients of a served env: OpenEnv's async client per env id, and :class:`RemoteEnv`
(Gymnasium's ``reset``/``step`` shape over a blocking one)."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import cache
from typing import Any

from meeting_gym.adapters.openenv.served import MCP_ACTIONS, mcp_action
from meeting_gym.adapters.openenv.typed import Models, models


def parse_observation(built: Models, observation: dict[str, Any]) -> Any:
    """A step's observation payload as its model: OpenEnv's ``ListToolsObservation`` or
    ``CallToolObservation`` for the MCP actions' replies, else the env's own."""
    from openenv.core.env_server.mcp_types import CallToolObservation, ListToolsObservation

    if "tools" in observation:
        return ListToolsObservation(**observation)
    if "tool_name" in observation:
        return CallToolObservation(**observation)
    return built.observation(**observation)


@cache
def client_class(env_id: str) -> type:
    """The async OpenEnv client class of ``env_id`` (``.sync()`` on an instance blocks)."""
    from openenv.core.client_types import StepResult
    from openenv.core.env_client import EnvClient

    built = models(env_id)

    def step_payload(self: Any, action: Any) -> dict[str, Any]:
        if isinstance(action, dict):
            action = (
                mcp_action(action) if action.get("type") in MCP_ACTIONS else built.action(**action)
            )
        return action.model_dump(exclude_none=True, exclude={"metadata"})

    def parse_result(self: Any, payload: dict[str, Any]) -> Any:
        return StepResult(
            observation=parse_observation(built, payload.get("observation", {})),
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


class RemoteEnv:
    """A served env in Gymnasium's ``reset``/``step`` shape, over a blocking client.

    So the one episode loop (:func:`~meeting_gym.core.loop.play`) plays a served env as it
    plays a local text env: ``reset(seed=, options=)`` gives ``(text, info)`` and
    ``step(text)`` the five values of a Gymnasium step, ``truncated`` as the server says
    it. Actions are text-protocol strings, what a text-mode env takes.
    ``RemoteEnv(client(env_id, url).sync())``, inside the client's ``with`` block.
    """

    def __init__(self, remote: Any) -> None:
        self.remote = remote

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        given = dict(options or {})
        if seed is not None:
            given["seed"] = seed
        observation = self.remote.reset(**given).observation
        return observation.text, dict(observation.info)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        result = self.remote.step({"text": action})
        observation = result.observation
        truncated = bool(getattr(observation, "truncated", False))
        done = bool(result.done)
        reward = float(result.reward or 0.0)
        return observation.text, reward, done and not truncated, truncated, dict(observation.info)


def wait_healthy(
    base_url: str, timeout: float = 60.0, alive: Callable[[], bool] | None = None
) -> None:
    """Return once ``GET base_url/health`` answers 200; ``TimeoutError`` after ``timeout``
    seconds, or ``RuntimeError`` as soon as ``alive()`` says the server process has gone."""
    import urllib.request

    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"{base_url}/health", timeout=1) as reply:
                if reply.status == 200:
                    return
        except OSError:
            pass
        if alive is not None and not alive():
            raise RuntimeError(f"the server at {base_url} exited before it answered /health")
        if time.monotonic() >= deadline:
            raise TimeoutError(f"no /health answer from {base_url} in {timeout:g} s")
        time.sleep(0.1)
