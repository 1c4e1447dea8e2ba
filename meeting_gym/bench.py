"""Speed measurements behind ``meeting-gym bench``, against Gymnasium's CartPole-v1.

Every figure is measured in this one run, side by side with the yardstick:
``gymnasium.make("CartPole-v1")`` stepped with random actions (reset whenever an
episode ends), the environment every RL user has a feel for. The machines this
runs on are shared and noisy, so each repeat measures CartPole, then every row,
then CartPole again; a row's ratio in that repeat is its rate over the mean of the
two CartPole rates, and the table shows medians over repeats (of the rates, the
durations and the ratios).

What a row counts:

* ``step()``: steps per second of time spent inside ``env.step`` only
  (random legal actions; resets and action choice are outside the clock);
* ``rollouts``: steps per second of wall time of a random-policy loop, resets
  and action choice included;
* ``reset()``: median time of one ``env.reset()`` that generates a fresh
  scenario; its ratio is resets per second over CartPole steps per second;
* ``gold solve``: median time of :func:`~meeting_gym.calendar.solver.solve`;
* ``make_vec``: sub-environment steps per second of a vector env stepped with
  random legal actions (autoreset included);
* ``rgb_array frame``: frames per second of time inside ``env.render()`` in
  discrete mode, rendered after every reset and step as ``RecordVideo`` does,
  with random legal tool calls and an answer about every 20 steps.

Discrete-mode rows print ``n/a`` until ``mode="discrete"`` exists.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from statistics import median
from typing import Any

from meeting_gym.calendar import solver, zones
from meeting_gym.calendar.generator import DIFFICULTIES, PEOPLE, generate
from meeting_gym.calendar.solver import solve

ENV_ID = "MeetingSlot-v0"
STEP_TARGET = 0.35
"""discrete ``step()`` at least this share of CartPole's steps per second."""
ROLLOUT_TARGET = 0.15
"""discrete random rollouts (resets included) at least this share."""
RESET_TARGET_S = 1e-3
"""``reset()`` median under this many seconds."""
DISCRETE_MISSING = "n/a (discrete mode not available)"
RENDER_MISSING = 'n/a (pip install "meeting-gym[render]")'


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
    unit: str = "steps"

    def value(self) -> str:
        if self.note:
            return self.note
        if self.seconds is not None:
            return _duration(self.seconds)
        if self.rate is not None:
            return f"{self.rate:,.0f} {self.unit}/s"
        return ""


def _duration(seconds: float) -> str:
    if seconds >= 0.1:
        return f"{seconds:.3f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    if seconds >= 1e-4:
        return f"{seconds * 1e3:.3f} ms"
    return f"{seconds * 1e6:.1f} us"


# ----------------------------------------------------------------------------- actions


def text_action_pool() -> list[str]:
    """Legal text actions a random agent might send, answers last (see :func:`text_chooser`).

    Tool calls name every attendee the generator uses plus one unknown name, so some
    calls return ``error:`` results, as a random agent's would.
    """
    names = [*PEOPLE, "Nobody"]
    dates = ["2024-03-10", "2024-03-11", "2024-06-10", "2024-10-28"]
    pool = [json.dumps({"name": "list_attendees", "arguments": {}})]
    for name in names:
        pool.append(json.dumps({"name": "get_timezone", "arguments": {"name": name}}))
        pool.append(json.dumps({"name": "get_working_hours", "arguments": {"name": name}}))
        pool += [
            "<tool_call>"
            + json.dumps({"name": "get_busy", "arguments": {"name": name, "date": d}})
            + "</tool_call>"
            for d in dates
        ]
    return pool


TEXT_ANSWERS = ("<answer>2024-03-11T14:00:00Z</answer>", "<answer>NONE</answer>")
TEXT_ANSWER_RATE = 0.1
"""A random text agent answers (ending the episode) with this probability per turn."""


def text_chooser(seed: int) -> Callable[[Any], str]:
    rng = random.Random(seed)
    pool = text_action_pool()

    def choose(info: Any) -> str:
        if rng.random() < TEXT_ANSWER_RATE:
            return TEXT_ANSWERS[rng.random() < 0.5]
        return pool[int(rng.random() * len(pool))]

    return choose


def discrete_chooser(seed: int) -> Callable[[Any], int]:
    """Uniform over the legal actions of ``info["action_mask"]``."""
    import numpy as np

    rng = random.Random(seed)

    def choose(info: Any) -> int:
        legal = np.flatnonzero(info["action_mask"])
        return int(legal[int(rng.random() * len(legal))])

    return choose


def make_env(mode: str, **kwargs: Any) -> Any:
    """``gymnasium.make(ENV_ID, mode=mode)``, or None if the mode does not exist (yet)."""
    import gymnasium as gym

    import meeting_gym  # noqa: F401  (registers the env ids)

    try:
        return gym.make(ENV_ID, mode=mode, **kwargs)
    except ValueError:
        return None


def chooser(mode: str, seed: int) -> Callable[[Any], Any]:
    return discrete_chooser(seed) if mode == "discrete" else text_chooser(seed)


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


