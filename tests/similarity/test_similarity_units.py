"""The parts of grader similarity on small inputs: tokens and scopes,
normalisation, blocks found by markers and by name, winnowing, the stable
hash, and the rarity weights."""

import os
import re
import subprocess
import sys
import textwrap

import pytest

from grader import HANDOUT, ROOT
from grader.similarity import fingerprints, tokens
from grader.similarity.blocks import BY_NAME, MARKERS, PARTIAL, find_blocks
from grader.similarity.scoring import BlockPrints, Fingerprinted, score_pairs, weigh
from grader.similarity.template import Template, load_template

OPS = "python/needle/ops/ops_mathematic.py"
FILES = ("python/needle/autograd.py", OPS, "apps/simple_ml.py")


@pytest.fixture(scope="module")
def template() -> Template:
    return load_template(HANDOUT, FILES)


def ops_file(template):
    return next(f for f in template.files if f.rel == OPS)


def norm(text, known=frozenset()):
    return [t for t, _ in tokens.normalise(tokens.scan(textwrap.dedent(text), "x.py"), known)]


def test_names_literals_comments_and_layout_are_abstracted():
    original = """
        def f(a, b):
            # the ratio
            total = a / b  # comment
            return total * 2.5, "ok"
        """
    disguised = """
        def f(x,y):
          result=x /\
                y
          return result*7, 'changed',
        """
    assert norm(original) == norm(disguised.replace("'changed',", "'changed'"))
    assert norm("f(a, b,)") == norm("f(a, b)")  # a formatter's trailing comma


def test_names_the_handout_gives_and_attributes_are_kept():
    known = frozenset({"summation"})
    assert norm("summation(x.reshape(s))", known) == ["summation", "(", "V", ".", "reshape", "(", "V", ")", ")", ";"]
    assert norm("summation(x)", known) != norm("broadcast(x)", known)


def test_stub_statements_are_dropped_in_any_wording():
    assert norm('raise NotImplementedError("Q1: Exp.compute")') == []
    assert norm("raise NotImplementedError()\nreturn a") == ["return", "V", ";"]
    assert norm("raise ValueError(x)") != []


def test_scopes_give_methods_their_class_and_run_to_their_last_line():
    text = textwrap.dedent("""
        class A:
            def f(self):
                # Q1
                ### BEGIN YOUR SOLUTION
                return 1
                ### END YOUR SOLUTION

            def g(self): return 2
        def h():
            pass
        """)
    scopes = {s.qualname: s for s in tokens.scan(text, "x.py").scopes}
    assert set(scopes) == {"A", "A.f", "A.g", "h"}
    assert (scopes["A.f"].first, scopes["A.f"].last) == (3, 7)  # the END marker is inside f
    assert scopes["A"].last == 9


def test_a_file_that_does_not_tokenize_names_its_line():
    with pytest.raises(tokens.SourceError, match=r"^bad\.py:2: cannot be read as Python \(EOF in multi-line"):
        tokens.scan('x = 1\ny = """never closed\n', "bad.py")


def solved(edits: dict, drop_markers=(), drop_end=()) -> str:
    """The handout's ops file with bodies in place of some stubs (each stub
    names its function); for some, both markers or only END removed."""
    lines = (HANDOUT / OPS).read_text().splitlines()
    out = []
    for i, line in enumerate(lines):
        if line is None:  # a marker removed
            continue
        stub = re.search(r'raise NotImplementedError\("Q\d: ([\w.]+)"\)', line)
        owner = stub.group(1) if stub else None
        if owner in edits:
            indent = line[: len(line) - len(line.lstrip())]
            if owner in drop_markers:
                out.pop()
            out.extend(indent + ln for ln in edits[owner].splitlines())
            if owner in drop_markers or owner in drop_end:
                lines[i + 1] = None
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def test_blocks_by_markers_by_name_and_with_one_marker_left(template):
    edits = {
        "EWiseDiv.compute": "return a / b",
        "Exp.gradient": "return out_grad * exp(node.inputs[0])",
        "Log.gradient": "return out_grad / node.inputs[0]",
    }
    text = solved(edits, drop_markers=("Exp.gradient",), drop_end=("Log.gradient",))
    blocks, notes = find_blocks(text, OPS, ops_file(template), template, "alice")
    got = {b.id: b for b in blocks}
    assert set(got) == set(edits)
    assert got["EWiseDiv.compute"].how == MARKERS
    assert got["Exp.gradient"].how == BY_NAME and got["Log.gradient"].how == PARTIAL
    # by name: the handout's own lines (the def line's docstring, the `# Q2` tag) do not count
    assert [t for t, _ in got["Exp.gradient"].tokens] == norm(
        "return out_grad * exp(node.inputs[0])", ops_file(template).known
    )
    assert any("alice: python/needle/ops/ops_mathematic.py: Exp.gradient: solution markers missing" in n for n in notes)
    assert any("Log.gradient: one solution marker is missing" in n for n in notes)


