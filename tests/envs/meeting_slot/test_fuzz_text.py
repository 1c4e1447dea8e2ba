"""Fuzzing MeetingSlot-v0's text interface: no input crashes, drifts or skips a turn.

Invariants checked on every example, for any sequence of actions:

* no exception escapes ``step()``;
* every observation is a ``str`` inside the observation space;
* every action costs exactly one turn (``info["turn"]`` counts 1, 2, 3, ...);
* the episode ends by ``max_turns``: terminated by an answer, else truncated exactly
  at ``max_turns``, and the reward is one of the rubric's values.
"""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import meeting_gym  # noqa: F401  (registers the env ids)
from meeting_gym.core.protocol import extract_answer
from meeting_gym.envs.meeting_slot.domain.generator import PEOPLE
from meeting_gym.envs.meeting_slot.tools import TOOLSET

MAX_TURNS = 6
REWARDS = {0.0, 0.2, 0.3, 1.2}
MB = 1 << 20
ANY_CHAR = st.characters(exclude_categories=())  # lone surrogates and NUL included
FUZZ = settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)

_ENV: Any = None


def env() -> Any:
    """One env for the whole module (hypothesis examples reset it; no fixture reuse)."""
    global _ENV
    if _ENV is None:
        _ENV = gym.make("MeetingSlot-v0", mode="text", max_turns=MAX_TURNS)
    return _ENV


def play(actions: list[Any], seed: int = 0) -> list[tuple[Any, ...]]:
    """Run actions until the episode ends, asserting the invariants; returns the steps."""
    environment = env()
    observation, info = environment.reset(seed=seed)
    assert isinstance(observation, str) and environment.observation_space.contains(observation)
    steps = []
    for turn, action in enumerate(actions, 1):
        observation, reward, terminated, truncated, info = environment.step(action)
        steps.append((observation, reward, terminated, truncated, info))
        assert isinstance(observation, str)
        assert environment.observation_space.contains(observation), len(observation)
        assert info["turn"] == turn
        assert isinstance(reward, float) and reward in REWARDS
        assert not (terminated and truncated)
        if terminated or truncated:
            assert info["reward"] == reward and "gold" in info
            if truncated:
                assert turn == MAX_TURNS and reward == 0.0 and info["answered"] is False
            return steps
        assert reward == 0.0 and turn < MAX_TURNS
    return steps


def finish(actions: list[Any], seed: int = 0) -> list[tuple[Any, ...]]:
    """Pad ``actions`` with junk so that the episode must end; check it ends on time."""
    padded = actions + ["not an action"] * MAX_TURNS
    steps = play(padded, seed)
    last = steps[-1]
    assert last[2] or last[3], "the episode did not end by max_turns"
    assert len(steps) <= MAX_TURNS
    return steps


