"""Load benchmark of the grading server's write path (`make bench`).

Starts `grader serve` on 127.0.0.1 with a fresh database (SQLite, or
PostgreSQL in a throwaway cluster), with 1 or more processes, has N
concurrent keep-alive clients send `submit_test` requests for a fixed time,
then prints requests/s, p50/p99 latency, errors, and lost cases: every case
the server acknowledged must be in the database afterwards. The load comes
from `wrk` when installed (C, so the load generator barely competes with the
server for the two cores), else from an asyncio client in this process.
With `--attack`, one hostile client (benchmarks/attack.py) abuses the
server from another address meanwhile. `matrix()` (what `make bench` runs)
takes every figure in one run: both databases, 1 and 2 processes, and the
throughput with and without the attacker.
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks import attack as hostile_client
from benchmarks import attack_limits
from benchmarks.server_load import CASES_PER_SUBMISSION, VALUE, LoadResult, run_paced, run_python, run_wrk
from grader.core.blas import one_thread_env
from grader.core.paths import ROOT

SUBMISSIONS_PER_CLIENT = 40
TARGETS = "targets: >= 500 req/s, p99 <= 100 ms, 0 errors, 0 lost"
ATTACK_GOAL = 0.8  # throughput under attack over throughput without, in the same run
QUOTA_MB = 48  # room for the 40 answers of ~1 MB the /me attack stores, not for the 4-byte UTF-8 attack


def main(argv=None) -> int:
    """Run the benchmark; `argv` None means the defaults (the caller's own
    command line is not ours to parse, e.g. under `make bench`)."""
    args = _parse([] if argv is None else argv)
    if args.db == "postgresql":
        from benchmarks.postgres_cluster import Cluster, missing

        if missing():
            print(f"server bench: {missing()}", file=sys.stderr)
            return 2
        with Cluster() as cluster:
            result, stored, groups, attack, cpu = run_once(cluster.new_database(), args, attack=_attack(args))
    else:
        with tempfile.TemporaryDirectory(prefix="grader-bench-") as tmp:
            result, stored, groups, attack, cpu = run_once(
                f"sqlite:///{Path(tmp) / 'bench.db'}", args, attack=_attack(args)
            )
    if attack:
        print(attack)
    print(f"server CPU during the load: {cpu:.1f} s")
    return _report(result, stored, args, groups)


def _attack(args):
    return (args.attack_kind,) if args.attack_kind else args.attack


def run_once(db_url: str, args, workers: int = None, attack=None):
    """One load run against a fresh server on `db_url`: (LoadResult, stored cases,
    writer summary, attacker's line or "", the server's CPU seconds during the load).
    `attack`: True for the first round's attacks together, a tuple of attack kinds, or False."""
    workers = args.workers if workers is None else workers
    attack = args.attack if attack is None else attack
    kinds = hostile_client.KINDS if attack is True else tuple(attack or ())
    with tempfile.TemporaryDirectory(prefix="grader-bench-") as tmp:
        plan = _prepare(db_url, args.clients)
        port = _free_port()
        log = Path(tmp) / "server.log"
        # The /me storm's setup stores 40 answers of ~1 MB "earlier in the week", at once:
        # past the answer-bytes budget, which its measured load (page reloads) never meets.
        server = _start_server(db_url, port, log, workers, ("--answer-burst-mb", "128") if "me" in kinds else ())
        attacker = None
        try:
            url = f"http://127.0.0.1:{port}"
            _publish_and_open(url, plan)
            if kinds:
                attacker = hostile_client.spawn(url, plan.attacker_key, plan.attacker_sid, args.seconds, kinds)
                hostile_client.wait_ready(attacker)
            use_wrk = args.tool == "wrk" or (args.tool == "auto" and shutil.which("wrk"))
            run = run_paced(args.paced) if args.paced else run_wrk if use_wrk else run_python
            cpu = server_cpu_seconds(server.pid)
            result = run(url, plan, args.clients, args.seconds, Path(tmp))
            cpu = server_cpu_seconds(server.pid) - cpu
        finally:
            attack_line = hostile_client.collect(attacker)
            _stop(server)
        stored = _stored_cases(db_url)
        groups = [
            line.split("writer stopped: ")[1] for line in log.read_text().splitlines() if "writer stopped: " in line
        ]
    return result, stored, ", ".join(groups) or "unknown", attack_line, cpu


def server_cpu_seconds(pid: int) -> float:
    """CPU seconds used so far by the server process and its worker processes (Linux /proc)."""
    tick, total = os.sysconf("SC_CLK_TCK"), 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # a process that just ended
            continue
        if stat.parent.name == str(pid) or fields[1] == str(pid):  # fields[1]: the parent's pid
            total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return total


