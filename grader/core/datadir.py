"""An assignment's data folder, filled when empty.

A checkout fills data/ with `make data`; an installed grader (hw1's copy in
the wheel, data under paths.state()) has nobody to do that. So a command
that grades or builds a handout first calls `ensure`: when the data folder
is missing or empty and the assignment.toml names a `fetch_data` script,
the grader runs it as `python SCRIPT DATA_FOLDER` (hw1's,
reference/tools/fetch_mnist.py, copies MNIST from $MNIST_DIR when set, else
downloads it, checking every file's SHA-256). A folder with files in it is
left alone: its owner filled it.
"""

import subprocess
import sys

from grader.core.assignment import Assignment, AssignmentError

TIMEOUT = 600  # seconds: four files, about 55 MB from a mirror


def ensure(assignment: Assignment) -> None:
    """Fill the assignment's data folder when it is missing or empty and a fetch_data script is declared."""
    data, script = assignment.data, assignment.fetch_data
    if script is None or (data.is_dir() and any(data.iterdir())):
        return
    try:
        data.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise AssignmentError(
            f"{data}: cannot be created ({e.strerror}); set $XDG_CACHE_HOME to a writable "
            "folder, or make this one writable"
        ) from None
    print(f"{data}: empty; filling it with {script.name} (from $MNIST_DIR when set, else the network)", file=sys.stderr)
    try:
        run = subprocess.run([sys.executable, str(script), str(data)], capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise AssignmentError(
            f"{assignment.toml}: field 'fetch_data': {script.name} took over {TIMEOUT} s; "
            f"put the files in {data} yourself"
        ) from None
    if run.returncode != 0:
        last = (run.stderr.strip().splitlines() or [f"exit {run.returncode}"])[-1]
        raise AssignmentError(
            f"{assignment.toml}: field 'fetch_data': {script.name} could not fill {data} "
            f"({last[:200]}); put the files there yourself, or set MNIST_DIR to a folder "
            "holding them"
        )
