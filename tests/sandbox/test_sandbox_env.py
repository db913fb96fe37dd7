"""The sandbox's Python (grader/sandbox/env.py): the whole standard library
of the Python it was copied from, tkinter included, and the packages the
assignment declares in assignment.toml's [environment], installed by pip
apart from the grader's own venv."""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import shutil
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from grader import sandbox
from grader.core.assignment import Assignment, AssignmentError
from grader.grading.run import worker_dirs, workers
from grader.sandbox import cached, env

HW1 = Assignment.hw1()
ROOT = os.geteuid() == 0

# Imports every standard-library module name it is not told to skip and
# writes the names that imported. Deprecated modules (lib2to3, cgi, ...)
# warn but import; anything a module raises while importing counts as "no".
IMPORT_STDLIB = """\
import importlib, json, os, sys, warnings
warnings.simplefilter("ignore")
skip = set(json.loads(sys.argv[2]))
imported = []
for name in sorted(sys.stdlib_module_names - skip):
    try:
        importlib.import_module(name)
    except BaseException:
        continue
    imported.append(name)
with open(os.path.join(sys.argv[1], "imported.json"), "w") as f:
    json.dump(imported, f)
"""
# antigravity opens a web browser when imported: not on the host, and not in
# the sandbox either. No module was found that imports on the host but fails
# in the sandbox for want of a syscall or the network; one that did would be
# listed here, with the reason.
NOT_IMPORTED = ["antigravity"]

REPORT_NUMPY = """\
import json, os, sys
import numpy, tqdm
with open(os.path.join(sys.argv[1], "numpy.json"), "w") as f:
    json.dump({"numpy": numpy.__version__, "file": numpy.__file__, "tqdm": tqdm.__version__}, f)
"""


@pytest.fixture(scope="module")
def tier_problems() -> dict[str, str]:
    return {t: sandbox.check_tier(t) for t in sandbox.TIERS}


@pytest.fixture(params=sandbox.TIERS)
def tier(request, tier_problems) -> str:
    if tier_problems[request.param]:
        pytest.skip(f"tier {request.param} unavailable here: {tier_problems[request.param]}")
    return request.param


def run_script(tmp_path: Path, text: str, args: list[str], result: str, tier=None, packages=HW1.packages):
    """Run `text` in the sandbox with the assignment's packages; the JSON it wrote to `result`."""
    (tmp_path / "runner").mkdir()
    (tmp_path / "runner" / "script.py").write_text(text)
    (tmp_path / "student").mkdir()
    out = sandbox.make_out_dir(tmp_path)
    res = sandbox.run(
        tmp_path / "runner" / "script.py",
        [sandbox.OUT, *args],
        student_dir=tmp_path / "student",
        out_dir=out,
        limits=sandbox.Limits(wall_seconds=120, cpu_seconds=120),
        tier=tier,
        packages=packages,
    )
    assert res.ok, (res.reason, res.log[-2000:])
    return json.loads((out / result).read_text())


@pytest.fixture(scope="module")
def host_imports(tmp_path_factory) -> set[str]:
    """The standard-library modules that import on the host, in a plain subprocess."""
    tmp = tmp_path_factory.mktemp("host-stdlib")
    (tmp / "script.py").write_text(IMPORT_STDLIB)
    subprocess.run(
        [sys.executable, "-I", str(tmp / "script.py"), str(tmp), json.dumps(NOT_IMPORTED)],
        cwd=tmp,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=300,
        check=True,
    )
    return set(json.loads((tmp / "imported.json").read_text()))


# ---------------------------------------------------------------- the standard library


def test_the_sandbox_imports_every_stdlib_module_the_host_does(tmp_path, tier, host_imports):
    inside = set(run_script(tmp_path, IMPORT_STDLIB, [json.dumps(NOT_IMPORTED)], "imported.json", tier=tier))
    # (Debian and Ubuntu ship idlelib and turtledemo apart from python3: whatever the host has is what counts)
    assert {"json", "tomllib", "ensurepip", "asyncio", "sqlite3"} <= host_imports and len(host_imports) > 150
    assert sorted(host_imports - inside) == [] and sorted(inside - host_imports) == []


def test_tkinter_imports_in_the_sandbox_as_on_the_host(tmp_path, host_imports):
    """A student's stray `from tkinter import NO` (an IDE's auto-import) must not cost the grade."""
    if "tkinter" not in host_imports:
        pytest.skip("this host's Python has no working tkinter (no _tkinter or no Tcl/Tk libraries)")
    script = (
        "import json, os, sys\nfrom tkinter import NO\nimport _tkinter\n"
        "json.dump({'NO': NO, 'tk': _tkinter.TK_VERSION}, open(os.path.join(sys.argv[1], 'tk.json'), 'w'))\n"
    )
    assert run_script(tmp_path, script, [], "tk.json")["NO"] == 0  # tkinter.constants: NO = FALSE = 0


