"""The command line as a newcomer meets it: every env, one-line errors, honest exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from paths import ROOT

import meeting_gym
from meeting_gym.cli import main
from meeting_gym.core.registry import ENVS, task_class


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The installed-style entry point in a child process, as a user would run it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "meeting_gym.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def one_line_error(done: subprocess.CompletedProcess[str], fragment: str) -> None:
    assert done.returncode != 0, done.stdout
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("meeting-gym: error: "), done.stderr
    assert fragment in lines[0]


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["export", "--out", "DIR_THAT_DOES_NOT_EXIST/x.jsonl"], "does not exist"),
        (["export", "--out", "/tmp"], "is a directory"),
        (["eval", "--split", "curated", "--difficulty", "expert"], "has no items"),
        (["eval", "--policy", "ppo:README.md"], "could not load a MaskablePPO model"),
        (["eval", "--policy", "ppo:no/such/model.zip"], "no saved model"),
        (["eval", "--policy", "openai"], "--model"),
    ],
)
def test_user_errors_are_one_line_and_non_zero(args, fragment):
    done = run_cli(*args)
    one_line_error(done, fragment)
    assert "error: Error" not in done.stderr


def test_unknown_policy_lists_every_kind(capsys):
    assert main(["eval", "--policy", "nonsense"]) == 2
    err = capsys.readouterr().err
    for name in ("gold", "naive", "random", "ppo:PATH", "openai"):
        assert name in err


def _text_only(env_id: str) -> bool:
    import gymnasium as gym

    from meeting_gym.core.registry import load_object

    return "discrete" not in load_object(gym.spec(env_id).entry_point).modes


TEXT_ONLY = [e for e in ENVS if _text_only(e)]
WITH_DISCRETE = [e for e in ENVS if not _text_only(e)]


@pytest.mark.parametrize("env_id", TEXT_ONLY)
@pytest.mark.parametrize("extra", [[], ["--mode", "discrete"], ["--mode", "text"]])
def test_ppo_on_a_text_only_env_says_the_env_has_no_discrete_mode(env_id, extra, capsys):
    # it once said "unknown mode 'discrete'" though no --mode was given
    assert main(["eval", "--env", env_id, "--policy", "ppo:model.zip", *extra]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert f"{env_id} has no discrete mode" in line, line
    if not extra:
        assert "ppo:PATH policy needs one" in line and "unknown mode" not in line, line


@pytest.mark.parametrize("env_id", TEXT_ONLY)
def test_a_text_only_envs_help_offers_neither_discrete_nor_ppo(env_id, capsys):
    assert main(["eval", "--env", env_id, "--help"]) == 0
    usage = capsys.readouterr().out
    assert "--mode {text}" in usage and "discrete" not in usage and "ppo:" not in usage


@pytest.mark.parametrize("env_id", WITH_DISCRETE)
def test_an_env_with_a_discrete_mode_offers_it_and_ppo(env_id, capsys):
    assert main(["eval", "--env", env_id, "--help"]) == 0
    usage = capsys.readouterr().out
    assert "--mode {discrete,text}" in usage and "ppo:PATH" in usage


def test_the_registry_has_text_only_envs_and_envs_with_a_discrete_mode():
    assert TEXT_ONLY and WITH_DISCRETE  # both kinds exist, so both tests above ran


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["eval", "--env", "CalendarMath-v0", "--mode", "discrete"], "has no discrete mode"),
        (["eval", "--mode", "tabular"], "MeetingSlot-v0 has no tabular mode"),
        (["eval", "-n", "-3"], "must be at least 1"),
        (["eval", "--split", "nonsense"], "invalid choice: 'nonsense'"),
        (["eval", "--env", "TimetablePlanner-v0", "--start", "nowhere"], "'nowhere'"),
        (["eval", "--no-such-flag"], "unrecognized arguments: --no-such-flag"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
    ],
)
def test_usage_errors_are_one_line_naming_the_subcommand(args, fragment, capsys):
    assert main(args) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("meeting-gym"), lines
    assert fragment in lines[0] and lines[0].endswith("--help)")


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"meeting-gym {meeting_gym.__version__}"


def test_one_version_everywhere():
    """``pip show``, ``__version__`` and ``meeting-gym --version`` agree (0.1.0 vs 0.2.0 once)."""
    from importlib import metadata

    installed = metadata.version("meeting-gym")
    assert installed == meeting_gym.__version__
    scripts = metadata.entry_points(group="console_scripts")
    (script,) = [e for e in scripts if e.name == "meeting-gym"]
    assert script.value == "meeting_gym.cli:main"
    command = Path(sys.executable).parent / "meeting-gym"  # the installed console script
    assert command.is_file(), f"{command} is not installed"
    done = subprocess.run([str(command), "--version"], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout.strip()) == (0, f"meeting-gym {installed}")


def test_pyproject_takes_the_version_from_the_package():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    source = project["tool"]["setuptools"]["dynamic"]["version"]
    assert source == {"attr": "meeting_gym.__version__"}


def test_envs_lists_each_env_once_with_its_versions_and_says_which_to_use(capsys):
    assert main(["envs"]) == 0
    table, notes = capsys.readouterr().out.strip().split("\n\n")
    lines = table.splitlines()
    names = [i.removesuffix("-v0") for i in ENVS if i.endswith("-v0")]
    assert [line.split()[0] for line in lines] == names
    for line, name in zip(lines, names, strict=True):
        assert line.split()[1:3] == ["v0,", "v1"]
        assert task_class(f"{name}-v1").summary in line
    assert notes.startswith("v1, the one to use: any eval item in constant time")


def test_unknown_env_is_a_usage_error(capsys):
    assert main(["eval", "--env", "Nope-v0"]) == 2
    assert "invalid choice: 'Nope-v0'" in capsys.readouterr().err


@pytest.mark.parametrize("env_id", list(ENVS))
def test_eval_json_has_the_family_keys_and_every_rubric_term(env_id, capsys):
    cls = task_class(env_id)
    best = cls.reference_policy
    assert main(["eval", "--env", env_id, "--policy", best, "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert (payload["env"], payload["policy"], payload["split"]) == (env_id, best, "curated")
    documented = [cls().max_reward_for(item) for item in cls().curated()]
    assert payload["n"] == len(documented) and payload["reward"] == pytest.approx(
        sum(documented) / len(documented)
    )
    assert payload["terms"] == list(cls.rubric.names)
    for name in cls.rubric.names:
        assert isinstance(payload[name], float)


@pytest.mark.parametrize("env_id", list(ENVS))
def test_the_table_shows_the_env_and_its_terms(env_id, capsys):
    assert main(["eval", "--env", env_id, "--verbose"]) == 0
    out = capsys.readouterr().out
    assert f"env={env_id}" in out.splitlines()[0]
    for term in task_class(env_id).rubric.terms:
        assert f"\n{term.column:<16}" in out


def test_eval_out_writes_a_row_per_episode(tmp_path, capsys):
    out = tmp_path / "rows.jsonl"
    assert main(["eval", "-n", "4", "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 4 and all(r["reward"] == pytest.approx(1.2) for r in rows)
    assert {"item_id", "gold", "answer", "exact_match", "format", "partial_credit"} <= set(rows[0])


@pytest.mark.parametrize("env_id", list(ENVS))
def test_export_rows_carry_their_reset_options(env_id, tmp_path, capsys):
    out = tmp_path / "train.jsonl"
    assert main(["export", "--env", env_id, "--split", "train", "-n", "5", "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["options"]["index"] for r in rows] == list(range(5))
    assert all(r["env"] == env_id and r["options"]["split"] == "train" for r in rows)


def test_a_closed_pipe_ends_quietly():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        f"{sys.executable} -m meeting_gym.cli eval --verbose | head -1",
        shell=True,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert done.stdout.startswith("meeting-gym eval")


def test_llm_example_rejects_an_unknown_scenario_without_a_traceback():
    pytest.importorskip("openai")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "examples" / "llm_agent.py"),
            "--model",
            "m",
            "--scenario",
            "x",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "invalid choice: 'x'" in done.stderr


def test_serve_without_the_serve_extra_names_the_extra_in_one_line(monkeypatch, capsys):
    """It said `No module named 'uvicorn'`; the user needs the install line."""
    import importlib.util

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "uvicorn" else find_spec(name, *a),
    )
    assert main(["serve", "--env", "CalendarMath-v0", "--port", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and 'pip install "meeting-gym[serve]"' in err and "uvicorn" in err


@pytest.mark.parametrize("value", ["0", "-3"])
def test_n_below_1_is_one_line_saying_so_whatever_the_value(value, capsys):
    """-n -3 said "non-negative" and -n 0 then "selects nothing": one rule, said once."""
    assert main(["eval", "-n", value]) == 2
    assert f"must be at least 1, got {value}" in capsys.readouterr().err


@pytest.mark.parametrize("env_id", ["MeetingSlot-v0", "MeetingSlot-v1"])
def test_skip_passes_over_the_first_items_of_a_split_with_no_curated_note(env_id, capsys):
    """--skip K gives items K.. of the split (issue 49 item 8: a small held-out evaluation
    was only ever the curated items that open the eval split)."""
    import argparse

    from meeting_gym.cli.common import items_of
    from meeting_gym.core.registry import make_task
    from meeting_gym.core.splits import load_split

    task = make_task(env_id)
    ns = argparse.Namespace(split="eval", n=3, seed=7, difficulty=None, skip=15, env=env_id)
    got = items_of(ns, task)
    expected = load_split("eval", n=18, seed=7, env=task)[15:]
    assert [task.item_id(i) for i in got] == [task.item_id(i) for i in expected]
    assert "curated" not in capsys.readouterr().err


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["eval", "--split", "eval", "--skip", "998", "-n", "3"], "bound of 1000"),
        (["eval", "--split", "curated", "--skip", "99"], "from index 99"),
        (["eval", "--skip", "-1"], "must be non-negative"),
    ],
)
def test_a_skip_past_the_items_is_one_line(args, fragment, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and fragment in err, err


def test_rows_of_a_skipped_evaluation_address_the_items_played():
    """A row's reset options name the split index of its item: with --skip, past them."""
    import argparse

    from meeting_gym.cli.common import split_options

    ns = argparse.Namespace(split="eval", seed=3, difficulty=None, skip=15)
    assert split_options(ns, 2) == {"split": "eval", "index": 17, "split_seed": 3}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--policy", "openai", "--mode", "discrete"],
            "the openai policy plays text mode; drop --mode discrete",
        ),
        (
            ["--policy", "local", "--mode", "discrete"],
            "the local policy plays text mode; drop --mode discrete",
        ),
        (
            ["--policy", "ppo:runs/none.zip", "--mode", "text"],
            "a ppo:PATH policy acts in discrete mode; drop --mode text",
        ),
        (
            ["--env", "CalendarMath-v0", "--policy", "ppo:runs/none.zip"],
            "CalendarMath-v0 has no discrete mode (its only mode is text), and a ppo:PATH "
            "policy needs one",
        ),
        (["--policy", "oracle"], "unknown policy 'oracle'; choose one of gold,"),
    ],
)
def test_eval_looks_up_the_kind_of_policy_and_names_a_wrong_mode_in_one_line(argv, message, capsys):
    """Each kind of policy (reference, ppo:PATH, openai, local) says the mode it acts
    through; a --mode it cannot play is one line naming the fix, before anything loads."""
    assert main(["eval", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err
