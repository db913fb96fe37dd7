"""One hostile client for the server benchmark: the abuse a deadline rush
has seen, from one address (127.0.0.2), while `bench_server` measures
everyone else.

- sign-in forms of 1 MB of `a&a&...`, one after another (no key needed);
- 160 connections at a time announcing 8 MB bodies with no key, sent in part;
- connections whose headers never finish, as many as the server will take;
- with a student key, 5 a second each: 400-digit numbers, NUL bytes in problem names;
- the five of `attack_limits.py` (header, me, big, signin, utf8), one at a time.

Run as `python -m benchmarks.attack URL KEY SUBMISSION_ID SECONDS [KINDS]`; prints
one line of counts. Every step sleeps a little, so that the attacker itself
takes a small share of the two cores the server has.
"""

import asyncio
import os
import subprocess
import sys
import time
from urllib.parse import quote

from benchmarks import attack_limits
from grader.core.paths import ROOT

SOURCE = ("127.0.0.2", 0)
FORM = b"a&" * (512 * 1024)


async def _open(host, port):
    return await asyncio.open_connection(host, port, local_addr=SOURCE)


async def _exchange(host, port, request: bytes) -> bytes:
    reader, writer = await _open(host, port)
    try:
        writer.write(request)
        await writer.drain()
        return await asyncio.wait_for(reader.read(200), 5)
    except (OSError, asyncio.TimeoutError):
        return b""
    finally:
        writer.close()


async def login_flood(host, port, stop_at, counts):
    head = (
        f"POST /login HTTP/1.1\r\nHost: {host}\r\nContent-Length: {len(FORM)}\r\n"
        "Content-Type: application/x-www-form-urlencoded\r\n\r\n".encode()
    )
    while time.monotonic() < stop_at:
        await _exchange(host, port, head + FORM)
        counts["login"] += 1
        await asyncio.sleep(0.01)


async def hanging_bodies(host, port, stop_at, counts, slots=160):
    head = (
        f"POST /submit_test?submission_id=1&test_case_index=0 HTTP/1.1\r\nHost: {host}\r\n"
        "Content-Length: 8000000\r\n\r\n".encode()
    )

    async def one():
        while time.monotonic() < stop_at:
            await _exchange(host, port, head + b"1" * 65536)
            counts["body"] += 1
            await asyncio.sleep(1.0)

    await asyncio.gather(*(one() for _ in range(slots)))


async def slow_headers(host, port, stop_at, counts, slots=1100):
    """Hold as many connections as possible with headers that never end."""

    async def hold():
        while time.monotonic() < stop_at:
            t0 = time.monotonic()
            try:
                reader, writer = await _open(host, port)
                writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                counts["held"] += 1
                await asyncio.wait_for(reader.read(1), max(0.01, stop_at - time.monotonic()))
                writer.close()
            except (OSError, asyncio.TimeoutError):
                pass
            # Dropped at once (over the cap): come back in a while; dropped later
            # (timeout): come back at once, to keep the slot.
            await asyncio.sleep(2.0 if time.monotonic() - t0 < 0.5 else 0.05)

    await asyncio.gather(*(hold() for _ in range(slots)))


async def bad_values(host, port, key, sid, stop_at, counts):
    big = b"9" * 400
    huge = (
        f"POST /submit_test?submission_id={sid}&test_case_index=0 HTTP/1.1\r\nHost: {host}\r\n"
        f"Authorization: Bearer {key}\r\nContent-Length: {len(big)}\r\n\r\n"
    ).encode() + big
    nul = (
        f"POST /submit?assignment=bench&problem={quote(chr(0))} HTTP/1.1\r\nHost: {host}\r\n"
        f"Authorization: Bearer {key}\r\nContent-Length: 0\r\n\r\n"
    ).encode()
    while time.monotonic() < stop_at:
        for request in (huge, nul):
            answer = await _exchange(host, port, request)
            counts["bad_5xx" if answer[9:10] == b"5" else "bad"] += 1
        await asyncio.sleep(0.2)


KINDS = ("login", "body", "held", "bad")  # the first round's attacks, together
LIMIT_KINDS = ("header", "me", "big", "signin", "utf8")  # the second round's, each alone
READY = "attacker ready"


async def attack(url: str, key: str, sid: int, seconds: float, kinds=KINDS) -> dict:
    host, port = url.split("//")[1].rstrip("/").split(":")
    port = int(port)
    counts = (
        {"login": 0, "body": 0, "held": 0, "bad": 0, "bad_5xx": 0}
        if set(kinds) & set(KINDS)
        else {"header": 0, "me": 0}
    )
    state = await attack_limits.setup(kinds, host, port, key)
    print(READY, flush=True)  # the caller starts its measured load now
    stop_at = time.monotonic() + seconds
    runs = {
        "login": lambda: login_flood(host, port, stop_at, counts),
        "body": lambda: hanging_bodies(host, port, stop_at, counts),
        "held": lambda: slow_headers(host, port, stop_at, counts),
        "bad": lambda: bad_values(host, port, key, sid, stop_at, counts),
        **attack_limits.runs(host, port, key, stop_at, counts, state),
    }
    await asyncio.gather(*(runs[k]() for k in kinds))
    return counts


def spawn(url: str, key: str, sid: int, seconds: float, kinds=KINDS) -> subprocess.Popen:
    """Start the attacker in a process of its own (it must not share the caller's GIL)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    return subprocess.Popen(
        [sys.executable, "-m", "benchmarks.attack", url, key, str(sid), str(seconds), ",".join(kinds)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def wait_ready(proc, timeout: float = 120.0):
    """Wait until the attacker has done its setup (it prints READY)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"attacker exited during its setup with {proc.wait()}")
        if line.strip() == READY:
            return
    raise RuntimeError(f"attacker not ready within {timeout:g} s")


def collect(proc) -> str:
    """The attacker's line of counts once it is done ("" without an attacker)."""
    if proc is None:
        return ""
    try:
        out, _ = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    return out.strip().splitlines()[-1] if out.strip() else f"attacker exited with {proc.returncode}"


def main(argv) -> int:
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # more sockets than the usual 1024
    url, key, sid, seconds = argv[0], argv[1], int(argv[2]), float(argv[3])
    kinds = argv[4].split(",") if len(argv) > 4 else KINDS  # e.g. "login,held": some attacks only
    counts = asyncio.run(attack(url, key, sid, seconds, kinds))
    usage = resource.getrusage(resource.RUSAGE_SELF)
    counts["attacker_cpu_s"] = round(usage.ru_utime + usage.ru_stime, 1)
    print("attack: " + ", ".join(f"{k} {v}" for k, v in counts.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
