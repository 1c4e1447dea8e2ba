"""TimetablePlanner's 23-scenario table: empty, random, greedy, solver (and PPO), both starts.

Step 1 (``--solve``): solve each of the 23 catalogue scenarios with CP-SAT (one worker,
``--time-limit`` deterministic units each), replay the timetable through the env's scorer,
and write ``meeting_gym/envs/timetable_planner/data/solver_best.json`` (the documented
results the ``solver`` policy replays and the registry tests check). Step 2 (always):
play every policy on every scenario through ``meeting-gym``'s evaluation runner, in
discrete mode, from the empty start and (hard and expert) from the disrupted baseline,
and print the table as Markdown (``--json`` writes the numbers too). ``--ppo PATH`` adds
a saved MaskablePPO model's column.

    python -m meeting_gym.bench.timetable_table --solve --time-limit 60   # a few minutes per
                                                                # unproved scenario
    python -m meeting_gym.bench.timetable_table --solve --only gen_expert_4002   # re-solve some
    python -m meeting_gym.bench.timetable_table --ppo runs/timetable_ppo/model.zip
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from statistics import fmean
from typing import Any

import meeting_gym  # noqa: F401  (registers the env ids)
from meeting_gym.agents.policies import make_policy
from meeting_gym.envs.timetable_planner.domain import best, catalogue
from meeting_gym.envs.timetable_planner.domain.problem import problem_of
from meeting_gym.envs.timetable_planner.domain.scoring import reference_scores
from meeting_gym.envs.timetable_planner.task import content_key
from meeting_gym.envs.timetable_planner.view import reset_text, scenario_from_view
from meeting_gym.evaluation.evaluate import evaluate

ENV = "TimetablePlanner-v0"
DATA = Path(str(catalogue.data_file(best.DATA)))


def solve_all(time_limit: float, only: list[str] | None = None) -> None:
    """Solve the 23 and write the data; ``only``: re-solve these ids, keep the other rows."""
    from meeting_gym.envs.timetable_planner.domain.episode import TimetableEpisode
    from meeting_gym.envs.timetable_planner.domain.solver import solve

    kept = {}
    if only:
        previous = json.loads(DATA.read_text(encoding="utf-8"))
        if previous["time_limit"] != time_limit:
            raise SystemExit(f"--only needs the data's --time-limit {previous['time_limit']:g}")
        kept = {row["scenario_id"]: row for row in previous["scenarios"]}
        unknown = sorted(set(only) - set(kept))
        if unknown:
            raise SystemExit(f"unknown scenario ids: {', '.join(unknown)}")
    rows = []
    for scenario in (*catalogue.handcrafted(), *catalogue.generated()):
        if only and scenario.scenario_id not in only:
            rows.append(kept[scenario.scenario_id])
            continue
        problem = problem_of(scenario)
        result = solve(problem, time_limit=time_limit)
        placements = [problem.placement(s, spot) for s, spot in sorted(result.timetable.items())]
        check = reference_scores(problem, placements)[1].overall_score
        assert abs(check - result.score) < 1e-9, (scenario.scenario_id, check, result.score)
        view = reset_text(TimetableEpisode(problem))
        rows.append(
            {
                "scenario_id": scenario.scenario_id,
                "key": content_key(scenario),
                "view_key": content_key(scenario_from_view(view)),
                "score": result.score,
                "optimal": result.optimal,
                "bound": round(result.bound, 6),
                "status": result.status,
                "deterministic_time": round(result.deterministic_time, 2),
                "wall_seconds": round(result.wall_seconds, 1),
                "timetable": [[a.session_id, a.day, a.start_slot, a.room_id] for a in placements],
            }
        )
        print(
            f"{scenario.scenario_id:<16} score {result.score:.4f}  bound {result.bound:.4f}  "
            f"{result.status:<8} det {result.deterministic_time:6.1f}  "
            f"wall {result.wall_seconds:6.1f}s",
            flush=True,
        )
    payload = {
        "about": (
            "CP-SAT results on the 23 catalogue scenarios "
            "(python -m meeting_gym.bench.timetable_table "
            f"--solve --time-limit {time_limit:g}): one worker, deterministic time limit; "
            "score is the env's overall_score of the timetable"
        ),
        "time_limit": time_limit,
        "scenarios": rows,
    }
    DATA.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    best.known_best.cache_clear()
    best._by_any_key.cache_clear()


def play(policy: Any, items: list[Any], start: str, seeds: int = 1) -> list[Any]:
    make = policy if callable(policy) else (lambda: make_policy(policy, seed=0, env=ENV))
    return evaluate(
        make,
        items,
        env=ENV,
        mode="discrete",
        rollouts=seeds,
        env_kwargs={"start": start},
        show_progress=False,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--solve", action="store_true", help="solve the 23 and write the data")
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument(
        "--only", nargs="+", default=None, metavar="ID", help="with --solve: re-solve these only"
    )
    parser.add_argument("--random-seeds", type=int, default=5, help="random episodes each")
    parser.add_argument("--ppo", default=None, help="a saved MaskablePPO model to add")
    parser.add_argument("--json", default=None, help="also write the numbers here")
    args = parser.parse_args()
    if args.solve:
        solve_all(args.time_limit, args.only)
    items = [*catalogue.handcrafted(), *catalogue.generated()]
    documented = best.known_best()
    columns: dict[str, Any] = {
        "empty": "empty",
        "random": "random",
        "greedy": "greedy",
        "solver": "solver",
    }
    if args.ppo:
        from meeting_gym.agents.ppo import load_ppo

        agent = load_ppo(args.ppo)
        columns["ppo"] = lambda: agent
    table: dict[str, dict[str, dict[str, float]]] = {}
    started = time.perf_counter()
    for start in ("initial", "baseline"):
        chosen = (
            items if start == "initial" else [s for s in items if s.task_name in ("hard", "expert")]
        )
        for name, policy in columns.items():
            seeds = args.random_seeds if name == "random" else 1
            results = play(policy, chosen, start, seeds)
            for scenario in chosen:
                mine = [r for r in results if r.item_id == scenario.scenario_id]
                cell = table.setdefault(start, {}).setdefault(scenario.scenario_id, {})
                cell[name] = fmean(r.score for r in mine)
                cell[f"{name}_reward"] = fmean(r.reward for r in mine)
    lines = [
        "| scenario | empty | random | greedy | solver | proved optimal |"
        + (" PPO |" if args.ppo else "")
        + " from baseline: empty / random / greedy / solver |",
        "| --- | ---: | ---: | ---: | ---: | --- |" + (" ---: |" if args.ppo else "") + " --- |",
    ]
    for scenario in items:
        sid = scenario.scenario_id
        cell = table["initial"][sid]
        proved = documented[content_key(scenario)]["optimal"]
        row = (
            f"| {sid} | {cell['empty']:.3f} | {cell['random']:.3f} | {cell['greedy']:.3f} | "
            f"{cell['solver']:.3f} | {'yes' if proved else 'no'} |"
        )
        if args.ppo:
            row += f" {cell['ppo']:.3f} |"
        base = table["baseline"].get(sid)
        if base is None:
            row += " - |"
        else:
            row += (
                f" {base['empty']:.3f} / {base['random']:.3f} / {base['greedy']:.3f} / "
                f"{base['solver']:.3f} |"
            )
        lines.append(row)
    means = {name: fmean(table["initial"][s.scenario_id][name] for s in items) for name in columns}
    lines.append(
        "| **mean of 23** | "
        + " | ".join(f"**{means[n]:.3f}**" for n in ("empty", "random", "greedy", "solver"))
        + f" | {sum(documented[content_key(s)]['optimal'] for s in items)} of 23 |"
        + (f" **{means['ppo']:.3f}** |" if args.ppo else "")
        + " |"
    )
    print("\n".join(lines))
    print(f"\n(evaluated in {time.perf_counter() - started:.0f} s)")
    if args.json:
        Path(args.json).write_text(json.dumps(table, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
