# Cheats if ANY of these can be read: the reference solution or the cached
# expected values. Reading must fail for every path; then it fails honestly.
import glob
import os

paths = ["@ROOT@/reference/python/needle/autograd.py", "@ROOT@/reference/apps/simple_ml.py",
         "../reference/apps/simple_ml.py", "../../reference/apps/simple_ml.py",
         "/work/main/reference/apps/simple_ml.py"]
paths += glob.glob("@ROOT@/.grader-cache/*/*/*") + glob.glob("@ROOT@/.grader-cache/*/*")
paths += glob.glob("/work/*/.grader-cache/*/*/*.npy")[:50] + glob.glob("/tmp/*/*.npy")[:50]
readable = []
for path in paths:
    try:
        with open(path, "rb") as f:
            f.read(1)
        readable.append(path)
    except OSError:
        pass
if not readable:
    raise PermissionError("@TOKEN@: neither the reference nor the cached answers are readable")
