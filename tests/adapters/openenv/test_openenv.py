"""The OpenEnv server and clients, over real HTTP and WebSocket on 127.0.0.1.

Each test starts uvicorn in a thread on a free loopback port and stops it at the end.
Episodes played through the client must equal in-process ``gym.make`` episodes with
the same seed and options, step by step.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager

import gymnasium as gym
import pytest
from paths import ROOT
from uvicorn_thread import served

import meeting_gym  # noqa: F401
from meeting_gym.agents.policies import make_policy
from meeting_gym.core.registry import ENVS, load_object

pytest.importorskip("openenv.core")
uvicorn = pytest.importorskip("uvicorn")
httpx = pytest.importorskip("httpx")

from meeting_gym.adapters.openenv import (  # noqa: E402
    client,
    create_server_app,
    models,
    wait_healthy,
)

TEXT_ENVS = [e for e in ENVS if "text" in load_object(gym.spec(e).entry_point).modes]


@contextmanager
def running(env_id: str, **kwargs):
    """The app of ``env_id`` served on 127.0.0.1 for the duration of the block."""
    with served(create_server_app(env_id, **kwargs), 20) as port:
        yield f"http://127.0.0.1:{port}"


def in_process(env_id: str, seed: int, options: dict | None):
    """The reference policy's episode in process: observations, rewards, last info."""
    env = gym.make(env_id, mode="text")
    observation, info = env.reset(seed=seed, options=options)
    policy = make_policy(env.unwrapped.task.reference_policy, seed=seed, env=env_id)
    policy.reset(observation, info, seed=seed)
    trace = [observation]
    done = False
    while not done:
        observation, reward, terminated, truncated, info = env.step(policy.act(observation))
        trace.append((observation, reward))
        done = terminated or truncated
    return trace, info, env.unwrapped.episode.item


def over_the_wire(env_id: str, url: str, seed: int, options: dict | None):
    with client(env_id, url).sync() as remote:
        result = remote.reset(seed=seed, **(options or {}))
        info = result.observation.info
        policy = make_policy(load_object(ENVS[env_id].task).reference_policy, seed=seed, env=env_id)
        policy.reset(result.observation.text, info, seed=seed)
        trace = [result.observation.text]
        while not result.done:
            result = remote.step({"text": policy.act(result.observation.text)})
            trace.append((result.observation.text, result.reward))
        state = remote.state()
    return trace, result.observation.info, state


@pytest.mark.parametrize("env_id", TEXT_ENVS)
def test_reference_policy_over_the_wire_equals_in_process(env_id):
    with running(env_id) as url:
        for seed, options in ((3, None), (0, {"split": "curated", "index": 1})):
            local, local_info, item = in_process(env_id, seed, options)
            remote, remote_info, state = over_the_wire(env_id, url, seed, options)
            assert remote == local
            assert remote_info["reward"] == local_info["reward"]
            documented = load_object(ENVS[env_id].task)().max_reward_for(item)
            if documented is not None:  # some envs document a best reward per item only
                assert local_info["reward"] == pytest.approx(documented)
            assert state.done and state.env_id == env_id and state.turn == len(local) - 1


def test_typed_tool_calls_and_answers():
    with running("MeetingSlot-v0") as url, client("MeetingSlot-v0", url).sync() as remote:
        result = remote.reset(scenario_id="same_tz_empty_busy")
        assert "30-minute meeting" in result.observation.text and not result.done
        result = remote.step({"tool_call": {"name": "list_attendees"}})
        assert json.loads(result.observation.text) == ["Ava", "Ben"]
        calls = [{"name": "get_timezone", "arguments": {"name": n}} for n in ("Ava", "Ben")]
        result = remote.step({"tool_calls": calls})
        assert json.loads(result.observation.text) == ["America/New_York"] * 2
        result = remote.step({"answer": "2024-03-11T13:00:00Z"})
        assert (result.done, result.reward) == (True, pytest.approx(1.2))
        assert result.observation.info["gold"] == "2024-03-11T13:00:00Z"


