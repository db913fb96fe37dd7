hog = []
while True:
    hog.append(b"x" * (16 << 20))  # touched pages, 16 MB at a time
