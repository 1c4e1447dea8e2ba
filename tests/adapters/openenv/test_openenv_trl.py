"""TRL through OpenEnv (issue 48, item 2): ``environment_factory(env_id, base_url=...)``
plays on a served env through OpenEnv's client, its tools as MCP ``CallToolAction``s;
GRPOTrainer drives it; every reward equals the env's grade of the same actions replayed
in process."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest
from uvicorn_thread import served

import meeting_gym  # noqa: F401
from meeting_gym.adapters import trl as adapter
from meeting_gym.agents.policies import make_policy
from meeting_gym.core.protocol import AnswerAction, ToolCallsAction, parse_action

pytest.importorskip("openenv.core.env_server.mcp_types")  # OpenEnv 0.10
pytest.importorskip("websockets")

from meeting_gym.adapters.openenv import create_server_app

ENV = "MeetingSlot-v0"


def recording(factory: type) -> tuple[type, list[dict]]:
    """``factory`` with each episode's moves and final reward kept, to replay in process."""
    episodes: list[dict] = []

    class Recorded(factory):  # type: ignore[misc, valid-type]
        def reset(self, **row):
            self.moves = []
            self.row = {k: row[k] for k in adapter.ROW_KEYS if k in row}
            return super().reset(**row)

        def _call(self, name, arguments):
            self.moves.append(json.dumps([{"name": name, "arguments": arguments}]))
            return super()._call(name, arguments)

        def _answer(self, answer):
            self.moves.append(f"<answer>{answer}</answer>")
            return super()._answer(answer)

        def get_reward(self):
            reward = super().get_reward()
            episodes.append({"row": self.row, "moves": list(self.moves), "reward": reward})
            return reward

    Recorded.__name__ = factory.__name__  # TRL logs the reward under the class's name
    return Recorded, episodes


def replayed(episode: dict) -> float:
    """The in-process env's return for the episode's moves (moves after its end cost none)."""
    env = gym.make(ENV, mode="text")
    env.reset(options=episode["row"])
    total = 0.0
    for move in episode["moves"]:
        _, reward, terminated, truncated, _ = env.step(move)
        total += float(reward)
        if terminated or truncated:
            break
    return total


def play_gold(instance, row: dict) -> None:
    """Gold's moves made by calling the instance's methods, as TRL calls them."""
    instance.reset(**row)
    env = gym.make(ENV, mode="text")
    observation, info = env.reset(options={k: row[k] for k in adapter.ROW_KEYS if k in row})
    policy = make_policy(env.unwrapped.task.reference_policy, env=ENV)
    policy.reset(observation, info)
    while True:
        text = policy.act(observation)
        action = parse_action(text)
        if isinstance(action, AnswerAction):
            instance.answer(action.answer)
            return
        assert isinstance(action, ToolCallsAction)
        results = [getattr(instance, c.name)(**c.arguments) for c in action.calls]
        assert not any(result.startswith("error:") for result in results)
        # gold reads the in-process turn (its calls batched); the instance played each call
        observation, *_ = env.step(text)


def test_gold_over_openenv_earns_the_env_s_grade_on_every_curated_item():
    rows = adapter.rows(ENV, split="curated")
    with served(create_server_app(ENV), 20) as port:
        factory, episodes = recording(
            adapter.environment_factory(ENV, base_url=f"http://127.0.0.1:{port}")
        )
        instance = factory()  # one instance for every row, as GRPOTrainer reuses them
        for row in rows:
            play_gold(instance, row)
            instance.get_reward()
        wrong = factory()
        wrong.reset(**rows[0])
        wrong.list_attendees()
        assert wrong.answer("NONE") == "Answer received."
        wrong.get_reward()
    assert [e["reward"] for e in episodes] == [pytest.approx(1.2)] * len(rows) + [0.2]
    assert [e["reward"] for e in episodes] == [pytest.approx(replayed(e)) for e in episodes]


def test_the_remote_factory_refuses_env_kwargs_the_server_owns():
    with pytest.raises(ValueError, match="server's to set"):
        adapter.environment_factory(ENV, base_url="http://127.0.0.1:1", max_turns=3)


@pytest.mark.slow
def test_grpo_trainer_trains_on_a_served_env_and_each_reward_is_the_env_s_grade(
    tmp_path, monkeypatch
):
    trl = pytest.importorskip("trl")
    pytest.importorskip("transformers")
    from trl_tiny import tiny_tool_run

    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    model, tokenizer, args = tiny_tool_run(tmp_path)
    with served(create_server_app(ENV), 20) as port:
        factory, episodes = recording(
            adapter.environment_factory(ENV, base_url=f"http://127.0.0.1:{port}")
        )
        trainer = trl.GRPOTrainer(
            model=model,
            processing_class=tokenizer,
            args=args,
            train_dataset=adapter.dataset(ENV, split="train", n=4),
            environment_factory=factory,
        )
        trainer.train()
    history = [entry for entry in trainer.state.log_history if "loss" in entry]
    assert len(history) == 2 and "rewards/MeetingSlotTools/mean" in history[0]
    assert len(episodes) == 2 * 2  # two steps of one group of two
    assert [e["reward"] for e in episodes] == [pytest.approx(replayed(e)) for e in episodes]
