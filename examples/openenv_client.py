"""Play one episode against a running ``meeting-gym serve`` with the OpenEnv client.

    meeting-gym serve --env MeetingSlot-v0 --port 8000 &
    python examples/openenv_client.py --url http://127.0.0.1:8000

The gold policy plays a curated item over the WebSocket (the blocking form of the async
client); the reward printed is the env's own. Needs ``pip install "meeting-gym[serve]"``.
"""

import argparse
import time
import urllib.request

import meeting_gym  # noqa: F401  (registers the env ids)
from meeting_gym.adapters.openenv import client
from meeting_gym.agents.policies import make_policy

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--url", default="http://127.0.0.1:8000")
parser.add_argument("--env", default="MeetingSlot-v0")
parser.add_argument("--index", type=int, default=0, help="curated item to play")
parser.add_argument("--wait", type=float, default=30.0, help="seconds to wait for the server")
args = parser.parse_args()

deadline = time.monotonic() + args.wait
while True:  # the server may still be starting
    try:
        with urllib.request.urlopen(f"{args.url}/health", timeout=1):
            break
    except OSError:
        if time.monotonic() > deadline:
            raise SystemExit(f"no server at {args.url}") from None
        time.sleep(0.2)

with client(args.env, args.url).sync() as env:
    result = env.reset(split="curated", index=args.index)
    policy = make_policy("gold", env=args.env)
    policy.reset(result.observation.text, result.observation.info)
    turns = 0
    while not result.done:
        result = env.step({"text": policy.act(result.observation.text)})
        turns += 1
    info = result.observation.info
    print(
        f"{args.env} curated item {args.index}: answer {info['answer']}, gold {info['gold']}, "
        f"reward {result.reward:.3f} after {turns} turns"
    )
