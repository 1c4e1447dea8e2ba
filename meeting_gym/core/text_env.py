"""The text shell every environment of the family shares: string actions, string observations.

:class:`TextInterface` turns one string action into tool calls or a final answer on an
:class:`~meeting_gym.core.episode.Episode`; :class:`TextEnv` is the Gymnasium env that
plays any :class:`~meeting_gym.core.task.Task` through it (or through another interface
an env adds, as MeetingSlot adds its discrete one).
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import gymnasium as gym

from meeting_gym.core.bounded import show
from meeting_gym.core.episode import Episode
from meeting_gym.core.protocol import AnswerAction, InvalidAction, parse_action
from meeting_gym.core.registry import EVAL_DRAWS, load_object
from meeting_gym.core.spaces import AnyText
from meeting_gym.core.splits import SPLIT_OPTIONS, draw, options_item
from meeting_gym.core.task import Task

MAX_ACTION_CHARS = 1 << 20
"""The longest string action read (1,048,576 characters); a longer one is an error that
costs the turn, as any malformed action."""
MAX_OBSERVATION_CHARS = 1 << 16
MAX_CALLS_PER_TURN = 32
MAX_TRANSCRIPT_ENTRY_CHARS = MAX_OBSERVATION_CHARS
"""What the transcript keeps of one action or observation (65,536 characters)."""
MAX_TRANSCRIPT_CHARS = 1 << 20
"""What one episode's transcript keeps in all (1,048,576 characters); later entries are
counted, not kept."""
MAX_OPTION_CHARS = 1 << 20
"""The largest ``item`` (or task option such as ``scenario``) a reset takes, measured as
its JSON text (1,048,576 characters)."""
MAX_OPTION_DEPTH = 32
"""The deepest nesting of lists and objects in such an option."""
ANSWER_RECEIVED = "Answer received."
COMMON_OPTIONS = SPLIT_OPTIONS | {"item"}
"""Reset options of every env: an item itself, or a split item, or the next draw's difficulty."""


class TextInterface:
    """Turns one string action into tool calls or a final answer on an episode.

    A task without tools is single-turn: any string is the reply, graded as is. A task
    with tools reads the action with :func:`~meeting_gym.agentkit.parse_action`: tool
    calls run in order, an answer block (the task's ``answer_tag``) ends the episode,
    anything else gets an ``error:`` observation. A non-string action is never graded:
    it gets an ``error:`` observation and uses the turn.
    """

    name = "text"

    def __init__(self, task: Task[Any, Any]) -> None:
        self.task = task
        self.action_space = AnyText(MAX_ACTION_CHARS)
        self.observation_space = AnyText(MAX_OBSERVATION_CHARS)
        self.last_action: str | None = None
        self.last_result: str | None = None

    def begin(self, episode: Episode) -> str:
        """Start an episode; returns the first observation (the question)."""
        self.last_action = self.last_result = None
        return self.task.question(episode.item)

    def reset_info(self) -> dict[str, Any]:
        toolset = self.task.toolset
        return {
            "system_prompt": self.task.system_prompt(),
            "tools": [] if toolset is None else toolset.schemas(),
            "answer_tag": self.task.answer_tag,
        }

    def step_info(self) -> dict[str, Any]:
        return {}

    def apply(self, episode: Episode, action: Any) -> tuple[str, bool]:
        """Run ``action``; returns (observation, terminated)."""
        # kept cut as the transcript keeps it: an env would otherwise hold its last action
        # whole until the next step (48 served sessions held 4 MiB each after a burst)
        text = action if isinstance(action, str) else show(action, MAX_TRANSCRIPT_ENTRY_CHARS)
        self.last_action = shorten(text, MAX_TRANSCRIPT_ENTRY_CHARS)
        observation, terminated = self._apply(episode, action)
        self.last_result = observation
        return observation, terminated

    def _apply(self, episode: Episode, action: Any) -> tuple[str, bool]:
        refused = oversized(action)
        if refused is not None:
            return refused, False
        if self.task.toolset is None:
            if not isinstance(action, str):
                kind = type(action).__name__
                return f"error: expected the reply as a string, got {kind}", False
            episode.submit(action)
            return ANSWER_RECEIVED, True
        parsed = parse_action(action, max_calls=MAX_CALLS_PER_TURN, answer_tag=self.task.answer_tag)
        if isinstance(parsed, AnswerAction):
            episode.submit(parsed.text)
            return ANSWER_RECEIVED, True
        if isinstance(parsed, InvalidAction):
            return clip(f"error: {parsed.reason}"), False
        results = [episode.call(call.name, call.arguments) for call in parsed.calls]
        text = results[0] if len(results) == 1 else json.dumps(results, ensure_ascii=False)
        return clip(text), False


