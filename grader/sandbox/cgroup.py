"""Control groups: memory limited by real use, CPU shared fairly, a pids cap.

A group per submission (CPU shares: concurrent submissions get equal CPU,
however many processes each starts) holds a group per run (memory limit for
all the run's processes together, counted by what they really use, and a
pids cap). Groups are made under the grader's own group in each controller,
so any limit put on the grader still holds. cgroup v1 (memory, cpu and
pids hierarchies under /sys/fs/cgroup/) and v2 (a unified hierarchy where
our group can enable the controllers for children) are detected at run
time; where neither works (no root, no delegation) `Group.create` returns
None and the caller falls back to rlimits.
"""

from __future__ import annotations

import itertools
import os
import signal
import time
from pathlib import Path

from grader.sandbox.pauses import pauses

CGROUP_ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("memory", "cpu", "pids")
_COUNTER = itertools.count()
_LAYOUT: dict[str, object] = {}


def _v1_layout() -> dict[str, Path] | None:
    found = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _num, names, path = line.split(":", 2)
        for name in names.split(","):
            mount = CGROUP_ROOT / name
            if (
                name in CONTROLLERS
                and (mount / "cgroup.procs").is_file()
                and not (mount / "cgroup.controllers").exists()
            ):
                found[name] = mount / path.lstrip("/")
    return found if set(found) == set(CONTROLLERS) else None


def _v2_layout() -> dict[str, Path] | None:
    for mount in (CGROUP_ROOT, CGROUP_ROOT / "unified"):
        if not (mount / "cgroup.controllers").is_file():
            continue
        path = next(
            (
                line.split(":", 2)[2]
                for line in Path("/proc/self/cgroup").read_text().splitlines()
                if line.startswith("0::")
            ),
            None,
        )
        own = mount / (path or "/").lstrip("/")
        try:
            if not set(CONTROLLERS) <= set((own / "cgroup.controllers").read_text().split()):
                continue
            (own / "cgroup.subtree_control").write_text(" ".join("+" + c for c in CONTROLLERS))
        except OSError:
            continue  # our group holds processes (no internal processes rule) or is not ours
        return {"unified": own}
    return None


def layout() -> tuple[str, dict[str, Path]] | None:
    """("v1"|"v2", controller -> our own group's folder), or None; probed once."""
    if "layout" not in _LAYOUT:
        try:
            v1 = _v1_layout()
            _LAYOUT["layout"] = ("v1", v1) if v1 else (("v2", v2) if (v2 := _v2_layout()) else None)
        except OSError:
            _LAYOUT["layout"] = None
    return _LAYOUT["layout"]


