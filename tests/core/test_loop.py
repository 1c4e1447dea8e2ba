"""The one episode loop (``core.loop.play``) and the scripted agent that replays a log through it.

A plain-Python env stands in for any env of the family: the loop needs only Gymnasium's
``reset``/``step`` shape, not gymnasium itself.
"""

from __future__ import annotations

from typing import Any

from meeting_gym.core.loop import ScriptedAgent, play


class Echo:
    """Says back each action with its turn; ``stop`` ends the episode, 3 turns truncate it."""

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        self.turn = 0
        return f"start {seed}", {"seed": seed}

    def step(self, action: str):
        self.turn += 1
        terminated = action == "stop"
        truncated = not terminated and self.turn >= 3
        return f"{self.turn}:{action}", float(self.turn), terminated, truncated, {"t": self.turn}


def test_a_script_plays_in_order_and_hears_every_observation_but_the_last():
    heard: list[tuple[int, Any]] = []
    agent = ScriptedAgent(["a", "stop"], lambda k, obs: heard.append((k, obs)))
    rollout = play(Echo(), agent, seed=7)
    assert agent.first == "start 7" and rollout.reset_info == {"seed": 7}
    assert heard == [(0, "1:a")]  # the observation the episode ends on is the rollout's
    assert rollout.observation == "2:stop" and rollout.info == {"t": 2}
    assert rollout.rewards == [1.0, 2.0] and rollout.total_reward == 3.0 and rollout.reward == 2.0
    assert rollout.terminated and not rollout.truncated and rollout.error is None
    assert rollout.turns == 2 and agent.left == 0


def test_a_script_longer_than_its_episode_leaves_actions_unplayed():
    agent = ScriptedAgent(["a", "b", "c", "d", "e"])
    rollout = play(Echo(), agent)
    assert rollout.truncated and not rollout.terminated and rollout.turns == 3
    assert agent.played == 3 and agent.left == 2


def test_a_script_that_runs_out_is_an_error_not_a_score():
    agent = ScriptedAgent(["a"])
    rollout = play(Echo(), agent)
    assert not rollout.done and rollout.turns == 1
    assert rollout.error is not None and "ends after 1 actions" in rollout.error
    assert rollout.observation == "1:a"


def test_a_script_replays_again_from_the_start_after_a_reset():
    agent = ScriptedAgent(["a", "stop"])
    first = play(Echo(), agent, seed=1)
    second = play(Echo(), agent, seed=2)
    assert first.rewards == second.rewards and agent.first == "start 2"
