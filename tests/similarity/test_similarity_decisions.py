"""Decisions kept across runs (`--decisions FILE`): a dismissed pair stays
dismissed (not flagged, not clustered) while both sides' code is the code
it was dismissed on, and is flagged again, as `stale`, once either side
changes; a confirmed pair stays flagged with its note; a bad file stops the
command before anything is written."""

import csv
import subprocess
import sys

import pytest
import similarity_class as sc
from test_similarity_class import known_names, read_csv, run_similarity

from grader import ROOT
from grader.similarity.decisions import (
    CONFIRMED,
    DECISIONS_HEADER,
    DISMISSED,
    STALE,
    Decision,
    DecisionsError,
    apply,
    decisions_csv,
    parse_decisions,
    pinned,
)
from grader.similarity.scoring import Pair

A, B = "a" * 64, "b" * 64
CODES = {"alice": A, "bob": B, "carol": "c" * 64}


def flagged(a="alice", b="bob"):
    return Pair(a, b, "class", 0.9, True, (("nn_epoch", 1.0),))


def test_a_dismissal_holds_on_the_same_code_and_goes_stale_on_changed_code():
    dismissed = Decision("bob", "alice", DISMISSED, "same tutor", (B, A), 2)  # either order of the pair
    (pair,), notes = apply([flagged()], [dismissed], CODES)
    assert (pair.decision, pair.flagged, pair.note) == (DISMISSED, False, "same tutor") and notes == []
    (pair,), _ = apply([flagged()], [dismissed], {**CODES, "alice": "d" * 64})
    assert (pair.decision, pair.flagged) == (STALE, True) and pair.note == "dismissed on older code: same tutor"
    (pair,), _ = apply([flagged()], [Decision("alice", "bob", CONFIRMED, "admitted", (A, B), 2)], CODES)
    assert (pair.decision, pair.flagged) == (CONFIRMED, True)
    _, notes = apply([flagged()], [Decision("alice", "zed", DISMISSED, "", (A, A), 7)], CODES)
    assert notes == ["decision on line 7 (alice and zed): no such pair in this run; kept"]


def test_blank_codes_are_pinned_to_this_run_and_the_file_round_trips():
    text = "submission,other,decision,note\n'=evil,bob,dismissed,'- a note\n"
    decided = pinned(parse_decisions(text, "d.csv"), {"=evil": A, "bob": B})
    assert decided[0].codes == (A, B) and decided[0].submission == "=evil" and decided[0].note == "- a note"
    again = parse_decisions(decisions_csv(decided), "d.csv")
    assert [(d.submission, d.other, d.decision, d.note, d.codes) for d in again] == [
        ("=evil", "bob", DISMISSED, "- a note", (A, B))
    ]
    assert decisions_csv(()).splitlines() == [",".join(DECISIONS_HEADER)]


@pytest.mark.parametrize(
    "text, message",
    [
        ("submission,other,note\n", "d.csv:1: no column decision; the header must name"),
        (
            "submission,other,decision\nalice,bob,maybe\n",
            "d.csv:2: decision: 'maybe' is not one of confirmed, dismissed",
        ),
        ("submission,other,decision\nalice,alice,dismissed\n", "d.csv:2: submission, other: two different names"),
        (
            "submission,other,decision,submission_code\nalice,bob,dismissed,xyz\n",
            "d.csv:2: submission_code: not a sha256",
        ),
        (
            "submission,other,decision\nalice,bob,dismissed\nbob,alice,confirmed\n",
            "d.csv:3: bob and alice: decided already on line 2",
        ),
    ],
)
def test_a_bad_decisions_file_names_line_field_and_fix(text, message):
    with pytest.raises(DecisionsError) as error:
        parse_decisions(text, "d.csv")
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


def test_decisions_across_runs_of_the_command(tmp_path):
    people = sc.make_class(8, seed=4)
    people["copier"] = sc.plant_copy(people["student002"], known_names())
    sc.write(tmp_path / "class", people)
    decisions, out = tmp_path / "decisions.csv", tmp_path / "out"
    first = run_similarity(tmp_path / "class", "--out", out, "--decisions", decisions)
    assert first.returncode == 0, first.stderr
    assert decisions.read_text().splitlines() == [",".join(DECISIONS_HEADER)]  # created, to be filled in
    row = next(r for r in read_csv(out / "similarity.csv") if {r["submission"], r["other"]} == {"copier", "student002"})
    assert row["flagged"] == "yes"
    with open(decisions, "a", newline="") as f:  # the instructor copies the row and decides
        csv.writer(f).writerow(
            [
                row["submission"],
                row["other"],
                "dismissed",
                "pair project, allowed",
                row["submission_code"],
                row["other_code"],
            ]
        )
    second = run_similarity(tmp_path / "class", "--out", out, "--decisions", decisions)
    row = next(r for r in read_csv(out / "similarity.csv") if {r["submission"], r["other"]} == {"copier", "student002"})
    assert (row["flagged"], row["decision"], row["note"]) == ("no", "dismissed", "pair project, allowed")
    assert "1 dismissed, 0 decided on older code" in second.stdout
    assert read_csv(out / "clusters.csv") == []
    assert (
        '<span class="decision dismissed">dismissed</span>: pair project, allowed' in (out / "index.html").read_text()
    )
    ml = tmp_path / "class" / "copier" / "apps" / "simple_ml.py"
    ml.write_text(ml.read_text() + "\n\ndef _more(x):\n    return [x * k for k in range(3)]\n")
    third = run_similarity(tmp_path / "class", "--out", out, "--decisions", decisions)
    row = next(r for r in read_csv(out / "similarity.csv") if {r["submission"], r["other"]} == {"copier", "student002"})
    assert (row["flagged"], row["decision"]) == (
        "yes",
        "stale",
    ) and "0 dismissed, 1 decided on older code" in third.stdout
    assert len(read_csv(out / "clusters.csv")) == 2


def test_a_bad_decisions_file_stops_the_command_before_any_output(tmp_path):
    sc.write(tmp_path / "class", sc.make_class(5, seed=1))
    (tmp_path / "d.csv").write_text("submission,other,decision\nalice,bob,perhaps\n")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            "similarity",
            tmp_path / "class",
            "--out",
            tmp_path / "out",
            "--decisions",
            tmp_path / "d.csv",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith(f"grader similarity: --decisions {tmp_path / 'd.csv'}:2: decision: 'perhaps'")
    assert not (tmp_path / "out").exists()
    assert (tmp_path / "d.csv").read_text() == "submission,other,decision\nalice,bob,perhaps\n"
