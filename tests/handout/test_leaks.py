"""The leak check (grader/handout/leaks.py), alone and on a real handout build."""
import base64
import json
import shutil
from pathlib import Path

import pytest

from grader.handout.build import build_tree
from grader.handout.leaks import find_leaks, is_trivial, normalize, secrets_of
from grader.core.markers import strip_source

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "reference"


@pytest.fixture
def built(tmp_path, stub_client):
    out = tmp_path / "handout"
    return out, build_tree(REFERENCE, out)


@pytest.mark.parametrize("line", ["", "   ", "# a comment", "return", "else:", "pass  # nothing",
                                  ")", "]),", '"""', "try:", "continue  # skip", "return out"])
def test_trivial_lines(line):
    assert is_trivial(normalize(line))


@pytest.mark.parametrize("line", ["return -x", "return x, y", "a, b = node.inputs", "out", "x = 1", "return None, grad",
                                  "raise ValueError('bad')", "if a:"])
def test_non_trivial_lines(line):
    assert not is_trivial(normalize(line))


def test_normalize_drops_comments_but_not_hashes_in_strings():
    assert normalize("    x  =  1   # why") == "x = 1"
    assert normalize("s = '#' + t  # tail") == "s = '#' + t # tail"


def test_given_code_is_not_secret():
    source = "def f(a):\n    b = a.x\n    # Q1\n    ### BEGIN YOUR SOLUTION\n    b = a.x\n    return b * 2\n    ### END YOUR SOLUTION\n"
    result = strip_source(source, "f.py")
    assert [(s.text, s.origin) for s in secrets_of("f.py", source, result.blocks)] == [("return b * 2", "f.py:6")]


def test_the_reference_handout_has_no_leak(built):
    out, result = built
    assert len(result.secrets) > 50  # the check has something to look for
    assert find_leaks(out, list(result.secrets), label="handout") == []


def test_planted_leak_in_a_text_file_is_named(built):
    out, result = built
    secret = next(s for s in result.secrets if "autograd.py:" in s.origin and "topo_sort_dfs(" in s.text)
    readme = out / "README.md"
    readme.write_text(readme.read_text() + "\n    " + secret.text + "\n")
    line = len(readme.read_text().splitlines())
    leaks = find_leaks(out, list(result.secrets), label="handout")
    assert [str(leak) for leak in leaks] == [
        f"handout/README.md:{line}: solution line leaked (from {secret.origin}): {secret.text}"]


@pytest.mark.parametrize("place", ["output", "metadata", "attachment"])
def test_planted_leak_in_a_notebook_is_caught(built, place):
    out, result = built
    secret = next(s for s in result.secrets if "apps/simple_ml.py" in s.origin)
    nb = json.loads((out / "hw1.ipynb").read_text())
    cell = nb["cells"][2]
    if place == "output":
        cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": [secret.text + "\n"]}]
    elif place == "metadata":
        cell["metadata"]["note"] = secret.text
    else:
        nb["cells"][0]["attachments"] = {"hint.txt": {"text/plain": base64.b64encode(
            secret.text.encode()).decode()}}
    (out / "hw1.ipynb").write_text(json.dumps(nb))
    leaks = find_leaks(out, list(result.secrets), label="handout")
    assert len(leaks) == 1 and leaks[0].where == "handout/hw1.ipynb"
    assert secret.origin in leaks[0].reason


def test_instructor_cell_lines_are_secret(built):
    _, result = built
    assert any(s.origin.startswith(f"{REFERENCE.as_posix()}/hw1.ipynb#cell") for s in result.secrets)


def test_marker_pair_left_with_a_body_is_caught(built):
    out, result = built
    path = out / "python/needle/autograd.py"
    text = path.read_text()
    stub = 'raise NotImplementedError("Q3: find_topo_sort")'
    path.write_text(text.replace(stub, stub + "\n    order = []"))
    leaks = [str(leak) for leak in find_leaks(out, list(result.secrets), label="h")]
    assert len(leaks) == 1 and leaks[0].startswith("h/python/needle/autograd.py:")
    assert "marker pair still has a body" in leaks[0]


def test_hidden_test_lines_are_secret(tmp_path, stub_client):
    src = tmp_path / "reference"
    shutil.copytree(REFERENCE, src, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    tests = src / "tests/hw1/test_autograd_hw.py"
    tests.write_text(tests.read_text() + "\n\n### BEGIN HIDDEN TESTS\n"
                     "def test_hidden_forward():\n    assert ndl.exp(T(np.zeros(3))).numpy().sum() == 3.0\n"
                     "### END HIDDEN TESTS\n")
    result = build_tree(src, tmp_path / "out")
    assert "test_hidden_forward" not in (tmp_path / "out/tests/hw1/test_autograd_hw.py").read_text()
    hidden = [s for s in result.secrets if "test_hidden_forward" in s.text]
    assert hidden and hidden[0].origin.startswith(f"{src.as_posix()}/tests/hw1/test_autograd_hw.py:")


def test_hidden_case_rows_are_secret_and_a_planted_one_is_caught(built):
    out, result = built
    row = next(s for s in result.secrets if s.origin.startswith("grader/shipped/cases/forward.py:")
               and "randn(26, 2, 2, 3, 4)" in s.text)
    public = out / "tests/hw1/hw1_cases/forward.py"
    assert "randn(26, 2, 2, 3, 4)" not in public.read_text()  # the hidden row did not ship
    public.write_text(public.read_text() + f"\nX = [\n    {row.text}\n]\n")
    leaks = [str(leak) for leak in find_leaks(out, list(result.secrets), label="handout")]
    assert leaks == [f"handout/tests/hw1/hw1_cases/forward.py:{len(public.read_text().splitlines()) - 1}: "
                     f"solution line leaked (from {row.origin}): {row.text}"]


def test_hidden_case_functions_are_secret(built):
    out, result = built
    secret = next(s for s in result.secrets if s.origin.startswith("grader/shipped/cases/topo.py:")
                  and "range(300)" in s.text)
    assert "range(300)" not in (out / "tests/hw1/hw1_cases/topo.py").read_text()
    notebook = out / "hw1.ipynb"
    document = json.loads(notebook.read_text())
    document["cells"][0]["source"] = [secret.text]
    notebook.write_text(json.dumps(document))
    assert [leak.reason for leak in find_leaks(out, list(result.secrets))] == [
        f"solution line leaked (from {secret.origin}): {secret.text}"]
