"""Notebook stripping (grader/handout/notebook.py)."""
import json

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from grader.core.markers import MarkerError
from grader.handout.notebook import SHELL_PYTHON, strip_notebook

SOLUTION_CELL = """def double(x):
    \"\"\"Twice x.\"\"\"
    # Q1
    ### BEGIN YOUR SOLUTION
    return x + x
    ### END YOUR SOLUTION"""


def sample_notebook():
    nb = new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                               "language": "python"},
                                "instructor_notes": "answer: return x + x"})
    nb.cells = [
        new_markdown_cell("# Title", id="intro"),
        new_code_cell(SOLUTION_CELL, id="solution", execution_count=4,
                      outputs=[new_output("stream", name="stdout", text="4\n")],
                      metadata={"tags": ["q1"], "execution": {"took": "1s"}}),
        new_code_cell('run_cases("forward")', id="run-tests", execution_count=5,
                      outputs=[new_output("execute_result", data={"text/plain": "ok"}, execution_count=5)]),
        new_code_cell("print('secret check')", id="teacher", metadata={"tags": ["instructor"]}),
    ]
    return nb


@pytest.fixture
def stripped():
    return strip_notebook(nbformat.writes(sample_notebook()), "hw.ipynb")


def test_solution_block_becomes_a_stub(stripped):
    cells = {c["id"]: c for c in json.loads(stripped.text)["cells"]}
    source = "".join(cells["solution"]["source"])
    assert 'raise NotImplementedError("Q1: double")' in source
    assert "return x + x" not in source
    assert '"""Twice x."""' in source and "### BEGIN YOUR SOLUTION" in source


def test_outputs_counts_instructor_cells_and_metadata_are_gone(stripped):
    nb = json.loads(stripped.text)
    assert [c["id"] for c in nb["cells"]] == ["intro", "solution", "run-tests"]
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None
    assert nb["cells"][1]["metadata"] == {"tags": ["q1"]}
    assert list(nb["metadata"]) == ["kernelspec"]


def test_result_is_a_valid_notebook(stripped):
    nbformat.validate(nbformat.reads(stripped.text, as_version=4))


def test_blocks_and_instructor_cells_are_reported_for_the_leak_check(stripped):
    kinds = {(cell.where, block.kind) for cell in stripped.cells for block in cell.blocks}
    assert kinds == {("hw.ipynb#cell2", "solution"), ("hw.ipynb#cell4", "instructor")}


def test_stripping_is_deterministic():
    text = nbformat.writes(sample_notebook())
    assert strip_notebook(text, "a.ipynb").text == strip_notebook(text, "a.ipynb").text


def test_marker_error_in_a_cell_names_the_cell_and_line():
    nb = sample_notebook()
    nb.cells[1].source = "def f():\n    ### BEGIN YOUR SOLUTION\n    return 1\n    ### END YOUR SOLUTION"
    with pytest.raises(MarkerError) as info:
        strip_notebook(nbformat.writes(nb), "hw.ipynb")
    assert str(info.value).startswith("hw.ipynb#cell2:2: untagged block")


def test_missing_cell_ids_are_filled_deterministically():
    nb = json.loads(nbformat.writes(sample_notebook()))
    nb["nbformat_minor"] = 4  # before ids existed
    for cell in nb["cells"]:
        del cell["id"]
    out = json.loads(strip_notebook(json.dumps(nb), "old.ipynb").text)
    assert [c["id"] for c in out["cells"]] == ["cell-1", "cell-2", "cell-3"]


def test_not_a_notebook_is_an_error():
    with pytest.raises(MarkerError) as info:
        strip_notebook("{not json", "broken.ipynb")
    assert str(info.value).startswith("broken.ipynb:1: not a readable notebook: ")


@pytest.mark.parametrize("line", ["!python -m pytest -k forward", "  ! python3 tools/fetch_mnist.py data",
                                  "!pytest -k backward", "!python3.11 -m mugrade submit KEY"])
def test_python_through_the_shell_is_refused_naming_cell_and_line(line):
    nb = sample_notebook()
    nb.cells[2].source = "x = 1\n" + line
    with pytest.raises(MarkerError) as info:
        strip_notebook(nbformat.writes(nb), "hw.ipynb")
    assert str(info.value) == f"hw.ipynb#cell3:2: {SHELL_PYTHON}"


def test_other_shell_commands_and_instructor_cells_may_use_the_shell():
    nb = sample_notebook()
    nb.cells[2].source = "!ls data\nprint('!python is fine in a string')"
    nb.cells[3].source = "!python -m pytest tests/hw1"  # instructor cell: dropped anyway
    strip_notebook(nbformat.writes(nb), "hw.ipynb")
