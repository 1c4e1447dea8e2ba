"""A curriculum over an env's difficulty levels: train where the learner is.

A learner gains little from items it always solves or never solves (GRPO gets no gradient
from a group whose rewards are all equal; PPO sees the same return every episode). A
:class:`Curriculum` draws each next training item at the level where the learner's recent
success sits inside a target band, from the outcomes it is told. Its rules are plain:

* it starts at ``start`` (default: the easiest of ``levels``);
* every reported reward counts as a success when it reaches ``success`` (default: the
  task's best reward) and is kept in the window of the level its item was drawn at (the
  last ``window`` outcomes);
* once the current level's window holds at least ``min_outcomes`` outcomes, a success
  rate above ``high`` steps up one level and a rate below ``low`` steps down one; the
  window of the level it moves to is emptied, so the next move waits for fresh evidence;
* optionally (``replay`` > 0), an item whose group's success rate fell inside the band is
  kept, and a share ``replay`` of the draws offers such an item again (each at most
  ``replays`` more times): what the learner's own samples showed to be at its frontier.

Items come from the env's own ``train`` split (never ``eval`` nor ``curated``, see
:mod:`meeting_gym.core.splits`): level ``L``'s ``k``-th draw is train item ``k`` of split
seed ``seed`` at difficulty ``L``, so every draw is a set of reset options any env,
server or trainer replays. The state is a small JSON object (:meth:`Curriculum.state`):
saved with a checkpoint and loaded back, a resumed run draws what an uninterrupted one
would have drawn.

Nothing here imports gymnasium; the wrapper for classic RL is
:mod:`meeting_gym.core.curriculum_wrapper`.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

STATE_VERSION = 1
MAX_WINDOW = 4096
"""The longest window a curriculum keeps (outcomes per level): its memory stays small."""
MAX_FRONTIER = 1024
"""The most items kept for replay (the oldest go first)."""
MAX_REPLAYS = 16
OPTION_KEYS = frozenset(
    {"up_to", "seed", "low", "high", "window", "min_outcomes", "success", "replay", "replays"}
)
"""What a ``curriculum`` option (a server's reset option) may set."""
SPREAD_EPSILON = 1e-9
"""Rewards closer than this count as equal (a group with no spread gives GRPO nothing)."""


@dataclass(frozen=True)
class Rules:
    """What moves a curriculum: a success band, a window, and when to decide.

    ``low`` and ``high`` bound the target success rate (verifiers' rule of thumb: a task
    solved 80% of the time is too easy, one never solved too hard); ``window`` outcomes
    per level are remembered; ``min_outcomes`` of them are needed before a move;
    ``success`` is the reward an outcome must reach to count as solved (None: the task's
    best reward); ``replay`` is the share of draws that offer again an item whose group's
    success rate was inside the band, ``replays`` how many more times one item may be
    offered.
    """

    low: float = 0.2
    high: float = 0.8
    window: int = 32
    min_outcomes: int = 16
    success: float | None = None
    replay: float = 0.0
    replays: int = 1

    def __post_init__(self) -> None:
        low = _number("low", self.low, 0.0, 1.0)
        if not low < _number("high", self.high, 0.0, 1.0):
            raise ValueError(f"need 0 <= low < high <= 1, got low={self.low}, high={self.high}")
        _integer("window", self.window, 1, MAX_WINDOW)
        _integer("min_outcomes", self.min_outcomes, 1, self.window)
        if self.success is not None:
            _number("success", self.success, -math.inf, math.inf)
        _number("replay", self.replay, 0.0, 1.0)
        _integer("replays", self.replays, 1, MAX_REPLAYS)


def _number(name: str, value: Any, low: float, high: float) -> float:
    """``value`` if it is a finite number from ``low`` to ``high``, else ``ValueError``."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or not low <= value <= high
    ):
        bounds = "a finite number" if math.isinf(low) else f"a number from {low:g} to {high:g}"
        raise ValueError(f"{name} must be {bounds}, got {value!r:.60}")
    return float(value)


def _integer(name: str, value: Any, low: int, high: int) -> int:
    """``value`` if it is an integer from ``low`` to ``high``, else ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name} must be an integer from {low} to {high}, got {value!r:.60}")
    return value


