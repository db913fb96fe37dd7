import subprocess
import sys
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", "@TOKEN@"],
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
raise RuntimeError("@TOKEN@ spawned a sleeper")
