"""Similarity follows the code that runs: a graded function rebound to
other code (assignment, alias, setattr, decorator, class body) is scored
on that code; helpers it calls count; every other line the handout lacks
is fingerprinted too; and a submission that fills no solution block yet
runs code written elsewhere asks for a look instead of reading as empty."""

import sys
import textwrap

import pytest
import similarity_class as sc
import similarity_redteam as rt

from grader import HANDOUT, REFERENCE
from grader.core.assignment import Assignment
from grader.similarity import report
from grader.similarity.analysis import EMPTY_NOTE, compare
from grader.similarity.bindings import read_bindings
from grader.similarity.blocks import OTHER_HOW, REBOUND, read_file
from grader.similarity.corpus import CLASS, PUBLIC, Submission
from grader.similarity.scoring import THRESHOLD
from grader.similarity.template import load_template

OPS = "python/needle/ops/ops_mathematic.py"
SIMPLE_ML = "apps/simple_ml.py"
GRADED = ("EWiseDiv.gradient", "nn_epoch", "C.f")


@pytest.fixture(scope="module")
def template():
    return load_template(HANDOUT, Assignment.hw1().student_files)


def bound(code: str) -> dict:
    return {q: r.sources for q, r in read_bindings(textwrap.dedent(code), GRADED).rebound.items()}


@pytest.mark.parametrize(
    "code, sources",
    [
        ("def _g(): pass\nEWiseDiv.gradient = _g", ("_g",)),
        ("def _g(): pass\nh = _g\nnn_epoch = h", ("_g",)),
        ("def _g(): pass\nsetattr(EWiseDiv, 'gradient', _g)", ("_g",)),
        ("def _g(): pass\nEWiseDiv.gradient = staticmethod(_g)", ("_g",)),
        ("class C:\n    def f(self): raise NotImplementedError\n    def _g(self): return 1\n    f = _g", ("C._g",)),
        ("def r(*a):\n    return lambda f: f\n@r(EWiseDiv, 'gradient')\ndef _g(): pass", ("_g",)),
        ("def r(*a):\n    return lambda f: f\n@r(nn_epoch)\ndef _g(): pass", ("_g",)),
        ("nn_epoch = lambda X, y: X", (("lambda", 1, 1),)),
    ],
)
def test_each_way_of_rebinding_resolves_to_the_code_that_runs(code, sources):
    found = bound(code)
    assert len(found) == 1 and next(iter(found.values())) == sources


def test_the_last_binding_wins_and_a_def_after_a_rebinding_restores_it():
    assert bound("def _g(): pass\nnn_epoch = _g\ndef nn_epoch(X): return X") == {}
    assert bound("def nn_epoch(X): return X\ndef _g(): pass\nnn_epoch = _g") == {"nn_epoch": ("_g",)}
    assert bound("def nn_epoch(X): return X\nx = nn_epoch") == {}  # the other way round: no rebinding


def test_bindings_only_running_could_tell_are_reported():
    found = read_bindings("def _g(): pass\nglobals()['nn_epoch'] = _g\nsetattr(EWiseDiv, NAME, _g)\n", GRADED)
    assert found.rebound == {} and found.dynamic == (2, 3)
    assert read_bindings("def nn_epoch(X):\n    return X\n", GRADED).dynamic == ()


def test_an_expression_nested_past_the_stack_is_unresolved_not_a_crash():
    long_sum = "x = " + " + ".join(["a"] * 1500) + "\n"  # parses, but nests deeper than the reader may recurse
    found = read_bindings("def f(x=None):\n    return x\n" + long_sum + "nn_epoch = f\n", GRADED)
    assert found.rebound == {} and found.dynamic == (0,)  # the whole file, flagged "nests too deep"
    assert read_bindings("def f(x=None):\n    return x\nnn_epoch = f\n", GRADED).rebound["nn_epoch"].sources == ("f",)


