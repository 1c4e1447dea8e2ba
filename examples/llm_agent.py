"""The shortest LLM agent loop for MeetingSlot-v0: copy it and make it yours.

Any OpenAI-compatible server works (vLLM, Ollama, llama.cpp server, hosted APIs)::

    python examples/llm_agent.py --model Qwen/Qwen2.5-7B-Instruct  # vLLM on :8000
    python examples/llm_agent.py --base-url http://localhost:11434/v1 --model qwen2.5:7b

The API key is read from OPENAI_API_KEY (local servers accept any key). Needs
``pip install "meeting-gym[llm]"``. For evaluation at scale (retries, concurrency,
JSONL output) use ``meeting-gym eval --policy openai`` instead.
"""

import argparse
import os

import gymnasium as gym
from openai import OpenAI

import meeting_gym  # noqa: F401  (registers MeetingSlot-v0)
from meeting_gym.agentkit import assistant_turn, initial_messages, observation_messages
from meeting_gym.envs.meeting_slot.domain.curated import CURATED_BY_ID

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--base-url", default="http://localhost:8000/v1")
parser.add_argument("--model", required=True)
parser.add_argument(
    "--scenario",
    default="dst_eu_monday",
    choices=sorted(CURATED_BY_ID),
    metavar="ID",
    help="a curated scenario id (default dst_eu_monday)",
)
parser.add_argument("--text-protocol", action="store_true", help="no native tool calling")
args = parser.parse_args()

client = OpenAI(base_url=args.base_url, api_key=os.environ.get("OPENAI_API_KEY", "EMPTY"))
env = gym.make("MeetingSlot-v0", mode="text", max_turns=20)
protocol = "text" if args.text_protocol else "native"

observation, info = env.reset(options={"scenario_id": args.scenario})
messages = initial_messages(observation, info)  # system prompt + question
tools = None if args.text_protocol else info["tools"]
done = False
while not done:
    request = {"model": args.model, "messages": messages, "temperature": 0.0}
    if tools:
        request["tools"] = tools
    reply = client.chat.completions.create(**request).choices[0].message
    turn = assistant_turn(reply, protocol)  # tool_calls -> one env action
    messages.append(turn.message)
    print(f"> {turn.action[:120]}")
    observation, reward, terminated, truncated, info = env.step(turn.action)
    done = terminated or truncated
    if not done:  # one tool message per tool_call_id (or a user message)
        messages.extend(observation_messages(observation, turn))
        print(f"< {observation[:120]}")

print(f"answer {info['answer']}  gold {info['gold']}  reward {reward:.3f}")
