"""The first code a sandboxed worker runs (standard library only).

    python -I -S entry.py SPEC_JSON SCRIPT ARGS...

Copied into the sandbox environment; no grader module imports it. It
decides the worker's sys.path itself (`-S`: the host's site.py never runs,
whatever its layout: Debian's patched one looks for dist-packages and would
miss ours, and could add the system's own): the standard library beside the
copied interpreter, then this environment's site-packages, then (below) the
working directory. It locks
the process down with Landlock where the kernel has it (file access only
beneath the paths in SPEC: "read" and "write"; no TCP bind or connect; no
signals or abstract sockets outside the sandbox), puts the working
directory (the submission root) last on sys.path, as when a student runs
their homework from its root, and then runs SCRIPT as __main__. Landlock is
inherited by every child and cannot be lifted, so the student code that
follows is bound by it. SPEC "landlock": "required" makes a missing
Landlock fatal (exit 121) for tiers whose only file wall it is.
"""

import ctypes
import json
import os
import runpy
import struct
import sys

SYS_CREATE, SYS_ADD_RULE, SYS_RESTRICT = 444, 445, 446  # the same on x86-64 and arm64
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1, 2, 4, 8
FILE_RIGHTS_V1 = EXECUTE | WRITE_FILE | READ_FILE
TRUNCATE, IOCTL_DEV = 1 << 14, 1 << 15
READ = EXECUTE | READ_FILE | READ_DIR
NET_ALL = 1 | 2  # bind and connect TCP
SCOPE_ALL = 1 | 2  # abstract unix sockets, signals
PR_SET_NO_NEW_PRIVS = 38


def handled_fs(abi):
    """Every file right this kernel knows: all are denied unless a rule allows."""
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= 1 << 13  # REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


def landlock(read, write):
    """Restrict this process; "" on success, else why not."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    abi = libc.syscall(SYS_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    if abi < 1:
        return f"Landlock unavailable ({os.strerror(ctypes.get_errno())})"
    fs = handled_fs(abi)
    attr = struct.pack("QQQ", fs, NET_ALL if abi >= 4 else 0, SCOPE_ALL if abi >= 6 else 0)
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    buf = ctypes.create_string_buffer(attr[:size], size)
    ruleset = libc.syscall(SYS_CREATE, buf, ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        return f"Landlock ruleset refused ({os.strerror(ctypes.get_errno())})"
    file_rights = FILE_RIGHTS_V1 | (fs & (TRUNCATE | IOCTL_DEV))
    for paths, rights in ((read, READ), (write, fs)):
        for path in paths:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # absent here: nothing to allow
            allowed = rights if os.path.isdir(path) else rights & file_rights
            rule = ctypes.create_string_buffer(struct.pack("=Qi", allowed & fs, fd), 12)
            ok = libc.syscall(SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(1), rule, ctypes.c_uint32(0))
            os.close(fd)
            if ok != 0:
                return f"Landlock rule for {path} refused ({os.strerror(ctypes.get_errno())})"
    libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    if libc.syscall(SYS_RESTRICT, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
        return f"Landlock restrict refused ({os.strerror(ctypes.get_errno())})"
    os.close(ruleset)
    return ""


def set_path():
    """sys.path: the copied standard library (what the interpreter found
    beside itself), then our site-packages (its .pth files read, as site
    would), and the builtins site adds for an interactive habit (exit, quit,
    help, copyright) so that a student's stray exit() behaves as at home."""
    home = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if p.startswith(home + os.sep)]
    import site  # under -S: imported for its helpers only, its main() never runs

    site.addsitedir(os.path.join(home, "lib", "python%d.%d" % sys.version_info[:2], "site-packages"))
    for helper in ("setquit", "setcopyright", "sethelper"):
        getattr(site, helper, lambda: None)()


def main():
    set_path()
    spec = json.loads(sys.argv[1])
    if spec.get("landlock", "off") != "off":
        problem = landlock(spec.get("read", []), spec.get("write", []))
        if problem and spec["landlock"] == "required":
            print(f"sandbox: {problem}; this tier needs it", file=sys.stderr, flush=True)
            os._exit(121)
    sys.path.append(os.getcwd())
    sys.argv = sys.argv[2:]
    runpy.run_path(sys.argv[0], run_name="__main__")


if __name__ == "__main__":
    main()
