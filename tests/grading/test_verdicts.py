"""Proof that the grader's verdicts are right.

Grades, through the real sandboxed grader (`grade_submission`):
- the reference (100/100) and the untouched handout stubs (0/100, every
  case saying "not implemented: Q...");
- catalogue/mutants.py: realistic bugs, each losing points on exactly the
  questions it names and keeping full marks elsewhere;
- catalogue/alternatives.py: different but correct code, 100/100;
- catalogue/hostile.py: attacks, each scoring 0 on the question it attacks,
  full marks elsewhere, with a clear message, and no process left behind.

Submissions are the reference's three files with textual edits applied
(catalogue/build.py); an edit whose anchor is gone fails loudly.
"""

import dataclasses
import os
import re
import shutil
import tempfile
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import baseline
import numpy as np
import pytest
from catalogue import alternatives, build, canonical, causes, hostile, mutants, procs
from catalogue.build import FILES

import grader
from grader import REFERENCE
from grader.core.assignment import Assignment
from grader.grading.explain.causes import catalogue as cause_catalogue
from grader.grading.explain.causes import diagnose
from grader.grading.explain.shrink import candidates as shrink_candidates
from grader.grading.explain.shrink import line as shrink_line
from grader.grading.explain.shrink import reference as shrink_reference
from grader.grading.report.orchestrate import grade_submission
from grader.grading.run import derived, expected
from grader.grading.run.config import RunConfig
from grader.grading.run.time_limits import TimeLimit
from grader.shipped import checks
from grader.shipped.cases import CASES, QUESTION

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]
FULL = {key: q.points for key, q in QUESTION.items()}
REGISTRY_CASES = {c.name: c for c in CASES}


# ---------------------------------------------------------------- fixtures


def _stub_sources():
    """The reference's files with each solution region replaced by the stub
    the handout generator writes: raise NotImplementedError("Qn: Name")."""
    out = {}
    for rel, text in build.reference_sources().items():
        lines, result, inside, label, name = text.splitlines(keepends=True), [], False, "Q?", "?"
        for line in lines:
            stripped = line.strip()
            if stripped.startswith("def ") or stripped.startswith("class "):
                ident = re.match(r"(def|class) (\w+)", stripped).group(2)
                if stripped.startswith("class ") and not line.startswith(" "):
                    cls = ident
                    name = ident
                elif line.startswith(" "):
                    name = f"{cls}.{ident}"
                else:
                    cls, name = "", ident
            if re.fullmatch(r"# Q\d", stripped):
                label = stripped[2:]
            if stripped == build.BEGIN:
                inside = True
                indent = line[: len(line) - len(line.lstrip())]
                result.append(f'{indent}raise NotImplementedError("{label}: {name}")\n')
                continue
            if stripped == build.END:
                inside = False
                continue
            if not inside:
                result.append(line)
        out[rel] = "".join(result)
    return out


@pytest.fixture(scope="session")
def handout_dir(tmp_path_factory):
    """The pristine handout the grader overlays student files on: the real
    one when it exists, else a stub copy of the reference (patched into the
    grader for the session)."""
    if (grader.HANDOUT / "python").is_dir():
        yield grader.HANDOUT
        return
    base = tmp_path_factory.mktemp("handout")
    for sub in ("python", "apps"):
        shutil.copytree(REFERENCE / sub, base / sub, ignore=shutil.ignore_patterns("__pycache__"))
    build.write_submission(base, _stub_sources())
    stub = dataclasses.replace(Assignment.hw1(), handout=base)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Assignment, "hw1", classmethod(lambda cls: stub))  # every RunConfig made from now on
        yield base


JOBS = 3  # submissions graded at once (each runs 2 question workers at once): overlaps
# sandbox start-up and the hostile runs' timeouts with work


def _selected(request, kind):
    """The catalogue entries of type `kind` that the selected tests grade
    (through the fixture asking)."""
    seen = {}
    for item in request.session.items:
        if request.fixturename not in getattr(item, "fixturenames", ()):
            continue
        for value in getattr(getattr(item, "callspec", None), "params", {}).values():
            if isinstance(value, kind):
                seen[value.name] = value
    return list(seen.values())


def _grade_sources(dest, edits, extra_files=None, config=RunConfig()):
    sources = build.apply_edits(build.reference_sources(), canonical.BASE + tuple(edits))
    build.write_submission(dest, sources, extra_files)
    return grade_submission(dest, config)


