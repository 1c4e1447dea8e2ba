"""TimetablePlanner-v0 as a Gymnasium env: two interfaces over one engine.

The recorded trajectories replay through the text interface (the predecessor's action
objects as sent) and the discrete one (each action as its index) with the recorded
reward, end, error, penalty, budget, scores and conflicts at every step; the tool-call
forms are the action object; masks equal a from-scratch recomputation and mean what the
docstring says; observations match the timetable; reset options and bounds say what is
wrong.
"""

from __future__ import annotations

import json
import random
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from timetable_fixtures import (
    given_but_refused,
    has_fraction,
    random_action,
    recording,
    trajectory_keys,
)

import meeting_gym  # noqa: F401
from meeting_gym.bench import timetable_sizes as sizes
from meeting_gym.envs.timetable_planner.discrete.interface import (
    DEFAULT_BOUNDS,
    HARD_MASKED,
    ActionTable,
    Masker,
)
from meeting_gym.envs.timetable_planner.domain.actions import APPLY, Action
from meeting_gym.envs.timetable_planner.domain.catalogue import CATALOGUE_IDS, get_scenario
from meeting_gym.envs.timetable_planner.domain.episode import (
    INVALID_PENALTY,
    NOOP_PENALTY,
    TimetableEpisode,
)
from meeting_gym.envs.timetable_planner.domain.generator import SIZES, Sizes, generate
from meeting_gym.envs.timetable_planner.domain.problem import Problem, problem_of
from meeting_gym.envs.timetable_planner.domain.scoring import Timetable
from meeting_gym.envs.timetable_planner.view import reset_text, scenario_from_view

ENV = "TimetablePlanner-v0"
TOLERANCE = 1e-9


def make(mode: str = "discrete", **kwargs) -> gym.Env:
    return gym.make(ENV, mode=mode, disable_env_checker=True, **kwargs)


def _same_step(info: dict, reward: float, done: bool, step: dict, *, message: bool = True):
    assert abs(reward - step["reward"]) <= TOLERANCE, (reward, step["reward"])
    assert done == step["done"]
    if message:
        assert info["action_error"] == step["action_error"]
    assert info["action_penalty"] == step["action_penalty"]
    assert info["remaining_step_budget"] == step["remaining_step_budget"]
    assert info["conflict_summary"] == step["conflict_summary"]
    for key, value in step["score_breakdown"].items():
        assert abs(info["score_breakdown"][key] - value) <= TOLERANCE, key


@pytest.mark.parametrize("key", trajectory_keys())
def test_recorded_trajectory_replays_through_the_text_interface(key):
    sid, trajectory = recording(key)
    env = make("text")
    env.reset(options={"scenario_id": sid})
    for step in trajectory["steps"]:
        if step["after_done"]:
            break
        observation, reward, terminated, truncated, info = env.step(json.dumps(step["action"]))
        if has_fraction(step["action"]):  # D16 fixed: an action_error, not a truncation
            assert info["outcome"] == "invalid" and reward == INVALID_PENALTY
            assert info["action_error"].startswith(("day must be", "start_slot must be"))
            continue
        refused = given_but_refused(step)  # named with its value now, not "missing"
        _same_step(info, reward, terminated or truncated, step, message=refused is None)
        if refused is not None:
            assert info["action_error"].startswith(f"{refused} must be an integer")
        assert json.loads(observation)["remaining_step_budget"] == step["remaining_step_budget"]
        if terminated or truncated:
            assert info["reward"] == pytest.approx(env.unwrapped.episode.engine.total_reward)
            break


@pytest.mark.parametrize("key", trajectory_keys())
def test_recorded_trajectory_replays_through_the_discrete_interface(key):
    """Each action as its index; one no index expresses (an unknown id, a parse failure)
    is sent out of range: invalid with the same penalty, in the env's own words."""
    sid, trajectory = recording(key)
    env = make("discrete")
    env.reset(options={"scenario_id": sid})
    base = env.unwrapped
    table, engine = base.interface.table, base.episode.engine
    for step in trajectory["steps"]:
        if step["after_done"]:
            break
        parsed = engine.parse(step["action"])
        index = table.encode(parsed, engine.problem) if isinstance(parsed, Action) else None
        if has_fraction(step["action"]):
            assert index is None
        observation, reward, terminated, truncated, info = env.step(
            table.n if index is None else index
        )
        assert base.observation_space.contains(observation)
        if has_fraction(step["action"]):
            assert reward == INVALID_PENALTY
            continue
        _same_step(info, reward, terminated or truncated, step, message=index is not None)
        if terminated or truncated:
            break


