"""The server figures of `make bench`, all taken in one run so that their
ratios compare like with like on a shared machine: `submit_test` throughput
and latency with 1 and 2 server processes on SQLite and on PostgreSQL, the
throughput while one client attacks the server (goal: at least 80% of the
same run without it), and for each of the second round's five attacks the
p99 of other students' `submit_test` beside the same run's unattacked p99
(goal: at most 2x, and under 100 ms)."""

import os
import statistics
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from benchmarks import server as bench_server
from benchmarks.postgres_cluster import Cluster, missing

ROUNDS = 2  # attacked and unattacked runs, alternated
LIMIT_ROUNDS = 3  # the same for each attack of the second round (p99 alone is noisier than throughput)
P99_RATIO_GOAL, P99_GOAL_MS = 2.0, 100.0  # the second round: attacked p99 against unattacked
# The other students during those attacks: a busy class sending at a fixed rate well below
# what one process answers, so that p99 shows what an attack adds, not queueing at saturation.
LIMIT_CLIENTS, LIMIT_RATE = 16, 300


@dataclass(frozen=True)
class BenchRow:
    label: str
    rate: float
    p50_ms: float
    p99_ms: float
    errors: int
    lost: int
    attack: str = ""
    server_cpu_s: float = 0.0


def _row(label, run) -> BenchRow:
    result, stored, _, attack, cpu = run
    lost = len(result.acked - stored) if result.acked else max(0, result.acked_count - len(stored))
    rate = result.requests / result.seconds if result.seconds else 0.0
    return BenchRow(label, rate, result.p50_ms, result.p99_ms, result.errors, lost, attack, cpu)


def _sqlite(tmp: Path, name: str) -> str:
    return f"sqlite:///{tmp / name}.db"


def measure(seconds: float = 8.0, clients: int = 64) -> list:
    args = bench_server._parse(["--seconds", str(seconds), "--clients", str(clients)])
    rows = []
    with tempfile.TemporaryDirectory(prefix="grader-bench-") as folder:
        tmp = Path(folder)
        for workers in (1, 2):
            rows.append(
                _row(
                    f"SQLite, {workers} process(es)", bench_server.run_once(_sqlite(tmp, f"w{workers}"), args, workers)
                )
            )
        if missing():
            print(f"server bench: PostgreSQL skipped: {missing()}")
        else:
            with Cluster() as cluster:
                for workers in (1, 2):
                    rows.append(
                        _row(
                            f"PostgreSQL, {workers} process(es)",
                            bench_server.run_once(cluster.new_database(), args, workers),
                        )
                    )
        # Alternate and keep the best of each: other work on the machine only ever slows a run down.
        pairs = [
            (
                _row("SQLite, 1 process, no attack", bench_server.run_once(_sqlite(tmp, f"calm{i}"), args, 1, False)),
                _row("SQLite, 1 process, attacked", bench_server.run_once(_sqlite(tmp, f"hit{i}"), args, 1, True)),
            )
            for i in range(ROUNDS)
        ]
    best = [max((p[k] for p in pairs), key=lambda r: r.rate) for k in (0, 1)]
    # Errors and lost cases count over every round, not just the best.
    return rows + [
        replace(b, errors=sum(p[k].errors for p in pairs), lost=sum(p[k].lost for p in pairs))
        for k, b in enumerate(best)
    ]


@dataclass(frozen=True)
class AttackRow:
    attack: str
    calm_p99_ms: float
    hit_p99_ms: float
    errors: int
    lost: int
    counts: str  # the attacker's line
    calm_cpu_s: float = 0.0  # the server's CPU seconds during the load (median of the rounds)
    hit_cpu_s: float = 0.0

    @property
    def ratio(self) -> float:
        return self.hit_p99_ms / self.calm_p99_ms if self.calm_p99_ms else float("inf")

    @property
    def met(self) -> bool:
        return self.ratio <= P99_RATIO_GOAL and self.hit_p99_ms <= P99_GOAL_MS and not self.errors and not self.lost


