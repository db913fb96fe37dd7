"""The grader's public cases, shipped in the handout so that a student's
`make test` runs exactly what the grader runs on them.

Written under tests/NAME/NAME_cases/ (hw1: tests/hw1/hw1_cases/):
- the assignment's case package (hw1: registry, contract, util, one module
  per question) with every `### BEGIN HIDDEN TESTS` block removed: hidden rows and the
  functions only they use never ship;
- tolerance.py, compare.py and checks.py: the grader's own comparison code
  (grader/shipped/, which imports only itself, so the copies run as they are); where.py, the worker's own `where:`
  line, with student_code.json (the student files and their given
  functions), so that `make test` names the same line as the grader;
  github_ci.py, the grader's GitHub renderer (annotations, job summary,
  Classroom result), run by the handout's .github/workflows/grade.yml;
- expected/: the reference's value of every public case, from the same
  sandboxed reference run the grader caches (JSON, arrays as .npy files);
- smaller.json: each public case's smaller inputs (the grader's "Smallest
  failing input" candidates) with the reference's values on them, and
  smallest.py, the line's wording and choice rule;
- causes.json: the known bugs' results on the public inputs (the grader's
  "Likely cause" catalogue), per public value case only those that differ
  from the reference's, with each bug's message, and likely_cause.py, the
  matching rule the grader applies to them;
- points.json: each public case's points as the grader splits them, and
  each question's hidden cases and their points;
- GENERATED.txt: the label of the data files above, which cannot hold one
  (every other file's first line is its label; labels.py).
"""
from __future__ import annotations

import inspect
import json
from functools import lru_cache
from pathlib import Path

import numpy as np

from grader.shipped import tolerance
from grader.core.assignment import Assignment, shown
from grader.grading.run import expected
from grader.grading.run import seeds, time_limits
from grader.shipped import checks
from grader.shipped import compare
from grader.grading.report.scoring import UNIT, max_scores
from grader.grading.run.worker_dirs import STUDENT_CODE, WHERE, student_code
from grader.grading.run.config import QuestionLimits, RunConfig
from grader.core import labels
from grader.handout.leaks import secrets_of
from grader.core.markers import strip_source
from grader.grading.explain.causes import catalogue, diagnose, store as causes_store
from grader.grading.explain.shrink import candidates as shrink_candidates, line as shrink_line
from grader.grading.explain.shrink import reference as shrink_reference, spec as shrink_spec
from grader.shipped import github_ci, likely_cause, smallest, student_limits

GITHUB_CI = Path(inspect.getsourcefile(github_ci))  # renders the results of the student's workflow
SMALLEST = Path(inspect.getsourcefile(smallest))  # words and picks the `Smallest failing input:` line
SMALLER = "smaller.json"  # the public cases' smaller inputs and the reference's values on them
LIKELY_CAUSE = Path(inspect.getsourcefile(likely_cause))  # the `Likely cause:` line's matching rule
CAUSES = "causes.json"  # the known bugs' results on the public inputs, where they differ from the reference's

# What GENERATED.txt says of the files that cannot hold a label (patterns
# relative to the cases folder).
INDEX_ENTRIES = {
    "expected/*": "the reference's value of each public case (its sandboxed run on the public inputs)",
    "points.json": "each public case's points and each question's hidden points (the case registry)",
    "limits.json": "each question's time and memory limits, the grader's (grading/run/time_limits.py, "
                   "RunConfig's memory): make test stops a question at them (student_limits.py)",
    STUDENT_CODE: "the student files and their given functions (the reference's, without solution blocks)",
    SMALLER: "the public cases' smaller inputs and the reference's values on them (the grader's shrink candidates)",
    CAUSES: "the known bugs' results on the public inputs where they differ from the reference's, and their "
            "messages (the grader's likely-cause catalogue, run on the public seed)",
}
# Lines that the leak check would flag but that reveal nothing: the case
# code's own lines that happen to equal a solution line, and hidden-case
# lines that the public tests also write. Normalized as leaks.normalize does.
NOT_SECRET = {"return W1, W2", "raw = f.read()", "y.backward()"}


LIMITS = "limits.json"


