"""Student code is judged in the environment the course promised: its
numpy (hw1: 2.0.2 as Colab ships it, whatever the grader's own venv has;
an earlier cohort's 1.26 on request, --packages), its packages (tqdm) and
the whole standard library (assignment.toml's [environment];
grader/sandbox/env.py).

Each submission is the reference with one realistic edit (catalogue/build.py).
"""

import numpy as np
import pytest
from catalogue import build
from catalogue.build import AUTOGRAD, OPS, SIMPLE_ML, Replace

from grader.core.assignment import Assignment
from grader.grading.report.orchestrate import grade_submission
from grader.grading.run.config import RunConfig

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]

HW1 = Assignment.hw1()
EARLIER_COHORT = "numpy==1.26.4 tqdm==4.66.1"  # the course's 2023-2024 environment
NUMPY_1 = RunConfig(assignment=HW1.with_packages(EARLIER_COHORT))
# The power ops as 2025-26 students write them: numpy.pow exists from numpy 2.0 on.
WITH_NP_POW = (
    Replace(OPS, "        return array_api.power(a, self.scalar)\n", "        return array_api.pow(a, self.scalar)\n"),
    Replace(OPS, "        return array_api.power(a, b)\n", "        return array_api.pow(a, b)\n"),
)

REFERENCE_LINE = "    X = images.reshape(images.shape[0], -1).astype(np.float32) / np.float32(255)\n"
# parse_mnist's last line as students wrote it for numpy 1, and what the
# grader's own numpy 2 would make of it.
NUMPY1_STYLE = {
    # numpy 1: copy=False means "copy only if needed"; numpy 2 raises when a
    # copy is needed (here, uint8 to float32): Q5 would lose its parse cases.
    "copy_false": (
        "X = np.array(images.reshape(images.shape[0], -1), dtype=np.float32, copy=False) / np.float32(255)",
        "ValueError",
    ),
    # numpy 1's value-based casting: a float64 scalar keeps a float32 array
    # float32; under NEP 50 (numpy 2) X becomes float64, and the scored
    # "X of dtype np.float32" case fails.
    "float64_scalar": ("X = images.reshape(images.shape[0], -1).astype(np.float32) / np.float64(255)", "float64"),
}


def graded(tmp_path, *edits, config=RunConfig()):
    sources = build.apply_edits(build.reference_sources(), edits)
    rep = grade_submission(build.write_submission(tmp_path / "submission", sources), config)
    return rep, [f"{c.number} {c.name}: {c.output}" for c in rep.cases if not c.passed and not c.advisory]


def test_hw1_grades_in_numpy_2_by_default():
    declared = dict(p.split("==") for p in HW1.packages)
    assert declared["numpy"].split(".")[0] == "2" and HW1.packages_from == "assignment.toml"


def test_code_using_np_pow_scores_100_in_numpy_2_and_loses_the_power_cases_in_numpy_1(tmp_path):
    rep, failed = graded(tmp_path / "numpy2", *WITH_NP_POW)
    assert rep.score == 100, failed
    rep, failed = graded(tmp_path / "numpy1", *WITH_NP_POW, config=NUMPY_1)
    lost = [c.name for c in rep.cases if not c.passed and not c.advisory]
    assert failed and all("pow" in name for name in lost), failed
    assert any("power_scalar" in name for name in lost) and any("ewise_pow" in name for name in lost)
    assert "numpy==1.26.4" in rep.provenance.sandbox_packages and rep.provenance.packages_from == "--packages"


def under_the_graders_numpy(line: str) -> str:
    """What `line` makes in this process (the grader's numpy): X's dtype, or the error's name."""
    scope = {"np": np, "images": np.arange(6, dtype=np.uint8).reshape(2, 3)}
    try:
        exec(line, scope)
    except ValueError:
        return "ValueError"
    return str(scope["X"].dtype)


@pytest.mark.parametrize("style", NUMPY1_STYLE)
def test_code_written_for_numpy_1_gets_the_numpy_1_verdict_with_the_earlier_cohorts_packages(tmp_path, style):
    line, under_numpy_2 = NUMPY1_STYLE[style]
    rep, failed = graded(tmp_path, Replace(SIMPLE_ML, REFERENCE_LINE, f"    {line}\n"), config=NUMPY_1)
    assert rep.score == 100, failed
    if int(np.__version__.split(".")[0]) >= 2:  # the grader's own numpy would have judged otherwise
        assert under_the_graders_numpy(line) == under_numpy_2


def test_a_stray_tkinter_import_and_a_tqdm_progress_bar_score_100(tmp_path):
    """An IDE's auto-import (`from tkinter import NO`) and a progress bar over
    the batches, as the course's notebook environment allowed."""
    rep, failed = graded(
        tmp_path,
        Replace(AUTOGRAD, "import numpy\n", "import numpy\nfrom tkinter import NO\n"),
        Replace(SIMPLE_ML, "import numpy as np\n", "import numpy as np\nfrom tqdm import tqdm\n"),
        Replace(
            SIMPLE_ML,
            "    for start in range(0, X.shape[0], batch):\n",
            "    for start in tqdm(range(0, X.shape[0], batch), desc='epoch'):\n",
        ),
    )
    assert rep.score == 100, failed + list(rep.notes)