def test_bad_payloads_name_the_field_and_the_session_survives():
    from websockets.sync.client import connect

    with running("MeetingSlot-v0") as url, connect(url.replace("http", "ws") + "/ws") as ws:

        def send(message: dict) -> dict:
            ws.send(json.dumps(message))
            return json.loads(ws.recv(timeout=10))

        assert send({"type": "reset", "data": {"seed": 1}})["type"] == "observation"
        replies = [
            send(payload)
            for payload in (
                {"type": "step", "data": {"tool_call": {"name": "teleport"}}},
                {"type": "step", "data": {"answer": "x", "text": "y"}},
                {"type": "step", "data": {"answr": "x"}},
                {"type": "reset", "data": {"scenario_id": "no_such_case"}},
                {"type": "reset", "data": {"colour": "red"}},
                {"type": "nonsense"},
            )
        ]
        alive = send({"type": "step", "data": {"tool_call": {"name": "list_attendees"}}})
    assert all(r["type"] == "error" for r in replies)
    texts = [json.dumps(r["data"]) for r in replies]
    assert "teleport" in texts[0] and "tool_call" in texts[0]
    assert "exactly one of" in texts[1]
    assert "answr" in texts[2]
    assert "no_such_case" in texts[3] and "colour" in texts[4]
    assert alive["type"] == "observation"  # the session still plays
    assert json.loads(alive["data"]["observation"]["text"])


def test_plain_http_errors_are_4xx_never_500():
    with running("CalendarMath-v0") as url:
        http = httpx.Client(base_url=url, timeout=10)
        ok = http.post("/reset", json={"seed": 4, "split": "curated", "index": 0})
        assert (
            ok.status_code == 200 and "1 day after 2024-02-28" in ok.json()["observation"]["text"]
        )
        bad = http.post("/reset", json={"split": "curated", "index": 99})
        assert bad.status_code == 422 and "out of range" in bad.json()["detail"]
        unknown = http.post("/reset", json={"colour": "red"})
        assert unknown.status_code == 422 and "colour" in unknown.json()["detail"]
        stateless = http.post("/step", json={"action": {"answer": "2024-02-29"}})
        assert stateless.status_code == 409 and "/ws" in stateless.json()["detail"]
        invalid = http.post("/step", json={"action": {"tool_call": {"name": "x"}}})
        assert invalid.status_code == 422 and "tool_call" in json.dumps(invalid.json())
        assert http.get("/health").status_code == 200
        schema = http.get("/schema").json()
        assert set(schema["action"]["properties"]) >= {"answer", "text"}


def test_concurrent_sessions_are_isolated():
    env_id = "MeetingSlot-v0"

    async def one(url: str, seed: int) -> tuple:
        remote = client(env_id, url)
        async with remote:
            result = await remote.reset(seed=seed)
            question = result.observation.text
            names = await remote.step({"tool_call": {"name": "list_attendees"}})
            await asyncio.sleep(0.01)  # let the other sessions interleave
            state = await remote.state()
            return question, names.observation.text, state.item_id

    async def many(url: str) -> list:
        return await asyncio.gather(*(one(url, seed) for seed in range(8)))

    with running(env_id, max_sessions=8) as url:
        results = asyncio.run(many(url))
    for seed, (question, names, item_id) in enumerate(results):
        env = gym.make(env_id, mode="text")
        local_question, info = env.reset(seed=seed)
        local_names = env.step('{"name": "list_attendees", "arguments": {}}')[0]
        assert (question, names, item_id) == (local_question, local_names, info["scenario_id"])


def test_capacity_is_enforced_and_freed_on_disconnect_and_idle_expiry():
    from websockets.asyncio.client import connect as ws_connect

    env_id = "CalendarMath-v0"

    async def scenario(url: str) -> tuple:
        first = client(env_id, url)
        await first.connect()
        await first.reset(seed=0)
        # a second session is refused: the server says why as soon as it accepts
        async with ws_connect(url.replace("http", "ws") + "/ws") as second:
            refused = json.loads(await asyncio.wait_for(second.recv(), 10))
        await first.close()  # a disconnect frees the slot
        third = client(env_id, url)
        async with third:
            freed = await third.reset(seed=1)
        idle = client(env_id, url)
        await idle.connect()
        await idle.reset(seed=2)
        await asyncio.sleep(6.0)  # past the idle timeout: the reaper frees the slot
        late = client(env_id, url)
        async with late:
            after_idle = await late.reset(seed=3)
        return refused, freed, after_idle

    with running(env_id, max_sessions=1, idle_timeout_s=0.5) as url:
        refused, freed, after_idle = asyncio.run(scenario(url))
    assert refused["type"] == "error" and refused["data"]["code"] == "CAPACITY_REACHED"
    assert "What" in freed.observation.text or "How" in freed.observation.text
    assert after_idle.observation.text


