"""The LLM loop and ``eval --policy openai`` with the real openai client.

Every test talks HTTP to the scripted server in ``fake_openai_server.py``, started on
127.0.0.1 by the fixture and stopped after the test; nothing leaves loopback.
Retries do not sleep: the retry policy records its delays instead.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import gymnasium as gym
import pytest
from fake_openai_server import FakeOpenAIServer
from paths import ROOT

import meeting_gym  # noqa: F401
from meeting_gym.agentkit import RetryPolicy, make_client, run_episode
from meeting_gym.cli import main
from meeting_gym.core.splits import load_split
from meeting_gym.envs.meeting_slot.domain.curated import CURATED_BY_ID
from meeting_gym.envs.meeting_slot.domain.scenario import Scenario
from meeting_gym.envs.meeting_slot.domain.solver import solve
from meeting_gym.envs.meeting_slot.domain.timeutil import format_utc
from meeting_gym.envs.meeting_slot.rubric import grade
from meeting_gym.evaluation.chat import evaluate_llm, format_llm_table, llm_summary, row
from meeting_gym.evaluation.evaluate import format_table

openai = pytest.importorskip("openai")  # the [llm] extra


@pytest.fixture
def server():
    with FakeOpenAIServer() as running:
        yield running


@pytest.fixture
def client(server):
    return openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0, timeout=10)


@pytest.fixture
def sleeps():
    return []


@pytest.fixture
def retry(sleeps):
    return RetryPolicy(attempts=4, base_delay=0.5, max_delay=2.0, sleep=sleeps.append)


def episode(client, model, scenario_id="overlapping_busy", retry=None, **kwargs):
    env = gym.make("MeetingSlot-v0", mode="text", max_turns=kwargs.pop("max_turns", 40))
    try:
        return run_episode(
            env, client, model, options={"scenario_id": scenario_id}, retry=retry, **kwargs
        )
    finally:
        env.close()


def rounded(summary):
    keys = ("reward", "exact_match", "format", "partial_credit")
    return tuple(round(summary[k], 3) for k in keys)


# ------------------------------------------------------------------ scripted gold models


def test_native_tool_calling_gold_model_scores_1_2_on_curated(client, server, retry):
    scenarios = load_split("curated")
    rollouts = evaluate_llm(client, "gold-native", scenarios, max_concurrent=4, retry=retry)
    summary = llm_summary(rollouts)
    assert rounded(summary) == (1.2, 1.0, 1.0, 0.0)
    assert (summary["errors"], summary["no_answer"], summary["truncated"]) == (0, 0, 0)
    assert [r.item_id for r in rollouts] == [s.id for s in scenarios]
    # the model saw the tools natively, and every tool_call_id got its own answer
    assert all(len(request["tools"]) == 4 for request in server.requests["gold-native"])
    for rollout in rollouts:
        messages = rollout.extra["transcript"]
        asked = [
            c["id"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls", [])
        ]
        answered = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
        assert asked == answered and len(asked) == rollout.tool_calls > 0
        assert rollout.extra["usage"]["total_tokens"] > 0
    assert summary["requests"] == len(server.requests["gold-native"])


def test_text_protocol_gold_model_scores_1_2_on_curated(client, server, retry):
    rollouts = evaluate_llm(
        client, "gold-text", load_split("curated"), tool_protocol="text", retry=retry
    )
    summary = llm_summary(rollouts)
    assert rounded(summary) == (1.2, 1.0, 1.0, 0.0) and summary["errors"] == 0
    assert all("tools" not in request for request in server.requests["gold-text"])
    for rollout in rollouts:
        roles = {m["role"] for m in rollout.extra["transcript"]}
        assert roles == {"system", "user", "assistant"}
        assert rollout.tool_calls > 0


def test_the_gold_model_reads_the_tool_results_it_is_sent(client):
    """Replaying the conversation with the busy calendars emptied changes the answer."""
    result = episode(client, "gold-native")
    assert result.reward == pytest.approx(1.2)
    *before, final = result.messages
    assert final["content"] == "<answer>2024-03-11T18:00:00Z</answer>"

    def ask(messages):
        reply = client.chat.completions.create(model="gold-native", messages=messages)
        return reply.choices[0].message.content

    assert ask(before) == final["content"]
    emptied = [
        {**m, "content": "[]"} if m["role"] == "tool" and m["content"].startswith("[{") else m
        for m in before
    ]
    assert emptied != before
    world = CURATED_BY_ID["overlapping_busy"].to_dict()
    for person in world["world"]["attendees"]:
        person["busy"] = {}
    free = format_utc(solve(Scenario.from_dict(world)).gold)
    assert free != "2024-03-11T18:00:00Z"
    assert ask(emptied) == f"<answer>{free}</answer>"


# ------------------------------------------------------------------ scored model mistakes


def test_a_model_that_answers_at_once_is_graded_by_the_rubric(client):
    scenarios = load_split("curated")
    rollouts = evaluate_llm(client, "answer-now", scenarios)
    text = "<answer>2024-03-11T09:00:00Z</answer>"
    expected = [grade(text, solve(s)).reward for s in scenarios]
    assert [r.reward for r in rollouts] == expected
    assert all((r.turns, r.tool_calls) == (1, 0) for r in rollouts)
    summary = llm_summary(rollouts)
    assert summary["format"] == 1.0 and summary["mean_tool_calls"] == 0.0
    assert summary["reward"] == pytest.approx(sum(expected) / len(expected))


def test_malformed_tool_calls_cost_turns_and_come_back_as_errors(client):
    result = episode(client, "malformed")
    assert (result.turns, result.tool_calls, result.terminated) == (3, 2, True)
    tool_results = [m for m in result.messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_results] == ["call_0_0", "call_0_1"]
    assert "not valid JSON" in tool_results[0]["content"]
    assert "unknown tool" in tool_results[1]["content"]
    assert all(m["content"].startswith("error:") for m in tool_results)
    hint = result.messages[-2]  # after the prose turn, before the answer
    assert hint["role"] == "user" and hint["content"].startswith("error:")
    assert "<answer>" in hint["content"]
    # a well-formed wrong answer (NONE; gold is 18:00)
    assert result.info["gold"] == "2024-03-11T18:00:00Z"
    assert result.reward == pytest.approx(0.2) and result.error is None


def test_a_model_that_never_answers_is_truncated_and_scored_zero(client, server):
    scenarios = load_split("curated", n=4)
    seen = []
    rollouts = evaluate_llm(
        client, "never-answers", scenarios, max_turns=3, max_concurrent=2, on_result=seen.append
    )
    assert seen == rollouts  # handed over in order, as they complete
    assert all(r.truncated and r.turns == 3 for r in rollouts)
    assert all(r.answer is None and r.reward == 0.0 for r in rollouts)
    summary = llm_summary(rollouts)
    assert (summary["errors"], summary["no_answer"], summary["truncated"]) == (0, 4, 4)
    assert summary["scored"] == 4 and summary["reward"] == 0.0
    assert server.count("never-answers") == 12
    table = format_llm_table(summary, "t")
    assert "no answer       4" in table and "turn budget hit 4" in table


# ------------------------------------------------------------------ provider failures


@pytest.mark.parametrize("model, status, failures", [("flaky", 500, 2), ("rate-limited", 429, 1)])
def test_retryable_statuses_are_retried_with_bounded_backoff(
    client, server, retry, sleeps, model, status, failures
):
    result = episode(client, model, retry=retry)
    assert result.error is None and result.reward == pytest.approx(1.2)
    assert result.retries == failures == len(sleeps)
    assert server.count(model) == result.requests + failures
    assert all(0.0 <= wait <= min(2.0, 0.5 * 2**k) for k, wait in enumerate(sleeps))


def test_a_provider_that_always_fails_is_an_error_not_a_score(client, server, retry, sleeps):
    rollouts = evaluate_llm(client, "always-500", load_split("curated", n=3), retry=retry)
    assert all(r.error.startswith("InternalServerError 500") for r in rollouts)
    assert all(row(r)["breakdown"] is None for r in rollouts)
    assert server.count("always-500") == 3 * 4 and len(sleeps) == 3 * 3
    summary = llm_summary(rollouts)
    assert (summary["n"], summary["scored"], summary["errors"]) == (3, 0, 3)
    table = format_llm_table(summary, "t")
    assert "errors          3 (excluded from the means)" in table
    assert "scored          0 of 3" in table


def test_errored_episodes_are_excluded_from_the_means(client, server):
    """With no retries, the flaky server's two 500s kill the first two episodes."""
    scenarios = load_split("curated")
    once = RetryPolicy(attempts=1)
    rollouts = evaluate_llm(client, "flaky", scenarios, max_concurrent=1, retry=once)
    assert [r.error is not None for r in rollouts] == [True, True] + [False] * 13
    summary = llm_summary(rollouts)
    assert (summary["scored"], summary["errors"]) == (13, 2)
    assert rounded(summary) == (1.2, 1.0, 1.0, 0.0)  # not 13 * 1.2 / 15


