"""Pictures of what an episode has revealed: an RGB array and a text grid.

Rows are attendees (in list order) and one last row of starts known to fit
everyone; columns are the UTC grid cells of the action table (the window, then
padding up to the table's maximum window). The answer is a blue column and,
once the episode is over, gold is a yellow one (NONE: a marker in the top-right
corner).
"""

from __future__ import annotations

import numpy as np

from meeting_gym.envs.meeting_slot.domain.timeutil import from_day_number
from meeting_gym.envs.meeting_slot.encoders.reveal import Revealed

CELL_W, ROW_H, GAP, MARGIN = 2, 12, 2, 4
UNKNOWN = (110, 110, 110)
FREE = (60, 170, 80)
BUSY = (190, 60, 50)
OUTSIDE = (25, 25, 25)
FIT = (60, 200, 220)
NO_FIT = (45, 45, 60)
ANSWER = (60, 90, 240)
GOLD = (250, 210, 40)
DAY_LINE = (235, 235, 235)


def rgb_array(rev: Revealed, answer: int | None = None, gold: int | None = None) -> np.ndarray:
    """An ``(H, W, 3)`` uint8 image; ``answer`` / ``gold`` are grid cells, -1 for NONE."""
    table = rev.table
    rows = table.max_attendees + 1
    height = 2 * MARGIN + rows * ROW_H + (rows - 1) * GAP
    width = 2 * MARGIN + table.n_slots * CELL_W
    image = np.zeros((height, width, 3), dtype=np.uint8)
    colors = np.empty((rows, table.n_slots, 3), dtype=np.uint8)
    colors[:] = OUTSIDE
    inside = rev.in_window
    for i in range(table.max_attendees):
        if i >= rev.count:
            continue
        row = colors[i]
        row[inside] = UNKNOWN
        row[rev.available[i] & inside] = FREE
        row[rev.unavailable[i] & inside] = BUSY
    colors[-1][inside] = NO_FIT
    colors[-1][rev.fit] = FIT
    day = table.slots_per_day
    colors[:, ::day][inside[::day]] = DAY_LINE
    cells = np.repeat(colors, CELL_W, axis=1)
    for r in range(rows):
        top = MARGIN + r * (ROW_H + GAP)
        image[top : top + ROW_H, MARGIN : MARGIN + cells.shape[1]] = cells[r]
    for cell, color in ((gold, GOLD), (answer, ANSWER)):
        if cell is None:
            continue
        if cell < 0:
            image[:MARGIN, -3 * MARGIN :] = color
            continue
        x = MARGIN + cell * CELL_W
        image[:, x : x + CELL_W] = color
    return image


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
