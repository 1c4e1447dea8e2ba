"""Measure RLlib's sampling throughput on MeetingSlot-v0 with 0, 1, 2... env runners.

    python benchmarks/rllib_scaling.py --runners 0 1 2

For each runner count: the time to build PPO (Ray actors included), env steps per second
of sampling alone (every runner sampling at once: ``--sample-steps`` in all), and of
whole ``train()`` iterations (sampling, then the update on the one local learner; "not
sampling" is a ``train()``'s time less its batch at the sampling-alone rate), with
the pointer module and the example's settings (8 envs per runner, 1,024 steps per
update). Then where one sampled step's time goes with 0 runners, from RLlib's own timers
during the last ``train()``: the envs' ``step()`` (resets and the adapter's observation
included; the adapter alone is measured here too), the module's forward pass per step
(batches of 8), the connector pipelines, and ``sample()``'s bookkeeping (the rest).
Prints a markdown table; ``--json`` writes the numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any

import numpy as np


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--env", default="MeetingSlot-v0")
    p.add_argument("--runners", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--sample-steps", type=int, default=8192, help="steps per sampling round")
    p.add_argument("--rounds", type=int, default=3, help="sampling rounds (median)")
    p.add_argument("--iterations", type=int, default=4, help="train() calls timed")
    p.add_argument("--envs-per-runner", type=int, default=8)
    p.add_argument("--json", default=None, help="write the numbers here")
    return p.parse_args()


def sample_rate(algo: Any, runners: int, steps: int) -> float:
    """Env steps per second with every runner sampling its share at once."""
    began = time.perf_counter()
    if runners == 0:
        episodes = algo.env_runner.sample(num_timesteps=steps, explore=True)
        done = sum(len(e) for e in episodes)
    else:
        share = steps // runners
        lengths = algo.env_runner_group.foreach_env_runner(
            lambda runner: sum(len(e) for e in runner.sample(num_timesteps=share, explore=True)),
            local_env_runner=False,
        )
        done = sum(lengths)
    return done / (time.perf_counter() - began)


def adapter_us(env_id: str, steps: int = 2000) -> float:
    """Microseconds of the adapter's observation (mask + flattening) per step, alone."""
    import gymnasium as gym

    from meeting_gym.adapters.rllib import to_rllib

    env = gym.make(env_id, disable_env_checker=True)
    observation, info = env.reset(seed=0)
    began = time.perf_counter()
    for _ in range(steps):
        to_rllib(env.observation_space, observation, info["action_mask"])
    return 1e6 * (time.perf_counter() - began) / steps


def breakdown(result: dict[str, Any], envs: int, rate: float) -> dict[str, float]:
    """Microseconds per env step in one local runner's sampling at ``rate`` steps/s.

    RLlib times each vectorised step (``envs`` envs at once; its means over the last
    ``train()``): the envs' ``step()`` (the adapter's observation included), the module's
    forward pass, and the two connector pipelines around it; the rest of the measured
    time per step is ``sample()``'s own episode bookkeeping.
    """
    runners = result["env_runners"]
    total = 1.0 / rate
    env = runners["env_step_timer"] / envs
    forward = runners["rlmodule_inference_timer"] / envs
    connectors = (
        runners["env_to_module_connector"]["connector_pipeline_timer"]
        + runners["module_to_env_connector"]["connector_pipeline_timer"]
    ) / envs
    rest = total - env - forward - connectors
    return {
        "total_us": 1e6 * total,
        "env_us": 1e6 * env,
        "forward_us": 1e6 * forward,
        "connectors_us": 1e6 * connectors,
        "rest_us": 1e6 * rest,
    }


def main() -> int:
    args = parse_args()
    import ray
    import torch

    import meeting_gym.adapters.rllib as adapter
    from meeting_gym.envs.meeting_slot.models.rllib_module import pointer_spec

    torch.set_num_threads(1)
    rows = []
    parts: dict[str, float] = {}
    for runners in args.runners:
        ray.init(num_cpus=runners + 1, include_dashboard=False, log_to_driver=False)
        began = time.perf_counter()
        algo = adapter.ppo_config(
            args.env,
            pointer_spec(args.env),
            num_env_runners=runners,
            envs_per_env_runner=args.envs_per_runner,
        ).build_algo()
        build = time.perf_counter() - began
        algo.train()  # warm-up
        rates = [sample_rate(algo, runners, args.sample_steps) for _ in range(args.rounds)]
        first = algo.train()["env_runners"]["num_env_steps_sampled_lifetime"]
        began = time.perf_counter()
        for _ in range(args.iterations):
            out = algo.train()
        seconds = time.perf_counter() - began
        steps = out["env_runners"]["num_env_steps_sampled_lifetime"] - first
        train_rate = steps / seconds
        sample_rate_median = float(np.median(rates))
        if runners == 0:
            parts = breakdown(out, args.envs_per_runner, sample_rate_median)
        algo.stop()
        ray.shutdown()
        rows.append(
            {
                "runners": runners,
                "build_s": build,
                "sample_steps_per_s": sample_rate_median,
                "train_steps_per_s": train_rate,
                "train_s": seconds / args.iterations,
                # what is left of a train() once its batch is sampled at the measured rate
                "rest_s": seconds / args.iterations - steps / args.iterations / sample_rate_median,
            }
        )
        print(rows[-1], flush=True)
    if parts:
        parts["adapter_us"] = adapter_us(args.env)
    load = os.getloadavg()
    print()
    print(
        "| env runners | PPO build (s) | sampling alone (env steps/s) | train() (env steps/s) |"
        " s per train() | of which not sampling (s) |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for row in rows:
        print(
            f"| {row['runners']} | {row['build_s']:.1f} | {row['sample_steps_per_s']:,.0f} | "
            f"{row['train_steps_per_s']:,.0f} | {row['train_s']:.2f} | {row['rest_s']:.2f} |"
        )
    if parts:
        print()
        print(
            f"one sampled env step in a local runner (0 runners; RLlib's timers): "
            f"{parts['total_us']:.0f} us = envs' step() {parts['env_us']:.0f} us (of which the "
            f"adapter's observation {parts['adapter_us']:.0f} us) + module forward "
            f"{parts['forward_us']:.0f} us (batches of {args.envs_per_runner}) + connectors "
            f"{parts['connectors_us']:.0f} us + episode bookkeeping {parts['rest_us']:.0f} us"
        )
    print(f"load average while measuring (1, 5, 15 min): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"rows": rows, "breakdown_us": parts, "load": load}, handle, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
