"""CalendarMath's rows of ``meeting-gym bench``: the generic text-env rows with its targets.

Targets: single-turn episodes (reset + step) at least 25% of CartPole's steps per
second; generating 10,000 questions with gold within the time of 50,000 CartPole steps,
i.e. at least 20% of CartPole's steps per second in items per second.
"""

from __future__ import annotations

from meeting_gym.bench import Budget, Measure, default_plan

EPISODE_TARGET = 0.25
GENERATE_TARGET = 10_000 / 50_000


def plan(env_id: str, budget: Budget) -> list[Measure]:
    return default_plan(
        env_id,
        budget,
        episode_target=EPISODE_TARGET,
        generate_target=GENERATE_TARGET,
        generate_note=">= 20% (10,000 in 50,000 CartPole steps)",
    )
