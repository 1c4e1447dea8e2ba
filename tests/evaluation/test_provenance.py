"""The environment record every results file carries, and the constraints file behind the
published training tables (meeting_gym.evaluation.provenance)."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata

import pytest
from paths import ROOT
from records import assert_environment_record

from meeting_gym.evaluation.provenance import (
    NUMERIC_PACKAGES,
    closure,
    constraints_text,
    cpu,
    differences,
    read_constraints,
    record_phase,
    run_environment,
)

CONSTRAINTS = ROOT / "constraints" / "train.txt"

# two processors' /proc/cpuinfo, cut to the lines that matter (and one that does not)
EPYC = """processor\t: 0
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC 9B14
flags\t\t: fpu vme sse sse2 ssse3 fma sse4_1 sse4_2 avx f16c avx2 avx512f avx512_bf16 sha_ni
processor\t: 1
model name\t: AMD EPYC 9B14
flags\t\t: fpu vme sse sse2
"""
GRAVITON = """processor\t: 0
BogoMIPS\t: 243.75
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp sve bf16
"""


assert_record = assert_environment_record


def test_the_cpu_line_keeps_the_model_and_only_the_vector_extensions():
    record = cpu(EPYC)
    assert record["model"] == "AMD EPYC 9B14"
    # the first processor's flags, vector ones only, sorted
    assert record["vector_extensions"] == [
        "avx",
        "avx2",
        "avx512_bf16",
        "avx512f",
        "f16c",
        "fma",
        "sse",
        "sse2",
        "sse4_1",
        "sse4_2",
        "ssse3",
    ]
    arm = cpu(GRAVITON)
    assert arm["vector_extensions"] == ["asimd", "asimdhp", "fphp", "sve"]


def test_the_record_names_every_field_the_issue_asks_for():
    record = run_environment()
    assert_record(record)
    assert json.loads(json.dumps(record)) == record  # it is written as JSON
    if (ROOT / ".git").exists():  # a checkout: the commit is the one HEAD names
        head = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        assert record["meeting_gym"]["commit"] == head


def test_torch_threads_are_recorded_once_torch_is_loaded():
    torch = pytest.importorskip("torch")
    record = run_environment()
    assert record["torch"]["threads"] == torch.get_num_threads()
    assert isinstance(record["torch"]["cpu_capability"], str)


def test_differences_name_what_can_change_the_numbers_and_ignore_the_commit():
    a = run_environment()
    assert differences(a, a) == []
    b = json.loads(json.dumps(a))
    b["meeting_gym"]["commit"] = "0" * 40
    assert differences(a, b) == []
    # numpy: in every venv CI runs the suite in (the RLlib one has no training stack)
    b["packages"]["numpy"] = "0.0.1"
    b["cpu"]["vector_extensions"] = ["sse"]
    b["torch"]["threads"] = 7
    found = differences(a, b)
    assert f"numpy: {a['packages']['numpy']} != 0.0.1" in found
    assert any(d.startswith("cpu vector_extensions:") for d in found)
    assert any(d.startswith("torch threads:") for d in found)
    assert len(found) == 3
    b["packages"]["stable-baselines3"] = None  # installed on one side only: no cause
    assert len(differences(a, b)) == 3


def test_record_phase_keeps_one_record_per_sitting(tmp_path):
    path = tmp_path / "environment.json"
    record_phase(path, "sft")
    records = record_phase(path, "sft")  # resumed
    records = record_phase(path, "eval")
    assert [r["phase"] for r in records] == ["sft", "sft", "eval"]
    assert json.loads(path.read_text()) == records
    assert_record(records[-1]["environment"])


def test_meeting_gym_eval_json_carries_the_record():
    done = subprocess.run(
        [sys.executable, "-m", "meeting_gym.cli", "eval", "--env", "CalendarMath-v0", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert_record(json.loads(done.stdout)["environment"])


def test_write_run_adds_the_record(tmp_path):
    from meeting_gym.training.runs import write_run

    write_run(tmp_path, "| t |", [{"step": 1, "reward": 0.5}], {"table": {}})
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["table"] == {}
    assert_record(results["environment"])


def test_constraints_round_trip():
    pins = {"numpy": "2.3.4", "torch": "2.13.0"}
    assert read_constraints(constraints_text(pins)) == pins


def test_the_numeric_packages_include_the_issues_list():
    assert {"torch", "transformers", "trl", "accelerate", "datasets", "numpy"} <= set(
        NUMERIC_PACKAGES
    )


def training_stack_installed() -> bool:
    try:
        metadata.version("trl")
        metadata.version("gguf")
    except metadata.PackageNotFoundError:
        return False
    return True


@pytest.mark.skipif(not training_stack_installed(), reason="needs the trl and local extras")
def test_this_environment_is_the_pinned_one():
    """CI installs the extras with the constraints file: every pin is what is installed, and
    the file pins the whole closure of the trl and local extras (regenerating it gives the
    same pins), so nothing those extras need floats."""
    pins = read_constraints(CONSTRAINTS.read_text())
    assert closure() == pins, "remake constraints/train.txt (see its header) or reinstall with it"
    for name in ("torch", "transformers", "trl", "accelerate", "datasets", "numpy", "gguf"):
        assert name in pins


def test_rows_environment_says_whether_this_machine_is_the_recorded_one(tmp_path, capsys):
    from meeting_gym.cli import main

    pytest.importorskip("torch")  # loaded, as in a training run, so its kernel level is recorded
    record = run_environment()
    record["torch"]["threads"] = 1  # the run's choice: named, not compared
    (tmp_path / "results.json").write_text(json.dumps({"environment": record}))
    assert main(["rows", "environment", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "--threads 1" in out and "same environment" in out

    record["packages"]["numpy"] = "0.0.1"
    record["cpu"]["model"] = "another CPU"
    (tmp_path / "results.json").write_text(json.dumps({"environment": record}))
    assert main(["rows", "environment", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "numpy: 0.0.1 != " in out and "cpu model: another CPU != " in out


@pytest.mark.parametrize("content, fragment", [(None, "no such file"), ("{}", "no environment")])
def test_rows_environment_names_a_bad_folder_in_one_line(tmp_path, capsys, content, fragment):
    from meeting_gym.cli import main

    if content is not None:
        (tmp_path / "results.json").write_text(content)
    assert main(["rows", "environment", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and fragment in err[0], err
