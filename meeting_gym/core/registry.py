"""The one list of what exists: env ids, their tasks, and Gymnasium registration.

``meeting_gym/__init__.py`` calls :func:`register_env` once per env id. A text task
needs no env class of its own: it is played by the generic
:class:`~meeting_gym.core.text_env.TextEnv`, whose ``task_class`` kwarg names the task.
Task modules are imported only when an env or task is made, so ``import meeting_gym``
stays light however many environments there are.
"""

from __future__ import annotations

import importlib
import re
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from gymnasium.envs.registration import register, registry

from meeting_gym.core.task import Task

TEXT_ENV = "meeting_gym.core.text_env:TextEnv"
DEFAULT_ENV = "MeetingSlot-v0"
"""The env a function or command uses when none is named: the flagship."""
EVAL_DRAWS = ("distinct", "independent")
"""The two ways an ``eval`` split addresses its generated items: ``distinct`` (the ``-v0``
ids: a walk that skips repeats, so item ``k`` costs ``k`` draws) and ``independent`` (the
``-v1`` ids: item ``k`` is one draw of its own, in constant time)."""
VERSIONS = {"v0": "distinct", "v1": "independent"}
"""Each env's versions and how each addresses its eval items (docs/versions.md)."""


@dataclass(frozen=True)
class EnvEntry:
    """One registered env id: its task (``"module:Class"``) and its registered kwargs."""

    env_id: str
    task: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    eval_draws: str = "distinct"
    """How its ``eval`` split addresses items (:data:`EVAL_DRAWS`; the id's version)."""


ENVS: dict[str, EnvEntry] = {}


def register_env(
    env_id: str,
    task: str,
    *,
    entry_point: str = TEXT_ENV,
    eval_draws: str = "distinct",
    **kwargs: Any,
) -> None:
    """Register ``env_id`` with Gymnasium and with the family's list of envs.

    ``task`` is the task class as ``"module:Class"``; ``entry_point`` the env class
    (default: the generic text env, which then gets ``task_class=task``); ``eval_draws``
    how the id's ``eval`` split addresses items (:data:`EVAL_DRAWS`); ``kwargs`` are the
    id's fixed ``gym.make`` arguments.
    """
    if eval_draws not in EVAL_DRAWS:
        raise ValueError(f"eval_draws must be one of {EVAL_DRAWS}, got {eval_draws!r}")
    ENVS[env_id] = EnvEntry(env_id, task, dict(kwargs), eval_draws)
    if env_id in registry:  # a reload of the package must not warn about re-registration
        return
    # the eval addressing is a make argument like any other: gym.make("X-v0",
    # eval_draws="independent") is X-v1's addressing, and spec.kwargs says which an id has
    make_kwargs = {**kwargs, "eval_draws": eval_draws}
    if entry_point == TEXT_ENV:
        make_kwargs["task_class"] = task
    # no max_episode_steps: every env truncates after its own max_turns
    register(id=env_id, entry_point=entry_point, kwargs=make_kwargs)


def register_versions(name: str, task: str, **kwargs: Any) -> None:
    """Register env ``name`` in each of :data:`VERSIONS` (``name-v0``, ``name-v1``): the one
    way an env is registered. The versions differ in one make argument, ``eval_draws``.

    Gymnasium warns that an id with a newer version "is out of date"; an older version here
    is supported beside the newer (nothing deprecated), so that one warning is silenced,
    for these ids only (:func:`out_of_date_filter`).
    """
    for version, eval_draws in VERSIONS.items():
        register_env(f"{name}-{version}", task, eval_draws=eval_draws, **kwargs)
    warnings.filterwarnings("ignore", **out_of_date_filter([name]))


def out_of_date_filter(names: Iterable[str]) -> dict[str, Any]:
    """``warnings.filterwarnings`` arguments that silence Gymnasium's "out of date" warning
    for the older versions of env ``names`` (the test suite installs the same one)."""
    older = [f"{n}-{v}" for n in names for v in list(VERSIONS)[:-1]]
    pattern = "|".join(map(re.escape, older))
    return {
        "message": rf".*The environment ({pattern}) is out of date",
        "category": DeprecationWarning,
    }


def families() -> dict[str, list[str]]:
    """Each registered env's name and its ids, in registration order."""
    out: dict[str, list[str]] = {}
    for env_id in ENVS:
        out.setdefault(env_id.rsplit("-v", 1)[0], []).append(env_id)
    return out


def load_object(path: str) -> Any:
    """Import ``"package.module:Name"``."""
    module, _, name = path.partition(":")
    if not module or not name:
        raise ValueError(f"expected 'module:Name', got {path!r}")
    return getattr(importlib.import_module(module), name)


def entry(env_id: str) -> EnvEntry:
    """The registered entry of ``env_id``; ``ValueError`` naming the known ids otherwise."""
    if env_id not in ENVS:
        known = ", ".join(ENVS) or "none"
        raise ValueError(f"unknown env {env_id!r}; registered envs: {known}")
    return ENVS[env_id]


def task_class(env_id: str) -> type[Task[Any, Any]]:
    """The task class behind ``env_id`` (imports its module)."""
    return load_object(entry(env_id).task)


def make_task(env: str | Task[Any, Any], **config: Any) -> Task[Any, Any]:
    """A task for ``env`` (an env id or a task already made) with ``config``.

    The task remembers its env id (``task.env_id``), which exported rows carry.
    """
    if isinstance(env, Task):
        if config:
            raise ValueError("pass configuration either in the task or as keywords, not both")
        return env
    task = task_class(env)(**config)
    task.env_id = env
    task.eval_draws = entry(env).eval_draws
    return task
