"""The local model's prefix cache and prompt-lookup drafts (meeting_gym.agentkit.kvcache).

The pieces are checked alone (which prefix is found, what is dropped, what is drafted), then
the whole cached path against the uncached one on a small random Llama (transformers' own
model code, weights made here): multi-turn conversations generated in batches give the same
greedy replies, finish reasons and token counts either way, while later turns read only
what is new. The real model's side-by-side figures come from ``meeting_gym.bench_local``.
"""

from __future__ import annotations

import threading
import time

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from tiny_llama import tiny_llama  # noqa: E402

from meeting_gym.agentkit.kvcache import Drafter, Entry, PrefixCache, common_prefix  # noqa: E402
from meeting_gym.agentkit.local import LocalChatClient  # noqa: E402

EOS = 0


def entry(tokens: list[int]) -> Entry:
    kv = torch.zeros((1, len(tokens), 2))
    return Entry(list(tokens), [(kv, kv.clone())])


def test_the_longest_shared_prefix_is_found_and_the_last_prompt_token_is_always_read():
    cache = PrefixCache()
    cache.store(entry([1, 2, 3, 4]))
    cache.store(entry([1, 2, 9]))
    found, n = cache.match([1, 2, 3, 4, 5, 6])
    assert found is not None and found.tokens == [1, 2, 3, 4] and n == 4
    found, n = cache.match([1, 2, 3, 4])  # the whole prompt is cached: its last token is re-read
    assert n == 3
    assert cache.match([7, 8]) == (None, 0)
    assert common_prefix([1, 2, 3], [1, 2, 4]) == 2


def test_a_stored_turn_replaces_the_turn_it_extends_and_the_budget_drops_the_oldest():
    cache = PrefixCache()
    cache.store(entry([1, 2]))
    cache.store(entry([5, 6]))
    cache.store(entry([1, 2, 3]))
    assert sorted(e.tokens for e in cache.entries) == [[1, 2, 3], [5, 6]]
    per_token = entry([1]).nbytes
    small = PrefixCache(budget_bytes=5 * per_token)
    small.store(entry([1, 2, 3]))
    small.store(entry([4, 5, 6]))  # 6 tokens kept would be over the budget of 5
    assert [e.tokens for e in small.entries] == [[4, 5, 6]]
    assert small.tokens == 3


def test_a_draft_is_what_followed_the_latest_earlier_occurrence_of_the_ending():
    drafter = Drafter([5, 6, 7, 8, 1, 5, 6, 9, 9, 5, 6], size=3)
    assert drafter.propose() == [9, 9, 5]  # [5, 6] last occurred before 9, 9
    drafter.append(4)
    assert drafter.propose() == []  # 6, 4 and 4 never occurred before
    assert Drafter([1, 2, 1], size=0).propose() == []


class CharTokenizer:
    """One token per character (id = code point + 1, below 256); 0 ends and pads."""

    eos_token_id = EOS
    pad_token_id = EOS
    eos_token = "<eos>"
    chat_template = "{{ messages }}"

    def apply_chat_template(self, messages, tokenize=False, add_generation_prompt=True, **kw):
        text = "".join(f"<{m['role']}>{m['content']}</>" for m in messages)
        return text + ("<assistant>" if add_generation_prompt else "")

    def __call__(self, text, add_special_tokens=False):
        return {"input_ids": [min(ord(c), 254) + 1 for c in text]}

    def decode(self, ids, skip_special_tokens=True):
        return "".join(chr(i - 1) for i in ids if i != EOS)


@pytest.fixture(scope="module")
def tiny():
    """A random two-layer Llama over 256 tokens (seeded: the same weights every run)."""
    model = tiny_llama(
        256, context=4096, hidden_size=64, intermediate_size=128, eos_token_id=EOS, pad_token_id=EOS
    )
    return CharTokenizer(), model.eval()


def converse(client, opening: str, turns: int, max_tokens: int) -> list[tuple[str, str, int]]:
    """A conversation of ``turns`` requests, each answered by a fixed tool result."""
    messages = [
        {"role": "system", "content": "You call tools."},
        {"role": "user", "content": opening},
    ]
    out = []
    for turn in range(turns):
        response = client.chat.completions.create(
            model="m", messages=messages, max_tokens=max_tokens
        )
        choice = response.choices[0]
        out.append((choice.message.content, choice.finish_reason, response.usage.completion_tokens))
        messages.append({"role": "assistant", "content": choice.message.content})
        messages.append({"role": "user", "content": f"result {turn}: busy 09:00-10:00"})
    return out


