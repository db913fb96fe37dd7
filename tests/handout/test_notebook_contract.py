"""The notebook, the handout's docstrings and the contract say the same thing.

The grader scores exactly the lines of CONTRACT (grader/shipped/cases/
contract.py) and reports the lines of BEYOND apart, for no points. The
notebook (reference/hw1.ipynb) is what students read: each contract line
has its sentence there, each BEYOND line is in its "Beyond the assignment
(optional, no points)" section and nowhere promised as scored, and every
number the notebook states (points, thresholds, counts) is the grader's.
The counts its case cells print are the ones `make test` prints.

A new contract or BEYOND line fails `test_every_contract_line_has_its_promise`
until the notebook says it and PROMISES below names the sentence.
"""
import ast
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from grader.shipped.cases import BEYOND, BY_NAME, CASES, CONTRACT, QUESTION

pytestmark = pytest.mark.usefixtures("reference_copies")  # runs the reference as an instructor does

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "reference" / "hw1.ipynb"
HANDOUT = ROOT / "handout"
BEYOND_HEADING = "### Beyond the assignment (optional, no points)"

# Each contract line -> the notebook's words for it (whitespace and case ignored).
PROMISES = {
    # Q1
    "power_scalar": "`PowerScalar` takes an integer exponent (the handout's `scalar: int`: a Python or numpy int)",
    "ewise_pow": "`EWisePow` and `EWiseDiv` take two operands of the same shape",
    "divide": "`EWisePow` and `EWiseDiv` take two operands of the same shape",
    "divide_scalar": "`DivScalar` a number",
    "matmul": "`MatMul` multiplies 2-D matrices, and batches of them with equal batch (leading) dimensions "
              "or one 2-D side",
    "summation": "`Summation` takes `axes=None` (sum over all axes) or a tuple of axes",
    "summation_int_axis": "and its forward also one int axis (`axes=1`, as the course's own tests pass it)",
    "broadcast_to": "`BroadcastTo(shape)` broadcasts as numpy does",
    "reshape": "`Reshape(shape)` keeps the entries in row-major order",
    "negate": "`Negate`",
    "transpose": "`Transpose` swaps the last two axes by default and the two axes given in `axes` otherwise",
    "log": "`Log` takes positive inputs",
    "exp": "`Exp`",
    # Q2
    "gradient": "one tensor per input, each of that input's shape",
    "gradient_of_gradient": "so they can be differentiated again",
    # Q3
    "topo_order": "a depth-first search that follows `inputs` in their order and appends a node after visiting "
                  "its inputs (post-order)",
    # Q4
    "leaf_grads": "`.grad` of every input tensor of the graph: the sum of the adjoints of all paths to it",
    "grad_of_grad": "`x.grad.backward()` works",
    # Q5
    "parse_mnist_values": "one image per row, scaled to [0, 1]",
    "parse_mnist_dtypes": "a float32 matrix with one image per row, scaled to [0, 1], and a vector of integer labels "
                          "(the docstring says `np.int8`; any integer dtype holding the labels 0-9 is accepted)",
    "softmax_loss_value": "for one-hot labels of any numeric dtype",
    "softmax_loss_gradient": "differentiated with respect to the logits `Z`",
    # Q6
    "relu": "its gradient is checked away from 0",
    "nn_epoch": "one pass of stochastic gradient descent over the batches of `X` in order",
    "nn_epoch_learns": "classify the test set about as well as the reference's",
    # Beyond the contract: only in the section that says they earn no points.
    "int_axes": "`Summation.gradient` with an int axis",
    "negative_axes": "or with a negative axis",
    "implicit_broadcast": "element-wise ops on operands of different shapes, broadcast implicitly",
    "batch_size1_broadcast": "`MatMul` broadcasting a batch dimension of size 1",
    "array_scalar": "a one-element array given where the handout passes a number",
    "fractional_power": "`PowerScalar` with a fractional exponent",
    "float_width": "float32 kept float32",
    "intermediate_grads": "`.grad` on intermediate nodes",
    "backward_twice": "a second `backward()` replacing, not adding to, the first one's `.grad`",
    "label_gradient": "the gradient of `softmax_loss` with respect to `y_one_hot`",
    "partial_batch": "`nn_epoch` when the number of examples is not a multiple of `batch`",
}

# What the scored text must not promise (the grader treats it as beyond the contract).
NOT_PROMISED = {
    # the forward's int axis is scored (the course's tests pass axes=1); its gradient's is not
    "int axes in Summation's gradient": r"gradient[^.;]*\bint axis\b|\bint axis\b[^.;]*gradient",
    "numpy-style batch broadcasting in MatMul": r"broadcast as in `?numpy\.matmul|batch dimensions of `?MatMul`? and",
    "float32 weights": r"updated float32",
    ".grad on every node": r"every node `?output_tensor`? depends on",
    "fractional exponents for PowerScalar": r"any scalar exponent|a float or a numpy scalar",
}

