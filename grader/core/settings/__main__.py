"""`python -m grader.core.settings`: write docs/reference/settings.md from the
declarations; with --check, exit 1 (writing nothing) when it is not fresh."""

import sys

from .page import COMMAND, PAGE, render


def main(argv: list) -> int:
    if argv not in ([], ["--check"]):
        print(f"usage: {COMMAND} [--check]", file=sys.stderr)
        return 2
    fresh = PAGE.exists() and PAGE.read_text(encoding="utf-8") == render()
    if argv == ["--check"]:
        if not fresh:
            print(f"{PAGE}: not what the declarations give now; run {COMMAND}", file=sys.stderr)
        return 0 if fresh else 1
    if not fresh:
        PAGE.parent.mkdir(parents=True, exist_ok=True)
        PAGE.write_text(render(), encoding="utf-8")
    print(f"{PAGE}: {'written' if not fresh else 'already fresh'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
