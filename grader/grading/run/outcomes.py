"""Decode what a worker left in its out_dir into plain values.

For each computing case the worker writes `<case>.json`:
`{"status": "ok", "value": ...}` with arrays as `{"npy": "<file>.npy"}`
references, or `{"status": "error", "error": ..., "where": ...}`; when the
library cannot be imported, one `import_error.json` of the second kind.
Nothing in it is trusted: sizes are capped per file and per worker (each
array file is read once however often it is referenced), names checked,
and anything malformed becomes a one-line problem for that case only.
"""

import re
from dataclasses import dataclass
from pathlib import Path

from grader.sandbox.io import read_json_safe, read_npy_safe

MAX_JSON_BYTES = 1 << 20  # structure only: arrays live in .npy files
MAX_NPY_BYTES = 64 << 20  # one array; full-MNIST weights are 0.3 MB
MAX_WORKER_BYTES = 128 << 20  # everything read from one worker's out_dir
MAX_TEXT = 300  # characters of worker-supplied error text kept
NPY_NAME = re.compile(r"^[A-Za-z0-9_]+\.npy$")
ERROR_TYPE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]{0,80}(?=:|$)")


@dataclass(frozen=True)
class Outcome:
    """A case function's value, or why there is none."""

    ok: bool
    value: object = None
    problem: str = ""  # for students: what went wrong
    error_type: str = ""  # the exception's class name, when the case's code raised one


MISSING = Outcome(False, problem="no value: the worker stopped before this case reported")


class Budget:
    """Bytes read from one worker's out_dir, capped; each array file read once."""

    def __init__(self, out_dir: Path, max_bytes: int = MAX_WORKER_BYTES):
        self.out_dir, self.left, self.arrays = Path(out_dir), max_bytes, {}

    def take(self, path: Path) -> int:
        """The byte cap for reading `path` now; raise when the budget is spent."""
        size = path.lstat().st_size if path.exists() else 0
        if size > self.left:
            raise ValueError(f"the worker's values exceed {MAX_WORKER_BYTES >> 20} MB in all")
        self.left -= size
        return size

    def json(self, name: str):
        path = self.out_dir / name
        self.take(path)
        return read_json_safe(path, MAX_JSON_BYTES)

    def npy(self, name: str):
        if name not in self.arrays:
            path = self.out_dir / name
            self.take(path)
            self.arrays[name] = read_npy_safe(path, MAX_NPY_BYTES)
        return self.arrays[name]


def _clean(text):
    """Worker text is untrusted: printable, single line, capped."""
    text = "".join(ch if ch.isprintable() else " " for ch in str(text))
    return text[:MAX_TEXT]


def _decode(node, budget: Budget):
    if isinstance(node, dict):
        if set(node) == {"npy"} and isinstance(node["npy"], str):
            if not NPY_NAME.match(node["npy"]):
                raise ValueError(f"bad array file name {node['npy'][:40]!r}")
            return budget.npy(node["npy"])
        return {str(k): _decode(v, budget) for k, v in node.items()}
    if isinstance(node, list):
        return [_decode(v, budget) for v in node]
    if node is None or isinstance(node, str):
        raise ValueError(f"unexpected {type(node).__name__} in a value")
    if isinstance(node, int) and not isinstance(node, bool) and abs(node) > 2**63:
        raise ValueError("an integer beyond 64 bits in a value")
    return node


def _problem(record) -> str:
    where = f" (at {_clean(record.get('where'))})" if record.get("where") else ""
    return _clean(record.get("error", "error")) + where


def read_outcome(budget: Budget, name: str) -> Outcome:
    """The value the worker stored for case `name`, or why there is none."""
    path = budget.out_dir / (name + ".json")
    if not path.exists():
        return MISSING
    try:
        record = budget.json(path.name)
        if not isinstance(record, dict) or record.get("status") not in ("ok", "error"):
            raise ValueError("not a case record")
        if record["status"] == "error":
            kind = ERROR_TYPE.match(_clean(record.get("error", "")))
            return Outcome(False, problem=_problem(record), error_type=kind.group(0) if kind else "Exception")
        return Outcome(True, value=_decode(record.get("value"), budget))
    except (ValueError, RecursionError, OSError) as exc:
        return Outcome(False, problem=f"unreadable value: {_clean(exc)}")


def read_import_error(budget: Budget) -> str:
    """Why the worker could not import the library ("" if it could)."""
    path = budget.out_dir / "import_error.json"
    if not path.exists():
        return ""
    try:
        record = budget.json(path.name)
        if isinstance(record, dict):
            return "importing the submission failed: " + _problem(record)
    except (ValueError, RecursionError, OSError) as exc:
        return f"importing the submission failed (unreadable record: {_clean(exc)})"
    return "importing the submission failed"
