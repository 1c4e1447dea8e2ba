"""English descriptions: unambiguous (one meaning, the right one), varied, free of cron syntax."""

from __future__ import annotations

import itertools
import random
import re
from collections import Counter

import cron_oracle
import pytest

from meeting_gym.envs.cron_schedule.english import (
    TEMPLATES,
    DescriptionError,
    describe,
    explain,
    expression_for,
    read,
    reading_of,
)
from meeting_gym.envs.cron_schedule.expression import parse
from meeting_gym.envs.cron_schedule.generator import generate
from meeting_gym.envs.cron_schedule.schedule import equivalent

LEVELS = ("1", "2", "3", "4")
CRON_SYNTAX = re.compile(r"[*/@#?~]|[0-9]-[0-9]|\b[A-Z]{3}\b|\b(?:L|W|H)\b")


def _described(count: int, seed: int = 0):
    """(cron, description) of ``count`` generated write tasks per level."""
    for level in LEVELS:
        for index in range(count):
            item, cron = generate(random.Random(f"{seed}:{level}:{index}"), level, "write")
            yield cron, item.description


def _check(count: int, seed: int) -> Counter:
    used: Counter = Counter()
    for cron, text in _described(count, seed):
        parses = explain(text)
        assert len({reading for reading, _ in parses}) == 1, text  # exactly one meaning
        answer = parse(expression_for(read(text)))
        assert equivalent(answer, cron), (text, cron.source)  # ... and it is the right one
        assert not CRON_SYNTAX.search(text), text
        for names in {names for _, names in parses}:
            used.update(names)
    return used


def test_every_generated_description_reads_back_to_its_schedule():
    used = _check(count=400, seed=1)
    # the wording varies: every template of the grammar turns up in 1,600 tasks
    assert set(TEMPLATES) - set(used) <= {"leap_years"}, set(TEMPLATES) - set(used)


@pytest.mark.slow
def test_every_generated_description_reads_back_to_its_schedule_full_size():
    used = _check(count=5000, seed=2)
    assert set(TEMPLATES) == set(used)


def test_a_second_wording_means_the_same_schedule():
    """Describe each schedule again with another draw: the two readings fire alike."""
    differ = 0
    for cron, text in _described(150, seed=3):
        again = describe(cron, random.Random(text))
        differ += again != text
        assert equivalent(parse(expression_for(read(again))), parse(expression_for(read(text))))
    assert differ > 300  # of 600: most schedules have several wordings


def test_descriptions_of_wild_expressions_read_back_too():
    """Beyond the generator: random syntax of every kind (an AND of two lists aside)."""
    rng = random.Random(4)
    checked = 0
    for _ in range(1500):
        cron = parse(cron_oracle.random_expression(rng))
        try:
            text = describe(cron, rng)
        except DescriptionError:
            reading = reading_of(cron)
            assert reading.days == "and"  # the one thing no single expression... says plainly
            continue
        assert equivalent(parse(expression_for(read(text))), cron), (cron.source, text)
        checked += 1
    assert checked > 1400


@pytest.mark.parametrize(
    "text, expression",
    [
        (
            "Every 15 minutes between 07:00 and 11:59 on weekdays (Monday through Friday).",
            "*/15 7-11 * * 1-5",
        ),
        ("At 09:00 on the 13th of the month and also on every Friday.", "0 9 13 * 5"),
        ("At 00:00 on Mondays that fall on an odd-numbered date.", "0 0 */2 * 1"),
        ("At 12:00 on February 29 (which happens only in leap years).", "0 12 29 2 *"),
        ("At 08:30 on the 31st of the month (only in months that have that day).", "30 8 31 * *"),
        ("Every hour on the hour.", "0 * * * *"),
        ("At 5 minutes past every hour.", "5 * * * *"),
        (
            "Once an hour from 09:30 through 17:30 on weekends (Saturday and Sunday).",
            "30 9-17 * * 0,6",
        ),
        ("Every 8 hours starting at 01:15.", "15 1,9,17 * * *"),
        ("At 00:00 on January 1.", "0 0 1 1 *"),
        ("At 06:00 on the 1st of the month in January, April, July and October.", "0 6 1 */3 *"),
        (
            "At 18:00 on the 15th of the month, but only when it falls on a Tuesday, "
            "Thursday, Saturday or Sunday.",
            "0 18 15 * */2",
        ),
    ],
)
def test_known_sentences(text, expression):
    assert equivalent(parse(expression_for(read(text))), parse(expression))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Every 15 minutes",  # no full stop
        "Every 45 minutes.",  # not a set of minutes of the hour
        "Every 7 hours starting at 00:00.",  # would not repeat the same hours every day
        "At 25:00.",
        "At 09:00 and 10:30.",  # not every hour at every minute: no one expression
        "At 09:00 on Fridays and Mondays.",  # out of week order
        "At 09:00 on the 32nd of the month.",
        "At 09:00 on February 29 in March.",  # the month said twice
        "Whenever you like.",
    ],
)
def test_the_reader_refuses_what_it_cannot_read(text):
    with pytest.raises(DescriptionError):
        read(text)


def test_an_and_of_two_lists_has_no_single_expression():
    reading = read("At 09:00 on the 13th of the month, but only when it falls on a Friday.")
    with pytest.raises(DescriptionError, match="no single expression"):
        expression_for(reading)


def test_the_naive_numbering_is_only_an_offset():
    reading = read("At 09:00 on Mondays and Sundays.")
    assert expression_for(reading) == "0 9 * * 0,1"
    assert expression_for(reading, weekday_offset=1) == "0 9 * * 1,2"


@pytest.mark.parametrize(
    ("text", "expression"),
    [
        # a step as a step, not a list of 30 minutes
        (
            "Once every 2 minutes during the hours from 17:00 through 20:59 on Sundays.",
            "*/2 17-20 * * 0",
        ),
        # evenly spaced but not from the field's start: a bounded step of four or more values
        (
            "At 07:07, 09:07, 11:07, 13:07, 15:07, 17:07, 19:07, 21:07 and 23:07 on the 15th, "
            "16th and 28th of each month only in January and July.",
            "7 7-23/2 15,16,28 1,7 *",
        ),
        # three values stay a list
        ("Daily at 04:00, 08:00 and 12:00.", "0 4,8,12 * * *"),
    ],
)
def test_gold_writes_steps_as_a_person_would(text, expression):
    assert expression_for(read(text)) == expression


def test_no_minute_or_hour_field_lists_evenly_spaced_values_a_step_would_write():
    written = [expression_for(read(text)).split() for _, text in _described(200, seed=5)]
    assert sum("/" in fields[0] + fields[1] for fields in written) > 50
    for fields in written:
        for field in fields[:2]:
            if "/" in field or "-" in field or field == "*":
                continue
            values = [int(v) for v in field.split(",")]
            gaps = {b - a for a, b in itertools.pairwise(values)}
            # a list is left only when it is short (three values, not from the start) or uneven
            assert len(values) < 4 or len(gaps) > 1 or gaps == {1}, fields
