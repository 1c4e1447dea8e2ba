"""The family's generic core on toy tasks that are neither MeetingSlot nor CalendarMath.

What later envs need from the seam, shown here before they exist: a rubric of seven named
terms whose weights differ by difficulty, a reward that is not the weighted sum (a score
delta), and splits over a task's own items.
"""

from __future__ import annotations

import random

import pytest
from toy_tasks import NAMES, SevenTerms, ToyGold

from meeting_gym.core.rubric import Rubric, Term
from meeting_gym.core.splits import draw, load_split
from meeting_gym.core.text_env import TextEnv
from meeting_gym.evaluation.evaluate import evaluate, format_table, summarize


def test_rubric_weights_and_names():
    rubric = Rubric(Term("exact_match", 1.0, "exact"), Term("format", 0.2))
    grade = rubric.grade(exact_match=1.0, format=1.0)
    assert grade.as_dict() == {"exact_match": 1.0, "format": 1.0, "reward": 1.2}
    assert grade["format"] == 1.0 and grade.terms == {"exact_match": 1.0, "format": 1.0}
    assert rubric.grade(format=1.0).reward == 0.2  # a missing term counts 0
    assert rubric.zero.reward == 0.0 and rubric.names == ("exact_match", "format")
    assert rubric.terms[0].column == "exact" and rubric.terms[1].column == "format"
    for bad, fragment in (
        (lambda: rubric.grade(exact=1.0), "unknown rubric term"),
        (lambda: Rubric(Term("a", 1.0), Term("a", 2.0)), "duplicate"),
        (lambda: Rubric(Term("reward", 1.0)), "not a term name"),
        (lambda: Rubric(Term("a", float("nan"))), "non-finite"),
        (lambda: Rubric(), "at least one term"),
    ):
        with pytest.raises(ValueError, match=fragment):
            bad()


def test_a_reward_that_is_not_the_weighted_sum_keeps_every_term():
    rubric = Rubric(*(Term(name, 1 / 7) for name in NAMES))
    before = rubric.grade(**dict.fromkeys(NAMES, 0.5)).reward
    after_scores = {**dict.fromkeys(NAMES, 0.5), "coverage": 1.0}
    delta = rubric.grade(**after_scores).reward - before  # a dense, per-step reward
    grade = rubric.grade_with_reward(delta, **after_scores)
    assert grade.reward == pytest.approx(0.5 / 7)
    assert list(grade.terms) == list(NAMES) and grade["coverage"] == 1.0


def test_weights_by_difficulty_through_the_generic_shell():
    env = TextEnv(SevenTerms)
    env.reset(options={"item": ("easy", 3, 0.0)})
    *_, info = env.step("4")  # wrong: every term 0
    assert info["reward"] == 0.0 and set(NAMES) <= set(info)
    env.reset(options={"split": "curated", "index": 1})  # a hard item
    *_, info = env.step("7")
    assert info["reward"] == pytest.approx(1.0) and info["hard"] == 1.0
    assert env.unwrapped.task.rubric_for(("hard", 7, 0.0)).terms[0].weight == 0.2


@pytest.fixture
def toy_env_id():
    """A registered toy id for the runner, removed again so the registry suite never sees it."""
    import gymnasium as gym

    from meeting_gym.core.registry import ENVS, register_env

    env_id = "ToySevenTerms-v0"
    register_env(env_id, "toy_tasks:SevenTerms")
    yield env_id
    del ENVS[env_id]
    del gym.registry[env_id]


def test_the_runner_and_table_show_seven_terms(toy_env_id):
    items = load_split("curated", env=SevenTerms())
    results = evaluate(ToyGold, items, env=toy_env_id)
    summary = summarize(results)
    assert summary["terms"] == list(NAMES) and summary["reward"] == pytest.approx(1.0)
    table = format_table(summary, "toy", rubric=SevenTerms.rubric)
    for name in NAMES:
        assert f"\n{name:<16}1.000" in table


def test_settings_are_validated_and_change_the_items():
    with pytest.raises(ValueError, match="unknown digits 7; choose one of 5, 10"):
        SevenTerms(digits=7)
    few = load_split("train", n=200, env=SevenTerms(digits=5))
    assert {item[1] for item in few} == set(range(5))
    assert SevenTerms(digits=5).cache_key() != SevenTerms(digits=10).cache_key()


def test_a_configuration_too_narrow_for_a_held_out_item_says_so():
    class OneItem(SevenTerms):
        def generate(self, rng, difficulty):
            return ("easy", 1, 0.0)

    task = OneItem()
    side = "held-out" if not _is_held(task) else "training"
    with pytest.raises(ValueError, match=f"no {side} item found"):
        draw(task, 0, 0, held=not _is_held(task))


def _is_held(task) -> bool:
    from meeting_gym.core.splits import held_out

    return held_out(task.key(("easy", 1, 0.0)))


def test_every_draw_comes_from_its_own_generator():
    task = SevenTerms()
    first = [draw(task, 4, i)[0] for i in range(30)]
    random.seed(0)  # the global generator is never used
    assert [draw(task, 4, i)[0] for i in range(29, -1, -1)][::-1] == first


def test_group_rows_list_the_named_difficulties_easiest_first_then_other_labels_by_name():
    from meeting_gym.evaluation.evaluate import EpisodeResult

    labels = ["difficulty expert", "kind b", "difficulty easy", "difficulty hard", "kind a"]
    labels += ["difficulty medium", "level 2", "level 1"]
    rows = [
        EpisodeResult(f"i{k}", None, "g", "a", {"t": 1.0}, 1.0, 1, 0, False, groups=(label,))
        for k, label in enumerate(labels)
    ]
    assert list(summarize(rows)["groups"]) == [
        "difficulty easy",
        "difficulty medium",
        "difficulty hard",
        "difficulty expert",
        "kind a",
        "kind b",
        "level 1",
        "level 2",
    ]
