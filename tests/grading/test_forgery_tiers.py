"""Forged values score nothing in any tier: the handout's shipped answers
replayed, and case code patched to pass central differences off as
gradients, graded by `grader grade` in bubblewrap and in the rlimit tier as
root without CAP_SYS_ADMIN (Docker's default, Gradescope's)."""

import json
import os
import subprocess
import sys

import pytest
from catalogue import build, canonical, hostile

import grader
from grader.core.assignment import Assignment

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]
NO_SYS_ADMIN = ["setpriv", "--bounding-set=-sys_admin", "--inh-caps=-sys_admin", "--"]
SETTINGS = {"bwrap": ([], "bwrap"), "rlimit without CAP_SYS_ADMIN": (NO_SYS_ADMIN, "rlimit")}
ENTRIES = {h.name: h for h in hostile.HOSTILE}


def _submission(dest, name):
    h = ENTRIES[name]
    subs = {
        "@TOKEN@": "forgery",
        "@ROOT@": str(grader.ROOT),
        "@CACHE@": "",
        "@SHIPPED@": hostile.shipped_answers(Assignment.hw1().handout),
    }
    sources = build.apply_edits(build.reference_sources(), canonical.BASE + tuple(h.edits(subs)))
    build.write_submission(dest, sources)
    return dest


def _grade(tmp_path, name, setting):
    prefix, tier = SETTINGS[setting]
    sub = _submission(tmp_path / "sub", name)
    out = tmp_path / "out"
    run = subprocess.run(
        [*prefix, sys.executable, "-m", "grader", "grade", str(sub), "--out", str(out), "--tier", tier],
        cwd=grader.ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "OPENBLAS_NUM_THREADS": "1"},
    )
    assert run.returncode == 0, run.stderr[-2000:]
    doc = json.loads((out / "results.json").read_text())
    assert doc["extra_data"]["sandbox_tier"] == tier
    return doc


@pytest.mark.parametrize("setting", sorted(SETTINGS))
def test_replayed_answers_score_0(tmp_path, setting):
    doc = _grade(tmp_path, "replay_shipped_answers", setting)
    assert doc["score"] == 0, [t["name"] for t in doc["tests"] if t["score"] > 0]


@pytest.mark.parametrize("setting", sorted(SETTINGS))
def test_forged_gradients_score_no_first_order_case(tmp_path, setting):
    doc = _grade(tmp_path, "forged_gradient_cases", setting)
    first_order = [
        t
        for t in doc["tests"]
        if t["name"].startswith("backward_") and not t["name"].startswith("backward_second_order")
    ]
    assert first_order and all(t["status"] == "failed" for t in first_order), [
        t["name"] for t in first_order if t["status"] != "failed"
    ]
    others = {k: v for k, v in doc["extra_data"]["questions"].items() if k != "backward"}
    assert all(v["score"] == v["max_score"] for v in others.values()), others
