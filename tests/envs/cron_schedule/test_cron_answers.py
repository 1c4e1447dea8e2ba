"""Answer extraction and scoring (RULES.md section 6), its examples as tests, and a fuzz.

The fuzz throws arbitrary completions at both scorers and checks them against the
independent oracle: a write answer scored correct must fire at exactly the reference's
minutes by the oracle's brute force over 2024-2052 (every date on every weekday), and a
read answer's score must be the oracle's own count of ordered hits.
"""

from __future__ import annotations

import random
import time
from datetime import datetime, timedelta
from functools import cache

import cron_oracle
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from meeting_gym.envs.cron_schedule.answers import (
    extract,
    read_line,
    score_read,
    score_write,
)
from meeting_gym.envs.cron_schedule.expression import parse
from meeting_gym.envs.cron_schedule.generator import generate

# ----------------------------------------------------------------------------- extraction


@pytest.mark.parametrize(
    "text, content",
    [
        ("<cron>0 9 * * *</cron>", "0 9 * * *"),
        ("<cron>a</cron> then <cron>b</cron>", "b"),  # the LAST block
        ("<cron>a</cron> then <cron>b", "a"),  # an unclosed block is no block
        ("<cron>a<cron>b</cron>", "b"),  # a block opens at the last opening tag
        ("<cron>a</cron></cron>", "a"),
        ("</cron>x<cron>y</cron>", "y"),
        ("< cron >x</ cron>", "x"),
        ("< CRON\t>x< / Cron >", "x"),
        ("<Cron>x</cRoN>", "x"),
        ("<cron>\n0 9 * * *\n</cron>", "\n0 9 * * *\n"),  # content may span lines
        ("<cron id=1>x</cron>", None),  # no attributes
        ("<crons>x</crons>", None),
        ("<cron>x</cron", None),
        ("no tags at all", None),
        ("<cron></cron>", ""),
        ("<\u017fcron>x</cron>", None),  # no Unicode case folding (long s) in tag names
    ],
)
def test_extract_the_last_complete_block(text, content):
    assert extract(text, "cron") == content


def test_extract_is_linear_on_pathological_text():
    for text in ("<" + " " * 1_000_000, "< " * 500_000, "<cron>" * 200_000, "</cron>" * 200_000):
        started = time.perf_counter()
        extract(text, "cron")
        assert time.perf_counter() - started < 1.0


# ----------------------------------------------------------------------------- write


REFERENCE = parse("*/30 * * * *")


@pytest.mark.parametrize(
    "content, correct",
    [
        ("*/30 * * * *", 1.0),
        ("0,30 * * * *", 1.0),
        ("0-59/30 * * * *", 1.0),
        ("  0,30\t*  * * *\n", 1.0),  # spaces, tabs, CR and LF around and between fields
        ("30/30,0 * * * *", 1.0),
        ("`*/30 * * * *`", 0.0),  # backticks make it invalid
        ("*/30 * * * * # every half hour", 0.0),
        ("0 */30 * * * *", 0.0),  # a sixth field
        ("*/30 * * * *\n0,30 * * * *", 0.0),  # two expressions
        ("@reboot", 0.0),
        ("*/15 * * * *", 0.0),
        ("*/30 * * * 1-5", 0.0),
        ("\u00a0*/30 * * * *", 0.0),  # NBSP is not one of the characters stripped
        ("", 0.0),
    ],
)
def test_write_scoring(content, correct):
    assert score_write(content, REFERENCE) == (correct, 1.0)


def test_write_without_a_block_is_unformatted():
    assert score_write(None, REFERENCE) == (0.0, 0.0)


def test_write_equivalence_includes_the_day_rule_and_macros():
    assert score_write("@weekly", parse("0 0 * * 7"))[0] == 1.0
    assert score_write("0 0 1-31/2 * 1", parse("0 0 */2 * 1"))[0] == 0.0
    assert score_write("0 0 * * 1", parse("0 0 */1 * 1"))[0] == 1.0


# ----------------------------------------------------------------------------- read

T = ["2024-01-01 09:00", "2024-01-02 09:00", "2024-01-03 09:00"]
START = "2023-12-31 09:00"


@pytest.mark.parametrize(
    "lines, correct",
    [
        ([T[0], T[1], T[2]], 1.0),
        ([T[0], T[1]], 2 / 3),
        ([T[0], T[1], T[2], "2024-01-04 09:00"], 3 / 4),
        ([T[1], T[0], T[2]], 1 / 3),
        ([START, T[0], T[1], T[2]], 0.0),  # the start included by mistake
        ([T[0], "", T[1], T[2]], 1.0),  # blank lines are dropped
        ([f"- {t}" for t in T], 0.0),  # bullets
    ],
)
def test_read_scoring_rules_6_3_table(lines, correct):
    assert score_read("\n".join(lines), T) == (pytest.approx(correct), 1.0)


def test_read_without_a_block():
    assert score_read(None, T) == (0.0, 0.0)


@pytest.mark.parametrize(
    "line, value",
    [
        ("2024-01-01 09:00", "2024-01-01 09:00"),
        ("2024-01-01T09:00", "2024-01-01 09:00"),
        ("2024-01-01 09:00:00", "2024-01-01 09:00"),
        ("2024-01-01T09:00:00", "2024-01-01 09:00"),
        ("2024-01-01 09:00:30", None),  # seconds other than :00
        ("2024-01-01t09:00", None),
        ("2024-01-01  09:00", None),
        ("1. 2024-01-01 09:00", None),  # numbering
        ("Mon 2024-01-01 09:00", None),  # a weekday name
        ("2024-01-01 9:00 AM", None),
        ("2024-01-01 09:00 UTC", None),  # trailing words
        ("2024-1-1 09:00", None),
        ("\uff12024-01-01 09:00", None),  # a full-width digit
    ],
)
def test_accepted_line_forms(line, value):
    assert read_line(line) == value


