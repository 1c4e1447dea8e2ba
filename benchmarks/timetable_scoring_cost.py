"""Measure what a TimetablePlanner step costs as the timetable grows: incremental vs from scratch.

For scenarios of 1x, 4x, 16x and 64x the expert size (teachers, groups, rooms and
sessions all scaled), fill the timetable to its baseline, then time random actions
(moves and swaps) two ways: the incremental path the episode uses (apply the action,
read the scores) and re-scoring every placement from scratch after each step with
``reference_scores`` (the literal transcription of RULES section 5 the tests use as the
oracle; it is not tuned, so the ratio overstates what a tuned from-scratch scorer would
lose, but any from-scratch scorer is at least linear in the placements). Prints
microseconds per step and the ratio.

    python benchmarks/timetable_scoring_cost.py [--steps 2000] [--scales 1 4 16 64]
"""

from __future__ import annotations

import argparse
import random
import time

from meeting_gym.bench.timetable_planner import random_moves, scaled_scenario
from meeting_gym.envs.timetable_planner.domain.episode import TimetableEpisode
from meeting_gym.envs.timetable_planner.domain.scoring import reference_scores


def _actions(episode: TimetableEpisode, rng: random.Random, n: int) -> list[dict]:
    """The bench's random moves and swaps on the placed sessions, as JSON action objects."""
    p = episode.problem
    placed = [p.session_ids[s] for s, _ in episode.timetable.items()]
    return [action.to_dict() for action in random_moves(p, placed, n, rng)]


def measure(scale: int, steps: int, seed: int = 0) -> tuple[int, int, float, float]:
    scenario = scaled_scenario(scale, budget=10 * steps + 10, rng=random.Random(seed))
    rng = random.Random(seed)

    episode = TimetableEpisode(scenario, start="baseline")
    actions = _actions(episode, rng, steps)
    placed = len(episode.timetable)
    began = time.perf_counter()
    for action in actions:
        episode.step(action)
    incremental = (time.perf_counter() - began) / steps

    slow = TimetableEpisode(scenario, start="baseline")
    few = actions[: max(20, steps // (4 * scale))]
    began = time.perf_counter()
    for action in few:
        slow.step(action)
        reference_scores(slow.problem, slow.timetable.placements())
    from_scratch = (time.perf_counter() - began) / len(few)
    return len(scenario.sessions), placed, incremental, from_scratch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 4, 16, 64])
    args = parser.parse_args()
    header = ("scale", "sessions", "placed", "step us", "rescore us", "ratio")
    print("{:>5} {:>8} {:>6} {:>9} {:>11} {:>7}".format(*header))
    for scale in args.scales:
        sessions, placed, fast, slow = measure(scale, args.steps)
        print(
            f"{scale:>5} {sessions:>8} {placed:>6} {fast * 1e6:>9.1f} {slow * 1e6:>11.1f} "
            f"{slow / fast:>7.1f}"
        )


if __name__ == "__main__":
    main()
