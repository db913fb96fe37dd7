"""`Likely cause:` in the student's `make test`: the handout ships the known
bugs' results on the public inputs (hw1_cases/causes.json) and the grader's
matching rule (hw1_cases/likely_cause.py); on every public case the rule
names what the grader names on the same inputs, the line shows under a
failing case and reaches the CI annotations, the reference and correct
variants get none, and check-handout catches stale data."""
import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from grader.core.assignment import Assignment
from grader.grading.run import expected
from grader.grading.run import seeds
from grader.shipped import checks
from grader.grading.explain.causes import catalogue, diagnose, edits, store
from grader.grading.run.config import RunConfig
from grader.handout import cases as handout_cases
from grader.handout.commands import differences
from grader.shipped import likely_cause
from grader.shipped.cases import CASES

from catalogue import alternatives

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "reference"
HANDOUT = ROOT / "handout"
SHIPPED = HANDOUT / Assignment.hw1().cases_dest
DATA = (REFERENCE / "data").resolve()
BY_NAME = {c.name: c for c in CASES}
MUTANT = {m.name: m for m in catalogue.MUTANTS}
CAUSES_REL = f"{Assignment.hw1().cases_dest}/{handout_cases.CAUSES}"


def shipped():
    return json.loads((SHIPPED / handout_cases.CAUSES).read_text())


def agreeing(case):
    return lambda want, got: checks.check(case, want, got).passed


def from_json(node):
    if isinstance(node, dict):
        if set(node) == {"array", "dtype"}:
            return np.array(node["array"], dtype=node["dtype"])
        return {k: from_json(v) for k, v in node.items()}
    if isinstance(node, list):
        return [from_json(v) for v in node]
    return node


def known_shipped(doc, case):
    """What the handout's test_cases.py reads for a case: a Known per shipped bug."""
    out = []
    for entry in doc["cases"].get(case.value_key, []):
        result = (likely_cause.Result(True, from_json(entry["value"])) if "value" in entry
                  else likely_cause.Result(False, error=entry["error"]))
        out += [likely_cause.Known(n, doc["bugs"][n]["message"], result, doc["bugs"][n]["shape_tells"])
                for n in entry["bugs"]]
    return out


# ---------------------------------------------------------------- the shipped data

def test_known_bugs_ship_for_public_value_cases_with_the_catalogues_messages():
    doc = shipped()
    covered = {c.value_key for c in CASES if not c.hidden and c.check in likely_cause.VALUE_CHECKS
               and c.question in diagnose.COVERED}
    assert doc["cases"] and set(doc["cases"]) <= covered
    assert not [k for k in doc["cases"] if BY_NAME[k].hidden]
    for name, bug in doc["bugs"].items():
        assert bug == {"message": catalogue.diagnosis(MUTANT[name].message), "shape_tells": MUTANT[name].shape_tells}
    answers = expected.load(RunConfig(assignment=Assignment.hw1(), seed=seeds.PUBLIC))
    for key, entries in doc["cases"].items():
        reference = diagnose.result(answers[key])
        for bug in known_shipped(doc, BY_NAME[key]):  # each one the bug reaches, as shipped
            assert likely_cause.reaches(agreeing(BY_NAME[key]), reference, bug.result), (key, bug.name)
        names = [n for e in entries for n in e["bugs"]]
        assert len(names) == len(set(names)), key


def test_the_handouts_rule_names_what_the_grader_names_on_the_public_inputs():
    """Each catalogue bug standing in for a student, on every public case it
    fails: the shipped data and the shared rule give the grader's line."""
    config = RunConfig(assignment=Assignment.hw1(), seed=seeds.PUBLIC)
    answers, values, doc = expected.load(config), store.load(config), shipped()
    public = [c for c in CASES if not c.hidden and c.check in likely_cause.VALUE_CHECKS]
    named, compared = set(), 0
    for mutant in catalogue.MUTANTS:
        # the bug's values where it runs, the reference's elsewhere (its other code is the reference's)
        student = {c.value_key: values[mutant.name].get(c.value_key) or answers[c.value_key] for c in public}
        ruled_out = diagnose.refuted(public, student, answers, values)
        reference = {c.value_key: diagnose.result(answers[c.value_key]) for c in public}
        mine = {key: diagnose.result(outcome) for key, outcome in student.items()}
        passed = [(agreeing(c), reference[c.value_key], known_shipped(doc, c)) for c in public
                  if likely_cause.same(agreeing(c), reference[c.value_key], mine[c.value_key])]
        local_ruled_out = likely_cause.ruled_out(passed)
        for case in public:
            outcome = student[case.value_key]
            if not diagnose.eligible(case, outcome) or \
                    likely_cause.same(agreeing(case), reference[case.value_key], mine[case.value_key]):
                continue
            graders = diagnose.cause_of(case, outcome, answers[case.value_key], values, ruled_out)
            local = likely_cause.cause(agreeing(case), mine[case.value_key], reference[case.value_key],
                                       known_shipped(doc, case), local_ruled_out)
            assert local == catalogue.diagnosis(graders), (mutant.name, case.name)
            compared += 1
            named |= {mutant.name} if local == catalogue.diagnosis(mutant.message) else set()
    assert compared > len(catalogue.MUTANTS)
    # most bugs are named on some public case (36 of 44 when written; the gradients computed in numpy
    # show only on hidden second-order cases)
    assert len(named) >= 0.75 * len(catalogue.MUTANTS), sorted(set(MUTANT) - named)


