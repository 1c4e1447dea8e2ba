"""``vf-eval`` (verifiers 0.4) end to end, offline, as docs/guides/training-llms.md prints it.

In ``.venv-verifiers``.

The guide's ``verifiers`` block is run as printed: its lines before ``# offline from here``
(pip installs uv and downloads the null harness's chat program wheels from PyPI) normally,
the rest in a network namespace with loopback only (:mod:`loopback`), with a fresh
``HOME`` so no cache from an earlier run helps. The scripted server plays gold on every
curated item of both envs: every trace must score the maximum, term by term. A second
run with a model below the maximum (``answer-now``) must score each item exactly as
``env.step`` scores the same reply.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import gymnasium as gym
import pytest

from meeting_gym.adapters.verifiers import verifiers_version

if (verifiers_version() or (0,)) < (0, 4):
    pytest.skip("needs verifiers 0.4 (the .venv-verifiers venv)", allow_module_level=True)

from loopback import ROOT, link_checkout, run_bash
from readme_blocks import BLOCKS, normalise, run_block

import meeting_gym  # noqa: F401

OFFLINE_MARK = "# offline from here"
(VF_BLOCK,) = [block for block in BLOCKS if block.tag == "verifiers"]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """A scratch checkout where the README block's online lines have run (uv, the wheels)."""
    path = link_checkout(tmp_path_factory.mktemp("vf-eval"))
    online, _, _ = VF_BLOCK.body.partition(OFFLINE_MARK)
    run_bash(online, path, offline=False)
    return path


def traces(outputs: Path) -> dict[str, list[dict]]:
    """Every trace vf-eval saved under ``outputs``, by env id."""
    found: dict[str, list[dict]] = {}
    for path in sorted(outputs.glob("*/traces.jsonl")):
        for line in path.read_text().splitlines():
            for trace in json.loads(line)["traces"]:
                found.setdefault(trace["task"]["data"]["env"], []).append(trace)
    return found


def test_the_readme_lists_the_chat_programs_dependencies():
    """The wheels the README downloads are the ones verifiers' chat program declares."""
    from verifiers.v1.harnesses.utils.launch import CHAT_PROGRAM

    declared = json.loads(re.search(r"# dependencies = (\[.*\])", CHAT_PROGRAM).group(1))
    line = next(line for line in VF_BLOCK.body.splitlines() if "pip download" in line)
    listed = [word.strip('"') for word in line.split("chat-wheels", 1)[1].split()]
    assert listed == declared


def test_the_set_up_lines_are_what_ci_runs():
    (block,) = [b for b in BLOCKS if b.tag == "verifiers-ci"]
    ci = normalise((ROOT / ".ci" / "run").read_text())
    for line in block.body.splitlines():
        for command in line.split("&&"):
            assert normalise(command) in ci, command


def test_the_readme_vf_eval_scores_the_gold_model_at_the_maximum_offline(workdir):
    _, _, offline = VF_BLOCK.body.partition(OFFLINE_MARK)
    done = run_bash(offline, workdir, offline=True)
    if not done.namespaced:
        warnings.warn("no network namespace here: loopback by address only", stacklevel=1)
    assert done.stdout.count("reward 1.20 · err 0.00") == 2
    terms = "rewards   exact_match 1.00  ·  format 1.00  ·  partial_credit 0.00"
    assert done.stdout.count(terms) == 2
    found = traces(workdir / "outputs")
    assert sorted(found) == ["CalendarMath-v0", "MeetingSlot-v0"]
    for runs in found.values():
        assert sorted(t["task"]["data"]["options"]["index"] for t in runs) == list(range(15))
        for trace in runs:
            assert trace["ok"] and trace["stop_condition"] == "agent_completed"
            rewards = {k: (v["score"], v["weight"]) for k, v in trace["rewards"].items()}
            assert rewards == {
                "exact_match": (1.0, 1.0),
                "format": (1.0, 0.2),
                "partial_credit": (0.0, 0.2),
            }
            assert trace["info"]["meeting_gym"]["reward"] == 1.2
    # the same episodes as `meeting-gym eval --policy openai --model gold-native` (README)
    slot = found["MeetingSlot-v0"]
    assert sum(t["info"]["meeting_gym"]["turns"] for t in slot) == 63
    calls = [len(n["message"].get("tool_calls") or []) for t in slot for n in t["nodes"]]
    assert sum(calls) == 198
    # the README shows one such run
    shown = VF_BLOCK.source.split(VF_BLOCK.body, 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    assert shown.count("reward 1.20 · err 0.00") == 2


def test_vf_eval_scores_a_model_below_the_maximum_as_env_step_does(workdir):
    """``answer-now`` replies ``<answer>2024-03-11T09:00:00Z</answer>`` to every question."""
    reply = "<answer>2024-03-11T09:00:00Z</answer>"
    _, _, offline = VF_BLOCK.body.partition(OFFLINE_MARK)
    body = offline.replace("MeetingSlot-v0 CalendarMath-v0", "CalendarMath-v0")
    body = body.replace("-m gold-native", "-m answer-now -o below")
    run_bash(body, workdir, offline=True)
    (runs,) = traces(workdir / "below").values()
    env = gym.make("CalendarMath-v0")
    assert len(runs) == 15
    for trace in runs:
        env.reset(options=trace["task"]["data"]["options"])
        _, reward, _, _, info = env.step(reply)
        assert trace["info"]["meeting_gym"]["reward"] == reward == 0.2
        assert {k: v["score"] for k, v in trace["rewards"].items()} == {
            name: info[name] for name in ("exact_match", "format", "partial_credit")
        }


@pytest.mark.parametrize(
    "block",
    [b for b in BLOCKS if b.tag == "verifiers-python"],
    ids=lambda b: b.name,
)
def test_python_blocks_run_as_printed(block, tmp_path):
    run_block(block, link_checkout(tmp_path))
