"""Small, strict converters between text and integers for clock times and dates.

Times of day are minutes after local midnight (0..1440); instants are integer
seconds since the Unix epoch in UTC. Nothing here depends on the machine's time
zone.
"""

from __future__ import annotations

import re
from datetime import date
from functools import lru_cache

DAY = 86_400
EPOCH = date(1970, 1, 1)
WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

# ASCII digits only: a bare \d would also accept full-width or Arabic-Indic digits.
_HM = re.compile(r"(\d{2}):(\d{2})", re.ASCII)
_ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})", re.ASCII)


def parse_hm(text: str, *, allow_24: bool = False) -> int:
    """'HH:MM' -> minutes after midnight. '24:00' only when ``allow_24``."""
    match = _HM.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"not a time of day in HH:MM form: {text!r}")
    hour, minute = int(match[1]), int(match[2])
    if hour == 24 and minute == 0:
        if not allow_24:
            raise ValueError(f"24:00 is allowed only as an end time: {text!r}")
        return 1440
    if hour > 23 or minute > 59:
        raise ValueError(f"not a time of day in HH:MM form: {text!r}")
    return hour * 60 + minute


_HM_TEXT = tuple(f"{m // 60:02d}:{m % 60:02d}" for m in range(1441))


def format_hm(minutes: int) -> str:
    """Minutes after midnight -> 'HH:MM' (a table look-up: it runs for every busy block)."""
    if 0 <= minutes <= 1440:
        return _HM_TEXT[minutes]
    hour, minute = divmod(minutes, 60)
    return f"{hour:02d}:{minute:02d}"


def parse_date(text: str) -> date:
    """'YYYY-MM-DD' -> date, strictly (no other spellings)."""
    match = _ISO_DATE.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"not a date in YYYY-MM-DD form: {text!r}")
    try:
        return date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        raise ValueError(f"not a calendar date: {text!r}") from None


_EPOCH_ORDINAL = EPOCH.toordinal()


def day_number(day: date) -> int:
    """Days since 1970-01-01 (ordinal arithmetic: no timedelta to build and read)."""
    return day.toordinal() - _EPOCH_ORDINAL


def from_day_number(number: int) -> date:
    """The date ``number`` days after 1970-01-01 (hot in the solver: no timedelta)."""
    return date.fromordinal(_EPOCH_ORDINAL + number)


@lru_cache(maxsize=4096)
def _iso_day(number: int) -> str:
    return from_day_number(number).isoformat()


def format_utc(instant: int) -> str:
    """Epoch seconds -> canonical 'YYYY-MM-DDTHH:MM:SSZ'.

    Plain arithmetic on a cached date string: every answer and every gold goes
    through here, and ``datetime.strftime`` was a fifth of a discrete step.
    """
    number, rest = divmod(instant, DAY)
    minutes, seconds = divmod(rest, 60)
    return f"{_iso_day(number)}T{_HM_TEXT[minutes]}:{seconds:02d}Z"


def utc_midnight(day: date) -> int:
    return day_number(day) * DAY
