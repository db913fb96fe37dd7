"""The sandbox against generic hostile workers (tests/fixtures/sandbox/*.py).

Each behaviour is checked under every tier that works on this machine
(`tier` fixture), the rlimit fallback included, forced with `tier=`.
Workers that never end get 1 s; every other limit is a multiple of how long
starting a sandboxed worker takes now (tests/baseline.py), so that a busy
machine gives them longer rather than failing them.
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import baseline
import numpy as np
import pytest

from grader import sandbox
from grader.sandbox import Limits, read_json_safe, read_npy_safe, scratch

pytestmark = pytest.mark.sandbox

FIXTURES = Path(__file__).parents[1] / "fixtures" / "sandbox"
ENDS = 30  # x the baseline (about 9 s here): for workers that end on their own, a limit only for a hang
SHORT = Limits(wall_seconds=1.0, cpu_seconds=10)  # for workers that never end: any limit is reached
ROOT = os.geteuid() == 0


@pytest.fixture(scope="session")
def tier_problems() -> dict[str, str]:
    return {t: sandbox.check_tier(t) for t in sandbox.TIERS}


@pytest.fixture(params=sandbox.TIERS)
def tier(request, tier_problems) -> str:
    if tier_problems[request.param]:
        pytest.skip(f"tier {request.param} unavailable here: {tier_problems[request.param]}")
    return request.param


@pytest.fixture
def work():
    """A reachable work dir: student/ (read-only to the worker) and an out dir."""
    root = Path(tempfile.mkdtemp(prefix="sandbox-test-"))
    root.chmod(0o755)
    (root / "student").mkdir(mode=0o755)
    (root / "student" / "hw.py").write_text("ANSWER = 42\n")
    yield root, root / "student", sandbox.make_out_dir(root)
    shutil.rmtree(root, ignore_errors=True)


def run(name: str, args, work, tier, limits=None, **kw):
    _, student, out = work
    return sandbox.run(
        FIXTURES / name,
        [str(a) for a in args],
        student_dir=student,
        out_dir=out,
        limits=limits or baseline.limits(ENDS, cpu_seconds=10),
        tier=tier,
        **kw,
    )


def pids_with(marker: str) -> list[int]:
    """Host pids whose command line contains `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


# ---------------------------------------------------------------- normal runs


def test_probe_picks_the_strongest_working_tier(tier_problems):
    expected = next(t for t in sandbox.TIERS if not tier_problems[t])
    assert sandbox.probe() == expected


def test_a_workers_numpy_gets_one_blas_thread_and_no_huge_pages(work, tier):
    """grader/core/blas.py: where the kernel compacts memory for huge pages on
    the spot, asking for them made reading MNIST 2-4x slower; numpy asks unless told."""
    res = run("numeric_env.py", [], work, tier)
    assert res.ok, res.log
    assert "OPENBLAS_NUM_THREADS 1 hugepages False" in res.log


def test_normal_worker_writes_a_value_the_parent_reads(work, tier):
    res = run("ok_numpy.py", [work[2]], work, tier, limits=Limits())
    assert res.ok, res.log
    assert (res.tier, res.exit_code, res.signal, res.timed_out, res.reason) == (tier, 0, None, False, "")
    assert (
        "cwd /submission" in res.log
        if tier == "bwrap"
        else re.search(re.escape(f"cwd {scratch.stage_dir()}/needle-run-") + r"[\w-]+/submission", res.log)
    )
    value = read_npy_safe(work[2] / "values.npy", 4096)
    np.testing.assert_array_equal(value, np.arange(6, dtype=np.float32).reshape(2, 3))
    assert value.dtype == np.float32
    assert work[2].stat().st_uid == os.getuid()  # out_dir is the parent's again


def test_concurrent_runs_get_their_own_uids(tier):
    roots = [Path(tempfile.mkdtemp(prefix="sandbox-test-")) for _ in range(3)]
    for root in roots:
        root.chmod(0o755)
    with ThreadPoolExecutor(3) as pool:
        results = list(pool.map(lambda r: run("whoami.py", [], (r, r, sandbox.make_out_dir(r)), tier), roots))
    for root in roots:
        shutil.rmtree(root)
    assert all(res.ok for res in results), [res.reason for res in results]
    uids = {res.log.split()[1] for res in results}
    assert len(uids) == (3 if ROOT else 1) and "0" not in uids


def test_grader_crash_takes_the_worker_down(tier, work):
    """SIGKILL the process calling run(): its worker must not live on."""
    marker = f"sandbox-orphan-{uuid.uuid4().hex}"
    code = (
        "import sys; from pathlib import Path; from grader import sandbox; "
        f"sandbox.run(Path({str(FIXTURES / 'sleep.py')!r}), [{marker!r}], student_dir=Path({str(work[1])!r}), "
        f"out_dir=Path({str(work[2])!r}), tier={tier!r})"
    )
    grader = subprocess.Popen([sys.executable, "-c", code], cwd=Path(__file__).parents[2])
    workers = lambda: [pid for pid in pids_with(marker) if pid != grader.pid]  # noqa: E731
    # Kill the grader once the worker itself runs, not while its namespace
    # wrappers (whose command lines carry the marker too) are still starting.
    running = lambda: [pid for pid in workers() if _argv0(pid).endswith(b"/bin/python3")]  # noqa: E731
    try:
        assert _wait_for(running), "the worker never started"
    finally:
        grader.kill()
        grader.wait()
    assert _wait_for(lambda: not workers()), f"worker outlived the grader: {workers()}"


def _argv0(pid: int) -> bytes:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().split(b"\0")[0]
    except OSError:
        return b""


def _wait_for(condition, seconds: float | None = None) -> bool:
    deadline = time.monotonic() + (seconds or ENDS * baseline.startup_seconds())
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


@pytest.mark.parametrize("bad", [{"memory_mb": 0}, {"wall_seconds": -1}, {"processes": "32"}])
def test_limits_reject_nonsense(bad):
    name, value = next(iter(bad.items()))
    with pytest.raises(ValueError, match=f"^sandbox: Limits.{name} must be a positive number, not {value!r}$"):
        Limits(**bad)


def test_out_dir_must_start_empty(work):
    (work[2] / "values.npy").write_bytes(b"stale")
    with pytest.raises(ValueError, match="is not empty; use a fresh sandbox.make_out_dir"):
        run("ok_numpy.py", [work[2]], work, sandbox.probe())


def test_a_worker_that_cannot_start_is_a_sandbox_error(work, monkeypatch):
    monkeypatch.setattr(sandbox.start, "bwrap_argv", lambda *a, **kw: ["/nonexistent/bwrap", "--clearenv"])
    with pytest.raises(sandbox.SandboxError, match="^sandbox: cannot start a worker in tier bwrap: "):
        run("ok_numpy.py", [work[2]], work, "bwrap")
    assert list(work[2].iterdir()) == []


def test_unknown_tier_is_a_clear_error(work):
    with pytest.raises(ValueError, match="unknown tier 'docker'"):
        run("ok_numpy.py", [work[2]], work, "docker")


# ---------------------------------------------------------------- time


@pytest.mark.parametrize("script", ["spin.py", "sleep.py"])
def test_timeout_kills_the_worker_with_a_clear_reason(work, tier, script):
    res = run(script, [], work, tier, limits=SHORT)
    assert res.timed_out and res.reason == "timeout after 1 s"
    # Seen within the supervisor's 50 ms poll; the slack grows with the load.
    assert 1.0 <= res.wall_seconds < 1.0 + 5 * baseline.startup_seconds()
    assert not res.ok


def test_cpu_limit_is_reported(work):
    res = run("spin.py", [], work, sandbox.probe(), limits=baseline.limits(100, cpu_seconds=1))
    assert not res.timed_out  # one CPU second comes long before 100 x the start-up, even on a busy machine
    assert res.signal == signal.SIGXCPU
    assert res.reason == "CPU time limit (1 s, SIGXCPU)"


def test_setsid_daemon_is_dead_when_run_returns(work, tier):
    marker = f"sandbox-daemon-{uuid.uuid4().hex}"
    res = run("daemon.py", [marker], work, tier)
    assert "daemon started" in res.log
    assert pids_with(marker) == []


def test_daemon_detector_sees_an_unsandboxed_daemon():
    """Control for the test above: without the sandbox the daemon survives."""
    marker = f"sandbox-daemon-{uuid.uuid4().hex}"
    subprocess.run(
        [sys.executable, "-I", str(FIXTURES / "daemon.py"), marker],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 5
    while not (survivors := pids_with(marker)) and time.monotonic() < deadline:
        time.sleep(0.02)  # the grandchild may not have exec'd yet
    for pid in survivors:
        os.kill(pid, signal.SIGKILL)
    assert len(survivors) == 1


def test_fork_bomb_is_contained(work, tier):
    res = run("forkbomb.py", [], work, tier, limits=SHORT)
    assert res.timed_out
    # The machine still forks, and nothing of the bomb is left.
    assert subprocess.run(["true"], check=False).returncode == 0
    assert pids_with(str(FIXTURES / "forkbomb.py")) == []


class Step:
    """One step of a Turn: notes when it is held and what out_dir holds then."""

    def __init__(self, name: str, turn: "Turn"):
        self.name, self.turn = name, turn

    def __enter__(self):
        self.turn.order.append(self.name)
        self.turn.times[self.name] = [time.monotonic()]
        self.turn.seen[self.name] = [sorted(p.name for p in self.turn.out.iterdir())]
        if self.name == "held":
            self.turn.while_waiting()

    def __exit__(self, *exc):
        self.turn.times[self.name].append(time.monotonic())
        self.turn.seen[self.name].append(sorted(p.name for p in self.turn.out.iterdir()))


class Turn:
    """A `turn` for sandbox.run (a batch's Slots): `staged()` from before the
    uid claim, `held()` while the worker runs; each notes what it saw.
    `while_waiting` runs as `held()` is entered (before the worker may run)."""

    def __init__(self, out: Path, while_waiting=lambda: None):
        self.out, self.while_waiting = out, while_waiting
        self.order, self.times, self.seen = [], {}, {}

    def staged(self):
        return Step("staged", self)

    def held(self):
        return Step("held", self)


def test_a_turn_is_held_for_the_whole_worker(work, tier):
    """A batch's question slot (`turn.held()`) covers the worker's run: a
    worker killed at its wall limit held it at least that long."""
    turn = Turn(work[2])
    res = run("sleep.py", [], work, tier, limits=SHORT, turn=turn)
    assert res.timed_out
    start, end = turn.times["held"]
    assert end - start >= SHORT.wall_seconds


def test_waiting_for_a_turn_holds_no_sandbox_uid(work, tier, monkeypatch):
    """A batch's questions wait for a stage pass before claiming a uid: with
    --jobs N, N x N waiting questions would otherwise take uids (64 in all);
    the slot comes after, and the pass is let go once the slot is held."""
    turn = Turn(work[2])
    claim = sandbox.claim_uid

    def claim_uid():
        turn.order.append("uid")
        return claim()

    monkeypatch.setattr(sandbox, "claim_uid", claim_uid)
    run("write_files.py", [], work, tier, turn=turn)
    assert turn.order == ["staged", "uid", "held"]
    assert turn.times["staged"][1] <= turn.times["held"][0] + 1.0  # let go as the slot came, not at the end
    assert turn.times["staged"][1] < turn.times["held"][1]


def test_a_turn_is_let_go_before_the_workers_files_are_collected(work, tier):
    """...and not the teardown after it: when the slot is let go, what the
    worker wrote is not in out_dir yet; it is once the run returns."""
    out = work[2]
    turn = Turn(out)
    res = run("write_files.py", [out / "mark"], work, tier, turn=turn)
    assert "WROTE" in res.log
    assert turn.seen["held"] == [[], []]
    assert (out / "mark").read_text() == "pwned"


@pytest.fixture
def bwrap_tier(tier_problems) -> str:
    if tier_problems["bwrap"]:
        pytest.skip(f"tier bwrap unavailable here: {tier_problems['bwrap']}")
    return "bwrap"


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def test_bwrap_is_set_up_before_the_slot_and_its_worker_waits_for_it(work, bwrap_tier):
    """In the bwrap tier the sandbox is built under the stage pass alone:
    while the question waits for its slot, bwrap is up and the worker has
    not started. The wait is not the worker's time: a wait longer than its
    wall limit costs it nothing."""
    marker = f"gate-{uuid.uuid4().hex}"
    seen = {}

    def while_waiting():
        time.sleep(0.5)  # bwrap has long been set up and waiting at its gate
        comms = {pid: _comm(pid) for pid in pids_with(marker)}
        seen["bwrap"] = [pid for pid, comm in comms.items() if comm == "bwrap"]
        seen["worker"] = [pid for pid, comm in comms.items() if comm not in ("bwrap", "")]
        time.sleep(SHORT.wall_seconds + 0.5)

    out = work[2]
    turn = Turn(out, while_waiting)
    res = run("write_files.py", [out / marker], work, bwrap_tier, limits=SHORT, turn=turn)
    assert seen["bwrap"], "no bwrap waiting while the question waited for its slot"
    assert seen["worker"] == []
    assert res.ok and not res.timed_out and res.wall_seconds < SHORT.wall_seconds
    assert (out / marker).read_text() == "pwned"


def test_a_bwrap_that_fails_its_setup_while_gated_is_reported_not_raised(work, bwrap_tier, monkeypatch):
    """bwrap ends during its setup (here: a bind of a folder that does not
    exist) while the question waits for its slot: opening the gate finds
    nobody reading, and the run reports bwrap's exit and words."""
    real = sandbox.start.bwrap_argv

    def broken(cmd, **kw):
        argv = real(cmd, **kw)
        at = argv.index("--")
        return argv[:at] + ["--ro-bind", "/nonexistent-gate-test", "/gone"] + argv[at:]

    monkeypatch.setattr(sandbox.start, "bwrap_argv", broken)
    out = work[2]
    turn = Turn(out, while_waiting=lambda: time.sleep(0.3))  # bwrap has given up by then
    res = run("write_files.py", [out / "mark"], work, bwrap_tier, turn=turn)
    assert not res.ok and res.exit_code not in (None, 0)
    assert "nonexistent-gate-test" in res.log
    assert not (out / "mark").exists()


def test_a_slot_wait_cut_short_starts_no_worker(work, bwrap_tier):
    """Interrupted while it waits for its slot (Ctrl-C), a question's gated
    bwrap is killed before its gate closes: the worker never runs, and
    nothing of it is left."""
    marker = f"cut-{uuid.uuid4().hex}"

    def interrupt():
        raise KeyboardInterrupt

    out = work[2]
    with pytest.raises(KeyboardInterrupt):
        run("write_files.py", [out / marker], work, bwrap_tier, turn=Turn(out, interrupt))
    time.sleep(0.5)
    assert not (out / marker).exists()
    assert pids_with(marker) == []


# ---------------------------------------------------------------- memory, crashes, output


def test_memory_hog_fails_and_is_reported(work, tier):
    res = run("memhog.py", [], work, tier, limits=baseline.limits(ENDS, memory_mb=256))
    assert not res.ok and not res.timed_out
    assert res.reason in (
        "memory limit (256 MB for all the worker's processes together): killed",
        "memory limit (256 MB): MemoryError",
    )


def test_segfault_is_reported_as_a_crash(work, tier):
    res = run("segfault.py", [], work, tier)
    assert res.signal == signal.SIGSEGV
    assert res.reason == "crashed: segmentation fault (SIGSEGV)"


def test_deep_recursion_is_reported_as_a_crash(work, tier):
    res = run("recursion.py", [], work, tier)
    assert not res.ok and not res.timed_out
    assert res.reason.startswith(("crashed", "exited with status"))


def test_huge_output_is_capped(work, tier):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    res = run("huge_output.py", [100], work, tier, limits=baseline.limits(2 * ENDS, log_bytes=4096))
    assert res.ok, res.reason
    assert res.log_truncated and len(res.log) == 4096
    # 200 MB went through the pipe; the parent kept 4 KB of it.
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 50 * 1024


def test_file_size_limit_caps_out_dir_files(work, tier):
    res = run("big_file.py", [work[2], 64], work, tier, limits=baseline.limits(ENDS, file_size_mb=4))
    assert "wrote it all" not in res.log and not res.ok
    assert (work[2] / "big.bin").stat().st_size <= 4 << 20


# ---------------------------------------------------------------- isolation


def test_worker_cannot_kill_the_parent(work, tier):
    if not ROOT and tier == "rlimit":
        pytest.skip("the rlimit tier without root runs the worker as our own uid")
    res = run("kill_parent.py", [], work, tier)
    assert "KILLED" not in res.log.replace("KILLED -1", "")
    assert "REFUSED" in res.log
    assert os.getpid() > 0  # still here: a killed parent would never get this far


def test_no_network_in_namespace_tiers(work, tier):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        res = run("net.py", [listener.getsockname()[1]], work, tier)
    # rlimit: no network namespace, but Landlock blocks TCP (TIER_NOTES says so)
    assert "BLOCKED" in res.log and "CONNECTED" not in res.log
    assert "TCP blocked" in sandbox.TIER_NOTES["rlimit"]


def test_worker_cannot_read_outside_its_mounts(work, tier):
    secret = work[0] / "answers.json"
    secret.write_text('{"answer": 42}')
    secret.chmod(0o644)  # world-readable on the host: only the mounts protect it
    home_files = sorted(p for p in Path.home().iterdir() if p.is_file())[:1]
    targets = [Path(sandbox.__file__), secret, *home_files]
    res = run("read_files.py", targets, work, tier)
    for target in targets:
        assert f"DENIED {target}" in res.log, res.log


def test_worker_cannot_write_outside_out_dir(work, tier):
    root, student, out = work
    open_dir = root / "world-writable"
    open_dir.mkdir(mode=0o777)
    open_dir.chmod(0o1777)
    targets = [student / "x.py", open_dir / "x", Path(sandbox.__file__).parent / "x.py", out / "ok"]
    res = run("write_files.py", targets, work, tier)
    assert re.search(r"WROTE /\S*out/ok", res.log) and (out / "ok").read_text() == "pwned"
    for target in targets[:3]:
        assert f"DENIED {target}" in res.log and not target.exists()


def test_shared_folders_are_readable_not_writable(work, tier):
    shared = work[0] / "data"
    shared.mkdir()
    (shared / "data.txt").write_text("mnist")
    shared.chmod(0o1777)  # writable on the host: the worker sees a read-only copy
    res = run("read_ro_path.py", ["data"], work, tier, shared={"data": shared})
    assert "DATA mnist" in res.log and "DENIED" in res.log
    assert not (shared / "new.txt").exists()


def test_filling_out_dir_is_stopped(work, tier):
    limits = baseline.limits(2 * ENDS, out_dir_mb=8)
    res = run("fill_out_dir.py", [work[2]], work, tier, limits=limits)
    assert res.reason == "output directory over its limit (8 MB, 1000 files)"
    # Checked every 50 ms: the overshoot is what the worker writes meanwhile.
    assert sum(p.stat().st_size for p in work[2].iterdir()) < (8 + 64) << 20
    assert res.wall_seconds < limits.wall_seconds / 2


def test_watch_sees_the_out_dirs_names_and_stops_the_worker(work, tier):
    """run()'s `watch` is asked with the names in the output folder while the
    worker runs; its answer stops the worker, long before the wall clock."""
    seen = []

    def watch(names):
        seen.append(names)
        return "step ran too long" if "step.started" in names else ""

    limits = baseline.limits(2 * ENDS)
    res = run("mark_then_spin.py", [work[2]], work, tier, limits=limits, watch=watch)
    assert res.reason == "step ran too long" and not res.timed_out
    assert res.wall_seconds < limits.wall_seconds / 2 and seen[-1] == {"step.started"}
    assert (work[2] / "step.started").is_file()  # collected with the rest


def test_out_dir_is_private_to_the_parent_after_run(work, tier):
    run("ok_numpy.py", [work[2]], work, tier)
    out = work[2]
    assert out.stat().st_mode & 0o777 == 0o700
    assert all(p.stat().st_uid == os.getuid() for p in out.iterdir())


# ---------------------------------------------------------------- readers


def test_planted_traps_are_refused_or_removed(work):
    root, _, out = work
    secret = root / "secret.json"
    secret.write_text('{"expected": [1, 2, 3]}')
    res = run("plant.py", [out, secret], work, sandbox.probe(), limits=baseline.limits(2 * ENDS, out_dir_files=10_000))
    assert "planted" in res.log, res.log
    cases = {
        "objects.npy": "dtype object refused",
        "pickle.npy": "not a valid .npy file",
        "big.npy": "over the 1048576-byte cap",
        "liar.npy": "header says (1099511627776,)",
    }
    for name, message in cases.items():
        with pytest.raises(ValueError, match=re.escape(message)):
            read_npy_safe(out / name, 1 << 20)
    with pytest.raises(ValueError, match="nested 10000 levels deep"):
        read_json_safe(out / "deep.json", 1 << 20)
    # Links, FIFOs and the over-PATH_MAX directory are gone; plain files remain.
    assert sorted(p.name for p in out.iterdir()) == sorted([*cases, "deep.json"])


def test_readers_refuse_links_fifos_and_hard_links(tmp_path):
    secret = tmp_path / "secret.json"
    secret.write_text("[1, 2, 3]")
    (tmp_path / "link.json").symlink_to(secret)
    os.mkfifo(tmp_path / "fifo.json")
    os.link(secret, tmp_path / "hard.json")
    with pytest.raises(ValueError, match=r"^link.json: cannot open \(.*a symlink is refused\)$"):
        read_json_safe(tmp_path / "link.json", 4096)
    with pytest.raises(ValueError, match="^fifo.json: not a regular file$"):
        read_json_safe(tmp_path / "fifo.json", 4096)
    with pytest.raises(ValueError, match="^hard.json: has 2 hard links; refused$"):
        read_json_safe(tmp_path / "hard.json", 4096)


def test_read_json_safe_reads_good_json_and_names_bad_json(tmp_path):
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text('{"loss": 0.25, "shape": [2, 3]}')
    bad.write_text('{"loss": ')
    assert read_json_safe(good, 1024) == {"loss": 0.25, "shape": [2, 3]}
    with pytest.raises(ValueError, match=r"^bad.json: invalid JSON \(Expecting value"):
        read_json_safe(bad, 1024)
    with pytest.raises(ValueError, match="over the 10-byte cap"):
        read_json_safe(good, 10)


@pytest.mark.parametrize("megabytes, fits", [(2, True), (200, False)])
def test_working_directory_is_writable_up_to_its_cap(work, tier, megabytes, fits):
    res = run("fill_cwd.py", [megabytes], work, tier, limits=baseline.limits(2 * ENDS, tmp_mb=16))
    if fits:
        assert res.ok and f"WROTE {megabytes}" in res.log, (res.reason, res.log)
    else:  # a full tmpfs (bwrap), or the parent's size check (other tiers)
        assert "FULL" in res.log or res.reason == "working directory over its limit (16 MB)", (res.reason, res.log)
        assert f"WROTE {megabytes}" not in res.log
    assert not (work[1] / "scratch.bin").exists()  # the host's folder is never written
