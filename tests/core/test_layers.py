"""The layers of the package: nothing imports back up, and moved names keep working.

core (the env contract: tasks, the text env, the action grammar, the episode loop, the
policy interface) imports only core; each env imports only core and itself; agentkit
(language-model agents) imports only core and itself; adapters, agents, evaluation and
training import no env, and evaluation nothing of training;
no folder imports in a cycle; an env made and stepped in text mode loads no agent, model
client or adapter. Read statically (every import, in functions too) and checked live in a
fresh interpreter.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import meeting_gym

PACKAGE = Path(meeting_gym.__file__).resolve().parent

# what each layer may import from the package
ALLOWED = {
    "core": ("meeting_gym.core",),
    "agentkit": ("meeting_gym.core", "meeting_gym.agentkit"),
    # adapters and agents serve every env, so they name none (an env says what it needs
    # through its Task: prompts, policies, recipes by "module:Class")
    "adapters": ("meeting_gym.core", "meeting_gym.agentkit", "meeting_gym.adapters"),
    "agents": (
        "meeting_gym.core",
        "meeting_gym.agentkit",
        "meeting_gym.adapters",
        "meeting_gym.agents",
    ),
    # evaluation never trains: training stands on it, never the other way (issue 49)
    "evaluation": (
        "meeting_gym.core",
        "meeting_gym.agentkit",
        "meeting_gym.agents",
        "meeting_gym.evaluation",
    ),
    "training": (
        "meeting_gym.core",
        "meeting_gym.agentkit",
        "meeting_gym.adapters",
        "meeting_gym.agents",
        "meeting_gym.evaluation",
        "meeting_gym.training",
    ),
}


def imported(path: Path) -> list[str]:
    """Every ``meeting_gym`` module a file imports, at the top or inside functions."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
    return [n for n in names if n.split(".")[0] == "meeting_gym"]


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_a_layer_imports_nothing_above_it(layer: str) -> None:
    wrong = [
        f"{path.relative_to(PACKAGE)} imports {name}"
        for path in sorted((PACKAGE / layer).rglob("*.py"))
        for name in imported(path)
        if not name.startswith(ALLOWED[layer])
        # `import meeting_gym` registers the env ids (the package's face, no env module)
        and not (name == "meeting_gym" and layer != "core")
    ]
    assert not wrong, "\n".join(wrong)


def env_wrong_imports(env_dir: Path) -> list[str]:
    """What the modules of one env import from the package outside core and that env."""
    own = f"meeting_gym.envs.{env_dir.name}"
    return [
        f"{path.relative_to(env_dir.parent)} imports {name}"
        for path in sorted(env_dir.rglob("*.py"))
        for name in imported(path)
        if not (
            name.startswith(("meeting_gym.core.", own + ".")) or name in (own, "meeting_gym.core")
        )
    ]


ENV_DIRS = sorted(p for p in (PACKAGE / "envs").iterdir() if (p / "__init__.py").exists())


@pytest.mark.parametrize("env_dir", ENV_DIRS, ids=lambda p: p.name)
def test_an_env_stands_on_core_alone(env_dir: Path) -> None:
    """An env imports core and itself, nothing else of the package (issue 49): what drives,
    trains or measures it (policies' interface aside, which is core's) names it by string."""
    wrong = env_wrong_imports(env_dir)
    assert not wrong, "\n".join(wrong)


def test_the_env_layer_check_catches_an_import_from_above(tmp_path: Path) -> None:
    env = tmp_path / "some_env"
    (env / "domain").mkdir(parents=True)
    (env / "__init__.py").write_text("from meeting_gym.core.moved import alias_modules\n")
    (env / "domain" / "rules.py").write_text(
        "from meeting_gym.envs.some_env.domain import x\n"
        "def f():\n    from meeting_gym.agents.policies import Policy\n"
        "import meeting_gym.envs.other_env.task\n"
    )
    found = sorted(line.split(" imports ")[1] for line in env_wrong_imports(env))
    assert found == ["meeting_gym.agents.policies", "meeting_gym.envs.other_env.task"]


def unit(module: str) -> str:
    """The folder (or top module) of the package a module is in; each env is its own."""
    parts = module.split(".")
    if len(parts) > 2 and parts[1] == "envs":
        return ".".join(parts[1:3])
    return parts[1] if len(parts) > 1 else "meeting_gym"


def test_no_import_runs_in_a_cycle_across_folders() -> None:
    """Folders (core, each env, agents, adapters, ...) import in one direction only."""
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        source = unit(".".join(p for p in parts if p != "__init__"))
        for name in imported(path):
            if unit(name) != source:
                graph.setdefault(source, set()).add(unit(name))

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for step in graph.get(start, ()):
            if step == goal or (step not in seen and reaches(step, goal, seen | {step})):
                return True
        return False

    cycles = sorted(
        f"{a} -> {b} -> ... -> {a}" for a in graph for b in graph[a] if reaches(b, a, {b})
    )
    assert not cycles, "\n".join(cycles)
    for env in (u for u in graph if u.startswith("envs.")):
        assert graph[env] <= {"core"}, (env, graph[env])


