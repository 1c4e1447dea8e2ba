"""The curriculum: its rules as a table, train-only draws, resume, and the Gymnasium wrapper."""

from __future__ import annotations

import hashlib
import json

import gymnasium as gym
import pytest

import meeting_gym  # noqa: F401  (registers the env ids)
from meeting_gym.agents.policies import make_policy
from meeting_gym.core.curriculum import Curriculum, Draw, Rules
from meeting_gym.core.curriculum_wrapper import CurriculumWrapper
from meeting_gym.core.registry import make_task
from meeting_gym.core.splits import held_out, load_split

LEVELS = ("easy", "medium", "hard", "expert")


def _curriculum(**rules) -> Curriculum:
    return Curriculum(LEVELS, best=1.0, rules=Rules(**{"window": 8, "min_outcomes": 4, **rules}))


def _moves(outcomes: list[tuple[str, float]], **rules) -> list[str]:
    """The level after each reported outcome."""
    cur = _curriculum(**rules)
    levels = []
    for level, reward in outcomes:
        cur.report(level, reward)
        levels.append(cur.current)
    return levels


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [
        # three successes are not enough evidence (min_outcomes 4); the fourth moves up
        ([("easy", 1.0)] * 4, ["easy", "easy", "easy", "medium"]),
        # a rate of exactly 0.75 (inside the band 0.2..0.8) stays
        ([("easy", 1.0)] * 3 + [("easy", 0.0)], ["easy"] * 4),
        # the bottom level never steps down however badly it goes
        ([("easy", 0.0)] * 6, ["easy"] * 6),
        # a partial reward below `success` is a failure
        ([("easy", 0.99)] * 4, ["easy"] * 4),
    ],
)
def test_rules_as_a_table(outcomes, expected):
    assert _moves(outcomes) == expected


def test_up_then_down_and_the_window_of_the_new_level_starts_empty():
    cur = _curriculum()
    for _ in range(4):
        cur.report("easy", 1.0)
    assert cur.current == "medium" and cur.windows["medium"] == []
    for _ in range(4):
        cur.report("medium", 0.0)
    assert cur.current == "easy"
    # easy's old successes were cleared on the way back: four fresh outcomes are needed
    assert cur.windows["easy"] == []
    assert [m["to"] for m in cur.moves] == ["medium", "easy"]


def test_outcomes_count_at_the_level_their_item_came_from():
    """A late outcome (a vector env's episode drawn before a move) teaches its own level."""
    cur = _curriculum()
    draws = cur.take(4)
    for draw in draws:
        cur.report(draw, 1.0)
    assert cur.current == "medium"
    cur.report(Draw("easy", 99, 0), 0.0)  # late, from before the move
    assert cur.windows["easy"] == [1, 1, 1, 1, 0] and cur.windows["medium"] == []


def test_the_top_level_is_the_last_one_listed():
    cur = Curriculum(("easy", "medium"), best=1.0, rules=Rules(window=4, min_outcomes=2))
    for _ in range(10):
        cur.report(cur.current, 1.0)
    assert cur.current == "medium"


def test_the_window_keeps_the_last_outcomes_only():
    cur = _curriculum(high=0.9)
    for reward in [0.0] * 8 + [1.0] * 3:
        cur.report("easy", reward)
    assert cur.windows["easy"] == [0] * 5 + [1] * 3 and len(cur.windows["easy"]) == 8


def test_groups_and_their_spread_are_counted():
    cur = _curriculum()
    cur.report("easy", [1.0, 1.0, 1.0])  # no spread
    cur.report("easy", [0.0, 1.0, 0.0])
    cur.report("easy", [0.5] * 4)  # no spread
    assert (cur.groups, cur.zero_spread) == (3, 2)
    assert cur.zero_spread_share == pytest.approx(2 / 3)
    assert cur.outcomes == 10


