"""The assignment notebook executed top to bottom by nbclient, in copies
outside the repository: the handout stops "Run all" at the first exercise
cell with a short summary; a standalone copy of the reference runs every
cell and submits every question to a real grading server; the Colab path
mounts the Drive and works from HW1_DIR."""
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))
from server_harness import REPO, Server, add_user, child_env  # noqa: E402


pytestmark = pytest.mark.usefixtures("reference_copies")  # runs the reference as an instructor does
DATA = REPO / "data"
QUESTIONS = ("forward", "backward", "topo_sort", "compute_gradient", "softmax_loss_ndl", "nn_epoch_ndl")
CELL_TIMEOUT = 600  # seconds; the slowest cell runs one MNIST epoch
# A case cell's line for a complete, correct solution: every scored case, every public point.
FULL_MARKS = re.compile(r"(\d+)/\1 cases passed, ([\d.]+)/\2 points \(public cases")


def standalone_copy(tree: Path, dest: Path) -> Path:
    """A copy as `cp -r` makes it: symlinks stay links, data/ and caches left out."""
    shutil.copytree(tree, dest, symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache", ".venv", "data"))
    return dest


def execute(root: Path, monkeypatch, cwd: Path | None = None, **env):
    """Run the notebook in `root` with a fresh kernel; returns (notebook, error or None)."""
    monkeypatch.setenv("MNIST_DIR", str(DATA))
    for name in ("MUGRADE_KEY", "MUGRADE_SERVER", "PYTHONPATH"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    nb = nbformat.read(root / "hw1.ipynb", as_version=4)
    client = NotebookClient(nb, kernel_name="python3", timeout=CELL_TIMEOUT,
                            resources={"metadata": {"path": str(cwd or root)}})
    try:
        client.execute()
    except CellExecutionError as e:
        return nb, e
    return nb, None


def cells(nb):
    return {c.id: c for c in nb.cells if c.cell_type == "code"}


def text_of(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def errors_of(cell):
    return [o for o in cell.outputs if o.output_type == "error"]


@pytest.mark.slow
def test_handout_run_all_stops_at_the_first_exercise_with_a_short_summary(tmp_path, monkeypatch):
    root = standalone_copy(REPO / "handout", tmp_path / "hw1")
    nb, error = execute(root, monkeypatch)
    assert error is not None, "Run all went through the stubs"
    by_id = cells(nb)
    assert [cid for cid, c in by_id.items() if c.get("execution_count")] == ["setup", "imports", "q1-cases"]
    (shown,) = errors_of(by_id["q1-cases"])
    assert shown.ename == "CasesFailed"
    # The whole output: three lines, no traceback.
    assert len(shown.traceback) == 3, shown.traceback
    headline, first, hint = shown.traceback
    assert headline.startswith("CasesFailed: Q1 forward: ") and headline.endswith(" cases failed")
    count, _, total = headline.split(": ")[-1].split()[:3]
    assert count == total and int(total) >= 10
    assert first.startswith("first: forward_") and ": NotImplementedError: Q1: " in first
    assert hint == "full report: python -m pytest -k forward  (in a terminal, in this folder)"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    srv = Server(tmp_path_factory.mktemp("nb-server") / "grader.db")
    srv.keys = {name: add_user(srv.db_url, name, role) for name, role in
                [("prof", "instructor"), ("ada", "student")]}
    srv.start()
    publish = subprocess.run([sys.executable, "-m", "grader", "publish", "--key", srv.keys["prof"],
                              "--server", srv.url, "--dir", str(REPO / "reference")],
                             cwd=REPO, env=child_env(), capture_output=True, text=True, timeout=600)
    assert publish.returncode == 0, publish.stdout + publish.stderr
    yield srv
    srv.stop()


@pytest.mark.slow
@pytest.mark.server
def test_reference_copy_runs_every_cell_and_submits_every_question(tmp_path, monkeypatch, server):
    root = standalone_copy(REPO / "reference", tmp_path / "reference")
    assert not (root / "mugrade.py").is_symlink(), "the reference's mugrade.py must be a file of its own"
    (root / "data").symlink_to("../data")  # as `cp -r` copies the reference's link: leads nowhere here
    key = server.keys["ada"]
    nb, error = execute(root, monkeypatch, MUGRADE_KEY=key, MUGRADE_SERVER=server.url)
    assert error is None, str(error)[-3000:]
    by_id = cells(nb)
    for number, keyword in enumerate(QUESTIONS, start=1):
        cases = text_of(by_id[f"q{number}-cases"])
        assert FULL_MARKS.match(cases.splitlines()[0].removeprefix(f"Q{number} {keyword}: ")), cases
        submitted = text_of(by_id[f"q{number}-submit"])
        assert f"mugrade: submit hw1 to {server.url}" in submitted
        assert "WRONG" not in submitted and " cases correct" in submitted, submitted
    assert "leads nowhere here" in text_of(by_id["setup"]) and (root / "data").is_dir()
    assert FULL_MARKS.match(text_of(by_id["instructor-check"]).removeprefix("all questions: "))
    everything = nbformat.writes(nb)
    assert key not in everything, "the key appeared in the notebook's outputs"


@pytest.mark.slow
def test_without_a_key_the_submit_cells_send_nothing_and_say_so(tmp_path, monkeypatch):
    root = standalone_copy(REPO / "reference", tmp_path / "reference")
    nb = nbformat.read(root / "hw1.ipynb", as_version=4)
    keep = {"setup", "imports", "q3-cases", "q3-submit"}
    nb.cells = [c for c in nb.cells if c.id in keep]
    nbformat.write(nb, root / "hw1.ipynb")
    nb, error = execute(root, monkeypatch, MUGRADE_SERVER="http://127.0.0.1:9/")
    assert error is None, str(error)[-2000:]
    assert text_of(cells(nb)["q3-submit"]) == (
        "Q3 topo_sort: not submitted: set KEY in the setup cell to the key you were given\n")


FAKE_COLAB_DRIVE = '''
from pathlib import Path

def mount(where):
    Path(__file__).with_name("mounted").write_text(where)
'''


@pytest.mark.slow
def test_colab_setup_mounts_the_drive_and_works_from_hw1_dir(tmp_path, monkeypatch):
    """Colab is recognised by `google.colab` being importable; a stand-in
    records the mount. The kernel starts elsewhere, as Colab's in /content."""
    root = standalone_copy(REPO / "handout", tmp_path / "drive" / "hw1")
    for rel in ("python/needle/autograd.py", "python/needle/ops/ops_mathematic.py", "apps/simple_ml.py"):
        shutil.copyfile(REPO / "reference" / rel, root / rel)
    nb = nbformat.read(root / "hw1.ipynb", as_version=4)
    nb.cells = [c for c in nb.cells if c.id in {"setup", "imports", "q3-cases"}]
    nbformat.write(nb, root / "hw1.ipynb")
    fake = tmp_path / "site" / "google" / "colab"
    fake.mkdir(parents=True)
    (fake.parent / "__init__.py").write_text("")
    (fake / "__init__.py").write_text("")
    (fake / "drive.py").write_text(FAKE_COLAB_DRIVE)
    content = tmp_path / "content"
    content.mkdir()
    nb, error = execute(root, monkeypatch, cwd=content, HW1_DIR=str(root), PYTHONPATH=str(fake.parent.parent))
    assert error is None, str(error)[-2000:]
    assert (fake / "mounted").read_text() == "/content/drive"
    assert FULL_MARKS.match(text_of(cells(nb)["q3-cases"]).removeprefix("Q3 topo_sort: "))
    assert (root / "data/train-images-idx3-ubyte.gz").is_file() and not (content / "data").exists()


def test_colab_stand_in_is_what_the_setup_cell_imports():
    """The Colab test is only as good as its stand-in: the setup cell must
    import exactly `google.colab.drive` and call `drive.mount`."""
    nb = nbformat.read(REPO / "reference" / "hw1.ipynb", as_version=4)
    setup = cells(nb)["setup"].source
    assert "from google.colab import drive" in setup and 'drive.mount("/content/drive")' in setup
