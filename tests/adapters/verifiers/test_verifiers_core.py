"""The verifiers adapters' shared core, which imports no verifiers: it runs in every venv.

``replay`` is what both verifiers lines score with: the hand-written completions of
``verifiers_cases`` replayed from chat messages must give exactly the final ``info`` that
``env.step`` gives for the same completion written in the text protocol. Without
verifiers installed, the adapters say how to install it, and ``import meeting_gym``
stays as light as before.
"""

from __future__ import annotations

import subprocess
import sys

import gymnasium as gym
import pytest
from toy_tasks import SevenTerms
from verifiers_cases import ENVS, cases, env_reward

import meeting_gym
from meeting_gym.adapters import verifiers as core
from meeting_gym.agents.policies import make_policy
from meeting_gym.core.registry import ENVS as REGISTERED
from meeting_gym.core.registry import load_object, task_class
from meeting_gym.core.text_env import TextEnv


@pytest.mark.parametrize("case", cases(), ids=lambda case: case.id)
def test_replaying_the_chat_messages_gives_env_steps_final_info(case):
    reward, info, observations = env_reward(case)
    env = core.make_env(case.env)
    tool_results = [{"role": "tool", "tool_call_id": "x", "content": o} for o in observations]
    conversation = [m for pair in zip(case.messages(), tool_results, strict=True) for m in pair]
    outcome = core.replay(env, case.options, conversation)
    assert outcome["reward"] == reward == case.expected
    assert outcome["turns"] == len(case.turns)
    for key in ("exact_match", "format", "partial_credit", "gold", "answer", "answered"):
        assert outcome[key] == info[key], key


def test_a_conversation_that_ends_without_an_answer_scores_as_a_truncated_episode():
    env = core.make_env("MeetingSlot-v0")
    call = {"id": "c", "type": "function", "function": {"name": "list_attendees", "arguments": ""}}
    messages = [{"role": "assistant", "content": None, "tool_calls": [call]}] * 50
    outcome = core.replay(env, {"split": "curated", "index": 0}, messages)
    assert outcome["turns"] == 40 and not outcome["answered"] and outcome["reward"] == 0.0


class ScoreDelta(SevenTerms):
    """The toy task with a reward that is not its terms' weighted sum (as a score delta)."""

    def grade(self, item, truth, text):
        grade, answer = super().grade(item, truth, text)
        return self.rubric_for(item).grade_with_reward(0.5, **grade.terms), answer


def test_weights_that_depend_on_the_item_are_the_items_and_other_rewards_are_refused():
    reply = [{"role": "assistant", "content": "3"}]
    for level, reward in (("easy", 1.0), ("hard", 1.0)):
        outcome = core.replay(TextEnv(SevenTerms), {"item": (level, 3, 0.5)}, reply)
        assert outcome["reward"] == reward and outcome["hard"] == 1.0
    with pytest.raises(ValueError, match="not the weighted sum of its rubric terms"):
        core.replay(TextEnv(ScoreDelta), {"item": ("easy", 3, 0.5)}, reply)


@pytest.mark.parametrize("env_id", ENVS)
def test_task_rows_address_their_items(env_id):
    rows = core.task_rows(env_id, "eval", 20, seed=5)
    env = gym.make(env_id, mode="text")
    assert [r["options"]["index"] for r in rows] == list(range(20))
    for row in rows:
        question, info = env.reset(options=row["options"])
        assert row["prompt"] == question and row["system_prompt"] == info["system_prompt"]
        assert row["answer"] == env.unwrapped.episode.gold
        assert row["max_turns"] == env.unwrapped.max_turns


def test_bad_env_ids_settings_and_difficulties_are_refused_by_name():
    with pytest.raises(ValueError, match="registered envs: MeetingSlot-v0"):
        core.task_rows("Nope-v0")
    with pytest.raises(ValueError, match="unknown task 'nope'"):
        core.task_rows("CalendarMath-v0", settings={"task": "nope"})
    with pytest.raises(ValueError, match="unknown difficulty 'impossible'"):
        core.task_rows("MeetingSlot-v0", difficulty="impossible")


