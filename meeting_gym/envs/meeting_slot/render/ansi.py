"""The ``ansi`` picture of what an episode has revealed: a text grid by UTC hour.

Rows are attendees (in list order) and one last row of starts known to fit everyone.
The ``rgb_array`` frame is drawn by :mod:`meeting_gym.envs.meeting_slot.render.picture`.
"""

from __future__ import annotations

from meeting_gym.envs.meeting_slot.discrete.reveal import Revealed
from meeting_gym.envs.meeting_slot.domain.timeutil import from_day_number


def ansi(rev: Revealed, answer: int | None = None, gold: int | None = None) -> str:
    """One character per UTC hour: ``.`` free, ``#`` unavailable, ``:`` mixed, ``?`` unknown.

    The last row marks hours holding a start known to fit everyone with ``*``;
    below it ``^`` marks the answer and ``G`` gold (or says NONE).
    """
    table, scenario = rev.table, rev.scenario
    per_hour = 60 // table.grid_minutes if 60 % table.grid_minutes == 0 else 1
    hours = rev.window_slots // per_hour
    width = max(len(p.name) for p in scenario.attendees) + 1
    width = max(width, 5)
    days = [from_day_number(rev.lo // 86_400 + d).isoformat() for d in range(scenario.window_days)]
    header = "".join(f"{d:<24}" for d in days)
    lines = [f"{'UTC':<{width}}|{header.rstrip():<{hours}}|"]
    for i, person in enumerate(scenario.attendees):
        name = person.name if rev.listed or rev.zone_known[i] or rev.hours_known[i] else f"#{i}"
        chars = []
        for h in range(hours):
            cell = slice(h * per_hour, (h + 1) * per_hour)
            free, busy = rev.available[i, cell], rev.unavailable[i, cell]
            if free.all():
                chars.append(".")
            elif busy.all():
                chars.append("#")
            elif (free | busy).all():
                chars.append(":")
            else:
                chars.append("?")
        lines.append(f"{name[: width - 1]:<{width}}|{''.join(chars)}|")
    fit = "".join(
        "*" if rev.fit[h * per_hour : (h + 1) * per_hour].any() else " " for h in range(hours)
    )
    lines.append(f"{'fit':<{width}}|{fit}|")
    marks = [" "] * hours
    notes = []
    for cell, mark, label in ((gold, "G", "gold"), (answer, "^", "answer")):
        if cell is None:
            continue
        if cell < 0:
            notes.append(f"{label}=NONE")
        elif cell // per_hour < hours:
            marks[cell // per_hour] = mark
        else:
            notes.append(f"{label} outside the window")
    lines.append(f"{'':<{width}} {''.join(marks).rstrip()}  {' '.join(notes)}".rstrip())
    return "\n".join(lines) + "\n"
