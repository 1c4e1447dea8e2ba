"""The held-out table of a multi-turn env (meeting_gym.evaluation.heldout), on scripted episodes.

Episodes are played by a scripted chat client through the real loop (LLMAgent, the env,
the runner), so the transcripts are the ones a model's would be: a turn the env refuses
(``error:``) is counted as not accepted, an episode that never answers as unanswered, and the
paired interval refuses two evaluations of different items.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from meeting_gym.agentkit.llm import LLMAgent
from meeting_gym.agentkit.local import LocalModelError
from meeting_gym.core.splits import load_split
from meeting_gym.evaluation.evaluate import evaluate
from meeting_gym.evaluation.heldout import (
    episode_stats,
    in_item_order,
    item_index,
    malformed_turns,
    model_summary,
    paired,
    paired_line,
    refused,
    row_problem,
    row_stats,
)

ENV = "MeetingSlot-v0"


class Scripted:
    """Replies from a list, in order, to every request (one conversation at a time)."""

    def __init__(self, replies: list[str]) -> None:
        self.replies = replies
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self.create))
        self.k = 0

    def create(self, **_request):
        reply = self.replies[self.k % len(self.replies)]
        self.k += 1
        message = SimpleNamespace(content=reply, tool_calls=None)
        return SimpleNamespace(choices=[SimpleNamespace(message=message, finish_reason="stop")])


def play(replies: list[str], n: int = 2, max_turns: int = 4):
    items = load_split("train", n, env=ENV)
    make = lambda: LLMAgent(Scripted(replies), "m", tool_protocol="text")  # noqa: E731
    return evaluate(make, items, env=ENV, max_turns=max_turns)


def test_refused_turns_are_not_accepted_and_an_answer_is_counted_once():
    call = '<tool_call>{"name": "list_attendees", "arguments": {}}</tool_call>'
    [stats, _] = [episode_stats(r) for r in play(["hello there", call, "<answer>NONE</answer>"])]
    assert stats["turns"] == 3 and stats["accepted_turns"] == 2  # the chatter was refused
    assert stats["answered"] == 1.0 and stats["tool_calls"] == 1
    [silent, _] = [episode_stats(r) for r in play(["hello there"], max_turns=3)]
    assert silent["accepted_turns"] == 0 and silent["answered"] == 0.0
    assert silent["reward"] == 0.0


def test_the_summary_has_intervals_per_difficulty_and_the_pairing_checks_the_items():
    terms = ["exact_match", "format", "partial_credit"]
    answered = [episode_stats(r) for r in play(["<answer>NONE</answer>"], n=4)]
    chatter = [episode_stats(r) for r in play(["hello"], n=4, max_turns=2)]
    summary = model_summary(answered, terms)
    assert summary["n"] == 4 and summary["answered"]["mean"] == 1.0
    assert summary["accepted_turn_share"] == 1.0 and summary["mean_turns"] == 1.0
    assert summary["format"]["mean"] == 1.0
    assert sum(g["n"] for g in summary["by_difficulty"].values()) == 4
    difference = paired(answered, chatter)
    assert difference["n"] == 4 and difference["mean"] == pytest.approx(
        summary["reward"]["mean"] - 0.0
    )
    assert paired_line("answered - chatter", difference) == (
        f"paired answered - chatter: {difference['mean']:+.3f} ± {difference['ci95']:.3f} "
        "(95% CI, n=4)"
    )
    assert paired_line("x", {"mean": -0.05, "ci95": 0.0461, "n": 200}) == (
        "paired x: -0.050 ± 0.046 (95% CI, n=200)"
    )
    with pytest.raises(ValueError, match="not of the same items"):
        paired(answered, list(reversed(chatter)))
    with pytest.raises(ValueError, match="no episodes"):
        model_summary([], terms)


def test_a_malformed_turn_is_an_error_text_or_an_invalid_timetable_state():
    invalid = json.dumps({"last_action": {"outcome": "invalid", "action_error": "x"}})
    valid = json.dumps({"last_action": {"outcome": "ok", "action_error": None}})
    messages = [
        {"role": "assistant", "content": "a"},
        {"role": "user", "content": "error: no call"},
        {"role": "assistant", "content": "b"},
        {"role": "user", "content": invalid},
        {"role": "assistant", "content": "c"},
        {"role": "user", "content": valid},
        {"role": "assistant", "content": "d"},
    ]
    assert malformed_turns(messages, answered=False) == (3, 4)
    assert malformed_turns(messages, answered=True) == (2, 4)


def test_a_refusal_is_an_error_text_or_an_invalid_state_and_nothing_else():
    assert refused("error: no tool call or answer could be read")
    assert refused(json.dumps({"last_action": {"outcome": "invalid"}}))
    for fine in ('["Ava", "Ben"]', "{not json", json.dumps({"last_action": None}), "[]", "ok"):
        assert not refused(fine), fine


def logged_row() -> dict:
    """One gold episode as the example logs it (``replayable_row``)."""
    from meeting_gym.agents.policies import make_policy
    from meeting_gym.evaluation.chat import replayable_row

    items = load_split("eval", 1, 42, None, env=ENV)
    [result] = evaluate(lambda: make_policy("gold", seed=0, env=ENV), items, env=ENV, seed=0)
    return replayable_row(
        result, env=ENV, seed=0, options={"split": "eval", "index": 0}, tool_protocol="text"
    )


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"breakdown": [1.2]}, "breakdown must be an object of numbers"),
        ({"breakdown": {"reward": "1.2"}}, "breakdown must be an object of numbers"),
        ({"breakdown": {"reward": True}}, "breakdown must be an object of numbers"),
        ({"item_id": 7}, "env and item_id must be strings"),
        ({"turns": 2.5}, "turns must be an integer"),
        ({"tool_calls": False}, "tool_calls must be an integer"),
        ({"transcript": ["hi"]}, "transcript must be a list of messages"),
    ],
)
def test_a_logged_row_with_a_wrong_field_is_named_not_read(change, problem):
    row = logged_row()
    assert row_problem(row) is None
    assert row_stats(row, ["exact_match"])["reward"] == row["breakdown"]["reward"] == 1.2
    damaged = {**row, **change}
    assert row_problem(damaged) == problem
    with pytest.raises(ValueError, match=problem):
        row_stats(damaged, ["exact_match"])


def test_a_row_that_is_not_an_object_or_lacks_its_keys_is_not_an_episode_row():
    for row in ([], "row", None, {"env": ENV, "item_id": "x"}):
        assert row_problem(row) == "not an episode row (env, item_id, breakdown)"


def test_rows_written_as_episodes_end_are_read_back_in_item_order():
    def row(k, rollout=None):
        out = {"options": {"split": "eval", "index": k}}
        if rollout is not None:
            out["rollout"] = rollout
        return out

    ended = [row(2), row(0, 1), row(1), row(0, 0)]
    assert [(item_index(r), r.get("rollout")) for r in in_item_order(ended)] == [
        (0, 0),
        (0, 1),
        (1, None),
        (2, None),
    ]
    # a row without an index (or with a bool for one) leaves the order as it was written
    for odd in ({"options": {}}, {"options": {"index": True}}, {}):
        assert item_index(odd) is None
        assert in_item_order([row(1), odd, row(0)]) == [row(1), odd, row(0)]


class ContextFull(Scripted):
    """Calls a tool, then fails as the local model does when the conversation outgrows its
    context (the episode ends with an error, unanswered)."""

    def create(self, **request):
        if self.k >= 1:
            raise LocalModelError(
                "the prompt (8070 tokens) and max_tokens (1152) exceed the context"
            )
        return super().create(**request)


def test_an_episode_ended_by_an_error_is_read_back_as_it_was_counted():
    # the worked-solutions evaluation wrote such a row, then could not read its file back
    from meeting_gym.evaluation.chat import replayable_row

    call = '<tool_call>{"name": "list_attendees", "arguments": {}}</tool_call>'
    items = load_split("train", 1, env=ENV)
    make = lambda: LLMAgent(ContextFull([call]), "m", tool_protocol="text")  # noqa: E731
    [result] = evaluate(make, items, env=ENV, max_turns=4)
    assert result.error and "exceed the context" in result.error
    live = episode_stats(result)
    assert (live["reward"], live["answered"], live["exact_match"]) == (0.0, 0.0, 0.0)
    row = json.loads(
        json.dumps(replayable_row(result, env=ENV, seed=0, options=None, tool_protocol="text"))
    )
    assert row["breakdown"] is None and row_problem(row) is None
    assert row_stats(row, ["exact_match", "format", "partial_credit"]) == live
    for error in (None, ""):  # a null breakdown needs the error that ended the episode
        assert "only in a row whose error" in row_problem({**row, "error": error})