class Group:
    """One control group (a folder per controller in v1, one folder in v2)."""

    def __init__(self, version: str, dirs: dict[str, Path]):
        self.version, self.dirs = version, dirs

    @classmethod
    def create(
        cls, parent: "Group | None" = None, memory_bytes: int | None = None, pids: int | None = None, cpu_tasks: int = 1
    ) -> "Group | None":
        """A new group under `parent` (else under ours), or None where none can be made.
        `cpu_tasks`: how many busy processes' worth of CPU the group weighs
        against its siblings (a submission graded 2 questions at a time: 2)."""
        found = (parent.version, parent.dirs) if parent else layout()
        if not found or os.geteuid() != 0 and found[0] == "v1":
            return None
        version, base = found
        if parent is None and "cleaned" not in _LAYOUT:
            _LAYOUT["cleaned"] = _remove_stale(version, base)
        name = f"needle-grader-{os.getpid()}-{next(_COUNTER)}"
        dirs = {key: path / name for key, path in base.items()}
        group = cls(version, dirs)
        try:
            for path in dirs.values():
                path.mkdir()
            if version == "v2" and (memory_bytes is None):
                group._write("unified", "cgroup.subtree_control", " ".join("+" + c for c in CONTROLLERS))
            if memory_bytes is not None:
                group._limit_memory(memory_bytes)
            if pids is not None:
                group._write("pids", "pids.max", str(pids))
            if cpu_tasks != 1:
                group._write(
                    "cpu",
                    "cpu.weight" if version == "v2" else "cpu.shares",
                    str(cpu_tasks * (100 if version == "v2" else 1024)),
                )
        except OSError:
            group.remove()
            return None
        return group

    def _file(self, controller: str, name: str) -> Path:
        return self.dirs["unified" if self.version == "v2" else controller] / name

    def _write(self, controller: str, name: str, value: str) -> None:
        self._file(controller, name).write_text(value)

    def _read(self, controller: str, name: str) -> str:
        try:
            return self._file(controller, name).read_text()
        except OSError:
            return ""

    def _limit_memory(self, limit: int) -> None:
        if self.version == "v2":
            self._write("memory", "memory.max", str(limit))
            self._try_write("memory", "memory.swap.max", "0")
        else:
            self._write("memory", "memory.limit_in_bytes", str(limit))
            self._try_write("memory", "memory.memsw.limit_in_bytes", str(limit))  # no swapping past it

    def _try_write(self, controller: str, name: str, value: str) -> None:
        try:
            self._write(controller, name, value)
        except OSError:
            pass

    def procs_files(self) -> list[str]:
        """Where a process writes its pid to join (every controller)."""
        return [str(path / "cgroup.procs") for path in self.dirs.values()]

    def pids(self) -> list[int]:
        text = self._read("pids", "cgroup.procs") + self._read("memory", "cgroup.procs")
        return sorted({int(p) for p in text.split()})

    def oom_killed(self) -> bool:
        """Did the memory limit kill a process of this group?"""
        key = "memory.events" if self.version == "v2" else "memory.oom_control"
        for line in self._read("memory", key).splitlines():
            name, _, value = line.partition(" ")
            if name == "oom_kill" and value.strip() not in ("", "0"):
                return True
        return (
            self.version == "v1"
            and self._read("memory", "memory.failcnt").strip() not in ("", "0")
            and "oom_kill " not in self._read("memory", key)
        )

    def pids_exhausted(self) -> bool:
        """Was a fork refused because the group had its maximum of processes?"""
        for line in self._read("pids", "pids.events").splitlines():
            name, _, value = line.partition(" ")
            if name == "max" and value.strip() not in ("", "0"):
                return True
        return False

    def peak_bytes(self) -> int:
        text = self._read("memory", "memory.peak" if self.version == "v2" else "memory.max_usage_in_bytes")
        return int(text) if text.strip().isdigit() else 0

    def kill_all(self, deadline_s: float = 5.0) -> list[int]:
        """SIGKILL every process in the group until none is left; survivors."""
        end, waits = time.monotonic() + deadline_s, pauses()
        while (left := self.pids()) and time.monotonic() < end:
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(next(waits))  # a killed worker's exit takes about a millisecond
        return self.pids()

    def remove(self) -> None:
        """Kill what is left and remove the folders (a run's before its submission's)."""
        self.kill_all()
        for path in self.dirs.values():
            waits = pauses(longest=0.02)
            for _attempt in range(60):  # the kernel frees a killed group's tasks shortly after (about 1 s in all)
                try:
                    if path.is_dir():
                        path.rmdir()
                    break
                except OSError:
                    time.sleep(next(waits))


def _remove_stale(version: str, base: dict[str, Path]) -> int:
    """Remove the groups a killed grader left (its pid is in their name)."""
    removed = 0
    for path in base.values():
        for stale in path.glob("needle-grader-*-*"):
            pid = stale.name.split("-")[2]
            if pid.isdigit() and not Path("/proc", pid).exists():
                for folder in [*sorted(stale.glob("needle-grader-*")), stale]:  # runs before their submission
                    key = "unified" if version == "v2" else "pids"
                    Group(version, {key: folder, "memory": folder}).remove()
                removed += 1
    return removed


def join(procs_files: list[str]) -> None:
    """In the child before exec: move this process into the group."""
    pid = str(os.getpid()).encode()
    for name in procs_files:
        fd = os.open(name, os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.write(fd, pid)
        finally:
            os.close(fd)
