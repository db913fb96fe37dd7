"""Where in the student's code an exception came from, as one line:

    python/needle/ops/ops_mathematic.py:295 in Summation.gradient: return broadcast_to(...); raised in ops_mathematic.py:256 in BroadcastTo.compute

The line named is the innermost traceback frame in the function a case
exercises (named by its description: "Summation.gradient: (3,4,2) over
axes=(1,)"), else the innermost frame in the student's own code (the student
files less the functions given with the assignment), else in the student
files; then, briefly, the innermost student frame when it is another
("raised in") and the student's function that called it ("called from").

Standard library only: the grader's sandboxed worker and the handout's
`make test` (tests/hw1/hw1_cases/where.py, a copy) both use it, so a student
sees the same line in both. `student_code.json` beside each says which files
are the student's and which of their functions are given.
"""

import json
import linecache
import os
import re
import traceback

STUDENT_CODE = "student_code.json"
MAX_LINE = 100  # characters of a source line quoted
NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
NOT_NAMES = ("<locals>", "<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>")


def load_code(path):
    """{student file relative to the homework root: set of given function
    names}, from a student_code.json; None when it cannot be read (then every
    file under the root is the student's, and no function is given)."""
    try:
        with open(path, encoding="utf-8") as f:
            files = json.load(f)["files"]
        return {rel: set(entry["given"]) for rel, entry in files.items()}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def qualname(frame):
    """ "Summation.gradient" for a frame of that method; nested functions keep
    their outer names ("nn_epoch.step"), comprehensions are their function's."""
    name = getattr(frame.f_code, "co_qualname", None)
    if name is None:  # before Python 3.11: the class whose attribute holds this code
        name = frame.f_code.co_name
        owner = frame.f_locals.get("self", frame.f_locals.get("cls"))
        for klass in (owner if isinstance(owner, type) else type(owner)).__mro__ if owner is not None else ():
            if getattr(klass.__dict__.get(name), "__code__", None) is frame.f_code:
                name = f"{klass.__qualname__}.{name}"
                break
    return ".".join(part for part in name.split(".") if part not in NOT_NAMES)


def _inside(name, names):
    return any(name == n or name.startswith(n + ".") for n in names)


def targets(description):
    """The functions a case exercises, from its description: "Summation.gradient"
    in "Summation.gradient: (3,4,2) over axes=(1,)", else every name in it
    ("BroadcastTo" covers its methods, "softmax_loss" the function)."""
    names = NAME.findall(description or "")
    return [n for n in names if "." in n] or names


def _show(place, text=True):
    """`path:line in name: its text`; a secondary place as `file:line in name`."""
    frame, line, rel, _ = place
    if not text:
        return f"{os.path.basename(rel)}:{line} in {qualname(frame)}"
    source = linecache.getline(frame.f_code.co_filename, line).strip()
    if len(source) > MAX_LINE:
        source = source[: MAX_LINE - 3] + "..."
    return f"{rel}:{line} in {qualname(frame)}" + (f": {source}" if source else "")


def _caller(own, place):
    """The student's own frame that led to `place` from another function, if any."""
    before = own[: own.index(place)]
    return next((f for f in reversed(before) if qualname(f[0]) != qualname(place[0])), None)


def _relative(path, root, cache):
    """`path` relative to `root` ("/"-separated), or None when outside it."""
    if path not in cache:
        if path.startswith("<"):  # <frozen importlib._bootstrap>, <string>: no file
            cache[path] = None
            return None
        real = os.path.realpath(path)
        cache[path] = os.path.relpath(real, root).replace(os.sep, "/") if real.startswith(root + os.sep) else None
    return cache[path]


def where(exc, description="", root=None, code=None):
    """The line (see the module's docstring) for `exc`, "" when no frame is
    under `root` (default: the working directory). `code` is load_code()'s.
    For a syntax error, the file and line the compiler names."""
    root = os.path.realpath(root or os.getcwd())
    cache = {}
    if isinstance(exc, SyntaxError) and exc.filename:
        rel = _relative(exc.filename, root, cache)
        if rel is not None:
            return f"{rel}:{exc.lineno}"
    frames = []  # (frame, line, path relative to root, is the student's own code)
    for frame, line in traceback.walk_tb(exc.__traceback__):
        rel = _relative(frame.f_code.co_filename, root, cache)
        if rel is not None:
            own = code is None or (rel in code and not _inside(qualname(frame), code[rel]))
            frames.append((frame, line, rel, own))
    mine = [f for f in frames if code is None or f[2] in code] or frames  # in the student files, if any
    if not mine:
        return ""
    tested = [f for f in mine if f[3] and _inside(qualname(f[0]), targets(description))]
    own = [f for f in mine if f[3]] or mine
    innermost = own[-1]
    primary = tested[-1] if tested else innermost
    shown = _show(primary)
    if innermost is not primary:
        shown += f"; raised in {_show(innermost, text=False)}"
    caller = _caller(own, innermost)
    if caller is not None and caller is not primary:
        shown += (", called from " if innermost is not primary else "; called from ") + _show(caller, text=False)
    return shown
