"""The load generators of the server bench: wrk with a Lua script when it is
installed, else an asyncio loop of raw HTTP clients. Each sends every
(submission, case) pair of its plan once and returns a LoadResult.

wrk and the asyncio loop by default send each request as soon as the last
is answered (a closed loop: the server's throughput). `run_paced` sends at a
fixed rate instead, below what the server can do, as a class does, and times
each request from when it was due, so that a stalled server shows in every
request that waited (no coordinated omission)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
import random
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

CASES_PER_SUBMISSION = 2000
VALUE = {"_encoded_type": "np.ndarray", "data": [[0.25 * (i + j) for j in range(4)] for i in range(4)]}


@dataclass(frozen=True)
class LoadResult:
    tool: str
    requests: int
    seconds: float
    errors: int
    p50_ms: float
    p99_ms: float
    acked: frozenset  # (submission_id, index) pairs answered 200, or empty when only counted
    acked_count: int


def _cases(sids):
    """The (submission, index) pairs one client sends, in order, each once."""
    for sid in sids:
        for i in range(CASES_PER_SUBMISSION):
            yield sid, i


# --- wrk ------------------------------------------------------------------

WRK_SCRIPT = """
local plan = %(plan)s
local body = %(body)s
local n = 0
function setup(thread)
  n = n + 1
  thread:set("spec", plan[n])
end
function init(args)
  students = {}
  for item in string.gmatch(spec, "[^;]+") do
    local key, sids = item:match("([^=]+)=(.+)")
    local list = {}
    for s in string.gmatch(sids, "[^,]+") do table.insert(list, s) end
    table.insert(students, {key = key, sids = list, pos = 1, idx = 0})
  end
  turn = 0
end
function request()
  turn = turn %% #students + 1
  local st = students[turn]
  if st.idx >= %(cases)d then st.idx = 0; st.pos = st.pos + 1 end
  local path = "/submit_test?submission_id=" .. st.sids[st.pos] .. "&test_case_index=" .. st.idx
  st.idx = st.idx + 1
  return wrk.format("POST", path, {["Authorization"] = "Bearer " .. st.key,
                                   ["Content-Type"] = "application/json"}, body)
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RESULT %%d %%d %%d %%d %%d\\n", summary.requests, summary.duration,
    e.connect + e.read + e.write + e.timeout, e.status, 0))
  io.write(string.format("LATENCY %%d %%d\\n", latency:percentile(50), latency:percentile(99)))
end
"""


def run_wrk(url, plan, clients, seconds, tmp: Path) -> LoadResult:
    threads = min(2, clients)
    # wrk gives each thread its own Lua state: each thread takes turns among its share of
    # the students, as a class does (one key per client, each answering its own cases).
    specs = [
        '"%s"' % ";".join(f"{plan.keys[c]}={','.join(map(str, plan.sids[c]))}" for c in range(t, clients, threads))
        for t in range(threads)
    ]
    script = tmp / "submit_test.lua"
    script.write_text(
        WRK_SCRIPT
        % {"plan": "{" + ",".join(specs) + "}", "body": json.dumps(json.dumps(VALUE)), "cases": CASES_PER_SUBMISSION}
    )
    cmd = [
        "wrk",
        "-t",
        str(threads),
        "-c",
        str(clients),
        "-d",
        f"{math.ceil(seconds)}s",
        "--timeout",
        "5s",
        "-s",
        str(script),
        url,
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 60).stdout
    fields = {
        line.split()[0]: [int(x) for x in line.split()[1:]]
        for line in out.splitlines()
        if line.startswith(("RESULT", "LATENCY"))
    }
    if "RESULT" not in fields:
        raise RuntimeError(f"wrk printed no result:\n{out[-2000:]}")
    total, micros, sock_errors, status_errors, _ = fields["RESULT"]
    p50, p99 = fields["LATENCY"]
    return LoadResult(
        f"wrk ({threads} threads)",
        total,
        micros / 1e6,
        sock_errors + status_errors,
        p50 / 1000,
        p99 / 1000,
        frozenset(),
        total - status_errors,
    )


# --- asyncio fallback -------------------------------------------------------


async def _client(host, port, key, sids, stop_at, latencies, acked, errors, interval=0.0):
    """One student's connection: its cases in order, each as soon as the last is answered,
    or (`interval` > 0) each `interval` seconds after the last was due."""
    body = json.dumps(VALUE).encode()
    reader, writer = await asyncio.open_connection(host, port)
    due = time.perf_counter() + interval * random.random()  # students do not start in step
    try:
        for sid, i in _cases(sids):
            if time.monotonic() >= stop_at:
                return
            head = (
                f"POST /submit_test?submission_id={sid}&test_case_index={i} HTTP/1.1\r\n"
                f"Host: {host}\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n"
            ).encode()
            if interval:  # timed from when it was due: a late start is the server's delay too
                await asyncio.sleep(max(0.0, due - time.perf_counter()))
                t0, due = due, due + interval
            else:
                t0 = time.perf_counter()
            writer.write(head + body)
            status = await asyncio.wait_for(_read_response(reader), 10)
            latencies.append(time.perf_counter() - t0)
            if status == 200:
                acked.append((sid, i))
            else:
                errors.append(status)
    except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError):
        errors.append("connection")
    finally:
        writer.close()


async def _read_response(reader) -> int:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = next(int(v) for k, _, v in (h.partition(":") for h in lines[1:]) if k.lower() == "content-length")
    await reader.readexactly(length)
    return int(lines[0].split()[1])


def _fast_loop():
    """uvloop when installed (the server extra has it): the client then takes less
    of the CPU the server needs."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def run_paced(rate: float):
    """A load generator sending `rate` requests a second in all (see the module docstring)."""

    def run(url, plan, clients, seconds, tmp) -> LoadResult:
        result = run_python(url, plan, clients, seconds, tmp, interval=clients / rate)
        return LoadResult(f"python asyncio, paced at {rate:g}/s", *dataclasses.astuple(result)[1:])

    return run


def run_python(url, plan, clients, seconds, tmp, interval: float = 0.0) -> LoadResult:
    host, port = url.split("//")[1].split(":")
    latencies, acked, errors = [], [], []

    async def go():
        stop_at = time.monotonic() + seconds
        await asyncio.gather(
            *(
                _client(host, int(port), plan.keys[c], plan.sids[c], stop_at, latencies, acked, errors, interval)
                for c in range(clients)
            )
        )

    t0 = time.monotonic()
    if hasattr(asyncio, "Runner"):  # Python 3.11+
        with asyncio.Runner(loop_factory=_fast_loop()) as runner:
            runner.run(asyncio.wait_for(go(), seconds + 30))
    else:
        asyncio.run(asyncio.wait_for(go(), seconds + 30))
    elapsed = time.monotonic() - t0
    latencies.sort()
    pick = (
        (lambda q: 1000 * latencies[min(len(latencies) - 1, int(q * len(latencies)))])
        if latencies
        else (lambda q: float("nan"))
    )
    return LoadResult(
        "python asyncio", len(latencies), elapsed, len(errors), pick(0.5), pick(0.99), frozenset(acked), len(acked)
    )
