"""GRPO over whole episodes (meeting_gym.agents.grpo): advantages, dropped groups, the update.

The update is checked on a small random Llama: after one step, the episode with the positive
advantage is more likely and the one with the negative advantage less, while tokens that
carry no label (the prompt, tool results) carry no gradient.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from tiny_llama import tiny_llama  # noqa: E402

from meeting_gym.agents.grpo import advantages, informative, policy_step  # noqa: E402
from meeting_gym.agents.sft import IGNORE  # noqa: E402


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
