"""The CalendarMath rubric's pure part: find the answer block, then score it.

``extract(text)`` returns the content of the FIRST ``<answer>...</answer>`` block, or None:

* tags match case-insensitively in the sense of Python's ``re.IGNORECASE`` (``<ANSWER>``,
  ``<Answer>...</aNsWeR>``, and a long s U+017F in place of the ``s``);
* nothing else may sit inside the angle brackets: ``<answer >``, ``< answer>``,
  ``</ answer>`` and ``</answer\\n>`` are not tags;
* the block opens at the first opening tag and closes at the first closing tag after it, so
  ``<answer><answer>x</answer></answer>`` gives ``<answer>x``; an opening tag with no
  closing tag after it means no block at all (a later opening tag cannot have one either);
* the content is stripped with ``str.strip()`` (Unicode whitespace, NBSP included); an empty
  block gives ``""``, which is still a block.

This is the rule of ``devtechedge/calendar-math``, the env this one succeeds (RULES section
3.1), found with two literal searches instead of its lazy ``<answer>\\s*(.*?)\\s*</answer>``
regex, so it runs in linear time on any text.

``score(content, gold, task_type)`` returns ``(exact_match, format, partial_credit)``:

* format = 1 when a block exists (even empty), else 0; text outside the block is ignored;
* exact_match = 1 when ``normalize(content) == gold``, character for character. Weekday
  names are case-sensitive, as calendar-math's: ``thursday`` is not ``Thursday``;
* partial_credit, never paid with an exact answer, only for a *canonical* answer of the
  task's own shape: 0.5 for an add_days date exactly one day off (across month and year
  ends), 0.5 for a days_between count off by one, 0.3 for a weekday adjacent to the gold
  (Sunday and Monday are adjacent); 0 otherwise.

Canonical: ASCII digits only; a date exactly ``YYYY-MM-DD``, zero-padded, real, years
0001..9999; an integer with an optional leading ``-``, no ``+``, no leading zeros, no ``_``.
Possible rewards (:func:`reward`): 0, 0.2, 0.26, 0.3, 1.2.

Deliberate differences from calendar-math (RULES section 8), each named in a test:

* 8.1 one block for all three terms (its hub rubric took exact from one block and partial
  from another, which paid 1.3);
* 8.3 partial credit only for canonical answers (it paid ``+3``, ``03``, ``1_0``, fullwidth
  and Arabic-Indic digits, which its exact term rejects);
* 8.4 the task type is a required argument, so the count rule never depends on whether an
  ``info`` dict was passed.
"""

from __future__ import annotations

import re
from datetime import date

from meeting_gym.envs.calendar_math.dates import TASK_TYPES, WEEKDAYS

__all__ = [
    "PARTIAL",
    "WEIGHTS",
    "extract",
    "format_answer",
    "normalize",
    "reward",
    "score",
]

WEIGHTS = (1.0, 0.2, 0.2)
"""Weights of (exact_match, format, partial_credit) in the scalar reward."""

PARTIAL = {"add_days": 0.5, "days_between": 0.5, "weekday": 0.3}
"""Partial credit for an answer one step from the gold, per task type."""

# Literal patterns: each search is linear, whatever the text. re.IGNORECASE (not
# str.lower()) so that exactly re's case folding applies, long s included.
_OPEN = re.compile("<answer>", re.IGNORECASE)
_CLOSE = re.compile("</answer>", re.IGNORECASE)

# [0-9], not \d: \d matches every Unicode decimal digit.
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_INT = re.compile(r"0|-?[1-9][0-9]*")
# A count more than 20 digits long cannot be one off a gold (|gold| < 3.7 million), and
# int() of a very long digit string raises ValueError (CPython's int/str limit).
_MAX_INT_LEN = 20


def format_answer(answer: str) -> str:
    """``<answer>answer</answer>``: the block a policy replies with."""
    return f"<answer>{answer}</answer>"


def extract(text: str) -> str | None:
    """The stripped content of the first answer block in ``text``, or None if there is none."""
    opening = _OPEN.search(text)
    if opening is None:
        return None
    closing = _CLOSE.search(text, opening.end())
    if closing is None:
        return None
    return text[opening.end() : closing.start()].strip()


def normalize(text: str) -> str:
    """Strip and collapse every internal whitespace run to one space (RULES 3.2)."""
    return " ".join(text.split())


def _date_ordinal(text: str) -> int | None:
    """The ordinal of a canonical date, or None."""
    if _DATE.fullmatch(text) is None:
        return None
    try:
        return date(int(text[:4]), int(text[5:7]), int(text[8:])).toordinal()
    except ValueError:  # 1900-02-29, 2024-13-01, 0000-01-01: not a date
        return None


def _integer(text: str) -> int | None:
    """The value of a canonical integer, or None."""
    if len(text) > _MAX_INT_LEN or _INT.fullmatch(text) is None:
        return None
    return int(text)


def _check(gold: str, task_type: str) -> None:
    if task_type not in TASK_TYPES:
        raise ValueError(f"unknown task_type {task_type!r}; expected one of {TASK_TYPES}")
    if not isinstance(gold, str):
        canonical = False
    elif task_type == "add_days":
        canonical = _date_ordinal(gold) is not None
    elif task_type == "days_between":
        canonical = _integer(gold) is not None
    else:
        canonical = gold in WEEKDAYS
    if not canonical:
        # a gold the checker cannot read would silently pay nothing: refuse it instead
        raise ValueError(f"gold {gold!r} is not a canonical {task_type} answer")


def _partial(answer: str, gold: str, task_type: str) -> float:
    if task_type == "add_days":
        guess, truth = _date_ordinal(answer), _date_ordinal(gold)
        near = guess is not None and truth is not None and abs(guess - truth) == 1
    elif task_type == "days_between":
        guess, truth = _integer(answer), _integer(gold)
        near = guess is not None and truth is not None and abs(guess - truth) == 1
    else:
        near = (
            answer in WEEKDAYS
            and (WEEKDAYS.index(answer) - WEEKDAYS.index(gold)) % 7 in (1, 6)  # week wraps
        )
    return PARTIAL[task_type] if near else 0.0


def score(content: str | None, gold: str, task_type: str) -> tuple[float, float, float]:
    """``(exact_match, format, partial_credit)`` of an extracted answer (see the module doc).

    ``content`` is what :func:`extract` returned (None: no block). ``gold`` must be the
    canonical answer for ``task_type``; ValueError otherwise, or for an unknown task type.
    """
    _check(gold, task_type)
    if content is None:
        return (0.0, 0.0, 0.0)
    answer = normalize(content)
    if answer == gold:
        return (1.0, 1.0, 0.0)
    return (0.0, 1.0, _partial(answer, gold, task_type))


def reward(terms: tuple[float, float, float]) -> float:
    """``1.0 * exact_match + 0.2 * format + 0.2 * partial_credit`` (floating point)."""
    return sum(weight * term for weight, term in zip(WEIGHTS, terms, strict=True))
