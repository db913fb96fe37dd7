"""Golden tests of each report writer (pure functions of a Report).

Regenerate the goldens after an intended change with
`UPDATE_GOLDEN=1 pytest tests/test_report.py`, then review the diff.
"""

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from grader.core.assignment import Assignment
from grader.grading.batch import book as batch_book
from grader.grading.report import results as report
from grader.shipped.cases import QUESTION, QUESTIONS

GOLDEN = Path(__file__).parents[1] / "golden" / "report"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
HIDDEN_OUTPUT = "nn_epoch on a hidden MNIST subset: W1 norm off by 3.1e-02 (rtol 1e-05)"


def sample_cases():
    C = report.CaseResult
    return (
        C("forward_matmul", "forward", "Q1.1", 5.0, 5.0, True, "MatMul: (2,3) @ (3,4) float32", False),
        C(
            "forward_summation",
            "forward",
            "Q1.2",
            0.0,
            5.0,
            False,
            "Summation over axes (0, 2) of (2,3,4): shape (3,) expected, got (2,3,4)",
            False,
            where="python/needle/ops/ops_mathematic.py:295",
        ),
        C(
            "backward_ewise_div",
            "backward",
            "Q2.1",
            0.0,
            12.5,
            False,
            "EWiseDiv gradient: not implemented: Q2 EWiseDiv.gradient",
            False,
            stub="Q2 EWiseDiv.gradient",
        ),
        C(
            "backward_log",
            "backward",
            "Q2.2",
            0.0,
            12.5,
            False,
            "Log gradient: not implemented: Q1 Log.compute",
            False,
            stub="Q1 Log.compute",
        ),
        C("topo_sort_diamond", "topo_sort", "Q3.1", 20 / 3, 20 / 3, True, "diamond graph: post-order DFS", False),
        C(
            "topo_sort_chain",
            "topo_sort",
            "Q3.2",
            0.0,
            20 / 3,
            False,
            'long chain: node 7 appears before its input 6 <&> "quoted"',
            False,
            where="python/needle/autograd.py:390",
        ),
        C("topo_sort_reused", "topo_sort", "Q3.3", 20 / 3, 20 / 3, True, "a node reused 10 times", True),
        C(
            "nn_epoch_ndl_hidden_subset",
            "nn_epoch_ndl",
            "Q6.1",
            0.0,
            10.0,
            False,
            HIDDEN_OUTPUT,
            True,
            contract="nn_epoch(X, y, W1, W2, lr, batch): one SGD epoch",
        ),
        C(
            "forward_summation_negative_axis",
            "forward",
            "Q1.a1",
            0.0,
            0.0,
            False,
            "Summation: (3,4,5) over axes=(-1,): wrong shape: got (3, 4, 5), expected (3, 4)",
            False,
            advisory=True,
            contract="Summation over a negative axis",
            where="python/needle/ops/ops_mathematic.py:290",
        ),
        C(
            "forward_log_float32",
            "forward",
            "Q1.a2",
            0.0,
            0.0,
            True,
            "Log of float32 stays float32",
            False,
            advisory=True,
            contract="the float width of results",
        ),
    )


def sample_report():
    cases = sample_cases()
    return report.Report(
        "submissions/alice.zip",
        cases,
        report.question_scores(cases, QUESTIONS),
        "bwrap",
        3.14159,
        ("apps/simple_ml.py not found in the submission: graded with the handout's unsolved version",),
    )


def error_report():
    return report.Report(
        "submissions/bob",
        (),
        report.question_scores((), QUESTIONS),
        "none",
        0.5,
        (),
        "grader error: RuntimeError: expected values missing",
    )


def csv_text(rep):
    """The gradebook's row for the report, built from its results.json as grade-batch does."""
    row = batch_book.row_from_results(rep.submission, json.loads(report.gradescope_json(rep)), QUESTIONS)
    return batch_book.render({rep.submission: row}, QUESTIONS)


WRITERS = {
    "results.json": report.gradescope_json,
    "junit.xml": report.junit_xml,
    "report.md": report.markdown,
    "table.txt": report.score_table,
    "row.csv": csv_text,
}