def _grade_all(jobs):
    """name -> Report (or the exception), grading `jobs` (name -> thunk) JOBS at a time."""
    with ThreadPoolExecutor(JOBS) as pool:
        futures = {name: pool.submit(thunk) for name, thunk in jobs.items()}
        results = {}
        for name, future in futures.items():
            try:
                results[name] = future.result()
            except Exception as exc:  # reported by the entry's own test
                results[name] = exc
        return results


@pytest.fixture(scope="session")
def graded_static(request, handout_dir, tmp_path_factory):
    """Reports of every selected mutant and alternative, graded up front
    (two at a time: grading is half sandbox start-up and waiting)."""
    root = tmp_path_factory.mktemp("static")
    entries = _selected(request, (mutants.Mutant, alternatives.Alternative))
    return _grade_all({e.name: (lambda e=e: _grade_sources(root / e.name, e.edits)) for e in entries})


def report_of(results, name):
    result = results[name]
    if isinstance(result, Exception):
        raise result
    return result


def scores(report):
    return {q.key: q.score for q in report.questions}


def failures(report, questions=None):
    """name: output of each failed case (of `questions`), for assertion messages."""
    return "\n".join(
        f"  {c.name}: {c.output}"
        for c in report.cases
        if not c.passed and (questions is None or c.question in questions)
    )


def lost(report):
    return {key for key, score in scores(report).items() if score < FULL[key] - 1e-9}


# ---------------------------------------------------------------- reference and handout


def test_reference_scores_100(handout_dir):
    report = grade_submission(REFERENCE)
    assert report.score == 100, failures(report)
    assert all(c.passed for c in report.cases)


def test_canonical_base_scores_100(handout_dir, tmp_path):
    """The base every mutant starts from is itself correct."""
    report = _grade_sources(tmp_path / "base", ())
    assert report.score == 100, failures(report)


@pytest.fixture(scope="module")
def handout_report(handout_dir, tmp_path_factory):
    if handout_dir == grader.HANDOUT:
        return grade_submission(grader.HANDOUT)
    dest = build.write_submission(tmp_path_factory.mktemp("stubs"), _stub_sources())
    return grade_submission(dest)


def test_handout_cases_say_not_implemented(handout_report):
    assert handout_report.cases
    for case in handout_report.cases:
        assert not case.passed and case.score == 0, case
        assert "not implemented: Q" in case.output, case


def test_handout_scores_0(handout_report):
    assert handout_report.score == 0, [c.name for c in handout_report.cases if c.passed]


# ---------------------------------------------------------------- catalogue sanity (fast)


def _stub_lines(sources):
    return sorted(
        line.strip()
        for text in sources.values()
        for line in text.splitlines()
        if 'raise NotImplementedError("Q' in line
    )


@pytest.mark.skipif(not (grader.HANDOUT / "python").is_dir(), reason="no handout/ to compare with")
def test_fallback_stubs_match_the_handout():
    """The stand-in used before handout/ existed stubs the same functions."""
    handout = {rel: (grader.HANDOUT / rel).read_text() for rel in FILES}
    assert _stub_lines(_stub_sources()) == _stub_lines(handout)


def test_catalogue_sizes_and_names():
    names = (
        [m.name for m in mutants.MUTANTS]
        + [a.name for a in alternatives.ALTERNATIVES]
        + [h.name for h in hostile.HOSTILE]
    )
    assert len(names) == len(set(names)), "duplicate catalogue names"
    assert len(mutants.MUTANTS) >= 30
    assert len(alternatives.ALTERNATIVES) >= 8
    for m in mutants.MUTANTS:
        assert (m.loses or m.reported_by) and m.loses <= set(QUESTION), m.name
        assert m.reported_by <= {c.name for c in CASES if c.advisory}, m.name


@pytest.mark.parametrize("entry", mutants.MUTANTS + alternatives.ALTERNATIVES, ids=lambda e: e.name)
def test_catalogue_edits_apply(entry):
    """Every anchor still matches the reference and the result still parses."""
    sources = build.apply_edits(build.reference_sources(), canonical.BASE + entry.edits)
    for rel in FILES:
        compile(sources[rel], rel, "exec")
    assert sources != build.apply_edits(build.reference_sources(), canonical.BASE)


# ---------------------------------------------------------------- mutants


class GapStillOpen(AssertionError):
    """A catalogued grading gap is still there (the expected xfail)."""


