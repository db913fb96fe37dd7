"""`make bench` (`python -m benchmarks [--only NAME] [--rounds N]`): speed
figures, each a ratio of two timings taken side by side in one run. Lives
outside the `grader` package: an installed grader ships no benchmarks."""

import argparse
import sys

from benchmarks.speed import BENCHES, bench_command


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=sorted(BENCHES), action="append", help="run only this benchmark (repeatable)")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds per comparison (default: 5)")
    return bench_command(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
