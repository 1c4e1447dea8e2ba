"""``benchmarks/grpo_step_cost.py``: one GRPO step in TRL's GRPOTrainer and in the package's
own loop, at equal group sizes, on the tiny offline model, run as a user runs it (the timing
itself is the real model's, run by hand; its table is recomputed from its rows)."""

from __future__ import annotations

import json
import subprocess

import pytest
from page_tables import assert_page_table_is_recomputed
from paths import assert_one_line_error, run_benchmark

pytest.importorskip("trl", reason='needs pip install "meeting-gym[trl]"')

from trl_tiny import tiny_qwen3


def bench(*args: str) -> subprocess.CompletedProcess[str]:
    """``benchmarks/grpo_step_cost.py ARGS`` as a user runs it."""
    return run_benchmark("grpo_step_cost.py", *args, timeout=600)


def saved_run(stdout: str) -> dict:
    """The ``--json`` run printed after the table (TRL prints its log lines before it)."""
    lines = stdout.splitlines()
    return json.loads("\n".join(lines[lines.index("{") :]))


def test_both_engines_take_one_step_of_the_same_group_size_and_are_tabled(tmp_path):
    import torch
    from trl.chat_template_utils import qwen2_5_chat_template

    torch.manual_seed(0)
    model, tokenizer = tiny_qwen3(tmp_path)
    # the template of an --engine trl SFT folder (Qwen3's drops earlier turns' thinking, so
    # the own loop cannot label its turns)
    tokenizer.chat_template = qwen2_5_chat_template
    model.save_pretrained(tmp_path / "tiny")
    tokenizer.save_pretrained(tmp_path / "tiny")
    done = bench(
        *("--model", str(tmp_path / "tiny"), "--prompts", "1", "--group", "2"),
        *("--max-tokens", "8", "--max-turns", "2", "--max-completion", "16", "--skip", "3"),
        *("--lr", "1e-4", "--no-bf16", "--system-prompt", "env", "--json"),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    # progress from the first seconds, one line an engine at least
    assert "engine 1/2: own" in done.stderr and "engine 2/2: trl" in done.stderr
    run = saved_run(done.stdout)
    rows = run["rows"]
    assert [r["engine"] for r in rows] == ["own", "trl"]
    for row in rows:
        assert row["rollouts"] == 2 and (row["prompts"], row["group"]) == (1, 2)
        assert row["wall_s"] > 0 and row["cpu_s"] > 0 and row["completion_tokens"] > 0
        assert 0.0 <= row["reward"] <= 1.2
    own = rows[0]
    assert own["rollout_wall_s"] + own["update_wall_s"] == pytest.approx(own["wall_s"], abs=0.02)
    # TRL caps a rollout's whole completion; the own loop each reply, for each turn
    assert rows[1]["completion_tokens"] <= 2 * 16 and own["completion_tokens"] <= 2 * 2 * 8
    assert "torch" in run["environment"]["packages"]  # the libraries it was measured on
    table = done.stdout.split("\n{\n")[0].splitlines()
    assert any(line.startswith("| own | 1 x 2 |") for line in table)
    assert any(line.startswith("| trl | 1 x 2 |") for line in table)
    saved = tmp_path / "run.json"
    saved.write_text(json.dumps(run))
    again = bench("--table", str(saved))
    assert again.returncode == 0 and again.stdout.splitlines()[2].startswith("| own | 1 x 2 |")


def test_a_group_below_two_is_one_line():
    assert_one_line_error(bench("--group", "1"), "--group must be at least 2")


def test_a_file_that_is_not_a_saved_run_is_one_line(tmp_path):
    bad = tmp_path / "rows.json"
    bad.write_text("[1, 2]")
    assert_one_line_error(bench("--table", str(bad)), "is not a saved run")


def test_the_guide_s_step_cost_table_is_its_rows_table():
    command = (
        "python benchmarks/grpo_step_cost.py --table docs/results/rows/grpo_step_cost/1x4.json"
    )
    assert_page_table_is_recomputed("docs/guides/training-llms.md", command)
