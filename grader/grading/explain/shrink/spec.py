"""The worker's spec file: the candidates to evaluate, as plain JSON.

    {"version": 1, "imports": ["needle"],
     "candidates": [{"id": "backward_log_s0", "description": "...", "kind": "grad1", "op": "log",
                     "inputs": [{"data": [2.0], "dtype": "float64"}], "out_grads": [...],
                     "kwargs": {"axes": [0]}}, ...]}

Validated before it is written (the worker trusts it): an id is a case
name's characters, arrays are small, kinds and keyword values are plain.
"""

import hashlib
import json
import re

import numpy as np

from grader.grading.explain.shrink.candidates import Candidate

VERSION = 1
FILE = "shrink_spec.json"  # the untrusted worker's SPEC (grader/shipped/worker.py)
MODE = "shrink"  # the worker's mode that reads it (its SHRINK)
KINDS = ("forward", "grad1", "grad2")
MAX_ENTRIES = 4096  # per array: candidates are small by construction
ID = re.compile(r"^[a-z0-9_]{1,120}$")
DTYPES = ("float32", "float64")


class SpecError(ValueError):
    """A spec the worker must not get; the message names the candidate and field."""


def _array(a) -> dict:
    return {"data": a.tolist(), "dtype": a.dtype.name}


def entry(candidate: Candidate, description: str) -> dict:
    return {
        "id": candidate.id,
        "description": description,
        "kind": candidate.kind,
        "op": candidate.op,
        "inputs": [_array(a) for a in candidate.arrays()],
        "out_grads": [_array(g) for g in candidate.out_grads()],
        "kwargs": {k: list(v) if isinstance(v, tuple) else v for k, v in candidate.kwargs},
    }


def document(candidates, descriptions: dict, imports) -> dict:
    """The spec of `candidates`; descriptions: case name -> its description
    (the worker's `where:` finds the student's function by it)."""
    doc = {
        "version": VERSION,
        "imports": list(imports),
        "candidates": [entry(c, descriptions[c.case]) for c in candidates],
    }
    validate(doc)
    return doc


def _check_array(doc, where):
    if not isinstance(doc, dict) or doc.get("dtype") not in DTYPES:
        raise SpecError(f"{where}: an array needs a dtype of {', '.join(DTYPES)}")
    try:
        array = np.array(doc["data"], dtype=np.float64)
    except (KeyError, TypeError, ValueError) as exc:
        raise SpecError(f"{where}: 'data' is not a nested list of numbers ({exc})") from None
    if array.size > MAX_ENTRIES or not np.all(np.isfinite(array)):
        raise SpecError(f"{where}: more than {MAX_ENTRIES} entries, or not finite")


def _plain(value):
    if value is None or type(value) in (int, float):
        return True
    return type(value) is list and all(type(v) is int for v in value)


def validate(doc) -> None:
    """Raise SpecError naming the first bad field."""
    if not isinstance(doc, dict) or doc.get("version") != VERSION:
        raise SpecError(f"shrink spec: 'version' must be {VERSION}")
    if not (isinstance(doc.get("imports"), list) and all(isinstance(m, str) for m in doc["imports"])):
        raise SpecError("shrink spec: 'imports' must be a list of module names")
    seen = set()
    for i, c in enumerate(doc.get("candidates", [])):
        where = f"shrink spec: candidate {i}"
        if not ID.match(str(c.get("id"))) or c["id"] in seen:
            raise SpecError(f"{where}: 'id' must be unique, [a-z0-9_]")
        seen.add(c["id"])
        if c.get("kind") not in KINDS or not isinstance(c.get("op"), str) or not c["op"].isidentifier():
            raise SpecError(f"{where} ({c['id']}): 'kind' must be one of {KINDS} and 'op' a name")
        for field in ("inputs", "out_grads"):
            for k, a in enumerate(c.get(field, [])):
                _check_array(a, f"{where} ({c['id']}): '{field}'[{k}]")
        if not all(isinstance(k, str) and _plain(v) for k, v in c.get("kwargs", {}).items()):
            raise SpecError(f"{where} ({c['id']}): 'kwargs' must map names to numbers or lists of ints")


def text(doc) -> str:
    return json.dumps(doc, sort_keys=True)


def key(doc) -> str:
    """Changes with any candidate, value or keyword."""
    return hashlib.sha256(text(doc).encode()).hexdigest()[:16]
