"""Likely causes that generalise (issue 34): families of mistakes derived per
op (grader/grading/explain/causes/families.py), checked on bugs written the
way a student writes them, not as the catalogue plants them.

Each planted bug runs through the sandboxed worker on the public inputs
(Q2, and Q6's ReLU case only); its failing cases are diagnosed by the
grader's rule against the catalogue's values (built once per seed, cached).
"""

import pytest

from grader import REFERENCE
from grader.core.assignment import Assignment
from grader.grading.explain.causes import catalogue, diagnose, families, store
from grader.grading.explain.causes.edits import OPS, Body, apply_edits
from grader.grading.run import expected, seeds, time_limits
from grader.grading.run.config import RunConfig
from grader.grading.run.workers import only, run_all
from grader.shipped import likely_cause

MESSAGE = {m.name: m.message for m in catalogue.MUTANTS}


def test_every_op_gets_every_family_that_fits_it():
    names = set(MESSAGE)
    for op, (inputs, _, skip) in families.OPS_TABLE.items():
        legacy = {(o, f): n for (o, f, _k), (n, _) in families.LEGACY.items()}
        assert legacy.get((op, "pass_through"), f"{op.lower()}_pass_through") in names, op
        if "detached" not in skip:
            assert f"numpy_{op.lower()}" in names, op
    for name in (
        "exp_pass_through",
        "relu_pass_through",
        "relu_sign",
        "relu_no_out_grad",
        "matmul_transposed_a",
        "matmul_b_transposed",
        "matmul_a_no_transpose",
    ):
        assert name in names, name
    relu = [m for m in catalogue.MUTANTS if m.name.startswith("relu_")]
    assert relu and all(m.questions == ("nn_epoch_ndl",) and m.cases == families.RELU_CASES for m in relu)


def test_a_relu_bug_runs_only_the_relu_case_of_q6():
    registry = Assignment.hw1().registry()
    relu = next(m for m in catalogue.MUTANTS if m.name == "relu_pass_through")
    assert store._worker_question(registry, "nn_epoch_ndl", relu) == only("nn_epoch_ndl", families.RELU_CASES)
    assert store._worker_question(registry, "backward", catalogue.MUTANTS[0]) == "backward"


def gradient(cls, code):
    return Body(OPS, f"{cls}.gradient", code)


# A student's bug -> the catalogue entries whose message it may get (empty: no line at all).
STUDENT_BUGS = {
    "exp_out_grad_through": ((gradient("Exp", "return out_grad"),), {"exp_pass_through"}),
    "relu_out_grad_through": ((gradient("ReLU", "return out_grad"),), {"relu_pass_through"}),
    "relu_mask_only": ((gradient("ReLU", "return Tensor(node.inputs[0].numpy() > 0)"),), {"relu_no_out_grad"}),
    "matmul_a_forgets_transpose": (
        (gradient("MatMul", "a, b = node.inputs\nreturn out_grad @ b, transpose(a) @ out_grad"),),
        {"matmul_a_no_transpose"},
    ),
    "log_negative": ((gradient("Log", "return -out_grad / node.inputs[0]"),), {"log_sign"}),
    "power_scalar_sign": (
        (gradient("PowerScalar", "return -out_grad * self.scalar * node.inputs[0] ** (self.scalar - 1)"),),
        {"powerscalar_sign"},
    ),
    # no family: no line
    "exp_doubled": ((gradient("Exp", "return out_grad * node * 2"),), set()),
}
# Correct rewrites: never diagnosed.
CORRECT = {
    "exp_via_node": (gradient("Exp", "return out_grad * node"),),
    "relu_via_divide": (
        gradient("ReLU", "x = node.inputs[0].numpy()\nreturn out_grad * Tensor((x > 0).astype(x.dtype))"),
    ),
    "matmul_via_operators": (
        gradient(
            "MatMul",
            "a, b = node.inputs\n"
            "ga, gb = out_grad @ b.transpose(), a.transpose() @ out_grad\n"
            "while len(ga.shape) > len(a.shape):\n"
            "    ga = ga.sum((0,))\n"
            "while len(gb.shape) > len(b.shape):\n"
            "    gb = gb.sum((0,))\n"
            "return ga, gb",
        ),
    ),
    "log_via_power": (gradient("Log", "return out_grad * power_scalar(node.inputs[0], -1)"),),
}
QUESTIONS = ("backward", "nn_epoch_ndl")


