"""The docs site and the README front page: the site builds with --strict, the
generated pages are fresh, the example outputs are what the commands print,
and the README stays a short front page with the two commands."""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PY = sys.executable


def run(*args, timeout=600, **env):
    clean = {k: v for k, v in os.environ.items() if k not in ("MUGRADE_KEY", "MUGRADE_SERVER")}
    return subprocess.run(
        [PY, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**clean, "NO_MKDOCS_2_WARNING": "1", **env},
    )


def test_readme_is_a_front_page_of_at_most_150_lines_with_both_commands():
    text = README.read_text()
    assert len(text.splitlines()) <= 150, len(text.splitlines())
    assert "make grade SUBMISSION=" in text  # the main job: grading one submission, embedded defaults
    assert "make test" in text
    assert "docs/img/gradebook.png" in text  # the screenshot of the gradebook
    for target in re.findall(r"\]\(((?:docs|CHANGELOG)[^)#]*)", text):  # where to go next: every link resolves
        assert (ROOT / target).exists(), target


def test_the_site_builds_strict(tmp_path):
    proc = run("-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site"), timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "site" / "reference" / "commands" / "index.html").exists()


def test_every_page_is_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert pages == set(re.findall(r"^\s*- .*?: ([\w/.-]+\.md)\s*$", nav, re.M)), "every page has a nav entry"
    assert not re.search(r"^\s*#\s*- ", nav, re.M), "no page left commented out of the nav"


def test_the_commands_page_is_generated_from_the_parser_and_fresh():
    proc = run("tools/docs_reference.py", "--check", timeout=120)
    assert proc.returncode == 0, proc.stderr
    page = (DOCS / "reference" / "commands.md").read_text()
    sys.path.insert(0, str(ROOT))
    from grader.cli import COMMANDS

    for command in COMMANDS:  # every command has its section, never an empty placeholder
        section = page.split(f"\n## {command}\n", 1)[1].split("\n## ", 1)[0]
        assert "usage: grader " + command in section
    assert "| <code>--fail-under POINTS</code> |" in page


def test_the_commands_page_never_holds_the_environments_key(tmp_path):
    proc = run(
        "tools/docs_reference.py",
        "--check",
        timeout=120,
        MUGRADE_KEY="mg_secret_in_env",
        MUGRADE_SERVER="http://secret.example/",
    )
    assert proc.returncode == 0, proc.stderr  # the page is the same whatever the environment holds


def test_the_cheap_examples_are_what_the_code_prints():
    proc = run(
        "tools/docs_examples.py", "--check", "--only", "handout-full-marks", "--only", "classroom50-points", timeout=120
    )
    assert proc.returncode == 0, proc.stderr


def examples_tool():
    spec = importlib.util.spec_from_file_location("docs_examples", ROOT / "tools" / "docs_examples.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.server
def test_the_time_policy_examples_are_what_the_commands_print_against_a_real_server():
    """One `grader serve` on loopback with a fresh SQLite database; the page's commands in its order
    (tools/docs_examples.py --check --only time-policy, in this process). A planted stale line is caught."""
    examples = examples_tool()
    assert examples.main(["--check", "--only", "time-policy"]) == 0
    made = examples.time_policy_session()  # the same run, kept
    page = (DOCS / "instructor" / "time-policy.md").read_text()
    shown = {m.group("name"): m.group("body") for m in examples.BLOCK.finditer(page)}
    assert set(made) == {name for name in shown if name.startswith("time-")}
    planted = shown["time-penalty"].replace("late days per student: 0", "late days per student: 3")
    assert examples.normalised(planted) != examples.normalised(made["time-penalty"])


def test_the_examples_check_ignores_only_what_varies_between_runs():
    """When a change was made (the log, an extension's grant) varies; a deadline shown never does."""
    normalised = examples_tool().normalised
    line = "2026-11-26 23:10 UTC  prof  deadline hw1/forward: none -> 2026-02-01 23:59 CET (2026-02-01 22:59 UTC)\n"
    assert normalised(line) == normalised(line.replace("2026-11-26 23:10", "2027-03-04 05:06"))
    assert normalised(line) != normalised(line.replace("22:59 UTC)", "23:59 UTC)"))
    granted = "ann: hw1 (every question) +2d (granted 2026-11-26 23:09 UTC by prof)\n"
    assert normalised(granted) == normalised(granted.replace("11-26 23:09", "12-01 00:00"))
    assert normalised(granted) != normalised(granted.replace("+2d", "+3d"))


def test_every_example_block_has_a_maker():
    blocks = [
        name
        for page in [README, *DOCS.rglob("*.md")]
        for name in re.findall(r"<!-- example: ([a-z0-9-]+) -->", page.read_text())
    ]
    assert {"make-grade", "handout-full-marks", "classroom50-points", "time-changes"} <= set(blocks)
    proc = run("tools/docs_examples.py", "--check", "--only", "classroom50-points", timeout=120)
    assert "unknown example blocks" not in proc.stderr


@pytest.mark.sandbox
@pytest.mark.slow
def test_the_grade_example_is_what_make_grade_prints():
    """Runs `grader grade` (the reference and the empty handout) and compares with the docs' block."""
    proc = run("tools/docs_examples.py", "--check", "--only", "make-grade", timeout=1800, OPENBLAS_NUM_THREADS="1")
    assert proc.returncode == 0, proc.stderr


def test_no_stale_numbers_and_no_old_paths():
    text = "\n".join(p.read_text() for p in [README, *DOCS.rglob("*.md")])
    for stale in ("52.69", "23/23 cases", "5.75/5.75"):  # examples from before the course's API and drawn inputs
        assert stale not in text, stale
    assert "shared/data" not in text  # the machine's shared folder is not shipped: never pointed at
    for old in ("grader/untrusted", "grader/bench/", "grader/assignment.py", "grader/registry.py"):  # the target layout
        assert old not in text, old


def test_the_readmes_claims_match_the_grade_example():
    """The front page promises 100/100 for the reference and 0/100 for the empty handout: the docs' block
    (checked against a real run above) says the same."""
    readme, grading = README.read_text(), (DOCS / "instructor" / "grading.md").read_text()
    assert "100/100" in readme and "0/100" in readme
    assert "reference: 100/100" in grading and "handout: 0/100" in grading


def test_the_handout_readme_example_has_the_real_questions_sizes():
    """The student README's example table (a partly done solution) uses the
    same case counts and points per question as a real full-marks run (the
    docs' generated example), so it never shows stale sizes."""
    row = re.compile(r"^\s*(Q\d \w+)\s+(\d+)/(\d+)\s+([\d.]+)/([\d.]+)\s*$", re.M)
    full = {m[0]: (m[2], m[4]) for m in row.findall((ROOT / "docs" / "student" / "index.md").read_text())}
    readme = row.findall((ROOT / "reference" / "handout_files" / "README.md").read_text())
    assert readme and full
    for question, passed, total, points, most in readme:
        assert full[question] == (total, most), question
        assert int(passed) <= int(total) and float(points) <= float(most)