CHILD = """
import json, sys
import gymnasium, meeting_gym
for env_id in meeting_gym.ENV_IDS:
    env = gymnasium.make(env_id, mode="text")
    for action in ("not an action", "<answer>NONE</answer>"):
        env.reset(seed=0)
        env.step(action)
print(json.dumps(sorted(sys.modules)))
"""


def test_a_text_env_loads_no_agent_client_or_adapter() -> None:
    out = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    loaded = json.loads(out.splitlines()[-1])
    above = (
        "meeting_gym.agents",
        "meeting_gym.agentkit",
        "meeting_gym.adapters",
        "meeting_gym.cli",
    )
    heavy = ("torch", "transformers", "openai", "ray", "stable_baselines3", "trl")
    wrong = [m for m in loaded if m.startswith(above) or m.split(".")[0] in heavy]
    assert not wrong, wrong


OPTIONAL = """
import sys, gymnasium, meeting_gym, meeting_gym.cli, meeting_gym.evaluation.evaluate
from meeting_gym.core.registry import load_object
import meeting_gym.envs.meeting_slot.agents, meeting_gym.envs.timetable_planner.agents
for env_id in meeting_gym.ENV_IDS:
    for mode in load_object(gymnasium.spec(env_id).entry_point).modes:
        gymnasium.make(env_id, mode=mode, render_mode="ansi").reset(seed=0)
optional = {"torch", "stable_baselines3", "sb3_contrib", "ortools", "PIL", "openai",
            "transformers", "ray", "trl", "verifiers", "matplotlib", "uvicorn"}
print(sorted(optional & {m.split(".")[0] for m in sys.modules}))
"""


def test_the_package_the_cli_and_every_env_load_no_optional_dependency():
    done = subprocess.run(
        [sys.executable, "-c", OPTIONAL], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("old", "name", "new"),
    [
        ("meeting_gym.agentkit", "parse_action", "meeting_gym.core.protocol"),
        ("meeting_gym.agentkit", "ToolSet", "meeting_gym.core.tools"),
        ("meeting_gym.agentkit.protocol", "AnswerAction", "meeting_gym.core.protocol"),
        ("meeting_gym.agentkit.tools", "is_error", "meeting_gym.core.tools"),
        ("meeting_gym.agents.rollout", "play", "meeting_gym.core.loop"),
        ("meeting_gym.agents.rollout", "AgentError", "meeting_gym.core.loop"),
        ("meeting_gym.agents.rollout", "TextPolicyAgent", "meeting_gym.agents.policies"),
        ("meeting_gym", "solve", "meeting_gym.envs.meeting_slot.domain.solver"),
        ("meeting_gym", "Scenario", "meeting_gym.envs.meeting_slot.domain.scenario"),
        ("meeting_gym", "grade", "meeting_gym.envs.meeting_slot.rubric"),
    ],
)
def test_a_moved_name_still_works_and_says_where_it_went(old: str, name: str, new: str) -> None:
    import importlib

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = getattr(importlib.import_module(old), name)
    assert value is getattr(importlib.import_module(new), name)
    assert [str(w.message) for w in caught if w.category is DeprecationWarning] == [
        f"{old}.{name} moved to {new}.{name} in meeting_gym 0.3.0; the old name goes in 0.4.0"
    ]
    # the warning points at the caller's line, not at the alias machinery
    assert caught[0].filename == __file__


def test_an_unknown_name_is_an_attribute_error() -> None:
    import meeting_gym.agentkit as kit
    import meeting_gym.agentkit.protocol as old_protocol

    for module in (kit, old_protocol):
        with pytest.raises(AttributeError, match="no attribute 'nope'"):
            module.nope  # noqa: B018
        with pytest.raises(AttributeError):
            module._private  # noqa: B018


# 0.3.0's aliases of core.protocol and core.tools, kept while the names they hand on are
ALIAS_MODULES = {"agentkit/protocol.py", "agentkit/tools.py"}


def test_no_module_name_repeats_across_packages() -> None:
    """Outside the envs (which share one layout by design), a module's name says what it is
    in one place only: no ``llm.py`` in two packages (issue 49)."""
    seen: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("envs/") or path.name == "__init__.py" or rel in ALIAS_MODULES:
            continue
        seen.setdefault(path.name, []).append(rel)
    repeated = {name: where for name, where in seen.items() if len(where) > 1}
    assert not repeated, repeated


def test_moved_agents_modules_still_import_with_a_warning() -> None:
    """0.4.0 moved evaluation and training out of ``agents``: each old name is the new module."""
    import importlib

    from meeting_gym.agents import MOVED

    for old, new in MOVED.items():
        sys.modules.pop(f"meeting_gym.agents.{old}", None)  # warn as on a first import
        with pytest.warns(DeprecationWarning, match="goes in 0.5.0"):
            module = importlib.import_module(f"meeting_gym.agents.{old}")
        assert module is importlib.import_module(new)


def test_a_module_over_600_lines_says_why_at_its_top():
    """Split by job (issue 49): a module over 600 lines says in its docstring why it is one."""
    long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > 600:
            doc = ast.get_docstring(ast.parse(text)) or ""
            if "Why one module" not in doc:
                long.append(f"{path.relative_to(PACKAGE)} ({text.count(chr(10))} lines)")
    assert not long, long
