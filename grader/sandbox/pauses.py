"""Pauses for waits on the kernel: a killed process finishing its exit, a
control group the kernel has not let go of yet, unlinked keys it has not
collected. Such a wait is usually over in about a millisecond, so the
first looks come quickly and later ones back off; a fixed 10 ms pause kept
a slot idle for 9 ms after nearly every run."""

FIRST_SECONDS = 0.0005
LONGEST_SECONDS = 0.01


def pauses(first: float = FIRST_SECONDS, longest: float = LONGEST_SECONDS):
    """Sleep lengths, endless: `first`, doubled each time up to `longest`."""
    pause = first
    while True:
        yield pause
        pause = min(pause * 2, longest)
