"""An independent implementation of RULES.md for the CronSchedule tests (stdlib only).

It shares no code with ``meeting_gym.envs.cron_schedule``: a regular-expression grammar
instead of the package's character-level parser, Python sets instead of bit masks, a
day-rule check per calendar date instead of month masks, and a minute-by-minute walk
instead of jumping to passing days. The tests compare the two on thousands of
expressions; where they disagree, one of them is wrong.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from functools import lru_cache

BOUNDS = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 7)]
NAMES = [
    {},
    {},
    {},
    {
        m: i + 1
        for i, m in enumerate(
            ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        )
    },
    {d: i for i, d in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])},
]
MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_VALUE = r"(?:[0-9]+|[A-Za-z]{3})"
_ELEMENT = re.compile(
    rf"(?:(?P<star>\*)|(?P<a>{_VALUE})(?:-(?P<b>{_VALUE}))?)(?:/(?P<step>[0-9]+))?"
)
_WINDOW = (date(2024, 1, 1), date(2052, 12, 31))


class Schedule:
    """Value sets (weekday 7 kept as 7 here, matched against Sunday) and the day rule."""

    def __init__(self, sets: list[set[int]], star_day: bool) -> None:
        self.minute, self.hour, self.dom, self.month, self.dow = sets
        self.star_day = star_day

    def day_ok(self, day: date) -> bool:
        if day.month not in self.month:
            return False
        weekday = day.isoweekday()  # Monday 1 ... Sunday 7
        in_dow = weekday in self.dow or (weekday == 7 and 0 in self.dow)
        in_dom = day.day in self.dom
        return (in_dom and in_dow) if self.star_day else (in_dom or in_dow)


def _digits(text: str) -> int:
    """The value of ASCII digits; past eight digits, a number larger than any field."""
    text = text.lstrip("0") or "0"
    return int(text) if len(text) <= 8 else 10**9


def _number(text: str, field: int) -> int | None:
    if text.isdigit() and text.isascii():
        return _digits(text)
    return NAMES[field].get(text.lower()) if len(text) == 3 else None


def _expand(text: str, field: int) -> set[int] | None:
    lo, hi = BOUNDS[field]
    out: set[int] = set()
    for element in text.split(","):
        match = _ELEMENT.fullmatch(element)
        if match is None:
            return None
        step = _digits(match["step"]) if match["step"] is not None else 1
        if step < 1:
            return None
        if match["star"]:
            first, last = lo, hi
        else:
            first = _number(match["a"], field)
            if first is None:
                return None
            if match["b"] is not None:
                last = _number(match["b"], field)
            else:
                last = hi if match["step"] is not None else first
            if last is None:
                return None
        if not (lo <= first <= hi and lo <= last <= hi) or first > last:
            return None
        out.update(range(first, last + 1, step))
    return out


def parse(text: str) -> Schedule | None:
    """The schedule of a valid expression, None for an invalid one."""
    body = text.strip(" \t\r\n")
    if body.startswith("@"):
        body = MACROS.get(body, "")
        if not body:
            return None
    if re.search(r"[^ \t\S]", body):  # whitespace other than space and tab
        return None
    parts = re.split(r"[ \t]+", body)
    if len(parts) != 5 or not all(parts):
        return None
    sets = [_expand(part, field) for field, part in enumerate(parts)]
    if any(s is None for s in sets):
        return None
    return Schedule(sets, parts[2].startswith("*") or parts[4].startswith("*"))


def walk(schedule: Schedule, start: datetime, count: int, max_days: int) -> list[str]:
    """The first ``count`` firing minutes after ``start``, walking every minute.

    Stops after ``max_days`` days; the weekday test runs once per date.
    """
    current = start.replace(second=0, microsecond=0) + timedelta(minutes=1)
    day = current.date()
    hour, minute = current.hour, current.minute
    passes = schedule.day_ok(day)
    out: list[str] = []
    end = day + timedelta(days=max_days)
    minutes, hours = schedule.minute, schedule.hour
    while len(out) < count and day < end:
        if passes and hour in hours and minute in minutes:
            out.append(f"{day.isoformat()} {hour:02d}:{minute:02d}")
        minute += 1
        if minute == 60:
            minute = 0
            hour += 1
            if hour == 24:
                hour = 0
                day += timedelta(days=1)
                passes = schedule.day_ok(day)
    return out


def firing_days(schedule: Schedule) -> frozenset[date]:
    """The dates of 2024-2052 on which the day rule passes (every date on every weekday)."""
    out = set()
    day, last = _WINDOW
    while day <= last:
        if schedule.day_ok(day):
            out.add(day)
        day += timedelta(days=1)
    return frozenset(out)


@lru_cache(maxsize=1024)
def firing_days_of(text: str) -> frozenset[date]:
    """:func:`firing_days` of a valid expression's text, remembered."""
    schedule = parse(text)
    assert schedule is not None, text
    return firing_days(schedule)


def equivalent_texts(a: str, b: str) -> bool:
    """:func:`equivalent` of two valid expressions' texts (day sets remembered)."""
    sa, sb = parse(a), parse(b)
    assert sa is not None and sb is not None
    days_a, days_b = firing_days_of(a), firing_days_of(b)
    if not days_a and not days_b:
        return True
    return days_a == days_b and sa.minute == sb.minute and sa.hour == sb.hour