def render_rate(env: Any, frames: int, seed: int) -> float:
    """rgb_array frames per second, counting only the time inside ``env.render()``."""
    rng = random.Random(seed)
    clock = time.perf_counter
    tools = env.unwrapped.interface.table.n_tools
    _, info = env.reset(seed=seed)
    inside = 0.0
    for _ in range(frames):
        start = clock()
        env.render()
        inside += clock() - start
        legal = [int(a) for a in info["action_mask"].nonzero()[0]]
        calls = [a for a in legal if a < tools]
        action = rng.choice(calls if calls and rng.random() > 0.05 else legal)
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            _, info = env.reset()
    return frames / inside


def reset_times(env: Any, count: int, seed: int) -> list[float]:
    """Durations of ``count`` resets, each generating a fresh scenario."""
    env.reset(seed=seed)
    clock = time.perf_counter
    out = []
    for _ in range(count):
        start = clock()
        env.reset()
        out.append(clock() - start)
    return out


def solve_times(scenarios: Sequence[Any]) -> list[float]:
    clock = time.perf_counter
    out = []
    for scenario in scenarios:
        start = clock()
        solve(scenario)
        out.append(clock() - start)
    return out


def vector_rate(
    mode: str, num_envs: int, vectorization_mode: str, vector_steps: int, seed: int
) -> float | None:
    """Sub-environment steps per second of ``gymnasium.make_vec`` (None if no such mode)."""
    import gymnasium as gym
    import numpy as np

    import meeting_gym  # noqa: F401

    vector_kwargs = {"shared_memory": False} if vectorization_mode == "async" else {}
    try:
        envs = gym.make_vec(
            ENV_ID,
            num_envs=num_envs,
            vectorization_mode=vectorization_mode,
            vector_kwargs=vector_kwargs,
            mode=mode,
        )
    except ValueError:
        return None
    try:
        choosers = [chooser(mode, seed + i) for i in range(num_envs)]
        _, infos = envs.reset(seed=seed)
        start = time.perf_counter()
        for _ in range(vector_steps):
            actions = [choose(_sub_info(infos, i)) for i, choose in enumerate(choosers)]
            _, _, _, _, infos = envs.step(tuple(actions) if mode == "text" else np.array(actions))
        elapsed = time.perf_counter() - start
    finally:
        envs.close()
    return num_envs * vector_steps / elapsed


def _sub_info(infos: dict[str, Any], index: int) -> dict[str, Any]:
    """The one entry a chooser reads (the action mask) for sub-environment ``index``."""
    mask = infos.get("action_mask")
    return {} if mask is None else {"action_mask": mask[index]}


def generate_batch(n: int = 500, seed: int = 0) -> None:
    """Generate ``n`` scenarios of the default mix and solve their gold answers."""
    rng = random.Random(seed)
    for _ in range(n):
        solve(generate(rng))


