"""Every fenced code block in README.md and docs/ is checked against what it shows:

- an example output (`<!-- example: NAME -->`) is what tools/docs_examples.py
  prints by running the command (test_docs.py runs its --check);
- the commands page is generated from the CLI's parser (test_docs.py);
- commands to type: every `grader` command parses with the CLI's own parser
  (nothing runs), every `make` names a target and variables of its Makefile
  (the handout's on the students' pages), every `dask` command parses with
  dask's own, every script named exists and takes the flags shown;
- TOML: the tables of a shipped file are the shipped ones; a sample for the
  reader to write loads with the project's own loader;
- the architecture page's drawings are the repository's folders and the
  import floors tests/test_architecture.py holds;
- lines the CI pages give as a template's steps are its steps.

Each check also fails on a planted mistake (the tests at the end)."""

import argparse
import ast
import contextlib
import functools
import io
import json
import os
import re
import subprocess
import sys

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

import pytest
import yaml
from doc_blocks import ASSIGNMENT, PAGES, ROOT, all_blocks, blocks, commands, logical_lines, split_comment

TEMPLATES = ROOT / "grader/grading/platforms/ci_templates"
# Pages whose `make` is the handout's (a student's folder), not this repository's.
HANDOUT_PAGES = {"docs/student/index.md", "docs/student/submit.md", "docs/instructor/ci/github-actions.md"}
# TOML blocks: a shipped file's tables, or a sample the reader writes into their assignment.toml.
TOML = {
    "docs/instructor/assignment.md": "shipped",
    "docs/instructor/gradebook.md": "sample",
    "docs/instructor/time-policy.md": "sample",
}
DRAWINGS = {"docs/design/architecture.md"}


def rel(block) -> str:
    return block.page.relative_to(ROOT).as_posix()


def kind(block) -> str:
    if block.example:
        return "example"
    if rel(block) == "docs/reference/commands.md":
        return "generated"
    if block.lang in ("sh", "console"):
        return "commands"
    if block.lang == "toml" and rel(block) in TOML:
        return "toml " + TOML[rel(block)]
    if block.lang == "text" and rel(block) in DRAWINGS:
        return "drawing"
    return "unchecked"


def test_every_block_is_checked():
    unchecked = [f"{b.where} ({b.lang or 'no language'})" for b in all_blocks() if kind(b) == "unchecked"]
    assert not unchecked, "a fenced block no test checks: make it an example, or add its check here"


# --- commands ------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def grader_parser():
    from grader.cli import build_parser

    return build_parser()