def equivalent(a: Schedule, b: Schedule) -> bool:
    """Same firing minutes, by brute force over every date of 2024-2052."""
    days_a, days_b = firing_days(a), firing_days(b)
    if not days_a and not days_b:
        return True
    return days_a == days_b and a.minute == b.minute and a.hour == b.hour


# ----------------------------------------------------------------------------- random expressions

FAMILIES = (
    "ordinary",
    "dom_only",
    "dow_only",
    "both_days",
    "star_step_dom",
    "star_step_dow",
    "dow_n_slash_step",
    "dow_range_to_7",
    "equal_range",
    "macro",
    "full_dom_with_dow",
    "month_end",
    "wild",
)
"""Families of random expressions; several over-sample the trouble spots of RULES.md."""

_MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
_DAYS = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"]


def _name(rng, field: int, value: int) -> str:
    """A value as digits (sometimes zero-padded) or, where allowed, a name in any case."""
    if field == 3 and rng.random() < 0.3:
        return rng.choice([str.upper, str.lower, str.title])(_MONTHS[value - 1])
    if field == 4 and value < 7 and rng.random() < 0.3:
        return rng.choice([str.upper, str.lower, str.title])(_DAYS[value])
    if rng.random() < 0.05:
        return f"0{value}"
    return str(value)


def random_field(rng, field: int, equal_ranges: bool = False) -> str:
    """One random valid field text: lists of values, ranges and steps."""
    lo, hi = BOUNDS[field]
    if field == 4 and rng.random() < 0.2:
        hi = 6
    parts = []
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        kind = rng.random()
        a = rng.randint(lo, hi)
        if kind < 0.35:
            parts.append(_name(rng, field, a))
        elif kind < 0.6:
            b = rng.randint(a, hi)
            if a == b and not equal_ranges:
                b = min(hi, a + 1)
            parts.append(f"{_name(rng, field, a)}-{_name(rng, field, b)}")
        elif kind < 0.75:
            b = rng.randint(a, hi)
            if a == b and not equal_ranges:
                b = min(hi, a + 1)
            parts.append(
                f"{_name(rng, field, a)}-{_name(rng, field, b)}/{rng.randint(1, hi - lo + 2)}"
            )
        elif kind < 0.85:
            parts.append(f"*/{rng.randint(1, hi - lo + 3)}")
        elif kind < 0.92:
            parts.append(f"{_name(rng, field, a)}/{rng.randint(1, hi - lo + 1)}")
        else:
            parts.append("*")
    return ",".join(parts)


def _starless(rng, field: int) -> str:
    """A random field that does not begin with ``*`` (so the OR rule can apply)."""
    while True:
        text = random_field(rng, field)
        if not text.startswith("*"):
            return text


def _star_step(rng, field: int) -> str:
    lo, hi = BOUNDS[field]
    return f"*/{rng.randint(1, hi - lo + 1)}"


def random_expression(rng, family: str | None = None) -> str:
    """A random valid expression of ``family`` (random family if None)."""
    family = family or rng.choice(FAMILIES)
    minute = random_field(rng, 0) if rng.random() < 0.7 else str(rng.randint(0, 59))
    hour = random_field(rng, 1) if rng.random() < 0.6 else str(rng.randint(0, 23))
    month = "*" if rng.random() < 0.6 else random_field(rng, 3)
    dom = dow = "*"
    if family == "ordinary":
        pass
    elif family == "dom_only":
        dom = random_field(rng, 2)
    elif family == "dow_only":
        dow = random_field(rng, 4)
    elif family == "both_days":
        dom, dow = _starless(rng, 2), _starless(rng, 4)
    elif family == "star_step_dom":
        dom, dow = _star_step(rng, 2), str(rng.randint(0, 7))
    elif family == "star_step_dow":
        dom, dow = str(rng.randint(1, 28)), _star_step(rng, 4)
    elif family == "dow_n_slash_step":
        dow = f"{rng.randint(0, 7)}/{rng.randint(1, 4)}"
    elif family == "dow_range_to_7":
        dow = f"{rng.randint(0, 6)}-7"
    elif family == "equal_range":
        field = rng.randint(0, 4)
        lo, hi = BOUNDS[field]
        a = rng.randint(lo, hi)
        text = f"{_name(rng, field, a)}-{_name(rng, field, a)}"
        if rng.random() < 0.3:
            text += f"/{rng.randint(1, 20)}"
        parts = [minute, hour, dom, month, dow]
        parts[field] = text
        return " ".join(parts)
    elif family == "macro":
        return rng.choice(sorted(MACROS))
    elif family == "full_dom_with_dow":
        dom, dow = "1-31", _starless(rng, 4)
    elif family == "month_end":
        dom = ",".join(str(d) for d in sorted(rng.sample(range(28, 32), rng.randint(1, 3))))
        month = rng.choice(("2", "2,4", "*", "4-6", "FEB", "*/2", "1-12/3"))
        dow = rng.choice(("*", "*", str(rng.randint(0, 7)), "*/3"))
    else:  # wild: every field random, stars and all
        dom, dow = random_field(rng, 2), random_field(rng, 4)
    separator = rng.choice((" ", " ", " ", "  ", "\t"))
    return separator.join((minute, hour, dom, month, dow))
