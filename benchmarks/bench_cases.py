"""Run every grading case on a library in this one process, no sandbox: the
raw work the grader wraps, for the grading-overhead bench.

Run as a script from the project root (the cases read `data/`):
`python grader/shipped/bench_cases.py LIBRARY_DIR`. It imports the needle under
LIBRARY_DIR/python and simple_ml under LIBRARY_DIR/apps, calls each case
function of every question once, and prints one JSON line: the seconds the
cases took, the number of case functions run and how many raised.
The grading parent never imports this script (it would import needle).
"""

import json
import os
import sys
import time


def main(library):
    start = time.perf_counter()
    sys.path[:0] = [os.path.join(library, "python"), os.path.join(library, "apps")]
    import needle
    import simple_ml
    from cases import CASES  # beside this script (sys.path[0]): no grader import

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
    print(json.dumps(main(sys.argv[1])))
