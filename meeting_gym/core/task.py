"""The seam of the family: what one environment is made of, and nothing more.

A new text environment is one :class:`Task` subclass (plus its domain modules) and one
registration line in ``meeting_gym/__init__.py``. The task says how items are drawn
and identified, what the agent is told, which tools it has, and how a final message
is graded. Everything generic is written once around it:

* :class:`~meeting_gym.core.text_env.TextEnv` plays a task as a Gymnasium env (text
  actions and observations, tool calls, ``max_turns``, reset options);
* :mod:`~meeting_gym.core.splits` turns ``generate`` into seeded, addressable splits
  (``train`` / ``eval`` / ``curated``) and JSONL rows;
* :mod:`~meeting_gym.evaluation.evaluate` runs any policy on any registered env and prints
  the task's rubric terms; the CLI and the registry tests take every registered env.

Nothing here imports gymnasium: a task is plain Python and is tested directly.
"""

from __future__ import annotations

import random
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from meeting_gym.core.episode import Episode
from meeting_gym.core.rubric import Grade, Rubric

if TYPE_CHECKING:
    from meeting_gym.core.tools import ToolSet

__all__ = ["Setting", "Task"]

Item = TypeVar("Item")
Truth = TypeVar("Truth")


@dataclass(frozen=True)
class Setting:
    """A task's own keyword argument (beyond ``difficulty``): ``gym.make`` kwarg and CLI flag.

    ``choices`` limits the values; ``kind`` converts a CLI string (``str`` or ``int``).
    The CLI spells it ``--name-with-dashes``.
    """

    name: str
    help: str
    choices: tuple[Any, ...] | None = None
    kind: type = str


_EPISODE_NAMES = ("answers", "action_fields", "dense_reward", "stats", "truncation_note")
"""Task attributes that moved to ``Task.episode_class`` in 0.3.0 (aliases until 0.4.0)."""


def _moved(old: str, new: str) -> None:
    warnings.warn(
        f"Task.{old} moved to {new} in meeting_gym 0.3.0; the old name goes in 0.4.0",
        DeprecationWarning,
        stacklevel=3,
    )


