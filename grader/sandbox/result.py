"""What one sandboxed run came to: the RunResult record and its reason text."""

from __future__ import annotations

import signal
from dataclasses import dataclass

from grader.sandbox.procs import CappedLog

SIGNAL_REASONS = {
    signal.SIGXFSZ: "file size limit",
    signal.SIGSEGV: "crashed: segmentation fault",
    signal.SIGBUS: "crashed: bus error",
    signal.SIGABRT: "crashed: aborted",
    signal.SIGFPE: "crashed: arithmetic fault",
}


@dataclass(frozen=True)
class RunResult:
    """What happened to one worker. `reason` is "" for a clean exit 0."""

    tier: str
    exit_code: int | None  # None when killed by a signal
    signal: int | None  # the signal that ended the worker, if any
    timed_out: bool
    wall_seconds: float
    log: str  # first Limits.log_bytes of stdout+stderr
    log_truncated: bool
    reason: str

    @property
    def ok(self) -> bool:
        """Exited 0 on its own. (Graders still trust only validated values.)"""
        return self.exit_code == 0 and not self.timed_out and not self.reason


def make_result(code: int, tier: str, reason: str, wall: float, log: CappedLog, limits) -> RunResult:
    """Turn an exit status into a RunResult with a human reason."""
    sig = -code if code < 0 else None
    if tier == "bwrap" and code > 128 and (code - 128) in set(signal.Signals):
        sig = code - 128  # bwrap reports a signalled worker as 128 + signal
    exit_code = None if sig else code
    text = log.text()
    if not reason:
        reason = _reason(exit_code, sig, text, limits)
    return RunResult(
        tier=tier,
        exit_code=exit_code,
        signal=sig,
        timed_out=reason.startswith("timeout"),
        wall_seconds=round(wall, 3),
        log=text,
        log_truncated=log.dropped > 0,
        reason=reason,
    )


def _reason(exit_code: int | None, sig: int | None, text: str, limits) -> str:
    """A one-line reason a person can act on; "" for a clean exit 0."""
    if sig:
        name = signal.Signals(sig).name
        if sig == signal.SIGXCPU:
            return f"CPU time limit ({limits.cpu_seconds} s, {name})"
        if sig in SIGNAL_REASONS:
            return f"{SIGNAL_REASONS[sig]} ({name})"
        return f"killed by signal {sig} ({name})"
    if exit_code and "MemoryError" in text[-4000:]:
        return f"memory limit ({limits.memory_mb} MB): MemoryError"
    if exit_code:
        return f"exited with status {exit_code}"
    return ""
