"""Run every grading case on a library in this one process, no sandbox: the
raw work the grader wraps, for the grading-overhead bench.

Run as a script from the folder holding the assignment's `data/` (the cases
read it): `python benchmarks/bench_cases.py LIBRARY_DIR CASES_DIR`. It
imports the needle under LIBRARY_DIR/python, simple_ml under LIBRARY_DIR/apps
and the cases package CASES_DIR (the assignment's, which imports nothing from
the grader), calls each case function of every question once, and prints one
JSON line: the seconds the cases took, the number of case functions run and
how many raised. The grading parent never imports this script (it would
import needle).
"""

import importlib
import json
import os
import sys
import time


def main(library, cases_dir):
    start = time.perf_counter()
    cases_dir = os.path.abspath(cases_dir)
    sys.path[:0] = [os.path.join(library, "python"), os.path.join(library, "apps"), os.path.dirname(cases_dir)]
    import needle
    import simple_ml

    CASES = importlib.import_module(os.path.basename(cases_dir)).CASES

    imported = time.perf_counter()
    ran = failed = 0
    for case in CASES:
        if case.fn is not None:
            try:
                case.fn(needle, simple_ml)
            except Exception:  # the bench reports it; the reference should not fail
                failed += 1
            ran += 1
    done = time.perf_counter()
    return {"import_s": imported - start, "cases_s": done - imported, "functions": ran, "failed": failed}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2])))