def test_helpers_a_block_calls_count_in_it_and_the_rest_is_other_code(template):
    simple = next(f for f in template.files if f.rel == SIMPLE_ML)
    text = (
        (HANDOUT / SIMPLE_ML)
        .read_text()
        .replace('raise NotImplementedError("Q6: nn_epoch")', "return _train(X, y, W1, W2, lr, batch)")
    )
    text += textwrap.dedent("""
        def _train(X, y, W1, W2, lr, batch):
            for start in range(0, X.shape[0], batch):
                W1, W2 = _step(X[start:start + batch], W1, W2, lr)
            return W1, W2


        def _step(xb, W1, W2, lr):
            return W1 - lr * xb.sum(), W2 * lr


        def _never_called(a, b):
            total = 0
            for item in a:
                total += item * b
            return total
        """)
    found = read_file(text, SIMPLE_ML, simple, template, "alice")
    blocks = {b.id: b for b in found.blocks}
    lines = text.splitlines()
    epoch = {lines[n - 1].strip() for n in blocks["nn_epoch"].lines}
    assert "return _train(X, y, W1, W2, lr, batch)" in epoch
    assert "W1, W2 = _step(X[start:start + batch], W1, W2, lr)" in epoch  # _train
    assert "return W1 - lr * xb.sum(), W2 * lr" in epoch  # _step, through _train
    assert blocks["nn_epoch"].breaks == (
        len(blocks["nn_epoch"].segments()[0]),
        len(blocks["nn_epoch"].segments()[0]) + len(blocks["nn_epoch"].segments()[1]),
    )
    other = blocks[simple.other_id]
    assert other.how == OTHER_HOW
    assert {lines[n - 1].strip() for n in other.lines if lines[n - 1].strip()} == {
        "def _never_called(a, b):",
        "total = 0",
        "for item in a:",
        "total += item * b",
        "return total",
    }
    assert found.flags == () and found.filled == 1


def test_an_untouched_handout_is_empty_not_suspicious(template):
    subs = [
        Submission("handout", CLASS, {f.rel: (HANDOUT / f.rel).read_text() for f in template.files}),
        Submission("reference", CLASS, {f.rel: (REFERENCE / f.rel).read_text() for f in template.files}),
    ]
    analysis = compare(subs, [], template)
    assert EMPTY_NOTE.format(name="handout") in analysis.notes
    assert analysis.flags == ()
    assert analysis.fingerprinted["reference"].blocks.keys() == {
        b for b in template.block_ids() if not b.endswith(":other code")
    }  # the reference adds nothing else


def solution_blocks() -> int:
    """How many solution blocks the reference fills (each a graded function the rebound copy runs)."""
    return sum(
        (REFERENCE / rel).read_text().count("### BEGIN YOUR SOLUTION")
        for rel in ("python/needle/autograd.py", "python/needle/ops/ops_mathematic.py", "apps/simple_ml.py")
    )


@pytest.fixture(scope="module")
def red_team(template):
    """A class of 14, the rebound verbatim copy of the reference, and the reference as a public solution."""
    people = sc.make_class(14, seed=7)
    copy = rt.rebound_copy(template)
    del people["indep_reference"]
    subs = [Submission(n, CLASS, f) for n, f in people.items()] + [Submission("rebound", CLASS, copy)]
    public = [Submission("reference", PUBLIC, {f.rel: (REFERENCE / f.rel).read_text() for f in template.files})]
    return compare(subs, public, template), copy


def test_a_rebound_verbatim_copy_scores_high_against_its_source_and_is_flagged(red_team):
    analysis, _ = red_team
    top = analysis.pairs[0]
    assert (top.a, top.b, top.kind) == ("rebound", "reference", "public")
    assert top.similarity >= 0.95 and top.flagged
    assert top.similarity > THRESHOLD > max(p.similarity for p in analysis.pairs[1:])
    assert {bid for bid, score in top.blocks if score >= 0.95} >= {
        "EWiseDiv.gradient",
        "nn_epoch",
        "compute_gradient_of_variables",
    }


