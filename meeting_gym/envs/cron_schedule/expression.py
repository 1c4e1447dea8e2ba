"""Cron expressions under Vixie / cronie semantics: text -> value sets (RULES.md sections 2-3).

:func:`parse` reads an expression and returns a :class:`Cron`: one bit mask per field
(bit ``v`` set when value ``v`` is in the field's set) and whether each day field's text
begins with ``*`` (which decides the day rule, :attr:`Cron.and_rule`). Anything that is
not a valid expression raises :class:`CronError`, whose message says what is wrong and
where (``"minute field: value 60 out of range 0-59"``).

Accepted (RULES section 2):

* after removing leading and trailing spaces, tabs, CR and LF: one of the lowercase macros
  ``@yearly @annually @monthly @weekly @daily @midnight @hourly`` alone, or exactly five
  fields separated by runs of spaces and/or tabs (any other whitespace is an error);
* a field is a comma list of elements ``*``, ``*/s``, ``a``, ``a/s`` (= ``a-max/s``),
  ``a-b``, ``a-b/s``; values are ASCII digits (leading zeros allowed) or, in the month and
  day-of-week fields only, three-letter names in any case; steps are ASCII digits >= 1
  (larger than the range is fine: ``*/100`` is the first value only);
* day of week 0-7, 0 and 7 both Sunday (7 is folded into 0 after expansion).

Rejected, each with its reason: descending ranges (they never wrap), step 0 or a
non-numeric step, any value or range end outside its field (even one a step would skip,
``50-70/30``), empty fields or list elements, signs, non-ASCII digits, names outside the
month and day-of-week fields, full names, ``L W # ? H``, six or seven fields, ``CRON_TZ=``
prefixes, ``@reboot``, other-case macros (``@DAILY``) and ``@every``.

Pure Python, no gymnasium: the parser behind every grade, the gold answers and the tools.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache

__all__ = [
    "DOW_NAMES",
    "FIELDS",
    "FULL",
    "MACROS",
    "MONTH_NAMES",
    "Cron",
    "CronError",
    "bits",
    "element_mask",
    "from_fields",
    "parse",
    "parse_uncached",
    "try_parse",
]

FIELDS = (
    ("minute", 0, 59),
    ("hour", 0, 23),
    ("day-of-month", 1, 31),
    ("month", 1, 12),
    ("day-of-week", 0, 7),
)
"""Each field's name and bounds, in expression order (day of week up to 7 = Sunday)."""

MONTH_NAMES = {
    name: number
    for number, name in enumerate(
        ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"), 1
    )
}
DOW_NAMES = {
    name: number for number, name in enumerate(("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"))
}
_NAMES = {3: MONTH_NAMES, 4: DOW_NAMES}

MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
"""The accepted macros (lowercase only, alone) and the expressions they stand for."""

FULL = (
    (1 << 60) - 1,  # minutes 0..59
    (1 << 24) - 1,  # hours 0..23
    ((1 << 32) - 1) ^ 1,  # days 1..31
    ((1 << 13) - 1) ^ 1,  # months 1..12
    (1 << 7) - 1,  # weekdays 0..6
)
"""The mask of every value of each field (day of week after folding 7 into 0)."""

_SEPARATOR = re.compile(r"[ \t]+")
_OTHER_SPACE = re.compile(r"[^\S \t]")  # whitespace other than a space or a tab
_LETTERS = re.compile(r"[A-Za-z]{3}")
_SHOW = 24


class CronError(ValueError):
    """Not a valid expression; the message says what is wrong (field and element)."""


@dataclass(frozen=True)
class Cron:
    """A parsed expression: one bit mask per field and the two day-field star flags.

    Bit ``v`` of ``minutes`` is set when minute ``v`` is in the minute set (likewise
    ``hours``, ``doms`` for days 1-31, ``months`` for 1-12 and ``dows`` for weekdays 0-6,
    Sunday 0). ``dom_star`` / ``dow_star``: the day field's text begins with ``*``.
    ``fields`` keeps the five field texts (a macro's expansion) and ``source`` the text
    as given; neither takes part in equality, which is by value sets and flags.
    """

    minutes: int
    hours: int
    doms: int
    months: int
    dows: int
    dom_star: bool
    dow_star: bool
    fields: tuple[str, ...] = field(default=("*",) * 5, compare=False)
    source: str = field(default="", compare=False)

    @property
    def and_rule(self) -> bool:
        """True when a day passes on DOM AND DOW (a day field begins with ``*``), else OR."""
        return self.dom_star or self.dow_star

    @property
    def both_days_restricted(self) -> bool:
        """Neither day field is a bare ``*``: the case where the day rule decides."""
        return self.fields[2] != "*" and self.fields[4] != "*"

    def values(self, index: int) -> tuple[int, ...]:
        """The sorted values of field ``index`` (0 minute ... 4 day of week)."""
        return bits((self.minutes, self.hours, self.doms, self.months, self.dows)[index])

    def expression(self) -> str:
        """The five field texts joined by spaces (a macro's expansion)."""
        return " ".join(self.fields)


