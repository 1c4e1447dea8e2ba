"""Speed measurements behind ``meeting-gym bench --env ID``, against CartPole-v1 in the same run.

Every figure is measured in this one run, side by side with the yardstick:
``gymnasium.make("CartPole-v1")`` stepped with random actions (reset whenever an
episode ends), the environment every RL user has a feel for. The machines this runs
on are shared and noisy, so each repeat measures CartPole, then every row, then
CartPole again; a row's ratio in that repeat is its rate over the mean of the two
CartPole rates, and the table shows medians over repeats (of the rates, the
durations and the ratios).

Each env's rows (its *plan*) come from the module its task names in ``Task.bench``;
a task that names none gets :func:`default_plan`: resets per difficulty, whole
one-answer episodes, and item generation with gold. A row is a :class:`Measure`:

* ``rate``: items per second (steps, episodes, items), compared with CartPole's steps
  per second; a target is a minimum ratio;
* ``time``: single durations (a reset, a solve); the row shows their median and a
  target is a maximum duration, or a minimum ratio (1 / median against CartPole's steps
  per second: "within the time of 50 CartPole steps" is a ratio of at least 1/50);
* ``once``: a duration measured once per run, outside the repeats (a cold cache);
* ``value``: a plain number per repeat (a ratio of two costs, say); the row shows the
  median with the measure's ``unit`` and a target is a maximum value.

Why one module of about 630 lines: the runner, its rows and their table are one
measurement protocol (the order of a repeat, the medians, the ratios against CartPole), and
each env's plan (``meeting_gym.bench.<env>``) builds on all of it.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from statistics import median
from typing import Any

from meeting_gym.core.registry import DEFAULT_ENV

MISSING = "n/a (not available)"


@dataclass
class Row:
    """One line of the table. ``rate`` is items per second (steps, resets or solves)."""

    measure: str
    rate: float | None = None
    seconds: float | None = None
    ratio: float | None = None
    target: str = ""
    met: bool | None = None
    note: str = ""
    unit: str = "steps/s"
    number: float | None = None

    def value(self) -> str:
        if self.note:
            return self.note
        if self.number is not None:
            return f"{self.number:.2f} {self.unit}".rstrip()
        if self.seconds is not None:
            return _duration(self.seconds)
        if self.rate is not None:
            return f"{self.rate:,.0f} {self.unit}"
        return ""


def _duration(seconds: float) -> str:
    if seconds >= 0.1:
        return f"{seconds:.3f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    if seconds >= 1e-4:
        return f"{seconds * 1e3:.3f} ms"
    return f"{seconds * 1e6:.1f} us"


@dataclass(frozen=True)
class Budget:
    """How much each repeat measures: bigger is steadier, smaller is quicker."""

    repeats: int
    cartpole_steps: int
    steps: int
    resets: int
    solves_per_difficulty: int
    vector_steps: int
    items: int = 2000
    walks: bool = False
    """Whether a ``-v0`` id's far eval item is reset once (seconds on a new split seed)."""


def masked_chooser(seed: int) -> Callable[[Any], int]:
    """Uniform over the legal actions of ``info["action_mask"]`` (its own seeded generator)."""
    import numpy as np

    rng = random.Random(seed)

    def choose(info: Any) -> int:
        legal = np.flatnonzero(info["action_mask"])
        return int(legal[int(rng.random() * len(legal))])

    return choose


def render_rate(env: Any, frames: int, choose: Callable[[Any], Any], seed: int) -> float:
    """rgb_array frames per second, counting only the time inside ``env.render()``; between
    frames the episode goes on with ``choose(info)`` (and resets when it ends)."""
    _, info = env.reset(seed=seed)
    inside = 0.0
    for _ in range(frames):
        start = time.perf_counter()
        env.render()
        inside += time.perf_counter() - start
        _, _, terminated, truncated, info = env.step(choose(info))
        if terminated or truncated:
            _, info = env.reset()
    return frames / inside


FULL = Budget(
    repeats=7,
    cartpole_steps=20_000,
    steps=4000,
    resets=300,
    solves_per_difficulty=150,
    vector_steps=400,
    items=10_000,
    walks=True,
)
QUICK = Budget(
    repeats=3,
    cartpole_steps=3000,
    steps=500,
    resets=40,
    solves_per_difficulty=20,
    vector_steps=40,
    items=500,
)


