"""The house as drawn from the code: every package of the grader stands on a
floor, and an import may only point to a lower floor (or stay inside its
own package). Peers on one floor never import each other. No module is over
MAX_LINES lines. Read with `ast` (tests/test_imports.py), nothing imported."""

import sys
from pathlib import Path

import pytest
from test_imports import GRADER, _imports, modules

MAX_LINES = 350

# Lowest floor first. A module belongs to the longest prefix it starts with.
FLOORS = (
    ("grader.shipped",),  # runs beside student code, ships to students: imports only itself
    ("grader.core",),  # assignment, registry, manifest, markers, labels, paths, files
    ("grader",),  # the package's own names (ROOT, REFERENCE, ...), read from core
    ("grader.sandbox",),
    ("grader.grading.run",),  # one run of the case workers and the values they leave
    ("grader.grading.explain",),  # likely cause, smallest failing input, words for missing values
    ("grader.grading.report",),  # grade one submission: results, scores, provenance, files
    ("grader.grading.batch", "grader.grading.platforms"),
    ("grader.grading", "grader.handout"),  # grading's commands; the handout builder
    ("grader.server", "grader.similarity", "grader.client"),
    ("grader.cli",),
    ("grader.__main__",),
)
PACKAGES = sorted((p for floor in FLOORS for p in floor), key=len, reverse=True)
FLOOR_OF = {p: i for i, floor in enumerate(FLOORS) for p in floor}


def package_of(module: str) -> str:
    return next(p for p in PACKAGES if module == p or module.startswith(p + "."))


def climbing(found: dict) -> list:
    """`module: imports other (floor a imports floor b)` for every import
    that is not to a lower floor or inside the module's own package."""
    problems = []
    for name, (path, tree) in found.items():
        own = package_of(name)
        for imported, _ in _imports(name, path, tree):
            if imported.split(".")[0] != "grader":
                continue
            other = package_of(imported)
            if other == own or FLOOR_OF[other] < FLOOR_OF[own]:
                continue
            problems.append(f"{name}: imports {imported} ({own} stands below or beside {other})")
    return sorted(set(problems))


def long_modules(root: Path = GRADER) -> list:
    return sorted(
        f"{p.relative_to(root.parent)}: {n} lines"
        for p in root.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    )


def test_every_package_has_a_floor():
    found = modules()
    assert {package_of(name) for name in found} == set(PACKAGES)


def test_no_import_climbs_to_a_higher_floor_or_a_peer():
    assert climbing(modules()) == []


# What the shipped package may import besides itself and the standard library:
# the student's environment (numpy; pytest and requests, which the course's
# mugrade client uses), the student's code, and the worker folder's siblings.
STUDENT_SIDE = {"numpy", "pytest", "requests", "needle", "simple_ml", "where", "assignment_cases"}


def shipped_imports(found: dict) -> set:
    """Top-level names the shipped package imports that are neither its own,
    the standard library's nor STUDENT_SIDE."""
    names = set()
    for name, (path, tree) in found.items():
        if package_of(name) == "grader.shipped":
            names |= {
                i
                for i, _ in _imports(name, path, tree)
                if not (i == "grader.shipped" or i.startswith("grader.shipped."))
            }
    return {i for i in names if i.split(".")[0] not in set(sys.stdlib_module_names) | STUDENT_SIDE}


def test_the_shipped_package_imports_only_itself_the_standard_library_and_the_student_side():
    assert shipped_imports(modules()) == set()


def test_a_shipped_module_importing_a_third_party_package_is_found(tmp_path):
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "shipped/__init__.py": "from . import a\n",
            "shipped/a.py": "import numpy, json\nimport yaml\nfrom grader.core import x\n",
        },
    )
    assert shipped_imports(modules(root)) == {"yaml", "grader.core"}


def test_no_module_is_over_the_limit():
    assert long_modules() == []


def _package(tmp_path, files: dict) -> Path:
    root = tmp_path / "grader"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.mark.parametrize(
    "rel, text, words",
    [
        (
            "core/a.py",
            "from grader.grading.run import workers\n",
            "grader.core.a: imports grader.grading.run (grader.core stands below or beside grader.grading.run)",
        ),
        (
            "grading/run/w.py",
            "def f():\n    from grader.grading.report import results\n",
            "grader.grading.run.w: imports grader.grading.report",
        ),
        ("handout/b.py", "from grader.grading import commands\n", "grader.handout.b: imports grader.grading"),
        ("shipped/s.py", "from grader.core import paths\n", "grader.shipped.s: imports grader.core"),
    ],
)
def test_an_import_that_climbs_is_found(tmp_path, rel, text, words):
    files = {
        "__init__.py": "",
        "core/__init__.py": "",
        "grading/__init__.py": "",
        "grading/run/__init__.py": "",
        "grading/report/__init__.py": "",
        "handout/__init__.py": "",
        "shipped/__init__.py": "",
        "grading/report/ok.py": "from grader.grading.run import w2\n",
        "grading/run/w2.py": "",
        rel: text,
    }
    problems = climbing(modules(_package(tmp_path, files)))
    assert len(problems) == 1 and problems[0].startswith(words), problems


def test_a_long_module_is_found(tmp_path):
    root = _package(tmp_path, {"__init__.py": "", "big.py": "x = 1\n" * (MAX_LINES + 1)})
    assert long_modules(root) == [f"grader/big.py: {MAX_LINES + 1} lines"]


def test_importing_every_command_module_reads_no_assignment(tmp_path):
    """Settings are read when a command runs, never at import: importing the
    command modules from a folder with no assignment.toml opens none."""
    import subprocess

    code = (
        "import builtins, io, pathlib\n"
        "seen = []\n"
        "real = pathlib.Path.read_text\n"
        "pathlib.Path.read_text = lambda self, *a, **k: seen.append(str(self)) or real(self, *a, **k)\n"
        "import grader.cli, grader.grading.commands, grader.grading.report.orchestrate, grader.handout.commands\n"
        "import grader.server.commands, grader.grading.batch.run, grader.similarity.commands\n"
        "print([s for s in seen if s.endswith('.toml')])\n"
    )
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"
