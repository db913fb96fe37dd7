"""What an installed grader decides without a checkout (grader/core/paths.py,
assignment.py, datadir.py): which assignment a command means, where the
wheel's hw1 keeps its data and answers, and the data folder filled by the
assignment's fetch_data script. tests/test_wheel.py runs the real wheel."""

import pytest

from grader.core import datadir, paths
from grader.core.assignment import ENV, Assignment, AssignmentError
from grader.grading.run import cache

TOY = """name = "toy"
reference = "ref"
handout = "hand"
data = "data"
cases = "cases"
student_files = ["python/needle/autograd.py"]
"""


def toy(folder, extra=""):
    (folder / "cases").mkdir(parents=True)
    (folder / "cases" / "__init__.py").write_text("")
    (folder / "assignment.toml").write_text(TOY + extra)
    return folder.resolve()


def test_without_the_option_the_nearest_assignment_toml_then_hw1(tmp_path, monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    folder = toy(tmp_path / "course")
    (folder / "ref" / "python").mkdir(parents=True)
    monkeypatch.chdir(folder / "ref" / "python")
    assert Assignment.option().toml == folder / "assignment.toml"
    monkeypatch.chdir(tmp_path)
    assert Assignment.option() == Assignment.hw1()


def test_the_environment_variable_wins_over_the_folder_and_the_option_over_both(tmp_path, monkeypatch):
    here, there = toy(tmp_path / "here"), toy(tmp_path / "there")
    monkeypatch.chdir(here)
    monkeypatch.setenv(ENV, str(there))
    assert Assignment.option().toml == there / "assignment.toml"
    assert Assignment.option(str(here)).toml == here / "assignment.toml"
    monkeypatch.setenv(ENV, str(tmp_path / "nowhere"))
    with pytest.raises(AssignmentError, match=rf"^\${ENV}=.*nowhere: no assignment.toml there; point it at") as err:
        Assignment.option()
    assert "\n" not in str(err.value)


def test_the_wheels_hw1_keeps_its_data_and_answers_under_the_state_folder(tmp_path, monkeypatch):
    bundled = toy(tmp_path / "site-packages" / "grader" / "bundled")
    monkeypatch.setattr(paths, "BUNDLED", bundled)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert Assignment.load(bundled).data == tmp_path / "xdg" / "needle-grader" / "toy" / "data"
    monkeypatch.delenv("GRADER_CACHE", raising=False)
    monkeypatch.setattr(paths, "in_checkout", lambda: False)
    assert cache.cache_root() == tmp_path / "xdg" / "needle-grader" / "cache"


def test_a_checkout_keeps_its_own_folders():
    assert paths.in_checkout() and paths.home() == paths.ROOT
    hw1 = Assignment.hw1()
    assert hw1.data == paths.ROOT / "data" and hw1.is_hw1
    assert hw1.fetch_data == paths.ROOT / "reference" / "tools" / "fetch_mnist.py"


FILL = "import pathlib, sys; (pathlib.Path(sys.argv[1]) / 'train.gz').write_text('x')\n"


def test_an_empty_data_folder_is_filled_by_the_fetch_data_script(tmp_path, capsys):
    folder = toy(tmp_path / "a", 'fetch_data = "fill.py"\n')
    (folder / "fill.py").write_text(FILL)
    assignment = Assignment.load(folder)
    datadir.ensure(assignment)
    assert (folder / "data" / "train.gz").read_text() == "x" and "filling it with fill.py" in capsys.readouterr().err
    (folder / "fill.py").write_text("raise SystemExit('should not run again')\n")
    datadir.ensure(assignment)  # a folder with files in it is left alone


def test_a_failing_fetch_data_script_is_one_line_naming_the_field(tmp_path):
    folder = toy(tmp_path / "b", 'fetch_data = "fill.py"\n')
    (folder / "fill.py").write_text("import sys; sys.exit('fill.py: no network')\n")
    with pytest.raises(AssignmentError) as err:
        datadir.ensure(Assignment.load(folder))
    message = str(err.value)
    assert message.startswith(f"{folder / 'assignment.toml'}: field 'fetch_data': fill.py could not fill")
    assert "(fill.py: no network)" in message and "MNIST_DIR" in message and "\n" not in message


def test_without_fetch_data_nothing_runs(tmp_path):
    assignment = Assignment.load(toy(tmp_path / "c"))
    datadir.ensure(assignment)
    assert not assignment.data.exists()