class _EpisodeAttribute:
    """A deprecated ``Task`` attribute, read from the task's ``episode_class``."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, task: Any, owner: type) -> Any:
        _moved(self.name, f"Task.episode_class.{self.name}")
        return getattr(owner.episode_class, self.name)


class Task(Generic[Item, Truth]):
    """Base class of every environment's task.

    Class attributes a subclass sets:

    * ``summary``: one line, shown by ``meeting-gym envs``;
    * ``difficulties``: the values of the ``difficulty`` option (``None`` draws the
      task's default mix);
    * ``rubric``: the named, weighted terms of the grade;
    * ``max_reward``: the best reward an episode can earn (the ``reference_policy``
      earns it on every curated item; the registry tests check it); where the best
      depends on the item, a bound, and :meth:`max_reward_for` documents each item's;
    * ``toolset``: the tools of a multi-turn task, or None for a single-turn task (every
      reply is the final answer);
    * ``answer_tag``: the tag that marks a final answer in a multi-turn action;
    * ``short_system_prompt``: the same rules in far fewer tokens, for small models
      (``--system-prompt short``), or None; the rubric that grades is the same either way;
    * ``episode_class``: the kind of episode the task plays
      (:class:`~meeting_gym.core.episode.Episode`, answer-graded by :meth:`gold` and
      :meth:`grade`, by default; a :class:`~meeting_gym.core.episode.StepEpisode`
      subclass pays every step and grades itself, as TimetablePlanner's). What differs
      between kinds (an answer action, dense rewards, an action object, stats) is read
      from the episode class;
    * ``max_turns``: the default turn budget;
    * ``id_key``: the ``info`` key that carries the item's id;
    * ``policies``: reference policies by name, as ``"module:Class"`` strings (imported
      only when used); ``reference_policy`` names the best of them;
    * ``reset_options``: names of the task's own ``reset(options=...)`` entries, read
      by :meth:`item_from_options`;
    * ``settings``: the task's own configuration keywords (:class:`Setting`), which
      ``__init__`` takes and validates and the CLI offers as flags;
    * ``bench``: ``"module:function"`` giving the env's rows of ``meeting-gym bench``
      (None: the generic rows of :func:`meeting_gym.bench.default_plan`).

    Hand-picked items come from :meth:`curated` and, for more named splits than
    ``curated``, :meth:`fixed_splits`; :meth:`eval_prefix` says which of them the ``eval``
    split begins with.

    ``Item`` is whatever the task plays (a scenario, a question); ``Truth`` is what
    :meth:`truth` derives from it once per episode (the gold answer and the checker
    behind partial credit), so that both come from one computation.
    """

    summary: ClassVar[str] = ""
    difficulties: ClassVar[tuple[str, ...]] = ()
    rubric: ClassVar[Rubric]
    max_reward: ClassVar[float]
    toolset: ClassVar[ToolSet | None] = None
    answer_tag: ClassVar[str] = "answer"
    short_system_prompt: ClassVar[str | None] = None
    episode_class: ClassVar[type[Episode]] = Episode
    max_turns: ClassVar[int] = 40
    id_key: ClassVar[str] = "item_id"
    policies: ClassVar[Mapping[str, str]] = {}
    reference_policy: ClassVar[str] = "gold"
    reset_options: ClassVar[frozenset[str]] = frozenset()
    settings: ClassVar[tuple[Setting, ...]] = ()
    bench: ClassVar[str | None] = None
    env_id: str | None = None
    """The registered env id this task was made for (set by ``make_task``)."""
    eval_draws: str = "distinct"
    """How the ``eval`` split addresses its generated items (set from the registered env
    id's version, see :mod:`meeting_gym.core.splits`): ``"distinct"`` (the ``-v0`` ids)
    walks the held-out draws skipping repeats; ``"independent"`` (``-v1``) makes item ``k``
    one draw of its own, in constant time."""

    # 0.2's names, kept working until 0.4.0
    answers = _EpisodeAttribute()
    action_fields = _EpisodeAttribute()
    dense_reward = _EpisodeAttribute()
    stats = _EpisodeAttribute()
    truncation_note = _EpisodeAttribute()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # A task written against 0.2 set these on itself: they still take effect, through
        # an episode class derived from its own, with a DeprecationWarning.
        own = {n: cls.__dict__[n] for n in _EPISODE_NAMES if n in cls.__dict__}
        own = {n: v for n, v in own.items() if not isinstance(v, _EpisodeAttribute)}
        if own:
            _moved(", ".join(own), f"{cls.__name__}.episode_class (an Episode subclass)")
            for name in own:
                delattr(cls, name)
            cls.episode_class = type(f"{cls.__name__}Episode", (cls.episode_class,), own)
        names = cls.__dict__.get("fixed_splits")
        if isinstance(names, tuple):
            _moved("fixed_splits (a tuple) and fixed_split()", f"{cls.__name__}.fixed_splits()")
            named = tuple(names)

            def fixed_splits(self: Task[Any, Any]) -> Mapping[str, Sequence[Any]]:
                return {"curated": self.curated(), **{n: self.fixed_split(n) for n in named}}

            cls.fixed_splits = fixed_splits  # type: ignore[method-assign]
        if cls.__dict__.get("eval_curated") is False:
            _moved("eval_curated", f"{cls.__name__}.eval_prefix()")
            cls.eval_prefix = lambda self: ()  # type: ignore[method-assign]

    @property
    def eval_curated(self) -> bool:
        """Deprecated (0.3.0): whether :meth:`eval_prefix` holds any item."""
        _moved("eval_curated", "Task.eval_prefix()")
        return bool(self.eval_prefix())

    def fixed_split(self, name: str) -> Sequence[Item]:
        """Deprecated (0.3.0): ``fixed_splits()[name]``."""
        _moved("fixed_split(name)", "Task.fixed_splits()[name]")
        splits = self.fixed_splits()
        if name not in splits:
            raise ValueError(f"{type(self).__name__} has no fixed split {name!r}")
        return splits[name]

    def __init__(self, difficulty: str | None = None) -> None:
        self.difficulty = self.check_difficulty(difficulty)

    # ------------------------------------------------------------------ configuration

    def check_difficulty(self, difficulty: Any) -> str | None:
        """``difficulty`` if it is None or one of :attr:`difficulties`, else ``ValueError``."""
        if difficulty is not None and difficulty not in self.difficulties:
            raise ValueError(
                f"unknown difficulty {difficulty!r}; choose None or one of "
                f"{', '.join(self.difficulties)}"
            )
        return difficulty

    def check_setting(self, name: str, value: Any) -> Any:
        """``value`` if it is allowed for the setting ``name``, else ``ValueError`` naming both."""
        setting = next((s for s in self.settings if s.name == name), None)
        if setting is None:
            raise ValueError(f"{type(self).__name__} has no setting {name!r}")
        if setting.choices is not None and value not in setting.choices:
            allowed = ", ".join(map(repr, setting.choices))
            raise ValueError(f"unknown {name} {value!r}; choose one of {allowed}")
        return value

    def config(self) -> dict[str, Any]:
        """The keyword arguments this task was made with (subclasses add their own)."""
        return {"difficulty": self.difficulty}

    def cache_key(self) -> tuple[Any, ...]:
        """What identifies the items this task draws: its class and configuration."""
        cls = type(self)
        return (f"{cls.__module__}:{cls.__qualname__}", tuple(sorted(self.config().items())))

    # ------------------------------------------------------------------ items

    def generate(self, rng: random.Random, difficulty: str | None) -> Item:
        """Draw one item from ``rng`` (and nothing else): same rng state, same item.

        ``difficulty`` None means the task's default mix.
        """
        raise NotImplementedError

    def generate_solved(self, rng: random.Random, difficulty: str | None) -> tuple[Item, Truth]:
        """:meth:`generate` and the item's :meth:`truth`; override when drawing solves anyway."""
        item = self.generate(rng, difficulty)
        return item, self.truth(item)

    def curated(self) -> Sequence[Item]:
        """The hand-picked items of the ``curated`` split, in order."""
        return ()

    def fixed_splits(self) -> Mapping[str, Sequence[Item]]:
        """Every hand-picked split by name, ``curated`` first (``train`` and ``eval`` never
        draw their items). Override to name more than ``curated``."""
        return {"curated": self.curated()}

    def eval_prefix(self) -> Sequence[Item]:
        """The hand-picked items the ``eval`` split begins with, before its held-out draws
        (default: the curated items; empty for an ``eval`` of generated items only)."""
        return self.curated()

    @cached_property
    def curated_keys(self) -> frozenset[str]:
        """The keys of every hand-picked item (which train never draws), once."""
        return frozenset(self.key(item) for items in self.fixed_splits().values() for item in items)

    def key(self, item: Item) -> str:
        """The item's identity: equal items, equal keys (deduplication, the held-out split)."""
        raise NotImplementedError

    def item_id(self, item: Item) -> str:
        """The id shown in infos, tables and rows (default: :meth:`key`)."""
        return self.key(item)

    def item_difficulty(self, item: Item) -> str | None:
        """The difficulty label of an item (None if it has none)."""
        return getattr(item, "difficulty", None)

    def groups(self, item: Item) -> tuple[str, ...]:
        """Labels the evaluation table breaks its means down by (default: the difficulty)."""
        level = self.item_difficulty(item)
        return () if level is None else (f"difficulty {level}",)

    def accepts(self, item: Item, difficulty: str | None) -> bool:
        """Whether a curated item belongs to splits of this configuration and ``difficulty``."""
        return difficulty is None or self.item_difficulty(item) == difficulty

    def load_item(self, value: Any) -> Item:
        """An item from the ``item`` reset option: an item as is, or its dict form.

        Raises ``ValueError`` naming what is wrong with a malformed one.
        """
        raise ValueError(f"{type(self).__name__} does not load items")

    def item_from_options(self, options: Mapping[str, Any]) -> Item | None:
        """The item named by the task's own reset options, or None if they name none."""
        return None

    # ------------------------------------------------------------------ ground truth

    def rubric_for(self, item: Item) -> Rubric:
        """The rubric that grades ``item`` (override when weights depend on the item)."""
        return self.rubric

    def turns_for(self, item: Item) -> int:
        """The most turns an episode of ``item`` can take: :attr:`max_turns`, or fewer where
        the item ends its episodes sooner (TimetablePlanner: every turn spends budget).

        Adapters whose rollouts the env does not stop (verifiers) bound them by this.
        """
        return self.max_turns

    def max_reward_for(self, item: Item) -> float | None:
        """The documented best reward of an episode of ``item`` (default :attr:`max_reward`).

        The ``reference_policy`` earns it on every curated item (the registry tests check
        it). Tasks whose best reward depends on the item override this, and return None
        for an item they document no best reward for.
        """
        return self.max_reward

    def truth(self, item: Item) -> Truth:
        """What the gold answer and the grader are read from (computed once per episode)."""
        raise NotImplementedError

    def gold(self, item: Item, truth: Truth) -> str:
        """The gold answer, as an answer block's content."""
        raise NotImplementedError

    def grade(self, item: Item, truth: Truth, text: str) -> tuple[Grade, str | None]:
        """Grade a final message: the grade and the answer read from it (None: no answer).

        Answer-graded tasks (the default ``episode_class``) implement it; a task whose
        episodes grade themselves (a :class:`~meeting_gym.core.episode.StepEpisode`) does not.
        """
        raise NotImplementedError(f"{type(self).__name__} does not grade final messages")

    # ------------------------------------------------------------------ what the agent sees

    def question(self, item: Item) -> str:
        """The first observation."""
        raise NotImplementedError

    def system_prompt(self) -> str:
        """The system prompt for LLM agents (rules, answer format, tool protocol)."""
        raise NotImplementedError

    def reset_info(self, item: Item) -> dict[str, Any]:
        """Task entries of ``reset``'s info (the id and ``difficulty`` are added for you)."""
        return {}

    def row_info(self, item: Item) -> dict[str, Any]:
        """The ``info`` of an exported JSONL row: what a trainer needs to grade it again."""
        return {}