def _mutant_param(m):
    """A catalogue entry as a parameter; entries with a known gap are strict
    xfails that only accept GapStillOpen, so any other failure still fails."""
    marks = [pytest.mark.xfail(strict=True, raises=GapStillOpen, reason=m.gap)] if m.gap else []
    return pytest.param(m, id=m.name, marks=marks)


@pytest.mark.parametrize("m", [_mutant_param(m) for m in mutants.MUTANTS])
def test_mutant_loses_exactly_its_questions(graded_static, m):
    report = report_of(graded_static, m.name)
    if m.gap and report.score == 100:
        raise GapStillOpen(f"{m.name}: {m.gap}")
    assert lost(report) == set(m.loses), (
        f"{m.name} ({m.bug}): expected to lose {sorted(m.loses)}, lost {sorted(lost(report))}\n{failures(report)}"
    )
    for case in report.cases:
        if not case.passed:
            assert case.output.strip(), case
    failed_advisories = {c.name for c in report.cases if c.advisory and not c.passed}
    assert m.reported_by <= failed_advisories, (
        f"{m.name}: advisories {sorted(m.reported_by - failed_advisories)} should report it"
    )


def _lost_only_on_hidden(report):
    """Questions the report loses points on whose failing scored cases are
    all hidden: what a student's `make test` cannot see coming."""
    out = set()
    for key in lost(report):
        failing = [c for c in report.cases if c.question == key and c.max_score > 0 and not c.passed]
        if failing and all(c.hidden for c in failing):
            out.add(key)
    return out


def test_public_cases_predict_every_mutants_loss(graded_static):
    """Local points predict the grade: every question a mutant loses fails
    at least one public case too, so the student sees it in `make test`."""
    blind = {}
    for m in mutants.MUTANTS:
        if m.name in graded_static and not m.gap:
            unseen = _lost_only_on_hidden(report_of(graded_static, m.name))
            if unseen:
                blind[m.name] = sorted(unseen)
    assert not blind, f"mutants that lose points only on hidden cases: {blind}"


# ---------------------------------------------------------------- likely causes (issue 22)

CAUSE_MESSAGE = {m.name: m.message for m in cause_catalogue.MUTANTS}


def cause_lines(report):
    """case name -> the `Likely cause:` text under it."""
    return {
        c.name: line[len(diagnose.PREFIX) :]
        for c in report.cases
        for line in c.output.splitlines()[1:]
        if line.startswith(diagnose.PREFIX)
    }


@pytest.mark.parametrize("m", [pytest.param(m, id=m.name) for m in mutants.MUTANTS if m.name in causes.DIAGNOSED])
def test_mutant_names_its_planted_bug(graded_static, m):
    """The proof table (catalogue/causes.py): the report names the planted
    bug, and nothing else; a row with no cause shows no line at all."""
    report = report_of(graded_static, m.name)
    got = cause_lines(report)
    want = {CAUSE_MESSAGE[name] for name in causes.DIAGNOSED[m.name]}
    wrong = {case: text for case, text in got.items() if text not in want}
    assert not wrong, f"{m.name} ({m.bug}): wrong causes {wrong}"
    assert bool(got) == bool(want), f"{m.name} ({m.bug}): no `Likely cause:` line\n{failures(report)}"
    for case in report.cases:
        assert case.passed is False or diagnose.PREFIX not in case.output, case


@pytest.mark.parametrize("alt", [pytest.param(a, id=a.name) for a in alternatives.ALTERNATIVES])
def test_alternative_never_gets_a_cause(graded_static, alt):
    report = report_of(graded_static, alt.name)
    assert not cause_lines(report), f"{alt.name} ({alt.why}) was diagnosed: {cause_lines(report)}"


# ---------------------------------------------------------------- smallest failing input (issue 22)


def smallest_lines(report):
    """case name -> its `Smallest failing input:` line."""
    return {
        c.name: line for c in report.cases for line in c.output.splitlines()[1:] if line.startswith(shrink_line.PREFIX)
    }


def _shown_candidate(case_name, text):
    """The candidate a line names (its call text is unique among the case's)."""
    hidden = REGISTRY_CASES[case_name].hidden
    found = [
        c
        for c in shrink_candidates.candidates(REGISTRY_CASES[case_name])
        if text[len(shrink_line.PREFIX) :].startswith(shrink_line.call_text(c) + (": ", " (values")[hidden])
    ]
    assert len(found) == 1, (case_name, text, found)
    return found[0]


def _original_sizes(case):
    shapes = [s for s, _, _ in case.call.inputs]
    return [int(np.prod(s)) for s in shapes]


