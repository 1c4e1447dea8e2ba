"""The runner's hooks: ``on_episode`` sees each episode as it ends; ``seeds`` resets each."""

from __future__ import annotations

import threading

import pytest

from meeting_gym.core.splits import load_split
from meeting_gym.envs.meeting_slot.policies import GoldPolicy
from meeting_gym.evaluation.evaluate import evaluate


class SlowFirst(GoldPolicy):
    """Gold, but the episode reset with seed 10 waits until ``release`` is set."""

    def __init__(self, release: threading.Event, seen: list[int]) -> None:
        super().__init__()
        self.release, self.seen = release, seen

    def reset(self, observation, info, seed=None, *, env=None):
        self.seen.append(seed)
        super().reset(observation, info, seed, env=env)
        if seed == 10:
            self.release.wait(timeout=30)


def test_a_slow_episode_holds_back_no_other_episode_and_each_is_reset_with_its_seed():
    items = load_split("curated", n=3)
    release, seeds_seen, ended = threading.Event(), [], []

    def on_episode(k, result):
        ended.append((k, result.item_id))
        if len(ended) == 2:  # the two after the slow one ended while it waited
            release.set()

    results = evaluate(
        lambda: SlowFirst(release, seeds_seen),
        items,
        max_concurrent=3,
        seeds=[10, 20, 30],
        on_episode=on_episode,
    )
    assert release.is_set()  # set by on_episode, not by the wait's timeout
    assert [k for k, _ in ended] in ([1, 2, 0], [2, 1, 0])
    assert {k: item_id for k, item_id in ended} == {k: r.item_id for k, r in enumerate(results)}
    assert sorted(seeds_seen) == [10, 20, 30]
    assert all(r.reward == pytest.approx(1.2) for r in results)  # gold, whatever the order


def test_seeds_must_give_one_seed_an_episode():
    items = load_split("curated", n=2)
    with pytest.raises(ValueError, match=r"one seed an episode \(4\), got 2"):
        evaluate(lambda: GoldPolicy(), items, rollouts=2, seeds=[1, 2])


def test_a_stop_raised_by_on_episode_in_a_worker_ends_the_run():
    # train_tool_env's replay check stops the run this way from a worker thread
    items = load_split("curated", n=4)
    calls = []

    def on_episode(k, result):
        calls.append(k)
        raise SystemExit(f"eval item {k} does not replay")

    with pytest.raises(SystemExit, match=r"eval item \d does not replay"):
        evaluate(lambda: GoldPolicy(), items, max_concurrent=2, on_episode=on_episode)
    assert calls  # raised from the hook, not before any episode ended