@pytest.mark.parametrize(
    "action",
    [
        {
            "action_type": "assign_session",
            "session_id": "E1_S1",
            "day": 0,
            "start_slot": 0,
            "room_id": "R2",
        },
        {
            "name": "assign_session",
            "arguments": {"session_id": "E1_S1", "day": "Mon", "start_slot": 0, "room_id": "R2"},
        },
        {
            "name": "assign_session",
            "arguments": json.dumps(
                {"session_id": "E1_S1", "day": 0, "start_slot": 0, "room_id": "R2"}
            ),
        },
    ],
)
def test_an_action_object_and_a_tool_call_are_one_action(action):
    forms = [action, json.dumps(action), f"<tool_call>{json.dumps(action)}</tool_call>"]
    if "name" not in action:
        forms = forms[:2]
    outcomes = []
    for form in forms:
        env = make("text")
        env.reset(options={"scenario_id": "easy_1"})
        _, reward, _, _, info = env.step(form)
        outcomes.append((reward, info["outcome"], info["action_error"], info["score"]))
    assert outcomes[0][1] == APPLY and len(set(outcomes)) == 1


def test_several_actions_in_one_step_each_use_budget_and_the_rewards_add_up():
    env = make("text")
    env.reset(options={"scenario_id": "easy_1"})
    calls = [
        {
            "name": "assign_session",
            "arguments": {"session_id": "E1_S1", "day": 0, "start_slot": 0, "room_id": "R2"},
        },
        {"action_type": "unassign_session", "session_id": "nope"},
        {"name": "submit_timetable", "arguments": {}},
        {"name": "unassign_session", "arguments": {"session_id": "E1_S1"}},
    ]
    engine = TimetableEpisode(get_scenario("easy_1"))
    expected = sum(
        engine.step(
            engine.parse(
                {"action_type": c.get("name", c.get("action_type")), **c.get("arguments", c)}
            )
            if "name" in c
            else c
        ).reward
        for c in calls[:3]
    )
    observation, reward, terminated, truncated, info = env.step(json.dumps(calls))
    results = json.loads(observation)
    assert len(results) == 4 and results[3].startswith("error: not run")
    assert json.loads(results[1])["action_error"] == "Unknown session_id: nope"
    assert json.loads(results[2])["done"] is True and terminated and not truncated
    assert reward == pytest.approx(expected) and info["remaining_step_budget"] == 17
    assert info["reward"] == pytest.approx(reward)
    with pytest.raises(RuntimeError, match="episode is over"):
        env.step(json.dumps(calls[0]))


def test_info_carries_the_breakdown_every_step_and_the_terms_at_the_end():
    env = make("discrete")
    _, info = env.reset(options={"scenario_id": "medium_1"})
    paid = 0.0
    done = False
    rng = random.Random(0)
    while not done:
        legal = np.flatnonzero(info["action_mask"])
        _, reward, terminated, truncated, info = env.step(int(rng.choice(legal)))
        paid += reward
        assert set(info["score_breakdown"]) >= {"overall_score", "coverage_score"}
        assert info["score"] == info["score_breakdown"]["overall_score"]
        done = terminated or truncated
    assert info["reward"] == pytest.approx(paid)
    for name in env.unwrapped.task.rubric.names:
        assert info[name] == info["score_breakdown"][name]
    assert info["steps"] == 30 - info["remaining_step_budget"]


# ----------------------------------------------------------------------------- masks


def _full_mask(table: ActionTable, problem: Problem, timetable: Timetable) -> np.ndarray:
    masker = Masker(table, problem)
    placed = [s for s, _ in timetable.items()]
    for s, spot in timetable.items():
        masker.set_spot(s, spot)
    masker.refresh(placed)
    return masker.mask.copy()