@pytest.mark.parametrize("m", [pytest.param(m, id=m.name) for m in causes.GRADIENT_MUTANTS])
def test_mutant_failing_gradient_cases_are_shrunk(graded_static, m, tmp_path):
    """Every failing scored gradient case gets a `Smallest failing input:`
    line naming inputs no larger than the case's; run again on the
    mutant's code in the sandbox, that input still fails the case's check
    (a first-order case with the right values that lost its points to its
    second-order evidence, grading/derived.py, has no failing input)."""
    report = report_of(graded_static, m.name)
    lines = smallest_lines(report)
    failed = [
        c
        for c in report.cases
        if c.question == "backward"
        and not c.passed
        and not c.advisory
        and derived.UNEARNED not in c.output.splitlines()[0]
    ]
    assert failed, m.name
    missing = [c.name for c in failed if c.name not in lines]
    assert not missing, f"{m.name}: no smallest failing input for {missing}\n{failures(report, ['backward'])}"
    assert set(lines) <= {c.name for c in report.cases if not c.passed}
    chosen = [_shown_candidate(name, text) for name, text in lines.items()]
    for c in chosen:  # no input has more entries than the case's own
        assert all(int(np.prod(s)) <= n for s, n in zip(c.shapes, _original_sizes(REGISTRY_CASES[c.case]))), c
    dest = build.write_submission(
        tmp_path / m.name, build.apply_edits(build.reference_sources(), canonical.BASE + m.edits)
    )
    config = expected.settled(RunConfig())
    run = shrink_reference.evaluate({rel: dest / rel for rel in FILES}, config, chosen, TimeLimit(600, "a hang guard"))
    want = shrink_reference.load(config)
    for c in chosen:
        got = run.outcomes[c.id]
        case = REGISTRY_CASES[c.case]
        still_fails = not got.ok or not checks.check(case, want[c.id].value, got.value).passed
        assert still_fails, f"{m.name}: {c.id} passes when run again: {lines[c.case]}"


@pytest.mark.parametrize("alt", [pytest.param(a, id=a.name) for a in alternatives.ALTERNATIVES])
def test_alternative_never_gets_a_smallest_failing_input(graded_static, alt):
    report = report_of(graded_static, alt.name)
    assert not smallest_lines(report), f"{alt.name} ({alt.why}): {smallest_lines(report)}"


# ---------------------------------------------------------------- alternatives


@pytest.mark.parametrize("alt", [_mutant_param(a) for a in alternatives.ALTERNATIVES])
def test_alternative_scores_100(graded_static, alt):
    report = report_of(graded_static, alt.name)
    if alt.gap and report.score < 100:
        raise GapStillOpen(f"{alt.name}: {alt.gap}:\n{failures(report)}")
    assert report.score == 100, f"{alt.name} ({alt.why}):\n{failures(report)}"


# ---------------------------------------------------------------- hostile

HOSTILE_LIMIT = 30  # x the sandbox's start-up now (about 9 s here): the attacked question's time limit
SPIN_LIMIT = 10  # the same, for a question none of whose cases is honest (each burns CPU until stopped)


def _hostile_config(group):
    """Short limits on the attacked questions, so that a hang costs seconds,
    not the grader's own limit; measured now, as a multiple of the sandbox's
    start-up, so that a busy machine gets longer ones instead of failing the
    honest part of a worker's cases (every other question: the grader's own).
    Shorter still where every case of the question spins or forks: nothing
    there must finish in time, and the spinning slows the tests beside it."""
    start_up = baseline.measure()

    def limit(h):
        times = SPIN_LIMIT if h.spins else HOSTILE_LIMIT
        return TimeLimit(round(times * start_up, 1), f"limit: {times} x the sandbox's start-up now, set by this test")

    return RunConfig(overrides={h.target: limit(h) for h in group if h.target and h.short_limits})


def _grade_hostile(group, dest, substitutions):
    """Grade one submission carrying the attacks of `group`; returns
    name -> (Report, processes carrying that entry's token, group)."""
    edits = tuple(e for h in group for e in h.edits(substitutions[h.name]))
    files = {k: v for h in group for k, v in h.files(substitutions[h.name]).items()}
    report = _grade_sources(dest, edits, files, _hostile_config(group))
    alive = procs.processes()
    return {
        h.name: (
            report,
            [(pid, cmd) for pid, (_, _, cmd) in alive.items() if substitutions[h.name]["@TOKEN@"] in cmd],
            group,
        )
        for h in group
    }