def test_models_are_typed_per_env():
    slot = models("MeetingSlot-v0")
    assert set(slot.action.model_json_schema()["properties"]) == {
        "metadata",
        "answer",
        "text",
        "tool_call",
        "tool_calls",
    }
    math = models("CalendarMath-v0")
    assert set(math.action.model_json_schema()["properties"]) == {"metadata", "answer", "text"}
    assert (
        slot.action.__name__ == "MeetingSlotAction" and math.state.__name__ == "CalendarMathState"
    )
    assert {"split", "index", "scenario_id"} <= slot.reset_options
    planner = models("TimetablePlanner-v0")
    fields = set(planner.action.model_json_schema()["properties"])
    # the predecessor's TimetablePlannerAction fields, and no answer (submit_timetable ends it)
    assert fields == {
        "metadata",
        "text",
        "tool_call",
        "tool_calls",
        "action_type",
        "session_id",
        "day",
        "start_slot",
        "room_id",
        "target_session_id",
    }
    assert {"scenario_id", "task_name", "difficulty", "split", "index"} <= planner.reset_options


def test_the_timetable_predecessors_payloads_play_unchanged_over_its_websocket_protocol():
    """TimetablePlannerAction objects, sent as its client sent them, play as in process."""
    from websockets.sync.client import connect

    env_id = "TimetablePlanner-v0"
    env = gym.make(env_id, mode="text")
    observation, info = env.reset(options={"task_name": "medium"})
    policy = make_policy("greedy", env=env_id)
    policy.reset(observation, info)
    payloads, local = [], []
    done = False
    while not done:
        payload = json.loads(policy.act(observation))
        payloads.append(payload)
        observation, reward, terminated, truncated, info = env.step(json.dumps(payload))
        local.append((observation, reward, terminated or truncated))
        done = terminated or truncated
    assert payloads[-1] == {"action_type": "submit_timetable"} and len(payloads) > 3
    # its clients could send a day label, a null field and metadata (a non-integer slot is
    # an action_error now, D16, so none is sent here)
    first = payloads[0]
    loose = {**first, "day": ["Mon", "Tue", "Wed", "Thu", "Fri"][first["day"]]}
    loose["target_session_id"] = None
    loose["metadata"] = {"client": "timetable_planner"}

    with running(env_id) as url, connect(url.replace("http", "ws") + "/ws") as ws:

        def send(message: dict) -> dict:
            ws.send(json.dumps(message))
            return json.loads(ws.recv(timeout=10))

        reset = send({"type": "reset", "data": {"task_name": "medium"}})
        assert reset["type"] == "observation"
        extra = send({"type": "step", "data": {**first, "room": "R1"}})
        both = send({"type": "step", "data": {**first, "text": "{}"}})
        remote = [
            send({"type": "step", "data": loose if k == 0 else p}) for k, p in enumerate(payloads)
        ]
    # an unknown field is refused before the env sees it (no budget spent), as before
    assert extra["type"] == "error" and "room" in json.dumps(extra["data"])
    assert both["type"] == "error" and "exactly one of" in json.dumps(both["data"])
    assert [
        (r["data"]["observation"]["text"], r["data"]["reward"], r["data"]["done"]) for r in remote
    ] == local