def play(
    tiny,
    cached: bool,
    openings: list[str],
    turns: int = 3,
    max_tokens: int = 24,
    on_progress=None,
):
    replies: dict[int, list] = {}
    with LocalChatClient(
        tiny, batch_size=4, gather_s=0.2, prefix_cache=cached, on_progress=on_progress
    ) as client:

        def one(k: int) -> None:
            replies[k] = converse(client, openings[k], turns, max_tokens)

        threads = [threading.Thread(target=one, args=(k,)) for k in range(len(openings))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
    # read once closed: a continuous batch answers its requests before it adds them up
    return replies, dict(client.stats), client.batches


def test_cached_batches_give_the_uncached_greedy_replies_and_read_only_what_is_new(tiny):
    openings = ["When is alice free?", "Book 30 minutes.", "x" * 40, "Find a slot for bob, carol."]
    plain, plain_stats, _ = play(tiny, False, openings)
    cached, stats, batches = play(tiny, True, openings)
    assert cached == plain  # text, finish reason and token count of every reply
    assert batches < len(openings) * 3  # the episodes were generated together
    assert stats["prompt_tokens"] == plain_stats["prompt_tokens"]
    # every later turn resumes its own conversation; first turns share the system prompt
    assert stats["reused_tokens"] > stats["prompt_tokens"] // 2
    assert any(reason == "length" for c in cached.values() for _, reason, _ in c)


def test_a_reply_cut_at_one_token_and_sampled_replies_work_cached(tiny):
    with LocalChatClient(tiny, prefix_cache=True, seed=3) as client:
        one = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], max_tokens=1
        )
        assert one.usage.completion_tokens <= 1
        sampled = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], max_tokens=8, temperature=1.0
        )
    with LocalChatClient(tiny, prefix_cache=True, seed=3) as again:
        again.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], max_tokens=1
        )
        resampled = again.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], max_tokens=8, temperature=1.0
        )
    assert sampled.choices[0].message.content == resampled.choices[0].message.content


def test_the_tokens_read_that_progress_reports_never_go_down(tiny):
    seen: list[dict] = []
    openings = ["When is alice free?", "Book 30 minutes.", "x" * 40]
    _, stats, _ = play(tiny, True, openings, on_progress=seen.append)
    read = [s["prompt_tokens"] - s["reused_tokens"] for s in seen]
    assert len(seen) > 3 and read == sorted(read)  # reports in a batch, then at its end
    assert read[-1] == stats["prompt_tokens"] - stats["reused_tokens"]
    assert stats["reused_tokens"] > 0  # later turns resume: the reuse was counted


def test_the_local_progress_line_says_what_loads_then_counts_turns_and_tokens():
    import io

    from meeting_gym.evaluation.chat import LocalProgress

    stream = io.StringIO()  # not a terminal: whole lines, at most one every every_s seconds
    progress = LocalProgress(2, stream=stream, every_s=3600)
    progress.say("local model: loading smollm2 ...")
    progress.update({"requests": 1, "prompt_tokens": 900, "reused_tokens": 0, "generated": 5})
    progress.update({"requests": 2, "prompt_tokens": 2000, "reused_tokens": 900, "generated": 9})
    progress.episode_done()
    lines = stream.getvalue().splitlines()
    assert lines[0] == "local model: loading smollm2 ..."
    # the first count is drawn at once; the second waits for its interval, the episode does not
    assert lines[1].startswith("local model: 0/2 episodes, 1 turns, 900 prompt tokens (900 read")
    assert lines[2].startswith(
        "local model: 1/2 episodes, 2 turns, 2000 prompt tokens (1100 read, 900 reused), "
        "9 generated"
    )
    assert len(lines) == 3
    # the client adds the last batch's tokens after its episodes ended: close writes them,
    # so the last line's prompt tokens are the table's (read + reused, as the table sums)
    progress.episode_done()
    progress.update({"requests": 3, "prompt_tokens": 3100, "reused_tokens": 1500, "generated": 14})
    progress.close()
    progress.close()  # once
    lines = stream.getvalue().splitlines()
    assert lines[-1].startswith("local model: 2/2 episodes, 3 turns, 3100 prompt tokens (1600 read")
    assert len(lines) == 5
    quiet = io.StringIO()
    unchanged = LocalProgress(1, stream=quiet, every_s=3600)
    unchanged.update({"requests": 1, "prompt_tokens": 10, "reused_tokens": 0, "generated": 1})
    unchanged.close()  # nothing moved since the line drawn: no second copy
    assert len(quiet.getvalue().splitlines()) == 1


