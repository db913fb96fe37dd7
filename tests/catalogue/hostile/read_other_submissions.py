# Cheats if it can read another run's copy (another question of this
# submission, or another submission in a batch): every stage and scratch
# folder a grader makes under the shared temp folders. Reading must fail.
import glob

paths = []
for tmp in ("/tmp", "/dev/shm"):  # the grader puts them in memory when it has room
    paths += glob.glob(tmp + "/needle-run-*/submission/python/needle/*.py")
    paths += glob.glob(tmp + "/needle-run-*/runner/*.py")
    paths += glob.glob(tmp + "/grader-*/copy/python/needle/*.py")
    paths += glob.glob(tmp + "/submission-*/**/*.py", recursive=True)
    paths += glob.glob(tmp + "/*/submission/python/needle/autograd.py")
readable = []
for path in paths:
    try:
        with open(path, "rb") as f:
            f.read(1)
        readable.append(path)
    except OSError:
        pass
if not readable:
    raise PermissionError("@TOKEN@: no other run's files are readable")
