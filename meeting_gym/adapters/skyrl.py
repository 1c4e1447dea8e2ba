"""SkyRL on any env of the family, through skyrl-gym (``pip install "meeting-gym[skyrl]"``).

SkyRL's generator plays skyrl-gym text environments: it makes one per trajectory with
``skyrl_gym.make(env_class, env_config=..., extras=...)`` (``extras``: the dataset row's
fields besides its prompt, plus the generator's ``max_turns``), calls ``init(prompt)`` for
the first messages, then ``step(reply)`` with each model reply until ``done``, and trains on
the rewards.

* :class:`MeetingGymEnv` is one env id in text mode as a skyrl-gym ``BaseTextEnv``. It resets
  the env to the item the row addresses (``split``, ``index``, ``split_seed``,
  ``difficulty``, ``seed``, at the row's top level or under ``extra_info``; the env's
  settings as ``env_kwargs``), and each ``step`` is one ``env.step`` of the reply: the
  env's observation comes back as a user message, a malformed reply gets the env's own
  ``error:`` observation and costs a turn, and the reward is the env's (its rubric at the
  end; TimetablePlanner's every step). Nothing is graded here.
* :func:`register` registers every env id of the package with skyrl-gym under the same id,
  so a row's ``env_class`` is the Gymnasium id.
* :func:`dataset_rows` writes the rows: the env's own prompt for each item and its address.

skyrl-gym is imported by this module only; ``import meeting_gym`` never imports it.
"""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym

from meeting_gym.core.registry import ENVS

try:
    import skyrl_gym
    from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise ImportError(
        'the SkyRL adapter needs skyrl-gym: pip install "meeting-gym[skyrl]"'
    ) from exc

__all__ = ["ADDRESS_KEYS", "MeetingGymEnv", "dataset_rows", "register"]

ADDRESS_KEYS = ("split", "index", "split_seed", "difficulty")
"""The reset options of a row that address its item (:mod:`meeting_gym.core.splits`)."""


def _address(extras: dict[str, Any]) -> tuple[dict[str, Any], int | None]:
    """(reset options, reset seed) of a row: its top-level keys, or those of ``extra_info``
    (where SkyRL's own datasets keep per-row data)."""
    found: dict[str, Any] = {}
    info = extras.get("extra_info")
    for source in (info if isinstance(info, dict) else {}, extras):
        found.update({k: source[k] for k in (*ADDRESS_KEYS, "seed") if source.get(k) is not None})
    seed = found.pop("seed", None)
    return found, seed


def _json_safe(info: dict[str, Any]) -> dict[str, Any]:
    """The entries of a step's ``info`` that survive JSON (what a trainer can log)."""
    out = {}
    for key, value in info.items():
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            continue
        out[key] = value
    return out


