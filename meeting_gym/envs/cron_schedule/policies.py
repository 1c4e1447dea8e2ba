"""Reference policies for CronSchedule, acting through the text interface.

Each reads the task from the question text (:func:`read_question`) and the reset
``info`` (``kind``, ``num_times``, ``difficulty``, ``tools``), never from the answer.

* ``gold``: write tasks: reads the English description back with
  :func:`~.english.read` and writes that reading as an expression; read tasks: parses the
  expression and lists its next run times. With tools (CronSchedule-Tools-v0) it first
  checks its expression with one ``next_runs`` call, then answers. Scores 1.0 on every task.
* ``noop``: an empty answer block of the right tag: ``formatted`` 1, ``correct`` 0.
* ``naive``: three plausible mistakes. It believes restricted day fields always combine
  with AND (so it writes "odd-dated Mondays" as ``1-31/2 ... 1``, which is OR, and reads
  ``13 * FRI`` as Friday the 13th); it numbers weekdays from 1 = Sunday to 7 = Saturday
  (in the numbers it writes and reads; names it gets right); and it counts the start
  minute itself as a run time when the expression fires then.
* ``random``: write: a random expression of the task's level; read: random times after
  the start, earliest first. Its own seeded ``random.Random``.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import timedelta
from typing import Any

from meeting_gym.core.policy import Policy
from meeting_gym.core.policy import RandomPolicy as BaseRandomPolicy
from meeting_gym.core.protocol import format_tool_call
from meeting_gym.envs.cron_schedule.answers import TAGS, format_block
from meeting_gym.envs.cron_schedule.english import expression_for, read
from meeting_gym.envs.cron_schedule.expression import DOW_NAMES, Cron, bits, element_mask, parse
from meeting_gym.envs.cron_schedule.generator import schedule
from meeting_gym.envs.cron_schedule.schedule import (
    fires,
    format_time,
    next_times,
    parse_time,
)

__all__ = [
    "GoldPolicy",
    "NaivePolicy",
    "NoopPolicy",
    "Question",
    "RandomPolicy",
    "gold_answer",
    "naive_answer",
    "read_question",
]

_SCHEDULE = re.compile(r"^Schedule: (.+)$", re.MULTILINE)
_EXPRESSION = re.compile(r"^Cron expression: (.+)$", re.MULTILINE)
_START = re.compile(r"^Start: (.+)$", re.MULTILINE)
_COUNT = re.compile(r"List the next (?:(\d+) times|time) ")
_CHECK_AFTER = "2024-01-01 00:00"


class Question:
    """What a question asks: ``kind``, and the description or expression, start and count."""

    def __init__(self, text: str) -> None:
        schedule_line = _SCHEDULE.search(text)
        if schedule_line is not None:
            self.kind, self.description = "write", schedule_line.group(1)
            self.expression, self.start, self.count = "", "", 0
            return
        expression, start, count = (
            _EXPRESSION.search(text),
            _START.search(text),
            _COUNT.search(text),
        )
        if expression is None or start is None or count is None:
            raise ValueError("not a CronSchedule question")
        self.kind, self.description = "read", ""
        self.expression, self.start = expression.group(1), start.group(1)
        self.count = int(count.group(1) or 1)


def read_question(text: str) -> Question:
    """The task in a question text (``ValueError`` if it is not a CronSchedule question)."""
    return Question(text)


def gold_answer(question: Question) -> str:
    """The content of the gold answer block (an expression, or run times one per line)."""
    if question.kind == "write":
        return expression_for(read(question.description))
    times = next_times(parse(question.expression), parse_time(question.start), question.count)
    return "\n".join(times)


def _naive_cron(text: str) -> Cron:
    """The expression as the naive policy understands it: AND always, weekdays 1 = Sunday."""
    cron = parse(text)
    if text.startswith("@"):
        return replace(cron, dom_star=True)
    field = text.split()[4]
    for name, number in DOW_NAMES.items():  # names are right: MON is 2 in its numbering
        field = re.sub(name, str(number + 1), field, flags=re.IGNORECASE)
    raw = 0
    for element in field.split(","):
        raw |= element_mask(element, 4)
    dows = 0
    for value in bits(raw):
        dows |= 1 << ((value - 1) % 7)
    return replace(cron, dows=dows, dom_star=True)


def naive_answer(question: Question) -> str:
    """The naive policy's answer block content for one question (see the module doc)."""
    if question.kind == "write":
        reading = read(question.description)
        if reading.days == "and":  # believes plain lists combine with AND
            reading = replace(reading, days="or")
        return expression_for(reading, weekday_offset=1)
    cron = _naive_cron(question.expression)
    start = parse_time(question.start)
    times = [format_time(start)] if fires(cron, start) else []
    times += next_times(cron, start, question.count)
    return "\n".join(times[: question.count])


