"""The hand-picked CronSchedule cases: the traps of Vixie cron, each with its gold.

Write tasks (the reference is the gold; any equivalent expression is correct) and read
tasks (the gold run times are computed by :func:`~.schedule.next_times` and written out by
hand in ``tests/envs/cron_schedule/test_cron_env.py``, where the oracle's minute walk checks them
too).
They cover the OR rule, the AND rule through ``*/N``, Feb 29 in leap and common years
(2100 is not leap), the 31st in short months, ``7`` and ``0`` as Sunday, names, macros,
quarterly months, weekday ``N/STEP`` and starts exactly on a run time: 8 write
and 12 read tasks.
"""

from __future__ import annotations

from meeting_gym.envs.cron_schedule.items import CronItem

__all__ = ["CURATED", "CURATED_BY_ID"]


def _write(id: str, level: str, expression: str, description: str) -> CronItem:
    return CronItem.build("write", level, expression, description=description, id=id)


def _read(id: str, level: str, expression: str, start: str, n: int = 3) -> CronItem:
    return CronItem.build("read", level, expression, start=start, num_times=n, id=id)


CURATED: tuple[CronItem, ...] = (
    _write(
        "write_or_13th_or_friday",
        "3",
        "0 9 13 * 5",
        "At 09:00 on the 13th of the month and also on every Friday.",
    ),
    _write(
        "write_and_odd_mondays",
        "4",
        "0 0 */2 * 1",
        "At 00:00 on Mondays that fall on an odd-numbered date.",
    ),
    _write(
        "write_and_weekday_step",
        "4",
        "0 18 15 * */2",
        "At 18:00 on the 15th of the month, but only when it falls on a Tuesday, Thursday, "
        "Saturday or Sunday.",
    ),
    _write(
        "write_feb_29",
        "4",
        "0 12 29 2 *",
        "At 12:00 on February 29 (which happens only in leap years).",
    ),
    _write(
        "write_31st",
        "4",
        "30 8 31 * *",
        "At 08:30 on the 31st of the month (only in months that have that day).",
    ),
    _write("write_sunday", "2", "45 23 * * 0", "At 23:45 on Sundays."),
    _write(
        "write_quarterly",
        "2",
        "0 6 1 */3 *",
        "At 06:00 on the 1st of the month in the first month of each quarter (January, "
        "April, July and October).",
    ),
    _write(
        "write_weekday_mornings",
        "2",
        "*/15 7-11 * * 1-5",
        "Every 15 minutes between 07:00 and 11:59 on weekdays (Monday through Friday).",
    ),
    _read("read_or_13th_or_friday", "3", "0 9 13 * FRI", "2024-11-07 12:00"),
    _read("read_or_full_dom_is_every_day", "3", "0 9 1-31 * 1", "2024-01-03 12:00"),
    _read("read_or_empty_dom_side", "4", "0 9 31 2 1", "2024-01-31 10:00"),
    _read("read_and_odd_mondays_start_on_run", "4", "0 0 */2 * 1", "2024-01-01 00:00"),
    _read("read_feb_29_across_2100", "4", "0 12 29 2 *", "2096-03-01 00:00"),
    _read("read_31st_in_short_months", "4", "30 8 31 * *", "2024-04-15 00:00"),
    _read("read_month_end_common_february", "4", "0 0 28-31 * *", "2023-02-27 12:00", 5),
    _read("read_sunday_as_7", "3", "0 0 * * 7", "2024-03-01 00:00"),
    _read("read_range_to_7_start_on_run", "3", "0 10 * * 5-7", "2024-03-01 10:00"),
    _read("read_weekday_n_step", "4", "0 0 * * 5/2", "2024-01-01 00:00"),
    _read("read_names_mixed_case", "4", "15 10 * JAN,jul sat,SUN", "2024-06-28 12:00"),
    _read("read_weekly_macro_start_on_run", "4", "@weekly", "2024-03-03 00:00"),
)

CURATED_BY_ID = {item.id: item for item in CURATED}