def test_an_untouched_handout_has_no_blocks(template):
    blocks, notes = find_blocks((HANDOUT / OPS).read_text(), OPS, ops_file(template), template, "h")
    assert blocks == [] and notes == []


def test_winnowing_keeps_the_window_minimum_once():
    assert fingerprints.winnow([5, 3, 9, 3, 7, 8, 1], w=3) == [1, 3, 6]
    assert fingerprints.winnow([4, 2], w=4) == [1]
    assert fingerprints.winnow([], w=4) == []


def test_short_blocks_get_one_fingerprint_and_long_ones_share_runs():
    short = fingerprints.fingerprint([("return", 1), ("V", 1), (";", 1)])
    assert len(short) == 1 and (short[0].first, short[0].last) == (1, 1)
    stream = [(t, i) for i, t in enumerate("for V in V : V = V + V ; return V ;".split())]
    copied = [(t, i + 50) for t, i in stream]
    assert {p.hash for p in fingerprints.fingerprint(stream)} == {p.hash for p in fingerprints.fingerprint(copied)}


def test_hash_is_the_same_in_every_process():
    """Python's hash() is salted per process; the fingerprint hash must not be."""
    code = "from grader.similarity.fingerprints import stable_hash; print(stable_hash(['return', 'V', ';']))"
    seen = set()
    for seed in ("1", "2", "random"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
        )
        seen.add(out.stdout.strip())
    salted = {
        subprocess.run(
            [sys.executable, "-c", "print(hash('return V ;'))"],
            env={**os.environ, "PYTHONHASHSEED": s},
            capture_output=True,
            text=True,
        ).stdout
        for s in ("1", "2")
    }
    assert len(salted) == 2, "the control: hash() differs between these processes"
    assert seen == {str(fingerprints.stable_hash(["return", "V", ";"]))}


def printed(name, blocks: dict, kind="class"):
    """A Fingerprinted with the given block id -> hashes (lines unused)."""
    out = {}
    for bid, hashes in blocks.items():
        prints = tuple(fingerprints.Print(h, 1, 1) for h in hashes)
        out[bid] = BlockPrints(None, prints, frozenset(hashes))
    return Fingerprinted(name, kind, out)


def test_what_most_of_the_class_shares_weighs_nothing_and_rare_shares_weigh_one():
    subs = [printed(f"s{i}", {"f": {1, 100 + i}}) for i in range(12)]  # fingerprint 1: everyone's
    subs[0].blocks["f"], subs[1].blocks["f"] = (
        printed("x", {"f": {1, 100, 7}}).blocks["f"],
        printed("y", {"f": {1, 101, 7}}).blocks["f"],
    )
    weights = weigh(subs, {"f": frozenset({100})})
    assert weights[("f", 1)] == 0.0  # 12 of 12
    assert weights[("f", 7)] == 1.0  # 2 of 12
    assert weights[("f", 100)] == 0.0  # the handout's own
    pairs = score_pairs(subs, [], weights, threshold=0.5)
    top = pairs[0]
    assert (top.a, top.b) == ("s0", "s1") and top.flagged and top.blocks[0][0] == "f"
    assert all(p.similarity == 0 for p in pairs[1:])  # only forced code in common: nothing


def test_a_public_solution_is_weighed_by_the_class():
    subs = [printed(f"s{i}", {"f": {i, 50 + i}}) for i in range(10)]
    public = [printed("repo", {"f": {3, 53, 999}}, kind="public")]
    pairs = score_pairs(subs, public, weigh(subs, {}), threshold=0.5)
    assert (pairs[0].a, pairs[0].b, pairs[0].kind) == ("s3", "repo", "public")
    assert pairs[0].similarity == pytest.approx(2 * 2 / (2 + 3))  # its own 999 weighs 1 in its total


def test_line_numbers_are_tokenize_s_even_after_a_form_feed():
    text = "x = 1\n\x0c\ndef f():\n    return 2\n"
    scanned = tokens.scan(text, "x.py")
    assert scanned.scopes[0].first == 3 and scanned.lines[2] == "def f():"


def test_a_handout_without_solution_markers_cannot_be_the_template(tmp_path):
    from grader.similarity.template import TemplateError

    (tmp_path / "a.py").write_text("def f():\n    return 1\n")
    with pytest.raises(TemplateError, match=r"no `### BEGIN YOUR SOLUTION` marker in a\.py; pass the handout"):
        load_template(tmp_path, ["a.py"])
    (tmp_path / "b.py").write_text('x = """\n')
    with pytest.raises(TemplateError, match=r"b\.py:1: cannot be read as Python .*run `grader handout`"):
        load_template(tmp_path, ["b.py"])
