"""Both multi-mode envs have one layout, and its layers import one way.

Each of MeetingSlot and TimetablePlanner is ``domain/`` (the rules: standard library only,
no gymnasium, numpy or global random, nothing from the env around it), ``discrete/`` (the
masked Discrete mode: numpy, no torch), ``render/`` (pictures), ``models/`` (the torch
networks, the only modules that import torch), and the family's seam beside them
(task, tools, env, policies, agents and the env's own view of its text; what measures an
env is in ``meeting_gym.bench`` since 0.4.0).
Before 0.3.0 TimetablePlanner was 22 modules in one folder and MeetingSlot cut differently;
the 0.2 module names still import, with a warning, until 0.4.0.
"""

from __future__ import annotations

import importlib
import sys
import warnings

import pytest
from paths import ROOT
from purity import imports_of

ENVS = {
    # worked_report: the marks of a worked-solutions model's rows (meeting-gym rows steps)
    "meeting_slot": {
        "agents", "env", "policies", "prompts", "rubric", "task", "tools", "worked_report",
    },
    "timetable_planner": {
        "agents", "env", "observation", "policies", "task", "tools", "view",
    },
}  # fmt: skip
FOLDERS = {"domain", "discrete", "render", "models"}


def package(env: str):
    return ROOT / "meeting_gym" / "envs" / env


@pytest.mark.parametrize("env", ENVS)
def test_the_layout_is_the_same_for_both(env):
    root = package(env)
    folders = {p.name for p in root.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders == FOLDERS
    assert {p.stem for p in root.glob("*.py")} == ENVS[env] | {"__init__"}


@pytest.mark.parametrize(
    ("env", "module"),
    [(env, p.stem) for env in ENVS for p in sorted((package(env) / "domain").glob("*.py"))],
)
def test_the_domain_imports_only_the_standard_library_and_itself(env, module):
    imported = imports_of(package(env) / "domain" / f"{module}.py")
    assert not {name.split(".")[0] for name in imported} & {"gymnasium", "numpy", "torch"}
    ours = {name for name in imported if name.startswith("meeting_gym")}
    allowed = (f"meeting_gym.envs.{env}.domain", "meeting_gym.core.bounded")
    assert all(name.startswith(allowed) for name in ours), ours


@pytest.mark.parametrize("env", ENVS)
def test_only_the_models_import_torch(env):
    for path in package(env).rglob("*.py"):
        roots = {name.split(".")[0] for name in imports_of(path)}
        assert ("torch" in roots) == (path.parent.name == "models" and path.stem != "__init__"), (
            path
        )


TT, MS = "meeting_gym.envs.timetable_planner", "meeting_gym.envs.meeting_slot"
OLD_NAMES = [
    (f"{TT}.solver", f"{TT}.domain.solver"),
    (f"{TT}.sizes", "meeting_gym.bench.timetable_sizes"),
    (f"{MS}.encoders", f"{MS}.discrete"),
    (f"{MS}.encoders.actions", f"{MS}.discrete.actions"),
    (f"{MS}.sb3_policy", f"{MS}.models.sb3_policy"),
    # 0.4.0: what measures an env left it (an env stands on core alone)
    (f"{TT}.discrete.sizes", "meeting_gym.bench.timetable_sizes"),
    (f"{TT}.bench", "meeting_gym.bench.timetable_planner"),
    (f"{MS}.bench", "meeting_gym.bench.meeting_slot"),
    ("meeting_gym.envs.cron_schedule.bench", "meeting_gym.bench.cron_schedule"),
    ("meeting_gym.envs.calendar_math.bench", "meeting_gym.bench.calendar_math"),
]


@pytest.mark.parametrize(("old", "new"), OLD_NAMES)
def test_a_0_2_module_name_still_imports_the_same_module_with_a_warning(old, new):
    sys.modules.pop(old, None)
    with warnings.catch_warnings():  # the old parent package's own warning, if any, first
        warnings.simplefilter("ignore")
        importlib.import_module(old.rsplit(".", 1)[0])
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {new}"):
        moved = importlib.import_module(old)
    assert moved is importlib.import_module(new)  # one module: its classes are the same


def test_the_new_names_import_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _, new in OLD_NAMES:
            importlib.import_module(new)


@pytest.mark.parametrize(
    ("old", "cls"),
    [(f"{MS}.sb3_policy", "PointerPolicy"), (f"{TT}.sb3_policy", "SpotPolicy")],
)
def test_a_pickle_that_names_a_0_2_module_still_loads(old, cls):
    """A model saved by 0.2 names its policy class by the old module (SB3 pickles it)."""
    import pickle

    pytest.importorskip("sb3_contrib")
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match="moved to"):
        loaded = pickle.loads(f"c{old}\n{cls}\n.".encode())
    new = old.replace(".sb3_policy", ".models.sb3_policy")
    assert loaded is getattr(importlib.import_module(new), cls)
