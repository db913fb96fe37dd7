"""Correct submissions written as real students write hw1 score 100, and
what they do beyond the course's contract is reported, apart, for no points.

Each entry of catalogue/course_style.py is graded through the real sandboxed
grader: its score must be 100 in the default (contract) mode, exactly its
listed advisory cases must fail, and in strict mode (an instructor's choice)
those advisories do cost points.
"""

from concurrent.futures import ThreadPoolExecutor

import pytest
from catalogue import build, course_style

from grader.grading.report import case_results
from grader.grading.report import results as report_mod
from grader.grading.report.case_results import grade_cases
from grader.grading.report.orchestrate import grade_submission
from grader.grading.run.config import RunConfig
from grader.grading.run.outcomes import Outcome
from grader.grading.run.workers import QuestionRun
from grader.shipped.cases import CASES, QUESTION, producers
from grader.shipped.compare import Verdict

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]


def _grade(root, entry):
    sources = build.apply_edits(build.reference_sources(), entry.edits)
    dest = build.write_submission(root / entry.name, sources, dict(entry.extra_files))
    return grade_submission(dest, RunConfig())


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("course")
    with ThreadPoolExecutor(3) as pool:
        futures = {e.name: pool.submit(_grade, root, e) for e in course_style.COURSE_STYLE}
        return {name: f.result() for name, f in futures.items()}


def _failed(report, advisory):
    return {c.name for c in report.cases if not c.passed and c.advisory == advisory}


def test_catalogue_is_big_enough_and_applies():
    names = [e.name for e in course_style.COURSE_STYLE]
    assert len(names) == len(set(names)) >= 12
    for entry in course_style.COURSE_STYLE:
        sources = build.apply_edits(build.reference_sources(), entry.edits)
        for rel, text in sources.items():
            compile(text, rel, "exec")


def _param(entry):
    marks = [pytest.mark.xfail(strict=True, reason=entry.pending)] if entry.pending else []
    return pytest.param(entry, id=entry.name, marks=marks)


@pytest.mark.parametrize("entry", [_param(e) for e in course_style.COURSE_STYLE])
def test_course_style_scores_100_with_its_advisories_listed(graded, entry):
    report = graded[entry.name]
    scored = {c.name: c.output for c in report.cases if not c.passed and not c.advisory}
    assert report.score == 100 and not scored, f"{entry.name} ({entry.why}): lost points on {scored}"
    assert _failed(report, True) == set(entry.advisories), (
        f"{entry.name}: advisories failed {sorted(_failed(report, True))}, listed {sorted(entry.advisories)}"
    )
    markdown = report_mod.markdown(report)
    if entry.advisories:
        assert report_mod.ADVISORY_TITLE in markdown
        for name in entry.advisories:
            assert name in markdown.split(report_mod.ADVISORY_TITLE, 1)[1]
    assert report.mode == report_mod.CONTRACT_MODE
    assert "Likely cause:" not in markdown, f"{entry.name} is correct, yet was diagnosed"


def test_advisories_never_change_a_score(graded):
    """Scores come from scored cases only: advisory cases carry max_score 0."""
    for report in graded.values():
        for case in report.cases:
            assert (case.max_score == 0) == case.advisory, case


def test_strict_mode_scores_the_advisories(monkeypatch):
    """With --score-advisories, a failed advisory costs its question points;
    by default it costs nothing. Totals stay exact either way."""
    bad = next(c for c in CASES if c.advisory)
    monkeypatch.setattr(
        case_results, "check", lambda case, e, a, test_set=None, drawn=False: Verdict(case.name != bad.name, "wrong")
    )
    ok = Outcome(True, value=1.0)
    runs = {q: QuestionRun(q, {c.name: ok for c in producers(q)}, "", "", "bwrap") for q in QUESTION}
    answers = {c.name: ok for c in CASES if c.fn is not None}
    contract, strict = grade_cases(runs, answers, strict=False), grade_cases(runs, answers, strict=True)
    assert round(sum(c.score for c in contract), 4) == 100
    assert round(sum(c.max_score for c in strict), 4) == 100
    lost = next(c for c in strict if c.name == bad.name)
    assert lost.max_score > 0 and lost.score == 0
    assert round(sum(c.score for c in strict), 4) == round(100 - lost.max_score, 4) < 100


def test_score_advisories_flag_makes_them_cost_points(tmp_path):
    """The instructor's flag, end to end: the same submission loses its
    advisory's points, and the report says which mode was used."""
    entry = next(e for e in course_style.COURSE_STYLE if e.name == "tuple_only_summation")
    sources = build.apply_edits(build.reference_sources(), entry.edits)
    report = grade_submission(build.write_submission(tmp_path / "s", sources), RunConfig(score_advisories=True))
    assert report.mode == report_mod.STRICT_MODE and report.score < 100
    assert "strict" in report_mod.markdown(report) and '"scoring": "strict"' in report_mod.gradescope_json(report)
