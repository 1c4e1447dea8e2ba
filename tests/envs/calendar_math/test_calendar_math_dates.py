"""CalendarMath calendar facts and items: gold proven against an independent implementation.

The reference here is integer civil-calendar arithmetic (days-from-civil / civil-from-days,
after Howard Hinnant's published algorithms), written without ``datetime``: if the package's
``datetime``-based gold and this agree on every curated case, on tens of thousands of
generated items and on every day around the leap and century boundaries, both are right.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paths import DATA, ROOT
from purity import imports_of

from meeting_gym.envs.calendar_math import answers, dates
from meeting_gym.envs.calendar_math.curated import CURATED, CURATED_BY_ID
from meeting_gym.envs.calendar_math.generator import generate
from meeting_gym.envs.calendar_math.items import Item, ItemError

# the predecessor's curated cases, copied into the repo (tests/data/README.md: source, licence)
REFERENCE = DATA / "calendar_math"
PACKAGE = ROOT / "meeting_gym" / "envs" / "calendar_math"


def reference_json(name: str) -> dict:
    return json.loads((REFERENCE / name).read_text(encoding="utf-8"))


# --- the independent implementation: integers only, no datetime -------------------------

NAMES = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def days_from_civil(y: int, m: int, d: int) -> int:
    """Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def civil_from_days(z: int) -> tuple[int, int, int]:
    """The inverse of days_from_civil."""
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (m <= 2), m, d


FULLWIDTH_2024 = "\uff12\uff10\uff12\uff14"
ARABIC_INDIC_2024 = "\u0662\u0660\u0662\u0664"

FIRST = days_from_civil(1, 1, 1)
LAST = days_from_civil(9999, 12, 31)


def ref_days(text: str) -> int:
    y, m, d = (int(part) for part in text.split("-"))
    z = days_from_civil(y, m, d)
    assert civil_from_days(z) == (y, m, d), f"{text} is not a real date"
    return z


def ref_text(z: int) -> str:
    y, m, d = civil_from_days(z)
    return f"{y:04d}-{m:02d}-{d:02d}"


def ref_gold(task_type: str, inputs: dict) -> str | None:
    """The gold by integer arithmetic; None when the result leaves years 1..9999."""
    start = ref_days(inputs["start"])
    if task_type == "add_days":
        z = start + inputs["n"]
        return ref_text(z) if FIRST <= z <= LAST else None
    if task_type == "days_between":
        return str(ref_days(inputs["end"]) - start)
    return NAMES[(start + 3) % 7]  # 1970-01-01 was a Thursday


def ref_question(task_type: str, inputs: dict) -> str:
    """RULES section 1's templates, transcribed."""
    if task_type == "add_days":
        n = inputs["n"]
        word = "after" if n >= 0 else "before"
        unit = "day" if abs(n) == 1 else "days"
        return (
            f"What date is {abs(n)} {unit} {word} {inputs['start']}? "
            "Reply with a single YYYY-MM-DD date."
        )
    if task_type == "days_between":
        return (
            f"How many days after {inputs['start']} is {inputs['end']}? Count the number of "
            "midnights that pass (so 2024-01-01 to 2024-01-02 is 1; the same day is 0). Reply "
            "with a single integer. The integer may be negative if the end date is earlier "
            "than the start date."
        )
    return (
        f"What day of the week is {inputs['start']}? Reply with the full English weekday "
        "name (Monday, Tuesday, Wednesday, Thursday, Friday, Saturday, or Sunday)."
    )


def test_reference_implementation_self_check():
    # anchors the reference itself, so a shared mistake cannot hide: known weekdays and
    # the length of the 400-year cycle
    assert days_from_civil(1970, 1, 1) == 0
    assert ref_gold("weekday", {"start": "2024-02-29"}) == "Thursday"
    assert ref_gold("weekday", {"start": "1969-07-20"}) == "Sunday"  # Apollo 11 landing
    assert days_from_civil(2400, 1, 1) - days_from_civil(2000, 1, 1) == 146097
    assert all(civil_from_days(z) != (1900, 2, 29) for z in range(-25600, -25500))


# --- gold vs the reference -------------------------------------------------------------


@pytest.mark.parametrize("item", CURATED, ids=lambda item: item.id)
def test_curated_gold_matches_reference(item):
    assert item.gold == ref_gold(item.task_type, dict(item.inputs))
    assert item.question == ref_question(item.task_type, dict(item.inputs))