def test_drafts_cut_to_the_step_budget_change_no_reply(tiny):
    from meeting_gym.agentkit.kvcache import generate

    tokenizer, model = tiny
    text = "<user>result: busy 09:00-10:00, busy 09:00-10:00, busy 09:00-10:00<assistant>"
    prompts = [tokenizer(text + str(k))["input_ids"] for k in range(4)]

    def run(step_tokens: int):
        outputs = generate(
            model, prompts, cache=PrefixCache(), max_tokens=[20] * 4, stop_ids=[EOS],
            pad_id=EOS, step_tokens=step_tokens,
        )  # fmt: skip
        return [(o.tokens, o.finish) for o in outputs]

    assert run(4) == run(72)  # 4 tokens over 4 rows: no drafts at all; 72: 8 each


def prompts_of(tokenizer, texts):
    return [tokenizer(f"<user>{text}<assistant>")["input_ids"] for text in texts]


def alone(model, prompt, budget):
    """``prompt``'s greedy reply generated in a batch of its own, with a fresh cache."""
    from meeting_gym.agentkit.kvcache import generate

    (out,) = generate(
        model, [prompt], cache=PrefixCache(), max_tokens=[budget], stop_ids=[EOS], pad_id=EOS
    )
    return out.tokens, out.finish


def test_a_row_that_ends_is_answered_at_once_and_leaves_the_batch(tiny):
    from meeting_gym.agentkit import kvcache

    tokenizer, model = tiny
    prompts = prompts_of(tokenizer, ["when", "is alice", "free on", "Monday at ten?"])
    budgets = [2, 3, 2, 60]
    steps = {"now": 0}
    answered: dict[int, tuple[int, list[int]]] = {}
    batch_rows: list[int] = []
    real_keep_rows = kvcache._keep_rows

    def keep_rows(past, index):
        batch_rows.append(len(index))
        real_keep_rows(past, index)

    def on_step(tokens):
        steps["now"] += 1

    def on_finish(index, output):
        answered[index] = (steps["now"], list(output.tokens))

    kvcache._keep_rows = keep_rows
    try:
        cache = PrefixCache()
        outputs = kvcache.generate(
            model, prompts, cache=cache, max_tokens=budgets, stop_ids=[EOS], pad_id=EOS,
            on_step=on_step, on_finish=on_finish,
        )  # fmt: skip
    finally:
        kvcache._keep_rows = real_keep_rows
    # each short row was handed over while the long one still ran, with its whole reply
    assert set(answered) == {0, 1, 2, 3}
    assert all(answered[i][0] < answered[3][0] for i in (0, 1, 2))
    assert all(answered[i][1] == outputs[i].tokens for i in range(4))
    # the batch halved as its rows ended (two with 2 tokens, then one with 3): 4 -> 2 -> 1
    assert batch_rows == [2, 1]
    # and every reply is the one it gets alone; every row's sequence was kept for its next turn
    assert [(o.tokens, o.finish) for o in outputs] == [
        alone(model, p, b) for p, b in zip(prompts, budgets, strict=True)
    ]
    for prompt, output in zip(prompts, outputs, strict=True):
        following = prompt + output.tokens + [EOS]
        assert cache.match(following)[1] >= len(prompt) + len(output.tokens) - 1


def test_a_paused_batch_resumes_where_it_stopped_reading_one_token(tiny):
    from meeting_gym.agentkit.kvcache import generate

    tokenizer, model = tiny
    prompts = prompts_of(tokenizer, ["Book 30 minutes", "for bob and carol"])
    budgets = [40, 40]
    cache = PrefixCache()
    first = generate(
        model, prompts, cache=cache, max_tokens=budgets, stop_ids=[EOS], pad_id=EOS,
        pause=lambda running, steps: steps == 3,
    )  # fmt: skip
    assert [o.finish for o in first] == ["paused", "paused"]
    assert all(0 < len(o.tokens) < 40 for o in first)
    rest = generate(
        model,
        [p + o.tokens for p, o in zip(prompts, first, strict=True)],
        cache=cache,
        max_tokens=[b - len(o.tokens) for b, o in zip(budgets, first, strict=True)],
        stop_ids=[EOS],
        pad_id=EOS,
    )
    assert [o.read for o in rest] == [1, 1]  # only the last token, which was never fed
    joined = [(a.tokens + b.tokens, b.finish) for a, b in zip(first, rest, strict=True)]
    assert joined == [alone(model, p, b) for p, b in zip(prompts, budgets, strict=True)]