def test_libraries_outside_the_system_folders_are_found_by_ldd():
    """_tkinter loads libtk and libtcl: copied into env/lib when they live
    outside the folders the sandbox shows (here, pretending none is shown)."""
    tkinter_so = sorted((Path(os.__file__).parent / "lib-dynload").glob("_tkinter*.so"))
    if not tkinter_so or shutil.which("ldd") is None:
        pytest.skip("no _tkinter extension or no ldd here")
    hidden = env.foreign_libraries(tkinter_so, visible=())
    assert any(name.startswith("libtk") for name in hidden) and any(name.startswith("libtcl") for name in hidden)
    shown = env.foreign_libraries(tkinter_so)
    assert all(path.parts[1] not in env.SYSTEM_LIBRARY_DIRS for path in shown.values())


def test_the_copy_has_the_whole_stdlib_and_the_foreign_libraries(tmp_path, monkeypatch):
    fake = tmp_path / "libfake.so.1.2"
    fake.write_bytes(b"\x7fELF not really")
    monkeypatch.setattr(env, "foreign_libraries", lambda binaries: {"libfake.so.1": fake})
    dest = tmp_path / "env"
    dest.mkdir()
    site = env._copy_interpreter(Path(getattr(sys, "_base_executable", sys.executable)).resolve(), dest)
    stdlib = site.parent
    assert (dest / "lib" / "libfake.so.1").read_bytes() == fake.read_bytes()
    assert stat.S_IMODE((dest / "lib" / "libfake.so.1").stat().st_mode) == 0o755
    host = Path(os.__file__).resolve().parent
    for name in ("tkinter", "idlelib", "lib2to3", "turtledemo", "ensurepip", "lib-dynload", "json"):
        assert (stdlib / name).is_dir() == (host / name).is_dir(), name  # all the host has (Debian splits some)
    assert (stdlib / "json").is_dir() and (stdlib / "lib-dynload").is_dir()
    assert not (stdlib / "test").exists() and not list(stdlib.glob("config-*"))
    assert site.is_dir() and not any(site.iterdir())


REPORT_PATH = """\
import builtins, json, os, sys
import numpy
with open(os.path.join(sys.argv[1], "path.json"), "w") as f:
    json.dump({"path": sys.path, "no_site": sys.flags.no_site, "numpy": numpy.__file__,
               "exit": hasattr(builtins, "exit"), "cwd": os.getcwd()}, f)
"""


def test_the_workers_sys_path_is_decided_not_inherited_from_the_hosts_site(tmp_path, tier):
    """Whatever the base Python's site.py does (Debian's looks for
    dist-packages, not our site-packages, and adds the system's own), the
    worker's path is the copied standard library, our site-packages, then
    its working directory, and nothing else."""
    seen = run_script(tmp_path, REPORT_PATH, [], "path.json", tier=tier)
    home = Path(seen["numpy"]).parents[4]  # env/lib/pythonX.Y/site-packages/numpy/__init__.py
    site, stdlib = env.site_packages(home), env.site_packages(home).parent
    assert seen["no_site"] == 1  # the host's site.py never ran
    assert seen["path"][-2:] == [str(site), seen["cwd"]]
    assert all(Path(p).is_relative_to(home / "lib") for p in seen["path"][:-2]), seen["path"]
    assert str(stdlib) in seen["path"] and str(stdlib / "lib-dynload") in seen["path"]
    assert seen["exit"]  # and the builtins site would add


# ---------------------------------------------------------------- the course's packages


def test_the_worker_imports_the_declared_numpy_not_the_graders(tmp_path):
    declared = dict(p.split("==") for p in HW1.packages)
    seen = run_script(tmp_path, REPORT_NUMPY, [], "numpy.json")
    assert seen["numpy"] == declared["numpy"] and seen["tqdm"] == declared["tqdm"]
    assert "/site-packages/numpy/" in seen["file"] and "/.venv/" not in seen["file"]


def test_the_environment_is_ours_and_read_only_to_others():
    folder = workers.sandbox_environment(HW1)
    me = os.geteuid()
    for path in [folder, *folder.rglob("*")]:
        st = os.lstat(path)
        assert st.st_uid == me, path
        if stat.S_ISDIR(st.st_mode):
            assert stat.S_IMODE(st.st_mode) == 0o755, path
        else:
            assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) in (0o644, 0o755), path
    site = env.site_packages(folder)
    numpy = dict(p.split("==") for p in HW1.packages)["numpy"]
    assert (site / f"numpy-{numpy}.dist-info").is_dir() and not (site / "bin").exists()