def _hard_clean(problem: Problem, session: int, spot: tuple[int, int, int]) -> bool:
    if problem.task_name not in HARD_MASKED:
        return True
    d, t, r = spot
    cells = ((1 << problem.session_length[session]) - 1) << t
    teacher = problem.session_teacher[session]
    return (
        problem.type_ok[session][r]
        and problem.capacity_ok[session][r]
        and problem.teacher_avail_mask[teacher][d] & cells == cells
        and problem.room_avail_mask[r][d] & cells == cells
    )


def _allowed(table: ActionTable, problem: Problem, timetable: Timetable, index: int) -> bool:
    """What the mask must say, from the engine's own check and the hard constraints."""
    action = table.decode(index, problem)
    if action.action_type == "submit_timetable":
        return True
    if (action.session_id or "").startswith("#") or (action.room_id or "").startswith("#"):
        return False
    if action.target_session_id and action.target_session_id.startswith("#"):
        return False
    from meeting_gym.envs.timetable_planner.domain.actions import check_action

    check = check_action(problem, timetable, action)
    if check.verdict != APPLY:
        return False
    if action.action_type in ("assign_session", "move_session"):
        return _hard_clean(problem, check.session, check.spot)
    if action.action_type == "swap_sessions":
        a, b = check.session, check.target
        return _hard_clean(problem, a, timetable.spot(b)) and _hard_clean(
            problem, b, timetable.spot(a)
        )
    return True


@pytest.mark.parametrize(
    "scenario_id", ["easy_1", "medium_4", "hard_3", "expert_2", "gen_expert_4001"]
)
def test_masks_follow_the_rules_and_a_recomputation_along_random_walks(scenario_id):
    env = make("discrete")
    _, info = env.reset(options={"scenario_id": scenario_id})
    base = env.unwrapped
    table = base.interface.table
    engine = base.episode.engine
    problem = engine.problem
    rng = random.Random(scenario_id)
    sample = rng.sample(range(table.n), 1500)
    for _ in range(min(40, problem.step_budget - 1)):
        mask = info["action_mask"]
        assert mask.dtype == np.int8 and mask is not base.interface.masker.mask
        assert np.array_equal(mask, _full_mask(table, problem, engine.timetable))
        legal = np.flatnonzero(mask)
        for index in [*sample, *rng.sample(list(legal), min(200, len(legal)))]:
            assert bool(mask[index]) == _allowed(table, problem, engine.timetable, index), (
                table.describe(index, problem)
            )
        # mostly allowed actions; a masked or random one is played too
        action = int(rng.choice(legal)) if rng.random() < 0.8 else rng.randrange(table.n)
        if table.decode(action, problem).action_type == "submit_timetable":
            continue
        _, _, terminated, truncated, info = env.step(action)
        assert not (terminated or truncated)


def _cases(problem: Problem) -> dict[str, tuple[int, int, int, int]]:
    """One (session, day, start, room) per hard-constraint case the mask excludes, where the
    scenario has one; each breaks that rule only (the others hold)."""
    p = problem
    found: dict[str, tuple[int, int, int, int]] = {}
    for s in range(len(p.sessions)):
        length = p.session_length[s]
        cells = (1 << length) - 1
        teacher = p.session_teacher[s]
        for r in range(len(p.room_ids)):
            for d in range(p.n_days):
                for t in range(p.per_day - length + 1):
                    at = cells << t
                    tests = {
                        "wrong room type": p.type_ok[s][r],
                        "room too small": p.capacity_ok[s][r],
                        "teacher unavailable": p.teacher_avail_mask[teacher][d] & at == at,
                        "room unavailable": p.room_avail_mask[r][d] & at == at,
                    }
                    failed = [name for name, ok in tests.items() if not ok]
                    if len(failed) == 1:
                        found.setdefault(failed[0], (s, d, t, r))
                    elif not failed:
                        found.setdefault("clean", (s, d, t, r))
    return found


