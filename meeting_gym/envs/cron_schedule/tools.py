"""CronSchedule-Tools-v0's one tool: ``next_runs``, a plain function turned into a ToolSet.

The tool does not look at the hidden task (its ``world``): it runs any candidate, so an
agent can test an expression before it commits to it. Results are strings; a bad
expression, time or count gives a string that starts with ``error:`` and says what is
wrong (the parser's own reason for an invalid expression).
"""

from __future__ import annotations

import json
from typing import Any

from meeting_gym.core.tools import ToolSet
from meeting_gym.envs.cron_schedule.expression import CronError, parse
from meeting_gym.envs.cron_schedule.items import MAX_TIMES
from meeting_gym.envs.cron_schedule.schedule import next_times, parse_time


def next_runs(world: Any, expression: str, after: str, count: int = 5) -> str:
    """Return the next run times of a cron expression, strictly after a given time: a
    JSON array of "YYYY-MM-DD HH:MM" strings, earliest first (an empty array if the
    expression never fires, such as the 30th of February), or a result starting with
    "error:" that says what is wrong with the expression, the time or the count.

    Args:
        expression: A cron expression: five fields (minute hour day-of-month month
            day-of-week) or a macro such as @daily.
        after: The time to count from, as YYYY-MM-DD HH:MM (runs at exactly this time
            are not listed).
        count: How many run times to return, 1 to 50.
    """
    if not 1 <= count <= MAX_TIMES:
        return f"error: count must be from 1 to {MAX_TIMES}, got {count}"
    try:
        cron = parse(expression)
    except CronError as exc:
        return f"error: invalid expression: {exc}"
    try:
        start = parse_time(after)
    except ValueError as exc:
        return f"error: invalid time for after: {exc}"
    return json.dumps(next_times(cron, start, count))


TOOLSET = ToolSet([next_runs])
