"""Reading what a worker left in out_dir, without trusting any of it.

The worker controls every byte of out_dir: a file may be a symlink to the
answer cache, a FIFO that blocks forever, a pickle, or an .npy header that
promises a terabyte. Each reader opens without following links and without
blocking, requires a plain file within the size cap, and raises ValueError
with a one-line reason otherwise.
"""

from __future__ import annotations

import io
import json
import os
import stat
from pathlib import Path

import numpy as np

# dtype kinds a worker may return: bool, signed, unsigned, float, complex.
NPY_KINDS = "biufc"


def _read_capped(path: Path, max_bytes: int) -> bytes:
    """The bytes of a regular, single-link file no larger than max_bytes."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise ValueError(f"{path.name}: cannot open ({exc.strerror}; a symlink is refused)") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"{path.name}: not a regular file")
        if st.st_nlink != 1:
            raise ValueError(f"{path.name}: has {st.st_nlink} hard links; refused")
        if st.st_size > max_bytes:
            raise ValueError(f"{path.name}: {st.st_size} bytes is over the {max_bytes}-byte cap")
        data = os.read(fd, max_bytes + 1)
        if len(data) > max_bytes:
            raise ValueError(f"{path.name}: over the {max_bytes}-byte cap")
        return data
    finally:
        os.close(fd)


def read_npy_safe(path: Path, max_bytes: int) -> np.ndarray:
    """Load a plain numeric .npy (no pickle, no object dtype) of at most max_bytes."""
    path = Path(path)
    data = _read_capped(path, max_bytes)
    buf = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(buf)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(buf)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(buf)
        else:
            raise ValueError(f"unsupported .npy version {version}")
    except ValueError as exc:
        raise ValueError(f"{path.name}: not a valid .npy file ({_first_line(exc)})") from None
    if dtype.hasobject or dtype.kind not in NPY_KINDS or dtype.fields is not None:
        raise ValueError(f"{path.name}: dtype {dtype} refused (numeric or bool only, never pickled objects)")
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    body = data[buf.tell() :]
    if count * dtype.itemsize != len(body):
        raise ValueError(f"{path.name}: header says {shape} {dtype} but the file holds {len(body)} data bytes")
    array = np.frombuffer(body, dtype=dtype, count=count)
    return array.reshape(shape, order="F" if fortran else "C").copy()


def read_json_safe(path: Path, max_bytes: int, max_depth: int = 32):
    """Load JSON of at most max_bytes and max_depth nesting levels."""
    path = Path(path)
    data = _read_capped(path, max_bytes)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path.name}: not UTF-8 text") from None
    depth = _json_depth(text)
    if depth > max_depth:
        raise ValueError(f"{path.name}: JSON nested {depth} levels deep, over the limit of {max_depth}")
    try:
        return json.loads(text)
    except ValueError as exc:  # JSONDecodeError, and huge integer literals
        raise ValueError(f"{path.name}: invalid JSON ({_first_line(exc)})") from None


def _json_depth(text: str) -> int:
    """Deepest bracket nesting outside strings (checked before parsing: deep
    nesting would otherwise hit the parent's recursion limit)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]