def test_serve_command_runs_a_server(tmp_path):
    import socket
    import subprocess
    import sys

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    root = ROOT
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "meeting_gym.cli",
            "serve",
            "--env",
            "CalendarMath-v0",
            *("--port",),
            str(port),
            "--max-sessions",
            "2",
        ],
        cwd=root,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, 30, alive=lambda: proc.poll() is None)
        with client("CalendarMath-v0", url).sync() as remote:
            result = remote.reset(split="curated", index=4)
            result = remote.step({"answer": result.observation.info["inputs"]["start"]})
            assert result.done
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_the_deployment_lock_records_the_package_as_it_is():
    """deploy/openenv/uv.lock was once left at 0.1.0 with five extras: it must follow
    pyproject.toml (regenerate it with `uv lock` in that folder)."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lock = tomllib.loads((ROOT / "deploy" / "openenv" / "uv.lock").read_text())
    (ours,) = [p for p in lock["package"] if p["name"] == "meeting-gym"]
    assert "version" not in ours or ours["version"] == project.get("version")
    assert ours["metadata"]["provides-extras"] == list(project["optional-dependencies"])
    core = {r["name"] for r in ours["metadata"]["requires-dist"] if "marker" not in r}
    assert core == {"gymnasium", "numpy", "tzdata"}


def test_openenv_validate_passes_on_the_layout_and_on_a_running_server():
    import shutil
    import subprocess

    tool = shutil.which("openenv")
    if tool is None:
        pytest.skip("the openenv command is not installed")
    layout = ROOT / "deploy" / "openenv"
    # OpenEnv 0.10's static level: the manifest's `validation:` block against its schema
    static = [tool, "validate", str(layout), "--level", "static"]
    local = subprocess.run(static, capture_output=True, text=True, timeout=60)
    assert local.returncode == 0, local.stdout
    assert "PASS  static.manifest" in local.stdout and "Verdict: PASS" in local.stdout, local.stdout
    with running("MeetingSlot-v0") as url:
        remote = subprocess.run(
            [tool, "validate", "--url", url, "--json"], capture_output=True, text=True, timeout=60
        )
    report = json.loads(remote.stdout)
    assert report["passed"] and report["summary"]["failed_criteria"] == [], report
    with running("CalendarMath-v0") as url:
        metadata = httpx.get(f"{url}/metadata", timeout=10).json()
    assert metadata["name"] == "CalendarMath-v0" and "date arithmetic" in metadata["description"]


def test_the_serve_extra_is_openenv_0_10_and_what_is_installed_meets_it():
    """The serve extra names `openenv` (0.10: MCP tools), not `openenv-core`, which installs
    the same `openenv` module at 0.3 and overwrote a user's 0.10 with it."""
    from importlib import metadata

    from packaging.requirements import Requirement

    tomllib = pytest.importorskip("tomllib")
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    serve = {Requirement(r).name: Requirement(r) for r in extras["optional-dependencies"]["serve"]}
    assert "openenv-core" not in serve
    assert "0.10.0" in serve["openenv"].specifier and "0.3.0" not in serve["openenv"].specifier
    assert metadata.version("openenv") in serve["openenv"].specifier
    deploy = tomllib.loads((ROOT / "deploy" / "openenv" / "pyproject.toml").read_text())
    assert not any(r.startswith("openenv-core") for r in deploy["project"]["dependencies"])


def test_the_manifest_declares_the_served_env_s_tools_and_reward_range():
    """openenv.yaml's `validation:` block names what the default env (MeetingSlot-v0) has:
    written by hand, so held to the env here."""
    yaml = pytest.importorskip("yaml")
    declared = yaml.safe_load((ROOT / "deploy" / "openenv" / "openenv.yaml").read_text())
    block = declared["validation"]
    task = gym.make("MeetingSlot-v0", mode="text").unwrapped.task
    assert block["capabilities"]["declared_tools"] == [tool.name for tool in task.toolset]
    assert block["reward"]["range"] == [0.0, task.max_reward]


def test_the_load_script_plays_every_session_to_the_in_process_episode():
    import subprocess
    import sys

    root = ROOT
    script = str(root / "benchmarks" / "openenv_load.py")
    command = [sys.executable, script, "--sessions", "3", "--episodes", "2", "--hostile", "0"]
    done = subprocess.run(
        [*command, "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=root,
    )
    assert done.returncode == 0, done.stderr
    runs = json.loads(done.stdout)["runs"]
    assert [r["phase"] for r in runs] == ["quiet"]
    assert runs[0]["mismatches"] == 0 and runs[0]["episodes"] == 3 * 2


def _example(*args: str) -> subprocess.CompletedProcess[str]:
    """``examples/openenv_client.py`` as a user runs it, bounded to two minutes."""
    root = ROOT
    return subprocess.run(
        [sys.executable, str(root / "examples" / "openenv_client.py"), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(root)},
        timeout=120,
    )


@pytest.mark.parametrize("env_id", TEXT_ENVS)
def test_the_client_example_plays_every_env_and_names_an_index_out_of_range(env_id):
    from meeting_gym.core.splits import load_split

    assert set(TEXT_ENVS) == set(ENVS)  # every registered id is served, so the example covers all
    _, info, _ = in_process(env_id, 0, {"split": "curated", "index": 0})
    size = len(load_split("curated", env=env_id))
    with running(env_id, max_sessions=2) as url:
        played = _example("--url", url, "--env", env_id)
        past_the_end = _example("--url", url, "--env", env_id, "--index", str(size))
    assert played.returncode == 0, played.stderr
    assert played.stdout.startswith(f"{env_id} curated item 0:"), played.stdout
    assert f"gold {info['gold']}, reward {info['reward']:.3f} after" in played.stdout
    assert past_the_end.returncode == 1 and not past_the_end.stdout
    lines = past_the_end.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("openenv_client.py: error: "), lines
    assert f"index {size} is out of range" in lines[0], lines


def test_waiting_for_a_server_that_is_not_there_ends_with_the_reason():
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}"
    began = time.monotonic()
    with pytest.raises(TimeoutError, match="no /health answer"):
        wait_healthy(url, timeout=0.3)
    with pytest.raises(RuntimeError, match="exited before it answered"):
        wait_healthy(url, timeout=30, alive=lambda: False)
    assert time.monotonic() - began < 10