def _clock(fn: Callable[[], object], repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


# ----------------------------------------------------------------------------- the run


@dataclass(frozen=True)
class Budget:
    repeats: int
    cartpole_steps: int
    steps: int
    resets: int
    solves_per_difficulty: int
    vector_steps: int


FULL = Budget(
    repeats=7,
    cartpole_steps=20_000,
    steps=4000,
    resets=300,
    solves_per_difficulty=150,
    vector_steps=400,
)
QUICK = Budget(
    repeats=3,
    cartpole_steps=3000,
    steps=500,
    resets=40,
    solves_per_difficulty=20,
    vector_steps=40,
)


def measure(quick: bool = False) -> tuple[list[Row], float]:
    """Run every measurement; returns the rows and CartPole's median steps per second."""
    from gymnasium.error import DependencyNotInstalled

    budget = QUICK if quick else FULL
    modes = ("discrete", "text")
    envs = {mode: make_env(mode) for mode in modes}
    try:
        render_env = make_env("discrete", render_mode="rgb_array")
    except DependencyNotInstalled:
        render_env = None
    rates: dict[str, list[float]] = {}  # per repeat: items per second
    ratios: dict[str, list[float]] = {}  # per repeat: rate / CartPole's rate in that repeat
    seconds: dict[str, list[float]] = {}  # every single duration, for the time rows

    reset_envs = {
        (mode, difficulty): make_env(mode, difficulty=difficulty)
        for mode in modes
        for difficulty in (None, *DIFFICULTIES)
    }
    rng = random.Random(3)
    pool = [
        generate(rng, difficulty)
        for difficulty in DIFFICULTIES
        for _ in range(budget.solves_per_difficulty)
    ]
    solve_times(pool)  # warm the zone caches

    for r in range(budget.repeats):
        # CartPole runs at both ends of each repeat and every ratio uses their mean, so a
        # burst of load from other jobs hits the row and its yardstick alike.
        before = cartpole_rate(budget.cartpole_steps, seed=r)
        repeat: dict[str, float | None] = {}
        for mode, env in envs.items():
            if env is not None:
                repeat[f"{mode} step"] = step_rate(env, chooser(mode, r), budget.steps, r)
                repeat[f"{mode} rollout"] = rollout_rate(env, chooser(mode, r), budget.steps, r)
        timed: dict[str, list[float]] = {}
        for (mode, difficulty), env in reset_envs.items():
            if env is not None:
                timed[f"{mode} reset {difficulty}"] = reset_times(env, budget.resets, r)
        timed["solve"] = solve_times(pool)
        for key, durations in timed.items():
            seconds.setdefault(key, []).extend(durations)
            repeat[key] = 1 / median(durations)
        for mode in modes:
            for kind, n in (("sync", 8), ("async", 2)):
                steps = budget.vector_steps * (1 if kind == "sync" else 4)
                repeat[f"{mode} {kind}"] = vector_rate(mode, n, kind, steps, seed=r)
        if render_env is not None:
            repeat["render"] = render_rate(render_env, max(budget.steps // 8, 5), seed=r)
        after = cartpole_rate(budget.cartpole_steps, seed=r)
        yardstick = (before + after) / 2
        rates.setdefault("cartpole", []).extend([before, after])
        for key, value in repeat.items():
            if value is not None:
                rates.setdefault(key, []).append(value)
                ratios.setdefault(key, []).append(value / yardstick)

    cart = median(rates["cartpole"])
    rows = [Row("CartPole-v1 random steps (yardstick)", rate=cart, ratio=1.0)]

    def rate_row(key: str, label: str, target: float | None = None) -> Row:
        if key not in rates:
            return Row(label, note=DISCRETE_MISSING)
        ratio = median(ratios[key])
        row = Row(label, rate=median(rates[key]), ratio=ratio)
        if target is not None:
            row.target = f">= {target:.0%} of CartPole"
            row.met = ratio >= target
        return row

    def time_row(key: str, label: str, target_s: float | None = None) -> Row:
        if key not in seconds:
            return Row(label, note=DISCRETE_MISSING)
        value = median(seconds[key])
        row = Row(label, seconds=value, rate=1 / value, ratio=median(ratios[key]))
        if target_s is not None:
            row.target = f"< {_duration(target_s)}"
            row.met = value < target_s
        return row

    for mode in modes:
        targets = (STEP_TARGET, ROLLOUT_TARGET) if mode == "discrete" else (None, None)
        rows.append(rate_row(f"{mode} step", f"{mode}: step(), random legal actions", targets[0]))
        rows.append(rate_row(f"{mode} rollout", f"{mode}: random rollouts incl. reset", targets[1]))
    for mode in modes:
        for difficulty in (None, *DIFFICULTIES):
            label = f"{mode}: reset() fresh scenario, {difficulty or 'default mix'}"
            rows.append(time_row(f"{mode} reset {difficulty}", label, RESET_TARGET_S))
    rows.append(time_row("solve", "gold solve alone (all difficulties)"))
    for mode in modes:
        rows.append(rate_row(f"{mode} sync", f"{mode}: make_vec sync x8"))
        rows.append(rate_row(f"{mode} async", f"{mode}: make_vec async x2"))
    frames = rate_row("render", "rgb_array frame (render per step)")
    frames.unit, frames.note = "frames", "" if "render" in rates else RENDER_MISSING
    rows.append(frames)

    zones._year.cache_clear()
    solver._day_pieces.cache_clear()
    cold = _clock(lambda: generate_batch(500, seed=1), 1)[0]
    warm = median(_clock(lambda: generate_batch(500, seed=2), max(3, budget.repeats // 2)))
    for label, value in (("cold zone cache", cold), ("warm, median", warm)):
        row = Row(f"generate 500 + gold ({label})", seconds=value, target="< 0.300 s")
        row.met = value < 0.3
        rows.append(row)
    for env in (*envs.values(), *reset_envs.values(), render_env):
        if env is not None:
            env.close()
    return rows, cart


def format_table(rows: Sequence[Row], quick: bool = False) -> str:
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

    out = [line(header), "-" * (sum(widths) + 2 * (len(widths) - 1))]
    out += [line(cells_row) for cells_row in cells]
    repeats = (QUICK if quick else FULL).repeats
    out.append(
        f"medians over {repeats} repeats; 'vs CartPole' = rate / CartPole steps per second, "
        "paired within each repeat of this run"
    )
    out.append(closing_note(rows))
    return "\n".join(out)


def closing_note(rows: Sequence[Row]) -> str:
    """One plain sentence: which targets were met, which were not, which were not measured."""
    judged = [row for row in rows if row.met is not None]
    missed = [row.measure for row in judged if not row.met]
    parts = [f"targets met: {len(judged) - len(missed)} of {len(judged)} measured"]
    if missed:
        parts.append("NOT met: " + "; ".join(missed))
    if any(row.note == DISCRETE_MISSING for row in rows):
        parts.append(
            "discrete targets (step >= 35%, rollouts >= 15% of CartPole) not measured: "
            'mode="discrete" is not available in this build'
        )
    return "; ".join(parts) + "."


def run_bench(quick: bool = False, as_json: bool = False) -> str:
    rows, cart = measure(quick)
    if as_json:
        payload = {
            "quick": quick,
            "cartpole_steps_per_s": cart,
            "rows": [asdict(r) for r in rows],
            "note": closing_note(rows),
        }
        return json.dumps(payload, indent=2)
    return format_table(rows, quick)