def test_a_long_reply_does_not_hold_the_turns_of_other_conversations(tiny):
    """A 2,000-token reply runs while a short conversation plays all its turns, and every
    reply is the one the uncached client gives."""
    results: dict[str, object] = {}
    for cached in (True, False):
        with LocalChatClient(tiny, batch_size=4, gather_s=0.05, prefix_cache=cached) as client:
            long_messages = [{"role": "user", "content": "Write everything you know."}]
            done = threading.Event()
            replies: dict[str, object] = {}

            def long_reply(client=client, messages=long_messages, replies=replies, done=done):
                response = client.chat.completions.create(
                    model="m", messages=messages, max_tokens=2000
                )
                replies["long"] = (response.choices[0].message.content, done.is_set())

            def short(client=client, replies=replies, done=done):
                replies["short"] = converse(client, "When is alice free?", 3, 4)
                done.set()

            threads = [threading.Thread(target=long_reply), threading.Thread(target=short)]
            threads[0].start()
            while client.stats["requests"] < 1:  # the long request's batch runs first
                time.sleep(0.001)
            threads[1].start()
            for thread in threads:
                thread.join(timeout=300)
            results["cached" if cached else "plain"] = replies
    cached, plain = results["cached"], results["plain"]
    assert cached["short"] == plain["short"]
    assert cached["long"][0] == plain["long"][0]
    assert cached["long"][1] is True  # the short conversation ended before the long reply


def test_the_local_bench_plays_every_mode_and_finds_the_same_replies(tiny, capsys):
    from meeting_gym import bench_local

    summary = bench_local.run(
        "tiny", env="MeetingSlot-v0", split="curated", n=3, max_turns=2, max_tokens=6,
        batch=2, repeats=1, loaded=tiny,
    )  # fmt: skip
    assert summary["modes"] == ["uncached", "static", "continuous"]
    assert summary["identical_episodes"] == 3
    assert {"speedup_continuous_over_uncached", "speedup_continuous_over_static"} <= set(summary)
    runs = summary["runs"]
    # the same requests in every mode; the third episode's system prompt is reused when cached
    assert runs["uncached"][0]["prompt_tokens"] == runs["continuous"][0]["prompt_tokens"]
    assert runs["continuous"][0]["reused_tokens"] > 0 == runs["uncached"][0]["reused_tokens"]
    assert "identical replies in 3 of 3 episodes" in bench_local.table(summary)
    with pytest.raises(SystemExit) as bad:
        bench_local.main(["--modes", "static,fast"])
    assert bad.value.code == 2
    assert "modes must be some of uncached, static, continuous" in capsys.readouterr().err


def test_the_local_bench_samples_episodes_and_reports_each_modes_rewards(tiny):
    from meeting_gym import bench_local

    summary = bench_local.run(
        "tiny", env="MeetingSlot-v0", split="curated", n=3, max_turns=2, max_tokens=6,
        batch=2, repeats=1, loaded=tiny, modes=("nodraft", "continuous"), temperature=1.0,
    )  # fmt: skip
    assert "speedup_continuous_over_nodraft" in summary
    for mode in ("nodraft", "continuous"):
        reward = summary[f"{mode}_reward"]
        assert 0.0 <= reward["mean"] <= 1.2 and reward["ci95"] >= 0.0
        assert summary[f"{mode}_tokens_per_episode"] > 0
    text = bench_local.table(summary)
    assert "sampled at temperature 1.0" in text and "each mode draws its own replies" in text


