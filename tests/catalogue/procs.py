"""Process bookkeeping for the hostile catalogue: who is still alive."""
import contextlib
import ctypes
import os

PR_SET_CHILD_SUBREAPER = 36


@contextlib.contextmanager
def subreaper():
    """Orphans of the processes we start are reparented to us rather than
    to init while this is on, so an escaped daemon still shows up among our
    descendants (zombies are not counted: they are dead)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
    try:
        yield
    finally:
        libc.prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


def processes():
    """pid -> (uid, ppid, cmdline) of every live (not zombie) process."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as f:
                status = dict(line.split(":", 1) for line in f if ":" in line)
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue  # gone meanwhile
        if status.get("State", "").strip().startswith("Z"):
            continue
        found[int(entry)] = (int(status["Uid"].split()[0]), int(status["PPid"]), cmdline)
    return found


def descendants(pid, table):
    """Every pid below `pid` in `table` (as returned by processes())."""
    children = {p for p, (_, ppid, _) in table.items() if ppid == pid}
    return children.union(*(descendants(c, table) for c in children)) if children else set()