def _parse(argv):
    p = argparse.ArgumentParser(prog="bench_server", description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=10.0, help="load duration (default 10)")
    p.add_argument("--clients", type=int, default=64, help="concurrent connections (default 64)")
    p.add_argument("--tool", choices=["auto", "wrk", "python"], default="auto")
    p.add_argument("--db", choices=["sqlite", "postgresql"], default="sqlite")
    p.add_argument("--workers", type=int, default=1, help="server processes (default 1)")
    p.add_argument("--attack", action="store_true", help="one hostile client abuses the server meanwhile")
    p.add_argument(
        "--paced",
        type=float,
        default=0.0,
        metavar="RATE",
        help="send RATE requests a second in all, timed from when each was due (default: as fast as answered)",
    )
    p.add_argument(
        "--attack-kind",
        choices=hostile_client.LIMIT_KINDS,
        help="instead, one of the second round's attacks (see benchmarks/attack_limits.py)",
    )
    args = p.parse_args(argv)
    if args.seconds <= 0 or args.seconds > 120 or not 1 <= args.clients <= 512 or not 1 <= args.workers <= 8:
        p.error("--seconds must be in (0, 120], --clients in [1, 512] and --workers in [1, 8]")
    return args


@dataclass
class Plan:
    prof_key: str
    keys: list  # one student key per client
    sids: list  # per client: its submission ids, filled by _publish_and_open
    attacker_key: str = ""
    attacker_sid: int = 0


def _prepare(db_url: str, clients: int) -> Plan:
    from grader.server.accounts import users
    from grader.server.store.db import make_engine

    engine = make_engine(db_url)
    people = [("prof", "instructor"), ("mallory", "student")] + [(f"student{i}", "student") for i in range(clients)]
    keys = users.add_users(engine, people)
    engine.dispose()
    return Plan(keys[0], keys[2:], [], attacker_key=keys[1])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_server(db_url: str, port: int, log: Path, workers: int = 1, extra=()) -> subprocess.Popen:
    # A huge rate limit keeps the limiter on the measured path without refusing anything.
    cmd = [
        sys.executable,
        "-m",
        "grader",
        "serve",
        "--db",
        db_url,
        "--port",
        str(port),
        "--rate",
        "1000000",
        "--burst",
        "1000000",
        "--workers",
        str(workers),
        "--quota-mb",
        str(QUOTA_MB),
        *extra,
    ]
    # ROOT on the path: `-m grader` resolves wherever we are called from
    env = one_thread_env(PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited: {log.read_text()[-1000:]}")
        if log.read_text(errors="replace").count("Application startup complete") >= workers:
            return proc  # every process is up, so none misses the start of the load
        time.sleep(0.1)
    _stop(proc)
    raise RuntimeError("server did not start within 60 s")


def _stop(proc: subprocess.Popen):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def _publish_and_open(url: str, plan: Plan):
    import requests

    with requests.Session() as s:
        r = s.post(
            f"{url}/publish",
            params={"assignment": "bench", "problem": "load"},
            headers={"Authorization": f"Bearer {plan.prof_key}"},
            data=json.dumps([VALUE] * CASES_PER_SUBMISSION),
            timeout=30,
        )
        r.raise_for_status()
        for kind in (attack_limits.BIG, attack_limits.TEXT):  # for the second round's attacks
            s.post(
                f"{url}/publish",
                params={"assignment": "bench", "problem": kind["problem"]},
                headers={"Authorization": f"Bearer {plan.prof_key}"},
                data=json.dumps(attack_limits.published(kind)),
                timeout=60,
            ).raise_for_status()

        def start(key):
            return s.post(
                f"{url}/submit",
                params={"assignment": "bench", "problem": "load"},
                headers={"Authorization": f"Bearer {key}"},
                timeout=30,
            ).json()["submission_id"]

        for key in plan.keys:
            plan.sids.append([start(key) for _ in range(SUBMISSIONS_PER_CLIENT)])
        plan.attacker_sid = start(plan.attacker_key)


# --- report -----------------------------------------------------------------


def _stored_cases(db_url: str) -> set:
    from sqlalchemy import create_engine, text

    engine = create_engine(db_url)
    try:
        with engine.connect() as conn:
            return {tuple(r) for r in conn.execute(text("select submission_id, test_case_index from case_results"))}
    finally:
        engine.dispose()


def _report(r: LoadResult, stored: set, args, groups: str) -> int:
    lost = len(r.acked - stored) if r.acked else max(0, r.acked_count - len(stored))
    rate = r.requests / r.seconds if r.seconds else 0.0
    met = rate >= 500 and r.p99_ms <= 100 and r.errors == 0 and lost == 0
    store = "SQLite WAL synchronous=FULL" if getattr(args, "db", "sqlite") == "sqlite" else "PostgreSQL (fsync off)"
    print(
        f"server bench: {args.clients} connections for {args.seconds:g} s, load from {r.tool}, "
        f"{store}, {getattr(args, 'workers', 1)} process(es), group commit"
    )
    print(f"requests/s: {rate:.0f}")
    print(f"latency: p50 {r.p50_ms:.1f} ms, p99 {r.p99_ms:.1f} ms")
    print(f"errors: {r.errors}")
    print(f"lost: {lost} ({r.acked_count} acknowledged, {len(stored)} in the database)")
    print(f"server writer: {groups}")
    print(f"{TARGETS}: {'met' if met else 'NOT met'}")
    # Server, load generator and anything else running share the 2 cores: say how busy they were.
    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.1f}" for x in os.getloadavg()))
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
