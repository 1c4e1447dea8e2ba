"""The 23-scenario catalogue: package data with attribution, strict lookups."""

from __future__ import annotations

import json

import pytest
from paths import ROOT
from timetable_fixtures import reference

from meeting_gym.envs.timetable_planner.domain import catalogue
from meeting_gym.envs.timetable_planner.domain.catalogue import (
    ATTRIBUTION,
    CATALOGUE_IDS,
    GENERATED_IDS,
    HANDCRAFTED_IDS,
    UnknownScenario,
    first_of_difficulty,
    get_scenario,
    handcrafted,
    handcrafted_dicts,
)


def test_ids():
    assert len(HANDCRAFTED_IDS) == 15 and len(GENERATED_IDS) == 8
    assert len(set(CATALOGUE_IDS)) == 23
    assert HANDCRAFTED_IDS[:4] == ("easy_1", "easy_2", "easy_3", "easy_4")
    assert GENERATED_IDS[0] == "gen_easy_1001" and GENERATED_IDS[-1] == "gen_expert_4002"
    for scenario_id in CATALOGUE_IDS:
        assert get_scenario(scenario_id).scenario_id == scenario_id
    assert [s.scenario_id for s in handcrafted()] == list(HANDCRAFTED_IDS)


def test_defect_D7_unknown_ids_and_difficulties_are_errors():
    """Old: an unknown scenario_id or task_name silently gave the next round-robin
    scenario (``"nope"`` -> easy_1, ``"HARD_4"`` -> whatever came next). New: an error that
    lists what exists; ids are case-sensitive as before."""
    for bad in ("nope", "HARD_4", "gen_hard_5", 7, None):
        with pytest.raises(UnknownScenario) as caught:
            get_scenario(bad)  # type: ignore[arg-type]
        assert str(caught.value).startswith(f"unknown scenario_id {bad!r}; choose one of easy_1, ")
        assert isinstance(caught.value, KeyError)
    with pytest.raises(UnknownScenario, match="unknown task_name 'nightmare'; choose one of easy"):
        first_of_difficulty("nightmare")


def test_task_name_gives_the_first_scenario_of_the_difficulty():
    assert first_of_difficulty("easy").scenario_id == "easy_1"
    assert first_of_difficulty(" Hard ").scenario_id == "hard_1"
    assert first_of_difficulty("EXPERT").scenario_id == "expert_1"
    assert first_of_difficulty("medium").scenario_id == "medium_1"


def test_package_data_is_the_reference_data_unchanged():
    shipped = handcrafted_dicts()
    assert shipped == reference("scenarios.json")["scenarios"]


def test_attribution_names_the_source_and_the_missing_license():
    text = catalogue.data_file("data/scenarios.json").read_text()
    source = json.loads(text)["source"]
    assert source["repo"] == "ajay-sreeram/timetable_planner" and source["commit"] == "2659ae6"
    assert "no LICENSE file" in source["license"]
    for where in (ATTRIBUTION, catalogue.__doc__):
        assert "ajay-sreeram/timetable_planner" in where and "2659ae6" in where
        assert "LICENSE" in where


def test_the_data_file_is_declared_as_package_data():
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    data = config["tool"]["setuptools"]["package-data"]
    assert "data/*.json" in data["meeting_gym.envs.timetable_planner"]
