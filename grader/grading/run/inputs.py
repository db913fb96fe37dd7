"""The scored inputs, drawn here, on the trusted side (never in a worker).

No secret reaches a process that runs student code: a worker gets the
arrays its cases use, never the seed they come from. The cases package
asks for its inputs call by call (`rng(number).randn(3, 4)`, its util.py);
the reference's run on the public inputs records those calls (the worker's
draws.json, kept with the public expected answers); for a grading key this
module replays each recorded call on a generator of its own, keyed by
HMAC-SHA256(key, number), and writes the arrays to one `.npz` file, private
to the grader's user until a run's runner folder gets a copy
(worker_dirs.build_runner). A worker whose cases ask for a call not recorded
gets the public stream's value (it can only be a wrong one).

Keys (derivation() says which one graded, for provenance; never the secret):
- course(seed): HMAC(seed, "course"): the inputs of every submission graded
  with that seed (the machine's or a batch's, seeds.py);
- submission(seed, digest): HMAC(seed, "submission" + the sha256 of the
  submission's files): one submission's own inputs, so what leaks from one
  run says nothing about another submission's, while a regrade of the same
  files draws the same ones.
"""

import hashlib
import hmac
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from grader.sandbox import read_json_safe
from grader.shipped.cases.util import call_key, packed

DRAWS = "draws.json"  # the worker's record of the calls (worker.DRAWS)
MAX_DRAWS_BYTES = 4 << 20
COURSE, SUBMISSION = "course", "submission"


@dataclass(frozen=True)
class Drawn:
    """One grading's drawn inputs: where the arrays are (private to the
    grader's user), and how they were keyed (never the key)."""

    path: Path
    key_id: str  # key_id(key): names the expected answers computed on them
    derivation: str  # derivation(...): what provenance records
    own: tuple = ()  # the questions whose inputs this key drew (the rest: the course's); (): all


class InputsError(RuntimeError):
    """The recorded draws cannot be read: rebuild the public expected answers."""


def key(seed: str, scope: str, digest: str = "") -> bytes:
    """The key one grading's inputs come from (see the module doc)."""
    return hmac.new(seed.encode(), f"needle-grader inputs\0{scope}\0{digest}".encode(), hashlib.sha256).digest()


def key_id(grading_key: bytes) -> str:
    """A name for a key that says nothing about it (cache files, provenance)."""
    return hashlib.sha256(b"needle-grader inputs id\0" + grading_key).hexdigest()[:12]


def derivation(seed_id: str, scope: str, digest: str = "") -> str:
    """How a grading's inputs were derived, in words a record may keep."""
    if scope == SUBMISSION:
        return f"HMAC-SHA256(course secret {seed_id}, submission files sha256 {digest[:12]})"
    return f"HMAC-SHA256(course secret {seed_id}, course)"


def _tuples(node):
    return tuple(_tuples(v) for v in node) if isinstance(node, list) else node


def read_requests(folders) -> list:
    """[(number, calls), ...] from the draws.json in each of `folders`
    (the reference's raw worker output on the public inputs). A worker whose
    cases package records no draws (another assignment's) writes none: none to make."""
    requests = set()
    for folder in folders:
        path = Path(folder) / DRAWS
        if not path.exists() and not path.is_symlink():
            continue
        try:
            record = read_json_safe(path, MAX_DRAWS_BYTES)
            requests.update((int(number), _tuples(calls)) for number, calls in record["requests"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise InputsError(
                f"{path}: the reference's record of its draws is unreadable ({exc}); delete "
                "the expected-answer cache folder holding it and grade again"
            ) from None
    return sorted(requests, key=repr)


def split(by_question: dict, course_questions) -> tuple:
    """(the course's requests, the rest) of {question: its worker's requests}:
    a number is the course's when a course question's cases drew it and some
    other question's worker did not (the draws every worker makes are the
    case tables', made at import)."""
    everywhere = set.intersection(*({n for n, _ in r} for r in by_question.values())) if by_question else set()
    course = {n for q in course_questions for n, _ in by_question.get(q, ())} - everywhere
    requests = sorted({r for rs in by_question.values() for r in rs}, key=repr)
    return [r for r in requests if r[0] in course], [r for r in requests if r[0] not in course]


def _generator(grading_key: bytes, number: int) -> np.random.RandomState:
    digest = hmac.new(grading_key, f"input {number}".encode(), hashlib.sha256).digest()
    return np.random.RandomState(np.frombuffer(digest[:16], dtype=np.uint32))


def draw(grading_key: bytes, requests) -> dict:
    """{array name: array} for every recorded call, replayed on the key's
    generator of its number, named as the worker looks it up (call_key)."""
    arrays = {}
    for number, calls in requests:
        generator = _generator(grading_key, number)
        for k, (method, args, kwargs) in enumerate(calls):
            value = getattr(generator, method)(*args, **dict(kwargs))
            arrays[call_key(number, calls[: k + 1])] = np.asarray(value)
    return arrays


def write(arrays: dict, dest: Path) -> Path:
    """The arrays as one .npz at `dest` (mode 0600), packed as the worker
    reads them (the cases package's util.packed), written atomically."""
    fd, tmp = tempfile.mkstemp(prefix=".inputs-", suffix=".npz", dir=dest.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **packed(arrays))
        os.replace(tmp, dest)
    except BaseException:
        os.unlink(tmp)
        raise
    return dest


def requests_json(requests) -> str:
    """The requests as the worker writes them (for tests and tools)."""
    return json.dumps({"requests": [[n, list(c)] for n, c in requests]})