class MeetingGymEnv(BaseTextEnv):
    """One env id of the family, in text mode, as a skyrl-gym text environment.

    ``env_id`` comes from the registration (:func:`register`); ``extras`` is the row's:
    its item address, ``env_kwargs`` (the env's settings) and ``max_turns`` (SkyRL's
    generator sets it; the env truncates there, scored by its rubric). ``self.env`` is the
    Gymnasium env behind it.
    """

    def __init__(
        self,
        env_config: Any = None,
        extras: dict[str, Any] | None = None,
        *,
        env_id: str,
    ) -> None:
        super().__init__()
        if env_id not in ENVS:
            raise ValueError(f"unknown env id {env_id!r}; choose one of {', '.join(ENVS)}")
        extras = dict(extras or {})
        settings = extras.get("env_kwargs") or {}
        if not isinstance(settings, dict):
            raise ValueError(f"env_kwargs must be an object of env settings, got {settings!r}")
        make: dict[str, Any] = dict(settings)
        if extras.get("max_turns") is not None:
            make["max_turns"] = extras["max_turns"]
        self.env_id = env_id
        self.env = gym.make(env_id, mode="text", disable_env_checker=True, **make)
        self.options, self.seed = _address(extras)
        self.max_turns = self.env.unwrapped.max_turns
        self.total = 0.0
        self.last_info: dict[str, Any] = {}
        self.reset_info: dict[str, Any] = {}

    def init(self, prompt: list[dict[str, Any]] | None = None) -> tuple[list, dict[str, Any]]:
        """Reset to the row's item; the prompt to give the model and the reset info.

        A row's own prompt is kept (its system prompt may be a trainer's choice) when it asks
        this item's question; a prompt that asks another is refused, since the rewards would
        grade answers to a question the model was not asked. An empty prompt gets the env's
        own system prompt and question.
        """
        question, info = self.env.reset(seed=self.seed, options=self.options or None)
        self.turns, self.total, self.last_info = 0, 0.0, {}
        self.reset_info = info  # what a policy driving this env in-process starts from
        metadata = {"env_id": self.env_id, "tools": info.get("tools", []), **self.options}
        if prompt:
            asked = prompt[-1].get("content") if isinstance(prompt[-1], dict) else None
            if asked != question:
                raise ValueError(
                    f"the row's prompt does not ask the question of {self.env_id} item "
                    f"{self.options or 'at its seed'}: its last message must be the question"
                )
            return prompt, metadata
        return [
            {"role": "system", "content": info["system_prompt"]},
            {"role": "user", "content": question},
        ], metadata

    def step(self, action: str) -> BaseTextEnvStepOutput:
        """One ``env.step`` of the model's reply: the env's observation as a user message
        (none once the episode is over), its reward, and whether it is over."""
        self.turns += 1
        observation, reward, terminated, truncated, info = self.env.step(action)
        done = bool(terminated or truncated)
        self.total += float(reward)
        self.last_info = info
        return BaseTextEnvStepOutput(
            observations=[] if done else [{"role": "user", "content": observation}],
            reward=float(reward),
            done=done,
            metadata=_json_safe(info),
        )

    def get_metrics(self) -> dict[str, Any]:
        """The episode's turns and return, and its rubric terms once it ended."""
        out: dict[str, Any] = {"turns": self.turns, "return": self.total}
        for name in self.env.unwrapped.task.rubric.names:
            if isinstance(self.last_info.get(name), (int, float)):
                out[name] = self.last_info[name]
        return out

    def close(self) -> None:
        self.env.close()


def register(env_ids: list[str] | None = None) -> list[str]:
    """Register ``env_ids`` (default: every id of the package) with skyrl-gym under the same
    ids; ids already registered there are left as they are. Returns the ids registered."""
    done = []
    for env_id in env_ids if env_ids is not None else list(ENVS):
        if env_id not in ENVS:
            raise ValueError(f"unknown env id {env_id!r}; choose one of {', '.join(ENVS)}")
        if env_id in skyrl_gym.registry:
            continue
        skyrl_gym.register(
            id=env_id, entry_point=f"{__name__}:MeetingGymEnv", kwargs={"env_id": env_id}
        )
        done.append(env_id)
    return done


def dataset_rows(
    env_id: str,
    split: str = "train",
    n: int | None = None,
    *,
    system_prompt: str | None = None,
    **options: Any,
) -> list[dict[str, Any]]:
    """SkyRL dataset rows of ``split``'s first ``n`` items: ``prompt`` (the env's system
    prompt, or ``system_prompt``, and the question), ``env_class`` (the env id), the item's
    address and ``env_kwargs``. ``options`` are :func:`meeting_gym.adapters.trl.rows`'s
    (``seed``, ``difficulty``) and the env's settings."""
    from meeting_gym.adapters.trl import rows

    settings = {k: v for k, v in options.items() if k not in ("seed", "difficulty")}
    out = []
    for row in rows(env_id, split, n, system_prompt=system_prompt, **options):
        out.append({**row, "env_class": env_id, "env_kwargs": settings})
    return out
