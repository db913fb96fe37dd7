"""The notebook's helpers: fetch MNIST, run one question's public cases,
submit one question to the grading server, zip your files for upload.

Each runs a fresh Python, the kernel's own interpreter (`sys.executable`),
in the homework folder: it sees your latest edits without restarting the
kernel, and a crash in your code cannot take the kernel down. When cases
fail, CasesFailed stops the cell (and "Run all") with a short summary: the
question, how many cases failed, and the first reason. For the full report,
run `python -m pytest -k forward` (or `make test Q=forward`) in a terminal.

Standard library only; pytest (and numpy, requests) in the kernel's Python.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

QUESTIONS = {"forward": "Q1", "backward": "Q2", "topo_sort": "Q3",
             "compute_gradient": "Q4", "softmax_loss_ndl": "Q5", "nn_epoch_ndl": "Q6"}
TEST_DIR = "tests/hw1"
POINTS = "tests/hw1/hw1_cases/points.json"  # each public case's points (0: advisory), hidden cases' points
UNIT = 10_000  # the grader's points are whole multiples of 1e-4
DEFAULT_SERVER = "http://127.0.0.1:8000/"
REASON_WIDTH = 300  # characters of the first reason shown
FILE_LINE = re.compile(r'File "(.+)", line (\d+)')
STUDENT_CODE = "tests/hw1/hw1_cases/student_code.json"  # the files you write (its "files"), as the grader reads them
ZIP_NAME = "hw1-submission.zip"


class NotebookError(Exception):
    """Stops the cell showing only its message. IPython (Jupyter, Colab)
    prints what `_render_traceback_` returns instead of a traceback."""

    def _render_traceback_(self):
        return [f"{type(self).__name__}: {line}" if i == 0 else line
                for i, line in enumerate(str(self).splitlines())]


class CasesFailed(NotebookError):
    """Some public cases of a question failed."""


def _root():
    root = Path.cwd()
    if not (root / TEST_DIR).is_dir():
        raise NotebookError(f"{root} has no {TEST_DIR}: run the notebook from the hw1 folder "
                            "(in Colab, set HW1_DIR in the setup cell)")
    return root


def _env(**extra):
    # One BLAS thread: faster than the default on small machines, and steadier.
    return {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1", **extra}


def _label(keyword):
    if keyword is None:
        return "all questions"
    if keyword not in QUESTIONS:
        raise NotebookError(f"unknown question {keyword!r}; use one of {', '.join(QUESTIONS)}")
    return f"{QUESTIONS[keyword]} {keyword}"


def fetch_data():
    """MNIST into data/ (from $MNIST_DIR if set, else downloaded), checked by SHA-256."""
    root = _root()
    data = root / "data"
    if data.is_symlink() and not data.exists():
        # A copy of the instructor's folder keeps its link to a data folder
        # that is not there; the link holds nothing, so a real folder replaces it.
        print(f"data/: the link to {os.readlink(data)} leads nowhere here; fetching into a folder instead")
        data.unlink()
    run = subprocess.run([sys.executable, "tools/fetch_mnist.py", "data"], cwd=root, env=_env(),
                         capture_output=True, text=True)
    print(run.stdout + run.stderr, end="")
    if run.returncode != 0:
        raise NotebookError("MNIST is not in data/ (see the message above)")
    print("data/: the four MNIST files are in place")


def _reason(element):
    """The first line saying why a case failed, from its JUnit element."""
    message = (element.get("message") or "").strip()
    text_lines = [line[1:].strip() for line in (element.text or "").splitlines() if line.startswith("E ")]
    if text_lines and (not message or message == "collection failure"):
        message = text_lines[-1]  # e.g. the SyntaxError under a collection failure
        where = [m for m in map(FILE_LINE.search, text_lines) if m]
        if where:  # a SyntaxError's own file and line, relative to the homework folder
            message += f" ({os.path.relpath(where[-1].group(1))}, line {where[-1].group(2)})"
    first = message.splitlines()[0] if message else "no reason given"
    return first[:REASON_WIDTH]


def _cause(case):
    """The `Likely cause: ...` line test_cases.py recorded for a case, or ""."""
    for prop in case.iter("property"):
        if prop.get("name") == "cause" and (prop.get("value") or "").strip():
            return prop.get("value").strip().splitlines()[0][:REASON_WIDTH]
    return ""


def _results(junit):
    """[(case name, status, reason)] from pytest's JUnit XML; status is
    passed, failed, xfailed (an advisory case that did not pass) or
    skipped, reason "" when passed; a failed case's reason has its
    `Likely cause:` line under it when the grader's rule names one."""
    results = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        status, reason = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                status = "failed" if child.tag != "skipped" else \
                    "xfailed" if child.get("type") == "pytest.xfail" else "skipped"
                reason = _reason(child)
        cause = _cause(case) if status == "failed" else ""
        results.append((case_name(case.get("name", "?")), status, reason + (f"\n{cause}" if cause else "")))
    return results


