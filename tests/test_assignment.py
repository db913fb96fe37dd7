"""grader/assignment.py: hw1's layout, and another assignment read from its
assignment.toml with one-line errors naming the file and field."""
import pytest

from grader.assignment import Assignment, AssignmentError
from grader.grading.workers import RunConfig

GOOD = '''name = "toy"
reference = "ref"
handout = "hand"
data = "data"
cases = "cases"
student_files = ["python/needle/autograd.py"]
'''


def test_hw1_is_this_repositorys_layout():
    hw1 = Assignment.hw1()
    assert (hw1.reference / "apps" / "simple_ml.py").is_file()
    assert (hw1.cases_dir / "registry.py").is_file() and hw1.cases_dir.parent.name == "untrusted"
    assert all((hw1.reference / rel).is_file() for rel in hw1.student_files)
    assert RunConfig().assignment == hw1


def test_load_resolves_paths_against_the_folder(tmp_path):
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "__init__.py").write_text("")
    (tmp_path / "assignment.toml").write_text(GOOD)
    toy = Assignment.load(tmp_path)
    assert toy.name == "toy" and toy.reference == (tmp_path / "ref").resolve()
    assert toy.cases_dir == (tmp_path / "cases").resolve() and toy.student_files == ("python/needle/autograd.py",)


@pytest.mark.parametrize("text, words", [
    (None, "assignment.toml: not found"),
    ("name = ", "not valid TOML"),
    (GOOD + "point = 3\n", "unknown field 'point'"),
    (GOOD.replace('handout = "hand"\n', ""), "field 'handout': give a non-empty string"),
    (GOOD.replace('["python/needle/autograd.py"]', "[]"), "field 'student_files'"),
    (GOOD.replace('cases = "cases"', 'cases = "nowhere"'), "field 'cases':"),
])
def test_a_bad_assignment_toml_is_one_line_naming_the_field(tmp_path, text, words):
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "__init__.py").write_text("")
    if text is not None:
        (tmp_path / "assignment.toml").write_text(text)
    with pytest.raises(AssignmentError) as err:
        Assignment.load(tmp_path)
    message = str(err.value)
    assert words in message and str(tmp_path / "assignment.toml") in message and "\n" not in message
