"""pass@k and pass^k (meeting_gym.evaluation.passk) against a count over every subset, and
``meeting-gym eval --samples K`` against its own episodes."""

from __future__ import annotations

import itertools
import json
from types import SimpleNamespace

import pytest

from meeting_gym.cli import main
from meeting_gym.evaluation.passk import pass_at, pass_hat, pass_summary, solved_counts


def by_subsets(outcomes: list[bool], k: int) -> tuple[float, float]:
    """(any solved, all solved) over every k-subset of the outcomes: the definitions."""
    subsets = list(itertools.combinations(outcomes, k))
    return (
        sum(any(s) for s in subsets) / len(subsets),
        sum(all(s) for s in subsets) / len(subsets),
    )


@pytest.mark.parametrize("samples", [1, 2, 3, 5])
def test_the_estimators_equal_the_subset_counts(samples):
    for solved in range(samples + 1):
        outcomes = [True] * solved + [False] * (samples - solved)
        for k in range(1, samples + 1):
            any_, all_ = by_subsets(outcomes, k)
            assert pass_at(solved, samples, k) == pytest.approx(any_)
            assert pass_hat(solved, samples, k) == pytest.approx(all_)


def test_bad_counts_are_refused():
    for args in ((5, 4, 1), (-1, 4, 1), (2, 4, 0), (2, 4, 5)):
        with pytest.raises(ValueError):
            pass_at(*args)


def episode(reward: float, error: str | None = None) -> SimpleNamespace:
    return SimpleNamespace(reward=reward, error=error)


def test_solved_counts_need_the_items_best_and_no_error():
    results = [episode(1.2), episode(1.0), episode(1.2, "boom"), episode(0.5), episode(0.5)]
    results.append(episode(0.2))
    counts = solved_counts(results, ["a", "b", "c"], 2, {"a": 1.2, "b": 1.2, "c": 0.5}.get)
    assert counts == [1, 0, 1]
    with pytest.raises(ValueError, match="6 episodes for 2 items x 2 samples"):
        solved_counts(results, ["a", "b"], 2, lambda item: 1.0)


def test_pass_one_is_the_solved_share_and_pass_hat_falls():
    summary = pass_summary([0, 1, 2, 3, 4], 4)
    assert summary["pass@k"][1]["mean"] == summary["pass^k"][1]["mean"] == pytest.approx(0.5)
    ats = [summary["pass@k"][k]["mean"] for k in range(1, 5)]
    hats = [summary["pass^k"][k]["mean"] for k in range(1, 5)]
    assert ats == sorted(ats) and hats == sorted(hats, reverse=True)
    assert ats[-1] == pytest.approx(0.8) and hats[-1] == pytest.approx(0.2)


def run_json(capsys, *args: str) -> dict:
    assert main(["eval", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("split", ["curated", "eval"])
def test_eval_samples_reports_pass_at_and_pass_hat_from_its_own_episodes(capsys, split):
    args = ["--env", "MeetingSlot-v0", "--policy", "random", "--split", split, "-n", "12"]
    payload = run_json(capsys, *args, "--samples", "4", "--verbose")
    episodes = payload["episodes"]
    assert payload["rollouts"] == 4 and len(episodes) == 12 * 4
    # independently: group the episodes by item, 4 a row, solved = 1.2 (MeetingSlot's best)
    outcomes = [
        [e["reward"] >= 1.2 - 1e-9 and e["error"] is None for e in episodes[i : i + 4]]
        for i in range(0, len(episodes), 4)
    ]
    for k in range(1, 5):
        any_ = sum(by_subsets(o, k)[0] for o in outcomes) / len(outcomes)
        all_ = sum(by_subsets(o, k)[1] for o in outcomes) / len(outcomes)
        assert payload["pass"]["pass@k"][str(k)]["mean"] == pytest.approx(any_)
        assert payload["pass"]["pass^k"][str(k)]["mean"] == pytest.approx(all_)
    # gold solves every item every time
    gold = run_json(
        capsys, "--env", "MeetingSlot-v0", "--split", split, "-n", "5", "--samples", "4"
    )
    assert {v["mean"] for key in ("pass@k", "pass^k") for v in gold["pass"][key].values()} == {1.0}


def test_eval_samples_prints_the_lines_and_keeps_every_run(capsys, tmp_path):
    out = tmp_path / "rows.jsonl"
    args = ["eval", "--env", "CalendarMath-v0", "--policy", "random", "--samples", "3"]
    assert main([*args, "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "pass@3 " in text and "pass^3 " in text
    assert len(out.read_text().splitlines()) == 15 * 3  # the curated split's 15 items


def test_samples_and_rollouts_together_is_one_line(capsys):
    assert main(["eval", "--env", "CalendarMath-v0", "--samples", "2", "--rollouts", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--samples" in err[0]
