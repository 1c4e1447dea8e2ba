"""What a frame shows, and the ``ansi`` weekly grid.

:class:`Status` gathers, from an env, everything the two render modes draw: the grid
(days x slots), the entries of each cell (session, room, teacher), which entries are in
conflict at that cell, the scores, the conflict counts, the budget and the last action.
An entry is in conflict at a cell when its teacher, group or room has another session
in that cell, or the cell is outside its teacher's or room's availability, or its room
is of a wrong type or too small (the last three only where the difficulty counts them).
:meth:`Status.ansi` prints the grid with conflicting entries marked ``!``;
:mod:`.picture` draws the same as an image.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from meeting_gym.envs.timetable_planner.domain.scoring import CONFLICT_KEYS, HARD_CONSTRAINT_TYPES

SHORT_SCORES = (
    ("overall_score", "overall"),
    ("hard_constraint_score", "hard"),
    ("coverage_score", "coverage"),
    ("compactness_score", "compact"),
    ("room_fit_score", "room_fit"),
    ("preference_score", "prefer"),
    ("daily_balance_score", "balance"),
    ("stability_score", "stable"),
)


@dataclass(frozen=True)
class Entry:
    session: str
    room: str
    teacher: str
    conflict: bool

    def text(self) -> str:
        return f"{'!' if self.conflict else ''}{self.session} {self.room} {self.teacher}"


@dataclass
class Status:
    """One frame's content (see the module docstring)."""

    title: str
    days: tuple[str, ...]
    slots: int
    cells: dict[tuple[int, int], list[Entry]] = field(default_factory=dict)
    scores: dict[str, float] = field(default_factory=dict)
    conflicts: dict[str, int] = field(default_factory=dict)
    unscheduled: list[str] = field(default_factory=list)
    budget: str = ""
    last: str = ""
    end: str = ""

    @classmethod
    def of(cls, env: Any) -> Status:
        episode = env.episode
        engine = episode.engine
        p = engine.problem
        level = p.task_name
        counted = set(HARD_CONSTRAINT_TYPES[level])
        placements = list(engine.timetable.items())
        users: dict[tuple[str, int, int, int], int] = {}
        for s, (d, t, r) in placements:
            for k in range(t, t + p.session_length[s]):
                for key in (
                    ("t", p.session_teacher[s], d, k),
                    ("g", p.session_group[s], d, k),
                    ("r", r, d, k),
                ):
                    users[key] = users.get(key, 0) + 1
        cells: dict[tuple[int, int], list[Entry]] = {}
        for s, (d, t, r) in sorted(placements, key=lambda item: (item[1], p.session_ids[item[0]])):
            teacher = p.session_teacher[s]
            wrong_room = not (p.type_ok[s][r] and p.capacity_ok[s][r])
            for k in range(t, t + p.session_length[s]):
                clash = (
                    users[("t", teacher, d, k)] > 1
                    or users[("g", p.session_group[s], d, k)] > 1
                    or users[("r", r, d, k)] > 1
                )
                if "teacher_availability_violation" in counted:
                    clash |= not (p.teacher_avail_mask[teacher][d] >> k) & 1
                    clash |= not (p.room_avail_mask[r][d] >> k) & 1
                    clash |= wrong_room
                cells.setdefault((d, k), []).append(
                    Entry(p.session_ids[s], p.room_ids[r], p.teacher_ids[teacher], bool(clash))
                )
        last = ""
        if engine.last is not None:
            result = engine.last
            action = env.interface.last_action or ""
            last = f"step {engine.step_count}: {action[:80]} -> {result.outcome}"
            if result.action_error:
                last += f" ({result.action_error[:80]})"
            last += f", reward {result.reward:+.4f}"
        end = ""
        if engine.done:
            how = "submitted" if engine.terminated else "budget used up"
            end = f"episode over ({how}): return {engine.total_reward:+.4f}"
        conflicts = engine.conflicts.as_dict()
        return cls(
            title=f"{p.scenario_id} ({level})",
            days=p.day_labels,
            slots=p.per_day,
            cells=cells,
            scores=engine.scores.as_dict(),
            conflicts={k: conflicts[k] for k in CONFLICT_KEYS if conflicts[k]},
            unscheduled=[
                sid
                for i, sid in enumerate(p.session_ids)
                if p.session_must[i] and i not in engine.timetable
            ],
            budget=f"budget {engine.remaining_budget}/{p.step_budget}",
            last=last,
            end=end,
        )

    def score_line(self) -> str:
        return "  ".join(f"{short} {self.scores[key]:.3f}" for key, short in SHORT_SCORES)

    def conflict_line(self) -> str:
        if not self.conflicts:
            return "conflicts: none"
        return "conflicts: " + ", ".join(f"{k} {v}" for k, v in self.conflicts.items())

    def ansi(self) -> str:
        """The weekly grid as text: a column per day, a row band per slot."""
        widths = []
        for d, label in enumerate(self.days):
            texts = [e.text() for k in range(self.slots) for e in self.cells.get((d, k), [])]
            widths.append(max([len(label), 1, *map(len, texts)]))
        head = "slot | " + " | ".join(
            label.ljust(w) for label, w in zip(self.days, widths, strict=True)
        )
        rule = "-" * len(head)
        lines = [f"{self.title}  {self.budget}", head, rule]
        for k in range(self.slots):
            columns = [
                [e.text() for e in self.cells.get((d, k), [])] for d in range(len(self.days))
            ]
            height = max(1, *map(len, columns))
            for row in range(height):
                label = f"{k:>4}" if row == 0 else "    "
                parts = [
                    (column[row] if row < len(column) else "").ljust(w)
                    for column, w in zip(columns, widths, strict=True)
                ]
                lines.append(f"{label} | " + " | ".join(parts))
            lines.append(rule)
        lines.append(self.score_line())
        lines.append(self.conflict_line())
        if self.unscheduled:
            lines.append("unscheduled: " + ", ".join(self.unscheduled))
        if self.last:
            lines.append(self.last)
        if self.end:
            lines.append(self.end)
        return "\n".join(line.rstrip() for line in lines) + "\n"
