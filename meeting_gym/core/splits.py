"""Seeded, addressable splits for every task: one map from (seed, index) to an item.

Every generated item of every env comes from :func:`draw`: item ``index`` of seed
``seed`` is ``task.generate(item_rng(seed, index, attempt))`` for the first attempt
whose item belongs to the split's side of a fixed partition of the item space:

* a small share of items (those whose id hashes into :data:`HELD_OUT_BUCKETS` of
  256 buckets, see :func:`held_out`) is **held out**: only the ``eval`` split draws
  them; ``train`` and ``reset()`` never do, and neither draws a curated item. So
  training never sees an evaluation item, for any split sizes and seeds.

The splits:

* ``train``: ``draw(seed, 0), draw(seed, 1), ...``: independent draws from the task's
  distribution (where the item space is small, an item can repeat, as in any
  sampling; the mix stays the nominal one). ``env.reset(seed=s)`` plays
  ``load_split("train", seed=s)[0]`` and each following ``reset()`` the next item;
* ``eval``: the curated items first (a task whose ``eval_prefix()`` is empty leaves
  them out), then held-out draws from ``seed + 1``. How item ``k`` past the curated ones
  is found depends on the env id's version (``Task.eval_draws``):

  - ``-v1`` ids (``independent``): item ``k`` is held-out draw ``k - len(curated)``,
    one draw of its own, so any index costs the same (a few milliseconds) and needs no
    other item. As in ``train``, an item can repeat where the item space is small: the
    split samples the held-out distribution, the mix stays the nominal one;
  - ``-v0`` ids (``distinct``): the held-out draws without repeats (an item equal to an
    earlier one is skipped), so item ``k`` depends on every item before it and reaching
    it walks the stream. Up to the first repeat, both give the same items.
* ``curated``: the task's hand-picked items; a task may name more hand-picked splits
  (``Task.fixed_splits()``, e.g. TimetablePlanner's ``generated``), which ``train`` and
  ``eval`` never draw from either.

Any item is addressable the same way everywhere: ``env.reset(options={"split": "eval",
"index": 7})`` plays ``load_split("eval", env=...)[7]``, and every exported row carries
the ``options`` that reproduce it. A ``-v0`` id's ``eval`` split is addressable up to
:data:`MAX_EVAL_ITEMS` items (a larger ``index`` or ``n`` is a ``ValueError`` naming it);
a ``-v1`` id's, up to :data:`MAX_INDEX`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import random
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from meeting_gym.core.registry import DEFAULT_ENV, make_task
from meeting_gym.core.task import Task

SPLITS = ("train", "eval", "curated")
DEFAULT_SEED = 42
DEFAULT_SIZES = {"train": 500, "eval": 100}
HELD_OUT_BUCKETS = 16
"""Items whose id hashes below this (of 256) are held out for ``eval``: 1 in 16."""
MAX_ATTEMPTS = 4096
"""Redraws allowed for one item before the configuration is declared too narrow."""
MAX_EVAL_ITEMS = 1000
"""How many ``eval`` items are addressable (indices 0 to 999). Item ``k`` depends on
every item before it (repeats are skipped), so reaching it walks the stream: the bound
keeps that walk short whatever a client asks (the figures: docs/guides/serving.md)."""
MAX_INDEX = 2**63 - 1
"""The largest ``eval`` index of a ``-v1`` id (any item costs the same, so the bound is
only the range of a 64-bit integer, like a seed's)."""
SPLIT_OPTIONS = frozenset({"split", "index", "split_seed", "difficulty"})
"""The reset options every env understands (besides each task's own)."""

TaskLike = str | Task[Any, Any]


def item_rng(seed: int, index: int, attempt: int = 0) -> random.Random:
    """The generator of one draw: any item regenerates alone, in any process."""
    suffix = f":{attempt}" if attempt else ""
    return random.Random(f"meeting_gym:{seed}:{index}{suffix}")


def held_out(key: str) -> bool:
    """True for the share of item ids reserved for the ``eval`` split (a fixed hash)."""
    digest = hashlib.sha256(b"meeting_gym:held-out:" + key.encode("utf-8", "surrogatepass"))
    return digest.digest()[0] < HELD_OUT_BUCKETS


def draw(
    task: Task[Any, Any],
    seed: int,
    index: int,
    difficulty: str | None = None,
    *,
    held: bool = False,
) -> tuple[Any, Any]:
    """Item ``index`` of seed ``seed`` on one side of the partition, with its truth.

    ``held=False`` is the ``train`` side (never held out, never curated); ``held=True``
    the ``eval`` side. ``difficulty`` None uses the task's own (None: its default mix).
    """
    level = task.difficulty if difficulty is None else task.check_difficulty(difficulty)
    curated = task.curated_keys
    # a task whose generator solves anyway overrides generate_solved; for the others the
    # truth is derived once, for the item kept (an eval item takes about 16 attempts)
    solves = type(task).generate_solved is not Task.generate_solved
    for attempt in range(MAX_ATTEMPTS):
        rng = item_rng(seed, index, attempt)
        item, truth = (
            task.generate_solved(rng, level) if solves else (task.generate(rng, level), None)
        )
        key = task.key(item)
        if held_out(key) == held and key not in curated:
            return item, task.truth(item) if truth is None else truth
    side = "held-out" if held else "training"
    raise ValueError(
        f"no {side} item found in {MAX_ATTEMPTS} draws (seed {seed}, index {index}): "
        "this configuration's item space is too small"
    )


def _independent(
    task: Task[Any, Any],
    seed: int,
    index: int,
    difficulty: str | None,
    prefix: list[Any] | None = None,
) -> tuple[Any, Any]:
    """Item ``index`` of an ``independent`` (``-v1``) ``eval`` split and its truth: a
    curated item, or held-out draw ``index - len(curated)`` of ``seed + 1``. ``prefix``:
    the split's curated items, when the caller has them already."""
    if index > MAX_INDEX:
        raise ValueError(
            f"index of {index.bit_length()} bits is past the eval split's bound: "
            "MAX_INDEX is 2**63 - 1"
        )
    if prefix is None:
        prefix = _prefix(task, difficulty)
    if index < len(prefix):
        return prefix[index], None
    return draw(task, seed + 1, index - len(prefix), difficulty, held=True)


def _prefix(task: Task[Any, Any], difficulty: str | None) -> list[Any]:
    """The curated items an ``eval`` split of ``difficulty`` begins with."""
    return [item for item in task.eval_prefix() if task.accepts(item, difficulty)]


class _EvalStream:
    """The ``eval`` split of one configuration, generated as far as it has been asked.

    Items are only ever appended, so a reader of an item already generated takes no
    lock and never waits. One thread at a time walks the stream further (the walk is
    shared work: items depend on the ones before them, repeats being skipped); it
    draws without holding the lock and publishes each item as it goes, so a reader
    waiting for item ``k`` goes on as soon as ``k`` exists, not when the walk ends.
    """

    def __init__(self, task: Task[Any, Any], seed: int, difficulty: str | None) -> None:
        self.task, self.seed, self.difficulty = task, seed, difficulty
        self.items = _prefix(task, difficulty)
        self.keys = {task.key(item) for item in self.items}
        self.next_index = 0
        self.ready = threading.Condition()
        self.walking = False

    def item(self, index: int) -> Any:
        """Item ``index`` (generated if it is not yet)."""
        if index < len(self.items):  # no lock: a generated prefix never changes
            return self.items[index]
        with self.ready:
            while self.walking and index >= len(self.items):
                self.ready.wait()
            if index < len(self.items):
                return self.items[index]
            self.walking = True
        try:
            self._walk(index + 1)
        finally:
            with self.ready:
                self.walking = False
                self.ready.notify_all()
        return self.items[index]

    def take(self, n: int) -> list[Any]:
        """The first ``n`` items."""
        if n:
            self.item(n - 1)
        return self.items[:n]

    def _walk(self, n: int) -> None:
        """Generate until ``n`` items exist (only the thread that set ``walking`` runs this)."""
        misses = 0
        abandon = getattr(_ABANDON, "event", None)
        while len(self.items) < n:
            if abandon is not None and abandon.is_set():
                raise WalkAbandoned(
                    f"eval walk abandoned at item {len(self.items)} of {n}: the client left"
                )
            item, _ = draw(self.task, self.seed + 1, self.next_index, self.difficulty, held=True)
            self.next_index += 1
            key = self.task.key(item)
            if key in self.keys:
                misses += 1
                if misses > 50 * n + 1000:
                    raise ValueError(
                        f"could only find {len(self.items)} distinct eval items (wanted {n}): "
                        "this configuration's item space is too small"
                    )
                continue
            self.keys.add(key)
            with self.ready:
                self.items.append(item)
                self.ready.notify_all()


class WalkAbandoned(RuntimeError):
    """The request that was walking the ``eval`` stream was abandoned (its client left)."""


_ABANDON = threading.local()


@contextlib.contextmanager
def abandon_when(event: threading.Event) -> Iterator[None]:
    """Within the block, an ``eval`` walk that this thread runs stops once ``event`` is set,
    raising :class:`WalkAbandoned`: a server sets it when the client that asked for the
    item leaves, so the walk (seconds to half a minute, far in a new split seed) does
    not go on for no one. The items already walked stay; the next reader walks on from
    them, so which items a seed gives does not change."""
    previous = getattr(_ABANDON, "event", None)
    _ABANDON.event = event
    try:
        yield
    finally:
        _ABANDON.event = previous


_STREAMS: OrderedDict[tuple[Any, ...], _EvalStream] = OrderedDict()
_STREAMS_LOCK = threading.Lock()
_MAX_STREAMS = 32


MAX_RETAINED_EVAL_ITEMS = 8 * MAX_EVAL_ITEMS
"""The most eval items kept generated across all configurations (8,000): past it, the
least recently used streams are dropped (regenerated if asked again), so a client that
walks many split seeds cannot grow the process without bound."""


def _eval_stream(task: Task[Any, Any], seed: int, difficulty: str | None) -> _EvalStream:
    key = (task.cache_key(), seed, difficulty)
    with _STREAMS_LOCK:
        stream = _STREAMS.get(key)
        if stream is None:
            stream = _STREAMS[key] = _EvalStream(task, seed, difficulty)
        _STREAMS.move_to_end(key)
        _trim()
        return stream


def _trim() -> None:
    """Drop the least recently used streams past the count and item bounds (lock held);
    the most recent one stays (a walker holds its stream whether it is listed or not)."""
    while len(_STREAMS) > 1 and (
        len(_STREAMS) > _MAX_STREAMS
        or sum(len(stream.items) for stream in _STREAMS.values()) > MAX_RETAINED_EVAL_ITEMS
    ):
        _STREAMS.popitem(last=False)


def _walked(stream: _EvalStream, index: int) -> Any:
    """Item ``index`` of ``stream``, then the retained streams trimmed to their bounds."""
    item = stream.item(index)
    with _STREAMS_LOCK:
        _trim()
    return item


def split_names(task: Task[Any, Any] | type[Task[Any, Any]]) -> tuple[str, ...]:
    """The splits of ``task``: ``train``, ``eval``, ``curated`` and its fixed splits."""
    made = task() if isinstance(task, type) else task  # a task's default config is cheap
    return SPLITS + tuple(name for name in made.fixed_splits() if name != "curated")


def _check_split(name: Any, task: Task[Any, Any]) -> str:
    names = split_names(task)
    if name not in names:
        raise ValueError(f"unknown split {name!r}; choose one of {', '.join(names)}")
    return name


def _fixed(task: Task[Any, Any], name: str, difficulty: str | None) -> list[Any]:
    """The items of ``curated`` or of a fixed split that ``difficulty`` accepts."""
    items = task.fixed_splits()[name]
    return [item for item in items if task.accepts(item, difficulty)]


def _check_count(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{what} must be a non-negative integer, got {value!r}")
    return value


def _check_eval_count(count: int, what: str, value: int) -> None:
    if count > MAX_EVAL_ITEMS:
        raise ValueError(
            f"{what} {value} is past the eval split's bound: MAX_EVAL_ITEMS is "
            f"{MAX_EVAL_ITEMS} (indices 0 to {MAX_EVAL_ITEMS - 1})"
        )


def load_split(
    name: str,
    n: int | None = None,
    seed: int = DEFAULT_SEED,
    difficulty: str | None = None,
    *,
    env: TaskLike = DEFAULT_ENV,
    note: Callable[[str], None] | None = None,
    **task_options: Any,
) -> list[Any]:
    """The first ``n`` items of a split (default: 500 train, 100 eval, every curated item).

    ``env`` is an env id (``task_options`` configure its task, as ``gym.make`` kwargs
    would) or a task. ``difficulty`` (default: the task's) pins generation and filters
    the curated items. What a caller should know of the items it gets (an eval ``n``
    smaller than the curated cases keeps only curated ones) goes to ``note``, one line,
    or as a ``UserWarning`` without it (a command line prints a line, a library warns).
    """
    task = make_task(env, **task_options)
    _check_split(name, task)
    difficulty = task.check_difficulty(difficulty) or task.difficulty
    if n is not None:
        _check_count(n, "n")
    if name not in DEFAULT_SIZES:  # curated, or one of the task's fixed splits
        items = _fixed(task, name, difficulty)
        return items if n is None else items[:n]
    size = DEFAULT_SIZES[name] if n is None else n
    if name == "train":
        return [draw(task, seed, i, difficulty)[0] for i in range(size)]
    curated = sum(task.accepts(item, difficulty) for item in task.eval_prefix())
    if size < curated:
        # calendar-math dropped curated cases from a short eval split without a word
        said = f"eval n={size} keeps only the first {size} of its {curated} curated items"
        if note is not None:
            note(said)
        else:
            warnings.warn(said, UserWarning, stacklevel=2)
    if task.eval_draws == "independent":
        prefix = _prefix(task, difficulty)  # once, not once an item
        return [_independent(task, seed, i, difficulty, prefix)[0] for i in range(size)]
    _check_eval_count(size, "n", size)
    stream = _eval_stream(task, seed, difficulty)
    if size:
        _walked(stream, size - 1)
    return stream.take(size)


def split_item(
    task: Task[Any, Any],
    name: str,
    index: int,
    seed: int = DEFAULT_SEED,
    difficulty: str | None = None,
) -> tuple[Any, Any]:
    """``load_split(name, seed=seed, difficulty=difficulty, env=task)[index]`` and its truth.

    Truth is None when it is not known yet (the episode computes it).
    """
    _check_split(name, task)
    _check_count(index, "index")
    difficulty = task.check_difficulty(difficulty) or task.difficulty
    if name == "train":
        return draw(task, seed, index, difficulty)
    if name != "eval":
        items = _fixed(task, name, difficulty)
    elif task.eval_draws == "independent":
        return _independent(task, seed, index, difficulty)
    else:
        _check_eval_count(index + 1, "index", index)
        return _walked(_eval_stream(task, seed, difficulty), index), None
    if index >= len(items):
        raise ValueError(f"index {index} is out of range: split {name!r} has {len(items)} items")
    return items[index], None


def options_item(task: Task[Any, Any], options: Mapping[str, Any]) -> tuple[Any, Any] | None:
    """The item the split options of ``reset(options=...)`` name, or None if they name none.

    ``{"split": name, "index": i}`` (plus ``split_seed`` and ``difficulty``) addresses
    one split item; ``difficulty`` alone changes what the next draw comes from (None).
    """
    if "split" not in options and "index" not in options and "split_seed" not in options:
        return None
    if "split" not in options or "index" not in options:
        raise ValueError('reset options "split" and "index" go together')
    seed = options.get("split_seed", DEFAULT_SEED)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"split_seed must be an integer, got {seed!r}")
    return split_item(task, options["split"], options["index"], seed, options.get("difficulty"))


# ----------------------------------------------------------------------------- export


def to_row(
    item: Any,
    env: TaskLike = DEFAULT_ENV,
    *,
    truth: Any = None,
    options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One JSONL row for LLM trainers.

    ``question`` and ``answer`` (the gold), ``info`` (what grading needs: the task's
    inputs), ``id``, the ``env`` id and its ``env_kwargs``, ``system_prompt``, and, for
    a split item, the reset ``options`` that replay it.
    """
    task = make_task(env)
    if truth is None:
        truth = task.truth(item)
    config = {k: v for k, v in task.config().items() if k != "difficulty" and v is not None}
    row: dict[str, Any] = {
        "id": task.item_id(item),
        "env": task.env_id,
        "question": task.question(item),
        "answer": task.gold(item, truth),
        "info": task.row_info(item),
    }
    if config:
        row["env_kwargs"] = config
    if options is not None:
        row["options"] = dict(options)
    return row


def export_jsonl(items: Iterable[Any], path: str | Path, env: TaskLike = DEFAULT_ENV) -> int:
    """Write one :func:`to_row` per item to ``path``; returns the number of rows."""
    task = make_task(env)
    count = 0
    with open(path, "w", encoding="utf-8") as handle:
        for item in items:
            handle.write(json.dumps(to_row(item, task), ensure_ascii=False) + "\n")
            count += 1
    return count


def split_rows(
    name: str,
    items: Iterable[Any],
    task: Task[Any, Any],
    seed: int = DEFAULT_SEED,
    difficulty: str | None = None,
) -> Iterator[dict[str, Any]]:
    """:func:`to_row` of each item of split ``name``, with the ``options`` that replay it."""
    level = difficulty or task.difficulty
    for index, item in enumerate(items):
        options: dict[str, Any] = {"split": name, "index": index, "split_seed": seed}
        if level is not None:
            options["difficulty"] = level
        yield to_row(item, task, options=options)


def export_split(
    name: str,
    path: str | Path,
    n: int | None = None,
    seed: int = DEFAULT_SEED,
    difficulty: str | None = None,
    *,
    env: TaskLike = DEFAULT_ENV,
    **task_options: Any,
) -> int:
    """Write a split as JSONL; each row's ``options`` replay it with ``env.reset``."""
    task = make_task(env, **task_options)
    items = load_split(name, n, seed, difficulty, env=task)
    with open(path, "w", encoding="utf-8") as handle:
        for row in split_rows(name, items, task, seed, difficulty):
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return len(items)
