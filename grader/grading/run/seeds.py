"""The secret seeds that draw the scored inputs (trusted side).

What is scored is never what ships: the cases draw every input from a
seed the worker receives at grading time (see the cases package's util).
The seed itself stays on the trusted side, in files only the grader's user
can read; results record only `seed_id(seed)`.

- `grader grade` uses the machine's seed, drawn once and kept in the
  expected-answer cache (so one machine computes the reference's answers
  once, and a Gradescope upload draws its own at setup);
- `grader grade-batch` and `grader regrade` use the same one, the course
  secret (issue 37: the reference's answers and the known bugs' values on the
  course's inputs are then computed once, not per batch); a batch graded by an
  earlier grader kept a seed of its own in OUTDIR, which it keeps using;
- PUBLIC (the empty seed) means the handout's fixed inputs: what the
  handout's expected values and the mugrade submit cases use.
"""

import hashlib
import os
import secrets
from pathlib import Path

PUBLIC = ""  # the fixed public inputs
SEED_FILE = "seed"  # the machine's seed, in the expected-answer cache
BATCH_SEED_FILE = ".grading-seed"  # a batch's seed, in its OUTDIR


class SeedError(RuntimeError):
    """A seed file cannot be read or trusted."""


def seed_id(seed: str) -> str:
    """What a result may say about its seed: a short hash (or "public")."""
    if seed == PUBLIC:
        return "public"
    return hashlib.sha256(b"needle-grader seed\0" + seed.encode()).hexdigest()[:12]


def stored_seed(path: Path) -> str:
    """The seed kept at `path`, drawn and written (mode 0600) if there is none."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return _read(path)
    with os.fdopen(fd, "w") as f:
        f.write(secrets.token_hex(16) + "\n")
        f.flush()
        os.fsync(f.fileno())
    return _read(path)


def _read(path: Path) -> str:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd) as f:
        if os.fstat(f.fileno()).st_mode & 0o077:
            raise SeedError(
                f"{path}: readable by others; the seed must stay secret: delete the file "
                "(a new seed is drawn) or chmod 600 it"
            )
        seed = f.read().strip()
    if len(seed) < 16 or not all(c in "0123456789abcdef" for c in seed):
        raise SeedError(f"{path}: not a seed written by the grader; delete it and a new one is drawn")
    return seed


def machine_seed(cache: Path) -> str:
    cache.mkdir(parents=True, exist_ok=True)
    return stored_seed(cache / SEED_FILE)


def batch_seed(out_root: Path, cache: Path) -> str:
    """A batch's seed: the one an earlier grader kept in its OUTDIR (resumed
    or regraded, it grades on the same inputs), else the course secret, the
    machine's (kept in the grader's private `cache`)."""
    own = out_root / BATCH_SEED_FILE
    if own.exists() or own.is_symlink():
        return _read(own)
    return machine_seed(cache)
