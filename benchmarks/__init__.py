"""The project's benchmarks (`make bench`): each figure a ratio of timings
measured side by side in one run. Not part of the installed grader."""
