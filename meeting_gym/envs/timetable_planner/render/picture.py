"""The ``rgb_array`` frame: the weekly grid of :mod:`.render` drawn with Pillow.

A column per day and a row per slot; each cell lists its entries (session, room,
teacher), up to :data:`LINES` of them, then ``+k more``. An entry in conflict at that cell
is drawn on red, a clean one on green; a cell with a conflict gets a red border. Above:
the scenario, the budget and the last action; below: the eight scores, the conflict
counts, the unscheduled must_schedule sessions and, at the end, how the episode ended.

Pillow is optional (``pip install "meeting-gym[render]"``) and imported only when a
:class:`Painter` is made. The frame size depends only on the env's bounds (``max_days``,
``max_slots``), so it is the same for every step and episode, as ``RecordVideo`` needs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from meeting_gym.core.pillow import font as _font
from meeting_gym.core.pillow import require_pillow
from meeting_gym.envs.timetable_planner.discrete.interface import Bounds
from meeting_gym.envs.timetable_planner.render.status import Status

WHITE = (255, 255, 255)
INK = (28, 31, 36)
MUTED = (96, 102, 112)
RULE = (190, 195, 203)
OUTSIDE = (232, 234, 238)
CLEAN = (214, 239, 214)
CLASH = (246, 204, 200)
CLASH_BORDER = (214, 58, 48)
PANEL = (242, 244, 247)

MARGIN = 12
SLOT_LABEL = 48
CELL_W = 236
LINE_H = 17
LINES = 4
CELL_H = LINES * LINE_H + 8
HEADER = 58
FOOTER = 96


def frame_size(bounds: Bounds) -> tuple[int, int]:
    """(width, height) of every frame of an env with these bounds."""
    width = 2 * MARGIN + SLOT_LABEL + bounds.days * CELL_W
    height = HEADER + bounds.slots * CELL_H + FOOTER
    return width, height


def _fit(text: str, font: Any, width: float) -> str:
    if font.getlength(text) <= width:
        return text
    while text and font.getlength(text + "...") > width:
        text = text[:-1]
    return text + "..."


class Painter:
    """Draws :class:`~.render.Status` frames of a constant size."""

    def __init__(self, bounds: Bounds) -> None:
        require_pillow()
        self.bounds = bounds
        self.size = frame_size(bounds)

    def frame(self, status: Status) -> np.ndarray:
        image_cls, draw_cls, _ = require_pillow()
        image = image_cls.new("RGB", self.size, WHITE)
        draw = draw_cls.Draw(image)
        width = self.size[0]
        big, small = _font(16), _font(12)
        draw.text((MARGIN, 8), _fit(f"{status.title}  {status.budget}", big, width - 24), INK, big)
        draw.text((MARGIN, 30), _fit(status.last or "reset", small, width - 24), MUTED, small)
        top = HEADER
        left = MARGIN + SLOT_LABEL
        for d in range(self.bounds.days):
            x = left + d * CELL_W
            label = status.days[d] if d < len(status.days) else ""
            draw.text((x + 4, top - 16), label, INK, small)
        for k in range(self.bounds.slots):
            y = top + k * CELL_H
            draw.text((MARGIN, y + 4), f"slot {k}" if k < status.slots else "", MUTED, small)
            for d in range(self.bounds.days):
                x = left + d * CELL_W
                box = (x, y, x + CELL_W - 2, y + CELL_H - 2)
                inside = d < len(status.days) and k < status.slots
                draw.rectangle(box, fill=PANEL if inside else OUTSIDE, outline=RULE)
                entries = status.cells.get((d, k), [])
                shown = entries if len(entries) <= LINES else entries[: LINES - 1]
                for i, entry in enumerate(shown):
                    ly = y + 4 + i * LINE_H
                    fill = CLASH if entry.conflict else CLEAN
                    draw.rectangle((x + 3, ly, x + CELL_W - 5, ly + LINE_H - 2), fill=fill)
                    text = _fit(entry.text(), small, CELL_W - 12)
                    draw.text((x + 6, ly + 1), text, INK, small)
                if len(entries) > LINES:
                    ly = y + 4 + (LINES - 1) * LINE_H
                    more = f"+{len(entries) - LINES + 1} more"
                    draw.text((x + 6, ly + 1), more, CLASH_BORDER, small)
                if any(e.conflict for e in entries):
                    draw.rectangle(box, outline=CLASH_BORDER, width=2)
        y = top + self.bounds.slots * CELL_H + 8
        for line in (
            status.score_line(),
            status.conflict_line(),
            ("unscheduled: " + ", ".join(status.unscheduled)) if status.unscheduled else "",
            status.end,
        ):
            draw.text((MARGIN, y), _fit(line, small, width - 24), INK, small)
            y += 20
        return np.asarray(image, dtype=np.uint8).copy()