def import_error_report():
    """Q5 and Q6 blocked by one import failure: said once, in the notes."""
    why = "importing the submission failed: ModuleNotFoundError: No module named 'torch' (at apps/simple_ml.py:9)"
    C = report.CaseResult
    cases = (
        C("forward_negate", "forward", "Q1.1", 10.0, 10.0, True, "Negate: (3,4)", False),
        C(
            "softmax_loss_ndl_value",
            "softmax_loss_ndl",
            "Q5.1",
            0.0,
            5.0,
            False,
            f"softmax_loss of (8,10) logits: not run: {why}",
            False,
            blocked=True,
        ),
        C(
            "softmax_loss_ndl_gradient",
            "softmax_loss_ndl",
            "Q5.2",
            0.0,
            5.0,
            False,
            f"gradient of softmax_loss: not run: {why}",
            True,
            blocked=True,
        ),
        C(
            "nn_epoch_ndl_weights_float32",
            "nn_epoch_ndl",
            "Q6.a1",
            0.0,
            0.0,
            False,
            f"weights stay float32: not run: {why}",
            False,
            advisory=True,
            blocked=True,
        ),
    )
    return report.Report(
        "bob.zip", cases, report.question_scores(cases, QUESTIONS), "bwrap", 2.0, (f"{why} (costs Q5, Q6)",)
    )


VARIANTS = {"": sample_report, "error": error_report, "import_error": import_error_report}


def check_golden(path: Path, text: str):
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    assert path.exists(), f"{path}: no golden file; run UPDATE_GOLDEN=1 pytest {__file__}"
    assert text.encode("utf-8") == path.read_bytes(), (
        f"{path} differs from the writer's output; if intended, run UPDATE_GOLDEN=1 and review the diff"
    )


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
        assert test["name"].startswith(tuple(QUESTION))
    assert set(doc["extra_data"]["questions"]) == set(QUESTION)
    assert doc["extra_data"]["questions"]["topo_sort"] == {"score": pytest.approx(13.3333), "max_score": 20}
    assert doc["score"] == pytest.approx(5 + 40 / 3, abs=1e-3)
    assert "apps/simple_ml.py not found" in doc["output"]


def test_hidden_case_passes_output_through_and_is_published_later():
    doc = json.loads(report.gradescope_json(sample_report()))
    hidden = {t["name"]: t for t in doc["tests"] if t["visibility"] == "after_published"}
    assert sorted(hidden) == ["nn_epoch_ndl_hidden_subset", "topo_sort_reused"]
    assert hidden["nn_epoch_ndl_hidden_subset"]["output"].splitlines()[0] == HIDDEN_OUTPUT
    visible = [t for t in doc["tests"] if t["visibility"] == "visible"]
    assert len(visible) == 8


def test_advisory_cases_are_listed_apart_with_no_points():
    rep = sample_report()
    doc = json.loads(report.gradescope_json(rep))
    advisory = {t["name"]: t for t in doc["tests"] if t["number"].startswith("Q1.a")}
    assert set(advisory) == {"forward_summation_negative_axis", "forward_log_float32"}
    assert all(t["max_score"] == 0 for t in advisory.values())
    assert advisory["forward_summation_negative_axis"]["output"].startswith(report.ADVISORY_TITLE)
    assert doc["score"] == pytest.approx(18.3333)  # the failed advisory costs nothing
    md = report.markdown(rep)
    scored, beyond = md.split("## " + report.ADVISORY_TITLE)
    assert "forward_summation_negative_axis" in beyond and "forward_summation_negative_axis" not in scored
    assert "forward_log_float32" not in md.split("| total")[1]  # passed advisories are not listed
    assert "goes beyond: Summation over a negative axis" in beyond


def test_an_import_failure_is_reported_once_in_the_markdown():
    md = report.markdown(import_error_report())
    assert md.count("No module named 'torch'") == 1
    assert "2 cases not run: the submission could not be imported (see above)" in md
    assert "## " + report.ADVISORY_TITLE not in md  # a blocked advisory adds nothing to the notes


