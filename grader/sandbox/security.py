"""Can a tier keep the grader's files from student code? (`security_problem`)

Every tier runs the worker under a uid of its own when the grader is root;
mounts (bwrap, and the plumbing of the other tiers where a mount namespace
can be made) and Landlock (where the kernel has it) hide the rest. What is
left without any of them is the file modes of the grader's folders.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 without Landlock."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return max(0, libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1)))


def _has_sys_admin() -> bool:
    caps = next(line for line in Path("/proc/self/status").read_text().splitlines() if line.startswith("CapEff"))
    return bool(int(caps.split()[1], 16) & (1 << 21))


def _hidden_by_modes(path: Path) -> bool:
    """No other uid can reach `path`: it or a folder above it lets others nowhere."""
    path = Path(path).resolve()
    return any(p.exists() and not os.stat(p).st_mode & 0o001 for p in (path, *path.parents))


def security_problem(tier: str, secrets=None) -> str:
    """ "" if student code in `tier` cannot read our secrets or outlive its
    run outside its output folder; else why not (grade only with --insecure).
    `secrets`: folders that must stay unreadable (the project, the answer
    cache); as root without Landlock or mounts, their modes must hide them."""
    from grader.sandbox.launch import SYSTEM_READ

    # Landlock lets the worker read the system folders: a project under /usr is not hidden by it.
    under_system = any(Path(p).resolve().is_relative_to(d) for p in secrets or () for d in SYSTEM_READ)
    root, landlock = os.geteuid() == 0, landlock_abi() > 0 and not under_system
    if tier == "rlimit" and not root:
        return "the rlimit tier as a non-root user runs student code as your own uid"
    if tier == "rlimit" and not (landlock or _has_sys_admin()):
        exposed = [str(p) for p in (secrets or [Path("/")]) if not _hidden_by_modes(p)]
        if exposed:
            return (
                f"the rlimit tier has neither Landlock nor a mount namespace, and other users can reach "
                f"{', '.join(exposed)} (chmod o-rwx it)"
            )
    if tier == "unshare" and not root and not landlock:
        return "the unshare tier as a non-root user hides no files without Landlock"
    return ""