_GENERATED: dict[str, list[Item]] = {}


def generated(difficulty: str) -> list[Item]:
    if difficulty not in _GENERATED:
        rng = random.Random(f"gold-{difficulty}")
        _GENERATED[difficulty] = [generate(rng, difficulty) for _ in range(6000)]
    return _GENERATED[difficulty]


@pytest.mark.parametrize("difficulty", ["easy", "medium", "hard", "expert"])
def test_generated_gold_and_question_match_reference(difficulty):
    items = generated(difficulty)
    assert {item.task_type for item in items} == set(dates.TASK_TYPES)
    for item in items:
        inputs = dict(item.inputs)
        assert item.gold == ref_gold(item.task_type, inputs), item
        assert item.question == ref_question(item.task_type, inputs), item


# every day within RADIUS of each anchor, every offset and pair within RADIUS of it
RADIUS = 20
ANCHORS = (
    [f"{y:04d}-02-28" for y in (1582, 1600, 1700, 1800, 1900, 2000, 2100, 2400)]
    + [f"{y:04d}-12-31" for y in (1582, 1599, 1600, 1899, 1900, 1999, 2000, 2099, 2100, 2399)]
    + ["0001-01-01", "0001-03-01", "0004-02-28", "9999-12-31", "9996-02-28"]
)


@pytest.mark.parametrize("anchor", ANCHORS)
def test_edge_neighbourhoods_exhaustively(anchor):
    centre = ref_days(anchor)
    starts = [z for z in range(centre - RADIUS, centre + RADIUS + 1) if FIRST <= z <= LAST]
    checked = 0
    for z in starts:
        start = ref_text(z)
        assert dates.gold("weekday", {"start": start}) == ref_gold("weekday", {"start": start})
        for n in range(-RADIUS, RADIUS + 1):
            inputs = {"start": start, "n": n}
            expected = ref_gold("add_days", inputs)
            if expected is None:
                with pytest.raises(ValueError, match=r"0001\.\.9999"):
                    dates.gold("add_days", inputs)
            else:
                assert dates.gold("add_days", inputs) == expected, inputs
            if FIRST <= z + n <= LAST:
                pair = {"start": start, "end": ref_text(z + n)}
                assert dates.gold("days_between", pair) == str(n) == ref_gold("days_between", pair)
            checked += 1
    assert checked >= len(starts) * (2 * RADIUS + 1)


@pytest.mark.parametrize(
    ("start", "n"),
    [("9999-12-31", 1), ("0001-01-01", -1), ("9999-01-01", 365), ("0001-12-31", -365),
     ("2024-01-01", 10**6 * 4), ("2024-01-01", -(10**5000))],
    ids=["after-9999", "before-0001", "year-10000", "year-0", "4e6-days", "huge"],
)  # fmt: skip
def test_result_outside_years_1_to_9999_is_a_value_error(start, n):
    with pytest.raises(ValueError, match=r"leaves the supported years 0001\.\.9999"):
        dates.gold("add_days", {"start": start, "n": n})


def test_no_julian_gap_in_1582():
    # proleptic Gregorian, as Python's date: 1582-10-05 .. 14 are ordinary days
    assert dates.gold("add_days", {"start": "1582-10-04", "n": 1}) == "1582-10-05"
    assert dates.gold("days_between", {"start": "1582-10-04", "end": "1582-10-15"}) == "11"
    assert dates.gold("weekday", {"start": "1582-10-15"}) == "Friday"
    assert dates.gold("weekday", {"start": "1582-10-04"}) == "Monday"  # not Julian Thursday


@pytest.mark.parametrize(
    "text",
    [
        "2024-2-29", "24-02-29", "20240229", "2024-W09-4", "2024-060", "2024/02/29",
        " 2024-02-29", "2024-02-29 ", "2024-02-29\n", "+2024-02-29", "12024-01-01",
        FULLWIDTH_2024 + "-02-29", ARABIC_INDIC_2024 + "-02-29", "2024-02-30", "1900-02-29",
        "0000-01-01", "2024-13-01", "2024-00-10", "2024-02-29T00:00", "",
    ],
)  # fmt: skip
def test_parse_date_accepts_only_canonical_dates(text):
    # date.fromisoformat accepts 20240229 and 2024-W09-4 since Python 3.11: not we
    with pytest.raises(ValueError):
        dates.parse_date(text)


