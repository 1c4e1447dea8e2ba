"""CalendarMath rubric: RULES section 3 example by example, our three deliberate differences,
reward hacking, and properties over arbitrary text."""

from __future__ import annotations

import re
import time
from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeting_gym.envs.calendar_math.answers import (
    PARTIAL,
    WEIGHTS,
    extract,
    format_answer,
    normalize,
    reward,
    score,
)
from meeting_gym.envs.calendar_math.curated import CURATED

LONG_S = "\u017f"  # LATIN SMALL LETTER LONG S: re.IGNORECASE folds it to s
NBSP, IDEOGRAPHIC_SPACE = "\u00a0", "\u3000"
FULLWIDTH = str.maketrans("0123456789", "".join(chr(0xFF10 + i) for i in range(10)))
ARABIC_INDIC = str.maketrans("0123456789", "".join(chr(0x0660 + i) for i in range(10)))
REWARDS = (0.0, 0.2, 0.26, 0.3, 1.2)


def grade(text: str, gold: str, task_type: str) -> tuple[tuple[float, float, float], float]:
    terms = score(extract(text), gold, task_type)
    return terms, reward(terms)


# --- 3.1 the block --------------------------------------------------------------------------

LAYOUTS = [
    ("<answer>2024-02-29</answer>", "2024-02-29"),
    ("reasoning... <answer>7</answer> trailing words", "7"),
    ("<ANSWER>x</ANSWER>", "x"),
    ("<Answer>x</aNsWeR>", "x"),
    (f"<an{LONG_S}wer>x</AN{LONG_S}WER>", "x"),
    ("<answer >x</answer>", None),
    ("< answer>x</answer>", None),
    ("<answer>x</ answer>", None),
    ("<answer>x</answer\n>", None),
    ("<answer>x</answer >", None),
    ('<answer id="1">x</answer>', None),
    ("<answers>x</answers>", None),
    ("\uff1canswer\uff1ex\uff1c/answer\uff1e", None),  # fullwidth angle brackets
    ("<answer>x", None),
    ("x</answer>", None),
    ("</answer><answer>x", None),
    ("</answer><answer>x</answer>", "x"),
    ("<answer><answer>x</answer></answer>", "<answer>x"),
    ("<answer>x<answer>y</answer>", "x<answer>y"),
    ("<answer>a</answer><answer>b</answer>", "a"),
    ("<answer></answer>", ""),
    (f"<answer> \n\t{NBSP}{IDEOGRAPHIC_SPACE}</answer>", ""),
    ("<answer>\n2024-02-29\n</answer>", "2024-02-29"),
    (f"<answer>{NBSP}Thursday{IDEOGRAPHIC_SPACE}</answer>", "Thursday"),
    ("<answer>line one\nline two</answer>", "line one\nline two"),
    ("<<answer>>x<</answer>>", ">x<"),
    ("", None),
    ("no tags at all", None),
]


@pytest.mark.parametrize(("text", "content"), LAYOUTS, ids=[repr(t)[:40] for t, _ in LAYOUTS])
def test_extract_layouts(text, content):
    assert extract(text) == content


# The predecessor's rule as a lazy regex: an independent oracle (quadratic, so small inputs only).
ORACLE = re.compile(r"<answer>\s*(.*?)\s*</answer>", re.IGNORECASE | re.DOTALL)


def oracle(text: str) -> str | None:
    match = ORACLE.search(text)
    return None if match is None else match.group(1).strip()


FRAGMENTS = st.sampled_from(
    ["<answer>", "</answer>", "<ANSWER>", f"</AN{LONG_S}WER>", "<Answer>", "</answer >",
     "< answer>", "<answer", "answer>", "<", ">", "/", " ", "\n", NBSP, IDEOGRAPHIC_SPACE,
     "x", "2024-02-29", "Thursday", "-3"]
)  # fmt: skip
TAGGY_TEXT = st.lists(FRAGMENTS | st.text(max_size=4), max_size=12).map("".join)


@settings(max_examples=300, deadline=None)
@given(TAGGY_TEXT)
def test_extract_agrees_with_the_lazy_regex_oracle(text):
    assert extract(text) == oracle(text)