def test_the_mask_excludes_what_the_issue_lists_and_no_more():
    """Issue 10: assigning an assigned session, a room of the wrong type or too small where
    that is a hard constraint (medium and up), a slot outside availability, a move onto
    itself; absent sessions and rooms. Easy counts none of the room or availability rules,
    so it masks none of them. Each case is played too: a masked action is still an action."""
    seen: set[tuple[str, str]] = set()
    for scenario_id in ("easy_1", "medium_2", "hard_1", "hard_2", "hard_3", "expert_2"):
        env = make("discrete")
        _, info = env.reset(options={"scenario_id": scenario_id})
        table = env.unwrapped.interface.table
        problem = env.unwrapped.episode.engine.problem
        hard = problem.task_name != "easy"
        for case, (s, d, t, r) in _cases(problem).items():
            index = table.index("assign_session", s, d, t, r)
            expected = case == "clean" or not hard
            assert info["action_mask"][index] == expected, (scenario_id, case)
            seen.add((problem.task_name if hard else "easy", case))
        # absent sessions and rooms, and days and slots beyond the grid, are masked
        b = table.bounds
        n_s, n_r = len(problem.sessions), len(problem.room_ids)
        assign = info["action_mask"][: table.place].reshape(b.sessions, b.days, b.slots, b.rooms)
        assert not assign[n_s:].any() and not assign[..., n_r:].any()
        assert not assign[:, :, problem.per_day :].any()
        assert not info["action_mask"][table.unassign_offset + n_s : table.submit_index].any()
        # place a session at a clean spot: its assigns go, its move onto itself is masked,
        # a move elsewhere that passes the tests is allowed, unassign is allowed
        s, d, t, r = _cases(problem)["clean"]
        _, reward, _, _, info = env.step(table.index("assign_session", s, d, t, r))
        mask = info["action_mask"]
        assert reward > 0 and not assign_row(mask, table, s).any()
        assert mask[table.index("move_session", s, d, t, r)] == 0
        assert mask[table.unassign_offset + s] == 1 and mask[table.swap_index(s, s)] == 0
        others = np.flatnonzero(move_row(mask, table, s))
        assert len(others) > 0
        engine = env.unwrapped.episode.engine
        for kind, outcome in (("assign_session", "invalid"), ("move_session", "noop")):
            before = engine.timetable.as_dict()
            _, reward, _, _, info = env.step(table.index(kind, s, d, t, r))
            assert info["outcome"] == outcome and reward < 0
            assert engine.timetable.as_dict() == before
    # every hard case was met in a scenario where it counts, and in easy where it does not
    for level, case in (
        ("medium", "wrong room type"),
        ("medium", "room too small"),
        ("hard", "teacher unavailable"),
        ("hard", "room unavailable"),
        ("expert", "teacher unavailable"),
        ("easy", "wrong room type"),
        ("easy", "room too small"),
    ):
        assert (level, case) in seen, (level, case)


def assign_row(mask: np.ndarray, table: ActionTable, session: int) -> np.ndarray:
    cells = table.place // table.bounds.sessions
    return mask[session * cells : (session + 1) * cells]


def move_row(mask: np.ndarray, table: ActionTable, session: int) -> np.ndarray:
    cells = table.place // table.bounds.sessions
    start = table.move_offset + session * cells
    return mask[start : start + cells]


