"""`grader gradescope-bundle`: the zip's contents, and its run_autograder
grading a submission in a fake /autograder tree (no network: the project's
own virtualenv stands in for what setup.sh installs)."""

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from grader import DATA, HANDOUT, REFERENCE, cli
from grader.core.assignment import Assignment
from grader.grading.platforms import gradescope

STUDENT_FILES = Assignment.hw1().student_files

if not (HANDOUT / "python").is_dir():
    pytestmark = pytest.mark.skip(reason="handout/ not generated yet: run `make handout`")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    path = tmp_path_factory.mktemp("bundle") / "autograder.zip"
    assert cli.main(["gradescope-bundle", str(path)]) == 0
    return path


def test_bundle_has_the_scripts_and_the_source_only(bundle):
    with zipfile.ZipFile(bundle) as archive:
        infos = {i.filename: i for i in archive.infolist()}
    for script in ("setup.sh", "run_autograder"):
        assert stat.S_IMODE(infos[script].external_attr >> 16) == 0o755
    for needed in (
        "pyproject.toml",
        "README.md",
        "assignment.toml",
        "grader/grading/report/orchestrate.py",
        "grader/shipped/cases/registry.py",
        "reference/tools/fetch_mnist.py",
        "reference/apps/simple_ml.py",
        "handout/python/needle/autograd.py",
    ):
        assert needed in infos
    for name in infos:
        parts = Path(name).parts
        assert parts[0] in {
            "setup.sh",
            "run_autograder",
            "pyproject.toml",
            "README.md",
            "assignment.toml",
            "grader",
            "reference",
            "handout",
        }, name
        assert not {"data", ".venv", ".grader-cache", "__pycache__", ".pytest_cache"} & set(parts), name
        assert not name.endswith(".pyc") and not name.startswith(("/", "..")), name


def test_setup_script_installs_what_the_grader_needs(bundle):
    with zipfile.ZipFile(bundle) as archive:
        setup = archive.read("setup.sh").decode()
    assert "for package in python3 python3-venv python3-pip python3-tk bubblewrap; do" in setup
    assert 'apt-get install -y -q --no-install-recommends "${need[@]}"' in setup
    assert 'pip" install --quiet -e "$SRC"' in setup
    assert "reference/tools/fetch_mnist.py data" in setup and "expected.expected_dir" in setup
    assert setup.rstrip().endswith('chmod 0750 "$SRC"')  # modes hide the reference where nothing else can
    assert subprocess.run(["bash", "-n", "-c", setup]).returncode == 0


def test_bundle_is_reproducible(bundle, tmp_path):
    again = tmp_path / "again.zip"
    gradescope.build_bundle(again)
    assert again.read_bytes() == bundle.read_bytes()


def test_bundle_name_must_end_in_zip(tmp_path, capsys):
    assert cli.main(["gradescope-bundle", str(tmp_path / "bundle.tar")]) == 2
    assert "must end in .zip" in capsys.readouterr().err and not (tmp_path / "bundle.tar").exists()


def fake_autograder(tmp_path, bundle) -> Path:
    """/autograder as Gradescope leaves it after setup.sh, in a temp dir."""
    root = tmp_path / "autograder"
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(root / "source")
    shutil.copyfile(root / "source" / "run_autograder", root / "run_autograder")  # as Gradescope does
    (root / "run_autograder").chmod(0o755)
    (root / "source" / "data").symlink_to(DATA.resolve())  # what fetch_mnist.py would fetch
    submission = root / "submission"
    submission.mkdir()
    for rel in STUDENT_FILES:  # students upload the three files
        shutil.copyfile(REFERENCE / rel, submission / Path(rel).name)
    return root


def run_autograder(root: Path, **env):
    full_env = {k: v for k, v in os.environ.items() if k not in ("GRADER_CACHE", "GRADER_SOURCE")}
    full_env.update({"AUTOGRADER_ROOT": str(root), "GRADER_PYTHON": sys.executable, **env})
    return subprocess.run([str(root / "run_autograder")], env=full_env, capture_output=True, text=True, timeout=180)


@pytest.mark.slow
@pytest.mark.sandbox
def test_run_autograder_grades_the_reference_100(bundle, tmp_path):
    root = fake_autograder(tmp_path, bundle)
    proc = run_autograder(root)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((root / "results" / "results.json").read_text())
    assert doc["score"] == 100, doc["output"]
    assert len(doc["tests"]) > 30 and all(t["status"] == "passed" for t in doc["tests"])
    assert set(doc["extra_data"]["questions"]) == {
        "forward",
        "backward",
        "topo_sort",
        "compute_gradient",
        "softmax_loss_ndl",
        "nn_epoch_ndl",
    }
    # the bundle's own grader ran (its expected answers were computed in its tree)
    assert list((root / "source" / ".grader-cache").glob("expected-*/meta.json"))


