"""The four MeetingSlot tools: plain functions over the hidden scenario.

Each function is the single definition of a tool: its OpenAI schema (through
:class:`~meeting_gym.agentkit.ToolSet`), its text-protocol call and its
discrete actions are all derived from it. Results are strings; bad arguments
give a string that starts with ``error:``.
"""

from __future__ import annotations

import json

from meeting_gym.core.tools import ToolSet
from meeting_gym.envs.meeting_slot.domain.scenario import Attendee, Scenario
from meeting_gym.envs.meeting_slot.domain.timeutil import WEEKDAY_NAMES, format_hm, parse_date


def _person(world: Scenario, name: str) -> Attendee | str:
    person = world.attendee(name)
    if person is None:
        names = ", ".join(p.name for p in world.attendees)
        return f"error: unknown attendee {name!r}; attendees are: {names}"
    return person


def list_attendees(world: Scenario) -> str:
    """List the names of the meeting's attendees, as a JSON array of strings."""
    return json.dumps([p.name for p in world.attendees], ensure_ascii=False)


def get_timezone(world: Scenario, name: str) -> str:
    """Return the attendee's IANA time zone, e.g. America/New_York.

    Args:
        name: The attendee's name, as listed by list_attendees.
    """
    person = _person(world, name)
    return person if isinstance(person, str) else person.timezone


def get_working_hours(world: Scenario, name: str) -> str:
    """Return the attendee's local working hours and working weekdays as JSON.

    The object has "start" and "end" (local HH:MM, end may be 24:00), "weekdays"
    (0 = Monday ... 6 = Sunday) and "weekday_names". Working hours never wrap
    past local midnight.

    Args:
        name: The attendee's name, as listed by list_attendees.
    """
    person = _person(world, name)
    if isinstance(person, str):
        return person
    return json.dumps(
        {
            "start": format_hm(person.work_start),
            "end": format_hm(person.work_end),
            "weekdays": list(person.weekdays),
            "weekday_names": [WEEKDAY_NAMES[d] for d in person.weekdays],
        }
    )


def get_busy(world: Scenario, name: str, date: str) -> str:
    """Return the attendee's busy blocks on one LOCAL date, as a JSON array.

    Each block is {"start": "HH:MM", "end": "HH:MM"} in the attendee's local
    time, half-open [start, end). An empty array means no busy blocks.

    Args:
        name: The attendee's name, as listed by list_attendees.
        date: A calendar date YYYY-MM-DD in the attendee's own time zone.
    """
    person = _person(world, name)
    if isinstance(person, str):
        return person
    try:
        day = parse_date(date)
    except ValueError as exc:
        return f"error: {exc}"
    blocks = person.busy_on(day)
    return json.dumps([{"start": format_hm(s), "end": format_hm(e)} for s, e in blocks])


TOOLSET = ToolSet([list_attendees, get_timezone, get_working_hours, get_busy])