def test_both_gymnasium_checkers_are_silent_in_both_modes():
    """gym.make's passive checker over reset and steps, and check_env (render included),
    emit no warning in either mode."""
    for mode in ("discrete", "text"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            # "always" would undo meeting_gym's silencing of Gymnasium's note that a -v0 id
            # has a -v1: not a checker warning, so it stays silenced here
            warnings.filterwarnings("ignore", r".*is out of date", DeprecationWarning)
            for render_mode in ("ansi", "rgb_array"):
                env = gym.make(ENV, mode=mode, render_mode=render_mode)  # passive checker on
                _, info = env.reset(seed=3)
                for k in range(4):
                    action = (
                        int(np.flatnonzero(info["action_mask"])[k])
                        if mode == "discrete"
                        else json.dumps({"action_type": "unassign_session", "session_id": "x"})
                    )
                    _, _, _, _, info = env.step(action)
                env.render()
                check_env(env.unwrapped)
        assert [str(w.message) for w in caught] == [], mode


def test_action_counts_per_difficulty():
    table = ActionTable(DEFAULT_BOUNDS)
    assert table.n == 12651 == env_action_count()
    counts = {}
    for level in SIZES:
        problem = problem_of(generate(random.Random(1), level))
        counts[level] = sum(table.counts(problem).values())
    assert counts["easy"] < counts["medium"] < counts["hard"] < counts["expert"] <= table.n


def env_action_count() -> int:
    return make("discrete").action_space.n


def test_the_sizes_script_reports_what_the_env_offers_per_difficulty():
    """The sizes table the docs cite: its counts are the action table's and the mask's, and
    the largest expert text observation stays small."""
    rows = {row["difficulty"]: row for row in sizes.measure(seeds=2)}
    assert list(rows) == list(SIZES)
    table = ActionTable(DEFAULT_BOUNDS)
    env = make("discrete")
    for level, row in rows.items():
        found = sizes.scenarios(level, 2)
        assert (
            row["scenarios"]
            == len(found)
            == 2 + sum(get_scenario(i).task_name == level for i in CATALOGUE_IDS)
        )
        counts = [sum(table.counts(problem_of(s)).values()) for s in found]
        legal = [int(env.reset(options={"scenario": s})[1]["action_mask"].sum()) for s in found]
        assert row["n"] == table.n == 12651
        assert row["actions"] == (min(counts), max(counts)) and max(counts) <= table.n
        assert row["legal_at_reset"] == (min(legal), max(legal))
        # at reset: every assign that passes the hard tests, plus submit
        assert row["legal_at_reset"][1] < row["actions"][1]
    expert = rows["expert"]
    assert expert["largest_text"] == "gen_expert_4001"  # the largest of the 23 (25 sessions)
    assert expert["chars"] < 8000 and expert["pieces"] < 3000, expert
    assert sizes.main(["--seeds", "0"]) == 0


def test_token_estimates_count_pieces_as_a_tokenizer_splits_them():
    assert sizes.token_estimates('{"id":"FT12","available":[0,1,2]}') == {
        "chars": 33,
        "chars_over_4": 8,
        # {"  id  ":"  FT  12  ","  available  ":[  0  ,  1  ,  2  ]}
        "pieces": 14,
    }
    assert sizes.token_estimates("12345 abc")["pieces"] == 3  # 123 | 45 | " abc"


# ----------------------------------------------------------------------------- observations


def test_observation_is_fresh_and_matches_the_timetable():
    env = make("discrete")
    observation, info = env.reset(options={"scenario_id": "expert_2"})
    base = env.unwrapped
    bounds = base.bounds
    rng = random.Random(3)
    for _ in range(30):
        legal = np.flatnonzero(info["action_mask"])
        action = int(rng.choice(legal[:-1]))
        previous = observation
        observation, _, _, _, info = env.step(action)
        assert base.observation_space.contains(observation)
        assert all(observation[k] is not previous[k] for k in observation)
        assert all(not np.shares_memory(observation[k], previous[k]) for k in observation)
        engine = base.episode.engine
        p = engine.problem
        teacher = np.zeros((bounds.teachers, bounds.days, bounds.slots), np.float32)
        group = np.zeros((bounds.groups, bounds.days, bounds.slots), np.float32)
        room = np.zeros((bounds.rooms, bounds.days, bounds.slots), np.float32)
        spot = np.zeros((bounds.sessions, 1 + bounds.days + bounds.slots + bounds.rooms), np.int8)
        for s, (d, t, r) in engine.timetable.items():
            teacher[p.session_teacher[s], d, t : t + p.session_length[s]] += 1
            group[p.session_group[s], d, t : t + p.session_length[s]] += 1
            room[r, d, t : t + p.session_length[s]] += 1
            spot[s, [0, 1 + d, 1 + bounds.days + t, 1 + bounds.days + bounds.slots + r]] = 1
        assert np.array_equal(observation["teacher_load"], teacher.reshape(-1))
        assert np.array_equal(observation["group_load"], group.reshape(-1))
        assert np.array_equal(observation["room_load"], room.reshape(-1))
        assert np.array_equal(observation["session_spot"], spot.reshape(-1))
        assert observation["scores"][0] == pytest.approx(info["score"], abs=1e-6)


@pytest.mark.parametrize("scenario_id", CATALOGUE_IDS)
def test_the_first_observation_rebuilds_a_problem_that_scores_as_the_env(scenario_id):
    scenario = get_scenario(scenario_id)
    problem = problem_of(scenario)
    rebuilt = Problem(scenario_from_view(reset_text(TimetableEpisode(problem))))
    rng = random.Random(scenario_id)
    table = Timetable(problem)
    copy = Timetable(rebuilt)
    for _ in range(60):
        action = random_action(rng, problem, table)
        episode_action = TimetableEpisode(problem)  # only for parsing
        parsed = episode_action.parse(action)
        if not isinstance(parsed, Action) or parsed.action_type != "assign_session":
            continue
        s = problem.session_index.get(parsed.session_id)
        room = problem.room_index.get(parsed.room_id)
        if s is None or room is None or s in table:
            continue
        if not (0 <= parsed.day < problem.n_days) or not (
            0 <= parsed.start_slot <= problem.per_day - problem.session_length[s]
        ):
            continue
        table.place(s, (parsed.day, parsed.start_slot, room))
        copy.place(
            rebuilt.session_index[parsed.session_id],
            (parsed.day, parsed.start_slot, rebuilt.room_index[parsed.room_id]),
        )
        assert copy.scores() == table.scores()


def test_the_text_observation_stays_small_on_the_largest_scenarios():
    sizes = {}
    for scenario in (get_scenario("expert_2"), get_scenario("gen_expert_4001")):
        env = make("text")
        observation, _ = env.reset(options={"scenario": scenario})
        sizes[scenario.scenario_id] = len(observation)
    assert max(sizes.values()) < 8000, sizes  # about 2,000 tokens


# ----------------------------------------------------------------------------- resets


def test_reset_options_choose_scenarios_and_refuse_unknown_ones():
    env = make("text")
    assert env.reset(options={"scenario_id": "hard_4"})[1]["scenario_id"] == "hard_4"
    assert env.reset(options={"scenario_id": " hard_4 "})[1]["scenario_id"] == "hard_4"
    assert env.reset(options={"task_name": " Medium "})[1]["scenario_id"] == "medium_1"
    both = {"scenario_id": "easy_2", "task_name": "hard"}
    assert env.reset(options=both)[1]["scenario_id"] == "easy_2"  # the predecessor's rule
    _, info = env.reset(options={"difficulty": "expert"})
    assert info["difficulty"] == "expert" and info["scenario_id"].startswith("tt_expert_")
    _, info = env.reset(options={"split": "generated", "index": 3})
    assert info["scenario_id"] == "gen_medium_2002"
    scenario = get_scenario("easy_3").to_dict()
    assert env.reset(options={"scenario": scenario})[1]["scenario_id"] == "easy_3"
    for options, fragment in (
        ({"scenario_id": "HARD_4"}, "unknown scenario_id 'HARD_4'"),
        ({"scenario_id": 7}, "scenario_id must be a string"),
        ({"task_name": "legendary"}, "unknown task_name 'legendary'"),
        ({"scenario": {"scenario_id": "x"}}, "scenario"),
        ({"scenario": scenario, "scenario_id": "easy_1"}, "give reset option"),
        ({"split": "generated", "index": 8}, "out of range"),
    ):
        with pytest.raises(ValueError, match=fragment):
            env.reset(options=options)


def test_defect_D8_reset_seed_draws_the_scenario_never_one_of_the_23():
    """Old: reset(seed=...) was ignored; every reset took the next round-robin scenario
    (easy_1, easy_2, ...), whatever the seed. New: the seed draws a generated scenario of the
    default mix, the same one for the same seed in any env, never one of the 23."""
    env = make("discrete")
    seen = [env.reset(seed=s)[1]["scenario_id"] for s in range(30)]
    assert len(set(seen)) == 30 and not set(seen) & set(CATALOGUE_IDS)
    other = make("text")
    assert [other.reset(seed=s)[1]["scenario_id"] for s in (29, 0, 7)] == [
        seen[29],
        seen[0],
        seen[7],
    ]
    assert {make("discrete").reset(seed=4)[1]["difficulty"] for _ in range(2)} == {
        env.reset(seed=4)[1]["difficulty"]
    }


@pytest.mark.parametrize(
    "scenario_id, baseline_score",
    [
        ("hard_1", 0.950),
        ("hard_2", 0.952),
        ("hard_3", 0.949),
        ("hard_4", 0.917),
        ("expert_1", 0.909),
        ("expert_2", 0.899),
    ],
)
def test_start_baseline_places_the_disrupted_baseline(scenario_id, baseline_score):
    """RULES section 9's last column: the baseline's score after the disruption."""
    env = make("discrete", start="baseline")
    _, info = env.reset(options={"scenario_id": scenario_id})
    engine = env.unwrapped.episode.engine
    assert engine.score == pytest.approx(baseline_score, abs=5e-4)
    assert len(engine.timetable) == len(get_scenario(scenario_id).baseline_assignments)
    assert int(info["action_mask"][env.unwrapped.interface.table.unassign_offset :][:1].sum()) == 1
    assert (
        make("discrete").reset(options={"scenario_id": scenario_id})[0]["session_spot"].sum() == 0
    )


def test_a_scenario_beyond_the_bounds_is_refused_with_the_bound_to_raise():
    big = generate(random.Random(0), "expert", sizes=Sizes(7, 7, 8, 40, 6, 80))
    with pytest.raises(ValueError, match="max_sessions"):
        make("discrete").reset(options={"scenario": big})
    env = make("discrete", max_sessions=41)
    observation, info = env.reset(options={"scenario": big})
    assert env.observation_space.contains(observation) and info["action_mask"].any()
    make("text").reset(options={"scenario": big})  # text mode has no bounds


def test_after_the_end_step_raises_in_both_modes():
    """As every env of the family (core.text_env): after a submit (terminated) or the step
    that spends the last unit (truncated), step() raises until reset(). The predecessor's
    ``step_budget_exhausted`` replies, all recorded after its done, never happen."""
    for mode, submit, noop in (
        ("discrete", None, None),
        (
            "text",
            '{"action_type": "submit_timetable"}',
            '{"action_type": "unassign_session", "session_id": "E1_S1"}',
        ),
    ):
        env = make(mode)
        env.reset(options={"scenario_id": "easy_1"})
        table = env.unwrapped.interface.table if submit is None else None
        action = table.submit_index if table is not None else submit
        _, _, terminated, _, _ = env.step(action)
        assert terminated
        with pytest.raises(RuntimeError, match=r"episode is over .*call reset"):
            env.step(action)
        env.reset(options={"scenario_id": "easy_1"})
        unassign = table.unassign_offset if table is not None else noop  # a no-op: unplaced
        for left in range(19, -1, -1):
            _, reward, terminated, truncated, info = env.step(unassign)
            assert reward == NOOP_PENALTY and info["remaining_step_budget"] == left
            assert truncated == (left == 0) and not terminated
        for late in (unassign, action):
            with pytest.raises(RuntimeError, match=r"episode is over .*call reset"):
                env.step(late)
        assert env.reset(options={"scenario_id": "easy_1"})[1]["scenario_id"] == "easy_1"


def test_a_text_action_with_a_day_that_is_no_day_names_the_field_value_and_days():
    # it was told "missing required fields: day", though the day was there
    env = make("text")
    env.reset(options={"scenario_id": "easy_1"})
    action = {
        "action_type": "assign_session",
        "session_id": "E1_S1",
        "day": "Sun",
        "start_slot": 0,
        "room_id": "R1",
    }
    _, reward, terminated, _, info = env.step(json.dumps(action))
    assert info["action_error"] == (
        "day must be an integer (0-based, 0 to 4) or a day name (Mon, Tue, Wed, Thu, Fri), "
        "got 'Sun'"
    )
    assert (reward, terminated, info["outcome"]) == (INVALID_PENALTY, False, "invalid")
