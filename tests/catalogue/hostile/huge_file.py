import os
import sys
if not getattr(sys, "_vt_wrote", False):  # once: 2 GB, far over the file size limit
    sys._vt_wrote = True
    with open(os.path.join(sys.argv[2], "filler.bin"), "wb") as f:
        for _ in range(2048):
            f.write(b"\0" * (1 << 20))
raise RuntimeError("wrote past the file size limit without an error")
