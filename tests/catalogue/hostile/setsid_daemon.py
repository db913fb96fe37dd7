import os
import sys
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)", "@TOKEN@"])
    os._exit(0)
raise RuntimeError("@TOKEN@ left a daemon behind")