# Docstrings students read in the handout: (file, function or class, its words for the contract line).
DOCSTRINGS = {
    "power_scalar": ("python/needle/ops/ops_mathematic.py", "PowerScalar", "an (integer) power"),
    "summation": ("python/needle/ops/ops_mathematic.py", "Summation", "None (all axes) or a tuple of axes"),
    "summation_int_axis": ("python/needle/ops/ops_mathematic.py", "Summation", "the forward also takes one int axis"),
    "matmul": ("python/needle/ops/ops_mathematic.py", "MatMul", "equal batch dimensions, or one 2-D side"),
    "transpose": ("python/needle/ops/ops_mathematic.py", "Transpose", "the last two by default"),
    "topo_order": ("python/needle/autograd.py", "find_topo_sort", "post-order of a depth-first search"),
    "leaf_grads": ("python/needle/autograd.py", "compute_gradient_of_variables",
                   "the sum of the adjoints of all paths to it"),
    "parse_mnist_dtypes": ("apps/simple_ml.py", "parse_mnist", "numpy.ndarray[np.float32]"),
}


def words(text: str) -> str:
    return " ".join(text.split()).lower()


def markdown(nb) -> list:
    return [(c.id, c.source) for c in nb.cells if c.cell_type == "markdown"]


@pytest.fixture(scope="module")
def nb():
    return nbformat.read(NOTEBOOK, as_version=4)


@pytest.fixture(scope="module")
def sections(nb):
    """(scored text, beyond text): the notebook's markdown without and within the Beyond section."""
    scored, beyond = [], []
    for _, source in markdown(nb):
        if BEYOND_HEADING in source:
            before, after = source.split(BEYOND_HEADING, 1)
            inside, _, rest = after.partition("\n#")
            scored += [before, rest]
            beyond.append(inside)
        else:
            scored.append(source)
    assert beyond, f"the notebook has no {BEYOND_HEADING!r} section"
    return words("\n".join(scored)), words("\n".join(beyond))


def test_every_contract_line_has_its_promise():
    lines = set(CONTRACT) | set(BEYOND)
    assert set(PROMISES) == lines, (
        f"contract lines without a promise here: {sorted(lines - set(PROMISES))}; promises of no contract line: "
        f"{sorted(set(PROMISES) - lines)}: say the line in reference/hw1.ipynb and name its words in PROMISES")


@pytest.mark.parametrize("key", sorted(CONTRACT))
def test_each_scored_line_is_promised_in_the_notebook(key, sections):
    scored, _ = sections
    assert words(PROMISES[key]) in scored, f"{key}: {CONTRACT[key]!r} is not said in the notebook"


@pytest.mark.parametrize("key", sorted(BEYOND))
def test_each_beyond_line_is_optional_in_the_notebook(key, sections):
    scored, beyond = sections
    assert words(PROMISES[key]) in beyond, f"{key}: {BEYOND[key]!r} is not in the notebook's {BEYOND_HEADING}"
    assert words(PROMISES[key]) not in scored, f"{key}: also promised outside {BEYOND_HEADING}"


@pytest.mark.parametrize("what", sorted(NOT_PROMISED))
def test_the_scored_text_promises_nothing_beyond_the_contract(what, sections):
    scored, _ = sections
    assert not re.search(NOT_PROMISED[what], scored, re.I), f"the notebook promises {what}, which is not scored"


def _docstring(path: Path, name: str) -> str:
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name == name:
            return ast.get_docstring(node) or ""
    raise AssertionError(f"{path}: no {name}")


@pytest.mark.parametrize("key", sorted(DOCSTRINGS))
def test_handout_docstrings_say_the_contract(key):
    rel, name, phrase = DOCSTRINGS[key]
    doc = _docstring(HANDOUT / rel, name)
    assert words(phrase) in words(doc), f"{rel} {name}: its docstring does not say {CONTRACT[key]!r}"
    for what, pattern in NOT_PROMISED.items():
        assert not re.search(pattern, doc, re.I), f"{rel} {name}: its docstring promises {what}"


