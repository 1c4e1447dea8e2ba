"""The 15 curated cases of meeting-slot, with identical worlds, as the ``curated`` split.

meeting-slot is the verifiers environment MeetingSlot succeeds (``vf-eval meeting-slot``).

Each case is written compactly: (id, difficulty, duration, window start, window
days, attendees), an attendee being (name, zone, busy by local date) with
09:00-17:00 Monday-Friday hours unless it says otherwise. Gold answers are not
stored here: the solver computes them, and the tests check them against
meeting-slot's published answers.
"""

from __future__ import annotations

import copy
from typing import Any

from meeting_gym.envs.meeting_slot.domain.scenario import Scenario

NY, LDN, BER = "America/New_York", "Europe/London", "Europe/Berlin"
ALL_DAY = [("09:00", "17:00")]


def _person(
    name: str,
    zone: str,
    busy: dict[str, list[tuple[str, str]]] | None = None,
    hours: tuple[str, str] = ("09:00", "17:00"),
) -> dict[str, Any]:
    return {
        "name": name,
        "timezone": zone,
        "working_hours": {"start": hours[0], "end": hours[1], "weekdays": [0, 1, 2, 3, 4]},
        "busy": {
            day: [{"start": s, "end": e} for s, e in blocks] for day, blocks in (busy or {}).items()
        },
    }


_GAPS = {"2024-03-11": [("09:00", "11:00"), ("11:30", "16:00")]}

_CASES: tuple[tuple[str, str, int, str, int, list[dict[str, Any]]], ...] = (
    ("same_tz_empty_busy", "easy", 30, "2024-03-11", 1, [_person("Ava", NY), _person("Ben", NY)]),
    (
        "overlapping_busy",
        "medium",
        60,
        "2024-03-11",
        1,
        [
            _person("Ava", NY, {"2024-03-11": [("09:00", "12:00")]}),
            _person("Ben", NY, {"2024-03-11": [("11:00", "14:00")]}),
        ],
    ),
    (
        "no_overlap_ny_kolkata",
        "hard",
        30,
        "2024-03-11",
        1,
        [_person("Ava", NY), _person("Diya", "Asia/Kolkata")],
    ),
    (
        "weekend_skip_dst",
        "hard",
        30,
        "2024-03-08",
        4,
        [
            _person("Ava", NY, {"2024-03-08": ALL_DAY}),
            _person("Farid", LDN, {"2024-03-08": ALL_DAY}),
        ],
    ),
    (
        "dst_us_spring_monday",
        "hard",
        30,
        "2024-03-11",
        1,
        [_person("Ava", NY), _person("Farid", LDN)],
    ),
    (
        "inclusive_busy_utc",
        "medium",
        30,
        "2024-03-11",
        1,
        [
            _person("Jules", "UTC", {"2024-03-11": [("09:00", "11:00")]}),
            _person("Kit", "UTC", {"2024-03-11": [("09:00", "11:00")]}),
        ],
    ),
    (
        "gap_30min",
        "medium",
        30,
        "2024-03-11",
        1,
        [_person("Jules", "UTC", _GAPS), _person("Kit", "UTC", _GAPS)],
    ),
    (
        "gap_60min",
        "medium",
        60,
        "2024-03-11",
        1,
        [_person("Jules", "UTC", _GAPS), _person("Kit", "UTC", _GAPS)],
    ),
    (
        "four_person_summer",
        "hard",
        30,
        "2024-06-10",
        1,
        [
            _person("Ava", NY),
            _person("Farid", LDN),
            _person("Elena", BER),
            _person("Jules", "UTC"),
        ],
    ),
    (
        "sydney_ny_none",
        "hard",
        30,
        "2024-06-10",
        1,
        [_person("Hugo", "Australia/Sydney"), _person("Ava", NY)],
    ),
    (
        "shanghai_tokyo",
        "medium",
        30,
        "2024-03-11",
        1,
        [
            _person("Chen", "Asia/Shanghai", hours=("09:00", "18:00")),
            _person("Gita", "Asia/Tokyo", hours=("09:00", "18:00")),
        ],
    ),
    (
        "last_friday_slot",
        "hard",
        30,
        "2024-03-08",
        4,
        [
            _person("Ava", NY),
            _person("Farid", LDN, {"2024-03-08": [("09:00", "16:30")]}),
        ],
    ),
    (
        "dst_eu_monday",
        "hard",
        30,
        "2024-03-29",
        4,
        [
            _person("Farid", LDN, {"2024-03-29": ALL_DAY}),
            _person("Elena", BER, {"2024-03-29": ALL_DAY}),
        ],
    ),
    (
        "three_person_busy",
        "hard",
        30,
        "2024-06-10",
        1,
        [
            _person("Ava", NY),
            _person("Farid", LDN),
            _person("Jules", "UTC", {"2024-06-10": [("09:00", "14:00")]}),
        ],
    ),
    (
        "no_slot_fully_booked",
        "easy",
        30,
        "2024-03-11",
        1,
        [
            _person("Ava", NY, {"2024-03-11": ALL_DAY}),
            _person("Ben", NY, {"2024-03-11": ALL_DAY}),
        ],
    ),
)


def curated_dicts() -> list[dict[str, Any]]:
    """The curated cases as scenario dicts, in their published order."""
    return copy.deepcopy(
        [
            {
                "id": cid,
                "difficulty": level,
                "duration_minutes": duration,
                "window_start": start,
                "window_days": days,
                "world": {"attendees": people},
            }
            for cid, level, duration, start, days, people in _CASES
        ]
    )


CURATED: tuple[Scenario, ...] = tuple(Scenario.from_dict(d) for d in curated_dicts())
CURATED_BY_ID: dict[str, Scenario] = {s.id: s for s in CURATED if s.id}
