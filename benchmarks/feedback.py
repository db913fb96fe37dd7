"""`make bench --only feedback`: what the `Likely cause:` and `Smallest
failing input:` steps cost, measured side by side in one run: the
reference (no failure: no extra run) and a known bug of the catalogue (a
BroadcastTo gradient not summed back) graded with the steps and without
them, interleaved, the caches built first (as for every submission after a
batch's first)."""

import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

from grader import REFERENCE
from grader.grading.explain.causes import catalogue
from grader.grading.explain.causes import store as causes_store
from grader.grading.explain.shrink import reference as shrink_reference
from grader.grading.report import orchestrate as grade
from grader.grading.run import expected
from grader.grading.run.config import RunConfig

TARGET = 0.20  # at most 20% more grading time for a submission with failures
MUTANT = "broadcast_identity"


@contextmanager
def steps_off():
    """Grading as before the steps: no diagnosis, no run on the course's
    inputs for it, no smallest-input run."""
    with (
        mock.patch.object(grade.causes, "diagnoser", lambda *a: None),
        mock.patch.object(grade.rerun, "runs_again", lambda own: False),
        mock.patch.object(grade.shrink, "lines", lambda *a, **k: {}),
    ):
        yield


def _seconds(submission, config, off: bool):
    start = time.perf_counter()
    if off:
        with steps_off():
            rep = grade.grade_submission(submission, config)
    else:
        rep = grade.grade_submission(submission, config)
    return time.perf_counter() - start, rep


def _mutant(folder: Path, config) -> Path:
    mutant = next(m for m in catalogue.MUTANTS if m.name == MUTANT)
    for rel, text in causes_store.mutant_files(config.assignment, mutant).items():
        (folder / "sub" / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / "sub" / rel).write_text(text)
    return folder / "sub"


def measure(rounds: int = 3) -> bool:
    config = expected.settled(RunConfig())
    expected.load(config)
    causes_store.prepare(config)
    shrink_reference.prepare(config)
    times = {key: [] for key in ("correct on", "correct off", "failing on", "failing off")}
    shrunk = 0
    with tempfile.TemporaryDirectory(prefix="bench-feedback-") as tmp:
        failing = _mutant(Path(tmp), config)
        for _ in range(max(1, rounds)):  # interleaved, so drifting load weighs on all alike
            for name, submission in (("correct", REFERENCE), ("failing", failing)):
                for mode in ("on", "off"):
                    seconds, rep = _seconds(submission, config, mode == "off")
                    times[f"{name} {mode}"].append(seconds)
                    if name == "failing" and mode == "on":
                        shrunk = sum("Smallest failing input: " in c.output for c in rep.cases)
    # the fastest of the rounds: load on a shared machine only ever adds time
    m = {k: min(v) for k, v in times.items()}
    correct, failing_extra = m["correct on"] / m["correct off"] - 1, m["failing on"] / m["failing off"] - 1
    ok = failing_extra <= TARGET
    print(
        f"feedback steps (likely cause, smallest failing input), fastest of {rounds}: correct submission "
        f"{m['correct off']:.2f} s before, {m['correct on']:.2f} s after ({correct:+.1%}); with failures "
        f"({MUTANT}, {shrunk} cases shrunk) {m['failing off']:.2f} s before, {m['failing on']:.2f} s after "
        f"({failing_extra:+.1%}; target <= +{TARGET:.0%}) {'ok' if ok else 'MISSED'}"
    )
    return ok
