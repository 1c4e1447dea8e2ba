"""examples/train_grpo.py runs as documented, end to end, on the real model (tiny settings).

Every phase runs (base eval, SFT, GRPO, the evaluation of each checkpoint reloaded from its
folder) with a handful of items and tokens, and the files the docs describe are written:
the results table and JSON, the curve, the per-item evaluation rows (each reward the env's
grade of the logged reply) and two checkpoints the local-model policy loads.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest
from paths import ROOT
from records import assert_environment_record

import meeting_gym  # noqa: F401
from meeting_gym.agentkit.local import resolve_model
from meeting_gym.core.splits import load_split, make_task

SCRIPT = ROOT / "examples" / "train_grpo.py"


def run(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--group", "1"], "--group must be at least 2"),
        (["--eval-n", "0"], "--eval-n must be at least 1"),
        (["--env", "TimetablePlanner-v0"], "no short system prompt for TimetablePlanner-v0"),
        (["--system-prompt", " "], "the system prompt is empty"),
        (["--model", "no/such/folder"], "--model: no model at 'no/such/folder'"),
        (["--curriculum-replay", "2"], "--curriculum-replay must be a share from 0 to 1"),
        (["--curriculum-replays", "0"], "--curriculum-replays must be from 1 to 16"),
    ],
)
def test_bad_arguments_are_one_line_errors(args, message):
    done = run(*args, timeout=60)
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr


def test_a_missing_sft_model_is_a_one_line_error(tmp_path):
    # --model names a folder that resolves (a config.json is all resolve_model looks for),
    # so the error is the SFT folder's wherever the bundled model is not installed too
    (tmp_path / "config.json").write_text("{}")
    done = run("--model", str(tmp_path), "--sft-model", "no/such/sft", timeout=60)
    assert done.returncode == 2
    assert "--sft-model: no model at 'no/such/sft'" in done.stderr
    assert "Traceback" not in done.stderr


TINY = (
    "--grpo-steps", "1", "--prompts", "2", "--group", "2", "--eval-n", "4", "--eval-batch", "4",
    "--max-completion", "8", "--no-progress",
)  # fmt: skip


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    """One tiny run of every phase; its output folder."""
    pytest.importorskip("trl", reason='needs pip install "meeting-gym[trl,local]"')
    pytest.importorskip("gguf", reason='needs pip install "meeting-gym[local]"')
    try:
        resolve_model("smollm2")
    except ValueError as exc:
        pytest.skip(str(exc))
    out = tmp_path_factory.mktemp("grpo") / "run"
    done = run("--sft-n", "16", "--sft-batch", "8", *TINY, "--out", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    # transformers' deprecations of the names TRL uses stay out of the run's output
    assert "FutureWarning" not in done.stderr, done.stderr[-3000:]
    return out


def grpo_from_sft(
    pipeline: Path, out: Path, *args: str, timeout: float = 600
) -> subprocess.CompletedProcess:
    """A tiny run with ``args`` whose GRPO starts from the pipeline's SFT model, into ``out``."""
    return run(
        *TINY, *args, "--sft-model", str(pipeline / "sft_model"), "--out", str(out), timeout=timeout
    )


def test_the_pipeline_runs_end_to_end_and_writes_what_the_docs_show(pipeline):
    out = pipeline
    results = json.loads((out / "results.json").read_text())
    assert set(results["eval"]) == {"base", "sft", "grpo"}
    assert results["paired"]["grpo_minus_sft"]["n"] == 4
    assert set(results["timings_s"]) == {"base eval", "sft", "sft eval", "grpo", "grpo eval"}
    assert_environment_record(results["environment"], torch_loaded=True)
    table = (out / "table.md").read_text()
    assert [line.split(" | ")[0] for line in table.splitlines()[2:5]] == [
        "| base",
        "| sft",
        "| grpo",
    ]
    assert "paired SFT+GRPO - SFT" in table
    assert (out / "curve.png").stat().st_size > 10_000
    phases = (out / "curve.csv").read_text().splitlines()
    assert phases[0].startswith("phase,step") and {p.split(",")[0] for p in phases[1:]} == {
        "sft",
        "grpo",
    }
    for name in ("sft_model", "grpo_model"):
        assert (out / name / "config.json").exists() and (out / name / "model.safetensors").exists()

    # each logged reward is the env's grade of the logged reply, on the eval item it names
    task = make_task("CalendarMath-v0", task="add_days")
    items = load_split("eval", 4, difficulty="easy", env=task)
    env = gym.make("CalendarMath-v0", mode="text", task="add_days")
    for name in ("base", "sft", "grpo"):
        lines = [json.loads(x) for x in (out / f"eval_{name}.jsonl").read_text().splitlines()]
        assert [line["item_id"] for line in lines] == [task.item_id(i) for i in items]
        for line, item in zip(lines, items, strict=True):
            env.reset(options={"item": item})
            _, reward, _, _, info = env.step(line["reply"])
            assert reward == pytest.approx(line["reward"]) and info["gold"] == line["gold"]


