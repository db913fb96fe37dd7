"""GitHub outputs of a Report (grader/grading/platforms/ci.py over grader/shipped/github_ci.py):
golden annotations, job summary and Classroom result, and the rules they keep.

Regenerate the goldens after an intended change with
`UPDATE_GOLDEN=1 pytest tests/grading/test_ci.py`, then review the diff.
"""

import base64
import io
import json
from pathlib import Path

import pytest
from test_report import VARIANTS, check_golden, sample_report  # tests/grading is on sys.path

from grader.grading.explain.student_lines import def_line, raised_where
from grader.grading.platforms import ci
from grader.grading.report import results as report
from grader.shipped import github_ci
from grader.shipped.cases import QUESTIONS

GOLDEN = Path(__file__).parents[1] / "golden" / "ci"


def decoded(result: str) -> dict:
    return json.loads(base64.b64decode(result))


WRITERS = {
    "annotations.txt": ci.annotations,
    "summary.md": ci.step_summary,
    "classroom.json": lambda rep: json.dumps(decoded(ci.classroom_result(rep)), indent=2, sort_keys=True) + "\n",
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("filename", sorted(WRITERS))
def test_ci_writer_matches_golden(filename, variant):
    check_golden(GOLDEN / (variant or "sample") / filename, WRITERS[filename](VARIANTS[variant]()))


def test_classroom_result_is_version_1_with_one_weighted_test_per_question():
    rep = sample_report()
    result = decoded(ci.classroom_result(rep))
    assert result["version"] == 1 and result["status"] == "fail" and result["max_score"] == 100
    assert [t["name"] for t in result["tests"]] == [f"{q.label} {q.key}" for q in QUESTIONS]
    assert [(t["score"], t["max_score"]) for t in result["tests"]] == [(q.score, q.max_score) for q in rep.questions]
    assert round(sum(t["score"] for t in result["tests"]), 4) == json.loads(report.gradescope_json(rep))["score"]
    topo = result["tests"][2]
    assert topo["status"] == "fail" and topo["message"] == "2/3 cases passed, 13.33/20 points"


def test_summary_total_is_the_grade():
    rep = sample_report()
    assert ci.step_summary(rep).splitlines()[0] == "## needle hw1: 18.33 / 100"
    assert "| **total** | 3/8 | **18.33/100** |" in ci.step_summary(rep)


def test_annotations_point_at_the_students_lines_and_skip_advisories():
    lines = ci.annotations(sample_report()).splitlines()
    assert lines[0].startswith("::error file=python/needle/ops/ops_mathematic.py,line=295,title=Q1 forward%3A 1 case")
    assert any(line.startswith("::error file=python/needle/autograd.py,line=390,") for line in lines)
    assert not any("int_axis" in line or "an int" in line for line in lines)  # advisories cost nothing
    stubs = [i for i, line in enumerate(lines) if "not implemented" in line]
    assert stubs and min(stubs) > max(i for i, line in enumerate(lines) if "long chain" in line)  # stubs last


def test_at_most_ten_annotations_then_a_notice():
    C = report.CaseResult
    cases = tuple(
        C(
            f"forward_{i}",
            "forward",
            f"Q1.{i}",
            0.0,
            1.0,
            False,
            f"case {i} failed",
            False,
            where=f"python/needle/ops/ops_mathematic.py:{100 + i}",
        )
        for i in range(13)
    )
    rep = report.Report("x", cases, report.question_scores(cases, QUESTIONS), "bwrap", 1.0)
    lines = ci.annotations(rep).splitlines()
    assert len(lines) == 11 and all(line.startswith("::error ") for line in lines[:10])
    assert lines[10] == "::notice title=more failures::3 more failing places: see report.md"


def test_student_text_never_becomes_a_workflow_command():
    C = report.CaseResult
    evil = "boom\n::error::forged\r\n::add-mask::x %0A"
    cases = (
        C(
            "forward_evil",
            "forward",
            "Q1.1",
            0.0,
            10.0,
            False,
            evil,
            False,
            where="python/needle/ops/ops_mathematic.py:7",
        ),
    )
    rep = report.Report("x", cases, report.question_scores(cases, QUESTIONS), "bwrap", 1.0)
    lines = ci.annotations(rep).splitlines()
    assert len(lines) == 1 and lines[0].endswith("::boom%0A::error::forged%0D%0A::add-mask::x %250A")


def test_annotation_keeps_the_explaining_lines():
    """A long reason is capped, but `Likely cause:` and `Smallest failing
    input:` under it still reach the annotation, each on its own line."""
    C = report.CaseResult
    output = "x" * 1000 + "\nLikely cause: the sign\nSmallest failing input: Log.gradient (): inputs 2."
    cases = (C("backward_log", "backward", "Q2.1", 0.0, 10.0, False, output, False, where="a.py:3"),)
    rep = report.Report("x", cases, report.question_scores(cases, QUESTIONS), "bwrap", 1.0)
    (line,) = ci.annotations(rep).splitlines()
    assert line.endswith(
        "::" + "x" * github_ci.MAX_MESSAGE + "%0ALikely cause: the sign"
        "%0ASmallest failing input: Log.gradient (): inputs 2."
    )


def test_escaping_follows_the_runner():
    assert github_ci.escape_data("50%\r\nx") == "50%25%0D%0Ax"
    assert github_ci.escape_property("Q1: a,b") == "Q1%3A a%2Cb"
    assert github_ci.command("warning", "m", file="a.py", line=3, title="") == "::warning file=a.py,line=3::m"


def test_emit_writes_the_runners_files(tmp_path):
    env = {"GITHUB_STEP_SUMMARY": str(tmp_path / "summary"), "GITHUB_OUTPUT": str(tmp_path / "output")}
    (tmp_path / "output").write_text("earlier=1\n")
    out = io.StringIO()
    ci.emit_github(sample_report(), env, out)
    assert out.getvalue() == ci.annotations(sample_report())
    assert (tmp_path / "summary").read_text() == ci.step_summary(sample_report())
    assert (tmp_path / "output").read_text() == "earlier=1\n"  # no GitHub Classroom result (discontinued)


def test_the_github_classroom_result_is_written_only_when_asked_for_as_legacy(tmp_path):
    env = {"GITHUB_OUTPUT": str(tmp_path / "output")}
    (tmp_path / "output").write_text("earlier=1\n")
    github_ci.emit(ci.document(sample_report()), env, io.StringIO(), legacy_classroom=True)
    earlier, result = (tmp_path / "output").read_text().splitlines()
    assert earlier == "earlier=1" and decoded(result.removeprefix("result="))["max_score"] == 100


def test_commands_stopped_brackets_with_a_fresh_token():
    out = io.StringIO()
    with ci.commands_stopped(out):
        print("::error::from a student", file=out)
    start, text, end = out.getvalue().splitlines()
    token = start.removeprefix("::stop-commands::")
    assert len(token) > 30 and end == f"::{token}::" and text == "::error::from a student"


@pytest.mark.parametrize(
    "fmt,env,expected",
    [
        ("github", {}, True),
        ("plain", {"GITHUB_ACTIONS": "true"}, False),
        ("auto", {"GITHUB_ACTIONS": "true"}, True),
        ("auto", {}, False),
    ],
)
def test_github_format_on_a_runner_or_when_asked(fmt, env, expected):
    assert ci.wanted(fmt, env) is expected


SOURCE = '''\
class Log(TensorOp):
    def compute(self, a):
        # Q1
        ### BEGIN YOUR SOLUTION
        return array_api.log(a)
        ### END YOUR SOLUTION

    def gradient(self, out_grad, node):
        return out_grad / node.inputs[0]


def softmax_loss(Z, y_one_hot):
    """Docstring."""
    ### BEGIN YOUR SOLUTION

    # a comment
    return (Z - y_one_hot).sum()
    ### END YOUR SOLUTION
'''


@pytest.mark.parametrize(
    "name,line",
    [
        ("Log", 5),
        ("Log.compute", 5),
        ("Log.gradient", 8),
        ("softmax_loss", 17),
        ("Exp", None),
        ("Log.nope", 1),
        ("gradient", None),
    ],
)
def test_def_line_finds_the_students_code_by_text(name, line):
    assert def_line(SOURCE, name) == line


def test_raised_where_maps_to_the_submissions_path():
    problem = "ValueError: bad (at python/needle/autograd.py:12 in find_topo_sort: x)"
    assert (
        raised_where(problem, {"python/needle/autograd.py": "hw1/python/needle/autograd.py"})
        == "hw1/python/needle/autograd.py:12"
    )
    assert raised_where("no value", {}) == ""


@pytest.mark.sandbox
def test_grade_on_a_runner_annotates_the_bug_and_fails_under(tmp_path, monkeypatch, capsys):
    """`grader grade` of a catalogue bug as a GitHub runner runs it: the
    annotation on the bug's line, the summary's total the results.json
    score, the Classroom result, and --fail-under's exit status."""
    from catalogue import build, mutants

    from grader import cli

    mutant = next(m for m in mutants.MUTANTS if m.name == "log_gradient_sign")
    sources = build.apply_edits(build.reference_sources(), mutant.edits)
    submission = build.write_submission(tmp_path / "repo", sources)
    bug_line = sources[build.OPS].splitlines().index("        return negate(out_grad / node.inputs[0])") + 1
    for var in ("GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT"):
        monkeypatch.setenv(var, str(tmp_path / var))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    status = cli.main(["grade", str(submission), "--out", str(tmp_path / "out"), "--fail-under", "95"])
    out, err = capsys.readouterr()
    score = json.loads((tmp_path / "out/results.json").read_text())["score"]
    assert status == 1 and "below --fail-under 95" in err and score < 95
    first = out.splitlines()[0]
    assert first.startswith(f"::error file={build.OPS},line={bug_line},title=Q2 backward"), first
    summary = (tmp_path / "GITHUB_STEP_SUMMARY").read_text()
    assert summary.startswith(f"## needle hw1: {score:.2f} / 100".replace(".00 ", " "))
    assert not (tmp_path / "GITHUB_OUTPUT").exists()  # no GitHub Classroom result (discontinued)
    table = out.split("::stop-commands::", 1)[1]  # everything after the annotations is bracketed
    assert "| total |" in table and table.rstrip().splitlines()[-1].startswith("::stop-")
    monkeypatch.delenv("GITHUB_ACTIONS")
    below = str(int(score))  # a bar the score clears: exit 0
    assert cli.main(["grade", str(submission), "--out", str(tmp_path / "out2"), "--fail-under", below]) == 0
    assert "::" not in capsys.readouterr().out  # plain off a runner
