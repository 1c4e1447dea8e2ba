"""The tests' data lives in the repository: no test reads the maintainers' reference folder.

A user's clone has no ``../shared/reference``; a test that reads it would skip (or fail)
for everyone but the maintainers. The predecessors' data the tests need is copied into
``tests/data/``, and ``tests/data/README.md`` names each file's source and licence.
"""

from __future__ import annotations

import gzip
import hashlib
import re

from paths import DATA, TESTS

# "shared" as a path part: a string literal '"shared"', "shared/reference", "../shared"
OUTSIDE = re.compile(r"""["']shared["']|shared/reference|\.\./shared""")


GUARDS = frozenset({"test_test_data.py", "test_docs.py"})
"""The modules that name the folder to keep it out: this one (tests), test_docs.py (pages)."""


def test_no_test_module_reads_the_shared_reference_folder():
    offenders = [
        f"{path.relative_to(TESTS)}:{number}: {line.strip()}"
        for path in sorted(TESTS.rglob("*.py"))
        if path.name not in GUARDS
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert not offenders, "tests must read tests/data, not ../shared:\n" + "\n".join(offenders)


def test_the_guard_catches_each_way_of_naming_the_folder():
    for line in (
        'Path(__file__).parents[2] / "shared" / "reference"',
        "root / 'shared' / 'reference' / 'calendar_math'",
        'Path("../shared/reference/x.json")',
        'parents[2] / "shared/reference/meeting_slot_curated.json"',
    ):
        assert OUTSIDE.search(line), line
    for line in ('kwargs = {"shared_memory": False}', "No array is shared between keys"):
        assert not OUTSIDE.search(line), line


def _digests() -> dict[str, str]:
    """The README's table of SHA-256 digests: file name -> digest."""
    readme = (DATA / "README.md").read_text(encoding="utf-8")
    return dict(
        (name, digest) for digest, name in re.findall(r"^([0-9a-f]{64})  (\S+)$", readme, re.M)
    )


def test_every_data_file_is_named_in_the_readme_with_its_digest():
    files = sorted(
        str(p.relative_to(DATA)) for p in DATA.rglob("*") if p.is_file() and p.name != "README.md"
    )
    readme = (DATA / "README.md").read_text(encoding="utf-8")
    for name in files:
        assert f"`{name}`" in readme, f"tests/data/README.md does not describe {name}"
    digests = _digests()
    for name in files:
        if name.endswith("LICENSE"):
            continue
        raw = (DATA / name).read_bytes()
        if name.endswith(".gz"):
            raw, name = gzip.decompress(raw), name.removesuffix(".gz")
        assert hashlib.sha256(raw).hexdigest() == digests[name], f"{name} is not the copy named"
