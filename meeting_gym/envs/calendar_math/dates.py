"""Calendar facts for CalendarMath: the gold answer, the question text and the system prompt.

Every date is proleptic Gregorian, exactly as Python's ``datetime.date``: the Gregorian leap
rule is applied to every year from 1 to 9999, so there is no Julian calendar before 1582 and
no gap of ten days in October 1582 (1582-10-05 .. 1582-10-14 exist and follow one another).

Dates travel as strings in the one canonical form ``YYYY-MM-DD`` (four-digit zero-padded
year, ASCII digits only); ``parse_date`` accepts nothing else, so a question, its gold and
its grading all read the same text the same way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date
from typing import Any

__all__ = [
    "MAX_ORDINAL",
    "SYSTEM_PROMPT",
    "TASK_TYPES",
    "WEEKDAYS",
    "add_days",
    "days_between",
    "format_date",
    "gold",
    "parse_date",
    "question",
    "weekday",
]

TASK_TYPES = ("add_days", "days_between", "weekday")

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

MAX_ORDINAL = date.max.toordinal()
"""Ordinal of 9999-12-31; 0001-01-01 is ordinal 1 (``date.toordinal``)."""

# [0-9] rather than \d: \d also matches fullwidth and other Unicode digits, which
# int() would silently accept. fullmatch rather than $: $ also matches before a final "\n".
_DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")

SYSTEM_PROMPT = """\
You answer calendar arithmetic questions. Dates are proleptic Gregorian: the Gregorian \
leap-year rule applies to every year, with no Julian calendar and no dropped days in 1582.

You may reason first. Then give your final answer alone inside one <answer>...</answer> \
block. Only the first <answer> block in your reply is graded; anything outside it is ignored.

Write the answer in its canonical form, with ASCII digits only:
- A date: YYYY-MM-DD, zero-padded (2024-03-01, 0800-01-09).
- A day count: the number of midnights from START to END (2024-01-01 to 2024-01-02 is 1; \
the same day is 0; negative when END is earlier). A plain integer: a leading minus sign \
only for a negative count, no plus sign, no leading zeros, no separators (365, -14, 0).
- A weekday: the full English name, spelled exactly as Monday, Tuesday, Wednesday, \
Thursday, Friday, Saturday or Sunday. Case matters: "thursday" is wrong.
Put nothing else inside the tags: no units, punctuation, words or second answer.

Layout:
<answer>
YOUR_ANSWER
</answer>
"""
"""Our wording of the rules stated by the system prompt of ``devtechedge/calendar-math`` (the
env this one succeeds), tightened to our rubric (:mod:`meeting_gym.envs.calendar_math.answers`):
first block only, case-sensitive weekday names, canonical ASCII-digit dates and integers."""


def parse_date(text: str) -> date:
    """Parse a canonical ``YYYY-MM-DD`` date (ASCII digits, years 0001..9999).

    Raises ValueError naming the problem for any other text, including ``2024-2-29``,
    ``20240229``, fullwidth digits, surrounding whitespace and impossible dates.
    """
    if not isinstance(text, str):
        raise ValueError(f"a date must be a YYYY-MM-DD string, got {type(text).__name__}")
    if _DATE_RE.fullmatch(text) is None:
        raise ValueError(f"not a YYYY-MM-DD date with ASCII digits: {text[:40]!r}")
    year, month, day = int(text[:4]), int(text[5:7]), int(text[8:])
    try:
        return date(year, month, day)
    except ValueError as err:  # year 0000, month 13, Feb 30, ...
        raise ValueError(f"not a real date in years 0001..9999: {text!r} ({err})") from None


def format_date(value: date) -> str:
    """The canonical text of a date: ``YYYY-MM-DD`` with a zero-padded four-digit year."""
    return value.isoformat()


def _offset(value: Any) -> int:
    # bool is an int subclass; True days is a bug, not an offset
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"n must be an integer, got {type(value).__name__}")
    return value


def add_days(start: str, n: int) -> str:
    """``start + n`` days as a canonical date.

    Raises ValueError when the result would leave years 0001..9999 (``date``'s range).
    """
    first = parse_date(start)
    n = _offset(n)
    # integer ordinals, not timedelta: timedelta overflows on huge n with OverflowError
    ordinal = first.toordinal() + n
    if not 1 <= ordinal <= MAX_ORDINAL:
        # str() of an int over 4300 digits raises, so huge offsets are described, not printed
        size = _days(abs(n)) if abs(n) <= MAX_ORDINAL else f"more than {MAX_ORDINAL} days"
        raise ValueError(
            f"{start} {'+' if n >= 0 else '-'} {size} leaves the supported years "
            "0001..9999 (0001-01-01 to 9999-12-31)"
        )
    return format_date(date.fromordinal(ordinal))


def days_between(start: str, end: str) -> str:
    """``end - start`` in days as a canonical integer (the number of midnights passed)."""
    return str(parse_date(end).toordinal() - parse_date(start).toordinal())


def weekday(start: str) -> str:
    """The English name of ``start``'s weekday, ``Monday`` .. ``Sunday``."""
    return WEEKDAYS[parse_date(start).weekday()]


def _field(inputs: Mapping[str, Any], key: str, task_type: str) -> Any:
    if not isinstance(inputs, Mapping):
        raise ValueError(f"inputs must be a mapping, got {type(inputs).__name__}")
    if key not in inputs:
        raise ValueError(f"{task_type} needs input {key!r}")
    return inputs[key]


def _check_task(task_type: str) -> None:
    if task_type not in TASK_TYPES:
        raise ValueError(f"unknown task_type {task_type!r}; expected one of {TASK_TYPES}")


def gold(task_type: str, inputs: Mapping[str, Any]) -> str:
    """The one correct answer text for a question, computed with ``datetime.date``.

    ``add_days`` -> ``YYYY-MM-DD`` of ``start + n``; ``days_between`` -> decimal
    ``end - start`` (``-`` only when negative, no leading zeros); ``weekday`` -> English name.
    Raises ValueError for an unknown task type, a missing or malformed input, or a result
    outside years 0001..9999.
    """
    _check_task(task_type)
    start = _field(inputs, "start", task_type)
    if task_type == "add_days":
        return add_days(start, _field(inputs, "n", task_type))
    if task_type == "days_between":
        return days_between(start, _field(inputs, "end", task_type))
    return weekday(start)


def _days(count: int) -> str:
    return f"{count} day{'' if count == 1 else 's'}"


def question(task_type: str, inputs: Mapping[str, Any]) -> str:
    """The user-turn text, word for word calendar-math's (RULES section 1).

    Validates the inputs as :func:`gold` does, so no question exists without its gold.
    """
    gold(task_type, inputs)
    return question_text(task_type, inputs)


def question_text(task_type: str, inputs: Mapping[str, Any]) -> str:
    """:func:`question` for inputs already validated (no second check on the hot path)."""
    start = inputs["start"]
    if task_type == "add_days":
        n = inputs["n"]
        direction = "after" if n >= 0 else "before"
        return (
            f"What date is {_days(abs(n))} {direction} {start}? "
            "Reply with a single YYYY-MM-DD date."
        )
    if task_type == "days_between":
        return (
            f"How many days after {start} is {inputs['end']}? "
            "Count the number of midnights that pass "
            "(so 2024-01-01 to 2024-01-02 is 1; the same day is 0). "
            "Reply with a single integer. The integer may be negative if the "
            "end date is earlier than the start date."
        )
    return (
        f"What day of the week is {start}? "
        "Reply with the full English weekday name "
        "(Monday, Tuesday, Wednesday, Thursday, Friday, Saturday, or Sunday)."
    )
