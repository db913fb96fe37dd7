"""Sandboxed worker: runs one question's cases on the library in the current
directory and writes their values, nothing else.

    python -I worker_boot.py QUESTION[+QUESTION...][@CASE,CASE...] OUT_DIR
    python -I worker_boot.py shrink OUT_DIR
    python -I worker_boot.py variants OUT_DIR


Runs inside the sandbox with a copy of the assignment's cases package
(as `assignment_cases`) next to this file. No secret reaches this process:
the inputs are arrays the grader drew on its side and left beside this file
(the cases package finds them; without them, the public inputs), and the
draws the cases asked for are written to OUT_DIR as DRAWS (what the grader
reads from the reference's run on the public inputs, to know what to draw).
The working directory is the submission copy, set up as
when a student runs the homework from its root: the root, its `python/` and
its `apps/` are appended LAST to sys.path (so `import needle` and
`from python.needle.ops import *` both work, and nothing shadows numpy or
the cases). The question's worker imports only what the question uses: a
broken simple_ml costs Q5 and Q6 alone. Each computing case's value goes to
OUT_DIR as `<case>.json`, arrays as `.npy` beside it (never pickle), and
`<case>.started` marks the case while it runs (the parent watches it to
stop a case that runs past its own time limit); an import failure is
written once, as `import_error.json`. Any exception,
SystemExit included, becomes an error record; the parent decides everything
else. This file is a script: no grader module imports it.

`shrink` evaluates the candidates of the grader's spec file beside this
file (SPEC, written by the trusted side: smaller inputs for failing cases,
as plain data) with the cases package's calls.evaluate, each candidate's
value written like a case's under the candidate's id.

`variants` runs one question's cases on several variants of the library,
one after the other (VARIANTS_SPEC beside this file, written by the
trusted side: the grader's known bugs, the reference with one bug planted
in each). Each variant runs as if it were the submission: in a folder of
its own under the working directory (a copy of the library's folders
with the variant's files written over them, links to the rest, data/
among it), as its working directory, with the modules and sys.path
entries of the variant before forgotten. Its values are named
VARIANT_CASE, and VARIANT.json is written once all its cases ran (the
grader names the variants: letters and digits).
"""

import importlib
import json
import os
import shutil
import sys
import time

RUNNER = os.path.dirname(os.path.abspath(__file__))
MAX_MESSAGE = 500  # characters kept of an exception message
DRAWS = "draws.json"  # the draws the cases asked for, in OUT_DIR
SHRINK = "shrink"  # the mode that evaluates the grader's candidates
SEVERAL = "+"  # QUESTION may be several, joined by it: their cases in one process (the reference's runs)
ONLY = "@"  # QUESTION@case,case: only those cases (the rest of a question after a case hung; a known bug's)
SPEC = "shrink_spec.json"  # the candidates, beside this file
STARTED = ".started"  # NAME.started: case NAME is running (a hint for the parent)
VARIANTS = "variants"  # the mode that runs the spec's variants of the library, one after the other
VARIANTS_SPEC = "variants.json"  # {"question": QUESTION[@CASE,...], "variants": [[NAME, {path: text}], ...]}
OF = "_"  # VARIANT_CASE: a case's value for one variant


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


def where(exc, description=""):
    """The student's line the exception came from, "" if none: where.py
    beside this file (the function the case exercises, else the student's
    own code, given functions skipped per student_code.json)."""
    try:
        import where as finder  # imported by main() before any student code runs

        code = finder.load_code(os.path.join(RUNNER, finder.STUDENT_CODE))
        return str(finder.where(exc, description, os.getcwd(), code))
    except Exception:  # noqa: BLE001  (student code may have broken what it uses: the value still counts)
        return ""


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


def forget(root):
    """Unload every module imported from under `root` (relative paths: from
    the working directory): the next import reads the files again."""
    for name, module in list(sys.modules.items()):
        try:
            paths = [getattr(module, "__file__", None), *(getattr(module, "__path__", None) or ())]
        except Exception:  # noqa: BLE001  (a module object may refuse attribute access)
            continue
        if any(isinstance(p, str) and os.path.abspath(p).startswith(root + os.sep) for p in paths):
            del sys.modules[name]
    importlib.invalidate_caches()