def measure_limits(seconds: float = 8.0) -> list:
    """One AttackRow per attack of the second round: an unattacked run then an attacked one,
    each on a fresh SQLite server, the best p99 of ROUNDS such pairs."""
    args = bench_server._parse(["--seconds", str(seconds), "--clients", str(LIMIT_CLIENTS), "--paced", str(LIMIT_RATE)])
    rows = []
    with tempfile.TemporaryDirectory(prefix="grader-bench-") as folder:
        tmp = Path(folder)
        for kind in bench_server.hostile_client.LIMIT_KINDS:
            calm, hit = [], []
            for i in range(LIMIT_ROUNDS):
                calm.append(_row("calm", bench_server.run_once(_sqlite(tmp, f"{kind}-calm{i}"), args, 1, False)))
                hit.append(_row(kind, bench_server.run_once(_sqlite(tmp, f"{kind}-hit{i}"), args, 1, (kind,))))
            best_calm, best_hit = min(calm, key=lambda r: r.p99_ms), min(hit, key=lambda r: r.p99_ms)
            rows.append(
                AttackRow(
                    kind,
                    best_calm.p99_ms,
                    best_hit.p99_ms,
                    sum(r.errors for r in calm + hit),
                    sum(r.lost for r in calm + hit),
                    best_hit.attack,
                    statistics.median(r.server_cpu_s for r in calm),
                    statistics.median(r.server_cpu_s for r in hit),
                )
            )
    return rows


def report_limits(rows: list, seconds: float) -> bool:
    """Print the second round's rows; True when every attack meets the goal."""
    print(
        f"attacks of round 2: submit_test p99 of {LIMIT_CLIENTS} other students' connections "
        f"({LIMIT_RATE} requests/s in all, timed from when each was due), unattacked "
        f"and attacked ({seconds:g} s each, best of {LIMIT_ROUNDS}); goal: attacked <= {P99_RATIO_GOAL:g}x "
        f"unattacked and <= {P99_GOAL_MS:g} ms; the server's CPU seconds during each load (median)"
    )
    print(
        f"  {'attack':8} {'calm p99':>9} {'hit p99':>9} {'ratio':>6} {'calm cpu':>9} {'hit cpu':>8} "
        f"{'errors':>7} {'lost':>5}  goal"
    )
    for r in rows:
        print(
            f"  {r.attack:8} {r.calm_p99_ms:9.1f} {r.hit_p99_ms:9.1f} {r.ratio:6.2f} {r.calm_cpu_s:9.1f} "
            f"{r.hit_cpu_s:8.1f} {r.errors:7d} {r.lost:5d}  {'met' if r.met else 'NOT met'}; "
            f"{r.counts or 'attacker printed nothing'}"
        )
    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.1f}" for x in os.getloadavg()))
    return all(r.met for r in rows)


def report(rows: list, clients: int, seconds: float) -> bool:
    """Print the table and the attack ratio; True when nothing was lost and the attack goal is met."""
    print(
        f"server bench: submit_test, {clients} keep-alive connections, {seconds:g} s per row, load from wrk "
        f"when installed (PostgreSQL with fsync off, SQLite with synchronous=FULL); the attack rows are the "
        f"best of {ROUNDS} alternated runs"
    )
    print(f"  {'setup':34} {'req/s':>7} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7} {'lost':>5}")
    for r in rows:
        print(f"  {r.label:34} {r.rate:7.0f} {r.p50_ms:8.1f} {r.p99_ms:8.1f} {r.errors:7d} {r.lost:5d}")
    calm, hit = rows[-2], rows[-1]
    ratio = hit.rate / calm.rate if calm.rate else 0.0
    attacker_5xx = "bad_5xx 0" not in hit.attack
    met = ratio >= bench_server.ATTACK_GOAL and not attacker_5xx
    print(
        f"under attack: {ratio:.2f} of the unattacked throughput (goal >= {bench_server.ATTACK_GOAL}) "
        f"{'met' if met else 'NOT met'}; {hit.attack or 'attacker printed nothing'}"
    )
    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.1f}" for x in os.getloadavg()))
    return met and all(r.lost == 0 for r in rows)


def main(seconds: float = 8.0, clients: int = 64) -> bool:
    first = report(measure(seconds, clients), clients, seconds)
    return report_limits(measure_limits(seconds), seconds) and first


if __name__ == "__main__":
    sys.exit(0 if main(*(float(a) for a in sys.argv[1:2])) else 1)
