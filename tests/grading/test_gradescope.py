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
from grader.grading import gradescope
from grader.assignment import Assignment

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
    for needed in ("pyproject.toml", "README.md", "assignment.toml", "grader/grading/orchestrate.py", "grader/untrusted/cases/registry.py",
                   "reference/tools/fetch_mnist.py", "reference/apps/simple_ml.py",
                   "handout/python/needle/autograd.py"):
        assert needed in infos
    for name in infos:
        parts = Path(name).parts
        assert parts[0] in {"setup.sh", "run_autograder", "pyproject.toml", "README.md", "assignment.toml",
                            "grader", "reference", "handout"}, name
        assert not {"data", ".venv", ".grader-cache", "__pycache__", ".pytest_cache"} & set(parts), name
        assert not name.endswith(".pyc") and not name.startswith(("/", "..")), name


def test_setup_script_installs_what_the_grader_needs(bundle):
    with zipfile.ZipFile(bundle) as archive:
        setup = archive.read("setup.sh").decode()
    assert "apt-get install -y -q --no-install-recommends python3 python3-venv python3-pip bubblewrap" in setup
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
    return subprocess.run([str(root / "run_autograder")], env=full_env, capture_output=True, text=True,
                          timeout=180)


@pytest.mark.slow
@pytest.mark.sandbox
def test_run_autograder_grades_the_reference_100(bundle, tmp_path):
    root = fake_autograder(tmp_path, bundle)
    proc = run_autograder(root)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((root / "results" / "results.json").read_text())
    assert doc["score"] == 100, doc["output"]
    assert len(doc["tests"]) > 30 and all(t["status"] == "passed" for t in doc["tests"])
    assert set(doc["extra_data"]["questions"]) == {"forward", "backward", "topo_sort", "compute_gradient",
                                                   "softmax_loss_ndl", "nn_epoch_ndl"}
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
