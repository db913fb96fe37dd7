"""Golden tests of the similarity report writers (pure functions of an
Analysis), on a toy template and three tiny submissions, one of them a
hostile name and code meant to break out of the page and the CSV.

Regenerate after an intended change with
`UPDATE_GOLDEN=1 pytest tests/similarity/test_similarity_report.py`, then review the diff.
"""

import csv
import io
import os
import textwrap
from pathlib import Path

import pytest

from grader.similarity import report
from grader.similarity.analysis import Settings, compare
from grader.similarity.cluster_report import clusters_csv
from grader.similarity.corpus import CLASS, PUBLIC, Submission
from grader.similarity.decisions import Decision
from grader.similarity.template import Template, read_template_file

GOLDEN = Path(__file__).parents[1] / "golden" / "similarity"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
TOY = "toy.py"

HANDOUT = '''
import numpy as np


def total(values):
    """Sum of the values, in float64."""
    # Q1
    ### BEGIN YOUR SOLUTION
    raise NotImplementedError("Q1: total")
    ### END YOUR SOLUTION


def spread(values):
    """Largest minus smallest."""
    # Q1
    ### BEGIN YOUR SOLUTION
    raise NotImplementedError("Q1: spread")
    ### END YOUR SOLUTION
'''

ALICE = {
    "total": """
    result = 0.0
    for item in values:
        result = result + float(item)
    return result
    """,
    "spread": "return max(values) - min(values)",
}
# bob copied alice's loop; a hostile name, and a string that tries to close the page's <pre>
BOB = {
    "total": """
    acc = 0.0
    for v in values:
        acc = acc + float(v)  # "</code></pre><script>alert(1)</script>"
    return acc
    """,
    "spread": "ordered = sorted(values)\nreturn ordered[-1] - ordered[0]",
}
# dave leaves the stubs as shipped and rebinds `total`, once in a way only running it would tell
DAVE_TAIL = """

def _mine(values):
    return float(sum(sorted(values)))


total = _mine
globals()["</ul><script>x</script>"] = _mine
"""
CAROL = {"total": "return float(np.sum(np.asarray(values, dtype=np.float64)))", "spread": "return np.ptp(values)"}


def filled(bodies: dict) -> str:
    text = HANDOUT
    for name, body in bodies.items():
        code = textwrap.indent(textwrap.dedent(body).strip("\n"), "    ")
        text = text.replace(f'    raise NotImplementedError("Q1: {name}")', code)
    return text


@pytest.fixture(scope="module")
def analysis(tmp_path_factory):
    folder = tmp_path_factory.mktemp("toy-handout")
    (folder / TOY).write_text(HANDOUT)
    template = Template((read_template_file(folder, TOY),))
    subs = [
        Submission("alice", CLASS, {TOY: filled(ALICE)}),
        Submission('=HYPERLINK("x")<b>bob</b>', CLASS, {TOY: filled(BOB)}),
        Submission("carol", CLASS, {TOY: filled(CAROL)}),
        Submission("dave", CLASS, {TOY: HANDOUT + DAVE_TAIL}),
    ]
    public = [Submission("repo", PUBLIC, {TOY: filled(CAROL)})]
    decided = (Decision("alice", '=HYPERLINK("x")<b>bob</b>', "confirmed", "=told them <b>twice</b>", ("", ""), 2),)
    return compare(
        subs, public, template, Settings(threshold=0.5), notes=("carol.zip: a note <i>escaped</i>",), decided=decided
    )


def check_golden(path: Path, text: str):
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    assert path.exists(), f"{path}: no golden file; run UPDATE_GOLDEN=1 pytest {__file__}"
    assert text.encode("utf-8") == path.read_bytes(), (
        f"{path} differs from the writer's output; if intended, run UPDATE_GOLDEN=1 and review the diff"
    )


WRITERS = {
    "similarity.csv": report.csv_text,
    "index.html": report.html_text,
    "fingerprints.json": report.fingerprints_json,
    "clusters.csv": clusters_csv,
}


@pytest.mark.parametrize("filename", sorted(WRITERS))
def test_writer_matches_golden(analysis, filename):
    check_golden(GOLDEN / filename, WRITERS[filename](analysis))


def test_the_copied_loop_ranks_first_and_the_forced_answers_do_not(analysis):
    rows = list(csv.reader(io.StringIO(report.csv_text(analysis))))
    assert rows[1][:2] == ["carol", "repo"] and rows[1][4] == "public"  # the same file
    assert rows[2][:2] == ["alice", '\'=HYPERLINK("x")<b>bob</b>']  # formula neutralised
    assert rows[2][3].startswith("total ") and rows[2][5] == "yes"
    assert all(float(r[2]) < 0.5 for r in rows[3:])


def test_student_text_is_escaped_in_the_page(analysis):
    page = report.html_text(analysis)
    assert "<script" not in page
    assert "&lt;b&gt;bob&lt;/b&gt;" in page and "<b>bob</b>" not in page
    assert "&lt;i&gt;escaped&lt;/i&gt;" in page
    assert '<span class="decision confirmed">confirmed</span>: =told them &lt;b&gt;twice&lt;/b&gt;' in page
    assert (
        "review: dave: toy.py: line 26 binds names in a way only running it would tell: `globals()[&quot;&lt;/ul&gt;"
        in page
    )


def test_the_rebound_stub_is_flagged_and_scored_on_what_runs(analysis):
    assert [f.reason.split(" (")[0] for f in analysis.flags if f.name == "dave"][:1] == ["total runs _mine"]
    assert analysis.fingerprinted["dave"].blocks["total"].block.how == "rebinding"


def test_the_page_shows_the_comment_escaped_in_the_block(analysis):
    page = report.html_text(analysis)
    # the lines are shown as written, comment included, escaped
    assert "&lt;/code&gt;&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in page.replace("&quot;", '"')