def test_the_notebooks_numbers_are_the_graders(nb):
    text = "\n".join(source for _, source in markdown(nb))
    rows = re.findall(r"^\| (Q\d) \| [^|]+ \| (\d+) \| `-k (\w+)` \|$", text, re.M)
    assert [(label, int(points), key) for label, points, key in rows] == \
        [(q.label, q.points, q.key) for q in QUESTION.values()]
    headings = re.findall(r"^## (Q\d): .* \((\d+) points\)$", text, re.M)
    assert [(label, int(points)) for label, points in headings] == [(q.label, q.points) for q in QUESTION.values()]
    threshold = BY_NAME["nn_epoch_ndl_test_error"].threshold
    assert f"a test error of at most {threshold * 100:g}%" in text
    public = {q.key: sum(1 for c in CASES if c.question == q.key and not c.hidden and not c.advisory)
              for q in QUESTION.values()}
    for claimed in re.findall(r"\b(\d+) (?:public |scored )?cases\b", text):
        assert int(claimed) in set(public.values()) | {sum(public.values())}, f"the notebook claims {claimed} cases"


def test_the_notebook_stores_no_outputs(nb):
    """A stored output (the instructor cell's "63 passed") goes stale as cases change."""
    assert [c.id for c in nb.cells if c.cell_type == "code" and c.outputs] == []


# ---------------------------------------------------------------- the counts a case cell prints

def _load_check(root: Path):
    spec = importlib.util.spec_from_file_location(f"hw1_check_{id(root)}", root / "hw1_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _table_row(root: Path, keyword: str) -> tuple:
    """(cases passed, points) of `keyword`'s row in `make test`'s table."""
    run = subprocess.run([sys.executable, "-m", "pytest", "tests/hw1", "-q", "--tb=no", "-k", keyword,
                          "-p", "no:cacheprovider"], cwd=root, capture_output=True, text=True, timeout=600,
                         env={"PATH": "/usr/bin:/bin", "OPENBLAS_NUM_THREADS": "1"})
    table = run.stdout.rsplit(" hw1 points ", 1)[1]
    label = f"{QUESTION[keyword].label} {keyword}"
    row = next(line for line in table.splitlines() if line.startswith(label))
    return tuple(row[len(label):].split())


@pytest.fixture
def solved(tmp_path, monkeypatch):
    """The handout with the reference's student files (a complete, correct solution)."""
    root = tmp_path / "hw1"
    shutil.copytree(HANDOUT, root, ignore=shutil.ignore_patterns("__pycache__", ".venv", "data"))
    for rel in ("python/needle/autograd.py", "python/needle/ops/ops_mathematic.py", "apps/simple_ml.py"):
        shutil.copyfile(ROOT / "reference" / rel, root / rel)
    (root / "data").symlink_to(ROOT / "data")
    monkeypatch.chdir(root)
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    return root


def test_a_case_cell_prints_the_counts_make_test_prints(solved, capsys):
    check = _load_check(solved)
    check.run_cases("forward")
    printed = capsys.readouterr().out
    passed, points = _table_row(solved, "forward")
    scored = sum(1 for c in CASES if c.question == "forward" and not c.hidden and not c.advisory)
    assert passed == f"{scored}/{scored}" and points.split("/")[0] == points.split("/")[1]
    assert printed.startswith(f"Q1 forward: {passed} cases passed, {points} points (public cases; "), printed
    advisory = sum(1 for c in CASES if c.question == "forward" and not c.hidden and c.advisory)
    assert printed.splitlines()[1] == f"beyond the assignment (no points): {advisory} of {advisory} advisory " \
                                      "cases passed"


def test_a_failing_case_cell_counts_as_make_test_does(solved):
    ops = solved / "python/needle/ops/ops_mathematic.py"
    right = "return a.sum(axis=self.axes)"
    assert ops.read_text().count(right) == 1, "the reference's Summation changed: update this test"
    ops.write_text(ops.read_text().replace(right, "return a.sum(axis=None if self.axes is None else self.axes[0])"))
    check = _load_check(solved)
    with pytest.raises(check.CasesFailed) as info:
        check.run_cases("forward")
    passed, _ = _table_row(solved, "forward")
    ok, total = map(int, passed.split("/"))
    assert str(info.value).splitlines()[0] == f"Q1 forward: {total - ok} of {total} cases failed"


def test_a_case_cell_in_a_copy_of_the_reference_counts_the_same(solved, tmp_path, monkeypatch, capsys):
    """The reference has no conftest.py: `-k forward` there also runs the Q6
    case nn_epoch_ndl_relu_forward, which the cell must not count in Q1."""
    passed, points = _table_row(solved, "forward")
    root = tmp_path / "reference"
    shutil.copytree(ROOT / "reference", root, symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache", "data"))
    (root / "data").symlink_to(ROOT / "data")
    monkeypatch.chdir(root)
    _load_check(root).run_cases("forward")
    assert capsys.readouterr().out.startswith(f"Q1 forward: {passed} cases passed, {points} points (public cases")