@pytest.mark.parametrize("text", ["0001-01-01", "9999-12-31", "2000-02-29", "1582-10-10"])
def test_parse_date_round_trips_canonical_dates(text):
    assert dates.format_date(dates.parse_date(text)) == text


@pytest.mark.parametrize(
    ("task_type", "inputs", "problem"),
    [
        ("add_day", {"start": "2024-01-01"}, "unknown task_type"),
        ("add_days", {"start": "2024-01-01"}, "needs input 'n'"),
        ("days_between", {"start": "2024-01-01"}, "needs input 'end'"),
        ("add_days", {"start": "2024-01-01", "n": True}, "n must be an integer"),
        ("add_days", {"start": "2024-01-01", "n": 1.0}, "n must be an integer"),
        ("weekday", {"start": "2024-1-01"}, "not a YYYY-MM-DD date"),
        ("weekday", ["2024-01-01"], "inputs must be a mapping"),
    ],
)
def test_gold_and_question_name_the_problem(task_type, inputs, problem):
    for function in (dates.gold, dates.question):
        with pytest.raises(ValueError, match=re.escape(problem)):
            function(task_type, inputs)


# --- curated cases and the predecessor's recorded text ---------------------------------


def test_curated_questions_golds_ids_and_labels_equal_curated_json():
    cases = reference_json("curated.json")["cases"]
    assert len(CURATED) == len(cases) == 15
    for item, case in zip(CURATED, cases, strict=True):
        assert item.id == case["id"]
        assert item.task_type == case["task_type"]
        assert dict(item.inputs) == case["inputs"]
        assert item.difficulty == case["difficulty"]
        assert item.question == case["question"]
        assert item.gold == case["gold"]
    assert [item.difficulty for item in CURATED].count("easy") == 1  # RULES 8.7, kept as is
    assert CURATED_BY_ID["db_same_day"].gold == "0"


# --- system prompt ---------------------------------------------------------------------


def test_system_prompt_states_our_rubric():
    prompt = dates.SYSTEM_PROMPT
    for needle in (
        "<answer>...</answer>", "first <answer> block", "YYYY-MM-DD", "zero-padded",
        "2024-01-01 to 2024-01-02 is 1", "the same day is 0", "no plus sign",
        "no leading zeros", "ASCII digits", "Case matters", "Monday, Tuesday, Wednesday",
        "proleptic Gregorian", "no units",
    ):  # fmt: skip
        assert needle in prompt, needle


def test_system_prompt_layout_and_examples_score_exact():
    # the layout the prompt shows, filled with a gold, is an exact answer under our rubric
    layout = dates.SYSTEM_PROMPT[dates.SYSTEM_PROMPT.index("<answer>\nYOUR_ANSWER") :]
    for item in CURATED:
        content = answers.extract(layout.replace("YOUR_ANSWER", item.gold))
        assert answers.score(content, item.gold, item.task_type) == (1.0, 1.0, 0.0)
    # and the sample answers it quotes are canonical (they would earn partial credit)
    assert answers.score("2024-03-02", "2024-03-01", "add_days")[2] == 0.5
    assert answers.score("0800-01-08", "0800-01-09", "add_days")[2] == 0.5
    for count in ("365", "-14", "0"):
        assert answers.score(str(int(count) + 1), count, "days_between")[2] == 0.5


# --- Item ------------------------------------------------------------------------------


def test_build_computes_question_gold_and_default_id():
    item = Item.build("add_days", {"start": "1900-02-28", "n": 1}, "hard")
    assert item.gold == "1900-03-01"
    assert (
        item.question == "What date is 1 day after 1900-02-28? Reply with a single YYYY-MM-DD date."
    )
    assert item.id == "cm-" + hashlib.sha256(item.question.encode()).hexdigest()[:8]
    assert re.fullmatch(r"cm-[0-9a-f]{8}", item.id)
    assert Item.build("weekday", {"start": "2000-01-01"}, None, id="mine").id == "mine"
    direct = Item(
        "add_days", {"start": "1900-02-28", "n": 1}, "hard", item.question, item.gold, None
    )
    assert direct == item  # constructed directly without an id, it gets the default one


def test_item_is_immutable_hashable_and_picklable():
    item = CURATED[0]
    assert item.inputs == {"start": "2024-02-28", "n": 1}
    assert item.inputs != {"start": "2024-02-28", "n": 2}
    assert item.inputs != {"start": "2024-02-28"}
    with pytest.raises(TypeError):
        item.inputs["n"] = 2  # type: ignore[index]
    with pytest.raises(AttributeError):
        item.gold = "x"  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(item)) == item
    assert hash(pickle.loads(pickle.dumps(item))) == hash(item)
    assert len({*CURATED, *CURATED}) == 15


