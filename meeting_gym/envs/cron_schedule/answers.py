"""The CronSchedule rubric's pure part: find the LAST answer block, then score it (RULES 6).

``extract(text, tag)`` returns the content of the last complete ``<tag>...</tag>`` block
(``cron`` for write tasks, ``times`` for read tasks), or None:

* tag names match in any ASCII letter case, and ASCII whitespace may sit anywhere inside
  the angle brackets (``< cron >``, ``</ cron>``, ``< / CRON >``); nothing else (no
  attributes);
* a block closes at a closing tag and opens at the last opening tag before it (so
  ``<cron>a<cron>b</cron>`` holds ``b``); the LAST such block counts; an opening tag
  never closed adds no block;
* the content may span lines; it is returned as written (not stripped).

Found with one linear scan over the tags, whatever the text.

Scoring (``correct`` in [0, 1]; ``formatted`` = 1 iff a block exists):

* **write** (RULES 6.2): the block's content must be one valid expression (the parser
  strips spaces, tabs, CR and LF around it; anything else in the block, such as backticks,
  a comment, a sixth field or a second expression, makes it invalid) that fires at exactly
  the reference's minutes: ``correct`` 1, else 0;
* **read** (RULES 6.3): the content's lines, each stripped, empty ones dropped; line ``i``
  matches when it is ``YYYY-MM-DD HH:MM`` (a ``T`` for the space and a ``:00`` seconds
  suffix accepted) equal to the ``i``-th true run time;
  ``correct = matches / max(N, lines)``: ordered, position by position, extra lines
  lower the score.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

from meeting_gym.envs.cron_schedule.expression import Cron, CronError, parse
from meeting_gym.envs.cron_schedule.schedule import equivalent

__all__ = ["TAGS", "extract", "format_block", "read_line", "score_read", "score_write"]

TAGS = {"write": "cron", "read": "times"}
"""The answer tag of each task kind."""

_LINE = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2})[ T]([0-9]{2}:[0-9]{2})(?::00)?")


@cache
def _tag(name: str) -> re.Pattern[str]:
    # `(?:/\s*)?` after `\s*`: two optional whitespace runs would backtrack on "<   ..."
    return re.compile(rf"<\s*(/\s*)?{name}\s*>", re.IGNORECASE | re.ASCII)


def extract(text: str, tag: str) -> str | None:
    """The content of the last complete ``<tag>...</tag>`` block of ``text``, or None."""
    if not isinstance(text, str):
        return None
    last: str | None = None
    opening: re.Match[str] | None = None
    for match in _tag(tag).finditer(text):
        if match.group(1) is None:
            opening = match
        elif opening is not None:
            last = text[opening.end() : match.start()]
            opening = None
    return last


def format_block(tag: str, content: str) -> str:
    """``<tag>content</tag>``: the block a policy replies with."""
    return f"<{tag}>{content}</{tag}>"


def score_write(content: str | None, reference: Cron) -> tuple[float, float]:
    """``(correct, formatted)`` of a ``<cron>`` block's content against the reference."""
    if content is None:
        return 0.0, 0.0
    try:
        answer = parse(content)
    except CronError:
        return 0.0, 1.0
    return (1.0 if equivalent(answer, reference) else 0.0), 1.0


def read_line(line: str) -> str | None:
    """A line as ``YYYY-MM-DD HH:MM`` if it is written in an accepted form, else None.

    The line is compared as text afterwards, so only a real run time can ever match.
    """
    match = _LINE.fullmatch(line)
    return None if match is None else f"{match.group(1)} {match.group(2)}"


def score_read(content: str | None, truth: Sequence[str]) -> tuple[float, float]:
    """``(correct, formatted)`` of a ``<times>`` block's content against the true times."""
    if content is None:
        return 0.0, 0.0
    lines = [stripped for line in content.splitlines() if (stripped := line.strip())]
    hits = sum(1 for line, true in zip(lines, truth, strict=False) if read_line(line) == true)
    return hits / max(len(truth), len(lines), 1), 1.0
