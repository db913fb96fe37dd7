"""index.html of grader similarity in a real headless Chromium: it loads
nothing but itself, ranks the planted copy first, links each top pair to
its side-by-side view, marks the shared lines on both sides of a block,
and shows a hostile submission's name and code as text (no script runs).

A screenshot is kept in tests/artifacts/ (git-ignored) for a person to look at.
"""

import subprocess
import sys
from pathlib import Path

import pytest
import similarity_class as sc

from grader import HANDOUT, ROOT
from grader.core.assignment import Assignment
from grader.similarity.template import load_template

pytestmark = [pytest.mark.browser]
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
HOSTILE = "<img src=x onerror=alert(1)>"
BREAKOUT = '"</code></pre><script>alert(2)</script>"'


@pytest.fixture(scope="module")
def page_file(tmp_path_factory):
    root = tmp_path_factory.mktemp("similarity-page")
    known = {f.rel: f.known for f in load_template(HANDOUT, Assignment.hw1().student_files).files}
    people = sc.make_class(10, seed=7)
    hostile = dict(people["student003"])
    hostile[sc.build.SIMPLE_ML] = hostile[sc.build.SIMPLE_ML].replace(
        "### END YOUR SOLUTION", f"    note = {BREAKOUT}\n    ### END YOUR SOLUTION", 1
    )
    people[HOSTILE] = hostile
    people["copy_of_student001"] = sc.plant_copy(people["student001"], known)
    sc.write(root / "class", people)
    result = subprocess.run(
        [sys.executable, "-m", "grader", "similarity", str(root / "class"), "--out", str(root / "out")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return root / "out" / "index.html"


@pytest.fixture
def page(browser, page_file):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    pg.requests, pg.dialogs, pg.errors = [], [], []
    pg.on("request", lambda r: pg.requests.append(r.url))
    pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))
    pg.on("console", lambda m: pg.errors.append(m.text) if m.type == "error" else None)
    pg.goto(page_file.as_uri())
    yield pg
    assert all(url.startswith("file://") for url in pg.requests), pg.requests
    assert pg.dialogs == [] and pg.errors == []
    context.close()


def test_the_planted_copies_are_first_and_flagged(page):
    rows = page.locator("#pairs tbody tr")
    top = []
    for k in range(2):
        cells = rows.nth(k).locator("td").all_inner_texts()
        top.append(frozenset(cells[1:3]))
        assert cells[3] == "class" and float(cells[4]) >= 0.9 and cells[6] == "review"
        assert "flagged" in rows.nth(k).get_attribute("class")
    assert set(top) == {frozenset({"student001", "copy_of_student001"}), frozenset({"student003", HOSTILE})}
    assert rows.nth(0).locator("td").all_inner_texts()[1:3] == ["copy_of_student001", "student001"]


def test_its_side_by_side_view_marks_the_shared_lines_per_block(page):
    page.locator("#pairs tbody tr").first.locator("a").click()
    assert page.url.endswith("#pair-1")
    section = page.locator("section#pair-1")
    assert section.is_visible()
    block = section.locator('div.block[data-block="nn_epoch"]')
    sides = block.locator(".side")
    assert sides.count() == 2
    for k in range(2):
        marked = sides.nth(k).locator("mark.match")
        assert marked.count() >= 3
        assert marked.first.is_visible()
    # the copy was laid out again (two-space indents): the marked lines differ as text, match as code
    left, right = (sides.nth(k).locator("mark.match").all_inner_texts() for k in range(2))
    assert left != right
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "similarity.png"), full_page=False)


def test_a_hostile_name_and_code_show_as_text(page):
    assert page.locator("img").count() == 0 and page.locator("script").count() == 0
    names = page.locator("#pairs tbody td").all_inner_texts()
    assert HOSTILE in names
    assert BREAKOUT in page.locator("body").inner_text()  # its block, shown beside student003's