def test_without_verifiers_each_adapter_says_what_to_install():
    found = core.verifiers_version()
    if found is not None and found >= (0, 4):
        pytest.skip("verifiers 0.4 is installed here")
    with pytest.raises(ImportError, match=r'pip install "meeting-gym\[verifiers\]"'):
        import meeting_gym.adapters.verifiers.taskset  # noqa: F401
    import meeting_gym_verifiers

    assert meeting_gym_verifiers.__all__ == ["load_environment"]
    if found is None:
        with pytest.raises(ImportError, match=r'pip install "meeting-gym\[verifiers03\]"'):
            meeting_gym_verifiers.load_environment()


def test_import_meeting_gym_loads_no_verifiers_module():
    code = "import sys, meeting_gym; print(any('verifiers' in m for m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
    assert "verifiers" not in meeting_gym.__all__


TEXT_ENVS = [e for e in REGISTERED if "text" in load_object(gym.spec(e).entry_point).modes]


@pytest.mark.parametrize("env_id", TEXT_ENVS)
def test_every_text_env_replays_its_reference_policy_at_the_maximum(env_id):
    """The rows and the replay both verifiers lines share, for every registered text env."""
    rows = core.task_rows(env_id, "curated")
    assert rows, env_id
    cls = task_class(env_id)
    play = gym.make(env_id, mode="text")
    for row in rows:
        observation, info = play.reset(options=row["options"])
        policy = make_policy(cls.reference_policy, env=env_id)
        policy.reset(observation, info)
        messages = [{"role": "system", "content": row["system_prompt"]}]
        messages.append({"role": "user", "content": row["prompt"]})
        done = False
        while not done:
            action = policy.act(observation)
            messages.append({"role": "assistant", "content": action})
            observation, _, terminated, truncated, _ = play.step(action)
            done = terminated or truncated
            messages.append({"role": "user", "content": observation})
        outcome = core.replay(core.make_env(env_id), row["options"], messages)
        item = play.unwrapped.episode.item
        best = play.unwrapped.task.max_reward_for(item)  # documented per item (the solver's)
        best = cls.max_reward if best is None else best
        assert outcome["reward"] == pytest.approx(best), (env_id, row["options"])
        weights = row["rubric"]
        weighted = sum(weight * outcome[name] for name, weight in weights.items())
        assert weighted == pytest.approx(outcome["reward"])  # what verifiers will report


def test_a_dense_reward_is_reported_as_the_return_with_the_scores_beside_it():
    """TimetablePlanner pays every step: verifiers gets the return at weight 1, scores at 0."""
    rows = core.task_rows("TimetablePlanner-v0", "curated")
    weights = rows[0]["rubric"]
    assert weights["reward"] == 1.0 and len(weights) == 8
    assert all(weight == 0.0 for name, weight in weights.items() if name != "reward")
    assert all(row["rubric"] == weights for row in rows)  # one Rubric serves 0.3.x too
    # a conversation with an invalid action, then a submit: the env's own return (penalty)
    messages = [
        {"role": "assistant", "content": '{"action_type": "assign_session"}'},
        {"role": "assistant", "content": '{"action_type": "submit_timetable"}'},
    ]
    env = gym.make("TimetablePlanner-v0", mode="text")
    env.reset(options=rows[0]["options"])
    paid = [env.step(m["content"])[1] for m in messages]
    outcome = core.replay(core.make_env("TimetablePlanner-v0"), rows[0]["options"], messages)
    assert outcome["reward"] == pytest.approx(sum(paid)) and paid[0] == pytest.approx(-0.02)


def test_a_rollout_is_bounded_by_the_items_turns_the_timetables_step_budget():
    """A timetable episode cannot outlast its step budget, so neither may a rollout."""
    rows = core.task_rows("TimetablePlanner-v0", "curated")
    env = gym.make("TimetablePlanner-v0", mode="text")
    for row in rows:
        _, info = env.reset(options=row["options"])
        assert row["max_turns"] == info["step_budget"] < env.unwrapped.max_turns
        # every turn spends budget, even one that holds no action: the bound is reached
        done, turns = False, 0
        while not done:
            done = any(env.step("[]")[2:4])
            turns += 1
        assert turns == row["max_turns"]
    slot = core.task_rows("MeetingSlot-v0", "curated")
    assert {row["max_turns"] for row in slot} == {task_class("MeetingSlot-v0").max_turns}
