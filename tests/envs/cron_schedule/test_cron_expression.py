"""The cron parser: what RULES.md section 2 accepts, what it rejects and why, value sets."""

from __future__ import annotations

import pickle
import random

import cron_oracle
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeting_gym.envs.cron_schedule.expression import (
    MACROS,
    Cron,
    CronError,
    bits,
    parse,
    try_parse,
)

# (expression, field index, expected values): RULES section 2's meaning of each element
EXPANSIONS = [
    ("*/45 * * * *", 0, (0, 45)),  # not "every 45 minutes"
    ("*/60 * * * *", 0, (0,)),
    ("*/100 * * * *", 0, (0,)),
    ("5/15 * * * *", 0, (5, 20, 35, 50)),
    ("0-59/30 * * * *", 0, (0, 30)),
    ("5-5 * * * *", 0, (5,)),  # an equal range is its one value
    ("5-5/15 * * * *", 0, (5,)),
    ("007 * * * *", 0, (7,)),
    ("0 1/5 * * *", 1, (1, 6, 11, 16, 21)),
    ("0 0 */2 * *", 2, tuple(range(1, 32, 2))),
    ("0 0 */31 * *", 2, (1,)),
    ("0 0 * */3 *", 3, (1, 4, 7, 10)),
    ("0 0 * */5 *", 3, (1, 6, 11)),
    ("0 0 1 JAN-DEC/3 *", 3, (1, 4, 7, 10)),
    ("0 0 * nov,Feb *", 3, (2, 11)),
    ("0 0 * * */2", 4, (0, 2, 4, 6)),
    ("0 0 * * */3", 4, (0, 3, 6)),
    ("0 0 * * 1/3", 4, (0, 1, 4)),  # Mon, Thu, Sun (1, 4, 7)
    ("0 0 * * 5/2", 4, (0, 5)),  # Fri, Sun
    ("0 0 * * 7", 4, (0,)),
    ("0 0 * * 7-7", 4, (0,)),
    ("0 0 * * 0-7", 4, tuple(range(7))),
    ("0 0 * * MON-7", 4, (0, 1, 2, 3, 4, 5, 6)),
    ("0 0 * * 1-FRI", 4, (1, 2, 3, 4, 5)),
    ("0 0 * * sun-sat", 4, tuple(range(7))),
    ("0 0 * * 1-7/2", 4, (0, 1, 3, 5)),
    ("0 0 * * 6,6,SAT", 4, (6,)),
    ("1,1,2-3,3 * * * *", 0, (1, 2, 3)),
]


@pytest.mark.parametrize("text, field, values", EXPANSIONS)
def test_elements_expand_as_rules_section_2_says(text, field, values):
    assert parse(text).values(field) == values


# (expression, a fragment of the reason): RULES section 2's rejections, each with its reason
REJECTED = [
    ("", "empty expression"),
    ("   \t ", "empty expression"),
    ("0 0 * *", "expected 5 fields"),
    ("0 0 * * * *", "expected 5 fields"),
    ("0 0 0 0 0 0", "expected 5 fields"),
    ("0 0 * * * 2024", "expected 5 fields"),
    ("0 0 0 1 1 ? 2024", "expected 5 fields"),
    ("CRON_TZ=UTC 0 0 * * *", "environment setting"),
    ("TZ=UTC 0 0 * * *", "environment setting"),
    ("5-2 * * * *", "descending range '5-2'"),
    ("0 22-2 * * *", "descending range '22-2' (ranges do not wrap)"),
    ("0 0 * * FRI-MON", "descending range 'FRI-MON'"),
    ("0 0 * * MON-SUN", "descending range 'MON-SUN'"),
    ("0 0 * NOV-FEB *", "descending range 'NOV-FEB'"),
    ("*/0 * * * *", "step 0"),
    ("*/00 * * * *", "step 0"),
    ("*/-1 * * * *", "bad step '-1'"),
    ("*/x * * * *", "bad step 'x'"),
    ("*/5x * * * *", "bad step '5x'"),
    ("*/ * * * *", "without a step"),
    ("5/ * * * *", "without a step"),
    ("5L * * * *", "bad value '5L'"),
    ("*x * * * *", "bad value '*x'"),
    ("** * * * *", "bad value '**'"),
    ("60 * * * *", "minute field: value '60' out of range 0-59"),
    ("0-60 * * * *", "value '60' out of range"),
    ("50-70/30 * * * *", "value '70' out of range"),  # even if the step skips it
    ("0 24 * * *", "hour field: value '24' out of range 0-23"),
    ("0 0 0 * *", "day-of-month field: value '0' out of range 1-31"),
    ("0 0 32 * *", "value '32' out of range"),
    ("0 0 * 0 *", "month field: value '0' out of range 1-12"),
    ("0 0 * 13 *", "value '13' out of range"),
    ("0 0 * * 8", "day-of-week field: value '8' out of range 0-7"),
    ("1,,2 * * * *", "empty list element"),
    ("1, * * * *", "empty list element"),
    (",1 * * * *", "empty list element"),
    ("+5 * * * *", "bad value '+5'"),
    ("-5 * * * *", "no sign"),
    ("\uff15 * * * *", "bad value"),  # full-width digit
    ("\u0665 * * * *", "bad value"),  # Arabic-Indic digit
    ("0 0 L * *", "bad value 'L'"),
    ("0 0 15W * *", "bad value '15W'"),
    ("0 0 * * 5L", "bad value '5L'"),
    ("0 0 * * 1#2", "bad value '1#2'"),
    ("0 0 ? * 1", "bad value '?'"),
    ("H * * * *", "bad value 'H'"),
    ("H/5 * * * *", "bad value 'H'"),
    ("~ * * * *", "bad value '~'"),
    ("0 0 * * Monday", "names are three letters"),
    ("0 0 * January *", "names are three letters"),
    ("mon * * * *", "allowed only in the month and day-of-week fields"),
    ("0 0 jan * *", "allowed only in the month"),
    ("0 0 * * XYZ", "unknown name 'XYZ'"),
    ("0 0 * * */MON", "bad step 'MON'"),  # names are values, never steps
    ("0 0\n* * *", "character '\\n' at position 3"),
    ("0\u00a00 * * *", "character '\\xa0'"),
    ("0 0 * * *\u2003", "character '\\u2003'"),
    ("@reboot", "@reboot has no time schedule"),
    ("@DAILY", "unsupported macro '@DAILY'"),
    ("@Weekly", "unsupported macro"),
    ("@every 5m", "unsupported macro"),
    ("@daily *", "unsupported macro"),
    ("@", "unsupported macro"),
]