def test_client_errors_are_not_retried(client, server, retry, sleeps):
    result = episode(client, "no-such-model", retry=retry)
    assert result.error.startswith("NotFoundError 404") and "no-such-model" in result.error
    assert server.count("no-such-model") == 1 and sleeps == [] and result.turns == 0


def test_timeouts_are_retried_then_reported(server, sleeps):
    impatient = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0, timeout=0.2)
    result = episode(impatient, "hang", retry=RetryPolicy(attempts=2, sleep=sleeps.append))
    assert result.error.startswith("APITimeoutError") and result.retries == 1
    assert server.count("hang") == 2 and len(sleeps) == 1


def test_connection_errors_are_retried_then_reported(sleeps):
    with socket.socket() as probe:  # a port on loopback that nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    dead = make_client(f"http://127.0.0.1:{port}/v1", "x", timeout=2)
    result = episode(dead, "gold-native", retry=RetryPolicy(attempts=3, sleep=sleeps.append))
    assert result.error.startswith("APIConnectionError") and result.retries == 2
    assert result.turns == 0 and result.usage is None


def test_retry_policy_validates_and_bounds():
    import random

    policy = RetryPolicy(base_delay=1.0, max_delay=3.0)
    rng = random.Random(0)
    assert all(0 <= policy.delay(k, rng) <= min(3.0, 2**k) for k in range(10) for _ in range(20))
    with pytest.raises(ValueError):
        RetryPolicy(attempts=0)