def limits_table(registry) -> dict:
    """Each question's limits as the grader sets them: seconds by time_limits' rule, memory by RunConfig's."""
    times = time_limits.handout_limits()
    return {"questions": {q.key: {"label": q.label, "seconds": times[q.key].seconds, "why": times[q.key].why,
                                  "memory_mb": registry.memory(q.key) * QuestionLimits.memory_mb}
                          for q in registry.questions if q.key in times}}


class CasesError(Exception):
    """The public cases cannot be shipped; one `path: reason` line."""


def public_cases(registry):
    return [c for c in registry.cases if not c.hidden]


def _label(path: Path, assignment: Assignment) -> str:
    return labels.sentence(labels.source_name(path, assignment), labels.command_of(assignment))


def _case_sources(out: Path, assignment: Assignment):
    """Strip hidden blocks from each case module; (blocks, secrets) found."""
    blocks, secrets = [], []
    for path in sorted(assignment.cases_dir.glob("*.py")):
        name, where = path.stem, shown(path)
        text = path.read_text(encoding="utf-8")
        result = strip_source(text, where, fallback_name=name)
        if any(b.kind == "solution" for b in result.blocks):
            raise CasesError(f"{where}: a solution block in a case module; cases hold no student code")
        (out / f"{name}.py").write_bytes(labels.label(path.name, result.text.encode("utf-8"),
                                                      _label(path, assignment)))
        blocks += [(where, b) for b in result.blocks]
        secrets += [s for s in secrets_of(where, text, result.blocks) if s.text not in NOT_SECRET]
    return blocks, secrets


def _comparison_code(out: Path, assignment: Assignment):
    """The shipped package's comparison code and renderers, copied as they
    are: they import only each other (relative imports), numpy and the
    standard library, so the copies work inside the cases package."""
    copied = [Path(inspect.getsourcefile(module)) for module in (tolerance, compare, checks)]
    for path in copied + [WHERE, GITHUB_CI, SMALLEST, LIKELY_CAUSE, Path(student_limits.__file__)]:
        (out / path.name).write_bytes(labels.label(path.name, path.read_bytes(), _label(path, assignment)))


def _encode(value, folder: Path, stem: str, arrays: list):
    """Plain JSON, each array in its own .npy file (never pickle)."""
    if isinstance(value, np.ndarray):
        name = f"{stem}_{len(arrays)}.npy"
        arrays.append(name)
        with open(folder / name, "wb") as f:
            np.save(f, value, allow_pickle=False)
        return {"npy": name}
    if isinstance(value, list):
        return [_encode(v, folder, stem, arrays) for v in value]
    if isinstance(value, dict):
        return {k: _encode(v, folder, stem, arrays) for k, v in value.items()}
    return value


@lru_cache(maxsize=2)
def _reference_values(assignment: Assignment, key: str):
    """The reference's values (key: the grader's cache key, so edits reload)."""
    return expected.load(RunConfig(assignment=assignment, seed=seeds.PUBLIC))  # the inputs that ship


def _expected_values(out: Path, assignment: Assignment):
    answers = _reference_values(assignment, expected.cache_key(assignment))
    registry = assignment.registry()
    folder = out / "expected"
    folder.mkdir()
    for key in sorted({c.value_key for c in public_cases(registry)}):
        if registry.by_name[key].hidden:
            raise CasesError(f"{shown(assignment.cases_dir)}: public cases check {key}, a hidden case's value; "
                             "make it public or the checking cases hidden")
        outcome = answers[key]
        if not outcome.ok:
            raise CasesError(f"reference: no value for {key}: {outcome.problem}")
        record = {"value": _encode(outcome.value, folder, key, [])}
        (folder / f"{key}.json").write_text(json.dumps(record, sort_keys=True) + "\n")