def test_no_drafts_or_a_one_token_step_budget_read_a_token_a_step_with_the_same_reply(tiny):
    from meeting_gym.agentkit import kvcache

    steps: list[int] = []
    real = kvcache.generate

    def counting(*args, **kwargs):
        kwargs["on_step"] = steps.append
        return real(*args, **kwargs)

    text = "result: busy 09:00-10:00, busy 09:00-10:00, busy 09:00-10:00"
    replies = {}
    for name, settings in (
        ("default", {}),
        ("none", {"draft_tokens": 0}),
        ("one", {"step_tokens": 1}),
    ):
        steps.clear()
        kvcache.generate = counting
        try:
            with LocalChatClient(tiny, prefix_cache=True, **settings) as client:
                reply = client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": text}], max_tokens=30
                )
        finally:
            kvcache.generate = real
        replies[name] = (reply.choices[0].message.content, len(steps))
    assert replies["none"][0] == replies["one"][0] == replies["default"][0]  # greedy: the same
    assert replies["none"][1] == replies["one"][1] == 30 > replies["default"][1]
    for bad in ({"draft_tokens": -1}, {"step_tokens": -2}):
        with pytest.raises(ValueError, match=f"{next(iter(bad))} must be 0 or more"):
            LocalChatClient(tiny, **bad)


def test_a_long_new_prompt_is_read_alone_so_a_short_one_beside_it_is_not_padded(tiny, monkeypatch):
    from meeting_gym.agentkit import kvcache, local

    monkeypatch.setattr(local, "PREFILL_TOKENS", 40)  # a later turn's ~25 new tokens: short
    calls: list[tuple[list[int], list[int]]] = []
    real = kvcache.generate

    def spy(model, prompts, *, cache, max_tokens, **kwargs):
        # each prompt's tokens to read anew, and its budget
        calls.append(([len(p) - cache.match(p)[1] for p in prompts], list(max_tokens)))
        return real(model, prompts, cache=cache, max_tokens=max_tokens, **kwargs)

    monkeypatch.setattr(kvcache, "generate", spy)
    first = [{"role": "user", "content": "When is alice free?"}]
    opening = [{"role": "user", "content": "Find a slot for bob and carol next week, " * 3}]

    def play(prefill: bool):
        calls.clear()
        with LocalChatClient(tiny, batch_size=2, gather_s=0.5, prefill=prefill) as client:
            ask = client.chat.completions.create
            reply = ask(model="m", messages=first, max_tokens=8).choices[0].message.content
            later = [*first, {"role": "assistant", "content": reply}]
            later.append({"role": "user", "content": "busy 9-10"})
            out: dict[str, str] = {}

            def one(name, messages):
                answer = ask(model="m", messages=messages, max_tokens=8)
                out[name] = answer.choices[0].message.content

            threads = [
                threading.Thread(target=one, args=("later", later)),
                threading.Thread(target=one, args=("opening", opening)),
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=120)
        return out, dict(client.stats), list(calls)

    plain, plain_stats, plain_calls = play(False)
    read_alone, stats, calls_made = play(True)
    assert read_alone == plain  # the same greedy replies
    assert stats == plain_stats  # the same tokens counted as read, reused and generated
    together = [c for c in plain_calls if len(c[0]) == 2]
    assert together and max(together[0][0]) >= 40 > min(together[0][0])  # one batch, padded
    prefill = [c for c in calls_made if c[1] == [0]]
    assert len(prefill) == 1 and prefill[0][0][0] >= 40  # the opening read alone first
    batch = [c for c in calls_made if len(c[0]) == 2]
    assert batch and max(batch[0][0]) < 40  # then every row reads a few tokens


def test_a_closed_client_lets_its_cached_keys_and_values_go_without_the_cyclic_collector(tiny):
    """A training loop makes a client for each step's rollouts: the last step's cache (up to
    2 GiB) must be freed when the client is closed, not when the cyclic collector next runs
    (GRPO run b1 was killed for memory at its seventh step while they piled up)."""
    import gc
    import weakref

    gc.disable()
    try:
        with LocalChatClient(tiny, prefix_cache=True) as client:
            client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hello"}], max_tokens=4
            )
            assert client.cache is not None
            waited = time.monotonic() + 30
            while not client.cache.entries and time.monotonic() < waited:
                time.sleep(0.01)  # the batch stores its keys and values after it answers
            keys = weakref.ref(client.cache.entries[0].layers[0][0])
        assert keys() is None  # dropped by close, though the client is still held here
        held = weakref.ref(client)
        del client
        assert held() is None  # and the client itself goes by reference counting alone
    finally:
        gc.enable()
