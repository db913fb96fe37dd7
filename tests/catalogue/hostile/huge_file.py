import os
import sys
with open(os.path.join(sys.argv[2], "filler.bin"), "wb") as f:
    for _ in range(2048):  # 2 GB, far over the file size limit
        f.write(b"\0" * (1 << 20))
