"""grader/core/assignment.py: hw1's layout, and another assignment read from its
assignment.toml with one-line errors naming the file and field."""

import re

import pytest

from grader.core.assignment import Assignment, AssignmentError
from grader.grading.run.config import RunConfig

GOOD = """name = "toy"
reference = "ref"
handout = "hand"
data = "data"
cases = "cases"
student_files = ["python/needle/autograd.py"]
"""


def test_hw1_is_this_repositorys_layout():
    hw1 = Assignment.hw1()
    assert (hw1.reference / "apps" / "simple_ml.py").is_file()
    assert (hw1.cases_dir / "registry.py").is_file() and hw1.cases_dir.parent.name == "shipped"
    assert all((hw1.reference / rel).is_file() for rel in hw1.student_files)
    assert RunConfig().assignment == hw1


def test_the_assignment_option_is_a_folder_or_hw1_in_every_command(tmp_path, monkeypatch):
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "__init__.py").write_text("")
    (tmp_path / "assignment.toml").write_text(GOOD)
    assert Assignment.option() == Assignment.option("hw1") == Assignment.hw1()
    assert Assignment.option(str(tmp_path)).name == "toy"
    monkeypatch.chdir(tmp_path)
    with pytest.raises(AssignmentError, match=r"^--assignment hw2: no such folder; pass the folder holding"):
        Assignment.option("hw2")  # a name alone, not a folder: one line saying what to pass


def test_load_resolves_paths_against_the_folder(tmp_path):
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "__init__.py").write_text("")
    (tmp_path / "assignment.toml").write_text(GOOD)
    toy = Assignment.load(tmp_path)
    assert toy.name == "toy" and toy.reference == (tmp_path / "ref").resolve()
    assert toy.cases_dir == (tmp_path / "cases").resolve() and toy.student_files == ("python/needle/autograd.py",)


@pytest.mark.parametrize(
    "text, words",
    [
        (None, "assignment.toml: not found"),
        ("name = ", "not valid TOML"),
        (GOOD + "point = 3\n", "unknown field 'point'"),
        (GOOD.replace('handout = "hand"\n', ""), "field 'handout': give a non-empty string"),
        (GOOD.replace('["python/needle/autograd.py"]', "[]"), "field 'student_files'"),
        (GOOD.replace('cases = "cases"', 'cases = "nowhere"'), "field 'cases':"),
        (GOOD.replace('name = "toy"', 'name = "Hw-2"'), "field 'name': 'Hw-2' must be lower case"),
        (GOOD + '[manifest]\nfiles = "a.py"\n', "field 'manifest.files': give a list of relative paths"),
        (GOOD + '[manifest]\nfiles = ["../secret.py"]\n', "field 'manifest.files'"),
        (GOOD + '[manifest]\nship = ["a.py"]\n', "unknown field 'manifest.ship'"),
        (GOOD + "[manifest]\nclient = 3\n", "field 'manifest.client'"),
        (GOOD + '[manifest.renamed]\n"a.py" = 3\n', "field 'manifest.renamed'"),
        (GOOD + 'environment = ["numpy==1.26.4"]\n', "field 'environment': give a table"),
        (GOOD + '[environment]\nnumpy = "1.26.4"\n', "unknown field 'environment.numpy'"),
        (GOOD + "[environment]\npackages = []\n", "field 'environment.packages': give a non-empty list"),
        (GOOD + '[environment]\npackages = ["numpy>=1.26"]\n', "'numpy>=1.26' is not pinned; write NAME==VERSION"),
        (GOOD + '[environment]\npackages = ["numpy"]\n', "'numpy' is not pinned"),
        (GOOD + '[environment]\npackages = ["tqdm==4.66.1"]\n', "field 'environment.packages': add numpy"),
        (GOOD + '[environment]\npackages = ["numpy==1.26.4", "NumPy==2.0.0"]\n', "a package is listed twice"),
        (GOOD + 'fetch_data = "tools/nowhere.py"\n', "field 'fetch_data': give the path, relative to"),
        (GOOD + "fetch_data = 3\n", "field 'fetch_data'"),
    ],
)
def test_a_bad_assignment_toml_is_one_line_naming_the_field(tmp_path, text, words):
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "__init__.py").write_text("")
    if text is not None:
        (tmp_path / "assignment.toml").write_text(text)
    with pytest.raises(AssignmentError) as err:
        Assignment.load(tmp_path)
    message = str(err.value)
    assert words in message and str(tmp_path / "assignment.toml") in message and "\n" not in message