@dataclass(frozen=True)
class Draw:
    """One item a curriculum chose: train item ``index`` of ``split_seed`` at ``level``."""

    level: str
    index: int
    split_seed: int

    @property
    def options(self) -> dict[str, Any]:
        """The ``reset(options=...)`` that plays this item in any env of its id."""
        return {
            "split": "train",
            "index": self.index,
            "split_seed": self.split_seed,
            "difficulty": self.level,
        }


class Curriculum:
    """Draws train items at the level where recent success is inside ``rules``' band.

    ``levels`` are the env's difficulties from easiest to hardest (the ones to use: a
    curriculum "up to expert" lists every level to ``expert``); ``best`` is the task's
    best reward, what an outcome reaches to count as solved unless ``rules.success``
    says otherwise. :meth:`for_env` reads both from a registered env id.
    """

    def __init__(
        self,
        levels: Sequence[str],
        *,
        best: float,
        seed: int = 0,
        rules: Rules | None = None,
        start: str | None = None,
        env: str | None = None,
    ) -> None:
        levels = tuple(levels)
        if not levels or len(set(levels)) != len(levels):
            raise ValueError(f"levels must be distinct and at least one, got {levels!r}")
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 1 << 64:
            raise ValueError(f"seed must be an integer from 0 to 2**64 - 1, got {seed!r:.60}")
        if start is not None and start not in levels:
            raise ValueError(f"start {start!r} is not one of the levels {levels!r}")
        self.levels = levels
        self.rules = rules or Rules()
        self.seed = seed
        self.env = env
        self.threshold = float(best if self.rules.success is None else self.rules.success)
        self.level = levels.index(start) if start is not None else 0
        self.start = self.current
        self.drawn = dict.fromkeys(levels, 0)
        self.windows: dict[str, list[int]] = {level: [] for level in levels}
        self.outcomes = 0
        self.groups = 0
        self.zero_spread = 0
        self.moves: list[dict[str, Any]] = []
        self.draws = 0
        self.replayed = 0
        # items at the learner's frontier, [level, index, times offered], oldest first; and
        # the times offered of replayed items whose outcome has not come back yet
        self.frontier: list[list[Any]] = []
        self.offered: dict[str, int] = {}

    @classmethod
    def for_env(
        cls,
        env_id: str,
        *,
        easiest: str | None = None,
        up_to: str | None = None,
        **kwargs: Any,
    ) -> Curriculum:
        """A curriculum over ``env_id``'s difficulties from ``easiest`` to ``up_to`` (by
        default every one); the levels outside the span are never drawn.

        Raises ``ValueError`` naming an unknown difficulty or an inverted span.
        """
        from meeting_gym.core.registry import task_class  # gymnasium only when asked

        task = task_class(env_id)
        known = tuple(task.difficulties)
        for level in (easiest, up_to):
            if level is not None and level not in known:
                raise ValueError(f"{env_id} has no difficulty {level!r}; choose one of {known}")
        first = known.index(easiest) if easiest is not None else 0
        last = known.index(up_to) if up_to is not None else len(known) - 1
        if first > last:
            raise ValueError(f"{env_id}: {easiest!r} is harder than {up_to!r}, so no level is left")
        return cls(known[first : last + 1], best=float(task.max_reward), env=env_id, **kwargs)

    @classmethod
    def from_option(cls, env_id: str, value: Any) -> Curriculum:
        """The curriculum a ``curriculum`` reset option asks for: True (every default) or an
        object with any of ``up_to``, ``seed`` and the :class:`Rules` fields.

        Raises ``ValueError`` naming what is wrong.
        """
        if value is True:
            value = {}
        if not isinstance(value, Mapping):
            raise ValueError(
                "curriculum must be true or an object with any of " + ", ".join(sorted(OPTION_KEYS))
            )
        unknown = sorted(str(key)[:40] for key in value if key not in OPTION_KEYS)
        if unknown:
            raise ValueError(
                f"unknown curriculum field(s) {', '.join(unknown)}; known: "
                + ", ".join(sorted(OPTION_KEYS))
            )
        rules = Rules(**{k: v for k, v in value.items() if k in Rules.__dataclass_fields__})
        up_to = value.get("up_to")
        if up_to is not None and not isinstance(up_to, str):
            raise ValueError(f"up_to must be a difficulty's name, got {up_to!r}")
        return cls.for_env(env_id, up_to=up_to, seed=value.get("seed", 0), rules=rules)

    # ------------------------------------------------------------------ drawing

    @property
    def current(self) -> str:
        """The level the next draw comes from."""
        return self.levels[self.level]

    def next(self) -> Draw:
        """The next training item: the next unused train index of the current level, or
        (a share ``rules.replay`` of the draws) an item of this level kept for replay."""
        level = self.current
        self.draws += 1
        if self.rules.replay and self._roll() < self.rules.replay:
            for k, (kept, index, offered) in enumerate(self.frontier):
                if kept == level:
                    del self.frontier[k]
                    self.offered[f"{level}:{index}"] = offered + 1
                    if len(self.offered) > MAX_FRONTIER:  # outcomes that never came back
                        del self.offered[next(iter(self.offered))]
                    self.replayed += 1
                    return Draw(level, index, self.seed)
        draw = Draw(level, self.drawn[level], self.seed)
        self.drawn[level] += 1
        return draw

    def _roll(self) -> float:
        """A number in [0, 1) fixed by the seed and the draw's number (resumes exactly)."""
        return random.Random(f"meeting_gym:curriculum:{self.seed}:{self.draws}").random()

    def take(self, n: int) -> list[Draw]:
        """The next ``n`` draws (the level cannot move between them: no outcomes come in)."""
        return [self.next() for _ in range(n)]

    # ------------------------------------------------------------------ outcomes

    def report(self, level: str | Draw, rewards: float | Iterable[float]) -> bool:
        """Tell the outcome(s) of one item drawn at ``level``: a reward, or a group's rewards.

        A group (several rewards of one item, as GRPO samples) is counted, and counted as
        having no spread when its rewards are all equal. Returns whether the level moved.
        """
        name = level.level if isinstance(level, Draw) else level
        if name not in self.windows:
            raise ValueError(f"unknown level {name!r}; the levels are {self.levels!r}")
        values = (
            [float(rewards)] if isinstance(rewards, (int, float)) else list(map(float, rewards))
        )
        if not values or not all(math.isfinite(v) for v in values):
            raise ValueError(f"rewards must be finite numbers, at least one: got {values!r}")
        if len(values) > 1:
            self.groups += 1
            if max(values) - min(values) <= SPREAD_EPSILON:
                self.zero_spread += 1
        solved = [int(v >= self.threshold - SPREAD_EPSILON) for v in values]
        if isinstance(level, Draw):
            self._keep(level, solved)
        window = self.windows[name]
        window.extend(solved)
        del window[: -self.rules.window]
        self.outcomes += len(values)
        return self._decide()

    def _keep(self, draw: Draw, solved: list[int]) -> None:
        """Keep ``draw``'s item for replay if its group's success rate was inside the band."""
        offered = self.offered.pop(f"{draw.level}:{draw.index}", 1)
        if not self.rules.replay or len(solved) < 2 or offered > self.rules.replays:
            return
        rate = sum(solved) / len(solved)
        if 0 < rate < 1 and self.rules.low <= rate <= self.rules.high:
            self.frontier.append([draw.level, draw.index, offered])
            del self.frontier[:-MAX_FRONTIER]

    def success_rate(self, level: str | None = None) -> float | None:
        """The recent success rate at ``level`` (default: the current one); None if unknown."""
        window = self.windows[level or self.current]
        return sum(window) / len(window) if window else None

    def _decide(self) -> bool:
        window = self.windows[self.current]
        if len(window) < self.rules.min_outcomes:
            return False
        rate = sum(window) / len(window)
        step = 0
        if rate > self.rules.high and self.level < len(self.levels) - 1:
            step = 1
        elif rate < self.rules.low and self.level > 0:
            step = -1
        if not step:
            return False
        self.level += step
        self.windows[self.current].clear()
        self.moves.append(
            {"draws": sum(self.drawn.values()), "outcomes": self.outcomes, "to": self.current}
        )
        return True

    @property
    def zero_spread_share(self) -> float | None:
        """The share of reported groups whose rewards were all equal (None before any)."""
        return self.zero_spread / self.groups if self.groups else None

    # ------------------------------------------------------------------ state

    def state(self) -> dict[str, Any]:
        """Everything the curriculum is, as a JSON-ready dict (:meth:`from_state` reads it)."""
        return {
            "version": STATE_VERSION,
            "env": self.env,
            "levels": list(self.levels),
            "rules": asdict(self.rules),
            "seed": self.seed,
            "threshold": self.threshold,
            "start": self.start,
            "level": self.current,
            "drawn": dict(self.drawn),
            "windows": {level: list(w) for level, w in self.windows.items()},
            "outcomes": self.outcomes,
            "groups": self.groups,
            "zero_spread": self.zero_spread,
            "moves": [dict(move) for move in self.moves],
            "draws": self.draws,
            "replayed": self.replayed,
            "frontier": [list(entry) for entry in self.frontier],
            "offered": dict(self.offered),
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> Curriculum:
        """The curriculum :meth:`state` described, ready to go on where it stopped."""
        if not isinstance(state, Mapping) or state.get("version") != STATE_VERSION:
            raise ValueError(f"not a curriculum state of version {STATE_VERSION}")
        try:
            out = cls(
                state["levels"],
                best=float(state["threshold"]),
                seed=state["seed"],
                rules=Rules(**state["rules"]),
                start=state["level"],
                env=state["env"],
            )
            for level in out.levels:
                out.drawn[level] = _count(state["drawn"][level], f"drawn[{level!r}]")
                window = [int(bool(v)) for v in state["windows"][level]]
                out.windows[level] = window[-out.rules.window :]
            if state["start"] not in out.levels:
                raise ValueError(f"start {state['start']!r} is not one of the levels")
            out.start = state["start"]
            out.outcomes = _count(state["outcomes"], "outcomes")
            out.groups = _count(state["groups"], "groups")
            out.zero_spread = _count(state["zero_spread"], "zero_spread")
            out.moves = [dict(move) for move in state["moves"]]
            out.draws = _count(state["draws"], "draws")
            out.replayed = _count(state["replayed"], "replayed")
            out.frontier = [
                [str(level), _count(index, "a frontier index"), _count(offered, "offered")]
                for level, index, offered in state["frontier"]
            ][-MAX_FRONTIER:]
            out.offered = {
                str(key): _count(value, "offered") for key, value in state["offered"].items()
            }
        except (KeyError, TypeError) as exc:
            raise ValueError(f"malformed curriculum state: {exc!r}") from exc
        return out

    def save(self, path: str | Path) -> None:
        """Write :meth:`state` as JSON to ``path`` (beside a checkpoint)."""
        Path(path).write_text(json.dumps(self.state(), indent=1) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> Curriculum:
        """The curriculum :meth:`save` wrote to ``path``."""
        return cls.from_state(json.loads(Path(path).read_text(encoding="utf-8")))

    def __repr__(self) -> str:
        rate = self.success_rate()
        shown = "unknown" if rate is None else f"{rate:.2f}"
        return (
            f"Curriculum(level={self.current!r}, recent success {shown}, "
            f"{sum(self.drawn.values())} drawn, {len(self.moves)} moves)"
        )


def _count(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return value


__all__ = ["Curriculum", "Draw", "Rules"]