# ------------------------------------------------------------------ command line and example


def test_eval_command_prints_the_table_and_writes_rows(server, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MEETING_TEST_KEY", "sk-from-env")
    out = tmp_path / "results.jsonl"
    argv = ["eval", "--policy", "openai", "--model", "gold-native", "--base-url", server.base_url]
    argv += ["--api-key-env", "MEETING_TEST_KEY", "--out", str(out), "--verbose"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "policy=openai  model=gold-native  split=curated" in printed
    assert "avg reward      1.200" in printed and "exact           1.000" in printed
    assert "mean turns      4.20" in printed and "mean tool calls 13.20" in printed
    assert "no answer       0" in printed and "tokens" in printed and "dst_eu_monday" in printed
    assert set(server.authorizations) == {"Bearer sk-from-env"}
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["item_id"] for r in rows] == [s.id for s in load_split("curated")]
    first = rows[0]
    assert first["breakdown"] == {
        "reward": 1.2,
        "exact_match": 1.0,
        "format": 1.0,
        "partial_credit": 0.0,
    }
    assert first["answer"] == first["gold"] and first["error"] is None
    assert first["usage"]["prompt_tokens"] > 0 and first["turns"] >= 2
    assert first["finish_reasons"][0] == "tool_calls" and first["finish_reasons"][-1] == "stop"
    assert first["transcript"][0]["role"] == "system"
    assert first["transcript"][-1]["content"] == f"<answer>{first['gold']}</answer>"


def test_eval_command_text_protocol_rollouts_and_json(server, tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    argv = ["eval", "--policy", "openai", "--model", "gold-text", "--base-url", server.base_url]
    argv += ["--tool-protocol", "text", "--split", "eval", "-n", "3", "--rollouts", "2"]
    argv += ["--max-concurrent", "3", "--json", "--out", str(out), "--temperature", "0.7"]
    argv += ["--max-tokens", "256", "--extra-body", '{"top_k": 5}']
    assert main(argv) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["n"] == 6 and payload["reward"] == pytest.approx(1.2)
    assert payload["tool_protocol"] == "text" and payload["errors"] == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    with pytest.warns(UserWarning, match="keeps only the first 3"):
        ids = [s.id for s in load_split("eval", n=3)]
    assert [(r["item_id"], r["rollout"]) for r in rows] == [(i, k) for i in ids for k in range(2)]
    sent = server.requests["gold-text"]
    assert all((r["temperature"], r["max_tokens"], r["top_k"]) == (0.7, 256, 5) for r in sent)


def test_eval_command_reports_provider_errors(server, capsys):
    argv = ["eval", "--policy", "openai", "--model", "always-500", "--base-url", server.base_url]
    argv += ["-n", "2", "--retries", "2", "--retry-base-delay", "0"]
    assert main(argv) == 1  # nothing was scored: CI must see a failure
    printed = capsys.readouterr()
    assert "errors          2 (excluded from the means)" in printed.out
    assert "first error     InternalServerError 500" in printed.out
    assert "no episode was scored" in printed.err
    # --retries 2 = the first attempt and two retries per request
    assert server.count("always-500") == 2 * 3


def test_eval_command_needs_a_model(capsys):
    assert main(["eval", "--policy", "openai"]) == 2
    assert "--model" in capsys.readouterr().err


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--rollouts", "0"], "--rollouts: must be at least 1"),
        (["--max-concurrent", "0"], "--max-concurrent: must be at least 1"),
        (["--retries", "-1"], "--retries must be at least 0"),
        (["--extra-body", "{oops"], "--extra-body is not JSON"),
        (["--extra-body", "[1]"], "--extra-body must be a JSON object"),
    ],
)
def test_eval_command_rejects_bad_options_before_any_request(server, capsys, extra, message):
    argv = ["eval", "--policy", "openai", "--model", "gold-native", "--base-url", server.base_url]
    assert main(argv + extra) == 2
    assert message in capsys.readouterr().err and server.requests == {}