@pytest.mark.parametrize(
    "environment, packages",
    [
        ("", ()),  # none declared: the sandbox copies the grader's own numpy
        ('[environment]\npackages = ["numpy==1.26.4", "tqdm==4.66.1"]\n', ("numpy==1.26.4", "tqdm==4.66.1")),
    ],
)
def test_the_environment_lists_pinned_packages(tmp_path, environment, packages):
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "__init__.py").write_text("")
    (tmp_path / "assignment.toml").write_text(GOOD + environment)
    toy = Assignment.load(tmp_path)
    assert toy.packages == packages and toy.toml == tmp_path / "assignment.toml"


def test_hw1_declares_the_courses_numpy():
    assert "numpy==2.0.2" in Assignment.hw1().packages  # Colab's numpy, as the course is taught now


@pytest.mark.parametrize(
    "text, packages",
    [
        (None, ("numpy==2.0.2", "tqdm==4.67.1")),
        ("  ", ("numpy==2.0.2", "tqdm==4.67.1")),
        ("numpy==1.26.4 tqdm==4.66.1", ("numpy==1.26.4", "tqdm==4.66.1")),
    ],
)
def test_packages_option_replaces_the_declaration_for_one_run(text, packages):
    hw1 = Assignment.hw1()
    chosen = hw1.with_packages(text)
    assert chosen.packages == packages and chosen.reference == hw1.reference
    assert chosen.packages_from == ("--packages" if text and text.strip() else "assignment.toml")


@pytest.mark.parametrize(
    "text, message",
    [
        ("numpy>=1.26", "--packages: 'numpy>=1.26' is not pinned; write NAME==VERSION"),
        ("tqdm==4.66.1", "--packages: add numpy (NAME==VERSION)"),
        ("numpy==1.26.4 NumPy==2.0.0", "--packages: a package is listed twice"),
    ],
)
def test_a_bad_packages_option_is_one_line_naming_it(text, message):
    with pytest.raises(AssignmentError, match=re.escape(message)):
        Assignment.hw1().with_packages(text)


def test_the_handout_names_the_packages_the_grader_provides():
    """Students read which packages (and versions) their code is graded with,
    and the handout's `make test` installs exactly those."""
    hw1 = Assignment.hw1()
    makefile = (hw1.handout / "Makefile").read_text()
    readme = (hw1.handout / "README.md").read_text()
    assert re.search(r"^GRADED_WITH := (.*)$", makefile, re.M).group(1).split() == list(hw1.packages)
    assert all(requirement in readme for requirement in hw1.packages)


def test_the_manifest_ships_files_renames_and_the_client(tmp_path):
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "__init__.py").write_text("")
    (tmp_path / "assignment.toml").write_text(
        GOOD + '[manifest]\nfiles = ["a.py"]\nclient = "mugrade.py"\n'
        'instructor_only = ["data"]\n[manifest.renamed]\n"b.txt" = "B.txt"\n'
    )
    manifest = Assignment.load(tmp_path).manifest
    assert [(e.source, e.dest, e.origin) for e in manifest.entries] == [
        ("a.py", "a.py", "reference"),
        ("b.txt", "B.txt", "reference"),
        ("mugrade.py", "mugrade.py", "grader"),
    ]
    # the reference's copy of the client and its generated public cases are never shipped from it
    assert manifest.instructor_only == ("data", "tests/toy/toy_cases", "mugrade.py")
    assert manifest.mirrors == (("mugrade.py", "mugrade.py"),)


def test_hw1s_manifest_covers_its_reference():
    from grader.core.manifest import coverage_problems

    hw1 = Assignment.hw1()
    assert coverage_problems(hw1.manifest, hw1.reference) == []
    assert hw1.cases_dest == "tests/hw1/hw1_cases" and hw1.tests_dir == "tests/hw1"


