"""The 15 curated cases of calendar-math (the env CalendarMath succeeds), in its order.

Leap days (2024, 2023, 1900 not leap, 2000 leap), the year turn both ways, +-365 days from
2024-02-29, the weekdays of 2024-02-29, 2000-01-01 and 1900-01-01, and day counts across
February 2024, across 1999/2000, on the same day and from 2024-02-29 to 2025-02-28.
Difficulty labels are calendar-math's, including its one ``easy`` (the same-day count).
Questions and golds are computed by :meth:`Item.build`, not copied, and the tests check them
against calendar-math's recorded text (devtechedge/calendar-math @ 6bca5b5, MIT).
"""

from __future__ import annotations

from meeting_gym.envs.calendar_math.items import Item

__all__ = ["CURATED", "CURATED_BY_ID"]

CURATED: tuple[Item, ...] = (
    Item.build("add_days", {"start": "2024-02-28", "n": 1}, "hard", "add_leap_feb28"),
    Item.build("add_days", {"start": "2023-02-28", "n": 1}, "hard", "add_nonleap_feb28"),
    Item.build("add_days", {"start": "1900-02-28", "n": 1}, "hard", "add_1900_century_nonleap"),
    Item.build("add_days", {"start": "2000-02-28", "n": 1}, "hard", "add_2000_century_leap"),
    Item.build("add_days", {"start": "2023-12-31", "n": 1}, "hard", "add_year_end"),
    Item.build("add_days", {"start": "2024-01-01", "n": -1}, "hard", "add_year_start_back"),
    Item.build("add_days", {"start": "2024-02-29", "n": 365}, "hard", "add_feb29_plus365"),
    Item.build("add_days", {"start": "2024-02-29", "n": -365}, "hard", "add_feb29_minus365"),
    Item.build("weekday", {"start": "2024-02-29"}, "hard", "wd_2024_feb29"),
    Item.build("weekday", {"start": "2000-01-01"}, "hard", "wd_2000_jan1"),
    Item.build("weekday", {"start": "1900-01-01"}, "hard", "wd_1900_jan1"),
    Item.build("days_between", {"start": "2024-02-28", "end": "2024-03-01"}, "hard", "db_leap_feb"),
    Item.build(
        "days_between", {"start": "1999-12-31", "end": "2000-01-01"}, "hard", "db_millennium"
    ),
    Item.build("days_between", {"start": "2024-01-01", "end": "2024-01-01"}, "easy", "db_same_day"),
    Item.build(
        "days_between",
        {"start": "2024-02-29", "end": "2025-02-28"},
        "hard",
        "db_feb29_to_next_feb28",
    ),
)

CURATED_BY_ID = {item.id: item for item in CURATED}
