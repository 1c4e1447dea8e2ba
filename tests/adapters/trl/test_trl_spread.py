"""keep_spread: a GRPO batch's flat groups are replaced by fresh groups that spread.

A stand-in trainer generates from rows that say each completion's reward, so which
groups spread is known; the spliced batch is checked tensor by tensor against the
completions it must hold. A real GRPOTrainer run is in the train_grpo integration test.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from meeting_gym.adapters.trl_spread import keep_spread  # noqa: E402

SIZE = 2  # completions per group
PAD = 99


class Stand:
    """What keep_spread touches of a GRPOTrainer: generation, its size, its pad and mode."""

    def __init__(self) -> None:
        self.num_generations = SIZE
        self.processing_class = type("Tok", (), {"pad_token_id": PAD})()
        self.accelerator = type("Acc", (), {"num_processes": 1})()
        self.model = type("Model", (), {"training": True})()
        self.calls: list[list[str]] = []

    def _generate_and_score_completions(self, inputs):
        # row "name/r1r2/L": group "name", rewards r1 and r2, completions of length L
        self.calls.append([row["name"] for row in inputs[::SIZE]])
        rewards, ids, masks, prompts = [], [], [], []
        width = max(int(row["name"].split("/")[2]) for row in inputs)
        for k, row in enumerate(inputs):
            name, scores, length = row["name"].split("/")
            rewards.append(float(scores[k % SIZE]))
            code = hash(name) % 50
            ids.append([code] * int(length) + [PAD] * (width - int(length)))
            masks.append([1] * int(length) + [0] * (width - int(length)))
            prompts.append([PAD] * (k % 2) + [7] * (3 - k % 2))
        r = torch.tensor(rewards).view(-1, SIZE)
        advantages = (r - r.mean(dim=1, keepdim=True)).flatten()
        completion_mask = torch.tensor(masks)
        return {
            "prompt_ids": torch.tensor(prompts),
            "prompt_mask": (torch.tensor(prompts) != PAD).long(),
            "completion_ids": torch.tensor(ids),
            "completion_mask": completion_mask,
            "advantages": advantages,
            "num_items_in_batch": completion_mask.sum(),
            "old_per_token_logps": None,
        }


def rows(*names: str) -> list[dict[str, str]]:
    return [{"name": name} for name in names for _ in range(SIZE)]


def test_flat_groups_are_replaced_by_fresh_groups_that_spread():
    trainer = Stand()
    fresh = iter(["f1/00/2", "f2/10/5", "f3/01/1"])
    counts = keep_spread(trainer, lambda n: [{"name": next(fresh)} for _ in range(n)], 4)
    out = trainer._generate_and_score_completions(rows("a/10/3", "b/11/3", "c/00/4"))
    # b and c are flat: two fresh groups are asked for; f1 is flat, so one more round
    assert trainer.calls == [
        ["a/10/3", "b/11/3", "c/00/4"],
        ["f1/00/2", "f2/10/5"],
        ["f3/01/1"],
    ]
    assert out["advantages"].view(-1, SIZE).abs().sum(dim=1).gt(0).all()
    assert out["completion_ids"].shape == (6, 5)  # padded to the longest completion (f2's)
    codes = [hash(g) % 50 for g in ("a", "f2", "f3")]
    assert out["completion_ids"][:, 0].tolist() == [c for c in codes for _ in range(SIZE)]
    # right padding keeps each completion's tokens and mask together
    assert out["completion_mask"].sum(dim=1).tolist() == [3, 3, 5, 5, 1, 1]
    assert (out["completion_ids"][out["completion_mask"] == 0] == PAD).all()
    assert out["num_items_in_batch"] == out["completion_mask"].sum()
    assert out["prompt_ids"].shape[0] == 6 and out["old_per_token_logps"] is None
    assert counts.as_dict() == {
        "generated": 6,
        "generated_flat": 3,
        "trained": 3,
        "trained_flat": 0,
        "extra_generations": 2,
        "generated_flat_share": 0.5,
        "trained_flat_share": 0.0,
    }


def test_when_the_budget_runs_out_the_batch_is_filled_with_its_own_flat_groups():
    trainer = Stand()
    counts = keep_spread(trainer, lambda n: [{"name": "z/00/2"}] * n, 1)
    out = trainer._generate_and_score_completions(rows("a/00/3", "b/11/3", "c/10/2"))
    assert out["advantages"].shape == (6,)  # the batch keeps its size
    # c spreads; the one fresh group (z) is flat; a and b, flat, fill the batch up
    assert out["completion_mask"].sum(dim=1).tolist() == [2, 2, 3, 3, 3, 3]
    assert counts.trained == 3 and counts.trained_flat == 2
    assert counts.generated == 4 and counts.generated_flat == 3


def test_off_in_evaluation_and_refused_where_it_cannot_work():
    trainer = Stand()
    keep_spread(trainer, lambda n: pytest.fail("no fresh rows in evaluation"), 4)
    trainer.model.training = False
    out = trainer._generate_and_score_completions(rows("a/00/3"))
    assert out["advantages"].tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="0 or more"):
        keep_spread(Stand(), lambda n: [], -1)
    many = Stand()
    many.accelerator.num_processes = 2
    with pytest.raises(ValueError, match="one process"):
        keep_spread(many, lambda n: [], 1)
