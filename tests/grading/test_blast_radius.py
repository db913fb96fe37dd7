"""A broken file costs the questions that use it, and is reported once, at
its own file and line."""

import pytest
from catalogue import build

from grader.grading.report import results as report_mod
from grader.grading.report.orchestrate import grade_submission

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]


def _grade(tmp_path, edits):
    sources = build.apply_edits(build.reference_sources(), edits)
    return grade_submission(build.write_submission(tmp_path / "s", sources))


def _lost(report):
    return {q.key for q in report.questions if q.score < q.max_score}


def test_an_import_error_in_simple_ml_costs_q5_and_q6_only(tmp_path):
    report = _grade(
        tmp_path,
        [
            build.Replace(
                build.SIMPLE_ML, "import needle as ndl\n", "import needle as ndl\nimport not_a_module_anywhere\n"
            )
        ],
    )
    assert _lost(report) == {"softmax_loss_ndl", "nn_epoch_ndl"}
    notes = [n for n in report.notes if "importing the submission failed" in n]
    assert len(notes) == 1, report.notes
    assert "apps/simple_ml.py:" in notes[0] and "not_a_module_anywhere" in notes[0] and "Q5, Q6" in notes[0]
    assert report_mod.markdown(report).count("No module named 'not_a_module_anywhere'") == 1  # once, not per case
    line = build.reference_sources()[build.SIMPLE_ML].splitlines().index("import needle as ndl") + 2
    assert f"apps/simple_ml.py:{line} in <module>: import not_a_module_anywhere" in notes[0]  # where, and its text


def test_a_syntax_error_in_autograd_is_reported_once_at_its_line(tmp_path):
    text = build.reference_sources()[build.AUTOGRAD]
    line = text.splitlines().index("def find_topo_sort(node_list: List[Value]) -> List[Value]:") + 1
    report = _grade(
        tmp_path,
        [
            build.Replace(
                build.AUTOGRAD,
                "def find_topo_sort(node_list: List[Value]) -> List[Value]:\n",
                "def find_topo_sort(node_list:\n",
            )
        ],
    )
    assert report.score == 0
    notes = [n for n in report.notes if "importing the submission failed" in n]
    assert len(notes) == 1 and f"python/needle/autograd.py:{line}" in notes[0], report.notes
    markdown = report_mod.markdown(report)
    assert markdown.count("SyntaxError") == 1
    assert all(c.blocked and "importing the submission failed: SyntaxError" in c.output for c in report.cases)
