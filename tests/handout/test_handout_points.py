"""The student's side of the handout: `make test` ends with the points
table (which names the hidden cases), the tables shipped in the handout
agree with the case registry, and `make submit` never shows the key.
(The table's golden test and its equality with the grader's points:
test_handout_cases.py.)"""
import importlib.util
import json
import os
import subprocess
import sys
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from grader.shipped.cases import CASES, QUESTION

ROOT = Path(__file__).resolve().parents[2]
HANDOUT = ROOT / "handout"
DATA = ROOT / "data"


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_handout_tables_agree_with_the_case_registry():
    points = json.loads((HANDOUT / "tests/hw1/hw1_cases/points.json").read_text())
    assert [(q["label"], q["key"], q["points"]) for q in points["questions"]] == \
        [(q.label, q.key, q.points) for q in QUESTION.values()]
    hidden = Counter(QUESTION[c.question].label for c in CASES if c.hidden)
    assert {q["label"]: q["hidden_cases"] for q in points["questions"]} == dict(hidden)
    check = load(HANDOUT / "hw1_check.py", "handout_hw1_check")
    assert check.QUESTIONS == {q.key: q.label for q in QUESTION.values()}


def student_env():
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MAKEFLAGS", "MAKELEVEL")}
    env.update(MNIST_DIR=str(DATA), OPENBLAS_NUM_THREADS="1")
    env.pop("MUGRADE_KEY", None)
    return env


def student_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "my courses" / "hw1"  # a space in the path, as students' folders often have
    dest.parent.mkdir()
    subprocess.run(["cp", "-r", str(HANDOUT), str(dest)], check=True)
    (dest / "data").symlink_to(DATA)  # `make data` then only checks the sums
    return dest


def make(root: Path, *args):
    return subprocess.run(["make", "--no-print-directory", *args, f"PYTHON={sys.executable}"], cwd=root,
                          env=student_env(), capture_output=True, text=True, timeout=300)


def test_make_test_ends_with_the_points_table(tmp_path):
    run = make(student_copy(tmp_path), "test", "Q=topo_sort")
    lines = run.stdout.rstrip("\n").splitlines()
    assert run.returncode == 0 and run.stderr == "", "make adds nothing under the table"
    start = max(i for i, line in enumerate(lines) if " hw1 points " in line)
    assert "5 not implemented in " in lines[start - 1], "pytest's own count comes before the table"
    assert lines[start + 1] == "question                cases passed        points"
    assert lines[start + 4] == "Q3 topo_sort                     0/5        0/12.5"
    assert lines[-2].split() == ["total", "0/12.5", "(public", "cases", "of", "Q3)"]
    hidden = sum(c.hidden for c in CASES if c.question == "topo_sort")
    assert lines[-1] == (f"hidden cases: 7.5 more points are graded on hidden cases (Q3 {hidden} cases, "
                         "7.5 points); your grade can differ only there.")
    assert len(lines) - start == 10, "nothing may follow the table"


def test_make_test_on_the_empty_handout_is_short(tmp_path):
    """Every case stops at a stub: no traceback, one line per question naming
    the stubs reached, then the table (before: 1,937 lines of tracebacks)."""
    run = make(student_copy(tmp_path), "test")
    out = run.stdout
    assert run.returncode == 0, out[-2000:]
    assert "Traceback" not in out and "raise NotImplementedError" not in out and "FAILED" not in out
    section = out.split(" not implemented yet ", 1)[1].split("\n")[1:]
    stub_lines = [line for line in section if " stop at NotImplementedError: " in line]
    assert [line.split(":")[0] for line in stub_lines] == [f"{q.label} {q.key}" for q in QUESTION.values()]
    scored = Counter(c.question for c in CASES if not c.hidden and not c.advisory)
    advisory = Counter(c.question for c in CASES if not c.hidden and c.advisory)
    q1 = f"Q1 forward: {scored['forward']} cases (and {advisory['forward']} advisory) stop at NotImplementedError: "
    assert stub_lines[0].startswith(q1 + "Q1 PowerScalar.compute, "), stub_lines[0]
    assert stub_lines[2] == f"Q3 topo_sort: {scored['topo_sort']} cases stop at NotImplementedError: Q3 find_topo_sort"
    public = sum(scored.values()) + sum(advisory.values())
    assert f" {public} not implemented in " in out
    assert len(out.splitlines()) < 45, out


class Recorder(BaseHTTPRequestHandler):
    """Refuses every key, as the server does an unknown one, and records the header."""
    seen: list = []

    def do_POST(self):
        self.seen.append(self.headers.get("Authorization"))
        body = b"unknown key: check the key your instructor gave you"
        self.send_response(401)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def refusing_server():
    Recorder.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_make_submit_sends_the_key_but_never_shows_it(tmp_path, refusing_server):
    key = "k3y-that-must-stay-secret"
    run = make(student_copy(tmp_path), "submit", f"KEY={key}", "Q=topo_sort", f"SERVER={refusing_server}")
    assert Recorder.seen == [f"Bearer {key}"], "the key did not reach the server"
    assert run.returncode != 0 and "mugrade: unknown key: check the key" in run.stdout + run.stderr
    assert key not in run.stdout + run.stderr


def test_make_test_selecting_nothing_fails(tmp_path):
    run = make(student_copy(tmp_path), "test", "Q=no_such_question")
    assert run.returncode != 0 and " hw1 points " not in run.stdout


def test_make_submit_takes_the_key_from_mugrade_key(tmp_path, refusing_server):
    key = "exported-secret-key"
    root = student_copy(tmp_path)
    run = subprocess.run(["make", "--no-print-directory", "submit", "Q=topo_sort", f"SERVER={refusing_server}",
                          f"PYTHON={sys.executable}"], cwd=root, env={**student_env(), "MUGRADE_KEY": key},
                         capture_output=True, text=True, timeout=300)
    assert Recorder.seen == [f"Bearer {key}"] and key not in run.stdout + run.stderr


def test_make_submit_without_a_key_prints_usage(tmp_path):
    run = make(student_copy(tmp_path), "submit", "Q=topo_sort")
    assert run.returncode == 2 and "usage: make submit KEY=your-key Q=forward" in run.stdout


def test_notebook_submit_refused_stops_the_cell_with_the_servers_reason(tmp_path, refusing_server,
                                                                          monkeypatch, capsys):
    root = student_copy(tmp_path)
    monkeypatch.chdir(root)
    check = load(root / "hw1_check.py", "student_hw1_check")
    key = "another-secret-key"
    with pytest.raises(check.NotebookError) as info:
        check.submit("topo_sort", key, refusing_server)
    assert str(info.value) == "Q3 topo_sort: not sent: unknown key: check the key your instructor gave you"
    assert Recorder.seen == [f"Bearer {key}"] and key not in capsys.readouterr().out
