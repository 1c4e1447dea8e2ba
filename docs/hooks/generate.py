"""MkDocs hook: the parts of the site that must not drift, generated from the code.

Each env page names its env in its front matter (``env: MeetingSlot-v1``) and marks
where generated text goes with ``<!-- gen: KIND -->``:

* ``picture``: the env's picture, drawn now (an ``rgb_array`` frame where the env has
  one, else its ``ansi`` rendering);
* ``action-space`` / ``observation-space``: ``gymnasium.make(id, mode=...)``'s spaces
  and their sizes, per mode;
* ``rubric``: the task's terms and weights (per difficulty where they differ);
* ``difficulties``, ``settings``, ``reset-options``, ``arguments``: read from the task
  class and the env class's ``__init__``;
* ``registered``: every registered id that plays the same task, with its fixed kwargs.

``<!-- gen: api -->`` (on the API page) becomes one mkdocstrings entry per public name.
The pictures are added to the site as generated files (``assets/envs/ID.png``), so
they are made by this build, never a committed copy.
"""

from __future__ import annotations

import ast
import functools
import inspect
import io
import random
import re
from pathlib import Path
from typing import Any

import gymnasium as gym
from mkdocs.structure.files import File

import meeting_gym
from meeting_gym.core.registry import ENVS, load_object, task_class
from meeting_gym.core.splits import SPLIT_OPTIONS
from meeting_gym.core.text_env import COMMON_OPTIONS

MARKER = re.compile(r"<!-- gen: (?P<kind>[\w-]+) -->")
MODES = ("discrete", "text")


def _play(env_id: str, render_mode: str, steps: int) -> Any:
    """Play the reference policy on the first curated item for ``steps`` steps; render."""
    from meeting_gym.agents.policies import make_policy

    env = gym.make(env_id, mode="text", render_mode=render_mode)
    observation, info = env.reset(options={"split": "curated", "index": 0})
    policy = make_policy(task_class(env_id).reference_policy, seed=0, env=env_id)
    policy.reset(observation, info)
    for _ in range(steps):
        observation, _, terminated, truncated, info = env.step(policy.act(observation))
        if terminated or truncated:
            break
    frame = env.render()
    env.close()
    return frame


@functools.cache
def _picture_png(env_id: str) -> bytes | None:
    """One rgb_array frame of ``env_id`` mid-episode, as PNG; None if it draws none."""
    if "rgb_array" not in _render_modes(env_id):
        return None
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(_play(env_id, "rgb_array", 6)).save(buffer, format="PNG")
    return buffer.getvalue()


def _render_modes(env_id: str) -> tuple[str, ...]:
    return tuple(_env_class(env_id).metadata.get("render_modes", ()))


def _modes(env_id: str) -> list[str]:
    params = inspect.signature(_env_class(env_id).__init__).parameters
    return list(MODES) if "mode" in params and params["mode"].default == "discrete" else ["text"]


def _env_class(env_id: str) -> type:
    return load_object(gym.spec(env_id).entry_point)


def _space_rows(space: gym.Space) -> list[str]:
    if isinstance(space, gym.spaces.Dict):
        rows = ["| key | space | size |", "| --- | --- | ---: |"]
        for key, sub in space.spaces.items():
            size = int(gym.spaces.flatdim(sub))
            rows.append(f"| `{key}` | `{sub}` | {size:,} |")
        return rows
    return [f"`{space}`"]


def _spaces(env_id: str, which: str) -> str:
    """A table of the spaces per mode; a ``Dict`` space gets a table of its keys after it."""
    rows = ["| mode | space | flattened size |", "| --- | --- | ---: |"]
    keys = []
    for mode in _modes(env_id):
        env = gym.make(env_id, mode=mode)
        space = env.action_space if which == "action" else env.observation_space
        env.close()
        if isinstance(space, gym.spaces.Dict):
            size = f"{int(gym.spaces.flatdim(space)):,}"
            rows.append(f"| `{mode}` | `Dict` of {len(space.spaces)} keys (below) | {size} |")
            keys += ["", f"The `{mode}` mode's `Dict`:", "", *_space_rows(space)]
        elif isinstance(space, gym.spaces.Discrete):
            rows.append(f"| `{mode}` | `{space}` | {int(space.n):,} |")
        else:
            rows.append(f"| `{mode}` | `{space}` | - |")
    return "\n".join(rows + keys)