def oversized(action: Any) -> str | None:
    """The error observation of a string action over :data:`MAX_ACTION_CHARS`, else None."""
    if isinstance(action, str) and len(action) > MAX_ACTION_CHARS:
        return (
            f"error: the action has {len(action):,} characters, over MAX_ACTION_CHARS "
            f"({MAX_ACTION_CHARS:,}); it was not read"
        )
    return None


def shorten(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how many were left out."""
    if len(text) <= limit:
        return text
    note = f"... [{len(text) - limit:,} more characters]"
    return text[:limit] + note


def check_option_size(name: str, value: Any) -> None:
    """Refuse a reset option over :data:`MAX_OPTION_CHARS` of JSON or :data:`MAX_OPTION_DEPTH`
    levels deep, before anything parses it: a ``ValueError`` naming the bound exceeded.

    The walk stops as soon as a bound is passed, so its own work is bounded too.
    """
    size = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list | tuple):
            if depth > MAX_OPTION_DEPTH:
                raise ValueError(
                    f"reset option {name!r} is nested deeper than MAX_OPTION_DEPTH "
                    f"({MAX_OPTION_DEPTH})"
                )
            size += 2 + len(node)
            children = node.items() if isinstance(node, dict) else ((None, v) for v in node)
            for key, child in children:
                if key is not None:
                    size += len(str(key)) + 3
                stack.append((child, depth + 1))
        elif isinstance(node, str):
            size += len(node) + 2
        else:
            size += 8  # a number, a bool, None (or a loaded object: its own loader bounds it)
        if size > MAX_OPTION_CHARS:
            raise ValueError(
                f"reset option {name!r} is over MAX_OPTION_CHARS ({MAX_OPTION_CHARS:,} "
                "characters of JSON)"
            )


def clip(text: str) -> str:
    """``text`` cut to the observation space's length, saying so."""
    if len(text) <= MAX_OBSERVATION_CHARS:
        return text
    note = "... [truncated]"
    return text[: MAX_OBSERVATION_CHARS - len(note)] + note


class TextEnv(gym.Env):
    """A task of the meeting_gym family, played through text.

    ## Description
    One item of the task per episode (a question, a hidden scenario): the first
    observation is the question; tools, if the task has any, reveal what it hides;
    the final answer is graded by the task's rubric. ``env.unwrapped.task`` is the
    task; its class docstring describes the rules, the answer format and the rubric.

    ## Action Space
    Any string (``AnyText``, up to 1,048,576 characters, ``MAX_ACTION_CHARS``; a longer
    one gets an ``error:`` observation naming the bound and uses the turn, unread). For
    a task without tools
    (single turn) the string is the reply and ends the episode. For a task with tools:

    * a tool call as JSON ``{"name": ..., "arguments": {...}}`` (arguments may be a
      JSON-encoded string), optionally inside ``<tool_call>...</tool_call>``; several
      calls (a JSON array, or several ``<tool_call>`` blocks, at most 32) run in
      order in one turn;
    * a final answer in the task's answer tag (``<answer>...</answer>`` unless the
      task says otherwise), anywhere in the action: it ends the episode, even beside
      tool calls (those are not run);
    * anything else gets an ``error:`` observation saying which forms are accepted,
      and uses the turn. So does a non-string action in any task.

    ## Observation Space
    A string (``AnyText``, up to 65,536 characters): the question at reset, then the
    tool result (a JSON array of results for several calls), ``Answer received.``,
    or an ``error:`` message.

    ## Rewards
    0 until the end; then the task's rubric: a weighted sum of named terms (every
    term is in the final ``info``). Truncation without an answer scores 0. (An env
    whose task's ``episode_class`` is a :class:`~meeting_gym.core.episode.StepEpisode`
    pays every step's reward as it comes;
    the rewards sum to the final ``info["reward"]``.)

    ## Episode End
    Terminated when an answer is given; truncated after ``max_turns`` turns without
    one. After the end, ``step()`` raises ``RuntimeError`` until ``reset()`` (as in
    every env of the family; Gymnasium leaves it undefined).

    ## Information
    ``reset`` returns the item's id (under the task's ``id_key``), ``difficulty``,
    the task's own entries, ``turn`` (0), ``system_prompt`` and ``tools`` (OpenAI
    function schemas; empty for a task without tools) and ``answer_tag`` (the tag of
    a final answer, for chat loops that must tell answers from tool calls). Every
    step returns the id and
    ``turn``; the last one adds every rubric term, ``reward``, ``gold``, ``answer``
    (what was read from the reply, None if nothing) and ``answered``.

    ## Arguments
    ``gymnasium.make(ENV_ID, difficulty=None, max_turns=None, render_mode=None,
    **task_settings)``: ``difficulty`` is one of the task's levels (None: its default
    mix); ``max_turns`` defaults to the task's (1 for a single-turn task);
    ``render_mode="ansi"`` prints the transcript (each entry up to 65,536 characters,
    1,048,576 in all per episode: later entries are counted, not kept). An ``item``
    (or a task's option holding an item, such as ``scenario``) is refused past
    ``MAX_OPTION_CHARS`` of JSON or ``MAX_OPTION_DEPTH`` levels. ``reset(options=...)`` takes
    ``{"split": "eval", "index": 7}`` (plus ``"split_seed"``, default 42) for
    ``load_split("eval", env=ENV_ID)[7]``, ``{"difficulty": ...}`` for the next draw,
    and the task's own options. ``reset(seed=s)`` plays ``load_split("train",
    seed=s)[0]`` and each following ``reset()`` the next training item.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "render_fps": 4}
    modes: ClassVar[tuple[str, ...]] = ("text",)

    def __init__(
        self,
        task_class: str | type[Task[Any, Any]],
        *,
        mode: str = "text",
        max_turns: int | None = None,
        render_mode: str | None = None,
        eval_draws: str = "distinct",
        **config: Any,
    ) -> None:
        cls = load_object(task_class) if isinstance(task_class, str) else task_class
        if not (isinstance(cls, type) and issubclass(cls, Task)):
            raise ValueError(f"task_class must name a Task subclass, got {task_class!r}")
        if eval_draws not in EVAL_DRAWS:
            raise ValueError(f"eval_draws must be one of {EVAL_DRAWS}, got {eval_draws!r}")
        self.task = cls(**config)
        # how the eval split addresses items: each id registers its own (-v0 distinct,
        # -v1 independent: docs/versions.md)
        self.task.eval_draws = eval_draws
        if mode not in self.modes:
            raise ValueError(f"unknown mode {mode!r}; choose one of {self.modes}")
        if max_turns is None:
            max_turns = self.task.max_turns
        if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
            raise ValueError(f"max_turns must be a positive integer, got {max_turns!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            modes = self.metadata["render_modes"]
            raise ValueError(f"unknown render_mode {render_mode!r}; choose one of {modes}")
        self.mode = mode
        self.max_turns = max_turns
        self.render_mode = render_mode
        self.interface = self.make_interface(mode)
        self.action_space = self.interface.action_space
        self.observation_space = self.interface.observation_space
        self.episode: Episode | None = None
        self.turns = 0
        self.transcript: list[tuple[str, str]] = []
        self._transcript_chars = 0
        self.transcript_dropped = 0
        self._stream_seed: int | None = None
        self._stream_index = 0

    @property
    def difficulty(self) -> str | None:
        return self.task.difficulty

    def make_interface(self, mode: str) -> Any:
        """The interface of ``mode`` (envs with more modes override this)."""
        return TextInterface(self.task)

    def make_episode(self, item: Any, truth: Any) -> Episode:
        """The episode of ``item``: the task's ``episode_class``."""
        return self.task.episode_class(self.task, item, truth)

    # ------------------------------------------------------------------ gym API

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None or self._stream_seed is None:
            # The env plays the train split of one seed, item after item; unseeded, that
            # seed comes from np_random (which Gymnasium seeded from the OS).
            self._stream_seed = int(seed) if seed is not None else self._random_seed()
            self._stream_index = 0
        item, truth = self._choose(options or {})
        episode = self.make_episode(item, truth)
        observation = self.interface.begin(episode)
        task = self.task
        info: dict[str, Any] = {
            task.id_key: episode.item_id,
            "difficulty": task.item_difficulty(item),
            **task.reset_info(item),
            "turn": 0,
        }
        for key, value in self.interface.reset_info().items():
            # the task's own entry wins: a task may name the answer tag per item
            info.setdefault(key, value)
        self.episode = episode
        self.turns = 0
        self.transcript = []
        self._transcript_chars = self.transcript_dropped = 0
        self._record("question", task.question(item))
        return observation, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        episode = self.episode
        if episode is None or episode.done or self.turns >= self.max_turns:
            raise RuntimeError("the episode is over (or never started): call reset()")
        interface = self.interface
        observation, terminated = interface.apply(episode, action)
        self.turns += 1
        truncated = not terminated and (episode.truncated or self.turns >= self.max_turns)
        info: dict[str, Any] = {self.task.id_key: episode.item_id, "turn": self.turns}
        info.update(interface.step_info())
        self._record("action", str(interface.last_action))
        if interface.last_result is not None:
            self._record("observation", interface.last_result)
        reward = episode.take_reward()
        if terminated or truncated:
            info.update(episode.outcome())
        return observation, reward, terminated, truncated, info

    def _record(self, kind: str, text: str) -> None:
        """Keep one transcript entry, within :data:`MAX_TRANSCRIPT_ENTRY_CHARS` and, for the
        whole episode, :data:`MAX_TRANSCRIPT_CHARS` (past it, entries are only counted)."""
        text = shorten(text, MAX_TRANSCRIPT_ENTRY_CHARS)
        if self._transcript_chars + len(text) > MAX_TRANSCRIPT_CHARS:
            self.transcript_dropped += 1
            return
        self._transcript_chars += len(text)
        self.transcript.append((kind, text))

    def render(self) -> Any:
        if self.render_mode != "ansi" or self.episode is None:
            return None
        return self.render_transcript()

    def render_transcript(self) -> str:
        """The episode so far as text: question, actions, observations (and the grade)."""
        lines = [f"[{kind}] {text}" for kind, text in self.transcript]
        if self.transcript_dropped:
            lines.append(f"[...] {self.transcript_dropped} later entries not kept")
        episode = self.episode
        if episode is not None and (episode.done or self.turns >= self.max_turns):
            outcome = episode.outcome()
            terms = ", ".join(f"{k}={outcome[k]:g}" for k in self.task.rubric.names)
            lines.append(f"[end] reward={outcome['reward']:g} ({terms}); gold={outcome['gold']}")
        return "\n".join(lines) + "\n"

    # ------------------------------------------------------------------ items

    def _random_seed(self) -> int:
        return int(self.np_random.integers(0, 2**63 - 1))

    def _choose(self, options: dict[str, Any]) -> tuple[Any, Any]:
        """The item to play and its truth (None: the episode computes it)."""
        task = self.task
        if not isinstance(options, dict):
            raise ValueError(f"reset options must be a dict, got {type(options).__name__}")
        unknown = set(options) - COMMON_OPTIONS - task.reset_options
        if unknown:
            known = ", ".join(sorted(COMMON_OPTIONS | task.reset_options))
            names = ", ".join(sorted(map(repr, unknown)))
            raise ValueError(f"unknown reset option(s) {names}; known: {known}")
        for name in ("item", *sorted(task.reset_options & set(options))):
            if name in options:
                check_option_size(name, options[name])
        own = task.load_item(options["item"]) if "item" in options else None
        if task.reset_options & set(options):
            if own is not None:
                raise ValueError("reset options name two items: give one of them")
            own = task.item_from_options(options)
        addressed = options_item(task, options)
        if own is not None and addressed is not None:
            raise ValueError("reset options name two items: give one of them")
        if own is not None:
            return own, None
        if addressed is not None:
            return addressed
        assert self._stream_seed is not None
        index = self._stream_index
        self._stream_index += 1
        return draw(task, self._stream_seed, index, options.get("difficulty"))
