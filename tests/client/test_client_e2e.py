"""Publish and submit end to end against a real server: the reference (all
correct), a mutant (exactly its cases wrong), the handout (nothing right), and
the standalone `python -m mugrade` in a folder that has only a copy of it."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))
from server_harness import REPO, Server, add_user, child_env, sqlite_rows  # noqa: E402

pytestmark = pytest.mark.server
TINY = Path(__file__).resolve().parents[1] / "fixtures" / "server" / "project"
HW1_CASES = {
    "forward": 12,
    "backward": 12,
    "topo_sort": 3,
    "compute_gradient": 3,
    "softmax_loss_ndl": 3,
    "nn_epoch_ndl": 3,
}


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    server = Server(tmp_path_factory.mktemp("client") / "grader.db")
    server.keys = {
        name: add_user(server.db_url, name, role)
        for name, role in [("prof", "instructor"), ("alice", "student"), ("bob", "student"), ("carol", "student")]
    }
    server.start()
    r = grader("publish", "--key", server.keys["prof"], "--server", server.url, "--dir", str(REPO / "reference"))
    assert r.returncode == 0, r.stdout + r.stderr
    server.published = r.stdout
    tiny = mugrade(
        standalone(tmp_path_factory.mktemp("tiny")),
        "publish",
        server.keys["prof"],
        "--assignment",
        "tiny",
        "--server",
        server.url,
    )
    assert tiny.returncode == 0, tiny.stdout + tiny.stderr  # tests on the tiny course may run alone
    yield server
    server.stop()


def grader(*args, cwd=REPO, **env):
    return subprocess.run(
        [sys.executable, "-m", "grader", *args],
        cwd=cwd,
        env=child_env(**env),
        capture_output=True,
        text=True,
        timeout=300,
    )


def summary(stdout: str) -> dict:
    """problem -> 'correct/total' from the client's closing summary."""
    tail = stdout.split("summary (")[-1]
    return dict(re.findall(r"^  (\w+)\s+(\d+/\d+) cases correct", tail, re.M))


def project_copy(tmp_path, source: Path) -> Path:
    dest = tmp_path / source.name
    shutil.copytree(source, dest, symlinks=False, ignore=shutil.ignore_patterns("data", "__pycache__", ".venv"))
    (dest / "data").symlink_to(REPO / "data")
    return dest


def test_publish_from_reference_publishes_every_problem(srv):
    for problem, n in HW1_CASES.items():
        assert re.search(rf"^  {problem}\s+{n} cases published$", srv.published, re.M), srv.published


