"""grader similarity on a synthetic class of 41 correct submissions (the
reference, three independent solutions, classmates built from correct
variants) and three public solutions, with three planted copies: two of
classmates (one keeping the solution markers, one with every comment
dropped), one of a public solution; each disguised (names renamed, comments
dropped, code laid out again, functions reordered) and some zipped. Run as
the instructor runs it: the command in a subprocess."""

import csv
import json
import random
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import similarity_class as sc

from grader import HANDOUT, ROOT
from grader.core.assignment import Assignment
from grader.similarity.scoring import THRESHOLD
from grader.similarity.template import load_template

PLANTED = {
    frozenset({"copy_marked", "student005"}): "class",
    frozenset({"copy_unmarked", "student012"}): "class",
    frozenset({"copy_public", "repo_alpha"}): "public",
}
INDEPENDENT = ("indep_reference", "indep_terse", "indep_verbose", "indep_methods")


def known_names():
    template = load_template(HANDOUT, Assignment.hw1().student_files)
    return {f.rel: f.known for f in template.files}


def zip_folder(folder: Path) -> Path:
    """`folder` as `folder.zip` (the folder removed), as students upload it."""
    target = folder.with_suffix(".zip")
    with zipfile.ZipFile(target, "w") as archive:
        for path in sorted(folder.rglob("*")):
            archive.write(path, path.relative_to(folder.parent).as_posix())
    shutil.rmtree(folder)
    return target