@dataclass
class Measure:
    """One row of a plan: what to run each repeat and what it is compared with.

    ``run(repeat)`` returns a rate (``kind="rate"``: items per second), a list of
    durations in seconds (``kind="time"`` and ``"once"``), or None when the thing
    measured does not exist in this build (the row says n/a).
    """

    key: str
    label: str
    run: Callable[[int], Any]
    kind: str = "rate"
    min_ratio: float | None = None
    max_seconds: float | None = None
    target_note: str = ""
    unit: str = "steps/s"
    max_value: float | None = None


# ----------------------------------------------------------------------------- timers


def cartpole_rate(steps: int, seed: int = 0) -> float:
    """CartPole-v1 (``gymnasium.make``) random-action steps per second, resets included."""
    import gymnasium as gym

    env = gym.make("CartPole-v1")
    env.reset(seed=seed)
    env.action_space.seed(seed)
    actions = [int(env.action_space.sample()) for _ in range(steps)]
    start = time.perf_counter()
    for action in actions:
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()
    elapsed = time.perf_counter() - start
    env.close()
    return steps / elapsed


def step_rate(env: Any, choose: Callable[[Any], Any], steps: int, seed: int) -> float:
    """Steps per second counting only the time inside ``env.step``."""
    clock = time.perf_counter
    _, info = env.reset(seed=seed)
    inside = 0.0
    for _ in range(steps):
        action = choose(info)
        start = clock()
        _, _, terminated, truncated, info = env.step(action)
        inside += clock() - start
        if terminated or truncated:
            _, info = env.reset()
    return steps / inside


def rollout_rate(env: Any, choose: Callable[[Any], Any], steps: int, seed: int) -> float:
    """Steps per second of a whole random-policy loop, resets and choices included."""
    start = time.perf_counter()
    _, info = env.reset(seed=seed)
    for _ in range(steps):
        _, _, terminated, truncated, info = env.step(choose(info))
        if terminated or truncated:
            _, info = env.reset()
    return steps / (time.perf_counter() - start)


def reset_times(env: Any, count: int, seed: int) -> list[float]:
    """Durations of ``count`` resets, each drawing a fresh item."""
    env.reset(seed=seed)
    clock = time.perf_counter
    out = []
    for _ in range(count):
        start = clock()
        env.reset()
        out.append(clock() - start)
    return out


def clock(fn: Callable[[], object], repeats: int = 1) -> list[float]:
    """Durations of ``repeats`` calls of ``fn``."""
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def make_env(env_id: str, **kwargs: Any) -> Any:
    """``gymnasium.make(env_id, **kwargs)`` without the checker, or None if it cannot be made."""
    import gymnasium as gym

    import meeting_gym  # noqa: F401  (registers the env ids)

    try:
        return gym.make(env_id, disable_env_checker=True, **kwargs)
    except ValueError:
        return None


def play_row(
    key: str,
    label: str,
    env: Any,
    chooser: Callable[[int], Callable[[Any], Any]],
    steps: int,
    *,
    whole_loop: bool = False,
    min_ratio: float | None = None,
) -> Measure:
    """A ``rate`` row: ``steps`` steps of ``env`` a repeat, ``chooser(repeat)`` picking the
    actions, timed inside ``env.step`` only (:func:`step_rate`) or, with ``whole_loop``,
    as the whole loop (:func:`rollout_rate`); n/a where ``env`` is None (not made)."""
    rate = rollout_rate if whole_loop else step_rate

    def run(repeat: int) -> float | None:
        return None if env is None else rate(env, chooser(repeat), steps, repeat)

    return Measure(key, label, run, min_ratio=min_ratio)


def reset_rows(
    env_id: str,
    budget: Budget,
    difficulties: Iterable[str | None],
    label: str,
    *,
    key: str = "reset",
    max_seconds: float | None = None,
    **kwargs: Any,
) -> list[Measure]:
    """A ``time`` row per difficulty (None: the default mix) of ``budget.resets`` resets,
    each drawing a fresh item, of an env made with ``kwargs``: keyed ``"{key} {difficulty}"``
    and labelled ``"{label}, {difficulty or 'default mix'}"``; n/a where that env cannot be made."""
    rows = []
    for difficulty in difficulties:
        env = make_env(env_id, difficulty=difficulty, **kwargs)

        def resets(repeat: int, env: Any = env) -> list[float] | None:
            return None if env is None else reset_times(env, budget.resets, repeat)

        rows.append(
            Measure(
                f"{key} {difficulty}",
                f"{label}, {difficulty or 'default mix'}",
                resets,
                "time",
                max_seconds=max_seconds,
            )
        )
    return rows