def megabyte(unit: str, head: str = "", tail: str = "") -> str:
    return head + unit * (1_000_000 // len(unit) + 1) + tail


PATHOLOGICAL = {
    "openings": megabyte("<answer>"),
    "openings-then-close-far": megabyte("<answer>", tail="</answer>"),
    "half-tags": megabyte("<answer"),
    "angles": megabyte("<"),
    "near-closings": megabyte("</answe", head="<answer>"),
    "mixed-case": megabyte("<AnSwEr></aNsWe"),
    "long-content": megabyte("a", head="<answer>", tail="</answer>"),
    "whitespace": megabyte(" \n", head="<answer>", tail="</answer>"),
    "digits": megabyte("9", head="<answer>", tail="</answer>"),
}


@pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
def test_extract_is_linear_on_a_megabyte_of_pathological_text(name):
    text = PATHOLOGICAL[name]
    assert len(text) >= 1_000_000
    started = time.perf_counter()
    content = extract(text)
    terms = [score(content, gold, task) for gold, task in (("2024-02-29", "add_days"),
             ("-12", "days_between"), ("Monday", "weekday"))]  # fmt: skip
    assert time.perf_counter() - started < 0.5  # the lazy regex needs minutes on some
    # a block of a million digits is a block, and no int() of it is attempted
    assert {t[1:] for t in terms} == ({(1.0, 0.0)} if content is not None else {(0.0, 0.0)})
    assert all(t[0] == 0.0 for t in terms)


# --- 3.2 normalisation and 3.3 exact match ---------------------------------------------------


@pytest.mark.parametrize(
    ("text", "normal"),
    [("  a  ", "a"), ("a \n\t b", "a b"), (f"a{NBSP}{IDEOGRAPHIC_SPACE}b", "a b"), ("", "")],
)
def test_normalize_strips_and_collapses_whitespace(text, normal):
    assert normalize(text) == normal


NOT_EXACT = [
    ("thursday", "Thursday", "weekday"),
    ("THURSDAY", "Thursday", "weekday"),
    ("Thu", "Thursday", "weekday"),
    ("+2", "2", "days_between"),
    ("02", "2", "days_between"),
    ("2.0", "2", "days_between"),
    ("2 days", "2", "days_between"),
    ("2024-2-29", "2024-02-29", "add_days"),
    ("2024/02/29", "2024-02-29", "add_days"),
    ("2024-02-29T00:00", "2024-02-29", "add_days"),
]


@pytest.mark.parametrize(("content", "gold", "task_type"), NOT_EXACT)
def test_rules_3_2_not_exact_list(content, gold, task_type):
    exact, fmt, partial = score(content, gold, task_type)
    assert (exact, fmt, partial) == (0.0, 1.0, 0.0)


def test_exact_ignores_surrounding_whitespace_but_not_internal():
    assert score(" \n2024-02-29\t", "2024-02-29", "add_days") == (1.0, 1.0, 0.0)
    assert score("Thurs day", "Thursday", "weekday") == (0.0, 1.0, 0.0)


# --- 3.4 format, 3.5 partial credit ----------------------------------------------------------


def test_format_counts_any_block_even_empty_and_ignores_outside_text():
    assert grade("<answer></answer>", "2", "days_between")[0] == (0.0, 1.0, 0.0)
    assert grade("2 is the answer", "2", "days_between")[0] == (0.0, 0.0, 0.0)
    assert grade("2 <answer>2</answer> 3", "2", "days_between")[0] == (1.0, 1.0, 0.0)
    assert score(None, "Monday", "weekday") == (0.0, 0.0, 0.0)


PARTIALS = [
    # add_days: a real date exactly one day off, across month and year ends
    ("2024-03-01", "2024-02-29", "add_days", 0.5),
    ("2024-02-28", "2024-02-29", "add_days", 0.5),
    ("2023-12-31", "2024-01-01", "add_days", 0.5),
    ("2025-01-01", "2024-12-31", "add_days", 0.5),
    ("1900-02-28", "1900-03-01", "add_days", 0.5),
    ("9999-12-30", "9999-12-31", "add_days", 0.5),
    ("0001-01-02", "0001-01-01", "add_days", 0.5),
    ("1582-10-05", "1582-10-04", "add_days", 0.5),
    ("2024-03-02", "2024-02-29", "add_days", 0.0),
    ("2023-02-28", "2024-02-29", "add_days", 0.0),
    # days_between: off by one, both signs
    ("3", "2", "days_between", 0.5),
    ("1", "2", "days_between", 0.5),
    ("1", "0", "days_between", 0.5),
    ("-1", "0", "days_between", 0.5),
    ("-4", "-5", "days_between", 0.5),
    ("-6", "-5", "days_between", 0.5),
    ("4", "2", "days_between", 0.0),
    ("-2", "2", "days_between", 0.0),
    # weekday: adjacent around the week
    ("Friday", "Thursday", "weekday", 0.3),
    ("Wednesday", "Thursday", "weekday", 0.3),
    ("Sunday", "Monday", "weekday", 0.3),
    ("Monday", "Sunday", "weekday", 0.3),
    ("Saturday", "Thursday", "weekday", 0.0),
    ("Thursday", "Sunday", "weekday", 0.0),
]


@pytest.mark.parametrize(("content", "gold", "task_type", "partial"), PARTIALS)
def test_partial_credit_values(content, gold, task_type, partial):
    assert score(content, gold, task_type) == (0.0, 1.0, partial)
    assert PARTIAL[task_type] in (0.5, 0.3)


def test_exact_answer_earns_no_partial():
    for item in CURATED:
        assert score(item.gold, item.gold, item.task_type) == (1.0, 1.0, 0.0)


def test_rules_3_5_consequences():
    # off-by-one dates earn 0.5 only when the predicted date is real
    assert score("1900-02-29", "1900-03-01", "add_days") == (0.0, 1.0, 0.0)
    assert score("1900-02-28", "1900-03-01", "add_days") == (0.0, 1.0, 0.5)
    assert score("2023-02-29", "2023-03-01", "add_days") == (0.0, 1.0, 0.0)
    # a wrong-case weekday earns nothing, even when adjacent
    assert score("friday", "Thursday", "weekday") == (0.0, 1.0, 0.0)
    assert score("FRIDAY", "Thursday", "weekday") == (0.0, 1.0, 0.0)
    # an answer off by two or more earns nothing
    assert score("2024-03-02", "2024-02-29", "add_days")[2] == 0.0
    assert score("5", "2", "days_between")[2] == 0.0
    assert score("Saturday", "Thursday", "weekday")[2] == 0.0
    # free text of the wrong shape earns nothing
    assert score("Thursday", "2024-02-29", "add_days")[2] == 0.0
    assert score("2024-02-29", "2", "days_between")[2] == 0.0


# --- 3.6 reward -----------------------------------------------------------------------------


def test_reward_weights_and_floating_point():
    assert WEIGHTS == (1.0, 0.2, 0.2)
    assert reward((1.0, 1.0, 0.0)) == 1.2
    assert reward((0.0, 1.0, 0.5)) == 0.2 + 0.2 * 0.5 == 0.30000000000000004
    assert reward((0.0, 1.0, 0.3)) == pytest.approx(0.26)
    assert reward((0.0, 0.0, 0.0)) == 0.0


def candidates(gold: str, task_type: str) -> list[str]:
    out = [gold, gold.lower(), "", "garbage", gold + " extra"]
    if task_type == "add_days":
        day = date.fromisoformat(gold)
        out += [date.fromordinal(day.toordinal() + k).isoformat() for k in (-2, -1, 1, 2)]
    elif task_type == "days_between":
        out += [str(int(gold) + k) for k in (-2, -1, 1, 2)]
    else:
        names = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
        out += [names[(names.index(gold) + k) % 7] for k in (-2, -1, 1, 2)]
    return out


def test_possible_reward_values_are_exactly_the_documented_ones():
    seen = set()
    for item in CURATED:
        seen.add(round(grade("no block", item.gold, item.task_type)[1], 9))
        for answer in candidates(item.gold, item.task_type):
            seen.add(round(grade(format_answer(answer), item.gold, item.task_type)[1], 9))
    assert seen == set(REWARDS)


# --- deliberate differences from the predecessor ------------------------------------------------


def test_difference_8_1_one_block_for_all_three_terms():
    gold = "2024-02-29"
    # the predecessor's hub rubric took exact from the lowercase block and partial from the
    # first block: 1.0 + 0.2 + 0.2 * 0.5 = 1.3, above the 1.2 ceiling. One block: 0.3.
    terms, value = grade(
        "<ANSWER>2024-03-01</ANSWER> ... <answer>2024-02-29</answer>", gold, "add_days"
    )
    assert terms == (0.0, 1.0, 0.5) and value == pytest.approx(0.3)
    # and the reverse, which the hub scored 0.2, is exact: the first block is right
    terms, value = grade(
        "<ANSWER>2024-02-29</ANSWER> ... <answer>2024-03-01</answer>", gold, "add_days"
    )
    assert terms == (1.0, 1.0, 0.0) and value == 1.2


def predecessor_partial(content: str, gold: str, task_type: str) -> float:
    """RULES 3.5 for a known task, as the predecessor read numbers: any Unicode digit."""
    answer = normalize(content)
    if answer == gold:
        return 0.0
    if task_type == "add_days":
        match = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", answer)
        if match:
            guess = date(*(int(part) for part in match.groups()))
            return 0.5 if abs((guess - date.fromisoformat(gold)).days) == 1 else 0.0
        return 0.0
    try:
        return 0.5 if abs(int(answer) - int(gold)) == 1 else 0.0
    except ValueError:
        return 0.0


NON_CANONICAL_OFF_BY_ONE = [
    ("+3", "2", "days_between"),
    ("03", "2", "days_between"),
    ("0_3", "2", "days_between"),
    ("1_0", "9", "days_between"),
    ("-0_4", "-5", "days_between"),
    ("3".translate(FULLWIDTH), "2", "days_between"),
    ("3".translate(ARABIC_INDIC), "2", "days_between"),
    ("366".translate(ARABIC_INDIC), "365", "days_between"),
    ("2024-03-01".translate(FULLWIDTH), "2024-02-29", "add_days"),
    ("2024-03-01".translate(ARABIC_INDIC), "2024-02-29", "add_days"),
    ("2024-03-01".translate(str.maketrans("2", "\u0968")), "2024-02-29", "add_days"),  # Devanagari
]


@pytest.mark.parametrize(("content", "gold", "task_type"), NON_CANONICAL_OFF_BY_ONE)
def test_difference_8_3_partial_credit_only_for_canonical_answers(content, gold, task_type):
    assert predecessor_partial(content, gold, task_type) == 0.5  # it paid these
    assert score(content, gold, task_type) == (0.0, 1.0, 0.0)  # we do not


def test_difference_8_4_task_type_is_always_known():
    # the predecessor paid a count's off-by-one only when an info dict named the task;
    # here the task type is a required argument, so the rule cannot silently switch off
    assert score("3", "2", "days_between") == (0.0, 1.0, 0.5)
    with pytest.raises(TypeError):
        score("3", "2")  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="unknown task_type"):
        score("3", "2", None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown task_type"):
        score("3", "2", "task")


@pytest.mark.parametrize(
    ("gold", "task_type"),
    [("2024-2-29", "add_days"), ("Thursday", "add_days"), ("+2", "days_between"),
     ("02", "days_between"), ("2024-02-29", "days_between"), ("thursday", "weekday"),
     ("2".translate(FULLWIDTH), "days_between"), (" 2", "days_between")],
)  # fmt: skip
def test_a_gold_the_checker_cannot_read_is_refused(gold, task_type):
    with pytest.raises(ValueError, match="not a canonical"):
        score("x", gold, task_type)


# --- reward hacking -----------------------------------------------------------------------------

# (completion, gold, task_type, the most this may earn in partial credit)
HACKS = [
    # several answers in one block
    ("<answer>2024-02-29 2024-03-01</answer>", "2024-02-29", "add_days", 0.0),
    ("<answer>2024-02-29,2024-03-01</answer>", "2024-02-29", "add_days", 0.0),
    ("<answer>2024-02-29\n2024-02-28</answer>", "2024-02-29", "add_days", 0.0),
    ("<answer>2 3</answer>", "2", "days_between", 0.0),
    ("<answer>1|2|3</answer>", "2", "days_between", 0.0),
    ("<answer>Thursday or Friday</answer>", "Thursday", "weekday", 0.0),
    ("<answer>Monday Tuesday Wednesday Thursday Friday Saturday Sunday</answer>", "Thursday",
     "weekday", 0.0),
    # the gold plus extra words or punctuation
    ("<answer>2024-02-29 is the answer</answer>", "2024-02-29", "add_days", 0.0),
    ("<answer>Answer: 2</answer>", "2", "days_between", 0.0),
    ("<answer>2 days</answer>", "2", "days_between", 0.0),
    ("<answer>Thursday.</answer>", "Thursday", "weekday", 0.0),
    ("<answer>'Thursday'</answer>", "Thursday", "weekday", 0.0),
    # the gold in other digits
    ("<answer>" + "2024-02-29".translate(FULLWIDTH) + "</answer>", "2024-02-29", "add_days", 0.0),
    ("<answer>" + "2024-02-29".translate(ARABIC_INDIC) + "</answer>", "2024-02-29", "add_days",
     0.0),
    ("<answer>" + "3".translate(FULLWIDTH) + "</answer>", "3", "days_between", 0.0),
    ("<answer>" + "3".translate(ARABIC_INDIC) + "</answer>", "3", "days_between", 0.0),
    # non-canonical spellings of the count
    ("<answer>+3</answer>", "3", "days_between", 0.0),
    ("<answer>03</answer>", "3", "days_between", 0.0),
    ("<answer>0_3</answer>", "3", "days_between", 0.0),
    ("<answer>1_0</answer>", "10", "days_between", 0.0),
    ("<answer>-0</answer>", "0", "days_between", 0.0),
    ("<answer>3.0</answer>", "3", "days_between", 0.0),
    # the wrong case
    ("<answer>thursday</answer>", "Thursday", "weekday", 0.0),
    ("<answer>THURSDAY</answer>", "Thursday", "weekday", 0.0),
    # a second block holding the gold after a wrong first block
    ("<answer>garbage</answer><answer>2024-02-29</answer>", "2024-02-29", "add_days", 0.0),
    ("<answer>2024-03-01</answer><answer>2024-02-29</answer>", "2024-02-29", "add_days", 0.5),
    ("<answer>Friday</answer><answer>Thursday</answer>", "Thursday", "weekday", 0.3),
    ("<answer>7</answer>\n<ANSWER>2</ANSWER>", "2", "days_between", 0.0),
    # the gold outside any block, or in an unclosed one
    ("2024-02-29", "2024-02-29", "add_days", 0.0),
    ("<answer>2024-02-29", "2024-02-29", "add_days", 0.0),
    ("<answer >2024-02-29</answer>", "2024-02-29", "add_days", 0.0),
]  # fmt: skip


@pytest.mark.parametrize(("text", "gold", "task_type", "most"), HACKS)
def test_reward_hacking_is_never_exact(text, gold, task_type, most):
    (exact, _fmt, partial), value = grade(text, gold, task_type)
    assert exact == 0.0
    assert partial <= most
    assert value <= 0.2 + 0.2 * most + 1e-9


# --- properties over arbitrary text -----------------------------------------------------------

GOLDS = [(item.gold, item.task_type) for item in CURATED] + [
    ("0001-01-01", "add_days"), ("9999-12-31", "add_days"), ("-3652058", "days_between"),
    ("Sunday", "weekday"), ("Monday", "weekday"),
]  # fmt: skip
ANY_TEXT = st.text() | TAGGY_TEXT | st.builds(lambda t: f"<answer>{t}</answer>", st.text())


@settings(max_examples=300, deadline=None)
@given(text=ANY_TEXT, case=st.sampled_from(GOLDS))
def test_any_text_scores_within_bounds(text, case):
    gold, task_type = case
    (exact, fmt, partial), value = grade(text, gold, task_type)
    assert 0.0 <= value <= 1.2
    assert any(value == pytest.approx(allowed) for allowed in REWARDS)
    if exact:
        assert partial == 0.0 and fmt == 1.0
    assert fmt == (extract(text) is not None)


WHITESPACE = st.text(
    alphabet=[" ", "\n", "\t", "\r", NBSP, IDEOGRAPHIC_SPACE, "\u2003"], max_size=4
)
OPEN_TAG = st.sampled_from(["<answer>", "<ANSWER>", "<Answer>", f"<an{LONG_S}wer>"])
CLOSE_TAG = st.sampled_from(["</answer>", "</ANSWER>", "</answeR>", f"</AN{LONG_S}WER>"])


@settings(max_examples=250, deadline=None)
@given(
    prefix=st.text(),
    suffix=st.text() | TAGGY_TEXT,
    left=WHITESPACE,
    right=WHITESPACE,
    opening=OPEN_TAG,
    closing=CLOSE_TAG,
    case=st.sampled_from(GOLDS),
)
def test_gold_in_one_clean_block_is_always_exact(
    prefix, suffix, left, right, opening, closing, case
):
    gold, task_type = case
    prefix = re.sub("<answer>", "", prefix, flags=re.IGNORECASE)  # no block before ours
    text = f"{prefix}{opening}{left}{gold}{right}{closing}{suffix}"
    assert grade(text, gold, task_type) == ((1.0, 1.0, 0.0), 1.2)
