"""The terminal rubric of MeetingSlot, identical for every interface (no gymnasium here).

``reward = 1.0 * exact_match + 0.2 * format + 0.2 * partial_credit``

* ``format``: 1 when an ``<answer>...</answer>`` block is present;
* ``exact_match``: 1 when the first block's content, normalised, equals gold;
* ``partial_credit``: 0.5 when that content is a valid start that is not gold.

Only the spellings listed in :func:`parse_answer` are read as instants;
anything else (other offsets, fractional or non-zero seconds, extra words) is
neither exact nor valid.
"""

from __future__ import annotations

import re
from datetime import date
from functools import cache

from meeting_gym.core.protocol import extract_answer
from meeting_gym.core.rubric import Grade, Rubric, Term
from meeting_gym.envs.meeting_slot.domain.solver import Solution
from meeting_gym.envs.meeting_slot.domain.timeutil import DAY, day_number

PARTIAL = 0.5
NONE = "NONE"

# re.ASCII: without it \d also matches full-width and other scripts' digits, and
# the gold instant written in full-width digits graded as an exact match.
_INSTANT = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(00))?(?:Z|\+00:00| UTC)?",
    re.IGNORECASE | re.ASCII,
)


RUBRIC = Rubric(
    Term("exact_match", 1.0, "exact"), Term("format", 0.2), Term("partial_credit", 0.2, "partial")
)
ZERO = RUBRIC.zero


def parse_answer(text: str) -> int | str | None:
    """An answer's content -> epoch seconds, ``"NONE"``, or None if not a UTC instant.

    Accepted: ``T`` or one space between date and time; seconds optional and
    ``00`` if present; suffix ``Z``, ``+00:00``, `` UTC`` or none; any letter
    case; surrounding whitespace (runs of inner whitespace count as one space).
    """
    cleaned = " ".join(text.split())
    if cleaned.upper() == NONE:
        return NONE
    match = _INSTANT.fullmatch(cleaned)
    if match is None:
        return None
    year, month, day, hour, minute = map(int, match.group(1, 2, 3, 4, 5))
    if hour > 23 or minute > 59:
        return None
    try:
        number = day_number(date(year, month, day))
    except ValueError:
        return None
    return number * DAY + hour * 3600 + minute * 60


def score(answer: int | str | None, solution: Solution, *, has_format: bool) -> Grade:
    """Score a parsed answer against a solution."""
    gold = NONE if solution.gold is None else solution.gold
    exact = 1.0 if answer is not None and answer == gold else 0.0
    partial = 0.0
    if not exact and isinstance(answer, int) and solution.is_valid(answer):
        partial = PARTIAL
    return _grade(exact, 1.0 if has_format else 0.0, partial)


@cache
def _grade(exact: float, fmt: float, partial: float) -> Grade:
    """The weighted grade; a Grade is immutable and there are only a few, so each is built once."""
    return RUBRIC.grade(exact_match=exact, format=fmt, partial_credit=partial)


def grade(text: str, solution: Solution) -> Grade:
    """Grade a model's final message: the first ``<answer>`` block counts."""
    return grade_content(extract_answer(text), solution)


def grade_content(content: str | None, solution: Solution) -> Grade:
    """Grade an answer block's content as :func:`extract_answer` gives it (None: no block)."""
    if content is None:
        return ZERO
    return score(parse_answer(content), solution, has_format=True)