def _items_by_difficulty(env_id: str) -> dict[str | None, Any]:
    task = meeting_gym.make_task(env_id)
    levels = task.difficulties or (None,)
    return {level: task.generate(random.Random(0), level) for level in levels}


def _rubric(env_id: str) -> str:
    task = meeting_gym.make_task(env_id)
    rubrics = {level: task.rubric_for(item) for level, item in _items_by_difficulty(env_id).items()}
    first = next(iter(rubrics.values()))
    if all(r == first for r in rubrics.values()):
        rows = ["| term | weight |", "| --- | ---: |"]
        rows += [f"| `{t.name}` | {t.weight:g} |" for t in first.terms]
        return "\n".join(rows) + f"\n\nBest reward of an episode: {task.max_reward:g}."
    names = [t.name for t in first.terms]
    rows = ["| term | " + " | ".join(map(str, rubrics)) + " |"]
    rows.append("| --- |" + " ---: |" * len(rubrics))
    for name in names:
        weights = [dict((t.name, t.weight) for t in r.terms)[name] for r in rubrics.values()]
        rows.append(f"| `{name}` | " + " | ".join(f"{w:g}" for w in weights) + " |")
    return "\n".join(rows) + "\n\nColumns are difficulties: each weighs the terms its own way."


def _difficulties(env_id: str) -> str:
    levels = task_class(env_id).difficulties
    return ", ".join(f"`{d!r}`" for d in levels) + " (`None`: the task's default mix)."


def _settings(env_id: str) -> str:
    cls = task_class(env_id)
    if not cls.settings:
        return "This task has no settings of its own."
    defaults = inspect.signature(cls.__init__).parameters
    rows = ["| setting | CLI flag | choices | default | what it does |", "|---|---|---|---|---|"]
    for s in cls.settings:
        default = defaults[s.name].default if s.name in defaults else None
        listed = ", ".join(f"`{c!r}`" for c in s.choices or ())
        choices = listed or "any " + s.kind.__name__
        flag = "--" + s.name.replace("_", "-")
        rows.append(f"| `{s.name}` | `{flag}` | {choices} | `{default!r}` | {s.help} |")
    return "\n".join(rows)


def _reset_options(env_id: str) -> str:
    own = sorted(task_class(env_id).reset_options)
    common = sorted(COMMON_OPTIONS)
    text = "Every env: " + ", ".join(f"`{o}`" for o in common)
    text += f" (the split options: {', '.join(f'`{o}`' for o in sorted(SPLIT_OPTIONS))})."
    if own:
        text += " This env's own: " + ", ".join(f"`{o}`" for o in own) + "."
    return text


def _arguments(env_id: str) -> str:
    cls = _env_class(env_id)
    task = task_class(env_id)
    rows = ["| argument | default |", "| --- | --- |"]
    for name, p in inspect.signature(cls.__init__).parameters.items():
        if name in ("self", "task_class", "config") or p.kind is p.VAR_KEYWORD:
            continue
        default = p.default
        if name == "max_turns" and default is None:
            default = f"None (the task's {task.max_turns:,})"
            rows.append(f"| `{name}` | {default} |")
            continue
        rows.append(f"| `{name}` | `{default!r}` |")
    if cls.__name__ == "TextEnv":
        rows.append("| `difficulty` | `None` |")
        defaults = inspect.signature(task.__init__).parameters
        for s in task.settings:
            rows.append(f"| `{s.name}` | `{defaults[s.name].default!r}` |")
    fixed = gym.spec(env_id).kwargs
    shown = {k: v for k, v in fixed.items() if k != "task_class"}
    note = f"\n\n`{env_id}` fixes {shown}." if shown else ""
    return "\n".join(rows) + note


def _registered(env_id: str) -> str:
    task = ENVS[env_id].task
    rows = [
        "| id | fixed `gym.make` kwargs | modes | turn budget | `eval` item `k` |",
        "| --- | --- | --- | --- | --- |",
    ]
    for other, entry in ENVS.items():
        if entry.task.split(":")[0] != task.split(":")[0]:
            continue
        modes, turns = ", ".join(_modes(other)), task_class(other).max_turns
        addressing = EVAL_ADDRESSING[entry.eval_draws]
        rows.append(f"| `{other}` | {entry.kwargs or '-'} | {modes} | {turns:,} | {addressing} |")
    return "\n".join(rows)