@lru_cache(maxsize=16384)
def bits(mask: int) -> tuple[int, ...]:
    """The positions of the set bits of ``mask``, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return tuple(out)


def _show(text: str) -> str:
    return repr(text if len(text) <= _SHOW else text[:_SHOW] + "...")


def _value(text: str, index: int, element: str) -> int:
    """One value of field ``index`` (digits, or a name where names are allowed)."""
    name, lo, hi = FIELDS[index]
    if text.isascii() and text.isdigit():
        digits = text.lstrip("0") or "0"
        number = int(digits) if len(digits) <= 4 else None
        if number is None or not lo <= number <= hi:
            raise CronError(f"{name} field: value {_show(text)} out of range {lo}-{hi}")
        return number
    if _LETTERS.fullmatch(text):
        names = _NAMES.get(index)
        if names is None:
            raise CronError(
                f"{name} field: names like {_show(text)} are allowed only in the month "
                "and day-of-week fields"
            )
        number = names.get(text.upper())
        if number is None:
            known = " ".join(names)
            raise CronError(f"{name} field: unknown name {_show(text)} (known: {known})")
        return number
    if not text:
        raise CronError(f"{name} field: element {_show(element)} is missing a value")
    hint = ""
    if text.isascii() and text.isalpha() and len(text) > 3 and index in _NAMES:
        hint = " (names are three letters, such as MON or JAN)"
    elif any(mark in text.upper() for mark in "LW#?H"):
        hint = " (L, W, #, ? and H are extensions, not Vixie cron)"
    raise CronError(f"{name} field: bad value {_show(text)} in element {_show(element)}{hint}")


def _step(text: str, index: int, element: str) -> int:
    name = FIELDS[index][0]
    if not text:
        raise CronError(f"{name} field: element {_show(element)} has '/' without a step")
    if not (text.isascii() and text.isdigit()):
        raise CronError(
            f"{name} field: bad step {_show(text)} in element {_show(element)} "
            "(a step is a whole number, at least 1)"
        )
    digits = text.lstrip("0")
    if not digits:
        raise CronError(f"{name} field: step 0 in element {_show(element)} (a step is at least 1)")
    # a step wider than every field (they span at most 60 values) picks the first value only
    return int(digits) if len(digits) <= 4 else 10_000


def element_mask(element: str, index: int) -> int:
    """The mask of one list element of field ``index`` (7 not yet folded for weekdays).

    :class:`CronError` if the element is invalid.
    """
    name, lo, hi = FIELDS[index]
    base, slash, step_text = element.partition("/")
    step = _step(step_text, index, element) if slash else 1
    if base == "*":
        first, last = lo, hi
    elif "-" in base:
        left, _, right = base.partition("-")
        if not left:
            raise CronError(f"{name} field: bad element {_show(element)} (no sign allowed)")
        first, last = _value(left, index, element), _value(right, index, element)
        if first > last:
            raise CronError(f"{name} field: descending range {_show(base)} (ranges do not wrap)")
    else:
        first = _value(base, index, element)
        last = hi if slash else first
    if step == 1:
        return ((1 << (last + 1)) - 1) ^ ((1 << first) - 1)
    mask = 0
    for value in range(first, last + 1, step):
        mask |= 1 << value
    return mask


@lru_cache(maxsize=4096)
def _field(text: str, index: int) -> int:
    if text == "*":
        return FULL[index]
    mask = 0
    for element in text.split(","):
        if not element:
            name = FIELDS[index][0]
            raise CronError(f"{name} field: empty list element in {_show(text)}")
        mask |= element_mask(element, index)
    if index == 4 and mask & 0x80:  # 7 is Sunday too
        mask = (mask | 1) & 0x7F
    return mask


def _parse(text: str) -> Cron:
    """:func:`parse` without its cache."""
    if not isinstance(text, str):
        raise CronError(f"expected the expression as a string, got {type(text).__name__}")
    body = text.strip(" \t\r\n")
    if not body:
        raise CronError("empty expression")
    if body[0] == "@":
        expansion = MACROS.get(body)
        if expansion is None:
            if body.lower() == "@reboot":
                reason = "@reboot has no time schedule"
            else:
                reason = (
                    "the macros are @yearly @annually @monthly @weekly @daily @midnight "
                    "@hourly, lowercase and alone"
                )
            raise CronError(f"unsupported macro {_show(body)}: {reason}")
        return replace(_parse(expansion), source=text)
    other_space = _OTHER_SPACE.search(body)
    if other_space is not None:
        raise CronError(
            f"character {other_space.group()!r} at position {other_space.start()} is not "
            "allowed: fields are separated by spaces and tabs only"
        )
    fields = _SEPARATOR.split(body)
    if len(fields) != 5:
        if "=" in fields[0]:
            raise CronError(
                f"{_show(fields[0])} looks like an environment setting (CRON_TZ=, TZ=); "
                "an expression is five fields or a macro"
            )
        raise CronError(
            f"expected 5 fields (minute hour day-of-month month day-of-week), got {len(fields)}"
        )
    return from_fields(fields, text)


def from_fields(fields: list[str] | tuple[str, ...], source: str) -> Cron:
    """The :class:`Cron` of five field texts (each checked as :func:`parse` does)."""
    minute, hour, dom, month, dow = fields
    return Cron(
        _field(minute, 0),
        _field(hour, 1),
        _field(dom, 2),
        _field(month, 3),
        _field(dow, 4),
        dom[0] == "*",
        dow[0] == "*",
        tuple(fields),
        source,
    )


@lru_cache(maxsize=8192)
def _cached(text: str) -> Cron | CronError:
    try:
        return _parse(text)
    except CronError as exc:
        return exc


def parse(text: str) -> Cron:
    """The :class:`Cron` of ``text``; :class:`CronError` with the reason if it is invalid."""
    if isinstance(text, str) and len(text) <= 1000:  # long texts never enter the cache
        result = _cached(text)
        if isinstance(result, CronError):
            raise CronError(*result.args)
        return result
    return _parse(text)


def parse_uncached(text: str) -> Cron:
    """:func:`parse` without its cache (for measuring the parser itself)."""
    return _parse(text)


def try_parse(text: str) -> Cron | None:
    """The :class:`Cron` of ``text``, or None if it is invalid."""
    try:
        return parse(text)
    except CronError:
        return None
