"""What MeetingSlot says to an agent: the question and the system prompt."""

from __future__ import annotations

from meeting_gym.core.protocol import protocol_instructions
from meeting_gym.envs.meeting_slot.domain.scenario import Scenario
from meeting_gym.envs.meeting_slot.tools import TOOLSET

RULES = """\
Rules:
- A valid start is a whole UTC minute inside the search window such that the whole
  meeting [start, start + duration) lies inside every attendee's working hours on one
  local date and overlaps none of that attendee's busy blocks.
- Intervals are half-open [start, end): a busy block ending at 11:00 leaves 11:00 free.
- Working hours and busy blocks are local times in the attendee's own time zone; busy
  blocks are looked up by the attendee's LOCAL date. Convert with the time zone,
  including daylight-saving changes (a local time that does not exist is never
  available; one that occurs twice is available both times).
- A meeting may not cross local midnight for anyone; only listed weekdays are worked.
- The start must lie inside the window; the meeting may end after it.
- Answer with the EARLIEST valid start as YYYY-MM-DDTHH:MM:SSZ inside
  <answer>...</answer>, or <answer>NONE</answer> if no valid start exists.
  Only the first <answer> block counts."""


def question(scenario: Scenario) -> str:
    """The first observation: duration, UTC window, the rules and how to answer."""
    last = scenario.window_end.isoformat()
    return (
        f"Find the earliest UTC start time for a {scenario.duration_minutes}-minute meeting.\n\n"
        f"Search window: {scenario.window_start.isoformat()} 00:00Z up to {last} 24:00Z "
        f"({scenario.window_days} UTC day{'s' if scenario.window_days > 1 else ''}). "
        "A valid start must fall inside this window.\n\n"
        "Attendees, time zones, working hours and busy calendars are not in this prompt: "
        "use the tools (list_attendees, get_timezone, get_working_hours, get_busy).\n\n"
        f"{RULES}\n\n"
        "Put the earliest valid start in "
        "<answer>YYYY-MM-DDTHH:MM:SSZ</answer>. If no slot exists, answer <answer>NONE</answer>."
    )


SYSTEM_PROMPT = (
    "You are scheduling a meeting across time zones. The question gives the duration and "
    "the UTC search window; everything else is hidden behind tools.\n\n"
    f"{RULES}\n\n{protocol_instructions(TOOLSET)}"
)


SHORT_SYSTEM_PROMPT = (
    "Find the earliest valid UTC start for the meeting. Call tools as "
    '<tool_call>{"name": ..., "arguments": {...}}</tool_call>, several per turn if you like: '
    "list_attendees(), get_timezone(name), get_working_hours(name), get_busy(name, date) "
    "with date YYYY-MM-DD on the attendee's LOCAL calendar.\n"
    "Valid start: a whole UTC minute in the window; [start, start + duration) lies inside "
    "every attendee's working hours on one local date and on a listed weekday, crosses no "
    "local midnight, and overlaps no busy block (half-open). Convert local times with each "
    "time zone, daylight saving included.\n"
    "Answer <answer>YYYY-MM-DDTHH:MM:SSZ</answer>, or <answer>NONE</answer> if none exists."
)
"""The same rules and tool protocol in about a third of the tokens (a trainer's choice: the
rubric grades the reply either way). A small model trained on a CPU pays for every token of
the system prompt on every turn of every episode."""
