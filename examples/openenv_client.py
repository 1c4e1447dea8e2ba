"""Play one curated episode of any registered env against a running ``meeting-gym serve``.

    meeting-gym serve --env MeetingSlot-v0 --port 8000 &
    python examples/openenv_client.py --url http://127.0.0.1:8000 --env MeetingSlot-v0

The env's reference policy (``Task.reference_policy``: ``gold``, or the CP-SAT ``solver``
for TimetablePlanner-v0, which needs ``pip install "meeting-gym[solver]"``) plays curated
item ``--index`` over the WebSocket (the blocking form of the async client); the reward
printed is the env's own, summed over the episode's steps. A mistake (a wrong env for the
server, an index past the end of the split) is one line on stderr and exit status 1.
Needs ``pip install "meeting-gym[serve]"``.
"""

import argparse
import json
import time
import urllib.request

import meeting_gym  # noqa: F401  (registers the env ids)
from meeting_gym.adapters.openenv import RemoteEnv, client
from meeting_gym.agents.policies import make_policy
from meeting_gym.core.loop import play as run
from meeting_gym.core.registry import ENVS, task_class

PROG = "openenv_client.py"


def fail(message: str) -> None:
    """A user's mistake: one line on stderr, exit status 1, no traceback."""
    raise SystemExit(f"{PROG}: error: {message}")


def wait_for(url: str, seconds: float) -> None:
    """Return once ``url`` answers ``/health`` (the server may still be starting)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=1):
                return
        except OSError:
            if time.monotonic() > deadline:
                fail(f"no server at {url} after {seconds:g} s")
            time.sleep(0.2)


def served_env(url: str) -> str | None:
    """The env id the server says it serves (its OpenEnv ``/metadata`` name), if it says."""
    try:
        with urllib.request.urlopen(f"{url}/metadata", timeout=5) as response:
            return json.load(response).get("name")
    except (OSError, ValueError, AttributeError):
        return None


def server_message(exc: Exception) -> str:
    """The server's own words, without the client's wrapping (``Server error: ... (code: X)``)."""
    text = str(exc).removeprefix("Server error: ")
    head, _, _ = text.rpartition(" (code: ")
    return head or text


def play(url: str, env_id: str, index: int) -> str:
    """One curated episode of ``env_id`` by its reference policy; a one-line summary.

    The served env plays through the package's one episode loop (``core.loop.play``), as a
    local env does, behind ``RemoteEnv``.
    """
    try:
        policy = make_policy(task_class(env_id).reference_policy, env=env_id)
    except (ImportError, ValueError) as exc:  # e.g. the solver policy without ortools
        fail(str(exc))
    with client(env_id, url).sync() as remote:
        try:
            rollout = run(RemoteEnv(remote), policy, options={"split": "curated", "index": index})
        except RuntimeError as exc:  # the server refused, e.g. an index out of range
            fail(server_message(exc))
    info = rollout.info
    parts = [f"answer {info['answer']}", f"gold {info['gold']}"] if "gold" in info else []
    # the episode's reward: every step's, summed
    parts.append(f"reward {rollout.total_reward:.3f} after {rollout.turns} turns")
    return f"{env_id} curated item {index}: " + ", ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--env", default="MeetingSlot-v0", choices=list(ENVS), metavar="ID")
    parser.add_argument("--index", type=int, default=0, help="curated item to play (from 0)")
    parser.add_argument("--wait", type=float, default=30.0, help="seconds to wait for the server")
    args = parser.parse_args()
    url = args.url.rstrip("/")
    wait_for(url, args.wait)
    served = served_env(url)
    if served is not None and served != args.env:
        fail(f"the server at {url} serves {served}, not {args.env}: pass --env {served}")
    print(play(url, args.env, args.index))


if __name__ == "__main__":
    main()
