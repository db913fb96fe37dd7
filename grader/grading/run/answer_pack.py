"""Outcomes of one cache folder, packed in two files: the reference's
answers, the known bugs' values (explain/causes/store.py) and the
reference's values on the smallest-input candidates (explain/shrink/reference.py).

A built folder keeps each worker's raw output (a JSON record per case and
an .npy file per array: about a thousand small files for the hw1
reference's answers, ten thousand for the known bugs'), which every
grading would otherwise read and check one by one again. Once the values
are built and checked, `write` packs the decoded values into NAME.json
(each case's outcome, arrays as indices) and NAME.bin (the arrays' bytes,
one after the other); `read` gives them back as the same Outcomes, in one
read of each file.

The folder is the grader's own and private, but `read` still checks what
it indexes: numeric dtypes only, every array within the blob.
"""

import json
from pathlib import Path

import numpy as np

from grader.grading.run.outcomes import Outcome
from grader.sandbox.io import NPY_KINDS

ANSWERS = "answers"  # the pack's name in a folder of the reference's answers


def write(outcomes: dict, folder: Path, name: str = ANSWERS) -> None:
    """Pack `outcomes` (case name -> Outcome) into `folder` as `name`."""
    arrays, chunks, offset = [], [], 0

    def encode(value):
        nonlocal offset
        if isinstance(value, np.ndarray):
            data = np.ascontiguousarray(value).tobytes()
            arrays.append([value.dtype.str, list(value.shape), offset, len(data)])
            chunks.append(data)
            offset += len(data)
            return {"a": len(arrays) - 1}
        if isinstance(value, dict):
            return {"d": {str(k): encode(v) for k, v in value.items()}}
        if isinstance(value, (list, tuple)):
            return [encode(v) for v in value]
        return value  # a JSON number or bool, as the worker's record had it

    cases = {
        name: {"ok": o.ok, "value": encode(o.value), "problem": o.problem, "error_type": o.error_type}
        for name, o in outcomes.items()
    }
    (Path(folder) / f"{name}.bin").write_bytes(b"".join(chunks))
    (Path(folder) / f"{name}.json").write_text(json.dumps({"arrays": arrays, "cases": cases}))


def read(folder: Path, name: str = ANSWERS) -> dict | None:
    """case name -> Outcome from the pack `name` in `folder`; None if it has
    none. A pack that does not hold together raises ValueError naming the folder."""
    folder = Path(folder)
    try:
        index = json.loads((folder / f"{name}.json").read_text())
        blob = bytearray((folder / f"{name}.bin").read_bytes())  # writable arrays, as read_npy_safe gives
    except FileNotFoundError:
        return None
    try:
        arrays = [_array(blob, *entry) for entry in index["arrays"]]

        def decode(node):
            if isinstance(node, dict):
                return arrays[node["a"]] if "a" in node else {k: decode(v) for k, v in node["d"].items()}
            if isinstance(node, list):
                return [decode(v) for v in node]
            return node

        return {
            name: Outcome(c["ok"], decode(c["value"]), c["problem"], c["error_type"])
            for name, c in index["cases"].items()
        }
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise ValueError(
            f"{folder}: its packed values ({name}) do not hold together ({exc}); delete the folder to rebuild it"
        ) from None


def read_built(folder: Path, name: str = ANSWERS, missing: str = "no packed answers") -> dict:
    """read(), for a folder built with its pack: none there raises
    ValueError naming the folder (`missing` says what is absent)."""
    pack = read(folder, name)
    if pack is None:
        raise ValueError(f"{folder}: {missing}; delete the folder to rebuild it")
    return pack


def _array(blob: bytearray, dtype: str, shape: list, offset: int, size: int) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype.hasobject or dtype.kind not in NPY_KINDS or dtype.fields is not None:
        raise ValueError(f"dtype {dtype} is not numeric")
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if not 0 <= offset <= offset + size <= len(blob) or count * dtype.itemsize != size:
        raise ValueError(f"an array of {shape} {dtype} at byte {offset} does not fit")
    return np.frombuffer(blob, dtype=dtype, count=count, offset=offset).reshape(shape)