def test_markdown_shows_no_absolute_path():
    rep = report.Report(
        "/home/ta/course/submissions/alice.zip", (), report.question_scores((), QUESTIONS), "bwrap", 1.0
    )
    assert "/home/ta" not in report.markdown(rep) and "`alice.zip`" in report.markdown(rep)


def test_case_scores_add_up_exactly():
    from grader.grading.report.scoring import max_scores, split_points

    assert sum(split_points(10, [1] * 7)) == 10 * 10_000
    assert sum(split_points(25, [1, 2, 0.5])) == 25 * 10_000
    points = max_scores(Assignment.hw1().registry())
    assert round(sum(points.values()), 4) == 100
    for key, q in QUESTION.items():
        assert round(sum(v for name, v in points.items() if name.startswith(key + "_")), 4) == q.points


def test_error_report_scores_zero_with_the_reason():
    doc = json.loads(report.gradescope_json(error_report()))
    assert doc["score"] == 0 and doc["tests"] == []
    assert "grader error: RuntimeError: expected values missing" in doc["output"]
    assert "**Grader error:** grader error" in report.markdown(error_report())


@pytest.mark.parametrize("make", [sample_report, error_report, import_error_report])
def test_junit_parses_and_counts_failures(make):
    rep = make()
    suite = ET.fromstring(report.junit_xml(rep).encode("utf-8"))
    assert suite.tag == "testsuite"
    cases = suite.findall("testcase")
    assert len(cases) == int(suite.get("tests")) == len(rep.cases)
    below = [t for t in json.loads(report.gradescope_json(rep))["tests"] if t["score"] < t["max_score"]]
    assert len(suite.findall("testcase/failure")) == int(suite.get("failures")) == len(below)
    if rep.error:
        assert suite.find("system-err").text == rep.error
    if make is sample_report:
        chain = next(c for c in cases if c.get("name") == "topo_sort_chain")
        assert chain.find("failure").text.endswith('<&> "quoted"')


def test_junit_advisories_are_skipped_with_the_advice_never_failed():
    suite = ET.fromstring(report.junit_xml(sample_report()).encode("utf-8"))
    case = {c.get("name"): c for c in suite.findall("testcase")}
    int_axis = case["forward_summation_negative_axis"]
    assert int_axis.find("failure") is None
    assert int_axis.find("skipped").get("message").startswith(report.ADVISORY_TITLE)
    assert "Goes beyond: Summation over a negative axis" in int_axis.find("system-out").text
    assert suite.get("skipped") == "1" and suite.get("failures") == "5"
    assert case["forward_log_float32"].find("skipped") is None  # a passed advisory is a plain pass


def test_junit_failures_carry_the_students_file_and_line():
    suite = ET.fromstring(report.junit_xml(sample_report()).encode("utf-8"))
    case = {c.get("name"): c for c in suite.findall("testcase")}
    assert (case["forward_summation"].get("file"), case["forward_summation"].get("line")) == (
        "python/needle/ops/ops_mathematic.py",
        "295",
    )
    assert case["topo_sort_chain"].get("line") == "390"
    assert case["forward_matmul"].get("file") is None  # passed: nothing to point at
    assert case["backward_log"].get("file") is None  # no line known


def test_junit_strict_mode_counts_failed_advisories_as_failures():
    """--score-advisories gives advisories points: then they are failures, as in results.json."""
    import dataclasses

    rep = sample_report()
    cases = tuple(dataclasses.replace(c, max_score=1.0, score=float(c.passed)) if c.advisory else c for c in rep.cases)
    strict = dataclasses.replace(rep, cases=cases, mode=report.STRICT_MODE)
    suite = ET.fromstring(report.junit_xml(strict).encode("utf-8"))
    assert suite.get("failures") == "6" and suite.get("skipped") == "0"


def test_csv_row_has_one_column_per_question_and_total():
    header = batch_book.header(QUESTIONS)
    row = batch_book.row_from_results(
        "submissions/alice.zip", json.loads(report.gradescope_json(sample_report())), QUESTIONS
    )
    assert header[: len(QUESTION) + 2] == ["submission", *QUESTION, "total"] and len(row) == len(header)
    assert row[0] == "submissions/alice.zip" and row[len(QUESTION) + 1] == "18.33" and row[1] == "5"
