"""The episode seam: a task names its kind of episode, and the base contract holds for all.

Before 0.3.0 the base ``Task`` carried ``answers``, ``action_fields``, ``dense_reward``,
``stats``, ``truncation_note``, ``fixed_splits`` and ``eval_curated``, set by one env only
(TimetablePlanner), whose ``grade`` raised. Now what differs between episodes is said by
``Task.episode_class`` and the hand-picked splits by ``fixed_splits()`` and
``eval_prefix()``; the old names still work for one minor version, with a warning.
"""

from __future__ import annotations

import warnings

import gymnasium as gym
import pytest
from toy_tasks import SevenTerms

import meeting_gym  # noqa: F401
from meeting_gym.core.episode import Episode, StepEpisode
from meeting_gym.core.registry import ENVS, task_class
from meeting_gym.core.splits import load_split, split_names
from meeting_gym.core.task import Task
from meeting_gym.core.text_env import TextEnv

BASE_ONLY = ("answers", "action_fields", "dense_reward", "stats", "truncation_note")


def test_the_base_task_keeps_no_attribute_of_one_env():
    for name in (*BASE_ONLY, "fixed_splits", "eval_curated"):
        # only the deprecated aliases remain: a descriptor, a property or a method
        assert not isinstance(Task.__dict__.get(name), bool | tuple | str), name
    assert Task.episode_class is Episode


@pytest.mark.parametrize("env_id", list(ENVS))
def test_every_task_honours_the_base_contract(env_id):
    """Answer-graded tasks have a gold and grade any message; self-grading episodes pay
    as they go and refuse a final message; every fixed split is addressable by name."""
    task = task_class(env_id)()
    kind = task.episode_class
    assert issubclass(kind, Episode)
    item = load_split("curated", n=1, env=task)[0]
    episode = kind(task, item)
    if issubclass(kind, StepEpisode):
        assert kind.dense_reward and not kind.answers and kind.stats
        with pytest.raises(NotImplementedError, match="does not grade final messages"):
            task.grade(item, episode.truth, "anything")
        with pytest.raises(TypeError, match="not graded by a final message"):
            episode.submit("anything")
    else:
        assert kind.answers and not kind.dense_reward and kind.action_fields == ()
        # gold is a string, and grade judges any message without raising (that the
        # reference policy's answers earn the best reward is the registry tests' check)
        assert isinstance(episode.gold, str) and episode.gold
        grade = episode.submit("no answer here")
        assert grade.reward == 0.0 and episode.done
    splits = task.fixed_splits()
    assert next(iter(splits)) == "curated"
    assert split_names(task) == ("train", "eval", *splits)
    keys = {task.key(i) for items in splits.values() for i in items}
    assert keys == task.curated_keys
    assert {task.key(i) for i in task.eval_prefix()} <= keys


def test_timetable_planner_says_its_differences_through_its_episode():
    task = task_class("TimetablePlanner-v0")()
    assert task.episode_class.action_fields[0] == "action_type"
    assert "invalid_actions" in task.episode_class.stats
    assert list(task.fixed_splits()) == ["curated", "generated"] and task.eval_prefix() == ()
    env = gym.make("TimetablePlanner-v0", mode="text")
    env.reset(options={"split": "curated", "index": 0})
    assert type(env.unwrapped.episode) is task.episode_class


def test_the_old_names_still_read_with_a_warning():
    task = task_class("TimetablePlanner-v0")()
    for name in BASE_ONLY:
        with pytest.warns(DeprecationWarning, match=f"Task.{name} moved to"):
            assert getattr(task, name) == getattr(task.episode_class, name)
        with pytest.warns(DeprecationWarning):  # on the class too, as 0.2 code read them
            assert getattr(type(task), name) == getattr(task.episode_class, name)
    with pytest.warns(DeprecationWarning, match="eval_curated moved"):
        assert task.eval_curated is False
    with pytest.warns(DeprecationWarning, match="fixed_split"):
        assert task.fixed_split("generated") == task.fixed_splits()["generated"]
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="no fixed split"):
        task.fixed_split("nope")


def test_a_task_written_against_0_2_still_works_with_a_warning():
    with pytest.warns(DeprecationWarning) as caught:

        class OldStyle(SevenTerms):
            stats = ("digit",)
            truncation_note = "old note"
            fixed_splits = ("extra",)
            eval_curated = False

            def fixed_split(self, name):
                if name == "extra":
                    return [("hard", 1, 0.5)]
                return super().fixed_split(name)

    said = " ".join(str(w.message) for w in caught)
    assert "stats, truncation_note" in said and "fixed_splits" in said and "eval_curated" in said
    task = OldStyle()
    assert task.episode_class.stats == ("digit",) and issubclass(task.episode_class, Episode)
    assert task.episode_class.truncation_note == "old note"
    assert task.episode_class.answers  # what it did not set stays the default
    assert list(task.fixed_splits()) == ["curated", "extra"]
    assert task.eval_prefix() == ()
    # and it plays: the env makes its episodes from the derived class
    env = TextEnv(OldStyle)
    env.reset(options={"split": "curated", "index": 0})
    assert type(env.unwrapped.episode) is task.episode_class


def test_a_new_style_task_warns_about_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")

        class NewStyle(SevenTerms):
            def fixed_splits(self):
                return {**super().fixed_splits(), "extra": [("hard", 1, 0.5)]}

        task = NewStyle()
        assert split_names(task) == ("train", "eval", "curated", "extra")
        assert load_split("extra", env=task) == [("hard", 1, 0.5)]