def test_draws_are_the_train_items_of_their_level_and_never_held_out_or_curated():
    cur = Curriculum.for_env("CalendarMath-v0", seed=7)
    task = make_task("CalendarMath-v0")
    draws = cur.take(3)
    assert [d.options for d in draws] == [
        {"split": "train", "index": k, "split_seed": 7, "difficulty": "easy"} for k in range(3)
    ]
    env = gym.make("CalendarMath-v0", disable_env_checker=True)
    expected = load_split("train", 3, 7, "easy", env="CalendarMath-v0")
    for draw, item in zip(draws, expected, strict=True):
        _, info = env.reset(options=draw.options)
        assert info[task.id_key] == task.item_id(item)
        assert info["difficulty"] == "easy"
        assert not held_out(task.key(item)) and task.key(item) not in task.curated_keys


def test_for_env_reads_the_levels_and_the_best_reward():
    cur = Curriculum.for_env("MeetingSlot-v0", up_to="hard")
    assert cur.levels == ("easy", "medium", "hard")
    assert cur.threshold == make_task("MeetingSlot-v0").max_reward
    assert Curriculum.for_env("CronSchedule-v0").levels == ("1", "2", "3", "4")
    with pytest.raises(ValueError, match="no difficulty 'impossible'"):
        Curriculum.for_env("MeetingSlot-v0", up_to="impossible")


