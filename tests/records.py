"""The environment record a results file carries (meeting_gym.evaluation.provenance), checked
field by field where a test reads one."""

from __future__ import annotations

from importlib import metadata
from typing import Any

from meeting_gym import __version__


def assert_environment_record(record: dict[str, Any], *, torch_loaded: bool = False) -> None:
    """The fields issue 51 names, each of the right kind; ``torch_loaded``: a run that used
    torch records its thread count and kernel level."""
    assert record["python"].count(".") == 2
    assert record["meeting_gym"]["version"] == __version__
    assert set(record["meeting_gym"]) == {"version", "commit", "dirty"}
    for name in ("torch", "transformers", "trl", "accelerate", "datasets", "numpy"):
        assert name in record["packages"]
    assert record["packages"]["numpy"] == metadata.version("numpy")
    assert set(record["torch"]) == {"threads", "cpu_capability"}
    if torch_loaded:
        assert record["torch"]["threads"] >= 1 and record["torch"]["cpu_capability"]
    assert set(record["cpu"]) == {"model", "machine", "vector_extensions", "logical_cores"}
    assert record["cpu"]["logical_cores"] >= 1
