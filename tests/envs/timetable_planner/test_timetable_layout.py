"""The TimetablePlanner domain stays pure: no gymnasium, numpy, global random or env import.

The package holds the pure domain (:data:`DOMAIN`) and, beside it, the env layer
(:data:`ENV_LAYER`: the task behind the family's seam, the interfaces, policies, pictures,
bench). Every module is one or the other, and imports run one way: the env layer may
import the domain, never the reverse.
"""

from __future__ import annotations

import pytest
from paths import ROOT
from purity import imports_of

PACKAGE = ROOT / "meeting_gym" / "envs" / "timetable_planner"
DOMAIN = (
    "__init__.py",
    "actions.py",
    "catalogue.py",
    "episode.py",
    "generator.py",
    "greedy.py",
    "observation.py",
    "problem.py",
    "scenario.py",
    "scoring.py",
    "solver.py",
    "view.py",
)
ENV_LAYER = (
    "agents.py",
    "bench.py",
    "best.py",
    "discrete.py",
    "env.py",
    "picture.py",
    "policies.py",
    "render.py",
    "sb3_policy.py",
    "sizes.py",
    "task.py",
    "tools.py",
)


def test_every_module_is_domain_or_env_layer():
    assert sorted(p.name for p in PACKAGE.glob("*.py")) == sorted(DOMAIN + ENV_LAYER)


@pytest.mark.parametrize("module", DOMAIN)
def test_domain_modules_import_nothing_but_the_standard_library_and_each_other(module):
    imported = imports_of(PACKAGE / module)
    roots = {name.split(".")[0] for name in imported}
    assert not roots & {"gymnasium", "gym", "numpy", "logging"}, imported
    ours = {name for name in imported if name.startswith("meeting_gym")}
    # core.bounded is standard library only (a bounded repr for error messages)
    allowed = ("meeting_gym.envs.timetable_planner", "meeting_gym.core.bounded")
    assert all(name.startswith(allowed) for name in ours), ours
    layer = {f"meeting_gym.envs.timetable_planner.{m[:-3]}" for m in ENV_LAYER}
    assert not ours & layer, f"{module} imports the env layer: {ours & layer}"
