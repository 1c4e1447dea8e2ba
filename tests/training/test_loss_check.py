"""The SFT loss check: four seeded SFT steps on the bundled model give the recorded losses
under the pinned libraries (constraints/train.txt, constraints/sft-loss-reference.json).

This is the test that notices a library upgrade which changes training numerics: bump a pin
(say transformers) and, where the new release sums differently, CI fails here naming the step,
the values and the versions that differ from the reference's."""

from __future__ import annotations

import copy
import json

import pytest

from meeting_gym.agentkit.local import resolve_model
from meeting_gym.training.loss_check import (
    OTHER_CPU_TOLERANCE,
    REFERENCE,
    compare,
    cpu_key,
    record,
)

pytest.importorskip("trl", reason='needs pip install "meeting-gym[trl,local]"')
pytest.importorskip("gguf", reason='needs pip install "meeting-gym[local]"')
try:
    resolve_model("smollm2")
except ValueError as exc:
    pytest.skip(str(exc), allow_module_level=True)


@pytest.fixture(scope="module")
def measured():
    from meeting_gym.training.loss_check import sft_losses

    return sft_losses()


def test_the_short_sft_gives_the_recorded_losses(measured):
    references = json.loads(REFERENCE.read_text())
    verdict = compare(measured, references)
    assert verdict.ok, verdict.text()
    assert len(measured["loss"]) == 4  # 16 items in batches of 4


def test_the_comparison_is_exact_on_a_recorded_cpu(measured):
    reference = copy.deepcopy(measured)
    assert compare(measured, [reference]).how.startswith("equal to the digit")
    reference["grad_norm"][2] = reference["grad_norm"][2] * (1 + 1e-12)
    verdict = compare(measured, [reference])
    assert not verdict.ok
    assert verdict.mismatches[0].startswith("step 3 grad_norm:")
    # the report says which versions differ from the reference's
    reference["environment"]["packages"]["transformers"] = "0.0.1"
    assert "transformers: 0.0.1 != " in compare(measured, [reference]).text()


def test_another_cpu_is_compared_within_the_tolerance(measured):
    reference = copy.deepcopy(measured)
    reference["environment"]["cpu"]["model"] = "another CPU"
    reference["loss"][0] *= 1 + OTHER_CPU_TOLERANCE / 2
    verdict = compare(measured, [reference])
    assert verdict.ok and "no reference for this CPU" in verdict.how
    reference["loss"][0] *= 1 + 2 * OTHER_CPU_TOLERANCE
    assert not compare(measured, [reference]).ok


def test_record_replaces_only_this_cpus_reference(measured, tmp_path):
    path = tmp_path / "ref.json"
    other = copy.deepcopy(measured)
    other["environment"]["cpu"]["model"] = "another CPU"
    record(other, path)
    record(measured, path)
    record(measured, path)
    saved = json.loads(path.read_text())
    assert [cpu_key(r["environment"])["model"] for r in saved] == [
        "another CPU",
        measured["environment"]["cpu"]["model"],
    ]