def run_similarity(*args):
    return subprocess.run(
        [sys.executable, "-m", "grader", "similarity", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def read_csv(path: Path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("similarity")
    known = known_names()
    people = sc.make_class(38, seed=25)
    rng, pool = random.Random(99), sc.variants()
    public = {name: sc.classmate(rng, pool) for name in ("repo_alpha", "repo_beta", "repo_gamma")}
    people["copy_marked"] = sc.plant_copy(people["student005"], known)
    people["copy_unmarked"] = sc.plant_copy(people["student012"], known, keep_markers=False)
    people["copy_public"] = sc.plant_copy(public["repo_alpha"], known)
    sc.write(root / "class", people)
    sc.write(root / "public", public)
    for name in ("copy_marked", "student012", "student020", "indep_terse"):
        zip_folder(root / "class" / name)
    result = run_similarity(root / "class", "--against", root / "public", "--out", root / "out")
    assert result.returncode == 0, result.stderr
    return root, people, public, result


def test_planted_copies_rank_at_the_top_and_are_flagged(graded):
    root, _, _, result = graded
    rows = read_csv(root / "out" / "similarity.csv")
    top = {frozenset({r["submission"], r["other"]}): r for r in rows[:3]}
    assert set(top) == set(PLANTED)
    for pair, kind in PLANTED.items():
        assert top[pair]["kind"] == kind and top[pair]["flagged"] == "yes"
        assert float(top[pair]["similarity"]) >= 0.9
    assert "nn_epoch" in top[frozenset({"copy_marked", "student005"})]["shared blocks"]
    assert "most similar" in result.stdout


def test_independent_solutions_are_not_flagged(graded):
    root, *_ = graded
    rows = read_csv(root / "out" / "similarity.csv")
    flagged = [r for r in rows if r["flagged"] == "yes"]
    assert {frozenset({r["submission"], r["other"]}) for r in flagged} == set(PLANTED)
    fourth = float(rows[3]["similarity"])
    assert fourth < THRESHOLD, "the most similar independent pair"
    among = [r for r in rows if r["submission"] in INDEPENDENT and r["other"] in INDEPENDENT]
    assert len(among) == 6 and max(float(r["similarity"]) for r in among) < 0.5


def test_every_pair_once_ranked_in_range(graded):
    root, people, public, _ = graded
    rows = read_csv(root / "out" / "similarity.csv")
    n, p = len(people), len(public)
    assert len(rows) == n * (n - 1) // 2 + n * p
    assert len({frozenset({r["submission"], r["other"]}) for r in rows}) == len(rows)
    values = [float(r["similarity"]) for r in rows]
    assert values == sorted(values, reverse=True) and all(0 <= v <= 1 for v in values)
    assert {r["kind"] for r in rows if r["other"].startswith("repo_")} == {"public"}
    assert list(rows[0]) == [
        "submission",
        "other",
        "similarity",
        "shared blocks",
        "kind",
        "flagged",
        "decision",
        "note",
        "submission_code",
        "other_code",
    ]


def test_damaged_markers_are_matched_by_name_and_said(graded):
    _, _, _, result = graded
    assert (
        "copy_unmarked: python/needle/ops/ops_mathematic.py: MatMul.gradient: solution markers missing; "
        "matched by function name"
    ) in result.stderr


def test_fingerprints_file_says_how_they_were_taken(graded):
    root, people, public, _ = graded
    document = json.loads((root / "out" / "fingerprints.json").read_text())
    assert (document["hash"], document["k"], document["w"], document["normalisation"]) == (
        "blake2b-64",
        5,
        4,
        "tokens-v1",
    )
    names = {s["name"] for s in document["submissions"]}
    assert names == set(people) | set(public)
    reference = next(s for s in document["submissions"] if s["name"] == "indep_reference")
    assert reference["blocks"]["nn_epoch"]["found_by"] == "markers"
    assert all(len(h) == 16 for h, _, _ in reference["blocks"]["nn_epoch"]["prints"])


def test_bad_submissions_are_named_and_the_others_still_compared(tmp_path):
    people = sc.make_class(6, seed=3)
    del people["indep_methods"], people["indep_verbose"]
    broken = dict(people["student000"])
    ops = "python/needle/ops/ops_mathematic.py"
    broken[ops] = broken[ops].replace("class PowerScalar", 'BROKEN = """never closed\nclass PowerScalar', 1)
    people["unreadable_ops"] = broken
    sc.write(tmp_path / "class", people)
    (tmp_path / "class" / "not_a_zip.zip").write_bytes(b"this is not a zip file")
    partial = tmp_path / "class" / "only_autograd" / "python" / "needle"
    partial.mkdir(parents=True)
    (partial / "autograd.py").write_text(people["student001"]["python/needle/autograd.py"])
    (tmp_path / "class" / "no_files").mkdir()
    (tmp_path / "class" / "no_files" / "notes.txt").write_text("nothing here\n")
    result = run_similarity(tmp_path / "class", "--out", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert any(
        ln.startswith("not_a_zip: ") and "not a readable zip file" in ln and ln.endswith("left out") for ln in lines
    ), result.stderr
    assert any(ln.startswith("no_files: ") and "none of" in ln for ln in lines), result.stderr
    assert any(ln.startswith(f"unreadable_ops: {ops}:") and "cannot be read as Python" in ln for ln in lines), (
        result.stderr
    )
    assert "only_autograd: apps/simple_ml.py not found in the submission: its blocks are not compared" in lines
    rows = read_csv(tmp_path / "out" / "similarity.csv")
    names = {n for r in rows for n in (r["submission"], r["other"])}
    assert names == set(people) | {"only_autograd"}  # the unreadable ops file's other files still count
    copied = next(r for r in rows if {r["submission"], r["other"]} == {"only_autograd", "student001"})
    assert copied["shared blocks"].startswith("compute_gradient_of_variables")
    pair = next(r for r in rows if {r["submission"], r["other"]} == {"unreadable_ops", "student000"})
    assert "nn_epoch" in pair["shared blocks"] and "MatMul.gradient" not in pair["shared blocks"]


@pytest.mark.parametrize(
    "args, message",
    [
        (("missing", "--out", "out"), "grader similarity: missing: not a folder"),
        (
            ("class", "--out", "out", "--threshold", "1.5"),
            "grader similarity: --threshold 1.5: use a number above 0 and at most 1",
        ),
        (("class", "--against", "nowhere", "--out", "out"), "grader similarity: --against nowhere: not a folder"),
        (("class", "--out", "class"), "grader similarity: --out class: is an input folder"),
        (("class", "--out", "out", "--assignment", "hw9"), "grader similarity: --assignment hw9: no such folder"),
    ],
)
def test_usage_errors_say_what_and_write_nothing(tmp_path, args, message):
    (tmp_path / "class").mkdir()
    result = subprocess.run(
        [sys.executable, "-m", "grader", "similarity", *args], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2 and result.stderr.startswith(message) and len(result.stderr.splitlines()) == 1
    assert not (tmp_path / "out").exists() and not (tmp_path / "class" / "similarity.csv").exists()


def test_nothing_to_compare_exits_1_without_output(tmp_path):
    sc.write(tmp_path / "class", {"alone": sc.independent("terse")})
    result = run_similarity(tmp_path / "class", "--out", tmp_path / "out")
    assert result.returncode == 1 and "nothing written" in result.stderr
    assert not (tmp_path / "out").exists()
