"""The picture of a MeetingSlot episode: an RGB frame drawn with Pillow, and a pygame window.

One frame shows, on a UTC time axis scaled to the search window (day labels with
date and weekday, hour ticks):

* one row per attendee of the scenario (never an empty slot), labelled with the
  name once listed and the zone and working hours once revealed ("attendee 2",
  "zone ?" until then), shaded per grid cell: free, busy, outside working hours,
  or not revealed yet;
* a row of the starts known to fit everyone;
* the agent's answer (blue) and, once the episode is over, gold (amber) as bold
  vertical markers with labels; ``NONE`` is written out in their lanes;
* a legend, and the episode's state: turn / max_turns, the last tool call and a
  short form of its result, and at the end the reward with its rubric terms.

Pillow and pygame are optional (``pip install "meeting-gym[render]"``) and
imported only when a :class:`Painter` or :class:`Window` is built. The frame size
depends only on the action table's ``max_attendees``, so it is constant within
an env (as ``RecordVideo`` needs). What does not change within an episode (title,
axis, legend) is drawn once per episode and cached as an array; each frame copies
it and redraws only two bands (the rows with the markers, and the status panel),
pasting text from cached glyph masks. :class:`Layout` tells where everything is.

Why one module of about 750 lines: the frame is one drawing. The layout, the cached
background, the pen's glyph cache and the two redrawn bands share one set of coordinates
and fonts, and a frame's speed (a render-rate row in the benchmarks) rests on them staying
in step.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium.error import DependencyNotInstalled

from meeting_gym.core.pillow import INSTALL_HINT, require_pillow
from meeting_gym.core.pillow import font as _font
from meeting_gym.core.protocol import AnswerAction, InvalidAction, parse_action
from meeting_gym.envs.meeting_slot.domain.solver import free_intervals
from meeting_gym.envs.meeting_slot.domain.timeutil import (
    DAY,
    format_hm,
    format_utc,
    from_day_number,
)
from meeting_gym.envs.meeting_slot.rubric import NONE, RUBRIC, parse_answer

if TYPE_CHECKING:
    from PIL import Image

    from meeting_gym.core.episode import Episode
    from meeting_gym.envs.meeting_slot.discrete.reveal import Revealed
    from meeting_gym.envs.meeting_slot.domain.scenario import Attendee


# ----------------------------------------------------------------------------- look

WHITE = (255, 255, 255)
INK = (28, 31, 36)
MUTED = (96, 102, 112)
RULE = (70, 74, 82)
PANEL = (242, 244, 247)
FREE = (56, 158, 64)
BUSY = (214, 58, 48)
OFF_HOURS = (128, 134, 146)
UNKNOWN = (212, 216, 222)
FIT = (0, 150, 170)
NO_FIT = (236, 238, 241)
ANSWER = (30, 80, 230)
GOLD = (242, 163, 0)
CELL_COLORS = (UNKNOWN, FREE, BUSY, OFF_HOURS)
"""Per cell category: 0 not revealed yet, 1 free, 2 busy, 3 outside working hours."""

LEGEND = (
    (FREE, "free"),
    (BUSY, "busy"),
    (OFF_HOURS, "outside working hours"),
    (UNKNOWN, "not revealed yet"),
    (FIT, "start known to fit everyone"),
    (ANSWER, "agent's answer"),
    (GOLD, "gold (shown at the end)"),
)
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")

# ----------------------------------------------------------------------------- geometry

WIDTH = 1280
MARGIN = 16
PLOT_X0 = 272
PLOT_X1 = WIDTH - 32
TITLE_Y, SUBTITLE_Y = 10, 40
DAY_Y, HOUR_Y, AXIS_Y = 70, 94, 114
LANE_H, LANE_GAP = 24, 4
ROWS_Y = AXIS_Y + 2 * (LANE_H + LANE_GAP) + 6
ROW_H, MAX_ROW_H, ROW_GAP, FIT_H = 48, 84, 6, 28
LINE_H = 22
STATUS_LINES = 4
MARKER_W = 5
TOKEN, MAX_LINE = 16, 400
"""Status lines are pasted from pieces of at most TOKEN characters, and cut at MAX_LINE."""


def frame_size(max_attendees: int) -> tuple[int, int]:
    """``(height, width)`` of every frame for an action table of ``max_attendees``."""
    bottom = ROWS_Y + max_attendees * (ROW_H + ROW_GAP) + FIT_H
    height = bottom + 18 + LINE_H + 14 + STATUS_LINES * LINE_H + 16 + MARGIN
    return -(-height // 16) * 16, WIDTH  # multiples of 16 suit video encoders


class Layout:
    """Where things are on the frames of one episode (pixels, origin top-left).

    The time axis spans the window ``[lo, lo + window_days * 86400)``; ``x_at``
    maps an instant to its column (clamped to the plot), ``row_box(i)`` is
    attendee ``i``'s cells, ``fit_box`` the row of known fits, ``lane_box`` the
    label lane of the ``"answer"`` or ``"gold"`` marker.
    """

    def __init__(self, max_attendees: int, count: int, lo: int, window_days: int) -> None:
        self.height, self.width = frame_size(max_attendees)
        self.count = count
        self.lo = lo
        self.hi = lo + window_days * DAY
        self.window_days = window_days
        self.plot = (PLOT_X0, PLOT_X1)
        self.scale = (PLOT_X1 - PLOT_X0) / (self.hi - lo)  # pixels per second
        room = max_attendees * (ROW_H + ROW_GAP)  # fewer attendees get taller rows
        self.row_h = min(MAX_ROW_H, room // max(count, 1) - ROW_GAP)
        reserved = ROWS_Y + room + FIT_H
        self.legend_y = reserved + 18
        self.status_y = self.legend_y + LINE_H + 14

    def x_at(self, instant: int) -> int:
        """The column of a UTC instant, clamped to the plot."""
        x = PLOT_X0 + round((instant - self.lo) * self.scale)
        return min(max(x, PLOT_X0), PLOT_X1)

    def row_box(self, attendee: int) -> tuple[int, int, int, int]:
        if not 0 <= attendee < self.count:
            raise IndexError(f"no row for attendee {attendee} (the scenario has {self.count})")
        top = ROWS_Y + attendee * (self.row_h + ROW_GAP)
        return PLOT_X0, top, PLOT_X1, top + self.row_h

    @property
    def rows_bottom(self) -> int:
        """The bottom of the last attendee row (where the markers' lines end)."""
        return ROWS_Y + self.count * (self.row_h + ROW_GAP) - ROW_GAP

    @property
    def fit_box(self) -> tuple[int, int, int, int]:
        top = ROWS_Y + self.count * (self.row_h + ROW_GAP)
        return PLOT_X0, top, PLOT_X1, top + FIT_H

    def lane_box(self, kind: str) -> tuple[int, int, int, int]:
        top = AXIS_Y + 4 + ("answer", "gold").index(kind) * (LANE_H + LANE_GAP)
        return PLOT_X0, top, PLOT_X1, top + LANE_H


# ----------------------------------------------------------------------------- state


@dataclass(frozen=True)
class Status:
    """What the frame says about the episode besides the grid."""

    turn: int
    max_turns: int
    mode: str
    last_call: str | None
    last_result: str | None
    answered: bool
    answer: str | None
    """The answer block's content, as given (None: no answer)."""
    over: bool
    gold: int | str | None
    """Gold as epoch seconds or ``"NONE"``, only once the episode is over."""
    grade: dict[str, float] | None

    @classmethod
    def of(
        cls,
        episode: Episode,
        turn: int,
        max_turns: int,
        transcript: list[tuple[str, str]],
        mode: str,
    ) -> Status:
        over = episode.done or turn >= max_turns
        call, result = _last_exchange(transcript, mode)
        gold: int | str | None = None
        if over:
            gold = NONE if episode.truth.gold is None else episode.truth.gold
        grade = episode.outcome() if over else None
        return cls(
            turn, max_turns, mode, call, result, episode.done, episode.answer, over, gold, grade
        )


def _last_exchange(transcript: list[tuple[str, str]], mode: str) -> tuple[str | None, str | None]:
    """The last action (readable) and its result, from the env's transcript."""
    for back in range(len(transcript) - 1, -1, -1):
        kind, text = transcript[back]
        if kind != "action":
            continue
        result = None
        if back + 1 < len(transcript) and transcript[back + 1][0] == "observation":
            result = transcript[back + 1][1]
        return (_readable_action(text) if mode == "text" else text), result
    return None, None


@lru_cache(maxsize=16)
def _readable_action(text: str) -> str:
    """A text-mode action as ``tool(args)`` calls, ``answer(...)`` or a quote of it."""
    parsed = parse_action(text)
    if isinstance(parsed, AnswerAction):
        return f"answer({parsed.answer})"
    if isinstance(parsed, InvalidAction):
        return f"(not understood) {' '.join(text[:200].split())[:80]}"
    parts = []
    for call in parsed.calls:
        arguments = call.arguments
        if isinstance(arguments, dict):
            shown = ", ".join(str(v) for v in arguments.values())
        else:
            shown = json.dumps(arguments, ensure_ascii=False)
        parts.append(f"{call.name}({shown})")
    if len(parts) > 2:
        return f"{parts[0]}, {parts[1]} and {len(parts) - 2} more calls"
    return ", ".join(parts)


@lru_cache(maxsize=16)
def _short_result(text: str) -> str:
    """A tool result on one line; a JSON array of several results as ``a | b | ...``."""
    text = text[:2000]
    try:
        value = json.loads(text)
    except ValueError:
        return " ".join(text.split())
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return " | ".join(" ".join(v.split()) for v in value)
    return " ".join(text.split())


# ----------------------------------------------------------------------------- drawing


def _require_pillow() -> Any:
    return require_pillow("rgb_array and human rendering need it")


@lru_cache(maxsize=1024)
def _clip(text: str, font: Any, width: float) -> str:
    """``text`` shortened with an ellipsis to fit ``width`` pixels."""
    text = text[:400]
    if font.getlength(text) <= width:
        return text
    low, high = 0, len(text)
    while low < high:  # the longest prefix that fits with the ellipsis
        mid = (low + high + 1) // 2
        if font.getlength(text[:mid] + "...") <= width:
            low = mid
        else:
            high = mid - 1
    return text[:low].rstrip() + "..."


@lru_cache(maxsize=1024)
def _stamp(text: str, font: Any, anchor: str) -> tuple[Any, int, int]:
    """``text`` drawn once as an ``L`` mask, with its offset from the anchor point."""
    image_module, draw_module, _ = _require_pillow()
    left, top, right, bottom = font.getbbox(text, anchor=anchor)
    mask = image_module.new("L", (max(right - left, 1), max(bottom - top, 1)), 0)
    draw_module.Draw(mask).text((-left, -top), text, font=font, fill=255, anchor=anchor)
    return mask, left, top


@lru_cache(maxsize=4096)
def _advance(text: str, font: Any) -> float:
    return font.getlength(text)


def _tokens(text: str) -> list[str]:
    """Words and single spaces, long words cut in chunks: the pieces a line is pasted from."""
    out: list[str] = []
    for i, word in enumerate(text.split(" ")):
        if i:
            out.append(" ")
        out.extend(word[k : k + TOKEN] for k in range(0, len(word), TOKEN))
    return out


class _Pen:
    """``ImageDraw`` whose text is pasted from cached masks.

    Frames repeat most strings (labels, legend, hours): :meth:`text` pastes a whole
    string's cached mask. A line that changes every step (the last tool result) is
    drawn by :meth:`line_of` from cached masks of its words, because Pillow's glyph
    rendering of a long new string costs milliseconds.
    """

    def __init__(self, image: Image.Image, top: int = 0) -> None:
        """Draws on ``image``, a band of the frame starting at row ``top`` (frame coordinates)."""
        self.image, self.top = image, top
        self.draw = _require_pillow()[1].Draw(image)

    def rectangle(self, box: tuple[float, float, float, float], **style: Any) -> None:
        x0, y0, x1, y1 = box
        self.draw.rectangle((x0, y0 - self.top, x1, y1 - self.top), **style)

    def line(self, points: list[tuple[float, float]], **style: Any) -> None:
        self.draw.line([(x, y - self.top) for x, y in points], **style)

    def text(
        self, xy: tuple[float, float], text: str, *, font: Any, fill: Any, anchor: str = "la"
    ) -> None:
        mask, left, top = _stamp(text, font, anchor)
        self.image.paste(fill, (round(xy[0]) + left, round(xy[1]) + top - self.top), mask)

    def line_of(
        self, xy: tuple[float, float], text: str, *, font: Any, fill: Any, width: float
    ) -> None:
        """``text`` on one line, cut with ``...`` to ``width`` pixels."""
        x, y = xy
        limit = x + width - _advance("...", font)
        pieces = _tokens("".join(c if c.isprintable() else " " for c in text[:MAX_LINE]))
        total = sum(_advance(piece, font) for piece in pieces)
        cut = total > width
        for piece in pieces:
            advance = _advance(piece, font)
            if cut and x + advance > limit:
                while piece and x + _advance(piece, font) > limit:
                    piece = piece[:-1]
                if piece.strip():
                    self.text((x, y), piece, font=font, fill=fill)
                    x += _advance(piece, font)
                self.text((x, y), "...", font=font, fill=fill)
                return
            if piece != " ":
                self.text((x, y), piece, font=font, fill=fill)
            x += advance


def _weekdays(days: tuple[int, ...]) -> str:
    """``(0, 1, 2, 3, 4)`` -> ``Mon-Fri``; ``(0, 2, 5, 6)`` -> ``Mon,Wed,Sat,Sun``."""
    days = tuple(sorted(set(days)))
    if days == tuple(range(7)):
        return "every day"
    runs: list[list[int]] = []
    for day in days:
        if runs and day == runs[-1][-1] + 1:
            runs[-1].append(day)
        else:
            runs.append([day])
    parts = [
        f"{WEEKDAYS[run[0]]}-{WEEKDAYS[run[-1]]}"
        if len(run) > 2
        else ",".join(WEEKDAYS[d] for d in run)
        for run in runs
    ]
    return ",".join(parts) or "no days"


def row_labels(rev: Revealed, i: int) -> tuple[str, str, str, str]:
    """Attendee ``i``'s name, zone, working hours and busy-calendar lines, as revealed."""
    person = rev.scenario.attendees[i]
    named = rev.listed or rev.zone_known[i] or rev.hours_known[i]
    name = person.name if named else f"attendee {i + 1}"
    zone = person.timezone if rev.zone_known[i] else "zone ?"
    hours = "hours ?"
    if rev.hours_known[i]:
        hours = f"{format_hm(person.work_start)}-{format_hm(person.work_end)} local, "
        hours += _weekdays(person.weekdays)
    dates = rev.scenario.window_days + 2
    busy = f"busy calendar: {int(rev.busy_known[i, :dates].sum())} of {dates} dates seen"
    return name, zone, hours, busy


def _flag_words(
    kind: str, value: int | str | None, answer: str | None, layout: Layout, same: bool
) -> str:
    """The label of the answer's or gold's flag."""
    if isinstance(value, int):
        words = f"{kind} {_when(value)}"
        if value < layout.lo:
            words += " (before the window)"
        elif value >= layout.hi:
            words += " (after the window)"
        return words + ("  = the answer" if same and kind == "gold" else "")
    if value == NONE:
        if kind == "gold":
            return "gold: NONE (no start fits everyone)"
        return "answer: NONE (the agent says no start fits)"
    if answer is None:
        return "answer: no <answer> block"
    return f'answer: "{answer[:40]}" is not a UTC instant'


def _when(instant: int) -> str:
    day = from_day_number(instant // DAY)
    return f"{WEEKDAYS[day.weekday()]} {day.isoformat()} {format_hm(instant % DAY // 60)} UTC"


def _working_cells(rev: Revealed, person: Attendee) -> np.ndarray:
    """Window cells inside ``person``'s working hours on some local date (busy ignored)."""
    step, n, lo = rev.table.grid_seconds, rev.window_slots, rev.lo
    cells = np.zeros(n, dtype=bool)
    for _, intervals in free_intervals(replace(person, busy={}), lo, rev.hi):
        for a, b in intervals:  # whole cells only, as Revealed rasterises free time
            cells[max(-((lo - a) // step), 0) : max(min((b - lo) // step, n), 0)] = True
    return cells


def _runs(
    draw: _Pen,
    kinds: np.ndarray,
    edges: np.ndarray,
    top: int,
    bottom: int,
    colors: tuple[tuple[int, int, int], ...],
) -> None:
    """Fill each run of equal ``kinds`` (indices into ``colors``) between its cell edges."""
    if kinds.size == 0:
        return
    starts = np.concatenate(([0], np.flatnonzero(np.diff(kinds)) + 1))
    ends = np.append(starts[1:], kinds.size)
    for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
        if edges[b] > edges[a]:  # a long window has cells narrower than a pixel
            color = colors[int(kinds[a])]
            draw.rectangle((int(edges[a]), top, int(edges[b]) - 1, bottom - 1), fill=color)


class Painter:
    """Draws the frames of one env, caching what stays the same within an episode.

    Building one raises :class:`gymnasium.error.DependencyNotInstalled` without Pillow.
    ``layout`` is the current episode's :class:`Layout` (None before the first frame).
    """

    def __init__(self) -> None:
        _require_pillow()
        self._episode: Revealed | None = None
        self._background = np.zeros((0, 0, 3), dtype=np.uint8)
        self._bands: dict[str, tuple[int, Image.Image]] = {}
        self._working: dict[int, np.ndarray] = {}
        self._edges = np.zeros(0, dtype=int)
        self.layout: Layout | None = None

    def __getstate__(self) -> dict[str, Any]:  # caches are rebuilt after a pickle or copy
        return {}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__()  # type: ignore[misc]

    def frame(self, rev: Revealed, status: Status) -> np.ndarray:
        """A new ``(H, W, 3)`` uint8 array on every call.

        Only the two bands that change within an episode (the rows with the markers,
        and the status panel) are drawn and converted; the rest is copied from the
        episode's cached background.
        """
        if self._episode is not rev:
            self._start(rev, status.mode)
        out = self._background.copy()
        for name, (top, background) in self._bands.items():
            image = background.copy()
            pen = _Pen(image, top)
            if name == "rows":
                self._rows(pen, rev)
                self._markers(pen, status)
            else:
                self._status(pen, status)
            out[top : top + image.height] = np.asarray(image)
        return out

    # ------------------------------------------------------------------ once per episode

    def _start(self, rev: Revealed, mode: str) -> None:
        image_module = _require_pillow()[0]
        scenario, days = rev.scenario, rev.scenario.window_days
        layout = Layout(rev.table.max_attendees, rev.count, rev.lo, days)
        self._episode, self._working, self.layout = rev, {}, layout
        n = rev.window_slots
        self._edges = PLOT_X0 + np.rint(np.arange(n + 1) * (PLOT_X1 - PLOT_X0) / n).astype(int)
        image = image_module.new("RGB", (layout.width, layout.height), WHITE)
        draw = _Pen(image)  # hour labels and the legend come back in every episode
        title, label, small, tiny = _font(22), _font(16), _font(15), _font(13)

        # title: the scenario and the question
        name = scenario.id or "custom scenario"
        level = f" ({scenario.difficulty})" if scenario.difficulty else ""
        heading = f"MeetingSlot  ·  {name}{level}"
        draw.line_of((MARGIN, TITLE_Y), heading, font=title, fill=INK, width=WIDTH - 2 * MARGIN)
        end = from_day_number(rev.hi // DAY)
        subtitle = (
            f"Find the earliest UTC start of a {scenario.duration_minutes}-minute meeting that "
            f"suits everyone, starting from {_when(rev.lo)} to before "
            f"{WEEKDAYS[end.weekday()]} {end.isoformat()} 00:00 UTC  ·  {mode} mode"
        )
        draw.line_of(
            (MARGIN, SUBTITLE_Y), subtitle, font=small, fill=MUTED, width=WIDTH - 2 * MARGIN
        )

        # the UTC axis: day labels, hour ticks and labels
        draw.text((MARGIN, HOUR_Y), "time (UTC)", font=small, fill=MUTED)
        per_hour = (PLOT_X1 - PLOT_X0) / days / 24
        need = tiny.getlength("00:00") + 10
        step = next((s for s in (1, 2, 3, 4, 6, 12, 24) if s * per_hour >= need), 0)
        every = math.ceil((label.getlength("Mon 30") + 8) / (24 * per_hour))  # long windows
        for d in range(days):
            day = from_day_number(rev.lo // DAY + d)
            left = layout.x_at(rev.lo + d * DAY)
            right = layout.x_at(rev.lo + min(d + every, days) * DAY)
            text = f"{WEEKDAYS[day.weekday()]} {day.isoformat()}"
            if label.getlength(text) > right - left - 8:
                text = f"{WEEKDAYS[day.weekday()]} {day.day}"
            if d % every == 0:  # over one day, or over `every` days in a long window
                draw.text(((left + right) / 2, DAY_Y), text, font=label, fill=INK, anchor="ma")
            for hour in range(24 if step else 0):
                x = layout.x_at(rev.lo + d * DAY + hour * 3600)
                if hour % step == 0:
                    draw.line([(x, HOUR_Y + 16), (x, AXIS_Y)], fill=RULE, width=1)
                    draw.text((x + 3, HOUR_Y), f"{hour:02d}:00", font=tiny, fill=MUTED)
                elif per_hour >= 4:
                    draw.line([(x, HOUR_Y + 22), (x, AXIS_Y)], fill=MUTED, width=1)
        for d in range(0, days + 1, every):
            x = layout.x_at(rev.lo + d * DAY)
            draw.line([(x, DAY_Y - 2), (x, AXIS_Y)], fill=RULE, width=2)
        draw.line([(PLOT_X0, AXIS_Y), (PLOT_X1, AXIS_Y)], fill=RULE, width=1)

        # marker lanes, row frames and the fit row's label
        for kind in ("answer", "gold"):
            box = layout.lane_box(kind)
            middle = (box[1] + box[3]) // 2
            draw.text((PLOT_X0 - 10, middle), kind, font=small, fill=MUTED, anchor="rm")
            draw.rectangle(box, fill=PANEL)
        fit = layout.fit_box
        draw.text((MARGIN, fit[1] + 5), "fits everyone (known)", font=label, fill=INK)

        # legend and the status panel
        x, y = MARGIN, layout.legend_y
        for color, text in LEGEND:
            draw.rectangle((x, y + 3, x + 18, y + 17), fill=color, outline=RULE)
            draw.text((x + 24, y + 1), text, font=small, fill=INK)
            x += 24 + round(small.getlength(text)) + 22
        cells = f"cells: {rev.table.grid_minutes} min"
        draw.text((WIDTH - MARGIN, y + 1), cells, font=small, fill=MUTED, anchor="ra")
        top = layout.status_y
        box = (MARGIN, top, WIDTH - MARGIN, top + STATUS_LINES * LINE_H + 14)
        draw.draw.rounded_rectangle(box, radius=6, fill=PANEL)
        self._background = np.array(image)
        rows = (AXIS_Y + 1, layout.fit_box[3])  # lanes, rows and the fit row
        status = (top, box[3] + 1)
        self._bands = {
            name: (y0, image.crop((0, y0, layout.width, y1)))
            for name, (y0, y1) in (("rows", rows), ("status", status))
        }

    # ------------------------------------------------------------------ every frame

    def _rows(self, draw: _Pen, rev: Revealed) -> None:
        layout = self.layout
        assert layout is not None
        name_font, small = _font(17), _font(14)
        n, edges = rev.window_slots, self._edges
        width = PLOT_X0 - MARGIN - 14
        for i, person in enumerate(rev.scenario.attendees):
            box = layout.row_box(i)
            name, zone, hours, busy = row_labels(rev, i)
            lines = ((name, name_font, INK), (zone, small, MUTED), (hours, small, MUTED))
            lines += ((busy, small, MUTED),) if layout.row_h >= 64 else ()
            y = box[1] - 1
            for text, font, color in lines:
                draw.text((MARGIN, y), _clip(text, font, width), font=font, fill=color)
                y += 20 if font is name_font else 16
            kinds = np.zeros(n, dtype=np.int8)
            if rev.zone_known[i] and rev.hours_known[i]:
                if i not in self._working:
                    self._working[i] = _working_cells(rev, person)
                working, unavailable = self._working[i], rev.unavailable[i, :n]
                kinds[unavailable & working] = 2
                kinds[unavailable & ~working] = 3
            kinds[rev.available[i, :n]] = 1
            _runs(draw, kinds, edges, box[1], box[3], CELL_COLORS)
        fit = layout.fit_box
        _runs(draw, rev.fit[:n].view(np.int8), edges, fit[1], fit[3], (NO_FIT, FIT))
        days = rev.scenario.window_days
        for d in range(0, days + 1, 1 if days <= 31 else days):  # day boundaries through the rows
            x = layout.x_at(rev.lo + d * DAY)
            color = WHITE if 0 < d < days else RULE
            draw.line([(x, ROWS_Y - 3), (x, fit[3] - 1)], fill=color, width=2)

    def _markers(self, draw: _Pen, status: Status) -> None:
        """Answer and gold: a bold line at the start, the meeting outlined, a labelled flag."""
        layout, rev = self.layout, self._episode
        assert layout is not None and rev is not None
        font = _font(15)
        if not status.answered:
            note = "no answer: out of turns" if status.over else "not given yet"
            box = layout.lane_box("answer")
            draw.text((box[0] + 8, box[1] + 4), note, font=font, fill=MUTED)
        if not status.over:
            box = layout.lane_box("gold")
            note = "shown when the episode ends"
            draw.text((box[0] + 8, box[1] + 4), note, font=font, fill=MUTED)
        answer = parse_answer(status.answer) if status.answer is not None else None
        marks: list[tuple[str, tuple[int, int, int], int | str | None]] = []
        if status.over:
            marks.append(("gold", GOLD, status.gold))
        if status.answered:
            marks.append(("answer", ANSWER, answer))
        same = isinstance(answer, int) and status.over and answer == status.gold
        bottom = layout.rows_bottom
        duration = rev.scenario.duration_minutes * 60
        lines: dict[str, tuple[int, int]] = {}
        for kind, color, value in marks:  # lines first, gold under the answer
            if isinstance(value, int):
                x = layout.x_at(value)
                half = MARKER_W if same and kind == "gold" else MARKER_W // 2
                end = max(layout.x_at(value + duration), x + 1)
                draw.rectangle((x, ROWS_Y, end, bottom - 1), outline=color, width=2)
                top = layout.lane_box(kind)[1]
                draw.rectangle((x - half, top, x + half, bottom - 1), fill=color)
                lines[kind] = (x - half, x + half)
        for kind, color, value in marks:  # then the flags, clear of the other line if possible
            box = layout.lane_box(kind)
            words = _flag_words(kind, value, status.answer, layout, same)
            w = round(font.getlength(words)) + 16
            if kind in lines:  # beside the line: to its right, else to its left
                left, right = lines[kind]
                options = [(left, right + w, right + 8), (left - w, right, left - w + 8)]
            else:  # NONE or no instant: at the right end of the lane, else the left end
                options = [(box[2] - w, box[2], box[2] - w + 8), (box[0], box[0] + w, box[0] + 8)]
            fitting = [o for o in options if box[0] <= o[0] and o[1] <= box[2]]
            options = fitting or options[-1:]
            other = lines.get("answer") if kind == "gold" else None
            if other is not None:
                options.sort(key=lambda o: o[0] <= other[1] and other[0] <= o[1])
            flag_left, flag_right, text_x = options[0]
            draw.rectangle((flag_left, box[1], flag_right, box[3]), fill=color)
            ink = INK if color == GOLD else WHITE
            draw.text((text_x, box[1] + 4), words, font=font, fill=ink)

    def _status(self, draw: _Pen, status: Status) -> None:
        layout = self.layout
        assert layout is not None
        font, bold = _font(15), _font(16)
        x, y = MARGIN + 12, layout.status_y + 8
        width = WIDTH - 2 * MARGIN - 24
        if not status.over:
            state = "in progress"
        elif status.answered:
            state = "over: answered (terminated)"
        else:
            state = "over: out of turns without an answer (truncated)"
        draw.text((x, y), f"turn {status.turn} / {status.max_turns}", font=bold, fill=INK)
        draw.text((x + 130, y + 1), state, font=font, fill=MUTED)
        call = "last action: none yet"
        if status.last_call is not None:
            call = f"last action: {status.last_call}"
            if status.last_result is not None:
                call += f"   ->   {_short_result(status.last_result)}"
        draw.line_of((x, y + LINE_H), call, font=font, fill=INK, width=width)
        answer = "not given yet"
        if status.answered:
            answer = "no <answer> block" if status.answer is None else status.answer
        elif status.over:
            answer = "none (out of turns)"
        gold = "shown when the episode ends"
        if status.over:
            gold = format_utc(status.gold) if isinstance(status.gold, int) else NONE
        draw.line_of((x, y + 2 * LINE_H), f"answer: {answer}", font=font, fill=INK, width=560)
        draw.text((x + 600, y + 2 * LINE_H), f"gold: {gold}", font=font, fill=INK)
        if status.grade is None:
            text = "reward: at the end, 1.0 x exact_match + 0.2 x format + 0.2 x partial_credit"
            draw.text((x, y + 3 * LINE_H), text, font=font, fill=MUTED)
        else:
            grade = status.grade
            terms = " + ".join(
                f"{term.weight:.1f} x {term.name} {grade[term.name]:g}" for term in RUBRIC.terms
            )
            text = f"reward {grade['reward']:.3f} = {terms}"
            draw.text((x, y + 3 * LINE_H), text, font=bold, fill=INK)


# ----------------------------------------------------------------------------- window


def headless() -> bool:
    """Whether this is a Linux machine with no display to open a window on (and SDL has
    not been told which video driver to use)."""
    import sys

    if not sys.platform.startswith("linux") or os.environ.get("SDL_VIDEODRIVER"):
        return False
    return not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


class Window:
    """A pygame window showing frames (Gymnasium's ``human`` rendering convention).

    Building one raises :class:`gymnasium.error.DependencyNotInstalled` without pygame;
    the window opens at the first :meth:`show`.
    """

    def __init__(self, caption: str = "MeetingSlot") -> None:
        os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
        try:
            import pygame
        except ImportError as error:
            raise DependencyNotInstalled(
                f"pygame is not installed; human rendering needs it: {INSTALL_HINT}"
            ) from error
        self._pygame = pygame
        self.caption = caption
        self._screen: Any = None
        self._clock: Any = None

    def __getstate__(self) -> dict[str, Any]:  # a pickle or copy opens its own window
        return {"caption": self.caption}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["caption"])  # type: ignore[misc]

    @property
    def is_open(self) -> bool:
        return self._screen is not None

    def show(self, frame: np.ndarray, fps: float) -> None:
        """Draw an ``(H, W, 3)`` frame, handle window events, wait to keep ``fps`` per second."""
        pygame = self._pygame
        size = (frame.shape[1], frame.shape[0])
        if self._screen is None:
            if headless():
                # SDL would look for a display, find none, and print "XDG_RUNTIME_DIR is
                # invalid" on stderr (gymnasium's check_env makes a human env): draw off
                # screen instead, and say so once, where warnings go
                os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
                warnings.warn(
                    "no display (DISPLAY and WAYLAND_DISPLAY are unset): the human window "
                    "is drawn off screen",
                    RuntimeWarning,
                    stacklevel=2,
                )
            pygame.display.init()  # the display only: no audio device is opened
            pygame.display.set_caption(self.caption)
            self._screen = pygame.display.set_mode(size)
            self._clock = pygame.time.Clock()
        surface = pygame.image.frombuffer(np.ascontiguousarray(frame).tobytes(), size, "RGB")
        self._screen.blit(surface, (0, 0))
        pygame.event.pump()
        self._clock.tick(fps)
        pygame.display.flip()

    def close(self) -> None:
        if self._screen is not None:
            self._pygame.display.quit()
            self._screen = self._clock = None
