"""``benchmarks/grpo_step_cost.py``: one GRPO step in TRL's GRPOTrainer and in the package's
own loop, at equal group sizes, on the tiny offline model (the timing itself is the real
model's, run by hand)."""

from __future__ import annotations

import importlib.util
from types import SimpleNamespace

import pytest
from paths import ROOT

pytest.importorskip("trl", reason='needs pip install "meeting-gym[trl]"')

from trl_tiny import tiny_qwen3


def load_benchmark():
    spec = importlib.util.spec_from_file_location(
        "grpo_step_cost", ROOT / "benchmarks" / "grpo_step_cost.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_both_engines_take_one_step_of_the_same_group_size_and_are_tabled(tmp_path, capsys):
    import torch
    from trl.chat_template_utils import qwen2_5_chat_template

    torch.manual_seed(0)
    model, tokenizer = tiny_qwen3(tmp_path)
    # the template of an --engine trl SFT folder (Qwen3's drops earlier turns' thinking, so
    # the own loop cannot label its turns)
    tokenizer.chat_template = qwen2_5_chat_template
    model.save_pretrained(tmp_path / "tiny")
    tokenizer.save_pretrained(tmp_path / "tiny")
    bench = load_benchmark()
    settings = SimpleNamespace(
        prompts=1,
        group=2,
        max_tokens=8,
        max_turns=2,
        max_completion=16,
        skip=3,
        temperature=1.0,
        lr=1e-4,
        seed=0,
        bf16=False,
        system_prompt=None,
    )
    rows = bench.measure(str(tmp_path / "tiny"), settings, ("own", "trl"))
    assert [r["engine"] for r in rows] == ["own", "trl"]
    for row in rows:
        assert row["rollouts"] == 2 and (row["prompts"], row["group"]) == (1, 2)
        assert row["wall_s"] > 0 and row["cpu_s"] > 0 and row["completion_tokens"] > 0
        assert 0.0 <= row["reward"] <= 1.2
    own = rows[0]
    assert own["rollout_wall_s"] + own["update_wall_s"] == pytest.approx(own["wall_s"], abs=0.02)
    # TRL caps a rollout's whole completion; the own loop each reply, for each turn
    assert rows[1]["completion_tokens"] <= 2 * 16 and own["completion_tokens"] <= 2 * 2 * 8
    text = bench.table(rows)
    assert text.splitlines()[2].startswith("| own | 1 x 2 |")
    assert text.splitlines()[3].startswith("| trl | 1 x 2 |")


def test_a_group_below_two_is_one_line(capsys):
    with pytest.raises(SystemExit):
        load_benchmark().main(["--group", "1"])
    assert "--group must be at least 2" in capsys.readouterr().err