@pytest.mark.parametrize("text, reason", REJECTED)
def test_invalid_expressions_are_rejected_with_their_reason(text, reason):
    with pytest.raises(CronError) as caught:
        parse(text)
    assert reason in str(caught.value)
    assert try_parse(text) is None


ACCEPTED = [
    "* * * * *",
    "  0 9 * * 1-5 \r\n",  # spaces, tabs, CR and LF around are removed
    "0\t9\t*\t*\t1-5",
    "0   9 *  * 1-5",
    "*/100 * * * *",
    "0 0 */31 * *",
    "0 0 * * 0-7",
    "00 09 01 01 00",
    "0 0 * * mOn",
    "0 0 1 JAN-DEC/3 *",
    "0 0 31 2 *",  # never fires, still valid
    *MACROS,
]


@pytest.mark.parametrize("text", ACCEPTED)
def test_valid_expressions_are_accepted(text):
    assert isinstance(parse(text), Cron)


def test_macros_are_their_expansions():
    for macro, expansion in MACROS.items():
        cron = parse(macro)
        assert cron == parse(expansion) and cron.expression() == expansion
        assert cron.source == macro


def test_the_day_rule_flag_reads_the_field_text():
    assert parse("0 9 * * 1").and_rule and parse("0 9 */2 * 1").and_rule
    assert parse("0 9 1 * */1").and_rule and parse("0 9 *,5 * 1").and_rule
    assert not parse("0 9 1-31 * 1").and_rule and not parse("0 9 13 * FRI").and_rule
    assert parse("0 9 13 * FRI").both_days_restricted
    assert not parse("0 9 * * FRI").both_days_restricted
    assert parse("0 9 */2 * 1").both_days_restricted


def test_crons_are_immutable_picklable_and_equal_by_value_sets():
    cron = parse("0,30 9-17 * * MON-FRI")
    assert pickle.loads(pickle.dumps(cron)) == cron
    assert cron == parse("*/30 9,10,11,12,13,14,15,16,17 * * 1-5")
    with pytest.raises(AttributeError):
        cron.minutes = 0  # type: ignore[misc]
    assert bits(cron.minutes) == (0, 30)


def test_a_huge_value_or_step_is_handled_without_int_limits():
    assert parse("*/" + "9" * 5000 + " * * * *").values(0) == (0,)
    assert parse("0" * 3000 + "7 * * * *").values(0) == (7,)
    with pytest.raises(CronError, match="out of range"):
        parse("9" * 5000 + " * * * *")


def test_a_non_string_is_an_error_not_a_crash():
    for value in (None, 5, b"0 0 * * *", ["0", "0"]):
        with pytest.raises(CronError, match="as a string"):
            parse(value)  # type: ignore[arg-type]


def test_the_parser_agrees_with_the_independent_oracle_on_random_expressions():
    rng = random.Random(7)
    for _ in range(3000):
        text = cron_oracle.random_expression(rng)
        cron, schedule = parse(text), cron_oracle.parse(text)
        assert schedule is not None, text
        for index, values in enumerate(
            (schedule.minute, schedule.hour, schedule.dom, schedule.month, schedule.dow)
        ):
            if index == 4:
                values = {v % 7 for v in values}
            assert cron.values(index) == tuple(sorted(values)), (text, index)
        assert cron.and_rule == schedule.star_day, text


_PIECES = st.sampled_from([*"0123456789*/,-", "MON", "jan", "L", "#", "?", "7", "60", "\t"])
_FIELD = st.lists(_PIECES, min_size=1, max_size=6).map("".join)
_TEXTS = st.lists(_FIELD, min_size=4, max_size=6).map(" ".join) | st.text(max_size=30)


@settings(max_examples=500, deadline=None)
@given(_TEXTS)
def test_parser_and_oracle_accept_the_same_texts(text):
    """Arbitrary texts: never a crash other than CronError, and the same verdict as the oracle."""
    try:
        cron = parse(text)
    except CronError:
        cron = None
    assert (cron is None) == (cron_oracle.parse(text) is None), text
