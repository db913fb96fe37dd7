"""Golden tests of each report writer (pure functions of a Report).

Regenerate the goldens after an intended change with
`UPDATE_GOLDEN=1 pytest tests/test_report.py`, then review the diff.
"""
import csv
import io
import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from grader import report
from grader.cases import QUESTIONS

GOLDEN = Path(__file__).parent / "golden" / "report"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
HIDDEN_OUTPUT = "nn_epoch on a hidden MNIST subset: W1 norm off by 3.1e-02 (rtol 1e-05)"


def sample_cases():
    C = report.CaseResult
    return (
        C("forward_matmul", "forward", "Q1.1", 5.0, 5.0, True, "MatMul: (2,3) @ (3,4) float32", False),
        C("forward_summation", "forward", "Q1.2", 0.0, 5.0, False,
          "Summation over axes (0, 2) of (2,3,4): shape (3,) expected, got (2,3,4)", False),
        C("backward_ewise_div", "backward", "Q2.1", 0.0, 25.0, False,
          "EWiseDiv gradient: not implemented: Q2 EWiseDiv.gradient (at python/needle/ops/ops_mathematic.py:88 "
          "in gradient)", False),
        C("topo_sort_diamond", "topo_sort", "Q3.1", 20 / 3, 20 / 3, True, "diamond graph: post-order DFS", False),
        C("topo_sort_chain", "topo_sort", "Q3.2", 0.0, 20 / 3, False,
          "long chain: node 7 appears before its input 6 <&> \"quoted\"", False),
        C("topo_sort_reused", "topo_sort", "Q3.3", 20 / 3, 20 / 3, True, "a node reused 10 times", True),
        C("nn_epoch_ndl_hidden_subset", "nn_epoch_ndl", "Q6.1", 0.0, 10.0, False, HIDDEN_OUTPUT, True),
    )


def sample_report():
    cases = sample_cases()
    return report.Report("submissions/alice.zip", cases, report.question_scores(cases), "bwrap", 3.14159,
                         ("apps/simple_ml.py not found in the submission: graded with the handout's "
                          "unsolved version",))


def error_report():
    return report.Report("submissions/bob", (), report.question_scores(()), "none", 0.5, (),
                         "grader error: RuntimeError: expected values missing")


def csv_text(rep):
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerows([report.csv_header(), report.csv_row(rep)])
    return buffer.getvalue()


WRITERS = {
    "results.json": report.gradescope_json,
    "junit.xml": report.junit_xml,
    "report.md": report.markdown,
    "table.txt": report.score_table,
    "row.csv": csv_text,
}
VARIANTS = {"": sample_report, "error": error_report}


def check_golden(path: Path, text: str):
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    assert path.exists(), f"{path}: no golden file; run UPDATE_GOLDEN=1 pytest {__file__}"
    assert text.encode("utf-8") == path.read_bytes(), \
        f"{path} differs from the writer's output; if intended, run UPDATE_GOLDEN=1 and review the diff"


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("filename", sorted(WRITERS))
def test_writer_matches_golden(filename, variant):
    check_golden(GOLDEN / variant / filename, WRITERS[filename](VARIANTS[variant]()))


def test_writers_are_pure():
    rep = sample_report()
    assert [w(rep) for w in WRITERS.values()] == [w(sample_report()) for w in WRITERS.values()]


def test_gradescope_schema():
    doc = json.loads(report.gradescope_json(sample_report()))
    assert {"score", "execution_time", "output", "tests", "extra_data"} <= set(doc)
    for test in doc["tests"]:
        assert set(test) == {"name", "number", "score", "max_score", "status", "output", "visibility"}
        assert test["status"] in ("passed", "failed")
        assert test["name"].startswith(tuple(QUESTIONS))
    assert set(doc["extra_data"]["questions"]) == set(QUESTIONS)
    assert doc["extra_data"]["questions"]["topo_sort"] == {"score": pytest.approx(13.3333), "max_score": 20}
    assert doc["score"] == pytest.approx(5 + 40 / 3, abs=1e-3)
    assert "apps/simple_ml.py not found" in doc["output"]


def test_hidden_case_passes_output_through_and_is_published_later():
    doc = json.loads(report.gradescope_json(sample_report()))
    hidden = {t["name"]: t for t in doc["tests"] if t["visibility"] == "after_published"}
    assert sorted(hidden) == ["nn_epoch_ndl_hidden_subset", "topo_sort_reused"]
    assert hidden["nn_epoch_ndl_hidden_subset"]["output"] == HIDDEN_OUTPUT
    visible = [t for t in doc["tests"] if t["visibility"] == "visible"]
    assert len(visible) == 5


def test_error_report_scores_zero_with_the_reason():
    doc = json.loads(report.gradescope_json(error_report()))
    assert doc["score"] == 0 and doc["tests"] == []
    assert "grader error: RuntimeError: expected values missing" in doc["output"]
    assert "**Grader error:** grader error" in report.markdown(error_report())


@pytest.mark.parametrize("make", [sample_report, error_report])
def test_junit_parses_and_counts_failures(make):
    rep = make()
    suite = ET.fromstring(report.junit_xml(rep).encode("utf-8"))
    assert suite.tag == "testsuite"
    cases = suite.findall("testcase")
    assert len(cases) == int(suite.get("tests")) == len(rep.cases)
    assert len(suite.findall("testcase/failure")) == int(suite.get("failures")) == sum(not c.passed for c in rep.cases)
    if rep.error:
        assert suite.find("system-err").text == rep.error
    else:
        chain = next(c for c in cases if c.get("name") == "topo_sort_chain")
        assert chain.find("failure").text.endswith('<&> "quoted"')


def test_csv_row_has_one_column_per_question_and_total():
    header, row = report.csv_header(), report.csv_row(sample_report())
    assert header == ["submission", *QUESTIONS, "total"] and len(row) == len(header)
    assert row[0] == "submissions/alice.zip" and row[-1] == "18.33" and row[1] == "5"