def test_constructor_refuses_a_gold_or_question_the_inputs_do_not_imply():
    good = CURATED_BY_ID["add_1900_century_nonleap"]
    fields = {k: getattr(good, k) for k in ("task_type", "difficulty", "question", "id")}
    with pytest.raises(ItemError, match=r"^item\.gold: "):
        Item(inputs=dict(good.inputs), gold="1900-02-29", **fields)
    with pytest.raises(ItemError, match=r"^item\.question: "):
        Item(**{**fields, "question": "What?"}, inputs=dict(good.inputs), gold=good.gold)


GOOD = {"task_type": "add_days", "inputs": {"start": "2024-02-28", "n": 1}}

BAD_ITEMS = [
    ([], "item"),
    ("add_days", "item"),
    (None, "item"),
    ({}, "item.task_type"),
    ({"inputs": GOOD["inputs"]}, "item.task_type"),
    ({"task_type": "add_days"}, "item.inputs"),
    ({**GOOD, "task_type": "Add_days"}, "item.task_type"),
    ({**GOOD, "task_type": 1}, "item.task_type"),
    ({**GOOD, "task_type": ["add_days"]}, "item.task_type"),
    ({**GOOD, "inputs": None}, "item.inputs"),
    ({**GOOD, "inputs": [["start", "2024-02-28"]]}, "item.inputs"),
    ({**GOOD, "inputs": {"start": "2024-02-28"}}, "item.inputs.n"),
    ({**GOOD, "inputs": {"n": 1}}, "item.inputs.start"),
    ({**GOOD, "inputs": {"start": "2024-02-28", "n": 1, "end": "2024-03-01"}}, "item.inputs"),
    ({**GOOD, "inputs": {"start": "2024-02-28", "n": "x"}}, "item.inputs.n"),
    ({**GOOD, "inputs": {"start": "2024-02-28", "n": "1"}}, "item.inputs.n"),
    ({**GOOD, "inputs": {"start": "2024-02-28", "n": 0}}, "item.inputs.n"),
    ({**GOOD, "inputs": {"start": "2024-02-28", "n": True}}, "item.inputs.n"),
    ({**GOOD, "inputs": {"start": "2024-02-28", "n": 1.0}}, "item.inputs.n"),
    ({**GOOD, "inputs": {"start": "2024-02-28", "n": None}}, "item.inputs.n"),
    ({**GOOD, "inputs": {"start": "2024-02-28", "n": 10**5000}}, "item.inputs.n"),
    ({**GOOD, "inputs": {"start": "9999-12-31", "n": 1}}, "item.inputs.n"),
    ({**GOOD, "inputs": {"start": "0001-01-01", "n": -1}}, "item.inputs.n"),
    ({**GOOD, "inputs": {"start": "2024-2-28", "n": 1}}, "item.inputs.start"),
    ({**GOOD, "inputs": {"start": FULLWIDTH_2024 + "-02-28", "n": 1}}, "item.inputs.start"),
    ({**GOOD, "inputs": {"start": "2023-02-29", "n": 1}}, "item.inputs.start"),
    ({**GOOD, "inputs": {"start": "0000-12-31", "n": 1}}, "item.inputs.start"),
    ({**GOOD, "inputs": {"start": 20240228, "n": 1}}, "item.inputs.start"),
    ({**GOOD, "inputs": {"start": "2024-02-28\n", "n": 1}}, "item.inputs.start"),
    ({"task_type": "days_between", "inputs": {"start": "2024-02-28"}}, "item.inputs.end"),
    (
        {"task_type": "days_between", "inputs": {"start": "2024-02-28", "end": "2024-02-30"}},
        "item.inputs.end",
    ),
    ({"task_type": "weekday", "inputs": {"start": "2024-02-28", "n": 1}}, "item.inputs"),
    ({**GOOD, "difficulty": "impossible"}, "item.difficulty"),
    ({**GOOD, "difficulty": 3}, "item.difficulty"),
    ({**GOOD, "difficulty": "Hard"}, "item.difficulty"),
    ({**GOOD, "id": ""}, "item.id"),
    ({**GOOD, "id": 7}, "item.id"),
    ({**GOOD, "gold": "2024-03-01"}, "item.gold"),
    ({**GOOD, "gold": None}, "item.gold"),
    ({**GOOD, "question": "What date is it?"}, "item.question"),
    ({**GOOD, "answer": "2024-02-29"}, "item"),
]