def test_read_lines_are_stripped_and_in_any_line_ending():
    assert score_read(f"  {T[0]}  \r\n\t{T[1]}\r{T[2]}\n\n", T) == (1.0, 1.0)
    assert score_read(f"{T[0]}T", T)[0] == 0.0


# ----------------------------------------------------------------------------- fuzz


def _tasks() -> list:
    """60 write and 60 read tasks; read ones whose run times lie within 400 days."""
    out = []
    index = 0
    while len(out) < 120:
        index += 1
        for kind in ("write", "read"):
            item, truth = generate(random.Random(f"fuzz:{index}"), str(index % 4 + 1), kind)
            if kind == "read":
                start = datetime.strptime(item.start, "%Y-%m-%d %H:%M")
                if datetime.strptime(truth[-1], "%Y-%m-%d %H:%M") - start > timedelta(400):
                    continue
            out.append((item, truth))
    return out


TASKS = _tasks()


@cache
def _walk(index: int) -> list[str]:
    """The oracle's minute walk for read task ``index`` (walked once)."""
    item = TASKS[index][0]
    start = datetime.strptime(item.start, "%Y-%m-%d %H:%M")
    return cron_oracle.walk(cron_oracle.parse(item.expression), start, item.num_times, 401)


_TAG_SPELLINGS = ["<{t}>", "<{t}>", "< {t} >", "<{T}>", "<{t}\n>", "<{t} x>", "{t}>"]
_CLOSE_SPELLINGS = ["</{t}>", "</{t}>", "< / {t} >", "</{T}>", "</ {t}>", "<{t}/>", "</{t}"]


@st.composite
def completions(draw, item):
    """Arbitrary text around blocks of near-miss, equivalent or random content."""
    tag = "cron" if item.kind == "write" else "times"
    pieces = []
    for _ in range(draw(st.integers(0, 3))):
        pieces.append(draw(st.text(max_size=20)))
        if item.kind == "write":
            cron = parse(item.expression)
            fields = [",".join(map(str, cron.values(i))) for i in range(5)]
            if cron.dom_star:
                fields[2] = "*/1," + fields[2]
            if cron.dow_star:
                fields[4] = "*/1," + fields[4]
            index = draw(st.integers(0, 4))
            mutated = list(fields)
            mutated[index] = draw(st.sampled_from(["*", "1", "0", "*/2", "1-5", "7", "MON"]))
            equivalent = [item.expression, " ".join(fields), "\t".join(fields) + "\n"]
            content = draw(
                st.sampled_from([*equivalent, *equivalent, " ".join(mutated), "@daily", "@weekly"])
                | st.text(max_size=30)
            )
        else:
            lines = list(item.times)
            choice = draw(st.integers(0, 5))
            if choice == 1:
                lines = lines[: draw(st.integers(0, len(lines)))]
            elif choice == 2:
                lines = [item.start, *lines]
            elif choice == 3:
                lines = lines[::-1]
            elif choice == 4:
                lines = [line.replace(" ", "T") + ":00" for line in lines]
            content = "\n".join(lines) if choice != 5 else draw(st.text(max_size=40))
        opening = draw(st.sampled_from(_TAG_SPELLINGS)).format(t=tag, T=tag.upper())
        closing = draw(st.sampled_from(_CLOSE_SPELLINGS)).format(t=tag, T=tag.upper())
        pieces.append(f"{opening}{content}{closing}")
    pieces.append(draw(st.text(max_size=20)))
    return "".join(pieces)


def _line(line: str) -> str | None:
    """RULES 6.3's accepted forms, checked character by character (no regular expression)."""
    if len(line) == 19 and line.endswith(":00"):
        line = line[:16]
    if len(line) != 16 or line[10] not in " T" or line[4] + line[7] + line[13] != "--:":
        return None
    digits = line[:4] + line[5:7] + line[8:10] + line[11:13] + line[14:]
    if not all(c in "0123456789" for c in digits):
        return None
    return line[:10] + " " + line[11:]


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), index=st.integers(0, len(TASKS) - 1))
def test_scorers_never_raise_stay_in_range_and_agree_with_the_oracle(data, index):
    item, truth = TASKS[index]
    text = data.draw(completions(item))
    content = extract(text, "cron" if item.kind == "write" else "times")
    if item.kind == "write":
        correct, formatted = score_write(content, truth)
        assert correct in (0.0, 1.0)
        if correct == 1.0:  # the brute force agrees: same minutes, forever
            assert cron_oracle.parse(content) is not None, content
            assert cron_oracle.equivalent_texts(content, item.expression), content
    else:
        correct, formatted = score_read(content, truth)
        assert 0.0 <= correct <= 1.0
        walk = _walk(index)
        if content is not None:
            lines = [x.strip() for x in content.splitlines() if x.strip()]
            hits = sum(1 for line, true in zip(lines, walk, strict=False) if _line(line) == true)
            assert correct == pytest.approx(hits / max(len(walk), len(lines)))
    assert formatted == (0.0 if content is None else 1.0)
    event(f"{item.kind}: correct {'1' if correct == 1 else '0' if correct == 0 else 'partial'}")