def render_row(
    env_id: str, frames: int, chooser: Callable[[Any, int], Callable[[Any], Any]], **kwargs: Any
) -> Measure:
    """The ``render`` row of an env with an rgb_array mode: frames per second, ``frames``
    a repeat, ``chooser(env, repeat)`` picking the actions between frames; n/a without
    Pillow. ``kwargs`` go to ``gymnasium.make``."""
    from gymnasium.error import DependencyNotInstalled

    try:
        env = make_env(env_id, render_mode="rgb_array", **kwargs)
    except DependencyNotInstalled:  # no Pillow: the row says n/a
        env = None

    def rate(repeat: int) -> float | None:
        if env is None:
            return None
        return render_rate(env, frames, chooser(env, repeat), repeat)

    return Measure("render", "rgb_array frame (render per step)", rate, unit="frames/s")


# ----------------------------------------------------------------------------- plans


def default_plan(
    env_id: str,
    budget: Budget,
    *,
    episode_target: float | None = None,
    generate_target: float | None = None,
    generate_note: str = "",
) -> list[Measure]:
    """Rows every text env has: one-answer episodes, resets, item generation with gold.

    An episode is ``reset()`` plus one ``step()`` that answers (the first answer of
    the task's reference policy on a fixed item, so every reply is well-formed), so
    for a single-turn task it is a whole episode.
    """
    from meeting_gym.core.registry import make_task
    from meeting_gym.core.splits import item_rng

    env = make_env(env_id)
    task = make_task(env_id)
    reply = _reference_reply(env_id)

    def episodes(repeat: int) -> float:
        count = budget.steps
        step = env.step
        reset = env.reset
        start = time.perf_counter()
        reset(seed=repeat)
        for _ in range(count):
            step(reply)
            reset()
        return count / (time.perf_counter() - start)

    def generation(repeat: int) -> float:
        count = budget.items
        generate = task.generate_solved
        start = time.perf_counter()
        for index in range(count):
            generate(item_rng(repeat, index), None)
        return count / (time.perf_counter() - start)

    plan = [
        Measure(
            "episodes",
            "text: episodes (reset + one answer)",
            episodes,
            min_ratio=episode_target,
            unit="episodes/s",
        ),
        Measure(
            "generate",
            f"generate items + gold ({budget.items:,} per repeat)",
            generation,
            min_ratio=generate_target,
            target_note=generate_note,
            unit="items/s",
        ),
    ]
    plan += reset_rows(env_id, budget, (None, *task.difficulties), "text: reset() fresh item")
    return plan


def _reference_reply(env_id: str) -> str:
    """The reference policy's first action on item 0 of the curated split (or of train)."""
    from meeting_gym.agents.policies import make_policy
    from meeting_gym.core.registry import task_class

    env = make_env(env_id, mode="text")
    cls = task_class(env_id)
    options = {"split": "curated", "index": 0} if cls().curated() else None
    observation, info = env.reset(seed=0, options=options)
    policy = make_policy(cls.reference_policy, seed=0, env=env_id)
    policy.reset(observation, info, seed=0)
    return policy.act(observation)


EVAL_INDICES = (0, 999, 99_999)
"""The eval items each bench resets (the first, the last a ``-v0`` id addresses, and one
a hundred times further)."""
EVAL_ITEM_SECONDS = 0.005
"""The time a ``-v1`` id's eval item may take to reset, whatever its index; a plan module
may set its own (TimetablePlanner's generator is the slowest: 50 ms)."""


