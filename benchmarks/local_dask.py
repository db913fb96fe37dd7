"""A real Dask cluster on this machine, for the tests and the benchmark: a
scheduler and N workers, each a separate process group (the `dask
scheduler` / `dask worker` commands) bound to 127.0.0.1, so a worker can be
killed as a lost machine would be.

Each worker has one thread: one submission at a time per worker, since a
submission grades its questions one after the other on one core. With
`tls` (PEM paths: ca, cert, key), every connection is mutual TLS.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from grader import ROOT
from grader.core.blas import ONE_THREAD


def _dask(command: str) -> list:
    return [sys.executable, "-m", f"distributed.cli.dask_{command}"]


def _killpg(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:  # the whole group is already gone
        pass


class LocalDask:
    """Use as a context manager; `address` is the scheduler's tcp:// address."""

    def __init__(self, workdir: Path, workers: int = 2, start_seconds: float = 60, tls: dict | None = None):
        self.workdir, self.count, self.start_seconds = Path(workdir), workers, start_seconds
        self.tls = tls
        self.env = {**os.environ, **ONE_THREAD}
        self.scheduler = None
        self.workers = []  # Popen, each the leader of its own process group
        self.address = ""

    def _spawn(self, argv: list, log: str) -> subprocess.Popen:
        with open(self.workdir / log, "wb") as out:
            return subprocess.Popen(
                argv,
                cwd=ROOT,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )

    def start(self) -> "LocalDask":
        self.workdir.mkdir(parents=True, exist_ok=True)
        info = self.workdir / "scheduler.json"
        self.scheduler = self._spawn(
            [
                *_dask("scheduler"),
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-dashboard",
                "--scheduler-file",
                str(info),
                *self._tls_args("--protocol", "tls"),
            ],
            "scheduler.log",
        )
        deadline = time.monotonic() + self.start_seconds
        while not info.exists():
            self._check(deadline, "scheduler.log")
            time.sleep(0.1)
        time.sleep(0.1)  # the file is written in one go, but give it a moment
        self.address = json.loads(info.read_text())["address"]
        for k in range(self.count):
            self.add_worker(f"w{k + 1}")
        self.wait_for_workers(self.count, deadline)
        return self

    def add_worker(self, name: str) -> None:
        self.workers.append(
            self._spawn(
                [
                    *_dask("worker"),
                    self.address,
                    "--name",
                    name,
                    "--nthreads",
                    "1",
                    "--host",
                    "127.0.0.1",
                    "--no-dashboard",
                    *self._tls_args(),
                    "--local-directory",
                    str(self.workdir / "scratch"),
                ],
                f"{name}.log",
            )
        )

    def _tls_args(self, *extra) -> list:
        if not self.tls:
            return []
        return [
            *extra,
            "--tls-ca-file",
            str(self.tls["ca"]),
            "--tls-cert",
            str(self.tls["cert"]),
            "--tls-key",
            str(self.tls["key"]),
        ]

    def client_env(self) -> dict:
        """Environment for a client process (grade-batch): Dask reads its TLS files from it."""
        if not self.tls:
            return {}
        return {
            "DASK_DISTRIBUTED__COMM__TLS__CA_FILE": str(self.tls["ca"]),
            "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": str(self.tls["cert"]),
            "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": str(self.tls["key"]),
            "DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION": "True",
        }

    def _check(self, deadline: float, log: str) -> None:
        if time.monotonic() > deadline or self.scheduler.poll() is not None:
            tail = (self.workdir / log).read_text(errors="replace")[-2000:]
            raise RuntimeError(f"local Dask cluster did not start; {log} ends:\n{tail}")

    def client(self):
        from distributed import Client, Security

        security = (
            Security(
                tls_ca_file=str(self.tls["ca"]),
                tls_client_cert=str(self.tls["cert"]),
                tls_client_key=str(self.tls["key"]),
                require_encryption=True,
            )
            if self.tls
            else None
        )
        return Client(self.address, timeout=self.start_seconds, set_as_default=False, security=security)

    def wait_for_workers(self, count: int, deadline: float) -> None:
        with self.client() as client:
            client.wait_for_workers(count, timeout=max(1.0, deadline - time.monotonic()))

    def worker_address(self, client, name: str) -> str:
        return next(addr for addr, info in client.scheduler_info()["workers"].items() if info["name"] == name)

    def kill_worker(self, index: int) -> None:
        """SIGKILL a worker's whole process group (nanny and worker): a lost machine."""
        _killpg(self.workers[index].pid, signal.SIGKILL)
        self.workers[index].wait()

    def kill_scheduler(self) -> None:
        _killpg(self.scheduler.pid, signal.SIGKILL)
        self.scheduler.wait()

    def stop(self) -> None:
        procs = [p for p in [*self.workers, self.scheduler] if p is not None]
        for proc in procs:  # the group, not just the leader: a nanny's worker too
            _killpg(proc.pid, signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                _killpg(proc.pid, signal.SIGKILL)
                proc.wait()

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc):
        self.stop()
