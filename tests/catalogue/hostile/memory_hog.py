import sys
hog = sys.__dict__.setdefault("_vt_hog", [])  # kept: the memory stays taken
while True:
    hog.append(b"x" * (16 << 20))  # touched pages, 16 MB at a time
