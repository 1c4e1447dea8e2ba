"""The local model's prefix cache and prompt-lookup drafts (meeting_gym.agentkit.kvcache).

The pieces are checked alone (which prefix is found, what is dropped, what is drafted), then
the whole cached path against the uncached one on a small random Llama (transformers' own
model code, weights made here): multi-turn conversations generated in batches give the same
greedy replies, finish reasons and token counts either way, while later turns read only
what is new. The real model's side-by-side figures come from ``meeting_gym.bench_local``.
"""

from __future__ import annotations

import threading

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


def play(tiny, cached: bool, openings: list[str], turns: int = 3, max_tokens: int = 24):
    replies: dict[int, list] = {}
    with LocalChatClient(tiny, batch_size=4, gather_s=0.2, prefix_cache=cached) as client:

        def one(k: int) -> None:
            replies[k] = converse(client, openings[k], turns, max_tokens)

        threads = [threading.Thread(target=one, args=(k,)) for k in range(len(openings))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
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


def test_the_local_progress_line_says_what_loads_then_counts_turns_and_tokens():
    import io

    from meeting_gym.agents.llm import LocalProgress

    stream = io.StringIO()  # not a terminal: whole lines, at most one every every_s seconds
    progress = LocalProgress(2, stream=stream, every_s=3600)
    progress.say("local model: loading smollm2 ...")
    progress.update({"requests": 1, "prompt_tokens": 900, "reused_tokens": 0, "generated": 5})
    progress.update({"requests": 2, "prompt_tokens": 2000, "reused_tokens": 900, "generated": 9})
    progress.episode_done()
    lines = stream.getvalue().splitlines()
    assert lines[0] == "local model: loading smollm2 ..."
    # the first count is drawn at once; the second waits for its interval, the episode does not
    assert lines[1].startswith("local model: 0/2 episodes, 1 turns, 900 prompt tokens read")
    assert lines[2].startswith(
        "local model: 1/2 episodes, 2 turns, 1100 prompt tokens read (900 reused), 9 generated"
    )
    assert len(lines) == 3


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
