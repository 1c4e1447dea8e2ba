"""Replayable rows of curated episodes, for the tests that replay a model's logged rows."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from meeting_gym.evaluation.chat import replayable_row


def curated_rows(
    results: Iterable[Any], env_id: str, *, max_turns: int | None = None
) -> list[dict[str, Any]]:
    """The rows of text-protocol ``evaluate`` results on ``env_id``'s curated items 0, 1, ...

    Episode ``k`` was reset with seed ``k`` and options ``{"split": "curated", "index": k}``.
    """
    return [
        replayable_row(
            result,
            env=env_id,
            seed=k,
            options={"split": "curated", "index": k},
            tool_protocol="text",
            max_turns=max_turns,
        )
        for k, result in enumerate(results)
    ]