def test_a_package_pip_cannot_install_is_one_line_naming_the_field(tmp_path, monkeypatch, capsys):
    """No index, no wheel folder: pip fails at once, without the network.
    Progress goes to stderr, and nothing half-built is left in the cache."""
    base = tmp_path / "cache"
    base.mkdir(mode=0o755)
    monkeypatch.setattr(cached, "cache_base", lambda: base)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path))
    broken = dataclasses.replace(HW1, packages=("numpy==0.0.1",))
    with pytest.raises(AssignmentError) as err:
        workers.sandbox_environment(broken)
    message = str(err.value)
    assert message.startswith("assignment.toml: field 'environment.packages': pip could not install numpy==0.0.1")
    assert "No matching distribution" in message and "\n" not in message
    stderr = capsys.readouterr().err
    assert "building the sandbox's Python" in stderr and "  pip: " in stderr
    assert [p.name for p in base.iterdir() if not p.name.startswith(".") or p.name.startswith(".build")] == []


def test_concurrent_builders_of_one_entry_build_it_once(tmp_path, monkeypatch):
    base = tmp_path / "cache"
    base.mkdir(mode=0o755)
    monkeypatch.setattr(cached, "cache_base", lambda: base)
    builds = []

    def slow_build(dest):
        builds.append(dest)
        time.sleep(0.3)
        (dest / "made").write_text("x")

    threads = [threading.Thread(target=cached.built, args=("python-test", slow_build)) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(builds) == 1 and (base / "python-test" / "made").is_file()


def _old_entry(base, name, days):
    entry = base / name
    entry.mkdir(mode=0o755)
    (entry / cached.COMPLETE).write_text("")
    then = time.time() - days * 86400
    os.utime(entry, (then, then))
    return entry


def test_building_an_entry_removes_those_unused_for_two_weeks(tmp_path, monkeypatch):
    """A machine that grades for a term keeps the copies it uses, not every
    copy it ever made: building one removes those unused for UNUSED_DAYS,
    except one being built (its lock held) and anything not an entry."""
    base = tmp_path / "cache"
    base.mkdir(mode=0o755)
    monkeypatch.setattr(cached, "cache_base", lambda: base)
    stale = [_old_entry(base, "python-stale", cached.UNUSED_DAYS + 1), _old_entry(base, "data-data-stale", 40)]
    recent = _old_entry(base, "data-data-recent", cached.UNUSED_DAYS - 1)
    busy = _old_entry(base, "python-busy", 40)
    other = _old_entry(base, "elsewhere", 40)
    with cached._build_lock(cached.lock_file(busy)):
        made = cached.built("data-new", lambda dest: (dest / "made").write_text("x"))
    assert (made / "made").is_file()
    assert not any(p.exists() for p in stale)
    assert recent.is_dir() and busy.is_dir() and other.is_dir()


def test_using_an_entry_marks_it_so_it_is_kept(tmp_path, monkeypatch):
    base = tmp_path / "cache"
    base.mkdir(mode=0o755)
    monkeypatch.setattr(cached, "cache_base", lambda: base)
    monkeypatch.setattr(cached, "_MARKED", {})
    used = _old_entry(base, "python-used", 40)
    assert cached.built("python-used", lambda dest: pytest.fail("an entry in the cache was built again")) == used
    assert time.time() - used.stat().st_mtime < 60
    assert cached.prune_unused(base) == [] and used.is_dir()
    assert cached.prune_unused(base, now=time.time() + (cached.UNUSED_DAYS + 1) * 86400) == [used]


# ---------------------------------------------------------------- bytecode

# Records every module the import system compiles from source (it does only
# when no valid bytecode is there), then imports what a worker imports.
COMPILED = """\
import importlib._bootstrap_external as ext, json, os, sys
compiled = []
original = ext.SourceLoader.source_to_code
def recording(self, data, path, *args, **kwargs):
    compiled.append(path)
    return original(self, data, path, *args, **kwargs)
ext.SourceLoader.source_to_code = recording
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy, inspect, pathlib, where, assignment_cases
with open(os.path.join(sys.argv[1], "compiled.json"), "w") as f:
    json.dump({"compiled": compiled, "student": sorted(os.listdir("."))}, f)
"""


def test_a_worker_compiles_nothing_of_the_environment_or_the_runner(tmp_path):
    """The environment and the runner carry our bytecode (a worker cannot write
    any): before, each worker compiled numpy, the standard library modules it
    imports and the cases package again, 0.15 s of a 0.3 s worker. A
    submission's own __pycache__ never reaches the worker."""
    runner = worker_dirs.build_runner(tmp_path / "runner", HW1)
    (runner / "script.py").write_text(COMPILED)
    student = tmp_path / "student"
    (student / "__pycache__").mkdir(parents=True)
    (student / "__pycache__" / "planted.cpython-311.pyc").write_bytes(b"not bytecode")
    (student / "planted.py").write_text("X = 1\n")
    out = sandbox.make_out_dir(tmp_path)
    res = sandbox.run(
        runner / "script.py",
        [sandbox.OUT],
        student_dir=student,
        out_dir=out,
        limits=sandbox.Limits(wall_seconds=120, cpu_seconds=120),
        packages=HW1.packages,
    )
    assert res.ok, (res.reason, res.log[-2000:])
    seen = json.loads((out / "compiled.json").read_text())
    assert seen["compiled"] == []
    assert seen["student"] == ["planted.py"]


def test_the_bytecode_check_sees_a_compile(tmp_path):
    """The check above fails when bytecode is missing: the runner's is removed here."""
    runner = worker_dirs.build_runner(tmp_path / "runner", HW1)
    for cache in runner.rglob("__pycache__"):
        shutil.rmtree(cache)
    (runner / "script.py").write_text(COMPILED)
    (tmp_path / "student").mkdir()
    out = sandbox.make_out_dir(tmp_path)
    res = sandbox.run(
        runner / "script.py",
        [sandbox.OUT],
        student_dir=tmp_path / "student",
        out_dir=out,
        limits=sandbox.Limits(wall_seconds=120, cpu_seconds=120),
        packages=HW1.packages,
    )
    assert res.ok, (res.reason, res.log[-2000:])
    compiled = json.loads((out / "compiled.json").read_text())["compiled"]
    assert any(p.endswith("/where.py") for p in compiled)
    assert any("/assignment_cases/" in p for p in compiled)


def test_a_data_copy_keeps_each_gzip_file_decompressed_too(tmp_path):
    """env.shared_copy: `d/f.gz` also as `d/.gunzipped/f`, the very bytes; a
    file that only looks like gzip is copied and not decompressed."""
    source = tmp_path / "data"
    (source / "sub").mkdir(parents=True)
    payload = os.urandom(300_000)
    (source / "images.gz").write_bytes(gzip.compress(payload))
    (source / "sub" / "labels.gz").write_bytes(gzip.compress(payload[:1000]))
    (source / "broken.gz").write_bytes(b"not gzip at all")
    (source / "notes.txt").write_text("hello\n")
    copy = env.shared_copy(source)
    assert (copy / env.GUNZIPPED / "images").read_bytes() == payload
    assert (copy / "sub" / env.GUNZIPPED / "labels").read_bytes() == payload[:1000]
    assert (copy / "images.gz").read_bytes() == (source / "images.gz").read_bytes()
    assert (copy / "broken.gz").is_file() and not (copy / env.GUNZIPPED / "broken").exists()
    assert sorted(p.name for p in (copy / env.GUNZIPPED).iterdir()) == ["images"]
    for path in [copy, *copy.rglob("*")]:
        mode = stat.S_IMODE(os.lstat(path).st_mode)
        assert mode == (0o755 if path.is_dir() else 0o644), path
    (source / "images.gz").write_bytes(gzip.compress(payload[::-1]))  # a changed file: a new copy
    assert (env.shared_copy(source) / env.GUNZIPPED / "images").read_bytes() == payload[::-1]


def _installed(site: Path, record: list[str]) -> Path:
    (site / "numpy").mkdir(parents=True)
    (site / "numpy-2.0.0.dist-info").mkdir()
    (site / "numpy-2.0.0.dist-info" / "RECORD").write_text("".join(line + "\n" for line in record))
    return site / "numpy"


def test_the_graders_numpy_is_known_by_its_files_not_its_virtualenv(tmp_path):
    """The same wheel in two virtualenvs (two fresh clones) is one sandbox
    copy: its scripts, which name their virtualenv's python, do not count;
    another file of the package does; no RECORD: the folder's path."""
    files = ["numpy/__init__.py,sha256=AAAA,10", "numpy.libs/libopenblas.so,sha256=BBBB,20"]
    one = _installed(tmp_path / "one", ["../../../bin/f2py,sha256=X1,176", *files, "numpy-2.0.0.dist-info/RECORD,,"])
    two = _installed(tmp_path / "two", ["../../../bin/f2py,sha256=X2,187", *reversed(files)])
    other = _installed(tmp_path / "other", [files[0], "numpy.libs/libopenblas.so,sha256=CCCC,20"])
    same = env.installed_identity(one, "2.0.0")
    assert same == env.installed_identity(two, "2.0.0") and str(one) not in same
    assert env.installed_identity(other, "2.0.0") != same
    (two.parent / "numpy-2.0.0.dist-info" / "RECORD").unlink()
    assert env.installed_identity(two, "2.0.0") == str(two)