def test_the_handout_ships_diagnoses_not_fixes():
    """The data is readable before any bug is made: no shipped message holds
    a fix (what follows the colon), and each grader message keeps its own."""
    shipped_messages = {bug["message"] for bug in shipped()["bugs"].values()}
    assert shipped_messages and not any(": " in m for m in shipped_messages)
    assert not any("transpose(a) @ out_grad" in m or "x^(n-1)" in m for m in shipped_messages)
    full = {m.message for m in catalogue.MUTANTS}
    assert len({catalogue.diagnosis(m) for m in full}) == len(full)


def test_check_handout_reports_stale_known_bugs(tmp_path, monkeypatch):
    """A tampered causes.json or rule copy, and a catalogue whose message
    changed since the handout was built, are reported by check-handout."""
    copy = tmp_path / "handout"
    shutil.copytree(HANDOUT, copy, symlinks=True, ignore=shutil.ignore_patterns("__pycache__", ".venv", "data"))
    assert differences(REFERENCE, copy) == []
    doc = shipped()
    doc["cases"].pop(next(iter(doc["cases"])))
    (copy / CAUSES_REL).write_text(json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n")
    rule = copy / Assignment.hw1().cases_dest / "likely_cause.py"
    rule.write_text(rule.read_text().replace("len(causes) == 1", "len(causes) >= 1"))
    assert differences(REFERENCE, copy) == [CAUSES_REL, f"{Assignment.hw1().cases_dest}/likely_cause.py"]
    changed = "Log.gradient reworded: " + MUTANT["log_sign"].message
    monkeypatch.setattr(catalogue, "MUTANTS", tuple(
        dataclasses.replace(m, message=changed) if m.name == "log_sign" else m for m in catalogue.MUTANTS))
    assert CAUSES_REL in differences(REFERENCE, HANDOUT)


# ---------------------------------------------------------------- the student's make test

def handout_with(tmp_path, mutant_names=(), extra_edits=()):
    """A handout copy with the reference's code, the named catalogue bugs planted."""
    root = tmp_path / "hw1"
    shutil.copytree(HANDOUT, root, ignore=shutil.ignore_patterns("data", "__pycache__"))
    shutil.copytree(REFERENCE / "python", root / "python", dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    changes = [e for name in mutant_names for e in MUTANT[name].edits] + list(extra_edits)
    sources = {edits.OPS: (root / edits.OPS).read_text()}
    (root / edits.OPS).write_text(edits.apply_edits(sources, changes)[edits.OPS])
    (root / "data").symlink_to(DATA)
    return root


def make_test(root, keyword):
    results = root / "results.json"
    run = subprocess.run([sys.executable, "-m", "pytest", "tests/hw1", "-q", "-k", keyword, "-p", "no:cacheprovider",
                          "--results-json", str(results)], cwd=root, capture_output=True, text=True, timeout=600,
                         env={"PATH": "/usr/bin:/bin", "OPENBLAS_NUM_THREADS": "1"})
    cases = {c["name"]: c for c in json.loads(results.read_text())["cases"]} if results.exists() else {}
    return run.stdout, cases


def case_block(stdout, name):
    """The lines pytest prints under a failing case's header."""
    return stdout.split(f" test_case[{name}] ", 1)[1].split("\n___", 1)[0].split("\n= ", 1)[0]


# (bug planted, case run, how the cause is found): a value, an error's text,
# a shape only, and a bug the other public cases rule out.
NAMED = [("log_sign", "backward_log"),
         ("summation_no_reshape", "backward_summation_one_axis"),
         ("matmul_no_batch_sum", "backward_matmul_batched_by_2d"),
         ("divide_scalar_product", "backward_divide_scalar")]


@pytest.mark.slow
@pytest.mark.parametrize("bug, case", NAMED, ids=[n for n, _ in NAMED])
def test_make_test_names_the_planted_bug_under_its_case(tmp_path, bug, case):
    stdout, results = make_test(handout_with(tmp_path, [bug]), case)
    line = likely_cause.PREFIX + catalogue.diagnosis(MUTANT[bug].message)
    block = case_block(stdout, case)
    assert line in block.splitlines(), stdout[-3000:]
    smallest = next(i for i, text in enumerate(block.splitlines()) if text.startswith("Smallest failing input: "))
    assert block.splitlines().index(line) < smallest
    # the CI annotation's message (conftest.py's results, rendered by github_ci.py) has it too
    assert line in results[case]["message"].splitlines()
    assert stdout.count(likely_cause.PREFIX) == 1


@pytest.mark.slow
def test_an_ambiguous_result_gets_no_line(tmp_path):
    """DivScalar.compute multiplying: Q1's case names it; on Q2's case the
    gradient bug gives the same values and no passed case rules it out."""
    stdout, _ = make_test(handout_with(tmp_path, ["divide_scalar_compute_product"]), "divide_scalar")
    line = likely_cause.PREFIX + catalogue.diagnosis(MUTANT["divide_scalar_compute_product"].message)
    assert line in case_block(stdout, "forward_divide_scalar").splitlines(), stdout[-3000:]
    assert likely_cause.PREFIX not in case_block(stdout, "backward_divide_scalar"), stdout[-3000:]


OPS_ALTERNATIVES = [a for a in alternatives.ALTERNATIVES if all(e.file == edits.OPS for e in a.edits) and not a.gap]


@pytest.mark.slow
@pytest.mark.parametrize("variant", [(), tuple(OPS_ALTERNATIVES)], ids=["reference", "correct_variants"])
def test_the_reference_and_correct_variants_get_no_line(tmp_path, variant):
    root = handout_with(tmp_path, extra_edits=[e for a in variant for e in a.edits])
    stdout, results = make_test(root, "forward or backward")
    assert results and "Likely cause" not in stdout, stdout[-3000:]
    assert not any("Likely cause" in c["message"] for c in results.values())
