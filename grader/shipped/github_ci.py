"""GitHub Actions outputs for a grading run: annotations on the student's
lines and the points table for the job summary (and, only when asked, the
legacy result GitHub Classroom's autograding reporter read: GitHub
Classroom was discontinued on 2026-08-28; Classroom 50 takes result.json
instead, classroom50_result.py).

Standard library only, and one input for both sides: a *results document*
(a plain dict, below). The grader builds it from its Report
(grader/grading/platforms/ci.py, `grader grade --format github`); the handout's
`make test RESULTS=FILE` writes it from the public cases (its conftest.py),
and a copy of this file, shipped as tests/hw1/hw1_cases/github_ci.py, renders
it on the student's runner:

    python3 tests/hw1/hw1_cases/github_ci.py .hw1-results.json
    python3 tests/hw1/hw1_cases/github_ci.py .hw1-results.json --legacy-github-classroom   # + result=

The document ("version": 1):
    title      "needle hw1 (public cases)"
    questions  [{key, label, score, max_score, passed, total}], in order
    cases      [{name, question, score, max_score, passed, stub, message, where}]
               where: "path/to/file.py:LINE" (relative to the repository root) or ""
    errors     [{message, where}]: failures outside any case (a file that does not import)
    notes      lines shown under the table
    report     where the full report is ("the Public cases step's log")

Nothing here ever prints text from student code at the start of a line:
every message goes through escape_data (newlines become %0A), so a
student's print("::error::...") quoted in a message stays data.
"""

import base64
import contextlib
import json
import os
import re
import secrets
import sys

MAX_ANNOTATIONS = 10  # GitHub shows 10 annotations of each kind per step
MAX_MESSAGE = 400  # characters of a case's message in an annotation
WHERE = re.compile(r"^([\w.\-/]+\.py):(\d+)")


def escape_data(text):
    """A workflow command's message: %, CR and LF escaped as the runner expects."""
    return str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text):
    """A workflow command's property value (file, title): also ':' and ','."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(kind, message, **props):
    """`::kind prop=value,...::message`, every part escaped."""
    shown = ",".join(f"{k}={escape_property(v)}" for k, v in props.items() if v not in (None, ""))
    return f"::{kind}{' ' + shown if shown else ''}::{escape_data(message)}"


def location(where):
    """(file, line) from "path.py:LINE ...", (None, None) when there is none."""
    match = WHERE.match(where or "")
    return (match.group(1), int(match.group(2))) if match else (None, None)


def _points(x):
    return f"{x:.2f}".rstrip("0").rstrip(".")


def _lost(case):
    return case["max_score"] - case["score"]


def failing(doc):
    """Scored cases below their points, grouped by the line they point at:
    one group per (file, line), else per question. Real failures come first
    in question order (later questions build on earlier ones, so the first
    is most often the cause), and within a question the costliest; cases
    that stopped at a handout stub come last (the student knows those)."""
    order = {q["key"]: i for i, q in enumerate(doc["questions"])}
    groups = {}
    for case in doc["cases"]:
        if case["max_score"] <= 0 or case["score"] >= case["max_score"]:
            continue
        file, line = location(case.get("where"))
        key = (bool(case.get("stub")), file, line) if file else (bool(case.get("stub")), case["question"])
        groups.setdefault(key, []).append(case)
    return sorted(
        groups.values(),
        key=lambda cases: (
            bool(cases[0].get("stub")),
            order.get(cases[0]["question"], len(order)),
            -sum(map(_lost, cases)),
        ),
    )


def _label(doc, key):
    return next((f"{q['label']} {q['key']}" for q in doc["questions"] if q["key"] == key), key)


EXPLAINS = ("Likely cause: ", "Smallest failing input: ")  # lines under a case's message, kept whole


def _message(text):
    """A case's message capped, but the lines that explain it (EXPLAINS)
    kept apart, each capped alone: the cap must not cut them off the reason."""
    lines = text.split("\n")
    if not any(line.startswith(EXPLAINS) for line in lines):
        return text[:MAX_MESSAGE]
    reason = "\n".join(line for line in lines if not line.startswith(EXPLAINS))
    return "\n".join([reason[:MAX_MESSAGE], *(line[:MAX_MESSAGE] for line in lines if line.startswith(EXPLAINS))])


def _annotation(doc, cases):
    first = cases[0]
    file, line = location(first.get("where"))
    count = f"{len(cases)} case{'s' * (len(cases) != 1)}"
    title = (
        f"{_label(doc, first['question'])}: {count} fail{'s' * (len(cases) == 1)} "
        f"(-{_points(sum(map(_lost, cases)))} points)"
    )
    message = _message(first["message"])
    if len(cases) > 1:
        message += f" (and {', '.join(c['name'] for c in cases[1:4])}{', ...' * (len(cases) > 4)})"
    return command("error", message, file=file, line=line, title=title)


def annotations(doc):
    """One ::error per failing group (at most MAX_ANNOTATIONS, errors outside
    cases first), then one ::notice saying how many more are in the report."""
    lines = [
        command(
            "error",
            e["message"][:MAX_MESSAGE],
            file=location(e.get("where"))[0],
            line=location(e.get("where"))[1],
            title="not run",
        )
        for e in doc.get("errors", ())
    ]
    lines += [_annotation(doc, cases) for cases in failing(doc)]
    if len(lines) > MAX_ANNOTATIONS:
        more = len(lines) - MAX_ANNOTATIONS
        lines = lines[:MAX_ANNOTATIONS] + [
            command(
                "notice",
                f"{more} more failing place{'s' * (more != 1)}: see {doc.get('report', 'the report')}",
                title="more failures",
            )
        ]
    return lines


def total(doc):
    return round(sum(q["score"] for q in doc["questions"]), 4), round(sum(q["max_score"] for q in doc["questions"]), 4)


def summary(doc):
    """The job summary: the per-question points table (the same total as the
    grade), then the notes, then where the failures are. Only our own text:
    a case's message (which may quote student output) stays in the log."""
    score, most = total(doc)
    lines = [
        f"## {doc['title']}: {_points(score)} / {_points(most)}",
        "",
        "| question | cases passed | points |",
        "|---|---|---|",
    ]
    for q in doc["questions"]:
        lines.append(
            f"| {q['label']} {q['key']} | {q['passed']}/{q['total']} | "
            f"{_points(q['score'])}/{_points(q['max_score'])} |"
        )
    lines.append(
        f"| **total** | {sum(q['passed'] for q in doc['questions'])}/"
        f"{sum(q['total'] for q in doc['questions'])} | **{_points(score)}/{_points(most)}** |"
    )
    lines += [""] + [f"> {note}" for note in doc.get("notes", ())]
    places = [(location(c[0].get("where")), c) for c in failing(doc)]
    if places:
        lines += ["", "Failing cases, by line:", ""]
        for (file, line), cases in places:
            at = f"`{file}:{line}`" if file else "(no line in your files)"
            lines.append(f"- {at}: {_label(doc, cases[0]['question'])}, {', '.join(c['name'] for c in cases)}")
    return "\n".join(lines).rstrip("\n") + "\n"