@pytest.fixture(scope="module")
def setting():
    config = expected.settled(RunConfig(seed=seeds.PUBLIC))
    return config, expected.load(config), store.load(config)


def _diagnoses(tmp_path, setting, edits) -> dict:
    config, answers, values = setting
    registry = config.assignment.registry()
    sources = {rel: (REFERENCE / rel).read_text() for rel in config.assignment.student_files}
    files = {}
    for rel, text in apply_edits(sources, edits).items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
        files[rel] = tmp_path / rel
    relu = only("nn_epoch_ndl", families.RELU_CASES)
    runs = run_all(
        files,
        config,
        {q: time_limits.building() for q in ("backward", relu)},
        base=config.assignment.reference,
        questions=["backward", relu],
    )
    student = {name: o for run in runs.values() for name, o in run.outcomes.items()}
    ruled_out = diagnose.refuted(registry.cases, student, answers, values)
    out = {}
    for case in registry.cases:
        outcome = student.get(case.value_key)
        if outcome is None or not diagnose.eligible(case, outcome):
            continue
        if not diagnose.agreeing(case)(answers[case.value_key].value, outcome.value) if outcome.ok else True:
            out[case.name] = diagnose.cause_of(case, outcome, answers[case.value_key], values, ruled_out)
    return out


@pytest.mark.parametrize("name", sorted(STUDENT_BUGS))
def test_a_bug_of_a_family_is_named_and_one_of_none_is_not(name, tmp_path, setting):
    edits, allowed = STUDENT_BUGS[name]
    causes = {c for c in _diagnoses(tmp_path, setting, edits).values() if c}
    if allowed:
        assert causes and causes <= {MESSAGE[n] for n in allowed}, causes
    else:
        assert causes == set()


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_a_correct_rewrite_is_never_diagnosed(name, tmp_path, setting):
    diagnosed = _diagnoses(tmp_path, setting, CORRECT[name])
    assert {case: cause for case, cause in diagnosed.items() if cause} == {}


def test_the_reach_table_gives_the_rules_answer_and_asks_it_once(setting, monkeypatch):
    """Which known bugs reach a case (their result there is not the
    reference's) depends on neither student nor submission: diagnose's
    table gives likely_cause.reaches's answer for every bug on every case,
    asks the rule once per case, and serves later gradings of the process."""
    config, answers, values = setting
    cases = [c for c in config.assignment.registry().cases if c.value_key in answers and c.question in diagnose.COVERED]

    def reached(case):
        agree, want = diagnose.agreeing(case), diagnose.result(answers[case.value_key])
        return frozenset(k.name for k in diagnose.known(case, values) if likely_cause.reaches(agree, want, k.result))

    direct = {c.name: reached(c) for c in cases}
    assert sum(map(bool, direct.values())) > 20
    calls, real = [], likely_cause.reaches
    monkeypatch.setattr(likely_cause, "reaches", lambda *args: calls.append(1) or real(*args))
    table = {}
    for _ in range(2):
        for case in cases:
            assert diagnose.reaching(case, answers[case.value_key], values, table) == direct[case.name], case.name
    assert len(calls) == len(cases) * len(catalogue.MUTANTS)  # the second round asked nothing
    folder = store.causes_dir(config)
    assert diagnose.reach_table(folder) is diagnose.reach_table(folder)
    assert diagnose.reach_table(folder.with_name(folder.name + "-another-seed")) is not diagnose.reach_table(folder)
    passed = {c.value_key: answers[c.value_key] for c in cases}  # a student who passed every case
    rule = likely_cause.ruled_out(
        (diagnose.agreeing(c), diagnose.result(answers[c.value_key]), diagnose.known(c, values))
        for c in cases
        if c.check in diagnose.VALUE_CHECKS
    )
    assert rule and diagnose.refuted(cases, passed, answers, values, table) == rule
