"""A student's `make test` runs each question under the grader's own limits:
the handout's limits.json holds the numbers the grader's declaration gives
(time_limits.handout_limits, RunConfig's memory), and the handout's
conftest.py stops a question there with the grader's words."""

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.core.assignment import Assignment
from grader.grading.run import time_limits
from grader.grading.run.config import QuestionLimits
from grader.handout.build import build_tree
from grader.handout.cases import limits_table

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "reference"
LIMITS = ROOT / "handout" / "tests" / "hw1" / "hw1_cases" / "limits.json"
DETACHED = "        W1 = ndl.Tensor(W1.numpy() - lr * W1.grad.numpy())\n        W2 = ndl.Tensor(W2.numpy() - lr * W2.grad.numpy())\n"
NOT_DETACHED = "        W1 = W1 - lr * W1.grad\n        W2 = W2 - lr * W2.grad\n"
SCALED_LIMIT = 10.0  # Q6's limit in the non-detaching test
MARGIN = 60  # pytest's start, MNIST's reading and Q6's other cases


def differences(shipped: dict, registry) -> list:
    """The questions whose shipped limits are not the grader's declaration's."""
    want = {"questions": {}}
    for q in registry.questions:
        limit = time_limits.handout_limits()[q.key]
        want["questions"][q.key] = {
            "label": q.label,
            "seconds": limit.seconds,
            "why": limit.why,
            "memory_mb": registry.memory(q.key) * QuestionLimits.memory_mb,
        }
    return sorted(k for k in want["questions"] if shipped["questions"].get(k) != want["questions"][k])


def test_the_handout_ships_the_graders_limits():
    registry = Assignment.hw1().registry()
    shipped = json.loads(LIMITS.read_text())
    assert shipped == limits_table(registry) and differences(shipped, registry) == []
    assert set(shipped["questions"]) == {q.key for q in registry.questions}
    q6 = shipped["questions"]["nn_epoch_ndl"]
    assert q6["seconds"] == time_limits.MULTIPLE * time_limits.HANDOUT_REFERENCE_SECONDS["nn_epoch_ndl"]
    assert q6["memory_mb"] == 2 * QuestionLimits.memory_mb


def test_a_wrong_limit_is_caught():
    registry = Assignment.hw1().registry()
    shipped = json.loads(LIMITS.read_text())
    shipped["questions"]["nn_epoch_ndl"]["seconds"] = 900
    shipped["questions"]["forward"]["memory_mb"] = 6200
    assert differences(shipped, registry) == ["forward", "nn_epoch_ndl"]


def _pytest(root: Path, *args, timeout=900):
    start = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/hw1", "-q", "-p", "no:cacheprovider", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={"PATH": "/usr/bin:/bin", "OPENBLAS_NUM_THREADS": "1"},
    )
    return run, time.monotonic() - start


@pytest.fixture(scope="module")
def handout_copy(tmp_path_factory):
    root = tmp_path_factory.mktemp("limits") / "hw1"
    build_tree(REFERENCE, root, strip_questions=frozenset())
    (root / "data").symlink_to((REFERENCE / "data").resolve())
    return root


def test_a_case_over_a_tiny_limit_stops_with_the_graders_words(handout_copy, tmp_path):
    """The plugin itself, on a limit of 1 us for Q3: its cases stop with the reason, the other questions run.
    (Any first case takes longer, so the second stops and the rest are not run; with 1 ms, the
    reference's first four cases once fit in it and only the last one stopped.)"""
    limits = handout_copy / "tests/hw1/hw1_cases/limits.json"
    saved = limits.read_text()
    doc = json.loads(saved)
    doc["questions"]["topo_sort"]["seconds"] = 1e-6
    limits.write_text(json.dumps(doc))
    try:
        run, _ = _pytest(handout_copy, "-k", "topo_sort or compute_gradient", timeout=300)
    finally:
        limits.write_text(saved)
    assert re.search(
        r"^Q3 topo_sort: stopped after 1e-06 s, the grader's limit: 1e-06 s and \d+ MB", run.stdout, re.M
    ), run.stdout[-3000:]
    assert "not run: Q3 topo_sort: stopped after" in run.stdout
    assert not re.search(r"FAILED tests/hw1/test_cases.py::test_case\[compute_gradient", run.stdout), run.stdout[-3000:]


@pytest.mark.slow
def test_a_non_detaching_nn_epoch_ends_within_the_graders_limit(handout_copy):
    """Q6's limit ends a graph that grows without end. The limit is scaled
    down in this copy's limits.json (the shipped 65 s is checked above; the
    plugin reads whatever the file says), so the test waits 10 s, not 65."""
    simple_ml = handout_copy / "apps/simple_ml.py"
    limits = handout_copy / "tests/hw1/hw1_cases/limits.json"
    text, saved = simple_ml.read_text(), limits.read_text()
    assert text.count(DETACHED) == 1, "the reference's nn_epoch changed: update this test"
    doc = json.loads(saved)
    assert doc["questions"]["nn_epoch_ndl"]["seconds"] > SCALED_LIMIT
    doc["questions"]["nn_epoch_ndl"]["seconds"] = limit = SCALED_LIMIT
    limits.write_text(json.dumps(doc))
    try:
        # What the run costs besides the stopped case (pytest's start, MNIST, Q6's other cases), measured
        # on the correct code: a busy machine slows both runs alike.
        _, correct = _pytest(handout_copy, "-k", "nn_epoch_ndl", timeout=limit + 5 * MARGIN)
        simple_ml.write_text(text.replace(DETACHED, NOT_DETACHED))
        run, seconds = _pytest(handout_copy, "-k", "nn_epoch_ndl", timeout=limit + 5 * MARGIN)
    finally:
        simple_ml.write_text(text)
        limits.write_text(saved)
    assert seconds < limit + max(MARGIN, 2 * correct), (seconds, correct, run.stdout[-3000:])
    assert re.search(
        # whichever of the grader's two limits the growing graph meets first: its time or its memory
        rf"^Q6 nn_epoch_ndl: stopped (after {limit:g} s|at \d+ MB in use), the grader's limit: {limit:g} s and \d+ MB "
        r"\(limit: ",
        run.stdout,
        re.M,
    ), run.stdout[-3000:]