def _plain_json(value):
    """A value as JSON: arrays as {"array": nested list, "dtype": name}."""
    if isinstance(value, np.ndarray):
        return {"array": value.tolist(), "dtype": value.dtype.name}
    if isinstance(value, list):
        return [_plain_json(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain_json(v) for k, v in value.items()}
    return value


def _smaller_inputs(folder: Path, assignment: Assignment):
    """smaller.json: per public shrinkable case, its smaller calls
    (the grader's candidates, as the worker's spec entries), their text for
    the line, and the reference's value on each: `make test` shows the
    smallest that fails under a failing case, as the grader does."""
    registry = assignment.registry()
    values = shrink_reference.load(RunConfig(assignment=assignment, seed=seeds.PUBLIC))
    doc = {}
    for case in public_cases(registry):
        if not shrink_reference.shrinkable(case):
            continue
        chosen = [c for c in shrink_candidates.candidates(case) if c.id in values]
        entries = shrink_spec.document(chosen, {case.name: case.description}, [])["candidates"]
        doc[case.name] = [{"entry": e, "call": shrink_line.call_text(c), "expected": _plain_json(values[c.id].value)}
                          for c, e in zip(chosen, entries)]
    (folder / SMALLER).write_text(json.dumps(doc, sort_keys=True) + "\n")


def _bug_result(result) -> dict:
    """One bug's result as shipped: a gradient record's analytic part only
    (the only part its check compares), or the error's text."""
    if not result.ok:
        return {"error": result.error}
    value = result.value
    return {"value": _plain_json({"analytic": value["analytic"]} if isinstance(value, dict) else value)}


def _known_bugs(folder: Path, assignment: Assignment):
    """causes.json: per public value case of a question the catalogue
    covers, the bugs whose result differs from the reference's, those with
    one result in one entry; each bug's diagnosis once (catalogue.diagnosis:
    the mistake, not its fix). `make test` names the
    one that matches a failing case, by the grader's rule."""
    bugs, cases = {}, {}
    config = RunConfig(assignment=assignment, seed=seeds.PUBLIC)
    answers = _reference_values(assignment, expected.cache_key(assignment))
    values = causes_store.load(config) if catalogue.covers(assignment) else {}
    for case in public_cases(assignment.registry()) if values else ():
        if case.check not in likely_cause.VALUE_CHECKS or case.question not in diagnose.COVERED:
            continue
        reference, entries = diagnose.result(answers[case.value_key]), {}
        for bug in diagnose.known(case, values):
            if likely_cause.reaches(diagnose.agreeing(case), reference, bug.result):
                shipped = _bug_result(bug.result)
                entries.setdefault(json.dumps(shipped, sort_keys=True), (shipped, []))[1].append(bug.name)
                bugs[bug.name] = {"message": catalogue.diagnosis(bug.message), "shape_tells": bug.shape_tells}
        if entries:
            cases[case.value_key] = [{**shipped, "bugs": names} for shipped, names in entries.values()]
    doc = {"bugs": bugs, "cases": cases}
    (folder / CAUSES).write_text(json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n")


def points_table(registry) -> dict:
    """Public cases' points, and each question's hidden cases, as the grader counts them."""
    scores = max_scores(registry)
    questions = []
    for q in registry.questions:
        hidden = [c for c in registry.cases_for(q.key) if c.hidden and not c.advisory]
        units = sum(round(scores[c.name] * UNIT) for c in hidden)
        questions.append({"label": q.label, "key": q.key, "points": q.points,
                          "hidden_cases": len(hidden), "hidden_points": units / UNIT})
    return {"questions": questions, "cases": {c.name: scores[c.name] for c in public_cases(registry)}}


def write_cases(out: Path, assignment: Assignment):
    """Write the public cases under the handout root `out`; (paths written, blocks, secrets)."""
    folder = out / assignment.cases_dest
    folder.mkdir(parents=True)
    blocks, secrets = _case_sources(folder, assignment)
    _comparison_code(folder, assignment)
    (folder / STUDENT_CODE).write_text(json.dumps(student_code(assignment), indent=1, sort_keys=True) + "\n")
    _expected_values(folder, assignment)
    _smaller_inputs(folder, assignment)
    _known_bugs(folder, assignment)
    (folder / "points.json").write_text(json.dumps(points_table(assignment.registry()), indent=1) + "\n")
    (folder / LIMITS).write_text(json.dumps(limits_table(assignment.registry()), indent=1) + "\n")
    index = labels.sentence(labels.source_name(assignment.cases_dir, assignment) + "/", labels.command_of(assignment))
    (folder / labels.INDEX).write_text(labels.index_text(index, INDEX_ENTRIES))
    files = sorted(p.relative_to(out).as_posix() for p in folder.rglob("*") if p.is_file())
    for rel in files:
        (out / rel).chmod(0o644)
    return files, blocks, secrets