def grader_problem(args) -> str:
    """argparse's message when the CLI would refuse these arguments, else ""."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            grader_parser().parse_args(args)
    except SystemExit as e:
        if e.code:
            return (err.getvalue().strip().splitlines() or [f"exit {e.code}"])[-1]
    return ""


@functools.lru_cache(maxsize=None)
def makefile(path) -> tuple:
    """(targets, variables) of a Makefile."""
    text = (ROOT / path).read_text()
    targets = set()
    for names in re.findall(r"^([\w.-]+(?:[ \t]+[\w.-]+)*)[ \t]*:(?!=)", text, re.M):
        targets.update(names.split())
    variables = set(re.findall(r"\$\((\w+)\)", text)) | set(re.findall(r"^(?:export\s+)?(\w+)\s*[:?+]?=", text, re.M))
    return targets - {".PHONY"}, variables


def make_problem(argv, path) -> str:
    targets, variables = makefile(path)
    for word in argv[1:]:
        if ASSIGNMENT.match(word):
            if word.split("=")[0] not in variables:
                return f"{path} has no variable {word.split('=')[0]}"
        elif word not in targets:
            return f"{path} has no target {word!r}"
    return ""


def dask_problem(argv) -> str:
    import click

    module = {"scheduler": "dask_scheduler", "worker": "dask_worker"}.get(argv[1])
    if module is None:
        return f"dask {argv[1]}: not a dask command these docs use"
    main = getattr(__import__(f"distributed.cli.{module}", fromlist=["main"]), "main")
    try:
        main.make_context(f"dask {argv[1]}", list(argv[2:]))
    except click.BadParameter as e:  # a file the reader has (--tls-ca-file ca.pem) is fine; a bad value not
        return "" if "does not exist" in e.format_message() else e.format_message()
    except click.ClickException as e:
        return e.format_message()
    return ""


def script_problem(argv) -> str:
    """`python3 PATH.py ...`: the script exists (here, or in the handout) and names every --flag shown."""
    script = next((base / argv[1] for base in (ROOT, ROOT / "handout") if (base / argv[1]).is_file()), None)
    if script is None:
        return f"{argv[1]}: no such script here or in handout/"
    source = script.read_text()
    return next((f"{argv[1]} takes no {a}" for a in argv[2:] if a.startswith("--") and a not in source), "")


def check(command) -> tuple:
    """(what the command is, why the docs' line is wrong or "")."""
    args = command.grader_args()
    if args is not None:
        return "grader", grader_problem(args)
    if command.program == "make":
        page = rel(command.block)
        path = "reference/handout_files/Makefile" if page in HANDOUT_PAGES else "Makefile"
        return "make", make_problem(command.argv, path)
    if command.program == "dask":
        return "dask", dask_problem(command.argv)
    if command.program.startswith("python") and len(command.argv) > 1 and command.argv[1].endswith(".py"):
        return "script", script_problem(command.argv)
    return "other", ""


def problems(blocks_) -> list:
    found = []
    for block in blocks_:
        if block.lang not in ("sh", "console"):
            continue
        for command in commands(block):
            _, problem = check(command)
            if problem:
                found.append(f"{block.where}: {' '.join(command.argv)}: {problem}")
    return found


def test_every_command_in_the_docs_is_one_the_tools_take():
    assert problems(all_blocks()) == []
    checked = [check(c)[0] for b in all_blocks() if b.lang in ("sh", "console") for c in commands(b)]
    assert checked.count("grader") >= 40 and checked.count("make") >= 15 and checked.count("dask") >= 4, checked


def test_the_reference_import_line_runs(tmp_path):
    """docs/instructor/handout.md: `cd reference && python -c "..."`, run as shown (python: this one)."""
    (line,) = [
        line
        for b in blocks(ROOT / "docs/instructor/handout.md")
        if b.lang == "sh"
        for line in logical_lines(b)
        if line.startswith("cd reference && python -c")
    ]
    (tmp_path / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')  # the venv's, as its own path
    (tmp_path / "python").chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(["bash", "-c", line], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


# --- commands named in the text (`grader publish --deadline`): the command, its options and choices exist ----

INLINE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
NOT_COMMANDS = {"grader changed", "grader error"}  # values of regrade.csv's `why` column


def inline_spans(page, text=None) -> list:
    text = page.read_text() if text is None else text
    return INLINE.findall(re.sub(r"^[ \t]*```.*?^[ \t]*```", "", text, flags=re.S | re.M))


def placeholder(word: str) -> bool:
    return "..." in word or word.isupper() or word[:1] in "<[$"


def inline_problem(span: str, page: str) -> str:
    words = span.split()
    if words[0] != "make" and "grader" in words[:3] and span not in NOT_COMMANDS:
        args = words[words.index("grader") + 1 :]
        sub = next(a for a in grader_parser()._actions if isinstance(a, argparse._SubParsersAction))
        if args[:1] in (["--help"], ["--version"]):
            return ""
        if not args or args[0] not in sub.choices:
            return f"grader has no command {args[:1]}"
        parser = sub.choices[args[0]]
        positional = [a for a in parser._actions if not a.option_strings]
        chosen = [(positional[0], args[1])] if positional and len(args) > 1 and not args[1].startswith("-") else []
        for i, word in enumerate(args[1:], 1):
            if word.startswith("--"):
                action = parser._option_string_actions.get(word.split("=")[0])
                if action is None:
                    return f"grader {args[0]} has no option {word}"
                if i + 1 < len(args) and not args[i + 1].startswith("-"):
                    chosen.append((action, args[i + 1]))
        for action, value in chosen:
            if action.choices and not placeholder(value) and value not in action.choices:
                return f"{value!r} is not one of {', '.join(map(str, action.choices))}"
    elif words[0] == "make":
        handout = makefile("reference/handout_files/Makefile")[0]
        targets = handout if page in HANDOUT_PAGES else handout | makefile("Makefile")[0]
        for word in words[1:]:
            if not ASSIGNMENT.match(word) and not placeholder(word) and word not in targets:
                return f"no make target {word!r}"
    return ""


def inline_problems(page, text=None) -> list:
    where = page.relative_to(ROOT).as_posix()
    return [f"{where}: `{s}`: {p}" for s in inline_spans(page, text) if (p := inline_problem(s, where))]


def test_every_command_named_in_the_text_exists():
    pages = [p for p in PAGES if p.name != "commands.md"]
    assert [p for page in pages for p in inline_problems(page)] == []
    named = [s for page in pages for s in inline_spans(page) if s.split()[0] == "make" or "grader" in s.split()[:3]]
    assert len(named) >= 80, len(named)


def test_every_repository_path_named_in_the_text_exists():
    """`grader/...`, `tools/...`: a file or folder of the repository (or of the handout); NAME is a placeholder."""
    path = re.compile(r"(?:grader|reference|tools|tests|benchmarks|handout|docs)/[\w./-]*")
    named = [(page, s) for page in PAGES for s in inline_spans(page) if path.fullmatch(s)]
    missing = [
        f"{page.relative_to(ROOT)}: {s}"
        for page, s in named
        if not re.search(r"[A-Z]{2}", s) and not (ROOT / s).exists() and not (ROOT / "handout" / s).exists()
    ]
    assert missing == [] and len(named) >= 20


# --- TOML ----------------------------------------------------------------------------------------------


def shipped_problem(text: str) -> str:
    shown, shipped = tomllib.loads(text), tomllib.loads((ROOT / "assignment.toml").read_text())
    return next((f"[{k}] is not assignment.toml's" for k in shown if shown[k] != shipped.get(k)), "")


def sample_problem(text: str, folder) -> str:
    """The sample, added to a copy of this repository's assignment.toml, loads with the project's loader."""
    from grader.core.assignment import Assignment
    from grader.core.policy import AssignmentError
    from grader.server.gradebook.timing import rules

    folder.mkdir()
    for name in ("reference", "handout", "data", "grader"):
        (folder / name).symlink_to(ROOT / name)
    (folder / "assignment.toml").write_text((ROOT / "assignment.toml").read_text() + "\n" + text)
    try:
        policy = Assignment.load(folder).policy
        if policy.time:
            rules.parse(json.loads(policy.time), "assignment.toml")
    except (AssignmentError, rules.TimeError) as e:
        return str(e)
    points = json.loads((ROOT / "handout/tests/hw1/hw1_cases/points.json").read_text())
    keys = {q["key"] for q in points["questions"]}
    return next(
        (f"{k} is no question of hw1" for k in tomllib.loads(text)["policy"].get("questions", {}) if k not in keys), ""
    )


def test_the_toml_shown_is_shipped_or_loads(tmp_path):
    found = []
    for i, block in enumerate(b for b in all_blocks() if kind(b).startswith("toml")):
        if kind(block) == "toml shipped":
            problem = shipped_problem(block.text)
        else:
            problem = sample_problem(block.text, tmp_path / str(i))
        if problem:
            found.append(f"{block.where}: {problem}")
    assert found == []
    assert len([b for b in all_blocks() if kind(b).startswith("toml")]) == 3


# --- the architecture page's drawings ------------------------------------------------------------------


def drawing(start: str) -> str:
    (block,) = [b for b in blocks(ROOT / "docs/design/architecture.md") if b.text.startswith(start)]
    return block.text


def tree_problem(text: str) -> str:
    """Each folder or file the repository drawing names exists (or is one `make` fetches, git-ignored)."""
    ignored = (ROOT / ".gitignore").read_text().split()
    top = ROOT
    for line in text.splitlines():
        name = line.split()[0]
        path = (ROOT if not line.startswith(" ") else top) / name
        if not line.startswith(" "):
            top = path
        if not path.exists() and name not in ignored and "/" + name not in ignored:
            return f"{path.relative_to(ROOT)}: not in the repository"
    return ""


def floors_problem(text: str) -> str:
    tree = ast.parse((ROOT / "tests/test_architecture.py").read_text())
    (floors,) = [
        ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "FLOORS"
    ]
    code = [set(f) for f in floors if f not in (("grader",), ("grader.__main__",))]
    drawn = [
        {"grader." + re.sub(r"\s*\(.*\)", "", p).strip().replace("/", ".") for p in floor.split(",")}
        for floor in " ".join(text.split()).split("<")
    ]
    return "" if drawn == code else f"drawn {drawn}, tests/test_architecture.py has {code}"


def test_the_architecture_drawings_are_the_repository_and_its_floors():
    assert tree_problem(drawing("reference/")) == ""
    assert floors_problem(drawing("shipped <")) == ""


# --- CI pages: the lines given as a template's steps are its steps --------------------------------------


def shell_lines(block) -> list:
    """The block's lines, comments and lines that only set variables left out."""
    lines = [split_comment(line)[0] for line in logical_lines(block)]
    return [line for line in lines if line and not all(ASSIGNMENT.match(w) for w in line.split())]


def squeeze(text: str) -> str:
    return " ".join(text.split())


def subsequence_problem(lines, steps) -> str:
    rest = iter(squeeze(s) for s in steps)
    return next((f"not a step of the template, in order: {line}" for line in lines if squeeze(line) not in rest), "")


def ci_block(page: str, containing: str):
    (block,) = [b for b in blocks(ROOT / page) if b.lang == "sh" and containing in b.text]
    return block


def test_gitlabs_steps_are_the_templates():
    job = yaml.safe_load((TEMPLATES / "gitlab-ci.yml").read_text())["grade"]
    lines = shell_lines(ci_block("docs/instructor/ci/gitlab.md", "grader grade"))
    assert subsequence_problem(lines, job["before_script"] + job["script"]) == ""
    assert len(lines) == 5


def test_the_classroom50_deadline_by_hand_is_the_templates():
    steps = yaml.safe_load((TEMPLATES / "classroom50-deadline.yml").read_text())["jobs"]["grade"]["steps"]
    pick = next(s["env"]["PICK"] for s in steps if "PICK" in s.get("env", {}))
    block = ci_block("docs/instructor/ci/classroom50.md", "--jq")
    jq = re.search(r"--jq '(.*?)'", block.text, re.S).group(1)
    assert squeeze(jq) == squeeze(pick)  # the same Releases picked
    assert shell_lines(block)[-1] == steps[-2]["run"]  # graded the same way


@pytest.mark.parametrize("page", ["docs/instructor/ci/github-actions.md", "docs/student/submit.md"])
def test_the_handout_workflows_steps_by_hand_are_its_steps(page):
    runs = [
        s["run"]
        for s in yaml.safe_load((ROOT / "reference/handout_files/grade.yml").read_text())["jobs"]["grade"]["steps"]
        if "run" in s
    ]
    for line in shell_lines(ci_block(page, "github_ci.py")):
        assert any(squeeze(line) in squeeze(run) for run in runs), line


# --- planted mistakes: each check above fails on one ---------------------------------------------------


@pytest.mark.parametrize(
    "page, old, new, message",
    [
        ("docs/instructor/grading.md", "--jobs 4", "--jobz 4", "unrecognized arguments: --jobz"),
        ("docs/instructor/gradebook.md", "--format canvas", "--format csv", "invalid choice: 'csv'"),
        ("docs/instructor/server.md", "users add", "users ad", "invalid choice: 'ad'"),
        ("docs/instructor/time-policy.md", "$ grader changes", "$ grader changes --since 1d", "--since"),
        ("docs/instructor/handout.md", "# = grader handout", "# = grader handout --fresh", "--fresh"),
        ("README.md", "make grade SUBMISSION=", "make grades SUBMISSION=", "no target 'grades'"),
        ("README.md", "make grade SUBMISSION=", "make grade SUBMISION=", "no variable SUBMISION"),
        ("docs/student/submit.md", "make zip", "make handout", "no target 'handout'"),  # not the handout's target
        ("docs/operator/scale-out.md", "--nthreads 1 &", "--threads 1 &", "No such option"),
        ("docs/instructor/ci/legacy-github-classroom.md", "--legacy-github", "--old-github", "takes no --old"),
    ],
)
def test_a_planted_mistake_in_a_command_fails(page, old, new, message):
    text = (ROOT / page).read_text()
    assert old in text
    assert problems(blocks(ROOT / page, text)) == []
    found = problems(blocks(ROOT / page, text.replace(old, new, 1)))
    assert len(found) == 1 and message in found[0], found


@pytest.mark.parametrize(
    "page, old, new, message",
    [
        ("docs/instructor/time-policy.md", "`grader publish --deadline`", "`grader publish --due`", "no option --due"),
        ("docs/instructor/time-policy.md", "`grader course clear-zone`", "`grader course unset-zone`", "not one of"),
        ("docs/instructor/gradebook.md", "`grade-batch --force`", "`grader grade-batch --forced`", "no option"),
        ("docs/student/index.md", "`make test Q=...`", "`make tests Q=...`", "no make target 'tests'"),
    ],
)
def test_a_planted_mistake_in_a_command_named_in_the_text_fails(page, old, new, message):
    text = (ROOT / page).read_text()
    assert old in text and inline_problems(ROOT / page, text) == []
    found = inline_problems(ROOT / page, text.replace(old, new, 1))
    assert len(found) == 1 and message in found[0], found


def test_planted_mistakes_in_toml_drawings_and_templates_fail(tmp_path):
    assert "not assignment.toml's" in shipped_problem('[environment]\npackages = ["numpy==2.0.1", "tqdm==4.67.1"]')
    assert "'policy.pick'" in sample_problem('[policy]\npick = "first"\n', tmp_path / "a")
    assert "'policy.time.penalty'" in sample_problem('[policy.time]\npenalty = "half"\n', tmp_path / "b")
    assert "no question" in sample_problem("[policy.questions.fwd]\npick = 'last'\n", tmp_path / "c")
    assert "not in the repository" in tree_problem(drawing("reference/").replace("benchmarks/", "bench/"))
    assert "drawn" in floors_problem(drawing("shipped <").replace("core < sandbox", "sandbox < core"))
    assert "not a step" in subsequence_problem(["make setup data", "git clone x submission"], ["make setup data"])
