"""Save one rgb_array frame of MeetingSlot-v0 as a PNG (the picture in the README).

Plays the gold policy on a curated scenario, part-way or to the end, and saves the
last frame::

    python examples/render_frame.py --out docs/meeting_slot_frame.png
    python examples/render_frame.py --scenario weekend_skip_dst --turns 2 --mode discrete

Needs ``pip install "meeting-gym[render]"`` (Pillow).
"""

import argparse

import gymnasium as gym
from PIL import Image

import meeting_gym  # noqa: F401  (registers MeetingSlot-v0)
from meeting_gym.envs.meeting_slot.agents import TextPolicyAdapter
from meeting_gym.envs.meeting_slot.domain.curated import CURATED_BY_ID
from meeting_gym.envs.meeting_slot.policies import GoldPolicy

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--out", default="meeting_slot_frame.png", help="PNG file to write")
parser.add_argument("--scenario", default="dst_eu_monday", choices=sorted(CURATED_BY_ID))
parser.add_argument("--mode", default="text", choices=["text", "discrete"])
parser.add_argument(
    "--turns", type=int, default=None, help="stop after this many turns (default: play to the end)"
)
args = parser.parse_args()

env = gym.make("MeetingSlot-v0", mode=args.mode, render_mode="rgb_array")
observation, info = env.reset(options={"scenario_id": args.scenario})
if args.mode == "text":
    policy = GoldPolicy()
    policy.reset(observation, info)
else:  # the same gold policy, one discrete action (one tool call) per turn
    adapter = TextPolicyAdapter(GoldPolicy())
    adapter.reset(observation, info, env=env, seed=None)
done, turns = False, 0
while not done and (args.turns is None or turns < args.turns):
    action = policy.act(observation) if args.mode == "text" else adapter.act(observation, info)
    observation, reward, terminated, truncated, info = env.step(action)
    done, turns = terminated or truncated, turns + 1
Image.fromarray(env.render()).save(args.out)
print(f"wrote {args.out} after {turns} turns ({'episode over' if done else 'in progress'})")
env.close()