class GoldPolicy(Policy):
    """The right answer, read from the question; with tools, one next_runs check first."""

    name = "gold"

    def reset(
        self, observation: str, info: dict[str, Any], seed: int | None = None, *, env: Any = None
    ) -> None:
        """Work out the answer; plan a ``next_runs`` call first if the env has tools."""
        question = read_question(observation)
        content = gold_answer(question)
        self.actions = [format_block(TAGS[question.kind], content)]
        if info.get("tools"):
            arguments = {"expression": content, "after": _CHECK_AFTER, "count": 3}
            self.actions.insert(0, format_tool_call("next_runs", arguments))

    def act(self, observation: str, info: dict[str, Any] | None = None) -> str:
        """The planned actions in turn, then the answer again."""
        return self.actions.pop(0) if len(self.actions) > 1 else self.actions[0]


class NoopPolicy(Policy):
    """An empty answer block: well-formed, never correct."""

    name = "noop"

    def reset(
        self, observation: str, info: dict[str, Any], seed: int | None = None, *, env: Any = None
    ) -> None:
        """Note the answer tag of the task's kind."""
        self.tag = TAGS[info["kind"]]

    def act(self, observation: str, info: dict[str, Any] | None = None) -> str:
        """``<cron></cron>`` or ``<times></times>``."""
        return format_block(self.tag, "")


class NaivePolicy(Policy):
    """Plausible mistakes: AND for restricted day fields, 1-based weekdays, the start counted."""

    name = "naive"

    def reset(
        self, observation: str, info: dict[str, Any], seed: int | None = None, *, env: Any = None
    ) -> None:
        """Work out the naive answer from the question."""
        question = read_question(observation)
        self.answer = format_block(TAGS[question.kind], naive_answer(question))

    def act(self, observation: str, info: dict[str, Any] | None = None) -> str:
        """The naive answer block."""
        return self.answer


class RandomPolicy(BaseRandomPolicy):
    """A random answer of the right shape, reproducible from ``seed``.

    write: a random expression of the task's level (level 2 if unknown); read: the task's
    count of times, each 1 minute to 3 days after the one before, from the start. Each
    ``act`` draws anew; ``reset(seed=...)`` reseeds.
    """

    def reset(
        self, observation: str, info: dict[str, Any], seed: int | None = None, *, env: Any = None
    ) -> None:
        """Remember the question; a ``seed`` restarts the policy's own generator."""
        self.reseed(seed)
        self.question = read_question(observation)
        self.level = int(info.get("difficulty") or 2)

    def act(self, observation: str, info: dict[str, Any] | None = None) -> str:
        """A fresh random answer in the task's answer block."""
        question = self.question
        if question.kind == "write":
            return format_block("cron", schedule(self.rng, self.level))
        when, lines = parse_time(question.start), []
        for _ in range(question.count):
            when += timedelta(minutes=self.rng.randint(1, 3 * 1440))
            lines.append(format_time(when))
        return format_block("times", "\n".join(lines))
