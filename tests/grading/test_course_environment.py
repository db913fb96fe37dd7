"""Student code is judged in the environment the course promised: its
numpy (hw1: 1.26, as in the course's 2023-2024 environment, not the
grader's numpy 2), its packages (tqdm) and the whole standard library
(assignment.toml's [environment]; grader/sandbox/env.py).

Each submission is the reference with one realistic edit (catalogue/build.py).
"""
import numpy as np
import pytest

from grader.grading.orchestrate import grade_submission

from catalogue import build
from catalogue.build import AUTOGRAD, SIMPLE_ML, Replace

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]

REFERENCE_LINE = "    X = images.reshape(images.shape[0], -1).astype(np.float32) / np.float32(255)\n"
# parse_mnist's last line as students wrote it for numpy 1, and what the
# grader's own numpy 2 would make of it.
NUMPY1_STYLE = {
    # numpy 1: copy=False means "copy only if needed"; numpy 2 raises when a
    # copy is needed (here, uint8 to float32): Q5 would lose its parse cases.
    "copy_false": ("X = np.array(images.reshape(images.shape[0], -1), dtype=np.float32, copy=False) "
                   "/ np.float32(255)", "ValueError"),
    # numpy 1's value-based casting: a float64 scalar keeps a float32 array
    # float32; under NEP 50 (numpy 2) X becomes float64, and the scored
    # "X of dtype np.float32" case fails.
    "float64_scalar": ("X = images.reshape(images.shape[0], -1).astype(np.float32) / np.float64(255)", "float64"),
}


def graded(tmp_path, *edits):
    sources = build.apply_edits(build.reference_sources(), edits)
    rep = grade_submission(build.write_submission(tmp_path / "submission", sources))
    return rep, [f"{c.number} {c.name}: {c.output}" for c in rep.cases if not c.passed and not c.advisory]


def under_the_graders_numpy(line: str) -> str:
    """What `line` makes in this process (the grader's numpy): X's dtype, or the error's name."""
    scope = {"np": np, "images": np.arange(6, dtype=np.uint8).reshape(2, 3)}
    try:
        exec(line, scope)
    except ValueError:
        return "ValueError"
    return str(scope["X"].dtype)


@pytest.mark.parametrize("style", NUMPY1_STYLE)
def test_code_written_for_numpy_1_gets_the_numpy_1_verdict(tmp_path, style):
    line, under_numpy_2 = NUMPY1_STYLE[style]
    rep, failed = graded(tmp_path, Replace(SIMPLE_ML, REFERENCE_LINE, f"    {line}\n"))
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
        Replace(SIMPLE_ML, "    for start in range(0, X.shape[0], batch):\n",
                "    for start in tqdm(range(0, X.shape[0], batch), desc='epoch'):\n"))
    assert rep.score == 100, failed + list(rep.notes)
