"""examples/train_tool_env.py on the real model (tiny settings): export, SFT, GRPO, eval.

SFT is stopped after its first step (``--phase-minutes 0``) and resumed by a second run,
which must take the same steps from the checkpoint. The checkpoint it saves is then
evaluated by ``meeting-gym eval --policy local --model FOLDER --system-prompt short``: the
same rendering and prompt as the pipeline's own evaluation, so the same greedy replies.
One GRPO step over whole episodes follows: every reward it logged is the env's grade of
that episode replayed on a fresh env.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from paths import ROOT
from records import assert_environment_record

from meeting_gym.agentkit.local import resolve_model
from meeting_gym.evaluation.replay import replay_row

pytest.importorskip("transformers", reason='needs pip install "meeting-gym[local]"')
try:
    resolve_model("smollm2")
except ValueError as exc:
    pytest.skip(str(exc), allow_module_level=True)

SCRIPT = ROOT / "examples" / "train_tool_env.py"
TINY = [
    "--episodes", "4", "--batch", "2", "--micro-batch", "2", "--save-every", "1",
    "--eval-n", "3", "--eval-batch", "3", "--max-turns", "3", "--max-tokens", "24",
]  # fmt: skip


def rollouts_of(out) -> list[dict]:
    return [json.loads(x) for x in (out / "grpo" / "rollouts.jsonl").read_text().splitlines()]


def run(*args: str) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *TINY, *args], capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_the_pipeline_resumes_sft_and_its_checkpoint_evaluates_the_same_from_the_cli(tmp_path):
    out = tmp_path / "run"
    first = run("--out", str(out), "--phases", "export,sft", "--phase-minutes", "0")
    assert "SFT stopped after 1 steps (checkpointed)" in first.stdout
    # every phase says what it does from its first second, then step k/N (issue 49)
    said = first.stderr.splitlines()
    assert any(line.startswith("sft: loading ") for line in said), first.stderr[-2000:]
    assert "sft: 4 episodes, 2 steps of 2 (resumed if saved)" in said
    assert any(line.startswith("sft: step 1/2, loss ") and "ETA" in line for line in said)
    assert not (out / "sft_model").exists()
    episodes = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(episodes) == 4 and all(e["reward"] == 1.2 for e in episodes)
    evaluated = run("--out", str(out), "--phases", "sft,eval")
    # the held-out episodes say how far they are (a status line, written to a log file)
    assert "local model: 3/3 episodes" in evaluated.stderr, evaluated.stderr[-2000:]
    log = json.loads((out / "sft" / "sft_log.json").read_text())
    assert [e["step"] for e in log] == [1, 2]  # step 1 from the first run, step 2 resumed
    assert (out / "sft_model" / "config.json").is_file()
    results = json.loads((out / "results.json").read_text())
    assert set(results["summary"]) == {"gold", "naive", "random", "sft"}
    # the eval sitting's environment, and one record per phase sitting (SFT resumed: two)
    assert_environment_record(results["environment"])
    assert [r["phase"] for r in results["phase_environments"]][-2:] == ["sft", "eval"]
    assert results["summary"]["gold"]["mean_tool_calls"] > 0
    table = (out / "table.md").read_text()
    assert "paired sft - naive" in table
    for level, d in results["summary"]["sft"]["by_difficulty"].items():  # the per-level rows
        assert f"| sft | {level} | {d['n']} | {d['reward']['mean']:.3f} ± " in table
    rows = [json.loads(line) for line in (out / "eval_sft.jsonl").read_text().splitlines()]
    assert len(rows) == 3
    rows.sort(key=lambda r: r["options"]["index"])  # written as the episodes ended
    for row in rows:
        assert replay_row(row).breakdown() == row["breakdown"]
    # a stopped evaluation resumes on the items whose rows it did not write (rows are
    # written as episodes end: here only the second), with the seeds of an unbroken run
    rows_file = out / "eval_sft.jsonl"
    rows_file.write_text(json.dumps(rows[1]) + "\n")
    resumed = run("--out", str(out), "--phases", "eval")
    assert "eval sft: resuming, 1 items written, 2 left" in resumed.stderr, resumed.stderr[-2000:]
    again_rows = [json.loads(line) for line in rows_file.read_text().splitlines()]
    assert again_rows[0] == rows[1]
    assert sorted(again_rows, key=lambda r: r["options"]["index"]) == rows
    again = run("--out", str(out), "--phases", "eval")
    assert "eval sft: read back from eval_sft.jsonl" in again.stderr
    assert (out / "curve.png").is_file() and (out / "curve.csv").is_file()
    times = json.loads((out / "times.json").read_text())
    assert set(times) == {"export", "sft", "eval"}

    cli_rows = tmp_path / "cli.jsonl"
    command = [
        sys.executable, "-m", "meeting_gym.cli", "eval", "--env", "MeetingSlot-v0",
        "--policy", "local", "--model", str(out / "sft_model"), "--system-prompt", "short",
        "--split", "eval", "-n", "3", "--seed", "42", "--max-turns", "3", "--max-tokens", "24",
        "--max-concurrent", "3", "--out", str(cli_rows),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), done.stderr[-2000:]  # 1: nothing scored is possible
    from_cli = [json.loads(line) for line in cli_rows.read_text().splitlines()]
    assert [r["transcript"] for r in from_cli] == [r["transcript"] for r in rows]

    grpo = run(
        "--out", str(out), "--phases", "grpo", "--grpo-steps", "1", "--prompts", "1",
        "--group", "2", "--redraws", "0",
    )  # fmt: skip
    assert "grpo:" in grpo.stderr
    said = grpo.stderr.splitlines()
    assert "grpo: loading the SFT model ..." in said
    assert "grpo: 1 steps to take of 1, 1 items x 2 episodes each" in said
    # the rollouts' own line while they play (the smallest step ran 745 s silent before)
    assert any(line.startswith("grpo step 1/1 rollouts: 2/2 episodes, ") for line in said)
    assert any(line.startswith("grpo: step 1/1, reward ") for line in said), grpo.stderr[-2000:]
    [entry] = json.loads((out / "grpo" / "grpo_log.json").read_text())
    assert entry["step"] == 1 and entry["groups_drawn"] == 1
    assert entry["groups_trained"] + entry["groups_without_spread"] == 1
    assert entry["answers_per_group"] == len({str(r["answer"]) for r in rollouts_of(out)})
    # the page's per-step table of a run's groups reads the same rows
    table = subprocess.run(
        [sys.executable, "-m", "meeting_gym.cli", "rows", "groups",
         str(out / "grpo" / "rollouts.jsonl"), "--group", "2"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    exact = int(sum(r["breakdown"]["exact_match"] for r in rollouts_of(out)))
    line = f"| 1 | 1 | {entry['answers_per_group']:.2f} | {exact} of 2 |"
    assert table.returncode == 0 and line in table.stdout.splitlines(), table.stdout
    assert (out / "grpo_model" / "config.json").is_file()
    rollouts = [json.loads(x) for x in (out / "grpo" / "rollouts.jsonl").read_text().splitlines()]
    assert len(rollouts) == 2 and all(r["step"] == 1 for r in rollouts)
    assert entry["reward"] == pytest.approx(sum(r["breakdown"]["reward"] for r in rollouts) / 2)
    for row in rollouts:  # the logged reward is the env's grade of the episode replayed
        replay = replay_row(row)
        assert replay.mismatches == [] and replay.breakdown() == row["breakdown"]
    # the update timed both ways on this step's rows (rewards set apart so the group spreads)
    spread = tmp_path / "spread.jsonl"
    spread.write_text(
        "".join(
            json.dumps({**r, "breakdown": {**r["breakdown"], "reward": 1.2 - k}}) + "\n"
            for k, r in enumerate(rollouts)
        )
    )
    bench = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "grpo_update.py"), str(spread),
         "--model", str(out / "sft_model"), "--group", "2", "--no-bf16"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert bench.returncode == 0, bench.stderr[-2000:]
    assert "step 1: 1 groups, 2 episodes" in bench.stdout
    differs = bench.stdout.splitlines()[-1]  # in float32 the two are the same gradient
    assert differs.startswith("gradients differ by ") and float(differs.split()[3]) < 1e-4
    again = run("--out", str(out), "--phases", "eval", "--models", "sft")
    assert "eval sft: read back from eval_sft.jsonl" in again.stderr
    reread = json.loads((out / "results.json").read_text())
    assert reread["summary"]["sft"] == results["summary"]["sft"]

    # GRPO branching each group from the last turn of the item's greedy episode
    branched = tmp_path / "branched"
    branched.mkdir()
    (branched / "sft_model").symlink_to(out / "sft_model")
    settings = [
        "--out", str(branched), "--phases", "grpo", "--grpo-steps", "2", "--prompts", "1",
        "--group", "2", "--redraws", "0", "--kl", "0.05", "--rollout", "last-turn",
    ]  # fmt: skip
    stopped = run(*settings, "--phase-minutes", "0")
    assert "GRPO stopped after 1 steps (saved)" in stopped.stdout
    # the greedy pass and the branches each count in the rollouts' line: 1 + 2 episodes
    said = stopped.stderr.splitlines()
    assert any(line.startswith("grpo step 1/2 rollouts: 3/3 episodes, ") for line in said)
    [entry] = json.loads((branched / "grpo" / "grpo_log.json").read_text())
    assert entry["rollout"] == "last-turn"
    # the first step's policy is the SFT model itself: no distance from the reference yet
    assert entry["kl_beta"] == 0.05 and entry["kl"] == pytest.approx(0.0, abs=1e-3)
    [greedy] = [
        json.loads(x) for x in (branched / "grpo" / "greedy.jsonl").read_text().splitlines()
    ]
    assert entry["greedy_reward"] == greedy["breakdown"]["reward"]
    # resident memory through the step, on Linux: the model's weights at least
    memory = [entry[k] for k in ("rss_rollouts_gb", "rss_gb", "rss_trimmed_gb", "peak_rss_gb")]
    if sys.platform.startswith("linux"):
        assert min(memory) > 0.2 and max(memory) == entry["peak_rss_gb"]
    opening = [m["content"] for m in greedy["transcript"] if m["role"] == "assistant"][:-1]
    assert greedy["finish_reasons"] and "scripted" not in greedy["finish_reasons"]
    branches = rollouts_of(branched)
    assert len(branches) == 2
    for row in [greedy, *branches]:
        replay = replay_row(row)
        assert replay.mismatches == [] and replay.breakdown() == row["breakdown"]
    for row in branches:  # each opens with the greedy episode's turns but its last, scripted
        replies = [m["content"] for m in row["transcript"] if m["role"] == "assistant"]
        assert replies[: len(opening)] == opening
        assert row["finish_reasons"][: len(opening)] == ["scripted"] * len(opening)
        assert "scripted" not in row["finish_reasons"][len(opening) :]
        assert row["options"] == greedy["options"]
    with pytest.raises(AssertionError, match="began with --rollout last-turn: resume it so"):
        run(*settings[:-2])
    with pytest.raises(AssertionError, match=r"began with --kl 0\.05: resume it so"):
        run(*settings[:-4], *settings[-2:])
    run(*settings)  # the second step: the policy has moved from the SFT model
    second = json.loads((branched / "grpo" / "grpo_log.json").read_text())[1]
    assert second["kl_beta"] == 0.05 and second["kl"] > 0

    # GRPO from a curriculum: stopped after its first step, resumed with its curriculum
    other = tmp_path / "curriculum"
    other.mkdir()
    shutil.copytree(out / "sft_model", other / "sft_model")
    settings = [
        "--out", str(other), "--phases", "grpo", "--curriculum", "--grpo-steps", "2",
        "--prompts", "1", "--group", "2", "--redraws", "0", "--curriculum-replay", "0",
        "--curriculum-up-to", "hard",
    ]  # fmt: skip
    first = run(*settings, "--phase-minutes", "0")
    assert "GRPO stopped after 1 steps (saved)" in first.stdout
    saved = json.loads((other / "grpo" / "curriculum.json").read_text())
    assert saved["drawn"] == {"easy": 1, "medium": 0, "hard": 0}
    # a run resumes as it began: not without its curriculum, and a plain run not with one
    plain = [*settings[:2], "--phases", "grpo", "--grpo-steps", "2", "--prompts", "1"]
    with pytest.raises(AssertionError, match="began with --curriculum: resume it with"):
        run(*plain)
    shutil.copytree(other / "grpo", tmp_path / "plain" / "grpo")
    (tmp_path / "plain" / "grpo" / "curriculum.json").unlink()  # as a plain run leaves it
    (tmp_path / "plain" / "sft_model").symlink_to(other / "sft_model")
    with pytest.raises(AssertionError, match="began without --curriculum: resume it without"):
        run("--out", str(tmp_path / "plain"), *settings[2:])
    # a step stopped before its save left rows behind: the resumed run drops them
    with open(other / "grpo" / "rollouts.jsonl", "a") as handle:
        handle.write(json.dumps({"step": 2, "unsaved": True}) + "\n")
    run(*settings)
    log = json.loads((other / "grpo" / "grpo_log.json").read_text())
    assert [e["step"] for e in log] == [1, 2] and log[0]["levels"] == {"easy": 1}
    rollouts = [json.loads(x) for x in (other / "grpo" / "rollouts.jsonl").read_text().splitlines()]
    # the resumed run drew the curriculum's next item, not its first again
    assert [r["options"]["index"] for r in rollouts] == [0, 0, 1, 1]
    assert {r["options"]["difficulty"] for r in rollouts} == {"easy"}
    for row in rollouts:
        replay = replay_row(row)
        assert replay.mismatches == [] and replay.breakdown() == row["breakdown"]
    with pytest.raises(AssertionError, match="chooses the difficulty itself"):
        run("--out", str(other), "--phases", "grpo", "--curriculum", "--difficulty", "easy")