def case_name(test):
    """The grader's case name of `test_case[<case>]`, any other test's name as it is."""
    return test[len("test_case["):-1] if test.startswith("test_case[") and test.endswith("]") else test


def _points(units):
    return f"{units / UNIT:.2f}".rstrip("0").rstrip(".")


def _load_points(root):
    try:
        return json.loads((root / POINTS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"questions": [], "cases": {}}


def summary(results, points, keyword=None):
    """The counts `make test` prints, for the cases in `results`: (scored
    line, advisory line or ""). Scored cases are those with points; advisory
    ones (0 points, beyond the assignment) are counted apart."""
    cases = points["cases"]
    scored = [(name, status) for name, status, _ in results if cases.get(name, 1) > 0]
    advisory = [(name, status) for name, status, _ in results if cases.get(name, 1) == 0]
    passed = sum(status == "passed" for _, status in scored)
    earned = sum(round(cases.get(name, 0) * UNIT) for name, status in scored if status == "passed")
    questions = [q for q in points["questions"] if keyword in (None, q["key"])]
    public = sum(round(value * UNIT) for name, value in cases.items()
                 if value > 0 and any(name.startswith(q["key"] + "_") for q in questions))
    hidden = sum(round(q["hidden_points"] * UNIT) for q in questions)
    line = f"{passed}/{len(scored)} cases passed, {_points(earned)}/{_points(public)} points (public cases"
    line += f"; {_points(hidden)} more on hidden cases)" if hidden else ")"
    extra = ""
    if advisory:
        ok = sum(status == "passed" for _, status in advisory)
        extra = f"beyond the assignment (no points): {ok} of {len(advisory)} advisory cases passed"
    return line, extra


def run_cases(keyword=None):
    """Run the public cases of one question (`-k keyword`), or all of them.
    Stops the cell when a scored case fails; advisory cases (beyond the
    assignment, no points) are only counted."""
    label, root = _label(keyword), _root()
    with tempfile.TemporaryDirectory(prefix="hw1-cases-") as tmp:
        junit = Path(tmp) / "cases.xml"
        cmd = [sys.executable, "-m", "pytest", TEST_DIR, "-q", "--tb=no", "-p", "no:cacheprovider",
               f"--junitxml={junit}"] + (["-k", keyword] if keyword else [])
        run = subprocess.run(cmd, cwd=root, env=_env(), capture_output=True, text=True)
        results = _results(junit) if junit.is_file() else []
    points = _load_points(root)
    # `-k forward` also matches nn_epoch_ndl_relu_forward where no conftest.py
    # (the handout's) narrows it: a question's cases are those of its name.
    ran = [r for r in results if r[1] != "skipped"
           and (keyword is None or r[0] not in points["cases"] or r[0].startswith(keyword + "_"))]
    scored_failed = [(name, reason) for name, status, reason in ran
                     if status == "failed" and points["cases"].get(name, 1) > 0]
    line, extra = summary(ran, points, keyword)
    if run.returncode in (0, 1) and ran and not scored_failed:
        print(f"{label}: {line}" + (f"\n{extra}" if extra else ""))
        return
    if run.returncode == 1 and scored_failed:
        scored = sum(points["cases"].get(name, 1) > 0 for name, _, _ in ran)
        headline = f"{label}: {len(scored_failed)} of {scored} cases failed"
        first = f"first: {scored_failed[0][0]}: {scored_failed[0][1]}"
    else:  # nothing ran: a file that does not import, no matching case...
        headline = f"{label}: the cases could not run (pytest exit status {run.returncode})"
        failed = [(name, reason) for name, status, reason in results if status == "failed"]
        first = f"first: {failed[0][0]}: {failed[0][1]}" if failed else \
            "pytest said: " + " / ".join((run.stdout + run.stderr).strip().splitlines()[-3:])
    command = "python -m pytest" + (f" -k {keyword}" if keyword else "")
    raise CasesFailed(f"{headline}\n{first}\nfull report: {command}  (in a terminal, in this folder)")


def student_files(root):
    """The homework-relative paths of the files you write (and the grader reads)."""
    try:
        return sorted(json.loads((root / STUDENT_CODE).read_text(encoding="utf-8"))["files"])
    except (OSError, ValueError, KeyError) as exc:
        raise NotebookError(f"{STUDENT_CODE} cannot be read ({exc}): restore it from the handout")


def make_zip(out=ZIP_NAME):
    """Write `out` (in the homework folder): your three files at their paths
    in the homework (python/needle/autograd.py, ...), nothing else. It is
    the upload Gradescope and the grader's `grader grade` take."""
    root = _root()
    files = student_files(root)
    missing = [rel for rel in files if not (root / rel).is_file()]
    if missing:
        raise NotebookError(f"{', '.join(missing)} not found: run this in your hw1 folder, with your files in place")
    target = root / out
    tmp = target.with_name(target.name + ".partial")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as archive:
        for rel in files:
            archive.write(root / rel, rel)
    os.replace(tmp, target)
    print(f"{out}: {', '.join(files)} (upload this file to Gradescope)")
    return target


def submit(keyword, key=None, server=None):
    """Send the submit_<keyword> cases, computed by your code, to the grading server.

    key: yours (default $MUGRADE_KEY); without one nothing is sent.
    server: its URL (default $MUGRADE_SERVER, else http://127.0.0.1:8000/).
    """
    label, root = _label(keyword), _root()
    key = key or os.environ.get("MUGRADE_KEY")
    if not key:
        print(f"{label}: not submitted: set KEY in the setup cell to the key you were given")
        return
    server = server or os.environ.get("MUGRADE_SERVER") or DEFAULT_SERVER
    # The key goes through the environment: it is never printed nor on a command line.
    cmd = [sys.executable, "-m", "mugrade", "submit", "-k", keyword, "--server", server]
    run = subprocess.run(cmd, cwd=root, env=_env(MUGRADE_KEY=key), capture_output=True, text=True)
    print(run.stdout, end="")
    if run.returncode != 0:
        # The client's last line says why: the one line that ended its run on stderr
        # ("mugrade: unknown key ..."), its summary line for this question
        # ("topo_sort   1/3 cases correct; your code raised ..."), or a usage error.
        last = (run.stderr.strip() or run.stdout.strip() or f"exit status {run.returncode}").splitlines()[-1]
        last = last.strip().removeprefix(keyword).strip()
        if last.startswith("mugrade: "):
            last = "not sent: " + last.removeprefix("mugrade: ")
        raise NotebookError(f"{label}: {last}")


def main(argv=None):
    """`python3 hw1_check.py zip` (what `make zip` runs): one line on stderr when it cannot."""
    argv = sys.argv[1:] if argv is None else argv
    if argv != ["zip"]:
        print("usage: python3 hw1_check.py zip", file=sys.stderr)
        return 2
    try:
        make_zip()
    except NotebookError as exc:
        print(f"make zip: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