def test_a_rebound_copy_asks_for_a_look_instead_of_reading_as_empty(red_team, template):
    analysis, copy = red_team
    reasons = [f.reason for f in analysis.flags if f.name == "rebound"]
    assert not any(n.startswith("rebound: no solution block filled in") for n in analysis.notes)
    assert any(
        r.startswith(f"fills no solution block, yet {solution_blocks()} graded functions run code written elsewhere")
        for r in reasons
    )
    assert any(r.startswith("EWiseDiv.gradient runs _copy_") and "by setattr" in r for r in reasons)
    assert any(r.startswith("nn_epoch runs _copy_") and "by decorator" in r for r in reasons)
    assert all(any(f"by {way}" in r for r in reasons) for way in ("assignment", "setattr", "decorator"))
    assert {f.name for f in analysis.flags} == {"rebound"}, "no classmate is flagged"
    how = {bid: bp.block.how for bid, bp in analysis.fingerprinted["rebound"].blocks.items()}
    assert {h for bid, h in how.items() if not bid.endswith("other code")} == {REBOUND}


def test_the_command_names_the_rebound_copy_on_stderr_and_in_the_page(tmp_path, template):
    people = sc.make_class(5, seed=2)
    people["rebound"] = rt.rebound_copy(template)
    sc.write(tmp_path / "class", people)
    from test_similarity_class import run_similarity

    result = run_similarity(tmp_path / "class", "--out", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    assert f"review: rebound: fills no solution block, yet {solution_blocks()} graded functions" in result.stderr
    assert "1 submissions to review whatever they score" in result.stdout
    page = (tmp_path / "out" / "index.html").read_text()
    assert 'id="flags"><li class="flag">review: rebound: ' in page
    rows = (tmp_path / "out" / "similarity.csv").read_text().splitlines()
    assert rows[1].startswith("indep_reference,rebound,1.0000,") or rows[1].startswith(
        "rebound,indep_reference,1.0000,"
    )


def test_padding_a_copy_with_code_of_ones_own_does_not_dilute_it(red_team, template):
    analysis, copy = red_team
    padded = dict(copy)
    padded[SIMPLE_ML] += "".join(
        f"\n\ndef _pad{i}(a):\n    b = a * {i}\n    while b > 1:\n        b = b // 3 - {i}\n    return [b, a, {i}]\n"
        for i in range(40)
    )
    subs = [
        Submission("padded", CLASS, padded),
        *(s for s in analysis.submissions.values() if s.kind == CLASS and s.name != "rebound"),
    ]
    public = [s for s in analysis.submissions.values() if s.kind == PUBLIC]
    again = compare(subs, public, template)
    assert again.pairs[0].similarity == pytest.approx(analysis.pairs[0].similarity, abs=0.01)


def test_a_copy_bound_by_a_loop_only_running_could_resolve_still_meets_its_source(red_team, template):
    analysis, _ = red_team
    hidden = rt.rebound_copy(template, dynamic=True)
    subs = [
        Submission("hidden", CLASS, hidden),
        *(s for s in analysis.submissions.values() if s.kind == CLASS and s.name != "rebound"),
    ]
    public = [s for s in analysis.submissions.values() if s.kind == PUBLIC]
    again = compare(subs, public, template)
    top = again.pairs[0]
    assert (top.a, top.b) == ("hidden", "reference") and top.similarity >= 0.9 and top.flagged
    assert top.similarity > THRESHOLD > max(p.similarity for p in again.pairs[1:])
    assert all(bid.endswith(":other code") for bid, _ in top.blocks)  # nothing resolved: all other code
    reasons = [f.reason for f in again.flags if f.name == "hidden"]
    assert any(r.startswith("fills no solution block, yet has code of its own outside them") for r in reasons)
    assert any(r.startswith("line ") and "setattr(_owner, _name, _f)" in r for r in reasons)
    page = report.html_text(again)
    assert "reference: found in its blocks " in page


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
