"""grade-batch --cluster: a real Dask scheduler and workers, each a separate
process group on 127.0.0.1. One of two workers is killed mid-batch: no
submission is lost, none is graded twice into the gradebook, and the batch
stays resumable. Losing every worker or the scheduler ends the batch with
the reason; TLS keeps strangers (and networked student code) out."""

import csv
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

try:
    import distributed  # noqa: F401
except ImportError:  # a dependency the tests need fails the run, naming the fix, never skips it
    pytest.fail("distributed is not installed: run `.venv/bin/pip install -e '.[server,dev]'`", pytrace=False)

from benchmarks.local_dask import LocalDask  # noqa: E402
from grader import HANDOUT, REFERENCE, ROOT, cli, sandbox  # noqa: E402
from grader.core.assignment import Assignment
from grader.core.blas import ONE_THREAD  # noqa: E402
from grader.grading.batch import cluster
from grader.grading.batch import run as batch
from grader.grading.batch.jobs import Job  # noqa: E402
from grader.grading.run import expected
from grader.grading.run.workers import RunConfig  # noqa: E402

needs_handout = pytest.mark.skipif(
    not (HANDOUT / "python").is_dir(), reason="handout/ not generated yet: run `make handout`"
)


@pytest.fixture(scope="module")
def offline_tier():
    """Without an offline tier, grade-batch refuses a cluster without TLS
    (tested below); probed when a test needs it, not at collection."""
    try:
        tier = sandbox.probe()
    except sandbox.SandboxError as exc:
        pytest.skip(f"no sandbox here: {exc}")
    if tier not in cluster.OFFLINE_TIERS:
        pytest.skip(f"sandbox tier {tier} reaches the network; the cluster tests need bwrap or unshare")


def sandboxed(test):
    return pytest.mark.slow(pytest.mark.sandbox(needs_handout(pytest.mark.usefixtures("offline_tier")(test))))


ENV = {**os.environ, **ONE_THREAD}
REFS = [f"ref{k}" for k in range(2)]  # about 4 s each: long enough to be killed mid-way
STUBS = [f"stub{k}" for k in range(3)]  # the handout: about 1 s each


def library_copy(src: Path, dest: Path) -> Path:
    for sub in ("python", "apps"):
        shutil.copytree(src / sub, dest / sub, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory):
    expected.load(RunConfig(jobs=1))  # answers cached once, not built by both workers at once
    with LocalDask(tmp_path_factory.mktemp("dask"), workers=2) as local:
        yield local


@pytest.fixture(scope="module")
def subs(tmp_path_factory):
    root = tmp_path_factory.mktemp("subs")
    for name in REFS:
        library_copy(REFERENCE, root / name)
    for name in STUBS:
        library_copy(HANDOUT, root / name)
    return root