@pytest.mark.parametrize(("data", "field"), BAD_ITEMS, ids=[f for _, f in BAD_ITEMS])
def test_from_dict_refuses_bad_data_naming_the_field(data, field):
    with pytest.raises(ItemError) as caught:
        Item.from_dict(data)
    assert str(caught.value).startswith(field + ": "), str(caught.value)
    assert len(str(caught.value)) < 300  # huge values are described, not printed


@pytest.mark.parametrize("n", ["x", True, False, 0, 1.0, "1", None, [1]])
def test_from_dict_message_for_a_bad_offset(n):
    with pytest.raises(ItemError) as caught:
        Item.from_dict({**GOOD, "inputs": {"start": "2024-02-28", "n": n}})
    assert str(caught.value) == f"item.inputs.n: must be a non-zero integer, got {n!r}"


def test_to_dict_from_dict_round_trip():
    items = [*CURATED, *(generate(random.Random(s), d) for s in range(50) for d in
                         ("easy", "medium", "hard", "expert"))]  # fmt: skip
    items.append(Item.build("weekday", {"start": "0001-01-01"}, None))
    for item in items:
        data = json.loads(json.dumps(item.to_dict()))
        assert Item.from_dict(data) == item
        assert (
            Item.from_dict({k: data[k] for k in ("task_type", "inputs", "difficulty", "id")})
            == item
        )
    bare = Item.from_dict({"task_type": "weekday", "inputs": {"start": "2000-01-01"}})
    assert bare.difficulty is None and bare.id.startswith("cm-") and bare.gold == "Saturday"


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
# near-valid items: mostly the right keys and plausible values, with junk mixed in, so the
# fuzz reaches every validation step and the success path
VALID_DATE = st.dates().map(str)
DATE_LIKE = st.one_of(
    VALID_DATE, VALID_DATE, VALID_DATE, JSON,
    st.sampled_from(["2024-02-29", "1900-02-29", "0001-01-01", "9999-12-31", "2024-2-29"]),
)  # fmt: skip
N_LIKE = st.one_of(
    st.integers(-4_000, 4_000), st.integers(-4_000_000, 4_000_000), JSON,
    st.sampled_from([0, True, 1.0, "1"]),
)  # fmt: skip
ANY_INPUTS = st.fixed_dictionaries(
    {"start": DATE_LIKE}, optional={"n": N_LIKE, "end": DATE_LIKE, "x": JSON}
)
RIGHT_KEYS = {
    "add_days": {"start": DATE_LIKE, "n": N_LIKE},
    "days_between": {"start": DATE_LIKE, "end": DATE_LIKE},
    "weekday": {"start": DATE_LIKE},
}


def near_item(task_type: str) -> st.SearchStrategy:
    right = st.fixed_dictionaries(RIGHT_KEYS[task_type])
    return st.fixed_dictionaries(
        {
            "task_type": st.just(task_type) | st.just(task_type) | JSON,
            "inputs": st.one_of(right, right, ANY_INPUTS, JSON),
        },
        optional={
            "difficulty": st.sampled_from([None, "easy", "expert", "Hard"]) | JSON,
            "id": st.text(max_size=6) | JSON,
            "gold": st.sampled_from(["Monday", "0", "2024-02-29"]) | JSON,
            "question": JSON,
        },
    )


NEAR_ITEMS = st.sampled_from(dates.TASK_TYPES).flatmap(near_item)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(JSON, NEAR_ITEMS, NEAR_ITEMS, NEAR_ITEMS))
def test_from_dict_fuzz_raises_only_item_error(data):
    try:
        item = Item.from_dict(data)
    except ItemError as err:
        assert re.match(r"item(\.[a-z_]+)*: ", str(err)), str(err)
    else:
        assert item.gold == ref_gold(item.task_type, dict(item.inputs))


# --- layout rules ------------------------------------------------------------------------


@pytest.mark.parametrize("module", sorted(p.name for p in PACKAGE.glob("*.py")))
def test_domain_modules_import_neither_gymnasium_nor_numpy_nor_global_random(module):
    roots = {name.split(".")[0] for name in imports_of(PACKAGE / module)}
    assert not roots & {"gymnasium", "gym", "numpy"}, roots