def test_for_env_spans_from_its_easiest_level_and_never_draws_below_it():
    cur = Curriculum.for_env("MeetingSlot-v0", easiest="medium", up_to="hard", seed=1)
    assert cur.levels == ("medium", "hard") and cur.current == "medium"
    # a run of failures cannot move it below its easiest level
    moved = [cur.report(cur.next(), 0.0) for _ in range(200)]
    assert not any(moved) and cur.current == "medium"
    with pytest.raises(ValueError, match="no difficulty 'nope'"):
        Curriculum.for_env("MeetingSlot-v0", easiest="nope")
    with pytest.raises(ValueError, match="'hard' is harder than 'medium', so no level is left"):
        Curriculum.for_env("MeetingSlot-v0", easiest="hard", up_to="medium")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"low": 0.9, "high": 0.1}, "low < high"),
        ({"window": 0}, "window"),
        ({"window": 4, "min_outcomes": 5}, "min_outcomes"),
        ({"success": float("nan")}, "success"),
    ],
)
def test_bad_rules_are_refused_with_their_name(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Rules(**kwargs)


def test_bad_reports_and_levels_are_refused():
    cur = _curriculum()
    with pytest.raises(ValueError, match="unknown level"):
        cur.report("legendary", 1.0)
    with pytest.raises(ValueError, match="finite"):
        cur.report("easy", float("inf"))
    with pytest.raises(ValueError, match="at least one"):
        cur.report("easy", [])
    with pytest.raises(ValueError, match="distinct"):
        Curriculum(("easy", "easy"), best=1.0)
    with pytest.raises(ValueError, match="start"):
        Curriculum(LEVELS, best=1.0, start="legendary")


def _learner(draw: Draw) -> list[float]:
    """A fixed, seeded 'learner': a group of 4 rewards, better on easier levels."""
    skill = {"easy": 200, "medium": 140, "hard": 60, "expert": 10}[draw.level]
    out = []
    for k in range(4):
        digest = hashlib.sha256(f"{draw.level}:{draw.index}:{k}".encode()).digest()
        out.append(1.0 if digest[0] < skill else 0.0)
    return out


def _run(cur: Curriculum, steps: int) -> list[Draw]:
    drawn = []
    for _ in range(steps):
        for draw in cur.take(2):  # two items a step, reported after both are drawn
            drawn.append(draw)
        for draw in drawn[-2:]:
            cur.report(draw, _learner(draw))
    return drawn


RESUME_RULES = Rules(window=16, min_outcomes=8, success=1.0, replay=0.5, replays=2)


def test_a_resumed_run_draws_what_an_uninterrupted_one_draws(tmp_path):
    whole = Curriculum.for_env("MeetingSlot-v0", seed=3, rules=RESUME_RULES)
    uninterrupted = _run(whole, 60)

    first = Curriculum.for_env("MeetingSlot-v0", seed=3, rules=RESUME_RULES)
    before = _run(first, 25)
    first.save(tmp_path / "curriculum.json")
    resumed = Curriculum.load(tmp_path / "curriculum.json")
    after = _run(resumed, 35)

    assert before + after == uninterrupted
    assert resumed.state() == whole.state()
    # the run moved both ways before and after the cut: the resume carried a level over
    assert [m["to"] for m in whole.moves][:3] == ["medium", "hard", "medium"]
    assert first.moves and len(whole.moves) > len(first.moves)
    # and replayed items on both sides of the cut: the frontier was carried over too
    assert first.replayed and whole.replayed > first.replayed and first.frontier
    assert json.loads((tmp_path / "curriculum.json").read_text())["level"] in LEVELS


def test_a_malformed_state_is_refused_with_a_reason():
    state = _curriculum().state()
    with pytest.raises(ValueError, match="version"):
        Curriculum.from_state({**state, "version": 99})
    with pytest.raises(ValueError, match="malformed"):
        Curriculum.from_state({k: v for k, v in state.items() if k != "drawn"})
    with pytest.raises(ValueError, match="outcomes"):
        Curriculum.from_state({**state, "outcomes": -1})


# ---------------------------------------------------------------------- the wrapper


class _GoodUpToMedium:
    """Answers CalendarMath with the gold answer on easy and medium items, nonsense above."""

    def __init__(self) -> None:
        self.gold = make_policy("gold", env="CalendarMath-v0")

    def act(self, observation: str, info: dict) -> str:
        if info["difficulty"] in ("easy", "medium"):
            self.gold.reset(observation, info)
            return self.gold.act(observation)
        return "<answer>no idea</answer>"


def test_the_wrapper_follows_the_learner_and_reports_each_episode():
    cur = Curriculum.for_env("CalendarMath-v0", rules=Rules(window=8, min_outcomes=4))
    env = CurriculumWrapper(gym.make("CalendarMath-v0", disable_env_checker=True), cur)
    learner = _GoodUpToMedium()
    seen = []
    observation, info = env.reset(seed=0)
    for _ in range(40):
        seen.append(info["curriculum_level"])
        observation, _, terminated, _, info = env.step(learner.act(observation, info))
        assert terminated and info["curriculum_level"] == seen[-1]
        observation, info = env.reset()
    assert cur.outcomes == 40
    # it climbs to medium, tries hard, fails there, and never reaches expert
    assert seen[:4] == ["easy"] * 4 and "hard" in seen and "expert" not in seen
    # every visit to hard ends in a step back down to medium
    tos = [m["to"] for m in cur.moves]
    assert tos[:2] == ["medium", "hard"] and tos[1::2] == ["hard"] * len(tos[1::2])
    assert all(to == "medium" for to in tos[2::2])


def test_reset_with_options_of_its_own_passes_through_unreported():
    cur = Curriculum.for_env("CalendarMath-v0")
    env = CurriculumWrapper(gym.make("CalendarMath-v0", disable_env_checker=True), cur)
    options = {"split": "eval", "index": 3}
    _, info = env.reset(options=options)
    assert "curriculum_level" not in info
    env.step("<answer>2024-01-01</answer>")
    assert cur.outcomes == 0 and sum(cur.drawn.values()) == 0


def test_the_wrapper_refuses_levels_the_env_does_not_have():
    cur = Curriculum(("1", "2"), best=1.0)
    with pytest.raises(ValueError, match="not a difficulty"):
        CurriculumWrapper(gym.make("CalendarMath-v0", disable_env_checker=True), cur)


def test_one_curriculum_shared_by_a_vector_envs_copies():
    """SB3's DummyVecEnv: every copy draws from, and reports to, the one curriculum."""
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.env_util import make_vec_env

    cur = Curriculum.for_env("MeetingSlot-v0", rules=Rules(window=8, min_outcomes=4))
    venv = make_vec_env(
        "MeetingSlot-v0",
        n_envs=3,
        seed=0,
        wrapper_class=CurriculumWrapper,
        wrapper_kwargs={"curriculum": cur},
    )
    venv.reset()
    finished = 0
    for _ in range(60):
        masks = venv.env_method("action_masks")
        actions = [int(m.nonzero()[0][-1]) for m in masks]  # the last legal action: an answer
        _, _, dones, _ = venv.step(actions)
        finished += int(dones.sum())
    assert finished > 0 and cur.outcomes == finished
    assert sum(cur.drawn.values()) == 3 + finished  # one draw per reset, shared by all three


def test_the_levels_picture_is_drawn_from_a_saved_state(tmp_path):
    pytest.importorskip("matplotlib")
    from meeting_gym.training.runs import levels_figure

    cur = _curriculum()
    for reward in [1.0] * 4 + [0.0] * 4:
        cur.report(cur.current, reward)
    cur.take(3)
    fig = levels_figure(Curriculum.from_state(cur.state()).state(), title="a run")
    (line,) = fig.axes[0].get_lines()[:1]
    # from easy at 0 draws, up to medium, back to easy, held to the last draw
    assert list(line.get_ydata()) == [0, 1, 0, 0]
    assert list(line.get_xdata()) == [0, 0, 0, 3]
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == list(LEVELS)
    fig.savefig(tmp_path / "levels.png")
    assert (tmp_path / "levels.png").stat().st_size > 0


def test_an_item_whose_group_was_inside_the_band_is_offered_again():
    cur = _curriculum(replay=1.0, replays=1)
    first = cur.next()
    cur.report(first, [1.0, 0.0, 1.0, 0.0])  # a rate of 0.5: at the frontier
    again = cur.next()
    assert again == first and cur.replayed == 1 and cur.frontier == []
    cur.report(again, [1.0, 0.0, 0.0, 1.0])  # offered twice already: not kept a third time
    assert cur.frontier == [] and cur.next() == Draw("easy", 1, 0)


def test_items_outside_the_band_and_single_outcomes_are_not_kept():
    cur = _curriculum(replay=1.0)
    for rewards in ([1.0] * 4, [0.0] * 4, [1.0, 1.0, 1.0, 1.0, 1.0, 0.0], 1.0):
        cur.report(cur.next(), rewards)
    assert cur.frontier == [] and cur.replayed == 0
    plain = _curriculum()  # replay 0: nothing is ever kept
    plain.report(plain.next(), [1.0, 0.0])
    assert plain.frontier == [] and plain.next() == Draw("easy", 1, 0)


def test_replays_come_from_the_current_level_only_and_at_the_share_asked():
    cur = _curriculum(replay=0.5, replays=16)
    cur.report(Draw("medium", 7, 0), [1.0, 0.0])  # a medium item, while the level is easy
    assert cur.frontier == [["medium", 7, 1]]
    draws = cur.take(200)
    assert all(d.level == "easy" for d in draws) and cur.replayed == 0
    # every group at the frontier (kept once each): about half the draws are replays
    cur = _curriculum(replay=0.5, replays=1, high=0.9)
    seen = []
    for _ in range(400):
        draw = cur.next()
        seen.append(draw)
        cur.report(draw, [1.0, 0.0])
    assert 0.4 < cur.replayed / cur.draws < 0.6
    assert max(seen.count(d) for d in seen) == 2  # no item is offered more than twice


def test_replay_rules_are_checked():
    with pytest.raises(ValueError, match="replay must be a number from 0 to 1"):
        Rules(replay=1.5)
    with pytest.raises(ValueError, match="replays must be"):
        Rules(replays=0)