def test_reference_submission_is_all_correct(srv):
    r = grader("submit", srv.keys["alice"], "hw1", "--server", srv.url, "--dir", str(REPO / "reference"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert summary(r.stdout) == {p: f"{n}/{n}" for p, n in HW1_CASES.items()}
    grades = requests.get(
        srv.url + "gradebook.csv", headers={"Authorization": f"Bearer {srv.keys['prof']}"}, timeout=10
    ).text
    header, *rows = [line.split(",") for line in grades.splitlines()]
    alice = dict(zip(header, next(r for r in rows if r[0] == "alice")))
    assert [alice[f"hw1/{p}"] for p in HW1_CASES] == ["100.00"] * len(HW1_CASES)


def test_mutant_fails_exactly_the_mutated_case(srv, tmp_path):
    mutant = project_copy(tmp_path, REPO / "reference")
    ops = mutant / "python" / "needle" / "ops" / "ops_mathematic.py"
    source = ops.read_text()
    assert source.count("return array_api.negative(a)") == 1
    ops.write_text(source.replace("return array_api.negative(a)", "return a"))  # Negate forgets the sign
    r = grader(
        "submit", srv.keys["bob"], "hw1", "-k", "forward or topo_sort", "--server", srv.url, "--dir", str(mutant)
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert summary(r.stdout) == {"forward": "11/12", "topo_sort": "3/3"}
    assert "  case 8: WRONG (negate: value: values differ beyond tolerance" in r.stdout  # named at publish
    grades = requests.get(srv.url + "gradebook.csv", params={"user_key": srv.keys["prof"]}, timeout=10).text
    header, *rows = [line.split(",") for line in grades.splitlines()]
    bob = dict(zip(header, next(r for r in rows if r[0] == "bob")))
    assert (bob["hw1/forward"], bob["hw1/topo_sort"], bob["hw1/backward"]) == ("91.67", "100.00", "")


def test_publish_sends_the_hw1_points_as_weights(srv):
    weights = sqlite_rows(
        srv.db_path,
        "select p.name, p.weight from problems p join assignments a on a.id = p.assignment_id where a.name = 'hw1'",
    )
    assert dict(weights) == {
        "forward": 10,
        "backward": 25,
        "topo_sort": 20,
        "compute_gradient": 25,
        "softmax_loss_ndl": 10,
        "nn_epoch_ndl": 10,
    }


def test_handout_submission_gets_nothing_right(srv, tmp_path):
    handout = project_copy(tmp_path, REPO / "handout")
    r = grader(
        "submit", srv.keys["carol"], "hw1", "-k", "forward or backward", "--server", srv.url, "--dir", str(handout)
    )
    assert r.returncode == 1  # the stubs raise: not every case was sent
    assert summary(r.stdout) == {"forward": "0/12", "backward": "0/12"}
    assert "your code raised an error" in r.stdout


def standalone(tmp_path):
    """A folder with only the tiny course tests and a verbatim copy of grader/shipped/mugrade.py."""
    folder = tmp_path / "course"
    shutil.copytree(TINY, folder)
    shutil.copy(REPO / "grader" / "shipped" / "mugrade.py", folder / "mugrade.py")
    return folder


def mugrade(folder, *args, **env):
    """`python -m mugrade ...` as a student runs it (the module imports nothing
    of the grader package: see test_client_mugrade)."""
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MUGRADE_KEY", "MUGRADE_SERVER")}
    clean.update(OPENBLAS_NUM_THREADS="1", **env)
    return subprocess.run(
        [sys.executable, "-m", "mugrade", *args], cwd=folder, env=clean, capture_output=True, text=True, timeout=120
    )


def test_standalone_client_publishes_and_grades(srv, tmp_path):
    folder = standalone(tmp_path)
    pub = mugrade(folder, "publish", srv.keys["prof"], "--assignment", "tiny", MUGRADE_SERVER=srv.url)
    assert pub.returncode == 0, pub.stdout + pub.stderr
    assert "alpha                3 cases published" in pub.stdout
    ok = mugrade(folder, "submit", srv.keys["alice"], "--assignment", "tiny", MUGRADE_SERVER=srv.url)
    assert ok.returncode == 0 and summary(ok.stdout) == {"alpha": "3/3", "beta": "2/2"}
    wrong = mugrade(
        folder,
        "submit",
        "--assignment",
        "tiny",
        "-k",
        "alpha or beta",
        "--server",
        srv.url,
        MUGRADE_KEY=srv.keys["bob"],
        TINY_WRONG="a1,b0",
    )
    assert summary(wrong.stdout) == {"alpha": "2/3", "beta": "1/2"}
    assert "  case 1: WRONG (value: wrong number" in wrong.stdout


def test_crash_in_student_code_is_reported_and_other_cases_still_count(srv, tmp_path):
    folder = standalone(tmp_path)
    r = mugrade(
        folder, "submit", srv.keys["carol"], "--assignment", "tiny", "-k", "beta", "--server", srv.url, TINY_CRASH="1"
    )
    assert r.returncode == 1
    assert "beta                 1/2 cases correct; your code raised an error" in r.stdout
    assert "a bug in the student's code" in r.stdout  # pytest shows the student their traceback


def test_a_refused_case_fails_alone_and_the_rest_is_sent(srv, tmp_path):
    folder = standalone(tmp_path)
    r = mugrade(folder, "submit", srv.keys["carol"], "--assignment", "tiny", "--server", srv.url, TINY_DEEP="1")
    assert "  case 1: REFUSED (400: submitted value: body nests deeper than 32 levels)" in r.stdout
    assert summary(r.stdout) == {"alpha": "3/3", "beta": "1/2"}


@pytest.mark.parametrize(
    "who, message",
    [
        ("mg_wrong", "mugrade: unknown key: check the key your instructor gave you"),
        ("alice", "mugrade: only instructors can publish; 'alice' is a student"),
    ],
)
def test_auth_errors_end_cleanly_without_traceback(srv, tmp_path, who, message):
    folder = standalone(tmp_path)
    r = mugrade(folder, "publish", srv.keys.get(who, who), "--assignment", "tiny", "--server", srv.url)
    assert r.returncode == 1 and r.stderr == message + "\n"  # one plain line, nothing around it
    assert "Traceback" not in r.stdout + r.stderr and "_pytest" not in r.stdout + r.stderr
    assert "alpha" not in r.stdout.split("mugrade: publish")[-1].split("\n", 1)[-1]  # nothing ran after it


def test_no_server_is_one_plain_line(tmp_path, monkeypatch):
    r = mugrade(standalone(tmp_path), "submit", "k", "--server", "http://127.0.0.1:9", "-k", "alpha")
    assert r.returncode == 1
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("mugrade: no answer from http://127.0.0.1:9/")
    assert lines[0].endswith("; check --server / MUGRADE_SERVER and your network")
    assert "_pytest" not in r.stdout + r.stderr and "!!!" not in r.stdout


def test_submit_says_late_after_the_problems_own_deadline(srv, tmp_path):
    """Deadlines are per problem: alpha's has passed, beta's has not; only alpha is late."""
    import datetime as dt

    folder = standalone(tmp_path)
    now = dt.datetime.now(dt.timezone.utc)
    past, soon = (now - dt.timedelta(hours=1)).replace(microsecond=0), now + dt.timedelta(days=2)
    for problem, due in (("alpha", past), ("beta", soon)):
        r = mugrade(
            folder,
            "publish",
            srv.keys["prof"],
            "--assignment",
            "tinydue",
            "-k",
            problem,
            "--deadline",
            due.isoformat(),
            "--server",
            srv.url,
        )
        assert r.returncode == 0, r.stdout + r.stderr
    r = mugrade(folder, "submit", srv.keys["alice"], "--assignment", "tinydue", "--server", srv.url)
    assert r.returncode == 0 and summary(r.stdout) == {"alpha": "3/3", "beta": "2/2"}, r.stdout
    late = f"late: after the deadline of alpha ({past.strftime('%Y-%m-%d %H:%M')} UTC)"
    assert r.stdout.count(late) == 2, r.stdout  # once when it starts, once in the summary
    assert "deadline of beta" not in r.stdout


def test_unpublished_problem_is_refused_with_the_servers_reason(srv, tmp_path):
    folder = standalone(tmp_path)
    r = mugrade(folder, "submit", srv.keys["alice"], "--assignment", "nope", "-k", "alpha", "--server", srv.url)
    assert r.returncode == 1
    assert "server refused submit (404): problem 'alpha' of assignment 'nope' has no published answers" in r.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["submit", "--server", "http://x"], "give your key"),
        (["submit", "k"], "give the server"),
        (["submit", "k", "--server", "ftp://x"], "use a URL starting with https:// or http://"),
    ],
)
def test_usage_errors_exit_2(monkeypatch, capsys, args, message):
    from grader.shipped import mugrade as client

    for name in ("MUGRADE_KEY", "MUGRADE_SERVER"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(SystemExit) as info:
        client._parse(args)
    assert info.value.code == 2 and message in capsys.readouterr().err


def test_selection_matching_nothing_exits_2(tmp_path):
    r = mugrade(standalone(tmp_path), "submit", "k", "--server", "http://127.0.0.1:9", "-k", "gamma")
    assert r.returncode == 2 and "no submit_* function in tests/hw1 matches -k 'gamma'" in r.stderr


def test_grader_submit_checks_the_folder(tmp_path):
    r = grader("submit", "k", "hw1", "--server", "http://127.0.0.1:9", "--dir", str(tmp_path))
    assert r.returncode == 2 and "tests/hw1 not found" in r.stderr


def test_handout_make_submit_outside_the_repository(srv, tmp_path):
    """`make submit KEY=... Q=...` in a copy of handout/ that holds nothing of
    this repository: stubs get nothing right, the solved files everything."""
    student = tmp_path / "hw1"
    shutil.copytree(REPO / "handout", student, ignore=shutil.ignore_patterns("data", ".venv", "__pycache__"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MAKEFLAGS", "MAKELEVEL")}
    env.update(MNIST_DIR=str(REPO / "data"), OPENBLAS_NUM_THREADS="1")

    def submit(key, q):
        return subprocess.run(
            [
                "make",
                "--no-print-directory",
                "submit",
                f"KEY={key}",
                f"Q={q}",
                f"SERVER={srv.url}",
                f"PYTHON={sys.executable}",
            ],
            cwd=student,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    stubs = submit(srv.keys["carol"], "topo_sort")
    assert summary(stubs.stdout) == {"topo_sort": "0/3"}, stubs.stdout + stubs.stderr
    assert srv.keys["carol"] not in stubs.stdout + stubs.stderr  # the key is never echoed
    for rel in ("python/needle/autograd.py", "python/needle/ops/ops_mathematic.py", "apps/simple_ml.py"):
        shutil.copyfile(REPO / "reference" / rel, student / rel)
    solved = submit(srv.keys["carol"], "forward")
    assert solved.returncode == 0, solved.stdout + solved.stderr
    assert summary(solved.stdout) == {"forward": "12/12"}
    assert "Traceback" not in solved.stdout + solved.stderr
