import sys
if not getattr(sys, "_vt_printed", False):  # once: 200 MB through the log pipe
    sys._vt_printed = True
    chunk = "spam " * 200000 + "\n"
    for _ in range(100):
        sys.stdout.write(chunk)
        sys.stderr.write(chunk)
raise RuntimeError("printed 200 MB")