EVAL_ADDRESSING = {
    "distinct": "walks the items before it, skipping repeats (`k` < 1,000)",
    "independent": "one draw of its own, constant time (`k` < 2**63)",
}


API_MODULES = (
    "meeting_gym.core.task",
    "meeting_gym.core.episode",
    "meeting_gym.core.loop",
    "meeting_gym.core.protocol",
    "meeting_gym.evaluation.evaluate",
    "meeting_gym.evaluation.episodes",
    "meeting_gym.training.sft",
    "meeting_gym.evaluation.heldout",
    "meeting_gym.evaluation.passk",
    "meeting_gym.evaluation.run_rows",
    "meeting_gym.evaluation.provenance",
    "meeting_gym.core.splits",
    "meeting_gym.core.curriculum",
    "meeting_gym.core.curriculum_wrapper",
    "meeting_gym.adapters.openenv.app",
    "meeting_gym.adapters.openenv.typed",
    "meeting_gym.adapters.openenv.remote",
    "meeting_gym.adapters.trl",
    "meeting_gym.adapters.rllib",
    "meeting_gym.adapters.verifiers",
    "meeting_gym.adapters.verifiers.taskset",
    "meeting_gym.adapters.verifiers.legacy",
    "meeting_gym.adapters.skyrl",
)
"""Modules whose public functions (and, where ``__all__`` names them, classes) are listed."""


def _public(module: str) -> list[str]:
    """The module's ``__all__`` entries it defines itself, else its public top-level functions.

    Read from the source, not imported: the verifiers modules import verifiers, which the
    docs venv does not have.
    """
    path = Path(meeting_gym.__file__).parent.parent / (module.replace(".", "/"))
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    defined = [
        n.name
        for n in tree.body
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and not n.name.startswith("_")
    ]
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            listed = ast.literal_eval(node.value)
            return [name for name in defined if name in listed]
    return [
        n.name
        for n in tree.body
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and not n.name.startswith("_")
    ]


def _api() -> str:
    lazy = meeting_gym._LAZY
    lines = ["## `meeting_gym`", ""]
    for name in meeting_gym.__all__:
        if name in lazy:
            lines += [f"::: {lazy[name]}.{name}", ""]
    lines += ["`ENVS`, `ENV_IDS`, `__version__`: the registry, its ids, the package version.", ""]
    for module in API_MODULES:
        lines += [f"## `{module}`", ""]
        lines += [line for name in _public(module) for line in (f"::: {module}.{name}", "")]
    return "\n".join(lines)


def _picture(env_id: str, src_uri: str) -> str:
    if _picture_png(env_id) is None:
        ansi = _play(env_id, "ansi", 3)
        return "The `ansi` rendering (this env draws no picture):\n\n```text\n" + ansi + "\n```"
    prefix = "../" * src_uri.count("/")
    return f"![{env_id}: a frame drawn when this page was built]({prefix}assets/envs/{env_id}.png)"


GENERATORS = {
    "action-space": lambda e: _spaces(e, "action"),
    "observation-space": lambda e: _spaces(e, "observation"),
    "rubric": _rubric,
    "difficulties": _difficulties,
    "settings": _settings,
    "reset-options": _reset_options,
    "arguments": _arguments,
    "registered": _registered,
}


def on_files(files, config):
    """Add each env's picture to the site, drawn by this build."""
    for env_id in ENVS:
        png = _picture_png(env_id)
        if png is not None:
            files.append(File.generated(config, f"assets/envs/{env_id}.png", content=png))
    return files


def on_page_markdown(markdown, page, config, files):
    """Replace each ``<!-- gen: KIND -->`` marker with text made from the code."""
    env_id = page.meta.get("env")

    def replace(match: re.Match) -> str:
        kind = match.group("kind")
        if kind == "api":
            return _api()
        if env_id is None:
            raise ValueError(f"{page.file.src_uri}: gen: {kind} needs 'env:' in the front matter")
        if kind == "picture":
            return _picture(env_id, page.file.src_uri)
        return GENERATORS[kind](env_id)

    return MARKER.sub(replace, markdown)
