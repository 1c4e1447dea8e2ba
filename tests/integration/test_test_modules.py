"""Every test module has a basename no other module under ``tests/`` has.

The tests folders carry no ``__init__.py``, so pytest imports each test module by its
basename: two ``test_memory.py`` in different folders pass alone and in a folder's run, and
the whole suite fails at collection ("import file mismatch"). That happened once, in CI
only; this test names the clash in any run that includes it.
"""

from __future__ import annotations

from collections import defaultdict

from paths import TESTS


def test_no_two_modules_under_tests_share_a_basename():
    by_name: dict[str, list[str]] = defaultdict(list)
    for path in sorted(TESTS.rglob("*.py")):
        if path.name in ("__init__.py", "conftest.py") or "data" in path.relative_to(TESTS).parts:
            continue
        by_name[path.stem].append(str(path.relative_to(TESTS)))
    clashes = {name: paths for name, paths in by_name.items() if len(paths) > 1}
    assert not clashes, f"rename one of each: {clashes}"
