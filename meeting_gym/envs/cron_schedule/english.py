"""English descriptions of schedules, and the reader that turns them back into expressions.

:func:`describe` says when an expression fires, in English with no cron syntax (no ``*``,
``/``, ``@``, no ``1-5`` ranges, no ``MON``): times as ``HH:MM`` on a 24-hour clock, days
of the month as ordinals, weekdays and months by their full names. It describes the
*minute set*, not the syntax: ``*/30``, ``0,30`` and ``0-59/30`` all read "every 30
minutes", and the day rule is spelled out ("on the 13th of every month and also on
every Friday" for the OR rule, "on Mondays that fall on an odd-numbered date" for AND).

Every sentence is built from the templates of :data:`TEMPLATES`, one per component in
this order: the time, an hour qualifier (after a minute phrase), the days, an optional
clarifier ("(only in months that have that day)"), the months. Several templates say
the same thing in different words, and :func:`describe` picks among those that fit with
the ``rng`` it is given, so descriptions vary.

:func:`read` parses a sentence back, trying every template of every component in turn
(with backtracking), and returns the one :class:`Reading` it means; it raises
:class:`DescriptionError` if no parse, or parses with different meanings, exist. The
tests read back thousands of generated descriptions: each parses to exactly one
meaning, which fires at the same minutes as the expression described. (The gold write
policy is this reader; :func:`expression_for` writes its reading as an expression.)

Why one module of about 1,000 lines: :data:`TEMPLATES` is one grammar that :func:`describe`
writes and :func:`read` parses; each template's phrase and its reading must change together,
and the tests hold every generated sentence to one meaning, which a split would not make
easier to keep.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from meeting_gym.envs.cron_schedule.expression import FULL, Cron, bits

__all__ = [
    "MONTHS",
    "TEMPLATES",
    "WEEKDAYS",
    "DescriptionError",
    "Reading",
    "describe",
    "explain",
    "expression_for",
    "read",
    "reading_of",
]

WEEKDAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
"""Weekday names in cron numbering (Sunday 0)."""
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_WEEK_ORDER = (1, 2, 3, 4, 5, 6, 0)  # how English lists weekdays: Monday first
_NTH = {
    2: "second",
    3: "third",
    4: "fourth",
    5: "fifth",
    6: "sixth",
    7: "seventh",
    8: "eighth",
    9: "ninth",
    10: "tenth",
    11: "eleventh",
    12: "twelfth",
}
_ALL_MIN, _ALL_HOUR, _ALL_DOM, _ALL_MONTH, _ALL_DOW = FULL
_ODD = sum(1 << d for d in range(1, 32, 2))
_WEEKDAYS_MON_FRI = 0b0111110
_WEEKEND = 0b1000001
_QUARTERS = (1 << 1) | (1 << 4) | (1 << 7) | (1 << 10)


class DescriptionError(ValueError):
    """A sentence the reader cannot parse, or can parse in two different ways."""


@dataclass(frozen=True)
class Reading:
    """What a description means: value masks and which days fire.

    ``days`` is ``"every"`` (every day), ``"dom"`` (the days of month in ``doms``),
    ``"dow"`` (the weekdays in ``dows``), ``"or"`` (either) or ``"and"`` (both).
    """

    minutes: int
    hours: int
    doms: int
    months: int
    dows: int
    days: str


# ----------------------------------------------------------------------------- English pieces


def _join(items: Sequence[str], word: str = "and") -> str:
    if len(items) == 1:
        return items[0]
    return f"{', '.join(items[:-1])} {word} {items[-1]}"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _week_ordered(dows: int) -> list[int]:
    return [d for d in _WEEK_ORDER if dows >> d & 1]


# Slot kinds: how a value is written, and the pattern that reads it back.
_TIME = r"[0-9]{2}:[0-9]{2}"
_INT = r"[0-9]{1,2}"
_ORD = r"[0-9]{1,2}(?:st|nd|rd|th)"
_DAY = "|".join(WEEKDAYS)
_MONTH = "|".join(MONTHS)


def _list_pattern(item: str, word: str) -> str:
    return rf"(?:{item})(?:, (?:{item}))*(?: {word} (?:{item}))?"


_SLOTS: dict[str, str] = {
    "time": _TIME,
    "times": _list_pattern(_TIME, "and"),
    "hlist": _list_pattern(r"[0-9]{2}:00", "and"),
    "n": _INT,
    "a": _INT,
    "b": _INT,
    "mins": rf"{_INT} minutes?",
    "mlist": _list_pattern(_INT, "and"),
    "nth": "|".join(_NTH.values()),
    "ord": _ORD,
    "ords": _list_pattern(_ORD, "and"),
    "ords_or": _list_pattern(_ORD, "or"),
    "nums": _list_pattern(_INT, "and"),
    "day": _DAY,
    "days": _list_pattern(_DAY, "and"),
    "days_or": _list_pattern(_DAY, "or"),
    "days_pl": _list_pattern(rf"(?:{_DAY})s", "and"),
    "month": _MONTH,
    "months": _list_pattern(_MONTH, "and"),
}


def _slot_kind(name: str) -> str:
    return name.rstrip("12")


def _compile(template: str) -> re.Pattern[str]:
    pattern, position = [], 0
    for match in re.finditer(r"\{(\w+)\}", template):
        pattern.append(re.escape(template[position : match.start()]))
        name = match.group(1)
        pattern.append(f"(?P<{name}>{_SLOTS[_slot_kind(name)]})")
        position = match.end()
    pattern.append(re.escape(template[position:]))
    return re.compile("".join(pattern))


# Readers of slot text (the inverse of how describe() writes them).
def _ints(text: str) -> list[int]:
    return [int(x) for x in re.findall(r"[0-9]+", text)]


def _times(text: str) -> list[tuple[int, int]]:
    return [(int(h), int(m)) for h, m in re.findall(r"([0-9]{2}):([0-9]{2})", text)]


def _names(text: str, names: Sequence[str]) -> list[int]:
    """Indexes of the capitalised names in ``text`` (a plural "Mondays" is "Monday")."""
    out = []
    for word in re.findall(r"[A-Z][a-z]+", text):
        if word not in names and word.endswith("s"):
            word = word[:-1]
        out.append(names.index(word))
    return out


def _mask(values: Sequence[int] | range) -> int:
    out = 0
    for v in values:
        out |= 1 << v
    return out


# ----------------------------------------------------------------------------- templates


@dataclass(frozen=True)
class Template:
    """One way to say one component; ``meaning`` reads its slots back (None: not this)."""

    name: str
    component: str
    text: str
    meaning: Callable[[dict[str, str]], dict[str, Any] | None]
    regex: re.Pattern[str]


TEMPLATES: dict[str, Template] = {}
COMPONENTS = ("time", "hours", "days", "clarify", "months")


def _template(name: str, component: str, text: str) -> Callable[[Callable], Callable]:
    def register(meaning: Callable[[dict[str, str]], dict[str, Any] | None]) -> Callable:
        TEMPLATES[name] = Template(name, component, text, meaning, _compile(text))
        return meaning

    return register


def _cross(times: list[tuple[int, int]]) -> dict[str, Any] | None:
    """Times that are every hour of a set at every minute of a set (else not one expression)."""
    hours, minutes = {h for h, _ in times}, {m for _, m in times}
    if len(times) != len(set(times)) or len(times) != len(hours) * len(minutes):
        return None
    if max(hours) > 23 or max(minutes) > 59:
        return None
    return {"minutes": _mask(minutes), "hours": _mask(hours)}


for _name, _text in (
    ("at", "at {times}"),
    ("daily_at", "daily at {times}"),
    ("every_day_at", "every day at {times}"),
):
    _template(_name, "time", _text)(lambda s: _cross(_times(s["times"])))


@_template("top", "time", "every hour on the hour")
@_template("top_start", "time", "at the start of every hour")
def _top(s: dict[str, str]) -> dict[str, Any]:
    return {"minutes": 1, "hours": _ALL_HOUR}


@_template("past", "time", "at {mins} past every hour")
@_template("past_once", "time", "once an hour, at {mins} past the hour")
def _past(s: dict[str, str]) -> dict[str, Any] | None:
    (m,) = _ints(s["mins"])
    return {"minutes": 1 << m, "hours": _ALL_HOUR} if 0 < m < 60 else None


def _hour_span(first: str, last: str, minute_first: int, minute_last: int) -> int | None:
    (h1, m1), (h2, m2) = _times(first)[0], _times(last)[0]
    if (m1, m2) != (minute_first, minute_last) or not h1 < h2 <= 23:
        return None
    return _mask(range(h1, h2 + 1))


@_template("past_range", "time", "at {mins} past every hour from {time1} to {time2}")
def _past_range(s: dict[str, str]) -> dict[str, Any] | None:
    (m,) = _ints(s["mins"])
    hours = _hour_span(s["time1"], s["time2"], 0, 59)
    return None if hours is None or not 0 < m < 60 else {"minutes": 1 << m, "hours": hours}


@_template("top_range", "time", "on the hour, every hour from {time1} to {time2}")
def _top_range(s: dict[str, str]) -> dict[str, Any] | None:
    hours = _hour_span(s["time1"], s["time2"], 0, 59)
    return None if hours is None else {"minutes": 1, "hours": hours}


@_template("hourly_range", "time", "once an hour from {time1} through {time2}")
def _hourly_range(s: dict[str, str]) -> dict[str, Any] | None:
    minute = _times(s["time1"])[0][1]
    hours = _hour_span(s["time1"], s["time2"], minute, minute)
    return None if hours is None or minute > 59 else {"minutes": 1 << minute, "hours": hours}


@_template("every_n_hours", "time", "every {n} hours starting at {time}")
def _every_n_hours(s: dict[str, str]) -> dict[str, Any] | None:
    n, ((h, m),) = int(s["n"]), _times(s["time"])
    if not 2 <= n <= 12 or 24 % n or h >= n or m > 59:
        return None  # only steps that repeat the same hours every day
    return {"minutes": 1 << m, "hours": _mask(range(h, 24, n))}


@_template("every_minute", "time", "every minute")
def _every_minute(s: dict[str, str]) -> dict[str, Any]:
    return {"minutes": _ALL_MIN, "needs_hours": True}


@_template("step", "time", "every {n} minutes")
@_template("step_once", "time", "once every {n} minutes")
@_template("step_on_hour", "time", "every {n} minutes, starting on the hour")
def _step(s: dict[str, str]) -> dict[str, Any] | None:
    n = int(s["n"])
    if not 2 <= n <= 30 or 60 % n:
        return None  # "every 45 minutes" is not a set of minutes of the hour
    return {"minutes": _mask(range(0, 60, n)), "needs_hours": True}


@_template("minute_list", "time", "at {mlist} minutes past the hour")
@_template("minute_list_at", "time", "at minutes {mlist} past the hour")
def _minute_list(s: dict[str, str]) -> dict[str, Any] | None:
    values = _ints(s["mlist"])
    if len(values) < 2 or max(values) > 59 or values != sorted(set(values)):
        return None
    return {"minutes": _mask(values), "needs_hours": True}


@_template("minute_range", "time", "every minute from {a} to {b} minutes past the hour")
def _minute_range(s: dict[str, str]) -> dict[str, Any] | None:
    a, b = int(s["a"]), int(s["b"])
    return {"minutes": _mask(range(a, b + 1)), "needs_hours": True} if a < b <= 59 else None


@_template("minute_rstep", "time", "every {n} minutes from {a} to {b} minutes past the hour")
def _minute_rstep(s: dict[str, str]) -> dict[str, Any] | None:
    n, a, b = int(s["n"]), int(s["a"]), int(s["b"])
    if n < 2 or not a < b <= 59 or (b - a) % n:
        return None
    return {"minutes": _mask(range(a, b + 1, n)), "needs_hours": True}


# hour qualifiers, after a minute phrase ("every 15 minutes" + " between 07:00 and 11:59")
@_template("all_hours", "hours", "")
def _all_hours(s: dict[str, str]) -> dict[str, Any]:
    return {}


@_template("around_the_clock", "hours", ", around the clock")
def _around_the_clock(s: dict[str, str]) -> dict[str, Any]:
    return {"hours": _ALL_HOUR, "after_minutes": True}


@_template("between", "hours", " between {time1} and {time2}")
@_template("from_to", "hours", " from {time1} to {time2}")
@_template("during_hours", "hours", " during the hours from {time1} through {time2}")
def _between(s: dict[str, str]) -> dict[str, Any] | None:
    (h1, m1), (h2, m2) = _times(s["time1"])[0], _times(s["time2"])[0]
    if (m1, m2) != (0, 59) or not h1 <= h2 <= 23:
        return None
    return {"hours": _mask(range(h1, h2 + 1)), "after_minutes": True}


@_template("during_hour", "hours", " during the {time} hour")
def _during_hour(s: dict[str, str]) -> dict[str, Any] | None:
    ((h, m),) = _times(s["time"])
    return {"hours": 1 << h, "after_minutes": True} if m == 0 and h <= 23 else None


@_template("hours_starting", "hours", " during the hours starting at {hlist}")
@_template("in_the_hours", "hours", " in the {hlist} hours")
def _hour_list(s: dict[str, str]) -> dict[str, Any] | None:
    hours = [h for h, _ in _times(s["hlist"])]
    if len(hours) < 2 or max(hours) > 23 or hours != sorted(set(hours)):
        return None
    return {"hours": _mask(hours), "after_minutes": True}


@_template("nth_hour", "hours", " in every {nth} hour from the {time1} hour to the {time2} hour")
def _nth_hour(s: dict[str, str]) -> dict[str, Any] | None:
    n = next(k for k, word in _NTH.items() if word == s["nth"])
    (h1, m1), (h2, m2) = _times(s["time1"])[0], _times(s["time2"])[0]
    if (m1, m2) != (0, 0) or not h1 < h2 <= 23 or (h2 - h1) % n:
        return None
    return {"hours": _mask(range(h1, h2 + 1, n)), "after_minutes": True}


# days
@_template("no_days", "days", "")
@_template("every_day", "days", " every day")
def _every_day(s: dict[str, str]) -> dict[str, Any]:
    return {"days": "every"}


def _dom_days(values: list[int]) -> int | None:
    if not values or max(values) > 31 or min(values) < 1 or values != sorted(set(values)):
        return None
    return _mask(values)


@_template("dom", "days", " on the {ords} of the month")
@_template("dom_each", "days", " on the {ords} of each month")
@_template("dom_days", "days", " on days {nums} of the month")
@_template("dom_day", "days", " on day {n} of the month")
def _dom(s: dict[str, str]) -> dict[str, Any] | None:
    doms = _dom_days(_ints(s.get("ords") or s.get("nums") or s["n"]))
    return None if doms is None else {"days": "dom", "doms": doms}


@_template("dom_range", "days", " on every day from the {ord1} to the {ord2} of the month")
@_template("dom_range_days", "days", " on days {a} through {b} of the month")
def _dom_range(s: dict[str, str]) -> dict[str, Any] | None:
    a, b = _ints(s.get("ord1") or s["a"])[0], _ints(s.get("ord2") or s["b"])[0]
    return {"days": "dom", "doms": _mask(range(a, b + 1))} if 1 <= a < b <= 31 else None


@_template("odd_days", "days", " on odd-numbered days of the month")
@_template("odd_dates", "days", " on the odd-numbered dates of the month")
def _odd(s: dict[str, str]) -> dict[str, Any]:
    return {"days": "dom", "doms": _ODD}


@_template("date", "days", " on {month} {n}")
@_template("date_yearly", "days", " every year on {month} {n}")
def _date(s: dict[str, str]) -> dict[str, Any] | None:
    day = int(s["n"])
    if not 1 <= day <= 31:
        return None
    return {"days": "dom", "doms": 1 << day, "months": 1 << (MONTHS.index(s["month"]) + 1)}


@_template("weekdays", "days", " on weekdays (Monday through Friday)")
@_template("monday_through_friday", "days", " Monday through Friday")
@_template("monday_to_friday", "days", " from Monday to Friday")
def _weekdays(s: dict[str, str]) -> dict[str, Any]:
    return {"days": "dow", "dows": _WEEKDAYS_MON_FRI}


@_template("weekends", "days", " on weekends (Saturday and Sunday)")
def _weekends(s: dict[str, str]) -> dict[str, Any]:
    return {"days": "dow", "dows": _WEEKEND}


def _weekday_set(text: str) -> int | None:
    days = _names(text, WEEKDAYS)
    order = [_WEEK_ORDER.index(d) for d in days]
    return _mask(days) if days and order == sorted(set(order)) else None


@_template("on_weekdays", "days", " on {days_pl}")
@_template("every_weekday", "days", " every {days}")
def _dow(s: dict[str, str]) -> dict[str, Any] | None:
    dows = _weekday_set(s.get("days_pl") or s["days"])
    return None if dows is None else {"days": "dow", "dows": dows}


def _week_span(first: str, last: str) -> int | None:
    a, b = _WEEK_ORDER.index(WEEKDAYS.index(first)), _WEEK_ORDER.index(WEEKDAYS.index(last))
    return _mask(_WEEK_ORDER[a : b + 1]) if a < b else None


@_template("weekday_range", "days", " from {day1} through {day2}")
@_template("weekday_range_every", "days", " on every day from {day1} to {day2}")
def _dow_range(s: dict[str, str]) -> dict[str, Any] | None:
    dows = _week_span(s["day1"], s["day2"])
    return None if dows is None else {"days": "dow", "dows": dows}


@_template("or_also", "days", " on the {ords} of the month and also on every {days}")
@_template(
    "or_either", "days", " on any day that is either the {ords_or} of the month or a {days_or}"
)
@_template(
    "or_whatever",
    "days",
    " on {days_pl}, and also on the {ords} of each month whatever the weekday",
)
def _or(s: dict[str, str]) -> dict[str, Any] | None:
    doms = _dom_days(_ints(s.get("ords") or s["ords_or"]))
    dows = _weekday_set(s.get("days") or s.get("days_or") or s["days_pl"])
    if doms is None or dows is None:
        return None
    return {"days": "or", "doms": doms, "dows": dows}


@_template("and_odd", "days", " on {days_pl} that fall on an odd-numbered date")
@_template("and_odd_only", "days", " on odd-numbered dates, but only when they fall on a {days_or}")
def _and_odd(s: dict[str, str]) -> dict[str, Any] | None:
    dows = _weekday_set(s.get("days_pl") or s["days_or"])
    return None if dows is None else {"days": "and", "doms": _ODD, "dows": dows}


@_template("and_fall", "days", " on {days_pl} that fall on the {ords_or} of the month")
@_template("and_it", "days", " on the {ord} of the month, but only when it falls on a {days_or}")
@_template(
    "and_they", "days", " on the {ords} of the month, but only when they fall on a {days_or}"
)
def _and(s: dict[str, str]) -> dict[str, Any] | None:
    values = _ints(s.get("ords_or") or s.get("ord") or s["ords"])
    if "ords" in s and len(values) < 2:
        return None
    doms = _dom_days(values)
    dows = _weekday_set(s.get("days_pl") or s["days_or"])
    if doms is None or dows is None:
        return None
    return {"days": "and", "doms": doms, "dows": dows}


# clarifiers: no meaning of their own
for _name, _text in (
    ("no_clarifier", ""),
    ("has_that_day", " (only in months that have that day)"),
    ("has_those_days", " (only in months that have those days)"),
    ("too_short", " (months too short for it are skipped)"),
    ("leap_years", " (which happens only in leap years)"),
):
    _template(_name, "clarify", _text)(lambda s: {})


# months
@_template("every_month", "months", "")
def _every_month(s: dict[str, str]) -> dict[str, Any]:
    return {}


@_template("in_months", "months", " in {months}")
@_template("only_in_months", "months", " only in {months}")
@_template("during_months", "months", " during {months}")
def _month_list(s: dict[str, str]) -> dict[str, Any] | None:
    months = _names(s["months"], MONTHS)
    if months != sorted(set(months)):
        return None
    return {"months": _mask([m + 1 for m in months])}


@_template("month_range", "months", " from {month1} through {month2}")
@_template("month_range_every", "months", " in every month from {month1} to {month2}")
def _month_range(s: dict[str, str]) -> dict[str, Any] | None:
    a, b = MONTHS.index(s["month1"]) + 1, MONTHS.index(s["month2"]) + 1
    return {"months": _mask(range(a, b + 1))} if a < b else None


@_template(
    "quarters",
    "months",
    " in the first month of each quarter (January, April, July and October)",
)
def _quarters(s: dict[str, str]) -> dict[str, Any]:
    return {"months": _QUARTERS}


_BY_COMPONENT = {c: [t for t in TEMPLATES.values() if t.component == c] for c in COMPONENTS}


# ----------------------------------------------------------------------------- reading


def _merge(acc: dict[str, Any], part: dict[str, Any]) -> dict[str, Any] | None:
    if part.get("after_minutes") and not acc.get("needs_hours"):
        return None  # an hour qualifier only follows a minute phrase
    out = dict(acc)
    for key, value in part.items():
        if key == "after_minutes":
            continue
        if key in out and key != "needs_hours":
            return None  # said twice (a date's month and a month phrase, say)
        out[key] = value
    return out


def _parses(text: str) -> list[tuple[Reading, tuple[str, ...]]]:
    """Every complete parse: its reading and the names of the templates it used."""
    found: list[tuple[Reading, tuple[str, ...]]] = []

    def walk(component: int, position: int, acc: dict[str, Any]) -> None:
        if component == len(COMPONENTS):
            if position == len(text):
                found.append((_reading(acc), acc["used"]))
            return
        for template in _BY_COMPONENT[COMPONENTS[component]]:
            match = template.regex.match(text, position)
            if match is None:
                continue
            part = template.meaning({k: v for k, v in match.groupdict().items() if v})
            if part is None:
                continue
            merged = _merge(acc, part)
            if merged is not None:
                merged["used"] = (*acc.get("used", ()), template.name)
                walk(component + 1, match.end(), merged)

    walk(0, 0, {})
    return found


def _reading(acc: dict[str, Any]) -> Reading:
    return Reading(
        minutes=acc["minutes"],
        hours=acc.get("hours", _ALL_HOUR),
        doms=acc.get("doms", _ALL_DOM),
        months=acc.get("months", _ALL_MONTH),
        dows=acc.get("dows", _ALL_DOW),
        days=acc.get("days", "every"),
    )


def explain(text: str) -> list[tuple[Reading, tuple[str, ...]]]:
    """Every parse of a description: its reading and the template names, one per component."""
    sentence = text.strip()
    if not sentence.endswith(".") or len(sentence) < 2:
        raise DescriptionError("a description is one sentence ending with a full stop")
    return _parses(sentence[0].lower() + sentence[1:-1])


def read(text: str) -> Reading:
    """The one meaning of a description; :class:`DescriptionError` if none or several."""
    readings = {reading for reading, _ in explain(text)}
    if not readings:
        raise DescriptionError(f"cannot read the description {text.strip()[:80]!r}")
    if len(readings) > 1:
        raise DescriptionError(f"the description {text.strip()[:80]!r} has several meanings")
    return readings.pop()


# ----------------------------------------------------------------------------- expressions


def _compact(mask: int) -> str:
    """Values as a cron list, runs of three or more as ranges (never ``*``)."""
    values, parts, i = bits(mask), [], 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[j + 1] == values[j] + 1:
            j += 1
        if j - i >= 2:
            parts.append(f"{values[i]}-{values[j]}")
            i = j + 1
        else:
            parts.append(str(values[i]))
            i += 1
    return ",".join(parts)


def _star_or(mask: int, full: int) -> str:
    return "*" if mask == full else _compact(mask)


def _stepped(mask: int, full: int) -> str:
    """``_star_or``, but evenly spaced values as a step: three or more as ``*/N`` when they
    run from the field's first value to its end, four or more as ``A-B/N`` otherwise (three
    hours such as 4,8,12 read better as a list).

    Only for the minute and hour fields: in the day fields a leading ``*`` changes how the
    two combine (cron's day rule), and their lists are short.
    """
    values = bits(mask)
    gaps = {b - a for a, b in itertools.pairwise(values)}
    if mask == full or len(values) < 3 or len(gaps) != 1 or 1 in gaps:
        return _star_or(mask, full)
    step, lo, hi = gaps.pop(), bits(full)[0], bits(full)[-1]
    if values[0] == lo and values[-1] + step > hi:
        return f"*/{step}"
    return f"{values[0]}-{values[-1]}/{step}" if len(values) >= 4 else _compact(mask)


_DOM_STEPS = {_mask(range(1, 32, n)): n for n in range(31, 0, -1)}
_DOW_STEPS = {_mask({v % 7 for v in range(0, 8, n)}): n for n in range(7, 0, -1)}


def expression_for(reading: Reading, weekday_offset: int = 0) -> str:
    """An expression that fires exactly when ``reading`` says.

    ``weekday_offset`` is for the naive policy only: it writes weekday ``w`` as ``w +
    offset`` (1 = the 1-based numbering some people assume, Sunday written as 1).
    """

    def dow_text(mask: int) -> str:
        return ",".join(str(w + weekday_offset) for w in bits(mask))

    # steps as steps ("every 2 minutes" as */2, not a list of 30): what a person writes,
    # and what the expert episodes a model is fine-tuned on should show
    minute = _stepped(reading.minutes, _ALL_MIN)
    hour = _stepped(reading.hours, _ALL_HOUR)
    month = _star_or(reading.months, _ALL_MONTH)
    dom, dow = "*", "*"
    if reading.days == "dom":
        dom = _star_or(reading.doms, _ALL_DOM)
    elif reading.days == "dow":
        dow = dow_text(reading.dows)
    elif reading.days == "or":
        dom, dow = _compact(reading.doms), dow_text(reading.dows)
    elif reading.days == "and":
        if reading.doms in _DOM_STEPS:
            dom, dow = f"*/{_DOM_STEPS[reading.doms]}", dow_text(reading.dows)
        elif reading.dows in _DOW_STEPS:
            dom, dow = _compact(reading.doms), f"*/{_DOW_STEPS[reading.dows]}"
        else:
            raise DescriptionError("no single expression fires on these days (AND of two lists)")
    return f"{minute} {hour} {dom} {month} {dow}"


# ----------------------------------------------------------------------------- describing


def reading_of(cron: Cron) -> Reading:
    """What ``cron`` means, in the terms a description uses (the day rule resolved)."""
    all_dom, all_dow = cron.doms == _ALL_DOM, cron.dows == _ALL_DOW
    if cron.and_rule:
        days = "every" if all_dom and all_dow else "dow" if all_dom else "dom" if all_dow else "and"
    else:
        days = "every" if all_dom or all_dow else "or"
    doms = cron.doms if days in ("dom", "or", "and") else _ALL_DOM
    dows = cron.dows if days in ("dow", "or", "and") else _ALL_DOW
    return Reading(cron.minutes, cron.hours, doms, cron.months, dows, days)


def _progression(values: tuple[int, ...], min_len: int = 3) -> int | None:
    """The common step of ``min_len`` or more evenly spaced values (None otherwise)."""
    if len(values) < max(min_len, 2):
        return None
    step = values[1] - values[0]
    ok = all(b - a == step for a, b in itertools.pairwise(values))
    return step if ok else None


def _hhmm(h: int, m: int) -> str:
    return f"{h:02d}:{m:02d}"


def _minutes_word(m: int) -> str:
    return f"{m} minute" if m == 1 else f"{m} minutes"


Wording = tuple[str, dict[str, str]]
"""A template name and its slot values: rendered only once chosen (:func:`_text`)."""


def _render(name: str, **slots: str) -> Wording:
    return name, slots


def _text(wording: Wording) -> str:
    name, slots = wording
    return TEMPLATES[name].text.format(**slots)


@lru_cache(maxsize=4096)
def _time_options(minute_mask: int, hour_mask: int, plain_days: bool) -> list[Wording | str]:
    minutes, hours = bits(minute_mask), bits(hour_mask)
    all_hours = hour_mask == _ALL_HOUR
    options: list[Wording | str] = []
    if len(minutes) * len(hours) <= 6 and not all_hours:
        times = _join([_hhmm(h, m) for h in hours for m in minutes])
        options.append(_render("at", times=times))
        if plain_days:
            options += [_render("daily_at", times=times), _render("every_day_at", times=times)]
    if len(minutes) == 1:
        (m,) = minutes
        step = _progression(hours, min_len=2)
        if all_hours:
            if m == 0:
                options += [_render("top"), _render("top_start")]
            else:
                options += [_render(n, mins=_minutes_word(m)) for n in ("past", "past_once")]
            return options
        if not options:
            options.append(_render("at", times=_join([_hhmm(h, m) for h in hours])))
        first, last = hours[0], hours[-1]
        if len(hours) >= 2 and last - first == len(hours) - 1:
            options.append(_render("hourly_range", time1=_hhmm(first, m), time2=_hhmm(last, m)))
            if m == 0:
                options.append(_render("top_range", time1=_hhmm(first, 0), time2=_hhmm(last, 59)))
            else:
                options.append(
                    _render(
                        "past_range",
                        mins=_minutes_word(m),
                        time1=_hhmm(first, 0),
                        time2=_hhmm(last, 59),
                    )
                )
        if step is not None and 24 % step == 0 and first < step and last + step == first + 24:
            # "every 8 hours starting at 01:00": 01:00, 09:00, 17:00 and on, day after day
            options.append(_render("every_n_hours", n=str(step), time=_hhmm(first, m)))
        return options
    # a minute phrase and an hour qualifier, drawn apart (the caller draws "minutes")
    return options + ["minutes"] * max(2, 3 * len(options))


@lru_cache(maxsize=4096)
def _minute_phrases(minutes: tuple[int, ...]) -> list[Wording]:
    if len(minutes) == 60:
        return [_render("every_minute")]
    phrases = []
    step = _progression(minutes, min_len=2)
    if step is not None and minutes[0] == 0 and 60 % step == 0 and minutes[-1] + step == 60:
        phrases += [_render(n, n=str(step)) for n in ("step", "step_once", "step_on_hour")]
    first, last = minutes[0], minutes[-1]
    if step == 1:
        phrases.append(_render("minute_range", a=str(first), b=str(last)))
    elif step is not None:
        phrases.append(_render("minute_rstep", n=str(step), a=str(first), b=str(last)))
    if not phrases or len(minutes) <= 6:
        mlist = _join([str(m) for m in minutes])
        phrases += [_render(n, mlist=mlist) for n in ("minute_list", "minute_list_at")]
    return phrases


@lru_cache(maxsize=4096)
def _hour_qualifiers(hours: tuple[int, ...], all_hours: bool) -> list[Wording]:
    if all_hours:
        return [_render("all_hours"), _render("all_hours"), _render("around_the_clock")]
    first, last = hours[0], hours[-1]
    if len(hours) == 1:
        return [
            _render("during_hour", time=_hhmm(first, 0)),
            _render("between", time1=_hhmm(first, 0), time2=_hhmm(first, 59)),
        ]
    if last - first == len(hours) - 1:
        span = {"time1": _hhmm(first, 0), "time2": _hhmm(last, 59)}
        return [_render(n, **span) for n in ("between", "from_to", "during_hours")]
    out = []
    hlist = _join([_hhmm(h, 0) for h in hours])
    out += [_render("hours_starting", hlist=hlist), _render("in_the_hours", hlist=hlist)]
    step = _progression(hours)
    if step is not None and step in _NTH:
        out.append(_render("nth_hour", nth=_NTH[step], time1=_hhmm(first, 0), time2=_hhmm(last, 0)))
    return out


@lru_cache(maxsize=4096)
def _ords(mask: int, word: str = "and") -> str:
    return _join([_ordinal(d) for d in bits(mask)], word)


@lru_cache(maxsize=4096)
def _weekday_names(mask: int, word: str = "and", plural: bool = False) -> str:
    names = [WEEKDAYS[d] + ("s" if plural else "") for d in _week_ordered(mask)]
    return _join(names, word)


def _day_options(r: Reading, single_month: bool) -> list[tuple[Wording, bool]]:
    """(phrase, whether it names the month itself)."""
    month = bits(r.months)[0] if single_month else 0
    return _day_options_of(r.days, r.doms, r.dows, month)


@lru_cache(maxsize=4096)
def _day_options_of(days: str, doms: int, dows: int, single: int) -> list[tuple[Wording, bool]]:
    """The day wordings of a day rule; ``single`` is the one month, or 0."""
    r = Reading(0, 0, doms, 1 << single if single else _ALL_MONTH, dows, days)
    single_month = bool(single)
    if r.days == "every":
        return [(_render("no_days"), False)] * 3 + [(_render("every_day"), False)]
    if r.days == "dom":
        days = bits(r.doms)
        out = [
            (_render("dom", ords=_ords(r.doms)), False),
            (_render("dom_each", ords=_ords(r.doms)), False),
        ]
        if len(days) == 1:
            out.append((_render("dom_day", n=str(days[0])), False))
            if single_month:
                month = MONTHS[bits(r.months)[0] - 1]
                for name in ("date", "date_yearly"):
                    out.append((_render(name, month=month, n=str(days[0])), True))
        else:
            out.append((_render("dom_days", nums=_join([str(d) for d in days])), False))
        if len(days) >= 3 and days[-1] - days[0] == len(days) - 1:
            out.append(
                (_render("dom_range", ord1=_ordinal(days[0]), ord2=_ordinal(days[-1])), False)
            )
            out.append((_render("dom_range_days", a=str(days[0]), b=str(days[-1])), False))
        if r.doms == _ODD:
            out += [(_render("odd_days"), False), (_render("odd_dates"), False)]
        return out
    if r.days == "dow":
        out = [
            (_render("on_weekdays", days_pl=_weekday_names(r.dows, plural=True)), False),
            (_render("every_weekday", days=_weekday_names(r.dows)), False),
        ]
        if r.dows == _WEEKDAYS_MON_FRI:
            names = ("weekdays", "monday_through_friday", "monday_to_friday")
            out += [(_render(n), False) for n in names]
        if r.dows == _WEEKEND:
            out.append((_render("weekends"), False))
        order = [_WEEK_ORDER.index(d) for d in _week_ordered(r.dows)]
        if len(order) >= 3 and order[-1] - order[0] == len(order) - 1:
            first, last = WEEKDAYS[_WEEK_ORDER[order[0]]], WEEKDAYS[_WEEK_ORDER[order[-1]]]
            for name in ("weekday_range", "weekday_range_every"):
                out.append((_render(name, day1=first, day2=last), False))
        return out
    if r.days == "or":
        return [
            (_render("or_also", ords=_ords(r.doms), days=_weekday_names(r.dows)), False),
            (
                _render(
                    "or_either",
                    ords_or=_ords(r.doms, "or"),
                    days_or=_weekday_names(r.dows, "or"),
                ),
                False,
            ),
            (
                _render(
                    "or_whatever",
                    days_pl=_weekday_names(r.dows, plural=True),
                    ords=_ords(r.doms),
                ),
                False,
            ),
        ]
    # and
    days_or, days_pl = _weekday_names(r.dows, "or"), _weekday_names(r.dows, plural=True)
    if r.doms == _ODD:
        return [
            (_render("and_odd", days_pl=days_pl), False),
            (_render("and_odd_only", days_or=days_or), False),
        ]
    out = [(_render("and_fall", days_pl=days_pl, ords_or=_ords(r.doms, "or")), False)]
    if len(bits(r.doms)) == 1:
        out.append((_render("and_it", ord=_ords(r.doms), days_or=days_or), False))
    else:
        out.append((_render("and_they", ords=_ords(r.doms), days_or=days_or), False))
    return out


_SHORT = {29: 0, 30: 1 << 2, 31: (1 << 2) | (1 << 4) | (1 << 6) | (1 << 9) | (1 << 11)}
_FEB = 1 << 2


def _clarifiers(r: Reading) -> list[Wording]:
    return _clarifiers_of(r.days, r.doms, r.months)


@lru_cache(maxsize=4096)
def _clarifiers_of(days: str, doms: int, months: int) -> list[Wording]:
    r = Reading(0, 0, doms, months, 0, days)
    """Say that a day some months lack is skipped there (it is, by the rules; this helps)."""
    if r.days != "dom":
        return [_render("no_clarifier")]
    late = [d for d in bits(r.doms) if d >= 29]
    if late == [29] and r.months == _FEB:
        return [_render("leap_years")]
    lacking = any(r.months & (_SHORT[d] | (_FEB if d == 29 else 0)) for d in late)
    if not lacking:
        return [_render("no_clarifier")]
    if len(bits(r.doms)) == 1:
        return [_render("has_that_day"), _render("too_short")]
    return [_render("has_those_days")]


def _month_options(r: Reading) -> list[Wording]:
    return _month_options_of(r.months)


@lru_cache(maxsize=256)
def _month_options_of(months: int) -> list[Wording]:
    r = Reading(0, 0, 0, months, 0, "every")
    if r.months == _ALL_MONTH:
        return [_render("every_month")]
    names = _join([MONTHS[m - 1] for m in bits(r.months)])
    out = [_render(n, months=names) for n in ("in_months", "only_in_months", "during_months")]
    months = bits(r.months)
    if len(months) >= 3 and months[-1] - months[0] == len(months) - 1:
        span = {"month1": MONTHS[months[0] - 1], "month2": MONTHS[months[-1] - 1]}
        out += [_render(n, **span) for n in ("month_range", "month_range_every")]
    if r.months == _QUARTERS:
        out.append(_render("quarters"))
    return out


def _pick(rng: random.Random, options: Sequence[Any]) -> Any:
    """A uniform element of ``options`` (``rng.choice`` costs several times as much)."""
    return options[int(rng.random() * len(options))]


def describe(cron: Cron, rng: random.Random) -> str:
    """An English sentence that says exactly when ``cron`` fires (no cron syntax).

    Draws its wording from ``rng``. ``DescriptionError`` for the one kind of schedule no
    template says: an AND of two day lists (never generated; no expression writes it
    without a ``*`` step either).
    """
    r = reading_of(cron)
    if r.days == "and" and r.doms not in _DOM_STEPS and r.dows not in _DOW_STEPS:
        raise DescriptionError("no template says an AND of two day lists")
    single_month = len(bits(r.months)) == 1
    plain = r.days == "every" and r.months == _ALL_MONTH
    chosen = _pick(rng, _time_options(r.minutes, r.hours, plain))
    if chosen == "minutes":  # a minute phrase and an hour qualifier, drawn apart
        minutes, hours = bits(r.minutes), bits(r.hours)
        time = _text(_pick(rng, _minute_phrases(minutes)))
        time += _text(_pick(rng, _hour_qualifiers(hours, r.hours == _ALL_HOUR)))
    else:
        time = _text(chosen)  # type: ignore[arg-type]
    if chosen[0] in ("daily_at", "every_day_at"):  # says "every day" itself
        day, names_month = "", False
    else:
        wording, names_month = _pick(rng, _day_options(r, single_month))
        day = _text(wording)
    clarifier = _text(_pick(rng, _clarifiers(r)))
    month = "" if names_month else _text(_pick(rng, _month_options(r)))
    sentence = f"{time}{day}{clarifier}{month}."
    return sentence[0].upper() + sentence[1:]
