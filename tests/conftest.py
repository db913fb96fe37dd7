"""Shared fixtures. The reference needle is imported in-process (it is the
trusted instructor solution); student code is only ever run in subprocesses."""

import os
import sys

import pytest

from grader import DATA, REFERENCE
from grader.core import manifest as handout_manifest

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _import_reference():
    for sub in ("python", "apps"):
        path = str(REFERENCE / sub)
        if path not in sys.path:
            sys.path.insert(0, path)
    import needle
    import simple_ml

    if not needle.__file__.startswith(str(REFERENCE)):
        raise RuntimeError(f"imported needle from {needle.__file__}, expected the reference")
    return needle, simple_ml


@pytest.fixture(scope="session")
def ndl():
    return _import_reference()[0]


@pytest.fixture(scope="session")
def simple_ml():
    return _import_reference()[1]


@pytest.fixture(scope="session")
def mnist_train(simple_ml):
    return simple_ml.parse_mnist(str(DATA / "train-images-idx3-ubyte.gz"), str(DATA / "train-labels-idx1-ubyte.gz"))


@pytest.fixture
def stub_client(tmp_path, monkeypatch):
    """A stand-in for grader/shipped/mugrade.py, so these tests do not depend on it."""
    folder = tmp_path / "grader-files"
    folder.mkdir()
    (folder / "mugrade.py").write_text("def submit(value):\n    pass\n")
    monkeypatch.setattr(handout_manifest, "grader_dir", lambda: folder)
    return folder


CHROMIUM = "/usr/bin/chromium"  # Debian's (tools/system-deps.sh): Playwright downloads no browser here
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@pytest.fixture(scope="module")
def browser():
    """One headless chromium per test module, driven by Playwright."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="session")
def reference_copies():
    """The reference's git-ignored copies (the client, the public cases), as
    `make handout` writes them: tests that run the reference as an
    instructor does (its notebook, its own tests) need them."""
    import fcntl

    from grader.core.assignment import Assignment
    from grader.handout.commands import reference_copies as write

    assignment = Assignment.hw1()
    lock = assignment.reference.parent / ".reference-copies.lock"  # xdist: one writer at a time
    with open(lock, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        write(assignment.reference, assignment)
    return assignment.reference
