"""Every tier the probe can pick, attacked the same way.

The probe picks bwrap as root, rlimit as root without CAP_SYS_ADMIN (as in
Docker, so likely Gradescope), and bwrap or unshare (user namespaces) as a
non-root user. In each of these settings tests/fixtures/sandbox/tier_scenario.py
runs tier_attack.py under every tier that works there: it must not read the
reference, the answer cache, the grader's code or another submission (all
world-readable here: only the sandbox protects them), must not leave a file
anywhere but its output folder, and must not see through a link in its
submission copy. A tier that cannot promise this must say so
(security_problem), and then `grade` refuses without --insecure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pyseccomp
import pytest

from grader import REFERENCE, ROOT, sandbox
from grader.sandbox import security as sandbox_security
from grader.sandbox.env import environment, site_packages

pytestmark = pytest.mark.sandbox

FIXTURES = Path(__file__).parents[1] / "fixtures" / "sandbox"
OTHER_UID = 62000  # a non-root user outside the sandbox's uid pool
SETTINGS = {
    "root": [],
    "root without CAP_SYS_ADMIN": ["setpriv", "--bounding-set=-sys_admin", "--inh-caps=-sys_admin", "--"],
    "non-root user": ["setpriv", f"--reuid={OTHER_UID}", f"--regid={OTHER_UID}", "--clear-groups", "--"],
}


@pytest.fixture(scope="module")
def arena():
    """World-readable secrets and world-writable places, a readable copy of
    the grader, and a student folder with a link to the reference and a hard link."""
    base = Path(tempfile.mkdtemp(prefix="tier-arena-"))
    base.chmod(0o755)
    repo = base / "repo"
    shutil.copytree(ROOT / "grader", repo / "grader", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(pyseccomp.__file__, repo)  # the grader's one dependency outside the copied interpreter
    shutil.copytree(FIXTURES, repo / "fixtures")
    secrets = base / "secrets"
    (secrets / ".grader-cache").mkdir(parents=True)
    (secrets / ".grader-cache" / "answers.json").write_text('{"expected": 42}')
    (secrets / "other-submission").mkdir()
    (secrets / "other-submission" / "autograd.py").write_text("# somebody else's work")
    open_dir = base / "world-writable"
    open_dir.mkdir()
    student = base / "student"
    student.mkdir()
    (student / "python").symlink_to(REFERENCE / "python")
    (student / "twin.py").write_text("x = 1\n")
    os.link(student / "twin.py", base / "twin-original.py")
    for path in [base, *base.rglob("*")]:
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() else 0o644)
    open_dir.chmod(0o1777)
    tag = uuid.uuid4().hex[:8]
    targets = {
        "read": [
            str(REFERENCE / "apps" / "simple_ml.py"),
            str(secrets / ".grader-cache" / "answers.json"),
            str(ROOT / "grader" / "sandbox" / "__init__.py"),
            str(repo / "grader" / "sandbox" / "__init__.py"),
            str(secrets / "other-submission" / "autograd.py"),
        ],
        "write": [
            str(repo / "grader" / f"pwned-{tag}.py"),
            str(open_dir / f"pwned-{tag}"),
            f"/tmp/pwned-{tag}",
            f"/var/tmp/pwned-{tag}",
            f"/dev/shm/pwned-{tag}",
        ],
    }
    yield base, repo, student, targets
    shutil.rmtree(base, ignore_errors=True)


def scenario(setting: str, arena) -> dict:
    base, repo, student, targets = arena
    env_dir = environment()  # a copied interpreter any uid can run (the venv may sit under /root)
    # (its numpy named explicitly: a copy of Debian's python3 never looks in site-packages by itself)
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": "/tmp",
        "LD_LIBRARY_PATH": str(env_dir / "lib"),
        "PYTHONPATH": str(site_packages(env_dir)),
    }
    cmd = [
        *SETTINGS[setting],
        str(env_dir / "bin" / "python3"),
        str(repo / "fixtures" / "tier_scenario.py"),
        str(repo),
        str(student),
        json.dumps(targets),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd="/", timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module", params=list(SETTINGS))
def setting(request, arena):
    if request.param != "root" and os.geteuid() != 0:
        pytest.skip("needs root to start the other settings")
    return request.param, scenario(request.param, arena)


def test_the_probe_picks_a_tier_in_every_setting(setting):
    name, report = setting
    expected = {"root": "bwrap", "root without CAP_SYS_ADMIN": "rlimit"}
    assert report["probe"] == expected.get(name, report["probe"])
    assert report["tiers"][report["probe"]]["works"]


def test_no_secure_tier_reads_or_writes_what_it_must_not(setting, arena):
    name, report = setting
    _, _, _, targets = arena
    attacked = {t: e for t, e in report["tiers"].items() if e["works"] and not e["security"]}
    assert report["probe"] in attacked or report["tiers"][report["probe"]]["security"], report
    for tier, entry in attacked.items():
        log = entry["log"]
        assert entry["out"] == ["done.json"], (name, tier, entry)
        for path in targets["read"]:
            assert f"DENIED {path} " in log, (name, tier, path, log)
        for path in targets["write"]:  # refused, or written to a private /tmp that died with the run
            assert f"DENIED {path} " in log or path.startswith("/tmp/pwned"), (name, tier, path, log)
            assert not Path(path).exists(), (name, tier, path)
        # The copy holds regular files only: the link to the reference is gone,
        # and the hard-linked file is a copy (scribbling on it changes nothing here).
        assert "SEEN ./twin.py" in log and "SEEN ./python" not in log, (name, tier, log)
    assert (arena[0] / "twin-original.py").read_text() == "x = 1\n"


def test_an_insecure_tier_says_so(setting):
    name, report = setting
    if name == "non-root user":
        assert "own uid" in report["tiers"]["rlimit"]["security"]
    else:
        assert all(not e["security"] for e in report["tiers"].values() if e["works"]), report


def test_the_attack_reads_and_writes_without_the_sandbox(arena, tmp_path):
    """Control: run directly, the same attack reads every secret and writes everywhere."""
    _, _, student, targets = arena
    work = tmp_path / "cwd"
    shutil.copytree(student, work, symlinks=True)
    proc = subprocess.run(
        [sys.executable, str(FIXTURES / "tier_attack.py"), str(tmp_path), json.dumps(targets)],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=60,
    )
    try:
        for path in targets["read"]:
            assert f"READ {path}" in proc.stdout
        for path in targets["write"]:
            assert f"WROTE {path}" in proc.stdout
        assert "SEEN ./python/needle/autograd.py" in proc.stdout  # the link leads into the reference
    finally:
        for path in targets["write"]:
            Path(path).unlink(missing_ok=True)


def test_without_landlock_or_mounts_root_needs_modes_that_hide_the_secrets(monkeypatch):
    monkeypatch.setattr(sandbox_security, "landlock_abi", lambda: 0)
    monkeypatch.setattr(sandbox_security, "_has_sys_admin", lambda: False)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    base = Path(tempfile.mkdtemp(prefix="tier-modes-", dir="/tmp"))
    base.chmod(0o755)
    secret = base / "project"
    secret.mkdir(mode=0o755)
    assert "other users can reach" in sandbox.security_problem("rlimit", secrets=[secret])
    secret.chmod(0o750)  # others may not enter: the sandbox uid cannot reach what is inside
    assert sandbox.security_problem("rlimit", secrets=[secret]) == ""
    assert sandbox.security_problem("bwrap", secrets=[secret]) == ""
    shutil.rmtree(base)


def test_landlock_does_not_hide_a_project_under_the_system_folders(monkeypatch):
    monkeypatch.setattr(sandbox_security, "landlock_abi", lambda: 7)
    monkeypatch.setattr(sandbox_security, "_has_sys_admin", lambda: False)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert "other users can reach /usr/share" in sandbox.security_problem("rlimit", secrets=[Path("/usr/share")])
    assert sandbox.security_problem("rlimit", secrets=[Path("/tmp")]) == ""  # Landlock hides it