def grade_batch_cli(*args, wait=True, env=ENV):
    proc = subprocess.Popen(
        [sys.executable, "-m", "grader", "grade-batch", *map(str, args)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    if not wait:
        return proc
    out, err = proc.communicate(timeout=180)
    return proc.returncode, out, err


def gradebook_rows(out: Path) -> list:
    """Every row as written (a dict would hide a duplicate)."""
    with open(out / "gradebook.csv", newline="") as f:
        return list(csv.DictReader(f))


def mixed_gradebook(out: Path):
    """A mid-batch gradebook.csv: some rows scored, some still pending (or False)."""
    try:
        rows = gradebook_rows(out)
    except OSError:
        return False
    totals = [row["total"] for row in rows]
    return rows if "" in totals and any(totals) else False


def wait_until(condition, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {seconds} s waiting for {what}")


@pytest.fixture(scope="module")
def killed_run(dask_cluster, subs, tmp_path_factory):
    """The batch on two workers; w1 is SIGKILLed (nanny and all) while it grades."""
    out = tmp_path_factory.mktemp("out")
    with dask_cluster.client() as watcher:
        victim = dask_cluster.worker_address(watcher, "w1")
        proc = grade_batch_cli(subs, "--out", out, "--cluster", dask_cluster.address, wait=False)

        def grading_a_reference():
            keys = watcher.processing(workers=[victim]).get(victim, ())
            return {key for key in keys if key.startswith("grade-ref")}

        wait_until(grading_a_reference, 60, "w1 to grade a reference copy")
        time.sleep(1.0)  # well inside its grading (about 4 s)
        lost = wait_until(grading_a_reference, 5, "w1 to still grade it")
        dask_cluster.kill_worker(0)
        partial = wait_until(lambda: mixed_gradebook(out) or proc.poll() is not None, 120, "results to stream")
        stdout, stderr = proc.communicate(timeout=180)
        workers_left = len(watcher.scheduler_info()["workers"])
    names = {key.split("-")[1] for key in lost}  # keys are grade-<name>-<batch id>
    print(stderr)  # shown on failure
    return out, proc.returncode, stdout, stderr, names, workers_left, partial


@sandboxed
def test_a_worker_killed_mid_batch_loses_nothing_and_grades_nothing_twice(killed_run):
    out, status, stdout, stderr, lost, workers_left, partial = killed_run
    assert status == 0, stderr
    assert workers_left == 1 and lost  # w1 really died holding work
    assert "graded 5 submission(s)" in stdout
    rows = gradebook_rows(out)
    assert [row["submission"] for row in rows] == sorted(REFS + STUBS)  # each once, none missing
    assert all(row["reason"] == "" for row in rows)
    assert partial is not True, "the batch ended before gradebook.csv showed a finished and a pending row"
    assert all(row["reason"].startswith("not graded yet") for row in partial if row["total"] == "")
    totals = {row["submission"]: row["total"] for row in rows}
    assert all(totals[name] == "100" for name in REFS)
    assert len({totals[name] for name in STUBS}) == 1 and totals["stub0"] != "100"
    assert lost <= set(totals)  # what w1 was grading was graded again elsewhere
    finished = [line.split("last ", 1)[1].split(":")[0] for line in stderr.splitlines() if "last " in line]
    assert sorted(finished) == sorted(REFS + STUBS)  # each result arrived (and was written) once


@sandboxed
def test_cluster_batch_resumes_and_grades_only_what_is_missing(killed_run, dask_cluster, subs):
    out = killed_run[0]
    stamp = (out / "ref0" / "results.json").stat().st_mtime_ns
    shutil.rmtree(out / "stub1")
    status, stdout, stderr = grade_batch_cli(subs, "--out", out, "--cluster", dask_cluster.address)
    assert status == 0, stderr
    assert "skipped 4 already graded" in stderr and "graded 1 submission(s)" in stdout
    assert (out / "ref0" / "results.json").stat().st_mtime_ns == stamp
    rows = {row["submission"]: row for row in gradebook_rows(out)}
    assert sorted(rows) == sorted(REFS + STUBS)
    assert rows["stub1"]["total"] == rows["stub2"]["total"] and rows["stub1"]["reason"] == ""


@sandboxed
def test_a_networked_tier_on_a_cluster_without_tls_grades_nothing(dask_cluster, subs, tmp_path):
    out = tmp_path / "out"
    status, stdout, stderr = grade_batch_cli(subs, "--out", out, "--cluster", dask_cluster.address, "--tier", "rlimit")
    assert status == 1 and "5 not graded (run again to retry them)" in stdout
    rows = gradebook_rows(out)
    assert [row["submission"] for row in rows] == sorted(REFS + STUBS)
    assert all(row["total"] == "" and "(rlimit) lets student code reach the network" in row["reason"] for row in rows)
    assert not any((out / name / "results.json").exists() for name in REFS + STUBS)  # retried next run


@sandboxed
def test_losing_every_worker_ends_the_batch_and_a_rerun_grades_the_rest(tmp_path):
    subs = tmp_path / "subs"
    for name in ("a_ref", "b_ref", "c_stub"):
        library_copy(REFERENCE if name.endswith("ref") else HANDOUT, subs / name)
    out = tmp_path / "out"
    with LocalDask(tmp_path / "dask", workers=1) as local:
        with local.client() as watcher:
            victim = local.worker_address(watcher, "w1")
            proc = grade_batch_cli(
                subs, "--out", out, "--cluster", local.address, "--no-worker-timeout", "3", wait=False
            )
            wait_until(lambda: watcher.processing(workers=[victim]).get(victim), 60, "w1 to get a task")
            local.kill_worker(0)
            stdout, stderr = proc.communicate(timeout=60)  # ends: does not wait for a worker forever
            assert proc.returncode == 1 and "not graded (run again to retry them)" in stdout, stderr
            rows = gradebook_rows(out)
            lost = [row for row in rows if row["total"] == ""]
            assert lost and all("the cluster had no worker for 3 s" in row["reason"] for row in lost)
            local.add_worker("w2")
            local.wait_for_workers(1, time.monotonic() + 60)
        status, stdout, stderr = grade_batch_cli(subs, "--out", out, "--cluster", local.address)
    assert status == 0 and f"graded {len(lost)} submission(s)" in stdout, stderr
    totals = {row["submission"]: row["total"] for row in gradebook_rows(out)}
    assert totals == {"a_ref": "100", "b_ref": "100", "c_stub": totals["c_stub"]} and totals["c_stub"] != ""


@sandboxed
def test_losing_the_scheduler_ends_the_batch_with_the_reason(tmp_path):
    subs = tmp_path / "subs"
    for name in ("a_ref", "b_stub", "c_stub"):
        library_copy(REFERENCE if name.endswith("ref") else HANDOUT, subs / name)
    out = tmp_path / "out"
    with LocalDask(tmp_path / "dask", workers=1) as local:
        with local.client() as watcher:
            victim = local.worker_address(watcher, "w1")
            proc = grade_batch_cli(subs, "--out", out, "--cluster", local.address, wait=False)
            wait_until(lambda: watcher.processing(workers=[victim]).get(victim), 60, "w1 to get a task")
        local.kill_scheduler()
        stdout, stderr = proc.communicate(timeout=90)
    assert proc.returncode == 1 and "not graded (run again to retry them)" in stdout, stderr
    lost = [row for row in gradebook_rows(out) if row["total"] == ""]
    assert lost and all("lost the connection to the scheduler" in row["reason"] for row in lost)
    assert not any((out / row["submission"] / "results.json").exists() for row in lost)


def self_signed(folder: Path) -> dict:
    """One certificate for 127.0.0.1, its own CA, used by every party."""
    folder.mkdir(exist_ok=True)
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    key.chmod(0o600)  # as in production: no sandbox uid may read it
    return {"ca": cert, "cert": cert, "key": key}


@sandboxed
def test_a_tls_cluster_grades_in_a_networked_tier_and_refuses_clients_without_the_key(tmp_path):
    if shutil.which("openssl") is None:  # a missing dependency fails, naming the fix
        pytest.fail("openssl is not installed: run `make system-deps` (or `apt-get install -y openssl`)", pytrace=False)
    subs = tmp_path / "subs"
    library_copy(REFERENCE, subs / "ref")
    library_copy(HANDOUT, subs / "stub")
    with LocalDask(tmp_path / "dask", workers=1, tls=self_signed(tmp_path)) as local:
        assert local.address.startswith("tls://")
        status, stdout, stderr = grade_batch_cli(
            subs,
            "--out",
            tmp_path / "out",
            "--cluster",
            local.address,
            "--tier",
            "rlimit",
            env={**ENV, **local.client_env()},
        )
        assert status == 0 and "graded 2 submission(s)" in stdout, stderr
        rows = {row["submission"]: row for row in gradebook_rows(tmp_path / "out")}
        assert rows["ref"]["total"] == "100" and rows["stub"]["total"] != "100"
        assert "sandbox: rlimit" in (tmp_path / "out" / "ref" / "results.json").read_text()
        status, stdout, stderr = grade_batch_cli(subs, "--out", tmp_path / "out2", "--cluster", local.address)
        assert status == 1 and "a TLS scheduler needs this client's certificate" in stderr
        other = self_signed(tmp_path / "other")  # a certificate the cluster does not trust
        status, stdout, stderr = grade_batch_cli(
            subs,
            "--out",
            tmp_path / "out2",
            "--cluster",
            local.address,
            env={**ENV, **LocalDask(tmp_path, tls=other).client_env()},
        )
        assert status == 1 and "no Dask scheduler answered" in stderr, stderr
        assert len(stderr.strip().splitlines()) == 1 and not (tmp_path / "out2").exists()
        # knowing the (public) CA is not enough: the scheduler wants a client key it trusts
        stranger = {
            **local.client_env(),
            "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": str(other["cert"]),
            "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": str(other["key"]),
        }
        status, stdout, stderr = grade_batch_cli(
            subs, "--out", tmp_path / "out2", "--cluster", local.address, env={**ENV, **stranger}
        )
        assert status == 1 and "no Dask scheduler answered" in stderr, stderr
        assert not (tmp_path / "out2").exists()


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_no_scheduler_is_one_line_exit_1_and_no_output(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cluster, "CONNECT_SECONDS", 1)
    (tmp_path / "subs" / "alice").mkdir(parents=True)
    address = f"tcp://127.0.0.1:{free_port()}"
    assert cli.main(["grade-batch", str(tmp_path / "subs"), "--out", str(tmp_path / "out"), "--cluster", address]) == 1
    err = capsys.readouterr().err
    assert f"--cluster {address}: no Dask scheduler answered" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out" / "gradebook.csv").exists() and not (tmp_path / "out" / "alice").exists()


def test_a_cluster_address_without_a_scheme_is_a_usage_error(tmp_path, capsys):
    (tmp_path / "subs" / "alice").mkdir(parents=True)
    assert (
        cli.main(["grade-batch", str(tmp_path / "subs"), "--out", str(tmp_path / "out"), "--cluster", "localhost:8786"])
        == 2
    )
    err = capsys.readouterr().err
    assert "--cluster 'localhost:8786': not a scheduler address; give one such as tcp://HOST:8786" in err
    assert not (tmp_path / "out").exists()


def fake_grade(job):
    """Stands in for grade_one: writes a results.json into the job's folder."""
    job.out_dir.mkdir(parents=True)
    (job.out_dir / "results.json").write_text('{"score": 7}')
    return batch.Done(job.name, 7.0, True, 0.0)


def test_grade_remote_returns_the_reports_and_refuses_what_it_cannot_grade(tmp_path):
    (tmp_path / "alice").mkdir()
    key = expected.cache_key(Assignment.hw1())
    offline = RunConfig(jobs=1, tier="bwrap")  # the tier is only read, not run, here
    graded = cluster.grade_remote(Job("alice", tmp_path / "alice", tmp_path / "unused", offline), fake_grade, key)
    assert graded.done.score == 7 and graded.files == (("results.json", '{"score": 7}'),)
    assert not (tmp_path / "unused").exists()  # graded into the worker's own temp folder
    with pytest.raises(cluster.ClusterError, match="not visible on the worker.*shared|same path"):
        cluster.grade_remote(Job("bob", tmp_path / "bob", tmp_path / "o", offline), fake_grade, key)
    with pytest.raises(cluster.ClusterError, match="runs a different grader"):
        cluster.grade_remote(Job("alice", tmp_path / "alice", tmp_path / "o", offline), fake_grade, "0" * 24)
    networked = RunConfig(jobs=1, tier="rlimit")
    with pytest.raises(cluster.ClusterError, match="reach the network"):
        cluster.grade_remote(Job("alice", tmp_path / "alice", tmp_path / "o", networked), fake_grade, key)


def test_save_writes_only_the_report_files(tmp_path):
    graded = cluster.Graded(
        batch.Done("a", 1.0, True, 0.0),
        (("report.md", "# r"), ("results.json", "{}"), ("../escape", "x"), ("x.sh", "x")),
    )
    cluster.save(graded, tmp_path / "a")
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["report.md", "results.json"]
    assert not (tmp_path / "escape").exists()


def test_deadline_projection_counts_whole_waves():
    from benchmarks.batch import deadline_line, deadline_minutes

    assert deadline_minutes(6.0, 1) == 100.0  # 1,000 x 6 s on one worker
    assert deadline_minutes(6.0, 2) == 50.0
    assert deadline_minutes(6.0, 3) == 334 * 6.0 / 60  # the last, partial wave takes as long as a full one
    assert deadline_minutes(6.0, 1000) == 0.1
    assert deadline_line(6.0).startswith("1,000 submissions at 6.0 s each: 1 worker 100 min, 2 workers 50 min")
    assert deadline_line(6.0).endswith("32 workers 3.2 min, 100 workers 1.0 min")


@pytest.mark.parametrize(
    "tier, address, unsafe",
    [
        ("bwrap", "tcp://127.0.0.1:1234", False),
        ("unshare", "tcp://10.0.0.2:1234", False),
        ("rlimit", "tls://10.0.0.2:1234", False),
        ("rlimit", "tcp://127.0.0.1:1234", True),
        ("rlimit", "", True),
        ("some-new-tier", "tcp://127.0.0.1:1234", True),  # unknown: assumed to reach the network
    ],
)
def test_a_networked_sandbox_on_a_cluster_without_tls_is_refused(tier, address, unsafe):
    problem = cluster.network_problem(tier, address)
    assert bool(problem) == unsafe
    if unsafe:
        assert f"({tier}) lets student code reach the network" in problem and "TLS" in problem


def test_without_the_cluster_extra_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    with pytest.raises(cluster.ClusterError, match=r"pip install -e '\.\[cluster\]'"):
        cluster.connect("tcp://127.0.0.1:8786")