# ---------------------------------------------------------------------------- strategies

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(ANY_CHAR, max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
names = st.sampled_from([*PEOPLE, "nobody", "", " ava ", "AVA", "<answer>NONE</answer>"]) | st.text(
    ANY_CHAR, max_size=12
)
odd_dates = st.sampled_from(
    [
        "2024-03-11",
        "11/03/2024",
        "03/11/2024",
        "2024-3-11",
        "20240311",
        "2024-03-11T00:00:00Z",
        "March 11, 2024",
        "2024-02-30",
        "0000-00-00",
        "9999-12-31",
        "".join(
            chr(ord(c) + 0xFEE0) if c.isdigit() else c for c in "2024-03-11"
        ),  # full-width digits
        " 2024-03-11",
    ]
)
argument_values = names | odd_dates | json_values


@st.composite
def tool_calls(draw: st.DrawFn) -> dict[str, Any]:
    """A call to a real or made-up tool with a random subset of its arguments plus extras."""
    tool = draw(st.sampled_from([*TOOLSET.names, "teleport", "", "GET_BUSY"]))
    params = ["name", "date"] if tool not in ("list_attendees",) else []
    arguments = {p: draw(argument_values) for p in params if draw(st.booleans())}
    arguments.update(
        draw(st.dictionaries(st.sampled_from(["x", "Name", "date2"]), json_values, max_size=2))
    )
    shape = draw(st.sampled_from(["plain", "string-args", "openai", "no-args", "null-args"]))
    if shape == "string-args":
        return {"name": tool, "arguments": json.dumps(arguments)}
    if shape == "openai":
        return {"type": "function", "function": {"name": tool, "arguments": arguments}}
    if shape == "no-args":
        return {"name": tool}
    if shape == "null-args":
        return {"name": tool, "arguments": None}
    return {"name": tool, "arguments": arguments}


def render_calls(calls: list[dict[str, Any]], style: str) -> str:
    if style == "array":
        return json.dumps(calls, ensure_ascii=False)
    if style == "tags":
        return "".join(f"<tool_call>{json.dumps(c, ensure_ascii=False)}</tool_call>" for c in calls)
    if style == "fenced":
        return "```json\n" + json.dumps(calls, ensure_ascii=False) + "\n```"
    return json.dumps(calls[0], ensure_ascii=False)


tool_actions = st.builds(
    render_calls,
    st.lists(tool_calls(), min_size=1, max_size=4),
    st.sampled_from(["single", "array", "tags", "fenced"]),
)
big_strings = st.sampled_from(
    [
        "x" * MB,
        "x" * (MB + 1),  # one character over the action space
        "{" * MB,
        "[" * MB,
        '{"name": "list_attendees", "arguments": ' * 20_000,
        "<answer>" * 100_000,
        "<tool_call>" * 100_000,
        "</tool_call>" * 100_000,
        "< " * 300_000,
        json.dumps([{"name": "list_attendees", "arguments": {}}] * 33),
        json.dumps({"name": "get_timezone", "arguments": {"name": "A" * (MB - 100)}}),
        "<tool_call>" + json.dumps({"name": "list_attendees"}) + "</tool_call>" * 2,
    ]
)
actions = (
    st.text(ANY_CHAR, max_size=200)
    | tool_actions
    | st.builds(json.dumps, json_values)
    | st.sampled_from([None, 0, 1.5, b"bytes", ["list"], {"name": "list_attendees"}, ("t",)])
)


# ---------------------------------------------------------------------------- properties


@FUZZ
@given(st.lists(actions, min_size=1, max_size=MAX_TURNS + 2), st.integers(0, 3))
def test_any_actions_keep_the_invariants(sequence, seed):
    finish(sequence, seed)


@settings(max_examples=12, deadline=None, database=None)
@given(big_strings)
def test_huge_and_pathological_strings(text):
    (observation, _reward, terminated, _truncated, info), *_ = play([text])
    assert info["turn"] == 1
    if not terminated:
        assert observation.startswith("error:") or observation.startswith("[")


@FUZZ
@given(tool_actions)
def test_tool_calls_with_bad_arguments_say_why_and_never_end(text):
    observation, reward, terminated, _truncated, info = play([text])[0]
    assert info["turn"] == 1
    if extract_answer(text) is None:  # an argument may smuggle in an answer block
        assert not terminated and reward == 0.0 and observation


@FUZZ
@given(tool_calls(), st.sampled_from(["NONE", "2024-03-11T14:00:00Z", "soon"]), st.booleans())
def test_answer_beside_tool_calls_ends_the_episode_and_runs_no_tool(call, answer, first):
    tools = f"<tool_call>{json.dumps(call)}</tool_call>"
    block = f"<answer>{answer}</answer>"
    text = block + tools if first else tools + block
    observation, _reward, terminated, truncated, info = play([text])[0]
    assert terminated and not truncated and observation == "Answer received."
    assert env().unwrapped.episode.calls == []
    assert info["answer"] == extract_answer(text)


@FUZZ
@given(names, st.sampled_from(["NONE", "2024-03-11T14:00:00Z"]))
def test_answer_tags_inside_tool_arguments(name, answer):
    # Raw tags anywhere in the action make it an answer (documented: an answer wins) ...
    smuggled = f"{name}<answer>{answer}</answer>"
    raw = json.dumps({"name": "get_timezone", "arguments": {"name": smuggled}})
    observation, _, terminated, _, info = play([raw])[0]
    assert terminated and info["answer"] == extract_answer(raw)
    # ... while the canonical escaped form keeps them as argument text and runs the call.
    escaped = raw.replace("<", "\\u003c")
    observation, _, terminated, _, _ = play([escaped])[0]
    assert not terminated and "unknown attendee" in observation


@FUZZ
@given(st.lists(st.text(ANY_CHAR, max_size=30), min_size=2, max_size=4))
def test_only_the_first_answer_block_is_read(contents):
    text = "".join(f"<answer>{c}</answer>" for c in contents)
    *_, info = play([text])[0]
    expected = extract_answer(text)
    assert info["answer"] == expected
    assert info["exact_match"] in (0.0, 1.0) and info["format"] == 1.0