def test_grpo_from_a_saved_sft_model_on_a_curriculum(pipeline, tmp_path):
    """--curriculum: GRPO's items come from a curriculum over every level; its state is saved."""
    out = tmp_path / "curriculum"
    done = grpo_from_sft(pipeline, out, "--curriculum", "--difficulty", "")
    assert done.returncode == 0, done.stderr[-3000:]
    state = json.loads((out / "curriculum.json").read_text())
    # one step of two items, each a group of two completions, all reported
    assert state["groups"] == 2 and state["outcomes"] == 4 and state["levels"][0] == "easy"
    assert (out / "levels.png").is_file()
    results = json.loads((out / "results.json").read_text())
    assert results["curriculum"] == state
    assert results["grpo_zero_spread_share"] == state["zero_spread"] / 2
    # held out on the default mix, as the curriculum trains on every level
    task = make_task("CalendarMath-v0", task="add_days")
    lines = [json.loads(x) for x in (out / "eval_grpo.jsonl").read_text().splitlines()]
    with pytest.warns(UserWarning, match="keeps only the first 4"):
        expected = load_split("eval", 4, env=task)  # the mix's first 4 are curated
    assert [line["item_id"] for line in lines] == [task.item_id(i) for i in expected]


def test_curriculum_needs_the_mix():
    done = run("--curriculum", timeout=60)
    assert done.returncode == 2 and "--curriculum chooses the difficulty" in done.stderr


def test_a_second_arm_reuses_the_first_runs_base_and_sft_evaluations(pipeline, tmp_path):
    """--evals-from: the same eval items and SFT model, so their rows are copied, not rerun."""
    out = tmp_path / "again"
    done = grpo_from_sft(pipeline, out, "--evals-from", str(pipeline))
    assert done.returncode == 0, done.stderr[-3000:]
    first = json.loads((pipeline / "results.json").read_text())
    second = json.loads((out / "results.json").read_text())
    assert second["evals_from"] == str(pipeline)
    for name in ("base", "sft"):
        assert second["eval"][name] == first["eval"][name]
        assert (out / f"eval_{name}.jsonl").read_text() == (
            pipeline / f"eval_{name}.jsonl"
        ).read_text()
    assert second["paired"]["sft_minus_base"] == first["paired"]["sft_minus_base"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--eval-n", "3"], "does not grade these 3 eval items"),
        (["--difficulty", "medium"], "does not grade these 4 eval items"),
    ],
)
def test_reused_evaluations_must_grade_the_same_items(pipeline, tmp_path, args, message):
    done = grpo_from_sft(
        pipeline, tmp_path / "x", *args, "--evals-from", str(pipeline), timeout=120
    )
    assert done.returncode == 1 and message in done.stderr and "Traceback" not in done.stderr


def test_without_the_sft_model_only_the_base_evaluation_is_reused(pipeline, tmp_path):
    """A run cut short after its base evaluation restarts from it; its SFT is new, so the SFT
    model is evaluated afresh."""
    partial = tmp_path / "cut"
    partial.mkdir()
    (partial / "eval_base.jsonl").write_text((pipeline / "eval_base.jsonl").read_text())
    out = tmp_path / "restart"
    done = run(
        "--sft-n", "16", "--sft-batch", "8", *TINY, "--evals-from", str(partial),
        "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((out / "results.json").read_text())
    assert results["evals_from"] == str(partial)
    assert (out / "eval_base.jsonl").read_text() == (pipeline / "eval_base.jsonl").read_text()
    assert (out / "sft_model" / "config.json").exists()
    assert (out / "eval_sft.jsonl").is_file()


def test_dynamic_sampling_on_a_real_trainer(pipeline, tmp_path):
    """--spread-extra: flat groups are replaced through TRL's own generation; the counts
    add up and the curriculum hears about every group generated, kept or not."""
    out = tmp_path / "spread"
    done = grpo_from_sft(pipeline, out, "--curriculum", "--difficulty", "", "--spread-extra", "2")
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((out / "results.json").read_text())
    spread = results["spread"]
    assert spread["trained"] == 2  # one step of two prompts: the batch keeps its size
    assert 2 <= spread["generated"] <= 4 and spread["extra_generations"] <= 2
    assert spread["trained_flat"] <= spread["generated_flat"]
    assert results["curriculum"]["groups"] == spread["generated"]


def test_dynamic_sampling_needs_the_curriculum():
    done = run("--spread-extra", "2", timeout=60)
    assert done.returncode == 2 and "give --curriculum" in done.stderr