def classroom_result(doc):
    """LEGACY (GitHub Classroom, discontinued 2026-08-28): the autograding
    reporter's input (its `result` output):
    base64 of JSON, version 1, one test per question carrying its own
    max_score and score, so the Classroom gets weighted partial credit."""
    score, most = total(doc)
    tests = [
        {
            "name": f"{q['label']} {q['key']}",
            "status": "pass" if q["score"] >= q["max_score"] else "fail",
            "score": q["score"],
            "max_score": q["max_score"],
            "message": f"{q['passed']}/{q['total']} cases passed, {_points(q['score'])}/{_points(q['max_score'])} points",
            "test_code": "",
            "filename": "",
            "line_no": 0,
            "execution_time": "",
        }
        for q in doc["questions"]
    ]
    status = "error" if doc.get("errors") and not doc["cases"] else "pass" if score >= most else "fail"
    result = {"version": 1, "status": status, "max_score": most, "tests": tests}
    return base64.b64encode(json.dumps(result, sort_keys=True).encode("utf-8")).decode("ascii")


@contextlib.contextmanager
def commands_stopped(out=None):
    """Inside, the runner takes no line as a workflow command: for printing
    text we do not control. The token is fresh and never leaves this process."""
    out, token = out or sys.stdout, f"stop-{secrets.token_hex(16)}"
    print(f"::stop-commands::{token}", file=out, flush=True)
    try:
        yield
    finally:
        print(f"::{token}::", file=out, flush=True)


def _append(path, text):
    # The runner hands each step its own file and reads it when the step
    # ends; appending (never replacing) keeps what earlier commands wrote.
    with open(path, "a", encoding="utf-8") as f:
        f.write(text)


LEGACY_CLASSROOM = "--legacy-github-classroom"  # also write GitHub Classroom's `result=` (discontinued)


def emit(doc, env=None, out=None, legacy_classroom=False):
    """Print the annotations; append the summary to $GITHUB_STEP_SUMMARY when
    the runner set it, and with legacy_classroom `result=...` to $GITHUB_OUTPUT."""
    env, out = os.environ if env is None else env, out or sys.stdout
    for line in annotations(doc):
        print(line, file=out)
    if env.get("GITHUB_STEP_SUMMARY"):
        _append(env["GITHUB_STEP_SUMMARY"], summary(doc))
    if legacy_classroom and env.get("GITHUB_OUTPUT"):
        _append(env["GITHUB_OUTPUT"], f"result={classroom_result(doc)}\n")
    out.flush()


def main(argv=None):
    """`python3 github_ci.py RESULTS_JSON [--legacy-github-classroom]`: the
    GitHub outputs of a results document."""
    args = list(sys.argv[1:] if argv is None else argv)
    legacy = LEGACY_CLASSROOM in args
    args = [a for a in args if a != LEGACY_CLASSROOM]
    if len(args) != 1:
        print(
            f"usage: python3 github_ci.py RESULTS_JSON [{LEGACY_CLASSROOM}] "
            "(RESULTS_JSON written by `make test RESULTS=RESULTS_JSON`)",
            file=sys.stderr,
        )
        return 2
    try:
        with open(args[0], encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as exc:
        print(
            f"github_ci.py: {args[0]}: cannot read ({type(exc).__name__}); run `make test RESULTS={args[0]}` first",
            file=sys.stderr,
        )
        return 2
    emit(doc, legacy_classroom=legacy)
    return 0


if __name__ == "__main__":
    sys.exit(main())
