"""SFT on whole episodes (training.sft): which tokens carry a loss, one rendering, resume.

On a real rendered MeetingSlot expert episode with SmolLM2's own tokenizer: exactly the
assistant's turns (each through its end-of-turn token) carry labels; the system prompt, the
question and every tool result do not; and every prompt the SFT rows contain is, token for
token, the prompt the local policy sends at that point of the episode. The training loop is
checked on a small random Llama: its loss falls, and a run stopped and resumed from its
checkpoint ends with the same weights as one that never stopped.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from tiny_llama import tiny_llama  # noqa: E402

from meeting_gym.agentkit.local import LocalChatClient, chat_ids, resolve_model  # noqa: E402
from meeting_gym.evaluation.episodes import episode_rows  # noqa: E402
from meeting_gym.training.sft import IGNORE, assistant_spans, episode_tokens, train  # noqa: E402


@pytest.fixture(scope="module")
def smollm2_tokenizer():
    try:
        source = resolve_model("smollm2")
    except ValueError as exc:
        pytest.skip(str(exc))
    return transformers.AutoTokenizer.from_pretrained(
        str(source.folder), gguf_file=source.gguf_file, local_files_only=True
    )


@pytest.fixture(scope="module")
def episode():
    [row] = episode_rows("MeetingSlot-v0", "train", 1)
    return row["messages"]


def stop_ids(tokenizer):
    return [tokenizer.convert_tokens_to_ids("<|im_end|>")]


def test_only_the_assistants_turns_carry_labels_on_a_real_rendered_episode(
    smollm2_tokenizer, episode
):
    tok = smollm2_tokenizer
    row = episode_tokens(tok, episode, stop_ids(tok))
    ids, labels = row["input_ids"], row["labels"]
    assert len(ids) == len(labels)
    # the labelled runs, decoded: each assistant message's content and its end of turn
    runs, current = [], []
    for token, label in zip(ids, labels, strict=True):
        if label == IGNORE:
            if current:
                runs.append(current)
            current = []
        else:
            assert label == token
            current.append(token)
    if current:
        runs.append(current)
    assistants = [m["content"] for m in episode if m["role"] == "assistant"]
    assert [tok.decode(run) for run in runs] == [f"{c}<|im_end|>" for c in assistants]
    # nothing the env or the user wrote is learnt
    unlabelled = tok.decode([t for t, label in zip(ids, labels, strict=True) if label == IGNORE])
    for message in episode:
        if message["role"] != "assistant":
            assert message["content"] in unlabelled
    assert "<|im_start|>assistant\n" in unlabelled  # the header is the prompt's, not learnt


def test_every_sft_prompt_is_the_local_policys_prompt_token_for_token(smollm2_tokenizer, episode):
    tok = smollm2_tokenizer
    model = SimpleNamespace(
        config=SimpleNamespace(max_position_embeddings=8192),
        generation_config=SimpleNamespace(eos_token_id=stop_ids(tok)),
    )
    ids, spans = assistant_spans(tok, episode, stop_ids(tok))
    assistant_at = [k for k, m in enumerate(episode) if m["role"] == "assistant"]
    with LocalChatClient((tok, model), prefix_cache=False) as client:
        for k, (start, _) in zip(assistant_at, spans, strict=True):
            prompt = client.prompt_ids(episode[:k])
            assert prompt == ids[:start] == chat_ids(tok, episode[:k])
    assert ids == chat_ids(tok, episode, generation_prompt=False)


def test_an_episode_over_max_length_is_refused_not_cut(smollm2_tokenizer, episode):
    with pytest.raises(ValueError, match="over max_length 100"):
        episode_tokens(smollm2_tokenizer, episode, stop_ids(smollm2_tokenizer), max_length=100)


def tiny_model(seed: int = 0):
    return tiny_llama(64, seed=seed)


def rows(n: int = 8):
    out = []
    for k in range(n):
        prompt = [1, 2, 3 + k % 4]
        answer = [10 + k % 4, 11 + k % 4, 12]
        out.append({"input_ids": prompt + answer, "labels": [IGNORE] * 3 + answer})
    return out


def test_the_loss_falls_and_a_resumed_run_ends_where_an_unbroken_one_does(tmp_path):
    data = rows()
    whole = tiny_model()
    log = train(whole, data, tmp_path / "whole", batch=4, epochs=3, lr=1e-2, seed=1)
    assert len(log) == 6 and log[-1]["loss"] < log[0]["loss"]
    broken = tiny_model()
    first = train(
        broken, data, tmp_path / "broken", batch=4, epochs=3, lr=1e-2, seed=1, deadline_s=0.0
    )  # stops, saving a checkpoint, after its first step
    assert len(first) == 1
    resumed_model = tiny_model(seed=99)  # other weights: the checkpoint must restore them
    resumed = train(resumed_model, data, tmp_path / "broken", batch=4, epochs=3, lr=1e-2, seed=1)
    assert [e["loss"] for e in resumed] == [e["loss"] for e in log]
    for a, b in zip(whole.state_dict().values(), resumed_model.state_dict().values(), strict=True):
        assert torch.equal(a, b)


def test_the_loss_on_labelled_positions_only_is_the_whole_forwards_loss():
    from meeting_gym.training.sft import _labelled_logits

    model = tiny_model().eval()
    data = rows(2)
    ids = torch.tensor([r["input_ids"] for r in data])
    labels = torch.tensor([r["labels"] for r in data])
    mask = torch.ones_like(ids)
    logits, targets = _labelled_logits(model, ids, labels, mask)
    assert logits.shape[0] == int((labels[:, 1:] != IGNORE).sum())  # only labelled positions
    whole = model(input_ids=ids, attention_mask=mask).logits[:, :-1]
    full = torch.nn.functional.cross_entropy(
        whole.reshape(-1, whole.shape[-1]), labels[:, 1:].reshape(-1), ignore_index=IGNORE
    )
    sliced = torch.nn.functional.cross_entropy(logits, targets)
    assert torch.allclose(full, sliced, atol=1e-6)