def test_run_autograder_leaves_score_0_when_the_grader_cannot_start(bundle, tmp_path):
    root = fake_autograder(tmp_path, bundle)
    proc = run_autograder(root, GRADER_PYTHON="/bin/false")
    assert proc.returncode == 0
    doc = json.loads((root / "results" / "results.json").read_text())
    assert doc["score"] == 0 and "failed to start" in doc["output"]


@pytest.mark.sandbox
def test_run_autograder_refuses_links_restored_from_the_upload(bundle, tmp_path):
    """Gradescope unpacks an uploaded zip with its symlinks: a link to the
    grader's own reference must score 0 with the reason, not 100."""
    root = fake_autograder(tmp_path, bundle)
    submission = root / "submission"
    shutil.rmtree(submission)
    submission.mkdir()
    (submission / "python").symlink_to(root / "source" / "reference" / "python")
    (submission / "apps").symlink_to(root / "source" / "reference" / "apps")
    proc = run_autograder(root)
    assert proc.returncode == 0
    doc = json.loads((root / "results" / "results.json").read_text())
    assert doc["score"] == 0 and "python: a symbolic link in the submission; refused" in doc["output"]


# ---------------------------------------------------------------- setup.sh for real

PLAIN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def debian_layout(python: str) -> str:
    """ "" when `python` is a Debian/Ubuntu system Python (dist-packages, a
    patched site.py), else why not."""
    if not Path(python).is_file():
        return f"no {python} here"
    out = subprocess.run([python, "-c", "import sys; print(sys.path)"], capture_output=True, text=True).stdout
    return "" if "dist-packages" in out else f"{python} is not a Debian-layout Python (no dist-packages on its path)"


def plain_env(tmp_path: Path, **more) -> dict:
    """A machine's plain environment: python3 is whatever its PATH gives (Debian's own here)."""
    return {"PATH": PLAIN_PATH, "HOME": os.environ.get("HOME", str(tmp_path)), **more}


@pytest.fixture(scope="module")
def set_up(bundle, tmp_path_factory):
    """An /autograder tree after the bundle's own setup.sh ran in a plain
    environment, and results.json of the reference and the handout graded by
    its run_autograder (no GRADER_PYTHON: the venv setup.sh made)."""
    root = tmp_path_factory.mktemp("gradescope") / "autograder"
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(root / "source")
    for script in ("setup.sh", "run_autograder"):
        (root / "source" / script).chmod(0o755)
    shutil.copyfile(root / "source" / "run_autograder", root / "run_autograder")
    (root / "run_autograder").chmod(0o755)
    env = plain_env(root, MNIST_DIR=str(DATA.resolve()))
    setup = subprocess.run(
        ["bash", str(root / "source" / "setup.sh")], env=env, capture_output=True, text=True, timeout=900
    )
    assert setup.returncode == 0, setup.stdout[-3000:] + setup.stderr[-3000:]
    results = {}
    for name, tree in (("reference", REFERENCE), ("handout", HANDOUT)):
        submission = root / "submission"
        shutil.rmtree(submission, ignore_errors=True)
        submission.mkdir()
        for rel in STUDENT_FILES:
            shutil.copyfile(tree / rel, submission / Path(rel).name)
        proc = subprocess.run(
            [str(root / "run_autograder")],
            env={**env, "AUTOGRADER_ROOT": str(root)},
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        results[name] = json.loads((root / "results" / "results.json").read_text())
    return root, results


@pytest.mark.slow
@pytest.mark.sandbox
def test_setup_sh_then_run_autograder_grade_the_reference_100_and_the_handout_0(set_up):
    root, results = set_up
    assert results["reference"]["score"] == 100, results["reference"]["output"]
    assert results["handout"]["score"] == 0
    assert all(t["status"] == "passed" for t in results["reference"]["tests"])
    venv = root / "source" / ".venv" / "bin" / "python"
    assert venv.exists() and list((root / "source" / "data").glob("*.gz"))  # setup.sh made both
    assert stat.S_IMODE((root / "source").stat().st_mode) == 0o750


@pytest.mark.slow
@pytest.mark.sandbox
def test_grading_works_with_debians_own_python(set_up):
    """The venv setup.sh built comes from /usr/bin/python3, Debian's (the
    sandbox's copy of it never runs its site.py), and grades as any other."""
    why_not = debian_layout("/usr/bin/python3")
    if why_not:
        pytest.skip(why_not)
    root, results = set_up
    base = subprocess.run(
        [
            str(root / "source" / ".venv" / "bin" / "python"),
            "-c",
            "import sys; print(sys._base_executable, sys.version.split()[0])",
        ],
        capture_output=True,
        text=True,
    ).stdout.split()
    assert Path(base[0]).resolve() == Path("/usr/bin/python3").resolve(), base
    provenance = results["reference"]["extra_data"]["provenance"]
    assert provenance["python"] == base[1] and provenance["sandbox_packages"] == list(Assignment.hw1().packages)
    assert (results["reference"]["score"], results["handout"]["score"]) == (100, 0)
