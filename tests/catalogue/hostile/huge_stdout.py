import sys
chunk = "spam " * 200000 + "\n"
for _ in range(100):  # 100 MB of output
    sys.stdout.write(chunk)
    sys.stderr.write(chunk)
raise RuntimeError("printed 200 MB")
