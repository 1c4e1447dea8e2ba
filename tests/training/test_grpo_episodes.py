"""GRPO over whole episodes (meeting_gym.training.grpo): advantages, dropped groups, the update.

The update is checked on a small random Llama: after one step, the episode with the positive
advantage is more likely and the one with the negative advantage less, while tokens that
carry no label (the prompt, tool results) carry no gradient. Reading a group's common prefix
once gives the loss and the gradient of reading every row whole.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from tiny_llama import tiny_llama  # noqa: E402

from meeting_gym.training.grpo import (  # noqa: E402
    advantages,
    informative,
    policy_step,
    reference_logps,
    shared_length,
)
from meeting_gym.training.sft import IGNORE  # noqa: E402


def test_advantages_are_group_standardised_and_a_flat_group_has_none():
    assert advantages([1.2, 0.2]) == pytest.approx([1.0, -1.0])
    assert advantages([0.0, 0.0, 0.0]) is None
    assert advantages([0.3]) is None
    assert informative([[0.2, 0.2], [1.2, 0.0], [0.0, 0.0], [0.3, 0.2]]) == ([1, 3], 2)


def tiny():
    return tiny_llama(32, context=64)


def logp(model, row) -> float:
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([row["input_ids"]])).logits[0, :-1]
    labels = torch.tensor(row["labels"][1:])
    keep = labels != IGNORE
    picked = torch.log_softmax(logits, -1)[keep].gather(1, labels[keep][:, None])
    return float(picked.sum())


def test_one_step_makes_the_better_episode_likelier_and_the_worse_less_likely():
    model = tiny()
    good = {"input_ids": [1, 2, 3, 4, 5, 6], "labels": [IGNORE, IGNORE, IGNORE, 4, 5, 6]}
    bad = {"input_ids": [1, 2, 3, 7, 8, 9], "labels": [IGNORE, IGNORE, IGNORE, 7, 8, 9]}
    before = (logp(model, good), logp(model, bad))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    loss = policy_step(model, optimizer, [{**good, "advantage": 1.0}, {**bad, "advantage": -1.0}])
    assert isinstance(loss, float)
    after = (logp(model, good), logp(model, bad))
    assert after[0] > before[0] and after[1] < before[1]
    # nothing to learn from: no step is taken
    frozen = [p.detach().clone() for p in model.parameters()]
    assert policy_step(model, optimizer, []) == 0.0
    assert all(torch.equal(a, b) for a, b in zip(frozen, model.parameters(), strict=True))


X = IGNORE
GROUPED = [
    # a group whose rows share six tokens, two of them labelled (a tool turn alike in all)
    {"input_ids": [1, 2, 3, 4, 5, 6, 7, 8], "labels": [X, X, X, 4, 5, X, 7, 8], "group": 0},
    {"input_ids": [1, 2, 3, 4, 5, 6, 9, 10, 11], "labels": [X, X, X, 4, 5, X, 9, 10, 11]},
    {"input_ids": [1, 2, 3, 4, 5, 6, 12], "labels": [X, X, X, 4, 5, X, 12], "group": 0},
    {"input_ids": [1, 2, 3, 4, 5, 6], "labels": [X, X, X, 4, 5, X], "group": 0},  # the prefix
    {"input_ids": [1, 2, 20, 21], "labels": [X, X, 20, 21], "group": 1},
    {"input_ids": [1, 2, 20, 22], "labels": [X, X, 20, 22], "group": 1},
    {"input_ids": [1, 9, 20, 22], "labels": [X, X, 20, 22], "group": 2},  # alike in 1 token
    {"input_ids": [1, 9, 20, 23], "labels": [X, X, X, 23], "group": 2},
]
GROUPED[1]["group"] = 0


def step_grads(rows, share: bool):
    model = tiny()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)  # keeps the gradients to read
    loss = policy_step(model, optimizer, rows, share_prefix=share)
    return loss, [p.grad.clone() for p in model.parameters()]


@pytest.mark.parametrize(
    "weights",
    [
        [1.5, -0.5, -1.0, 0.0, 0.7, -0.7, 1.0, -1.0],  # each group's advantages sum to 0
        [1.5, 0.25, -1.0, 0.5, 0.7, 0.3, 2.0, 0.0],  # they need not: a row may be left out
    ],
)
def test_reading_a_groups_prefix_once_gives_the_loss_and_gradient_of_reading_each_row(weights):
    rows = [{**r, "advantage": w} for r, w in zip(GROUPED, weights, strict=True)]
    assert shared_length(rows[:4]) == 6 and shared_length(rows[4:6]) == 3
    assert shared_length(rows[6:]) == 2  # the labels part at token 3
    whole_loss, whole = step_grads(rows, share=False)
    shared_loss, shared = step_grads(rows, share=True)
    assert shared_loss == pytest.approx(whole_loss, rel=1e-5)
    assert max(float(g.abs().max()) for g in whole) > 1e-3  # there is a gradient to compare
    for a, b in zip(whole, shared, strict=True):
        assert torch.allclose(a, b, atol=1e-6, rtol=1e-4)
    # rows without a group are each read whole, as before
    alone = [{k: v for k, v in r.items() if k != "group"} for r in rows]
    alone_loss, alone_grads = step_grads(alone, share=True)
    assert alone_loss == pytest.approx(whole_loss, rel=1e-5)
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(whole, alone_grads, strict=True))


def with_reference(rows, reference, share=True):
    rows = [dict(r) for r in rows]
    reference_logps(reference, rows, share_prefix=share)
    return rows


def test_the_references_log_probabilities_are_each_labelled_tokens_read_whole_or_shared():
    reference = tiny()
    rows = [{**r, "advantage": 0.0} for r in GROUPED]
    shared, whole = with_reference(rows, reference), with_reference(rows, reference, False)
    for a, b in zip(shared, whole, strict=True):
        assert len(a["ref_logp"]) == len(a["input_ids"])
        assert a["ref_logp"] == pytest.approx(b["ref_logp"], abs=1e-5)
        # unlabelled tokens read 0; the labelled ones sum to the row's log likelihood
        assert all(v == 0.0 for v, t in zip(a["ref_logp"], a["labels"], strict=True) if t == X)
        assert sum(a["ref_logp"]) == pytest.approx(logp(reference, a), abs=1e-4)


def test_the_kl_term_pulls_the_policy_back_toward_the_reference_and_is_zero_at_it():
    rows = [{**r, "advantage": 0.0} for r in GROUPED]  # no reward signal: only the KL acts
    policy = tiny()
    # the policy itself as the reference: no KL, no gradient
    stats: dict[str, float] = {}
    optimizer = torch.optim.SGD(policy.parameters(), lr=0.0)
    policy_step(policy, optimizer, with_reference(rows, policy), beta=1.0, stats=stats)
    assert stats["kl"] == pytest.approx(0.0, abs=1e-6)
    assert max(float(p.grad.abs().max()) for p in policy.parameters()) < 1e-6
    # another model as the reference: each step lowers the KL to it
    reference = tiny_llama(32, seed=1, context=64)
    rows = with_reference(rows, reference)
    optimizer = torch.optim.SGD(policy.parameters(), lr=0.1)  # small steps: no overshoot
    seen = []
    for _ in range(3):
        stats = {}
        policy_step(policy, optimizer, rows, beta=1.0, stats=stats)
        seen.append(stats["kl"])
    assert seen[0] > 0.01 and seen[0] > seen[1] > seen[2]
    assert seen[2] < seen[0] / 3
    # beta 0 measures the KL but leaves it out of the update
    stats = {}
    optimizer = torch.optim.SGD(policy.parameters(), lr=0.0)
    assert policy_step(policy, optimizer, rows, beta=0.0, stats=stats) == 0.0
    assert stats["kl"] > 0
    with pytest.raises(ValueError, match="ref_logp"):
        policy_step(policy, optimizer, [{**r, "advantage": 1.0} for r in GROUPED], beta=0.1)


def test_with_the_kl_term_reading_a_groups_prefix_once_still_gives_the_same_gradient():
    reference = tiny_llama(32, seed=2, context=64)
    weights = [1.5, 0.25, -1.0, 0.5, 0.7, 0.3, 2.0, 0.0]
    rows = [{**r, "advantage": w} for r, w in zip(GROUPED, weights, strict=True)]
    rows = with_reference(rows, reference)
    results = []
    for share in (False, True):
        model = tiny()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
        stats: dict[str, float] = {}
        loss = policy_step(model, optimizer, rows, share_prefix=share, beta=0.5, stats=stats)
        results.append((loss, stats["kl"], [p.grad.clone() for p in model.parameters()]))
    (whole_loss, whole_kl, whole), (shared_loss, shared_kl, shared) = results
    assert whole_kl > 1e-3 and shared_kl == pytest.approx(whole_kl, rel=1e-5)
    assert shared_loss == pytest.approx(whole_loss, rel=1e-5)
    for a, b in zip(whole, shared, strict=True):
        assert torch.allclose(a, b, atol=1e-6, rtol=1e-4)
