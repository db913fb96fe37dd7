"""A batch's setup, alongside its first submissions (issue 37).

What every submission of a batch may need besides its own files: the
reference's answers on the course's inputs (Q5/Q6's, and the base of the
time limits), the known bugs' values on them (the likely-cause step) and the
reference's values on the smaller inputs (the smallest-failing-input step).
All are cached on disk (grading/run/cache.py), keyed by the course secret,
the environment, the data, the reference and the cases: a batch, a regrade or
a single grade after the first pays nothing for them.

When some are missing, a thread of the batch's parent builds them --jobs
wide while the pool already grades: a submission builds its own inputs'
answers meanwhile and waits, on the cache's lock, only for what it needs and
is not built yet (a correct submission never needs the known bugs).
"""

import dataclasses
import threading

from grader.grading.explain.causes import store as causes_store
from grader.grading.explain.shrink import reference as shrink_reference
from grader.grading.run import expected


def build(config, width: int) -> None:
    """Build, in order of need, whatever of the setup is missing, `width` runs at once."""
    wide = dataclasses.replace(config, jobs=max(1, width))
    expected.expected_dir(wide)
    causes_store.prepare(wide)
    shrink_reference.prepare(wide)


class Setup(threading.Thread):
    """build(config, width) in a thread; finish() waits and re-raises what it raised."""

    def __init__(self, config, width: int, build_fn=build):
        super().__init__(name="batch-setup", daemon=True)
        self.config, self.width, self.build_fn = config, width, build_fn
        self.error = None

    def run(self):
        try:
            self.build_fn(self.config, self.width)
        except BaseException as exc:  # re-raised by finish(), in the batch's thread
            self.error = exc

    def finish(self) -> None:
        self.join()
        if self.error is not None:
            raise self.error


def start(config, width: int, build_fn=build) -> Setup:
    setup = Setup(config, width, build_fn)
    setup.start()
    return setup