def test_other_policies_are_unchanged(capsys):
    assert main(["eval", "--policy", "gold", "-n", "3"]) == 0
    assert "avg reward      1.200" in capsys.readouterr().out


def test_format_llm_table_keeps_episode_rows_last(client):
    rollouts = evaluate_llm(client, "answer-now", load_split("curated", n=2))
    rows = rollouts
    summary = llm_summary(rollouts)
    table = format_llm_table(summary, "title", rows)
    plain = format_table(summary, "title", rows)
    assert table.endswith(plain.partition("\n\n")[2])
    assert "requests        2" in table.partition("\n\n")[0]


def run_python(*args, **kwargs):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENAI_API_KEY": "sk-test"}
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=env, timeout=120, **kwargs
    )


def test_import_does_not_load_openai():
    code = (
        "import sys, meeting_gym, meeting_gym.cli, meeting_gym.agentkit;"
        "meeting_gym.cli.build_parser(); assert 'openai' not in sys.modules"
    )
    done = run_python("-c", code)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("extra, model", [([], "gold-native"), (["--text-protocol"], "gold-text")])
def test_example_llm_agent_runs(server, extra, model):
    script = str(ROOT / "examples" / "llm_agent.py")
    done = run_python(script, "--base-url", server.base_url, "--model", model, *extra)
    assert done.returncode == 0, done.stderr
    assert "answer 2024-04-01T08:00:00Z  gold 2024-04-01T08:00:00Z  reward 1.200" in done.stdout
