"""Sandboxed worker: runs one question's cases on the library in the current
directory and writes their values, nothing else.

    python -I worker_boot.py QUESTION OUT_DIR

Runs inside the sandbox with a copy of the assignment's cases package
(as `assignment_cases`) next to this file. The working directory is the submission copy, set up as
when a student runs the homework from its root: the root, its `python/` and
its `apps/` are appended LAST to sys.path (so `import needle` and
`from python.needle.ops import *` both work, and nothing shadows numpy or
the cases). The question's worker imports only what the question uses: a
broken simple_ml costs Q5 and Q6 alone. Each computing case's value goes to
OUT_DIR as `<case>.json`, arrays as `.npy` beside it (never pickle); an
import failure is written once, as `import_error.json`. Any exception,
SystemExit included, becomes an error record; the parent decides everything
else. This file is a script: no grader module imports it.
"""
import importlib
import json
import linecache
import os
import re
import sys
import traceback

RUNNER = os.path.dirname(os.path.abspath(__file__))
MAX_MESSAGE = 500  # characters kept of an exception message


def encode(value, out_dir, stem, counter):
    """Plain JSON data, with arrays saved as .npy files and referenced."""
    import numpy as np

    if isinstance(value, (np.ndarray, np.generic)):
        # numpy scalars (what a full sum returns) travel as 0-d arrays, so
        # they compare like the 0-d arrays another library version returns.
        array = np.array(value, copy=True, subok=False)  # drops any subclass
        if array.dtype.kind not in "biuf":
            raise TypeError(f"array of dtype {array.dtype} is not a numeric array")
        name = f"{stem}_{len(counter)}.npy"
        counter.append(name)
        with open(os.path.join(out_dir, name + ".tmp"), "wb") as f:
            np.save(f, array, allow_pickle=False)
        os.replace(os.path.join(out_dir, name + ".tmp"), os.path.join(out_dir, name))
        return {"npy": name}
    if isinstance(value, bool) or type(value) in (int, float):
        return value
    if isinstance(value, (list, tuple)):
        return [encode(v, out_dir, stem, counter) for v in value]
    if type(value) is dict and all(type(k) is str for k in value):
        return {k: encode(v, out_dir, stem, counter) for k, v in value.items()}
    return _refuse(value)


def _refuse(value):
    raise TypeError(f"a {type(value).__name__} is not a number, array, list or dict")


STUDENT_CODE = "student_code.json"  # beside this file: the student files and their given functions
MAX_LINE = 100  # characters of a source line quoted in `where`
NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
NOT_NAMES = ("<locals>", "<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>")


def _student_code():
    """{handout-relative student file: set of given function names}, or None
    (every file of the submission is the student's, no function given)."""
    try:
        with open(os.path.join(RUNNER, STUDENT_CODE), encoding="utf-8") as f:
            files = json.load(f)["files"]
        return {rel: set(entry["given"]) for rel, entry in files.items()}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _qualname(frame):
    """"Summation.gradient" for a frame of that method; nested functions keep
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


def _targets(description):
    """The functions a case exercises, from its description: "Summation.gradient"
    in "Summation.gradient: (3,4,2) over axes=(1,)", else every name in it
    ("BroadcastTo" covers its methods, "softmax_loss" the function)."""
    names = NAME.findall(description or "")
    return [n for n in names if "." in n] or names


def _show(place, text=True):
    """`path:line in name: its text`; a secondary place as `file:line in name`."""
    frame, line, rel, _ = place
    if not text:
        return f"{os.path.basename(rel)}:{line} in {_qualname(frame)}"
    source = linecache.getline(frame.f_code.co_filename, line).strip()
    if len(source) > MAX_LINE:
        source = source[:MAX_LINE - 3] + "..."
    return f"{rel}:{line} in {_qualname(frame)}" + (f": {source}" if source else "")


def _caller(own, place):
    """The student's own frame that led to `place` from another function, if any."""
    before = own[:own.index(place)]
    return next((f for f in reversed(before) if _qualname(f[0]) != _qualname(place[0])), None)


def where(exc, description=""):
    """The student's line that an exception passed through, as
    `path:line in Class.method: the line's text`: the innermost frame in the
    function the case exercises (named by its description), else the
    innermost frame in the student's own code (the student files less the
    functions given with the assignment), else in the student files; with
    the innermost student frame when it is another. For a syntax error, the
    file and line the compiler names."""
    cwd = os.getcwd() + os.sep
    if isinstance(exc, SyntaxError) and str(exc.filename or "").startswith(cwd):
        return f"{exc.filename[len(cwd):]}:{exc.lineno}"
    code = _student_code()
    frames = []  # (frame, line, path relative to the submission, is the student's own code)
    for frame, line in traceback.walk_tb(exc.__traceback__):
        path = frame.f_code.co_filename
        if path.startswith(cwd):
            rel = path[len(cwd):]
            own = code is None or (rel in code and not _inside(_qualname(frame), code[rel]))
            frames.append((frame, line, rel, own))
    mine = [f for f in frames if code is None or f[2] in code] or frames  # in the student files, if any
    if not mine:
        return ""
    targets = _targets(description)
    tested = [f for f in mine if f[3] and _inside(_qualname(f[0]), targets)]
    own = [f for f in mine if f[3]] or mine
    innermost = own[-1]
    primary = tested[-1] if tested else innermost
    shown = _show(primary)
    if innermost is not primary:
        shown += f"; raised in {_show(innermost, text=False)}"
    caller = _caller(own, innermost)
    if caller is not None and caller is not primary:
        shown += f", called from {_show(caller, text=False)}" if innermost is not primary else \
            f"; called from {_show(caller, text=False)}"
    return shown


def write(out_dir, stem, record):
    path = os.path.join(out_dir, stem + ".json")
    with open(path + ".tmp", "w") as f:
        json.dump(record, f)
    os.replace(path + ".tmp", path)


def error_record(exc, description=""):
    message = f"{type(exc).__name__}: {exc}"[:MAX_MESSAGE]
    return {"status": "error", "error": message, "where": where(exc, description)}


def import_library(modules):
    """The question's modules, imported from the submission root as the course does."""
    root = os.getcwd()
    sys.path += [root, os.path.join(root, "python"), os.path.join(root, "apps")]
    return [importlib.import_module(name) for name in modules]


def main():
    question, out_dir = sys.argv[1], sys.argv[2]
    sys.path.insert(0, RUNNER)
    import numpy  # noqa: F401  (ours, before any student code runs)
    from assignment_cases import CASES, QUESTIONS

    cases = [c for c in CASES if c.question == question and c.fn is not None]
    try:
        modules = import_library(next(q for q in QUESTIONS if q.key == question).imports)
    except BaseException as exc:  # noqa: B036  (SystemExit at import too)
        write(out_dir, "import_error", error_record(exc))
        return
    args = (modules + [None, None])[:max(2, len(modules))]  # fn(ndl, simple_ml): None for what is not imported
    for case in cases:
        try:
            value = encode(case.fn(*args), out_dir, case.name, [])
            write(out_dir, case.name, {"status": "ok", "value": value})
        except BaseException as exc:  # noqa: B036  (writing can fail too: file size limit, ...)
            try:
                write(out_dir, case.name, error_record(exc, case.description))
            except BaseException:  # noqa: B036  (the parent reports the case as missing)
                pass


if __name__ == "__main__":
    try:
        main()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)  # skip the submission's atexit handlers and stray threads
