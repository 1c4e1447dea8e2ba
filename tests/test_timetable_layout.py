"""The TimetablePlanner domain stays pure: no gymnasium, numpy, global random or env import."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "meeting_gym" / "envs" / "timetable_planner"


@pytest.mark.parametrize("module", sorted(p.name for p in PACKAGE.glob("*.py")))
def test_domain_modules_import_nothing_but_the_standard_library_and_each_other(module):
    tree = ast.parse((PACKAGE / module).read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module or "")
            # `from random import randint` would use the global generator
            assert node.module != "random", module
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "random"
        ):
            assert node.attr == "Random", f"{module} calls random.{node.attr}"
    roots = {name.split(".")[0] for name in imported}
    assert not roots & {"gymnasium", "gym", "numpy", "logging"}, imported
    ours = {name for name in imported if name.startswith("meeting_gym")}
    assert all(name.startswith("meeting_gym.envs.timetable_planner") for name in ours), ours