def eval_item_rows(env_id: str, budget: Budget, max_seconds: float) -> list[Measure]:
    """A ``time`` row per index of :data:`EVAL_INDICES`: ``reset`` with that ``eval`` item of
    split seeds no one asked for before. A ``-v1`` id's rows have the target ``max_seconds``;
    a ``-v0`` id walks to its item, so its rows stop at ``MAX_EVAL_ITEMS`` and its far
    item is reset once a run, on a budget that ``walks``."""
    from meeting_gym.core.registry import entry
    from meeting_gym.core.splits import MAX_EVAL_ITEMS

    env = make_env(env_id)
    independent = entry(env_id).eval_draws == "independent"
    count = max(3, budget.resets // 30)
    rows = []
    for index in EVAL_INDICES:
        if env is None or not (independent or index < MAX_EVAL_ITEMS):
            continue
        # a fresh split seed for each reset: a -v0 id keeps what it walked, per seed
        first = 10**9 + 10**6 * index

        def times(repeat: int, index: int = index, first: int = first) -> list[float]:
            out = []
            for k in range(1 if not independent else count):
                options = {"split": "eval", "index": index, "split_seed": first + 1000 * repeat + k}
                start = time.perf_counter()
                env.reset(options=options)
                out.append(time.perf_counter() - start)
            return out

        label = f"reset() eval item {index:,}, new split seed"
        if independent:
            rows.append(Measure(f"eval {index}", label, times, "time", max_seconds=max_seconds))
        elif index == 0 or budget.walks:
            rows.append(Measure(f"eval {index}", label, times, "once"))
    return rows


def _plan(env_id: str, budget: Budget) -> list[Measure]:
    import importlib

    from meeting_gym.core.registry import task_class

    path = getattr(task_class(env_id), "bench", None)
    if path is None:
        return default_plan(env_id, budget) + eval_item_rows(env_id, budget, EVAL_ITEM_SECONDS)
    module, _, name = path.partition(":")
    plan_module = importlib.import_module(module)
    target = getattr(plan_module, "EVAL_ITEM_SECONDS", EVAL_ITEM_SECONDS)
    return getattr(plan_module, name)(env_id, budget) + eval_item_rows(env_id, budget, target)


# ----------------------------------------------------------------------------- the run


def measure(
    env: str = DEFAULT_ENV, quick: bool = False, only: str | None = None
) -> tuple[list[Row], float]:
    """Run every measurement of ``env``'s plan (with ``only``, the rows whose key starts with
    it, e.g. ``"eval"``); returns the rows and CartPole's median rate."""
    budget = QUICK if quick else FULL
    plan = _plan(env, budget)
    if only is not None:
        plan = [item for item in plan if item.key.startswith(only)]
        if not plan:
            raise ValueError(f"no row of {env}'s bench has a key starting with {only!r:.60}")
    rates: dict[str, list[float]] = {}  # per repeat: items per second
    ratios: dict[str, list[float]] = {}  # per repeat: rate / CartPole's rate in that repeat
    seconds: dict[str, list[float]] = {}  # every single duration, for the time rows
    numbers: dict[str, list[float]] = {}  # the value rows, one per repeat

    for r in range(budget.repeats):
        # CartPole runs at both ends of each repeat and every ratio uses their mean, so a
        # burst of load from other jobs hits the row and its yardstick alike.
        before = cartpole_rate(budget.cartpole_steps, seed=r)
        repeat: dict[str, float] = {}
        for item in plan:
            if item.kind == "once":
                continue
            value = item.run(r)
            if value is None:
                continue
            if item.kind == "value":
                numbers.setdefault(item.key, []).append(float(value))
                continue
            if item.kind == "time":
                seconds.setdefault(item.key, []).extend(value)
                repeat[item.key] = 1 / median(value)
            else:
                repeat[item.key] = value
        after = cartpole_rate(budget.cartpole_steps, seed=r)
        yardstick = (before + after) / 2
        rates.setdefault("cartpole", []).extend([before, after])
        for key, value in repeat.items():
            rates.setdefault(key, []).append(value)
            ratios.setdefault(key, []).append(value / yardstick)
    for item in plan:
        if item.kind == "once":
            value = item.run(0)
            if value is not None:
                seconds[item.key] = list(value)

    cart = median(rates["cartpole"])
    rows = [Row("CartPole-v1 random steps (yardstick)", rate=cart, ratio=1.0)]
    for item in plan:
        if item.kind == "value":
            rows.append(_value_row(item, numbers))
        else:
            rows.append(_row(item, rates, ratios, seconds))
    if quick:
        # a smoke run's few, short repeats are too noisy to judge a target: it once said
        # "NOT met" of one the full bench meets. The targets stay shown, unjudged.
        for row in rows:
            row.met = None
    return rows, cart


def _value_row(item: Measure, numbers: dict[str, list[float]]) -> Row:
    if item.key not in numbers:
        return Row(item.label, note=MISSING)
    value = median(numbers[item.key])
    row = Row(item.label, number=value, unit=item.unit)
    if item.max_value is not None:
        row.target = item.target_note or f"< {item.max_value:g}"
        row.met = value < item.max_value
    return row


def _row(
    item: Measure,
    rates: dict[str, list[float]],
    ratios: dict[str, list[float]],
    seconds: dict[str, list[float]],
) -> Row:
    if item.kind in ("time", "once"):
        if item.key not in seconds:
            return Row(item.label, note=MISSING)
        value = median(seconds[item.key])
        ratio = median(ratios[item.key]) if item.key in ratios else None
        row = Row(item.label, seconds=value, rate=1 / value, ratio=ratio)
        if item.max_seconds is not None:
            row.target = item.target_note or f"< {_duration(item.max_seconds)}"
            row.met = value < item.max_seconds
        elif item.min_ratio is not None and ratio is not None:  # a target relative to CartPole
            row.target = item.target_note or f">= {item.min_ratio:.0%} of CartPole"
            row.met = ratio >= item.min_ratio
        return row
    if item.key not in rates:
        return Row(item.label, note=MISSING)
    ratio = median(ratios[item.key])
    row = Row(item.label, rate=median(rates[item.key]), ratio=ratio, unit=item.unit)
    if item.min_ratio is not None:
        row.target = item.target_note or f">= {item.min_ratio:.0%} of CartPole"
        row.met = ratio >= item.min_ratio
    return row


def format_table(rows: Sequence[Row], quick: bool = False, env: str = DEFAULT_ENV) -> str:
    header = ("measure", "value", "vs CartPole", "target", "met")
    cells = [
        (
            row.measure,
            row.value(),
            "" if row.ratio is None else f"{row.ratio:.3f}",
            row.target,
            "" if row.met is None else ("yes" if row.met else "NO"),
        )
        for row in rows
    ]
    widths = [max(len(line[i]) for line in (header, *cells)) for i in range(len(header))]

    def line(parts: Sequence[str]) -> str:
        return "  ".join(
            part.ljust(width) if i in (0, 3, 4) else part.rjust(width)
            for i, (part, width) in enumerate(zip(parts, widths, strict=True))
        ).rstrip()

    out = [f"meeting-gym bench  env={env}", line(header)]
    out.append("-" * (sum(widths) + 2 * (len(widths) - 1)))
    out += [line(cells_row) for cells_row in cells]
    repeats = (QUICK if quick else FULL).repeats
    out.append(
        f"medians over {repeats} repeats; 'vs CartPole' = rate / CartPole steps per second, "
        "paired within each repeat of this run"
    )
    out.append(closing_note(rows, quick, env))
    return "\n".join(out)


def closing_note(rows: Sequence[Row], quick: bool = False, env: str = DEFAULT_ENV) -> str:
    """One plain sentence: which targets were met, which were not, which were not measured.

    A quick run judges none: it says so, and which command does.
    """
    if quick:
        parts = [
            "targets not judged: a quick run is too short to judge them "
            f"(run `meeting-gym bench --env {env}` without --quick)"
        ]
    else:
        judged = [row for row in rows if row.met is not None]
        missed = [row.measure for row in judged if not row.met]
        parts = [f"targets met: {len(judged) - len(missed)} of {len(judged)} measured"]
        if missed:
            parts.append("NOT met: " + "; ".join(missed))
    absent = [row.measure for row in rows if row.note == MISSING]
    if absent:
        parts.append("not measured (not available): " + "; ".join(absent))
    return "; ".join(parts) + "."


def run_bench(
    env: str = DEFAULT_ENV, quick: bool = False, as_json: bool = False, only: str | None = None
) -> str:
    rows, cart = measure(env, quick, only)
    if as_json:
        payload = {
            "env": env,
            "quick": quick,
            "cartpole_steps_per_s": cart,
            "rows": [asdict(r) for r in rows],
            "note": closing_note(rows, quick, env),
        }
        return json.dumps(payload, indent=2)
    return format_table(rows, quick, env)
