"""The plagiarism levels of `make bench` (benchmarks/similarity_levels.py):
each disguise keeps the code valid and meaning the same, and the measure
finds planted copies on a small class."""

import random
import textwrap

import pytest

from benchmarks import similarity as bench_similarity
from benchmarks import similarity_levels as levels
from grader import HANDOUT, REFERENCE
from grader.core.assignment import Assignment
from grader.similarity.template import load_template

FILES = Assignment.hw1().student_files
SNIPPET = textwrap.dedent("""
    def f(n, items):
        total = 0
        for i in range(n):
            total += i
        out = []
        for x in items:
            if x > 1:
                out.append(x * 2)
        first, second = sorted(items, reverse=True)[:2]
        return total, out, first - second
    """)


@pytest.mark.parametrize("level", range(1, 7))
def test_every_level_keeps_the_reference_valid_python(level):
    files = {rel: (REFERENCE / rel).read_text() for rel in FILES}
    disguised = levels.disguise(files, level, random.Random(level))
    for rel, text in disguised.items():
        compile(text, rel, "exec")
    assert (disguised == files) == (level == 1)


@pytest.mark.parametrize("seed", range(6))
def test_control_and_statement_rewrites_keep_the_meaning(seed):
    rng = random.Random(seed)
    rewritten = levels.control(levels.statements(levels.identifiers(SNIPPET, "apps/simple_ml.py")), rng)
    assert rewritten != SNIPPET
    ours, theirs = {}, {}
    exec(SNIPPET, ours)
    exec(rewritten, theirs)
    assert theirs["f_v"](5, [3, 1, 2]) == ours["f"](5, [3, 1, 2]) == (10, [6, 4], 1)  # f renamed too


def test_identifiers_rename_consistently_and_keep_keyword_arguments():
    text = "def g(a):\n    rows, cols = divmod(a, 2)\n    return sorted([rows, cols], reverse=True)\n"
    out = levels.identifiers(text, "apps/simple_ml.py").replace(" ", "")
    assert "rows_v,cols_v=divmod(a_v,2)" in out and "reverse=True" in out and "defg_v(a_v)" in out


def test_the_synthetic_class_is_valid_python_even_where_a_statement_spans_lines():
    people = levels.class_files(10, seed=1)
    for files in people.values():
        for rel, text in files.items():
            compile(text, rel, "exec")
    text = (
        "def f(a):\n    ### BEGIN YOUR SOLUTION\n    x = (a +\n         a)\n    y = a \\\n        + 1\n"
        "    return x + y\n    ### END YOUR SOLUTION\n"
    )
    assert bench_similarity._statement_starts(text) == {
        1,
        3,
        5,
        7,
    }  # not the lines a statement continues on, nor comments
    for seed in range(20):
        out = bench_similarity.personalised(text, random.Random(seed))
        compile(out, "f.py", "exec")
    assert any(bench_similarity.personalised(text, random.Random(s)) != text for s in range(20))


def test_planted_copies_are_found_and_the_bench_prints_each_level(capsys):
    template = load_template(HANDOUT, FILES)
    people = levels.class_files(10, seed=1)
    for level in (1, 3, 5):
        r = levels.run_level(level, people, template, copies=3)
        assert (r.recall, r.precision, r.top) == (1.0, 1.0, 3), r
        assert r.lowest > r.highest_other
    assert levels.LevelResult("x", 4, 0, 0, 0, 0.0, 0.0).precision == 1.0  # nothing flagged: none wrong
    assert levels.LevelResult("x", 4, 5, 2, 2, 0.0, 0.0).recall == 0.5
    levels.levels(count=8, copies=2)
    lines = capsys.readouterr().out.splitlines()
    assert [ln.split("  ")[0] for ln in lines] == [f"similarity {name}" for name in levels.LEVELS]
    assert all("precision " in ln and "recall " in ln and "top 2: " in ln for ln in lines)
