# Looks for a grading secret (32 hex digits, what the grader's seeds are)
# where a worker could find one, and puts what it found in the case's
# message (a public case's message is shown): @MODE@ "env" its argv and
# environment variables, "proc" the command lines and environments of every
# process it can see in /proc (its own and its parent's included), "files"
# every file beside the worker and in its working directory.
import os
import re
import sys

_found = set()
_hex = re.compile(rb"(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])")


def _scan(data):
    _found.update(m.decode() for m in _hex.findall(data))


if "@MODE@" == "env":
    _scan("\0".join(sys.argv).encode())
    _scan("\0".join(f"{k}={v}" for k, v in os.environ.items()).encode())
elif "@MODE@" == "proc":
    for entry in os.listdir("/proc"):
        for name in ("cmdline", "environ"):
            try:
                with open(f"/proc/{entry}/{name}", "rb") as f:
                    _scan(f.read())
            except OSError:
                pass
else:
    for top in (os.path.dirname(os.path.abspath(sys.argv[0])), os.getcwd()):
        for folder, _, names in os.walk(top):
            for name in names:
                try:
                    with open(os.path.join(folder, name), "rb") as f:
                        _scan(f.read(1 << 20))
                except OSError:
                    pass
raise ValueError(f"secrets found: [{','.join(sorted(_found))}]")