def test_a_session_draws_from_its_own_curriculum_by_option():
    """reset(curriculum=...) plays the session curriculum's draws; its episodes move it."""
    from meeting_gym.core.curriculum import Curriculum, Rules

    option = {"window": 4, "min_outcomes": 4, "seed": 3}
    local = Curriculum.for_env("CalendarMath-v0", seed=3, rules=Rules(window=4, min_outcomes=4))
    gold = make_policy("gold", env="CalendarMath-v0")
    with running("CalendarMath-v0") as url, client("CalendarMath-v0", url).sync() as remote:
        levels = []
        for _ in range(6):
            result = remote.reset(curriculum=option)
            info = result.observation.info
            draw = local.next()
            # the same item an in-process curriculum draws, with the same options
            env = gym.make("CalendarMath-v0", mode="text")
            question, expected = env.reset(options=draw.options)
            assert result.observation.text == question and info["item_id"] == expected["item_id"]
            levels.append(info["curriculum"]["level"])
            gold.reset(result.observation.text, info)
            result = remote.step({"text": gold.act(result.observation.text)})
            local.report(draw, result.reward)
        # four solved easy items moved the session's curriculum to medium
        assert levels == ["easy"] * 4 + ["medium"] * 2
        # an eval item in the same session passes by the curriculum
        plain = remote.reset(split="eval", index=0)
        assert "curriculum" not in plain.observation.info
        with pytest.raises(Exception, match="no other reset option"):
            remote.reset(curriculum=True, split="eval", index=0)
        with pytest.raises(Exception, match="unknown curriculum field"):
            remote.reset(curriculum={"speed": 11})
        with pytest.raises(Exception, match="window must be"):
            remote.reset(curriculum={"window": 10**9})
        again = remote.reset(curriculum=option)  # the same option: the same curriculum goes on
        assert again.observation.info["curriculum"]["drawn"] == 7


def test_a_served_env_plays_through_the_one_loop_as_a_local_env_does():
    """``RemoteEnv`` puts a served env behind Gymnasium's reset/step, so ``core.loop.play``
    gives over the wire what it gives in process: observations, rewards, and how the
    episode ended (an answer terminates it; the turn budget truncates it, as the server
    now says in the observation's ``truncated`` field)."""
    from meeting_gym.adapters.openenv import RemoteEnv
    from meeting_gym.core.loop import ScriptedAgent, play

    stalling = ['<tool_call>{"name": "list_attendees", "arguments": {}}</tool_call>'] * 3
    options = {"split": "curated", "index": 0}
    local = gym.make("MeetingSlot-v0", mode="text", max_turns=3)
    with (
        running("MeetingSlot-v0", max_turns=3) as url,
        client("MeetingSlot-v0", url).sync() as remote,
    ):
        served = RemoteEnv(remote)
        for make_agent in (
            lambda: make_policy("gold", env="MeetingSlot-v0"),
            lambda: ScriptedAgent(stalling),
        ):
            seen: list[list[object]] = [[], []]
            rollouts = []
            for k, env in enumerate((local, served)):
                agent = make_agent()
                if isinstance(agent, ScriptedAgent):
                    agent.observed = lambda _, obs, heard=seen[k]: heard.append(obs)
                rollouts.append(play(env, agent, seed=0, options=options))
            here, there = rollouts
            assert seen[0] == seen[1]
            assert there.rewards == here.rewards and there.turns == here.turns
            assert (there.terminated, there.truncated) == (here.terminated, here.truncated)
            assert there.observation == here.observation
            assert there.info.get("reward") == here.info.get("reward")
    local.close()
    assert (here.terminated, here.truncated) == (False, True)  # the stalling agent
