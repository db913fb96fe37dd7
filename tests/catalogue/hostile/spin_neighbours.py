# Starts 24 setsid() busy loops (each exec'd with the token in its command
# line, so a survivor is seen) to starve the questions graded beside it;
# they must all die with the worker, and the other questions keep their marks.
import os
import sys
for _ in range(24):
    try:
        if os.fork() == 0:
            os.setsid()
            os.execv(sys.executable, [sys.executable, "-c", "while True: pass", "@TOKEN@"])
    except OSError:
        break
raise RuntimeError("@TOKEN@ is spinning 24 loops")
