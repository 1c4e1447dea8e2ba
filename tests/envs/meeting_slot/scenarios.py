"""Small MeetingSlot scenarios written by hand, and UTC text as epoch seconds."""

from __future__ import annotations

from calendar import timegm
from datetime import datetime
from typing import Any


def utc(text: str) -> int:
    """'2024-03-11T13:00:00Z' -> epoch seconds."""
    return timegm(datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").timetuple())


def one_person(
    zone: str,
    start: str,
    end: str,
    window: str,
    duration: int,
    busy: dict[str, list[tuple[str, str]]] | None = None,
    weekdays: tuple[int, ...] = (0, 1, 2, 3, 4, 5, 6),
    days: int = 1,
) -> dict[str, Any]:
    return {
        "duration_minutes": duration,
        "window_start": window,
        "window_days": days,
        "world": {
            "attendees": [
                {
                    "name": "Ava",
                    "timezone": zone,
                    "working_hours": {"start": start, "end": end, "weekdays": list(weekdays)},
                    "busy": {
                        d: [{"start": s, "end": e} for s, e in b] for d, b in (busy or {}).items()
                    },
                }
            ]
        },
    }
