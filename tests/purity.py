"""What a domain module imports, read from its source (no import runs)."""

from __future__ import annotations

import ast
from pathlib import Path


def imports_of(path: Path) -> set[str]:
    """Every module ``path`` imports (top level and inside functions), as written.

    Fails if the module uses the global random generator: ``from random import ...`` or
    ``random.x`` for any ``x`` but ``Random`` (a domain draws only from the rng it is given).
    """
    imported: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            imported |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module or "")
            assert node.module != "random", f"{path.name} imports from random"
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "random"
        ):
            assert node.attr == "Random", f"{path.name} calls random.{node.attr}"
    return imported