def test_a_cases_package_without_the_registry_names_is_one_line(tmp_path):
    from grader.core.registry import RegistryLoadError, load_registry

    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "__init__.py").write_text("QUESTIONS = ()\n")
    with pytest.raises(RegistryLoadError) as err:
        load_registry(tmp_path / "cases")
    assert (
        str(err.value)
        == f"{tmp_path / 'cases'}/__init__.py: define CASES, CONTRACT, BEYOND (see grader/core/registry.py)"
    )


def test_the_hw1_registry_is_the_package_itself():
    """Imported by its dotted name: one copy of its classes, whoever asks."""
    from grader.shipped import cases

    registry = Assignment.hw1().registry()
    assert registry.cases == cases.CASES and registry.question["nn_epoch_ndl"] is cases.QUESTION["nn_epoch_ndl"]
    assert registry.memory("nn_epoch_ndl") == 2 and registry.memory("forward") == 1
    assert registry.run_order[0] == "nn_epoch_ndl" and registry.read_test_set is cases.read_test_set
    shared = ("forward", "backward", "topo_sort", "compute_gradient")
    assert registry.shared_workers == (shared,)
    assert registry.workers() == [("nn_epoch_ndl",), ("softmax_loss_ndl",), shared]  # where Q2 runs, Q1-Q4 in order
    assert registry.workers(["topo_sort", "backward", "nn_epoch_ndl"]) == [("backward", "topo_sort"), ("nn_epoch_ndl",)]


@pytest.mark.parametrize(
    "body, words",
    [
        ("QUESTIONS = (Q('a', memory=0),)\nCASES = ()\n", "question 'a': memory must be a whole multiple >= 1"),
        ("QUESTIONS = (Q('a'),)\nCASES = (C('b'),)\n", "case question 'b' is not in QUESTIONS"),
        ("QUESTIONS = (Q('a'),)\nCASES = ()\nRUN_ORDER = ('a', 'a')\n", "RUN_ORDER must list each question key once"),
        (
            "QUESTIONS = (Q('a'), Q('b'))\nCASES = ()\nSHARED_WORKERS = (('a',),)\n",
            "SHARED_WORKERS must be groups of two",
        ),
        ("QUESTIONS = (Q('a'), Q('b'))\nCASES = ()\nSHARED_WORKERS = (('a', 'c'),)\n", "SHARED_WORKERS must be groups"),
        (
            "QUESTIONS = (Q('a'), Q('b'), Q('c'))\nCASES = ()\nSHARED_WORKERS = (('a', 'b'), ('b', 'c'))\n",
            "each key in one group",
        ),
        ("raise ImportError('no numpy here')\n", "the cases package does not import: ImportError: no numpy here"),
    ],
)
def test_an_inconsistent_cases_package_is_refused_with_its_reason(tmp_path, body, words):
    from grader.core.registry import RegistryLoadError, load_registry

    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "__init__.py").write_text(
        "from types import SimpleNamespace\n"
        "def Q(key, memory=1):\n    return SimpleNamespace(key=key, memory=memory)\n"
        "def C(question):\n    return SimpleNamespace(question=question)\n"
        "CONTRACT = BEYOND = {}\n" + body
    )
    with pytest.raises(RegistryLoadError, match=words):
        load_registry(tmp_path / "cases")


def test_two_threads_loading_one_cases_package_both_get_it_whole(tmp_path):
    """grade-batch's setup thread and its gradebook load an assignment's registry at once: the second
    must wait for the first's import, not take the module half made (seen on a fresh clone)."""
    import threading

    from grader.core.registry import load_registry

    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "__init__.py").write_text(
        "import time\nfrom types import SimpleNamespace\n"
        "time.sleep(0.3)  # a slow import: the other thread arrives meanwhile\n"
        "QUESTIONS = (SimpleNamespace(key='a', memory=1),)\nCASES = ()\nCONTRACT = BEYOND = {}\n"
    )
    start, found = threading.Barrier(2), {}

    def load(k):
        start.wait()
        try:
            found[k] = [
                q.key for q in load_registry(tmp_path / "cases" / ".." / "cases" if k else tmp_path / "cases").questions
            ]
        except Exception as exc:  # noqa: BLE001  (the failure is the finding)
            found[k] = exc

    threads = [threading.Thread(target=load, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert found == {0: ["a"], 1: ["a"]}
