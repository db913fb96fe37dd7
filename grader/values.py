"""Decode what a worker left in its out_dir into plain values.

For each case function the worker writes `<module>__<function>.json`:
`{"status": "ok", "value": ...}` with arrays as `{"npy": "<file>.npy"}`
references, or `{"status": "error", "error": ..., "where": ...}`. Nothing in
it is trusted: sizes are capped, names checked, and anything malformed
becomes a one-line problem for that case only.
"""
import re
from dataclasses import dataclass
from pathlib import Path

from grader.sandbox_io import read_json_safe, read_npy_safe

MAX_JSON_BYTES = 1 << 20        # structure only: arrays live in .npy files
MAX_NPY_BYTES = 64 << 20        # one array; full-MNIST weights are 0.3 MB
MAX_TEXT = 300                   # characters of worker-supplied error text kept
NPY_NAME = re.compile(r"^[A-Za-z0-9_]+\.npy$")


@dataclass(frozen=True)
class Outcome:
    """A case function's value, or why there is none."""
    ok: bool
    value: object = None
    problem: str = ""            # for students: what went wrong


def stem(fn):
    return fn.replace(".", "__")


def _clean(text):
    """Worker text is untrusted: printable, single line, capped."""
    text = "".join(ch if ch.isprintable() else " " for ch in str(text))
    return text[:MAX_TEXT]


def _decode(node, out_dir):
    if isinstance(node, dict):
        if set(node) == {"npy"} and isinstance(node["npy"], str):
            if not NPY_NAME.match(node["npy"]):
                raise ValueError(f"bad array file name {node['npy'][:40]!r}")
            return read_npy_safe(out_dir / node["npy"], MAX_NPY_BYTES)
        return {str(k): _decode(v, out_dir) for k, v in node.items()}
    if isinstance(node, list):
        return [_decode(v, out_dir) for v in node]
    if node is None or isinstance(node, str):
        raise ValueError(f"unexpected {type(node).__name__} in a value")
    return node


def read_outcome(out_dir: Path, fn: str) -> Outcome:
    path = Path(out_dir) / (stem(fn) + ".json")
    if not path.exists():
        return Outcome(False, problem="no value: the worker stopped before this case reported")
    try:
        record = read_json_safe(path, MAX_JSON_BYTES)
        if not isinstance(record, dict) or record.get("status") not in ("ok", "error"):
            raise ValueError("not a case record")
        if record["status"] == "error":
            where = f" (at {_clean(record.get('where'))})" if record.get("where") else ""
            return Outcome(False, problem=_clean(record.get("error", "error")) + where)
        return Outcome(True, value=_decode(record.get("value"), Path(out_dir)))
    except (ValueError, RecursionError) as exc:
        return Outcome(False, problem=f"unreadable value: {_clean(exc)}")
