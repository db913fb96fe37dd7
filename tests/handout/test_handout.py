"""`grader handout` / `grader check-handout`: manifest, determinism,
atomicity, error reporting, staleness. Builds run in-process with the
public-test runs skipped (test_handout_public.py covers those)."""
import shutil
import subprocess
from pathlib import Path

import pytest

from grader.cli import main
from grader.handout import cases as handout_cases
from grader.core import labels
from grader.handout.commands import differences, make_handout, mirror_bytes, reference_copies, snapshot
from grader.handout.build import HandoutError, build_tree
from grader.core.assignment import Assignment
from grader.handout.checks import PytestOutcome, _judge, _naming_problems, import_problems, keywords

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "reference"


@pytest.fixture
def src(tmp_path, stub_client):
    """A private copy of the reference that tests may break."""
    copy = tmp_path / "reference"
    shutil.copytree(REFERENCE, copy, symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    (copy / "data").unlink()
    (copy / "data").symlink_to((REFERENCE / "data").resolve())
    return copy


def old_handout(path: Path) -> Path:
    path.mkdir()
    (path / "sentinel.txt").write_text("the previous handout\n")
    return path


def test_handout_layout(tmp_path, stub_client):
    out = tmp_path / "h"
    built = build_tree(REFERENCE, out)
    cases = {f for f in built.files if f.startswith("tests/hw1/hw1_cases/")}
    assert {"tests/hw1/hw1_cases/__init__.py", "tests/hw1/hw1_cases/checks.py",
            "tests/hw1/hw1_cases/points.json"} < cases
    assert set(built.files) - cases == {
        "tests/hw1/test_cases.py", ".gitignore", "Makefile", "README.md", "conftest.py", "pytest.ini", "mugrade.py",
        "hw1.ipynb", "hw1_check.py", ".github/workflows/grade.yml",
        "apps/simple_ml.py", "tests/hw1/test_autograd_hw.py", "tools/fetch_mnist.py", "tools/graded_with.py",
        "python/needle/__init__.py", "python/needle/autograd.py", "python/needle/backend_numpy.py",
        "python/needle/init/__init__.py", "python/needle/init/init_basic.py",
        "python/needle/ops/__init__.py", "python/needle/ops/ops_mathematic.py"}
    assert set(snapshot(out)) == set(built.files)  # nothing else, no instructor-only file
    ignored = (out / ".gitignore").read_text().split()
    assert "data/" in ignored and ".venv/" in ignored
    shebang, rest = (REFERENCE / "tools/fetch_mnist.py").read_bytes().split(b"\n", 1)
    assert (out / "tools/fetch_mnist.py").read_bytes() == shebang + b"\n" + \
        b"# Generated from reference/tools/fetch_mnist.py by `make handout`; do not edit.\n" + rest
    assert (out / "mugrade.py").read_bytes() == b"# Generated from mugrade.py by `make handout`; do not edit.\n" + \
        (stub_client / "mugrade.py").read_bytes()  # the stand-in client lies outside the repository


def test_build_is_deterministic(tmp_path, stub_client):
    build_tree(REFERENCE, tmp_path / "one")
    build_tree(REFERENCE, tmp_path / "two")
    assert snapshot(tmp_path / "one") == snapshot(tmp_path / "two")


def test_every_solution_block_is_stubbed(tmp_path, stub_client):
    built = build_tree(REFERENCE, tmp_path / "h")
    text = (tmp_path / "h/python/needle/ops/ops_mathematic.py").read_text()
    assert '        raise NotImplementedError("Q2: EWiseDiv.gradient")\n' in text
    solutions = [b for _, b in built.blocks if b.kind == "solution"]
    assert {b.question for b in solutions} == {"Q1", "Q2", "Q3", "Q4", "Q5", "Q6"}


def test_marker_error_exits_1_and_keeps_the_old_handout(src, tmp_path, capsys):
    autograd = src / "python/needle/autograd.py"
    lines = autograd.read_text().splitlines(keepends=True)
    end = max(i for i, line in enumerate(lines) if line.strip() == "### END YOUR SOLUTION")
    begin = max(i for i in range(end) if lines[i].strip() == "### BEGIN YOUR SOLUTION")
    del lines[end]
    autograd.write_text("".join(lines))
    dest = old_handout(tmp_path / "handout")
    assert main(["handout", str(src), str(dest)]) == 1
    assert capsys.readouterr().err == (f"{src}/python/needle/autograd.py:{begin + 1}: "
                                       "### BEGIN YOUR SOLUTION is never closed\n")
    assert [p.name for p in dest.iterdir()] == ["sentinel.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grader-files", "handout", "reference"]


def test_leak_fails_the_build_and_keeps_the_old_handout(src, tmp_path, capsys):
    secret = next(s for s in build_tree(src, tmp_path / "probe").secrets if "ops_mathematic.py" in s.origin)
    shutil.rmtree(tmp_path / "probe")
    readme = src / "handout_files/README.md"
    readme.write_text(readme.read_text() + "\n    " + secret.text + "\n")
    dest = old_handout(tmp_path / "handout")
    assert main(["handout", str(src), str(dest), "--skip-tests"]) == 1
    err = capsys.readouterr().err
    assert f"{dest}/README.md:" in err and "solution line leaked (from " in err
    assert "ops_mathematic.py:" in err
    assert [p.name for p in dest.iterdir()] == ["sentinel.txt"]


def test_build_replaces_the_handout_and_keeps_local_state(src, tmp_path, capsys):
    dest = old_handout(tmp_path / "handout")
    (dest / ".venv").mkdir()
    (dest / ".venv/keep").write_text("x")
    assert main(["handout", str(src), str(dest), "--skip-tests"]) == 0
    assert not (dest / "sentinel.txt").exists()
    assert (dest / ".venv/keep").read_text() == "x"
    assert (dest / "python/needle/autograd.py").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grader-files", "handout", "reference"]
    assert "no leak" in capsys.readouterr().out


def test_unlisted_reference_file_stops_the_build(src, tmp_path):
    (src / "apps/notes.py").write_text("x = 1\n")
    with pytest.raises(HandoutError) as info:
        build_tree(src, tmp_path / "out")
    assert str(info.value) == (f"{src}/apps/notes.py: not in the handout manifest: add it to "
                               "[manifest] files or instructor_only in the assignment's assignment.toml")


def test_missing_submit_client_stops_the_build(src, tmp_path, stub_client):
    (stub_client / "mugrade.py").unlink()
    with pytest.raises(HandoutError) as info:
        build_tree(src, tmp_path / "out")
    assert str(info.value) == (f"{stub_client}/mugrade.py: listed in the handout manifest "
                               "but missing (mugrade.py in the handout)")


def test_check_handout_lists_stale_missing_and_extra_files(src, tmp_path, capsys):
    dest = tmp_path / "handout"
    make_handout(src, dest, run_tests=False)
    assert main(["check-handout", str(src), str(dest)]) == 0
    assert "up to date" in capsys.readouterr().out
    assert differences(src, dest) == []
    (dest / "python/needle/autograd.py").write_text("# edited by hand\n")
    (dest / "README.md").unlink()
    (dest / "notes.txt").write_text("x")
    (dest / "data").mkdir()  # local state is not compared
    (dest / "data/mnist.gz").write_text("x")
    assert main(["check-handout", str(src), str(dest)]) == 1
    assert capsys.readouterr().err == (
        f"{dest}: stale, run `make handout` and commit it; differing files:\n"
        "  README.md (missing)\n  notes.txt (not generated: remove it)\n  python/needle/autograd.py\n")


def test_check_handout_notices_a_lost_executable_bit(src, tmp_path):
    (src / "tools/fetch_mnist.py").chmod(0o755)
    dest = tmp_path / "handout"
    make_handout(src, dest, run_tests=False)
    (dest / "tools/fetch_mnist.py").chmod(0o644)
    assert differences(src, dest) == ["tools/fetch_mnist.py"]


def test_usage_error_exits_2(tmp_path, capsys):
    assert main(["handout", str(tmp_path / "nowhere"), str(tmp_path / "out")]) == 2
    assert "not a directory" in capsys.readouterr().err


def test_judge_reports_each_wrong_outcome():
    outcomes = [PytestOutcome("test_op_forward[log]", "failed", "NotImplementedError: Q1: Log.compute"),
                PytestOutcome("test_op_backward[log]", "failed", "NotImplementedError: Q1: Log.compute"),
                PytestOutcome("test_topo_sort_chain", "failed", "ImportError: no module named mugrade"),
                PytestOutcome("test_compute_gradient_x", "passed", "")]
    assert _judge("handout", "t.py", outcomes, "any-question") == [
        "t.py::test_topo_sort_chain: should fail with NotImplementedError in the handout, "
        "got failed: ImportError: no module named mugrade",
        "t.py::test_compute_gradient_x: should fail with NotImplementedError in the handout, got passed"]
    assert _judge("Q2 only", "t.py", outcomes[1:2], "Q2") == [
        "t.py::test_op_backward[log]: should fail with NotImplementedError naming Q2 in the Q2 only, "
        "got failed: NotImplementedError: Q1: Log.compute"]
    assert _judge("reference", "t.py", outcomes[3:], "pass") == []


def test_test_names_need_exactly_one_question_keyword():
    outcomes = [PytestOutcome("test_compute_gradient_backward", "passed", ""),
                PytestOutcome("test_misc", "passed", "")]
    problems = _naming_problems(outcomes, "t.py", keywords(Assignment.hw1()))
    assert problems[:2] == [
        "t.py::test_compute_gradient_backward: the name must contain exactly one of forward, backward, "
        "topo_sort, compute_gradient, softmax_loss_ndl, nn_epoch_ndl",
        "t.py::test_misc: the name must contain exactly one of forward, backward, topo_sort, "
        "compute_gradient, softmax_loss_ndl, nn_epoch_ndl"]
    assert "t.py: no public test for Q1 (forward)" in problems


def test_source_that_is_not_utf8_stops_the_build(src, tmp_path):
    (src / "apps/simple_ml.py").write_bytes(b"x = '\xff'\n")
    with pytest.raises(HandoutError) as info:
        build_tree(src, tmp_path / "out")
    assert str(info.value) == f"{src}/apps/simple_ml.py: not UTF-8 text (byte 5); save it as UTF-8"


def test_import_check_reports_a_broken_handout(tmp_path):
    (tmp_path / "python/needle").mkdir(parents=True)
    (tmp_path / "python/needle/__init__.py").write_text("from .missing import thing\n")
    (tmp_path / "apps").mkdir()
    problems = import_problems(tmp_path, "handout")
    assert problems == ["handout: `import needle, simple_ml` fails from the handout root: "
                        "ModuleNotFoundError: No module named 'needle.missing'"]
    (tmp_path / "python/needle/__init__.py").write_text("")
    (tmp_path / "apps/simple_ml.py").write_text("import needle\n")
    assert import_problems(tmp_path, "handout") == []


def test_the_reference_copies_are_not_committed_but_ignored():
    """reference/mugrade.py and the reference's public cases are build
    products (`make handout`): git ignores them, only the handout's ship."""
    copies = [REFERENCE / "mugrade.py", REFERENCE / Assignment.hw1().cases_dest / "points.json"]
    rels = [str(p.relative_to(ROOT)) for p in copies]
    tracked = subprocess.run(["git", "ls-files", "--", *rels], cwd=ROOT, capture_output=True, text=True)
    ignored = subprocess.run(["git", "check-ignore", "--no-index", *rels], cwd=ROOT, capture_output=True, text=True)
    if tracked.returncode or ignored.returncode > 1:
        pytest.skip("not a git checkout")
    assert tracked.stdout == "" and ignored.stdout.split() == rels


def test_reference_copies_writes_what_is_missing_and_only_that(src, stub_client):
    for path in (src / "mugrade.py", src / Assignment.hw1().cases_dest):
        shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
    lines = reference_copies(src, Assignment.hw1())
    assert lines == [f"{src}/mugrade.py: refreshed from grader/shipped/mugrade.py",
                     f"{src}/{Assignment.hw1().cases_dest}: refreshed from grader/shipped/cases"]
    assert (src / "mugrade.py").read_bytes() == mirror_bytes(stub_client / "mugrade.py", Assignment.hw1())
    assert (src / Assignment.hw1().cases_dest / "points.json").is_file()
    assert reference_copies(src, Assignment.hw1()) == []  # fresh: nothing written again


def test_make_handout_refreshes_the_reference_copy_of_the_client(src, tmp_path, stub_client, capsys):
    (src / "mugrade.py").unlink(missing_ok=True)
    (src / "mugrade.py").symlink_to("../grader/untrusted/mugrade.py")  # the old layout, dangling in a copy
    assert main(["handout", str(src), str(tmp_path / "h"), "--skip-tests"]) == 0
    assert not (src / "mugrade.py").is_symlink()
    assert (src / "mugrade.py").read_bytes() == mirror_bytes(stub_client / "mugrade.py", Assignment.hw1())
    assert f"{src}/mugrade.py: refreshed from grader/shipped/mugrade.py" in capsys.readouterr().out
    assert [p.name for p in src.iterdir() if p.name.startswith(".")] == []  # no temp file left


def test_check_handout_does_not_judge_the_reference_copies(src, tmp_path, capsys):
    dest = tmp_path / "handout"
    make_handout(src, dest, run_tests=False)
    (src / "mugrade.py").write_text("# edited by hand\n")
    assert main(["check-handout", str(src), str(dest)]) == 0
    assert capsys.readouterr().err == ""


def test_check_handout_reports_a_copy_that_lost_its_label(src, tmp_path, capsys):
    dest = tmp_path / "handout"
    make_handout(src, dest, run_tests=False)
    for copy in (dest / "conftest.py", dest / "tests/hw1/hw1_cases/compare.py"):
        label, rest = copy.read_text().split("\n", 1)
        assert label.startswith("# Generated from ")
        copy.write_text(rest)
    assert main(["check-handout", str(src), str(dest)]) == 1
    assert capsys.readouterr().err == (f"{dest}: stale, run `make handout` and commit it; differing files:\n"
                                       "  conftest.py\n"
                                       "  tests/hw1/hw1_cases/compare.py\n")


def test_check_handout_reports_a_generator_that_writes_no_label(src, tmp_path, monkeypatch, capsys):
    """Fresh copies equal to what the generator writes are not enough: the
    generator itself must label every file, or say where the label is."""
    monkeypatch.setattr(labels, "label", lambda path, data, text: data)
    monkeypatch.setattr(handout_cases, "INDEX_ENTRIES",
                        {k: v for k, v in handout_cases.INDEX_ENTRIES.items() if k != "points.json"})
    dest = tmp_path / "handout"
    make_handout(src, dest, run_tests=False)
    assert main(["check-handout", str(src), str(dest)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"{dest}: stale, run `make handout` and commit it; differing files:"
    no_label = "(no label naming its source (a first line `# Generated from SOURCE by `make handout`; " \
               "do not edit.`); run `make handout`)"
    assert f"  {dest}/python/needle/autograd.py {no_label}" in err
    assert f"  {dest}/mugrade.py {no_label}" in err
    assert f"  {dest}/tests/hw1/hw1_cases/compare.py {no_label}" in err
    assert f"  {dest}/tests/hw1/hw1_cases/points.json (cannot hold a label and is not listed in GENERATED.txt " \
           "beside it; add it to INDEX_ENTRIES in grader/handout/cases.py)" in err
    assert not any("expected/" in line or "hw1.ipynb" in line for line in err)  # still labelled
