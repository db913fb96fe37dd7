"""grader/grading/platforms/ci_templates/classroom50-deadline.yml: the instructor's deadline
grade for a Classroom 50 assignment picks, per student, the last submit/*
Release published before the deadline (plus the grace), whatever the tag's
name or the commit's date claim.

Its checkout step runs here as the runner would (bash -eo pipefail) with a
stand-in `gh` answering from fixture release lists (through the step's own
jq filter, as `gh api --jq` applies it) and a `git` that clones local
repositories instead of GitHub's.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from grader import ROOT

TEMPLATE = ROOT / "grader" / "grading" / "platforms" / "ci_templates" / "classroom50-deadline.yml"
CHECK_JSONSCHEMA = Path(sys.executable).parent / "check-jsonschema"
STEP = "Check out each student's last submission before the deadline"

FAKE_GH = """#!/bin/bash
# gh api PATH --paginate --jq FILTER, answered from $FIXTURES
path="$2"; filter="${@: -1}"
case "$path" in
  orgs/*) jq -r "$filter" "$FIXTURES/members.json" ;;
  repos/*) repo=$(cut -d/ -f3 <<< "${path%%\\?*}"); file="$FIXTURES/$repo.releases.json"
           [ -f "$file" ] || { echo "gh: Not Found (HTTP 404)" >&2; exit 1; }
           jq -r "$filter" "$file" ;;
  *) exit 1 ;;
esac
"""
FAKE_GIT = """#!/bin/bash
# git clone URL DEST clones $FIXTURES/<repository> instead; everything else is git
if [ "$1" = clone ]; then url="${@: -2:1}"; exec "$REAL_GIT" clone --quiet "$FIXTURES/$(basename "$url" .git)" "${@: -1}"; fi
exec "$REAL_GIT" "$@"
"""


def step(name):
    (job,) = yaml.safe_load(TEMPLATE.read_text())["jobs"].values()
    return next(s for s in job["steps"] if s.get("name") == name)


def release(tag, published, created="2020-01-01T00:00:00Z", draft=False):
    # created_at is the commit's date on GitHub: the student's to set, never read
    return {"tag_name": tag, "published_at": published, "created_at": created, "draft": draft}


def repo_with_tags(path: Path, tags: dict) -> dict:
    """A repository with one commit per tag; {tag: commit}."""
    path.mkdir(parents=True)
    git = ["git", "-C", str(path), "-c", "user.name=s", "-c", "user.email=s@example.com"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    commits = {}
    for i, tag in enumerate(tags):
        (path / "work.txt").write_text(f"{i}\n")
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-qm", f"work {i}"], check=True)
        subprocess.run([*git, "tag", tag], check=True)
        commits[tag] = subprocess.run(
            [*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True
        ).stdout.strip()
    return commits


@pytest.fixture
def picked(tmp_path):
    fixtures, bin_dir, work = tmp_path / "fixtures", tmp_path / "bin", tmp_path / "work"
    for folder in (fixtures, bin_dir, work):
        folder.mkdir()
    alice = repo_with_tags(
        fixtures / "dl-hw1-alice",
        [
            "submit/2026-02-01T20-00-00Z-aaaaaaa",
            "submit/2026-02-01T23-00-00Z-bbbbbbb",
            "submit/2026-01-01T00-00-00Z-early",
            "v1",
            "submit/draft",
        ],
    )
    carol = repo_with_tags(fixtures / "dl-hw1-carol", ["submit/2026-02-02T00-05-00Z-ccccccc"])
    (fixtures / "members.json").write_text(json.dumps([{"login": "Alice"}, {"login": "bob"}, {"login": "carol"}]))
    (fixtures / "dl-hw1-alice.releases.json").write_text(
        json.dumps(
            [
                release("submit/2026-02-01T20-00-00Z-aaaaaaa", "2026-02-01T20:01:10Z"),
                release("submit/2026-02-01T23-00-00Z-bbbbbbb", "2026-02-01T23:04:00Z"),
                # a hand-pushed tag whose name claims January, published after the deadline and the grace
                release("submit/2026-01-01T00-00-00Z-early", "2026-02-02T03:00:00Z"),
                release("v1", "2026-02-01T23:30:00Z"),
                release("submit/draft", None, draft=True),
            ]
        )
    )
    # pushed at 23:58, published after its grading run: inside the 20-minute grace
    (fixtures / "dl-hw1-carol.releases.json").write_text(
        json.dumps([release("submit/2026-02-02T00-05-00Z-ccccccc", "2026-02-02T00:10:00Z")])
    )
    for name, text in (("gh", FAKE_GH), ("git", FAKE_GIT)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    the_step = step(STEP)
    script = tmp_path / "step.sh"
    script.write_text(the_step["run"])
    env = {
        **os.environ,
        **{k: v for k, v in the_step["env"].items() if not v.startswith("${{")},
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "FIXTURES": str(fixtures),
        "REAL_GIT": shutil.which("git"),
        "GH_TOKEN": "token",
        "CLASSROOM": "dl",
        "ASSIGNMENT": "hw1",
        "DEADLINE": "2026-02-01T23:59:00Z",
        "GRACE_MINUTES": "20",
        "STUDENTS": "",
        "ORG": "",
        "TEAM": "",
        "GITHUB_REPOSITORY_OWNER": "dl-course",
    }
    proc = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [line.split("\t") for line in (work / "out/submissions.tsv").read_text().splitlines()]
    return work, rows, alice, carol


def test_the_last_release_published_before_the_deadline_is_graded(picked):
    work, rows, alice, carol = picked
    assert rows[0] == ["student", "repository", "tag", "commit", "published_at"]
    by_student = {row[0]: row for row in rows[1:]}
    tag = "submit/2026-02-01T23-00-00Z-bbbbbbb"
    assert by_student["Alice"] == ["Alice", "dl-hw1-alice", tag, alice[tag], "2026-02-01T23:04:00Z"]
    head = subprocess.run(
        ["git", "-C", str(work / "submissions/Alice"), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert head == alice[tag]  # the checkout is that tag's commit, not the repository's last


def test_a_release_published_within_the_grace_counts_and_a_missing_repository_is_said(picked):
    _, rows, _, carol = picked
    by_student = {row[0]: row for row in rows[1:]}
    assert by_student["carol"][2:4] == [
        "submit/2026-02-02T00-05-00Z-ccccccc",
        carol["submit/2026-02-02T00-05-00Z-ccccccc"],
    ]
    assert by_student["bob"] == ["bob", "dl-hw1-bob", "", "", "no submission published before the deadline"]


def test_a_deadline_not_in_utc_is_refused(tmp_path):
    script = tmp_path / "step.sh"
    script.write_text(step(STEP)["run"])
    proc = subprocess.run(
        ["bash", "-eo", "pipefail", str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "DEADLINE": "2026-02-01 23:59", "GRACE_MINUTES": "20"},
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stdout == "::error::deadline 2026-02-01 23:59: write it in UTC as 2026-02-01T23:59:00Z\n"
    assert not (tmp_path / "out").exists()


def test_the_template_is_a_valid_workflow_without_github_classroom():
    proc = subprocess.run(
        [str(CHECK_JSONSCHEMA), "--builtin-schema", "vendor.github-workflows", str(TEMPLATE)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = TEMPLATE.read_text()
    assert "gh classroom" not in text and "gh-classroom" not in text
    assert "grade-batch submissions" in step("Grade every submission (hidden cases included)")["run"]


def test_the_docs_default_path_has_no_github_classroom():
    """The CI docs lead with Classroom 50; GitHub Classroom appears only in the legacy page, the CI section's last."""
    docs = ROOT / "docs"
    ci = docs / "instructor" / "ci"
    legacy = ci / "legacy-github-classroom.md"
    classroom50 = (ci / "classroom50.md").read_text()
    assert "# Classroom 50" in classroom50 and "grader classroom50" in classroom50
    assert "[Classroom 50](classroom50.md)" in (ci / "index.md").read_text()
    default = [p for p in docs.rglob("*.md") if p != legacy] + [ROOT / "README.md"]
    for gone in ("gh classroom", "gh-classroom", "autograding-grading-reporter", "github-deadline.yml"):
        for page in default:
            assert gone not in page.read_text(), (gone, page)
    nav = (ROOT / "mkdocs.yml").read_text()
    section = nav[nav.index("      - CI:") :]
    ci_entries = []
    for line in section.splitlines()[1:]:
        if not line.startswith("          "):
            break
        ci_entries.append(line)
    assert ci_entries[-1].endswith(
        "instructor/ci/legacy-github-classroom.md"
    )  # the legacy note is the section's last part