def run_each(out_dir, jobs):
    """Write each (name, description, thunk)'s value, or its error, as
    NAME.json with the seconds it took (the reference's are the base of the
    per-case time limits). While it runs, NAME.started marks it: the parent,
    watching, stops a case that runs past its time and knows which case a
    stop cut short (a hint only: values come from NAME.json alone)."""
    for name, description, thunk in jobs:
        marker = os.path.join(out_dir, name + STARTED)
        try:
            open(marker, "w").close()
        except OSError:  # the parent then blames the first case without a value
            pass
        start = time.perf_counter()
        try:
            value = encode(thunk(), out_dir, name, [])
            write(out_dir, name, {"status": "ok", "value": value, "seconds": time.perf_counter() - start})
        except BaseException as exc:  # noqa: B036  (writing can fail too: file size limit, ...)
            try:
                write(out_dir, name, {**error_record(exc, description), "seconds": time.perf_counter() - start})
            except BaseException:  # noqa: B036  (the parent reports the case as missing)
                pass
        try:
            os.remove(marker)
        except OSError:
            pass


def imported(out_dir, modules, prefix=""):
    """The library's modules, or None once the import failure is written."""
    try:
        return import_library(modules)
    except BaseException as exc:  # noqa: B036  (SystemExit at import too)
        write(out_dir, prefix + "import_error", error_record(exc))
        return None


def shrink(out_dir):
    """The spec's candidates, each evaluated by the cases package's calls.evaluate."""
    with open(os.path.join(RUNNER, SPEC)) as f:
        spec = json.load(f)
    from assignment_cases.calls import evaluate

    modules = imported(out_dir, spec["imports"])
    if modules is not None:
        run_each(
            out_dir, [(c["id"], c["description"], lambda c=c: evaluate(modules[0], c)) for c in spec["candidates"]]
        )


def record_draws(out_dir):
    """The draws the cases made, if the cases package records them."""
    try:
        import assignment_cases

        requests = getattr(assignment_cases, "draw_requests", None)
        if requests is not None:
            write(out_dir, DRAWS[: -len(".json")], {"requests": requests()})
    except BaseException:  # noqa: B036  (only the reference's run on public inputs is ever read)
        pass


def run_cases(question, out_dir, prefix=""):
    """QUESTION[+QUESTION...][@CASE,...]'s cases on the library in the
    working directory, each value named prefix + the case's name."""
    from assignment_cases import CASES, QUESTIONS

    question, _, only = question.partition(ONLY)
    keys = question.split(SEVERAL)
    chosen = [next(q for q in QUESTIONS if q.key == key) for key in keys]
    cases = [c for c in CASES if c.question in keys and c.fn is not None]
    if only:  # in the order given: the grader reads the first without a value as the one a stop cut short
        named = {c.name: c for c in cases}
        cases = [named[name] for name in only.split(",") if name in named]
    modules = imported(out_dir, list(dict.fromkeys(name for q in chosen for name in q.imports)), prefix)
    if modules is None:
        return
    args = (modules + [None, None])[: max(2, len(modules))]  # fn(ndl, simple_ml): None for what is not imported
    run_each(out_dir, [(prefix + c.name, c.description, lambda c=c: c.fn(*args)) for c in cases])


def variants(out_dir):
    """The spec's variants, one after the other, each as the submission in a folder of its own."""
    with open(os.path.join(RUNNER, VARIANTS_SPEC)) as f:
        spec = json.load(f)
    home, path = os.getcwd(), list(sys.path)
    for number, (name, files) in enumerate(spec["variants"]):
        root = os.path.join(home, f".variant{number}")
        tops = list(dict.fromkeys(rel.split("/")[0] for rel in files))
        for top in tops:
            shutil.copytree(os.path.join(home, top), os.path.join(root, top))
        for entry in os.listdir(home):  # data/ and the rest, as they are
            if entry not in tops and not entry.startswith(".variant"):
                os.symlink(os.path.join(home, entry), os.path.join(root, entry))
        for rel, text in files.items():
            with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
                f.write(text)
        os.chdir(root)
        run_cases(spec["question"], out_dir, name + OF)
        write(out_dir, name, {"status": "ok", "value": 0})  # every case of it ran
        forget(home)
        sys.path[:] = path
        os.chdir(home)
        shutil.rmtree(root, ignore_errors=True)


def main():
    question, out_dir = sys.argv[1], sys.argv[2]
    sys.path.insert(0, RUNNER)
    import numpy  # noqa: F401  (ours, before any student code runs)
    import where  # noqa: F401  (likewise)

    if question == SHRINK:
        return shrink(out_dir)
    if question == VARIANTS:
        return variants(out_dir)
    run_cases(question, out_dir)
    record_draws(out_dir)


if __name__ == "__main__":
    try:
        main()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)  # skip the submission's atexit handlers and stray threads