@pytest.fixture(scope="session")
def graded_hostile(request, handout_dir, tmp_path_factory):
    """name -> (Report, surviving processes, the entries graded together),
    plus "_after": a grade of the canonical base once every attack is done,
    and the processes this test process still has below it."""
    root = tmp_path_factory.mktemp("hostile")
    cache = str(expected.expected_dir(RunConfig()))
    entries = _selected(request, hostile.Hostile)
    shipped = hostile.shipped_answers(Assignment.hw1().handout)
    subs = {
        h.name: {
            "@TOKEN@": f"vt-hostile-{h.name}-{uuid.uuid4().hex}",
            "@ROOT@": str(grader.ROOT),
            "@CACHE@": cache,
            "@SHIPPED@": shipped,
        }
        for h in entries
    }
    groups = hostile.bundles(entries)
    results = {}
    # Children this test process had before (e.g. multiprocessing's resource
    # tracker, started by an earlier test's process pool) are not leftovers.
    before = set(procs.descendants(os.getpid(), procs.processes()))
    with procs.subreaper():
        outcomes = _grade_all(
            {
                f"bundle{k}": (lambda g=g, k=k: _grade_hostile(g, root / f"bundle{k}", subs))
                for k, g in enumerate(groups)
            }
        )
        for outcome in outcomes.values():
            if isinstance(outcome, Exception):
                raise outcome
            results.update(outcome)
        report = _grade_sources(root / "after", ())
        alive = procs.processes()
        leftovers = {pid: alive[pid] for pid in procs.descendants(os.getpid(), alive) if pid not in before}
    results["_after"] = (report, leftovers)
    return results


def _hostile_param(h):
    return pytest.param(h, id=h.name)


@pytest.mark.parametrize("h", [_hostile_param(h) for h in hostile.HOSTILE])
def test_hostile_scores_0_where_it_attacks(graded_hostile, h):
    report, survivors, group = graded_hostile[h.name]
    assert not survivors, f"{h.name}: processes outlived the grading: {survivors}"
    zero = h.must_zero
    got = scores(report)
    for key in zero:
        assert got[key] == 0, f"{h.name} ({h.attack}) scored {got[key]} on {key}:\n{failures(report)}"
    # Graded together with `group`: the questions they attack are lost too,
    # every other question keeps full marks.
    expected_lost = set().union(*(g.must_zero for g in group)) | {
        c.question for c in report.cases for g in group if g.lose_cases and re.search(g.lose_cases, c.name)
    }
    assert lost(report) == expected_lost, (
        f"{h.name} ({h.attack}): expected to lose exactly {sorted(expected_lost)}, lost "
        f"{sorted(lost(report))}\n{failures(report)}"
    )
    for case in report.cases:
        mine = bool(h.lose_cases) and case.question == (h.target or case.question)
        if mine:
            assert case.passed != bool(re.search(h.lose_cases, case.name)), (h.name, case)
        if (case.question in zero and case.max_score > 0) or (mine and not case.passed):
            # A hidden case names only the kind of failure (never the student's text).
            assert not case.passed and (case.hidden or re.search(h.message, case.output)), (
                f"{h.name}: unclear message for {case.name}: {case.output!r} (want /{h.message}/)"
            )
        if case.hidden and h.hidden_never:
            assert not re.search(h.hidden_never, case.output), f"{h.name}: {case.name} shows {case.output!r}"


def test_grader_healthy_after_hostile(graded_hostile):
    """After every attack: the canonical base still scores 100, and no live
    process (whatever its uid: sandbox uids included) is left below this
    test process, orphans included (we are their subreaper)."""
    report, leftovers = graded_hostile["_after"]
    assert report.score == 100, failures(report)
    assert not leftovers, f"processes left below the test process: {leftovers}"


if __name__ == "__main__":  # python tests/test_verdicts.py [NAME...]: what each hostile run got
    import sys

    with tempfile.TemporaryDirectory() as tmp:
        for h in hostile.HOSTILE:
            if sys.argv[1:] and h.name not in sys.argv[1:]:
                continue
            subs = {
                "@TOKEN@": f"vt-{uuid.uuid4().hex}",
                "@ROOT@": str(grader.ROOT),
                "@CACHE@": str(expected.expected_dir(RunConfig())),
                "@SHIPPED@": hostile.shipped_answers(Assignment.hw1().handout),
            }
            report, survivors, _ = _grade_hostile([h], Path(tmp) / h.name, {h.name: subs})[h.name]
            print(h.name, scores(report), survivors)
            print(failures(report).splitlines()[:2])
